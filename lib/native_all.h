/* native_all.h: the native policies of section 5 (the rows of vlalists.h's VLA_PRECS), each an
 * instantiation of recur.h, and the constructor NATIVE_CREATE that picks one. Included by
 * model.c (strict: no fma contraction, the public primitives), model_fast.c (compiled with
 * contraction allowed) and model_simd.c (vectorized), which set TAG(x) (the name of an
 * instantiation), PRIMS, NATIVE_CREATE and optionally NATIVE_EXTRA, NATIVE_MATVEC(_T) and
 * NATIVE_WHOLE_ROWS (arith_native.h); they are undefined at the end. A block per policy: its row
 * (POL) and how its arithmetic rounds (RO: every operation, RS: every store). */

#define POL f64
#define RO(x) (x)
#define RS(x) (x)
#include "native_inst.h"

#define POL f32
#define RO(x) (x)
#define RS(x) (x)
#include "native_inst.h"

/* 16-bit arithmetic: each result of binary32 arithmetic on 16-bit values rounded again (fmt.h
 * says why that is the correctly rounded result) */
#define POL f16
#define RO(x) vla_rnd_f16(x)
#define RS(x) (x)
#include "native_inst.h"

#define POL bf16
#define RO(x) vla_rnd_bf16(x)
#define RS(x) (x)
#include "native_inst.h"

/* 16-bit storage, binary32 arithmetic: rounded to 16 bits only when stored */
#define POL f16f32
#define RO(x) (x)
#define RS(x) vla_rnd_f16(x)
#include "native_inst.h"

#define POL bf16f32
#define RO(x) (x)
#define RS(x) vla_rnd_bf16(x)
#include "native_inst.h"

/* the fast chunked kernels' policies: 16-bit inputs and chunk intermediates, binary32 arithmetic
 * and state */
#define POL f16kern
#define RO(x) (x)
#define RS(x) (x)
#define RI(x) vla_rnd_f16(x)
#include "native_inst.h"

#define POL bf16kern
#define RO(x) (x)
#define RS(x) (x)
#define RI(x) vla_rnd_bf16(x)
#include "native_inst.h"

/* sr, for the mixed policies: binary32 arithmetic, every stored 16-bit result rounded
 * stochastically (models only: the public primitives are the round-to-nearest policies) */
#pragma push_macro("PRIMS")
#undef PRIMS
#define PRIMS 0
#define POL f16f32
#define SFX TAG(f16f32sr)
#define RO(x) (x)
#define RS(x) vla_sr_f16((x), vla_sr_next((vla_sr_state *)cx_))
#include "native_inst.h"

#define POL bf16f32
#define SFX TAG(bf16f32sr)
#define RO(x) (x)
#define RS(x) vla_sr_bf16((x), vla_sr_next((vla_sr_state *)cx_))
#include "native_inst.h"
#pragma pop_macro("PRIMS")

/* the dispatch, made from the list: a policy without its block above is an undeclared name */
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
int vla_grad(const vla_config *cfg, long T, vla_grad_input in, void *ctx, const double *c,
             const vla_grads *out)
{
    int r;
    if (!cfg || !in || !c || !out || !out->dq || !out->dk || !out->dv || T < 1 ||
        (vla_grad_has(cfg, VLA_GRAD_LR) && (!out->da) != (!out->db)))
        return VLA_EINVAL;
    if ((r = vla_config_check(cfg)) || (r = vla_grad_check(cfg, NULL)))
        return r;
    switch (cfg->prec) {
#define VLA_X_(ID, name, sfx, ...)                                                                \
    case VLA_##ID: return (VLA_CAT(grad, TAG(sfx)))(cfg, T, in, ctx, c, out);
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default: return VLA_EINVAL;
    }
}
#endif
#undef TAG
#undef PRIMS
#undef NATIVE_CREATE
#undef NATIVE_EXTRA
#undef NATIVE_MATVEC
#undef NATIVE_MATVEC_T
#undef NATIVE_WHOLE_ROWS
