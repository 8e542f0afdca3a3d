/* test_states.c: vla-check trace:DIR --states DIR2 from the outside: the states a prefix cache
 * saved, judged against the positions it claims for them. The "cache" is vlastab's own binary64
 * run of a gdn trace, its states taken through the engine at chosen steps: under their true
 * positions every state agrees, matched at its label (exit 0); one under another position, as in
 * vLLM issue 51113 ("hashed as state@1600 but holds state@364"), is mislabelled and the summary
 * names the position its content holds (exit 1); a state moved by 1% matches no position, its
 * nearest named; the trace's S0.npy is position 0; and the bad files and options (exit 2). The
 * check from the published equations, independent of lib, is tests/test_states.py. */
#include "check.h"
#include "proc.h"
#include "vlastab.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define H 2
#define T 300
#define D 8  /* d */
#define DV 4 /* dv: unlike d, so that a transposed state is told apart */
#define NS (DV * D)

/* a gdn trace of H heads x T steps in binary64; model.txt names gdn */
static int write_trace(const char *dir)
{
    return write_gdn_trace(dir, H, T, D, DV, 21, VLA_FMT_F64);
}

/* vlastab's own binary64 run of the trace (from its S0.npy where it has one): its state at each
 * step of ts (ascending, n of them) into X (n x H x DV x D, states.npy's layout) */
static int own_states(const char *tr, const long *ts, int n, double *X)
{
    char stream[200];
    snprintf(stream, sizeof stream, "trace:%s", tr);
    vla_engine_spec sp;
    memset(&sp, 0, sizeof sp);
    vla_config_default(&sp.cfg, VLA_GDN, D);
    sp.cfg.dv = DV;
    sp.cfg.prec = VLA_F64;
    sp.runs = H;
    sp.stream = stream;
    sp.round_inputs = VLA_FMT_F64;
    vla_engine *e;
    if (vla_engine_new(&e, &sp, NULL))
        return 1;
    int r = 0;
    for (int i = 0; !r && i < n; i++) {
        r = vla_engine_advance(e, ts[i]);
        for (int h = 0; !r && h < H; h++)
            r = vla_engine_get(e, h, VLA_Q_S, X + ((size_t)i * H + h) * NS);
    }
    vla_engine_free(e);
    return r;
}

/* DIR2's states.npy (n states of X) and positions.npy (pos, int64) */
static void write_cache(const char *ko, const double *X, const long *pos, int n)
{
    char path[200];
    const long shape[4] = {n, H, DV, D};
    snprintf(path, sizeof path, "%s/states.npy", ko);
    CHECK(vla_npy_write(path, X, 4, shape) == 0);
    snprintf(path, sizeof path, "%s/positions.npy", ko);
    CHECK(write_npy_ints(path, "<i8", pos, n) == 0);
}

/* the table's rows: state head label matched dist_label budget_label dist_matched budget_matched
 * verdict (matched -1 for none) */
typedef struct {
    long label, matched;
    double dl, bl, dm, bm;
    char verdict[16];
} row_t;
static int rows(const char *out, row_t *r, int max)
{
    int n = 0;
    for (const char *p = out, *nl; p && *p && n < max; p = (nl = strchr(p, '\n')) ? nl + 1 : NULL) {
        if (*p == '#' || *p == '\n')
            continue;
        int i, h;
        char m[32];
        if (sscanf(p, "%d %d %ld %31s %lf %lf %lf %lf %15s", &i, &h, &r[n].label, m, &r[n].dl,
                   &r[n].bl, &r[n].dm, &r[n].bm, r[n].verdict) != 9 || i != n / H || h != n % H)
            return -1;
        r[n++].matched = strcmp(m, "none") ? atol(m) : -1;
    }
    return n;
}

/* a folder from its template with the trace in DIR/tr and an empty DIR/cache: 0, else 1 after a
 * skip (no bin/vla-check) or a failed check */
static int setup(char *dir, char *tr, char *ko)
{
    if (judge_folder(dir, tr, ko, "cache"))
        return 1;
    if (write_trace(tr)) {
        CHECK_MSG(0, "cannot write the trace");
        return 1;
    }
    return 0;
}

/* vla-check on the cache: its exit status, the table's rows (n of them) and stderr into err */
static int judge(const char *tr, const char *ko, const char *more, row_t *r, int *n, char **err)
{
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-check trace:%s --states %s %s 2>%s/../err", tr, ko, more,
                         ko);
    *n = rows(out, r, 64);
    free(out);
    char path[200];
    size_t len;
    snprintf(path, sizeof path, "%s/../err", ko);
    *err = read_all(path, &len);
    return st;
}

TEST(states_labels_and_contents)
{
    char dir[64] = "/tmp/vla-states-test.XXXXXX", tr[100], ko[100], *err = NULL;
    if (setup(dir, tr, ko))
        return;
    static const long ts[4] = {0, 37, 128, T};
    double X[4 * H * NS], Y[4 * H * NS];
    CHECK(own_states(tr, ts, 4, X) == 0);
    row_t r[64];
    int n;
    /* (1) every state under its own position: each agrees at its label, its nearest position */
    write_cache(ko, X, ts, 4);
    int st = judge(tr, ko, "", r, &n, &err);
    CHECK_MSG(st == 0 && n == 4 * H && err && strstr(err, "ok: all 4 states agree"),
              "true labels: exit %d, %d rows, %s", st, n, err ? err : "");
    for (int k = 0; k < n; k++)
        CHECK_MSG(!strcmp(r[k].verdict, "ok") && r[k].matched == ts[k / H] &&
                      r[k].dl <= r[k].bl && r[k].bl < 1e-12,
                  "state %d head %d: %s, matched %ld, %g against %g", k / H, k % H, r[k].verdict,
                  r[k].matched, r[k].dl, r[k].bl);
    free(err);
    /* (2) the state of t = 128 saved as t = 250 (vLLM 51113's class): mislabelled, its content
     * matched at 128 within the budget there; the others still agree */
    const long wrong[4] = {0, 37, 250, T};
    write_cache(ko, X, wrong, 4);
    st = judge(tr, ko, "", r, &n, &err);
    CHECK_MSG(st == 1 && n == 4 * H && err &&
                  strstr(err, "disagree: 1 of 4 states disagree") &&
                  strstr(err, "state 2: label t=250, content matches t=128 (distance ") &&
                  strstr(err, "(head 0; 2 of 2 heads disagree)"),
              "mislabelled: exit %d, %d rows, %s", st, n, err ? err : "");
    for (int k = 0; k < n; k++)
        CHECK_MSG(k / H == 2 ? !strcmp(r[k].verdict, "mislabelled") && r[k].matched == 128 &&
                                   r[k].dm <= r[k].bm && r[k].dl > 1e-3
                             : !strcmp(r[k].verdict, "ok"),
                  "mislabelled, state %d head %d: %s, matched %ld", k / H, k % H, r[k].verdict,
                  r[k].matched);
    free(err);
    /* (3) the state of t = 128 moved by 1%: it holds no position's state; its nearest is named */
    memcpy(Y, X, sizeof Y);
    for (int j = 0; j < H * NS; j++)
        Y[2 * H * NS + j] *= 1.01;
    write_cache(ko, Y, ts, 4);
    st = judge(tr, ko, "", r, &n, &err);
    CHECK_MSG(st == 1 && err && strstr(err, "state 2: label t=128, matches no position (nearest "
                                            "t=128, distance 0.01 against budget"),
              "moved: exit %d, %s", st, err ? err : "");
    CHECK(n == 4 * H && !strcmp(r[4].verdict, "unmatched") && !strcmp(r[5].verdict, "unmatched"));
    free(err);
    /* (4) positions as int32 */
    char path[200];
    write_cache(ko, X, ts, 4);
    snprintf(path, sizeof path, "%s/positions.npy", ko);
    CHECK(write_npy_ints(path, "<i4", ts, 4) == 0);
    st = judge(tr, ko, "", r, &n, &err);
    CHECK_MSG(st == 0 && n == 4 * H && r[1 * H].label == 37, "int32: exit %d, %d rows", st, n);
    free(err);
    /* (5) the trace's S0.npy: position 0 is S_0, the states from it agree, those from 0 do not */
    double S0[H * NS];
    for (int j = 0; j < H * NS; j++)
        S0[j] = vla_gauss(22, 0, 0, (uint64_t)j, 0);
    const long s0shape[3] = {H, DV, D};
    snprintf(path, sizeof path, "%s/S0.npy", tr);
    CHECK(vla_npy_write(path, S0, 3, s0shape) == 0);
    CHECK(own_states(tr, ts, 4, Y) == 0);
    CHECK(!memcmp(Y, S0, sizeof S0));
    write_cache(ko, Y, ts, 4);
    st = judge(tr, ko, "--ref f64", r, &n, &err);
    CHECK_MSG(st == 0 && n == 4 * H, "from S0.npy: exit %d, %s", st, err ? err : "");
    free(err);
    write_cache(ko, X, ts, 4); /* the states from 0, judged on the trace from S_0 */
    st = judge(tr, ko, "--ref f64", r, &n, &err);
    CHECK_MSG(st == 1 && err && strstr(err, "state 0: label t=0,"),
              "from 0 on S0.npy: exit %d, %s", st, err ? err : "");
    free(err);
    vla_test_sh(NULL, "rm -rf %s", dir);
}

/* bad files and options: a one-line message naming the file and the reason, exit 2, before any
 * work */
TEST(states_refused)
{
    char dir[64] = "/tmp/vla-states-test.XXXXXX", tr[100], ko[100], path[200], *out = NULL;
    if (setup(dir, tr, ko))
        return;
    static const long ts[3] = {0, 10, 20};
    double X[3 * H * NS];
    CHECK(own_states(tr, ts, 3, X) == 0);
    const long sshape[4] = {3, H, DV, D}, tshape[4] = {3, H, D, DV}, flat[3] = {3, H, NS};
    const long pshape[1] = {3}, wrong[3] = {0, 10, T + 1}, neg[3] = {-1, 10, 20};
    struct {
        const char *what, *cmd, *says;
    } cases[] = {
        {"no states.npy", "", "states.npy: cannot open"},
        {"3 axes", "", "shape (3, 2, 32), expected (N, heads, dv, d) = (N, 2, 4, 8)"},
        {"transposed", "", "(the state S as vla_model_get gives it, dv x d"},
        {"NaN", "", "states.npy: NaN at [1, 0, 2, 3] (state, head, row, column)"},
        {"float positions", "", "positions.npy: unsupported dtype '<f8' (integers only"},
        {"positions of another N", "", "positions.npy: shape (2,), expected (N,) = (3,)"},
        {"past T", "", "positions.npy: 301 at [2] is outside 0..300"},
        {"negative", "", "positions.npy: -1 at [0] is outside 0..300"},
        {"uint16 without dtype.txt", "", "bfloat16 bit patterns are read only when"},
        {"vla3", "--model vla3", "the states are compared as S alone"},
        {"with --outputs", "--outputs x", "--states and --outputs: give one of them"},
        {"--report", "--report r", "--report: --states writes its table"},
        {"--window", "--window 8", "--window goes with --outputs"},
        {"--ref none", "--ref none", "--ref exact (the default) or f64, not none"},
        {"--out over states.npy", "--out STATES", "the judge never replaces what it judges"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char cmd[400];
        vla_test_sh(NULL, "rm -f %s/*", ko);
        snprintf(path, sizeof path, "%s/states.npy", ko);
        CHECK(c == 0 || vla_npy_write(path, X, c == 1 ? 3 : 4, c == 1 ? flat
                                                               : c == 2 ? tshape : sshape) == 0);
        if (c == 3) {
            double *x = &X[(1 * H + 0) * NS + 2 * D + 3], keep = *x;
            *x = NAN;
            CHECK(vla_npy_write(path, X, 4, sshape) == 0);
            *x = keep;
        }
        if (c == 8) { /* numpy's '<u2': the header's dtype changed, two bytes a number */
            size_t len;
            char *b = read_all(path, &len), *at = b ? strstr(b + 10, "<f8") : NULL;
            CHECK(at != NULL);
            if (at) {
                memcpy(at, "<u2", 3);
                write_bytes(path, b, 10 + (size_t)(b[8] & 0xff) + ((size_t)(b[9] & 0xff) << 8) +
                                         (size_t)3 * H * NS * 2);
            }
            free(b);
        }
        snprintf(path, sizeof path, "%s/positions.npy", ko);
        if (c == 4)
            CHECK(vla_npy_write(path, (const double[]){0, 10, 20}, 1, pshape) == 0);
        else
            CHECK(write_npy_ints(path, "<i8", c == 6 ? wrong : c == 7 ? neg : ts, c == 5 ? 2 : 3) ==
                  0);
        if (!strcmp(cases[c].cmd, "--out STATES"))
            snprintf(cmd, sizeof cmd, "--out %s/states.npy", ko);
        else
            snprintf(cmd, sizeof cmd, "%s", cases[c].cmd);
        int st = vla_test_sh(&out, "bin/vla-check trace:%s --states %s %s 2>&1 >/dev/null", tr,
                             ko, cmd);
        CHECK_MSG(st == 2 && out && strstr(out, cases[c].says) && strchr(out, '\n') &&
                      !strchr(out, '\n')[1],
                  "%s: exit %d, %s (expected exit 2 and '%s' in one line)", cases[c].what, st,
                  out ? out : "", cases[c].says);
        free(out), out = NULL;
    }
    vla_test_sh(NULL, "rm -rf %s", dir);
}
