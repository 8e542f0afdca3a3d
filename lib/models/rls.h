/* models/rls.h: exact online regularized least squares (docs/math.md 2.3): A_t = (lambda0 I +
 * sum k k^T)^-1 by Sherman-Morrison (u' = k), S += (v - S k) (A_t k)^T, o = S q. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* u', the vector whose outer product a step adds to M = A^-1 (uprime_<tok>: into w, or the input
 * that is u') */
VLA_FN NUM *FN(uprime_rls)(CXP, ST *s) { return s->k; }

/* exact online regularized least squares: w = A k, A -= w w^T / (1 + k.w), gain = A_t k */
VLA_FN void FN(vec_rls)(CXP, ST *s)
{
    FN(penalty_update)(CX, s, FN(uprime_rls)(CX, s), s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                       P(E(s->c, C_EPS_G)));
    FN(apply_A)(CX, s, s->al, s->k);
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->kp, j), E(s->k, j));
}

/* S += (v - S k) gain^T */
VLA_FN void FN(step_rls)(CXP, ST *s, int has_g)
{
    FN(vec_rls)(CX, s);
    FN(residual)(CX, s->e, s->v, s->S, s->k, s->dv, s->d);
    FN(modulate)(CX, s->S, s->e, s->al, s->dv, s->d);
}

VLA_FN void FN(read_rls)(CXP, ST *s) { FN(readout)(CX, s, s->q, P(E(s->c, C_STAB))); }

VLA_FN void FN(chunk_rls)(CXP, ST *s)
{
    const int d = s->d, C = s->cfg.chunk;
    FN(chunk_penalty)(CX, s, GUARD_NONE, P(E(s->c, C_EPS_G))); /* (no guard: vla_form_check) */
    for (int r = 0; r < C; r++) { /* the gains A_r k_r */
        FN(chunk_slot)(CX, s, r, 0);
        FN(chunk_row)(CX, s->cx, r, s->k, d);
        FN(chunk_apply)(CX, s, s->al, VLA_ROWP(s->cx, (size_t)r * d), r, 0);
        FN(chunk_row)(CX, s->cy, r, s->al, d);
    }
    VLA_PFOR(j, 0, d)
        COPY(E(s->kp, j), E(s->k, j));
    FN(chunk_update_A)(CX, s);
    FN(chunk_wy)(CX, s, 1, 0, 0, VLA_IN_q, 0, 0, P(E(s->c, C_STAB)));
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* o = S_t q; the write with A (recur_grad.h's grad_A_*), u' = k: dk' += du */
VLA_FN void FN(grad_rls)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read)(CX, s, G, s->q, P(E(s->c, C_STAB)));
    FN(grad_A_e)(CX, s, G);
    FN(grad_A_S)(CX, s, G, Sp);
    FN(vec_rls)(CX, s);
    FN(grad_A_update)(CX, s, G, Sp, s->k, s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                      P(E(s->c, C_EPS_G)));
    for (int j = 0; j < s->d; j++)
        ADD(E(G->dkp, j), E(G->dkp, j), E(G->du, j));
}
#endif
