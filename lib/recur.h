/* recur.h: every primitive and model recurrence of SPEC sections 2-4, written once in three-address
 * form over a small set of arithmetic macros. It is included once per arithmetic: the native
 * policies (lib/arith_native.h, each operation rounded as the policy says) and GNU MPFR (exact at
 * P bits, or emulating a format bit for bit; reference/arith_mpfr.h). Because the reference runs
 * this very text, the order of every operation is the same by construction, and a bit that
 * differs between lib/ and the emulation is an arithmetic error, never a transcription error.
 *
 * The including file defines, besides the arithmetic macros documented in arith_native.h:
 *   SFX   the suffix of every name made here (FN(step) -> step_f32)
 *   CXP   the context parameter declaration, CX the context argument.
 * Shapes: A is d x d, S is dv x d, row-major; vectors of keys have d entries, of values dv. */

/* VLA_FN qualifies every function made here: static for C; a CUDA includer may define it as
 * `static __device__` to run the same text on the GPU (the host-only parts, allocation and
 * checkpoints, are then left out with VLA_RECUR_DEVICE). */
#ifndef VLA_FN
#define VLA_FN static
#endif
#define VLA_CAT_(a, b) a##_##b
#define VLA_CAT(a, b) VLA_CAT_(a, b)
#define FN(name) VLA_CAT(name, SFX)
#define ST FN(vstate)

#ifndef VLA_RECUR_ONCE
#define VLA_RECUR_ONCE
enum { GUARD_NONE, GUARD_SKIP, GUARD_FLOOR };
enum { C_LAMBDA_INV, C_EPS_G, C_STAB, C_PER, C_EPS_O, C_CLIP, C_CLAMP, C_CLAMP_EPS, C_RENORM,
       C_BETA, C_SQRTD, C_NCONST };
#endif

/* ---- vector kernels: every reduction left to right, starting from the first term ---- */

/* r = x . y */
VLA_FN void FN(dot)(CXP, NREF r, const NUM *x, const NUM *y, int n)
{
    FRAME_BEGIN;
    SCALAR(t);
    MUL(R(r), E(x, 0), E(y, 0));
    for (int j = 1; j < n; j++) {
        MUL(t, E(x, j), E(y, j));
        ADD(R(r), R(r), t);
    }
    FRAME_END;
}

/* y = M x, M m x n (y must not alias x) */
VLA_FN void FN(matvec)(CXP, NUM *y, const NUM *M, const NUM *x, int m, int n)
{
    for (int i = 0; i < m; i++)
        FN(dot)(CX, P(E(y, i)), M + (size_t)i * n, x, n);
}

/* r = ||x||_2, the plain sqrt of the sum of squares (a 16-bit format under- or overflows here;
 * that is part of what we measure) */
VLA_FN void FN(norm2)(CXP, NREF r, const NUM *x, int n)
{
    FN(dot)(CX, r, x, x, n);
    SQRT(R(r), R(r));
}

/* x <- x / ||x||_2. A norm below the smallest normal of the compute format, or not finite, is a
 * zero-norm event: x is left as it is and the event counted (never a NaN). */
VLA_FN void FN(unit)(CXP, NUM *x, int n, long *zero_norm)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    FN(norm2)(CX, P(nrm), x, n);
    if (!ISFIN(nrm) || CMPD(nrm, TINY) < 0) {
        (*zero_norm)++;
    } else {
        for (int i = 0; i < n; i++)
            DIV(E(x, i), E(x, i), nrm);
    }
    FRAME_END;
}

/* A += eps I, stored */
VLA_FN void FN(add_diag)(CXP, NUM *A, int d, NREF eps)
{
    for (int i = 0; i < d; i++) {
        ADD(E(A, (size_t)i * d + i), E(A, (size_t)i * d + i), R(eps));
        STORE(E(A, (size_t)i * d + i));
    }
}

/* Sherman-Morrison: z = A u, delta = 1 + u . z, A <- A - z z^T / delta (sym = 0: every entry as
 * (z_i z_j) / delta, which is itself exactly symmetric since fl(z_i z_j) = fl(z_j z_i); sym = 1:
 * y = z / sqrt(delta), A_ij -= y_i y_j on the upper triangle, mirrored, half the divisions).
 * The guard: GUARD_SKIP (vla1, section 3): |delta| < eps or delta not finite skips the update and
 * adds eps I; GUARD_FLOOR (vla3): delta = max(delta, eps). Either counts into *guards.
 * z (d entries) is workspace and holds A_{t-1} u (sym: scaled) on return. */
VLA_FN void FN(sm_update)(CXP, NUM *A, const NUM *u, int d, NUM *z, int guard, NREF eps, int sym,
                          long *guards)
{
    FRAME_BEGIN;
    SCALAR(delta);
    SCALAR(t);
    SCALAR(one);
    FN(matvec)(CX, z, A, u, d, d);
    FN(dot)(CX, P(delta), u, z, d);
    SETI(one, 1);
    ADD(delta, one, delta);
    if (guard == GUARD_SKIP && (!ISFIN(delta) || ABSLESS(delta, R(eps)))) {
        FN(add_diag)(CX, A, d, eps);
        (*guards)++;
        FRAME_END;
        return;
    }
    if (guard == GUARD_FLOOR && LESS(delta, R(eps))) {
        COPY(delta, R(eps));
        (*guards)++;
    }
    if (!sym) {
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++) {
                MUL(t, E(z, i), E(z, j));
                DIV(t, t, delta);
                SUB(E(A, (size_t)i * d + j), E(A, (size_t)i * d + j), t);
                STORE(E(A, (size_t)i * d + j));
            }
    } else {
        SQRT(delta, delta);
        for (int i = 0; i < d; i++)
            DIV(E(z, i), E(z, i), delta);
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++) {
                MUL(t, E(z, i), E(z, j));
                SUB(E(A, (size_t)i * d + j), E(A, (size_t)i * d + j), t);
                STORE(E(A, (size_t)i * d + j));
                COPY(E(A, (size_t)j * d + i), E(A, (size_t)i * d + j));
            }
    }
    FRAME_END;
}

/* S += e a^T (S dv x d), stored */
VLA_FN void FN(modulate)(CXP, NUM *S, const NUM *e, const NUM *a, int dv, int d)
{
    FRAME_BEGIN;
    SCALAR(t);
    for (int i = 0; i < dv; i++)
        for (int j = 0; j < d; j++) {
            MUL(t, E(e, i), E(a, j));
            ADD(E(S, (size_t)i * d + j), E(S, (size_t)i * d + j), t);
            STORE(E(S, (size_t)i * d + j));
        }
    FRAME_END;
}

/* S /= ||S||_F when ||S||_F > threshold; returns 1 when it did */
VLA_FN int FN(renorm)(CXP, NUM *S, int dv, int d, NREF threshold)
{
    FRAME_BEGIN;
    SCALAR(f);
    int did = 0;
    FN(norm2)(CX, P(f), S, dv * d);
    if (LESS(R(threshold), f)) {
        for (int i = 0; i < dv * d; i++) {
            DIV(E(S, i), E(S, i), f);
            STORE(E(S, i));
        }
        did = 1;
    }
    FRAME_END;
    return did;
}

/* e = v - S x: the residual of the value against the memory's prediction for key x */
VLA_FN void FN(residual)(CXP, NUM *e, const NUM *v, const NUM *S, const NUM *x, int dv, int d)
{
    FN(matvec)(CX, e, S, x, dv, d);
    for (int i = 0; i < dv; i++)
        SUB(E(e, i), E(v, i), E(e, i));
}

/* ---- the models ---- */

typedef struct {
    vla_config cfg;
    int d, dv;
    long t;
    NUM *S, *A, *n;               /* the state */
    NUM *q, *k, *v, *u, *g;       /* this step's inputs, rounded to the storage format */
    NUM *pk, *pq;                 /* feature-mapped k and q (stored) */
    NUM *kp, *al, *z, *e, *o, *w; /* workspace: k', alpha, z, residual, read-out, scratch */
    NUM *c;                       /* the constants of the config, in the compute format */
    NUM *beta_decay;              /* this step's beta and decay */
    vla_counts cnt;
} ST;

#ifndef VLA_RECUR_DEVICE
VLA_FN void FN(vstate_free)(CXP, ST *s)
{
    if (!s)
        return;
    int d = s->d, dv = s->dv;
    NUM_FREE(s->S, (size_t)dv * d);
    NUM_FREE(s->A, (size_t)d * d);
    NUM_FREE(s->n, d);
    NUM_FREE(s->q, d);
    NUM_FREE(s->k, d);
    NUM_FREE(s->v, dv);
    NUM_FREE(s->u, d);
    NUM_FREE(s->g, dv);
    NUM_FREE(s->pk, d);
    NUM_FREE(s->pq, d);
    NUM_FREE(s->kp, d);
    NUM_FREE(s->al, d);
    NUM_FREE(s->z, d);
    NUM_FREE(s->e, dv);
    NUM_FREE(s->o, dv);
    NUM_FREE(s->w, d > dv ? d : dv);
    NUM_FREE(s->c, C_NCONST);
    NUM_FREE(s->beta_decay, 2);
    free(s);
}

/* cfg has been checked. Arrays start at +0; A_0 = I / lambda0 is computed in the compute format
 * and stored, like every later value of A. */
VLA_FN int FN(vstate_new)(CXP, const vla_config *cfg, ST **out)
{
    ST *s = calloc(1, sizeof *s);
    if (!s)
        return VLA_ENOMEM;
    int d = cfg->d, dv = cfg->dv, m = d > dv ? d : dv;
    s->cfg = *cfg;
    s->d = d;
    s->dv = dv;
    s->S = NUM_ALLOC((size_t)dv * d);
    s->A = NUM_ALLOC((size_t)d * d);
    s->n = NUM_ALLOC(d);
    s->q = NUM_ALLOC(d);
    s->k = NUM_ALLOC(d);
    s->v = NUM_ALLOC(dv);
    s->u = NUM_ALLOC(d);
    s->g = NUM_ALLOC(dv);
    s->pk = NUM_ALLOC(d);
    s->pq = NUM_ALLOC(d);
    s->kp = NUM_ALLOC(d);
    s->al = NUM_ALLOC(d);
    s->z = NUM_ALLOC(d);
    s->e = NUM_ALLOC(dv);
    s->o = NUM_ALLOC(dv);
    s->w = NUM_ALLOC(m);
    s->c = NUM_ALLOC(C_NCONST);
    s->beta_decay = NUM_ALLOC(2);
    if (!s->S || !s->A || !s->n || !s->q || !s->k || !s->v || !s->u || !s->g || !s->pk ||
        !s->pq || !s->kp || !s->al || !s->z || !s->e || !s->o || !s->w || !s->c ||
        !s->beta_decay) {
        FN(vstate_free)(CX, s);
        return VLA_ENOMEM;
    }
    NUM *c = s->c;
    ARITH_ENTER;
    SETD(E(c, C_LAMBDA_INV), cfg->lambda0);
    SETI(E(c, C_SQRTD), 1);
    DIV(E(c, C_LAMBDA_INV), E(c, C_SQRTD), E(c, C_LAMBDA_INV)); /* 1 / lambda0, computed */
    SETD(E(c, C_EPS_G), cfg->eps_g);
    SETD(E(c, C_STAB), cfg->stab_eps);
    SETD(E(c, C_PER), cfg->per_eps);
    SETD(E(c, C_EPS_O), cfg->eps_o);
    SETD(E(c, C_CLIP), cfg->clip);
    SETD(E(c, C_CLAMP), cfg->clamp);
    SETD(E(c, C_CLAMP_EPS), cfg->clamp_eps);
    SETD(E(c, C_RENORM), cfg->renorm);
    SETD(E(c, C_BETA), cfg->beta);
    SETI(E(c, C_SQRTD), d);
    SQRT(E(c, C_SQRTD), E(c, C_SQRTD));
    for (int i = 0; i < d; i++) {
        COPY(E(s->A, (size_t)i * d + i), E(c, C_LAMBDA_INV));
        STORE(E(s->A, (size_t)i * d + i));
    }
    ARITH_LEAVE;
    *out = s;
    return VLA_OK;
}

#endif

/* Rounds this step's inputs into the storage format; phi is applied in binary64 before that
 * rounding (SPEC section 5), the identity map when cfg.features says so. */
VLA_FN void FN(load)(CXP, ST *s, const vla_input *in)
{
    int d = s->d, dv = s->dv, phi = s->cfg.features == VLA_FEAT_OWN;
    for (int i = 0; i < d; i++) {
        LOAD_IN(E(s->q, i), in->q[i]);
        LOAD_IN(E(s->k, i), in->k[i]);
        LOAD_IN(E(s->u, i), in->u ? in->u[i] : in->k[i]);
        if (phi) {
            LOAD_PHI(E(s->pk, i), in->k[i]);
            LOAD_PHI(E(s->pq, i), in->q[i]);
        } else {
            COPY(E(s->pk, i), E(s->k, i));
            COPY(E(s->pq, i), E(s->q, i));
        }
    }
    for (int i = 0; i < dv; i++) {
        LOAD_IN(E(s->v, i), in->v[i]);
        if (in->g)
            LOAD_IN(E(s->g, i), in->g[i]);
    }
    if (isnan(in->beta))
        COPY(E(s->beta_decay, 0), E(s->c, C_BETA));
    else
        LOAD_IN(E(s->beta_decay, 0), in->beta);
    if (isnan(in->decay))
        SETI(E(s->beta_decay, 1), 1);
    else
        LOAD_IN(E(s->beta_decay, 1), in->decay);
}

/* o = S x / max(n . x, floor) when the model normalizes, else S x */
VLA_FN void FN(readout)(CXP, ST *s, const NUM *x, NREF floor)
{
    FRAME_BEGIN;
    SCALAR(den);
    FN(matvec)(CX, s->o, s->S, x, s->dv, s->d);
    if (s->cfg.normalize) {
        FN(dot)(CX, P(den), s->n, x, s->d);
        if (LESS(den, R(floor)))
            COPY(den, R(floor));
        for (int i = 0; i < s->dv; i++)
            DIV(E(s->o, i), E(s->o, i), den);
    }
    FRAME_END;
}

/* the read-out of query q (raw q already loaded into s->q, s->pq) */
VLA_FN void FN(read_loaded)(CXP, ST *s)
{
    NUM *c = s->c;
    switch (s->cfg.model) {
    case VLA_LA:
        FN(readout)(CX, s, s->pq, P(E(c, C_EPS_O)));
        break;
    case VLA_DELTA:
        FN(readout)(CX, s, s->pq, P(E(c, C_STAB)));
        break;
    case VLA_RLS:
        FN(readout)(CX, s, s->q, P(E(c, C_STAB)));
        break;
    case VLA_VLA1: /* o = S (A q) */
        FN(matvec)(CX, s->w, s->A, s->q, s->d, s->d);
        FN(readout)(CX, s, s->w, P(E(c, C_STAB)));
        break;
    case VLA_VLA3:
        FN(readout)(CX, s, s->pq, P(E(c, C_STAB)));
        break;
    default:
        break;
    }
}

/* n += x, stored */
VLA_FN void FN(accumulate)(CXP, NUM *n, const NUM *x, int d)
{
    for (int i = 0; i < d; i++) {
        ADD(E(n, i), E(n, i), E(x, i));
        STORE(E(n, i));
    }
}

VLA_FN void FN(step_la)(CXP, ST *s)
{
    FN(modulate)(CX, s->S, s->v, s->pk, s->dv, s->d);
    FN(accumulate)(CX, s->n, s->pk, s->d);
    for (int j = 0; j < s->d; j++) { /* S_t = S_{t-1} + v phi(k)^T: the Jacobian is I */
        COPY(E(s->kp, j), E(s->pk, j));
        SETI(E(s->al, j), 0);
    }
}

/* gated: S = diag(g) S + beta (v - S k') k'^T, the error from the ungated S_{t-1};
 * decay (fla): S' = a S, then S = S' + beta (v - S' k') k'^T */
VLA_FN void FN(step_delta)(CXP, ST *s, int has_g)
{
    FRAME_BEGIN;
    SCALAR(b);
    SCALAR(t);
    int d = s->d, dv = s->dv;
    NUM *S = s->S;
    for (int j = 0; j < d; j++)
        COPY(E(s->kp, j), E(s->k, j));
    FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
    if (s->cfg.delta_form == VLA_DELTA_DECAY) {
        for (size_t i = 0; i < (size_t)dv * d; i++) {
            MUL(E(S, i), E(s->beta_decay, 1), E(S, i));
            STORE(E(S, i));
        }
    }
    FN(residual)(CX, s->e, s->v, S, s->kp, dv, d);
    for (int i = 0; i < dv; i++) {
        MUL(b, E(s->beta_decay, 0), E(s->e, i));
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            if (has_g && s->cfg.delta_form == VLA_DELTA_GATED)
                MUL(E(S, ij), E(s->g, i), E(S, ij));
            MUL(t, b, E(s->kp, j));
            ADD(E(S, ij), E(S, ij), t);
            STORE(E(S, ij));
        }
    }
    for (int j = 0; j < d; j++) /* the Jacobian (gate aside) is I - k' (beta k')^T */
        MUL(E(s->al, j), E(s->beta_decay, 0), E(s->kp, j));
    FRAME_END;
}

/* exact online regularized least squares: w = A k, A -= w w^T / (1 + k.w), gain = A_t k,
 * S += (v - S k) gain^T */
VLA_FN void FN(step_rls)(CXP, ST *s)
{
    int d = s->d;
    FN(sm_update)(CX, s->A, s->k, d, s->z, s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                  P(E(s->c, C_EPS_G)), s->cfg.track == VLA_TRACK_SMSYM, &s->cnt.guard);
    FN(matvec)(CX, s->al, s->A, s->k, d, d);
    FN(residual)(CX, s->e, s->v, s->S, s->k, s->dv, d);
    FN(modulate)(CX, s->S, s->e, s->al, s->dv, d);
    for (int j = 0; j < d; j++)
        COPY(E(s->kp, j), E(s->k, j));
}

VLA_FN void FN(nudge)(CXP, ST *s)
{
    if (s->cfg.nudge && s->t % s->cfg.period == 0) {
        FN(add_diag)(CX, s->A, s->d, P(E(s->c, C_PER)));
        s->cnt.nudge++;
    }
}

/* v1: u' = u / sqrt(d); guarded SM; nudge; alpha = A k; e = v - S k clipped to ||e|| <= clip;
 * S += e alpha^T; clamp: ||S||_F or ||A||_F > clamp adds clamp_eps I to A */
VLA_FN void FN(step_vla1)(CXP, ST *s)
{
    FRAME_BEGIN;
    SCALAR(nrm);
    int d = s->d, dv = s->dv;
    NUM *c = s->c;
    for (int j = 0; j < d; j++)
        DIV(E(s->w, j), E(s->u, j), E(c, C_SQRTD));
    FN(sm_update)(CX, s->A, s->w, d, s->z, s->cfg.guard ? GUARD_SKIP : GUARD_NONE,
                  P(E(c, C_EPS_G)), s->cfg.track == VLA_TRACK_SMSYM, &s->cnt.guard);
    FN(nudge)(CX, s);
    FN(matvec)(CX, s->al, s->A, s->k, d, d);
    FN(residual)(CX, s->e, s->v, s->S, s->k, dv, d);
    FN(norm2)(CX, P(nrm), s->e, dv);
    if (LESS(E(c, C_CLIP), nrm)) {
        DIV(nrm, E(c, C_CLIP), nrm);
        for (int i = 0; i < dv; i++)
            MUL(E(s->e, i), E(s->e, i), nrm);
        s->cnt.clip++;
    }
    FN(modulate)(CX, s->S, s->e, s->al, dv, d);
    if (s->cfg.clamp_on) {
        int fire;
        FN(norm2)(CX, P(nrm), s->S, dv * d);
        fire = LESS(E(c, C_CLAMP), nrm);
        if (!fire) {
            FN(norm2)(CX, P(nrm), s->A, d * d);
            fire = LESS(E(c, C_CLAMP), nrm);
        }
        if (fire) {
            FN(add_diag)(CX, s->A, d, P(E(c, C_CLAMP_EPS)));
            s->cnt.clamp++;
        }
    }
    for (int j = 0; j < d; j++)
        COPY(E(s->kp, j), E(s->k, j));
    FRAME_END;
}

/* v3: u' = unit(u) / sqrt(d); SM with delta floored at stab_eps; nudge; k' = unit(phi(k));
 * alpha = unit(A k'); S += (v - S k') alpha^T; n += phi(k) */
VLA_FN void FN(step_vla3)(CXP, ST *s)
{
    int d = s->d, dv = s->dv;
    NUM *c = s->c;
    for (int j = 0; j < d; j++)
        COPY(E(s->w, j), E(s->u, j));
    FN(unit)(CX, s->w, d, &s->cnt.zero_norm);
    for (int j = 0; j < d; j++)
        DIV(E(s->w, j), E(s->w, j), E(c, C_SQRTD));
    FN(sm_update)(CX, s->A, s->w, d, s->z, s->cfg.guard ? GUARD_FLOOR : GUARD_NONE,
                  P(E(c, C_STAB)), s->cfg.track == VLA_TRACK_SMSYM, &s->cnt.guard);
    FN(nudge)(CX, s);
    for (int j = 0; j < d; j++)
        COPY(E(s->kp, j), E(s->pk, j));
    FN(unit)(CX, s->kp, d, &s->cnt.zero_norm);
    FN(matvec)(CX, s->al, s->A, s->kp, d, d);
    FN(unit)(CX, s->al, d, &s->cnt.zero_norm);
    FN(residual)(CX, s->e, s->v, s->S, s->kp, dv, d);
    FN(modulate)(CX, s->S, s->e, s->al, dv, d);
    FN(accumulate)(CX, s->n, s->pk, d);
}

VLA_FN int FN(vstate_step)(CXP, ST *s, const vla_input *in)
{
    ARITH_ENTER;
    FN(load)(CX, s, in);
    s->t++;
    s->cnt.steps++;
    switch (s->cfg.model) {
    case VLA_LA: FN(step_la)(CX, s); break;
    case VLA_DELTA: FN(step_delta)(CX, s, in->g != NULL); break;
    case VLA_RLS: FN(step_rls)(CX, s); break;
    case VLA_VLA1: FN(step_vla1)(CX, s); break;
    case VLA_VLA3: FN(step_vla3)(CX, s); break;
    default: break;
    }
    if (s->cfg.renorm > 0 && FN(renorm)(CX, s->S, s->dv, s->d, P(E(s->c, C_RENORM))))
        s->cnt.renorm++;
    FN(read_loaded)(CX, s);
    ARITH_LEAVE;
    return VLA_OK;
}

VLA_FN int FN(vstate_read)(CXP, ST *s, const double *q)
{
    ARITH_ENTER;
    int phi = s->cfg.features == VLA_FEAT_OWN;
    for (int i = 0; i < s->d; i++) {
        LOAD_IN(E(s->q, i), q[i]);
        if (phi)
            LOAD_PHI(E(s->pq, i), q[i]);
        else
            COPY(E(s->pq, i), E(s->q, i));
    }
    s->cnt.reads++;
    FN(read_loaded)(CX, s);
    ARITH_LEAVE;
    return VLA_OK;
}

#ifndef VLA_RECUR_DEVICE
VLA_FN int FN(vstate_get)(const ST *s, vla_quantity q, double *dst)
{
    const NUM *src;
    size_t n;
    switch (q) {
    case VLA_Q_S: src = s->S; n = (size_t)s->dv * s->d; break;
    case VLA_Q_A: src = s->A; n = (size_t)s->d * s->d; break;
    case VLA_Q_N: src = s->n; n = s->d; break;
    case VLA_Q_O: src = s->o; n = s->dv; break;
    case VLA_Q_KP: src = s->kp; n = s->d; break;
    case VLA_Q_ALPHA: src = s->al; n = s->d; break;
    default: return VLA_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = TOD(E(src, i));
    return VLA_OK;
}

/* The whole state in its own format, bit for bit (native: the raw numbers; MPFR: its portable
 * binary export), so that a run resumed from it ends with the same bits as one never stopped. */
VLA_FN int FN(vstate_save)(const ST *s, FILE *f)
{
    size_t d = s->d, dv = s->dv;
    if (fwrite(&s->t, sizeof s->t, 1, f) != 1 || fwrite(&s->cnt, sizeof s->cnt, 1, f) != 1)
        return VLA_EIO;
    if (SAVE_ARRAY(f, s->S, dv * d) || SAVE_ARRAY(f, s->A, d * d) || SAVE_ARRAY(f, s->n, d) ||
        SAVE_ARRAY(f, s->o, dv) || SAVE_ARRAY(f, s->kp, d) || SAVE_ARRAY(f, s->al, d))
        return VLA_EIO;
    return VLA_OK;
}

VLA_FN int FN(vstate_load)(ST *s, FILE *f)
{
    size_t d = s->d, dv = s->dv;
    if (fread(&s->t, sizeof s->t, 1, f) != 1 || fread(&s->cnt, sizeof s->cnt, 1, f) != 1)
        return VLA_EFORMAT;
    if (LOAD_ARRAY(f, s->S, dv * d) || LOAD_ARRAY(f, s->A, d * d) || LOAD_ARRAY(f, s->n, d) ||
        LOAD_ARRAY(f, s->o, dv) || LOAD_ARRAY(f, s->kp, d) || LOAD_ARRAY(f, s->al, d))
        return VLA_EFORMAT;
    return VLA_OK;
}
#endif
