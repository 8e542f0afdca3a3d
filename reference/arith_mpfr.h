/* arith_mpfr.h: the arithmetic macros of lib/recur.h (the vocabulary is documented in
 * lib/arith_native.h) for GNU MPFR. A context carries the precision and exponent range of the
 * compute and storage formats; in emulation every operation is followed by mpfr_subnormalize under
 * the compute format's emin/emax, which makes it the correctly rounded IEEE result of that format;
 * STORE rounds into the storage format the same way. Scalar temporaries come from a preallocated
 * stack (no mpfr_init in the loop). */
#ifndef VLA_ARITH_MPFR_H
#define VLA_ARITH_MPFR_H
#include "model_impl.h"
#include <stdio.h>
#include <mpfr.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>

#define VREF_POOL 32

/* vla_model_ops' rest: MPFR keeps caches per thread (constants such as log 2, which mpfr_exp
 * computes, and a pool of integers), freed only by the thread itself; the engine runs models in
 * OpenMP's pool threads, which are never joined, so each frees its own before going back to the
 * pool (else LeakSanitizer reports them at exit). The bits do not move: a constant is computed
 * again, correctly rounded as before. */
static inline void vref_rest(void *self)
{
    (void)self;
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

typedef struct {
    int exact;                /* 1: no subnormalize, prec_c bits, default exponent range */
    mpfr_prec_t prec_c, prec_s, prec_i;
    mpfr_exp_t emin_c, emax_c, emin_s, emax_s, emin_i, emax_i;
    mpfr_exp_t saved_emin, saved_emax;
    int store_rounds;         /* storage format narrower than the compute format */
    int io_own;               /* the io format (inputs, chunk intermediates) is not storage's */
    int sr_bits;              /* sr: stores round stochastically with this many random bits */
    long sr_pmin, sr_emin;    /* sr: the storage format's precision and smallest normal exponent */
    double sr_max;            /* sr: its largest finite value */
    vla_sr_state sr;
    double tiny;              /* smallest normal of the compute format (zero-norm events) */
    mpfr_t tmp_s, tmp_i;      /* a number in the storage format, one in the io format */
    mpfr_t tmp_h;             /* one in a 16-bit format (ROUND_FMT; its precision set per use) */
    mpfr_t pool[VREF_POOL];
    int top;
    /* a step that may be given up (vref_model_stop_on): while armed, every operation looks at
     * *stop and, when it is set, jumps to *jump, abandoning the step */
    volatile sig_atomic_t *stop;
    jmp_buf *jump;
    int armed;
    int lo; /* TOD gives a number's residual beyond its binary64 rounding (vref_model_get_lo) */
    long lo_off; /* GRAD_OUT writes that residual too, this many numbers after (vref_backward_lo) */
} vref_ctx;

/* ref_ctx.c: a context for cfg (its formats, stochastic rounding, the pool) and its end */
void vref_ctx_init(vref_ctx *cx, const vla_config *cfg, int kind, long bits);
void vref_ctx_clear(vref_ctx *cx);
/* ref_model_dw.c: the emulation of the comp way (double-word arithmetic) */
int vref_dw_model_new(vla_model **out, const vla_config *cfg);

static inline mpfr_ptr vref_scalar(vref_ctx *cx)
{
    if (cx->top == VREF_POOL)
        abort(); /* a programming error: recur.h nests deeper than the pool */
    return cx->pool[cx->top++];
}

static inline void vref_fin(vref_ctx *cx, mpfr_ptr r, int ternary)
{
    if (!cx->exact)
        mpfr_subnormalize(r, ternary, MPFR_RNDN);
    if (cx->armed && *cx->stop) /* between two MPFR calls: nothing of MPFR's is half done */
        longjmp(*cx->jump, 1);
}

/* Stochastic rounding of the binary32 value in r into the storage format, by arithmetic rather
 * than lib/'s bit manipulation: q is the grid spacing at |r| (the storage format's ulp, or its
 * subnormal spacing), m = |r| / q, and the magnitude rounds up from floor(m) when
 * floor(frac(m) 2^K) + word >= 2^K. Every step is exact in binary64 (r has 24 bits). */
static inline void vref_store_sr(vref_ctx *cx, mpfr_ptr r)
{
    uint32_t word = vla_sr_next(&cx->sr) & ((1u << cx->sr_bits) - 1);
    double x = mpfr_get_d(r, MPFR_RNDN), a = fabs(x);
    if (!isfinite(x) || a == 0)
        return;
    int e;
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    long lead = e - 1 < cx->sr_emin ? cx->sr_emin : e - 1;
    double q = ldexp(1.0, (int)(lead - (cx->sr_pmin - 1))), m = a / q, n = floor(m);
    double f = floor(ldexp(m - n, cx->sr_bits));
    if (f + word >= ldexp(1.0, cx->sr_bits))
        n += 1;
    double y = n * q;
    if (y > cx->sr_max)
        y = INFINITY;
    mpfr_set_d(r, copysign(y, x), MPFR_RNDN);
}

/* r <- r rounded into the format of tmp (its precision), of exponent range emin..emax with its
 * subnormals; r's own precision is kept (the value is exact in it) */
static inline void vref_round_into(vref_ctx *cx, mpfr_ptr tmp, mpfr_exp_t emin, mpfr_exp_t emax,
                                   mpfr_ptr r)
{
    int i = mpfr_set(tmp, r, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    i = mpfr_check_range(tmp, i, MPFR_RNDN);
    mpfr_subnormalize(tmp, i, MPFR_RNDN);
    mpfr_set_emin(cx->emin_c);
    mpfr_set_emax(cx->emax_c);
    mpfr_set(r, tmp, MPFR_RNDN);
}

/* r <- r rounded into the storage format */
static inline void vref_store(vref_ctx *cx, mpfr_ptr r)
{
    if (!cx->store_rounds)
        return;
    if (cx->sr_bits) {
        vref_store_sr(cx, r);
        return;
    }
    vref_round_into(cx, cx->tmp_s, cx->emin_s, cx->emax_s, r);
}

/* r <- r rounded into the io format (a chunk intermediate): storage's rounding, but in the
 * kernels' policies */
static inline void vref_store_i(vref_ctx *cx, mpfr_ptr r)
{
    if (cx->io_own)
        vref_round_into(cx, cx->tmp_i, cx->emin_i, cx->emax_i, r);
    else
        vref_store(cx, r);
}

void vref_fmt_params(vla_fmt f, long *prec, long *emin, long *emax); /* (vlaref.h) */

/* r <- r rounded into format f (ROUND_FMT: the 16-bit state, decays, beta, staged S_0);
 * the exact reference does not round (as it does not store) */
static inline void vref_round_fmt(vref_ctx *cx, mpfr_ptr r, vla_fmt f)
{
    long p, lo, hi;
    if (cx->exact)
        return;
    vref_fmt_params(f, &p, &lo, &hi);
    mpfr_set_prec(cx->tmp_h, p);
    vref_round_into(cx, cx->tmp_h, lo, hi, r);
}

/* tmp_i <- x (binary64) rounded into the io format, in every kind of reference: rounded to the
 * io precision in the current (wider) range, then into the io format's range with its
 * subnormals; the ternary value carried along prevents a double rounding */
static inline void vref_round_input(vref_ctx *cx, double x)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    int i = mpfr_set_d(cx->tmp_i, x, MPFR_RNDN);
    mpfr_set_emin(cx->emin_i);
    mpfr_set_emax(cx->emax_i);
    i = mpfr_check_range(cx->tmp_i, i, MPFR_RNDN);
    mpfr_subnormalize(cx->tmp_i, i, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
}

static inline void vref_load(vref_ctx *cx, mpfr_ptr r, double x)
{
    vref_round_input(cx, x);
    mpfr_set(r, cx->tmp_i, MPFR_RNDN); /* exact: the compute format contains the io one */
}

/* phi of an input: the emulation evaluates it as lib/ does (binary64, the C library's exp, then
 * one rounding into the storage format); the exact reference takes phi of the rounded input at
 * full precision with MPFR's exp */
static inline void vref_load_phi(vref_ctx *cx, mpfr_ptr r, double x)
{
    vref_round_input(cx, x);
    if (cx->exact) {
        if (mpfr_sgn(cx->tmp_i) > 0)
            mpfr_add_ui(r, cx->tmp_i, 1, MPFR_RNDN);
        else
            mpfr_exp(r, cx->tmp_i, MPFR_RNDN);
        return;
    }
    vref_load(cx, r, vla_phi_d(mpfr_get_d(cx->tmp_i, MPFR_RNDN)));
}

/* log of an input (delta's decay), as phi: binary64 log of the rounded input, rounded into the
 * io format; the exact reference, MPFR's log at full precision */
static inline void vref_load_log(vref_ctx *cx, mpfr_ptr r, double x)
{
    vref_round_input(cx, x);
    if (cx->exact)
        mpfr_log(r, cx->tmp_i, MPFR_RNDN);
    else
        vref_load(cx, r, log(mpfr_get_d(cx->tmp_i, MPFR_RNDN)));
}

/* r = exp(a) (two: 2^a): in emulation lib/'s convention (the C library's binary64 exp or exp2 of
 * a, which binary64 holds exactly, rounded once into the compute format, as SETD rounds); exact,
 * MPFR's exp or exp2 */
static inline void vref_exp(vref_ctx *cx, mpfr_ptr r, mpfr_srcptr a, int two)
{
    if (cx->exact)
        vref_fin(cx, r, two ? mpfr_exp2(r, a, MPFR_RNDN) : mpfr_exp(r, a, MPFR_RNDN));
    else {
        double x = mpfr_get_d(a, MPFR_RNDN);
        vref_fin(cx, r, mpfr_set_d(r, two ? exp2(x) : exp(x), MPFR_RNDN));
    }
}

/* c = cos(a), s = sin(a): in emulation as vref_exp, the C library's binary64 cos and sin of a,
 * each rounded once into the compute format; exact, MPFR's sin_cos */
static inline void vref_cossin(vref_ctx *cx, mpfr_ptr c, mpfr_ptr s, mpfr_srcptr a)
{
    if (cx->exact) {
        mpfr_sin_cos(s, c, a, MPFR_RNDN);
        vref_fin(cx, c, 0);
        vref_fin(cx, s, 0);
    } else {
        double x = mpfr_get_d(a, MPFR_RNDN);
        vref_fin(cx, c, mpfr_set_d(c, cos(x), MPFR_RNDN));
        vref_fin(cx, s, mpfr_set_d(s, sin(x), MPFR_RNDN));
    }
}

/* a - fl64(a) rounded to binary64: what a double-double holds below its high part */
static inline double vref_lo(mpfr_srcptr a)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(a) + 64);
    mpfr_sub_d(t, a, mpfr_get_d(a, MPFR_RNDN), MPFR_RNDN);
    double l = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clear(t);
    return l;
}

/* a gradient handed out (recur.h's GRAD_OUT): *dst = a in binary64 (0 where not on), and its
 * residual lo_off numbers after where the context asks for it */
static inline void vref_grad_out(vref_ctx *cx, double *dst, mpfr_srcptr a, int on)
{
    *dst = !on ? 0 : cx->lo ? vref_lo(a) : mpfr_get_d(a, MPFR_RNDN);
    if (cx->lo_off)
        dst[cx->lo_off] = on ? vref_lo(a) : 0;
}

static inline void vref_enter(vref_ctx *cx)
{
    cx->saved_emin = mpfr_get_emin();
    cx->saved_emax = mpfr_get_emax();
    mpfr_set_emin(cx->emin_c);
    mpfr_set_emax(cx->emax_c);
    cx->top = 0;
}

static inline void vref_leave(vref_ctx *cx)
{
    mpfr_set_emin(cx->saved_emin);
    mpfr_set_emax(cx->saved_emax);
}

static inline __mpfr_struct *vref_alloc(vref_ctx *cx, size_t n)
{
    __mpfr_struct *p = malloc(n * sizeof *p);
    if (p)
        for (size_t i = 0; i < n; i++) {
            if (cx->armed && *cx->stop && i % 256 == 0) { /* a stop within a big allocation */
                for (size_t k = 0; k < i; k++) /* in order: from the last, each free trims */
                    mpfr_clear(&p[k]);
                free(p);
                longjmp(*cx->jump, 1);
            }
            mpfr_init2(&p[i], cx->prec_c);
            mpfr_set_zero(&p[i], 1);
        }
    return p;
}

static inline void vref_free(__mpfr_struct *p, size_t n)
{
    if (!p)
        return;
    for (size_t i = 0; i < n; i++)
        mpfr_clear(&p[i]);
    free(p);
}

static inline int vref_save_array(FILE *f, __mpfr_struct *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mpfr_fpif_export(f, &p[i]))
            return 1;
    return 0;
}

/* a number of another precision than the array's is a damaged or foreign state */
static inline int vref_load_array(FILE *f, __mpfr_struct *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mpfr_prec_t prec = mpfr_get_prec(&p[i]);
        if (mpfr_fpif_import(&p[i], f) || mpfr_get_prec(&p[i]) != prec)
            return 1;
    }
    return 0;
}

#define CXP vref_ctx *cx_
#define CX cx_
#define NUM __mpfr_struct
#define NREF mpfr_ptr
#define E(a, i) (&(a)[i])
#define R(p) (p)
#define P(x) (x)
#define SCALAR(x) mpfr_ptr x = vref_scalar(cx_)
#define FRAME_BEGIN int frame_ = cx_->top
#define FRAME_END (cx_->top = frame_)
#define ADD(r, a, b) vref_fin(cx_, (r), mpfr_add((r), (a), (b), MPFR_RNDN))
#define SUB(r, a, b) vref_fin(cx_, (r), mpfr_sub((r), (a), (b), MPFR_RNDN))
#define MUL(r, a, b) vref_fin(cx_, (r), mpfr_mul((r), (a), (b), MPFR_RNDN))
#define DIV(r, a, b) vref_fin(cx_, (r), mpfr_div((r), (a), (b), MPFR_RNDN))
#define SQRT(r, a) vref_fin(cx_, (r), mpfr_sqrt((r), (a), MPFR_RNDN))
#define COPY(r, a) mpfr_set((r), (a), MPFR_RNDN)
#define SETD(r, c) vref_fin(cx_, (r), mpfr_set_d((r), (c), MPFR_RNDN))
#define SETI(r, i) vref_fin(cx_, (r), mpfr_set_si((r), (i), MPFR_RNDN))
#define STORE(r) vref_store(cx_, (r))
#define STORE_I(r) vref_store_i(cx_, (r))
#define ROUND_FMT(r, f) vref_round_fmt(cx_, (r), (f))
#define LOAD_IN(r, x) vref_load(cx_, (r), (x))
#define LOAD_PHI(r, x) vref_load_phi(cx_, (r), (x))
#define LOAD_LOG(r, x) vref_load_log(cx_, (r), (x))
#define EXP(r, a) vref_exp(cx_, (r), (a), 0)
#define EXP2(r, a) vref_exp(cx_, (r), (a), 1)
#define FLOOR(r, a) (mpfr_floor((r), (a)), vref_fin(cx_, (r), 0)) /* exact: floor's ternary says "not an integer" */
#define COSSIN(c, s, a) vref_cossin(cx_, (c), (s), (a))
#define ISFIN(a) mpfr_number_p(a)
#define LESS(a, b) mpfr_less_p((a), (b))
#define ABSLESS(a, b) (mpfr_cmpabs((a), (b)) < 0)
#define CMPD(a, c) mpfr_cmp_d((a), (c))
#define TINY (cx_->tiny)
#define TOD(a) (cx_->lo ? vref_lo(a) : mpfr_get_d((a), MPFR_RNDN))
#define GRAD_OUT(dst, a, on) vref_grad_out(cx_, &(dst), (a), (on))
#define NUM_ALLOC(n) vref_alloc(cx_, (n))
#define NUM_FREE(p, n) vref_free((p), (n))
#define SAVE_ARRAY(f, p, n) vref_save_array((f), (__mpfr_struct *)(p), (n))
#define LOAD_ARRAY(f, p, n) vref_load_array((f), (p), (n))
#define SR_RESET(t) vla_sr_reset(&cx_->sr, (t))
#define ARITH_ENTER vref_enter(cx_)
#define ARITH_LEAVE vref_leave(cx_)
#endif
