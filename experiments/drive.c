/* drive.c: the driver of the experiment programs. The runs of a program and their references are
 * two engines (lib's vla_engine, which owns the loop over t on whichever backend); the driver
 * advances both from checkpoint to checkpoint in slices of about a second, hands each run's
 * checkpoint to the program's measures, writes checkpoint files (every VLA_CHECKPOINT_SECONDS and
 * when a signal arrives) and resumes from them, warns when a state turns non-finite, and writes
 * the table at the end. The same whatever the backend: a run saved on one continues on another. */
#include "cli.h"
#include "vlacuda.h"
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

volatile sig_atomic_t vla_cli_stop;
static void on_signal(int sig) { vla_cli_stop = sig; }

void vla_cli_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

double vla_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- progress ---- */

void vla_progress_start(vla_progress *p, long total)
{
    p->t0 = p->last = vla_cli_now();
    p->total = isatty(2) ? total : 0;
}

void vla_progress_update(vla_progress *p, long done)
{
    if (!p->total)
        return;
    double t = vla_cli_now();
    if (t - p->last < 1)
        return;
    p->last = t;
    double rate = done / (t - p->t0);
    fprintf(stderr, "\r%ld/%ld steps, %.3g steps/s, ETA %.0f s   ", done, p->total, rate,
            rate > 0 ? (p->total - done) / rate : 0);
}

void vla_progress_end(vla_progress *p)
{
    if (p->total)
        fprintf(stderr, "\r%60s\r", "");
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

void vla_cli_warn_nonfinite(const char *prog, int in_ref, int nbad, int nruns, int head, long step,
                            const char *rows)
{
    fprintf(stderr, "%s: warning: the state of %s is not finite (Inf or NaN) in %d of %d runs, "
                    "first in head %d at step %ld (checked at the table's steps); %s\n",
            prog, in_ref ? "the reference" : "the model", nbad, nruns, head, step, rows);
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
                     const long *inf_at, const long *zero_at, vla_dat *out)
{
    char msg[1200];
    int n = 0, nr = c->runs;
    long first = 0;
    int head = -1, count = 0;
    for (int h = 0; h < nr; h++)
        if (inf_at[h] && (count++, !first || inf_at[h] < first))
            first = inf_at[h], head = h;
    n += snprintf(msg + n, sizeof msg - n, count ? "non-finite in %d of %d runs (first head %d, "
                                                   "t = %ld)" : "finite in all %d runs",
                  count ? count : nr, nr, head, first);
    first = 0, head = -1, count = 0;
    for (int h = 0; h < nr; h++)
        if (zero_at[h] && (count++, !first || zero_at[h] < first))
            first = zero_at[h], head = h;
    if (count && n < (int)sizeof msg)
        n += snprintf(msg + n, sizeof msg - n, "; the read-out is exactly 0 in %d of %d runs (first "
                      "head %d, t = %ld) while the reference's is not%s", count, nr, head, first,
                      c->cfg.normalize ? " (a denominator n . phi(q) that overflowed to Inf gives "
                      "o = S phi(q) / Inf = 0: docs/trace.md)" : "");
    /* the measured errors: the first step at which one reached 1 */
    char names[512];
    snprintf(names, sizeof names, "%s", columns);
    int col = 0, any = 0;
    for (char *w = strtok(names, " "); w; w = strtok(NULL, " "), col++) {
        size_t len = strlen(w);
        if (!(len > 6 && !strcmp(w + len - 6, "relerr")) && strcmp(w, "a_drift"))
            continue;
        first = 0, head = -1;
        for (int h = 0; h < nr; h++)
            for (long i = 0; i < rows[h].n; i++) {
                const double *row = rows[h].v + (size_t)i * rows[h].ncol;
                if (row[col] >= 1 && (!first || row[0] < first))
                    first = (long)row[0], head = h;
            }
        if (first && n < (int)sizeof msg)
            n += snprintf(msg + n, sizeof msg - n, "; %s reached 1 (head %d, t = %ld)", w, head,
                          first), any = 1;
    }
    if (!any && c->ref != REF_NONE && n < (int)sizeof msg)
        snprintf(msg + n, sizeof msg - n, "; no measured error reached 1");
    /* stderr when there is something to say (the non-finite warning is said already) */
    if (count || any)
        fprintf(stderr, "%s: summary: %s\n", prog, msg);
    vla_dat_meta(out, "summary", "%s", msg);
}

/* ---- checkpoint files ---- */

/* The checkpoints go only when the program exits 0, that is after the table was closed (written,
 * synced and renamed): a table that fails to be written (a full disk) leaves them for --resume. */
static struct {
    const char *out; /* an argv string: still there at exit, unlike the caller's vla_cli */
    int runs;
} ckpt_owner;
static void ckpt_remove_on_success(int status, void *arg)
{
    (void)arg;
    for (int h = 0; status == 0 && h < ckpt_owner.runs; h++) {
        char path[4096];
        snprintf(path, sizeof path, "%s.ckpt.%d", ckpt_owner.out, h);
        unlink(path);
        strcat(path, ".tmp"); /* left by a kill while it was being written */
        unlink(path);
    }
}

/* What a checkpoint must match to be resumed: everything that decides a run's numbers and rows
 * (a --resume with another seed, stream or horizon would otherwise splice two runs into one
 * table). Not --runs or --backend: runs are independent, and every backend gives the same bits.
 * FNV-1a of the description. */
static uint64_t ckpt_key(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, int ncol)
{
    char desc[2048];
    int n = snprintf(desc, sizeof desc, "%s|%s|", spec->prog, drv->columns);
    vla_config_describe(&c->cfg, desc + n, sizeof desc - n);
    n = (int)strlen(desc);
    snprintf(desc + n, sizeof desc - n, "|%s|%llu|%ld|%d|%d|%ld|%zu|%d", c->stream,
             (unsigned long long)c->seed, c->steps, c->per_decade, (int)c->ref, c->ref_bits,
             drv->acc_size, ncol);
    uint64_t h = 14695981039346656037ULL;
    for (const char *p = desc; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}
static const char ckpt_magic[8] = {'v', 'l', 'a', 'c', 'k', 'p', 't', '2'};

typedef struct {
    const vla_cli *c;
    vla_engine *m, *ref;
    void **acc;
    size_t acc_size;
    vla_rows *rows;
    long *ci; /* each run's next checkpoint: a run stopped at one has not measured it yet */
    uint64_t key;
} ckpt_ctx;

/* run h's checkpoint: the models, the accumulator, the rows so far; written to a temporary file,
 * synced and renamed, so a kill at any moment leaves the previous checkpoint intact */
static int ckpt_save(const ckpt_ctx *k, int h)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s.ckpt.%d", k->c->out, h);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return VLA_EIO;
    const vla_rows *rows = &k->rows[h];
    int ok = fwrite(ckpt_magic, 8, 1, f) == 1 && fwrite(&k->key, sizeof k->key, 1, f) == 1 &&
             fwrite(&k->ci[h], sizeof k->ci[h], 1, f) == 1 && vla_engine_save(k->m, h, f) == 0 && (!k->ref || vla_engine_save(k->ref, h, f) == 0) &&
             (k->acc_size == 0 || fwrite(k->acc[h], k->acc_size, 1, f) == 1) &&
             fwrite(&rows->n, sizeof rows->n, 1, f) == 1 &&
             fwrite(rows->v, sizeof(double) * rows->ncol, rows->n, f) == (size_t)rows->n;
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path)) {
        unlink(tmp);
        return VLA_EIO;
    }
    return VLA_OK;
}

static int ckpt_load(const ckpt_ctx *k, int h)
{
    char path[4096], magic[8];
    snprintf(path, sizeof path, "%s.ckpt.%d", k->c->out, h);
    FILE *f = fopen(path, "rb");
    if (!f)
        return VLA_EIO;
    long n = 0;
    uint64_t key = 0;
    vla_rows *rows = &k->rows[h];
    int ok = fread(magic, 8, 1, f) == 1 && !memcmp(magic, ckpt_magic, 8) &&
             fread(&key, sizeof key, 1, f) == 1 && key == k->key &&
             fread(&k->ci[h], sizeof k->ci[h], 1, f) == 1 && k->ci[h] >= 0 &&
             vla_engine_load(k->m, h, f) == 0 && vla_engine_t(k->m, h) <= k->c->steps &&
             (!k->ref || vla_engine_load(k->ref, h, f) == 0) &&
             (k->acc_size == 0 || fread(k->acc[h], k->acc_size, 1, f) == 1) &&
             fread(&n, sizeof n, 1, f) == 1 && n >= 0 && n < (1L << 30);
    for (long i = 0; ok && i < n; i++) {
        double row[64];
        ok = rows->ncol <= 64 && fread(row, sizeof(double), rows->ncol, f) == (size_t)rows->ncol &&
             vla_rows_add(rows, row) == 0;
    }
    fclose(f);
    return ok ? VLA_OK : VLA_EFORMAT;
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

int vla_drive(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, vla_dat *out)
{
    /* tests make checkpoints frequent; a value that is not a number of seconds is a usage error */
    double every = 60;
    const char *ev = getenv("VLA_CHECKPOINT_SECONDS");
    if (ev) {
        char *end;
        every = strtod(ev, &end);
        if (end == ev || *end || !(every >= 0 && every <= 1e9)) {
            fprintf(stderr, "%s: VLA_CHECKPOINT_SECONDS='%s' is not a number of seconds\n",
                    spec->prog, ev);
            return 2;
        }
    }
    const int ncol = count_columns(drv->columns), nr = c->runs, files = strcmp(c->out, "-") != 0;
    long nck = vla_checkpoints(c->steps, c->per_decade, NULL, 0);
    long *cks = malloc((size_t)(nck > 0 ? nck : 1) * sizeof *cks);
    long *ci = calloc(nr, sizeof *ci); /* each run's next checkpoint */
    vla_rows *rows = calloc(nr, sizeof *rows);
    void **acc = calloc(nr, sizeof *acc);
    /* the first checkpoint step at which a run's state (or its reference's) was not finite */
    long *inf_at = calloc(nr, sizeof *inf_at);
    char *inf_ref = calloc(nr, 1);
    long *zero_at = calloc(nr, sizeof *zero_at); /* ... a read-out exactly 0 (vla_cli_zero_readout) */
    const size_t nbuf = (size_t)c->cfg.d * (c->cfg.d > c->cfg.dv ? c->cfg.d : c->cfg.dv);
    int ok = cks && ci && rows && acc && inf_at && inf_ref && zero_at;
    for (int h = 0; ok && h < nr; h++) {
        rows[h].ncol = ncol;
        ok = (acc[h] = calloc(1, drv->acc_size ? drv->acc_size : 1)) != NULL;
    }
    vla_engine *m = NULL, *ref = NULL;
    int status = 0;
    char err[400] = "out of memory";
    step_ctx sc = {drv, acc};
    if (ok) {
        vla_checkpoints(c->steps, c->per_decade, cks, nck);
        vla_engine_spec sp, rs;
        vla_cli_engine_spec(c, &c->cfg, &sp);
        if (drv->on_step) {
            sp.on_step = on_step;
            sp.ctx = &sc;
            sp.taps = drv->taps;
        }
        ok = vla_engine_new(&m, &sp, err, sizeof err) == 0 &&
             (vla_cli_ref_spec(c, &sp, &rs) || vla_engine_new(&ref, &rs, err, sizeof err) == 0);
    }
    if (!ok) {
        fprintf(stderr, "%s: %s\n", spec->prog, err);
        status = 1;
        goto done;
    }
    vla_cli_signals();
    int lw = strcmp(c->backend, "lanes") ? 0 : vla_cuda_lanes_width(c->cfg.prec);
    if (lw > 0 && nr % lw)
        fprintf(stderr, "%s: note: --backend lanes computes %d runs per register; %d runs leave "
                        "%d lanes idle (--runs %d would fill them)\n",
                spec->prog, lw, nr, (nr + lw - 1) / lw * lw - nr, (nr + lw - 1) / lw * lw);
    ckpt_ctx kc = {c, m, ref, acc, drv->acc_size, rows, ci, ckpt_key(c, spec, drv, ncol)};

    /* each run from its checkpoint, or from the start */
    FILE *m0 = c->resume ? save_all(m) : NULL, *r0 = c->resume ? save_all(ref) : NULL;
    for (int h = 0; h < nr && !status; h++) {
        vla_run r = {m, ref, h, 0};
        if (c->resume && ckpt_load(&kc, h) == 0)
            continue;
        if (c->resume) { /* no usable checkpoint: start over, keep nothing partial */
            rows[h].n = 0;
            ci[h] = 0;
            memset(acc[h], 0, drv->acc_size); /* a failed load may have filled part of it */
            int bad = !m0 || restore(m, m0, h) != 0 || (ref && (!r0 || restore(ref, r0, h) != 0));
            if (bad) {
                fprintf(stderr, "%s: head %d: cannot start over from a damaged checkpoint\n",
                        spec->prog, h);
                status = 1;
            }
        }
        int e = !status && drv->init ? drv->init(&r, acc[h], drv->ctx) : 0;
        if (e) {
            fprintf(stderr, "%s: head %d: %s\n", spec->prog, h, vla_strerror(e));
            status = 1;
        }
    }
    if (m0)
        fclose(m0);
    if (r0)
        fclose(r0);
    long tmin = c->steps;
    for (int h = 0; h < nr; h++) {
        long t = vla_engine_t(m, h);
        tmin = t < tmin ? t : tmin;
        if (ci[h] > nck || (ci[h] < nck && cks[ci[h]] < t)) {
            fprintf(stderr, "%s: head %d: the checkpoint file is damaged (step %ld, checkpoint "
                            "%ld)\n", spec->prog, h, t, ci[h]);
            status = 1;
        }
    }

    vla_progress prog;
    vla_progress_start(&prog, c->steps * nr);
    double last_save = vla_cli_now();
    long slice = every == 0 ? 1024 : 64; /* steps per slice: grows to about a second */
    int interrupted = 0, unsaved = 0;
    while (!status && tmin < c->steps) {
        long next = c->steps;
        for (int h = 0; h < nr; h++)
            if (ci[h] < nck && cks[ci[h]] < next)
                next = cks[ci[h]];
        long to = tmin + slice < next ? tmin + slice : next;
        double t0 = vla_cli_now();
        int e = vla_engine_advance(m, to);
        if (!e && ref)
            e = vla_engine_advance(ref, to);
        if (e == VLA_EINTR) {
            interrupted = 1;
        } else if (e) {
            /* "head H, step T: reason", of the model or of its reference */
            fprintf(stderr, "%s: %s\n", spec->prog,
                    vla_engine_error(m)[0] ? vla_engine_error(m) : vla_engine_error(ref));
            status = 1;
            break;
        }
        if (!interrupted && every > 0) { /* the next slice: about a second, at most `every` */
            double dt = vla_cli_now() - t0, want = every < 1 ? every : 1;
            long s = dt > 0 ? (long)((to - tmin) * want / dt) : 2 * slice;
            slice = s < 1 ? 1 : s > 2 * slice ? 2 * slice : s;
        }
        if (!interrupted) {
            tmin = to;
            /* the checkpoint of every run that is there: the program's measures, in parallel */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : status)
#endif
            for (int h = 0; h < nr; h++) {
                if (!(ci[h] < nck && cks[ci[h]] == to && vla_engine_t(m, h) == to))
                    continue;
                ci[h]++;
                vla_run r = {m, ref, h, to};
                double *buf = malloc(nbuf * sizeof *buf);
                int e2 = buf ? drv->on_checkpoint(&r, acc[h], &rows[h], drv->ctx) : VLA_ENOMEM;
                if (e2) {
                    free(buf);
#ifdef _OPENMP
#pragma omp critical(drive_err)
#endif
                    fprintf(stderr, "%s: head %d, step %ld: %s\n", spec->prog, h, to,
                            vla_strerror(e2));
                    status++;
                    continue;
                }
                /* an overflow is a result, but it must not pass unsaid (the warning below) */
                if (!inf_at[h] && !vla_cli_run_finite(m, h, buf))
                    inf_at[h] = to;
                else if (!inf_at[h] && ref && !vla_cli_run_finite(ref, h, buf))
                    inf_at[h] = to, inf_ref[h] = 1;
                if (!zero_at[h] && vla_cli_zero_readout(m, ref, h, buf))
                    zero_at[h] = to;
                free(buf);
            }
            status = status ? 1 : 0;
            vla_progress_update(&prog, tmin * nr);
        }
        if (files && !status && (interrupted || vla_cli_now() - last_save >= every)) {
            for (int h = 0; h < nr; h++)
                if (ckpt_save(&kc, h)) {
                    fprintf(stderr, "%s: cannot write checkpoint %s.ckpt.%d\n", spec->prog, c->out, h);
                    unsaved += interrupted;
                }
            last_save = vla_cli_now();
        }
        if (interrupted)
            break;
    }
    vla_progress_end(&prog);

    int ninf = 0, first = -1;
    for (int h = 0; h < nr; h++)
        if (inf_at[h] && ninf++ == 0)
            first = h;
    if (ninf && !status)
        vla_cli_warn_nonfinite(spec->prog, inf_ref[first], ninf, nr, first, inf_at[first],
                               "its rows carry inf or nan from there on");
    if (status) {
        status = 1;
    } else if (interrupted) {
        if (!files)
            fprintf(stderr, "%s: interrupted (signal %d); nothing saved: checkpoints need --out "
                            "FILE.\n", spec->prog, (int)vla_cli_stop);
        else if (unsaved)
            fprintf(stderr, "%s: interrupted (signal %d); %d checkpoint(s) could not be written "
                            "beside %s. --resume continues from the last ones written.\n",
                    spec->prog, (int)vla_cli_stop, unsaved, c->out);
        else
            fprintf(stderr, "%s: interrupted (signal %d); checkpoints written beside %s. Resume "
                            "with the same command and --resume.\n",
                    spec->prog, (int)vla_cli_stop, c->out);
        status = 3;
    } else {
        vla_cli_summary(spec->prog, c, drv->columns, rows, inf_at, zero_at, out);
        vla_dat_columns(out, drv->columns);
        for (int h = 0; h < nr; h++) {
            if (h)
                vla_dat_block(out);
            for (long i = 0; i < rows[h].n; i++)
                vla_dat_row(out, rows[h].v + (size_t)i * ncol, ncol);
        }
        if (files && !ckpt_owner.out) {
            ckpt_owner.out = c->out;
            ckpt_owner.runs = nr;
            on_exit(ckpt_remove_on_success, NULL);
        }
    }
done:
    vla_engine_free(m);
    vla_engine_free(ref);
    for (int h = 0; rows && acc && h < nr; h++) {
        free(rows[h].v);
        free(acc[h]);
    }
    free(rows);
    free(acc);
    free(cks);
    free(ci);
    free(inf_at);
    free(inf_ref);
    free(zero_at);
    return status;
}
