/* test_phi.c: the feature map of binary32 inputs eight at a time (lib/phi.c) has the scalar code's
 * bits, and the error bound its proof rests on holds: its exp within 2^-50 of MPFR's. */
#include "check.h"
#include "model_impl.h"
#include "vlastab.h"
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the largest relative error of the lanes' exp against MPFR's (256 bits), over v[0..n) */
static double exp_error(const double *v, int n)
{
    static double y[4096];
    if (n > 4096 || vla_phi_exp_lanes(v, y, n))
        return -1;
    mpfr_t e, d;
    mpfr_inits2(256, e, d, (mpfr_ptr)0);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        mpfr_set_d(e, v[i], MPFR_RNDN);
        mpfr_exp(e, e, MPFR_RNDN);
        mpfr_sub_d(d, e, y[i], MPFR_RNDN);
        mpfr_div(d, d, e, MPFR_RNDN);
        double r = fabs(mpfr_get_d(d, MPFR_RNDN));
        worst = r > worst || r != r ? r : worst;
    }
    mpfr_clears(e, d, (mpfr_ptr)0);
    return worst;
}

/* The proof in phi.c needs the lanes' exp within 2^-50 of exp relatively (the margin is 2^-45;
 * the series and the reduction leave a few ulps, about 2^-52): over the whole range, at the
 * reduction's boundaries (v near (n + 1/2) ln2) and at its ends. */
TEST(phi_exp_lanes_error)
{
    enum { N = 4096 };
    static double v[N];
    uint64_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(s >> 11) * 0x1p-53;
        v[i] = i < N / 2 ? -700 * u : -8 * u; /* the range, and where the inputs mostly are */
    }
    const double ln2 = 0.693147180559945309417;
    for (int i = 0; i < 64; i++) { /* reduction boundaries, each side */
        double b = -(i * 15 + 0.5) * ln2;
        v[2 * i] = nextafter(b, 0);
        v[2 * i + 1] = nextafter(b, -1000);
    }
    v[128] = 0, v[129] = -0.0, v[130] = -700, v[131] = -0x1p-60, v[132] = -DBL_MIN;
    double worst = exp_error(v, N);
    if (worst < 0) {
        vla_test_skip("no AVX-512 (AVX512F and VL) here: the scalar code is used");
        return;
    }
    if (getenv("VLA_TEST_VERBOSE"))
        printf("phi.c exp: largest relative error %.3g (2^%.2f)\n", worst, log2(worst));
    CHECK_MSG(worst <= 0x1p-50, "the lanes' exp is %.3g (2^%.2f) from MPFR's", worst, log2(worst));
}

static int same_float(float a, float b) { return !memcmp(&a, &b, sizeof a); }

/* vla_phi_f32 equals the scalar (float)phi((double)(float)x) on gaussians of several scales, on
 * the edges (0, -0, the range's end -700 and past it, infinities, NaN, overflow to binary32
 * infinity) and on hard cases: binary32 v whose exp lies so near a rounding boundary that
 * exp(v) (1 - 2^-45) and exp(v) (1 + 2^-45) round apart, where the lanes must take the scalar
 * code; they are found by drawing binary32 numbers in [-2^9, -2^-10] (about one in 10^4 is hard,
 * most of them small: exp(v) = 1 + v + ...) */
TEST(phi_f32_bits)
{
    enum { N = 8192, HARD = 24 };
    static double x[N];
    static float got[N];
    uint64_t s = 777;
    int n = 0;
    for (; n < N - HARD - 16; n++) {
        double u1, u2;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        u1 = ((double)(s >> 11) + 1) * 0x1p-53;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        u2 = (double)(s >> 11) * 0x1p-53;
        x[n] = (n % 3 == 0 ? 1 : n % 3 == 1 ? 3 : 30) * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    }
    const double edge[] = {0, -0.0, -700, -700.0001, -745, -1e300, -INFINITY, INFINITY, NAN, 1e39,
                           -1e39, 3e38, 1e-45, -1e-45, FLT_MIN, -FLT_MIN};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        x[n++] = edge[i];
    int hard = 0;
    for (long i = 0; i < 60000000L && hard < HARD; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t b = 0x80000000u | (uint32_t)(117 + (s >> 32) % 19) << 23 | ((uint32_t)(s >> 9) & 0x7fffff);
        float v;
        memcpy(&v, &b, sizeof v);
        double y = exp((double)v);
        if ((float)(y * (1 - 0x1p-45)) != (float)(y * (1 + 0x1p-45)))
            x[n + hard++] = v;
    }
    CHECK_MSG(hard == HARD, "found %d hard cases of %d", hard, HARD);
    n += hard;
    vla_phi_f32(got, x, n);
    long bad = 0;
    for (int i = 0; i < n; i++) {
        float want = (float)vla_phi_d((double)(float)x[i]);
        if (!same_float(got[i], want)) {
            if (!bad)
                CHECK_MSG(0, "x = %a: %a, the scalar code %a", x[i], (double)got[i], (double)want);
            bad++;
        }
    }
    CHECK_MSG(bad == 0, "%ld of %d differ", bad, n);
}
