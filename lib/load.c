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
 * neither AVX2 nor AVX-512 the scalar code does it all. */
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
typedef double VD4 __attribute__((vector_size(32)));
typedef int64_t VI4 __attribute__((vector_size(32)));
typedef uint64_t VU4 __attribute__((vector_size(32))); /* bit fields: wrapping, defined shifts */
typedef float VF4 __attribute__((vector_size(16)));
typedef int32_t VI32x4 __attribute__((vector_size(16)));
#define VD VD4
#define VI VI4
#define VU VU4
#define VF VF4
#define VI32 VI32x4
#include "load_lanes.h"
#undef VW
#undef VD
#undef VI
#undef VU
#undef VF
#undef VI32
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f")
#define VW 8
typedef double VD8 __attribute__((vector_size(64)));
typedef int64_t VI8 __attribute__((vector_size(64)));
typedef uint64_t VU8 __attribute__((vector_size(64)));
typedef float VF8 __attribute__((vector_size(32)));
typedef int32_t VI32x8 __attribute__((vector_size(32)));
#define VD VD8
#define VI VI8
#define VU VU8
#define VF VF8
#define VI32 VI32x8
#include "load_lanes.h"
#undef VW
#undef VD
#undef VI
#undef VU
#undef VF
#undef VI32
#pragma GCC pop_options

/* the width of the lanes (vla_simd_width: VLA_SIMD=avx2 or off chooses) for the formats they
 * round, 0 for none */
static int lanes_for(vla_fmt f, grid *g)
{
    if (f != VLA_FMT_F32 && f != VLA_FMT_F16 && f != VLA_FMT_BF16)
        return 0;
    *g = grids[f];
    int w = vla_simd_width(0);
    return w == 8 || w == 4 ? w : 0;
}

int vla_load_exp_lanes(const double *v, double *y, int n)
{
    grid g;
    int w = lanes_for(VLA_FMT_F32, &g);
    if (!w || n % w)
        return VLA_ENOTSUP;
    (w == 8 ? exp_lanes8 : exp_lanes4)(v, y, n);
    return VLA_OK;
}

void vla_load_round(vla_fmt f, float *dst, const double *x, int n)
{
    grid g;
    int w = lanes_for(f, &g), i = 0;
    if (w)
        i = (w == 8 ? round_lanes8 : round_lanes4)(f, &g, dst, x, n);
    round_scalar(f, dst + i, x + i, n - i);
}

void vla_load_round_d(vla_fmt f, double *dst, const double *x, int n)
{
    grid g;
    int w = lanes_for(f, &g), i = 0;
    if (w)
        i = (w == 8 ? round_lanes_d8 : round_lanes_d4)(f, &g, dst, x, n);
    for (; i < n; i++)
        dst[i] = vla_round_in(f, x[i]);
}

void vla_load_phi(vla_fmt f, float *dst, const double *x, int n)
{
    grid g;
    int w = lanes_for(f, &g), i = 0;
    if (w)
        i = (w == 8 ? phi_lanes8 : phi_lanes4)(f, &g, dst, x, n);
    phi_scalar(f, dst + i, x + i, n - i);
}
#else
int vla_load_exp_lanes(const double *v, double *y, int n) { return VLA_ENOTSUP; }
void vla_load_round(vla_fmt f, float *dst, const double *x, int n) { round_scalar(f, dst, x, n); }
void vla_load_round_d(vla_fmt f, double *dst, const double *x, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = vla_round_in(f, x[i]);
}
void vla_load_phi(vla_fmt f, float *dst, const double *x, int n) { phi_scalar(f, dst, x, n); }
#endif
