/* vecd.c: lib's plain binary64 loops over many numbers (the streams' W k and divisions, the
 * inputs' finiteness check) in the widest vector lanes the processor has, as vla_simd_width
 * chooses: 8 (AVX-512), 4 (AVX2) or the scalar loops, every width with the same bits
 * (vecd_body.h). Each width is compiled under its own target with vectors of its own size: one
 * 64-byte vector type cloned for AVX2 (target_clones) spilled every operation to the stack and
 * made W k a third of an experiment's time on an AVX2 machine. */
#include "model_impl.h"
#include "vlastab.h"
#include <string.h>

#if defined(__x86_64__) && !defined(VLA_NO_SIMD)
#define VECD_SIMD 1
#pragma GCC push_options
#pragma GCC target("avx2")
#define VW 4
typedef double VD4 __attribute__((vector_size(32)));
#define VD VD4
#include "vecd_body.h"
#undef VW
#undef VD
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f")
#define VW 8
typedef double VD8 __attribute__((vector_size(64)));
#define VD VD8
#include "vecd_body.h"
#undef VW
#undef VD
#pragma GCC pop_options
#else
#define VECD_SIMD 0
#endif

void vla_matvec_cols(const double *M, const double *x, int n, long m, double *y)
{
    int i = 0;
#if VECD_SIMD
    int w = vla_simd_width(0);
    i = w == 8 ? matvec_cols8(M, x, n, m, y) : w == 4 ? matvec_cols4(M, x, n, m, y) : 0;
#endif
    for (; i < n; i++) {
        double acc = 0;
        for (long j = 0; j < m; j++)
            acc += M[j * n + i] * x[j];
        y[i] = acc;
    }
}

void vla_div_all(double *x, int n, double c)
{
    int i = 0;
#if VECD_SIMD
    int w = vla_simd_width(0);
    i = w == 8 ? div_all8(x, n, c) : w == 4 ? div_all4(x, n, c) : 0;
#endif
    for (; i < n; i++)
        x[i] /= c;
}

int vla_finite_all(const double *x, int n)
{
#if VECD_SIMD
    int w = vla_simd_width(0);
    if (w == 8)
        return finite_all8(x, n);
    if (w == 4)
        return finite_all4(x, n);
#endif
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * 0;
    return s == s;
}
