/* load.c: a step's inputs rounded into a binary32, binary16 or bfloat16 io format and the feature
 * map phi of them, eight (AVX-512) or four (AVX2) at a time, with the bits of the scalar code
 * (arith_native.h's LOAD_IN and LOAD_PHI): dst[i] = round(x[i]), and round(phi(round(x[i])))
 * with phi(v) = v + 1 for v > 0, the C library's binary64 exp(v) for v <= 0, round the io
 * format's rounding of a binary64 number.
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
 * The lanes are load_lanes.h's, one width chosen by vla_simd_width (VLA_SIMD=avx2 or off); with
 * neither AVX2 nor AVX-512 the scalar code does it all.
 *
 * The same lanes run the plain binary64 loops of the inputs (the streams' W k and divisions, the
 * input check), each number's operations in the scalar loop's order: the same bits at every
 * width. (They were target_clones of 64-byte vector code, whose AVX2 clone went through the
 * stack for every operation: W k took a third of an experiment's time on an AVX2 machine.) */
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
#define LOAD_SIMD 1

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
#pragma GCC target("avx2")
#define VW 4
#include "load_lanes.h"
#undef VW
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f")
#define VW 8
#include "load_lanes.h"
#undef VW
#pragma GCC pop_options

/* the lanes' width for the formats they round (vla_simd_width: VLA_SIMD=avx2 or off chooses),
 * 0 for none */
static int lanes_for(vla_fmt f, grid *g)
{
    if (f != VLA_FMT_F32 && f != VLA_FMT_F16 && f != VLA_FMT_BF16)
        return 0;
    *g = grids[f];
    int w = vla_simd_width(0);
    return w == 8 || w == 4 ? w : 0;
}
#else
#define LOAD_SIMD 0
#endif

int vla_load_exp_lanes(const double *v, double *y, int n)
{
#if LOAD_SIMD
    grid g;
    int w = lanes_for(VLA_FMT_F32, &g);
    if (w && n % w == 0) {
        (w == 8 ? exp_lanes8 : exp_lanes4)(v, y, n);
        return VLA_OK;
    }
#endif
    return VLA_ENOTSUP;
}

void vla_load_round(vla_fmt f, float *dst, const double *x, int n)
{
    int i = 0;
#if LOAD_SIMD
    grid g;
    int w = lanes_for(f, &g);
    if (w)
        i = (w == 8 ? round_lanes8 : round_lanes4)(f, &g, dst, x, n);
#endif
    round_scalar(f, dst + i, x + i, n - i);
}

void vla_load_round_d(vla_fmt f, double *dst, const double *x, int n)
{
    int i = 0;
#if LOAD_SIMD
    grid g;
    int w = lanes_for(f, &g);
    if (w)
        i = (w == 8 ? round_lanes_d8 : round_lanes_d4)(f, &g, dst, x, n);
#endif
    for (; i < n; i++)
        dst[i] = vla_round_in(f, x[i]);
}

void vla_load_phi(vla_fmt f, float *dst, const double *x, int n)
{
    int i = 0;
#if LOAD_SIMD
    grid g;
    int w = lanes_for(f, &g);
    if (w)
        i = (w == 8 ? phi_lanes8 : phi_lanes4)(f, &g, dst, x, n);
#endif
    phi_scalar(f, dst + i, x + i, n - i);
}

/* ---- the plain binary64 loops (W k, divisions, finiteness) ---- */

void vla_matvec_cols(const double *M, const double *x, int n, long m, double *y)
{
    int i = 0;
#if LOAD_SIMD
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
#if LOAD_SIMD
    int w = vla_simd_width(0);
    i = w == 8 ? div_all8(x, n, c) : w == 4 ? div_all4(x, n, c) : 0;
#endif
    for (; i < n; i++)
        x[i] /= c;
}

int vla_finite_all(const double *x, int n)
{
#if LOAD_SIMD
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
