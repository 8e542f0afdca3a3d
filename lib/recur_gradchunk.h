/* recur_gradchunk.h: the backward pass of the chunk form chunk:C in recur.h's text (docs/math.md
 * section 11), for the models whose chunk is recur_chunk.h's chunk_wy: the delta rule (plain or
 * with fla's scalar decay), Gated DeltaNet and mamba2 (no UT transform), as fla's
 * chunk_gated_delta_rule_bwd computes it (and chunk_ch's kda and gla, gradchunk_ch below;
 * loglinear's levels and mamba3's chunk: their own, models/loglinear.h and models/mamba3.h):
 * the chunks' first states recomputed from checkpoints as the seq form's states are (recur_grad.h's
 * gckpt, in units of a chunk: a block of ceil(sqrt(T / C)) chunks, 2 sqrt(T / C) states), the
 * backward walks the chunks from the last, re-running each one's forward from its first state
 * (the same operations, so the same
 * bits: T = (I + L)^-1, W, U, E = U - W S_0^T, the scores P), then takes the chunk's gradients
 * from the cotangent dS of its last state and the read-outs' c_r, and hands dS_0 to the chunk
 * before. Included after recur_grad.h by native_inst.h and reference/ref_model.c.
 *
 * With do_r = scale c_r (gdn's read-out scale; 1 for delta), gamma the cumulative log-decays (0
 * without a decay), D_rc = exp(gamma_r - gamma_c) (chunk_decay: anchored as the forward's, with
 * cfg's anchor), eC_c = exp(gamma_C - gamma_c):
 *   dE_c  = sum_{r >= c} P_rc do_r + eC_c dS k'_c                       (the cotangent of e_c, U)
 *   dS_0  = exp(gamma_C) dS + sum_r exp(gamma_r) do_r q'_r^T - sum_r dE_r W_r^T
 *   dP_rc = do_r . e_c (c <= r):  dq'_r += exp(gamma_r) S_0^T do_r + sum_c dP_rc D_rc k'_c,
 *                                 dk'_c += sum_r dP_rc D_rc q'_r + eC_c dS^T e_c
 *   dW = -dE S_0, dVb = T^T dE, dKb = T^T dW (T^T: the UT transform's backward),
 *   dA_rc = -(dVb_r . U_c + dKb_r . W_c) below the diagonal (A = L = beta_r (k'_r . k'_c) D_rc),
 *   Vb = beta v and Kb = beta exp(gamma) k' (W's operand) to dv, dbeta, dk', dgamma;
 * every exponential's gradient is the exponential times its cotangent (dgamma), and
 * dg_t = sum_{r >= t} dgamma_r (the cumulative sum's backward, whatever its order or base).
 *
 * Arithmetic: every sum in the compute format; dE, dW and their T^T products rounded to the io
 * format when their stage ends (fla stores dv and dw in the inputs' dtype); dS carried in the
 * storage format (fla's b_dh in binary32), its operand in the chunk's products rounded to io (fla's
 * dh in q's dtype); the gradients rounded to io when handed out. */
#ifndef VLA_RECUR_DEVICE

/* acc = column j of M (dv x d) dotted with x[off .. off + dv): the sum from a = 0 up, its first
 * term a product (the chunk backwards' S_0^T do_r and dS^T e_c, one entry) */
VLA_FN void FN(gc_coldot)(CXP, NREF acc, const NUM *M, const NUM *x, long off, long j, int d,
                          int dv)
{
    FRAME_BEGIN;
    SCALAR(t);
    MUL(R(acc), E(M, j), E(x, off));
    for (long a = 1; a < dv; a++) {
        MUL(t, E(M, a * d + j), E(x, off + a));
        ADD(R(acc), R(acc), t);
    }
    FRAME_END;
}

/* the chunk backward's arrays (one set per run) */
typedef struct {
    FN(gckpt) P;        /* the checkpoints (recur_grad.h), a block's chunks' first states */
    NUM *dS, *dS0;      /* dv x d: the cotangent of the chunk's last state, then of its first */
    NUM *dSi;           /* dv x d: dS rounded to io, the products' operand (fla's dh) */
    NUM *Tm, *wk;       /* C x C: T = (I + L)^-1 above the diagonal (chunk_inverse's); its work */
    NUM *Xb, *Kb;       /* C x d: beta k' (L's operand), beta exp(gamma) k' (W's) */
    NUM *Vb, *U, *Ev;   /* C x dv: beta v, U = T Vb, E = U - W S_0^T */
    NUM *dO, *dE, *Y;   /* C x dv: scale c_r; the cotangent of E and U; eC_c dS k'_c */
    NUM *dVb;           /* C x dv: T^T dE */
    NUM *dW, *dKb;      /* C x d: -dE S_0, T^T dW */
    NUM *dq, *dk;       /* C x d: the gradients of q' and k' (before the norms' backward) */
    NUM *dP;            /* C x C: do_r . e_c, then times D_rc */
    NUM *eg, *eC;       /* C: exp(gamma_r), exp(gamma_C - gamma_r) */
    NUM *dgam, *dbeta;  /* C */
    NUM *Wk, *egd, *dgd; /* C x d, kda: W, exp(Gamma), the gradients of Gamma */
    NUM *du;            /* C x d: the gradients of u (loglinear's lambda) */
    NUM *dSh;           /* nh x dv x d: loglinear's levels' cotangents (dS stays 0) */
    NUM *dkx, *dvx, *dth; /* d, dv, d: mamba3's carried cotangents of k~, v and the angles */
    int d, dv, C, nh;
} FN(gcstate);

/* The two chunks' (gradchunk_wy, gradchunk_ch) shared steps, in their order. A row r of the
 * chunk's buffer cb (rl numbers, recur_chunk.h's layout) holds beta_r, v_r and q'_r. */
#define GC_AT_(r, a) ((long)(r) * rl + vla_in_off(VLA_IN_##a, d, dv, s->ng, s->nr))
#define GC_BETA_(r) E(s->cb, GC_AT_(r, beta_decay))
/* q'_r's entry j, as the forward's scores read it (oq: its offset in a row) */
#define GC_QR_(r, j) E(s->cb, (long)(r) * rl + oq + (j))

/* Vb = beta v (wy; gla and mamba2: v, E = V), rounded to io; U and E start as Vb */
VLA_FN void FN(gc_vb)(CXP, ST *s, FN(gcstate) *G, int wy)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    for (long i = 0; i < (long)C * dv; i++) {
        if (wy)
            MUL(E(G->Vb, i), GC_BETA_(i / dv), E(s->cb, GC_AT_(i / dv, v) + i % dv));
        else
            COPY(E(G->Vb, i), E(s->cb, GC_AT_(i / dv, v) + i % dv));
        STORE_I(E(G->Vb, i));
        COPY(E(G->U, i), E(G->Vb, i));
        COPY(E(G->Ev, i), E(G->Vb, i));
    }
}

/* E = U - W S_0^T (chunk_s0's), rounded to io; then dS staged in io as the products take it (fla
 * stores dh in q's dtype; the carried dh, and dS_0's exp(gamma_C) dS term, stay in storage) */
VLA_FN void FN(gc_e_dsi)(CXP, ST *s, FN(gcstate) *G, const NUM *W, int wy)
{
    FRAME_BEGIN;
    SCALAR(acc);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    for (long i = 0; wy && i < (long)C * dv; i++) {
        FN(dot_at)(CX, P(acc), s->s0, (i % dv) * d, W, (i / dv) * d, d);
        SUB(E(G->Ev, i), E(G->U, i), acc);
        STORE_I(E(G->Ev, i));
    }
    for (long i = 0; i < (long)dv * d; i++) {
        COPY(E(G->dSi, i), E(G->dS, i));
        STORE_I(E(G->dSi, i));
    }
    FRAME_END;
}

/* dst = T^T src, C rows of n numbers (T_rc at Tm[c][r], its unit diagonal src's own row), each
 * rounded to io */
VLA_FN void FN(gc_tt)(CXP, ST *s, FN(gcstate) *G, NUM *dst, const NUM *src, long n)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int C = s->cfg.chunk;
    for (long cc = 0; cc < C; cc++)
        for (long a = 0; a < n; a++) {
            COPY(acc, E(src, cc * n + a));
            for (long r = cc + 1; r < C; r++) {
                MUL(t, E(G->Tm, cc * C + r), E(src, r * n + a));
                ADD(acc, acc, t);
            }
            COPY(E(dst, cc * n + a), acc);
            STORE_I(E(dst, cc * n + a));
        }
    FRAME_END;
}

/* dW = -dE S_0; the UT transform's backward dVb = T^T dE, dKb = T^T dW (T_rc at Tm[c][r]), each
 * rounded to io; without the UT transform (gla, mamba2) dv = dE */
VLA_FN void FN(gc_ut_back)(CXP, ST *s, FN(gcstate) *G, int wy)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    for (long i = 0; !wy && i < (long)C * dv; i++)
        COPY(E(G->dVb, i), E(G->dE, i));
    for (long i = 0; wy && i < (long)C * d; i++) {
        const long r = i / d, j = i % d;
        SETI(acc, 0);
        for (long a = 0; a < dv; a++) {
            MUL(t, E(G->dE, r * dv + a), E(s->s0, a * d + j));
            SUB(acc, acc, t);
        }
        COPY(E(G->dW, i), acc);
        STORE_I(E(G->dW, i));
    }
    if (wy) {
        FN(gc_tt)(CX, s, G, G->dVb, G->dE, dv);
        FN(gc_tt)(CX, s, G, G->dKb, G->dW, d);
    }
    FRAME_END;
}

/* base=2: 2^(gamma RCP_LN2) = e^(gamma RCP_LN2 ln 2); the binary32 RCP_LN2 is 1/ln 2 to 1.3e-8,
 * so its factor is in the gradient of each of the n log-decays in dg */
VLA_FN void FN(gc_base2)(CXP, ST *s, NUM *dg, long n)
{
    FRAME_BEGIN;
    SCALAR(t);
    SETD(t, 0x1.62e42fefa39efp-1);
    MUL(t, t, E(s->c, C_RCPLN2));
    for (long i = 0; i < n; i++)
        MUL(E(dg, i), E(dg, i), t);
    FRAME_END;
}

/* The two chunks' shared tail. dS_0 = dS Diag(dec) + sum_r do_r Xq_r^T - sum_r dE_r W_r^T, then
 * the UT transform's backward (gc_ut_back). dec: the whole chunk's decay per channel j at
 * dec[j dj] (gradchunk_wy: exp(gamma_C) for every j, dj = 0; gradchunk_ch: exp(Gamma_C), dj = 1);
 * Xq_r: the read-out's operand, Xq's row r (gradchunk_ch), or with Xq NULL q'_r exp(gamma_r)
 * taken as two products (gradchunk_wy's order). */
VLA_FN void FN(gc_ds0)(CXP, ST *s, FN(gcstate) *G, const NUM *W, const NUM *dec, long dj,
                       const NUM *Xq, int wy)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr);
    for (long i = 0; i < (long)dv * d; i++) {
        const long a = i / d, j = i % d;
        MUL(acc, E(G->dS, i), E(dec, j * dj));
        for (long r = 0; r < C; r++) {
            if (Xq) {
                MUL(t, E(G->dO, r * dv + a), E(Xq, r * d + j));
            } else {
                MUL(t, E(G->dO, r * dv + a), GC_QR_(r, j));
                MUL(t, t, E(G->eg, r));
            }
            ADD(acc, acc, t);
            if (wy) {
                MUL(t, E(G->dE, r * dv + a), E(W, r * d + j));
                SUB(acc, acc, t);
            }
        }
        COPY(E(G->dS0, i), acc);
        STORE(E(G->dS0, i));
    }
    FN(gc_ut_back)(CX, s, G, wy);
    FRAME_END;
}

/* The two chunks' last steps: the log-decays' gradients dg (C rows of n numbers) times base=2's
 * factor where base2, then dg_t = sum_{r >= t} dgamma_r in each column; the cotangent handed to
 * the chunk before, dS = dS_0. */
VLA_FN void FN(gc_finish)(CXP, ST *s, FN(gcstate) *G, NUM *dg, long n, int base2)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    if (base2)
        FN(gc_base2)(CX, s, dg, C * n);
    for (long r = C - 2; r >= 0; r--)
        for (long j = 0; j < n; j++)
            ADD(E(dg, r * n + j), E(dg, r * n + j), E(dg, (r + 1) * n + j));
    for (long i = 0; i < (long)dv * d; i++)
        COPY(E(G->dS, i), E(G->dS0, i));
}

/* gradchunk_wy's forward operands, by the forward's own operations (chunk_wy): the same bits.
 * exp(gamma_r) in eg, exp(gamma_C - gamma_r) in eC, exp(gamma_C) in gC; Vb (and U, E as Vb), with
 * the UT transform beta k' (Xb), Kb, T (Tm) and U = T Vb */
VLA_FN void FN(gc_wy_forward)(CXP, ST *s, FN(gcstate) *G, int wy, int decay, NREF gC)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    NUM *K = s->cy, *Gm = s->cg;
    SETI(R(gC), 1);
    for (int r = 0; r < C; r++) {
        SETI(E(G->eg, r), 1);
        SETI(E(G->eC, r), 1);
        if (decay) {
            FN(chunk_exp)(CX, s, P(E(G->eg, r)), P(E(Gm, r)));
            FN(chunk_dexp)(CX, s, P(E(G->eC, r)), P(E(Gm, C - 1)), P(E(Gm, r)));
        }
    }
    if (decay)
        FN(chunk_exp)(CX, s, gC, P(E(Gm, C - 1)));
    FN(gc_vb)(CX, s, G, wy); /* mamba2: E = V, no UT transform */
    for (long i = 0; wy && i < (long)C * d; i++) {
        MUL(E(G->Xb, i), GC_BETA_(i / d), E(K, i));
        STORE_I(E(G->Xb, i));
        MUL(E(G->Kb, i), GC_BETA_(i / d), E(K, i));
        if (decay)
            MUL(E(G->Kb, i), E(G->Kb, i), E(G->eg, i / d));
        STORE_I(E(G->Kb, i));
    }
    for (long i = 0; wy && i < (long)C * C; i++) {
        const long r = i / C, c2 = i % C;
        if (c2 < r) {
            FN(dot_at)(CX, P(E(G->Tm, i)), G->Xb, r * d, K, c2 * d, d);
            if (decay)
                FN(chunk_decay)(CX, s, P(E(G->Tm, i)), r, c2);
        }
    }
    if (wy) {
        FN(chunk_inverse)(CX, s->cfg.tri, G->Tm, G->wk, C);
        FN(chunk_tri)(CX, G->Tm, G->U, C, dv); /* U = T Vb */
    }
}

/* gradchunk_wy's scores: dP_rc = do_r . e_c (c <= r), its gamma terms, then dP D; dq' and dk'
 * from them, the read-out's S_0^T do_r and the write's dS^T e_c */
VLA_FN void FN(gc_wy_scores)(CXP, ST *s, FN(gcstate) *G, int decay)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(e);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr);
    NUM *K = s->cy, *Pm = s->cm, *s0 = s->s0;
    for (long i = 0; i < (long)C * C; i++) {
        const long r = i / C, cc = i % C;
        if (cc > r)
            continue;
        FN(dot_at)(CX, P(E(G->dP, i)), G->dO, r * dv, G->Ev, cc * dv, dv);
        if (decay) {
            MUL(t, E(G->dP, i), E(Pm, i));
            ADD(E(G->dgam, r), E(G->dgam, r), t);
            SUB(E(G->dgam, cc), E(G->dgam, cc), t);
            SETI(e, 1);
            FN(chunk_decay)(CX, s, P(e), r, cc); /* D_rc, anchored as the forward's */
            MUL(E(G->dP, i), E(G->dP, i), e);
        }
    }
    for (long r = 0; r < C; r++)
        for (long j = 0; j < d; j++) {
            long i = r * d + j;
            /* (S_0^T do_r)_j exp(gamma_r) */
            FN(gc_coldot)(CX, P(acc), s0, G->dO, r * dv, j, d, dv);
            MUL(acc, acc, E(G->eg, r));
            if (decay) {
                MUL(t, acc, GC_QR_(r, j));
                ADD(E(G->dgam, r), E(G->dgam, r), t);
            }
            for (long cc = 0; cc <= r; cc++) {
                MUL(t, E(G->dP, r * C + cc), E(K, cc * d + j));
                ADD(acc, acc, t);
            }
            COPY(E(G->dq, i), acc);
        }
    for (long cc = 0; cc < C; cc++)
        for (long j = 0; j < d; j++) {
            FN(gc_coldot)(CX, P(acc), G->dSi, G->Ev, cc * dv, j, d, dv); /* (dS^T e_c)_j eC_c */
            MUL(acc, acc, E(G->eC, cc));
            for (long r = cc; r < C; r++) {
                MUL(t, E(G->dP, r * C + cc), GC_QR_(r, j));
                ADD(acc, acc, t);
            }
            COPY(E(G->dk, cc * d + j), acc);
        }
    FRAME_END;
}

/* s holds the chunk's forward (its buffer, k' rows in cy, gamma in cg, the staged S_0 in s0, W in
 * cx, P below cm's diagonal), S0 its first state as stored, c its read-outs' cotangents (C x dv),
 * G->dS the cotangent of its last state; on return G->dS is that of its first state and G's rows
 * hold the gradients of q', k' (dq, dk), v (dVb), beta, gamma (dgam: of the log-decays g).
 * wy, decay, scaled: the model's, as it gave them to the forward's chunk_wy (wy 0: mamba2's E = V,
 * no UT transform; scaled: the gated read-out's scale). */
VLA_FN void FN(gradchunk_wy)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c, int wy,
                             int decay, int scaled)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(e);
    SCALAR(gC);
    SCALAR(da);
    SCALAR(kk);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    NUM *cb = s->cb, *K = s->cy, *W = s->cx, *Pm = s->cm;
    FN(gc_wy_forward)(CX, s, G, wy, decay, P(gC));
    FN(gc_e_dsi)(CX, s, G, W, wy);
    /* do_r = scale c_r */
    for (long i = 0; i < (long)C * dv; i++) {
        LOAD_IN(E(G->dO, i), c[i]);
        if (scaled) {
            MUL(E(G->dO, i), E(G->dO, i), E(s->c, C_SCALE));
            STORE_I(E(G->dO, i));
        }
    }
    for (long i = 0; i < (long)C * dv; i++) {
        const long cc = i / dv, a = i % dv;
        FN(dot_at)(CX, P(E(G->Y, i)), G->dSi, a * d, K, cc * d, d);
        MUL(E(G->Y, i), E(G->Y, i), E(G->eC, cc));
        COPY(acc, E(G->Y, i));
        for (long r = cc; r < C; r++) {
            MUL(t, E(Pm, r * C + cc), E(G->dO, r * dv + a));
            ADD(acc, acc, t);
        }
        COPY(E(G->dE, i), acc);
        STORE_I(E(G->dE, i));
    }
    for (int r = 0; r < C; r++) {
        SETI(E(G->dgam, r), 0);
        SETI(E(G->dbeta, r), 0);
    }
    FN(gc_wy_scores)(CX, s, G, decay);
    if (decay) /* S_C = exp(gamma_C) S_0 + sum_c eC_c e_c k'_c^T */
        for (long cc = 0; cc < C; cc++) {
            FN(dot_at)(CX, P(t), G->Ev, cc * dv, G->Y, cc * dv, dv);
            SUB(E(G->dgam, cc), E(G->dgam, cc), t);
            ADD(E(G->dgam, C - 1), E(G->dgam, C - 1), t);
            if (cc == 0) {
                FN(dot_at)(CX, P(t), G->dS, 0, S0, 0, dv * d);
                MUL(t, t, gC);
                ADD(E(G->dgam, C - 1), E(G->dgam, C - 1), t);
            }
        }
    FN(gc_ds0)(CX, s, G, W, P(gC), 0, NULL, wy); /* mamba2: dv = dE */
    /* dA_rc = -(dVb_r . U_c + dKb_r . W_c), c < r; A_rc = beta_r (k'_r . k'_c) D_rc */
    for (long r = 1; wy && r < C; r++)
        for (long cc = 0; cc < r; cc++) {
            FN(dot_at)(CX, P(da), G->dVb, r * dv, G->U, cc * dv, dv);
            FN(dot_at)(CX, P(t), G->dKb, r * d, W, cc * d, d);
            ADD(da, da, t);
            FN(dot_at)(CX, P(kk), K, r * d, K, cc * d, d);
            if (decay) {
                SETI(e, 1);
                FN(chunk_decay)(CX, s, P(e), r, cc);
                MUL(da, da, e);
            }
            MUL(t, da, kk); /* -dA_rc D_rc (k'_r . k'_c): dbeta_r, and beta_r times it dgamma */
            SUB(E(G->dbeta, r), E(G->dbeta, r), t);
            if (decay) {
                MUL(t, t, GC_BETA_(r));
                SUB(E(G->dgam, r), E(G->dgam, r), t);
                ADD(E(G->dgam, cc), E(G->dgam, cc), t);
            }
            MUL(da, da, GC_BETA_(r)); /* -dA_rc beta_r D_rc */
            for (long j = 0; j < d; j++) {
                MUL(t, da, E(K, cc * d + j));
                SUB(E(G->dk, r * d + j), E(G->dk, r * d + j), t);
                MUL(t, da, E(K, r * d + j));
                SUB(E(G->dk, cc * d + j), E(G->dk, cc * d + j), t);
            }
        }
    /* Vb = beta v, Kb = beta exp(gamma) k' */
    for (long r = 0; wy && r < C; r++) {
        FN(dot_at)(CX, P(t), G->dVb, r * dv, cb, GC_AT_(r, v), dv);
        ADD(E(G->dbeta, r), E(G->dbeta, r), t);
        for (long a = 0; a < dv; a++)
            MUL(E(G->dVb, r * dv + a), E(G->dVb, r * dv + a), GC_BETA_(r));
        FN(dot_at)(CX, P(t), G->dKb, r * d, K, r * d, d);
        MUL(t, t, E(G->eg, r));
        ADD(E(G->dbeta, r), E(G->dbeta, r), t);
        if (decay) {
            MUL(t, t, GC_BETA_(r));
            ADD(E(G->dgam, r), E(G->dgam, r), t);
        }
        MUL(e, GC_BETA_(r), E(G->eg, r));
        for (long j = 0; j < d; j++) {
            MUL(t, e, E(G->dKb, r * d + j));
            ADD(E(G->dk, r * d + j), E(G->dk, r * d + j), t);
        }
    }
    FN(gc_finish)(CX, s, G, G->dgam, 1, decay && s->cfg.base2);
    FRAME_END;
}

/* gradchunk_ch's forward operands, by the forward's own operations (chunk_ch): Vb (and U, E as
 * Vb), exp(Gamma) in egd, Kb = beta k' o exp(Gamma), the gradients of Gamma zeroed, and with the
 * UT transform T (Tm), W = T Kb (Wk) and U = T Vb */
VLA_FN void FN(gc_ch_forward)(CXP, ST *s, FN(gcstate) *G, int wy)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr);
    NUM *K = s->cy, *Gm = s->cgd, *W = G->Wk, *dG = G->dgd;
    FN(gc_vb)(CX, s, G, wy); /* gla: E = V, no UT transform */
    for (long i = 0; i < (long)C * d; i++) {
        FN(chunk_exp)(CX, s, P(E(G->egd, i)), P(E(Gm, i)));
        MUL(E(W, i), GC_BETA_(i / d), E(K, i));
        MUL(E(W, i), E(W, i), E(G->egd, i));
        STORE_I(E(W, i));
        COPY(E(G->Kb, i), E(W, i));
        SETI(E(dG, i), 0);
    }
    for (long i = 0; wy && i < (long)C * C; i++) {
        const long r = i / C, c2 = i % C;
        if (c2 < r) {
            FN(dot_decay)(CX, s, P(E(G->Tm, i)), K, r * d, K, c2 * d, r, c2);
            MUL(E(G->Tm, i), GC_BETA_(r), E(G->Tm, i));
        }
    }
    if (wy) {
        FN(chunk_inverse)(CX, s->cfg.tri, G->Tm, G->wk, C);
        FN(chunk_tri)(CX, G->Tm, W, C, d);     /* W = T Kb */
        FN(chunk_tri)(CX, G->Tm, G->U, C, dv); /* U = T Vb */
    }
}

/* kda's chunk (recur_chunk.h's chunk_ch with wy: decays per key channel, Gamma = cgd, rows of d):
 * the same backward with every decay a vector; gla (no UT transform, wy 0): E = V, dv = dE. D_rcj = exp(Gamma_rj - Gamma_cj) (direct
 * differences: anchors refused), P_rc = sum_j q'_rj k'_cj D_rcj, L_rc = beta_r sum_j k'_rj k'_cj
 * D_rcj, Kb_r = beta_r k'_r o exp(Gamma_r), the read-out's operand Xq_r = q'_r o exp(Gamma_r) (cx
 * after the forward), the write's K2_c = k'_c o exp(Gamma_C - Gamma_c) (cu), S_C = S_0
 * Diag(exp(Gamma_C)) + E^T K2; W = T Kb is recomputed (cx holds Xq). Gradients of Gamma per
 * channel into dgd (C x d), then dg_tj = sum_{r >= t} dGamma_rj. */
VLA_FN void FN(gradchunk_ch)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c, int wy)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(e);
    SCALAR(da);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr);
    NUM *cb = s->cb, *K = s->cy, *Xq = s->cx, *K2 = s->cu, *Pm = s->cm, *Gm = s->cgd, *s0 = s->s0;
    NUM *W = G->Wk, *dG = G->dgd;
    FN(gc_ch_forward)(CX, s, G, wy);
    FN(gc_e_dsi)(CX, s, G, W, wy);
    for (long i = 0; i < (long)C * dv; i++) {
        LOAD_IN(E(G->dO, i), c[i]);
        MUL(E(G->dO, i), E(G->dO, i), E(s->c, C_SCALE));
        STORE_I(E(G->dO, i));
    }
    for (long i = 0; i < (long)C * dv; i++) { /* dE_c = sum_{r >= c} P_rc do_r + dS K2_c */
        const long cc = i / dv, a = i % dv;
        FN(dot_at)(CX, P(acc), G->dSi, a * d, K2, cc * d, d);
        for (long r = cc; r < C; r++) {
            MUL(t, E(Pm, r * C + cc), E(G->dO, r * dv + a));
            ADD(acc, acc, t);
        }
        COPY(E(G->dE, i), acc);
        STORE_I(E(G->dE, i));
    }
    for (int r = 0; r < C; r++)
        SETI(E(G->dbeta, r), 0);
    /* the read-out: dXq_r = S_0^T do_r; the scores dP_rc = do_r . e_c per channel */
    for (long r = 0; r < C; r++)
        for (long j = 0; j < d; j++) {
            FN(gc_coldot)(CX, P(acc), s0, G->dO, r * dv, j, d, dv);
            MUL(t, acc, E(Xq, r * d + j));
            ADD(E(dG, r * d + j), E(dG, r * d + j), t);
            MUL(E(G->dq, r * d + j), acc, E(G->egd, r * d + j));
        }
    for (long cc = 0; cc < C; cc++) /* the write: dK2_c = dS^T e_c */
        for (long j = 0; j < d; j++) {
            FN(gc_coldot)(CX, P(acc), G->dSi, G->Ev, cc * dv, j, d, dv);
            MUL(t, acc, E(K2, cc * d + j));
            SUB(E(dG, cc * d + j), E(dG, cc * d + j), t);
            ADD(E(dG, (C - 1) * d + j), E(dG, (C - 1) * d + j), t);
            FN(chunk_dexp)(CX, s, P(e), P(E(Gm, (C - 1) * d + j)), P(E(Gm, cc * d + j)));
            MUL(E(G->dk, cc * d + j), acc, e);
        }
    for (long j = 0; j < d; j++) { /* S_0 Diag(exp(Gamma_C)) */
        SETI(acc, 0);
        for (long a = 0; a < dv; a++) {
            MUL(t, E(G->dS, a * d + j), E(S0, a * d + j));
            ADD(acc, acc, t);
        }
        MUL(acc, acc, E(G->egd, (C - 1) * d + j));
        ADD(E(dG, (C - 1) * d + j), E(dG, (C - 1) * d + j), acc);
    }
    for (long r = 0; r < C; r++)
        for (long cc = 0; cc <= r; cc++) {
            FN(dot_at)(CX, P(da), G->dO, r * dv, G->Ev, cc * dv, dv);
            for (long j = 0; j < d; j++) {
                FN(chunk_dexp)(CX, s, P(e), P(E(Gm, r * d + j)), P(E(Gm, cc * d + j)));
                MUL(e, e, da); /* dP_rc D_rcj */
                MUL(t, e, E(K, cc * d + j));
                ADD(E(G->dq, r * d + j), E(G->dq, r * d + j), t);
                MUL(t, e, GC_QR_(r, j));
                ADD(E(G->dk, cc * d + j), E(G->dk, cc * d + j), t);
                MUL(t, t, E(K, cc * d + j));
                ADD(E(dG, r * d + j), E(dG, r * d + j), t);
                SUB(E(dG, cc * d + j), E(dG, cc * d + j), t);
            }
        }
    FN(gc_ds0)(CX, s, G, W, P(E(G->egd, (C - 1) * d)), 1, Xq, wy); /* gla: dv = dE */
    /* -dA_rc = dVb_r . U_c + dKb_r . W_c (c < r), L_rc = beta_r sum_j k'_rj k'_cj D_rcj */
    for (long r = 1; wy && r < C; r++)
        for (long cc = 0; cc < r; cc++) {
            FN(dot_at)(CX, P(da), G->dVb, r * dv, G->U, cc * dv, dv);
            FN(dot_at)(CX, P(t), G->dKb, r * d, W, cc * d, d);
            ADD(da, da, t);
            for (long j = 0; j < d; j++) {
                FN(chunk_dexp)(CX, s, P(e), P(E(Gm, r * d + j)), P(E(Gm, cc * d + j)));
                MUL(e, e, da); /* -dA_rc D_rcj */
                MUL(t, e, E(K, r * d + j));
                MUL(t, t, E(K, cc * d + j));
                SUB(E(G->dbeta, r), E(G->dbeta, r), t);
                MUL(t, t, GC_BETA_(r));
                SUB(E(dG, r * d + j), E(dG, r * d + j), t);
                ADD(E(dG, cc * d + j), E(dG, cc * d + j), t);
                MUL(e, e, GC_BETA_(r));
                MUL(t, e, E(K, cc * d + j));
                SUB(E(G->dk, r * d + j), E(G->dk, r * d + j), t);
                MUL(t, e, E(K, r * d + j));
                SUB(E(G->dk, cc * d + j), E(G->dk, cc * d + j), t);
            }
        }
    for (long r = 0; wy && r < C; r++) { /* Vb = beta v, Kb = beta k' o exp(Gamma) */
        FN(dot_at)(CX, P(t), G->dVb, r * dv, cb, GC_AT_(r, v), dv);
        ADD(E(G->dbeta, r), E(G->dbeta, r), t);
        for (long a = 0; a < dv; a++)
            MUL(E(G->dVb, r * dv + a), E(G->dVb, r * dv + a), GC_BETA_(r));
        for (long j = 0; j < d; j++) {
            MUL(t, E(G->dKb, r * d + j), E(K, r * d + j));
            MUL(t, t, E(G->egd, r * d + j));
            ADD(E(G->dbeta, r), E(G->dbeta, r), t);
            MUL(t, t, GC_BETA_(r));
            ADD(E(dG, r * d + j), E(dG, r * d + j), t);
            MUL(t, GC_BETA_(r), E(G->egd, r * d + j));
            MUL(t, t, E(G->dKb, r * d + j));
            ADD(E(G->dk, r * d + j), E(G->dk, r * d + j), t);
        }
    }
    FN(gc_finish)(CX, s, G, dG, d, s->cfg.base2);
    FRAME_END;
}

/* the numbers of the chunk backward's arrays, in allocation order */
#define VLA_GC_ARRAYS(X, d, dv, C, nh)                                                            \
    X(dS, (long)(dv) * (d)) X(dS0, (long)(dv) * (d)) X(dSi, (long)(dv) * (d)) X(Tm, (C) * (C))   \
    X(wk, (C) * (C)) X(Xb, (C) * (d)) X(Kb, (C) * (d)) X(Vb, (C) * (dv)) X(U, (C) * (dv))          \
    X(Ev, (C) * (dv)) X(dO, (C) * (dv)) X(dE, (C) * (dv)) X(Y, (C) * (dv)) X(dVb, (C) * (dv))      \
    X(dW, (C) * (d)) X(dKb, (C) * (d)) X(dq, (C) * (d)) X(dk, (C) * (d)) X(dP, (C) * (C))          \
    X(eg, C) X(eC, C) X(dgam, C) X(dbeta, C) X(Wk, (C) * (d)) X(egd, (C) * (d)) X(dgd, (C) * (d))  \
    X(du, (C) * (d)) X(dSh, (long)(nh) * (dv) * (d)) X(dkx, d) X(dvx, dv) X(dth, d)

/* the chunk backward's arrays freed (after gradchunk_begin, whatever it returned) */
VLA_FN void FN(gradchunk_end)(FN(gcstate) *G)
{
#define VLA_X_(name, len)                                                                          \
    if (G->name)                                                                                   \
        NUM_FREE(G->name, FN(alloc_len)(len));
    VLA_GC_ARRAYS(VLA_X_, G->d, G->dv, G->C, G->nh)
#undef VLA_X_
    FN(ckpt_end)(&G->P);
}

/* The opening of the chunk backwards written in a model's file (loglinear's, mamba3's): dO the
 * read-outs' cotangents c (C x dv) loaded to io (times the scale first where `scaled`), stored in
 * io; dq (C x d), du, dgam and dbeta zeroed; eg_r = exp(Gamma_r) and gl = exp(Gamma_{C-1}) of the
 * chunk's cumulative log-decays Gm; dS (dv x d) staged in io into dSi, and dk_cj = sum_a dSi_aj
 * U_ca, the written values U (C x dv) against it, column by column (gc_coldot) */
VLA_FN void FN(gc_open)(CXP, ST *s, FN(gcstate) *G, const double *c, int scaled, NUM *dq,
                        NUM *Gm, NREF gl, const NUM *dS, const NUM *U, NUM *dk)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    for (long i = 0; i < (long)C * dv; i++) {
        LOAD_IN(E(G->dO, i), c[i]);
        if (scaled)
            MUL(E(G->dO, i), E(G->dO, i), E(s->c, C_SCALE));
        STORE_I(E(G->dO, i));
    }
    for (long i = 0; i < (long)C * d; i++) {
        SETI(E(dq, i), 0);
        SETI(E(G->du, i), 0);
    }
    for (int r = 0; r < C; r++) {
        SETI(E(G->dgam, r), 0);
        SETI(E(G->dbeta, r), 0);
        FN(chunk_exp)(CX, s, P(E(G->eg, r)), P(E(Gm, r)));
    }
    FN(chunk_exp)(CX, s, gl, P(E(Gm, C - 1)));
    for (long i = 0; i < (long)dv * d; i++) {
        COPY(E(G->dSi, i), E(dS, i));
        STORE_I(E(G->dSi, i));
    }
    for (long cc = 0; cc < C; cc++)
        for (long j = 0; j < d; j++)
            FN(gc_coldot)(CX, P(E(dk, cc * d + j)), G->dSi, U, cc * dv, j, d, dv);
}

/* A score's cotangent into loglinear's and mamba3's chunk backwards (c < r): dgam_r += t, dgam_c
 * -= t (t the term of the log-decays), then dm times D_rc (chunk_decay, anchored as the forward's)
 * into dq_r += dm k_c and dk_c += dm q_r, q_r the d numbers of Qv from qo */
VLA_FN void FN(gc_score)(CXP, ST *s, FN(gcstate) *G, NREF dm, NREF t, long r, long cc,
                         const NUM *K, const NUM *Qv, long qo, NUM *dq, NUM *dk)
{
    FRAME_BEGIN;
    SCALAR(e);
    SCALAR(u);
    const int d = s->d;
    ADD(E(G->dgam, r), E(G->dgam, r), R(t));
    SUB(E(G->dgam, cc), E(G->dgam, cc), R(t));
    SETI(e, 1);
    FN(chunk_decay)(CX, s, P(e), r, cc);
    MUL(R(dm), R(dm), e);
    for (long j = 0; j < d; j++) {
        TEMP(u);
        MUL(u, R(dm), E(K, cc * d + j));
        ADD(E(dq, r * d + j), E(dq, r * d + j), u);
        MUL(u, R(dm), E(Qv, qo + j));
        ADD(E(dk, cc * d + j), E(dk, cc * d + j), u);
    }
    FRAME_END;
}

/* The chunk backward of each model with one (VLA_MODELS' gradchunk column), in its file's second
 * part (lib/models/<tok>.h under VLA_MODEL_GRAD, included below): gradchunk_<tok>, the chunk's
 * backward (gradchunk_wy or gradchunk_ch with the arguments its forward gave chunk_wy or
 * chunk_ch, or the model's own: loglinear's, mamba3's), and gradkey_<tok>, the backward of its k' of k (dk in place), which its seq
 * backward (grad_<tok>) calls too. Declared here, so that a model marked without them is a build
 * error. */
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, \
               reads, uprime, devices, gradchunk, ...)                                             \
    VLA_IF(gradchunk,                                                                              \
           VLA_FN void FN(gradchunk_##tok)(CXP, ST *s, FN(gcstate) *G, const NUM *S0,              \
                                           const double *c);                                       \
           VLA_FN void FN(gradkey_##tok)(CXP, ST *s, NUM *dk);)
VLA_MODELS(VLA_X_)
#undef VLA_X_

/* The seq backward's chunk twin (grad_begin): the forward of T steps of s, whose cfg is chunk:C
 * of a model vla_grad_check admits, a checkpoint at every block's first chunk, a block being
 * ceil(sqrt(ceil(T / C))) chunks (ckpt_begin with U = C). Then gradchunk_block for each block from
 * the last, and gradchunk_end. A vla_err. */
VLA_FN int FN(gradchunk_begin)(CXP, ST *s, FN(gcstate) *G, long T, vla_grad_input in, void *ctx)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    *G = (FN(gcstate)){.d = d, .dv = dv, .C = C, .nh = vla_levels(&s->cfg)};
    int ok = 1;
#define VLA_X_(name, len) ok &= (G->name = NUM_ALLOC(FN(alloc_len)(len))) != NULL;
    VLA_GC_ARRAYS(VLA_X_, d, dv, C, G->nh)
#undef VLA_X_
    if (!ok)
        return VLA_ENOMEM;
    return FN(ckpt_begin)(CX, s, &G->P, T, C, in, ctx);
}

/* Block j's backward (grad_block's twin), its chunks from the last, after the later blocks'
 * (G->dS carries the cotangent of the block's last state): each chunk's forward re-run from its
 * first state (ckpt_block's), a last chunk of T mod C tokens the chunk vstate_finish computes;
 * c_t at c + (t - base) dv, the gradients into out's rows t - base. */
VLA_FN int FN(gradchunk_block)(CXP, ST *s, FN(gcstate) *G, long j, vla_grad_input in, void *ctx,
                               const double *c, const vla_grads *out, long base)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    long t1;
    const long tb = FN(ckpt_block)(CX, s, &G->P, j, in, ctx, &t1);
    int r = tb < 0 ? (int)tb : VLA_OK;
    vla_input x;
    for (long t0 = tb + (t1 - 1 - tb) / C * C; t0 >= tb && !r; t0 -= C) {
        const long n = t0 + C < t1 ? C : t1 - t0;
        NUM *S0 = VLA_ROWP(G->P.seg, (t0 - tb) / C * G->P.nsav); /* the chunk's first state */
        if ((r = FN(ckpt_run)(CX, s, &G->P, S0, t0, t0 + n, NULL, 0, in, ctx)) ||
            (r = FN(vstate_finish)(CX, s))) /* the chunk's forward again (a last, shorter one) */
            break;
        ARITH_ENTER;
        s->cfg.chunk = (int)n;
        switch (s->cfg.model) { /* the model's (its file's gradchunk_<tok>) */
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, \
               reads, uprime, devices, gradchunk, ...)                                             \
    VLA_IF(gradchunk, case VLA_##ID : (FN(gradchunk_##tok))(CX, s, G, S0, c + (t0 - base) * dv);  \
           break;)
            VLA_MODELS(VLA_X_)
#undef VLA_X_
        default:
            break;
        }
        s->cfg.chunk = C;
        ARITH_LEAVE;
        for (long t = t0; t < t0 + n && !r; t++) { /* the norms' backward, the gradients out */
            const long i = t - t0, o = t - base; /* the step's row in the chunk's and in out */
            if ((r = in(ctx, t, &x)))
                break;
            ARITH_ENTER;
            FN(load)(CX, s, &x);
            NUM *dq = VLA_ROWP(G->dq, i * d), *dk = VLA_ROWP(G->dk, i * d);
            if (vla_col_gate(s->cfg.model) && s->cfg.qknorm) /* the gated read's q (gated_query) */
                FN(grad_norm)(CX, dq, s->pq, d, P(E(s->c, C_L2EPS)), 0);
            switch (s->cfg.model) { /* the model's k' of k (its file's gradkey_<tok>) */
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, \
               reads, uprime, devices, gradchunk, ...)                                             \
    VLA_IF(gradchunk, case VLA_##ID : (FN(gradkey_##tok))(CX, s, dk); break;)
                VLA_MODELS(VLA_X_)
#undef VLA_X_
            default:
                break;
            }
            for (int k = 0; k < d; k++) {
                STORE_I(E(dq, k));
                STORE_I(E(dk, k));
                GRAD_OUT(out->dq[o * d + k], E(dq, k), 1);
                GRAD_OUT(out->dk[o * d + k], E(dk, k), 1);
            }
            for (int a = 0; a < dv; a++) {
                STORE_I(E(G->dVb, i * dv + a));
                GRAD_OUT(out->dv[o * dv + a], E(G->dVb, i * dv + a), 1);
            }
            STORE_I(E(G->dbeta, i));
            STORE_I(E(G->dgam, i));
            if (out->dbeta)
                GRAD_OUT(out->dbeta[o], E(G->dbeta, i), 1);
            if (out->dg && vla_col_gate(s->cfg.model) == 2) /* a log-decay per key channel */
                for (int k = 0; k < d; k++) {
                    STORE_I(E(G->dgd, i * d + k));
                    GRAD_OUT(out->dg[o * d + k], E(G->dgd, i * d + k), 1);
                }
            else if (out->dg)
                GRAD_OUT(out->dg[o], E(G->dgam, i), vla_grad_has(&s->cfg, VLA_GRAD_G));
            for (int k = 0; k < d && out->du; k++) {
                STORE_I(E(G->du, i * d + k));
                GRAD_OUT(out->du[o * d + k], E(G->du, i * d + k),
                         vla_grad_has(&s->cfg, VLA_GRAD_U));
            }
            if (out->dS_zero) /* a state's cotangent at the chunk's first token only */
                for (long k = 0; k < (long)dv * d; k++)
                    out->dS_zero[o * dv * d + k] =
                        t == t0 && ISFIN(E(G->dS, k)) && CMPD(E(G->dS, k), 0.0) == 0;
            ARITH_LEAVE;
        }
    }
    return r;
}
#undef VLA_GC_ARRAYS
#undef GC_AT_
#undef GC_BETA_

/* every model's backward (grad_<tok>; with a chunk backward, gradchunk_<tok> and gradkey_<tok>):
 * the second part of its file */
#define VLA_MODEL_GRAD
#include "models/models.h"
#undef VLA_MODEL_GRAD
#endif
