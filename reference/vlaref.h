/* vlaref.h: the references of SPEC section 6. MPFR models (exact at P bits, or emulating a
 * policy's formats bit for bit) behind the same vla_model interface as lib/, and LAPACKE
 * computations (exact inverses, eigenvalues, singular values, the rls closed form).
 * Used by tests and experiments, never by lib/. */
#ifndef VLAREF_H
#define VLAREF_H
#include "vlastab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    VREF_EXACT,   /* every operation at prec_bits, round to nearest; inputs rounded to the storage
                     format first, then taken exactly; phi by MPFR's exp */
    VREF_EMULATE, /* every operation correctly rounded into cfg->prec's compute format, stores
                     into its storage format: precision, exponent range and subnormals */
} vref_kind;

#define VREF_DEFAULT_BITS 256

/* A model with MPFR arithmetic; drive it with vla_model_step/read/get/free. prec_bits is used by
 * VREF_EXACT only (MPFR_PREC_MIN.. 1 << 20). */
int vref_model_new(vla_model **out, const vla_config *cfg, vref_kind kind, long prec_bits);

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

/* the inverse of a symmetric positive definite M by dpotrf + dpotri, both triangles filled;
 * VLA_ERANGE when M is not positive definite */
int vref_spd_inverse(const double *M, int d, double *Ainv);
/* the eigenvalues (ascending) of the symmetric part (A + A^T) / 2, by dsyevr */
int vref_sym_eig(const double *A, int d, double *lambda);
/* the singular values (descending, min(m, n) of them) of the m x n matrix X, by dgesvd */
int vref_svd(const double *X, int m, int n, double *s);
/* the rls closed form S = V^T K (K^T K + lambda0 I)^-1 for t rows k_s of K (t x d) and v_s of V
 * (t x dv): S is dv x d. Solved with the Cholesky factor of the d x d Gram matrix (dposv), the
 * Gram matrix accumulated as in vref_gram. */
int vref_rls_closed(const double *K, const double *V, int t, int d, int dv, double lambda0,
                    double *S);
#ifdef __cplusplus
}
#endif
#endif
