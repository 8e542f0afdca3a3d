/* models/vla3.h: VLA v3, the canonical recurrence (docs/math.md 2.5): u' = unit(u) / sqrt(d),
 * Sherman-Morrison with delta floored at stab_eps, the nudge; k' = unit(phi(k)), alpha = unit(A k'),
 * S += (v - S k') alpha^T, n += phi(k); o = S phi(q) / max(n . phi(q), stab_eps). */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
VLA_FN NUM *FN(uprime_vla3)(CXP, ST *s) /* unit(u) / sqrt(d) */
{
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->w, j), E(s->u, j));
    FN(unit)(CX, s->w, s->d, &s->cnt.zero_norm);
    VLA_PFOR(j, 0, s->d)
        DIV(E(s->w, j), E(s->w, j), E(s->c, C_SQRTD));
    return s->w;
}

/* v3: u' = unit(u) / sqrt(d); SM with delta floored at stab_eps; nudge; k' = unit(phi(k));
 * alpha = unit(A k') */
VLA_FN void FN(vec_vla3)(CXP, ST *s)
{
    int d = s->d;
    FN(penalty_update)(CX, s, FN(uprime_vla3)(CX, s), s->cfg.guard ? GUARD_FLOOR : GUARD_NONE,
                       P(E(s->c, C_STAB)));
    FN(nudge)(CX, s);
    VLA_PFOR(j, 0, d)
        COPY(E(s->kp, j), E(s->pk, j));
    FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
    FN(apply_A)(CX, s, s->al, s->kp);
    FN(unit)(CX, s->al, d, &s->cnt.zero_norm);
}

/* S += (v - S k') alpha^T; n += phi(k) */
VLA_FN void FN(step_vla3)(CXP, ST *s, int has_g)
{
    FN(vec_vla3)(CX, s);
    FN(residual)(CX, s->e, s->v, s->S, s->kp, s->dv, s->d);
    FN(modulate)(CX, s->S, s->e, s->al, s->dv, s->d);
    FN(accumulate)(CX, s->n, s->pk, s->d);
}

VLA_FN void FN(read_vla3)(CXP, ST *s) { FN(readout)(CX, s, s->pq, P(E(s->c, C_STAB))); }

VLA_FN void FN(chunk_vla3)(CXP, ST *s)
{
    const int d = s->d, C = s->cfg.chunk, nudged = s->cfg.nudge && s->t % s->cfg.period == 0;
    FN(chunk_penalty)(CX, s, s->cfg.guard ? GUARD_FLOOR : GUARD_NONE, P(E(s->c, C_STAB)));
    for (int r = 0; r < C; r++) { /* k'_r = unit(phi(k_r)), alpha_r = unit(A_r k'_r) */
        FN(chunk_slot)(CX, s, r, 0);
        VLA_PFOR(j, 0, d)
            COPY(E(s->kp, j), E(s->pk, j));
        FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
        FN(chunk_row)(CX, s->cx, r, s->kp, d);
        FN(chunk_apply)(CX, s, s->al, VLA_ROWP(s->cx, (size_t)r * d), r, nudged);
        FN(unit)(CX, s->al, d, &s->cnt.zero_norm);
        FN(chunk_row)(CX, s->cy, r, s->al, d);
    }
    FN(chunk_update_A)(CX, s);
    FN(nudge)(CX, s);
    FN(chunk_wy)(CX, s, 1, 0, 0, VLA_IN_pq, 1, 0, P(E(s->c, C_STAB)));
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* o = S_t phi(q) / den; the write with A (recur_grad.h's grad_A_*), alpha = unit(y), y = A^T k'
 * (delta floored at stab_eps); u' = unit(u) / sqrt(d), k' = unit(phi(k)), n_t = n_{t-1} + phi(k) */
VLA_FN void FN(grad_vla3)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    const int d = s->d;
    FN(grad_read)(CX, s, G, s->pq, P(E(s->c, C_STAB)));
    FN(grad_A_e)(CX, s, G);
    FN(grad_A_S)(CX, s, G, Sp);
    FN(vec_vla3)(CX, s);
    FN(matvec_t)(CX, G->zc, s->A, s->kp, d, d);
    for (int j = 0; j < d; j++)
        COPY(E(G->za, j), E(G->zc, j));
    FN(grad_norm)(CX, G->zb, G->za, d, NULL, 1);
    FN(grad_A_update)(CX, s, G, Sp, s->w, s->cfg.guard ? GUARD_FLOOR : GUARD_NONE,
                      P(E(s->c, C_STAB)));
    FN(grad_A_sqrtd)(CX, s, G);
    FN(grad_norm)(CX, G->du, s->u, d, NULL, 1);
    FN(grad_norm)(CX, G->dkp, s->pk, d, NULL, 1);
    for (int j = 0; j < d; j++)
        ADD(E(G->dkp, j), E(G->dkp, j), E(G->dn, j));
}
#endif
