/* test_dd.c: the double-double exact reference (reference/ref_model_dd.c)
 * against MPFR's exact reference at 256 bits: its elementary functions on their whole ranges,
 * and every model's state and read-out, seq and chunk forms, the gate maps and base 2, each to
 * within a bound derived from u = 2^-53 (docs/math.md 6.1.1). VLA_DD_REPORT=1 prints the measured
 * worst per case. */
#include "check.h"
#include "engine_impl.h"
#include "tables.h"
#include "vlaref.h"
#include "vlastab.h"
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double U2 = 0x1p-106; /* u^2, u = 2^-53 */

static int report(void)
{
    const char *e = getenv("VLA_DD_REPORT");
    return e && *e == '1';
}

/* |(r0 + r1) - f(a0 + a1)| / |f(a0 + a1)|, f at 256 bits; for cos, sin (at most 1 in magnitude)
 * and floor (exact) the absolute error */
static double fun_err(char f, double a0, double a1)
{
    double a[2] = {a0, a1}, r[2];
    vref_dd_fun(f, a, r);
    mpfr_t x, y, z;
    mpfr_inits2(256, x, y, z, (mpfr_ptr)0);
    mpfr_set_d(x, a0, MPFR_RNDN);
    mpfr_add_d(x, x, a1, MPFR_RNDN);
    if (f == 'e')
        mpfr_exp(y, x, MPFR_RNDN);
    else if (f == '2')
        mpfr_exp2(y, x, MPFR_RNDN);
    else if (f == 'c')
        mpfr_cos(y, x, MPFR_RNDN);
    else if (f == 's')
        mpfr_sin(y, x, MPFR_RNDN);
    else if (f == 'f')
        mpfr_floor(y, x);
    else
        mpfr_log(y, x, MPFR_RNDN);
    mpfr_set_d(z, r[0], MPFR_RNDN);
    mpfr_add_d(z, z, r[1], MPFR_RNDN);
    mpfr_sub(z, z, y, MPFR_RNDN);
    if (!strchr("csf", f))
        mpfr_div(z, z, y, MPFR_RNDN);
    double e = fabs(mpfr_get_d(z, MPFR_RNDN));
    mpfr_clears(x, y, z, (mpfr_ptr)0);
    return e;
}

/* exp on [-670, 700], exp2 on [-965, 1000] (results above 2^-969, where a pair's low part is
 * normal), log on [2^-1000, 2^1000] and near 1, each argument
 * a pair with a random low part: the relative error of the pair. Bound 16 u^2 (2.0e-31): the
 * reduction and the series err by a few u^2, each of the six doublings of expm1 adds its own
 * u^2 or so without amplifying the others, log's Newton step adds exp's error to its own; the
 * measured worst (VLA_DD_REPORT=1): exp 2.8e-32, exp2 2.1e-32, log 5.5e-32 (4.5 u^2) */
TEST(dd_elementary_functions)
{
    unsigned long s = 12345;
    double worst[3] = {0};
    const char fs[3] = {'e', '2', 'l'};
    for (int i = 0; i < 3000; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double r = (double)(s >> 11) * 0x1p-53, r2 = (double)((s >> 3) & 0xffff) * 0x1p-16 - 0.5;
        for (int f = 0; f < 3; f++) {
            double a = f == 0   ? r * 1370 - 670
                       : f == 1 ? r * 1965 - 965
                       : i % 2  ? ldexp(1 + r, (int)((r2 + 0.5) * 2000) - 1000)
                                : 1 + (r - 0.5) * ldexp(1, -(i % 60));
            if (i % 7 == 0 && f < 2) /* small arguments: exp near 1 */
                a = ldexp(r - 0.5, -(i % 50));
            double e = fun_err(fs[f], a, a * r2 * 0x1p-54);
            worst[f] = e > worst[f] ? e : worst[f];
            CHECK_MSG(e <= 16 * U2, "%c(%a): relative error %.3g > 16 u^2 = %.3g", fs[f], a, e,
                      16 * U2);
        }
    }
    if (report())
        printf("dd functions: worst relative error exp %.3g, exp2 %.3g, log %.3g (u^2 = %.3g)\n",
               worst[0], worst[1], worst[2], U2);
}

/* cos and sin (mamba3's rotations) on [-1000, 1000], near the multiples of pi/2 (where the
 * reduction a - n pi/2 cancels) and at tiny arguments, each argument a pair with a random low
 * part: the absolute error. Bound 8 u^2 (9.9e-32): the reduction errs by a few u^2 |r| plus
 * 2^-160 |n|, the two series by a few u^2; measured worst (VLA_DD_REPORT=1): cos 1.4e-32, sin
 * 1.5e-32. floor, exact, on pairs whose high part is an integer (the low part's floor counts)
 * and is not. */
TEST(dd_cos_sin_floor)
{
    unsigned long s = 777;
    double worst[2] = {0};
    for (int i = 0; i < 3000; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double r = (double)(s >> 11) * 0x1p-53, r2 = (double)((s >> 3) & 0xffff) * 0x1p-16 - 0.5;
        double a = i % 5 == 0   ? nearbyint(r * 1300 - 650) * M_PI_2 + ldexp(r2, -(i % 40))
                   : i % 7 == 0 ? ldexp(r - 0.5, -(i % 50))
                                : r * 2000 - 1000;
        for (int f = 0; f < 2; f++) {
            double e = fun_err("cs"[f], a, a * r2 * 0x1p-54);
            worst[f] = e > worst[f] ? e : worst[f];
            CHECK_MSG(e <= 8 * U2, "%c(%a): absolute error %.3g > 8 u^2 = %.3g", "cs"[f], a, e,
                      8 * U2);
        }
        double h = i % 2 ? nearbyint(a) : a, l = h * r2 * 0x1p-54;
        CHECK_MSG(fun_err('f', h, l) == 0, "floor(%a + %a) not exact", h, l);
    }
    if (report())
        printf("dd functions: worst absolute error cos %.3g, sin %.3g (u^2 = %.3g)\n", worst[0],
               worst[1], U2);
}

/* The lanes' exp and exp2 (phi's exp and the chunk forms' gates in the vector lanes) give the
 * scalar functions' bits, +0 and -0 apart, on their whole ranges and past them: the reduction's
 * k = 0 and k != 0, the low part's subnormal range, the results that underflow and overflow, the
 * bounds themselves (709.79, -746, 1024, -1076) and their neighbours, +-0, +-Inf and NaN. */
TEST(dd_lanes_functions_bits_equal)
{
    double a[16] = {0}, r[16];
    if (vref_dd_fun8('e', a, r) == VLA_ENOTSUP) {
        vla_test_skip("this processor has no AVX-512 (F, VL, DQ): no lanes");
        return;
    }
    static const double edge[] = {0, -0.0, INFINITY, -INFINITY, NAN, 709.79, -746, 1024, -1076,
                                  709.78, 709.8, -745.9, -746.1, 1023.9, 1024.1, -1075.9,
                                  -1076.1, -708.4, -708.3, 0x1p-1074, -0x1p-1074, 0.5, -0.5,
                                  0.34657359027997264, -0.34657359027997264, 1, -1, 700, -700};
    const int ne = sizeof edge / sizeof *edge;
    unsigned long s = 777;
    long bad = 0;
    for (int i = 0; i < 4000; i++) {
        for (int l = 0; l < 8; l++) {
            s = s * 6364136223846793005ul + 1442695040888963407ul;
            double u = (double)(s >> 11) * 0x1p-53,
                   lo = ((double)((s >> 3) & 0xffff) - 32768) * 0x1p-70;
            double h = i < 4 ? edge[(i * 8 + l) % ne]
                       : i % 3 == 0 ? ldexp(u - 0.5, -(int)(s % 60)) /* near 0 */
                       : (u - 0.5) * 2200;                           /* both ranges and past */
            a[l] = h;
            a[8 + l] = isfinite(h) && h != 0 ? h * lo : 0; /* a low part below h's ulp */
        }
        for (int f = 0; f < 2; f++) {
            const char fc = f ? '2' : 'e';
            CHECK(vref_dd_fun8(fc, a, r) == VLA_OK);
            for (int l = 0; l < 8; l++) {
                double x[2] = {a[l], a[8 + l]}, y[2];
                vref_dd_fun(fc, x, y);
                if (memcmp(&y[0], &r[l], sizeof(double)) ||
                    memcmp(&y[1], &r[8 + l], sizeof(double))) {
                    if (bad++ < 5)
                        CHECK_MSG(0, "%c(%a + %a): lanes %a + %a, scalar %a + %a", fc, x[0], x[1],
                                  r[l], r[8 + l], y[0], y[1]);
                }
            }
        }
    }
    CHECK_MSG(bad == 0, "%ld of 64000 results differ from the scalar function's bits", bad);
}

/* max_i |(a_i + alo_i) - (b_i + blo_i)| / max_i |b_i|: the normwise difference of two models'
 * quantities at double-double resolution */
static double diff(const vla_model *a, const vla_model *b, vla_quantity q, size_t n)
{
    double *x = malloc(4 * n * sizeof *x), *xl = x + n, *y = xl + n, *yl = y + n, num = 0, den = 0;
    CHECK(vla_model_get(a, q, x) == 0 && vref_model_get_lo(a, q, xl) == 0);
    CHECK(vla_model_get(b, q, y) == 0 && vref_model_get_lo(b, q, yl) == 0);
    for (size_t i = 0; i < n; i++) {
        double e = fabs((x[i] - y[i]) + (xl[i] - yl[i]));
        num = e > num ? e : num;
        den = fabs(y[i]) > den ? fabs(y[i]) : den;
    }
    free(x);
    return den > 0 ? num / den : num;
}

/* a case: model mk (delta with its decay when dec), form, precision, stream; the tweak names the
 * gate setting. Steps T, d = 8. Returns the worst difference over S, A, o at every 32nd step */
static double run(vla_model_kind mk, int dec, const char *form, vla_prec p, const char *stream,
                  const char *tweak, long T)
{
    const int d = 8;
    vla_config c;
    vla_config_default(&c, mk, d);
    c.prec = p;
    if (dec)
        c.delta_form = VLA_DELTA_DECAY;
    if (form && vla_form_parse(&c, form))
        return -1;
    if (vla_form_pending(&c, 1)) {
        c.period = 64;
        c.clamp_on = 0;
        c.guard = mk == VLA_VLA3;
    }
    if (!strcmp(tweak, "sigmoid")) {
        c.gate_lb = -5;
        c.gate_map = VLA_GATE_SIGMOID;
    } else if (!strcmp(tweak, "base2"))
        c.base2 = 1;
    if (vla_track_check(&c, NULL) || vla_form_check(&c, NULL))
        return -1;
    vla_model *a, *b;
    vla_stream *s;
    vla_error err = {0};
    CHECK(vref_dd_model_new(&a, &c) == 0);
    CHECK(vref_model_new(&b, &c, VREF_EXACT, 256) == 0);
    CHECK_MSG(vla_stream_open(&s, stream, d, d, 4321, &err) == 0, "%s", err.msg);
    vla_stream_want(s, vla_model_reads(&c));
    vla_step_buf buf;
    vla_step_buf_alloc(&buf, d, d);
    double worst = 0;
    for (long t = 1; t <= T; t++) {
        vla_stream_get(s, 0, t, &buf);
        vla_input in = vla_input_of(&buf);
        if (dec)
            in.decay = vla_test_decay(t);
        CHECK(vla_model_step(a, &in) == 0 && vla_model_step(b, &in) == 0);
        if (t % 32)
            continue;
        double e = diff(a, b, VLA_Q_S, (size_t)d * d);
        e = fmax(e, diff(a, b, VLA_Q_O, d));
        if (vla_model_has_A(mk))
            e = fmax(e, diff(a, b, VLA_Q_A, (size_t)d * d));
        worst = fmax(worst, e);
    }
    vla_step_buf_free(&buf);
    vla_stream_close(s);
    vla_model_free(a);
    vla_model_free(b);
    return worst;
}

/* Every model (delta also with its decay, whose log is an input transform), seq and chunk:16, in
 * f64, f32 and bf16 (the io formats the exact reference rounds inputs into), on lmlike and gauss; kda
 * with the sigmoid gate map, gdn's chunk in base 2. The bound d T u^2 (2.5e-29 at d = 8,
 * T = 256): a step's O(d) operations on an entry err by a few u^2 each (at most 15 u^2, DWDivDW2;
 * 16 u^2 the functions above), carried on linearly over T steps, the constant taken as 1; the
 * measured worst (VLA_DD_REPORT=1) is 4.3e-31 (35 u^2, rls chunk:16 f64 gauss), 59 times below
 * it (phi's x + 1 formed by FastTwoSum with |x| < 1 failed it at 3.4e-16 in f64) and far below the 1e-19 that a binary64 error printed to 3 digits would notice */
TEST_SLOW(dd_models_against_mpfr_exact)
{
    const long T = 256;
    const double bound = 8.0 * T * U2;
    const char *const forms[] = {"seq", "chunk:16"};
    const vla_prec precs[] = {VLA_F64, VLA_F32, VLA_BF16};
    const char *const streams[] = {"lmlike", "gauss"};
    double all = 0;
    for (int m = 0; m <= VLA_NMODEL; m++)
        for (int f = 0; f < 2; f++)
            for (int p = 0; p < 3; p++)
                for (int st = 0; st < 2; st++) {
                    const vla_model_kind mk = m < VLA_NMODEL ? (vla_model_kind)m : VLA_DELTA;
                    const char *tw = mk == VLA_KDA && st ? "sigmoid"
                                     : mk == VLA_GDN && f ? "base2"
                                                          : "";
                    double e = run(mk, m == VLA_NMODEL, forms[f], precs[p], streams[st], tw, T);
                    if (e < 0)
                        continue;
                    all = fmax(all, e);
                    CHECK_MSG(e <= bound, "%s%s %s %s %s %s: dd vs MPFR %.3g > %.3g",
                              vla_model_name(mk), m == VLA_NMODEL ? " (decay)" : "", forms[f],
                              vla_prec_name(precs[p]), streams[st], tw, e, bound);
                    if (report())
                        printf("dd vs mpfr256: %-6s%s %-8s %-5s %-7s %-7s %.3g\n",
                               vla_model_name(mk), m == VLA_NMODEL ? "+dec" : "    ", forms[f],
                               vla_prec_name(precs[p]), streams[st], tw, e);
                }
    if (report())
        printf("dd vs mpfr256: worst %.3g (bound %.3g)\n", all, bound);
}

/* the check of every run (vref_ddcheck): a dd engine passes it, within the bound above, and
 * describes itself; an engine that is not exact to 1e-24 (MPFR at 64 bits) fails it, and so does
 * the dd reference where it overflows and MPFR does not (la's S ~ 1e400 on gauss:1e200) */
static double checked(const vla_backend *b, long bits, vla_model_kind mk, const char *stream,
                      int *ok, char *why, size_t len)
{
    vla_engine_spec sp = {0};
    vla_config_default(&sp.cfg, mk, 8);
    sp.cfg.prec = VLA_F64;
    sp.backend = b;
    sp.ref_bits = bits;
    sp.runs = 2;
    sp.stream = stream;
    sp.seed = 9;
    sp.round_inputs = VLA_FMT_F64;
    vla_engine *e;
    vref_ddcheck *c;
    vla_error err;
    CHECK_MSG(vla_engine_new(&e, &sp, &err) == 0, "%s", err.msg);
    CHECK_MSG(vref_ddcheck_new(&c, &sp, 256, &err) == 0, "%s", err.msg);
    for (long t = 64; t <= 512; t *= 2) {
        CHECK(vla_engine_advance(e, t) == 0);
        CHECK(vref_ddcheck_at(c, e, t) == 0);
    }
    *ok = vref_ddcheck_ok(c);
    vref_ddcheck_describe(c, why, len);
    double worst = vref_ddcheck_worst(c);
    vref_ddcheck_free(c);
    vla_engine_free(e);
    return worst;
}

/* The check on prepared inputs in a ring (vla_inputs_open's windows, as vla-forms and vla-check
 * feed their engines): its MPFR engine reads the same ring, so it follows every refill
 * (vref_ddcheck_follow) and then agrees with dd to the trust; a checkpoint a whole ring after the
 * last one is refused (VLA_ERANGE), not compared on overwritten inputs (vla-forms did that, at
 * checkpoints 832 steps apart with a ring of 256, and fell back to MPFR on a difference of 0.74) */
TEST(dd_check_follows_a_ring_of_inputs)
{
    enum { WIN = 64, D = 8, RUNS = 2 };
    const long cks[] = {32, 64, 300, 1000};
    for (int follow = 1; follow >= 0; follow--) {
        vla_inputs in;
        vla_error err = {0};
        CHECK_MSG(vla_inputs_open(&in, "lmlike", 3, D, D, RUNS, WIN, 1000, 0, &err) == 0,
                  "%s", err.msg);
        vla_engine_spec sp = {0};
        vla_config_default(&sp.cfg, VLA_VLA3, D);
        sp.cfg.prec = VLA_F64;
        sp.backend = vref_backend_dd();
        sp.runs = RUNS;
        sp.in = in.in;
        sp.is_read = in.is_read;
        sp.T = in.T;
        sp.cycle = 1;
        sp.round_inputs = VLA_FMT_F64;
        vla_engine *e;
        vref_ddcheck *c;
        CHECK_MSG(vla_engine_new(&e, &sp, &err) == 0, "%s", err.msg);
        CHECK_MSG(vref_ddcheck_new(&c, &sp, 4096, &err) == 0, "%s", err.msg);
        int refused = 0;
        for (long t = 0, k = 0; k < 4; k++)
            for (long to; t < cks[k]; t = to) {
                to = t + WIN < cks[k] ? t + WIN : cks[k];
                CHECK(vla_inputs_fill(&in, t, to, &err) == 0);
                CHECK(vla_engine_advance(e, to) == 0);
                if (follow)
                    CHECK(vref_ddcheck_follow(c, to) == 0);
                if (to == cks[k]) {
                    int r = vref_ddcheck_at(c, e, to);
                    refused += r == VLA_ERANGE;
                    CHECK_MSG(r == 0 || (!follow && r == VLA_ERANGE), "t = %ld: %d", to, r);
                }
            }
        if (follow)
            CHECK_MSG(vref_ddcheck_ok(c) && vref_ddcheck_compared(c) == 4, "worst %g over %ld",
                      vref_ddcheck_worst(c), vref_ddcheck_compared(c));
        else /* 64 -> 300 and 300 -> 1000 are more than a ring apart */
            CHECK_MSG(refused == 2 && vref_ddcheck_compared(c) == 2, "%d refused, %ld compared",
                      refused, vref_ddcheck_compared(c));
        vref_ddcheck_free(c);
        vla_engine_free(e);
        vla_inputs_free(&in);
    }
}

/* ... and vla-forms, whose checkpoints lie more than a ring apart past t ~ 1000, follows it: a gdn
 * sweep of 3000 steps trusts its double-double reference (5.5e-32 from MPFR). Before the rule its
 * check compared stale inputs, differed by 6e-21 and fell back to MPFR. */
TEST(dd_forms_sweep_trusts_its_reference)
{
    char *out = NULL;
    int st = vla_test_sh(&out, "bin/vla-forms --what sweep --model gdn --stream lmlike --d 8 "
                               "--steps 3000 --runs 1 --forms seq,chunk:16 --precisions f32 "
                               "--out - 2>&1 | grep '^# exact_reference'");
    CHECK_MSG(st == 0 && out && strstr(out, "# exact_reference: double-double") &&
                  strstr(out, "to t = 2992"),
              "exit %d: %s", st, out ? out : "");
    free(out);
}

TEST(dd_check_of_every_run)
{
    char why[400];
    int ok;
    double w = checked(vref_backend_dd(), 0, VLA_VLA3, "lmlike", &ok, why, sizeof why);
    CHECK_MSG(ok && w <= 8.0 * 256 * U2 && strstr(why, "double-double") &&
                  strstr(why, "3 checkpoints to t = 256"),
              "dd: %s", why);
    w = checked(vref_backend_exact(), 64, VLA_VLA3, "lmlike", &ok, why, sizeof why);
    CHECK_MSG(!ok && w > VREF_DD_TRUST && strstr(why, "so it was not used"), "mpfr64: %s", why);
    w = checked(vref_backend_dd(), 0, VLA_LA, "gauss:1e200", &ok, why, sizeof why);
    CHECK_MSG(!ok && isnan(w), "dd overflowing: %s", why);
    /* said in words, not as printf's nan or -nan */
    CHECK_MSG(!strstr(why, "nan") && strstr(why, "not both finite"), "dd overflowing: %s", why);
    if (report())
        printf("dd check: mpfr at 64 bits: %s\n", why);
}

/* what the dd reference is for: speed. vla3 at d = 32 on lmlike, f64 inputs, process CPU time
 * (so that the ratio holds on a loaded machine): measured 7.2x MPFR's 256 bits on AMD EPYC
 * (VLA_DD_REPORT=1 prints it); asserted at least 2x */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

TEST_SLOW(dd_faster_than_mpfr)
{
    const int d = 32;
    vla_config c;
    vla_config_default(&c, VLA_VLA3, d);
    c.prec = VLA_F64;
    vla_error err = {0};
    vla_stream *s;
    vla_step_buf b;
    CHECK(vla_stream_open(&s, "lmlike", d, d, 1, &err) == 0);
    vla_stream_want(s, vla_model_reads(&c));
    vla_step_buf_alloc(&b, d, d);
    const long n[2] = {300, 3000};
    double rate[2];
    for (int k = 0; k < 2; k++) {
        vla_model *m;
        CHECK((k ? vref_dd_model_new(&m, &c) : vref_model_new(&m, &c, VREF_EXACT, 256)) == 0);
        double t0 = cpu_now();
        for (long t = 1; t <= n[k]; t++) {
            vla_stream_get(s, 0, t, &b);
            vla_input in = vla_input_of(&b);
            CHECK(vla_model_step(m, &in) == 0);
        }
        rate[k] = (double)n[k] / (cpu_now() - t0);
        vla_model_free(m);
    }
    CHECK_MSG(rate[1] >= 2 * rate[0], "dd %.0f steps/s, MPFR %.0f: not 2x", rate[1], rate[0]);
    if (report())
        printf("vla3 d=32 f64 lmlike: MPFR 256 bits %.0f steps/s, dd %.0f steps/s (%.1fx)\n",
               rate[0], rate[1], rate[1] / rate[0]);
    vla_step_buf_free(&b);
    vla_stream_close(s);
}

/* ---- the lanes: eight runs' dd models stepped at once (ref_model_dd.c's groups) ---- */

enum { LR = 11, LT_ = 100 }; /* runs: a group of eight and one of three; steps */

typedef struct {
    double *o;   /* every run's read-out at every step its view had one (NaN: none), plus its
                    chunk's read-outs weighted by their rows at a chunk's end */
    int d;
} lane_taps;

static int lane_tap(void *ctx, const vla_step_view *v)
{
    lane_taps *k = ctx;
    double *o = k->o + ((size_t)v->run * LT_ + v->t - 1) * k->d;
    for (int i = 0; i < k->d; i++)
        o[i] = v->o ? v->o[i] : NAN;
    for (int i = 0; v->co && i < v->nco * k->d; i++) /* a chunk's read-outs, into its last step's */
        o[i % k->d] += (i / k->d + 1) * v->co[i];
    return 0;
}

/* spec's runs to steps 37, 64 and LT_ (groups ended inside a chunk, then begun again), with the
 * lanes (VLA_DD_SCALAR unset) or each model alone; every run's saved state (its arrays, t and
 * counts: vla_engine_save) into *state, its views' read-outs into taps */
static int lanes_run(vla_engine_spec sp, int scalar, char **state, size_t *len, double *o,
                     vla_error *err)
{
    if (scalar)
        setenv("VLA_DD_SCALAR", "1", 1);
    else
        unsetenv("VLA_DD_SCALAR");
    lane_taps k = {o, sp.cfg.dv};
    for (size_t i = 0; i < (size_t)LR * LT_ * sp.cfg.dv; i++)
        o[i] = -1;
    sp.on_step = lane_tap;
    sp.ctx = &k;
    sp.taps = VLA_TAP_O;
    vla_engine *e;
    int r = vla_engine_new(&e, &sp, err);
    const long to[] = {37, 64, LT_};
    for (int i = 0; !r && i < 3; i++)
        if ((r = vla_engine_advance(e, to[i])))
            *err = *vla_engine_error(e);
    FILE *f = open_memstream(state, len);
    for (int i = 0; !r && i < LR; i++)
        r = vla_engine_save(e, i, f);
    fclose(f);
    if (!r)
        vla_engine_finish(e);
    vla_engine_free(e);
    unsetenv("VLA_DD_SCALAR");
    return r;
}

/* The lanes give every run the bits of its scalar model: every model (delta with its decay too),
 * every way of tracking A, seq, chunk:16 and scan, io formats f64 and bf16 (the inputs the
 * reference rounds), the gated family with its sigmoid gate map; the state, t and counts
 * (vla_engine_save's bytes) and the read-out of every step's view. Then prepared inputs with reads:
 * first in every run at once, then one run reading where the others write (its group parts, each
 * run alone from there). */
TEST(dd_lanes_bits_equal_scalar)
{
    if (vref_dd_group.width(NULL) < 2) {
        vla_test_skip("this processor has no AVX-512 (F, VL, DQ): the dd reference runs each "
                      "model alone");
        return;
    }
    const int d = 8;
    const char *forms[] = {"seq", "chunk:16", "scan"};
    const vla_prec precs[] = {VLA_F64, VLA_BF16};
    double *oa = malloc(sizeof(double) * LR * LT_ * d), *ob = malloc(sizeof(double) * LR * LT_ * d);
    int cases = 0, same = 0;
    vla_error err = {0};
    for (int mk = 0; mk < VLA_NMODEL + 1; mk++)
        for (int w = 0; w < VLA_NTRACK; w++)
            for (int fo = 0; fo < 3; fo++)
                for (int pi = 0; pi < 2; pi++) {
                    const int dec = mk == VLA_NMODEL; /* delta with its decay */
                    vla_engine_spec sp = {0};
                    vla_config_default(&sp.cfg, dec ? VLA_DELTA : (vla_model_kind)mk, d);
                    if (dec)
                        sp.cfg.delta_form = VLA_DELTA_DECAY;
                    if (!vla_model_has_A(sp.cfg.model) && w)
                        continue;
                    sp.cfg.track = (vla_track)w;
                    sp.cfg.prec = precs[pi];
                    if (vla_col_gate(sp.cfg.model) == 2) {
                        sp.cfg.gate_lb = -5;
                        sp.cfg.gate_map = VLA_GATE_SIGMOID;
                    }
                    if (vla_form_parse(&sp.cfg, forms[fo]) || vla_track_check(&sp.cfg, NULL) ||
                        vla_form_check(&sp.cfg, NULL) ||
                        !vla_backend_supports(vref_backend_dd(), &sp.cfg, &err))
                        continue;
                    sp.backend = vref_backend_dd();
                    sp.runs = LR;
                    sp.stream = "lmlike";
                    sp.seed = 77;
                    sp.round_inputs = vla_prec_io(sp.cfg.prec);
                    char *a = NULL, *b = NULL;
                    size_t na = 0, nb = 0;
                    int ra = lanes_run(sp, 0, &a, &na, oa, &err);
                    CHECK_MSG(ra == 0, "%s %s %s: %s", vla_model_name(sp.cfg.model), forms[fo],
                              vla_track_name(sp.cfg.track), err.msg);
                    int rb = lanes_run(sp, 1, &b, &nb, ob, &err);
                    CHECK_MSG(rb == 0, "alone: %s", err.msg);
                    int eq = !ra && !rb && na == nb && !memcmp(a, b, na) &&
                             !memcmp(oa, ob, sizeof(double) * LR * LT_ * d);
                    CHECK_MSG(eq, "%s%s %s %s %s: the lanes' bits differ from the scalar models'",
                              vla_model_name(sp.cfg.model), dec ? " (decay)" : "", forms[fo],
                              vla_track_name(sp.cfg.track), vla_prec_name(sp.cfg.prec));
                    cases++;
                    same += eq;
                    free(a);
                    free(b);
                }
    CHECK_MSG(cases >= 60, "only %d cases ran", cases);
    /* reads: every run at every 7th step, then run 5 alone at step 50 */
    for (int apart = 0; apart < 2; apart++)
        for (int mk = 0; mk < 2; mk++) {
            vla_inputs in;
            CHECK_MSG(vla_inputs_draw(&in, "lmlike", 5, d, d, LR, LT_, VLA_IN_BETA | VLA_IN_LOGDECAY,
                                      &err) == 0, "%s", err.msg);
            for (int h = 0; h < LR; h++)
                for (long t = 1; t <= LT_; t++)
                    in.is_read[h * LT_ + t - 1] = t % 7 == 0 || (apart && h == 5 && t == 50);
            vla_engine_spec sp = {0};
            vla_config_default(&sp.cfg, mk ? VLA_GDN : VLA_VLA3, d);
            sp.cfg.prec = VLA_F64;
            sp.backend = vref_backend_dd();
            sp.runs = LR;
            sp.in = in.in;
            sp.is_read = in.is_read;
            sp.T = in.T;
            sp.round_inputs = VLA_FMT_F64;
            char *a = NULL, *b = NULL;
            size_t na = 0, nb = 0;
            int ra = lanes_run(sp, 0, &a, &na, oa, &err);
            CHECK_MSG(ra == 0, "reads: %s", err.msg);
            int rb = lanes_run(sp, 1, &b, &nb, ob, &err);
            int eq = !ra && !rb && na == nb && !memcmp(a, b, na) &&
                     !memcmp(oa, ob, sizeof(double) * LR * LT_ * d);
            CHECK_MSG(eq, "%s with reads%s: the lanes' bits differ from the scalar models'",
                      vla_model_name(sp.cfg.model), apart ? ", one run apart" : "");
            cases++;
            same += eq;
            free(a);
            free(b);
            vla_inputs_free(&in);
        }
    if (report())
        printf("dd lanes: %d of %d cases bit for bit\n", same, cases);
    free(oa);
    free(ob);
}
