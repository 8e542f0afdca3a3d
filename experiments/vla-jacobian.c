/* vla-jacobian: the write Jacobian of S_t = S_{t-1} J_t + v alpha^T, J_t = I - k' alpha^T (SPEC
 * section 7, claim 2 of section 10): ||J_t||_2 every step, summarized per checkpoint window, the
 * spectral radius and a dgesvd cross-check at each checkpoint, and the Lyapunov exponent of J_1...J_t.
 * tests/test_jacobian_recall.c includes this file with TESTING defined, to test the measuring code. */
#include "cli.h"
#include "vlaref.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JAC_COLUMNS                                                                                \
    "t jac_max jac_p50 jac_p99 jac_radius jac_svd jac_svd_err lyap jac_min_c jac_unit_err jac_one"
#define JAC_NCOL 11

/* The window's percentiles come from a histogram of x = ||J||_2 - 1, because the accumulator must
 * be plain data that a checkpoint saves as it is (no sample list growing with the window). Bins
 * are log-spaced, JAC_BPO per octave over [2^JAC_EMIN, 2^JAC_EMAX), and a bin reports its
 * geometric midpoint: off by at most 2^(1/(2 JAC_BPO)) - 1 = 8.5e-5 relative in x, so by less
 * than that relative in ||J|| = 1 + x. x below 2^-40 cannot matter beside 1 at that tolerance. */
#define JAC_EMIN (-40)
#define JAC_EMAX 64
#define JAC_BPO 4096
#define JAC_NBIN ((JAC_EMAX - JAC_EMIN) * JAC_BPO)

typedef struct {
    long n;                        /* finite or infinite samples (NaN excluded) */
    long nan, below, zero, under, over;
    int lo, hi;                    /* occupied bins, so that a reset or a scan skips the rest */
    double min, max;
    uint32_t bin[JAC_NBIN];        /* a window is at most 0.9 T <= 9e8 < 2^32 steps */
} jac_hist;

static void jac_hist_reset(jac_hist *h)
{
    if (h->lo <= h->hi)
        memset(h->bin + h->lo, 0, sizeof h->bin[0] * (size_t)(h->hi - h->lo + 1));
    h->n = h->nan = h->below = h->zero = h->under = h->over = 0;
    h->lo = JAC_NBIN;
    h->hi = -1;
    h->min = INFINITY;
    h->max = -INFINITY;
}

static void jac_hist_add(jac_hist *h, double norm)
{
    if (isnan(norm)) {
        h->nan++;
        return;
    }
    h->n++;
    h->min = norm < h->min ? norm : h->min;
    h->max = norm > h->max ? norm : h->max;
    double x = norm - 1;
    if (x < 0) { /* only d = 1, where the one singular value is |1 - a.b| */
        h->below++;
    } else if (x == 0) {
        h->zero++;
    } else if (x < 0x1p-40) {
        h->under++;
    } else if (x >= 0x1p64) {
        h->over++;
    } else {
        int i = (int)floor((log2(x) - JAC_EMIN) * JAC_BPO);
        i = i < 0 ? 0 : i >= JAC_NBIN ? JAC_NBIN - 1 : i; /* log2 rounding at the range ends */
        h->bin[i]++;
        h->lo = i < h->lo ? i : h->lo;
        h->hi = i > h->hi ? i : h->hi;
    }
}

static double jac_clamp(const jac_hist *h, double v) { return v < h->min ? h->min : v > h->max ? h->max : v; }

/* Nearest rank: the smallest value with at least ceil(p n) samples at or below it. A bin's
 * representative is clamped into the window's [min, max], which makes the extreme bins exact. */
static double jac_hist_quantile(const jac_hist *h, double p)
{
    if (h->n == 0)
        return NAN;
    long k = (long)ceil(p * (double)h->n), cum = 0;
    k = k < 1 ? 1 : k > h->n ? h->n : k;
    if ((cum += h->below) >= k)
        return h->min;
    if ((cum += h->zero) >= k)
        return jac_clamp(h, 1);
    if ((cum += h->under) >= k)
        return jac_clamp(h, 1 + 0x1p-41);
    for (int i = h->lo; i <= h->hi; i++)
        if ((cum += h->bin[i]) >= k)
            return jac_clamp(h, 1 + exp2(JAC_EMIN + (i + 0.5) / JAC_BPO));
    return h->max;
}

/* A run's accumulator: the window's histogram and extremes, and the Lyapunov tracker's state
 * (held here rather than in a vla_lyap, whose vector is a pointer a checkpoint cannot save). */
typedef struct {
    double min_c;     /* min over the window of cos(alpha, k') */
    double unit_err;  /* max over the window of |unit formula - general| / general */
    double lx[VLA_D_MAX];
    double lsum;
    long lt;
    jac_hist h;
} jac_acc;

static int jac_acc_init(jac_acc *a, int d, uint64_t seed)
{
    vla_lyap l;
    int e = vla_lyap_init(&l, d, seed);
    if (e)
        return e;
    memcpy(a->lx, l.x, sizeof(double) * (size_t)d);
    a->lsum = l.log_sum;
    a->lt = l.t;
    vla_lyap_free(&l);
    a->h.lo = 0;
    a->h.hi = JAC_NBIN - 1; /* the first reset clears everything */
    jac_hist_reset(&a->h);
    a->min_c = NAN;
    a->unit_err = NAN;
    return VLA_OK;
}

static double jac_dot(const double *a, const double *b, int d)
{
    double s = 0;
    for (int i = 0; i < d; i++)
        s += a[i] * b[i];
    return s;
}

/* One step's J = I - kp al^T. unit: the model makes kp and al unit vectors (vla3; delta at beta 1),
 * so the closed form of c = cos(al, kp) applies too, and its disagreement with the general 2 x 2
 * reduction on the stored (rounded, not exactly unit) vectors is recorded. Returns ||J||_2. */
static double jac_acc_step(jac_acc *a, const double *kp, const double *al, int d, int unit)
{
    double norm = vla_jac_norm(kp, al, d);
    double na = vla_fro(kp, d), nb = vla_fro(al, d);
    double c = (na > 0 && nb > 0 && isfinite(na * nb)) ? jac_dot(kp, al, d) / (na * nb) : NAN;
    if (!isnan(c) && !(c >= a->min_c))
        a->min_c = c;
    if (unit) {
        double e = fabs(vla_jac_norm_unit(c) - norm) / norm;
        if (isnan(a->unit_err) || !(e <= a->unit_err))
            a->unit_err = e;
    }
    jac_hist_add(&a->h, norm);
    vla_lyap l = {d, a->lx, a->lsum, a->lt};
    vla_lyap_step(&l, kp, al);
    a->lsum = l.log_sum;
    a->lt = l.t;
    return norm;
}

/* The checkpoint's row (JAC_NCOL values) from the window so far and this step's kp, al; then the
 * window starts over. */
static int jac_acc_row(jac_acc *a, const double *kp, const double *al, int d, long t, int unit,
                       double *row)
{
    double *J = malloc(sizeof(double) * (size_t)d * d), *s = malloc(sizeof(double) * (size_t)d);
    if (!J || !s) {
        free(J);
        free(s);
        return VLA_ENOMEM;
    }
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++)
            J[(size_t)i * d + j] = (i == j) - kp[i] * al[j];
    int e = vref_svd(J, d, d, s);
    double p = jac_dot(al, kp, d), closed = vla_jac_norm(kp, al, d);
    const jac_hist *h = &a->h;
    row[0] = (double)t;
    row[1] = h->nan ? NAN : h->n ? h->max : NAN;
    row[2] = jac_hist_quantile(h, 0.50);
    row[3] = jac_hist_quantile(h, 0.99);
    /* eigenvalues of I - kp al^T: 1 on the d - 1 directions orthogonal to al, and 1 - al.kp */
    row[4] = d >= 2 ? fmax(1, fabs(1 - p)) : fabs(1 - p);
    row[5] = e ? NAN : s[0];
    row[6] = e ? NAN : fabs(closed - s[0]) / s[0];
    row[7] = a->lt > 0 ? a->lsum / (double)a->lt : NAN;
    row[8] = a->min_c;
    row[9] = unit ? a->unit_err : NAN;
    row[10] = h->n ? (double)(h->zero + h->under) / (double)h->n : NAN;
    free(J);
    free(s);
    jac_hist_reset(&a->h);
    a->min_c = NAN;
    a->unit_err = NAN;
    return e;
}

/* vla3's k' and alpha are unit by construction; delta's alpha is beta k', unit at beta 1. The
 * unit formula counts d - 1 singular values of 1 besides the top one: it needs d >= 2. */
static int jac_is_unit(const vla_config *cfg, double step_beta)
{
    if (cfg->d < 2)
        return 0;
    if (cfg->model == VLA_VLA3)
        return 1;
    return cfg->model == VLA_DELTA && (isnan(step_beta) ? cfg->beta : step_beta) == 1;
}

#ifndef TESTING
typedef struct {
    const vla_cli *c;
} jac_ctx;

/* a different Lyapunov starting vector per head, a pure function of (seed, head) */
static uint64_t jac_seed(const vla_cli *c, int head)
{
    return c->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)head * 0xbf58476d1ce4e5b9ULL + 1;
}

static int jac_init(vla_run *r, void *acc, void *ctx)
{
    const jac_ctx *x = ctx;
    return jac_acc_init(acc, vla_model_config(r->m)->d, jac_seed(x->c, r->head));
}

static int jac_on_step(vla_run *r, void *accp, void *ctx)
{
    if (r->is_read) /* a read writes nothing: no Jacobian */
        return VLA_OK;
    const vla_config *cfg = vla_model_config(r->m);
    double kp[VLA_D_MAX], al[VLA_D_MAX];
    int e = vla_model_get(r->m, VLA_Q_KP, kp);
    if (!e)
        e = vla_model_get(r->m, VLA_Q_ALPHA, al);
    if (!e)
        jac_acc_step(accp, kp, al, cfg->d, jac_is_unit(cfg, r->buf.beta));
    return e;
}

static int jac_on_checkpoint(vla_run *r, void *accp, vla_rows *rows, void *ctx)
{
    const vla_config *cfg = vla_model_config(r->m);
    double kp[VLA_D_MAX], al[VLA_D_MAX], row[JAC_NCOL];
    int e = vla_model_get(r->m, VLA_Q_KP, kp);
    if (!e)
        e = vla_model_get(r->m, VLA_Q_ALPHA, al);
    if (!e)
        e = jac_acc_row(accp, kp, al, cfg->d, r->t, jac_is_unit(cfg, r->buf.beta), row);
    return e ? e : vla_rows_add(rows, row);
}

int main(int argc, char **argv)
{
    static const vla_cli_spec spec = {
        .prog = "vla-jacobian",
        .summary =
            "The write Jacobian of the state recurrence: S_t = S_{t-1} J_t + v alpha^T with\n"
            "J_t = I - k' alpha^T (SPEC section 7). Every step it computes ||J_t||_2 from the\n"
            "model's last k' and alpha by the exact 2 x 2 reduction (any vectors); at each\n"
            "checkpoint it writes the maximum and the percentiles of ||J_t||_2 over the window\n"
            "since the previous checkpoint, the spectral radius of J_t, a dgesvd cross-check of\n"
            "||J_t||_2 on the explicit d x d matrix, and the finite-time largest Lyapunov exponent\n"
            "(1/t) log ||x J_1 ... J_t|| by renormalized power iteration.\n"
            "Claim 2 of the source documents says ||J_t||_2 = 1 for all t; for unit k' and alpha\n"
            "with c = alpha.k', ||J||_2 = sqrt((3 - 2c + sqrt(5 - 4c)) / 2): 1 only at c = 1,\n"
            "the golden ratio 1.618 at c = 0. la's J is I; delta's is I - beta k'k'^T; rls and\n"
            "vla1 use raw (non-unit) vectors, so their norms can exceed the golden ratio.\n"
            "Percentiles: nearest rank over a histogram of ||J||_2 - 1 with 4096 log-spaced bins\n"
            "per octave over [2^-40, 2^64), each reported at its geometric midpoint clamped to the\n"
            "window's min and max: relative error below 8.5e-5 (under 1e-4) in ||J||_2 - 1 and\n"
            "so in ||J||_2; norms within 2^-40 of 1 are reported as 1 (+2^-41 unless exactly 1).\n"
            "Not included in J: delta's row gates and decay (they scale S from the left or\n"
            "uniformly) and vla1's error clipping (a nonlinear rescale of v - S k).",
        .columns =
            "  t             step (a checkpoint; the window is the steps since the previous one)\n"
            "  jac_max       max of ||J_t||_2 over the window (nan if any step's norm was NaN)\n"
            "  jac_p50       median of ||J_t||_2 over the window (histogram, see above)\n"
            "  jac_p99       99th percentile of ||J_t||_2 over the window\n"
            "  jac_radius    spectral radius of J_t at t: max(1, |1 - alpha.k'|) (d >= 2)\n"
            "  jac_svd       largest singular value of the explicit J_t at t, by LAPACK dgesvd\n"
            "  jac_svd_err   |closed form - jac_svd| / jac_svd at t\n"
            "  lyap          finite-time largest Lyapunov exponent of J_1...J_t (0 for la)\n"
            "  jac_min_c     min over the window of cos(alpha, k') (nan for la: alpha = 0)\n"
            "  jac_unit_err  max over the window of |unit-vector formula - general| / general,\n"
            "                where k' and alpha are unit by construction (vla3, delta at beta 1;\n"
            "                else nan): how far the stored, rounded vectors are from unit\n"
            "  jac_one       fraction of the window's steps with ||J_t||_2 within 2^-40 of 1",
        .example = "vla-jacobian --model vla3 --stream lmlike --d 32 --steps 100000 --precision f32",
        .default_steps = 100000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_NONE,
    };
    vla_cli c;
    vla_cli_parse(&c, &spec, argc, argv);
    if (c.ref != REF_NONE) /* the Jacobian is the model's own; a reference would only cost time */
        vla_cli_die(&spec, "--ref: this program compares against dgesvd, not a reference run");
    vla_dat *out;
    int e = vla_dat_open(&out, c.out, argc, argv);
    if (e) {
        fprintf(stderr, "vla-jacobian: cannot write %s: %s\n", c.out, vla_strerror(e));
        return 1;
    }
    vla_cli_provenance(out, &c);
    vla_dat_meta(out, "histogram", "%d log-spaced bins per octave of ||J||-1 in [2^%d, 2^%d): "
                 "percentiles within 8.5e-5 relative", JAC_BPO, JAC_EMIN, JAC_EMAX);
    jac_ctx ctx = {&c};
    vla_driver drv = {.columns = JAC_COLUMNS,
                      .acc_size = sizeof(jac_acc),
                      .init = jac_init,
                      .on_step = jac_on_step,
                      .on_checkpoint = jac_on_checkpoint,
                      .ctx = &ctx};
    int status = vla_drive(&c, &spec, &drv, out);
    e = vla_dat_close(out);
    if (!status && e) {
        fprintf(stderr, "vla-jacobian: writing %s failed: %s\n", c.out, vla_strerror(e));
        status = 1;
    }
    return status;
}
#endif
