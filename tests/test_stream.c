/* test_stream.c: the counter-based generator (known answers, purity, distributions), the input
 * streams of docs/math.md section 8 (their statistics and layouts, bad specs, real and broken
 * traces) and the .npy reader and writer (round trips, float16/32, every kind of malformed
 * file). */
#include "check.h"
#include "model_impl.h"
#include "vlastab.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---- */

/* ../shared, or $VLA_SHARED as `make test` sets it; NULL (and the test skips) when absent */
static const char *shared_dir(void)
{
    const char *d = getenv("VLA_SHARED");
    if (!d)
        d = "../shared";
    struct stat st;
    return stat(d, &st) == 0 && S_ISDIR(st.st_mode) ? d : NULL;
}

static char tmpdir[256];

static const char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/vlastab-test-XXXXXX", base ? base : "/tmp");
    return mkdtemp(tmpdir);
}

/* removes the flat directory made by make_tmpdir */
static void remove_tmpdir(void)
{
    DIR *dir = opendir(tmpdir);
    if (!dir)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(dir))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    closedir(dir);
    rmdir(tmpdir);
}

static const char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static int write_bytes(const char *path, const void *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(buf, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* a .npy file by hand: magic, version MAJOR.0, the dict padded with spaces and '\n' to a multiple
 * of 64 bytes, then n bytes of data */
static int write_npy_raw(const char *path, int major, const char *dict, const void *data, size_t n)
{
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
    unsigned char *buf = calloc(total + n + 1, 1);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> 8 * i);
    memset(buf + pre, ' ', hlen);
    memcpy(buf + pre, dict, dl);
    buf[total - 1] = '\n';
    if (n)
        memcpy(buf + total, data, n);
    int rc = write_bytes(path, buf, total + n);
    free(buf);
    return rc;
}

static int same_bits(const double *a, const double *b, int n)
{
    return memcmp(a, b, n * sizeof(double)) == 0;
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* ---- Philox ---- */

static const uint32_t kat[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
     0xa20bc7c6, 0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
     0x5001e420, 0x24126ea1},
};

static int kat_ok(const uint32_t v[10])
{
    uint32_t out[4];
    vla_philox4x32_10(v, v + 4, out);
    return !memcmp(out, v + 6, sizeof out);
}

TEST(philox_kat_builtin)
{
    for (int i = 0; i < 3; i++)
        CHECK_MSG(kat_ok(kat[i]), "known-answer vector %d", i);
}

TEST(philox_kat_file)
{
    const char *sh = shared_dir();
    if (!sh) {
        vla_test_skip("no shared directory (set VLA_SHARED)");
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/data/philox4x32-10-kat.txt", sh);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        uint32_t v[10];
        int rounds;
        if (line[0] == '#' || strncmp(line, "philox4x32", 10))
            continue;
        int got = sscanf(line, "philox4x32 %d %x %x %x %x %x %x %x %x %x %x", &rounds, &v[0], &v[1],
                         &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        CHECK_EQ_INT(got, 11);
        CHECK_EQ_INT(rounds, 10);
        CHECK_MSG(kat_ok(v), "vector from %s: %s", path, line);
        n++;
    }
    fclose(f);
    CHECK_EQ_INT(n, 3);
}

/* the documented mapping, recomputed here from the bare Philox function; the gaussian against
 * Box-Muller in libm, which bounds the error of the portable log and sincos */
TEST(philox_mapping)
{
    double worst = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t seed = 0x123456789abcdefULL * (uint64_t)(i % 7 + 1);
        vla_var var = (vla_var)(i % 7);
        uint32_t head = (uint32_t)(i % 5), lane = (uint32_t)(i * 37 % 300);
        uint64_t t = (uint64_t)i * 0x10001ULL + ((uint64_t)(i % 3) << 33);
        uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32) ^ ((uint32_t)var * 0x9E3779B9u)};
        uint32_t ctr[4] = {(lane >> 1) | 0x80000000u, (uint32_t)t, (uint32_t)(t >> 32), head}, w[4];
        vla_philox4x32_10(ctr, key, w);
        int j = 2 * (lane & 1);
        uint64_t m = ((uint64_t)w[j] << 21) ^ (w[j + 1] >> 11);
        double u = m ? ldexp((double)m, -53) : 0x1p-54;
        if (vla_uniform(seed, var, head, t, lane) != u) {
            CHECK_MSG(0, "uniform mapping at i = %d", i);
            break;
        }
        ctr[0] = lane >> 1;
        vla_philox4x32_10(ctr, key, w);
        uint64_t m1 = ((uint64_t)w[0] << 21) ^ (w[1] >> 11),
                 m2 = ((uint64_t)w[2] << 21) ^ (w[3] >> 11);
        double u1 = m1 ? ldexp((double)m1, -53) : 0x1p-54, u2 = ldexp((double)m2, -53);
        double r = sqrt(-2 * log(u1)), th = 2 * M_PI * u2;
        double ref = (lane & 1) ? r * sin(th) : r * cos(th);
        double err = fabs(vla_gauss(seed, var, head, t, lane) - ref) / (1 + r);
        if (err > worst)
            worst = err;
    }
    /* a few ulps: the libm reference itself carries 2 pi u2 rounded */
    if (getenv("VLA_TEST_VERBOSE"))
        printf("gaussian vs libm Box-Muller: %.3g\n", worst);
    CHECK_MSG(worst < 4e-15, "gaussian differs from libm Box-Muller by %.3g", worst);

    double a[37], b[37];
    vla_gauss_fill(a, 37, 99, VLA_VAR_V, 3, 12345, 0.3);
    for (int i = 0; i < 37; i++)
        b[i] = 0.3 * vla_gauss(99, VLA_VAR_V, 3, 12345, (uint32_t)i);
    CHECK(same_bits(a, b, 37));
}

/* vla_box_muller eight (AVX-512) or four (AVX2) at a time, each width the processor has, gives
 * the bits of one at a time (the scalar code, n = 1), on random uniforms and on their edges: the
 * smallest u01 (2^-54), the largest, the quadrant boundaries of 2 pi u2 and the neighbours of
 * each, the switch of the log's reduction at sqrt(1/2); and vla_gauss_fill, which draws as many
 * Philox blocks at once, equals vla_gauss (one block, one pair) at every length (the tails of
 * fewer pairs go one at a time; an odd length ends inside a block or a pair of blocks) and
 * coordinate */
static void check_widths(const double *u1, const double *u2, double *g0, double *g1, int N, int w);
TEST(box_muller_vector_bits)
{
    enum { N = 4096 };
    static double u1[N], u2[N], g0[N], g1[N];
    const double edge[] = {0x1p-54, 0x1p-53, 1 - 0x1p-53, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75,
                           0.875, 0.70710678118654752440, 0.70710678118654752440 / 2, 1e-300};
    int ne = (int)(sizeof edge / sizeof edge[0]), n = 0;
    for (int i = 0; i < ne; i++)
        for (int k = -2; k <= 2; k++) {
            double x = edge[i];
            for (int j = 0; j < (k < 0 ? -k : k); j++)
                x = k < 0 ? nextafter(x, 0) : nextafter(x, 1);
            if (x > 0 && x < 1)
                u1[n] = x, u2[n] = edge[(i * 5 + k + 2) % ne], n++;
        }
    for (int i = 0; i < n; i++) /* each edge also as u2 */
        u2[n + i] = u1[i], u1[n + i] = u2[i];
    n *= 2;
    for (; n < N; n++) {
        u1[n] = vla_uniform(5, VLA_VAR_Q, 0, (uint64_t)n, 0);
        u2[n] = vla_uniform(5, VLA_VAR_Q, 0, (uint64_t)n, 1);
    }
    const int was = vla_simd_width(0), widths[] = {8, 4};
    CHECK(was == 8 || was == 4 || was == 1);
    for (int wi = 0; wi < 2; wi++) {
        if (vla_simd_width(widths[wi]) != widths[wi])
            continue; /* the processor lacks it */
        check_widths(u1, u2, g0, g1, N, widths[wi]);
    }
    vla_simd_width(was);
}

static void check_widths(const double *u1, const double *u2, double *g0, double *g1, int N, int w)
{
    vla_box_muller(u1, u2, N, g0, g1);
    long bad = 0;
    for (int i = 0; i < N; i++) {
        double h0, h1;
        vla_box_muller(&u1[i], &u2[i], 1, &h0, &h1);
        if (memcmp(&h0, &g0[i], 8) || memcmp(&h1, &g1[i], 8)) {
            if (!bad)
                CHECK_MSG(0, "u1 = %a, u2 = %a: %d at a time (%a, %a), one (%a, %a)", u1[i],
                          u2[i], w, g0[i], g1[i], h0, h1);
            bad++;
        }
    }
    CHECK_MSG(bad == 0, "%ld of %d pairs differ at width %d", bad, N, w);
    double a[300], b[300];
    for (int len = 1, c = 0; len <= 300; len += len < 40 ? 1 : 37, c++) {
        /* seeds, variables, heads and steps with their high words set */
        uint64_t seed = 11 + 0x9e3779b97f4a7c15ULL * (uint64_t)c, t = 777 + ((uint64_t)c << 31);
        vla_var var = (vla_var)(c % 7);
        uint32_t head = 0xfffffff0u + (uint32_t)c;
        vla_gauss_fill(a, len, seed, var, head, t, 1.5);
        for (int i = 0; i < len; i++)
            b[i] = 1.5 * vla_gauss(seed, var, head, t, (uint32_t)i);
        CHECK_MSG(same_bits(a, b, len), "vla_gauss_fill of %d at width %d", len, w);
    }
}

/* load.c's plain binary64 loops at every width the processor has (8, 4) and at 1 give the bits of
 * the loops written here: W k's sums in the order j = 0, 1, ..., the divisions, and the
 * finiteness check finds a NaN or an infinity at every position of every length */
TEST(input_loops_widths_bits)
{
    enum { NMAX = 70, MMAX = 40 };
    static double M[NMAX * MMAX], x[MMAX], y[NMAX], z[NMAX], v[NMAX], w[NMAX];
    const double odd[] = {-0.0, 0x1p-1074, -0x1p-1060, 1e300, -1e300, 3.5, 0x1p-1022};
    for (int i = 0; i < NMAX * MMAX; i++)
        M[i] = i % 97 == 5 ? odd[i % 7] : vla_gauss(3, VLA_VAR_AUX, 0, 1, (uint32_t)i);
    for (int j = 0; j < MMAX; j++)
        x[j] = j % 11 == 3 ? odd[j % 7] : vla_gauss(3, VLA_VAR_AUX, 1, 1, (uint32_t)j);
    const int was = vla_simd_width(0), widths[] = {8, 4, 1};
    for (int wi = 0; wi < 3; wi++) {
        int wd = widths[wi];
        if (vla_simd_width(wd) != wd)
            continue; /* the processor lacks it */
        long bad = 0;
        for (int n = 1; n <= NMAX; n += n < 36 ? 1 : 17)
            for (int m = 1; m <= MMAX; m += 13) {
                vla_matvec_cols(M, x, n, m, y);
                for (int i = 0; i < n; i++) {
                    double acc = 0;
                    for (int j = 0; j < m; j++)
                        acc += M[j * n + i] * x[j];
                    z[i] = acc;
                }
                bad += !same_bits(y, z, n);
            }
        CHECK_MSG(bad == 0, "vla_matvec_cols at width %d: %ld of its products differ", wd, bad);
        bad = 0;
        for (int n = 1; n <= NMAX; n++) {
            double c = n % 3 ? 3.0 * n : -0x1p-1070;
            memcpy(v, M + 3 * n, n * sizeof(double));
            vla_div_all(v, n, c);
            for (int i = 0; i < n; i++)
                w[i] = M[3 * n + i] / c;
            bad += !same_bits(v, w, n);
        }
        CHECK_MSG(bad == 0, "vla_div_all at width %d: %ld lengths differ", wd, bad);
        const double nonfinite[] = {NAN, INFINITY, -INFINITY};
        for (int n = 1; n <= 40; n++) {
            memcpy(v, M, n * sizeof(double));
            CHECK_MSG(vla_finite_all(v, n), "width %d, length %d: finite numbers refused", wd, n);
            for (int at = 0; at < n; at++)
                for (int k = 0; k < 3; k++) {
                    memcpy(v, M, n * sizeof(double));
                    v[at] = nonfinite[k];
                    if (vla_finite_all(v, n))
                        CHECK_MSG(0, "width %d, length %d: %g at %d missed", wd, n, v[at], at);
                }
        }
    }
    vla_simd_width(was);
}

TEST(philox_purity)
{
    enum { N = 500 };
    static double fwd[N], rev[N], uf[N], ur[N];
    for (int i = 0; i < N; i++) {
        fwd[i] =
            vla_gauss(7, VLA_VAR_K, (uint32_t)(i % 4), (uint64_t)i / 4 + 1, (uint32_t)(i % 33));
        uf[i] =
            vla_uniform(7, VLA_VAR_K, (uint32_t)(i % 4), (uint64_t)i / 4 + 1, (uint32_t)(i % 33));
    }
    for (int i = N - 1; i >= 0; i--) {
        (void)vla_gauss(8, VLA_VAR_Q, 0, 5, 1); /* unrelated calls in between change nothing */
        rev[i] =
            vla_gauss(7, VLA_VAR_K, (uint32_t)(i % 4), (uint64_t)i / 4 + 1, (uint32_t)(i % 33));
        ur[i] =
            vla_uniform(7, VLA_VAR_K, (uint32_t)(i % 4), (uint64_t)i / 4 + 1, (uint32_t)(i % 33));
    }
    CHECK(same_bits(fwd, rev, N));
    CHECK(same_bits(uf, ur, N));
    /* every coordinate matters */
    double g = vla_gauss(1, VLA_VAR_Q, 0, 1, 0);
    CHECK(g != vla_gauss(2, VLA_VAR_Q, 0, 1, 0));
    CHECK(g != vla_gauss(1ULL << 32 | 1, VLA_VAR_Q, 0, 1, 0));
    CHECK(g != vla_gauss(1, VLA_VAR_K, 0, 1, 0));
    CHECK(g != vla_gauss(1, VLA_VAR_Q, 1, 1, 0));
    CHECK(g != vla_gauss(1, VLA_VAR_Q, 0, 2, 0));
    CHECK(g != vla_gauss(1, VLA_VAR_Q, 0, 1ULL << 32 | 1, 0));
    CHECK(g != vla_gauss(1, VLA_VAR_Q, 0, 1, 1));
    CHECK(g != vla_gauss(1, VLA_VAR_Q, 0, 1, 2));
}

TEST(uniform_range)
{
    const long n = 1000000;
    double s = 0, s2 = 0, lo = 1, hi = 0;
    for (long i = 0; i < n; i++) {
        double u = vla_uniform(42, VLA_VAR_AUX, (uint32_t)(i & 3), (uint64_t)(i >> 8),
                               (uint32_t)(i >> 2 & 63));
        s += u;
        s2 += u * u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    CHECK(lo > 0);
    CHECK(hi < 1);
    double mean = s / n, var = s2 / n - mean * mean;
    /* 5 standard errors: Var u = 1/12, Var u^2 = 4/45 */
    CHECK_NEAR(mean, 0.5, 5 * sqrt(1.0 / 12 / n));
    CHECK_NEAR(var, 1.0 / 12, 5 * sqrt(4.0 / 45 / n) + 5 * sqrt(1.0 / 12 / n));
}

TEST(gauss_moments)
{
    const long n = 1000000;
    double s = 0, s2 = 0, s4 = 0, pair = 0, cross = 0;
    for (long i = 0; i < n; i++) {
        uint32_t head = (uint32_t)(i & 7), lane = (uint32_t)(i >> 3 & 15);
        uint64_t t = (uint64_t)(i >> 7) + 1;
        double g = vla_gauss(3, VLA_VAR_Q, head, t, 2 * lane);
        double h = vla_gauss(3, VLA_VAR_Q, head, t, 2 * lane + 1);
        double u = vla_uniform(3, VLA_VAR_Q, head, t, 2 * lane);
        s += g;
        s2 += g * g;
        s4 += g * g * g * g;
        pair += g * h;
        cross += g * (u - 0.5);
    }
    /* 5 standard errors: Var g = 1, Var g^2 = 2, Var g^4 = 96, Var gh = 1, Var g(u-1/2) = 1/12 */
    double se = 1 / sqrt((double)n);
    CHECK_NEAR(s / n, 0, 5 * se);
    CHECK_NEAR(s2 / n, 1, 5 * sqrt(2.0) * se);
    CHECK_NEAR(s4 / n, 3, 5 * sqrt(96.0) * se);
    CHECK_NEAR(pair / n, 0, 5 * se);                   /* the two normals of one Box-Muller pair */
    CHECK_NEAR(cross / n, 0, 5 * sqrt(1.0 / 12) * se); /* uniform and gaussian blocks differ */
}

/* ---- streams ---- */

static vla_stream *open_ok(const char *spec, int d, int dv, uint64_t seed)
{
    vla_stream *s = NULL;
    vla_error err = {0};
    int rc = vla_stream_open(&s, spec, d, dv, seed, &err);
    CHECK_MSG(rc == 0 && s, "open '%s': %d %s", spec, rc, err.msg);
    return rc ? NULL : s;
}

TEST(stream_gauss)
{
    vla_stream *s = open_ok("gauss:2", 16, 8, 11);
    if (!s)
        return;
    CHECK_EQ_INT(vla_stream_kind_of(s), VLA_STREAM_GAUSS);
    CHECK_EQ_INT(vla_stream_length(s), -1);
    CHECK_EQ_INT(vla_stream_heads(s), -1);
    CHECK(!strcmp(vla_stream_spec(s), "gauss:2"));
    vla_step_buf b, c;
    CHECK_EQ_INT(vla_step_buf_alloc(&b, 16, 8), 0);
    CHECK_EQ_INT(vla_step_buf_alloc(&c, 16, 8), 0);
    const long T = 4000;
    double sum[4] = {0}, sq[4] = {0};
    for (long t = 1; t <= T; t++) {
        CHECK_EQ_INT(vla_stream_get(s, 1, t, &b), 0);
        const double *x[4] = {b.q, b.k, b.v, b.u};
        int n[4] = {16, 16, 8, 16};
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < n[j]; i++) {
                sum[j] += x[j][i];
                sq[j] += x[j][i] * x[j][i];
            }
    }
    for (int j = 0; j < 4; j++) {
        double cnt = T * (j == 2 ? 8 : 16);
        CHECK_NEAR(sum[j] / cnt, 0, 5 * 2 / sqrt(cnt));
        CHECK_NEAR(sq[j] / cnt, 4, 5 * 4 * sqrt(2 / cnt));
    }
    CHECK(isnan(b.beta) && isnan(b.decay));
    CHECK(!b.has_g && !b.is_read);
    CHECK(!same_bits(b.q, b.k, 16) && !same_bits(b.k, b.u, 16));
    /* any step alone, in any order */
    vla_stream_get(s, 1, 17, &c);
    vla_stream_get(s, 0, 5, &b);
    vla_stream_get(s, 1, 17, &b);
    CHECK(same_bits(b.q, c.q, 16) && same_bits(b.v, c.v, 8) && same_bits(b.u, c.u, 16));
    CHECK_EQ_INT(vla_stream_get(s, 0, 0, &b), VLA_ERANGE);
    vla_step_buf_free(&b);
    vla_step_buf_free(&c);
    vla_stream_close(s);

    s = open_ok("gauss", 4, 4, 1);
    if (s) {
        CHECK(!strcmp(vla_stream_spec(s), "gauss:1"));
        vla_stream_close(s);
    }
}

/* gauss's logits: the gated family's log-gates drawn as the N(0, 1) logits z of the log-decays
 * -exp(-3 + 1.5 z) that the stream draws without it (the same z), of either sign; everything else
 * the same draws */
TEST(stream_gauss_logits)
{
    vla_stream *s = open_ok("gauss:1,logits,sigmoid", 8, 8, 5), *r = open_ok("gauss:1,sigmoid", 8, 8, 5);
    if (!s || !r) {
        vla_stream_close(s);
        vla_stream_close(r);
        return;
    }
    CHECK(!strcmp(vla_stream_spec(s), "gauss:1,sigmoid,logits"));
    CHECK(vla_stream_logits(s) && !vla_stream_logits(r));
    vla_stream_want(s, VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D);
    vla_stream_want(r, VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D);
    vla_step_buf b, c;
    CHECK_EQ_INT(vla_step_buf_alloc(&b, 8, 8), 0);
    CHECK_EQ_INT(vla_step_buf_alloc(&c, 8, 8), 0);
    int pos = 0, neg = 0, same = 1;
    for (long t = 1; t <= 200; t++) {
        CHECK_EQ_INT(vla_stream_get(s, 0, t, &b), 0);
        CHECK_EQ_INT(vla_stream_get(r, 0, t, &c), 0);
        same &= same_bits(b.q, c.q, 8) && same_bits(b.k, c.k, 8) && b.beta == c.beta;
        same &= c.lgs == -exp(-3 + 1.5 * b.lgs);
        for (int i = 0; i < 8; i++) {
            same &= c.lg[i] == -exp(-3 + 1.5 * b.lg[i]);
            pos += b.lg[i] > 0, neg += b.lg[i] < 0;
        }
    }
    CHECK_MSG(same, "the logits are not the z of the stream's log-decays, or other draws moved");
    CHECK_MSG(pos > 600 && neg > 600, "logits of either sign: %d positive, %d negative", pos, neg);
    vla_step_buf_free(&b);
    vla_step_buf_free(&c);
    vla_stream_close(s);
    vla_stream_close(r);
}

static double phi(double x) { return x > 0 ? x + 1 : exp(x); }

TEST(stream_lmlike)
{
    enum { D = 32, NK = 400 };
    const double sd = 0.23;
    vla_stream *s = open_ok("lmlike", D, D, 7);
    if (!s)
        return;
    CHECK(!strcmp(vla_stream_spec(s), "lmlike:0.23"));
    vla_step_buf b;
    vla_step_buf_alloc(&b, D, D);
    static double pk[NK][D], W[D * D];
    double sq = 0, worst_unit = 0, worst_dir = 0;
    for (int i = 0; i < D * D; i++)
        W[i] = vla_gauss(7, VLA_VAR_AUX, 2, 0, (uint32_t)i) / sqrt(D);
    for (int t = 1; t <= NK; t++) {
        vla_stream_get(s, 2, t, &b);
        for (int i = 0; i < D; i++) {
            pk[t - 1][i] = phi(b.k[i]);
            sq += b.k[i] * b.k[i] + b.q[i] * b.q[i] + b.v[i] * b.v[i];
        }
        double n = sqrt(dot(b.u, b.u, D));
        worst_unit = fmax(worst_unit, fabs(n - 1));
        /* u is the unit vector along W k, W as documented in stream.c */
        double wk[D];
        for (int i = 0; i < D; i++)
            wk[i] = dot(W + i * D, b.k, D);
        double nw = sqrt(dot(wk, wk, D));
        for (int i = 0; i < D; i++)
            worst_dir = fmax(worst_dir, fabs(wk[i] / nw - b.u[i]));
    }
    CHECK_MSG(worst_unit < 4 * D * 0x1p-53, "||u|| - 1 up to %.3g", worst_unit);
    CHECK_MSG(worst_dir < 1e-14, "u differs from unit(W k) by %.3g", worst_dir);
    double cnt = 3.0 * NK * D;
    CHECK_NEAR(sq / cnt, sd * sd, 5 * sd * sd * sqrt(2 / cnt));

    /* mean cosine between phi(k) vectors: near m1^2 / m2, m_j = E phi(x)^j for x ~ N(0, sd^2)
     * (Simpson's rule); at d = 32 Jensen adds about +0.002 */
    double m1 = 0, m2 = 0;
    const int steps = 20000;
    double h = 20 * sd / steps;
    for (int i = 0; i <= steps; i++) {
        double x = -10 * sd + i * h, w = (i == 0 || i == steps) ? 1 : (i % 2 ? 4 : 2);
        double p = exp(-x * x / (2 * sd * sd)) / (sd * sqrt(2 * M_PI)) * w * h / 3;
        m1 += phi(x) * p;
        m2 += phi(x) * phi(x) * p;
    }
    double cs = 0;
    long pairs = 0;
    for (int a = 0; a < NK; a++)
        for (int c = a + 1; c < NK; c++) {
            cs += dot(pk[a], pk[c], D) / sqrt(dot(pk[a], pk[a], D) * dot(pk[c], pk[c], D));
            pairs++;
        }
    cs /= pairs;
    CHECK_NEAR(cs, m1 * m1 / m2, 0.005);
    CHECK_NEAR(cs, 0.96, 0.01);
    vla_step_buf_free(&b);
    vla_stream_close(s);
}

/* MGS twice of the columns of X (d x n, row-major), in place */
static void orthonormalize(double *X, int d, int n)
{
    for (int j = 0; j < n; j++)
        for (int pass = 0; pass < 3; pass++) {
            for (int l = 0; l < j; l++) {
                double r = 0;
                for (int i = 0; i < d; i++)
                    r += X[i * n + l] * X[i * n + j];
                for (int i = 0; i < d; i++)
                    X[i * n + j] -= r * X[i * n + l];
            }
            double nrm = 0;
            for (int i = 0; i < d; i++)
                nrm += X[i * n + j] * X[i * n + j];
            for (int i = 0; i < d; i++)
                X[i * n + j] /= sqrt(nrm);
        }
}

/* squared norms of the parts of u in and out of span(Q), Q d x n orthonormal */
static void split(const double *Q, int d, int n, const double *u, double *in2, double *out2)
{
    double p[256] = {0};
    for (int j = 0; j < n; j++) {
        double c = 0;
        for (int i = 0; i < d; i++)
            c += Q[i * n + j] * u[i];
        for (int i = 0; i < d; i++)
            p[i] += c * Q[i * n + j];
    }
    *in2 = *out2 = 0;
    for (int i = 0; i < d; i++) {
        *in2 += p[i] * p[i];
        *out2 += (u[i] - p[i]) * (u[i] - p[i]);
    }
}

TEST(stream_subspace)
{
    enum { D = 32, R = 4 };
    const double noise = 0.1;
    const long T = 4000;
    vla_stream *s0 = open_ok("subspace:4,0", D, D, 5), *s1 = open_ok("subspace:4,0.1", D, D, 5);
    if (!s0 || !s1)
        goto out;
    CHECK(!strcmp(vla_stream_spec(s1), "subspace:4,0.1"));
    vla_step_buf b;
    vla_step_buf_alloc(&b, D, D);
    /* without noise the first R inputs span the subspace; with noise the same B and c (only xi
     * is added), so the residual of the noisy stream is the noise's */
    double Q[D * R];
    for (int t = 1; t <= R; t++) {
        vla_stream_get(s0, 0, t, &b);
        for (int i = 0; i < D; i++)
            Q[i * R + t - 1] = b.u[i];
    }
    orthonormalize(Q, D, R);
    double worst0 = 0, in_sum = 0, out_sum = 0, in2, out2;
    for (long t = R + 1; t <= T + R; t++) {
        vla_stream_get(s0, 0, t, &b);
        CHECK(same_bits(b.k, b.u, D));
        split(Q, D, R, b.u, &in2, &out2);
        worst0 = fmax(worst0, sqrt(out2 / in2));
        vla_stream_get(s1, 0, t, &b);
        split(Q, D, R, b.u, &in2, &out2);
        in_sum += in2;
        out_sum += out2;
    }
    CHECK_MSG(worst0 < 1e-13, "noise-free input leaves the subspace by %.3g", worst0);
    /* E out2 = noise^2 (d - R) / d (a scaled chi^2 with d - R degrees of freedom);
     * E in2 = 1 + noise^2 R / d (c / sqrt(R) contributes chi^2_R / R); 5 standard errors */
    double eo = noise * noise * (D - R) / D, ei = 1 + noise * noise * R / D;
    CHECK_NEAR(out_sum / T, eo, 5 * eo * sqrt(2.0 / (D - R) / T));
    CHECK_NEAR(in_sum / T, ei, 5 * sqrt(2.0 / R / T));
    double ratio = sqrt(out_sum / in_sum);
    CHECK_NEAR(ratio, noise * sqrt((double)(D - R) / D / ei), 0.05 * noise);

    /* another head, another subspace */
    vla_stream_get(s0, 1, 10, &b);
    split(Q, D, R, b.u, &in2, &out2);
    CHECK(sqrt(out2 / in2) > 0.5);

    /* the per-head cache is invisible: 20 heads (more than it holds) interleaved, then again */
    static double first[20][D];
    for (int h = 0; h < 20; h++) {
        vla_stream_get(s1, (uint32_t)h, 3, &b);
        memcpy(first[h], b.u, sizeof first[h]);
    }
    int same = 1;
    for (int h = 19; h >= 0; h--) {
        vla_stream_get(s1, (uint32_t)(h * 7 % 20), 99, &b);
        vla_stream_get(s1, (uint32_t)h, 3, &b);
        same &= same_bits(first[h], b.u, D);
    }
    CHECK(same);
    vla_step_buf_free(&b);
out:
    vla_stream_close(s0);
    vla_stream_close(s1);
}

TEST(stream_repeat)
{
    enum { D = 8, M = 5 };
    vla_stream *s = open_ok("repeat:5", D, D, 3), *g = open_ok("gauss", D, D, 3);
    if (!s || !g)
        goto out;
    vla_step_buf b, c;
    vla_step_buf_alloc(&b, D, D);
    vla_step_buf_alloc(&c, D, D);
    static double keys[40][D], qs[40][D];
    for (int t = 1; t <= 40; t++) {
        vla_stream_get(s, 0, t, &b);
        memcpy(keys[t - 1], b.k, sizeof keys[0]);
        memcpy(qs[t - 1], b.q, sizeof qs[0]);
        CHECK(same_bits(b.k, b.u, D));
        if (t <= M) { /* the first M keys are the gauss stream's */
            vla_stream_get(g, 0, t, &c);
            CHECK(same_bits(b.k, c.k, D));
        }
    }
    int distinct = 0;
    for (int t = 0; t < 40; t++) {
        int seen = 0;
        for (int j = 0; j < t; j++)
            seen |= same_bits(keys[t], keys[j], D);
        distinct += !seen;
        if (t >= M)
            CHECK(same_bits(keys[t], keys[t - M], D) && !same_bits(qs[t], qs[t - M], D));
    }
    CHECK_EQ_INT(distinct, M);
    vla_step_buf_free(&b);
    vla_step_buf_free(&c);
out:
    vla_stream_close(s);
    vla_stream_close(g);
}

TEST(stream_mqar)
{
    enum { D = 16, DV = 12, N = 8, G = 3 };
    vla_stream *s = open_ok("mqar:8,3", D, DV, 21);
    if (!s)
        return;
    CHECK(!strcmp(vla_stream_spec(s), "mqar:8,3"));
    CHECK_EQ_INT(vla_stream_length(s), 2 * N + G);
    vla_step_buf b;
    vla_step_buf_alloc(&b, D, DV);
    static double keys[N][D], vals[N][DV];
    for (long t = 1; t <= 2 * N + G; t++) {
        CHECK_EQ_INT(vla_stream_get(s, 4, t, &b), 0);
        CHECK(same_bits(b.q, b.k, D) && same_bits(b.u, b.k, D));
        long p = vla_stream_pair(s, t);
        if (t <= N) {
            CHECK_EQ_INT(p, t - 1);
            CHECK_EQ_INT(b.is_read, 0);
            memcpy(keys[t - 1], b.k, sizeof keys[0]);
            memcpy(vals[t - 1], b.v, sizeof vals[0]);
        } else if (t <= N + G) {
            CHECK_EQ_INT(p, -1);
            CHECK_EQ_INT(b.is_read, 0);
            for (int i = 0; i < N; i++)
                CHECK(!same_bits(b.k, keys[i], D));
        } else {
            CHECK_EQ_INT(p, t - N - G - 1);
            CHECK_EQ_INT(b.is_read, 1);
            if (p >= 0 && p < N)
                CHECK(same_bits(b.q, keys[p], D) && same_bits(b.v, vals[p], DV));
        }
    }
    CHECK_EQ_INT(vla_stream_get(s, 4, 0, &b), VLA_ERANGE);
    CHECK_EQ_INT(vla_stream_get(s, 4, 2 * N + G + 1, &b), VLA_ERANGE);
    CHECK_EQ_INT(vla_stream_pair(s, 0), -1);
    CHECK_EQ_INT(vla_stream_pair(s, 2 * N + G + 1), -1);
    vla_stream_close(s);

    /* keys N(0, 1/d): E ||k||^2 = 1, Var = 2/d; values N(0, 1) */
    const long n = 2000;
    s = open_ok("mqar:2000,0", D, DV, 22);
    if (s) {
        double k2 = 0, v2 = 0;
        for (long t = 1; t <= n; t++) {
            vla_stream_get(s, 0, t, &b);
            k2 += dot(b.k, b.k, D);
            v2 += dot(b.v, b.v, DV);
        }
        CHECK_NEAR(k2 / n, 1, 5 * sqrt(2.0 / D / n));
        CHECK_NEAR(v2 / n / DV, 1, 5 * sqrt(2.0 / DV / n));
        vla_stream_close(s);
    }
    vla_step_buf_free(&b);
}

TEST(stream_bad_specs)
{
    static const struct {
        const char *spec;
        int d, rc;
    } bad[] = {
        {"", 8, VLA_EINVAL},
        {"foo", 8, VLA_EINVAL},
        {"gaus", 8, VLA_EINVAL},
        {"gauss:", 8, VLA_EINVAL},
        {"gauss:abc", 8, VLA_EINVAL},
        {"gauss:1x", 8, VLA_EINVAL},
        {"gauss:nan", 8, VLA_EINVAL},
        {"gauss:1,2", 8, VLA_EINVAL},
        {"gauss:1,logits,logits", 8, VLA_EINVAL},
        {"gauss:1,sigmoid,logits,x", 8, VLA_EINVAL},
        {"lmlike:0.2,logits", 8, VLA_EINVAL},
        {"gauss:-1", 8, VLA_ERANGE},
        {"gauss:0", 8, VLA_ERANGE},
        {"lmlike:0", 8, VLA_ERANGE},
        {"lmlike:,", 8, VLA_EINVAL},
        {"subspace", 8, VLA_EINVAL},
        {"subspace:4", 8, VLA_EINVAL},
        {"subspace:4,", 8, VLA_EINVAL},
        {"subspace:0,0.1", 8, VLA_ERANGE},
        {"subspace:9,0.1", 8, VLA_ERANGE},
        {"subspace:2,-1", 8, VLA_ERANGE},
        {"subspace:2.5,1", 8, VLA_EINVAL},
        {"subspace:2,1,3", 8, VLA_EINVAL},
        {"subspace:2,1,3,4", 8, VLA_EINVAL},
        {"repeat", 8, VLA_EINVAL},
        {"repeat:0", 8, VLA_ERANGE},
        {"repeat:1.5", 8, VLA_EINVAL},
        {"repeat:99999999999999999999", 8, VLA_EINVAL},
        {"mqar:8", 8, VLA_EINVAL},
        {"mqar:0,1", 8, VLA_ERANGE},
        {"mqar:8,-1", 8, VLA_ERANGE},
        {"mqar:a,b", 8, VLA_EINVAL},
        {"trace", 8, VLA_EINVAL},
        {"trace:", 8, VLA_EINVAL},
        {"trace:/nonexistent-vlastab-dir", 8, VLA_EIO},
        {"gauss", 0, VLA_ERANGE},
        {"gauss", 257, VLA_ERANGE},
        {"gauss", -3, VLA_ERANGE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vla_stream *s = (vla_stream *)&s; /* must come back NULL */
        vla_error err = {0};
        int rc = vla_stream_open(&s, bad[i].spec, bad[i].d, 8, 1, &err);
        CHECK_MSG(rc == bad[i].rc, "'%s' d=%d: rc %d, expected %d (%s)", bad[i].spec, bad[i].d, rc,
                  bad[i].rc, err.msg);
        CHECK_MSG(s == NULL, "'%s': stream not NULL", bad[i].spec);
        CHECK_MSG(err.msg[0] && !strchr(err.msg, '\n'), "'%s': reason '%s'", bad[i].spec, err.msg);
        if (rc == 0)
            vla_stream_close(s);
    }
    vla_stream *s = NULL;
    CHECK_EQ_INT(vla_stream_open(&s, "gauss", 8, 0, 1, NULL), VLA_ERANGE);
    CHECK_EQ_INT(vla_stream_open(&s, NULL, 8, 8, 1, NULL), VLA_EINVAL);
    /* the reason comes with its code (a long one is cut: tests/test_errors.c) */
    vla_error e;
    CHECK_EQ_INT(vla_stream_open(&s, "subspace:99,1", 8, 8, 1, &e), VLA_ERANGE);
    CHECK(e.code == VLA_ERANGE && strstr(e.msg, "R = 99 must be in 1..d = 8"));
    vla_step_buf b;
    CHECK_EQ_INT(vla_step_buf_alloc(&b, 0, 4), VLA_ERANGE);
    CHECK_EQ_INT(vla_step_buf_alloc(&b, 4, 257), VLA_ERANGE);
}

TEST(stream_trace_real)
{
    const char *sh = shared_dir();
    if (!sh) {
        vla_test_skip("no shared directory (set VLA_SHARED)");
        return;
    }
    char spec[512], path[512];
    vla_error err;
    snprintf(spec, sizeof spec, "trace:%s/data/lmtrace-seed7/vla3", sh);
    vla_stream *s = open_ok(spec, 32, 32, 0);
    if (!s)
        return;
    CHECK_EQ_INT(vla_stream_kind_of(s), VLA_STREAM_TRACE);
    CHECK_EQ_INT(vla_stream_heads(s), 4);
    CHECK_EQ_INT(vla_stream_length(s), 1000);
    CHECK(!strcmp(vla_stream_spec(s), spec));
    vla_step_buf b;
    vla_step_buf_alloc(&b, 32, 32);
    const char *names[4] = {"q", "k", "v", "u"};
    static const long at[4][2] = {{0, 1}, {2, 17}, {3, 1000}, {1, 500}};
    for (int f = 0; f < 4; f++) {
        vla_npy a;
        snprintf(path, sizeof path, "%s/data/lmtrace-seed7/vla3/%s.npy", sh, names[f]);
        int rc = vla_npy_read(path, &a, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc)
            continue;
        for (int j = 0; j < 4; j++) {
            vla_stream_get(s, (uint32_t)at[j][0], at[j][1], &b);
            const double *x = f == 0 ? b.q : f == 1 ? b.k : f == 2 ? b.v : b.u;
            CHECK(same_bits(x, a.data + (at[j][0] * 1000 + at[j][1] - 1) * 32, 32));
        }
        vla_npy_free(&a);
    }
    CHECK(isnan(b.beta) && !b.has_g && !b.is_read);
    CHECK_EQ_INT(vla_stream_get(s, 4, 1, &b), VLA_ERANGE);
    CHECK_EQ_INT(vla_stream_get(s, 0, 1001, &b), VLA_ERANGE);
    vla_stream_close(s);

    /* la has no u (u = k); delta has row gates */
    snprintf(spec, sizeof spec, "trace:%s/data/lmtrace-seed7/la", sh);
    if ((s = open_ok(spec, 32, 32, 0))) {
        vla_stream_get(s, 1, 3, &b);
        CHECK(same_bits(b.u, b.k, 32) && !b.has_g);
        vla_stream_close(s);
    }
    snprintf(spec, sizeof spec, "trace:%s/data/lmtrace-seed7/delta", sh);
    if ((s = open_ok(spec, 32, 32, 0))) {
        vla_stream_get(s, 1, 3, &b);
        CHECK(b.has_g && b.g[0] > 0 && b.g[0] < 1);
        vla_stream_close(s);
    }
    /* the wrong d names the file */
    snprintf(spec, sizeof spec, "trace:%s/data/lmtrace-seed7/vla3", sh);
    s = NULL;
    CHECK_EQ_INT(vla_stream_open(&s, spec, 16, 32, 0, &err), VLA_EFORMAT);
    CHECK_MSG(strstr(err.msg, "q.npy: shape (4, 1000, 32), expected dim 16"), "%s", err.msg);
    CHECK_EQ_INT(vla_stream_open(&s, spec, 32, 8, 0, &err), VLA_EFORMAT);
    CHECK_MSG(strstr(err.msg, "v.npy") && strstr(err.msg, "expected dim 8"), "%s", err.msg);
    vla_step_buf_free(&b);
}

/* a small trace: heads 2, T 5, d 3, dv 2, every value distinct and finite */
static void write_trace_file(const char *name, long h, long T, long dim, int ndim)
{
    double x[64];
    for (int i = 0; i < 64; i++)
        x[i] = 0.25 * i + (name[0] == 'v' ? 100 : name[0] == 'k' ? 200 : 0);
    long shape[3] = {h, T, dim};
    if (!strcmp(name, "g.npy"))
        for (int i = 0; i < 64; i++)
            x[i] = (i + 0.5) / 64;
    CHECK_EQ_INT(vla_npy_write(tmp_path(name), x, ndim, shape), 0);
}

static void write_good_trace(void)
{
    write_trace_file("q.npy", 2, 5, 3, 3);
    write_trace_file("k.npy", 2, 5, 3, 3);
    write_trace_file("v.npy", 2, 5, 2, 3);
    unlink(tmp_path("u.npy"));
    unlink(tmp_path("g.npy"));
    unlink(tmp_path("beta.npy"));
}

/* opens the small trace expecting rc, and a reason containing want1 and want2 */
static void expect_trace(int rc_want, const char *want1, const char *want2)
{
    char spec[300];
    vla_error err = {0};
    vla_stream *s = NULL;
    snprintf(spec, sizeof spec, "trace:%s", tmpdir);
    int rc = vla_stream_open(&s, spec, 3, 2, 0, &err);
    CHECK_MSG(rc == rc_want, "rc %d, expected %d (%s)", rc, rc_want, err.msg);
    if (want1)
        CHECK_MSG(strstr(err.msg, want1) && (!want2 || strstr(err.msg, want2)),
                  "reason '%s' lacks '%s' '%s'", err.msg, want1, want2 ? want2 : "");
    vla_stream_close(s);
}

TEST(stream_trace_bad)
{
    if (!make_tmpdir()) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    write_good_trace();
    expect_trace(0, NULL, NULL);
    char spec[300];
    snprintf(spec, sizeof spec, "trace:%s", tmpdir);
    vla_stream *s = open_ok(spec, 3, 2, 0);
    if (s) {
        vla_step_buf b;
        vla_step_buf_alloc(&b, 3, 2);
        CHECK_EQ_INT(vla_stream_heads(s), 2);
        CHECK_EQ_INT(vla_stream_length(s), 5);
        vla_stream_get(s, 1, 3, &b); /* row 1 * 5 + 2 = 7 */
        CHECK(b.q[0] == 0.25 * 21 && b.k[2] == 200 + 0.25 * 23 && b.v[1] == 100 + 0.25 * 15);
        CHECK(b.u[1] == b.k[1] && isnan(b.beta) && !b.has_g);
        vla_step_buf_free(&b);
        vla_stream_close(s);
    }

    /* optional files: beta (heads, T) or (heads, T, 1), g (heads, T, dv) */
    write_trace_file("beta.npy", 2, 5, 1, 2);
    write_trace_file("g.npy", 2, 5, 2, 3);
    if ((s = open_ok(spec, 3, 2, 0))) {
        vla_step_buf b;
        vla_step_buf_alloc(&b, 3, 2);
        vla_stream_get(s, 1, 2, &b);
        CHECK(b.beta == 0.25 * 6 && b.has_g && b.g[1] == (13 + 0.5) / 64);
        vla_step_buf_free(&b);
        vla_stream_close(s);
    }
    write_trace_file("beta.npy", 2, 5, 1, 3);
    expect_trace(0, NULL, NULL);
    write_trace_file("beta.npy", 2, 5, 2, 3);
    expect_trace(VLA_EFORMAT, "beta.npy", "expected dim 1");
    write_trace_file("g.npy", 2, 5, 3, 3);
    unlink(tmp_path("beta.npy"));
    expect_trace(VLA_EFORMAT, "g.npy", "expected dim 2");

    /* mismatched shapes */
    write_good_trace();
    write_trace_file("k.npy", 2, 5, 4, 3);
    expect_trace(VLA_EFORMAT, "k.npy: shape (2, 5, 4), expected dim 3", NULL);
    write_good_trace();
    write_trace_file("v.npy", 2, 6, 2, 3);
    expect_trace(VLA_EFORMAT, "v.npy", "expected 5 steps");
    write_good_trace();
    write_trace_file("u.npy", 3, 5, 3, 3);
    expect_trace(VLA_EFORMAT, "u.npy", "expected 2 heads");
    write_good_trace();
    write_trace_file("q.npy", 2, 5, 3, 2);
    expect_trace(VLA_EFORMAT, "q.npy", "expected (heads, T, 3)");

    /* NaN and Inf name the file and the index */
    write_good_trace();
    double x[20];
    for (int i = 0; i < 20; i++)
        x[i] = i;
    x[1 * 10 + 2 * 2 + 0] = NAN;
    long shv[3] = {2, 5, 2};
    vla_npy_write(tmp_path("v.npy"), x, 3, shv);
    expect_trace(VLA_ENONFINITE, "v.npy: NaN at [1, 2, 0]", NULL);
    write_good_trace();
    double y[30];
    for (int i = 0; i < 30; i++)
        y[i] = i;
    y[29] = -INFINITY;
    long shk[3] = {2, 5, 3};
    vla_npy_write(tmp_path("k.npy"), y, 3, shk);
    expect_trace(VLA_ENONFINITE, "k.npy: Inf at [1, 4, 2]", NULL);

    /* delta's decay: outside [0, 1] when opened; a 0 (no log) in a chunk form, at the step it
     * falls on, exit 2 (seq takes it) */
    write_good_trace();
    double a[10] = {1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
    long sha[2] = {2, 5};
    a[0] = 1.5;
    vla_npy_write(tmp_path("decay.npy"), a, 2, sha);
    expect_trace(VLA_ERANGE, "decay.npy: 1.5 at [0, 0] is outside [0, 1]", NULL);
    a[0] = 1, a[7] = 0;
    vla_npy_write(tmp_path("decay.npy"), a, 2, sha);
    char *out = NULL, cmd[600];
    for (int chunk = 0; chunk < 2; chunk++) {
        snprintf(cmd, sizeof cmd, "bin/vla-statenorm --model delta --set delta_form=decay "
                 "--stream trace:%s --form %s --ref none --out /dev/null 2>&1", tmpdir,
                 chunk ? "chunk:4" : "seq");
        int st = vla_test_sh(&out, "%s", cmd);
        CHECK_MSG(st == (chunk ? 2 : 0) &&
                      (!chunk || strstr(out, "head 1, step 3: a decay of 0 (or one that rounds")),
                  "%s: exit %d, %s", cmd, st, out);
        free(out);
    }
    unlink(tmp_path("decay.npy"));

    /* a missing required file; a broken one */
    write_good_trace();
    unlink(tmp_path("q.npy"));
    expect_trace(VLA_EIO, "q.npy", NULL);
    write_good_trace();
    CHECK_EQ_INT(write_bytes(tmp_path("k.npy"), "\x93NUMPY\x01\x00", 8), 0);
    expect_trace(VLA_EFORMAT, "k.npy", "truncated");
    remove_tmpdir();
}

/* S0.npy: each head's initial state, (heads, dv, d) as S; its values read, hashed into the identity,
 * and every bad file refused as the other files are, naming it; a program refuses it for a model
 * that takes none (exit 2) and names it in its header's files line */
TEST(stream_trace_S0)
{
    if (!make_tmpdir()) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    write_good_trace();
    char spec[300], id0[64], id1[64];
    snprintf(spec, sizeof spec, "trace:%s", tmpdir);
    double x[12], S[6];
    for (int i = 0; i < 12; i++)
        x[i] = 0.5 * i - 2;
    vla_stream *s = open_ok(spec, 3, 2, 0);
    if (s) {
        CHECK_EQ_INT(vla_stream_S0(s, 0, S), 0);
        CHECK(!(vla_stream_optional(s) & VLA_IN_S0));
        vla_stream_identity(s, id0, sizeof id0);
        vla_stream_close(s);
    }
    long sh[3] = {2, 2, 3};
    CHECK_EQ_INT(vla_npy_write(tmp_path("S0.npy"), x, 3, sh), 0);
    if ((s = open_ok(spec, 3, 2, 0))) {
        CHECK(vla_stream_optional(s) & VLA_IN_S0);
        CHECK_EQ_INT(vla_stream_S0(s, 1, S), 1);
        CHECK(S[0] == x[6] && S[5] == x[11]);
        CHECK_EQ_INT(vla_stream_S0(s, 2, S), VLA_ERANGE);
        vla_stream_identity(s, id1, sizeof id1);
        CHECK(strcmp(id0, id1) != 0);
        vla_stream_close(s);
    }
    /* a program: the files line names it; a model without an S-only state refuses it */
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-statenorm --model gdn --stream trace:%s --ref none "
                         "--out - 2>&1", tmpdir);
    CHECK_MSG(st == 0 && strstr(out, "# files: q.npy k.npy v.npy S0.npy;"), "exit %d: %s", st, out);
    free(out);
    st = vla_test_sh(&out, "bin/vla-statenorm --model vla3 --stream trace:%s --ref none "
                     "--out /dev/null 2>&1", tmpdir);
    CHECK_MSG(st == 2 && strstr(out, "the trace's S0.npy (each head's initial state): vla3 keeps A "
                                     "and a normalizer n beside S"), "exit %d: %s", st, out);
    free(out);
    /* bad files */
    long t[3] = {2, 3, 2}, h[3] = {1, 2, 3}, two[2] = {2, 6};
    vla_npy_write(tmp_path("S0.npy"), x, 3, t);
    expect_trace(VLA_EFORMAT, "S0.npy: shape (2, 3, 2), expected (heads, dv, d) = (2, 2, 3): the "
                 "state S as vla_model_get gives it, dv x d (fla's initial_state (heads, d, dv) "
                 "transposed)", NULL);
    vla_npy_write(tmp_path("S0.npy"), x, 3, h);
    expect_trace(VLA_EFORMAT, "S0.npy: shape (1, 2, 3), expected 2 heads (as q.npy)", NULL);
    vla_npy_write(tmp_path("S0.npy"), x, 2, two);
    expect_trace(VLA_EFORMAT, "S0.npy: shape (2, 6), expected (heads, dv, d) = (2, 2, 3)", NULL);
    x[1 * 6 + 0 * 3 + 2] = NAN;
    vla_npy_write(tmp_path("S0.npy"), x, 3, sh);
    expect_trace(VLA_ENONFINITE, "S0.npy: NaN at [1, 0, 2]", NULL);
    x[8] = 0, x[5] = -INFINITY;
    vla_npy_write(tmp_path("S0.npy"), x, 3, sh);
    expect_trace(VLA_ENONFINITE, "S0.npy: Inf at [0, 1, 2]", NULL);
    CHECK_EQ_INT(write_bytes(tmp_path("S0.npy"), "\x93NUMPY\x01\x00", 8), 0);
    expect_trace(VLA_EFORMAT, "S0.npy", "truncated");
    unlink(tmp_path("S0.npy"));
    remove_tmpdir();
}

/* ---- .npy ---- */

TEST(npy_roundtrip)
{
    if (!make_tmpdir()) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = sin(i + 1) * pow(10, i % 7 - 3);
    x[0] = -0.0;
    x[1] = 0x1p-1074;
    x[2] = INFINITY;
    x[3] = NAN;
    x[4] = -0x1.fffffffffffffp1023;
    long shape[3] = {2, 3, 4};
    const char *p = tmp_path("a.npy");
    CHECK_EQ_INT(vla_npy_write(p, x, 3, shape), 0);
    vla_npy a;
    vla_error err = {0};
    CHECK_EQ_INT(vla_npy_read(p, &a, &err), 0);
    CHECK_EQ_INT(a.ndim, 3);
    CHECK(a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 4);
    CHECK(a.data && same_bits(a.data, x, 24));
    vla_npy_free(&a);
    CHECK(a.data == NULL);
    /* the data starts on a 64-byte boundary, after numpy's exact header text */
    FILE *f = fopen(p, "rb");
    unsigned char h[128];
    size_t got = f ? fread(h, 1, sizeof h, f) : 0;
    if (f)
        fclose(f);
    CHECK(got == 128 && (10 + (h[8] | h[9] << 8)) % 64 == 0 && h[6] == 1 && h[7] == 0);
    CHECK(!memcmp(h + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }", 62));
    CHECK(h[(10 + (h[8] | h[9] << 8)) - 1] == '\n');

    /* 1-d, 0-d and empty shapes */
    long s1[1] = {5}, s0[2] = {0, 3};
    CHECK_EQ_INT(vla_npy_write(p, x, 1, s1), 0);
    CHECK_EQ_INT(vla_npy_read(p, &a, &err), 0);
    CHECK(a.ndim == 1 && a.shape[0] == 5 && same_bits(a.data, x, 5));
    vla_npy_free(&a);
    f = fopen(p, "rb");
    got = f ? fread(h, 1, sizeof h - 1, f) : 0;
    if (f)
        fclose(f);
    h[got] = 0;
    CHECK(got > 64 && strstr((char *)h + 10, "'shape': (5,), }"));
    CHECK_EQ_INT(vla_npy_write(p, x + 5, 0, NULL), 0);
    CHECK_EQ_INT(vla_npy_read(p, &a, &err), 0);
    CHECK(a.ndim == 0 && a.data && a.data[0] == x[5]);
    vla_npy_free(&a);
    CHECK_EQ_INT(vla_npy_write(p, NULL, 2, s0), 0);
    CHECK_EQ_INT(vla_npy_read(p, &a, &err), 0);
    CHECK(a.ndim == 2 && a.shape[0] == 0 && a.shape[1] == 3);
    vla_npy_free(&a);
    long neg[1] = {-1};
    CHECK_EQ_INT(vla_npy_write(p, x, 1, neg), VLA_EINVAL);
    CHECK_EQ_INT(vla_npy_write(p, x, 9, shape), VLA_EINVAL);
    CHECK(vla_npy_write("/nonexistent-vlastab-dir/a.npy", x, 1, s1) == VLA_EIO);
    remove_tmpdir();
}

TEST(npy_f32_f16)
{
    if (!make_tmpdir()) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    vla_error err = {0};
    vla_npy a;
    const char *p = tmp_path("h.npy");

    /* float16: zero, one, subnormals, the largest normal, inf, nan, -0 */
    static const uint16_t hb[12] = {0x0000, 0x3C00, 0xC000, 0x0001, 0x03FF, 0x0400,
                                    0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x8000, 0x3555};
    const double hv[12] = {0,     1,        -2,        0x1p-24, 1023 * 0x1p-24, 0x1p-14,
                           65504, INFINITY, -INFINITY, NAN,     -0.0,           0x1.554p-2};
    unsigned char raw[24];
    for (int i = 0; i < 12; i++) {
        raw[2 * i] = hb[i] & 255;
        raw[2 * i + 1] = hb[i] >> 8;
    }
    CHECK_EQ_INT(
        write_npy_raw(p, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 4), }", raw, 24),
        0);
    int rc = vla_npy_read(p, &a, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        CHECK(a.ndim == 2 && a.shape[0] == 3 && a.shape[1] == 4);
        for (int i = 0; i < 12; i++)
            CHECK_MSG(isnan(hv[i]) ? isnan(a.data[i]) : !memcmp(&a.data[i], &hv[i], 8),
                      "f16 %04x: %a, expected %a", hb[i], a.data[i], hv[i]);
        vla_npy_free(&a);
    }
    /* every float16 code at once, decoded exactly: compared with the value from its fields */
    static unsigned char all[2 * 65536];
    for (unsigned i = 0; i < 65536; i++) {
        all[2 * i] = i & 255;
        all[2 * i + 1] = (unsigned char)(i >> 8);
    }
    CHECK_EQ_INT(write_npy_raw(p, 1,
                               "{'descr': '<f2', 'fortran_order': False, 'shape': (65536,), }", all,
                               sizeof all),
                 0);
    rc = vla_npy_read(p, &a, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        long bad = 0;
        for (unsigned i = 0; i < 65536; i++) {
            int e = i >> 10 & 31, m = i & 1023;
            double want = e == 31 ? (m ? NAN : INFINITY)
                          : e     ? ldexp(1 + m / 1024.0, e - 15)
                                  : ldexp(m / 1024.0, -14);
            if (i & 0x8000)
                want = -want;
            double got = a.data[i];
            bad += isnan(want) ? !isnan(got) : (got != want || signbit(got) != signbit(want));
        }
        CHECK_EQ_INT(bad, 0);
        vla_npy_free(&a);
    }

    /* float32, header version 2.0, native order, keys in another order, double quotes */
    const float fv[5] = {1.5f, -0x1p-149f, 3.4028234663852886e38f, 0.1f, -7.0f};
    unsigned char r4[20];
    for (int i = 0; i < 5; i++) {
        uint32_t w;
        memcpy(&w, &fv[i], 4);
        for (int j = 0; j < 4; j++)
            r4[4 * i + j] = (unsigned char)(w >> 8 * j);
    }
    const char *p4 = tmp_path("f.npy");
    CHECK_EQ_INT(
        write_npy_raw(p4, 2, "{\"shape\":(5,),\"fortran_order\":False,\"descr\":\"=f4\"}", r4, 20),
        0);
    rc = vla_npy_read(p4, &a, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        CHECK(a.ndim == 1 && a.shape[0] == 5);
        for (int i = 0; i < 5; i++)
            CHECK(a.data[i] == (double)fv[i]);
        vla_npy_free(&a);
    }
    /* version 3.0, little-endian float64 */
    double d2[2] = {1.0 / 3, -2.5};
    unsigned char r8[16];
    for (int i = 0; i < 2; i++) {
        uint64_t w;
        memcpy(&w, &d2[i], 8);
        for (int j = 0; j < 8; j++)
            r8[8 * i + j] = (unsigned char)(w >> 8 * j);
    }
    CHECK_EQ_INT(
        write_npy_raw(p4, 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,2), }", r8, 16),
        0);
    rc = vla_npy_read(p4, &a, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        CHECK(a.ndim == 2 && a.shape[1] == 2 && same_bits(a.data, d2, 2));
        vla_npy_free(&a);
    }
    remove_tmpdir();
}

TEST(npy_bad)
{
    if (!make_tmpdir()) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    static const struct {
        int major;
        const char *dict;
        size_t ndata;
        const char *reason;
    } bad[] = {
        {1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", 16, "fortran_order"},
        {1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", 16, "big-endian"},
        {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, "unsupported dtype"},
        {1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", 32, "unsupported dtype"},
        {1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", 16, "dtype"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 16, "truncated"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 15, "truncated"},
        {1, "['descr', '<f8']", 16, "not a dict"},
        {1, "{'descr': '<f8', 'shape': (2,), }", 16, "fortran_order"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", 16, "key"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }", 16, "shape"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", 16, "shape"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3, 4, 5, 6, 7, 8, 9), }", 16,
         "dimensions"},
        {1,
         "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), "
         "}",
         16, "overflow"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", 16,
         "too large"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", 16,
         "truncated"},
        {1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }", 16, "fortran_order"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", 16, "malformed"},
        {4, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, "version"},
    };
    static const unsigned char zeros[64];
    vla_error err = {0};
    const char *p = tmp_path("bad.npy");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_npy_raw(p, bad[i].major, bad[i].dict, zeros, bad[i].ndata);
        vla_npy a;
        err.msg[0] = 0;
        int rc = vla_npy_read(p, &a, &err);
        CHECK_MSG(rc == VLA_EFORMAT && strstr(err.msg, p) && strstr(err.msg, bad[i].reason),
                  "%s: rc %d, reason '%s'", bad[i].dict, rc, err.msg);
        CHECK(a.data == NULL);
        if (!rc)
            vla_npy_free(&a);
    }
    /* bad magic, and truncation at every point of a valid file's header */
    vla_npy a;
    CHECK_EQ_INT(write_bytes(p, "\x93NUMPZ\x01\x00\x10\x00{}", 12), 0);
    CHECK_EQ_INT(vla_npy_read(p, &a, &err), VLA_EFORMAT);
    CHECK_MSG(strstr(err.msg, "magic"), "%s", err.msg);
    double x[3] = {1, 2, 3};
    long sh[1] = {3};
    CHECK_EQ_INT(vla_npy_write(p, x, 1, sh), 0);
    unsigned char whole[64 + 24];
    FILE *f = fopen(p, "rb");
    size_t n = f ? fread(whole, 1, sizeof whole, f) : 0;
    if (f)
        fclose(f);
    CHECK_EQ_INT(n, sizeof whole);
    int all = 1;
    for (size_t cut = 0; cut < n; cut++) {
        write_bytes(p, whole, cut);
        all &= vla_npy_read(p, &a, &err) == VLA_EFORMAT && strstr(err.msg, p);
    }
    CHECK(all);
    CHECK_EQ_INT(vla_npy_read(tmp_path("missing.npy"), &a, &err), VLA_EIO);
    CHECK(strstr(err.msg, "missing.npy") != NULL);
    remove_tmpdir();
}
