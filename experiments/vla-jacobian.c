/* vla-jacobian: the write Jacobian of S_t = S_{t-1} J_t + B_t (docs/math.md section 7.5, claim 2
 * of section 10): the seeds' J_t = I - k' alpha^T, the gated family's (section 2.6) gdn
 * a_t (I - k' alpha^T), mamba2 a_t I, kda Diag(a_t) (I - k' alpha^T), gla Diag(a_t), rwkv7
 * Diag(w_t) + a_t b_t^T. ||J_t||_2 every step, summarized per checkpoint window, the spectral
 * radius and a dgesvd cross-check at each checkpoint, and the Lyapunov exponent of J_1...J_t.
 * The measures are reference/jacobian.c's (vlaref.h: vref_jac, vref_jac_tr).
 * The decays are the model's own numbers, rebuilt from the step's binary64 inputs as the native
 * arithmetic takes them (vref_jac_gates: the log-decay rounded to the io format, exp in binary64
 * rounded once to the compute format; rwkv7's a and b rounded to the io format), rather than a new
 * quantity or tap: every backend then serves (the lanes and kernels would need a tap of their
 * own), and the numbers are those of lib/recur_state.h's load() bit for bit. */
#include "cli.h"
#include "vlaref.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    vref_jac j;
    double beta; /* the last step's beta (a checkpoint's unit test needs it) */
    long writes; /* the writes so far (deltaproduct's sub-steps count writes, not reads) */
} jac_acc;

typedef struct {
    const vla_cli *c;
    vref_jac_form form; /* PLAIN: the seeds' path, unchanged */
} jac_ctx;

/* a different Lyapunov starting vector per head, a pure function of (seed, head) */
static uint64_t jac_seed(const vla_cli *c, int head)
{
    return c->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)head * 0xbf58476d1ce4e5b9ULL + 1;
}

static int jac_init(vla_run *r, void *acc, void *ctx)
{
    const jac_ctx *x = ctx;
    jac_acc *a = acc;
    a->beta = NAN;
    return vref_jac_init(&a->j, vla_engine_config(r->m)->d, jac_seed(x->c, r->run));
}

static int jac_on_step(const vla_step_view *v, void *accp, void *ctx)
{
    const jac_ctx *x = ctx;
    jac_acc *a = accp;
    a->beta = v->in->beta;
    if (v->in->is_read) /* a read writes nothing: no Jacobian */
        return VLA_OK;
    a->writes++;
    if (x->form == VREF_JAC_PLAIN) {
        vref_jac_step(&a->j, v->kp, v->alpha, x->c->cfg.d, vref_jac_is_unit(&x->c->cfg, v->in->beta));
        return VLA_OK;
    }
    double dec[VLA_D_MAX], la[VLA_D_MAX], lb[VLA_D_MAX];
    vla_input in = vla_input_of(v->in);
    vref_jac_gates(&x->c->cfg, &in, a->writes, dec, la, lb);
    vref_jac_tr tr = {x->form, x->c->cfg.d, v->kp, v->alpha, dec, la, lb};
    vref_jac_step_tr(&a->j, &tr);
    return VLA_OK;
}

static int jac_on_checkpoint(vla_run *r, void *accp, vla_rows *rows, void *ctx)
{
    const vla_config *cfg = vla_engine_config(r->m);
    const jac_ctx *x = ctx;
    jac_acc *a = accp;
    double kp[VLA_D_MAX], al[VLA_D_MAX], row[VREF_JAC_NCOL];
    if (x->form != VREF_JAC_PLAIN) { /* the last write's J, kept whole by vref_jac_step_tr */
        int e = vref_jac_row_tr(&a->j, r->t, row);
        return e ? e : vla_rows_add(rows, row);
    }
    int e = vla_engine_get(r->m, r->run, VLA_Q_KP, kp);
    if (!e)
        e = vla_engine_get(r->m, r->run, VLA_Q_ALPHA, al);
    if (!e)
        e = vref_jac_row(&a->j, kp, al, cfg->d, r->t, vref_jac_is_unit(cfg, a->beta), row);
    return e ? e : vla_rows_add(rows, row);
}

static int jac_check(const void *accp, const vla_rows *rows, long t, void *ctx)
{
    return vref_jac_check(&((const jac_acc *)accp)->j, t);
}

int main(int argc, char **argv)
{
    static const vla_cli_spec spec = {
        .prog = "vla-jacobian",
        .summary =
            "The write Jacobian of the state recurrence: S_t = S_{t-1} J_t + B_t (docs/math.md\n"
            "sections 2.6 and 7.5). The seeds' models (la, delta, rls, vla1, vla3) have\n"
            "J_t = I - k' alpha^T; the gated family's J_t carries the step's decays (right\n"
            "multiplication: row i of Diag(a) scales row i):\n"
            "  gdn     a_t (I - k' alpha^T), alpha = beta k', a_t = exp(g_t) one scalar\n"
            "  mamba2  a_t I\n"
            "  kda     Diag(a_t) (I - k' alpha^T), one decay per key channel\n"
            "  gla     Diag(a_t)\n"
            "  rwkv7   Diag(w_t) + a_t b_t^T (w = exp(g) per channel; a, b the low-rank pair)\n"
            "The decays are the model's own: the log-decay rounded to the io format, exp in\n"
            "binary64 rounded to the compute format (rwkv7's a, b rounded to the io format), as\n"
            "every backend's arithmetic takes them; the table's 'decays' line says so.\n"
            "Every step it computes ||J_t||_2: the exact 2 x 2 reduction of I - k' alpha^T (any\n"
            "vectors) for the seeds, times a_t for gdn; a_t for mamba2 and max_i a_i for gla;\n"
            "for kda and rwkv7 the explicit d x d J_t and the largest eigenvalue of J^T J by\n"
            "LAPACK dsyevr, O(d^3) a step (about 0.06 ms at d = 32, 0.5 ms at 64, 5 ms at 128).\n"
            "At each checkpoint it writes the maximum and the percentiles of ||J_t||_2 over the\n"
            "window since the previous checkpoint, the spectral radius of J_t (closed forms;\n"
            "kda and rwkv7: dgeev), a dgesvd cross-check of ||J_t||_2 on the explicit d x d\n"
            "matrix, and the finite-time largest Lyapunov exponent (1/t) log ||x J_1 ... J_t||\n"
            "by renormalized power iteration with the whole J_t (decays, low-rank term).\n"
            "Claim 2 of the source documents says ||J_t||_2 = 1 for all t: a claim about the\n"
            "seeds' models. For unit k' and alpha with c = alpha.k', ||J||_2 = sqrt((3 - 2c +\n"
            "sqrt(5 - 4c)) / 2): 1 only at c = 1, the golden ratio 1.618 at c = 0. la's J is\n"
            "I; delta's is I - beta k'k'^T; rls and vla1 use raw (non-unit) vectors, so their\n"
            "norms can exceed the golden ratio.\n"
            "The gated family (d >= 2; checked every step in tests/test_jacobian_gated.c):\n"
            "gdn's ||J|| = a_t exactly while beta |k'|^2 <= 2 (I - beta k'k'^T is symmetric with\n"
            "eigenvalues 1 and 1 - beta |k'|^2; |k'| < 1 under qknorm); mamba2's a_t; gla's\n"
            "max_i a_i; kda's lies between the second largest a_i and the largest: all <= 1,\n"
            "since g <= 0. rwkv7's J is not normal and its norm can exceed 1 (bounded by\n"
            "max w + |a| |b|): on lmlike at d = 16 it does on 37% of 2000 steps, up to 1.048,\n"
            "while its spectral radius stays below 1.\n"
            "Percentiles: nearest rank over a histogram of ||J||_2 - 1 with 4096 log-spaced bins\n"
            "per octave over [2^-40, 2^64), each reported at its geometric midpoint clamped to the\n"
            "window's min and max: relative error below 8.5e-5 (under 1e-4) in ||J||_2 - 1 and\n"
            "so in ||J||_2; norms within 2^-40 of 1 are reported as 1 (+-2^-41 unless exactly 1).\n"
            "Norms below 1 have as many bins per octave of ||J||_2 over [2^-40, 1/2) and of\n"
            "1 - ||J||_2 over [2^-40, 1/2]: within 8.5e-5 relative too; below 2^-40 as 2^-41.\n"
            "Not included in J: delta's row gates and decay (they scale S from the left or\n"
            "uniformly) and vla1's error clipping (a nonlinear rescale of v - S k).",
        .columns =
            "  t             step (a checkpoint; the window is the steps since the previous one)\n"
            "  jac_max       max of ||J_t||_2 over the window (nan if any step's norm was NaN)\n"
            "  jac_p50       median of ||J_t||_2 over the window (histogram, see above)\n"
            "  jac_p99       99th percentile of ||J_t||_2 over the window\n"
            "  jac_radius    spectral radius of J_t at t: max(1, |1 - alpha.k'|) (d >= 2), times\n"
            "                a_t for gdn; a_t (mamba2), max_i a_i (gla); dgeev's (kda, rwkv7)\n"
            "  jac_svd       largest singular value of the explicit J_t at t, by LAPACK dgesvd\n"
            "  jac_svd_err   |the step's norm - jac_svd| / jac_svd at t (closed form, or the\n"
            "                dsyevr route for kda and rwkv7)\n"
            "  lyap          finite-time largest Lyapunov exponent of J_1...J_t (0 for la)\n"
            "  jac_min_c     min over the window of cos(alpha, k') (nan where alpha or k' is 0:\n"
            "                la, gla, mamba2, rwkv7, whose J has no delta term)\n"
            "  jac_unit_err  max over the window of |unit-vector formula - general| / general,\n"
            "                where k' and alpha are unit by construction (vla3; delta with\n"
            "                keynorm at beta 1; else nan, the gated family included): how far\n"
            "                the stored, rounded vectors are from unit\n"
            "  jac_one       fraction of the window's steps with ||J_t||_2 within 2^-40 of 1",
        .example = "vla-jacobian --model vla3 --stream lmlike --d 32 --steps 100000 --precision f32\n"
                   "vla-jacobian --model rwkv7 --stream lmlike --d 16 --steps 2000\n"
                   "vla-jacobian --model rls --stream gauss --precision f64 --steps 1e4 --runs 4\n"
                   "vla-jacobian --model vla3 --precision f16 --steps 1e6 --runs 16 --backend lanes",
        .default_steps = 100000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_NONE,
    };
    vla_cli c;
    vla_cli_parse(&c, &spec, argc, argv);
    if (vla_form_pending(&c.cfg, 1))
        vla_cli_die(&spec, "--form chunk:%d: every step's J = I - k' alpha^T needs its k' and alpha, "
                           "which the chunk form has at chunk ends only (--form seq or scan)",
                    c.cfg.chunk);
    if (c.ref != REF_NONE) /* the Jacobian is the model's own; a reference would only cost time */
        vla_cli_die(&spec, "--ref: this program compares against dgesvd, not a reference run");
    vla_dat *out = vla_cli_out(&c, &spec);
    vla_cli_provenance(out, &c);
    vla_dat_meta(out, "histogram", "%d log-spaced bins per octave of ||J||-1 in [2^%d, 2^%d): "
                 "percentiles within 8.5e-5 relative", VREF_JAC_BPO, VREF_JAC_EMIN, VREF_JAC_EMAX);
    jac_ctx ctx = {&c, vref_jac_form_of(&c.cfg)};
    if (ctx.form != VREF_JAC_PLAIN || c.cfg.d == 1) /* (the seeds' tables at d >= 2 as they were) */
        vla_dat_meta(out, "histogram_below_1", "as many bins per octave of ||J|| in [2^%d, 1/2) "
                     "and of 1 - ||J|| in [2^%d, 1/2]: percentiles within 8.5e-5 relative",
                     VREF_JAC_EMIN, VREF_JAC_EMIN);
    if (ctx.form != VREF_JAC_PLAIN)
        vla_dat_meta(out, "decays", "the model's own: exp of the log-decay rounded to the io "
                     "format (%s), in binary64, rounded to the compute format (%s)%s",
                     vla_fmt_name(vla_prec_io(c.cfg.prec)),
                     vla_fmt_name(vla_prec_compute(c.cfg.prec)),
                     ctx.form == VREF_JAC_DPLR ? "; a, b rounded to the io format" : "");
    vla_driver drv = {.columns = VREF_JAC_COLUMNS,
                      .acc_size = sizeof(jac_acc),
                      .taps = VLA_TAP_KP | VLA_TAP_ALPHA,
                      .init = jac_init,
                      .on_step = jac_on_step,
                      .on_checkpoint = jac_on_checkpoint,
                      .check = jac_check,
                      .ctx = &ctx};
    return vla_cli_close(out, &c, &spec, vla_drive(&c, &spec, &drv, out));
}
