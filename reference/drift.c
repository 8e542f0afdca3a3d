/* drift.c: the measures of how far a tracked A_t has drifted from the inverse it stands for
 * (docs/math.md section 7): the distance to the reference recurrence, the residual against M_t
 * accumulated exactly (double-double) from the u' the recurrence used, the distance to M_t's
 * LAPACK inverse, symmetry, the spectrum of A_t, and the safety-device counts. bin/vla-drift and
 * bin/vla-heatmap measure with these, and tests/test_drift.c checks them. */
#include "vlaref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t vref_drift_size(int d) { return sizeof(vref_drift) + 2 * (size_t)d * d * sizeof(double); }

/* a vref_gram that works on the accumulator's arrays in place */
static vref_gram gram_of(const vref_drift *a)
{
    vref_gram g = {a->d, (double *)a->hilo, (double *)a->hilo + (size_t)a->d * a->d};
    return g;
}

int vref_drift_init(vref_drift *a, const vla_config *cfg)
{
    vref_gram g;
    int e = vref_gram_init(&g, cfg->d, cfg->lambda0);
    if (e)
        return e;
    size_t n = (size_t)cfg->d * cfg->d;
    memset(a, 0, sizeof *a);
    a->d = cfg->d;
    memcpy(a->hilo, g.hi, n * sizeof(double));
    memcpy(a->hilo + n, g.lo, n * sizeof(double));
    vref_gram_free(&g);
    return VLA_OK;
}

int vref_drift_check(const vref_drift *a, const vla_config *cfg, long t)
{
    long dd = (long)cfg->d * cfg->d;
    int ok = a->d == cfg->d && (a->gram_done == 0 || a->gram_done == 1) && a->writes >= 0 &&
             a->writes <= t && a->steps >= 0 && a->steps <= t && a->moved >= 0 &&
             a->moved <= a->steps * dd;
    return ok ? VLA_OK : VLA_EFORMAT;
}

void vref_drift_add(vref_drift *a, const vla_config *cfg, const double *k, const double *u)
{
    if (a->gram_done) /* nothing reads it any more: see vref_drift_measure */
        return;
    double up[VLA_D_MAX]; /* the recurrence's own u', in binary64 on the rounded inputs */
    vla_uprime(cfg, k, u, up);
    vref_gram g = gram_of(a);
    vref_gram_add(&g, up);
    a->writes++;
}

void vref_drift_step(vref_drift *a, const vla_config *cfg, const vla_step_view *v)
{
    if (v->in->is_read)
        return;
    vref_drift_add(a, cfg, v->in->k, v->in->u);
    if (v->a_moved >= 0) { /* once an update is below half an ulp of an entry, round to nearest
                              leaves it as it was; chol keeps no A */
        a->moved += v->a_moved;
        a->moved_diag += v->a_moved_diag;
        a->steps++;
    }
}

int vref_drift_on_step(void *ctx, const vla_step_view *v)
{
    const vref_drift_tap *g = ctx;
    vref_drift_step(g->acc, g->cfg, v);
    return VLA_OK;
}

void vref_drift_gram(const vref_drift *a, double *M)
{
    vref_gram g = gram_of(a);
    vref_gram_get(&g, M);
}

/* the entry (i, j) of the double-double Gram, hi and lo, from its upper triangle */
static inline void gram_at(const vref_drift *a, int i, int j, double *hi, double *lo)
{
    int d = a->d;
    size_t ij = i <= j ? (size_t)i * d + j : (size_t)j * d + i;
    *hi = a->hilo[ij];
    *lo = a->hilo[(size_t)d * d + ij];
}

/* ||A M - I||_F with M in double-double: each entry a compensated dot product (Ogita, Rump and
 * Oishi's Dot2, one fma per TwoProd). A plain binary64 product would add an error of about
 * d u64 cond(M) of its own, which on ill-conditioned streams buries the f64 run's residual. */
static double resid_dd(const double *A, const vref_drift *a)
{
    int d = a->d;
    double ss = 0;
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            double s = i == j ? -1.0 : 0.0, c = 0;
            for (int k = 0; k < d; k++) {
                double mh, ml, aik = A[(size_t)i * d + k];
                gram_at(a, k, j, &mh, &ml);
                double p = aik * mh, pe = fma(aik, mh, -p);
                double x = s + p, bv = x - s, se = (s - (x - bv)) + (p - bv);
                s = x;
                c += pe + se + aik * ml;
            }
            double r = s + c;
            ss += r * r;
        }
    return sqrt(ss);
}

int vref_drift_measure(vla_engine *m, vla_engine *ref, int run, vref_drift *acc, long t,
                       double *row)
{
    const vla_config *cfg = vla_engine_config(m);
    vla_counts cn;
    vla_engine_counts(m, run, &cn);
    int d = cfg->d, dv = cfg->dv;
    size_t dd = (size_t)d * d, ns = (size_t)dv * d, nbig = dd > ns ? dd : ns;
    double *A = malloc(dd * sizeof *A), *B = malloc(nbig * sizeof *B), *C = malloc(nbig * sizeof *C),
           *lam = malloc((size_t)d * sizeof *lam);
    if (!A || !B || !C || !lam) {
        free(A), free(B), free(C), free(lam);
        return VLA_ENOMEM;
    }
    for (int i = 0; i < VREF_DRIFT_NCOL; i++)
        row[i] = NAN;
    row[0] = (double)t;
    vla_engine_get(m, run, VLA_Q_A, A);
    if (ref) {
        vla_engine_get(ref, run, VLA_Q_A, B);
        row[1] = vla_fro_diff(A, B, (long)dd) / vla_fro(B, (long)dd);
    }
    /* M_t is the Gram of the u' only while no nudge or clamp has added to A a change that is not
     * a rank-one update of M, and without forgetting; from the first one on, a_resid and a_lapack
     * have no meaning, and the Gram need not be kept (the counts never go down) */
    if (cn.nudge == 0 && cn.clamp == 0 && cfg->gamma == 1) {
        row[2] = resid_dd(A, acc);
        vref_drift_gram(acc, B);
        if (vref_spd_inverse(B, d, C) == VLA_OK)
            row[3] = vla_fro_diff(A, C, (long)dd) / vla_fro(C, (long)dd);
    } else {
        acc->gram_done = 1;
    }
    row[4] = vla_sym_defect(A, d);
    if (vref_sym_eig(A, d, lam) == VLA_OK) {
        row[5] = lam[0];
        row[6] = lam[0] > 0 ? lam[d - 1] / lam[0] : NAN; /* not positive definite: see lambda_min */
    }
    row[7] = (double)cn.guard;
    row[8] = (double)cn.clamp;
    row[9] = (double)cn.nudge;
    if (ref) {
        vla_engine_get(m, run, VLA_Q_S, B);
        vla_engine_get(ref, run, VLA_Q_S, C);
        row[10] = vla_fro_diff(B, C, (long)ns) / vla_fro(C, (long)ns);
        vla_engine_get(m, run, VLA_Q_O, B);
        vla_engine_get(ref, run, VLA_Q_O, C);
        row[11] = vla_fro_diff(B, C, dv) / vla_fro(C, dv);
    }
    if (acc->steps) { /* the fraction of entries changed per step, over the window */
        row[12] = (double)acc->moved / ((double)acc->steps * d * d);
        row[13] = (double)acc->moved_diag / ((double)acc->steps * d);
    }
    acc->moved = acc->moved_diag = acc->steps = 0;
    if (ref) { /* the vector the model uses: alpha (vla3 unit(A k'), rls A k, vla1 A k) */
        vla_engine_get(m, run, VLA_Q_ALPHA, B);
        vla_engine_get(ref, run, VLA_Q_ALPHA, C);
        row[14] = vla_fro_diff(B, C, d) / vla_fro(C, d);
    }
    double sv[3];
    if (vla_engine_get(m, run, VLA_Q_SOLVER, sv) == VLA_OK) { /* solve, cg, cheb */
        vla_engine_get(m, run, VLA_Q_M, B);
        if (vref_sym_eig(B, d, lam) == VLA_OK)
            row[15] = lam[0];
        row[16] = sv[0];
        row[17] = cn.solves ? (double)cn.solve_iters / cn.solves : NAN;
        row[18] = (double)cn.solve_fail;
    }
    free(A), free(B), free(C), free(lam);
    return VLA_OK;
}
