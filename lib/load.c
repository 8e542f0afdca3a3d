/* load.c: a step's inputs rounded into a binary32, binary16 or bfloat16 io format and the feature
 * map phi of them, eight at a time, with the bits of the scalar code (arith_native.h's LOAD_IN and
 * LOAD_PHI): dst[i] = round(x[i]), and round(phi(round(x[i]))) with phi(v) = v + 1 for v > 0, the
 * C library's binary64 exp(v) for v <= 0, round the io format's rounding of a binary64 number.
 *
 * The roundings are vla_round_narrow's (fmt.h) on the lanes: add and subtract 2^(q + 52), q the
 * exponent of the format's last bit at x, which rounds |x| to that grid in binary64 (binary32:
 * the hardware's conversion). exp is computed here in the lanes too: v = n ln2 + r with
 * n = round(v / ln2) and ln2 split so that n ln2_hi is exact (Cody-Waite, |r| <= 0.347), e^r by
 * its Taylor series to r^13 / 13! (the next term is below 2^-58), times 2^n set in the exponent
 * field (v >= -700: n >= -1010, so 2^n and the result are normal). That y is within 2^-50 of
 * exp(v) relatively (tests/test_load.c measures it against MPFR), and the library's exp is within
 * an ulp, 2^-52. So both lie strictly between y (1 - 2^-45) and y (1 + 2^-45), each computed with
 * one rounding of 2^-53: where the io format rounds those two the same way, it rounds the
 * library's exp that way too (rounding is monotonic), and that is the lane's result. The lanes
 * where the two round apart (binary32: about one in 2^20, the interval holds a rounding boundary;
 * 16-bit formats: far fewer), and those with v < -700 or not a number, take the scalar code.
 * Without AVX-512 (F and VL), or with VLA_SIMD=off, the scalar code does it all. */
#include "arith_native.h" /* (without POL: vla_round_in only) */
#include "model_impl.h"
#include "vlastab.h"

#include <stdlib.h>
#include <string.h>

static void round_scalar(vla_fmt f, float *dst, const double *x, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = (float)vla_round_in(f, x[i]);
}

static void phi_scalar(vla_fmt f, float *dst, const double *x, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = (float)vla_round_in(f, vla_phi_d(vla_round_in(f, x[i])));
}

#if defined(__x86_64__) && !defined(VLA_NO_SIMD)
#include <immintrin.h>

/* each format's p, emin and largest finite number */
typedef struct {
    int p, emin;
    double max;
} grid;
static const grid grids[VLA_NFMT] = {
#define VLA_X_(ID, tok, p, emin, emax, T) {p, emin, (2.0 - VLA_EXP2(1 - (p))) * VLA_EXP2(emax)},
    VLA_FORMATS(VLA_X_)
#undef VLA_X_
};

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl")
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64))); /* bit fields: wrapping, defined shifts */

static inline v8i sel(v8i m, v8i yes, v8i no) { return (yes & m) | (no & ~m); }

/* vla_round_in(f, x) in each lane, as binary32 (exact: the grid is binary32's or coarser) */
static inline __m256 round8(vla_fmt f, const grid *g, const v8d *x)
{
    if (f == VLA_FMT_F32)
        return _mm512_cvtpd_ps((__m512d)*x);
    const v8i sign = (v8i){} + INT64_MIN, mag = ~sign;
    v8i u = (v8i)*x, be = (v8i)((v8u)u >> 52 & 0x7ff);
    v8i e = sel(be == 0, (v8i){} - 1022, be - 1023); /* |x| in [2^e, 2^(e+1)) */
    e = sel(e < g->emin, (v8i){} + g->emin, sel(e > 512, (v8i){} + 512, e)); /* 512: Inf anyway */
    v8d c = (v8d)((v8u)(e - (g->p - 1) + 52 + 1023) << 52), a = (v8d)(u & mag);
    v8d r = (a + c) - c;
    r = (v8d)sel(r > g->max, (v8i)((v8d){} + INFINITY), (v8i)r);
    return _mm512_cvtpd_ps((__m512d)((v8d)((v8i)r | (u & sign))));
}

/* exp(v) for -700 <= v <= 0 as above (other lanes: anything; the caller does not take them) */
static inline void exp8(const v8d *pv, v8d *y)
{
    v8d v = *pv;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    v8d t = v * 1.44269504088896338700 + 0x1.8p52; /* n + 1.5 2^52: n in the low bits */
    v8d nd = t - 0x1.8p52;
    v8d r = (v - nd * ln2_hi) - nd * ln2_lo;
    v8d p = (v8d){} + 1.0 / 6227020800;
    p = 1.0 / 479001600 + r * p;
    p = 1.0 / 39916800 + r * p;
    p = 1.0 / 3628800 + r * p;
    p = 1.0 / 362880 + r * p;
    p = 1.0 / 40320 + r * p;
    p = 1.0 / 5040 + r * p;
    p = 1.0 / 720 + r * p;
    p = 1.0 / 120 + r * p;
    p = 1.0 / 24 + r * p;
    p = 1.0 / 6 + r * p;
    p = 0.5 + r * p;
    p = 1 + r * p;
    p = 1 + r * p;
    v8u scale = ((v8u)t - (v8u)((v8d){} + 0x1.8p52) + 1023) << 52; /* 2^n (elsewhere: any bits) */
    *y = p * (v8d)scale;
}

static void round_lanes(vla_fmt f, const grid *g, float *dst, const double *x, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        v8d v;
        memcpy(&v, x + i, sizeof v);
        _mm256_storeu_ps(dst + i, round8(f, g, &v));
    }
    round_scalar(f, dst + i, x + i, n - i);
}

static void phi_lanes(vla_fmt f, const grid *g, float *dst, const double *x, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        v8d v, y, w;
        memcpy(&v, x + i, sizeof v);
        v = (v8d)_mm512_cvtps_pd(round8(f, g, &v)); /* the rounded input, exactly */
        exp8(&v, &y);
        w = y * (1 - 0x1p-45);
        __m256 lo = round8(f, g, &w);
        w = y * (1 + 0x1p-45);
        __m256 hi = round8(f, g, &w);
        w = v + 1;
        __m256 up = round8(f, g, &w);
        __mmask8 pos = _mm512_cmp_pd_mask((__m512d)v, _mm512_setzero_pd(), _CMP_GT_OQ);
        __mmask8 in = _mm512_cmp_pd_mask((__m512d)v, _mm512_set1_pd(-700), _CMP_GE_OQ);
        __mmask8 agree = _mm256_cmp_ps_mask(lo, hi, _CMP_EQ_OQ);
        __mmask8 ok = pos | (in & agree);
        _mm256_storeu_ps(dst + i, _mm256_mask_blend_ps(pos, lo, up));
        if (ok != 0xff)
            for (int l = 0; l < 8; l++)
                if (!(ok >> l & 1))
                    phi_scalar(f, dst + i + l, x + i + l, 1);
    }
    phi_scalar(f, dst + i, x + i, n - i);
}
#pragma GCC pop_options

/* the lanes where the processor has them and VLA_SIMD is not off, for the formats they round */
static int lanes_for(vla_fmt f, grid *g)
{
    static int chosen = -1; /* (threads that race here store the same value) */
    int ok = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (ok < 0) {
        const char *env = getenv("VLA_SIMD");
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             !(env && !strcmp(env, "off"));
        __atomic_store_n(&chosen, ok, __ATOMIC_RELAXED);
    }
    if (!ok || (f != VLA_FMT_F32 && f != VLA_FMT_F16 && f != VLA_FMT_BF16))
        return 0;
    *g = grids[f];
    return 1;
}

int vla_load_exp_lanes(const double *v, double *y, int n)
{
    grid g;
    if (!lanes_for(VLA_FMT_F32, &g) || n % 8)
        return VLA_ENOTSUP;
    for (int i = 0; i < n; i += 8) {
        v8d a, b;
        memcpy(&a, v + i, sizeof a);
        exp8(&a, &b);
        memcpy(y + i, &b, sizeof b);
    }
    return VLA_OK;
}

void vla_load_round(vla_fmt f, float *dst, const double *x, int n)
{
    grid g;
    if (lanes_for(f, &g))
        round_lanes(f, &g, dst, x, n);
    else
        round_scalar(f, dst, x, n);
}

void vla_load_phi(vla_fmt f, float *dst, const double *x, int n)
{
    grid g;
    if (lanes_for(f, &g))
        phi_lanes(f, &g, dst, x, n);
    else
        phi_scalar(f, dst, x, n);
}
#else
int vla_load_exp_lanes(const double *v, double *y, int n) { return VLA_ENOTSUP; }
void vla_load_round(vla_fmt f, float *dst, const double *x, int n) { round_scalar(f, dst, x, n); }
void vla_load_phi(vla_fmt f, float *dst, const double *x, int n) { phi_scalar(f, dst, x, n); }
#endif
