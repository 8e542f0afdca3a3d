/* models/kda.h: Kimi Delta Attention (docs/gated.md; fla's fused_recurrent_kda, chunk_kda; Kimi
 * Linear): S_t = S_{t-1} Diag(a_t) (I - beta_t k k^T) + beta_t v k^T with a log-decay per key
 * channel (a = exp(g) in the compute format), q and k L2-normalized in the model (qknorm),
 * o = S (scale q), scale d^-1/2. */

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
