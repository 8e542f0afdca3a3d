/* test_judge.c: vla-check trace:DIR --outputs DIR2 from the outside: a kernel's own
 * read-outs judged against the exact reference. The "kernels" are vlastab's own runs on the same
 * trace, taken here through the engine: binary64 (ok, near binary64's rounding), bf16-kern saved
 * as bfloat16 bits (ok, its error the attainable one exactly), the same with one token moved by 5%
 * (that head beyond, its t named), a NaN (beyond, its t named), T = 200 in chunk:64 (a last chunk
 * of 8), vlastab's own CUDA kernels (their emulation; the GPU where there is one); and the usage
 * errors (exit 2). */
#include "check.h"
#include "proc.h"
#include "vlacuda.h"
#include "vlastab.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define H 2
#define T 256
#define D 16

/* a gdn trace of H heads x T steps, d = dv = D, every value a bfloat16 number (a bf16 model's
 * inputs: then rounding them to bf16-kern's io format changes nothing, and the input budget is
 * exactly 0); model.txt names gdn */
static int write_trace(const char *dir)
{
    return write_gdn_trace(dir, H, T, D, D, 11, VLA_FMT_BF16);
}

typedef struct {
    double *o;
} keep_t;

static int keep(void *ctx, const vla_step_view *v)
{
    keep_t *k = ctx;
    if (v->o)
        memcpy(k->o + ((size_t)v->run * T + (size_t)(v->t - 1)) * D, v->o, D * sizeof *v->o);
    return VLA_OK;
}

/* vlastab's own run of gdn in policy p on the trace, token by token: o (H x T x D), and the
 * final state into S (H x D x D) when S is not NULL */
static int own_run_on(const vla_backend *b, const char *dir, vla_prec p, double *o, double *S)
{
    char stream[200];
    vla_error err;
    snprintf(stream, sizeof stream, "trace:%s", dir);
    vla_engine_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.backend = b;
    vla_config_default(&sp.cfg, VLA_GDN, D);
    sp.cfg.dv = D;
    sp.cfg.prec = p;
    sp.runs = H;
    sp.stream = stream;
    sp.round_inputs = VLA_FMT_F64;
    sp.taps = VLA_TAP_O;
    keep_t k = {o};
    sp.on_step = keep;
    sp.ctx = &k;
    vla_engine *e;
    if (vla_engine_new(&e, &sp, &err))
        return 1;
    int r = vla_engine_advance(e, T);
    for (int h = 0; !r && S && h < H; h++)
        r = vla_engine_get(e, h, VLA_Q_S, S + (size_t)h * D * D);
    vla_engine_free(e);
    return r;
}
static int own_run(const char *dir, vla_prec p, double *o, double *S)
{
    return own_run_on(NULL, dir, p, o, S);
}

/* a .npy of uint16 (bfloat16 bits), as numpy writes one: version 1.0, header padded to 64 */
static int write_u2(const char *path, const double *x, long n0, long n1, long n2)
{
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '<u2', 'fortran_order': False, 'shape': (%ld, %ld, "
                                "%ld), }", n0, n1, n2);
    FILE *f = npy_open(path, dict);
    if (!f)
        return 1;
    int e = 0;
    for (long i = 0; !e && i < n0 * n1 * n2; i++) {
        float v = (float)vla_round_fmt(VLA_FMT_BF16, x[i]);
        uint32_t w;
        memcpy(&w, &v, 4);
        unsigned char b[2] = {(unsigned char)(w >> 16 & 0xff), (unsigned char)(w >> 24)};
        e = fwrite(b, 1, 2, f) != 2;
    }
    return (fclose(f) != 0) | e;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

/* the per-head rows of the table on standard output: head rel_rms max_abs max_rel_window t ...
 * (columns of vla-check --help's OUTPUTS), the verdict word into verdict[h] */
#define NC 14
static int rows(const char *out, double v[H][NC], char verdict[H][16])
{
    int n = 0;
    for (const char *p = out; p && *p && n < H; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (*p == '#' || *p == '\n')
            continue;
        char nf[32];
        if (sscanf(p, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %31s %15s", &v[n][0],
                   &v[n][1], &v[n][2], &v[n][3], &v[n][4], &v[n][5], &v[n][6], &v[n][7], &v[n][8],
                   &v[n][9], &v[n][10], &v[n][11], nf, verdict[n]) != 14)
            return -1;
        v[n][12] = strcmp(nf, "never") ? atof(nf) : 0;
        n++;
    }
    return n;
}
enum { C_RELRMS = 1, C_MAXABS, C_MRW, C_TMRW, C_PT, C_ULPS, C_BITS, C_SEQ, C_FORM, C_INP,
       C_BUDGET, C_NONFIN };

/* a judge's folder from its template (mkdtemp), with the trace in DIR/tr and an empty DIR/kernel,
 * and vlastab's own binary64 run of it (o: H x T x D, malloc'd; S: H x D x D): 0, else 1 after
 * a skip (no bin/vla-check) or a failed check */
static int judge_setup(char *dir, char *tr, char *ko, double **o, double *S)
{
    *o = NULL;
    if (judge_folder(dir, tr, ko, "kernel"))
        return 1;
    if (!(*o = malloc(sizeof(double) * H * T * D)) || write_trace(tr) ||
        own_run(tr, VLA_F64, *o, S)) {
        CHECK_MSG(0, "cannot write the trace or run it");
        free(*o);
        return 1;
    }
    return 0;
}

TEST(judge_outputs)
{
    char p[600];
    char dir[64] = "/tmp/vla-judge-test.XXXXXX", tr[100], ko[100], path[200], cmd[1200];
    double *o, S[H * D * D];
    if (judge_setup(dir, tr, ko, &o, S))
        return;
    const long shape[3] = {H, T, D}, tshape[3] = {T, H, D};
    double v[H][NC];
    char verdict[H][16], *out = NULL;
    /* (1) the kernel is vlastab's own binary64 run: its error is binary64's, at most d T u per
     * read-out relatively (each of the T steps' d-term products and sums rounds), and exactly the
     * attainable one (the same run); its final state likewise */
    snprintf(path, sizeof path, "%s/S.npy", ko);
    const long sshape[3] = {H, D, D};
    CHECK(vla_npy_write(path, S, 3, sshape) == 0);
    snprintf(path, sizeof path, "%s/o.npy", ko);
    CHECK(vla_npy_write(path, o, 3, shape) == 0);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --report %s/r1 2>%s/err1",
             tr, ko, dir, dir);
    int st = vla_test_sh(&out, "%s", cmd);
    CHECK_MSG(st == 0, "%s: exit %d", cmd, st);
    CHECK_EQ_INT(rows(out, v, verdict), H);
    const double u53 = ldexp(1, -53);
    for (int h = 0; h < H; h++) {
        CHECK_MSG(v[h][C_RELRMS] <= D * T * u53 && v[h][C_MRW] <= D * T * u53,
                  "f64 head %d: rel_rms %g, max_rel_window %g past d T u = %g", h, v[h][C_RELRMS],
                  v[h][C_MRW], D * T * u53);
        CHECK_MSG(v[h][C_MRW] == v[h][C_SEQ] && !strcmp(verdict[h], "ok"),
                  "f64 head %d: %.17g against the attainable %.17g, %s", h, v[h][C_MRW],
                  v[h][C_SEQ], verdict[h]);
        CHECK_MSG(v[h][C_INP] == 0, "f64 head %d: input budget %g (no input is rounded)", h,
                  v[h][C_INP]);
    }
    free(out), out = NULL;
    snprintf(p, sizeof p, "%s/r1.json", dir);
    const char *key = "\"state\": [{\"head\": 0, \"rel_fro\": ";
    char *js = read_all(p, NULL), *at = js ? strstr(js, key) : NULL;
    double sr = at ? atof(at + strlen(key)) : -1;
    CHECK_MSG(at && sr >= 0 && sr <= D * T * u53 && strstr(js, "\"summary\": \"ok: ") &&
                  !strstr(js, "\"verdict\": \"beyond\""), "r1.json's state: %s", js ? js : "");
    free(js);
    snprintf(path, sizeof path, "%s/S.npy", ko);
    unlink(path);
    snprintf(path, sizeof path, "%s/o.npy", ko);

    /* (2) its bf16-kern run, saved as bfloat16 bits: the policy defaults to bf16-kern, the
     * judge's emulation is rounded the same way, so the kernel's error is the attainable one
     * exactly; the trace's inputs are bfloat16 numbers, so the input budget is exactly 0 */
    CHECK(own_run(tr, VLA_BF16_KERN, o, NULL) == 0);
    CHECK(write_u2(path, o, H, T, D) == 0);
    snprintf(p, sizeof p, "%s/dtype.txt", ko);
    write_text(p, "bfloat16\n");
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --report %s/r2 2>%s/err2",
             tr, ko, dir, dir);
    st = vla_test_sh(&out, "%s", cmd);
    CHECK_MSG(st == 0, "%s: exit %d", cmd, st);
    CHECK_EQ_INT(rows(out, v, verdict), H);
    CHECK_MSG(out && strstr(out, "# policy: bf16-kern (from o.npy's dtype), form seq"),
              "no policy line: %s", out ? out : "");
    const double ub = ldexp(1, -8); /* bfloat16's unit roundoff */
    for (int h = 0; h < H; h++) {
        CHECK_MSG(v[h][C_MRW] == v[h][C_SEQ] && v[h][C_INP] == 0 && !strcmp(verdict[h], "ok"),
                  "bf16 head %d: %.17g against the attainable %.17g, input budget %g, %s", h,
                  v[h][C_MRW], v[h][C_SEQ], v[h][C_INP], verdict[h]);
        /* binary32 arithmetic (error near 1e-6 here) and one rounding to bfloat16: at most u
         * relatively per element, so per window; ulps: at most 1/2 of the rounding plus the
         * binary32 part */
        CHECK_MSG(v[h][C_MRW] <= ub * (1 + 1e-3) && v[h][C_ULPS] <= 1,
                  "bf16 head %d: max_rel_window %g past u = %g, or %g ulps", h, v[h][C_MRW], ub,
                  v[h][C_ULPS]);
    }
    free(out), out = NULL;

    /* (2b) the same values in a float64 file, the policy and the form given: the read-outs'
     * format is the coarser of bf16-kern's io format and the file's, bfloat16, so the error is
     * again the attainable one exactly; the chunked emulation's error stands beside it */
    double *o2 = malloc(sizeof(double) * H * T * D);
    for (long i = 0; o2 && i < (long)H * T * D; i++)
        o2[i] = vla_round_fmt(VLA_FMT_BF16, o[i]);
    snprintf(p, sizeof p, "%s/k64", dir);
    mkdir(p, 0700);
    snprintf(path, sizeof path, "%s/k64/o.npy", dir);
    CHECK(o2 && vla_npy_write(path, o2, 3, shape) == 0);
    free(o2);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --precision bf16-kern --form "
                              "chunk:64 --report none 2>%s/err2b", tr, p, dir);
    st = vla_test_sh(&out, "%s", cmd);
    CHECK_MSG(st == 0, "%s: exit %d", cmd, st);
    CHECK_EQ_INT(rows(out, v, verdict), H);
    CHECK_MSG(out && strstr(out, "# policy: bf16-kern, form chunk:64") &&
                  strstr(out, "read-outs compared in bf16"), "no policy line: %s", out ? out : "");
    for (int h = 0; h < H; h++)
        CHECK_MSG(v[h][C_MRW] == v[h][C_SEQ] && v[h][C_FORM] > 0 &&
                      v[h][C_BUDGET] == 2 * fmax(v[h][C_SEQ], v[h][C_FORM]) && /* 16 bits: 2 */
                      !strcmp(verdict[h], "ok"),
                  "bf16 in float64, chunk:64, head %d: %.17g, attainable %.17g and %.17g, budget "
                  "%.17g, %s", h, v[h][C_MRW], v[h][C_SEQ], v[h][C_FORM], v[h][C_BUDGET],
                  verdict[h]);
    free(out), out = NULL;

    /* (2c) T = 200 judged in chunk:64: the last chunk holds 8 tokens, which the emulation computes
     * as a chunk of 8 (vla_model_finish; the kernels mask the rows past T). The kernel is the
     * binary64 seq run: every token's error within d T u, and the chunked emulation's, beside it,
     * finite and within the same bound (a token without a read-out would be NaN: beyond) */
    const long T2 = 200, shape2[3] = {H, T2, D};
    double *o3 = malloc(sizeof(double) * H * T * D), *o4 = malloc(sizeof(double) * H * T2 * D);
    CHECK(o3 && o4 && own_run(tr, VLA_F64, o3, NULL) == 0);
    for (long h = 0; o3 && o4 && h < H; h++)
        memcpy(o4 + h * T2 * D, o3 + h * T * D, sizeof(double) * T2 * D);
    snprintf(p, sizeof p, "%s/k200", dir);
    mkdir(p, 0700);
    snprintf(path, sizeof path, "%s/k200/o.npy", dir);
    CHECK(o4 && vla_npy_write(path, o4, 3, shape2) == 0);
    free(o3);
    free(o4);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --steps %ld --form chunk:64 "
                              "--report none 2>%s/err2c", tr, p, T2, dir);
    st = vla_test_sh(&out, "%s", cmd);
    CHECK_MSG(st == 0, "%s: exit %d", cmd, st);
    CHECK_EQ_INT(rows(out, v, verdict), H);
    for (int h = 0; h < H; h++)
        CHECK_MSG(v[h][C_MRW] <= D * T2 * u53 && v[h][C_FORM] > 0 &&
                      v[h][C_FORM] <= D * T2 * u53 && !strcmp(verdict[h], "ok"),
                  "T = 200 in chunk:64, head %d: %.17g, the chunk form's %.17g (d T u = %g), %s",
                  h, v[h][C_MRW], v[h][C_FORM], D * T2 * u53, verdict[h]);
    free(out), out = NULL;
    snprintf(path, sizeof path, "%s/o.npy", ko);

    /* (2d) vlastab's own CUDA kernels as the kernel under judgement: their f32 and bf16-kern
     * read-outs (seq, gdn's decays prepared by the host; bf16-kern's saved in bfloat16, its io
     * format, as a kernel stores them) through the same path as a user's. The
     * kernels' emulation on host threads here, the GPU too where there is one: their bits are the
     * cpu backend's (tests/test_cuda.c), so each head's error is the attainable one exactly */
    const vla_backend *kb[2] = {vla_backend_emu(), vla_backend_cuda()};
    const vla_prec kp[2] = {VLA_F32, VLA_BF16_KERN};
    double *o5 = malloc(sizeof(double) * H * T * D);
    for (int b = 0; o5 && b < 2; b++)
        for (int i = 0; i < 2; i++) {
            if (own_run_on(kb[b], tr, kp[i], o5, NULL)) {
                CHECK_MSG(b == 1, "the kernels' emulation did not run gdn %s", vla_prec_name(kp[i]));
                continue; /* no GPU here */
            }
            snprintf(p, sizeof p, "%s/kcuda%d%d", dir, b, i);
            mkdir(p, 0700);
            snprintf(path, sizeof path, "%s/kcuda%d%d/o.npy", dir, b, i);
            if (kp[i] == VLA_F32)
                CHECK(vla_npy_write(path, o5, 3, shape) == 0);
            else { /* stored as a bf16 kernel stores its read-outs, in its io format */
                CHECK(write_u2(path, o5, H, T, D) == 0);
                snprintf(path, sizeof path, "%s/kcuda%d%d/dtype.txt", dir, b, i);
                write_text(path, "bfloat16\n");
            }
            snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --precision %s "
                                      "--report none 2>%s/err2d", tr, p, vla_prec_name(kp[i]), dir);
            st = vla_test_sh(&out, "%s", cmd);
            CHECK_MSG(st == 0, "%s: exit %d", cmd, st);
            CHECK_EQ_INT(rows(out, v, verdict), H);
            for (int h = 0; h < H; h++)
                CHECK_MSG(v[h][C_MRW] == v[h][C_SEQ] && !strcmp(verdict[h], "ok"),
                          "--backend %s %s, head %d: %.17g against the attainable %.17g, %s",
                          b ? "cuda" : "emu", vla_prec_name(kp[i]), h, v[h][C_MRW], v[h][C_SEQ],
                          verdict[h]);
            free(out), out = NULL;
        }
    free(o5);
    snprintf(path, sizeof path, "%s/o.npy", ko);

    /* (3) one token of head 1 moved by 5%: with --window 1 the window is the token, its error at
     * least 0.05 - 2.1 u = 0.042 (u: the kernel's rounding and the reference's distance from the
     * emulation), past the budget 2 x (u + binary32's part) <= 0.008 (--slack's default for a 16-bit
     * policy); head 0 stays ok. */
    const long tbad = 100;
    for (int j = 0; j < D; j++)
        o[((size_t)1 * T + tbad - 1) * D + j] *= 1.05;
    CHECK(write_u2(path, o, H, T, D) == 0);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --window 1 --report %s/r3 "
                              "2>%s/err3", tr, ko, dir, dir);
    st = vla_test_sh(&out, "%s", cmd);
    CHECK_MSG(st == 1, "%s: exit %d", cmd, st);
    CHECK_EQ_INT(rows(out, v, verdict), H);
    CHECK_MSG(!strcmp(verdict[0], "ok") && !strcmp(verdict[1], "beyond") &&
                  v[1][C_TMRW] == tbad && v[1][C_MRW] >= 0.05 - 2.1 * ub &&
                  v[1][C_BUDGET] <= 4 * ub * (1 + 1e-3),
              "perturbed: head 0 %s, head 1 %s at t = %g (%g, budget %g)", verdict[0], verdict[1],
              v[1][C_TMRW], v[1][C_MRW], v[1][C_BUDGET]);
    snprintf(p, sizeof p, "%s/err3", dir);
    char *err = read_all(p, NULL);
    CHECK_MSG(err && strstr(err, "head 1: ") && strstr(err, "at t = 100 past its budget"),
              "stderr: %s", err ? err : "");
    free(err);
    free(out), out = NULL;

    /* (7) the JSON beside the report: parsed by Python's json, with every key */
    const char *py = getenv("VLA_PYTHON") ? getenv("VLA_PYTHON") : "/usr/bin/python3";
    if (access(py, X_OK) == 0) {
        snprintf(cmd, sizeof cmd,
                 "%s -c \"import json; r = json.load(open('%s/r3.json')); "
                 "assert set(r) == {'verdict', 'model', 'precision', 'form', 'ref', 'reference', "
                 "'window', 'slack', 'settings', 'heads', 'state', 'grads', 'summary'}, sorted(r); "
                 "assert set(r['heads'][0]) == {'head', 'rel_rms', 'max_abs', 'max_rel_window', "
                 "'t_max_rel_window', 'max_rel_pointwise', 'ulps_max', 'bits_lost', "
                 "'attainable_seq', 'attainable_form', 'input_budget', 'budget', 'scale', "
                 "'rel_after_scale', 'first_t_nonfinite', 'verdict'}; "
                 "assert (r['verdict'], r['model'], r['precision'], r['form'], r['ref'], "
                 "r['window'], r['slack'], r['state'], r['grads']) == ('beyond', 'gdn', 'bf16-kern', "
                 "'seq', 'exact', 1, 2.0, None, None), r; "
                 "h = r['heads']; assert [x['verdict'] for x in h] == ['ok', 'beyond']; "
                 "assert h[1]['t_max_rel_window'] == 100 and h[1]['first_t_nonfinite'] is None\"",
                 py, dir);
        st = vla_test_sh(NULL, "%s", cmd);
        CHECK_MSG(st == 0, "the JSON: %s: exit %d", cmd, st);
    }

    /* (6) a NaN at head 0, t = 50: beyond, said with its t; JSON's first_t_nonfinite */
    CHECK(own_run(tr, VLA_F64, o, NULL) == 0);
    o[((size_t)0 * T + 49) * D + 3] = NAN;
    snprintf(path, sizeof path, "%s/o.npy", ko);
    CHECK(vla_npy_write(path, o, 3, shape) == 0);
    snprintf(p, sizeof p, "%s/dtype.txt", ko);
    unlink(p);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --report %s/r6 2>%s/err6",
             tr, ko, dir, dir);
    st = vla_test_sh(&out, "%s", cmd);
    CHECK_MSG(st == 1, "%s: exit %d", cmd, st);
    CHECK_EQ_INT(rows(out, v, verdict), H);
    CHECK_MSG(!strcmp(verdict[0], "beyond") && v[0][C_NONFIN] == 50 && !strcmp(verdict[1], "ok"),
              "NaN: head 0 %s non-finite from %g, head 1 %s", verdict[0], v[0][C_NONFIN],
              verdict[1]);
    snprintf(p, sizeof p, "%s/r6.json", dir);
    js = read_all(p, NULL);
    CHECK_MSG(js && strstr(js, "\"first_t_nonfinite\": 50,") && !strstr(js, "nan") &&
                  !strstr(js, "inf"), "r6.json: %s", js ? js : "");
    free(js);
    free(out), out = NULL;

    /* (4) o saved as (T, heads, dv): a usage error naming both shapes */
    CHECK(vla_npy_write(path, o, 3, tshape) == 0);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --report %s/r4 2>%s/err4",
             tr, ko, dir, dir);
    st = vla_test_sh(NULL, "%s", cmd);
    CHECK_MSG(st == 2, "%s: exit %d", cmd, st);
    snprintf(p, sizeof p, "%s/err4", dir);
    err = read_all(p, NULL);
    CHECK_MSG(err && strstr(err, "shape (256, 2, 16), expected (heads, T, dv) = (2, 256, 16)"),
              "stderr: %s", err ? err : "");
    free(err);

    /* (5) uint16 without dtype.txt: a usage error */
    CHECK(write_u2(path, o, H, T, D) == 0);
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --report %s/r5 2>%s/err5",
             tr, ko, dir, dir);
    st = vla_test_sh(NULL, "%s", cmd);
    CHECK_MSG(st == 2, "%s: exit %d", cmd, st);
    snprintf(p, sizeof p, "%s/err5", dir);
    err = read_all(p, NULL);
    CHECK_MSG(err && strstr(err, "holds uint16 ('<u2')") && strstr(err, "dtype.txt"),
              "stderr: %s", err ? err : "");
    free(err);

    /* (6) --threshold, the rows' rule, with --outputs (judged against budgets): a usage error,
     * not an option that does nothing */
    snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --threshold 0.5 --report "
             "none 2>%s/err6", tr, ko, dir);
    st = vla_test_sh(NULL, "%s", cmd);
    snprintf(p, sizeof p, "%s/err6", dir);
    err = read_all(p, NULL);
    CHECK_MSG(st == 2 && err && strstr(err, "--threshold is the rows'"), "%s: exit %d: %s", cmd,
              st, err ? err : "");
    free(err);
    free(o);
    if (!getenv("VLA_KEEP")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
}

/* the table's rows (its lines not opening with '#'), malloc'd */
static char *table_rows(const char *out)
{
    char *r = calloc(1, out ? strlen(out) + 1 : 1), *w = r;
    for (const char *p = out; r && p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        size_t n = strchr(p, '\n') ? (size_t)(strchr(p, '\n') - p + 1) : strlen(p);
        if (*p != '#')
            memcpy(w, p, n), w += n;
    }
    return r;
}

/* the judge in dir/NAME: its table on stdout into *out, its JSON into *js; its exit status */
static int judge_run(const char *args, const char *dir, const char *name, char **out, char **js)
{
    char p[300];
    int st = vla_test_sh(out, "bin/vla-check %s --report %s/%s 2>%s/%s.err", args, dir, name, dir,
                         name);
    snprintf(p, sizeof p, "%s/%s.json", dir, name);
    *js = read_all(p, NULL);
    return st;
}

/* The judge's exact references (R_REF, R_RND) run in double-double, each checked against MPFR on
 * head 0: the table's reference line, the JSON's "reference" and the Markdown name it,
 * and every number of the table and the JSON is MPFR's (--ref-bits 512: MPFR, as any bits but
 * 256), to the last printed digit. Where the check fails (la on gauss:1e200: dd's state overflows
 * binary64's range, MPFR's does not; tests/test_dd.c) that reference runs in MPFR, said so, and
 * its numbers are MPFR's again. */
TEST(judge_reference_dd)
{
    char p[600];
    snprintf(p, sizeof p, "%s/vla-check", vla_test_bin_dir());
    if (access(p, X_OK)) {
        vla_test_skip("bin/vla-check not built (run make first)");
        return;
    }
    char dir[64] = "/tmp/vla-judge-dd.XXXXXX", tr[100], ko[100], kl[100], path[200], args[600];
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "cannot make a folder under /tmp");
        return;
    }
    snprintf(tr, sizeof tr, "%s/tr", dir);
    snprintf(ko, sizeof ko, "%s/kernel", dir);
    snprintf(kl, sizeof kl, "%s/la", dir);
    mkdir(tr, 0700);
    mkdir(ko, 0700);
    mkdir(kl, 0700);
    double *o = malloc(sizeof(double) * H * T * D), S[H * D * D];
    if (!o || write_trace(tr) || own_run(tr, VLA_F32, o, S)) {
        CHECK_MSG(0, "cannot write the trace or run it");
        free(o);
        return;
    }
    const long shape[3] = {H, T, D}, sshape[3] = {H, D, D};
    snprintf(path, sizeof path, "%s/o.npy", ko);
    CHECK(vla_npy_write(path, o, 3, shape) == 0);
    snprintf(path, sizeof path, "%s/S.npy", ko);
    CHECK(vla_npy_write(path, S, 3, sshape) == 0);
    /* the kernel in f32 (o.npy float64, --precision f32): both references run, and the state */
    char *out[2] = {NULL, NULL}, *js[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "trace:%s --outputs %s --precision f32%s", tr, ko,
                 k ? " --ref-bits 512" : "");
        int st = judge_run(args, dir, k ? "mpfr" : "dd", &out[k], &js[k]);
        CHECK_MSG(st == 0, "vla-check %s: exit %d", args, st);
    }
    const char *dd = "exact (2 references in double-double, 106 bits, checked against MPFR at 256 "
                     "bits on head 0 to t = 256 at 2 checkpoints: largest relative difference ";
    char line[300];
    snprintf(line, sizeof line, "# reference: %s", dd);
    CHECK_MSG(out[0] && strstr(out[0], line) && strstr(out[0], "; 0 references in MPFR"),
              "the dd run's header: %s", out[0] ? out[0] : "");
    snprintf(line, sizeof line, "\"reference\": \"%s", dd);
    CHECK_MSG(js[0] && strstr(js[0], line), "dd.json: %s", js[0] ? js[0] : "");
    CHECK_MSG(out[1] && strstr(out[1], "# reference: exact (MPFR, 512 bits) on the inputs as "
                                       "given") &&
                  js[1] && strstr(js[1], "\"reference\": \"exact (MPFR, 512 bits)\""),
              "the MPFR run's header: %s", out[1] ? out[1] : "");
    snprintf(path, sizeof path, "%s/dd.md", dir);
    char *md = read_all(path, NULL);
    CHECK_MSG(md && strstr(md, "against the reference, exact (2 references in double-double"),
              "dd.md: %s", md ? md : "");
    free(md);
    /* every number: the rows, and the JSON from its settings on (heads, state, summary) */
    char *r0 = table_rows(out[0]), *r1 = table_rows(out[1]);
    const char *j0 = js[0] ? strstr(js[0], "\n \"settings\"") : NULL;
    const char *j1 = js[1] ? strstr(js[1], "\n \"settings\"") : NULL;
    CHECK_MSG(r0 && r1 && *r0 && !strcmp(r0, r1), "dd's rows:\n%s\nMPFR's:\n%s", r0 ? r0 : "",
              r1 ? r1 : "");
    CHECK_MSG(j0 && j1 && strstr(j0, "\"state\": [{") && !strcmp(j0, j1),
              "dd's JSON:\n%s\nMPFR's:\n%s", j0 ? j0 : "", j1 ? j1 : "");
    for (int k = 0; k < 2; k++) {
        free(out[k]), free(js[k]);
        out[k] = js[k] = NULL;
    }
    free(r0), free(r1);

    /* the fallback: la on gauss:1e200 (f64: one reference), any read-outs */
    double *ol = malloc(sizeof(double) * H * T * 8);
    for (long i = 0; ol && i < (long)H * T * 8; i++)
        ol[i] = 1;
    const long lshape[3] = {H, T, 8};
    snprintf(path, sizeof path, "%s/o.npy", kl);
    CHECK(ol && vla_npy_write(path, ol, 3, lshape) == 0);
    free(ol);
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "--stream gauss:1e200 --model la --d 8 --runs %d --steps %d "
                                    "--outputs %s%s", H, T, kl, k ? " --ref-bits 512" : "");
        int st = judge_run(args, dir, k ? "la-mpfr" : "la-dd", &out[k], &js[k]);
        CHECK_MSG(st == 0 || st == 1, "vla-check %s: exit %d", args, st);
    }
    const char *fell = "exact (MPFR, 256 bits: the double-double reference of 1 reference failed "
                       "its check against MPFR on head 0 (largest relative difference not finite "
                       "in one of the two, trusted to 1e-24))";
    snprintf(line, sizeof line, "# reference: %s on the inputs as given", fell);
    CHECK_MSG(out[0] && strstr(out[0], line), "the fallback's header: %s", out[0] ? out[0] : "");
    snprintf(line, sizeof line, "\"reference\": \"%s\"", fell);
    CHECK_MSG(js[0] && strstr(js[0], line), "la-dd.json: %s", js[0] ? js[0] : "");
    r0 = table_rows(out[0]), r1 = table_rows(out[1]);
    CHECK_MSG(r0 && r1 && *r0 && !strcmp(r0, r1), "the fallback's rows:\n%s\nMPFR's:\n%s",
              r0 ? r0 : "", r1 ? r1 : "");
    /* read-outs near 1e200: the errors are numbers (ones against 1e200: 1), not Inf / Inf, and
     * the summary says why there is no budget (binary64 overflows), with no NaN in its words */
    const char *sum = out[0] ? strstr(out[0], "# summary: ") : NULL;
    char sline[2000] = "";
    if (sum)
        snprintf(sline, sizeof sline, "%.*s", (int)strcspn(sum, "\n"), sum);
    CHECK_MSG(r0 && !strncmp(r0, "0 1 ", 4), "head 0's row: %s", r0 ? r0 : "");
    CHECK_MSG(!strstr(sline, "nan") && strstr(sline, "and no budget: vlastab's own f64 run of "
                                                     "these inputs (seq) is not finite"),
              "the summary: %s", sline);
    for (int k = 0; k < 2; k++)
        free(out[k]), free(js[k]);
    free(r0), free(r1);
    free(o);
    if (!getenv("VLA_KEEP")) {
        snprintf(args, sizeof args, "rm -rf '%s'", dir);
        CHECK(system(args) == 0);
    }
}

/* head h's inputs from the trace, for vla_grad */
typedef struct {
    const vla_inputs *x;
    int h;
} gin_ctx;
static int gin_of(void *ctx, long t, vla_input *in)
{
    const gin_ctx *g = ctx;
    *in = g->x->in[(long)g->h * T + t]; /* the trace's T steps */
    return VLA_OK;
}

/* the gradients' rows of a judge's JSON, from "grads" to the summary (NULL where none) */
static char *grad_rows(const char *js)
{
    const char *a = js ? strstr(js, "\"grads\": [") : NULL;
    const char *b = a ? strstr(a, "\"summary\"") : NULL;
    return b ? strndup(a, (size_t)(b - a)) : NULL;
}

/* The gradients' exact backward (judge_gradients' folders): in double-double once its check on
 * head 0's first steps passes, said in the header and the JSON; with a broken double-double
 * (VLA_DD_FAULT=m: every product's low part dropped) the check fails, MPFR runs instead and says
 * why; with --ref-bits 512, MPFR alone. The three give the same rows to the last digit. */
static void grads_reference_cases(const char *tr, const char *ko, const char *dir)
{
    static const char *const env[3] = {"", "VLA_DD_FAULT=m ", ""};
    static const char *const says[3] = {
        "against the exact seq backward in double-double (106 bits), checked against MPFR's at "
        "256 bits on head 0's first 256 steps: largest relative difference ",
        "against the exact seq backward in MPFR at 256 bits: the double-double one differed from "
        "it by ",
        "against the exact seq backward (MPFR at 512 bits): rows"};
    char cmd[1200], path[200], *rows[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "%sbin/vla-check trace:%s --outputs %s %s--report %s/g%d --out "
                                  "%s/g%d.dat >/dev/null 2>&1",
                 env[k], tr, ko, k == 2 ? "--ref-bits 512 " : "", dir, k, dir, k);
        int st = vla_test_sh(NULL, "%s", cmd);
        snprintf(path, sizeof path, "%s/g%d.dat", dir, k);
        char *t = read_all(path, NULL);
        snprintf(path, sizeof path, "%s/g%d.json", dir, k);
        char *js = read_all(path, NULL);
        CHECK_MSG(st == 0 && t && strstr(t, says[k]) && js && strstr(js, "\"grads_reference\": "),
                  "%s: exit %d, table: %s", cmd, st, t ? t : "");
        if (k == 1)
            CHECK_MSG(t && strstr(t, "(more than 1e-24) on head 0's first 256 steps, so it was not "
                                     "used"), "the fallback's header: %s", t ? t : "");
        rows[k] = grad_rows(js);
        free(t), free(js);
    }
    CHECK_MSG(rows[0] && rows[1] && rows[2] && !strcmp(rows[0], rows[2]) &&
                  !strcmp(rows[1], rows[2]),
              "the gradients' rows: dd\n%s\nfallen back\n%s\nMPFR\n%s", rows[0] ? rows[0] : "",
              rows[1] ? rows[1] : "", rows[2] ? rows[2] : "");
    for (int k = 0; k < 3; k++)
        free(rows[k]);
}

/* vla-check --outputs with gradients, without torch: the "kernel's" backward is
 * vlastab's own binary64 one (vla_grad) on the trace, do_t standard normals. Ok (its error is the
 * attainable one); dk of head 1 at t = 100 moved by 5% with --window 1: beyond, dk and its t
 * named; a NaN in dk: beyond from its t; a NaN in do.npy, dq saved (T, heads, d), dbeta for
 * mamba2, and a gradient without do.npy: exit 2 naming the file. */
TEST(judge_gradients)
{
    char p[600];
    snprintf(p, sizeof p, "%s/vla-check", vla_test_bin_dir());
    if (access(p, X_OK)) {
        vla_test_skip("bin/vla-check not built (run make first)");
        return;
    }
    char dir[64] = "/tmp/vla-judge-grad.XXXXXX", tr[100], ko[100], path[200], cmd[1200];
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "cannot make a folder under /tmp");
        return;
    }
    snprintf(tr, sizeof tr, "%s/tr", dir);
    snprintf(ko, sizeof ko, "%s/kernel", dir);
    mkdir(tr, 0700);
    mkdir(ko, 0700);
    const size_t n = (size_t)H * T * D;
    double *o = malloc(sizeof(double) * n), *c = malloc(sizeof(double) * n);
    double *g[5] = {malloc(sizeof(double) * n), malloc(sizeof(double) * n),
                    malloc(sizeof(double) * n), malloc(sizeof(double) * H * T),
                    malloc(sizeof(double) * H * T)};
    vla_inputs x;
    vla_config cfg;
    vla_config_default(&cfg, VLA_GDN, D);
    cfg.dv = D;
    cfg.prec = VLA_F64;
    char stream[200];
    vla_error err = {0};
    snprintf(stream, sizeof stream, "trace:%s", tr);
    int bad = !o || !c || !g[0] || !g[1] || !g[2] || !g[3] || !g[4] || write_trace(tr) ||
              own_run(tr, VLA_F64, o, NULL) ||
              vla_inputs_draw(&x, stream, 1, D, D, H, T, vla_model_reads(&cfg), &err);
    CHECK_MSG(!bad, "cannot write the trace or run it: %s", err.msg);
    for (size_t i = 0; !bad && i < n; i++)
        c[i] = vla_gauss(5, VLA_VAR_AUX, 0, (uint64_t)i, 0);
    for (int h = 0; !bad && h < H; h++) {
        gin_ctx gc = {&x, h};
        vla_grads gr = {g[0] + (size_t)h * T * D, g[1] + (size_t)h * T * D,
                        g[2] + (size_t)h * T * D, g[3] + (size_t)h * T, g[4] + (size_t)h * T,
                        NULL, NULL, NULL, NULL};
        bad = vla_grad(&cfg, T, gin_of, &gc, c + (size_t)h * T * D, &gr) != 0;
    }
    CHECK_MSG(!bad, "vla_grad failed");
    if (bad) {
        free(o), free(c);
        for (int i = 0; i < 5; i++)
            free(g[i]);
        return;
    }
    vla_inputs_free(&x);
    static const char *const gn[5] = {"dq", "dk", "dv", "dbeta", "dg"};
    const long shape[3] = {H, T, D}, tshape[3] = {T, H, D}, sshape[2] = {H, T};
    snprintf(path, sizeof path, "%s/o.npy", ko);
    CHECK(vla_npy_write(path, o, 3, shape) == 0);
    snprintf(path, sizeof path, "%s/do.npy", ko);
    CHECK(vla_npy_write(path, c, 3, shape) == 0);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s.npy", ko, gn[i]);
        CHECK(vla_npy_write(path, g[i], i < 3 ? 3 : 2, i < 3 ? shape : sshape) == 0);
    }
    struct {
        const char *what, *extra;
        int status;
        const char *says;
    } cases[] = {
        {"own binary64 gradients", "", 0, "gradients: 0 of 10 beyond"},
        {"dk moved by 5%", "--window 1", 1, "dk of head 1: "},
        {"a NaN in dk", "", 1, "dk of head 0 not finite from t = 31"},
        {"a NaN in do", "", 2, "do.npy: NaN at [0, 3, 1]"},
        {"dq saved (T, heads, d)", "", 2, "dq.npy: shape (256, 2, 16), expected (heads, T, d) = "
                                          "(2, 256, 16)"},
        {"dbeta for mamba2", "--model mamba2", 2, "dbeta.npy: mamba2 has no beta"},
        /* the gated family takes phi(q) with features=own (its column phi) */
        {"dq with features=own", "--set features=own", 2,
         "gdn's backward gives the gradient with respect to phi(q)"},
        {"no do.npy", "", 2, "dq.npy needs"},
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        char gpath[200];
        if (k == 1) { /* dk of head 1 at t = 100, 5% */
            for (int j = 0; j < D; j++)
                g[1][((size_t)1 * T + 99) * D + j] *= 1.05;
        } else if (k == 2) {
            for (int j = 0; j < D; j++)
                g[1][((size_t)1 * T + 99) * D + j] /= 1.05;
            g[1][((size_t)0 * T + 30) * D + 1] = NAN;
        } else if (k == 3) {
            g[1][((size_t)0 * T + 30) * D + 1] = 0;
            c[((size_t)0 * T + 3) * D + 1] = NAN;
        }
        snprintf(gpath, sizeof gpath, "%s/dk.npy", ko);
        CHECK(vla_npy_write(gpath, g[1], 3, shape) == 0);
        snprintf(gpath, sizeof gpath, "%s/do.npy", ko);
        CHECK(vla_npy_write(gpath, c, 3, shape) == 0);
        if (k == 4) {
            c[((size_t)0 * T + 3) * D + 1] = 0;
            CHECK(vla_npy_write(gpath, c, 3, shape) == 0);
            snprintf(gpath, sizeof gpath, "%s/dq.npy", ko);
            CHECK(vla_npy_write(gpath, g[0], 3, tshape) == 0);
        } else if (k == 5) {
            snprintf(gpath, sizeof gpath, "%s/dq.npy", ko);
            CHECK(vla_npy_write(gpath, g[0], 3, shape) == 0);
        } else if (k == 7) {
            unlink(gpath);
        }
        snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s %s --report %s/r >/dev/null "
                                  "2>%s/err",
                 tr, ko, cases[k].extra, dir, dir);
        int st = vla_test_sh(NULL, "%s", cmd);
        snprintf(p, sizeof p, "%s/err", dir);
        char *e = read_all(p, NULL);
        CHECK_MSG(st == cases[k].status && e && strstr(e, cases[k].says) &&
                      (k != 1 || strstr(e, "at t = 100 past its budget")),
                  "%s: %s: exit %d (expected %d), stderr: %s", cases[k].what, cmd, st,
                  cases[k].status, e ? e : "");
        free(e);
        if (k == 0) { /* the JSON's rows: ten, each ok, its error the attainable one exactly */
            snprintf(p, sizeof p, "%s/r.json", dir);
            char *js = read_all(p, NULL);
            int nrow = 0;
            for (const char *s = js; s && (s = strstr(s, "\"grad\": ")); s++)
                nrow++;
            CHECK_MSG(js && nrow == 10 && !strstr(js, "\"beyond\""), "r.json: %d rows: %s", nrow,
                      js ? js : "");
            free(js);
            grads_reference_cases(tr, ko, dir);
        }
    }
    free(o), free(c);
    for (int i = 0; i < 5; i++)
        free(g[i]);
    if (!getenv("VLA_KEEP")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
}

/* What the judge reads is never written or waited on: --out or --report naming a file of DIR2
 * (o.npy by its name, S.npy through a hard link) is refused before any work and the file keeps
 * its bytes; a FIFO at DIR2/dtype.txt is refused, not opened (it would block the reader); a
 * dangling S.npy is refused, not passed over as absent */
TEST(judge_never_writes_or_waits_on_its_inputs)
{
    char p[600];
    char dir[64] = "/tmp/vla-judge-files.XXXXXX", tr[100], ko[100], path[200], other[200];
    char cmd[1200];
    double *o, S[H * D * D];
    const long shape[3] = {H, T, D}, sshape[3] = {H, D, D};
    if (judge_setup(dir, tr, ko, &o, S))
        return;
    snprintf(path, sizeof path, "%s/o.npy", ko);
    CHECK(vla_npy_write(path, o, 3, shape) == 0);
    char *before = read_all(path, NULL);
    snprintf(p, sizeof p, "%s/S.npy", ko);
    CHECK(vla_npy_write(p, S, 3, sshape) == 0);
    snprintf(other, sizeof other, "%s/table.dat", dir);
    CHECK(link(p, other) == 0);
    const struct {
        const char *out, *says;
    } cases[] = {{path, "is your kernel's"}, {other, "is your kernel's"}};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s --out %s --report none "
                                  "2>%s/err", tr, ko, cases[k].out, dir);
        int st = vla_test_sh(NULL, "%s", cmd);
        snprintf(p, sizeof p, "%s/err", dir);
        char *e = read_all(p, NULL), *after = read_all(path, NULL);
        CHECK_MSG(st == 2 && e && strstr(e, cases[k].says) && after && before &&
                      !memcmp(after, before, 1000),
                  "--out %s: exit %d, stderr: %s", cases[k].out, st, e ? e : "");
        free(e), free(after);
    }
    unlink(other);
    snprintf(p, sizeof p, "%s/dtype.txt", ko);
    CHECK(mkfifo(p, 0600) == 0);
    snprintf(cmd, sizeof cmd, "timeout 60 bin/vla-check trace:%s --outputs %s --out - --report none "
                              ">/dev/null 2>%s/err", tr, ko, dir);
    int st = vla_test_sh(NULL, "%s", cmd);
    snprintf(p, sizeof p, "%s/err", dir);
    char *e = read_all(p, NULL);
    CHECK_MSG(st == 2 && e && strstr(e, "dtype.txt: a FIFO"), "a FIFO at dtype.txt: exit %d: %s",
              st, e ? e : "");
    free(e);
    snprintf(p, sizeof p, "%s/dtype.txt", ko);
    unlink(p);
    snprintf(p, sizeof p, "%s/S.npy", ko);
    unlink(p);
    CHECK(symlink("/nonexistent/S.npy", p) == 0);
    st = vla_test_sh(NULL, "%s", cmd);
    snprintf(p, sizeof p, "%s/err", dir);
    e = read_all(p, NULL);
    CHECK_MSG(st == 2 && e && strstr(e, "S.npy"), "a dangling S.npy: exit %d: %s", st,
              e ? e : "");
    free(e), free(before), free(o);
    if (!getenv("VLA_KEEP")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
}

/* A trace with S0.npy: the kernel that starts from it (vlastab's own binary64 run, which the
 * engine starts from the trace's S_0) is ok, within d T u of the exact run from S_0 and at exactly
 * the attainable error (the same run); the same kernel from S_0 = 0 is beyond in both heads (its
 * read-outs off by O(1), for a budget near 1e-13); the header names S0.npy; gradients on such a
 * trace, and dS0.npy on any, are refused (exit 2): vlastab's backward starts from 0 */
TEST(judge_initial_state)
{
    char dir[64] = "/tmp/vla-judge-test.XXXXXX", tr[100], ko[100], path[200], s0[200], away[200];
    double *o, S[H * D * D], S0[H * D * D];
    if (judge_setup(dir, tr, ko, &o, S))
        return;
    for (int i = 0; i < H * D * D; i++)
        S0[i] = vla_gauss(12, 0, 0, (uint64_t)i, 0);
    const long shape[3] = {H, T, D}, sshape[3] = {H, D, D};
    snprintf(s0, sizeof s0, "%s/S0.npy", tr);
    snprintf(away, sizeof away, "%s/S0.away", dir);
    CHECK(vla_npy_write(s0, S0, 3, sshape) == 0);
    double v[H][NC];
    char verdict[H][16], *out = NULL;
    const double u53 = ldexp(1, -53);
    for (int from0 = 0; from0 < 2; from0++) {
        if (from0)
            CHECK(rename(s0, away) == 0); /* the kernel's run from 0, judged from S_0 */
        CHECK(own_run(tr, VLA_F64, o, S) == 0);
        if (from0)
            CHECK(rename(away, s0) == 0);
        snprintf(path, sizeof path, "%s/o.npy", ko);
        CHECK(vla_npy_write(path, o, 3, shape) == 0);
        snprintf(path, sizeof path, "%s/S.npy", ko);
        CHECK(vla_npy_write(path, S, 3, sshape) == 0);
        int st = vla_test_sh(&out, "bin/vla-check trace:%s --outputs %s --report none --out - "
                             "2>/dev/null", tr, ko);
        CHECK_EQ_INT(rows(out, v, verdict), H);
        CHECK_MSG(strstr(out, "# files: q.npy k.npy v.npy beta.npy logdecay.npy S0.npy\n"),
                  "%s", out);
        for (int h = 0; h < H; h++)
            if (!from0)
                CHECK_MSG(st == 0 && v[h][C_MRW] <= D * T * u53 && v[h][C_MRW] == v[h][C_SEQ] &&
                              !strcmp(verdict[h], "ok"),
                          "from S_0, head %d: exit %d, %g (attainable %g, d T u %g), %s", h, st,
                          v[h][C_MRW], v[h][C_SEQ], D * T * u53, verdict[h]);
            else
                CHECK_MSG(st == 1 && v[h][C_MRW] > 1e-3 && !strcmp(verdict[h], "beyond"),
                          "from 0, judged from S_0, head %d: exit %d, %g, %s", h, st,
                          v[h][C_MRW], verdict[h]);
        free(out), out = NULL;
    }
    /* gradients from an initial state, and dS0.npy: refused, naming the file */
    static const char *const refused[][2] = {
        {"dq.npy", "the trace starts from S0.npy, and vlastab's backward starts from S_0 = 0"},
        {"dS0.npy", "the initial state's cotangent is not judged"}};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", ko, refused[i][0]);
        CHECK(vla_npy_write(path, o, 3, shape) == 0);
        int st = vla_test_sh(&out, "bin/vla-check trace:%s --outputs %s --report none --out - "
                             "2>&1", tr, ko);
        CHECK_MSG(st == 2 && strstr(out, refused[i][0]) && strstr(out, refused[i][1]),
                  "%s: exit %d, %s", refused[i][0], st, out);
        free(out), out = NULL;
        unlink(path);
    }
    vla_test_sh(NULL, "rm -rf %s", dir);
    free(o);
}
