/* test_conform.c: lib/ in strict mode against the MPFR format emulation, bit for bit (docs/math.md
 * section 6). Both run the same recur.h text, so one differing bit is an arithmetic
 * error in lib/ (a missed rounding, a contraction, excess precision), not a transcription error.
 * The first difference is printed with its step, quantity, element and both values in hex. */
#include "check.h"
#include "tables.h"
#include "vlacuda.h"
#include "vlaref.h"
#include "vlastab.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *what;
    long t;
    int elem;
    double a, b;
} first_diff;

/* x and y vla_test_same at every one of n entries */
static int same_bits(const double *x, const double *y, size_t n)
{
    return vla_test_diff_at(x, y, (long)n) < 0;
}

/* the models that track A, from the model table (the ways of tracking A apply to them), into ms;
 * how many */
static int models_with_A(vla_model_kind *ms)
{
    int n = 0;
    for (int m = 0; m < VLA_NMODEL; m++)
        if (vla_model_has_A((vla_model_kind)m))
            ms[n++] = (vla_model_kind)m;
    return n;
}

/* cfg for a model, way of tracking (vla_track_set's spelling), forgetting factor, precision and
 * form (NULL: seq); 1 when lib admits it. chol and the ways that keep M are defined without the
 * nudge and the clamp; a chunk takes the devices that fit it (a nudge period that is a multiple of
 * C, no clamp, vla3's floor as its only guard) */
static int config_of(vla_config *c, vla_model_kind mk, const char *spec, double gamma, vla_prec p,
                     int d, const char *form)
{
    vla_config_default(c, mk, d);
    c->prec = p;
    c->gamma = gamma;
    CHECK(vla_track_set(c, spec) == 0);
    if (vla_track_holds(c->track) != VLA_HOLDS_A)
        c->nudge = c->clamp_on = 0;
    if (form && vla_form_parse(c, form))
        return 0;
    if (vla_form_pending(c, 1)) {
        c->period = 64;
        c->clamp_on = 0;
        c->guard = mk == VLA_VLA3;
    }
    return !vla_track_check(c, NULL) && !vla_form_check(c, NULL);
}

/* delta with delta_form=decay takes vla_test_decay's a_t, every other configuration the stream's */
static int decays(const vla_config *c)
{
    return c->model == VLA_DELTA && c->delta_form == VLA_DELTA_DECAY;
}
static double decay_of(const vla_config *c, long t, double stream)
{
    return decays(c) ? vla_test_decay(t) : stream;
}

/* steps lib and the emulation side by side; returns the number of steps whose state differed */
static long conform(const vla_config *cfg, const char *stream, long steps, first_diff *fd)
{
    vla_config c = *cfg;
    const vla_model_kind mk = c.model;
    const int d = c.d;
    vla_model *a, *b;
    vla_stream *s;
    vla_error err = {0};
    CHECK(vla_model_new(&a, &c) == 0);
    CHECK(vref_model_new(&b, &c, VREF_EMULATE, 0) == 0);
    CHECK_MSG(vla_stream_open(&s, stream, d, d, 1234, &err) == 0, "%s", err.msg);
    vla_stream_want(s, vla_model_reads(&c)); /* the gated family's gates */
    vla_step_buf buf;
    vla_step_buf_alloc(&buf, d, d);
    size_t n = (size_t)d * d;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    static const vla_quantity qs[] = {VLA_Q_S, VLA_Q_A, VLA_Q_N, VLA_Q_O, VLA_Q_ALPHA, VLA_Q_SOLVER};
    static const char *const qn[] = {"S", "A", "n", "o", "alpha", "solver"};
    const int nq = vla_track_holds(c.track) == VLA_HOLDS_M && vla_model_has_A(mk) ? 6 : 5;
    long bad = 0;
    for (long t = 1; t <= steps + 1; t++) {
        if (t <= steps) {
            vla_stream_get(s, 0, t, &buf);
            vla_input in = vla_input_of(&buf);
            in.decay = decay_of(&c, t, buf.decay);
            CHECK(vla_model_step(a, &in) == 0 && vla_model_step(b, &in) == 0);
        } else { /* the stream's end: a chunk form's last chunk when steps is no multiple of C */
            const long tail = vla_form_pending(&c, steps);
            CHECK(vla_model_finish(a) == 0 && vla_model_finish(b) == 0);
            if (tail) { /* ... every token's read-out */
                double *ca = malloc(tail * d * sizeof *ca), *cb = malloc(tail * d * sizeof *cb);
                CHECK(vla_model_get(a, VLA_Q_CO, ca) == 0 && vla_model_get(b, VLA_Q_CO, cb) == 0);
                if (!same_bits(ca, cb, (size_t)tail * d) && !bad)
                    *fd = (first_diff){"co", t, 0, ca[0], cb[0]};
                bad += !same_bits(ca, cb, (size_t)tail * d);
                free(ca);
                free(cb);
            }
        }
        int differs = 0;
        for (int qi = 0; qi < nq; qi++) {
            if (qs[qi] == VLA_Q_A && !vla_model_has_A(mk))
                continue;
            size_t len = qs[qi] == VLA_Q_S || qs[qi] == VLA_Q_A ? n
                         : qs[qi] == VLA_Q_SOLVER                ? 3
                                                                  : (size_t)d;
            vla_model_get(a, qs[qi], x);
            vla_model_get(b, qs[qi], y);
            if (!same_bits(x, y, len)) {
                size_t i = 0;
                while (same_bits(&x[i], &y[i], 1))
                    i++;
                if (!bad && !differs)
                    *fd = (first_diff){qn[qi], t, (int)i, x[i], y[i]};
                differs = 1;
            }
        }
        bad += differs;
        if (bad > 0 && t > 10 + fd->t) /* enough to report */
            break;
    }
    const vla_counts *ca = vla_model_counts(a), *cb = vla_model_counts(b);
    CHECK(ca->guard == cb->guard && ca->zero_norm == cb->zero_norm &&
          ca->solve_iters == cb->solve_iters && ca->solve_fail == cb->solve_fail &&
          ca->solve_fail_t == cb->solve_fail_t && ca->den_inf == cb->den_inf &&
          ca->den_inf_t == cb->den_inf_t && ca->cache_sat == cb->cache_sat);
    free(x);
    free(y);
    vla_step_buf_free(&buf);
    vla_stream_close(s);
    vla_model_free(a);
    vla_model_free(b);
    return bad;
}

/* the ways of tracking A a model has: all for models with an A, one (irrelevant) for la, delta */
static int ntracks(vla_model_kind mk) { return vla_model_has_A(mk) ? VLA_NTRACK : 1; }

/* VLA_TEST_SCALE (default 1) scales every horizon: the sanitizer pass of CI runs at 0.25 */
static long scaled(long steps)
{
    const char *e = getenv("VLA_TEST_SCALE");
    double f = e ? atof(e) : 1;
    long s = (long)(steps * (f > 0 ? f : 1));
    return s < 20 ? 20 : s;
}

/* configuration c (way spec) on `stream`, `steps` steps: lib and the emulation agree */
static void check_conform(const vla_config *c, const char *spec, const char *stream, long steps)
{
    char form[32];
    vla_form_name(c, form, sizeof form);
    first_diff fd = {0};
    long bad = conform(c, stream, steps, &fd);
    CHECK_MSG(bad == 0,
              "%s%s %s %s d=%d %s gamma=%g %s: first difference at step %ld in %s[%d]: lib %a, "
              "emulation %a",
              vla_model_name(c->model), decays(c) ? " (decay)" : "", spec, vla_prec_name(c->prec),
              c->d, stream, c->gamma, form, fd.t, fd.what, fd.elem, fd.a, fd.b);
}

/* a case of model mk, way spec (vla_track_set's spelling), precision p at d, `steps` steps, in a
 * form (NULL: seq); gamma != 1 forgets */
static void run_spec(vla_model_kind mk, const char *spec, double gamma, vla_prec p, int d,
                     const char *stream, long steps, const char *form)
{
    vla_config c;
    if (config_of(&c, mk, spec, gamma, p, d, form)) /* not: e.g. sr without 16-bit storage */
        check_conform(&c, spec, stream, steps);
}

static void run_form(vla_model_kind mk, vla_track tr, vla_prec p, int d, const char *stream,
                     long steps, const char *form)
{
    run_spec(mk, vla_track_name(tr), 1, p, d, stream, scaled(steps), form);
}

/* The ways that keep M cost O(d^3) (solve) or K + 1 products with M (cg, cheb) a step, about
 * d / 3 times sm's, and the emulation far more: beyond d = 8 they run a fifth of the steps (every
 * operation of their text already runs at the first step; the long run is conform_long's). */
static void run_case(vla_model_kind mk, vla_track tr, vla_prec p, int d, const char *stream,
                     long steps)
{
    long s = scaled(steps);
    if (vla_track_holds(tr) == VLA_HOLDS_M && d > 8)
        s = (s + 4) / 5;
    run_spec(mk, vla_track_name(tr), 1, p, d, stream, s, NULL);
}

static const char *const streams[] = {"gauss", "lmlike", "subspace:2,0.01"};

/* every model, way of tracking A, precision and stream at d = 4, 1000 steps; and each at
 * d = 33 (odd: no loop may silently assume an even or power-of-two size) on one stream, rotated */
TEST_SLOW(conform_all_models_precisions_small_d)
{
    int k = 0;
    for (int mk = 0; mk < VLA_NMODEL; mk++)
        for (int tr = 0; tr < ntracks(mk); tr++)
            for (int p = 0; p < VLA_NPREC; p++, k++) {
                for (int si = 0; si < 3; si++)
                    run_case(mk, tr, p, 4, streams[si], 1000);
                run_case(mk, tr, p, 33, streams[k % 3], 100);
            }
}

/* d = 32 and 64: each (model, tracking, precision) once, the stream and d rotated through */
TEST_SLOW(conform_all_models_precisions_large_d)
{
    int k = 0;
    for (int mk = 0; mk < VLA_NMODEL; mk++)
        for (int tr = 0; tr < ntracks(mk); tr++)
            for (int p = 0; p < VLA_NPREC; p++, k++)
                run_case(mk, tr, p, k % 2 ? 64 : 32, streams[k % 3], k % 2 ? 30 : 60);
}

/* lib's AVX2 instantiation (the vectorized path of a processor without AVX-512; VLA_SIMD=avx2
 * chooses it here): d = 32 and 64 in 8 x 8 (f64 4 x 4) tiles, and d = 33 and 13, whose last
 * rows and columns the tiles leave to the scalar tail, each model, tracking and precision once */
TEST_SLOW(conform_avx2_path)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("avx2")) {
        vla_test_skip("no AVX2");
        return;
    }
#endif
    const char *old = getenv("VLA_SIMD");
    setenv("VLA_SIMD", "avx2", 1);
    static const int ds[] = {32, 64, 33, 13};
    int k = 0;
    for (int mk = 0; mk < VLA_NMODEL; mk++)
        for (int tr = 0; tr < ntracks(mk); tr++)
            for (int p = 0; p < VLA_NPREC; p++, k++)
                run_case(mk, tr, p, ds[k % 4], streams[k % 3], k % 4 == 1 ? 30 : 60);
    if (old)
        setenv("VLA_SIMD", old, 1);
    else
        unsetenv("VLA_SIMD");
}

/* 1000 steps at d = 32 for the recurrences that matter most: vla3 and rls in every precision */
TEST_SLOW(conform_vla3_rls_d32_1000_steps)
{
    for (int p = 0; p < VLA_NPREC; p++) {
        run_case(VLA_VLA3, VLA_TRACK_SM, p, 32, "lmlike", 1000);
        run_case(VLA_RLS, VLA_TRACK_SMSYM, p, 32, "subspace:4,0.001", 1000);
    }
}

/* the solvers' parameters and forgetting, every precision: cg to a tolerance (lanes... a run
 * stops where its own residual says), Chebyshev with few steps, gamma in every way that can
 * forget (the tracking ways by RLS's rule, the solvers with the regularizer), at d = 5 */
TEST(conform_solvers_forgetting)
{
    static const char *const specs[] = {"cg:1e-3", "cg:3", "cheb:2", "solve", "sm", "sm-sym",
                                        "joseph", "chol", "comp", "sr"};
    vla_model_kind ms[VLA_NMODEL];
    const int nm = models_with_A(ms);
    int k = 0;
    for (int i = 0; i < 10; i++)
        for (int p = 0; p < VLA_NPREC; p++, k++)
            run_spec(ms[k % nm], specs[i], i < 3 ? 1 : 0.97, p, 5, streams[k % 3], scaled(300),
                     NULL);
}

/* make conformance-long: VLA_CONFORM_LONG=STEPS runs vla3 and rls in every precision and way of
 * tracking A at d = 32 for that many steps (10^5 by the Makefile); skipped otherwise */
TEST_SLOW(conform_long)
{
    const char *e = getenv("VLA_CONFORM_LONG");
    if (!e) {
        vla_test_skip("set VLA_CONFORM_LONG=STEPS (make conformance-long)");
        return;
    }
    long steps = scaled(atol(e)); /* every way the whole horizon, the solvers too */
    for (int tr = 0; tr < VLA_NTRACK; tr++)
        for (int p = 0; p < VLA_NPREC; p++) {
            run_spec(VLA_VLA3, vla_track_name(tr), 1, p, 32, "lmlike", steps, NULL);
            run_spec(VLA_RLS, vla_track_name(tr), 1, p, 32, "subspace:4,0.001", steps, NULL);
        }
}

/* The chunk and scan forms (docs/forms.md), every model x way of tracking x precision that has
 * them (cg: its default cg:8 here, and cg:1e-3, cg:3 below), bit for bit: d = 4 on a stream
 * rotated (64 steps: 16 chunks of 4, 4 of 16), and every eighth at d = 13 (odd); and delta's
 * decay (exp of the cumulative log-decays in a chunk, a_t (I - beta k' k'^T) in the scan) in
 * every precision, at d = 4 and every third at d = 13 */
TEST(conform_forms)
{
    static const char *const forms[] = {"chunk:4", "chunk:16", "scan"};
    int k = 0;
    for (int f = 0; f < 3; f++)
        for (int mk = 0; mk < VLA_NMODEL; mk++)
            for (int tr = 0; tr < ntracks(mk); tr++)
                for (int p = 0; p < VLA_NPREC; p++, k++) {
                    run_form(mk, tr, p, 4, streams[k % 3], 64, forms[f]);
                    if (k % 8 == 0) /* a last chunk of 7 (chunk:16), 3 (chunk:4) tokens */
                        run_form(mk, tr, p, 13, streams[k % 3], 39, forms[f]);
                }
    /* cg's other settings in a chunk (MesaNet's arrangement): to a tolerance, where each token's
     * iteration stops on its own residual, and fewer iterations than d */
    static const char *const cgs[] = {"cg:1e-3", "cg:3"};
    vla_model_kind ms[VLA_NMODEL];
    const int nm = models_with_A(ms);
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 2; i++)
            for (int p = 0; p < VLA_NPREC; p++, k++)
                run_spec(ms[k % nm], cgs[i], 1, p, k % 4 ? 5 : 13, streams[k % 3], scaled(64),
                         forms[f]);
    for (int f = 0; f < 3; f++)
        for (int p = 0; p < VLA_NPREC; p++, k++) {
            vla_config c;
            CHECK(config_of(&c, VLA_DELTA, "sm", 1, p, 4, forms[f]));
            c.delta_form = VLA_DELTA_DECAY;
            check_conform(&c, "sm", streams[k % 3], scaled(64));
            if (k % 3 == 0) {
                c.d = c.dv = 13;
                check_conform(&c, "sm", streams[k % 3], scaled(32));
            }
        }
}

/* 1 where model m has a chunk form (vla_form_check admits chunk:16) */
static int has_chunk(int m)
{
    vla_config c;
    vla_config_default(&c, (vla_model_kind)m, 4);
    return !vla_form_parse(&c, "chunk:16") && !vla_form_check(&c, NULL);
}

/* The exponent-range knobs of the chunk forms (docs/forms.md), bit for bit: the gated
 * models with a chunk form (gdn, mamba2: a scalar decay; kda, gla: per channel) in every precision,
 * chunk:16 on d = 4, each under six settings that together take every value of every knob: the
 * tree-ordered, io-rounded cumulative sum in base 2 with the clamp; each anchor (blocks of 4, 8 and
 * of the chunk); the gate's bound by each map */
TEST(conform_gates)
{
    static const char *const sets[][8] = {
        {"cumsum=tree", "cumsum_fmt=io", "base=2", "gate_clamp=on"},
        {"anchor=mid", "anchor_block=4", "base=2", "gate_lb=-5", "gate_map=sigmoid"},
        {"anchor=last", "cumsum=tree", "gate_lb=-2"},
        {"anchor=first", "anchor_block=8", "cumsum_fmt=io", "gate_lb=-1", "gate_map=clamp"},
        {"anchor=mid", "base=2", "gate_lb=-3", "gate_map=pin"},
        {"anchor=start", "anchor_block=8", "gate_lb=-4", "gate_map=pin"},
    };
    /* a chunk with a low-rank term (the lr column: rwkv7) takes the first set only (no anchor:
     * vla_form_check); a gated model without a chunk form (has_chunk) none */
    int k = 0;
    for (int i = 0; i < 6; i++)
        for (int m = 0; m < VLA_NMODEL; m++) /* the gated family, from the model table */
            for (int p = 0; p < VLA_NPREC && vla_model_gate(m) && (i == 0 || !vla_col_lr(m)) &&
                            has_chunk(m);
                 p++, k++) {
                vla_config c;
                char desc[128] = "";
                CHECK(config_of(&c, m, "sm", 1, p, 4, "chunk:16"));
                for (int j = 0; j < 8 && sets[i][j]; j++) {
                    char name[32];
                    const char *eq = strchr(sets[i][j], '=');
                    snprintf(name, sizeof name, "%.*s", (int)(eq - sets[i][j]), sets[i][j]);
                    CHECK(vla_config_set(&c, name, eq + 1) == 0);
                    snprintf(desc + strlen(desc), sizeof desc - strlen(desc), " %s", sets[i][j]);
                }
                CHECK(vla_config_check(&c) == 0 && vla_form_check(&c, NULL) == 0);
                first_diff fd = {0};
                long bad = conform(&c, streams[k % 3], scaled(64), &fd);
                CHECK_MSG(bad == 0, "%s %s chunk:16%s: first difference at step %ld in %s[%d]: "
                          "lib %a, emulation %a", vla_model_name(c.model), vla_prec_name(c.prec),
                          desc, fd.t, fd.what, fd.elem, fd.a, fd.b);
            }
}

/* In exact arithmetic a form is the recurrence: every model's chunk and scan forms against the
 * sequential one on the same inputs in MPFR at P bits, |X_form - X_seq|_F / |X_seq|_F for S, A,
 * o at every chunk's end. At P = 40 below d t u, u = 2^-40 (measured: 2^-37.6 .. 2^-34.8 for
 * d t u = 2^-30.8), and above 0 (the form ran); at
 * P = 256 the two agree in every bit of binary64, which is all vla_model_get shows of them. And
 * chunk:1, defined as the sequential recurrence, gives its bits in every precision. */
TEST(forms_exact_agree_with_seq)
{
    static const char *const forms[] = {"chunk:2", "chunk:8", "chunk:32", "scan"};
    const int d = 6;
    const long T = 96;
    for (int P = 40; P <= 256; P += 216)
    for (int m = 0; m <= VLA_NMODEL; m++) /* m = VLA_NMODEL: delta with its decay */
        for (int f = 0; f < 4; f++) {
            const vla_model_kind mk = m < VLA_NMODEL ? (vla_model_kind)m : VLA_DELTA;
            vla_config cs, cf;
            if (!config_of(&cf, mk, "sm", 1, VLA_F64, d, forms[f]))
                continue;
            if (m == VLA_NMODEL)
                cf.delta_form = VLA_DELTA_DECAY;
            cs = cf;
            cs.form = VLA_FORM_SEQ;
            cs.chunk = 0;
            vla_model *a, *b;
            vla_stream *s;
            vla_error err = {0};
            CHECK(vref_model_new(&a, &cs, VREF_EXACT, P) == 0);
            CHECK(vref_model_new(&b, &cf, VREF_EXACT, P) == 0);
            CHECK(vla_stream_open(&s, "lmlike", d, d, 77, &err) == 0);
            vla_stream_want(s, vla_model_reads(&cf));
            vla_step_buf buf;
            vla_step_buf_alloc(&buf, d, d);
            double x[36], y[36], worst = 0, bound = P == 256 ? 0 : d * T * 0x1p-40;
            const vla_quantity qs[] = {VLA_Q_S, VLA_Q_A, VLA_Q_O};
            for (long t = 1; t <= T; t++) {
                vla_stream_get(s, 0, t, &buf);
                vla_input in = vla_input_of(&buf);
                in.g = NULL;
                in.decay = decay_of(&cf, t, buf.decay);
                CHECK(vla_model_step(a, &in) == 0 && vla_model_step(b, &in) == 0);
                if (vla_form_pending(&cf, t))
                    continue;
                for (int q = 0; q < 3; q++) {
                    int n = qs[q] == VLA_Q_O ? d : d * d;
                    if (qs[q] == VLA_Q_A && !vla_model_has_A(mk))
                        continue;
                    vla_model_get(a, qs[q], x);
                    vla_model_get(b, qs[q], y);
                    double e = vla_fro_diff(y, x, n) / vla_fro(x, n);
                    worst = e > worst ? e : worst;
                }
            }
            CHECK_MSG(worst <= bound,
                      "%s%s %s: relative difference %.3g from seq at %d bits > %.3g",
                      vla_model_name(mk), decays(&cf) ? " (decay)" : "", forms[f], worst, P, bound);
            CHECK_MSG(worst > 0 || P == 256, "%s%s %s: no difference at %d bits: is the form run?",
                      vla_model_name(mk), decays(&cf) ? " (decay)" : "", forms[f], P);
            vla_step_buf_free(&buf);
            vla_stream_close(s);
            vla_model_free(a);
            vla_model_free(b);
        }
    for (int m = 0; m <= VLA_NMODEL; m++)
        for (int p = 0; p < VLA_NPREC; p++) {
            const vla_model_kind mk = m < VLA_NMODEL ? (vla_model_kind)m : VLA_DELTA;
            vla_config c;
            config_of(&c, mk, "sm", 1, p, 5, "chunk:1");
            if (m == VLA_NMODEL)
                c.delta_form = VLA_DELTA_DECAY;
            vla_model *a, *b;
            CHECK(vla_model_new(&a, &c) == 0);
            c.form = VLA_FORM_SEQ;
            c.chunk = 0;
            CHECK(vla_model_new(&b, &c) == 0);
            vla_stream *s;
            vla_error err = {0};
            CHECK(vla_stream_open(&s, "gauss", 5, 5, 3, &err) == 0);
            vla_stream_want(s, vla_model_reads(&c));
            vla_step_buf buf;
            vla_step_buf_alloc(&buf, 5, 5);
            for (long t = 1; t <= 50; t++) {
                vla_stream_get(s, 0, t, &buf);
                vla_input in = vla_input_of(&buf);
                in.g = NULL;
                in.decay = decay_of(&c, t, buf.decay);
                vla_model_step(a, &in);
                vla_model_step(b, &in);
            }
            double x[25], y[25];
            vla_model_get(a, VLA_Q_S, x);
            vla_model_get(b, VLA_Q_S, y);
            CHECK_MSG(same_bits(x, y, 25), "chunk:1 %s%s %s: not the sequential bits",
                      vla_model_name(mk), decays(&c) ? " (decay)" : "", vla_prec_name(p));
            vla_step_buf_free(&buf);
            vla_stream_close(s);
            vla_model_free(a);
            vla_model_free(b);
        }
}

/* The kernels' 16-bit choices (docs/forms.md), bit for bit in every precision: the chunk's
 * triangular inverse by each way (tri=forward, neumann, blocked; blocked merges 16 x 16 blocks
 * at C = 32 and 64, and is forward substitution at C <= 16) and S_0 staged in f16, bf16 or not
 * rounded (stage=off) in the gated delta rule (the gated models that read beta: gdn, kda), and
 * decoding's 16-bit state, bfloat16 decays and beta (cache=f16|bf16, decay_bf16, beta_bf16) in
 * every gated model with a decay */
TEST(conform_kernel_choices)
{
    static const char *const tris[] = {"forward", "neumann", "blocked"};
    static const char *const stages[] = {"f16", "bf16", "off"};
    vla_model_kind ms[VLA_NMODEL]; /* the gated delta rule: the gated models whose chunk form
                                      reads tri (mamba3's beta is no delta rule's) */
    int nm = 0, k = 0;
    for (int m = 0; m < VLA_NMODEL; m++) {
        vla_config c;
        vla_config_default(&c, (vla_model_kind)m, 4);
        if (vla_model_gate((vla_model_kind)m) && has_chunk(m) &&
            !vla_form_parse(&c, "chunk:16") && vla_setting_read(&c, "tri", NULL) == VLA_OK)
            ms[nm++] = (vla_model_kind)m;
    }
    CHECK_MSG(nm > 0, "no gated model reads beta");
    for (int p = 0; p < VLA_NPREC; p++)
        for (int m = 0; m < nm; m++, k++) {
            vla_config c;
            for (int t = 0; t < 3; t++) {
                CHECK(config_of(&c, ms[m], "sm", 1, p, 4, "chunk:32"));
                CHECK(vla_config_set(&c, "tri", tris[t]) == 0);
                check_conform(&c, tris[t], streams[k % 3], scaled(64));
            }
            CHECK(config_of(&c, ms[m], "sm", 1, p, k % 4 ? 4 : 5, "chunk:64"));
            CHECK(vla_config_set(&c, "tri", tris[k % 2 ? 1 : 2]) == 0);
            check_conform(&c, tris[k % 2 ? 1 : 2], streams[(k + 1) % 3], scaled(64));
            CHECK(config_of(&c, ms[m], "sm", 1, p, 4, "chunk:16"));
            CHECK(vla_config_set(&c, "stage", stages[k % 3]) == 0);
            check_conform(&c, stages[k % 3], streams[k % 3], scaled(64));
        }
    for (int p = 0; p < VLA_NPREC; p++)
        for (int m = 0; m < VLA_NMODEL; m++) {
            vla_config c;
            if (!vla_model_gate(m)) /* the gated family, from the model table */
                continue;
            CHECK(config_of(&c, m, "sm", 1, p, k % 5 ? 4 : 7, NULL));
            CHECK(vla_config_set(&c, "cache", k % 2 ? "bf16" : "f16") == 0);
            CHECK(vla_config_set(&c, "decay_bf16", k % 3 ? "on" : "off") == 0);
            if (vla_model_reads(&c) & VLA_IN_BETA)
                CHECK(vla_config_set(&c, "beta_bf16", k % 4 < 2 ? "on" : "off") == 0);
            CHECK(vla_config_check(&c) == 0);
            check_conform(&c, "sm", streams[k % 3], scaled(200));
            k++;
        }
}

/* Decoding's state cache (docs/forms.md, "The state cache") bit for bit with its emulation: every
 * model, each format with each rounding (rn, sr's Philox words, ef's residual), a scale per row,
 * per 3 rows (a last group cut short), per head, or none, in the policies with a binary32 state */
TEST(conform_state_cache)
{
    static const char *const fmts[] = {"f16", "bf16", "e4m3", "e5m2", "int8", "int16"};
    static const char *const rounds[] = {"rn", "sr", "ef"};
    static const char *const rows[] = {"1", "3", "4", "0"};
    static const vla_prec precs[] = {VLA_F32, VLA_F16_KERN, VLA_BF16_KERN};
    int k = 0;
    for (int f = 0; f < 6; f++)
        for (int r = 0; r < 3; r++, k++) {
            vla_config c;
            const vla_model_kind m = (vla_model_kind)(k % VLA_NMODEL);
            CHECK(config_of(&c, m, "sm", 1, precs[k % 3], 4, NULL));
            CHECK(vla_config_set(&c, "cache", fmts[f]) == 0);
            CHECK(vla_config_set(&c, "cache_round", rounds[r]) == 0);
            CHECK(vla_config_set(&c, "cache_rows", rows[(k + (f >= 4)) % (f >= 4 ? 3 : 4)]) == 0);
            CHECK_MSG(vla_config_check(&c) == 0, "%s cache=%s cache_round=%s",
                      vla_model_name(m), fmts[f], rounds[r]);
            check_conform(&c, fmts[f], streams[k % 3], scaled(120));
        }
}

/* bfloat16's nearest (ties to even) of a binary32 value by its bits, written here from the format's
 * definition (8 significant bits: the low 16 bits dropped, rounded) */
static double bf16_of(float y)
{
    uint32_t u;
    memcpy(&u, &y, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&y, &u, 4);
    return y;
}

/* cfg for mk in f32 (d x d) with the state cache fmt, rounded by round, with a scale per rows
 * rows; 1 when lib admits it */
static int cache_config(vla_config *c, vla_model_kind mk, int d, const char *fmt,
                        const char *round, const char *rows)
{
    return config_of(c, mk, "sm", 1, VLA_F32, d, NULL) && vla_config_set(c, "cache", fmt) == 0 &&
           vla_config_set(c, "cache_round", round) == 0 &&
           vla_config_set(c, "cache_rows", rows) == 0 && vla_config_check(c) == 0;
}

/* a (lib's model) and b (its emulation, vref's) stepped alike through steps draws of the gauss
 * stream of seed; vscale > 0: each v times vscale, with no decay and beta = 1 (gdn then writes
 * S = v k^T: its size is v's) */
static void cache_steps(vla_model *a, vla_model *b, const vla_config *c, long seed, long steps,
                        double vscale)
{
    const int d = c->d;
    vla_stream *s;
    vla_step_buf buf;
    vla_error err = {0};
    CHECK_MSG(vla_stream_open(&s, "gauss", d, d, seed, &err) == 0, "%s", err.msg);
    vla_stream_want(s, vla_model_reads(c));
    vla_step_buf_alloc(&buf, d, d);
    double *v = malloc(d * sizeof *v);
    CHECK(v);
    for (long t = 1; t <= steps; t++) {
        vla_stream_get(s, 0, t, &buf);
        vla_input in = vla_input_of(&buf);
        if (vscale > 0 && v) {
            for (int i = 0; i < d; i++)
                v[i] = vscale * in.v[i];
            in.v = v, in.lgs = 0, in.beta = 1;
        }
        CHECK(vla_model_step(a, &in) == 0 && vla_model_step(b, &in) == 0);
    }
    free(v);
    vla_step_buf_free(&buf);
    vla_stream_close(s);
}

/* The state before the first step is kept in the cache as every state between two steps is (a
 * prefill's final state handed to decode, docs/forms.md "Prefill, then decode"): S_0 read back at
 * t = 0 is bfloat16's nearest of its binary32 value (bf16_of), and with int8 per row vLLM's
 * scale -> round -> clamp -> cast: s = amax / 127 in binary32, q = nearest(y / s), S = q s, each
 * written here; and the run from S_0 is bit for bit its emulation's for 40 steps in every cache
 * and rounding (ef's residual starting at S_0 less its cached value, sr's words at t = 0) */
TEST(conform_state_cache_from_S0)
{
    static const char *const fmts[] = {"bf16", "int8", "e4m3", "int16", "int8"};
    static const char *const rounds[] = {"rn", "rn", "sr", "ef", "ef"};
    static const char *const rows[] = {"0", "1", "1", "3", "1"};
    const int d = 6;
    double S0[36], x[36], y[36];
    for (int i = 0; i < d * d; i++) /* binary32 values of many magnitudes */
        S0[i] = (float)(sin(1.7 * i + 0.3) * pow(10.0, (i % 7) - 3));
    for (int f = 0; f < 5; f++) {
        vla_config c;
        CHECK(cache_config(&c, f % 2 ? VLA_KDA : VLA_GDN, d, fmts[f], rounds[f], rows[f]));
        vla_model *a, *b;
        CHECK(vla_model_new(&a, &c) == 0 && vref_model_new(&b, &c, VREF_EMULATE, 0) == 0);
        CHECK(vla_model_start(a, S0) == 0 && vla_model_start(b, S0) == 0);
        CHECK(vla_model_get(a, VLA_Q_S, x) == 0 && vla_model_get(b, VLA_Q_S, y) == 0);
        CHECK_MSG(same_bits(x, y, 36), "cache=%s %s: S_0 differs from its emulation", fmts[f],
                  rounds[f]);
        long off = 0;
        for (int i = 0; i < d * d && f < 2; i++) {
            double want = bf16_of((float)S0[i]);
            if (f == 1) {
                double amax = 0;
                for (int j = i / d * d; j < i / d * d + d; j++)
                    amax = fmax(amax, fabs(S0[j]));
                const float s = (float)(amax / 127);
                want = (float)(fmin(fmax(nearbyint((float)(S0[i] / s)), -127), 127) * s);
            }
            off += x[i] != want;
        }
        CHECK_MSG(off == 0, "cache=%s: %ld entries of S_0 not the cache's", fmts[f], off);
        CHECK_MSG(f >= 2 || memcmp(x, S0, sizeof x), "cache=%s: S_0 left as it was", fmts[f]);
        cache_steps(a, b, &c, 77, 40, 0);
        CHECK(vla_model_get(a, VLA_Q_S, x) == 0 && vla_model_get(b, VLA_Q_S, y) == 0);
        CHECK_MSG(same_bits(x, y, 36), "cache=%s %s: S_40 from S_0 differs from its emulation",
                  fmts[f], rounds[f]);
        vla_model_free(a);
        vla_model_free(b);
    }
}

/* An fp8 or integer cache clamps an entry past its largest (e4m3's 448, int8's 127 after the
 * scale) as a satfinite cast does; each clamp is counted (vla_counts.cache_sat), the same count as
 * the emulation's. gdn with decay 1 and beta = 1 writes S = v k^T against a unit k: v of size
 * 2000 puts entries past 448. Without a scale (cache_rows=0) e4m3 clamps; with a scale per row
 * the largest entry is amax / (amax / 448), 448 within a binary32 rounding, which rounds to 448
 * (to nearest and with ef): no clamp. sr can round that x, when it lies one binary32 ulp above
 * the largest, up to the next number and clamp it back, off by less than sr's own spacing: no
 * saturation either (vla_cache_value_sat), so a scaled cache counts none in every rounding. */
static long sat_run(const char *fmt, const char *round, const char *rows, double vscale)
{
    const int d = 4;
    vla_config c;
    CHECK(cache_config(&c, VLA_GDN, d, fmt, round, rows));
    vla_model *a, *b;
    CHECK(vla_model_new(&a, &c) == 0 && vref_model_new(&b, &c, VREF_EMULATE, 0) == 0);
    cache_steps(a, b, &c, 5, 60, vscale);
    double x[16], y[16];
    CHECK(vla_model_get(a, VLA_Q_S, x) == 0 && vla_model_get(b, VLA_Q_S, y) == 0);
    CHECK_MSG(same_bits(x, y, 16), "cache=%s %s rows %s: S differs from its emulation", fmt,
              round, rows);
    const long n = vla_model_counts(a)->cache_sat, ne = vla_model_counts(b)->cache_sat;
    CHECK_MSG(n == ne, "cache=%s %s rows %s: %ld clamps, the emulation %ld", fmt, round, rows, n,
              ne);
    vla_model_free(a);
    vla_model_free(b);
    return n;
}

TEST(conform_state_cache_saturation)
{
    long n = sat_run("e4m3", "rn", "0", 2000);
    CHECK_MSG(n > 0, "e4m3 without a scale, |S| past 448: %ld clamps counted", n);
    CHECK(sat_run("e4m3", "ef", "0", 2000) > 0 && sat_run("e5m2", "rn", "0", 2e5) > 0);
    CHECK_MSG(sat_run("e4m3", "rn", "0", 1) == 0, "e4m3, |S| far below 448: clamps counted");
    static const char *const fmts[] = {"e4m3", "e5m2", "int8", "int16"};
    static const char *const rounds[] = {"rn", "ef", "sr"};
    for (int f = 0; f < 4; f++)
        for (int r = 0; r < 3; r++) {
            n = sat_run(fmts[f], rounds[r], "1", 2e5);
            CHECK_MSG(n == 0, "cache=%s %s, a scale per row: %ld clamps", fmts[f],
                      rounds[r], n);
        }
}

/* A program says a saturated cache as loudly as a failure: vla-statenorm's summary on stderr
 * names it (la's S = sum v phi(k)^T of inputs of size 10 passes 448 within 50 steps), and
 * vla-check's row fails with it as its first cause (exit 0: no --require), and vla-forms' decode
 * (gdn's S of inputs of size 1000) says it of its block; the same runs with a scale per row say
 * nothing of it */
TEST(state_cache_saturation_said)
{
    static const char *const rows[] = {"0", "1"};
    for (int r = 0; r < 2; r++) {
        char *out = NULL;
        int st = vla_test_sh(&out, "bin/vla-statenorm --model la --precision f32 --set cache=e4m3 "
                             "--set cache_rows=%s --stream gauss:10 --d 4 --steps 50 --runs 2 "
                             "--ref f64 2>&1 >/dev/null", rows[r]);
        int said = out && strstr(out, "summary: ") &&
                   strstr(out, "the state cache (e4m3) saturated");
        CHECK_MSG(st == 0 && said == !r, "cache_rows=%s: exit %d: %s", rows[r], st,
                  out ? out : "");
        free(out);
        st = vla_test_sh(&out, "bin/vla-check gauss:10 --steps 50 --d 4 --runs 2 --models la "
                         "--precision f32 --precisions f32 --forms seq --set cache=e4m3 --set "
                         "cache_rows=%s --report none --out /dev/null 2>&1", rows[r]);
        said = out && strstr(out, "FAIL la f32 sm: the state cache (e4m3) saturated");
        CHECK_MSG(st == 0 && said == !r, "vla-check, cache_rows=%s: exit %d: %s", rows[r], st,
                  out ? out : "");
        free(out);
        st = vla_test_sh(&out, "bin/vla-forms --what decode --model gdn --stream gauss:1000 --d 8 "
                         "--steps 128 --runs 2 --prefix 60 --forms seq --precision f32 --precisions "
                         "f32 --set cache=e4m3 --set cache_rows=%s --ref f64 --out /dev/null 2>&1",
                         rows[r]);
        said = out && strstr(out, "f32 seq: the decode's state cache (e4m3) saturated");
        CHECK_MSG(st == 0 && said == !r, "vla-forms --what decode, cache_rows=%s: exit %d: %s",
                  rows[r], st, out ? out : "");
        free(out);
    }
}

/* The state cache's settings refused with a reason: an integer cache without a scale, a scaled
 * cache of a state that is not binary32, cache_rows or cache_round without a cache, a cache in the
 * kernels beyond f16 and bf16 to nearest */
TEST(state_cache_bad_settings_refused)
{
    vla_config c;
    vla_error why = {0};
    vla_config_default(&c, VLA_GDN, 8);
    c.prec = VLA_F32;
    CHECK(vla_config_set(&c, "cache", "int8") == 0);
    CHECK(vla_config_check_why(&c, &why) == VLA_ERANGE && strstr(why.msg, "cache_rows"));
    CHECK(vla_config_set(&c, "cache_rows", "1") == 0 && vla_config_check(&c) == 0);
    c.prec = VLA_F64;
    CHECK(vla_config_check_why(&c, &why) == VLA_ERANGE && strstr(why.msg, "binary32"));
    vla_config_default(&c, VLA_GDN, 8);
    CHECK(vla_config_set(&c, "cache_round", "ef") == 0);
    CHECK(vla_config_check_why(&c, &why) == VLA_ERANGE && strstr(why.msg, "set cache"));
    CHECK(vla_config_set_why(&c, "cache_rows", "1.5", &why) == VLA_ERANGE);
    CHECK(vla_config_set_why(&c, "cache", "fp8", &why) == VLA_ERANGE && strstr(why.msg, "e4m3"));
    vla_config_default(&c, VLA_GDN, 8);
    c.prec = VLA_F32;
    CHECK(vla_config_set(&c, "cache", "e4m3") == 0 && vla_config_check(&c) == 0);
    CHECK(!vla_backend_supports(vla_backend_lanes(), &c, &why) && strstr(why.msg, "cache=e4m3"));
    CHECK(vla_config_set(&c, "cache", "bf16") == 0);
    CHECK(vla_backend_supports(vla_backend_lanes(), &c, NULL));
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-drift --model gdn --steps 10 --set cache=int8 2>&1");
    CHECK_MSG(st == 2 && out && strstr(out, "cache_rows"), "exit %d: %s", st, out ? out : "");
    free(out);
}

/* The kernels' 16-bit choices refused with a reason: a word that is none of the ways or formats, a
 * knob for an input the model does not take, decoding's knobs in a chunk or a scan; the programs
 * exit 2 naming the setting */
TEST(kernel_choices_bad_settings_refused)
{
    vla_config c;
    vla_error why = {0};
    vla_error buf = {0};
    vla_config_default(&c, VLA_GDN, 8);
    static const char *const bad[][2] = {{"tri", "solve"}, {"stage", "f32"}, {"cache", "io"},
                                         {"decay_bf16", "maybe"}, {"beta_bf16", ""}};
    for (int i = 0; i < 5; i++) {
        CHECK_MSG(vla_config_set_why(&c, bad[i][0], bad[i][1], &why) == VLA_ERANGE && why.msg[0],
                  "%s=%s accepted", bad[i][0], bad[i][1]);
    }
    CHECK(c.tri == VLA_TRI_BLOCKED && c.stage == VLA_HALF_IO && !c.cache);
    vla_config_default(&c, VLA_LA, 8);
    CHECK(vla_config_set(&c, "decay_bf16", "on") == 0);
    CHECK(vla_config_check_why(&c, &buf) == VLA_ERANGE && strstr(buf.msg, "no decay"));
    vla_config_default(&c, VLA_MAMBA2, 8);
    CHECK(vla_config_set(&c, "beta_bf16", "on") == 0);
    CHECK(vla_config_check_why(&c, &buf) == VLA_ERANGE && strstr(buf.msg, "no beta"));
    static const char *const forms[] = {"chunk:16", "scan"};
    for (int f = 0; f < 2; f++) {
        vla_config_default(&c, VLA_KDA, 8);
        CHECK(vla_form_parse(&c, forms[f]) == 0 && vla_config_set(&c, "cache", "bf16") == 0);
        CHECK(vla_form_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "--form seq"));
    }
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-forms --what sweep --model gdn --steps 64 --forms chunk:64 "
                               "--set tri=solve 2>&1");
    CHECK_MSG(st == 2 && out && strstr(out, "tri=solve") && strstr(out, "neumann"), "exit %d: %s",
              st, out ? out : "");
    free(out);
    out = NULL;
    st = vla_test_sh(&out, "bin/vla-forms --what sweep --model gdn --steps 64 --forms chunk:64 "
                           "--set cache=bf16 2>&1");
    CHECK_MSG(st == 2 && out && strstr(out, "decoding"), "exit %d: %s", st, out ? out : "");
    free(out);
}
