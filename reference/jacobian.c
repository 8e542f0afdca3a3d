/* jacobian.c: the measures of the write Jacobian J_t = I - k' alpha^T of S_t = S_{t-1} J_t +
 * v alpha^T (docs/math.md section 7.5): ||J_t||_2 every step into a window's histogram, the
 * window's row at a checkpoint (percentiles, the spectral radius, a dgesvd cross-check) and the
 * Lyapunov exponent of J_1 ... J_t. bin/vla-jacobian measures with these; tests check them. */
#include "vlaref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void vref_jac_hist_reset(vref_jac_hist *h)
{
    if (h->lo <= h->hi)
        memset(h->bin + h->lo, 0, sizeof h->bin[0] * (size_t)(h->hi - h->lo + 1));
    h->n = h->nan = h->below = h->zero = h->under = h->over = 0;
    h->lo = VREF_JAC_NBIN;
    h->hi = -1;
    h->min = INFINITY;
    h->max = -INFINITY;
}

void vref_jac_hist_add(vref_jac_hist *h, double norm)
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
        int i = (int)floor((log2(x) - VREF_JAC_EMIN) * VREF_JAC_BPO);
        i = i < 0 ? 0 : i >= VREF_JAC_NBIN ? VREF_JAC_NBIN - 1 : i; /* log2 rounding at the range ends */
        h->bin[i]++;
        h->lo = i < h->lo ? i : h->lo;
        h->hi = i > h->hi ? i : h->hi;
    }
}

static double jac_clamp(const vref_jac_hist *h, double v) { return v < h->min ? h->min : v > h->max ? h->max : v; }

/* Nearest rank: the smallest value with at least ceil(p n) samples at or below it. A bin's
 * representative is clamped into the window's [min, max], which makes the extreme bins exact. */
double vref_jac_hist_quantile(const vref_jac_hist *h, double p)
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
            return jac_clamp(h, 1 + exp2(VREF_JAC_EMIN + (i + 0.5) / VREF_JAC_BPO));
    return h->max;
}

int vref_jac_init(vref_jac *a, int d, uint64_t seed)
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
    a->h.hi = VREF_JAC_NBIN - 1; /* the first reset clears everything */
    vref_jac_hist_reset(&a->h);
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
double vref_jac_step(vref_jac *a, const double *kp, const double *al, int d, int unit)
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
    vref_jac_hist_add(&a->h, norm);
    vla_lyap l = {d, a->lx, a->lsum, a->lt};
    vla_lyap_step(&l, kp, al);
    a->lsum = l.log_sum;
    a->lt = l.t;
    return norm;
}

/* The checkpoint's row (JAC_NCOL values) from the window so far and this step's kp, al; then the
 * window starts over. */
int vref_jac_row(vref_jac *a, const double *kp, const double *al, int d, long t, int unit,
                 double *row)
{
    double *J = calloc((size_t)d * d, sizeof(double)), *s = calloc((size_t)d, sizeof(double));
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
    const vref_jac_hist *h = &a->h;
    row[0] = (double)t;
    row[1] = h->nan ? NAN : h->n ? h->max : NAN;
    row[2] = vref_jac_hist_quantile(h, 0.50);
    row[3] = vref_jac_hist_quantile(h, 0.99);
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
    vref_jac_hist_reset(&a->h);
    a->min_c = NAN;
    a->unit_err = NAN;
    /* a J that dgesvd cannot take (Inf or NaN in the state) is a nan in the row, not a failure */
    return e == VLA_ENOMEM ? e : VLA_OK;
}

int vref_jac_check(const vref_jac *a, long t)
{
    const vref_jac_hist *h = &a->h;
    const long c[] = {h->n, h->nan, h->below, h->zero, h->under, h->over, a->lt};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i] < 0 || c[i] > t)
            return VLA_EFORMAT;
    int empty = h->lo == VREF_JAC_NBIN && h->hi == -1;
    if (!empty && !(h->lo >= 0 && h->lo <= h->hi && h->hi < VREF_JAC_NBIN))
        return VLA_EFORMAT;
    long sum = h->below + h->zero + h->under + h->over; /* every sample in one place */
    for (int i = 0; i < VREF_JAC_NBIN; i++) {
        if (h->bin[i] && (empty || i < h->lo || i > h->hi))
            return VLA_EFORMAT;
        sum += h->bin[i];
    }
    return sum == h->n ? VLA_OK : VLA_EFORMAT;
}

/* vla3's k' and alpha are unit by construction; delta's alpha is beta k', unit at beta 1. The
 * unit formula counts d - 1 singular values of 1 besides the top one: it needs d >= 2. */
int vref_jac_is_unit(const vla_config *cfg, double step_beta)
{
    if (cfg->d < 2)
        return 0;
    if (cfg->model == VLA_VLA3)
        return 1;
    return cfg->model == VLA_DELTA && (isnan(step_beta) ? cfg->beta : step_beta) == 1;
}
