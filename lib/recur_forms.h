/* recur_forms.h: the dispatch of the chunk form to the models' chunk_<tok>, the scan form
 * (docs/forms.md), and the step of the forms but seq, in recur.h's text (included by it, after the
 * models). */

/* the model's chunk of cfg.chunk tokens ending at token t */
VLA_FN void FN(chunk_run)(CXP, ST *s)
{
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, ...)                                                               \
    case VLA_##ID:                                                                                 \
        (FN(chunk_##tok))(CX, s);                                                                  \
        break;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}

/* a chunk form's step: the inputs into the chunk's buffer; at its last token, the chunk */
VLA_FN void FN(chunk_step)(CXP, ST *s)
{
    const int C = s->cfg.chunk;
    FN(chunk_slot)(CX, s, (int)((s->t - 1) % C), 1);
    if (s->t % C == 0)
        FN(chunk_run)(CX, s);
}

/* ---- scan: S_t = S_{t-1} J_t + B_t (J_t = g (I - k' alpha^T) + a b^T: g a scalar decay (delta's,
 * gdn's, mamba2's), one per key channel (Diag(a): kda, gla, rwkv7) or 1; a b^T rwkv7's low rank;
 * B_t = v alpha^T; la: J = I, B = v phi(k)^T) and n_t = n_{t-1} + phi(k_t) by Blelloch's scan,
 * online: level l holds the combination of an aligned block of 2^l steps, present where bit l
 * of t is set. A step combines its element with the blocks its carry passes (the up-sweep,
 * (J_a, B_a) then (J_b, B_b) giving (J_a J_b, B_a J_b + B_b)), and S_t is the fold of t's blocks
 * from the largest down (the down-sweep's order), so every sum in S_t has a depth of about
 * 2 log2 t instead of t. ---- */

/* (jb, bb, nb) <- the block at level l combined with them on their left: (J_l J_b, B_l J_b +
 * B_b, n_l + n_b); jb NULL: J = I (la); nb NULL: no n */
VLA_FN void FN(scan_combine)(CXP, ST *s, int l, NUM *jb, NUM *bb, NUM *nb)
{
    FRAME_BEGIN;
    SCALAR(acc);
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    const long ob = (long)l * dv * d, oj = (long)l * d * d;
    if (nb)
        VLA_PFOR(i, 0, d) {
            ADD(E(nb, i), E(s->sn, (long)l * d + i), E(nb, i));
            STORE(E(nb, i));
        }
    if (!jb) {
        VLA_PFOR(i, 0, dv * d) {
            ADD(E(bb, i), E(s->sb, ob + i), E(bb, i));
            STORE(E(bb, i));
        }
        FRAME_END;
        return;
    }
    VLA_PFOR(i, 0, dv * d) { /* B_l J_b + B_b */
        long a = i / d, c = i % d;
        MUL(acc, E(s->sb, ob + a * d), E(jb, c));
        for (int k = 1; k < d; k++) {
            TEMP(t);
            MUL(t, E(s->sb, ob + a * d + k), E(jb, (long)k * d + c));
            ADD(acc, acc, t);
        }
        ADD(E(s->ub, i), acc, E(bb, i));
        STORE(E(s->ub, i));
    }
    VLA_PFOR(i, 0, d * d) { /* J_l J_b */
        long a = i / d, c = i % d;
        MUL(acc, E(s->sj, oj + a * d), E(jb, c));
        for (int k = 1; k < d; k++) {
            TEMP(t);
            MUL(t, E(s->sj, oj + a * d + k), E(jb, (long)k * d + c));
            ADD(acc, acc, t);
        }
        COPY(E(s->uj, i), acc);
        STORE(E(s->uj, i));
    }
    VLA_PFOR(i, 0, dv * d)
        COPY(E(bb, i), E(s->ub, i));
    VLA_PFOR(i, 0, d * d)
        COPY(E(jb, i), E(s->uj, i));
    FRAME_END;
}

/* ub <- S J + B (J NULL: S + B), J at oj of its array and B at ob of its: the block (J, B)
 * combined with S on its left, each sum over J's rows in order */
VLA_FN void FN(scan_onto)(CXP, ST *s, const NUM *J, long oj, const NUM *B, long ob)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    VLA_PFOR(i, 0, dv * d) {
        long a = i / d, c = i % d;
        if (!J) {
            ADD(E(s->ub, i), E(s->S, i), E(B, ob + i));
        } else {
            MUL(E(s->ub, i), E(s->S, a * d), E(J, oj + c));
            for (int k = 1; k < d; k++) {
                TEMP(t);
                MUL(t, E(s->S, a * d + k), E(J, oj + (long)k * d + c));
                ADD(E(s->ub, i), E(s->ub, i), t);
            }
            ADD(E(s->ub, i), E(s->ub, i), E(B, ob + i));
        }
        STORE(E(s->ub, i));
    }
    FRAME_END;
}

VLA_FN void FN(scan_step)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(t);
    SCALAR(id);
    const int d = s->d, dv = s->dv, J = vla_col_affine(s->cfg.model),
              acc_n = vla_col_acc_n(s->cfg.model), decay = vla_col_decay(&s->cfg);
    const long before = s->t - 1;
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, has_A, ...)                                                               \
    case VLA_##ID:                                                                                 \
        (FN(vec_##tok))(CX, s);                                                                    \
        break;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
    /* the step's element: B = v b^T (b: alpha, la: phi(k)), J = I - k' alpha^T, phi(k) */
    const NUM *b = J ? s->al : s->kp;
    VLA_PFOR(i, 0, dv * d) {
        MUL(E(s->tb, i), E(s->v, i / d), E(b, i % d));
        STORE(E(s->tb, i));
    }
    if (J)
        VLA_PFOR(i, 0, d * d) {
            long a = i / d, c = i % d;
            TEMP(t);
            SETI(id, a == c);
            MUL(t, E(s->kp, a), E(s->al, c));
            SUB(E(s->tj, i), id, t);
            if (decay) /* a scalar decay: J = a (I - k' alpha^T) */
                MUL(E(s->tj, i), E(s->beta_decay, 1), E(s->tj, i));
            if (s->ng) /* decays per key channel: J = Diag(a) (I - k' alpha^T) */
                MUL(E(s->tj, i), E(s->ag, a), E(s->tj, i));
            if (s->nr) { /* rwkv7's low rank: J = Diag(w) + a b^T */
                MUL(t, E(s->ra, a), E(s->rb, c));
                ADD(E(s->tj, i), E(s->tj, i), t);
            }
            STORE(E(s->tj, i));
        }
    if (before == 0 && s->cfg.h0) { /* S_1 = S_0 J_1 + B_1: the first element takes S_0 in */
        FN(scan_onto)(CX, s, J ? s->tj : NULL, 0, s->tb, 0);
        VLA_PFOR(i, 0, dv * d)
            COPY(E(s->tb, i), E(s->ub, i));
    }
    VLA_PFOR(i, 0, d)
        COPY(E(s->z, i), E(s->pk, i)); /* (z: sm's workspace, spent) */
    /* up-sweep: the carry */
    int l = 0;
    for (; (before >> l) & 1; l++)
        FN(scan_combine)(CX, s, l, J ? s->tj : NULL, s->tb, acc_n ? s->z : NULL);
    VLA_PFOR(i, 0, dv * d)
        COPY(E(s->sb, (long)l * dv * d + i), E(s->tb, i));
    if (J)
        VLA_PFOR(i, 0, d * d)
            COPY(E(s->sj, (long)l * d * d + i), E(s->tj, i));
    VLA_PFOR(i, 0, d)
        COPY(E(s->sn, (long)l * d + i), E(s->z, i));
    /* down-sweep: S_t and n_t, t's blocks from the largest */
    int top = VLA_SCAN_LEVELS - 1;
    while (!((s->t >> top) & 1))
        top--;
    VLA_PFOR(i, 0, dv * d)
        COPY(E(s->S, i), E(s->sb, (long)top * dv * d + i));
    if (acc_n)
        VLA_PFOR(i, 0, d)
            COPY(E(s->n, i), E(s->sn, (long)top * d + i));
    for (int m = top - 1; m >= 0; m--) {
        if (!((s->t >> m) & 1))
            continue;
        /* S <- S J_m + B_m: the block's combination with S on the left */
        FN(scan_onto)(CX, s, J ? s->sj : NULL, (long)m * d * d, s->sb, (long)m * dv * d);
        VLA_PFOR(i, 0, dv * d)
            COPY(E(s->S, i), E(s->ub, i));
        if (acc_n)
            VLA_PFOR(i, 0, d) {
                ADD(E(s->n, i), E(s->n, i), E(s->sn, (long)m * d + i));
                STORE(E(s->n, i));
            }
    }
    FRAME_END;
}

/* the forms but seq: 1 when the step was taken here (chunk:1 is the sequential recurrence, each
 * token a chunk of its own, and takes recur.h's step) */
VLA_FN int FN(form_step)(CXP, ST *s)
{
    if (s->cfg.form == VLA_FORM_CHUNK && s->cfg.chunk > 1) {
        FN(chunk_step)(CX, s);
        return 1;
    }
    if (s->cfg.form == VLA_FORM_SCAN) {
        FN(scan_step)(CX, s);
        FN(read_loaded)(CX, s);
        return 1;
    }
    return 0;
}
#undef CB_AT
