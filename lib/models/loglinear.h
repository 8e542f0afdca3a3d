/* models/loglinear.h: log-linear Mamba-2 (Guo, Yang et al., "Log-Linear Attention", 2025; fla's
 * ops/log_linear_attn, docs/gated.md): Mamba-2's state S_t = a_t S_{t-1} + v k^T kept as a
 * Fenwick tree of L states. At the token of 0-based position p, level 0 holds p's own write and
 * level l >= 1 the tokens s < p whose highest bit that differs from p's is bit l - 1 (nonempty
 * where bit l - 1 of p is set), each decayed to p. Token p > 0 first merges levels 0..z into level
 * z + 1 (empty until then), z the trailing zeros of p; then every level decays by a_p and level 0
 * becomes v k^T. The read-out weighs the levels by the token's lambda_p^(l), the first L entries
 * of the input u (L = vla_levels: min(d, VLA_LOG_LEVELS)): o = sum_l lambda^(l) S^(l) (scale q),
 * scale 1. A bucket whose level would reach L leaves the state: its weight is 0, as in fla's
 * chunk kernel, which reads level_scales past L as 0 (T <= 2^(L-1) keeps every token). S holds
 * the levels' sum, what the read-out with every lambda 1 reads: Mamba-2's state while
 * T <= 2^(L-1). */

/* level l's state (dv x d) in the array sh */
#define LL_LEVEL(s, l) VLA_ROWP((s)->sh, (size_t)(l) * (s)->dv * (s)->d)

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* 1 where level l holds tokens at position p: level 0 always, level l where bit l - 1 of p is set */
VLA_FN int FN(ll_on)(long p, int l) { return l == 0 || ((p >> (l - 1)) & 1); }

/* no delta term: k' = 0, alpha = k; the levels' sum has J = a I and B = v k^T, as mamba2 */
VLA_FN void FN(vec_loglinear)(CXP, ST *s) { FN(vec_additive)(CX, s); }

/* the trailing zeros of p > 0 */
VLA_FN int FN(ll_tz)(long p)
{
    int z = 0;
    while (!((p >> z) & 1))
        z++;
    return z;
}

/* dst = the sum of levels 0..z of the levels lv (dv x d each), from 0 up, each sum stored */
VLA_FN void FN(ll_sum_to)(CXP, ST *s, NUM *dst, const NUM *lv, int z)
{
    const int n = s->dv * s->d;
    VLA_PFOR(i, 0, n)
        COPY(E(dst, i), E(lv, i));
    for (int l = 1; l <= z; l++) {
        const NUM *src = VLA_ROWP(lv, (size_t)l * n);
        VLA_PFOR(i, 0, n) {
            ADD(E(dst, i), E(dst, i), E(src, i));
            STORE(E(dst, i));
        }
    }
}

/* position p > 0: levels 0..z, z p's trailing zeros, summed into level z + 1 */
VLA_FN void FN(ll_merge)(CXP, ST *s, long p)
{
    const int z = FN(ll_tz)(p);
    if (z + 1 >= vla_levels(&s->cfg))
        return; /* level z + 1 would be L or more: the bucket weighs 0, so it is dropped */
    FN(ll_sum_to)(CX, s, LL_LEVEL(s, z + 1), s->sh, z);
}

/* every level above 0 that holds tokens at position p decays by a, each entry stored */
VLA_FN void FN(ll_decay)(CXP, ST *s, long p, NREF a)
{
    const int n = s->dv * s->d, L = vla_levels(&s->cfg);
    for (int l = 1; l < L; l++) {
        if (!FN(ll_on)(p, l))
            continue;
        NUM *S = LL_LEVEL(s, l);
        VLA_PFOR(i, 0, n) {
            MUL(E(S, i), R(a), E(S, i));
            STORE(E(S, i));
        }
    }
}

/* S: the levels' sum, level 0 and those above it that hold tokens at position p, from 0 up */
VLA_FN void FN(ll_sum)(CXP, ST *s, long p)
{
    const int n = s->dv * s->d, L = vla_levels(&s->cfg);
    VLA_PFOR(i, 0, n)
        COPY(E(s->S, i), E(LL_LEVEL(s, 0), i));
    for (int l = 1; l < L; l++) {
        if (!FN(ll_on)(p, l))
            continue;
        const NUM *Sl = LL_LEVEL(s, l);
        VLA_PFOR(i, 0, n) {
            ADD(E(s->S, i), E(s->S, i), E(Sl, i));
            STORE(E(s->S, i));
        }
    }
}

VLA_FN void FN(step_loglinear)(CXP, ST *s, int has_g)
{
    const long p = s->t - 1;
    const int n = s->dv * s->d, d = s->d;
    FN(vec_loglinear)(CX, s);
    if (p > 0)
        FN(ll_merge)(CX, s, p);
    FN(ll_decay)(CX, s, p, P(E(s->beta_decay, 1)));
    NUM *S0 = LL_LEVEL(s, 0); /* level 0: the token's own write v k^T */
    VLA_PFOR(i, 0, n) {
        MUL(E(S0, i), E(s->v, i / d), E(s->al, i % d));
        STORE(E(S0, i));
    }
    FN(ll_sum)(CX, s, p);
}

/* o = sum_l lambda^(l) (S^(l) w), w = scale q, the levels from 0 up; nothing before a token */
VLA_FN void FN(read_loglinear)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(t);
    const long p = s->t - 1;
    const int L = vla_levels(&s->cfg);
    FN(gated_query)(CX, s, s->w, 1);
    VLA_PFOR(i, 0, s->dv)
        SETI(E(s->o, i), 0);
    for (int l = 0; l < L && p >= 0; l++) {
        if (!FN(ll_on)(p, l))
            continue;
        FN(matvec)(CX, s->e, LL_LEVEL(s, l), s->w, s->dv, s->d);
        VLA_PFOR(i, 0, s->dv) {
            TEMP(t);
            MUL(t, E(s->u, l), E(s->e, i));
            ADD(E(s->o, i), E(s->o, i), t);
        }
    }
    FRAME_END;
}

/* the level of tokens c <= r of a chunk (which starts at a multiple of C): 0 on the diagonal,
 * else 1 + the highest bit in which r and c differ (fla's level_lut) */
VLA_FN int FN(ll_level)(long r, long c)
{
    int l = 0;
    for (long x = r ^ c; x; x >>= 1)
        l++;
    return l;
}

/* fla's chunk_log_linear_attn, the chunk of tokens p0 .. p0 + C - 1 (p0 a multiple of C, gamma_r
 * the cumulative log-decays of the chunk, lambda_r^(l) = u_r[l], q' the gated queries in io). The
 * state between chunks keeps the last chunk's write whole in level 0, and above it the levels
 * of whole chunks (levels 1 .. log2 C hold nothing); at p0 levels 0 .. z merge into level z + 1
 * as in seq (ll_merge: fla's cascade kv_{j+1} += kv_j at the chunk's end, deferred to here). Then
 *   o_r = scale (sum_{c <= r} (((q'_r . k_c) e^(gamma_r - gamma_c))_io lambda_r^(l(r,c)))_io v_c
 *         + sum_l (S^(l)_io (lambda_r^(l) q'_r)_io) e^(gamma_r)),
 * the intra-chunk sum first, then the levels that hold tokens at p0, from the lowest; a level
 * past L weighs 0. The state: those levels decay by e^(gamma_C), level 0 becomes
 * sum_c (v_c e^(gamma_C - gamma_c))_io k_c^T (without the tokens whose level from the chunk's last
 * token is L or more, which seq has dropped by then), S the levels' sum. */
VLA_FN void FN(chunk_loglinear)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(gl);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk, L = vla_levels(&s->cfg);
    const long p0 = s->t - C, rl = vla_in_len(d, dv, s->ng, s->nr);
    NUM *M = s->cm, *V = s->ce, *X = s->cx, *G = s->cg, *cb = s->cb;
    FN(chunk_additive)(CX, s); /* q' in the buffer, the keys in cy, the last token's k', alpha */
    if (p0 > 0)
        FN(ll_merge)(CX, s, p0);
    VLA_PFOR(i, 0, 1)
        FN(chunk_gamma)(CX, s, G, 1, 0, rl, CB_AT(0, beta_decay) + 2);
    FN(chunk_exp)(CX, s, P(gl), P(E(G, C - 1)));
    /* the intra-chunk scores: decayed, rounded to io, weighed by their level's lambda, to io */
    VLA_PFOR(i, 0, C * C) {
        long r = i / C, c = i % C;
        if (c <= r) {
            const int l = FN(ll_level)(r, c);
            FN(dot_at)(CX, P(E(M, i)), cb, CB_AT(r, pq), s->cy, c * d, d);
            FN(chunk_decay)(CX, s, P(E(M, i)), r, c);
            STORE_I(E(M, i));
            if (l < L)
                MUL(E(M, i), E(M, i), E(cb, CB_AT(r, u) + l));
            else
                SETI(E(M, i), 0);
            STORE_I(E(M, i));
        }
    }
    VLA_PFOR(i, 0, C * dv)
        COPY(E(V, i), E(cb, CB_AT(i / dv, v) + i % dv));
    VLA_PFOR(i, 0, C * dv)
        FN(chunk_masked)(CX, P(E(s->co, i)), M, V, i / dv, i % dv, C, dv);
    /* the levels of whole chunks that hold tokens at p0 */
    for (int l = 1; l < L; l++) {
        if (!FN(ll_on)(p0, l))
            continue;
        FN(chunk_stage)(CX, s, LL_LEVEL(s, l));
        VLA_PFOR(i, 0, C * d) {
            MUL(E(X, i), E(cb, CB_AT(i / d, u) + l), E(cb, CB_AT(i / d, pq) + i % d));
            STORE_I(E(X, i));
        }
        VLA_PFOR(i, 0, C * dv) {
            TEMP(t);
            FN(dot_at)(CX, P(t), s->s0, (i % dv) * d, X, (i / dv) * d, d);
            FN(chunk_exp)(CX, s, P(acc), P(E(G, i / dv)));
            MUL(t, t, acc);
            ADD(E(s->co, i), E(s->co, i), t);
        }
    }
    VLA_PFOR(i, 0, C * dv) /* the gated family: fla's chunk kernels scale the read-out */
        MUL(E(s->co, i), E(s->co, i), E(s->c, C_SCALE));
    /* the state at the chunk's end */
    VLA_PFOR(i, 0, C * dv) {
        TEMP(t);
        if (FN(ll_level)(C - 1, i / dv) < L) {
            FN(chunk_dexp)(CX, s, P(t), P(E(G, C - 1)), P(E(G, i / dv)));
            MUL(E(V, i), E(V, i), t);
            STORE_I(E(V, i));
        } else
            SETI(E(V, i), 0);
    }
    FN(ll_decay)(CX, s, p0, P(gl));
    VLA_PFOR(i, 0, dv * d) {
        FN(chunk_outer)(CX, P(acc), V, s->cy, i / d, i % d, C, dv, d);
        COPY(E(LL_LEVEL(s, 0), i), acc);
        STORE(E(LL_LEVEL(s, 0), i));
    }
    FN(ll_sum)(CX, s, p0);
    VLA_PFOR(a, 0, dv)
        COPY(E(s->o, a), E(s->co, (long)(C - 1) * dv + a));
    FRAME_END;
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* level l's cotangent (dv x d) in G->dSh */
#define LL_DLEVEL(G, l) VLA_ROWP((G)->dSh, (size_t)(l) * (G)->dv * (G)->d)

/* The merge's backward at a token of level z (z = -1: the first token), the levels' cotangents
 * (n numbers each) in dSh: levels 0 .. min(z, L - 1) take level z + 1's where the step merged
 * them into it, else 0; level z + 1's is then spent, and level 0's too at the first token */
VLA_FN void FN(ll_merge_grad)(CXP, NUM *dSh, int z, int L, long n, int merged)
{
    for (int l = z < L ? z : L - 1; l >= 0; l--)
        for (long i = 0; i < n; i++)
            if (merged)
                COPY(E(VLA_ROWP(dSh, l * n), i), E(VLA_ROWP(dSh, (z + 1) * n), i));
            else
                SETI(E(VLA_ROWP(dSh, l * n), i), 0);
    for (long i = 0; merged && i < n; i++)
        SETI(E(VLA_ROWP(dSh, (z + 1) * n), i), 0);
    for (long i = 0; z < 0 && i < n; i++)
        SETI(E(dSh, i), 0);
}

/* Step p's backward (p = t - 1; s at the step's end with its vectors, Sp the saved arrays before
 * it), the levels' cotangents in G->dSh (of the step's end on entry, of its start on return):
 *   the read-out o = sum_l lambda^(l) S^(l) w over the levels that hold tokens at p:
 *     dlambda^(l) = c . (S^(l) w) (du), dS^(l) += lambda^(l) c w^T, dw = sum_l lambda^(l) S^(l)^T c;
 *   level 0's write v k^T: dv = dS^(0) k, dk = dS^(0)^T v;
 *   the decay of the levels l >= 1 that hold tokens: dg = a sum_l dS^(l) . X^(l), X^(l) the level
 *     before it (level z + 1: the merged sum, recomputed from Sp), then dS^(l) <- a dS^(l);
 *   the merge of levels 0 .. z into z + 1: each takes dS^(z+1), which becomes 0 (what the merge
 *     overwrote); a dropped bucket (z + 1 >= L) and the first token's level 0 take 0.
 * S, the levels' sum, is read by nothing: its cotangent G->dS stays 0. */
VLA_FN void FN(grad_loglinear)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv, n = dv * d, L = vla_levels(&s->cfg);
    const long p = s->t - 1;
    const int z = p > 0 ? FN(ll_tz)(p) : -1, merged = z >= 0 && z + 1 < L;
    const NUM *shp = VLA_ROWP(Sp, FN(grad_saved_at)(&s->cfg, "sh")); /* the levels before */
    NUM *dS0 = LL_DLEVEL(G, 0);
    for (int j = 0; j < d; j++) {
        SETI(E(G->dx, j), 0);
        SETI(E(G->du, j), 0);
    }
    for (int l = 0; l < L; l++) { /* the read-out */
        if (!FN(ll_on)(p, l))
            continue;
        const NUM *Sl = LL_LEVEL(s, l);
        NUM *dl = LL_DLEVEL(G, l);
        FN(matvec)(CX, s->e, Sl, s->w, dv, d);
        FN(dot)(CX, P(E(G->du, l)), G->ct, s->e, dv);
        for (int i = 0; i < dv; i++)
            for (int j = 0; j < d; j++) {
                MUL(t, E(s->u, l), E(G->ct, i));
                MUL(t, t, E(s->w, j));
                ADD(E(dl, (long)i * d + j), E(dl, (long)i * d + j), t);
                STORE(E(dl, (long)i * d + j));
            }
        FN(matvec_t)(CX, s->z, Sl, G->ct, d, dv);
        for (int j = 0; j < d; j++) {
            MUL(t, E(s->u, l), E(s->z, j));
            ADD(E(G->dx, j), E(G->dx, j), t);
        }
    }
    FN(grad_gated_query)(CX, s, G);
    FN(matvec)(CX, G->db, dS0, s->al, dv, d); /* level 0's write */
    FN(matvec_t)(CX, G->dkp, dS0, s->v, d, dv);
    if (merged) /* level z + 1 before the decay, as the forward summed it, into S (spent) */
        FN(ll_sum_to)(CX, s, s->S, shp, z);
    SETI(E(G->dg, 0), 0);
    for (int l = 1; l < L; l++) { /* the decay */
        if (!FN(ll_on)(p, l))
            continue;
        const NUM *X = l == z + 1 ? s->S : VLA_ROWP(shp, (size_t)l * n);
        NUM *dl = LL_DLEVEL(G, l);
        for (int i = 0; i < n; i++) {
            MUL(t, E(dl, i), E(X, i));
            ADD(E(G->dg, 0), E(G->dg, 0), t);
            MUL(E(dl, i), E(s->beta_decay, 1), E(dl, i));
            STORE(E(dl, i));
        }
    }
    MUL(E(G->dg, 0), E(G->dg, 0), E(s->beta_decay, 1));
    FN(ll_merge_grad)(CX, G->dSh, z, L, n, merged);
    FRAME_END;
}

VLA_FN void FN(gradkey_loglinear)(CXP, ST *s, NUM *dk) {} /* k' is k */

/* q'_r's entry j and lambda_r^(l) in the chunk's buffer (rl, oq, ou: its row's length and their
 * offsets in it) */
#define LL_Q(r, j) E(s->cb, (long)(r) * rl + oq + (j))
#define LL_U(r, l) E(s->cb, (long)(r) * rl + ou + (l))

/* gradchunk_loglinear's levels of whole chunks that hold tokens at the chunk's start p0 (z its
 * trailing zeros, shp the levels before its merge, gl = e^(gamma_C)): their decay's backward,
 * then their read-out's, into G->dSh, G->dq, G->du and G->dgam */
VLA_FN void FN(ll_grad_levels)(CXP, ST *s, FN(gcstate) *G, const NUM *shp, int z, NREF gl)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk, L = vla_levels(&s->cfg), n = dv * d;
    const long p0 = s->t - C, rl = vla_in_len(d, dv, s->ng, s->nr);
    const long oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr),
               ou = vla_in_off(VLA_IN_u, d, dv, s->ng, s->nr);
    NUM *Yq = G->Xb, *s0 = s->s0;
    if (z >= 0 && z + 1 < L) /* level z + 1 after the merge, as the forward summed it, into S */
        FN(ll_sum_to)(CX, s, s->S, shp, z);
    /* the decay */
    for (int l = 1; l < L; l++) {
        if (!FN(ll_on)(p0, l))
            continue;
        NUM *dl = LL_DLEVEL(G, l);
        FN(dot_at)(CX, P(t), dl, 0, l == z + 1 ? s->S : VLA_ROWP(shp, (size_t)l * n), 0, n);
        MUL(t, t, R(gl));
        ADD(E(G->dgam, C - 1), E(G->dgam, C - 1), t);
        for (long i = 0; i < n; i++) {
            MUL(E(dl, i), R(gl), E(dl, i));
            STORE(E(dl, i));
        }
    }
    /* the read-out */
    for (int l = 1; l < L; l++) {
        if (!FN(ll_on)(p0, l))
            continue;
        NUM *dl = LL_DLEVEL(G, l);
        FN(chunk_stage)(CX, s, l == z + 1 ? s->S : VLA_ROWP(shp, (size_t)l * n));
        for (long i = 0; i < (long)C * d; i++) {
            MUL(E(Yq, i), LL_U(i / d, l), LL_Q(i / d, i % d));
            STORE_I(E(Yq, i));
        }
        for (long r = 0; r < C; r++)
            for (long j = 0; j < d; j++) {
                FN(gc_coldot)(CX, P(acc), s0, G->dO, r * dv, j, d, dv);
                MUL(acc, acc, E(G->eg, r));
                MUL(t, LL_U(r, l), acc);
                ADD(E(G->dq, r * d + j), E(G->dq, r * d + j), t);
                MUL(t, acc, LL_Q(r, j));
                ADD(E(G->du, r * d + l), E(G->du, r * d + l), t);
                MUL(t, acc, E(Yq, r * d + j));
                ADD(E(G->dgam, r), E(G->dgam, r), t);
            }
        for (long i = 0; i < n; i++) {
            const long a = i / d, j = i % d;
            COPY(acc, E(dl, i));
            for (long r = 0; r < C; r++) {
                MUL(t, E(G->dO, r * dv + a), E(Yq, r * d + j));
                MUL(t, t, E(G->eg, r));
                ADD(acc, acc, t);
            }
            COPY(E(dl, i), acc);
            STORE(E(dl, i));
        }
    }
    FRAME_END;
}

/* The chunk's backward (chunk_loglinear's operations in reverse; s holds its forward: q' in the
 * buffer, the keys in cy, gamma in cg, the weighed scores M in cm, the written V' in ce; S0 its
 * first state as stored), the levels' cotangents in G->dSh (of the chunk's last state on entry,
 * of its first on return), do_r = scale c_r, e^(gamma_r) in G->eg:
 *   level 0's write sum_c V'_c k_c^T, V'_c = v_c eC_c (eC_c = e^(gamma_C - gamma_c), 0 for a
 *     token the write leaves out): dk_c = dS^(0)^T V'_c, dV'_c = dS^(0) k_c, dv_c = eC_c dV'_c,
 *     dgamma_C += eC_c dV'_c . v_c, dgamma_c -= the same;
 *   the decay by e^(gamma_C) of the levels l >= 1 that hold tokens at p0: dgamma_C += e^(gamma_C)
 *     dS^(l) . X^(l) (X^(l) the level after the merge: level z + 1 the merged sum, recomputed from
 *     S0), then dS^(l) <- e^(gamma_C) dS^(l);
 *   their read-out o_r += (S^(l) Y_r) e^(gamma_r), Y_r = lambda_r^(l) q'_r: with z_r =
 *     e^(gamma_r) S^(l)^T do_r (S^(l) staged as the forward took it), dq'_r += lambda_r^(l) z_r,
 *     dlambda_r^(l) += z_r . q'_r, dgamma_r += z_r . Y_r, dS^(l) += sum_r e^(gamma_r) do_r Y_r^T;
 *   the scores M_rc = A_rc lambda_r^(l(r,c)), A_rc = (q'_r . k_c) D_rc (l(r,c) < L), dM_rc =
 *     do_r . v_c: dlambda_r^(l(r,c)) += dM_rc A_rc; dA = dM_rc lambda_r^(l(r,c)): dgamma_r += dA
 *     A_rc, dgamma_c -= dA A_rc, dq'_r += dA D_rc k_c, dk_c += dA D_rc q'_r; dv_c += M_rc do_r;
 *   the merge of levels 0 .. z into z + 1 at p0 > 0 as grad_loglinear's (level 0, written and
 *     not read by the chunk, takes 0 otherwise);
 * then dg_t = sum_{r >= t} dgamma_r (gc_finish). Level 0's cotangent staged in io as the products
 * take it (dSi); the levels' cotangents stored after every update; S, the levels' sum, is read by
 * nothing: G->dS stays 0, as grad_loglinear's. */
VLA_FN void FN(gradchunk_loglinear)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    SCALAR(e);
    SCALAR(gl);
    SCALAR(dm);
    const int d = s->d, dv = s->dv, C = s->cfg.chunk, L = vla_levels(&s->cfg), n = dv * d;
    const long p0 = s->t - C, rl = vla_in_len(d, dv, s->ng, s->nr);
    const long oq = vla_in_off(VLA_IN_pq, d, dv, s->ng, s->nr),
               ou = vla_in_off(VLA_IN_u, d, dv, s->ng, s->nr),
               ov = vla_in_off(VLA_IN_v, d, dv, s->ng, s->nr);
    const int z = p0 > 0 ? FN(ll_tz)(p0) : -1, merged = z >= 0 && z + 1 < L;
    vla_config run = s->cfg; /* the saved arrays' layout is the run's chunk:C, not a last chunk's */
    run.chunk = G->C;
    const NUM *shp = VLA_ROWP(S0, FN(grad_saved_at)(&run, "sh")); /* the levels before */
    NUM *cb = s->cb, *K = s->cy, *Gm = s->cg, *M = s->cm, *Vw = s->ce;
    NUM *dS0 = LL_DLEVEL(G, 0);
    FN(gc_open)(CX, s, G, c, 1, G->dq, Gm, P(gl), dS0, Vw, G->dk); /* level 0's write */
    for (long cc = 0; cc < C; cc++) {
        const int kept = FN(ll_level)(C - 1, cc) < L;
        for (long a = 0; a < dv; a++)
            if (kept)
                FN(dot_at)(CX, P(E(G->Y, cc * dv + a)), G->dSi, a * d, K, cc * d, d);
            else
                SETI(E(G->Y, cc * dv + a), 0);
        if (!kept)
            continue;
        FN(chunk_dexp)(CX, s, P(e), P(E(Gm, C - 1)), P(E(Gm, cc)));
        FN(dot_at)(CX, P(t), G->Y, cc * dv, cb, cc * rl + ov, dv);
        MUL(t, t, e);
        ADD(E(G->dgam, C - 1), E(G->dgam, C - 1), t);
        SUB(E(G->dgam, cc), E(G->dgam, cc), t);
        for (long a = 0; a < dv; a++)
            MUL(E(G->Y, cc * dv + a), E(G->Y, cc * dv + a), e);
    }
    FN(ll_grad_levels)(CX, s, G, shp, z, P(gl)); /* the levels that hold tokens at p0 */
    /* the intra-chunk scores */
    for (long r = 0; r < C; r++)
        for (long cc = 0; cc <= r; cc++) {
            const int l = FN(ll_level)(r, cc);
            if (l >= L)
                continue;
            FN(dot_at)(CX, P(dm), G->dO, r * dv, cb, cc * rl + ov, dv);
            FN(dot_at)(CX, P(acc), cb, r * rl + oq, K, cc * d, d); /* A_rc, as the forward's */
            FN(chunk_decay)(CX, s, P(acc), r, cc);
            STORE_I(acc);
            MUL(t, dm, acc);
            ADD(E(G->du, r * d + l), E(G->du, r * d + l), t);
            MUL(dm, dm, LL_U(r, l));
            MUL(t, dm, acc);
            FN(gc_score)(CX, s, G, P(dm), P(t), r, cc, K, s->cb, r * rl + oq, G->dq, G->dk);
        }
    for (long i = 0; i < (long)C * dv; i++) { /* dv_c = eC_c dV'_c + sum_{r >= c} M_rc do_r */
        const long cc = i / dv, a = i % dv;
        COPY(acc, E(G->Y, i));
        for (long r = cc; r < C; r++) {
            MUL(t, E(M, r * C + cc), E(G->dO, r * dv + a));
            ADD(acc, acc, t);
        }
        COPY(E(G->dVb, i), acc);
    }
    FN(ll_merge_grad)(CX, G->dSh, z, L, n, merged); /* the merge at p0 */
    FN(gc_finish)(CX, s, G, G->dgam, 1, s->cfg.base2);
    FRAME_END;
}
#undef LL_Q
#undef LL_U
#undef LL_DLEVEL
#endif
#undef LL_LEVEL
