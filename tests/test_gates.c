/* test_gates.c: the exponent-range knobs of the chunk forms (docs/forms.md, "The exponent range of
 * the chunk forms"): each bad value refused with its reason; the tree-ordered cumulative sum is a
 * sum (the bits of the running one where every partial sum is exact) and, in binary32, gives mamba
 * PR 713's positive differences that the clamp removes; vla-forms --what causal finds fla issue
 * 1240's future-row anchor and no other; the gate bound lands on its closed form 128 ln 2 / span.
 * Bit-for-bit conformance: test_conform.c's conform_gates. */
#include "check.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>

TEST(gates_settings_refused)
{
    static const char *const bad[][2] = {
        {"cumsum", "scan"},  {"cumsum_fmt", "f32"}, {"anchor", "middle"}, {"anchor", ""},
        {"base", "10"},      {"gate_map", "floor"}, {"gate_clamp", "2"},  {"gate_lb", "-"},
        {"gate_lb", "nan"},  {"gate_lb", "-inf"},   {"anchor_block", "3"}, {"anchor_block", "512"},
        {"anchor_block", "-4"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vla_config c;
        vla_error why = {0};
        vla_config_default(&c, VLA_KDA, 8);
        CHECK_MSG(vla_config_set_why(&c, bad[i][0], bad[i][1], &why) == VLA_ERANGE && why.msg[0],
                  "%s=%s: not refused with a reason", bad[i][0], bad[i][1]);
    }
    /* combinations: a map without a bound, a bound on a model without log-gates, the clamp of an
     * anchored factor, anchor blocks larger than the chunk */
    vla_config c;
    vla_error e = {0};
    vla_error w = {0};
    vla_config_default(&c, VLA_KDA, 8);
    CHECK(vla_config_set(&c, "gate_map", "pin") == 0);
    CHECK(vla_config_check_why(&c, &e) == VLA_ERANGE && strstr(e.msg, "gate_lb"));
    CHECK(vla_config_set(&c, "gate_lb", "0.5") == 0); /* a real is set, then checked */
    CHECK(vla_config_check_why(&c, &e) == VLA_ERANGE && strstr(e.msg, "gate_lb"));
    vla_config_default(&c, VLA_DELTA, 8);
    CHECK(vla_config_set(&c, "gate_lb", "-5") == 0);
    CHECK(vla_config_check_why(&c, &e) == VLA_ERANGE && strstr(e.msg, "gated family"));
    vla_config_default(&c, VLA_GDN, 8);
    CHECK(vla_form_parse(&c, "chunk:16") == 0);
    CHECK(vla_config_set(&c, "gate_clamp", "on") == 0 && vla_config_set(&c, "anchor", "mid") == 0);
    CHECK(vla_config_check(&c) == 0 && vla_form_check(&c, &w) == VLA_ENOTSUP && w.msg[0]);
    CHECK(vla_config_set(&c, "gate_clamp", "off") == 0 && vla_form_check(&c, NULL) == 0);
    CHECK(vla_config_set(&c, "anchor_block", "32") == 0);
    CHECK(vla_form_check(&c, &w) == VLA_ENOTSUP && strstr(w.msg, "anchor_block"));
    /* and the program says so, exit 2 (man/vla-forms.1) */
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-forms --what causal --model kda --steps 64 --prefix 3 "
                               "--forms chunk:64 --set anchor=middle 2>&1");
    CHECK_MSG(st == 2 && out && strstr(out, "'middle' is not an anchor"), "exit %d: %s", st,
              out ? out : "");
    free(out);
    /* causal runs on the cpu backend, where a chunk's read-outs reach it: another is refused, not
     * named in the table's header while the cpu runs */
    out = NULL;
    st = vla_test_sh(&out, "bin/vla-forms --what causal --model kda --steps 64 --prefix 3 "
                           "--forms chunk:16 --backend lanes 2>&1");
    CHECK_MSG(st == 2 && out && strstr(out, "--backend lanes"), "exit %d: %s", st, out ? out : "");
    free(out);
}

/* mamba2's chunk on the log-decays of mamba PR 713's trouble: one token in ten with |dt A| near
 * X, the others near 0 (docs/gated.md, "Cumulative sums: running versus tree order"); X = 0:
 * multiples of 1/8 */
static double lgs_713(long t, double X)
{
    double f = (double)t * 0.6180339887498949;
    f -= floor(f);
    if (X == 0) /* exact sums */
        return -(double)(t % 5) / 8;
    return t % 10 == 3 ? -X * (1 + f) : -1e-4 * f;
}

/* the chunk:C run of mamba2 (d = 4) in precision p over T steps with log-decays lgs(t) and the
 * settings sets; 1 when every read-out and S stayed finite; *o_out: the read-outs (T x d) */
static int run_mamba2(vla_prec p, int C, long T, double X, const char *const *sets, double *o_out)
{
    vla_config c;
    vla_config_default(&c, VLA_MAMBA2, 4);
    c.prec = p;
    char form[32];
    snprintf(form, sizeof form, "chunk:%d", C);
    CHECK(vla_form_parse(&c, form) == 0);
    for (int i = 0; sets && sets[i]; i++) {
        char name[32];
        const char *eq = strchr(sets[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - sets[i]), sets[i]);
        CHECK(vla_config_set(&c, name, eq + 1) == 0);
    }
    vla_model *m;
    CHECK(vla_model_new(&m, &c) == 0);
    double q[4], k[4], v[4], S[16], co[256 * 4];
    int finite = 1;
    for (long t = 1; t <= T; t++) {
        for (int j = 0; j < 4; j++) {
            q[j] = vla_gauss(7, VLA_VAR_Q, 0, t, j);
            k[j] = vla_gauss(7, VLA_VAR_K, 0, t, j);
            v[j] = vla_gauss(7, VLA_VAR_V, 0, t, j);
        }
        vla_input in = {.q = q, .k = k, .v = v, .beta = NAN, .decay = NAN, .lgs = lgs_713(t, X)};
        CHECK(vla_model_step(m, &in) == 0);
        if (t % C == 0) {
            vla_model_get(m, VLA_Q_CO, co);
            vla_model_get(m, VLA_Q_S, S);
            for (int i = 0; i < C * 4; i++)
                finite &= isfinite(co[i]);
            for (int i = 0; i < 16; i++)
                finite &= isfinite(S[i]);
            if (o_out)
                memcpy(o_out + (t - C) * 4, co, (size_t)C * 4 * sizeof *co);
        }
    }
    vla_model_free(m);
    return finite;
}

TEST(gates_cumsum_tree)
{
    /* a sum: log-decays that are multiples of 1/8 (X = 0) add exactly in either order, so the
     * tree's read-outs are the running sum's bits (a term missed or counted twice would move
     * them) */
    static const char *const tree[] = {"cumsum=tree", NULL};
    double o_run[128 * 4], o_tree[128 * 4];
    CHECK(run_mamba2(VLA_F32, 64, 128, 0, NULL, o_run));
    CHECK(run_mamba2(VLA_F32, 64, 128, 0, tree, o_tree));
    CHECK_MSG(!memcmp(o_run, o_tree, sizeof o_run), "the tree order's sums are not the sums");
    /* binary32 at X = 1e8: the running sum stays finite; the tree order's differences reach +256
     * (docs/gated.md) and exp overflows; the clamp min(., 0) removes it */
    static const char *const tree_clamp[] = {"cumsum=tree", "gate_clamp=on", NULL};
    CHECK_MSG(run_mamba2(VLA_F32, 256, 256, 1e8, NULL, NULL), "the running order overflowed");
    CHECK_MSG(!run_mamba2(VLA_F32, 256, 256, 1e8, tree, NULL),
              "the tree order in binary32 stayed finite at X = 1e8 (mamba PR 713)");
    CHECK_MSG(run_mamba2(VLA_F32, 256, 256, 1e8, tree_clamp, NULL),
              "the clamp did not keep the tree order finite");
}

/* the rows of vla-forms --what causal (C prec prefix moved max_ulps max_abs): moved of row i */
static double moved(const char *out, int i)
{
    const char *l = out;
    for (int k = 0; l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
        if (*l == '#' || *l == '\n' || !*l)
            continue;
        if (k++ == i) {
            double C, P, mv;
            char prec[32];
            if (sscanf(l, "%lf %31s %lf %lf", &C, prec, &P, &mv) == 4)
                return mv;
            return -1;
        }
    }
    return -1;
}

/* fla issue 1240's setting (kda, bf16 io, anchors in 16-token sub-chunks, gates lb sigmoid(.) at
 * lb = -5, prefix 21): the future-row anchors (mid: row 8 of the sub-chunk, tokens 16..20 take
 * token 24's sum; last) move read-outs before the prefix's end; direct, first and start, whose
 * anchors are never after the row, move none, nor does the sequential form */
TEST(gates_causal)
{
    static const char *const anchors[] = {"direct", "first", "start", "mid", "last"};
    for (int a = 0; a < 5; a++) {
        char *out = NULL;
        int st = vla_test_sh(&out, "bin/vla-forms --what causal --model kda --d 16 --steps 64 "
                                   "--runs 2 --stream gauss --prefix 21 --forms seq,chunk:64 "
                                   "--precisions bf16-kern --set gate_lb=-5 --set gate_map=sigmoid "
                                   "--set base=2 --set anchor_block=16 --set anchor=%s 2>/dev/null",
                             anchors[a]);
        CHECK_MSG(st == 0 && out, "anchor=%s: exit %d", anchors[a], st);
        if (out) {
            CHECK_MSG(moved(out, 0) == 0, "seq moved %g read-outs", moved(out, 0));
            if (a < 3)
                CHECK_MSG(moved(out, 1) == 0, "anchor=%s moved %g read-outs before the prefix's "
                          "end", anchors[a], moved(out, 1));
            else
                CHECK_MSG(moved(out, 1) > 0, "anchor=%s moved no read-out before the prefix's end",
                          anchors[a]);
        }
        free(out);
    }
}

/* cudnn-frontend PR 1017's setting (claim 8a): gates lb sigmoid(x). The stream's own log-decays
 * x < 0 give gates above lb / 2 only, and one mid anchor per chunk of 64 stays finite at lb = -5;
 * with N(0, 1) logits (gauss:1,logits, the report's draw) the chunk's last tokens overflow. The
 * logits without the sigmoid map, positive log-gates, are refused (exit 2). */
TEST(gates_sigmoid_logits)
{
    static const char *const cmd = "bin/vla-forms --what sweep --model kda --d 32 --steps 256 "
                                   "--runs 2 --forms chunk:64 --precisions bf16-kern --stream %s "
                                   "--set base=2 --set anchor=mid --set gate_lb=-5 %s 2>/dev/null";
    char *out = NULL;
    int st = vla_test_sh(&out, cmd, "gauss", "--set gate_map=sigmoid");
    CHECK_MSG(st == 0 && out && strstr(out, "# summary: every form stayed finite"),
              "the stream's log-decays: exit %d: %s", st, out ? out : "");
    free(out);
    st = vla_test_sh(&out, cmd, "gauss:1,logits", "--set gate_map=sigmoid");
    CHECK_MSG(st == 0 && out && strstr(out, "o_relerr is not finite (bf16-kern chunk:64"),
              "N(0, 1) logits: exit %d: %s", st, out ? out : "");
    free(out);
    st = vla_test_sh(&out, cmd, "gauss:1,logits", "--set gate_map=clamp");
    CHECK_MSG(st == 2, "logits without gate_map=sigmoid: exit %d, expected 2", st);
    free(out);
}

/* kda's chunk:64 (d = 8, f32) with every log-gate pinned at lb and the anchor a (blocks of B):
 * whether every read-out of the first chunk is finite (all = 1) or only its last token's (all = 0,
 * what vla-forms --what sweep reads at its checkpoints, the safe-gate map's tables) */
static int run_pinned(const char *a, const char *B, const char *lb, int all)
{
    vla_config c;
    vla_config_default(&c, VLA_KDA, 8);
    c.prec = VLA_F32;
    CHECK(vla_form_parse(&c, "chunk:64") == 0);
    const char *sets[][2] = {{"gate_map", "pin"}, {"gate_lb", lb}, {"base", "2"},
                             {"anchor", a},       {"anchor_block", B}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        CHECK(vla_config_set(&c, sets[i][0], sets[i][1]) == 0);
    vla_model *m;
    CHECK(vla_model_new(&m, &c) == 0);
    double q[8], k[8], v[8], co[64 * 8];
    for (long t = 1; t <= 64; t++) {
        for (int j = 0; j < 8; j++) {
            q[j] = vla_gauss(7, VLA_VAR_Q, 0, t, j);
            k[j] = vla_gauss(7, VLA_VAR_K, 0, t, j);
            v[j] = vla_gauss(7, VLA_VAR_V, 0, t, j);
        }
        vla_input in = {.q = q, .k = k, .v = v, .beta = 1, .decay = NAN, .lgs = -1};
        CHECK(vla_model_step(m, &in) == 0);
    }
    vla_model_get(m, VLA_Q_CO, co);
    vla_model_free(m);
    int finite = 1;
    for (int i = all ? 0 : 63 * 8; i < 64 * 8; i++)
        finite &= isfinite(co[i]);
    return finite;
}

/* the closed form of the gate bound, |lb| = 128 ln 2 / span (docs/forms.md, reproduction 5): the
 * first anchor on blocks of 16 reaches span 15 at every token (5.915); one mid anchor per chunk of
 * 64 reaches 32 at the block's first token (2.773) but 31 at its last (2.862), which is why the
 * safe-gate map's tables, read at the last token, put mid/C's onset at the smaller span */
TEST(gates_bound_closed_form)
{
    CHECK(run_pinned("first", "16", "-5.91", 1));
    CHECK(!run_pinned("first", "16", "-5.92", 1));
    CHECK(!run_pinned("first", "16", "-5.92", 0));
    CHECK(run_pinned("mid", "0", "-2.77", 1));
    CHECK(!run_pinned("mid", "0", "-2.78", 1));
    CHECK(run_pinned("mid", "0", "-2.78", 0));
    CHECK(run_pinned("mid", "0", "-2.86", 0));
    CHECK(!run_pinned("mid", "0", "-2.87", 0));
    /* direct differences: no exponent > 0, finite far past every anchored bound */
    CHECK(run_pinned("direct", "0", "-40", 1));
}
