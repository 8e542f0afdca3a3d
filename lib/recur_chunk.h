/* recur_chunk.h: the tools of the chunk form (docs/forms.md) in recur.h's text: chunk:C buffers a
 * chunk's inputs and, at its last token, a model's chunk_<tok> (in its file, models/) computes the C
 * tokens at once from the chunk's first state with these: the masked C x C scores and the UT
 * transform of the WY form (chunk_wy), the blocked Woodbury update of A (chunk_penalty,
 * chunk_apply, chunk_update_A) and MesaNet's chunk solver. Every chunk intermediate is rounded to
 * the policy's io format (STORE_I) once its stage is computed, as the kernels store them in 16
 * bits. Included by recur.h; CB_AT is undefined at the end of recur_forms.h. */

/* the model's u' (recur.h's dispatch, after the models) */
VLA_FN NUM *FN(uprime)(CXP, ST *s);

/* where input a of the chunk's token j starts in the buffer cb */
#define CB_AT(j, a)                                                                                \
    ((long)(j) * vla_in_len(d, dv, s->ng, s->nr) + vla_in_off(VLA_IN_##a, d, dv, s->ng, s->nr))

/* the INPUT arrays into the chunk's slot j (put), or slot j back into them, so that a token's
 * per-token work is the sequential form's own code on the same inputs */
VLA_FN void FN(chunk_slot)(CXP, ST *s, int j, int put)
{
    const int d = s->d, dv = s->dv, ng = s->ng, nr = s->nr;
#define VLA_X_(name, len)                                                                          \
    VLA_PFOR(i, 0, (len)) {                                                                        \
        if (put)                                                                                   \
            COPY(E(s->cb, CB_AT(j, name) + i), E(s->name, i));                                     \
        else                                                                                       \
            COPY(E(s->name, i), E(s->cb, CB_AT(j, name) + i));                                     \
    }
    VLA_STATE_INPUT(VLA_X_)
#undef VLA_X_
}

/* the n numbers of M (a stage's output) rounded to the io format */
VLA_FN void FN(round_io)(CXP, NUM *M, long n)
{
    VLA_PFOR(i, 0, n)
        STORE_I(E(M, i));
}

/* Y <- T Y in place: rows of n numbers, T the chunk's unit lower triangular UT transform with
 * T_rm above the diagonal of M, transposed (at M[m][r]); rows from the last, each a sum over m
 * ascending with the unit diagonal's term last, as a matrix product adds them */
VLA_FN void FN(chunk_tri)(CXP, const NUM *M, NUM *Y, int C, int n)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    for (int r = C - 1; r > 0; r--)
        VLA_PFOR(c, 0, n) {
            MUL(acc, E(M, r), E(Y, c));
            for (int m = 1; m < r; m++) {
                TEMP(t);
                MUL(t, E(M, (long)m * C + r), E(Y, (long)m * n + c));
                ADD(acc, acc, t);
            }
            ADD(E(Y, (long)r * n + c), acc, E(Y, (long)r * n + c));
        }
    FN(round_io)(CX, Y, (long)C * n);
    FRAME_END;
}

/* The UT transform T = (I + L)^-1 of the C x C strictly lower L below the diagonal of M, by
 * forward substitution row by row in the compute format, T_rc = -(L_rc + sum_{c<m<r} L_rm T_mc),
 * written above the diagonal (T_rc at M[c][r], so that a row's entries are independent of one
 * another), then rounded to the io format (fla keeps T in the inputs' dtype). nb < C: only within
 * the diagonal blocks of nb rows (fla's 16 x 16 forward substitution), the blocks below them then
 * merged (fla's solve_tril, merge_16x16_to_32x32_inverse and the fused C = 64 kernels): for block
 * row I (rows i0..i0+nb-1) and every column c < i0, Y_rc = sum_{c <= m < i0} L_rm T_mc (T_cc = 1,
 * m ascending; fla's L_I0 X_00 + L_I1 X_10 + ...), then T_rc = -(sum_{i0 <= m < r} T_rm Y_mc +
 * Y_rc), the diagonal block's inverse times Y, every sum in the compute format (tl.dot's binary32
 * accumulation, IEEE inputs). nb = C is the forward substitution of the whole chunk. */
VLA_FN void FN(chunk_ut)(CXP, NUM *M, int C, int nb)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(zero);
    SETI(zero, 0);
    for (int r = 1; r < C; r++)
        VLA_PFOR(c, r - r % nb, r) {
            COPY(acc, E(M, (long)r * C + c));
            for (int m = c + 1; m < r; m++) {
                TEMP(t);
                MUL(t, E(M, (long)r * C + m), E(M, (long)c * C + m));
                ADD(acc, acc, t);
            }
            SUB(E(M, (long)c * C + r), zero, acc);
        }
    for (int i0 = nb; i0 < C; i0 += nb) {
        const int nbr = C - i0 < nb ? C - i0 : nb; /* (a last, partial block) */
        VLA_PFOR(x, 0, nbr * i0) { /* Y into T's places (above the diagonal) */
            const long r = i0 + x / i0, c = x % i0;
            COPY(acc, E(M, r * C + c));
            for (int m = (int)c + 1; m < i0; m++) {
                TEMP(t);
                MUL(t, E(M, r * C + m), E(M, c * C + m));
                ADD(acc, acc, t);
            }
            COPY(E(M, c * C + r), acc);
        }
        for (int r = i0 + nbr - 1; r >= i0; r--) /* rows from the last: Y_mc (m < r) there */
            VLA_PFOR(c, 0, i0) {
                COPY(acc, E(M, (long)c * C + r));
                if (r > i0) {
                    MUL(acc, E(M, (long)i0 * C + r), E(M, (long)c * C + i0));
                    for (int m = i0 + 1; m < r; m++) {
                        TEMP(t);
                        MUL(t, E(M, (long)m * C + r), E(M, (long)c * C + m));
                        ADD(acc, acc, t);
                    }
                    ADD(acc, acc, E(M, (long)c * C + r));
                }
                SUB(E(M, (long)c * C + r), zero, acc);
            }
    }
    VLA_PFOR(i, 0, C * C)
        if (i % C > i / C)
            STORE_I(E(M, i));
    FRAME_END;
}

/* ---- the exponent range of the chunk forms (docs/forms.md): the order and format of
 * the cumulative log-gates, the base, the clamp of a difference, the anchors ---- */

/* r = e^x, or 2^x with base=2 (x then a cumulative log-gate times RCP_LN2, as fla's kernels) */
VLA_FN void FN(chunk_exp)(CXP, ST *s, NREF r, NREF x)
{
    if (s->cfg.base2)
        EXP2(R(r), R(x));
    else
        EXP(R(r), R(x));
}

/* r = the decay exp(gamma_a - gamma_b) of a direct difference, the difference first clamped to
 * min(., 0) with gate_clamp (mamba PR 713: tl.exp(tl.minimum(dA_cs_m - dA_cs_k, 0.0))) */
VLA_FN void FN(chunk_dexp)(CXP, ST *s, NREF r, NREF a, NREF b)
{
    FRAME_BEGIN;
    SCALAR(z);
    SUB(R(r), R(a), R(b));
    if (s->cfg.gate_clamp) {
        SETI(z, 0);
        LANE_IF(LESS(z, R(r))) {
            COPY(R(r), z);
        } LANE_END
    }
    FN(chunk_exp)(CX, s, r, r);
    FRAME_END;
}

/* The anchor n of the decay from token c to token r of a chunk (c <= r), -2 for a direct
 * difference: blocks of B = anchor_block tokens (0: the chunk) starting at b0; a pair within r's
 * block takes its block's first, last or middle (b0 + B/2, fla's safe_gate) token, or its start
 * (b0 - 1: the cumulative sum before the block, -1 meaning gamma = 0 before the chunk, FlashKDA's
 * exp(-gamma)); a pair reaching an earlier block the first token of r's block (fla's off-diagonal
 * sub-blocks, both factors <= 1), b0 - 1 with anchor=start */
VLA_FN int FN(chunk_anchor)(const vla_config *cfg, long r, long c)
{
    if (cfg->anchor == VLA_ANCHOR_DIRECT)
        return -2;
    const int B = cfg->anchor_block ? cfg->anchor_block : cfg->chunk, b0 = (int)(r / B * B);
    if (cfg->anchor == VLA_ANCHOR_START)
        return b0 - 1;
    if (c < b0 || cfg->anchor == VLA_ANCHOR_FIRST)
        return b0;
    const int n = cfg->anchor == VLA_ANCHOR_LAST ? b0 + B - 1 : b0 + B / 2;
    return n < cfg->chunk ? n : cfg->chunk - 1; /* a stream's last, shorter chunk (vstate_finish):
                                                   the rows past T, masked, hold gamma_T */
}

/* t = G_a - G_b of two rows of a chunk's cumulative log-gates (G: rows of n, column j), a row -1
 * meaning gamma = 0 (the sum before the chunk) */
VLA_FN void FN(chunk_gdiff)(CXP, NREF t, NUM *G, long a, long b, long n, long j)
{
    if (b < 0)
        COPY(R(t), E(G, a * n + j));
    else if (a < 0) {
        SETI(R(t), 0);
        SUB(R(t), R(t), E(G, b * n + j));
    } else
        SUB(R(t), E(G, a * n + j), E(G, b * n + j));
}

/* Gamma_r = sum_{t <= r} g_t, r < C, of the chunk's log-gates g_r = cb[r rl + off] into G[r n + j]
 * (fla's chunk_local_cumsum): a running sum (cumsum=run) or a Hillis-Steele scan (cumsum=tree:
 * rounds step = 1, 2, 4, ..., each row adding the partial sum `step` rows above, as a parallel
 * scan orders it), each partial sum rounded to io with cumsum_fmt=io; then, base 2, times RCP_LN2
 * (fla scales after the sum). A running sum of terms <= 0 is monotone in any format, a tree's
 * is not (mamba PR 713). */
VLA_FN void FN(chunk_gamma)(CXP, ST *s, NUM *G, long n, long j, long rl, long off)
{
    const int C = s->cfg.chunk, tree = s->cfg.cumsum_tree, io = s->cfg.cumsum_io;
    COPY(E(G, j), E(s->cb, off));
    for (int r = 1; r < C; r++) {
        if (tree)
            COPY(E(G, r * n + j), E(s->cb, r * rl + off));
        else
            ADD(E(G, r * n + j), E(G, (r - 1) * n + j), E(s->cb, r * rl + off));
        if (io && !tree)
            STORE_I(E(G, r * n + j));
    }
    for (int step = 1; tree && step < C; step *= 2)
        for (int r = C - 1; r >= step; r--) { /* from the last row: row r - step is still old */
            ADD(E(G, r * n + j), E(G, (r - step) * n + j), E(G, r * n + j));
            if (io)
                STORE_I(E(G, r * n + j));
        }
    for (int r = 0; s->cfg.base2 && r < C; r++)
        MUL(E(G, r * n + j), E(G, r * n + j), E(s->c, C_RCPLN2));
}

/* The UT transform by Neumann-series doubling (FlashKDA before vllm-project/FlashKDA PR 10,
 * megagdn-pto's tri_inverse): (I + L)^-1 = (I - L)(I + L^2)(I + L^4)... (L is nilpotent: the
 * powers below C), every product from operands in the io format accumulated in the compute format
 * and rounded to io: L rounded to io; P = L (in M's lower triangle), X = I - L (its strictly lower
 * part transposed above the diagonal, where T goes); then while 2p < C: P <- P P (L^2p),
 * (P P)_rc = sum_{c<m<r} P_rm P_mc, and X <- X + X P, (X P)_rc = sum_{c<m<=r} X_rm P_mc (X_rr = 1,
 * that term last), each sum from 0 with m ascending, rounded to io. W: C x C numbers of work. */
VLA_FN void FN(chunk_neumann)(CXP, NUM *M, NUM *W, int C)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(zero);
    SETI(zero, 0);
    VLA_PFOR(i, 0, C * C)
        if (i % C < i / C) {
            STORE_I(E(M, i));
            SUB(E(M, (long)(i % C) * C + i / C), zero, E(M, i));
        }
    for (int p = 1; 2 * p < C; p *= 2) {
        VLA_PFOR(i, 0, C * C) { /* P P */
            const long r = i / C, c = i % C;
            COPY(E(W, i), zero);
            for (long m = c + 1; m < r; m++) {
                TEMP(t);
                MUL(t, E(M, r * C + m), E(M, m * C + c));
                ADD(E(W, i), E(W, i), t);
            }
            STORE_I(E(W, i));
        }
        VLA_PFOR(i, 0, C * C)
            if (i % C < i / C)
                COPY(E(M, i), E(W, i));
        VLA_PFOR(i, 0, C * C) { /* X + X P */
            const long r = i / C, c = i % C;
            if (c < r) {
                COPY(acc, zero);
                for (long m = c + 1; m < r; m++) {
                    TEMP(t);
                    MUL(t, E(M, m * C + r), E(M, m * C + c));
                    ADD(acc, acc, t);
                }
                ADD(acc, acc, E(M, i));
                ADD(E(W, i), E(M, c * C + r), acc);
                STORE_I(E(W, i));
            }
        }
        VLA_PFOR(i, 0, C * C)
            if (i % C < i / C)
                COPY(E(M, (long)(i % C) * C + i / C), E(W, i));
    }
    FRAME_END;
}

/* (I + L)^-1 as cfg's tri says (docs/forms.md), L below the diagonal of M, T above it */
VLA_FN void FN(chunk_inverse)(CXP, vla_tri tri, NUM *M, NUM *W, int C)
{
    if (tri == VLA_TRI_NEUMANN)
        FN(chunk_neumann)(CX, M, W, C);
    else
        FN(chunk_ut)(CX, M, C, tri == VLA_TRI_BLOCKED && C > VLA_TRI_BLOCK ? VLA_TRI_BLOCK : C);
}

/* m <- m exp(gamma_r - gamma_c): a chunk matrix's entry (r, c), c <= r, decayed from token c to
 * token r (fla's exp of the cumulative log-decays' difference); anchored at n, m's two factors
 * (m e^(gamma_r - gamma_n)) e^(gamma_n - gamma_c), each exponential rounded to io (no kernel
 * factors a scalar decay: the per-channel dot_decay rounds the factored operands themselves) */
VLA_FN void FN(chunk_decay)(CXP, ST *s, NREF m, long r, long c)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int n = FN(chunk_anchor)(&s->cfg, r, c);
    if (n < -1) {
        FN(chunk_dexp)(CX, s, P(t), P(E(s->cg, r)), P(E(s->cg, c)));
        MUL(R(m), R(m), t);
    } else {
        FN(chunk_gdiff)(CX, P(t), s->cg, r, n, 1, 0);
        FN(chunk_exp)(CX, s, P(t), P(t));
        STORE_I(t);
        MUL(R(m), R(m), t);
        FN(chunk_gdiff)(CX, P(t), s->cg, n, c, 1, 0);
        FN(chunk_exp)(CX, s, P(t), P(t));
        STORE_I(t);
        MUL(R(m), R(m), t);
    }
    FRAME_END;
}

/* acc = sum_{c <= r} M_rc Y_ca, c ascending: a chunk's masked (intra-chunk) sum for token r and
 * column a of the rows of n numbers in Y */
VLA_FN void FN(chunk_masked)(CXP, NREF acc, const NUM *M, const NUM *Y, long r, long a, int C,
                             int n)
{
    FRAME_BEGIN;
    SCALAR(t);
    MUL(R(acc), E(M, r * C), E(Y, a));
    for (int c = 1; c <= r; c++) {
        TEMP(t);
        MUL(t, E(M, r * C + c), E(Y, (long)c * n + a));
        ADD(R(acc), R(acc), t);
    }
    FRAME_END;
}

/* acc = sum_r E_ra B_rc, r ascending over the chunk's C tokens: entry (a, c) of E^T B, the
 * chunk's write of S (E: rows of dv numbers, B: of d) */
VLA_FN void FN(chunk_outer)(CXP, NREF acc, const NUM *Ev, const NUM *B, long a, long c, int C,
                            int dv, int d)
{
    FRAME_BEGIN;
    SCALAR(t);
    MUL(R(acc), E(Ev, a), E(B, c));
    for (int r = 1; r < C; r++) {
        TEMP(t);
        MUL(t, E(Ev, (long)r * dv + a), E(B, (long)r * d + c));
        ADD(R(acc), R(acc), t);
    }
    FRAME_END;
}

/* a state (dv x d) staged into s0 as the chunk's products take it (cfg.stage: the io format by
 * default, as fla stages h in k's dtype) */
VLA_FN void FN(chunk_stage)(CXP, ST *s, const NUM *S)
{
    VLA_PFOR(i, 0, s->dv * s->d) { /* stage=io: fla's h.to(k.dtype); f16, bf16; off: as S is */
        COPY(E(s->s0, i), E(S, i));
        if (s->cfg.stage == VLA_HALF_IO)
            STORE_I(E(s->s0, i));
        else
            ROUND_H(E(s->s0, i), s->cfg.stage);
    }
}

/* S_0, the chunk's first state, staged into s0; then, with W (rows of d in X), E = U - W S_0^T in
 * place of U, rounded to io (fla's v_new) */
VLA_FN void FN(chunk_s0)(CXP, ST *s, NUM *U, const NUM *X)
{
    FRAME_BEGIN;
    SCALAR(acc);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    FN(chunk_stage)(CX, s, s->S);
    if (X)
        VLA_PFOR(i, 0, C * dv) {
            FN(dot_at)(CX, P(acc), s->s0, (long)(i % dv) * d, X, (long)(i / dv) * d, d);
            SUB(E(U, i), E(U, i), acc);
            STORE_I(E(U, i));
        }
    FRAME_END;
}

/* S_C = S_0 + E^T B (E's rows in U, C x dv; B's in rows of d), with a decay S_C = gl S_0 +
 * sum_t (e_t exp(gamma_C - gamma_t))_io b_t^T (gl = exp(gamma_C), gamma in cg): e_t so decayed is
 * rounded to io again in U (fla rounds that product once, from e_t in binary32) */
VLA_FN void FN(chunk_carry)(CXP, ST *s, NUM *U, const NUM *B, NREF gl, int decay)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    NUM *G = s->cg;
    if (decay)
        VLA_PFOR(i, 0, C * dv) {
            TEMP(t);
            FN(chunk_dexp)(CX, s, P(t), P(E(G, C - 1)), P(E(G, i / dv)));
            MUL(E(U, i), E(U, i), t);
            STORE_I(E(U, i));
        }
    VLA_PFOR(i, 0, dv * d) {
        FN(chunk_outer)(CX, P(acc), U, B, i / d, i % d, C, dv, d);
        if (decay)
            MUL(E(s->S, i), E(s->S, i), R(gl));
        ADD(E(s->S, i), E(s->S, i), acc);
        STORE(E(s->S, i));
    }
    FRAME_END;
}

/* The chunk of S_t = S_{t-1} (I - a_t b_t^T) + c_t b_t^T, fla's chunked delta rule (a = beta
 * k, b = k, c = beta v) with distinct left and right vectors (vla3: a = k', b = alpha, c = v;
 * rls: a = k, b = the gain). With E's rows e_t = c_t - S_{t-1} a_t, the S_t the write makes,
 * S_t = S_0 + sum_{j <= t} e_j b_j^T, so (I + L) E = C - A S_0^T, L = strictly_lower(A B^T):
 * E = U - W S_0^T with the UT transform T = (I + L)^-1 (forward substitution), W = T A,
 * U = T C. Then S_C = S_0 + E^T B and o_i = (S_0 y_i + sum_{t <= i} P_it e_t) / den_i with the
 * masked scores P = Y B^T, y the queries (qa: VLA_IN_pq or VLA_IN_q). wy 0 (la): no
 * correction, E = C. beta: a = beta x, c = beta v (delta). acc_n: n_C = n_0 + sum phi(k_t),
 * den_i = n_0 . y_i + sum_{t <= i} phi(k_t) . y_i floored at floor (when the model normalizes).
 * decay (delta's, fla's gated delta rule S_t = a_t S_{t-1} (I - beta k k^T) + beta v k^T): with
 * gamma_i = sum_{t <= i} log a_t (cumulative in the compute format), L_ts and P_ts take
 * exp(gamma_t - gamma_s), W's rows exp(gamma_t), the read-out's S_0 y_i exp(gamma_i), and
 * S_C = exp(gamma_C) S_0 + sum_t exp(gamma_C - gamma_t) e_t b_t^T.
 * In: cx (x_t), cy (b_t), the buffer; out: S, n, o, the read-outs co. */
VLA_FN void FN(chunk_wy)(CXP, ST *s, int wy, int beta, int decay, int qa, int acc_n, int scaled,
                         NREF floor)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(gl);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), oq = vla_in_off(qa, d, dv, s->ng, s->nr);
    NUM *X = s->cx, *B = s->cy, *U = s->ce, *M = s->cm, *cb = s->cb, *G = s->cg;
    SETI(gl, 1); /* exp(gamma_C), set below when there is a decay (no decay: 1) */
    if (decay) { /* gamma, one thread's cumulative sum (fla's chunk_local_cumsum), exp(gamma_C) */
        VLA_PFOR(i, 0, 1)
            FN(chunk_gamma)(CX, s, G, 1, 0, rl, CB_AT(0, beta_decay) + 2);
        FN(chunk_exp)(CX, s, P(gl), P(E(G, C - 1)));
    }
    /* C = the values (times beta), A = x times beta, rounded to io (fla: (v * beta).to(v.dtype)) */
    VLA_PFOR(i, 0, C * dv) {
        long j = i / dv;
        if (beta)
            MUL(E(U, i), E(cb, CB_AT(j, beta_decay)), E(cb, CB_AT(j, v) + i % dv));
        else
            COPY(E(U, i), E(cb, CB_AT(j, v) + i % dv));
        STORE_I(E(U, i));
    }
    if (beta)
        VLA_PFOR(i, 0, C * d) {
            MUL(E(X, i), E(cb, CB_AT(i / d, beta_decay)), E(X, i));
            STORE_I(E(X, i));
        }
    if (wy) {
        /* L below the diagonal of M */
        VLA_PFOR(i, 0, C * C) {
            long r = i / C, c = i % C;
            if (c < r) {
                FN(dot_at)(CX, P(E(M, i)), X, r * d, B, c * d, d);
                if (decay)
                    FN(chunk_decay)(CX, s, P(E(M, i)), r, c);
            }
        }
        FN(chunk_inverse)(CX, s->cfg.tri, M, s->cn, C);
        if (decay) /* W's operand beta_t exp(gamma_t) k'_t, rounded once (fla: k * beta * exp(g)) */
            VLA_PFOR(i, 0, C * d) {
                TEMP(t);
                FN(chunk_exp)(CX, s, P(t), P(E(G, i / d)));
                MUL(E(X, i), E(cb, CB_AT(i / d, beta_decay)), E(B, i));
                MUL(E(X, i), E(X, i), t);
                STORE_I(E(X, i));
            }
        FN(chunk_tri)(CX, M, X, C, d);  /* W */
        FN(chunk_tri)(CX, M, U, C, dv); /* U */
    }
    FN(chunk_s0)(CX, s, U, wy ? X : NULL); /* S_0 in io; E = U - W S_0^T */
    /* P = Y B^T on and below the diagonal of M (L and T are spent) */
    VLA_PFOR(i, 0, C * C) {
        long r = i / C, c = i % C;
        if (c <= r) {
            FN(dot_at)(CX, P(E(M, i)), cb, r * rl + oq, B, c * d, d);
            if (decay)
                FN(chunk_decay)(CX, s, P(E(M, i)), r, c);
            STORE_I(E(M, i));
        }
    }
    if (s->cfg.normalize)
        VLA_PFOR(r, 0, C) {
            FN(dot_at)(CX, P(E(s->cr, r)), s->n, 0, cb, r * rl + oq, d);
            for (int c = 0; acc_n && c <= r; c++) {
                TEMP(t);
                FN(dot_at)(CX, P(t), cb, CB_AT(c, pk), cb, r * rl + oq, d);
                ADD(E(s->cr, r), E(s->cr, r), t);
            }
            LANE_IF(LESS(E(s->cr, r), R(floor))) {
                COPY(E(s->cr, r), R(floor));
            } LANE_END
        }
    if (s->cfg.normalize) /* (every thread counts, after the loop: a block's counts agree) */
        for (int r = 0; r < C; r++)
            FN(den_check)(CX, s, P(E(s->cr, r)), s->t - C + 1 + r);
    /* the read-outs: the inter-chunk and the intra-chunk sums, then their sum */
    VLA_PFOR(i, 0, C * dv) {
        long r = i / dv, a = i % dv;
        FN(dot_at)(CX, P(E(s->co, i)), s->s0, a * d, cb, r * rl + oq, d);
        if (decay) {
            FN(chunk_exp)(CX, s, P(acc), P(E(G, r)));
            MUL(E(s->co, i), E(s->co, i), acc);
        }
        FN(chunk_masked)(CX, P(acc), M, U, r, a, C, dv);
        ADD(E(s->co, i), E(s->co, i), acc);
        if (scaled) /* the gated family: fla's chunk kernels scale the read-out */
            MUL(E(s->co, i), E(s->co, i), E(s->c, C_SCALE));
        if (s->cfg.normalize)
            DIV(E(s->co, i), E(s->co, i), E(s->cr, r));
    }
    FN(chunk_carry)(CX, s, U, B, P(gl), decay); /* S_C; n_C = n_0 + sum phi(k_t) */
    if (acc_n)
        VLA_PFOR(c, 0, d) {
            COPY(acc, E(cb, CB_AT(0, pk) + c));
            for (int r = 1; r < C; r++)
                ADD(acc, acc, E(cb, CB_AT(r, pk) + c));
            ADD(E(s->n, c), E(s->n, c), acc);
            STORE(E(s->n, c));
        }
    VLA_PFOR(a, 0, dv)
        COPY(E(s->o, a), E(s->co, (long)(C - 1) * dv + a));
    FRAME_END;
}

/* sum_j X_rj Y_cj exp(G_rj - G_cj), j ascending from the first term: a score between tokens r and c
 * (c <= r) of a chunk with decays per key channel (G = cgd, rows of d), each exponent a direct
 * difference of the cumulative log-decays (<= 0); anchored at n (chunk_anchor), the product of
 * the operands (X_rj e^(G_rj - G_nj))_io (Y_cj e^(G_nj - G_cj))_io as fla's kda forms them
 * (q * exp2(g - g_n), k * exp2(g_n - g)) */
VLA_FN void FN(dot_decay)(CXP, ST *s, NREF r_, const NUM *X, long xo, const NUM *Y, long yo, long r,
                          long c)
{
    FRAME_BEGIN;
    SCALAR(t);
    SCALAR(e);
    const int n = s->d, an = FN(chunk_anchor)(&s->cfg, r, c);
    NUM *G = s->cgd;
    const long gr = r * n, gc = c * n;
    for (int j = 0; j < n; j++) {
        TEMP(t);
        TEMP(e);
        if (an < -1) {
            FN(chunk_dexp)(CX, s, P(e), P(E(G, gr + j)), P(E(G, gc + j)));
            MUL(t, E(X, xo + j), E(Y, yo + j));
            MUL(t, t, e);
        } else {
            FN(chunk_gdiff)(CX, P(e), G, r, an, n, j);
            FN(chunk_exp)(CX, s, P(e), P(e));
            MUL(t, E(X, xo + j), e);
            STORE_I(t);
            FN(chunk_gdiff)(CX, P(e), G, an, c, n, j);
            FN(chunk_exp)(CX, s, P(e), P(e));
            MUL(e, E(Y, yo + j), e);
            STORE_I(e);
            MUL(t, t, e);
        }
        if (j == 0)
            COPY(R(r_), t);
        else
            ADD(R(r_), R(r_), t);
    }
    FRAME_END;
}

/* The chunk of the models with a decay per key channel (fla's chunk_kda, chunk_gla): kda (wy),
 * S_t = S_{t-1} D_t (I - beta_t k k^T) + beta_t v k^T, and gla, S_t = S_{t-1} D_t + v k^T, with
 * D_t = Diag(exp(g_t)). Gamma_r = sum_{t <= r} g_t per channel (running sums in the compute
 * format); a score between tokens r >= c takes exp(Gamma_r - Gamma_c) in each channel (dot_decay);
 * kda: L_rc = beta_r (k_r, k_c) (c < r), T = (I + L)^-1, W = T (beta k o exp(Gamma)),
 * U = T (beta v), E = U - W S_0^T; gla: E = V. Then o_r = scale ((q_r o exp(Gamma_r)) S_0^T +
 * sum_{c <= r} P_rc e_c), P_rc = (q_r, k_c), and S_C = S_0 D(Gamma_C) + sum_c e_c (k_c o
 * exp(Gamma_C - Gamma_c))^T. The products' operands q o exp(Gamma), k o exp(Gamma_C - Gamma) are
 * rounded to io as fla's kernels round them (.to(k.dtype)). In: cy (k'_t rows, io), the buffer (q'
 * in pq, lg, beta, v); out: S, o, the read-outs co. */
VLA_FN void FN(chunk_ch)(CXP, ST *s, int wy)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr);
    NUM *X = s->cx, *B = s->cy, *U = s->ce, *M = s->cm, *cb = s->cb, *G = s->cgd, *K = s->cu;
    VLA_PFOR(j, 0, d) /* Gamma, each channel's cumulative sum (fla's chunk_local_cumsum) */
        FN(chunk_gamma)(CX, s, G, d, j, rl, CB_AT(0, lg) + j);
    VLA_PFOR(i, 0, C * dv) { /* (beta) v, rounded to io */
        long r = i / dv;
        if (wy)
            MUL(E(U, i), E(cb, CB_AT(r, beta_decay)), E(cb, CB_AT(r, v) + i % dv));
        else
            COPY(E(U, i), E(cb, CB_AT(r, v) + i % dv));
        STORE_I(E(U, i));
    }
    if (wy) {
        VLA_PFOR(i, 0, C * C) { /* L below the diagonal of M */
            long r = i / C, c = i % C;
            if (c < r) {
                FN(dot_decay)(CX, s, P(E(M, i)), B, r * d, B, c * d, r, c);
                MUL(E(M, i), E(cb, CB_AT(r, beta_decay)), E(M, i));
            }
        }
        FN(chunk_inverse)(CX, s->cfg.tri, M, s->cn, C);
        VLA_PFOR(i, 0, C * d) { /* W's operand beta_r k_r o exp(Gamma_r), rounded once */
            TEMP(t);
            FN(chunk_exp)(CX, s, P(t), P(E(G, i)));
            MUL(E(X, i), E(cb, CB_AT(i / d, beta_decay)), E(B, i));
            MUL(E(X, i), E(X, i), t);
            STORE_I(E(X, i));
        }
        FN(chunk_tri)(CX, M, X, C, d);  /* W */
        FN(chunk_tri)(CX, M, U, C, dv); /* U */
    }
    FN(chunk_s0)(CX, s, U, wy ? X : NULL); /* S_0 in io; E = U - W S_0^T */
    VLA_PFOR(i, 0, C * C) { /* P on and below the diagonal (L and T are spent) */
        long r = i / C, c = i % C;
        if (c <= r) {
            FN(dot_decay)(CX, s, P(E(M, i)), cb, r * rl + oq, B, c * d, r, c);
            STORE_I(E(M, i));
        }
    }
    VLA_PFOR(i, 0, C * d) { /* q_r o exp(Gamma_r), rounded to io (W is spent) */
        TEMP(t);
        FN(chunk_exp)(CX, s, P(t), P(E(G, i)));
        MUL(E(X, i), E(cb, (i / d) * rl + oq + i % d), t);
        STORE_I(E(X, i));
    }
    VLA_PFOR(i, 0, C * dv) { /* the read-outs: the inter-chunk and the intra-chunk sums */
        long r = i / dv, a = i % dv;
        FN(dot_at)(CX, P(E(s->co, i)), s->s0, a * d, X, r * d, d);
        FN(chunk_masked)(CX, P(acc), M, U, r, a, C, dv);
        ADD(E(s->co, i), E(s->co, i), acc);
        MUL(E(s->co, i), E(s->co, i), E(s->c, C_SCALE));
    }
    VLA_PFOR(i, 0, C * d) { /* k_c o exp(Gamma_C - Gamma_c), rounded to io */
        TEMP(t);
        FN(chunk_dexp)(CX, s, P(t), P(E(G, (long)(C - 1) * d + i % d)), P(E(G, i)));
        MUL(E(K, i), E(B, i), t);
        STORE_I(E(K, i));
    }
    VLA_PFOR(i, 0, dv * d) { /* S_C = S_0 D(Gamma_C) + E^T K */
        const long c = i % d;
        FN(chunk_outer)(CX, P(acc), U, K, i / d, c, C, dv, d);
        FN(chunk_exp)(CX, s, P(t), P(E(G, (long)(C - 1) * d + c)));
        MUL(E(s->S, i), E(s->S, i), t);
        ADD(E(s->S, i), E(s->S, i), acc);
        STORE(E(s->S, i));
    }
    VLA_PFOR(a, 0, dv)
        COPY(E(s->o, a), E(s->co, (long)(C - 1) * dv + a));
    FRAME_END;
}

/* row r of a chunk array of d-vectors <- x, rounded to io */
VLA_FN void FN(chunk_row)(CXP, NUM *Y, int r, const NUM *x, int d)
{
    VLA_PFOR(j, 0, d) {
        COPY(E(Y, (long)r * d + j), E(x, j));
        STORE_I(E(Y, (long)r * d + j));
    }
}

/* ---- The ways that keep M in a chunk, MesaNet's arrangement (fla's chunk_cg_solver_fwd): M_0,
 * the chunk's first M, is kept (rounded to the io format, as fla stages h); token r's system
 * M_r y = x (M_r = M_0 + sum_{j <= r} u'_j u'_j^T) is solved by cg from x = 0, every token's at
 * once (they are independent of one another), with M_r p computed without forming M_r, as
 * U_{<=r}^T (U_{<=r} p) + M_0 p from the masked scores (fla's chunk_update_once); the chunk's
 * end M_C = M_0 + U^T U is a blocked product (chunk_update_M). Only cg: solve would factor M_r
 * and cheb bound its entries, and no chunk kernel forms M_r (vla_form_check). ---- */

/* q = M_r p: p rounded to io (pio, fla's p.to(k.dtype)), the scores c_j = u'_j . p for j <= r
 * rounded to io (cp), then q = sum_{j <= r} c_j u'_j (j ascending) + M_0 p */
VLA_FN void FN(chunk_mv)(CXP, ST *s, NUM *q, const NUM *p, int r)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d;
    FN(chunk_row)(CX, s->pio, 0, p, d);
    VLA_PFOR(j, 0, r + 1) {
        FN(dot_at)(CX, P(E(s->cp, j)), s->cu, (long)j * d, s->pio, 0, d);
        STORE_I(E(s->cp, j));
    }
    FN(matvec_t)(CX, q, s->m0, s->pio, d, d);
    VLA_PFOR(i, 0, d) {
        MUL(acc, E(s->cp, 0), E(s->cu, i));
        for (int j = 1; j <= r; j++) {
            TEMP(t);
            MUL(t, E(s->cp, j), E(s->cu, (long)j * d + i));
            ADD(acc, acc, t);
        }
        ADD(E(q, i), acc, E(q, i));
    }
    FRAME_END;
}

/* M_C = M_0 + U^T U: each entry of the upper triangle a sum over the tokens ascending, added to
 * M_0 and rounded once when stored, then mirrored (update_M's conventions) */
VLA_FN void FN(chunk_update_M)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, C = s->cfg.chunk;
    NUM *M = s->A, *U = s->cu;
    VLA_PFOR(i, 0, d)
        for (int j = i; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(acc, E(U, i), E(U, j));
            for (int m = 1; m < C; m++) {
                TEMP(t);
                MUL(t, E(U, (long)m * d + i), E(U, (long)m * d + j));
                ADD(acc, acc, t);
            }
            ADD(E(M, ij), E(M, ij), acc);
            STORE(E(M, ij));
            COPY(E(M, (size_t)j * d + i), E(M, ij));
        }
    FRAME_END;
}

/* The blocked Woodbury update of A by the chunk's u' (rows of cu): Z0 = U A_0 (rows A_0 u'_j),
 * the capacitance G = I + U A_0 U^T and its factor L D L^T, whose pivots D are the
 * Sherman-Morrison denominators delta_j of the sequential steps (so the guard floors them), and
 * Z = L^-1 Z0 (z_j = A_{j-1} u'_j in exact arithmetic), into cz, cm (L below the diagonal) and
 * cp (D). Then A_j x = A_0 x - sum_{m <= j} z_m (z_m . x) / d_m without forming A_j
 * (chunk_apply), and A_C = A_0 - Z^T D^-1 Z (chunk_update_A). */
VLA_FN void FN(chunk_woodbury)(CXP, ST *s, int guard, NREF eps)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(g);
    SCALAR(t);
    SCALAR(one);
    const int d = s->d, C = s->cfg.chunk;
    NUM *M = s->cm, *Z = s->cz, *U = s->cu;
    for (int r = 0; r < C; r++)
        FN(apply_A)(CX, s, VLA_ROWP(Z, (size_t)r * d), VLA_ROWP(U, (size_t)r * d));
    FN(round_io)(CX, Z, (long)C * d);
    /* G's lower triangle: u'_r . z0_c, and 1 + u'_r . z0_r as the sequential delta */
    SETI(one, 1);
    VLA_PFOR(i, 0, C * C) {
        long r = i / C, c = i % C;
        if (c <= r) {
            FN(dot_at)(CX, P(E(M, i)), U, r * d, Z, c * d, d);
            if (c == r)
                ADD(E(M, i), one, E(M, i));
            STORE_I(E(M, i));
        }
    }
    /* G = L D L^T, column by column (left-looking) */
    for (int c = 0; c < C; c++) {
        COPY(acc, E(M, (long)c * C + c));
        for (int m = 0; m < c; m++) {
            TEMP(t);
            MUL(t, E(M, (long)c * C + m), E(s->cp, m));
            MUL(t, t, E(M, (long)c * C + m));
            SUB(acc, acc, t);
        }
        if (guard == GUARD_FLOOR) {
            LANE_IF(LESS(acc, R(eps))) {
                COPY(acc, R(eps));
                COUNT(s->cnt.guard);
            } LANE_END
        }
        VLA_PFOR(i, c, c + 1)
            COPY(E(s->cp, i), acc);
        VLA_PFOR(r, c + 1, C) {
            COPY(g, E(M, (long)r * C + c));
            for (int m = 0; m < c; m++) {
                TEMP(t);
                MUL(t, E(M, (long)r * C + m), E(s->cp, m));
                MUL(t, t, E(M, (long)c * C + m));
                SUB(g, g, t);
            }
            DIV(E(M, (long)r * C + c), g, E(s->cp, c));
        }
    }
    VLA_PFOR(i, 0, C * C)
        if (i % C < i / C)
            STORE_I(E(M, i));
    FN(round_io)(CX, s->cp, C);
    /* Z = L^-1 Z0, in place, row by row */
    for (int r = 1; r < C; r++)
        VLA_PFOR(j, 0, d) {
            COPY(g, E(Z, (long)r * d + j));
            for (int m = 0; m < r; m++) {
                TEMP(t);
                MUL(t, E(M, (long)r * C + m), E(Z, (long)m * d + j));
                SUB(g, g, t);
            }
            COPY(E(Z, (long)r * d + j), g);
        }
    FN(round_io)(CX, Z, (long)C * d);
    FRAME_END;
}

/* y = A_r x for the chunk's token r (y not x), from A_0 and chunk_woodbury's factor; plus
 * per_eps x for the last token when a nudge falls at the chunk's end (nudged); cg: recur.h's cg */
VLA_FN void FN(chunk_apply)(CXP, ST *s, NUM *y, const NUM *x, int r, int nudged)
{
    if (VLA_TRACKING(s, CG)) {
        FN(cg)(CX, s, y, x, r);
        return;
    }
    FRAME_BEGIN;
    SCALAR(c);
    SCALAR(t);
    const int d = s->d;
    FN(apply_A)(CX, s, y, x);
    for (int m = 0; m <= r; m++) {
        FN(dot_at)(CX, P(c), s->cz, (long)m * d, x, 0, d);
        DIV(c, c, E(s->cp, m));
        VLA_PFOR(j, 0, d) {
            TEMP(t);
            MUL(t, c, E(s->cz, (long)m * d + j));
            SUB(E(y, j), E(y, j), t);
        }
    }
    if (nudged && r == s->cfg.chunk - 1)
        VLA_PFOR(j, 0, d) {
            TEMP(t);
            MUL(t, E(s->c, C_PER), E(x, j));
            ADD(E(y, j), E(y, j), t);
        }
    FRAME_END;
}

/* A_C = A_0 - sum_m z_m z_m^T / d_m, each entry's sum m ascending (the sm update's terms; every
 * entry and its mirror are the same operations, so A stays exactly symmetric), stored; cg:
 * chunk_update_M */
VLA_FN void FN(chunk_update_A)(CXP, ST *s)
{
    if (VLA_TRACKING(s, CG)) {
        FN(chunk_update_M)(CX, s);
        return;
    }
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, C = s->cfg.chunk;
    NUM *Z = s->cz;
    VLA_PFOR(i, 0, d * d) {
        long a = i / d, b = i % d;
        MUL(acc, E(Z, a), E(Z, b));
        DIV(acc, acc, E(s->cp, 0));
        for (int m = 1; m < C; m++) {
            TEMP(t);
            MUL(t, E(Z, (long)m * d + a), E(Z, (long)m * d + b));
            DIV(t, t, E(s->cp, m));
            ADD(acc, acc, t);
        }
        SUB(E(s->A, i), E(s->A, i), acc);
        STORE(E(s->A, i));
    }
    FRAME_END;
}


/* the chunk's u' (uprime_<tok> of each token) into cu, and the factor of its capacitance (cg:
 * M_0 rounded to io into m0) */
VLA_FN void FN(chunk_penalty)(CXP, ST *s, int guard, NREF eps)
{
    for (int r = 0; r < s->cfg.chunk; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(chunk_row)(CX, s->cu, r, FN(uprime)(CX, s), s->d);
    }
    if (VLA_TRACKING(s, CG)) {
        VLA_PFOR(i, 0, s->d * s->d) {
            COPY(E(s->m0, i), E(s->A, i));
            STORE_I(E(s->m0, i));
        }
        return;
    }
    FN(chunk_woodbury)(CX, s, guard, eps);
}

/* The gated queries of a chunk's tokens (l2norm(q), rounded to io as fla's l2norm kernel stores
 * them) into the chunk's buffer, where chunk_wy reads them (VLA_IN_pq) */
VLA_FN void FN(chunk_queries)(CXP, ST *s)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    for (int r = 0; r < C; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(gated_query)(CX, s, s->w, 0);
        VLA_PFOR(j, 0, d) {
            COPY(E(s->cb, CB_AT(r, pq) + j), E(s->w, j));
            STORE_I(E(s->cb, CB_AT(r, pq) + j));
        }
    }
}

/* The additive models' chunk (gla, mamba2): the queries, the keys k_t (inputs: in the io format
 * already) as the chunk's rows in cy, the last token's slot and vectors in place for the state
 * passed on */
VLA_FN void FN(chunk_additive)(CXP, ST *s)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    FN(chunk_queries)(CX, s);
    VLA_PFOR(i, 0, C * d)
        COPY(E(s->cy, i), E(s->cb, CB_AT(i / d, pk) + i % d));
    FN(chunk_slot)(CX, s, C - 1, 0);
    FN(vec_additive)(CX, s);
}
