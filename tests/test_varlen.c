/* test_varlen.c: packed sequences in a trace (cu_seqlens.npy, docs/trace.md): the engine's run of
 * a packed gdn trace restarts each sequence from its own S0.npy row, so that every read-out and
 * the final state are the same bits as each sequence run alone from its state, in f64, f32 and
 * the chunk form (chunks of 4, the sequences' starts multiples of 4, as fla's varlen kernels cut
 * chunks per sequence); and the bad files and forms refused with exit 2. The kernels' outputs
 * judged by vla-check --outputs (a leak between sequences, an S0 not read) are tests/test_varlen.py,
 * against numpy written from the published equations. */
#include "check.h"
#include "proc.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define H 2
#define T 48
#define D 8
#define DV 4
#define NS (DV * D)
#define NSEQ 3
static const long cu[NSEQ + 1] = {0, 20, 32, 48};

/* the read-outs of every step (H x T x DV) and the final states, kept by on_step */
typedef struct {
    double o[H * T * DV];
} outs_t;

static int keep(void *ctx, const vla_step_view *v)
{
    outs_t *x = ctx;
    if (v->co)
        memcpy(x->o + ((size_t)v->run * T + v->t - v->nco) * DV, v->co,
               (size_t)v->nco * DV * sizeof(double));
    else if (v->o)
        memcpy(x->o + ((size_t)v->run * T + v->t - 1) * DV, v->o, DV * sizeof(double));
    return 0;
}

/* trace:DIR's gdn run of `steps` steps in prec and form (chunk C > 1, else seq): read-outs into
 * x (at rows 0 .. steps - 1 of each head), final states into S (H x NS); 0, else the code */
static int run_trace(const char *dir, long steps, vla_prec prec, int C, outs_t *x, double *S)
{
    char stream[200];
    snprintf(stream, sizeof stream, "trace:%s", dir);
    vla_engine_spec sp;
    memset(&sp, 0, sizeof sp);
    vla_config_default(&sp.cfg, VLA_GDN, D);
    sp.cfg.dv = DV;
    sp.cfg.prec = prec;
    if (C > 1)
        sp.cfg.form = VLA_FORM_CHUNK, sp.cfg.chunk = C;
    sp.runs = H;
    sp.stream = stream;
    sp.round_inputs = VLA_FMT_F64;
    sp.taps = VLA_TAP_O;
    sp.on_step = keep;
    sp.ctx = x;
    vla_engine *e;
    vla_error err;
    int r = vla_engine_new(&e, &sp, &err);
    CHECK_MSG(r == 0, "engine: %s", err.msg);
    if (r)
        return r;
    if (!(r = vla_engine_advance(e, steps)) && !(r = vla_engine_finish(e)))
        for (int h = 0; !r && h < H; h++)
            r = vla_engine_get(e, h, VLA_Q_S, S + (size_t)h * NS);
    CHECK_MSG(r == 0, "run: %s", vla_engine_error(e)->msg);
    vla_engine_free(e);
    return r;
}

/* steps a .. b - 1 of DIR/name.npy ((H, T, w) or (H, T)) into DIR2/name.npy */
static void slice(const char *dir, const char *dir2, const char *name, long a, long b)
{
    char path[400];
    vla_npy x;
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    CHECK(vla_npy_read(path, &x, NULL) == 0);
    const long w = x.ndim == 3 ? x.shape[2] : 1, n = b - a;
    double *y = malloc(sizeof(double) * H * n * w);
    for (long h = 0; y && h < H; h++)
        memcpy(y + h * n * w, x.data + (h * T + a) * w, sizeof(double) * n * w);
    const long shape[3] = {H, n, w};
    snprintf(path, sizeof path, "%s/%s.npy", dir2, name);
    CHECK(y && vla_npy_write(path, y, x.ndim, shape) == 0);
    free(y);
    vla_npy_free(&x);
}

/* S0 rows (NSEQ x H x NS): fixed numbers of either sign, some not binary32's */
static void fill_S0(double *S0)
{
    for (long i = 0; i < NSEQ * H * NS; i++)
        S0[i] = 0.3 * vla_gauss(7, (vla_var)0, 0, (uint64_t)i, 0);
}

TEST(varlen_packed_is_each_sequence_alone)
{
    char dir[64] = "/tmp/vla-varlen-test.XXXXXX", path[300], one[100];
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "cannot make a folder under /tmp");
        return;
    }
    static double S0[NSEQ * H * NS];
    fill_S0(S0);
    CHECK(write_gdn_trace(dir, H, T, D, DV, 31, VLA_FMT_F64) == 0);
    snprintf(path, sizeof path, "%s/cu_seqlens.npy", dir);
    CHECK(write_npy_ints(path, "<i8", cu, NSEQ + 1) == 0);
    const long s0shape[4] = {NSEQ, H, DV, D};
    snprintf(path, sizeof path, "%s/S0.npy", dir);
    CHECK(vla_npy_write(path, S0, 4, s0shape) == 0);
    static const char *const names[] = {"q", "k", "v", "beta", "logdecay"};
    static const struct {
        vla_prec prec;
        int C;
    } runs[] = {{VLA_F64, 1}, {VLA_F32, 1}, {VLA_F64, 4}, {VLA_BF16_KERN, 1}};
    for (size_t c = 0; c < sizeof runs / sizeof *runs; c++) {
        static outs_t packed, alone;
        double Sp[H * NS], Sa[H * NS];
        CHECK(run_trace(dir, T, runs[c].prec, runs[c].C, &packed, Sp) == 0);
        long same = 0, differ = 0;
        for (int i = 0; i < NSEQ; i++) { /* sequence i alone, from its row of S0 */
            const long a = cu[i], n = cu[i + 1] - cu[i];
            snprintf(one, sizeof one, "%s/seq%d", dir, i);
            mkdir(one, 0700);
            for (int f = 0; f < 5; f++)
                slice(dir, one, names[f], a, cu[i + 1]);
            const long shape[3] = {H, DV, D};
            snprintf(path, sizeof path, "%s/S0.npy", one);
            CHECK(vla_npy_write(path, S0 + (size_t)i * H * NS, 3, shape) == 0);
            memset(&alone, 0, sizeof alone);
            CHECK(run_trace(one, n, runs[c].prec, runs[c].C, &alone, Sa) == 0);
            for (int h = 0; h < H; h++)
                for (long t = 0; t < n * DV; t++) {
                    const double x = packed.o[((size_t)h * T + a) * DV + t], y = alone.o[h * T * DV + t];
                    memcmp(&x, &y, sizeof x) ? differ++ : same++;
                }
        }
        /* the last sequence's final state is the packed run's */
        CHECK_MSG(!memcmp(Sp, Sa, sizeof Sp), "%s chunk:%d: the final state differs from the last "
                  "sequence's alone", vla_prec_name(runs[c].prec), runs[c].C);
        CHECK_MSG(differ == 0 && same == (long)H * T * DV, "%s chunk:%d: %ld read-out numbers "
                  "differ from the sequences alone (%ld the same)", vla_prec_name(runs[c].prec),
                  runs[c].C, differ, same);
    }
    /* the same trace without the restarts differs from the second sequence's first token on (the
     * check can fail): cu_seqlens.npy and S0.npy's rows gone, S0 row 0 kept */
    {
        static outs_t packed, flat;
        double Sp[H * NS];
        CHECK(run_trace(dir, T, VLA_F64, 1, &packed, Sp) == 0);
        snprintf(path, sizeof path, "%s/cu_seqlens.npy", dir);
        remove(path);
        const long shape[3] = {H, DV, D};
        snprintf(path, sizeof path, "%s/S0.npy", dir);
        CHECK(vla_npy_write(path, S0, 3, shape) == 0);
        CHECK(run_trace(dir, T, VLA_F64, 1, &flat, Sp) == 0);
        CHECK_MSG(!memcmp(packed.o, flat.o, sizeof(double) * cu[1] * DV) &&
                      memcmp(packed.o + cu[1] * DV, flat.o + cu[1] * DV, sizeof(double) * DV),
                  "without cu_seqlens.npy: the first sequence the same, the second's first token "
                  "not");
    }
    vla_test_sh(NULL, "rm -rf %s", dir);
}

TEST(varlen_bad_files_refused)
{
    char dir[64] = "/tmp/vla-varlen-test.XXXXXX", tr[100], ko[100], path[300];
    if (judge_folder(dir, tr, ko, "ko"))
        return;
    CHECK(write_gdn_trace(tr, H, T, D, DV, 31, VLA_FMT_F64) == 0);
    static double S0[NSEQ * H * NS];
    fill_S0(S0);
    static const long down[] = {0, 30, 20, 48}, first[] = {5, 20, 48}, last[] = {0, 20, 40},
                      one[] = {0};
    static const struct {
        const char *what;
        const long *cu;
        int n, s0rows; /* the cu_seqlens.npy entries (-1: floats, -2: none); S0.npy's rows
                        * (0: none, -1: (heads, dv, d)) */
        const char *cmd, *says;
    } cases[] = {
        {"not increasing", down, 4, 0, "", "entry 2 is 20, not above the one before, 30"},
        {"not from 0", first, 3, 0, "", "entry 0 is 5: the entries must start at 0"},
        {"short of T", last, 3, 0, "", "its last entry is 40, expected T = 48"},
        {"one entry", one, 1, 0, "", "shape (1,), expected (N + 1,) with N >= 1"},
        {"floats", cu, -1, 0, "", "cu_seqlens.npy: unsupported dtype '<f8' (integers only"},
        {"one S0 for 3 sequences", cu, 4, -1, "", "one initial state for the 3 packed sequences"},
        {"2 S0 rows for 3", cu, 4, 2, "", "2 initial states for the 3 packed sequences"},
        {"S0 rows without cu_seqlens", cu, -2, 3, "", "the trace has no cu_seqlens.npy"},
        {"a chunk across a start", cu, 4, 3, "--outputs KO --form chunk:16",
         "sequence 1 starts after token 20, inside a chunk of 16"},
        {"the scan form", cu, 4, 3, "--outputs KO --form scan",
         "the scan form folds the state of every step into one prefix"},
        {"vla3", cu, 4, 0, "--outputs KO --model vla3", "vla3 keeps A"},
        {"mamba3", cu, 4, 0, "--outputs KO --model mamba3", "mamba3 carries the last token's"},
        {"a program without restarts", cu, 4, 0, "STATENORM",
         "the trace packs 3 sequences (cu_seqlens.npy), at whose starts vla-statenorm restarts"},
        {"--states", cu, 4, 0, "--states KO", "--states: the trace packs 3 sequences"},
    };
    const double zeros[H * T * DV] = {0};
    const long oshape[3] = {H, T, DV};
    snprintf(path, sizeof path, "%s/o.npy", ko);
    CHECK(vla_npy_write(path, zeros, 3, oshape) == 0);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char *out = NULL, cmd[400];
        vla_test_sh(NULL, "rm -f %s/cu_seqlens.npy %s/S0.npy", tr, tr);
        snprintf(path, sizeof path, "%s/cu_seqlens.npy", tr);
        if (cases[c].n == -1) {
            const double f[NSEQ + 1] = {0, 20, 32, 48};
            CHECK(vla_npy_write(path, f, 1, (const long[]){NSEQ + 1}) == 0);
        } else if (cases[c].n > 0) {
            CHECK(write_npy_ints(path, "<i8", cases[c].cu, cases[c].n) == 0);
        }
        snprintf(path, sizeof path, "%s/S0.npy", tr);
        if (cases[c].s0rows)
            CHECK(vla_npy_write(path, S0, cases[c].s0rows < 0 ? 3 : 4,
                                cases[c].s0rows < 0 ? (const long[]){H, DV, D}
                                                    : (const long[]){cases[c].s0rows, H, DV, D}) == 0);
        if (!strcmp(cases[c].cmd, "STATENORM"))
            snprintf(cmd, sizeof cmd, "bin/vla-statenorm --stream trace:%s --steps 8", tr);
        else if (!strncmp(cases[c].cmd, "--outputs KO", 12) || !strncmp(cases[c].cmd, "--states", 8))
            snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s %s %s", tr,
                     cases[c].cmd[2] == 'o' ? "--outputs" : "--states", ko),
                snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%s",
                         cases[c].cmd + (cases[c].cmd[2] == 'o' ? 12 : 11));
        else
            snprintf(cmd, sizeof cmd, "bin/vla-check trace:%s --outputs %s", tr, ko);
        const int st = vla_test_sh(&out, "%s 2>&1 >/dev/null", cmd);
        CHECK_MSG(st == 2 && out && strstr(out, cases[c].says), "%s: exit %d, %s (expected exit "
                  "2 and '%s')", cases[c].what, st, out ? out : "", cases[c].says);
        free(out);
    }
    vla_test_sh(NULL, "rm -rf %s", dir);
}
