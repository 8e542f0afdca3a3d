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
/* the i-th item of a list (0-based, i a literal 0..15): VLA_NTH(i, a, b, c,); the number of rows
 * of a list, for the preprocessor: (0 VLA_FORMATS(VLA_PONE_)) (the loops of lib/policy.h and
 * lib/formats/each.h) */
#define VLA_NTH(i, ...) VLA_NTH_(i, __VA_ARGS__)
#define VLA_NTH_(i, ...) VLA_JOIN(VLA_NTH, i)(__VA_ARGS__)
#define VLA_NTH0(a, ...) a
#define VLA_NTH1(a, ...) VLA_NTH0(__VA_ARGS__)
#define VLA_NTH2(a, ...) VLA_NTH1(__VA_ARGS__)
#define VLA_NTH3(a, ...) VLA_NTH2(__VA_ARGS__)
#define VLA_NTH4(a, ...) VLA_NTH3(__VA_ARGS__)
#define VLA_NTH5(a, ...) VLA_NTH4(__VA_ARGS__)
#define VLA_NTH6(a, ...) VLA_NTH5(__VA_ARGS__)
#define VLA_NTH7(a, ...) VLA_NTH6(__VA_ARGS__)
#define VLA_NTH8(a, ...) VLA_NTH7(__VA_ARGS__)
#define VLA_NTH9(a, ...) VLA_NTH8(__VA_ARGS__)
#define VLA_NTH10(a, ...) VLA_NTH9(__VA_ARGS__)
#define VLA_NTH11(a, ...) VLA_NTH10(__VA_ARGS__)
#define VLA_NTH12(a, ...) VLA_NTH11(__VA_ARGS__)
#define VLA_NTH13(a, ...) VLA_NTH12(__VA_ARGS__)
#define VLA_NTH14(a, ...) VLA_NTH13(__VA_ARGS__)
#define VLA_NTH15(a, ...) VLA_NTH14(__VA_ARGS__)
#define VLA_PONE_(...) +1

/* An instantiation names its policy by the row's suffix (POL, e.g. f16f32); these give the
 * row's enum constant, formats and C container: VLA_PREC_OF(POL), VLA_FMTS_OF(POL),
 * VLA_FMTC_OF(POL), VLA_FMTI_OF(POL) (inputs and intermediates), VLA_NUM_OF(POL). */
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern)                                              \
    VLA_PREC_##sfx = VLA_##ID, VLA_FMTS_##sfx = VLA_FMT_##S, VLA_FMTC_##sfx = VLA_FMT_##C,         \
    VLA_FMTI_##sfx = VLA_FMT_##IO,
enum { VLA_PRECS(VLA_X_) };
#undef VLA_X_
#define VLA_X_(ID, name, sfx, S, C, ...) typedef vla_num_##C vla_num_of_##sfx;
VLA_PRECS(VLA_X_)
#undef VLA_X_
#define VLA_PREC_OF(pol) ((vla_prec)VLA_CAT(VLA_PREC, pol))
#define VLA_FMTS_OF(pol) ((vla_fmt)VLA_CAT(VLA_FMTS, pol))
#define VLA_FMTC_OF(pol) ((vla_fmt)VLA_CAT(VLA_FMTC, pol))
#define VLA_FMTI_OF(pol) ((vla_fmt)VLA_CAT(VLA_FMTI, pol))
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
/* the mixed and kern columns say what the formats say */
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern)                                              \
    typedef char vla_mixed_check_##sfx[(VLA_FMT_##S != VLA_FMT_##C) == (mixed) ? 1 : -1];         \
    typedef char vla_kern_check_##sfx[(VLA_FMT_##IO != VLA_FMT_##S) == (kern) ? 1 : -1];
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

/* The columns of VLA_MODELS that recur.h's text and the state's sizes read (on the host and the
 * GPU): whether the model's S has a transition J that is not I, keeps the normalizer n, and
 * decays J by a scalar a_t in configuration c */
static inline VLA_HD int vla_col_affine(vla_model_kind m)
{
    switch (m) {
#define VLA_X_(ID, tok, has_A, normalize, affine, ...)                                             \
    case VLA_##ID:                                                                                 \
        return affine;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
static inline VLA_HD int vla_col_acc_n(vla_model_kind m)
{
    switch (m) {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, ...)                                      \
    case VLA_##ID:                                                                                 \
        return acc_n;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
static inline VLA_HD int vla_col_gate(vla_model_kind m)
{
    switch (m) {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, ...)                         \
    case VLA_##ID:                                                                                 \
        return gate;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
static inline VLA_HD int vla_col_lr(vla_model_kind m)
{
    switch (m) {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, ...)                     \
    case VLA_##ID:                                                                                 \
        return lr;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
static inline VLA_HD int vla_col_decay(const vla_config *c)
{
    switch (c->model) {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, ...)                               \
    case VLA_##ID:                                                                                 \
        return decay;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}

/* The constants of a configuration, in the compute format (the array c of the state) */
enum { C_LAMBDA_INV, C_EPS_G, C_STAB, C_PER, C_EPS_O, C_CLIP, C_CLAMP, C_CLAMP_EPS, C_RENORM,
       C_BETA, C_SQRTD,
       C_LAMBDA0, C_GAMMA, C_SQRTG, C_FREG, C_TOL, /* forgetting and the ways that keep M */
       C_SCALE, C_L2EPS, /* the gated family's read-out scale and l2norm's epsilon */
       C_GATE_LB, C_RCPLN2, /* the log-gate's bound, fla's RCP_LN2 (binary32 1/ln 2) */
       C_TWOPI,             /* mamba3's 2 pi, the angles' period (binary64 2 pi rounded) */
       C_NCONST };

/* 1 when c's state cache is more than f16 or bf16 rounded to nearest without a scale (which every
 * backend runs, lane by lane): a format with a scale, fp8, the integers, sr or ef, which the CPU's
 * scalar arithmetics alone run (recur_state.h's cache_store) */
static inline VLA_HD int vla_cache_scaled(const vla_config *c)
{
    return c->cache > VLA_CACHE_BF16 || c->cache_rows || c->cache_round != VLA_CROUND_RN;
}

/* The sizes the state's arrays are measured in: d and dv, and the form's (vlalists.h's
 * VLA_FORMS): nc, the chunk's C (0 outside the chunk form, and for chunk:1, which is the
 * sequential recurrence); nm, d when the chunk keeps M (cg: recur.h's cg with recur_forms.h's
 * chunk_mv), else 0; nl, the levels of the scan's blocks (0 outside the scan form); nj, nl when
 * the scan carries the transition J of an affine S (every model but la), else 0; ne, 1 when the
 * state cache carries its rounding's residual (cache_round=ef), else 0; nt, 1 for mamba3 (its
 * state carries the last token's v and each key-channel pair's rotation), else 0. */
#define VLA_SCAN_LEVELS 30 /* the scan's blocks cover t < 2^30 (the programs' steps go to 1e9) */
/* loglinear's Fenwick levels (models/loglinear.h): L = min(d, VLA_LOG_LEVELS), its per-level
 * weights being the first L entries of the input u; L levels hold every token while T <= 2^(L-1)
 * (past it a bucket of level L or more weighs 0, as in fla's kernel, and leaves the state) */
#define VLA_LOG_LEVELS 31
static inline VLA_HD int vla_levels(const vla_config *c)
{
    return c->model == VLA_LOGLINEAR ? (c->d < VLA_LOG_LEVELS ? c->d : VLA_LOG_LEVELS) : 0;
}
typedef struct {
    int d, dv, nc, nm, nl, nj, ng, nr, nn, ne, nh, nt;
} vla_dims;
static inline VLA_HD vla_dims vla_dims_of(const vla_config *c)
{
    vla_dims m = {c->d, c->dv, 0, 0, 0, 0, 0, 0, 0, 0, vla_levels(c), 0};
    m.nt = c->model == VLA_MAMBA3; /* the trapezoid's carried token and the rotary's turns */
    m.ne = c->cache && c->cache_round == VLA_CROUND_EF;
    m.ng = vla_col_gate(c->model) == 2 ? c->d : 0;
    m.nr = vla_col_lr(c->model) ? c->d : 0;
    if (c->form == VLA_FORM_CHUNK && c->chunk > 1) {
        m.nc = c->chunk;
        m.nm = c->track == VLA_TRACK_CG ? c->d : 0;
        m.nn = c->tri == VLA_TRI_NEUMANN ? c->chunk : 0;
    }
    if (c->form == VLA_FORM_SCAN) {
        m.nl = VLA_SCAN_LEVELS;
        m.nj = vla_col_affine(c->model) ? VLA_SCAN_LEVELS : 0;
    }
    return m;
}
/* the names the lengths below are written in, as locals (unused ones are fine) */
#define VLA_DIMS_LOCALS(m)                                                                         \
    const int d = (m).d, dv = (m).dv, nc = (m).nc, nm = (m).nm, nl = (m).nl, nj = (m).nj,          \
              ng = (m).ng, nr = (m).nr, nn = (m).nn, ne = (m).ne, nh = (m).nh, nt = (m).nt;        \
    (void)d, (void)dv, (void)nc, (void)nm, (void)nl, (void)nj, (void)ng, (void)nr, (void)nn,       \
        (void)ne, (void)nh, (void)nt

/* The arrays of a run's state (recur.h's struct), one row X(name, len) each under its role. A
 * length is an expression in d, dv, nc, nl, nj, ne and nh (VLA_DIMS_LOCALS), which every consumer has in
 * scope. Adding an array is one row here: recur.h's struct, allocation and checkpoints, and the
 * kernels' layouts, bindings and copies follow. The form's arrays are empty in the seq form, so
 * its checkpoints and layouts are what they were.
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
    X(sx, 2 * d + 3) /* solve, cg, cheb: warm starts, the last solve's health, the first failure */ \
    X(ev, 1)       /* 1 once a read-out's denominator was not finite (den_inf_t: its step) */      \
    X(cb, nc * VLA_INPUT_LEN) /* chunk: the inputs of the chunk's tokens so far, INPUT records */  \
    X(sb, nl * dv * d)        /* scan: level l's block of steps: the B of its S -> S J + B */      \
    X(sj, nj * d * d)         /* ... and its J */                                                  \
    X(sn, nl * d)             /* ... and its sum of phi(k) */                                  \
    X(ef, ne * dv * d)        /* the state cache's residual (cache_round=ef), binary32 */         \
    X(sh, nh * dv * d)        /* loglinear: level l's state S^(l), dv x d each */                 \
    X(vx, nt * dv)            /* mamba3: the last token's v (al holds its rotated k) */           \
    X(zr, nt * d)             /* ... each pair's rotation e^(i Theta): cos at 2i, sin at 2i + 1 */\
    X(th, nt * (d / 2))       /* ... each pair's angle Theta, in [0, 2 pi) */
#define VLA_STATE_INPUT(X)                                                                         \
    X(q, d) X(k, d) X(u, d)                                                                        \
    X(pk, d)         /* phi(k) */                                                                  \
    X(pq, d)         /* phi(q) */                                                                  \
    X(v, dv) X(g, dv)                                                                              \
    X(beta_decay, 4) /* beta, a scalar decay a, log(a) (delta's decay; gdn's, mamba2's), mamba3's dt */\
    X(lg, ng)        /* the log-decays per key channel (kda, gla, rwkv7) */                        \
    X(ag, ng)        /* ... their exp, in the compute format */                                    \
    X(ra, nr) X(rb, nr) /* rwkv7's a and b */
#define VLA_STATE_WORK(X)                                                                          \
    X(z, d) X(e, dv) X(w, VLA_MAX(d, dv))                                                          \
    X(e2, d)         /* joseph's A^T u */                                                          \
    X(cx, nc * d)    /* chunk: the tokens' left vectors (k', k), then W */                          \
    X(cy, nc * d)    /* ... their right vectors (k', alpha, the gain) */                           \
    X(cu, nc * d)    /* ... their u' */                                                            \
    X(cz, nc * d)    /* ... A_0 u', then Z = A_0 U^T L^-T; cg: the tokens' iterates x */          \
    X(ce, nc * dv)   /* ... U, then E = U - W S_0^T */                                             \
    X(co, nc * dv)   /* ... their read-outs */                                                     \
    X(cm, nc * nc)   /* ... G and its factor; then L below, T^T above the diagonal; then P */     \
    X(cn, nn * nn)   /* ... tri=neumann: a product of the doubling */                             \
    X(cp, nc)        /* ... the pivots of G; cg: the scores u'_j . p */                            \
    X(cr, nc)        /* ... the read-outs' denominators */                                         \
    X(cg, nc)        /* ... delta's cumulative log-decays gamma */                                 \
    X(cgd, nc * ng)  /* ... the cumulative log-decays per key channel (kda, gla) */              \
    X(s0, nc ? dv * d : 0)   /* ... S_0 rounded to the io format, the products' operand */         \
    X(m0, nm * d)            /* ... cg: M_0 rounded to the io format, the products' operand */     \
    X(pio, nm)               /* ... cg: the direction p rounded to the io format */                \
    X(tb, nl ? dv * d : 0)   /* scan: a step's B, then a combination's */                          \
    X(tj, nj ? d * d : 0)    /* ... a step's J */                                                  \
    X(ub, nl ? dv * d : 0)   /* ... the product of a combination */                                \
    X(uj, nj ? d * d : 0)
#define VLA_STATE_CONST(X) X(c, C_NCONST)
#define VLA_STATE_ARRAYS(X)                                                                        \
    VLA_STATE_SAVED(X) VLA_STATE_INPUT(X) VLA_STATE_WORK(X) VLA_STATE_CONST(X)

/* one step's INPUT record: its length, and where input array a (VLA_IN_<name>) starts in it */
#define VLA_LEN_(name, len) +(len)
static inline VLA_HD long vla_in_len(int d, int dv, int ng, int nr)
{
    return 0 VLA_STATE_INPUT(VLA_LEN_);
}
#define VLA_INPUT_LEN vla_in_len(d, dv, ng, nr)
#define VLA_X_(name, len) VLA_IN_##name,
enum { VLA_STATE_INPUT(VLA_X_) VLA_IN_N };
#undef VLA_X_
static inline VLA_HD long vla_in_off(int a, int d, int dv, int ng, int nr)
{
    long off = 0;
#define VLA_X_(name, len)                                                                          \
    if (a == VLA_IN_##name)                                                                        \
        return off;                                                                                \
    off += (len);
    VLA_STATE_INPUT(VLA_X_)
#undef VLA_X_
    return off;
}
#endif
