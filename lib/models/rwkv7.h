/* models/rwkv7.h: RWKV-7's generalized delta rule, diagonal plus low rank (docs/gated.md; fla's
 * chunk_dplr_delta_rule, fused_mul_recurrent_rwkv7): S_t = S_{t-1} (Diag(w_t) + a_t b_t^T) +
 * v k^T, the low-rank term on the undecayed S_{t-1}, w = exp(g) per key channel in the compute
 * format, a and b from the trace (RWKV-7: a = -kappa, b = kappa * iclr); o = S (scale q), scale 1. */

/* no delta term: k' = 0, alpha = k, so J = Diag(w) + a b^T and B = v k^T */
VLA_FN void FN(vec_rwkv7)(CXP, ST *s) { FN(vec_additive)(CX, s); }

/* S_ij = (S_ij w_j + (S a)_i b_j) + v_i k_j, each entry stored once (dplr's naive order) */
VLA_FN void FN(step_rwkv7)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(t);
    SCALAR(x);
    const int d = s->d, dv = s->dv;
    NUM *S = s->S;
    FN(vec_rwkv7)(CX, s);
    FN(matvec)(CX, s->e, S, s->ra, dv, d); /* S a, from the undecayed state */
    VLA_PFOR(i, 0, dv)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            TEMP(t);
            TEMP(x);
            MUL(x, E(S, ij), E(s->ag, j));
            MUL(t, E(s->e, i), E(s->rb, j));
            ADD(x, x, t);
            MUL(t, E(s->v, i), E(s->pk, j));
            ADD(E(S, ij), x, t);
            STORE(E(S, ij));
        }
    FRAME_END;
}

VLA_FN void FN(read_rwkv7)(CXP, ST *s) { FN(read_gated)(CX, s); }

/* no chunk form yet (vla_form_check refuses it) */
VLA_FN void FN(chunk_rwkv7)(CXP, ST *s) {}
