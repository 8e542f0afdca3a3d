/* kpolicy.h: lib/recur.h instantiated for one precision policy, POL, as kernel code: by nvcc for
 * the GPU (kern.cu), or by the C compiler for the emulation of one block on host threads
 * (emu_block.c, for emu.c), which checks the block decomposition where there is no GPU. The
 * recurrences are recur.h's, unchanged: the arithmetic macros below give each operation the
 * rounding that lib/arith_native.h gives it (karith.h), and VLA_PFOR splits recur.h's independent
 * loops across the threads of a block. The includer defines KSYNC() (a block barrier), KTID and
 * KNT (this thread's index and the block's thread count) before including this file. */
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
#endif
/* each format's rounding, krnd_<tok>, from its file lib/formats/<tok>.h: the device's (the
 * hardware conversions) under nvcc, fmt.h's in the host emulation */
#define VLA_FMT_PART VLA_PART_KERNEL
#include "formats/each.h"
#ifdef __CUDACC__
#define KINLINE static __device__ __forceinline__
#else
#define KINLINE static inline
#endif

/* The policy: POL, a row of vlalists.h's VLA_PRECS named by its suffix, given by the build (the
 * Makefile compiles kern.cu and emu_block.c once per row, -DPOL=f16f32). How it rounds follows
 * from the row's formats: every operation to compute (RO), every store to storage where storage
 * is narrower (RS), inputs and chunk intermediates to io where io is narrower than storage (RI),
 * each by krnd, which rounds to a format by that format's krnd_<tok> (a format without one is an
 * undeclared identifier here). The formats are constants: what is left is the one rounding. */
#ifndef POL
#error "kpolicy.h: compile with -DPOL=<suffix of a row of VLA_PRECS> (see the Makefile)"
#endif
KINLINE VLA_NUM_OF(POL) krnd(vla_fmt f, VLA_NUM_OF(POL) x)
{
#define VLA_X_(ID, tok, ...)                                                                       \
    if (f == VLA_FMT_##ID)                                                                         \
        return (VLA_NUM_OF(POL))krnd_##tok(x);
    VLA_FORMATS(VLA_X_)
#undef VLA_X_
    return x;
}
#define RO(x) krnd(VLA_FMTC_OF(POL), (x))
#define RS(x) (VLA_FMTS_OF(POL) != VLA_FMTC_OF(POL) ? krnd(VLA_FMTS_OF(POL), (x)) : (x))
#define RI(x) (VLA_FMTI_OF(POL) != VLA_FMTS_OF(POL) ? krnd(VLA_FMTI_OF(POL), (x)) : RS(x))
#include "kdriver.h"
