/* models/rwkv7.h: RWKV-7's generalized delta rule, diagonal plus low rank (docs/gated.md; fla's
 * chunk_dplr_delta_rule, fused_mul_recurrent_rwkv7): S_t = S_{t-1} (Diag(w_t) + a_t b_t^T) +
 * v k^T, the low-rank term on the undecayed S_{t-1}, w = exp(g) per key channel in the compute
 * format, a and b from the trace (RWKV-7: a = -kappa, b = kappa * iclr); o = S (scale q), scale 1. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* no delta term: k' = 0, alpha = k, so J = Diag(w) + a b^T and B = v k^T */
VLA_FN void FN(vec_rwkv7)(CXP, ST *s) { FN(vec_additive)(CX, s); }

/* S_ij = (S_ij w_j + (S a)_i b_j) + v_i k_j, each entry stored once (dplr's naive order) */
VLA_FN void FN(step_rwkv7)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(t);
    SCALAR(x);
    const int d = s->d, dv = s->dv;
    NUM *S = s->S;
    FN(vec_rwkv7)(CX, s);
    FN(matvec)(CX, s->e, S, s->ra, dv, d); /* S a, from the undecayed state */
    VLA_PFOR(i, 0, dv)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            TEMP(t);
            TEMP(x);
            MUL(x, E(S, ij), E(s->ag, j));
            MUL(t, E(s->e, i), E(s->rb, j));
            ADD(x, x, t);
            MUL(t, E(s->v, i), E(s->pk, j));
            ADD(E(S, ij), x, t);
            STORE(E(S, ij));
        }
    FRAME_END;
}

VLA_FN void FN(read_rwkv7)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* r = sum_{j < n} X_{x0 + j xs} Y_{y0 + j ys}, j ascending from the first term (0 when n = 0): the
 * chunk's masked sums and its write of S over arrays of any stride (V stays in the buffer) */
VLA_FN void FN(dot_strided)(CXP, NREF r_, const NUM *X, long x0, long xs, const NUM *Y, long y0,
                            long ys, int n)
{
    FRAME_BEGIN;
    SCALAR(t);
    if (n == 0)
        SETI(R(r_), 0);
    for (int j = 0; j < n; j++) {
        TEMP(t);
        MUL(t, E(X, x0 + j * xs), E(Y, y0 + j * ys));
        if (j == 0)
            COPY(R(r_), t);
        else
            ADD(R(r_), R(r_), t);
    }
    FRAME_END;
}

/* fla's chunk_dplr_delta_rule (docs/forms.md): with Gamma_r = sum_{t <= r} g_t per key channel (a
 * running sum in the compute format; the exclusive sum of token r is Gamma_{r-1}, 0 for r = 0)
 * and u_r = S_{r-1} a_r (fla's v_new), S_r = S_0 Diag(e^Gamma_r) + sum_{c <= r} (v_c k_c^T +
 * u_c b_c^T) Diag(e^(Gamma_r - Gamma_c)), so (I - A_ab) U = A_ak V + (A o e^Gamma_{r-1}) S_0^T with
 * the strictly lower A_ab = (a_r, b_c)_(r-1,c), A_ak = (a_r, k_c)_(r-1,c), (x, y)_(r,c) = sum_j x_j
 * y_j e^(Gamma_rj - Gamma_cj) (dot_decay, direct differences <= 0: fla's default sub_intra path;
 * the cumulative sums' order, format and base as chunk_gamma makes them, anchor=direct only).
 * T = (I - A_ab)^-1 by forward substitution (chunk_ut of -A_ab), W = T (A o e^Gamma_{r-1}),
 * U = (T A_ak) V, V2 = W S_0^T + U; o_r = scale ((q_r o e^Gamma_r) S_0^T + sum_{c <= r} A_qk v_c +
 * A_qb v2_c), S_C = S_0 Diag(e^Gamma_C) + V^T (K o e^(Gamma_C - Gamma)) + V2^T (B o e^(Gamma_C -
 * Gamma)). Rounded to io as fla stores them: A_ab, A_ak (its default path rounds them to q's dtype
 * before storing them in binary32), T, T A_ak, A o e^Gamma, W, U, S_0, q o e^Gamma, A_qk, A_qb,
 * K and B o e^(Gamma_C - Gamma), and V2 for the read-out (the state takes V2 unrounded, as fla's
 * registers hold it). fla multiplies A_ak by T in binary32 (TF32); here T is io already. */
VLA_FN void FN(chunk_rwkv7)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(zero);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    const long rl = vla_in_len(d, dv, s->ng, s->nr), oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr);
    const long ov = CB_AT(0, v), oa = CB_AT(0, ra), ob = CB_AT(0, rb), ok = CB_AT(0, pk);
    NUM *X = s->cx, *V2 = s->ce, *M = s->cm, *cb = s->cb, *G = s->cgd, *KG = s->cu, *BG = s->cz;
    SETI(zero, 0);
    FN(chunk_additive)(CX, s); /* the queries (pq), the last token's slot for the state passed on */
    VLA_PFOR(j, 0, d) /* Gamma, each channel's cumulative sum (cumsum=, base=: chunk_gamma) */
        FN(chunk_gamma)(CX, s, G, d, j, rl, CB_AT(0, lg) + j);
    VLA_PFOR(i, 0, C * C) { /* -A_ab below the diagonal of M, io */
        long r = i / C, c = i % C;
        if (c < r) {
            FN(dot_decay)(CX, s, P(E(M, i)), cb, oa + r * rl, cb, ob + c * rl, r - 1, c);
            STORE_I(E(M, i));
            SUB(E(M, i), zero, E(M, i));
        }
    }
    FN(chunk_inverse)(CX, s->cfg.tri, M, s->cn, C); /* T = (I - A_ab)^-1 above the diagonal, io */
    VLA_PFOR(i, 0, C * C) { /* A_ak below the diagonal, io */
        long r = i / C, c = i % C;
        if (c < r) {
            FN(dot_decay)(CX, s, P(E(M, i)), cb, oa + r * rl, cb, ok + c * rl, r - 1, c);
            STORE_I(E(M, i));
        }
    }
    for (int r = C - 1; r > 1; r--) /* T A_ak in place, rows from the last, the unit term last */
        VLA_PFOR(c, 0, r - 1) {
            TEMP(acc);
            FN(dot_strided)(CX, P(acc), M, (long)(c + 1) * C + r, C, M, (long)(c + 1) * C + c, C,
                            r - c - 1);
            ADD(E(M, (long)r * C + c), acc, E(M, (long)r * C + c));
        }
    VLA_PFOR(i, 0, C * C)
        if (i % C < i / C)
            STORE_I(E(M, i));
    VLA_PFOR(i, 0, C * d) { /* a_r o e^Gamma_{r-1}, io; then W = T (a o e^Gamma_{r-1}) */
        COPY(E(X, i), E(cb, oa + (i / d) * rl + i % d));
        if (i >= d) {
            TEMP(t);
            FN(chunk_exp)(CX, s, P(t), P(E(G, i - d)));
            MUL(E(X, i), E(X, i), t);
        }
        STORE_I(E(X, i));
    }
    FN(chunk_tri)(CX, M, X, C, d);
    VLA_PFOR(i, 0, C * dv) { /* U = (T A_ak) V, io */
        long r = i / dv, a = i % dv;
        FN(dot_strided)(CX, P(E(V2, i)), M, r * C, 1, cb, ov + a, rl, (int)r);
        STORE_I(E(V2, i));
    }
    FN(chunk_s0)(CX, s, V2, NULL); /* S_0 in io */
    VLA_PFOR(i, 0, C * dv) { /* V2 = W S_0^T + U (the state's operand, in the compute format) */
        long r = i / dv, a = i % dv;
        FN(dot_at)(CX, P(acc), s->s0, a * d, X, r * d, d);
        ADD(E(V2, i), acc, E(V2, i));
    }
    VLA_PFOR(i, 0, C * d) { /* k_c and b_c times e^(Gamma_C - Gamma_c), io */
        long r = i / d, j = i % d;
        TEMP(t);
        FN(chunk_dexp)(CX, s, P(t), P(E(G, (long)(C - 1) * d + j)), P(E(G, i)));
        MUL(E(KG, i), E(cb, ok + r * rl + j), t);
        STORE_I(E(KG, i));
        MUL(E(BG, i), E(cb, ob + r * rl + j), t);
        STORE_I(E(BG, i));
    }
    VLA_PFOR(i, 0, dv * d) { /* S_C = S_0 Diag(e^Gamma_C) + V^T KG + V2^T BG */
        const long a = i / d, c = i % d;
        TEMP(t);
        FN(dot_strided)(CX, P(acc), cb, ov + a, rl, KG, c, d, C);
        FN(dot_strided)(CX, P(t), V2, a, dv, BG, c, d, C);
        ADD(acc, acc, t);
        FN(chunk_exp)(CX, s, P(t), P(E(G, (long)(C - 1) * d + c)));
        MUL(E(s->S, i), E(s->S, i), t);
        ADD(E(s->S, i), E(s->S, i), acc);
        STORE(E(s->S, i));
    }
    FN(round_io)(CX, V2, (long)C * dv); /* fla's v_new, the read-out's operand */
    VLA_PFOR(i, 0, C * d) { /* q_r o e^Gamma_r, io (W is spent) */
        TEMP(t);
        FN(chunk_exp)(CX, s, P(t), P(E(G, i)));
        MUL(E(X, i), E(cb, (i / d) * rl + oq + i % d), t);
        STORE_I(E(X, i));
    }
    VLA_PFOR(i, 0, C * C) { /* A_qk on and below the diagonal, io (T and T A_ak are spent) */
        long r = i / C, c = i % C;
        if (c <= r) {
            FN(dot_decay)(CX, s, P(E(M, i)), cb, r * rl + oq, cb, ok + c * rl, r, c);
            STORE_I(E(M, i));
        }
    }
    VLA_PFOR(i, 0, C * dv) { /* the read-outs' inter-chunk part plus A_qk V */
        long r = i / dv, a = i % dv;
        FN(dot_at)(CX, P(E(s->co, i)), s->s0, a * d, X, r * d, d);
        FN(dot_strided)(CX, P(acc), M, r * C, 1, cb, ov + a, rl, (int)r + 1);
        ADD(E(s->co, i), E(s->co, i), acc);
    }
    VLA_PFOR(i, 0, C * C) { /* A_qb on and below the diagonal, io */
        long r = i / C, c = i % C;
        if (c <= r) {
            FN(dot_decay)(CX, s, P(E(M, i)), cb, r * rl + oq, cb, ob + c * rl, r, c);
            STORE_I(E(M, i));
        }
    }
    VLA_PFOR(i, 0, C * dv) { /* ... plus A_qb V2, scaled at the end */
        long r = i / dv, a = i % dv;
        FN(dot_strided)(CX, P(acc), M, r * C, 1, V2, a, dv, (int)r + 1);
        ADD(E(s->co, i), E(s->co, i), acc);
        MUL(E(s->co, i), E(s->co, i), E(s->c, C_SCALE));
    }
    VLA_PFOR(a, 0, dv)
        COPY(E(s->o, a), E(s->co, (long)(C - 1) * dv + a));
    FRAME_END;
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* S_t = S_{t-1} Diag(w) + (S_{t-1} a) b^T + v k^T. With z = dS b:
 * db = dS^T (S_{t-1} a), da = S_{t-1}^T z, dS_{t-1} = dS Diag(w) + z a^T, dg = w (dS . S_{t-1}) */
VLA_FN void FN(grad_rwkv7)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    FN(grad_read_gated)(CX, s, G);
    FN(matvec)(CX, G->y, Sp, s->ra, dv, d);           /* S_{t-1} a, as the forward computed it */
    FN(matvec_t)(CX, G->rb, G->dS, G->y, d, dv);      /* db */
    FN(matvec)(CX, G->y, G->dS, s->rb, dv, d);        /* z */
    FN(matvec_t)(CX, G->ra, Sp, G->y, d, dv);         /* da */
    FN(grad_additive)(CX, s, G, Sp, 2);
    for (int i = 0; i < dv; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(t, E(G->y, i), E(s->ra, j));
            ADD(E(G->dS, ij), E(G->dS, ij), t);
            STORE(E(G->dS, ij));
        }
    FRAME_END;
}
#endif
