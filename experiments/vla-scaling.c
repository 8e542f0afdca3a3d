/* vla-scaling: the cost of one recurrent step against d and T for each model and precision, on
 * one CPU core, beside causal softmax attention computed directly (O(T^2 d) in total), and the
 * context length where softmax's total time passes the model's (docs/math.md section 10, claim
 * 5). */
#define _GNU_SOURCE
#include "cli.h"
#include "vlacuda.h"
#include <gsl/gsl_fit.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COLUMNS "model prec track d T ns_per_step steps_per_s ns_total measured cpu_ns_per_step"
#define NCOL 9 /* a row's numbers; the table adds the track, a name, as its third column */
#define MAXL 32
_Static_assert(VLA_NMODEL <= MAXL, "--models' default is every model");
#define SOFTMAX (-1)

static const vla_cli_spec *g_spec; /* for the option callback's one-line errors */

typedef struct {
    int nm, np, nd, nT;
    vla_model_kind models[MAXL];
    vla_prec precs[MAXL];
    long ds[MAXL], Ts[MAXL];
    int set_m, set_p, set_d, set_T;
    int repeat;
    double budget; /* seconds one softmax timing may take before we extrapolate */
    long pool;
    int clock_cpu; /* ns_per_step from thread CPU time rather than the wall clock */
} opts;

/* a comma-separated list of integers in lo..hi, each one checked; any flaw is a usage error */
static int parse_ints(const char *opt, const char *v, long lo, long hi, long *out, int *n)
{
    char buf[1024];
    if (strlen(v) >= sizeof buf)
        vla_cli_die(g_spec, "--%s: list too long", opt);
    strcpy(buf, v);
    *n = 0;
    char *save = NULL, *p = buf;
    if (!*v || v[strlen(v) - 1] == ',' || *v == ',' || strstr(v, ",,"))
        vla_cli_die(g_spec, "--%s: '%s' is not a list like 16,32,64", opt, v);
    for (char *tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        double x = strtod(tok, &end); /* 1e5 is a natural way to write a length */
        if (end == tok || *end || x != floor(x) || x < lo || x > hi)
            vla_cli_die(g_spec, "--%s: '%s' is not an integer in %ld..%ld", opt, tok, lo, hi);
        if (*n == MAXL)
            vla_cli_die(g_spec, "--%s: more than %d values", opt, MAXL);
        out[(*n)++] = (long)x;
    }
    return 0;
}

static int on_opt(void *ctx, const char *name, const char *v)
{
    opts *o = ctx;
    if (!strcmp(name, "models")) {
        char buf[256], *save = NULL;
        if (strlen(v) >= sizeof buf || !*v || v[strlen(v) - 1] == ',' || strstr(v, ",,"))
            vla_cli_die(g_spec, "--models: '%s' is not a list like la,vla3", v);
        strcpy(buf, v);
        o->nm = 0;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (o->nm == MAXL)
                vla_cli_die(g_spec, "--models: more than %d values", MAXL);
            if (vla_model_parse(tok, &o->models[o->nm++]))
                vla_cli_die(g_spec, "--models: unknown model '%s' (%s)", tok,
                            vla_names(VLA_LIST_MODEL));
        }
        o->set_m = 1;
    } else if (!strcmp(name, "precisions")) {
        char buf[256], *save = NULL;
        if (strlen(v) >= sizeof buf || !*v || v[strlen(v) - 1] == ',' || strstr(v, ",,"))
            vla_cli_die(g_spec, "--precisions: '%s' is not a list like f32,f64", v);
        strcpy(buf, v);
        o->np = 0;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (o->np == MAXL)
                vla_cli_die(g_spec, "--precisions: more than %d values", MAXL);
            if (vla_prec_parse(tok, &o->precs[o->np++]))
                vla_cli_die(g_spec, "--precisions: unknown precision '%s' (%s)", tok,
                            vla_names(VLA_LIST_PREC));
        }
        o->set_p = 1;
    } else if (!strcmp(name, "ds")) {
        parse_ints("ds", v, VLA_D_MIN, VLA_D_MAX, o->ds, &o->nd);
        o->set_d = 1;
    } else if (!strcmp(name, "Ts")) {
        parse_ints("Ts", v, 1, 1000000000L, o->Ts, &o->nT);
        o->set_T = 1;
    } else if (!strcmp(name, "repeat")) {
        long r;
        int n;
        parse_ints("repeat", v, 1, 1000, &r, &n);
        if (n != 1)
            vla_cli_die(g_spec, "--repeat: '%s' is not one integer", v);
        o->repeat = (int)r;
    } else if (!strcmp(name, "softmax-budget")) {
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !(x > 0 && x <= 3600))
            vla_cli_die(g_spec, "--softmax-budget: '%s' is not a number of seconds in (0, 3600]", v);
        o->budget = x;
    } else if (!strcmp(name, "clock")) {
        if (strcmp(v, "wall") && strcmp(v, "cpu"))
            vla_cli_die(g_spec, "--clock: '%s' is neither wall nor cpu", v);
        o->clock_cpu = !strcmp(v, "cpu");
    } else if (!strcmp(name, "pool")) {
        long r;
        int n;
        parse_ints("pool", v, 1, 1L << 20, &r, &n);
        if (n != 1)
            vla_cli_die(g_spec, "--pool: '%s' is not one integer", v);
        o->pool = r;
    }
    return 0;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* this thread's CPU time: on a shared machine the wall clock also counts the time other
 * processes held our core, and the two together say how much of it we had */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}


/* One timing of T steps of `runs` fresh runs on backend b (the engine made before the clock
 * starts, one thread): ns per run-step by the wall clock and by this thread's CPU time. A step
 * includes the rounding of the inputs and phi, as every caller pays. *finite: whether every run's
 * state is finite at the end (a time of Inf or NaN arithmetic must not pass unsaid). */
static int time_model(const vla_backend *b, const vla_config *cfg, const vla_inputs *p, long T,
                      int runs, double *ns, double *cpu, int *finite)
{
    vla_engine_spec sp = {.backend = b, .cfg = *cfg, .runs = runs, .in = p->in,
                          .is_read = p->is_read, .T = p->T, .shared = 1, .cycle = 1,
                          .round_inputs = VLA_FMT_F64, .threads = 1, .stop = &vla_cli_stop};
    vla_engine *e;
    int r = vla_engine_new(&e, &sp, NULL);
    if (r)
        return r;
    double t0 = now_ns(), c0 = cpu_ns();
    r = vla_engine_advance(e, T);
    *ns = (now_ns() - t0) / ((double)T * runs);
    *cpu = (cpu_ns() - c0) / ((double)T * runs);
    double *buf = malloc((size_t)cfg->d * (cfg->d > cfg->dv ? cfg->d : cfg->dv) * sizeof *buf);
    *finite = 1;
    for (int h = 0; !r && buf && h < runs; h++)
        *finite &= vla_cli_run_finite(e, h, buf);
    free(buf);
    vla_engine_free(e);
    return r;
}

/* ---- causal softmax attention, the direct way: for each t, scores of q_t against k_1..k_t,
 * their softmax, the weighted sum of v_1..v_t. Keys are stored transposed (d x T) so that the
 * scores of all keys are one left-to-right sum per key, computed side by side across keys, which
 * the compiler may vectorize without reassociating anything: the same strict arithmetic as the
 * models (no fma contraction, fixed order). ---- */
#define SOFTMAX_BODY(T_, EXP)                                                                      \
    {                                                                                              \
        T_ scale = (T_)1 / (T_)sqrt((double)d), acc = 0;                                          \
        for (long t = 0; t < T; t++) {                                                             \
            const T_ *q = Q + (size_t)t * d;                                                       \
            for (long j = 0; j <= t; j++)                                                          \
                s[j] = q[0] * Kt[j];                                                               \
            for (int i = 1; i < d; i++) {                                                          \
                const T_ *ki = Kt + (size_t)i * T;                                                 \
                for (long j = 0; j <= t; j++)                                                      \
                    s[j] += q[i] * ki[j];                                                          \
            }                                                                                      \
            T_ mx = s[0] * scale;                                                                  \
            for (long j = 0; j <= t; j++) {                                                        \
                s[j] *= scale;                                                                     \
                mx = s[j] > mx ? s[j] : mx;                                                        \
            }                                                                                      \
            T_ sum = 0;                                                                            \
            for (long j = 0; j <= t; j++) {                                                        \
                s[j] = EXP(s[j] - mx);                                                             \
                sum += s[j];                                                                       \
            }                                                                                      \
            for (int i = 0; i < d; i++)                                                            \
                o[i] = 0;                                                                          \
            for (long j = 0; j <= t; j++) {                                                        \
                const T_ *vj = V + (size_t)j * d;                                                  \
                for (int i = 0; i < d; i++)                                                        \
                    o[i] += s[j] * vj[i];                                                          \
            }                                                                                      \
            for (int i = 0; i < d; i++)                                                            \
                acc += o[i] / sum;                                                                 \
        }                                                                                          \
        return (double)acc;                                                                        \
    }
/* Q, V: T x d; Kt: d x T; s: T scores; o: d. Returns a sum of the outputs, so that none of the
 * work can be optimized away. */
static double softmax_f64(long T, int d, const double *Q, const double *Kt, const double *V,
                          double *s, double *o) SOFTMAX_BODY(double, exp)
static double softmax_f32(long T, int d, const float *Q, const float *Kt, const float *V,
                          float *s, float *o) SOFTMAX_BODY(float, expf)

static volatile double sink;

/* One softmax timing of length T at d from the pool's raw q, k, v (cycled), in binary64 when
 * dbl, else binary32; returns ns for the whole sequence, or a negative number when out of memory. */
static double time_softmax(const vla_inputs *p, long T, int dbl, double *cpu)
{
    int d = p->d;
    size_t n = (size_t)T * d, es = dbl ? sizeof(double) : sizeof(float);
    char *Q = malloc(n * es), *K = malloc(n * es), *V = malloc(n * es), *s = malloc(T * es),
         *o = malloc(d * es);
    double ns = -1;
    if (Q && K && V && s && o) {
        for (long t = 0; t < T; t++) {
            const vla_input *r = &p->in[t % p->T];
            for (int i = 0; i < d; i++) {
                size_t a = (size_t)t * d + i, b = (size_t)i * T + t;
                if (dbl) {
                    ((double *)Q)[a] = r->q[i];
                    ((double *)K)[b] = r->k[i];
                    ((double *)V)[a] = r->v[i];
                } else {
                    ((float *)Q)[a] = (float)r->q[i];
                    ((float *)K)[b] = (float)r->k[i];
                    ((float *)V)[a] = (float)r->v[i];
                }
            }
        }
        double t0 = now_ns(), c0 = cpu_ns();
        sink = dbl ? softmax_f64(T, d, (double *)Q, (double *)K, (double *)V, (double *)s, (double *)o)
                   : softmax_f32(T, d, (float *)Q, (float *)K, (float *)V, (float *)s, (float *)o);
        ns = now_ns() - t0;
        *cpu = cpu_ns() - c0;
    }
    free(Q);
    free(K);
    free(V);
    free(s);
    free(o);
    return ns;
}

/* ---- results held until the end, so that the header can carry the fits and crossovers ---- */
typedef struct {
    double v[NCOL];
} row_t;
typedef struct {
    row_t *r;
    long n, cap;
} rows_t;
/* a row as the table has it: model, precision and track by name */
static void put_row(vla_dat *out, const row_t *r, vla_track track)
{
    vla_model_kind m = r->v[0] == SOFTMAX ? VLA_LA : (vla_model_kind)r->v[0]; /* (no model) */
    double v[NCOL + 1] = {0, 0, 0};
    memcpy(v + 3, r->v + 2, (NCOL - 2) * sizeof *v);
    const char *names[NCOL + 1] = {
        r->v[0] == SOFTMAX ? "softmax" : vla_model_name(m), vla_prec_name((vla_prec)r->v[1]),
        r->v[0] != SOFTMAX && vla_model_has_A(m) ? vla_track_name(track) : "-"};
    vla_dat_row_named(out, v, names, NCOL + 1);
}

static void add(rows_t *R, double m, double p, double d, double T, double ns_step, double ns_total,
                double measured, double cpu_step)
{
    if (R->n == R->cap) {
        R->cap = R->cap ? 2 * R->cap : 64;
        R->r = realloc(R->r, R->cap * sizeof *R->r);
        if (!R->r) {
            fprintf(stderr, "vla-scaling: out of memory\n");
            exit(1);
        }
    }
    row_t x = {{m, p, d, T, ns_step, 1e9 / ns_step, ns_total, measured, cpu_step}};
    R->r[R->n++] = x;
}

/* the softmax curve of one (precision, d): measured points and the fit ns_total = a T^2 */
typedef struct {
    int n;
    double T[64], ns[64], cpu[64];
    double a, resid, a_cpu;
    long fit_from;
} smcurve;

/* a by least squares on relative residuals over the measured points with T >= 1000 (the two
 * largest if fewer qualify), where the quadratic term dominates the per-token overhead: a T^2 / y
 * should be 1, so a is the slope through the origin of 1 against x = T^2 / y (GSL's
 * gsl_fit_mul); resid: the worst |a T^2 / y - 1| */
static double fit_a(const smcurve *c, const double *y, int first, double *resid)
{
    double x[64], one[64], a, cov, sumsq;
    int n = c->n - first;
    for (int i = 0; i < n; i++) {
        x[i] = c->T[first + i] * c->T[first + i] / y[first + i];
        one[i] = 1;
    }
    if (n < 1 || gsl_fit_mul(x, 1, one, 1, (size_t)n, &a, &cov, &sumsq))
        a = NAN;
    *resid = 0;
    for (int i = 0; i < n; i++) {
        double r = fabs(a * x[i] - 1);
        *resid = r > *resid ? r : *resid;
    }
    return a;
}

static void fit_quadratic(smcurve *c)
{
    int first = 0;
    double r;
    while (first < c->n && c->T[first] < 1000)
        first++;
    if (c->n - first < 2)
        first = c->n >= 2 ? c->n - 2 : 0;
    c->a = fit_a(c, c->ns, first, &c->resid);
    c->a_cpu = fit_a(c, c->cpu, first, &r);
    c->fit_from = c->n ? (long)c->T[first] : 0;
}

/* Where softmax's total time passes a model's T * ns: between the two measured points that bracket
 * it (log-log interpolation of the ratio, *measured = 1), else from the fit, T = ns / a. */
static double crossover(const smcurve *c, int use_cpu, double ns, int *measured)
{
    const double *y = use_cpu ? c->cpu : c->ns;
    double prev_T = 0, prev_r = 0;
    for (int i = 0; i < c->n; i++) {
        double r = y[i] / (c->T[i] * ns);
        if (r > 1 && i > 0 && prev_r <= 1) {
            *measured = 1;
            double f = (0 - log(prev_r)) / (log(r) - log(prev_r));
            return exp(log(prev_T) + f * (log(c->T[i]) - log(prev_T)));
        }
        if (r > 1 && i == 0)
            break; /* below the smallest measured length: the fit says where */
        prev_T = c->T[i];
        prev_r = r;
    }
    *measured = 0;
    return ns / (use_cpu ? c->a_cpu : c->a);
}

/* SIGINT or SIGTERM (vla_cli_parse's handlers): polled between timings, so answered within one
 * (a softmax timing takes at most about --softmax-budget); the timings finished are saved */
static int interrupted(int tty, vla_units *u)
{
    if (tty)
        fputc('\n', stderr);
    return vla_units_end(u, 3);
}


static int in_list(const long *x, int n, long v)
{
    for (int i = 0; i < n; i++)
        if (x[i] == v)
            return 1;
    return 0;
}

/* the command line: vla-scaling's own options and its help */
static opts scaling_opts = {
    .np = 1,
    .precs = {VLA_F32},
    .nd = 4,
    .ds = {16, 32, 64, 128},
    .nT = 3,
    .Ts = {1000, 10000, 100000},
    .repeat = 5,
    .budget = 3,
    .pool = 4096,
};
static const vla_cli_opt scaling_own[] = {
    {"models", "LIST", "models to time, comma-separated (default: every model, as --model "
                       "lists them)"},
    {"precisions", "LIST", "precisions, comma-separated (default f32)"},
    {"ds", "LIST", "key dimensions d (= dv), comma-separated (default 16,32,64,128)"},
    {"Ts", "LIST", "sequence lengths T (default 1000,10000,100000)"},
    {"repeat", "R", "timings per point; the median is reported (default 5)"},
    {"softmax-budget", "SEC", "longest single softmax timing; longer T is extrapolated as "
                              "a*T^2 (default 3)"},
    {"pool", "P", "distinct input steps made before timing and cycled (default 4096)"},
    {"clock", "C", "what ns_per_step and the crossovers are measured by: wall "
                   "(CLOCK_MONOTONIC, the default) or cpu (this thread's CPU time, steadier on "
                   "a shared machine)"},
    {NULL, NULL, NULL}};
static const vla_cli_spec scaling_spec = {
    .prog = "vla-scaling",
    .summary =
        "Times one recurrent step of each model on the CPU backend, one thread pinned to one\n"
        "core, for every d in --ds, T in --Ts and precision in --precisions: ns_per_step is the\n"
        "median over --repeat runs of T steps (wall time / T by clock_gettime(CLOCK_MONOTONIC),\n"
        "or this thread's CPU time with --clock cpu); the inputs are made before the clock\n"
        "starts. Beside it, causal softmax attention\n"
        "computed directly (for each t: scores against k_1..k_t, softmax, weighted values;\n"
        "O(T^2 d) in total) in binary64 for f64 and binary32 otherwise, measured while one\n"
        "run takes at most --softmax-budget seconds and extrapolated beyond as a*T^2. The\n"
        "crossover is the T where softmax's total time passes the model's T * ns_per_step.\n"
        "Claim 5 of the source documents: O(T) cost, and a fused GPU kernel beating softmax\n"
        "beyond about 43,000 tokens; this program measures the CPU. --d, --steps, --model and\n"
        "--precision, when given, stand for one-element --ds, --Ts, --models, --precisions.\n"
        "--resume: skips the timings finished before the stop (each (round, point) and each\n"
        "softmax curve; the table keeps their times as measured then); the timing in\n"
        "progress starts over. The elapsed line is this process's.",
    .columns = "  model        a model of --model's list, or softmax (causal softmax attention)\n"
               "  prec         f64, f32, f16, bf16, f16-f32, bf16-f32, f16-kern or bf16-kern\n"
               "  track        how A is tracked (--track); - for a model without A and softmax\n"
               "  d            key dimension (= value dimension)\n"
               "  T            sequence length\n"
               "  ns_per_step  median ns per step (softmax: ns_total / T, which grows with T)\n"
               "  steps_per_s  1e9 / ns_per_step\n"
               "  ns_total     the whole sequence: T * ns_per_step for a model\n"
               "  measured     1 measured, 0 extrapolated (softmax a*T^2; crossover from the fit)\n"
               "  cpu_ns_per_step  the same from this thread's CPU time (CLOCK_THREAD_CPUTIME_ID):\n"
               "               below ns_per_step when other processes shared the core\n"
               "One block per (precision, model), then one per precision for softmax, then a\n"
               "last block of crossovers (T = the crossover length, ns_total = the time there).",
    .example = "vla-scaling --models la,vla3 --ds 32,64 --Ts 1000,10000 --repeat 3\n"
               "vla-scaling --repeat 3 --clock cpu --out data/scaling.dat\n"
               "vla-scaling --models vla3 --ds 32 --Ts 1e5 --backend lanes --runs 8",
    .default_steps = 1000,
    .default_stream = "lmlike",
    .default_model = VLA_VLA3,
    .default_ref = REF_NONE,
    .opts = scaling_own,
    .on_opt = on_opt,
    .ctx = &scaling_opts,
};

/* what main's steps share: the command, the configurations and their inputs, the timings, the
 * table */
typedef struct {
    vla_cli c;
    opts *o;
    const vla_backend *backend;
    vla_inputs pools[MAXL]; /* per d: the steps made before timing and cycled */
    int cpu;                /* the core the timings are pinned to, or -1 */
    int tty;
    double t_start;
    long npts;                 /* (precision, model, d, T) points */
    double *tw, *tc;           /* per point x round: the wall clock's and the thread's CPU time */
    int *fin;                  /* per point: its runs finite at the end (the last round) */
    rows_t R;                  /* the models' rows, then softmax's */
    vla_dat *out;
    vla_units *u;
    vla_summary sum;
    int sm_dbl[MAXL];          /* per precision: softmax in binary64 */
    double load;               /* the median share of the core a timing had (thread CPU / wall) */
} scaling_t;

static vla_config cfgs[MAXL][MAXL][MAXL]; /* [prec][model][d] */
static smcurve sm[MAXL][MAXL];            /* [prec][d] */

/* the lists' defaults: every model of the library's list in its order (a trace's own model), and
 * the one-value common options standing for the lists that are not given */
static void lists_from_common(scaling_t *k, int argc, char **argv)
{
    opts *o = k->o;
    const vla_cli *c = &k->c;
    if (!o->set_m)
        for (o->nm = 0; o->nm < (c->model_txt ? 1 : VLA_NMODEL); o->nm++)
            o->models[o->nm] = c->model_txt ? c->cfg.model : (vla_model_kind)o->nm;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--model") && !o->set_m) {
            o->nm = 1;
            o->models[0] = c->cfg.model;
        } else if (!strcmp(argv[i], "--precision") && !o->set_p) {
            o->np = 1;
            o->precs[0] = c->cfg.prec;
        } else if (!strcmp(argv[i], "--d") && !o->set_d) {
            o->nd = 1;
            o->ds[0] = c->cfg.d;
        } else if (!strcmp(argv[i], "--steps") && !o->set_T) {
            o->nT = 1;
            o->Ts[0] = c->steps;
        }
    }
    if (c->runs != 1 && !strcmp(c->backend, "cpu"))
        vla_cli_die(&scaling_spec, "--runs: on the cpu backend the timing is of one run on one core "
                                   "(--backend lanes times --runs runs side by side)");
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--dv") || !strcmp(argv[i], "--ref"))
            vla_cli_die(&scaling_spec, "%s: not an option of a timing (dv = d; no reference)",
                        argv[i]);
}

/* every configuration (cfgs), checked before any timing starts, every --set read by one of the
 * models, and every T a whole number of chunks */
static void make_configs(scaling_t *k, int argc, char **argv)
{
    const opts *o = k->o;
    const vla_cli *c = &k->c;
    for (int pi = 0; pi < o->np; pi++)
        for (int mi = 0; mi < o->nm; mi++)
            for (int di = 0; di < o->nd; di++) {
                vla_config *cf = &cfgs[pi][mi][di];
                vla_config_default(cf, o->models[mi], (int)o->ds[di]);
                cf->prec = o->precs[pi];
                cf->mode = c->cfg.mode;
                cf->form = c->cfg.form;
                cf->chunk = c->cfg.chunk;
                if (vla_model_has_A(cf->model)) {
                    cf->track = c->cfg.track;
                    cf->solve_k = c->cfg.solve_k;
                    cf->solve_tol = c->cfg.solve_tol;
                }
                for (int i = 1; i + 1 < argc; i++)
                    if (!strcmp(argv[i], "--set")) {
                        char key[64];
                        const char *eq = strchr(argv[i + 1], '=');
                        size_t kl = (size_t)(eq - argv[i + 1]);
                        memcpy(key, argv[i + 1], kl);
                        key[kl] = 0;
                        vla_config_set(cf, key, eq + 1); /* the parser has checked it */
                    }
                vla_error why = {0}; /* (vla_config_check gives no reason) */
                if (vla_config_check(cf) || vla_track_check(cf, &why) || vla_form_check(cf, &why))
                    vla_cli_die(&scaling_spec, "model %s at d = %ld in %s: the configuration is "
                                "not valid%s%s", vla_model_name(cf->model), o->ds[di],
                                vla_prec_name(cf->prec), why.code ? ": " : "",
                                why.code ? vla_error_msg(&why) : "");
            }
    vla_config by_model[MAXL];
    for (int mi = 0; mi < o->nm; mi++)
        by_model[mi] = cfgs[0][mi][0];
    vla_cli_sets_read(c, &scaling_spec, by_model, o->nm);
    for (int ti = 0; ti < o->nT; ti++) /* a chunk's tokens are computed at its end */
        if (vla_form_pending(&c->cfg, o->Ts[ti]))
            vla_cli_die(&scaling_spec, "--Ts %ld: no multiple of the chunk's C = %d", o->Ts[ti],
                        c->cfg.chunk);
}

/* the inputs of each d, drawn before timing: the longest T's steps, or --pool's */
static void draw_pools(scaling_t *k)
{
    const opts *o = k->o;
    long maxT = 0;
    for (int ti = 0; ti < o->nT; ti++)
        maxT = o->Ts[ti] > maxT ? o->Ts[ti] : maxT;
    long pool_len = o->pool < maxT ? o->pool : maxT;
    for (int di = 0; di < o->nd; di++) {
        vla_error err;
        if (vla_inputs_draw(&k->pools[di], k->c.stream, k->c.seed, (int)o->ds[di], (int)o->ds[di],
                            1, pool_len, VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D | VLA_IN_A | VLA_IN_B,
                            &err))
            vla_cli_die(&scaling_spec, "--stream at d = %ld: %s", o->ds[di], vla_error_msg(&err));
    }
}

/* one core: the question is the latency of a step, and a migration mid-run is noise. The core,
 * or -1 */
static int pin_core(void)
{
    int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set))
            cpu = -1;
    }
    return cpu;
}

/* what main made before a stop or a failure, freed; its status */
static int stopped(int status, scaling_t *k)
{
    for (int di = 0; di < k->o->nd; di++)
        vla_inputs_free(&k->pools[di]);
    free(k->tw);
    free(k->tc);
    free(k->fin);
    free(k->R.r);
    return status;
}

/* The models' timings: the repeats go round every configuration in turn rather than back to back,
 * so that a burst of load from other processes spreads over all points instead of spoiling one
 * point's every timing; the median per point is then taken. Each timing (round, point) a unit of
 * the checkpoint, those saved read back. 0, or main's status for a stop or a failure */
static int time_models(scaling_t *k)
{
    const opts *o = k->o;
    const int tty = k->tty;
    const long npts = k->npts;
    for (int rep = 0; rep < o->repeat; rep++) {
        long p = 0;
        for (int pi = 0; pi < o->np; pi++)
            for (int mi = 0; mi < o->nm; mi++)
                for (int di = 0; di < o->nd; di++)
                    for (int ti = 0; ti < o->nT; ti++, p++) {
                        double *tw = &k->tw[p * o->repeat + rep], *tc = &k->tc[p * o->repeat + rep];
                        const double *saved = vla_units_get(k->u, (int)(rep * npts + p), NULL);
                        if (saved) {
                            *tw = saved[0];
                            *tc = saved[1];
                            k->fin[p] = (int)saved[2];
                            continue;
                        }
                        if (tty)
                            fprintf(stderr, "\rround %d of %d: %s %s d=%ld T=%ld ...          ",
                                    rep + 1, o->repeat, vla_model_name(o->models[mi]),
                                    vla_prec_name(o->precs[pi]), o->ds[di], o->Ts[ti]);
                        int e = time_model(k->backend, &cfgs[pi][mi][di], &k->pools[di], o->Ts[ti],
                                           k->c.runs, tw, tc, &k->fin[p]);
                        if (e == VLA_EINTR || vla_cli_stop)
                            return interrupted(tty, k->u);
                        if (e) {
                            fprintf(stderr, "%svla-scaling: %s in %s at d = %ld: %s\n",
                                    tty ? "\n" : "", vla_model_name(o->models[mi]),
                                    vla_prec_name(o->precs[pi]), o->ds[di], vla_strerror(e));
                            return 1;
                        }
                        const double rec[3] = {*tw, *tc, k->fin[p]};
                        if (vla_units_save(k->u, (int)(rep * npts + p), rec, sizeof rec)) {
                            fprintf(stderr, "%svla-scaling: out of memory\n", tty ? "\n" : "");
                            return 1;
                        }
                    }
    }
    return 0;
}

/* the models' rows (the median of each point's timings), the load (the median share of the core
 * a timing had), and the summary's line on the states' finiteness; the timings freed */
static void model_rows(scaling_t *k)
{
    const opts *o = k->o;
    const long npts = k->npts;
    k->load = 1;
    double *share = malloc(npts * o->repeat * sizeof *share);
    if (share) {
        for (long i = 0; i < npts * o->repeat; i++)
            share[i] = k->tc[i] / k->tw[i];
        k->load = vla_median(share, (int)(npts * o->repeat));
        free(share);
    }
    long p = 0;
    for (int pi = 0; pi < o->np; pi++)
        for (int mi = 0; mi < o->nm; mi++)
            for (int di = 0; di < o->nd; di++)
                for (int ti = 0; ti < o->nT; ti++, p++) {
                    double cpu = vla_median(k->tc + p * o->repeat, o->repeat);
                    double wall = vla_median(k->tw + p * o->repeat, o->repeat);
                    double ns = o->clock_cpu ? cpu : wall;
                    add(&k->R, o->models[mi], o->precs[pi], o->ds[di], o->Ts[ti], ns,
                        ns * o->Ts[ti], 1, cpu);
                }
    long nbad = 0, first = -1;
    for (p = 0; p < npts; p++)
        if (!k->fin[p] && nbad++ == 0)
            first = p;
    if (nbad) {
        long ti = first % o->nT, di = first / o->nT % o->nd, mi = first / o->nT / o->nd % o->nm,
             pi = first / o->nT / o->nd / o->nm;
        vla_summary_add(&k->sum, 1, "the state is not finite at the end of %ld of %ld timed points "
                        "(first: %s %s d=%ld T=%ld): their times are those of Inf or NaN "
                        "arithmetic", nbad, npts, vla_model_name(o->models[mi]),
                        vla_prec_name(o->precs[pi]), o->ds[di], o->Ts[ti]);
    } else {
        vla_summary_add(&k->sum, 0, "the state is finite at the end of every timed run");
    }
    free(k->fin);
    free(k->tw);
    free(k->tc);
    k->fin = NULL, k->tw = k->tc = NULL; /* (for stopped()) */
}

/* x[0 .. n - 1] sorted in place, ascending */
static void sort_longs(long *x, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
            long tmp = x[j];
            x[j] = x[j - 1];
            x[j - 1] = tmp;
        }
}

/* softmax's curve at precision pi and d index di: lengths doubling from 16, and the requested
 * ones, while a run fits the budget; fitted and saved as a unit of the checkpoint (read back
 * where saved). 0, or main's status for a stop or a failure */
static int softmax_curve(scaling_t *k, int pi, int di)
{
    const opts *o = k->o;
    const int tty = k->tty;
    smcurve *cv = &sm[pi][di];
    const int unit = (int)(k->npts * o->repeat) + pi * o->nd + di;
    const void *saved = vla_units_get(k->u, unit, NULL);
    if (saved) {
        memcpy(cv, saved, sizeof *cv);
        return 0;
    }
    long grid[128];
    int ng = 0;
    for (long T = 16; T <= 1000000000L && ng < 64; T *= 2)
        grid[ng++] = T;
    for (int ti = 0; ti < o->nT; ti++)
        if (!in_list(grid, ng, o->Ts[ti]))
            grid[ng++] = o->Ts[ti];
    sort_longs(grid, ng);
    double last_T = 0, last_ns = 0, warm;
    time_softmax(&k->pools[di], 256, k->sm_dbl[pi], &warm); /* code and pages, untimed */
    for (int gi = 0; gi < ng && cv->n < 64; gi++) {
        long T = grid[gi];
        if (last_T > 0 && last_ns * (T / last_T) * (T / last_T) > o->budget * 1e9)
            break;
        if (tty)
            fprintf(stderr, "\rsoftmax %s d=%ld T=%ld ...          ",
                    k->sm_dbl[pi] ? "f64" : "f32", o->ds[di], T);
        double x[64], y[64];
        int reps = 0;
        for (; reps < o->repeat && reps < 64; reps++) {
            if (vla_cli_stop)
                return interrupted(tty, k->u);
            x[reps] = time_softmax(&k->pools[di], T, k->sm_dbl[pi], &y[reps]);
            if (x[reps] < 0) {
                fprintf(stderr, "%svla-scaling: softmax at T = %ld, d = %ld: out of memory\n",
                        tty ? "\n" : "", T, o->ds[di]);
                return 1;
            }
            if (x[reps] * (o->repeat - 1) > o->budget * 1e9) { /* one long run is enough */
                reps++;
                break;
            }
        }
        cv->T[cv->n] = T;
        cv->cpu[cv->n] = vla_median(y, reps);
        cv->ns[cv->n] = o->clock_cpu ? cv->cpu[cv->n] : vla_median(x, reps);
        last_T = T;
        last_ns = cv->ns[cv->n];
        cv->n++;
    }
    fit_quadratic(cv);
    if (vla_units_save(k->u, unit, cv, sizeof *cv)) {
        fprintf(stderr, "%svla-scaling: out of memory\n", tty ? "\n" : "");
        return 1;
    }
    return 0;
}

/* softmax's curves, per precision and d, measured once per arithmetic (binary64 or binary32):
 * 0, or main's status for a stop or a failure */
static int softmax_curves(scaling_t *k)
{
    const opts *o = k->o;
    for (int pi = 0; pi < o->np; pi++)
        k->sm_dbl[pi] = vla_prec_compute(o->precs[pi]) == VLA_FMT_F64;
    for (int pi = 0; pi < o->np; pi++) {
        int done_before = 0, st;
        for (int pj = 0; pj < pi; pj++)
            done_before |= k->sm_dbl[pj] == k->sm_dbl[pi];
        for (int di = 0; !done_before && di < o->nd; di++)
            if ((st = softmax_curve(k, pi, di)))
                return st;
        for (int pj = 0; pj < pi; pj++) /* the same softmax arithmetic: measured once */
            if (k->sm_dbl[pj] == k->sm_dbl[pi]) {
                memcpy(sm[pi], sm[pj], sizeof sm[pi]);
                break;
            }
    }
    return 0;
}

/* the table's header lines on what was timed, how, and softmax's fits */
static void table_meta(const scaling_t *k)
{
    const opts *o = k->o;
    const vla_cli *c = &k->c;
    vla_dat *out = k->out;
    char list[512];
    int n = 0;
    for (int i = 0; i < o->nm; i++)
        n += snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", vla_model_name(o->models[i]));
    vla_dat_meta(out, "models", "%s%s", list, vla_cli_model_src(c, o->set_m ? "--models" : o->nm
                                                                > 1 ? "the default" : NULL, 1));
    n = 0;
    for (int i = 0; i < o->np; i++)
        n += snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", vla_prec_name(o->precs[i]));
    vla_dat_meta(out, "precisions", "%s (mode %s)", list, c->cfg.mode == VLA_FAST ? "fast" : "strict");
    n = 0;
    for (int i = 0; i < o->nd; i++)
        n += snprintf(list + n, sizeof list - n, "%s%ld", i ? "," : "", o->ds[i]);
    vla_dat_meta(out, "ds", "%s (dv = d)", list);
    n = 0;
    for (int i = 0; i < o->nT; i++)
        n += snprintf(list + n, sizeof list - n, "%s%ld", i ? "," : "", o->Ts[i]);
    vla_dat_meta(out, "Ts", "%s", list);
    vla_dat_meta(out, "stream", "%s, seed %llu, head 0: the first %ld steps made before timing and "
                                "cycled", c->stream, (unsigned long long)c->seed, k->pools[0].T);
    vla_dat_meta(out, "backend", "%s, %d run%s, one thread%s", c->backend, c->runs,
                 c->runs == 1 ? "" : "s side by side (ns per run-step)",
                 k->cpu >= 0 ? ", pinned to one core" : "");
    if (k->cpu >= 0)
        vla_dat_meta(out, "cpu", "%d of %ld online", k->cpu, sysconf(_SC_NPROCESSORS_ONLN));
    vla_dat_meta(out, "timer", "%s; ns_per_step = median of %d timings of T steps of a fresh model "
                               "(time / T), the repeats taken round all points in turn",
                 o->clock_cpu ? "clock_gettime(CLOCK_THREAD_CPUTIME_ID), thread CPU time"
                              : "clock_gettime(CLOCK_MONOTONIC), wall clock", o->repeat);
    vla_dat_meta(out, "softmax", "causal, direct O(T^2 d): scores q_t . k_j / sqrt(d) for j <= t, "
                                 "max-shifted exp, weighted sum of v_j; strict C like the models");
    for (int pi = 0; pi < o->np; pi++)
        for (int di = 0; di < o->nd; di++) {
            const smcurve *cv = &sm[pi][di];
            vla_dat_meta(out, "softmax-fit",
                         "prec=%s d=%ld measured T=%.0f..%.0f (budget %g s per run), beyond that "
                         "extrapolated as ns_total = a*T^2 with a = %.6g ns (fit over T >= %ld, "
                         "worst relative residual %.2g)",
                         k->sm_dbl[pi] ? "f64" : "f32", o->ds[di], cv->n ? cv->T[0] : 0,
                         cv->n ? cv->T[cv->n - 1] : 0, o->budget, cv->a, cv->fit_from, cv->resid);
        }
}

/* crossovers against ns_per_step at the largest T (the steady state, most steps timed): a header
 * line each, and their rows into X */
static void crossovers(scaling_t *k, rows_t *X)
{
    const opts *o = k->o;
    const rows_t *R = &k->R;
    for (int pi = 0; pi < o->np; pi++)
        for (int mi = 0; mi < o->nm; mi++)
            for (int di = 0; di < o->nd; di++) {
                double ns = 0, cpu = 0, bestT = 0;
                for (long i = 0; i < R->n; i++) {
                    const double *v = R->r[i].v;
                    if (v[0] == o->models[mi] && v[1] == o->precs[pi] && v[2] == o->ds[di] &&
                        v[3] > bestT) {
                        bestT = v[3];
                        ns = v[4];
                        cpu = v[8];
                    }
                }
                int meas, meas_cpu;
                double Tx = crossover(&sm[pi][di], 0, ns, &meas);
                double Tc = crossover(&sm[pi][di], 1, cpu, &meas_cpu);
                vla_dat_meta(k->out, "crossover", "model=%s prec=%s d=%ld T=%.0f (%s; model %.4g "
                                                  "ns per step at T=%.0f; by thread CPU time: "
                                                  "T=%.0f)",
                             vla_model_name(o->models[mi]), vla_prec_name(o->precs[pi]), o->ds[di],
                             Tx, meas ? "between measured softmax lengths" : "from the a*T^2 fit",
                             ns, bestT, Tc);
                add(X, o->models[mi], o->precs[pi], o->ds[di], Tx, ns, Tx * ns, meas, cpu);
            }
}

/* how a step's cost grows with d and with T, from thread CPU time: a summary that other
 * processes on the core must not bend */
static void d_exponents(const scaling_t *k)
{
    const opts *o = k->o;
    const rows_t *R = &k->R;
    for (int pi = 0; pi < o->np; pi++)
        for (int mi = 0; mi < o->nm; mi++) {
            double xs[MAXL], ys[MAXL], tlo = 0, thi = 0;
            for (int di = 0; di < o->nd; di++) {
                double best = 0, lo = 0, loT = 1e300;
                for (long i = 0; i < R->n; i++) {
                    const double *v = R->r[i].v;
                    if (v[0] != o->models[mi] || v[1] != o->precs[pi] || v[2] != o->ds[di])
                        continue;
                    if (v[3] > best) {
                        best = v[3];
                        ys[di] = v[8];
                    }
                    if (v[3] < loT) {
                        loT = v[3];
                        lo = v[8];
                    }
                }
                xs[di] = (double)o->ds[di];
                tlo += lo;
                thi += ys[di];
            }
            vla_dat_meta(k->out, "d-exponent", "model=%s prec=%s slope=%.2f (log cpu_ns_per_step "
                                               "against log d at the largest T); T-constancy %.3f "
                                               "(ns per step at the largest T over that at the "
                                               "smallest, summed over d; 1: the cost of a step "
                                               "does not grow with T)",
                         vla_model_name(o->models[mi]), vla_prec_name(o->precs[pi]),
                         vla_loglog_slope(xs, ys, o->nd), thi / tlo);
        }
}

/* softmax's rows, one block per precision (so a plot can pick by code): the measured lengths and
 * the requested ones, those beyond the budget from the fit */
static void softmax_rows(scaling_t *k)
{
    const opts *o = k->o;
    for (int pi = 0; pi < o->np; pi++) {
        vla_dat_block(k->out);
        for (int di = 0; di < o->nd; di++) {
            const smcurve *cv = &sm[pi][di];
            long Ts[128];
            int nt = 0;
            for (int i = 0; i < cv->n; i++)
                Ts[nt++] = (long)cv->T[i];
            for (int ti = 0; ti < o->nT; ti++)
                if (!in_list(Ts, nt, o->Ts[ti]))
                    Ts[nt++] = o->Ts[ti];
            sort_longs(Ts, nt);
            for (int i = 0; i < nt; i++) {
                double tot = NAN, ctot = NAN;
                int meas = 0;
                for (int j = 0; j < cv->n; j++)
                    if ((long)cv->T[j] == Ts[i]) {
                        tot = cv->ns[j];
                        ctot = cv->cpu[j];
                        meas = 1;
                    }
                if (!meas) {
                    tot = cv->a * (double)Ts[i] * (double)Ts[i];
                    ctot = cv->a_cpu * (double)Ts[i] * (double)Ts[i];
                }
                add(&k->R, SOFTMAX, o->precs[pi], o->ds[di], Ts[i], tot / Ts[i], tot, meas,
                    ctot / Ts[i]);
                put_row(k->out, &k->R.r[k->R.n - 1], k->c.cfg.track);
            }
        }
    }
}

int main(int argc, char **argv)
{
    static scaling_t k = {.o = &scaling_opts};
    const opts *o = k.o;
    vla_cli *c = &k.c;
    g_spec = &scaling_spec;
    vla_cli_parse(c, &scaling_spec, argc, argv);
    lists_from_common(&k, argc, argv);
    k.backend = vla_backend_named(c->backend);
    make_configs(&k, argc, argv);
    draw_pools(&k);
    k.cpu = pin_core();
    k.tty = isatty(2);
    k.t_start = now_ns();
    k.npts = (long)o->np * o->nm * o->nd * o->nT;
    k.tw = malloc(k.npts * o->repeat * sizeof *k.tw);
    k.tc = malloc(k.npts * o->repeat * sizeof *k.tc);
    k.fin = malloc(k.npts * sizeof *k.fin);
    if (!k.tw || !k.tc || !k.fin) {
        fprintf(stderr, "vla-scaling: out of memory\n");
        return 1;
    }
    /* units of the checkpoint: each timing (round, point), then each softmax curve (prec, d);
     * a resumed table keeps the saved timings as they were measured */
    k.out = vla_cli_out(c, &scaling_spec); /* opened first: a table that cannot be written stops
                                             * the program before minutes of timings */
    char extra[64];
    snprintf(extra, sizeof extra, "backend=%s\n", c->backend);
    int st = vla_units_open(&k.u, c, &scaling_spec, "timing", extra,
                            (int)(k.npts * o->repeat + o->np * o->nd), sizeof(smcurve));
    if (st || (st = time_models(&k)))
        return stopped(st, &k);
    model_rows(&k);
    if ((st = softmax_curves(&k)))
        return stopped(st, &k);
    if (vla_cli_stop)
        return stopped(interrupted(k.tty, k.u), &k);
    if (k.tty)
        fprintf(stderr, "\r%60s\r", "");
    double elapsed = (now_ns() - k.t_start) * 1e-9;
    vla_units_end(k.u, 0);
    table_meta(&k);
    rows_t X = {0};
    crossovers(&k, &X);
    if (o->nd >= 2)
        d_exponents(&k);
    vla_dat_meta(k.out, "load", "thread CPU time / wall time over the model timings: median %.2f "
                                "(1: the core was ours; lower: others shared it and wall-clock "
                                "numbers are inflated)", k.load);
    vla_dat_meta(k.out, "elapsed", "%.1f s for all timings", elapsed);
    vla_cli_summary_end(&k.sum, scaling_spec.prog, k.out);
    vla_dat_columns(k.out, COLUMNS);
    for (long i = 0; i < k.R.n; i++) {
        if (i && (k.R.r[i].v[0] != k.R.r[i - 1].v[0] || k.R.r[i].v[1] != k.R.r[i - 1].v[1]))
            vla_dat_block(k.out);
        put_row(k.out, &k.R.r[i], c->cfg.track);
    }
    softmax_rows(&k);
    vla_dat_block(k.out);
    for (long i = 0; i < X.n; i++)
        put_row(k.out, &X.r[i], c->cfg.track);
    int status = vla_cli_close(k.out, c, &scaling_spec, 0);
    for (int di = 0; di < o->nd; di++)
        vla_inputs_free(&k.pools[di]);
    free(k.R.r);
    free(X.r);
    return status;
}
