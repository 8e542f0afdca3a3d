/* drive.c: the driver of the experiment programs. The runs of a program and their references are
 * two engines (lib's vla_engine, which owns the loop over t on whichever backend); the driver
 * advances both from checkpoint to checkpoint in slices of about a second, hands each run's
 * checkpoint to the program's measures, writes checkpoint files (every VLA_CHECKPOINT_SECONDS and
 * when a signal arrives) and resumes from them, warns when a state turns non-finite, and writes
 * the table at the end. The same whatever the backend: a run saved on one continues on another. */
#define _GNU_SOURCE /* program_invocation_short_name: the progress lines' program */
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
                     const long *zero_n, vla_dat *out)
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

/* ---- checkpoint files ----
 * OUT.ckpt holds every run's checkpoint (one file a run cost 100,001 files and 78 s to answer a
 * SIGTERM with 100,000 runs; one file is one create, one sync and one rename):
 *   the header: the magic; the run's key (its length, then text: "name=value" lines, the build,
 *     every option that decides the runs' numbers and rows, constants exactly, a trace by its
 *     contents); the number of records; FNV-1a of the header's bytes before it;
 *   a record per run, in order: its length (0: no checkpoint of that run), then the next
 *     checkpoint's index, the engines' states (vla_engine_save), the accumulator, the rows; then
 *     FNV-1a of the length and the record.
 * Read back, every size is checked against what this command's runs can hold before the bytes it
 * covers are read (a checkpoint of absurd size was once hashed whole: SIGINT answered after 52 s),
 * a checksum before what it covers is parsed, then every field. A damaged record restarts its run
 * only (and the runs after it when its length is what was damaged: their place is lost). */

static const char ckpt_magic[8] = {'v', 'l', 'a', 'c', 'k', 'p', 't', '4'};
#define CKPT_KEY_MAX 65536
#define CKPT_RUNS_MAX 100000 /* --runs' limit */

static char *ckpt_path(const char *out)
{
    size_t n = strlen(out) + 8;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s.ckpt", out);
    return p;
}

/* The checkpoint goes only when the program exits 0, that is after the table was closed (written,
 * synced and renamed): a table that fails to be written (a full disk) leaves it for --resume. */
static const char *ckpt_owner; /* OUT, an argv string: still there at exit */
static void ckpt_remove_on_success(int status, void *arg)
{
    (void)arg;
    char *path = status == 0 ? ckpt_path(ckpt_owner) : NULL, *target;
    const char *kind;
    if (path && vla_file_target(path, &target, &kind) == 0) {
        vla_file_remove_stale(target); /* OUT.ckpt.tmp.PID: left by a kill while written */
        unlink(path);
        free(target);
    }
    free(path);
}

/* The key: what a checkpoint must match to be resumed, everything that decides a run's numbers
 * and rows (a --resume with another seed, stream or horizon would otherwise splice two runs into
 * one table), and the build (a table names the commit that made it: another build's state must
 * not end in it). Not --runs or --backend for vla_drive: runs are independent, and every backend
 * gives the same bits. more: the caller's lines after the columns'. NULL, said, with the exit
 * status in *status: 1 out of memory, 2 when the stream cannot be read again (a trace changed
 * since it was parsed: its reason, as the parser says it). */
static char *ckpt_key(const vla_cli *c, const vla_cli_spec *spec, const char *columns,
                      const char *more, int *status)
{
    char cfg[1024], stream[600] = "";
    vla_config_describe(&c->cfg, cfg, sizeof cfg);
    for (char *p = cfg; *p; p++) /* one constant a line, like the rest */
        if (*p == ' ')
            *p = '\n';
    vla_stream *st;
    vla_error ve;
    if (vla_stream_open_part(&st, c->stream, c->cfg.d, c->cfg.dv, c->seed, 0, -1, c->steps, &ve)) {
        fprintf(stderr, "%s: --stream: %s\n", spec->prog, vla_error_msg(&ve));
        *status = 2;
        return NULL;
    }
    vla_stream_identity(st, stream, sizeof stream);
    vla_stream_close(st);
    size_t n = strlen(cfg) + strlen(stream) + strlen(columns) + strlen(more) +
               strlen(vla_build_git()) + 512;
    char *key = malloc(n);
    if (key)
        snprintf(key, n,
                 "build=vlastab %s (git %s)\nprogram=%s\ncolumns=%s\n%s%s\n"
                 "stream=%s\nseed=%llu\nsteps=%ld\ncheckpoints=%d\nref=%s\nref-bits=%ld\n",
                 VLA_VERSION, vla_build_git(), spec->prog, columns, more, cfg, stream,
                 (unsigned long long)c->seed, c->steps, c->per_decade,
                 c->ref == REF_EXACT ? "exact" : c->ref == REF_F64 ? "f64" : "none",
                 c->ref == REF_EXACT ? c->ref_bits : 0);
    else
        fprintf(stderr, "%s: out of memory\n", spec->prog), *status = 1;
    return key;
}

/* the option that sets a key's line, for the message of a mismatch; the value a line that
 * vla_config_describe writes only when it is not the default has when it is absent */
static const char *ckpt_option(const char *name, size_t len, const char **dflt, char *buf,
                               size_t blen)
{
    static const char *const opts[][3] = {
        {"model", "--model"}, {"track", "--track"}, {"prec", "--precision"}, {"mode", "--mode"},
        {"d", "--d"}, {"dv", "--dv"}, {"form", "--form", "seq"},
        {"stream", "--stream (a trace is known by its contents)"}, {"seed", "--seed"},
        {"steps", "--steps"}, {"checkpoints", "--checkpoints"}, {"ref", "--ref"},
        {"ref-bits", "--ref-bits"}, {"gamma", "--set gamma", "1"},
        {"keynorm", "--set keynorm", "on"}, {"program", "the program"},
        {"build", "the build"}, {"columns", "the table's columns"},
        {"accumulator", "the program's accumulator"}, {"runs", "--runs"},
        {"backend", "--backend"}};
    *dflt = NULL;
    if (len > 2 && !strncmp(name, "--", 2)) { /* a program's own option (vla_units_open's key) */
        snprintf(buf, blen, "%.*s", (int)len, name);
        return buf;
    }
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strlen(opts[i][0]) == len && !strncmp(name, opts[i][0], len)) {
            *dflt = opts[i][2];
            return opts[i][1];
        }
    snprintf(buf, blen, "--set %.*s", (int)len, name);
    return buf;
}

/* the value of NAME in a key (its line "NAME=VALUE"), NULL when it has no such line */
static const char *key_value(const char *key, const char *name, size_t nlen, size_t *vlen)
{
    for (const char *l = key; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        if (!strncmp(l, name, nlen) && l[nlen] == '=') {
            *vlen = strcspn(l + nlen + 1, "\n");
            return l + nlen + 1;
        }
    return NULL;
}

/* whether a line NAME differs between two keys */
static int key_differs(const char *got, const char *want, const char *name)
{
    size_t gl = 0, wl = 0, nl = strlen(name);
    const char *gv = key_value(got, name, nl, &gl), *wv = key_value(want, name, nl, &wl);
    return !gv || !wv || gl != wl || memcmp(gv, wv, gl);
}

/* What a checkpoint file or record is to this command, the return of its reader: CK_OK (read),
 * CK_MISSING (none), CK_DAMAGED, CK_OTHER_RUN (another command's, refused), CK_UNREADABLE (the file
 * cannot be opened), CK_STOPPED (a signal). A verdict other than CK_OK and CK_MISSING comes with its
 * reason in a vla_error, written where it is found: ck_fail(err, CK_DAMAGED, "its ...") writes it
 * (code VLA_EFORMAT; VLA_EINVAL for another run's) and is the verdict. */
enum { CK_OK, CK_MISSING, CK_DAMAGED, CK_OTHER_RUN, CK_UNREADABLE, CK_STOPPED };
#define ck_fail(err, verdict, ...)                                                                 \
    (vla_fail((err), (verdict) == CK_OTHER_RUN ? VLA_EINVAL : VLA_EFORMAT, __VA_ARGS__), (verdict))

/* Why a checkpoint's key `got` is not this command's `want`, in words: the build, the program or
 * the model when it differs (which explains the rest: the model's defaults follow it), else every
 * line that differs, of either key, with the option that sets it ("it was written with
 * form=chunk:256, this command has form=seq (--form)"): CK_OTHER_RUN, with that in err */
static int ckpt_mismatch(const char *got, const char *want, vla_error *err)
{
    static const char *const first[] = {"build", "program", "model"};
    for (int i = 0; i < 3; i++) {
        size_t gl = 6, wl = 6, nl = strlen(first[i]);
        const char *gv = key_value(got, first[i], nl, &gl), *wv = key_value(want, first[i], nl, &wl);
        if (gv && wv && gl == wl && !memcmp(gv, wv, gl))
            continue;
        if (i == 2)
            return ck_fail(err, CK_OTHER_RUN, "it was written with model=%.*s, this command has "
                           "model=%.*s (--model)", (int)gl, gv ? gv : "(none)", (int)wl,
                           wv ? wv : "(none)");
        return ck_fail(err, CK_OTHER_RUN, "it was written by %.*s, this is %.*s%s", (int)gl,
                       gv ? gv : "(none)", (int)wl, wv ? wv : "(none)",
                       i ? "" : ": a checkpoint resumes only in the build that wrote it (the "
                                "table names the commit that made it)");
    }
    /* a trace's digest is of the steps read: another horizon changes it too, which --steps says */
    const int steps_only = key_differs(got, want, "steps");
    char *was = NULL, *has = NULL, *opts = NULL; /* the lines that differ, each side's, whole */
    size_t wasn, hasn, optsn;
    FILE *fw = open_memstream(&was, &wasn), *fh = open_memstream(&has, &hasn),
         *fo = open_memstream(&opts, &optsn);
    int nd = 0;
    for (int side = 0; fw && fh && fo && side < 2; side++) /* want's lines, then only got's */
        for (const char *l = side ? got : want; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
            size_t nl = strcspn(l, "=\n"), gl = 0, wl = 0;
            const char *gv = key_value(got, l, nl, &gl), *wv = key_value(want, l, nl, &wl), *dflt;
            if ((side && wv) || (steps_only && !strncmp(l, "stream=trace:", 13)))
                continue;
            char buf[80];
            const char *opt = ckpt_option(l, nl, &dflt, buf, sizeof buf);
            if (!gv && dflt)
                gv = dflt, gl = strlen(dflt);
            if (!wv && dflt)
                wv = dflt, wl = strlen(dflt);
            if (gv && wv && gl == wl && !memcmp(gv, wv, gl))
                continue;
            const char *sep = nd++ ? " and " : "";
            fprintf(fw, "%s%.*s=%.*s", sep, (int)nl, l, (int)(gv ? gl : 6), gv ? gv : "(none)");
            fprintf(fh, "%s%.*s=%.*s", sep, (int)nl, l, (int)(wv ? wl : 6), wv ? wv : "(none)");
            fprintf(fo, "%s%s", nd > 1 ? ", " : "", opt);
        }
    const int ok = fw && fh && fo; /* (out of memory: the sentence without the lines) */
    if (fw)
        fclose(fw);
    if (fh)
        fclose(fh);
    if (fo)
        fclose(fo);
    int res = ok && nd && was && has && opts
                  ? ck_fail(err, CK_OTHER_RUN, "it was written with %s, this command has %s (%s)",
                            was, has, opts)
                  : ck_fail(err, CK_OTHER_RUN, "its key differs from this command's");
    free(was);
    free(has);
    free(opts);
    return res;
}

/* The file as such, whatever its records hold (vla_drive's runs, vla_units' units) */
typedef struct {
    const char *out, *key; /* the file is OUT.ckpt */
    int n;                 /* records */
    long rec_min, rec_max; /* the lengths a record of this command can have */
    /* record i into *buf (*n bytes, to free; *n 0: none); VLA_EINTR: the previous file's stays */
    int (*record)(void *ctx, int i, char **buf, size_t *n);
    /* record i (len bytes whose checksum matched) from f: CK_OK, or CK_DAMAGED with err */
    int (*parse)(void *ctx, FILE *f, int i, long len, vla_error *err);
    void *ctx;
} ckpt_file;

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

/* FNV-1a of f's next n bytes, continuing from *h */
static int ckpt_digest(FILE *f, long n, uint64_t *h)
{
    unsigned char buf[1 << 16];
    while (n > 0) {
        size_t want = n < (long)sizeof buf ? (size_t)n : sizeof buf;
        if (fread(buf, 1, want, f) != want)
            return VLA_EIO;
        *h = vla_fnv1a(*h, buf, want);
        n -= (long)want;
    }
    return VLA_OK;
}

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
                fwrite(rows->v, sizeof(double) * rows->ncol, rows->n, f) == (size_t)rows->n &&
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

/* The header of a checkpoint file, read and checked: CK_OK with the key's text checked against
 * this command's and *nrec, or CK_DAMAGED / CK_OTHER_RUN with the reason in err */
static int ckpt_header(const ckpt_file *k, FILE *f, long size, long *nrec, long *end,
                       vla_error *err)
{
    char magic[8], *key = NULL;
    uint32_t klen = 0, nr = 0;
    uint64_t sum = 0, want = VLA_FNV_INIT;
    int res;
    if (size < 8 + 4 + 4 + 8 || fread(magic, 8, 1, f) != 1) {
        res = ck_fail(err, CK_DAMAGED, "it is shorter than a checkpoint");
        goto done;
    }
    if (memcmp(magic, ckpt_magic, 7)) {
        res = ck_fail(err, CK_DAMAGED, "it is not a checkpoint (no magic)");
        goto done;
    }
    if (magic[7] != ckpt_magic[7]) {
        res = ck_fail(err, CK_OTHER_RUN, "it is a checkpoint of another version of vlastab "
                      "(format %c, here %c)", magic[7], ckpt_magic[7]);
        goto done;
    }
    if (fread(&klen, 4, 1, f) != 1 || klen > CKPT_KEY_MAX || 8 + 4 + (long)klen + 4 + 8 > size ||
        !(key = malloc(klen + 1)) || fread(key, 1, klen, f) != klen || fread(&nr, 4, 1, f) != 1) {
        res = ck_fail(err, CK_DAMAGED, "its header is not a checkpoint's");
        goto done;
    }
    key[klen] = 0;
    want = vla_fnv1a(vla_fnv1a(vla_fnv1a(vla_fnv1a(want, magic, 8), &klen, 4), key, klen), &nr, 4);
    if (fread(&sum, 8, 1, f) != 1 || sum != want) {
        res = ck_fail(err, CK_DAMAGED, "its header's checksum does not match its contents");
        goto done;
    }
    /* whole as written: from here on a failed test is a writer's bug or a forged file */
    *end = 8 + 4 + (long)klen + 4 + 8;
    if (nr > CKPT_RUNS_MAX)
        res = ck_fail(err, CK_DAMAGED, "it claims %u runs, more than a command has (%d)", nr,
                      CKPT_RUNS_MAX);
    else if (size > *end + (long)nr * (16 + k->rec_max))
        res = ck_fail(err, CK_DAMAGED, "it is larger (%ld bytes) than %u checkpoints of this "
                      "command's runs can be (%ld bytes)", size, nr,
                      *end + (long)nr * (16 + k->rec_max));
    else if (strcmp(key, k->key))
        res = ckpt_mismatch(key, k->key, err);
    else
        *nrec = nr, res = CK_OK;
done:
    free(key);
    return res;
}

/* Record h at f's position: its length and checksum checked, then k->parse. CK_OK, CK_MISSING
 * (length 0) or CK_DAMAGED with err; *next: where the next record starts, -1 when it cannot be
 * known */
static int ckpt_load_record(const ckpt_file *k, FILE *f, int h, long size, long *next,
                            vla_error *err)
{
    uint64_t rlen = 0, sum = 0, want = VLA_FNV_INIT;
    long at = ftell(f);
    *next = -1;
    if (fread(&rlen, 8, 1, f) != 1)
        return ck_fail(err, CK_DAMAGED, "the file ends inside it");
    if (rlen == 0) {
        *next = at + 8;
        return CK_MISSING;
    }
    if (rlen < (uint64_t)k->rec_min || rlen > (uint64_t)k->rec_max)
        return ck_fail(err, CK_DAMAGED, "its length (%llu bytes) is not that of a record of this "
                       "command's checkpoint (%ld to %ld bytes)", (unsigned long long)rlen,
                       k->rec_min, k->rec_max);
    if (at + 8 + (long)rlen + 8 > size)
        return ck_fail(err, CK_DAMAGED, "the file ends inside it");
    *next = at + 8 + (long)rlen + 8;
    want = vla_fnv1a(want, &rlen, 8);
    if (ckpt_digest(f, (long)rlen, &want) || fread(&sum, 8, 1, f) != 1 || sum != want ||
        fseek(f, at + 8, SEEK_SET))
        return ck_fail(err, CK_DAMAGED, "its checksum does not match its contents");
    /* whole as written: from here on a failed test is a writer's bug or a forged record */
    int r = k->parse(k->ctx, f, h, (long)rlen, err);
    if (r != CK_OK)
        return r;
    if (ftell(f) != at + 8 + (long)rlen || fseek(f, *next, SEEK_SET))
        return ck_fail(err, CK_DAMAGED, "it holds more than a checkpoint");
    return CK_OK;
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

/* OUT.ckpt into the engines, the accumulators and the rows: got[h] says what became of run h
 * (CK_OK, CK_MISSING, CK_DAMAGED, the first damaged one's reason in first_bad), and the return
 * what became of the file: CK_OK (read: see got), CK_MISSING (none), CK_DAMAGED (its header: every
 * run starts over), CK_OTHER_RUN (refused: kept), CK_UNREADABLE, with the reason in err, or
 * CK_STOPPED (a signal: the runs not read yet would be saved from step 0 over their checkpoints,
 * so nothing is) */
static int ckpt_load(const ckpt_file *k, int *got, vla_error *first_bad, vla_error *err)
{
    const int nr = k->n;
    char *path = ckpt_path(k->out);
    const char *kind = "";
    FILE *f = NULL;
    int r = !path ? VLA_ENOMEM : vla_file_read_open(path, LONG_MAX, &f, &kind);
    free(path);
    if (r) {
        const int errnum = errno;
        vla_fail(err, r, "%s", r == VLA_EINVAL ? kind : strerror(errnum));
        return r == VLA_EIO && errnum == ENOENT ? CK_MISSING : CK_UNREADABLE;
    }
    struct stat st;
    long size = fstat(fileno(f), &st) == 0 ? (long)st.st_size : -1, nrec = 0, at = 0;
    int res = ckpt_header(k, f, size, &nrec, &at, err), nbad = 0;
    vla_error later; /* the reasons of the damaged runs after the first, not said */
    for (int h = 0; h < nr && res == CK_OK; h++) {
        vla_error *w = nbad ? &later : first_bad;
        if (vla_cli_stop) { /* 100,000 records take seconds */
            res = CK_STOPPED;
            break;
        }
        if (h >= nrec || at < 0) {
            got[h] = h >= nrec ? CK_MISSING
                               : ck_fail(w, CK_DAMAGED, "a checkpoint before it is damaged where "
                                         "its length is: its place is lost");
        } else {
            long next;
            fseek(f, at, SEEK_SET);
            got[h] = ckpt_load_record(k, f, h, size, &next, w);
            at = next;
        }
        nbad += got[h] == CK_DAMAGED;
    }
    /* the runs of a resume with fewer --runs are not read; after the last record, nothing */
    if (res == CK_OK && nr >= nrec && at >= 0 && at != size)
        res = ck_fail(err, CK_DAMAGED, "it holds more than its %ld checkpoints", nrec);
    fclose(f);
    return res;
}

/* The previous OUT.ckpt, read record by record as a save goes, for the runs whose state a stop
 * within a step lost: they keep their record */
typedef struct {
    FILE *f;
    long at, size, nrec;
    int next, ok;
} ckpt_prev;

/* the record of run h in the previous file (*buf, *n; *n 0 when there is none usable) */
static void ckpt_prev_record(const ckpt_file *k, ckpt_prev *p, const char *target, int h,
                             char **buf, size_t *n)
{
    *buf = NULL;
    *n = 0;
    if (!p->f && p->ok >= 0) {
        const char *kind;
        struct stat st;
        p->ok = vla_file_read_open(target, LONG_MAX, &p->f, &kind) == 0 &&
                        fstat(fileno(p->f), &st) == 0 &&
                        ckpt_header(k, p->f, p->size = st.st_size, &p->nrec, &p->at, NULL) ==
                            CK_OK
                    ? 1
                    : -1;
    }
    uint64_t rlen = 0, sum;
    while (p->ok > 0 && p->next <= h && p->next < p->nrec) {
        if (fseek(p->f, p->at, SEEK_SET) || fread(&rlen, 8, 1, p->f) != 1 ||
            rlen > (uint64_t)k->rec_max || p->at + (rlen ? 16 : 8) + (long)rlen > p->size) {
            p->ok = -1;
            break;
        }
        if (p->next++ < h) {
            p->at += (rlen ? 16 : 8) + (long)rlen;
            continue;
        }
        uint64_t want = vla_fnv1a(VLA_FNV_INIT, &rlen, 8);
        *buf = rlen ? malloc(rlen) : NULL;
        if (*buf && fread(*buf, 1, rlen, p->f) == rlen && fread(&sum, 8, 1, p->f) == 1 &&
            sum == vla_fnv1a(want, *buf, rlen))
            *n = rlen;
        p->at += (rlen ? 16 : 8) + (long)rlen;
    }
}

/* VLA_STOP_AFTER_CHECKPOINTS=N: the N-th checkpoint file written stops the program as SIGINT
 * would, at that exact point whatever the machine's speed (tests stop there); 0 or unset: never */
static double ckpt_stop_after;

/* Every run's checkpoint into a temporary file beside OUT.ckpt, synced and renamed, so that a
 * kill at any moment leaves the previous checkpoint intact. A run whose state a stop within a step
 * lost (the exact reference) keeps its previous record, if any (*kept counts them, *first_kept
 * the first). 0, or a failure with its reason in err. */
static int ckpt_save(const ckpt_file *k, int *kept, int *first_kept, vla_error *err)
{
    char *path = ckpt_path(k->out), *target = NULL, *tmp = NULL;
    const char *kind = NULL;
    FILE *f = NULL;
    ckpt_prev prev = {NULL, 0, 0, 0, 0, 0};
    int r = !path ? VLA_ENOMEM : vla_file_target(path, &target, &kind);
    if (!r) {
        size_t n = strlen(target) + 32;
        if ((tmp = malloc(n))) /* its own name: two programs writing one OUT never share it */
            snprintf(tmp, n, "%s.tmp.%ld", target, (long)getpid());
        r = !tmp ? VLA_ENOMEM : (f = vla_file_create(tmp)) ? VLA_OK : VLA_EIO;
    }
    if (!r) {
        const uint32_t klen = (uint32_t)strlen(k->key), nr = (uint32_t)k->n;
        uint64_t sum = vla_fnv1a(VLA_FNV_INIT, ckpt_magic, 8);
        sum = vla_fnv1a(vla_fnv1a(vla_fnv1a(sum, &klen, 4), k->key, klen), &nr, 4);
        int ok = fwrite(ckpt_magic, 8, 1, f) == 1 && fwrite(&klen, 4, 1, f) == 1 &&
                 fwrite(k->key, 1, klen, f) == klen && fwrite(&nr, 4, 1, f) == 1 &&
                 fwrite(&sum, 8, 1, f) == 1;
        for (int h = 0; ok && !r && h < (int)nr; h++) {
            char *rec = NULL;
            size_t n = 0;
            r = k->record(k->ctx, h, &rec, &n);
            if (r == VLA_EINTR) { /* its state was given up within a step: the last stays */
                *first_kept = (*kept)++ ? *first_kept : h;
                ckpt_prev_record(k, &prev, target, h, &rec, &n);
                r = VLA_OK;
            }
            uint64_t rlen = n, rsum = vla_fnv1a(vla_fnv1a(VLA_FNV_INIT, &rlen, 8), rec, n);
            ok = !r && fwrite(&rlen, 8, 1, f) == 1 &&
                 (!n || (fwrite(rec, 1, n, f) == n && fwrite(&rsum, 8, 1, f) == 1));
            free(rec);
        }
        int errnum = errno;
        ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
        errnum = ok ? errnum : errno;
        ok = fclose(f) == 0 && ok;
        if (!r && !ok)
            r = VLA_EIO, errno = errnum;
        if (!r)
            r = vla_file_replace(tmp, target, &kind);
        static long written;
        if (!r && ++written == (long)ckpt_stop_after && !vla_cli_stop)
            vla_cli_stop = SIGINT;
        if (r) {
            errnum = errno;
            unlink(tmp);
            errno = errnum;
        }
    }
    if (prev.f)
        fclose(prev.f);
    if (r)
        vla_fail(err, r, "%s", kind ? kind : r == VLA_ENOMEM ? "out of memory" : strerror(errno));
    free(path);
    free(target);
    free(tmp);
    return r;
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

/* the seconds between checkpoints: VLA_CHECKPOINT_SECONDS (tests make them frequent), else 60;
 * a value that is not a number of seconds, or a VLA_STOP_AFTER_CHECKPOINTS that is not a count,
 * is a usage error (said; nonzero) */
static int ckpt_every(const char *prog, double *every)
{
    const char *ev = getenv("VLA_CHECKPOINT_SECONDS"), *es = getenv("VLA_STOP_AFTER_CHECKPOINTS");
    *every = 60;
    if (ev && (vla_parse_real(ev, every, NULL) || !(*every >= 0 && *every <= 1e9))) {
        fprintf(stderr, "%s: VLA_CHECKPOINT_SECONDS='%s' is not a number of seconds\n", prog, ev);
        return 2;
    }
    ckpt_stop_after = 0;
    if (es && (vla_parse_real(es, &ckpt_stop_after, NULL) || !(ckpt_stop_after >= 0 &&
               ckpt_stop_after <= 1e9 && ckpt_stop_after == (long)ckpt_stop_after))) {
        fprintf(stderr, "%s: VLA_STOP_AFTER_CHECKPOINTS='%s' is not a count\n", prog, es);
        return 2;
    }
    return 0;
}

/* checkpoints beside a regular file (or one still to come), not beside /dev/null or a pipe */
static int ckpt_beside(const char *out)
{
    struct stat st;
    return strcmp(out, "-") && (stat(out, &st) != 0 || S_ISREG(st.st_mode));
}

/* what ckpt_load's answer `file` ends, said: the exit status (0: nothing, go on) */
static int ckpt_refused(const char *prog, const char *out, int file, const vla_error *err)
{
    const char *why = vla_error_msg(err);
    if (file == CK_OTHER_RUN)
        fprintf(stderr, "%s: --resume: %s.ckpt: %s; refusing to continue another run (the "
                        "checkpoint is kept; without --resume the run starts over and "
                        "replaces it)\n", prog, out, why);
    else if (file == CK_UNREADABLE)
        fprintf(stderr, "%s: cannot read %s.ckpt: %s\n", prog, out, why);
    else if (file == CK_STOPPED)
        fprintf(stderr, "%s: interrupted (signal %d) while reading %s.ckpt, which is kept as it "
                        "was. Resume with the same command and --resume.\n", prog,
                (int)vla_cli_stop, out);
    return file == CK_OTHER_RUN ? 2 : file == CK_UNREADABLE ? 1 : file == CK_STOPPED ? 3 : 0;
}

/* the checkpoint goes when the program exits 0 (ckpt_remove_on_success) */
static void ckpt_remove_at_exit(const char *out)
{
    if (!ckpt_owner) {
        ckpt_owner = out;
        on_exit(ckpt_remove_on_success, NULL);
    }
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
                    D->zero_den, D->zero_n, out);
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
