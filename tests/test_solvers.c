/* test_solvers.c: the ways that keep M = A^-1 and solve M y = x at every step (solve, cg, cheb;
 * docs/math.md 4.7-4.9) and the forgetting factor gamma (4.10) against the exact reference and
 * against their definitions written out here in binary64; and a failed solve, reported with its
 * step and value. Bit-for-bit agreement with the format emulation is tests/test_conform.c's. */
#include "check.h"
#include "vlaref.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>

/* relative error of alpha (the vector the model uses) after `steps` steps of vla3 (nudge off) in
 * way `spec` and precision p, against the exact 256-bit solve of the same inputs; the largest
 * relative distance of the stored M from M written out in binary64 (the Gram of the u' with
 * forgetting: lambda0 I + sum gamma^(t-s) u'_s u'_s^T) over the run, in *merr */
static double run(const char *spec, vla_prec p, const char *stream, int d, long steps, double gamma,
                  double *merr)
{
    vla_config c, x;
    vla_config_default(&c, VLA_VLA3, d);
    c.prec = p;
    c.nudge = 0;
    c.gamma = gamma;
    CHECK(vla_track_set(&c, spec) == 0 && vla_config_check(&c) == 0);
    x = c;
    x.track = VLA_TRACK_SOLVE;
    vla_model *m, *ref;
    vla_stream *s;
    vla_error err = {0};
    CHECK(vla_model_new(&m, &c) == 0 && vref_model_new(&ref, &x, VREF_EXACT, 256) == 0);
    CHECK(vla_stream_open(&s, stream, d, d, 3, &err) == 0);
    vla_step_buf b;
    vla_step_buf_alloc(&b, d, d);
    size_t dd = (size_t)d * d;
    double *M = calloc(dd, sizeof *M), *G = calloc(dd, sizeof *G), up[64], a[64], e[64];
    for (int i = 0; i < d; i++)
        G[i * d + i] = c.lambda0;
    *merr = 0;
    for (long t = 1; t <= steps; t++) {
        vla_stream_get(s, 0, t, &b);
        vla_input in = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = NAN, .decay = NAN};
        vla_model_step(m, &in);
        vla_model_step(ref, &in);
        vla_uprime(&c, b.k, b.u, up);
        for (int i = 0; i < d; i++) /* M <- gamma M + u' u'^T + (1 - gamma) lambda0 I */
            for (int j = 0; j < d; j++)
                G[i * d + j] = gamma * G[i * d + j] + up[i] * up[j] +
                               (i == j ? (1 - gamma) * c.lambda0 : 0);
        vla_model_get(m, VLA_Q_M, M);
        double r = vla_fro_diff(M, G, (long)dd) / vla_fro(G, (long)dd);
        *merr = r > *merr || isnan(r) ? r : *merr;
    }
    vla_model_get(m, VLA_Q_ALPHA, a);
    vla_model_get(ref, VLA_Q_ALPHA, e);
    double r = vla_fro_diff(a, e, d) / vla_fro(e, d);
    free(M);
    free(G);
    vla_step_buf_free(&b);
    vla_stream_close(s);
    vla_model_free(m);
    vla_model_free(ref);
    return r;
}

/* The first-order bound of tests/test_tracks.c, c d t cond u with c = 1 (cond(M) below 50 on
 * lmlike over 300 steps at d = 16): solve (a Cholesky factorization, backward error O(d u)),
 * cg until its residual reaches the rounding level, and Chebyshev iteration with enough steps
 * (on [lambda0, Gershgorin] the contraction per step is below 0.8 here, so 200 steps leave
 * nothing); and M itself within t u of its definition, in f64 and f32 */
TEST(solvers_within_first_order_bound)
{
    static const char *const ways[] = {"solve", "cg:1e-12", "cg:16", "cheb:200"};
    static const vla_prec ps[] = {VLA_F64, VLA_F32};
    for (int pi = 0; pi < 2; pi++)
        for (int w = 0; w < 4; w++) {
            double u = vla_fmt_unit_roundoff(vla_prec_storage(ps[pi])), merr;
            double e = run(ways[w], ps[pi], "lmlike", 16, 300, 1, &merr);
            double bound = 16 * 300 * 50 * u;
            CHECK_MSG(e <= bound && merr <= 300 * u, "%s %s: alpha error %.3g (bound %.3g), M %.3g "
                      "(bound %.3g)", ways[w], vla_prec_name(ps[pi]), e, bound, merr, 300 * u);
        }
}

/* With forgetting M stays within [lambda0, lambda0 + max ||u'||^2 / (1 - gamma)] in exact
 * arithmetic (vla3: ||u'||^2 = 1 / d), so cond(M) <= 1 + 1 / (d (1 - gamma) lambda0); each step
 * rounds M's entries afresh (gamma M, then + u' u'^T: 2u), and the errors decay like gamma^k, so
 * M stays within c u / (1 - gamma) of its definition whatever t (c = d, generous), and alpha
 * within 4 cond (that + d u): the solve's exact answer, in f64 and in f32 */
TEST(solvers_forget)
{
    static const vla_prec ps[] = {VLA_F64, VLA_F32};
    const int d = 8;
    const double gamma = 0.9, cond = 1 + 1 / (d * (1 - gamma) * 0.1);
    for (int pi = 0; pi < 2; pi++) {
        double u = vla_fmt_unit_roundoff(vla_prec_storage(ps[pi])), merr;
        double e = run("solve", ps[pi], "lmlike", d, 2000, gamma, &merr);
        double mb = d * u / (1 - gamma), ab = 4 * cond * (mb + d * u);
        CHECK_MSG(merr <= mb && e <= ab, "solve %s gamma %g: M %.3g (bound %.3g), alpha %.3g (bound "
                  "%.3g)", vla_prec_name(ps[pi]), gamma, merr, mb, e, ab);
    }
    vla_config c;
    vla_config_default(&c, VLA_RLS, d);
    c.gamma = gamma;
    CHECK(vla_track_set(&c, "cg:8") == 0);
    vla_model *m;
    vla_stream *s;
    vla_error err = {0};
    CHECK(vla_model_new(&m, &c) == 0 && vla_stream_open(&s, "gauss", d, d, 5, &err) == 0);
    vla_step_buf b;
    vla_step_buf_alloc(&b, d, d);
    double M[64], lam[8], lo = INFINITY, hi = 0, kmax = 0;
    for (long t = 1; t <= 3000; t++) {
        vla_stream_get(s, 0, t, &b);
        vla_input in = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = NAN, .decay = NAN};
        vla_model_step(m, &in);
        double k2 = 0;
        for (int i = 0; i < d; i++)
            k2 += b.k[i] * b.k[i];
        kmax = k2 > kmax ? k2 : kmax;
        if (t % 100 == 0) {
            vla_model_get(m, VLA_Q_M, M);
            CHECK(vref_sym_eig(M, d, lam) == 0);
            lo = lam[0] < lo ? lam[0] : lo;
            hi = lam[d - 1] > hi ? lam[d - 1] : hi;
        }
    }
    double top = c.lambda0 + kmax / (1 - gamma);
    CHECK_MSG(lo >= c.lambda0 * (1 - 1e-12) && hi <= top * (1 + 1e-12),
              "rls cg:8 gamma %g: M's spectrum [%g, %g] leaves [%g, %g]", gamma, lo, hi, c.lambda0,
              top);
    vla_step_buf_free(&b);
    vla_stream_close(s);
    vla_model_free(m);
}

/* A way that tracks A forgets as RLS does, M <- gamma M + u' u'^T without the regularizer's
 * (1 - gamma) lambda0 I (no low-rank change of A): A_t^-1 = gamma^t lambda0 I + sum gamma^(t-s)
 * k_s k_s^T, here for rls (u' = k) in f64, sm, joseph and chol, checked as ||A_t G_t - I||_F
 * <= c d t cond u with G written out in binary64 */
TEST(tracking_ways_forget_as_rls)
{
    static const vla_track trs[] = {VLA_TRACK_SM, VLA_TRACK_JOSEPH, VLA_TRACK_CHOL};
    const int d = 6;
    const long T = 200;
    const double gamma = 0.95;
    for (int w = 0; w < 3; w++) {
        vla_config c;
        vla_config_default(&c, VLA_RLS, d);
        c.track = trs[w];
        c.gamma = gamma;
        vla_model *m;
        vla_stream *s;
        vla_error err = {0};
        CHECK(vla_model_new(&m, &c) == 0 && vla_stream_open(&s, "gauss", d, d, 9, &err) == 0);
        vla_step_buf b;
        vla_step_buf_alloc(&b, d, d);
        double G[36] = {0}, A[36], lam[6], g = 1;
        for (long t = 1; t <= T; t++) {
            vla_stream_get(s, 0, t, &b);
            vla_input in = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = NAN, .decay = NAN};
            vla_model_step(m, &in);
            g *= gamma;
            for (int i = 0; i < d * d; i++)
                G[i] = gamma * G[i] + b.k[i / d] * b.k[i % d];
        }
        for (int i = 0; i < d; i++)
            G[i * d + i] += g * c.lambda0;
        vla_model_get(m, VLA_Q_A, A);
        double R[36], cond;
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++) {
                double x = i == j ? -1 : 0;
                for (int k = 0; k < d; k++)
                    x += A[i * d + k] * G[k * d + j];
                R[i * d + j] = x;
            }
        CHECK(vref_sym_eig(G, d, lam) == 0);
        cond = lam[d - 1] / lam[0];
        double r = vla_fro(R, d * d), bound = d * T * cond * 0x1p-53;
        CHECK_MSG(r <= bound, "%s gamma %g: ||A G - I|| %.3g > %.3g", vla_track_name(trs[w]), gamma,
                  r, bound);
        vla_step_buf_free(&b);
        vla_stream_close(s);
        vla_model_free(m);
    }
}

/* rls in bfloat16 (lambda0 = 1e-3, d = 4) with way `way` in form `form` (NULL: seq) on a rank-one
 * stream, stepped one step at a time until the first failed solve shows in the counts: the step
 * it showed at (0: none by 2000), the counts and VLA_Q_SOLVER (sv) then */
static long first_failure(const char *way, const char *form, vla_counts *cn, double sv[3])
{
    vla_config c;
    vla_config_default(&c, VLA_RLS, 4);
    c.prec = VLA_BF16;
    c.lambda0 = 1e-3;
    CHECK(vla_track_set(&c, way) == 0 && (!form || vla_form_parse(&c, form) == 0));
    vla_model *m;
    vla_stream *s;
    vla_error err = {0};
    CHECK(vla_model_new(&m, &c) == 0);
    CHECK(vla_stream_open(&s, "subspace:1,0", 4, 4, 1, &err) == 0);
    vla_step_buf b;
    vla_step_buf_alloc(&b, 4, 4);
    long seen = 0;
    for (long t = 1; t <= 2000 && !seen; t++) {
        vla_stream_get(s, 0, t, &b);
        vla_input in = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = NAN, .decay = NAN};
        vla_model_step(m, &in);
        if (vla_model_counts(m)->solve_fail)
            seen = t;
    }
    *cn = *vla_model_counts(m);
    CHECK(vla_model_get(m, VLA_Q_SOLVER, sv) == 0);
    vla_step_buf_free(&b);
    vla_stream_close(s);
    vla_model_free(m);
    return seen;
}

/* A failed solve is counted at the step it happens, its value kept (VLA_Q_SOLVER), and it shows:
 * bfloat16 keeps 8 bits of M, so on a rank-one stream lambda0 = 1e-3 is lost beside the
 * diagonal's growing entries, M turns singular or indefinite, and Cholesky meets a pivot <= 0,
 * cg a p.Mp <= 0 or a diverging residual. Stepped one step at a time, the count must turn 1 at
 * the step solve_fail_t names, not before. */
TEST(solver_failure_reported_at_its_step)
{
    static const char *const ways[] = {"solve", "cg:8", "cheb:8"};
    for (int w = 0; w < 3; w++) {
        vla_counts cnt;
        double sv[3];
        long seen = first_failure(ways[w], NULL, &cnt, sv);
        const vla_counts *cn = &cnt;
        CHECK_MSG(seen > 0 && cn->solve_fail == 1 && cn->solve_fail_t == seen && sv[1] == 1,
                  "%s bf16: failure seen at step %ld, counted %ld from step %ld, flag %g", ways[w],
                  seen, cn->solve_fail, cn->solve_fail_t, sv[1]);
        /* the value: solve's pivot <= 0 (or NaN); cg's p.Mp <= 0 or a residual ratio above 1 (or
         * NaN); cheb's residual ratio above 1 (or NaN) */
        double v = sv[2];
        int ok = w == 0 ? !(v > 0) : !(v > 0) || !(v <= 1);
        CHECK_MSG(ok, "%s: the first failure's value %g", ways[w], v);
    }
}

/* the settings: the way's spelling round trip, K and TOL out of range, gamma outside (0, 1], a
 * solver on a model without A, a nudge with M */
TEST(solver_settings)
{
    vla_config c;
    vla_config_default(&c, VLA_VLA3, 8);
    char buf[48];
    static const char *const good[] = {"solve", "cg:8", "cg:1e-06", "cheb:1000", "cg:1", "sm"};
    for (int i = 0; i < 6; i++) {
        CHECK(vla_track_set(&c, good[i]) == 0);
        vla_track_spec(&c, buf, sizeof buf);
        CHECK_MSG(!strcmp(buf, good[i]), "'%s' reads back as '%s'", good[i], buf);
    }
    static const char *const range[] = {"cg:0", "cg:1001", "cg:2.5", "cheb:0.5", "cg:-1", "cg:1e400"};
    for (int i = 0; i < 6; i++)
        CHECK_MSG(vla_track_set(&c, range[i]) == (i == 5 ? VLA_EINVAL : VLA_ERANGE), "%s", range[i]);
    CHECK(vla_track_set(&c, "sm:2") == VLA_EINVAL && vla_track_set(&c, "lu") == VLA_EINVAL &&
          vla_track_set(&c, "cg:") == VLA_EINVAL && vla_track_set(&c, NULL) == VLA_EINVAL);
    CHECK(vla_config_set(&c, "gamma", "0.5") == 0 && vla_config_check(&c) == 0);
    c.gamma = 1.5;
    CHECK(vla_config_check(&c) == VLA_ERANGE);
    c.gamma = 0;
    CHECK(vla_config_check(&c) == VLA_ERANGE);
    c.gamma = 1;
    vla_error why = {0};
    CHECK(vla_track_set(&c, "cheb:4") == 0 && vla_track_check(&c, &why) == VLA_ENOTSUP &&
          strstr(why.msg, "set nudge=off"));
    c.nudge = 0;
    CHECK(vla_track_check(&c, NULL) == 0);
    c.model = VLA_LA;
    CHECK(vla_track_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "use a model with A"));
    c.track = VLA_TRACK_SM;
    c.gamma = 0.9;
    CHECK(vla_track_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "gamma"));
    CHECK(vla_track_holds(VLA_TRACK_CHOL) == VLA_HOLDS_L && vla_track_holds(VLA_TRACK_CG) ==
          VLA_HOLDS_M && vla_track_holds(VLA_TRACK_SMSYM) == VLA_HOLDS_A);
}

/* ---- the chunk form with cg: MesaNet's arrangement (docs/forms.md; recur.h's cg with
 * recur_forms.h's chunk_mv) */

/* rls or vla3 (nudge off) with way `spec` in form `form` (NULL: seq) at d in f64 */
static void chunk_config(vla_config *c, vla_model_kind mk, const char *spec, const char *form,
                         int d)
{
    vla_config_default(c, mk, d);
    c->nudge = 0;
    CHECK(vla_track_set(c, spec) == 0);
    if (form)
        CHECK(vla_form_parse(c, form) == 0);
    CHECK(vla_config_check(c) == 0 && vla_track_check(c, NULL) == 0 &&
          vla_form_check(c, NULL) == 0);
}

/* In exact arithmetic a chunk's cold-started cg and the sequential warm-started one solve the
 * same systems M_t y = x (M_C = M_0 + U^T U and M_r = M_0 + U_{<=r}^T U_{<=r} are the sequential
 * sums), and each stops where ||r|| <= tol ||x|| (tol: the way's cg:TOL, or for cg:K = 2d, which
 * runs out only after exact cg's d steps, the rounding level 2^-53 of the reference's binary64
 * compute format, C_TOL), so each answer is within cond(M_t) tol of M_t^-1 x, relatively, in
 * both forms, and their difference within twice that. S_t sums t writes, each such an error
 * carried forward by transitions of norm about 1, so to first order the forms' S, o and M differ
 * by at most c t cond tol relatively, c = d (generous; cond measured on the way). At 256 bits the
 * arithmetic adds nothing visible, so the bound is the solver's alone. Measured (d = 6, cond
 * 2.4 .. 39, bounds 1.4e-13 .. 2.2e-6): 0 in binary64, every case: neither stop comes before
 * exact cg's d-th step on these spectra, where the residual is at 256 bits' level. */
TEST(solvers_chunk_cg_exact_agrees_with_seq)
{
    static const char *const specs[] = {"cg:12", "cg:1e-10"};
    static const char *const forms[] = {"chunk:4", "chunk:16"};
    static const vla_model_kind ms[] = {VLA_RLS, VLA_VLA3};
    const int d = 6;
    const long T = 96;
    for (int m = 0; m < 2; m++)
        for (int w = 0; w < 2; w++)
            for (int f = 0; f < 2; f++) {
                vla_config cs, cf;
                chunk_config(&cs, ms[m], specs[w], NULL, d);
                chunk_config(&cf, ms[m], specs[w], forms[f], d);
                vla_model *a, *b;
                vla_stream *s;
                vla_error err = {0};
                CHECK(vref_model_new(&a, &cs, VREF_EXACT, 256) == 0);
                CHECK(vref_model_new(&b, &cf, VREF_EXACT, 256) == 0);
                CHECK(vla_stream_open(&s, "lmlike", d, d, 77, &err) == 0);
                vla_step_buf buf;
                vla_step_buf_alloc(&buf, d, d);
                double x[36], y[36], lam[6], worst = 0, cond = 1;
                const vla_quantity qs[] = {VLA_Q_S, VLA_Q_M, VLA_Q_O};
                for (long t = 1; t <= T; t++) {
                    vla_stream_get(s, 0, t, &buf);
                    vla_input in = {.q = buf.q, .k = buf.k, .v = buf.v, .u = buf.u, .beta = NAN, .decay = NAN};
                    CHECK(vla_model_step(a, &in) == 0 && vla_model_step(b, &in) == 0);
                    if (vla_form_pending(&cf, t))
                        continue;
                    for (int q = 0; q < 3; q++) {
                        int n = qs[q] == VLA_Q_O ? d : d * d;
                        vla_model_get(a, qs[q], x);
                        vla_model_get(b, qs[q], y);
                        double e = vla_fro_diff(y, x, n) / vla_fro(x, n);
                        worst = e > worst || isnan(e) ? e : worst;
                        if (qs[q] == VLA_Q_M && vref_sym_eig(x, d, lam) == 0)
                            cond = lam[d - 1] / lam[0] > cond ? lam[d - 1] / lam[0] : cond;
                    }
                }
                double tol = cf.solve_tol > 0 ? cf.solve_tol : 0x1p-53;
                double bound = d * T * cond * tol;
                CHECK_MSG(worst <= bound, "%s %s %s: relative difference %.3g from seq at 256 bits "
                          "> %.3g (cond %.3g)", vla_model_name(ms[m]), specs[w], forms[f], worst,
                          bound, cond);
                vla_step_buf_free(&buf);
                vla_stream_close(s);
                vla_model_free(a);
                vla_model_free(b);
            }
}

/* Cold start by hand: with cg:1 a token's answer is cg's first step from x = 0,
 * y = (x.x / x.M_r x) x, with M_r = lambda0 I + sum_{j <= r} k_j k_j^T over every token so far
 * (rls: u' = k). After two chunks of 4 in f64 the gain of step 8 (VLA_Q_ALPHA) is that for
 * x = k_8, within a few roundings (measured 2e-16), and M is M_8 (9e-17); the sequential
 * cg:1, warm-started from step 7's gain, is not (0.16: the test tells the starts apart). */
TEST(solvers_chunk_cg_cold_start_by_hand)
{
    const int d = 5;
    vla_config cf, cs;
    chunk_config(&cf, VLA_RLS, "cg:1", "chunk:4", d);
    chunk_config(&cs, VLA_RLS, "cg:1", NULL, d);
    vla_model *a, *b;
    vla_stream *s;
    vla_error err = {0};
    CHECK(vla_model_new(&a, &cf) == 0 && vla_model_new(&b, &cs) == 0);
    CHECK(vla_stream_open(&s, "gauss", d, d, 3, &err) == 0);
    vla_step_buf buf;
    vla_step_buf_alloc(&buf, d, d);
    double M[25] = {0}, Mm[25], g[5], gs[5], h[5], mk[5], kk = 0, kmk = 0;
    for (int i = 0; i < d; i++)
        M[i * d + i] = cf.lambda0;
    for (long t = 1; t <= 8; t++) {
        vla_stream_get(s, 0, t, &buf);
        vla_input in = {.q = buf.q, .k = buf.k, .v = buf.v, .u = buf.u, .beta = NAN, .decay = NAN};
        CHECK(vla_model_step(a, &in) == 0 && vla_model_step(b, &in) == 0);
        for (int i = 0; i < d * d; i++)
            M[i] += buf.k[i / d] * buf.k[i % d];
    }
    for (int i = 0; i < d; i++) { /* buf.k: k_8 */
        mk[i] = 0;
        for (int j = 0; j < d; j++)
            mk[i] += M[i * d + j] * buf.k[j];
        kk += buf.k[i] * buf.k[i];
    }
    for (int i = 0; i < d; i++)
        kmk += buf.k[i] * mk[i];
    for (int i = 0; i < d; i++)
        h[i] = kk / kmk * buf.k[i];
    vla_model_get(a, VLA_Q_ALPHA, g);
    vla_model_get(b, VLA_Q_ALPHA, gs);
    vla_model_get(a, VLA_Q_M, Mm);
    double e = vla_fro_diff(g, h, d) / vla_fro(h, d), es = vla_fro_diff(gs, h, d) / vla_fro(h, d);
    double em = vla_fro_diff(Mm, M, d * d) / vla_fro(M, d * d);
    CHECK_MSG(e <= 1e-14 && em <= 1e-15 && es > 1e-3,
              "chunk:4 cg:1 at step 8: gain %.3g from the hand's (bound 1e-14), M %.3g (bound "
              "1e-15), the warm-started seq's %.3g (must differ)", e, em, es);
    const vla_counts *cn = vla_model_counts(a);
    CHECK_MSG(cn->solves == 8 && cn->solve_iters == 8 && cn->solve_fail == 0,
              "chunk:4 cg:1: %ld solves, %ld iterations, %ld failures", cn->solves,
              cn->solve_iters, cn->solve_fail);
    vla_step_buf_free(&buf);
    vla_stream_close(s);
    vla_model_free(a);
    vla_model_free(b);
}

/* A chunk's failed solve is counted at its token's step: solver_failure_reported_at_its_step's
 * bfloat16 case in chunk:4, where the state (and the count) exists at chunk ends only, so the
 * failure's step lies in the chunk that showed it, and its value is a p.Mp <= 0 or a residual
 * ratio above 1 (or NaN) */
TEST(solvers_chunk_cg_failure_at_its_token)
{
    vla_counts cnt;
    double sv[3];
    long seen = first_failure("cg:8", "chunk:4", &cnt, sv);
    const vla_counts *cn = &cnt;
    CHECK_MSG(seen > 0 && seen % 4 == 0 && cn->solve_fail >= 1 && cn->solve_fail <= 4 &&
                  cn->solve_fail_t > seen - 4 && cn->solve_fail_t <= seen && sv[1] == 1 &&
                  (!(sv[2] > 0) || !(sv[2] <= 1)),
              "chunk:4 cg:8 bf16: failure seen at step %ld, counted %ld from step %ld, flag %g, "
              "value %g", seen, cn->solve_fail, cn->solve_fail_t, sv[1], sv[2]);
}

/* what a chunk refuses among the ways that keep M, naming what fits: solve and cheb (they read
 * M_r, which a chunk never forms); cg is admitted, for vla1 too, and forgetting stays refused */
TEST(solvers_chunk_refusals)
{
    static const char *const no[] = {"solve", "cheb:4"};
    vla_error why = {0};
    vla_config c;
    for (int i = 0; i < 2; i++) {
        chunk_config(&c, VLA_VLA3, "cg:8", "chunk:8", 8);
        CHECK(vla_track_set(&c, no[i]) == 0);
        CHECK_MSG(vla_form_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "cg:K") &&
                      strstr(why.msg, "sm"),
                  "%s in chunk:8: %s", no[i], vla_error_msg(&why));
    }
    vla_config_default(&c, VLA_VLA1, 8);
    c.nudge = c.clamp_on = 0;
    CHECK(vla_track_set(&c, "cg:1e-6") == 0 && vla_form_parse(&c, "chunk:16") == 0);
    CHECK(vla_track_check(&c, NULL) == 0 && vla_form_check(&c, NULL) == 0);
    c.gamma = 0.9;
    CHECK(vla_form_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "gamma"));
    c.gamma = 1;
    c.track = VLA_TRACK_JOSEPH;
    CHECK(vla_form_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "cg:K"));
}
