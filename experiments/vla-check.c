/* vla-check: the front door for a user's own inputs (a trace:DIR, or any stream). Runs every model
 * of the library's list in every precision policy of its list (new ones join by themselves) over
 * all heads and the whole trace, each against binary64 (the f64 rows against the exact MPFR
 * reference), and writes a verdict table, a Markdown report with one figure, and exits 1 when a
 * precision named by --require fails the threshold: a gate for a kernel change in a user's CI. */
#include "ckpt.h"
#include "cli.h"
#include "file.h"
#include "gnuplot.h"
#include "judge.h"
#include "list.h"
#include "refrun.h"
#include "report.h"
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

#define COLUMNS                                                                                    \
    "model prec track form s_1e-3 s_1e-1 s_1 a_1e-3 a_1e-1 a_1 o_1e-3 o_1e-1 o_1 s_max a_max "    \
    "o_max nonfinite o_zero not_pd stagnation guard o_window o_window_raw verdict"
#define NCOL 24
/* the read-out's norm-wise error, which decides a row: over windows of OWIN tokens (the judge's
 * default --window), ||o - o_ref|| / ||o_ref|| of the window's read-outs, so that a read-out near
 * 0 weighs as little as it is; o_max and o_1e-3 ... stay pointwise, as columns */
#define OWIN 64
#define MAXFORMS 16

/* what one run (head) of one configuration showed; a step 0 means never */
typedef struct {
    long first[NQ][NTHR]; /* the first step at which the error passed the threshold */
    double worst[NQ];     /* the largest error seen (S and A at the checkpoints, o at every step) */
    long nonfinite, ozero, notpd, stagnant, guard_t;
    long guards, nzero; /* guard events, steps with a zero read-out */
    long sats; /* the state cache's entries clamped at its format's largest (cache_sat) */
    double nsum; /* ||n||_1 at the end: the read-out's denominator, for the cause line */
    double nerr; /* the largest relative error of the normalizer n (la, vla3), for the cause */
    long moved, steps; /* the a_moved_diag window */
    /* the read-out's windowed norm-wise error against the reference (which decides), and
     * against binary64 on the inputs as given, unrounded (what the inputs' rounding adds: a
     * column) */
    struct owin {
        double worst;            /* the largest over the windows (OWIN) */
        double e[OWIN], r[OWIN]; /* the last OWIN steps' ||o - o_ref||^2, ||o_ref||^2 */
        long n;                  /* the steps pushed */
    } win, raw;
} result;

/* step s's read-out om against the reference's oref (dv numbers) into the window w of width
 * len (OWIN, or T when shorter): the window's norm-wise error, once it is full, into w->worst
 * (NaN: the worst) */
static void owin_push(struct owin *w, const double *om, const double *oref, int dv, long len)
{
    double e2 = 0, r2 = 0;
    for (int j = 0; j < dv; j++)
        e2 += (om[j] - oref[j]) * (om[j] - oref[j]), r2 += oref[j] * oref[j];
    w->e[w->n % len] = e2;
    w->r[w->n % len] = r2;
    if (++w->n < len)
        return;
    double a = 0, b = 0;
    for (long i = 0; i < len; i++)
        a += w->e[i], b += w->r[i];
    const double e = a == 0 ? 0 : sqrt(a) / sqrt(b);
    if (!isnan(w->worst) && !(e <= w->worst))
        w->worst = e;
}

typedef struct {
    const char *models, *precs, *tracks, *require, *report, *forms;
    double threshold;
    const char *outputs; /* --outputs DIR2: a kernel's read-outs to judge */
    const char *states;  /* --states DIR2: the states a cache saved, with their positions */
    long window;         /* --window W (0: not given) */
    double slack;        /* --slack F (0: not given) */
    int threshold_given;
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
    else if (!strcmp(name, "outputs") || !strcmp(name, "states")) {
        if (!*val) {
            fprintf(stderr, "vla-check: --%s: a folder is needed (%s), not nothing (try "
                            "--help)\n", name, *name == 'o' ? "o.npy ..." : "states.npy, "
                                                                      "positions.npy");
            return 1;
        }
        *(*name == 'o' ? &o->outputs : &o->states) = val;
    }
    else if (!strcmp(name, "window")) {
        char *end;
        errno = 0;
        o->window = strtol(val, &end, 10);
        if (end == val || *end || errno || o->window < 1) {
            fprintf(stderr, "vla-check: --window: '%s' is not a whole number >= 1 (try --help)\n",
                    val);
            return 1;
        }
    } else if (!strcmp(name, "slack")) {
        char *end;
        o->slack = strtod(val, &end);
        if (end == val || *end || !(o->slack >= 1 && o->slack < INFINITY)) {
            fprintf(stderr, "vla-check: --slack: '%s' is not a number >= 1 (try --help)\n", val);
            return 1;
        }
    } else if (!strcmp(name, "threshold")) {
        char *end;
        o->threshold_given = 1;
        o->threshold = strtod(val, &end);
        if (end == val || *end || !(o->threshold > 0 && o->threshold < INFINITY)) {
            fprintf(stderr, "vla-check: --threshold: '%s' is not a positive number (try --help)\n",
                    val);
            return 1;
        }
    }
    return 0;
}

/* taps_t's moved for the rows: ctx the member's results, a run's a_moved_diag window */
static void add_moved(void *ctx, int run, long n)
{
    result *r = (result *)ctx + run;
    r->moved += n;
    r->steps++;
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
 * each of its checkpoints into curve[i * NQ + q]; failed, with the code and reason in err, when it
 * cannot run here (skipped) */
typedef struct {
    const vla_config *cfg;
    const long *cks;
    long nck, ci; /* its checkpoints, and the next one */
    result *res;
    double *curve;
    vla_error err;
    int failed;
    vla_engine *m;
    taps_t tm;
    long done; /* the steps whose read-outs are measured (a chunk's come at its end) */
} member_t;

/* The configurations of a group, which share one reference (the same model, constants, input
 * rounding and reference: the forms of a model, and for the exact reference the policies that
 * round their inputs alike; ref_key), advanced together beside one run of it: the reference's
 * steps, the longest work of the f64 rows, are taken once. Each member gets what it would get
 * alone. */
typedef struct {
    const vla_cli *c;
    vla_cli rc; /* c with the group's reference: exact for f64, else binary64 */
    member_t *mb;
    int n, nr, d, dv, hasA;
    vla_engine *ref, *raw; /* raw: binary64 on the unrounded inputs, where the reference rounds them */
    vref_ddcheck *chk;
    taps_t tr, trr; /* the reference's read-outs, and raw's */
    double *x, *y, *lam; /* the state's arrays of a member and of the reference; A's eigenvalues */
    vla_inputs in;
    vla_error refwhy; /* why the reference cannot run (refbad) */
    int refbad;
    long tend; /* the last checkpoint of the members that run */
} group_t;

/* the group's buffers and inputs, read (a trace) or drawn (a stream) once for all its engines, a
 * window of WIN steps at a time, which every engine takes as prepared inputs in a ring */
static void group_inputs(group_t *G)
{
    const vla_cli *c = G->c;
    const int nr = G->nr, d = G->d, dv = G->dv;
    size_t nbuf = (size_t)d * (d > dv ? d : dv);
    G->x = malloc(nbuf * sizeof *G->x), G->y = malloc(nbuf * sizeof *G->y);
    G->lam = malloc((size_t)d * sizeof *G->lam);
    G->tr.o = malloc((size_t)nr * RING * dv * sizeof *G->tr.o);
    G->tr.seen = malloc((size_t)nr * RING);
    G->refwhy = (vla_error){VLA_ENOMEM, "out of memory"};
    G->refbad = !G->x || !G->y || !G->lam || !G->tr.o || !G->tr.seen;
    unsigned want = 0;
    for (int k = 0; k < G->n; k++)
        want |= vla_model_reads(G->mb[k].cfg);
    vla_error ve;
    if (!G->refbad && (G->refbad = vla_inputs_open(&G->in, c->stream, c->seed, d, dv, nr, WIN,
                                                   c->steps, want, &ve) != 0))
        G->refwhy = ve;
    else if (G->refbad)
        memset(&G->in, 0, sizeof G->in);
}

/* member w's engine on the group's inputs (failed, with its reason, where it cannot be made), and
 * the group's reference from the first member's spec */
static void group_member(group_t *G, member_t *w, int use_dd, refck_t *rk)
{
    const int nr = G->nr, dv = G->dv;
    vla_engine_spec sp, rs;
    vla_cli_engine_spec(&G->rc, w->cfg, &sp);
    sp.threads = 1; /* the groups run in parallel, each on one thread (the same bits) */
    sp.stream = NULL;
    sp.in = G->in.in;
    sp.S0 = G->in.S0; /* the trace's initial states, or NULL */
    sp.cu = G->in.cu; /* its packed sequences (nseq 0: one) */
    sp.nseq = G->in.nseq;
    sp.is_read = G->in.is_read;
    sp.T = G->in.T; /* WIN, or a shorter stream's length */
    sp.cycle = 1; /* step t from slot (t - 1) % T of the window */
    w->tm = (taps_t){malloc((size_t)nr * RING * dv * sizeof *w->tm.o), malloc((size_t)nr * RING),
                     dv, w->cfg->form == VLA_FORM_CHUNK && w->cfg->chunk > 1 ? w->cfg->chunk : 1,
                     add_moved, w->res};
    sp.taps = VLA_TAP_O | VLA_TAP_MOVED;
    sp.on_step = taps_on_step;
    sp.ctx = &w->tm;
    memset(w->res, 0, (size_t)nr * sizeof *w->res);
    for (long i = 0; i < w->nck * NQ; i++)
        w->curve[i] = i % NQ == QA && !G->hasA ? NAN : 0;
    w->ci = 0;
    w->done = 0;
    w->m = NULL;
    if (!w->tm.o || !w->tm.seen)
        w->failed = 1, vla_fail(&w->err, VLA_ENOMEM, "out of memory");
    else if (!G->in.in) /* the group's inputs could not be had: its reason */
        w->failed = 1, w->err = G->refwhy;
    else if (vla_engine_new(&w->m, &sp, &w->err))
        w->failed = 1;
    if (!G->refbad && !G->ref) {
        vla_cli_ref_spec(&G->rc, &sp, &rs);
        rs.taps = VLA_TAP_O;
        rs.on_step = taps_on_step;
        rs.ctx = &G->tr;
        G->refbad = ref_new(&G->ref, &G->chk, rs, use_dd, rk, &G->refwhy);
        if (!G->refbad && rs.round_inputs != VLA_FMT_F64) {
            rs.round_inputs = rs.round_S0 = VLA_FMT_F64;
            rs.ctx = &G->trr;
            G->trr.o = malloc((size_t)nr * RING * dv * sizeof *G->trr.o);
            G->trr.seen = malloc((size_t)nr * RING);
            G->refbad = !G->trr.o || !G->trr.seen || vla_engine_new(&G->raw, &rs, &G->refwhy);
        }
    }
    if (!w->failed && w->nck && w->cks[w->nck - 1] > G->tend)
        G->tend = w->cks[w->nck - 1];
}

/* the inputs of steps t + 1 .. to, and the reference (and raw) stepped to them: 1 (refbad, with
 * the reason) when they cannot be */
static int group_reference_to(group_t *G, long t, long to)
{
    vla_error ve;
    int rc;
    if (vla_inputs_fill(&G->in, t, to, &ve)) {
        G->refwhy = ve;
        return G->refbad = 1;
    }
    if (vla_engine_advance(G->ref, to) || (G->raw && vla_engine_advance(G->raw, to))) {
        G->refwhy = *vla_engine_error(vla_engine_error(G->ref)->code ? G->ref : G->raw);
        return G->refbad = 1;
    }
    if (G->chk && (rc = vref_ddcheck_at(G->chk, G->ref, to))) {
        vla_fail(&G->refwhy, rc, "the reference's check stopped");
        return G->refbad = 1;
    }
    return 0;
}

/* member w stepped to to, and its read-outs of the steps from w->done on measured against the
 * reference's, step by step (an unfinished chunk waits for its end, the reference's read-outs
 * kept in the ring) */
static void group_readouts(group_t *G, member_t *w, long to)
{
    const int nr = G->nr, dv = G->dv;
    if (vla_engine_advance(w->m, to)) {
        w->err = *vla_engine_error(w->m);
        w->failed = 1;
        return;
    }
    double *cv = w->curve + w->ci * NQ;
    long upto = to; /* every step with its read-out, in step order */
    for (int h = 0; h < nr; h++) {
        long s;
        for (s = w->done; s < to; s++) { /* s: step s + 1 */
            double e;
            const size_t slot = (size_t)h * RING + (size_t)(s % RING);
            const double *om = w->tm.o + slot * dv, *oref = G->tr.o + slot * dv;
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
            passed(r, QO, e = vla_rel_fro(om, oref, dv), s + 1);
            const long len = G->c->steps < OWIN ? G->c->steps : OWIN;
            owin_push(&r->win, om, oref, dv, len);
            /* the reference's inputs are the run's: where they are rounded, against the
             * unrounded inputs' binary64 too (else the same) */
            owin_push(&r->raw, om, G->raw ? G->trr.o + slot * dv : oref, dv, len);
            if (!(e <= cv[QO]))
                cv[QO] = e;
        }
        if (s < upto)
            upto = s;
    }
    w->done = upto;
}

/* member w's measures of the state at its checkpoint t, head by head, and the figure's curves
 * there */
static void group_checkpoint(group_t *G, member_t *w, long t)
{
    const int nr = G->nr, d = G->d, dv = G->dv, hasA = G->hasA;
    double *x = G->x, *y = G->y;
    vla_engine *m = w->m, *ref = G->ref;
    double *cv = w->curve + w->ci++ * NQ;
    for (int h = 0; h < nr; h++) {
        result *r = &w->res[h];
        vla_engine_get(m, h, VLA_Q_S, x);
        vla_engine_get(ref, h, VLA_Q_S, y);
        passed(r, QS, vla_rel_fro(x, y, (long)d * dv), t);
        if (hasA) {
            vla_engine_get(m, h, VLA_Q_A, x);
            vla_engine_get(ref, h, VLA_Q_A, y);
            passed(r, QA, vla_rel_fro(x, y, (long)d * d), t);
            /* the smallest eigenvalue of A's symmetric part, as vla-drift's lambda_min */
            if (!r->notpd && (vref_sym_eig(x, d, G->lam) || !(G->lam[0] > 0)))
                r->notpd = t;
        }
        if (!r->nonfinite && !vla_cli_run_finite(m, h, x))
            r->nonfinite = t;
        /* stagnation: under half of A's diagonal moved over the window (vla-drift's
         * a_moved_diag; docs/findings.md, "Where round-to-nearest stagnates") */
        if (r->steps && !r->stagnant && 2 * r->moved < (long)d * r->steps)
            r->stagnant = t;
        r->moved = r->steps = 0;
        vla_counts cn;
        vla_engine_counts(m, h, &cn);
        r->guards = cn.guard;
        r->sats = cn.cache_sat;
        if (cn.guard && !r->guard_t)
            r->guard_t = t;
        if (w->cfg->normalize && vla_engine_get(m, h, VLA_Q_N, x) == 0 &&
            vla_engine_get(ref, h, VLA_Q_N, y) == 0) {
            double e = vla_rel_fro(x, y, d);
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
            double e = vla_rel_fro(x, y, len);
            if (!(e <= cv[q]))
                cv[q] = e;
        }
}

/* the group's engines and buffers freed; a member still running when the reference failed gets
 * the reference's reason */
static void group_free(group_t *G)
{
    vref_ddcheck_free(G->chk);
    for (int k = 0; k < G->n; k++) {
        member_t *w = &G->mb[k];
        if (G->refbad && !w->failed)
            w->failed = 1, w->err = G->refwhy;
        vla_engine_free(w->m);
        free(w->tm.o);
        free(w->tm.seen);
    }
    vla_engine_free(G->ref);
    vla_engine_free(G->raw);
    free(G->trr.o);
    free(G->trr.seen);
    vla_inputs_free(&G->in);
    free(G->x);
    free(G->y);
    free(G->lam);
    free(G->tr.o);
    free(G->tr.seen);
}

/* the group's n members mb run to their last checkpoint, window by window; REDO_MPFR when the dd
 * reference failed its check (then the group runs again with MPFR) */
static int check_group(const vla_cli *c, member_t *mb, int n, vla_progress *prog, long *done,
                       int use_dd, refck_t *rk)
{
    const vla_config *cfg = mb[0].cfg;
    group_t G = {.c = c, .rc = *c, .mb = mb, .n = n, .nr = c->runs, .d = cfg->d, .dv = cfg->dv,
                 .hasA = vla_model_has_A(cfg->model)};
    G.rc.ref = cfg->prec == VLA_F64 ? REF_EXACT : REF_F64;
    G.tr = (taps_t){NULL, NULL, G.dv, 1, NULL, NULL};
    G.trr = G.tr;
    int redo = 0;
    group_inputs(&G);
    for (int k = 0; k < n; k++)
        group_member(&G, &mb[k], use_dd, rk);
    long t = 0;
    while (!G.refbad && t < G.tend) {
        long next = G.tend;
        for (int k = 0; k < n; k++)
            if (!mb[k].failed && mb[k].ci < mb[k].nck && mb[k].cks[mb[k].ci] < next)
                next = mb[k].cks[mb[k].ci];
        long to = t + WIN < next ? t + WIN : next;
        if (group_reference_to(&G, t, to))
            break;
        for (int k = 0; k < n; k++) /* the window's read-outs, step by step */
            if (!mb[k].failed && mb[k].ci < mb[k].nck)
                group_readouts(&G, &mb[k], to);
#ifdef _OPENMP
#pragma omp critical(check_progress)
#endif
        vla_progress_update(prog, *done += (to - t) * G.nr);
        t = to;
        for (int k = 0; k < n; k++) /* the checkpoint's measures of the state, where it is one */
            if (!mb[k].failed && mb[k].ci < mb[k].nck && mb[k].cks[mb[k].ci] == t)
                group_checkpoint(&G, &mb[k], t);
    }
    if (!G.refbad)
        redo = refck_note(G.chk, rk);
    group_free(&G);
    return redo;
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
        w->sats += r->sats;
        w->nzero += r->nzero;
        if (r->nsum > w->nsum)
            w->nsum = r->nsum;
        if (!(r->nerr <= w->nerr))
            w->nerr = r->nerr;
        if (!isnan(w->win.worst) && !(r->win.worst <= w->win.worst))
            w->win.worst = r->win.worst;
        if (!isnan(w->raw.worst) && !(r->raw.worst <= w->raw.worst))
            w->raw.worst = r->raw.worst;
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

/* the verdict and what the harness knows of the causes (docs/math.md, docs/findings.md, trace.md) */
static void judge(row_t *w, double threshold)
{
    const result *r = &w->r;
    const vla_config *cfg = &w->cfg;
    vla_fmt st = vla_prec_storage(cfg->prec), cp = vla_prec_compute(cfg->prec);
    w->fail = r->nonfinite || r->ozero || !(r->worst[QS] < threshold) || !(r->win.worst < threshold);
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
    /* before the errors' causes: a clamp, not the rounding, is then what the error first says */
    if (r->sats)
        add_cause(w, "the state cache (%s) saturated: %ld entries of its heads clamped at the "
                     "format's largest (%s; docs/forms.md, 'The state cache')",
                  vla_cache_name(cfg->cache), r->sats,
                  cfg->cache_rows ? "with a scale" : "no scale: cache_rows=0");
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
        add_cause(w, "the read-out's norm-wise error over %d tokens reached %.3g at worst, past the "
                     "threshold %g, while the state's stayed below %.3g (pointwise, o reached "
                     "%.3g)", OWIN, r->win.worst, threshold, r->worst[QS], r->worst[QO]);
    /* with u' = unit(u) / sqrt(d) (vla3's, VLA_MODELS' uprime) A_t is about (lambda0 + t / d^2)^-1
     * I: its diagonal stalls near 1/u - lambda0 d^2 */
    double onset = 1 / vla_fmt_unit_roundoff(st) - cfg->lambda0 * cfg->d * cfg->d;
    char pred[120] = "";
    if (!strcmp(vla_model_uprime(cfg->model), "unit(u) / sqrt(d)") && onset > 0)
        snprintf(pred, sizeof pred, ", near t = 1/u - lambda0 d^2 = %.0f", onset);
    if (r->stagnant)
        add_cause(w, "A stagnates from t = %ld: under half of its diagonal still moves, the updates "
                     "falling below half an ulp of %s and rounding away (docs/findings.md, 'Where "
                     "round-to-nearest stagnates'%s)",
                  r->stagnant, vla_fmt_name(st), pred);
    if (r->notpd)
        add_cause(w, "A is no longer positive definite at t = %ld (the smallest eigenvalue of its "
                     "symmetric part is <= 0 or not a number; vla-drift measures it over time)",
                  r->notpd);
    if (r->guards)
        add_cause(w, "the guard fired %ld times from t = %ld (%s)", r->guards, r->guard_t,
                  vla_model_devices(cfg->model) & VLA_DEV_FLOOR ? "delta floored at stab_eps"
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

/* the figure's data, one block per row that ran, the worst head at each checkpoint, into dat */
static int report_dat(const char *dat, const vla_cli *c, const row_t *rows, int nrows)
{
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
    return report_write(dat, text, len);
}

/* the figure's script into gp, drawing into png, and the figure drawn: the script run now draws
 * into a temporary beside png, renamed onto it once drawn. *fig: whether it was; 1 when the
 * script could not be written */
static int report_figure(const char *gp, const char *png, const char *dat, const vla_cli *c,
                         const row_t *rows, int nrows, int *fig)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f;
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
    *fig = vla_file_target(png, &target, &kind) == 0 && (tmp = vla_file_tmp_name(target)) &&
           (tf = vla_file_create(tmp)) && (f = open_memstream(&text, &len));
    if (tf)
        fclose(tf);
    if (*fig) {
        report_gp(f, tmp, dat, c, rows, nrows);
        fclose(f);
        *fig = vla_gnuplot(text, len, 1) == 0 && vla_file_replace(tmp, target, &kind) == 0;
        free(text);
    }
    if (tmp && !*fig)
        unlink(tmp);
    free(tmp);
    free(target);
    if (!*fig)
        fprintf(stderr, "vla-check: warning: gnuplot could not draw %s (is gnuplot installed?); "
                        "the report goes without its figure\n", png);
    return 0;
}

/* the report's opening: what was run and what a row's numbers are */
static void report_intro(FILE *f, const vla_cli *c, const opts_t *o, long nck, const char *files)
{
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
               "(%ld bits; double-double checked against MPFR, or MPFR: the table's reference line says "
               "which). The error of S and A is measured at %ld log-spaced checkpoints, "
               "that of the read-out o at every step (a chunk form's too: every token's read-out, "
               "which the chunk computes at its end); a step is the first at which the worst head's "
               "error passed the threshold (- : never). A row fails when anything went non-finite, "
               "the read-out went to exactly 0, or the error of S, or o's norm-wise error over a window "
               "of %d tokens (window o: ||o - o_ref|| / ||o_ref|| over the window's read-outs, so "
               "that a read-out near 0 weighs as little as it is), reached %g (--threshold); the "
               "pointwise error of o is a column.\n\n"
               "What a row's numbers are not: the error of a kernel in that policy on your model's "
               "inputs. The reference takes the inputs already rounded to the policy's io format "
               "(bfloat16 for bf16 and bf16-kern, binary16 for f16 and f16-kern), so the rounding "
               "of q, k, v, the gates and the rates is on neither side, and it is often the larger "
               "part (docs/trace.md, \"What a row compares\"). `vla-check trace:DIR --outputs DIR2` "
               "judges a kernel's read-outs against the inputs as given, the inputs' rounding "
               "beside them.\n\n",
            c->ref_bits, nck, OWIN, o->threshold);
}

/* the report's table, a line per row that ran, and its causes: those of the rows, and the rows
 * that did not run */
static void report_rows(FILE *f, const row_t *rows, int nrows)
{
    fprintf(f, "| model | precision | way | form | S 1e-3 | S 1e-1 | S 1 | A 1e-3 | A 1e-1 | A 1 | "
               "o 1e-3 | o 1e-1 | o 1 | max err S | max err o | non-finite | o = 0 | A not PD | "
               "stagnation | guards | window o | window o, inputs unrounded | verdict |\n|");
    for (int k = 0; k < 23; k++)
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
        fprintf(f, " %ld | %.3g | %.3g | %s |\n", w->r.guards, w->r.win.worst, w->r.raw.worst,
                w->fail ? "**FAIL**" : "ok");
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
}

/* PREFIX.md, PREFIX.png (by gnuplot, where it draws), PREFIX-errors.dat and PREFIX.gp */
static int write_report(const char *prefix, const vla_cli *c, const opts_t *o, const row_t *rows,
                        int nrows, long nck, const char *files, const char *outname)
{
    char path[4200], dat[4200], png[4200], gp[4200];
    snprintf(path, sizeof path, "%s.md", prefix);
    snprintf(dat, sizeof dat, "%s-errors.dat", prefix);
    snprintf(png, sizeof png, "%s.png", prefix);
    snprintf(gp, sizeof gp, "%s.gp", prefix);
    int fig = 0;
    if (report_dat(dat, c, rows, nrows) || report_figure(gp, png, dat, c, rows, nrows, &fig))
        return 1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return report_write(path, NULL, 0);
    report_intro(f, c, o, nck, files);
    report_rows(f, rows, nrows);
    if (fig) {
        fprintf(f, "\n## The read-out's error\n\n![the read-out's error against t](");
        md_link(f, md_base(png));
        fprintf(f, ")\n\nThe worst head's relative error of o at each checkpoint, one panel per "
                   "model; the dashed line is 1 (the read-out is as large as its error). The "
                   "curves' numbers are in ");
        md_text(f, md_base(dat));
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
    /* a binary64 reference costs less than any policy it is run beside, so each policy gets its
     * own (its forms share it): the groups then spread over the cores (the f16 family of a 16 x
     * 4096 x 128 gdn trace was one group of 50 s beside the exact one's 48 s) */
    snprintf(key, len, "%s %d %ld %s %s", vla_backend_name(rs.backend), (int)rs.round_inputs,
             rs.ref_bits, desc, rc.ref == REF_F64 ? vla_prec_name(cfg->prec) : "");
}

/* ---- checkpoints: a group is a unit of work (vla_units, drive.c). Its record: its references'
 * counts (refck_t), then each row's worst head and merged result, and its curve (nck x NQ); the
 * verdict and the causes follow from them (judge). Only a group whose rows all ran is kept: one
 * that a stop cut short, or whose row failed, runs again on --resume. ---- */
typedef struct {
    long head; /* (no padding: a record's bytes are all written) */
    result r;
} saved_row;

/* the bytes of group g's record (its rows: rows[order[group[g]]] .. rows[order[group[g + 1] - 1]]) */
static size_t group_size(const row_t *rows, const int *order, const int *group, int g)
{
    size_t n = sizeof(refck_t);
    for (int j = group[g]; j < group[g + 1]; j++)
        n += sizeof(saved_row) + (size_t)rows[order[j]].nck * NQ * sizeof(double);
    return n;
}

/* group g, its rows ran, into the checkpoint: VLA_OK or VLA_ENOMEM */
static int group_save(vla_units *u, int g, const refck_t *rk, const row_t *rows, const int *order,
                      const int *group)
{
    const size_t len = group_size(rows, order, group, g);
    char *rec = malloc(len), *p = rec;
    if (!rec)
        return VLA_ENOMEM;
    memcpy(p, rk, sizeof *rk), p += sizeof *rk;
    for (int j = group[g]; j < group[g + 1]; j++) {
        const row_t *w = &rows[order[j]];
        const saved_row sr = {w->head, w->r};
        const size_t nc = (size_t)w->nck * NQ * sizeof(double);
        memcpy(p, &sr, sizeof sr), p += sizeof sr;
        memcpy(p, w->curve, nc), p += nc;
    }
    const int e = vla_units_save(u, g, rec, len);
    free(rec);
    return e;
}

/* group g from the checkpoint, where it finished before: its rows ran, with their results and
 * curves, and its counts in *rk (1); 0 when it has no record, or one that cannot be this command's
 * (said; it runs again) */
static int group_load(const vla_units *u, int g, refck_t *rk, row_t *rows, const int *order,
                      const int *group, const vla_cli *c)
{
    size_t len;
    const char *rec = vla_units_get(u, g, &len), *p = rec;
    if (!rec)
        return 0;
    refck_t k;
    int ok = len == group_size(rows, order, group, g);
    if (ok) {
        memcpy(&k, p, sizeof k), p += sizeof k;
        ok = k.dd >= 0 && k.mpfr >= 0 && k.refused >= 0 && k.compared >= 0;
    }
    for (int j = group[g]; ok && j < group[g + 1]; j++) {
        saved_row sr;
        memcpy(&sr, p, sizeof sr);
        ok = sr.head >= 0 && sr.head < c->runs;
        p += sizeof sr + (size_t)rows[order[j]].nck * NQ * sizeof(double);
    }
    if (!ok) {
        fprintf(stderr, "vla-check: warning: %s.ckpt: the record of group %d is not one this "
                        "command writes: its rows run again\n", c->out, g);
        return 0;
    }
    *rk = k;
    p = rec + sizeof k;
    for (int j = group[g]; j < group[g + 1]; j++) {
        row_t *w = &rows[order[j]];
        saved_row sr;
        const size_t nc = (size_t)w->nck * NQ * sizeof(double);
        memcpy(&sr, p, sizeof sr), p += sizeof sr;
        memcpy(w->curve, p, nc), p += nc;
        w->ran = 1;
        w->head = sr.head;
        w->r = sr.r;
    }
    return 1;
}

/* the steps of one group of rows (order[a .. b - 1]) not run before: its longest row's */
static long group_steps(const row_t *rows, const int *order, int a, int b)
{
    long tend = 0;
    for (int j = a; j < b; j++) {
        const row_t *w = &rows[order[j]];
        if (!w->ran && w->nck && w->cks[w->nck - 1] > tend)
            tend = w->cks[w->nck - 1];
    }
    return tend;
}


/* the command line: vla-check's own options, its exit statuses and its help */
static opts_t opts = {.threshold = 0.1, .report = "vla-check", .forms = "seq,chunk:64"};
static const vla_cli_opt check_own[] = {
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
                         "PREFIX-errors.dat and PREFIX.gp (default vla-check); none: no report; "
                         "with --outputs: PREFIX.md and PREFIX.json"},
    {"outputs", "DIR2", "judge your kernel's own read-outs on this trace: DIR2/o.npy (heads, T, "
                        "dv) and optionally DIR2/S.npy, its final state (heads, dv, d); float16, "
                        "float32, float64, or uint16 holding bfloat16 bits with DIR2/dtype.txt "
                        "saying bfloat16; and your backward's gradients when there: DIR2/dq.npy, "
                        "dk.npy, dv.npy, dbeta.npy, dg.npy (da.npy, db.npy for rwkv7, du.npy for vla1 and vla3) of the "
                        "loss sum_t do_t . o_t, do_t from DIR2/do.npy (OUTPUTS, in the "
                        "description)"},
    {"states", "DIR2", "judge the states a cache saved under the positions it claims for them: "
                       "DIR2/states.npy (N, heads, dv, d), each state in S0.npy's layout, and "
                       "DIR2/positions.npy (N,) integers, state i the state after positions[i] "
                       "tokens (0: the initial state); float16, float32, float64, or uint16 "
                       "holding bfloat16 bits with DIR2/dtype.txt saying bfloat16 (STATES, in the "
                       "description)"},
    {"window", "W", "with --outputs: the verdict's error is the largest over windows of W tokens "
                    "(default 64) of ||o - o_ref|| / ||o_ref|| over the window"},
    {"slack", "F", "with --outputs: a head is ok when its windowed error is at most F times the "
                   "largest attainable error (OUTPUTS, in the description), and with --states a "
                   "saved state when its distance to its label's state is; default 2 for a "
                   "16-bit policy (bf16-kern, f16-kern, ...), 4 for f32 and f64"},
    {NULL, NULL, NULL},
};
static const vla_doc_item check_exits[] = {
    {"0", NULL, "the table and the report were written; with --require, every precision it "
                "names had a row that ran and passed; with --outputs, every head was ok; with "
                "--states, every saved state agreed with its position"},
    {"1", NULL, "with --require, a precision it names failed or had no row that ran; with "
                "--outputs, a head's read-outs or one of its gradients were beyond (the "
                "summary on stderr names them); with --states, a saved state disagreed with "
                "its position in a head or more (the summary names each, and the position its "
                "content matches); a run failed "
                "(the message names the head, the step and the reason); or the table or the "
                "report could not be written. Without --require or --outputs, FAIL rows are "
                "a finding, not an exit status: the table and the report say them"},
    {"2", NULL, "a usage error: an unknown option or value, a value out of range, a "
                "configuration the backend or the reference cannot run, a bad input file "
                "(o.npy, a gradient or do.npy of another shape than the trace's, a NaN in "
                "do.npy, a gradient of a model without a backward, states.npy of another shape "
                "than (N, heads, dv, d) or with a NaN, positions.npy not integers or outside "
                "0..T, ...), a table or report path that cannot be written (checked before the "
                "runs)"},
    {"3", NULL, "interrupted by SIGINT or SIGTERM: no table, report or temporary is left; "
                "with --out FILE the groups of rows finished are in FILE.ckpt, and the same "
                "command with --resume goes on from them"},
    {NULL, NULL, NULL},
};
static const vla_cli_spec check_spec = {
    .exit = check_exits,
    .packed = 1,
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
        "the exact reference: in double-double, checked against MPFR on head 0's first 4096\n"
        "steps, MPFR itself where that check finds more than 1e-24 or --ref-bits is not 256;\n"
        "the header's reference line says which, docs/math.md 6.1.1), and prints a verdict\n"
        "table: per model x way x form x\n"
        "precision, the first t at which the relative error of S, A and o passed 1e-3, 1e-1 and\n"
        "1, the first t of a non-finite value, of a read-out that is exactly 0 (its denominator\n"
        "overflowed), of A losing positive definiteness, of A's stagnation, and the guard events;\n"
        "the causes the harness knows go to the report and stderr. It writes a Markdown report\n"
        "with one figure, and exits 1 when a precision named by --require fails (--threshold). A\n"
        "configuration that a form or a way refuses (vla3's nudge every 20 steps inside a chunk\n"
        "of 64, a solver way with the nudge on) is listed in the header as refused, with the\n"
        "reason; the rows run in parallel (OMP_NUM_THREADS). With --out FILE, each group of rows\n"
        "that share a reference (a model and a way of tracking A in one policy, with its forms)\n"
        "is kept in FILE.ckpt once all its rows ran (written every VLA_CHECKPOINT_SECONDS, and at\n"
        "SIGINT or SIGTERM, exit 3); the same command with --resume reads those groups back, runs\n"
        "the others (the groups in progress at the stop start over), and writes the table and\n"
        "report of an uninterrupted check (the report's command without --resume). FILE.ckpt goes\n"
        "when vla-check exits 0; after exit 1 (--require's too) what was written of it stays, for\n"
        "--resume. The table on standard output keeps no checkpoint. On a terminal, stderr shows\n"
        "the progress (head-steps done of all the rows', their rate, the time left); elsewhere\n"
        "nothing of it.\n"
        "A trace is read a block of steps at a time: the memory does not grow with T; the rows\n"
        "that share a reference (the model, its input rounding) read it, or draw a stream, once.\n"
        "\n"
        "OUTPUTS. vla-check trace:DIR --outputs DIR2 judges your own kernel instead: its read-outs\n"
        "DIR2/o.npy (heads, T, dv) on the trace's inputs (and its final state DIR2/S.npy, (heads,\n"
        "dv, d), when there is one) against the exact reference (--ref exact: in double-double,\n"
        "checked against MPFR on head 0's first 4096 steps, MPFR itself where that check fails or\n"
        "--ref-bits is not 256, as for the f64 rows; the header's and the JSON's reference say\n"
        "which; --ref f64 for long traces) on the inputs as given, head by head. One model (the\n"
        "trace's model.txt or --model), the kernel's policy --precision P (default from o.npy's\n"
        "dtype: bfloat16 bf16-kern, float16 f16-kern, float32 f32, float64 f64) and form --form F\n"
        "(default seq; chunk:64, ...). Per head: rel_rms = ||o - o_ref||_F / ||o_ref||_F (fla's\n"
        "metric), max_abs, max_rel_window (for each window of --window W tokens, ||o - o_ref|| /\n"
        "||o_ref|| over the window; the largest, and its t, from 1), max_rel_pointwise (per token;\n"
        "a column only), ulps_max (in the coarser of P's io format and o.npy's), bits_lost =\n"
        "log2(rel_rms / u) clipped at 0; beside them the attainable errors: max_rel_window of\n"
        "vlastab's emulation of P in seq and in form F, read-outs rounded as the kernel's, and the\n"
        "input budget: the reference on the inputs rounded to P's io format against the reference\n"
        "on the inputs as given. The rule: a head is ok when every read-out is finite and\n"
        "max_rel_window <= budget = --slack x max(attainable_seq, attainable_form,\n"
        "input_budget) < 1, else beyond (a budget of 1 or more passes read-outs of 0: such a\n"
        "head is beyond, not judged, said). --slack defaults to 2 where P's io format has\n"
        "16 bits (its rounding of the read-outs is most of a correct kernel's error) and to 4\n"
        "in binary32 and binary64 (correct kernels' orders of accumulation differ more beside\n"
        "their rounding: bench/mutants/README.md). Writes the per-head table (--out), PREFIX.md and PREFIX.json\n"
        "(--report); exit 0 when every head (and the state) is ok, 1 when one is beyond, 2 for a\n"
        "usage error (o.npy of another shape than (heads, T, dv), uint16 without dtype.txt, ...).\n"
        "o.npy is read a window of steps at a time beside the runs, so that the memory is the\n"
        "states' and the window's, not T's; the gradients below, when given, are judged a head\n"
        "at a time, and a block of ceil(sqrt(T)) steps of it at a time (the backward's own\n"
        "checkpoints): the memory is the backwards' 2 sqrt(T) states and a block's arrays, and\n"
        "16 bytes a step for each of a gradient's three measures, not arrays of T steps.\n\n"
        "GRADIENTS. When DIR2 also holds your kernel's backward, dq.npy, dk.npy (heads, T, d),\n"
        "dv.npy (heads, T, dv), dbeta.npy (heads, T), dg.npy (heads, T), or (heads, T, d) for a\n"
        "log-decay per key channel, da.npy and db.npy (rwkv7), du.npy (vla1, vla3), any of them,\n"
        "with do.npy (heads,\n"
        "T, dv): the gradients of L = sum_t do_t . o_t (do_t: the upstream gradient as the\n"
        "backward receives it; dq and dk before the gated family's L2 norm), each is judged per\n"
        "head as o is, against the exact seq backward (MPFR, at any --ref-bits: the\n"
        "double-double reference has no backward; lib's binary64 with --ref f64) on\n"
        "the inputs as given, beside vlastab's backward in P token by token (attainable_seq) and\n"
        "in form F where F has a backward (attainable_form: the chunk backward of delta, gdn,\n"
        "kda, gla, mamba2, deltaproduct, loglinear and mamba3) and the exact backward on the\n"
        "inputs and do rounded to P's io format\n"
        "(input_budget); budget = --slack x max(attainable_seq, attainable_form, input_budget)\n"
        "< 1. A gradient beyond\n"
        "is exit 1 and named in the summary; its rows are in PREFIX.json (\"grads\") and\n"
        "PREFIX.md. Refused (exit 2): a gradient the model has no input for (dbeta for mamba2),\n"
        "a model without a backward (rls, vla1, vla3 in a way of tracking A other than sm: the\n"
        "reason is said), a gradient without\n"
        "do.npy or do.npy without a gradient, a shape other than the trace's, a NaN or Inf in\n"
        "do.npy, la's, delta's and vla3's dq (dk for la and vla3) with features=own (the\n"
        "backward's are with\n"
        "respect to phi(q), phi(k)). A NaN in a gradient is no error: beyond, its t named.\n\n"
        "STATES. vla-check trace:DIR --states DIR2 judges the states a serving engine's prefix\n"
        "cache saved, each under the position it claims: DIR2/states.npy (N, heads, dv, d), state\n"
        "i in S0.npy's layout (dv x d per head), and DIR2/positions.npy (N,) integers in 0..T,\n"
        "state i claimed to be S_t at t = positions[i] (the state after t tokens; 0: the initial\n"
        "state, S0.npy's or 0). One model (the trace's model.txt or --model) whose state is S\n"
        "alone (la with normalize=off, delta and the gated family), the cache's policy\n"
        "--precision P (default from states.npy's dtype, as --outputs' from o.npy's) and form\n"
        "--form F. The reference (--ref exact or f64, as --outputs') runs the trace a step at a\n"
        "time; at every t in 0..T each saved state's distance to it, ||X - S_t||_F / ||S_t||_F\n"
        "per head, is measured, and kept at its label and at its nearest t (the matched\n"
        "position, the first of equals). The budget at t is --outputs' for S.npy: --slack x the\n"
        "largest of the state errors at t of P's seq emulation, of its form F (at a chunk's end\n"
        "and at T), of the reference on the inputs rounded to P's io format, and sqrt(d) u of P's\n"
        "arithmetic. A state's head is ok when its distance at its label is within the budget\n"
        "there; else mislabelled when its distance at the matched position is within the budget\n"
        "there (the summary: label t=1600, content matches t=364), else unmatched (matches no\n"
        "position: the nearest is named). The table (--out): a row per state and head, columns\n"
        "state head label matched dist_label budget_label dist_matched budget_matched verdict;\n"
        "the summary on stderr names each state that disagrees; exit 1 when one does. The runs\n"
        "are "
        "streamed, never the trajectory kept: the memory is the runs' states and states.npy's,\n"
        "the time the runs' and N x heads x dv x d per step for the distances. Refused (exit 2):\n"
        "--report, --window, --outputs and --resume (one pass, no checkpoint; SIGINT exits 3).",
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
               "  o_window  the largest norm-wise error of o over a window of 64 tokens:\n"
               "            ||o - o_ref|| / ||o_ref|| of the window's read-outs (a read-out near 0\n"
               "            weighs as little as it is; o_max is pointwise)\n"
               "  o_window_raw  the same against binary64 on the inputs as given, unrounded:\n"
               "            what the policy loses on your model's inputs, their own rounding\n"
               "            counted (a column; the verdict is o_window's)\n"
               "  verdict   ok or FAIL (non-finite, o = 0, or an error of S or o_window >=\n"
               "            --threshold)",
    .example = "vla-check trace:mytrace --require bf16 --threshold 0.05\n"
               "vla-check trace:mytrace --outputs mykernel-out --form chunk:64\n"
               "vla-check trace:mytrace --states mycache --precision bf16-kern\n"
               "vla-check trace:mytrace --models vla3 --forms chunk:64 --set period=64 "
               "--precisions f16-kern,bf16-kern --require bf16-kern\n"
               "vla-check trace:mytrace --models vla3 --tracks sm,cg:8,cheb:8 --set nudge=off",
    .default_steps = 2000,
    .default_stream = "lmlike",
    .default_model = VLA_VLA3,
    .default_ref = REF_EXACT,
    .many_models = 1,
    .opts = check_own,
    .on_opt = on_opt,
    .ctx = &opts,
};

/* what main's steps share: the command, the rows and their groups, the table */
typedef struct {
    vla_cli c;
    char **av, **cmd; /* the words vla_cli_parse reads (STREAM as --stream STREAM); the report's */
    int ac, ncmd, have_stream, have_ck;
    const char *how; /* where the models came from (vla_cli_model_src) */
    char ways[VLA_NTRACK * 4][48], forms[MAXFORMS][32];
    int nways, nforms;
    row_t *rows;
    int cap, nrows;
    long nck0; /* the checkpoints of the sequential form */
    int *order, *group, *gof, ng; /* the rows group by group (make_groups) */
    vla_dat *out;
    vla_units *u;
    int nfail, gate, nrun, nrefused; /* the rows' counts, and --require's verdict */
    char unmet[300];                 /* the required precisions that had no row run */
} check_t;

/* main's arrays freed (a usage error found after they were made, and the end); its status */
static int release(int status, check_t *k)
{
    for (int i = 0; i < k->nrows; i++) {
        free(k->rows[i].cks);
        free(k->rows[i].curve);
    }
    free(k->rows);
    free(k->order);
    free(k->group);
    free(k->gof);
    free(k->av);
    return status;
}

/* the command's words for vla_cli_parse, STREAM as --stream STREAM, and the report's command (the
 * check, as typed, without --resume): 1 when out of memory */
static int command_words(check_t *k, int argc, char **argv)
{
    char **av = malloc((size_t)(2 * argc + 3) * sizeof *av), **cmd = av + argc + 2;
    int ac = 0, ncmd = 0;
    k->av = av;
    if (!av)
        return 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int takes = 0;
        if (i && !strncmp(a, "--", 2)) {
            for (const vla_cli_opt *p = check_own; p->name; p++)
                takes |= !strcmp(p->name, a + 2) && p->arg;
            for (const vla_cli_opt *p = vla_cli_common(); p->name; p++)
                takes |= !strcmp(p->name, a + 2) && p->arg;
            k->have_stream |= !strcmp(a, "--stream");
            k->have_ck |= !strcmp(a, "--checkpoints");
        } else if (i && !k->have_stream) {
            av[ac++] = "--stream";
            k->have_stream = 1;
        }
        if (!i || strcmp(a, "--resume"))
            cmd[ncmd++] = argv[i];
        av[ac++] = argv[i];
        if (takes && i + 1 < argc)
            cmd[ncmd++] = av[ac++] = argv[++i];
    }
    av[ac] = cmd[ncmd] = NULL;
    k->cmd = cmd;
    k->ac = ac;
    k->ncmd = ncmd;
    return 0;
}

/* --outputs: one configuration, a kernel's read-outs judged (judge.c); its exit status */
static int judge_mode(check_t *k, int argc, char **argv)
{
    opts_t *o = &opts;
    if (o->models || o->precs || o->tracks || o->require || strcmp(o->forms, "seq,chunk:64"))
        vla_cli_die(&check_spec, "--outputs judges one configuration: --model, --precision, "
                                 "--track and --form, not --%s", o->models ? "models"
                    : o->precs ? "precisions" : o->tracks ? "tracks" : o->require ? "require"
                                                                       : "forms");
    int prec_given = 0;
    for (int i = 1; i < argc; i++)
        prec_given |= !strcmp(argv[i], "--precision");
    o->window = o->window ? o->window : 64;
    const judge_opts jo = {o->outputs, o->report, o->window, o->slack, k->ncmd, k->cmd};
    return judge_outputs(&k->c, &check_spec, &jo, prec_given);
}

/* --states: one configuration, a cache's saved states judged against their positions
 * (states.c); its exit status */
static int states_mode(check_t *k, int argc, char **argv)
{
    opts_t *o = &opts;
    if (o->outputs)
        vla_cli_die(&check_spec, "--states and --outputs: give one of them (a cache's states, or "
                                 "a kernel's read-outs)");
    if (o->models || o->precs || o->tracks || o->require || strcmp(o->forms, "seq,chunk:64"))
        vla_cli_die(&check_spec, "--states judges one configuration: --model, --precision, "
                                 "--track and --form, not --%s", o->models ? "models"
                    : o->precs ? "precisions" : o->tracks ? "tracks" : o->require ? "require"
                                                                       : "forms");
    int prec_given = 0;
    for (int i = 1; i < argc; i++) {
        prec_given |= !strcmp(argv[i], "--precision");
        if (!strcmp(argv[i], "--report"))
            vla_cli_die(&check_spec, "--report: --states writes its table (--out) and a summary "
                                     "on stderr, no report");
    }
    const states_opts so = {o->states, o->slack};
    return judge_states(&k->c, &check_spec, &so, prec_given);
}

/* the models (--models', else the trace's model.txt's or --model's, else every one), and the
 * names of --models, --precisions and --require checked */
static void choose_models(check_t *k)
{
    const vla_cli_spec *spec = &check_spec;
    opts_t *o = &opts;
    if (o->models && k->c.model_opt)
        vla_cli_die(spec, "--model and --models: give one of them (--model M means --models M)");
    k->how = !o->models ? "the default" : strcmp(o->models, "all") ? "--models" : "--models all";
    if (o->models && !strcmp(o->models, "all"))
        o->models = NULL;
    else if (!o->models && (k->c.model_txt || k->c.model_opt))
        o->models = vla_model_name(k->c.cfg.model), k->how = NULL;
    check_list(spec, "models", o->models, VLA_LIST_MODEL);
    check_list(spec, "precisions", o->precs, VLA_LIST_PREC);
    check_list(spec, "require", o->require, VLA_LIST_PREC);
    for (int p = 0; o->require && p < VLA_NPREC; p++)
        if (in_list(o->require, vla_prec_name((vla_prec)p)) && o->precs &&
            !in_list(o->precs, vla_prec_name((vla_prec)p)))
            vla_cli_die(spec, "--require %s: not among --precisions %s",
                        vla_prec_name((vla_prec)p), o->precs);
}

/* the ways (with their K: cg:4) and the forms, each parsed as --track and --form parse one */
static void ways_and_forms(check_t *k)
{
    const vla_cli_spec *spec = &check_spec;
    const opts_t *o = &opts;
    if (!o->tracks) {
        vla_track_spec(&k->c.cfg, k->ways[k->nways++], sizeof k->ways[0]);
    } else if (!strcmp(o->tracks, "all")) {
        for (int tk = 0; tk < VLA_NTRACK; tk++)
            snprintf(k->ways[k->nways++], sizeof k->ways[0], "%s", vla_track_name((vla_track)tk));
    } else {
        char items[VLA_NTRACK * 4][48];
        int n = split(spec, "tracks", o->tracks, items[0], VLA_NTRACK * 4, sizeof items[0]);
        for (int i = 0; i < n; i++) {
            vla_config probe = k->c.cfg;
            if (vla_track_set(&probe, items[i]))
                vla_cli_die(spec, "--tracks: unknown way '%s' (%s; cg:K, cg:TOL, cheb:K)",
                            items[i], vla_names(VLA_LIST_TRACK));
            vla_track_spec(&probe, k->ways[k->nways++], sizeof k->ways[0]);
        }
    }
    char items[MAXFORMS][32];
    int n = split(spec, "forms", o->forms, items[0], MAXFORMS, sizeof items[0]);
    for (int i = 0; i < n; i++) {
        vla_config probe = k->c.cfg;
        if (vla_form_parse(&probe, items[i]))
            vla_cli_die(spec, "--forms: '%s' is not a form (%s; chunk:C with C a power of "
                              "two in 1..%d)", items[i], vla_names(VLA_LIST_FORM),
                        VLA_CHUNK_MAX);
        vla_form_name(&probe, k->forms[k->nforms++], sizeof k->forms[0]);
    }
}

/* rows[nrows]: model mk, way wi, form fi, precision p, refused with the reason where a way, a
 * form, the steps or the reference refuse it: 0, -1 when it is left out (a way --tracks all
 * does not allow the model), 1 when out of memory */
static int make_row(check_t *k, int mk, int wi, int fi, int p)
{
    const vla_cli *c = &k->c;
    row_t *w = &k->rows[k->nrows];
    vla_config *g = &w->cfg;
    vla_cli_config_for(c, (vla_model_kind)mk, g);
    g->prec = (vla_prec)p;
    if (vla_model_has_A(g->model))
        vla_track_set(g, k->ways[wi]);
    vla_form_parse(g, k->forms[fi]);
    vla_track_spec(g, w->way, sizeof w->way);
    memcpy(w->form, k->forms[fi], sizeof w->form); /* (both 32 bytes) */
    w->fi = fi;
    snprintf(w->name, sizeof w->name, "%s %s %s%s%s", vla_model_name(g->model),
             vla_prec_name(g->prec), w->way, g->form == VLA_FORM_SEQ ? "" : " ",
             g->form == VLA_FORM_SEQ ? "" : w->form);
    vla_error ve;
    const char *why = NULL;
    const long C = g->form == VLA_FORM_CHUNK ? g->chunk : 1;
    if (vla_track_check(g, &ve)) {
        if (opts.tracks && !strcmp(opts.tracks, "all"))
            return -1;
        why = vla_error_msg(&ve);
    } else if (vla_form_check(g, &ve)) {
        why = vla_error_msg(&ve);
    } else if (C > c->steps) {
        snprintf(w->skip, sizeof w->skip, "--forms %s: C = %ld exceeds the %ld steps", w->form, C,
                 c->steps);
        w->refused = 1;
    }
    if (!why && !w->refused &&
        (vla_cli_gates_check(c, g, &ve) ||
         vla_cli_form_input_check(c, g, &ve))) /* delta's gates in a chunk */
        why = vla_error_msg(&ve);
    if (!why && !w->refused && p == VLA_F64 && c->ref != REF_EXACT)
        why = "a binary64 row is measured against the exact reference (--ref exact), not against "
              "itself or nothing: give --ref exact, or leave f64 out of --precisions";
    if (why) {
        snprintf(w->skip, sizeof w->skip, "%s", why);
        w->refused = 1;
    }
    /* the checkpoints where the form has a state (multiples of C) */
    w->cks = malloc((size_t)k->nck0 * sizeof *w->cks);
    w->curve = calloc((size_t)k->nck0 * NQ, sizeof *w->curve);
    if (!w->cks || !w->curve)
        return 1;
    vla_checkpoints(c->steps, c->per_decade, w->cks, k->nck0);
    w->nck = vla_checkpoints_form(g, w->cks, k->nck0);
    k->nrows++;
    return 0;
}

/* the rows: the lists' models x ways (one for the models without A) x forms x precisions; a
 * configuration a way or a form refuses is a row that says why (with --tracks all, the ways a
 * model does not allow are left out): 1 when out of memory */
static int make_rows(check_t *k)
{
    k->cap = VLA_NMODEL * k->nways * k->nforms * VLA_NPREC;
    k->rows = calloc((size_t)k->cap, sizeof *k->rows);
    k->order = calloc((size_t)k->cap, sizeof *k->order);
    if (!k->rows || !k->order)
        return 1;
    k->nck0 = vla_checkpoints(k->c.steps, k->c.per_decade, NULL, 0);
    for (int mk = 0; mk < VLA_NMODEL; mk++) {
        if (opts.models && !in_list(opts.models, vla_model_name((vla_model_kind)mk)))
            continue;
        for (int wi = 0; wi < (vla_model_has_A((vla_model_kind)mk) ? k->nways : 1); wi++)
            for (int fi = 0; fi < k->nforms; fi++)
                for (int p = 0; p < VLA_NPREC; p++)
                    if ((!opts.precs || in_list(opts.precs, vla_prec_name((vla_prec)p))) &&
                        make_row(k, mk, wi, fi, p) > 0)
                        return 1;
    }
    return 0;
}

/* the groups: the rows that share a reference (ref_key), each advanced beside one run of it; the
 * f64 groups first, since their exact reference is the longest work, and the groups run in
 * parallel, each on one thread. order: the rows group by group, from group[g] to group[g + 1]:
 * 1 when out of memory */
static int make_groups(check_t *k)
{
    const row_t *rows = k->rows;
    const int nrows = k->nrows;
    int ngroups = 0, *group = calloc((size_t)k->cap + 1, sizeof *group);
    char (*key)[1200] = calloc((size_t)k->cap, sizeof *key);
    int *gof = calloc((size_t)k->cap, sizeof *gof);
    k->group = group;
    k->gof = gof;
    if (!group || !key || !gof)
        return 1;
    for (int i = 0; i < nrows; i++) {
        gof[i] = -1;
        if (rows[i].refused)
            continue;
        ref_key(&k->c, &rows[i].cfg, key[i], sizeof key[i]);
        for (int j = 0; j < i && gof[i] < 0; j++)
            if (gof[j] >= 0 && !strcmp(key[i], key[j]))
                gof[i] = gof[j];
        if (gof[i] < 0)
            gof[i] = ngroups++;
    }
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int g = 0; g < ngroups; g++) {
            int first = -1;
            for (int i = 0; i < nrows && first < 0; i++)
                first = gof[i] == g ? i : -1;
            if ((rows[first].cfg.prec == VLA_F64) != !pass)
                continue;
            for (int i = 0; i < nrows; i++)
                if (gof[i] == g)
                    k->order[n++] = i;
        }
    /* the groups' bounds in order */
    int ng = 0;
    for (int j = 0; j < n; j++)
        if (!j || gof[k->order[j]] != gof[k->order[j - 1]])
            group[ng++] = j;
    group[ng] = n;
    k->ng = ng;
    free(key);
    return 0;
}

/* the checkpoint (with --out FILE): a group is a unit of work. Its key adds, to the options, the
 * settings in the order they apply (the trace's model.txt's, then --set's): they make every
 * model's constants, where the key's description is of one model's. vla_units_open's status */
static int open_units(check_t *k)
{
    const char *sets[VLA_CLI_MAXSETS + 64];
    const int nsets = cli_settings(&k->c, sets, VLA_CLI_MAXSETS + 64);
    size_t xlen = 64, umax = 0;
    for (int i = 0; i < nsets; i++)
        xlen += strlen(sets[i]) + 1;
    for (int g = 0; g < k->ng; g++) {
        const size_t n = group_size(k->rows, k->order, k->group, g);
        umax = n > umax ? n : umax;
    }
    char *extra = malloc(xlen);
    if (!extra)
        return 1;
    int xn = snprintf(extra, xlen, "--set=");
    for (int i = 0; i < nsets; i++)
        xn += snprintf(extra + xn, xlen - xn, "%s%s", i ? " " : "", sets[i]);
    snprintf(extra + xn, xlen - xn, "\n");
    int st = vla_units_open(&k->u, &k->c, &check_spec, "group", extra, k->ng, umax);
    free(extra);
    return st;
}

/* group g run (not read back), its rows judged, its record saved when they all ran */
static void run_group(check_t *k, int g, vla_progress *prog, long *done)
{
    const vla_cli *c = &k->c;
    row_t *rows = k->rows;
    const int *order = k->order, *group = k->group;
    const int n = group[g + 1] - group[g];
    member_t *mb = calloc((size_t)n, sizeof *mb);
    result *res = calloc((size_t)n * c->runs, sizeof *res);
    refck_t rk = {0};
    for (int use_dd = 1; use_dd >= 0; use_dd--) { /* dd, or MPFR where its check failed */
        for (int j = 0; mb && res && j < n; j++) {
            row_t *w = &rows[order[group[g] + j]];
            mb[j] = (member_t){&w->cfg, w->cks, w->nck, 0, res + (size_t)j * c->runs, w->curve,
                               {0, ""}, 0, NULL, {0}, 0};
        }
        if (!mb || !res || vla_cli_stop ||
            check_group(c, mb, n, prog, done, use_dd, &rk) != REDO_MPFR)
            break;
        /* the MPFR pass steps the group again: its head-steps count again */
#ifdef _OPENMP
#pragma omp critical(check_progress)
#endif
        prog->total += group_steps(rows, order, group[g], group[g + 1]) * c->runs;
    }
    /* a stop from here on cut nothing short: the engines had all stepped to their end */
    const int stopped = vla_cli_stop != 0;
    int all = mb && res && !stopped;
    for (int j = 0; j < n; j++) {
        row_t *w = &rows[order[group[g] + j]];
        if (!mb || !res)
            snprintf(w->skip, sizeof w->skip, "out of memory");
        else if (mb[j].failed)
            snprintf(w->skip, sizeof w->skip, "%s", mb[j].err.msg); /* (a stop: none) */
        else if (!stopped) {
            w->ran = 1;
            merge(mb[j].res, c->runs, &w->head);
            w->r = mb[j].res[0];
            judge(w, opts.threshold);
        }
        all &= w->ran;
    }
#ifdef _OPENMP
#pragma omp critical(check_units)
#endif
    {
        refck_add(&refck, &rk);
        if (all && group_save(k->u, g, &rk, rows, order, group))
            fprintf(stderr, "vla-check: warning: out of memory for the checkpoint of group "
                            "%d: a --resume runs it again\n", g);
    }
    free(mb);
    free(res);
}

/* the groups: those finished before read back, the others run in parallel */
static void run_groups(check_t *k)
{
    const int *order = k->order, *group = k->group;
    for (int g = 0; g < k->ng; g++) {
        refck_t rk;
        if (!group_load(k->u, g, &rk, k->rows, order, group, &k->c))
            continue;
        refck_add(&refck, &rk);
        for (int j = group[g]; j < group[g + 1]; j++)
            judge(&k->rows[order[j]], opts.threshold);
    }
    /* progress: the steps of every head of the groups to run (a group's steps: its longest
     * row's) */
    long total = 0, done = 0;
    for (int g = 0; g < k->ng; g++)
        total += group_steps(k->rows, order, group[g], group[g + 1]) * k->c.runs;
    vla_progress prog;
    vla_progress_start(&prog, total, "head-steps");
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int g = 0; g < k->ng; g++)
        if (!k->rows[order[group[g]]].ran) /* (else read back) */
            run_group(k, g, &prog, &done);
    vla_progress_end(&prog);
}

/* the table's header lines: what ran, on what, against what */
static void table_meta(check_t *k, const char *files)
{
    const vla_cli *c = &k->c;
    vla_dat *out = k->out;
    vla_dat_meta(out, k->how ? "models" : "model", "%s%s",
                 opts.models ? opts.models : "every model", vla_cli_model_src(c, k->how, 1));
    vla_dat_meta(out, "stream", "%s", c->stream);
    vla_dat_meta(out, "files", "%s", files);
    vla_dat_meta(out, "steps", "%ld", c->steps);
    vla_dat_meta(out, "runs", "%d (every head, the worst in each cell)", c->runs);
    vla_dat_meta(out, "backend", "%s", c->backend);
    char exact[600];
    refck_describe(c->ref_bits, c->steps, "group", exact, sizeof exact);
    vla_dat_meta(out, "reference", "f64 (lib in binary64 on the rounded inputs); the f64 rows: %s",
                 exact);
    vla_dat_meta(out, "constants", "d=%d dv=%d mode=%s and each model's defaults (--set changes "
                                   "them)", c->cfg.d, c->cfg.dv, c->cfg.mode ? "fast" : "strict");
    vla_dat_meta(out, "threshold", "%g", opts.threshold);
    vla_dat_meta(out, "checkpoints", "%ld (S and A measured there; o at every step, in a chunk "
                 "form %s; a chunk form's steps and checkpoints rounded down to multiples of C)",
                 k->nck0, strcmp(c->backend, "cpu") ? "at each chunk's end (the backend's read-outs)"
                                                    : "at every token of each chunk");
    vla_dat_meta(out, "forms", "%s", opts.forms);
    for (int mk = 0; mk < VLA_NMODEL; mk++) /* a file a checked model does not read: said */
        for (int i = 0; i < k->nrows; i++)
            if (k->rows[i].cfg.model == (vla_model_kind)mk) {
                char unread[600];
                if (vla_cli_unread(c, &k->rows[i].cfg, unread, sizeof unread)) {
                    vla_dat_meta(out, "unread", "%s", unread);
                    fprintf(stderr, "vla-check: warning: %s\n", unread);
                }
                break;
            }
}

/* the rows' counts and --require's gate, the header's lines of the rows that did not run and of
 * the causes, and the summary line (summary.h): what failed, by row */
static void table_summary(check_t *k)
{
    const row_t *rows = k->rows;
    const int nrows = k->nrows;
    for (int i = 0; i < nrows; i++) {
        const row_t *w = &rows[i];
        if (!w->ran) {
            vla_dat_meta(k->out, w->refused ? "refused" : "skipped", "%s: %s", w->name, w->skip);
            k->nrefused += w->refused;
            continue;
        }
        k->nrun++;
        k->nfail += w->fail;
        int req = opts.require && in_list(opts.require, vla_prec_name(w->cfg.prec));
        k->gate |= req && w->fail;
        for (int j = 0; j < w->ncause; j++)
            vla_dat_meta(k->out, w->fail ? "FAIL" : "note", "%s: %s", w->name, w->cause[j]);
    }
    vla_summary sm = {.len = 0};
    vla_summary_add(&sm, 0, "%d of %d rows fail (threshold %g)", k->nfail, k->nrun, opts.threshold);
    static const char *const what[3] = {"non-finite", "a read-out exactly 0 (its denominator "
                                        "overflowed)", "an error of S or o past 1"};
    for (int q = 0; q < 3; q++) {
        char names[600] = "";
        int n = 0, count = 0;
        for (int i = 0; i < nrows; i++) {
            const result *r = &rows[i].r;
            int hit = !rows[i].ran ? 0 : q == 0 ? r->nonfinite != 0 : q == 1 ? r->ozero != 0
                      : r->first[QS][NTHR - 1] || !(r->win.worst < 1);
            if (hit && count++ < 6 && n < (int)sizeof names)
                n += snprintf(names + n, sizeof names - n, "%s%s", count > 1 ? ", " : "",
                              rows[i].name);
        }
        if (count)
            vla_summary_add(&sm, 0, "%s in %d: %s%s", what[q], count, names,
                            count > 6 ? ", ..." : "");
    }
    /* loud: a saturated cache lost more than a rounding, pass or fail */
    char sat[600] = "";
    int nsat = 0, ns = 0;
    for (int i = 0; i < nrows; i++)
        if (rows[i].ran && rows[i].r.sats && nsat++ < 6 && ns < (int)sizeof sat)
            ns += snprintf(sat + ns, sizeof sat - ns, "%s%s", nsat > 1 ? ", " : "", rows[i].name);
    if (nsat)
        vla_summary_add(&sm, 1, "the state cache saturated in %d: %s%s", nsat, sat,
                        nsat > 6 ? ", ..." : "");
    if (k->nrefused || nrows - k->nrun - k->nrefused)
        vla_summary_add(&sm, 0, "%d refused by their form, way or reference, %d did not run (the lines "
                        "above)", k->nrefused, nrows - k->nrun - k->nrefused);
    /* a required precision passes only where rows of it ran: one with none fails the gate */
    for (int p = 0; opts.require && p < VLA_NPREC; p++) {
        int ran = 0;
        for (int i = 0; i < nrows; i++)
            ran += rows[i].ran && rows[i].cfg.prec == (vla_prec)p;
        if (in_list(opts.require, vla_prec_name((vla_prec)p)) && !ran) {
            size_t n = strlen(k->unmet);
            snprintf(k->unmet + n, sizeof k->unmet - n, "%s%s", n ? ", " : "",
                     vla_prec_name((vla_prec)p));
        }
    }
    if (k->unmet[0]) {
        k->gate = 1;
        vla_summary_add(&sm, 1, "--require %s: no row of %s ran, so nothing of it was checked",
                        opts.require, k->unmet);
    }
    vla_cli_summary_end(&sm, check_spec.prog, k->out);
}

/* the table's rows, one per row that ran */
static void table_rows(const check_t *k)
{
    vla_dat_columns(k->out, COLUMNS);
    for (int i = 0; i < k->nrows; i++) {
        const row_t *w = &k->rows[i];
        if (!w->ran)
            continue;
        double v[NCOL];
        const char *nm[NCOL] = {vla_model_name(w->cfg.model), vla_prec_name(w->cfg.prec), w->way,
                                w->form};
        int j = 4;
        for (int q = 0; q < NQ; q++)
            for (int t = 0; t < NTHR; t++, j++)
                cell_t(w->r.first[q][t], &v[j], &nm[j]);
        for (int q = 0; q < NQ; q++)
            v[j++] = w->r.worst[q];
        cell_t(w->r.nonfinite, &v[j], &nm[j]), j++;
        cell_t(w->r.ozero, &v[j], &nm[j]), j++;
        cell_t(w->r.notpd, &v[j], &nm[j]), j++;
        cell_t(w->r.stagnant, &v[j], &nm[j]), j++;
        v[j++] = (double)w->r.guards;
        v[j++] = w->r.win.worst;
        v[j++] = w->r.raw.worst;
        nm[j++] = w->fail ? "FAIL" : "ok";
        vla_dat_row_named(k->out, v, nm, NCOL);
    }
}

/* the summary on stderr: what failed and why, what did not run, and the gate's verdict last, one
 * required precision at a time; the exit status */
static int say_summary(const check_t *k)
{
    const row_t *rows = k->rows;
    const int nrows = k->nrows;
    const char *report = opts.report;
    for (int i = 0; i < nrows; i++)
        if (rows[i].ran && rows[i].fail)
            fprintf(stderr, "vla-check: FAIL %s: %s\n", rows[i].name, rows[i].cause[0]);
        else if (!rows[i].ran)
            fprintf(stderr, "vla-check: %s %s: %s\n", rows[i].refused ? "refused" : "did not run",
                    rows[i].name, rows[i].skip);
    /* a row that did not run (a read error, memory) is a run that failed: exit 1, as documented */
    int nlost = nrows - k->nrun - k->nrefused;
    fprintf(stderr, "vla-check: %d of %d rows fail (threshold %g; each row against binary64 on the "
                    "inputs rounded to its policy's io format: the inputs' own rounding is not "
                    "counted)%s%s%s%s%s%s\n", k->nfail, k->nrun,
            opts.threshold, strcmp(report, "none") ? "; report: " : "",
            strcmp(report, "none") ? report : "", strcmp(report, "none") ? ".md" : "",
            k->nrefused ? "; configurations refused by their form, way or reference: the header's "
                          "'# refused:' lines" : "",
            k->gate ? k->unmet[0] ? "; a precision of --require had no row that ran: exit 1"
                                  : "; a precision of --require failed: exit 1" : "",
            nlost && !k->gate ? "; a row did not run (the line above): exit 1" : "");
    char said[600] = "";
    for (int p = 0, n = 0; opts.require && p < VLA_NPREC && n < (int)sizeof said; p++) {
        if (!in_list(opts.require, vla_prec_name((vla_prec)p)))
            continue;
        int ran = 0, bad = 0;
        for (int i = 0; i < nrows; i++)
            if (rows[i].ran && rows[i].cfg.prec == (vla_prec)p)
                ran++, bad += rows[i].fail;
        n += snprintf(said + n, sizeof said - n, "%s%s %s", n ? "; " : "",
                      vla_prec_name((vla_prec)p), !ran ? "FAILED (no row ran)" : bad ? "FAILED" :
                      "passed");
        if (ran && n < (int)sizeof said)
            n += snprintf(said + n, sizeof said - n, " (%d of %d rows fail)", bad, ran);
    }
    if (opts.require)
        fprintf(stderr, "vla-check: --require: %s; exit %d\n", said, k->gate || nlost);
    return k->gate || nlost;
}

int main(int argc, char **argv)
{
    static check_t k;
    const vla_cli_spec *spec = &check_spec;
    if (command_words(&k, argc, argv))
        return 1;
    int help = 0;
    for (int i = 1; i < argc; i++)
        help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "--man") ||
                !strcmp(argv[i], "--version");
    if (!k.have_stream && !help)
        vla_cli_die(spec, "which inputs? give trace:DIR (your model's q.npy, k.npy, v.npy) or a "
                          "stream such as lmlike");
    vla_cli *c = &k.c;
    vla_cli_parse(c, spec, k.ac, k.av);
    c->argc = argc; /* the command as typed, for the report */
    c->argv = argv;
    if (!k.have_ck)
        c->per_decade = 100; /* the first steps past a threshold to 2% */
    if ((opts.outputs || opts.states) && opts.threshold_given)
        vla_cli_die(spec, "--threshold is the rows' (vla-check without --outputs or --states); a "
                          "kernel's outputs and a cache's states are judged against budgets: "
                          "--slack");
    if (!opts.outputs && (opts.window || (opts.slack && !opts.states)))
        vla_cli_die(spec, "--%s goes with --outputs (a kernel's read-outs to judge)",
                    opts.window ? "window" : "slack");
    if (opts.states) {
        int st = states_mode(&k, argc, argv);
        free(k.av);
        return st;
    }
    if (opts.outputs) {
        int st = judge_mode(&k, argc, argv);
        free(k.av);
        return st;
    }
    if (c->cfg.form != VLA_FORM_SEQ)
        vla_cli_die(spec, "--form: vla-check takes its forms from --forms (a list); --form goes "
                          "with --outputs and --states");
    choose_models(&k);
    ways_and_forms(&k);
    if (make_rows(&k) || make_groups(&k))
        return 1;
    /* an unwritable table or report fails now, not after the work; from here SIGINT stops the
     * engines */
    if (strcmp(opts.report, "none") && report_paths_ok(opts.report, c, 0))
        return release(2, &k);
    k.out = vla_cli_out(c, spec);
    int st = open_units(&k);
    if (st)
        return release(vla_cli_close(k.out, c, spec, st), &k);
    run_groups(&k);
    if (vla_cli_stop) { /* the groups finished are saved (vla_units_end says where); the table
                         * closed without its columns line is discarded */
        vla_units_end(k.u, 3);
        return release(vla_cli_close(k.out, c, spec, 3), &k);
    }
    vla_units_end(k.u, 0); /* the checkpoint goes when vla-check exits 0, or 1 once its outputs
                            * are written (ckpt_verdict_written) */
    char files[600];
    vla_cli_stream_files(c, files, sizeof files);
    table_meta(&k, files);
    table_summary(&k);
    table_rows(&k);
    if (vla_cli_close(k.out, c, spec, 0))
        return 1;
    vla_cli shown = *c; /* the report's command: the check's, without --resume */
    shown.argc = k.ncmd;
    shown.argv = k.cmd;
    if (strcmp(opts.report, "none") &&
        write_report(opts.report, &shown, &opts, k.rows, k.nrows, k.nck0, files,
                     strcmp(c->out, "-") ? c->out : "standard output"))
        return 1;
    ckpt_verdict_written();
    return release(say_summary(&k), &k);
}
