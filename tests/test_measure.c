/* test_measure.c: the measures of docs/math.md section 7 against independent computations (power
 * iteration, explicit matrix products, a 2 x 2 SVD in long double) and the .dat writer of
 * section 9 by writing tables and reading them back. */
#include "check.h"
#include "vlastab.h"

#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

static const double golden = 1.6180339887498948482;

/* ---- helpers: a local generator, vectors, and a reference spectral norm ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s) { return ((double)(rng_next(s) >> 11) + 0.5) * 0x1p-53; }

static double rng_gauss(uint64_t *s)
{
    return sqrt(-2 * log(rng_uniform(s))) * cos(6.283185307179586 * rng_uniform(s));
}

static double dot(const double *a, const double *b, int d)
{
    double s = 0;
    for (int i = 0; i < d; i++)
        s += a[i] * b[i];
    return s;
}

static void scale(double *x, int d, double f)
{
    for (int i = 0; i < d; i++)
        x[i] *= f;
}

static void rand_unit(double *x, int d, uint64_t *s)
{
    for (int i = 0; i < d; i++)
        x[i] = rng_gauss(s);
    scale(x, d, 1 / sqrt(dot(x, x, d)));
}

/* A unit vector a with a.k = c: c k plus sqrt(1 - c^2) times a unit vector orthogonal to k. */
static void unit_with_cos(double *a, const double *k, double c, int d, uint64_t *s)
{
    double e[256];
    rand_unit(e, d, s);
    for (int pass = 0; pass < 2; pass++) { /* Gram-Schmidt twice: once leaves O(u) along k */
        double p = dot(e, k, d);
        for (int i = 0; i < d; i++)
            e[i] -= p * k[i];
    }
    scale(e, d, 1 / sqrt(dot(e, e, d)));
    double sn = sqrt(1 - c * c);
    for (int i = 0; i < d; i++)
        a[i] = c * k[i] + sn * e[i];
}

/* ||I - a b^T||_2 by power iteration on J^T J, matrix-free: J x = x - a (b.x), J^T y = y - b (a.y).
 * Returns sqrt of the Rayleigh quotient, a lower bound that converges from below. */
static double power_norm(const double *a, const double *b, int d, int iters, uint64_t seed)
{
    double x[256], y[256];
    uint64_t s = seed;
    rand_unit(x, d, &s);
    double rho = 0;
    for (int it = 0; it < iters; it++) {
        double bx = dot(b, x, d);
        for (int i = 0; i < d; i++)
            y[i] = x[i] - a[i] * bx;
        rho = dot(y, y, d); /* x unit: |J x|^2 is the Rayleigh quotient of J^T J */
        double ay = dot(a, y, d);
        for (int i = 0; i < d; i++)
            x[i] = y[i] - b[i] * ay;
        double n = sqrt(dot(x, x, d));
        if (n == 0)
            break;
        scale(x, d, 1 / n);
    }
    return sqrt(rho);
}

/* ---- Jacobian norms ---- */

TEST(jac_norm_unit_special_values)
{
    CHECK(vla_jac_norm_unit(1) == 1);
    CHECK_REL(vla_jac_norm_unit(0), golden, 1e-15);
    CHECK_REL(vla_jac_norm_unit(-1), 2, 1e-15);
    CHECK(vla_jac_norm_unit(1.5) == 1); /* clamped into [-1, 1] */
    CHECK_REL(vla_jac_norm_unit(-3), 2, 1e-15);
    CHECK(isnan(vla_jac_norm_unit(NAN)));
    /* near c = 1 the norm is 1 + (1 - c) + O((1 - c)^2) */
    for (double eps = 1e-3; eps >= 1e-9; eps /= 10)
        CHECK_REL(vla_jac_norm_unit(1 - eps) - 1, eps, 2e-6 + 2 * eps);
    /* monotone decreasing in c */
    double prev = INFINITY;
    for (int i = 0; i <= 2000; i++) {
        double n = vla_jac_norm_unit(-1 + i / 1000.0);
        CHECK_MSG(n <= prev, "not decreasing at c = %g", -1 + i / 1000.0);
        prev = n;
    }
}

TEST(jac_norm_unit_vs_power_iteration)
{
    static const int ds[] = {2, 3, 8, 32, 256};
    static const double cs[] = {-1, -0.999, -0.9, -0.5, -0.1, 0, 1e-6, 0.3, 0.5, 0.9, 0.99, 1};
    uint64_t s = 11;
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
        for (size_t j = 0; j < sizeof cs / sizeof cs[0]; j++) {
            int d = ds[i];
            double k[256], a[256];
            rand_unit(k, d, &s);
            unit_with_cos(a, k, cs[j], d, &s);
            double c = dot(a, k, d);
            double ref = power_norm(k, a, d, 4000, 1000 + j);
            CHECK_MSG(fabs(vla_jac_norm_unit(c) - ref) <= 1e-12 * ref,
                      "d=%d c=%g: closed form %.17g, power iteration %.17g", d, c,
                      vla_jac_norm_unit(c), ref);
            /* the general form agrees on unit vectors, either way round */
            CHECK_REL(vla_jac_norm(k, a, d), vla_jac_norm_unit(c), 1e-13);
            CHECK_REL(vla_jac_norm(a, k, d), vla_jac_norm_unit(c), 1e-13);
        }
}

/* Exact singular values of a 2 x 2 matrix in long double: with p = (m11 + m22, m21 - m12) and
 * q = (m11 - m22, m21 + m12), sigma_max = (|p| + |q|) / 2. No relation to the quadratic. */
static double svd2_max(const double *a, const double *b)
{
    long double m11 = 1 - (long double)a[0] * b[0], m12 = -(long double)a[0] * b[1];
    long double m21 = -(long double)a[1] * b[0], m22 = 1 - (long double)a[1] * b[1];
    long double p = hypotl(m11 + m22, m21 - m12), q = hypotl(m11 - m22, m21 + m12);
    return (double)((p + q) / 2);
}

TEST(jac_norm_general_vs_2x2_svd)
{
    uint64_t s = 5;
    int bad = 0;
    double worst = 0;
    for (int it = 0; it < 20000; it++) {
        double a[2], b[2];
        double sa = exp(8 * rng_gauss(&s)), sb = exp(8 * rng_gauss(&s));
        for (int i = 0; i < 2; i++) {
            a[i] = sa * rng_gauss(&s);
            b[i] = sb * rng_gauss(&s);
        }
        if (it % 4 == 0) { /* nearly parallel: the discriminant's small factor */
            b[0] = a[0] * sb / sa * (1 + 1e-9 * rng_gauss(&s));
            b[1] = a[1] * sb / sa;
        }
        double got = vla_jac_norm(a, b, 2), ref = svd2_max(a, b);
        double err = fabs(got - ref) / ref;
        if (err > worst)
            worst = err;
        if (err > 4e-15 && bad++ < 5)
            CHECK_MSG(0, "a=(%a,%a) b=(%a,%a): %.17g vs %.17g", a[0], a[1], b[0], b[1], got, ref);
    }
    CHECK_MSG(bad == 0, "%d of 20000 off by more than 4e-15 (worst %.3g)", bad, worst);
}

TEST(jac_norm_general_vs_power_iteration)
{
    static const double norms[][2] = {{0.3, 2}, {5, 0.1}, {1, 1}, {3, 3}, {1e-150, 1e150},
                                      {1e200, 1e-190}, {7e-3, 1e2}, {0.5, 0.5}};
    static const int ds[] = {2, 5, 32, 256};
    uint64_t s = 99;
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
        for (size_t j = 0; j < sizeof norms / sizeof norms[0]; j++) {
            int d = ds[i];
            double a[256], b[256];
            rand_unit(a, d, &s);
            rand_unit(b, d, &s);
            scale(a, d, norms[j][0]);
            scale(b, d, norms[j][1]);
            double ref = power_norm(a, b, d, 20000, 7 + j);
            double got = vla_jac_norm(a, b, d);
            CHECK_MSG(fabs(got - ref) <= 1e-10 * ref, "d=%d |a|=%g |b|=%g: %.17g vs %.17g", d,
                      norms[j][0], norms[j][1], got, ref);
        }
}

TEST(jac_norm_general_edges)
{
    double z[8] = {0}, k[8], a[8], b[8];
    uint64_t s = 3;
    rand_unit(k, 8, &s);
    rand_unit(a, 8, &s);
    CHECK(vla_jac_norm(z, k, 8) == 1);
    CHECK(vla_jac_norm(k, z, 8) == 1);
    /* norms whose product underflows: J = I to within rounding */
    memcpy(b, a, sizeof b);
    scale(b, 8, 1e-200);
    double t[8];
    memcpy(t, k, sizeof t);
    scale(t, 8, 1e-200);
    CHECK(vla_jac_norm(t, b, 8) == 1);
    /* |a||b| = 1e200: the squared roots would overflow, the norm is within 1 of |a||b| */
    memcpy(b, a, sizeof b);
    scale(b, 8, 1e250);
    memcpy(t, k, sizeof t);
    scale(t, 8, 1e-50);
    CHECK_REL(vla_jac_norm(t, b, 8), 1e200, 1e-14);
    /* |a||b| overflows: so does the norm, whatever the angle */
    memcpy(b, k, sizeof b);
    scale(b, 8, 1e200);
    double o[8] = {k[1], -k[0]}; /* orthogonal to k */
    scale(o, 8, 1e200);
    CHECK(isinf(vla_jac_norm(b, o, 8)));
    CHECK(isinf(vla_jac_norm(b, b, 8)));
    /* parallel: singular values 1 and |1 - a.b| */
    memcpy(b, k, sizeof b);
    scale(b, 8, 6);
    CHECK_REL(vla_jac_norm(k, b, 8), 5, 1e-15);
    /* a = b = sqrt(2) k: J = I - 2 k k^T is a reflection, norm exactly 1. A difference of squares
     * for |a|^2|b|^2 - (a.b)^2 would leave an error near sqrt(u) here. */
    memcpy(t, k, sizeof t);
    scale(t, 8, sqrt(2));
    CHECK_NEAR(vla_jac_norm(t, t, 8), 1, 1e-14);
    /* d = 1: no orthogonal complement, the norm is |1 - ab| */
    double x = 3, y = 0.5, w = 2;
    CHECK_REL(vla_jac_norm(&x, &y, 1), 0.5, 1e-16);
    CHECK(vla_jac_norm(&w, &y, 1) == 0);
    /* non-finite inputs */
    memcpy(b, a, sizeof b);
    b[2] = NAN;
    CHECK(isnan(vla_jac_norm(k, b, 8)));
    b[2] = INFINITY;
    CHECK(isinf(vla_jac_norm(k, b, 8)));
    CHECK(isnan(vla_jac_norm(z, b, 8))); /* 0 times Inf */
}

/* docs/math.md section 7: alpha = unit(A k) with A SPD of condition kappa gives c >= 2 sqrt(kappa)
 * / (1 + kappa),
 * with equality for k along sqrt(kappa) q_1 + q_d, hence ||J||_2 < golden ratio. */
TEST(jac_norm_kantorovich)
{
    static const int ds[] = {4, 16, 32};
    static const double kappas[] = {1, 10, 1e3, 1e6, 1e9};
    uint64_t s = 77;
    static double A[32 * 32], Q[32 * 32];
    for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++)
        for (size_t ki = 0; ki < sizeof kappas / sizeof kappas[0]; ki++) {
            int d = ds[di];
            double kappa = kappas[ki], lam[32];
            /* Q: a product of three random Householder reflections, rows are eigenvectors */
            for (int i = 0; i < d * d; i++)
                Q[i] = i % (d + 1) == 0;
            for (int h = 0; h < 3; h++) {
                double v[32];
                rand_unit(v, d, &s);
                for (int r = 0; r < d; r++) {
                    double p = dot(Q + r * d, v, d);
                    for (int c = 0; c < d; c++)
                        Q[r * d + c] -= 2 * p * v[c];
                }
            }
            for (int i = 0; i < d; i++)
                lam[i] = pow(kappa, (double)i / (d - 1));
            for (int r = 0; r < d; r++)
                for (int c = 0; c < d; c++) {
                    double sum = 0;
                    for (int i = 0; i < d; i++)
                        sum += Q[i * d + r] * lam[i] * Q[i * d + c];
                    A[r * d + c] = sum;
                }
            double bound = 2 * sqrt(kappa) / (1 + kappa);
            /* A is formed in binary64: its smallest eigenvalue moves by about u kappa */
            double tol = 1e-12 + 64 * DBL_EPSILON * kappa;
            int below = 0, over = 0, mismatch = 0;
            for (int trial = 0; trial <= 200; trial++) {
                double k[32], al[32];
                if (trial < 200) {
                    rand_unit(k, d, &s);
                } else { /* the extremal direction: sqrt(kappa) q_1 + q_d, normalized */
                    double x = sqrt(kappa / (1 + kappa)), y = sqrt(1 / (1 + kappa));
                    for (int i = 0; i < d; i++)
                        k[i] = x * Q[i] + y * Q[(d - 1) * d + i];
                }
                for (int r = 0; r < d; r++)
                    al[r] = dot(A + r * d, k, d);
                scale(al, d, 1 / sqrt(dot(al, al, d)));
                double c = dot(al, k, d);
                double n = vla_jac_norm_unit(c);
                below += c < bound * (1 - tol);
                over += !(n >= 1 && n < golden);
                mismatch += fabs(vla_jac_norm(k, al, d) - n) > 1e-12 * n;
                if (trial == 200 && kappa > 1)
                    CHECK_MSG(fabs(c - bound) <= tol * bound,
                              "d=%d kappa=%g: extremal c %.17g, bound %.17g", d, kappa, c, bound);
            }
            CHECK_MSG(below == 0, "d=%d kappa=%g: %d cosines below the bound", d, kappa, below);
            CHECK_MSG(over == 0, "d=%d kappa=%g: %d norms outside [1, golden)", d, kappa, over);
            CHECK_MSG(mismatch == 0, "d=%d kappa=%g: %d general/unit mismatches", d, kappa,
                      mismatch);
        }
}

/* ---- Frobenius norms and the symmetry defect ---- */

TEST(fro_extreme_magnitudes)
{
    double x[3] = {3e-300, 4e-300, 0};
    CHECK_REL(vla_fro(x, 3), 5e-300, 1e-15);
    double y[2] = {3e300, -4e300};
    CHECK_REL(vla_fro(y, 2), 5e300, 1e-15);
    double sub[2] = {3 * 0x1p-1074, 4 * 0x1p-1074};
    CHECK(vla_fro(sub, 2) == 5 * 0x1p-1074);
    double mixed[3] = {1e300, 1e-300, 1};
    CHECK_REL(vla_fro(mixed, 3), 1e300, 1e-15);
    double big[4] = {DBL_MAX, DBL_MAX / 2, 0, 0};
    CHECK(isinf(vla_fro(big, 2))); /* the norm itself overflows */
    CHECK_REL(vla_fro(big, 1), DBL_MAX, 1e-16);
    long n = 1000000;
    double *many = malloc(sizeof(double) * n);
    for (long i = 0; i < n; i++)
        many[i] = 1e300;
    CHECK_REL(vla_fro(many, n), 1e303, 1e-12);
    for (long i = 0; i < n; i++)
        many[i] = 1e-300;
    CHECK_REL(vla_fro(many, n), 1e-297, 1e-12);
    /* ordinary values: against the plain formula */
    uint64_t s = 1;
    double plain = 0;
    for (long i = 0; i < 1000; i++) {
        many[i] = rng_gauss(&s);
        plain += many[i] * many[i];
    }
    CHECK_REL(vla_fro(many, 1000), sqrt(plain), 1e-13);
    free(many);
    double z[2] = {0, -0.0};
    CHECK(vla_fro(z, 2) == 0);
    CHECK(vla_fro(z, 0) == 0);
    double bad[3] = {1, INFINITY, NAN};
    CHECK(isinf(vla_fro(bad, 2)));
    CHECK(isnan(vla_fro(bad, 3)));
}

TEST(fro_diff)
{
    double x[2] = {1e300 + 3e285, 2e-300}, y[2] = {1e300, -2e-300};
    CHECK_REL(vla_fro_diff(x, y, 2), (1e300 + 3e285) - 1e300, 1e-15);
    double a[2] = {1.5e-300, 1}, b[2] = {-1.5e-300, 1};
    CHECK_REL(vla_fro_diff(a, b, 2), 3e-300, 1e-15);
    double c[3] = {1, 2, 3}, e[3] = {4, 6, 3};
    CHECK_REL(vla_fro_diff(c, e, 3), 5, 1e-16);
    double h[1] = {DBL_MAX}, g[1] = {-DBL_MAX};
    CHECK(isinf(vla_fro_diff(h, g, 1)));
}

TEST(sym_defect)
{
    int d = 6;
    double A[36];
    uint64_t s = 4;
    for (int i = 0; i < d; i++)
        for (int j = 0; j <= i; j++)
            A[i * d + j] = A[j * d + i] = rng_gauss(&s);
    CHECK(vla_sym_defect(A, d) == 0);
    double eps = 1e-7;
    A[1 * d + 4] += eps;
    CHECK_REL(vla_sym_defect(A, d), sqrt(2) * eps / vla_fro(A, d * d), 1e-8);
    /* entries near the overflow threshold: A - A^T overflows, the ratio is 2 */
    double B[4] = {0, 1e308, -1e308, 0};
    CHECK_REL(vla_sym_defect(B, 2), 2, 1e-15);
    double C[4] = {0, 0x1p-1074, 0, 0};
    CHECK_REL(vla_sym_defect(C, 2), sqrt(2), 1e-15);
    double Z[4] = {0};
    CHECK(vla_sym_defect(Z, 2) == 0);
    Z[1] = NAN;
    CHECK(isnan(vla_sym_defect(Z, 2)));
}

/* ---- the Lyapunov tracker ---- */

TEST(lyap_projectors_do_not_grow)
{
    int d = 8;
    vla_lyap l;
    CHECK_EQ_INT(vla_lyap_init(&l, d, 42), VLA_OK);
    CHECK(isnan(vla_lyap_exponent(&l)));
    CHECK_REL(sqrt(dot(l.x, l.x, d)), 1, 1e-15);
    uint64_t s = 8;
    double maxe = -INFINITY;
    for (int t = 0; t < 1000; t++) {
        double k[8];
        rand_unit(k, d, &s);
        vla_lyap_step(&l, k, k); /* alpha = k': J an orthogonal projector */
        double e = vla_lyap_exponent(&l);
        if (e > maxe)
            maxe = e;
    }
    CHECK_MSG(maxe <= 1e-15, "largest exponent %g", maxe);
    CHECK(vla_lyap_exponent(&l) < 0); /* random projections do shrink */
    CHECK_EQ_INT(l.t, 1000);
    vla_lyap_free(&l);
    CHECK(l.x == NULL);
}

TEST(lyap_seed_and_errors)
{
    vla_lyap a, b, c;
    CHECK_EQ_INT(vla_lyap_init(&a, 16, 1), VLA_OK);
    CHECK_EQ_INT(vla_lyap_init(&b, 16, 1), VLA_OK);
    CHECK_EQ_INT(vla_lyap_init(&c, 16, 2), VLA_OK);
    CHECK(memcmp(a.x, b.x, 16 * sizeof(double)) == 0);
    CHECK(memcmp(a.x, c.x, 16 * sizeof(double)) != 0);
    vla_lyap_free(&a);
    vla_lyap_free(&b);
    vla_lyap_free(&c);
    vla_lyap e;
    CHECK(vla_lyap_init(&e, 0, 1) < 0);
    CHECK(e.x == NULL);
    vla_lyap_free(&e);
}

static void matmul(double *C, const double *A, const double *B, int d)
{
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (int k = 0; k < d; k++)
                s += A[i * d + k] * B[k * d + j];
            C[i * d + j] = s;
        }
}

/* J = I - k a^T fixed: x_0 J^t from explicit powers of J; with a orthogonal to k, J^t is
 * I - t k a^T exactly, so ||J^t||_2 = vla_jac_norm(k, t a) bounds the growth. */
TEST(lyap_fixed_J_vs_matrix_powers)
{
    int d = 4;
    static const double cs[] = {0, 0.3, -0.7};
    uint64_t s = 21;
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        double k[4], a[4], J[16], P[16], T[16], x0[4];
        rand_unit(k, d, &s);
        unit_with_cos(a, k, cs[ci], d, &s);
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++)
                J[i * d + j] = (i == j) - k[i] * a[j];
        memcpy(P, J, sizeof P);
        vla_lyap l;
        vla_lyap_init(&l, d, 5 + ci);
        memcpy(x0, l.x, sizeof x0);
        for (int t = 1; t <= 12; t++) {
            vla_lyap_step(&l, k, a);
            double y[4] = {0};
            for (int j = 0; j < d; j++)
                for (int i = 0; i < d; i++)
                    y[j] += x0[i] * P[i * d + j];
            double want = log(sqrt(dot(y, y, d))) / t;
            CHECK_MSG(fabs(vla_lyap_exponent(&l) - want) <= 1e-13,
                      "c=%g t=%d: %.17g vs %.17g", cs[ci], t, vla_lyap_exponent(&l), want);
            CHECK(vla_lyap_exponent(&l) <= log(vla_jac_norm_unit(cs[ci])) + 1e-15);
            if (cs[ci] == 0) {
                double ta[4];
                memcpy(ta, a, sizeof ta);
                scale(ta, d, t);
                CHECK(vla_lyap_exponent(&l) <= log(vla_jac_norm(k, ta, d)) / t + 1e-15);
            }
            matmul(T, P, J, d);
            memcpy(P, T, sizeof P);
        }
        vla_lyap_free(&l);
    }
}

/* Varying, non-unit J_t: x_0 J_1 J_2 ... J_t against the explicit product (the order matters,
 * since S_t = S_{t-1} J_t acts from the right). */
TEST(lyap_varying_J_vs_product)
{
    int d = 5;
    double P[25], T[25], J[25], x0[5];
    for (int i = 0; i < 25; i++)
        P[i] = i % 6 == 0;
    vla_lyap l;
    vla_lyap_init(&l, d, 9);
    memcpy(x0, l.x, sizeof x0);
    uint64_t s = 31;
    for (int t = 1; t <= 20; t++) {
        double k[5], a[5];
        for (int i = 0; i < d; i++) {
            k[i] = rng_gauss(&s);
            a[i] = 0.7 * rng_gauss(&s);
        }
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++)
                J[i * d + j] = (i == j) - k[i] * a[j];
        matmul(T, P, J, d);
        memcpy(P, T, sizeof P);
        vla_lyap_step(&l, k, a);
        double y[5] = {0};
        for (int j = 0; j < d; j++)
            for (int i = 0; i < d; i++)
                y[j] += x0[i] * P[i * d + j];
        double want = log(sqrt(dot(y, y, d))) / t;
        CHECK_MSG(fabs(vla_lyap_exponent(&l) - want) <= 1e-12 * (1 + fabs(want)),
                  "t=%d: %.17g vs %.17g", t, vla_lyap_exponent(&l), want);
    }
    vla_lyap_free(&l);
}

/* ---- checkpoints and slopes ---- */

static int check_checkpoints(long T, const long *out, long n)
{
    int ok = n >= 1 && out[0] == 1 && out[n - 1] == T;
    for (long i = 1; i < n; i++)
        ok &= out[i] > out[i - 1];
    return ok;
}

TEST(checkpoints)
{
    static long out[200];
    CHECK_EQ_INT(vla_checkpoints(1, 10, out, 200), 1);
    CHECK_EQ_INT(out[0], 1);
    static const long ten[] = {1, 2, 3, 4, 5, 6, 8, 10};
    CHECK_EQ_INT(vla_checkpoints(10, 10, out, 200), 8);
    CHECK(memcmp(out, ten, sizeof ten) == 0);
    static const long three[] = {1, 2, 5, 10, 22, 46, 100, 215, 464, 1000};
    CHECK_EQ_INT(vla_checkpoints(1000, 3, out, 200), 10);
    CHECK(memcmp(out, three, sizeof three) == 0);

    static const long Ts[] = {1000, 12345, 10000000};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) {
        long T = Ts[i], n = vla_checkpoints(T, 10, out, 200);
        CHECK_MSG(check_checkpoints(T, out, n), "T=%ld: not 1 ... T ascending", T);
        /* every full decade after the first holds per_decade points */
        for (long lo = 10; lo * 10 <= T; lo *= 10) {
            int m = 0;
            for (long j = 0; j < n; j++)
                m += out[j] >= lo && out[j] < lo * 10;
            CHECK_MSG(m >= 9 && m <= 11, "T=%ld: %d points in [%ld, %ld)", T, m, lo, lo * 10);
        }
    }
    long n7 = vla_checkpoints(10000000, 10, out, 200);
    CHECK_MSG(n7 >= 65 && n7 <= 71, "T=1e7: %ld points", n7);

    /* max bounds the writes, not the count */
    long few[6] = {0, 0, 0, 0, 0, -7};
    CHECK_EQ_INT(vla_checkpoints(1000, 10, few, 5), vla_checkpoints(1000, 10, out, 200));
    CHECK(few[5] == -7 && few[4] == out[4]);
    CHECK_EQ_INT(vla_checkpoints(1000, 10, NULL, 0), vla_checkpoints(1000, 10, out, 200));
    CHECK_EQ_INT(vla_checkpoints(0, 10, out, 200), 0);
    CHECK(vla_checkpoints(100, 0, out, 200) < 0);
    long nbig = vla_checkpoints(4000000000000000000L, 10, out, 200);
    CHECK(nbig > 180 && nbig <= 200 && out[nbig - 1] == 4000000000000000000L);
}

TEST(loglog_slope)
{
    double x[100], y[100];
    for (int i = 0; i < 100; i++) {
        x[i] = i + 1;
        y[i] = 3 * x[i] * x[i];
    }
    CHECK_NEAR(vla_loglog_slope(x, y, 100), 2, 1e-12);
    x[0] = 0;
    y[5] = -1;
    y[6] = 0;
    CHECK_NEAR(vla_loglog_slope(x, y, 100), 2, 1e-12);
    for (int i = 0; i < 100; i++)
        y[i] = 5 / (x[i] + 1e-300);
    CHECK_NEAR(vla_loglog_slope(x + 1, y + 1, 99), -1, 1e-12);
    CHECK(isnan(vla_loglog_slope(x + 1, y + 1, 1)));
    double same[3] = {2, 2, 2};
    CHECK(isnan(vla_loglog_slope(same, y, 3)));
}

/* ---- the .dat writer ---- */

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    } else {
        buf[n] = 0;
    }
    fclose(f);
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static char tmpdir[64];

static const char *scratch(void)
{
    if (!tmpdir[0]) {
        strcpy(tmpdir, "/tmp/vlastab-test-XXXXXX");
        if (!mkdtemp(tmpdir))
            tmpdir[0] = 0;
    }
    return tmpdir;
}

/* each test that used the scratch directory removes it, so that any subset of tests can run */
static void scratch_done(void)
{
    if (tmpdir[0])
        rmdir(tmpdir);
    tmpdir[0] = 0;
}

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

TEST(dat_roundtrip_and_header)
{
    char path[128], tmp[160];
    snprintf(path, sizeof path, "%s/table.dat", scratch());
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    char *argv[] = {"/usr/bin/drift", "--d", "32", "it's a test", "", "a\"b", NULL};
    vla_dat *f;
    CHECK_EQ_INT(vla_dat_open(&f, path, 6, argv), VLA_OK);
    if (!f)
        return;
    CHECK_EQ_INT(vla_dat_meta(f, "model", "%s", "vla3"), VLA_OK);
    CHECK_EQ_INT(vla_dat_meta(f, "d", "%d", 32), VLA_OK);
    CHECK_EQ_INT(vla_dat_meta(f, "note", "two\nlines"), VLA_OK); /* kept on one line */
    CHECK(vla_dat_meta(f, "bad key", "x") == VLA_EINVAL);
    CHECK(vla_dat_meta(f, "columns", "x") == VLA_EINVAL);
    CHECK(vla_dat_row(f, (double[]){1}, 1) == VLA_EINVAL); /* no columns yet */
    CHECK_EQ_INT(vla_dat_columns(f, "  t x\ty  "), VLA_OK);
    CHECK(vla_dat_columns(f, "t x y") == VLA_EINVAL);
    CHECK(vla_dat_meta(f, "late", "1") == VLA_EINVAL);

    enum { NROW = 110 };
    static double rows[NROW][3];
    double fixed[][3] = {{1, 0.1, 1e-300},          {2, -0.0, 0x1p-1074},
                         {DBL_MAX, NAN, -INFINITY}, {1 / 3.0, 3.141592653589793, 0x1p53 - 1},
                         {-1e22, 123456789012, 0x1p53}, {INFINITY, 5e-324, 1e300 / 7}};
    int nfixed = sizeof fixed / sizeof fixed[0];
    uint64_t s = 17;
    for (int r = 0; r < NROW; r++)
        for (int c = 0; c < 3; c++) {
            if (r < nfixed) {
                rows[r][c] = fixed[r][c];
            } else {
                double v;
                do { /* random bit patterns: every exponent and mantissa */
                    uint64_t u = rng_next(&s);
                    memcpy(&v, &u, sizeof v);
                } while (!isfinite(v));
                rows[r][c] = v;
            }
        }
    for (int r = 0; r < NROW; r++) {
        if (r == 50)
            CHECK_EQ_INT(vla_dat_block(f), VLA_OK);
        CHECK_EQ_INT(vla_dat_row(f, rows[r], 3), VLA_OK);
    }
    CHECK(vla_dat_row(f, rows[0], 2) == VLA_EINVAL);
    CHECK(vla_dat_row(f, rows[0], 4) == VLA_EINVAL);
    /* before close only the temporary exists */
    CHECK(!exists(path));
    CHECK(exists(tmp));
    CHECK_EQ_INT(vla_dat_close(f), VLA_OK);
    CHECK(exists(path));
    CHECK(!exists(tmp));

    char *text = read_all(path);
    CHECK(text != NULL);
    if (!text)
        return;
    char *save, *line = strtok_r(text, "\n", &save);
    const char *want[] = {("# vlastab " VLA_VERSION), "# program: drift",
                          "# command: /usr/bin/drift --d 32 'it'\\''s a test' '' 'a\"b'"};
    int nh = 0, seen_columns = 0, header_after_data = 0, r = 0, mismatch = 0;
    char keys[16][32];
    for (; line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') {
            CHECK(line[1] == ' ');
            if (r > 0 || seen_columns)
                header_after_data = 1;
            if (nh < 3)
                CHECK_MSG(strcmp(line, want[nh]) == 0, "header line %d: '%s'", nh, line);
            if (nh < 16)
                sscanf(line, "# %31[^:]", keys[nh]);
            if (strncmp(line, "# columns:", 10) == 0) {
                seen_columns = 1;
                CHECK(strcmp(line, "# columns: t x y") == 0);
            }
            if (strncmp(line, "# date: ", 8) == 0) {
                int Y, M, D, h, m, sec;
                char z = 0;
                CHECK(sscanf(line + 8, "%4d-%2d-%2dT%2d:%2d:%2d%c", &Y, &M, &D, &h, &m, &sec,
                             &z) == 7 && z == 'Z' && Y >= 2024);
            }
            nh++;
            continue;
        }
        char *p = line, *end;
        for (int c = 0; c < 3; c++) {
            double v = strtod(p, &end);
            CHECK(end != p);
            double w = rows[r < NROW ? r : 0][c];
            if (isnan(w) ? !isnan(v) : bits(v) != bits(w)) {
                if (mismatch++ < 3)
                    CHECK_MSG(0, "row %d col %d: wrote %a, read back %a", r, c, w, v);
            }
            p = end;
        }
        CHECK(*p == 0);
        r++;
    }
    CHECK(!header_after_data);
    CHECK_EQ_INT(mismatch, 0);
    CHECK_EQ_INT(r, NROW);
    static const char *order[] = {("vlastab " VLA_VERSION), "program", "command", "date", "host",
                                  "processor", "git", "model", "d", "note", "columns"};
    CHECK_EQ_INT(nh, 11);
    for (int i = 0; i < nh && i < 11; i++)
        CHECK_MSG(strcmp(keys[i], order[i]) == 0, "header %d is '%s', want '%s'", i, keys[i],
                  order[i]);
    free(text);

    /* the block separator is two blank lines, and the exact text of a few numbers */
    text = read_all(path);
    CHECK(strstr(text, "\n\n\n") != NULL && strstr(text, "\n\n\n\n") == NULL);
    CHECK(strstr(text, "\n1 0.1 1.0000000000000001e-300\n") ||
          strstr(text, "\n1 0.1 1e-300\n"));
    CHECK(strstr(text, "\n1.7976931348623157e+308 nan -inf\n") != NULL);
    CHECK(strstr(text, "# note: two?lines\n") != NULL);
    free(text);
    unlink(path);
    scratch_done();
}

/* Name cells: tables write "vla3", not 4. A cell that would read back as a number, or is not one
 * word, is refused, so that no reader can take a name for a value. */
TEST(dat_named_cells)
{
    char path[128];
    snprintf(path, sizeof path, "%s/named.dat", scratch());
    char *argv[] = {"vla-test", NULL};
    vla_dat *f;
    CHECK_EQ_INT(vla_dat_open(&f, path, 1, argv), VLA_OK);
    if (!f)
        return;
    CHECK_EQ_INT(vla_dat_columns(f, "model prec d ns"), VLA_OK);
    const char *ok[] = {"vla3", "f16-f32", NULL, NULL};
    CHECK_EQ_INT(vla_dat_row_named(f, (double[]){4, 4, 32, 0.5}, ok, 4), VLA_OK);
    const char *bad[] = {"-0", "nan", "inf", "1e3", ".5", "sm sym", "", "a#b"};
    for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++)
        CHECK_MSG(vla_dat_row_named(f, (double[]){0, 0, 0, 0}, (const char *[]){bad[i], NULL, NULL, NULL},
                                    4) == VLA_EINVAL,
                  "'%s' accepted as a name", bad[i]);
    CHECK_EQ_INT(vla_dat_row(f, (double[]){-1, 1, 16, 2}, 4), VLA_OK);
    CHECK_EQ_INT(vla_dat_close(f), VLA_OK);
    char *text = read_all(path);
    CHECK(text && strstr(text, "\n# columns: model prec d ns\nvla3 f16-f32 32 0.5\n-1 1 16 2\n"));
    free(text);
}

TEST(dat_unwritable)
{
    char *argv[] = {"prog", NULL};
    vla_dat *f = (vla_dat *)1;
    CHECK_EQ_INT(vla_dat_open(&f, "/nonexistent-vlastab-dir/x.dat", 1, argv), VLA_EIO);
    CHECK(f == NULL);
    /* root may write anywhere but not create files in /proc */
    CHECK_EQ_INT(vla_dat_open(&f, "/proc/vlastab-test.dat", 1, argv), VLA_EIO);
    CHECK(f == NULL);
    CHECK(vla_dat_open(&f, "", 1, argv) == VLA_EINVAL);
}

/* A FIFO (like /dev/null or a pipe) is written in place, never renamed over. The FIFO lives in
 * the scratch directory so that a regression replaces nothing outside it (a real device such as
 * /dev/full would be replaced, when the tests run as root). */
TEST(dat_special_file_in_place)
{
    char fifo[128], tmp[160];
    snprintf(fifo, sizeof fifo, "%s/pipe", scratch());
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", fifo, (long)getpid());
    CHECK(mkfifo(fifo, 0600) == 0);
    fflush(NULL);
    pid_t reader = fork();
    if (reader == 0) {
        alarm(10); /* if the writer never opens the FIFO, do not hang the suite */
        int fd = open(fifo, O_RDONLY);
        char buf[4096];
        long total = 0;
        ssize_t n;
        while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
            total += n;
        _exit(total > 0 ? 0 : 1);
    }
    char *argv[] = {"prog", NULL};
    vla_dat *f;
    CHECK_EQ_INT(vla_dat_open(&f, fifo, 1, argv), VLA_OK);
    if (f) {
        vla_dat_columns(f, "a");
        vla_dat_row(f, (double[]){1}, 1);
        CHECK_EQ_INT(vla_dat_close(f), VLA_OK);
    }
    int status = 0;
    if (!f) /* the reader is blocked in open() */
        kill(reader, SIGKILL);
    waitpid(reader, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(!exists(tmp));
    unlink(fifo);
    unlink(tmp);
    scratch_done();
}

/* A symlink at the table's name is replaced by the table, a regular file; the file it named is
 * left as it was (lib/file.h: a file a program writes never follows a link it did not create). */
TEST(dat_symlink)
{
    char target[128], link_[128];
    snprintf(target, sizeof target, "%s/target.dat", scratch());
    snprintf(link_, sizeof link_, "%s/link.dat", scratch());
    FILE *o = fopen(target, "w");
    CHECK(o != NULL);
    if (!o)
        return;
    fputs("old\n", o);
    fclose(o);
    CHECK(symlink("target.dat", link_) == 0);
    char *argv[] = {"prog", NULL};
    vla_dat *f;
    CHECK_EQ_INT(vla_dat_open(&f, link_, 1, argv), VLA_OK);
    if (f) {
        vla_dat_columns(f, "a");
        vla_dat_row(f, (double[]){7}, 1);
        CHECK_EQ_INT(vla_dat_close(f), VLA_OK);
    }
    struct stat st;
    CHECK(lstat(link_, &st) == 0 && S_ISREG(st.st_mode));
    char *text = read_all(link_);
    CHECK(text && strstr(text, "# columns: a\n7\n") != NULL);
    free(text);
    text = read_all(target);
    CHECK_MSG(text && !strcmp(text, "old\n"), "the link's target was written: %.40s",
              text ? text : "(gone)");
    free(text);
    unlink(link_);
    unlink(target);
    scratch_done();
}

/* A write that fails (here: past the file-size limit) is reported by close, and the table is
 * discarded. In a child, since the limit is per process. */
TEST(dat_write_error)
{
    char path[128];
    snprintf(path, sizeof path, "%s/big.dat", scratch());
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(3);
        char *argv[] = {"prog", NULL};
        vla_dat *f;
        if (vla_dat_open(&f, path, 1, argv) != 0)
            _exit(4);
        vla_dat_columns(f, "a b");
        for (int i = 0; i < 10000; i++)
            vla_dat_row(f, (double[]){i, 1.0 / (i + 1)}, 2);
        _exit(vla_dat_close(f) == VLA_EIO ? 0 : 5);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)pid);
    CHECK(!exists(path));
    CHECK(!exists(tmp));
    unlink(path);
    unlink(tmp);
    scratch_done();
}

/* A writer that dies before close leaves PATH as it was (here: absent, or its old content) and
 * only PATH.tmp.PID behind (which the next writer of PATH removes: test_reliability.c). */
TEST(dat_crash_leaves_no_table)
{
    char path[128], tmp[160];
    snprintf(path, sizeof path, "%s/crash.dat", scratch());
    for (int old = 0; old < 2; old++) {
        unlink(path);
        if (old) {
            FILE *o = fopen(path, "w");
            fputs("old\n", o);
            fclose(o);
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            char *argv[] = {"prog", NULL};
            vla_dat *f;
            if (vla_dat_open(&f, path, 1, argv) != 0)
                _exit(3);
            vla_dat_columns(f, "a b");
            for (int i = 0; i < 5000; i++) /* past stdio's buffer: some of it reaches the file */
                vla_dat_row(f, (double[]){i, 2.5 * i}, 2);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)pid);
        CHECK(exists(tmp));
        if (old) {
            char *text = read_all(path);
            CHECK(text && strcmp(text, "old\n") == 0);
            free(text);
        } else {
            CHECK(!exists(path));
        }
        unlink(tmp);
    }
    unlink(path);

    /* closed before its columns line: refused, and nothing is left */
    char *argv[] = {"prog", NULL};
    vla_dat *f;
    CHECK_EQ_INT(vla_dat_open(&f, path, 1, argv), VLA_OK);
    vla_dat_meta(f, "k", "v");
    CHECK(vla_dat_close(f) < 0);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK(!exists(path));
    CHECK(!exists(tmp));
    scratch_done();
}

TEST(dat_stdout)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stdout.dat", scratch());
    fflush(stdout);
    int saved = dup(1);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(saved >= 0 && fd >= 0);
    if (saved < 0 || fd < 0)
        return;
    dup2(fd, 1);
    close(fd);
    vla_dat *f;
    int rc_open = vla_dat_open(&f, "-", 0, NULL), rc_close = VLA_EIO;
    if (rc_open == 0) {
        vla_dat_columns(f, "x");
        vla_dat_row(f, (double[]){0.25}, 1);
        rc_close = vla_dat_close(f);
    }
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    CHECK_EQ_INT(rc_open, VLA_OK);
    CHECK_EQ_INT(rc_close, VLA_OK);
    char *text = read_all(path);
    CHECK(text && strncmp(text, "# vlastab ", 10) == 0);
    CHECK(text && strstr(text, "# columns: x\n0.25\n") != NULL);
    free(text);
    unlink(path);
    scratch_done();
}
