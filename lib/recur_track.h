/* recur_track.h: the ways of tracking A in recur.h's text (vlalists.h's VLA_TRACKS): forgetting,
 * the rank-1 change of the penalty in each way, y = A x from each representation, and the ways
 * that keep M and solve with it (solve, cg, cheb). Included by recur.h. */

/* Forgetting in the ways that track A (docs/math.md 4.10), before the rank-1 update: RLS with
 * forgetting, M <- gamma M, as A <- A / gamma (every entry, stored) or, for chol, L <- sqrt(gamma)
 * L (the lower triangle, stored). The ways that keep M forget inside their update (update_M). */
VLA_FN void FN(forget)(CXP, ST *s)
{
    int d = s->d;
    if (s->cfg.gamma == 1)
        return;
    if (VLA_TRACKING(s, CHOL)) {
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
    FN(sm_update)(CX, s->A, u, s->d, s->z, guard, eps, 0, VLA_TRACKING(s, SR),
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
        if (VLA_TRACK_ON(ID))                                                                      \
            (FN(update_##update))(CX, s, u, guard, eps);                                           \
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
        if (VLA_TRACK_ON(ID))                                                                      \
            (FN(apply_##apply))(CX, s, y, x);                                                      \
        break;
        VLA_TRACKS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}
