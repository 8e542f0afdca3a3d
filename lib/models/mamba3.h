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

VLA_FN void FN(gradkey_mamba3)(CXP, ST *s, NUM *dk) {} /* k' is k */

/* token r's input a, entry i, in the chunk's buffer (rl: a row's length) */
#define M3_IN(r, a, i) E(s->cb, (long)(r) * rl + vla_in_off(VLA_IN_##a, d, dv, s->ng, s->nr) + (i))
/* G's C x d arrays that the WY chunks use, here gradchunk_mamba3's: the tokens' w, k~ (in io) and
 * rotations as the replay gives them (m3_replay), the cotangents of Q and K */
#define M3_ARRAYS NUM *Wq = G->Xb, *Ka = G->Kb, *Zr = G->Wk, *dQ = G->dW, *dK = G->dKb

/* gamma_r = lambda_r dt_r (m3_weights') and token r's key scale sc_r (m3_scale), the forward's
 * bits */
VLA_FN void FN(m3_gam_sc)(CXP, ST *s, NREF gam, NREF sc, int r)
{
    const int d = s->d, dv = s->dv;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    MUL(R(gam), M3_IN(r, beta_decay, 0), M3_IN(r, beta_decay, 3));
    FN(m3_scale)(CX, s, sc, gam, r);
}

/* The chunk's tokens again from its first state's angles th0, by the forward's own operations (so
 * its bits): token r's rotation into Zr's row r, its k~_r rounded to io into Ka's, its query w_r
 * (not turned) into Wq's */
VLA_FN void FN(m3_replay)(CXP, ST *s, const NUM *th0, NUM *Zr, NUM *Ka, NUM *Wq)
{
    const int d = s->d, C = s->cfg.chunk;
    for (int p = 0; p < d / 2; p++)
        COPY(E(s->th, p), E(th0, p));
    for (int r = 0; r < C; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(vec_mamba3)(CX, s);
        FN(gated_query)(CX, s, s->w, 1);
        for (long j = 0; j < d; j++) {
            COPY(E(Zr, r * d + j), E(s->zr, j));
            COPY(E(Ka, r * d + j), E(s->al, j));
            STORE_I(E(Ka, r * d + j));
            COPY(E(Wq, r * d + j), E(s->w, j));
        }
    }
}

/* gradchunk_mamba3's token r (after the later tokens'): its qk_r = (w_r . k_r)_io gamma_r, its key
 * scale sc_r and its turns, into dlambda, dth (carried), du, dq and dk */
VLA_FN void FN(m3_grad_token)(CXP, ST *s, FN(gcstate) *G, int r)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(dm);
    SCALAR(gam);
    SCALAR(sc);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), ov = vla_in_off(VLA_IN_v, d, dv, s->ng, s->nr),
               ok = vla_in_off(VLA_IN_pk, d, dv, s->ng, s->nr);
    NUM *Q = s->cx;
    M3_ARRAYS;
    FN(m3_gam_sc)(CX, s, P(gam), P(sc), r);
    FN(dot_at)(CX, P(dm), G->dO, (long)r * dv, s->cb, r * rl + ov, dv);
    FN(dot_at)(CX, P(t), Wq, (long)r * d, s->cb, r * rl + ok, d);
    STORE_I(t); /* (w_r . k_r)_io */
    MUL(t, dm, t);
    MUL(t, t, M3_IN(r, beta_decay, 3));
    ADD(E(G->dbeta, r), E(G->dbeta, r), t);
    MUL(dm, dm, gam); /* the cotangent of w_r . k_r */
    FN(dot_at)(CX, P(acc), dK, (long)r * d, Ka, (long)r * d, d); /* dsc_r */
    MUL(t, acc, M3_IN(r, beta_decay, 3));
    ADD(E(G->dbeta, r), E(G->dbeta, r), t);
    if (r + 1 < C) {
        MUL(t, acc, M3_IN(r + 1, beta_decay, 3));
        SUB(E(G->dbeta, r + 1), E(G->dbeta, r + 1), t);
    }
    for (long j = 0; j < d; j++) {
        MUL(E(dK, r * d + j), sc, E(dK, r * d + j));
        if (r == C - 1)
            ADD(E(dK, r * d + j), E(dK, r * d + j), E(G->dkx, j));
    }
    FN(turn_grad)(CX, VLA_ROWP(dQ, (long)r * d), VLA_ROWP(Q, (long)r * d),
                  VLA_ROWP(Zr, (long)r * d), G->dth, s->z, d);
    FN(turn_grad)(CX, VLA_ROWP(dK, (long)r * d), VLA_ROWP(Ka, (long)r * d),
                  VLA_ROWP(Zr, (long)r * d), G->dth, s->z, d);
    for (int p = 0; p < d / 2; p++)
        MUL(E(G->du, r * d + p), M3_IN(r, beta_decay, 3), E(G->dth, p));
    for (long j = 0; j < d; j++) {
        MUL(t, dm, M3_IN(r, pk, j));
        ADD(t, E(dQ, r * d + j), t);
        MUL(E(G->dq, r * d + j), t, E(s->c, C_SCALE));
        MUL(t, dm, E(Wq, r * d + j));
        ADD(E(G->dk, r * d + j), E(dK, r * d + j), t);
    }
    FRAME_END;
}

/* gradchunk_mamba3's S'_0 = S_0 + dt_0 (1 - lambda_0) v_{-1} k~_{-1}^T (al0, vx0: S0's saved k~ and
 * v), dS'_0 in G->dS0: dlambda_0, and the cotangents of v_{-1} and k~_{-1} carried (stored) */
VLA_FN void FN(m3_grad_s0)(CXP, ST *s, FN(gcstate) *G, const NUM *al0, const NUM *vx0)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(w0);
    const int d = s->d, dv = s->dv;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    SETI(w0, 1);
    SUB(w0, w0, M3_IN(0, beta_decay, 0));
    MUL(w0, M3_IN(0, beta_decay, 3), w0);
    for (long a = 0; a < dv; a++)
        FN(dot_at)(CX, P(E(G->dvx, a)), G->dS0, a * d, al0, 0, d);
    FN(dot)(CX, P(t), G->dvx, vx0, dv);
    MUL(t, t, M3_IN(0, beta_decay, 3));
    SUB(E(G->dbeta, 0), E(G->dbeta, 0), t);
    for (long a = 0; a < dv; a++) {
        MUL(E(G->dvx, a), w0, E(G->dvx, a));
        STORE(E(G->dvx, a));
    }
    for (long j = 0; j < d; j++) {
        FN(gc_coldot)(CX, P(acc), G->dS0, vx0, 0, j, d, dv);
        MUL(E(G->dkx, j), w0, acc);
        STORE(E(G->dkx, j));
    }
    FRAME_END;
}

/* The chunk's backward (chunk_mamba3's operations in reverse; s holds its forward: the turned
 * queries Q in cx, the keys K_c = k~_c sc_c in cy, the decayed values U'_c = (v_c eC_c)_io in ce,
 * the scores M in cm, gamma in cg, qk_r = (w_r . k_r)_io gamma_r in cr, S'_0 staged in s0; S0 its
 * first state as saved), do_r = c_r, e^(gamma_r) in G->eg. The carried cotangents: dS (of S_C),
 * and of the state's k~ (G->dkx), v (G->dvx) and angles (G->dth), the chunk's last token's on
 * entry, the token's before the chunk on return:
 *   the write S_C = e^(gamma_C) S'_0 + sum_c U'_c K_c^T: dK_c = dS^T U'_c, dU'_c = dS K_c, dv_c
 *     += eC_c dU'_c, dgamma_C += eC_c dU'_c . v_c, dgamma_c -= the same, dgamma_C += e^(gamma_C)
 *     dS . S'_0, dS'_0 = e^(gamma_C) dS;
 *   the read-out o_r = (S'_0 Q_r) e^(gamma_r) + sum_{c < r} M_rc v_c + qk_r v_r: with z_r =
 *     e^(gamma_r) S'_0^T do_r, dQ_r += z_r, dgamma_r += z_r . Q_r, dS'_0 += sum_r e^(gamma_r) do_r
 *     Q_r^T; dM_rc = do_r . v_c: dgamma_r += dM M_rc, dgamma_c -= the same, dQ_r += dM D_rc K_c,
 *     dK_c += dM D_rc Q_r; dv_c += sum_{r > c} M_rc do_r + qk_c do_c; dqk_r = do_r . v_r;
 *   qk_r: dlambda_r += dqk_r (w_r . k_r) dt_r, dw_r += dqk_r gamma_r k_r, dk_r += dqk_r gamma_r
 *     w_r;
 *   K_c = k~_c sc_c, sc_c = lambda_c dt_c + dt_{c+1} (1 - lambda_{c+1}) (the chunk's last: its own
 *     term): dk~_c = sc_c dK_c (+ the carried dk~ for the last), dlambda_c += dt_c dK_c . k~_c,
 *     dlambda_{c+1} -= dt_{c+1} dK_c . k~_c; dv of the last += the carried dv;
 *   the turns Q_r = R_r w_r, k~_r = R_r k_r (turn_grad): dTheta_r, summed from the last token into
 *     the carried dth, du_r = dt_r dth (the angle's reduction mod 2 pi has derivative 1);
 *   S'_0 = S_0 + dt_0 (1 - lambda_0) v_{-1} k~_{-1}^T (the token before's, S0's vx and al): dv_{-1}
 *     = dt_0 (1 - lambda_0) dS'_0 k~_{-1}, dk~_{-1} = dt_0 (1 - lambda_0) dS'_0^T v_{-1}, carried;
 *     dlambda_0 -= dt_0 v_{-1} . dS'_0 k~_{-1}; dS_0 = dS'_0;
 * then dg_t = sum_{r >= t} dgamma_r (gc_finish). dS staged in io as the products take it (dSi);
 * the carried cotangents stored after every update. */
VLA_FN void FN(gradchunk_mamba3)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(e);
    SCALAR(gl);
    SCALAR(dm);
    SCALAR(w0);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), ov = vla_in_off(VLA_IN_v, d, dv, s->ng, s->nr);
    vla_config run = s->cfg; /* the saved arrays' layout is the run's chunk:C, not a last chunk's */
    run.chunk = G->C;
    const NUM *al0 = VLA_ROWP(S0, FN(grad_saved_at)(&run, "al")),
              *vx0 = VLA_ROWP(S0, FN(grad_saved_at)(&run, "vx")),
              *th0 = VLA_ROWP(S0, FN(grad_saved_at)(&run, "th"));
    NUM *Q = s->cx, *K = s->cy, *Ue = s->ce, *M = s->cm, *Gm = s->cg, *qk = s->cr, *s0 = s->s0;
    M3_ARRAYS;
    FN(m3_replay)(CX, s, th0, Zr, Ka, Wq);
    SETI(w0, 1); /* S'_0 (into S), as the forward added it */
    SUB(w0, w0, M3_IN(0, beta_decay, 0));
    for (long i = 0; i < (long)dv * d; i++) {
        MUL(acc, E(vx0, i / d), E(al0, i % d));
        MUL(acc, acc, M3_IN(0, beta_decay, 3));
        MUL(acc, acc, w0);
        ADD(E(s->S, i), E(S0, i), acc);
        STORE(E(s->S, i));
    }
    FN(gc_open)(CX, s, G, c, 0, dQ, Gm, P(gl), G->dS, Ue, dK); /* the write */
    for (long cc = 0; cc < C; cc++) {
        for (long a = 0; a < dv; a++)
            FN(dot_at)(CX, P(E(G->Y, cc * dv + a)), G->dSi, a * d, K, cc * d, d);
        FN(chunk_dexp)(CX, s, P(e), P(E(Gm, C - 1)), P(E(Gm, cc)));
        FN(dot_at)(CX, P(t), G->Y, cc * dv, s->cb, cc * rl + ov, dv);
        MUL(t, t, e);
        ADD(E(G->dgam, C - 1), E(G->dgam, C - 1), t);
        SUB(E(G->dgam, cc), E(G->dgam, cc), t);
        for (long a = 0; a < dv; a++)
            MUL(E(G->dVb, cc * dv + a), E(G->Y, cc * dv + a), e);
    }
    FN(dot_at)(CX, P(t), G->dS, 0, s->S, 0, dv * d);
    MUL(t, t, gl);
    ADD(E(G->dgam, C - 1), E(G->dgam, C - 1), t);
    /* the read-out: S'_0's term, then the scores */
    for (long r = 0; r < C; r++)
        for (long j = 0; j < d; j++) {
            FN(gc_coldot)(CX, P(acc), s0, G->dO, r * dv, j, d, dv);
            MUL(acc, acc, E(G->eg, r));
            MUL(t, acc, E(Q, r * d + j));
            ADD(E(G->dgam, r), E(G->dgam, r), t);
            ADD(E(dQ, r * d + j), E(dQ, r * d + j), acc);
        }
    for (long i = 0; i < (long)dv * d; i++) {
        const long a = i / d, j = i % d;
        MUL(acc, E(G->dS, i), gl);
        for (long r = 0; r < C; r++) {
            MUL(t, E(G->dO, r * dv + a), E(Q, r * d + j));
            MUL(t, t, E(G->eg, r));
            ADD(acc, acc, t);
        }
        COPY(E(G->dS0, i), acc);
        STORE(E(G->dS0, i));
    }
    for (long r = 1; r < C; r++)
        for (long cc = 0; cc < r; cc++) {
            FN(dot_at)(CX, P(dm), G->dO, r * dv, s->cb, cc * rl + ov, dv);
            MUL(t, dm, E(M, r * C + cc));
            FN(gc_score)(CX, s, G, P(dm), P(t), r, cc, K, Q, r * d, dQ, dK);
        }
    for (long i = 0; i < (long)C * dv; i++) { /* dv_c += sum_{r > c} M_rc do_r + qk_c do_c */
        const long cc = i / dv, a = i % dv;
        COPY(acc, E(G->dVb, i));
        for (long r = cc + 1; r < C; r++) {
            MUL(t, E(M, r * C + cc), E(G->dO, r * dv + a));
            ADD(acc, acc, t);
        }
        MUL(t, E(qk, cc), E(G->dO, i));
        ADD(acc, acc, t);
        if (cc == C - 1)
            ADD(acc, acc, E(G->dvx, a));
        COPY(E(G->dVb, i), acc);
    }
    for (int r = C - 1; r >= 0; r--)
        FN(m3_grad_token)(CX, s, G, r);
    FN(m3_grad_s0)(CX, s, G, al0, vx0);
    FN(gc_finish)(CX, s, G, G->dgam, 1, s->cfg.base2);
    FRAME_END;
}
#undef M3_IN
#undef M3_ARRAYS
#endif
