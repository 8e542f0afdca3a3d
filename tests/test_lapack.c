/* test_lapack.c: the references checked against hand-solvable cases and each other, then lib/'s
 * primitives, the rls model and the Jacobian norm checked against them; every tolerance is a
 * bound derived from the unit roundoff u, d, t and cond (VLA_TEST_VERBOSE=1 prints each measured
 * error beside its bound). Last, the MPFR emulation against the hardware, bit for bit. */
#include "check.h"
#include "vlaref.h"

#include <float.h>
#include <lapacke.h> /* the call vref_svd_in makes as LAPACKE makes it */
#undef I /* complex.h's, which lapacke.h includes: the tests name a matrix I */
#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const double U64 = 0x1p-53, U32 = 0x1p-24;

/* ---- a small deterministic generator (splitmix64): tests must not depend on lib/'s streams */
typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* uniform in (0, 1): never 0, so that log() in rng_gauss is finite */
static double rng_unif(rng_t *r) { return ((double)(rng_next(r) >> 11) + 0.5) * 0x1p-53; }
static double rng_gauss(rng_t *r)
{
    return sqrt(-2 * log(rng_unif(r))) * cos(6.283185307179586 * rng_unif(r));
}

/* ---- reporting: the measured value and its bound, always on failure, on request otherwise ---- */
static int verbose(void) { return getenv("VLA_TEST_VERBOSE") != NULL; }

#define CHECK_BOUND(err, bound, ...)                                                               \
    do {                                                                                           \
        char w_[160];                                                                              \
        double e_ = (err), b_ = (bound);                                                           \
        snprintf(w_, sizeof w_, __VA_ARGS__);                                                      \
        if (verbose())                                                                             \
            printf("    %-56s %9.3g <= %9.3g  (%.1e of it)\n", w_, e_, b_, b_ > 0 ? e_ / b_ : 0); \
        CHECK_MSG(e_ <= b_, "%s: measured %.3g (%a) > bound %.3g", w_, e_, e_, b_);               \
    } while (0)

/* ---- small dense helpers (row-major) ---- */
static void matmul(double *C, const double *A, const double *B, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += A[(size_t)i * k + l] * B[(size_t)l * n + j];
            C[(size_t)i * n + j] = s;
        }
}

static double rel_fro(const double *x, const double *ref, long n)
{
    return vla_fro_diff(x, ref, n) / vla_fro(ref, n);
}

/* cond_2 of a symmetric positive definite matrix from its dsyevr eigenvalues (Inf if not PD) */
static double spd_cond(const double *M, int d)
{
    double *w = malloc(sizeof(double) * d);
    double c = INFINITY;
    if (vref_sym_eig(M, d, w) == 0 && w[0] > 0)
        c = w[d - 1] / w[0];
    free(w);
    return c;
}

/* keys with a spread of scales (1 down to 10^-spread along the axes), so that M_t has a
 * condition number worth the name without being pathological */
static void aniso_vec(rng_t *r, double *u, int d, double spread)
{
    for (int j = 0; j < d; j++)
        u[j] = rng_gauss(r) * pow(10.0, -spread * j / (d > 1 ? d - 1 : 1));
}

/* =============================== the references themselves =============================== */

/* Cholesky inversion: forward error ||X - M^-1|| <= c d cond(M) u ||M^-1|| (Higham, ASNA 14.3),
 * c = 4 covering dpotrf's (d+1)u, the triangular inverse's d u and the product's d u. The residual
 * ||X M - I||_2 obeys the same bound, and ||.||_F <= sqrt(d) ||.||_2. */
static void check_inverse(const char *name, const double *M, const double *inv_exact, int d)
{
    double X[9], R[9], I[9] = {0};
    for (int i = 0; i < d; i++)
        I[i * d + i] = 1;
    CHECK_EQ_INT(vref_spd_inverse(M, d, X), 0);
    double cond = spd_cond(M, d), bound = 4.0 * d * cond * U64;
    CHECK_BOUND(rel_fro(X, inv_exact, d * d), bound, "%s ||X - inv||/||inv|| (cond %.3g)", name,
                cond);
    matmul(R, X, M, d, d, d);
    CHECK_BOUND(vla_fro_diff(R, I, d * d), sqrt(d) * bound, "%s ||X M - I||_F", name);
    for (int i = 0; i < d; i++) /* both triangles, and exactly symmetric */
        for (int j = 0; j < d; j++)
            CHECK_MSG(X[i * d + j] == X[j * d + i], "%s X[%d][%d] = %a != X[%d][%d] = %a", name,
                      i, j, X[i * d + j], j, i, X[j * d + i]);
}

TEST(lapack_spd_inverse_hand)
{
    /* det 8, the inverse exact in binary: [3 -2; -2 4] / 8 */
    const double M2[4] = {4, 2, 2, 3}, inv2[4] = {0.375, -0.25, -0.25, 0.5};
    check_inverse("2x2", M2, inv2, 2);
    /* det 18; cofactors [5 -2 1; -2 8 -4; 1 -4 11], each /18 correctly rounded */
    const double M3[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2};
    const double inv3[9] = {5.0 / 18, -2.0 / 18, 1.0 / 18,  -2.0 / 18, 8.0 / 18,
                            -4.0 / 18, 1.0 / 18, -4.0 / 18, 11.0 / 18};
    check_inverse("3x3", M3, inv3, 3);

    double X[9], nan3[9] = {4, 1, 0, 1, NAN, 1, 0, 1, 2};
    const double indef[4] = {1, 2, 2, 1}; /* eigenvalues 3 and -1 */
    CHECK_EQ_INT(vref_spd_inverse(indef, 2, X), VLA_ERANGE);
    CHECK_EQ_INT(vref_spd_inverse(nan3, 3, X), VLA_ENONFINITE);
    CHECK_EQ_INT(vref_spd_inverse(M2, 0, X), VLA_ERANGE);
    CHECK_EQ_INT(vref_spd_inverse(M2, VLA_D_MAX + 1, X), VLA_ERANGE);
    CHECK_EQ_INT(vref_spd_inverse(NULL, 2, X), VLA_EINVAL);
}

TEST(lapack_eig_svd_hand)
{
    /* the symmetric part of [2 2; 0 2] is [2 1; 1 2]: eigenvalues 1, 3 (ascending) */
    const double A[4] = {2, 2, 0, 2};
    double w[3], s[3];
    CHECK_EQ_INT(vref_sym_eig(A, 2, w), 0);
    /* dsyevr: |w_i - lambda_i| <= c d u ||A||_2, c = 4 */
    CHECK_BOUND(fabs(w[0] - 1) + fabs(w[1] - 3), 4 * 2 * 3 * U64, "eig [2 1;1 2] = {1, 3}");
    /* [3 0; 4 0] has singular values 5 and 0; the 2 x 3 [1 1 0; 0 0 -2] has 2 and sqrt 2
     * (Y Y^T = diag(2, 4)), and read column-major it would be another matrix */
    const double X[4] = {3, 0, 4, 0}, Y[6] = {1, 1, 0, 0, 0, -2};
    CHECK_EQ_INT(vref_svd(X, 2, 2, s), 0);
    CHECK_BOUND(fabs(s[0] - 5) + fabs(s[1]), 4 * 2 * 5 * U64, "svd [3 0;4 0] = {5, 0}");
    CHECK_EQ_INT(vref_svd(Y, 2, 3, s), 0);
    CHECK_BOUND(fabs(s[0] - 2) + fabs(s[1] - sqrt(2)), 4 * 3 * 2 * U64, "svd 2x3 = {2, sqrt 2}");
    const double bad[4] = {1, INFINITY, 0, 1};
    CHECK_EQ_INT(vref_sym_eig(bad, 2, w), VLA_ENONFINITE);
    CHECK_EQ_INT(vref_svd(bad, 2, 2, s), VLA_ENONFINITE);
    CHECK_EQ_INT(vref_svd(X, 0, 2, s), VLA_ERANGE);
    CHECK_EQ_INT(vref_sym_eig(A, 300, w), VLA_ERANGE);
}

/* vref_svd_in calls dgesvd as LAPACKE_dgesvd's row-major call does, with its own scratch: the
 * same bits as LAPACKE_dgesvd, with one scratch reused over shapes, back and forth (200 x 200:
 * dgebrd's blocked path, which its workspace size picks) */
TEST(lapack_svd_in_lapacke_bits)
{
    static const int shape[][2] = {{200, 200}, {3, 5}, {200, 200}, {150, 90}, {90, 150}, {1, 1},
                                   {200, 200}};
    vref_svd_ws w = {0};
    double *X = malloc(200 * 200 * sizeof *X), *a = malloc(200 * 200 * sizeof *a),
           *s = malloc(200 * sizeof *s), *want = malloc(200 * sizeof *want),
           *superb = malloc(200 * sizeof *superb);
    CHECK(X && a && s && want && superb);
    uint64_t z = 12345;
    for (size_t k = 0; X && a && s && want && superb && k < sizeof shape / sizeof shape[0]; k++) {
        const int m = shape[k][0], n = shape[k][1], mn = m < n ? m : n;
        for (int i = 0; i < m * n; i++) { /* splitmix64 to [-1, 1) */
            uint64_t r = (z += 0x9e3779b97f4a7c15u);
            r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9u;
            r = (r ^ (r >> 27)) * 0x94d049bb133111ebu;
            X[i] = (double)((r ^ (r >> 31)) >> 11) / 4503599627370496.0 - 1;
        }
        memcpy(a, X, (size_t)m * n * sizeof *a);
        CHECK_EQ_INT(LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', m, n, a, n, want, NULL, 1, NULL, 1,
                                    superb), 0);
        CHECK_EQ_INT(vref_svd_in(&w, X, m, n, s), 0);
        CHECK_MSG(!memcmp(s, want, (size_t)mn * sizeof *s), "%d x %d (shape %zu): s[0] %.17g, "
                  "LAPACKE's %.17g; s[%d] %.17g, LAPACKE's %.17g", m, n, k, s[0], want[0], mn - 1,
                  s[mn - 1], want[mn - 1]);
        CHECK_EQ_INT(vref_svd(X, m, n, s), 0);
        CHECK_MSG(!memcmp(s, want, (size_t)mn * sizeof *s), "vref_svd %d x %d", m, n);
    }
    vref_svd_free(&w);
    CHECK(w.a == NULL && w.work == NULL && w.m == 0);
    free(X);
    free(a);
    free(s);
    free(want);
    free(superb);
}

/* The Gram matrix must be the exact sum rounded once. An entry of a double-double sum is off the
 * exact value by at most u |exact| (the final rounding) plus the accumulated double-double error,
 * under 4 u^2 per term relative to sum |u_i u_j| (Li et al., accurate addition). A plain binary64
 * sum errs by about sqrt(t) u sum |u_i u_j|, orders above that: this test tells the two apart. */
TEST(lapack_gram_exact)
{
    enum { D = 6, T = 200 };
    rng_t r = {11};
    double u[T][D], M[D * D];
    vref_gram g;
    CHECK_EQ_INT(vref_gram_init(&g, D, 0.375), 0);
    for (int s = 0; s < T; s++) {
        for (int j = 0; j < D; j++)
            u[s][j] = rng_gauss(&r);
        vref_gram_add(&g, u[s]);
    }
    vref_gram_get(&g, M);
    mpfr_t ex, p;
    /* 1024 bits: every partial sum is exact, the products spanning far fewer bits than that */
    mpfr_inits2(1024, ex, p, (mpfr_ptr)0);
    double worst = 0;
    int rounded = 0;
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) {
            double abs_sum = i == j ? 0.375 : 0;
            mpfr_set_d(ex, i == j ? 0.375 : 0, MPFR_RNDN);
            for (int s = 0; s < T; s++) {
                mpfr_set_d(p, u[s][i], MPFR_RNDN);
                mpfr_mul_d(p, p, u[s][j], MPFR_RNDN);
                mpfr_add(ex, ex, p, MPFR_RNDN);
                abs_sum += fabs(u[s][i] * u[s][j]);
            }
            double e = mpfr_get_d(ex, MPFR_RNDN);
            mpfr_sub_d(p, ex, M[i * D + j], MPFR_RNDN);
            double err = fabs(mpfr_get_d(p, MPFR_RNDN));
            double bound = U64 * fabs(e) + 4.0 * T * U64 * U64 * abs_sum;
            rounded += M[i * D + j] == e;
            if (err / bound > worst)
                worst = err / bound;
            CHECK_MSG(err <= bound, "M[%d][%d] = %a, exact %a: err %.3g > bound %.3g", i, j,
                      M[i * D + j], e, err, bound);
        }
    CHECK_BOUND(worst, 1.0, "gram: worst err/bound over %d entries (%d of them = RN(exact))",
                D * D, rounded);
    mpfr_clears(ex, p, (mpfr_ptr)0);
    vref_gram_free(&g);

    /* a cancellation the naive sum loses entirely: (1 + 2^-30)^2 - (1 + 2^-29) = 2^-60 */
    const double a[2] = {1 + 0x1p-30, 1 + 0x1p-30}, b[2] = {1, -(1 + 0x1p-29)};
    CHECK_EQ_INT(vref_gram_init(&g, 2, 0), 0);
    vref_gram_add(&g, a);
    vref_gram_add(&g, b);
    vref_gram_get(&g, M);
    CHECK_MSG(M[1] == 0x1p-60 && M[2] == 0x1p-60, "M[0][1] = %a, want 0x1p-60", M[1]);
    vref_gram_free(&g);
    CHECK_EQ_INT(vref_gram_init(&g, 0, 1), VLA_ERANGE);
    CHECK_EQ_INT(vref_gram_init(&g, 2, NAN), VLA_ENONFINITE);
    CHECK_EQ_INT(vref_gram_init(&g, 2, -1), VLA_ERANGE);
}

/* ========================= lib/'s primitives against the references ========================= */

/* Sherman-Morrison error model: each step makes a local error of relative size <= c d u (the
 * matvec z = A u of length d, then a few roundings per entry), and the error made at step s
 * reaches A_t through A_t M_s on either side (the product of the steps' I - g u^T), whose norm is
 * at most sqrt(cond(M_t)) since M_s <= M_t; t steps add up to c d t cond(M_t) u, c = 4. The
 * reference adds its own 4 d cond u, inside that. This is the first-order model, not a rigorous
 * worst case: it takes each local error relative to ||A_t|| rather than ||A_s|| (a factor up to
 * ||A_0|| / ||A_t||, below 10^2 in these runs); the measured errors sit 10^5 below it. */
static void sm_chain(int d, int T, uint64_t seed)
{
    const double lambda0 = 0x1p-4; /* A_0 = 16 I exactly, in both formats */
    double *A = calloc((size_t)d * d, sizeof *A), *As = calloc((size_t)d * d, sizeof *As);
    float *Af = calloc((size_t)d * d, sizeof *Af);
    double *M = malloc(sizeof(double) * d * d), *Ref = malloc(sizeof(double) * d * d);
    double *Afd = malloc(sizeof(double) * d * d), *u = malloc(sizeof(double) * d);
    float *uf = malloc(sizeof(float) * d);
    rng_t r = {seed};
    vref_gram g;
    long fb = 0;
    CHECK_EQ_INT(vref_gram_init(&g, d, lambda0), 0);
    for (int i = 0; i < d; i++)
        A[i * d + i] = As[i * d + i] = Af[i * d + i] = (float)(1 / lambda0);
    for (int s = 0; s < T; s++) {
        aniso_vec(&r, u, d, 1.0);
        for (int j = 0; j < d; j++) { /* one set of inputs, exact in binary32, for all three */
            uf[j] = (float)u[j];
            u[j] = uf[j];
        }
        vref_gram_add(&g, u);
        CHECK_EQ_INT(vla_sm_update_f64(A, u, d, 0, &fb), 0);
        CHECK_EQ_INT(vla_sm_sym_update_f64(As, u, d, 0, &fb), 0);
        CHECK_EQ_INT(vla_sm_update_f32(Af, uf, d, 0, &fb), 0);
    }
    vref_gram_get(&g, M);
    CHECK_EQ_INT(vref_spd_inverse(M, d, Ref), 0);
    double cond = spd_cond(M, d);
    for (int i = 0; i < d * d; i++)
        Afd[i] = Af[i];
    CHECK_BOUND(rel_fro(A, Ref, (long)d * d), 4.0 * d * T * cond * U64,
                "sm f64 d=%d t=%d cond(M_t)=%.3g", d, T, cond);
    CHECK_BOUND(rel_fro(As, Ref, (long)d * d), 4.0 * d * T * cond * U64, "sm-sym f64 d=%d t=%d", d,
                T);
    CHECK_BOUND(vla_sym_defect(As, d), 0, "sm-sym f64 symmetry defect");
    CHECK_BOUND(rel_fro(Afd, Ref, (long)d * d), 4.0 * d * T * cond * U32, "sm f32 d=%d t=%d", d,
                T);
    CHECK_EQ_INT(fb, 0);
    vref_gram_free(&g);
    free(A), free(As), free(Af), free(M), free(Ref), free(Afd), free(u), free(uf);
}

TEST(lapack_sm_update_vs_inverse)
{
    sm_chain(4, 200, 21);
    sm_chain(32, 200, 22);
}

/* (A^-1 + U^T U)^-1 by r sequential Sherman-Morrison steps: the model above with t = r, plus the
 * input A's own inversion error and the reference's (4 d cond u each): c d (r + 2) cond u. */
TEST(lapack_woodbury_vs_inverse)
{
    enum { D = 16, T0 = 40, R = 5 };
    double A[D * D], M[D * D], Ref[D * D], U[R * D], u[D];
    rng_t r = {31};
    vref_gram g;
    long fb = 0;
    CHECK_EQ_INT(vref_gram_init(&g, D, 0.5), 0);
    for (int s = 0; s < T0; s++) {
        aniso_vec(&r, u, D, 1.0);
        vref_gram_add(&g, u);
    }
    vref_gram_get(&g, M);
    CHECK_EQ_INT(vref_spd_inverse(M, D, A), 0);
    for (int i = 0; i < R; i++) { /* rows of U: the update vectors */
        aniso_vec(&r, U + i * D, D, 0.5);
        vref_gram_add(&g, U + i * D);
    }
    vref_gram_get(&g, M);
    CHECK_EQ_INT(vref_spd_inverse(M, D, Ref), 0);
    double cond = spd_cond(M, D);
    CHECK_EQ_INT(vla_woodbury_f64(A, U, R, D, 0, &fb), 0);
    CHECK_BOUND(rel_fro(A, Ref, D * D), 4.0 * D * (R + 2) * cond * U64,
                "woodbury f64 d=%d r=%d cond=%.3g", D, R, cond);
    CHECK_EQ_INT(fb, 0);
    vref_gram_free(&g);
}

/* rls at f64 against its closed form. A: the Sherman-Morrison model, 4 d t cond u. S = V^T K A_t
 * inherits A's relative error, and the recurrence for S adds a local c d u per step carried by
 * the same factors A_t M_s: the same 4 d t cond u again; dposv's own ~ 4 d cond u is inside. */
TEST(lapack_rls_vs_closed_form)
{
    enum { D = 8, DV = 5, T = 100 };
    vla_config cfg;
    vla_config_default(&cfg, VLA_RLS, D);
    cfg.dv = DV;
    cfg.prec = VLA_F64;
    vla_model *m = NULL;
    CHECK_EQ_INT(vla_model_new(&m, &cfg), 0);
    if (!m)
        return;
    static double K[T * D], V[T * DV];
    double q[D], S[DV * D], Sref[DV * D], A[D * D], M[D * D], Aref[D * D];
    rng_t r = {41};
    vref_gram g;
    CHECK_EQ_INT(vref_gram_init(&g, D, cfg.lambda0), 0);
    for (int s = 0; s < T; s++) {
        aniso_vec(&r, K + s * D, D, 1.5);
        for (int j = 0; j < DV; j++)
            V[s * DV + j] = rng_gauss(&r);
        for (int j = 0; j < D; j++)
            q[j] = rng_gauss(&r);
        vla_input in = {.q = q, .k = K + s * D, .v = V + s * DV, .beta = NAN, .decay = NAN};
        CHECK_EQ_INT(vla_model_step(m, &in), 0);
        vref_gram_add(&g, K + s * D);
    }
    CHECK_EQ_INT(vla_model_get(m, VLA_Q_S, S), 0);
    CHECK_EQ_INT(vla_model_get(m, VLA_Q_A, A), 0);
    CHECK_EQ_INT(vref_rls_closed(K, V, T, D, DV, cfg.lambda0, Sref), 0);
    vref_gram_get(&g, M);
    CHECK_EQ_INT(vref_spd_inverse(M, D, Aref), 0);
    double cond = spd_cond(M, D), bound = 4.0 * D * T * cond * U64;
    CHECK_BOUND(rel_fro(S, Sref, DV * D), bound, "rls S vs closed form d=%d t=%d cond=%.3g", D, T,
                cond);
    CHECK_BOUND(rel_fro(A, Aref, D * D), bound, "rls A vs inverse of Gram");
    CHECK_EQ_INT(vla_model_counts(m)->guard, 0);
    vla_model_free(m);
    vref_gram_free(&g);

    double Sx[DV * D];
    CHECK_EQ_INT(vref_rls_closed(K, V, 0, D, DV, 1.0, Sx), 0); /* t = 0: S = 0 */
    CHECK_BOUND(vla_fro(Sx, DV * D), 0, "rls closed form at t = 0");
    CHECK_EQ_INT(vref_rls_closed(K, V, 0, D, DV, 0.0, Sx), VLA_ERANGE); /* G = 0 */
    CHECK_EQ_INT(vref_rls_closed(K, V, T, D, 0, 1.0, Sx), VLA_ERANGE);
    CHECK_EQ_INT(vref_rls_closed(K, V, T, D, DV, -1.0, Sx), VLA_ERANGE);
    CHECK_EQ_INT(vref_rls_closed(NULL, V, T, D, DV, 1.0, Sx), VLA_EINVAL);
    K[3] = NAN;
    CHECK_EQ_INT(vref_rls_closed(K, V, T, D, DV, 1.0, Sx), VLA_ENONFINITE);
}

static void unit(double *x, int d)
{
    double n = vla_fro(x, d);
    for (int j = 0; j < d; j++)
        x[j] /= n;
}

/* ||I - a b^T||_2, closed form against dgesvd. Forming X = I - a b^T errs by at most
 * u (|X| + |a||b|^T) entrywise, i.e. by (sqrt(d) + 2) u ||X||_2 (as |a||b| <= ||X||_2 + 1
 * <= 2 ||X||_2); dgesvd's backward error is ~ c d u ||X||_2; the closed form a few u. Together
 * (6 d + 8) u relative. */
TEST(lapack_jac_norm_vs_svd)
{
    static const int dims[] = {1, 2, 3, 8, 32};
    rng_t r = {51};
    double a[32], b[32], X[32 * 32], s[32];
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
        int d = dims[di];
        double tol = (6.0 * d + 8) * U64, worst = 0, worst_u = 0;
        for (int n = 0; n < 60; n++) {
            /* mostly moderate norms; every tenth pair near the ends of the exponent range,
             * where the closed form must scale and dgesvd does */
            double ea = n % 10 == 9 ? 280 * rng_unif(&r) - 140 : 4 * rng_unif(&r) - 2;
            double eb = n % 10 == 9 ? 280 * rng_unif(&r) - 140 : 4 * rng_unif(&r) - 2;
            double sa = pow(10, ea), sb = pow(10, eb);
            for (int j = 0; j < d; j++) {
                a[j] = sa * rng_gauss(&r);
                b[j] = sb * rng_gauss(&r);
            }
            if (n % 3 == 1) { /* b ~ a / |a|^2: a.b near 1, J nearly singular along a */
                double aa = 0;
                for (int j = 0; j < d; j++)
                    aa += a[j] * a[j];
                for (int j = 0; j < d; j++)
                    b[j] = a[j] / aa + 1e-3 * sb * rng_gauss(&r);
            }
            for (int i = 0; i < d; i++)
                for (int j = 0; j < d; j++)
                    X[i * d + j] = (i == j) - a[i] * b[j];
            CHECK_EQ_INT(vref_svd(X, d, d, s), 0);
            double e = fabs(vla_jac_norm(a, b, d) - s[0]) / s[0];
            if (e > worst)
                worst = e;

            /* unit k and alpha with a given cosine c: the closed form of section 7 */
            double c = 2 * rng_unif(&r) - 1, cm = 0;
            if (d < 2)
                continue;
            for (int j = 0; j < d; j++) {
                a[j] = rng_gauss(&r);
                b[j] = rng_gauss(&r);
            }
            unit(a, d);
            /* w orthogonal to k: Gram-Schmidt twice, since once leaves w off by u |b| / |w|
             * when b is nearly parallel to k, and then alpha is not unit */
            for (int pass = 0; pass < 2; pass++) {
                double wk = 0;
                for (int j = 0; j < d; j++)
                    wk += b[j] * a[j];
                for (int j = 0; j < d; j++)
                    b[j] -= wk * a[j];
            }
            unit(b, d);
            for (int j = 0; j < d; j++)
                b[j] = c * a[j] + sqrt(1 - c * c) * b[j];
            unit(b, d);
            for (int j = 0; j < d; j++) /* the cosine of the rounded vectors */
                cm += a[j] * b[j];
            for (int i = 0; i < d; i++)
                for (int j = 0; j < d; j++)
                    X[i * d + j] = (i == j) - a[i] * b[j];
            CHECK_EQ_INT(vref_svd(X, d, d, s), 0);
            e = fabs(vla_jac_norm_unit(cm) - s[0]) / s[0];
            if (e > worst_u)
                worst_u = e;
        }
        CHECK_BOUND(worst, tol, "jac_norm vs dgesvd d=%d (worst of 60)", d);
        if (d >= 2)
            CHECK_BOUND(worst_u, tol, "jac_norm_unit vs dgesvd d=%d (worst of 60)", d);
    }
    CHECK_BOUND(fabs(vla_jac_norm_unit(0) - (1 + sqrt(5)) / 2), 4 * U64, "jac_norm_unit(0) = phi");
    CHECK_BOUND(fabs(vla_jac_norm_unit(1) - 1), 0, "jac_norm_unit(1) = 1");
}

/* ======================= the MPFR reference against itself and lib/ ======================= */

/* vla_model_get hands out binary64, which cannot show a 2^-240 difference. vlaref.h has no
 * full-precision accessor, so we look at the state itself: ref_model.c's wrapper is
 * { vref_ctx cx; ST *st; } over recur.h's state type, and the same two headers define the same
 * types here (compatible types across translation units, C11 6.2.7). peek() checks that what it
 * finds is plausible before anyone dereferences an array. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "arith_mpfr.h"
#define SFX mpfr
#include "recur.h"
#pragma GCC diagnostic pop
typedef struct {
    vref_ctx cx;
    ST *st;
} vref_model;

static const ST *peek(const vla_model *m, long bits, int d, long t)
{
    const vref_model *vm = m->self;
    const ST *st = vm->st;
    if (vm->cx.prec_c != bits || !vm->cx.exact || !st || st->d != d || st->dv != d ||
        st->t != t || st->cfg.track != VLA_TRACK_SM) /* track sm: A itself is in st->A */
        return NULL;
    return st;
}

/* ||x - y||_F / ||y||_F at 512 bits */
static double mp_rel_fro(const __mpfr_struct *x, const __mpfr_struct *y, long n)
{
    mpfr_t num, den, e;
    mpfr_inits2(512, num, den, e, (mpfr_ptr)0);
    mpfr_set_zero(num, 1);
    mpfr_set_zero(den, 1);
    for (long i = 0; i < n; i++) {
        mpfr_sub(e, &x[i], &y[i], MPFR_RNDN);
        mpfr_fma(num, e, e, num, MPFR_RNDN);
        mpfr_fma(den, &y[i], &y[i], den, MPFR_RNDN);
    }
    mpfr_div(num, num, den, MPFR_RNDN);
    mpfr_sqrt(num, num, MPFR_RNDN);
    double r = mpfr_get_d(num, MPFR_RNDN);
    mpfr_clears(num, den, e, (mpfr_ptr)0);
    return r;
}

/* vla3 at 256 and 512 bits, and lib/'s f64, on the same inputs. A run at unit roundoff u differs
 * from the exact recurrence by, to first order, sum_s (local error at s) x (its amplification to
 * t). The local error is <= c d u relative (dot products of length d, unit(), a few roundings per
 * entry). For A, the Sherman-Morrison model gives amplification <= kappa = max_s cond(A_s), which
 * the nudge keeps small; for S, an error made at step s is carried by J_{s+1} ... J_t
 * (S_t = S_{t-1} J_t + v alpha^T), and alpha carries A's error: amplification <= kappa G with
 * G = max_s ||J_{s+1} ... J_t||_F, measured on the 512-bit run. So both errors are below
 * c d t kappa G u, c = 4. The 512-bit run's own error is 2^-256 times smaller, so the 256/512
 * difference is the 256-bit run's error; against the f64 run's error, the 256-bit run is exact. */
TEST(lapack_ref_vla3_precision)
{
    enum { D = 16, T = 300 };
    vla_config cfg;
    vla_config_default(&cfg, VLA_VLA3, D);
    cfg.prec = VLA_F64;
    vla_model *m256 = NULL, *m512 = NULL, *mf = NULL;
    CHECK_EQ_INT(vref_model_new(&m256, &cfg, VREF_EXACT, 256), 0);
    CHECK_EQ_INT(vref_model_new(&m512, &cfg, VREF_EXACT, 512), 0);
    CHECK_EQ_INT(vla_model_new(&mf, &cfg), 0);
    if (!m256 || !m512 || !mf)
        return;
    static double kp[T][D], al[T][D];
    double q[D], k[D], v[D], u[D], A[D * D], w[D], kappa = 1;
    rng_t r = {61};
    for (int s = 0; s < T; s++) {
        for (int j = 0; j < D; j++) {
            q[j] = rng_gauss(&r);
            k[j] = rng_gauss(&r);
            v[j] = rng_gauss(&r);
            u[j] = rng_gauss(&r);
        }
        vla_input in = {.q = q, .k = k, .v = v, .u = u, .beta = NAN, .decay = NAN};
        CHECK_EQ_INT(vla_model_step(m256, &in), 0);
        CHECK_EQ_INT(vla_model_step(m512, &in), 0);
        CHECK_EQ_INT(vla_model_step(mf, &in), 0);
        vla_model_get(m512, VLA_Q_KP, kp[s]);
        vla_model_get(m512, VLA_Q_ALPHA, al[s]);
        vla_model_get(m512, VLA_Q_A, A);
        if (vref_sym_eig(A, D, w) == 0 && w[0] > 0 && w[D - 1] / w[0] > kappa)
            kappa = w[D - 1] / w[0];
    }
    /* G = max_s ||J_{s+1} ... J_t||_F, by Q <- J_s Q from s = t down (J_s = I - k'_s alpha_s^T) */
    double Q[D * D] = {0}, Q2[D * D], G = 1;
    for (int i = 0; i < D; i++)
        Q[i * D + i] = 1;
    for (int s = T - 1; s >= 1; s--) {
        for (int j = 0; j < D; j++) {
            double aq = 0;
            for (int l = 0; l < D; l++)
                aq += al[s][l] * Q[l * D + j];
            for (int i = 0; i < D; i++)
                Q2[i * D + j] = Q[i * D + j] - kp[s][i] * aq;
        }
        memcpy(Q, Q2, sizeof Q);
        double f = vla_fro(Q, D * D);
        if (f > G)
            G = f;
    }
    double growth = 4.0 * D * T * kappa * G;

    const ST *s256 = peek(m256, 256, D, T), *s512 = peek(m512, 512, D, T);
    CHECK_MSG(s256 && s512, "ref_model.c's state is not laid out as this test assumes");
    if (s256 && s512) {
        double S512[D * D];
        vla_model_get(m512, VLA_Q_S, S512); /* the peeked state is the state vla_model_get reads */
        CHECK_MSG(mpfr_get_d(&s512->S[D + 1], MPFR_RNDN) == S512[D + 1], "peeked S differs");
        CHECK_BOUND(mp_rel_fro(s256->S, s512->S, D * D), growth * 0x1p-256,
                    "vla3 S: 256 vs 512 bits (kappa %.3g G %.3g)", kappa, G);
        CHECK_BOUND(mp_rel_fro(s256->A, s512->A, D * D), growth * 0x1p-256,
                    "vla3 A: 256 vs 512 bits");
        /* and the difference is not zero: the 256-bit run did round (else the check is empty) */
        CHECK_MSG(mp_rel_fro(s256->S, s512->S, D * D) > 0x1p-300,
                  "256 and 512 bits agree exactly?");
    }
    /* the 256-bit run, rounded once to binary64, is the truth at this scale */
    double Sf[D * D], Af[D * D], S256[D * D], A256[D * D];
    vla_model_get(mf, VLA_Q_S, Sf);
    vla_model_get(mf, VLA_Q_A, Af);
    vla_model_get(m256, VLA_Q_S, S256);
    vla_model_get(m256, VLA_Q_A, A256);
    CHECK_BOUND(rel_fro(Sf, S256, D * D), growth * U64, "vla3 S: lib f64 vs 256 bits");
    CHECK_BOUND(rel_fro(Af, A256, D * D), growth * U64, "vla3 A: lib f64 vs 256 bits");
    vla_model_free(m256);
    vla_model_free(m512);
    vla_model_free(mf);
}

/* ============== the emulation is the hardware's arithmetic, bit for bit ============== */

static float rand_float_bits(rng_t *r) /* any finite float, every exponent equally likely */
{
    for (;;) {
        uint32_t b = (uint32_t)rng_next(r);
        if ((b & 0x7f800000u) != 0x7f800000u) {
            float f;
            memcpy(&f, &b, 4);
            return f;
        }
    }
}

static double rand_double_bits(rng_t *r)
{
    for (;;) {
        uint64_t b = rng_next(r);
        if ((b & 0x7ff0000000000000ULL) != 0x7ff0000000000000ULL) {
            double f;
            memcpy(&f, &b, 8);
            return f;
        }
    }
}

/* a signed value with a uniform significand and exponent in [lo, hi] */
static double rand_exp(rng_t *r, int lo, int hi)
{
    double m = 1 + rng_unif(r);
    int e = lo + (int)(rng_unif(r) * (hi - lo + 1));
    return ((rng_next(r) & 1) ? -1 : 1) * ldexp(m, e);
}

/* Operand pairs by kind: anything; near each other (cancellation in -, ties in rounding);
 * subnormal; huge (+ and * overflow); tiny (* and / underflow into and through the subnormals).
 * emin, emax: the format's smallest normal and largest exponents; sub_lo: its smallest
 * subnormal's exponent. A binary32 operand that rounds to Inf is skipped by the caller. */
static void operands(rng_t *r, int kind, int emin, int emax, int sub_lo, double *a, double *b,
                     double (*any)(rng_t *))
{
    int coin = rng_next(r) & 1;
    switch (kind) {
    case 0:
        *a = any(r);
        *b = any(r);
        break;
    case 1:
        *a = rand_exp(r, emin, emax);
        *b = *a * (1 + ldexp(rand_exp(r, -30, 0), -(int)(rng_next(r) % 30)));
        break;
    case 2:
        *a = rand_exp(r, sub_lo, emin - 1);
        *b = coin ? rand_exp(r, sub_lo, emin - 1) : rand_exp(r, emin, emin + 30);
        break;
    case 3:
        *a = rand_exp(r, emax - 8, emax);
        *b = rand_exp(r, emax - 8, emax);
        break;
    default:
        *a = rand_exp(r, emin - 4, emin + 40);
        *b = coin ? rand_exp(r, emin - 4, emin + 4) : rand_exp(r, -emin - 40, emax);
        break;
    }
}

static double fl_any(rng_t *r) { return rand_float_bits(r); }
static double db_any(rng_t *r) { return rand_double_bits(r); }

/* what the pairs reached: subnormal results, overflow to Inf, underflow to zero (the edges a
 * bit-for-bit claim is about), counted so that the report shows they were exercised */
typedef struct {
    long sub, inf, zero;
} reach;
static void reached(reach *c, double r, double a, double b, char op, double min_normal)
{
    if (isinf(r))
        c->inf++;
    else if (r != 0 && fabs(r) < min_normal)
        c->sub++;
    else if (r == 0 && a != 0 && (op == '*' ? b != 0 : op == '/'))
        c->zero++;
}

static double hw_f32(char op, float a, float b)
{
    switch (op) {
    case '+': return (double)(a + b);
    case '-': return (double)(a - b);
    case '*': return (double)(a * b);
    case '/': return (double)(a / b);
    default: return (double)sqrtf(a);
    }
}

static double hw_f64(char op, double a, double b)
{
    switch (op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return a / b;
    default: return sqrt(a);
    }
}

enum { NOPS = 100000 };

TEST(emul_round_op_f32_vs_hardware)
{
    static const char ops[] = "+-*/s";
    rng_t r = {71};
    for (int o = 0; o < 5; o++) {
        long bad = 0, kinds[5] = {0};
        reach c = {0, 0, 0};
        for (int n = 0; n < NOPS; n++) {
            double a, b;
            operands(&r, n % 5, -126, 127, -149, &a, &b, fl_any);
            float fa = (float)a, fb = (float)b; /* operands in the format */
            if (isinf(fa) || isinf(fb))
                continue;
            if (ops[o] == 's' && n % 8) /* mostly non-negative: a NaN teaches little */
                fa = fabsf(fa);
            double hw = hw_f32(ops[o], fa, fb), em = vref_round_op(VLA_FMT_F32, ops[o], fa, fb);
            kinds[n % 5]++;
            reached(&c, em, fa, fb, ops[o], FLT_MIN);
            if (!vla_test_same(hw, em) && ++bad <= 5)
                CHECK_MSG(0, "f32 %a %c %a: hardware %a, emulation %a", (double)fa, ops[o],
                          (double)fb, hw, em);
        }
        CHECK_BOUND((double)bad, 0, "f32 '%c' mismatches in %ld pairs (%ld sub, %ld inf, %ld to 0)",
                    ops[o],
                    kinds[0] + kinds[1] + kinds[2] + kinds[3] + kinds[4], c.sub, c.inf, c.zero);
    }
}

TEST(emul_round_op_f64_vs_hardware)
{
    static const char ops[] = "+-*/s";
    rng_t r = {72};
    for (int o = 0; o < 5; o++) {
        long bad = 0;
        reach c = {0, 0, 0};
        for (int n = 0; n < NOPS; n++) {
            double a, b;
            operands(&r, n % 5, -1022, 1023, -1074, &a, &b, db_any);
            if (isinf(a) || isinf(b))
                continue;
            if (ops[o] == 's' && n % 8)
                a = fabs(a);
            double hw = hw_f64(ops[o], a, b), em = vref_round_op(VLA_FMT_F64, ops[o], a, b);
            reached(&c, em, a, b, ops[o], DBL_MIN);
            if (!vla_test_same(hw, em) && ++bad <= 5)
                CHECK_MSG(0, "f64 %a %c %a: hardware %a, emulation %a", a, ops[o], b, hw, em);
        }
        CHECK_BOUND((double)bad, 0, "f64 '%c' mismatches in %d pairs (%ld sub, %ld inf, %ld to 0)",
                    ops[o],
                    NOPS, c.sub, c.inf, c.zero);
    }
}

/* every pair of special operands: signed zeros (x - x = +0, -0 + -0 = -0), the smallest
 * subnormal, the smallest normal, the largest value, one, Inf and NaN, in both formats */
TEST(emul_round_op_special_operands)
{
    static const char ops[] = "+-*/s";
    const double f32v[] = {0.0, 0x1p-149, FLT_MIN, FLT_MAX, 1.0, 0x1.fffffep-1, INFINITY, NAN};
    const double f64v[] = {0.0, 0x1p-1074, DBL_MIN, DBL_MAX,
                           1.0, 0x1.fffffffffffffp-1, INFINITY, NAN};
    long bad = 0, n = 0;
    for (int fmt = 0; fmt < 2; fmt++) {
        const double *v = fmt ? f64v : f32v;
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++)
                for (int o = 0; o < 5; o++, n++) {
                    double a = (i & 1 ? -1 : 1) * v[i / 2], b = (j & 1 ? -1 : 1) * v[j / 2];
                    double hw = fmt ? hw_f64(ops[o], a, b) : hw_f32(ops[o], (float)a, (float)b);
                    double em = vref_round_op(fmt ? VLA_FMT_F64 : VLA_FMT_F32, ops[o], a, b);
                    if (!vla_test_same(hw, em) && ++bad <= 8)
                        CHECK_MSG(0, "%s %a %c %a: hardware %a, emulation %a", fmt ? "f64" : "f32",
                                  a, ops[o], b, hw, em);
                }
    }
    /* scaling by a power of two into and through the subnormals: the product is exact before
     * the range is applied, so every dropped-bit pattern, ties included, meets subnormalize */
    rng_t r = {74};
    for (int fmt = 0; fmt < 2; fmt++) {
        int p = fmt ? 53 : 24, emin = fmt ? -1022 : -126;
        for (int k = -emin - 1; k <= -emin + p + 1; k++)
            for (int i = 0; i < 200; i++, n += 2) {
                double m = ldexp((double)(rng_next(&r) >> (64 - p + 1)) * 2 + 1, 1 - p); /* odd */
                if (!fmt)
                    m = (float)m;
                /* both operands must be in the format: 2^-k and 2^k only while they exist; the
                 * rest of the scaling goes into a (still normal) */
                int kb = k < (fmt ? 1074 : 149) ? k : (fmt ? 1074 : 149);
                int ki = k < (fmt ? 1023 : 127) ? k : (fmt ? 1023 : 127);
                double a = ldexp((i & 1) ? -m : m, kb - k), b = ldexp(1, -kb), bi = ldexp(1, ki);
                double ai = ldexp((i & 1) ? -m : m, ki - k);
                double hw = fmt ? a * b : (double)((float)a * (float)b);
                double em = vref_round_op(fmt ? VLA_FMT_F64 : VLA_FMT_F32, '*', a, b);
                if (!vla_test_same(hw, em) && ++bad <= 8)
                    CHECK_MSG(0, "%a * %a: hardware %a, emulation %a", a, b, hw, em);
                hw = fmt ? ai / bi : (double)((float)ai / (float)bi);
                em = vref_round_op(fmt ? VLA_FMT_F64 : VLA_FMT_F32, '/', ai, bi);
                if (!vla_test_same(hw, em) && ++bad <= 8)
                    CHECK_MSG(0, "%a / %a: hardware %a, emulation %a", ai, bi, hw, em);
            }
    }
    CHECK_BOUND((double)bad, 0, "special operands and 2^-k scalings: mismatches in %ld", n);
}

/* ---- conversions: vref_round_op(f, 'c', x) against lib/'s vla_round_fmt(f, x) ---- */

/* the neighbours of format value x away from zero (next representable up in magnitude; Inf past
 * the largest), and whether x has an even last significand bit */
typedef struct {
    vla_fmt f;
    int p, emin, emax; /* precision, smallest normal exponent, largest exponent */
} fmt_desc;
static const fmt_desc FMTS[4] = {
    {VLA_FMT_F64, 53, -1022, 1023},
    {VLA_FMT_F32, 24, -126, 127},
    {VLA_FMT_F16, 11, -14, 15},
    {VLA_FMT_BF16, 8, -126, 127},
};

/* the spacing of the format's grid at |x| (x representable, finite) */
static double ulp_at(const fmt_desc *fd, double x)
{
    int e;
    frexp(x, &e);
    e -= 1;
    if (e < fd->emin)
        e = fd->emin;
    return ldexp(1, e - (fd->p - 1));
}

/* a random representable value of the format, every exponent (subnormals included) */
static double rand_fmt_value(rng_t *r, const fmt_desc *fd)
{
    int e = fd->emin - (fd->p - 1) + (int)(rng_unif(r) * (fd->emax - fd->emin + fd->p));
    double m = floor(rng_unif(r) * ldexp(1, fd->p)); /* p-bit integer significand */
    double x = ldexp(m, e - (fd->p - 1));             /* then rounded onto the grid */
    x = vla_round_fmt(fd->f, x);
    if (isinf(x))
        x = ldexp(2 - ldexp(1, 1 - fd->p), fd->emax); /* the largest value */
    return (rng_next(r) & 1) ? -x : x;
}

static int last_bit_even(const fmt_desc *fd, double x)
{
    double m = fabs(x) / ulp_at(fd, x); /* the integer significand */
    return fmod(m, 2) == 0;
}

static long conv_check(const fmt_desc *fd, double x, const char *why)
{
    double lib = vla_round_fmt(fd->f, x), em = vref_round_op(fd->f, 'c', x, 0);
    if (vla_test_same(lib, em))
        return 0;
    CHECK_MSG(0, "%s %s: vla_round_fmt(%a) = %a, emulation %a", vla_fmt_name(fd->f), why, x, lib,
              em);
    return 1;
}

TEST(emul_convert_vs_lib)
{
    rng_t r = {73};
    for (int fi = 0; fi < 4; fi++) {
        const fmt_desc *fd = &FMTS[fi];
        long bad = 0, n = 0, tie_odd = 0;
        for (int i = 0; i < 40000; i++, n++) /* every binary64 exponent */
            bad += conv_check(fd, rand_double_bits(&r), "random");
        int sub_lo = fd->emin - fd->p; /* half the smallest subnormal, and a bit below */
        for (int i = 0; i < 20000; i++, n++) /* the subnormal range and the edges of normal */
            bad += conv_check(fd, rand_exp(&r, sub_lo - 2, fd->emin + 1), "subnormal");
        for (int i = 0; i < 20000; i++, n++) { /* exact ties, and one binary64 ulp either side */
            double x = rand_fmt_value(&r, fd), up = fabs(x) + ulp_at(fd, x);
            double mid = copysign((fabs(x) + up) / 2, x); /* exact in binary64 (p < 53) */
            if (fd->f == VLA_FMT_F64) {
                bad += conv_check(fd, x, "value");
                continue;
            }
            bad += conv_check(fd, mid, "tie");
            bad += conv_check(fd, nextafter(mid, 0), "below tie");
            bad += conv_check(fd, nextafter(mid, copysign(INFINITY, x)), "above tie");
            /* and the tie went to the even neighbour, by IEEE's rule, not merely agreed on */
            double rt = vla_round_fmt(fd->f, mid);
            if (!isinf(rt) && !last_bit_even(fd, rt) && ++tie_odd <= 3)
                CHECK_MSG(0, "%s tie %a rounded to odd %a", vla_fmt_name(fd->f), mid, rt);
            n += 2;
        }
        CHECK_BOUND((double)(bad + tie_odd), 0, "convert %s: mismatches in %ld values",
                    vla_fmt_name(fd->f), n);
    }
    /* the overflow thresholds: the largest value, the last value below the tie, the tie */
    static const struct {
        vla_fmt f;
        double x, want;
    } edge[] = {
        {VLA_FMT_F16, 65504, 65504},        {VLA_FMT_F16, 65519.99, 65504},
        {VLA_FMT_F16, 0x1.ffdfffffffffp15, 65504}, {VLA_FMT_F16, 65520, INFINITY},
        {VLA_FMT_F16, -65520, -INFINITY},   {VLA_FMT_F16, 0x1p-25, 0},
        {VLA_FMT_F16, -0x1p-25, -0.0},      {VLA_FMT_F16, 0x1.0000000000001p-25, 0x1p-24},
        {VLA_FMT_F16, 0x1.8p-24, 0x1p-23},  {VLA_FMT_F16, 0x1.ffcp-15, 0x1p-14},
        {VLA_FMT_BF16, 0x1.fep127, 0x1.fep127}, {VLA_FMT_BF16, 0x1.fefffffffffffp127, 0x1.fep127},
        {VLA_FMT_BF16, 0x1.ffp127, INFINITY},   {VLA_FMT_BF16, 0x1p-134, 0},
        {VLA_FMT_BF16, 0x1.8p-133, 0x1p-132},   {VLA_FMT_F32, 0x1.fffffefffffffp127, FLT_MAX},
        {VLA_FMT_F32, 0x1.ffffffp127, INFINITY}, {VLA_FMT_F32, 0x1p-150, 0},
        {VLA_FMT_F32, 0x1.0000000000001p-150, 0x1p-149}, {VLA_FMT_F64, 0x1p-1074, 0x1p-1074},
    };
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        double lib = vla_round_fmt(edge[i].f, edge[i].x),
               em = vref_round_op(edge[i].f, 'c', edge[i].x, 0);
        CHECK_MSG(vla_test_same(lib, edge[i].want) && vla_test_same(em, edge[i].want),
                  "%s(%a): lib %a, emulation %a, want %a", vla_fmt_name(edge[i].f), edge[i].x, lib,
                  em, edge[i].want);
    }
}
