/* test_load.c: inputs rounded into binary32, binary16 and bfloat16 and their feature map, eight
 * or four at a time (lib/load.c, each width the processor has), have the scalar code's bits
 * (arith_native.h), and the error bound the proof of its exp rests on holds: within 2^-50 of
 * MPFR's. */
#include "arith_native.h"
#include "check.h"
#include "fmt.h"
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
    if (n > 4096 || vla_load_exp_lanes(v, y, n))
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

/* The proof in load.c needs the lanes' exp within 2^-50 of exp relatively (the margin is 2^-45;
 * the series and the reduction leave a few ulps, about 2^-52): over the whole range, at the
 * reduction's boundaries (v near (n + 1/2) ln2) and at its ends. */
TEST(load_exp_lanes_error)
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
    const int was = vla_simd_width(0), widths[] = {8, 4};
    int tested = 0;
    for (int wi = 0; wi < 2; wi++) {
        int w = widths[wi];
        if (vla_simd_width(w) != w)
            continue; /* the processor lacks it */
        double worst = exp_error(v, N);
        CHECK_MSG(worst >= 0, "no lanes' exp at width %d", w);
        if (getenv("VLA_TEST_VERBOSE"))
            printf("load.c exp, %d lanes: largest relative error %.3g (2^%.2f)\n", w, worst,
                   log2(worst));
        CHECK_MSG(worst <= 0x1p-50, "the lanes' exp (%d) is %.3g (2^%.2f) from MPFR's", w, worst,
                  log2(worst));
        tested++;
    }
    vla_simd_width(was);
    if (!tested)
        vla_test_skip("no AVX2 or AVX-512 here: the scalar code is used");
}


static int same_float(float a, float b) { return !memcmp(&a, &b, sizeof a); }

/* got[0..n) against the scalar code in format f: phi (1) or the rounding (0) */
static long differ(vla_fmt f, int phi, const double *x, const float *got, int n)
{
    long bad = 0;
    for (int i = 0; i < n; i++) {
        double r = vla_round_in(f, x[i]);
        float want = (float)(phi ? vla_round_in(f, vla_phi_d(r)) : r);
        if (!same_float(got[i], want)) {
            if (!bad)
                CHECK_MSG(0, "%s %s of %a: %a, the scalar code %a", vla_fmt_name(f),
                          phi ? "phi" : "rounding", x[i], (double)got[i], (double)want);
            bad++;
        }
    }
    return bad;
}

/* vla_load_round_d of x[0..n) in format f against the scalar code */
static long differ_d(vla_fmt f, const double *x, int n)
{
    static double got[4 * 65536 + 4096];
    if (n > (int)(sizeof got / sizeof got[0]))
        return n; /* (every number counted as differing) */
    vla_load_round_d(f, got, x, n);
    long bad = 0;
    for (int i = 0; i < n; i++) {
        double want = vla_round_in(f, x[i]);
        if (memcmp(&got[i], &want, sizeof want)) {
            if (!bad)
                CHECK_MSG(0, "%s rounding in binary64 of %a: %a, the scalar code %a",
                          vla_fmt_name(f), x[i], got[i], want);
            bad++;
        }
    }
    return bad;
}

static uint64_t lcg(uint64_t *s)
{
    return *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
}

/* gaussians of the given scales, then the edges: 0, -0, the end of exp's range -700 and past
 * it, infinities, NaN, overflow of binary32 */
static int fill_common(double *x, uint64_t seed, const double *scales, int ns, int n)
{
    const double edge[] = {0, -0.0, -700, -700.0001, -745, -1e300, -INFINITY, INFINITY, NAN, 1e39,
                           -1e39, 3e38, 1e-45, -1e-45, FLT_MIN, -FLT_MIN, 65504, 65519.99, 65520,
                           -65520, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-26, 0x1p-133, 0x1p-134};
    int m = 0;
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        x[m++] = edge[i];
    for (; m < n; m++) {
        double u1 = ((double)(lcg(&seed) >> 11) + 1) * 0x1p-53;
        double u2 = (double)(lcg(&seed) >> 11) * 0x1p-53;
        x[m] = scales[m % ns] * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    }
    return m;
}

/* binary32: on gaussians of several scales, the edges, and hard cases for phi: binary32 v whose
 * exp lies so near a rounding boundary that exp(v) (1 - 2^-45) and exp(v) (1 + 2^-45) round
 * apart, where the lanes must take the scalar code; they are found by drawing binary32 numbers in
 * [-2^9, -2^-10] (about one in 10^6 is hard, most of them small: exp(v) = 1 + v + ...) */
TEST(load_f32_bits)
{
    enum { N = 8192, HARD = 24 };
    static double x[N];
    static float got[N];
    const double scales[] = {1, 3, 30};
    int n = fill_common(x, 777, scales, 3, N - HARD), hard = 0;
    uint64_t s = 99;
    for (long i = 0; i < 60000000L && hard < HARD; i++) {
        lcg(&s);
        uint32_t b = 0x80000000u | (uint32_t)(117 + (s >> 32) % 19) << 23 |
                     ((uint32_t)(s >> 9) & 0x7fffff);
        float v;
        memcpy(&v, &b, sizeof v);
        double y = exp((double)v);
        if ((float)(y * (1 - 0x1p-45)) != (float)(y * (1 + 0x1p-45)))
            x[n + hard++] = v;
    }
    CHECK_MSG(hard == HARD, "found %d hard cases of %d", hard, HARD);
    n += hard;
    const int was = vla_simd_width(0), widths[] = {8, 4, 1};
    for (int wi = 0; wi < 3; wi++) {
        int w = widths[wi];
        if (vla_simd_width(w) != w)
            continue; /* the processor lacks it */
        vla_load_phi(VLA_FMT_F32, got, x, n);
        CHECK_MSG(differ(VLA_FMT_F32, 1, x, got, n) == 0, "binary32 phi differs at width %d", w);
        vla_load_round(VLA_FMT_F32, got, x, n);
        CHECK_MSG(differ(VLA_FMT_F32, 0, x, got, n) == 0, "binary32 rounding differs at width %d",
                  w);
        CHECK_MSG(differ_d(VLA_FMT_F32, x, n) == 0, "binary32 rounding in binary64 differs at "
                  "width %d", w);
        long bad = 0; /* every length's pairs of blocks, block and scalar tail: the hard cases */
        for (int len = 1; len <= 40; len++) {
            vla_load_phi(VLA_FMT_F32, got, x + n - len, len);
            bad += differ(VLA_FMT_F32, 1, x + n - len, got, len);
        }
        CHECK_MSG(bad == 0, "binary32 phi of the last 1 to 40 numbers: %ld differ at width %d", bad,
                  w);
    }
    vla_simd_width(was);
}

/* binary16 and bfloat16: phi of every number of the format (an input rounds to one of them, so
 * this is every case), the rounding of every number, of every tie between neighbours and of the
 * doubles either side of each tie, and both on gaussians of scales from the subnormals to
 * overflow, and the edges */
TEST(load_16bit_every_value)
{
    enum { N = 4 * 65536 + 4096 };
    static double x[N];
    static float got[N];
    const vla_fmt fs[] = {VLA_FMT_F16, VLA_FMT_BF16};
    for (int k = 0; k < 2; k++) {
        vla_fmt f = fs[k];
        int n = 0;
        for (uint32_t h = 0; h < 65536; h++) {
            uint16_t h1 = (uint16_t)(h + 1);
            double v = f == VLA_FMT_F16 ? vla_f16_value((uint16_t)h) : vla_bf16_value((uint16_t)h);
            double w = f == VLA_FMT_F16 ? vla_f16_value(h1) : vla_bf16_value(h1);
            x[n++] = v;
            if ((h & 0x7fff) < 0x7bff && isfinite(v) && isfinite(w) && h + 1 < 65536) {
                double tie = (v + w) / 2; /* exact in binary64 */
                x[n++] = tie;
                x[n++] = nextafter(tie, 0);
                x[n++] = nextafter(tie, INFINITY);
            }
        }
        const double scales[] = {1, 3, 1e-5, 1e-7, 3e4, 1e38};
        n += fill_common(x + n, 31 + k, scales, 6, N - n);
        const int was = vla_simd_width(0), widths[] = {8, 4, 1};
        for (int wi = 0; wi < 3; wi++) {
            int w = widths[wi];
            if (vla_simd_width(w) != w)
                continue; /* the processor lacks it */
            vla_load_phi(f, got, x, n);
            CHECK_MSG(differ(f, 1, x, got, n) == 0, "%s phi differs at width %d",
                      vla_fmt_name(f), w);
            vla_load_round(f, got, x, n);
            CHECK_MSG(differ(f, 0, x, got, n) == 0, "%s rounding differs at width %d",
                      vla_fmt_name(f), w);
            CHECK_MSG(differ_d(f, x, n) == 0, "%s rounding in binary64 differs at width %d",
                      vla_fmt_name(f), w);
        }
        vla_simd_width(was);
    }
}

/* vla_input_check (lib/model.c, eight numbers at a time) refuses an input with a non-finite
 * number in any position of q, k, v or u, in the vector part and in the tail, and takes large,
 * tiny, signed-zero and subnormal ones */
TEST(input_check_finds_every_nonfinite)
{
    static double q[64], k[64], v[64], u[64];
    const double bad[] = {INFINITY, -INFINITY, NAN};
    const int ds[] = {4, 32, 33};
    long missed = 0, refused = 0;
    for (int di = 0; di < 3; di++) {
        vla_config c;
        vla_config_default(&c, VLA_VLA3, ds[di]);
        for (int i = 0; i < 64; i++)
            q[i] = k[i] = v[i] = u[i] = i % 4 == 0   ? 1e308
                                        : i % 4 == 1 ? -0.0
                                        : i % 4 == 2 ? 4e-320
                                                     : -1e-300;
        vla_input in = {.q = q, .k = k, .v = v, .u = u, .beta = NAN, .decay = NAN};
        refused += vla_input_check(&c, &in) != VLA_OK;
        double *arr[] = {q, k, v, u};
        for (int a = 0; a < 4; a++)
            for (int i = 0; i < ds[di]; i++)
                for (int b = 0; b < 3; b++) {
                    double keep = arr[a][i];
                    arr[a][i] = bad[b];
                    missed += vla_input_check(&c, &in) != VLA_ENONFINITE;
                    arr[a][i] = keep;
                }
    }
    CHECK_MSG(refused == 0, "%ld finite inputs refused", refused);
    CHECK_MSG(missed == 0, "%ld non-finite numbers missed", missed);
}
