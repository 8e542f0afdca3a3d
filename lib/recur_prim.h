/* recur_prim.h: the primitives of recur.h's text (its arithmetic and instantiation are
 * recur.h's): vector kernels, unit(), the rank-1 updates of A (Sherman-Morrison, Joseph, Cholesky),
 * triangular solves and factorizations, S's write and residual. Included by recur.h. */

/* ---- vector kernels: every reduction left to right, starting from the first term ---- */

/* r = sum_j X[xo + j] Y[yo + j], j ascending from the first term: on flat offsets, for rows of
 * any length on any layout (the chunk forms' rows of dv numbers) */
VLA_PRIM void FN(dot_at)(CXP, NREF r, const NUM *X, long xo, const NUM *Y, long yo, int n)
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
VLA_PRIM void FN(dot)(CXP, NREF r, const NUM *x, const NUM *y, int n)
{
    FN(dot_at)(CX, r, x, 0, y, 0, n);
}

/* VLA_MATVEC_ROWS (the includer defines it): matvec and matvec_t below with eight rows' sums in
 * flight, y_i = sum_j M[i rs + j cs] x_j (matvec: rs = n, cs = 1; matvec_t: rs = 1, cs = m).
 * Each row's sum is still the chain of dot, first product then left to right, but eight
 * independent chains keep the pipeline full where one would wait out each addition's latency:
 * for an arithmetic whose every operation is a long one (vectors of lanes, lanes/klanes.h; pairs
 * of them, reference/ref_model_dd.c). */
#ifdef VLA_MATVEC_ROWS
VLA_PRIM int FN(matvec_rows)(CXP, NUM *y, const NUM *M, const NUM *x, int m, int n, size_t rs,
                           size_t cs)
{
    int i = 0;
    for (; i + 8 <= m; i += 8) {
        const NUM *r = M + (size_t)i * rs;
        NUM a[8], t[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            TEMP(a[k]);
            TEMP(t[k]);
            MUL(a[k], E(r, k * rs), E(x, 0));
        }
        for (int j = 1; j < n; j++)
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++) {
                TEMP(t[k]);
                MUL(t[k], E(r, k * rs + j * cs), E(x, j));
                ADD(a[k], a[k], t[k]);
            }
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++)
            COPY(E(y, i + k), a[k]);
    }
    for (; i < m; i++) {
        const NUM *r = M + (size_t)i * rs;
        NUM a, t;
        TEMP(a);
        TEMP(t);
        MUL(a, E(r, 0), E(x, 0));
        for (int j = 1; j < n; j++) {
            TEMP(t);
            MUL(t, E(r, j * cs), E(x, j));
            ADD(a, a, t);
        }
        COPY(E(y, i), a);
    }
    return 1;
}
#define VLA_MATVEC_HOOK(y, M, x, m, n) FN(matvec_rows)(CX, (y), (M), (x), (m), (n), (n), 1)
#define VLA_MATVEC_T_HOOK(y, M, x, m, n) FN(matvec_rows)(CX, (y), (M), (x), (m), (n), 1, (m))
#endif

/* y = M x, M m x n (y must not alias x). VLA_MATVEC_HOOK: a native policy's vectorized twin that
 * computes the same row sums in the same order, several rows at a time (1: done; 0: not taken). */
VLA_PRIM void FN(matvec)(CXP, NUM *y, const NUM *M, const NUM *x, int m, int n)
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
VLA_PRIM void FN(matvec_t)(CXP, NUM *y, const NUM *M, const NUM *x, int m, int n)
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
VLA_PRIM void FN(norm2)(CXP, NREF r, const NUM *x, int n)
{
    FN(dot)(CX, r, x, x, n);
    SQRT(R(r), R(r));
}

/* x <- x / ||x||_2. A norm below the smallest normal of the compute format, or not finite, is a
 * zero-norm event: x is left as it is and the event counted (never a NaN). */
VLA_PRIM void FN(unit)(CXP, NUM *x, int n, long *zero_norm)
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

/* x <- x / sqrt(x . x + eps): fla's l2norm (the epsilon inside the root; the gated family's q
 * and k), in the compute format */
VLA_PRIM void FN(l2norm)(CXP, NUM *x, int n, NREF eps)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    FN(dot)(CX, P(nrm), x, x, n);
    ADD(nrm, nrm, R(eps));
    SQRT(nrm, nrm);
    VLA_PFOR(i, 0, n)
        DIV(E(x, i), E(x, i), nrm);
    FRAME_END;
}

/* A += eps I, stored */
VLA_PRIM void FN(add_diag)(CXP, NUM *A, int d, NREF eps)
{
    VLA_PFOR(i, 0, d) {
        ADD(E(A, (size_t)i * d + i), E(A, (size_t)i * d + i), R(eps));
        STORE(E(A, (size_t)i * d + i));
    }
}

/* delta = 1 + u . z, guarded: GUARD_SKIP (vla1, section 3): |delta| < eps or delta not finite
 * skips the update and adds eps I to A (returns where it did); GUARD_FLOOR (vla3): delta =
 * max(delta, eps). Either counts into *guards. */
VLA_PRIM LPRED FN(sm_delta)(CXP, NREF delta, NUM *A, const NUM *u, const NUM *z, int d, int guard,
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
VLA_PRIM void FN(sm_update)(CXP, NUM *A, const NUM *u, int d, NUM *z, int guard, NREF eps, int sym,
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
VLA_PRIM void FN(joseph_update)(CXP, NUM *A, const NUM *u, int d, NUM *z, NUM *w, int guard,
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
VLA_PRIM void FN(chol_update)(CXP, NUM *L, const NUM *u, int d, NUM *x)
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
VLA_PRIM void FN(tri_solve)(CXP, const NUM *L, const NUM *dg, int ds, NUM *y, const NUM *x, int d)
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
VLA_PRIM void FN(chol_solve)(CXP, const NUM *L, NUM *y, const NUM *x, int d)
{
    FN(tri_solve)(CX, L, L, d + 1, y, x, d);
}

/* The Cholesky factor L of the symmetric M held in the upper triangle of A (M_ij = A[i d + j],
 * i <= j), written into A's strict lower triangle and, its diagonal, into dg: column by column
 * (left-looking), each sum in ascending k, in the compute format (a step's workspace, never
 * stored). *pmin gets the smallest pivot M_jj - sum_k L_jk^2 while all are positive, else the
 * first that is not (<= 0, or NaN); the arithmetic goes on past it (the square root of a negative
 * number is NaN), so a failed factorization shows, and the caller reports it. */
VLA_PRIM void FN(chol_factor)(CXP, NUM *A, NUM *dg, int d, NREF pmin)
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
VLA_PRIM void FN(modulate)(CXP, NUM *S, const NUM *e, const NUM *a, int dv, int d)
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
VLA_PRIM LPRED FN(renorm)(CXP, NUM *S, int dv, int d, NREF threshold)
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
VLA_PRIM void FN(residual)(CXP, NUM *e, const NUM *v, const NUM *S, const NUM *x, int dv, int d)
{
    FN(matvec)(CX, e, S, x, dv, d);
    VLA_PFOR(i, 0, dv)
        SUB(E(e, i), E(v, i), E(e, i));
}
