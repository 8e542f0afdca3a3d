/* phi.c: the feature map of binary32 inputs eight at a time, with the bits of the scalar code,
 * dst[i] = (float)vla_phi_d((double)(float)x[i]): phi(v) = v + 1 for v > 0, and for v <= 0 the
 * C library's binary64 exp(v), rounded to binary32.
 *
 * exp is computed here in the lanes of AVX-512 registers: v = n ln2 + r with n = round(v / ln2)
 * and ln2 split so that n ln2_hi is exact (Cody-Waite, |r| <= 0.347), e^r by its Taylor series
 * to r^13 / 13! (the next term is below 2^-58), times 2^n set in the exponent field (v >= -700:
 * n >= -1010, so 2^n and the result are normal). That y is within 2^-50 of exp(v) relatively
 * (tests/test_phi.c measures it against MPFR), and the library's exp is within an ulp, 2^-52.
 * So both lie strictly between y (1 - 2^-45) and y (1 + 2^-45), each computed with one rounding
 * of 2^-53: where binary32 rounds those two the same way, it rounds the library's exp that way
 * too (rounding is monotonic), and that is the lane's result. The lanes where the two round
 * apart (about one in 2^20: the interval holds a binary32 rounding boundary), and those with
 * v < -700 or not a number, take the scalar code. VLA_SIMD=off takes it everywhere. */
#include "model_impl.h"
#include "vlastab.h"

#include <stdlib.h>
#include <string.h>

static void phi_scalar(float *dst, const double *x, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = (float)vla_phi_d((double)(float)x[i]);
}

#if defined(__x86_64__) && !defined(VLA_NO_SIMD)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl")
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));

/* exp(v) for -700 <= v <= 0 as above (other lanes: anything; the caller does not take them) */
static inline void exp8(const v8d *v, v8d *y)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    v8d t = *v * 1.44269504088896338700 + 0x1.8p52; /* n + 1.5 2^52: n in the low bits */
    v8d nd = t - 0x1.8p52;
    v8d r = (*v - nd * ln2_hi) - nd * ln2_lo;
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
    v8i scale = ((v8i)t - (v8i)((v8d){} + 0x1.8p52) + 1023) << 52; /* 2^n */
    *y = p * (v8d)scale;
}

static void phi8(float *dst, const double *x, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d xv = _mm512_loadu_pd(x + i);
        __m256 xf = _mm512_cvtpd_ps(xv);  /* (float)x */
        v8d v = (v8d)_mm512_cvtps_pd(xf), y; /* (double)(float)x */
        exp8(&v, &y);
        __m256 lo = _mm512_cvtpd_ps((__m512d)(y * (1 - 0x1p-45)));
        __m256 hi = _mm512_cvtpd_ps((__m512d)(y * (1 + 0x1p-45)));
        __m256 up = _mm512_cvtpd_ps((__m512d)(v + 1));
        __mmask8 pos = _mm512_cmp_pd_mask((__m512d)v, _mm512_setzero_pd(), _CMP_GT_OQ);
        __mmask8 in = _mm512_cmp_pd_mask((__m512d)v, _mm512_set1_pd(-700), _CMP_GE_OQ);
        __mmask8 agree = _mm256_cmp_ps_mask(lo, hi, _CMP_EQ_OQ);
        __mmask8 ok = pos | (in & agree);
        _mm256_storeu_ps(dst + i, _mm256_mask_blend_ps(pos, lo, up));
        if (ok != 0xff)
            for (int l = 0; l < 8; l++)
                if (!(ok >> l & 1))
                    phi_scalar(dst + i + l, x + i + l, 1);
    }
    phi_scalar(dst + i, x + i, n - i);
}
#pragma GCC pop_options

static int phi_simd(void)
{
    static int chosen = -1; /* (threads that race here store the same value) */
    int ok = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (ok < 0) {
        const char *env = getenv("VLA_SIMD");
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && !(env && !strcmp(env, "off"));
        __atomic_store_n(&chosen, ok, __ATOMIC_RELAXED);
    }
    return ok;
}

int vla_phi_exp_lanes(const double *v, double *y, int n)
{
    if (!phi_simd() || n % 8)
        return VLA_ENOTSUP;
    for (int i = 0; i < n; i += 8) {
        v8d a, b;
        memcpy(&a, v + i, sizeof a);
        exp8(&a, &b);
        memcpy(y + i, &b, sizeof b);
    }
    return VLA_OK;
}

void vla_phi_f32(float *dst, const double *x, int n)
{
    if (phi_simd())
        phi8(dst, x, n);
    else
        phi_scalar(dst, x, n);
}
#else
int vla_phi_exp_lanes(const double *v, double *y, int n) { return VLA_ENOTSUP; }
void vla_phi_f32(float *dst, const double *x, int n) { phi_scalar(dst, x, n); }
#endif
