/* test_drift.c: the drift measures (reference/drift.c, vlaref.h's vref_drift) on runs driven by
 * engines as bin/vla-drift drives them, against bounds derived from the unit roundoff, and the
 * programs vla-drift and vla-heatmap from the outside: usage errors exit 2 with one line, a
 * heatmap's layout reads back. The outside checks skip when bin/ has not been built. */
#include "check.h"
#include "vlaref.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const double u64 = 0x1p-53;

typedef struct {
    long t;
    double v[VREF_DRIFT_NCOL];
} mrow;

/* Runs head `head` of `stream` for T steps beside a reference (exact MPFR at 256 bits, or lib in
 * binary64) and measures at the steps of `at` (ascending, n of them) into rows. 0 on success. */
static int run_measured(const vla_config *cfg, const char *stream, int head, int exact,
                        const long *at, int n, mrow *rows)
{
    vla_error err = {0, ""};
    vref_drift *acc = calloc(1, vref_drift_size(cfg->d));
    vref_drift_tap gc = {acc, cfg};
    vla_engine_spec sp = {.cfg = *cfg, .runs = 1, .stream = stream, .seed = 1,
                          .first_head = head, .round_inputs = VLA_FMT_F64,
                          .on_step = vref_drift_on_step, .ctx = &gc};
    vla_engine_spec rs = sp;
    rs.on_step = NULL;
    if (exact) {
        rs.backend = vref_backend_exact();
    } else {
        rs.cfg.prec = VLA_F64;
        rs.cfg.mode = VLA_STRICT;
    }
    vla_engine *m = NULL, *ref = NULL;
    int e = acc ? vref_drift_init(acc, cfg) : VLA_ENOMEM;
    if (!e)
        e = vla_engine_new(&m, &sp, &err);
    if (!e)
        e = vla_engine_new(&ref, &rs, &err);
    for (int k = 0; !e && k < n; k++) {
        if ((e = vla_engine_advance(m, at[k])) || (e = vla_engine_advance(ref, at[k])))
            err = *vla_engine_error(vla_engine_error(m)->code ? m : ref);
        rows[k].t = at[k];
        if (!e)
            e = vref_drift_measure(m, ref, 0, acc, at[k], rows[k].v);
    }
    CHECK_MSG(e == 0, "run_measured(%s, %s): %s %s", vla_model_name(cfg->model), stream,
              vla_strerror(e), err.msg);
    vla_engine_free(m);
    vla_engine_free(ref);
    free(acc);
    return e;
}

static void config(vla_config *c, vla_model_kind k, vla_prec p, int d)
{
    vla_config_default(c, k, d);
    c->prec = p;
    c->nudge = c->clamp_on = 0; /* so that M_t is the Gram and every column is defined */
}

/* In f64, with nothing but Sherman-Morrison steps, the three distances to the exact inverse are
 * backward-stable sized: a rank-one step commits an error of a few d u ||A|| per entry and the
 * recurrence carries the earlier ones forward, amplified at most by cond(A) over t steps, so
 * a_drift, a_lapack <= d t cond u64 (c = 1). a_resid = ||(A - A*) M||_F <= a_drift sqrt(d) cond
 * (A* = inv(M)), hence its bound carries one more sqrt(d) cond. */
TEST(drift_f64_below_derived_bound)
{
    static const long at[] = {1, 10, 100, 300};
    const struct {
        vla_model_kind k;
        const char *stream;
    } cases[] = {{VLA_VLA3, "lmlike"}, {VLA_RLS, "subspace:4,0.001"}, {VLA_VLA1, "gauss"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        vla_config cfg;
        mrow rows[4];
        int d = 16;
        config(&cfg, cases[c].k, VLA_F64, d);
        if (run_measured(&cfg, cases[c].stream, 0, 1, at, 4, rows))
            continue;
        for (int i = 0; i < 4; i++) {
            const double *r = rows[i].v;
            double cond = r[6], bound = d * rows[i].t * cond * u64;
            CHECK_MSG(cond >= 1 && isfinite(cond), "%s t=%ld: cond %g", vla_model_name(cfg.model),
                      rows[i].t, cond);
            CHECK_MSG(r[1] <= bound, "%s t=%ld: a_drift %.3g > %.3g", vla_model_name(cfg.model),
                      rows[i].t, r[1], bound);
            CHECK_MSG(r[3] <= bound, "%s t=%ld: a_lapack %.3g > %.3g", vla_model_name(cfg.model),
                      rows[i].t, r[3], bound);
            CHECK_MSG(r[2] <= bound * sqrt(d) * cond, "%s t=%ld: a_resid %.3g > %.3g",
                      vla_model_name(cfg.model), rows[i].t, r[2], bound * sqrt(d) * cond);
            CHECK_MSG(r[4] == 0, "sm keeps A exactly symmetric: sym_defect %g", r[4]);
            CHECK(r[5] > 0 && r[7] == 0 && r[8] == 0 && r[9] == 0);
            CHECK(r[10] <= bound * 100 && r[11] <= bound * 100); /* S and o: alive, small */
        }
    }
}

/* The Gram must be built from the very u' the recurrence used: then the exact reference (A* of
 * the same inputs) and the LAPACK inverse of the Gram are one matrix up to d t cond u64, and in
 * f32 a_lapack equals a_drift to that absolute accuracy, while a_drift itself is ~1e-7. A wrong
 * u' (another scale, unrounded inputs, k for u) breaks the equality by orders of magnitude. */
TEST(drift_gram_uses_the_recurrences_u)
{
    static const long at[] = {5, 50, 200};
    const struct {
        vla_model_kind k;
        const char *stream;
    } cases[] = {{VLA_VLA3, "lmlike"}, {VLA_RLS, "gauss"}, {VLA_VLA1, "lmlike"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int sym = 0; sym < 2; sym++) {
            vla_config cfg;
            mrow rows[3];
            int d = 12;
            config(&cfg, cases[c].k, VLA_F32, d);
            cfg.track = sym ? VLA_TRACK_SMSYM : VLA_TRACK_SM;
            if (run_measured(&cfg, cases[c].stream, 1, 1, at, 3, rows))
                continue;
            for (int i = 0; i < 3; i++) {
                const double *r = rows[i].v;
                double tol = d * rows[i].t * r[6] * u64;
                CHECK_MSG(fabs(r[3] - r[1]) <= tol && r[1] > 1e-9,
                          "%s %s t=%ld: a_lapack %.6g vs a_drift %.6g (tol %.3g)",
                          vla_model_name(cfg.model), vla_track_name(cfg.track), rows[i].t, r[3],
                          r[1], tol);
                CHECK_MSG(r[4] == 0, "%s: sym_defect %g", vla_track_name(cfg.track), r[4]);
            }
        }
    }
}

/* The first-order error of the recurrence is u times a sum of many propagated local errors,
 * the same linear map of the same inputs in either format: the drift scales with the storage
 * format's unit roundoff. With the 16-bit drift still small (t <= 100, drift ~1e-3), the
 * geometric mean of the f16 / f32 ratio over 6 heads lies within a factor 4 of
 * u16 / u32 = 2^13 (a factor below 8 = u_bf16 / u_f16, so that a format mixed up with its
 * neighbour fails). */
TEST(drift_scales_with_unit_roundoff)
{
    static const long at[] = {10, 30, 100};
    double logsum = 0;
    int n = 0;
    for (int head = 0; head < 6; head++) {
        mrow r16[3], r32[3];
        vla_config c16, c32;
        config(&c16, VLA_VLA3, VLA_F16, 16);
        config(&c32, VLA_VLA3, VLA_F32, 16);
        if (run_measured(&c16, "lmlike", head, 0, at, 3, r16) ||
            run_measured(&c32, "lmlike", head, 0, at, 3, r32))
            return;
        for (int i = 0; i < 3; i++) {
            CHECK(r16[i].v[1] > 0 && r32[i].v[1] > 0);
            logsum += log(r16[i].v[1] / r32[i].v[1]);
            n++;
        }
    }
    double ratio = exp(logsum / n), expect = vla_fmt_unit_roundoff(VLA_FMT_F16) /
                                             vla_fmt_unit_roundoff(VLA_FMT_F32);
    CHECK_MSG(ratio > expect / 4 && ratio < expect * 4,
              "a_drift f16 / f32: geometric mean %.4g, expected %.4g within a factor 4", ratio,
              expect);
}

/* With the nudge on, M_t stops being the Gram at the first nudge: the two columns that need it
 * are defined before t = period and nan from then on. */
TEST(drift_nudge_makes_resid_nan)
{
    static const long at[] = {19, 20, 40};
    vla_config cfg;
    mrow rows[3];
    vla_config_default(&cfg, VLA_VLA3, 8);
    cfg.prec = VLA_F32;
    if (run_measured(&cfg, "lmlike", 0, 0, at, 3, rows))
        return;
    CHECK(isfinite(rows[0].v[2]) && isfinite(rows[0].v[3]) && rows[0].v[9] == 0);
    for (int i = 1; i < 3; i++)
        CHECK(isnan(rows[i].v[2]) && isnan(rows[i].v[3]) && rows[i].v[9] == i &&
              isfinite(rows[i].v[1]));
}

/* ---- the programs from the outside ---- */

/* runs cmd (stderr into the captured text); returns the exit status, or -1 */
static int run_cmd(const char *cmd, char *out, size_t len)
{
    char *text = NULL;
    int st = vla_test_sh(&text, "%s", cmd);
    snprintf(out, len, "%s", text ? text : "");
    free(text);
    return st;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* a trace directory of d = 4, T = 3, one head, with a NaN in k at step 2 */
static int nan_trace(char *dir)
{
    strcpy(dir, "/tmp/vla-test-drift-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    double x[12];
    long shape[3] = {1, 3, 4};
    const char *names[] = {"q.npy", "k.npy", "v.npy", "u.npy"};
    for (int f = 0; f < 4; f++) {
        char path[128];
        for (int i = 0; i < 12; i++)
            x[i] = 0.1 * (i + f);
        if (f == 1)
            x[5] = NAN;
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        if (vla_npy_write(path, x, 3, shape))
            return -1;
    }
    return 0;
}

static void rm_trace(const char *dir)
{
    const char *names[] = {"q.npy", "k.npy", "v.npy", "u.npy"};
    for (int f = 0; f < 4; f++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        unlink(path);
    }
    rmdir(dir);
}

TEST(drift_heatmap_usage_errors)
{
    const char *progs[] = {"bin/vla-drift", "bin/vla-heatmap"}; /* vla_test_sh: this build's */
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/vla-drift", vla_test_bin_dir());
    snprintf(b, sizeof b, "%s/vla-heatmap", vla_test_bin_dir());
    if (access(a, X_OK) || access(b, X_OK)) {
        vla_test_skip("bin/vla-drift or bin/vla-heatmap not built (run make first)");
        return;
    }
    char dir[64], trace[128];
    if (nan_trace(dir)) {
        CHECK_MSG(0, "cannot write a trace under /tmp");
        return;
    }
    snprintf(trace, sizeof trace, "--stream trace:%s --d 4", dir);
    const char *bad[] = {"--model la", "--model delta", "--precision f8", "--steps 0", "--d 300",
                         "--stream nosuch", "--set nudge=maybe", trace};
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char cmd[512], out[4096];
            snprintf(cmd, sizeof cmd, "%s %s --out /dev/null 2>&1", progs[p], bad[i]);
            int st = run_cmd(cmd, out, sizeof out);
            CHECK_MSG(st == 2 && lines(out) == 1, "%s: exit %d, %d lines: %s", cmd, st,
                      lines(out), out);
        }
    rm_trace(dir);
}

/* the heatmap's layout as --help states it: N snapshot blocks of d x d rows, then N diagonal
 * blocks of d rows; in f64, A_t M_t = I where M_t = inv(A_t) (m_src 1) */
TEST(heatmap_layout)
{
    char prog[600];
    snprintf(prog, sizeof prog, "%s/vla-heatmap", vla_test_bin_dir());
    if (access(prog, X_OK)) {
        vla_test_skip("bin/vla-heatmap not built (run make first)");
        return;
    }
    snprintf(prog + strlen(prog), sizeof prog - strlen(prog),
             " --model vla3 --d 3 --at 7,2 --out - 2>/dev/null");
    FILE *p = popen(prog, "r");
    if (!p) {
        CHECK_MSG(0, "popen failed");
        return;
    }
    char line[512];
    int block = 0, blank = 0, nrow[4] = {0}, cols = 0;
    double A[2][9], M[2][9];
    while (fgets(line, sizeof line, p)) {
        if (line[0] == '#') {
            cols += !strncmp(line, "# columns: t i j a m m_src", 26);
            continue;
        }
        if (line[0] == '\n') {
            if (++blank == 2) {
                block++;
                blank = 0;
            }
            continue;
        }
        blank = 0;
        double t, i, j, a, m, src;
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf", &t, &i, &j, &a, &m, &src) != 6 || block > 3) {
            CHECK_MSG(0, "unexpected line in block %d: %s", block, line);
            continue;
        }
        CHECK(t == (block % 2 ? 7 : 2) && src == 1);
        if (block < 2) {
            A[block][(int)i * 3 + (int)j] = a;
            M[block][(int)i * 3 + (int)j] = m;
        } else {
            CHECK(i == j && A[block - 2][(int)i * 4] == a);
        }
        nrow[block]++;
    }
    CHECK_EQ_INT(pclose(p), 0);
    CHECK_EQ_INT(cols, 1);
    CHECK(nrow[0] == 9 && nrow[1] == 9 && nrow[2] == 3 && nrow[3] == 3);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double s = 0;
                for (int k = 0; k < 3; k++)
                    s += A[b][i * 3 + k] * M[b][k * 3 + j];
                CHECK_NEAR(s, i == j, 1e-12);
            }
}

/* ---- g_lmin: the chunk form's capacitance G = I + U A_t U^T ---- */

/* the rows of a vla-drift table (cmd's standard output): t, lambda_min and g_lmin of each, at most
 * max of them; returns how many, or -1 when the table lacks the columns */
static int drift_g_rows(const char *cmd, double (*row)[3], int max)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[4096];
    int n = 0, il = -1, ig = -1;
    while (fgets(line, sizeof line, p)) {
        if (!strncmp(line, "# columns:", 10)) {
            int k = 0;
            for (char *w = strtok(line + 10, " \n"); w; w = strtok(NULL, " \n"), k++) {
                il = strcmp(w, "lambda_min") ? il : k;
                ig = strcmp(w, "g_lmin") ? ig : k;
            }
            continue;
        }
        if (line[0] == '#' || line[0] == '\n' || il < 0 || ig < 0 || n == max)
            continue;
        int k = 0;
        for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n"), k++) {
            double x = strtod(w, NULL);
            if (k == 0)
                row[n][0] = x;
            if (k == il)
                row[n][1] = x;
            if (k == ig)
                row[n][2] = x;
        }
        n++;
    }
    return pclose(p) || il < 0 || ig < 0 ? -1 : n;
}

/* the smallest eigenvalue of the symmetric n x n G (n <= 8) by cyclic Jacobi rotations: a route
 * of its own beside vla-drift's dsyevr */
static double jacobi_lmin(double *G, int n)
{
    for (int sweep = 0; sweep < 60; sweep++)
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = G[p * n + q];
                if (fabs(apq) < 1e-300)
                    continue;
                double th = (G[q * n + q] - G[p * n + p]) / (2 * apq);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) { /* G <- J^T G J, columns then rows */
                    double gp = G[k * n + p], gq = G[k * n + q];
                    G[k * n + p] = c * gp - s * gq;
                    G[k * n + q] = s * gp + c * gq;
                }
                for (int k = 0; k < n; k++) {
                    double gp = G[p * n + k], gq = G[q * n + k];
                    G[p * n + k] = c * gp - s * gq;
                    G[q * n + k] = s * gp + c * gq;
                }
            }
    double m = G[0];
    for (int i = 1; i < n; i++)
        m = fmin(m, G[i * n + i]);
    return m;
}

/* g_lmin against G formed here: a trace of d = 4, T = 12 (its u known), vla3 in binary64 in
 * chunk:4 with the nudge off; A_4 and A_8 from vla-heatmap (the same run), u' = unit(u) / sqrt(d)
 * (vla3's, docs/math.md) of the next chunk's 4 writes, G = I + U A U^T and its smallest eigenvalue
 * by Jacobi; at t = 12 the trace ends before the next chunk does: nan */
TEST(drift_g_lmin_recomputed)
{
    char prog[600], heat[600];
    snprintf(prog, sizeof prog, "%s/vla-drift", vla_test_bin_dir());
    snprintf(heat, sizeof heat, "%s/vla-heatmap", vla_test_bin_dir());
    if (access(prog, X_OK) || access(heat, X_OK)) {
        vla_test_skip("bin/vla-drift or bin/vla-heatmap not built (run make first)");
        return;
    }
    enum { D = 4, T = 12, C = 4 };
    char dir[64];
    strcpy(dir, "/tmp/vla-test-glmin-XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "cannot make a folder under /tmp");
        return;
    }
    double x[4][T * D];
    long shape[3] = {1, T, D};
    const char *names[] = {"q.npy", "k.npy", "v.npy", "u.npy"};
    for (int f = 0; f < 4; f++) {
        char path[128];
        for (int i = 0; i < T * D; i++) /* deterministic, not aligned with any axis */
            x[f][i] = sin(1.3 * i + 0.7 * f + 0.1 * i * i);
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        CHECK(vla_npy_write(path, x[f], 3, shape) == 0);
    }
    char cmd[1600];
    double rows[8][3];
    snprintf(cmd, sizeof cmd, "%s --model vla3 --precision f64 --form chunk:%d --set nudge=off "
             "--stream trace:%s --steps %d --checkpoints 10 --out - 2>/dev/null", prog, C, dir, T);
    int n = drift_g_rows(cmd, rows, 8);
    CHECK_MSG(n == 3, "%s: %d rows", cmd, n);
    for (int r = 0; r < n && n == 3; r++) {
        const long t = (long)rows[r][0];
        CHECK_MSG(t == 4 * (r + 1), "row %d: t = %ld", r, t);
        if (t == T) {
            CHECK_MSG(isnan(rows[r][2]), "t = %ld: g_lmin %g, not nan past the trace", t, rows[r][2]);
            continue;
        }
        double A[D * D] = {0}, U[C * D], G[C * C];
        snprintf(cmd, sizeof cmd, "%s --model vla3 --precision f64 --form chunk:%d --set nudge=off "
                 "--stream trace:%s --at %ld --out - 2>/dev/null", heat, C, dir, t);
        FILE *p = popen(cmd, "r");
        char line[512];
        int got = 0, blank = 0;
        while (p && fgets(line, sizeof line, p)) {
            double tt, i, j, a;
            blank = line[0] == '\n' ? blank + 1 : line[0] == '#' ? blank : 0;
            if (blank < 2 && line[0] != '#' && line[0] != '\n' && got < D * D &&
                sscanf(line, "%lf %lf %lf %lf", &tt, &i, &j, &a) == 4 && tt == t) {
                A[(int)i * D + (int)j] = a;
                got++;
            }
            if (blank >= 2) /* past the snapshot's block */
                break;
        }
        CHECK_MSG(p && pclose(p) >= 0 && got == D * D, "%s: %d entries of A", cmd, got);
        for (int j = 0; j < C; j++) { /* u' of steps t + 1 .. t + C */
            const double *u = x[3] + (t + j) * D;
            double nu = 0;
            for (int k = 0; k < D; k++)
                nu += u[k] * u[k];
            for (int k = 0; k < D; k++)
                U[j * D + k] = u[k] / sqrt(nu) / sqrt((double)D);
        }
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++) {
                double g = i == j;
                for (int k = 0; k < D; k++)
                    for (int l = 0; l < D; l++)
                        g += U[i * D + k] * 0.5 * (A[k * D + l] + A[l * D + k]) * U[j * D + l];
                G[i * C + j] = g;
            }
        const double want = jacobi_lmin(G, C);
        CHECK_MSG(fabs(rows[r][2] - want) <= 1e-12 * fabs(want), "t = %ld: g_lmin %.17g, G here %.17g",
                  t, rows[r][2], want);
    }
    for (int f = 0; f < 4; f++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        unlink(path);
    }
    rmdir(dir);
}

/* g_lmin against bounds: vla3's u' has ||u'||^2 = 1/d, so ||U||_2^2 <= ||U||_F^2 = C/d and
 * lambda(U A U^T) lies in ||U||_2^2 [min(0, lambda_min(A)), max(0, lambda_max(A))]: g_lmin >= 1 +
 * min(0, lambda_min(A)) C/d (G stays positive definite while lambda_min(A) > -d/C); with C > d, U
 * has rank <= d < C and G keeps C - d eigenvalues 1, so g_lmin <= 1 (and = 1 while A >= 0). bf16
 * storage on lmlike, d = 16, chunk:16: A loses definiteness by t = 3000 and G must not yet; d = 8,
 * chunk:16 in f64: g_lmin = 1. The sequential form has no such column. */
TEST(drift_g_lmin_bounds)
{
    char prog[600];
    snprintf(prog, sizeof prog, "%s/vla-drift", vla_test_bin_dir());
    if (access(prog, X_OK)) {
        vla_test_skip("bin/vla-drift not built (run make first)");
        return;
    }
    char cmd[1200];
    double rows[64][3];
    snprintf(cmd, sizeof cmd, "%s --model vla3 --precision bf16-f32 --form chunk:16 --set nudge=off "
             "--stream lmlike --d 16 --steps 3000 --runs 2 --ref f64 --out - 2>/dev/null", prog);
    int n = drift_g_rows(cmd, rows, 64), neg = 0;
    CHECK_MSG(n >= 20, "%s: %d rows", cmd, n);
    for (int r = 0; r < n; r++) {
        const double lmin = rows[r][1], g = rows[r][2], lo = 1 + fmin(0, lmin) * 16 / 16; /* C/d */
        neg += lmin < 0;
        CHECK_MSG(g >= lo - 1e-9 && g > 0, "t = %g: g_lmin %.17g below 1 + min(0, %g) C/d", rows[r][0],
                  g, lmin);
    }
    CHECK_MSG(neg > 0, "%s: A stayed positive definite (the case no longer tests the bound)", cmd);
    snprintf(cmd, sizeof cmd, "%s --model vla3 --precision f64 --form chunk:16 --set nudge=off "
             "--stream lmlike --d 8 --steps 2000 --out - 2>/dev/null", prog);
    n = drift_g_rows(cmd, rows, 64);
    CHECK_MSG(n >= 15, "%s: %d rows", cmd, n);
    for (int r = 0; r < n; r++)
        CHECK_MSG(fabs(rows[r][2] - 1) <= 1e-12, "t = %g: g_lmin %.17g, not 1 (C > d)", rows[r][0],
                  rows[r][2]);
    /* the sequential form has no chunk: no column */
    snprintf(cmd, sizeof cmd, "%s --model vla3 --precision f64 --steps 100 --out - 2>/dev/null",
             prog);
    CHECK_MSG(drift_g_rows(cmd, rows, 64) < 0, "%s: a g_lmin column in the sequential form", cmd);
}
