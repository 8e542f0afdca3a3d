/* models/gdn.h: Gated DeltaNet (docs/gated.md; fla's fused_recurrent_gated_delta_rule and
 * chunk_gated_delta_rule, Qwen3-Next's linear layers): S_t = a_t S_{t-1} (I - beta_t k k^T) +
 * beta_t v k^T, a_t = exp(g_t) from the scalar log-decay g_t <= 0 as fla takes it (exp in the
 * compute format), q and k L2-normalized in the model (qknorm), o = S (scale q), scale d^-1/2. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* k' = l2norm(k) (qknorm off: k), alpha = beta k': J = a (I - k' alpha^T), B = v alpha^T */
VLA_FN void FN(vec_gdn)(CXP, ST *s)
{
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->kp, j), E(s->pk, j));
    if (s->cfg.qknorm)
        FN(l2norm)(CX, s->kp, s->d, P(E(s->c, C_L2EPS)));
    VLA_PFOR(j, 0, s->d)
        MUL(E(s->al, j), E(s->beta_decay, 0), E(s->kp, j));
}

/* fla's order: S' = a S, e = beta (v - S' k'), S = S' + e k'^T */
VLA_FN void FN(step_gdn)(CXP, ST *s, int has_g)
{
    FN(vec_gdn)(CX, s);
    FN(decay_S)(CX, s);
    FN(delta_write)(CX, s, NULL);
}

VLA_FN void FN(read_gdn)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* fla's chunked gated delta rule: the UT transform with the cumulative log-decays folded in,
 * the read-out scaled at the end */
VLA_FN void FN(chunk_gdn)(CXP, ST *s)
{
    const int d = s->d, C = s->cfg.chunk;
    FN(chunk_queries)(CX, s);
    for (int r = 0; r < C; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(vec_gdn)(CX, s);
        FN(chunk_row)(CX, s->cy, r, s->kp, d);
        FN(chunk_row)(CX, s->cx, r, s->kp, d);
    }
    FN(chunk_wy)(CX, s, 1, 1, 1, VLA_IN_pq, 0, 1, P(E(s->c, C_STAB)));
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* k' = l2norm(k) (qknorm off: k) */
VLA_FN void FN(gradkey_gdn)(CXP, ST *s, NUM *dk)
{
    if (s->cfg.qknorm)
        FN(grad_norm)(CX, dk, s->pk, s->d, P(E(s->c, C_L2EPS)), 0);
}

VLA_FN void FN(grad_gdn)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read_gated)(CX, s, G);
    FN(grad_delta_write)(CX, s, G, Sp, 1);
    FN(gradkey_gdn)(CX, s, G->dkp);
}

VLA_FN void FN(gradchunk_gdn)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FN(gradchunk_wy)(CX, s, G, S0, c, 1, 1, 1);
}
#endif
