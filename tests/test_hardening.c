/* test_hardening.c: what a user or the machine can do to a run. Malformed inputs (the fuzzers'
 * seeds and findings, and the bad-input table of the README) get one line and a status, never a
 * crash, a hang or a silent NaN; kill -9 then --resume gives the same bits; SIGINT and SIGTERM
 * checkpoint and exit 3; a full disk or an unwritable directory is an error naming the path, with
 * no complete-looking table left. Program tests run bin/ programs and skip when they are absent. */
#define _GNU_SOURCE
#include "check.h"
#include "proc.h"
#include "vlacuda.h"
#include "vlastab.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---- */

/* a .npy file with the header dict given as text (numpy's padding to 64 bytes, version 1.0) */
static void write_npy_header(const char *path, const char *dict, const void *data, size_t n)
{
    FILE *f = npy_open(path, dict);
    int ok = f && (n == 0 || fwrite(data, 1, n, f) == n);
    ok = f && fclose(f) == 0 && ok;
    CHECK_MSG(ok, "cannot write %s", path);
}

/* ---- the fuzzers' seeds and findings, through the library ---- */

static const char *seed_dir(const char *target, char *buf, size_t len)
{
    snprintf(buf, len, "tests/fuzz/seeds/%s", target);
    return exists(buf) ? buf : NULL;
}

TEST(hardening_npy_seeds)
{
    char dir[256];
    if (!seed_dir("npy", dir, sizeof dir)) {
        vla_test_skip("tests/fuzz/seeds/npy not found (run from the repository root)");
        return;
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0, good = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[600];
        vla_error err = {0};
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        vla_npy a;
        int rc = vla_npy_read(path, &a, &err);
        files++;
        if (rc == 0) {
            good++;
            CHECK_MSG(a.data && a.ndim >= 0 && a.ndim <= 8, "%s: read but empty", path);
        } else {
            /* a failure is one line that names the file, and keeps nothing */
            CHECK_MSG(rc < 0 && !strncmp(err.msg, path, strlen(path)) && !strchr(err.msg, '\n') &&
                          !a.data,
                      "%s: rc %d, reason '%s'", path, rc, err.msg);
        }
        vla_npy_free(&a);
    }
    if (d)
        closedir(d);
    CHECK_MSG(files >= 20 && good >= 10, "%d seed files, %d readable", files, good);
}

/* Found by fuzz_npy: a header naming 'shape' twice was read with the sizes of the first shape
 * left beyond the second's ndim. Now a repeated key is a format error. */
TEST(hardening_npy_repeated_key)
{
    char dir[256], path[300];
    vla_error err = {0};
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(path, sizeof path, "%s/a.npy", dir);
    float x[6] = {1, 2, 3, 4, 5, 6};
    write_npy_header(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "
                           "'shape': (5,), }", x, sizeof x);
    vla_npy a;
    int rc = vla_npy_read(path, &a, &err);
    CHECK_MSG(rc == VLA_EFORMAT && strstr(err.msg, "repeats key 'shape'"), "rc %d: %s", rc,
              err.msg);
    write_npy_header(path, "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, "
                           "'shape': (6,), }", x, sizeof x);
    rc = vla_npy_read(path, &a, &err);
    CHECK_MSG(rc == VLA_EFORMAT && strstr(err.msg, "repeats key 'descr'"), "rc %d: %s", rc,
              err.msg);
    /* the same file with each key once is fine */
    write_npy_header(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", x,
                     sizeof x);
    rc = vla_npy_read(path, &a, &err);
    CHECK_MSG(rc == 0 && a.ndim == 2 && a.shape[1] == 3 && a.data[5] == 6, "rc %d: %s", rc,
              err.msg);
    vla_npy_free(&a);
    remove_tree(dir);
}

TEST(hardening_stream_seeds)
{
    char dir[256];
    if (!seed_dir("stream", dir, sizeof dir)) {
        vla_test_skip("tests/fuzz/seeds/stream not found (run from the repository root)");
        return;
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[600];
        vla_error err = {0};
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        char *in = read_all(path, &n);
        if (!in || n < 3) {
            free(in);
            continue;
        }
        files++;
        /* the fuzzer's layout: d, dv, seed, then the spec */
        int dd = (unsigned char)in[0] % 260, dv = (unsigned char)in[1] % 260;
        vla_stream *s = NULL;
        int rc = vla_stream_open(&s, in + 3, dd, dv, (unsigned char)in[2], &err);
        CHECK_MSG(rc == 0 ? s != NULL : (rc < 0 && !s && err.msg[0] && !strchr(err.msg, '\n')),
                  "%s: rc %d, '%s'", path, rc, err.msg);
        vla_stream_close(s);
        free(in);
    }
    if (d)
        closedir(d);
    CHECK_MSG(files >= 10, "%d stream seeds", files);
}

/* fuzz_trace's seeds: d, dv, a byte of optional files, then the files from magic to magic */
TEST(hardening_trace_seeds)
{
    char sd[256], dir[256];
    if (!seed_dir("trace", sd, sizeof sd)) {
        vla_test_skip("tests/fuzz/seeds/trace not found (run from the repository root)");
        return;
    }
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    static const char *names[6] = {"q.npy", "k.npy", "v.npy", "u.npy", "g.npy", "beta.npy"};
    DIR *d = opendir(sd);
    struct dirent *e;
    int files = 0, opened = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[600];
        vla_error err = {0};
        snprintf(path, sizeof path, "%s/%s", sd, e->d_name);
        size_t n;
        unsigned char *in = (unsigned char *)read_all(path, &n);
        if (!in || n < 3) {
            free(in);
            continue;
        }
        files++;
        int dd = in[0] % 8 + 1, dv = in[1] % 8 + 1, opt = in[2];
        const unsigned char *p = in + 3, *end = in + n;
        for (int i = 0; i < 6; i++) {
            char f[600];
            snprintf(f, sizeof f, "%s/%s", dir, names[i]);
            unlink(f);
            if (i >= 3 && !(opt >> (i - 3) & 1))
                continue;
            const unsigned char *next = p + 1 < end ? memmem(p + 1, end - p - 1, "\x93NUMPY", 6)
                                                    : NULL;
            if (!next)
                next = end;
            write_bytes(f, p, next - p);
            p = next;
        }
        char spec[300];
        snprintf(spec, sizeof spec, "trace:%s", dir);
        vla_stream *s = NULL;
        int rc = vla_stream_open(&s, spec, dd, dv, 1, &err);
        CHECK_MSG(rc == 0 ? s != NULL : (rc < 0 && !s && err.msg[0] && !strchr(err.msg, '\n')),
                  "%s: rc %d, '%s'", path, rc, err.msg);
        opened += rc == 0;
        vla_stream_close(s);
        free(in);
    }
    if (d)
        closedir(d);
    CHECK_MSG(files >= 5 && opened >= 3, "%d trace seeds, %d opened", files, opened);
    remove_tree(dir);
}

/* Found while building the bad-input table: gates outside [0, 1] and a negative beta were
 * accepted, and the delta rule then overflowed into a table of nan with exit status 0. */
TEST(hardening_trace_rates)
{
    char dir[256], path[300], spec[300];
    vla_error err = {0};
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    double x[2 * 3 * 2];
    long sh[3] = {2, 3, 2};
    for (int i = 0; i < 12; i++)
        x[i] = 0.25 + i / 32.0;
    static const char *names[3] = {"q.npy", "k.npy", "v.npy"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        CHECK_EQ_INT(vla_npy_write(path, x, 3, sh), 0);
    }
    snprintf(spec, sizeof spec, "trace:%s", dir);
    static const struct {
        const char *file;
        double bad;
        const char *want;
    } cases[] = {
        {"g.npy", 1.5, "outside [0, 1]"},
        {"g.npy", -0.25, "outside [0, 1]"},
        {"beta.npy", -1, "outside [0, inf]"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double y[12];
        long ysh[3] = {2, 3, strcmp(cases[c].file, "g.npy") ? 1 : 2}; /* beta: (heads, T, 1) */
        for (int i = 0; i < 12; i++)
            y[i] = i == 4 ? cases[c].bad : 0.5;
        snprintf(path, sizeof path, "%s/%s", dir, cases[c].file);
        CHECK_EQ_INT(vla_npy_write(path, y, 3, ysh), 0);
        vla_stream *s = NULL;
        int rc = vla_stream_open(&s, spec, 2, 2, 1, &err);
        CHECK_MSG(rc == VLA_ERANGE && strstr(err.msg, cases[c].file) &&
                      strstr(err.msg, cases[c].want),
                  "%s = %g: rc %d '%s'", cases[c].file, cases[c].bad, rc, err.msg);
        vla_stream_close(s);
        /* the ends of the ranges are a saturated sigmoid, not an error */
        for (int i = 0; i < 12; i++)
            y[i] = i % 2 ? 0 : 1;
        CHECK_EQ_INT(vla_npy_write(path, y, 3, ysh), 0);
        rc = vla_stream_open(&s, spec, 2, 2, 1, &err);
        CHECK_MSG(rc == 0, "%s at the ends of its range: rc %d '%s'", cases[c].file, rc, err.msg);
        vla_stream_close(s);
        unlink(path);
    }
    remove_tree(dir);
}

TEST(hardening_config_seeds)
{
    char dir[256];
    if (!seed_dir("config", dir, sizeof dir)) {
        vla_test_skip("tests/fuzz/seeds/config not found (run from the repository root)");
        return;
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        char *in = read_all(path, &n);
        if (!in || n < 3) {
            free(in);
            continue;
        }
        files++;
        vla_config cfg;
        vla_config_default(&cfg, (vla_model_kind)((unsigned char)in[0] % VLA_NMODEL), 4);
        for (char *p = in + 3; p < in + n; p += strlen(p) + 1) {
            char *eq = strchr(p, '=');
            if (!eq)
                continue;
            *eq = 0;
            vla_config before = cfg;
            if (vla_config_set(&cfg, p, eq + 1))
                CHECK_MSG(!memcmp(&before, &cfg, sizeof cfg), "%s: refused %s changed the config",
                          path, p);
        }
        char desc[1024];
        vla_config_describe(&cfg, desc, sizeof desc);
        CHECK(!strchr(desc, '\n'));
        free(in);
    }
    if (d)
        closedir(d);
    CHECK_MSG(files >= 10, "%d config seeds", files);
}

/* ---- the programs: options ---- */

/* Found by fuzz_cli: --steps nan (or 1e30) cast a double outside long's range to long, undefined
 * behaviour; the range is now checked first. */
TEST(hardening_cli_numbers)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    static const char *bad[] = {"nan", "inf", "-inf", "1e30", "-1e30", "9.3e18", "1e9x", "", "0x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[600], want[100];
        char *argv[] = {(char *)p, "--steps", (char *)bad[i], "--d", "4", NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 10);
        snprintf(want, sizeof want, "--steps: '%s' is not an integer in 1..1000000000", bad[i]);
        CHECK_MSG(st == 2 && strstr(msg, want), "--steps '%s': status %d, '%s'", bad[i], st, msg);
    }
}

/* ---- the programs: the bad-input table ---- */

typedef struct {
    const char *what;    /* the kind of bad input */
    const char *trace;   /* a trace made by make_bad_trace, or NULL */
    const char *args;    /* further arguments, space-separated; %D is the trace directory */
    const char *env;     /* one "K=V" or NULL */
    int status;          /* the exit status expected */
    const char *want;    /* a part of the message, or NULL: no message at all */
} bad_case;

/* Writes DIR/NAME/{q,k,v}.npy, heads 2, T 20, d 4, broken as NAME says. */
static void make_bad_trace(const char *dir, const char *name)
{
    char sub[400], path[600];
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    mkdir(sub, 0755);
    enum { H = 2, T = 20, D = 4, N = H * T * D };
    double good[N], x[2 * N]; /* room for a larger wrong shape */
    for (int i = 0; i < N; i++)
        good[i] = vla_gauss(3, VLA_VAR_AUX, 0, 1, i);
    long sh[3] = {H, T, D};
    static const char *f[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s.npy", sub, f[i]);
        CHECK_EQ_INT(vla_npy_write(path, good, 3, sh), 0);
    }
    snprintf(path, sizeof path, "%s/k.npy", sub);
    memcpy(x, good, sizeof good);
    if (!strcmp(name, "nan")) {
        x[13] = NAN;
        vla_npy_write(path, x, 3, sh);
    } else if (!strcmp(name, "inf")) {
        x[13] = -INFINITY;
        vla_npy_write(path, x, 3, sh);
    } else if (!strcmp(name, "subnormal")) {
        for (int i = 0; i < N; i++)
            x[i] = (i % 3 - 1) * 0x1p-1070;
        static const char *g[3] = {"q", "k", "v"};
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s.npy", sub, g[i]);
            vla_npy_write(path, x, 3, sh);
        }
    } else if (!strcmp(name, "huge")) {
        for (int i = 0; i < N; i++)
            x[i] = 1e300 * good[i];
        vla_npy_write(path, x, 3, sh);
    } else if (!strcmp(name, "empty")) {
        write_bytes(path, "", 0);
    } else if (!strcmp(name, "no-steps")) {
        snprintf(path, sizeof path, "%s/q.npy", sub);
        vla_npy_write(path, x, 3, (long[]){H, 0, D});
    } else if (!strcmp(name, "truncated")) {
        size_t n;
        char *all = read_all(path, &n);
        if (all)
            write_bytes(path, all, n - 13);
        free(all);
    } else if (!strcmp(name, "trailing")) { /* 8 bytes past the data its header describes */
        FILE *f = fopen(path, "ab");
        CHECK(f && fwrite("\0\0\0\0\0\0\xf0\x3f", 1, 8, f) == 8 && fclose(f) == 0);
    } else if (!strcmp(name, "int64")) {
        int64_t y[N] = {0};
        write_npy_header(path, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 20, 4), }",
                         y, sizeof y);
    } else if (!strcmp(name, "big-endian")) {
        write_npy_header(path, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 20, 4), }",
                         good, sizeof good);
    } else if (!strcmp(name, "float16")) {
        uint16_t y[N];
        for (int i = 0; i < N; i++)
            y[i] = vla_f16_bits((float)good[i]);
        write_npy_header(path, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 20, 4), }",
                         y, sizeof y);
    } else if (!strcmp(name, "2d")) {
        vla_npy_write(path, x, 2, (long[]){H * T, D});
    } else if (!strcmp(name, "wrong-d")) {
        for (int i = N; i < 2 * N; i++)
            x[i] = 0.5;
        vla_npy_write(path, x, 3, (long[]){H, T, D + 1});
    } else if (!strcmp(name, "heads")) {
        vla_npy_write(path, x, 3, (long[]){1, 2 * T, D});
    } else if (!strcmp(name, "steps")) {
        vla_npy_write(path, x, 3, (long[]){H, T - 1, D});
    } else if (!strcmp(name, "huge-shape")) {
        write_npy_header(path, "{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (2, 20000000000, 4), }", x, 64);
    } else if (!strcmp(name, "overflow-shape")) {
        write_npy_header(path, "{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (4611686018427387904, 20, 4), }", x, 64);
    } else if (!strcmp(name, "gate")) {
        for (int i = 0; i < N; i++)
            x[i] = 0.5;
        x[21] = 3;
        snprintf(path, sizeof path, "%s/g.npy", sub);
        vla_npy_write(path, x, 3, sh);
    }
}

static const bad_case bad_cases[] = {
    {"NaN in a trace", "nan", "--stream trace:%D", NULL, 2, "k.npy: NaN at [0, 3, 1]"},
    {"Inf in a trace", "inf", "--stream trace:%D", NULL, 2, "k.npy: Inf at [0, 3, 1]"},
    {"subnormal-only trace", "subnormal", "--stream trace:%D", NULL, 0, NULL},
    {"huge finite values (1e300)", "huge", "--stream trace:%D", NULL, 0,
     "warning: the state of the model is not finite"},
    {"empty file", "empty", "--stream trace:%D", NULL, 2, "k.npy: not a .npy file (bad magic)"},
    {"no steps (T = 0)", "no-steps", "--stream trace:%D", NULL, 2,
     "q.npy: shape (2, 0, 4) has no steps or heads"},
    {"truncated data", "truncated", "--stream trace:%D", NULL, 2,
     "k.npy: truncated data: 1280 bytes expected, 1267 present"},
    {"bytes after the data", "trailing", "--stream trace:%D", NULL, 2,
     "k.npy: 8 bytes after the data (1280 bytes expected, 1288 present)"},
    {"wrong dtype (int64)", "int64", "--stream trace:%D", NULL, 2, "unsupported dtype '<i8'"},
    {"big-endian", "big-endian", "--stream trace:%D", NULL, 2, "big-endian data ('>f8')"},
    {"float16 trace", "float16", "--stream trace:%D", NULL, 0, NULL},
    {"wrong shape (2-d)", "2d", "--stream trace:%D", NULL, 2, "shape (40, 4), expected (heads, T, 4)"},
    {"wrong last dimension", "wrong-d", "--stream trace:%D", NULL, 2, "expected dim 4"},
    {"mismatched heads", "heads", "--stream trace:%D", NULL, 2, "expected 2 heads (as q.npy)"},
    {"mismatched T", "steps", "--stream trace:%D", NULL, 2, "expected 20 steps (as q.npy)"},
    {"huge dimensions", "huge-shape", "--stream trace:%D", NULL, 2,
     "truncated data: 1280000000000 bytes expected"},
    {"overflowing dimensions", "overflow-shape", "--stream trace:%D", NULL, 2,
     "shape too large (its size overflows)"},
    {"gate outside [0, 1]", "gate", "--stream trace:%D --model delta", NULL, 2,
     "g.npy: 3 at [0, 5, 1] is outside [0, 1]"},
    {"more runs than heads", NULL, "--stream trace:%D/float16 --runs 3", NULL, 2,
     "--runs 3: the trace has only 2 heads"},
    {"missing trace", NULL, "--stream trace:%D/none", NULL, 2,
     "none/q.npy: cannot open: No such file or directory"},
    {"unknown model", NULL, "--model vla2", NULL, 2, "--model: unknown model 'vla2'"},
    {"unknown stream", NULL, "--stream gaussian", NULL, 2, "unknown stream 'gaussian'"},
    {"unknown precision", NULL, "--precision f8", NULL, 2, "--precision: unknown 'f8'"},
    {"unknown tracking", NULL, "--track lu", NULL, 2, "--track: unknown way 'lu'"},
    {"unknown constant", NULL, "--set lambda=1", NULL, 2, "--set lambda=1: 'lambda' is not a constant"},
    {"unknown option", NULL, "--step 10", NULL, 2, "unknown option '--step'"},
    {"d out of range", NULL, "--d 257", NULL, 2, "--d: '257' is not an integer in 1..256"},
    {"d zero", NULL, "--d 0", NULL, 2, "--d: '0' is not an integer in 1..256"},
    {"steps out of range", NULL, "--steps 1e10", NULL, 2, "--steps: '1e10' is not an integer"},
    {"runs out of range", NULL, "--runs 0", NULL, 2, "--runs: '0' is not an integer in 1..100000"},
    {"checkpoints out of range", NULL, "--checkpoints 0", NULL, 2, "--checkpoints: '0'"},
    {"negative seed", NULL, "--seed -1", NULL, 2, "--seed: '-1' is not an integer"},
    {"constant out of range", NULL, "--set beta=2", NULL, 2, "configuration is not valid"},
    {"NaN constant", NULL, "--set lambda0=nan", NULL, 2, "--set lambda0=nan: 'nan' is not finite"},
    {"negative stream scale", NULL, "--stream gauss:-1", NULL, 2, "the scale must be in (0, 1e300]"},
    {"stream rank above d", NULL, "--stream subspace:9,0.1", NULL, 2, "R = 9 must be in 1..d = 4"},
    {"huge stream scale", NULL, "--stream gauss:1e300", NULL, 0,
     "warning: the state of the model is not finite"},
    {"chol with a nudge", NULL, "--track chol", NULL, 2, "set nudge=off"},
    {"solve with a nudge", NULL, "--track solve", NULL, 2, "--track solve: solve, cg and cheb keep M"},
    {"a solver on a model without A", NULL, "--model la --track cg:4", NULL, 2,
     "--track cg:4: solve, cg and cheb solve M y = x with M = A^-1: use a model with A"},
    {"K zero", NULL, "--track cg:0", NULL, 2, "--track cg:0: K is an integer in 1..1000"},
    {"K too large", NULL, "--track cheb:1001", NULL, 2, "--track cheb:1001: K is an integer in 1..1000"},
    {"K not an integer", NULL, "--track cg:2.5", NULL, 2, "--track cg:2.5: K is an integer"},
    {"a tolerance for cheb", NULL, "--track cheb:1e-3", NULL, 2, "--track cheb:1e-3: K is"},
    {"a parameter for sm", NULL, "--track sm:3", NULL, 2, "--track: unknown way 'sm:3'"},
    {"gamma above 1", NULL, "--set gamma=1.5", NULL, 2,
     "--set gamma=1.5: gamma, the forgetting factor of M, is in (0, 1]"},
    {"gamma zero", NULL, "--set gamma=0", NULL, 2, "gamma, the forgetting factor of M, is in (0, 1]"},
    {"gamma on a model without A", NULL, "--model la --set gamma=0.9", NULL, 2,
     "--set gamma=0.9: la has no A"},
    {"a failing Cholesky", NULL,
     "--model rls --precision bf16 --track solve --stream subspace:1,0 --set lambda0=1e-3 --steps 200",
     NULL, 0, "warning: the solver (solve) failed in 1 of 1 runs, first in head 0 at step"},
    /* a setting the run does not read (vla_setting_read), and the ones it does */
    {"tri in the seq form", NULL, "--model gdn --set tri=neumann", NULL, 2,
     "--set tri=neumann: gdn in --form seq with --track sm: tri is read only by the chunk form"},
    {"stage in the scan form", NULL, "--model gdn --form scan --set stage=off", NULL, 2,
     "stage is read only by the chunk form (chunk:C, C > 1) of la, delta, rls, vla3, gdn"},
    {"anchor in la's chunk", NULL, "--model la --form chunk:4 --set anchor=first", NULL, 2,
     "anchor is read only by the chunk form (chunk:C, C > 1) of the models with decays"},
    {"tri in la's chunk", NULL, "--model la --form chunk:4 --set tri=neumann", NULL, 2,
     "whose chunk solves a UT transform"},
    {"tri and anchor in gdn's chunk", NULL,
     "--model gdn --form chunk:4 --set tri=neumann --set anchor=first --set anchor_block=2", NULL,
     0, NULL},
    {"stage in la's chunk", NULL, "--model la --form chunk:4 --set stage=off", NULL, 0, NULL},
    {"scale for la", NULL, "--model la --set scale=0.5", NULL, 2, "the gated family, gdn, kda"},
    {"keynorm for gdn", NULL, "--model gdn --set keynorm=off", NULL, 2,
     "keynorm is read only by delta"},
    {"clamp_on for vla3", NULL, "--model vla3 --set clamp_on=on", NULL, 2,
     "is read only by vla1, whose norms are clamped"},
    {"sr_seed with sm", NULL, "--set sr_seed=3", NULL, 2, "read only by --track sr"},
    {"chol for gdn", NULL, "--model gdn --track chol", NULL, 2,
     "--track chol: gdn has no A, and chol changes only how A is tracked"},
    {"comp for gdn", NULL, "--model gdn --track comp", NULL, 0, NULL},
    {"VLA_SIMD junk", NULL, "", "VLA_SIMD=junk", 2, "VLA_SIMD='junk' is not avx2 or off"},
    {"VLA_LANES junk", NULL, "", "VLA_LANES=avx512", 2, "VLA_LANES='avx512' is not avx2"},
    {"a solver's NaN in words", NULL,
     "--model rls --precision f16 --track cg:4 --stream gauss:1e3 --ref none", NULL, 0,
     "the residual ||r|| / ||x|| is not a number (NaN"},
    {"--resume to stdout", NULL, "--resume", NULL, 2, "--resume needs --out FILE"},
    {"bad VLA_CHECKPOINT_SECONDS", NULL, "--out %D/x.dat", "VLA_CHECKPOINT_SECONDS=soon", 2,
     "VLA_CHECKPOINT_SECONDS='soon' is not a number of seconds"},
    {"unwritable directory", NULL, "--out /proc/vla-x.dat", NULL, 1, "cannot write /proc/vla-x.dat"},
    {"missing directory", NULL, "--out %D/none/x.dat", NULL, 1, "none/x.dat"},
    {"full device", NULL, "--out /dev/full", NULL, 1, "writing /dev/full failed"},
};

TEST(hardening_bad_inputs)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    for (size_t c = 0; c < sizeof bad_cases / sizeof bad_cases[0]; c++) {
        const bad_case *b = &bad_cases[c];
        char tdir[400];
        snprintf(tdir, sizeof tdir, "%s/%s", dir, b->trace ? b->trace : "");
        if (b->trace)
            make_bad_trace(dir, b->trace);
        else
            make_bad_trace(dir, "float16"); /* a good trace for the cases that name one */
        /* the arguments, %D replaced, after the common small run */
        char args[800], *argv[40];
        int argc = 0;
        argv[argc++] = (char *)p;
        static char *common[] = {"--d", "4", "--steps", "20", "--checkpoints", "2"};
        for (int i = 0; i < 6; i++)
            argv[argc++] = common[i];
        const char *src = b->args;
        char *o = args;
        while (*src && o < args + sizeof args - 300) {
            if (src[0] == '%' && src[1] == 'D') {
                o += sprintf(o, "%s", b->trace ? tdir : dir);
                src += 2;
            } else {
                *o++ = *src++;
            }
        }
        *o = 0;
        for (char *tok = strtok(args, " "); tok && argc < 38; tok = strtok(NULL, " "))
            argv[argc++] = tok;
        argv[argc] = NULL;
        char *env[] = {(char *)b->env, NULL};
        char msg[1000];
        int st = run(NULL, argv, b->env ? env : NULL, msg, sizeof msg, 20);
        int lines = 0;
        for (char *q = msg; *q; q++)
            lines += *q == '\n';
        CHECK_MSG(st == b->status, "%s: status %d, expected %d ('%s')", b->what, st, b->status, msg);
        if (b->want)
            CHECK_MSG(strstr(msg, b->want) && lines == 1, "%s: '%s' lacks '%s' or is not one line",
                      b->what, msg, b->want);
        else
            CHECK_MSG(!msg[0], "%s: unexpected message '%s'", b->what, msg);
        if (getenv("VLA_TEST_VERBOSE")) /* docs/checking.md's table is made from this */
            printf("    | %s | `%s` | %d | %.*s |\n", b->what, b->args, st,
                   (int)strcspn(msg, "\n"), msg);
    }
    remove_tree(dir);
}

/* A program of several forms or models takes a --set that one of them reads, and refuses one
 * that none does (vla_cli_sets_read) */
TEST(hardening_sets_read_by_one_of_the_forms)
{
    const char *p = program("vla-forms");
    if (!p) {
        vla_test_skip("bin/vla-forms not built");
        return;
    }
    static const struct {
        const char *args;
        int status;
        const char *want;
    } cases[] = {
        {"--model gdn --forms seq,chunk:4 --set tri=neumann", 0, NULL},
        {"--model gdn --forms seq,scan --set tri=neumann", 2,
         "--set tri=neumann: none of the 2 configurations run reads it (the first: gdn in --form "
         "seq with --track sm: tri is read only by"},
        {"--model la --forms chunk:4,chunk:8 --set anchor=first", 2, "none of the 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        int st = vla_test_sh(&out, "%s --what sweep --stream gauss --d 4 --steps 8 --runs 1 "
                                   "--precisions f32 %s --out - 2>&1 >/dev/null",
                             p, cases[i].args);
        CHECK_MSG(st == cases[i].status && (cases[i].want ? out && strstr(out, cases[i].want) != NULL
                                                          : !out || !*out),
                  "vla-forms %s: status %d, '%s'", cases[i].args, st, out ? out : "");
        free(out);
    }
}

/* ---- the programs: kill -9, SIGINT, SIGTERM, --resume ---- */

/* a run of a few tenths of a second that checkpoints every 1024 steps; the second case tracks A
 * with stochastic rounding, whose random words must resume where they stopped */
static const char *const resume_runs[][20] = {
    {"--model", "vla1", "--stream", "gauss", "--d", "12", "--steps", "20000", "--runs", "3",
     "--checkpoints", "20", "--precision", "f32", "--ref", "f64", NULL},
    {"--model", "vla3", "--stream", "lmlike", "--d", "16", "--steps", "16000", "--runs", "2",
     "--checkpoints", "20", "--precision", "f16-f32", "--track", "sr", NULL},
};

static int resume_argv(char **argv, const char *p, int which, const char *out, int resume)
{
    int n = 0;
    argv[n++] = (char *)p;
    for (int i = 0; resume_runs[which][i]; i++)
        argv[n++] = (char *)resume_runs[which][i];
    argv[n++] = "--out";
    argv[n++] = (char *)out;
    if (resume)
        argv[n++] = "--resume";
    argv[n] = NULL;
    return n;
}

static uint64_t rng_state;
static double uniform01(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng_state >> 11) * 0x1p-53;
}

/* files in dir whose name contains ".ckpt": checkpoints and their temporaries */
static int count_ckpts(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".ckpt") != NULL;
    if (d)
        closedir(d);
    return n;
}

TEST_SLOW(hardening_kill_resume)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], ref[400], out[400], msg[1000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    rng_state = (uint64_t)time(NULL);
    uint64_t seed = rng_state;
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    int landed = 0, from_ckpt = 0; /* kills before the end; resumes that found a checkpoint */
    for (int which = 0; which < 2; which++) {
        char *argv[40];
        snprintf(ref, sizeof ref, "%s/ref%d.dat", dir, which);
        resume_argv(argv, p, which, ref, 0);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        double wall = seconds_since(&t0);
        CHECK_MSG(st == 0, "reference run %d: status %d '%s'", which, st, msg);
        char *want = table_body(ref);
        if (st || !want) {
            free(want);
            continue;
        }
        for (int round = 0; round < 3; round++) {
            snprintf(out, sizeof out, "%s/run%d-%d.dat", dir, which, round);
            int kills = 0;
            /* one or two kills at random moments, the first without --resume, then --resume
             * until the run completes */
            int nkill = 1 + round % 2;
            for (int attempt = 0; attempt < 20; attempt++) {
                resume_argv(argv, p, which, out, attempt > 0);
                char ck[450];
                snprintf(ck, sizeof ck, "%s.ckpt", out);
                from_ckpt += attempt > 0 && exists(ck);
                child ch;
                if (spawn(&ch, NULL, argv, env)) {
                    CHECK_MSG(0, "fork: %s", strerror(errno));
                    break;
                }
                if (kills < nkill) {
                    double delay = (0.05 + 0.9 * uniform01()) * wall;
                    nanosleep(&(struct timespec){(time_t)delay, (long)(1e9 * (delay - (long)delay))},
                              NULL);
                    kill(ch.pid, SIGKILL);
                    kills++;
                }
                st = finish(&ch, 60);
                unlink(ch.err);
                if (st == 128 + SIGKILL) {
                    landed++;
                    /* killed before the end: no table may stand at the final path, unless the
                     * kill came after its rename, when it is the whole table */
                    char *part = exists(out) ? table_body(out) : NULL;
                    CHECK_MSG(!exists(out) || (part && !strcmp(part, want)),
                              "seed %llu: an incomplete %s stands after kill -9",
                              (unsigned long long)seed, out);
                    free(part);
                    continue;
                }
                CHECK_MSG(st == 0, "seed %llu, run %d round %d: status %d",
                          (unsigned long long)seed, which, round, st);
                break;
            }
            char *got = table_body(out);
            CHECK_MSG(got && !strcmp(got, want),
                      "seed %llu, run %d round %d: the resumed table differs from an "
                      "uninterrupted run (%s vs %s)",
                      (unsigned long long)seed, which, round, out, ref);
            free(got);
        }
        free(want);
    }
    /* a test whose kills all came too late tested nothing */
    CHECK_MSG(landed >= 3 && from_ckpt >= 2, "seed %llu: %d kills landed, %d resumes from a checkpoint",
              (unsigned long long)seed, landed, from_ckpt);
    if (getenv("VLA_TEST_VERBOSE"))
        printf("    kill -9: %d kills landed, %d resumes from a checkpoint, 6 tables identical\n",
               landed, from_ckpt);
    CHECK_MSG(count_ckpts(dir) == 0, "checkpoint files left after complete runs");
    remove_tree(dir);
}

TEST_SLOW(hardening_signals)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], ref[400], out[400], ck[450], msg[1000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char *argv[40];
    snprintf(ref, sizeof ref, "%s/ref.dat", dir);
    resume_argv(argv, p, 0, ref, 0);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 0, "reference run: status %d '%s'", st, msg);
    char *want = table_body(ref);
    static const int sigs[2] = {SIGINT, SIGTERM};
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    for (int i = 0; want && i < 2; i++) {
        snprintf(out, sizeof out, "%s/sig%d.dat", dir, sigs[i]);
        snprintf(ck, sizeof ck, "%s.ckpt", out);
        resume_argv(argv, p, 0, out, 0);
        child ch;
        if (spawn(&ch, NULL, argv, env))
            break;
        /* signal once the run is under way: its first checkpoint exists */
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (!exists(ck) && seconds_since(&t0) < 20)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        kill(ch.pid, sigs[i]);
        st = finish(&ch, 30);
        char *text = read_all(ch.err, NULL);
        unlink(ch.err);
        char want_msg[100];
        snprintf(want_msg, sizeof want_msg, "interrupted (signal %d); checkpoints written beside",
                 sigs[i]);
        CHECK_MSG(st == 3 && text && strstr(text, want_msg) && strstr(text, "--resume"),
                  "signal %d: status %d, '%s'", sigs[i], st, text ? text : "");
        free(text);
        CHECK_MSG(!exists(out), "signal %d: a table stands at %s", sigs[i], out);
        resume_argv(argv, p, 0, out, 1);
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        char *got = table_body(out);
        CHECK_MSG(st == 0 && got && !strcmp(got, want),
                  "signal %d: resumed run status %d, table %s", sigs[i], st,
                  got && want && !strcmp(got, want) ? "equal" : "differs");
        free(got);
    }
    free(want);
    CHECK_MSG(count_ckpts(dir) == 0, "checkpoint files left after complete runs");
    remove_tree(dir);
}

/* ---- the programs: a full disk and an unwritable directory ---- */

/* no file in dir at all: neither a table nor its temporary */
static int empty_dir(const char *dir, char *first, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && n++ == 0)
            snprintf(first, len, "%s", e->d_name);
    if (d)
        closedir(d);
    return n == 0;
}

TEST_SLOW(hardening_full_disk)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], out[400], msg[1000], first[256] = "";
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") != 0) {
        rmdir(dir);
        vla_test_skip("cannot mount a small tmpfs (needs root); /dev/full is tested in "
                      "hardening_bad_inputs");
        return;
    }
    /* a table of some 5000 rows, about 500 kB, onto 64 kB */
    snprintf(out, sizeof out, "%s/big.dat", dir);
    char *argv[] = {(char *)p, "--d", "4", "--steps", "100000", "--checkpoints", "1000",
                    "--out", out, NULL};
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char want[500];
    snprintf(want, sizeof want, "writing %s failed", out);
    CHECK_MSG(st == 1 && strstr(msg, want), "full disk: status %d, '%s'", st, msg);
    CHECK_MSG(empty_dir(dir, first, sizeof first), "full disk: %s left behind", first);
    /* a read-only file system: the directory cannot take the table */
    umount2(dir, MNT_DETACH);
    if (mount("tmpfs", dir, "tmpfs", MS_RDONLY, "size=64k") == 0) {
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        snprintf(want, sizeof want, "cannot write %s", out);
        CHECK_MSG(st == 1 && strstr(msg, want), "read-only: status %d, '%s'", st, msg);
        CHECK_MSG(empty_dir(dir, first, sizeof first), "read-only: %s left behind", first);
        umount2(dir, MNT_DETACH);
    }
    rmdir(dir);
}

/* vla-plot reads a columns line of any length (a table of 200,001 columns: its last column was
 * "missing", the line cut at 2048 bytes), and on a full disk exits 1, leaving no figure: gnuplot
 * exits 0 with its PNG cut short (0 or 8192 of 30940 bytes), and vla-plot used to rename that into
 * place and exit 0. The full disk needs root (a 64 kB tmpfs, filled but for 16 kB). */
TEST_SLOW(hardening_plot_wide_table_and_full_disk)
{
    const char *plot, *sn;
    char dir[256], msg[1000], path[400], out[400], first[256] = "";
    if (!begin(dir, sizeof dir, 2, "vla-plot", &plot, "vla-statenorm", &sn))
        return;
    snprintf(path, sizeof path, "%s/wide.dat", dir);
    FILE *f = fopen(path, "w");
    enum { NC = 200001 };
    CHECK(f && fprintf(f, "# program: wide\n# columns: t") > 0);
    for (int i = 1; f && i < NC; i++)
        fprintf(f, " c%d", i);
    for (int r = 0; f && r < 3; r++)
        for (int i = 0; i < NC; i++)
            fprintf(f, "%s%d", i ? " " : "\n", r + 1 + i % 7);
    CHECK(f && fputc('\n', f) != EOF && fclose(f) == 0);
    char *a0[] = {(char *)plot, "wide.dat", "c200000", "--out", "wide.png", NULL};
    int st = run(dir, a0, NULL, msg, sizeof msg, 120);
    snprintf(path, sizeof path, "%s/wide.png", dir);
    CHECK_MSG(st == 0 && exists(path), "200,001 columns: status %d, '%s'", st, msg);
    char *a1[] = {(char *)plot, "wide.dat", "c200001", NULL};
    st = run(dir, a1, NULL, msg, sizeof msg, 120);
    CHECK_MSG(st == 2 && strstr(msg, "no column 'c200001'") && strstr(msg, "(200001 columns)") &&
                  strlen(msg) < 600,
              "a column not there: status %d, '%.300s'", st, msg);
    /* the full disk */
    char *a2[] = {(char *)sn, "--d", "4", "--steps", "2000", "--runs", "4", "--out", "sn.dat", NULL};
    CHECK_EQ_INT(run(dir, a2, NULL, msg, sizeof msg, 60), 0);
    snprintf(path, sizeof path, "%s/full", dir);
    CHECK(mkdir(path, 0755) == 0);
    if (mount("tmpfs", path, "tmpfs", 0, "size=64k") != 0) {
        vla_test_skip("cannot mount a small tmpfs (needs root)");
        remove_tree(dir);
        return;
    }
    snprintf(path, sizeof path, "%s/full/filler", dir);
    char *zeros = calloc(1, 48 << 10);
    write_bytes(path, zeros, 48 << 10);
    free(zeros);
    snprintf(out, sizeof out, "%s/full/sn.png", dir);
    char *a3[] = {(char *)plot, "sn.dat", "s_fro", "o_norm", "--out", out, NULL};
    st = run(dir, a3, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 1 && strstr(msg, "cannot write") && !exists(out),
              "a full disk: status %d, '%s', the figure %s", st, msg, exists(out) ? "left" : "none");
    unlink(path);
    snprintf(path, sizeof path, "%s/full", dir);
    CHECK_MSG(empty_dir(path, first, sizeof first), "a full disk: %s left behind", first);
    umount2(path, MNT_DETACH);
    remove_tree(dir);
}

/* Past the file-size limit (ulimit -f) a program's write fails (EFBIG) and is said like a full
 * disk, exit 1, no table or temporary left; it used to die of SIGXFSZ, status 153, with no word,
 * its OUT.tmp.PID left. vla-sweep, vla-regress and vla-plot ignore SIGXFSZ the same way. */
TEST_SLOW(hardening_file_size_limit)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], out[400], msg[1000], first[256] = "";
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(out, sizeof out, "%s/big.dat", dir);
    /* a table of some 500 kB under a limit of 16 blocks (8 or 16 kB, as the shell counts) */
    char *argv[] = {"/bin/sh", "-c", "ulimit -f 16 && exec \"$0\" \"$@\"", (char *)p, "--d", "4",
                    "--steps", "100000", "--checkpoints", "1000", "--out", out, NULL};
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char want[500];
    snprintf(want, sizeof want, "writing %s failed: File too large", out);
    CHECK_MSG(st == 1 && strstr(msg, want), "ulimit -f: status %d, '%s'", st, msg);
    CHECK_MSG(empty_dir(dir, first, sizeof first), "ulimit -f: %s left behind", first);
    rmdir(dir);
}

/* Interrupts run 0 of resume_runs (with `extra` arguments) by SIGINT once its first checkpoint
 * is written; returns the exit status. */
static int interrupted_run(const char *p, const char *out, const char *extra1, const char *extra2)
{
    char *argv[40], ck[450];
    int n = resume_argv(argv, p, 0, out, 0);
    if (extra1) {
        argv[n++] = (char *)extra1;
        argv[n++] = (char *)extra2;
        argv[n] = NULL;
    }
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    child ch;
    if (spawn(&ch, NULL, argv, env))
        return -2;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!exists(ck) && seconds_since(&t0) < 20)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    kill(ch.pid, SIGINT);
    int st = finish(&ch, 30);
    unlink(ch.err);
    return st;
}

/* A checkpoint that does not belong to the command is not resumed from: one written with another
 * seed (it used to be spliced into the new seed's table) is refused (2) and kept, and a
 * truncated or garbled one is said and its run starts over, from a clean accumulator, giving the
 * uninterrupted run's table. test_reliability.c tries every field. */
TEST_SLOW(hardening_resume_mismatch)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], ref[400], out[400], ck[450], msg[1000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char *argv[40];
    snprintf(ref, sizeof ref, "%s/ref.dat", dir);
    int n = resume_argv(argv, p, 0, ref, 0);
    argv[n++] = "--seed";
    argv[n++] = "2";
    argv[n] = NULL;
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want, "reference run: status %d '%s'", st, msg);
    for (int kind = 0; want && kind < 3; kind++) {
        snprintf(out, sizeof out, "%s/m%d.dat", dir, kind);
        snprintf(ck, sizeof ck, "%s.ckpt", out);
        /* kind 0: the checkpoints are of seed 1; kinds 1, 2: of seed 2, then damaged */
        st = interrupted_run(p, out, "--seed", kind == 0 ? "1" : "2");
        CHECK_MSG(st == 3 && exists(ck), "kind %d: interrupted run status %d", kind, st);
        size_t len;
        char *bytes = read_all(ck, &len);
        if (kind == 1 && bytes) /* cut inside the accumulator or the rows */
            write_bytes(ck, bytes, len - 100);
        if (kind == 2 && bytes) {
            for (size_t i = 16; i < len; i += 7)
                bytes[i] ^= 0x5a;
            write_bytes(ck, bytes, len);
        }
        free(bytes);
        n = resume_argv(argv, p, 0, out, 1);
        argv[n++] = "--seed";
        argv[n++] = "2";
        argv[n] = NULL;
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        if (kind == 0) {
            CHECK_MSG(st == 2 && strstr(msg, "(--seed)") && exists(ck) && !exists(out),
                      "another seed: status %d '%s'", st, msg);
            continue;
        }
        char *got = table_body(out);
        CHECK_MSG(st == 0 && got && !strcmp(got, want), "kind %d: status %d '%s', table %s", kind,
                  st, msg, got && !strcmp(got, want) ? "equal" : "differs");
        free(got);
    }
    free(want);
    remove_tree(dir);
}

/* vla_dat_open and vla_dat_close leave the reason of a failure in errno, so that a program can
 * say "No space left on device" rather than only "input/output error". */
TEST(hardening_dat_errno)
{
    vla_dat *f = NULL;
    char *argv[] = {"test", NULL};
    errno = 0;
    int rc = vla_dat_open(&f, "/nonexistent-dir/x.dat", 1, argv);
    CHECK_MSG(rc == VLA_EIO && errno == ENOENT, "open: rc %d, errno %d", rc, errno);
    if (access("/dev/full", W_OK) == 0 && vla_dat_open(&f, "/dev/full", 1, argv) == 0) {
        vla_dat_columns(f, "t x");
        for (int i = 0; i < 2000; i++) /* past stdio's buffer */
            vla_dat_row(f, (double[]){i, 0.1 * i}, 2);
        errno = 0;
        rc = vla_dat_close(f);
        CHECK_MSG(rc == VLA_EIO && errno == ENOSPC, "/dev/full: rc %d, errno %d", rc, errno);
    }
}

/* A table that cannot be written at the end (here a directory appears at its path during the
 * run, so the rename fails) must not take the checkpoints with it: hours of work would be lost.
 * The run says so and exits 1; --resume then writes the table from the checkpoints. */
TEST_SLOW(hardening_table_failure_keeps_checkpoints)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], ref[400], out[400], ck[450], msg[1000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char *argv[40];
    snprintf(ref, sizeof ref, "%s/ref.dat", dir);
    resume_argv(argv, p, 0, ref, 0);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want, "reference run: status %d '%s'", st, msg);
    snprintf(out, sizeof out, "%s/t.dat", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    resume_argv(argv, p, 0, out, 0);
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    child ch;
    if (want && spawn(&ch, NULL, argv, env) == 0) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (!exists(ck) && seconds_since(&t0) < 20)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        CHECK_MSG(mkdir(out, 0755) == 0, "mkdir %s: %s", out, strerror(errno));
        st = finish(&ch, 60);
        char *text = read_all(ch.err, NULL);
        unlink(ch.err);
        char w[500];
        snprintf(w, sizeof w, "writing %s failed", out);
        CHECK_MSG(st == 1 && text && strstr(text, w), "status %d, '%s'", st, text ? text : "");
        free(text);
        CHECK_MSG(exists(ck), "the checkpoints went with the failed table");
        rmdir(out);
        resume_argv(argv, p, 0, out, 1);
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        char *got = table_body(out);
        CHECK_MSG(st == 0 && got && !strcmp(got, want), "resume: status %d '%s', table %s", st,
                  msg, got && !strcmp(got, want) ? "equal" : "differs");
        CHECK_MSG(!exists(ck), "checkpoints left after the table was written");
        free(got);
    }
    free(want);
    remove_tree(dir);
}

/* vla-heatmap steps its run itself, not through the driver, and once wrote inf and nan into its
 * matrices without a word. Now it checks the state at each snapshot with the driver's check and
 * says so in the driver's words (vla_cli_nonfinite), with the run and the first snapshot step,
 * and marks the table's header with a '# nonfinite:' line of the same words; a finite run says
 * nothing. */
TEST(hardening_heatmap_nonfinite)
{
    const char *p = program("vla-heatmap");
    if (!p) {
        vla_test_skip("bin/vla-heatmap not built");
        return;
    }
    char dir[256], out[400], msg[1000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(out, sizeof out, "%s/h.dat", dir);
    static const struct {
        const char *stream, *at;
        long step; /* the first non-finite snapshot; 0: the run stays finite */
    } cases[] = {
        {"gauss:1e300", "1,2", 1},  /* overflows at the first step */
        {"gauss:1e300", "3,5", 3},  /* ... said at the first snapshot, where it was checked */
        {"lmlike", "1,10", 0},      /* finite: no warning, no mark */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {(char *)p, "--d", "4", "--stream", (char *)cases[i].stream, "--at",
                        (char *)cases[i].at, "--out", out, NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 20);
        char *table = read_all(out, NULL);
        const char *what = cases[i].stream;
        CHECK_MSG(st == 0 && table, "%s --at %s: status %d ('%s')", what, cases[i].at, st, msg);
        if (cases[i].step) {
            char want[300], mark[320];
            snprintf(want, sizeof want, "vla-heatmap: warning: the state of the model is not "
                     "finite (Inf or NaN) in 1 of 1 runs, first in head 0 at step %ld (checked at "
                     "the table's steps); its rows carry inf or nan from there on\n", cases[i].step);
            snprintf(mark, sizeof mark, "\n# nonfinite: %s", want + strlen("vla-heatmap: warning: "));
            CHECK_MSG(!strcmp(msg, want), "%s --at %s: stderr '%s', expected '%s'", what,
                      cases[i].at, msg, want);
            CHECK_MSG(table && strstr(table, mark), "%s --at %s: the table's header lacks '%s'",
                      what, cases[i].at, mark + 1);
            /* the mark sits in the header, before the columns line and the rows */
            CHECK_MSG(table && strstr(table, mark) && strstr(table, "# columns:") &&
                          strstr(table, mark) < strstr(table, "# columns:"),
                      "%s: '# nonfinite:' is not in the header", what);
            CHECK_MSG(table && (strstr(table, " nan ") || strstr(table, " inf ")),
                      "%s: no inf or nan in the rows", what);
        } else {
            CHECK_MSG(!msg[0], "%s: unexpected message '%s'", what, msg);
            CHECK_MSG(table && !strstr(table, "# nonfinite:"), "%s: a finite run is marked", what);
        }
        free(table);
        unlink(out);
    }
    remove_tree(dir);
}

/* The non-finite warning names the run that went non-finite first, as the summary does: it named
 * the lowest-numbered one, with its own step, while the summary named another (vla-drift: "head 0
 * at step 52480" beside "first head 1, t = 43648"). la in binary16 on gauss:30 overflows in every
 * head, head 1 first (at t = 3; head 0 at t = 5 or later): both lines must name head 1 at t = 3. */
TEST(hardening_nonfinite_names_the_first_run)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char dir[256], out[400], msg[2000];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(out, sizeof out, "%s/n.dat", dir);
    char *argv[] = {(char *)p, "--model", "la", "--precision", "f16", "--stream", "gauss:30",
                    "--d", "4", "--steps", "100", "--runs", "4", "--checkpoints", "1000",
                    "--ref", "none", "--out", out, NULL};
    int st = run(NULL, argv, NULL, msg, sizeof msg, 20);
    char *table = read_all(out, NULL); /* the summary: the table's header (a quiet one) */
    const char *w = strstr(msg, "first in head "), *s = table ? strstr(table, "(first head ") : NULL;
    int wh = -1, sh = -2;
    long wt = -1, stt = -2;
    CHECK_MSG(st == 0 && w && s && sscanf(w, "first in head %d at step %ld", &wh, &wt) == 2 &&
                  sscanf(s, "(first head %d, t = %ld)", &sh, &stt) == 2,
              "status %d, stderr '%s'", st, msg);
    CHECK_MSG(wh == sh && wt == stt && wh == 1 && wt == 3,
              "the warning names head %d at step %ld, the summary head %d at t = %ld (want head 1 "
              "at 3 in both): '%s'", wh, wt, sh, stt, msg);
    free(table);
    remove_tree(dir);
}

/* argv's standard output into *out (NUL-terminated, malloc'd), its stderr into msg; the status */
static int run_capture(char *const argv[], char **out, char *msg, size_t len, double timeout)
{
    char path[300];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/vla-hardening-out.%ld", base ? base : "/tmp", (long)getpid());
    child ch;
    snprintf(ch.err, sizeof ch.err, "%s.err", path);
    fflush(NULL);
    ch.pid = fork();
    if (ch.pid < 0)
        return -2;
    if (ch.pid == 0) {
        int o = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            e = open(ch.err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = finish(&ch, timeout);
    char *text = read_all(ch.err, NULL);
    snprintf(msg, len, "%s", text ? text : "");
    free(text);
    *out = read_all(path, NULL);
    unlink(ch.err);
    unlink(path);
    return st;
}

/* vla-regress parses its own options (it is linked without cli.c), and had no --man: make man
 * then fell back to its --help verbatim. Its --man is a page like the others': every option of
 * its --help as a tagged paragraph, the report's columns, the exit codes, the files it reads and
 * writes, an example; and it prints the page at once, without running the suite. */
TEST(hardening_regress_man)
{
    const char *p = program("vla-regress");
    if (!p) {
        vla_test_skip("bin/vla-regress not built");
        return;
    }
    char msg[1000], *help = NULL, *page = NULL;
    char *hargv[] = {(char *)p, "--help", NULL}, *margv[] = {(char *)p, "--man", NULL};
    int st = run_capture(hargv, &help, msg, sizeof msg, 10);
    CHECK_MSG(st == 0 && help && strstr(help, "Usage: vla-regress"), "--help: status %d '%s'", st, msg);
    st = run_capture(margv, &page, msg, sizeof msg, 10);
    CHECK_MSG(st == 0 && page && !msg[0], "--man: status %d, stderr '%s'", st, msg);
    if (!help || !page) {
        free(help);
        free(page);
        return;
    }
    CHECK_MSG(strstr(page, "\n.TH VLA\\-REGRESS 1 ") && strstr(page, "\nvla\\-regress \\- "),
              "--man: no .TH line or NAME line");
    static const char *const sections[] = {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COLUMNS",
                                           "\"EXIT STATUS\"", "ENVIRONMENT", "FILES", "EXAMPLES",
                                           "\"SEE ALSO\""};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n.SH %s\n", sections[i]);
        CHECK_MSG(strstr(page, want), "--man: no section %s", sections[i]);
    }
    /* every option --help lists is a tagged paragraph of the page, and each one this test knows
     * of is listed (so that neither text loses one unseen) */
    static const char *const known[] = {"only", "backend", "baseline", "margin", "form", "bits",
                                        "update", "trace", "changed", "list", "help", "version"};
    int nhelp = 0;
    for (const char *l = help; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
        if (strncmp(l, "  --", 4))
            continue;
        char name[64], want[160], *w = want;
        size_t n = strspn(l + 4, "abcdefghijklmnopqrstuvwxyz0123456789-");
        snprintf(name, sizeof name, "%.*s", (int)n, l + 4);
        w += sprintf(w, ".TP\n\\fB\\-\\-");
        for (const char *c = name; *c; c++)
            w += *c == '-' ? sprintf(w, "\\-") : sprintf(w, "%c", *c);
        CHECK_MSG(strstr(page, want), "--man does not describe --%s ('%s')", name, want);
        nhelp++;
    }
    CHECK_MSG(nhelp == (int)(sizeof known / sizeof known[0]), "--help lists %d options, expected %d",
              nhelp, (int)(sizeof known / sizeof known[0]));
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char h[64], m[64];
        snprintf(h, sizeof h, "\n  --%s", known[i]);
        snprintf(m, sizeof m, ".TP\n\\fB\\-\\-%s\\fR", known[i]);
        CHECK_MSG(strstr(help, h) && strstr(page, m), "--%s: in --help %d, in --man %d", known[i],
                  strstr(help, h) != NULL, strstr(page, m) != NULL);
    }
    /* the exit codes, the files, the example */
    for (int code = 0; code <= 2; code++) {
        char want[32];
        snprintf(want, sizeof want, ".TP\n\\fB%d\\fR\n", code);
        CHECK_MSG(strstr(page, want), "--man: exit status %d not described", code);
    }
    CHECK_MSG(strstr(page, "\\fBtests/regress/baseline.tsv\\fR") && strstr(page, "lmtrace\\-seed7") &&
                  strstr(page, "FILE.tmp"),
              "--man: the baseline and the trace are not among the files");
    CHECK_MSG(strstr(page, "# suite: d="), "--man: the suite line the baseline must carry is missing");
    CHECK_MSG(strstr(page, "\n.SH EXAMPLES\n.RS 4\n.nf\nbin/vla\\-regress"), "--man: no example");
    free(help);
    free(page);
}

/* t without its lines "# command", "# date" and "# backend" (in place) */
static char *strip_run_lines(char *t)
{
    if (!t)
        return NULL;
    char *w = t;
    for (const char *r = t; *r;) {
        const char *nl = strchr(r, '\n');
        size_t n = nl ? (size_t)(nl - r + 1) : strlen(r);
        if (strncmp(r, "# command", 9) && strncmp(r, "# date", 6) && strncmp(r, "# backend", 9)) {
            memmove(w, r, n);
            w += n;
        }
        r += n;
    }
    *w = 0;
    return t;
}
/* Every program drives the engine, so every backend gives the cpu's table byte for byte but the
 * header lines that name the command, date and backend: the lanes (19 heads: a full group and a
 * partial one) and the GPU's kernels emulated on host threads, for statenorm (with its f64
 * reference as a second batch on the backend, and beside an exact one on the CPU), drift and
 * jacobian (which measure every step, through the engine's taps), recall and heatmap. */
TEST_SLOW(programs_same_table_on_every_backend)
{
    const char *progs[] = {"vla-statenorm", "vla-drift", "vla-jacobian", "vla-recall",
                           "vla-heatmap"};
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        if (!program(progs[i])) {
            vla_test_skip("bin/ not built");
            return;
        }
    char msg[1000], *a = NULL, *b = NULL;
    vla_error why;
    int lanes = vla_cuda_probe_target(VLA_CUDA_LANES, &why);
    static const char *const cases[][16] = {
        {"vla-statenorm", "--model", "vla3", "--precision", "f16", "--stream", "lmlike", "--ref", "none", "--runs", "19", "--steps", "1500"},
        {"vla-statenorm", "--model", "rls", "--precision", "f32", "--track", "chol", "--stream", "gauss", "--runs", "19", "--steps", "1500"},
        {"vla-statenorm", "--model", "vla3", "--precision", "bf16-f32", "--track", "sm-sym", "--ref", "f64", "--runs", "19", "--steps", "1500"},
        {"vla-statenorm", "--model", "delta", "--precision", "bf16", "--stream", "mqar:8,3", "--ref", "exact", "--runs", "5"},
        {"vla-drift", "--model", "vla3", "--precision", "f16", "--set", "nudge=off", "--ref", "f64", "--runs", "3", "--steps", "800"},
        {"vla-drift", "--model", "vla1", "--precision", "f32", "--track", "joseph", "--ref", "exact", "--runs", "2", "--steps", "300"},
        {"vla-jacobian", "--model", "vla3", "--precision", "f32", "--runs", "3", "--steps", "800"},
        {"vla-jacobian", "--model", "rls", "--precision", "f64", "--stream", "gauss", "--runs", "2", "--steps", "500"},
        {"vla-recall", "--models", "vla3,rls", "--n", "4,8", "--gap", "0,5", "--runs", "6"},
        {"vla-heatmap", "--model", "vla3", "--precision", "f16", "--at", "3,30,300"},
    };
    const char *backends[] = {"lanes", "emu"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *cpu[24] = {(char *)program(cases[i][0])};
        int n = 1;
        for (int k = 1; k < 16 && cases[i][k]; k++)
            cpu[n++] = (char *)cases[i][k];
        cpu[n++] = "--d";
        cpu[n++] = "12";
        cpu[n] = NULL;
        int st = run_capture(cpu, &a, msg, sizeof msg, 120);
        CHECK_MSG(st == 0 && a && strlen(a) > 300, "%s cpu: status %d '%s'", cases[i][0], st, msg);
        strip_run_lines(a);
        for (int k = 0; k < 2; k++) {
            if (k == 0 && !lanes)
                continue;
            /* the emulation runs every kernel block's threads on this machine: the short cases */
            if (k == 1 && (i == 0 || i == 1 || i == 2 || strcmp(cases[i][2], "vla3") ||
                           strstr(cases[i][0], "recall")))
                continue;
            cpu[n] = "--backend";
            cpu[n + 1] = (char *)backends[k];
            cpu[n + 2] = NULL;
            st = run_capture(cpu, &b, msg, sizeof msg, 240);
            CHECK_MSG(st == 0 && b, "%s %s: status %d '%s'", cases[i][0], backends[k], st, msg);
            char want[64];
            snprintf(want, sizeof want, "# backend: %s", backends[k]);
            CHECK_MSG(b && (strstr(b, want) || !strcmp(cases[i][0], "vla-heatmap")),
                      "%s %s: no backend line", cases[i][0], backends[k]);
            strip_run_lines(b);
            CHECK_MSG(a && b && !strcmp(a, b), "case %zu %s on %s: the tables differ", i,
                      cases[i][0], backends[k]);
            free(b);
            b = NULL;
            cpu[n] = NULL;
        }
        free(a);
        a = NULL;
    }
}

/* The lanes save and resume like the cpu: SIGINT exits 3 with the checkpoints written, and the
 * resumed run ends with the uninterrupted table; what the lanes cannot do is a usage error
 * naming the reason (exit 2). */
TEST_SLOW(hardening_lanes_checkpoints_and_refusals)
{
    const char *p = program("vla-statenorm");
    vla_error why;
    if (!p || !vla_cuda_probe_target(VLA_CUDA_LANES, &why)) {
        vla_test_skip(p ? "no lanes on this processor" : "bin/vla-statenorm not built");
        return;
    }
    char msg[1000], *a = NULL;
    char dir[] = "/tmp/vla-lanes-sig.XXXXXX", out[300], whole[300];
    if (mkdtemp(dir)) {
        snprintf(out, sizeof out, "%s/t.dat", dir);
        snprintf(whole, sizeof whole, "%s/whole.dat", dir);
        char *argv[] = {(char *)p, "--precision", "f16", "--d", "8", "--steps", "2e5", "--runs",
                        "8", "--ref", "f64", "--backend", "lanes", "--out", out, NULL, NULL};
        char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL}; /* a checkpoint every slice */
        child ch;
        if (!spawn(&ch, NULL, argv, env)) {
            char ck[320]; /* the signal once a checkpoint is written: under way, its handler set */
            snprintf(ck, sizeof ck, "%s.ckpt", out);
            for (int i = 0; i < 3000 && !exists(ck); i++)
                nanosleep(&(struct timespec){0, 10000000}, NULL);
            kill(ch.pid, SIGINT);
            int st = finish(&ch, 30);
            char *text = read_all(ch.err, NULL);
            unlink(ch.err);
            CHECK_MSG(st == 3 && text && strstr(text, "interrupted (signal 2); checkpoints written "
                                                      "beside"),
                      "SIGINT: status %d, '%s'", st, text ? text : "");
            CHECK_MSG(!exists(out), "SIGINT: a table stands at %s", out);
            free(text);
            argv[15] = "--resume";
            st = run_capture(argv, &a, msg, sizeof msg, 300);
            CHECK_MSG(st == 0, "--resume: status %d '%s'", st, msg);
            free(a);
            argv[14] = whole;
            argv[15] = NULL;
            st = run_capture(argv, &a, msg, sizeof msg, 300);
            free(a);
            char *x = read_all(out, NULL), *y = read_all(whole, NULL);
            strip_run_lines(x);
            strip_run_lines(y);
            CHECK_MSG(st == 0 && x && y && strlen(x) > 1000 && !strcmp(x, y),
                      "the resumed table differs from the uninterrupted one");
            free(x);
            free(y);
        }
        remove_tree(dir);
    }
    static const char *const bad[][3] = {{"--track", "comp", "comp"},
                                         {"--mode", "fast", "strict"}};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {(char *)p, "--d", "4", "--backend", "lanes", (char *)bad[i][0],
                        (char *)bad[i][1], NULL};
        int st = run_capture(argv, &a, msg, sizeof msg, 30);
        CHECK_MSG(st == 2 && strstr(msg, bad[i][2]), "%s %s: status %d '%s'", bad[i][0],
                  bad[i][1], st, msg);
        free(a);
        a = NULL;
    }
    /* no GPU here: the message names the emulation */
    if (vla_cuda_probe(&why) <= 0) {
        char *argv[] = {(char *)p, "--d", "4", "--backend", "cuda", NULL};
        int st = run_capture(argv, &a, msg, sizeof msg, 30);
        CHECK_MSG(st == 2 && strstr(msg, "--backend emu"), "--backend cuda: status %d '%s'", st, msg);
        free(a);
    }
}
