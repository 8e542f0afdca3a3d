/* native_all.h: the six native policies of section 5, each an instantiation of recur.h, and the
 * constructor NATIVE_CREATE that picks one. Included by model.c (strict: no fma contraction,
 * the public primitives) and model_fast.c (compiled with contraction allowed). TAG(x) names an
 * instantiation. */
#include "arith_native.h"

#define NUM double
#define SQRTN sqrt
#define RO(x) (x)
#define RS(x) (x)
#define FMT_C VLA_FMT_F64
#define FMT_S VLA_FMT_F64
#define SFX TAG(f64)
#include "native_inst.h"

#define NUM float
#define SQRTN sqrtf
#define RO(x) (x)
#define RS(x) (x)
#define FMT_C VLA_FMT_F32
#define FMT_S VLA_FMT_F32
#define SFX TAG(f32)
#include "native_inst.h"

/* 16-bit arithmetic: each result of binary32 arithmetic on 16-bit values rounded again (fmt.h
 * says why that is the correctly rounded result) */
#define NUM float
#define SQRTN sqrtf
#define RO(x) vla_rnd_f16(x)
#define RS(x) (x)
#define FMT_C VLA_FMT_F16
#define FMT_S VLA_FMT_F16
#define SFX TAG(f16)
#include "native_inst.h"

#define NUM float
#define SQRTN sqrtf
#define RO(x) vla_rnd_bf16(x)
#define RS(x) (x)
#define FMT_C VLA_FMT_BF16
#define FMT_S VLA_FMT_BF16
#define SFX TAG(bf16)
#include "native_inst.h"

/* 16-bit storage, binary32 arithmetic: rounded to 16 bits only when stored */
#define NUM float
#define SQRTN sqrtf
#define RO(x) (x)
#define RS(x) vla_rnd_f16(x)
#define FMT_C VLA_FMT_F32
#define FMT_S VLA_FMT_F16
#define SFX TAG(f16f32)
#include "native_inst.h"

#define NUM float
#define SQRTN sqrtf
#define RO(x) (x)
#define RS(x) vla_rnd_bf16(x)
#define FMT_C VLA_FMT_F32
#define FMT_S VLA_FMT_BF16
#define SFX TAG(bf16f32)
#include "native_inst.h"

/* sr: binary32 arithmetic, every stored 16-bit result rounded stochastically (models only: the
 * public primitives are the six round-to-nearest policies) */
#pragma push_macro("PRIMS")
#undef PRIMS
#define PRIMS 0
#define NUM float
#define SQRTN sqrtf
#define RO(x) (x)
#define RS(x) vla_sr_f16((x), vla_sr_next((vla_sr_state *)cx_))
#define FMT_C VLA_FMT_F32
#define FMT_S VLA_FMT_F16
#define SFX TAG(f16f32sr)
#include "native_inst.h"

#define NUM float
#define SQRTN sqrtf
#define RO(x) (x)
#define RS(x) vla_sr_bf16((x), vla_sr_next((vla_sr_state *)cx_))
#define FMT_C VLA_FMT_F32
#define FMT_S VLA_FMT_BF16
#define SFX TAG(bf16f32sr)
#include "native_inst.h"
#pragma pop_macro("PRIMS")

int NATIVE_CREATE(const vla_config *cfg, vla_model **out)
{
    if (cfg->track == VLA_TRACK_SR)
        return cfg->prec == VLA_F16_F32 ? VLA_CAT(create, TAG(f16f32sr))(cfg, out)
                                        : VLA_CAT(create, TAG(bf16f32sr))(cfg, out);
    switch (cfg->prec) {
    case VLA_F64: return VLA_CAT(create, TAG(f64))(cfg, out);
    case VLA_F32: return VLA_CAT(create, TAG(f32))(cfg, out);
    case VLA_F16: return VLA_CAT(create, TAG(f16))(cfg, out);
    case VLA_BF16: return VLA_CAT(create, TAG(bf16))(cfg, out);
    case VLA_F16_F32: return VLA_CAT(create, TAG(f16f32))(cfg, out);
    case VLA_BF16_F32: return VLA_CAT(create, TAG(bf16f32))(cfg, out);
    default: return VLA_EINVAL;
    }
}
