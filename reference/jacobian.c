/* jacobian.c: the measures of the write Jacobian J_t of S_t = S_{t-1} J_t + B_t (docs/math.md
 * section 7.5): the seeds' J_t = I - k' alpha^T and the gated family's decayed and low-rank
 * transitions (section 2.6; vref_jac_tr). ||J_t||_2 every step into a window's histogram, the
 * window's row at a checkpoint (percentiles, the spectral radius, a dgesvd cross-check) and the
 * Lyapunov exponent of J_1 ... J_t. bin/vla-jacobian measures with these; tests check them. */
#include "vlaref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void vref_jac_hist_reset(vref_jac_hist *h)
{
    if (h->lo <= h->hi)
        memset(h->bin + h->lo, 0, sizeof h->bin[0] * (size_t)(h->hi - h->lo + 1));
    if (h->llo <= h->lhi)
        memset(h->lbin + h->llo, 0, sizeof h->lbin[0] * (size_t)(h->lhi - h->llo + 1));
    h->n = h->nan = h->tiny = h->near = h->zero = h->under = h->over = 0;
    h->lo = VREF_JAC_NBIN;
    h->hi = -1;
    h->llo = VREF_JAC_NLBIN;
    h->lhi = -1;
    h->min = INFINITY;
    h->max = -INFINITY;
}

void vref_jac_hist_add(vref_jac_hist *h, double norm)
{
    if (isnan(norm)) {
        h->nan++;
        return;
    }
    h->n++;
    h->min = norm < h->min ? norm : h->min;
    h->max = norm > h->max ? norm : h->max;
    double x = norm - 1;
    if (x < 0) { /* a decayed J (the gated family), or d = 1 (the one singular value |1 - a.b|) */
        if (norm < 0x1p-40) {
            h->tiny++;
        } else if (x > -0x1p-40) {
            h->near++;
        } else {
            const int half = VREF_JAC_LOCT * VREF_JAC_BPO;
            int i;
            if (norm < 0.5) { /* log-spaced in ||J|| */
                i = (int)floor((log2(norm) - VREF_JAC_EMIN) * VREF_JAC_BPO);
                i = i < 0 ? 0 : i >= half ? half - 1 : i;
            } else { /* log-spaced in 1 - ||J|| (exact: Sterbenz), in [2^-40, 1/2] */
                int j = (int)floor((log2(-x) - VREF_JAC_EMIN) * VREF_JAC_BPO);
                j = j < 0 ? 0 : j >= half ? half - 1 : j;
                i = 2 * half - 1 - j;
            }
            h->lbin[i]++;
            h->llo = i < h->llo ? i : h->llo;
            h->lhi = i > h->lhi ? i : h->lhi;
        }
    } else if (x == 0) {
        h->zero++;
    } else if (x < 0x1p-40) {
        h->under++;
    } else if (x >= 0x1p64) {
        h->over++;
    } else {
        int i = (int)floor((log2(x) - VREF_JAC_EMIN) * VREF_JAC_BPO);
        i = i < 0 ? 0 : i >= VREF_JAC_NBIN ? VREF_JAC_NBIN - 1 : i; /* log2 rounding at the range ends */
        h->bin[i]++;
        h->lo = i < h->lo ? i : h->lo;
        h->hi = i > h->hi ? i : h->hi;
    }
}

static double jac_clamp(const vref_jac_hist *h, double v) { return v < h->min ? h->min : v > h->max ? h->max : v; }

/* Nearest rank: the smallest value with at least ceil(p n) samples at or below it. A bin's
 * representative is clamped into the window's [min, max], which makes the extreme bins exact. */
double vref_jac_hist_quantile(const vref_jac_hist *h, double p)
{
    if (h->n == 0)
        return NAN;
    long k = (long)ceil(p * (double)h->n), cum = 0;
    k = k < 1 ? 1 : k > h->n ? h->n : k;
    if ((cum += h->tiny) >= k)
        return jac_clamp(h, 0x1p-41);
    const int half = VREF_JAC_LOCT * VREF_JAC_BPO;
    for (int i = h->llo; i <= h->lhi; i++)
        if ((cum += h->lbin[i]) >= k)
            return jac_clamp(h, i < half ? exp2(VREF_JAC_EMIN + (i + 0.5) / VREF_JAC_BPO)
                                         : 1 - exp2(VREF_JAC_EMIN + (2 * half - 1 - i + 0.5) /
                                                                        VREF_JAC_BPO));
    if ((cum += h->near) >= k)
        return jac_clamp(h, 1 - 0x1p-41);
    if ((cum += h->zero) >= k)
        return jac_clamp(h, 1);
    if ((cum += h->under) >= k)
        return jac_clamp(h, 1 + 0x1p-41);
    for (int i = h->lo; i <= h->hi; i++)
        if ((cum += h->bin[i]) >= k)
            return jac_clamp(h, 1 + exp2(VREF_JAC_EMIN + (i + 0.5) / VREF_JAC_BPO));
    return h->max;
}

int vref_jac_init(vref_jac *a, int d, uint64_t seed)
{
    vla_lyap l;
    int e = vla_lyap_init(&l, d, seed);
    if (e)
        return e;
    memcpy(a->lx, l.x, sizeof(double) * (size_t)d);
    a->lsum = l.log_sum;
    a->lt = l.t;
    vla_lyap_free(&l);
    a->h.lo = a->h.llo = 0;
    a->h.hi = VREF_JAC_NBIN - 1; /* the first reset clears everything */
    a->h.lhi = VREF_JAC_NLBIN - 1;
    vref_jac_hist_reset(&a->h);
    a->tform = VREF_JAC_PLAIN;
    a->td = 0;
    a->min_c = NAN;
    a->unit_err = NAN;
    return VLA_OK;
}

static double jac_dot(const double *a, const double *b, int d)
{
    double s = 0;
    for (int i = 0; i < d; i++)
        s += a[i] * b[i];
    return s;
}

/* One step's J = I - kp al^T. unit: the model makes kp and al unit vectors (vla3; delta with
 * keynorm at beta 1), so the closed form of c = cos(al, kp) applies too, and its disagreement with the general 2 x 2
 * reduction on the stored (rounded, not exactly unit) vectors is recorded. Returns ||J||_2. */
/* the window's smallest cos(al, kp); returns it for this step (NaN where a vector is 0) */
static double jac_min_c(vref_jac *a, const double *kp, const double *al, int d)
{
    double na = vla_fro(kp, d), nb = vla_fro(al, d);
    double c = (na > 0 && nb > 0 && isfinite(na * nb)) ? jac_dot(kp, al, d) / (na * nb) : NAN;
    if (!isnan(c) && !(c >= a->min_c))
        a->min_c = c;
    return c;
}

double vref_jac_step(vref_jac *a, const double *kp, const double *al, int d, int unit)
{
    double norm = vla_jac_norm(kp, al, d);
    double c = jac_min_c(a, kp, al, d);
    if (unit) {
        double e = fabs(vla_jac_norm_unit(c) - norm) / norm;
        if (isnan(a->unit_err) || !(e <= a->unit_err))
            a->unit_err = e;
    }
    vref_jac_hist_add(&a->h, norm);
    vla_lyap l = {d, a->lx, a->lsum, a->lt};
    vla_lyap_step(&l, kp, al);
    a->lsum = l.log_sum;
    a->lt = l.t;
    return norm;
}

/* The checkpoint's row (JAC_NCOL values) from the window so far and this step's kp, al; then the
 * window starts over. */
int vref_jac_row(vref_jac *a, const double *kp, const double *al, int d, long t, int unit,
                 double *row)
{
    double *J = calloc((size_t)d * d, sizeof(double)), *s = calloc((size_t)d, sizeof(double));
    if (!J || !s) {
        free(J);
        free(s);
        return VLA_ENOMEM;
    }
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++)
            J[(size_t)i * d + j] = (i == j) - kp[i] * al[j];
    int e = vref_svd(J, d, d, s);
    double p = jac_dot(al, kp, d), closed = vla_jac_norm(kp, al, d);
    const vref_jac_hist *h = &a->h;
    row[0] = (double)t;
    row[1] = h->nan ? NAN : h->n ? h->max : NAN;
    row[2] = vref_jac_hist_quantile(h, 0.50);
    row[3] = vref_jac_hist_quantile(h, 0.99);
    /* eigenvalues of I - kp al^T: 1 on the d - 1 directions orthogonal to al, and 1 - al.kp */
    row[4] = d >= 2 ? fmax(1, fabs(1 - p)) : fabs(1 - p);
    row[5] = e ? NAN : s[0];
    row[6] = e ? NAN : fabs(closed - s[0]) / s[0];
    row[7] = a->lt > 0 ? a->lsum / (double)a->lt : NAN;
    row[8] = a->min_c;
    row[9] = unit ? a->unit_err : NAN;
    row[10] = h->n ? (double)(h->near + h->zero + h->under) / (double)h->n : NAN;
    free(J);
    free(s);
    vref_jac_hist_reset(&a->h);
    a->min_c = NAN;
    a->unit_err = NAN;
    /* a J that dgesvd cannot take (Inf or NaN in the state) is a nan in the row, not a failure */
    return e == VLA_ENOMEM ? e : VLA_OK;
}

int vref_jac_check(const vref_jac *a, long t)
{
    const vref_jac_hist *h = &a->h;
    const long c[] = {h->n, h->nan, h->tiny, h->near, h->zero, h->under, h->over, a->lt};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i] < 0 || c[i] > t)
            return VLA_EFORMAT;
    if (a->tform < VREF_JAC_PLAIN || a->tform > VREF_JAC_DPLR || a->td < 0 || a->td > VLA_D_MAX)
        return VLA_EFORMAT;
    int empty = h->lo == VREF_JAC_NBIN && h->hi == -1;
    if (!empty && !(h->lo >= 0 && h->lo <= h->hi && h->hi < VREF_JAC_NBIN))
        return VLA_EFORMAT;
    int lempty = h->llo == VREF_JAC_NLBIN && h->lhi == -1;
    if (!lempty && !(h->llo >= 0 && h->llo <= h->lhi && h->lhi < VREF_JAC_NLBIN))
        return VLA_EFORMAT;
    long sum = h->tiny + h->near + h->zero + h->under + h->over; /* every sample in one place */
    for (int i = 0; i < VREF_JAC_NBIN; i++) {
        if (h->bin[i] && (empty || i < h->lo || i > h->hi))
            return VLA_EFORMAT;
        sum += h->bin[i];
    }
    for (int i = 0; i < VREF_JAC_NLBIN; i++) {
        if (h->lbin[i] && (lempty || i < h->llo || i > h->lhi))
            return VLA_EFORMAT;
        sum += h->lbin[i];
    }
    return sum == h->n ? VLA_OK : VLA_EFORMAT;
}

/* k' and alpha unit by construction (the model's unit column: vla3's always, delta's with
 * keynorm where beta is 1, alpha = beta k'). The unit formula counts d - 1 singular values of 1
 * besides the top one: it needs d >= 2. */
int vref_jac_is_unit(const vla_config *cfg, double step_beta)
{
    const int unit = vla_model_unit(cfg);
    if (cfg->d < 2)
        return 0;
    return unit == 1 || (unit == 2 && (isnan(step_beta) ? cfg->beta : step_beta) == 1);
}

/* ---- the gated family's transitions (docs/math.md 2.6): J = Diag(dec) (I - kp al^T) + la lb^T ---- */

vref_jac_form vref_jac_form_of(const vla_config *cfg)
{
    switch (vla_model_gate(cfg->model)) {
    case 1:
        return VREF_JAC_SCALAR;
    case 2:
        return (vla_model_reads(cfg) & (VLA_IN_A | VLA_IN_B)) ? VREF_JAC_DPLR : VREF_JAC_DIAG;
    default:
        return VREF_JAC_PLAIN;
    }
}

/* The model's own numbers, not exp of the binary64 input: in a narrow policy they differ where it
 * matters here, near 1 (bf16's a = exp(-0.001) is 1: J is then not decayed at all). Every native
 * arithmetic (lib's, the lanes', the kernels' on the host) takes them so. The MPFR models do not
 * (the exact one rounds inputs to the storage format and takes exp at its own precision): a run
 * on vref_backend_exact gets the native decays here, not its own. */
void vref_jac_gates(const vla_config *cfg, const vla_input *in, long t, double *dec, double *la,
                    double *lb)
{
    const vla_fmt io = vla_prec_io(cfg->prec), cf = vla_prec_compute(cfg->prec);
    const int d = cfg->d;
    const vref_jac_form f = vref_jac_form_of(cfg);
    if (f == VREF_JAC_SCALAR) /* (deltaproduct: no gate after a token's first write) */
        dec[0] = cfg->model == VLA_DELTAPRODUCT && (t - 1) % cfg->householder
                     ? 1
                     : vla_round_fmt(cf, exp(vla_round_fmt(io, in->lgs)));
    if (f == VREF_JAC_DIAG || f == VREF_JAC_DPLR) /* per key channel (lgs serves each) */
        for (int i = 0; i < d; i++)
            dec[i] = vla_round_fmt(cf, exp(vla_round_fmt(io, in->lg ? in->lg[i] : in->lgs)));
    if (f == VREF_JAC_DPLR)
        for (int i = 0; i < d; i++) {
            la[i] = vla_round_fmt(io, in->a ? in->a[i] : 0.0);
            lb[i] = vla_round_fmt(io, in->b ? in->b[i] : 0.0);
        }
}

static int jac_zero(const double *x, int d)
{
    for (int i = 0; i < d; i++)
        if (x[i] != 0)
            return 0;
    return 1;
}

/* J = Diag(dec) with nothing else: no delta term (kp or al zero) and no low-rank term */
static int jac_is_diag(const vref_jac_tr *tr)
{
    return (jac_zero(tr->kp, tr->d) || jac_zero(tr->al, tr->d)) &&
           (tr->form != VREF_JAC_DPLR || jac_zero(tr->la, tr->d) || jac_zero(tr->lb, tr->d));
}

/* max |dec_i|: NaN if any is NaN */
static double jac_max_abs(const double *x, int d)
{
    double m = 0;
    for (int i = 0; i < d; i++) {
        if (isnan(x[i]))
            return NAN;
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    }
    return m;
}

void vref_jac_explicit(const vref_jac_tr *tr, double *J)
{
    const int d = tr->d;
    for (int i = 0; i < d; i++) {
        double di = tr->form == VREF_JAC_PLAIN ? 1 : tr->form == VREF_JAC_SCALAR ? tr->dec[0] : tr->dec[i];
        for (int j = 0; j < d; j++) {
            double x = (i == j) - tr->kp[i] * tr->al[j];
            if (tr->form != VREF_JAC_PLAIN)
                x *= di;
            if (tr->form == VREF_JAC_DPLR)
                x += tr->la[i] * tr->lb[j];
            J[(size_t)i * d + j] = x;
        }
    }
}

double vref_jac_norm_tr(const vref_jac_tr *tr)
{
    const int d = tr->d;
    switch (tr->form) {
    case VREF_JAC_PLAIN:
        return vla_jac_norm(tr->kp, tr->al, d);
    case VREF_JAC_SCALAR: /* a (I - kp al^T): the decay times the 2 x 2 reduction */
        return fabs(tr->dec[0]) * vla_jac_norm(tr->kp, tr->al, d);
    default:
        break;
    }
    if (jac_is_diag(tr))
        return jac_max_abs(tr->dec, d);
    double *J = malloc(sizeof(double) * (size_t)d * d), n = NAN;
    if (!J)
        return NAN;
    vref_jac_explicit(tr, J);
    vref_norm2(J, d, d, &n); /* NaN or Inf in J: n is NaN or Inf */
    free(J);
    return n;
}

double vref_jac_radius_tr(const vref_jac_tr *tr)
{
    const int d = tr->d;
    if (tr->form == VREF_JAC_PLAIN || tr->form == VREF_JAC_SCALAR) {
        /* eigenvalues of I - kp al^T: 1 on the d - 1 directions orthogonal to al, and 1 - al.kp */
        double p = jac_dot(tr->al, tr->kp, d), r = d >= 2 ? fmax(1, fabs(1 - p)) : fabs(1 - p);
        return tr->form == VREF_JAC_PLAIN ? r : fabs(tr->dec[0]) * r;
    }
    if (jac_is_diag(tr))
        return jac_max_abs(tr->dec, d);
    double *J = malloc(sizeof(double) * (size_t)d * d), rho = NAN;
    if (!J)
        return NAN;
    vref_jac_explicit(tr, J);
    if (vref_spectral_radius(J, d, &rho))
        rho = NAN;
    free(J);
    return rho;
}

/* x <- x J / ||x J|| with the whole J (decays and low-rank term), from its factors in O(d):
 * (x J)_j = dec_j x_j - (sum_i x_i dec_i kp_i) al_j + (x.la) lb_j; a scalar decay enters the
 * sum of logs as log |dec| (no underflow of x itself) */
static void jac_lyap_tr(vref_jac *a, const vref_jac_tr *tr)
{
    const int d = tr->d;
    double *x = a->lx, y[VLA_D_MAX], s0 = 1, xk = 0, xa = 0;
    if (tr->form == VREF_JAC_SCALAR) {
        s0 = fabs(tr->dec[0]);
        for (int i = 0; i < d; i++)
            xk += x[i] * tr->kp[i];
        for (int j = 0; j < d; j++)
            y[j] = x[j] - xk * tr->al[j];
    } else {
        for (int i = 0; i < d; i++) {
            xk += x[i] * tr->dec[i] * tr->kp[i];
            if (tr->form == VREF_JAC_DPLR)
                xa += x[i] * tr->la[i];
        }
        for (int j = 0; j < d; j++)
            y[j] = tr->dec[j] * x[j] - xk * tr->al[j] + (tr->form == VREF_JAC_DPLR ? xa * tr->lb[j] : 0);
    }
    double ss = 0;
    for (int j = 0; j < d; j++)
        ss += y[j] * y[j];
    double n = (ss > 0x1p-900 && ss < 0x1p900) ? sqrt(ss) : vla_fro(y, d);
    a->lt++;
    if (n == 0 || s0 == 0) { /* the product annihilated x: -inf from here on */
        a->lsum = -INFINITY;
        return;
    }
    a->lsum += log(n) + log(s0);
    if (isfinite(n))
        for (int j = 0; j < d; j++)
            x[j] = y[j] / n;
}

double vref_jac_step_tr(vref_jac *a, const vref_jac_tr *tr)
{
    const int d = tr->d;
    size_t sz = sizeof(double) * (size_t)d;
    double norm;
    if (tr->form == VREF_JAC_PLAIN) {
        norm = vref_jac_step(a, tr->kp, tr->al, d, 0);
    } else {
        norm = vref_jac_norm_tr(tr);
        jac_min_c(a, tr->kp, tr->al, d);
        vref_jac_hist_add(&a->h, norm);
        jac_lyap_tr(a, tr);
        memcpy(a->tdec, tr->dec, tr->form == VREF_JAC_SCALAR ? sizeof(double) : sz);
        if (tr->form == VREF_JAC_DPLR) {
            memcpy(a->tla, tr->la, sz);
            memcpy(a->tlb, tr->lb, sz);
        }
    }
    a->tform = tr->form;
    a->td = d;
    memcpy(a->tkp, tr->kp, sz);
    memcpy(a->tal, tr->al, sz);
    return norm;
}

int vref_jac_row_tr(vref_jac *a, long t, double *row)
{
    const int d = a->td;
    const vref_jac_hist *h = &a->h;
    vref_jac_tr tr = {(vref_jac_form)a->tform, d, a->tkp, a->tal, a->tdec, a->tla, a->tlb};
    double *J = d ? malloc(sizeof(double) * (size_t)d * d) : NULL,
           *s = d ? malloc(sizeof(double) * (size_t)d) : NULL;
    if (d && (!J || !s)) {
        free(J);
        free(s);
        return VLA_ENOMEM;
    }
    int e = VLA_ERANGE;
    if (d) {
        vref_jac_explicit(&tr, J);
        e = vref_svd(J, d, d, s);
    }
    double closed = d ? vref_jac_norm_tr(&tr) : NAN;
    row[0] = (double)t;
    row[1] = h->nan ? NAN : h->n ? h->max : NAN;
    row[2] = vref_jac_hist_quantile(h, 0.50);
    row[3] = vref_jac_hist_quantile(h, 0.99);
    row[4] = d ? vref_jac_radius_tr(&tr) : NAN;
    row[5] = e ? NAN : s[0];
    row[6] = e ? NAN : fabs(closed - s[0]) / s[0];
    row[7] = a->lt > 0 ? a->lsum / (double)a->lt : NAN;
    row[8] = a->min_c;
    row[9] = NAN;
    row[10] = h->n ? (double)(h->near + h->zero + h->under) / (double)h->n : NAN;
    free(J);
    free(s);
    vref_jac_hist_reset(&a->h);
    a->min_c = NAN;
    a->unit_err = NAN;
    return e == VLA_ENOMEM ? e : VLA_OK;
}
