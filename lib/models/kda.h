/* models/kda.h: Kimi Delta Attention (docs/gated.md; fla's fused_recurrent_kda, chunk_kda; Kimi
 * Linear): S_t = S_{t-1} Diag(a_t) (I - beta_t k k^T) + beta_t v k^T with a log-decay per key
 * channel (a = exp(g) in the compute format), q and k L2-normalized in the model (qknorm),
 * o = S (scale q), scale d^-1/2. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* k' = l2norm(k), alpha = beta k': J = Diag(a) (I - k' alpha^T), B = v alpha^T */
VLA_FN void FN(vec_kda)(CXP, ST *s) { FN(vec_gdn)(CX, s); }

/* fla's order: h *= exp(g) per key channel, e = beta (v - h^T k'), h += k' e^T */
VLA_FN void FN(step_kda)(CXP, ST *s, int has_g)
{
    FN(vec_kda)(CX, s);
    FN(decay_cols)(CX, s);
    FN(delta_write)(CX, s, NULL);
}

VLA_FN void FN(read_kda)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* fla's chunk_kda: the UT transform with the decays per channel folded in (recur_chunk.h's
 * chunk_ch), the queries L2-normalized and rounded to io, the read-out scaled at the end */
VLA_FN void FN(chunk_kda)(CXP, ST *s)
{
    FN(chunk_queries)(CX, s);
    for (int r = 0; r < s->cfg.chunk; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(vec_kda)(CX, s);
        FN(chunk_row)(CX, s->cy, r, s->kp, s->d);
    }
    FN(chunk_ch)(CX, s, 1);
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

VLA_FN void FN(gradkey_kda)(CXP, ST *s, NUM *dk) { FN(gradkey_gdn)(CX, s, dk); }

VLA_FN void FN(grad_kda)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read_gated)(CX, s, G);
    FN(grad_delta_write)(CX, s, G, Sp, 2);
    FN(gradkey_kda)(CX, s, G->dkp);
}

VLA_FN void FN(gradchunk_kda)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FN(gradchunk_ch)(CX, s, G, S0, c, 1);
}
#endif
