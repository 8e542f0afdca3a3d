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
/* the helpers both instantiations share (input rounding, fmt.h), compiled for any x86-64: a
 * helper compiled for AVX-512 and called from the AVX2 code would fault where there is none */
#include "arith_native.h"
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#pragma GCC optimize("tree-vectorize")

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
#define NATIVE_MATVEC(y, M, x, m, n)                                                               \
    (SIMD_OK && _Generic((y), float *: mv_f32, double *: mv_f64)((y), (M), (x), (m), (n)))
#define NATIVE_MATVEC_T(y, M, x, m, n)                                                             \
    (SIMD_OK && _Generic((y), float *: mvt_f32, double *: mvt_f64)((y), (M), (x), (m), (n)))
/* The rank-1 update of A over whole rows, which the compiler vectorizes, rather than the upper
 * triangle and its mirror (recur.h), whose column writes keep it scalar: except in binary16
 * arithmetic, whose rounding (a branch for the subnormals) leaves even whole rows scalar
 * (objdump: no ymm instruction in its update), so that half the entries is the better deal. */
#define NATIVE_WHOLE_ROWS (FMT_C != VLA_FMT_F16)

#define TAG(x) VLA_CAT(x, simd)
#define PRIMS 0
#define NATIVE_CREATE native_create_simd
static int native_create_simd(const vla_config *cfg, vla_model **out);
#include "native_all.h"
#pragma GCC pop_options

/* ---- AVX2 (no AVX-512): 8 binary32 rows per register (4 binary64), 8 x 8 (4 x 4) tiles; the
 * rows of a last partial block, and the columns of a last partial tile, are finished one row at
 * a time in the same order (recur.h's dot: the first product, then left to right) ---- */
#pragma GCC push_options
#pragma GCC target("avx2")
#pragma GCC optimize("tree-vectorize")
static inline __attribute__((always_inline)) void tr8f(__m256 r[8])
{
    __m256 t[8], u[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}
static inline __attribute__((always_inline)) void tr4d(__m256d r[4])
{
    __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* y = M x (M m x n): W rows at a time over W x W tiles, then each row's remaining columns, and
 * the rows of a partial block alone, all in recur.h's order. One text for both widths. */
#define MV2(name, T, V, W, LOAD, SET1, MUL, ADD, STORE, TR)                                        \
    static int name(T *y, const T *M, const T *x, int m, int n)                                    \
    {                                                                                              \
        int i0 = 0;                                                                                \
        for (; i0 + W <= m; i0 += W) {                                                             \
            V acc = SET1(0);                                                                       \
            int j0 = 0;                                                                            \
            for (; j0 + W <= n; j0 += W) {                                                         \
                V r[W];                                                                            \
                _Pragma("GCC unroll 8") for (int i = 0; i < W; i++) r[i] =                         \
                    LOAD(M + (size_t)(i0 + i) * n + j0);                                           \
                TR(r);                                                                             \
                _Pragma("GCC unroll 8") for (int c = 0; c < W; c++) {                              \
                    V p = MUL(r[c], SET1(x[j0 + c]));                                              \
                    acc = j0 + c ? ADD(acc, p) : p;                                                \
                }                                                                                  \
            }                                                                                      \
            T a[W];                                                                                \
            STORE(a, acc);                                                                         \
            for (int i = 0; i < W; i++) {                                                          \
                const T *row = M + (size_t)(i0 + i) * n;                                           \
                T s = j0 ? a[i] : row[0] * x[0], t;                                                \
                for (int j = j0 ? j0 : 1; j < n; j++) {                                            \
                    t = row[j] * x[j];                                                             \
                    s = s + t;                                                                     \
                }                                                                                  \
                y[i0 + i] = s;                                                                     \
            }                                                                                      \
        }                                                                                          \
        for (; i0 < m; i0++) {                                                                     \
            const T *row = M + (size_t)i0 * n;                                                     \
            T s = row[0] * x[0], t;                                                                \
            for (int j = 1; j < n; j++) {                                                          \
                t = row[j] * x[j];                                                                 \
                s = s + t;                                                                         \
            }                                                                                      \
            y[i0] = s;                                                                             \
        }                                                                                          \
        return 1;                                                                                  \
    }
/* y = M^T x (M n x m): W consecutive i in the lanes, each column a contiguous load, two blocks
 * at a time; the last i alone */
#define MVT2(name, T, V, W, LOAD, SET1, MUL, ADD, STOREU)                                          \
    static int name(T *y, const T *M, const T *x, int m, int n)                                    \
    {                                                                                              \
        int i0 = 0;                                                                                \
        for (; i0 + 2 * W <= m; i0 += 2 * W) {                                                     \
            V a = MUL(LOAD(M + i0), SET1(x[0])), b = MUL(LOAD(M + i0 + W), SET1(x[0]));            \
            for (int j = 1; j < n; j++) {                                                          \
                const T *row = M + (size_t)j * m + i0;                                             \
                a = ADD(a, MUL(LOAD(row), SET1(x[j])));                                            \
                b = ADD(b, MUL(LOAD(row + W), SET1(x[j])));                                        \
            }                                                                                      \
            STOREU(y + i0, a);                                                                     \
            STOREU(y + i0 + W, b);                                                                 \
        }                                                                                          \
        for (; i0 < m; i0++) {                                                                     \
            T s = M[i0] * x[0], t;                                                                 \
            for (int j = 1; j < n; j++) {                                                          \
                t = M[(size_t)j * m + i0] * x[j];                                                  \
                s = s + t;                                                                         \
            }                                                                                      \
            y[i0] = s;                                                                             \
        }                                                                                          \
        return 1;                                                                                  \
    }
MV2(mv2_f32, float, __m256, 8, _mm256_loadu_ps, _mm256_set1_ps, _mm256_mul_ps, _mm256_add_ps,
    _mm256_storeu_ps, tr8f)
MV2(mv2_f64, double, __m256d, 4, _mm256_loadu_pd, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd,
    _mm256_storeu_pd, tr4d)
MVT2(mvt2_f32, float, __m256, 8, _mm256_loadu_ps, _mm256_set1_ps, _mm256_mul_ps, _mm256_add_ps,
     _mm256_storeu_ps)
MVT2(mvt2_f64, double, __m256d, 4, _mm256_loadu_pd, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd,
     _mm256_storeu_pd)

#define NATIVE_MATVEC(y, M, x, m, n)                                                               \
    (SIMD_OK && _Generic((y), float *: mv2_f32, double *: mv2_f64)((y), (M), (x), (m), (n)))
#define NATIVE_MATVEC_T(y, M, x, m, n)                                                             \
    (SIMD_OK && _Generic((y), float *: mvt2_f32, double *: mvt2_f64)((y), (M), (x), (m), (n)))
#define NATIVE_WHOLE_ROWS (FMT_C != VLA_FMT_F16)
#define TAG(x) VLA_CAT(x, simd2)
#define NATIVE_CREATE native_create_simd2
static int native_create_simd2(const vla_config *cfg, vla_model **out);
#include "native_all.h"
#pragma GCC pop_options

/* AVX-512 where the processor has it, else AVX2; VLA_SIMD=avx2 asks for AVX2 (tests), =off for
 * lib's plain loops */
int vla_native_create_simd(const vla_config *cfg, vla_model **out)
{
    __builtin_cpu_init();
    const char *want = getenv("VLA_SIMD");
    int off = want && !strcmp(want, "off"), only2 = want && !strcmp(want, "avx2");
    if (!off && !only2 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw"))
        return native_create_simd(cfg, out);
    if (!off && __builtin_cpu_supports("avx2"))
        return native_create_simd2(cfg, out);
    return VLA_ENOTSUP;
}
#else
int vla_native_create_simd(const vla_config *cfg, vla_model **out)
{
    (void)cfg;
    (void)out;
    return VLA_ENOTSUP;
}
#endif
