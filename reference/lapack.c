/* lapack.c: the LAPACKE references of docs/math.md section 6: the explicit M_t = A_t^-1 accumulated
 * in double-double, its inverse (dpotrf + dpotri), eigenvalues (dsyevr), singular values (dgesvd)
 * and the rls closed form (dposv). The yardsticks the recurrences are measured against. */
#include "vlaref.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS (which Debian's libblas/liblapack may resolve to) splits work over threads in ways that
 * change the last bits of dsyevr and dpotri: one thread keeps a reference the same whatever the
 * machine's thread count. A weak symbol: other BLAS builds have no such function. */
extern void openblas_set_num_threads(int) __attribute__((weak));
static void one_blas_thread(void)
{
    static int done;
    if (!done && openblas_set_num_threads) {
        openblas_set_num_threads(1);
        done = 1;
    }
}

/* ---- error-free transformations. They rely on every operation being rounded as written: the
 * Makefile's -ffp-contract=off keeps the compiler from fusing a * b + c into one fma. ---- */

static inline void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b, bv = x - a;
    *s = x;
    *e = (a - (x - bv)) + (b - bv);
}

/* only for |a| >= |b| (or a = 0) */
static inline void fast_two_sum(double a, double b, double *s, double *e)
{
    double x = a + b;
    *s = x;
    *e = b - (x - a);
}

/* (hi, lo) += (ph, pl): the "accurate" double-double addition (two TwoSums, QD's ieee_add), whose
 * relative error stays near u^2 even when the terms cancel, which the cheap one-TwoSum version
 * does not guarantee. Off-diagonal Gram entries of signed vectors do cancel. */
static inline void dd_add(double *hi, double *lo, double ph, double pl)
{
    double s1, s2, t1, t2;
    if (!isfinite(ph) || !isfinite(*hi)) { /* Inf - Inf in the EFTs would turn an Inf into NaN */
        *hi += ph;
        *lo = 0;
        return;
    }
    two_sum(*hi, ph, &s1, &s2);
    two_sum(*lo, pl, &t1, &t2);
    s2 += t1;
    fast_two_sum(s1, s2, &s1, &s2);
    s2 += t2;
    fast_two_sum(s1, s2, hi, lo);
}

/* (hi, lo) += a b, the product exact as p + e by one fma */
static inline void dd_add_prod(double *hi, double *lo, double a, double b)
{
    double p = a * b;
    dd_add(hi, lo, p, fma(a, b, -p));
}

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static int lapack_status(lapack_int info)
{
    if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
        return VLA_ENOMEM;
    return info < 0 ? VLA_EINVAL : VLA_OK;
}

#define D_OK(d) ((d) >= VLA_D_MIN && (d) <= VLA_D_MAX)

/* ---- the Gram matrix. Only the upper triangle (i <= j) is accumulated: M is symmetric by
 * construction, and the mirror in vref_gram_get makes it exactly so. ---- */

int vref_gram_init(vref_gram *g, int d, double lambda0)
{
    if (!g)
        return VLA_EINVAL;
    g->d = 0;
    g->hi = g->lo = NULL;
    if (!D_OK(d))
        return VLA_ERANGE;
    if (!isfinite(lambda0))
        return VLA_ENONFINITE;
    if (lambda0 < 0)
        return VLA_ERANGE;
    g->hi = calloc((size_t)d * d, sizeof(double));
    g->lo = calloc((size_t)d * d, sizeof(double));
    if (!g->hi || !g->lo) {
        vref_gram_free(g);
        return VLA_ENOMEM;
    }
    g->d = d;
    for (int i = 0; i < d; i++)
        g->hi[(size_t)i * d + i] = lambda0;
    return VLA_OK;
}

void vref_gram_add(vref_gram *g, const double *u)
{
    if (!g || !g->hi || !u)
        return;
    int d = g->d;
    for (int i = 0; i < d; i++)
        for (int j = i; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            dd_add_prod(&g->hi[ij], &g->lo[ij], u[i], u[j]);
        }
}

void vref_gram_get(const vref_gram *g, double *M)
{
    if (!g || !g->hi || !M)
        return;
    int d = g->d;
    for (int i = 0; i < d; i++)
        for (int j = i; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            /* (hi, lo) is normalized, so hi + lo is the one correct rounding of the pair */
            double m = g->hi[ij] + g->lo[ij];
            M[ij] = M[(size_t)j * d + i] = isfinite(g->hi[ij]) ? m : g->hi[ij];
        }
}

void vref_gram_free(vref_gram *g)
{
    if (!g)
        return;
    free(g->hi);
    free(g->lo);
    g->hi = g->lo = NULL;
    g->d = 0;
}

/* ---- dense references ---- */

int vref_spd_inverse(const double *M, int d, double *Ainv)
{
    one_blas_thread();
    if (!M || !Ainv)
        return VLA_EINVAL;
    if (!D_OK(d))
        return VLA_ERANGE;
    size_t n = (size_t)d * d;
    if (!all_finite(M, n))
        return VLA_ENONFINITE;
    double *a = malloc(n * sizeof *a); /* Ainv is left untouched on failure, and may alias M */
    if (!a)
        return VLA_ENOMEM;
    memcpy(a, M, n * sizeof *a);
    /* row-major upper = column-major lower: either way one triangle, which we mirror below */
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', d, a, d);
    if (info == 0)
        info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', d, a, d);
    int r = info > 0 ? VLA_ERANGE : lapack_status(info); /* > 0: not positive definite */
    if (r == VLA_OK) {
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++)
                a[(size_t)j * d + i] = a[(size_t)i * d + j];
        memcpy(Ainv, a, n * sizeof *a);
    }
    free(a);
    return r;
}

int vref_sym_eig(const double *A, int d, double *lambda)
{
    one_blas_thread();
    if (!A || !lambda)
        return VLA_EINVAL;
    if (!D_OK(d))
        return VLA_ERANGE;
    size_t n = (size_t)d * d;
    if (!all_finite(A, n))
        return VLA_ENONFINITE;
    double *a = malloc(n * sizeof *a), *w = malloc((size_t)d * sizeof *w);
    lapack_int *isuppz = malloc(2 * (size_t)d * sizeof *isuppz);
    int r = VLA_ENOMEM;
    if (a && w && isuppz) {
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++) {
                double x = A[(size_t)i * d + j], y = A[(size_t)j * d + i], s = x + y;
                /* halving after the sum is exact unless it overflowed or went subnormal */
                a[(size_t)i * d + j] = a[(size_t)j * d + i] =
                    (isinf(s) || fabs(s) < 0x1p-1021) ? 0.5 * x + 0.5 * y : 0.5 * s;
            }
        lapack_int m = 0;
        lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'A', 'U', d, a, d, 0, 0, 0, 0,
                                         0 /* abstol: LAPACK's default, full accuracy */, &m, w,
                                         NULL, 1, isuppz);
        r = info > 0 ? VLA_ERANGE : lapack_status(info); /* > 0: internal failure */
        if (r == VLA_OK && m != d)
            r = VLA_ERANGE;
        if (r == VLA_OK)
            memcpy(lambda, w, (size_t)d * sizeof *w);
    }
    free(a);
    free(w);
    free(isuppz);
    return r;
}

/* m, n >= 1 and m n <= 2^24: any matrix of the project (d x d, dv x d, t x d for modest t). The
 * call that LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', ...) makes, made directly: X transposed
 * into column-major order and dgesvd with the workspace size that its query gives for m x n (the
 * size picks dgebrd's blocking, so the same size gives the same bits); w keeps both buffers and
 * the size, queried again only when the shape changes. */
int vref_svd_in(vref_svd_ws *w, const double *X, int m, int n, double *s)
{
    one_blas_thread();
    if (!w || !X || !s)
        return VLA_EINVAL;
    if (m < 1 || n < 1 || (long long)m * n > (1LL << 24))
        return VLA_ERANGE;
    size_t mn = (size_t)m * n;
    if (!all_finite(X, mn))
        return VLA_ENONFINITE;
    const char job = 'N';
    const lapack_int lm = m, ln = n, one = 1;
    lapack_int info = 0;
    if (w->m != m || w->n != n) {
        double q = 0, none = 0;
        const lapack_int query = -1;
        LAPACK_dgesvd(&job, &job, &lm, &ln, &none, &lm, s, NULL, &one, NULL, &one, &q, &query,
                      &info);
        if (info)
            return lapack_status(info);
        w->m = w->n = 0; /* until both buffers fit m x n */
        double *a = realloc(w->a, mn * sizeof *a);
        if (a)
            w->a = a;
        double *work = a ? realloc(w->work, ((size_t)q > 1 ? (size_t)q : 1) * sizeof *work) : NULL;
        if (!work)
            return VLA_ENOMEM;
        w->work = work;
        w->lwork = (long)q;
        w->m = m;
        w->n = n;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            w->a[(size_t)j * m + i] = X[(size_t)i * n + j];
    const lapack_int lwork = (lapack_int)w->lwork;
    LAPACK_dgesvd(&job, &job, &lm, &ln, w->a, &lm, s, NULL, &one, NULL, &one, w->work, &lwork,
                  &info);
    return info > 0 ? VLA_ERANGE : lapack_status(info); /* > 0: the QR sweeps did not converge */
}

void vref_svd_free(vref_svd_ws *w)
{
    if (!w)
        return;
    free(w->a);
    free(w->work);
    *w = (vref_svd_ws){0};
}

int vref_svd(const double *X, int m, int n, double *s)
{
    vref_svd_ws w = {0};
    int r = vref_svd_in(&w, X, m, n, s);
    vref_svd_free(&w);
    return r;
}

/* The largest singular value of the m x n X without an SVD: X scaled by a power of two (exact)
 * so that its largest entry is in [1, 2), the Gram matrix X^T X formed in binary64 (its upper
 * triangle, mirrored: exactly symmetric), its largest eigenvalue by dsyevr (range 'I', that one
 * eigenvalue only), the square root scaled back. The Gram's rounding moves the eigenvalue by at
 * most gamma_m || |X| ||_2^2 <= m gamma_m ||X||_2^2, so the norm by at most about m^2 u / 2
 * relative (observed: a few u); an independent route beside dgesvd's. NaN in X: *out NaN and
 * VLA_ENONFINITE; Inf: *out Inf and VLA_ENONFINITE. */
int vref_norm2(const double *X, int m, int n, double *out)
{
    one_blas_thread();
    if (!X || !out)
        return VLA_EINVAL;
    if (m < 1 || n < 1 || (long long)m * n > (1LL << 24) || n > 4096)
        return VLA_ERANGE;
    size_t mn = (size_t)m * n;
    double big = 0;
    int nan = 0;
    for (size_t i = 0; i < mn; i++) {
        nan |= isnan(X[i]);
        big = fabs(X[i]) > big ? fabs(X[i]) : big;
    }
    if (nan || isinf(big)) {
        *out = nan ? NAN : INFINITY;
        return VLA_ENONFINITE;
    }
    if (big == 0) {
        *out = 0;
        return VLA_OK;
    }
    int ex = ilogb(big); /* X 2^-ex: entries below 2, exact unless they fall to subnormals */
    double *G = malloc((size_t)n * n * sizeof *G), *w = malloc((size_t)n * sizeof *w),
           *Y = malloc(mn * sizeof *Y);
    lapack_int *isuppz = malloc(2 * (size_t)n * sizeof *isuppz);
    int r = VLA_ENOMEM;
    if (G && w && Y && isuppz) {
        for (size_t i = 0; i < mn; i++)
            Y[i] = scalbn(X[i], -ex);
        memset(G, 0, (size_t)n * n * sizeof *G);
        for (int k = 0; k < m; k++) { /* row by row: G += y_k^T y_k, the upper triangle */
            const double *y = Y + (size_t)k * n;
            for (int i = 0; i < n; i++)
                for (int j = i; j < n; j++)
                    G[(size_t)i * n + j] += y[i] * y[j];
        }
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                G[(size_t)j * n + i] = G[(size_t)i * n + j];
        lapack_int found = 0;
        lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'I', 'U', n, G, n, 0, 0, n, n, 0,
                                         &found, w, NULL, 1, isuppz);
        r = info > 0 ? VLA_ERANGE : lapack_status(info);
        if (r == VLA_OK && found != 1)
            r = VLA_ERANGE;
        if (r == VLA_OK)
            *out = scalbn(sqrt(w[0] > 0 ? w[0] : 0), ex);
    }
    free(G);
    free(w);
    free(Y);
    free(isuppz);
    return r;
}

/* The spectral radius of the n x n X: the largest modulus of its eigenvalues (dgeev, eigenvalues
 * only; complex pairs by hypot). */
int vref_spectral_radius(const double *X, int n, double *rho)
{
    one_blas_thread();
    if (!X || !rho)
        return VLA_EINVAL;
    if (n < 1 || n > 4096)
        return VLA_ERANGE;
    size_t nn = (size_t)n * n;
    if (!all_finite(X, nn))
        return VLA_ENONFINITE;
    double *a = malloc(nn * sizeof *a), *wr = malloc((size_t)n * sizeof *wr),
           *wi = malloc((size_t)n * sizeof *wi);
    int r = VLA_ENOMEM;
    if (a && wr && wi) {
        memcpy(a, X, nn * sizeof *a);
        lapack_int info =
            LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', n, a, n, wr, wi, NULL, 1, NULL, 1);
        r = info > 0 ? VLA_ERANGE : lapack_status(info); /* > 0: the QR algorithm failed */
        if (r == VLA_OK) {
            double m = 0;
            for (int i = 0; i < n; i++) {
                double v = hypot(wr[i], wi[i]);
                m = v > m ? v : m;
            }
            *rho = m;
        }
    }
    free(a);
    free(wr);
    free(wi);
    return r;
}

/* S (dv x d) = X^T where (K^T K + lambda0 I) X = K^T V. Both K^T K and K^T V are accumulated in
 * double-double and rounded once, so that the only errors left are the solve's (~ d cond u). */
int vref_rls_closed(const double *K, const double *V, int t, int d, int dv, double lambda0,
                    double *S)
{
    one_blas_thread();
    if (!S || (t > 0 && (!K || !V)))
        return VLA_EINVAL;
    if (t < 0 || !D_OK(d) || !D_OK(dv))
        return VLA_ERANGE;
    if (!isfinite(lambda0) || (t > 0 && (!all_finite(K, (size_t)t * d) ||
                                         !all_finite(V, (size_t)t * dv))))
        return VLA_ENONFINITE;
    if (lambda0 < 0)
        return VLA_ERANGE;
    vref_gram g;
    int r = vref_gram_init(&g, d, lambda0);
    if (r)
        return r;
    size_t nb = (size_t)d * dv;
    double *G = malloc((size_t)d * d * sizeof *G), *bhi = calloc(nb, sizeof *bhi),
           *blo = calloc(nb, sizeof *blo);
    r = VLA_ENOMEM;
    if (G && bhi && blo) {
        for (int s = 0; s < t; s++) {
            const double *k = K + (size_t)s * d, *v = V + (size_t)s * dv;
            vref_gram_add(&g, k);
            for (int i = 0; i < d; i++)
                for (int j = 0; j < dv; j++)
                    dd_add_prod(&bhi[(size_t)i * dv + j], &blo[(size_t)i * dv + j], k[i], v[j]);
        }
        vref_gram_get(&g, G);
        for (size_t i = 0; i < nb; i++)
            bhi[i] += blo[i];
        if (!all_finite(G, (size_t)d * d) || !all_finite(bhi, nb)) { /* K or V overflowed */
            r = VLA_ERANGE;
            goto out;
        }
        /* B (d x dv, row-major, ldb = dv) is overwritten by X */
        lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', d, dv, G, d, bhi, dv);
        r = info > 0 ? VLA_ERANGE : lapack_status(info); /* > 0: G not positive definite */
        if (r == VLA_OK)
            for (int i = 0; i < dv; i++)
                for (int j = 0; j < d; j++)
                    S[(size_t)i * d + j] = bhi[(size_t)j * dv + i];
    }
out:
    free(G);
    free(bhi);
    free(blo);
    vref_gram_free(&g);
    return r;
}
