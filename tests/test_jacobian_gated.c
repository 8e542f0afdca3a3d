/* test_jacobian_gated.c: the gated family's transitions J_t (docs/math.md 2.6 and 7.5;
 * reference/jacobian.c's vref_jac_tr) against what the models do and against J built by hand:
 * the model's own S_t - S'_t = (S_{t-1} - S'_{t-1}) J_t for two histories, every step's ||J_t||_2
 * and radius against dgesvd and dgeev of a J written here from the published equations (not
 * from the measure's vref_jac_explicit), closed forms on inputs made for them, the bounds the
 * help states, and the histogram's percentiles below 1. */
#include "check.h"
#include "tables.h"
#include "vlaref.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double U = 0x1p-53;

static double lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) * 0x1p-53;
}

/* the gated family, from the model table (a new gated model is tested here without an edit) */
static vla_model_kind gated[VLA_NMODEL];
static size_t ngated_models(void)
{
    size_t n = 0;
    for (int m = 0; m < VLA_NMODEL; m++)
        if (vla_model_gate((vla_model_kind)m))
            gated[n++] = (vla_model_kind)m;
    return n;
}
#define NGATED ngated_models()

/* The parts of a gated model's J that the model table says it has (docs/math.md 2.6): the decays
 * (the gate column: a scalar a per token or one per key channel), the delta rule's factor
 * (I - beta k' k'^T) of a model that reads beta, and the low-rank term a b^T of the lr column */
/* The models whose inputs besides the gate do not enter J, written here by name: mamba3's beta is
 * the trapezoid's lambda, its u and decay its rotation's angles and step (the carried token enters
 * S_t outside J); loglinear's u weighs its levels' read-outs (the levels sum to S, each decayed by
 * a). Both: J = a I. */
static int gate_only(const vla_config *cfg)
{
    return cfg->model == VLA_MAMBA3 || cfg->model == VLA_LOGLINEAR;
}
static unsigned j_reads(const vla_config *cfg)
{
    const unsigned r = vla_model_reads(cfg);
    return gate_only(cfg) ? r & (VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D) : r;
}
static int has_delta(const vla_config *cfg) { return (j_reads(cfg) & VLA_IN_BETA) != 0; }
/* the inputs hand_J writes J from: a gated model that reads others (or has A) has a J it does not
 * know, and the tests fail on it, naming it, until hand_J writes that J */
enum { HAND_J_READS = VLA_IN_BETA | VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D | VLA_IN_A | VLA_IN_B };
static int hand_J_knows(const vla_config *cfg)
{
    const unsigned r = j_reads(cfg);
    const int ab = (r & (VLA_IN_A | VLA_IN_B)) != 0, lr = vla_col_lr(cfg->model);
    const int ok = !(r & ~(unsigned)HAND_J_READS) && !vla_model_has_A(cfg->model) && ab == lr;
    CHECK_MSG(ok, "%s: a gated model that reads VLA_IN_* 0x%x (lr column %d, A %d): "
              "tests/test_jacobian_gated.c's hand_J does not write its J",
              vla_model_name(cfg->model), r, lr, vla_model_has_A(cfg->model));
    return ok;
}

/* J of one step written from docs/math.md 2.6 on the raw inputs, in binary64 (the f64 policy's
 * decays are the C library's exp of the input, as here): Diag(a) (I - beta k' k'^T) + a b^T with
 * the parts the model has (has_delta, the lr column), a scalar a in every channel where the gate
 * column is 1: gdn a (I - beta k' k'^T), kda Diag(a) (I - beta k' k'^T), gla Diag(a), mamba2 a I,
 * rwkv7 Diag(w) + a b^T, deltaproduct gdn's with the decay at a token's first step only (step t,
 * from 1), mamba3 and loglinear a I (gate_only); k' = k / sqrt(k.k + l2_eps) where qknorm is on */
static void hand_J(const vla_config *cfg, const vla_input *in, long t, double *J)
{
    const int d = cfg->d;
    double kp[VLA_D_MAX], dec[VLA_D_MAX], beta = isnan(in->beta) ? cfg->beta : in->beta, kk = 0;
    for (int i = 0; i < d; i++)
        kk += in->k[i] * in->k[i];
    for (int i = 0; i < d; i++) {
        kp[i] = cfg->qknorm ? in->k[i] / sqrt(kk + 1e-6) : in->k[i];
        dec[i] = exp(in->lg && vla_model_gate(cfg->model) == 2 ? in->lg[i] : in->lgs);
        if (cfg->model == VLA_DELTAPRODUCT && (t - 1) % cfg->householder)
            dec[i] = 1; /* DeltaProduct: the gate at a token's first Householder step only */
    }
    const int delta = has_delta(cfg), lr = vla_col_lr(cfg->model);
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            double x = dec[i] * ((i == j) - (delta ? beta * kp[i] * kp[j] : 0));
            if (lr)
                x += (in->a ? in->a[i] : 0) * (in->b ? in->b[j] : 0);
            J[i * d + j] = x;
        }
}

/* ---- the model's own transition: two histories, one J ---- */

typedef struct {
    double q[VLA_D_MAX], k[VLA_D_MAX], v[VLA_D_MAX], lg[VLA_D_MAX], a[VLA_D_MAX], b[VLA_D_MAX];
    double lgs;
} raw_step;

static vla_input as_input(const raw_step *r, int per_channel, int lr)
{
    return (vla_input){.q = r->q, .k = r->k, .v = r->v, .beta = NAN, .decay = NAN,
                       .lg = per_channel ? r->lg : NULL, .a = lr ? r->a : NULL,
                       .b = lr ? r->b : NULL, .lgs = r->lgs};
}

static void draw_step(raw_step *r, int d, uint64_t *s, double scale)
{
    for (int i = 0; i < d; i++) {
        r->q[i] = lcg(s) - 0.5;
        r->k[i] = lcg(s) - 0.5;
        r->v[i] = scale * (lcg(s) - 0.5);
        r->lg[i] = -0.7 * lcg(s); /* decays in (0.5, 1] */
    }
    r->lgs = -0.7 * lcg(s);
    /* rwkv7: a = -kappa, b = kappa * iclr, kappa unit (docs/math.md 2.6), iclr in (0, 1) */
    double n = 0;
    for (int i = 0; i < d; i++) {
        r->a[i] = lcg(s) - 0.5;
        n += r->a[i] * r->a[i];
    }
    for (int i = 0; i < d; i++) {
        double kappa = r->a[i] / sqrt(n);
        r->a[i] = -kappa;
        r->b[i] = kappa * lcg(s);
    }
}

/* S_t = S_{t-1} J_t + B_t is affine in S_{t-1}: two runs of one model that differ only in the first
 * step's inputs have S_t - S'_t = (S_{t-1} - S'_{t-1}) J_t exactly in exact arithmetic. J_t is the
 * measure's (vref_jac_explicit of the taps and vref_jac_gates), so a forgotten decay, a decay on
 * the wrong side or a missing low-rank term shows as a difference of order ||S||, against a few u
 * ||S|| of rounding (f64). */
TEST(jacobian_gated_is_the_models_transition)
{
    const int d = 6, dv = 5, T = 10;
    for (size_t mi = 0; mi < NGATED; mi++) {
        vla_config cfg;
        vla_config_default(&cfg, gated[mi], d);
        cfg.dv = dv;
        if (!hand_J_knows(&cfg))
            continue;
        vref_jac_form form = vref_jac_form_of(&cfg);
        int per = vla_model_gate(cfg.model) == 2, lr = form == VREF_JAC_DPLR;
        vla_model *m1, *m2;
        CHECK_EQ_INT(vla_model_new(&m1, &cfg), 0);
        CHECK_EQ_INT(vla_model_new(&m2, &cfg), 0);
        uint64_t s = 11 + mi;
        raw_step x, y;
        double S1[64], S2[64], P1[64], P2[64], J[36], kp[6], al[6], dec[6], la[6], lb[6];
        double worst = 0;
        /* mamba3's state carries the last token (S_t's term beta_t v_{t-1} k_{t-1}^T): the first
         * step's difference enters S again at t = 2, outside J, so its residual counts from t = 3 */
        const int lag = cfg.model == VLA_MAMBA3;
        for (int t = 1; t <= T; t++) {
            draw_step(&x, d, &s, 1);
            vla_input in = as_input(&x, per, lr);
            if (t == 1) { /* the histories differ here only */
                draw_step(&y, d, &s, 3);
                vla_input iy = as_input(&y, per, lr);
                CHECK_EQ_INT(vla_model_step(m2, &iy), 0);
            } else {
                CHECK_EQ_INT(vla_model_step(m2, &in), 0);
            }
            CHECK_EQ_INT(vla_model_step(m1, &in), 0);
            vla_model_get(m1, VLA_Q_S, S1);
            vla_model_get(m2, VLA_Q_S, S2);
            if (t > 1) {
                vla_model_get(m1, VLA_Q_KP, kp);
                vla_model_get(m1, VLA_Q_ALPHA, al);
                vref_jac_gates(&cfg, &in, t, dec, la, lb);
                vref_jac_tr tr = {form, d, kp, al, dec, la, lb};
                vref_jac_explicit(&tr, J);
                double num = 0, den = vla_fro(S1, dv * d) + vla_fro(S2, dv * d);
                for (int i = 0; i < dv; i++)
                    for (int j = 0; j < d; j++) {
                        double p = 0;
                        for (int k = 0; k < d; k++)
                            p += (P1[i * d + k] - P2[i * d + k]) * J[k * d + j];
                        double r = (S1[i * d + j] - S2[i * d + j]) - p;
                        num += r * r;
                    }
                if (t > 1 + lag)
                    worst = fmax(worst, sqrt(num) / den);
                /* ... and the J written here from the equations is the same J */
                double H[36];
                hand_J(&cfg, &in, t, H);
                double dj = 0;
                for (int i = 0; i < d * d; i++)
                    dj = fmax(dj, fabs(H[i] - J[i]));
                CHECK_MSG(dj <= 16 * U, "%s t=%d: max |J_hand - J| = %.3g",
                          vla_model_name(cfg.model), t, dj);
            }
            memcpy(P1, S1, sizeof S1);
            memcpy(P2, S2, sizeof S2);
        }
        CHECK_MSG(worst <= 64 * U, "%s: ||dS_t - dS_{t-1} J_t|| / ||S|| = %.3g",
                  vla_model_name(cfg.model), worst);
        vla_model_free(m1);
        vla_model_free(m2);
    }
}

/* ---- every step on a stream: the measure against dgesvd and dgeev of the hand-built J ---- */

typedef struct {
    const vla_config *cfg;
    vref_jac *acc;
    vref_jac_form form;
    long steps, above1;
    double max_norm, max_svd_err, max_rad_err, max_bound_excess, max_a;
    double sum_log_a; /* sum of log dec[0]: mamba2's J = a I has the exponent (1/t) sum log a */
    double min_over_a2; /* kda: min of ||J|| / (the second largest decay) */
} gwalk;

static int gwalk_step(void *ctx, const vla_step_view *v)
{
    gwalk *w = ctx;
    const int d = w->cfg->d;
    double dec[VLA_D_MAX], la[VLA_D_MAX], lb[VLA_D_MAX], H[32 * 32], sv[32], rho;
    vla_input in = vla_input_of(v->in);
    vref_jac_gates(w->cfg, &in, v->t, dec, la, lb);
    vref_jac_tr tr = {w->form, d, v->kp, v->alpha, dec, la, lb};
    double norm = vref_jac_step_tr(w->acc, &tr);
    hand_J(w->cfg, &in, v->t, H);
    if (vref_svd(H, d, d, sv) || vref_spectral_radius(H, d, &rho))
        return VLA_EINVAL;
    w->steps++;
    w->above1 += norm > 1;
    w->max_norm = fmax(w->max_norm, norm);
    w->max_svd_err = fmax(w->max_svd_err, fabs(norm - sv[0]) / sv[0]);
    if (v->t % 16 == 0) /* dgeev costs: every 16th step */
        w->max_rad_err = fmax(w->max_rad_err, fabs(vref_jac_radius_tr(&tr) - rho) / rho);
    /* the bounds of the help: gdn, mamba2 ||J|| = a; gla max a; kda <= max a; rwkv7 <= max w +
     * |a| |b| */
    double ma = 0, bound;
    for (int i = 0; i < (w->form == VREF_JAC_SCALAR ? 1 : d); i++)
        ma = fmax(ma, dec[i]);
    bound = ma;
    if (w->form == VREF_JAC_DPLR)
        bound += vla_fro(la, d) * vla_fro(lb, d);
    w->max_bound_excess = fmax(w->max_bound_excess, norm / bound - 1);
    w->max_a = fmax(w->max_a, ma);
    w->sum_log_a += log(dec[0]);
    if (w->form == VREF_JAC_DIAG) { /* ||Diag(a) P|| >= max over x orthogonal to k' of ||Diag(a) x|| */
        double a1 = 0, a2 = 0;
        for (int i = 0; i < d; i++)
            if (dec[i] > a1) {
                a2 = a1;
                a1 = dec[i];
            } else if (dec[i] > a2) {
                a2 = dec[i];
            }
        w->min_over_a2 = fmin(w->min_over_a2, norm / a2);
    }
    return 0;
}

static gwalk gated_walk(vla_model_kind mk, int d, const char *stream, long steps, vref_jac *acc)
{
    static vla_config cfg;
    vla_config_default(&cfg, mk, d);
    gwalk w = {&cfg, acc, vref_jac_form_of(&cfg), 0, 0, 0, 0, 0, -INFINITY, 0, 0, INFINITY};
    vla_engine_spec sp = {.cfg = cfg, .runs = 1, .stream = stream, .seed = 3,
                          .round_inputs = VLA_FMT_F64, .taps = VLA_TAP_KP | VLA_TAP_ALPHA,
                          .on_step = gwalk_step, .ctx = &w};
    vla_engine *e;
    vla_error err;
    if (vref_jac_init(acc, d, 5) || vla_engine_new(&e, &sp, &err)) {
        vla_check_fail(__FILE__, __LINE__, "%s: %s", vla_model_name(mk), err.msg);
        w.steps = -1;
        return w;
    }
    CHECK_EQ_INT(vla_engine_advance(e, steps), 0);
    vla_engine_free(e);
    return w;
}

TEST(jacobian_gated_norm_radius_match_dgesvd_dgeev)
{
    static vref_jac acc;
    for (size_t mi = 0; mi < NGATED; mi++) {
        vla_config cfg;
        vla_config_default(&cfg, gated[mi], 16);
        if (!hand_J_knows(&cfg))
            continue;
        /* what J's parts (the columns) make of it: J = a I (a scalar decay, no delta rule),
         * Diag(a) (I - beta k' k'^T) (decays per channel and the delta rule), a low-rank term */
        const vref_jac_form form = vref_jac_form_of(&cfg);
        const int delta = has_delta(&cfg), lr = vla_col_lr(cfg.model);
        gwalk w = gated_walk(gated[mi], 16, "lmlike", 400, &acc);
        const char *name = vla_model_name(gated[mi]);
        CHECK_MSG(w.steps == 400, "%s: %ld steps", name, w.steps);
        CHECK_MSG(w.max_svd_err <= 64 * U, "%s: ||J|| vs dgesvd of the hand-built J: %.3g", name,
                  w.max_svd_err);
        CHECK_MSG(w.max_rad_err <= 1e-12, "%s: radius vs dgeev: %.3g", name, w.max_rad_err);
        /* decays below 1 on lmlike (docs/math.md 8: log a = -exp(-3 + 1.5 z)) */
        /* deltaproduct's writes after a token's first take none (1) */
        const int dp = gated[mi] == VLA_DELTAPRODUCT;
        CHECK_MSG(dp ? w.max_a == 1 : w.max_a < 1 && w.max_a > 0.9, "%s: largest decay %.17g",
                  name, w.max_a);
        if (lr) {
            /* J = Diag(w) + a b^T (rwkv7) is not normal: with the stream's a = -kappa, b = kappa
             * iclr its norm passes 1 on lmlike, its bound holds */
            CHECK_MSG(w.above1 > 0 && w.max_norm > 1.01, "%s: %ld steps above 1, max %.17g",
                      name, w.above1, w.max_norm);
            CHECK_MSG(w.max_bound_excess <= 8 * U, "%s: max w + |a||b| exceeded by %.3g", name,
                      w.max_bound_excess);
        } else {
            /* a I (mamba2) and a (I - beta k'k'^T) (gdn): ||J|| = a; Diag(a) (gla): max a;
             * Diag(a) (I - beta k'k'^T) (kda): <= max a (I - beta k'k'^T has norm 1 for
             * beta |k'|^2 in [0, 2]); so never above 1 here (deltaproduct's undecayed writes: 1
             * within the bound's rounding) */
            CHECK_MSG((dp || w.above1 == 0) && w.max_bound_excess <= 4 * U,
                      "%s: %ld steps above 1, the bound exceeded by %.3g", name, w.above1,
                      w.max_bound_excess);
        }
        /* the row: the dgesvd cross-check of the last J, nan where a column does not apply */
        double row[VREF_JAC_NCOL];
        CHECK_EQ_INT(vref_jac_row_tr(&acc, 400, row), 0);
        CHECK_MSG(row[6] <= 64 * U, "%s: jac_svd_err %.3g", name, row[6]);
        CHECK_MSG(row[1] >= row[3] && row[3] >= row[2] && row[2] > 0 && row[1] <= w.max_norm,
                  "%s: max %.17g p99 %.17g p50 %.17g", name, row[1], row[3], row[2]);
        CHECK_MSG(row[7] < 0, "%s: lyap %.3g", name, row[7]);
        if (form == VREF_JAC_SCALAR && !delta && !lr) /* J = a I (mamba2): the mean of log a */
            CHECK_NEAR(row[7], w.sum_log_a / 400, 1e-14);
        if (form == VREF_JAC_DIAG && delta) /* Diag(a) (I - beta k'k'^T) (kda): between the
                                               second largest decay and the largest */
            CHECK_MSG(w.min_over_a2 >= 1 - 8 * U, "%s: ||J|| / a_(2) down to %.17g", name,
                      w.min_over_a2);
        CHECK(isnan(row[9]));
        /* a k' (alpha = beta k', cos 1) where the delta rule writes S; none elsewhere */
        CHECK_MSG(delta ? fabs(row[8] - 1) <= 4 * U : isnan(row[8]), "%s: jac_min_c %.17g", name,
                  row[8]);
    }
}

/* Inputs made for closed forms: mamba2's a I and gla's Diag(a); gdn's a (I - k'k'^T) with unit
 * k' (norm a, radius a); kda with k' = e_1 (Diag(0, a_2, ...)); rwkv7 with w = c 1, a = -kappa,
 * b = beta kappa (c I - beta kappa kappa^T: max(c, |c - beta|)) and with w = 1, a = -e_1, b = e_2
 * (I - e_1 e_2^T: the golden ratio). The Lyapunov exponent of a constant J is log of its radius. */
TEST(jacobian_gated_closed_forms)
{
    static vref_jac acc;
    const int d = 8;
    double kp[8] = {0}, al[8] = {0}, dec[8], la[8] = {0}, lb[8] = {0};
    for (int i = 0; i < d; i++)
        dec[i] = 0.5 + i / 32.0; /* 0.5 .. 0.71875, the largest last */
    /* mamba2: k' = 0, alpha = k */
    for (int i = 0; i < d; i++)
        al[i] = 0.3 * (i + 1);
    double a0 = 0.8125;
    vref_jac_tr m2 = {VREF_JAC_SCALAR, d, kp, al, &a0, NULL, NULL};
    CHECK(vref_jac_norm_tr(&m2) == a0 && vref_jac_radius_tr(&m2) == a0);
    vref_jac_tr gl = {VREF_JAC_DIAG, d, kp, al, dec, NULL, NULL};
    CHECK(vref_jac_norm_tr(&gl) == dec[d - 1] && vref_jac_radius_tr(&gl) == dec[d - 1]);
    /* gdn with unit k' and beta = 1: a (I - k'k'^T), an orthogonal projector times a */
    double kq[8];
    for (int i = 0; i < d; i++)
        kq[i] = 0.5 * (i < 4 ? 1 : 0) * (i % 2 ? -1 : 1); /* unit */
    vref_jac_tr gd = {VREF_JAC_SCALAR, d, kq, kq, &a0, NULL, NULL};
    CHECK_NEAR(vref_jac_norm_tr(&gd), a0, 2 * U);
    CHECK_NEAR(vref_jac_radius_tr(&gd), a0, 2 * U);
    /* kda with k' = e_1: Diag(a) (I - e_1 e_1^T) = Diag(0, a_2, ..., a_d); the radius by dgeev */
    double e1[8] = {1};
    vref_jac_tr kd = {VREF_JAC_DIAG, d, e1, e1, dec, NULL, NULL};
    CHECK_NEAR(vref_jac_norm_tr(&kd), dec[d - 1], 4 * U);
    CHECK_NEAR(vref_jac_radius_tr(&kd), dec[d - 1], 16 * U);
    /* a kda J whose norm is below every decay's max but not any one decay: k' along e_1 + e_8 */
    double k18[8] = {M_SQRT1_2, 0, 0, 0, 0, 0, 0, M_SQRT1_2}, J[64], sv[8];
    vref_jac_tr k2 = {VREF_JAC_DIAG, d, k18, k18, dec, NULL, NULL};
    vref_jac_explicit(&k2, J);
    CHECK_EQ_INT(vref_svd(J, d, d, sv), 0);
    CHECK_NEAR(vref_jac_norm_tr(&k2), sv[0], 8 * U);
    /* max over x orthogonal to k' of ||Diag(a) x||: a_7 (e_7), not (a_1^2 + a_8^2) / 2 */
    CHECK_NEAR(sv[0], dec[d - 2], 8 * U);
    /* rwkv7: c I - beta kappa kappa^T */
    double w[8], kap[8], c = 0.9, beta = 0.5;
    for (int i = 0; i < d; i++) {
        w[i] = c;
        kap[i] = 0.5 * (i >= 4 ? 1 : 0);
        la[i] = -kap[i];
        lb[i] = beta * kap[i];
    }
    vref_jac_tr r1 = {VREF_JAC_DPLR, d, kp, al, w, la, lb};
    CHECK_NEAR(vref_jac_norm_tr(&r1), c, 8 * U);
    CHECK_NEAR(vref_jac_radius_tr(&r1), c, 16 * U);
    beta = 1.9; /* |c - beta| = 1 > c */
    for (int i = 0; i < d; i++)
        lb[i] = beta * kap[i];
    CHECK_NEAR(vref_jac_norm_tr(&r1), 1, 8 * U);
    /* w = 1, a = -e_1, b = e_2: I - e_1 e_2^T, the golden ratio; radius 1 */
    for (int i = 0; i < d; i++) {
        w[i] = 1;
        la[i] = -(i == 0);
        lb[i] = i == 1;
    }
    CHECK_NEAR(vref_jac_norm_tr(&r1), (1 + sqrt(5)) / 2, 8 * U);
    CHECK_NEAR(vref_jac_radius_tr(&r1), 1, 16 * U);
    /* the Lyapunov exponent of a constant J: log of its spectral radius (power iteration); the
     * window's percentiles of one repeated norm are that norm */
    for (int i = 0; i < d; i++) {
        w[i] = dec[i];
        la[i] = 0.1 * (i == d - 1);
        lb[i] = 0.1 * (i == d - 1);
    }
    double rho = vref_jac_radius_tr(&r1), nrm = 0;
    CHECK_NEAR(rho, dec[d - 1] + 0.01, 16 * U);
    CHECK_EQ_INT(vref_jac_init(&acc, d, 3), 0);
    for (int t = 0; t < 2000; t++)
        nrm = vref_jac_step_tr(&acc, &r1);
    double row[VREF_JAC_NCOL];
    CHECK_EQ_INT(vref_jac_row_tr(&acc, 2000, row), 0);
    CHECK_MSG(fabs(row[7] - log(rho)) < 5e-3, "lyap %.17g vs log rho %.17g", row[7], log(rho));
    CHECK(row[1] == nrm && row[2] == nrm && row[3] == nrm && row[4] == rho);
    CHECK(row[10] == 0 && isnan(row[8]));
}

/* The histogram's nearest-rank percentiles below 1 (the decayed J): within 8.5e-5 relative of the
 * exact ones, from 1e-9 to 1 - 1e-12, tiny and near-1 norms included */
TEST(jacobian_histogram_below_one)
{
    static vref_jac acc;
    static double x[20000];
    CHECK_EQ_INT(vref_jac_init(&acc, 4, 1), 0);
    uint64_t s = 5;
    int n = 20000;
    for (int i = 0; i < n; i++) {
        double r = lcg(&s);
        x[i] = i % 97 == 0 ? 0x1p-50 * r                    /* tiny */
             : i % 89 == 0 ? 1 - 0x1p-45                     /* within 2^-40 of 1 */
             : i % 3 == 0  ? pow(10, -9 + 8.7 * r)           /* ||J|| log-spaced */
             : i % 3 == 1  ? 1 - pow(10, -12 + 11.7 * r)     /* 1 - ||J|| log-spaced */
                           : 1 + pow(10, -6 + 6 * r);        /* above 1 too */
        vref_jac_hist_add(&acc.h, x[i]);
    }
    CHECK_EQ_INT(vref_jac_check(&acc, n), 0);
    qsort(x, n, sizeof x[0], vla_test_cmp_double);
    for (double p = 0.005; p < 1; p += 0.0175) {
        long rank = (long)ceil(p * n);
        double exact = x[rank - 1], got = vref_jac_hist_quantile(&acc.h, p);
        double tol = exact < 0x1p-40 ? 0x1p-40 : fabs(exact - 1) < 0x1p-40 ? 0x1p-40 : 8.5e-5 * exact;
        CHECK_MSG(fabs(got - exact) <= tol, "p=%g: histogram %.17g, exact %.17g", p, got, exact);
    }
    vref_jac_hist_reset(&acc.h);
    CHECK(acc.h.n == 0 && acc.h.llo == VREF_JAC_NLBIN && acc.h.lhi == -1);
    for (int i = 0; i < VREF_JAC_NLBIN; i += 613)
        CHECK_MSG(acc.h.lbin[i] == 0, "lbin %d not cleared", i);
    /* a forged occupied range is refused */
    vref_jac_hist_add(&acc.h, 0.25);
    acc.h.llo = -5;
    CHECK_EQ_INT(vref_jac_check(&acc, 10), VLA_EFORMAT);
}

/* the program: a gated model's table says where its decays come from, and its first window's
 * norm is the first decay (mamba2: J_1 = a_1 I) */
TEST(jacobian_gated_program)
{
    char b[600];
    snprintf(b, sizeof b, "%s/vla-jacobian", vla_test_bin_dir());
    if (access(b, X_OK)) {
        vla_test_skip("bin/vla-jacobian not built (run make first)");
        return;
    }
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-jacobian --model rwkv7 --stream lmlike --d 8 --steps 300 "
                               "--checkpoints 2 --out -");
    CHECK_MSG(st == 0 && out && strstr(out, "# decays: the model's own") &&
                  strstr(out, "a, b rounded to the io format") && strstr(out, "\n300 "),
              "rwkv7: status %d", st);
    free(out);
    out = NULL;
    st = vla_test_sh(&out, "bin/vla-jacobian --model delta --stream lmlike --d 8 --steps 30 --out -");
    CHECK_MSG(st == 0 && out && !strstr(out, "# decays") && !strstr(out, "histogram_below_1"),
              "delta's table as it was: status %d", st);
    free(out);
}

/* vref_norm2 (the Gram route of the dense ||J||) against dgesvd over 2^+-600 scalings (the scaling
 * by a power of two keeps the Gram finite), and its answers to Inf, NaN and 0 */
TEST(jacobian_norm2_gram_route)
{
    uint64_t s = 17;
    double X[12 * 12], Y[12 * 12], sv[12], n;
    for (int i = 0; i < 144; i++)
        X[i] = lcg(&s) - 0.5;
    CHECK_EQ_INT(vref_svd(X, 12, 12, sv), 0);
    const int ex[] = {0, 600, -600, 1000, -1000};
    for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
        for (int i = 0; i < 144; i++)
            Y[i] = ldexp(X[i], ex[k]);
        CHECK_EQ_INT(vref_norm2(Y, 12, 12, &n), 0);
        CHECK_MSG(fabs(ldexp(n, -ex[k]) - sv[0]) <= 16 * U * sv[0], "2^%d: %.17g vs %.17g", ex[k],
                  ldexp(n, -ex[k]), sv[0]);
    }
    CHECK_EQ_INT(vref_norm2(X, 4, 36, &n), 0); /* not square: the 36 x 36 Gram */
    double sv4[4];
    CHECK_EQ_INT(vref_svd(X, 4, 36, sv4), 0);
    CHECK_NEAR(n, sv4[0], 16 * U * sv4[0]);
    memset(Y, 0, sizeof Y);
    CHECK(vref_norm2(Y, 12, 12, &n) == 0 && n == 0);
    Y[5] = INFINITY;
    CHECK(vref_norm2(Y, 12, 12, &n) == VLA_ENONFINITE && isinf(n));
    Y[7] = NAN;
    CHECK(vref_norm2(Y, 12, 12, &n) == VLA_ENONFINITE && isnan(n));
    double rho;
    CHECK(vref_spectral_radius(Y, 12, &rho) == VLA_ENONFINITE);
    /* a rotation by 0.3 scaled by 0.5: eigenvalues 0.5 e^(+-0.3 i), radius 0.5 */
    double R[4] = {0.5 * cos(0.3), -0.5 * sin(0.3), 0.5 * sin(0.3), 0.5 * cos(0.3)};
    CHECK_EQ_INT(vref_spectral_radius(R, 2, &rho), 0);
    CHECK_NEAR(rho, 0.5, 4 * U);
}
