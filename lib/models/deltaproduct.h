/* models/deltaproduct.h: Gated DeltaProduct (docs/gated.md; Siems et al. 2025, fla's
 * gated_delta_product): each token is n_h = householder steps of the stream, sub-steps j = 1..n_h
 * with a key, value and beta each; the token's gate a_t = exp(g_t) at its first sub-step, its
 * read-out o = S (scale q) after its last: S_t = a_t S_{t-1} prod_j (I - beta_j k_j k_j^T) + ...,
 * gdn's write at every sub-step. fla's chunk_gated_delta_product_ref runs the gated delta rule
 * over the T n_h sub-steps with the gate zero but at each token's first and the query zero but at
 * its last; so does this file, gdn's functions on the masked sub-steps. n_h = 1 is gdn. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* sub-step t of the stream (t from 1) within its token: 0 .. n_h - 1 (the backward's too) */
VLA_FN long FN(sub_deltaproduct)(const ST *s, long t) { return (t - 1) % s->cfg.householder; }

/* sub-step t's loaded inputs as fla's interleaved sequence has them: no decay (g = 0, a = 1) but
 * at the token's first sub-step, a query of zeros but at its last */
VLA_FN void FN(mask_deltaproduct)(CXP, ST *s, long t)
{
    const long j = FN(sub_deltaproduct)(s, t);
    if (j) {
        SETI(E(s->beta_decay, 1), 1);
        SETI(E(s->beta_decay, 2), 0);
    }
    if (j != s->cfg.householder - 1)
        VLA_PFOR(i, 0, s->d)
            SETI(E(s->pq, i), 0);
}

/* the step's vectors, gdn's, on the masked sub-step (the seq and scan forms' step t) */
VLA_FN void FN(vec_deltaproduct)(CXP, ST *s)
{
    FN(mask_deltaproduct)(CX, s, s->t);
    FN(vec_gdn)(CX, s);
}

VLA_FN void FN(step_deltaproduct)(CXP, ST *s, int has_g)
{
    FN(vec_deltaproduct)(CX, s);
    FN(decay_S)(CX, s);
    FN(delta_write)(CX, s, NULL);
}

/* o = S (scale q): 0 after a sub-step that is not its token's last (its query masked) */
VLA_FN void FN(read_deltaproduct)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* the chunk of fla's reference: each sub-step's record masked in the chunk's buffer, then gdn's
 * chunk over the sub-steps */
VLA_FN void FN(chunk_deltaproduct)(CXP, ST *s)
{
    for (int r = 0; r < s->cfg.chunk; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(mask_deltaproduct)(CX, s, s->t - s->cfg.chunk + 1 + r);
        FN(chunk_slot)(CX, s, r, 1);
    }
    FN(chunk_gdn)(CX, s);
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

VLA_FN void FN(gradkey_deltaproduct)(CXP, ST *s, NUM *dk) { FN(gradkey_gdn)(CX, s, dk); }

/* gdn's, with no gradient of a masked input: dq 0 where the query is not read, dg 0 where the
 * gate is not (a = 1 there: the decay's backward leaves dS as it is) */
VLA_FN void FN(grad_deltaproduct)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    const long j = FN(sub_deltaproduct)(s, s->t);
    if (j == s->cfg.householder - 1)
        FN(grad_read_gated)(CX, s, G);
    else
        for (int i = 0; i < s->d; i++)
            SETI(E(G->dx, i), 0);
    FN(grad_delta_write)(CX, s, G, Sp, 1);
    if (j)
        SETI(E(G->dg, 0), 0);
    FN(gradkey_gdn)(CX, s, G->dkp);
}

VLA_FN void FN(gradchunk_deltaproduct)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    const int d = s->d, C = s->cfg.chunk;
    FN(gradchunk_wy)(CX, s, G, S0, c, 1, 1, 1);
    for (int r = 0; r < C; r++) {
        const long j = FN(sub_deltaproduct)(s, s->t - C + 1 + r);
        if (j)
            SETI(E(G->dgam, r), 0);
        for (int k = 0; j != s->cfg.householder - 1 && k < d; k++)
            SETI(E(G->dq, (long)r * d + k), 0);
    }
}
#endif
