/* recur_grad.h: the backward pass of the seq form in recur.h's text (docs/math.md section 11):
 * the reverse-mode recurrence of the loss L = sum_t c_t . o_t, the state's cotangent dS carried
 * from the last step to the first, giving dq, dk, dv, dbeta and the log-decays' gradients dg at
 * every step; for the models with A (rls, vla1, vla3, track sm: grad_A_*, grad_sm) the cotangent
 * dA carried beside dS, and du. Included after recur.h by the strict native instantiations
 * (native_inst.h, PRIMS) and the MPFR reference (reference/ref_model.c): the same text in every
 * arithmetic, so the emulation of a policy checks its gradients bit for bit.
 *
 * The forward states the backward needs are recomputed from checkpoints (gckpt, below, shared
 * with the chunk form's backward, recur_gradchunk.h): the forward pass keeps the state every
 * K = ceil(sqrt(T)) steps; the backward re-runs each segment of K steps from its checkpoint,
 * keeping its K states, then walks it backward, re-running each step from its stored S_{t-1} to
 * get the step's vectors (k', e, the read vector) and S_t. Memory: 2 sqrt(T) states.
 *
 * Arithmetic: the cotangent dS is a state, stored in the storage format after every update (the
 * "tape" of a 16-bit training run); c_t is an input (the io format); every gradient is computed
 * in the compute format and rounded to the io format when it is handed out (STORE_I). */
#ifndef VLA_RECUR_DEVICE
#include <string.h>

/* The backward's checkpoints, for a forward of T steps taken in units of U steps (the seq form:
 * U = 1; the chunk form: U = C, a chunk) and walked backward a block of K = U ceil(sqrt(ceil(T /
 * U))) steps at a time (vla_backward_block_len of the units): ck holds the state at every
 * block's first step (nck of them), seg a block's states at its units' first steps (K / U), each
 * grad_snap's nsav numbers. Memory: about 2 sqrt(T / U) states, whatever the block. */
typedef struct {
    NUM *ck, *seg;
    long nsav, U, K, nck, T;
} FN(gckpt);

/* the numbers of a state's saved arrays (tables.h's VLA_STATE_SAVED), S first */
static long FN(grad_nsav)(const vla_config *cfg)
{
    VLA_DIMS_LOCALS(vla_dims_of(cfg));
    return 0 VLA_STATE_SAVED(VLA_LEN_);
}

/* the backward's arrays (one set per run) */
typedef struct {
    NUM *dS;            /* dv x d: the cotangent of S_t, then of S_{t-1} */
    NUM *dn;            /* d: the cotangent of the normalizer n (la) */
    NUM *ct;            /* dv: c_t */
    NUM *dx;            /* d: the read vector's cotangent, then dq */
    NUM *dkp;           /* d: the write direction k''s cotangent, then dk */
    NUM *db;            /* dv: the cotangent of beta e (delta rule), then dv */
    NUM *dg;            /* d: the log-decays' gradients (scalar decays: entry 0) */
    NUM *dbeta;         /* 1 */
    NUM *ra, *rb;       /* d each: rwkv7's da and db */
    NUM *y;             /* dv: rwkv7's S_{t-1} a */
    NUM *dA;            /* d x d: the cotangent of A_t, then of A_{t-1} (rls, vla1, vla3) */
    NUM *er;            /* dv: vla1's residual before the clip */
    NUM *za, *zb, *zc;  /* d each: the SM backward's z, and work */
    NUM *du;            /* d: the cotangent of u', then du */
    NUM *dSh;           /* nh x dv x d: loglinear's levels' cotangents */
    FN(gckpt) P;        /* the checkpoints, one state every step of a block */
    int d, dv, nh;
} FN(gstate);

/* where the saved array named want starts among a state's saved arrays (grad_snap's order) */
static long FN(grad_saved_at)(const vla_config *cfg, const char *want)
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

/* dst <- the saved arrays of s (dir 0), or s's saved arrays <- src (dir 1), exactly */
VLA_FN void FN(grad_snap)(CXP, ST *s, NUM *buf, int dir)
{
    VLA_DIMS_LOCALS(vla_dims_of(&s->cfg));
    long o = 0;
#define VLA_X_(name, len)                                                                          \
    for (long i = 0; i < (long)(len); i++, o++) {                                                  \
        if (dir)                                                                                   \
            COPY(E(s->name, i), E(buf, o));                                                        \
        else                                                                                       \
            COPY(E(buf, o), E(s->name, i));                                                        \
    }
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
}

/* y = x / sqrt(x . x + eps) backward (l2norm; unit with eps = 0, whose guard left x as it was
 * when ||x|| < TINY): dy in g becomes dx = (dy - y (y . dy)) / r, r = sqrt(x . x + eps) */
VLA_FN void FN(grad_norm)(CXP, NUM *g, const NUM *x, int n, NREF eps, int guarded)
{
    FRAME_BEGIN;
    SCALAR(r);
    SCALAR(yd);
    SCALAR(t);
    FN(dot)(CX, P(r), x, x, n);
    if (eps)
        ADD(r, r, R(eps));
    SQRT(r, r);
    if (guarded && (!ISFIN(r) || LESSD(r, TINY))) {
        FRAME_END;
        return;
    }
    FN(dot)(CX, P(yd), x, g, n); /* x . dy, then y . dy = x . dy / r */
    DIV(yd, yd, r);
    for (int j = 0; j < n; j++) {
        DIV(t, E(x, j), r); /* y_j */
        MUL(t, t, yd);
        SUB(E(g, j), E(g, j), t);
        DIV(E(g, j), E(g, j), r);
    }
    FRAME_END;
}

/* the read-out o = S_t x / den (den = max(n . x, floor) when the model normalizes, else 1):
 * dS += (c / den) x^T, stored; G->dx = S_t^T (c / den) (+ dden n, dden = -(c . o) / den, when
 * den = n . x), G->dn += dden x */
VLA_FN void FN(grad_read)(CXP, ST *s, FN(gstate) *G, const NUM *x, NREF floor)
{
    FRAME_BEGIN;
    SCALAR(den);
    SCALAR(dd);
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    int live = 0; /* den = n . x, not its floor */
    if (s->cfg.normalize) {
        FN(dot)(CX, P(den), s->n, x, d);
        live = !LESS(den, R(floor));
        if (!live)
            COPY(den, R(floor));
        FN(dot)(CX, P(dd), G->ct, s->o, dv);
        DIV(dd, dd, den);
        SETI(t, 0);
        SUB(dd, t, dd);
        for (int i = 0; i < dv; i++)
            DIV(E(G->ct, i), E(G->ct, i), den);
    }
    for (int i = 0; i < dv; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(t, E(G->ct, i), E(x, j));
            ADD(E(G->dS, ij), E(G->dS, ij), t);
            STORE(E(G->dS, ij));
        }
    FN(matvec_t)(CX, G->dx, s->S, G->ct, d, dv);
    if (live)
        for (int j = 0; j < d; j++) {
            MUL(t, dd, E(s->n, j));
            ADD(E(G->dx, j), E(G->dx, j), t);
            MUL(t, dd, E(x, j));
            ADD(E(G->dn, j), E(G->dn, j), t);
            STORE(E(G->dn, j));
        }
    FRAME_END;
}

/* the gated family's query backward: w = scale l2norm(q) (recur_state.h's gated_query) */
VLA_FN void FN(grad_gated_query)(CXP, ST *s, FN(gstate) *G)
{
    for (int j = 0; j < s->d; j++)
        MUL(E(G->dx, j), E(G->dx, j), E(s->c, C_SCALE));
    if (s->cfg.qknorm)
        FN(grad_norm)(CX, G->dx, s->pq, s->d, P(E(s->c, C_L2EPS)), 0);
}

/* The decay's backward, dS holding the cotangent of S' = decay(S_{t-1}): dg = a (dS' . S_{t-1})
 * (per key channel: a_j sum_i dS'_ij S_ij), then dS <- dS' a (dS' Diag(a)), stored.
 * kind: 0 none, 1 the scalar a = beta_decay[1], 2 a per key channel (ag) */
VLA_FN void FN(grad_decay)(CXP, ST *s, FN(gstate) *G, const NUM *Sp, int kind)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    if (kind == 0) {
        FRAME_END;
        return;
    }
    for (int j = 0; j < d; j++)
        SETI(E(G->dg, j), 0);
    for (int i = 0; i < dv; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(t, E(G->dS, ij), E(Sp, ij));
            ADD(E(G->dg, kind == 1 ? 0 : j), E(G->dg, kind == 1 ? 0 : j), t);
            MUL(E(G->dS, ij), E(G->dS, ij), kind == 1 ? E(s->beta_decay, 1) : E(s->ag, j));
            STORE(E(G->dS, ij));
        }
    for (int j = 0; j < (kind == 1 ? 1 : d); j++)
        MUL(E(G->dg, j), E(G->dg, j), kind == 1 ? E(s->beta_decay, 1) : E(s->ag, j));
    FRAME_END;
}

/* The delta rule's write backward (delta, gdn, kda): S' = decay(S_{t-1}), e = v - S' k',
 * S_t = S' + (beta e) k'^T. With b = dS k' (the cotangent of beta e):
 *   dbeta = b . e, dv = beta b, dk' = dS^T (beta e) - S'^T (beta b),
 *   dS' = dS - (beta b) k'^T, then the decay's backward. */
VLA_FN void FN(grad_delta_write)(CXP, ST *s, FN(gstate) *G, const NUM *Sp, int kind)
{
    FRAME_BEGIN;
    SCALAR(t);
    SCALAR(sp);
    const int d = s->d, dv = s->dv;
    FN(matvec)(CX, G->db, G->dS, s->kp, dv, d);      /* b = dS k' */
    FN(dot)(CX, P(E(G->dbeta, 0)), G->db, s->e, dv);     /* dbeta = b . e */
    for (int i = 0; i < dv; i++)                       /* e <- beta e, b <- beta b = dv */
        {
        MUL(E(s->e, i), E(s->beta_decay, 0), E(s->e, i));
        MUL(E(G->db, i), E(s->beta_decay, 0), E(G->db, i));
    }
    FN(matvec_t)(CX, G->dkp, G->dS, s->e, d, dv);     /* dS^T (beta e) */
    for (int i = 0; i < dv; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            COPY(sp, E(Sp, ij)); /* S'_ij as the forward stored it */
            if (kind)
                MUL(sp, sp, kind == 1 ? E(s->beta_decay, 1) : E(s->ag, j));
            STORE(sp);
            MUL(t, sp, E(G->db, i));
            SUB(E(G->dkp, j), E(G->dkp, j), t);
            MUL(t, E(G->db, i), E(s->kp, j));
            SUB(E(G->dS, ij), E(G->dS, ij), t);
            STORE(E(G->dS, ij));
        }
    FN(grad_decay)(CX, s, G, Sp, kind);
    FRAME_END;
}

/* The additive write backward (la, gla, mamba2, rwkv7): S_t = decay(S_{t-1}) + v k^T:
 * dv = dS k, dk = dS^T v (k = phi(k)), then the decay's backward */
VLA_FN void FN(grad_additive)(CXP, ST *s, FN(gstate) *G, const NUM *Sp, int kind)
{
    FN(matvec)(CX, G->db, G->dS, s->pk, s->dv, s->d);
    FN(matvec_t)(CX, G->dkp, G->dS, s->v, s->d, s->dv);
    FN(grad_decay)(CX, s, G, Sp, kind);
}

/* the gated family's read-out backward: o = S_t w, w = scale l2norm(q) */
VLA_FN void FN(grad_read_gated)(CXP, ST *s, FN(gstate) *G)
{
    FN(grad_read)(CX, s, G, s->w, P(E(s->c, C_STAB)));
    FN(grad_gated_query)(CX, s, G);
}

/* The Sherman-Morrison update's backward (track sm; docs/math.md 11.2): A_t = A - z z^T / delta,
 * z = A^T u, delta = 1 + u . z (A = A_{t-1}, u = u'). G->dA holds W = dA_t on entry, dA_{t-1} on
 * return; G->du gets du. With the guard: a skipped update (|delta| < eps or not finite; it adds
 * eps I, a constant) passes W through and du = 0; a floored delta (vla3) is a constant:
 *   ddelta = (z . W z) / delta^2 (0 when floored),  dz = -(W + W^T) z / delta + ddelta u,
 *   du = ddelta z + A dz,  dA_{t-1} = W + u dz^T (stored). */
VLA_FN void FN(grad_sm)(CXP, ST *s, FN(gstate) *G, const NUM *A, const NUM *u, int guard, NREF eps)
{
    FRAME_BEGIN;
    SCALAR(delta);
    SCALAR(dd);
    SCALAR(t);
    const int d = s->d;
    int live = 1; /* delta is 1 + u . z, not its floor */
    FN(matvec_t)(CX, G->za, A, u, d, d); /* z, as the forward computed it */
    FN(dot)(CX, P(delta), u, G->za, d);
    SETI(t, 1);
    ADD(delta, t, delta);
    for (int j = 0; j < d; j++)
        SETI(E(G->du, j), 0);
    if (guard == GUARD_SKIP && (!ISFIN(delta) || ABSLESS(delta, R(eps)))) {
        FRAME_END;
        return;
    }
    if (guard == GUARD_FLOOR && LESS(delta, R(eps))) {
        COPY(delta, R(eps));
        live = 0;
    }
    FN(matvec)(CX, G->zb, G->dA, G->za, d, d);   /* W z */
    FN(matvec_t)(CX, G->zc, G->dA, G->za, d, d); /* W^T z */
    SETI(dd, 0);
    if (live) {
        FN(dot)(CX, P(dd), G->za, G->zb, d);
        DIV(dd, dd, delta);
        DIV(dd, dd, delta);
    }
    for (int j = 0; j < d; j++) { /* dz into zb */
        ADD(t, E(G->zb, j), E(G->zc, j));
        DIV(t, t, delta);
        MUL(E(G->zb, j), dd, E(u, j));
        SUB(E(G->zb, j), E(G->zb, j), t);
    }
    FN(matvec)(CX, G->du, A, G->zb, d, d); /* A dz, then + ddelta z */
    for (int j = 0; j < d; j++) {
        MUL(t, dd, E(G->za, j));
        ADD(E(G->du, j), E(G->du, j), t);
    }
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(t, E(u, i), E(G->zb, j));
            ADD(E(G->dA, ij), E(G->dA, ij), t);
            STORE(E(G->dA, ij));
        }
    FRAME_END;
}

/* dA += x dy^T (stored) and dx += A dy, the backward of y = A^T x (apply_sym) */
VLA_FN void FN(grad_apply)(CXP, ST *s, FN(gstate) *G, const NUM *x, const NUM *dy, NUM *dx)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d;
    FN(matvec)(CX, G->zc, s->A, dy, d, d);
    for (int j = 0; j < d; j++)
        ADD(E(dx, j), E(dx, j), E(G->zc, j));
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(t, E(x, i), E(dy, j));
            ADD(E(G->dA, ij), E(G->dA, ij), t);
            STORE(E(G->dA, ij));
        }
    FRAME_END;
}

/* The write of the models with A (rls, vla1, vla3; docs/math.md 11.2), S_t = S_{t-1} + e' alpha^T
 * (e' = e = v - S_{t-1} k', or vla1's clip of e), alpha = A^T k' (vla3: unit(A^T k')) with A
 * after the update and the nudge (before vla1's clamp); the nudge and the clamp add constants to
 * A, and dA passes through them. Each model's file (grad_<tok>) calls, after its read-out's
 * backward: grad_A_e, its clip's backward if any, grad_A_S, its vec_<tok> (the step's vectors
 * again, from A_{t-1}, in the forward's bits), its alpha's backward if any, grad_A_update with its
 * u' and guard, and its u''s backward. */

/* G->db = de' = dS alpha, G->zb = dalpha = dS^T e' */
VLA_FN void FN(grad_A_e)(CXP, ST *s, FN(gstate) *G)
{
    FN(matvec)(CX, G->db, G->dS, s->al, s->dv, s->d);
    FN(matvec_t)(CX, G->zb, G->dS, s->e, s->d, s->dv);
}

/* de (G->db) to dk' = -S_{t-1}^T de and dS_{t-1} = dS - de k'^T (stored); then s->A = A_{t-1}
 * (in Sp after S_{t-1}), for the model's vectors of the step */
VLA_FN void FN(grad_A_S)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    FRAME_BEGIN;
    SCALAR(t);
    const int d = s->d, dv = s->dv;
    const NUM *A0 = VLA_ROWP(Sp, (size_t)dv * d);
    FN(matvec_t)(CX, G->dkp, Sp, G->db, d, dv);
    SETI(t, 0);
    for (int j = 0; j < d; j++)
        SUB(E(G->dkp, j), t, E(G->dkp, j));
    for (int i = 0; i < dv; i++)
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            MUL(t, E(G->db, i), E(s->kp, j));
            SUB(E(G->dS, ij), E(G->dS, ij), t);
            STORE(E(G->dS, ij));
        }
    for (long i = 0; i < (long)d * d; i++)
        COPY(E(s->A, i), E(A0, i));
    FRAME_END;
}

/* alpha = A^T k' (dalpha in G->zb) and A's update by u (grad_sm: the guard and eps of the
 * model's update) backward: dk' += A dalpha, dA, G->du = du */
VLA_FN void FN(grad_A_update)(CXP, ST *s, FN(gstate) *G, const NUM *Sp, const NUM *u, int guard,
                              NREF eps)
{
    FN(grad_apply)(CX, s, G, s->kp, G->zb, G->dkp);
    FN(grad_sm)(CX, s, G, VLA_ROWP(Sp, (size_t)s->dv * s->d), u, guard, eps);
}

/* u' = u / sqrt(d) backward (vla1, vla3): du = du' / sqrt(d) */
VLA_FN void FN(grad_A_sqrtd)(CXP, ST *s, FN(gstate) *G)
{
    for (int j = 0; j < s->d; j++)
        DIV(E(G->du, j), E(G->du, j), E(s->c, C_SQRTD));
}

/* Each model's backward of one step (its file's second part, lib/models/<tok>.h under
 * VLA_MODEL_GRAD, included at the end of recur_gradchunk.h), declared here from VLA_MODELS so
 * that a model without one is a build error (used but never defined): s holds S_t and the step's
 * vectors (re-run from S_{t-1} = Sp), G->dS the cotangent of S_t from the later steps; on return
 * G->dS is that of S_{t-1} and G's vectors hold the step's gradients. */
#define VLA_X_(ID, tok, ...) VLA_FN void FN(grad_##tok)(CXP, ST *s, FN(gstate) *G, const NUM *Sp);
VLA_MODELS(VLA_X_)
#undef VLA_X_

/* One step's backward: the model's */
VLA_FN void FN(grad_step)(CXP, ST *s, FN(gstate) *G, const NUM *Sp)
{
    switch (s->cfg.model) {
#define VLA_X_(ID, tok, ...)                                                                       \
    case VLA_##ID:                                                                                 \
        (FN(grad_##tok))(CX, s, G, Sp);                                                            \
        break;
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        break;
    }
}

/* the numbers of the backward's arrays, in allocation order (one list, so alloc and free agree) */
#define VLA_GRAD_ARRAYS(X, d, dv, nh)                                                             \
    X(dS, (long)(dv) * (d)) X(dn, d) X(ct, dv) X(dx, d) X(dkp, d) X(db, dv) X(dg, d) X(dbeta, 1)  \
    X(ra, d) X(rb, d) X(y, dv) X(dA, (long)(d) * (d)) X(er, dv) X(za, d) X(zb, d) X(zc, d)      \
    X(du, d) X(dSh, (long)(nh) * (dv) * (d))

/* the checkpoints' arrays freed (after ckpt_begin, whatever it returned) */
VLA_FN void FN(ckpt_end)(FN(gckpt) *P)
{
    if (P->ck)
        NUM_FREE(P->ck, FN(alloc_len)(P->nck * P->nsav));
    if (P->seg)
        NUM_FREE(P->seg, FN(alloc_len)(P->K / P->U * P->nsav));
}

/* The backward's forward, its one loop over t (the checkpoints' pass, a block's re-run, a chunk's,
 * a step's): s, from the saved state from when given (then at step t0, no chunk computed past
 * it), run over steps [t0, t1) by the forward's own stepping (vstate_step), step t's inputs
 * in(ctx, t); with buf, the state at each step t0 + i every up to t1 saved into buf's row i
 * before that step (never the state at T, no step's S_{t-1}). Returns a vla_err: the inputs'
 * callback's, VLA_ENOTSUP for delta's row gates, or vstate_step's. */
VLA_FN int FN(ckpt_run)(CXP, ST *s, const FN(gckpt) *P, NUM *from, long t0, long t1,
                        NUM *buf, long every, vla_grad_input in, void *ctx)
{
    int r = VLA_OK;
    vla_input x;
    if (from) {
        ARITH_ENTER;
        FN(grad_snap)(CX, s, from, 1);
        ARITH_LEAVE;
        s->t = t0;
        s->tail = 0;
    }
    for (long t = t0; !r; t++) {
        if (buf && (t - t0) % every == 0 && t < P->T) {
            ARITH_ENTER;
            FN(grad_snap)(CX, s, VLA_ROWP(buf, (t - t0) / every * P->nsav), 0);
            ARITH_LEAVE;
        }
        if (t == t1)
            break;
        if (!(r = in(ctx, t, &x)) && x.g && (vla_model_reads(&s->cfg) & VLA_IN_G))
            r = VLA_ENOTSUP; /* delta's row gates are not in the backward (nor a chunk form) */
        if (!r)
            r = FN(vstate_step)(CX, s, &x);
    }
    return r;
}

/* The forward of T steps of s (a fresh state of a configuration vla_grad_check admits) in units
 * of U steps, the state kept at every block's first step: in(t) gives step t's inputs (t = 0 ..
 * T-1). Then ckpt_block for each block from the last, and ckpt_end. Returns a vla_err: ckpt_run's,
 * or VLA_ENOMEM. */
VLA_FN int FN(ckpt_begin)(CXP, ST *s, FN(gckpt) *P, long T, long U, vla_grad_input in, void *ctx)
{
    *P = (FN(gckpt)){.nsav = FN(grad_nsav)(&s->cfg), .U = U, .T = T};
    P->K = U * vla_backward_block_len((T + U - 1) / U);
    P->nck = (T + P->K - 1) / P->K;
    P->ck = NUM_ALLOC(FN(alloc_len)(P->nck * P->nsav));
    P->seg = NUM_ALLOC(FN(alloc_len)(P->K / U * P->nsav));
    if (!P->ck || !P->seg)
        return VLA_ENOMEM;
    return FN(ckpt_run)(CX, s, P, NULL, 0, T, P->ck, P->K, in, ctx);
}

/* Block j's states: s from its checkpoint, re-run over the block's steps [j K, *t1) as far as its
 * last unit's first step, the state at each unit's first step t into seg's row (t - j K) / U.
 * Returns the block's first step, or a vla_err (< 0). */
VLA_FN long FN(ckpt_block)(CXP, ST *s, FN(gckpt) *P, long j, vla_grad_input in, void *ctx,
                           long *t1)
{
    const long t0 = j * P->K, last = t0 + P->K < P->T ? t0 + P->K : P->T;
    const int r = FN(ckpt_run)(CX, s, P, VLA_ROWP(P->ck, j * P->nsav), t0,
                               t0 + (last - 1 - t0) / P->U * P->U, P->seg, P->U, in, ctx);
    *t1 = last;
    return r ? r : t0;
}

/* the backward's arrays freed (after grad_begin, whatever it returned) */
VLA_FN void FN(grad_end)(FN(gstate) *G)
{
#define VLA_X_(name, len)                                                                          \
    if (G->name)                                                                                   \
        NUM_FREE(G->name, FN(alloc_len)(len));
    VLA_GRAD_ARRAYS(VLA_X_, G->d, G->dv, G->nh)
#undef VLA_X_
    FN(ckpt_end)(&G->P);
}

/* The forward of the backward of T steps of s (ckpt_begin's, a checkpoint every K = ceil(sqrt(T))
 * steps, vla_backward_block_len). Then grad_block for j = G->P.nck - 1 down to 0, and grad_end.
 * Returns a vla_err: the inputs' callback's, or VLA_ENOMEM. */
VLA_FN int FN(grad_begin)(CXP, ST *s, FN(gstate) *G, long T, vla_grad_input in, void *ctx)
{
    const int d = s->d, dv = s->dv;
    *G = (FN(gstate)){.d = d, .dv = dv, .nh = vla_levels(&s->cfg)};
    int ok = 1;
#define VLA_X_(name, len) ok &= (G->name = NUM_ALLOC(FN(alloc_len)(len))) != NULL;
    VLA_GRAD_ARRAYS(VLA_X_, d, dv, G->nh)
#undef VLA_X_
    if (!ok)
        return VLA_ENOMEM;
    return FN(ckpt_begin)(CX, s, &G->P, T, 1, in, ctx);
}

/* Block j's backward, steps t0 = j K .. t1 - 1, after the later blocks' (G->dS carries the
 * cotangent of S_{t1 - 1} from them): c_t at c + (t - base) dv, the gradients into out's rows
 * t - base (vlastab.h's vla_grads): base 0 for arrays of T steps, t0 for a block's. */
VLA_FN int FN(grad_block)(CXP, ST *s, FN(gstate) *G, long j, vla_grad_input in, void *ctx,
                          const double *c, const vla_grads *out, long base)
{
    const int d = s->d, dv = s->dv, ng = vla_col_gate(s->cfg.model) == 2 ? d : 1;
    long t1;
    const long t0 = FN(ckpt_block)(CX, s, &G->P, j, in, ctx, &t1); /* the states S_{t-1} */
    int r = t0 < 0 ? (int)t0 : VLA_OK;
    for (long t = t1 - 1; t >= t0 && !r; t--) {
        NUM *Sp = VLA_ROWP(G->P.seg, (t - t0) * G->P.nsav); /* S first among the saved arrays */
        const long o = t - base; /* the step's row in c and out */
        if ((r = FN(ckpt_run)(CX, s, &G->P, Sp, t, t + 1, NULL, 0, in, ctx))) /* S_t, its vectors */
            break;
        ARITH_ENTER;
        LOAD_IN_N(G->ct, c + o * dv, dv);
        FN(grad_step)(CX, s, G, Sp);
        for (int i = 0; i < d; i++) {
            STORE_I(E(G->dx, i));
            STORE_I(E(G->dkp, i));
            GRAD_OUT(out->dq[o * d + i], E(G->dx, i), 1);
            GRAD_OUT(out->dk[o * d + i], E(G->dkp, i), 1);
        }
        for (int i = 0; i < dv; i++) {
            STORE_I(E(G->db, i));
            GRAD_OUT(out->dv[o * dv + i], E(G->db, i), 1);
        }
        STORE_I(E(G->dbeta, 0));
        if (out->dbeta)
            GRAD_OUT(out->dbeta[o], E(G->dbeta, 0), vla_grad_has(&s->cfg, VLA_GRAD_BETA));
        for (int i = 0; i < ng && out->dg; i++) {
            STORE_I(E(G->dg, i));
            GRAD_OUT(out->dg[o * ng + i], E(G->dg, i), vla_grad_has(&s->cfg, VLA_GRAD_G));
        }
        for (int i = 0; i < d && out->du; i++) {
            STORE_I(E(G->du, i));
            GRAD_OUT(out->du[o * d + i], E(G->du, i), vla_grad_has(&s->cfg, VLA_GRAD_U));
        }
        for (int i = 0; i < d && out->da; i++) {
            STORE_I(E(G->ra, i));
            STORE_I(E(G->rb, i));
            GRAD_OUT(out->da[o * d + i], E(G->ra, i), 1);
            GRAD_OUT(out->db[o * d + i], E(G->rb, i), 1);
        }
        if (out->dS_zero) /* the cotangent of S_{t-1}, handed to step t - 1 */
            for (long i = 0; i < (long)dv * d; i++)
                out->dS_zero[o * dv * d + i] = ISFIN(E(G->dS, i)) && CMPD(E(G->dS, i), 0.0) == 0;
        ARITH_LEAVE;
    }
    return r;
}
#undef VLA_GRAD_ARRAYS
#endif
