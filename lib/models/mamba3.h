/* models/mamba3.h: Mamba-3's SISO recurrence (docs/gated.md; the Mamba-3 paper's trapezoidal
 * discretization and data-dependent rotary embeddings, state-spaces/mamba's mamba3_siso step
 * reference):
 *   S_t = a_t S_{t-1} + beta_t v_{t-1} k~_{t-1}^T + gamma_t v_t k~_t^T,   o_t = S_t q~_t,
 * a_t = exp(g_t) (g = dt A, the log-decay), beta_t = (1 - lambda_t) dt_t a_t, gamma_t = lambda_t
 * dt_t, and k~, q~ the inputs with each key-channel pair (2p, 2p + 1) turned by the cumulative
 * angle Theta_t,p = sum_{s <= t} theta_s,p dt_s (the complex state made real). The trace maps
 * q = C, k = B, v = x, beta = lambda in [0, 1] (absent: the constant beta, 1/2 by default: the
 * trapezoid rule), decay = dt (absent: 1), logdecay = g, u = theta (pair p turns by u_p dt,
 * p < d/2). The state carries the last token's k~ (al, the last alpha), its v (vx) and each
 * pair's rotation e^(i Theta) (zr) as the product of the steps' turns e^(i theta dt), which
 * load() gives in binary64 rounded to the compute format: the reference accumulates Theta itself
 * in binary32 and takes its cos and sin, which recur.h's vocabulary has not. No D skip, no z
 * gate; scale 1. */

#ifndef VLA_MODEL_GRAD /* ---- the forward (recur.h) ---- */
/* y = R x (conj: R^T x), R turning pair (2p, 2p + 1) by z's (cos, sin) at (2p, 2p + 1): y_2p =
 * x_2p c - x_2p+1 s, y_2p+1 = x_2p s + x_2p+1 c; y may be x; an odd d's last entry as it is. The
 * odd entries go through tmp (d/2 numbers), each part in a loop of its own: in one loop GCC's
 * vectorizer takes the pair for a complex product and fuses it (fmaddsub), contraction off or not */
VLA_FN void FN(turn)(CXP, NUM *y, const NUM *x, const NUM *z, NUM *tmp, int d, int conj)
{
    FRAME_BEGIN;
    SCALAR(a);
    SCALAR(t);
    VLA_PFOR(p, 0, d / 2) {
        TEMP(a);
        TEMP(t);
        MUL(a, E(x, 2 * p + 1), E(z, 2 * p));
        MUL(t, E(x, 2 * p), E(z, 2 * p + 1));
        if (conj)
            SUB(E(tmp, p), a, t);
        else
            ADD(E(tmp, p), t, a);
    }
    VLA_PFOR(p, 0, d / 2) {
        TEMP(a);
        TEMP(t);
        MUL(a, E(x, 2 * p), E(z, 2 * p));
        MUL(t, E(x, 2 * p + 1), E(z, 2 * p + 1));
        if (conj)
            ADD(E(y, 2 * p), a, t);
        else
            SUB(E(y, 2 * p), a, t);
    }
    VLA_PFOR(p, 0, d / 2)
        COPY(E(y, 2 * p + 1), E(tmp, p));
    VLA_PFOR(i, d - d % 2, d)
        COPY(E(y, i), E(x, i));
    FRAME_END;
}

/* beta = (1 - lambda) dt a and gamma = lambda dt, the reference's order */
VLA_FN void FN(m3_weights)(CXP, ST *s, NREF bet, NREF gam)
{
    const NUM *bd = s->beta_decay;
    SETI(R(bet), 1);
    SUB(R(bet), R(bet), E(bd, 0));
    MUL(R(bet), R(bet), E(bd, 3));
    MUL(R(bet), R(bet), E(bd, 1));
    MUL(R(gam), E(bd, 0), E(bd, 3));
}

/* k' = 0, alpha = k~: each pair's rotation turned by the step's e^(i theta dt) (in u, load_turn),
 * z <- z w (turn's R z with w's (cos, sin): cos = c wc - s ws, sin = c ws + s wc), stored, then
 * k~ = R k, stored */
VLA_FN void FN(vec_mamba3)(CXP, ST *s)
{
    FN(turn)(CX, s->zr, s->u, s->zr, s->z, s->d - s->d % 2, 0);
    VLA_PFOR(i, 0, s->d - s->d % 2)
        STORE(E(s->zr, i));
    FN(turn)(CX, s->al, s->pk, s->zr, s->z, s->d, 0);
    VLA_PFOR(j, 0, s->d) {
        SETI(E(s->kp, j), 0);
        STORE(E(s->al, j));
    }
}

/* S_ij = ((a S_ij + (beta v_{t-1})_i k~_{t-1},j) + (gamma v)_i k~_j), each entry stored after each
 * term (the reference's order: decay, the last token's term, this token's); then v_{t-1} <- v */
VLA_FN void FN(step_mamba3)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(bet);
    SCALAR(gam);
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    NUM *S = s->S, *kx = s->e2, *bv = s->e, *gv = s->w;
    VLA_PFOR(j, 0, d)
        COPY(E(kx, j), E(s->al, j)); /* k~_{t-1} */
    FN(vec_mamba3)(CX, s);
    FN(m3_weights)(CX, s, P(bet), P(gam));
    VLA_PFOR(i, 0, dv) {
        MUL(E(bv, i), bet, E(s->vx, i));
        MUL(E(gv, i), gam, E(s->v, i));
    }
    VLA_PFOR(i, 0, dv)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            TEMP(t);
            MUL(E(S, ij), E(s->beta_decay, 1), E(S, ij));
            STORE(E(S, ij));
            MUL(t, E(bv, i), E(kx, j));
            ADD(E(S, ij), E(S, ij), t);
            STORE(E(S, ij));
            MUL(t, E(gv, i), E(s->al, j));
            ADD(E(S, ij), E(S, ij), t);
            STORE(E(S, ij));
        }
    VLA_PFOR(i, 0, dv)
        COPY(E(s->vx, i), E(s->v, i));
    FRAME_END;
}

/* o = S (R (scale q)) */
VLA_FN void FN(read_mamba3)(CXP, ST *s)
{
    FN(gated_query)(CX, s, s->w, 1);
    FN(turn)(CX, s->w, s->w, s->zr, s->z, s->d, 0);
    FN(readout)(CX, s, s->w, P(E(s->c, C_STAB)));
}

/* refused (vla_form_check): the reference's chunk reads the next token's dt and lambda */
VLA_FN void FN(chunk_mamba3)(CXP, ST *s) {}

#else /* ---- the backward (recur_grad.h, docs/math.md section 11) ---- */
#include <string.h>

/* where the saved array named want starts among a state's saved arrays (grad_snap's order) */
static long FN(m3_saved_at)(const vla_config *cfg, const char *want)
{
    VLA_DIMS_LOCALS(vla_dims_of(cfg));
    long off = 0;
#define VLA_X_(name, len)                                                                          \
    if (!strcmp(#name, want))                                                                      \
        return off;                                                                                \
    off += (long)(len);
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    return 0;
}

/* the backward of y = R x at y (a turned vector): dTheta_p += dy . (J y)_p = dy_2p+1 y_2p - dy_2p
 * y_2p+1 (dth, carried, stored), then dy <- R^T dy, the cotangent of x */
VLA_FN void FN(turn_grad)(CXP, NUM *dy, const NUM *y, const NUM *z, NUM *dth, NUM *tmp, int d)
{
    FRAME_BEGIN;
    SCALAR(a);
    SCALAR(t);
    for (int p = 0; p < d / 2; p++) {
        MUL(a, E(dy, 2 * p + 1), E(y, 2 * p));
        MUL(t, E(dy, 2 * p), E(y, 2 * p + 1));
        SUB(a, a, t);
        ADD(E(dth, p), E(dth, p), a);
        STORE(E(dth, p));
    }
    FN(turn)(CX, dy, dy, z, tmp, d, 1);
    FRAME_END;
}

/* Step t's backward, s at S_t (al = k~_t, zr = R_t), Sp the saved arrays at t - 1 (k~_{t-1} in al,
 * v_{t-1} in vx). With b = dS k~ and y = dS k~_{t-1}, dS the cotangent of S_t with this read-out's:
 *   dlambda = dt (v . b - a v_{t-1} . y),  dg = a (dS . S_{t-1}) + beta v_{t-1} . y,
 *   dk~ = gamma dS^T v + (beta dS^T v_t from step t + 1),  dv = gamma b + (beta y from t + 1),
 *   dTheta = the turns' backwards of q~ and k~, dtheta_p = dt sum_{s >= t} dTheta_s,p,
 *   dS_{t-1} = a dS. The carried terms: za (dk~), er (dv), zb (sum dTheta). */
VLA_FN void FN(grad_mamba3)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FRAME_BEGIN;
    SCALAR(bet);
    SCALAR(gam);
    SCALAR(t);
    SCALAR(u1);
    SCALAR(u2);
    const int d = s->d, dv = s->dv;
    const NUM *kx = VLA_ROWP(Sp, FN(m3_saved_at)(&s->cfg, "al"));
    const NUM *vx = VLA_ROWP(Sp, FN(m3_saved_at)(&s->cfg, "vx"));
    NUM *dth = G->zb, *dkc = G->za, *dvc = G->er, *y = G->y;
    FN(grad_read)(CX, s, G, s->w, P(E(s->c, C_STAB)));
    FN(turn_grad)(CX, G->dx, s->w, s->zr, dth, s->z, d);
    FN(grad_gated_query)(CX, s, G);
    FN(m3_weights)(CX, s, P(bet), P(gam));
    FN(matvec)(CX, G->db, G->dS, s->al, dv, d); /* b */
    FN(matvec)(CX, y, G->dS, kx, dv, d);        /* y */
    FN(dot)(CX, P(u1), s->v, G->db, dv);
    FN(dot)(CX, P(u2), vx, y, dv);
    MUL(t, E(s->beta_decay, 1), u2);
    SUB(t, u1, t);
    MUL(E(G->dbeta, 0), E(s->beta_decay, 3), t);
    FN(matvec_t)(CX, G->dkp, G->dS, s->v, d, dv);
    for (int j = 0; j < d; j++) {
        MUL(E(G->dkp, j), gam, E(G->dkp, j));
        ADD(E(G->dkp, j), E(G->dkp, j), E(dkc, j));
    }
    FN(matvec_t)(CX, dkc, G->dS, vx, d, dv);
    for (int j = 0; j < d; j++) {
        MUL(E(dkc, j), bet, E(dkc, j));
        STORE(E(dkc, j));
    }
    for (int i = 0; i < dv; i++) {
        MUL(E(G->db, i), gam, E(G->db, i));
        ADD(E(G->db, i), E(G->db, i), E(dvc, i));
        MUL(E(dvc, i), bet, E(y, i));
        STORE(E(dvc, i));
    }
    FN(turn_grad)(CX, G->dkp, s->al, s->zr, dth, s->z, d);
    for (int j = 0; j < d; j++)
        SETI(E(G->du, j), 0);
    for (int p = 0; p < d / 2; p++)
        MUL(E(G->du, p), E(s->beta_decay, 3), E(dth, p));
    FN(grad_decay)(CX, s, G, Sp, 1);
    MUL(t, bet, u2);
    ADD(E(G->dg, 0), E(G->dg, 0), t);
    FRAME_END;
}
#endif
