/* arith_dw_native.h: the arithmetic macros of recur.h for the comp way of tracking A, natively:
 * every number is a double word {h, l} of the working format and every operation one of
 * dw_body.h's algorithms. Included by dw_inst.h per instantiation; the includer defines POL (a
 * policy of one format, by its suffix in vlalists.h) and RO(x) (rounding of a base operation's
 * result to the working format); the base type, fma, sqrt, the formats and the suffix
 * (<POL>c) follow. */
#include "fmt.h"
#include "model_impl.h"
#include "tables.h"
#include <math.h>
#include <stdlib.h>

#define SFX VLA_JOIN(POL, c)
#define FN(name) VLA_CAT(name, SFX)
#define VLA_FN static
#define BASE VLA_NUM_OF(POL)
#define FMT_C VLA_FMTC_OF(POL)
#define FMT_S VLA_FMTS_OF(POL)
#define CXP void *cx_
#define CX cx_
#define DW FN(dwnum)
#define DWP DW *
#define DWCP const DW *
#define BH(p) ((p)->h)
#define BL(p) ((p)->l)
#define BSCALAR(x) BASE x
#define BSRC BASE
#define B_ADD(r, a, b) ((r) = RO((a) + (b)))
#define B_SUB(r, a, b) ((r) = RO((a) - (b)))
#define B_MUL(r, a, b) ((r) = RO((a) * (b)))
#define B_DIV(r, a, b) ((r) = RO((a) / (b)))
#define B_SQRT(r, a) ((r) = RO(_Generic((BASE)0, float: sqrtf, double: sqrt)(a)))
#define B_FMA(r, a, b, c) ((r) = RO(_Generic((BASE)0, float: fmaf, double: fma)((a), (b), (c))))
#define B_NEG(r, a) ((r) = -(a))
#define B_COPY(r, a) ((r) = (a))
#define B_ZERO(r) ((r) = 0)
#define B_ISZERO(a) ((a) == 0)
#define B_ISFIN(a) isfinite(a)
#define B_LESS(a, b) ((a) < (b))
#define B_EQ(a, b) ((a) == (b))
#define B_SGN(a) (((a) > 0) - ((a) < 0))
#define B_CMPD(a, c) (((double)(a) > (c)) - ((double)(a) < (c)))
#define B_SETD(r, c) ((r) = (BASE)vla_round_fmt(FMT_C, (c)))
#define B_TOD(a) ((double)(a))

#define NUM DW
#define NREF DW *
#define E(a, i) (a)[i]
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) DW x
#define FRAME_BEGIN
#define FRAME_END
#define ADD(r, a, b) FN(dw_add)(CX, &(r), &(a), &(b))
#define SUB(r, a, b) FN(dw_sub)(CX, &(r), &(a), &(b))
#define MUL(r, a, b) FN(dw_mul)(CX, &(r), &(a), &(b))
#define DIV(r, a, b) FN(dw_div)(CX, &(r), &(a), &(b))
#define SQRT(r, a) FN(dw_sqrt)(CX, &(r), &(a))
#define COPY(r, a) ((r) = (a))
#define SETD(r, c) FN(dw_setd)(CX, &(r), (c))
#define SETI(r, i) FN(dw_setd)(CX, &(r), (double)(i))
#define STORE(r) ((void)0)
#define LOAD_IN(r, x) ((r).h = (BASE)vla_round_fmt(FMT_S, (x)), (r).l = 0)
#define LOAD_PHI(r, x)                                                                             \
    ((r).h = (BASE)vla_round_fmt(FMT_S, vla_phi_d(vla_round_fmt(FMT_S, (x)))), (r).l = 0)
#define LOAD_LOG(r, x)                                                                             \
    ((r).h = (BASE)vla_round_fmt(FMT_S, log(vla_round_fmt(FMT_S, (x)))), (r).l = 0)
#define EXP(r, a) SETD(r, exp(TOD(a))) /* binary64 exp of the pair, as a constant is set */
#define EXP2(r, a) SETD(r, exp2(TOD(a)))
#define ISFIN(a) (isfinite((a).h) && isfinite((a).l))
#define LESS(a, b) FN(dw_less)(&(a), &(b))
#define ABSLESS(a, b) FN(dw_absless)(CX, &(a), &(b))
#define CMPD(a, c) FN(dw_cmpd)(&(a), (c))
#define TINY vla_fmt_min_normal(FMT_C)
#define TOD(a) ((double)(a).h + (double)(a).l)
#define NUM_ALLOC(n) ((NUM *)calloc((n), sizeof(NUM)))
#define NUM_FREE(p, n) ((void)(n), free(p))
#define SAVE_ARRAY(f, p, n) (fwrite((p), sizeof(NUM), (n), (f)) != (n))
#define LOAD_ARRAY(f, p, n) (fread((p), sizeof(NUM), (n), (f)) != (n))
#define ARITH_ENTER
#define ARITH_LEAVE
