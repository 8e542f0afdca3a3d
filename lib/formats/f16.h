/* f16.h: binary16, the format of VLA_FORMATS's row F16, in each arithmetic (lib/formats/each.h
 * says which part goes where): an 11-bit significand, normals from 2^-14, subnormals on the grid
 * 2^-24, max 65504. Every rounding takes a binary32 container (lib/fmt.h says why that is exact):
 * binary16 held in binary64, which rounding through binary32 would round twice, does not
 * compile. tests/test_fmt.c checks the scalar roundings against MPFR, tests/test_cuda.c the
 * lanes' and the device's against the scalar one. */
#if VLA_FMT_PART == VLA_PART_SCALAR
static inline float vla_rnd_f16(float x)
{
    uint32_t u = vla_f2u(x), s = u & 0x80000000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return vla_u2f(u | 0x00400000u);
    if (a < 0x38800000u) { /* |x| < 2^-14: the subnormal grid. In [0.5, 1) binary32 spacing is
                              2^-24, so adding 0.5 rounds |x| to that grid, ties to even. */
        float r = (vla_u2f(a) + 0.5f) - 0.5f; /* IEEE forbids folding this (no -ffast-math
                                                  anywhere), and without volatile it vectorizes */
        return vla_u2f(vla_f2u(r) | s);
    }
    a += 0x0fffu + ((a >> 13) & 1u);
    a &= 0xffffe000u;
    if (a >= 0x47800000u) /* rounded to 2^16 or beyond: overflow */
        a = 0x7f800000u;
    return vla_u2f(a | s);
}

/* Stochastic rounding of a binary32 value into binary16 (the sr way of tracking A): with frac
 * the position of |x| between its two neighbours on the format's grid, the magnitude rounds up
 * when floor(frac * 2^13) + r >= 2^13, r uniform in [0, 2^13): up with probability frac to 13
 * bits (exactly the bits binary32 holds below the 11-bit significand in the normal range).
 * Adding r below the kept bits and truncating does that. */
static inline float vla_sr_f16(float x, uint32_t r)
{
    uint32_t u = vla_f2u(x), s = u & 0x80000000u, a = u & 0x7fffffffu;
    r &= 0x1fffu;
    if (a > 0x7f800000u)
        return vla_u2f(u | 0x00400000u);
    if (a == 0x7f800000u)
        return x;
    if (a < 0x38800000u) { /* the subnormal grid 2^-24: binary32 holds more than 13 bits here */
        float m = vla_u2f(a) * 16777216.0f, n = floorf(m); /* exact */
        uint32_t f = (uint32_t)((m - n) * 8192.0f);          /* frac to 13 bits, truncated */
        if (f + r >= 0x2000u)
            n += 1.0f;
        return vla_u2f(vla_f2u(n * 0x1p-24f) | s);
    }
    a = (a + r) & 0xffffe000u;
    if (a >= 0x47800000u) /* 2^16 and beyond: overflow */
        a = 0x7f800000u;
    return vla_u2f(a | s);
}
#define VLA_RND_F16(x) _Generic((x), float: vla_rnd_f16)(x)
#define SR_RND_F16(x) _Generic((x), float: vla_sr_f16)((x), vla_sr_next((vla_sr_state *)cx_))

#elif VLA_FMT_PART == VLA_PART_AVX512
#define LDBL_F16 0
/* vla_rnd_f16, 16 lanes at once: the conversion instruction rounds to nearest even with
 * subnormals and overflow to Inf */
static inline lv16 lrnd_f16(lv16 x)
{
    return (lv16)_mm512_cvtph_ps(_mm512_cvtps_ph((__m512)x, _MM_FROUND_TO_NEAREST_INT |
                                                                _MM_FROUND_NO_EXC));
}
#define LRND_F16(x) lrnd_f16(x)

#elif VLA_FMT_PART == VLA_PART_AVX2
static inline lv8f lrnd2_f16(lv8f x)
{
    return (lv8f)_mm256_cvtph_ps(_mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT |
                                                                _MM_FROUND_NO_EXC));
}
#define LRND2_F16(x) lrnd2_f16(x)

#elif VLA_FMT_PART == VLA_PART_KERNEL
#ifdef __CUDACC__
#include <cuda_fp16.h>
/* The hardware conversion rounds to nearest even with subnormals and overflow to Inf: the same
 * function as vla_rnd_f16 on every non-NaN float (a NaN keeps NaN, though not necessarily its
 * payload). */
static __device__ __forceinline__ float krnd_f16(float x)
{
    return __half2float(__float2half_rn(x));
}
#else
#define krnd_f16 vla_rnd_f16
#endif
#endif
