/* ref_ddgrad.c: the double-double backward (ref_model_dd.c's, kind VREF_DD) checked against MPFR's
 * exact backward at 256 bits on one problem, below binary64's resolution: the check that a program
 * runs on part of its work before it trusts dd's gradients for the rest (vla-check's judge of a
 * kernel's gradients), as vref_ddcheck does for the forward. */
#include "vlaref.h"
#include "model_impl.h"
#include <math.h>
#include <stdlib.h>

/* vla_grads' arrays of T steps for cfg in one buffer of 2 n numbers, each array's low parts n
 * numbers after it (vref_backward_lo's layout); the lengths in len (dq, dk, dv, dbeta, dg, da, db,
 * du; 0 where cfg has no such gradient) */
enum { NG = 8 };
static double *grads_alloc(const vla_config *cfg, long T, vla_grads *g, long len[NG], long *n)
{
    const long d = cfg->d, dv = cfg->dv;
    const int lr = vla_grad_has(cfg, VLA_GRAD_LR);
    long l[NG] = {T * d, T * d, T * dv, T, T * d, lr ? T * d : 0, lr ? T * d : 0,
                  vla_grad_has(cfg, VLA_GRAD_U) ? T * d : 0};
    *n = 0;
    for (int i = 0; i < NG; i++)
        *n += len[i] = l[i];
    double *buf = calloc(2 * (size_t)*n, sizeof *buf), *p = buf;
    if (!buf)
        return NULL;
    double **a[NG] = {&g->dq, &g->dk, &g->dv, &g->dbeta, &g->dg, &g->da, &g->db, &g->du};
    *g = (vla_grads){0};
    for (int i = 0; i < NG; p += len[i++])
        *a[i] = len[i] ? p : NULL;
    return buf;
}

/* kind's backward of T steps, whole, each gradient with its low part (vref_backward_lo) */
static int run(const vla_config *cfg, vref_kind kind, long T, vla_grad_input in, void *ctx,
               const double *c, const vla_grads *g, long n, volatile sig_atomic_t *stop)
{
    vla_backward *b = NULL;
    int r = vref_backward_new_stop(&b, cfg, kind, VREF_DEFAULT_BITS, T, in, ctx, stop);
    if (!r && !(r = vref_backward_lo(b, n)))
        r = vla_backward_whole(b, c, g);
    vla_backward_free(b);
    return r;
}

/* the larger of two differences, NaN the largest */
static double worse(double e, double f) { return isnan(e) ? e : isnan(f) || f > e ? f : e; }

int vref_dd_grad_check(const vla_config *cfg, long T, vla_grad_input in, void *ctx,
                       const double *c, double *worst, volatile sig_atomic_t *stop)
{
    if (!cfg || !in || !c || !worst || T < 1)
        return VLA_EINVAL;
    vla_grads gd, gm;
    long len[NG], n;
    double *bd = grads_alloc(cfg, T, &gd, len, &n), *bm = grads_alloc(cfg, T, &gm, len, &n);
    int r = !bd || !bm ? VLA_ENOMEM : run(cfg, VREF_DD, T, in, ctx, c, &gd, n, stop);
    if (!r)
        r = run(cfg, VREF_EXACT, T, in, ctx, c, &gm, n, stop);
    double w = 0;
    for (long i = 0, at = 0; !r && i < NG; at += len[i++]) {
        const double *x = bd + at, *y = bm + at;
        double num = 0, den = 0;
        for (long j = 0; j < len[i]; j++) {
            const double e = fabs((x[j] - y[j]) + (x[n + j] - y[n + j]));
            num = e > num || isnan(e) ? e : num;
            den = fabs(y[j]) > den ? fabs(y[j]) : den;
        }
        w = worse(w, den > 0 ? num / den : num);
    }
    free(bd), free(bm);
    *worst = w;
    return r;
}
