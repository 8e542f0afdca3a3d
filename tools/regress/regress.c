/* regress.c: vla-regress's suite, its runs, the baseline and the verdicts (regress.h); main and
 * the help are vla-regress.c's. tests/test_regress.c links this file, and the builds with planted
 * faults link it with a planted model.o. */
#include "regress.h"
#include "vlaref.h"
#include "file.h"
#include <errno.h>
#include <float.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "vlacuda.h"

/* a loop over the local rg_nt jobs in parallel, on no more threads than jobs (libgomp crashes
 * when OMP_NUM_THREADS asks for 100000) */
#ifdef _OPENMP
#include <omp.h>
#define RG_PARALLEL_FOR _Pragma("omp parallel for schedule(dynamic, 1) num_threads(rg_nt < omp_get_max_threads() ? rg_nt : omp_get_max_threads())")
#else
#define RG_PARALLEL_FOR (void)rg_nt;
#endif

typedef struct {
    const char *name; /* in the case name */
    const char *spec; /* vla_stream_open's spec; NULL: the located trace */
    int d;
} rg_stream_def;

static const rg_stream_def rg_streams[] = {
    {"gauss", "gauss", RG_D},
    {"lmlike", "lmlike", RG_D},
    {"subspace:4,0.001", "subspace:4,0.001", RG_D}, /* cond(M_t) grows like t / noise^2 */
    {"trace", NULL, RG_D_TRACE},                    /* the real model's inputs (lmtrace-seed7) */
};
#define RG_NSTREAM ((int)(sizeof rg_streams / sizeof rg_streams[0]))



/* A reference: the exact recurrence of one model configuration on one stream, with the inputs
 * rounded to one storage format. Every case whose numbers it stands for shares it. */
typedef struct {
    int stream;
    vla_config cfg;
    long nck;
    double *ref; /* [head][checkpoint]: A (d x d; models with A), S (dv x d), o (dv) */
    char err[200];
} rg_group;


/* the configuration of a case in form (its form and chunk; NULL: seq): chol, solve, cg and cheb
 * never form A, so the changes of A that are no rank-one change of M (the nudge, vla1's clamp)
 * are off, in it and in its reference; cg and cheb run their default iterations (cg:8, cheb:8);
 * a chunk of C > 1 keeps the devices that fit it (docs/forms.md): a nudge every max(C, 64)
 * steps, no clamp, vla3's floor as the only guard */
void rg_config(vla_config *cfg, vla_model_kind m, vla_track tr, vla_prec p, int d,
               const vla_config *form)
{
    vla_config_default(cfg, m, d);
    cfg->track = vla_model_has_A(m) ? tr : VLA_TRACK_SM;
    cfg->prec = p;
    if (vla_track_holds(tr) != VLA_HOLDS_A && vla_model_has_A(m)) {
        cfg->nudge = 0;
        cfg->clamp_on = 0;
    }
    if (form) {
        cfg->form = form->form;
        cfg->chunk = form->chunk;
    }
    if (vla_form_pending(cfg, 1)) {
        cfg->period = cfg->chunk > 64 ? cfg->chunk : 64;
        cfg->clamp_on = 0;
        cfg->guard = (vla_model_devices(m) & VLA_DEV_FLOOR) != 0;
    }
}

/* the suffix of the case names of form: "" for seq, else "@chunk:16", "@scan" */
static void rg_form_suffix(const vla_config *form, char *buf, size_t len)
{
    buf[0] = 0;
    if (form->form != VLA_FORM_SEQ && len > 1) {
        buf[0] = '@';
        vla_form_name(form, buf + 1, len - 1);
    }
}

/* model/track/precision/stream, and @FORM outside the seq form */
void rg_case_name(char *buf, size_t len, const vla_config *cfg, int stream)
{
    char form[40], way[48] = "-";
    rg_form_suffix(cfg, form, sizeof form);
    if (vla_model_has_A(cfg->model))
        vla_track_spec(cfg, way, sizeof way);
    snprintf(buf, len, "%s/%s/%s/%s%s", vla_model_name(cfg->model), way, vla_prec_name(cfg->prec),
             rg_streams[stream].name, form);
}

/* Every case of the suite in form (NULL: seq) on the backends in `backends` (a bit per backend),
 * in a fixed order: backend, stream, model, track, precision. The precisions, ways of tracking and
 * forms are those vla_track_check and vla_form_check admit, so a new way of tracking joins the
 * suite by itself (and then needs its baseline rows). */
int rg_suite(rg_case **out, unsigned backends, const vla_config *form)
{
    int n = 0, cap = 0;
    rg_case *cs = NULL;
    for (int b = 0; b < VLA_NBACKEND; b++) {
        if (!(backends >> b & 1))
            continue;
        for (int s = 0; s < RG_NSTREAM; s++)
            for (int m = 0; m < VLA_NMODEL; m++)
                for (int tr = 0; tr < VLA_NTRACK; tr++) {
                    if (!vla_model_has_A(m) && tr != VLA_TRACK_SM)
                        continue;
                    for (int p = 0; p < VLA_NPREC; p++) {
                        rg_case c = {.backend = b, .stream = s, .group = -1};
                        rg_config(&c.cfg, m, tr, p, rg_streams[s].d, form);
                        if (vla_config_check(&c.cfg) || vla_track_check(&c.cfg, NULL) ||
                            vla_form_check(&c.cfg, NULL) || !vla_backend_supports(vla_backend_at(b), &c.cfg, NULL))
                            continue;
                        rg_case_name(c.name, sizeof c.name, &c.cfg, s);
                        if (n == cap) {
                            cap = cap ? 2 * cap : 256;
                            rg_case *p2 = realloc(cs, cap * sizeof *cs);
                            if (!p2) {
                                free(cs);
                                return VLA_ENOMEM;
                            }
                            cs = p2;
                        }
                        cs[n++] = c;
                    }
                }
    }
    *out = cs;
    return n;
}

/* ---- locating the trace ---- */

static int rg_is_trace_dir(const char *dir)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/q.npy", dir);
    return stat(p, &st) == 0;
}

/* The real trace: $VLA_SHARED/data/lmtrace-seed7/vla3, else shared/data/... beside the
 * executable's folder or one of its parents (bin/ and build/tests/ both sit below the repository,
 * which sits beside shared/), else ../shared relative to the working directory. 1 when found. */
int rg_find_trace(char *buf, size_t len)
{
    static const char rel[] = "data/lmtrace-seed7/vla3";
    const char *env = getenv("VLA_SHARED");
    if (env && *env) {
        snprintf(buf, len, "%s/%s", env, rel);
        if (rg_is_trace_dir(buf))
            return 1;
    }
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        for (int up = 0; up < 5; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash || slash == exe)
                break;
            *slash = 0;
            snprintf(buf, len, "%s/shared/%s", exe, rel);
            if (rg_is_trace_dir(buf))
                return 1;
        }
    }
    static const char *const tries[] = {"../shared", "shared", "../../shared"};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        snprintf(buf, len, "%s/%s", tries[i], rel);
        if (rg_is_trace_dir(buf))
            return 1;
    }
    buf[0] = 0;
    return 0;
}

/* ---- inputs: each stream's steps drawn once (lib's vla_inputs), replayed to every case ---- */

typedef struct {
    int ok;
    vla_inputs v;
    char err[300];
} rg_inputs;

static int rg_inputs_load(rg_inputs *x, const char *spec, int d, int heads, long T)
{
    memset(x, 0, sizeof *x);
    /* the gates of the gated family too, which the other models do not read */
    vla_error ve;
    int e = vla_inputs_draw(&x->v, spec, 1, d, d, heads, T,
                            VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D | VLA_IN_A | VLA_IN_B, &ve);
    if (e)
        snprintf(x->err, sizeof x->err, "%s", vla_error_msg(&ve));
    if (!e && x->v.T < T) {
        snprintf(x->err, sizeof x->err, "stream %.150s: %ld steps, the suite needs %ld", spec,
                 x->v.T, T);
        vla_inputs_free(&x->v);
        e = VLA_ERANGE;
    }
    x->ok = !e;
    return e;
}

static void rg_inputs_free(rg_inputs *x) { vla_inputs_free(&x->v); }

/* ---- the runs: a backend steps the heads of a case and hands over each checkpoint ---- */

typedef struct {
    const rg_case *c;
    const rg_group *g;
    const long *cks;
    double u;                     /* the unit roundoff of the storage format */
    double sum[RG_HEADS][3];      /* bits lost summed over the last decade's checkpoints */
    int n[RG_HEADS], bad[RG_HEADS][3];
    uint64_t fp[RG_HEADS];
} rg_meas;

static size_t rg_ref_stride(const rg_group *g, int *nA, int *nS, int *no)
{
    int d = g->cfg.d, dv = g->cfg.dv;
    *nA = vla_model_has_A(g->cfg.model) ? d * d : 0;
    *nS = dv * d;
    *no = dv;
    return (size_t)*nA + *nS + *no;
}

static double rg_relerr(const double *x, const double *ref, long n)
{
    double num = vla_fro_diff(x, ref, n), den = vla_fro(ref, n);
    double e = den > 0 ? num / den : num;
    return e <= DBL_MAX ? e : INFINITY; /* NaN and Inf alike: the case turned non-finite */
}

/* Head h at checkpoint ck: A (NULL for a model without A), S, o as binary64. */
static void rg_visit(rg_meas *m, int h, int ck, const double *A, const double *S, const double *o)
{
    int nA, nS, no;
    size_t stride = rg_ref_stride(m->g, &nA, &nS, &no);
    const double *r = m->g->ref + ((size_t)h * m->g->nck + ck) * stride;
    double e[3] = {NAN, rg_relerr(S, r + nA, nS), rg_relerr(o, r + nA + nS, no)};
    if (nA)
        e[0] = rg_relerr(A, r, nA);
    int last_decade = 10 * m->cks[ck] >= RG_T;
    for (int q = nA ? 0 : 1; q < 3; q++) {
        if (!(e[q] <= DBL_MAX))
            m->bad[h][q] = 1; /* at any checkpoint */
        else if (last_decade)
            m->sum[h][q] += e[q] > 0 ? fmax(log2(e[q] / m->u), RG_FLOOR) : RG_FLOOR;
    }
    m->n[h] += last_decade;
    if (nA)
        m->fp[h] = vla_fnv1a(m->fp[h], A, nA * sizeof *A);
    m->fp[h] = vla_fnv1a(m->fp[h], S, nS * sizeof *S);
    m->fp[h] = vla_fnv1a(m->fp[h], o, no * sizeof *o);
}

static void rg_visit_counts(rg_meas *m, int h, const vla_counts *c)
{
    long v[6] = {c->guard, c->clamp, c->clip, c->nudge, c->zero_norm, c->renorm};
    m->fp[h] = vla_fnv1a(m->fp[h], v, sizeof v);
    if (c->solves) { /* solve, cg, cheb (the other ways' fingerprints as they were) */
        long w[4] = {c->solves, c->solve_iters, c->solve_fail, c->solve_fail_t};
        m->fp[h] = vla_fnv1a(m->fp[h], w, sizeof w);
    }
    if (c->cache_sat) /* a saturated state cache (the others' fingerprints as they were) */
        m->fp[h] = vla_fnv1a(m->fp[h], &c->cache_sat, sizeof c->cache_sat);
}

/* The heads of x in configuration cfg on backend b (ref_bits > 0: the exact reference), from
 * checkpoint to checkpoint: visit(ctx, head, ck, A or NULL, S, o) at each, then end(ctx, head,
 * counts). 0, or a vla_err with the reason in err. */
static int rg_engine_run(const vla_backend *b, const vla_config *cfg, const rg_inputs *x,
                         const long *cks, long nck, long ref_bits,
                         void (*visit)(void *, int, int, const double *, const double *,
                                       const double *),
                         void (*end)(void *, int, const vla_counts *), void *ctx, vla_error *err)
{
    const int d = cfg->d, dv = cfg->dv, has_A = vla_model_has_A(cfg->model);
    vla_engine_spec sp = {.backend = b, .cfg = *cfg, .runs = RG_HEADS, .in = x->v.in,
                          .is_read = x->v.is_read, .T = x->v.T, .round_inputs = VLA_FMT_F64,
                          .ref_bits = ref_bits};
    double *A = malloc(((size_t)d * d + (size_t)dv * d + dv) * sizeof *A), *S = A + (size_t)d * d,
           *o = S + (size_t)dv * d;
    vla_engine *e = NULL;
    int r = A ? vla_engine_new(&e, &sp, err) : vla_fail(err, VLA_ENOMEM, "out of memory");
    for (long ck = 0; !r && ck < nck; ck++) {
        if ((r = vla_engine_advance(e, cks[ck]))) {
            *err = *vla_engine_error(e);
            break;
        }
        for (int h = 0; h < RG_HEADS && !r; h++) {
            if ((has_A && (r = vla_engine_get(e, h, VLA_Q_A, A))) ||
                (r = vla_engine_get(e, h, VLA_Q_S, S)) || (r = vla_engine_get(e, h, VLA_Q_O, o)))
                vla_fail(err, r, "vla_engine_get: %s", vla_error_msg(vla_engine_error(e)));
            else
                visit(ctx, h, (int)ck, has_A ? A : NULL, S, o);
        }
    }
    for (int h = 0; h < RG_HEADS && !r && end; h++) {
        vla_counts c;
        if (!(r = vla_engine_counts(e, h, &c)))
            end(ctx, h, &c);
    }
    vla_engine_free(e);
    free(A);
    return r;
}

static void rg_case_visit(void *ctx, int h, int ck, const double *A, const double *S,
                          const double *o)
{
    rg_visit(ctx, h, ck, A, S, o);
}

static void rg_case_end(void *ctx, int h, const vla_counts *c) { rg_visit_counts(ctx, h, c); }

/* the exact reference's states at the checkpoints, into its group */
static void rg_group_visit(void *ctx, int h, int ck, const double *A, const double *S,
                           const double *o)
{
    rg_group *g = ctx;
    int nA, nS, no;
    size_t stride = rg_ref_stride(g, &nA, &nS, &no);
    double *p = g->ref + ((size_t)h * g->nck + ck) * stride;
    if (nA)
        memcpy(p, A, nA * sizeof *p);
    memcpy(p + nA, S, nS * sizeof *p);
    memcpy(p + nA + nS, o, no * sizeof *p);
}

/* The exact reference of group g, every head, its states at the checkpoints. */
static int rg_group_run(rg_group *g, const rg_inputs *x, const long *cks)
{
    int nA, nS, no;
    size_t stride = rg_ref_stride(g, &nA, &nS, &no);
    g->ref = malloc((size_t)RG_HEADS * g->nck * stride * sizeof(double));
    if (!g->ref) {
        snprintf(g->err, sizeof g->err, "out of memory");
        return VLA_ENOMEM;
    }
    vla_error err;
    int e = rg_engine_run(vref_backend_exact(), &g->cfg, x, cks, g->nck, RG_REF_BITS,
                          rg_group_visit, NULL, g, &err);
    if (e)
        snprintf(g->err, sizeof g->err, "exact reference: %.180s", vla_error_msg(&err));
    return e;
}

/* The reference a case compares with: same model, switches and stream, inputs rounded to the
 * same storage format (the exact recurrence takes them exactly from there). The way of tracking
 * does not matter in exact arithmetic: sm stands for all. */
static int rg_group_key_eq(const vla_config *a, const vla_config *b)
{
    return a->model == b->model && a->nudge == b->nudge && a->period == b->period &&
           a->clamp_on == b->clamp_on && a->guard == b->guard && a->d == b->d &&
           vla_prec_io(a->prec) == vla_prec_io(b->prec);
}

/* the policy that stores and computes in the format p's inputs are rounded to (storage's, or
 * a kernel policy's io): the exact reference takes its inputs rounded to that format (the lists:
 * a format without such a policy would be a NaN case, never another format's reference) */
static vla_prec rg_io_prec(vla_prec p)
{
    for (int q = 0; q < VLA_NPREC; q++)
        if (vla_prec_storage((vla_prec)q) == vla_prec_io(p) &&
            vla_prec_compute((vla_prec)q) == vla_prec_io(p))
            return (vla_prec)q;
    return VLA_NPREC;
}

/* one case on its backend, measured against its reference */
static void rg_case_run(const rg_case *c, const rg_group *g, const rg_inputs *x, const long *cks,
                        rg_result *r)
{
    if (g->err[0]) {
        snprintf(r->err, sizeof r->err, "%s", g->err);
        return;
    }
    rg_meas m = {.c = c, .g = g, .cks = cks};
    m.u = vla_fmt_unit_roundoff(vla_prec_storage(c->cfg.prec));
    for (int h = 0; h < RG_HEADS; h++)
        m.fp[h] = VLA_FNV_INIT;
    vla_error err;
    int e = rg_engine_run(vla_backend_at(c->backend), &c->cfg, x, cks, g->nck, 0, rg_case_visit,
                          rg_case_end, &m, &err);
    if (e) {
        snprintf(r->err, sizeof r->err, "%s", vla_error_msg(&err));
        return;
    }
    /* the mean over heads and over the last decade's checkpoints: a single checkpoint's (or the
     * worst one's) error swings with the particular rounding errors by a bit or more, the mean
     * by a few tenths (see RG_MARGIN) */
    for (int q = 0; q < 3; q++) {
        double sum = 0;
        int bad = 0;
        for (int h = 0; h < RG_HEADS; h++) {
            sum += m.sum[h][q] / m.n[h];
            bad |= m.bad[h][q];
        }
        r->bits[q] = q == 0 && !vla_model_has_A(c->cfg.model) ? NAN : bad ? INFINITY
                                                                          : sum / RG_HEADS;
    }
    r->fp = VLA_FNV_INIT;
    for (int h = 0; h < RG_HEADS; h++)
        r->fp = vla_fnv1a(r->fp, &m.fp[h], sizeof m.fp[h]);
    r->ran = 1;
}

/* ---- the run of the whole selection ---- */



static int rg_match(const char *only, const char *name)
{
    if (!only || !*only)
        return 1;
    char buf[1024], *save;
    snprintf(buf, sizeof buf, "%s", only);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!fnmatch(tok, name, 0))
            return 1;
    return 0;
}

static void rg_note(rg_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rg_note(rg_run *r, const char *fmt, ...)
{
    if (r->nnotes == 4)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->nnotes++], sizeof r->notes[0], fmt, ap);
    va_end(ap);
}

static double rg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

void rg_run_free(rg_run *r)
{
    free(r->cases);
    free(r->res);
    memset(r, 0, sizeof *r);
}

/* Runs the selected cases; 0, or a vla_err with the reason printed to stderr (the suite could
 * not be set up: an unknown backend, no memory). A case that fails on its own is a result. */
int rg_execute(const rg_opts *o, rg_run *run)
{
    memset(run, 0, sizeof *run);
    run->form = o->form;
    double t0 = rg_now();
    unsigned want = o->backends;
    vla_error why;
    if (!want) { /* every backend available here (never the slow emulation) */
        for (int b = 0; b < VLA_NBACKEND; b++) {
            if (b == VLA_BACKEND_EMU)
                continue;
            if (vla_backend_available(vla_backend_at(b), &why))
                want |= 1u << b;
            else
                rg_note(run, "backend %s not run: %s", vla_backend_name(vla_backend_at(b)),
                        vla_error_msg(&why));
        }
    }
    for (int b = 0; b < VLA_NBACKEND; b++)
        if ((want >> b & 1) && !vla_backend_available(vla_backend_at(b), &why)) {
            fprintf(stderr, "vla-regress: backend %s: %s\n", vla_backend_name(vla_backend_at(b)),
                    vla_error_msg(&why));
            return VLA_ENOTSUP;
        }
    rg_case *all;
    int n = rg_suite(&all, want, &o->form);
    if (n < 0)
        return n;
    int have_trace = 0;
    if (o->trace) {
        snprintf(run->trace_dir, sizeof run->trace_dir, "%s", o->trace);
        if (!rg_is_trace_dir(o->trace)) {
            fprintf(stderr, "vla-regress: --trace %s: no q.npy there\n", o->trace);
            free(all);
            return VLA_EIO;
        }
        have_trace = 1;
    } else {
        have_trace = rg_find_trace(run->trace_dir, sizeof run->trace_dir);
    }
    int k = 0, skipped_trace = 0;
    for (int i = 0; i < n; i++) {
        if (!rg_match(o->only, all[i].name))
            continue;
        if (rg_streams[all[i].stream].spec == NULL && !have_trace) {
            skipped_trace++;
            continue;
        }
        all[k++] = all[i];
    }
    if (skipped_trace)
        rg_note(run, "%d trace case%s not run: lmtrace-seed7/vla3 not found (set VLA_SHARED or "
                     "--trace DIR)", skipped_trace, skipped_trace == 1 ? "" : "s");
    run->n = k;
    run->cases = all;
    run->res = calloc(k ? k : 1, sizeof *run->res);
    if (!run->res)
        return VLA_ENOMEM;
    if (o->list)
        return VLA_OK;

    /* the references the selection needs */
    rg_group *gs = calloc(k ? k : 1, sizeof *gs);
    int ng = 0;
    if (!gs)
        return VLA_ENOMEM;
    for (int i = 0; i < k; i++) {
        const vla_config *c = &all[i].cfg;
        int g = 0;
        while (g < ng && !(gs[g].stream == all[i].stream && rg_group_key_eq(&gs[g].cfg, c)))
            g++;
        if (g == ng) {
            gs[ng].stream = all[i].stream;
            gs[ng].cfg = *c;
            gs[ng].cfg.track = VLA_TRACK_SM;
            gs[ng].cfg.prec = rg_io_prec(c->prec);
            gs[ng].cfg.form = VLA_FORM_SEQ; /* the recurrence as defined */
            gs[ng].cfg.chunk = 0;
            ng++;
        }
        all[i].group = g;
    }

    /* the inputs of each stream in use */
    rg_inputs in[RG_NSTREAM];
    long cks[RG_MAX_CK];
    long nck = vla_checkpoints(RG_T, RG_PER_DECADE, cks, RG_MAX_CK);
    nck = vla_checkpoints_form(&o->form, cks, nck); /* where the form has a state */
    memset(in, 0, sizeof in);
    for (int s = 0; s < RG_NSTREAM; s++) {
        int used = 0;
        for (int g = 0; g < ng; g++)
            used |= gs[g].stream == s;
        if (!used)
            continue;
        char spec[4200];
        if (rg_streams[s].spec)
            snprintf(spec, sizeof spec, "%s", rg_streams[s].spec);
        else
            snprintf(spec, sizeof spec, "trace:%s", run->trace_dir);
        if (rg_inputs_load(&in[s], spec, rg_streams[s].d, RG_HEADS, RG_T))
            fprintf(stderr, "vla-regress: %s\n", in[s].err);
    }
    for (int g = 0; g < ng; g++)
        gs[g].nck = nck;

    /* the references (the costly part: 256-bit MPFR), the biggest first */
    int *order = malloc((size_t)(ng > 0 ? ng : 1) * sizeof *order);
    if (!order)
        return VLA_ENOMEM;
    for (int g = 0; g < ng; g++)
        order[g] = g;
    for (int a = 1; a < ng; a++) /* insertion sort by d, descending, stable */
        for (int b = a; b > 0 && gs[order[b]].cfg.d > gs[order[b - 1]].cfg.d; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    int rg_nt = ng > 0 ? ng : 1;
    RG_PARALLEL_FOR
    for (int j = 0; j < ng; j++) {
        rg_group *g = &gs[order[j]];
        if (!in[g->stream].ok)
            snprintf(g->err, sizeof g->err, "inputs: %s", in[g->stream].err);
        else
            rg_group_run(g, &in[g->stream], cks);
    }
    free(order);

    /* the cases: the CPU's in parallel, a device's one at a time (it has its own parallelism) */
    rg_nt = k > 0 ? k : 1;
    RG_PARALLEL_FOR
    for (int i = 0; i < k; i++)
        if (all[i].backend == VLA_BACKEND_CPU)
            rg_case_run(&all[i], &gs[all[i].group], &in[all[i].stream], cks, &run->res[i]);
    for (int i = 0; i < k; i++)
        if (all[i].backend != VLA_BACKEND_CPU)
            rg_case_run(&all[i], &gs[all[i].group], &in[all[i].stream], cks, &run->res[i]);
    for (int g = 0; g < ng; g++)
        free(gs[g].ref);
    free(gs);
    for (int s = 0; s < RG_NSTREAM; s++)
        rg_inputs_free(&in[s]);
    run->seconds = rg_now() - t0;
    return VLA_OK;
}

/* ---- the baseline ---- */

/* what a baseline must agree on with the program that reads it */
void rg_suite_line(char *buf, size_t len)
{
    snprintf(buf, len,
             "# suite: d=%d (trace %d) T=%d heads=%d checkpoints=%d/decade, mean over t>=T/10; "
             "ref=MPFR %d bits mode=strict seed=1",
             RG_D, RG_D_TRACE, RG_T, RG_HEADS, RG_PER_DECADE, RG_REF_BITS);
}


static int rg_parse_bits(const char *s, double *out)
{
    char *end;
    if (!strcmp(s, "-")) {
        *out = NAN;
        return 1;
    }
    if (!strcmp(s, "inf")) {
        *out = INFINITY;
        return 1;
    }
    errno = 0;
    *out = strtod(s, &end);
    return end != s && !*end && !errno && isfinite(*out);
}


/* 0; VLA_EIO when the file does not exist; VLA_EFORMAT with the line (or what is wrong with the
 * file: not a regular file, larger than RG_BASELINE_MAX) written to err */
int rg_baseline_read(rg_baseline *b, const char *path, vla_error *err)
{
    memset(b, 0, sizeof *b);
    FILE *f;
    const char *kind;
    int e = vla_file_read_open(path, RG_BASELINE_MAX, &f, &kind);
    if (e == VLA_EIO || e == VLA_ENOMEM)
        return vla_fail(err, VLA_EIO, "%s: %s", path, strerror(errno));
    if (e == VLA_EINVAL)
        return vla_fail(err, VLA_EFORMAT, "%s: %s, not a regular file", path, kind);
    if (e)
        return vla_fail(err, VLA_EFORMAT, "%s: larger than %ld bytes, the limit of a baseline",
                        path, RG_BASELINE_MAX);
    char line[1024];
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (ftell(f) > RG_BASELINE_MAX) { /* it grew since it was opened */
            e = vla_fail(err, VLA_EFORMAT, "%s: larger than %ld bytes, the limit of a baseline",
                         path, RG_BASELINE_MAX);
            break;
        }
        line[strcspn(line, "\r\n")] = 0;
        if (!strncmp(line, "# suite:", 8))
            snprintf(b->suite, sizeof b->suite, "%.299s", line);
        if (line[0] == '#' || !line[0])
            continue;
        char *f0 = strtok(line, "\t"), *f1 = strtok(NULL, "\t"), *f2 = strtok(NULL, "\t"),
             *f3 = strtok(NULL, "\t"), *f4 = strtok(NULL, "\t"), *extra = strtok(NULL, "\t");
        rg_row r;
        memset(&r, 0, sizeof r);
        char *endp;
        if (!f4 || extra || strlen(f0) >= sizeof r.name || !rg_parse_bits(f1, &r.bits[0]) ||
            !rg_parse_bits(f2, &r.bits[1]) || !rg_parse_bits(f3, &r.bits[2]) ||
            (r.fp = strtoull(f4, &endp, 16), *endp || strlen(f4) != 16)) {
            e = vla_fail(err, VLA_EFORMAT, "%s:%d: expected case, three bits-lost numbers (or - or "
                         "inf) and a 16-digit fingerprint, tab-separated", path, lineno);
            break;
        }
        snprintf(r.name, sizeof r.name, "%s", f0);
        if (b->n == cap) {
            cap = cap ? 2 * cap : 512;
            rg_row *p = realloc(b->rows, cap * sizeof *p);
            if (!p) {
                e = vla_fail(err, VLA_ENOMEM, "out of memory");
                break;
            }
            b->rows = p;
        }
        b->rows[b->n++] = r;
    }
    fclose(f);
    return e;
}

rg_row *rg_baseline_find(rg_baseline *b, const char *name)
{
    for (int i = 0; i < b->n; i++)
        if (!strcmp(b->rows[i].name, name))
            return &b->rows[i];
    return NULL;
}

static void rg_fmt_bits(char *buf, size_t len, double x)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else if (isinf(x))
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%.3f", x);
}

static void rg_baseline_row(FILE *f, const char *name, const double *bits, uint64_t fp)
{
    char a[32], s[32], o[32];
    rg_fmt_bits(a, sizeof a, bits[0]);
    rg_fmt_bits(s, sizeof s, bits[1]);
    rg_fmt_bits(o, sizeof o, bits[2]);
    fprintf(f, "%s\t%s\t%s\t%s\t%016llx\n", name, a, s, o, (unsigned long long)fp);
}

/* whether a row's case is of the form of the suffix sfx ("" for seq, else "@chunk:16", ...) */
static int rg_row_of_form(const char *name, const char *sfx)
{
    const char *at = strchr(name, '@');
    return !strcmp(at ? at : "", sfx);
}

/* Writes the baseline: this run's CPU rows, and the rows of the old one for cases of the suite
 * that this run did not run (not selected, or the trace absent), in the suite's order, where the
 * old one had its form's rows; the rows of other forms as they were. */
int rg_baseline_write(const char *path, const rg_run *run, rg_baseline *old)
{
    rg_case *suite;
    int n = rg_suite(&suite, 1u << VLA_BACKEND_CPU, &run->form);
    if (n < 0)
        return n;
    /* renamed over the baseline: only a regular file, or a symlink (replaced, not followed) */
    char *target, tmp[4200], line[300];
    const char *kind;
    int e = vla_file_target(path, &target, &kind);
    if (e) {
        free(suite);
        return e;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", target, (long)getpid()); /* its own: two updates */
    vla_file_remove_stale(target);
    FILE *f = vla_file_create(tmp);
    if (!f) {
        free(target);
        free(suite);
        return VLA_EIO;
    }
    rg_suite_line(line, sizeof line);
    fprintf(f, "# tests/regress/baseline.tsv: the precision bin/vla-regress measured when it was last\n"
               "# reviewed. Written by `make regress-update`; review its diff in the commit.\n"
               "%s\n"
               "# bits lost = log2(||X - X_exact||_F / ||X_exact||_F / u), u the unit roundoff of the\n"
               "# precision's storage format, averaged over the heads and the checkpoints t >= T/10;\n"
               "# '-': the model has no A; 'inf': non-finite. fingerprint: the bits of every\n"
               "# checkpointed state and the event counts (strict mode: a change means the\n"
               "# arithmetic changed, for better or worse).\n"
               "# columns: case a_bits s_bits o_bits fingerprint\n",
            line);
    char sfx[40];
    rg_form_suffix(&run->form, sfx, sizeof sfx);
    for (int k = 0, placed = 0; k <= old->n; k++) {
        const int ours = k < old->n && rg_row_of_form(old->rows[k].name, sfx);
        if (k < old->n && !ours) {
            rg_baseline_row(f, old->rows[k].name, old->rows[k].bits, old->rows[k].fp);
            continue;
        }
        if (placed)
            continue;
        placed = 1;
        for (int i = 0; i < n; i++) {
            const rg_result *r = NULL;
            for (int j = 0; j < run->n; j++)
                if (run->cases[j].backend == VLA_BACKEND_CPU && !strcmp(run->cases[j].name, suite[i].name)) {
                    r = run->res[j].ran ? &run->res[j] : NULL;
                    break;
                }
            const rg_row *kept = r ? NULL : rg_baseline_find(old, suite[i].name);
            if (r || kept)
                rg_baseline_row(f, suite[i].name, r ? r->bits : kept->bits, r ? r->fp : kept->fp);
        }
    }
    free(suite);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    e = bad ? VLA_EIO : vla_file_replace(tmp, target, &kind);
    free(target);
    if (e) {
        int errnum = errno;
        unlink(tmp);
        errno = errnum;
    }
    return e;
}

/* ---- the verdicts ---- */

const char *const rg_vname[V_NV] = {"same",  "changed",   "better", "NEW",
                                    "WORSE", "NONFINITE", "ERROR"};


/* One case against its row: same (the bits too), changed (other bits, no quantity more than
 * the margin worse), better, WORSE, NONFINITE (finite in the baseline, not now), NEW (no row),
 * ERROR (the case could not run). *worst gets the largest increase in bits lost. */
int rg_verdict(const rg_result *r, const rg_row *b, double margin, double *worst)
{
    *worst = 0;
    if (!r->ran)
        return V_ERROR;
    if (!b)
        return V_NEW;
    int nonfinite = 0, worse = 0, better = 0;
    for (int q = 0; q < 3; q++) {
        double x = r->bits[q], y = b->bits[q];
        if (isnan(x) || isnan(y))
            continue;
        if (isinf(x) && !isinf(y))
            nonfinite = 1;
        else if (!isinf(x) && isinf(y))
            better = 1;
        else if (!isinf(x)) {
            double c = x - y;
            *worst = fmax(*worst, c);
            worse |= c > margin;
            better |= c < -margin;
        }
    }
    return nonfinite ? V_NONFINITE : worse ? V_WORSE : better ? V_BETTER : r->fp == b->fp ? V_SAME
                                                                                         : V_CHANGED;
}

/* exit status of a comparison: regressions, and rows that cannot be judged */
int rg_is_failure(int v, int bits)
{
    return v == V_WORSE || v == V_NONFINITE || v == V_ERROR || v == V_NEW ||
           (bits && (v == V_CHANGED || v == V_BETTER));
}

/* whether case i is verdict v (V_NV: non-finite now, whatever the baseline says) */
static int rg_is(const rg_opts *o, const rg_run *run, rg_baseline *base, int i, int v)
{
    const rg_result *r = &run->res[i];
    double worst;
    if (v == V_NV)
        return r->ran && (isinf(r->bits[0]) || isinf(r->bits[1]) || isinf(r->bits[2]));
    return rg_verdict(r, rg_baseline_find(base, run->cases[i].name), o->margin, &worst) == v;
}

/* The summary line (summary.h): the verdicts' counts with the first cases of each that is not
 * "same" by name, and the cases non-finite now (one non-finite in the baseline too is "same", and
 * must not pass unsaid); loud when a case is not the same or is non-finite. */
void rg_summary(vla_summary *s, const rg_opts *o, const rg_run *run, rg_baseline *base)
{
    for (int v = V_SAME; v <= V_NV; v++) {
        char names[400] = "";
        int count = 0, n = 0;
        for (int i = 0; i < run->n; i++)
            if (rg_is(o, run, base, i, v) && count++ < 4 && n < (int)sizeof names)
                n += snprintf(names + n, sizeof names - n, "%s%s:%s", count > 1 ? ", " : "",
                              vla_backend_name(vla_backend_at(run->cases[i].backend)), run->cases[i].name);
        if (v == V_SAME)
            vla_summary_add(s, 0, "%d cases: %d same", run->n, count);
        else if (count)
            vla_summary_add(s, 1, "%d %s (%s%s)", count,
                            v == V_NV ? "non-finite now, the baseline's verdict aside" : rg_vname[v],
                            names, count > 4 ? ", ..." : "");
    }
}

/* Prints the table and the summary; returns the number of failing cases. */
int rg_report(FILE *out, const rg_opts *o, const rg_run *run, rg_baseline *base)
{
    int count[V_NV] = {0}, fails = 0;
    fprintf(out, "# vla-regress: bits lost against the exact reference (MPFR, %d bits), strict mode\n",
            RG_REF_BITS);
    fprintf(out, "# bits lost = log2(||X - X_exact||_F / ||X_exact||_F / u), the mean over %d heads and the "
                 "checkpoints t >= T/10;\n# u = unit roundoff of the STORAGE format: f64 2^-53, f32 "
                 "2^-24, f16 and f16-f32 2^-11, bf16 and bf16-f32 2^-8\n",
            RG_HEADS);
    char form[32];
    vla_form_name(&o->form, form, sizeof form);
    fprintf(out, "# d=%d (trace %d), T=%d; chol, solve, cg, cheb with nudge and clamp off; form %s%s; "
                 "baseline %s; margin %.2f bit%s\n",
            RG_D, RG_D_TRACE, RG_T, form,
            vla_form_pending(&o->form, 1)
                ? " (checkpoints rounded down to multiples of C; a nudge every max(C, 64) steps, "
                  "no clamp, the guard vla3's floor only)"
                : "",
            o->baseline, o->margin, o->bits ? "; --bits: any change of bits fails" : "");
    for (int i = 0; i < run->nnotes; i++)
        fprintf(out, "# note: %s\n", run->notes[i]);
    vla_summary sm = {.len = 0};
    rg_summary(&sm, o, run, base);
    fprintf(out, "# summary: %s\n", sm.text);
    vla_summary_say(&sm, "vla-regress");
    fprintf(out, "%-46s %-22s %-22s %-22s %s\n", "", "  ------- A -------", "  ------- S -------",
            "  ------- o -------", "");
    fprintf(out, "%-46s %6s %6s %7s  %6s %6s %7s  %6s %6s %7s  %s\n", "case", "base", "now", "change",
            "base", "now", "change", "base", "now", "change", "verdict");
    for (int i = 0; i < run->n; i++) {
        const rg_case *c = &run->cases[i];
        const rg_result *r = &run->res[i];
        rg_row *b = rg_baseline_find(base, c->name);
        if (b)
            b->used = 1;
        double worst;
        int v = rg_verdict(r, b, o->margin, &worst);
        count[v]++;
        int fail = rg_is_failure(v, o->bits);
        fails += fail;
        if (o->changed_only && v == V_SAME)
            continue;
        char label[128];
        snprintf(label, sizeof label, "%s:%s", vla_backend_name(vla_backend_at(c->backend)), c->name);
        fprintf(out, "%-46s", label);
        for (int q = 0; q < 3; q++) {
            char sb[32], sn[32], sc[32];
            double y = b ? b->bits[q] : NAN, x = r->ran ? r->bits[q] : NAN;
            rg_fmt_bits(sb, sizeof sb, b ? y : NAN);
            if (!b)
                snprintf(sb, sizeof sb, "?");
            rg_fmt_bits(sn, sizeof sn, x);
            if (!r->ran)
                snprintf(sn, sizeof sn, "?");
            if (isfinite(x) && isfinite(y))
                snprintf(sc, sizeof sc, "%+.2f", fabs(x - y) < 0.005 ? 0.0 : x - y);
            else /* '!': finite on one side only */
                snprintf(sc, sizeof sc, "%s", isinf(x) != isinf(y) && !isnan(x) && !isnan(y) ? "!" : "-");
            fprintf(out, " %6s %6s %7s ", sb, sn, sc);
        }
        fprintf(out, " %s%s", rg_vname[v], fail && v != V_WORSE && v != V_NONFINITE && v != V_ERROR &&
                                                   v != V_NEW ? " (--bits)" : "");
        if (v == V_ERROR)
            fprintf(out, ": %s", r->err);
        fputc('\n', out);
    }
    int missing = 0;
    char sfx[40];
    rg_form_suffix(&o->form, sfx, sizeof sfx);
    for (int i = 0; i < base->n; i++)
        missing += !base->rows[i].used && rg_row_of_form(base->rows[i].name, sfx);
    fprintf(out, "# %d cases in %.1f s: %d same, %d changed bits within the margin, %d better, %d "
                 "WORSE, %d NONFINITE, %d NEW, %d ERROR; %d baseline rows not run\n",
            run->n, run->seconds, count[V_SAME], count[V_CHANGED], count[V_BETTER], count[V_WORSE],
            count[V_NONFINITE], count[V_NEW], count[V_ERROR], missing);
    if (o->update) {
        fprintf(out, "# --update: the baseline takes these numbers (%d cases above would have failed)\n",
                fails);
    } else if (fails) {
        fprintf(out, "# FAIL: %d case%s:", fails, fails == 1 ? "" : "s");
        int shown = 0;
        for (int i = 0; i < run->n && shown < 12; i++) {
            rg_row *b = rg_baseline_find(base, run->cases[i].name);
            double worst;
            int v = rg_verdict(&run->res[i], b, o->margin, &worst);
            if (!rg_is_failure(v, o->bits))
                continue;
            if (v == V_WORSE)
                fprintf(out, " %s:%s (%+.2f bits)", vla_backend_name(vla_backend_at(run->cases[i].backend)),
                        run->cases[i].name, worst);
            else
                fprintf(out, " %s:%s (%s)", vla_backend_name(vla_backend_at(run->cases[i].backend)),
                        run->cases[i].name, rg_vname[v]);
            shown++;
        }
        fprintf(out, "%s\n", shown < fails ? " ..." : "");
        if (count[V_NEW])
            fprintf(out, "# NEW cases have no baseline row: review them and run `make regress-update`\n");
    } else {
        fprintf(out, "# PASS: no case lost more than %.2f bit%s\n", o->margin,
                count[V_CHANGED] ? " (some bits changed: see 'changed')" : "");
    }
    return fails;
}
