/* vlalists.h: the lists of formats, precision policies, models and ways of tracking A, each
 * written once as an X-macro. The enums, names, parsing, format properties and every dispatch
 * table of lib/, reference/ and kernels/ are generated from these rows (docs/adding.md shows how
 * to add one). Included by vlastab.h; installed beside it. */
#ifndef VLALISTS_H
#define VLALISTS_H

/* Storage and compute formats (docs/math.md section 5): X(ID, tok, p, emin, emax, T)
 *   ID    the enum constant VLA_FMT_<ID>      tok   the name (and the suffix of its functions)
 *   p     significand bits, the implicit one included (unit roundoff 2^-p)
 *   emin  the exponent of the smallest normal  emax  the exponent of the largest finite number
 *   T     the C type that holds its numbers exactly (vla_num_<ID>) */
#define VLA_FORMATS(X)                                                                             \
    X(F64, f64, 53, -1022, 1023, double)                                                           \
    X(F32, f32, 24, -126, 127, float)                                                              \
    X(F16, f16, 11, -14, 15, float)                                                                \
    X(BF16, bf16, 8, -126, 127, float)

/* Precision policies: X(ID, name, sfx, storage, compute, io, mixed, kern)
 *   ID       the enum constant VLA_<ID>        name  its one spelling, for users and files
 *   sfx      the suffix of its instantiations (create_<sfx>, vla_score_<sfx>, kern_<sfx>, ...)
 *   storage, compute, io  IDs of VLA_FORMATS: what the state is stored in, what operations
 *            round to, what the inputs and the chunk forms' intermediates (the C x C matrices,
 *            W, U) are rounded to
 *   mixed    1 when storage is narrower than compute (the sr way applies; comp does not)
 *   kern     1 when io is narrower than storage: the fast chunked kernels' policy (16-bit
 *            inputs and intermediates, binary32 accumulation and state), which neither comp nor
 *            sr fits */
#define VLA_PRECS(X)                                                                               \
    X(F64, "f64", f64, F64, F64, F64, 0, 0)                                                        \
    X(F32, "f32", f32, F32, F32, F32, 0, 0)                                                        \
    X(F16, "f16", f16, F16, F16, F16, 0, 0)                                                        \
    X(BF16, "bf16", bf16, BF16, BF16, BF16, 0, 0)                                                  \
    X(F16_F32, "f16-f32", f16f32, F16, F32, F16, 1, 0)                                             \
    X(BF16_F32, "bf16-f32", bf16f32, BF16, F32, BF16, 1, 0)                                        \
    X(F16_KERN, "f16-kern", f16kern, F32, F32, F16, 0, 1)                                          \
    X(BF16_KERN, "bf16-kern", bf16kern, F32, F32, BF16, 0, 1)

/* Models (docs/math.md section 2; the gated family: docs/gated.md), one file each
 * (lib/models/<tok>.h, docs/adding.md):
 * X(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, reads,
 *   uprime, devices, gradchunk, unit)
 *   ID         the enum constant VLA_<ID>     tok  the name; its file's step_<tok>, read_<tok>, ...
 *   has_A      1: the model tracks A (then its file has uprime_<tok>, the u' of M += u' u'^T)
 *   normalize  the default of the read-out's normalization o = S x / (n . x)
 *   affine     1: S_t = S_{t-1} J_t + B_t with a J_t that is not I (the scan form carries J)
 *   acc_n      1: the model keeps the normalizer n = sum phi(k), which the forms carry too
 *   decay      1 where a scalar decay a_t multiplies J_t (an expression in c, the configuration)
 *   gate       the log-decays the model takes as the kernels take them: 0 none, 1 a scalar per
 *              token (a_t = exp(g_t) in J_t), 2 one per key channel (J_t = Diag(a_t) ...)
 *   lr         1: J_t has a low-rank term a_t b_t^T of the step's inputs (rwkv7)
 *   feat       the default feature map: OWN (phi) or ID (none, the gated family)
 *   phi        the inputs the feature map takes when features=own (VLA_PHI_* bits; delta's write
 *              takes the raw k, rls and vla1 both raw): what dq and dk are the gradients of
 *   qknorm     the default of q and k L2-normalized in the model (gdn, kda)
 *   scale      the default read-out scale d^scale (fla: d^-1/2; the seeds' models: none)
 *   reads      the trace's optional files the model reads (VLA_IN_* bits): an expression in c
 *   uprime     u' in words, for the headers of the programs that measure A ("" without A)
 *   devices    the model's own safety devices (VLA_DEV_* bits), which the refusals read: CLIP, its
 *              error is clipped by its norm (clip: S is no affine recurrence, so no scan form);
 *              CLAMP, clamp_on clamps ||S|| and ||A|| after every step (in no chunk, nor with chol,
 *              solve, cg, cheb); FLOOR, its guard floors the denominator at stab_eps, which fits a
 *              chunk (the other models' guard skips the update and adds eps_g I to A)
 *   gradchunk  1: the chunk form has its backward (lib/recur_gradchunk.h); 0: --form seq only
 *   unit       its k' and alpha are unit vectors by construction, so that the Jacobian I - k' alpha^T
 *              has the closed form of docs/math.md section 7 (vla-jacobian's jac_unit_err): 1
 *              always, 2 where the step's beta is 1 (alpha = beta k'), 0 never; an expression in
 *              c (delta's k' is unit(k) only with keynorm) */
#define VLA_MODELS(X)                                                                              \
    X(LA, la, 0, 1, 0, 1, 0, 0, 0, OWN, VLA_PHI_Q | VLA_PHI_K, 0, 0, 0, "", 0, 0, 0)               \
    X(DELTA, delta, 0, 0, 1, 0, (c)->delta_form == VLA_DELTA_DECAY, 0, 0, OWN, VLA_PHI_Q, 0, 0,    \
      VLA_IN_BETA | ((c)->delta_form == VLA_DELTA_DECAY ? VLA_IN_DECAY : VLA_IN_G), "", 0, 1,      \
      (c)->keynorm ? 2 : 0)                                                                        \
    X(RLS, rls, 1, 0, 1, 0, 0, 0, 0, OWN, 0, 0, 0, 0, "k", 0, 0, 0)                                \
    X(VLA1, vla1, 1, 0, 1, 0, 0, 0, 0, OWN, 0, 0, 0, VLA_IN_U, "u / sqrt(d)",                      \
      VLA_DEV_CLIP | VLA_DEV_CLAMP, 0, 0)                                                          \
    X(VLA3, vla3, 1, 1, 1, 1, 0, 0, 0, OWN, VLA_PHI_Q | VLA_PHI_K, 0, 0, VLA_IN_U,                 \
      "unit(u) / sqrt(d)", VLA_DEV_FLOOR, 0, 1)                                                    \
    X(GDN, gdn, 0, 0, 1, 0, 1, 1, 0, ID, VLA_PHI_Q | VLA_PHI_K, 1, -0.5,                           \
      VLA_IN_BETA | VLA_IN_LOGDECAY, "", 0, 1, 0)                                                  \
    X(KDA, kda, 0, 0, 1, 0, 0, 2, 0, ID, VLA_PHI_Q | VLA_PHI_K, 1, -0.5,                           \
      VLA_IN_BETA | VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D, "", 0, 1, 0)                              \
    X(GLA, gla, 0, 0, 1, 0, 0, 2, 0, ID, VLA_PHI_Q | VLA_PHI_K, 0, -0.5,                           \
      VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D, "", 0, 1, 0)                                            \
    X(MAMBA2, mamba2, 0, 0, 1, 0, 1, 1, 0, ID, VLA_PHI_Q | VLA_PHI_K, 0, 0, VLA_IN_LOGDECAY, "", 0,\
      1, 0)                                                                                        \
    X(RWKV7, rwkv7, 0, 0, 1, 0, 0, 2, 1, ID, VLA_PHI_Q | VLA_PHI_K, 0, 0,                          \
      VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D | VLA_IN_A | VLA_IN_B, "", 0, 0, 0)                      \
    X(DELTAPRODUCT, deltaproduct, 0, 0, 1, 0, 1, 1, 0, ID, VLA_PHI_Q | VLA_PHI_K, 1, -0.5,         \
      VLA_IN_BETA | VLA_IN_LOGDECAY, "", 0, 1, 0)                                                  \
    X(LOGLINEAR, loglinear, 0, 0, 1, 0, 1, 1, 0, ID, VLA_PHI_Q | VLA_PHI_K, 0, 0,                  \
      VLA_IN_LOGDECAY | VLA_IN_U, "", 0, 1, 0)                                                     \
    X(MAMBA3, mamba3, 0, 0, 1, 0, 1, 1, 0, ID, VLA_PHI_Q | VLA_PHI_K, 0, 0,                        \
      VLA_IN_LOGDECAY | VLA_IN_BETA | VLA_IN_DECAY | VLA_IN_U, "", 0, 1, 0)

/* Ways of tracking A (docs/math.md section 4; docs/math.md 4.7-4.9 for the ways that keep M):
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

/* Forms of the recurrences (docs/forms.md): X(ID, tok)
 *   seq    token by token, the textbook order (the default)
 *   chunk  chunk:C, C a power of two in 1..VLA_CHUNK_MAX: a chunk's C tokens computed at once at
 *          its last token from its first state (the masked C x C scores, the UT transform, the
 *          blocked Woodbury update of A), as the fast kernels do; the state exists at chunk ends
 *   scan   the linear part of S (and la's n) as an associative scan in Blelloch's tree order */
#define VLA_FORMS(X)                                                                               \
    X(SEQ, seq)                                                                                    \
    X(CHUNK, chunk)                                                                                \
    X(SCAN, scan)

#endif
