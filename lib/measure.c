/* measure.c: the measures of docs/math.md section 7 that need no reference: Frobenius norms that
 * neither overflow nor underflow, the symmetry defect, the spectral norm of the write Jacobian I -
 * a b^T, the finite-time Lyapunov exponent of its products, log-spaced checkpoints and log-log
 * slopes. */
#include "vlastab.h"

#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

/* A sum of squares kept as scale^2 * ssq (LAPACK's dlassq), so that values near the ends of the
 * exponent range neither overflow nor vanish when squared. Each term carries a weight w: the
 * symmetry defect counts every off-diagonal pair twice. */
typedef struct {
    double scale, ssq;
    int nan, inf;
} ssq_acc;

static void acc_add(ssq_acc *a, double x, double w)
{
    double ax = fabs(x);
    if (isnan(x)) {
        a->nan = 1;
    } else if (isinf(x)) {
        a->inf = 1;
    } else if (ax > 0) {
        if (a->scale < ax) {
            double r = a->scale / ax;
            a->ssq = w + a->ssq * r * r;
            a->scale = ax;
        } else {
            double r = ax / a->scale;
            a->ssq += w * r * r;
        }
    }
}

/* NaN wins over Inf: a NaN anywhere means the norm is undefined, not merely huge. */
static double acc_norm(const ssq_acc *a)
{
    if (a->nan)
        return NAN;
    if (a->inf)
        return INFINITY;
    return a->scale * sqrt(a->ssq);
}

/* ||x - y||_F, or ||x|| when y is NULL. A plain sum of squares in (2^-900, 2^900) met no
 * overflow, and the squares it lost to underflow (below 2^-1022 each) are too small to matter
 * against it: then that division-free sum is the answer, and the scaled sum is the fallback.
 * x[i] - y[i] can overflow only when the norm itself does, so the difference needs no care. */
static double fro2(const double *x, const double *y, long n)
{
    double ss = 0;
    for (long i = 0; i < n; i++) {
        double e = y ? x[i] - y[i] : x[i];
        ss += e * e;
    }
    if (ss > 0x1p-900 && ss < 0x1p900)
        return sqrt(ss);
    ssq_acc a = {0, 0, 0, 0};
    for (long i = 0; i < n; i++)
        acc_add(&a, y ? x[i] - y[i] : x[i], 1);
    return acc_norm(&a);
}

double vla_fro(const double *x, long n) { return fro2(x, NULL, n); }

double vla_fro_diff(const double *x, const double *y, long n) { return fro2(x, y, n); }

double vla_rel_fro(const double *x, const double *y, long n)
{
    double diff = fro2(x, y, n);
    return diff == 0 ? 0 : diff / fro2(y, NULL, n);
}

double vla_sym_defect(const double *A, int d)
{
    if (d < 1)
        return NAN;
    ssq_acc num = {0, 0, 0, 0}, den = {0, 0, 0, 0};
    for (int i = 0; i < d; i++) {
        acc_add(&den, A[(long)i * d + i], 1);
        for (int j = i + 1; j < d; j++) {
            double aij = A[(long)i * d + j], aji = A[(long)j * d + i];
            double diff = aij - aji;
            acc_add(&den, aij, 1);
            acc_add(&den, aji, 1);
            /* A difference of two finite entries may overflow while the ratio to ||A|| stays
             * near 2: halve both (exact at that size) and weigh the square by 4. */
            if (isinf(diff) && isfinite(aij) && isfinite(aji))
                acc_add(&num, 0.5 * aij - 0.5 * aji, 8);
            else
                acc_add(&num, diff, 2);
        }
    }
    if (num.nan || den.nan || num.inf || den.inf)
        return acc_norm(&num) / acc_norm(&den);
    if (num.scale == 0)
        return 0; /* symmetric, including A = 0 */
    /* the ratio of the scaled forms, since either norm alone may overflow */
    return (num.scale / den.scale) * sqrt(num.ssq / den.ssq);
}

double vla_jac_norm_unit(double c)
{
    if (isnan(c))
        return NAN;
    c = c > 1 ? 1 : c < -1 ? -1 : c;
    /* every term is positive on [-1, 1]: nothing cancels */
    return sqrt((3 - 2 * c + sqrt(5 - 4 * c)) / 2);
}

/* With r = |a||b|, c = cos(a, b), s = sin(a, b), p = a.b = r c, w = 1 - p and g = r^2 s^2 =
 * |a|^2|b|^2 - p^2, the squared singular values of J on span{a, b} are the roots of
 *     x^2 - B x + C = 0,  B = 1 + w^2 + g = 2 - 2p + |a|^2|b|^2,  C = w^2,
 * and the discriminant factors without cancellation:
 *     B^2 - 4C = ((|w| - 1)^2 + g) ((|w| + 1)^2 + g) = Y^2 X^2.
 * B >= 1 > 0, so the larger root is q = -(-B - sqrt(B^2 - 4C)) / 2 = (B + XY) / 2, which is
 * ((X + Y) / 2)^2 since X^2 + Y^2 = 2B: a sum of positive terms. We return its square root
 * (X + Y) / 2 directly: X and Y are hypot()s, so r may be as large as the norm itself without
 * squaring into overflow. g is formed as r^2 s^2 with s from the perpendicular part of the unit
 * vectors, not as a difference of squares (which would leave an error near sqrt(u) r). */
double vla_jac_norm(const double *a, const double *b, int d)
{
    if (d < 1)
        return NAN;
    double na = vla_fro(a, d), nb = vla_fro(b, d);
    if (isnan(na) || isnan(nb))
        return NAN;
    if (isinf(na) || isinf(nb))
        return (na == 0 || nb == 0) ? NAN : INFINITY;
    if (na == 0 || nb == 0)
        return 1;
    if (d == 1) /* no orthogonal complement: the only singular value is |1 - ab| */
        return fabs(1 - a[0] * b[0]);

    /* unit vectors: by the reciprocal, unless it over- or underflows (norms beyond 2^+-1022) */
    double ia = 1 / na, ib = 1 / nb;
    int mul = isnormal(ia) && isnormal(ib);
    double c = 0;
    for (int i = 0; i < d; i++)
        c += mul ? (a[i] * ia) * (b[i] * ib) : (a[i] / na) * (b[i] / nb);
    c = c > 1 ? 1 : c < -1 ? -1 : c;
    double ss = 0;
    for (int i = 0; i < d; i++) {
        double e = mul ? b[i] * ib - c * (a[i] * ia) : b[i] / nb - c * (a[i] / na);
        ss += e * e;
    }
    /* squares lost to underflow here are below 2^-1022: then |c| ~ 1 and r s is nothing beside r */
    double s = ss < 1 ? sqrt(ss) : 1;

    double r = na * nb;
    if (isinf(r)) /* the norm is at least r - 1 */
        return INFINITY;
    double p = r * c, rs = r * s;
    /* |w| + 1 and |w| - 1 straight from p, so that neither loses p's low bits to 1 - p */
    double wp1 = p <= 1 ? 2 - p : p;
    double wm1 = p <= 1 ? -p : p - 2;
    double X = hypot(wp1, rs), Y = hypot(wm1, rs);
    double sigma = 0.5 * X + 0.5 * Y;
    /* the other d - 2 singular values are 1 */
    return sigma > 1 ? sigma : 1;
}

/* splitmix64: a tiny, well-mixed generator for the tracker's starting vector. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int vla_lyap_init(vla_lyap *l, int d, uint64_t seed)
{
    if (!l)
        return VLA_EINVAL;
    l->x = NULL;
    l->d = 0;
    l->log_sum = 0;
    l->t = 0;
    if (d < 1)
        return VLA_ERANGE;
    l->x = malloc(sizeof(double) * (size_t)d);
    if (!l->x)
        return VLA_ENOMEM;
    l->d = d;
    uint64_t st = seed;
    /* uniform in [-1, 1): generic enough to have a part along every direction */
    for (int i = 0; i < d; i++)
        l->x[i] = (double)(splitmix64(&st) >> 11) * 0x1p-52 - 1;
    double n = vla_fro(l->x, d);
    if (n == 0) {
        l->x[0] = 1;
        n = 1;
    }
    for (int i = 0; i < d; i++)
        l->x[i] /= n;
    return VLA_OK;
}

void vla_lyap_step(vla_lyap *l, const double *kp, const double *alpha)
{
    int d = l->d;
    double *x = l->x;
    double xk = 0;
    for (int i = 0; i < d; i++)
        xk += x[i] * kp[i];
    double ss = 0;
    for (int i = 0; i < d; i++) {
        x[i] -= xk * alpha[i];
        ss += x[i] * x[i];
    }
    /* the plain sum serves every ordinary step; rescale only when it left the safe range */
    double n = (ss > 0x1p-900 && ss < 0x1p900) ? sqrt(ss) : vla_fro(x, d);
    l->t++;
    if (n == 0) {
        /* the product annihilated x (J singular along it): the exponent is -inf from here on */
        l->log_sum = -INFINITY;
        return;
    }
    l->log_sum += log(n);
    if (isfinite(n))
        for (int i = 0; i < d; i++)
            x[i] /= n;
}

/* t = 0 has no exponent: NaN. */
double vla_lyap_exponent(const vla_lyap *l)
{
    return l->t > 0 ? l->log_sum / (double)l->t : NAN;
}

void vla_lyap_free(vla_lyap *l)
{
    if (!l)
        return;
    free(l->x);
    l->x = NULL;
}

/* round(10^(i / per_decade)) for i = 0, 1, ..., duplicates dropped, then T itself. */
long vla_checkpoints(long T, int per_decade, long *out, long max)
{
    if (per_decade < 1)
        return VLA_EINVAL;
    long n = 0, last = 0;
    for (long i = 0;; i++) {
        double v = round(pow(10.0, (double)i / per_decade));
        if (v >= (double)T)
            break;
        long c = (long)v;
        if (c <= last)
            continue;
        if (n < max)
            out[n] = c;
        n++;
        last = c;
    }
    if (T >= 1) {
        if (n < max)
            out[n] = T;
        n++;
    }
    return n;
}

long vla_checkpoints_form(const vla_config *cfg, long *cks, long n)
{
    long C = vla_form_pending(cfg, 1) ? cfg->chunk : 1, k = 0;
    for (long i = 0; i < n; i++) {
        long t = cks[i] / C * C;
        if (t > 0 && (k == 0 || t > cks[k - 1]))
            cks[k++] = t;
    }
    return k;
}

int vla_loglog_fit(const double *x, const double *y, long n, double *slope, double *se)
{
    double lx[1024], ly[1024];
    long m = 0;
    for (long i = 0; i < n && m < 1024; i++) /* the points both logs exist for */
        if (x[i] > 0 && y[i] > 0 && isfinite(x[i]) && isfinite(y[i])) {
            lx[m] = log(x[i]);
            ly[m] = log(y[i]);
            m++;
        }
    double c0, c1, c00, c01, c11, sumsq;
    *slope = *se = NAN;
    /* GSL centres the sums on running means: the raw normal equations cancel badly when log x
     * is large; a constant log x (every x the same) has no slope */
    if (m < 2 || gsl_fit_linear(lx, 1, ly, 1, (size_t)m, &c0, &c1, &c00, &c01, &c11, &sumsq) ||
        !isfinite(c1))
        return VLA_ERANGE;
    *slope = c1;
    *se = m > 2 ? sqrt(c11) : NAN; /* two points fit exactly: no error estimate */
    return VLA_OK;
}

double vla_median(double *x, long n)
{
    if (n < 1)
        return NAN;
    gsl_sort(x, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
}

double vla_loglog_slope(const double *x, const double *y, long n)
{
    double slope, se;
    vla_loglog_fit(x, y, n, &slope, &se);
    return slope;
}
