/* test_lists.c: the lists of lib/vlalists.h and what is made from them: names and parsing, the
 * format properties against the C library's own constants and MPFR's conventions, u' and the
 * flop count read from recur.h itself, and the compiler refusing a forgotten piece (a row of a
 * list without its step function or instantiation, an arithmetic without one of its macros) and
 * finding no template macro left over after an instantiation. */
#include "check.h"
#include "model_impl.h"
#include "tables.h"
#include "vlaref.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TEST(lists_names_and_parsing)
{
    CHECK(!strcmp(vla_names(VLA_LIST_MODEL), "la, delta, rls, vla1, vla3, gdn, kda, gla, mamba2, "
                                             "rwkv7, deltaproduct, loglinear, mamba3"));
    CHECK(!strcmp(vla_names(VLA_LIST_PREC),
                  "f64, f32, f16, bf16, f16-f32, bf16-f32, f16-kern, bf16-kern"));
    CHECK(!strcmp(vla_names(VLA_LIST_FORM), "seq, chunk, scan"));
    CHECK(!strcmp(vla_names(VLA_LIST_TRACK), "sm, sm-sym, joseph, chol, comp, sr, solve, cg, cheb"));
    CHECK(!strcmp(vla_names(VLA_LIST_FMT), "f64, f32, f16, bf16"));
    /* every name of a list parses back to its row, and the lists hold nothing else */
    char buf[200];
    vla_model_kind m;
    vla_prec p;
    vla_track t;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", vla_names(VLA_LIST_MODEL));
    for (char *s = strtok(buf, ", "); s; s = strtok(NULL, ", "), n++)
        CHECK(vla_model_parse(s, &m) == 0 && m == (vla_model_kind)n);
    CHECK_EQ_INT(n, VLA_NMODEL);
    n = 0;
    snprintf(buf, sizeof buf, "%s", vla_names(VLA_LIST_PREC));
    for (char *s = strtok(buf, ", "); s; s = strtok(NULL, ", "), n++)
        CHECK(vla_prec_parse(s, &p) == 0 && p == (vla_prec)n);
    CHECK_EQ_INT(n, VLA_NPREC);
    n = 0;
    snprintf(buf, sizeof buf, "%s", vla_names(VLA_LIST_TRACK));
    for (char *s = strtok(buf, ", "); s; s = strtok(NULL, ", "), n++)
        CHECK(vla_track_parse(s, &t) == 0 && t == (vla_track)n);
    CHECK_EQ_INT(n, VLA_NTRACK);
    CHECK(vla_model_parse("vla2", &m) == VLA_EINVAL && vla_track_parse("smsym", &t) == VLA_EINVAL);
    CHECK(vla_prec_parse("f16f32", &p) == VLA_EINVAL); /* one spelling: f16-f32 */
    /* the messages of the ways that need a kind of policy name the policies of that kind */
    vla_config c;
    vla_error why = {0};
    vla_config_default(&c, VLA_VLA3, 8);
    c.track = VLA_TRACK_SR;
    CHECK(vla_track_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "use f16-f32, bf16-f32"));
    c.track = VLA_TRACK_COMP;
    c.prec = VLA_BF16_F32;
    CHECK(vla_track_check(&c, &why) == VLA_ENOTSUP && strstr(why.msg, "use f64, f32, f16, bf16"));
    CHECK(vla_names((vla_list)99)[0] == '?');
}

/* the format table against what the hardware and the C library say of binary64 and binary32,
 * and against the IEEE parameters of binary16 and bfloat16; MPFR's emulation parameters are the
 * same numbers in its convention (x = m 2^e, m in [1/2, 1)) */
TEST(lists_format_properties)
{
    CHECK(vla_fmt_max(VLA_FMT_F64) == DBL_MAX && vla_fmt_min_normal(VLA_FMT_F64) == DBL_MIN);
    CHECK(vla_fmt_max(VLA_FMT_F32) == FLT_MAX && vla_fmt_min_normal(VLA_FMT_F32) == FLT_MIN);
    CHECK(vla_fmt_unit_roundoff(VLA_FMT_F64) == DBL_EPSILON / 2);
    CHECK(vla_fmt_unit_roundoff(VLA_FMT_F32) == FLT_EPSILON / 2);
    CHECK(vla_fmt_max(VLA_FMT_F16) == 65504.0 && vla_fmt_min_normal(VLA_FMT_F16) == 0x1p-14);
    CHECK(vla_fmt_max(VLA_FMT_BF16) == 0x1.fep127);
    for (int f = 0; f < VLA_NFMT; f++) {
        long prec, emin, emax;
        vref_fmt_params((vla_fmt)f, &prec, &emin, &emax);
        int p = vla_fmt_precision((vla_fmt)f);
        /* the smallest subnormal is 2^(emin - 1) in MPFR's terms; the largest finite < 2^emax */
        CHECK(prec == p && ldexp(1.0, (int)emin - 1) == ldexp(vla_fmt_min_normal((vla_fmt)f), 1 - p));
        CHECK(frexp(vla_fmt_max((vla_fmt)f), &(int){0}) > 0.5 && ilogb(vla_fmt_max((vla_fmt)f)) == emax - 1);
        /* the largest finite number is a fixed point of the rounding, the next binade is not */
        CHECK(vla_round_fmt((vla_fmt)f, vla_fmt_max((vla_fmt)f)) == vla_fmt_max((vla_fmt)f));
    }
    for (int i = 0; i < VLA_NPREC; i++) /* mixed: storage narrower than compute */
        CHECK(vla_prec_mixed((vla_prec)i) ==
              (vla_fmt_precision(vla_prec_storage((vla_prec)i)) <
               vla_fmt_precision(vla_prec_compute((vla_prec)i))));
}

/* u' from recur.h's own code: rls takes k, vla1 u / sqrt(d), vla3 unit(u) / sqrt(d), each on
 * the inputs rounded to the storage format (a binary16 input is exact in binary16) */
TEST(lists_uprime_is_the_recurrences)
{
    enum { d = 9 };
    double k[d], u[d], up[d];
    for (int i = 0; i < d; i++) {
        k[i] = 0.1 * (i + 1) - 0.37;
        u[i] = 1.3 - 0.21 * i;
    }
    vla_config c;
    vla_config_default(&c, VLA_RLS, d);
    c.prec = VLA_F16;
    CHECK(vla_uprime(&c, k, u, up) == 0);
    for (int i = 0; i < d; i++)
        CHECK(up[i] == vla_round_fmt(VLA_FMT_F16, k[i]));
    vla_config_default(&c, VLA_VLA1, d);
    c.prec = VLA_BF16_F32;
    CHECK(vla_uprime(&c, k, u, up) == 0);
    for (int i = 0; i < d; i++)
        CHECK(up[i] == vla_round_fmt(VLA_FMT_BF16, u[i]) / 3.0); /* sqrt(9) = 3, exactly */
    vla_config_default(&c, VLA_VLA3, d);
    c.prec = VLA_F32;
    CHECK(vla_uprime(&c, k, NULL, up) == 0); /* no u: k, as the step takes it */
    double ss = 0, kk = 0;
    for (int i = 0; i < d; i++) {
        ss += up[i] * up[i];
        kk += vla_round_fmt(VLA_FMT_F32, k[i]) * vla_round_fmt(VLA_FMT_F32, k[i]);
    }
    CHECK_NEAR(sqrt(ss), 1 / 3.0, 4 * d * 0x1p-53);
    for (int i = 0; i < d; i++) /* the direction of the rounded k */
        CHECK_NEAR(up[i] * 3, vla_round_fmt(VLA_FMT_F32, k[i]) / sqrt(kk), 4 * d * 0x1p-53);
    vla_config_default(&c, VLA_LA, d);
    CHECK(vla_uprime(&c, k, u, up) == VLA_EINVAL); /* no A, no u' */
}

/* The column phi against what each model computes: with features=own on raw q and k, a model's
 * read-outs are those of features=id on inputs with phi(x) = elu(x) + 1 applied by hand (docs/math.md
 * section 5) to exactly the inputs its column names (VLA_PHI_Q, VLA_PHI_K), and to no other set:
 * of the four sets, the column's agrees to a few ulps (phi in binary64 either way; the gated
 * family's l2norm after it), the other three differ by O(1) (q and k hold entries of both signs, so
 * phi moves them). vla-check refuses dq.npy and dk.npy with features=own by this column. */
/* step t's inputs of the column tests below: q, k, v, u, the per-channel log-decays lg and
 * rwkv7's a, b, each d entries (both signs in q and k) */
static void col_inputs(int t, int d, double *q, double *k, double *v, double *u, double *lg,
                       double *a, double *b)
{
    for (int i = 0; i < d; i++) {
        q[i] = sin(1.7 * t + 0.9 * i + 0.3);
        k[i] = cos(1.3 * t + 1.1 * i);
        v[i] = sin(0.7 * t - 0.5 * i);
        u[i] = cos(0.4 * t + 0.8 * i + 1);
        lg[i] = -0.05 - 0.01 * i;
        a[i] = -0.1 * cos(t + i), b[i] = 0.05 * sin(t + 2 * i);
    }
}

static double phi_by_hand(double x) { return x > 0 ? x + 1 : exp(x); }

static double phi_run(vla_model_kind m, int features, unsigned mask, double *o_all)
{
    enum { d = 6, T = 12 };
    vla_config c;
    vla_config_default(&c, m, d);
    c.dv = d;
    c.prec = VLA_F64;
    c.features = features;
    vla_model *mo = NULL;
    if (vla_model_new(&mo, &c))
        return NAN;
    double q[d], k[d], v[d], u[d], lg[d], a[d], b[d];
    for (int t = 0; t < T; t++) {
        col_inputs(t, d, q, k, v, u, lg, a, b);
        for (int i = 0; i < d; i++) {
            if (mask & VLA_PHI_Q)
                q[i] = phi_by_hand(q[i]);
            if (mask & VLA_PHI_K)
                k[i] = phi_by_hand(k[i]);
        }
        vla_input in = {.q = q, .k = k, .v = v, .u = u, .beta = 0.6, .decay = NAN, .lgs = -0.07,
                        .lg = vla_model_gate(m) == 2 ? lg : NULL, .a = a, .b = b};
        if (vla_model_step(mo, &in) || vla_model_get(mo, VLA_Q_O, o_all + (size_t)t * d)) {
            vla_model_free(mo);
            return NAN;
        }
    }
    vla_model_free(mo);
    return T * d;
}

/* The column devices against what the models do and what the checks refuse (binary64,
 * d = 6, 12 steps of phi_run's inputs): a clip of 0.01 fires (vla_counts.clip) and the scan is
 * refused exactly for the models with CLIP (their S is no affine recurrence); clamp_on with a clamp
 * of 1e-3 fires (vla_counts.clamp) and chunk:4 and chol with clamp_on are refused exactly for those
 * with CLAMP (vla_form_check, vla_track_check); of the models with A, chunk:4 with the guard on is
 * refused exactly for those without FLOOR, and the guard fires inside the chunks (vla_counts.guard,
 * stab_eps = 100) exactly for those with FLOOR (the others' chunk has no guard: the refusal). */
static int devices_run(const vla_config *c, vla_counts *n)
{
    enum { d = 6, T = 12 };
    vla_model *mo = NULL;
    int r = vla_model_new(&mo, c);
    double q[d], k[d], v[d], u[d], lg[d], a[d], b[d], o[d];
    for (int t = 0; t < T && !r; t++) {
        col_inputs(t, d, q, k, v, u, lg, a, b);
        vla_input in = {.q = q, .k = k, .v = v, .u = u, .beta = 0.6, .decay = NAN, .lgs = -0.07,
                        .lg = vla_model_gate(c->model) == 2 ? lg : NULL, .a = a, .b = b};
        r = vla_model_step(mo, &in);
        if (!r && c->form == VLA_FORM_SEQ)
            r = vla_model_get(mo, VLA_Q_O, o);
    }
    if (!r)
        r = vla_model_finish(mo);
    if (!r)
        *n = *vla_model_counts(mo);
    vla_model_free(mo);
    return r;
}

TEST(lists_devices_are_what_the_models_have)
{
    enum { d = 6 };
    for (int m = 0; m < VLA_NMODEL; m++) {
        const unsigned dev = vla_model_devices((vla_model_kind)m);
        const char *name = vla_model_name((vla_model_kind)m);
        vla_config c, s;
        vla_counts n;
        vla_config_default(&c, (vla_model_kind)m, d);
        c.dv = d;
        c.prec = VLA_F64;
        c.clip = 0.01;
        c.clamp = 1e-3;
        c.clamp_on = 1;
        CHECK_MSG(devices_run(&c, &n) == 0, "%s: seq run", name);
        CHECK_MSG((n.clip > 0) == ((dev & VLA_DEV_CLIP) != 0), "%s: %ld clips", name, n.clip);
        CHECK_MSG((n.clamp > 0) == ((dev & VLA_DEV_CLAMP) != 0), "%s: %ld clamps", name, n.clamp);
        s = c;
        s.clamp_on = 0;
        CHECK(vla_form_parse(&s, "scan") == 0);
        vla_error why;
        if (vla_levels(&c)) { /* loglinear: seq alone, for its levels (not a device) */
            CHECK_MSG(vla_form_check(&s, &why) == VLA_ENOTSUP && strstr(why.msg, "Fenwick"),
                      "%s: the scan's refusal", name);
            continue;
        }
        /* a model with no device may refuse the scan for a reason of its own (mamba3's step
         * writes two tokens: vla_form_check) */
        const int no_scan = vla_form_check(&s, &why) == VLA_ENOTSUP;
        CHECK_MSG(no_scan == ((dev & VLA_DEV_CLIP) != 0) ||
                      (no_scan && !dev && strstr(why.msg, "two tokens")),
                  "%s: the scan's refusal", name);
        s = c;
        s.nudge = s.guard = 0;
        CHECK(vla_form_parse(&s, "chunk:4") == 0);
        CHECK_MSG((vla_form_check(&s, NULL) == VLA_ENOTSUP) == ((dev & VLA_DEV_CLAMP) != 0),
                  "%s: chunk:4's refusal with clamp_on", name);
        s = c;
        s.nudge = s.guard = 0;
        s.track = VLA_TRACK_CHOL;
        CHECK_MSG(!vla_model_has_A((vla_model_kind)m) ||
                      (vla_track_check(&s, NULL) == VLA_ENOTSUP) == ((dev & VLA_DEV_CLAMP) != 0),
                  "%s: chol's refusal with clamp_on", name);
        if (!vla_model_has_A((vla_model_kind)m))
            continue;
        s = c;
        s.nudge = s.clamp_on = 0;
        s.guard = 1;
        s.stab_eps = 100;
        CHECK(vla_form_parse(&s, "chunk:4") == 0);
        CHECK_MSG((vla_form_check(&s, NULL) == VLA_ENOTSUP) == !(dev & VLA_DEV_FLOOR),
                  "%s: chunk:4's refusal with the guard", name);
        CHECK_MSG(devices_run(&s, &n) == 0, "%s: chunk:4 with the guard", name);
        CHECK_MSG((n.guard > 0) == ((dev & VLA_DEV_FLOOR) != 0), "%s: the guard fired %ld times in "
                  "the chunks", name, n.guard);
    }
}

TEST(lists_phi_is_what_the_models_take)
{
    enum { n = 12 * 6 };
    for (int m = 0; m < VLA_NMODEL; m++) {
        double own[n], id[n];
        CHECK_MSG(phi_run(m, VLA_FEAT_OWN, 0, own) == n, "%s: features=own did not run",
                  vla_model_name(m));
        int agree = -1, nagree = 0;
        for (unsigned mask = 0; mask < 4; mask++) {
            CHECK_MSG(phi_run(m, VLA_FEAT_ID, mask, id) == n, "%s: features=id did not run",
                      vla_model_name(m));
            double num = 0, den = 0;
            for (int i = 0; i < n; i++)
                num += (own[i] - id[i]) * (own[i] - id[i]), den += own[i] * own[i];
            const double rel = sqrt(num / den);
            if (rel <= 64 * 0x1p-53)
                agree = (int)mask, nagree++;
            else
                CHECK_MSG(rel > 1e-3, "%s: phi on %s: %.3g, neither the same nor apart",
                          vla_model_name(m), mask == 3 ? "q, k" : mask == 2 ? "k" : mask ? "q" : "none",
                          rel);
        }
        CHECK_MSG(nagree == 1 && agree == (int)vla_model_phi(m),
                  "%s: features=own is features=id with phi on set %d (%d sets agree); its column "
                  "phi says %u", vla_model_name(m), agree, nagree, vla_model_phi(m));
    }
}

/* The count of la's step in closed form from docs/math.md section 2 (each dot product of length n
 * is n products and n - 1 sums): S += v phi(k)^T (2 dv d), n += phi(k) (d), o = S phi(q) (dv (2d -
 * 1)) / (n . phi(q)) (2d - 1, then dv divisions). The ways of tracking A order as their operation
 * counts do: sm-sym does half of sm's rank-1 update, joseph twice its products. */
TEST(lists_flops_counted_from_the_recurrence)
{
    vla_step_buf b;
    for (int d = 4; d <= 64; d *= 4) {
        vla_stream *s;
        vla_error err = {0};
        CHECK(vla_step_buf_alloc(&b, d, d) == 0 &&
              vla_stream_open(&s, "gauss", d, d, 3, &err) == 0);
        vla_stream_get(s, 0, 1, &b);
        vla_stream_close(s);
        vla_input in = {.q = b.q, .k = b.k, .v = b.v, .u = b.u, .beta = NAN, .decay = NAN};
        vla_config c;
        vla_config_default(&c, VLA_LA, d);
        double dd = (double)d * d;
        CHECK_EQ_INT(vla_step_flops(&c, &in, 1), 2 * dd + d + d * (2 * d - 1) + (2 * d - 1) + d);
        c.prec = VLA_BF16; /* the count is the recurrence's, whatever the rounding */
        CHECK_EQ_INT(vla_step_flops(&c, &in, 1), 2 * dd + d + d * (2 * d - 1) + (2 * d - 1) + d);
        double f[4];
        for (int t = 0; t < 4; t++) {
            vla_config_default(&c, VLA_VLA3, d);
            c.track = (vla_track)t;
            c.nudge = 0;
            f[t] = vla_step_flops(&c, &in, 1);
        }
        CHECK_MSG(f[VLA_TRACK_SMSYM] < f[VLA_TRACK_SM] && f[VLA_TRACK_SM] < f[VLA_TRACK_JOSEPH],
                  "d = %d: sm %g, sm-sym %g, joseph %g", d, f[0], f[1], f[2]);
        /* both compute the upper triangle of the update (d (d + 1) / 2 entries) and mirror it;
         * sm's entry is z_i z_j / delta, sm-sym's y_i y_j after d divisions and a square root
         * make y = z / sqrt(delta): a division per entry fewer, d + 1 operations more */
        CHECK_EQ_INT(f[VLA_TRACK_SM] - f[VLA_TRACK_SMSYM], d * (d + 1) / 2 - (d + 1));
        vla_step_buf_free(&b);
    }
    vla_config c;
    vla_config_default(&c, VLA_LA, 0);
    CHECK(isnan(vla_step_flops(&c, NULL, 1)));
}

/* ---- what the compiler says: a copy of lib/ in a scratch folder, compiled as the build does
 * (-fsyntax-only), one change at a time ---- */

static char scratch[64];
static const char *cc(void)
{
    const char *c = getenv("CC");
    return c && *c ? c : "cc";
}
/* the build's flags, OpenMP's too where the compiler has it (kernels/) */
#define CFLAGS_ "-std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -ffp-contract=off " \
                "-fexcess-precision=standard -fsyntax-only"
static const char *openmp(void)
{
    static const char *flag;
    if (!flag) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "echo 'int main(void){return 0;}' | %s -fopenmp -x c - "
                                  "-o /dev/null >/dev/null 2>&1", cc());
        flag = system(cmd) ? "" : "-fopenmp";
    }
    return flag;
}

static void scratch_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
    if (system(cmd)) {
    }
}

/* a fresh copy of lib/ in scratch/lib; 0 when there is no compiler or no lib/ (skipped) */
static int fresh_lib(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", cc());
    if (system(cmd)) {
        vla_test_skip("no C compiler (set CC)");
        return 0;
    }
    if (access("lib/vlalists.h", R_OK)) {
        vla_test_skip("not run from the repository root (make test runs it there)");
        return 0;
    }
    if (!scratch[0]) {
        snprintf(scratch, sizeof scratch, "/tmp/vla-lists-XXXXXX");
        if (!mkdtemp(scratch)) {
            CHECK_MSG(0, "mkdtemp");
            return 0;
        }
        atexit(scratch_remove);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s/lib && cp -r lib %s/lib", scratch, scratch);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    return 1;
}

/* edits scratch/lib/FILE with a sed expression, which must change it */
static void edit(const char *file, const char *sed)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s/lib && cp %s %s.orig && sed -e '%s' %s.orig > %s && ! cmp -s %s %s.orig",
             scratch, file, file, sed, file, file, file, file);
    CHECK_MSG(system(cmd) == 0, "the edit did not change %s: %s", file, sed);
}

/* compiles SRC (relative to the repository, or to scratch when it starts with @) against the
 * scratch copy of lib/; the status, and the compiler's output in out */
static int compile(const char *src, const char *extra, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s " CFLAGS_ " %s %s -I%s/lib -Ireference -Ikernels -Ilanes %s%s 2>&1", cc(),
             openmp(), extra, scratch, src[0] == '@' ? scratch : "", src[0] == '@' ? src + 1 : src);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, len - 1, p) : 0;
    out[n] = 0;
    return p ? pclose(p) : -1;
}

static char out[1 << 16];

/* the first line of the compiler's output that names what, for the report */
static void show(const char *what)
{
    const char *s = strstr(out, what);
    if (!s)
        return;
    while (s > out && s[-1] != '\n')
        s--;
    const char *e = strchr(s, '\n');
    if (getenv("VLA_TEST_VERBOSE"))
        printf("    compiler: %.*s\n", (int)(e ? e - s : (long)strlen(s)), s);
}

TEST_SLOW(lists_a_model_row_without_its_functions_fails_to_build)
{
    if (!fresh_lib())
        return;
    CHECK_MSG(compile("@/lib/model.c", "", out, sizeof out) == 0, "the copy itself: %s", out);
    edit("vlalists.h", "s/^    X(VLA3, vla3, /"
                       "    X(VLA4, vla4, 1, 1, 1, 1, 0, 0, 0, OWN, VLA_PHI_Q, 0, 0, VLA_IN_U, \"u\") "
                       "X(VLA3, vla3, /");
    CHECK(compile("@/lib/model.c", "", out, sizeof out) != 0);
    /* each piece the row asks for is named: its step, its read-out, its u' (it has A) */
    CHECK_MSG(strstr(out, "step_vla4_f64") && strstr(out, "undeclared"), "%s", out);
    CHECK_MSG(strstr(out, "read_vla4_f64") && strstr(out, "uprime_vla4_f64"), "%s", out);
    show("step_vla4_f64");
}

/* docs/adding.md's walkthrough: la0, a row, a file and models.h's line. Its file with the forward
 * alone (la's, renamed) stops the build at its backward, named (recur_grad.h declares grad_<tok>
 * for every row); with la's backward renamed too, it builds. */
TEST_SLOW(lists_a_model_file_without_its_backward_fails_to_build)
{
    if (!fresh_lib())
        return;
    edit("vlalists.h", "s/^    X(VLA3, vla3, /"
                       "    X(LA0, la0, 0, 0, 0, 1, 0, 0, 0, OWN, VLA_PHI_Q | VLA_PHI_K, 0, 0, 0, \"\", "
                       "0, 0, 0) X(VLA3, vla3, /");
    edit("models/models.h", "$a #include \"models/la0.h\"");
    char cmd[512];
    snprintf(cmd, sizeof cmd, /* the forward: la.h up to its backward, then the part's #endif */
             "cd %s/lib/models && sed -e '/^#else .* the backward/,$d' -e 's/_la)/_la0)/g' la.h > la0.h "
             "&& echo '#endif' >> la0.h",
             scratch);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    CHECK(compile("@/lib/model.c", "", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "grad_la0_f64") && strstr(out, "used but never defined") &&
                  !strstr(out, "undeclared"),
              "%s", out);
    show("grad_la0_f64");
    snprintf(cmd, sizeof cmd, "cd %s/lib/models && sed -e 's/_la)/_la0)/g' la.h > la0.h", scratch);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    CHECK_MSG(compile("@/lib/model.c", "", out, sizeof out) == 0, "la0 with its backward: %s", out);
}

TEST_SLOW(lists_a_policy_row_is_instantiated_from_its_formats)
{
    if (!fresh_lib())
        return;
    CHECK_MSG(compile("lanes/lanes.c", "", out, sizeof out) == 0, "the copy itself: %s", out);
    /* a policy of formats whose roundings every arithmetic has (binary64 state and arithmetic,
     * binary32 inputs): the row alone, and every file that instantiates the policies builds
     * (lib/policy.h's loops, kpolicy.h for the kernel's one policy) */
    edit("vlalists.h", "s/^    X(BF16_KERN, \"bf16-kern\", bf16kern, F32, F32, BF16, 0, 1)$/&"
                       " X(F64_F32IN, \"f64-f32in\", f64f32in, F64, F64, F32, 0, 1)/");
    static const char *const all[] = {"@/lib/model.c", "@/lib/model_fast.c", "@/lib/model_simd.c",
                                      "@/lib/model_comp.c", "lanes/lanes.c", "kernels/host.c",
                                      "kernels/emu.c"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_MSG(compile(all[i], "", out, sizeof out) == 0, "%s: %s", all[i], out);
    CHECK_MSG(compile("kernels/emu_block.c", "-DPOL=f64f32in", out, sizeof out) == 0, "%s", out);
    /* a policy whose rounding an arithmetic lacks (binary16 held in binary64, which rounding
     * through binary32 would round twice): lib's native arithmetic and the lanes refuse it */
    fresh_lib();
    edit("vlalists.h", "s/^    X(BF16_KERN, \"bf16-kern\", bf16kern, F32, F32, BF16, 0, 1)$/&"
                       " X(F16_F64, \"f16-f64\", f16f64, F16, F64, F16, 1, 0)/");
    CHECK(compile("@/lib/model.c", "", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "VLA_RND_F16") && strstr(out, "_Generic"), "%s", out);
    show("VLA_RND_F16");
    CHECK(compile("lanes/lanes.c", "", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "LRND_F16") && strstr(out, "lrnd_f16"), "%s", out);
    show("LRND_F16");
    /* a format: its row, a policy of it, and its file lib/formats/e5m2.h. Without the file,
     * every arithmetic stops at that one file, and names nothing else */
    fresh_lib();
    edit("vlalists.h", "s/^    X(BF16, bf16, 8, -126, 127, float)$/&"
                       " X(E5M2, e5m2, 3, -14, 15, float)/");
    edit("vlalists.h", "s/^    X(BF16_KERN, \"bf16-kern\", bf16kern, F32, F32, BF16, 0, 1)$/&"
                       " X(E5M2, \"e5m2\", e5m2, E5M2, E5M2, E5M2, 0, 0)/");
    static const char *const e5m2[][2] = {
        {"@/lib/model.c", ""}, {"lanes/lanes.c", ""}, {"kernels/emu_block.c", "-DPOL=e5m2"}};
    for (size_t i = 0; i < sizeof e5m2 / sizeof e5m2[0]; i++) {
        CHECK(compile(e5m2[i][0], e5m2[i][1], out, sizeof out) != 0);
        CHECK_MSG(strstr(out, "e5m2.h: No such file") && !strstr(out, "E5M2") &&
                  !strstr(out, "krnd_e5m2"), "%s: %s", e5m2[i][0], out);
    }
    show("e5m2.h");
    /* with a file that lacks the roundings, each arithmetic names the one it lacks */
    FILE *f = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/lib/formats/e5m2.h", scratch);
    CHECK((f = fopen(path, "w")) != NULL);
    if (!f)
        return;
    fprintf(f, "/* e5m2.h: nothing yet */\n");
    fclose(f);
    CHECK(compile("@/lib/model.c", "", out, sizeof out) != 0 && strstr(out, "VLA_RND_E5M2"));
    show("VLA_RND_E5M2");
    CHECK(compile("lanes/lanes.c", "", out, sizeof out) != 0 && strstr(out, "LRND_E5M2"));
    show("LRND_E5M2");
    CHECK(compile("kernels/emu_block.c", "-DPOL=e5m2", out, sizeof out) != 0 &&
          strstr(out, "krnd_e5m2"));
    show("krnd_e5m2");
    /* and with its roundings (each part as lib/formats/each.h says; in the lanes, the scalar
     * rounding lane by lane), every file that instantiates the policies builds: the row and the
     * file are all a format takes */
    CHECK((f = fopen(path, "w")) != NULL);
    if (!f)
        return;
    fprintf(f, "#if VLA_FMT_PART == VLA_PART_SCALAR\n"
               "static inline float vla_rnd_e5m2(float x)\n"
               "{ return (float)vla_round_narrow(x, 3, -14, 0x1.cp15); }\n"
               "#define VLA_RND_E5M2(x) _Generic((x), float: vla_rnd_e5m2)(x)\n"
               "#elif VLA_FMT_PART == VLA_PART_AVX512\n"
               "#define LDBL_E5M2 0\n"
               "static inline lv16 lrnd_e5m2(lv16 x)\n"
               "{ for (int i = 0; i < 16; i++) x[i] = vla_rnd_e5m2(x[i]); return x; }\n"
               "#define LRND_E5M2(x) lrnd_e5m2(x)\n"
               "#elif VLA_FMT_PART == VLA_PART_AVX2\n"
               "static inline lv8f lrnd2_e5m2(lv8f x)\n"
               "{ for (int i = 0; i < 8; i++) x[i] = vla_rnd_e5m2(x[i]); return x; }\n"
               "#define LRND2_E5M2(x) lrnd2_e5m2(x)\n"
               "#elif VLA_FMT_PART == VLA_PART_KERNEL\n"
               "#define krnd_e5m2 vla_rnd_e5m2\n"
               "#endif\n");
    fclose(f);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_MSG(compile(all[i], "", out, sizeof out) == 0, "%s: %s", all[i], out);
    CHECK_MSG(compile("kernels/emu_block.c", "-DPOL=e5m2", out, sizeof out) == 0, "%s", out);
    /* a mixed column that contradicts the formats */
    fresh_lib();
    edit("vlalists.h", "s/X(F16_F32, \"f16-f32\", f16f32, F16, F32, F16, 1, 0)/"
                       "X(F16_F32, \"f16-f32\", f16f32, F16, F32, F16, 0, 0)/");
    CHECK(compile("@/lib/fmt.c", "", out, sizeof out) != 0 && strstr(out, "vla_mixed_check_f16f32"));
    /* and a kern column that does */
    fresh_lib();
    edit("vlalists.h", "s/X(F16_KERN, \"f16-kern\", f16kern, F32, F32, F16, 0, 1)/"
                       "X(F16_KERN, \"f16-kern\", f16kern, F32, F32, F16, 0, 0)/");
    CHECK(compile("@/lib/fmt.c", "", out, sizeof out) != 0 && strstr(out, "vla_kern_check_f16kern"));
}

TEST_SLOW(lists_an_arithmetic_without_a_macro_fails_to_build)
{
    if (!fresh_lib())
        return;
    FILE *f;
    char path[128];
    /* a native instantiation, one macro taken away before recur.h: the #error names it */
    static const char *const gone[] = {"STORE", "TINY", "LOAD_PHI", "SFX"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        snprintf(path, sizeof path, "%s/lib/inst.c", scratch);
        CHECK((f = fopen(path, "w")) != NULL);
        if (!f)
            return;
        fprintf(f, "#define TAG(x) x\n#define PRIMS 0\n#define POL f32\n#define RO(x) (x)\n"
                   "#define RS(x) (x)\n#include \"arith_native.h\"\n#undef %s\n"
                   "#include \"recur.h\"\n", gone[i]);
        fclose(f);
        CHECK(compile("@/lib/inst.c", "", out, sizeof out) != 0);
        char want[80];
        snprintf(want, sizeof want, "the includer did not define %s", gone[i]);
        CHECK_MSG(strstr(out, want) != NULL, "%s", out);
        if (!i)
            show(want);
    }
}

/* After every file that instantiates recur.h, none of its macros is defined: each name that
 * recur_check.h asks for (and the includer's POL, RO, RS) is tested after the whole file. */
TEST_SLOW(lists_no_template_macro_leaks_past_an_instantiation)
{
    if (!fresh_lib())
        return;
    static const char *const files[] = {"lib/model.c",        "lib/model_fast.c",
                                        "lib/model_simd.c",   "lib/model_comp.c",
                                        "lib/flops.c",        "reference/ref_model.c",
                                        "reference/ref_model_dw.c", "kernels/emu.c",
                                        "lanes/lanes.c",    "kernels/host.c"};
    char cmd[512], path[128];
    snprintf(cmd, sizeof cmd,
             "{ sed -n 's/^#ifndef \\([A-Z_]*\\)$/\\1/p' lib/recur_check.h; "
             "echo CMPD LESSD FN ST POL RO RS RI FMT_C FMT_S FMT_I STORE_I NUM SFX VLA_FN VLA_PFOR E "
             "TAG PRIMS; } | "
             "tr ' ' '\\n' | sed '/^$/d' | "
             "sed 's/.*/#ifdef &\\n#error \"& leaked past the instantiations\"\\n#endif/' "
             "> %s/lib/noleak.h", scratch);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/lib/leak.c", scratch);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (!f)
            return;
        fprintf(f, "#include \"%s/%s\"\n#include \"noleak.h\"\n", getcwd(cmd, sizeof cmd),
                files[i]);
        fclose(f);
        CHECK_MSG(compile("@/lib/leak.c", "", out, sizeof out) == 0,
                  "%s: %s", files[i], out);
    }
    /* and the check can fail: a macro defined after an instantiation is found */
    snprintf(path, sizeof path, "%s/lib/leak.c", scratch);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "#include \"%s/lib/model_comp.c\"\n#define STORE(r)\n#include \"noleak.h\"\n",
                getcwd(cmd, sizeof cmd));
        fclose(f);
    }
    CHECK(compile("@/lib/leak.c", "", out, sizeof out) != 0 && strstr(out, "STORE leaked"));
}
