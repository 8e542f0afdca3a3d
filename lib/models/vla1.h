/* models/vla1.h: VLA v1 (docs/math.md 2.4): the guarded Sherman-Morrison update of A by u' = u /
 * sqrt(d), the periodic nudge, the norm clamp, and the clipped write S += clip(v - S k) (A k)^T;
 * o = S (A q). */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
VLA_FN NUM *FN(uprime_vla1)(CXP, ST *s) /* u / sqrt(d) */
{
    VLA_PFOR(j, 0, s->d)
        DIV(E(s->w, j), E(s->u, j), E(s->c, C_SQRTD));
    return s->w;
}

/* v1: u' = u / sqrt(d); guarded SM; nudge; alpha = A k */
VLA_FN void FN(vec_vla1)(CXP, ST *s)
{
    FN(penalty_update)(CX, s, FN(uprime_vla1)(CX, s), s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                       P(E(s->c, C_EPS_G)));
    FN(nudge)(CX, s);
    FN(apply_A)(CX, s, s->al, s->k);
    VLA_PFOR(j, 0, s->d)
        COPY(E(s->kp, j), E(s->k, j));
}

/* v1's write: e = v - S k clipped to ||e|| <= clip; S += e alpha^T */
VLA_FN void FN(write_vla1)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    int d = s->d, dv = s->dv;
    NUM *c = s->c;
    FN(residual)(CX, s->e, s->v, s->S, s->k, dv, d);
    FN(norm2)(CX, P(nrm), s->e, dv);
    LANE_IF(LESS(E(c, C_CLIP), nrm)) {
        DIV(nrm, E(c, C_CLIP), nrm);
        VLA_PFOR(i, 0, dv)
            MUL(E(s->e, i), E(s->e, i), nrm);
        COUNT(s->cnt.clip);
    } LANE_END
    FN(modulate)(CX, s->S, s->e, s->al, dv, d);
    FRAME_END;
}

/* the clamp: ||S||_F or ||A||_F > clamp adds clamp_eps I to A */
VLA_FN void FN(step_vla1)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    int d = s->d, dv = s->dv;
    NUM *c = s->c;
    FN(vec_vla1)(CX, s);
    FN(write_vla1)(CX, s);
    if (s->cfg.clamp_on) {
        LPRED fire;
        FN(norm2)(CX, P(nrm), s->S, dv * d);
        fire = LESS(E(c, C_CLAMP), nrm);
        LANE_IF(PNOT(fire)) {
            FN(norm2)(CX, P(nrm), s->A, d * d);
            fire = POR(fire, LESS(E(c, C_CLAMP), nrm));
        } LANE_END
        LANE_IF(fire) {
            FN(add_diag)(CX, s->A, d, P(E(c, C_CLAMP_EPS)));
            COUNT(s->cnt.clamp);
        } LANE_END
    }
    FRAME_END;
}

VLA_FN void FN(read_vla1)(CXP, ST *s) /* o = S (A q) */
{
    FN(apply_A)(CX, s, s->w, s->q);
    FN(readout)(CX, s, s->w, P(E(s->c, C_STAB)));
}

/* vla1: A blockwise, S token by token (its clipped error is no WY form), each read-out o = S
 * (A_r q) as read_vla1 takes it */
VLA_FN void FN(chunk_vla1)(CXP, ST *s)
{
    const int C = s->cfg.chunk, nudged = s->cfg.nudge && s->t % s->cfg.period == 0;
    FN(chunk_penalty)(CX, s, GUARD_NONE, P(E(s->c, C_EPS_G)));
    for (int r = 0; r < C; r++) {
        FN(chunk_slot)(CX, s, r, 0);
        FN(chunk_apply)(CX, s, s->al, s->k, r, nudged);
        VLA_PFOR(j, 0, s->d)
            COPY(E(s->kp, j), E(s->k, j));
        FN(write_vla1)(CX, s);
        FN(chunk_apply)(CX, s, s->w, s->q, r, nudged);
        FN(readout)(CX, s, s->w, P(E(s->c, C_STAB)));
        VLA_PFOR(a, 0, s->dv) /* (the chunk's read-outs, as chunk_wy's) */
            COPY(E(s->co, (long)r * s->dv + a), E(s->o, a));
    }
    FN(chunk_update_A)(CX, s);
    FN(nudge)(CX, s);
}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */

/* o = S_t w, w = A_t^T q; the write with A (recur_grad.h's grad_A_*), e' = clip e / ||e|| when
 * ||e|| > clip; u' = u / sqrt(d) */
VLA_FN void FN(grad_vla1)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    FN(grad_read)(CX, s, G, s->w, P(E(s->c, C_STAB)));
    for (int j = 0; j < d; j++)
        SETI(E(G->du, j), 0);
    FN(grad_apply)(CX, s, G, s->q, G->dx, G->du);
    for (int j = 0; j < d; j++)
        COPY(E(G->dx, j), E(G->du, j));
    FN(grad_A_e)(CX, s, G);
    FN(residual)(CX, G->er, s->v, Sp, s->kp, dv, d);
    FN(norm2)(CX, P(t), G->er, dv);
    if (LESS(E(s->c, C_CLIP), t)) {
        FN(grad_norm)(CX, G->db, G->er, dv, NULL, 0);
        for (int i = 0; i < dv; i++)
            MUL(E(G->db, i), E(G->db, i), E(s->c, C_CLIP));
    }
    FN(grad_A_S)(CX, s, G, Sp);
    FN(vec_vla1)(CX, s);
    FN(grad_A_update)(CX, s, G, Sp, s->w, s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                      P(E(s->c, C_EPS_G)));
    FN(grad_A_sqrtd)(CX, s, G);
    FRAME_END;
}
#endif
