/* kpolicy.h: lib/recur.h instantiated for the six precision policies as kernel code: by nvcc for
 * the GPU (vlacuda.cu), or by the C compiler for the emulation of one block on host threads
 * (emu.c), which checks the block decomposition where there is no GPU. The recurrences are
 * recur.h's, unchanged: the arithmetic macros below give each operation the rounding that
 * lib/arith_native.h gives it, and VLA_PFOR splits recur.h's independent loops across the
 * threads of a block. The includer defines KSYNC() (a block barrier), KTID and KNT (this
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
#define VLA_FN static __device__
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
#define VLA_FN static
/* host C compiled with -ffp-contract=off -fexcess-precision=standard, as lib/ is */
#define KADD(a, b) ((a) + (b))
#define KSUB(a, b) ((a) - (b))
#define KMUL(a, b) ((a) * (b))
#define KDIV(a, b) ((a) / (b))
#define KSQRT(a) _Generic((a), float: sqrtf, double: sqrt)(a)
#define krnd_f16 vla_rnd_f16
#define krnd_bf16 vla_rnd_bf16
#endif

#define VLA_RECUR_DEVICE
/* the context of every recur.h function is the arena's padding shift (kabi.h) */
#define CXP int cx_
#define CX cx_
#define E(a, i) (a)[(i) + ((i) >> cx_)]
#define VLA_ROWP(M, off) ((M) + (off) + ((off) >> cx_))
/* A barrier before (the threads may still read what the loop overwrites) and after (they read
 * what it wrote); the outer for runs once and exists to place the second barrier. */
#define VLA_PFOR(i, lo, hi)                                                                        \
    for (int i##_pf = (KSYNC(), 1); i##_pf; i##_pf = (KSYNC(), 0))                                 \
        for (int i = (lo) + KTID; i < (hi); i += KNT)
#define NREF NUM *
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) NUM x
#define FRAME_BEGIN
#define FRAME_END
#define ADD(r, a, b) ((r) = RO(KADD((a), (b))))
#define SUB(r, a, b) ((r) = RO(KSUB((a), (b))))
#define MUL(r, a, b) ((r) = RO(KMUL((a), (b))))
#define DIV(r, a, b) ((r) = RO(KDIV((a), (b))))
#define SQRT(r, a) ((r) = RO(KSQRT(a)))
#define COPY(r, a) ((r) = (a))
#define SETI(r, i) ((r) = (NUM)(i)) /* small integers: exact in every format */
#define STORE(r) ((r) = RS(r))
#define ISFIN(a) isfinite(a)
#define LESS(a, b) ((a) < (b))
#define ABSLESS(a, b) (fabs((double)(a)) < (double)(b))
#define CMPD(a, c) (((double)(a) > (c)) - ((double)(a) < (c)))
#define TINY KTINY
#define TOD(a) ((double)(a))
#define ARITH_ENTER
#define ARITH_LEAVE

/* the policies of lib/native_all.h: container, per-operation and per-store rounding, and the
 * compute format's smallest normal */
#define NUM double
#define RO(x) (x)
#define RS(x) (x)
#define KTINY 0x1p-1022
#define SFX f64
#include "kdriver.h"

#define NUM float
#define RO(x) (x)
#define RS(x) (x)
#define KTINY 0x1p-126
#define SFX f32
#include "kdriver.h"

#define NUM float
#define RO(x) krnd_f16(x)
#define RS(x) (x)
#define KTINY 0x1p-14
#define SFX f16
#include "kdriver.h"

#define NUM float
#define RO(x) krnd_bf16(x)
#define RS(x) (x)
#define KTINY 0x1p-126
#define SFX bf16
#include "kdriver.h"

#define NUM float
#define RO(x) (x)
#define RS(x) krnd_f16(x)
#define KTINY 0x1p-126
#define SFX f16f32
#include "kdriver.h"

#define NUM float
#define RO(x) (x)
#define RS(x) krnd_bf16(x)
#define KTINY 0x1p-126
#define SFX bf16f32
#include "kdriver.h"
