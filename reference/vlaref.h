/* vlaref.h: the references of docs/math.md section 6. MPFR models (exact at P bits, or emulating a
 * policy's formats bit for bit) behind the same vla_model interface as lib/, and LAPACKE
 * computations (exact inverses, eigenvalues, singular values, the rls closed form).
 * Used by tests and experiments, never by lib/. */
#ifndef VLAREF_H
#define VLAREF_H
#include "vlastab.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    VREF_EXACT,   /* every operation at prec_bits, round to nearest; inputs rounded to cfg->prec's
                     io format first (vref_round_input: the storage format, but bfloat16 or
                     binary16 in the kern policies), then taken exactly; phi by MPFR's exp */
    VREF_EMULATE, /* every operation correctly rounded into cfg->prec's compute format, stores
                     into its storage format: precision, exponent range and subnormals */
    VREF_DD,      /* the exact reference in double-double (ref_model_dd.c; prec_bits unused):
                     vref_backward_new's alone, VREF_EXACT's answers to about 1e-30 relative */
} vref_kind;

#define VREF_DEFAULT_BITS 256

/* A model with MPFR arithmetic; drive it with vla_model_step/read/get/free. prec_bits is used by
 * VREF_EXACT only (MPFR_PREC_MIN.. 1 << 20). */
int vref_model_new(vla_model **out, const vla_config *cfg, vref_kind kind, long prec_bits);
/* Makes m's steps and reads give up, between two MPFR operations, when *stop becomes nonzero:
 * they return VLA_EINTR and the state is lost (step, read, get and save answer VLA_EINTR until a
 * vla_model_load), so that a step of minutes answers a signal at once. Not for the comp way's
 * emulation, whose steps are short. */
void vref_model_stop_on(vla_model *m, volatile sig_atomic_t *stop);

/* The exact reference in double-double arithmetic (reference/ref_model_dd.c): every
 * operation of recur.h, the input transforms included (phi, log, exp, exp2), in pairs of
 * binary64 numbers (about 106 bits); the same answers as VREF_EXACT to about 1e-30 relative
 * (docs/math.md 6.1.1), at about the speed of the comp way. cfg as for vref_model_new. */
int vref_dd_model_new(vla_model **out, const vla_config *cfg);
/* What a quantity holds below its binary64 rounding, per element (hi + lo is the number to
 * about 2^-106 relative; vla_model_get gives hi): for VREF_EXACT and dd models (else
 * VLA_EINVAL), so that the two can be compared far below binary64's resolution */
int vref_model_get_lo(const vla_model *m, vla_quantity q, double *lo);
int vref_dd_get_lo(const vla_model *m, vla_quantity q, double *lo); /* (the dd half of it) */
/* the engine's groups of dd models stepped in the CPU's vector lanes (lib/engine_impl.h's
 * vla_group_ops; its width is 1 where the lanes are not built or the processor lacks AVX-512) */
extern const struct vla_group_ops vref_dd_group;
/* the dd reference's elementary functions, for the tests: f 'e' (exp), '2' (exp2), 'l' (log),
 * 'c' (cos), 's' (sin), 'f' (floor) of the pair a into the pair r */
void vref_dd_fun(char f, const double a[2], double r[2]);
/* the same for eight pairs at once in the vector lanes (f 'e' or '2'): a[0..8) the high parts,
 * a[8..16) the low ones, r likewise; VLA_ENOTSUP where the lanes are not there */
int vref_dd_fun8(char f, const double a[16], double r[16]);

/* vla_grad (vlastab.h) in MPFR: exact at prec_bits (VREF_EXACT), or the emulation of cfg's
 * policy bit for bit (VREF_EMULATE): the same text as lib's, so the emulation's gradients are
 * lib's, bit for bit */
int vref_grad(const vla_config *cfg, vref_kind kind, long prec_bits, long T, vla_grad_input in,
              void *ctx, const double *c, const vla_grads *out);
/* vla_backward_new (vlastab.h) in MPFR likewise: the seq form's backward a block at a time, its
 * blocks bit for bit vref_grad's */
int vref_backward_new(vla_backward **out, const vla_config *cfg, vref_kind kind, long prec_bits,
                      long T, vla_grad_input in, void *ctx);
/* The same, given up between two MPFR operations (or two numbers of its arrays' allocation) when
 * *stop becomes nonzero, as vref_model_stop_on makes a model's steps: VLA_EINTR from it, or from
 * vla_backward_next then and ever after. At 65536 bits the arrays alone (600 MB at d = 32, T =
 * 1000) take seconds to make, and a block as long: a program stopped by a signal waits for
 * neither. stop NULL: vref_backward_new. */
int vref_backward_new_stop(vla_backward **out, const vla_config *cfg, vref_kind kind,
                           long prec_bits, long T, vla_grad_input in, void *ctx,
                           volatile sig_atomic_t *stop);
/* the double-double backward (kind VREF_DD: lib/recur_grad.h and recur_gradchunk.h over
 * ref_model_dd.c's pairs), given up between two blocks when *stop becomes nonzero */
int vref_dd_backward_new(vla_backward **out, const vla_config *cfg, long T, vla_grad_input in,
                         void *ctx, volatile sig_atomic_t *stop);
/* Each gradient an exact backward (VREF_EXACT, VREF_DD) hands out from now on also has what it
 * holds below its binary64 number written off numbers after it, in the same array (each of out's
 * arrays then lies in an allocation of at least off more numbers), so that the two are compared
 * below binary64's resolution; off 0: not. VLA_EINVAL for another backward. */
int vref_backward_lo(vla_backward *b, long off);
int vref_dd_backward_lo(vla_backward *b, long off); /* (the dd half of it) */
/* The double-double backward checked against MPFR's exact one at 256 bits on the same problem (in
 * and c's first T steps, cfg's form): both handed out to about 2^-106 (vref_backward_lo) and,
 * per gradient, max_i |dd_i - mpfr_i| / max_i |mpfr_i|; the largest over the gradients in *worst
 * (NaN where a number of either is not finite). A vla_err (VLA_EINTR on *stop). The
 * dd backward is trusted where *worst <= VREF_DD_TRUST; the programs check VREF_DD_GRAD_STEPS. */
int vref_dd_grad_check(const vla_config *cfg, long T, vla_grad_input in, void *ctx,
                       const double *c, double *worst, volatile sig_atomic_t *stop);

/* The MPFR models as engine backends (vla_engine_spec.backend): exact at spec.ref_bits (0: 256),
 * and the format emulation. */
const vla_backend *vref_backend_exact(void);
const vla_backend *vref_backend_emulate(void);

/* The double-double exact reference as an engine backend ("dd"), and its check on every run:
 * MPFR's exact reference (256 bits) beside the dd engine's run 0 for its first `steps` steps,
 * compared at the checkpoints the program calls vref_ddcheck_at with (S, o, n, A at double-double
 * resolution: vref_model_get_lo). A program trusts the dd reference when the largest relative
 * difference is at most VREF_DD_TRUST: 1e-24 is 1e-8 of binary64's unit roundoff, so that a
 * binary64 error printed to 3 digits cannot move; else it runs MPFR instead and says so in the
 * table's header (vref_ddcheck_describe). VREF_DD_CHECK_STEPS: the steps the programs check. */
#define VREF_DD_TRUST 1e-24
#define VREF_DD_CHECK_STEPS 4096
#define VREF_DD_GRAD_STEPS 256
const vla_backend *vref_backend_dd(void);
typedef struct vref_ddcheck vref_ddcheck;
/* the check of dd's run 0 for its first steps; the code and the reason in err (may be NULL) on
 * failure */
int vref_ddcheck_new(vref_ddcheck **out, const vla_engine_spec *dd, long steps, vla_error *err);
/* at a checkpoint t (dd's run 0 at t): MPFR to t and the comparison, when t <= steps */
int vref_ddcheck_at(vref_ddcheck *c, vla_engine *dd, long t);
/* MPFR to t without a comparison. A dd engine on prepared inputs in a ring (cycle: vla_inputs_open's
 * windows) shares them with the check, which must then follow every refill: vref_ddcheck_at and
 * this refuse (VLA_ERANGE) a step a whole ring behind, whose inputs were overwritten. */
int vref_ddcheck_follow(vref_ddcheck *c, long t);
int vref_ddcheck_ok(const vref_ddcheck *c); /* compared at least once, within VREF_DD_TRUST */
double vref_ddcheck_worst(const vref_ddcheck *c); /* the largest relative difference seen */
long vref_ddcheck_compared(const vref_ddcheck *c); /* ... over this many checkpoints */
/* The check's state at a checkpoint t of the program, to go on from after a stop (vla-forms'
 * sweep): the comparisons so far and MPFR's run at min(t, steps), vla_engine_save's format. load
 * refuses (VLA_EFORMAT) a state that is not this check's at t; a program on a ring of inputs
 * refills the ring from t, which the check then follows. save_max: the most bytes save writes. */
int vref_ddcheck_save(vref_ddcheck *c, FILE *f);
int vref_ddcheck_load(vref_ddcheck *c, FILE *f, long t);
long vref_ddcheck_save_max(const vref_ddcheck *c);
/* the reference in words, for a table's header: dd and its check, or MPFR and why */
void vref_ddcheck_describe(const vref_ddcheck *c, char *buf, size_t len);
void vref_ddcheck_free(vref_ddcheck *c);

/* MPFR's emulation parameters of a format: precision and emin/emax in MPFR's convention */
void vref_fmt_params(vla_fmt f, long *prec, long *emin, long *emax);

/* One correctly rounded operation in format f, computed by MPFR with the format's exponent range
 * and subnormals: op is one of '+', '-', '*', '/', 's' (sqrt of a), 'c' (convert a). The
 * emulation's unit: tests compare it against hardware binary32/binary64 and lib/'s roundings. */
double vref_round_op(vla_fmt f, char op, double a, double b);

/* ---- LAPACKE references (reference/lapack.c). Matrices row-major. ---- */

/* M = lambda0 I + sum u u^T (= A_t^-1 when A_0 = I / lambda0), accumulated in double-double (each
 * entry a compensated hi + lo pair, error-free TwoSum/TwoProd), so that the explicit M is not the
 * weak link of a reference. init: d in 1..VLA_D_MAX, lambda0 finite and >= 0. */
typedef struct {
    int d;
    double *hi, *lo;
} vref_gram;
int vref_gram_init(vref_gram *g, int d, double lambda0);
void vref_gram_add(vref_gram *g, const double *u);
void vref_gram_get(const vref_gram *g, double *M); /* rounded to binary64 */
void vref_gram_free(vref_gram *g);

/* ---- the drift measures of A_t (reference/drift.c; bin/vla-drift's table, docs/math.md 7) ---- */
#define VREF_DRIFT_COLUMNS                                                                         \
    "t a_drift a_resid a_lapack sym_defect lambda_min cond guard clamp nudge s_relerr o_relerr "     \
    "a_moved a_moved_diag x_err m_lmin resid iters fails"
#define VREF_DRIFT_NCOL 19
/* A run's M_t = lambda0 I + sum u' u'^T in double-double, and the a_moved window. Plain data (no
 * pointers) so that a checkpoint saves it as it is: the Gram's hi and lo arrays (the upper
 * triangle used, as vref_gram keeps them) follow the header; vref_drift_size(d) bytes in all. */
typedef struct {
    int d;
    int gram_done; /* a nudge or clamp has fired: M_t is no Gram any more, and is not kept */
    long writes;   /* u' u'^T terms added */
    long moved;    /* entries of A that changed, summed over the steps of this window */
    long moved_diag; /* ... of them on the diagonal */
    long steps;    /* ... and those steps */
    double hilo[]; /* hi[d * d], then lo[d * d] */
} vref_drift;
size_t vref_drift_size(int d);
int vref_drift_init(vref_drift *a, const vla_config *cfg);
/* the u' of a write with raw inputs k, u into M_t: rls u' = k, vla1 u / sqrt(d), vla3 unit(u) /
 * sqrt(d), each from the input rounded to cfg's storage format, then in binary64 */
void vref_drift_add(vref_drift *a, const vla_config *cfg, const double *k, const double *u);
/* A step as an engine's on_step shows it: a write's u' into M_t, and the entries of A it changed
 * (a_moved, where the backend counts them); a read writes nothing */
void vref_drift_step(vref_drift *a, const vla_config *cfg, const vla_step_view *v);
/* ... as an engine's on_step itself, ctx a vref_drift_tap (a program that measures nothing else
 * per step) */
typedef struct {
    vref_drift *acc;
    const vla_config *cfg;
} vref_drift_tap;
int vref_drift_on_step(void *ctx, const vla_step_view *v);
/* M_t rounded to binary64 (d x d) */
void vref_drift_gram(const vref_drift *a, double *M);
/* The checkpoint's row (VREF_DRIFT_COLUMNS) of run `run` of m against the same run of ref (NULL:
 * the columns that need it are nan); then a_moved's window starts over. Only VLA_ENOMEM fails: a
 * matrix LAPACK cannot digest gives nan entries. */
int vref_drift_measure(vla_engine *m, vla_engine *ref, int run, vref_drift *acc, long t,
                       double *row);
/* Whether a, read back from a checkpoint of a run of cfg at step t, can be such an accumulator
 * (its d, flags and counts in range); VLA_EFORMAT when not */
int vref_drift_check(const vref_drift *a, const vla_config *cfg, long t);

/* ---- the Jacobian measures (reference/jacobian.c; bin/vla-jacobian's table, docs/math.md 7.5)
 * ---- */
#define VREF_JAC_COLUMNS                                                                           \
    "t jac_max jac_p50 jac_p99 jac_radius jac_svd jac_svd_err lyap jac_min_c jac_unit_err jac_one"
#define VREF_JAC_NCOL 11
/* The window's percentiles come from a histogram of x = ||J||_2 - 1, because the accumulator must
 * be plain data that a checkpoint saves as it is (no sample list growing with the window). Bins
 * are log-spaced, VREF_JAC_BPO per octave over [2^VREF_JAC_EMIN, 2^VREF_JAC_EMAX), and a bin reports its
 * geometric midpoint: off by at most 2^(1/(2 VREF_JAC_BPO)) - 1 = 8.5e-5 relative in x, so by less
 * than that relative in ||J|| = 1 + x. x below 2^-40 cannot matter beside 1 at that tolerance.
 * Norms below 1 (the gated family's decayed J; d = 1) have bins of their own, as many per octave:
 * ||J|| itself over [2^-40, 1/2) and 1 - ||J|| over [2^-40, 1/2] (VREF_JAC_LOCT octaves each), so
 * that they too are within 8.5e-5 relative; below 2^-40 they count as tiny, within 2^-40 of 1 as
 * near (1). */
#define VREF_JAC_EMIN (-40)
#define VREF_JAC_EMAX 64
#define VREF_JAC_BPO 4096
#define VREF_JAC_NBIN ((VREF_JAC_EMAX - VREF_JAC_EMIN) * VREF_JAC_BPO)
#define VREF_JAC_LOCT 39
#define VREF_JAC_NLBIN (2 * VREF_JAC_LOCT * VREF_JAC_BPO)

typedef struct {
    long n;                        /* finite or infinite samples (NaN excluded) */
    long nan, tiny, near, zero, under, over; /* tiny: < 2^-40; near: in (1 - 2^-40, 1) */
    int lo, hi;                    /* occupied bins, so that a reset or a scan skips the rest */
    int llo, lhi;                  /* ... of lbin */
    double min, max;
    uint32_t bin[VREF_JAC_NBIN];        /* a window is at most 0.9 T <= 9e8 < 2^32 steps */
    uint32_t lbin[VREF_JAC_NLBIN];      /* below 1: ||J|| in [2^-40, 1/2), then 1 - ||J|| in
                                           [2^-40, 1/2] from the top down (ascending ||J||) */
} vref_jac_hist;

/* The transition J_t as the measures take it (docs/math.md 2.6 and 7.5):
 *     J = Diag(dec) (I - kp al^T) + la lb^T
 *   PLAIN   the seeds' models: J = I - kp al^T (dec, la, lb unread)
 *   SCALAR  gdn, mamba2: dec[0] (I - kp al^T), a scalar decay (mamba2: kp = 0)
 *   DIAG    kda, gla: one decay per key channel, row i of I - kp al^T scaled by dec[i] (gla:
 *           kp = 0)
 *   DPLR    rwkv7: Diag(dec) (I - kp al^T) + la lb^T with kp = 0, so Diag(w) + a b^T
 * kp and al are the model's k' and alpha (VLA_Q_KP, VLA_Q_ALPHA), d entries each. */
typedef enum { VREF_JAC_PLAIN, VREF_JAC_SCALAR, VREF_JAC_DIAG, VREF_JAC_DPLR } vref_jac_form;
typedef struct {
    vref_jac_form form;
    int d;
    const double *kp, *al, *dec, *la, *lb;
} vref_jac_tr;

/* A run's accumulator: the window's histogram and extremes, and the Lyapunov tracker's state
 * (held here rather than in a vla_lyap, whose vector is a pointer a checkpoint cannot save), and
 * the last write's transition (the _tr functions: the checkpoint's J) */
typedef struct {
    double min_c;     /* min over the window of cos(alpha, k') */
    double unit_err;  /* max over the window of |unit formula - general| / general */
    double lx[VLA_D_MAX];
    double lsum;
    long lt;
    int tform, td;    /* the last transition's form and d (td = 0: none yet) */
    double tkp[VLA_D_MAX], tal[VLA_D_MAX], tdec[VLA_D_MAX], tla[VLA_D_MAX], tlb[VLA_D_MAX];
    vref_jac_hist h;
} vref_jac;

/* the window starts empty; the Lyapunov vector from seed */
int vref_jac_init(vref_jac *a, int d, uint64_t seed);
void vref_jac_hist_reset(vref_jac_hist *h);
void vref_jac_hist_add(vref_jac_hist *h, double norm);
/* nearest rank over the histogram: the smallest value with at least ceil(p n) samples at or below */
double vref_jac_hist_quantile(const vref_jac_hist *h, double p);
/* One step's J = I - kp al^T into the window; unit: kp and al are unit by construction (the closed
 * form's disagreement with the general one is recorded). Returns ||J||_2. */
double vref_jac_step(vref_jac *a, const double *kp, const double *al, int d, int unit);
/* the checkpoint's row (VREF_JAC_COLUMNS) from the window and this step's kp, al; the window then
 * starts over. Only VLA_ENOMEM fails: a J that dgesvd cannot take gives nan entries. */
int vref_jac_row(vref_jac *a, const double *kp, const double *al, int d, long t, int unit,
                 double *row);
/* whether the model's k' and alpha are unit by construction (VLA_MODELS' unit column), d >= 2 */
int vref_jac_is_unit(const vla_config *cfg, double step_beta);

/* The form of cfg's model's J (VLA_MODELS' gate and lr columns): PLAIN for the seeds' models
 * (delta's decay and row gates stay outside J, docs/math.md 7.5) */
vref_jac_form vref_jac_form_of(const vla_config *cfg);
/* The decays and low-rank vectors of one step's inputs as cfg's model takes them in the native
 * arithmetic (lib/recur_state.h's load and EXP): dec = exp(g) of the log-decay rounded to the io
 * format, the exp in binary64 rounded once to the compute format (dec[0] for a scalar gate; one
 * per key channel, lgs serving every channel when the input has no lg); rwkv7's a and b rounded
 * to the io format (la, lb; absent: 0). Each array d entries (dec: 1 for a scalar gate); NULL
 * where the form has none. t: the write's number, from 1 (deltaproduct's gate acts at the first
 * of each token's householder writes, dec = 1 at the others). */
void vref_jac_gates(const vla_config *cfg, const vla_input *in, long t, double *dec, double *la,
                    double *lb);
/* The explicit d x d J of tr (row-major) */
void vref_jac_explicit(const vref_jac_tr *tr, double *J);
/* ||J||_2 of tr: the closed form where there is one (PLAIN: the 2 x 2 reduction; SCALAR: |dec|
 * times it; DIAG, DPLR with kp or al zero and la or lb zero: max |dec_i|), else the explicit J
 * by vref_norm2 (O(d^3)). NaN for NaN, Inf for Inf in J. */
double vref_jac_norm_tr(const vref_jac_tr *tr);
/* The spectral radius of tr's J: closed forms where ||J|| has one (PLAIN: max(1, |1 - al.kp|) for
 * d >= 2, |1 - al.kp| for d = 1; SCALAR: |dec| times that; diagonal: max |dec_i|), else dgeev's.
 * NaN where J holds Inf or NaN. */
double vref_jac_radius_tr(const vref_jac_tr *tr);
/* One step's J of any form into the window (the norm, cos(al, kp), the Lyapunov vector with the
 * whole J applied); tr is kept as the last transition. PLAIN is vref_jac_step with unit 0.
 * Returns ||J||_2. */
double vref_jac_step_tr(vref_jac *a, const vref_jac_tr *tr);
/* The checkpoint's row from the window and the last transition kept by vref_jac_step_tr (no
 * write yet: nan in its columns); jac_unit_err is nan; the window then starts over. Only
 * VLA_ENOMEM fails. */
int vref_jac_row_tr(vref_jac *a, long t, double *row);
/* Whether a, read back from a checkpoint at step t, can be such an accumulator (the histogram's
 * occupied range and counts agree, no count exceeds t); VLA_EFORMAT when not */
int vref_jac_check(const vref_jac *a, long t);

/* the inverse of a symmetric positive definite M by dpotrf + dpotri, both triangles filled;
 * VLA_ERANGE when M is not positive definite */
int vref_spd_inverse(const double *M, int d, double *Ainv);
/* the eigenvalues (ascending) of the symmetric part (A + A^T) / 2, by dsyevr */
int vref_sym_eig(const double *A, int d, double *lambda);
/* the singular values (descending, min(m, n) of them) of the m x n matrix X, by dgesvd */
int vref_svd(const double *X, int m, int n, double *s);
/* vref_svd's scratch, kept across calls on one thread ({0}: none yet): X in column-major order
 * and dgesvd's workspace, with the shape its size was queried for */
typedef struct {
    double *a, *work;
    long lwork;
    int m, n;
} vref_svd_ws;
/* vref_svd with the scratch of w (the same bits): many calls of one shape allocate once and query
 * dgesvd's workspace once; vref_svd_free releases w */
int vref_svd_in(vref_svd_ws *w, const double *X, int m, int n, double *s);
void vref_svd_free(vref_svd_ws *w);
/* the largest singular value of the m x n X by the largest eigenvalue of its Gram matrix X^T X
 * (dsyevr; X scaled by a power of two first): an independent route beside dgesvd's, of about its
 * cost (d x d: 0.06 ms at d = 32, 0.44 ms at 64, 5 ms at 128). Inf or NaN in X: *out Inf or NaN
 * and VLA_ENONFINITE */
int vref_norm2(const double *X, int m, int n, double *out);
/* the spectral radius of the n x n X (the largest |eigenvalue|, by dgeev) */
int vref_spectral_radius(const double *X, int n, double *rho);
/* the rls closed form S = V^T K (K^T K + lambda0 I)^-1 for t rows k_s of K (t x d) and v_s of V
 * (t x dv): S is dv x d. Solved with the Cholesky factor of the d x d Gram matrix (dposv), the
 * Gram matrix accumulated as in vref_gram. */
int vref_rls_closed(const double *K, const double *V, int t, int d, int dv, double lambda0,
                    double *S);
#ifdef __cplusplus
}
#endif
#endif
