/* vlalists.h: the lists of formats, precision policies, models and ways of tracking A, each
 * written once as an X-macro. The enums, names, parsing, format properties and every dispatch
 * table of lib/, reference/ and kernels/ are generated from these rows (docs/adding.md shows how
 * to add one). Included by vlastab.h; installed beside it. */
#ifndef VLALISTS_H
#define VLALISTS_H

/* Storage and compute formats (SPEC section 5): X(ID, tok, p, emin, emax, T)
 *   ID    the enum constant VLA_FMT_<ID>      tok   the name (and the suffix of its functions)
 *   p     significand bits, the implicit one included (unit roundoff 2^-p)
 *   emin  the exponent of the smallest normal  emax  the exponent of the largest finite number
 *   T     the C type that holds its numbers exactly (vla_num_<ID>) */
#define VLA_FORMATS(X)                                                                             \
    X(F64, f64, 53, -1022, 1023, double)                                                           \
    X(F32, f32, 24, -126, 127, float)                                                              \
    X(F16, f16, 11, -14, 15, float)                                                                \
    X(BF16, bf16, 8, -126, 127, float)

/* Precision policies: X(ID, name, sfx, storage, compute, mixed)
 *   ID       the enum constant VLA_<ID>        name  its one spelling, for users and files
 *   sfx      the suffix of its instantiations (create_<sfx>, vla_score_<sfx>, kern_<sfx>, ...)
 *   storage, compute  IDs of VLA_FORMATS: what state is stored in, what operations round to
 *   mixed    1 when storage is narrower than compute (the sr way applies; comp does not) */
#define VLA_PRECS(X)                                                                               \
    X(F64, "f64", f64, F64, F64, 0)                                                                \
    X(F32, "f32", f32, F32, F32, 0)                                                                \
    X(F16, "f16", f16, F16, F16, 0)                                                                \
    X(BF16, "bf16", bf16, BF16, BF16, 0)                                                           \
    X(F16_F32, "f16-f32", f16f32, F16, F32, 1)                                                     \
    X(BF16_F32, "bf16-f32", bf16f32, BF16, F32, 1)

/* Models (SPEC section 2): X(ID, tok, has_A, normalize)
 *   ID         the enum constant VLA_<ID>     tok  the name; recur.h's step_<tok>, read_<tok>
 *   has_A      1: the model tracks A (then recur.h's uprime_<tok> gives its u')
 *   normalize  the default of the read-out's normalization o = S x / (n . x) */
#define VLA_MODELS(X)                                                                              \
    X(LA, la, 0, 1)                                                                                \
    X(DELTA, delta, 0, 0)                                                                          \
    X(RLS, rls, 1, 0)                                                                              \
    X(VLA1, vla1, 1, 0)                                                                            \
    X(VLA3, vla3, 1, 1)

/* Ways of tracking A (SPEC section 4; docs/math.md 4.7-4.9 for the ways that keep M):
 * X(ID, name, update, apply, holds)
 *   ID      the enum constant VLA_TRACK_<ID>   name  its one spelling
 *   update  recur.h's rank-1 change of M = A^-1: update_<update> (comp and sr are sm's update
 *           in an arithmetic of their own: double words, stochastic rounding; M: M itself)
 *   apply   recur.h's y = A x: apply_<apply> (sym: A is exactly symmetric, read down the
 *           columns; gen: by rows; chol: two triangular solves with the factor of M; solve,
 *           cg, cheb: M y = x solved at every step, by a Cholesky factorization, conjugate
 *           gradients or Chebyshev iteration)
 *   holds   what the state's d x d array holds (VLA_HOLDS_<holds>): A itself, the Cholesky
 *           factor L of M, or M (its upper triangle) */
#define VLA_TRACKS(X)                                                                              \
    X(SM, "sm", sm, sym, A)                                                                        \
    X(SMSYM, "sm-sym", smsym, sym, A)                                                              \
    X(JOSEPH, "joseph", joseph, gen, A)                                                            \
    X(CHOL, "chol", chol, chol, L)                                                                 \
    X(COMP, "comp", sm, gen, A)                                                                    \
    X(SR, "sr", sm, gen, A)                                                                        \
    X(SOLVE, "solve", M, solve, M)                                                                 \
    X(CG, "cg", M, cg, M)                                                                          \
    X(CHEB, "cheb", M, cheb, M)

#endif
