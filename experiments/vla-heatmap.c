/* vla-heatmap: snapshots of the penalty inverse A_t and of M_t at chosen steps, as gnuplot-ready
 * matrices (the A_t / M_t heatmap figure), with their diagonals. One head, no reference: the run
 * is short and the question is the picture, so it advances its engine from snapshot to snapshot
 * itself; each snapshot, with the state it was taken from, is a unit of drive.c's checkpoint
 * (vla_units). M_t's Gram is reference/drift.c's. */
#include "cli.h"
#include "vlaref.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS "t i j a m m_src"
#define MAX_AT 64

typedef struct {
    long at[MAX_AT];
    int n;
    int steps_given;
} heat_opts;

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int on_opt(void *ctx, const char *name, const char *val)
{
    heat_opts *o = ctx;
    if (strcmp(name, "at"))
        return 1;
    o->n = 0;
    for (const char *p = val; *p;) {
        char *end;
        errno = 0;
        double x = strtod(p, &end); /* 1e4 is a natural way to write a step */
        if (end == p || errno || x != floor(x) || x < 1 || x > 1e9 || (*end && *end != ',')) {
            fprintf(stderr, "vla-heatmap: --at: '%s' is not a list of steps 1..1e9 like 1,10,100 "
                            "(try --help)\n", val);
            return 1;
        }
        if (o->n == MAX_AT) {
            fprintf(stderr, "vla-heatmap: --at: more than %d steps (try --help)\n", MAX_AT);
            return 1;
        }
        o->at[o->n++] = (long)x;
        p = *end ? end + 1 : end;
    }
    if (o->n == 0) {
        fprintf(stderr, "vla-heatmap: --at: no steps given (try --help)\n");
        return 1;
    }
    qsort(o->at, o->n, sizeof o->at[0], cmp_long);
    int k = 1; /* a step named twice is one snapshot */
    for (int i = 1; i < o->n; i++)
        if (o->at[i] != o->at[k - 1])
            o->at[k++] = o->at[i];
    o->n = k;
    return 0;
}

/* One snapshot: A_t, and M_t = inv(A_t) when A_t is symmetric positive definite (dpotrf accepts
 * its symmetric part), else the Gram; m_src says which (1: inv, 0: Gram). */
typedef struct {
    long t;
    int m_src;
    double *A, *M;
} snapshot;

static int take(snapshot *s, vla_engine *m, const vref_drift *acc, long t)
{
    int d = vla_engine_config(m)->d;
    size_t dd = (size_t)d * d;
    s->t = t;
    s->A = malloc(dd * sizeof *s->A);
    s->M = malloc(dd * sizeof *s->M);
    if (!s->A || !s->M)
        return VLA_ENOMEM;
    vla_engine_get(m, 0, VLA_Q_A, s->A);
    /* the symmetric part: sm and sm-sym keep A exactly symmetric, joseph only nearly */
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++)
            s->M[(size_t)i * d + j] = 0.5 * s->A[(size_t)i * d + j] + 0.5 * s->A[(size_t)j * d + i];
    s->m_src = vref_spd_inverse(s->M, d, s->M) == VLA_OK;
    if (!s->m_src)
        vref_drift_gram(acc, s->M);
    return VLA_OK;
}

/* A snapshot as a unit of the checkpoint: t, m_src and the first non-finite snapshot step so far,
 * A and M, then the Gram's accumulator and the engine's state after it, to go on from */
static int unit_of(const snapshot *s, long inf_at, const vref_drift *acc, size_t asize,
                   vla_engine *m, char **buf, size_t *n)
{
    const size_t dd = (size_t)acc->d * acc->d;
    const long head[3] = {s->t, s->m_src, inf_at};
    FILE *f = open_memstream(buf, n);
    if (!f)
        return VLA_ENOMEM;
    int ok = fwrite(head, sizeof head, 1, f) == 1 && fwrite(s->A, sizeof *s->A, dd, f) == dd &&
             fwrite(s->M, sizeof *s->M, dd, f) == dd && fwrite(acc, asize, 1, f) == 1 &&
             vla_engine_save(m, 0, f) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok)
        free(*buf);
    return ok ? VLA_OK : VLA_ENOMEM;
}

/* ... read back: the snapshot, and with state the accumulator and the engine's state (the last
 * one finished); VLA_EFORMAT when it is not one of this command's */
static int unit_read(const void *rec, size_t n, snapshot *s, long *inf_at, vref_drift *acc,
                     size_t asize, vla_engine *m, int state)
{
    const size_t dd = (size_t)acc->d * acc->d;
    long head[3];
    FILE *f = fmemopen((void *)rec, n, "r");
    if (!f)
        return VLA_ENOMEM;
    s->A = malloc(dd * sizeof *s->A);
    s->M = malloc(dd * sizeof *s->M);
    const int d = acc->d;
    int ok = s->A && s->M && fread(head, sizeof head, 1, f) == 1 &&
             fread(s->A, sizeof *s->A, dd, f) == dd && fread(s->M, sizeof *s->M, dd, f) == dd;
    s->t = head[0], s->m_src = (int)head[1], *inf_at = head[2];
    if (ok && state)
        ok = fread(acc, asize, 1, f) == 1 && acc->d == d && vla_engine_load(m, 0, f) == 0 &&
             vla_engine_t(m, 0) == s->t;
    fclose(f);
    return ok ? VLA_OK : VLA_EFORMAT;
}

/* the command line: vla-heatmap's own options and its help */
static heat_opts opts = {{1, 10, 100, 1000}, 4, 0};
static const vla_cli_opt heat_own[] = {
    {"at", "T1,T2,...", "the steps to snapshot, ascending or not (default 1,10,100,1000); the "
                        "run goes to the last one"},
    {NULL, NULL, NULL},
};
static const vla_cli_spec heat_spec = {
    .prog = "vla-heatmap",
    .summary =
        "Runs one head of a model with an A (rls, vla1, vla3) over a stream and writes, at\n"
        "each step of --at, the matrices A_t and M_t for a heatmap: M_t is inv(A_t) (of its\n"
        "symmetric part) by dpotrf + dpotri while A_t is positive definite, else the Gram\n"
        "lambda0 I + sum u' u'^T accumulated in double-double from the u' the recurrence used\n"
        "(rls u' = k, vla1 u / sqrt(d), vla3 unit(u) / sqrt(d)); the column m_src says which.\n"
        "With the nudge on, inv(A_t) includes the nudges and the Gram does not.\n"
        "Layout: blocks (gnuplot's index) 0..N-1 are the N snapshots, d x d rows each, i outer,\n"
        "j inner; blocks N..2N-1 are their diagonals (i = j, d rows each). Every row is\n"
        "\"t i j a m m_src\", which `plot FILE index K using 3:2:4 with image` draws (j across,\n"
        "i down with `set yrange [] reverse`). --steps defaults to the last --at step;\n"
        "no reference or second run is used (--ref, --runs: errors). --resume: skips the\n"
        "snapshots finished before the stop (OUT.ckpt keeps each with the state at its step);\n"
        "the run to the next snapshot starts over from there.",
    .columns = "  t      step of the snapshot\n"
               "  i, j   row and column, 0-based\n"
               "  a      (A_t)_ij\n"
               "  m      (M_t)_ij\n"
               "  m_src  1: M_t = inv(A_t) (LAPACK); 0: M_t = the accumulated Gram (A_t not SPD)",
    .example = "vla-heatmap --model vla3 --precision f32 --stream lmlike --d 32 --at 10,1000,100000\n"
               "vla-heatmap --model vla3 --precision f16 --stream lmlike --at 1,10,100,1000,10000 "
               "--out data/heatmap-f16.dat",
    .default_steps = 1000,
    .default_stream = "lmlike",
    .default_model = VLA_VLA3,
    .default_ref = REF_NONE,
    .opts = heat_own,
    .on_opt = on_opt,
    .ctx = &opts,
};

/* the options checked (a model with A, one head, no reference, the snapshots at states of the
 * form); --steps, when not given, the last snapshot's */
static void check_args(vla_cli *c, int argc, char **argv)
{
    const vla_cli_spec *spec = &heat_spec;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--steps"))
            opts.steps_given = 1;
    if (!vla_model_has_A(c->cfg.model))
        vla_cli_die(spec, "--model %s%s has no A to draw (%s)", vla_model_name(c->cfg.model),
                    vla_cli_model_src(c, NULL, 0), vla_cli_models_with_A());
    if (c->ref != REF_NONE)
        vla_cli_die(spec, "--ref: the heatmap has no reference (--ref none)");
    if (c->runs != 1)
        vla_cli_die(spec, "--runs %d: the heatmap draws one head (use --seed for another)", c->runs);
    long last = opts.at[opts.n - 1];
    for (int i = 0; i < opts.n; i++)
        if (vla_form_pending(&c->cfg, opts.at[i]))
            vla_cli_die(spec, "--at %ld: the chunk form has a state at multiples of C = %d only",
                        opts.at[i], c->cfg.chunk);
    if (opts.steps_given && last > c->steps)
        vla_cli_die(spec, "--at %ld is beyond --steps %ld", last, c->steps);
    if (!opts.steps_given) {
        vla_stream *s;
        int opened = vla_stream_open_part(&s, c->stream, c->cfg.d, c->cfg.dv, c->seed, 0, 0, 0,
                                          NULL) == 0; /* (its length alone) */
        long len = opened ? vla_stream_length(s) : -1; /* -1 too: an unbounded stream */
        if (opened)
            vla_stream_close(s);
        if (len > 0 && last > len)
            vla_cli_die(spec, "--at %ld is beyond the stream's %ld steps", last, len);
        c->steps = last;
    }
}

/* the table: its header (the snapshots, the blocks, the summary), the k snapshots' blocks, then
 * their diagonals' */
static int write_table(const vla_cli *c, vla_dat *out, const snapshot *snap, int k, long inf_at,
                       vla_engine *m)
{
    const int d = c->cfg.d;
    vla_cli_provenance(out, c);
    vla_dat_meta(out, "snapshots", "%d", k);
    vla_dat_meta(out, "blocks", "index 0..%d: the snapshots (d x d rows, i outer, j inner); index "
                                "%d..%d: their diagonals", k - 1, k, 2 * k - 1);
    vla_dat_meta(out, "m", "inv(A_t) by dpotrf + dpotri where A_t is SPD (m_src 1), else lambda0 "
                           "I + sum u' u'^T in double-double (m_src 0)");
    vla_summary sum = {.len = 0};
    if (inf_at) { /* said as the driver says it, and marked in the table's header */
        vla_cli_nonfinite(out, heat_spec.prog, "the state of the model", 1, 1, 0, inf_at,
                          "checked at the table's steps", "its rows carry inf or nan from there on");
        vla_summary_add(&sum, 0, "non-finite from the snapshot at t = %ld", inf_at);
    } else {
        vla_summary_add(&sum, 0, "finite at all %d snapshots", k);
    }
    if (!inf_at) /* (a state gone non-finite: the warning said it) */
        vla_cli_den_summary(&sum, m, "");
    vla_cli_cache_summary(&sum, m, "");
    vla_cli_summary_end(&sum, heat_spec.prog, out);
    vla_dat_columns(out, COLUMNS);
    for (int s = 0; s < 2 * k; s++) {
        const snapshot *p = &snap[s % k];
        if (s)
            vla_dat_block(out);
        for (int i = 0; i < d; i++)
            for (int j = s < k ? 0 : i; j < (s < k ? d : i + 1); j++) {
                double row[6] = {(double)p->t, i, j, p->A[(size_t)i * d + j],
                                 p->M[(size_t)i * d + j], p->m_src};
                vla_dat_row(out, row, 6);
            }
    }
    return vla_cli_close(out, c, &heat_spec, 0);
}

int main(int argc, char **argv)
{
    const vla_cli_spec *spec = &heat_spec;
    vla_cli c;
    vla_cli_parse(&c, spec, argc, argv);
    check_args(&c, argc, argv);
    int d = c.cfg.d, e;
    vref_drift *acc = calloc(1, vref_drift_size(d));
    snapshot *snap = calloc(opts.n, sizeof *snap);
    /* the state's check at each snapshot, the driver's (vla_cli_run_finite) */
    double *fbuf = malloc((size_t)d * (d > c.cfg.dv ? d : c.cfg.dv) * sizeof *fbuf);
    long inf_at = 0; /* the first snapshot step whose state was not finite */
    vla_error err;
    if (!acc || !snap || !fbuf) {
        fprintf(stderr, "vla-heatmap: out of memory\n");
        return 1;
    }
    vla_engine_spec sp;
    vref_drift_tap gc = {acc, &c.cfg}; /* the Gram of M_t takes every write's u' */
    vla_cli_engine_spec(&c, &c.cfg, &sp);
    sp.on_step = vref_drift_on_step;
    sp.ctx = &gc;
    vla_engine *m;
    if ((e = vla_engine_new(&m, &sp, &err)))
        vla_cli_die(spec, "%s", vla_error_msg(&err)); /* the parser probed it: a combination lib/ does not build */
    /* open the table before the run, so that an unwritable path fails at once; a table closed
     * without its columns line (a failed or interrupted run) is discarded by vla_cli_close */
    vla_dat *out = vla_cli_out(&c, spec);
    e = vref_drift_init(acc, &c.cfg);
    const size_t asize = vref_drift_size(d);
    vla_units *u;
    int status = vla_units_open(&u, &c, spec, "snapshot", NULL, opts.n,
                                3 * sizeof(long) + 2 * (size_t)d * d * sizeof(double) + asize +
                                    (size_t)vla_engine_save_max(m));
    if (status) {
        vla_cli_close(out, &c, spec, status);
        goto done;
    }
    int k = 0;
    size_t n;
    for (const void *rec; !e && k < opts.n && (rec = vla_units_get(u, k, &n)); k++) {
        const int last = k + 1 == opts.n || !vla_units_get(u, k + 1, NULL);
        if ((e = unit_read(rec, n, &snap[k], &inf_at, acc, asize, m, last)))
            fprintf(stderr, "vla-heatmap: %s.ckpt: snapshot %d is not one of this command's\n",
                    c.out, k);
    }
    vla_progress prog;
    vla_progress_start(&prog, opts.at[opts.n - 1], "steps");
    for (; !e && k < opts.n; k++) {
        char *rec;
        if ((e = vla_engine_advance(m, opts.at[k])))
            break;
        vla_progress_update(&prog, opts.at[k]);
        if ((e = take(&snap[k], m, acc, opts.at[k])))
            break;
        /* an overflow is a result, but it must not pass unsaid (the warning below) */
        if (!inf_at && !vla_cli_run_finite(m, 0, fbuf))
            inf_at = opts.at[k];
        if ((e = unit_of(&snap[k], inf_at, acc, asize, m, &rec, &n)))
            break;
        e = vla_units_save(u, k, rec, n);
        free(rec);
        if (e)
            break;
    }
    vla_progress_end(&prog);
    if (e && e != VLA_EINTR && e != VLA_EFORMAT)
        fprintf(stderr, "vla-heatmap: %s\n",
                vla_engine_error(m)->code ? vla_error_msg(vla_engine_error(m)) : vla_strerror(e));
    status = vla_units_end(u, e == VLA_EINTR ? 3 : e ? 1 : 0);
    if (e)
        vla_cli_close(out, &c, spec, status);
    else
        status = write_table(&c, out, snap, k, inf_at, m);
done: /* every snapshot, a partly taken one too (calloc'd: the others' pointers are NULL) */
    for (int s = 0; s < opts.n; s++) {
        free(snap[s].A);
        free(snap[s].M);
    }
    free(snap);
    free(acc);
    free(fbuf);
    vla_engine_free(m);
    return status;
}
