/* recur_state.h: a run's state in recur.h's text: the struct made from tables.h's list, its
 * allocation and constants, the loading of a step's inputs, the read-out, the normalizer and the
 * nudge. Included by recur.h. */

/* A run's state: the arrays of tables.h's list (VLA_STATE_ARRAYS), the step t, the counters */
typedef struct {
    vla_config cfg;
    int d, dv;
    int ng, nr; /* the model's input arrays per key channel (tables.h's vla_dims) */
    long t;
    int tail; /* the chunk form's last, partial chunk once computed (vstate_finish): its tokens */
#define VLA_X_(name, len) NUM *name;
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    vla_counts cnt;
    vla_sr_state sr; /* sr: the random words (the native context points here) */
} ST;

#ifndef VLA_RECUR_DEVICE
/* an array's allocation: a form's arrays are empty in the other forms, and an allocator may
 * answer NULL for nothing */
static inline size_t FN(alloc_len)(long len) { return len > 0 ? (size_t)len : 1; }

VLA_FN void FN(vstate_free)(CXP, ST *s)
{
    if (!s)
        return;
    VLA_DIMS_LOCALS(vla_dims_of(&s->cfg));
#define VLA_X_(name, len) NUM_FREE(s->name, FN(alloc_len)(len));
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    free(s);
}

/* the constants of cfg (C_ of tables.h), computed in the compute format */
VLA_FN void FN(vstate_consts)(CXP, const vla_config *cfg, NUM *c)
{
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
    SETI(E(c, C_SQRTD), cfg->d);
    SQRT(E(c, C_SQRTD), E(c, C_SQRTD));
    SETD(E(c, C_LAMBDA0), cfg->lambda0);
    SETD(E(c, C_GAMMA), cfg->gamma);
    SQRT(E(c, C_SQRTG), E(c, C_GAMMA));
    SETI(E(c, C_FREG), 1);
    SUB(E(c, C_FREG), E(c, C_FREG), E(c, C_GAMMA));
    MUL(E(c, C_FREG), E(c, C_FREG), E(c, C_LAMBDA0)); /* (1 - gamma) lambda0, computed */
    /* cg stops where its residual reaches tol ||b|| or, for any tol, the rounding level
     * u ||b|| of the policy's compute format (its exact reference too): beyond it the true
     * residual stagnates, while the recursive one goes on shrinking into underflow */
    SETD(E(c, C_TOL), fmax(cfg->solve_tol, vla_fmt_unit_roundoff(vla_prec_compute(cfg->prec))));
    SETD(E(c, C_SCALE), cfg->scale);
    SETD(E(c, C_L2EPS), cfg->l2_eps);
    SETD(E(c, C_GATE_LB), cfg->gate_lb);
    SETD(E(c, C_RCPLN2), 0x1.715476p+0); /* fla's RCP_LN2 = 1.4426950216, 0x3FB8AA3B */
    SETD(E(c, C_TWOPI), 2 * M_PI); /* state-spaces/mamba's TWO_PI = 2 * math.pi */
}

/* cfg has been checked. Arrays start at +0; A_0 = I / lambda0 is computed in the compute format
 * and stored, like every later value of A. */
VLA_FN int FN(vstate_new)(CXP, const vla_config *cfg, ST **out)
{
    ST *s = calloc(1, sizeof *s);
    if (!s)
        return VLA_ENOMEM;
    int ok = 1;
    VLA_DIMS_LOCALS(vla_dims_of(cfg));
    s->cfg = *cfg;
    s->sr.seed = cfg->sr_seed;
    s->d = d;
    s->dv = dv;
    s->ng = ng;
    s->nr = nr;
#define VLA_X_(name, len) ok &= (s->name = NUM_ALLOC(FN(alloc_len)(len))) != NULL;
    VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    if (!ok) {
        FN(vstate_free)(CX, s);
        return VLA_ENOMEM;
    }
    NUM *c = s->c;
    ARITH_ENTER;
    FN(vstate_consts)(CX, cfg, c);
    for (int i = 0; i + 1 < nt * d; i += 2) /* mamba3's rotations start at e^(i 0) = 1 */
        SETI(E(s->zr, i), 1);
    if (cfg->track == VLA_TRACK_CHOL) { /* L_0 = sqrt(lambda0) I, the factor of M_0 */
        for (int i = 0; i < d; i++) {
            SETD(E(s->A, (size_t)i * d + i), cfg->lambda0);
            SQRT(E(s->A, (size_t)i * d + i), E(s->A, (size_t)i * d + i));
            STORE(E(s->A, (size_t)i * d + i));
        }
    } else if (vla_track_holds(cfg->track) == VLA_HOLDS_M) { /* M_0 = lambda0 I */
        for (int i = 0; i < d; i++) {
            COPY(E(s->A, (size_t)i * d + i), E(c, C_LAMBDA0));
            STORE(E(s->A, (size_t)i * d + i));
        }
    } else {
        for (int i = 0; i < d; i++) {
            COPY(E(s->A, (size_t)i * d + i), E(c, C_LAMBDA_INV));
            STORE(E(s->A, (size_t)i * d + i));
        }
    }
    ARITH_LEAVE;
    *out = s;
    return VLA_OK;
}

#endif

#ifndef VLA_RECUR_DEVICE
/* Decoding's state cache beyond f16 and bf16 to nearest (vla_cache_scaled): each group of
 * cache_rows rows of S (without a scale: S whole, scale 1) through vla_cache_value, which holds the
 * definition; S holds binary32 values (vla_config_check). The scale is the group's largest |y|,
 * y = S_ij plus, under ef, the residual that entry carried, which is then y less its decoded value
 * (binary32). sr's words: vla_cache_word of (sr_seed, t, the entry's index in S). An entry
 * clamped at the format's largest counts in cache_sat. */
VLA_FN void FN(cache_store)(CXP, ST *s)
{
    const vla_config *c = &s->cfg;
    const long n = (long)s->dv * s->d, g = c->cache_rows ? (long)c->cache_rows * s->d : n;
    const int ef = c->cache_round == VLA_CROUND_EF, sr = c->cache_round == VLA_CROUND_SR;
    for (long a = 0; a < n; a += g) {
        const long b = a + g < n ? a + g : n;
        double amax = 0;
        for (long i = a; i < b; i++) {
            const float y = (float)TOD(E(s->S, i)) + (ef ? (float)TOD(E(s->ef, i)) : 0.0f);
            amax = fabs(y) > amax || y != y ? fabs(y) : amax; /* NaN wins */
        }
        const float scale = c->cache_rows ? vla_cache_scale(c->cache, amax) : 1.0f;
        for (long i = a; i < b; i++) {
            const float y = (float)TOD(E(s->S, i)) + (ef ? (float)TOD(E(s->ef, i)) : 0.0f);
            int sat;
            const float r = vla_cache_value_sat(c->cache, c->cache_round, y, scale,
                                                sr ? vla_cache_word(c->sr_seed, s->t, i) : 0, &sat);
            if (sat) /* clamped silently, as a kernel's satfinite cast does: counted */
                COUNT(s->cnt.cache_sat);
            SETD(E(s->S, i), r);
            if (ef)
                SETD(E(s->ef, i), y - r);
        }
    }
}

/* LOAD_IN_N(dst, x, n), LOAD_PHI_N(dst, x, n): LOAD_IN and LOAD_PHI of x[0..n) into dst, an
 * arithmetic's batched form where it has one */
#ifndef LOAD_IN_N
#define LOAD_IN_N(dst, x, n)                                                                       \
    do {                                                                                           \
        for (int i_ = 0; i_ < (n); i_++)                                                           \
            LOAD_IN(E(dst, i_), (x)[i_]);                                                          \
    } while (0)
#endif
#ifndef LOAD_PHI_N
#define LOAD_PHI_N(dst, x, n)                                                                      \
    do {                                                                                           \
        for (int i_ = 0; i_ < (n); i_++)                                                           \
            LOAD_PHI(E(dst, i_), (x)[i_]);                                                         \
    } while (0)
#endif
/* EXP_N(dst, a, n): EXP of a[0..n) into dst, batched where the arithmetic has a batch */
#ifndef EXP_N
#define EXP_N(dst, a, n)                                                                           \
    do {                                                                                           \
        for (int i_ = 0; i_ < (n); i_++)                                                           \
            EXP(E(dst, i_), E(a, i_));                                                             \
    } while (0)
#endif
/* g <- the log-gate's lower bound applied as gate_map says (none when gate_lb is 0), in the
 * compute format as fla's in-kernel gates (kda's lower_bound * sigmoid(.) in binary32) */
VLA_FN void FN(gate_map)(CXP, ST *s, NREF g)
{
    if (s->cfg.gate_lb == 0)
        return;
    FRAME_BEGIN;
    SCALAR(t);
    SCALAR(one);
    const NUM *c = s->c;
    if (s->cfg.gate_map == VLA_GATE_PIN)
        COPY(R(g), E(c, C_GATE_LB));
    else if (s->cfg.gate_map == VLA_GATE_SIGMOID) { /* lb sigmoid(g) = lb / (1 + exp(-g)) */
        SETI(t, 0);
        SETI(one, 1);
        SUB(t, t, R(g));
        EXP(t, t);
        ADD(t, one, t);
        DIV(R(g), E(c, C_GATE_LB), t);
    } else {
        LANE_IF(LESS(R(g), E(c, C_GATE_LB))) {
            COPY(R(g), E(c, C_GATE_LB));
        } LANE_END
    }
    FRAME_END;
}

/* mamba3's inputs besides q, k, v, lambda (beta) and g: its step dt into beta_decay[3] (absent: 1)
 * and each key-channel pair's angular rate theta into u (u_p, p < d/2; the last channel of an odd
 * d does not turn), both rounded to the io format */
VLA_FN void FN(load_turn)(CXP, ST *s, const vla_input *in)
{
    LOAD_IN(E(s->beta_decay, 3), isnan(in->decay) ? 1 : in->decay);
    for (int p = 0; p < s->d / 2; p++)
        LOAD_IN(E(s->u, p), in->u ? in->u[p] : 0);
}

/* Rounds this step's inputs into the storage format; phi is applied in binary64 before that
 * rounding (docs/math.md section 5), the identity map when cfg.features says so. Host only: a
 * device takes inputs that the host prepared with this function. */
VLA_FN void FN(load)(CXP, ST *s, const vla_input *in)
{
    int d = s->d, dv = s->dv, phi = s->cfg.features == VLA_FEAT_OWN;
    LOAD_IN_N(s->q, in->q, d);
    LOAD_IN_N(s->k, in->k, d);
    LOAD_IN_N(s->u, in->u ? in->u : in->k, d);
    if (phi) {
        LOAD_PHI_N(s->pk, in->k, d);
        LOAD_PHI_N(s->pq, in->q, d);
    } else {
        for (int i = 0; i < d; i++) {
            COPY(E(s->pk, i), E(s->k, i));
            COPY(E(s->pq, i), E(s->q, i));
        }
    }
    LOAD_IN_N(s->v, in->v, dv);
    if (in->g)
        LOAD_IN_N(s->g, in->g, dv);
    if (isnan(in->beta))
        COPY(E(s->beta_decay, 0), E(s->c, C_BETA));
    else
        LOAD_IN(E(s->beta_decay, 0), in->beta);
    if (s->cfg.beta_bf16) /* SGLang 38975: sigmoid(b).to(bfloat16) each step */
        ROUND_FMT(E(s->beta_decay, 0), VLA_FMT_BF16);
    if (vla_col_gate(s->cfg.model) == 1) { /* the log-decay as the kernels take it, then a */
        LOAD_IN(E(s->beta_decay, 2), in->lgs);
        FN(gate_map)(CX, s, P(E(s->beta_decay, 2)));
        EXP(E(s->beta_decay, 1), E(s->beta_decay, 2));
    } else if (isnan(in->decay)) {
        SETI(E(s->beta_decay, 1), 1);
        SETI(E(s->beta_decay, 2), 0);
    } else { /* log(a), an input as fla's g (a = 0: -Inf, which vla_form_input_check refuses) */
        LOAD_IN(E(s->beta_decay, 1), in->decay);
        LOAD_LOG(E(s->beta_decay, 2), in->decay);
    }
    for (int i = 0; i < s->ng; i++) { /* per key channel (a scalar input serves each) */
        LOAD_IN(E(s->lg, i), in->lg ? in->lg[i] : in->lgs);
        FN(gate_map)(CX, s, P(E(s->lg, i)));
    }
    EXP_N(s->ag, s->lg, s->ng);
    if (s->cfg.decay_bf16) { /* vmlx-swift 433: exp(g) narrowed to bfloat16 before use */
        ROUND_FMT(E(s->beta_decay, 1), VLA_FMT_BF16);
        for (int i = 0; i < s->ng; i++)
            ROUND_FMT(E(s->ag, i), VLA_FMT_BF16);
    }
    for (int i = 0; i < s->nr; i++) {
        LOAD_IN(E(s->ra, i), in->a ? in->a[i] : 0.0);
        LOAD_IN(E(s->rb, i), in->b ? in->b[i] : 0.0);
    }
    if (vla_dims_of(&s->cfg).nt)
        FN(load_turn)(CX, s, in);
}
#endif

/* The state kept in the cache's format between two updates (docs/forms.md "The state cache"):
 * f16 and bf16 to nearest everywhere, the others on the host (vla_cache_scaled) */
VLA_FN void FN(cache_keep)(CXP, ST *s)
{
#ifndef VLA_RECUR_DEVICE
    if (vla_cache_scaled(&s->cfg))
        FN(cache_store)(CX, s);
    else
#endif
    if (s->cfg.cache) /* f16, bf16: VLA_CACHE_'s first three are VLA_HALF_'s */
        VLA_PFOR(i, 0, s->dv * s->d)
            ROUND_H(E(s->S, i), (vla_half)s->cfg.cache);
}

#ifndef VLA_RECUR_DEVICE
/* S_0 = S0 (dv x d, binary64) on a state at t = 0: each number rounded once to the storage format,
 * in which it is then exact in the compute format too (no store rounds it again), then kept in the
 * state cache as every state between two steps is (a prefill's final state handed to decode is
 * stored in the cache's format) */
VLA_FN void FN(vstate_start)(CXP, ST *s, const double *S0)
{
    const vla_fmt f = vla_prec_storage(s->cfg.prec);
    ARITH_ENTER;
    for (long i = 0; i < (long)s->dv * s->d; i++)
        SETD(E(s->S, i), vla_round_fmt(f, S0[i]));
    s->cfg.h0 = 1;
    FN(cache_keep)(CX, s);
    ARITH_LEAVE;
}
#endif

/* A read-out's denominator that is not finite (n . x overflowed: o = S x / Inf = 0, silently) is
 * an event: counted, and the step t of the first kept (ev[0] says that there was one) */
VLA_FN void FN(den_check)(CXP, ST *s, NREF den, long t)
{
    LANE_IF(PNOT(ISFIN(R(den)))) {
        COUNT(s->cnt.den_inf);
        LANE_IF(LESSD(E(s->ev, 0), 0.5)) {
            COUNT_ADD(s->cnt.den_inf_t, t);
        } LANE_END
        VLA_PFOR(i, 0, 1)
            SETI(E(s->ev, i), 1);
    } LANE_END
}

/* o = S x / max(n . x, floor) when the model normalizes, else S x */
VLA_FN void FN(readout)(CXP, ST *s, const NUM *x, NREF floor)
{
    FRAME_BEGIN;
    SCALAR(den);
    FN(matvec)(CX, s->o, s->S, x, s->dv, s->d);
    if (s->cfg.normalize) {
        FN(dot)(CX, P(den), s->n, x, s->d);
        LANE_IF(LESS(den, R(floor))) {
            COPY(den, R(floor));
        } LANE_END
        FN(den_check)(CX, s, P(den), s->t);
        VLA_PFOR(i, 0, s->dv)
            DIV(E(s->o, i), E(s->o, i), den);
    }
    FRAME_END;
}

/* ---- the writes of S that several models share ---- */

/* the additive write's vectors (gla, mamba2, rwkv7's own write): no delta term, k' = 0 and
 * alpha = k, so J is the decay alone and B = v k^T */
VLA_FN void FN(vec_additive)(CXP, ST *s)
{
    VLA_PFOR(j, 0, s->d) {
        SETI(E(s->kp, j), 0);
        COPY(E(s->al, j), E(s->pk, j));
    }
}

/* S <- a S, a the step's scalar decay (beta_decay[1]), each entry stored */
VLA_FN void FN(decay_S)(CXP, ST *s)
{
    VLA_PFOR(i, 0, s->dv * s->d) {
        MUL(E(s->S, i), E(s->beta_decay, 1), E(s->S, i));
        STORE(E(s->S, i));
    }
}

/* S <- S Diag(a), a the step's decays per key channel (ag = exp(lg)), each entry stored */
VLA_FN void FN(decay_cols)(CXP, ST *s)
{
    VLA_PFOR(i, 0, s->dv)
        for (int j = 0; j < s->d; j++) {
            MUL(E(s->S, (size_t)i * s->d + j), E(s->S, (size_t)i * s->d + j), E(s->ag, j));
            STORE(E(s->S, (size_t)i * s->d + j));
        }
}

/* The delta rule's write: e = v - S k', then S_ij = (g_i S_ij +) (beta e_i) k'_j, stored; g: the
 * row gates (delta_form=gated), or NULL */
VLA_FN void FN(delta_write)(CXP, ST *s, const NUM *g)
{
    FRAME_BEGIN;
    SCALAR(b);
    SCALAR(t);
    int d = s->d, dv = s->dv;
    NUM *S = s->S;
    FN(residual)(CX, s->e, s->v, S, s->kp, dv, d);
    VLA_PFOR(i, 0, dv) {
        MUL(b, E(s->beta_decay, 0), E(s->e, i));
        for (int j = 0; j < d; j++) {
            size_t ij = (size_t)i * d + j;
            TEMP(t);
            if (g)
                MUL(E(S, ij), E(g, i), E(S, ij));
            MUL(t, b, E(s->kp, j));
            ADD(E(S, ij), E(S, ij), t);
            STORE(E(S, ij));
        }
    }
    FRAME_END;
}

/* The gated family's query into w: phi(q) (features id, their default: q), L2-normalized when
 * qknorm (fla's x / sqrt(x . x + eps)), times the scale when scaled (fla's recurrent kernels
 * scale q; its chunk kernels scale the read-out, recur_chunk.h's chunk_wy) */
VLA_FN void FN(gated_query)(CXP, ST *s, NUM *w, int scaled)
{
    VLA_PFOR(j, 0, s->d)
        COPY(E(w, j), E(s->pq, j));
    if (s->cfg.qknorm)
        FN(l2norm)(CX, w, s->d, P(E(s->c, C_L2EPS)));
    if (scaled)
        VLA_PFOR(j, 0, s->d)
            MUL(E(w, j), E(w, j), E(s->c, C_SCALE));
}

/* the gated family's read-out, o = S (scale q') (recurrent kernels' order) */
VLA_FN void FN(read_gated)(CXP, ST *s)
{
    FN(gated_query)(CX, s, s->w, 1);
    FN(readout)(CX, s, s->w, P(E(s->c, C_STAB)));
}

/* n += x, stored */
VLA_FN void FN(accumulate)(CXP, NUM *n, const NUM *x, int d)
{
    VLA_PFOR(i, 0, d) {
        ADD(E(n, i), E(n, i), E(x, i));
        STORE(E(n, i));
    }
}

VLA_FN void FN(nudge)(CXP, ST *s)
{
    if (s->cfg.nudge && s->t % s->cfg.period == 0) {
        FN(add_diag)(CX, s->A, s->d, P(E(s->c, C_PER)));
        s->cnt.nudge++;
    }
}
