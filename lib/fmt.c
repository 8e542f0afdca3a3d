/* fmt.c: names of formats and precision policies, bit patterns of binary16 and bfloat16, and the
 * one correctly rounded conversion from binary64 into each format (inputs and constants). */
#include "fmt.h"
#include "vlastab.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const prec_names[VLA_NPREC] = {"f64", "f32", "f16", "bf16", "f16-f32", "bf16-f32"};
static const char *const fmt_names[VLA_NFMT] = {"f64", "f32", "f16", "bf16"};

const char *vla_prec_name(vla_prec p) { return (unsigned)p < VLA_NPREC ? prec_names[p] : "?"; }
const char *vla_fmt_name(vla_fmt f) { return (unsigned)f < VLA_NFMT ? fmt_names[f] : "?"; }

int vla_prec_parse(const char *name, vla_prec *out)
{
    for (int i = 0; i < VLA_NPREC; i++)
        if (name && !strcmp(name, prec_names[i])) {
            *out = (vla_prec)i;
            return VLA_OK;
        }
    return VLA_EINVAL;
}

vla_fmt vla_prec_storage(vla_prec p)
{
    static const vla_fmt s[VLA_NPREC] = {VLA_FMT_F64, VLA_FMT_F32, VLA_FMT_F16, VLA_FMT_BF16,
                                         VLA_FMT_F16, VLA_FMT_BF16};
    return s[p];
}

vla_fmt vla_prec_compute(vla_prec p)
{
    static const vla_fmt c[VLA_NPREC] = {VLA_FMT_F64, VLA_FMT_F32, VLA_FMT_F16, VLA_FMT_BF16,
                                         VLA_FMT_F32, VLA_FMT_F32};
    return c[p];
}

double vla_fmt_unit_roundoff(vla_fmt f)
{
    static const int p[VLA_NFMT] = {53, 24, 11, 8};
    return ldexp(1.0, -p[f]);
}

double vla_fmt_min_normal(vla_fmt f)
{
    static const int e[VLA_NFMT] = {-1022, -126, -14, -126};
    return ldexp(1.0, e[f]);
}

float vla_round_f16(float x) { return vla_rnd_f16(x); }
float vla_round_bf16(float x) { return vla_rnd_bf16(x); }

uint16_t vla_f16_bits(float x)
{
    uint32_t u = vla_f2u(vla_rnd_f16(x)), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x7f800000u)
        return (uint16_t)(s | 0x7c00u);
    if (a < 0x38800000u) /* subnormal: an exact multiple of 2^-24 */
        return (uint16_t)(s | (uint32_t)(vla_u2f(a) * 16777216.0f));
    return (uint16_t)(s | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu));
}

float vla_f16_value(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f)
        return vla_u2f(s | 0x7f800000u | (m << 13));
    if (e == 0)
        return vla_u2f(s) + (s ? -1.0f : 1.0f) * (float)m * 0x1p-24f; /* exact */
    return vla_u2f(s | ((e + 112u) << 23) | (m << 13));
}

uint16_t vla_bf16_bits(float x) { return (uint16_t)(vla_f2u(vla_rnd_bf16(x)) >> 16); }
float vla_bf16_value(uint16_t b) { return vla_u2f((uint32_t)b << 16); }

/* binary64 -> binary32 is correctly rounded by the hardware; 16-bit formats from binary64 must not
 * go through binary32 (double rounding: 53 -> 24 -> 11 can differ from 53 -> 11), so first round
 * to 11 or 8 significant bits in binary64 where the 16-bit grid is still finer than binary64's,
 * which makes the later binary32 step exact. */
static double round_sig(double x, int p, int emin_normal)
{
    uint64_t u, c;
    memcpy(&u, &x, sizeof u);
    int be = (int)(u >> 52 & 0x7ff), e = be ? be - 1023 : -1022; /* |x| in [2^e, 2^(e+1)) */
    if (be == 0x7ff || (u << 1) == 0 || e > 512) /* NaN, Inf, +-0; far beyond both formats: */
        return x;                                  /* the caller makes it Inf */
    int q = (e < emin_normal ? emin_normal : e) - (p - 1); /* exponent of the last bit */
    /* C = 2^(q + 52): in [C, 2C) the doubles are the multiples of 2^q, so fl(|x| + C) is |x|
     * rounded to a multiple of 2^q, ties to even (C/2^q is even), and subtracting C is exact */
    c = (uint64_t)(q + 52 + 1023) << 52;
    double C;
    memcpy(&C, &c, sizeof C);
    return copysign((fabs(x) + C) - C, x);
}

double vla_round_fmt(vla_fmt f, double x)
{
    switch (f) {
    case VLA_FMT_F64:
        return x;
    case VLA_FMT_F32:
        return (double)(float)x;
    case VLA_FMT_F16:
        x = round_sig(x, 11, -14);
        return fabs(x) >= 65520.0 ? copysign(INFINITY, x) : x; /* 65520 itself rounded up */
    case VLA_FMT_BF16:
        x = round_sig(x, 8, -126);
        return fabs(x) > 0x1.fep127 ? copysign(INFINITY, x) : x;
    default:
        return NAN;
    }
}
