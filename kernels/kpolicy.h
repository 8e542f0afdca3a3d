/* kpolicy.h: lib/recur.h instantiated for the precision policies as kernel code: by nvcc for
 * the GPU (vlacuda.cu), or by the C compiler for the emulation of one block on host threads
 * (emu.c), which checks the block decomposition where there is no GPU. The recurrences are
 * recur.h's, unchanged: the arithmetic macros below give each operation the rounding that
 * lib/arith_native.h gives it (karith.h), and VLA_PFOR splits recur.h's independent loops across
 * the threads of a block. The includer defines KSYNC() (a block barrier), KTID and KNT (this
 * thread's index and the block's thread count) before including this file. */
#include "kabi.h"
#include <math.h>
#include <string.h>
#ifdef __cplusplus
extern "C" {
#endif
#include "model_impl.h" /* types recur.h's state holds */
#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
/* Explicitly rounded operations: never contracted into fma and never approximated, whatever
 * nvcc's flags (the build also says --fmad=false). */
static __device__ __forceinline__ float kadd(float a, float b) { return __fadd_rn(a, b); }
static __device__ __forceinline__ double kadd(double a, double b) { return __dadd_rn(a, b); }
static __device__ __forceinline__ float ksub(float a, float b) { return __fsub_rn(a, b); }
static __device__ __forceinline__ double ksub(double a, double b) { return __dsub_rn(a, b); }
static __device__ __forceinline__ float kmul(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ double kmul(double a, double b) { return __dmul_rn(a, b); }
static __device__ __forceinline__ float kdiv(float a, float b) { return __fdiv_rn(a, b); }
static __device__ __forceinline__ double kdiv(double a, double b) { return __ddiv_rn(a, b); }
static __device__ __forceinline__ float ksqrt(float a) { return __fsqrt_rn(a); }
static __device__ __forceinline__ double ksqrt(double a) { return __dsqrt_rn(a); }
/* The hardware conversions round to nearest even with subnormals and overflow to Inf: the
 * same function as lib/fmt.h's vla_rnd_f16 / vla_rnd_bf16 on every non-NaN float (a NaN
 * keeps NaN, though not necessarily its payload). */
static __device__ __forceinline__ float krnd_f16(float x)
{
    return __half2float(__float2half_rn(x));
}
static __device__ __forceinline__ float krnd_bf16(float x)
{
    return __bfloat162float(__float2bfloat16_rn(x));
}
#define KADD(a, b) kadd((a), (b))
#define KSUB(a, b) ksub((a), (b))
#define KMUL(a, b) kmul((a), (b))
#define KDIV(a, b) kdiv((a), (b))
#define KSQRT(a) ksqrt(a)
#else
#include "fmt.h"
/* host C compiled with -ffp-contract=off -fexcess-precision=standard, as lib/ is */
#define KADD(a, b) ((a) + (b))
#define KSUB(a, b) ((a) - (b))
#define KMUL(a, b) ((a) * (b))
#define KDIV(a, b) ((a) / (b))
#define KSQRT(a) _Generic((a), float: sqrtf, double: sqrt)(a)
#define krnd_f16 vla_rnd_f16
#define krnd_bf16 vla_rnd_bf16
#endif

/* the policies of vlalists.h, a block each: its row (POL) and how it rounds (RO: every
 * operation, RS: every store); karith.h derives the rest (kern_<POL> and emu_block_<POL> are
 * what vlacuda.cu's and emu.c's tables, made from the list, look for) */
#define POL f64
#define RO(x) (x)
#define RS(x) (x)
#include "kdriver.h"

#define POL f32
#define RO(x) (x)
#define RS(x) (x)
#include "kdriver.h"

#define POL f16
#define RO(x) krnd_f16(x)
#define RS(x) (x)
#include "kdriver.h"

#define POL bf16
#define RO(x) krnd_bf16(x)
#define RS(x) (x)
#include "kdriver.h"

#define POL f16f32
#define RO(x) (x)
#define RS(x) krnd_f16(x)
#include "kdriver.h"

#define POL bf16f32
#define RO(x) (x)
#define RS(x) krnd_bf16(x)
#include "kdriver.h"

#define POL f16kern
#define RO(x) (x)
#define RS(x) (x)
#define RI(x) krnd_f16(x)
#include "kdriver.h"

#define POL bf16kern
#define RO(x) (x)
#define RS(x) (x)
#define RI(x) krnd_bf16(x)
#include "kdriver.h"
