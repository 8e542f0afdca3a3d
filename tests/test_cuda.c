/* test_cuda.c: the CUDA backend (kernels/) against lib's strict CPU model, bit for bit: every
 * model, way of tracking A (sm, sm-sym) and precision at d = 4, 32, 33 and 64, the read-out after
 * every step and the whole state at the end of every launch. On the GPU when there is one (else
 * the test skips, saying why); and always the same kernel text emulated on host threads, which
 * checks the block decomposition (the split loops, the barriers, the padded layout) here too.
 * Both sides run recur.h's text with every reduction in the same order, so nothing differs
 * but NaN payloads (x86 and CUDA make different default NaNs): NaNs compare equal. */
#include "check.h"
#include "vlacuda.h"
#include "vlastab.h"
#include "fmt.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    vla_model_kind mk;
    vla_track tr;
    vla_prec p;
    int d, dv;
    const char *stream;
    const char *set; /* "name=value,..." applied with vla_config_set, or NULL */
    int inputs;      /* 1: delta's own gate and beta; 2: its scalar decay */
} ccase;


static void describe(const ccase *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s %s d=%d dv=%d %s%s%s", vla_model_name(c->mk), vla_track_name(c->tr),
             vla_prec_name(c->p), c->d, c->dv, c->stream, c->set ? " " : "", c->set ? c->set : "");
}

/* the gate, rate and decay a delta run gets on top of its stream: uniform, reproducible */
static void add_delta_inputs(const ccase *c, vla_step_buf *b, int head, long t)
{
    if (c->inputs == 1) {
        for (int i = 0; i < c->dv; i++)
            b->g[i] = 0.5 + 0.5 * vla_uniform(99, VLA_VAR_G, head, t, i);
        b->has_g = 1;
        b->beta = 1.9 * vla_uniform(99, VLA_VAR_BETA, head, t, 0) + 0.05;
    } else if (c->inputs == 2) {
        b->decay = 0.8 + 0.2 * vla_uniform(99, VLA_VAR_AUX, head, t, 0);
    }
}

/* Runs `runs` heads of the case for `steps` steps, `chunk` steps per launch, on the backend and on
 * the CPU; returns the number of differing comparisons and describes the first one. */
static long cuda_case(const ccase *c, const vla_cuda_opts *opts, int runs, long steps, long chunk)
{
    char what[160];
    vla_error err = {0};
    describe(c, what, sizeof what);
    vla_config cfg;
    vla_config_default(&cfg, c->mk, c->d);
    cfg.dv = c->dv;
    cfg.prec = c->p;
    cfg.track = c->tr;
    if (c->set) {
        char buf[200], *save = NULL;
        snprintf(buf, sizeof buf, "%s", c->set);
        for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            *eq = 0;
            CHECK_MSG(!strcmp(kv, "track") ? vla_track_set(&cfg, eq + 1) == 0
                                           : vla_config_set(&cfg, kv, eq + 1) == 0,
                      "%s: set %s", what, kv);
        }
    }
    if (c->inputs == 2)
        CHECK(vla_config_set(&cfg, "delta_form", "decay") == 0);
    vla_cuda *g;
    if (opts->target != VLA_CUDA_LANES && vla_cuda_smem_bytes(&cfg) > VLA_CUDA_SMEM_MAX) {
        /* a state that outgrows a block's shared memory (loglinear's levels at d = 33 in f64,
         * at d = 64) is refused, with the reason */
        CHECK_MSG(vla_cuda_new(&g, &cfg, runs, opts, &err) == VLA_ERANGE &&
                      strstr(err.msg, "shared memory"),
                  "%s: not refused for its shared memory: %s", what, err.msg);
        return 0;
    }
    if (vla_cuda_new(&g, &cfg, runs, opts, &err)) {
        CHECK_MSG(0, "%s: vla_cuda_new: %s", what, err.msg);
        return 1;
    }
    vla_model **cpu = calloc(runs, sizeof *cpu);
    vla_stream **st = calloc(runs, sizeof *st);
    vla_step_buf *buf = calloc((size_t)runs * chunk, sizeof *buf);
    vla_input *in = calloc((size_t)runs * chunk, sizeof *in);
    unsigned char *rd = calloc((size_t)runs * chunk, 1);
    size_t nn = (size_t)(c->d > c->dv ? c->d : c->dv) * c->d;
    double *o = malloc((size_t)runs * chunk * c->dv * sizeof *o), *x = malloc(nn * sizeof *x),
           *y = malloc(nn * sizeof *y);
    for (int r = 0; r < runs; r++) {
        CHECK(vla_model_new(&cpu[r], &cfg) == 0);
        CHECK_MSG(vla_stream_open(&st[r], c->stream, c->d, c->dv, 4321, &err) == 0,
                  "%s", err.msg);
    }
    for (long i = 0; i < (long)runs * chunk; i++)
        vla_step_buf_alloc(&buf[i], c->d, c->dv);
    long len = vla_stream_length(st[0]);
    if (len > 0 && steps > len)
        steps = len;

    long bad = 0;
    static const vla_quantity qs[] = {VLA_Q_S,  VLA_Q_A,     VLA_Q_N, VLA_Q_O,
                                      VLA_Q_KP, VLA_Q_ALPHA, VLA_Q_M, VLA_Q_SOLVER};
    static const char *const qn[] = {"S", "A", "n", "o", "kp", "alpha", "M", "solver"};
    const int keeps_M = vla_track_holds(cfg.track) == VLA_HOLDS_M;
    for (long t0 = 0; t0 < steps && !bad; t0 += chunk) {
        long n = steps - t0 < chunk ? steps - t0 : chunk;
        for (int r = 0; r < runs; r++)
            for (long t = 0; t < n; t++) {
                vla_step_buf *b = &buf[r * n + t];
                vla_stream_get(st[r], r, t0 + t + 1, b);
                add_delta_inputs(c, b, r, t0 + t + 1);
                in[r * n + t] = vla_input_of(b);
                rd[r * n + t] = (unsigned char)b->is_read;
            }
        int e = vla_cuda_run(g, n, in, rd, o);
        CHECK_MSG(e == 0, "%s: vla_cuda_run: %s", what, vla_error_msg(vla_cuda_error(g)));
        if (e) {
            bad++;
            break;
        }
        for (int r = 0; r < runs && !bad; r++) {
            for (long t = 0; t < n && !bad; t++) {
                long i = r * n + t;
                CHECK(rd[i] ? vla_model_read(cpu[r], buf[i].q) == 0
                            : vla_model_step(cpu[r], &in[i]) == 0);
                vla_model_get(cpu[r], VLA_Q_O, x);
                for (int j = 0; j < c->dv && !bad; j++)
                    if (!vla_test_same(o[i * c->dv + j], x[j])) {
                        CHECK_MSG(0, "%s: run %d step %ld: o[%d] %a, cpu %a", what, r, t0 + t + 1,
                                  j, o[i * c->dv + j], x[j]);
                        bad++;
                    }
            }
            for (int q = 0; q < (keeps_M ? 8 : 6) && !bad; q++) {
                if (qs[q] == VLA_Q_A && !vla_model_has_A(c->mk))
                    continue;
                size_t m = qs[q] == VLA_Q_S                         ? (size_t)c->dv * c->d
                         : qs[q] == VLA_Q_A || qs[q] == VLA_Q_M ? (size_t)c->d * c->d
                         : qs[q] == VLA_Q_O                         ? (size_t)c->dv
                         : qs[q] == VLA_Q_SOLVER                    ? 3
                                                                    : (size_t)c->d;
                CHECK(vla_cuda_get(g, r, qs[q], y) == 0 && vla_model_get(cpu[r], qs[q], x) == 0);
                for (size_t j = 0; j < m && !bad; j++)
                    if (!vla_test_same(y[j], x[j])) {
                        CHECK_MSG(0, "%s: run %d after step %ld: %s[%zu] %a, cpu %a", what, r,
                                  t0 + n, qn[q], j, y[j], x[j]);
                        bad++;
                    }
            }
            vla_counts kc;
            const vla_counts *cc = vla_model_counts(cpu[r]);
            CHECK(vla_cuda_counts(g, r, &kc) == 0);
            if (!bad && memcmp(&kc, cc, sizeof kc)) {
                CHECK_MSG(0, "%s: run %d: counters differ (guard %ld/%ld, zero_norm %ld/%ld, "
                          "nudge %ld/%ld, clip %ld/%ld, clamp %ld/%ld, steps %ld/%ld, solve "
                          "iterations %ld/%ld, failures %ld/%ld from %ld/%ld)",
                          what, r, kc.guard, cc->guard, kc.zero_norm, cc->zero_norm, kc.nudge,
                          cc->nudge, kc.clip, cc->clip, kc.clamp, cc->clamp, kc.steps, cc->steps,
                          kc.solve_iters, cc->solve_iters, kc.solve_fail, cc->solve_fail,
                          kc.solve_fail_t, cc->solve_fail_t);
                bad++;
            }
            if (!bad)
                CHECK_EQ_INT(vla_cuda_t(g, r), vla_model_t(cpu[r]));
        }
    }
    for (long i = 0; i < (long)runs * chunk; i++)
        vla_step_buf_free(&buf[i]);
    for (int r = 0; r < runs; r++) {
        vla_model_free(cpu[r]);
        vla_stream_close(st[r]);
    }
    free(cpu);
    free(st);
    free(buf);
    free(in);
    free(rd);
    free(o);
    free(x);
    free(y);
    vla_cuda_free(g);
    return bad;
}

static const char *const streams[] = {"lmlike", "gauss", "subspace:2,0.01"};

/* the cases beyond the grid: reads, gates, decay, switches, dv != d, the guard */
static const ccase extras[] = {
    {VLA_VLA3, VLA_TRACK_SM, VLA_F32, 32, 32, "mqar:24,8", NULL, 0},
    {VLA_LA, VLA_TRACK_SM, VLA_F16, 32, 32, "mqar:24,8", "features=id", 0},
    {VLA_RLS, VLA_TRACK_SMSYM, VLA_BF16_F32, 33, 33, "mqar:12,0", NULL, 0},
    {VLA_VLA1, VLA_TRACK_SM, VLA_F64, 32, 32, "mqar:16,4", NULL, 0},
    {VLA_DELTA, VLA_TRACK_SM, VLA_F32, 33, 33, "gauss", NULL, 1},
    {VLA_DELTA, VLA_TRACK_SM, VLA_BF16, 32, 32, "lmlike", NULL, 2},
    {VLA_DELTA, VLA_TRACK_SM, VLA_F16_F32, 4, 4, "gauss", NULL, 1},
    {VLA_VLA3, VLA_TRACK_SMSYM, VLA_F16, 32, 20, "gauss", "nudge=off", 0},
    {VLA_VLA3, VLA_TRACK_SM, VLA_F32, 24, 40, "lmlike", "renorm=2", 0},
    {VLA_VLA1, VLA_TRACK_SMSYM, VLA_F16_F32, 32, 32, "gauss:30", "clamp=5,clip=0.5", 0},
    {VLA_VLA3, VLA_TRACK_SM, VLA_BF16, 33, 33, "repeat:3", "stab_eps=0.5", 0},
    {VLA_RLS, VLA_TRACK_SM, VLA_F16, 64, 64, "subspace:2,0.001", "features=id", 0},
    {VLA_VLA3, VLA_TRACK_SM, VLA_F32, 128, 128, "lmlike", NULL, 0},
    {VLA_RLS, VLA_TRACK_SMSYM, VLA_F16_F32, 128, 128, "gauss", NULL, 0},
};

/* the grid: every model, tracking (the first ntr of sm, sm-sym, joseph, chol, solve, cg:8,
 * cheb:8) and precision at each d; runs, steps, launches of chunk steps */
static void grid(const vla_cuda_opts *o, const int *ds, int nd, int ntr, int runs, long steps,
                 long chunk)
{
    static const vla_track trs[] = {VLA_TRACK_SM,    VLA_TRACK_SMSYM, VLA_TRACK_JOSEPH,
                                    VLA_TRACK_CHOL,  VLA_TRACK_SOLVE, VLA_TRACK_CG,
                                    VLA_TRACK_CHEB};
    int k = 0;
    for (int mk = 0; mk < VLA_NMODEL; mk++)
        for (int tr = 0; tr < (vla_model_has_A(mk) ? ntr : 1); tr++)
            for (int p = 0; p < VLA_NPREC; p++)
                for (int di = 0; di < nd; di++, k++) {
                    ccase c = {mk, trs[tr], p, ds[di], ds[di], streams[k % 3],
                               vla_track_holds(trs[tr]) != VLA_HOLDS_A ? "nudge=off,clamp_on=off"
                                                                       : NULL,
                               0};
                    cuda_case(&c, o, runs, steps, chunk);
                }
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++)
        cuda_case(&extras[i], o, runs, steps, chunk);
}

/* the GPU, when there is one: d = 4, 32, 33, 64, 300 steps in launches of 100 */
TEST(cuda_strict_bits_equal_cpu)
{
    static vla_error why;
    static char reason[sizeof why.msg + 40];
    if (vla_cuda_probe(&why) <= 0) {
        snprintf(reason, sizeof reason, "no CUDA device: %s", why.msg);
        vla_test_skip(reason);
        return;
    }
    static const int ds[] = {4, 32, 33, 64};
    vla_cuda_opts o = {VLA_CUDA_GPU, 0, 0, NULL};
    grid(&o, ds, 4, 2, 3, 300, 100);
}

/* The same kernel text on host threads, 3 per block (so that no d splits evenly): d = 4 and 33
 * for every case, 64 once per model; fewer steps, the decomposition is what is under test. */
TEST_SLOW(cuda_emulated_bits_equal_cpu)
{
    static const int ds[] = {4, 33};
    vla_cuda_opts o = {VLA_CUDA_EMULATE, 0, 3, NULL};
    grid(&o, ds, 2, 2, 2, 40, 25);
    for (int mk = 0; mk < VLA_NMODEL; mk++) {
        ccase c = {mk, VLA_TRACK_SM, mk % 2 ? VLA_F32 : VLA_BF16_F32, 64, 64, "lmlike", NULL, 0};
        cuda_case(&c, &o, 1, 12, 12);
    }
}

/* The CPU's vector lanes (16 runs per AVX-512 register, 8 in f64), every tracking they run:
 * 19 runs, so a full group of lanes and a partial one. The runs are distinct heads of their
 * streams, so within a group some lanes take a branch (a guard, a clip, a zero norm) and others
 * do not: the masked writes are under test, and the per-lane counters with them. */
TEST_SLOW(lanes_bits_equal_cpu)
{
    static vla_error why;
    static char reason[sizeof why.msg + 40];
    if (vla_cuda_probe_target(VLA_CUDA_LANES, &why) <= 0) {
        snprintf(reason, sizeof reason, "no lanes: %s", why.msg);
        vla_test_skip(reason);
        return;
    }
    static const int ds[] = {4, 33};
    vla_cuda_opts o = {VLA_CUDA_LANES, 0, 2, NULL};
    grid(&o, ds, 2, 7, 19, 40, 25);
    for (int mk = 0; mk < VLA_NMODEL; mk++) {
        ccase c = {mk, VLA_TRACK_SM, mk % 2 ? VLA_F64 : VLA_F32, 64, 48, "lmlike", NULL, 0};
        cuda_case(&c, &o, 17, 30, 30);
    }
    /* inputs large enough that binary16 overflows in some runs and not in others: lanes turning
     * Inf and NaN beside finite ones (NaNs compare equal, whatever their payload) */
    static const ccase big[] = { /* non-finite (vla-statenorm, 60 steps): 1, 3, 4 of 19 runs */
        {VLA_VLA3, VLA_TRACK_SM, VLA_F16, 8, 8, "gauss:40", "nudge=off", 0},
        {VLA_LA, VLA_TRACK_SM, VLA_F16, 8, 8, "gauss:10", NULL, 0},
        {VLA_VLA1, VLA_TRACK_SM, VLA_F16_F32, 8, 8, "gauss:3000", NULL, 0}};
    for (int i = 0; i < 3; i++)
        cuda_case(&big[i], &o, 19, 60, 30);
    /* the solvers where lanes part: cg stopping at a tolerance in some lanes and not others (and
     * reads, vla1's second solve), forgetting, Cholesky and Chebyshev failing in some bfloat16
     * runs (ill-conditioned M, few of its digits) */
    static const ccase solvers[] = {
        {VLA_VLA1, VLA_TRACK_CG, VLA_F32, 12, 12, "mqar:8,4",
         "track=cg:1e-4,nudge=off,clamp_on=off", 0},
        {VLA_VLA3, VLA_TRACK_CG, VLA_F16, 12, 12, "lmlike", "track=cg:1e-2,nudge=off,gamma=0.99",
         0},
        {VLA_RLS, VLA_TRACK_SOLVE, VLA_BF16, 12, 12, "subspace:2,0.0001", "gamma=0.9", 0},
        {VLA_VLA3, VLA_TRACK_CHEB, VLA_BF16, 12, 12, "subspace:2,0.001", "track=cheb:3,nudge=off",
         0},
        {VLA_VLA3, VLA_TRACK_SM, VLA_F16_F32, 12, 12, "lmlike", "gamma=0.95,nudge=off", 0},
        {VLA_RLS, VLA_TRACK_CHOL, VLA_F32, 12, 12, "gauss", "gamma=0.9", 0}};
    for (size_t i = 0; i < sizeof solvers / sizeof solvers[0]; i++)
        cuda_case(&solvers[i], &o, 19, 300, 100);
}

/* Inputs shared by every run (vla_cuda_stage's shared = 1, what the benchmark times): each lane
 * broadcasts one record, and every run must end with the bits of one CPU model on that stream,
 * with a read step among the writes */
TEST(lanes_shared_inputs_equal_cpu)
{
    vla_error why;
    vla_error err = {0};
    if (vla_cuda_probe_target(VLA_CUDA_LANES, &why) <= 0) {
        vla_test_skip("no lanes");
        return;
    }
    enum { T = 50, RUNS = 21, D = 12 };
    static const vla_prec ps[] = {VLA_F32, VLA_F64, VLA_BF16};
    for (int pi = 0; pi < 3; pi++) {
        vla_config cfg;
        vla_config_default(&cfg, VLA_VLA3, D);
        cfg.prec = ps[pi];
        vla_cuda *g;
        vla_cuda_opts o = {VLA_CUDA_LANES, 0, 2, NULL};
        if (vla_cuda_new(&g, &cfg, RUNS, &o, &err)) {
            CHECK_MSG(0, "vla_cuda_new: %s", err.msg);
            return;
        }
        vla_model *cpu;
        vla_stream *st;
        CHECK(vla_model_new(&cpu, &cfg) == 0);
        CHECK(vla_stream_open(&st, "gauss", D, D, 5, &err) == 0);
        static vla_step_buf b[T];
        vla_input in[T];
        unsigned char rd[T] = {0};
        for (int t = 0; t < T; t++) {
            vla_step_buf_alloc(&b[t], D, D);
            vla_stream_get(st, 0, t + 1, &b[t]);
            in[t] = (vla_input){.q = b[t].q, .k = b[t].k, .v = b[t].v, .u = b[t].u, .beta = NAN, .decay = NAN};
            rd[t] = t == 17;
            CHECK(rd[t] ? vla_model_read(cpu, b[t].q) == 0 : vla_model_step(cpu, &in[t]) == 0);
        }
        CHECK(vla_cuda_stage(g, T, in, rd, 1) == 0 && vla_cuda_launch(g, NULL) == 0);
        double x[D * D], y[D * D];
        long bad = 0;
        static const vla_quantity qs[] = {VLA_Q_S, VLA_Q_A, VLA_Q_N, VLA_Q_O};
        static const int len[] = {D * D, D * D, D, D};
        for (int r = 0; r < RUNS; r++)
            for (int q = 0; q < 4; q++) {
                CHECK(vla_cuda_get(g, r, qs[q], y) == 0 && vla_model_get(cpu, qs[q], x) == 0);
                for (int j = 0; j < len[q]; j++)
                    bad += !vla_test_same(x[j], y[j]);
            }
        vla_counts kc;
        CHECK(vla_cuda_counts(g, RUNS - 1, &kc) == 0);
        CHECK_MSG(bad == 0 && !memcmp(&kc, vla_model_counts(cpu), sizeof kc),
                  "%s: %ld numbers differ from the CPU's", vla_prec_name(ps[pi]), bad);
        for (int t = 0; t < T; t++)
            vla_step_buf_free(&b[t]);
        vla_stream_close(st);
        vla_model_free(cpu);
        vla_cuda_free(g);
    }
}

/* The AVX2 lanes (8 runs per register, f64 4; blends under vector masks) where the processor
 * also has AVX-512: VLA_LANES=avx2 chooses them. 11 runs: a full group and a partial one. */
TEST_SLOW(lanes_avx2_bits_equal_cpu)
{
    vla_error why;
    const char *old = getenv("VLA_LANES");
    setenv("VLA_LANES", "avx2", 1);
    if (vla_cuda_probe_target(VLA_CUDA_LANES, &why) <= 0) {
        vla_test_skip("no AVX2 lanes");
    } else {
        CHECK_EQ_INT(vla_cuda_lanes_width(VLA_F32), 8);
        CHECK_EQ_INT(vla_cuda_lanes_width(VLA_F64), 4);
        static const int ds[] = {5, 32};
        vla_cuda_opts o = {VLA_CUDA_LANES, 0, 2, NULL};
        grid(&o, ds, 2, 7, 11, 30, 30);
    }
    if (old)
        setenv("VLA_LANES", old, 1);
    else
        unsetenv("VLA_LANES");
}

/* the lanes' 16-bit rounding against lib's (fmt.h), over every binary32 pattern in steps of an
 * odd stride, and the edges (subnormals of binary16, overflow, NaN, ties) */
void vla_lanes_round16(int bf, const float *x, float *y, size_t n);
TEST(lanes_round16_equals_lib)
{
    vla_error why;
    if (vla_cuda_probe_target(VLA_CUDA_LANES, &why) <= 0) {
        vla_test_skip("no lanes");
        return;
    }
    enum { N = 1 << 16 };
    static float x[N], y[N];
    long bad = 0;
    const char *old = getenv("VLA_LANES");
    for (int isa = 0; isa < 2; isa++) { /* the best lanes here, then AVX2's */
    if (isa)
        setenv("VLA_LANES", "avx2", 1);
    for (uint64_t base = 0; base < (1ull << 32); base += (uint64_t)N * 4099) {
        for (int i = 0; i < N; i++) {
            uint32_t u = (uint32_t)(base + (uint64_t)i * 4099);
            if (i < 64) /* near the binary16 subnormal grid, its largest value and a bf16 tie */
                u = i < 16 ? 0x33000000u + i : i < 32 ? 0x477fe000u + (i - 16) * 0x100u
                                                      : 0x3f808000u + (i - 32);
            memcpy(&x[i], &u, 4);
        }
        for (int bf = 0; bf < 2; bf++) {
            vla_lanes_round16(bf, x, y, N - 3); /* and a tail */
            for (int i = 0; i < N - 3; i++) {
                float want = bf ? vla_rnd_bf16(x[i]) : vla_rnd_f16(x[i]);
                if (!(isnan(want) && isnan(y[i])) && memcmp(&want, &y[i], 4) && bad++ < 3)
                    CHECK_MSG(0, "%s(%a): lanes %a, lib %a", bf ? "bf16" : "f16", x[i], y[i],
                              want);
            }
        }
    }
    }
    if (old)
        setenv("VLA_LANES", old, 1);
    else
        unsetenv("VLA_LANES");
    CHECK_EQ_INT(bad, 0);
}

/* what the backend refuses, and how it says so */
TEST(cuda_refusals)
{
    vla_error err;
    vla_config c;
    vla_cuda *g;
    vla_cuda_opts o = {VLA_CUDA_EMULATE, 0, 2, NULL};
    vla_config_default(&c, VLA_VLA3, 32);
    c.track = VLA_TRACK_JOSEPH;
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 1, &o, &err), VLA_ENOTSUP);
    CHECK(g == NULL && strstr(err.msg, "sm or sm-sym"));
    /* the kernels take exactly the ways they were compiled for (VLA_CUDA_TRACKS), in a precision
     * where the way is valid */
    for (int t = 0; t < VLA_NTRACK; t++) {
        vla_error why = {0};
        vla_config_default(&c, VLA_VLA3, 8);
        c.track = (vla_track)t;
        if (vla_track_holds(c.track) != VLA_HOLDS_A) /* what the ways that keep M require */
            CHECK(vla_config_set(&c, "nudge", "off") == 0 &&
                  vla_config_set(&c, "clamp_on", "off") == 0);
        for (int p = 0; p < VLA_NPREC && (c.prec = (vla_prec)p, vla_track_check(&c, &why)); p++)
            ;
        if (vla_config_check(&c) || vla_track_check(&c, &why))
            continue;
        int r = vla_cuda_new(&g, &c, 1, &o, &err);
        if (VLA_CUDA_TRACKS >> t & 1u) {
            CHECK_MSG(r == 0, "%s: %s", vla_track_name(c.track), err.msg);
            vla_cuda_free(g);
        } else
            CHECK_MSG(r == VLA_ENOTSUP && g == NULL && strstr(err.msg, "sm or sm-sym"), "%s: %s",
                      vla_track_name(c.track), err.msg);
    }
    vla_config_default(&c, VLA_VLA3, 128);
    c.prec = VLA_F64;
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 1, &o, &err), VLA_ERANGE);
    CHECK_MSG(strstr(err.msg, "up to d = 64 in f64") != NULL, "%s", err.msg);
    vla_config_default(&c, VLA_VLA3, 32);
    c.mode = VLA_FAST;
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 1, &o, &err), VLA_ENOTSUP);
    vla_config_default(&c, VLA_VLA3, 8);
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 0, &o, &err), VLA_EINVAL);
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 2, &o, &err), 0);
    double q[8] = {0}, k[8] = {0}, v[8] = {0};
    k[3] = NAN;
    vla_input in[2] = {{.q = q, .k = q, .v = v, .beta = NAN, .decay = NAN},
                       {.q = q, .k = k, .v = v, .beta = NAN, .decay = NAN}};
    CHECK_EQ_INT(vla_cuda_run(g, 1, in, NULL, NULL), VLA_ENONFINITE);
    CHECK_MSG(strstr(vla_error_msg(vla_cuda_error(g)), "run 1, step 0") != NULL, "%s", vla_error_msg(vla_cuda_error(g)));
    CHECK_EQ_INT(vla_cuda_t(g, 1), 0); /* nothing ran */
    CHECK_EQ_INT(vla_cuda_launch(g, NULL), VLA_EINVAL); /* nothing staged */
    vla_cuda_free(g);
    /* without a GPU, a GPU handle is refused with the probe's reason */
    vla_error why;
    if (vla_cuda_probe(&why) <= 0) {
        CHECK_EQ_INT(vla_cuda_new(&g, &c, 1, NULL, &err), VLA_ENOTSUP);
        CHECK_MSG(!strcmp(err.msg, why.msg), "'%s' vs '%s'", err.msg, why.msg);
    }
    /* delta's decay in a chunk takes the C library's exp: refused on a GPU (GPU or not), run by
     * the emulation and the lanes */
    vla_config_default(&c, VLA_DELTA, 8);
    c.delta_form = VLA_DELTA_DECAY;
    CHECK(vla_form_parse(&c, "chunk:4") == 0);
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 1, NULL, &err), VLA_ENOTSUP);
    CHECK_MSG(strstr(err.msg, "the GPU's exp is another function") != NULL, "%s", err.msg);
    CHECK_EQ_INT(vla_cuda_new(&g, &c, 1, &o, &err), 0);
    vla_cuda_free(g);
    CHECK(strlen(vla_cuda_build()) > 10);
}
