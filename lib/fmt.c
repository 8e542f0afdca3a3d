/* fmt.c: names of formats and precision policies, bit patterns of binary16 and bfloat16, and the
 * one correctly rounded conversion from binary64 into each format (inputs and constants). */
#include "fmt.h"
#include "tables.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

#define VLA_X_(ID, name, ...) name,
static const char *const prec_names[VLA_NPREC] = {VLA_PRECS(VLA_X_)};
#undef VLA_X_
#define VLA_X_(ID, tok, ...) #tok,
static const char *const fmt_names[VLA_NFMT] = {VLA_FORMATS(VLA_X_)};
#undef VLA_X_

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

static const struct {
    vla_fmt storage, compute, io;
    int mixed;
} prec_rows[VLA_NPREC] = {
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern) {VLA_FMT_##S, VLA_FMT_##C, VLA_FMT_##IO, mixed},
    VLA_PRECS(VLA_X_)
#undef VLA_X_
};
vla_fmt vla_prec_storage(vla_prec p) { return prec_rows[p].storage; }
vla_fmt vla_prec_compute(vla_prec p) { return prec_rows[p].compute; }
vla_fmt vla_prec_io(vla_prec p) { return prec_rows[p].io; }
int vla_prec_mixed(vla_prec p) { return prec_rows[p].mixed; }

/* u = 2^-p, the smallest normal 2^emin, the largest finite (2 - 2^(1-p)) 2^emax: exact */
static const struct {
    int p, emin;
    double u, min_normal, max;
} fmt_rows[VLA_NFMT] = {
#define VLA_X_(ID, tok, p, emin, emax, T)                                                         \
    {p, emin, VLA_EXP2(-(p)), VLA_EXP2(emin), (2.0 - VLA_EXP2(1 - (p))) * VLA_EXP2(emax)},
    VLA_FORMATS(VLA_X_)
#undef VLA_X_
};
int vla_fmt_precision(vla_fmt f) { return fmt_rows[f].p; }
double vla_fmt_unit_roundoff(vla_fmt f) { return fmt_rows[f].u; }
double vla_fmt_min_normal(vla_fmt f) { return fmt_rows[f].min_normal; }
double vla_fmt_max(vla_fmt f) { return fmt_rows[f].max; }

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

double vla_round_fmt(vla_fmt f, double x)
{
    if ((unsigned)f >= VLA_NFMT)
        return NAN;
    if (f == VLA_FMT_F64)
        return x;
    if (f == VLA_FMT_F32)
        return (double)(float)x;
    return vla_round_narrow(x, fmt_rows[f].p, fmt_rows[f].emin, fmt_rows[f].max);
}

/* ---- decoding's state cache (vlastab.h's vla_cache_value) ---- */

/* each cache format's grid: p significant bits, the smallest normal exponent and the largest finite
 * value (OCP fp8: e4m3 has no Inf, its largest is 1.75 x 2^8; e5m2 is IEEE-like); the integers'
 * largest (p = 0) */
static const struct {
    int p, emin;
    double max;
    int saturates;
} cache_rows[] = {
    [VLA_CACHE_F16] = {11, -14, 65504, 0},
    [VLA_CACHE_BF16] = {8, -126, 0x1.fep127, 0},
    [VLA_CACHE_E4M3] = {4, -6, 448, 1},
    [VLA_CACHE_E5M2] = {3, -14, 57344, 1},
    [VLA_CACHE_INT8] = {0, 0, 127, 1},
    [VLA_CACHE_INT16] = {0, 0, 32767, 1},
};

float vla_cache_scale(vla_cache f, double amax)
{
    return (float)(amax / cache_rows[f].max); /* amax is binary32: one rounding of the quotient */
}

uint32_t vla_cache_word(uint64_t seed, long t, long i)
{
    const uint32_t ctr[4] = {(uint32_t)((uint64_t)i >> 2), (uint32_t)t, (uint32_t)((uint64_t)t >> 32),
                             0x43430000u /* "CC": apart from the inputs' and sr's streams */};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32) ^ 0xA5A5A5A5u};
    uint32_t out[4];
    vla_philox4x32_10(ctr, key, out);
    return out[i & 3];
}

/* x rounded down to a multiple of q (n q), up when floor(frac 2^32) + word >= 2^32; every step
 * exact in binary64 (x has 24 bits, q is a power of two) */
static double sr_floor(double x, double q, uint32_t word)
{
    double m = x / q, n = floor(m);
    return (floor(ldexp(m - n, 32)) + word >= 0x1p32 ? n + 1 : n) * q;
}

float vla_cache_value(vla_cache f, vla_cround r, float y, float scale, uint32_t word)
{
    return vla_cache_value_sat(f, r, y, scale, word, NULL);
}

float vla_cache_value_sat(vla_cache f, vla_cround r, float y, float scale, uint32_t word,
                          int *saturated)
{
    if (saturated)
        *saturated = 0;
    if (scale == 0 || !isfinite(y)) /* a group of zeros; a non-finite value stays one */
        return y * (scale == 0 ? 0.0f : 1.0f);
    const float x = y / scale; /* binary32 */
    const double max = cache_rows[f].max;
    double q, low; /* low: x's grid neighbour nearer 0 under sr, else q */
    if (!cache_rows[f].p) { /* the integers: to nearest (ties to even) or floor(x + word 2^-32) */
        q = r == VLA_CROUND_SR ? sr_floor(x, 1, word) : nearbyint(x);
        low = r == VLA_CROUND_SR ? trunc(x) : q;
    } else if (r == VLA_CROUND_SR) { /* the magnitude on the grid of |x|'s binade */
        int e;
        frexp(fabs(x), &e); /* |x| in [2^(e-1), 2^e) */
        int lead = e - 1 < cache_rows[f].emin ? cache_rows[f].emin : e - 1;
        const double sp = ldexp(1.0, lead - (cache_rows[f].p - 1));
        q = copysign(sr_floor(fabs(x), sp, word), x);
        low = floor(fabs(x) / sp) * sp;
        if (fabs(q) > max)
            q = copysign(INFINITY, x);
    } else
        q = low = vla_round_narrow(x, cache_rows[f].p, cache_rows[f].emin, max);
    if (fabs(q) > max && cache_rows[f].saturates) {
        q = copysign(max, q);
        /* a saturation where the clamp costs more than the rounding may: to nearest, x rounded
         * past the largest; sr, x past the largest's next number too (sr's round up of an x
         * within a spacing above the largest, clamped back, is off by less than a spacing, as sr
         * may be: a scaled group's largest, amax / s, lies there) */
        if (saturated)
            *saturated = fabs(low) > max;
    }
    return (float)(q * scale); /* binary32: q and scale are exact in binary64, one rounding */
}
