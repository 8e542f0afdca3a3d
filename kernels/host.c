/* host.c: the CUDA backend's API (vlacuda.h) over a device that runs the kernel (kdev.h): the
 * checks, the inputs prepared by lib's own native instantiation of recur.h (khost_inst.h), the
 * staging, and the copies of the state. The same code drives the GPU and its emulation. */
#include "vlacuda.h"
#include "kdev.h"
#include "model_impl.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* lib's native policies once more, each with khost_inst.h's functions added */
#define TAG(x) VLA_CAT(x, kh)
#define PRIMS 0
#define NATIVE_CREATE vla_kernels_native_create
#define NATIVE_EXTRA "../kernels/khost_inst.h"
int vla_kernels_native_create(const vla_config *cfg, vla_model **out);
#include "native_all.h"

typedef struct {
    int (*init)(const vla_config *cfg, const double *S0, void *consts, void *state);
    int (*scratch)(const vla_config *cfg, void **out);
    void (*scratch_free)(void *s);
    void (*prepare)(void *scratch, const vla_input *in, int is_read, void *rec);
    int (*get)(void *scratch, const void *state, vla_quantity q, double *dst);
    size_t es; /* bytes per number */
} kh_policy;
static const kh_policy kh_pol[VLA_NPREC] = {
#define VLA_X_(ID, name, p, ...)                                                                   \
    {kh_init_##p##_kh, kh_scratch_##p##_kh, kh_scratch_free_##p##_kh, kh_prepare_##p##_kh,         \
     kh_get_##p##_kh, sizeof(vla_num_of_##p)},
    VLA_PRECS(VLA_X_)
#undef VLA_X_
};

#define MAX_PREP_THREADS 256

struct vla_cuda {
    vla_config cfg;
    const kdev_ops *ops;
    void *dev;
    const kh_policy *pol;
    void *scratch[MAX_PREP_THREADS]; /* one per preparing thread, made when first needed */
    kparams p;
    size_t es;
    void *h_in;               /* staged records, host side */
    unsigned char *h_flags;
    size_t h_in_cap, h_flags_cap, d_in_cap, d_flags_cap; /* bytes */
    void *d_in, *d_flags;
    struct {                  /* the taps on the device: o, kp, al, moved, prev_a */
        void *p;
        size_t cap;
    } d_tap[5];
    void *h_buf;              /* one run's state, or the read-outs of a launch */
    size_t h_buf_cap;
    int staged;
    vla_error err; /* the last failure: vla_cuda_error */
};

/* the code and the reason, in g's record (may be NULL) and the caller's err (may be NULL) */
static int fail(vla_cuda *g, vla_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(vla_cuda *g, vla_error *err, int code, const char *fmt, ...)
{
    char buf[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (g)
        vla_fail(&g->err, code, "%s", buf);
    return vla_fail(err, code, "%s", buf);
}

/* A and S of binary64 numbers fit shared memory to d = 64, of binary32 ones to 128 */
int vla_cuda_max_d(vla_prec p) { return vla_prec_num_size(p) == sizeof(double) ? 64 : 128; }

long vla_cuda_smem_bytes(const vla_config *cfg)
{
    return karena_off(KA_N_ARRAYS, vla_dims_of(cfg), kshift(cfg->d)) *
           (long)vla_prec_num_size(cfg->prec);
}

int vla_cuda_probe(vla_error *why) { return vla_kdev_cuda()->probe(why); }
const char *vla_cuda_build(void) { return vla_kdev_cuda_build(); }
int vla_cuda_probe_target(vla_cuda_target t, vla_error *why)
{
    const kdev_ops *o = t == VLA_CUDA_EMULATE ? vla_kdev_emu()
                        : t == VLA_CUDA_LANES ? vla_kdev_lanes()
                                              : vla_kdev_cuda();
    return o->probe(why) > 0;
}
const vla_error *vla_cuda_error(const vla_cuda *g)
{
    static const vla_error none = {VLA_EINVAL, "no handle"};
    return g ? &g->err : &none;
}

/* grows a buffer on the device (contents not kept) */
static int dev_reserve(vla_cuda *g, void **p, size_t *cap, size_t bytes, const char *what)
{
    if (bytes <= *cap)
        return VLA_OK;
    if (*p)
        g->ops->release(g->dev, *p);
    *p = NULL;
    *cap = 0;
    int r = g->ops->alloc(g->dev, p, bytes, what, &g->err);
    if (!r)
        *cap = bytes;
    return r;
}

/* grows a host buffer (contents not kept) */
static int host_reserve(vla_cuda *g, void **p, size_t *cap, size_t bytes)
{
    if (bytes <= *cap)
        return VLA_OK;
    free(*p);
    *cap = 0;
    void *q = malloc(bytes);
    if (!q)
        return fail(g, NULL, VLA_ENOMEM, "out of host memory staging %.1f MB", bytes / 1e6);
    *p = q;
    *cap = bytes;
    return VLA_OK;
}

void vla_cuda_free(vla_cuda *g)
{
    if (!g)
        return;
    if (g->dev) {
        void *bufs[] = {g->p.state, (void *)g->p.consts, g->p.counts, g->d_in, g->d_flags};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i])
                g->ops->release(g->dev, bufs[i]);
        for (int i = 0; i < 5; i++)
            if (g->d_tap[i].p)
                g->ops->release(g->dev, g->d_tap[i].p);
        g->ops->close(g->dev);
    }
    for (int i = 0; i < MAX_PREP_THREADS; i++)
        if (g->scratch[i])
            g->pol->scratch_free(g->scratch[i]);
    free(g->h_in);
    free(g->h_flags);
    free(g->h_buf);
    free(g);
}

/* the names of VLA_CUDA_TRACKS' ways: "sm or sm-sym" */
static const char *cuda_tracks(char *buf, size_t len)
{
    int n = 0, k = 0;
    size_t at = 0;
    for (int t = 0; t < VLA_NTRACK; t++)
        n += VLA_CUDA_TRACKS >> t & 1u;
    buf[0] = 0;
    for (int t = 0; t < VLA_NTRACK && at < len; t++)
        if (VLA_CUDA_TRACKS >> t & 1u) {
            k++;
            at += snprintf(buf + at, len - at, "%s%s", k == 1 ? "" : k == n ? " or " : ", ",
                           vla_track_name((vla_track)t));
        }
    return buf;
}

int vla_cuda_supports(const vla_config *cfg, vla_cuda_target target, vla_error *err)
{
    vla_error why;
    int r;
    if ((r = vla_config_check(cfg)))
        return fail(NULL, err, r, "invalid configuration: %s", vla_strerror(r));
    if ((r = vla_track_check(cfg, &why)))
        return fail(NULL, err, r, "%s", vla_error_msg(&why));
    const int lanes = target == VLA_CUDA_LANES;
    if (lanes && (cfg->track == VLA_TRACK_COMP || cfg->track == VLA_TRACK_SR))
        return fail(NULL, err, VLA_ENOTSUP,
                    "track=%s: the lanes run sm, sm-sym, joseph and chol (comp and sr have an "
                    "arithmetic of their own)",
                    vla_track_name(cfg->track));
    if (!lanes && !(VLA_CUDA_TRACKS >> cfg->track & 1u)) { /* not compiled into the kernels */
        char ways[200];
        return fail(NULL, err, VLA_ENOTSUP, "track=%s: the CUDA kernels track A by %s only",
                    vla_track_name(cfg->track), cuda_tracks(ways, sizeof ways));
    }
    if (cfg->mode != VLA_STRICT)
        return fail(NULL, err, VLA_ENOTSUP,
                    "mode=fast: the kernels are strict only (use the CPU for fast mode)");
    if (vla_cache_scaled(cfg))
        return fail(NULL, err, VLA_ENOTSUP,
                    "cache=%s: the kernels keep f16 and bf16 states rounded to nearest without a "
                    "scale; a scaled, fp8, integer, sr or ef cache runs on the CPU (--backend cpu)",
                    vla_cache_name(cfg->cache));
    if (target == VLA_CUDA_GPU && (vla_col_decay(cfg) || vla_col_gate(cfg->model)) &&
        vla_form_pending(cfg, 1))
        return fail(NULL, err, VLA_ENOTSUP,
                    "%s's decays in the chunk form take exp of the cumulative log-decays, which "
                    "lib/ computes with the C library's exp; the GPU's exp is another function, "
                    "so its bits would not be the CPU's (use the cpu, the lanes or the emulation, "
                    "or --form seq or scan, whose decays the host prepares)",
                    vla_model_name(cfg->model));
    if (target == VLA_CUDA_GPU && vla_dims_of(cfg).nt)
        return fail(NULL, err, VLA_ENOTSUP,
                    "%s takes the cos and sin of its angles in every step, which lib/ computes "
                    "with the C library's; the GPU's are other functions, so its bits would not "
                    "be the CPU's (use the cpu, the lanes or the emulation)",
                    vla_model_name(cfg->model));
    int maxd = lanes ? VLA_D_MAX : vla_cuda_max_d(cfg->prec);
    if (cfg->d > maxd || cfg->dv > maxd)
        return fail(NULL, err, VLA_ERANGE,
                    "d = %d, dv = %d: the CUDA kernels keep A and S in shared memory up to "
                    "d = %d in %s",
                    cfg->d, cfg->dv, maxd, vla_prec_name(cfg->prec));
    if (!lanes && vla_cuda_smem_bytes(cfg) > VLA_CUDA_SMEM_MAX)
        return fail(NULL, err, VLA_ERANGE,
                    "%s %s d = %d: a block's state and workspace take %ld bytes of shared memory, "
                    "more than a GPU of compute capability 9.0 allows (%ld)",
                    vla_model_name(cfg->model), vla_prec_name(cfg->prec), cfg->d,
                    vla_cuda_smem_bytes(cfg), VLA_CUDA_SMEM_MAX);
    return VLA_OK;
}

int vla_cuda_new(vla_cuda **out, const vla_config *cfg, int runs, const vla_cuda_opts *opts,
                 vla_error *err)
{
    static const vla_cuda_opts gpu0 = {VLA_CUDA_GPU, 0, 0, NULL};
    int r;
    if (!out || !cfg)
        return fail(NULL, err, VLA_EINVAL, "vla_cuda_new: NULL argument");
    *out = NULL;
    if (!opts)
        opts = &gpu0;
    if (runs < 1)
        return fail(NULL, err, VLA_EINVAL, "runs = %d: at least one run", runs);
    if ((r = vla_cuda_supports(cfg, opts->target, err)))
        return r;
    const int lanes = opts->target == VLA_CUDA_LANES;
    const kdev_ops *ops = opts->target == VLA_CUDA_EMULATE ? vla_kdev_emu()
                          : lanes                          ? vla_kdev_lanes()
                                                           : vla_kdev_cuda();
    vla_error pwhy;
    if (ops->probe(&pwhy) <= 0)
        return fail(NULL, err, VLA_ENOTSUP, "%s", pwhy.msg);

    vla_cuda *g = calloc(1, sizeof *g);
    if (!g)
        return fail(NULL, err, VLA_ENOMEM, "out of host memory");
    g->cfg = *cfg;
    g->cfg.h0 = opts->S0 != NULL; /* the scan form folds S_0 into its first step */
    g->ops = ops;
    g->pol = &kh_pol[cfg->prec];
    g->es = g->pol->es;
    int d = cfg->d, dv = cfg->dv;
    kparams *p = &g->p;
    p->cfg = g->cfg;
    p->d = d;
    p->dv = dv;
    p->runs = runs;
    p->shift = kshift(d);
    p->dm = vla_dims_of(cfg);
    p->rec_len = krec_len(p->dm);
    p->state_len = kstate_len(p->dm);
    p->arena_len = (int)karena_off(KA_N_ARRAYS, p->dm, p->shift);
    r = ops->open(&g->dev, opts->target != VLA_CUDA_GPU ? opts->emu_threads : opts->device,
                  &g->err);
    if (!r)
        r = ops->plan(g->dev, p, &g->err);
    size_t sbytes = (size_t)runs * p->state_len * g->es;
    if (!r)
        r = ops->alloc(g->dev, &p->state, sbytes, "the runs' states", &g->err);
    void *consts = NULL;
    if (!r)
        r = ops->alloc(g->dev, &consts, C_NCONST * g->es, "constants", &g->err);
    p->consts = consts;
    if (!r)
        r = ops->alloc(g->dev, (void **)&p->counts, (size_t)runs * sizeof(kcounts), "counters",
                       &g->err);
    /* the initial state of every run is the CPU model's: replicated, or each run's from its S_0 */
    unsigned char *hs = NULL, *hc = NULL;
    kcounts *hk = NULL;
    if (!r) {
        hs = malloc(sbytes);
        hc = malloc(C_NCONST * g->es);
        hk = calloc(runs, sizeof *hk);
        if (!hs || !hc || !hk)
            r = fail(g, NULL, VLA_ENOMEM, "out of host memory for %d initial states", runs);
    }
    const size_t one = (size_t)p->state_len * g->es;
    for (int i = 0; !r && i < (opts->S0 ? runs : 1); i++)
        if ((r = g->pol->init(cfg, opts->S0 ? opts->S0 + (size_t)i * dv * d : NULL, hc,
                              hs + i * one)))
            fail(g, NULL, r, "initial state: %s", vla_strerror(r));
    if (!r) {
        for (int i = 1; !opts->S0 && i < runs; i++)
            memcpy(hs + i * one, hs, one);
        r = ops->put(g->dev, p->state, hs, sbytes, &g->err);
    }
    if (!r)
        r = ops->put(g->dev, consts, hc, C_NCONST * g->es, &g->err);
    if (!r)
        r = ops->put(g->dev, p->counts, hk, (size_t)runs * sizeof *hk, &g->err);
    free(hs);
    free(hc);
    free(hk);
    if (r) {
        fail(NULL, err, r, "%s", vla_error_msg(&g->err));
        vla_cuda_free(g);
        return r;
    }
    *out = g;
    return VLA_OK;
}

static int finite_n(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static void *scratch_of(vla_cuda *g, int i)
{
    if (!g->scratch[i] && g->pol->scratch(&g->cfg, &g->scratch[i]))
        g->scratch[i] = NULL;
    return g->scratch[i];
}

int vla_cuda_stage(vla_cuda *g, long steps, const vla_input *in, const unsigned char *is_read,
                   int shared)
{
    if (!g || !in || steps < 1)
        return fail(g, NULL, VLA_EINVAL, "vla_cuda_stage: no inputs");
    kparams *p = &g->p;
    size_t n = shared ? (size_t)steps : (size_t)p->runs * steps;
    for (size_t i = 0; i < n; i++) {
        int rd = is_read ? is_read[i] : VLA_CUDA_WRITE;
        long run = shared ? -1 : (long)(i / steps), t = (long)(i % steps);
        if (rd == VLA_CUDA_SKIP)
            continue;
        int e = rd ? (in[i].q ? (finite_n(in[i].q, p->d) ? 0 : VLA_ENONFINITE) : VLA_EINVAL)
                   : vla_input_check(&g->cfg, &in[i]);
        vla_error why = {e, ""};
        if (e == VLA_ENOTSUP)
            vla_form_input_check(&g->cfg, &in[i], &why);
        if (e)
            return fail(g, NULL, e, "run %ld, step %ld of the chunk: %s", run, t,
                        e == VLA_ENONFINITE ? "NaN or Inf in the input"
                        : e == VLA_ENOTSUP  ? vla_error_msg(&why)
                                            : "missing input vector");
    }
    size_t rec = (size_t)p->rec_len * g->es;
    const int direct = g->ops->host_memory; /* the records are written where the kernel reads */
    g->staged = 0;
    int r = direct ? dev_reserve(g, &g->d_in, &g->d_in_cap, n * rec, "staged inputs")
                   : host_reserve(g, &g->h_in, &g->h_in_cap, n * rec);
    if (!r)
        r = direct ? dev_reserve(g, &g->d_flags, &g->d_flags_cap, n, "step flags")
                   : host_reserve(g, (void **)&g->h_flags, &g->h_flags_cap, n);
    if (r)
        return r;
    unsigned char *hin = direct ? g->d_in : g->h_in, *flags = direct ? g->d_flags : g->h_flags;
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
    if (nt > MAX_PREP_THREADS)
        nt = MAX_PREP_THREADS;
    if ((size_t)nt > n / 64 + 1) /* a few records are not worth waking threads for */
        nt = (int)(n / 64 + 1);
#endif
    for (int i = 0; i < nt; i++)
        if (!scratch_of(g, i))
            return fail(g, NULL, VLA_ENOMEM, "out of host memory");
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (size_t i = 0; i < n; i++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        int rd = is_read ? is_read[i] : VLA_CUDA_WRITE;
        if (rd == VLA_CUDA_SKIP) {
            flags[i] = KF_SKIP;
            continue;
        }
        g->pol->prepare(g->scratch[tid], &in[i], rd, hin + i * rec);
        flags[i] = (unsigned char)((rd ? KF_READ : 0) | (!rd && in[i].g ? KF_GATE : 0));
    }
    if (!direct) {
        r = dev_reserve(g, &g->d_in, &g->d_in_cap, n * rec, "staged inputs");
        if (!r)
            r = dev_reserve(g, &g->d_flags, &g->d_flags_cap, n, "step flags");
        if (!r)
            r = g->ops->put(g->dev, g->d_in, g->h_in, n * rec, &g->err);
        if (!r)
            r = g->ops->put(g->dev, g->d_flags, g->h_flags, n, &g->err);
        if (r)
            return r;
    }
    p->inputs = g->d_in;
    p->flags = g->d_flags;
    p->steps = steps;
    p->shared_in = shared != 0;
    g->staged = 1;
    return VLA_OK;
}

/* numbers of the policy's container to binary64 (exact) */
static void to_double(const vla_cuda *g, const void *src, double *dst, size_t n)
{
    if (g->es == sizeof(double)) {
        memcpy(dst, src, n * sizeof(double));
    } else {
        const float *f = src;
        for (size_t i = 0; i < n; i++)
            dst[i] = f[i];
    }
}

int vla_cuda_launch_taps(vla_cuda *g, const vla_cuda_taps *taps)
{
    if (!g)
        return VLA_EINVAL;
    if (!g->staged)
        return fail(g, NULL, VLA_EINVAL, "vla_cuda_launch: no inputs staged");
    kparams *p = &g->p;
    const size_t rs = (size_t)p->runs * p->steps, d = p->d, dv = p->dv;
    /* o, kp, al, moved and prev_a: where each goes on the host, and its size */
    double *const host[5] = {taps ? taps->o : NULL, taps ? taps->kp : NULL,
                             taps ? taps->alpha : NULL, NULL, NULL};
    const size_t bytes[5] = {rs * dv * g->es, rs * d * g->es, rs * d * g->es, 2 * rs * sizeof(long),
                             (size_t)p->runs * d * d * g->es};
    const int on[5] = {host[0] != NULL, host[1] != NULL, host[2] != NULL,
                       taps && taps->moved, taps && taps->moved};
    void **dst[5] = {&p->out_o, &p->out_kp, &p->out_al, (void **)&p->out_moved, &p->prev_a};
    static const char *const what[5] = {"read-outs", "k'", "alpha", "moved counts", "A before"};
    for (int i = 0; i < 5; i++) {
        *dst[i] = NULL;
        int r = on[i] ? dev_reserve(g, &g->d_tap[i].p, &g->d_tap[i].cap, bytes[i], what[i]) : 0;
        if (r)
            return r;
        if (on[i])
            *dst[i] = g->d_tap[i].p;
    }
    int r = g->ops->launch(g->dev, p, &g->err);
    for (int i = 0; !r && i < 4; i++) {
        if (!on[i])
            continue;
        const void *src = g->d_tap[i].p; /* read in place from host memory, else copied back */
        if (!g->ops->host_memory &&
            ((r = host_reserve(g, &g->h_buf, &g->h_buf_cap, bytes[i])) ||
             (r = g->ops->get(g->dev, g->h_buf, src, bytes[i], &g->err))))
            break;
        src = g->ops->host_memory ? src : g->h_buf;
        if (i == 3)
            memcpy(taps->moved, src, bytes[i]);
        else
            to_double(g, src, host[i], bytes[i] / g->es);
    }
    for (int i = 0; i < 5; i++)
        *dst[i] = NULL;
    return r;
}

int vla_cuda_launch(vla_cuda *g, double *o)
{
    vla_cuda_taps taps = {o, NULL, NULL, NULL};
    return vla_cuda_launch_taps(g, &taps);
}

int vla_cuda_run(vla_cuda *g, long steps, const vla_input *in, const unsigned char *is_read,
                 double *o)
{
    int r = vla_cuda_stage(g, steps, in, is_read, 0);
    return r ? r : vla_cuda_launch(g, o);
}

int vla_cuda_get(vla_cuda *g, int run, vla_quantity q, double *dst)
{
    if (!g || !dst || run < 0 || run >= g->p.runs)
        return VLA_EINVAL;
    if ((q == VLA_Q_A || q == VLA_Q_L) && !vla_model_has_A(g->cfg.model))
        return VLA_EINVAL;
    /* the run's whole state, and lib's vstate_get on it: every quantity as the CPU gives it
     * (buffers of this call's own: runs are measured from several threads at once) */
    size_t bytes = (size_t)g->p.state_len * g->es;
    void *buf = malloc(bytes), *s = NULL;
    vla_error err = {0, ""};
    int r = buf ? 0 : VLA_ENOMEM;
    if (!r)
        r = g->ops->get(g->dev, buf, (char *)g->p.state + (size_t)run * bytes, bytes, &err);
    if (!r)
        r = g->pol->scratch(&g->cfg, &s) ? VLA_ENOMEM : g->pol->get(s, buf, q, dst);
    if (s)
        g->pol->scratch_free(s);
    free(buf);
    if (err.msg[0])
        fail(g, NULL, r, "%s", err.msg);
    return r;
}

int vla_cuda_counts(vla_cuda *g, int run, vla_counts *out)
{
    if (!g || !out || run < 0 || run >= g->p.runs)
        return VLA_EINVAL;
    kcounts k;
    vla_error err = {0, ""};
    int r = g->ops->get(g->dev, &k, g->p.counts + run, sizeof k, &err);
    if (r)
        fail(g, NULL, r, "%s", vla_error_msg(&err));
    if (!r)
        *out = k.cnt;
    return r;
}

long vla_cuda_t(vla_cuda *g, int run)
{
    if (!g || run < 0 || run >= g->p.runs)
        return -1;
    kcounts k;
    return g->ops->get(g->dev, &k, g->p.counts + run, sizeof k, &g->err) ? -1 : k.t;
}

void vla_cuda_describe(vla_cuda *g, char *buf, size_t len)
{
    if (g)
        g->ops->describe(g->dev, buf, len);
    else if (len)
        snprintf(buf, len, "none");
}

int vla_cuda_resident_runs(vla_cuda *g) { return g ? g->ops->resident(g->dev, &g->p) : 0; }

int vla_cuda_fma_peak(vla_cuda *g, double *flops)
{
    return g && flops ? g->ops->fma_peak(g->dev, flops, &g->err) : VLA_EINVAL;
}

int vla_cuda_state(vla_cuda *g, int run, long *t, vla_counts *cnt, void *state, size_t *bytes)
{
    if (!g || run < 0 || run >= g->p.runs)
        return VLA_EINVAL;
    size_t sb = (size_t)g->p.state_len * g->es;
    if (bytes) {
        size_t cap = *bytes;
        *bytes = sb;
        if (!state)
            return VLA_OK;
        if (cap < sb)
            return fail(g, NULL, VLA_EINVAL, "vla_cuda_state: %zu bytes given, %zu needed", cap, sb);
    }
    kcounts k;
    int r = g->ops->get(g->dev, &k, g->p.counts + run, sizeof k, &g->err);
    if (!r && state)
        r = g->ops->get(g->dev, state, (char *)g->p.state + (size_t)run * sb, sb, &g->err);
    if (!r && t)
        *t = k.t;
    if (!r && cnt)
        *cnt = k.cnt;
    return r;
}

int vla_cuda_set_state(vla_cuda *g, int run, long t, const vla_counts *cnt, const void *state,
                       size_t bytes)
{
    if (!g || !cnt || !state || run < 0 || run >= g->p.runs)
        return VLA_EINVAL;
    size_t sb = (size_t)g->p.state_len * g->es;
    if (bytes != sb)
        return fail(g, NULL, VLA_EINVAL, "vla_cuda_set_state: %zu bytes given, %zu needed",
                    bytes, sb);
    kcounts k = {t, *cnt};
    int r = g->ops->put(g->dev, (char *)g->p.state + (size_t)run * sb, state, sb, &g->err);
    return r ? r : g->ops->put(g->dev, g->p.counts + run, &k, sizeof k, &g->err);
}
