/* bf16.h: bfloat16, the format of VLA_FORMATS's row BF16, in each arithmetic (lib/formats/each.h
 * says which part goes where): the top half of binary32 on the same exponent grid, subnormals
 * included. Every rounding takes a binary32 container (lib/fmt.h says why that is exact).
 * tests/test_fmt.c checks the scalar roundings against MPFR, tests/test_cuda.c the lanes' and
 * the device's against the scalar one. */
#if VLA_FMT_PART == VLA_PART_SCALAR
/* Round to nearest even on the low 16 bits is exact for every finite input; a carry out of the
 * significand steps the exponent and reaches Inf exactly when the result overflows. */
static inline float vla_rnd_bf16(float x)
{
    uint32_t u = vla_f2u(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet, never round it to Inf */
        return vla_u2f(u | 0x00400000u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return vla_u2f(u & 0xffff0000u);
}

/* Stochastic rounding of a binary32 value into bfloat16 (the sr way of tracking A): with frac
 * the position of |x| between its two neighbours on the format's grid, the magnitude rounds up
 * when floor(frac * 2^16) + r >= 2^16, r uniform in [0, 2^16): up with probability frac to 16
 * bits (exactly the bits binary32 holds below the 16-bit significand in the normal range).
 * Adding r below the kept bits and truncating does that. */
static inline float vla_sr_bf16(float x, uint32_t r)
{
    uint32_t u = vla_f2u(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return vla_u2f(u | 0x00400000u);
    uint32_t s = u & 0x80000000u, a = u & 0x7fffffffu;
    if (a < 0x7f800000u)
        a = (a + (r & 0xffffu)) & 0xffff0000u; /* a carry into the exponent is the next binade or Inf */
    return vla_u2f(s | a);
}
#define VLA_RND_BF16(x) _Generic((x), float: vla_rnd_bf16)(x)
#define SR_RND_BF16(x) _Generic((x), float: vla_sr_bf16)((x), vla_sr_next((vla_sr_state *)cx_))

#elif VLA_FMT_PART == VLA_PART_AVX512
#define LDBL_BF16 0
/* vla_rnd_bf16, 16 lanes at once: lib's integer rule, NaN kept quiet */
static inline lv16 lrnd_bf16(lv16 x)
{
    __m512i u = _mm512_castps_si512((__m512)x), one = _mm512_set1_epi32(1);
    __mmask16 nan = _mm512_cmp_ps_mask((__m512)x, (__m512)x, _CMP_UNORD_Q);
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                                     _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
    r = _mm512_and_si512(r, _mm512_set1_epi32((int)0xffff0000u));
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(u, _mm512_set1_epi32(0x00400000)));
    return (lv16)_mm512_castsi512_ps(r);
}
#define LRND_BF16(x) lrnd_bf16(x)

#elif VLA_FMT_PART == VLA_PART_AVX2
static inline lv8f lrnd2_bf16(lv8f x)
{
    __m256i u = _mm256_castps_si256((__m256)x), one = _mm256_set1_epi32(1);
    __m256 nan = _mm256_cmp_ps((__m256)x, (__m256)x, _CMP_UNORD_Q);
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                                                     _mm256_and_si256(_mm256_srli_epi32(u, 16), one)));
    r = _mm256_and_si256(r, _mm256_set1_epi32((int)0xffff0000u));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)),
                           _mm256_castps_si256(nan));
    return (lv8f)_mm256_castsi256_ps(r);
}
#define LRND2_BF16(x) lrnd2_bf16(x)

#elif VLA_FMT_PART == VLA_PART_KERNEL
#ifdef __CUDACC__
#include <cuda_bf16.h>
/* The hardware conversion rounds to nearest even with subnormals and overflow to Inf: the same
 * function as vla_rnd_bf16 on every non-NaN float (a NaN keeps NaN, though not necessarily its
 * payload). */
static __device__ __forceinline__ float krnd_bf16(float x)
{
    return __bfloat162float(__float2bfloat16_rn(x));
}
#else
#define krnd_bf16 vla_rnd_bf16
#endif
#endif
