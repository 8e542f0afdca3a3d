/* recur.h: every primitive and model recurrence of SPEC sections 2-4, written once in three-address
 * form over a small set of arithmetic macros. It is included once per arithmetic: the native
 * policies (lib/arith_native.h, each operation rounded as the policy says) and GNU MPFR (exact at
 * P bits, or emulating a format bit for bit; reference/arith_mpfr.h). Because the reference runs
 * this very text, the order of every operation is the same by construction, and a bit that
 * differs between lib/ and the emulation is an arithmetic error, never a transcription error.
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
/* an arithmetic without stochastic rounding needs no per-step reset of its random words */
#ifndef SR_RESET
#define SR_RESET(t) ((void)0)
#endif
/* an arithmetic whose inputs and chunk intermediates have the storage format (every policy but
 * the kernels' f16-kern, bf16-kern) rounds them as it stores */
#ifndef STORE_I
#define STORE_I(r) STORE(r)
#endif
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
 * vector (kernels/klanes.h) takes a branch in the lanes whose condition holds and the other
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

/* ---- vector kernels: every reduction left to right, starting from the first term ---- */

/* r = sum_j X[xo + j] Y[yo + j], j ascending from the first term: on flat offsets, for rows of
 * any length on any layout (the chunk forms' rows of dv numbers) */
VLA_FN void FN(dot_at)(CXP, NREF r, const NUM *X, long xo, const NUM *Y, long yo, int n)
{
    FRAME_BEGIN;
    SCALAR(t);
    MUL(R(r), E(X, xo), E(Y, yo));
    for (int j = 1; j < n; j++) {
        TEMP(t);
        MUL(t, E(X, xo + j), E(Y, yo + j));
        ADD(R(r), R(r), t);
    }
    FRAME_END;
}

/* r = x . y */
VLA_FN void FN(dot)(CXP, NREF r, const NUM *x, const NUM *y, int n)
{
    FN(dot_at)(CX, r, x, 0, y, 0, n);
}

/* y = M x, M m x n (y must not alias x). VLA_MATVEC_HOOK: a native policy's vectorized twin that
 * computes the same row sums in the same order, several rows at a time (1: done; 0: not taken). */
VLA_FN void FN(matvec)(CXP, NUM *y, const NUM *M, const NUM *x, int m, int n)
{
#ifdef VLA_MATVEC_HOOK
    if (VLA_MATVEC_HOOK(y, M, x, m, n))
        return;
#endif
    VLA_PFOR(i, 0, m)
        FN(dot)(CX, P(E(y, i)), VLA_ROWP(M, (size_t)i * n), x, n);
}

/* y = M^T x, M n x m: y_i = sum_j M_ji x_j, j ascending. For an exactly symmetric M (A under sm
 * and sm-sym) these are matvec's numbers, read down the columns, which vectorizes across i (and
 * on a GPU reads consecutive addresses across threads). VLA_MATVEC_T_HOOK as above. */
VLA_FN void FN(matvec_t)(CXP, NUM *y, const NUM *M, const NUM *x, int m, int n)
{
#ifdef VLA_MATVEC_T_HOOK
    if (VLA_MATVEC_T_HOOK(y, M, x, m, n))
        return;
#endif
    FRAME_BEGIN;
    SCALAR(t);
    VLA_PFOR(i, 0, m) {
        MUL(E(y, i), E(M, i), E(x, 0));
        for (int j = 1; j < n; j++) {
            TEMP(t);
            MUL(t, E(M, (size_t)j * m + i), E(x, j));
            ADD(E(y, i), E(y, i), t);
        }
    }
    FRAME_END;
}

/* r = ||x||_2, the plain sqrt of the sum of squares (a 16-bit format under- or overflows here;
 * that is part of what we measure) */
VLA_FN void FN(norm2)(CXP, NREF r, const NUM *x, int n)
{
    FN(dot)(CX, r, x, x, n);
    SQRT(R(r), R(r));
}

/* x <- x / ||x||_2. A norm below the smallest normal of the compute format, or not finite, is a
 * zero-norm event: x is left as it is and the event counted (never a NaN). */
VLA_FN void FN(unit)(CXP, NUM *x, int n, long *zero_norm)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    FN(norm2)(CX, P(nrm), x, n);
    LANE_IF(POR(PNOT(ISFIN(nrm)), LESSD(nrm, TINY))) {
        COUNT(*zero_norm);
    } LANE_ELSE {
        VLA_PFOR(i, 0, n)
            DIV(E(x, i), E(x, i), nrm);
    } LANE_END
    FRAME_END;
}

/* A += eps I, stored */
VLA_FN void FN(add_diag)(CXP, NUM *A, int d, NREF eps)
{
    VLA_PFOR(i, 0, d) {
        ADD(E(A, (size_t)i * d + i), E(A, (size_t)i * d + i), R(eps));
        STORE(E(A, (size_t)i * d + i));
    }
}

/* delta = 1 + u . z, guarded: GUARD_SKIP (vla1, section 3): |delta| < eps or delta not finite
 * skips the update and adds eps I to A (returns where it did); GUARD_FLOOR (vla3): delta =
 * max(delta, eps). Either counts into *guards. */
VLA_FN LPRED FN(sm_delta)(CXP, NREF delta, NUM *A, const NUM *u, const NUM *z, int d, int guard,
                          NREF eps, long *guards)
{
    FRAME_BEGIN;
    SCALAR(one);
    LPRED skip = PFALSE;
    FN(dot)(CX, delta, u, z, d);
    SETI(one, 1);
    ADD(R(delta), one, R(delta));
    if (guard == GUARD_SKIP) {
        skip = POR(PNOT(ISFIN(R(delta))), ABSLESS(R(delta), R(eps)));
        LANE_IF(skip) {
            FN(add_diag)(CX, A, d, eps);
            COUNT(*guards);
        } LANE_END
    }
    if (guard == GUARD_FLOOR) {
        LANE_IF(LESS(R(delta), R(eps))) {
            COPY(R(delta), R(eps));
            COUNT(*guards);
        } LANE_END
    }
    FRAME_END;
    return skip;
}

/* Sherman-Morrison: z = A u, delta = 1 + u . z, A <- A - z z^T / delta (sym = 0: every entry as
 * (z_i z_j) / delta; sym = 1: y = z / sqrt(delta), A_ij -= y_i y_j, half the divisions). Either is
 * exactly symmetric, since fl(z_i z_j) = fl(z_j z_i), so only the upper triangle is computed and
 * then mirrored into the lower, unless whole (or VLA_WHOLE_ROWS) asks for every entry: a rounding
 * that is not a function of the value alone (stochastic rounding draws a word per stored entry)
 * makes A unsymmetric, and each entry must then be its own.
 * The guard: GUARD_SKIP (vla1, section 3): |delta| < eps or delta not finite skips the update and
 * adds eps I; GUARD_FLOOR (vla3): delta = max(delta, eps). Either counts into *guards.
 * z (d entries) is workspace and holds A_{t-1} u (sym: scaled) on return, computed as A^T u
 * (matvec_t): the same numbers, since every A this update makes is exactly symmetric (sr: the
 * product with the A it holds, as every consumer of A computes it). */
VLA_FN void FN(sm_update)(CXP, NUM *A, const NUM *u, int d, NUM *z, int guard, NREF eps, int sym,
                          int whole, long *guards)
{
    FRAME_BEGIN;
    SCALAR(delta);
    SCALAR(t);
    whole = whole || VLA_WHOLE_ROWS;
    FN(matvec_t)(CX, z, A, u, d, d);
    LANE_IF(PNOT(FN(sm_delta)(CX, P(delta), A, u, z, d, guard, eps, guards))) {
        if (!sym) {
            VLA_PFOR(i, 0, d)
                for (int j = whole ? 0 : i; j < d; j++) {
                    TEMP(t);
                    MUL(t, E(z, i), E(z, j));
                    DIV(t, t, delta);
                    SUB(E(A, (size_t)i * d + j), E(A, (size_t)i * d + j), t);
                    STORE(E(A, (size_t)i * d + j));
                    if (!whole)
                        COPY(E(A, (size_t)j * d + i), E(A, (size_t)i * d + j));
                }
        } else {
            SQRT(delta, delta);
            VLA_PFOR(i, 0, d)
                DIV(E(z, i), E(z, i), delta);
            VLA_PFOR(i, 0, d)
                for (int j = whole ? 0 : i; j < d; j++) {
                    TEMP(t);
                    MUL(t, E(z, i), E(z, j));
                    SUB(E(A, (size_t)i * d + j), E(A, (size_t)i * d + j), t);
                    STORE(E(A, (size_t)i * d + j));
                    if (!whole)
                        COPY(E(A, (size_t)j * d + i), E(A, (size_t)i * d + j));
                }
        }
    } LANE_END
    FRAME_END;
}

/* Joseph form: A <- (I - g u^T) A (I - g u^T)^T + g g^T with g = z / delta, expanded to O(d^2):
 * A - g w^T - z g^T + delta g g^T where z = A u and w = A^T u are computed separately (they are
 * equal only while A is exactly symmetric). Symmetric and positive semidefinite in exact
 * arithmetic whatever A is; the same delta guard as sm. z, w: workspace. */
VLA_FN void FN(joseph_update)(CXP, NUM *A, const NUM *u, int d, NUM *z, NUM *w, int guard,
                               NREF eps, long *guards)
{
    FRAME_BEGIN;
    SCALAR(delta);
    SCALAR(t);
    SCALAR(g);
    SCALAR(gi);
    FN(matvec)(CX, z, A, u, d, d);
    FN(matvec_t)(CX, w, A, u, d, d); /* w = A^T u */
    LANE_IF(PNOT(FN(sm_delta)(CX, P(delta), A, u, z, d, guard, eps, guards))) {
        for (int i = 0; i < d; i++) {
            DIV(gi, E(z, i), delta);
            for (int j = 0; j < d; j++) {
                size_t ij = (size_t)i * d + j;
                TEMP(t);
                TEMP(g);
                DIV(g, E(z, j), delta);
                MUL(t, gi, E(w, j));
                SUB(E(A, ij), E(A, ij), t);
                MUL(t, E(z, i), g);
                SUB(E(A, ij), E(A, ij), t);
                MUL(t, gi, g);
                MUL(t, t, delta);
                ADD(E(A, ij), E(A, ij), t);
                STORE(E(A, ij));
            }
        }
    } LANE_END
    FRAME_END;
}

/* chol: L (lower triangle of the d x d array, row-major) with M = L L^T; M += u u^T as the
 * classical rank-1 Cholesky update (a sequence of rotations, O(d^2)): L stays a Cholesky factor,
 * so M stays positive definite by construction. x (d entries) is workspace. */
VLA_FN void FN(chol_update)(CXP, NUM *L, const NUM *u, int d, NUM *x)
{
    FRAME_BEGIN;
    SCALAR(r);
    SCALAR(c);
    SCALAR(sn);
    SCALAR(t);
    for (int i = 0; i < d; i++)
        COPY(E(x, i), E(u, i));
    for (int k = 0; k < d; k++) {
        MUL(r, E(L, (size_t)k * d + k), E(L, (size_t)k * d + k));
        MUL(t, E(x, k), E(x, k));
        ADD(r, r, t);
        SQRT(r, r);
        DIV(c, r, E(L, (size_t)k * d + k));
        DIV(sn, E(x, k), E(L, (size_t)k * d + k));
        COPY(E(L, (size_t)k * d + k), r);
        STORE(E(L, (size_t)k * d + k));
        for (int i = k + 1; i < d; i++) {
            size_t ik = (size_t)i * d + k;
            TEMP(t);
            MUL(t, sn, E(x, i));
            ADD(E(L, ik), E(L, ik), t);
            DIV(E(L, ik), E(L, ik), c);
            STORE(E(L, ik));
            MUL(E(x, i), c, E(x, i));
            MUL(t, sn, E(L, ik));
            SUB(E(x, i), E(x, i), t);
        }
    }
    FRAME_END;
}

/* y = M^-1 x = L^-T L^-1 x: forward then backward substitution, each sum in ascending j, with
 * L's strict lower triangle in L and its diagonal at dg[i * ds] (chol: in L itself, ds = d + 1;
 * solve: apart, ds = 1); y must not alias x */
VLA_FN void FN(tri_solve)(CXP, const NUM *L, const NUM *dg, int ds, NUM *y, const NUM *x, int d)
{
    FRAME_BEGIN;
    SCALAR(t);
    for (int i = 0; i < d; i++) {
        COPY(E(y, i), E(x, i));
        for (int j = 0; j < i; j++) {
            TEMP(t);
            MUL(t, E(L, (size_t)i * d + j), E(y, j));
            SUB(E(y, i), E(y, i), t);
        }
        DIV(E(y, i), E(y, i), E(dg, (size_t)i * ds));
    }
    for (int i = d - 1; i >= 0; i--) {
        for (int j = i + 1; j < d; j++) {
            TEMP(t);
            MUL(t, E(L, (size_t)j * d + i), E(y, j));
            SUB(E(y, i), E(y, i), t);
        }
        DIV(E(y, i), E(y, i), E(dg, (size_t)i * ds));
    }
    FRAME_END;
}
VLA_FN void FN(chol_solve)(CXP, const NUM *L, NUM *y, const NUM *x, int d)
{
    FN(tri_solve)(CX, L, L, d + 1, y, x, d);
}

/* The Cholesky factor L of the symmetric M held in the upper triangle of A (M_ij = A[i d + j],
 * i <= j), written into A's strict lower triangle and, its diagonal, into dg: column by column
 * (left-looking), each sum in ascending k, in the compute format (a step's workspace, never
 * stored). *pmin gets the smallest pivot M_jj - sum_k L_jk^2 while all are positive, else the
 * first that is not (<= 0, or NaN); the arithmetic goes on past it (the square root of a negative
 * number is NaN), so a failed factorization shows, and the caller reports it. */
VLA_FN void FN(chol_factor)(CXP, NUM *A, NUM *dg, int d, NREF pmin)
{
    FRAME_BEGIN;
    SCALAR(p);
    SCALAR(q);
    SCALAR(t);
    SCALAR(zero);
    SETI(zero, 0);
    for (int j = 0; j < d; j++) {
        COPY(p, E(A, (size_t)j * d + j));
        for (int k = 0; k < j; k++) {
            TEMP(t);
            MUL(t, E(A, (size_t)j * d + k), E(A, (size_t)j * d + k));
            SUB(p, p, t);
        }
        if (j == 0)
            COPY(R(pmin), p);
        /* while pmin > 0: where p < pmin, or p is not a number */
        LANE_IF(PNOT(POR(PNOT(LESS(zero, R(pmin))), PNOT(POR(LESS(p, R(pmin)), PNOT(ISFIN(p))))))) {
            COPY(R(pmin), p);
        } LANE_END
        SQRT(E(dg, j), p);
        VLA_PFOR(i, j + 1, d) {
            COPY(q, E(A, (size_t)j * d + i));
            for (int k = 0; k < j; k++) {
                TEMP(t);
                MUL(t, E(A, (size_t)i * d + k), E(A, (size_t)j * d + k));
                SUB(q, q, t);
            }
            DIV(E(A, (size_t)i * d + j), q, E(dg, j));
        }
    }
    FRAME_END;
}

/* S += e a^T (S dv x d), stored */
VLA_FN void FN(modulate)(CXP, NUM *S, const NUM *e, const NUM *a, int dv, int d)
{
    FRAME_BEGIN;
    SCALAR(t);
    VLA_PFOR(i, 0, dv)
        for (int j = 0; j < d; j++) {
            TEMP(t);
            MUL(t, E(e, i), E(a, j));
            ADD(E(S, (size_t)i * d + j), E(S, (size_t)i * d + j), t);
            STORE(E(S, (size_t)i * d + j));
        }
    FRAME_END;
}

/* S /= ||S||_F when ||S||_F > threshold; returns where it did */
VLA_FN LPRED FN(renorm)(CXP, NUM *S, int dv, int d, NREF threshold)
{
    FRAME_BEGIN;
    SCALAR(f);
    FN(norm2)(CX, P(f), S, dv * d);
    LPRED did = LESS(R(threshold), f);
    LANE_IF(did) {
        VLA_PFOR(i, 0, dv * d) {
            DIV(E(S, i), E(S, i), f);
            STORE(E(S, i));
        }
    } LANE_END
    FRAME_END;
    return did;
}

/* e = v - S x: the residual of the value against the memory's prediction for key x */
VLA_FN void FN(residual)(CXP, NUM *e, const NUM *v, const NUM *S, const NUM *x, int dv, int d)
{
    FN(matvec)(CX, e, S, x, dv, d);
    VLA_PFOR(i, 0, dv)
        SUB(E(e, i), E(v, i), E(e, i));
}

/* ---- the models ---- */

/* A run's state: the arrays of tables.h's list (VLA_STATE_ARRAYS), the step t, the counters */
typedef struct {
    vla_config cfg;
    int d, dv;
    long t;
#define VLA_X_(name, len) NUM *name;
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    vla_counts cnt;
    vla_sr_state sr; /* sr: the random words (the native context points here) */
} ST;

#ifndef VLA_RECUR_DEVICE
/* an array's allocation: a form's arrays are empty in the other forms, and an allocator may
 * answer NULL for nothing */
static inline size_t FN(alloc_len)(long len) { return len > 0 ? (size_t)len : 1; }

VLA_FN void FN(vstate_free)(CXP, ST *s)
{
    if (!s)
        return;
    VLA_DIMS_LOCALS(vla_dims_of(&s->cfg));
#define VLA_X_(name, len) NUM_FREE(s->name, FN(alloc_len)(len));
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    free(s);
}

/* the constants of cfg (C_ of tables.h), computed in the compute format */
VLA_FN void FN(vstate_consts)(CXP, const vla_config *cfg, NUM *c)
{
    SETD(E(c, C_LAMBDA_INV), cfg->lambda0);
    SETI(E(c, C_SQRTD), 1);
    DIV(E(c, C_LAMBDA_INV), E(c, C_SQRTD), E(c, C_LAMBDA_INV)); /* 1 / lambda0, computed */
    SETD(E(c, C_EPS_G), cfg->eps_g);
    SETD(E(c, C_STAB), cfg->stab_eps);
    SETD(E(c, C_PER), cfg->per_eps);
    SETD(E(c, C_EPS_O), cfg->eps_o);
    SETD(E(c, C_CLIP), cfg->clip);
    SETD(E(c, C_CLAMP), cfg->clamp);
    SETD(E(c, C_CLAMP_EPS), cfg->clamp_eps);
    SETD(E(c, C_RENORM), cfg->renorm);
    SETD(E(c, C_BETA), cfg->beta);
    SETI(E(c, C_SQRTD), cfg->d);
    SQRT(E(c, C_SQRTD), E(c, C_SQRTD));
    SETD(E(c, C_LAMBDA0), cfg->lambda0);
    SETD(E(c, C_GAMMA), cfg->gamma);
    SQRT(E(c, C_SQRTG), E(c, C_GAMMA));
    SETI(E(c, C_FREG), 1);
    SUB(E(c, C_FREG), E(c, C_FREG), E(c, C_GAMMA));
    MUL(E(c, C_FREG), E(c, C_FREG), E(c, C_LAMBDA0)); /* (1 - gamma) lambda0, computed */
    /* cg stops where its residual reaches tol ||b|| or, for any tol, the rounding level
     * u ||b|| of the policy's compute format (its exact reference too): beyond it the true
     * residual stagnates, while the recursive one goes on shrinking into underflow */
    SETD(E(c, C_TOL), fmax(cfg->solve_tol, vla_fmt_unit_roundoff(vla_prec_compute(cfg->prec))));
}

/* cfg has been checked. Arrays start at +0; A_0 = I / lambda0 is computed in the compute format
 * and stored, like every later value of A. */
VLA_FN int FN(vstate_new)(CXP, const vla_config *cfg, ST **out)
{
    ST *s = calloc(1, sizeof *s);
    if (!s)
        return VLA_ENOMEM;
    int ok = 1;
    VLA_DIMS_LOCALS(vla_dims_of(cfg));
    s->cfg = *cfg;
    s->sr.seed = cfg->sr_seed;
    s->d = d;
    s->dv = dv;
#define VLA_X_(name, len) ok &= (s->name = NUM_ALLOC(FN(alloc_len)(len))) != NULL;
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    if (!ok) {
        FN(vstate_free)(CX, s);
        return VLA_ENOMEM;
    }
    NUM *c = s->c;
    ARITH_ENTER;
    FN(vstate_consts)(CX, cfg, c);
    if (cfg->track == VLA_TRACK_CHOL) { /* L_0 = sqrt(lambda0) I, the factor of M_0 */
        for (int i = 0; i < d; i++) {
            SETD(E(s->A, (size_t)i * d + i), cfg->lambda0);
            SQRT(E(s->A, (size_t)i * d + i), E(s->A, (size_t)i * d + i));
            STORE(E(s->A, (size_t)i * d + i));
        }
    } else if (vla_track_holds(cfg->track) == VLA_HOLDS_M) { /* M_0 = lambda0 I */
        for (int i = 0; i < d; i++) {
            COPY(E(s->A, (size_t)i * d + i), E(c, C_LAMBDA0));
            STORE(E(s->A, (size_t)i * d + i));
        }
    } else {
        for (int i = 0; i < d; i++) {
            COPY(E(s->A, (size_t)i * d + i), E(c, C_LAMBDA_INV));
            STORE(E(s->A, (size_t)i * d + i));
        }
    }
    ARITH_LEAVE;
    *out = s;
    return VLA_OK;
}

#endif

/* Forgetting in the ways that track A (docs/math.md 4.10), before the rank-1 update: RLS with
 * forgetting, M <- gamma M, as A <- A / gamma (every entry, stored) or, for chol, L <- sqrt(gamma)
 * L (the lower triangle, stored). The ways that keep M forget inside their update (update_M). */
VLA_FN void FN(forget)(CXP, ST *s)
{
    int d = s->d;
    if (s->cfg.gamma == 1)
        return;
    if (s->cfg.track == VLA_TRACK_CHOL) {
        VLA_PFOR(i, 0, d)
            for (int j = 0; j <= i; j++) {
                MUL(E(s->A, (size_t)i * d + j), E(s->A, (size_t)i * d + j), E(s->c, C_SQRTG));
                STORE(E(s->A, (size_t)i * d + j));
            }
    } else {
        VLA_PFOR(i, 0, d * d) {
            DIV(E(s->A, i), E(s->A, i), E(s->c, C_GAMMA));
            STORE(E(s->A, i));
        }
    }
}

/* The rank-1 change of the penalty, M += u u^T, in each way of tracking A (the array s->A holds
 * A, for chol the Cholesky factor L of M, for solve, cg and cheb M itself): update_<update> of
 * vlalists.h's VLA_TRACKS. The guard applies where there is a delta (sm, sm-sym, joseph). */
VLA_FN void FN(update_sm)(CXP, ST *s, const NUM *u, int guard, NREF eps)
{
    FN(forget)(CX, s);
    FN(sm_update)(CX, s->A, u, s->d, s->z, guard, eps, 0, s->cfg.track == VLA_TRACK_SR,
                  &s->cnt.guard);
}
VLA_FN void FN(update_smsym)(CXP, ST *s, const NUM *u, int guard, NREF eps)
{
    FN(forget)(CX, s);
    FN(sm_update)(CX, s->A, u, s->d, s->z, guard, eps, 1, 0, &s->cnt.guard);
}
VLA_FN void FN(update_joseph)(CXP, ST *s, const NUM *u, int guard, NREF eps)
{
    FN(forget)(CX, s);
    FN(joseph_update)(CX, s->A, u, s->d, s->z, s->e2, guard, eps, &s->cnt.guard);
}
VLA_FN void FN(update_chol)(CXP, ST *s, const NUM *u, int guard, NREF eps)
{
    FN(forget)(CX, s);
    FN(chol_update)(CX, s->A, u, s->d, s->z);
}
/* solve, cg, cheb: M <- gamma M + u u^T + (1 - gamma) lambda0 I (gamma = 1: M += u u^T), each
 * entry of the upper triangle computed in the compute format and rounded once when stored, then
 * mirrored (M exactly symmetric). There is no delta, so no guard. */
VLA_FN void FN(update_M)(CXP, ST *s, const NUM *u, int guard, NREF eps)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, forget = s->cfg.gamma != 1;
    NUM *M = s->A;
    VLA_PFOR(i, 0, d)
        for (int j = i; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            TEMP(t);
            MUL(t, E(u, i), E(u, j));
            if (forget) {
                MUL(E(M, ij), E(M, ij), E(s->c, C_GAMMA));
                if (j == i)
                    ADD(E(M, ij), E(M, ij), E(s->c, C_FREG));
            }
            ADD(E(M, ij), E(M, ij), t);
            STORE(E(M, ij));
            COPY(E(M, (size_t)j * d + i), E(M, ij));
        }
    FRAME_END;
}

/* y = A x from the tracked representation: apply_<apply> of VLA_TRACKS (sym: A is exactly
 * symmetric, so down the columns; chol: two triangular solves) */
VLA_FN void FN(apply_sym)(CXP, ST *s, NUM *y, const NUM *x)
{
    FN(matvec_t)(CX, y, s->A, x, s->d, s->d);
}
VLA_FN void FN(apply_gen)(CXP, ST *s, NUM *y, const NUM *x)
{
    FN(matvec)(CX, y, s->A, x, s->d, s->d);
}
VLA_FN void FN(apply_chol)(CXP, ST *s, NUM *y, const NUM *x)
{
    FN(chol_solve)(CX, s->A, y, x, s->d);
}

/* ---- the ways that keep M (docs/math.md 4.7-4.9): y = M^-1 x solved at every step. Their saved
 * array sx holds the warm starts of cg and cheb (the write's solve into al, then the read's, vla1's
 * A q), and at sx[2d] the last solve's health, at sx[2d + 1] 1 once a solve failed, at sx[2d + 2]
 * the first failure's value (VLA_Q_SOLVER). ---- */

/* a solve that failed where fl is 1: counted; the first failure's step (t: the solve's token's,
 * which a chunk solves at its end) and value kept */
VLA_FN void FN(solve_fail)(CXP, ST *s, NREF fl, NREF fv, long t)
{
    NUM *f = VLA_ROWP(s->sx, 2 * (size_t)s->d);
    LANE_IF(PNOT(LESSD(R(fl), 0.5))) {
        COUNT(s->cnt.solve_fail);
        LANE_IF(LESSD(E(f, 1), 0.5)) {
            SETI(E(f, 1), 1);
            COPY(E(f, 2), R(fv));
            COUNT_ADD(s->cnt.solve_fail_t, t);
        } LANE_END
    } LANE_END
}

/* the end of an iterative solve: y = x; its health ||r|| / ||b|| (rn, bn); a failure where the
 * residual ended above ||b|| (x = 0 would have done better; with a warm start a residual can
 * shrink within every solve and still grow from one step to the next), or is not a number (fl,
 * fv: a failure the iteration met on the way) */
VLA_FN void FN(solve_end)(CXP, ST *s, NUM *y, const NUM *x, NREF rn, NREF bn, NREF fl, NREF fv,
                          long t)
{
    NUM *f = VLA_ROWP(s->sx, 2 * (size_t)s->d);
    VLA_PFOR(i, 0, s->d)
        COPY(E(y, i), E(x, i));
    DIV(E(f, 0), R(rn), R(bn));
    LANE_IF(POR(LESS(R(bn), R(rn)), PNOT(ISFIN(R(rn))))) {
        LANE_IF(LESSD(R(fl), 0.5)) {
            SETI(R(fl), 1);
            COPY(R(fv), E(f, 0));
        } LANE_END
    } LANE_END
    FN(solve_fail)(CX, s, fl, fv, t);
}

/* solve: a Cholesky factorization of M at every solve (its factor in A's lower triangle and z,
 * workspace), then two triangular solves; the health is the smallest pivot, and a pivot <= 0
 * (or not a number) is a failure */
VLA_FN void FN(apply_solve)(CXP, ST *s, NUM *y, const NUM *x)
{
    FRAME_BEGIN;
    SCALAR(fl);
    SCALAR(zero);
    NUM *f = VLA_ROWP(s->sx, 2 * (size_t)s->d);
    COUNT(s->cnt.solves);
    FN(chol_factor)(CX, s->A, s->z, s->d, P(E(f, 0)));
    SETI(zero, 0);
    SETI(fl, 0);
    LANE_IF(PNOT(LESS(zero, E(f, 0)))) {
        SETI(fl, 1);
    } LANE_END
    FN(solve_fail)(CX, s, P(fl), P(E(f, 0)), s->t);
    FN(tri_solve)(CX, s->A, s->z, 1, y, x, s->d);
    FRAME_END;
}

/* the warm start of a solve into y: the write's (into al) or the read's */
VLA_FN NUM *FN(warm)(CXP, ST *s, const NUM *y)
{
    return VLA_ROWP(s->sx, y == s->al ? 0 : (size_t)s->d);
}

/* M_r p for token r of a chunk, without forming M_r (recur_forms.h) */
VLA_FN void FN(chunk_mv)(CXP, ST *s, NUM *q, const NUM *p, int r);

/* cg: conjugate gradients, cfg.solve_k iterations, or with cfg.solve_tol until ||r|| <= tol ||b||
 * (at most 2d); either way a lane stops once ||r|| <= u ||b|| (C_TOL). r, p, q: z, e2, y. A step
 * with p.Mp <= 0 (M not positive definite along p) is a failure, and the iteration goes on.
 * tok < 0: the sequential form's, from the previous solution (MesaNet's warm start, x = warm(y)),
 * the products by the stored M; tok >= 0: token tok of a chunk (recur_forms.h's MesaNet
 * arrangement), from x = 0 (fla's cold start: no token has its predecessor's solution) in row tok
 * of cz, the products by chunk_mv, a failure counted at the token's step. */
VLA_FN void FN(cg)(CXP, ST *s, NUM *y, const NUM *b, int tok)
{
    FRAME_BEGIN;
    SCALAR(rr);
    SCALAR(rn);
    SCALAR(bn);
    SCALAR(thr);
    SCALAR(pq);
    SCALAR(a);
    SCALAR(t);
    SCALAR(zero);
    SCALAR(fl);
    SCALAR(fv);
    const int d = s->d, kmax = s->cfg.solve_tol > 0 ? 2 * d : s->cfg.solve_k;
    NUM *x = tok < 0 ? FN(warm)(CX, s, y) : VLA_ROWP(s->cz, (size_t)tok * d), *r = s->z, *p = s->e2,
        *q = y;
    COUNT(s->cnt.solves);
    SETI(zero, 0);
    SETI(fl, 0);
    SETI(fv, 0);
    if (tok < 0)
        FN(matvec_t)(CX, q, s->A, x, d, d);
    VLA_PFOR(i, 0, d) {
        if (tok < 0) {
            SUB(E(r, i), E(b, i), E(q, i));
        } else {
            SETI(E(x, i), 0);
            COPY(E(r, i), E(b, i));
        }
        COPY(E(p, i), E(r, i));
    }
    FN(dot)(CX, P(rr), r, r, d);
    SQRT(rn, rr);
    FN(norm2)(CX, P(bn), b, d);
    MUL(thr, E(s->c, C_TOL), bn);
    for (int it = 0; it < kmax; it++) {
        LANE_IF(LESS(thr, rn)) {
            COUNT(s->cnt.solve_iters);
            if (tok < 0)
                FN(matvec_t)(CX, q, s->A, p, d, d);
            else
                FN(chunk_mv)(CX, s, q, p, tok);
            FN(dot)(CX, P(pq), p, q, d);
            LANE_IF(PNOT(LESS(zero, pq))) {
                LANE_IF(LESSD(fl, 0.5)) {
                    SETI(fl, 1);
                    COPY(fv, pq);
                } LANE_END
            } LANE_END
            DIV(a, rr, pq);
            VLA_PFOR(i, 0, d) {
                TEMP(t);
                MUL(t, a, E(p, i));
                ADD(E(x, i), E(x, i), t);
                MUL(t, a, E(q, i));
                SUB(E(r, i), E(r, i), t);
            }
            FN(dot)(CX, P(pq), r, r, d); /* pq: r.r of the new residual */
            DIV(a, pq, rr);
            VLA_PFOR(i, 0, d) {
                TEMP(t);
                MUL(t, a, E(p, i));
                ADD(E(p, i), E(r, i), t);
            }
            COPY(rr, pq);
            SQRT(rn, rr);
        } LANE_END
    }
    FN(solve_end)(CX, s, y, x, P(rn), P(bn), P(fl), P(fv),
                  tok < 0 ? s->t : s->t - s->cfg.chunk + 1 + tok);
    FRAME_END;
}
VLA_FN void FN(apply_cg)(CXP, ST *s, NUM *y, const NUM *b) { FN(cg)(CX, s, y, b, -1); }

/* cheb: cfg.solve_k steps of Chebyshev iteration (Saad, Iterative Methods, algorithm 12.1) from
 * the previous solution, on the interval [lambda0, g]: lambda0 bounds M from below in exact
 * arithmetic (M_0 = lambda0 I and every update adds a positive semidefinite term; with
 * forgetting too), g is Gershgorin's bound max_i sum_j |M_ij| >= lambda_max. Written with
 * theta = (g + lambda0) / 2, delta = (g - lambda0) / 2 and no division by delta:
 *   d_0 = r_0 / theta, rho_0 = delta / theta;  x += d;  r -= M d;  h = 2 theta - delta rho;
 *   rho' = delta / h;  d = rho' rho d + (2 / h) r;  rho = rho'
 * (delta = 0, M = lambda0 I, is then Richardson's step, exact). r, d, q: z, e2, y. */
VLA_FN void FN(apply_cheb)(CXP, ST *s, NUM *y, const NUM *b)
{
    FRAME_BEGIN;
    SCALAR(g);
    SCALAR(row);
    SCALAR(m);
    SCALAR(th);
    SCALAR(th2);
    SCALAR(dl);
    SCALAR(rho);
    SCALAR(h);
    SCALAR(t);
    SCALAR(two);
    SCALAR(zero);
    SCALAR(rn);
    SCALAR(bn);
    SCALAR(fl);
    SCALAR(fv);
    const int d = s->d;
    NUM *x = FN(warm)(CX, s, y), *r = s->z, *dv = s->e2, *q = y, *M = s->A;
    COUNT(s->cnt.solves);
    COUNT_ADD(s->cnt.solve_iters, s->cfg.solve_k);
    SETI(zero, 0);
    SETI(two, 2);
    SETI(fl, 0);
    SETI(fv, 0);
    SETI(g, 0);
    for (int i = 0; i < d; i++) { /* Gershgorin: the largest absolute row sum (NaN stays) */
        SETI(row, 0);
        for (int j = 0; j < d; j++) {
            TEMP(m);
            COPY(m, E(M, (size_t)i * d + j));
            LANE_IF(LESS(m, zero)) {
                SUB(m, zero, m);
            } LANE_END
            ADD(row, row, m);
        }
        LANE_IF(POR(LESS(g, row), PNOT(ISFIN(row)))) {
            COPY(g, row);
        } LANE_END
    }
    ADD(th, g, E(s->c, C_LAMBDA0));
    DIV(th, th, two);
    SUB(dl, g, E(s->c, C_LAMBDA0));
    DIV(dl, dl, two);
    DIV(rho, dl, th);
    MUL(th2, two, th);
    FN(matvec_t)(CX, q, M, x, d, d);
    VLA_PFOR(i, 0, d) {
        SUB(E(r, i), E(b, i), E(q, i));
        DIV(E(dv, i), E(r, i), th);
    }
    FN(norm2)(CX, P(bn), b, d);
    for (int it = 0; it < s->cfg.solve_k; it++) {
        FN(matvec_t)(CX, q, M, dv, d, d);
        VLA_PFOR(i, 0, d) {
            ADD(E(x, i), E(x, i), E(dv, i));
            SUB(E(r, i), E(r, i), E(q, i));
        }
        MUL(h, dl, rho);
        SUB(h, th2, h);
        DIV(t, dl, h);
        MUL(rho, t, rho); /* rho' rho */
        DIV(h, two, h);
        VLA_PFOR(i, 0, d) {
            TEMP(m);
            MUL(E(dv, i), rho, E(dv, i));
            MUL(m, h, E(r, i));
            ADD(E(dv, i), E(dv, i), m);
        }
        COPY(rho, t);
    }
    FN(norm2)(CX, P(rn), r, d);
    FN(solve_end)(CX, s, y, x, P(rn), P(bn), P(fl), P(fv), s->t);
    FRAME_END;
}

/* The dispatches of this file are made from the lists, each function named in parentheses, so
 * that a row without its function is an undeclared identifier, never a silent default. */
VLA_FN void FN(penalty_update)(CXP, ST *s, const NUM *u, int guard, NREF eps)
{
    switch (s->cfg.track) {
#define VLA_X_(ID, name, update, apply, holds)                                                    \
    case VLA_TRACK_##ID:                                                                           \
        (FN(update_##update))(CX, s, u, guard, eps);                                               \
        break;
        VLA_TRACKS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}

VLA_FN void FN(apply_A)(CXP, ST *s, NUM *y, const NUM *x)
{
    switch (s->cfg.track) {
#define VLA_X_(ID, name, update, apply, holds)                                                    \
    case VLA_TRACK_##ID:                                                                           \
        (FN(apply_##apply))(CX, s, y, x);                                                          \
        break;
        VLA_TRACKS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}

#ifndef VLA_RECUR_DEVICE
/* LOAD_IN_N(dst, x, n), LOAD_PHI_N(dst, x, n): LOAD_IN and LOAD_PHI of x[0..n) into dst, an
 * arithmetic's batched form where it has one */
#ifndef LOAD_IN_N
#define LOAD_IN_N(dst, x, n)                                                                       \
    do {                                                                                           \
        for (int i_ = 0; i_ < (n); i_++)                                                           \
            LOAD_IN(E(dst, i_), (x)[i_]);                                                          \
    } while (0)
#endif
#ifndef LOAD_PHI_N
#define LOAD_PHI_N(dst, x, n)                                                                      \
    do {                                                                                           \
        for (int i_ = 0; i_ < (n); i_++)                                                           \
            LOAD_PHI(E(dst, i_), (x)[i_]);                                                         \
    } while (0)
#endif
/* Rounds this step's inputs into the storage format; phi is applied in binary64 before that
 * rounding (SPEC section 5), the identity map when cfg.features says so. Host only: a device
 * takes inputs that the host prepared with this function. */
VLA_FN void FN(load)(CXP, ST *s, const vla_input *in)
{
    int d = s->d, dv = s->dv, phi = s->cfg.features == VLA_FEAT_OWN;
    LOAD_IN_N(s->q, in->q, d);
    LOAD_IN_N(s->k, in->k, d);
    LOAD_IN_N(s->u, in->u ? in->u : in->k, d);
    if (phi) {
        LOAD_PHI_N(s->pk, in->k, d);
        LOAD_PHI_N(s->pq, in->q, d);
    } else {
        for (int i = 0; i < d; i++) {
            COPY(E(s->pk, i), E(s->k, i));
            COPY(E(s->pq, i), E(s->q, i));
        }
    }
    LOAD_IN_N(s->v, in->v, dv);
    if (in->g)
        LOAD_IN_N(s->g, in->g, dv);
    if (isnan(in->beta))
        COPY(E(s->beta_decay, 0), E(s->c, C_BETA));
    else
        LOAD_IN(E(s->beta_decay, 0), in->beta);
    if (isnan(in->decay)) {
        SETI(E(s->beta_decay, 1), 1);
        SETI(E(s->beta_decay, 2), 0);
    } else { /* log(a), an input as fla's g (a = 0: -Inf, which vla_form_input_why refuses) */
        LOAD_IN(E(s->beta_decay, 1), in->decay);
        LOAD_LOG(E(s->beta_decay, 2), in->decay);
    }
}
#endif

/* A read-out's denominator that is not finite (n . x overflowed: o = S x / Inf = 0, silently) is
 * an event: counted, and the step t of the first kept (ev[0] says that there was one) */
VLA_FN void FN(den_check)(CXP, ST *s, NREF den, long t)
{
    LANE_IF(PNOT(ISFIN(R(den)))) {
        COUNT(s->cnt.den_inf);
        LANE_IF(LESSD(E(s->ev, 0), 0.5)) {
            COUNT_ADD(s->cnt.den_inf_t, t);
        } LANE_END
        VLA_PFOR(i, 0, 1)
            SETI(E(s->ev, i), 1);
    } LANE_END
}

/* o = S x / max(n . x, floor) when the model normalizes, else S x */
VLA_FN void FN(readout)(CXP, ST *s, const NUM *x, NREF floor)
{
    FRAME_BEGIN;
    SCALAR(den);
    FN(matvec)(CX, s->o, s->S, x, s->dv, s->d);
    if (s->cfg.normalize) {
        FN(dot)(CX, P(den), s->n, x, s->d);
        LANE_IF(LESS(den, R(floor))) {
            COPY(den, R(floor));
        } LANE_END
        FN(den_check)(CX, s, P(den), s->t);
        VLA_PFOR(i, 0, s->dv)
            DIV(E(s->o, i), E(s->o, i), den);
    }
    FRAME_END;
}

/* The read-out of query q (raw q already loaded into s->q, s->pq), per model: read_<tok> */
VLA_FN void FN(read_la)(CXP, ST *s) { FN(readout)(CX, s, s->pq, P(E(s->c, C_EPS_O))); }
VLA_FN void FN(read_delta)(CXP, ST *s) { FN(readout)(CX, s, s->pq, P(E(s->c, C_STAB))); }
VLA_FN void FN(read_rls)(CXP, ST *s) { FN(readout)(CX, s, s->q, P(E(s->c, C_STAB))); }
VLA_FN void FN(read_vla1)(CXP, ST *s) /* o = S (A q) */
{
    FN(apply_A)(CX, s, s->w, s->q);
    FN(readout)(CX, s, s->w, P(E(s->c, C_STAB)));
}
VLA_FN void FN(read_vla3)(CXP, ST *s) { FN(readout)(CX, s, s->pq, P(E(s->c, C_STAB))); }

VLA_FN void FN(read_loaded)(CXP, ST *s)
{
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, normalize)                                                         \
    case VLA_##ID:                                                                                 \
        (FN(read_##tok))(CX, s);                                                                   \
        break;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}

/* u', the vector whose outer product a step adds to M = A^-1, per model with A: uprime_<tok>
 * computes it from the loaded inputs (into w, or returns the input that is u') */
VLA_FN NUM *FN(uprime_rls)(CXP, ST *s) { return s->k; }

VLA_FN NUM *FN(uprime_vla1)(CXP, ST *s) /* u / sqrt(d) */
{
    VLA_PFOR(j, 0, s->d)
        DIV(E(s->w, j), E(s->u, j), E(s->c, C_SQRTD));
    return s->w;
}

VLA_FN NUM *FN(uprime_vla3)(CXP, ST *s) /* unit(u) / sqrt(d) */
{
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->w, j), E(s->u, j));
    FN(unit)(CX, s->w, s->d, &s->cnt.zero_norm);
    VLA_PFOR(j, 0, s->d)
        DIV(E(s->w, j), E(s->w, j), E(s->c, C_SQRTD));
    return s->w;
}

/* u' of the model (NULL: it has no A) */
__attribute__((unused)) VLA_FN NUM *FN(uprime)(CXP, ST *s)
{
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, normalize)                                                         \
    VLA_IF(has_A, case VLA_##ID : return (FN(uprime_##tok))(CX, s);)
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return NULL;
    }
}

/* n += x, stored */
VLA_FN void FN(accumulate)(CXP, NUM *n, const NUM *x, int d)
{
    VLA_PFOR(i, 0, d) {
        ADD(E(n, i), E(n, i), E(x, i));
        STORE(E(n, i));
    }
}

/* ---- the models: vec_<tok> and step_<tok> of vlalists.h's VLA_MODELS, a step once its inputs
 * are loaded (has_g: the input carried a gate). vec_<tok> computes what the step writes S with,
 * A's update included, and leaves S alone: the write direction k' (kp) and alpha (al), which
 * step_<tok> (the sequential form) and the scan (scan_step) share. ---- */

VLA_FN void FN(vec_la)(CXP, ST *s)
{
    VLA_PFOR(j, 0, s->d) { /* S_t = S_{t-1} + v phi(k)^T: the Jacobian is I */
        COPY(E(s->kp, j), E(s->pk, j));
        SETI(E(s->al, j), 0);
    }
}

VLA_FN void FN(step_la)(CXP, ST *s, int has_g)
{
    FN(vec_la)(CX, s);
    FN(modulate)(CX, s->S, s->v, s->pk, s->dv, s->d);
    FN(accumulate)(CX, s->n, s->pk, s->d);
}

/* k' = unit(k) (keynorm off: k), and the Jacobian's (gate aside) I - k' (beta k')^T */
VLA_FN void FN(vec_delta)(CXP, ST *s)
{
    int d = s->d;
    VLA_PFOR(j, 0, d)
        COPY(E(s->kp, j), E(s->k, j));
    if (s->cfg.keynorm)
        FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
    VLA_PFOR(j, 0, d)
        MUL(E(s->al, j), E(s->beta_decay, 0), E(s->kp, j));
}

/* gated: S = diag(g) S + beta (v - S k') k'^T, the error from the ungated S_{t-1};
 * decay (fla): S' = a S, then S = S' + beta (v - S' k') k'^T */
VLA_FN void FN(step_delta)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(b);
    SCALAR(t);
    int d = s->d, dv = s->dv;
    NUM *S = s->S;
    FN(vec_delta)(CX, s);
    if (s->cfg.delta_form == VLA_DELTA_DECAY) {
        VLA_PFOR(i, 0, dv * d) {
            MUL(E(S, i), E(s->beta_decay, 1), E(S, i));
            STORE(E(S, i));
        }
    }
    FN(residual)(CX, s->e, s->v, S, s->kp, dv, d);
    VLA_PFOR(i, 0, dv) {
        MUL(b, E(s->beta_decay, 0), E(s->e, i));
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            TEMP(t);
            if (has_g && s->cfg.delta_form == VLA_DELTA_GATED)
                MUL(E(S, ij), E(s->g, i), E(S, ij));
            MUL(t, b, E(s->kp, j));
            ADD(E(S, ij), E(S, ij), t);
            STORE(E(S, ij));
        }
    }
    FRAME_END;
}

/* exact online regularized least squares: w = A k, A -= w w^T / (1 + k.w), gain = A_t k */
VLA_FN void FN(vec_rls)(CXP, ST *s)
{
    FN(penalty_update)(CX, s, FN(uprime_rls)(CX, s), s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                       P(E(s->c, C_EPS_G)));
    FN(apply_A)(CX, s, s->al, s->k);
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->kp, j), E(s->k, j));
}

/* S += (v - S k) gain^T */
VLA_FN void FN(step_rls)(CXP, ST *s, int has_g)
{
    FN(vec_rls)(CX, s);
    FN(residual)(CX, s->e, s->v, s->S, s->k, s->dv, s->d);
    FN(modulate)(CX, s->S, s->e, s->al, s->dv, s->d);
}

VLA_FN void FN(nudge)(CXP, ST *s)
{
    if (s->cfg.nudge && s->t % s->cfg.period == 0) {
        FN(add_diag)(CX, s->A, s->d, P(E(s->c, C_PER)));
        s->cnt.nudge++;
    }
}

/* v1: u' = u / sqrt(d); guarded SM; nudge; alpha = A k */
VLA_FN void FN(vec_vla1)(CXP, ST *s)
{
    FN(penalty_update)(CX, s, FN(uprime_vla1)(CX, s), s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                       P(E(s->c, C_EPS_G)));
    FN(nudge)(CX, s);
    FN(apply_A)(CX, s, s->al, s->k);
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->kp, j), E(s->k, j));
}

/* v1's write: e = v - S k clipped to ||e|| <= clip; S += e alpha^T */
VLA_FN void FN(write_vla1)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    int d = s->d, dv = s->dv;
    NUM *c = s->c;
    FN(residual)(CX, s->e, s->v, s->S, s->k, dv, d);
    FN(norm2)(CX, P(nrm), s->e, dv);
    LANE_IF(LESS(E(c, C_CLIP), nrm)) {
        DIV(nrm, E(c, C_CLIP), nrm);
        VLA_PFOR(i, 0, dv)
            MUL(E(s->e, i), E(s->e, i), nrm);
        COUNT(s->cnt.clip);
    } LANE_END
    FN(modulate)(CX, s->S, s->e, s->al, dv, d);
    FRAME_END;
}

/* the clamp: ||S||_F or ||A||_F > clamp adds clamp_eps I to A */
VLA_FN void FN(step_vla1)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    int d = s->d, dv = s->dv;
    NUM *c = s->c;
    FN(vec_vla1)(CX, s);
    FN(write_vla1)(CX, s);
    if (s->cfg.clamp_on) {
        LPRED fire;
        FN(norm2)(CX, P(nrm), s->S, dv * d);
        fire = LESS(E(c, C_CLAMP), nrm);
        LANE_IF(PNOT(fire)) {
            FN(norm2)(CX, P(nrm), s->A, d * d);
            fire = POR(fire, LESS(E(c, C_CLAMP), nrm));
        } LANE_END
        LANE_IF(fire) {
            FN(add_diag)(CX, s->A, d, P(E(c, C_CLAMP_EPS)));
            COUNT(s->cnt.clamp);
        } LANE_END
    }
    FRAME_END;
}

/* v3: u' = unit(u) / sqrt(d); SM with delta floored at stab_eps; nudge; k' = unit(phi(k));
 * alpha = unit(A k') */
VLA_FN void FN(vec_vla3)(CXP, ST *s)
{
    int d = s->d;
    FN(penalty_update)(CX, s, FN(uprime_vla3)(CX, s), s->cfg.guard ? GUARD_FLOOR : GUARD_NONE,
                       P(E(s->c, C_STAB)));
    FN(nudge)(CX, s);
    VLA_PFOR(j, 0, d)
        COPY(E(s->kp, j), E(s->pk, j));
    FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
    FN(apply_A)(CX, s, s->al, s->kp);
    FN(unit)(CX, s->al, d, &s->cnt.zero_norm);
}

/* S += (v - S k') alpha^T; n += phi(k) */
VLA_FN void FN(step_vla3)(CXP, ST *s, int has_g)
{
    FN(vec_vla3)(CX, s);
    FN(residual)(CX, s->e, s->v, s->S, s->kp, s->dv, s->d);
    FN(modulate)(CX, s->S, s->e, s->al, s->dv, s->d);
    FN(accumulate)(CX, s->n, s->pk, s->d);
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
#define VLA_X_(ID, tok, has_A, normalize)                                                         \
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
}

#ifndef VLA_RECUR_DEVICE
VLA_FN int FN(vstate_step)(CXP, ST *s, const vla_input *in)
{
    if (s->cfg.form == VLA_FORM_SCAN && s->t + 1 >= 1L << VLA_SCAN_LEVELS)
        return VLA_ERANGE; /* the scan's levels are full */
    ARITH_ENTER;
    FN(load)(CX, s, in);
    FN(vstate_advance)(CX, s, in->g != NULL);
    ARITH_LEAVE;
    return VLA_OK;
}

VLA_FN int FN(vstate_read)(CXP, ST *s, const double *q)
{
    if (vla_form_pending(&s->cfg, s->t)) /* no state inside a chunk (docs/forms.md) */
        return VLA_ENOTSUP;
    ARITH_ENTER;
    LOAD_IN_N(s->q, q, s->d);
    if (s->cfg.features == VLA_FEAT_OWN)
        LOAD_PHI_N(s->pq, q, s->d);
    else
        for (int i = 0; i < s->d; i++)
            COPY(E(s->pq, i), E(s->q, i));
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
