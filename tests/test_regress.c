/* test_regress.c: make regress does its job. The suite's own code (tools/regress/regress.c,
 * linked) runs a slice of the suite in-process against the committed baseline and must pass;
 * the builds of vla-regress with a fault planted in a copy of lib/recur.h ($(BUILD)/plant/N/,
 * the copy edited by tests/regress/plants/N.sed) must fail on the cases each fault touches,
 * naming them, and leave the others alone. */
#include "regress.h"

#include "check.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const base_path = "tests/regress/baseline.tsv";

/* A small slice of the suite: four references at d = 16 (a few seconds), chosen so that every
 * planted fault touches some of its cases and spares others. lmlike rather than gauss: there the
 * binary16 accumulation costs the read-out most (+0.8 bit against +0.5 on gauss). */
#define SLICE                                                                                      \
    "vla3/sm/f16-f32/lmlike,vla3/sm-sym/f16-f32/lmlike,vla3/joseph/f16-f32/lmlike,"                \
    "la/-/f16-f32/lmlike,vla3/sm/f32/lmlike,vla3/sm-sym/f32/lmlike,vla3/chol/f32/lmlike"

/* the slice run in-process by this test binary (the unplanted library), once */
static rg_run slice;
static int slice_state; /* 0: not run; 1: ran; -1: failed */

static const rg_run *slice_run(void)
{
    if (!slice_state) {
        rg_opts o = {.backends = 1u << VLA_BACKEND_CPU, .only = SLICE, .margin = RG_MARGIN};
        slice_state = rg_execute(&o, &slice) == 0 ? 1 : -1;
    }
    return slice_state > 0 ? &slice : NULL;
}

/* A baseline of the slice from this very build, so that each planted build is judged against
 * the code it differs from by one fault only, however old the committed baseline is. */
static char fresh_path[64];

static void fresh_remove(void) { unlink(fresh_path); }

static const char *fresh_baseline(void)
{
    static int state;
    if (!state) {
        const rg_run *r = slice_run();
        rg_baseline none = {0};
        snprintf(fresh_path, sizeof fresh_path, "/tmp/vla-regress-fresh-XXXXXX");
        int fd = r ? mkstemp(fresh_path) : -1;
        state = -1;
        if (fd >= 0) {
            close(fd);
            atexit(fresh_remove);
            if (rg_baseline_write(fresh_path, r, &none) == 0)
                state = 1;
        }
    }
    return state > 0 ? fresh_path : NULL;
}

static int have_baseline(void)
{
    FILE *f = fopen(base_path, "r");
    if (f)
        fclose(f);
    else
        vla_test_skip("no tests/regress/baseline.tsv here (make test runs from the repository root)");
    return f != NULL;
}

TEST(regress_suite_is_what_the_library_admits)
{
    rg_case *cs;
    int n = rg_suite(&cs, 1u << VLA_BACKEND_CPU, NULL), nsr = 0, nchol = 0;
    CHECK(n > 300);
    for (int i = 0; i < n; i++) {
        const vla_config *c = &cs[i].cfg;
        CHECK_MSG(vla_track_check(c, NULL) == 0, "%s is no valid combination", cs[i].name);
        if (c->track == VLA_TRACK_SR) {
            nsr++;
            CHECK_MSG(c->prec == VLA_F16_F32 || c->prec == VLA_BF16_F32, "%s", cs[i].name);
        }
        if (c->track == VLA_TRACK_CHOL) {
            nchol++;
            CHECK_MSG(!c->nudge && !c->clamp_on, "%s runs with the nudge or clamp on", cs[i].name);
        }
        if (!vla_model_has_A(c->model))
            CHECK_MSG(strstr(cs[i].name, "/-/") != NULL, "%s: a model without A has no track",
                      cs[i].name);
        for (int j = 0; j < i; j++)
            if (!strcmp(cs[i].name, cs[j].name)) {
                CHECK_MSG(0, "case %s twice", cs[i].name);
                break;
            }
    }
    /* 3 models with A x 4 streams x 2 precisions; chol: 3 x 4 x every precision */
    CHECK_EQ_INT(nsr, 24);
    CHECK_EQ_INT(nchol, 3 * 4 * VLA_NPREC);
    free(cs);
}

TEST(regress_verdicts)
{
    rg_result r = {{1.0, 2.0, 3.0}, 42, 1, ""};
    rg_row b = {"x", {1.0, 2.0, 3.0}, 42, 0};
    double w;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_SAME);
    b.fp = 7;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_CHANGED);
    CHECK(!rg_is_failure(V_CHANGED, 0) && rg_is_failure(V_CHANGED, 1));
    r.bits[1] = 2.5; /* exactly the margin: not worse */
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_CHANGED);
    r.bits[1] = 2.51;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_WORSE);
    CHECK_NEAR(w, 0.51, 1e-12);
    r.bits[1] = 1.4; /* better in S, worse in o: worse wins */
    r.bits[2] = 3.6;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_WORSE);
    r.bits[2] = 3.0;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_BETTER);
    r.bits[0] = INFINITY;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_NONFINITE);
    b.bits[0] = INFINITY; /* non-finite before and now: judged on the rest */
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_BETTER);
    r.bits[0] = b.bits[0] = NAN; /* no A */
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_BETTER);
    CHECK_EQ_INT(rg_verdict(&r, NULL, 0.5, &w), V_NEW);
    r.ran = 0;
    CHECK_EQ_INT(rg_verdict(&r, &b, 0.5, &w), V_ERROR);
    CHECK(rg_is_failure(V_NEW, 0) && rg_is_failure(V_ERROR, 0) && !rg_is_failure(V_BETTER, 0));
}

TEST(regress_baseline_rejects_a_malformed_row)
{
    char path[] = "/tmp/vla-regress-bad-XXXXXX";
    vla_error err;
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# suite: x\nla/-/f64/gauss\t-\t1.0\t2.0\t00000000000000ff\n"
               "la/-/f32/gauss\t-\t1.0\tnan\t00000000000000ff\n");
    fclose(f);
    rg_baseline b;
    CHECK_EQ_INT(rg_baseline_read(&b, path, &err), VLA_EFORMAT);
    CHECK_MSG(err.code == VLA_EFORMAT && strstr(err.msg, ":3:") != NULL,
              "the message names line 3: %s", err.msg);
    free(b.rows);
    unlink(path);
    CHECK_EQ_INT(rg_baseline_read(&b, path, &err), VLA_EIO);
}

/* The baseline is read whole and --update renames over it: a device or a FIFO is refused (2)
 * before the run, never waited on and never replaced; a file over RG_BASELINE_MAX is refused with
 * the limit named. An empty value is a usage error, not the default nor 0 (--margin ''). The FIFO
 * lives in a scratch folder, so that a regression replaces nothing outside it. */
TEST(regress_baseline_files_and_empty_values)
{
    char dir[] = "/tmp/vla-regress-files-XXXXXX", fifo[64], big[64], cmd[512];
    vla_error err;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(big, sizeof big, "%s/big.tsv", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    FILE *f = fopen(big, "w");
    for (int i = 0; f && i < 40000; i++) /* 1.2 MB of comments */
        fputs("# a comment line of thirty b\n", f);
    CHECK(f && fclose(f) == 0);
    rg_baseline b;
    CHECK_EQ_INT(rg_baseline_read(&b, "/dev/zero", &err), VLA_EFORMAT);
    CHECK_MSG(strstr(err.msg, "/dev/zero: a character device, not a regular file"), "%s", err.msg);
    CHECK_EQ_INT(rg_baseline_read(&b, big, &err), VLA_EFORMAT);
    CHECK_MSG(strstr(err.msg, "larger than 1048576 bytes, the limit of a baseline"), "%s", err.msg);
    free(b.rows);
    rg_run none = {0};
    rg_baseline old = {0};
    CHECK_EQ_INT(rg_baseline_write(fifo, &none, &old), VLA_EINVAL);
    struct stat st;
    CHECK_MSG(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    /* the program: refused at once (--only matches nothing, so that a regression ends quickly) */
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"--baseline /dev/zero", "--baseline /dev/zero: a character device, not a regular file"},
        {"--baseline %s", "/fifo: a FIFO, not a regular file\n"},
        {"--update --baseline %s", "/fifo: a FIFO, not a regular file: left as it is"},
        {"--margin ''", "--margin: an empty value"},
        {"--margin ' '", "--margin: ' ' is not a number of bits"},
        {"--backend ''", "--backend: an empty value"},
        {"--backend ,", "--backend: ',' names no backend"},
        {"--baseline ''", "--baseline: an empty value"},
        {"--trace ''", "--trace: an empty value"},
    };
    char prog[600];
    snprintf(prog, sizeof prog, "%s/vla-regress", vla_test_bin_dir());
    int have = access(prog, X_OK) == 0;
    if (!have)
        vla_test_skip("bin/vla-regress not built (run make first)");
    for (size_t i = 0; have && i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, bad[i].args, fifo);
        int rc = vla_test_sh(NULL, "timeout 20 bin/vla-regress %s --only nothing-matches 2>%s/err",
                             args, dir);
        snprintf(cmd, sizeof cmd, "%s/err", dir);
        FILE *e = fopen(cmd, "r");
        char out[600];
        size_t n = e ? fread(out, 1, sizeof out - 1, e) : 0;
        out[n] = 0;
        if (e)
            fclose(e);
        CHECK_MSG(rc == 2 && strstr(out, bad[i].want), "vla-regress %s: status %d, want '%s': %s",
                  args, rc, bad[i].want, out);
    }
    CHECK_MSG(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    /* --only '' would be every case (minutes), not a usage error */
    int st_ = have ? vla_test_sh(NULL, "timeout 20 bin/vla-regress --only '' 2>/dev/null >/dev/null") : 2;
    CHECK_MSG(st_ == 2, "--only '': status %d", st_);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The unchanged library (this test binary's) against the committed baseline: no case of the
 * slice fails. Then the baseline written from this run keeps every other row and reads back. */
TEST(regress_unchanged_build_passes)
{
    if (!have_baseline())
        return;
    const rg_run *rp = slice_run();
    CHECK_MSG(rp != NULL, "the slice did not run");
    if (!rp)
        return;
    const rg_run run = *rp;
    rg_baseline base, back;
    vla_error err;
    char suite[300];
    CHECK_EQ_INT(run.n, 7);
    CHECK_EQ_INT(rg_baseline_read(&base, base_path, &err), 0);
    rg_suite_line(suite, sizeof suite);
    CHECK_MSG(!strcmp(base.suite, suite), "the baseline says '%s', the suite is '%s'", base.suite,
              suite);
    for (int i = 0; i < run.n; i++) {
        rg_row *b = rg_baseline_find(&base, run.cases[i].name);
        double w;
        int v = rg_verdict(&run.res[i], b, RG_MARGIN, &w);
        CHECK_MSG(!rg_is_failure(v, 0), "%s: %s (%s) %+.2f bits; A %.3f S %.3f o %.3f",
                  run.cases[i].name, rg_vname[v], run.res[i].err, w, run.res[i].bits[0],
                  run.res[i].bits[1], run.res[i].bits[2]);
    }
    char path[] = "/tmp/vla-regress-base-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        CHECK_EQ_INT(rg_baseline_write(path, &run, &base), 0);
        CHECK_EQ_INT(rg_baseline_read(&back, path, &err), 0);
        CHECK_EQ_INT(back.n, base.n);
        CHECK(!strcmp(back.suite, suite));
        for (int i = 0; i < run.n; i++) {
            rg_row *b = rg_baseline_find(&back, run.cases[i].name);
            CHECK_MSG(b != NULL, "%s missing from the rewritten baseline", run.cases[i].name);
            for (int q = 0; b && q < 3; q++)
                if (!isnan(run.res[i].bits[q]))
                    CHECK_NEAR(b->bits[q], run.res[i].bits[q], 0.0005);
            CHECK(b && b->fp == run.res[i].fp);
        }
        free(back.rows);
        unlink(path);
    }
    free(base.rows);
}

/* ---- the planted faults, each a build of its own ---- */

/* runs $(BUILD)/plant/vla-regress-plantN on the slice against the fresh baseline; the output
 * into out (NUL-terminated), the exit status returned; -1 when that build is not there */
static int run_plant(int n, const char *base, const char *extra, char *out, size_t len)
{
    char exe[2048], cmd[3000];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return -1;
    exe[k] = 0; /* $(BUILD)/tests/run */
    for (int up = 0; up < 2; up++) {
        char *s = strrchr(exe, '/');
        if (!s)
            return -1;
        *s = 0;
    }
    snprintf(cmd, sizeof cmd, "%s/plant/vla-regress-plant%d", exe, n);
    if (access(cmd, X_OK))
        return -1;
    snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd),
             " --backend cpu --only '%s' --baseline '%s' %s 2>&1", SLICE, base, extra);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t got = fread(out, 1, len - 1, p);
    out[got] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* the verdict printed for a case ("" when its row is missing) */
static const char *verdict_of(const char *out, const char *name)
{
    static char v[32];
    char key[128];
    snprintf(key, sizeof key, "\ncpu:%s ", name);
    const char *p = strstr(out, key);
    v[0] = 0;
    if (!p)
        return v;
    char line[512];
    size_t n = strcspn(p + 1, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p + 1);
    char *tok = strtok(line, " "); /* label, then 3 x (base, now, change), then the verdict */
    for (int i = 0; tok && i < 10; i++)
        tok = strtok(NULL, " ");
    snprintf(v, sizeof v, "%s", tok ? tok : "");
    return v;
}

static char plant_out[1 << 16];

static int plant_or_skip(int n, const char *extra)
{
    const char *base = fresh_baseline();
    CHECK_MSG(base != NULL, "no baseline of the slice from this build");
    if (!base)
        return -1;
    int st = run_plant(n, base, extra, plant_out, sizeof plant_out);
    if (st < 0)
        vla_test_skip("the planted builds are not there ($(BUILD)/plant/: make test builds them)");
    return st;
}

#define EXPECT(name, verdict)                                                                      \
    CHECK_MSG(!strcmp(verdict_of(plant_out, name), verdict), "%s: expected %s, got '%s'\n%s", name, \
              verdict, verdict_of(plant_out, name), plant_out)
#define EXPECT_FAILS(name)                                                                         \
    CHECK_MSG(!strcmp(verdict_of(plant_out, name), "WORSE") ||                                     \
                  !strcmp(verdict_of(plant_out, name), "NONFINITE"),                               \
              "%s: expected WORSE or NONFINITE, got '%s'\n%s", name, verdict_of(plant_out, name),  \
              plant_out);                                                                          \
    CHECK_MSG(strstr(plant_out, "# FAIL:") && strstr(strstr(plant_out, "# FAIL:"), name),          \
              "the FAIL line names %s", name)

/* 1: the dot products of f16-f32 summed in binary16 storage instead of binary32. The f32 cases
 * do not even change bits (a store there rounds to binary32, which is a no-op). */
TEST_SLOW(regress_catches_binary16_accumulation)
{
    int st = plant_or_skip(1, "");
    if (st < 0)
        return;
    CHECK_EQ_INT(st, 1);
    EXPECT_FAILS("vla3/sm/f16-f32/lmlike");
    EXPECT_FAILS("vla3/sm-sym/f16-f32/lmlike");
    EXPECT_FAILS("vla3/joseph/f16-f32/lmlike");
    EXPECT_FAILS("la/-/f16-f32/lmlike");
    EXPECT("vla3/sm/f32/lmlike", "same");
    EXPECT("vla3/sm-sym/f32/lmlike", "same");
    EXPECT("vla3/chol/f32/lmlike", "same");
}

/* 2: sm-sym updates the upper triangle and never mirrors it */
TEST_SLOW(regress_catches_dropped_symmetrization)
{
    int st = plant_or_skip(2, "");
    if (st < 0)
        return;
    CHECK_EQ_INT(st, 1);
    EXPECT_FAILS("vla3/sm-sym/f16-f32/lmlike");
    EXPECT_FAILS("vla3/sm-sym/f32/lmlike");
    EXPECT("vla3/sm/f16-f32/lmlike", "same");
    EXPECT("vla3/sm/f32/lmlike", "same");
    EXPECT("vla3/joseph/f16-f32/lmlike", "same");
    EXPECT("vla3/chol/f32/lmlike", "same");
    EXPECT("la/-/f16-f32/lmlike", "same");
}

/* 3: every dot product summed from its last term. That is no loss of precision, and the check
 * must not call it one (it passes, every row 'changed'); what it catches is the change of
 * bits, which --bits (a change that claims to change no number) turns into a failure. */
TEST_SLOW(regress_catches_reordered_reduction)
{
    int st = plant_or_skip(3, "");
    if (st < 0)
        return;
    CHECK_MSG(st == 0, "a reordered sum is within the margin; status %d\n%s", st, plant_out);
    static const char *const names[] = {"vla3/sm/f16-f32/lmlike", "vla3/sm-sym/f32/lmlike",
                                        "vla3/chol/f32/lmlike", "la/-/f16-f32/lmlike"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        EXPECT(names[i], "changed");
    st = plant_or_skip(3, "--bits");
    CHECK_EQ_INT(st, 1);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        EXPECT(names[i], "changed");
        CHECK_MSG(strstr(strstr(plant_out, "# FAIL:") ? strstr(plant_out, "# FAIL:") : "", names[i]),
                  "the FAIL line names %s\n%s", names[i], plant_out);
    }
}

/* 4: vla3's periodic nudge skipped: f32 loses far more than the margin; chol runs with the
 * nudge off and la has none, so neither changes a bit */
TEST_SLOW(regress_catches_skipped_nudge)
{
    int st = plant_or_skip(4, "");
    if (st < 0)
        return;
    CHECK_EQ_INT(st, 1);
    EXPECT_FAILS("vla3/sm/f32/lmlike");
    EXPECT_FAILS("vla3/sm-sym/f32/lmlike");
    EXPECT("vla3/chol/f32/lmlike", "same");
    EXPECT("la/-/f16-f32/lmlike", "same");
}
