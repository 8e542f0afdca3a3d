/* recur.h: every primitive and model recurrence of docs/math.md sections 2-4, written once in
 * three-address form over a small set of arithmetic macros. It is included once per arithmetic: the
 * native policies (lib/arith_native.h, each operation rounded as the policy says) and GNU MPFR
 * (exact at P bits, or emulating a format bit for bit; reference/arith_mpfr.h). Because the
 * reference runs this very text, the order of every operation is the same by construction, and a
 * bit that differs between lib/ and the emulation is an arithmetic error, never a transcription
 * error.
 *
 * The including file defines, besides the arithmetic macros documented in arith_native.h:
 *   SFX   the suffix of every name made here (FN(step) -> step_f32)
 *   CXP   the context parameter declaration, CX the context argument.
 * recur_check.h refuses an instantiation that lacks one of them, naming it; the includer ends
 * its instantiation with recur_end.h, which undefines them all. The models, the ways of tracking
 * A and the state's arrays are the rows of vlalists.h and tables.h: the switches and the state
 * below are made from them.
 * Shapes: A is d x d, S is dv x d, row-major; vectors of keys have d entries, of values dv. */
#include "recur_check.h"
#include "tables.h"

/* VLA_FN qualifies every function made here: static for C; a CUDA includer may define it as
 * `static __device__` to run the same text on the GPU (the host-only parts, allocation and
 * checkpoints, are then left out with VLA_RECUR_DEVICE). */
#ifndef VLA_FN
#define VLA_FN static
#endif
/* VLA_PRIM qualifies recur_prim.h's primitives (the vector loops, the rank-1 updates, the
 * triangular solves), VLA_FN everything above them (the state, the ways of tracking, the models,
 * the forms). The same for C; the kernels inline the primitives and call the rest, which made
 * nvcc five times faster (kernels/karith.h). */
#ifndef VLA_PRIM
#define VLA_PRIM VLA_FN
#endif
/* VLA_TRACK_MASK: the ways of tracking A this instantiation runs, a bit per VLA_TRACK_<ID> (by
 * default all). An includer that runs fewer (the GPU's kernels: kernels/vlacuda.h's
 * VLA_CUDA_TRACKS) leaves the others' code out, as the compiler drops what no path reaches: their
 * dispatch (recur_track.h) does nothing, so the includer's host side must refuse them first.
 * VLA_TRACK_ON(ID): this instantiation runs the way ID; VLA_TRACKING(s, ID): and s tracks A so. */
#ifndef VLA_TRACK_MASK
#define VLA_TRACK_MASK (~0u)
#endif
#define VLA_TRACK_ON(ID) (((VLA_TRACK_MASK) >> VLA_TRACK_##ID) & 1u)
#define VLA_TRACKING(s, ID) (VLA_TRACK_ON(ID) && (s)->cfg.track == VLA_TRACK_##ID)
/* an arithmetic without stochastic rounding needs no per-step reset of its random words */
#ifndef SR_RESET
#define SR_RESET(t) ((void)0)
#endif
/* an arithmetic whose inputs and chunk intermediates have the storage format (every policy but
 * the kernels' f16-kern, bf16-kern) rounds them as it stores */
#ifndef STORE_I
#define STORE_I(r) STORE(r)
#endif
/* GRAD_OUT(dst, a, on): a gradient handed out to a binary64 array, dst = a's number (0 where not
 * on); an exact reference also writes what a holds below it, lo_off numbers further (reference/:
 * the double-double backward checked against MPFR's below binary64's resolution) */
#ifndef GRAD_OUT
#define GRAD_OUT(dst, a, on) ((dst) = (on) ? TOD(a) : 0)
#endif
/* ROUND_FMT(r, f): r rounded into format f (a vla_fmt, known at run time), kept in the container:
 * by default through binary64, which holds every number of every format exactly (an arithmetic
 * with its own rounding, or without a host's vla_round_fmt, defines its own). ROUND_H(r, h): into
 * the 16-bit format h of cache=f16|bf16, stage (vla_half: f16 or bf16; off and io leave r as it is) */
#ifndef ROUND_FMT
#define ROUND_FMT(r, f) SETD(r, vla_round_fmt((f), TOD(r)))
#endif
#define ROUND_H(r, h)                                                                              \
    do {                                                                                           \
        if ((h) == VLA_HALF_F16)                                                                   \
            ROUND_FMT(r, VLA_FMT_F16);                                                             \
        else if ((h) == VLA_HALF_BF16)                                                             \
            ROUND_FMT(r, VLA_FMT_BF16);                                                            \
    } while (0)
#define FN(name) VLA_CAT(name, SFX)
#define ST FN(vstate)

/* VLA_PFOR(i, lo, hi) marks a loop whose iterations are independent: each writes only its own
 * elements and reads none that another iteration writes. A CUDA includer splits it across the
 * threads of a block, with a barrier before and after, while every thread runs the rest (the
 * scalar work) redundantly on identical data; so a PFOR never nests in another, and no return
 * leaves one. Elsewhere it is a plain loop. VLA_ROWP(M, off) is the row of M that starts at flat
 * index off, a multiple of the row length (a device layout may pad rows). VLA_WHOLE_ROWS = 1 makes
 * the symmetric rank-1 update compute whole rows instead of the upper triangle and its mirror (the
 * same bits, since fl(z_i z_j) = fl(z_j z_i)): the CPU's native arithmetic sets it where the
 * compiler vectorizes whole rows and would leave the mirror's column writes scalar. */
#ifndef VLA_PFOR
#define VLA_PFOR(i, lo, hi) for (int i = (lo); i < (hi); i++)
#endif
#ifndef VLA_ROWP
#define VLA_ROWP(M, off) ((M) + (off))
#endif
#ifndef VLA_WHOLE_ROWS
#define VLA_WHOLE_ROWS 0
#endif

/* Branches on computed values. An arithmetic whose NUM holds several runs in the lanes of a
 * vector (lanes/klanes.h) takes a branch in the lanes whose condition holds and the other
 * branch in the rest, writing through a mask; elsewhere these are plain C:
 *   LANE_IF(c) { ... } [LANE_ELSE { ... }] LANE_END
 * LPRED is the type of a condition (LESS, ABSLESS, ISFIN, LESSD), combined with PNOT and POR;
 * PFALSE is the condition that holds nowhere. COUNT(x) counts an event into counter x (lanes:
 * in each lane where the branch is taken). A branch on the configuration or on t (the same in
 * every lane) stays a plain if. */
#ifndef LANE_IF
#define LANE_IF(c) if (c)
#define LANE_ELSE else
#define LANE_END
#define LPRED int
#define PNOT(a) (!(a))
#define POR(a, b) ((a) || (b))
#define PFALSE 0
#define COUNT(x) ((x)++)
#endif
#ifndef LESSD
#define LESSD(a, c) (CMPD((a), (c)) < 0) /* a < c, c a binary64 constant */
#endif
/* COUNT_ADD(x, n): add n to counter x where COUNT would count one (lanes: per lane) */
#ifndef COUNT_ADD
#define COUNT_ADD(x, n) ((x) += (n))
#endif
/* TEMP(t): the value t holds is dead here (a loop body's temporary). Lanes write through a mask,
 * which makes every write depend on the value it overwrites; TEMP cuts that false chain from one
 * iteration to the next. Elsewhere nothing. */
#ifndef TEMP
#define TEMP(t) ((void)0)
#endif

#ifndef VLA_RECUR_ONCE
#define VLA_RECUR_ONCE
enum { GUARD_NONE, GUARD_SKIP, GUARD_FLOOR };
#endif

#include "recur_prim.h"
#include "recur_state.h"
#include "recur_track.h"
#include "recur_chunk.h"
#include "models/models.h"

/* ---- the dispatches to the models (vlalists.h's VLA_MODELS), each function named in
 * parentheses, so that a row without its function is an undeclared identifier ---- */

/* the read-out of the loaded query: read_<tok> */
VLA_FN void FN(read_loaded)(CXP, ST *s)
{
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, ...)                                                               \
    case VLA_##ID:                                                                                 \
        (FN(read_##tok))(CX, s);                                                                   \
        break;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}

/* u' of the model (NULL: it has no A) */
__attribute__((unused)) VLA_FN NUM *FN(uprime)(CXP, ST *s)
{
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, ...)                                                               \
    VLA_IF(has_A, case VLA_##ID : return (FN(uprime_##tok))(CX, s);)
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return NULL;
    }
}

#include "recur_forms.h"

/* a step once its inputs are loaded (has_g: the input carried a gate) */
VLA_FN void FN(vstate_advance)(CXP, ST *s, int has_g)
{
    s->t++;
    SR_RESET(s->t);
    s->cnt.steps++;
    if (FN(form_step)(CX, s)) /* chunk:C and scan (recur_forms.h) */
        return;
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, ...)                                                               \
    case VLA_##ID:                                                                                 \
        (FN(step_##tok))(CX, s, has_g);                                                            \
        break;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
    if (s->cfg.renorm > 0) {
        LANE_IF(FN(renorm)(CX, s->S, s->dv, s->d, P(E(s->c, C_RENORM)))) {
            COUNT(s->cnt.renorm);
        } LANE_END
    }
    FN(read_loaded)(CX, s);
    /* decoding's state cache: read out from the binary32 update, kept in the cache's format */
    FN(cache_keep)(CX, s);
}

#ifndef VLA_RECUR_DEVICE
VLA_FN int FN(vstate_step)(CXP, ST *s, const vla_input *in)
{
    if (s->tail) /* the stream has ended (vstate_finish) */
        return VLA_EINVAL;
    if (s->cfg.form == VLA_FORM_SCAN && s->t + 1 >= 1L << VLA_SCAN_LEVELS)
        return VLA_ERANGE; /* the scan's levels are full */
    ARITH_ENTER;
    FN(load)(CX, s, in);
    FN(vstate_advance)(CX, s, in->g != NULL);
    ARITH_LEAVE;
    return VLA_OK;
}

/* The stream has ended. A chunk form whose T is no multiple of C computes its last c = T mod C
 * tokens as a chunk of c: the kernels compute it in a chunk of C whose rows past T they mask (zero
 * inputs, loads with a boundary check); causal, those rows change nothing before them, and with
 * zero keys they add nothing to the state, so a chunk of c is their computation on the rows that
 * exist. Every model's chunk reads its length from cfg.chunk, set to c for the call. */
VLA_FN int FN(vstate_finish)(CXP, ST *s)
{
    const int C = s->cfg.chunk, B = s->cfg.anchor_block, c = (int)vla_form_pending(&s->cfg, s->t);
    if (s->tail || !c)
        return VLA_OK;
    ARITH_ENTER;
    s->cfg.chunk = c;
    s->cfg.anchor_block = B ? B : C; /* the anchors' blocks stay those of a chunk of C */
    FN(chunk_run)(CX, s);
    s->cfg.chunk = C;
    s->cfg.anchor_block = B;
    s->tail = c;
    ARITH_LEAVE;
    return VLA_OK;
}

/* a read's query into q and its features into pq (FN(load) does the same for a write) */
VLA_FN void FN(load_query)(CXP, ST *s, const double *q)
{
    LOAD_IN_N(s->q, q, s->d);
    if (s->cfg.features == VLA_FEAT_OWN)
        LOAD_PHI_N(s->pq, q, s->d);
    else
        for (int i = 0; i < s->d; i++)
            COPY(E(s->pq, i), E(s->q, i));
}

VLA_FN int FN(vstate_read)(CXP, ST *s, const double *q)
{
    if (!s->tail && vla_form_pending(&s->cfg, s->t)) /* no state inside a chunk (docs/forms.md) */
        return VLA_ENOTSUP;
    ARITH_ENTER;
    FN(load_query)(CX, s, q);
    s->cnt.reads++;
    FN(read_loaded)(CX, s);
    ARITH_LEAVE;
    return VLA_OK;
}
VLA_FN int FN(vstate_get)(CXP, ST *s, vla_quantity q, double *dst)
{
    const NUM *src;
    size_t n;
    switch (q) {
    case VLA_Q_S: src = s->S; n = (size_t)s->dv * s->d; break;
    case VLA_Q_A: src = s->A; n = (size_t)s->d * s->d; break;
    case VLA_Q_N: src = s->n; n = s->d; break;
    case VLA_Q_O: src = s->o; n = s->dv; break;
    case VLA_Q_KP: src = s->kp; n = s->d; break;
    case VLA_Q_ALPHA: src = s->al; n = s->d; break;
    case VLA_Q_L: /* chol keeps L where the other ways keep A */
    case VLA_Q_M: /* and solve, cg, cheb keep M */
        if (vla_track_holds(s->cfg.track) != (q == VLA_Q_L ? VLA_HOLDS_L : VLA_HOLDS_M))
            return VLA_EINVAL;
        src = s->A;
        n = (size_t)s->d * s->d;
        break;
    case VLA_Q_SOLVER:
        if (vla_track_holds(s->cfg.track) != VLA_HOLDS_M)
            return VLA_EINVAL;
        src = s->sx + 2 * (size_t)s->d;
        n = 3;
        break;
    case VLA_Q_CO: /* a chunk's read-outs, at its end (after a read: o) */
        if (!vla_form_pending(&s->cfg, 1) || (s->t % s->cfg.chunk && !s->tail))
            return VLA_EINVAL;
        src = s->co;
        n = (size_t)(s->tail ? s->tail : s->cfg.chunk) * s->dv;
        break;
    default: return VLA_EINVAL;
    }
    if (q == VLA_Q_M) { /* the upper triangle, which the updates write (solve's factor is below) */
        size_t d = s->d;
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++)
                dst[i * d + j] = TOD(E(s->A, i <= j ? i * d + j : j * d + i));
        return VLA_OK;
    }
    if (q == VLA_Q_A && vla_track_holds(s->cfg.track) != VLA_HOLDS_A) {
        /* chol and the ways that keep M never form A: a measure that asks for it gets M^-1 column
         * by column, computed in the working arithmetic from L (chol's own; for M, a Cholesky
         * factor made in a copy, so the state is left as it is), O(d^3), at checkpoints only */
        int d = s->d, ds = d + 1, r = VLA_OK;
        NUM *L = s->A, *dg = s->A, *cp = NULL, *cd = NULL;
        ARITH_ENTER;
        if (vla_track_holds(s->cfg.track) == VLA_HOLDS_M) {
            cp = NUM_ALLOC((size_t)d * d);
            cd = NUM_ALLOC((size_t)d + 1);
            if (!cp || !cd) {
                r = VLA_ENOMEM;
                goto out;
            }
            for (size_t i = 0; i < (size_t)d * d; i++)
                COPY(E(cp, i), E(s->A, i));
            FN(chol_factor)(CX, cp, cd, d, P(E(cd, d)));
            L = cp;
            dg = cd;
            ds = 1;
        }
        for (int j = 0; j < d; j++) {
            for (int i = 0; i < d; i++)
                SETI(E(s->w, i), i == j);
            FN(tri_solve)(CX, L, dg, ds, s->e2, s->w, d);
            for (int i = 0; i < d; i++)
                dst[(size_t)i * d + j] = TOD(E(s->e2, i));
        }
    out:
        if (cp)
            NUM_FREE(cp, (size_t)d * d);
        if (cd)
            NUM_FREE(cd, (size_t)d + 1);
        ARITH_LEAVE;
        return r;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = TOD(E(src, i));
    return VLA_OK;
}

/* The whole state in its own format, bit for bit (native: the raw numbers; MPFR: its portable
 * binary export), so that a run resumed from it ends with the same bits as one never stopped. */
VLA_FN int FN(vstate_save)(const ST *s, FILE *f)
{
    VLA_DIMS_LOCALS(vla_dims_of(&s->cfg));
    if (s->tail) /* a finished stream's last chunk holds no state a run can go on from */
        return VLA_EINVAL;
    if (fwrite(&s->t, sizeof s->t, 1, f) != 1 || fwrite(&s->cnt, sizeof s->cnt, 1, f) != 1)
        return VLA_EIO;
#define VLA_X_(name, len)                                                                          \
    if (SAVE_ARRAY(f, s->name, (size_t)(len)))                                                     \
        return VLA_EIO;
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    return VLA_OK;
}

VLA_FN int FN(vstate_load)(ST *s, FILE *f)
{
    VLA_DIMS_LOCALS(vla_dims_of(&s->cfg));
    s->tail = 0;
    if (fread(&s->t, sizeof s->t, 1, f) != 1 || fread(&s->cnt, sizeof s->cnt, 1, f) != 1 ||
        vla_counts_check(&s->cfg, s->t, &s->cnt))
        return VLA_EFORMAT;
#define VLA_X_(name, len)                                                                          \
    if (LOAD_ARRAY(f, s->name, (size_t)(len)))                                                     \
        return VLA_EFORMAT;
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    return VLA_OK;
}
#endif
