/* models/mamba2.h: Mamba-2's SSD (docs/gated.md; state-spaces/mamba's ssd_minimal and chunk
 * scan): S_t = a_t S_{t-1} + v k^T with the scalar log-decay g_t = dt A <= 0 (a_t = exp(g_t) in
 * the compute format), no normalizer; the trace maps k = B dt, q = C, v = x (docs/trace.md);
 * o = S (scale q), scale 1. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* no delta term: k' = 0, alpha = k, so J = a I and B = v k^T */
VLA_FN void FN(vec_mamba2)(CXP, ST *s) { FN(vec_additive)(CX, s); }

VLA_FN void FN(step_mamba2)(CXP, ST *s, int has_g)
{
    FN(vec_mamba2)(CX, s);
    FN(decay_S)(CX, s);
    FN(modulate)(CX, s->S, s->v, s->pk, s->dv, s->d);
}

VLA_FN void FN(read_mamba2)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* SSD's chunk: the masked scores with the segment sums exp(gamma_i - gamma_j), the state passed
 * between chunks decayed by exp(gamma_C) (chunk_wy without the UT transform) */
VLA_FN void FN(chunk_mamba2)(CXP, ST *s)
{
    FN(chunk_additive)(CX, s);
    FN(chunk_wy)(CX, s, 0, 0, 1, VLA_IN_pq, 0, 1, P(E(s->c, C_STAB)));
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

VLA_FN void FN(grad_mamba2)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read_gated)(CX, s, G);
    FN(grad_additive)(CX, s, G, Sp, 1);
}

VLA_FN void FN(gradkey_mamba2)(CXP, ST *s, NUM *dk) {} /* k' is k */

VLA_FN void FN(gradchunk_mamba2)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FN(gradchunk_wy)(CX, s, G, S0, c, 0, 1, 1);
}
#endif
