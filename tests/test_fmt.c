/* test_fmt.c: the 16-bit formats. Every binary16 and bfloat16 bit pattern round-trips, ties go to
 * even, subnormals, overflow and NaN behave, and one operation of lib/'s 16-bit arithmetic (binary32
 * result rounded again) equals MPFR's correctly rounded result in that format. */
#include "check.h"
#include "fmt.h"
#include "vlaref.h"
#include "vlastab.h"
#include <stdint.h>
#include <string.h>

static int same_bits(float a, float b) { return vla_f2u(a) == vla_f2u(b); }

TEST(f16_every_pattern_roundtrips)
{
    long bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float x = vla_f16_value((uint16_t)h);
        int nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
        if (nan) {
            bad += !isnan(x) || !isnan(vla_round_f16(x));
            continue;
        }
        /* the independent decoder: GCC's _Float16 (libgcc or F16C) */
        _Float16 g;
        uint16_t hb = (uint16_t)h;
        memcpy(&g, &hb, 2);
        bad += !same_bits(x, (float)g);
        bad += vla_f16_bits(x) != h;
        bad += !same_bits(vla_round_f16(x), x);
    }
    CHECK_EQ_INT(bad, 0);
}

/* between two adjacent binary16 values the midpoint goes to the even one, and anything off the
 * midpoint to the nearer one; the largest finite value's upper midpoint (65520) overflows */
TEST(f16_ties_and_overflow)
{
    long bad = 0;
    for (uint32_t h = 0; h < 0x7bff; h++) { /* positive finite, h+1 finite */
        float a = vla_f16_value((uint16_t)h), b = vla_f16_value((uint16_t)(h + 1));
        float m = (a + b) / 2; /* exact in binary32 */
        float even = (h & 1) ? b : a;
        bad += !same_bits(vla_round_f16(m), even) || !same_bits(vla_round_f16(-m), -even);
        bad += !same_bits(vla_round_f16(nextafterf(m, 0)), a);
        bad += !same_bits(vla_round_f16(nextafterf(m, INFINITY)), b);
        _Float16 g = (_Float16)m; /* GCC's conversion must agree at ties too */
        bad += !same_bits((float)g, even);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(vla_round_f16(65504.0f) == 65504.0f);
    CHECK(vla_round_f16(65519.996f) == 65504.0f);
    CHECK(isinf(vla_round_f16(65520.0f)) && vla_round_f16(-65520.0f) < 0);
    CHECK(vla_round_f16(0x1p-25f) == 0.0f && signbit(vla_round_f16(-0x1p-25f)));
    CHECK(vla_round_f16(0x1.000002p-25f) == 0x1p-24f);
    CHECK(vla_round_f16(0x1.8p-24f) == 0x1p-23f); /* tie between 1 and 2 ulps: to even (2) */
    CHECK(isnan(vla_round_f16(NAN)) && isinf(vla_round_f16(INFINITY)));
    CHECK_EQ_INT(vla_f16_bits(INFINITY), 0x7c00);
    CHECK_EQ_INT(vla_f16_bits(-0.0f), 0x8000);
}

TEST(bf16_patterns_ties_subnormals_nan)
{
    long bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float x = vla_bf16_value((uint16_t)h);
        if (isnan(x)) {
            bad += !isnan(vla_round_bf16(x));
            continue;
        }
        bad += vla_bf16_bits(x) != h || !same_bits(vla_round_bf16(x), x);
        if (h < 0x7f7f) { /* positive finite with a finite successor */
            float b = vla_bf16_value((uint16_t)(h + 1));
            /* the midpoint: one more bit below the last, exact in binary32 */
            float m = vla_u2f((h << 16) | 0x8000u);
            float even = (h & 1) ? b : x;
            bad += !same_bits(vla_round_bf16(m), even);
            bad += !same_bits(vla_round_bf16(nextafterf(m, 0)), x);
            bad += !same_bits(vla_round_bf16(nextafterf(m, INFINITY)), b);
        }
    }
    CHECK_EQ_INT(bad, 0);
    float maxb = vla_bf16_value(0x7f7f);                     /* 0x1.fep127 */
    CHECK(vla_round_bf16(vla_u2f(0x7f7f7fffu)) == maxb);     /* below the midpoint */
    CHECK(isinf(vla_round_bf16(vla_u2f(0x7f7f8000u))));      /* the midpoint: even is 2^128 */
    CHECK(isnan(vla_round_bf16(vla_u2f(0x7f80ffffu))));      /* a NaN that the add would make Inf */
    CHECK(vla_round_bf16(0x1p-133f) == 0x1p-133f);           /* smallest subnormal */
    CHECK(vla_round_bf16(0x1p-134f) == 0.0f);                /* its half: tie to even (0) */
    CHECK(vla_round_bf16(0x1.8p-133f) == 0x1p-132f);         /* 1.5 ulps: tie to even (2) */
}

/* x spread over the format's whole range, subnormals included, as a value of that format */
static float random_in(vla_fmt f, uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    uint16_t b = (uint16_t)(*s >> 48);
    float x = f == VLA_FMT_F16 ? vla_f16_value(b) : vla_bf16_value(b);
    return isfinite(x) ? x : 1.0f;
}

/* the claim of fmt.h: binary32 arithmetic on two 16-bit values, rounded again, is the correctly
 * rounded 16-bit result of +, -, *, /, sqrt (no double-rounding error), checked against MPFR */
TEST(f16_bf16_arithmetic_matches_mpfr)
{
    const char ops[] = "+-*/s";
    for (int fi = 0; fi < 2; fi++) {
        vla_fmt f = fi ? VLA_FMT_BF16 : VLA_FMT_F16;
        long bad = 0;
        uint64_t s = 12345 + fi;
        for (int o = 0; o < 5; o++)
            for (int i = 0; i < 40000; i++) {
                float a = random_in(f, &s), b = random_in(f, &s), r;
                if (ops[o] == 's')
                    a = fabsf(a);
                switch (ops[o]) {
                case '+': r = a + b; break;
                case '-': r = a - b; break;
                case '*': r = a * b; break;
                case '/': r = a / b; break;
                default: r = sqrtf(a); break;
                }
                r = f == VLA_FMT_F16 ? vla_round_f16(r) : vla_round_bf16(r);
                double ref = vref_round_op(f, ops[o], a, b);
                float rf = (float)ref;
                if (!(isnan(r) && isnan(ref)) && !same_bits(r, rf)) {
                    if (bad++ < 3)
                        CHECK_MSG(0, "%s %a %c %a: lib %a, MPFR %a", vla_fmt_name(f), a, ops[o], b, r,
                                  ref);
                }
            }
        CHECK_EQ_INT(bad, 0);
    }
}

/* one correctly rounded conversion from binary64 (inputs, constants), against MPFR */
TEST(round_fmt_from_double_matches_mpfr)
{
    uint64_t s = 99;
    long bad = 0;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double x = ldexp((double)(s >> 11) * 0x1p-53, (int)((s >> 3) % 300) - 150);
        if (i % 4 == 1) /* a midpoint of binary16's grid (normal or subnormal), or beyond */
            x = ldexp((double)(2 * (s >> 53) + 1), (int)((s >> 3) % 48) - 36);
        else if (i % 4 == 2) /* a midpoint of bfloat16's grid */
            x = ldexp((double)(2 * (s >> 56) + 1), (int)((s >> 3) % 280) - 142);
        if (s & 1)
            x = -x;
        for (int f = 0; f < VLA_NFMT; f++) {
            double a = vla_round_fmt((vla_fmt)f, x), b = vref_round_op((vla_fmt)f, 'c', x, 0);
            if (memcmp(&a, &b, sizeof a) && bad++ < 3)
                CHECK_MSG(0, "%s(%a): lib %a, MPFR %a", vla_fmt_name((vla_fmt)f), x, a, b);
        }
    }
    CHECK_EQ_INT(bad, 0);
    /* a double just above a binary16 midpoint must not double-round through binary32 */
    double x = 1.0 + 0x1p-11 + 0x1p-40;
    CHECK(vla_round_fmt(VLA_FMT_F16, x) == 1.0 + 0x1p-10);
    CHECK((double)vla_round_f16((float)x) == 1.0); /* what the naive route gives */
}

/* What GCC does with _Float16 (GCC 12, x86-64 without AVX512-FP16, -fexcess-precision=standard):
 * each assignment rounds to binary16, but a whole expression is evaluated in binary32 and rounded
 * once (FLT_EVAL_METHOD 0 of ISO/IEC TS 18661-3 covers _Float16 that way). So `_Float16` code
 * written as one expression is NOT binary16 arithmetic; lib/ rounds every operation itself. The
 * test pins both behaviours, so a compiler that changes either is noticed. */
TEST(gcc_float16_rounds_per_assignment_not_per_operation)
{
    uint64_t s = 7;
    long bad_stmt = 0, bad_expr = 0, differ = 0;
    for (int i = 0; i < 100000; i++) {
        float a = random_in(VLA_FMT_F16, &s), b = random_in(VLA_FMT_F16, &s),
              c = random_in(VLA_FMT_F16, &s);
        if (c == 0)
            c = 1;
        _Float16 ga = (_Float16)a, gb = (_Float16)b, gc = (_Float16)c;
        _Float16 t1 = ga * gb, t2 = gc * ga, t3 = gb / gc, t4 = t1 + t2, g_stmt = t4 - t3;
        _Float16 g_expr = ga * gb + gc * ga - gb / gc;
        float per_op = vla_round_f16(vla_round_f16(a * b) + vla_round_f16(c * a));
        per_op = vla_round_f16(per_op - vla_round_f16(b / c));
        float once = vla_round_f16(a * b + c * a - b / c);
        bad_stmt += !(isnan(per_op) && isnan((float)g_stmt)) && !same_bits(per_op, (float)g_stmt);
        bad_expr += !(isnan(once) && isnan((float)g_expr)) && !same_bits(once, (float)g_expr);
        differ += !same_bits(once, per_op) && !(isnan(once) && isnan(per_op));
    }
    CHECK_EQ_INT(bad_stmt, 0);
    CHECK_EQ_INT(bad_expr, 0);
    CHECK_MSG(differ > 1000, "one rounding and per-operation rounding differ in %ld of 1e5", differ);
}

TEST(policy_names_and_formats)
{
    vla_prec p;
    for (int i = 0; i < VLA_NPREC; i++) {
        CHECK(vla_prec_parse(vla_prec_name((vla_prec)i), &p) == 0 && p == (vla_prec)i);
    }
    CHECK(vla_prec_parse("f8", &p) == VLA_EINVAL);
    CHECK(vla_prec_storage(VLA_F16_F32) == VLA_FMT_F16 && vla_prec_compute(VLA_F16_F32) == VLA_FMT_F32);
    CHECK(vla_fmt_unit_roundoff(VLA_FMT_BF16) == 0x1p-8);
    CHECK(vla_fmt_min_normal(VLA_FMT_F16) == 0x1p-14);
}

/* stochastic rounding: the result is one of the two neighbours, and averaged over every random
 * word it is exactly frac to K bits of the way between them (unbiased to 2^-K ulp) */
TEST(stochastic_rounding_is_unbiased)
{
    uint64_t s = 4242;
    long bad = 0;
    for (int fi = 0; fi < 2; fi++) {
        int K = fi ? 16 : 13;
        for (int i = 0; i < 300; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            /* binary32 values across the range, subnormals of both formats included */
            float x = ldexpf((float)(s >> 40) * 0x1p-24f, (int)((s >> 8) % 45) - (fi ? 140 : 30));
            if (s & 1)
                x = -x;
            float dn = fi ? vla_round_bf16(x) : vla_round_f16(x);
            /* the neighbours: round to nearest gives one; the other is one grid step away */
            float a = fabsf(x), b = fabsf(dn);
            float lo = b <= a ? b : 0, hi = b >= a ? b : 0;
            double sum = 0;
            for (uint32_t r = 0; r < (1u << K); r++) {
                float y = fi ? vla_sr_bf16(x, r) : vla_sr_f16(x, r);
                float ay = fabsf(y);
                if (b <= a ? ay < lo : ay > hi)
                    bad++;
                sum += ay;
            }
            double mean = sum / (1u << K);
            /* |mean - |x|| is below 2^-K of the grid step: the truncation of frac */
            double step = fi ? ldexp(1.0, ilogb(a < 0x1p-126f ? 0x1p-126f : a) - 7)
                             : ldexp(1.0, ilogb(a < 0x1p-14f ? 0x1p-14f : a) - 10);
            if (!(fabs(mean - a) <= step * ldexp(1.0, -K) * 1.0000001) && bad++ < 3)
                CHECK_MSG(0, "sr mean %a vs x %a (step %a)", mean, a, step);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(vla_sr_f16(1.0f + 0x1p-11f, 0) == 1.0f);           /* word 0: down */
    CHECK(vla_sr_f16(1.0f + 0x1p-11f, 0x1000) == 1.0f + 0x1p-10f); /* frac 1/2: up from word 2^12 */
    CHECK(vla_sr_f16(1.0f + 0x1p-11f, 0x0fff) == 1.0f);
    CHECK(isinf(vla_sr_f16(65519.0f, 0x1fff)) && vla_sr_f16(65519.0f, 0) == 65504.0f);
    CHECK(vla_sr_bf16(1.0f + 0x1p-9f, 0xbfff) == 1.0f);            /* frac 1/4 */
    CHECK(vla_sr_bf16(1.0f + 0x1p-9f, 0xc000) == 1.0f + 0x1p-7f);
    CHECK(isnan(vla_sr_bf16(NAN, 5)) && isnan(vla_sr_f16(NAN, 5)));
}
