/* vla-check: the front door for a user's own inputs (a trace:DIR, or any stream). Runs every model
 * of the library's list in every precision policy of its list (new ones join by themselves) over
 * all heads and the whole trace, each against binary64 (the f64 rows against the exact MPFR
 * reference), and writes a verdict table, a Markdown report with one figure, and exits 1 when a
 * precision named by --require fails the threshold: a gate for a kernel change in a user's CI. */
#include "cli.h"
#include "file.h"
#include "gnuplot.h"
#include "list.h"
#include "vlaref.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NTHR 3
static const double thr[NTHR] = {1e-3, 1e-1, 1};
enum { QS, QA, QO, NQ };
#define WIN 1024 /* steps per advance: the read-outs of a window are kept for the comparison */
/* the read-outs are kept by step modulo RING: a window plus the unfinished chunk before it, whose
 * tokens' read-outs come at the chunk's end, in the next window when another row's checkpoint
 * ends a window inside the chunk (seq's checkpoints beside chunk:64's, the default forms) */
#define RING (WIN + VLA_CHUNK_MAX)

#define COLUMNS                                                                                    \
    "model prec track form s_1e-3 s_1e-1 s_1 a_1e-3 a_1e-1 a_1 o_1e-3 o_1e-1 o_1 s_max a_max "    \
    "o_max nonfinite o_zero not_pd stagnation guard verdict"
#define NCOL 22
#define MAXFORMS 16

/* what one run (head) of one configuration showed; a step 0 means never */
typedef struct {
    long first[NQ][NTHR]; /* the first step at which the error passed the threshold */
    double worst[NQ];     /* the largest error seen (S and A at the checkpoints, o at every step) */
    long nonfinite, ozero, notpd, stagnant, guard_t;
    long guards, nzero; /* guard events, steps with a zero read-out */
    double nsum; /* ||n||_1 at the end: the read-out's denominator, for the cause line */
    double nerr; /* the largest relative error of the normalizer n (la, vla3), for the cause */
    long moved, steps; /* the a_moved_diag window */
} result;

typedef struct {
    const char *models, *precs, *tracks, *require, *report, *forms;
    double threshold;
} opts_t;

static int on_opt(void *ctx, const char *name, const char *val)
{
    opts_t *o = ctx;
    if (!strcmp(name, "models"))
        o->models = val;
    else if (!strcmp(name, "precisions"))
        o->precs = val;
    else if (!strcmp(name, "tracks"))
        o->tracks = val;
    else if (!strcmp(name, "require"))
        o->require = val;
    else if (!strcmp(name, "report"))
        o->report = val;
    else if (!strcmp(name, "forms"))
        o->forms = val;
    else if (!strcmp(name, "threshold")) {
        char *end;
        o->threshold = strtod(val, &end);
        if (end == val || *end || !(o->threshold > 0 && o->threshold < INFINITY)) {
            fprintf(stderr, "vla-check: --threshold: '%s' is not a positive number (try --help)\n",
                    val);
            return 1;
        }
    }
    return 0;
}

/* ---- the read-outs of a window, from the engines' taps ---- */
typedef struct {
    double *o;       /* runs x RING x dv, step t at (t - 1) % RING */
    unsigned char *seen; /* runs x RING: whether the step has a read-out (not inside a chunk) */
    int dv, C;       /* C: the chunk form's C (its read-outs come a chunk at a time), else 1 */
    result *res;     /* the model's engine: its a_moved_diag window (NULL for the reference) */
} taps_t;

static int on_step(void *ctx, const vla_step_view *v)
{
    taps_t *tp = ctx;
    size_t base = (size_t)v->run * RING, slot = base + (size_t)((v->t - 1) % RING);
    tp->seen[slot] = v->o != NULL; /* the chunk form computes a chunk's read-outs at its end */
    if (v->o)
        memcpy(tp->o + slot * tp->dv, v->o, tp->dv * sizeof *v->o);
    if (v->co) /* ... every token's, also those of the window before (RING keeps them) */
        for (int r = 0; r < tp->C; r++) {
            long tok = v->t - (tp->C - 1 - r);
            if (tok < 1)
                continue;
            size_t sr = base + (size_t)((tok - 1) % RING);
            tp->seen[sr] = 1;
            memcpy(tp->o + sr * tp->dv, v->co + (size_t)r * tp->dv, tp->dv * sizeof *v->co);
        }
    if (tp->res && v->a_moved_diag >= 0 && !v->in->is_read) {
        tp->res[v->run].moved += v->a_moved_diag;
        tp->res[v->run].steps++;
    }
    return VLA_OK;
}

static double relerr(const double *x, const double *y, long n)
{
    double diff = vla_fro_diff(x, y, n), ref = vla_fro(y, n);
    return diff == 0 ? 0 : diff / ref; /* a zero reference and a difference: Inf */
}

static void passed(result *r, int q, double err, long t)
{
    if (!(err <= r->worst[q])) /* NaN: the worst there is */
        r->worst[q] = err;
    for (int k = 0; k < NTHR; k++)
        if (!r->first[q][k] && !(err <= thr[k]))
            r->first[q][k] = t;
}

/* One configuration of a group, over every run: res[run], and the largest error over the runs at
 * each of its checkpoints into curve[i * NQ + q]; failed, with a one-line reason in err, when it
 * cannot run here (skipped) */
typedef struct {
    const vla_config *cfg;
    const long *cks;
    long nck, ci; /* its checkpoints, and the next one */
    result *res;
    double *curve;
    char *err;
    size_t errlen;
    int failed;
    vla_engine *m;
    taps_t tm;
    long done; /* the steps whose read-outs are measured (a chunk's come at its end) */
} member_t;

/* The configurations of a group, which share one reference (the same model, constants, input
 * rounding and reference: the forms of a model and the policies that round their inputs alike),
 * advanced together beside one run of it: the reference's steps, the longest work of the f64 rows
 * at 256 bits, are taken once. Each member gets what it would get alone. */
static void check_group(const vla_cli *c, member_t *mb, int n)
{
    const vla_config *cfg = mb[0].cfg;
    const int nr = c->runs, d = cfg->d, dv = cfg->dv, hasA = vla_model_has_A(cfg->model);
    vla_cli rc = *c;
    rc.ref = cfg->prec == VLA_F64 ? REF_EXACT : REF_F64;
    vla_engine *ref = NULL;
    taps_t tr = {NULL, NULL, dv, 1, NULL};
    size_t nbuf = (size_t)d * (d > dv ? d : dv);
    double *x = malloc(nbuf * sizeof *x), *y = malloc(nbuf * sizeof *y);
    double *lam = malloc((size_t)d * sizeof *lam);
    tr.o = malloc((size_t)nr * RING * dv * sizeof *tr.o);
    tr.seen = malloc((size_t)nr * RING);
    char refwhy[400] = "out of memory";
    int refbad = !x || !y || !lam || !tr.o || !tr.seen;
    long tend = 0;
    for (int k = 0; k < n; k++) {
        member_t *w = &mb[k];
        vla_engine_spec sp, rs;
        vla_cli_engine_spec(&rc, w->cfg, &sp);
        sp.threads = 1; /* the groups run in parallel, each on one thread (the same bits) */
        w->tm = (taps_t){malloc((size_t)nr * RING * dv * sizeof *w->tm.o), malloc((size_t)nr * RING),
                         dv, w->cfg->form == VLA_FORM_CHUNK && w->cfg->chunk > 1 ? w->cfg->chunk : 1,
                         w->res};
        sp.taps = VLA_TAP_O | VLA_TAP_MOVED;
        sp.on_step = on_step;
        sp.ctx = &w->tm;
        memset(w->res, 0, (size_t)nr * sizeof *w->res);
        for (long i = 0; i < w->nck * NQ; i++)
            w->curve[i] = i % NQ == QA && !hasA ? NAN : 0;
        w->ci = 0;
        w->done = 0;
        w->m = NULL;
        if (!w->tm.o || !w->tm.seen)
            w->failed = 1, snprintf(w->err, w->errlen, "out of memory");
        else if (vla_engine_new(&w->m, &sp, w->err, w->errlen))
            w->failed = 1;
        if (!refbad && !ref) { /* the group's reference, from its first member's spec */
            vla_cli_ref_spec(&rc, &sp, &rs);
            rs.taps = VLA_TAP_O;
            rs.on_step = on_step;
            rs.ctx = &tr;
            refbad = vla_engine_new(&ref, &rs, refwhy, sizeof refwhy) != 0;
        }
        if (!w->failed && w->nck && w->cks[w->nck - 1] > tend)
            tend = w->cks[w->nck - 1];
    }
    long t = 0;
    while (!refbad && t < tend) {
        long next = tend;
        for (int k = 0; k < n; k++)
            if (!mb[k].failed && mb[k].ci < mb[k].nck && mb[k].cks[mb[k].ci] < next)
                next = mb[k].cks[mb[k].ci];
        long to = t + WIN < next ? t + WIN : next;
        if (vla_engine_advance(ref, to)) {
            snprintf(refwhy, sizeof refwhy, "%s", vla_engine_error(ref));
            refbad = 1;
            break;
        }
        for (int k = 0; k < n; k++) { /* the window's read-outs, step by step */
            member_t *w = &mb[k];
            if (w->failed || w->ci >= w->nck)
                continue;
            if (vla_engine_advance(w->m, to)) {
                snprintf(w->err, w->errlen, "%s", vla_engine_error(w->m));
                w->failed = 1;
                continue;
            }
            double *cv = w->curve + w->ci * NQ;
            long upto = to; /* every step with its read-out, in step order (an unfinished chunk
                             * waits for its end, the reference's read-outs kept in the ring) */
            for (int h = 0; h < nr; h++) {
                long s;
                for (s = w->done; s < to; s++) { /* s: step s + 1 */
                    double e;
                    const size_t slot = (size_t)h * RING + (size_t)(s % RING);
                    const double *om = w->tm.o + slot * dv, *oref = tr.o + slot * dv;
                    result *r = &w->res[h];
                    int zero = 1, finite = 1;
                    if (!w->tm.seen[slot]) {
                        if ((s / w->tm.C + 1) * w->tm.C > to) /* its chunk ends after the */
                            break;                            /* window: its read-outs then */
                        continue; /* a backend that hands over a chunk's last read-out only */
                    }
                    for (int j = 0; j < dv; j++)
                        zero &= om[j] == 0, finite &= isfinite(om[j]) != 0;
                    if (!finite && !r->nonfinite)
                        r->nonfinite = s + 1;
                    if (zero && vla_fro(oref, dv) > 0 && !r->nzero++)
                        r->ozero = s + 1;
                    passed(r, QO, e = relerr(om, oref, dv), s + 1);
                    if (!(e <= cv[QO]))
                        cv[QO] = e;
                }
                if (s < upto)
                    upto = s;
            }
            w->done = upto;
        }
        t = to;
        for (int k = 0; k < n; k++) { /* the checkpoint's measures of the state, where it is one */
            member_t *w = &mb[k];
            if (w->failed || w->ci >= w->nck || w->cks[w->ci] != t)
                continue;
            vla_engine *m = w->m;
            double *cv = w->curve + w->ci++ * NQ;
            for (int h = 0; h < nr; h++) {
                result *r = &w->res[h];
                vla_engine_get(m, h, VLA_Q_S, x);
                vla_engine_get(ref, h, VLA_Q_S, y);
                passed(r, QS, relerr(x, y, (long)d * dv), t);
                if (hasA) {
                    vla_engine_get(m, h, VLA_Q_A, x);
                    vla_engine_get(ref, h, VLA_Q_A, y);
                    passed(r, QA, relerr(x, y, (long)d * d), t);
                    /* the smallest eigenvalue of A's symmetric part, as vla-drift's lambda_min */
                    if (!r->notpd && (vref_sym_eig(x, d, lam) || !(lam[0] > 0)))
                        r->notpd = t;
                }
                if (!r->nonfinite && !vla_cli_run_finite(m, h, x))
                    r->nonfinite = t;
                /* stagnation: under half of A's diagonal moved over the window (vla-drift's
                 * a_moved_diag; README "Where round-to-nearest stagnates") */
                if (r->steps && !r->stagnant && 2 * r->moved < (long)d * r->steps)
                    r->stagnant = t;
                r->moved = r->steps = 0;
                vla_counts cn;
                vla_engine_counts(m, h, &cn);
                r->guards = cn.guard;
                if (cn.guard && !r->guard_t)
                    r->guard_t = t;
                if (w->cfg->normalize && vla_engine_get(m, h, VLA_Q_N, x) == 0 &&
                    vla_engine_get(ref, h, VLA_Q_N, y) == 0) {
                    double e = relerr(x, y, d);
                    r->nerr = e > r->nerr || e != e ? e : r->nerr;
                    r->nsum = 0;
                    for (int j = 0; j < d; j++)
                        r->nsum += fabs(x[j]);
                }
            }
            /* the figure's curves: the worst run at the checkpoint (o: over the window's steps) */
            for (int q = QS; q <= QA; q++)
                for (int h = 0; h < nr && !(q == QA && !hasA); h++) {
                    vla_quantity qq = q == QS ? VLA_Q_S : VLA_Q_A;
                    long len = q == QS ? (long)d * dv : (long)d * d;
                    vla_engine_get(m, h, qq, x);
                    vla_engine_get(ref, h, qq, y);
                    double e = relerr(x, y, len);
                    if (!(e <= cv[q]))
                        cv[q] = e;
                }
        }
    }
    for (int k = 0; k < n; k++) {
        if (refbad && !mb[k].failed)
            mb[k].failed = 1, snprintf(mb[k].err, mb[k].errlen, "%s", refwhy);
        vla_engine_free(mb[k].m);
        free(mb[k].tm.o);
        free(mb[k].tm.seen);
    }
    vla_engine_free(ref);
    free(x);
    free(y);
    free(lam);
    free(tr.o);
    free(tr.seen);
}

/* res[0] becomes the worst of the runs: the earliest steps, the largest errors; *head the run
 * where the read-out first went to zero, else non-finite */
static void merge(result *res, int nr, int *head)
{
    *head = 0;
    for (int h = 1; h < nr; h++) {
        result *r = &res[h], *w = &res[0];
        for (int q = 0; q < NQ; q++) {
            if (!(r->worst[q] <= w->worst[q]))
                w->worst[q] = r->worst[q];
            for (int k = 0; k < NTHR; k++)
                if (r->first[q][k] && (!w->first[q][k] || r->first[q][k] < w->first[q][k]))
                    w->first[q][k] = r->first[q][k];
        }
        if (r->ozero && (!w->ozero || r->ozero < w->ozero))
            *head = h;
        else if (!w->ozero && r->nonfinite && (!w->nonfinite || r->nonfinite < w->nonfinite))
            *head = h;
        long *a[] = {&r->nonfinite, &r->ozero, &r->notpd, &r->stagnant, &r->guard_t};
        long *b[] = {&w->nonfinite, &w->ozero, &w->notpd, &w->stagnant, &w->guard_t};
        for (int k = 0; k < 5; k++)
            if (*a[k] && (!*b[k] || *a[k] < *b[k]))
                *b[k] = *a[k];
        w->guards += r->guards;
        w->nzero += r->nzero;
        if (r->nsum > w->nsum)
            w->nsum = r->nsum;
        if (!(r->nerr <= w->nerr))
            w->nerr = r->nerr;
    }
}

/* ---- the rows ---- */
typedef struct {
    vla_config cfg;
    char way[48], form[32]; /* cfg's way of tracking ("cg:8") and form ("chunk:64") */
    char name[120];         /* "vla3 f16 sm", and the form unless seq: "la f16 sm chunk:64" */
    int ran, fail, head, refused; /* refused: by the form or the way (vla_form_check, ...) */
    int fi;                 /* its form's place in --forms */
    long *cks, nck;         /* its checkpoints: a chunk form's rounded down to multiples of C */
    double *curve;          /* the worst head's errors at each checkpoint (check_one) */
    result r;
    char skip[300];
    char cause[5][400];
    int ncause;
} row_t;

static void add_cause(row_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_cause(row_t *w, const char *fmt, ...)
{
    if (w->ncause == 5)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->cause[w->ncause++], sizeof w->cause[0], fmt, ap);
    va_end(ap);
}

/* the verdict and what the harness knows of the causes (docs/math.md, the README, trace.md) */
static void judge(row_t *w, double threshold)
{
    const result *r = &w->r;
    const vla_config *cfg = &w->cfg;
    vla_fmt st = vla_prec_storage(cfg->prec), cp = vla_prec_compute(cfg->prec);
    w->fail = r->nonfinite || r->ozero || !(r->worst[QS] < threshold) ||
              !(r->worst[QO] < threshold);
    /* the denominator overflowed when it is within reach of the largest number: n . phi(q) <=
     * ||n||_1 max phi(q) (an underflow also gives 0, from small numbers) */
    if (r->ozero && cfg->normalize && r->nsum >= vla_fmt_max(cp) / 100)
        add_cause(w, "the read-out is exactly 0 at %ld steps, first at t = %ld (head %d): its "
                     "denominator n . phi(q) grows like t (||n||_1 = %.6g at the end) and "
                     "overflows %s's largest number %.6g, so o = S phi(q) / Inf = 0 while every "
                     "stored number stays finite (docs/trace.md's worked example); a policy "
                     "computing in binary32 keeps it finite",
                  r->nzero, r->ozero, w->head, r->nsum, vla_fmt_name(cp), vla_fmt_max(cp));
    else if (r->ozero)
        add_cause(w, "the read-out is exactly 0 at %ld steps, first at t = %ld (head %d), while "
                     "the reference's is not", r->nzero, r->ozero, w->head);
    if (r->nonfinite)
        add_cause(w, "a number overflowed %s (largest %.6g) at t = %ld (head %d): the state or the "
                     "read-out holds Inf or NaN from there on",
                  vla_fmt_name(cp), vla_fmt_max(cp), r->nonfinite, w->head);
    if (!(r->nerr < threshold))
        add_cause(w, "the normalizer n, the running sum of phi(k), is off by %.3g at worst: once "
                     "its entries are about 1/u times a step's phi(k) (u = %g in %s) the additions "
                     "round away and n stops growing, so the read-out's denominator is too small",
                  r->nerr, vla_fmt_unit_roundoff(st), vla_fmt_name(st));
    else if (w->fail && !r->ozero && !r->nonfinite &&
             (cfg->track == VLA_TRACK_CG || cfg->track == VLA_TRACK_CHEB))
        add_cause(w, "the error passed %g (S %.3g, o %.3g at worst): the reference solves M y = x "
                     "exactly (track solve), and %s's iterations stop short of it: the error is "
                     "the iteration's as much as the rounding's (vla-drift's x_err measures it)",
                  threshold, r->worst[QS], r->worst[QO], w->way);
    else if (w->fail && !r->ozero && !r->nonfinite && !(r->worst[QS] < threshold) &&
             r->first[QS][0] && r->first[QS][1] > r->first[QS][0])
        add_cause(w, "the state's error grew from 1e-3 at t = %ld to 1e-1 at t = %ld (S %.3g, o "
                     "%.3g at worst): rounding in %s (u = %g) accumulating over the steps",
                  r->first[QS][0], r->first[QS][1], r->worst[QS], r->worst[QO], vla_fmt_name(st),
                  vla_fmt_unit_roundoff(st));
    else if (w->fail && !r->ozero && !r->nonfinite && !(r->worst[QS] < threshold) &&
             r->first[QS][1])
        add_cause(w, "the state's error passed 1e-3 and 1e-1 at once, at t = %ld (S %.3g, o %.3g "
                     "at worst; u = %g in %s): a step's own error, not an accumulation",
                  r->first[QS][1], r->worst[QS], r->worst[QO], vla_fmt_unit_roundoff(st),
                  vla_fmt_name(st));
    else if (w->fail && !r->ozero && !r->nonfinite && !(r->worst[QS] < threshold))
        add_cause(w, "the state's error reached %.3g at worst, past the threshold %g (o %.3g; u = "
                     "%g in %s)", r->worst[QS], threshold, r->worst[QO],
                  vla_fmt_unit_roundoff(st), vla_fmt_name(st));
    else if (w->fail && !r->ozero && !r->nonfinite)
        add_cause(w, "the read-out's error reached %.3g at worst, past the threshold %g, while the "
                     "state's stayed below %.3g: with S that accurate, o = S x has a large relative "
                     "error only where it is small against ||S|| ||x|| (a read-out near 0)",
                  r->worst[QO], threshold, r->worst[QS]);
    /* vla3's A_t is about (lambda0 + t / d^2)^-1 I: its diagonal stalls near 1/u - lambda0 d^2 */
    double onset = 1 / vla_fmt_unit_roundoff(st) - cfg->lambda0 * cfg->d * cfg->d;
    char pred[120] = "";
    if (cfg->model == VLA_VLA3 && onset > 0)
        snprintf(pred, sizeof pred, ", near t = 1/u - lambda0 d^2 = %.0f", onset);
    if (r->stagnant)
        add_cause(w, "A stagnates from t = %ld: under half of its diagonal still moves, the updates "
                     "falling below half an ulp of %s and rounding away (README, 'Where "
                     "round-to-nearest stagnates'%s)",
                  r->stagnant, vla_fmt_name(st), pred);
    if (r->notpd)
        add_cause(w, "A is no longer positive definite at t = %ld (the smallest eigenvalue of its "
                     "symmetric part is <= 0 or not a number; vla-drift measures it over time)",
                  r->notpd);
    if (r->guards)
        add_cause(w, "the guard fired %ld times from t = %ld (%s)", r->guards, r->guard_t,
                  cfg->model == VLA_VLA3 ? "delta floored at stab_eps"
                                         : "update skipped, A += eps_g I");
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* a list option's items (list.h), or a usage error naming the option */
static int split(const vla_cli_spec *spec, const char *opt, const char *list, char *items, int max,
                 size_t len)
{
    char why[300];
    int n = vla_list_split(list, items, max, len, why, sizeof why);
    if (n < 0)
        vla_cli_die(spec, "--%s: %s", opt, why);
    return n;
}

/* every name of a comma-separated list must be one of the library's list */
static void check_list(const vla_cli_spec *spec, const char *opt, const char *list, vla_list which)
{
    char items[64][48];
    int n = list ? split(spec, opt, list, items[0], 64, sizeof items[0]) : 0;
    for (int i = 0; i < n; i++) {
        const char *p = items[i];
        int bad;
        if (which == VLA_LIST_MODEL) {
            vla_model_kind k;
            bad = vla_model_parse(p, &k);
        } else if (which == VLA_LIST_PREC) {
            vla_prec k;
            bad = vla_prec_parse(p, &k);
        } else {
            vla_track k;
            bad = vla_track_parse(p, &k);
        }
        if (bad)
            vla_cli_die(spec, "--%s: unknown '%s' (%s)", opt, p, vla_names(which));
    }
}

static void cell_t(long t, double *v, const char **name)
{
    *v = (double)t;
    *name = t ? NULL : "never";
}

static void md_t(FILE *f, long t)
{
    if (t)
        fprintf(f, " %ld |", t);
    else
        fprintf(f, " - |");
}

/* the file's name in its folder: the report links its figure from beside it */
static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Text from a path or a name, as Markdown shows it and nothing more: no raw HTML, no heading, no
 * link, no table cell of its own (every character Markdown gives a meaning to is escaped with a
 * backslash; a control character, a line break among them, is shown as '?') */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f)
            fputc('?', f);
        else {
            if (strchr("\\`*_{}[]<>#|~&", ch))
                fputc('\\', f);
            fputc(ch, f);
        }
    }
}

/* a link's destination: a file name beside the report, percent-encoded */
static void md_link(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || strchr("-._~", ch))
            fputc(ch, f);
        else
            fprintf(f, "%%%02X", ch);
    }
}

/* the command as typed, in a fenced code block: a fence longer than any run of backticks in it,
 * each argument quoted as a POSIX shell reads it back (a control character shown as '?') */
static void md_command(FILE *f, int argc, char **argv)
{
    int fence = 3;
    for (int i = 0; i < argc; i++)
        for (const char *p = argv[i]; *p;) {
            int n = 0;
            while (p[n] == '`')
                n++;
            fence = n >= fence ? n + 1 : fence;
            p += n ? n : 1;
        }
    for (int k = 0; k < fence; k++)
        fputc('`', f);
    fputc('\n', f);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int bare = *a != 0;
        for (const char *p = a; *p && bare; p++)
            bare = isalnum((unsigned char)*p) || strchr("@%+=:,./-_", *p);
        fputs(i ? " " : "", f);
        if (!bare)
            fputc('\'', f);
        for (const char *p = a; *p; p++) {
            unsigned char ch = (unsigned char)*p;
            if (ch == '\'' && !bare)
                fputs("'\\''", f);
            else
                fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, f);
        }
        if (!bare)
            fputc('\'', f);
    }
    fputc('\n', f);
    for (int k = 0; k < fence; k++)
        fputc('`', f);
    fputc('\n', f);
}

/* the figure's gnuplot script, drawing into png: one panel per model, one line per precision (and
 * way) */
static void report_gp(FILE *f, const char *png, const char *dat, const vla_cli *c, const row_t *rows,
                      int nrows)
{
    int nm = 0, mods[VLA_NMODEL];
    for (int k = 0; k < VLA_NMODEL; k++)
        for (int i = 0; i < nrows; i++)
            if (rows[i].ran && rows[i].cfg.model == (vla_model_kind)k) {
                mods[nm++] = k;
                break;
            }
    int cols = nm < 3 ? nm : 3, prow = (nm + cols - 1) / (cols ? cols : 1);
    char title[4300];
    snprintf(title, sizeof title, "%s: %d heads x %ld steps (worst head)", c->stream, c->runs,
             c->steps);
    fprintf(f, "# vla-check's figure: the read-out's error against t, one panel per model\n"
               "set terminal pngcairo size %d,%d font 'DejaVu Sans,10'\nset output ",
            560 * (cols ? cols : 1), 360 * (prow ? prow : 1));
    vla_gp_path(f, png);
    fprintf(f, "\nset logscale xy\nset format y '10^{%%L}'\nset xlabel 't'\n"
               "set ylabel '||o - o_{ref}|| / ||o_{ref}||'\nset key outside right top font ',7'\n"
               "set yrange [1e-17:10]\nset xrange [1:%ld]\nset multiplot layout %d,%d title ",
            c->steps, prow ? prow : 1, cols ? cols : 1);
    vla_gp_str(f, title);
    fprintf(f, " noenhanced\n");
    for (int p = 0; p < nm; p++) {
        fprintf(f, "set title '%s'\nplot", vla_model_name((vla_model_kind)mods[p]));
        int b = 0, first = 1;
        for (int i = 0; i < nrows; i++) {
            if (!rows[i].ran)
                continue;
            if (rows[i].cfg.model == (vla_model_kind)mods[p]) {
                /* a colour per precision, a dash per form; the title: the row's name without its
                 * model, the panel's */
                fprintf(f, "%s ", first ? "" : ",");
                vla_gp_path(f, dat);
                fprintf(f, " index %d using 1:($4 > 0 ? $4 : 1e-17) with lines lw 2 lc %d dt %d "
                           "title '%s'", b, (int)rows[i].cfg.prec + 1, rows[i].fi + 1,
                        rows[i].name + strlen(vla_model_name(rows[i].cfg.model)) + 1);
                first = 0;
            }
            b++;
        }
        fprintf(f, ", 1 with lines dt 2 lc 'gray' notitle\n");
    }
    fprintf(f, "unset multiplot\n");
}

/* The report's files, PREFIX.md, PREFIX-errors.dat, PREFIX.gp and PREFIX.png, are refused before
 * any work when they cannot be written as the table is (a FIFO, a device, a directory), are the
 * table or an input, or cannot be named in a gnuplot script: 0, else 2 after the message. */
static int report_paths_ok(const char *prefix, const vla_cli *c)
{
    static const char *const ext[] = {".md", "-errors.dat", ".gp", ".png"};
    char why[200], in[4200];
    if (!*prefix || prefix[strlen(prefix) - 1] == '/') {
        fprintf(stderr, "vla-check: --report '%s': a prefix of file names is needed (PREFIX.md, "
                        "...), not %s (try --help)\n", prefix, *prefix ? "a folder" : "nothing");
        return 2;
    }
    if (vla_gp_path_bad(prefix, why, sizeof why)) {
        fprintf(stderr, "vla-check: --report: %s (try --help)\n", why);
        return 2;
    }
    struct stat so, sr;
    int have_out = strcmp(c->out, "-") && stat(c->out, &so) == 0;
    for (int i = 0; i < 4; i++) {
        char path[4200], *target;
        const char *kind;
        snprintf(path, sizeof path, "%s%s", prefix, ext[i]);
        int e = vla_file_target(path, &target, &kind);
        if (e == VLA_EINVAL) {
            fprintf(stderr, "vla-check: --report: cannot write %s: it is %s (a report goes to "
                            "regular files)\n", path, kind);
            return 2;
        }
        free(target);
        if (vla_cli_is_input(c, path, in, sizeof in)) {
            fprintf(stderr, "vla-check: --report: %s is the input %s; a report never replaces "
                            "its inputs\n", path, in);
            return 2;
        }
        if (!strcmp(path, c->out) ||
            (have_out && stat(path, &sr) == 0 && sr.st_dev == so.st_dev && sr.st_ino == so.st_ino)) {
            fprintf(stderr, "vla-check: --report: %s is the table (--out %s)\n", path, c->out);
            return 2;
        }
    }
    return 0;
}

/* one file of the report, written whole from the text of a memory stream (NULL: it could not be
 * made), which is freed: 0, else 1 after the message */
static int report_write(const char *path, char *text, size_t len)
{
    const char *kind = "";
    int e = !text ? VLA_ENOMEM : vla_file_write_whole(path, text, len, &kind);
    if (e)
        fprintf(stderr, "vla-check: cannot write %s: %s\n", path,
                e == VLA_EINVAL ? kind : e == VLA_ENOMEM ? "out of memory" : strerror(errno));
    free(text);
    return e ? 1 : 0;
}

static int write_report(const char *prefix, const vla_cli *c, const opts_t *o, const row_t *rows,
                        int nrows, long nck, const char *files, const char *outname)
{
    char path[4200], dat[4200], png[4200], gp[4200];
    snprintf(path, sizeof path, "%s.md", prefix);
    snprintf(dat, sizeof dat, "%s-errors.dat", prefix);
    snprintf(png, sizeof png, "%s.png", prefix);
    snprintf(gp, sizeof gp, "%s.gp", prefix);
    /* the figure's data: one block per row that ran, the worst head at each checkpoint */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        fprintf(f, "# vla-check: the worst head's relative error against the reference at each "
                   "checkpoint\n# stream: ");
        for (const char *p = c->stream; *p; p++) /* a header line stays one line */
            fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
        fprintf(f, "\n# columns: t s_relerr a_relerr o_relerr\n");
        int nb = 0;
        for (int i = 0; i < nrows; i++) {
            if (!rows[i].ran)
                continue;
            const row_t *w = &rows[i];
            fprintf(f, "%s# block %d: %s\n", nb ? "\n\n" : "", nb, w->name);
            for (long k = 0; k < w->nck; k++)
                fprintf(f, "%ld %.6g %.6g %.6g\n", w->cks[k], w->curve[k * NQ + QS],
                        w->curve[k * NQ + QA], w->curve[k * NQ + QO]);
            nb++;
        }
        if (fclose(f))
            free(text), text = NULL;
    }
    if (report_write(dat, text, len))
        return 1;
    /* the script as written beside the report draws into PREFIX.png; the one run now draws into a
     * temporary beside it, renamed onto it once drawn */
    text = NULL;
    if ((f = open_memstream(&text, &len))) {
        report_gp(f, png, dat, c, rows, nrows);
        if (fclose(f))
            free(text), text = NULL;
    }
    if (report_write(gp, text, len))
        return 1;
    char *target = NULL, *tmp = NULL;
    const char *kind;
    FILE *tf = NULL;
    int fig = vla_file_target(png, &target, &kind) == 0 && (tmp = vla_file_tmp_name(target)) &&
              (tf = vla_file_create(tmp)) && (f = open_memstream(&text, &len));
    if (tf)
        fclose(tf);
    if (fig) {
        report_gp(f, tmp, dat, c, rows, nrows);
        fclose(f);
        fig = vla_gnuplot(text, len, 1) == 0 && vla_file_replace(tmp, target, &kind) == 0;
        free(text);
    }
    if (tmp && !fig)
        unlink(tmp);
    free(tmp);
    free(target);
    if (!fig)
        fprintf(stderr, "vla-check: warning: gnuplot could not draw %s (is gnuplot installed?); "
                        "the report goes without its figure\n", png);
    if (!(f = open_memstream(&text, &len)))
        return report_write(path, NULL, 0);
    fprintf(f, "# vla-check: ");
    md_text(f, c->stream);
    fprintf(f, "\n\n%d heads x %ld steps, d = %d, dv = %d; ", c->runs, c->steps, c->cfg.d,
            c->cfg.dv);
    md_text(f, files);
    fprintf(f, ". Each row runs one model in one "
               "precision policy, way of tracking A and form (");
    md_text(f, o->forms);
    fprintf(f, ") over every head, against binary64 "
               "in the sequential form (lib, on the same inputs "
               "rounded to the policy's storage format); the f64 rows against the exact reference "
               "(MPFR, %ld bits). The error of S and A is measured at %ld log-spaced checkpoints, "
               "that of the read-out o at every step (a chunk form's too: every token's read-out, "
               "which the chunk computes at its end); a step is the first at which the worst head's "
               "error passed the threshold (- : never). A row fails when anything went non-finite, "
               "the read-out went to exactly 0, or the error of S or o reached %g (--threshold).\n\n",
            c->ref_bits, nck, o->threshold);
    fprintf(f, "| model | precision | way | form | S 1e-3 | S 1e-1 | S 1 | A 1e-3 | A 1e-1 | A 1 | "
               "o 1e-3 | o 1e-1 | o 1 | max err S | max err o | non-finite | o = 0 | A not PD | "
               "stagnation | guards | verdict |\n|");
    for (int k = 0; k < 21; k++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (int i = 0; i < nrows; i++) {
        const row_t *w = &rows[i];
        if (!w->ran)
            continue;
        fprintf(f, "| %s | %s | %s | %s |", vla_model_name(w->cfg.model),
                vla_prec_name(w->cfg.prec), w->way, w->form);
        for (int q = 0; q < NQ; q++)
            for (int k = 0; k < NTHR; k++)
                md_t(f, w->r.first[q][k]);
        fprintf(f, " %.3g | %.3g |", w->r.worst[QS], w->r.worst[QO]);
        md_t(f, w->r.nonfinite);
        md_t(f, w->r.ozero);
        md_t(f, w->r.notpd);
        md_t(f, w->r.stagnant);
        fprintf(f, " %ld | %s |\n", w->r.guards, w->fail ? "**FAIL**" : "ok");
    }
    fprintf(f, "\n## Causes\n\n");
    int any = 0;
    for (int i = 0; i < nrows; i++)
        for (int k = 0; k < rows[i].ncause; k++, any++) {
            fprintf(f, "- **%s**: ", rows[i].name);
            md_text(f, rows[i].cause[k]);
            fprintf(f, ".\n");
        }
    for (int i = 0; i < nrows; i++)
        if (!rows[i].ran) {
            fprintf(f, "- **%s** %s: ", rows[i].name, rows[i].refused ? "is refused" : "did not run");
            md_text(f, rows[i].skip);
            fprintf(f, ".\n");
            any++;
        }
    if (!any)
        fprintf(f, "Nothing to report: every row stayed finite and under every threshold.\n");
    if (fig) {
        fprintf(f, "\n## The read-out's error\n\n![the read-out's error against t](");
        md_link(f, base(png));
        fprintf(f, ")\n\nThe worst head's relative error of o at each checkpoint, one panel per "
                   "model; the dashed line is 1 (the read-out is as large as its error). The "
                   "curves' numbers are in ");
        md_text(f, base(dat));
        fprintf(f, ".\n");
    }
    fprintf(f, "\nThe verdict table: ");
    md_text(f, outname);
    fprintf(f, ". The command:\n\n");
    md_command(f, c->argc, c->argv);
    if (fclose(f))
        free(text), text = NULL;
    return report_write(path, text, len);
}

/* what a configuration's reference is, in words: rows with the same key share one run of it */
static void ref_key(const vla_cli *c, const vla_config *cfg, char *key, size_t len)
{
    vla_cli rc = *c;
    rc.ref = cfg->prec == VLA_F64 ? REF_EXACT : REF_F64;
    vla_engine_spec sp, rs;
    char desc[1024];
    vla_cli_engine_spec(&rc, cfg, &sp);
    vla_cli_ref_spec(&rc, &sp, &rs);
    vla_config_describe(&rs.cfg, desc, sizeof desc);
    snprintf(key, len, "%s %d %ld %s", vla_backend_name(rs.backend), (int)rs.round_inputs,
             rs.ref_bits, desc);
}

int main(int argc, char **argv)
{
    static opts_t o = {.threshold = 0.1, .report = "vla-check", .forms = "seq,chunk:64"};
    static const vla_cli_opt own[] = {
        {"models", "LIST", "models to check, comma-separated, or all (default: the trace's model, "
                           "named by its model.txt, or --model's; else every model of the list)"},
        {"precisions", "LIST", "precision policies to check (default: every policy of the list)"},
        {"tracks", "LIST", "ways of tracking A to check for the models that have A, comma-separated, "
                           "the solver ways with their K (sm,chol,cg:8,cheb:16; default: --track's); "
                           "all: every way of the list that the model allows"},
        {"forms", "LIST", "the forms your kernel computes, comma-separated: seq, chunk:C, scan "
                          "(default seq,chunk:64; docs/forms.md); a configuration a form refuses "
                          "(the nudge inside a chunk, ...) is a row that says why"},
        {"threshold", "X", "a row fails when the relative error of S or o reaches X (default 0.1), "
                           "or a value goes non-finite, or the read-out goes to exactly 0"},
        {"require", "LIST", "precisions that must not fail: exit 1 when a row of one of them fails "
                            "(a gate for CI)"},
        {"report", "PREFIX", "write PREFIX.md (the report), PREFIX.png (its figure, by gnuplot), "
                             "PREFIX-errors.dat and PREFIX.gp (default vla-check); none: no report"},
        {NULL, NULL, NULL},
    };
    static const vla_cli_spec spec = {
        .prog = "vla-check",
        .phrase = "check your own model's inputs in every model and precision",
        .summary =
            "vla-check STREAM runs the trace's model (the one its model.txt names; --model M or\n"
            "--models LIST say otherwise, --models all every model of the list, the default for a\n"
            "trace without model.txt and for a synthetic stream) in every precision policy (the\n"
            "kernels' f16-kern and bf16-kern too) and every form of --forms (the sequential\n"
            "recurrence, and the chunk:C or scan form your kernel computes) over all heads and all\n"
            "steps of STREAM (trace:DIR: your model's q, k, v, ...; docs/trace.md, FILES below), each\n"
            "against binary64 on the same rounded inputs in the sequential form (the f64 rows against\n"
            "the exact MPFR reference), and prints a verdict table: per model x way x form x\n"
            "precision, the first t at which the relative error of S, A and o passed 1e-3, 1e-1 and\n"
            "1, the first t of a non-finite value, of a read-out that is exactly 0 (its denominator\n"
            "overflowed), of A losing positive definiteness, of A's stagnation, and the guard events;\n"
            "the causes the harness knows go to the report and stderr. It writes a Markdown report\n"
            "with one figure, and exits 1 when a precision named by --require fails (--threshold). A\n"
            "configuration that a form or a way refuses (vla3's nudge every 20 steps inside a chunk\n"
            "of 64, a solver way with the nudge on) is listed in the header as refused, with the\n"
            "reason; the rows run in parallel (OMP_NUM_THREADS). No checkpoint files (--resume is\n"
            "refused): an interrupted check starts over.",
        .columns = "  model prec track form  the row: a model, a precision policy, a way of tracking A\n"
                   "            (its K: cg:8), a form (chunk:64: the steps and checkpoints rounded down\n"
                   "            to multiples of C, o measured at every token of each chunk)\n"
                   "  s_1e-3 s_1e-1 s_1  the first t at which ||S - S_ref||_F / ||S_ref||_F passed\n"
                   "            1e-3, 1e-1, 1 in the worst head (at the checkpoints); never: it did not\n"
                   "  a_1e-3 a_1e-1 a_1  the same for A (never for la and delta)\n"
                   "  o_1e-3 o_1e-1 o_1  the same for the read-out o, at every step\n"
                   "  s_max a_max o_max  the largest error seen\n"
                   "  nonfinite  the first t at which S, A or o held Inf or NaN\n"
                   "  o_zero    the first t at which o was exactly 0 while the reference's was not\n"
                   "  not_pd    the first checkpoint at which A's symmetric part was not positive\n"
                   "            definite\n"
                   "  stagnation  the first checkpoint after which under half of A's diagonal moved\n"
                   "  guard     guard events, all heads\n"
                   "  verdict   ok or FAIL (non-finite, o = 0, or an error of S or o >= --threshold)",
        .example = "vla-check trace:mytrace --require bf16 --threshold 0.05\n"
                   "vla-check trace:mytrace --models vla3 --forms chunk:64 --set period=64 "
                   "--precisions f16-kern,bf16-kern --require bf16-kern\n"
                   "vla-check trace:mytrace --models vla3 --tracks sm,cg:8,cheb:8 --set nudge=off",
        .default_steps = 2000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_EXACT,
        .many_models = 1,
        .opts = own,
        .on_opt = on_opt,
        .ctx = &o,
    };
    /* STREAM may come as a word of its own: it is --stream STREAM */
    char **av = malloc((size_t)(argc + 2) * sizeof *av);
    int ac = 0, have_stream = 0, have_ck = 0;
    if (!av)
        return 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int takes = 0;
        if (i && !strncmp(a, "--", 2)) {
            for (const vla_cli_opt *p = own; p->name; p++)
                takes |= !strcmp(p->name, a + 2) && p->arg;
            for (const vla_cli_opt *p = vla_cli_common(); p->name; p++)
                takes |= !strcmp(p->name, a + 2) && p->arg;
            have_stream |= !strcmp(a, "--stream");
            have_ck |= !strcmp(a, "--checkpoints");
        } else if (i && !have_stream) {
            av[ac++] = "--stream";
            have_stream = 1;
        }
        av[ac++] = argv[i];
        if (takes && i + 1 < argc)
            av[ac++] = argv[++i];
    }
    av[ac] = NULL;
    int help = 0;
    for (int i = 1; i < argc; i++)
        help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "--man") ||
                !strcmp(argv[i], "--version");
    if (!have_stream && !help)
        vla_cli_die(&spec, "which inputs? give trace:DIR (your model's q.npy, k.npy, v.npy) or a "
                           "stream such as lmlike");
    vla_cli c;
    vla_cli_parse(&c, &spec, ac, av);
    c.argc = argc; /* the command as typed, for the report */
    c.argv = argv;
    if (!have_ck)
        c.per_decade = 100; /* the first steps past a threshold to 2% */
    if (c.cfg.form != VLA_FORM_SEQ)
        vla_cli_die(&spec, "--form: vla-check takes its forms from --forms (a list)");
    if (c.resume)
        vla_cli_die(&spec, "--resume: vla-check writes no checkpoints (an interrupted check starts "
                           "over)");
    /* the models: --models', else the trace's (model.txt) or --model's, else every one */
    if (o.models && c.model_opt)
        vla_cli_die(&spec, "--model and --models: give one of them (--model M means --models M)");
    const char *how = !o.models ? "the default" : strcmp(o.models, "all") ? "--models"
                                                                           : "--models all";
    if (o.models && !strcmp(o.models, "all"))
        o.models = NULL;
    else if (!o.models && (c.model_txt || c.model_opt))
        o.models = vla_model_name(c.cfg.model), how = NULL;
    check_list(&spec, "models", o.models, VLA_LIST_MODEL);
    check_list(&spec, "precisions", o.precs, VLA_LIST_PREC);
    check_list(&spec, "require", o.require, VLA_LIST_PREC);
    for (int p = 0; o.require && p < VLA_NPREC; p++)
        if (in_list(o.require, vla_prec_name((vla_prec)p)) && o.precs &&
            !in_list(o.precs, vla_prec_name((vla_prec)p)))
            vla_cli_die(&spec, "--require %s: not among --precisions %s", vla_prec_name((vla_prec)p),
                        o.precs);
    /* the ways (with their K: cg:4) and the forms, each parsed as --track and --form parse one */
    char ways[VLA_NTRACK * 4][48], forms[MAXFORMS][32];
    int nways = 0, nforms = 0;
    if (!o.tracks) {
        vla_track_spec(&c.cfg, ways[nways++], sizeof ways[0]);
    } else if (!strcmp(o.tracks, "all")) {
        for (int tk = 0; tk < VLA_NTRACK; tk++)
            snprintf(ways[nways++], sizeof ways[0], "%s", vla_track_name((vla_track)tk));
    } else {
        char items[VLA_NTRACK * 4][48];
        int n = split(&spec, "tracks", o.tracks, items[0], VLA_NTRACK * 4, sizeof items[0]);
        for (int i = 0; i < n; i++) {
            vla_config probe = c.cfg;
            if (vla_track_set(&probe, items[i]))
                vla_cli_die(&spec, "--tracks: unknown way '%s' (%s; cg:K, cg:TOL, cheb:K)",
                            items[i], vla_names(VLA_LIST_TRACK));
            vla_track_spec(&probe, ways[nways++], sizeof ways[0]);
        }
    }
    {
        char items[MAXFORMS][32];
        int n = split(&spec, "forms", o.forms, items[0], MAXFORMS, sizeof items[0]);
        for (int i = 0; i < n; i++) {
            vla_config probe = c.cfg;
            if (vla_form_parse(&probe, items[i]))
                vla_cli_die(&spec, "--forms: '%s' is not a form (%s; chunk:C with C a power of "
                                   "two in 1..%d)", items[i], vla_names(VLA_LIST_FORM),
                            VLA_CHUNK_MAX);
            vla_form_name(&probe, forms[nforms++], sizeof forms[0]);
        }
    }

    /* the rows: the lists' models x ways (one for the models without A) x forms x precisions; a
     * configuration a way or a form refuses is a row that says why (with --tracks all, the ways
     * a model does not allow are left out) */
    int cap = VLA_NMODEL * nways * nforms * VLA_NPREC, nrows = 0;
    row_t *rows = calloc((size_t)cap, sizeof *rows);
    int *order = calloc((size_t)cap, sizeof *order);
    if (!rows || !order)
        return 1;
    long nck0 = vla_checkpoints(c.steps, c.per_decade, NULL, 0);
    for (int mk = 0; mk < VLA_NMODEL; mk++) {
        if (o.models && !in_list(o.models, vla_model_name((vla_model_kind)mk)))
            continue;
        for (int wi = 0; wi < (vla_model_has_A((vla_model_kind)mk) ? nways : 1); wi++)
            for (int fi = 0; fi < nforms; fi++)
                for (int p = 0; p < VLA_NPREC; p++) {
                    if (o.precs && !in_list(o.precs, vla_prec_name((vla_prec)p)))
                        continue;
                    row_t *w = &rows[nrows];
                    vla_config *g = &w->cfg;
                    vla_cli_config_for(&c, (vla_model_kind)mk, g);
                    g->prec = (vla_prec)p;
                    if (vla_model_has_A(g->model))
                        vla_track_set(g, ways[wi]);
                    vla_form_parse(g, forms[fi]);
                    vla_track_spec(g, w->way, sizeof w->way);
                    memcpy(w->form, forms[fi], sizeof w->form); /* (both 32 bytes) */
                    w->fi = fi;
                    snprintf(w->name, sizeof w->name, "%s %s %s%s%s", vla_model_name(g->model),
                             vla_prec_name(g->prec), w->way, g->form == VLA_FORM_SEQ ? "" : " ",
                             g->form == VLA_FORM_SEQ ? "" : w->form);
                    const char *why = NULL;
                    const long C = g->form == VLA_FORM_CHUNK ? g->chunk : 1;
                    if (vla_track_check(g, &why)) {
                        if (o.tracks && !strcmp(o.tracks, "all"))
                            continue;
                    } else if (vla_form_check(g, &why) == 0 && C > c.steps) {
                        snprintf(w->skip, sizeof w->skip, "--forms %s: C = %ld exceeds the %ld "
                                 "steps", w->form, C, c.steps);
                        w->refused = 1;
                    }
                    if (!why && !w->refused)
                        why = vla_cli_gates_why(&c, g);
                    if (!why && !w->refused)
                        why = vla_cli_form_input_why(&c, g); /* delta's gates in a chunk */
                    if (!why && !w->refused && p == VLA_F64 && c.ref != REF_EXACT)
                        why = "a binary64 row is measured against the exact reference (--ref "
                              "exact), not against itself or nothing: give --ref exact, or leave "
                              "f64 out of --precisions";
                    if (why) {
                        snprintf(w->skip, sizeof w->skip, "%s", why);
                        w->refused = 1;
                    }
                    /* the checkpoints where the form has a state (multiples of C) */
                    w->cks = malloc((size_t)nck0 * sizeof *w->cks);
                    w->curve = calloc((size_t)nck0 * NQ, sizeof *w->curve);
                    if (!w->cks || !w->curve)
                        return 1;
                    vla_checkpoints(c.steps, c.per_decade, w->cks, nck0);
                    w->nck = vla_checkpoints_form(g, w->cks, nck0);
                    nrows++;
                }
    }
    /* the groups: the rows that share a reference (ref_key), each advanced beside one run of it;
     * the f64 groups first, since their exact reference is the longest work, and the groups run
     * in parallel, each on one thread. order: the rows group by group, from group[g] to
     * group[g + 1] */
    int ngroups = 0, *group = calloc((size_t)cap + 1, sizeof *group);
    char (*key)[1200] = calloc((size_t)cap, sizeof *key);
    int *gof = calloc((size_t)cap, sizeof *gof);
    if (!group || !key || !gof)
        return 1;
    for (int i = 0; i < nrows; i++) {
        gof[i] = -1;
        if (rows[i].refused)
            continue;
        ref_key(&c, &rows[i].cfg, key[i], sizeof key[i]);
        for (int j = 0; j < i && gof[i] < 0; j++)
            if (gof[j] >= 0 && !strcmp(key[i], key[j]))
                gof[i] = gof[j];
        if (gof[i] < 0)
            gof[i] = ngroups++;
    }
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int g = 0; g < ngroups; g++) {
            int first = -1;
            for (int i = 0; i < nrows && first < 0; i++)
                first = gof[i] == g ? i : -1;
            if ((rows[first].cfg.prec == VLA_F64) != !pass)
                continue;
            for (int i = 0; i < nrows; i++)
                if (gof[i] == g)
                    order[k++] = i;
        }
    /* the groups' bounds in order */
    int ng = 0;
    for (int j = 0; j < k; j++)
        if (!j || gof[order[j]] != gof[order[j - 1]])
            group[ng++] = j;
    group[ng] = k;
    free(key);

    /* an unwritable table or report fails now, not after the work; from here SIGINT stops the
     * engines */
    if (strcmp(o.report, "none") && report_paths_ok(o.report, &c))
        return 2;
    vla_dat *out = vla_cli_out(&c, &spec);
    vla_progress prog;
    vla_progress_start(&prog, nrows);
    int done = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int g = 0; g < ng; g++) {
        const int n = group[g + 1] - group[g];
        member_t *mb = calloc((size_t)n, sizeof *mb);
        result *res = calloc((size_t)n * c.runs, sizeof *res);
        for (int j = 0; mb && res && j < n; j++) {
            row_t *w = &rows[order[group[g] + j]];
            mb[j] = (member_t){&w->cfg, w->cks, w->nck, 0, res + (size_t)j * c.runs, w->curve,
                               w->skip, sizeof w->skip, 0, NULL, {0}, 0};
        }
        if (mb && res && !vla_cli_stop)
            check_group(&c, mb, n);
        for (int j = 0; j < n; j++) {
            row_t *w = &rows[order[group[g] + j]];
            if (!mb || !res)
                snprintf(w->skip, sizeof w->skip, "out of memory");
            else if (!mb[j].failed && !vla_cli_stop) {
                w->ran = 1;
                merge(mb[j].res, c.runs, &w->head);
                w->r = mb[j].res[0];
                judge(w, o.threshold);
            }
        }
        free(mb);
        free(res);
#ifdef _OPENMP
#pragma omp critical(check_progress)
#endif
        vla_progress_update(&prog, done += n);
    }
    if (vla_cli_stop) { /* the table closed without its columns line is discarded */
        fprintf(stderr, "vla-check: interrupted (signal %d); nothing written\n", (int)vla_cli_stop);
        return vla_cli_close(out, &c, &spec, 3);
    }
    /* the table */
    char files[600];
    vla_cli_stream_files(&c, files, sizeof files);
    vla_dat_meta(out, how ? "models" : "model", "%s%s", o.models ? o.models : "every model",
                 vla_cli_model_src(&c, how, 1));
    vla_dat_meta(out, "stream", "%s", c.stream);
    vla_dat_meta(out, "files", "%s", files);
    vla_dat_meta(out, "steps", "%ld", c.steps);
    vla_dat_meta(out, "runs", "%d (every head, the worst in each cell)", c.runs);
    vla_dat_meta(out, "backend", "%s", c.backend);
    vla_dat_meta(out, "reference", "f64 (lib in binary64 on the rounded inputs); the f64 rows: "
                                   "exact (MPFR, %ld bits)", c.ref_bits);
    vla_dat_meta(out, "constants", "d=%d dv=%d mode=%s and each model's defaults (--set changes "
                                   "them)", c.cfg.d, c.cfg.dv, c.cfg.mode ? "fast" : "strict");
    vla_dat_meta(out, "threshold", "%g", o.threshold);
    vla_dat_meta(out, "checkpoints", "%ld (S and A measured there; o at every step, in a chunk "
                 "form %s; a chunk form's steps and checkpoints rounded down to multiples of C)",
                 nck0, strcmp(c.backend, "cpu") ? "at each chunk's end (the backend's read-outs)"
                                                : "at every token of each chunk");
    vla_dat_meta(out, "forms", "%s", o.forms);
    for (int mk = 0; mk < VLA_NMODEL; mk++) /* a file a checked model does not read: said */
        for (int i = 0; i < nrows; i++)
            if (rows[i].cfg.model == (vla_model_kind)mk) {
                char unread[600];
                if (vla_cli_unread(&c, &rows[i].cfg, unread, sizeof unread)) {
                    vla_dat_meta(out, "unread", "%s", unread);
                    fprintf(stderr, "vla-check: warning: %s\n", unread);
                }
                break;
            }
    int nfail = 0, gate = 0, nrun = 0, nrefused = 0;
    for (int i = 0; i < nrows; i++) {
        row_t *w = &rows[i];
        if (!w->ran) {
            vla_dat_meta(out, w->refused ? "refused" : "skipped", "%s: %s", w->name, w->skip);
            nrefused += w->refused;
            continue;
        }
        nrun++;
        nfail += w->fail;
        int req = o.require && in_list(o.require, vla_prec_name(w->cfg.prec));
        gate |= req && w->fail;
        for (int k = 0; k < w->ncause; k++)
            vla_dat_meta(out, w->fail ? "FAIL" : "note", "%s: %s", w->name, w->cause[k]);
    }
    /* the summary line (summary.h): what failed, by row; said on stderr below, row by row */
    vla_summary sm = {.len = 0};
    vla_summary_add(&sm, 0, "%d of %d rows fail (threshold %g)", nfail, nrun, o.threshold);
    static const char *const what[3] = {"non-finite", "a read-out exactly 0 (its denominator "
                                        "overflowed)", "an error of S or o past 1"};
    for (int q = 0; q < 3; q++) {
        char names[600] = "";
        int n = 0, count = 0;
        for (int i = 0; i < nrows; i++) {
            const result *r = &rows[i].r;
            int hit = !rows[i].ran ? 0 : q == 0 ? r->nonfinite != 0 : q == 1 ? r->ozero != 0
                      : r->first[QS][NTHR - 1] || r->first[QO][NTHR - 1];
            if (hit && count++ < 6 && n < (int)sizeof names)
                n += snprintf(names + n, sizeof names - n, "%s%s", count > 1 ? ", " : "",
                              rows[i].name);
        }
        if (count)
            vla_summary_add(&sm, 0, "%s in %d: %s%s", what[q], count, names,
                            count > 6 ? ", ..." : "");
    }
    if (nrefused || nrows - nrun - nrefused)
        vla_summary_add(&sm, 0, "%d refused by their form, way or reference, %d did not run (the lines "
                        "above)", nrefused, nrows - nrun - nrefused);
    /* a required precision passes only where rows of it ran: one with none fails the gate */
    char unmet[300] = "";
    for (int p = 0; o.require && p < VLA_NPREC; p++) {
        int ran = 0;
        for (int i = 0; i < nrows; i++)
            ran += rows[i].ran && rows[i].cfg.prec == (vla_prec)p;
        if (in_list(o.require, vla_prec_name((vla_prec)p)) && !ran) {
            size_t n = strlen(unmet);
            snprintf(unmet + n, sizeof unmet - n, "%s%s", n ? ", " : "", vla_prec_name((vla_prec)p));
        }
    }
    if (unmet[0]) {
        gate = 1;
        vla_summary_add(&sm, 1, "--require %s: no row of %s ran, so nothing of it was checked",
                        o.require, unmet);
    }
    vla_cli_summary_end(&sm, spec.prog, out);
    vla_dat_columns(out, COLUMNS);
    for (int i = 0; i < nrows; i++) {
        const row_t *w = &rows[i];
        if (!w->ran)
            continue;
        double v[NCOL];
        const char *nm[NCOL] = {vla_model_name(w->cfg.model), vla_prec_name(w->cfg.prec), w->way,
                                w->form};
        int j = 4;
        for (int q = 0; q < NQ; q++)
            for (int k = 0; k < NTHR; k++, j++)
                cell_t(w->r.first[q][k], &v[j], &nm[j]);
        for (int q = 0; q < NQ; q++)
            v[j++] = w->r.worst[q];
        cell_t(w->r.nonfinite, &v[j], &nm[j]), j++;
        cell_t(w->r.ozero, &v[j], &nm[j]), j++;
        cell_t(w->r.notpd, &v[j], &nm[j]), j++;
        cell_t(w->r.stagnant, &v[j], &nm[j]), j++;
        v[j++] = (double)w->r.guards;
        nm[j++] = w->fail ? "FAIL" : "ok";
        vla_dat_row_named(out, v, nm, NCOL);
    }
    if (vla_cli_close(out, &c, &spec, 0))
        return 1;
    if (strcmp(o.report, "none") &&
        write_report(o.report, &c, &o, rows, nrows, nck0, files,
                     strcmp(c.out, "-") ? c.out : "standard output"))
        return 1;

    /* the summary on stderr: what failed and why, and what did not run, in one line each */
    for (int i = 0; i < nrows; i++)
        if (rows[i].ran && rows[i].fail)
            fprintf(stderr, "vla-check: FAIL %s: %s\n", rows[i].name, rows[i].cause[0]);
        else if (!rows[i].ran)
            fprintf(stderr, "vla-check: %s %s: %s\n", rows[i].refused ? "refused" : "did not run",
                    rows[i].name, rows[i].skip);
    fprintf(stderr, "vla-check: %d of %d rows fail (threshold %g)%s%s%s%s%s\n", nfail, nrun,
            o.threshold, strcmp(o.report, "none") ? "; report: " : "",
            strcmp(o.report, "none") ? o.report : "", strcmp(o.report, "none") ? ".md" : "",
            nrefused ? "; configurations refused by their form, way or reference: the header's '# refused:' "
                       "lines" : "",
            gate ? unmet[0] ? "; a precision of --require had no row that ran: exit 1"
                            : "; a precision of --require failed: exit 1" : "");
    for (int i = 0; i < nrows; i++) {
        free(rows[i].cks);
        free(rows[i].curve);
    }
    free(rows);
    free(order);
    free(group);
    free(gof);
    free(av);
    return gate;
}
