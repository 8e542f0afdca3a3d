/* model_comp.c: the comp way of tracking A: recur.h instantiated over double-word arithmetic
 * (dw_body.h) of each uniform policy's format, so that A, S and everything computed from them
 * carry about twice the working precision. Always strict: a contracted TwoSum is no TwoSum. */
#include "arith_dw_native.h"

#define VLA_FN static
#define VLA_CAT_(a, b) a##_##b
#define VLA_CAT(a, b) VLA_CAT_(a, b)
#define FN(name) VLA_CAT(name, SFX)


#define BASE double
#define RO(x) (x)
#define FMAN fma
#define SQRTN sqrt
#define FMT_C VLA_FMT_F64
#define FMT_S VLA_FMT_F64
#define SFX f64c
#include "dw_inst.h"

#define BASE float
#define RO(x) (x)
#define FMAN fmaf
#define SQRTN sqrtf
#define FMT_C VLA_FMT_F32
#define FMT_S VLA_FMT_F32
#define SFX f32c
#include "dw_inst.h"

/* 16-bit bases: binary32 results of 16-bit operands rounded again (fmt.h); fmaf then rounding is
 * the correctly rounded fma only where it is exact, which is the one place dw_body.h uses it */
#define BASE float
#define RO(x) vla_rnd_f16(x)
#define FMAN fmaf
#define SQRTN sqrtf
#define FMT_C VLA_FMT_F16
#define FMT_S VLA_FMT_F16
#define SFX f16c
#include "dw_inst.h"

#define BASE float
#define RO(x) vla_rnd_bf16(x)
#define FMAN fmaf
#define SQRTN sqrtf
#define FMT_C VLA_FMT_BF16
#define FMT_S VLA_FMT_BF16
#define SFX bf16c
#include "dw_inst.h"

int vla_native_create_comp(const vla_config *cfg, vla_model **out)
{
    switch (cfg->prec) {
    case VLA_F64: return create_f64c(cfg, out);
    case VLA_F32: return create_f32c(cfg, out);
    case VLA_F16: return create_f16c(cfg, out);
    case VLA_BF16: return create_bf16c(cfg, out);
    default: return VLA_ENOTSUP;
    }
}
