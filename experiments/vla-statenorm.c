/* vla-statenorm: the size of the state against t (docs/math.md section 7, claims 1 and 3):
 * ||S_t||_F, ||A_t||_F and ||o_t||, the growth exponent of ||S|| over the last decade, and the
 * relative error of S and o against a reference run of the same inputs. */
#include "cli.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS "t s_fro a_fro o_norm growth s_relerr o_relerr growth_se"

typedef struct {
    long n;                  /* checkpoints so far */
    double t[512], s[512];   /* their t and ||S||_F, for the growth exponent */
} acc_t;

static int on_checkpoint(vla_run *r, void *accp, vla_rows *rows, void *ctx)
{
    acc_t *acc = accp;
    const vla_config *cfg = vla_engine_config(r->m);
    int d = cfg->d, dv = cfg->dv;
    size_t ns = (size_t)d * (d > dv ? d : dv);
    double *x = malloc(ns * sizeof *x), *y = malloc(ns * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return VLA_ENOMEM;
    }
    double row[8] = {(double)r->t, 0, NAN, 0, NAN, NAN, NAN, NAN};
    vla_engine_get(r->m, r->run, VLA_Q_S, x);
    row[1] = vla_fro(x, (long)dv * d);
    if (r->ref) {
        vla_engine_get(r->ref, r->run, VLA_Q_S, y);
        row[5] = vla_fro_diff(x, y, (long)dv * d) / vla_fro(y, (long)dv * d);
    }
    if (vla_model_has_A(cfg->model)) {
        vla_engine_get(r->m, r->run, VLA_Q_A, x);
        row[2] = vla_fro(x, (long)d * d);
    }
    vla_engine_get(r->m, r->run, VLA_Q_O, x);
    row[3] = vla_fro(x, dv);
    if (r->ref) {
        vla_engine_get(r->ref, r->run, VLA_Q_O, y);
        row[6] = vla_fro_diff(x, y, dv) / vla_fro(y, dv);
    }
    if (acc->n < 512) {
        acc->t[acc->n] = (double)r->t;
        acc->s[acc->n] = row[1];
        acc->n++;
    }
    /* the growth exponent: slope of log ||S|| against log t over the last decade */
    long first = acc->n - 1;
    while (first > 0 && acc->t[first - 1] >= r->t / 10.0)
        first--;
    if (r->t >= 10 && acc->n - first >= 2)
        vla_loglog_fit(acc->t + first, acc->s + first, acc->n - first, &row[4], &row[7]);
    free(x);
    free(y);
    return vla_rows_add(rows, row);
}

/* the accumulator repeats its rows' t and s_fro, bit for bit */
static int check(const void *accp, const vla_rows *rows, long t, void *ctx)
{
    const acc_t *acc = accp;
    long n = rows->n < 512 ? rows->n : 512;
    if (acc->n != n)
        return VLA_EFORMAT;
    for (long i = 0; i < n; i++)
        if (acc->t[i] != rows->v[i * rows->ncol] ||
            memcmp(&acc->s[i], &rows->v[i * rows->ncol + 1], sizeof acc->s[i]))
            return VLA_EFORMAT;
    return VLA_OK;
}

int main(int argc, char **argv)
{
    static const vla_cli_spec spec = {
        .prog = "vla-statenorm",
        .summary = "Steps a model over an input stream and records the size of its state at\n"
                   "log-spaced checkpoints: ||S_t||_F, ||A_t||_F, ||o_t||_2, the growth exponent of\n"
                   "||S_t||_F over the last decade (0: bounded, 1: linear growth), and, with a\n"
                   "reference, the relative error of S_t and o_t against it. Claim 1 of the source\n"
                   "documents: ||S_t||_F is self-limiting for vla3 while la grows like O(t).",
        .columns = "  t         step\n"
                   "  s_fro     ||S_t||_F\n"
                   "  a_fro     ||A_t||_F (nan for la and delta, which have no A)\n"
                   "  o_norm    ||o_t||_2, the read-out with q_t\n"
                   "  growth    least-squares slope of log ||S|| against log t over [t/10, t]\n"
                   "  s_relerr  ||S_t - S_t^ref||_F / ||S_t^ref||_F (nan without --ref)\n"
                   "  o_relerr  ||o_t - o_t^ref|| / ||o_t^ref||\n"
                   "  growth_se  the standard error of growth (GSL's gsl_fit_linear; nan from two\n"
                   "            points)",
        .example = "vla-statenorm --model vla3 --stream lmlike --d 32 --steps 1000 --runs 4\n"
                   "vla-statenorm --model vla3 --precision f16 --stream trace:mytrace --ref f64\n"
                   "vla-statenorm --model vla3 --precision bf16 --steps 1e7 --runs 8 --ref f64 "
                   "--backend lanes --out long.dat",
        .default_steps = 1000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_NONE,
    };
    vla_cli c;
    vla_cli_parse(&c, &spec, argc, argv);
    vla_dat *out = vla_cli_out(&c, &spec);
    vla_cli_provenance(out, &c);
    vla_driver drv = {.columns = COLUMNS,
                      .acc_size = sizeof(acc_t),
                      .on_checkpoint = on_checkpoint,
                      .check = check};
    return vla_cli_close(out, &c, &spec, vla_drive(&c, &spec, &drv, out));
}
