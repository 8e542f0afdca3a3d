/* models/delta.h: the delta rule (docs/math.md 2.2): S = S + beta (v - S k') k'^T, k' = unit(k),
 * o = S phi(q); with delta's row gates g (delta_form=gated) S = diag(g) S + ..., or with fla's
 * scalar decay a (delta_form=decay) S' = a S, then S = S' + beta (v - S' k') k'^T. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* k' = unit(k) (keynorm off: k), and the Jacobian's (gate aside) I - k' (beta k')^T */
VLA_FN void FN(vec_delta)(CXP, ST *s)
{
    int d = s->d;
    VLA_PFOR(j, 0, d)
        COPY(E(s->kp, j), E(s->k, j));
    if (s->cfg.keynorm)
        FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
    VLA_PFOR(j, 0, d)
        MUL(E(s->al, j), E(s->beta_decay, 0), E(s->kp, j));
}

/* gated: S = diag(g) S + beta (v - S k') k'^T, the error from the ungated S_{t-1};
 * decay (fla): S' = a S, then S = S' + beta (v - S' k') k'^T */
VLA_FN void FN(step_delta)(CXP, ST *s, int has_g)
{
    FN(vec_delta)(CX, s);
    if (s->cfg.delta_form == VLA_DELTA_DECAY)
        FN(decay_S)(CX, s);
    FN(delta_write)(CX, s, has_g && s->cfg.delta_form == VLA_DELTA_GATED ? s->g : NULL);
}

VLA_FN void FN(read_delta)(CXP, ST *s) { FN(readout)(CX, s, s->pq, P(E(s->c, C_STAB))); }

VLA_FN void FN(chunk_delta)(CXP, ST *s)
{
    const int d = s->d, C = s->cfg.chunk;
    for (int r = 0; r < C; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(vec_delta)(CX, s);
        FN(chunk_row)(CX, s->cy, r, s->kp, d);
        FN(chunk_row)(CX, s->cx, r, s->kp, d);
    }
    FN(chunk_wy)(CX, s, 1, 1, s->cfg.delta_form == VLA_DELTA_DECAY, VLA_IN_pq, 0, 0,
                  P(E(s->c, C_STAB)));
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* k' = unit(k) (keynorm off: k) */
VLA_FN void FN(gradkey_delta)(CXP, ST *s, NUM *dk)
{
    if (s->cfg.keynorm)
        FN(grad_norm)(CX, dk, s->k, s->d, NULL, 1);
}

VLA_FN void FN(grad_delta)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read)(CX, s, G, s->pq, P(E(s->c, C_STAB)));
    FN(grad_delta_write)(CX, s, G, Sp, s->cfg.delta_form == VLA_DELTA_DECAY);
    FN(gradkey_delta)(CX, s, G->dkp);
}

VLA_FN void FN(gradchunk_delta)(CXP, ST *s, FN(gcstate) *G, const NUM *S0, const double *c)
{
    FN(gradchunk_wy)(CX, s, G, S0, c, 1, s->cfg.delta_form == VLA_DELTA_DECAY, 0);
}
#endif
