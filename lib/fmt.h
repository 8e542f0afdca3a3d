/* fmt.h: rounding into the four formats, inline for the per-operation hot path. The binary16
 * and bfloat16 roundings take a float holding the exact (or binary32-rounded) result of an
 * operation on values of that format; binary32 has at least 2p+2 bits for both (24 >= 2*11+2,
 * 24 >= 2*8+2), so rounding the binary32 result again is the correctly rounded result for
 * +, -, *, / and sqrt (Figueroa 1995): no double-rounding error. The tests check it against MPFR. */
#ifndef VLA_FMT_H
#define VLA_FMT_H
#include <stdint.h>
#include <math.h>
#include <string.h>

static inline uint32_t vla_f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static inline float vla_u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* bfloat16 is the top half of binary32 on the same exponent grid, subnormals included, so round
 * to nearest even on the low 16 bits is exact for every finite input; a carry out of the
 * significand steps the exponent and reaches Inf exactly when the result overflows. */
static inline float vla_rnd_bf16(float x)
{
    uint32_t u = vla_f2u(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet, never round it to Inf */
        return vla_u2f(u | 0x00400000u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return vla_u2f(u & 0xffff0000u);
}

/* binary16: 11-bit significand, normals from 2^-14, subnormals on the grid 2^-24, max 65504. */
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

/* binary64 -> binary32 is correctly rounded by the hardware; 16-bit formats from binary64 must not
 * go through binary32 (double rounding: 53 -> 24 -> 11 can differ from 53 -> 11), so x is rounded
 * to p significant bits (emin_normal the exponent of the smallest normal; below it the subnormal
 * grid) in binary64, where the 16-bit grid is still finer than binary64's; a rounding up past
 * max, the largest finite number, gives Inf. vla_round_fmt's 16-bit cases; inline, so that input
 * preparation with a constant format costs no call. */
static inline double vla_round_narrow(double x, int p, int emin_normal, double max)
{
    uint64_t u, c;
    memcpy(&u, &x, sizeof u);
    int be = (int)(u >> 52 & 0x7ff), e = be ? be - 1023 : -1022; /* |x| in [2^e, 2^(e+1)) */
    if (be == 0x7ff || (u << 1) == 0 || e > 512) /* NaN, Inf, +-0; far beyond both formats: */
        return fabs(x) > max ? copysign(INFINITY, x) : x; /* Inf */
    int q = (e < emin_normal ? emin_normal : e) - (p - 1); /* exponent of the last bit */
    /* C = 2^(q + 52): in [C, 2C) the doubles are the multiples of 2^q, so fl(|x| + C) is |x|
     * rounded to a multiple of 2^q, ties to even (C/2^q is even), and subtracting C is exact */
    c = (uint64_t)(q + 52 + 1023) << 52;
    double C;
    memcpy(&C, &c, sizeof C);
    x = copysign((fabs(x) + C) - C, x);
    return fabs(x) > max ? copysign(INFINITY, x) : x;
}

/* Stochastic rounding of a binary32 value into bfloat16 or binary16 (the sr way of tracking A):
 * with frac the position of |x| between its two neighbours on the format's grid, the magnitude
 * rounds up when floor(frac * 2^K) + r >= 2^K, r uniform in [0, 2^K): up with probability
 * frac to K bits (K = 16 for bfloat16, 13 for binary16: exactly the bits binary32 holds below the
 * 16-bit significand in the normal range). Adding r below the kept bits and truncating does that. */
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

/* The native arithmetic's rounding to each format of lib/vlalists.h's VLA_FORMATS, by the
 * format's ID (lib/policy.h derives each policy's RO, RS and RI from them): binary64 and
 * binary32 by the C conversion; binary16 and bfloat16 of a binary32 value by the functions above
 * (the correctly rounded result of a binary32 operation on values of that format, as they say).
 * Only a binary32 container takes those: a policy that held a 16-bit format in binary64, where
 * rounding through binary32 would round twice, does not compile. */
#define VLA_RND_F64(x) ((double)(x))
#define VLA_RND_F32(x) ((float)(x))
#define VLA_RND_F16(x) _Generic((x), float: vla_rnd_f16)(x)
#define VLA_RND_BF16(x) _Generic((x), float: vla_rnd_bf16)(x)
#endif
