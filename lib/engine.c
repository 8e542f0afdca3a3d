/* engine.c: the engine (vlastab.h, "engines"): a batch of runs of one configuration advanced
 * together on a backend, the one place where runs advance. This file holds what every backend
 * shares (checks, the inputs of a step, errors) and the backend of one vla_model per run on the
 * CPU's threads, which the cpu backend (lib's models) and the exact one (reference/: MPFR) use. */
#include "engine_impl.h"
#include "model_impl.h"
#include "tables.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int vla_engine_fail(vla_engine *e, int run, int code, const char *fmt, ...)
{
    char buf[sizeof e->err.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
#ifdef _OPENMP
#pragma omp critical(vla_engine_fail)
#endif
    if (!e->err.code || run < e->fail_run) {
        e->fail_run = run;
        vla_fail(&e->err, code, "%s", buf);
    }
    return code;
}

int vla_engine_stopped(const vla_engine *e) { return e->spec.stop && *e->spec.stop; }

int vla_engine_read_inside(vla_engine *e, int run, long t, long writes)
{
    long p = vla_form_pending(&e->spec.cfg, writes);
    vla_error why;
    if (vla_form_read_check(&e->spec.cfg, &why))
        return vla_engine_fail(e, run, VLA_ENOTSUP, "head %d, step %ld: a read: %s",
                               e->spec.first_head + run, t, vla_error_msg(&why));
    return p ? vla_engine_fail(e, run, VLA_ENOTSUP,
                               "head %d, step %ld: a read inside a chunk (%ld of its %d writes "
                               "made): the chunk form has a state only at chunk ends "
                               "(docs/forms.md)",
                               e->spec.first_head + run, t, p, e->spec.cfg.chunk)
             : VLA_OK;
}

int vla_engine_input(vla_engine *e, int run, long t, vla_stream **stream, vla_step_buf *raw,
                     vla_step_buf *rnd, vla_input *in)
{
    const vla_engine_spec *sp = &e->spec;
    const int d = sp->cfg.d, dv = sp->cfg.dv, head = sp->first_head + run;
    const vla_fmt f = sp->round_inputs;
    if (sp->stream) {
        int r = 0;
        vla_error why;
        /* a run reads its head, and no further than its steps */
        if (!*stream && (r = vla_stream_open_part(stream, sp->stream, d, dv, sp->seed, head, 1,
                                                  sp->stream_steps > 0 ? sp->stream_steps : -1,
                                                  &why)))
            return vla_engine_fail(e, run, r, "--stream: %s", vla_error_msg(&why));
        vla_stream_want(*stream, vla_model_reads(&sp->cfg));
        if ((r = vla_stream_get(*stream, (uint32_t)head, t, raw)))
            return vla_engine_fail(e, run, r, "head %d, step %ld: %s", head, t, vla_strerror(r));
    } else {
        if (!sp->cycle && t > sp->T)
            return vla_engine_fail(e, run, VLA_ERANGE, "head %d, step %ld: the inputs end at step %ld",
                                   head, t, sp->T);
        size_t i = (size_t)((t - 1) % sp->T) + (sp->shared ? 0 : (size_t)run * sp->T);
        const vla_input *x = &sp->in[i];
        raw->is_read = sp->is_read && sp->is_read[i];
        raw->pair = -1;
        if (!sp->on_step && f == VLA_FMT_F64) { /* nobody looks at them: take them as they are */
            *in = *x;
            return VLA_OK;
        }
        if (!x->q || !x->k || !x->v)
            return vla_engine_fail(e, run, VLA_EINVAL, "head %d, step %ld: missing input vector",
                                   head, t);
        memcpy(raw->q, x->q, d * sizeof(double));
        memcpy(raw->k, x->k, d * sizeof(double));
        memcpy(raw->u, x->u ? x->u : x->k, d * sizeof(double));
        memcpy(raw->v, x->v, dv * sizeof(double));
        if ((raw->has_g = x->g != NULL))
            memcpy(raw->g, x->g, dv * sizeof(double));
        raw->beta = x->beta;
        raw->decay = x->decay;
        /* the gates the model reads (another model's step buffers have no room for them) */
        const unsigned reads = vla_model_reads(&sp->cfg);
        raw->lgs = x->lgs;
        raw->has_gates = (x->lg && (reads & VLA_IN_LOGDECAY_D) ? VLA_IN_LOGDECAY_D : 0) |
                         (x->a && (reads & VLA_IN_A) ? VLA_IN_A : 0) |
                         (x->b && (reads & VLA_IN_B) ? VLA_IN_B : 0);
        if (raw->has_gates & VLA_IN_LOGDECAY_D)
            memcpy(raw->lg, x->lg, d * sizeof(double));
        if (raw->has_gates & VLA_IN_A)
            memcpy(raw->a, x->a, d * sizeof(double));
        if (raw->has_gates & VLA_IN_B)
            memcpy(raw->b, x->b, d * sizeof(double));
    }
    const vla_step_buf *b = raw;
    if (f != VLA_FMT_F64) { /* exactly what the narrower run does first; phi is taken later */
        vla_load_round_d(f, rnd->q, raw->q, d);
        vla_load_round_d(f, rnd->k, raw->k, d);
        vla_load_round_d(f, rnd->u, raw->u, d);
        vla_load_round_d(f, rnd->v, raw->v, dv);
        if (raw->has_g)
            vla_load_round_d(f, rnd->g, raw->g, dv);
        rnd->has_g = raw->has_g;
        rnd->is_read = raw->is_read;
        rnd->pair = raw->pair;
        rnd->beta = isnan(raw->beta) ? raw->beta : vla_round_fmt(f, raw->beta);
        rnd->decay = isnan(raw->decay) ? raw->decay : vla_round_fmt(f, raw->decay);
        rnd->lgs = vla_round_fmt(f, raw->lgs);
        rnd->has_gates = raw->has_gates;
        if (raw->has_gates & VLA_IN_LOGDECAY_D)
            vla_load_round_d(f, rnd->lg, raw->lg, d);
        if (raw->has_gates & VLA_IN_A)
            vla_load_round_d(f, rnd->a, raw->a, d);
        if (raw->has_gates & VLA_IN_B)
            vla_load_round_d(f, rnd->b, raw->b, d);
        b = rnd;
    }
    *in = vla_input_of(b);
    return VLA_OK;
}

/* ---- the engine ---- */

const vla_backend *vla_backend_cpu(void);

const char *vla_backend_name(const vla_backend *b) { return b ? b->name : "none"; }

/* ---- sizes: what a run takes in memory and in a saved state ---- */

long vla_state_numbers(const vla_config *cfg, int saved_only)
{
    VLA_DIMS_LOCALS(vla_dims_of(cfg));
    long n = 0;
#define VLA_X_(name, len) n += (long)(len) > 0 ? (long)(len) : 1; /* (recur.h's alloc_len) */
    if (saved_only) {
        VLA_STATE_SAVED(VLA_X_)
    } else {
        VLA_STATE_ARRAYS(VLA_X_)
    }
#undef VLA_X_
    return n;
}

long vla_engine_number_bytes(const vla_backend *b, const vla_engine_spec *spec)
{
    if (b && b->number_bytes)
        return b->number_bytes(spec);
    return (long)vla_prec_num_size(spec->cfg.prec) * (spec->cfg.track == VLA_TRACK_COMP ? 2 : 1);
}

long vla_engine_save_max(const vla_engine *e)
{
    /* vla_model_save: magic, the description's length and text (< 1024), t, the counters, then
     * the saved arrays */
    return 8 + 4 + 1024 + 8 + (long)sizeof(vla_counts) +
           vla_state_numbers(&e->spec.cfg, 1) * vla_engine_number_bytes(e->b, &e->spec);
}

/* The memory runs may take: the machine's, or less under a limit (ulimit -v, ulimit -d) */
static double memory_here(const char **what)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    double m = pages > 0 && size > 0 ? (double)pages * size : INFINITY;
    *what = "memory here";
    const int lims[2] = {RLIMIT_AS, RLIMIT_DATA};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(lims[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < m) {
            m = (double)rl.rlim_cur;
            *what = i ? "data segment's limit (ulimit -d)" : "address space's limit (ulimit -v)";
        }
    }
    return m;
}

/* e->nseq and e->cu: the spec's packed sequences, else those of the trace s (NULL: none) */
static int engine_seqs(vla_engine *e, const vla_stream *s, vla_error *err)
{
    const vla_engine_spec *sp = &e->spec;
    const long *cu = sp->cu;
    vla_error why;
    e->nseq = cu ? sp->nseq : s ? vla_stream_seqs(s, &cu) : 0;
    if (e->nseq && !(e->cu = malloc((e->nseq + 1) * sizeof *e->cu)))
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    if (e->nseq)
        memcpy(e->cu, cu, (e->nseq + 1) * sizeof *e->cu);
    if (s && sp->S0 && e->nseq > 1)
        return vla_fail(err, VLA_EINVAL, "the spec's S0 beside the packed sequences of %s: give "
                        "their cu too (vla_engine_spec.cu)", sp->stream);
    const int r = vla_seqs_check(&sp->cfg, e->cu, e->nseq, &why);
    return r ? vla_fail(err, r, "%s", why.msg) : VLA_OK;
}

/* e->S0: the spec's initial states, else the trace s's S0.npy of the runs' heads (a row per
 * sequence); NULL where neither gives one */
static int engine_S0_read(vla_engine *e, vla_stream *s, vla_error *err)
{
    const vla_engine_spec *sp = &e->spec;
    const size_t n = (size_t)sp->cfg.dv * sp->cfg.d;
    const long rows = e->nseq > 1 ? e->nseq : 1;
    if (!sp->S0 && !(s && (vla_stream_optional(s) & VLA_IN_S0)))
        return VLA_OK;
    if (!(e->S0 = malloc(rows * sp->runs * n * sizeof *e->S0)))
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    if (sp->S0) {
        memcpy(e->S0, sp->S0, rows * sp->runs * n * sizeof *e->S0);
        return VLA_OK;
    }
    for (long i = 0; i < rows * sp->runs; i++) { /* run i / rows, sequence i % rows */
        const long h = sp->first_head + i / rows;
        const int r = vla_stream_S0_of(s, i % rows, h, e->S0 + i * n);
        if (r < 0)
            return vla_fail(err, r, "--stream: %s: head %ld: %s", sp->stream, h, vla_strerror(r));
    }
    return VLA_OK;
}

/* e->cu: the spec's packed sequences, or a trace stream's cu_seqlens.npy when the spec gives
 * none; e->S0: the spec's initial states, or the trace's S0.npy of the runs' heads (a row per
 * sequence), rounded to round_S0. A configuration that takes no S_0, or cannot restart at the
 * sequences' starts, is refused here, for every backend. */
static int engine_S0(vla_engine *e, vla_error *err)
{
    const vla_engine_spec *sp = &e->spec;
    const size_t n = (size_t)sp->cfg.dv * sp->cfg.d;
    const char *from = sp->S0 ? "the spec's S0" : "the trace's S0.npy";
    vla_stream *s = NULL; /* a trace read for what the spec does not give: its sequences, S0 */
    vla_error why;
    int r = 0;
    if (!sp->cu && sp->stream && !strncmp(sp->stream, "trace:", 6) &&
        (r = vla_stream_open_part(&s, sp->stream, sp->cfg.d, sp->cfg.dv, sp->seed,
                                  sp->first_head, sp->runs, 0, &why)))
        return vla_fail(err, r, "--stream: %s", why.msg);
    if (!(r = engine_seqs(e, s, err)))
        r = engine_S0_read(e, s, err);
    vla_stream_close(s);
    if (r || !e->S0)
        return r;
    if ((r = vla_config_h0(&sp->cfg, &why)))
        return vla_fail(err, r, "%s: %s", from, why.msg);
    const long rows = e->nseq > 1 ? e->nseq : 1;
    for (size_t i = 0; i < rows * sp->runs * n; i++) {
        if (!isfinite(e->S0[i]))
            return vla_fail(err, VLA_ENONFINITE, "%s: %s at run %zu, entry %zu", from,
                            isnan(e->S0[i]) ? "NaN" : "Inf", i / n / rows, i % n);
        e->S0[i] = vla_round_fmt(sp->round_S0, e->S0[i]);
    }
    return VLA_OK;
}

int vla_engine_new(vla_engine **out, const vla_engine_spec *spec, vla_error *err)
{
    const char *why = NULL;
    vla_error ve;
    int r = VLA_EINVAL;
    if (out)
        *out = NULL;
    if (!out || !spec)
        return vla_fail(err, VLA_EINVAL, "vla_engine_new: NULL argument");
    const vla_backend *b = spec->backend ? spec->backend : vla_backend_cpu();
    if (spec->runs < 1)
        why = "at least one run";
    else if (!spec->stream && (!spec->in || spec->T < 1))
        why = "no inputs: a stream or prepared inputs";
    else if (spec->round_inputs < 0 || spec->round_inputs >= VLA_NFMT)
        why = "round_inputs is not a format";
    else if (spec->round_S0 < 0 || spec->round_S0 >= VLA_NFMT)
        why = "round_S0 is not a format";
    else if ((r = vla_config_check(&spec->cfg)))
        why = vla_strerror(r);
    else if ((r = vla_track_check(&spec->cfg, &ve)) || (r = vla_form_check(&spec->cfg, &ve)))
        why = ve.msg;
    else if (spec->on_step && (spec->taps & (VLA_TAP_KP | VLA_TAP_ALPHA)) &&
             vla_form_pending(&spec->cfg, 1)) {
        why = "a chunk's k' and alpha exist at its end only (docs/forms.md): no per-step k' and "
              "alpha taps in the chunk form (--form seq or scan)";
        r = VLA_ENOTSUP;
    }
    if (why || r)
        return vla_fail(err, r ? r : VLA_EINVAL, "%s", why ? why : vla_strerror(r));
    vla_engine *e = calloc(1, sizeof *e);
    if (!e)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    e->spec = *spec;
    e->spec.backend = e->b = b;
    e->fail_run = -1;
    if ((r = engine_S0(e, err)) ||
        (e->nseq > 1 && b->ops != &vla_engine_models_ops &&
         (r = vla_fail(err, VLA_ENOTSUP, "packed sequences (cu_seqlens.npy): the --backend %s "
                       "restarts no state inside a run: --backend cpu", b->name))) ||
        (r = b->ops->open(e, &e->self, err))) {
        free(e->S0);
        free(e->cu);
        free(e);
        return r;
    }
    *out = e;
    return VLA_OK;
}

void vla_engine_free(vla_engine *e)
{
    if (e) {
        e->b->ops->close(e->self);
        free(e->S0);
        free(e->cu);
        free(e);
    }
}

int vla_engine_advance(vla_engine *e, long t)
{
    if (!e)
        return VLA_EINVAL;
    if (e->err.code) /* a failed engine stays failed */
        return e->err.code;
    int r = e->b->ops->advance(e, e->self, t);
    if (r && r != VLA_EINTR && !e->err.code)
        vla_engine_fail(e, -1, r, "%s", vla_strerror(r));
    return e->err.code ? e->err.code : r;
}

int vla_engine_finish(vla_engine *e)
{
    if (!e)
        return VLA_EINVAL;
    if (e->err.code)
        return e->err.code;
    for (int run = 0; !e->b->ops->finish && run < e->spec.runs; run++) {
        vla_counts c;
        if (vla_engine_counts(e, run, &c) == 0 && vla_form_pending(&e->spec.cfg, c.steps))
            return vla_engine_fail(e, run, VLA_ENOTSUP, "head %d: the --backend %s computes no "
                                   "last, partial chunk (T mod C tokens): --backend cpu",
                                   e->spec.first_head + run, e->b->name);
    }
    int r = e->b->ops->finish ? e->b->ops->finish(e, e->self) : VLA_OK;
    return e->err.code ? e->err.code : r;
}

long vla_engine_t(const vla_engine *e, int run)
{
    return e && run >= 0 && run < e->spec.runs ? e->b->ops->t(e->self, run) : -1;
}
int vla_engine_runs(const vla_engine *e) { return e->spec.runs; }
const vla_config *vla_engine_config(const vla_engine *e) { return &e->spec.cfg; }
const vla_engine_spec *vla_engine_spec_of(const vla_engine *e) { return &e->spec; }
const vla_error *vla_engine_error(const vla_engine *e)
{
    static const vla_error none = {VLA_EINVAL, "no engine"};
    return e ? &e->err : &none;
}

int vla_engine_get(vla_engine *e, int run, vla_quantity q, double *dst)
{
    if (!e || !dst || run < 0 || run >= e->spec.runs)
        return VLA_EINVAL;
    if ((q == VLA_Q_A || q == VLA_Q_L) && !vla_model_has_A(e->spec.cfg.model))
        return VLA_EINVAL;
    return e->b->ops->get(e->self, run, q, dst);
}

int vla_engine_counts(vla_engine *e, int run, vla_counts *out)
{
    if (!e || !out || run < 0 || run >= e->spec.runs)
        return VLA_EINVAL;
    return e->b->ops->counts(e->self, run, out);
}

int vla_engine_save(vla_engine *e, int run, FILE *f)
{
    if (!e || !f || run < 0 || run >= e->spec.runs)
        return VLA_EINVAL;
    return e->b->ops->save(e->self, run, f);
}

int vla_engine_load(vla_engine *e, int run, FILE *f)
{
    if (!e || !f || run < 0 || run >= e->spec.runs)
        return VLA_EINVAL;
    return e->b->ops->load(e->self, run, f);
}

void vla_engine_describe(vla_engine *e, char *buf, size_t len)
{
    if (e)
        e->b->ops->describe(e->self, buf, len);
    else if (len)
        snprintf(buf, len, "none");
}

/* ---- one vla_model per run ---- */

typedef struct {
    vla_model *m;
    vla_stream *s;
    vla_step_buf raw, rnd;
    long t;
    double *tap;   /* o (dv), kp (d), alpha (d), then A now (d x d) and A before (d x d) */
    double *co;    /* the chunk form's read-outs of a chunk (C x dv) */
    int track_moved;
} mrun;

typedef struct {
    vla_engine *e;
    mrun *r;
    int threads;
    double *zero; /* a state of zeros, for a packed sequence without an S0 to restart from */
} mself;

vla_model *vla_engine_run_model(vla_engine *e, int run)
{
    if (!e || e->b->ops != &vla_engine_models_ops || run < 0 || run >= e->spec.runs)
        return NULL;
    return ((mself *)e->self)->r[run].m;
}

static void models_close(void *p)
{
    mself *s = p;
    if (!s)
        return;
    for (int i = 0; s->r && i < s->e->spec.runs; i++) {
        vla_model_free(s->r[i].m);
        vla_stream_close(s->r[i].s);
        vla_step_buf_free(&s->r[i].raw);
        vla_step_buf_free(&s->r[i].rnd);
        free(s->r[i].tap);
        free(s->r[i].co);
    }
    free(s->r);
    free(s->zero);
    free(s);
}

/* the first A of the moved count: A as it is now */
static void moved_reset(mself *s, mrun *r)
{
    const int d = s->e->spec.cfg.d, dv = s->e->spec.cfg.dv;
    if (r->track_moved)
        vla_model_get(r->m, VLA_Q_A, r->tap + dv + 2 * d + (size_t)d * d);
}

static int models_open(vla_engine *e, void **self, vla_error *err)
{
    const vla_engine_spec *sp = &e->spec;
    const vla_config *cfg = &sp->cfg;
    const int d = cfg->d, dv = cfg->dv, nr = sp->runs;
    /* Runs that cannot fit are said before the first is made: made one by one, 100000 runs at
     * d = 256 took 40 s to fail (or drew the OOM killer), where the lanes, which take their
     * states in one allocation, say it at once. The estimate: the state's arrays, a step's two
     * buffers and the taps' (below). */
    const double per = (double)vla_state_numbers(cfg, 0) * vla_engine_number_bytes(e->b, sp) +
                       (2 * (3.0 * d + 2 * dv) + dv + 2.0 * d + 2.0 * d * d) * sizeof(double) +
                       4096, /* the structures around them */
                 total = per * nr;
    const char *where;
    const double have = memory_here(&where);
    if (total > have)
        return vla_fail(err, VLA_ENOMEM, "out of memory: %d runs of %s in %s at d = %d take about "
                        "%.4g MB (%.3g MB each), more than the %.4g MB of the %s (fewer runs, or a "
                        "smaller d)", nr, vla_model_name(cfg->model), vla_prec_name(cfg->prec), d,
                        total / 1e6, per / 1e6, have / 1e6, where);
    mself *s = calloc(1, sizeof *s);
    int r = s && (s->r = calloc(nr, sizeof *s->r)) &&
                    (s->zero = calloc((size_t)dv * d, sizeof *s->zero)) ? 0 : VLA_ENOMEM;
    if (s)
        s->e = e;
    const int moved = (sp->taps & VLA_TAP_MOVED) && vla_model_has_A(cfg->model) &&
                      vla_track_holds(cfg->track) == VLA_HOLDS_A &&
                      !vla_form_pending(cfg, 1);
    for (int i = 0; !r && i < nr; i++) {
        mrun *x = &s->r[i];
        x->track_moved = moved;
        if ((r = e->b->make_model(&x->m, cfg, sp)) ||
            (e->S0 && (r = vla_model_start(x->m, e->S0 + (size_t)i * (e->nseq > 1 ? e->nseq : 1) *
                                                          cfg->dv * cfg->d)))) {
            vla_fail(err, r, "model %s in %s: %s", vla_model_name(cfg->model),
                     vla_prec_name(cfg->prec), vla_strerror(r));
            break;
        }
        if ((r = vla_step_buf_alloc(&x->raw, d, dv)) || (r = vla_step_buf_alloc(&x->rnd, d, dv)) ||
            !(x->tap = malloc((dv + 2 * (size_t)d + 2 * (size_t)d * d) * sizeof(double))) ||
            !(x->co = malloc(((size_t)cfg->chunk + 1) * dv * sizeof(double)))) {
            r = vla_fail(err, VLA_ENOMEM, "out of memory");
            break;
        }
        moved_reset(s, x);
    }
    if (r && !(s && s->r))
        vla_fail(err, r, "out of memory");
    if (r) {
        models_close(s);
        return r;
    }
#ifdef _OPENMP
    s->threads = sp->threads > 0 ? sp->threads : omp_get_max_threads();
#else
    s->threads = 1;
#endif
    if (s->threads > nr)
        s->threads = nr;
    *self = s;
    return VLA_OK;
}

/* run's inputs of step `step` into *in, checked as a step needs them; 0, or an error recorded */
static int models_input(mself *s, int run, long step, vla_input *in)
{
    vla_engine *e = s->e;
    mrun *x = &s->r[run];
    int r = vla_engine_input(e, run, step, &x->s, &x->raw, &x->rnd, in);
    const long writes = vla_model_counts(x->m)->steps;
    if (!r && x->raw.is_read)
        r = vla_engine_read_inside(e, run, step, writes);
    return r;
}

/* run's step `step` taken (its model holds the state after it): the step's view to on_step */
static int models_view(mself *s, int run, long step)
{
    vla_engine *e = s->e;
    const vla_engine_spec *sp = &e->spec;
    const int d = sp->cfg.d, dv = sp->cfg.dv, head = sp->first_head + run;
    mrun *x = &s->r[run];
    x->t = step;
    if (!sp->on_step)
        return VLA_OK;
    vla_step_view v = {.run = run, .t = step, .in = &x->raw, .a_moved = -1, .a_moved_diag = -1};
    double *o = x->tap, *kp = o + dv, *al = kp + d;
    if ((sp->taps & VLA_TAP_O) && !vla_form_pending(&sp->cfg, vla_model_counts(x->m)->steps))
        vla_model_get(x->m, VLA_Q_O, o), v.o = o; /* (a chunk's read-outs: at its end) */
    if (v.o && !x->raw.is_read && vla_model_get(x->m, VLA_Q_CO, x->co) == 0)
        v.co = x->co, v.nco = sp->cfg.chunk; /* ... all of them: every token's */
    if (sp->taps & VLA_TAP_KP)
        vla_model_get(x->m, VLA_Q_KP, kp), v.kp = kp;
    if (sp->taps & VLA_TAP_ALPHA)
        vla_model_get(x->m, VLA_Q_ALPHA, al), v.alpha = al;
    if (x->track_moved) { /* bit patterns: +0 and -0 differ, as the stored numbers do */
        double *A = al + d, *prev = A + (size_t)d * d;
        v.a_moved = v.a_moved_diag = 0;
        if (!x->raw.is_read) {
            vla_model_get(x->m, VLA_Q_A, A);
            for (size_t i = 0; i < (size_t)d * d; i++) {
                int moved = memcmp(&A[i], &prev[i], sizeof *A) != 0;
                v.a_moved += moved;
                v.a_moved_diag += moved && i % (size_t)(d + 1) == 0;
            }
            memcpy(prev, A, (size_t)d * d * sizeof *A);
        }
    }
    int r = sp->on_step(sp->ctx, &v);
    return r ? vla_engine_fail(e, run, r, "head %d, step %ld: %s", head, step, vla_strerror(r))
             : VLA_OK;
}

/* Before run's step `step`: where a packed sequence starts there (after cu[i], i >= 1), its state
 * restarts from the sequence's S_0 or 0, as a run of that sequence alone starts (vla_model_start's
 * rounding; a chunk form's chunk has ended there, vla_seqs_check) */
static int seq_restart(mself *s, int run, long step)
{
    const vla_engine *e = s->e;
    long lo = 1, hi = e->nseq - 1; /* the starts cu[1] .. cu[nseq - 1] */
    while (lo <= hi) {
        const long mid = (lo + hi) / 2;
        if (e->cu[mid] == step - 1) {
            const size_t n = (size_t)e->spec.cfg.dv * e->spec.cfg.d;
            vla_model *m = s->r[run].m;
            int r = !m->ops->start ? VLA_ENOTSUP
                    : m->ops->start(m->self, e->S0 ? e->S0 + ((size_t)run * e->nseq + mid) * n
                                                   : s->zero);
            return r ? vla_engine_fail(s->e, run, r, "head %d, step %ld: the restart of packed "
                                       "sequence %ld: %s", e->spec.first_head + run, step, mid,
                                       vla_strerror(r))
                     : VLA_OK;
        }
        if (e->cu[mid] < step - 1)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return VLA_OK;
}

/* run r's steps up to t; 0, VLA_EINTR, or an error recorded in the engine */
static int models_run_to(mself *s, int run, long t)
{
    vla_engine *e = s->e;
    const vla_engine_spec *sp = &e->spec;
    mrun *x = &s->r[run];
    while (x->t < t) {
        if (vla_engine_stopped(e))
            return VLA_EINTR;
        vla_input in;
        const long step = x->t + 1;
        int r = e->nseq > 1 ? seq_restart(s, run, step) : VLA_OK;
        if (r || (r = models_input(s, run, step, &in)))
            return r;
        r = x->raw.is_read ? vla_model_read(x->m, in.q) : vla_model_step(x->m, &in);
        if (r == VLA_EINTR) /* a step given up (the exact backend): no failure, a stop */
            return r;
        if (r) {
            vla_error why = {r, ""}; /* (no reason written: vla_strerror(r)) */
            if (r == VLA_ENOTSUP)
                vla_form_input_check(&sp->cfg, &in, &why);
            return vla_engine_fail(e, run, r, "head %d, step %ld: %s", sp->first_head + run, step,
                                   vla_error_msg(&why));
        }
        if ((r = models_view(s, run, step)))
            return r;
    }
    return VLA_OK;
}

/* Runs first .. first + n - 1 to t together, as one group of the backend's (vla_group_ops):
 * each step's inputs drawn run by run, the step taken by the group, the views read from the
 * runs' models. Where the runs part ways (a read in one and a write in another, an input that a
 * step refuses or that cannot be drawn), the group gives the state back and each run goes on
 * alone from the step it stands at, drawing its inputs again (a stream and prepared inputs give
 * any step's): every failure is then the one, in the words, that the run alone meets. A run whose
 * view failed stops there, as alone. */
static int models_group_to(mself *s, int first, int n, long t)
{
    vla_engine *e = s->e;
    const vla_config *cfg = &e->spec.cfg;
    const vla_group_ops *g = e->b->group;
    vla_model *m[VLA_GROUP_MAX];
    vla_input in[VLA_GROUP_MAX];
    for (int i = 0; i < n; i++)
        m[i] = s->r[first + i].m;
    void *grp = NULL;
    int apart = g->begin(&grp, m, n) != VLA_OK, failed = 0;
    for (long step = s->r[first].t + 1; !apart && step <= t; step++) {
        if (vla_engine_stopped(e))
            break; /* (each run, alone below, says the stop) */
        for (int i = 0; i < n && !apart; i++)
            apart = models_input(s, first + i, step, &in[i]) != VLA_OK;
        const int rd = s->r[first].raw.is_read;
        for (int i = 0; i < n && !apart; i++)
            apart = s->r[first + i].raw.is_read != rd || (in[i].g != NULL) != (in[0].g != NULL) ||
                    (rd ? !vla_finite_all(in[i].q, cfg->d) : vla_input_check(cfg, &in[i]) != 0);
        if (apart || (apart = g->step(grp, in, rd) != VLA_OK))
            break;
        for (int i = 0; i < n; i++)
            if (models_view(s, first + i, step))
                failed |= 1 << i, apart = 1;
    }
    g->end(grp);
    int r = failed ? e->err.code : VLA_OK;
    for (int i = 0; i < n; i++) {
        const int ri = failed >> i & 1 ? VLA_OK : models_run_to(s, first + i, t);
        r = r == VLA_EINTR || !ri ? r : ri;
    }
    return r;
}

static int models_advance(vla_engine *e, void *self, long t)
{
    mself *s = self;
    const int nr = e->spec.runs;
    /* the backend's groups (vla_group_ops): consecutive runs at the same t, at most w of them;
     * without groups (or memory for their list) every run is its own */
    const int w = e->b->group && !s->r[0].track_moved && e->nseq <= 1
                      ? e->b->group->width(&e->spec.cfg) : 1; /* (packed: each run restarts) */
    int ng = 0, *start = w > 1 ? malloc(sizeof(int) * (nr + 1)) : NULL;
    for (int i = 0; start && i < nr; i++)
        if (i == 0 || i - start[ng - 1] == w || s->r[i].t != s->r[start[ng - 1]].t)
            start[ng++] = i;
    if (start)
        start[ng] = nr;
    else
        ng = nr;
    int stopped = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(s->threads) reduction(+ : stopped)
#endif
    for (int k = 0; k < ng; k++) {
        const int first = start ? start[k] : k, n = start ? start[k + 1] - first : 1;
        stopped += (n > 1 ? models_group_to(s, first, n, t) : models_run_to(s, first, t)) ==
                   VLA_EINTR;
        for (int i = first; i < first + n; i++)
            vla_model_rest(s->r[i].m); /* before the thread returns to OpenMP's pool */
    }
    free(start);
    return e->err.code ? e->err.code : stopped ? VLA_EINTR : VLA_OK;
}

static long models_t(void *self, int run) { return ((mself *)self)->r[run].t; }

static int models_get(void *self, int run, vla_quantity q, double *dst)
{
    return vla_model_get(((mself *)self)->r[run].m, q, dst);
}

static int models_counts(void *self, int run, vla_counts *out)
{
    *out = *vla_model_counts(((mself *)self)->r[run].m);
    return VLA_OK;
}

static int models_save(void *self, int run, FILE *f)
{
    return vla_model_save(((mself *)self)->r[run].m, f);
}

static int models_load(void *self, int run, FILE *f)
{
    mself *s = self;
    mrun *x = &s->r[run];
    int r = vla_model_load(x->m, f);
    if (!r) { /* the stream position: every step is a write or a read */
        const vla_counts *c = vla_model_counts(x->m);
        x->t = c->steps + c->reads;
        moved_reset(s, x);
    }
    return r;
}

/* every run's last, partial chunk (vla_model_finish), its read-outs through on_step */
static int models_finish(vla_engine *e, void *self)
{
    mself *s = self;
    const vla_engine_spec *sp = &e->spec;
    for (int run = 0; run < sp->runs; run++) {
        mrun *x = &s->r[run];
        const long c = vla_form_pending(&sp->cfg, vla_model_counts(x->m)->steps);
        int r;
        if (!c)
            continue;
        if ((r = vla_model_finish(x->m)))
            return vla_engine_fail(e, run, r, "head %d, step %ld: the last chunk: %s",
                                   sp->first_head + run, x->t, vla_strerror(r));
        if (!sp->on_step || !(sp->taps & VLA_TAP_O))
            continue;
        vla_step_view v = {.run = run, .t = x->t, .in = &x->raw, .o = x->tap, .co = x->co,
                           .nco = (int)c, .a_moved = -1, .a_moved_diag = -1};
        vla_model_get(x->m, VLA_Q_O, x->tap);
        vla_model_get(x->m, VLA_Q_CO, x->co);
        if ((r = sp->on_step(sp->ctx, &v)))
            return vla_engine_fail(e, run, r, "head %d, step %ld: %s", sp->first_head + run, x->t,
                                   vla_strerror(r));
    }
    return VLA_OK;
}

static void models_describe(void *self, char *buf, size_t len)
{
    mself *s = self;
    snprintf(buf, len, "%s, %d thread%s", s->e->b->name, s->threads, s->threads == 1 ? "" : "s");
}

const vla_backend_ops vla_engine_models_ops = {models_open, models_close, models_advance,
                                                models_t,    models_get,   models_counts,
                                                models_save, models_load,  models_describe,
                                                models_finish};

static int make_cpu_model(vla_model **out, const vla_config *cfg, const vla_engine_spec *spec)
{
    (void)spec;
    return vla_model_new(out, cfg);
}

const vla_backend *vla_backend_cpu(void)
{
    static const vla_backend b = {.name = "cpu", .ops = &vla_engine_models_ops,
                                  .make_model = make_cpu_model};
    return &b;
}

int vla_backend_supports(const vla_backend *b, const vla_config *cfg, vla_error *why)
{
    vla_fail(why, VLA_OK, NULL);
    return !b->supports || b->supports(b, cfg, why) == VLA_OK;
}

int vla_backend_available(const vla_backend *b, vla_error *why)
{
    vla_fail(why, VLA_OK, NULL);
    return !b->available || b->available(b, why) == VLA_OK;
}
