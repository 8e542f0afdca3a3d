/* test_scale.c: what a production layer's check costs in memory. A trace is read from its .npy
 * files a block of steps at a time (lib/stream.c), and vla-check keeps per-row statistics and a
 * ring of read-outs, so the peak memory of a check does not grow with T: a 32x longer trace may
 * cost less than one head's q in binary64 more. (Read whole, the trace cost every stream, one
 * per engine and head, its head's q, k and v: 2 engines x 2 heads x 3 x 8 MB here.) Its judge of
 * a kernel's read-outs (--outputs) streams them too: an 8x longer trace costs less than one
 * head's read-outs more; and it judges a kernel's gradients a head and a block of steps at a
 * time: 16 heads cost less than one head's arrays more than 2, and 8 times the steps no more
 * than the backwards' checkpoints and the measures' 16 bytes a step. Its judge of a cache's saved
 * states (--states) keeps no trajectory: a 32x longer trace costs less than one head's q more. */
#include "check.h"
#include "proc.h"
#include "vlastab.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define H 2
#define D 32

static int write_trace(const char *dir, long T)
{
    static const char *names[] = {"q", "k", "v"};
    double *x = malloc(sizeof(double) * H * T * D);
    int e = !x;
    for (int f = 0; !e && f < 3; f++) {
        for (long i = 0; i < H * T * D; i++)
            x[i] = 0.5 * vla_gauss(11, (vla_var)f, 0, (uint64_t)i, 0);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[f]);
        e = vla_npy_write(path, x, 3, (long[]){H, T, D});
    }
    free(x);
    return e;
}

/* vlastab's own run of la in f32 on the trace in tdir, its read-outs saved as a kernel's would be:
 * odir/o.npy (H x T x D, float64 holding binary32 numbers) */
typedef struct {
    double *o;
    long T;
} keep_t;

static int keep_o(void *ctx, const vla_step_view *v)
{
    const keep_t *k = ctx;
    if (v->o)
        memcpy(k->o + ((size_t)v->run * k->T + (size_t)(v->t - 1)) * D, v->o, D * sizeof *v->o);
    return VLA_OK;
}

static int write_outputs(const char *tdir, const char *odir, long T)
{
    char stream[420], path[420];
    snprintf(stream, sizeof stream, "trace:%s", tdir);
    snprintf(path, sizeof path, "%s/o.npy", odir);
    keep_t k = {malloc(sizeof(double) * H * T * D), T};
    vla_engine_spec sp;
    memset(&sp, 0, sizeof sp);
    vla_config_default(&sp.cfg, VLA_LA, D);
    sp.cfg.dv = D;
    sp.cfg.prec = VLA_F32;
    sp.runs = H;
    sp.stream = stream;
    sp.round_inputs = VLA_FMT_F64;
    sp.taps = VLA_TAP_O;
    sp.on_step = keep_o;
    sp.ctx = &k;
    vla_engine *e;
    int r = !k.o || mkdir(odir, 0755) || vla_engine_new(&e, &sp, NULL);
    if (!r) {
        r = vla_engine_advance(e, T) || vla_npy_write(path, k.o, 3, (long[]){H, T, D});
        vla_engine_free(e);
    }
    free(k.o);
    return r;
}

/* odir as a cache's saved states (vla-check --states): S_0 = 0 at position 0, and at T / 2 the
 * same 0 (mislabelled: the content of position 0) */
static int write_states(const char *odir, long T)
{
    char path[420];
    double *x = calloc(2 * H * D * D, sizeof *x);
    const long pos[2] = {0, T / 2};
    snprintf(path, sizeof path, "%s/states.npy", odir);
    int r = !x || mkdir(odir, 0755) || vla_npy_write(path, x, 4, (long[]){2, H, D, D});
    snprintf(path, sizeof path, "%s/positions.npy", odir);
    free(x);
    return r || write_npy_ints(path, "<i8", pos, 2);
}

/* vla-check's peak memory in kB, rss[i], on a trace of Ts[i] steps: its table's gdn f32 row, or
 * (judge 1) its judge of vlastab's own la f32 run as a kernel's read-outs (ok: the error is the
 * attainable one), or (judge 2) its judge of a cache's states (gdn, one mislabelled: exit 1);
 * 0 when it is not built (skipped) */
static int peaks(const long Ts[2], int judge, long rss[2])
{
    const char *check;
    char dir[300];
    if (!begin(dir, sizeof dir, 1, "vla-check", &check))
        return 0;
    for (int i = 0; i < 2; i++) {
        char tdir[400], odir[400], stream[420], out[420];
        snprintf(tdir, sizeof tdir, "%s/T%ld", dir, Ts[i]);
        snprintf(odir, sizeof odir, "%s/o%ld", dir, Ts[i]);
        snprintf(stream, sizeof stream, "trace:%s", tdir);
        snprintf(out, sizeof out, "%s/t%ld.dat", dir, Ts[i]);
        CHECK_MSG(!mkdir(tdir, 0755) && !write_trace(tdir, Ts[i]) &&
                      (!judge || !(judge == 1 ? write_outputs(tdir, odir, Ts[i])
                                               : write_states(odir, Ts[i]))),
                  "cannot write %s or %s", tdir, odir);
        char *table[] = {(char *)check, stream, "--models", "gdn", "--precisions", "f32",
                         "--forms", "seq", "--report", "none", "--out", out, NULL};
        char *judged[] = {(char *)check, stream, "--model", "la", "--precision", "f32",
                          "--outputs", odir, "--report", "none", "--out", out, NULL};
        char *states[] = {(char *)check, stream, "--model", "gdn", "--states", odir, "--ref",
                          "f64", "--out", out, NULL};
        char *const *argv = judge == 2 ? states : judge ? judged : table;
        child ch;
        CHECK_MSG(!spawn_measured(&ch, argv), "cannot start %s", check);
        int st = finish(&ch, 600);
        char *msg = read_all(ch.err, NULL);
        CHECK_MSG(st == (judge == 2) && (judge < 2 || strstr(msg, "state 1: label t=")),
                  "vla-check%s on T = %ld: exit %d: %s", judge == 2 ? " --states"
                  : judge ? " --outputs" : "", Ts[i], st, msg ? msg : "");
        free(msg);
        unlink(ch.err);
        rss[i] = ch.maxrss_kb;
    }
    remove_tree(dir);
    return 1;
}

/* The peaks at T0 and T1 = 8 or 32 T0 differ by less than one head's q (or read-outs) in
 * binary64, T1 D doubles (in kB); judge: peaks' */
static void memory_flat(long T0, long T1, int judge)
{
#ifdef __SANITIZE_ADDRESS__
    /* its quarantine keeps freed blocks (256 MB by default), so the peak is the allocator's: in
     * make test-san, 607 MB at T = 1024 and 626 MB at T = 32768 (the table) */
    vla_test_skip("AddressSanitizer's quarantine holds freed blocks: the peak is not the program's");
    return;
#endif
    const long Ts[2] = {T0, T1}, bound = T1 * D * 8 / 1024;
    long rss[2];
    if (!peaks(Ts, judge, rss))
        return;
    CHECK_MSG(rss[1] - rss[0] < bound,
              "peak memory %ld kB at T = %ld, %ld kB at T = %ld: it grows with T (bound %ld kB)",
              rss[1], T1, rss[0], T0, bound);
    printf("  peak memory: %ld kB at T = %ld, %ld kB at T = %ld\n", rss[0], T0, rss[1], T1);
}

TEST_SLOW(check_memory_does_not_grow_with_T) { memory_flat(1024, 32768, 0); }

/* The judge of a kernel's own read-outs (vla-check --outputs) streams as well: o.npy
 * read a window of steps at a time beside its runs, and per head running sums and the last
 * --window steps' norms, not arrays of T. It kept the read-outs of the kernel and of its 4 runs
 * whole, 5 x 2 x T x 32 doubles: 18 MB more at T = 8192 than at T = 1024. The peak of two threads
 * on loaded cores varies by 1-3 MB from run to run, at T = 8192 and at 32768 alike (AMD EPYC, 2
 * cores, three busy loops beside it: growths of 0.8-3.0 MB, pre-existing; one thread: 0.2-1.0 MB),
 * which the bound of T1 = 8192 (2 MB) did not clear: T1 = 32768, bound 8 MB (those read-outs
 * whole: 80 MB more). */
TEST_SLOW(judge_memory_does_not_grow_with_T) { memory_flat(1024, 32768, 1); }

/* The judge of a cache's saved states (vla-check --states) steps its runs over t and measures
 * the states at each step: no trajectory is kept (it would be T x 2 x 32 x 32 doubles, 512 MB at
 * T = 32768) */
TEST_SLOW(states_memory_does_not_grow_with_T) { memory_flat(1024, 32768, 2); }

/* The judge of a kernel's gradients (dq.npy ... with do.npy) takes them head by head,
 * and of a head a block of its backward's K = ceil(sqrt(T)) steps at a time: a head's three
 * backwards advance together from the last block to the first, a block's inputs, do and
 * gradients read for it alone, so that its memory grows neither with the heads nor (beyond the
 * backwards' 2 sqrt(T) states and 2 doubles a step for each measure's sums, below) with T. A gdn
 * trace of nh heads x T steps (d = dv = GD), its "kernel" vlastab's own binary64 forward and
 * backward (lib's vla_grad), judged with --ref f64 (lib's binary64 backward: the same memory per
 * head as the exact one, in a fraction of the time). */
#define GD 16

/* head h's inputs (all heads drawn, T steps each), for vla_grad */
typedef struct {
    const vla_inputs *x;
    int h;
    long T;
} gin1_t;
static int gin1(void *ctx, long t, vla_input *in)
{
    const gin1_t *g = ctx;
    *in = g->x->in[(size_t)g->h * g->T + t];
    return VLA_OK;
}

static int write_gdn(const char *tdir, const char *odir, int nh, long T)
{
    static const char *names[] = {"q", "k", "v", "beta", "logdecay", "do"};
    const size_t n = (size_t)nh * T * GD;
    double *x = malloc(sizeof(double) * n);
    int e = !x || mkdir(odir, 0755);
    for (int f = 0; !e && f < 6; f++) { /* do_t: standard normals, beside the kernel's files */
        const size_t m = f == 3 || f == 4 ? (size_t)nh * T : n;
        for (size_t i = 0; i < m; i++) {
            double g = vla_gauss(11, (vla_var)f, 0, (uint64_t)i, 0);
            x[i] = f == 3 ? 1 / (1 + exp(-g)) : f == 4 ? -0.05 * fabs(g) : g;
        }
        char path[600];
        snprintf(path, sizeof path, "%s/%s.npy", f < 5 ? tdir : odir, names[f]);
        e = vla_npy_write(path, x, f == 3 || f == 4 ? 2 : 3, (long[]){nh, T, GD});
    }
    free(x);
    return e;
}

/* the kernel's o.npy and gradients: vlastab's own gdn in binary64 on the trace in tdir, do_t
 * from odir/do.npy */
static int write_gdn_kernel(const char *tdir, const char *odir, int nh, long T)
{
    char stream[420], path[620];
    vla_error err;
    snprintf(stream, sizeof stream, "trace:%s", tdir);
    snprintf(path, sizeof path, "%s/do.npy", odir);
    const size_t n = (size_t)nh * T * GD;
    static const char *names[] = {"o", "dq", "dk", "dv", "dbeta", "dg"};
    double *a[6] = {NULL};
    for (int i = 0; i < 6; i++)
        a[i] = malloc(sizeof(double) * (i < 4 ? n : (size_t)nh * T));
    vla_npy c = {0};
    vla_inputs x = {0};
    vla_config cfg;
    vla_config_default(&cfg, VLA_GDN, GD);
    cfg.dv = GD;
    cfg.prec = VLA_F64;
    int e = !a[0] || !a[1] || !a[2] || !a[3] || !a[4] || !a[5] ||
            vla_npy_read(path, &c, &err) ||
            vla_inputs_draw(&x, stream, 1, GD, GD, nh, T, vla_model_reads(&cfg), &err);
    for (int h = 0; !e && h < nh; h++) {
        const size_t at = (size_t)h * T * GD;
        vla_model *m = NULL;
        e = vla_model_new(&m, &cfg);
        for (long t = 0; !e && t < T; t++)
            e = vla_model_step(m, &x.in[(size_t)h * T + t]) ||
                vla_model_get(m, VLA_Q_O, a[0] + at + (size_t)t * GD);
        vla_model_free(m);
        gin1_t g = {&x, h, T};
        vla_grads gr = {a[1] + at, a[2] + at, a[3] + at, a[4] + (size_t)h * T,
                        a[5] + (size_t)h * T, NULL, NULL, NULL, NULL};
        e = e || vla_grad(&cfg, T, gin1, &g, c.data + at, &gr);
    }
    for (int i = 0; !e && i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s.npy", odir, names[i]);
        e = vla_npy_write(path, a[i], i < 4 ? 3 : 2, (long[]){nh, T, GD});
    }
    for (int i = 0; i < 6; i++)
        free(a[i]);
    vla_npy_free(&c);
    vla_inputs_free(&x);
    return e;
}

/* vla-check --outputs's peak memory in kB, rss[i], judging the gradients of the kernel above on
 * a trace of nh[i] heads x Ts[i] steps (each of its 5 nh[i] gradients ok: their errors are lib's
 * own, exactly); 0 when it is not built (skipped) */
static int grad_peaks(const int nh[2], const long Ts[2], long rss[2])
{
#ifdef __SANITIZE_ADDRESS__
    vla_test_skip("AddressSanitizer's quarantine holds freed blocks: the peak is not the program's");
    return 0;
#endif
    const char *check;
    char dir[300];
    if (!begin(dir, sizeof dir, 1, "vla-check", &check))
        return 0;
    for (int i = 0; i < 2; i++) {
        char tdir[400], odir[400], stream[420], out[420], want[100];
        snprintf(tdir, sizeof tdir, "%s/H%dT%ld", dir, nh[i], Ts[i]);
        snprintf(odir, sizeof odir, "%s/k%dT%ld", dir, nh[i], Ts[i]);
        snprintf(stream, sizeof stream, "trace:%s", tdir);
        snprintf(out, sizeof out, "%s/h%d.dat", dir, i);
        CHECK_MSG(!mkdir(tdir, 0755) && !write_gdn(tdir, odir, nh[i], Ts[i]) &&
                      !write_gdn_kernel(tdir, odir, nh[i], Ts[i]),
                  "cannot write %s or %s", tdir, odir);
        char *argv[] = {(char *)check, stream, "--model", "gdn", "--ref", "f64", "--outputs", odir,
                        "--report", "none", "--out", out, NULL};
        child ch;
        CHECK_MSG(!spawn_measured(&ch, argv), "cannot start %s", check);
        int st = finish(&ch, 600);
        char *msg = read_all(ch.err, NULL), *table = read_all(out, NULL);
        snprintf(want, sizeof want, "gradients: 0 of %d beyond", 5 * nh[i]);
        CHECK_MSG(st == 0 && table && strstr(table, want),
                  "vla-check --outputs with gradients, %d heads x %ld steps: exit %d: %s%s", nh[i],
                  Ts[i], st, msg ? msg : "", table ? table : "");
        free(msg), free(table);
        unlink(ch.err);
        rss[i] = ch.maxrss_kb;
    }
    remove_tree(dir);
    return 1;
}

TEST_SLOW(judge_gradients_memory_does_not_grow_with_heads)
{
    const int nh[2] = {2, 16};
    const long Ts[2] = {8192, 8192};
    long rss[2];
    if (!grad_peaks(nh, Ts, rss))
        return;
    /* one head's arrays of T steps that were kept for every head: its inputs (q k u, v g and the
     * gated family's lg a b, vla_inputs: 6 d + 2 dv numbers a step), the kernel's dq dk dv dbeta
     * dg and do, in binary64 (kB) */
    const long bound = Ts[0] * (6 * GD + 2 * GD + 3 * GD + 2 + GD) * 8 / 1024;
    CHECK_MSG(rss[1] - rss[0] < bound,
              "peak memory %ld kB with %d heads, %ld kB with %d: it grows with the heads (bound "
              "%ld kB)", rss[1], nh[1], rss[0], nh[0], bound);
    printf("  peak memory: %ld kB with %d heads, %ld kB with %d (bound on the difference: %ld "
           "kB)\n", rss[0], nh[0], rss[1], nh[1], bound);
}

/* 8 times the steps cost at most what T steps keep by design: each of the 15 measures (the 5
 * gradients' kernel, seq and rounded-inputs measures; the last are not taken at f64, counted
 * anyway) keeps 2 doubles a step for its sums (added in step order from step 1, as the read-outs'
 * are: their bits), and each of the 3 backwards 2 K states, K = ceil(sqrt(T)) (vla_state's saved
 * arrays of gdn in binary64: S, d dv numbers, and n, o, k', alpha and the solvers' 2 d + 3, 356
 * numbers at d = 16, counted as 2 d dv = 512), and the allocator 1 MB: 6.2 MB more at T = 16384
 * than at 2048 (the judge: 3.8 and 4.6 MB in two runs). A block as large as T (the backward's
 * states of T steps, 3 x T x 356 doubles, and a block's arrays of T steps) cost 172 MB more. */
TEST_SLOW(judge_gradients_memory_does_not_grow_with_T)
{
    const int nh[2] = {2, 2};
    const long Ts[2] = {2048, 16384};
    long rss[2];
    if (!grad_peaks(nh, Ts, rss))
        return;
    const long dT = Ts[1] - Ts[0], dK = vla_backward_block_len(Ts[1]) -
                                          vla_backward_block_len(Ts[0]);
    const long bound = (dT * 15 * 2 * 8 + 3 * 2 * dK * 2 * GD * GD * 8) / 1024 + 1024;
    CHECK_MSG(rss[1] - rss[0] < bound,
              "peak memory %ld kB at T = %ld, %ld kB at T = %ld: it grows with T (bound %ld kB)",
              rss[1], Ts[1], rss[0], Ts[0], bound);
    printf("  peak memory: %ld kB at T = %ld, %ld kB at T = %ld (bound on the difference: %ld "
           "kB)\n", rss[0], Ts[0], rss[1], Ts[1], bound);
}

/* A trace read by blocks can change under a running check (a file truncated or rewritten by the
 * job that makes it): the row that cannot read its steps did not run, and vla-check exits 1 (a run
 * failed, its man page says), not 0 with "0 of 0 rows fail". The file is truncated once the run
 * has said its first progress line (VLA_PROGRESS_SECONDS=0: at every block, about 300 of them),
 * so inside the run whatever the machine's speed; a run that ended first is tried again. */
TEST_SLOW(check_trace_truncated_mid_run_exits_1)
{
    const char *check;
    char dir[300];
    if (!begin(dir, sizeof dir, 1, "vla-check", &check))
        return;
    const long T = 16384;
    char stream[420], out[420], q[420], *body = NULL;
    snprintf(stream, sizeof stream, "trace:%s", dir);
    snprintf(out, sizeof out, "%s/t.dat", dir);
    snprintf(q, sizeof q, "%s/q.npy", dir);
    char *argv[] = {(char *)check, stream, "--models", "gdn", "--precisions", "f32",
                    "--forms", "seq", "--report", "none", "--out", out, NULL};
    CHECK_MSG(!write_trace(dir, T), "cannot write the trace in %s", dir);
    size_t n;
    body = read_all(q, &n);
    char msg[2000];
    int st = run(NULL, argv, NULL, msg, sizeof msg, 600);
    CHECK_MSG(st == 0, "vla-check on the whole trace: exit %d: %s", st, msg);
    char every[] = "VLA_PROGRESS_SECONDS=0";
    char *const env[] = {every, NULL};
    int hit = 0;
    for (int tries = 0; body && !hit && tries < 5; tries++) {
        write_bytes(q, body, n);
        child ch;
        CHECK_MSG(!spawn(&ch, NULL, argv, env), "cannot start %s", check);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int started = 0; !started && seconds_since(&t0) < 120;) {
            char *e = read_all(ch.err, NULL);
            started = e && strstr(e, "progress: ");
            free(e);
            if (!started)
                nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        CHECK_MSG(!truncate(q, 4096), "cannot truncate %s", q);
        st = finish(&ch, 600);
        char *err = read_all(ch.err, NULL);
        hit = err && strstr(err, "did not run");
        if (hit)
            CHECK_MSG(st == 1 && strstr(err, "exit 1"), "truncated in the run: exit %d: %s", st,
                      err);
        else
            CHECK_MSG(st == 0 || st == 2, "truncated: exit %d: %s", st, err ? err : "");
        free(err);
        unlink(ch.err);
    }
    CHECK_MSG(hit, "no truncation landed inside the run in 5 tries");
    free(body);
    remove_tree(dir);
}
