/* models/la.h: linear attention (docs/math.md 2.1): S_t = S_{t-1} + v phi(k)^T, o = S phi(q) /
 * max(n . phi(q), eps_o) with the normalizer n_t = n_{t-1} + phi(k). A model's file (docs/adding.md):
 * vec_<tok> (what a step writes S with, shared by the seq and scan forms), step_<tok>, read_<tok>,
 * chunk_<tok> (its chunk:C form), and for a model with A uprime_<tok>, in recur.h's text; then its
 * backward, grad_<tok> (and with a chunk backward gradchunk_<tok>, gradkey_<tok>). */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
VLA_FN void FN(vec_la)(CXP, ST *s)
{
    VLA_PFOR(j, 0, s->d) { /* S_t = S_{t-1} + v phi(k)^T: the Jacobian is I */
        COPY(E(s->kp, j), E(s->pk, j));
        SETI(E(s->al, j), 0);
    }
}

VLA_FN void FN(step_la)(CXP, ST *s, int has_g)
{
    FN(vec_la)(CX, s);
    FN(modulate)(CX, s->S, s->v, s->pk, s->dv, s->d);
    FN(accumulate)(CX, s->n, s->pk, s->d);
}

VLA_FN void FN(read_la)(CXP, ST *s) { FN(readout)(CX, s, s->pq, P(E(s->c, C_EPS_O))); }

VLA_FN void FN(chunk_la)(CXP, ST *s)
{
    const int d = s->d, dv = s->dv, C = s->cfg.chunk;
    VLA_PFOR(i, 0, C * d) /* b_t = phi(k_t), an input: in the io format already */
        COPY(E(s->cy, i), E(s->cb, CB_AT(i / d, pk) + i % d));
    FN(chunk_slot)(CX, s, C - 1, 0);
    FN(vec_la)(CX, s);
    FN(chunk_wy)(CX, s, 0, 0, 0, VLA_IN_pq, 1, 0, P(E(s->c, C_EPS_O)));
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* S_t = S_{t-1} + v phi(k)^T, n_t = n_{t-1} + phi(k): dk += dn, dn carried */
VLA_FN void FN(grad_la)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FN(grad_read)(CX, s, G, s->pq, P(E(s->c, C_EPS_O)));
    FN(grad_additive)(CX, s, G, Sp, 0);
    for (int j = 0; j < s->d; j++)
        ADD(E(G->dkp, j), E(G->dkp, j), E(G->dn, j));
}
#endif
