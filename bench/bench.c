/* bench.c: `make bench`: ns per step and steps per second of every model, precision and d, on
 * the CPU (one core; all cores over independent runs) and on the GPU when there is one (one run:
 * the latency of a step; many runs: aggregate throughput), each beside its roofline: flops per
 * step over the peak fma rate that this program measures on the machine itself. Not a test:
 * numbers vary with the machine and its load; comparisons are ratios within one run. */
#include "engine_impl.h"
#include "model_impl.h"
#include "doc.h"
#include "summary.h"
#include "vlacuda.h"
#include "vlaref.h"
#include "vlastab.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}


/* ---- the roofline: flops of one strict step, counted by lib as recur.h performs them (one
 * per +, -, *, /, sqrt; vla_step_flops, the mean over the NIN steps of the input), and the
 * measured fma peak ---- */

/* 12 independent chains, written out so that they live in registers: enough to cover the fma
 * latency (4) times the fma pipes (2) of current cores */
#define PEAK_CHAINS 12
#define CHAINS(OP)                                                                                 \
    OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static double fma_loop_avx512(long iters)
{
    __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
#define DECL(c) __m512 x##c = _mm512_set1_ps((float)c);
#define STEP(c) x##c = _mm512_fmadd_ps(x##c, a, b);
#define SUM(c) s = _mm512_add_ps(s, x##c);
    CHAINS(DECL)
    for (long i = 0; i < iters; i++) {
        CHAINS(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    CHAINS(SUM)
    return _mm512_reduce_add_ps(s);
#undef DECL
#undef STEP
#undef SUM
}
__attribute__((target("avx2,fma"))) static double fma_loop_avx2(long iters)
{
    __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-3f);
#define DECL(c) __m256 x##c = _mm256_set1_ps((float)c);
#define STEP(c) x##c = _mm256_fmadd_ps(x##c, a, b);
#define SUM(c) s = _mm256_add_ps(s, x##c);
    CHAINS(DECL)
    for (long i = 0; i < iters; i++) {
        CHAINS(STEP)
    }
    __m256 s = _mm256_setzero_ps();
    CHAINS(SUM)
    float f[8];
    _mm256_storeu_ps(f, s);
    return f[0] + f[7];
#undef DECL
#undef STEP
#undef SUM
}
#endif
static double fma_loop_scalar(long iters)
{
#define DECL(c) float x##c = (float)c;
#define STEP(c) x##c = fmaf(x##c, 0.999f, 1e-3f);
#define SUM(c) s += x##c;
    CHAINS(DECL)
    for (long i = 0; i < iters; i++) {
        CHAINS(STEP)
    }
    float s = 0;
    CHAINS(SUM)
    return s;
#undef DECL
#undef STEP
#undef SUM
}

typedef struct {
    const char *isa;
    int lanes;
    double (*loop)(long);
} fma_kind;

static fma_kind best_fma(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return (fma_kind){"avx512", 16, fma_loop_avx512};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return (fma_kind){"avx2", 8, fma_loop_avx2};
#endif
    return (fma_kind){"scalar", 1, fma_loop_scalar};
}

static volatile double sink;

/* binary32 fma flop/s of one thread; with threads > 1 the sum over that many threads */
static double cpu_fma_peak(fma_kind k, int threads)
{
    long iters = 2000000;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
        {
            double s = k.loop(iters);
#ifdef _OPENMP
#pragma omp atomic
#endif
            sink += s;
        }
        double f = 2.0 * k.lanes * PEAK_CHAINS * (double)iters * threads / (now() - t0);
        if (f > best)
            best = f;
    }
    return best;
}

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* ---- CPU timing ---- */
#define NIN 64 /* distinct steps of input, cycled */

typedef vla_inputs inputs;
/* NIN steps of head 0 of lmlike, which every run of a timing takes (shared inputs) */
static int inputs_make(inputs *x, int d, int dv)
{
    vla_error err;
    if (vla_inputs_draw(x, "lmlike", 7, d, dv, 1, NIN, 0, &err))
        return fprintf(stderr, "vla-bench: %s\n", vla_error_msg(&err)), -1;
    return 0;
}
static void inputs_free(inputs *x) { vla_inputs_free(x); }

/* A CPU engine whose run is made by one of lib's constructors: the public entry (vla_model_new:
 * the vectorized path where there is one) or the scalar strict baseline. */
typedef int (*creator)(vla_model **out, const vla_config *cfg, const vla_engine_spec *spec);
static int public_new(vla_model **m, const vla_config *c, const vla_engine_spec *sp)
{
    (void)sp;
    return vla_model_new(m, c);
}
static int baseline_new(vla_model **m, const vla_config *c, const vla_engine_spec *sp)
{
    (void)sp;
    return vla_native_create_strict(c, m);
}

/* The timed runs whose state S or read-out o was not finite at the end (run 0 of each engine): a
 * time of Inf or NaN arithmetic must not pass unsaid (the summary line at the end) */
static struct {
    long runs, bad;
    char first[96];
} tally;
static void tally_run(vla_engine *e)
{
    const vla_config *c = vla_engine_config(e);
    const long len[2] = {(long)c->dv * c->d, c->dv};
    const vla_quantity q[2] = {VLA_Q_S, VLA_Q_O};
    double *buf = malloc((size_t)len[0] * sizeof *buf);
    int ok = 1;
    for (int k = 0; buf && k < 2; k++)
        if (vla_engine_get(e, 0, q[k], buf) == 0)
            for (long i = 0; i < len[k]; i++)
                ok &= isfinite(buf[i]) != 0;
    free(buf);
    tally.runs++;
    if (!ok && tally.bad++ == 0)
        snprintf(tally.first, sizeof tally.first, "%s %s d=%d on %s", vla_model_name(c->model),
                 vla_prec_name(c->prec), c->d, vla_backend_name(vla_engine_spec_of(e)->backend));
}

/* seconds for `steps` steps of a fresh run made by mk, the inputs cycled, after NIN warm steps
 * (caches, and the first steps' special values), on one thread */
static double time_steps(creator mk, const vla_config *c, const inputs *x, long steps)
{
    const vla_backend b = {.name = "cpu", .ops = &vla_engine_models_ops, .make_model = mk};
    vla_engine_spec sp = {.backend = &b, .cfg = *c, .runs = 1, .in = x->in, .T = NIN,
                          .shared = 1, .cycle = 1, .round_inputs = VLA_FMT_F64, .threads = 1};
    vla_engine *e;
    if (vla_engine_new(&e, &sp, NULL) || vla_engine_advance(e, NIN))
        return NAN;
    double t0 = now();
    int r = vla_engine_advance(e, NIN + steps);
    double dt = now() - t0;
    if (!r)
        tally_run(e);
    vla_engine_free(e);
    return r ? NAN : dt;
}

/* steps that take about target seconds */
static long calibrate(creator mk, const vla_config *c, const inputs *x, double target)
{
    long steps = 16;
    for (;;) {
        double dt = time_steps(mk, c, x, steps);
        if (!(dt == dt))
            return -1;
        if (dt > target / 4 || steps > (1L << 30))
            return (long)(steps * target / (dt > 1e-9 ? dt : 1e-9)) + 1;
        steps *= 4;
    }
}

/* median ns per step over reps repeats */
static double ns_per_step(creator mk, const vla_config *c, const inputs *x, long steps, int reps)
{
    double v[16];
    for (int r = 0; r < reps; r++)
        v[r] = time_steps(mk, c, x, steps) / steps * 1e9;
    return vla_median(v, reps);
}

/* all threads, each its own run: aggregate steps per second (median over reps) */
static double all_cores_rate(const vla_config *c, const inputs *x, long steps, int reps,
                             int threads)
{
    double v[16];
    for (int r = 0; r < reps; r++) {
        double t0 = now();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
        time_steps(public_new, c, x, steps);
        v[r] = threads * (double)steps / (now() - t0);
    }
    return vla_median(v, reps);
}

/* ---- options ---- */
typedef struct {
    const char *trace; /* --trace DIR: the reference section only */
    int quick, cpu, gpu, ab, peak;
    long lat_steps, max_runs;
    int nd, ds[8];
    int nm, ms[VLA_NMODEL];
    int np, ps[VLA_NPREC];
    vla_track track;
} opts;

/* --help and --man (experiments/doc.c) */
static const vla_doc_item bench_opts[] = {
    {"quick", NULL, "d = 16 and 32 only, shorter timings"},
    {"cpu-only", NULL, "the CPU sections only"},
    {"gpu-only", NULL, "the GPU sections only (nothing when there is no GPU)"},
    {"no-ab", NULL, "skip the comparison of the vectorized one-run path with lib's scalar loops"},
    {"d", "LIST", "key dimensions, comma-separated (default 16,32,64,128)"},
    {"models", "LIST", "models, comma-separated (default: every model)"},
    {"precs", "LIST", "precision policies, comma-separated (default: every policy)"},
    {"track", "WAY", "sm or sm-sym (default sm)"},
    {"lat-steps", "N", "GPU: steps per launch of the latency timing"},
    {"max-runs", "N", "GPU: a cap on the runs of the aggregate timing"},
    {"no-peak", NULL, "GPU: no peak measurement"},
    {"trace", "DIR", "only the references' steps per second on the trace DIR (every head, the "
                     "model of --models, d of --d): exact (MPFR) and binary64, on OMP_NUM_THREADS "
                     "threads (bench/production.sh)"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
    {NULL, NULL, NULL},
};
static const vla_doc_item bench_exit[] = {
    {"0", NULL, "the tables were printed (a section that cannot run here says why and is skipped)"},
    {"1", NULL, "the tables could not be written to standard output (a full disk, a closed pipe)"},
    {"2", NULL, "a usage error"},
    {NULL, NULL, NULL},
};
static const vla_doc_item bench_env[] = {
    {"OMP_NUM_THREADS", NULL, "the threads of the all-cores timings"},
    {"VLA_SIMD", NULL, "avx2 or off: the one-run vectorized path timed (default: the widest)"},
    {"VLA_LANES", NULL, "avx2: the lanes' AVX2 path on an AVX-512 processor"},
    {NULL, NULL, NULL},
};

static const vla_doc_item bench_files[] = {
    {"/proc/cpuinfo", NULL, "read: the processor's name for the header (the tables go to standard "
                            "output; nothing is written)"},
    {NULL, NULL, NULL},
};

static void doc(int man)
{
    const vla_doc d = {
        .prog = "vla-bench",
        .phrase = "time per step of every model and precision beside its roofline",
        .synopsis = "[OPTION]...",
        .summary = "Times strict steps of every model, precision and d on the CPU (one core: lib's "
                   "scalar loops,\nthe vectorized one-run path and the vector lanes; all cores over "
                   "runs) and on the GPU when\nthere is one (one run: the latency of a step; many "
                   "runs: aggregate throughput), each beside\nits roofline: flops per step, counted "
                   "from the recurrence itself (vla_step_flops), over the\nbinary32 fma peak this "
                   "program measures on the machine. Not a test: the numbers vary with the\nmachine "
                   "and its load; compare ratios within one run. The tables go to standard output.",
        .version = VLA_VERSION,
        .opts = {bench_opts, NULL, NULL},
        .exit = bench_exit,
        .env = bench_env,
        .files = bench_files,
        .examples = "vla-bench --cpu-only --models vla3 --precs f32,f16 --d 32\n"
                    "vla-bench --quick\n"
                    "make bench BENCH_ARGS='--cpu-only --no-ab'",
    };
    if (man)
        vla_doc_man(&d);
    vla_doc_help(&d);
}

static int parse_list(const char *s, int *out, int max, int (*one)(const char *, int *))
{
    char buf[256], *save = NULL;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n == max || one(w, &out[n]))
            return -1;
        n++;
    }
    return n;
}
static int one_d(const char *w, int *v)
{
    char *e;
    long x = strtol(w, &e, 10);
    *v = (int)x;
    return *e || x < 1 || x > VLA_D_MAX;
}
/* a count in 1..1e9: atol took "1e20" for 1 and "5x" for 5 */
static int one_count(const char *w, long *v)
{
    char *e;
    errno = 0;
    long x = strtol(w, &e, 10);
    *v = x;
    return e == w || *e || errno || x < 1 || x > 1000000000L;
}
static int one_model(const char *w, int *v)
{
    vla_model_kind m;
    int r = vla_model_parse(w, &m);
    *v = m;
    return r;
}
static int one_prec(const char *w, int *v)
{
    vla_prec p;
    int r = vla_prec_parse(w, &p);
    *v = p;
    return r;
}

static void parse(opts *o, int argc, char **argv)
{
    static const int ds[] = {16, 32, 64, 128};
    *o = (opts){NULL, 0, 1, 1, 1, 1, 0, 0, 4, {0}, VLA_NMODEL, {0}, VLA_NPREC, {0}, VLA_TRACK_SM};
    memcpy(o->ds, ds, sizeof ds);
    for (int i = 0; i < VLA_NMODEL; i++)
        o->ms[i] = i;
    for (int i = 0; i < VLA_NPREC; i++)
        o->ps[i] = i;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick"))
            o->quick = 1;
        else if (!strcmp(a, "--cpu-only"))
            o->gpu = 0;
        else if (!strcmp(a, "--gpu-only"))
            o->cpu = 0;
        else if (!strcmp(a, "--no-ab"))
            o->ab = 0;
        else if (!strcmp(a, "--no-peak"))
            o->peak = 0;
        else if (v && !strcmp(a, "--trace"))
            o->trace = v, i++;
        else if (v && !strcmp(a, "--lat-steps") && !one_count(v, &o->lat_steps))
            i++;
        else if (v && !strcmp(a, "--max-runs") && !one_count(v, &o->max_runs))
            i++;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            doc(0);
        else if (!strcmp(a, "--man"))
            doc(1);
        else if (!strcmp(a, "--version"))
            printf("vla-bench (vlastab) %s\n", VLA_VERSION), exit(0);
        else if (v && !strcmp(a, "--d") && (o->nd = parse_list(v, o->ds, 8, one_d)) > 0)
            i++;
        else if (v && !strcmp(a, "--models") &&
                 (o->nm = parse_list(v, o->ms, VLA_NMODEL, one_model)) > 0)
            i++;
        else if (v && !strcmp(a, "--precs") &&
                 (o->np = parse_list(v, o->ps, VLA_NPREC, one_prec)) > 0)
            i++;
        else if (v && !strcmp(a, "--track") && !vla_track_parse(v, &o->track) &&
                 (o->track == VLA_TRACK_SM || o->track == VLA_TRACK_SMSYM))
            i++;
        else {
            fprintf(stderr, "vla-bench: bad option or value: %s%s%s (try --help)\n", a,
                    v ? " " : "", v ? v : "");
            exit(2);
        }
    }
}

static void config(vla_config *c, int m, int p, int d, vla_track tr)
{
    vla_config_default(c, (vla_model_kind)m, d);
    c->prec = (vla_prec)p;
    c->track = vla_model_has_A((vla_model_kind)m) ? tr : VLA_TRACK_SM;
}

static void cpu_name(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    snprintf(buf, len, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c += 2;
                c[strcspn(c, "\n")] = 0;
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    fclose(f);
}

/* ---- the vectorized path against the scalar one, strict f32 vla3, within this run ---- */
static void ab_section(const opts *o, double peak1)
{
    vla_config c;
    vla_model *m;
    config(&c, VLA_VLA3, VLA_F32, 32, o->track);
    if (vla_native_create_simd(&c, &m)) {
        printf("# vectorized CPU path: not available on this processor/compiler\n\n");
        return;
    }
    vla_model_free(m);
    printf("# strict f32 vla3 (%s), one core: lib's scalar loops (before) against the vectorized "
           "path (after), interleaved repeats, medians; the same bits (tests/test_conform.c)\n",
           vla_track_name(o->track));
    printf("# %4s %12s %12s %8s %8s %8s\n", "d", "before_ns", "after_ns", "speedup", "pct_bef",
           "pct_aft");
    for (int di = 0; di < o->nd; di++) {
        int d = o->ds[di];
        inputs x;
        config(&c, VLA_VLA3, VLA_F32, d, o->track);
        if (inputs_make(&x, d, d))
            continue;
        double target = o->quick ? 0.01 : 0.05;
        long sb = calibrate(baseline_new, &c, &x, target);
        long sa = calibrate(public_new, &c, &x, target);
        int reps = o->quick ? 3 : 7;
        double b[16], a[16];
        for (int r = 0; r < reps; r++) {
            b[r] = time_steps(baseline_new, &c, &x, sb) / sb * 1e9;
            a[r] = time_steps(public_new, &c, &x, sa) / sa * 1e9;
        }
        double mb = vla_median(b, reps), ma = vla_median(a, reps);
        double fl = vla_step_flops(&c, x.in, NIN);
        printf("  %4d %12.1f %12.1f %8.2f %7.1f%% %7.1f%%\n", d, mb, ma, mb / ma,
               100 * fl / (mb * 1e-9) / peak1, 100 * fl / (ma * 1e-9) / peak1);
        inputs_free(&x);
    }
    printf("\n");
}

static void cpu_section(const opts *o, double peak1, double peakall, int threads)
{
    printf("# CPU, strict, track %s (la and delta: no A). one core: ns per step of vla_model_step "
           "(inputs rounded and phi taken in it, as in an experiment; id_ns: features=id, no exp "
           "in the inputs); all: %d threads, one run each\n",
           vla_track_name(o->track), threads);
    printf("# columns: model prec d flops_per_step ns_per_step steps_per_s pct_peak_1core "
           "id_ns_per_step id_pct_peak all_steps_per_s pct_peak_all\n");
    for (int mi = 0; mi < o->nm; mi++)
        for (int pi = 0; pi < o->np; pi++)
            for (int di = 0; di < o->nd; di++) {
                int m = o->ms[mi], p = o->ps[pi], d = o->ds[di];
                vla_config c, ci;
                inputs x;
                config(&c, m, p, d, o->track);
                ci = c;
                ci.features = VLA_FEAT_ID;
                if (inputs_make(&x, d, d))
                    continue;
                double target = o->quick ? 0.005 : 0.03;
                int reps = o->quick ? 3 : 5;
                long steps = calibrate(public_new, &c, &x, target);
                double ns = ns_per_step(public_new, &c, &x, steps, reps);
                double nsi = ns_per_step(public_new, &ci, &x, steps, reps);
                double all = all_cores_rate(&c, &x, steps, reps, threads);
                double fl = vla_step_flops(&c, x.in, NIN);
                printf("%-5s %-8s %4d %10.0f %10.1f %11.0f %6.2f%% %10.1f %6.2f%% %11.0f %6.2f%%\n",
                       vla_model_name(m), vla_prec_name(p), d, fl, ns, 1e9 / ns,
                       100 * fl / (ns * 1e-9) / peak1, nsi, 100 * fl / (nsi * 1e-9) / peak1, all,
                       100 * fl * all / peakall);
                fflush(stdout);
                inputs_free(&x);
            }
    printf("\n");
}

/* ---- CPU vector lanes (lanes/lanes.c) ---- */

/* aggregate steps per second of `runs` runs of c on target o, inputs in[0..steps) shared by every
 * run and staged once, so that only the recurrence is timed (as on the GPU); the median of reps
 * launches of about target seconds each. NAN with the reason in err on failure. */
static double launch_rate(const vla_config *c, const vla_cuda_opts *o, int runs, const inputs *x,
                          double target, int reps, vla_error *err)
{
    vla_cuda *g;
    if (vla_cuda_new(&g, c, runs, o, err))
        return NAN;
    long steps = 8;
    double rate = NAN, v[16];
    vla_input in[1024];
    for (;;) { /* a launch of about target seconds */
        for (long t = 0; t < steps; t++)
            in[t] = x->in[t % NIN];
        if (vla_cuda_stage(g, steps, in, NULL, 1) || vla_cuda_launch(g, NULL))
            goto out;
        double t0 = now();
        vla_cuda_launch(g, NULL);
        double dt = now() - t0;
        if (dt > target / 2 || steps == 1024)
            break;
        steps = steps * 4 > 1024 ? 1024 : steps * 4;
    }
    int launches = 1;
    for (double t0 = now(); now() - t0 < target / 2 && launches < 64;) /* launches per rep */
        vla_cuda_launch(g, NULL), launches++;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int i = 0; i < launches; i++)
            vla_cuda_launch(g, NULL);
        v[r] = (double)runs * steps * launches / (now() - t0);
    }
    rate = vla_median(v, reps);
out:
    if (rate != rate)
        *err = *vla_cuda_error(g);
    vla_cuda_free(g);
    return rate;
}

/* End to end: aggregate run-steps per second of `runs` runs of c on the lanes as an experiment
 * advances them (vla-statenorm --backend lanes --stream lmlike, without its reference and
 * measures): the engine draws every run's own inputs from the stream (Philox, Box-Muller,
 * u = unit(W k)), rounds them, stages and launches them, on `threads` threads. With x, the runs
 * take x's prepared steps instead (shared, cycled): the engine's own cost without the drawing.
 * The median of reps advances of about target seconds each, after one to warm up. */
static double engine_rate(const vla_config *c, int runs, const inputs *x, double target, int reps,
                          int threads)
{
    vla_engine_spec sp = {.backend = vla_backend_lanes(), .cfg = *c, .runs = runs,
                          .stream = x ? NULL : "lmlike", .seed = 7, .in = x ? x->in : NULL,
                          .T = NIN, .shared = 1, .cycle = 1, .round_inputs = VLA_FMT_F64,
                          .threads = threads};
    vla_engine *e;
    if (vla_engine_new(&e, &sp, NULL))
        return NAN;
    long t = 64, steps = 64;
    double v[16];
    int fail = vla_engine_advance(e, t), r = 0; /* warm up */
    while (!fail) { /* steps grow until an advance takes about target / 2 seconds */
        double t0 = now();
        fail = vla_engine_advance(e, t + steps);
        t += steps;
        if (now() - t0 > target / 2 || steps >= (1L << 24))
            break;
        steps *= 4;
    }
    for (; !fail && r < reps; r++) {
        double t0 = now();
        if ((fail = vla_engine_advance(e, t + steps)))
            break;
        v[r] = (double)runs * steps / (now() - t0);
        t += steps;
    }
    if (!fail)
        tally_run(e);
    vla_engine_free(e);
    return fail ? NAN : vla_median(v, reps);
}

static void lanes_section(const opts *o, double peak1, double peakall, int threads)
{
    vla_error why, err;
    if (vla_cuda_probe_target(VLA_CUDA_LANES, &why) <= 0) {
        printf("# CPU vector lanes: skipped: %s\n\n", vla_error_msg(&why));
        return;
    }
    printf("# CPU vector lanes (lanes/lanes.c, %s), strict, track %s: runs advance together in "
           "the lanes of vector registers (%d per register, f64 %d), each lane with lib's bits "
           "(tests/test_cuda.c); inputs shared by the runs and prepared once, as on the GPU. "
           "1core: one thread, `lanes` runs; all: %d threads, a group of runs each; e2e: the same "
           "runs on one thread as an experiment advances them, drawing their own lmlike inputs "
           "(the engine; no reference), and its ratio to 1core; e2e_prep: the engine on the prepared "
           "inputs (its cost without the drawing); e2e_all: a group of such runs per thread on "
           "all threads, and its ratio to all\n",
           vla_cuda_lanes_width(VLA_F32) == 16 ? "AVX-512" : "AVX2", vla_track_name(o->track),
           vla_cuda_lanes_width(VLA_F32), vla_cuda_lanes_width(VLA_F64), threads);
    printf("# columns: model prec d flops_per_step lanes ns_per_run_step_1core "
           "agg_steps_per_s_1core pct_peak_1core agg_steps_per_s_all pct_peak_all "
           "e2e_steps_per_s_1core e2e_ratio_1core e2e_prep_ratio_1core e2e_steps_per_s_all "
           "e2e_ratio_all\n");
    for (int mi = 0; mi < o->nm; mi++)
        for (int pi = 0; pi < o->np; pi++)
            for (int di = 0; di < o->nd; di++) {
                int m = o->ms[mi], p = o->ps[pi], d = o->ds[di], lw = vla_cuda_lanes_width(p);
                vla_config c;
                inputs x;
                config(&c, m, p, d, o->track);
                if (inputs_make(&x, d, d))
                    continue;
                double target = o->quick ? 0.01 : 0.05;
                int reps = o->quick ? 3 : 5;
                vla_cuda_opts o1 = {VLA_CUDA_LANES, 0, 1, NULL}, on = {VLA_CUDA_LANES, 0, threads, NULL};
                double r1 = launch_rate(&c, &o1, lw, &x, target, reps, &err);
                double rn = r1 == r1 ? launch_rate(&c, &on, lw * threads, &x, target, reps, &err)
                                     : NAN;
                if (rn != rn)
                    printf("# %s %s d=%d: %s\n", vla_model_name(m), vla_prec_name(p), d, vla_error_msg(&err));
                double fl = vla_step_flops(&c, x.in, NIN);
                double re = engine_rate(&c, lw, NULL, 4 * target, reps, 1);
                double rp = engine_rate(&c, lw, &x, 4 * target, reps, 1);
                double ra = threads > 1 ? engine_rate(&c, lw * threads, NULL, 4 * target, reps,
                                                      threads)
                                        : re;
                printf("%-5s %-8s %4d %10.0f %5d %10.1f %12.0f %6.2f%% %12.0f %6.2f%% %12.0f %6.3f "
                       "%6.3f %12.0f %6.3f\n",
                       vla_model_name(m), vla_prec_name(p), d, fl, lw, 1e9 / r1, r1,
                       100 * fl * r1 / peak1, rn, 100 * fl * rn / peakall, re, re / r1, rp / r1,
                       ra, ra / rn);
                fflush(stdout);
                inputs_free(&x);
            }
    printf("\n");
}

/* ---- GPU ---- */
static void gpu_section(const opts *o)
{
    vla_error why;
    if (vla_cuda_probe(&why) <= 0) {
        printf("# GPU: skipped: %s\n", vla_error_msg(&why));
        return;
    }
    vla_config c;
    vla_cuda *g;
    vla_error err;
    char desc[300];
    config(&c, VLA_VLA3, VLA_F32, 32, o->track);
    if (vla_cuda_new(&g, &c, 1, NULL, &err)) {
        printf("# GPU: %s\n", vla_error_msg(&err));
        return;
    }
    double peak = NAN;
    vla_cuda_describe(g, desc, sizeof desc);
    if (o->peak && vla_cuda_fma_peak(g, &peak))
        printf("# GPU fma peak: %s\n", vla_error_msg(vla_cuda_error(g)));
    vla_cuda_free(g);
    printf("# GPU: %s\n# GPU measured binary32 fma peak: %.1f Tflop/s\n", desc, peak / 1e12);
    printf("# GPU, strict, track %s: one run (latency: ns per step, %s steps per launch) and "
           "many runs (aggregate: every block resident x 2, inputs shared, staged once)\n",
           vla_track_name(o->track), o->lat_steps ? "--lat-steps" : o->quick ? "256" : "1024");
    printf("# columns: model prec d flops_per_step lat_ns_per_step runs agg_steps_per_s "
           "pct_fp32_peak\n");
    long lsteps = o->lat_steps ? o->lat_steps : o->quick ? 256 : 1024;
    long tsteps = o->quick || o->lat_steps ? (lsteps < 32 ? lsteps : 32) : 128;
    for (int mi = 0; mi < o->nm; mi++)
        for (int pi = 0; pi < o->np; pi++)
            for (int di = 0; di < o->nd; di++) {
                int m = o->ms[mi], p = o->ps[pi], d = o->ds[di];
                config(&c, m, p, d, o->track);
                if (d > vla_cuda_max_d(p)) {
                    printf("%-5s %-8s %4d  n/a: d > %d in %s\n", vla_model_name(m),
                           vla_prec_name(p), d, vla_cuda_max_d(p), vla_prec_name(p));
                    continue;
                }
                inputs x;
                if (inputs_make(&x, d, d))
                    continue;
                vla_input *in = malloc(lsteps * sizeof *in);
                for (long t = 0; t < lsteps; t++)
                    in[t] = x.in[t % NIN];
                double lat = NAN, agg = NAN;
                int runs = 0;
                if (!vla_cuda_new(&g, &c, 1, NULL, &err)) {
                    if (!vla_cuda_stage(g, lsteps, in, NULL, 1) && !vla_cuda_launch(g, NULL)) {
                        double v[5];
                        for (int r = 0; r < 3; r++) {
                            double t0 = now();
                            vla_cuda_launch(g, NULL);
                            v[r] = (now() - t0) / lsteps * 1e9;
                        }
                        lat = vla_median(v, 3);
                    }
                    runs = 2 * vla_cuda_resident_runs(g);
                    if (o->max_runs && runs > o->max_runs)
                        runs = (int)o->max_runs;
                    vla_cuda_free(g);
                } else {
                    printf("# %s %s d=%d: %s\n", vla_model_name(m), vla_prec_name(p), d, vla_error_msg(&err));
                }
                if (runs > 0 && !vla_cuda_new(&g, &c, runs, NULL, &err)) {
                    if (!vla_cuda_stage(g, tsteps, in, NULL, 1) && !vla_cuda_launch(g, NULL)) {
                        double v[5];
                        for (int r = 0; r < 3; r++) {
                            double t0 = now();
                            vla_cuda_launch(g, NULL);
                            v[r] = runs * (double)tsteps / (now() - t0);
                        }
                        agg = vla_median(v, 3);
                    } else {
                        printf("# %s\n", vla_error_msg(vla_cuda_error(g)));
                    }
                    vla_cuda_free(g);
                }
                double fl = vla_step_flops(&c, x.in, NIN);
                printf("%-5s %-8s %4d %10.0f %12.1f %7d %13.0f %6.2f%%\n", vla_model_name(m),
                       vla_prec_name(p), d, fl, lat, runs, agg, 100 * fl * agg / peak);
                fflush(stdout);
                free(in);
                inputs_free(&x);
            }
}

/* ---- the references on a trace (make bench's production case, bench/production.sh): every
 * head of a trace DIR as one engine on all threads, fresh from t = 0, for steps that take about
 * 2 s (at most the trace's), the stream opened by a first step outside the timing ---- */
static double ref_rate(const vla_engine_spec *base, long T, long *steps_out)
{
    for (long steps = 16;; steps *= 2) {
        vla_engine_spec sp = *base;
        vla_engine *e;
        vla_error err;
        steps = steps < T - 1 ? steps : T - 1;
        sp.stream_steps = steps + 1;
        if (vla_engine_new(&e, &sp, &err))
            return fprintf(stderr, "vla-bench: --trace: %s\n", vla_error_msg(&err)), NAN;
        double t0 = 0, dt = 0;
        int r = vla_engine_advance(e, 1);
        if (!r) {
            t0 = now();
            r = vla_engine_advance(e, 1 + steps);
            dt = now() - t0;
        }
        if (r)
            fprintf(stderr, "vla-bench: --trace: %s\n", vla_error_msg(vla_engine_error(e)));
        else
            tally_run(e);
        vla_engine_free(e);
        if (r)
            return NAN;
        if (dt > 2 || steps == T - 1) {
            *steps_out = steps;
            return sp.runs * (double)steps / dt;
        }
    }
}

static void trace_section(const opts *o, int threads)
{
    char spec[4200];
    snprintf(spec, sizeof spec, "trace:%s", o->trace);
    const int d = o->ds[0];
    vla_stream *s;
    vla_error ve;
    if (vla_stream_open_part(&s, spec, d, d, 0, 0, 0, 0, &ve)) {
        fprintf(stderr, "vla-bench: --trace: %s\n", vla_error_msg(&ve));
        exit(2);
    }
    const long heads = vla_stream_heads(s), T = vla_stream_length(s);
    vla_stream_close(s);
    if (T < 2) {
        fprintf(stderr, "vla-bench: --trace %s: %ld steps, at least 2 needed\n", o->trace, T);
        exit(2);
    }
    printf("## references on %s: %ld heads x %ld steps, d = %d, %d threads\n", spec, heads, T, d,
           threads);
    printf("%-6s %-22s %8s %16s\n", "model", "reference", "steps", "head_steps/s");
    for (int mi = 0; mi < o->nm; mi++) {
        const struct {
            const char *name;
            const vla_backend *b;
        } refs[] = {{"exact-mpfr-256", vref_backend_exact()},
                    {"exact-dd-106", vref_backend_dd()},
                    {"f64-cpu", vla_backend_cpu()}};
        for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
            vla_engine_spec sp = {.backend = refs[k].b, .runs = (int)heads, .stream = spec,
                                  .round_inputs = VLA_FMT_F64, .threads = threads};
            config(&sp.cfg, o->ms[mi], VLA_F64, d, VLA_TRACK_SM);
            long steps = 0;
            double rate = ref_rate(&sp, T, &steps);
            printf("%-6s %-22s %8ld %16.1f\n", vla_model_name((vla_model_kind)o->ms[mi]),
                   refs[k].name, steps, rate);
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv)
{
    opts o;
    parse(&o, argc, argv);
    char cpu[200], host[100] = "?";
    cpu_name(cpu, sizeof cpu);
    gethostname(host, sizeof host);
    int threads = max_threads();
    printf("# vla-bench %s (%s), host %s\n", VLA_VERSION, VLA_GIT, host);
    printf("# %s\n", vla_cuda_build());
    if (o.trace) {
        printf("# CPU: %s, %d threads\n", cpu, threads);
        trace_section(&o, threads);
        o.cpu = o.gpu = 0;
    }
    if (o.cpu) {
        fma_kind k = best_fma();
        double p1 = cpu_fma_peak(k, 1), pall = cpu_fma_peak(k, threads);
        printf("# CPU: %s, %d threads; measured binary32 fma peak (%s, %d lanes): one core %.1f "
               "Gflop/s, all %.1f Gflop/s\n",
               cpu, threads, k.isa, k.lanes, p1 / 1e9, pall / 1e9);
        printf("# flops per step: one per +, -, *, /, sqrt of the strict recurrence, counted as "
               "lib performs them (sm: ~12 d^2 for vla3, the update of A on its upper triangle); "
               "pct_peak = flops/step x steps/s over that peak\n\n");
        if (o.ab)
            ab_section(&o, p1);
        cpu_section(&o, p1, pall, threads);
        lanes_section(&o, p1, pall, threads);
    }
    if (o.gpu)
        gpu_section(&o);
    vla_summary sm = {.len = 0};
    if (tally.bad)
        vla_summary_add(&sm, 1, "the state is not finite at the end of %ld of %ld timed CPU runs "
                        "(first: %s): their times are those of Inf or NaN arithmetic", tally.bad,
                        tally.runs, tally.first);
    else if (tally.runs)
        vla_summary_add(&sm, 0, "the state is finite at the end of all %ld timed CPU runs",
                        tally.runs);
    if (sm.len)
        printf("# summary: %s\n", sm.text);
    vla_summary_say(&sm, "vla-bench");
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "vla-bench: cannot write the tables to standard output: %s\n",
                strerror(errno ? errno : EIO));
        return 1;
    }
    return 0;
}
