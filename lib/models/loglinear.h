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

/* position p > 0: levels 0..z, z p's trailing zeros, summed into level z + 1 (each sum stored) */
VLA_FN void FN(ll_merge)(CXP, ST *s, long p)
{
    const int n = s->dv * s->d;
    int z = 0;
    while (!((p >> z) & 1))
        z++;
    if (z + 1 >= vla_levels(&s->cfg))
        return; /* level z + 1 would be L or more: the bucket weighs 0, so it is dropped */
    NUM *dst = LL_LEVEL(s, z + 1);
    const NUM *l0 = LL_LEVEL(s, 0);
    VLA_PFOR(i, 0, n)
        COPY(E(dst, i), E(l0, i));
    for (int l = 1; l <= z; l++) {
        const NUM *src = LL_LEVEL(s, l);
        VLA_PFOR(i, 0, n) {
            ADD(E(dst, i), E(dst, i), E(src, i));
            STORE(E(dst, i));
        }
    }
}

VLA_FN void FN(step_loglinear)(CXP, ST *s, int has_g)
{
    const long p = s->t - 1;
    const int n = s->dv * s->d, d = s->d, L = vla_levels(&s->cfg);
    FN(vec_loglinear)(CX, s);
    if (p > 0)
        FN(ll_merge)(CX, s, p);
    for (int l = 1; l < L; l++) { /* every level that holds tokens decays by a_p */
        if (!FN(ll_on)(p, l))
            continue;
        NUM *S = LL_LEVEL(s, l);
        VLA_PFOR(i, 0, n) {
            MUL(E(S, i), E(s->beta_decay, 1), E(S, i));
            STORE(E(S, i));
        }
    }
    NUM *S0 = LL_LEVEL(s, 0); /* level 0: the token's own write v k^T */
    VLA_PFOR(i, 0, n) {
        MUL(E(S0, i), E(s->v, i / d), E(s->al, i % d));
        STORE(E(S0, i));
    }
    VLA_PFOR(i, 0, n) /* S: the levels' sum, from level 0 up */
        COPY(E(s->S, i), E(S0, i));
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

/* no chunk form (vla_form_check refuses it: the levels merge at the bits of each position) */
VLA_FN void FN(chunk_loglinear)(CXP, ST *s) {}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* none: vla_grad_check refuses loglinear (the levels' merges and lambda are not differentiated) */
VLA_FN void FN(grad_loglinear)(CXP, ST *s, FN(gstate) *G, const NUM *Sp) {}
#endif
#undef LL_LEVEL
