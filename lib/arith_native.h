/* arith_native.h: the arithmetic macros of recur.h for the native policies, included by
 * native_inst.h at the start of each instantiation (recur_end.h undefines them at its end). The
 * includer defines POL (the policy's row of vlalists.h, by its suffix: f32, f16f32, ...), RO(x)
 * (rounding of every operation's result to the compute format), RS(x) (rounding to the storage
 * format when a state value is stored) and, where the io format is not the storage format (the
 * kernels' policies), RI(x) (rounding of an input or a chunk intermediate); the container NUM,
 * the formats FMT_C, FMT_S, FMT_I and the suffix SFX (TAG(POL) unless the includer set one)
 * follow from the row.
 *
 * The vocabulary, shared with reference/arith_mpfr.h:
 *   E(a, i)      element i of array a, usable as operand and destination
 *   NREF, P(x), R(p)   a reference to a number, taking one and using one
 *   SCALAR(x)    a scalar temporary; FRAME_BEGIN/FRAME_END bracket a function's temporaries
 *   ADD SUB MUL DIV (r, a, b), SQRT(r, a): r = round(a op b); COPY(r, a): exact
 *   SETD(r, c)   the binary64 constant c rounded to the compute format; SETI(r, i) an integer
 *   STORE(r)     round r to the storage format (state written back)
 *   STORE_I(r)   round r to the io format (a chunk form's intermediate; recur.h's default: STORE)
 *   LOAD_IN(r, x), LOAD_PHI(r, x), LOAD_LOG(r, x): an input x (binary64) rounded to the io
 *                format, and phi or log of that rounded input computed in binary64 then rounded
 *                to the io format (host only)
 *   EXP(r, a)    exp(a) as the feature map takes it: the C library's binary64 exp of a (exact
 *                in binary64), rounded once to the compute format (the exact reference: MPFR's
 *                exp at its precision)
 *   FLOOR(r, a)  r = floor(a), exact in every format
 *   COSSIN(c, s, a)  c = cos(a), s = sin(a) as EXP takes exp: the C library's binary64 cos and
 *                sin of a, each rounded once to the compute format (exact: MPFR's); c and s are
 *                not a
 *   ISFIN(a), LESS(a, b), ABSLESS(a, b) (|a| < b), CMPD(a, c) (sign of a - c, c a double),
 *   TINY (the compute format's smallest normal), TOD(a) (to binary64)
 *   NUM_ALLOC(n), NUM_FREE(p, n), ARITH_ENTER/ARITH_LEAVE (around a public entry)
 *   SAVE_ARRAY(f, p, n), LOAD_ARRAY(f, p, n): n numbers to or from a FILE, bit for bit
 *                (0 on success)
 *   SR_RESET(t)  start step t's stream of stochastic-rounding words
 *   CXP, CX      the context parameter and argument (native: the model's vla_sr_state) */
#include "fmt.h"
#include "model_impl.h"
#include "tables.h"
#include <math.h>
#include <stdlib.h>

#ifndef VLA_ARITH_NATIVE_ONCE
#define VLA_ARITH_NATIVE_ONCE
/* vla_round_fmt inline: FMT_I is a constant, so input preparation costs a conversion or
 * vla_round_narrow's few operations, not a call */
static inline double vla_round_in(vla_fmt f, double x)
{
    if (f == VLA_FMT_F64)
        return x;
    if (f == VLA_FMT_F32)
        return (double)(float)x;
#define VLA_X_(ID, tok, p, emin, emax, T)                                                         \
    if (f == VLA_FMT_##ID)                                                                         \
        return vla_round_narrow(x, p, emin, (2.0 - VLA_EXP2(1 - (p))) * VLA_EXP2(emax));
    VLA_FORMATS(VLA_X_)
#undef VLA_X_
    return vla_round_fmt(f, x);
}
#endif

#ifdef POL /* (without, only the helpers above: model_simd.c compiles them for any x86-64) */
#ifndef SFX
#define SFX TAG(POL)
#endif
#ifdef NATIVE_MATVEC /* a group's vectorized matrix-vector products (model_simd.c) */
#define VLA_MATVEC_HOOK NATIVE_MATVEC
#define VLA_MATVEC_T_HOOK NATIVE_MATVEC_T
#define VLA_WHOLE_ROWS NATIVE_WHOLE_ROWS
#endif
#define NUM VLA_NUM_OF(POL)
#define FMT_C VLA_FMTC_OF(POL)
#define FMT_S VLA_FMTS_OF(POL)
#define FMT_I VLA_FMTI_OF(POL)
#ifdef RI
#define STORE_I(r) ((r) = RI(r))
#endif
#define CXP void *cx_
#define CX cx_
#define NREF NUM *
#define E(a, i) (a)[i]
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) NUM x
#define FRAME_BEGIN
#define FRAME_END
#define ADD(r, a, b) ((r) = RO((a) + (b)))
#define SUB(r, a, b) ((r) = RO((a) - (b)))
#define MUL(r, a, b) ((r) = RO((a) * (b)))
#define DIV(r, a, b) ((r) = RO((a) / (b)))
#define SQRT(r, a) ((r) = RO(_Generic((NUM)0, float: sqrtf, double: sqrt)(a)))
#define COPY(r, a) ((r) = (a))
#define SETD(r, c) ((r) = (NUM)vla_round_fmt(FMT_C, (c)))
#define SETI(r, i) ((r) = (NUM)vla_round_fmt(FMT_C, (double)(i)))
#define STORE(r) ((r) = RS(r))
#define LOAD_IN(r, x) ((r) = (NUM)vla_round_in(FMT_I, (x)))
#define LOAD_PHI(r, x) ((r) = (NUM)vla_round_in(FMT_I, vla_phi_d(vla_round_in(FMT_I, (x)))))
/* inputs into binary32 numbers (io format binary32, binary16 or bfloat16): load.c's lanes, the
 * same bits */
#define LOAD_LANES_ (FMT_I != VLA_FMT_F64 && _Generic((NUM)0, float: 1, default: 0))
#define LOAD_IN_N(dst, x, n)                                                                       \
    do {                                                                                           \
        if (LOAD_LANES_)                                                                           \
            vla_load_round(FMT_I, (float *)(void *)(dst), (x), (n));                               \
        else                                                                                       \
            for (int i_ = 0; i_ < (n); i_++)                                                       \
                LOAD_IN(E(dst, i_), (x)[i_]);                                                      \
    } while (0)
#define LOAD_PHI_N(dst, x, n)                                                                      \
    do {                                                                                           \
        if (LOAD_LANES_)                                                                           \
            vla_load_phi(FMT_I, (float *)(void *)(dst), (x), (n));                                 \
        else                                                                                       \
            for (int i_ = 0; i_ < (n); i_++)                                                       \
                LOAD_PHI(E(dst, i_), (x)[i_]);                                                     \
    } while (0)
#define LOAD_LOG(r, x) ((r) = (NUM)vla_round_in(FMT_I, log(vla_round_in(FMT_I, (x)))))
#define EXP(r, a) ((r) = (NUM)vla_round_fmt(FMT_C, exp((double)(a))))
#define EXP2(r, a) ((r) = (NUM)vla_round_fmt(FMT_C, exp2((double)(a))))
#define FLOOR(r, a) ((r) = (NUM)floor((double)(a)))
#define COSSIN(c, s, a)                                                                            \
    do {                                                                                           \
        const double x_ = (double)(a);                                                             \
        (c) = (NUM)vla_round_fmt(FMT_C, cos(x_));                                                  \
        (s) = (NUM)vla_round_fmt(FMT_C, sin(x_));                                                  \
    } while (0)
#define ISFIN(a) isfinite(a)
#define LESS(a, b) ((a) < (b))
#define ABSLESS(a, b) (fabs((double)(a)) < (double)(b))
#define CMPD(a, c) (((double)(a) > (c)) - ((double)(a) < (c)))
#define TINY vla_fmt_tiny(FMT_C) /* a constant: unit() asks on every call */
#define TOD(a) ((double)(a))
#define NUM_ALLOC(n) ((NUM *)calloc((n), sizeof(NUM)))
#define NUM_FREE(p, n) ((void)(n), free(p))
#define SAVE_ARRAY(f, p, n) (fwrite((p), sizeof(NUM), (n), (f)) != (n))
#define LOAD_ARRAY(f, p, n) (fread((p), sizeof(NUM), (n), (f)) != (n))
#define SR_RESET(t) vla_sr_reset((vla_sr_state *)cx_, (t))
#define ARITH_ENTER
#define ARITH_LEAVE
#endif
