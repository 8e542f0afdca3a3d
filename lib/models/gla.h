/* models/gla.h: Gated Linear Attention (docs/gated.md; fla's fused_recurrent_gla, chunk_gla):
 * S_t = S_{t-1} Diag(a_t) + v k^T with a log-decay per key channel (a = exp(g) in the compute
 * format), no normalizer; o = S (scale q), scale d^-1/2. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* no delta term: k' = 0, alpha = k, so J = Diag(a) and B = v k^T */
VLA_FN void FN(vec_gla)(CXP, ST *s) { FN(vec_additive)(CX, s); }

/* fla's order: h *= exp(g) per key channel, then h += k v^T */
VLA_FN void FN(step_gla)(CXP, ST *s, int has_g)
{
    FN(vec_gla)(CX, s);
    FN(decay_cols)(CX, s);
    FN(modulate)(CX, s->S, s->v, s->pk, s->dv, s->d);
}

VLA_FN void FN(read_gla)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* fla's chunk_gla: the masked scores with the decays per channel (recur_chunk.h's chunk_ch,
 * without the UT transform), the read-out scaled at the end */
VLA_FN void FN(chunk_gla)(CXP, ST *s)
{
    FN(chunk_additive)(CX, s);
    FN(chunk_ch)(CX, s, 0);
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

VLA_FN void FN(grad_gla)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read_gated)(CX, s, G);
    FN(grad_additive)(CX, s, G, Sp, 2);
}

VLA_FN void FN(gradkey_gla)(CXP, ST *s, NUM *dk) {} /* k' is k */

VLA_FN void FN(gradchunk_gla)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FN(gradchunk_ch)(CX, s, G, S0, c, 0);
}
#endif
