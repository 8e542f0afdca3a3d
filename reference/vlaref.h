/* vlaref.h: the references of SPEC section 6. MPFR models (exact at P bits, or emulating a
 * policy's formats bit for bit) behind the same vla_model interface as lib/, and LAPACKE
 * computations (exact inverses, eigenvalues, singular values, the rls closed form).
 * Used by tests and experiments, never by lib/. */
#ifndef VLAREF_H
#define VLAREF_H
#include "vlastab.h"

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
#endif
