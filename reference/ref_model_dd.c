/* ref_model_dd.c: the exact reference at the speed of binary64 arithmetic (issue 37 item 1):
 * lib/recur.h instantiated over double-double numbers (lib/dw_body.h's algorithms on binary64
 * parts, about 106 bits), every operation in the pairs, the input transforms included: phi,
 * delta's log, the gates' exp and exp2 are the double-double functions below, not binary64's.
 * It answers what the MPFR exact reference (ref_model.c, 256 bits) answers, to about 1e-30
 * relative (docs/math.md section 6.1.1; tests/test_dd.c measures it per model);
 * vref_dd_check (ref_engine.c's "dd" backend) shows it on every run. */
#include "vlaref.h"
#include "model_impl.h"
#include "tables.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    double h, l;
} vdd;

typedef struct {
    vla_fmt fi;  /* the io format: inputs are rounded into it, then taken exactly */
    double tiny; /* the compute format's smallest normal (zero-norm events, as MPFR's exact) */
    int lo;      /* TOD gives the low part (vref_model_get_lo) */
} vdd_ctx;

#define SFX dd
#define VLA_FN static
#define FN(name) VLA_CAT(name, SFX)
#define CXP vdd_ctx *cx_
#define CX cx_
#define FRAME_BEGIN
#define FRAME_END
/* the base operations of dw_body.h: binary64, round to nearest */
#define DW vdd
#define DWP vdd *
#define DWCP const vdd *
#define BH(p) ((p)->h)
#define BL(p) ((p)->l)
#define BSCALAR(x) double x
#define BSRC double
#define B_ADD(r, a, b) ((r) = (a) + (b))
#define B_SUB(r, a, b) ((r) = (a) - (b))
#define B_MUL(r, a, b) ((r) = (a) * (b))
#define B_DIV(r, a, b) ((r) = (a) / (b))
#define B_SQRT(r, a) ((r) = sqrt(a))
#define B_FMA(r, a, b, c) ((r) = fma((a), (b), (c)))
#define B_NEG(r, a) ((r) = -(a))
#define B_COPY(r, a) ((r) = (a))
#define B_ZERO(r) ((r) = 0)
#define B_ISZERO(a) ((a) == 0)
#define B_ISFIN(a) isfinite(a)
#define B_LESS(a, b) ((a) < (b))
#define B_EQ(a, b) ((a) == (b))
#define B_SGN(a) (((a) > 0) - ((a) < 0))
#define B_CMPD(a, c) (((a) > (c)) - ((a) < (c)))
#define B_SETD(r, c) ((r) = (c))
#define B_TOD(a) (a)
#include "dw_body.h"

/* ---- the elementary functions of pairs ---- */

/* h + l as a normalized pair, |h| >= |l| (FastTwoSum) */
static vdd dd_make(double h, double l)
{
    vdd z;
    z.h = h + l;
    z.l = l - (z.h - h);
    return z;
}
static vdd dd_add(vdd a, vdd b) { vdd z; FN(dw_add)(NULL, &z, &a, &b); return z; }
static vdd dd_sub(vdd a, vdd b) { vdd z; FN(dw_sub)(NULL, &z, &a, &b); return z; }
static vdd dd_mul(vdd a, vdd b) { vdd z; FN(dw_mul)(NULL, &z, &a, &b); return z; }
static vdd dd_div(vdd a, vdd b) { vdd z; FN(dw_div)(NULL, &z, &a, &b); return z; }
static vdd dd_d(double c) { return (vdd){c, 0}; }

/* ln 2 = L1 + L2 + L3 to about 2^-160 (mpmath at 400 bits, rounded part by part) */
static const double LN2_1 = 0x1.62e42fefa39efp-1, LN2_2 = 0x1.abc9e3b39803fp-56,
                    LN2_3 = 0x1.7b57a079a1934p-111;

/* expm1(r) for |r| <= 0.36: r = 2^6 s, expm1(s) by 11 terms of Horner (the first left out,
 * s^12 / 12! < 2^-115 s at |s| <= 0.0057), then expm1(2x) = e (2 + e) six times, which keeps
 * the small part's relative accuracy (each doubling adds its own few u^2, none amplified) */
static vdd dd_expm1_small(vdd r)
{
    vdd s = {ldexp(r.h, -6), ldexp(r.l, -6)}, t = dd_d(1), one = dd_d(1), two = dd_d(2);
    for (int n = 12; n >= 2; n--)
        t = dd_add(one, dd_div(dd_mul(t, s), dd_d(n)));
    vdd e = dd_mul(s, t);
    for (int i = 0; i < 6; i++)
        e = dd_mul(e, dd_add(two, e));
    return e;
}

/* 2^k (1 + e), k an integer (as a double), in two scalings so that 2^k itself never overflows
 * where the product does not */
static vdd dd_scale(vdd e, double k)
{
    vdd m = dd_add(dd_d(1), e);
    int k1 = (int)k / 2, k2 = (int)k - k1;
    m.h = ldexp(ldexp(m.h, k1), k2);
    m.l = isfinite(m.h) ? ldexp(ldexp(m.l, k1), k2) : 0;
    return m;
}

/* e^a: a = k ln 2 + r, k = round(a / ln 2), r = a - k L1 - k L2 - k L3 with k L1 and k L2 exact
 * products (TwoProd) and the sums in pairs, so r is within a few u^2 |r| + 2^-150 |k| of its
 * value; then 2^k (1 + expm1(r)). Below 2^-969 (a < -671) the low part is subnormal and the
 * pair holds fewer than 106 bits, down to binary64's own at 2^-1022; past binary64's range, Inf
 * or 0 (MPFR's exact reference has no underflow: the check of every run, vref_dd_engine, sees
 * any difference that matters). */
static vdd dd_exp(vdd a)
{
    if (isnan(a.h))
        return dd_d(a.h);
    if (a.h > 709.79)
        return dd_d(INFINITY);
    if (a.h < -746)
        return dd_d(0);
    double k = nearbyint(a.h / LN2_1);
    vdd r = a;
    if (k != 0) {
        double p1 = k * LN2_1, e1 = fma(k, LN2_1, -p1);
        double p2 = k * LN2_2, e2 = fma(k, LN2_2, -p2);
        r = dd_sub(r, dd_make(p1, e1));
        r = dd_sub(r, dd_make(p2, e2));
        r = dd_sub(r, dd_d(k * LN2_3));
    }
    return dd_scale(dd_expm1_small(r), k);
}

/* 2^a: a = k + f, k = round(a.h), f = (a.h - k) + a.l exactly, then 2^k e^(f ln 2) with
 * |f ln 2| <= 0.35 and ln 2 as L1 + L2 */
static vdd dd_exp2(vdd a)
{
    if (isnan(a.h))
        return dd_d(a.h);
    if (a.h > 1024)
        return dd_d(INFINITY);
    if (a.h < -1076)
        return dd_d(0);
    double k = nearbyint(a.h);
    vdd f = dd_make(a.h - k, a.l), r = dd_mul(f, dd_make(LN2_1, LN2_2));
    return dd_scale(dd_expm1_small(r), k);
}

/* k ln 2 for an integer k (|k| < 2^11): k L1 and k L2 exact products, summed in pairs */
static vdd dd_kln2(double k)
{
    double p1 = k * LN2_1, e1 = fma(k, LN2_1, -p1), p2 = k * LN2_2, e2 = fma(k, LN2_2, -p2);
    return dd_add(dd_add(dd_make(p1, e1), dd_make(p2, e2)), dd_d(k * LN2_3));
}

/* log a, a > 0 finite: a = 2^k m with m in [sqrt(1/2), sqrt(2)) (exact scaling), so that
 * y0 = log(m.h) (binary64, within 1 ulp) has |y0| <= 0.35; one Newton step on e^y = m with its
 * second-order term: d = m e^-y0 - 1 = (m - 1) + m expm1(-y0), whose parts are accurate relative
 * to log m itself, not to 1; log m = y0 + d - d^2 / 2 + O(d^3), |d| <= 2^-52; then + k ln 2.
 * Zero: -Inf; negative or NaN: NaN, as MPFR. */
static vdd dd_log(vdd a)
{
    if (!(a.h > 0) || !isfinite(a.h))
        return dd_d(log(a.h));
    int k = ilogb(a.h);
    if (ldexp(a.h, -k) > M_SQRT2)
        k++;
    vdd m = {ldexp(a.h, -k), ldexp(a.l, -k)}; /* a.l's bits below 2^-1074 were never there */
    double y0 = log(m.h);
    vdd q = dd_expm1_small(dd_d(-y0));
    vdd d = dd_add(dd_sub(m, dd_d(1)), dd_mul(m, q));
    vdd d2 = dd_mul(d, d);
    d2.h = ldexp(d2.h, -1);
    d2.l = ldexp(d2.l, -1);
    vdd y = dd_add(dd_d(y0), dd_sub(d, d2));
    return k ? dd_add(y, dd_kln2(k)) : y;
}

/* ---- recur.h's vocabulary over pairs ---- */

/* an input rounded into the io format (binary64 holds every format's numbers), then exact */
static vdd dd_load(vdd_ctx *cx, double x) { return dd_d(vla_round_fmt(cx->fi, x)); }
/* phi(x) = x + 1 for x > 0 (exact in a pair), e^x otherwise, of the rounded input */
static vdd dd_load_phi(vdd_ctx *cx, double x)
{
    double r = vla_round_fmt(cx->fi, x);
    return r > 0 ? dd_add(dd_d(r), dd_d(1)) : dd_exp(dd_d(r));
}

#define NUM vdd
#define NREF vdd *
#define E(a, i) (a)[i]
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) vdd x
#define ADD(r, a, b) FN(dw_add)(CX, &(r), &(a), &(b))
#define SUB(r, a, b) FN(dw_sub)(CX, &(r), &(a), &(b))
#define MUL(r, a, b) FN(dw_mul)(CX, &(r), &(a), &(b))
#define DIV(r, a, b) FN(dw_div)(CX, &(r), &(a), &(b))
#define SQRT(r, a) FN(dw_sqrt)(CX, &(r), &(a))
#define COPY(r, a) ((r) = (a))
#define SETD(r, c) FN(dw_setd)(CX, &(r), (c))
#define SETI(r, i) FN(dw_setd)(CX, &(r), (double)(i))
#define STORE(r) ((void)0) /* exact: no storage format, as MPFR's exact reference */
#define ROUND_FMT(r, f) ((void)0)
#define LOAD_IN(r, x) ((r) = dd_load(cx_, (x)))
#define LOAD_PHI(r, x) ((r) = dd_load_phi(cx_, (x)))
#define LOAD_LOG(r, x) ((r) = dd_log(dd_load(cx_, (x))))
#define EXP(r, a) ((r) = dd_exp(a))
#define EXP2(r, a) ((r) = dd_exp2(a))
#define ISFIN(a) (isfinite((a).h) && isfinite((a).l))
#define LESS(a, b) FN(dw_less)(&(a), &(b))
#define ABSLESS(a, b) FN(dw_absless)(CX, &(a), &(b))
#define CMPD(a, c) FN(dw_cmpd)(&(a), (c))
#define TINY (cx_->tiny)
#define TOD(a) (cx_->lo ? (a).l : (a).h + (a).l)
#define NUM_ALLOC(n) ((vdd *)calloc((n), sizeof(vdd)))
#define NUM_FREE(p, n) ((void)(n), free(p))
#define SAVE_ARRAY(f, p, n) (fwrite((p), sizeof(vdd), (n), (f)) != (n))
#define LOAD_ARRAY(f, p, n) (fread((p), sizeof(vdd), (n), (f)) != (n))
#define ARITH_ENTER
#define ARITH_LEAVE
#include "recur.h"

typedef struct {
    vdd_ctx cx;
    ST *st;
} vdd_model;

static int op_step(void *self, const vla_input *in)
{
    vdd_model *m = self;
    return FN(vstate_step)(&m->cx, m->st, in);
}
static int op_read(void *self, const double *q)
{
    vdd_model *m = self;
    return FN(vstate_read)(&m->cx, m->st, q);
}
static int op_get(const void *self, vla_quantity q, double *dst)
{
    vdd_model *m = (vdd_model *)self;
    return FN(vstate_get)(&m->cx, m->st, q, dst);
}
static void op_destroy(void *self)
{
    vdd_model *m = self;
    FN(vstate_free)(&m->cx, m->st);
    free(m);
}
static int op_save(const void *self, FILE *f)
{
    const vdd_model *m = self;
    return FN(vstate_save)(m->st, f);
}
static int op_load(void *self, FILE *f)
{
    vdd_model *m = self;
    return FN(vstate_load)(m->st, f);
}
static int op_finish(void *self)
{
    vdd_model *m = self;
    return FN(vstate_finish)(&m->cx, m->st);
}
static const vla_model_ops dd_ops = {op_step, op_read, op_get,  op_destroy,
                                     op_save, op_load, NULL,    op_finish};

int vref_dd_model_new(vla_model **out, const vla_config *cfg)
{
    if (!out || !cfg)
        return VLA_EINVAL;
    vdd_model *m = calloc(1, sizeof *m);
    if (!m)
        return VLA_ENOMEM;
    m->cx.fi = vla_prec_io(cfg->prec);
    m->cx.tiny = vla_fmt_min_normal(vla_prec_compute(cfg->prec));
    int r = FN(vstate_new)(&m->cx, cfg, &m->st);
    if (r) {
        free(m);
        return r;
    }
    return vla_model_wrap(out, cfg, &dd_ops, m, &m->st->cnt);
}

int vref_dd_get_lo(const vla_model *m, vla_quantity q, double *lo)
{
    if (!m || !lo || m->ops != &dd_ops)
        return VLA_EINVAL;
    vdd_model *d = m->self;
    d->cx.lo = 1;
    int r = op_get(d, q, lo);
    d->cx.lo = 0;
    return r;
}

/* the elementary functions for tests/test_dd.c, against MPFR: f is 'e' (exp), '2' (exp2), 'l'
 * (log); the argument and result as pairs */
void vref_dd_fun(char f, const double a[2], double r[2])
{
    vdd x = {a[0], a[1]}, y = f == 'e' ? dd_exp(x) : f == '2' ? dd_exp2(x) : dd_log(x);
    r[0] = y.h;
    r[1] = y.l;
}
#include "recur_end.h"
#undef DW
#undef DWP
#undef DWCP
