/* native_all.h: the native policies of section 5, one instantiation of recur.h for each row of
 * vlalists.h's VLA_PRECS (policy.h makes them from the rows), and the constructor NATIVE_CREATE
 * that picks one. Included by
 * model.c (strict: no fma contraction, the public primitives), model_fast.c (compiled with
 * contraction allowed) and model_simd.c (vectorized), which set TAG(x) (the name of an
 * instantiation), PRIMS, NATIVE_CREATE and optionally NATIVE_EXTRA, NATIVE_MATVEC(_T) and
 * NATIVE_WHOLE_ROWS (arith_native.h); they are undefined at the end. */

/* every row of VLA_PRECS, rounding as its formats' VLA_RND_<ID> say (fmt.h, lib/formats/) */
#define VLA_EACH "native_inst.h"
#include "policy.h"

/* sr, for the mixed policies: binary32 arithmetic, every stored 16-bit result rounded
 * stochastically (models only: the public primitives are the round-to-nearest policies), by
 * each format's SR_RND_<ID> (fmt.h, from lib/formats/<tok>.h). There is no stochastic rounding
 * into binary32 or binary64: only their own containers take them. */
#pragma push_macro("PRIMS")
#undef PRIMS
#define PRIMS 0
#define VLA_EACH "native_inst.h"
#define VLA_EACH_RND SR_RND_
#define VLA_EACH_IF POL_MIXED
#define VLA_EACH_SFX TAG(VLA_JOIN(POL, sr))
#include "policy.h"
#pragma pop_macro("PRIMS")

/* the dispatch, made from the list: a row the loops above did not take is an undeclared name */
int NATIVE_CREATE(const vla_config *cfg, vla_model **out)
{
    if (cfg->track == VLA_TRACK_SR) {
        switch (cfg->prec) {
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern)                                              \
    VLA_IF(mixed, case VLA_##ID : return (VLA_CAT(create, TAG(sfx##sr)))(cfg, out);)
            VLA_PRECS(VLA_X_)
#undef VLA_X_
        default: return VLA_ENOTSUP;
        }
    }
    switch (cfg->prec) {
#define VLA_X_(ID, name, sfx, ...)                                                                \
    case VLA_##ID: return (VLA_CAT(create, TAG(sfx)))(cfg, out);
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default: return VLA_EINVAL;
    }
}
#if PRIMS
int vla_backward_new(vla_backward **out, const vla_config *cfg, long T, vla_grad_input in,
                     void *ctx)
{
    int r;
    if (!out || !cfg || !in || T < 1)
        return VLA_EINVAL;
    *out = NULL;
    if ((r = vla_config_check(cfg)) || (r = vla_grad_check(cfg, NULL)))
        return r;
    switch (cfg->prec) {
#define VLA_X_(ID, name, sfx, ...)                                                                \
    case VLA_##ID: return (VLA_CAT(backward, TAG(sfx)))(cfg, T, in, ctx, out);
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default: return VLA_EINVAL;
    }
}

int vla_grad(const vla_config *cfg, long T, vla_grad_input in, void *ctx, const double *c,
             const vla_grads *out)
{
    int r;
    if (!cfg || !in || !c || !out || !out->dq || !out->dk || !out->dv || T < 1 ||
        (vla_grad_has(cfg, VLA_GRAD_LR) && (!out->da) != (!out->db)))
        return VLA_EINVAL;
    vla_backward *b = NULL;
    if (!(r = vla_backward_new(&b, cfg, T, in, ctx)))
        r = vla_backward_whole(b, c, out);
    vla_backward_free(b);
    return r;
}
#endif
#undef TAG
#undef PRIMS
#undef NATIVE_CREATE
#undef NATIVE_EXTRA
#undef NATIVE_MATVEC
#undef NATIVE_MATVEC_T
#undef NATIVE_WHOLE_ROWS
