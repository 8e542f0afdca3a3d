/* ref_model_dd.c: the exact reference at the speed of binary64 arithmetic:
 * lib/recur.h instantiated over double-double numbers (lib/dw_body.h's algorithms on binary64
 * parts, about 106 bits), every operation in the pairs, the input transforms included: phi,
 * delta's log, the gates' exp and exp2 are the double-double functions below, not binary64's.
 * It answers what the MPFR exact reference (ref_model.c, 256 bits) answers, to about 1e-30
 * relative (docs/math.md section 6.1.1; tests/test_dd.c measures it per model);
 * vref_dd_check (ref_engine.c's "dd" backend) shows it on every run. */
#include "vlaref.h"
#include "model_impl.h"
#include "engine_impl.h"
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
    int lanes;   /* phi eight inputs at a time in the vector lanes (ldd_width's answer) */
    long lo_off; /* GRAD_OUT writes the low part too, this many numbers after (vref_backward_lo) */
    char fault;  /* a broken arithmetic, for the check's tests: 'm' every MUL's low part dropped
                  * (the product rounded to binary64), 'd' every DIV's; 0 none */
} vdd_ctx;

static int ldd_width(const vla_config *cfg);

#define SFX dd
#define VLA_FN static inline __attribute__((always_inline)) /* dw_body.h's: in the callers */
#define FN(name) VLA_CAT(name, SFX)
#define CXP vdd_ctx *cx_
#define CX cx_
/* the base operations of dw_body.h: binary64, round to nearest */
#define BASE double
#define DW vdd
#define RO(x) (x)
#define B_SETD(r, c) ((r) = (c))
#include "dw_pair.h"
#include "dw_body.h"
#undef VLA_FN
#define VLA_FN static
#undef MUL
#undef DIV
#define MUL(r, a, b) dd_op(cx_, 'm', &(r), (a), (b))
#define DIV(r, a, b) dd_op(cx_, 'd', &(r), (a), (b))

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

/* a - k (c1 + c2 + c3) for an integer k, a constant c split in three binary64 parts: k c1 and
 * k c2 exact products (TwoProd), the sums in pairs, so within a few u^2 of the result plus
 * |k c3| u */
static vdd dd_reduce(vdd a, double k, double c1, double c2, double c3)
{
    double p1 = k * c1, e1 = fma(k, c1, -p1), p2 = k * c2, e2 = fma(k, c2, -p2);
    vdd r = dd_sub(a, dd_make(p1, e1));
    r = dd_sub(r, dd_make(p2, e2));
    return dd_sub(r, dd_d(k * c3));
}

/* e^a: a = k ln 2 + r, k = round(a / ln 2), r = dd_reduce(a, k, ln 2's parts), within a few u^2
 * |r| + 2^-150 |k| of its value; then 2^k (1 + expm1(r)). Below 2^-969 (a < -671) the low part is subnormal and the
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
    vdd r = k != 0 ? dd_reduce(a, k, LN2_1, LN2_2, LN2_3) : a;
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

/* pi/2 = P1 + P2 + P3 to about 2^-164 (MPFR's const_pi at 500 bits, rounded part by part) */
static const double PIO2_1 = 0x1.921fb54442d18p+0, PIO2_2 = 0x1.1a62633145c07p-54,
                    PIO2_3 = -0x1.f1976b7ed8fbcp-110;

/* cos r and sin r for |r| <= pi/4 (and a little more): Horner in r^2 from the 15th term of each
 * series down (the first left out, r^31 / 31! < 2^-110 |r| at |r| <= pi/4), every division by
 * an exact integer */
static void dd_cossin_small(vdd r, vdd *c, vdd *s)
{
    vdd r2 = dd_mul(r, r), one = dd_d(1), tc = one, ts = one;
    for (int k = 15; k >= 1; k--) {
        tc = dd_sub(one, dd_div(dd_mul(r2, tc), dd_d((2.0 * k - 1) * (2 * k))));
        ts = dd_sub(one, dd_div(dd_mul(r2, ts), dd_d((2.0 * k) * (2 * k + 1))));
    }
    *c = tc;
    *s = dd_mul(r, ts);
}

/* cos a and sin a: a = n pi/2 + r, n = round(a / (pi/2)), r = dd_reduce(a, n, pi/2's parts),
 * within a few u^2 |r| + 2^-160 |n| of its value (|n| < 2^30 keeps that below 2^-130); then the
 * quadrant n mod 4 picks and signs the two series. Not finite: NaN, as MPFR. */
static void dd_cossin(vdd a, vdd *c, vdd *s)
{
    if (!isfinite(a.h)) {
        *c = *s = dd_d(NAN);
        return;
    }
    double n = nearbyint(a.h / PIO2_1);
    vdd r = n != 0 ? dd_reduce(a, n, PIO2_1, PIO2_2, PIO2_3) : a;
    vdd cr, sr;
    dd_cossin_small(r, &cr, &sr);
    const vdd ncr = {-cr.h, -cr.l}, nsr = {-sr.h, -sr.l};
    switch ((int)fmod(n, 4) & 3) { /* fmod's sign is n's: & 3 maps -1 to 3 and so on */
    case 0: *c = cr, *s = sr; break;
    case 1: *c = nsr, *s = cr; break;
    case 2: *c = ncr, *s = nsr; break;
    default: *c = sr, *s = ncr; break;
    }
}

/* floor a, exact (dw_body.h's) */
static inline vdd dd_floor(vdd a)
{
    vdd z;
    FN(dw_floor)(NULL, &z, &a);
    return z;
}

/* ---- recur.h's vocabulary over pairs ---- */

/* MUL ('m') and DIV ('d') of recur.h: dw_body.h's, or the fault asked for (vdd_ctx's); the
 * operands by value (the backward's text takes a conditional's pair) */
static inline void dd_op(vdd_ctx *cx, char op, vdd *r, vdd a, vdd b)
{
    if (op == 'm')
        FN(dw_mul)(cx, r, &a, &b);
    else
        FN(dw_div)(cx, r, &a, &b);
    if (cx->fault == op)
        r->l = 0;
}

/* a gradient handed out (recur.h's GRAD_OUT): its binary64 number, and its low part lo_off
 * numbers after where asked */
static void dd_grad_out(vdd_ctx *cx, double *dst, vdd a, int on)
{
    *dst = !on ? 0 : cx->lo ? a.l : a.h + a.l;
    if (cx->lo_off)
        dst[cx->lo_off] = on ? a.l : 0;
}

/* an input rounded into the io format (binary64 holds every format's numbers), then exact */
static vdd dd_load(vdd_ctx *cx, double x) { return dd_d(vla_round_fmt(cx->fi, x)); }
/* phi(x) = x + 1 for x > 0 (exact in a pair), e^x otherwise, of the rounded input */
static vdd dd_load_phi(vdd_ctx *cx, double x)
{
    double r = vla_round_fmt(cx->fi, x);
    return r > 0 ? dd_add(dd_d(r), dd_d(1)) : dd_exp(dd_d(r));
}

/* phi of x[0..n) into dst: eight at a time by the vector lanes' dd_exp (below, the same bits)
 * where the processor has them, the rest one by one */
static void dd_phi_n(vdd_ctx *cx, vdd *dst, const double *x, long n);
/* dd_exp of a[0..n) into dst, likewise (the gated family's per-channel decays) */
static void dd_exp_n(vdd_ctx *cx, vdd *dst, const vdd *a, long n);

#define ROUND_FMT(r, f) ((void)0) /* exact: no storage format, as MPFR's exact reference */
#define LOAD_IN(r, x) ((r) = dd_load(cx_, (x)))
#define LOAD_PHI(r, x) ((r) = dd_load_phi(cx_, (x)))
#define LOAD_PHI_N(dst, x, n) dd_phi_n(cx_, (dst), (x), (n))
#define LOAD_LOG(r, x) ((r) = dd_log(dd_load(cx_, (x))))
#define EXP(r, a) ((r) = dd_exp(a))
#define EXP_N(dst, a, n) dd_exp_n(cx_, (dst), (a), (n))
#define EXP2(r, a) ((r) = dd_exp2(a))
#define COSSIN(c, s, a) dd_cossin((a), &(c), &(s))
#define TINY (cx_->tiny)
#define TOD(a) (cx_->lo ? (a).l : (a).h + (a).l)
#define GRAD_OUT(dst, a, on) dd_grad_out(cx_, &(dst), (a), (on))
/* recur_prim.h's matvec (rs = n, cs = 1) and matvec_t (rs = 1, cs = m) eight rows at a time in the
 * vector lanes (below): each row's sum the chain of recur_prim.h's dot, first product then left to
 * right, in the lanes' dw_body.h, so the same bits as the text's; 0 where not taken (no lanes, or
 * a broken arithmetic asked for) */
static int dd_rows(vdd_ctx *cx, vdd *y, const vdd *M, const vdd *x, int m, int n, size_t rs,
                   size_t cs);
#define VLA_MATVEC_HOOK(y, M, x, m, n) dd_rows(cx_, (y), (M), (x), (m), (n), (size_t)(n), 1)
#define VLA_MATVEC_T_HOOK(y, M, x, m, n) dd_rows(cx_, (y), (M), (x), (m), (n), 1, (size_t)(m))
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
static int op_start(void *self, const double *S0)
{
    vdd_model *m = self;
    FN(vstate_start)(&m->cx, m->st, S0);
    return VLA_OK;
}
static const vla_model_ops dd_ops = {op_step, op_read, op_get,  op_destroy,
                                     op_save, op_load, NULL,    op_finish, op_start};

int vref_dd_model_new(vla_model **out, const vla_config *cfg)
{
    if (!out || !cfg)
        return VLA_EINVAL;
    vdd_model *m = calloc(1, sizeof *m);
    if (!m)
        return VLA_ENOMEM;
    m->cx.fi = vla_prec_io(cfg->prec);
    m->cx.tiny = vla_fmt_min_normal(vla_prec_compute(cfg->prec));
    m->cx.lanes = ldd_width(cfg) > 1;
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
 * (log), 'c' (cos), 's' (sin), 'f' (floor); the argument and result as pairs */
void vref_dd_fun(char f, const double a[2], double r[2])
{
    vdd x = {a[0], a[1]}, y, c, s;
    if (f == 'c' || f == 's') {
        dd_cossin(x, &c, &s);
        y = f == 'c' ? c : s;
    } else
        y = f == 'e' ? dd_exp(x) : f == '2' ? dd_exp2(x) : f == 'f' ? dd_floor(x) : dd_log(x);
    r[0] = y.h;
    r[1] = y.l;
}

/* ---- the backward (lib/recur_grad.h, recur_gradchunk.h) over the pairs, behind a vla_backward
 * as reference/ref_model.c's MPFR one: the seq form's or the chunk form's ---- */
#include "recur_grad.h"
#include "recur_gradchunk.h"
typedef struct {
    vdd_ctx cx;
    ST *s;
    FN(gstate) G;
    FN(gcstate) GC;
    int chunk; /* the chunk form's backward: GC; else G */
    volatile sig_atomic_t *stop;
    vla_grad_input in;
    void *ctx;
} vdd_bwd;

static int ddb_block(void *self, long j, const double *c, const vla_grads *out, long base)
{
    vdd_bwd *b = self;
    if (b->stop && *b->stop)
        return VLA_EINTR;
    return b->chunk ? FN(gradchunk_block)(&b->cx, b->s, &b->GC, j, b->in, b->ctx, c, out, base)
                    : FN(grad_block)(&b->cx, b->s, &b->G, j, b->in, b->ctx, c, out, base);
}

static void ddb_destroy(void *self)
{
    vdd_bwd *b = self;
    if (b->chunk)
        FN(gradchunk_end)(&b->GC);
    else
        FN(grad_end)(&b->G);
    if (b->s)
        FN(vstate_free)(&b->cx, b->s);
    free(b);
}

static const vla_backward_ops ddb_ops = {ddb_block, ddb_destroy};

int vref_dd_backward_new(vla_backward **out, const vla_config *cfg, long T, vla_grad_input in,
                         void *ctx, volatile sig_atomic_t *stop)
{
    int r;
    if (!out)
        return VLA_EINVAL;
    *out = NULL;
    if (!cfg || !in || T < 1)
        return VLA_EINVAL;
    if ((r = vla_config_check(cfg)) || (r = vla_grad_check(cfg, NULL)))
        return r;
    vdd_bwd *b = calloc(1, sizeof *b);
    if (!b)
        return VLA_ENOMEM;
    const char *f = getenv("VLA_DD_FAULT"); /* the tests' broken arithmetic (vdd_ctx's fault) */
    b->cx = (vdd_ctx){.fi = vla_prec_io(cfg->prec),
                      .tiny = vla_fmt_min_normal(vla_prec_compute(cfg->prec)),
                      .lanes = ldd_width(cfg) > 1,
                      .fault = f && (*f == 'm' || *f == 'd') ? *f : 0};
    b->in = in, b->ctx = ctx, b->stop = stop;
    b->chunk = cfg->form == VLA_FORM_CHUNK && cfg->chunk > 1;
    if ((r = FN(vstate_new)(&b->cx, cfg, &b->s)) ||
        (r = b->chunk ? FN(gradchunk_begin)(&b->cx, b->s, &b->GC, T, in, ctx)
                      : FN(grad_begin)(&b->cx, b->s, &b->G, T, in, ctx))) {
        ddb_destroy(b);
        return r;
    }
    return vla_backward_wrap(out, &ddb_ops, b, T, b->chunk ? b->GC.P.K : b->G.P.K, cfg->dv);
}

int vref_dd_backward_lo(vla_backward *b, long off)
{
    if (!b || off < 0 || b->ops != &ddb_ops)
        return VLA_EINVAL;
    ((vdd_bwd *)b->self)->cx.lo_off = off;
    return VLA_OK;
}
#include "recur_end.h"
#undef BASE
#undef DW
#undef DWP
#undef DWCP

/* ---- the same text in the CPU's vector lanes: eight runs at once ----
 * recur.h once more, each number a pair of AVX-512 vectors whose lane l holds run l's pair:
 * every operation is dw_body.h's algorithm on the eight lanes at once, each lane doing what the
 * scalar pairs above do for its run, in the same order, so a lane ends with the very bits of its
 * run's scalar model (tests/test_dd.c checks it on every model, way and form). Branches on values
 * go through recur.h's LANE_IF with a mask of the active lanes, as lanes/lanes.c's; the inputs
 * are loaded by the scalar text above (delta's log, the gate maps: O(d) a step), its phi and
 * per-channel exp(g) eight inputs at a time by the lanes' exp, and moved into the lanes; the
 * exps inside a step (the chunk forms') are the lanes' own, with dd_exp's and dd_exp2's bits.
 * The engine steps the runs' scalar models this way in groups of eight
 * (lib/engine_impl.h's vla_group_ops); the models keep the state between advances. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(VLA_NO_SIMD)
#include <immintrin.h>
#include <string.h>
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq")

enum { LDW = 8, LDCOUNTS = sizeof(vla_counts) / sizeof(long) };
typedef double ldv __attribute__((vector_size(64)));
typedef struct {
    ldv h, l;
} ldd;

typedef struct {
    unsigned m;              /* the lanes active now */
    double tiny;             /* as vdd_ctx's */
    long *base;              /* the state's vla_counts, as longs: what COUNT's pointer is in */
    long cnt[LDCOUNTS][LDW]; /* events per counter and lane since the group began */
} ldd_ctx;

static inline ldv ldv_set(double x) { return (ldv)_mm512_set1_pd(x); }
static inline unsigned ldv_fin(ldv x)
{
    return _mm512_cmp_pd_mask(_mm512_abs_pd((__m512d)x), _mm512_set1_pd(INFINITY), _CMP_LT_OQ);
}
/* the pair n in the active lanes m, o in the others */
static inline ldd ldd_bl(unsigned m, ldd o, ldd n)
{
    return (ldd){(ldv)_mm512_mask_mov_pd((__m512d)o.h, (__mmask8)m, (__m512d)n.h),
                 (ldv)_mm512_mask_mov_pd((__m512d)o.l, (__mmask8)m, (__m512d)n.l)};
}
static inline void ldd_count(ldd_ctx *c, const long *x, long n)
{
    long i = x - c->base;
    for (unsigned m = c->m; m; m &= m - 1)
        c->cnt[i][__builtin_ctz(m)] += n;
}

#define SFX ddl
#define VLA_FN static inline __attribute__((always_inline)) /* dw_body.h's: in registers */
#define FN(name) VLA_CAT(name, SFX)
#define CXP ldd_ctx *cx_
#define CX cx_
#define FRAME_BEGIN
#define FRAME_END
#define DW ldd
#define DWP ldd *
#define DWCP const ldd *
#define DW_LANES
#define BH(p) ((p)->h)
#define BL(p) ((p)->l)
#define BSCALAR(x) ldv x
#define BSRC ldv
#define B_ADD(r, a, b) ((r) = (a) + (b))
#define B_SUB(r, a, b) ((r) = (a) - (b))
#define B_MUL(r, a, b) ((r) = (a) * (b))
#define B_DIV(r, a, b) ((r) = (a) / (b))
#define B_SQRT(r, a) ((r) = (ldv)_mm512_sqrt_pd((__m512d)(a)))
#define B_FMA(r, a, b, c) ((r) = (ldv)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define B_NEG(r, a) ((r) = -(a))
#define B_COPY(r, a) ((r) = (a))
#define B_ZERO(r) ((r) = ldv_set(0))
#define B_SETD(r, c) ((r) = ldv_set(c))
#define B_TOD(a) ((a)[0])
#define DW_FINITE(z) (BL(z) = (ldv)_mm512_maskz_mov_pd(ldv_fin(BH(z)), (__m512d)BL(z)))
#define B_WHERE_ZERO(z, x)                                                                         \
    do {                                                                                           \
        __mmask8 z0_ = _mm512_cmp_pd_mask((__m512d)BH(x), _mm512_setzero_pd(), _CMP_EQ_OQ);       \
        BH(z) = (ldv)_mm512_mask_mov_pd((__m512d)BH(z), z0_, (__m512d)BH(x));                      \
        BL(z) = (ldv)_mm512_mask_mov_pd((__m512d)BL(z), z0_, _mm512_setzero_pd());                 \
    } while (0)
#include "dw_body.h"
#undef DW_LANES
#undef B_WHERE_ZERO
#undef VLA_FN
#define VLA_FN static

/* the comparisons of dw_body.h's scalar predicates, lane by lane as masks */
static inline unsigned ldd_less(ldd a, ldd b)
{
    return _mm512_cmp_pd_mask((__m512d)a.h, (__m512d)b.h, _CMP_LT_OQ) |
           (_mm512_cmp_pd_mask((__m512d)a.h, (__m512d)b.h, _CMP_EQ_OQ) &
            _mm512_cmp_pd_mask((__m512d)a.l, (__m512d)b.l, _CMP_LT_OQ));
}
static inline unsigned ldd_lessd(ldd a, double c) /* dw_cmpd(a, c) < 0 */
{
    return ldd_less(a, (ldd){ldv_set(c), ldv_set(0)});
}
/* ---- dd_exp and dd_exp2 above, on eight lanes: the same operations in the same order, so each
 * lane's pair has the scalar function's bits (tests/test_dd.c: dd_lanes_functions_bits_equal).
 * ldexp(x, k) is x * 2^k, one rounding as ldexp's (|k| <= 539 here, so 2^k is a number); a
 * branch on a value is both sides and a blend. ---- */
static inline ldd ldd_c(double c) { return (ldd){ldv_set(c), ldv_set(0)}; }
static inline ldd ldd_add(ldd a, ldd b) { ldd z; FN(dw_add)(NULL, &z, &a, &b); return z; }
static inline ldd ldd_sub(ldd a, ldd b) { ldd z; FN(dw_sub)(NULL, &z, &a, &b); return z; }
static inline ldd ldd_mul(ldd a, ldd b) { ldd z; FN(dw_mul)(NULL, &z, &a, &b); return z; }
static inline ldd ldd_div(ldd a, ldd b) { ldd z; FN(dw_div)(NULL, &z, &a, &b); return z; }
static inline ldd ldd_make(ldv h, ldv l)
{
    ldd z;
    z.h = h + l;
    z.l = l - (z.h - h);
    return z;
}
static inline ldv ldv_round(ldv x, int mode)
{
    return (ldv)_mm512_roundscale_pd((__m512d)x, mode | _MM_FROUND_NO_EXC);
}
static inline ldv ldv_pow2(ldv k) { return (ldv)_mm512_scalef_pd(_mm512_set1_pd(1), (__m512d)k); }
static inline ldv ldv_if(unsigned m, ldv yes, ldv no)
{
    return (ldv)_mm512_mask_mov_pd((__m512d)no, (__mmask8)m, (__m512d)yes);
}
static inline unsigned ldv_cmp(ldv a, ldv b, int op)
{
    return _mm512_cmp_pd_mask((__m512d)a, (__m512d)b, op);
}

static inline ldd ldd_expm1_small(ldd r)
{
    ldd s = {r.h * ldv_set(0x1p-6), r.l * ldv_set(0x1p-6)}, t = ldd_c(1), one = ldd_c(1),
        two = ldd_c(2);
    for (int n = 12; n >= 2; n--)
        t = ldd_add(one, ldd_div(ldd_mul(t, s), ldd_c(n)));
    ldd e = ldd_mul(s, t);
    for (int i = 0; i < 6; i++)
        e = ldd_mul(e, ldd_add(two, e));
    return e;
}

static inline ldd ldd_scale(ldd e, ldv k)
{
    ldd m = ldd_add(ldd_c(1), e);
    ldv k1 = ldv_round(k * ldv_set(0.5), _MM_FROUND_TO_ZERO), p1 = ldv_pow2(k1),
        p2 = ldv_pow2(k - k1);
    m.h = m.h * p1 * p2;
    m.l = (ldv)_mm512_maskz_mov_pd(ldv_fin(m.h), (__m512d)(m.l * p1 * p2));
    return m;
}

/* the special arguments: NaN as it is, Inf above hi, 0 below lo */
static inline ldd ldd_special(ldd y, ldv a, double hi, double lo)
{
    unsigned nan = ldv_cmp(a, a, _CMP_UNORD_Q), big = ldv_cmp(a, ldv_set(hi), _CMP_GT_OQ),
             small = ldv_cmp(a, ldv_set(lo), _CMP_LT_OQ);
    y.h = ldv_if(big, ldv_set(INFINITY), ldv_if(small, ldv_set(0), ldv_if(nan, a, y.h)));
    y.l = ldv_if(nan | big | small, ldv_set(0), y.l);
    return y;
}

static inline ldd ldd_exp(ldd a)
{
    ldv k = ldv_round(a.h / ldv_set(LN2_1), _MM_FROUND_TO_NEAREST_INT);
    ldv p1 = k * ldv_set(LN2_1), p2 = k * ldv_set(LN2_2);
    ldv e1 = (ldv)_mm512_fmadd_pd((__m512d)k, _mm512_set1_pd(LN2_1), (__m512d)-p1);
    ldv e2 = (ldv)_mm512_fmadd_pd((__m512d)k, _mm512_set1_pd(LN2_2), (__m512d)-p2);
    ldd r = ldd_sub(a, ldd_make(p1, e1));
    r = ldd_sub(r, ldd_make(p2, e2));
    r = ldd_sub(r, (ldd){k * ldv_set(LN2_3), ldv_set(0)});
    unsigned k0 = ldv_cmp(k, ldv_set(0), _CMP_EQ_OQ);
    r = ldd_bl(k0, r, a);
    return ldd_special(ldd_scale(ldd_expm1_small(r), k), a.h, 709.79, -746);
}

static inline ldd ldd_exp2(ldd a)
{
    ldv k = ldv_round(a.h, _MM_FROUND_TO_NEAREST_INT);
    ldd f = ldd_make(a.h - k, a.l),
        r = ldd_mul(f, ldd_make(ldv_set(LN2_1), ldv_set(LN2_2)));
    return ldd_special(ldd_scale(ldd_expm1_small(r), k), a.h, 1024, -1076);
}

/* dd_rows's rows i .. i + 7 (those below m), their pairs gathered into the lanes */
static __attribute__((noinline)) void ldd_rows8(vdd *y, const vdd *M, const vdd *x, int i, int m,
                                                int n, size_t rs, size_t cs)
{
    const __mmask8 on = (__mmask8)(m - i >= LDW ? 0xff : (1u << (m - i)) - 1);
    const double *b = (const double *)(M + (size_t)i * rs);
    __m512i at = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                                    _mm512_set1_epi64((long long)(2 * rs)));
    const __m512i step = _mm512_set1_epi64((long long)(2 * cs));
    ldd a, p;
    for (int j = 0; j < n; j++, at = _mm512_add_epi64(at, step)) {
        ldd r = {(ldv)_mm512_mask_i64gather_pd(_mm512_setzero_pd(), on, at, b, 8),
                 (ldv)_mm512_mask_i64gather_pd(_mm512_setzero_pd(), on, at, b + 1, 8)},
            xj = {ldv_set(x[j].h), ldv_set(x[j].l)};
        if (j == 0)
            a = ldd_mul(r, xj);
        else
            p = ldd_mul(r, xj), a = ldd_add(a, p);
    }
    for (int k = 0; k < LDW && i + k < m; k++)
        y[i + k] = (vdd){a.h[k], a.l[k]};
}

/* dd_load_phi of eight inputs already rounded to the io format */
static __attribute__((noinline)) void ldd_phi(vdd *dst, const double *r)
{
    ldd x = {(ldv)_mm512_loadu_pd(r), ldv_set(0)};
    ldd e = ldd_exp(x), p = ldd_add(x, ldd_c(1));
    unsigned pos = ldv_cmp(x.h, ldv_set(0), _CMP_GT_OQ);
    for (int l = 0; l < LDW; l++)
        dst[l] = pos >> l & 1 ? (vdd){p.h[l], p.l[l]} : (vdd){e.h[l], e.l[l]};
}

/* dd_exp of eight pairs */
static __attribute__((noinline)) void ldd_exp8(vdd *dst, const vdd *a)
{
    ldd x;
    for (int l = 0; l < LDW; l++)
        x.h[l] = a[l].h, x.l[l] = a[l].l;
    ldd y = ldd_exp(x);
    for (int l = 0; l < LDW; l++)
        dst[l] = (vdd){y.h[l], y.l[l]};
}

/* dd_exp ('e') or dd_exp2 ('2') of eight pairs, for tests/test_dd.c */
static __attribute__((noinline)) void ldd_fun8(char f, const double *a, double *r)
{
    ldd x = {(ldv)_mm512_loadu_pd(a), (ldv)_mm512_loadu_pd(a + LDW)};
    ldd y = f == 'e' ? ldd_exp(x) : ldd_exp2(x);
    _mm512_storeu_pd(r, (__m512d)y.h);
    _mm512_storeu_pd(r + LDW, (__m512d)y.l);
}

#define LDD_OP(r, f, ...) ((r) = ldd_bl(cx_->m, (r), ({ ldd z_; f(CX, &z_, __VA_ARGS__); z_; })))

/* mamba3's floor, cos and sin of its angles (d/2 a step) lane by lane by the scalar functions:
 * the same bits by construction */
static inline ldd ldd_floor(ldd a)
{
    ldd y;
    for (int l = 0; l < LDW; l++) {
        vdd z = dd_floor((vdd){a.h[l], a.l[l]});
        y.h[l] = z.h, y.l[l] = z.l;
    }
    return y;
}
static inline void ldd_cossin(ldd_ctx *cx, ldd a, ldd *c, ldd *s)
{
    ldd yc = *c, ys = *s;
    for (int l = 0; l < LDW; l++) {
        vdd zc, zs;
        dd_cossin((vdd){a.h[l], a.l[l]}, &zc, &zs);
        yc.h[l] = zc.h, yc.l[l] = zc.l, ys.h[l] = zs.h, ys.l[l] = zs.l;
    }
    *c = ldd_bl(cx->m, *c, yc);
    *s = ldd_bl(cx->m, *s, ys);
}
#define NUM ldd
#define NREF ldd *
#define E(a, i) (a)[i]
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) ldd x = {{0}, {0}}
#define ADD(r, a, b) LDD_OP(r, FN(dw_add), &(a), &(b))
#define SUB(r, a, b) LDD_OP(r, FN(dw_sub), &(a), &(b))
#define MUL(r, a, b) LDD_OP(r, FN(dw_mul), &(a), &(b))
#define DIV(r, a, b) LDD_OP(r, FN(dw_div), &(a), &(b))
#define SQRT(r, a) LDD_OP(r, FN(dw_sqrt), &(a))
#define SETD(r, c) LDD_OP(r, FN(dw_setd), (c))
#define SETI(r, i) SETD(r, (double)(i))
#define COPY(r, a) ((r) = ldd_bl(cx_->m, (r), (a)))
#define STORE(r) ((void)0) /* exact, as the scalar pairs */
#define ROUND_FMT(r, f) ((void)0)
#define EXP(r, a) ((r) = ldd_bl(cx_->m, (r), ldd_exp(a)))
#define EXP2(r, a) ((r) = ldd_bl(cx_->m, (r), ldd_exp2(a)))
#define FLOOR(r, a) ((r) = ldd_bl(cx_->m, (r), ldd_floor(a)))
#define COSSIN(c, s, a) ldd_cossin(cx_, (a), &(c), &(s))
#define ISFIN(a) (ldv_fin((a).h) & ldv_fin((a).l))
#define LESS(a, b) ldd_less((a), (b))
#define ABSLESS(a, b) (ldd_less((a), (b)) & ldd_less((ldd){-(b).h, -(b).l}, (a)))
#define LESSD(a, c) ldd_lessd((a), (c))
#define TINY (cx_->tiny)
#define ARITH_ENTER
#define ARITH_LEAVE
#define VLA_RECUR_DEVICE
#define VLA_MATVEC_ROWS
#define LPRED unsigned
#define PNOT(a) (~(a))
#define POR(a, b) ((a) | (b))
#define PFALSE 0u
#define COUNT(x) ldd_count(cx_, &(x), 1)
#define COUNT_ADD(x, n) ldd_count(cx_, &(x), (n))
#define TEMP(t) ((t) = (ldd){{0}, {0}})
#define LANE_IF(c)                                                                                 \
    {                                                                                              \
        const unsigned lsv_ = cx_->m, lc_ = (c);                                                   \
        cx_->m = lsv_ & lc_;                                                                       \
        if (cx_->m)
#define LANE_ELSE                                                                                  \
    cx_->m = lsv_ & ~lc_;                                                                          \
    if (cx_->m)
#define LANE_END                                                                                   \
    cx_->m = lsv_;                                                                                 \
    }
#include "recur.h"

/* A group: up to eight runs' scalar models and their state in the lanes */
typedef struct {
    vdd_model *m[LDW];
    int n;
    ldd_ctx cx;
    ST s;
    ldd *arena;
    vla_counts c0[LDW]; /* each run's counts when the group began */
} ldd_group;

/* the scalar state's arrays that X lists into lane l of the lanes' (in) or back (out) */
#define LDD_MOVE_(X, g, l, in)                                                                     \
    do {                                                                                           \
        VLA_DIMS_LOCALS(vla_dims_of(&(g)->s.cfg));                                                 \
        vstate_dd *ss_ = (g)->m[l]->st;                                                            \
        X(LDD_ARRAY_)                                                                              \
    } while (0)
#define LDD_ARRAY_(name, len)                                                                      \
    for (long i_ = 0; i_ < (long)(len); i_++) {                                                    \
        if (in_)                                                                                   \
            g_->s.name[i_].h[l_] = ss_->name[i_].h, g_->s.name[i_].l[l_] = ss_->name[i_].l;        \
        else                                                                                       \
            ss_->name[i_].h = g_->s.name[i_].h[l_], ss_->name[i_].l = g_->s.name[i_].l[l_];        \
    }
#define LDD_MOVE(X, g, l, in)                                                                      \
    do {                                                                                           \
        ldd_group *g_ = (g);                                                                       \
        const int l_ = (l), in_ = (in);                                                            \
        LDD_MOVE_(X, g_, l_, in_);                                                                 \
    } while (0)

/* each run's t and counts: its own at the start, plus the group's and its lane's since */
static void ldd_counts_out(ldd_group *g)
{
    for (int l = 0; l < g->n; l++) {
        vstate_dd *ss = g->m[l]->st;
        long *c = (long *)&ss->cnt;
        const long *c0 = (const long *)&g->c0[l], *sh = (const long *)&g->s.cnt;
        for (int j = 0; j < LDCOUNTS; j++)
            c[j] = c0[j] + sh[j] + g->cx.cnt[j][l];
        ss->t = g->s.t;
    }
}

static int ldd_width(const vla_config *cfg)
{
    (void)cfg;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512dq") && !getenv("VLA_DD_SCALAR")
               ? LDW
               : 1;
}

static int ldd_begin(void **out, vla_model *const *m, int n)
{
    if (n < 1 || n > LDW)
        return VLA_EINVAL;
    ldd_group *g = aligned_alloc(64, (sizeof *g + 63) / 64 * 64);
    if (!g)
        return VLA_ENOMEM;
    memset(g, 0, sizeof *g);
    g->n = n;
    for (int l = 0; l < LDW; l++) { /* (the lanes past n hold run 0, their writes unused) */
        g->m[l] = m[l < n ? l : 0]->self;
        if (m[l < n ? l : 0]->ops != &dd_ops || g->m[l]->st->tail ||
            g->m[l]->st->t != g->m[0]->st->t) {
            free(g);
            return VLA_EINVAL;
        }
    }
    const vla_config *cfg = &g->m[0]->st->cfg;
    VLA_DIMS_LOCALS(vla_dims_of(cfg));
    size_t len = 0;
#define VLA_X_(name, alen) len += (size_t)((alen) > 0 ? (alen) : 1);
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    if (!(g->arena = aligned_alloc(64, len * sizeof(ldd)))) {
        free(g);
        return VLA_ENOMEM;
    }
    memset(g->arena, 0, len * sizeof(ldd));
    ST *s = &g->s;
    s->cfg = *cfg;
    s->d = d;
    s->dv = dv;
    s->ng = ng;
    s->nr = nr;
    s->t = g->m[0]->st->t;
    ldd *p = g->arena;
#define VLA_X_(name, alen) s->name = p, p += (alen) > 0 ? (alen) : 1;
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    g->cx.tiny = g->m[0]->cx.tiny;
    g->cx.base = (long *)&s->cnt;
    for (int l = 0; l < LDW; l++) {
        LDD_MOVE(VLA_STATE_ARRAYS, g, l, 1);
        g->c0[l] = g->m[l]->st->cnt;
    }
    *out = g;
    return VLA_OK;
}

/* a read's query (recur.h's load_query) */
#define LDD_QUERY(X) X(q, d) X(pq, d)
/* what a step's view reads (lib/engine.c's models_view); a chunk's read-outs only at its end */
#define LDD_VIEW(X) X(o, dv) X(kp, d) X(al, d)
#define LDD_CHUNK(X) X(co, nc * dv)

static int ldd_step(void *grp, const vla_input *in, int is_read)
{
    ldd_group *g = grp;
    ST *s = &g->s;
    if (!is_read && s->cfg.form == VLA_FORM_SCAN && s->t + 1 >= 1L << VLA_SCAN_LEVELS)
        return VLA_ERANGE; /* (vstate_step's refusal, said by the run alone) */
    for (int l = 0; l < g->n; l++) { /* each run's inputs by the scalar text, into its lane */
        vdd_model *m = g->m[l];
        if (is_read) {
            load_query_dd(&m->cx, m->st, in[l].q);
            LDD_MOVE(LDD_QUERY, g, l, 1);
        } else {
            load_dd(&m->cx, m->st, &in[l]);
            LDD_MOVE(VLA_STATE_INPUT, g, l, 1);
        }
    }
    g->cx.m = (1u << g->n) - 1;
    if (is_read) {
        s->cnt.reads++;
        read_loaded_ddl(&g->cx, s);
    } else {
        vstate_advance_ddl(&g->cx, s, in[0].g != NULL);
    }
    const int chunk_end = !is_read && vla_form_pending(&s->cfg, 1) && !vla_form_pending(&s->cfg, s->t);
    for (int l = 0; l < g->n; l++) {
        LDD_MOVE(LDD_VIEW, g, l, 0);
        if (chunk_end)
            LDD_MOVE(LDD_CHUNK, g, l, 0);
    }
    ldd_counts_out(g);
    return VLA_OK;
}

static void ldd_end(void *grp)
{
    ldd_group *g = grp;
    if (!g)
        return;
    for (int l = 0; l < g->n; l++) {
        LDD_MOVE(VLA_STATE_SAVED, g, l, 0);
        LDD_MOVE(VLA_STATE_INPUT, g, l, 0);
        LDD_MOVE(VLA_STATE_WORK, g, l, 0);
    }
    ldd_counts_out(g);
    free(g->arena);
    free(g);
}

const vla_group_ops vref_dd_group = {ldd_width, ldd_begin, ldd_step, ldd_end};

#undef LDD_OP
#undef LDD_MOVE
#undef LDD_MOVE_
#undef LDD_ARRAY_
#undef LDD_QUERY
#undef LDD_VIEW
#undef LDD_CHUNK
#undef DW
#undef DWP
#undef DWCP
#include "recur_end.h"
#pragma GCC pop_options
#else
static int ldd_width(const vla_config *cfg)
{
    (void)cfg;
    return 1; /* (no lanes: each model alone) */
}
const vla_group_ops vref_dd_group = {ldd_width, NULL, NULL, NULL};
#define VLA_DD_NO_LANES
#endif

static void dd_phi_n(vdd_ctx *cx, vdd *dst, const double *x, long n)
{
    long i = 0;
#ifndef VLA_DD_NO_LANES
    for (double r[LDW]; cx->lanes && i + LDW <= n; i += LDW) {
        for (int l = 0; l < LDW; l++)
            r[l] = vla_round_fmt(cx->fi, x[i + l]);
        ldd_phi(dst + i, r);
    }
#endif
    for (; i < n; i++)
        dst[i] = dd_load_phi(cx, x[i]);
}

static void dd_exp_n(vdd_ctx *cx, vdd *dst, const vdd *a, long n)
{
    long i = 0;
#ifndef VLA_DD_NO_LANES
    for (; cx->lanes && i + LDW <= n; i += LDW)
        ldd_exp8(dst + i, a + i);
#endif
    for (; i < n; i++)
        dst[i] = dd_exp(a[i]);
}

static int dd_rows(vdd_ctx *cx, vdd *y, const vdd *M, const vdd *x, int m, int n, size_t rs,
                   size_t cs)
{
#ifndef VLA_DD_NO_LANES
    if (cx->lanes && !cx->fault && n > 0) {
        for (int i = 0; i < m; i += LDW)
            ldd_rows8(y, M, x, i, m, n, rs, cs);
        return 1;
    }
#endif
    (void)cx, (void)y, (void)M, (void)x, (void)m, (void)n, (void)rs, (void)cs;
    return 0;
}

int vref_dd_fun8(char f, const double a[16], double r[16])
{
#ifndef VLA_DD_NO_LANES
    if (ldd_width(NULL) > 1 && (f == 'e' || f == '2')) {
        ldd_fun8(f, a, r);
        return VLA_OK;
    }
#endif
    (void)f, (void)a, (void)r;
    return VLA_ENOTSUP;
}
