/* kengine.c: the kernels as engine backends (vlastab.h, "engines"): lanes, cuda and emu. Each
 * advance draws the inputs of a chunk of steps for every run (the engine's own input code, the
 * runs spread over threads), stages and launches them (vlacuda.h), then hands every step to the
 * spec's on_step from the launch's taps, run by run in step order. A launch is sized to take about
 * a quarter of a second (fewer steps, then fewer runs), so that a stop request is answered within
 * a second whatever the step costs. The state is saved in vla_model_save's format (its t and
 * counters checked when loaded), so a run continues on any backend. */
#include "engine_impl.h"
#include "model_impl.h"
#include "vlacuda.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    vla_engine *e;
    vla_cuda *g;
    int runs, d, dv;
    long cap;            /* steps per chunk that the buffers hold */
    long chunk;          /* steps of the next chunk: grows to about CHUNK_SECONDS per launch */
    int batch;           /* runs per launch: all, unless one step of all takes longer than that */
    long *t;             /* per run: steps taken (writes and reads) */
    long *w, *w2;        /* per run: writes taken, and after the chunk being drawn */
    vla_stream **s;      /* per run, opened on first use */
    vla_step_buf *raw, *rnd; /* [run * cap + k] */
    double *slab;        /* their numbers */
    vla_input *in;
    unsigned char *rd;
    double *o, *kp, *al; /* taps [run * chunk + k] * dv or d */
    long *moved;
} kself;

#define CHUNK_SECONDS 0.25
/* at most about this much drawn input per chunk: a GPU's launches are long; the lanes read the
 * staged records from the host's caches, where a chunk of 2 MB runs 1.2x faster end to end than
 * one of 32 MB (AMD EPYC Zen 5, vla-statenorm lmlike f32 d = 32, 16 runs, one thread: 1.26 ->
 * 1.04 s, best of 6; 512 KB: 1.16 s), but no fewer than LANES_MIN_STEPS steps: a launch gathers
 * and scatters the runs' states, O(d^2) like a step, and at d = 128 a chunk of 2 MB is 12 steps
 * (vla-bench's e2e ratio, f32 d = 128: 0.31 at 12 steps a launch, 0.45 at 200) */
#define INPUT_BYTES (32L << 20)
#define INPUT_BYTES_LANES (2L << 20)
#define LANES_MIN_STEPS 64

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void k_close(void *p)
{
    kself *k = p;
    if (!k)
        return;
    vla_cuda_free(k->g);
    for (int i = 0; k->s && i < k->runs; i++)
        vla_stream_close(k->s[i]);
    free(k->s);
    free(k->t);
    free(k->w);
    free(k->w2);
    free(k->raw);
    free(k->rnd);
    free(k->slab);
    free(k->in);
    free(k->rd);
    free(k->o);
    free(k->kp);
    free(k->al);
    free(k->moved);
    free(k);
}

/* step buffers that point into one slab: q k u (d) v g (dv) each, and where the model reads
 * them (gates) the gated family's lg a b (d each) */
static void bind_bufs(vla_step_buf *b, double *x, long n, int d, int dv, int gates)
{
    for (long i = 0; i < n; i++, x += 3 * d + 2 * dv + (gates ? 3 * d : 0)) {
        double *g = x + 3 * d + 2 * dv;
        b[i] = (vla_step_buf){.q = x, .k = x + d, .v = x + 3 * d, .u = x + 2 * d,
                              .g = x + 3 * d + dv, .beta = NAN, .decay = NAN, .pair = -1,
                              .lg = gates ? g : NULL, .a = gates ? g + d : NULL,
                              .b = gates ? g + 2 * d : NULL};
    }
}

static int k_open(vla_engine *e, void **self, vla_error *err)
{
    const vla_engine_spec *sp = &e->spec;
    const int d = sp->cfg.d, dv = sp->cfg.dv, nr = sp->runs;
    vla_cuda_opts o = {e->b->target, sp->device, sp->threads, e->S0};
    kself *k = calloc(1, sizeof *k);
    if (!k)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    k->e = e;
    k->runs = nr;
    k->d = d;
    k->dv = dv;
    vla_error why;
    int r = 0;
    if (e->b->target == VLA_CUDA_GPU && vla_cuda_probe(&why) <= 0)
        /* no GPU here: say why, and name the way to run these kernels anyway */
        r = vla_fail(err, VLA_ENOTSUP, "no CUDA device (%s); --backend emu runs the same kernels "
                     "on host threads", why.msg);
    else
        r = vla_cuda_new(&k->g, &sp->cfg, nr, &o, err);
    if (r) {
        k_close(k);
        return r;
    }
    const int gates = (vla_model_reads(&sp->cfg) &
                       (VLA_IN_LOGDECAY_D | VLA_IN_A | VLA_IN_B)) != 0;
    const long per = 3L * d + 2L * dv + (gates ? 3L * d : 0);
    const int lanes = e->b->target == VLA_CUDA_LANES;
    k->cap = (lanes ? INPUT_BYTES_LANES : INPUT_BYTES) / ((long)nr * (2 * per + 8) * (long)sizeof(double));
    if (lanes && k->cap < LANES_MIN_STEPS && (long)nr * LANES_MIN_STEPS * (2 * per + 8) *
                                                 (long)sizeof(double) <= INPUT_BYTES)
        k->cap = LANES_MIN_STEPS;
    k->cap = k->cap < 1 ? 1 : k->cap > 4096 ? 4096 : k->cap;
    k->chunk = k->cap < 16 ? k->cap : 16;
    k->batch = nr;
    const size_t n = (size_t)nr * k->cap;
    const int rnd = sp->round_inputs != VLA_FMT_F64;
    k->t = calloc(nr, sizeof *k->t);
    k->w = calloc(nr, sizeof *k->w);
    k->w2 = calloc(nr, sizeof *k->w2);
    k->s = calloc(nr, sizeof *k->s);
    k->raw = malloc(n * sizeof *k->raw);
    k->rnd = rnd ? malloc(n * sizeof *k->rnd) : NULL;
    k->slab = malloc(n * per * (rnd ? 2 : 1) * sizeof *k->slab);
    k->in = malloc(n * sizeof *k->in);
    k->rd = malloc(n);
    if (sp->on_step) {
        if (sp->taps & VLA_TAP_O)
            k->o = malloc(n * dv * sizeof *k->o);
        if (sp->taps & VLA_TAP_KP)
            k->kp = malloc(n * d * sizeof *k->kp);
        if (sp->taps & VLA_TAP_ALPHA)
            k->al = malloc(n * d * sizeof *k->al);
        if ((sp->taps & VLA_TAP_MOVED) && vla_model_has_A(sp->cfg.model) &&
            vla_track_holds(sp->cfg.track) == VLA_HOLDS_A &&
            !vla_form_pending(&sp->cfg, 1))
            k->moved = malloc(2 * n * sizeof *k->moved);
    }
    if (!k->t || !k->w || !k->w2 || !k->s || !k->raw || (rnd && !k->rnd) || !k->slab || !k->in || !k->rd ||
        ((sp->taps & VLA_TAP_O) && sp->on_step && !k->o) ||
        ((sp->taps & VLA_TAP_KP) && sp->on_step && !k->kp) ||
        ((sp->taps & VLA_TAP_ALPHA) && sp->on_step && !k->al)) {
        vla_fail(err, VLA_ENOMEM, "out of memory for %ld steps of inputs of %d runs", k->cap, nr);
        k_close(k);
        return VLA_ENOMEM;
    }
    bind_bufs(k->raw, k->slab, (long)n, d, dv, gates);
    if (rnd)
        bind_bufs(k->rnd, k->slab + n * per, (long)n, d, dv, gates);
    *self = k;
    return VLA_OK;
}

/* run's inputs of steps t+1 .. t+n (fewer when it reaches `to`: the rest are skipped), and its
 * writes after them in w2 */
static void draw(kself *k, int run, long n, long to)
{
    k->w2[run] = k->w[run];
    for (long j = 0; j < n; j++) {
        size_t i = (size_t)run * n + j;
        long step = k->t[run] + j + 1;
        if (step > to) {
            k->rd[i] = VLA_CUDA_SKIP;
            continue;
        }
        /* the buffers are indexed by the chunk's own shape, [run * n + j] */
        vla_step_buf *raw = &k->raw[i], *rnd = k->rnd ? &k->rnd[i] : NULL;
        if (vla_engine_input(k->e, run, step, &k->s[run], raw, rnd, &k->in[i]) ||
            (raw->is_read && vla_engine_read_inside(k->e, run, step, k->w2[run])))
            return; /* recorded in the engine */
        k->rd[i] = raw->is_read ? VLA_CUDA_READ : VLA_CUDA_WRITE;
        k->w2[run] += !raw->is_read;
    }
}

/* on_step for run's steps of the chunk just launched */
static int hand_over(kself *k, int run, long n)
{
    const vla_engine_spec *sp = &k->e->spec;
    const int d = k->d, dv = k->dv;
    long w = k->w[run];
    for (long j = 0; j < n; j++) {
        size_t i = (size_t)run * n + j;
        if (k->rd[i] == VLA_CUDA_SKIP)
            break;
        w += k->rd[i] == VLA_CUDA_WRITE; /* (a chunk's read-outs: at its end) */
        const int o = k->o && !vla_form_pending(&sp->cfg, w);
        vla_step_view v = {.run = run, .t = k->t[run] + j + 1, .in = &k->raw[i],
                           .o = o ? k->o + i * dv : NULL, .kp = k->kp ? k->kp + i * d : NULL,
                           .alpha = k->al ? k->al + i * d : NULL,
                           .a_moved = k->moved ? k->moved[2 * i] : -1,
                           .a_moved_diag = k->moved ? k->moved[2 * i + 1] : -1};
        int r = sp->on_step(sp->ctx, &v);
        if (r)
            return vla_engine_fail(k->e, run, r, "head %d, step %ld: %s", sp->first_head + run,
                                   v.t, vla_strerror(r));
    }
    return VLA_OK;
}

static int k_advance(vla_engine *e, void *self, long to)
{
    kself *k = self;
    const vla_engine_spec *sp = &e->spec;
#ifdef _OPENMP /* no more threads than runs (libgomp crashes when asked for 100000) */
    int nt = sp->threads > 0 ? sp->threads : omp_get_max_threads();
    nt = nt < k->runs ? nt : k->runs;
#endif
    for (;;) {
        long n = 0;
        for (int r = 0; r < k->runs; r++)
            n = to - k->t[r] > n ? to - k->t[r] : n;
        if (n <= 0)
            return VLA_OK;
        n = n < k->chunk ? n : k->chunk;
        /* the runs in batches of k->batch, each launch of about CHUNK_SECONDS: one step of many
         * runs can take longer (2048 runs at d = 256 in binary64: 6 s on the lanes here) */
        for (int lo = 0; lo < k->runs; lo += k->batch) {
            if (vla_engine_stopped(e))
                return VLA_EINTR;
            const int hi = lo + k->batch < k->runs ? lo + k->batch : k->runs;
            double t0 = seconds();
            /* the inputs, run by run in parallel (drawing them can cost more than the lanes); a
             * run outside the batch skips every step */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
            for (int r = 0; r < k->runs; r++)
                draw(k, r, n, r >= lo && r < hi ? to : k->t[r]);
            if (e->err.code)
                return e->err.code;
            int r = vla_cuda_stage(k->g, n, k->in, k->rd, 0);
            vla_cuda_taps taps = {k->o, k->kp, k->al, k->moved};
            if (!r)
                r = vla_cuda_launch_taps(k->g, sp->on_step ? &taps : NULL);
            if (r)
                return vla_engine_fail(e, -1, r, "steps %ld..%ld: %s", k->t[lo] + 1, k->t[lo] + n,
                                       vla_error_msg(vla_cuda_error(k->g)));
            if (sp->on_step) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
                for (int q = lo; q < hi; q++)
                    hand_over(k, q, n);
                if (e->err.code)
                    return e->err.code;
            }
            for (int q = lo; q < hi; q++) {
                k->t[q] = k->t[q] + n < to ? k->t[q] + n : (k->t[q] < to ? to : k->t[q]);
                k->w[q] = k->w2[q];
            }
            /* the next launch: about CHUNK_SECONDS, within the buffers; steps first, then runs */
            double dt = seconds() - t0;
            if (hi - lo == k->runs) {
                long want = dt > 0 ? (long)(n * CHUNK_SECONDS / dt) : k->cap;
                want = want > 2 * n ? 2 * n : want;
                k->chunk = want < 1 ? 1 : want > k->cap ? k->cap : want;
            }
            if (n == 1 && dt > CHUNK_SECONDS && hi - lo > 1) { /* (then fit < hi - lo) */
                int fit = (int)((hi - lo) * CHUNK_SECONDS / dt);
                k->batch = fit < 1 ? 1 : fit;
            } else if (k->batch < k->runs && dt < CHUNK_SECONDS / 2)
                k->batch = 2 * k->batch < k->runs ? 2 * k->batch : k->runs;
        }
    }
}

static long k_t(void *self, int run) { return ((kself *)self)->t[run]; }

static int k_get(void *self, int run, vla_quantity q, double *dst)
{
    kself *k = self;
    return vla_cuda_get(k->g, run, q, dst);
}

static int k_counts(void *self, int run, vla_counts *out)
{
    kself *k = self;
    return vla_cuda_counts(k->g, run, out);
}

static int k_save(void *self, int run, FILE *f)
{
    kself *k = self;
    size_t bytes = 0;
    long t;
    vla_counts c;
    int r = vla_cuda_state(k->g, run, NULL, NULL, NULL, &bytes);
    void *st = r ? NULL : malloc(bytes);
    if (!r && !st)
        r = VLA_ENOMEM;
    if (!r)
        r = vla_cuda_state(k->g, run, &t, &c, st, &bytes);
    if (!r)
        r = vla_model_save_header(&k->e->spec.cfg, f);
    if (!r && (fwrite(&t, sizeof t, 1, f) != 1 || fwrite(&c, sizeof c, 1, f) != 1 ||
               fwrite(st, 1, bytes, f) != bytes))
        r = VLA_EIO;
    free(st);
    return r;
}

static int k_load(void *self, int run, FILE *f)
{
    kself *k = self;
    size_t bytes = 0;
    long t;
    vla_counts c;
    int r = vla_cuda_state(k->g, run, NULL, NULL, NULL, &bytes);
    void *st = r ? NULL : malloc(bytes);
    if (!r && !st)
        r = VLA_ENOMEM;
    if (!r)
        r = vla_model_load_header(&k->e->spec.cfg, f);
    if (!r && (fread(&t, sizeof t, 1, f) != 1 || fread(&c, sizeof c, 1, f) != 1 ||
               vla_counts_check(&k->e->spec.cfg, t, &c) || fread(st, 1, bytes, f) != bytes))
        r = VLA_EFORMAT;
    if (!r)
        r = vla_cuda_set_state(k->g, run, t, &c, st, bytes);
    if (!r) {
        k->t[run] = c.steps + c.reads;
        k->w[run] = c.steps;
    }
    free(st);
    return r;
}

static void k_describe(void *self, char *buf, size_t len)
{
    vla_cuda_describe(((kself *)self)->g, buf, len);
}

/* (no last, partial chunk: vla_engine_finish refuses a pending one) */
static const vla_backend_ops k_ops = {k_open,   k_close, k_advance,  k_t,  k_get,
                                      k_counts, k_save,  k_load, k_describe, NULL};

static int k_supports(const vla_backend *b, const vla_config *cfg, vla_error *why)
{
    return vla_cuda_supports(cfg, (vla_cuda_target)b->target, why);
}

static int k_available(const vla_backend *b, vla_error *why)
{
    return vla_cuda_probe_target((vla_cuda_target)b->target, why) ? VLA_OK : VLA_ENOTSUP;
}

#define KBACKEND(fn, nm, tg)                                                                       \
    const vla_backend *fn(void)                                                                    \
    {                                                                                              \
        static const vla_backend b = {.name = nm, .ops = &k_ops, .target = tg,                    \
                                      .supports = k_supports, .available = k_available};          \
        return &b;                                                                                 \
    }
KBACKEND(vla_backend_lanes, "lanes", VLA_CUDA_LANES)
KBACKEND(vla_backend_cuda, "cuda", VLA_CUDA_GPU)
KBACKEND(vla_backend_emu, "emu", VLA_CUDA_EMULATE)

const vla_backend *vla_backend_at(int i)
{
#define AT_(ID, fn) i == VLA_BACKEND_##ID ? fn():
    return VLA_BACKENDS(AT_) NULL;
#undef AT_
}

const vla_backend *vla_backend_named(const char *name)
{
    for (int i = 0; i < VLA_NBACKEND; i++)
        if (!strcmp(name, vla_backend_name(vla_backend_at(i))))
            return vla_backend_at(i);
    return NULL;
}

const char *vla_backend_names(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < VLA_NBACKEND && at < len; i++)
        at += snprintf(buf + at, len - at, "%s%s", !i ? "" : i + 1 < VLA_NBACKEND ? ", " : " or ",
                       vla_backend_name(vla_backend_at(i)));
    return buf;
}
