/* vla-drift: how far the tracked A_t drifts from the inverse it stands for (docs/math.md section
 * 7.4): the distance to the reference recurrence, the residual against the exactly accumulated
 * M_t, the distance to M_t's LAPACK inverse, symmetry, the spectrum of A_t and the safety-device
 * counts. The measures are reference/drift.c's (vlaref.h: vref_drift); in the chunk form also the
 * spectrum of the next chunk's Woodbury capacitance, which can stay definite after A has not. */
#include "cli.h"
#include "vlaref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the programs' context: the options, and the capacitance's streams (NULL: no g_lmin column) */
typedef struct {
    const vla_cli *c;
    vla_stream **s; /* one per run, opened at its first checkpoint */
} cap_ctx;

static int on_init(vla_run *r, void *acc, void *ctx)
{
    return vref_drift_init(acc, vla_engine_config(r->m));
}

/* every write: its u' into M_t, and how many of A's entries it changed */
static int on_step(const vla_step_view *v, void *accp, void *ctx)
{
    vref_drift_step(accp, &((const cap_ctx *)ctx)->c->cfg, v);
    return VLA_OK;
}

/* The chunk form's blocked Woodbury (docs/forms.md) factors the capacitance G = I + U A_0 U^T of
 * each chunk, U its C tokens' u' (rows) and A_0 the A stored at its start; its pivots are the
 * sequential deltas. g_lmin: lambda_min(G) of the chunk that starts at the checkpoint (every
 * checkpoint of the chunk form is a chunk's end), G formed in binary64 from the stored A_t and the
 * u' of the C writes after step t (t + 1 .. t + C when no read comes between) as M_t's are
 * (vla_uprime), its eigenvalues by dsyevr. Each run reads those steps from a stream of its own
 * (the runs' checkpoints are measured in parallel). */
static double cap_lmin(const cap_ctx *x, vla_run *r)
{
    const vla_config *cfg = &x->c->cfg;
    const int d = cfg->d, C = cfg->chunk;
    double *A = malloc((size_t)d * d * sizeof *A), *U = malloc((size_t)C * d * sizeof *U);
    double *G = malloc((size_t)C * C * sizeof *G), *lam = malloc((size_t)C * sizeof *lam);
    vla_step_buf b = {0};
    double g = NAN;
    vla_stream **s = &x->s[r->run];
    if (!*s) {
        if (vla_stream_open_part(s, x->c->stream, d, cfg->dv, x->c->seed, r->run, 1,
                                 x->c->steps + C, NULL))
            *s = NULL;
    }
    if (!A || !U || !G || !lam || !*s || vla_step_buf_alloc(&b, d, cfg->dv) ||
        vla_engine_get(r->m, r->run, VLA_Q_A, A))
        goto out;
    /* the chunk's C writes (a read takes no place in it; a trace that ends before the chunk
     * does: nan) */
    for (long t = r->t + 1, j = 0; j < C; t++) {
        if (vla_stream_get(*s, (uint32_t)r->run, t, &b))
            goto out;
        if (!b.is_read && vla_uprime(cfg, b.k, b.u, U + (size_t)j++ * d))
            goto out;
    }
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            double gij = i == j;
            for (int k = 0; k < d; k++) {
                double ak = 0;
                for (int l = 0; l < d; l++)
                    ak += A[(size_t)k * d + l] * U[(size_t)j * d + l];
                gij += U[(size_t)i * d + k] * ak;
            }
            G[(size_t)i * C + j] = gij;
        }
    if (!vref_sym_eig(G, C, lam))
        g = lam[0];
out:
    vla_step_buf_free(&b);
    free(A);
    free(U);
    free(G);
    free(lam);
    return g;
}

static int on_checkpoint(vla_run *r, void *acc, vla_rows *rows, void *ctx)
{
    const cap_ctx *x = ctx;
    double row[VREF_DRIFT_NCOL + 1];
    int e = vref_drift_measure(r->m, r->ref, r->run, acc, r->t, row);
    if (x->s)
        row[VREF_DRIFT_NCOL] = cap_lmin(x, r);
    return e ? e : vla_rows_add(rows, row);
}

static int check(const void *acc, const vla_rows *rows, long t, void *ctx)
{
    return vref_drift_check(acc, &((const cap_ctx *)ctx)->c->cfg, t);
}

int main(int argc, char **argv)
{
    static const vla_cli_spec spec = {
        .prog = "vla-drift",
        .summary =
            "Runs a model that tracks the inverse A_t = M_t^-1 of M_t = lambda0 I + sum u' u'^T\n"
            "(rls, vla1, vla3) in a precision and a way of tracking A, beside a reference run of\n"
            "the same inputs, and records at log-spaced checkpoints how far A_t has drifted: from\n"
            "the reference recurrence (--ref exact: MPFR at --ref-bits, the default; --ref f64:\n"
            "lib in binary64, for horizons the exact reference is too slow for; the header says\n"
            "which), from the exact inverse of M_t, and from positive definiteness.\n"
            "M_t is accumulated in double-double from the u' the recurrence used: rls u' = k,\n"
            "vla1 u' = u / sqrt(d), vla3 u' = unit(u) / sqrt(d), each from the input rounded to\n"
            "the storage format, then computed in binary64. A periodic nudge or the norm clamp\n"
            "adds to A a change that is no rank-one update of M, so from the first one that\n"
            "fires (t = period with the nudge on) a_resid and a_lapack are nan: switch them off\n"
            "(--set nudge=off, --set clamp_on=off) to measure them; so are they with forgetting\n"
            "(--set gamma=G < 1). A guard event (vla3: delta floored; rls, vla1: update skipped)\n"
            "is counted and left in the residual. With --track solve, cg:K or cheb:K the model\n"
            "keeps M and solves M y = x at every step; A is then M^-1 formed by a Cholesky\n"
            "factorization in the working arithmetic, and x_err, m_lmin, resid, iters and fails\n"
            "say how the solves went.",
        .columns = "  t           step\n"
                   "  a_drift     ||A_t - A_t^ref||_F / ||A_t^ref||_F (nan with --ref none)\n"
                   "  a_resid     ||A_t M_t - I||_F, the product in double-double (nan after a "
                   "nudge or clamp)\n"
                   "  a_lapack    ||A_t - inv(M_t)||_F / ||inv(M_t)||_F, inv by dpotrf + dpotri\n"
                   "  sym_defect  ||A_t - A_t^T||_F / ||A_t||_F\n"
                   "  lambda_min  smallest eigenvalue of (A_t + A_t^T) / 2 (dsyevr); negative: "
                   "A_t is no longer\n"
                   "              positive definite; nan when A_t holds Inf or NaN\n"
                   "  cond        lambda_max / lambda_min of A_t; nan when lambda_min <= 0\n"
                   "  guard       guard events so far (vla3: delta floored at stab_eps; rls, vla1: "
                   "update skipped)\n"
                   "  clamp       vla1's norm clamp events so far\n"
                   "  nudge       periodic nudges so far\n"
                   "  s_relerr    ||S_t - S_t^ref||_F / ||S_t^ref||_F\n"
                   "  o_relerr    ||o_t - o_t^ref|| / ||o_t^ref||\n"
                   "  a_moved     the fraction of A's entries a step changed, over the steps since the\n"
                   "              previous checkpoint (0: A stagnates; nan for chol, solve, cg and cheb,\n"
                   "              which keep no A)\n"
                   "  a_moved_diag  the same for the diagonal alone: its entries are the largest, and\n"
                   "              stall first, while the small off-diagonal ones, whose ulp shrinks\n"
                   "              with them, keep moving\n"
                   "  x_err       ||alpha_t - alpha_t^ref|| / ||alpha_t^ref||: the vector the model uses\n"
                   "              (vla3 unit(A k'), rls A k, vla1 A k); for cg and cheb the reference\n"
                   "              is the solve way, the exact answer they approximate\n"
                   "  m_lmin      smallest eigenvalue of the M that solve, cg and cheb keep (nan for the\n"
                   "              other ways; negative: M is not positive definite)\n"
                   "  resid       the last solve's health: cg and cheb ||r|| / ||x|| as the iteration\n"
                   "              computed it, solve its smallest pivot (nan for the other ways)\n"
                   "  iters       iterations per solve so far (cg, cheb)\n"
                   "  fails       failed solves so far: a pivot <= 0, p.Mp <= 0, or a residual that\n"
                   "              ended above ||x|| (x = 0 would do better) or not finite (the table's\n"
                   "              header and stderr give the first one's step and value)\n"
                   "  g_lmin      the chunk form with A (sm, comp, sr) only: the smallest eigenvalue of\n"
                   "              the next chunk's Woodbury capacitance G = I + U A_t U^T, U the u' of\n"
                   "              its C writes (steps t + 1 .. t + C, rows), in binary64 from the\n"
                   "              stored A_t (dsyevr); its pivots are the sequential deltas, so G\n"
                   "              stays positive definite while every delta of the chunk is > 0,\n"
                   "              even after A_t is not",
        .example = "vla-drift --model vla3 --precision f16 --set nudge=off --stream lmlike --steps 1e4 "
                   "--out data/drift-f16.dat\n"
                   "vla-drift --model rls --stream subspace:4,0.001 --precision f32 --set "
                   "lambda0=1e-6 --ref exact\n"
                   "vla-drift --model vla3 --precision bf16 --steps 1e6 --runs 8 --ref f64 --backend "
                   "lanes --out long.dat",
        .default_steps = 10000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_EXACT,
    };
    vla_cli c;
    vla_cli_parse(&c, &spec, argc, argv);
    if (!vla_model_has_A(c.cfg.model))
        vla_cli_die(&spec, "--model %s%s has no A to drift (%s)", vla_model_name(c.cfg.model),
                    vla_cli_model_src(&c, NULL, 0), vla_cli_models_with_A());
    vla_dat *out = vla_cli_out(&c, &spec);
    vla_cli_provenance(out, &c);
    vla_dat_meta(out, "m_t", "lambda0 I + sum u' u'^T in double-double, u' = %s",
                 vla_model_uprime(c.cfg.model));
    vla_dat_meta(out, "a_resid", "%s",
                 c.cfg.gamma != 1 ? "nan (with forgetting M_t is not the Gram of the u')"
                 : c.cfg.nudge || c.cfg.clamp_on
                     ? "nan from the first nudge or clamp (M_t is then not the Gram of the u')"
                     : "defined at every t (nudge and clamp off)");
    /* the capacitance's column: the chunk form's blocked Woodbury (not cg, which keeps M) */
    const int cap = c.cfg.form == VLA_FORM_CHUNK && c.cfg.chunk > 1 && c.cfg.track != VLA_TRACK_CG;
    cap_ctx cx = {&c, cap ? calloc((size_t)c.runs, sizeof *cx.s) : NULL};
    if (cap && !cx.s)
        vla_cli_fail(&spec, "out of memory");
    if (cap)
        vla_dat_meta(out, "g_lmin", "lambda_min of G = I + U A_t U^T of the chunk of the %d writes "
                                    "after step t, in binary64 from the stored A_t", c.cfg.chunk);
    vla_driver drv = {.columns = cap ? VREF_DRIFT_COLUMNS " g_lmin" : VREF_DRIFT_COLUMNS,
                      .acc_size = vref_drift_size(c.cfg.d),
                      .taps = VLA_TAP_MOVED,
                      .init = on_init,
                      .on_step = on_step,
                      .on_checkpoint = on_checkpoint,
                      .check = check,
                      .ctx = &cx};
    int status = vla_drive(&c, &spec, &drv, out);
    for (int h = 0; cap && h < c.runs; h++)
        if (cx.s[h])
            vla_stream_close(cx.s[h]);
    free(cx.s);
    return vla_cli_close(out, &c, &spec, status);
}
