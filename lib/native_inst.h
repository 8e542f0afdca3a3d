/* native_inst.h: one native instantiation of recur.h: the model operations table, its
 * constructor create_SFX, and (when PRIMS is 1) the public primitives vla_*_SFX of section 3.
 * Included by native_all.h once per policy, with POL, RO, RS (and SFX, if not TAG(POL)) set
 * (arith_native.h says what they are); everything they and recur.h define ends with it. */
#include "arith_native.h"
#include "recur.h"

/* the context of a native instantiation is the model's stochastic-rounding state */
static int FN(op_step)(void *self, const vla_input *in)
{
    return FN(vstate_step)(&((ST *)self)->sr, self, in);
}
static int FN(op_read)(void *self, const double *q)
{
    return FN(vstate_read)(&((ST *)self)->sr, self, q);
}
static int FN(op_get)(const void *self, vla_quantity q, double *dst)
{
    return FN(vstate_get)(&((ST *)self)->sr, (ST *)self, q, dst);
}
static void FN(op_destroy)(void *self) { FN(vstate_free)(NULL, self); }
static int FN(op_save)(const void *self, FILE *f) { return FN(vstate_save)(self, f); }
static int FN(op_load)(void *self, FILE *f) { return FN(vstate_load)(self, f); }
static int FN(op_finish)(void *self) { return FN(vstate_finish)(&((ST *)self)->sr, self); }
static int FN(op_start)(void *self, const double *S0)
{
    FN(vstate_start)(&((ST *)self)->sr, self, S0);
    return VLA_OK;
}
static const vla_model_ops FN(ops) = {FN(op_step),    FN(op_read), FN(op_get),
                                      FN(op_destroy), FN(op_save), FN(op_load),
                                      NULL,           FN(op_finish), FN(op_start)};

static int FN(create)(const vla_config *cfg, vla_model **out)
{
    ST *s;
    vla_sr_state init = {.seed = cfg->sr_seed}; /* step 0: the construction's stores */
    int r = FN(vstate_new)(&init, cfg, &s);
    return r ? r : vla_model_wrap(out, cfg, &FN(ops), s, &s->cnt);
}

#ifdef NATIVE_EXTRA /* an includer's own functions on this policy (kernels/: inputs for the GPU) */
#include NATIVE_EXTRA
#endif

#if PRIMS
static int FN(prim_check)(const NUM *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return VLA_ENONFINITE;
    return VLA_OK;
}
#define PRIM_ARGS(d)                                                                               \
    if ((d) < VLA_D_MIN || (d) > VLA_D_MAX)                                                        \
        return VLA_ERANGE

int FN(vla_score)(NUM *score, const NUM *k, const NUM *q, int d)
{
    NUM r, sd;
    if (!score || !k || !q)
        return VLA_EINVAL;
    PRIM_ARGS(d);
    if (FN(prim_check)(k, d) || FN(prim_check)(q, d))
        return VLA_ENONFINITE;
    FN(dot)(NULL, &r, k, q, d);
    SETI(sd, d);
    SQRT(sd, sd);
    DIV(*score, r, sd);
    return VLA_OK;
}

/* The primitives take any A, symmetric or not: sm updates each entry on its own, as it always
 * has; sm-sym mirrors its upper triangle, as its definition says. */
static int FN(sm_common)(NUM *A, const NUM *u, int d, NUM eps_g, long *fallbacks, int sym)
{
    NUM z[VLA_D_MAX];
    long none = 0;
    if (!A || !u)
        return VLA_EINVAL;
    PRIM_ARGS(d);
    if (FN(prim_check)(u, d))
        return VLA_ENONFINITE;
    FN(sm_update)(NULL, A, u, d, z, eps_g > 0 ? GUARD_SKIP : GUARD_NONE, &eps_g, sym, !sym,
                  fallbacks ? fallbacks : &none);
    return VLA_OK;
}
int FN(vla_sm_update)(NUM *A, const NUM *u, int d, NUM eps_g, long *fallbacks)
{
    return FN(sm_common)(A, u, d, eps_g, fallbacks, 0);
}
int FN(vla_sm_sym_update)(NUM *A, const NUM *u, int d, NUM eps_g, long *fallbacks)
{
    return FN(sm_common)(A, u, d, eps_g, fallbacks, 1);
}

/* U holds r update vectors as rows (r x d): A <- (A^-1 + U^T U)^-1 by r rank-1 steps in place */
int FN(vla_woodbury)(NUM *A, const NUM *U, int r, int d, NUM eps_g, long *fallbacks)
{
    if (!U || r < 0)
        return VLA_EINVAL;
    PRIM_ARGS(d);
    if (FN(prim_check)(U, r * d))
        return VLA_ENONFINITE;
    for (int i = 0; i < r; i++) {
        int e = FN(sm_common)(A, U + (size_t)i * d, d, eps_g, fallbacks, 0);
        if (e)
            return e;
    }
    return VLA_OK;
}

void FN(vla_alpha)(NUM *alpha, const NUM *A, const NUM *s, int d)
{
    FN(matvec)(NULL, alpha, A, s, d, d);
}
void FN(vla_modulate)(NUM *S, const NUM *v, const NUM *alpha, int dv, int d)
{
    FN(modulate)(NULL, S, v, alpha, dv, d);
}
int FN(vla_renorm)(NUM *S, int dv, int d, NUM threshold)
{
    return FN(renorm)(NULL, S, dv, d, &threshold);
}
void FN(vla_nudge)(NUM *A, int d, NUM eps) { FN(add_diag)(NULL, A, d, &eps); }

/* vla_ut_inverse in this policy: L's entries rounded to the io format as inputs are */
static int FN(ut_inverse)(vla_tri tri, const double *L, int n, double *T)
{
    NUM *M = calloc((size_t)n * n, sizeof *M), *W = calloc((size_t)n * n, sizeof *W);
    if (!M || !W) {
        free(M);
        free(W);
        return VLA_ENOMEM;
    }
    for (int i = 0; i < n * n; i++)
        LOAD_IN(M[i], L[i]);
    FN(chunk_inverse)(NULL, tri, M, W, n);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            T[r * n + c] = c < r ? (double)M[c * n + r] : c == r;
    free(M);
    free(W);
    return VLA_OK;
}
#undef PRIM_ARGS

/* the backward pass in this policy (lib/recur_grad.h), strict arithmetic, a block at a time
 * behind a vla_backward: the seq form's (grad_block) or the chunk form's (gradchunk_block) */
#include "recur_grad.h"
#include "recur_gradchunk.h"
typedef struct {
    ST *s;
    FN(gstate) G;
    FN(gcstate) GC;
    int chunk; /* the chunk form's backward: GC; else G */
    vla_grad_input in;
    void *ctx;
} FN(bwd);

static int FN(bwd_block)(void *self, long j, const double *c, const vla_grads *out, long base)
{
    FN(bwd) *b = self;
    if (b->chunk)
        return FN(gradchunk_block)(&b->s->sr, b->s, &b->GC, j, b->in, b->ctx, c, out, base);
    return FN(grad_block)(&b->s->sr, b->s, &b->G, j, b->in, b->ctx, c, out, base);
}

static void FN(bwd_destroy)(void *self)
{
    FN(bwd) *b = self;
    if (b->chunk)
        FN(gradchunk_end)(&b->GC);
    else
        FN(grad_end)(&b->G);
    FN(vstate_free)(NULL, b->s);
    free(b);
}

static const vla_backward_ops FN(bwd_ops) = {FN(bwd_block), FN(bwd_destroy)};

static int FN(backward)(const vla_config *cfg, long T, vla_grad_input in, void *ctx,
                        vla_backward **out)
{
    FN(bwd) *b = calloc(1, sizeof *b);
    vla_sr_state init = {.seed = cfg->sr_seed};
    int r = b ? FN(vstate_new)(&init, cfg, &b->s) : VLA_ENOMEM;
    if (r) {
        free(b);
        return r;
    }
    b->in = in, b->ctx = ctx;
    b->chunk = cfg->form == VLA_FORM_CHUNK && cfg->chunk > 1;
    r = b->chunk ? FN(gradchunk_begin)(&b->s->sr, b->s, &b->GC, T, in, ctx)
                 : FN(grad_begin)(&b->s->sr, b->s, &b->G, T, in, ctx);
    if (r) {
        FN(bwd_destroy)(b);
        return r;
    }
    return vla_backward_wrap(out, &FN(bwd_ops), b, T, b->chunk ? b->GC.P.K : b->G.P.K, cfg->dv);
}
#endif

#include "recur_end.h"
