/* vla-grad: the gradients of the backward pass against the exact ones (docs/math.md section 11).
 * Per head, precision and gradient (dq, dk, dv, dbeta, dg, da, db, du as the model has them) of
 * L = sum_t c_t . o_t: the norm-wise relative error against the exact gradients (MPFR) on the
 * same inputs, the first step, counted backward, at which a window's error passes 1e-3, 1e-1 and
 * 1, the non-finite entries, and the state cotangents exactly 0 where the exact ones are not. */
#include "cli.h"
#include "vlaref.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PMAX 8
#define NG 8 /* dq dk dv dbeta dg da db du */
#define NCOL 9
#define COLUMNS "prec head grad relerr back_1e-3 back_1e-1 back_1 nonfinite ds_zero"
/* c_t's draws: their own seed, so that they are no other draw of the stream's */
#define C_SEED_OFFSET 0x9e3779b97f4a7c15ull

typedef struct {
    vla_prec precs[PMAX];
    int np;
    long window;
} grad_opts;

static int on_opt(void *ctx, const char *name, const char *val)
{
    grad_opts *o = ctx;
    if (!strcmp(name, "window")) {
        char *end;
        errno = 0;
        o->window = strtol(val, &end, 10);
        if (end == val || *end || errno || o->window < 1 || o->window > 1000000000L)
            return fprintf(stderr, "vla-grad: --window: '%s' is not a whole number in 1..1e9 "
                           "(try --help)\n", val), 1;
        return 0;
    }
    /* --precisions LIST */
    char buf[256];
    if (strlen(val) >= sizeof buf)
        return fprintf(stderr, "vla-grad: --precisions: list too long (try --help)\n"), 1;
    strcpy(buf, val);
    o->np = 0;
    for (char *t = buf, *next; t; t = next) {
        if ((next = strchr(t, ',')))
            *next++ = 0;
        if (o->np == PMAX)
            return fprintf(stderr, "vla-grad: --precisions: more than %d items (try --help)\n",
                           PMAX), 1;
        if (vla_prec_parse(t, &o->precs[o->np]))
            return fprintf(stderr, "vla-grad: --precisions: '%s' is not a precision (%s) (try "
                           "--help)\n", t, vla_names(VLA_LIST_PREC)), 1;
        o->np++;
    }
    return 0;
}

/* the gradients of one block of n steps: one block of memory, its arrays in vla_grads */
typedef struct {
    vla_grads g;
    double *mem;
} gbuf;
static int gbuf_new(gbuf *b, const vla_config *cfg, long n)
{
    const long d = cfg->d, dv = cfg->dv, ng = vla_model_gate(cfg->model) == 2 ? d : 1;
    const int lr = vla_grad_has(cfg, VLA_GRAD_LR);
    memset(b, 0, sizeof *b);
    b->mem = malloc((size_t)n * (5 * d + dv + 1 + ng) * sizeof(double));
    b->g.dS_zero = malloc((size_t)n * dv * d);
    if (!b->mem || !b->g.dS_zero)
        return VLA_ENOMEM;
    double *p = b->mem;
    b->g.dq = p, p += n * d;
    b->g.dk = p, p += n * d;
    b->g.dv = p, p += n * dv;
    b->g.dbeta = p, p += n;
    b->g.dg = p, p += n * ng;
    b->g.da = lr ? p : NULL, p += n * d;
    b->g.db = lr ? p : NULL, p += n * d;
    b->g.du = p;
    return VLA_OK;
}
static void gbuf_free(gbuf *b)
{
    free(b->mem);
    free(b->g.dS_zero);
}

static const char *const gname[NG] = {"dq", "dk", "dv", "dbeta", "dg", "da", "db", "du"};

/* gradient i's array and width per step, or NULL when cfg's model has no such gradient */
static const double *grad_of(const vla_grads *g, const vla_config *cfg, int i, long *w)
{
    const int d = cfg->d;
    switch (i) {
    case 0: return *w = d, g->dq;
    case 1: return *w = d, g->dk;
    case 2: return *w = cfg->dv, g->dv;
    case 3: return *w = 1, vla_grad_has(cfg, VLA_GRAD_BETA) ? g->dbeta : NULL;
    case 4: return *w = vla_model_gate(cfg->model) == 2 ? d : 1,
                   vla_grad_has(cfg, VLA_GRAD_G) ? g->dg : NULL;
    case 5: return *w = d, vla_grad_has(cfg, VLA_GRAD_LR) ? g->da : NULL;
    case 6: return *w = d, vla_grad_has(cfg, VLA_GRAD_LR) ? g->db : NULL;
    default: return *w = d, vla_grad_has(cfg, VLA_GRAD_U) ? g->du : NULL;
    }
}

static double nratio(double e2, double r2)
{
    if (!(e2 <= 1e308)) /* NaN or Inf: a gradient turned non-finite */
        return INFINITY;
    return e2 == 0 ? 0 : r2 == 0 ? INFINITY : sqrt(e2 / r2);
}

/* one step's squared norms of the error of x (w numbers) against the exact y into *e2 and *r2;
 * returns x's non-finite entries */
static long step_norms(const double *x, const double *y, long w, double *e2, double *r2)
{
    double a = 0, b = 0;
    long bad = 0;
    for (long j = 0; j < w; j++) {
        double v = x[j], r = y[j];
        bad += !isfinite(v);
        a += (v - r) * (v - r);
        b += r * r;
    }
    *e2 = a, *r2 = b;
    return bad;
}

/* One gradient's row[3..6] from its steps' squared norms e2, r2 (T each, step_norms) */
static void measure(const double *e2, const double *r2, long T, long W, double *row)
{
    double se = 0, sr = 0;
    for (long t = 0; t < T; t++)
        se += e2[t], sr += r2[t];
    row[3] = nratio(se, sr);
    /* tau = T - t (1-based t): the window of the W steps the backward took last, tau - W + 1 ..
     * tau counted backward (fewer at its start) */
    static const double thr[3] = {1e-3, 1e-1, 1};
    row[4] = row[5] = row[6] = 0;
    double a = 0, b = 0;
    for (long tau = 1; tau <= T; tau++) {
        a += e2[T - tau], b += r2[T - tau];
        if (tau > W)
            a -= e2[T - tau + W], b -= r2[T - tau + W];
        double e = nratio(fmax(a, 0), fmax(b, 0));
        for (int k = 0; k < 3; k++)
            if (row[4 + k] == 0 && e >= thr[k])
                row[4 + k] = (double)tau;
    }
}

/* the backward's block length: vla_backward_block_len's, of whole chunks in a chunk form */
static long block_len(const vla_config *cfg, long T)
{
    const long C = cfg->form == VLA_FORM_CHUNK && cfg->chunk > 1 ? cfg->chunk : 1;
    return C * vla_backward_block_len((T + C - 1) / C);
}

/* One head's pass over the precisions that share an io format, and what it keeps */
typedef struct {
    const vla_cli *c;
    const grad_opts *o;
    int nr, ngrad, slot[NG]; /* the gradients cfg's model has: slot[i], or -1 */
    long T;
    vla_cli_window win;  /* the head's inputs, a block at a time */
    gbuf ge, gp;         /* a block's gradients: the exact ones, a precision's */
    double *cc;          /* a block's c_t */
    double *ab;          /* per precision of a group and gradient had: e2, r2 of every step */
    double *rows;        /* [precision][head][gradient][column] */
} grad_run;

/* head h's rows of precisions p0 .. p1 - 1, which share an io format and so one exact backward
 * (vref_backward_new): it and each precision's (vla_backward_new) advance together from the last
 * block to the first, c_t drawn for the block alone, and each block's gradients are measured as
 * they come: the non-finite entries and ds_zero counted, and each step's squared norms kept (2
 * doubles a step and gradient, R->ab) for relerr, which adds them in step order, from the first
 * step (the blocks come last first). Memory: the backwards' checkpoints and a block's arrays, and
 * those norms. 0, or the exit status (said); *done: the steps of progress. */
static int head_group(grad_run *R, int h, int p0, int p1, vla_progress *prog, long *done)
{
    const vla_cli *c = R->c;
    const long T = R->T, d = c->cfg.d, dv = c->cfg.dv;
    const int nb = 1 + p1 - p0; /* the backwards: [0] the exact one, [1 + p - p0] precision p's */
    vla_backward *bw[PMAX + 1] = {NULL};
    vla_config k[PMAX + 1];
    long bad[PMAX][NG] = {{0}}, zero[PMAX] = {0}, t0, n;
    int who = p0, r = 0; /* the precision whose backward failed */
    for (int b = 0; b < nb; b++)
        k[b] = c->cfg, k[b].prec = R->o->precs[b ? p0 + b - 1 : p0];
    /* at many bits its arrays and each block take seconds: a signal gives them up at once */
    r = vref_backward_new_stop(&bw[0], &k[0], VREF_EXACT, c->ref_bits, T, vla_cli_window_input,
                               &R->win, &vla_cli_stop);
    for (int b = 1; b < nb && !r; b++)
        r = vla_backward_new(&bw[b], &k[b], T, vla_cli_window_input, &R->win), who = p0 + b - 1;
    while (!r && (n = vla_backward_span(bw[0], &t0)) > 0) {
        for (long t = t0; t < t0 + n; t++)
            vla_gauss_fill(R->cc + (t - t0) * dv, (int)dv, c->seed + C_SEED_OFFSET, VLA_VAR_AUX,
                           (uint32_t)h, (uint64_t)t, 1);
        who = p0;
        r = vla_backward_next(bw[0], R->cc, &R->ge.g);
        for (int b = 1; b < nb && !r; b++) {
            if ((r = vla_backward_next(bw[b], R->cc, &R->gp.g))) {
                who = p0 + b - 1;
                break;
            }
            for (long i = 0; i < n * dv * d; i++)
                zero[b - 1] += R->gp.g.dS_zero[i] && !R->ge.g.dS_zero[i];
            for (int i = 0; i < NG; i++) {
                long w;
                const double *x = grad_of(&R->gp.g, &k[b], i, &w);
                const double *y = grad_of(&R->ge.g, &k[b], i, &w);
                if (!x)
                    continue;
                double *e2 = R->ab + ((size_t)(b - 1) * R->ngrad + R->slot[i]) * 2 * T;
                double *r2 = e2 + T;
                for (long t = 0; t < n; t++)
                    bad[b - 1][i] += step_norms(x + t * w, y + t * w, w, e2 + t0 + t, r2 + t0 + t);
            }
        }
        vla_progress_update(prog, *done += nb * n);
    }
    for (int b = 0; b < nb; b++)
        vla_backward_free(bw[b]);
    if (r == VLA_EINTR)
        return 3;
    if (r && R->win.err.code) /* a block of the inputs that could not be read */
        return fprintf(stderr, "vla-grad: --stream %s: %s\n", c->stream,
                       vla_error_msg(&R->win.err)), 2;
    if (r == VLA_ENOTSUP) /* vla_grad_check passed: an input it does not take */
        return fprintf(stderr, "vla-grad: --stream %s: head %d has delta's row gates g (g.npy), "
                       "which the backward does not take\n", c->stream, h), 2;
    if (r)
        return fprintf(stderr, "vla-grad: head %d, %s: the backward failed (%s)\n", h,
                       vla_prec_name(R->o->precs[who]), vla_strerror(r)), 1;
    for (int b = 1; b < nb; b++)
        for (int i = 0; i < NG; i++) {
            const int p = p0 + b - 1;
            double *row = R->rows + (((size_t)p * R->nr + h) * NG + i) * NCOL;
            row[0] = NAN; /* not had: the row is not written */
            if (R->slot[i] < 0)
                continue;
            const double *e2 = R->ab + ((size_t)(b - 1) * R->ngrad + R->slot[i]) * 2 * T;
            row[0] = p, row[1] = h, row[2] = i, row[7] = (double)bad[b - 1][i];
            row[8] = (double)zero[b - 1];
            measure(e2, e2 + T, T, R->o->window, row);
        }
    return 0;
}

/* the command line: vla-grad's own options, its exit statuses and its help */
static grad_opts opts = {.window = 16};
static const vla_cli_opt grad_own[] = {
    {"precisions", "LIST", "the precisions, e.g. f32,bf16-kern (default: --precision's)"},
    {"window", "W", "the window of the per-step error: the W steps the backward took last "
                    "(default 16)"},
    {NULL, NULL, NULL},
};
static const vla_doc_item grad_exits[] = {
    {"0", NULL, "the table was written"},
    {"1", NULL, "a backward failed (the message names the head, the precision and the "
                "reason), out of memory, or the table could not be written (no half-written "
                "table is left)"},
    {"2", NULL, "a usage error: an unknown option or value, a value out of range, a bad input "
                "file, a configuration without a backward (the models with A in a --track other "
                "than sm or a chunk form, the scan form, the chunk forms of rwkv7 and la, the "
                "gate bound gate_lb: vla_grad_check's reason is said), a stream "
                "with delta's row gates g, --ref other than exact, --backend other than cpu, "
                "a --resume of another command (the option that differs is named)"},
    {"3", NULL, "interrupted by SIGINT or SIGTERM: the heads finished are saved in OUT.ckpt "
                "(with --out FILE) and the same command with --resume skips them; the head in "
                "progress starts over. No table or temporary is left"},
    {NULL, NULL, NULL},
};
static const vla_cli_spec grad_spec = {
    .prog = "vla-grad",
    .summary =
        "The backward pass (docs/math.md section 11) of the loss L = sum_t c_t . o_t\n"
        "against the exact one. For each head of the stream and each precision, the\n"
        "gradients of every step's inputs (dq, dk, dv, and dbeta, dg, da, db, du where the\n"
        "model has them) by lib's vla_grad in the policy, and the exact gradients by MPFR\n"
        "at --ref-bits (vref_grad) on the same inputs: the stream's q, k, v, gates and\n"
        "c_t rounded to the policy's io format, as the policy's run reads them (vla-check's\n"
        "rounded reference). c_t,i = vla_gauss(SEED + 0x9e3779b97f4a7c15, VLA_VAR_AUX,\n"
        "head, t, i), t = 0..T-1: standard normals of their own seed. Writes one block per\n"
        "precision and head, one row per gradient: the relative error over all steps, the\n"
        "first step counted backward (T - t + 1) at which the error over a window of\n"
        "--window steps passes 1e-3, 1e-1 and 1, the non-finite entries, and the entries\n"
        "of the state's cotangent dS that were flushed to exactly 0 where the exact one is\n"
        "not (a 16-bit tape's underflow). --form chunk:C takes the chunk backward of delta,\n"
        "gdn, kda, gla, mamba2, deltaproduct, loglinear and mamba3 (docs/math.md section 11,\n"
        "the chunk form's: each chunk re-run from its first state, the UT transform's\n"
        "backward, loglinear's levels, mamba3's carried k~, v and angles), its dS at the\n"
        "chunks' first steps only. The models with A (rls, vla1, vla3) have the seq\n"
        "backward of --track sm only (the cotangent of A carried beside dS). The other ways\n"
        "of tracking A, the scan form, rwkv7's and la's chunk forms and the gate bound\n"
        "(gate_lb) have no backward: refused, with the reason.\n"
        "--resume: skips the heads finished before the stop (kept in OUT.ckpt); the head in\n"
        "progress starts over.\n"
        "Memory: a head at a time, and of it a block of about sqrt(T) steps (chunk:C:\n"
        "sqrt(C T), whole chunks): the exact backward and each precision's advance together\n"
        "(vla_backward, docs/math.md section 11), keeping their checkpoints and the block's\n"
        "inputs, c_t and gradients; of every step only 2 numbers per gradient and precision\n"
        "(relerr adds the steps' squared norms in step order; the blocks come last first).\n"
        "Measured in bench/README.md.",
    .columns = "  prec       the precision policy\n"
               "  head       the stream's head\n"
               "  grad       dq, dk, dv, dbeta, dg, da, db or du\n"
               "  relerr     ||g - g_exact||_F / ||g_exact||_F over all steps (inf: non-finite)\n"
               "  back_1e-3, back_1e-1, back_1  the first step counted backward, tau = T - t + 1,\n"
               "             at which ||g - g_exact|| / ||g_exact|| over the steps tau - W + 1 ..\n"
               "             tau counted backward (W = --window) is at least 1e-3, 1e-1, 1;\n"
               "             0: never\n"
               "  nonfinite  the entries of g that are Inf or NaN\n"
               "  ds_zero    the entries of dS_{t-1}, over all steps, exactly 0 where the exact\n"
               "             ones are not (the same in every row of a block); chunk:C: at each\n"
               "             chunk's first step, where the chunk backward hands dS on",
    .example = "vla-grad --model gdn --precisions f32,bf16-kern --d 64 --steps 1024 --runs 2\n"
               "vla-grad --model gdn --form chunk:64 --precisions f16-kern,f16 --d 64\n"
               "vla-grad --model kda --precision bf16 --stream trace:mytrace --window 64",
    .exit = grad_exits,
    .default_steps = 256,
    .default_stream = "gauss",
    .default_model = VLA_GDN,
    .default_ref = REF_EXACT,
    .opts = grad_own,
    .on_opt = on_opt,
    .ctx = &opts,
};

/* the options that vla-grad refuses, and every precision's backward checked before any work */
static void check_args(vla_cli *c)
{
    if (c->ref != REF_EXACT)
        vla_cli_die(&grad_spec, "--ref: vla-grad's reference is the exact backward (--ref exact)");
    if (strcmp(c->backend, "cpu"))
        vla_cli_die(&grad_spec, "--backend %s: the backward runs on the CPU only (--backend cpu)",
                    c->backend);
    if (c->optional & VLA_IN_S0)
        vla_cli_die(&grad_spec, "--stream %s: the trace holds S0.npy (an initial state), and the "
                    "backward starts from S_0 = 0: its gradients would be another run's (leave "
                    "S0.npy out of the trace)", c->stream);
    if (!opts.np)
        opts.precs[opts.np++] = c->cfg.prec;
    for (int p = 0; p < opts.np; p++) {
        vla_config k = c->cfg;
        vla_error why;
        k.prec = opts.precs[p];
        if (vla_grad_check(&k, &why))
            vla_cli_die(&grad_spec, "%s in %s has no backward: %s", vla_model_name(k.model),
                        vla_prec_name(k.prec), vla_error_msg(&why));
    }
}

/* every head's rows: those saved in the checkpoint read back, the others run a group of
 * precisions at a time (head_group) and saved. The status */
static int run_heads(grad_run *R, vla_units *u, long K, int ngroup, double *hrow, size_t hsize)
{
    const vla_cli *c = R->c;
    const int nr = R->nr, np = opts.np;
    const long T = R->T;
    const unsigned reads = vla_model_reads(&c->cfg);
    int status = 0;
    vla_error err;
    vla_progress prog;
    vla_progress_start(&prog, (long)nr * (np + ngroup) * T, "steps");
    long done = 0;
    for (int h = 0; h < nr && !status; h++) {
        const double *saved = vla_units_get(u, h, NULL);
        for (int p = 0; saved && p < np; p++)
            memcpy(R->rows + ((size_t)p * nr + h) * NG * NCOL, saved + (size_t)p * NG * NCOL,
                   NG * NCOL * sizeof *R->rows);
        if (saved) {
            vla_progress_update(&prog, done += (np + ngroup) * T);
            continue;
        }
        R->win = (vla_cli_window){.T = T};
        if (vla_inputs_open_part(&R->win.x, c->stream, c->seed, c->cfg.d, c->cfg.dv, h, 1, K, T,
                                 reads, &err)) {
            fprintf(stderr, "vla-grad: --stream %s: %s\n", c->stream, vla_error_msg(&err));
            status = err.code == VLA_ENOMEM ? 1 : 2;
        }
        for (int p0 = 0, p1; p0 < np && !status; p0 = p1) {
            const vla_fmt io = vla_prec_io(opts.precs[p0]);
            for (p1 = p0 + 1; p1 < np && vla_prec_io(opts.precs[p1]) == io;)
                p1++;
            status = head_group(R, h, p0, p1, &prog, &done);
        }
        vla_inputs_free(&R->win.x);
        for (int p = 0; !status && p < np; p++)
            memcpy(hrow + (size_t)p * NG * NCOL, R->rows + ((size_t)p * nr + h) * NG * NCOL,
                   NG * NCOL * sizeof *R->rows);
        if (!status && vla_units_save(u, h, hrow, hsize)) {
            fprintf(stderr, "vla-grad: out of memory\n");
            status = 1;
        }
    }
    vla_progress_end(&prog);
    return status;
}

/* the table: its header (the precisions, the reference, the loss, the window, the summary), one
 * block per precision and head, one row per gradient the model has. The status */
static int write_table(const grad_run *R)
{
    const vla_cli *c = R->c;
    const int nr = R->nr, np = opts.np;
    vla_dat *out = vla_cli_out(c, &grad_spec);
    vla_cli_provenance(out, c);
    char pl[200] = "";
    for (int p = 0; p < np; p++)
        snprintf(pl + strlen(pl), sizeof pl - strlen(pl), "%s%s", p ? " " : "",
                 vla_prec_name(opts.precs[p]));
    vla_dat_meta(out, "precisions", "%s (the blocks', in this order; config's prec= is "
                 "--precision's)", pl);
    vla_dat_meta(out, "reference_inputs", "the exact backward (vref_grad, MPFR at %ld bits) on the "
                 "inputs and c_t rounded to each policy's io format, as the policy reads them",
                 c->ref_bits);
    vla_dat_meta(out, "loss", "L = sum_t c_t . o_t, c_t,i = vla_gauss(%llu + 0x9e3779b97f4a7c15, "
                 "VLA_VAR_AUX, head, t, i), t = 0..%ld", (unsigned long long)c->seed, R->T - 1);
    vla_dat_meta(out, "window", "%ld steps (the per-step error's, counted backward)",
                 opts.window);
    vla_summary sm = {.len = 0};
    for (long i = 0; i < (long)np * nr * NG; i++) {
        const double *row = R->rows + i * NCOL;
        if (isnan(row[0]))
            continue;
        if (row[7] > 0)
            vla_summary_add(&sm, 1, "%s head %.0f: %s has %.0f non-finite entries",
                            vla_prec_name(opts.precs[(int)row[0]]), row[1], gname[(int)row[2]],
                            row[7]);
        else if (row[6] > 0)
            vla_summary_add(&sm, 1, "%s head %.0f: %s's error reaches 1 at step %.0f counted "
                            "backward", vla_prec_name(opts.precs[(int)row[0]]), row[1],
                            gname[(int)row[2]], row[6]);
    }
    if (!sm.len)
        vla_summary_add(&sm, 0, "every gradient stayed finite and no window's error reached 1");
    vla_cli_summary_end(&sm, "vla-grad", out);
    vla_dat_columns(out, COLUMNS);
    for (int b = 0; b < np * nr; b++) {
        if (b)
            vla_dat_block(out);
        for (int i = 0; i < NG; i++) {
            const double *row = R->rows + ((size_t)b * NG + i) * NCOL;
            const char *names[NCOL] = {vla_prec_name(opts.precs[b / nr]), NULL, gname[i]};
            if (!isnan(row[0]))
                vla_dat_row_named(out, row, names, NCOL);
        }
    }
    return vla_cli_close(out, c, &grad_spec, 0);
}

int main(int argc, char **argv)
{
    vla_cli c;
    vla_cli_parse(&c, &grad_spec, argc, argv);
    check_args(&c);
    const int nr = c.runs, np = opts.np;
    const unsigned reads = vla_model_reads(&c.cfg);
    vla_error err;
    vla_inputs x; /* the stream opened for every head: checked (and a trace's steps) before work */
    if (vla_inputs_open_part(&x, c.stream, c.seed, c.cfg.d, c.cfg.dv, 0, nr, 1, c.steps, reads,
                             &err))
        vla_cli_die(&grad_spec, "--stream %s: %s", c.stream, vla_error_msg(&err));
    const long len = vla_stream_length(x.s), T = len > 0 && len < c.steps ? len : c.steps;
    const long K = block_len(&c.cfg, T) < T ? block_len(&c.cfg, T) : T, dv = c.cfg.dv;
    vla_inputs_free(&x);
    int ngroup = 0, gmax = 0; /* the runs of precisions that share an io format; the longest */
    for (int p = 0, m = 0; p < np; p++) {
        m = p && vla_prec_io(opts.precs[p]) == vla_prec_io(opts.precs[p - 1]) ? m + 1 : 1;
        ngroup += m == 1, gmax = m > gmax ? m : gmax;
    }
    grad_run R = {.c = &c, .o = &opts, .nr = nr, .T = T};
    /* a head's rows, [p][gradient][column], is a unit of the checkpoint */
    const size_t hsize = (size_t)np * NG * NCOL * sizeof *R.rows;
    double *hrow = malloc(hsize);
    int status = 0, ok = gbuf_new(&R.gp, &c.cfg, K) == 0;
    ok &= gbuf_new(&R.ge, &c.cfg, K) == 0;
    for (int i = 0; ok && i < NG; i++) {
        long w;
        R.slot[i] = grad_of(&R.ge.g, &c.cfg, i, &w) ? R.ngrad++ : -1;
    }
    R.cc = malloc((size_t)K * dv * sizeof *R.cc);
    R.ab = malloc((size_t)gmax * R.ngrad * 2 * T * sizeof *R.ab);
    R.rows = calloc((size_t)np * nr * NG, NCOL * sizeof *R.rows);
    vla_units *u;
    if (!ok || !R.cc || !R.ab || !R.rows || !hrow) {
        fprintf(stderr, "vla-grad: out of memory for %ld steps of gradients\n", T);
        status = 1;
    } else if (!(status = vla_units_open(&u, &c, &grad_spec, "head", NULL, nr, hsize)) &&
               !(status = vla_units_end(u, run_heads(&R, u, K, ngroup, hrow, hsize)))) {
        status = write_table(&R);
    }
    gbuf_free(&R.gp);
    gbuf_free(&R.ge);
    free(R.cc);
    free(R.ab);
    free(R.rows);
    free(hrow);
    return status;
}
