/* model_simd.c: the strict native instantiations once more, compiled for AVX-512, with the two
 * matrix-vector products of recur.h replaced by vectorized twins that compute the same sums in the
 * same order: each row's dot still left to right, 16 (f64: 8) rows at a time in the lanes of a
 * register. The rest of the text (rank-1 updates, elementwise loops) vectorizes as it is: every
 * operation there is elementwise and order-free. Without contraction (-ffp-contract=off, and no
 * fma in the code) a vector add or multiply is the scalar one in each lane, so the results are
 * lib's strict bits; tests/test_conform.c checks them against the MPFR emulation. model.c
 * chooses this on a processor with AVX-512 (vla_native_create_simd, else VLA_ENOTSUP). */
#include "model_impl.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(VLA_NO_SIMD)
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#pragma GCC optimize("tree-vectorize")
#include <immintrin.h>

/* in-register transpose of a 16 x 16 tile of floats: r[i] holds row i on entry, column i on exit */
static inline __attribute__((always_inline)) void tr16(__m512 r[16])
{
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 4) {
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 2]);
        __m512d c = _mm512_castps_pd(t[i + 1]), e = _mm512_castps_pd(t[i + 3]);
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, e));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, e));
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
        r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
        r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
    }
}

/* 8 x 8 tile of doubles, likewise */
static inline __attribute__((always_inline)) void tr8(__m512d r[8])
{
    __m512d t[8];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0x88);
        r[i + 1] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0x88);
        r[i + 2] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0xdd);
        r[i + 3] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0xdd);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 2; i++) {
        __m512d a = r[i], b = r[i + 4], c = r[i + 2], e = r[i + 6];
        r[i] = _mm512_shuffle_f64x2(a, b, 0x88);
        r[i + 4] = _mm512_shuffle_f64x2(a, b, 0xdd);
        r[i + 2] = _mm512_shuffle_f64x2(c, e, 0x88);
        r[i + 6] = _mm512_shuffle_f64x2(c, e, 0xdd);
    }
}

/* y = M x, M m x n row-major: rows i0..i0+15 in the lanes; the tile's columns come from
 * transposing 16 x 16 blocks (the last ones masked). acc starts as the first product, as dot
 * does. Full tiles take a path with constant trip counts, so that r[] stays in registers. */
static int mv_f32(float *y, const float *M, const float *x, int m, int n)
{
    for (int i0 = 0; i0 < m; i0 += 16) {
        int rows = m - i0 < 16 ? m - i0 : 16;
        __m512 acc = _mm512_setzero_ps();
        for (int j0 = 0; j0 < n; j0 += 16) {
            int cols = n - j0 < 16 ? n - j0 : 16;
            __m512 r[16];
            if (rows == 16 && cols == 16) {
#pragma GCC unroll 16
                for (int i = 0; i < 16; i++)
                    r[i] = _mm512_loadu_ps(M + (size_t)(i0 + i) * n + j0);
                tr16(r);
                if (j0 == 0) {
                    acc = _mm512_mul_ps(r[0], _mm512_set1_ps(x[0]));
#pragma GCC unroll 16
                    for (int c = 1; c < 16; c++)
                        acc = _mm512_add_ps(acc, _mm512_mul_ps(r[c], _mm512_set1_ps(x[c])));
                } else {
#pragma GCC unroll 16
                    for (int c = 0; c < 16; c++)
                        acc = _mm512_add_ps(acc, _mm512_mul_ps(r[c], _mm512_set1_ps(x[j0 + c])));
                }
                continue;
            }
            __mmask16 cm = (__mmask16)((1u << cols) - 1);
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                r[i] = i < rows ? _mm512_maskz_loadu_ps(cm, M + (size_t)(i0 + i) * n + j0)
                                : _mm512_setzero_ps();
            tr16(r);
            for (int c = 0; c < cols; c++) {
                __m512 p = _mm512_mul_ps(r[c], _mm512_set1_ps(x[j0 + c]));
                acc = j0 + c ? _mm512_add_ps(acc, p) : p;
            }
        }
        _mm512_mask_storeu_ps(y + i0, (__mmask16)((1u << rows) - 1), acc);
    }
    return 1;
}

static int mv_f64(double *y, const double *M, const double *x, int m, int n)
{
    for (int i0 = 0; i0 < m; i0 += 8) {
        int rows = m - i0 < 8 ? m - i0 : 8;
        __m512d acc = _mm512_setzero_pd();
        for (int j0 = 0; j0 < n; j0 += 8) {
            int cols = n - j0 < 8 ? n - j0 : 8;
            __m512d r[8];
            if (rows == 8 && cols == 8) {
#pragma GCC unroll 16
                for (int i = 0; i < 8; i++)
                    r[i] = _mm512_loadu_pd(M + (size_t)(i0 + i) * n + j0);
                tr8(r);
                if (j0 == 0) {
                    acc = _mm512_mul_pd(r[0], _mm512_set1_pd(x[0]));
#pragma GCC unroll 8
                    for (int c = 1; c < 8; c++)
                        acc = _mm512_add_pd(acc, _mm512_mul_pd(r[c], _mm512_set1_pd(x[c])));
                } else {
#pragma GCC unroll 8
                    for (int c = 0; c < 8; c++)
                        acc = _mm512_add_pd(acc, _mm512_mul_pd(r[c], _mm512_set1_pd(x[j0 + c])));
                }
                continue;
            }
            __mmask8 cm = (__mmask8)((1u << cols) - 1);
#pragma GCC unroll 16
            for (int i = 0; i < 8; i++)
                r[i] = i < rows ? _mm512_maskz_loadu_pd(cm, M + (size_t)(i0 + i) * n + j0)
                                : _mm512_setzero_pd();
            tr8(r);
            for (int c = 0; c < cols; c++) {
                __m512d p = _mm512_mul_pd(r[c], _mm512_set1_pd(x[j0 + c]));
                acc = j0 + c ? _mm512_add_pd(acc, p) : p;
            }
        }
        _mm512_mask_storeu_pd(y + i0, (__mmask8)((1u << rows) - 1), acc);
    }
    return 1;
}

/* y = M^T x, M n x m: y_i = sum_j M_ji x_j, j ascending, down the columns: lanes are consecutive
 * i, each column a contiguous load. Two blocks of lanes at a time hide the adds' latency. */
static int mvt_f32(float *y, const float *M, const float *x, int m, int n)
{
    int i0 = 0;
    for (; i0 + 32 <= m; i0 += 32) {
        __m512 x0 = _mm512_set1_ps(x[0]);
        __m512 a = _mm512_mul_ps(_mm512_loadu_ps(M + i0), x0);
        __m512 b = _mm512_mul_ps(_mm512_loadu_ps(M + i0 + 16), x0);
        for (int j = 1; j < n; j++) {
            __m512 xj = _mm512_set1_ps(x[j]);
            const float *row = M + (size_t)j * m + i0;
            a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_loadu_ps(row), xj));
            b = _mm512_add_ps(b, _mm512_mul_ps(_mm512_loadu_ps(row + 16), xj));
        }
        _mm512_storeu_ps(y + i0, a);
        _mm512_storeu_ps(y + i0 + 16, b);
    }
    for (; i0 < m; i0 += 16) {
        __mmask16 k = (__mmask16)((1u << (m - i0 < 16 ? m - i0 : 16)) - 1);
        __m512 a = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, M + i0), _mm512_set1_ps(x[0]));
        for (int j = 1; j < n; j++)
            a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, M + (size_t)j * m + i0),
                                               _mm512_set1_ps(x[j])));
        _mm512_mask_storeu_ps(y + i0, k, a);
    }
    return 1;
}

static int mvt_f64(double *y, const double *M, const double *x, int m, int n)
{
    int i0 = 0;
    for (; i0 + 16 <= m; i0 += 16) {
        __m512d x0 = _mm512_set1_pd(x[0]);
        __m512d a = _mm512_mul_pd(_mm512_loadu_pd(M + i0), x0);
        __m512d b = _mm512_mul_pd(_mm512_loadu_pd(M + i0 + 8), x0);
        for (int j = 1; j < n; j++) {
            __m512d xj = _mm512_set1_pd(x[j]);
            const double *row = M + (size_t)j * m + i0;
            a = _mm512_add_pd(a, _mm512_mul_pd(_mm512_loadu_pd(row), xj));
            b = _mm512_add_pd(b, _mm512_mul_pd(_mm512_loadu_pd(row + 8), xj));
        }
        _mm512_storeu_pd(y + i0, a);
        _mm512_storeu_pd(y + i0 + 8, b);
    }
    for (; i0 < m; i0 += 8) {
        __mmask8 k = (__mmask8)((1u << (m - i0 < 8 ? m - i0 : 8)) - 1);
        __m512d a = _mm512_mul_pd(_mm512_maskz_loadu_pd(k, M + i0), _mm512_set1_pd(x[0]));
        for (int j = 1; j < n; j++)
            a = _mm512_add_pd(a, _mm512_mul_pd(_mm512_maskz_loadu_pd(k, M + (size_t)j * m + i0),
                                               _mm512_set1_pd(x[j])));
        _mm512_mask_storeu_pd(y + i0, k, a);
    }
    return 1;
}

/* Only where an operation's result is the plain binary32 or binary64 one (RO is the identity:
 * f32, f64 and the 16-bit-storage policies, whose matrix-vector products store nothing); f16
 * and bf16 round every operation and keep recur.h's loops. */
#define SIMD_OK (FMT_C == VLA_FMT_F32 || FMT_C == VLA_FMT_F64)
#define VLA_MATVEC_HOOK(y, M, x, m, n)                                                             \
    (SIMD_OK && _Generic((y), float *: mv_f32, double *: mv_f64)((y), (M), (x), (m), (n)))
#define VLA_MATVEC_T_HOOK(y, M, x, m, n)                                                           \
    (SIMD_OK && _Generic((y), float *: mvt_f32, double *: mvt_f64)((y), (M), (x), (m), (n)))

#define TAG(x) VLA_CAT(x, simd)
#define PRIMS 0
#define NATIVE_CREATE native_create_simd
static int native_create_simd(const vla_config *cfg, vla_model **out);
#include "native_all.h"

int vla_native_create_simd(const vla_config *cfg, vla_model **out)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512bw"))
        return VLA_ENOTSUP;
    return native_create_simd(cfg, out);
}
#else
int vla_native_create_simd(const vla_config *cfg, vla_model **out)
{
    (void)cfg;
    (void)out;
    return VLA_ENOTSUP;
}
#endif
