/* drive.c: the driver of the experiment programs. The runs of a program and their references are
 * two engines (lib's vla_engine, which owns the loop over t on whichever backend); the driver
 * advances both from checkpoint to checkpoint in slices of about a second, hands each run's
 * checkpoint to the program's measures, writes checkpoint files (every VLA_CHECKPOINT_SECONDS and
 * when a signal arrives) and resumes from them, warns when a state turns non-finite, and writes
 * the table at the end. The same whatever the backend: a run saved on one continues on another. */
#define _GNU_SOURCE /* program_invocation_short_name: the progress lines' program */
#include "ckpt.h"
#include "cli.h"
#include "file.h"
#include "vlacuda.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

double vla_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- progress ---- */

/* VLA_PROGRESS_SECONDS: the seconds between progress lines off a terminal (30 unset; "off": -1) */
static double progress_every(void)
{
    const char *e = getenv("VLA_PROGRESS_SECONDS");
    char *end;
    if (!e || !*e)
        return 30;
    if (!strcmp(e, "off"))
        return -1;
    double x = strtod(e, &end);
    return *end || !(x >= 0) ? 30 : x;
}

void vla_progress_start(vla_progress *p, long total, const char *unit)
{
    p->t0 = p->last = vla_cli_now();
    p->tty = isatty(2);
    p->every = p->tty ? 1 : progress_every();
    p->total = total > 0 && p->every >= 0 ? total : 0;
    p->unit = unit;
}

void vla_progress_update(vla_progress *p, long done)
{
    if (!p->total)
        return;
    double t = vla_cli_now();
    if (t - p->last < p->every)
        return;
    p->last = t;
    double rate = done / (t - p->t0);
    if (p->tty)
        fprintf(stderr, "\r%ld/%ld %s, %.3g %s/s, ETA %.0f s   ", done, p->total, p->unit, rate,
                p->unit, rate > 0 ? (p->total - done) / rate : 0);
    else
        fprintf(stderr, "%s: progress: %ld/%ld %s, %.3g %s/s, ETA %.0f s\n",
                program_invocation_short_name, done,
                p->total, p->unit, rate, p->unit, rate > 0 ? (p->total - done) / rate : 0);
}

void vla_progress_end(vla_progress *p)
{
    if (p->total && p->tty)
        fprintf(stderr, "\r%79s\r", "");
}

/* ---- rows ---- */

int vla_rows_add(vla_rows *r, const double *row)
{
    if (r->n == r->cap) {
        long cap = r->cap ? 2 * r->cap : 64;
        double *v = realloc(r->v, (size_t)cap * r->ncol * sizeof *v);
        if (!v)
            return VLA_ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    memcpy(r->v + (size_t)r->n * r->ncol, row, r->ncol * sizeof *row);
    r->n++;
    return VLA_OK;
}

static int count_columns(const char *s)
{
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        n++;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

/* ---- non-finite states ---- */

int vla_cli_run_finite(vla_engine *e, int run, double *buf)
{
    const vla_config *cfg = vla_engine_config(e);
    long d = cfg->d, dv = cfg->dv;
    const struct {
        vla_quantity q;
        long n;
    } qs[] = {{VLA_Q_S, dv * d}, {VLA_Q_A, vla_model_has_A(cfg->model) ? d * d : 0}, {VLA_Q_O, dv}};
    for (int k = 0; k < 3; k++)
        if (qs[k].n && vla_engine_get(e, run, qs[k].q, buf) == 0)
            for (long i = 0; i < qs[k].n; i++)
                if (!isfinite(buf[i]))
                    return 0;
    return 1;
}

/* the words of vla_cli_nonfinite, in text */
static void nonfinite_text(char *text, size_t len, const char *what, long nbad, long nruns, int head,
                           long step, const char *where, const char *rows)
{
    snprintf(text, len, "%s is not finite (Inf or NaN) in %ld of %ld runs, first in head %d at step "
                        "%ld (%s); %s", what, nbad, nruns, head, step, where, rows);
}

void vla_cli_nonfinite(vla_dat *out, const char *prog, const char *what, long nbad, long nruns,
                       int head, long step, const char *where, const char *rows)
{
    char text[600];
    nonfinite_text(text, sizeof text, what, nbad, nruns, head, step, where, rows);
    fprintf(stderr, "%s: warning: %s\n", prog, text);
    if (out)
        vla_dat_meta(out, "nonfinite", "%s", text);
}

int vla_cli_zero_readout(vla_engine *m, vla_engine *ref, int run, double *buf)
{
    const vla_config *cfg = vla_engine_config(m);
    const long dv = cfg->dv;
    if (vla_engine_get(m, run, VLA_Q_O, buf) || vla_fro(buf, dv) != 0)
        return 0;
    if (!ref || vla_engine_get(ref, run, VLA_Q_O, buf))
        return 0;
    double x = vla_fro(buf, dv);
    return x > 0 && isfinite(x);
}

void vla_cli_summary(const char *prog, const vla_cli *c, const char *columns, const vla_rows *rows,
                     const long *inf_at, const long *zero_at, const char *zero_den,
                     const long *zero_n, vla_engine *m, vla_dat *out)
{
    vla_summary s = {.len = 0};
    int nr = c->runs;
    long first = 0;
    int head = -1, count = 0;
    for (int h = 0; h < nr; h++)
        if (inf_at[h] && (count++, !first || inf_at[h] < first))
            first = inf_at[h], head = h;
    /* not loud: the non-finite warning has said it */
    if (count)
        vla_summary_add(&s, 0, "non-finite in %d of %d runs (first head %d, t = %ld)", count, nr,
                        head, first);
    else if (nr == 1)
        vla_summary_add(&s, 0, "finite in the one run");
    else
        vla_summary_add(&s, 0, "finite in all %d runs", nr);
    const int nonfinite = count;
    for (int den = 1; den >= 0; den--) {
        first = 0, head = -1, count = 0;
        for (int h = 0; h < nr; h++)
            if (zero_at[h] && zero_den[h] == den && (count++, !first || zero_at[h] < first))
                first = zero_at[h], head = h;
        long steps = 0;
        for (int h = 0; den && h < nr; h++)
            steps += zero_n[h];
        if (count && den)
            vla_summary_add(&s, 1, "the read-out's denominator n . phi(q) overflowed at %ld steps "
                            "of %d of %d runs (first head %d, t = %ld): there o = S phi(q) / Inf is "
                            "exactly 0, or NaN (docs/trace.md)", steps, count, nr, head, first);
        else if (count)
            vla_summary_add(&s, 1, "the read-out is exactly 0 in %d of %d runs (first head %d, t = "
                            "%ld) while the reference's is not", count, nr, head, first);
    }
    if (m)
        vla_cli_cache_summary(&s, m, "");
    /* the measured errors: the first step at which one reached 1 */
    vla_summary_block *b = calloc(nr > 0 ? (size_t)nr : 1, sizeof *b);
    char (*names)[24] = calloc(nr > 0 ? (size_t)nr : 1, sizeof *names);
    int any = 0;
    if (b && names) {
        for (int h = 0; h < nr; h++) {
            snprintf(names[h], sizeof names[h], "head %d", h);
            b[h] = (vla_summary_block){rows[h].v, rows[h].n, rows[h].ncol, names[h]};
        }
        any = vla_summary_errors(&s, columns, b, nr, VLA_SUM_PAST1);
    }
    free(b);
    free(names);
    if (!any && !nonfinite && c->ref != REF_NONE) /* (a non-finite error reaches nothing) */
        vla_summary_add(&s, 0, "no measured error reached 1");
    vla_cli_summary_end(&s, prog, out);
}

int vla_cli_den_summary(vla_summary *s, vla_engine *e, const char *what)
{
    const int nr = vla_engine_runs(e);
    long total = 0, first = 0;
    int runs = 0, head = -1;
    for (int h = 0; h < nr; h++) {
        vla_counts cn;
        if (vla_engine_counts(e, h, &cn) || !cn.den_inf)
            continue;
        total += cn.den_inf;
        runs++;
        if (!first || cn.den_inf_t < first)
            first = cn.den_inf_t, head = h;
    }
    if (runs)
        vla_summary_add(s, 1, "%s%sthe read-out's denominator overflowed at %ld read-outs of %d of %d "
                        "runs (first head %d, t = %ld): there o = S x / Inf is exactly 0, or NaN",
                        what, *what ? ": " : "", total, runs, nr, head, first);
    return runs > 0;
}

int vla_cli_cache_summary(vla_summary *s, vla_engine *e, const char *what)
{
    const int nr = vla_engine_runs(e);
    long total = 0, most = 0;
    int runs = 0, head = -1;
    for (int h = 0; h < nr; h++) {
        vla_counts cn;
        if (vla_engine_counts(e, h, &cn) || !cn.cache_sat)
            continue;
        total += cn.cache_sat;
        runs++;
        if (cn.cache_sat > most)
            most = cn.cache_sat, head = h;
    }
    if (runs) /* loud: a clamped entry lost more than a rounding, and nothing else says it */
        vla_summary_add(s, 1, "%s%sthe state cache (%s) saturated: %ld entries clamped at the "
                        "format's largest in %d of %d runs (most in head %d: %ld)", what,
                        *what ? ": " : "", vla_cache_name(vla_engine_config(e)->cache), total,
                        runs, nr, head, most);
    return runs > 0;
}

void vla_cli_summary_end(const vla_summary *s, const char *prog, vla_dat *out)
{
    vla_summary_say(s, prog);
    if (out)
        vla_dat_meta(out, "summary", "%s", s->text);
}

/* ---- the ways that keep M: failed solves ---- */

/* The solves of e's runs in words, for the table's header ("cg:8: 40000 solves, 7.9 iterations
 * per solve; none failed"), and when one failed the first failure for stderr ("the solver (cg:8)
 * failed in 1 of 4 runs, first in head 2 at step 57: p.Mp = -0.0039"). 0: the way keeps no M. */
int vla_cli_solver_report(vla_engine *e, char *head, size_t hlen, vla_error *warn)
{
    const vla_config *cfg = vla_engine_config(e);
    if (vla_track_holds(cfg->track) != VLA_HOLDS_M)
        return 0;
    long solves = 0, iters = 0, first_t = 0;
    int nr = vla_engine_runs(e), nfail = 0, first = -1;
    double val = NAN;
    for (int h = 0; h < nr; h++) {
        vla_counts cn;
        double sv[3];
        if (vla_engine_counts(e, h, &cn))
            continue;
        solves += cn.solves;
        iters += cn.solve_iters;
        if (!cn.solve_fail)
            continue;
        nfail++;
        if ((first < 0 || cn.solve_fail_t < first_t) && vla_engine_get(e, h, VLA_Q_SOLVER, sv) == 0) {
            first = h;
            first_t = cn.solve_fail_t;
            val = sv[2];
        }
    }
    char way[48];
    vla_track_spec(cfg, way, sizeof way);
    const char *what = cfg->track == VLA_TRACK_SOLVE          ? "the pivot"
                       : cfg->track == VLA_TRACK_CG && val <= 0 ? "p.Mp"
                                                                : "the residual ||r|| / ||x||";
    int n = snprintf(head, hlen, "%s: %ld solves, %.4g iterations per solve; ", way, solves,
                     solves ? (double)iters / solves : 0.0);
    if (n < 0 || (size_t)n >= hlen)
        n = 0;
    /* the failing value in words where printf would write nan or -nan (a NaN in the system) */
    char num[64];
    if (isnan(val))
        snprintf(num, sizeof num, "is not a number (NaN: the system held an Inf or a NaN)");
    else
        snprintf(num, sizeof num, "%.6g", val);
    if (nfail)
        snprintf(head + n, hlen - n, "failed in %d of %d runs, first in head %d at step %ld: %s "
                 "%s", nfail, nr, first, first_t, what, num);
    else
        snprintf(head + n, hlen - n, "none failed");
    if (nfail)
        vla_fail(warn, VLA_ERANGE, "the solver (%s) failed in %d of %d runs, first in head %d at "
                 "step %ld: %s %s", way, nfail, nr, first, first_t, what, num);
    else
        vla_fail(warn, VLA_OK, NULL);
    return 1;
}

/* ---- vla_drive's record of a run in the checkpoint file (ckpt.h): the next checkpoint's index,
 * the engines' states (vla_engine_save), the accumulator, the rows, the summary's marks ---- */

/* vla_drive's record of a run */
typedef struct {
    const vla_cli *c;
    const vla_driver *drv;
    vla_engine *m, *ref;
    void **acc;
    vla_rows *rows;
    long *ci;        /* each run's next checkpoint: a run stopped at one has not measured it yet */
    const long *cks; /* the checkpoint steps */
    long nck;
    /* what the summary says of each run (vla_cli_summary), carried over a resume: the first
     * checkpoint at which it was not finite (inf_ref: its reference), its first read-out exactly
     * 0 (zero_den: the denominator's overflow, zero_n times) */
    long *inf_at, *zero_at, *zero_n;
    char *inf_ref, *zero_den;
} ckpt_ctx;
#define CKPT_MARKS 5 /* the numbers above, a record's last */

/* Run h's record into a buffer (*buf, *n, to free): VLA_EINTR when its state was lost to a stop
 * within a step (the exact reference gives a step up) */
static int ckpt_record(void *ctx, int h, char **buf, size_t *n)
{
    const ckpt_ctx *k = ctx;
    FILE *f = open_memstream(buf, n);
    if (!f)
        return VLA_ENOMEM;
    const vla_rows *rows = &k->rows[h];
    int r = fwrite(&k->ci[h], sizeof k->ci[h], 1, f) == 1 ? vla_engine_save(k->m, h, f) : VLA_EIO;
    if (!r && k->ref)
        r = vla_engine_save(k->ref, h, f);
    const long marks[CKPT_MARKS] = {k->inf_at[h], k->inf_ref[h], k->zero_at[h], k->zero_den[h],
                                    k->zero_n[h]};
    if (!r && !((k->drv->acc_size == 0 || fwrite(k->acc[h], k->drv->acc_size, 1, f) == 1) &&
                fwrite(&rows->n, sizeof rows->n, 1, f) == 1 &&
                (rows->n == 0 || /* a run stopped before its first row has no rows->v */
                 fwrite(rows->v, sizeof(double) * rows->ncol, rows->n, f) == (size_t)rows->n) &&
                fwrite(marks, sizeof marks, 1, f) == 1))
        r = VLA_ENOMEM;
    if (fclose(f) && !r)
        r = VLA_ENOMEM;
    if (r) {
        free(*buf);
        *buf = NULL;
    }
    return r;
}

/* vla_drive's parse: run h's record into the engines, its accumulator and rows */
static int ckpt_parse_run(void *ctx, FILE *f, int h, long rlen, vla_error *err)
{
    const ckpt_ctx *k = ctx;
    (void)rlen;
    vla_rows *rows = &k->rows[h];
    long ci = -1, n = -1;
    if (fread(&ci, sizeof ci, 1, f) != 1 || ci < 0 || ci > k->nck)
        return ck_fail(err, CK_DAMAGED, "its next checkpoint's index is out of range");
    if (vla_engine_load(k->m, h, f))
        return ck_fail(err, CK_DAMAGED, "its state of the model is not valid");
    if (k->ref && vla_engine_load(k->ref, h, f))
        return ck_fail(err, CK_DAMAGED, "its state of the reference is not valid");
    /* the steps agree with the index: the model at or past the last checkpoint measured and not
     * past the next, the reference at most where the model is (it advances second) */
    long tm = vla_engine_t(k->m, h), tr = k->ref ? vla_engine_t(k->ref, h) : tm;
    long lo = ci > 0 ? k->cks[ci - 1] : 0, hi = ci < k->nck ? k->cks[ci] : k->c->steps;
    if (!(tm >= lo && tm <= hi && tr >= lo && tr <= tm))
        return ck_fail(err, CK_DAMAGED, "its steps (model %ld, reference %ld) do not fit its "
                       "checkpoint index %ld", tm, tr, ci);
    if ((k->drv->acc_size && fread(k->acc[h], k->drv->acc_size, 1, f) != 1) ||
        fread(&n, sizeof n, 1, f) != 1 || n != ci)
        return ck_fail(err, CK_DAMAGED, "its rows are not its checkpoints'");
    for (long i = 0; i < n; i++) {
        double row[64];
        if (rows->ncol > 64 || fread(row, sizeof(double), rows->ncol, f) != (size_t)rows->ncol ||
            row[0] != (double)k->cks[i] || vla_rows_add(rows, row))
            return ck_fail(err, CK_DAMAGED, "its rows are not its checkpoints'");
    }
    long mk[CKPT_MARKS];
    if (fread(mk, sizeof mk, 1, f) != 1 || mk[0] < 0 || mk[0] > tm || mk[2] < 0 || mk[2] > tm ||
        (unsigned long)mk[1] > 1 || (unsigned long)mk[3] > 1 || mk[4] < 0 || mk[4] > 2 * tm ||
        (mk[1] && !mk[0]) || (mk[3] && !mk[2]))
        return ck_fail(err, CK_DAMAGED, "its summary marks are not valid");
    k->inf_at[h] = mk[0], k->inf_ref[h] = (char)mk[1], k->zero_at[h] = mk[2];
    k->zero_den[h] = (char)mk[3], k->zero_n[h] = mk[4];
    if (k->drv->acc_size && k->drv->check(k->acc[h], rows, tm, k->drv->ctx))
        return ck_fail(err, CK_DAMAGED, "its accumulator is not valid");
    k->ci[h] = ci;
    return CK_OK;
}

/* every run's state in memory, so that a run whose checkpoint cannot be used starts over */
static FILE *save_all(vla_engine *e)
{
    FILE *f = e ? tmpfile() : NULL;
    for (int h = 0; f && h < vla_engine_runs(e); h++)
        if (vla_engine_save(e, h, f)) {
            fclose(f);
            return NULL;
        }
    return f;
}

/* run h of e back to the state save_all kept (runs saved one after another, each the same size) */
static int restore(vla_engine *e, FILE *f, int h)
{
    long size = ftell(f) / vla_engine_runs(e);
    if (fseek(f, size * h, SEEK_SET))
        return VLA_EIO;
    int r = vla_engine_load(e, h, f);
    fseek(f, 0, SEEK_END);
    return r;
}

/* ---- checkpoints of a program's units of work ----
 * OUT.ckpt as vla_drive writes it, a record per unit: a finished unit's bytes, or length 0 */

struct vla_units {
    const vla_cli *c;
    const vla_cli_spec *spec;
    const char *noun; /* "row" */
    int n, files, resumed, done, save_failed;
    char **rec; /* each finished unit's bytes, NULL while not finished */
    size_t *len;
    double every, last_save;
    char *key;
    ckpt_file file;
};

static int units_record(void *ctx, int i, char **buf, size_t *n)
{
    const vla_units *u = ctx;
    *buf = NULL;
    *n = 0;
    if (!u->rec[i])
        return VLA_OK;
    if (!(*buf = malloc(u->len[i])))
        return VLA_ENOMEM;
    memcpy(*buf, u->rec[i], *n = u->len[i]);
    return VLA_OK;
}

static int units_parse(void *ctx, FILE *f, int i, long len, vla_error *err)
{
    vla_units *u = ctx;
    free(u->rec[i]);
    u->rec[i] = malloc((size_t)len);
    if (!u->rec[i] || fread(u->rec[i], 1, (size_t)len, f) != (size_t)len) {
        free(u->rec[i]);
        u->rec[i] = NULL;
        return ck_fail(err, CK_DAMAGED, "out of memory");
    }
    u->len[i] = (size_t)len;
    return CK_OK;
}

/* the program's own options in a key: "--NAME=VALUE" each, the last one given, or "(default)" */
static char *units_options(const vla_cli *c, const vla_cli_spec *spec, const char *extra)
{
    size_t n = strlen(extra) + 64;
    for (int i = 1; i < c->argc; i++)
        n += strlen(c->argv[i]) + 16;
    for (const vla_cli_opt *o = spec->opts; o && o->name; o++)
        n += strlen(o->name) + 16;
    char *s = malloc(n);
    if (!s)
        return NULL;
    snprintf(s, n, "runs=%d\n%s", c->runs, extra);
    for (const vla_cli_opt *o = spec->opts; o && o->name; o++) {
        const char *v = "(default)";
        for (int i = 1; i < c->argc; i++)
            if (!strncmp(c->argv[i], "--", 2) && !strcmp(c->argv[i] + 2, o->name))
                v = !o->arg ? "on" : i + 1 < c->argc ? c->argv[i + 1] : v;
        snprintf(s + strlen(s), n - strlen(s), "--%s=%s\n", o->name, v);
    }
    return s;
}

int vla_units_open(vla_units **up, const vla_cli *c, const vla_cli_spec *spec, const char *noun,
                   const char *extra, int n, size_t max)
{
    vla_units *u = calloc(1, sizeof *u);
    char *opts = NULL;
    int status = 1;
    *up = NULL;
    if (!u || !(u->rec = calloc(n > 0 ? n : 1, sizeof *u->rec)) ||
        !(u->len = calloc(n > 0 ? n : 1, sizeof *u->len)) ||
        !(opts = units_options(c, spec, extra ? extra : ""))) {
        fprintf(stderr, "%s: out of memory\n", spec->prog);
        goto fail;
    }
    u->c = c, u->spec = spec, u->noun = noun, u->n = n;
    u->files = ckpt_beside(c->out);
    if (ckpt_every(spec->prog, &u->every)) {
        status = 2;
        goto fail;
    }
    u->last_save = vla_cli_now();
    /* (the table's columns follow from the build, the program and its options) */
    if (u->files && !(u->key = ckpt_key(c, spec, "-", opts, &status)))
        goto fail;
    u->file = (ckpt_file){c->out, u->key ? u->key : "", n, 1, (long)max, units_record,
                          units_parse, u};
    if (c->resume && u->files) {
        int *got = calloc(n > 0 ? n : 1, sizeof *got);
        vla_error why = {0}, first_bad = {0};
        int file = got ? ckpt_load(&u->file, got, &first_bad, &why) : -1;
        if (file < 0) {
            fprintf(stderr, "%s: out of memory\n", spec->prog);
        } else if (!(status = ckpt_refused(spec->prog, c->out, file, &why))) {
            int bad = 0, b1 = -1;
            for (int i = 0; i < n; i++) {
                if (file != CK_OK || got[i] != CK_OK) { /* a damaged one starts over */
                    free(u->rec[i]);
                    u->rec[i] = NULL;
                }
                if (file == CK_OK && got[i] == CK_DAMAGED && !bad++)
                    b1 = i;
                u->resumed += u->rec[i] != NULL;
            }
            if (file == CK_DAMAGED)
                fprintf(stderr, "%s: warning: %s.ckpt is damaged (%s): every %s starts over\n",
                        spec->prog, c->out, vla_error_msg(&why), noun);
            else if (file == CK_MISSING)
                fprintf(stderr, "%s: note: no checkpoint %s.ckpt: every %s starts over\n",
                        spec->prog, c->out, noun);
            else if (bad)
                fprintf(stderr, "%s: warning: %s.ckpt: %d %s%s damaged (the first, %s %d: %s): "
                                "%s over\n", spec->prog, c->out, bad, noun, bad == 1 ? " is" :
                        "s are", noun, b1, vla_error_msg(&first_bad),
                        bad == 1 ? "it starts" : "they start");
            if (u->resumed)
                fprintf(stderr, "%s: note: %s.ckpt: %d of %d %ss finished before, kept\n",
                        spec->prog, c->out, u->resumed, n, noun);
        }
        free(got);
        if (status)
            goto fail;
    }
    u->done = u->resumed;
    free(opts);
    *up = u;
    return 0;
fail:
    free(opts);
    vla_units_free(u);
    return status;
}

const void *vla_units_get(const vla_units *u, int i, size_t *len)
{
    if (len)
        *len = u->rec[i] ? u->len[i] : 0;
    return u->rec[i];
}

void vla_units_drop(vla_units *u, int i)
{
    u->done -= u->rec[i] != NULL;
    free(u->rec[i]);
    u->rec[i] = NULL;
}

static void units_write(vla_units *u)
{
    vla_error why;
    int kept = 0, first = -1;
    if (ckpt_save(&u->file, &kept, &first, &why)) {
        if (!u->save_failed++ || vla_cli_stop) /* said once, not every VLA_CHECKPOINT_SECONDS */
            fprintf(stderr, "%s: cannot write checkpoint %s.ckpt: %s\n", u->spec->prog, u->c->out,
                    vla_error_msg(&why));
    } else {
        u->save_failed = 0;
    }
    u->last_save = vla_cli_now();
}

int vla_units_keep(vla_units *u, int i, const void *rec, size_t len)
{
    char *b = malloc(len ? len : 1);
    if (!b)
        return VLA_ENOMEM;
    memcpy(b, rec, len);
    u->done += !u->rec[i];
    free(u->rec[i]);
    u->rec[i] = b;
    u->len[i] = len;
    return VLA_OK;
}

int vla_units_due(const vla_units *u)
{
    return u->files && (vla_cli_stop || vla_cli_now() - u->last_save >= u->every);
}

int vla_units_save(vla_units *u, int i, const void *rec, size_t len)
{
    const int e = vla_units_keep(u, i, rec, len);
    if (!e && u->files && vla_cli_now() - u->last_save >= u->every)
        units_write(u);
    return e;
}

int vla_units_end(vla_units *u, int status)
{
    const vla_cli *c = u->c;
    const char *prog = u->spec->prog, *noun = u->noun;
    if (status == 3 && !u->files) {
        fprintf(stderr, "%s: interrupted (signal %d); nothing saved: checkpoints need --out "
                        "naming a regular file.\n", prog, (int)vla_cli_stop);
    } else if (status == 3 && !u->done) { /* (no file for nothing) */
        fprintf(stderr, "%s: interrupted (signal %d); nothing saved: no %s had finished.\n",
                prog, (int)vla_cli_stop, noun);
    } else if (status == 3) {
        units_write(u);
        if (u->save_failed)
            fprintf(stderr, "%s: interrupted (signal %d); the checkpoint could not be written "
                            "beside %s. --resume continues from the last one written.\n", prog,
                    (int)vla_cli_stop, c->out);
        else
            fprintf(stderr, "%s: interrupted (signal %d); %d of %d %ss finished, saved in "
                            "%s.ckpt. Resume with the same command and --resume (the %s in "
                            "progress starts over).\n", prog, (int)vla_cli_stop, u->done, u->n,
                    noun, c->out, noun);
    } else if (status == 0 && u->files) {
        ckpt_remove_at_exit(c->out);
    }
    vla_units_free(u);
    return status;
}

void vla_units_free(vla_units *u)
{
    for (int i = 0; u && u->rec && i < u->n; i++)
        free(u->rec[i]);
    if (u) {
        free(u->rec);
        free(u->len);
        free(u->key);
    }
    free(u);
}

/* ---- the driver ---- */

typedef struct {
    const vla_driver *drv;
    void **acc;
} step_ctx;

static int on_step(void *ctx, const vla_step_view *v)
{
    const step_ctx *s = ctx;
    return s->drv->on_step(v, s->acc[v->run], s->drv->ctx);
}

/* whether a run stands at its next checkpoint t, not yet measured */
static int unmeasured(vla_engine *m, const long *ci, const long *cks, long nck, int nr, long t)
{
    for (int h = 0; h < nr; h++)
        if (ci[h] < nck && cks[ci[h]] == t && vla_engine_t(m, h) == t)
            return 1;
    return 0;
}

/* what vla_drive's steps share: the command, the engines, each run's rows and accumulator, its
 * checkpoints, what the summary says of it, the checkpoint file */
typedef struct {
    const vla_cli *c;
    const vla_cli_spec *spec;
    const vla_driver *drv;
    vla_dat *out;
    double every; /* VLA_CHECKPOINT_SECONDS */
    int ncol, nr, files;
    size_t nbuf;  /* a measure's buffer: the largest state array */
    long nck;
    long *cks;    /* the checkpoint steps */
    long *ci;     /* each run's next checkpoint */
    vla_rows *rows;
    void **acc;
    /* the first checkpoint step at which a run's state (or its reference's: inf_ref) was not
     * finite; its first read-out exactly 0 (vla_cli_zero_readout; zero_den: because its
     * denominator overflowed, at zero_n steps, the model's count) */
    long *inf_at, *zero_at, *zero_n;
    char *inf_ref, *zero_den;
    vla_engine *m, *ref;
    step_ctx sc;
    char *key;
    ckpt_ctx kc;
    ckpt_file kf;
    long tmin; /* the step every run has reached */
    int interrupted, unsaved, kept, first_kept, save_failed;
} drive_t;

/* the runs' arrays: 0, or 1 out of memory */
static int drive_alloc(drive_t *D)
{
    const int nr = D->nr;
    D->cks = malloc((size_t)(D->nck > 0 ? D->nck : 1) * sizeof *D->cks);
    D->ci = calloc(nr, sizeof *D->ci);
    D->rows = calloc(nr, sizeof *D->rows);
    D->acc = calloc(nr, sizeof *D->acc);
    D->inf_at = calloc(nr, sizeof *D->inf_at);
    D->inf_ref = calloc(nr, 1);
    D->zero_at = calloc(nr, sizeof *D->zero_at);
    D->zero_den = calloc(nr, 1);
    D->zero_n = calloc(nr, sizeof *D->zero_n);
    int ok = D->cks && D->ci && D->rows && D->acc && D->inf_at && D->inf_ref && D->zero_at &&
             D->zero_den && D->zero_n;
    for (int h = 0; ok && h < nr; h++) {
        D->rows[h].ncol = D->ncol;
        ok = (D->acc[h] = calloc(1, D->drv->acc_size ? D->drv->acc_size : 1)) != NULL;
    }
    return !ok;
}

/* the checkpoint steps (a chunk form's rounded down to multiples of C), the model's engine and its
 * reference's: 0, or 1 with the reason in err */
static int drive_engines(drive_t *D, vla_error *err)
{
    const vla_cli *c = D->c;
    vla_checkpoints(c->steps, c->per_decade, D->cks, D->nck);
    D->nck = vla_checkpoints_form(&c->cfg, D->cks, D->nck);
    vla_engine_spec sp, rs;
    vla_cli_engine_spec(c, &c->cfg, &sp);
    sp.stream_steps = c->steps; /* (a trace is read that far, and no further) */
    if (D->drv->on_step) {
        sp.on_step = on_step;
        sp.ctx = &D->sc;
        sp.taps = D->drv->taps;
    }
    return !(vla_engine_new(&D->m, &sp, err) == 0 &&
             (vla_cli_ref_spec(c, &sp, &rs) || vla_engine_new(&D->ref, &rs, err) == 0));
}

/* what did not resume, said in one line a kind: file is ckpt_load's verdict on the file, got[h]
 * each run's (set to the file's where the file is not CK_OK) */
static void resume_said(const drive_t *D, int file, int *got, const vla_error *fwhy,
                        const vla_error *first_bad)
{
    const char *prog = D->spec->prog, *out = D->c->out;
    const int nr = D->nr;
    int nbad = 0, nmiss = 0, bad1 = -1, miss1 = -1;
    for (int h = 0; h < nr; h++) {
        got[h] = file == CK_OK ? got[h] : file;
        if (got[h] == CK_DAMAGED && !nbad++)
            bad1 = h;
        if (got[h] == CK_MISSING && !nmiss++)
            miss1 = h;
    }
    const char *all = nr == 1 ? "head 0" : "every head";
    char older[600];
    snprintf(older, sizeof older, "%s.ckpt.0", out);
    struct stat so;
    const int old = file == CK_MISSING && stat(older, &so) == 0;
    if (file == CK_DAMAGED)
        fprintf(stderr, "%s: warning: %s.ckpt is damaged (%s): %s starts over from step 0\n",
                prog, out, vla_error_msg(fwhy), all);
    else if (file == CK_MISSING)
        fprintf(stderr, "%s: note: no checkpoint %s.ckpt%s%s%s: %s starts from step 0\n",
                prog, out, old ? " (" : "", old ? older : "",
                old ? " is one of an older vlastab, one file a head, which this one does not "
                      "read)"
                    : "", all);
    else if (nbad == 1)
        fprintf(stderr, "%s: warning: %s.ckpt: the checkpoint of head %d is damaged (%s): "
                        "head %d starts over from step 0\n", prog, out, bad1,
                vla_error_msg(first_bad), bad1);
    else if (nbad)
        fprintf(stderr, "%s: warning: %s.ckpt: the checkpoints of %d heads are damaged (the "
                        "first, head %d: %s): they start over from step 0\n", prog,
                out, nbad, bad1, vla_error_msg(first_bad));
    if (file == CK_OK && nmiss)
        fprintf(stderr, "%s: note: %s.ckpt holds no checkpoint of %d head%s (the first: head "
                        "%d): %s from step 0\n", prog, out, nmiss,
                nmiss == 1 ? "" : "s", miss1, nmiss == 1 ? "it starts" : "they start");
}

/* the runs that did not resume, from the start: with --resume, their partial state dropped and
 * their engines restored from m0 and r0 (the engines as made, save_all); each one's init. The
 * status */
static int runs_start(drive_t *D, const int *got, FILE *m0, FILE *r0)
{
    const vla_cli *c = D->c;
    const vla_driver *drv = D->drv;
    int status = 0;
    for (int h = 0; h < D->nr && !status; h++) {
        vla_run r = {D->m, D->ref, h, 0};
        if (got[h] == CK_OK && c->resume)
            continue;
        if (c->resume) { /* no usable checkpoint: start over, keep nothing partial */
            D->rows[h].n = 0;
            D->ci[h] = 0;
            memset(D->acc[h], 0, drv->acc_size); /* a failed load may have filled part of it */
            D->inf_at[h] = D->zero_at[h] = D->zero_n[h] = 0;
            D->inf_ref[h] = D->zero_den[h] = 0;
            int bad = !m0 || restore(D->m, m0, h) != 0 ||
                      (D->ref && (!r0 || restore(D->ref, r0, h) != 0));
            if (bad) {
                fprintf(stderr, "%s: head %d: cannot start over from a damaged checkpoint\n",
                        D->spec->prog, h);
                status = 1;
            }
        }
        int e = !status && drv->init ? drv->init(&r, D->acc[h], drv->ctx) : 0;
        if (e) {
            fprintf(stderr, "%s: head %d: %s\n", D->spec->prog, h, vla_strerror(e));
            status = 1;
        }
    }
    return status;
}

/* each run from its checkpoint, or from the start; a checkpoint of another run is refused
 * before anything is written, and kept. The status */
static int drive_resume(drive_t *D)
{
    const vla_cli *c = D->c;
    const int nr = D->nr;
    FILE *m0 = c->resume ? save_all(D->m) : NULL, *r0 = c->resume ? save_all(D->ref) : NULL;
    int *got = calloc(nr, sizeof *got), status;
    vla_error fwhy = {0}, first_bad = {0};
    int file = !got ? -1 : c->resume ? ckpt_load(&D->kf, got, &first_bad, &fwhy) : CK_MISSING;
    if (file < 0) {
        fprintf(stderr, "%s: out of memory\n", D->spec->prog);
        status = 1;
    } else {
        status = ckpt_refused(D->spec->prog, c->out, file, &fwhy);
    }
    if (!status && file >= 0 && c->resume)
        resume_said(D, file, got, &fwhy, &first_bad);
    if (!status)
        status = runs_start(D, got, m0, r0);
    free(got);
    if (m0)
        fclose(m0);
    if (r0)
        fclose(r0);
    D->tmin = c->steps;
    for (int h = 0; h < nr; h++) {
        long t = vla_engine_t(D->m, h);
        D->tmin = t < D->tmin ? t : D->tmin;
    }
    return status;
}

/* run h's checkpoint at step to: the program's measures, then whether its state (or its
 * reference's) went non-finite and its read-out to exactly 0. 0, or the measures' error */
static int measure_run(drive_t *D, int h, long to)
{
    vla_engine *m = D->m, *ref = D->ref;
    D->ci[h]++;
    vla_run r = {m, ref, h, to};
    double *buf = malloc(D->nbuf * sizeof *buf);
    int e = buf ? D->drv->on_checkpoint(&r, D->acc[h], &D->rows[h], D->drv->ctx) : VLA_ENOMEM;
    if (e) {
        free(buf);
        return e;
    }
    /* an overflow is a result, but it must not pass unsaid (the warning below) */
    if (!D->inf_at[h] && !vla_cli_run_finite(m, h, buf))
        D->inf_at[h] = to;
    else if (!D->inf_at[h] && ref && !vla_cli_run_finite(ref, h, buf))
        D->inf_at[h] = to, D->inf_ref[h] = 1;
    /* a read-out exactly 0: its denominator's overflow, which the model counts with its step (no
     * reference needed; in a state that is not finite, the warning of that says it), else one
     * that the reference's is not */
    vla_counts cn;
    const int counted = vla_engine_counts(m, h, &cn) == 0;
    if (!D->zero_at[h] && !D->inf_at[h] && counted && cn.den_inf)
        D->zero_at[h] = cn.den_inf_t, D->zero_den[h] = 1;
    else if (!D->zero_at[h] && vla_cli_zero_readout(m, ref, h, buf))
        D->zero_at[h] = to;
    if (D->zero_den[h] && counted)
        D->zero_n[h] = cn.den_inf;
    free(buf);
    return 0;
}

/* the checkpoint at step to of every run that is there, in parallel: 0, or 1 after a failed
 * run's reason */
static int measure_runs(drive_t *D, long to)
{
    int bad = 0;
    /* no more threads than runs: libgomp crashes when asked for 100000 (OMP_NUM_THREADS) */
    const int nth = vla_cli_threads() < D->nr ? vla_cli_threads() : D->nr;
    (void)nth;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad) num_threads(nth)
#endif
    for (int h = 0; h < D->nr; h++) {
        if (!(D->ci[h] < D->nck && D->cks[D->ci[h]] == to && vla_engine_t(D->m, h) == to))
            continue;
        int e = measure_run(D, h, to);
        if (e) {
#ifdef _OPENMP
#pragma omp critical(drive_err)
#endif
            fprintf(stderr, "%s: head %d, step %ld: %s\n", D->spec->prog, h, to, vla_strerror(e));
            bad++;
        }
    }
    return bad ? 1 : 0;
}

/* the runs advanced from checkpoint to checkpoint in slices of about a second, each checkpoint
 * measured, the checkpoint file written every `every` seconds and at a stop, unless status (the
 * resume's) is already a failure. The status */
static int drive_loop(drive_t *D, int status)
{
    const vla_cli *c = D->c;
    const double every = D->every;
    const int nr = D->nr;
    vla_progress prog;
    vla_progress_start(&prog, c->steps * nr, "head-steps");
    double last_save = vla_cli_now();
    long slice = every == 0 ? 1024 : 64; /* steps per slice: grows to about a second */
    /* (and once more at the end when a checkpoint at tmin is unmeasured: a stop inside the
     * last slice leaves the runs at the last step, whose rows a --resume must still measure) */
    while (!status && (D->tmin < c->steps || unmeasured(D->m, D->ci, D->cks, D->nck, nr, D->tmin))) {
        long next = c->steps, tmin = D->tmin;
        for (int h = 0; h < nr; h++)
            if (D->ci[h] < D->nck && D->cks[D->ci[h]] < next)
                next = D->cks[D->ci[h]];
        long to = tmin + slice < next ? tmin + slice : next;
        if (to < next && vla_form_pending(&c->cfg, 1)) { /* (a slice of whole chunks) */
            long C = c->cfg.chunk;
            to = to / C * C > tmin ? to / C * C : tmin + C < next ? tmin + C : next;
        }
        double t0 = vla_cli_now();
        int e = vla_engine_advance(D->m, to);
        if (!e && D->ref)
            e = vla_engine_advance(D->ref, to);
        if (e == VLA_EINTR) {
            D->interrupted = 1;
        } else if (e) {
            /* "head H, step T: reason", of the model or of its reference */
            fprintf(stderr, "%s: %s\n", D->spec->prog,
                    vla_error_msg(vla_engine_error(vla_engine_error(D->m)->code ? D->m : D->ref)));
            status = 1;
            break;
        }
        if (!D->interrupted && every > 0) { /* the next slice: about a second, at most `every` */
            /* (not below 10 ms: VLA_CHECKPOINT_SECONDS=1e-300 made slices of one step, each
             * followed by a checkpoint, 50 steps a second) */
            double dt = vla_cli_now() - t0, want = every < 0.01 ? 0.01 : every < 1 ? every : 1;
            long s = dt > 0 ? (long)((to - tmin) * want / dt) : 2 * slice;
            slice = s < 1 ? 1 : s > 2 * slice ? 2 * slice : s;
        }
        if (!D->interrupted) {
            D->tmin = to;
            status = measure_runs(D, to);
            vla_progress_update(&prog, D->tmin * nr);
        }
        if (D->files && !status && (D->interrupted || vla_cli_now() - last_save >= every)) {
            vla_error why;
            if (ckpt_save(&D->kf, &D->kept, &D->first_kept, &why)) {
                /* said once, not every VLA_CHECKPOINT_SECONDS */
                if (!D->save_failed++ || D->interrupted)
                    fprintf(stderr, "%s: cannot write checkpoint %s.ckpt: %s\n", D->spec->prog,
                            c->out, vla_error_msg(&why));
                D->unsaved = D->interrupted;
            }
            last_save = vla_cli_now();
        }
        if (D->interrupted)
            break;
    }
    vla_progress_end(&prog);
    return status;
}

/* the runs' non-finite states and a failed solve, said (a failed solve is a result too: said in
 * the table's header and on stderr, with the step and the value of the first failure); *solver:
 * the solver's header line in shead */
static void drive_warnings(const drive_t *D, int status, int *solver, char *shead, size_t len)
{
    const char *prog = D->spec->prog;
    const int nr = D->nr;
    int ninf = 0, first = -1; /* the run that went non-finite first, as the summary names it */
    for (int h = 0; h < nr; h++)
        if (D->inf_at[h] && (ninf++ == 0 || D->inf_at[h] < D->inf_at[first]))
            first = h;
    vla_error swarn = {0};
    *solver = !status && !D->interrupted && vla_cli_solver_report(D->m, shead, len, &swarn);
    const char *state = first >= 0 && D->inf_ref[first] ? "the state of the reference"
                                                         : "the state of the model";
    if (swarn.code && ninf) { /* one line: the failure, then the non-finite state it led to */
        char text[600];
        nonfinite_text(text, sizeof text, state, ninf, nr, first, D->inf_at[first],
                       "checked at the table's steps", "its rows carry inf or nan from there on");
        fprintf(stderr, "%s: warning: %s; %s\n", prog, vla_error_msg(&swarn), text);
        if (D->out)
            vla_dat_meta(D->out, "nonfinite", "%s", text);
    } else if (swarn.code) {
        fprintf(stderr, "%s: warning: %s\n", prog, vla_error_msg(&swarn));
    } else if (ninf && !status && !D->interrupted) {
        vla_cli_nonfinite(D->out, prog, state, ninf, nr, first, D->inf_at[first],
                          "checked at the table's steps", "its rows carry inf or nan from there on");
    }
}

/* a stop, said: where the checkpoints are, or why none */
static void interrupted_said(const drive_t *D)
{
    const char *prog = D->spec->prog, *out = D->c->out;
    if (!D->files)
        fprintf(stderr, "%s: interrupted (signal %d); nothing saved: checkpoints need --out "
                        "naming a regular file.\n", prog, (int)vla_cli_stop);
    else if (D->unsaved)
        fprintf(stderr, "%s: interrupted (signal %d); the checkpoint could not be written "
                        "beside %s. --resume continues from the last one written.\n",
                prog, (int)vla_cli_stop, out);
    else if (D->kept)
        fprintf(stderr, "%s: interrupted (signal %d) within a step of the exact reference, "
                        "given up: %d head(s) (the first: head %d) keep the checkpoint "
                        "written before, if any, and resume from there; the other %d "
                        "written beside %s. Resume with the same command and --resume.\n",
                prog, (int)vla_cli_stop, D->kept, D->first_kept, D->nr - D->kept, out);
    else
        fprintf(stderr, "%s: interrupted (signal %d); checkpoints written beside %s. Resume "
                        "with the same command and --resume.\n",
                prog, (int)vla_cli_stop, out);
}

/* the table: the solver's line, the summary, one block per run */
static void drive_table(const drive_t *D, int solver, const char *shead)
{
    vla_dat *out = D->out;
    if (solver)
        vla_dat_meta(out, "solver", "%s", shead);
    vla_cli_summary(D->spec->prog, D->c, D->drv->columns, D->rows, D->inf_at, D->zero_at,
                    D->zero_den, D->zero_n, D->m, out);
    vla_dat_columns(out, D->drv->columns);
    for (int h = 0; h < D->nr; h++) {
        if (h)
            vla_dat_block(out);
        for (long i = 0; i < D->rows[h].n; i++)
            vla_dat_row(out, D->rows[h].v + (size_t)i * D->ncol, D->ncol);
    }
    if (D->files)
        ckpt_remove_at_exit(D->c->out);
}

/* what vla_drive made, freed; its status */
static int drive_free(drive_t *D, int status)
{
    free(D->key);
    vla_engine_free(D->m);
    vla_engine_free(D->ref);
    for (int h = 0; D->rows && D->acc && h < D->nr; h++) {
        free(D->rows[h].v);
        free(D->acc[h]);
    }
    free(D->rows);
    free(D->acc);
    free(D->cks);
    free(D->ci);
    free(D->inf_at);
    free(D->inf_ref);
    free(D->zero_at);
    free(D->zero_den);
    free(D->zero_n);
    return status;
}

int vla_drive(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, vla_dat *out)
{
    drive_t D = {.c = c, .spec = spec, .drv = drv, .out = out, .first_kept = -1};
    if (ckpt_every(spec->prog, &D.every))
        return 2;
    D.ncol = count_columns(drv->columns), D.nr = c->runs, D.files = ckpt_beside(c->out);
    D.nck = vla_checkpoints(c->steps, c->per_decade, NULL, 0);
    D.nbuf = (size_t)c->cfg.d * (c->cfg.d > c->cfg.dv ? c->cfg.d : c->cfg.dv);
    const int nr = D.nr;
    int status = 0;
    vla_error err = {VLA_ENOMEM, "out of memory"};
    int bad = drive_alloc(&D);
    D.sc = (step_ctx){drv, D.acc};
    if (bad || drive_engines(&D, &err)) {
        fprintf(stderr, "%s: %s\n", spec->prog, vla_error_msg(&err));
        return drive_free(&D, 1);
    }
    vla_cli_signals();
    int lw = strcmp(c->backend, "lanes") ? 0 : vla_cuda_lanes_width(c->cfg.prec);
    if (lw > 0 && nr % lw)
        fprintf(stderr, "%s: note: --backend lanes computes %d runs per register; %d runs leave "
                        "%d lanes idle (--runs %d would fill them)\n",
                spec->prog, lw, nr, (nr + lw - 1) / lw * lw - nr, (nr + lw - 1) / lw * lw);
    char accl[40];
    snprintf(accl, sizeof accl, "accumulator=%zu\n", drv->acc_size);
    D.key = D.files ? ckpt_key(c, spec, drv->columns, accl, &status) : NULL;
    D.kc = (ckpt_ctx){c, drv, D.m, D.ref, D.acc, D.rows, D.ci, D.cks, D.nck, D.inf_at, D.zero_at,
                      D.zero_n, D.inf_ref, D.zero_den};
    D.kf = (ckpt_file){c->out, D.files ? D.key : "", nr, 16, 0, ckpt_record, ckpt_parse_run, &D.kc};
    if (!D.kf.key) /* (said) */
        return drive_free(&D, status);
    D.kf.rec_max = 8 + vla_engine_save_max(D.m) + (D.ref ? vla_engine_save_max(D.ref) : 0) +
                   (long)drv->acc_size + 8 + D.nck * D.ncol * 8 + CKPT_MARKS * 8;
    status = drive_loop(&D, drive_resume(&D));
    char shead[400];
    int solver;
    drive_warnings(&D, status, &solver, shead, sizeof shead);
    if (status) {
        status = status == 2 || status == 3 ? status : 1;
    } else if (D.interrupted) {
        interrupted_said(&D);
        status = 3;
    } else {
        drive_table(&D, solver, shead);
    }
    return drive_free(&D, status);
}
