/* test_summary.c: no silent failures. Every program that writes a table from runs ends it with a
 * "# summary:" line in the header (summary.h), and says it on stderr when it found something: a
 * state or a measured error gone non-finite, a read-out exactly 0, an error past 1. Each case runs
 * a program on inputs that go wrong (or stay well) and checks the line, its place, what stderr
 * says and the exit status; where the table shows the step, the summary's step is the table's. */
#include "check.h"
#include "proc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the header's summary line (without "# summary: "), in buf; 0 when there is none or it is not in
 * the header (before "# columns:") */
static int summary_of(const char *table, char *buf, size_t len)
{
    const char *s = table ? strstr(table, "\n# summary: ") : NULL;
    const char *cols = table ? strstr(table, "\n# columns:") : NULL;
    if (!s || (cols && s > cols))
        return 0;
    s += strlen("\n# summary: ");
    snprintf(buf, len, "%.*s", (int)strcspn(s, "\n"), s);
    return 1;
}

/* the first value of column col (0-based) among the rows whose column test is in the state want:
 * 0 equal to 0, 1 at least 1 */
static double first_t(const char *table, int col, int want)
{
    const char *p = strstr(table, "\n# columns:");
    for (p = p ? strchr(p + 1, '\n') : NULL; p && *++p; p = strchr(p, '\n')) {
        if (*p == '#' || *p == '\n')
            continue;
        double v[16];
        char *q = (char *)p;
        int n = 0;
        for (; n < 16 && *q && *q != '\n'; n++)
            v[n] = strtod(q, &q);
        if (n > col && (want == 0 ? v[col] == 0 : v[col] >= 1))
            return v[0];
    }
    return -1;
}

typedef struct {
    const char *prog;
    const char *args[24];
    const char *says[3]; /* in the summary line */
    int loud;            /* "PROG: summary: " + the line on stderr */
} sum_case;

static const sum_case cases[] = {
    /* vla3's normalizer overflows binary16: the read-out is exactly 0, every number finite; the
     * model counts the overflow at its step, with or without a reference */
    {"vla-statenorm", {"--model", "vla3", "--precision", "f16", "--stream", "gauss:30", "--d", "8",
                       "--steps", "300", "--ref", "f64", "--checkpoints", "20"},
     {"finite in the one run", "the read-out's denominator n . phi(q) overflowed at ",
      "o_relerr reached 1"}, 1},
    {"vla-statenorm", {"--model", "vla3", "--precision", "f16", "--stream", "gauss:30", "--d", "8",
                       "--steps", "300", "--ref", "none", "--checkpoints", "1000"},
     {"finite in the one run", "the read-out's denominator n . phi(q) overflowed at ",
      "of 1 of 1 runs (first head 0, t = "}, 1},
    /* overflow at the first step: the warning said it, the summary marks the table */
    {"vla-statenorm", {"--model", "vla3", "--precision", "f16", "--stream", "gauss:1e3", "--d", "4",
                       "--steps", "10", "--ref", "f64"},
     {"non-finite in 1 of 1 runs (first head 0, t = 1)"}, 0},
    /* a run that stays well: marked, not said */
    {"vla-statenorm", {"--model", "vla3", "--precision", "f32", "--stream", "lmlike", "--d", "8",
                       "--steps", "100", "--ref", "f64"},
     {"finite in the one run; no measured error reached 1"}, 0},
    {"vla-drift", {"--model", "vla3", "--precision", "f16", "--stream", "gauss:1e3", "--d", "4",
                   "--steps", "10", "--ref", "f64"},
     {"non-finite in 1 of 1 runs (first head 0, t = 1)"}, 0},
    {"vla-heatmap", {"--stream", "gauss:1e300", "--d", "4", "--at", "1,2"},
     {"non-finite from the snapshot at t = 1"}, 0},
    {"vla-heatmap", {"--stream", "lmlike", "--d", "4", "--at", "1,10"},
     {"finite at all 2 snapshots"}, 0},
    /* vla3's normalizer overflows binary16 at t = 41 (as above): every program says it */
    {"vla-heatmap", {"--stream", "gauss:30", "--precision", "f16", "--d", "8", "--at", "5,100,300"},
     {"finite at all 3 snapshots; the read-out's denominator overflowed at ",
      "(first head 0, t = 41)"}, 1},
    {"vla-forms", {"--what", "sweep", "--model", "vla3", "--stream", "gauss:30", "--d", "8",
                   "--steps", "128", "--forms", "seq,chunk:4", "--precisions", "f16", "--set",
                   "period=256"},
     {"f16 seq: the read-out's denominator overflowed at ", "f16 chunk:4: the read-out's "
      "denominator overflowed at "}, 1},
    /* la with the identity features overflows f16 at d = 8, n = 64 */
    {"vla-recall", {"--models", "la", "--features", "id", "--precision", "f16", "--d", "8", "--n",
                    "8,64"},
     {"the read-out is not finite in ", "read_err is not finite (block 0: la features=id, n = "},
     1},
    {"vla-forms", {"--what", "sweep", "--model", "la", "--stream", "gauss:1e3", "--d", "4",
                   "--steps", "64", "--forms", "seq,chunk:16", "--precisions", "f16,f32"},
     {"s_relerr is not finite (f16 seq, t = "}, 1},
    {"vla-forms", {"--what", "sweep", "--model", "la", "--stream", "gauss", "--d", "4", "--steps",
                   "64", "--forms", "seq,chunk:16", "--precisions", "f16,f32"},
     {"every form stayed finite and no error reached 1"}, 0},
    {"vla-scaling", {"--models", "la", "--precisions", "f16", "--ds", "4", "--Ts", "100",
                     "--repeat", "1", "--softmax-budget", "0.01", "--stream", "gauss:1e300"},
     {"the state is not finite at the end of 1 of 1 timed points (first: la f16 d=4 T=100)"}, 1},
};

TEST(summary_every_program)
{
    char dir[256], out[400], msg[4000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(out, sizeof out, "%s/t.dat", dir);
    char zero_at[64] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sum_case *k = &cases[i];
        const char *p = program(k->prog);
        if (!p) {
            vla_test_skip("a program is not built");
            break;
        }
        char *argv[32] = {(char *)p};
        int n = 1;
        for (int j = 0; k->args[j]; j++)
            argv[n++] = (char *)k->args[j];
        argv[n++] = "--out";
        argv[n++] = out;
        argv[n] = NULL;
        int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        char *table = read_all(out, NULL), line[2048] = "";
        CHECK_MSG(st == 0, "case %zu (%s %s): status %d, stderr '%s'", i, k->prog, k->args[5], st,
                  msg);
        CHECK_MSG(summary_of(table, line, sizeof line), "case %zu (%s): no '# summary:' line in "
                  "the header", i, k->prog);
        for (int j = 0; j < 3 && k->says[j]; j++)
            CHECK_MSG(strstr(line, k->says[j]), "case %zu (%s): the summary '%s' lacks '%s'", i,
                      k->prog, line, k->says[j]);
        char said[2100];
        snprintf(said, sizeof said, "%s: summary: %s\n", k->prog, line);
        if (k->loud)
            CHECK_MSG(strstr(msg, said), "case %zu (%s): stderr '%s' lacks '%s'", i, k->prog, msg,
                      said);
        else
            CHECK_MSG(!strstr(msg, "summary:"), "case %zu (%s): stderr says a summary with "
                      "nothing to say: '%s'", i, k->prog, msg);
        if (i == 1) { /* without a reference, the same step: the first of the table's o = 0 */
            char want[64];
            snprintf(want, sizeof want, "(first head 0, t = %.0f)", table ? first_t(table, 3, 0) : 0);
            CHECK_MSG(zero_at[0] && strstr(line, zero_at) && !strcmp(want, zero_at),
                      "without a reference: '%s' lacks '%s', the table says '%s'", line, zero_at,
                      want);
            /* ... and the count of such steps is the table's count of rows with o = 0 */
            long zeros = 0;
            for (const char *p = table ? strstr(table, "\n# columns:") : NULL;
                 p && (p = strchr(p + 1, '\n'));) {
                char *q = (char *)p + 1;
                double v[4];
                int n = 0;
                for (; n < 4 && *q && *q != '\n' && *q != '#'; n++)
                    v[n] = strtod(q, &q);
                zeros += n == 4 && v[3] == 0;
            }
            snprintf(want, sizeof want, "overflowed at %ld steps of", zeros);
            CHECK_MSG(zeros > 0 && strstr(line, want), "'%s' lacks '%s'", line, want);
        }
        if (i == 0 && table) { /* the steps the summary names are the table's */
            /* the overflow's step: at or before the table's first checkpoint with o = 0 (case 1
             * has a row at every step: there it is the first) */
            double t0 = first_t(table, 3, 0), tz = 0;
            const char *at = strstr(line, "(first head 0, t = ");
            if (at)
                tz = atof(at + strlen("(first head 0, t = "));
            CHECK_MSG(t0 > 0 && tz > 0 && tz <= t0, "the zero read-out's step: '%s' says %g, "
                      "after the table's %g", line, tz, t0);
            snprintf(zero_at, sizeof zero_at, "(first head 0, t = %.0f)", tz);
            char want[64];
            snprintf(want, sizeof want, "o_relerr reached 1 (head 0, t = %.0f)",
                     first_t(table, 6, 1));
            CHECK_MSG(strstr(line, want), "the error's step: '%s' lacks '%s'", line, want);
        }
        free(table);
        unlink(out);
    }
    remove_tree(dir);
}

/* vla-regress: the verdicts' counts, and a case non-finite now and in the baseline (its verdict
 * "same") is named, not passed over */
TEST(summary_regress)
{
    const char *p = program("vla-regress");
    if (!p) {
        vla_test_skip("bin/vla-regress not built");
        return;
    }
    char *got = NULL;
    /* two threads at least: under make test-san LeakSanitizer sees MPFR's per-thread caches in
     * OpenMP's pool threads unless the engine has them freed (vla_model_ops' rest) */
    int st = vla_test_sh(&got, "OMP_NUM_THREADS=2 bin/vla-regress --backend cpu --only "
                               "'la/-/f16/gauss' 2>/dev/null");
    CHECK_MSG(st == 0 && got && strstr(got, "\n# summary: 1 cases: 1 same\n"), "status %d, '%s'",
              st, got ? got : "");
    free(got);
    got = NULL;
    st = vla_test_sh(&got, "OMP_NUM_THREADS=2 bin/vla-regress --backend cpu --only "
                           "'vla3/cg:8/f16/gauss' 2>&1");
    CHECK_MSG(st == 0 && got && strstr(got, "\n# summary: 1 cases: 1 same; 1 non-finite now, the "
                                            "baseline's verdict aside (cpu:vla3/cg:8/f16/gauss)\n"),
              "status %d, '%s'", st, got ? got : "");
    CHECK_MSG(got && strstr(got, "vla-regress: summary: 1 cases: 1 same; 1 non-finite now"),
              "not said on stderr: '%s'", got ? got : "");
    free(got);
}

/* vla-sweep: a case that ran ok but found something says so, with its table's summary line, in
 * its [k/n] line and again at the end; a case that found nothing does not */
TEST(summary_sweep)
{
    const char *p = program("vla-sweep");
    char dir[256], path[400], line[2048] = "";
    if (!p || !program("vla-statenorm")) {
        vla_test_skip("bin/vla-sweep or bin/vla-statenorm not built");
        return;
    }
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(path, sizeof path, "%s/t.sweep", dir);
    char text[600];
    int n = snprintf(text, sizeof text, "out %s/out\nprogram vla-statenorm\nfixed --model vla3 "
                     "--precision f16 --d 8 --steps 300 --ref f64 --checkpoints 20\naxis --stream "
                     "gauss:30 lmlike\nname sn-{stream}\n", dir);
    write_bytes(path, text, (size_t)n);
    char *got = NULL;
    int st = vla_test_sh(&got, "bin/vla-sweep -j 1 '%s' 2>&1", path);
    snprintf(path, sizeof path, "%s/out/sn-gauss_30.dat", dir);
    char *table = read_all(path, NULL);
    CHECK_MSG(st == 0 && summary_of(table, line, sizeof line), "status %d, '%s'", st,
              got ? got : "");
    char want[2200];
    snprintf(want, sizeof want, "\nvla-sweep: found: sn-gauss_30: %s\n", line);
    CHECK_MSG(got && strstr(line, "exactly 0") && strstr(got, want), "'%s' lacks '%s'",
              got ? got : "", want + 1);
    snprintf(want, sizeof want, "ok sn-gauss_30 (");
    CHECK_MSG(got && strstr(got, want) && strstr(got, "; its summary: finite in the one run; the "
                                                      "read-out's denominator n . phi(q) overflowed"),
              "the case's line lacks its summary: '%s'", got ? got : "");
    CHECK_MSG(got && !strstr(got, "found: sn-lmlike"), "a case that found nothing is listed: '%s'",
              got ? got : "");
    free(got);
    free(table);
    remove_tree(dir);
}

/* vla-bench: its output ends with the summary of the timed runs' states (its prepared Gaussian
 * inputs keep them finite: the line must say so, with the count) */
TEST(summary_bench)
{
    if (!program("vla-bench")) {
        vla_test_skip("bin/vla-bench not built");
        return;
    }
    char *got = NULL;
    int st = vla_test_sh(&got, "bin/vla-bench --cpu-only --models la --precs f32 --d 16 --quick "
                               "2>/dev/null | tail -1");
    CHECK_MSG(st == 0 && got && !strncmp(got, "# summary: the state is finite at the end of all ",
                                         49) && atol(got + 49) > 0,
              "status %d, last line '%s'", st, got ? got : "");
    free(got);
}
