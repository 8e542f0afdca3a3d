/* test_model.c: the primitives and models of lib/ against computations we can trust without
 * LAPACK or MPFR: hand-solved 2x2 and 3x3 cases, the rls closed form solved by Cramer's rule,
 * woodbury against repeated rank-1 steps, and bad input (an error code, never a NaN or a crash). */
#include "check.h"
#include "vlaref.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>

static const double u64 = 0x1p-53;

static vla_model *new_model(vla_model_kind k, vla_prec p, int d, int dv)
{
    vla_config c;
    vla_model *m = NULL;
    vla_config_default(&c, k, d);
    c.dv = dv;
    c.prec = p;
    int r = vla_model_new(&m, &c);
    CHECK_MSG(r == 0, "vla_model_new: %s", vla_strerror(r));
    return m;
}

static int step(vla_model *m, const double *q, const double *k, const double *v, const double *u)
{
    vla_input in = {.q = q, .k = k, .v = v, .u = u, .beta = NAN, .decay = NAN};
    return vla_model_step(m, &in);
}

/* M = I + u u^T with u = (1, 1): A = M^-1 = [[2, -1], [-1, 2]] / 3; then u = (1, 0) gives
 * M = [[3, 1], [1, 2]], A = [[2, -1], [-1, 3]] / 5 */
TEST(sm_update_2x2_by_hand)
{
    double A[4] = {1, 0, 0, 1}, u1[2] = {1, 1}, u2[2] = {1, 0};
    long fb = 0;
    for (int sym = 0; sym < 2; sym++) {
        double B[4];
        memcpy(B, A, sizeof B);
        int (*f)(double *, const double *, int, double, long *) =
            sym ? vla_sm_sym_update_f64 : vla_sm_update_f64;
        CHECK(f(B, u1, 2, 1e-6, &fb) == 0);
        CHECK_NEAR(B[0], 2.0 / 3, 4 * u64);
        CHECK_NEAR(B[1], -1.0 / 3, 4 * u64);
        CHECK(B[1] == B[2]);
        CHECK(f(B, u2, 2, 1e-6, &fb) == 0);
        CHECK_NEAR(B[0], 0.4, 8 * u64);
        CHECK_NEAR(B[1], -0.2, 8 * u64);
        CHECK_NEAR(B[3], 0.6, 8 * u64);
    }
    CHECK_EQ_INT(fb, 0);
}

/* 3x3: M = I + u1 u1^T + u2 u2^T with small integers; the inverse by cofactors */
static void inverse3(const double *M, double *A)
{
    double c00 = M[4] * M[8] - M[5] * M[7], c01 = M[5] * M[6] - M[3] * M[8],
           c02 = M[3] * M[7] - M[4] * M[6];
    double det = M[0] * c00 + M[1] * c01 + M[2] * c02;
    A[0] = c00 / det;
    A[1] = (M[2] * M[7] - M[1] * M[8]) / det;
    A[2] = (M[1] * M[5] - M[2] * M[4]) / det;
    A[3] = c01 / det;
    A[4] = (M[0] * M[8] - M[2] * M[6]) / det;
    A[5] = (M[2] * M[3] - M[0] * M[5]) / det;
    A[6] = c02 / det;
    A[7] = (M[1] * M[6] - M[0] * M[7]) / det;
    A[8] = (M[0] * M[4] - M[1] * M[3]) / det;
}

TEST(sm_and_woodbury_3x3_by_cofactors)
{
    double U[6] = {1, 2, -1, 0, 1, 3};
    double M[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Aref[9];
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                M[i * 3 + j] += U[r * 3 + i] * U[r * 3 + j];
    inverse3(M, Aref);
    double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, W[9];
    memcpy(W, A, sizeof A);
    for (int r = 0; r < 2; r++)
        CHECK(vla_sm_update_f64(A, U + 3 * r, 3, 0, NULL) == 0);
    CHECK(vla_woodbury_f64(W, U, 2, 3, 0, NULL) == 0);
    /* cond(M) < 30 here; each entry within 30 * 3 * 2 * u of the cofactor inverse */
    for (int i = 0; i < 9; i++) {
        CHECK_NEAR(A[i], Aref[i], 180 * u64);
        CHECK(memcmp(&A[i], &W[i], sizeof(double)) == 0); /* the same operations: the same bits */
    }
    /* f32: the same bound in u32 */
    float Af[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Uf[6];
    for (int i = 0; i < 6; i++)
        Uf[i] = (float)U[i];
    CHECK(vla_woodbury_f32(Af, Uf, 2, 3, 0, NULL) == 0);
    for (int i = 0; i < 9; i++)
        CHECK_NEAR(Af[i], Aref[i], 180 * 0x1p-24);
}

/* the guard: delta = 1 + u^T A u below eps_g (an indefinite A makes it so) skips the update and
 * adds eps_g I */
TEST(sm_guard_fallback)
{
    double A[4] = {-1, 0, 0, 1}, u[2] = {1, 0};
    long fb = 0;
    CHECK(vla_sm_update_f64(A, u, 2, 1e-6, &fb) == 0); /* delta = 1 - 1 = 0 */
    CHECK_EQ_INT(fb, 1);
    CHECK(A[0] == -1 + 1e-6 && A[3] == 1 + 1e-6 && A[1] == 0);
    double u2[2] = {NAN, 0};
    CHECK(vla_sm_update_f64(A, u2, 2, 1e-6, &fb) == VLA_ENONFINITE);
    CHECK(vla_sm_update_f64(A, u, 0, 1e-6, &fb) == VLA_ERANGE);
    CHECK(vla_sm_update_f64(A, u, 257, 1e-6, &fb) == VLA_ERANGE);
    double s;
    double k[2] = {3, 4}, q[2] = {1, INFINITY};
    CHECK(vla_score_f64(&s, k, k, 2) == 0 && fabs(s - 25 / sqrt(2.0)) <= 2 * u64 * s);
    CHECK(vla_score_f64(&s, k, q, 2) == VLA_ENONFINITE);
}

TEST(primitives_alpha_modulate_renorm_nudge)
{
    double A[4] = {2, 1, 1, 3}, sv[2] = {1, -1}, al[2];
    vla_alpha_f64(al, A, sv, 2);
    CHECK(al[0] == 1 && al[1] == -2);
    double S[6] = {0}, v[3] = {1, 2, 3};
    vla_modulate_f64(S, v, al, 3, 2);
    CHECK(S[0] == 1 && S[1] == -2 && S[4] == 3 && S[5] == -6);
    CHECK(vla_renorm_f64(S, 3, 2, 100) == 0); /* ||S||_F = sqrt(70) < 100: untouched */
    CHECK(vla_renorm_f64(S, 3, 2, 1) == 1);
    double f = 0;
    for (int i = 0; i < 6; i++)
        f += S[i] * S[i];
    CHECK_NEAR(f, 1, 8 * u64);
    vla_nudge_f64(A, 2, 0.5);
    CHECK(A[0] == 2.5 && A[3] == 3.5 && A[1] == 1);
    /* a 16-bit policy rounds: 1 + 2^-12 is not a binary16 number */
    float Ah[4] = {1, 0, 0, 1};
    vla_nudge_f16(Ah, 2, 0x1p-12f);
    CHECK(Ah[0] == 1.0f);
    vla_nudge_f32(Ah, 2, 0x1p-12f);
    CHECK(Ah[0] == 1.0f + 0x1p-12f);
}

/* la over two steps by hand: S = v1 phi(k1)^T + v2 phi(k2)^T, n = phi(k1) + phi(k2),
 * o = S phi(q) / (n . phi(q)) */
TEST(la_two_steps_by_hand)
{
    double k1[2] = {0.5, -1}, k2[2] = {-0.25, 2}, v1[2] = {1, 2}, v2[2] = {-3, 1}, q[2] = {0.1, -0.2};
    vla_model *m = new_model(VLA_LA, VLA_F64, 2, 2);
    CHECK(step(m, q, k1, v1, NULL) == 0 && step(m, q, k2, v2, NULL) == 0);
    double p1[2] = {1.5, exp(-1)}, p2[2] = {exp(-0.25), 3}, pq[2] = {1.1, exp(-0.2)};
    double S[4], o[2], n[2];
    vla_model_get(m, VLA_Q_S, S);
    vla_model_get(m, VLA_Q_O, o);
    vla_model_get(m, VLA_Q_N, n);
    double den = (p1[0] + p2[0]) * pq[0] + (p1[1] + p2[1]) * pq[1];
    for (int i = 0; i < 2; i++) {
        double vi1 = v1[i], vi2 = v2[i];
        CHECK_NEAR(S[i * 2 + 0], vi1 * p1[0] + vi2 * p2[0], 8 * u64 * 8);
        CHECK_NEAR(S[i * 2 + 1], vi1 * p1[1] + vi2 * p2[1], 8 * u64 * 8);
        double num = S[i * 2] * pq[0] + S[i * 2 + 1] * pq[1];
        CHECK_NEAR(o[i], num / den, 16 * u64 * fabs(num / den) + 1e-300);
    }
    CHECK_NEAR(n[1], p1[1] + p2[1], 4 * u64 * 4);
    vla_model_free(m);
}

/* rls against its closed form S = V^T K (K^T K + I)^-1 at d = 2, solved by Cramer's rule */
TEST(rls_closed_form_2x2)
{
    double K[3][2] = {{1, 0.5}, {-0.3, 2}, {0.7, -1.1}}, V[3][2] = {{1, 0}, {0.2, -1}, {3, 0.4}};
    vla_model *m = new_model(VLA_RLS, VLA_F64, 2, 2);
    double q[2] = {0.3, 0.9};
    for (int t = 0; t < 3; t++)
        CHECK(step(m, q, K[t], V[t], NULL) == 0);
    double G[4] = {1, 0, 0, 1}, B[4] = {0}; /* G = K^T K + I, B = V^T K */
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                G[i * 2 + j] += K[t][i] * K[t][j];
                B[i * 2 + j] += V[t][i] * K[t][j];
            }
    double det = G[0] * G[3] - G[1] * G[2];
    double Gi[4] = {G[3] / det, -G[1] / det, -G[2] / det, G[0] / det};
    double S[4], A[4], o[2];
    vla_model_get(m, VLA_Q_S, S);
    vla_model_get(m, VLA_Q_A, A);
    vla_model_get(m, VLA_Q_O, o);
    /* cond(G) < 10, t = 3, d = 2: entries within 64 u of the exact ones (generous by 2x) */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double s = B[i * 2] * Gi[j] + B[i * 2 + 1] * Gi[2 + j];
            CHECK_NEAR(S[i * 2 + j], s, 64 * u64 * 4);
            CHECK_NEAR(A[i * 2 + j], Gi[i * 2 + j], 64 * u64);
        }
    CHECK_NEAR(o[0], S[0] * q[0] + S[1] * q[1], 4 * u64 * 4);
    vla_model_free(m);
}

/* vla3 one step at d = 2 by hand from A_0 = 10 I, S_0 = 0 */
TEST(vla3_one_step_by_hand)
{
    double u[2] = {3, 4}, k[2] = {0.5, -2}, v[2] = {2, -1}, q[2] = {1, 0};
    vla_model *m = new_model(VLA_VLA3, VLA_F64, 2, 2);
    CHECK(step(m, q, k, v, u) == 0);
    double up[2] = {0.6 / sqrt(2), 0.8 / sqrt(2)}; /* unit(u) / sqrt(d) */
    double z[2] = {10 * up[0], 10 * up[1]}, delta = 1 + up[0] * z[0] + up[1] * z[1]; /* 6 */
    double A[4] = {10 - z[0] * z[0] / delta, -z[0] * z[1] / delta, 0, 10 - z[1] * z[1] / delta};
    A[2] = A[1];
    double pk[2] = {1.5, exp(-2)}, nk = hypot(pk[0], pk[1]), kp[2] = {pk[0] / nk, pk[1] / nk};
    double al[2] = {A[0] * kp[0] + A[1] * kp[1], A[2] * kp[0] + A[3] * kp[1]},
           na = hypot(al[0], al[1]);
    al[0] /= na;
    al[1] /= na;
    double Am[4], S[4], o[2];
    vla_model_get(m, VLA_Q_A, Am);
    vla_model_get(m, VLA_Q_S, S);
    vla_model_get(m, VLA_Q_O, o);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(Am[i], A[i], 64 * u64 * 10);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) /* S_1 = v alpha^T (S_0 = 0) */
            CHECK_NEAR(S[i * 2 + j], v[i] * al[j], 64 * u64 * 2);
    double pq[2] = {2, 1}, den = pk[0] * pq[0] + pk[1] * pq[1];
    CHECK_NEAR(o[1], (S[2] * pq[0] + S[3] * pq[1]) / den, 64 * u64);
    const vla_counts *c = vla_model_counts(m);
    CHECK(c->guard == 0 && c->nudge == 0 && c->steps == 1);
    vla_model_free(m);
}

/* vla1: a large value makes ||e|| > 10, which is clipped; a huge one then drives ||S||_F past
 * 1000 and fires the clamp */
TEST(vla1_clip_and_clamp)
{
    double u[2] = {1, 0}, k[2] = {1, 0}, q[2] = {0, 1}, v[2] = {300, 400};
    vla_model *m = new_model(VLA_VLA1, VLA_F64, 2, 2);
    CHECK(step(m, q, k, v, u) == 0);
    double S[4], A[4];
    vla_model_get(m, VLA_Q_S, S);
    vla_model_get(m, VLA_Q_A, A);
    /* u' = u / sqrt(2): A = diag(1 / 1.5, 1); alpha = A k = (2/3, 0); e = v clipped to (6, 8) */
    CHECK_NEAR(A[0], 1 / 1.5, 8 * u64);
    CHECK_NEAR(S[0], 6 * (2.0 / 3), 32 * u64 * 4);
    CHECK_NEAR(S[2], 8 * (2.0 / 3), 32 * u64 * 6);
    CHECK_EQ_INT(vla_model_counts(m)->clip, 1);
    CHECK_EQ_INT(vla_model_counts(m)->clamp, 0);
    vla_model_free(m);
    vla_config c;
    vla_config_default(&c, VLA_VLA1, 2);
    CHECK(vla_config_set(&c, "clamp", "1") == 0);
    CHECK(vla_model_new(&m, &c) == 0);
    CHECK(step(m, q, k, v, u) == 0);
    CHECK_EQ_INT(vla_model_counts(m)->clamp, 1); /* ||S||_F = 6.67 > 1 */
    vla_model_get(m, VLA_Q_A, A);
    CHECK(A[0] == 1 / 1.5 + 1e-5 || fabs(A[0] - (1 / 1.5 + 1e-5)) <= 4 * u64);
    vla_model_free(m);
}

/* delta: gated rows and the scalar-decay form, one step after a first write, by hand */
TEST(delta_gated_and_decay)
{
    double k1[2] = {3, 4}, k2[2] = {0, 2}, v1[2] = {1, 2}, v2[2] = {-1, 1}, q[2] = {0, 0};
    double g[2] = {0.5, 0.25};
    for (int form = 0; form < 2; form++) {
        vla_config c;
        vla_model *m;
        vla_config_default(&c, VLA_DELTA, 2);
        c.delta_form = form ? VLA_DELTA_DECAY : VLA_DELTA_GATED;
        CHECK(vla_model_new(&m, &c) == 0);
        vla_input a = {.q = q, .k = k1, .v = v1, .beta = NAN, .decay = NAN}, b = {.q = q, .k = k2, .v = v2, .g = g, .beta = 0.5, .decay = 0.8};
        CHECK(vla_model_step(m, &a) == 0 && vla_model_step(m, &b) == 0);
        /* S1 = v1 k1'^T with k1' = (0.6, 0.8); k2' = (0, 1); S1 k2' = 0.8 v1 */
        double S1[4] = {0.6, 0.8, 1.2, 1.6}, S[4], Sx[4];
        for (int i = 0; i < 2; i++) {
            double s_i = form ? 0.8 : 1, gate = form ? 1 : g[i]; /* decay: S' = 0.8 S1 */
            double e = v2[i] - s_i * S1[i * 2 + 1];
            Sx[i * 2] = gate * s_i * S1[i * 2] + 0.5 * e * 0;
            Sx[i * 2 + 1] = gate * s_i * S1[i * 2 + 1] + 0.5 * e * 1;
        }
        vla_model_get(m, VLA_Q_S, S);
        for (int i = 0; i < 4; i++)
            CHECK_NEAR(S[i], Sx[i], 16 * u64 * 2);
        vla_model_free(m);
    }
    /* a decay outside [0, 1] is a range error; one of 0 in the inputs' format (bf16's smallest
     * subnormal is 2^-133) has no log, which a chunk refuses (seq and scan take it) */
    static const char *const forms[] = {"seq", "scan", "chunk:2"};
    for (int f = 0; f < 3; f++) {
        vla_config c;
        vla_model *m;
        vla_config_default(&c, VLA_DELTA, 2);
        c.delta_form = VLA_DELTA_DECAY;
        c.prec = VLA_BF16_KERN;
        CHECK(vla_form_parse(&c, forms[f]) == 0 && vla_model_new(&m, &c) == 0);
        vla_input a = {.q = q, .k = k1, .v = v1, .beta = NAN, .decay = 1.5}, b = a, z = a;
        b.decay = -0.25;
        z.decay = 0x1p-140;
        CHECK_EQ_INT(vla_model_step(m, &a), VLA_ERANGE);
        CHECK_EQ_INT(vla_model_step(m, &b), VLA_ERANGE);
        CHECK_EQ_INT(vla_model_step(m, &z), f == 2 ? VLA_ENOTSUP : VLA_OK);
        z.decay = 0x1p-130;
        CHECK_EQ_INT(vla_model_step(m, &z), VLA_OK);
        vla_error fe = {0};
        vla_form_input_check(&c, &(vla_input){.q = q, .k = k1, .v = v1, .beta = NAN, .decay = 0}, &fe);
        CHECK_MSG(f < 2 || (fe.code == VLA_ENOTSUP && strstr(fe.msg, "has no log")), "chunk: decay 0");
        vla_model_free(m);
    }
}

/* bad input: an error code, the state untouched, never a NaN */
TEST(bad_input_is_an_error)
{
    vla_config c;
    vla_model *m = NULL;
    vla_config_default(&c, VLA_VLA3, 4);
    c.d = 0;
    CHECK(vla_model_new(&m, &c) == VLA_ERANGE && m == NULL);
    c.d = 257;
    CHECK(vla_model_new(&m, &c) == VLA_ERANGE);
    c.d = 4;
    c.track = VLA_TRACK_CHOL; /* with the nudge on: not defined */
    CHECK(vla_model_new(&m, &c) == VLA_ENOTSUP);
    c.track = VLA_TRACK_SR; /* needs 16-bit storage with binary32 arithmetic */
    CHECK(vla_model_new(&m, &c) == VLA_ENOTSUP);
    c.track = VLA_TRACK_SM;
    c.prec = (vla_prec)99;
    CHECK(vla_model_new(&m, &c) == VLA_EINVAL);
    c.prec = VLA_F32;
    vla_model_kind mk;
    vla_track tr;
    CHECK(vla_model_parse("vla2", &mk) == VLA_EINVAL && vla_model_parse("vla3", &mk) == 0);
    CHECK(vla_track_parse("sm-sym", &tr) == 0 && tr == VLA_TRACK_SMSYM);
    CHECK(vla_config_set(&c, "lambda", "1") == VLA_EINVAL);
    CHECK(vla_config_set(&c, "lambda0", "abc") == VLA_EINVAL);
    CHECK(vla_config_set(&c, "lambda0", "nan") == VLA_EINVAL);
    CHECK(vla_config_set(&c, "nudge", "maybe") == VLA_EINVAL);
    CHECK(vla_config_set(&c, "period", "2.5") == VLA_EINVAL);
    CHECK(vla_config_set(&c, "nudge", "off") == 0 && c.nudge == 0);
    CHECK(vla_config_set(&c, "lambda0", "-1") == 0 && vla_config_check(&c) == VLA_ERANGE);
    CHECK(vla_config_set(&c, "lambda0", "0.1") == 0);
    CHECK(vla_config_set(&c, "beta", "2.5") == 0 && vla_config_check(&c) == VLA_ERANGE);
    CHECK(vla_config_set(&c, "beta", "1") == 0);
    CHECK(vla_model_new(&m, &c) == 0);
    double x[4] = {1, 2, 3, 4}, bad[4] = {1, NAN, 3, 4}, S0[16], S1[16];
    CHECK(step(m, x, x, x, x) == 0);
    vla_model_get(m, VLA_Q_S, S0);
    CHECK(step(m, bad, x, x, x) == VLA_ENONFINITE);
    CHECK(step(m, x, x, bad, x) == VLA_ENONFINITE);
    bad[1] = INFINITY;
    CHECK(step(m, x, x, x, bad) == VLA_ENONFINITE);
    CHECK(vla_model_read(m, bad) == VLA_ENONFINITE);
    vla_model_get(m, VLA_Q_S, S1);
    CHECK(memcmp(S0, S1, sizeof S0) == 0 && vla_model_t(m) == 1);
    CHECK(vla_model_step(m, NULL) == VLA_EINVAL && vla_model_step(NULL, NULL) == VLA_EINVAL);
    vla_model_free(m);
    /* la has no A to get */
    vla_config_default(&c, VLA_LA, 4);
    CHECK(vla_model_new(&m, &c) == 0);
    CHECK(vla_model_get(m, VLA_Q_A, S0) == VLA_EINVAL);
    vla_model_free(m);
}

/* a zero vector where a unit one is needed is counted, and leaves no NaN */
TEST(zero_norm_event)
{
    for (int p = 0; p < VLA_NPREC; p++) {
        vla_model *m = new_model(VLA_VLA3, (vla_prec)p, 4, 4);
        double z[4] = {0}, x[4] = {1, -1, 0.5, 2};
        CHECK(step(m, x, x, x, z) == 0); /* u = 0 */
        CHECK(vla_model_counts(m)->zero_norm >= 1);
        double S[16], A[16];
        vla_model_get(m, VLA_Q_S, S);
        vla_model_get(m, VLA_Q_A, A);
        int finite = 1;
        for (int i = 0; i < 16; i++)
            finite &= isfinite(S[i]) && isfinite(A[i]);
        CHECK_MSG(finite, "NaN/Inf after a zero-norm event in %s", vla_prec_name((vla_prec)p));
        vla_model_free(m);
    }
}

/* a state saved at t = 50 and loaded into a fresh model ends at t = 100 with the same bits as a
 * run never stopped: every native policy, and the exact MPFR reference */
TEST(save_load_resumes_bit_for_bit)
{
    for (int p = 0; p <= VLA_NPREC; p++) {
        vla_config c;
        vla_config_default(&c, VLA_VLA3, 6);
        c.prec = p == VLA_NPREC ? VLA_F64 : (vla_prec)p;
        vla_model *a, *b;
        int exact = p == VLA_NPREC;
        CHECK((exact ? vref_model_new(&a, &c, VREF_EXACT, 128) : vla_model_new(&a, &c)) == 0);
        CHECK((exact ? vref_model_new(&b, &c, VREF_EXACT, 128) : vla_model_new(&b, &c)) == 0);
        FILE *f = tmpfile();
        double x[6], S0[36], S1[36];
        for (int t = 1; t <= 100; t++) {
            for (int i = 0; i < 6; i++)
                x[i] = sin(t * 7.1 + i * 1.3);
            step(a, x, x, x, x);
            step(b, x, x, x, x);
            if (t == 50) {
                vla_model_free(b);
                CHECK(vla_model_save(a, f) == 0);
                rewind(f);
                CHECK(exact ? vref_model_new(&b, &c, VREF_EXACT, 128) == 0 : vla_model_new(&b, &c) == 0);
                CHECK(vla_model_load(b, f) == 0);
                CHECK_EQ_INT(vla_model_t(b), 50);
            }
        }
        vla_model_get(a, VLA_Q_S, S0);
        vla_model_get(b, VLA_Q_S, S1);
        CHECK_MSG(!memcmp(S0, S1, sizeof S0), "resumed %s differs", exact ? "exact" : vla_prec_name(c.prec));
        /* a checkpoint of another configuration is refused */
        rewind(f);
        vla_model *o;
        c.d = 5;
        CHECK(vla_model_new(&o, &c) == 0 && vla_model_load(o, f) == VLA_EFORMAT);
        vla_model_free(o);
        fclose(f);
        vla_model_free(a);
        vla_model_free(b);
    }
}
