/* vla-drift: how far the tracked A_t drifts from the inverse it stands for (SPEC section 7): the
 * distance to the reference recurrence, the residual against the exactly accumulated M_t, the
 * distance to M_t's LAPACK inverse, symmetry, the spectrum of A_t and the safety-device counts.
 * The measures sit above the program so that tests/test_drift.c can include this file. */
#include "cli.h"
#include "vlaref.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DRIFT_COLUMNS                                                                              \
    "t a_drift a_resid a_lapack sym_defect lambda_min cond guard clamp nudge s_relerr o_relerr "     \
    "a_moved a_moved_diag"
#define DRIFT_NCOL 14
#define DRIFT_FN static __attribute__((unused))

/* A run's M_t = lambda0 I + sum u' u'^T in double-double. The driver saves the accumulator in its
 * checkpoints as raw bytes, so it holds no pointers: the Gram's hi and lo arrays (upper triangle
 * used, as vref_gram keeps them) follow the header. */
typedef struct {
    int d;
    int pad_;
    long writes;    /* u' u'^T terms added */
    long moved;     /* entries of A that changed, summed over the steps of this window */
    long moved_diag; /* ... of them on the diagonal */
    long steps;     /* ... and those steps */
    double hilo[];  /* hi[d * d], then lo[d * d], then A at the previous step */
} drift_acc;

DRIFT_FN size_t drift_acc_size(int d) { return sizeof(drift_acc) + 3 * (size_t)d * d * sizeof(double); }

/* a vref_gram that works on the accumulator's arrays in place */
static vref_gram drift_gram(const drift_acc *a)
{
    vref_gram g = {a->d, (double *)a->hilo, (double *)a->hilo + (size_t)a->d * a->d};
    return g;
}

DRIFT_FN int drift_acc_init(drift_acc *a, const vla_config *cfg)
{
    vref_gram g;
    int e = vref_gram_init(&g, cfg->d, cfg->lambda0);
    if (e)
        return e;
    size_t n = (size_t)cfg->d * cfg->d;
    a->d = cfg->d;
    a->writes = 0;
    memcpy(a->hilo, g.hi, n * sizeof(double));
    memcpy(a->hilo + n, g.lo, n * sizeof(double));
    vref_gram_free(&g);
    return VLA_OK;
}

/* The u' that the recurrence feeds Sherman-Morrison, from this step's raw inputs: rls uses k
 * itself, vla1 u / sqrt(d), vla3 unit(u) / sqrt(d), each from the input rounded to the storage
 * format (what lib/ loads), then in binary64 in lib/'s order of operations. u' has d entries. */
DRIFT_FN void drift_uprime(const vla_config *cfg, const double *k, const double *u, double *up)
{
    int d = cfg->d;
    vla_fmt fs = vla_prec_storage(cfg->prec);
    const double *src = cfg->model == VLA_RLS ? k : (u ? u : k);
    for (int i = 0; i < d; i++)
        up[i] = vla_round_fmt(fs, src[i]);
    if (cfg->model == VLA_RLS)
        return;
    double sqrtd = sqrt((double)d);
    if (cfg->model == VLA_VLA3) {
        double ss = up[0] * up[0];
        for (int i = 1; i < d; i++)
            ss += up[i] * up[i];
        double nrm = sqrt(ss);
        /* lib/'s zero-norm event: the vector is left as it is */
        if (isfinite(nrm) && nrm >= DBL_MIN)
            for (int i = 0; i < d; i++)
                up[i] /= nrm;
    }
    for (int i = 0; i < d; i++)
        up[i] /= sqrtd;
}

DRIFT_FN void drift_acc_add(drift_acc *a, const vla_config *cfg, const double *k, const double *u)
{
    double up[VLA_D_MAX];
    drift_uprime(cfg, k, u, up);
    vref_gram g = drift_gram(a);
    vref_gram_add(&g, up);
    a->writes++;
}

/* the entry (i, j) of the double-double Gram, hi and lo, from its upper triangle */
static inline void gram_at(const drift_acc *a, int i, int j, double *hi, double *lo)
{
    int d = a->d;
    size_t ij = i <= j ? (size_t)i * d + j : (size_t)j * d + i;
    *hi = a->hilo[ij];
    *lo = a->hilo[(size_t)d * d + ij];
}

/* ||A M - I||_F with M in double-double: each entry a compensated dot product (Ogita, Rump and
 * Oishi's Dot2, one fma per TwoProd). A plain binary64 product would add an error of about
 * d u64 cond(M) of its own, which on ill-conditioned streams buries the f64 run's residual. */
static double resid_dd(const double *A, const drift_acc *a)
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

/* The measures of one checkpoint into row[DRIFT_NCOL] (DRIFT_COLUMNS). m is the model, ref the
 * reference run of the same inputs (NULL: the columns that need it are nan), acc the Gram of the
 * u' m used. Only VLA_ENOMEM fails: a matrix LAPACK cannot digest gives nan entries. */
DRIFT_FN int drift_measure(const vla_model *m, const vla_model *ref, const drift_acc *acc, long t,
                           double *row)
{
    const vla_config *cfg = vla_model_config(m);
    const vla_counts *cn = vla_model_counts(m);
    int d = cfg->d, dv = cfg->dv;
    size_t dd = (size_t)d * d, ns = (size_t)dv * d, nbig = dd > ns ? dd : ns;
    double *A = malloc(dd * sizeof *A), *B = malloc(nbig * sizeof *B), *C = malloc(nbig * sizeof *C),
           *lam = malloc((size_t)d * sizeof *lam);
    if (!A || !B || !C || !lam) {
        free(A), free(B), free(C), free(lam);
        return VLA_ENOMEM;
    }
    for (int i = 0; i < DRIFT_NCOL; i++)
        row[i] = NAN;
    row[0] = (double)t;
    vla_model_get(m, VLA_Q_A, A);
    if (ref) {
        vla_model_get(ref, VLA_Q_A, B);
        row[1] = vla_fro_diff(A, B, (long)dd) / vla_fro(B, (long)dd);
    }
    /* M_t is the Gram of the u' only while no nudge or clamp has added to A a change that is not
     * a rank-one update of M; from the first one on, a_resid and a_lapack have no meaning */
    if (cn->nudge == 0 && cn->clamp == 0) {
        row[2] = resid_dd(A, acc);
        vref_gram g = drift_gram(acc);
        vref_gram_get(&g, B);
        if (vref_spd_inverse(B, d, C) == VLA_OK)
            row[3] = vla_fro_diff(A, C, (long)dd) / vla_fro(C, (long)dd);
    }
    row[4] = vla_sym_defect(A, d);
    if (vref_sym_eig(A, d, lam) == VLA_OK) {
        row[5] = lam[0];
        row[6] = lam[0] > 0 ? lam[d - 1] / lam[0] : NAN; /* not positive definite: see lambda_min */
    }
    row[7] = (double)cn->guard;
    row[8] = (double)cn->clamp;
    row[9] = (double)cn->nudge;
    if (ref) {
        vla_model_get(m, VLA_Q_S, B);
        vla_model_get(ref, VLA_Q_S, C);
        row[10] = vla_fro_diff(B, C, (long)ns) / vla_fro(C, (long)ns);
        vla_model_get(m, VLA_Q_O, B);
        vla_model_get(ref, VLA_Q_O, C);
        row[11] = vla_fro_diff(B, C, dv) / vla_fro(C, dv);
    }
    free(A), free(B), free(C), free(lam);
    return VLA_OK;
}

#ifndef VLA_DRIFT_NO_MAIN

/* a_moved: how many of A's entries a step still changes. Once an update is below half an ulp of
 * an entry, round to nearest leaves the entry as it was (stagnation). chol keeps no A (forming it
 * costs O(d^3) a step): nan there. */
static int tracks_A(const vla_run *r) { return vla_model_config(r->m)->track != VLA_TRACK_CHOL; }

static void moved_count(vla_run *r, drift_acc *a)
{
    static _Thread_local double A[VLA_D_MAX * VLA_D_MAX];
    size_t n = (size_t)a->d * a->d;
    double *prev = a->hilo + 2 * n;
    vla_model_get(r->m, VLA_Q_A, A);
    for (size_t i = 0; i < n; i++) {
        int moved = memcmp(&A[i], &prev[i], sizeof *A) != 0;
        a->moved += moved;
        a->moved_diag += moved && i % (size_t)(a->d + 1) == 0;
    }
    memcpy(prev, A, n * sizeof *A);
    a->steps++;
}

static int on_init(vla_run *r, void *acc, void *ctx)
{
    drift_acc *a = acc;
    int e = drift_acc_init(a, vla_model_config(r->m));
    if (!e && tracks_A(r))
        vla_model_get(r->m, VLA_Q_A, a->hilo + 2 * (size_t)a->d * a->d);
    return e;
}

static int on_step(vla_run *r, void *acc, void *ctx)
{
    /* a read writes nothing, so M_t does not change; after a nudge or clamp no column uses M_t,
     * and in f32 the Gram costs half the step */
    const vla_counts *cn = vla_model_counts(r->m);
    if (!r->is_read && cn->nudge == 0 && cn->clamp == 0)
        drift_acc_add(acc, vla_model_config(r->m), r->buf.k, r->buf.u);
    if (!r->is_read && tracks_A(r))
        moved_count(r, acc);
    return VLA_OK;
}

static int on_checkpoint(vla_run *r, void *acc, vla_rows *rows, void *ctx)
{
    drift_acc *a = acc;
    double row[DRIFT_NCOL];
    int e = drift_measure(r->m, r->ref, acc, r->t, row);
    if (a->steps) { /* the fraction of entries changed per step, over the window */
        row[12] = (double)a->moved / ((double)a->steps * a->d * a->d);
        row[13] = (double)a->moved_diag / ((double)a->steps * a->d);
    }
    a->moved = a->moved_diag = a->steps = 0;
    return e ? e : vla_rows_add(rows, row);
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
            "(--set nudge=off, --set clamp_on=off) to measure them. A guard event (vla3: delta\n"
            "floored; rls, vla1: update skipped) is counted and left in the residual.",
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
                   "              previous checkpoint (0: A stagnates; nan for chol, which keeps no A)\n"
                   "  a_moved_diag  the same for the diagonal alone: its entries are the largest, and\n"
                   "              stall first, while the small off-diagonal ones, whose ulp shrinks\n"
                   "              with them, keep moving",
        .example = "vla-drift --model vla3 --precision f16 --set nudge=off --stream lmlike --steps "
                   "1e4 --out data/drift-f16.dat",
        .default_steps = 10000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_EXACT,
    };
    vla_cli c;
    vla_cli_parse(&c, &spec, argc, argv);
    if (!vla_model_has_A(c.cfg.model))
        vla_cli_die(&spec, "--model %s has no A to drift (rls, vla1 or vla3)",
                    vla_model_name(c.cfg.model));
    /* a way of tracking or a reference that is not built is the user's choice, not a failure:
     * find out now, before any table is opened */
    vla_model *probe;
    int e = vla_model_new(&probe, &c.cfg);
    if (e)
        vla_cli_die(&spec, "%s in %s with --track %s: %s", vla_model_name(c.cfg.model),
                    vla_prec_name(c.cfg.prec), vla_track_name(c.cfg.track), vla_strerror(e));
    vla_model_free(probe);
    if (c.ref == REF_EXACT) {
        if ((e = vref_model_new(&probe, &c.cfg, VREF_EXACT, c.ref_bits)))
            vla_cli_die(&spec, "--ref exact with --track %s: %s", vla_track_name(c.cfg.track),
                        vla_strerror(e));
        vla_model_free(probe);
    } else if (c.ref == REF_F64) {
        vla_config rc = c.cfg; /* what cli.c's f64 reference will build */
        rc.prec = VLA_F64;
        rc.mode = VLA_STRICT;
        if (rc.track == VLA_TRACK_SR || rc.track == VLA_TRACK_COMP) /* no f64 twin: sm */
            rc.track = VLA_TRACK_SM;
        if ((e = vla_model_new(&probe, &rc)))
            vla_cli_die(&spec, "--ref f64 with --track %s: %s; use --ref exact",
                        vla_track_name(c.cfg.track), vla_strerror(e));
        vla_model_free(probe);
    }
    vla_dat *out;
    if ((e = vla_dat_open(&out, c.out, argc, argv))) {
        fprintf(stderr, "vla-drift: cannot write %s: %s\n", c.out, vla_strerror(e));
        return 1;
    }
    vla_cli_provenance(out, &c);
    vla_dat_meta(out, "m_t", "lambda0 I + sum u' u'^T in double-double, u' = %s",
                 c.cfg.model == VLA_RLS    ? "k"
                 : c.cfg.model == VLA_VLA1 ? "u / sqrt(d)"
                                           : "unit(u) / sqrt(d)");
    vla_dat_meta(out, "a_resid", "%s",
                 c.cfg.nudge || c.cfg.clamp_on
                     ? "nan from the first nudge or clamp (M_t is then not the Gram of the u')"
                     : "defined at every t (nudge and clamp off)");
    vla_driver drv = {.columns = DRIFT_COLUMNS,
                      .acc_size = drift_acc_size(c.cfg.d),
                      .init = on_init,
                      .on_step = on_step,
                      .on_checkpoint = on_checkpoint};
    int status = vla_drive(&c, &spec, &drv, out);
    e = vla_dat_close(out);
    if (!status && e) {
        fprintf(stderr, "vla-drift: writing %s failed: %s\n", c.out, vla_strerror(e));
        status = 1;
    }
    return status;
}
#endif
