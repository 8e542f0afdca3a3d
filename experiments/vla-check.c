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
/* steps per advance: the inputs of a window are read once for a group's engines, and its
 * read-outs kept for the comparison */
#define WIN 256
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
    const char *outputs; /* --outputs DIR2: a kernel's read-outs to judge */
    long window;         /* --window W (0: not given) */
    double slack;        /* --slack F (0: not given) */
    int ncmd;            /* the command as typed without --resume: the judge's report's */
    char **cmd;
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
    else if (!strcmp(name, "outputs"))
        o->outputs = val;
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
        for (int r = 0; r < v->nco; r++) {
            long tok = v->t - (v->nco - 1 - r);
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
/* the f64 rows' exact references (and --outputs' two): in double-double (vref_backend_dd) where
 * 256 bits are asked for, each checked against MPFR on its head 0 (vref_ddcheck); a group (or a
 * reference of the judge) whose check fails runs again with MPFR, and so does one that dd cannot
 * run. The header says which and how close (refck_describe). */
typedef struct {
    long dd, mpfr;  /* groups whose reference was dd, and those that fell back to MPFR */
    long refused;   /* ... those in MPFR because dd could not run them */
    long compared;  /* the dd checks' comparisons */
    double worst;   /* ... their largest relative difference (the checks that passed) */
    double failed;  /* ... that of the checks that failed (NaN: not finite in one of the two) */
} refck_t;
/* the table's or the judge's: each group counts its own (a group's record keeps it: a resumed
 * group's references are said as when it ran), added here when it ends (refck_add) */
static refck_t refck;
#define REDO_MPFR 2 /* the dd reference failed its check: run it again with MPFR */

/* *worst becomes w where w is larger, or NaN (a NaN, an overflow in one, stays) */
static void refck_worst(double *worst, double w)
{
    if (!isnan(*worst) && !(w <= *worst))
        *worst = w;
}

/* a group's counts into the table's (in any order: the same sums and largest differences) */
static void refck_add(refck_t *to, const refck_t *g)
{
    to->dd += g->dd;
    to->mpfr += g->mpfr;
    to->refused += g->refused;
    to->compared += g->compared;
    refck_worst(&to->worst, g->worst);
    refck_worst(&to->failed, g->failed);
}

/* what the exact references were, in words: what the groups of the table or the judge's
 * references ("group", "reference": an s where there are more than one) */
static void refck_describe(long bits, long steps, const char *what, char *buf, size_t len)
{
    char fell[300] = "", bad[40];
    if (isnan(refck.failed))
        snprintf(bad, sizeof bad, "not finite in one of the two");
    else
        snprintf(bad, sizeof bad, "%.2g", refck.failed);
    if (refck.refused)
        snprintf(fell, sizeof fell, "; %ld %s%s in MPFR, which double-double could not run",
                 refck.refused, what, refck.refused == 1 ? "" : "s");
    if (!refck.dd && !refck.mpfr)
        snprintf(buf, len, "exact (MPFR, %ld bits%s)", bits, fell);
    else if (!refck.dd)
        snprintf(buf, len, "exact (MPFR, 256 bits: the double-double reference of %ld %s%s failed "
                           "its check against MPFR on head 0 (largest relative difference %s, "
                           "trusted to %.0e)%s)", refck.mpfr, what, refck.mpfr == 1 ? "" : "s", bad,
                 VREF_DD_TRUST, fell);
    else {
        char why[80] = "";
        if (refck.mpfr)
            snprintf(why, sizeof why, " (largest relative difference %s)", bad);
        snprintf(buf, len, "exact (%ld %s%s in double-double, 106 bits, checked against MPFR at "
                           "256 bits on head 0 to t = %ld at %ld checkpoints: largest relative "
                           "difference %.2g, trusted to %.0e; %ld %s%s in MPFR, whose dd reference "
                           "failed the check%s%s)", refck.dd, what, refck.dd == 1 ? "" : "s",
                 steps < VREF_DD_CHECK_STEPS ? steps : VREF_DD_CHECK_STEPS, refck.compared,
                 refck.worst, VREF_DD_TRUST, refck.mpfr, what, refck.mpfr == 1 ? "" : "s", why,
                 fell);
    }
}

/* The engine of rs (vla_cli_ref_spec's, or any other spec: made as it is): the exact reference
 * in double-double where use_dd and MPFR at the default bits are asked for, with its check in
 * *chk (else NULL); MPFR where dd cannot run it. 0, else 1 with the reason in why. */
static int ref_new(vla_engine **ref, vref_ddcheck **chk, vla_engine_spec rs, int use_dd,
                   refck_t *rk, vla_error *why)
{
    *chk = NULL;
    if (use_dd && rs.backend == vref_backend_exact() && rs.ref_bits == VREF_DEFAULT_BITS) {
        rs.backend = vref_backend_dd();
        if (!vla_engine_new(ref, &rs, why)) {
            if (!vref_ddcheck_new(chk, &rs, VREF_DD_CHECK_STEPS, why))
                return 0;
            vla_engine_free(*ref);
            *ref = NULL;
            return 1;
        }
        rs.backend = vref_backend_exact();
        rk->refused++;
    }
    return vla_engine_new(ref, &rs, why) != 0;
}

/* a reference's check at its end (none: NULL), counted in *rk for refck_describe: REDO_MPFR when
 * it failed, and the reference must run again with MPFR */
static int refck_note(const vref_ddcheck *chk, refck_t *rk)
{
    if (!chk)
        return 0;
    const int ok = vref_ddcheck_ok(chk);
    if (ok) {
        rk->dd++;
        rk->compared += vref_ddcheck_compared(chk);
    } else
        rk->mpfr++;
    refck_worst(ok ? &rk->worst : &rk->failed, vref_ddcheck_worst(chk));
    return ok ? 0 : REDO_MPFR;
}

static int check_group(const vla_cli *c, member_t *mb, int n, vla_progress *prog, long *done,
                       int use_dd, refck_t *rk)
{
    const vla_config *cfg = mb[0].cfg;
    const int nr = c->runs, d = cfg->d, dv = cfg->dv, hasA = vla_model_has_A(cfg->model);
    vla_cli rc = *c;
    rc.ref = cfg->prec == VLA_F64 ? REF_EXACT : REF_F64;
    vla_engine *ref = NULL;
    vref_ddcheck *chk = NULL;
    int redo = 0;
    taps_t tr = {NULL, NULL, dv, 1, NULL};
    size_t nbuf = (size_t)d * (d > dv ? d : dv);
    double *x = malloc(nbuf * sizeof *x), *y = malloc(nbuf * sizeof *y);
    double *lam = malloc((size_t)d * sizeof *lam);
    tr.o = malloc((size_t)nr * RING * dv * sizeof *tr.o);
    tr.seen = malloc((size_t)nr * RING);
    vla_error refwhy = {VLA_ENOMEM, "out of memory"};
    int refbad = !x || !y || !lam || !tr.o || !tr.seen;
    /* the group's inputs, read (a trace) or drawn (a stream) once for all its engines, a window
     * of WIN steps at a time, which every engine takes as prepared inputs in a ring */
    unsigned want = 0;
    for (int k = 0; k < n; k++)
        want |= vla_model_reads(mb[k].cfg);
    vla_inputs in;
    vla_error ve;
    if (!refbad && (refbad = vla_inputs_open(&in, c->stream, c->seed, d, dv, nr, WIN, c->steps,
                                             want, &ve) != 0))
        refwhy = ve;
    else if (refbad)
        memset(&in, 0, sizeof in);
    long tend = 0;
    for (int k = 0; k < n; k++) {
        member_t *w = &mb[k];
        vla_engine_spec sp, rs;
        vla_cli_engine_spec(&rc, w->cfg, &sp);
        sp.threads = 1; /* the groups run in parallel, each on one thread (the same bits) */
        sp.stream = NULL;
        sp.in = in.in;
        sp.is_read = in.is_read;
        sp.T = in.T; /* WIN, or a shorter stream's length */
        sp.cycle = 1; /* step t from slot (t - 1) % T of the window */
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
            w->failed = 1, vla_fail(&w->err, VLA_ENOMEM, "out of memory");
        else if (!in.in) /* the group's inputs could not be had: its reason */
            w->failed = 1, w->err = refwhy;
        else if (vla_engine_new(&w->m, &sp, &w->err))
            w->failed = 1;
        if (!refbad && !ref) { /* the group's reference, from its first member's spec */
            vla_cli_ref_spec(&rc, &sp, &rs);
            rs.taps = VLA_TAP_O;
            rs.on_step = on_step;
            rs.ctx = &tr;
            refbad = ref_new(&ref, &chk, rs, use_dd, rk, &refwhy);
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
        if (vla_inputs_fill(&in, t, to, &ve)) {
            refwhy = ve;
            refbad = 1;
            break;
        }
        if (vla_engine_advance(ref, to)) {
            refwhy = *vla_engine_error(ref);
            refbad = 1;
            break;
        }
        int rc;
        if (chk && (rc = vref_ddcheck_at(chk, ref, to))) {
            vla_fail(&refwhy, rc, "the reference's check stopped");
            refbad = 1;
            break;
        }
        for (int k = 0; k < n; k++) { /* the window's read-outs, step by step */
            member_t *w = &mb[k];
            if (w->failed || w->ci >= w->nck)
                continue;
            if (vla_engine_advance(w->m, to)) {
                w->err = *vla_engine_error(w->m);
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
                    passed(r, QO, e = vla_rel_fro(om, oref, dv), s + 1);
                    if (!(e <= cv[QO]))
                        cv[QO] = e;
                }
                if (s < upto)
                    upto = s;
            }
            w->done = upto;
        }
#ifdef _OPENMP
#pragma omp critical(check_progress)
#endif
        vla_progress_update(prog, *done += (to - t) * nr);
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
                passed(r, QS, vla_rel_fro(x, y, (long)d * dv), t);
                if (hasA) {
                    vla_engine_get(m, h, VLA_Q_A, x);
                    vla_engine_get(ref, h, VLA_Q_A, y);
                    passed(r, QA, vla_rel_fro(x, y, (long)d * d), t);
                    /* the smallest eigenvalue of A's symmetric part, as vla-drift's lambda_min */
                    if (!r->notpd && (vref_sym_eig(x, d, lam) || !(lam[0] > 0)))
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
    }
    if (!refbad)
        redo = refck_note(chk, rk);
    vref_ddcheck_free(chk);
    for (int k = 0; k < n; k++) {
        if (refbad && !mb[k].failed)
            mb[k].failed = 1, mb[k].err = refwhy;
        vla_engine_free(mb[k].m);
        free(mb[k].tm.o);
        free(mb[k].tm.seen);
    }
    vla_engine_free(ref);
    vla_inputs_free(&in);
    free(x);
    free(y);
    free(lam);
    free(tr.o);
    free(tr.seen);
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

/* the verdict and what the harness knows of the causes (docs/math.md, docs/findings.md, trace.md) */
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
static int report_paths_ok(const char *prefix, const vla_cli *c, int judged)
{
    static const char *const exts[2][4] = {{".md", "-errors.dat", ".gp", ".png"},
                                           {".md", ".json"}};
    const char *const *ext = exts[judged != 0];
    char in[4200];
    vla_error why;
    if (!*prefix || prefix[strlen(prefix) - 1] == '/') {
        fprintf(stderr, "vla-check: --report '%s': a prefix of file names is needed (PREFIX.md, "
                        "...), not %s (try --help)\n", prefix, *prefix ? "a folder" : "nothing");
        return 2;
    }
    if (vla_gp_path_bad(prefix, &why)) {
        fprintf(stderr, "vla-check: --report: %s (try --help)\n", vla_error_msg(&why));
        return 2;
    }
    struct stat so, sr;
    int have_out = strcmp(c->out, "-") && stat(c->out, &so) == 0;
    for (int i = 0; i < (judged ? 2 : 4); i++) {
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
               "(%ld bits; double-double checked against MPFR, or MPFR: the table's reference line says "
               "which). The error of S and A is measured at %ld log-spaced checkpoints, "
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

/* ---- --outputs DIR2: your kernel's own read-outs against the exact reference (docs/trace.md,
 * "Your own kernel, judged"; issue 36). The kernel's error is measured per head beside what the
 * policy attains (vlastab's own emulation in seq and in the kernel's form, its read-outs taken
 * through the same output format) and what the inputs' rounding alone costs; a head is ok when
 * its windowed error is within --slack times the largest of the three. ---- */

/* x is worse than cur: larger, or NaN (a NaN stays the worst) */
static int worse(double x, double cur) { return !isnan(cur) && !(x <= cur); }

/* sqrt(a / b), the ratio of two norms from their squares: 0 when a is 0, Inf when only b is */
static double nratio(double a, double b) { return a == 0 ? 0 : sqrt(a) / sqrt(b); }

/* the spacing of format f's numbers at x: 2^(E - p + 1), E = x's exponent, at least emin */
static double ulp_in(vla_fmt f, double x)
{
    int e, emin = ilogb(vla_fmt_min_normal(f));
    frexp(x, &e); /* |x| = m 2^e, m in [1/2, 1): E = e - 1 */
    if (x == 0 || !isfinite(x) || e - 1 < emin)
        e = emin + 1;
    return ldexp(1, e - vla_fmt_precision(f));
}

/* one head's errors against the reference */
typedef struct {
    double rel_rms, max_abs, mrw, max_rel_pt, ulps;
    long t_mrw, t_nonfinite; /* 1-based steps; 0: none */
} meas_t;

/* ... measured a step at a time (meas_step), in memory of the window, not of T: the running sums
 * and the last w steps' squared norms. The squares are summed plainly, as fro2 (lib/measure.c)
 * does in its safe range; a head whose read-outs or errors reach 2^500 (their squares summed over
 * T dv terms would overflow) or stay below 2^-500 is measured again with its numbers scaled by a
 * power of 2 sc, exactly, so that its ratios are those of its numbers, not Inf / Inf: meas_end
 * says which sc the head's largest finite number asks for, known only at its end. */
typedef struct {
    meas_t m;
    double sc, top, se, sr;
    double *e2, *r2; /* steps s - w + 1 .. s, step s at s % w */
    long s, w;       /* the steps measured; the window's length */
} meas_run;

static int meas_begin(meas_run *r, long T, long W, double sc)
{
    *r = (meas_run){.sc = sc, .w = W < T ? W : T}; /* one window of T tokens when T < W */
    r->m.mrw = -1;
    r->e2 = malloc(2 * (size_t)r->w * sizeof *r->e2);
    r->r2 = r->e2 + r->w;
    return r->e2 ? VLA_OK : VLA_ENOMEM;
}

/* step s's read-out x against the reference y (dv numbers), in ulps of format fo: the measures
 * of its numbers, which no order of the steps changes (maxima, worse's NaN kept whatever comes
 * after it; the first non-finite step, the least), and its squared norms, *a (the error's) and
 * *b (the reference's), for meas_push */
static void meas_elems(meas_run *r, long s, const double *x, const double *y, int dv, vla_fmt fo,
                       double *a, double *b)
{
    meas_t *m = &r->m;
    double sa = 0, sb = 0;
    for (int j = 0; j < dv; j++) {
        double diff = fabs(x[j] - y[j]), ds = diff * r->sc, ys = y[j] * r->sc;
        if (isfinite(diff) && diff > r->top)
            r->top = diff;
        if (isfinite(y[j]) && fabs(y[j]) > r->top)
            r->top = fabs(y[j]);
        if (!isfinite(x[j]) && (!m->t_nonfinite || s + 1 < m->t_nonfinite))
            m->t_nonfinite = s + 1;
        sa += ds * ds;
        sb += ys * ys;
        if (worse(diff, m->max_abs))
            m->max_abs = diff;
        if (worse(diff / ulp_in(fo, y[j]), m->ulps))
            m->ulps = diff / ulp_in(fo, y[j]);
    }
    *a = sa, *b = sb;
}

/* the next step's squared norms (meas_elems'), in step order: the sums and the windows */
static void meas_push(meas_run *r, double a, double b)
{
    meas_t *m = &r->m;
    const long s = r->s++, w = r->w;
    r->e2[s % w] = a;
    r->r2[s % w] = b;
    r->se += a;
    r->sr += b;
    if (worse(nratio(a, b), m->max_rel_pt))
        m->max_rel_pt = nratio(a, b);
    if (s < w - 1)
        return;
    /* the window of w tokens ending here: the error's norm over the window's read-outs' norm, so
     * that a read-out near 0 weighs as little as it is; at the worst one, its token with the
     * largest error */
    double ea = 0, eb = 0;
    for (long t = s - w + 1; t <= s; t++)
        ea += r->e2[t % w], eb += r->r2[t % w];
    if (!worse(nratio(ea, eb), m->mrw))
        return;
    m->mrw = nratio(ea, eb);
    double big = -1;
    for (long t = s - w + 1; t <= s; t++)
        if (worse(r->e2[t % w], big))
            big = r->e2[t % w], m->t_mrw = t + 1;
}

/* the next step: the read-out x against the reference y (dv numbers), in ulps of format fo */
static void meas_step(meas_run *r, const double *x, const double *y, int dv, vla_fmt fo)
{
    double a, b;
    meas_elems(r, r->s, x, y, dv, fo, &a, &b);
    meas_push(r, a, b);
}

/* the head measured: its rel_rms; the scale its numbers ask for, which must be the one it was
 * measured with (else measure it again with that one) */
static double meas_end(meas_run *r)
{
    r->m.rel_rms = nratio(r->se, r->sr);
    free(r->e2);
    r->e2 = r->r2 = NULL;
    const double top = r->top;
    return top > 0x1p500 || (top > 0 && top < 0x1p-500) ? ldexp(1, -ilogb(top)) : 1;
}

/* ---- the judge's runs: the reference (exact, or lib's binary64, on the inputs as given), the
 * same on the inputs rounded to the policy's io format, the policy's emulation in seq and in the
 * kernel's form, advanced together on the trace's inputs read once, a window of WIN steps at a
 * time, and each head's read-outs measured against the reference's as they come (the kernel's
 * read from o.npy by the window): the memory is the states' and the windows', not T's. A pass
 * runs a block of heads (a head's numbers are the same in any block); the dd references are
 * checked on head 0, in the first block, and the later blocks run as that check decided ---- */
enum { R_REF, R_RND, R_SEQ, R_FORM, NR };
/* the measures of a head against the reference: the kernel's, then runs R_RND .. R_FORM's */
#define M_KERNEL R_REF
/* an exact reference's double-double: checked at this pass (its note to come), checked at an
 * earlier one (the same bits again), or not run (MPFR: its check failed, or dd refused it) */
enum { DD_CHECK, DD_DONE, DD_NO };

typedef struct {
    const vla_cli *c;
    vla_engine_spec sp[NR];
    int alias[NR];  /* the run whose read-outs stand for r's (R_RND: R_REF at f64; R_FORM: R_SEQ) */
    int dd[NR];     /* DD_* */
    const vla_config *cfg; /* the kernel's configuration (R_FORM's) */
    const vla_npy *ko; /* the kernel's o.npy, opened */
    long T, W;
    vla_fmt io, ofmt, fo;
    double *sc;     /* H x NR: each measure's scale (meas_end) */
    meas_t *m;      /* H x NR: the measures */
    double *S[NR];  /* each run's final states (H x dv x d) */
} jpass_t;

/* One pass over the trace of heads h0 .. h0 + H - 1: 0, REDO_MPFR (a dd reference failed its
 * check: pass again, that reference in MPFR), or 1 with the reason in why and the run that failed
 * in *failed (-1: o.npy). *rescale: a measure's numbers asked for another scale than J->sc's (now
 * in J->sc): pass again */
static int judge_pass(jpass_t *J, int h0, int H, int *failed, int *rescale, vla_error *why)
{
    const vla_cli *c = J->c;
    const vla_config *cfg = J->cfg;
    const int d = cfg->d, dv = cfg->dv;
    const long T = J->T, C = cfg->form == VLA_FORM_CHUNK ? cfg->chunk : 1;
    vla_engine *e[NR] = {NULL};
    vref_ddcheck *chk[NR] = {NULL};
    taps_t tp[NR] = {{0}};
    vla_inputs in;
    double *kbuf = malloc((size_t)H * RING * dv * sizeof *kbuf);
    double *row = malloc(2 * (size_t)dv * sizeof *row), *nan = row + dv;
    meas_run *mr = calloc((size_t)H * NR, sizeof *mr);
    int st = 0;
    *failed = R_REF, *rescale = 0;
    vla_fail(why, VLA_ENOMEM, "out of memory");
    if (row)
        for (int j = 0; j < dv; j++)
            nan[j] = NAN; /* a read-out where none came */
    vla_error ve;
    if (!kbuf || !row || !mr ||
        vla_inputs_open_part(&in, c->stream, c->seed, d, dv, h0, H, WIN, T, vla_model_reads(cfg),
                             &ve)) {
        if (kbuf && row && mr)
            *why = ve;
        return free(kbuf), free(row), free(mr), 1;
    }
    for (int r = 0; r < NR && !st; r++) {
        if (J->alias[r] != r)
            continue;
        vla_engine_spec sp = J->sp[r];
        sp.stream = NULL; /* the window's inputs, read once for every run */
        sp.in = in.in;
        sp.is_read = in.is_read;
        sp.T = in.T;
        sp.cycle = 1;
        sp.runs = H;
        tp[r] = (taps_t){malloc((size_t)H * RING * dv * sizeof(double)), malloc((size_t)H * RING),
                         dv, (int)C, NULL};
        sp.taps = VLA_TAP_O;
        sp.on_step = on_step;
        sp.ctx = &tp[r];
        *failed = r;
        const int use_dd = J->dd[r] != DD_NO;
        if (!tp[r].o || !tp[r].seen)
            st = 1;
        else if (!(st = ref_new(&e[r], &chk[r], sp, use_dd, &refck, why)) && use_dd &&
                 !chk[r])
            J->dd[r] = DD_NO; /* dd refused it (ref_new counted it once), or no exact reference */
        if (chk[r] && J->dd[r] == DD_DONE)
            vref_ddcheck_free(chk[r]), chk[r] = NULL; /* checked at an earlier pass */
    }
    double *const sc = J->sc + (size_t)h0 * NR;
    meas_t *const m = J->m + (size_t)h0 * NR;
    for (int i = 0; !st && i < H * NR; i++)
        st = meas_begin(&mr[i], T, J->W, sc[i]) ? (*failed = R_REF, 1) : 0;
    long done = 0;
    for (long t = 0, to; !st && t < T; t = to) {
        to = t + WIN < T ? t + WIN : T;
        if (vla_inputs_fill(&in, t, to, &ve)) {
            *why = ve;
            st = 1, *failed = R_REF;
            break;
        }
        int redo = 0;
        for (int r = 0; r < NR && !st; r++) {
            if (!e[r])
                continue;
            int rc = 0;
            *failed = r;
            if ((st = vla_engine_advance(e[r], to) != 0) ||
                (to == T && (st = vla_engine_finish(e[r]) != 0))) /* a chunk's last T mod C */
                *why = *vla_engine_error(e[r]);
            else if (chk[r] && (rc = vref_ddcheck_at(chk[r], e[r], to)))
                st = 1, vla_fail(why, rc, "the reference's check: %s", vla_strerror(rc));
            else if (chk[r] && to >= (T < VREF_DD_CHECK_STEPS ? T : VREF_DD_CHECK_STEPS)) {
                /* its check is over: noted once (refck_describe) */
                redo |= refck_note(chk[r], &refck) == REDO_MPFR;
                J->dd[r] = vref_ddcheck_ok(chk[r]) ? DD_DONE : DD_NO;
                vref_ddcheck_free(chk[r]), chk[r] = NULL;
            }
        }
        if (st || redo) {
            st = st ? st : REDO_MPFR;
            break;
        }
        /* the steps every run has read out (a chunk's come at its end) */
        const long upto = to == T ? T : to / C * C;
        for (int h = 0; h < H && !st; h++)
            if (upto > done &&
                vla_npy_read_steps(J->ko, h0 + h, done, upto - done, kbuf + (size_t)h * RING * dv,
                                   &ve))
                st = 1, *failed = -1, *why = ve;
        for (int h = 0; h < H && !st; h++)
            for (long s = done; s < upto; s++) {
                const size_t slot = (size_t)h * RING + (size_t)(s % RING);
                const double *ref = tp[R_REF].seen[slot] ? tp[R_REF].o + slot * dv : nan;
                for (int k = 0; k < NR; k++) {
                    const taps_t *x = &tp[J->alias[k]];
                    const double *o = k == M_KERNEL ? kbuf + ((size_t)h * RING + (s - done)) * dv
                                      : x->seen[slot] ? x->o + slot * dv
                                                      : NULL;
                    for (int j = 0; j < dv; j++) /* NaN where none came; the emulations' read-outs
                                                  * rounded as the kernel's are */
                        row[j] = !o ? NAN
                                 : k == R_SEQ || k == R_FORM
                                     ? vla_round_fmt(J->ofmt, vla_round_fmt(J->io, o[j]))
                                     : o[j];
                    meas_step(&mr[h * NR + k], row, ref, dv, J->fo);
                }
            }
        for (int r = 0; r < NR && !st; r++)
            for (int h = 0; h < H && tp[r].seen; h++)
                for (long s = done; s < upto; s++)
                    tp[r].seen[(size_t)h * RING + (size_t)(s % RING)] = 0;
        done = upto;
    }
    for (int r = 0; r < NR && !st; r++)
        for (int h = 0; h < H; h++)
            vla_engine_get(e[J->alias[r]], h, VLA_Q_S, J->S[r] + (size_t)(h0 + h) * dv * d);
    for (int i = 0; i < H * NR; i++) {
        const double need = meas_end(&mr[i]);
        if (!st) {
            *rescale |= need != sc[i];
            sc[i] = need, m[i] = mr[i].m;
        }
    }
    for (int r = 0; r < NR; r++) {
        vref_ddcheck_free(chk[r]);
        vla_engine_free(e[r]);
        free(tp[r].o), free(tp[r].seen);
    }
    vla_inputs_free(&in);
    free(kbuf), free(row), free(mr);
    return st;
}

/* a number in JSON: null when it is not finite */
static void json_num(FILE *f, double x)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", x);
    if (!isfinite(x))
        fputs("null", f);
    else /* a float in JSON's readers too: 4.0, not 4 */
        fprintf(f, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* one head's row: the kernel's errors, the attainable ones and the budget */
typedef struct {
    meas_t k;
    double bits, att_seq, att_form, inp, budget;
    int ok;
} head_t;

/* the settings NAME=VALUE in the order they apply (the trace's model.txt, then every --set), a
 * name set twice listed once, with its last value: n of them into set[] */
static int settings(const vla_cli *c, const char **set, int max)
{
    int n = 0;
    for (int i = 0; i < c->nsets + c->argc; i++) {
        const char *s = i < c->nsets ? c->sets[i]
                        : i - c->nsets + 1 < c->argc && !strcmp(c->argv[i - c->nsets], "--set")
                            ? c->argv[i - c->nsets + 1]
                            : NULL;
        if (!s || !strchr(s, '='))
            continue;
        size_t kl = strcspn(s, "=");
        int j = 0;
        while (j < n && !(strlen(set[j]) > kl && !strncmp(set[j], s, kl) && set[j][kl] == '='))
            j++;
        if (j < n)
            memmove(set + j, set + j + 1, (size_t)(n - j - 1) * sizeof *set), n--;
        if (n < max)
            set[n++] = s;
    }
    return n;
}

/* the outputs' folder's file NAME: its path */
static void out_path(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
}

/* DIR2/NAME.npy as a kernel's array of the shape (n0, n1, n2): read (lazy: opened, to be read by
 * vla_npy_read_steps), or a usage error; *fmt
 * the format it was saved in (bfloat16 for uint16 with DIR2/dtype.txt saying bfloat16; the
 * others as their dtype says: a bfloat16 o beside a float32 state, as fla returns them) */
static void read_outputs(const vla_cli_spec *spec, const char *dir, const char *name,
                         const char *axes, long n0, long n1, long n2, int bf16, int lazy,
                         vla_npy *a, vla_fmt *fmt)
{
    char path[4200];
    vla_error err;
    out_path(path, sizeof path, dir, name);
    if ((lazy ? vla_npy_open_bf16 : vla_npy_read_bf16)(path, a, &err))
        vla_cli_die(spec, "--outputs: %s", vla_error_msg(&err));
    if (!strcmp(a->dtype, "u2") && !bf16)
        vla_cli_die(spec, "--outputs: %s holds uint16 ('<u2'): bfloat16 bit patterns are read "
                          "only when %s/dtype.txt says bfloat16 (numpy has no bfloat16)", path,
                    dir);
    /* one number per step (dbeta, a scalar dg): (n0, n1) or (n0, n1, 1), as beta.npy */
    int flat = n2 == 1 && a->ndim == 2 && a->shape[0] == n0 && a->shape[1] == n1;
    if (!flat &&
        (a->ndim != 3 || a->shape[0] != n0 || a->shape[1] != n1 || a->shape[2] != n2)) {
        char got[200] = "(";
        for (int i = 0; i < a->ndim; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%ld", i ? ", " : "",
                     a->shape[i]);
        vla_cli_die(spec, "--outputs: %s: shape %s), expected %s = (%ld, %ld, %ld) as the "
                          "trace's (--runs and --steps: the heads and steps judged)",
                    path, got, axes, n0, n1, n2);
    }
    *fmt = !strcmp(a->dtype, "u2") ? VLA_FMT_BF16
           : a->dtype[1] == '2'        ? VLA_FMT_F16
           : a->dtype[1] == '4'        ? VLA_FMT_F32
                                       : VLA_FMT_F64;
}

static const char *dtype_name(vla_fmt f)
{
    return f == VLA_FMT_BF16 ? "bfloat16" : f == VLA_FMT_F16 ? "float16" : f == VLA_FMT_F32
                                                                            ? "float32" : "float64";
}

/* o rounded as the kernel's read-outs are: into the policy's io format, then the file's */
static void round_out(double *o, size_t n, vla_fmt io, vla_fmt file)
{
    for (size_t i = 0; i < n; i++)
        o[i] = vla_round_fmt(file, vla_round_fmt(io, o[i]));
}


/* ---- the gradients: DIR2's dq.npy ... from your kernel's backward (issue 40). The loss is
 * L = sum_t do_t . o_t with do_t from DIR2/do.npy (the upstream gradient as a kernel's backward
 * receives it); each gradient is judged per head as the read-outs are, against the exact backward
 * (MPFR, lib/recur_grad.h) on the inputs as given, beside vlastab's own seq backward in the policy
 * (the attainable error) and the exact backward on the inputs and do rounded to the policy's io
 * format (the input budget). The backward exists in the seq form only: a chunked kernel's
 * gradients are held to the seq backward's error. ---- */
#define NGRAD 8
static const char *const gname[NGRAD] = {"dq", "dk", "dv", "dbeta", "dg", "da", "db", "du"};

/* gradient i's numbers per step in cfg's model; 0 (and *why) when the model has no such input */
/* the width of gradient file i (gname) for cfg's model into *w; VLA_ENOTSUP when the model has
 * no such gradient, with the rest of a sentence that starts with the model's name */
static int grad_width(const vla_config *cfg, int i, long *w, vla_error *err)
{
    static const char *const no[] = {
        [3] = "has no beta (dbeta: delta, gdn, kda)",
        [4] = "has no log-decay (dg: gdn, kda, gla, mamba2, rwkv7, delta with delta_form=decay)",
        [5] = "has no low-rank pair a, b (da, db: rwkv7)",
        [7] = "has no penalty vector u (du: vla1, vla3)"};
    const vla_grad_kind kind[] = {0, 0, 0, VLA_GRAD_BETA, VLA_GRAD_G, VLA_GRAD_LR, VLA_GRAD_LR,
                                  VLA_GRAD_U};
    if (kind[i] && !vla_grad_has(cfg, kind[i]))
        return vla_fail(err, VLA_ENOTSUP, "%s", no[i == 6 ? 5 : i]);
    *w = i == 2 ? cfg->dv : i == 3 ? 1 : i == 4 && vla_model_gate(cfg->model) != 2 ? 1 : cfg->d;
    return VLA_OK;
}

/* one head's gradients, one block: vla_grads' arrays of n steps (da, db always: NULL-free for
 * rwkv7) */
typedef struct {
    vla_grads g;
    double *mem;
} gset_t;

static int gset_new(gset_t *b, const vla_config *cfg, long n)
{
    const long d = cfg->d, dv = cfg->dv;
    memset(b, 0, sizeof *b);
    if (!(b->mem = malloc((size_t)n * (6 * d + dv + 1 + d) * sizeof(double))))
        return VLA_ENOMEM;
    double *p = b->mem;
    b->g.dq = p, p += n * d;
    b->g.dk = p, p += n * d;
    b->g.dv = p, p += n * dv;
    b->g.dbeta = p, p += n;
    b->g.dg = p, p += n * d;
    if (vla_grad_has(cfg, VLA_GRAD_LR))
        b->g.da = p, b->g.db = p + n * d;
    p += 2 * n * d;
    if (vla_grad_has(cfg, VLA_GRAD_U))
        b->g.du = p;
    return VLA_OK;
}

static double *gset_get(const gset_t *b, int i)
{
    double *const a[NGRAD] = {b->g.dq, b->g.dk, b->g.dv, b->g.dbeta, b->g.dg, b->g.da, b->g.db,
                              b->g.du};
    return a[i];
}

/* one head's inputs for its backwards, a block of steps at a time (cli.h's vla_cli_window),
 * rounded to f (VLA_FMT_F64: as given) */
typedef struct {
    vla_cli_window *w;
    int d, dv;
    vla_fmt f;
    double *buf; /* 8 x max(d, dv) */
} gin_t;

static const double *gin_round(const double *src, int n, vla_fmt f, double *dst)
{
    if (!src)
        return NULL;
    for (int i = 0; i < n; i++)
        dst[i] = vla_round_fmt(f, src[i]);
    return dst;
}

static int gin(void *ctx, long t, vla_input *in)
{
    const gin_t *g = ctx;
    int e = vla_cli_window_input(g->w, t, in);
    if (e || g->f == VLA_FMT_F64)
        return e;
    const int m = g->d > g->dv ? g->d : g->dv;
    double *b = g->buf;
    in->q = gin_round(in->q, g->d, g->f, b);
    in->k = gin_round(in->k, g->d, g->f, b + m);
    in->v = gin_round(in->v, g->dv, g->f, b + 2 * m);
    in->u = gin_round(in->u, g->d, g->f, b + 3 * m);
    in->g = gin_round(in->g, g->dv, g->f, b + 4 * m);
    in->lg = gin_round(in->lg, g->d, g->f, b + 5 * m);
    in->a = gin_round(in->a, g->d, g->f, b + 6 * m);
    in->b = gin_round(in->b, g->d, g->f, b + 7 * m);
    in->beta = vla_round_fmt(g->f, in->beta);
    in->decay = vla_round_fmt(g->f, in->decay);
    in->lgs = vla_round_fmt(g->f, in->lgs);
    return VLA_OK;
}

/* the kernel's gradients and what they are judged against */
typedef struct {
    int n, which[NGRAD]; /* the gradients given, indices into gname */
    long w[NGRAD];
    vla_npy file[NGRAD], dout; /* opened (shape and size checked), read a block at a time */
    vla_fmt fmt[NGRAD], fo[NGRAD], dofmt;
    /* per head x given gradient: the kernel's errors, the attainable and the budget */
    struct grow {
        meas_t k;
        double bits, att_seq, inp, budget;
        int ok;
    } *row;
    int nbad;
} grads_t;

/* DIR2's gradient files and do.npy, opened and checked against cfg, do's values read head by head
 * (usage errors: exit 2, before any work): how many gradients, 0 when there is none, -1 out of
 * memory or a read error (said) */
static int grads_read(const vla_cli_spec *spec, const vla_config *cfg, const char *dir, long H,
                      long T, int bf16, grads_t *G)
{
    char path[4200], fname[16], axes[32];
    memset(G, 0, sizeof *G);
    for (int i = 0; i < NGRAD; i++) {
        snprintf(fname, sizeof fname, "%s.npy", gname[i]);
        out_path(path, sizeof path, dir, fname);
        if (access(path, F_OK))
            continue;
        vla_error why;
        long w = 0;
        if (grad_width(cfg, i, &w, &why))
            vla_cli_die(spec, "--outputs: %s: %s %s", path, vla_model_name(cfg->model),
                        vla_error_msg(&why));
        vla_config s = *cfg;
        s.form = VLA_FORM_SEQ, s.chunk = 0;
        if (vla_grad_check(&s, &why))
            vla_cli_die(spec, "--outputs: %s: %s in %s has no backward to judge it against: %s",
                        path, vla_model_name(cfg->model), vla_prec_name(cfg->prec),
                        vla_error_msg(&why));
        /* dq, dk: of phi(q), phi(k) where the model takes them (its column phi) */
        const unsigned phi = vla_model_phi(cfg->model);
        if (cfg->features == VLA_FEAT_OWN &&
            ((i == 0 && (phi & VLA_PHI_Q)) || (i == 1 && (phi & VLA_PHI_K))))
            vla_cli_die(spec, "--outputs: %s: %s's backward gives the gradient with respect to "
                              "phi(%c) = elu(%c) + 1, not %c (features=own; docs/math.md section "
                              "11): judge it with --set features=id, or leave %s out",
                        path, vla_model_name(cfg->model), "qk"[i], "qk"[i], "qk"[i], fname);
        const int j = G->n++;
        G->which[j] = i, G->w[j] = w;
        snprintf(axes, sizeof axes, "(heads, T, %s)", w == 1 ? "1" : i == 2 ? "dv" : "d");
        read_outputs(spec, dir, fname, axes, H, T, w, bf16, 1, &G->file[j], &G->fmt[j]);
    }
    out_path(path, sizeof path, dir, "do.npy");
    int have_do = access(path, F_OK) == 0;
    if (G->n && !have_do)
        vla_cli_die(spec, "--outputs: %s/%s.npy needs %s, the upstream gradient do_t of the loss "
                          "L = sum_t do_t . o_t that the gradients are of", dir,
                    gname[G->which[0]], path);
    if (!G->n && have_do)
        vla_cli_die(spec, "--outputs: %s is there but no gradient to judge with it (dq.npy, dk.npy, "
                          "dv.npy, dbeta.npy, dg.npy, da.npy, db.npy, du.npy)", path);
    if (!G->n)
        return 0;
    read_outputs(spec, dir, "do.npy", "(heads, T, dv)", H, T, cfg->dv, bf16, 1, &G->dout,
                 &G->dofmt);
    double *c = malloc((size_t)WIN * cfg->dv * sizeof *c); /* WIN steps at a time */
    vla_error err;
    if (!c) {
        fprintf(stderr, "vla-check: --outputs: %s: out of memory for %d steps\n", path, WIN);
        return -1;
    }
    for (long h = 0; h < H; h++)
        for (long t = 0; t < T; t += WIN) {
            const long n = (t + WIN < T ? WIN : T - t) * cfg->dv;
            if (vla_npy_read_steps(&G->dout, h, t, n / cfg->dv, c, &err)) {
                fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
                free(c);
                return -1;
            }
            for (long i = 0; i < n; i++)
                if (!isfinite(c[i]))
                    vla_cli_die(spec, "--outputs: %s: %s at [%ld, %ld, %ld] (do is the loss's "
                                      "input: every value finite)", path,
                                isnan(c[i]) ? "NaN" : "Inf", h, t + i / cfg->dv, i % cfg->dv);
        }
    free(c);
    const vla_fmt io = vla_prec_io(cfg->prec);
    for (int j = 0; j < G->n; j++)
        G->fo[j] = vla_fmt_precision(io) < vla_fmt_precision(G->fmt[j]) ? io : G->fmt[j];
    return G->n;
}

/* The gradients judged: per head, the exact backward on the inputs as given (--ref exact; lib's
 * binary64 backward with --ref f64), the same on the inputs and do rounded to the policy's io
 * format, and lib's seq backward in the policy; 0, 2 (a backward that refused the inputs: delta's
 * row gates), 3 (interrupted), else 1. One head at a time, and of it a block of K = ceil(sqrt(T))
 * steps at a time: the three backwards (vla_backward) advance together from the last block to the
 * first, and the block's inputs, do and the kernel's gradients are read for it alone, so that
 * the memory is the backwards' checkpoints and a block's arrays, not T's. Each gradient has three
 * measures against the reference's (the kernel's, the seq backward's, the rounded inputs'); their
 * numbers' measures (meas_elems) are taken as the blocks come, but the sums and windows add the
 * steps' squared norms in step order, as the read-outs' measures do: those are kept, 2 doubles a
 * step, and pushed from step 1 when the head is done. */
enum { G_REF, G_RND, G_SEQ, NG };  /* the backwards */
enum { GM_K, GM_SEQ, GM_RND, NGM }; /* a gradient's measures against the reference's */

typedef struct {
    const vla_cli *c;
    vla_config ref, pol;
    long T, W, K;
    vla_fmt io;
    gset_t gs[NG];
    double *ch, *cr, *kg, *buf; /* a block's do, do rounded, a kernel's gradient; gin's */
    meas_run *m;                /* G->n x NGM */
    double *ab;                 /* G->n x NGM x T x 2: each step's squared norms (meas_elems) */
    vla_cli_window win;
} gjudge_t;

/* whether measure k is taken: the rounded inputs' only when rounding changes them */
static int gm_taken(const gjudge_t *J, int k) { return k % NGM != GM_RND || J->io != VLA_FMT_F64; }

/* one pass over head h: its backwards a block at a time, each gradient's measures begun with the
 * scales sc (G->n x NGM) and their steps' numbers measured; 0, else grads_judge's status (said) */
static int grads_pass(gjudge_t *J, grads_t *G, long h, const double *sc)
{
    const vla_cli *c = J->c;
    const vla_config *cfg = &J->pol;
    const int d = cfg->d, dv = cfg->dv, nm = G->n * NGM;
    const long T = J->T;
    const vla_fmt io = J->io;
    vla_error err;
    vla_backward *b[NG] = {NULL};
    gin_t as = {&J->win, d, dv, VLA_FMT_F64, J->buf}, rnd = as;
    rnd.f = io;
    int st = 0, r = 0;
    for (int k = 0; k < nm && !st; k++)
        if (gm_taken(J, k) && meas_begin(&J->m[k], T, J->W, sc[k])) {
            fprintf(stderr, "vla-check: out of memory for the gradients' windows\n");
            st = 1;
        }
    vla_inputs_free(&J->win.x);
    J->win = (vla_cli_window){.T = T};
    if (!st && vla_inputs_open_part(&J->win.x, c->stream, c->seed, d, dv, (int)h, 1, J->K, T,
                                    vla_model_reads(cfg), &err)) {
        fprintf(stderr, "vla-check: --stream %s: %s\n", c->stream, vla_error_msg(&err));
        st = 2;
    }
    if (!st) {
        r = c->ref == REF_EXACT
                ? vref_backward_new(&b[G_REF], &J->ref, VREF_EXACT, c->ref_bits, T, gin, &as)
                : vla_backward_new(&b[G_REF], &J->ref, T, gin, &as);
        if (!r && io != VLA_FMT_F64)
            r = c->ref == REF_EXACT
                    ? vref_backward_new(&b[G_RND], &J->ref, VREF_EXACT, c->ref_bits, T, gin, &rnd)
                    : vla_backward_new(&b[G_RND], &J->ref, T, gin, &rnd);
        if (!r)
            r = vla_backward_new(&b[G_SEQ], cfg, T, gin, &as);
    }
    long t0, n;
    while (!st && !r && (n = vla_backward_span(b[G_REF], &t0)) > 0) {
        if (vla_npy_read_steps(&G->dout, h, t0, n, J->ch, &err)) {
            fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
            st = 1;
            break;
        }
        for (long i = 0; i < n * dv; i++)
            J->cr[i] = vla_round_fmt(io, J->ch[i]);
        r = vla_backward_next(b[G_REF], J->ch, &J->gs[G_REF].g);
        if (!r && b[G_RND])
            r = vla_backward_next(b[G_RND], J->cr, &J->gs[G_RND].g);
        if (!r)
            r = vla_backward_next(b[G_SEQ], J->ch, &J->gs[G_SEQ].g);
        for (int j = 0; j < G->n && !r && !st; j++) {
            const int i = G->which[j], w = (int)G->w[j];
            const double *ref_g = gset_get(&J->gs[G_REF], i), *rn = gset_get(&J->gs[G_RND], i);
            double *seq = gset_get(&J->gs[G_SEQ], i);
            round_out(seq, (size_t)(n * w), io, G->fmt[j]);
            if (vla_npy_read_steps(&G->file[j], h, t0, n, J->kg, &err)) {
                fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
                st = 1;
                break;
            }
            for (long t = t0; t < t0 + n; t++) {
                const size_t o = (size_t)(t - t0) * w;
                double *ab = J->ab + ((size_t)j * NGM * T + t) * 2;
                meas_elems(&J->m[j * NGM + GM_K], t, J->kg + o, ref_g + o, w, G->fo[j], ab, ab + 1);
                ab += 2 * T;
                meas_elems(&J->m[j * NGM + GM_SEQ], t, seq + o, ref_g + o, w, G->fo[j], ab, ab + 1);
                ab += 2 * T;
                if (gm_taken(J, j * NGM + GM_RND))
                    meas_elems(&J->m[j * NGM + GM_RND], t, rn + o, ref_g + o, w, G->fo[j], ab,
                               ab + 1);
            }
        }
    }
    for (int k = 0; k < NG; k++)
        vla_backward_free(b[k]);
    if (r && !st) {
        st = r == VLA_EINTR ? 3 : r == VLA_ENOTSUP ? 2 : 1;
        if (r == VLA_EINTR)
            ; /* (a stop: the caller says what was saved) */
        else if (J->win.err.code) { /* a block of the inputs that could not be read */
            fprintf(stderr, "vla-check: --stream %s: %s\n", c->stream, vla_error_msg(&J->win.err));
            st = 2;
        } else
            fprintf(stderr, "vla-check: the backward of head %ld (%s %s): %s\n", h,
                    vla_model_name(cfg->model), vla_prec_name(cfg->prec),
                    r == VLA_ENOTSUP ? "the trace has delta's row gates g (g.npy), which the "
                                       "backward does not take" : vla_strerror(r));
    }
    return st;
}

static int grads_judge(const vla_cli *c, const vla_config *cfg, long H, long T, long W,
                       double slack, grads_t *G, vla_units *u)
{
    const int d = cfg->d, dv = cfg->dv, m = d > dv ? d : dv, nm = G->n * NGM;
    gjudge_t J = {.c = c, .pol = *cfg, .T = T, .W = W, .K = vla_backward_block_len(T),
                  .io = vla_prec_io(cfg->prec)};
    J.pol.form = VLA_FORM_SEQ, J.pol.chunk = 0;
    J.ref = J.pol, J.ref.prec = VLA_F64;
    long wmax = 1; /* the widest gradient given: the kernel's, a block at a time */
    for (int j = 0; j < G->n; j++)
        wmax = G->w[j] > wmax ? G->w[j] : wmax;
    double sc[NGRAD * NGM];
    J.buf = malloc(8 * (size_t)m * sizeof *J.buf);
    J.ch = malloc((size_t)J.K * dv * sizeof *J.ch);
    J.cr = malloc((size_t)J.K * dv * sizeof *J.cr);
    J.kg = malloc((size_t)J.K * wmax * sizeof *J.kg);
    J.m = calloc((size_t)nm, sizeof *J.m);
    J.ab = malloc((size_t)nm * T * 2 * sizeof *J.ab);
    int st = !J.buf || !J.ch || !J.cr || !J.kg || !J.m || !J.ab ||
             !(G->row = calloc((size_t)H * G->n, sizeof *G->row));
    for (int r = 0; r < NG; r++)
        st |= gset_new(&J.gs[r], cfg, J.K) != 0;
    if (st)
        fprintf(stderr, "vla-check: out of memory for the gradients of %ld steps\n", T);
    for (long h = 0; h < H && !st; h++) {
        size_t len;
        const void *rec = vla_units_get(u, (int)(H + h), &len);
        if (rec && len == G->n * sizeof *G->row) { /* judged before */
            memcpy(&G->row[h * G->n], rec, len);
            for (int j = 0; j < G->n; j++)
                G->nbad += !G->row[h * G->n + j].ok;
            continue;
        }
        for (int k = 0; k < nm; k++)
            sc[k] = 1;
        /* a second pass when a measure's numbers ask for a scale (meas_end): its top does not
         * depend on the scale, so the second pass's is the first's */
        for (int again = 1; again && !st;) {
            if ((st = grads_pass(&J, G, h, sc)))
                break;
            again = 0;
            for (int k = 0; k < nm; k++) {
                if (!gm_taken(&J, k))
                    continue;
                const double *ab = J.ab + (size_t)k * T * 2;
                for (long t = 0; t < T; t++)
                    meas_push(&J.m[k], ab[2 * t], ab[2 * t + 1]);
                const double need = meas_end(&J.m[k]);
                again |= need != sc[k];
                sc[k] = need;
            }
        }
        for (int j = 0; j < G->n && !st; j++) {
            struct grow *y = &G->row[h * G->n + j];
            y->k = J.m[j * NGM + GM_K].m;
            y->att_seq = J.m[j * NGM + GM_SEQ].m.mrw;
            y->inp = J.io != VLA_FMT_F64 ? J.m[j * NGM + GM_RND].m.mrw : 0;
            y->budget = slack * (worse(y->inp, y->att_seq) ? y->inp : y->att_seq);
            const double u = vla_fmt_unit_roundoff(G->fo[j]);
            y->bits = y->k.rel_rms > u ? log2(y->k.rel_rms / u) : y->k.rel_rms >= 0 ? 0 : NAN;
            y->ok = !y->k.t_nonfinite && y->k.mrw <= y->budget;
            G->nbad += !y->ok;
        }
        if (!st && vla_units_save(u, (int)(H + h), &G->row[h * G->n], G->n * sizeof *G->row)) {
            fprintf(stderr, "vla-check: out of memory\n");
            st = 1;
        }
    }
    for (int k = 0; J.m && k < nm; k++)
        free(J.m[k].e2); /* a pass given up before meas_end */
    for (int r = 0; r < NG; r++)
        free(J.gs[r].mem);
    free(J.buf), free(J.ch), free(J.cr), free(J.kg), free(J.m), free(J.ab);
    vla_inputs_free(&J.win.x);
    return st;
}

static void grads_free(grads_t *G)
{
    for (int j = 0; j < G->n; j++)
        vla_npy_free(&G->file[j]);
    if (G->n)
        vla_npy_free(&G->dout);
    free(G->row);
}

/* ---- the judge's checkpoint (vla_units, drive.c): unit h < H is head h's read-outs measured,
 * its record the references' counts and passes (refck and J->dd, which head 0's block decides
 * for every block), its NR measures and its final state's error and verdict; unit H + h is its
 * gradients' rows (grads_judge). The key holds each file of DIR2 by its contents. ---- */
#define HEAD_REC (sizeof(refck_t) + NR * sizeof(long) + NR * sizeof(meas_t) + 2 * sizeof(double))

static int head_save(vla_units *u, int h, const jpass_t *J, const double *srel)
{
    char rec[HEAD_REC], *p = rec;
    long dd[NR];
    const double none[2] = {0, 0};
    for (int r = 0; r < NR; r++)
        dd[r] = J->dd[r];
    memcpy(p, &refck, sizeof refck), p += sizeof refck;
    memcpy(p, dd, sizeof dd), p += sizeof dd;
    memcpy(p, J->m + (size_t)h * NR, NR * sizeof *J->m), p += NR * sizeof *J->m;
    memcpy(p, srel ? srel + 2 * h : none, sizeof none);
    return vla_units_save(u, h, rec, sizeof rec);
}

/* head h from the checkpoint, where it was measured before: 1, its measures and state's error in
 * J and srel, the references' counts and passes as they were; else 0 (it runs) */
static int head_load(const vla_units *u, int h, jpass_t *J, double *srel)
{
    size_t len;
    const char *p = vla_units_get(u, h, &len);
    long dd[NR];
    if (!p || len != HEAD_REC)
        return 0;
    memcpy(dd, p + sizeof refck, sizeof dd);
    for (int r = 0; r < NR; r++)
        if (dd[r] < DD_CHECK || dd[r] > DD_NO)
            return 0;
    memcpy(&refck, p, sizeof refck), p += sizeof refck + sizeof dd;
    for (int r = 0; r < NR; r++)
        J->dd[r] = (int)dd[r];
    memcpy(J->m + (size_t)h * NR, p, NR * sizeof *J->m), p += NR * sizeof *J->m;
    if (srel)
        memcpy(srel + 2 * h, p, 2 * sizeof *srel);
    return 1;
}

/* the judge's lines of the key: the settings (as the table's), and with a checkpoint, each file
 * of DIR2 that it reads by its bytes' FNV-1a (outputs written again are another judge's) */
static char *judge_key(const vla_cli *c, const char *dir)
{
    static const char *const names[] = {"dtype.txt", "o.npy", "S.npy", "dq.npy", "dk.npy",
                                        "dv.npy", "dbeta.npy", "dg.npy", "da.npy", "db.npy",
                                        "du.npy", "do.npy"};
    const char *sets[VLA_CLI_MAXSETS + 64];
    const int nsets = settings(c, sets, VLA_CLI_MAXSETS + 64);
    char *text = NULL, path[4200], buf[1 << 16];
    size_t len = 0, k;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fprintf(stderr, "vla-check: out of memory\n");
        return NULL;
    }
    fprintf(f, "--set=");
    for (int i = 0; i < nsets; i++)
        fprintf(f, "%s%s", i ? " " : "", sets[i]);
    fprintf(f, "\n");
    for (size_t i = 0; strcmp(c->out, "-") && i < sizeof names / sizeof *names; i++) {
        out_path(path, sizeof path, dir, names[i]);
        FILE *in = fopen(path, "rb");
        if (!in)
            continue;
        uint64_t h = VLA_FNV_INIT;
        long long n = 0;
        while ((k = fread(buf, 1, sizeof buf, in)) > 0)
            h = vla_fnv1a(h, buf, k), n += (long long)k;
        if (ferror(in)) {
            fprintf(stderr, "vla-check: --outputs: %s: %s\n", path, strerror(errno));
            fclose(in), fclose(f), free(text);
            return NULL;
        }
        fclose(in);
        fprintf(f, "--outputs %s=%016llx (%lld bytes)\n", names[i], (unsigned long long)h, n);
    }
    if (fclose(f)) {
        fprintf(stderr, "vla-check: out of memory\n");
        free(text);
        return NULL;
    }
    return text;
}

static int judge_outputs(vla_cli *c, const vla_cli_spec *spec, const opts_t *o, int prec_given)
{
    const int H = c->runs, d = c->cfg.d, dv = c->cfg.dv;
    const long T = c->whole_steps, W = o->window; /* a chunk form's last chunk may be partial */
    const double slack = o->slack;
    if (c->ref == REF_NONE)
        vla_cli_die(spec, "--outputs: the kernel is judged against a reference: --ref exact (the "
                          "default) or f64, not none");
    if (!c->model_txt && !c->model_opt)
        vla_cli_die(spec, "--outputs judges one model: %s; give --model M",
                    strncmp(c->stream, "trace:", 6) ? "the stream names none"
                                                    : "the trace has no model.txt naming it");
    /* the kernel's files */
    char path[4200];
    out_path(path, sizeof path, o->outputs, "dtype.txt");
    int bf16 = 0;
    FILE *tf = fopen(path, "r");
    if (tf) {
        char tag[64] = "";
        size_t n = fread(tag, 1, sizeof tag - 1, tf);
        fclose(tf);
        while (n && isspace((unsigned char)tag[n - 1]))
            n--;
        tag[n] = 0;
        if (strcmp(tag, "bfloat16"))
            vla_cli_die(spec, "--outputs: %s says '%.40s': the one tag it takes is bfloat16 (for "
                              "o.npy and S.npy saved as uint16 bit patterns)", path, tag);
        bf16 = 1;
    }
    /* what the judge holds, freed at done: on every exit, the stops and refusals too */
    vla_npy ko = {0}, ks = {0};
    grads_t G = {0};
    jpass_t J = {0};
    double *srel = NULL; /* per head: the final state's error and verdict */
    int *had = NULL;
    head_t *hd = NULL;
    vla_units *units = NULL;
    int st;
    vla_fmt ofmt, sfmt;
    read_outputs(spec, o->outputs, "o.npy", "(heads, T, dv)", H, T, dv, bf16, 1, &ko, &ofmt);
    out_path(path, sizeof path, o->outputs, "S.npy");
    int have_S = access(path, F_OK) == 0;
    if (have_S)
        read_outputs(spec, o->outputs, "S.npy", "(heads, dv, d)", H, dv, d, bf16, 0, &ks, &sfmt);
    /* the policy: --precision's, else the one o's format names */
    vla_config cfg;
    vla_cli_config_for(c, c->cfg.model, &cfg);
    if (!prec_given)
        cfg.prec = ofmt == VLA_FMT_BF16 ? VLA_BF16_KERN : ofmt == VLA_FMT_F16 ? VLA_F16_KERN
                   : ofmt == VLA_FMT_F32 ? VLA_F32 : VLA_F64;
    const vla_fmt io = vla_prec_io(cfg.prec);
    /* the read-outs' format: the coarser of the policy's io format and the file's */
    const vla_fmt fo = vla_fmt_precision(io) < vla_fmt_precision(ofmt) ? io : ofmt;
    const double u = vla_fmt_unit_roundoff(fo);
    char form[32];
    vla_form_name(&cfg, form, sizeof form);
    vla_error ve;
    const long C = cfg.form == VLA_FORM_CHUNK ? cfg.chunk : 1;
    if (vla_track_check(&cfg, &ve) || vla_form_check(&cfg, &ve) ||
        vla_cli_gates_check(c, &cfg, &ve) || vla_cli_form_input_check(c, &cfg, &ve))
        vla_cli_die(spec, "--outputs: %s %s %s: %s", vla_model_name(cfg.model),
                    vla_prec_name(cfg.prec), form, vla_error_msg(&ve));
    if (C > 1 && strcmp(c->backend, "cpu"))
        vla_cli_die(spec, "--outputs with --form %s: --backend cpu (the one whose chunk form "
                          "gives every token's read-out to compare), not %s", form, c->backend);
    if (grads_read(spec, &cfg, o->outputs, H, T, bf16, &G) < 0) {
        st = 1;
        goto done;
    }
    if (strcmp(o->report, "none") && report_paths_ok(o->report, c, 1)) {
        st = 2;
        goto done;
    }
    char unread[600];
    if (vla_cli_unread(c, &cfg, unread, sizeof unread))
        fprintf(stderr, "vla-check: warning: %s\n", unread);

    /* the runs (judge_pass), each head measured as they go */
    static const char *const rname[NR] = {"the reference", "the reference on rounded inputs",
                                           "the seq emulation", "the form's emulation"};
    const size_t ns = (size_t)H * dv * d;
    J = (jpass_t){.c = c, .cfg = &cfg, .ko = &ko, .T = T, .W = W, .io = io, .ofmt = ofmt, .fo = fo};
    int ok = (J.sc = malloc((size_t)H * NR * sizeof *J.sc)) &&
             (J.m = calloc((size_t)H * NR, sizeof *J.m)) &&
             (!have_S || (srel = calloc((size_t)H * 2, sizeof *srel)));
    for (int r = 0; r < NR; r++)
        ok = ok && (J.S[r] = malloc(ns * sizeof(double)));
    if (!ok) {
        fprintf(stderr, "vla-check: out of memory for %d runs of %d heads\n", NR, H);
        st = 1;
        goto done;
    }
    /* the checkpoint: a head's read-outs measured, then its gradients, are its units */
    char *extra = judge_key(c, o->outputs);
    const size_t urec = G.n * sizeof *G.row > HEAD_REC ? G.n * sizeof *G.row : HEAD_REC;
    st = extra ? vla_units_open(&units, c, spec, G.n ? "measure" : "head", extra,
                                    G.n ? 2 * H : H, urec) : 1;
    free(extra);
    if (st) {
        units = NULL; /* (vla_units_open made none) */
        goto done;
    }
    if (!(had = calloc((size_t)H, sizeof *had))) {
        fprintf(stderr, "vla-check: out of memory\n");
        st = 1;
        goto done;
    }
    for (int h = 0; h < H; h++)
        had[h] = head_load(units, h, &J, srel);
    for (int i = 0; i < H * NR; i++)
        J.sc[i] = 1;
    vla_cli rc = *c;
    vla_engine_spec tmp;
    vla_config g = cfg;
    g.prec = VLA_F64;
    g.form = VLA_FORM_SEQ, g.chunk = 0;
    vla_cli_engine_spec(&rc, &g, &tmp);
    vla_cli_ref_spec(&rc, &tmp, &J.sp[R_REF]); /* binary64 policy: no input rounded */
    g.prec = cfg.prec;
    vla_cli_engine_spec(&rc, &g, &tmp);
    vla_cli_ref_spec(&rc, &tmp, &J.sp[R_RND]); /* rounds the inputs to io (vlaref.h, cli.h) */
    vla_cli_engine_spec(&rc, &g, &J.sp[R_SEQ]);
    vla_cli_engine_spec(&rc, &cfg, &J.sp[R_FORM]);
    for (int r = 0; r < NR; r++)
        J.alias[r] = r == R_RND && io == VLA_FMT_F64         ? R_REF
                     : r == R_FORM && cfg.form == VLA_FORM_SEQ ? R_SEQ
                                                               : r;
    int failed, rescale;
    vla_error err;
    /* the heads not read back, a block of as many as threads at a time (their order: head 0's
     * block, which checks the dd references, first) */
    for (int h0 = 0, nb; h0 < H; h0 += nb) {
        for (nb = 0; h0 + nb < H && !had[h0 + nb] && nb < vla_cli_threads(); nb++)
            ;
        if (!nb) {
            nb = 1;
            continue;
        }
        do /* again: a dd reference in MPFR after its check failed, or a head's numbers scaled */
            st = judge_pass(&J, h0, nb, &failed, &rescale, &err);
        while (st == REDO_MPFR || (!st && rescale));
        if (st && vla_cli_stop) {
            st = 3;
            goto done;
        }
        if (st) {
            if (failed < 0)
                fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
            else
                fprintf(stderr, "vla-check: %s (%s %s) did not run: %s\n", rname[failed],
                        vla_model_name(cfg.model), vla_prec_name(J.sp[failed].cfg.prec),
                        vla_error_msg(&err));
            st = 1;
            goto done;
        }
        for (int h = h0; h < h0 + nb; h++) {
            if (srel) { /* the final state against the reference's */
                const size_t at = (size_t)h * dv * d;
                double e = vla_rel_fro(ks.data + at, J.S[R_REF] + at, (long)dv * d), top = 0;
                for (int r = R_RND; r < NR; r++) {
                    double a = vla_rel_fro(J.S[r] + at, J.S[R_REF] + at, (long)dv * d);
                    if (worse(a, top))
                        top = a;
                }
                srel[2 * h] = e;
                srel[2 * h + 1] = e <= top * slack; /* (NaN: beyond) */
            }
            if (head_save(units, h, &J, srel)) {
                fprintf(stderr, "vla-check: out of memory\n");
                st = 1;
                goto done;
            }
        }
    }

    /* per head */
    if (!(hd = calloc((size_t)H, sizeof *hd))) {
        fprintf(stderr, "vla-check: out of memory\n");
        st = 1;
        goto done;
    }
    int nbad = 0, worst = 0, first_nf = -1;
    double more = -INFINITY;
    for (int h = 0; h < H; h++) {
        const meas_t *m = J.m + (size_t)h * NR;
        head_t *x = &hd[h];
        x->k = m[M_KERNEL];
        x->att_seq = m[R_SEQ].mrw;
        x->att_form = m[R_FORM].mrw;
        x->inp = m[R_RND].mrw;
        double top = x->att_seq;
        if (worse(x->att_form, top))
            top = x->att_form;
        if (worse(x->inp, top))
            top = x->inp;
        x->budget = top * slack;
        x->bits = x->k.rel_rms > u ? log2(x->k.rel_rms / u) : x->k.rel_rms >= 0 ? 0 : NAN;
        x->ok = !x->k.t_nonfinite && x->k.mrw <= x->budget;
        nbad += !x->ok;
        if (x->k.t_nonfinite && first_nf < 0)
            first_nf = h;
        double b = x->k.mrw == 0 ? 0 : log2(x->k.mrw / x->att_seq);
        if (worse(b, more))
            more = b, worst = h;
    }
    /* the final state */
    int sbad = 0;
    for (int h = 0; srel && h < H; h++)
        sbad += srel[2 * h + 1] == 0;
    /* the gradients */
    if (G.n && (st = grads_judge(c, &cfg, H, T, W, slack, &G, units)))
        goto done;
    vla_units_end(units, 0); /* (the checkpoint goes when vla-check exits 0) */
    units = NULL;
    const int beyond = nbad || sbad || G.nbad;
    /* the summary, one line */
    char sum[1200];
    int n = snprintf(sum, sizeof sum, "%s: %d of %d heads beyond the budget", beyond ? "beyond" : "ok",
                     nbad, H);
    if (first_nf >= 0)
        n += snprintf(sum + n, sizeof sum - n, "; your kernel's read-out is not finite from t = "
                      "%ld in head %d", hd[first_nf].k.t_nonfinite, first_nf);
    else if (isfinite(more) && more >= 0.05)
        n += snprintf(sum + n, sizeof sum - n, "; your kernel loses %.1f bits more than a "
                      "sequential %s recurrence with the same inputs (head %d)", more,
                      vla_prec_name(cfg.prec), worst);
    else if (isfinite(more))
        n += snprintf(sum + n, sizeof sum - n, "; your kernel loses no more than a sequential "
                      "%s recurrence with the same inputs (%.1f bits at most, head %d)",
                      vla_prec_name(cfg.prec), more, worst);
    for (int h = 0; h < H && n < (int)sizeof sum; h++)
        if (!hd[h].ok && !hd[h].k.t_nonfinite && isnan(hd[h].budget))
            n += snprintf(sum + n, sizeof sum - n, "; head %d: %.3g at t = %ld, and no budget: "
                          "vlastab's own %s run of these inputs (%s) is not finite, so no error "
                          "is attainable", h, hd[h].k.mrw, hd[h].k.t_mrw, vla_prec_name(cfg.prec),
                          isnan(hd[h].att_seq) ? "seq" : isnan(hd[h].att_form) ? form
                                                                                : "rounded inputs");
        else if (!hd[h].ok && !hd[h].k.t_nonfinite)
            n += snprintf(sum + n, sizeof sum - n, "; head %d: %.3g at t = %ld past its budget %.3g",
                          h, hd[h].k.mrw, hd[h].k.t_mrw, hd[h].budget);
    if (sbad && n < (int)sizeof sum)
        n += snprintf(sum + n, sizeof sum - n, "; the final state beyond its budget in %d heads",
                      sbad);
    if (G.n && n < (int)sizeof sum)
        n += snprintf(sum + n, sizeof sum - n, "; gradients: %d of %d beyond", G.nbad,
                      (int)H * G.n);
    for (int i = 0; i < (int)H * G.n && n < (int)sizeof sum; i++) {
        const struct grow *y = &G.row[i];
        if (y->k.t_nonfinite)
            n += snprintf(sum + n, sizeof sum - n, "; %s of head %d not finite from t = %ld",
                          gname[G.which[i % G.n]], i / G.n, y->k.t_nonfinite);
        else if (!y->ok)
            n += snprintf(sum + n, sizeof sum - n, "; %s of head %d: %.3g at t = %ld past its "
                          "budget %.3g", gname[G.which[i % G.n]], i / G.n, y->k.mrw, y->k.t_mrw,
                          y->budget);
    }

    /* the table */
    const char *sets[VLA_CLI_MAXSETS + 64];
    int nsets = settings(c, sets, VLA_CLI_MAXSETS + 64);
    char reftxt[600], setall[4000] = "";
    if (c->ref == REF_EXACT) /* MPFR, or double-double checked against it (ref_new) */
        refck_describe(c->ref_bits, T, "reference", reftxt, sizeof reftxt);
    else
        snprintf(reftxt, sizeof reftxt, "f64 (lib in binary64)");
    for (int i = 0, m = 0; i < nsets && m < (int)sizeof setall; i++)
        m += snprintf(setall + m, sizeof setall - m, "%s%s", i ? " " : "", sets[i]);
    vla_dat *out = vla_cli_out(c, spec);
    vla_dat_meta(out, "model", "%s%s", vla_model_name(cfg.model), vla_cli_model_src(c, NULL, 1));
    vla_dat_meta(out, "stream", "%s", c->stream);
    vla_dat_meta(out, "outputs", "%s (o.npy %s%s; read-outs compared in %s, u = %g)", o->outputs,
                 dtype_name(ofmt), have_S ? ", S.npy" : "",
                 vla_fmt_name(fo), u);
    vla_dat_meta(out, "policy", "%s%s, form %s", vla_prec_name(cfg.prec),
                 prec_given ? "" : " (from o.npy's dtype)", form);
    vla_dat_meta(out, "settings", "%s", nsets ? setall : "none");
    vla_dat_meta(out, "reference", "%s on the inputs as given", reftxt);
    vla_dat_meta(out, "window", "%ld", W);
    vla_dat_meta(out, "slack", "%g (a head is ok when max_rel_window <= slack x max(attainable_seq, "
                              "attainable_form, input_budget))", slack);
    if (G.n) {
        char gl[200] = "";
        for (int j = 0, m = 0; j < G.n; j++)
            m += snprintf(gl + m, sizeof gl - m, "%s%s.npy %s", j ? ", " : "", gname[G.which[j]],
                          dtype_name(G.fmt[j]));
        vla_dat_meta(out, "gradients", "%s of L = sum_t do_t . o_t (do.npy %s), against the "
                     "exact seq backward: rows in the report's JSON and Markdown", gl,
                     dtype_name(G.dofmt));
    }
    vla_dat_meta(out, "summary", "%s", sum);
    vla_dat_columns(out, "head rel_rms max_abs max_rel_window t_max_rel_window max_rel_pointwise "
                         "ulps_max bits_lost attainable_seq attainable_form input_budget budget "
                         "first_t_nonfinite verdict");
    for (int h = 0; h < H; h++) {
        const head_t *x = &hd[h];
        double v[14] = {h, x->k.rel_rms, x->k.max_abs, x->k.mrw, (double)x->k.t_mrw,
                        x->k.max_rel_pt, x->k.ulps, x->bits, x->att_seq, x->att_form, x->inp,
                        x->budget, (double)x->k.t_nonfinite, 0};
        const char *nm[14] = {NULL};
        nm[12] = x->k.t_nonfinite ? NULL : "never";
        nm[13] = x->ok ? "ok" : "beyond";
        vla_dat_row_named(out, v, nm, 14);
    }
    if (vla_cli_close(out, c, spec, 0)) {
        st = 1;
        goto done;
    }

    /* the report: PREFIX.json (keys fixed: tools/python's vlastab.judge reads them) and PREFIX.md */
    if (strcmp(o->report, "none")) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        snprintf(path, sizeof path, "%s.json", o->report);
        if (!f) {
            st = report_write(path, NULL, 0);
            goto done;
        }
        fprintf(f, "{\"verdict\": \"%s\", \"model\": ", beyond ? "beyond" : "ok");
        json_str(f, vla_model_name(cfg.model));
        fprintf(f, ", \"precision\": \"%s\", \"form\": \"%s\", \"ref\": \"%s\", \"reference\": ",
                vla_prec_name(cfg.prec), form, c->ref == REF_EXACT ? "exact" : "f64");
        json_str(f, reftxt);
        fprintf(f, ", \"window\": %ld, \"slack\": ", W);
        json_num(f, slack);
        fprintf(f, ",\n \"settings\": {");
        for (int i = 0; i < nsets; i++) {
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)strcspn(sets[i], "="), sets[i]);
            fprintf(f, "%s", i ? ", " : "");
            json_str(f, key);
            fprintf(f, ": ");
            json_str(f, strchr(sets[i], '=') + 1);
        }
        fprintf(f, "},\n \"heads\": [");
        for (int h = 0; h < H; h++) {
            const head_t *x = &hd[h];
            const double v[] = {x->k.rel_rms, x->k.max_abs, x->k.mrw, x->k.max_rel_pt, x->k.ulps,
                                x->bits, x->att_seq, x->att_form, x->inp, x->budget};
            static const char *const key[] = {"rel_rms", "max_abs", "max_rel_window",
                                              "max_rel_pointwise", "ulps_max", "bits_lost",
                                              "attainable_seq", "attainable_form", "input_budget",
                                              "budget"};
            fprintf(f, "%s\n  {\"head\": %d, \"t_max_rel_window\": %ld, \"first_t_nonfinite\": ",
                    h ? "," : "", h, x->k.t_mrw);
            if (x->k.t_nonfinite)
                fprintf(f, "%ld", x->k.t_nonfinite);
            else
                fputs("null", f);
            for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
                fprintf(f, ", \"%s\": ", key[i]);
                json_num(f, v[i]);
            }
            fprintf(f, ", \"verdict\": \"%s\"}", x->ok ? "ok" : "beyond");
        }
        fprintf(f, "],\n \"state\": ");
        if (!srel)
            fputs("null", f);
        for (int h = 0; srel && h < H; h++) {
            fprintf(f, "%s{\"head\": %d, \"rel_fro\": ", h ? ", " : "[", h);
            json_num(f, srel[2 * h]);
            fprintf(f, ", \"verdict\": \"%s\"}%s", srel[2 * h + 1] ? "ok" : "beyond",
                    h == H - 1 ? "]" : "");
        }
        fprintf(f, ",\n \"grads\": %s", G.n ? "[" : "null");
        for (int i = 0; i < (int)H * G.n; i++) {
            const struct grow *y = &G.row[i];
            const double v[] = {y->k.rel_rms, y->k.max_abs, y->k.mrw, y->k.max_rel_pt, y->k.ulps,
                                y->bits, y->att_seq, y->inp, y->budget};
            static const char *const key[] = {"rel_rms", "max_abs", "max_rel_window",
                                              "max_rel_pointwise", "ulps_max", "bits_lost",
                                              "attainable_seq", "input_budget", "budget"};
            fprintf(f, "%s\n  {\"grad\": \"%s\", \"head\": %d, \"dtype\": \"%s\", "
                       "\"t_max_rel_window\": %ld, \"first_t_nonfinite\": ", i ? "," : "",
                    gname[G.which[i % G.n]], i / G.n, dtype_name(G.fmt[i % G.n]), y->k.t_mrw);
            if (y->k.t_nonfinite)
                fprintf(f, "%ld", y->k.t_nonfinite);
            else
                fputs("null", f);
            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
                fprintf(f, ", \"%s\": ", key[k]);
                json_num(f, v[k]);
            }
            fprintf(f, ", \"verdict\": \"%s\"}", y->ok ? "ok" : "beyond");
        }
        fprintf(f, "%s,\n \"summary\": ", G.n ? "]" : "");
        json_str(f, sum);
        fprintf(f, "}\n");
        if (fclose(f))
            free(text), text = NULL;
        if (report_write(path, text, len)) {
            st = 1;
            goto done;
        }
        /* the Markdown report */
        snprintf(path, sizeof path, "%s.md", o->report);
        if (!(f = open_memstream(&text, &len))) {
            st = report_write(path, NULL, 0);
            goto done;
        }
        fprintf(f, "# vla-check: your kernel's read-outs, judged\n\n**%s**: ", beyond ? "beyond" : "ok");
        md_text(f, sum + strcspn(sum, ":") + 2); /* (the summary opens with the verdict) */
        fprintf(f, ".\n\nThe read-outs in ");
        md_text(f, o->outputs);
        fprintf(f, " (o.npy, %s%s) of %d heads x %ld steps (d = %d, dv = %d) on the inputs of ",
                dtype_name(ofmt), have_S ? "; S.npy, the final state" : "",
                H, T, d, dv);
        md_text(f, c->stream);
        fprintf(f, ", against the reference, %s, on the same inputs as given. Model %s", reftxt,
                vla_model_name(cfg.model));
        md_text(f, vla_cli_model_src(c, NULL, 1));
        fprintf(f, "; settings: ");
        md_text(f, nsets ? setall : "none");
        fprintf(f, "; the kernel's policy %s%s, form %s.\n\n", vla_prec_name(cfg.prec),
                prec_given ? " (--precision)" : " (from o.npy's dtype)", form);
        fprintf(f, "- rel_rms: ||o - o_ref||_F / ||o_ref||_F over every step (fla's metric); "
                   "max_abs: the largest pointwise error; max_rel_pointwise: the largest "
                   "||o_t - o_ref,t|| / ||o_ref,t|| (a column only: it is large where o_ref,t is "
                   "near 0); ulps_max: the largest pointwise error in ulps of the reference value "
                   "in %s (the coarser of the policy's io format and o.npy's); bits_lost: "
                   "log2(rel_rms / u), u = %g, clipped at 0.\n", vla_fmt_name(fo), u);
        fprintf(f, "- max_rel_window (the verdict's error): for each window of %ld tokens, "
                   "||o - o_ref|| over the window / ||o_ref|| over the window, the largest over "
                   "the windows, at t: that window's token of the largest error (t counts from 1).\n", W);
        fprintf(f, "- attainable_seq, attainable_form: max_rel_window of vlastab's emulation of "
                   "%s, token by token and in form %s, its read-outs rounded as the kernel's (to "
                   "%s, then o.npy's format); input_budget: that of the reference on the inputs "
                   "rounded to %s (the policy's io format) against the reference on the inputs "
                   "as given.\n", vla_prec_name(cfg.prec), form, vla_fmt_name(io), vla_fmt_name(io));
        fprintf(f, "- verdict: ok when max_rel_window <= budget = %g (--slack) x max(attainable_seq, "
                   "attainable_form, input_budget) and every read-out is finite; else beyond.\n\n",
                slack);
        fprintf(f, "| head | rel_rms | max_abs | max_rel_window | t | max_rel_pointwise | ulps_max | "
                   "bits_lost | attainable_seq | attainable_form | input_budget | budget | "
                   "non-finite from | verdict |\n|");
        for (int k = 0; k < 14; k++)
            fprintf(f, "---|");
        for (int h = 0; h < H; h++) {
            const head_t *x = &hd[h];
            fprintf(f, "\n| %d | %.3g | %.3g | %.3g | %ld | %.3g | %.3g | %.2f | %.3g | %.3g | %.3g "
                       "| %.3g |", h, x->k.rel_rms, x->k.max_abs, x->k.mrw, x->k.t_mrw,
                    x->k.max_rel_pt, x->k.ulps, x->bits, x->att_seq, x->att_form, x->inp,
                    x->budget);
            md_t(f, x->k.t_nonfinite);
            fprintf(f, " %s |", x->ok ? "ok" : "**beyond**");
        }
        fprintf(f, "\n");
        if (srel) {
            fprintf(f, "\nThe final state S.npy: ||S - S_ref||_F / ||S_ref||_F per head, ok within "
                       "%g x the largest of the emulations' and the rounded inputs'.\n\n| head | "
                       "rel_fro | verdict |\n|---|---|---|\n", slack);
            for (int h = 0; h < H; h++)
                fprintf(f, "| %d | %.3g | %s |\n", h, srel[2 * h], srel[2 * h + 1] ? "ok" : "**beyond**");
        }
        if (G.n) {
            fprintf(f, "\nThe gradients of L = sum_t do_t . o_t (do_t from do.npy, %s) per head, "
                       "against the exact seq backward on the inputs as given, the same columns "
                       "as the read-outs' (t counts forward from 1); attainable_seq is vlastab's "
                       "seq backward in %s (the backward has no chunk form: a chunked kernel's "
                       "gradients are held to the seq backward's error); input_budget rounds the "
                       "inputs and do to %s; budget = %g x max(attainable_seq, input_budget).\n\n"
                       "| grad | head | rel_rms | max_abs | max_rel_window | t | max_rel_pointwise "
                       "| ulps_max | bits_lost | attainable_seq | input_budget | budget | "
                       "non-finite from | verdict |\n|", dtype_name(G.dofmt),
                    vla_prec_name(cfg.prec), vla_fmt_name(io), slack);
            for (int k = 0; k < 14; k++)
                fprintf(f, "---|");
            for (int i = 0; i < (int)H * G.n; i++) {
                const struct grow *y = &G.row[i];
                fprintf(f, "\n| %s | %d | %.3g | %.3g | %.3g | %ld | %.3g | %.3g | %.2f | %.3g | "
                           "%.3g | %.3g |", gname[G.which[i % G.n]], i / G.n, y->k.rel_rms,
                        y->k.max_abs, y->k.mrw, y->k.t_mrw, y->k.max_rel_pt, y->k.ulps, y->bits,
                        y->att_seq, y->inp, y->budget);
                md_t(f, y->k.t_nonfinite);
                fprintf(f, " %s |", y->ok ? "ok" : "**beyond**");
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\nThe command:\n\n");
        md_command(f, o->ncmd, o->cmd);
        if (fclose(f))
            free(text), text = NULL;
        if (report_write(path, text, len)) {
            st = 1;
            goto done;
        }
    }
    fprintf(stderr, "vla-check: %s%s%s%s\n", sum, strcmp(o->report, "none") ? "; report: " : "",
            strcmp(o->report, "none") ? o->report : "", strcmp(o->report, "none") ? ".md, .json" : "");
    st = beyond;
done:
    if (units) /* (says where a stop's measures are saved) */
        st = vla_units_end(units, st);
    for (int r = 0; r < NR; r++)
        free(J.S[r]);
    free(J.sc), free(J.m), free(had), free(hd), free(srel);
    vla_npy_free(&ko);
    vla_npy_free(&ks);
    grads_free(&G);
    return st;
}

/* main's arrays freed (a usage error found after they were made, and the end); its status */
static int release(int status, row_t *rows, int nrows, int *order, int *group, int *gof,
                   char **av)
{
    for (int i = 0; i < nrows; i++) {
        free(rows[i].cks);
        free(rows[i].curve);
    }
    free(rows);
    free(order);
    free(group);
    free(gof);
    free(av);
    return status;
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
                             "PREFIX-errors.dat and PREFIX.gp (default vla-check); none: no report; "
                             "with --outputs: PREFIX.md and PREFIX.json"},
        {"outputs", "DIR2", "judge your kernel's own read-outs on this trace: DIR2/o.npy (heads, T, "
                            "dv) and optionally DIR2/S.npy, its final state (heads, dv, d); float16, "
                            "float32, float64, or uint16 holding bfloat16 bits with DIR2/dtype.txt "
                            "saying bfloat16; and your backward's gradients when there: DIR2/dq.npy, "
                            "dk.npy, dv.npy, dbeta.npy, dg.npy (da.npy, db.npy for rwkv7, du.npy for vla1 and vla3) of the "
                            "loss sum_t do_t . o_t, do_t from DIR2/do.npy (OUTPUTS, in the "
                            "description)"},
        {"window", "W", "with --outputs: the verdict's error is the largest over windows of W tokens "
                        "(default 64) of ||o - o_ref|| / ||o_ref|| over the window"},
        {"slack", "F", "with --outputs: a head is ok when its windowed error is at most F (default 4) "
                       "times the largest attainable error (OUTPUTS, in the description)"},
        {NULL, NULL, NULL},
    };
    static const vla_doc_item exits[] = {
        {"0", NULL, "the table and the report were written; with --require, every precision it "
                    "names had a row that ran and passed; with --outputs, every head was ok"},
        {"1", NULL, "with --require, a precision it names failed or had no row that ran; with "
                    "--outputs, a head's read-outs or one of its gradients were beyond (the "
                    "summary on stderr names them); a run failed "
                    "(the message names the head, the step and the reason); or the table or the "
                    "report could not be written. Without --require or --outputs, FAIL rows are "
                    "a finding, not an exit status: the table and the report say them"},
        {"2", NULL, "a usage error: an unknown option or value, a value out of range, a "
                    "configuration the backend or the reference cannot run, a bad input file "
                    "(o.npy, a gradient or do.npy of another shape than the trace's, a NaN in "
                    "do.npy, a gradient of a model without a backward, ...), a table or report "
                    "path that cannot be written (checked before the runs)"},
        {"3", NULL, "interrupted by SIGINT or SIGTERM: no table, report or temporary is left; "
                    "with --out FILE the groups of rows finished are in FILE.ckpt, and the same "
                    "command with --resume goes on from them"},
        {NULL, NULL, NULL},
    };
    static const vla_cli_spec spec = {
        .exit = exits,
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
            "max_rel_window <= budget = --slack (4) x max(attainable_seq, attainable_form,\n"
            "input_budget), else beyond. Writes the per-head table (--out), PREFIX.md and PREFIX.json\n"
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
            "the inputs as given, beside vlastab's seq backward in P (attainable_seq: the backward\n"
            "has no chunk form) and the exact backward on the inputs and do rounded to P's io format\n"
            "(input_budget); budget = --slack x max(attainable_seq, input_budget). A gradient beyond\n"
            "is exit 1 and named in the summary; its rows are in PREFIX.json (\"grads\") and\n"
            "PREFIX.md. Refused (exit 2): a gradient the model has no input for (dbeta for mamba2),\n"
            "a model without a backward (rls, vla1, vla3 in a way of tracking A other than sm: the\n"
            "reason is said), a gradient without\n"
            "do.npy or do.npy without a gradient, a shape other than the trace's, a NaN or Inf in\n"
            "do.npy, la's, delta's and vla3's dq (dk for la and vla3) with features=own (the\n"
            "backward's are with\n"
            "respect to phi(q), phi(k)). A NaN in a gradient is no error: beyond, its t named.",
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
                   "vla-check trace:mytrace --outputs mykernel-out --form chunk:64\n"
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
    char **av = malloc((size_t)(2 * argc + 3) * sizeof *av), **cmd = av + argc + 2;
    int ac = 0, ncmd = 0, have_stream = 0, have_ck = 0;
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
        if (!i || strcmp(a, "--resume")) /* (the report's command: the check, as typed) */
            cmd[ncmd++] = argv[i];
        av[ac++] = argv[i];
        if (takes && i + 1 < argc)
            cmd[ncmd++] = av[ac++] = argv[++i];
    }
    av[ac] = cmd[ncmd] = NULL;
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
    if (!o.outputs && (o.window || o.slack))
        vla_cli_die(&spec, "--%s goes with --outputs (a kernel's read-outs to judge)",
                    o.window ? "window" : "slack");
    if (o.outputs) {
        if (o.models || o.precs || o.tracks || o.require || strcmp(o.forms, "seq,chunk:64"))
            vla_cli_die(&spec, "--outputs judges one configuration: --model, --precision, --track "
                               "and --form, not --%s", o.models ? "models" : o.precs ? "precisions"
                               : o.tracks ? "tracks" : o.require ? "require" : "forms");
        int prec_given = 0;
        for (int i = 1; i < argc; i++)
            prec_given |= !strcmp(argv[i], "--precision");
        o.window = o.window ? o.window : 64;
        o.slack = o.slack ? o.slack : 4;
        o.ncmd = ncmd, o.cmd = cmd;
        int st = judge_outputs(&c, &spec, &o, prec_given);
        free(av);
        return st;
    }
    if (c.cfg.form != VLA_FORM_SEQ)
        vla_cli_die(&spec, "--form: vla-check takes its forms from --forms (a list); --form goes "
                           "with --outputs");
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
                    vla_error ve;
                    const char *why = NULL;
                    const long C = g->form == VLA_FORM_CHUNK ? g->chunk : 1;
                    if (vla_track_check(g, &ve)) {
                        if (o.tracks && !strcmp(o.tracks, "all"))
                            continue;
                        why = vla_error_msg(&ve);
                    } else if (vla_form_check(g, &ve)) {
                        why = vla_error_msg(&ve);
                    } else if (C > c.steps) {
                        snprintf(w->skip, sizeof w->skip, "--forms %s: C = %ld exceeds the %ld "
                                 "steps", w->form, C, c.steps);
                        w->refused = 1;
                    }
                    if (!why && !w->refused &&
                        (vla_cli_gates_check(&c, g, &ve) ||
                         vla_cli_form_input_check(&c, g, &ve))) /* delta's gates in a chunk */
                        why = vla_error_msg(&ve);
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
    if (strcmp(o.report, "none") && report_paths_ok(o.report, &c, 0))
        return release(2, rows, nrows, order, group, gof, av);
    vla_dat *out = vla_cli_out(&c, &spec);
    /* the checkpoint (with --out FILE): a group is a unit of work. Its key adds, to the options,
     * the settings in the order they apply (the trace's model.txt's, then --set's): they make
     * every model's constants, where the key's description is of one model's */
    const char *sets[VLA_CLI_MAXSETS + 64];
    const int nsets = settings(&c, sets, VLA_CLI_MAXSETS + 64);
    size_t xlen = 64, umax = 0;
    for (int i = 0; i < nsets; i++)
        xlen += strlen(sets[i]) + 1;
    for (int g = 0; g < ng; g++) {
        const size_t n = group_size(rows, order, group, g);
        umax = n > umax ? n : umax;
    }
    char *extra = malloc(xlen);
    if (!extra)
        return release(vla_cli_close(out, &c, &spec, 1), rows, nrows, order, group, gof, av);
    int xn = snprintf(extra, xlen, "--set=");
    for (int i = 0; i < nsets; i++)
        xn += snprintf(extra + xn, xlen - xn, "%s%s", i ? " " : "", sets[i]);
    snprintf(extra + xn, xlen - xn, "\n");
    vla_units *u;
    int st = vla_units_open(&u, &c, &spec, "group", extra, ng, umax);
    free(extra);
    if (st)
        return release(vla_cli_close(out, &c, &spec, st), rows, nrows, order, group, gof, av);
    /* the groups finished before: read back, not run (their rows' ran is set) */
    for (int g = 0; g < ng; g++) {
        refck_t rk;
        if (!group_load(u, g, &rk, rows, order, group, &c))
            continue;
        refck_add(&refck, &rk);
        for (int j = group[g]; j < group[g + 1]; j++)
            judge(&rows[order[j]], o.threshold);
    }
    /* progress: the steps of every head of the groups to run (a group's steps: its longest
     * row's) */
    long total = 0, done = 0;
    for (int g = 0; g < ng; g++) {
        long tend = 0;
        for (int j = group[g]; j < group[g + 1]; j++) {
            const row_t *w = &rows[order[j]];
            if (!w->ran && w->nck && w->cks[w->nck - 1] > tend)
                tend = w->cks[w->nck - 1];
        }
        total += tend * c.runs;
    }
    vla_progress prog;
    vla_progress_start(&prog, total, "head-steps");
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int g = 0; g < ng; g++) {
        const int n = group[g + 1] - group[g];
        if (rows[order[group[g]]].ran) /* read back */
            continue;
        member_t *mb = calloc((size_t)n, sizeof *mb);
        result *res = calloc((size_t)n * c.runs, sizeof *res);
        refck_t rk = {0};
        for (int use_dd = 1; use_dd >= 0; use_dd--) { /* dd, or MPFR where its check failed */
            for (int j = 0; mb && res && j < n; j++) {
                row_t *w = &rows[order[group[g] + j]];
                mb[j] = (member_t){&w->cfg, w->cks, w->nck, 0, res + (size_t)j * c.runs, w->curve,
                                   {0, ""}, 0, NULL, {0}, 0};
            }
            if (!mb || !res || vla_cli_stop ||
                check_group(&c, mb, n, &prog, &done, use_dd, &rk) != REDO_MPFR)
                break;
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
                merge(mb[j].res, c.runs, &w->head);
                w->r = mb[j].res[0];
                judge(w, o.threshold);
            }
            all &= w->ran;
        }
#ifdef _OPENMP
#pragma omp critical(check_units)
#endif
        {
            refck_add(&refck, &rk);
            if (all && group_save(u, g, &rk, rows, order, group))
                fprintf(stderr, "vla-check: warning: out of memory for the checkpoint of group "
                                "%d: a --resume runs it again\n", g);
        }
        free(mb);
        free(res);
    }
    vla_progress_end(&prog);
    if (vla_cli_stop) { /* the groups finished are saved (vla_units_end says where); the table
                         * closed without its columns line is discarded */
        vla_units_end(u, 3);
        return release(vla_cli_close(out, &c, &spec, 3), rows, nrows, order, group, gof, av);
    }
    vla_units_end(u, 0); /* the checkpoint goes when vla-check exits 0 */
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
    char exact[600];
    refck_describe(c.ref_bits, c.steps, "group", exact, sizeof exact);
    vla_dat_meta(out, "reference", "f64 (lib in binary64 on the rounded inputs); the f64 rows: %s",
                 exact);
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
    vla_cli shown = c; /* the report's command: the check's, without --resume */
    shown.argc = ncmd;
    shown.argv = cmd;
    if (strcmp(o.report, "none") &&
        write_report(o.report, &shown, &o, rows, nrows, nck0, files,
                     strcmp(c.out, "-") ? c.out : "standard output"))
        return 1;

    /* the summary on stderr: what failed and why, and what did not run, in one line each */
    for (int i = 0; i < nrows; i++)
        if (rows[i].ran && rows[i].fail)
            fprintf(stderr, "vla-check: FAIL %s: %s\n", rows[i].name, rows[i].cause[0]);
        else if (!rows[i].ran)
            fprintf(stderr, "vla-check: %s %s: %s\n", rows[i].refused ? "refused" : "did not run",
                    rows[i].name, rows[i].skip);
    /* a row that did not run (a read error, memory) is a run that failed: exit 1, as documented */
    int nlost = nrows - nrun - nrefused;
    fprintf(stderr, "vla-check: %d of %d rows fail (threshold %g)%s%s%s%s%s%s\n", nfail, nrun,
            o.threshold, strcmp(o.report, "none") ? "; report: " : "",
            strcmp(o.report, "none") ? o.report : "", strcmp(o.report, "none") ? ".md" : "",
            nrefused ? "; configurations refused by their form, way or reference: the header's '# refused:' "
                       "lines" : "",
            gate ? unmet[0] ? "; a precision of --require had no row that ran: exit 1"
                            : "; a precision of --require failed: exit 1" : "",
            nlost && !gate ? "; a row did not run (the line above): exit 1" : "");
    return release(gate || nlost, rows, nrows, order, group, gof, av);
}
