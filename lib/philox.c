/* philox.c: the counter-based generator behind every input stream (docs/math.md section 8), so that
 * any input of any step can be regenerated on its own, on the CPU or in a CUDA kernel, bit for bit.
 *
 * The mapping, which a kernel must reproduce exactly:
 *   counter = { (lane >> 1) | D, (uint32)t, (uint32)(t >> 32), head }
 *   key     = { (uint32)seed, (uint32)(seed >> 32) ^ (var * 0x9E3779B9u) }
 * with D = 0 for gaussians and D = 0x80000000 for uniforms (lane >> 1 < 2^31 always), so that
 * the uniform and the gaussian at the same coordinates come from different Philox blocks and are
 * independent. One Philox4x32-10 call gives out[0..3]; a uniform takes the two words
 * (out[2j], out[2j+1]) with j = lane & 1, m = (out[2j] << 21) ^ (out[2j+1] >> 11) (53 bits), and is
 * m * 2^-53, or 2^-54 when m = 0, so it lies strictly inside (0, 1).
 * A gaussian is Box-Muller on the two uniforms u1 (words 0, 1) and u2 (words 2, 3) of its block:
 * r = sqrt(-2 log u1), theta = 2 pi u2; an even lane gets r cos theta, an odd lane r sin theta.
 * log, cos and sin are computed below from +, -, *, / and sqrt only, in a fixed order, because
 * those are correctly rounded everywhere while libm and CUDA's log and sincos differ in the last
 * bit (compile without fma contraction: -ffp-contract=off, nvcc --fmad=false). */
#include "model_impl.h" /* VLA_HORNER */
#include "vlastab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

void vla_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(0xD2511F53u, c0, &hi0);
        uint32_t lo1 = mulhilo(0xCD9E8D57u, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

static void block(uint64_t seed, vla_var var, uint32_t head, uint64_t t, uint32_t ctr0,
                  uint32_t out[4])
{
    uint32_t ctr[4] = {ctr0, (uint32_t)t, (uint32_t)(t >> 32), head};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32) ^ ((uint32_t)var * 0x9E3779B9u)};
    vla_philox4x32_10(ctr, key, out);
}

static double u01(uint32_t hi, uint32_t lo)
{
    uint64_t m = ((uint64_t)hi << 21) ^ (lo >> 11);
    /* 2^53 evenly spaced points cannot all avoid 0 and 1; only m = 0 moves, by half a step */
    return m ? (double)m * 0x1p-53 : 0x1p-54;
}

/* log x for 0 < x < 1 (all u01 can give): x = 2^e m with m in [sqrt(1/2), sqrt(2)), then
 * log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716, a series in s^2 cut where the next
 * term is below 2^-60 of the sum; e log 2 split into an exact high part and a low part. */
static double log01(double x)
{
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m *= 2;
        e--;
    }
    double f = m - 1, s = f / (2 + f), z = s * s;
    double p = 1.0 / 21;
    p = 1.0 / 19 + z * p;
    p = 1.0 / 17 + z * p;
    p = 1.0 / 15 + z * p;
    p = 1.0 / 13 + z * p;
    p = 1.0 / 11 + z * p;
    p = 1.0 / 9 + z * p;
    p = 1.0 / 7 + z * p;
    p = 1.0 / 5 + z * p;
    p = 1.0 / 3 + z * p;
    double logm = 2 * s + 2 * s * (z * p);
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    return e * ln2_hi + (logm + e * ln2_lo);
}

/* cos and sin of 2 pi u for 0 < u < 1: the quadrant comes exactly from 4u, the rest is an angle
 * |x| <= pi/4 where Taylor series to x^17 / x^18 are below 2^-60 of the result. */
static void sincos2pi(double u, double *c, double *s)
{
    double a = 4 * u;
    int q = (int)a;
    double r = a - q;
    if (r > 0.5) {
        r -= 1;
        q++;
    }
    double x = r * 1.57079632679489661923, z = x * x;
    double ps = -1.0 / 355687428096000;
    ps = 1.0 / 1307674368000 + z * ps;
    ps = -1.0 / 6227020800 + z * ps;
    ps = 1.0 / 39916800 + z * ps;
    ps = -1.0 / 362880 + z * ps;
    ps = 1.0 / 5040 + z * ps;
    ps = -1.0 / 120 + z * ps;
    ps = 1.0 / 6 + z * ps;
    double sn = x - x * (z * ps);
    double pc = 1.0 / 6402373705728000;
    pc = -1.0 / 20922789888000 + z * pc;
    pc = 1.0 / 87178291200 + z * pc;
    pc = -1.0 / 479001600 + z * pc;
    pc = 1.0 / 3628800 + z * pc;
    pc = -1.0 / 40320 + z * pc;
    pc = 1.0 / 720 + z * pc;
    pc = -1.0 / 24 + z * pc;
    pc = 1.0 / 2 + z * pc;
    double cs = 1 - z * pc;
    switch (q & 3) {
    case 0: *c = cs; *s = sn; break;
    case 1: *c = -sn; *s = cs; break;
    case 2: *c = -cs; *s = -sn; break;
    default: *c = sn; *s = -cs; break;
    }
}

static void gauss_pair(uint64_t seed, vla_var var, uint32_t head, uint64_t t, uint32_t pair,
                       double g[2])
{
    uint32_t w[4];
    block(seed, var, head, t, pair, w);
    double u1 = u01(w[0], w[1]), u2 = u01(w[2], w[3]);
    vla_box_muller(&u1, &u2, 1, &g[0], &g[1]);
}

double vla_gauss(uint64_t seed, vla_var var, uint32_t head, uint64_t t, uint32_t lane)
{
    double g[2];
    gauss_pair(seed, var, head, t, lane >> 1, g);
    return g[lane & 1];
}

double vla_uniform(uint64_t seed, vla_var var, uint32_t head, uint64_t t, uint32_t lane)
{
    uint32_t w[4];
    block(seed, var, head, t, (lane >> 1) | 0x80000000u, w);
    int j = 2 * (lane & 1);
    return u01(w[j], w[j + 1]);
}

/* ---- several pairs at once: philox_vec.h on the lanes of AVX-512 (8) or AVX2 (4) registers,
 * the widest the processor has; VLA_SIMD=avx2 asks for AVX2, =off for the scalar code (as lib's
 * models, model_simd.c), and vla_simd_width chooses (the tests compare the widths). ---- */
#if defined(__x86_64__) && !defined(VLA_NO_SIMD)
#include <immintrin.h>
#define PHILOX_SIMD 1

#pragma GCC push_options
#pragma GCC target("avx2")
#define VW 4
typedef double VD __attribute__((vector_size(32)));
typedef uint64_t VU __attribute__((vector_size(32)));
typedef int64_t VI __attribute__((vector_size(32)));
#define SQRTV(x) ((VD)_mm256_sqrt_pd((__m256d)(x)))
#define TRUNCV(x) ((VD)_mm256_round_pd((__m256d)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define MULU32(a, b) ((VU)_mm256_mul_epu32((__m256i)(a), (__m256i)(b)))
#define ILO ((VI){0, 4, 1, 5})
#define IHI ((VI){2, 6, 3, 7})
#include "philox_vec.h"
#undef VW
#undef SQRTV
#undef TRUNCV
#undef MULU32
#undef ILO
#undef IHI
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f")
#define VW 8
typedef double VD8 __attribute__((vector_size(64)));
typedef uint64_t VU8 __attribute__((vector_size(64)));
typedef int64_t VI8 __attribute__((vector_size(64)));
#define VD VD8
#define VU VU8
#define VI VI8
#define SQRTV(x) ((VD)_mm512_sqrt_pd((__m512d)(x)))
#define TRUNCV(x) ((VD)_mm512_roundscale_pd((__m512d)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define MULU32(a, b) ((VU)_mm512_mul_epu32((__m512i)(a), (__m512i)(b)))
#define ILO ((VI){0, 8, 1, 9, 2, 10, 3, 11})
#define IHI ((VI){4, 12, 5, 13, 6, 14, 7, 15})
#include "philox_vec.h"
#undef VW
#undef VD
#undef VU
#undef VI
#undef SQRTV
#undef TRUNCV
#undef MULU32
#undef ILO
#undef IHI
#pragma GCC pop_options
#else
#define PHILOX_SIMD 0
#endif

static int g_width; /* 0: not chosen yet */

int vla_simd_width(int want)
{
    int w = __atomic_load_n(&g_width, __ATOMIC_RELAXED);
    if (w && want <= 0)
        return w;
    int most = 1;
#if PHILOX_SIMD
    __builtin_cpu_init();
    most = __builtin_cpu_supports("avx512f") ? 8 : __builtin_cpu_supports("avx2") ? 4 : 1;
#endif
    if (want <= 0) {
        const char *env = getenv("VLA_SIMD");
        want = env && !strcmp(env, "off") ? 1 : env && !strcmp(env, "avx2") ? 4 : 8;
    }
    w = want >= 8 && most >= 8 ? 8 : want >= 4 && most >= 4 ? 4 : 1;
    __atomic_store_n(&g_width, w, __ATOMIC_RELAXED);
    return w;
}

void vla_box_muller(const double *u1, const double *u2, int n, double *g0, double *g1)
{
    int i = 0;
#if PHILOX_SIMD
    int w = n > 1 ? vla_simd_width(0) : 1;
    i = w == 8 ? box_muller8(u1, u2, n, g0, g1) : w == 4 ? box_muller4(u1, u2, n, g0, g1) : 0;
#endif
    for (; i < n; i++) {
        double r = sqrt(-2 * log01(u1[i]));
        sincos2pi(u2[i], &g0[i], &g1[i]);
        g0[i] = r * g0[i];
        g1[i] = r * g1[i];
    }
}

void vla_gauss_fill(double *dst, int n, uint64_t seed, vla_var var, uint32_t head, uint64_t t,
                    double scale)
{
    const uint32_t ctr[4] = {0, (uint32_t)t, (uint32_t)(t >> 32), head};
    const uint32_t key[2] = {(uint32_t)seed,
                             (uint32_t)(seed >> 32) ^ ((uint32_t)var * 0x9E3779B9u)};
    int np = (n + 1) / 2, j = 0;
#if PHILOX_SIMD
    int w = vla_simd_width(0);
    j = w == 8   ? gauss_fill8(dst, n, ctr, key, scale)
        : w == 4 ? gauss_fill4(dst, n, ctr, key, scale)
                 : 0;
#endif
    for (; j < np; j++) { /* the last pairs, fewer than a vector's */
        double g[2];
        gauss_pair(seed, var, head, t, (uint32_t)j, g);
        dst[2 * j] = scale * g[0];
        if (2 * j + 1 < n)
            dst[2 * j + 1] = scale * g[1];
    }
}
