/* philox.c: the counter-based generator behind every input stream (SPEC section 8), so that any
 * input of any step can be regenerated on its own, on the CPU or in a CUDA kernel, bit for bit.
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
#include "vlastab.h"

#include <math.h>

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

/* ---- four gaussians pairs at once: the same operations on four lanes of AVX2 registers, each
 * correctly rounded as the scalar ones are (no fma: the multiplies and adds are separate
 * instructions), so every lane gets gauss_pair's bits; tests/test_stream.c compares the two on
 * every stream and on the uniforms' edges. frexp is read off the exponent field (u01 >= 2^-54 is
 * normal), the quadrant's branches become selects and the negations sign flips. ---- */
#if defined(__x86_64__) && !defined(VLA_NO_SIMD)
#include <immintrin.h>
#define BM4 1

__attribute__((target("avx2"))) static void box_muller4_avx2(const double *u1, const double *u2,
                                                               double *g0, double *g1)
{
#define C(x) _mm256_set1_pd(x)
#define ADD _mm256_add_pd
#define SUB _mm256_sub_pd
#define MUL _mm256_mul_pd
#define SEL(mask, yes, no) _mm256_blendv_pd(no, yes, mask)
#define EQ(a, b) _mm256_cmp_pd(a, b, _CMP_EQ_OQ)
    const __m256d sign = C(-0.0);
    /* log01(u1) */
    __m256d x = _mm256_loadu_pd(u1);
    __m256i bits = _mm256_castpd_si256(x);
    __m256i field = _mm256_srli_epi64(bits, 52); /* x > 0: no sign bit */
    __m256d e = SUB(_mm256_castsi256_pd(_mm256_or_si256(field, _mm256_set1_epi64x(0x4330000000000000))),
                    C(0x1p52 + 1022)); /* the exponent field, exactly, less frexp's bias */
    __m256d m = _mm256_castsi256_pd(_mm256_or_si256(
        _mm256_and_si256(bits, _mm256_set1_epi64x(0x000fffffffffffff)), _mm256_set1_epi64x(0x3fe0000000000000)));
    __m256d low = _mm256_cmp_pd(m, C(0.70710678118654752440), _CMP_LT_OQ);
    m = SEL(low, MUL(m, C(2)), m);
    e = SEL(low, SUB(e, C(1)), e);
    __m256d f = SUB(m, C(1)), sv = _mm256_div_pd(f, ADD(C(2), f)), z = MUL(sv, sv);
    __m256d p = C(1.0 / 21);
    p = ADD(C(1.0 / 19), MUL(z, p));
    p = ADD(C(1.0 / 17), MUL(z, p));
    p = ADD(C(1.0 / 15), MUL(z, p));
    p = ADD(C(1.0 / 13), MUL(z, p));
    p = ADD(C(1.0 / 11), MUL(z, p));
    p = ADD(C(1.0 / 9), MUL(z, p));
    p = ADD(C(1.0 / 7), MUL(z, p));
    p = ADD(C(1.0 / 5), MUL(z, p));
    p = ADD(C(1.0 / 3), MUL(z, p));
    __m256d twos = MUL(C(2), sv);
    __m256d logm = ADD(twos, MUL(twos, MUL(z, p)));
    __m256d lg = ADD(MUL(e, C(6.93147180369123816490e-01)),
                     ADD(logm, MUL(e, C(1.90821492927058770002e-10))));
    __m256d r = _mm256_sqrt_pd(MUL(C(-2), lg));
    /* sincos2pi(u2) */
    __m256d a = MUL(C(4), _mm256_loadu_pd(u2));
    __m256d q = _mm256_round_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256d rr = SUB(a, q);
    __m256d up = _mm256_cmp_pd(rr, C(0.5), _CMP_GT_OQ);
    rr = SEL(up, SUB(rr, C(1)), rr);
    q = SEL(up, ADD(q, C(1)), q);
    q = SEL(EQ(q, C(4)), C(0), q); /* q & 3 */
    __m256d xx = MUL(rr, C(1.57079632679489661923));
    z = MUL(xx, xx);
    __m256d ps = C(-1.0 / 355687428096000);
    ps = ADD(C(1.0 / 1307674368000), MUL(z, ps));
    ps = ADD(C(-1.0 / 6227020800), MUL(z, ps));
    ps = ADD(C(1.0 / 39916800), MUL(z, ps));
    ps = ADD(C(-1.0 / 362880), MUL(z, ps));
    ps = ADD(C(1.0 / 5040), MUL(z, ps));
    ps = ADD(C(-1.0 / 120), MUL(z, ps));
    ps = ADD(C(1.0 / 6), MUL(z, ps));
    __m256d sn = SUB(xx, MUL(xx, MUL(z, ps)));
    __m256d pc = C(1.0 / 6402373705728000);
    pc = ADD(C(-1.0 / 20922789888000), MUL(z, pc));
    pc = ADD(C(1.0 / 87178291200), MUL(z, pc));
    pc = ADD(C(-1.0 / 479001600), MUL(z, pc));
    pc = ADD(C(1.0 / 3628800), MUL(z, pc));
    pc = ADD(C(-1.0 / 40320), MUL(z, pc));
    pc = ADD(C(1.0 / 720), MUL(z, pc));
    pc = ADD(C(-1.0 / 24), MUL(z, pc));
    pc = ADD(C(1.0 / 2), MUL(z, pc));
    __m256d cs = SUB(C(1), MUL(z, pc));
    /* quadrant 0: (cs, sn), 1: (-sn, cs), 2: (-cs, -sn), 3: (sn, -cs) */
    __m256d odd = _mm256_or_pd(EQ(q, C(1)), EQ(q, C(3)));
    __m256d c = SEL(odd, sn, cs), s = SEL(odd, cs, sn);
    c = _mm256_xor_pd(c, _mm256_and_pd(sign, _mm256_or_pd(EQ(q, C(1)), EQ(q, C(2)))));
    s = _mm256_xor_pd(s, _mm256_and_pd(sign, _mm256_cmp_pd(q, C(2), _CMP_GE_OQ)));
    _mm256_storeu_pd(g0, MUL(r, c));
    _mm256_storeu_pd(g1, MUL(r, s));
#undef C
#undef ADD
#undef SUB
#undef MUL
#undef SEL
#undef EQ
}

/* Philox4x32-10 of four counters that differ in their first word only (ctr0 .. ctr0 + 3), in the
 * four 64-bit lanes of AVX2 registers (each 32 x 32 -> 64-bit product is one lane of
 * _mm256_mul_epu32): out[j] is vla_philox4x32_10's output for ctr0 + j, exactly (integers). */
__attribute__((target("avx2"))) static void philox4_avx2(uint32_t ctr0, const uint32_t ctr[4],
                                                          const uint32_t key[2], uint32_t out[4][4])
{
    const __m256i m0 = _mm256_set1_epi64x(0xD2511F53u), m1 = _mm256_set1_epi64x(0xCD9E8D57u),
                  low = _mm256_set1_epi64x(0xffffffffu);
    __m256i c0 = _mm256_set_epi64x(ctr0 + 3, ctr0 + 2, ctr0 + 1, ctr0);
    __m256i c1 = _mm256_set1_epi64x(ctr[1]), c2 = _mm256_set1_epi64x(ctr[2]),
            c3 = _mm256_set1_epi64x(ctr[3]);
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        __m256i p0 = _mm256_mul_epu32(m0, c0), p1 = _mm256_mul_epu32(m1, c2);
        c0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1), _mm256_set1_epi64x(k0));
        c1 = _mm256_and_si256(p1, low);
        c2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3), _mm256_set1_epi64x(k1));
        c3 = _mm256_and_si256(p0, low);
    }
    uint64_t w[4][4];
    _mm256_storeu_si256((__m256i *)w[0], c0);
    _mm256_storeu_si256((__m256i *)w[1], c1);
    _mm256_storeu_si256((__m256i *)w[2], c2);
    _mm256_storeu_si256((__m256i *)w[3], c3);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
            out[j][i] = (uint32_t)w[i][j];
}

static int bm4_ok(void)
{
    static int ok = -1;
    if (ok < 0)
        ok = __builtin_cpu_supports("avx2");
    return ok;
}
#else
#define BM4 0
#endif

void vla_box_muller(const double *u1, const double *u2, int n, double *g0, double *g1)
{
    int i = 0;
#if BM4
    if (bm4_ok())
        for (; i + 4 <= n; i += 4)
            box_muller4_avx2(u1 + i, u2 + i, g0 + i, g1 + i);
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
    enum { P = 64 }; /* pairs per batch */
    for (int i0 = 0; i0 < n; i0 += 2 * P) {
        double u1[P], u2[P], g0[P], g1[P];
        int np = (n - i0 + 1) / 2 < P ? (n - i0 + 1) / 2 : P;
        int j = 0;
#if BM4
        if (bm4_ok()) {
            const uint32_t ctr[4] = {0, (uint32_t)t, (uint32_t)(t >> 32), head};
            const uint32_t key[2] = {(uint32_t)seed,
                                     (uint32_t)(seed >> 32) ^ ((uint32_t)var * 0x9E3779B9u)};
            for (; j + 4 <= np; j += 4) {
                uint32_t w[4][4];
                philox4_avx2((uint32_t)(i0 / 2 + j), ctr, key, w);
                for (int l = 0; l < 4; l++) {
                    u1[j + l] = u01(w[l][0], w[l][1]);
                    u2[j + l] = u01(w[l][2], w[l][3]);
                }
            }
        }
#endif
        for (; j < np; j++) {
            uint32_t w[4];
            block(seed, var, head, t, (uint32_t)(i0 / 2 + j), w);
            u1[j] = u01(w[0], w[1]);
            u2[j] = u01(w[2], w[3]);
        }
        vla_box_muller(u1, u2, np, g0, g1);
        for (int j = 0; j < np; j++) {
            dst[i0 + 2 * j] = scale * g0[j];
            if (i0 + 2 * j + 1 < n)
                dst[i0 + 2 * j + 1] = scale * g1[j];
        }
    }
}
