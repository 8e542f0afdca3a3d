/* models/mamba3.h: Mamba-3's SISO recurrence (docs/gated.md; the Mamba-3 paper's trapezoidal
 * discretization and data-dependent rotary embeddings, state-spaces/mamba's mamba3_siso step
 * reference):
 *   S_t = a_t S_{t-1} + beta_t v_{t-1} k~_{t-1}^T + gamma_t v_t k~_t^T,   o_t = S_t q~_t,
 * a_t = exp(g_t) (g = dt A, the log-decay), beta_t = (1 - lambda_t) dt_t a_t, gamma_t = lambda_t
 * dt_t, and k~, q~ the inputs with each key-channel pair (2p, 2p + 1) turned by the cumulative
 * angle Theta_t,p = sum_{s <= t} theta_s,p dt_s (the complex state made real). The trace maps
 * q = C, k = B, v = x, beta = lambda in [0, 1] (absent: the constant beta, 1/2 by default: the
 * trapezoid rule), decay = dt (absent: 1), logdecay = g, u = theta (pair p turns by u_p dt,
 * p < d/2). The state carries the last token's k~ (al, the last alpha), its v (vx), each pair's
 * angle Theta (th, summed and reduced mod 2 pi in the compute format, as the step reference
 * mamba3_siso_step_ref keeps its Angle_State) and its rotation e^(i Theta) (zr, the angle's cos
 * and sin). No D skip, no z gate; scale 1. MIMO (rank R = cfg.rank > 1, seq form only): q, k, v
 * and o hold R ranks' vectors side by side (n = d/R, p = dv/R each), S is the top-left p x n
 * block of the dv x d array, the angles those of the n/2 pairs, one per head, turning every rank:
 *   S_t = a_t S_{t-1} + beta_t sum_r v_{t-1,r} k~_{t-1,r}^T + gamma_t sum_r v_t,r k~_t,r^T,
 * o_t,r = S_t q~_t,r (state-spaces/mamba's mamba3_MIMO_step_ref, v_r its up-projected x). */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* y = R x (conj: R^T x), R turning pair (2p, 2p + 1) by z's (cos, sin) at (2p, 2p + 1): y_2p =
 * x_2p c - x_2p+1 s, y_2p+1 = x_2p s + x_2p+1 c; y may be x; an odd d's last entry as it is. The
 * odd entries go through tmp (d/2 numbers), each part in a loop of its own: in one loop GCC's
 * vectorizer takes the pair for a complex product and fuses it (fmaddsub), contraction off or not.
 * turn_at: y and x the d numbers from the offsets yo and xo (a rank's slice) */
VLA_FN void FN(turn_at)(CXP, NUM *y, long yo, const NUM *x, long xo, const NUM *z, NUM *tmp,
                        int d, int conj)
{
    FRAME_BEGIN;
    SCALAR(a);
    SCALAR(t);
    VLA_PFOR(p, 0, d / 2) {
        TEMP(a);
        TEMP(t);
        MUL(a, E(x, xo + 2 * p + 1), E(z, 2 * p));
        MUL(t, E(x, xo + 2 * p), E(z, 2 * p + 1));
        if (conj)
            SUB(E(tmp, p), a, t);
        else
            ADD(E(tmp, p), t, a);
    }
    VLA_PFOR(p, 0, d / 2) {
        TEMP(a);
        TEMP(t);
        MUL(a, E(x, xo + 2 * p), E(z, 2 * p));
        MUL(t, E(x, xo + 2 * p + 1), E(z, 2 * p + 1));
        if (conj)
            ADD(E(y, yo + 2 * p), a, t);
        else
            SUB(E(y, yo + 2 * p), a, t);
    }
    VLA_PFOR(p, 0, d / 2)
        COPY(E(y, yo + 2 * p + 1), E(tmp, p));
    VLA_PFOR(i, d - d % 2, d)
        COPY(E(y, yo + i), E(x, xo + i));
    FRAME_END;
}

VLA_FN void FN(turn)(CXP, NUM *y, const NUM *x, const NUM *z, NUM *tmp, int d, int conj)
{
    FN(turn_at)(CX, y, 0, x, 0, z, tmp, d, conj);
}

/* beta = (1 - lambda) dt a and gamma = lambda dt, the reference's order */
VLA_FN void FN(m3_weights)(CXP, ST *s, NREF bet, NREF gam)
{
    const NUM *bd = s->beta_decay;
    SETI(R(bet), 1);
    SUB(R(bet), R(bet), E(bd, 0));
    MUL(R(bet), R(bet), E(bd, 3));
    MUL(R(bet), R(bet), E(bd, 1));
    MUL(R(gam), E(bd, 0), E(bd, 3));
}

/* k' = 0, alpha = k~: each pair's angle moved on as the step reference moves it, Theta <- Theta +
 * theta dt, then reduced, Theta - 2 pi floor(Theta / 2 pi) (2 pi in the compute format), stored;
 * its cos and sin into zr, stored; then k~ = R k, stored (each rank's n = d/R, the n/2 pairs) */
VLA_FN void FN(vec_mamba3)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int n = s->d / s->cfg.rank;
    VLA_PFOR(p, 0, n / 2) {
        TEMP(t);
        MUL(t, E(s->u, p), E(s->beta_decay, 3));
        ADD(E(s->th, p), E(s->th, p), t);
        DIV(t, E(s->th, p), E(s->c, C_TWOPI));
        FLOOR(t, t);
        MUL(t, E(s->c, C_TWOPI), t);
        SUB(E(s->th, p), E(s->th, p), t);
        STORE(E(s->th, p));
        COSSIN(E(s->zr, 2 * p), E(s->zr, 2 * p + 1), E(s->th, p));
        STORE(E(s->zr, 2 * p));
        STORE(E(s->zr, 2 * p + 1));
    }
    for (int r = 0; r < s->cfg.rank; r++)
        FN(turn_at)(CX, s->al, (long)r * n, s->pk, (long)r * n, s->zr, s->z, n, 0);
    VLA_PFOR(j, 0, s->d) {
        SETI(E(s->kp, j), 0);
        STORE(E(s->al, j));
    }
    FRAME_END;
}

/* S_ij = ((a S_ij + sum_r (beta v_{t-1,r})_i k~_{t-1,r,j}) + sum_r (gamma v_r)_i k~_r,j), each
 * entry stored after each term (the reference's order: decay, the last token's term, this
 * token's), each term's ranks added to S_ij one by one, r ascending (i < dv/R, j < d/R; rank 1:
 * the one product); then v_{t-1} <- v */
VLA_FN void FN(step_mamba3)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(bet);
    SCALAR(gam);
    SCALAR(t);
    const int d = s->d, dv = s->dv, R = s->cfg.rank, n = d / R, pv = dv / R;
    NUM *S = s->S, *kx = s->e2, *bv = s->e, *gv = s->w;
    VLA_PFOR(j, 0, d)
        COPY(E(kx, j), E(s->al, j)); /* k~_{t-1} */
    FN(vec_mamba3)(CX, s);
    FN(m3_weights)(CX, s, P(bet), P(gam));
    VLA_PFOR(i, 0, dv) {
        MUL(E(bv, i), bet, E(s->vx, i));
        MUL(E(gv, i), gam, E(s->v, i));
    }
    VLA_PFOR(i, 0, pv)
        for (int j = 0; j < n; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(E(S, ij), E(s->beta_decay, 1), E(S, ij));
            STORE(E(S, ij));
            for (int r = 0; r < R; r++) {
                TEMP(t);
                MUL(t, E(bv, r * pv + i), E(kx, r * n + j));
                ADD(E(S, ij), E(S, ij), t);
            }
            STORE(E(S, ij));
            for (int r = 0; r < R; r++) {
                TEMP(t);
                MUL(t, E(gv, r * pv + i), E(s->al, r * n + j));
                ADD(E(S, ij), E(S, ij), t);
            }
            STORE(E(S, ij));
        }
    VLA_PFOR(i, 0, dv)
        COPY(E(s->vx, i), E(s->v, i));
    FRAME_END;
}

/* o = S (R (scale q)); rank R > 1: o_r = S (R (scale q_r)), each rank's dv/R entries the rows'
 * dot products with its n = d/R (the rows' sums as readout's, which rank 1 takes) */
VLA_FN void FN(read_mamba3)(CXP, ST *s)
{
    const int R = s->cfg.rank, n = s->d / R, pv = s->dv / R;
    FN(gated_query)(CX, s, s->w, 1);
    for (int r = 0; r < R; r++)
        FN(turn_at)(CX, s->w, (long)r * n, s->w, (long)r * n, s->zr, s->z, n, 0);
    if (R == 1) {
        FN(readout)(CX, s, s->w, P(E(s->c, C_STAB)));
        return;
    }
    VLA_PFOR(i, 0, s->dv)
        FN(dot_at)(CX, P(E(s->o, i)), s->S, (long)(i % pv) * s->d, s->w, (long)(i / pv) * n, n);
}

/* sc = the scale of token r's key in the kernel's chunk: gamma_r + dt_{r+1} (1 - lambda_{r+1}),
 * the next token's term written early (its decay a_{r+1} comes from the segment sum); the chunk's
 * last token has its own term only (the next one enters the next chunk's S_0, chunk_mamba3) */
VLA_FN void FN(m3_scale)(CXP, ST *s, NREF sc, NREF gam, int r)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    COPY(R(sc), R(gam));
    if (r + 1 < s->cfg.chunk) {
        SETI(t, 1);
        SUB(t, t, E(s->cb, CB_AT(r + 1, beta_decay)));
        MUL(t, E(s->cb, CB_AT(r + 1, beta_decay) + 3), t);
        ADD(R(sc), t, R(sc));
    }
    FRAME_END;
}

/* The chunk as state-spaces/mamba's mamba3_siso_fwd kernel computes it with an initial state
 * (docs/gated.md): S_0 <- S_0 + ((x_{t-1} k~_{t-1}^T) dt_1) (1 - lambda_1), the last token's term
 * of the chunk's first step; per token (the step's own rotation, vec_mamba3) q~ and k~ rounded to
 * io, K_r = k~_r sc_r (m3_scale) rounded to io, and (q . k) (unrotated: the rotations cancel)
 * rounded to io, times gamma_r; the scores q~_r . K_c exp(gamma_r - gamma_c) for c < r only,
 * rounded to io (0 on the diagonal); o_r = (S_0 q~_r) e^(gamma_r) + sum_c P_rc x_c + (q . k)_r
 * gamma_r x_r; S_C = e^(gamma_C) S_0 + sum_r (x_r e^(gamma_C - gamma_r))_io K_r^T. The carried k~
 * is the last token's in io, as the kernel returns it. */
VLA_FN void FN(chunk_mamba3)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(sc);
    SCALAR(bet);
    SCALAR(gam);
    SCALAR(gl);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    NUM *Q = s->cx, *K = s->cy, *U = s->ce, *M = s->cm, *G = s->cg, *qk = s->cr, *cb = s->cb;
    SETI(t, 1);
    SUB(t, t, E(cb, CB_AT(0, beta_decay)));
    VLA_PFOR(i, 0, dv * d) {
        TEMP(acc);
        MUL(acc, E(s->vx, i / d), E(s->al, i % d));
        MUL(acc, acc, E(cb, CB_AT(0, beta_decay) + 3));
        MUL(acc, acc, t);
        ADD(E(s->S, i), E(s->S, i), acc);
        STORE(E(s->S, i));
    }
    for (int r = 0; r < C; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(vec_mamba3)(CX, s);
        FN(m3_weights)(CX, s, P(bet), P(gam));
        FN(m3_scale)(CX, s, P(sc), P(gam), r);
        FN(gated_query)(CX, s, s->w, 1);
        VLA_PFOR(i, 0, 1) {
            FN(dot)(CX, P(E(qk, r)), s->w, s->pk, d);
            STORE_I(E(qk, r));
            MUL(E(qk, r), E(qk, r), gam);
        }
        FN(turn)(CX, s->w, s->w, s->zr, s->z, d, 0);
        FN(chunk_row)(CX, Q, r, s->w, d);
        VLA_PFOR(j, 0, d) {
            STORE_I(E(s->al, j));
            MUL(E(K, (long)r * d + j), E(s->al, j), sc);
            STORE_I(E(K, (long)r * d + j));
        }
    }
    VLA_PFOR(i, 0, 1)
        FN(chunk_gamma)(CX, s, G, 1, 0, rl, CB_AT(0, beta_decay) + 2);
    FN(chunk_exp)(CX, s, P(gl), P(E(G, C - 1)));
    VLA_PFOR(i, 0, C * dv)
        COPY(E(U, i), E(cb, CB_AT(i / dv, v) + i % dv));
    VLA_PFOR(i, 0, C * C) {
        long r = i / C, c = i % C;
        if (c < r) {
            FN(dot_at)(CX, P(E(M, i)), Q, r * d, K, c * d, d);
            FN(chunk_decay)(CX, s, P(E(M, i)), r, c);
            STORE_I(E(M, i));
        } else
            SETI(E(M, i), 0);
    }
    FN(chunk_s0)(CX, s, U, NULL);
    VLA_PFOR(i, 0, C * dv) {
        long r = i / dv, a = i % dv;
        TEMP(acc);
        TEMP(t);
        FN(dot_at)(CX, P(E(s->co, i)), s->s0, a * d, Q, r * d, d);
        FN(chunk_exp)(CX, s, P(acc), P(E(G, r)));
        MUL(E(s->co, i), E(s->co, i), acc);
        FN(chunk_masked)(CX, P(acc), M, U, r, a, C, dv);
        ADD(E(s->co, i), E(s->co, i), acc);
        MUL(t, E(qk, r), E(U, i));
        ADD(E(s->co, i), E(s->co, i), t);
    }
    FN(chunk_carry)(CX, s, U, K, P(gl), 1);
    VLA_PFOR(a, 0, dv) {
        COPY(E(s->vx, a), E(s->v, a));
        COPY(E(s->o, a), E(s->co, (long)(C - 1) * dv + a));
    }
    FRAME_END;
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* the backward of y = R x at y (a turned vector): dTheta_p += dy . (J y)_p = dy_2p+1 y_2p - dy_2p
 * y_2p+1 (dth, carried, stored), then dy <- R^T dy, the cotangent of x */
VLA_FN void FN(turn_grad)(CXP, NUM *dy, const NUM *y, const NUM *z, NUM *dth, NUM *tmp, int d)
{
    FRAME_BEGIN;
    SCALAR(a);
    SCALAR(t);
    for (int p = 0; p < d / 2; p++) {
        MUL(a, E(dy, 2 * p + 1), E(y, 2 * p));
        MUL(t, E(dy, 2 * p), E(y, 2 * p + 1));
        SUB(a, a, t);
        ADD(E(dth, p), E(dth, p), a);
        STORE(E(dth, p));
    }
    FN(turn)(CX, dy, dy, z, tmp, d, 1);
    FRAME_END;
}

/* Step t's backward, s at S_t (al = k~_t, zr = R_t), Sp the saved arrays at t - 1 (k~_{t-1} in al,
 * v_{t-1} in vx). With b = dS k~ and y = dS k~_{t-1}, dS the cotangent of S_t with this read-out's:
 *   dlambda = dt (v . b - a v_{t-1} . y),  dg = a (dS . S_{t-1}) + beta v_{t-1} . y,
 *   dk~ = gamma dS^T v + (beta dS^T v_t from step t + 1),  dv = gamma b + (beta y from t + 1),
 *   dTheta = the turns' backwards of q~ and k~, dtheta_p = dt sum_{s >= t} dTheta_s,p,
 *   dS_{t-1} = a dS. The carried terms: za (dk~), er (dv), zb (sum dTheta). */
VLA_FN void FN(grad_mamba3)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FRAME_BEGIN;
    SCALAR(bet);
    SCALAR(gam);
    SCALAR(t);
    SCALAR(u1);
    SCALAR(u2);
    const int d = s->d, dv = s->dv;
    const NUM *kx = VLA_ROWP(Sp, FN(grad_saved_at)(&s->cfg, "al"));
    const NUM *vx = VLA_ROWP(Sp, FN(grad_saved_at)(&s->cfg, "vx"));
    NUM *dth = G->zb, *dkc = G->za, *dvc = G->er, *y = G->y;
    FN(grad_read)(CX, s, G, s->w, P(E(s->c, C_STAB)));
    FN(turn_grad)(CX, G->dx, s->w, s->zr, dth, s->z, d);
    FN(grad_gated_query)(CX, s, G);
    FN(m3_weights)(CX, s, P(bet), P(gam));
    FN(matvec)(CX, G->db, G->dS, s->al, dv, d); /* b */
    FN(matvec)(CX, y, G->dS, kx, dv, d);        /* y */
    FN(dot)(CX, P(u1), s->v, G->db, dv);
    FN(dot)(CX, P(u2), vx, y, dv);
    MUL(t, E(s->beta_decay, 1), u2);
    SUB(t, u1, t);
    MUL(E(G->dbeta, 0), E(s->beta_decay, 3), t);
    FN(matvec_t)(CX, G->dkp, G->dS, s->v, d, dv);
    for (int j = 0; j < d; j++) {
        MUL(E(G->dkp, j), gam, E(G->dkp, j));
        ADD(E(G->dkp, j), E(G->dkp, j), E(dkc, j));
    }
    FN(matvec_t)(CX, dkc, G->dS, vx, d, dv);
    for (int j = 0; j < d; j++) {
        MUL(E(dkc, j), bet, E(dkc, j));
        STORE(E(dkc, j));
    }
    for (int i = 0; i < dv; i++) {
        MUL(E(G->db, i), gam, E(G->db, i));
        ADD(E(G->db, i), E(G->db, i), E(dvc, i));
        MUL(E(dvc, i), bet, E(y, i));
        STORE(E(dvc, i));
    }
    FN(turn_grad)(CX, G->dkp, s->al, s->zr, dth, s->z, d);
    for (int j = 0; j < d; j++)
        SETI(E(G->du, j), 0);
    for (int p = 0; p < d / 2; p++)
        MUL(E(G->du, p), E(s->beta_decay, 3), E(dth, p));
    FN(grad_decay)(CX, s, G, Sp, 1);
    MUL(t, bet, u2);
    ADD(E(G->dg, 0), E(G->dg, 0), t);
    FRAME_END;
}
#endif
