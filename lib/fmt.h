/* fmt.h: rounding into the formats of lib/vlalists.h's VLA_FORMATS, inline for the per-operation
 * hot path: the helpers below, then each format's own roundings from its file, lib/formats/
 * <tok>.h. The binary16 and bfloat16 roundings take a float holding the exact (or
 * binary32-rounded) result of an operation on values of that format; binary32 has at least 2p+2
 * bits for both (24 >= 2*11+2, 24 >= 2*8+2), so rounding the binary32 result again is the
 * correctly rounded result for +, -, *, / and sqrt (Figueroa 1995): no double-rounding error.
 * The tests check it against MPFR. */
#ifndef VLA_FMT_H
#define VLA_FMT_H
#include <stdint.h>
#include <math.h>
#include <string.h>
#include "tables.h"

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

/* Each format's roundings, from its file lib/formats/<tok>.h, by the format's ID (lib/policy.h
 * derives each policy's RO, RS and RI from them): VLA_RND_<ID>(x), the native arithmetic's
 * rounding (binary64 and binary32 by the C conversion; binary16 and bfloat16 of a binary32 value
 * by vla_rnd_f16 and vla_rnd_bf16: the correctly rounded result of a binary32 operation on values
 * of that format, as said above), and SR_RND_<ID>(x), the sr way's stochastic rounding (lib/
 * native_all.h; vla_sr_f16, vla_sr_bf16). Only a binary32 container takes the 16-bit ones: a
 * policy that held a 16-bit format in binary64, where rounding through binary32 would round
 * twice, does not compile. */
#define VLA_FMT_PART VLA_PART_SCALAR
#include "formats/each.h"
#endif
