/* tables.h: what the instantiations of recur.h derive from the lists (vlalists.h), as constants
 * the compiler folds, and the one list of a run's state arrays. Internal to lib/, reference/
 * and kernels/ (C and CUDA); not installed. */
#ifndef VLA_TABLES_H
#define VLA_TABLES_H
#include "vlastab.h"

#ifdef __CUDACC__
#define VLA_HD __host__ __device__
#else
#define VLA_HD
#endif

#define VLA_CAT_(a, b) a##_##b
#define VLA_CAT(a, b) VLA_CAT_(a, b)
#define VLA_JOIN_(a, b) a##b
#define VLA_JOIN(a, b) VLA_JOIN_(a, b)
/* VLA_IF(flag, ...): the tokens when flag (a 0/1 column of a list) is 1, nothing when 0;
 * VLA_IFNOT the other way round */
#define VLA_IF(flag, ...) VLA_CAT(VLA_IF, flag)(__VA_ARGS__)
#define VLA_IF_1(...) __VA_ARGS__
#define VLA_IF_0(...)
#define VLA_IFNOT(flag, ...) VLA_CAT(VLA_IFNOT, flag)(__VA_ARGS__)
#define VLA_IFNOT_1(...)
#define VLA_IFNOT_0(...) __VA_ARGS__
#define VLA_MAX(a, b) ((a) > (b) ? (a) : (b))

/* An instantiation names its policy by the row's suffix (POL, e.g. f16f32); these give the
 * row's enum constant, formats and C container: VLA_PREC_OF(POL), VLA_FMTS_OF(POL),
 * VLA_FMTC_OF(POL), VLA_NUM_OF(POL). */
#define VLA_X_(ID, name, sfx, S, C, mixed)                                                        \
    VLA_PREC_##sfx = VLA_##ID, VLA_FMTS_##sfx = VLA_FMT_##S, VLA_FMTC_##sfx = VLA_FMT_##C,
enum { VLA_PRECS(VLA_X_) };
#undef VLA_X_
#define VLA_X_(ID, name, sfx, S, C, mixed) typedef vla_num_##C vla_num_of_##sfx;
VLA_PRECS(VLA_X_)
#undef VLA_X_
#define VLA_PREC_OF(pol) ((vla_prec)VLA_CAT(VLA_PREC, pol))
#define VLA_FMTS_OF(pol) ((vla_fmt)VLA_CAT(VLA_FMTS, pol))
#define VLA_FMTC_OF(pol) ((vla_fmt)VLA_CAT(VLA_FMTC, pol))
#define VLA_NUM_OF(pol) VLA_CAT(vla_num_of, pol)
/* the bytes of one number of policy p in its container */
static inline VLA_HD unsigned vla_prec_num_size(vla_prec p)
{
    switch (p) {
#define VLA_X_(ID, name, sfx, ...)                                                                 \
    case VLA_##ID:                                                                                 \
        return sizeof(vla_num_of_##sfx);
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default:
        return 0; /* no policy: every vla_prec is a row */
    }
}
/* the mixed column says what the formats say */
#define VLA_X_(ID, name, sfx, S, C, mixed)                                                        \
    typedef char vla_mixed_check_##sfx[(VLA_FMT_##S != VLA_FMT_##C) == (mixed) ? 1 : -1];
VLA_PRECS(VLA_X_)
#undef VLA_X_

/* 2^e for an integer constant |e| <= 1023 as a constant expression (the product of the powers
 * of two of e's bits: exact), so that a format's smallest normal folds on the host and the GPU */
#define VLA_P2U_(e)                                                                                \
    (((e)&1 ? 0x1p1 : 1.0) * ((e)&2 ? 0x1p2 : 1.0) * ((e)&4 ? 0x1p4 : 1.0) *                      \
     ((e)&8 ? 0x1p8 : 1.0) * ((e)&16 ? 0x1p16 : 1.0) * ((e)&32 ? 0x1p32 : 1.0) *                  \
     ((e)&64 ? 0x1p64 : 1.0) * ((e)&128 ? 0x1p128 : 1.0) * ((e)&256 ? 0x1p256 : 1.0) *            \
     ((e)&512 ? 0x1p512 : 1.0))
#define VLA_EXP2(e) ((e) < 0 ? 1.0 / VLA_P2U_(-(e)) : VLA_P2U_(e))

/* the smallest normal of format f: recur.h's TINY (zero-norm events) */
static inline VLA_HD double vla_fmt_tiny(vla_fmt f)
{
    switch (f) {
#define VLA_X_(ID, tok, p, emin, emax, T)                                                         \
    case VLA_FMT_##ID:                                                                             \
        return VLA_EXP2(emin);
        VLA_FORMATS(VLA_X_)
#undef VLA_X_
    default:
        return 0; /* no format: every vla_fmt is a row above */
    }
}

/* The constants of a configuration, in the compute format (the array c of the state) */
enum { C_LAMBDA_INV, C_EPS_G, C_STAB, C_PER, C_EPS_O, C_CLIP, C_CLAMP, C_CLAMP_EPS, C_RENORM,
       C_BETA, C_SQRTD,
       C_LAMBDA0, C_GAMMA, C_SQRTG, C_FREG, C_TOL, /* forgetting and the ways that keep M */
       C_NCONST };

/* The arrays of a run's state (recur.h's struct), one row X(name, len) each under its role. A
 * length is an expression in d and dv, which every consumer has in scope. Adding an array is
 * one row here: recur.h's struct, allocation and checkpoints, and the kernels' layouts, bindings
 * and copies follow.
 *   SAVED  the state proper, in this order: checkpoints (vstate_save/load) and the kernels'
 *          state layout (kabi.h), which host and device exchange
 *   INPUT  one step's inputs rounded to the storage format (recur.h's load()), in this order:
 *          the kernels' input record, which the host prepares
 *   WORK   a step's workspace       CONST  the configuration's constants (C_ above) */
#define VLA_STATE_SAVED(X)                                                                         \
    X(S, dv * d)   /* dv x d */                                                                    \
    X(A, d * d)    /* d x d: A, or chol's factor L of M */                                         \
    X(n, d)        /* the normalizer sum of phi(k) */                                              \
    X(o, dv)       /* the last read-out */                                                         \
    X(kp, d)       /* the last write direction k' */                                               \
    X(al, d)       /* the last alpha */                                                            \
    X(sx, 2 * d + 3) /* solve, cg, cheb: warm starts, the last solve's health, the first failure */
#define VLA_STATE_INPUT(X)                                                                         \
    X(q, d) X(k, d) X(u, d)                                                                        \
    X(pk, d)         /* phi(k) */                                                                  \
    X(pq, d)         /* phi(q) */                                                                  \
    X(v, dv) X(g, dv)                                                                              \
    X(beta_decay, 2) /* delta's beta and decay */
#define VLA_STATE_WORK(X)                                                                          \
    X(z, d) X(e, dv) X(w, VLA_MAX(d, dv))                                                          \
    X(e2, d) /* joseph's A^T u */
#define VLA_STATE_CONST(X) X(c, C_NCONST)
#define VLA_STATE_ARRAYS(X)                                                                        \
    VLA_STATE_SAVED(X) VLA_STATE_INPUT(X) VLA_STATE_WORK(X) VLA_STATE_CONST(X)
#endif
