/* test_ddgrad.c: the backward in double-double (reference/ref_model_dd.c's instantiation of
 * lib/recur_grad.h and recur_gradchunk.h, vref_backward_new's VREF_DD) against MPFR's exact
 * backward at 256 bits, compared below binary64's resolution (vref_dd_grad_check): every model
 * with a backward in the seq form, the variants whose switches fire, and the chunk form of every
 * model that has its backward; and a broken double-double (every product's or quotient's low
 * part dropped: VLA_DD_FAULT) caught by the check that vla-check's judge runs before it trusts
 * dd's gradients; and the backward with its matrix-vector products in the vector lanes (eight
 * rows at once) giving the bits of the scalar text's (VLA_DD_SCALAR). */
#include "check.h"
#include "gseq.h"
#include "engine_impl.h"
#include "model_impl.h"
#include "vlaref.h"
#include "vlastab.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TM 40
#define DM 8


/* model mk at d in its default features (phi by each arithmetic's own exp), variant 1: delta's
 * decay form; 2: vla1's clip, clamp and nudge, vla3's nudge, made to fire within 40 steps */
static void setup(vla_config *cfg, gseq *s, vla_model_kind mk, int d, int variant, uint64_t seed)
{
    gseq_setup(cfg, s, mk, d, TM, variant, seed, -1);
}

/* The bound: every operation of a pair is within a few u_dd = 2^-106 (binary64's u squared) of
 * its exact result (dw_body.h's algorithms), and a gradient entry gathers at most d T terms of O(1)
 * numbers (decays below 1, |beta| < 1, unit or bounded keys) along the backward's sums (dS
 * carried over T steps, d-term dot products): max |dd - exact| / max |exact| <= c d T u_dd. The
 * operations' few u_dd and the growth's worst case are not reached together: c = 1, measured at
 * most 0.021 of it (VLA_TEST_VERBOSE=1 build/tests/run ddgrad: la's seq backward, 8.1e-32 against
 * 3.9e-30). */
static double bound(int d, int T) { return (double)d * T * 0x1p-106; }

static void one(const vla_config *cfg, gseq *s, int T, const char *what, double *worst)
{
    double c[TM * DM], w = -1;
    for (int i = 0; i < T * cfg->dv; i++)
        c[i] = gseq_uni(-1, 1);
    CHECK(vref_dd_grad_check(cfg, T, gseq_input, s, c, &w, NULL) == 0);
    CHECK_MSG(w <= bound(cfg->d, T), "%s %s: dd's gradients %.3g from MPFR's, beyond the bound "
              "%.3g", vla_model_name(cfg->model), what, w, bound(cfg->d, T));
    CHECK_MSG(w <= VREF_DD_TRUST, "%s %s: %.3g, beyond VREF_DD_TRUST", vla_model_name(cfg->model),
              what, w);
    if (getenv("VLA_TEST_VERBOSE"))
        printf("ddgrad %s %s: %.3g (bound %.3g)\n", vla_model_name(cfg->model), what, w,
               bound(cfg->d, T));
    *worst = w > *worst ? w : *worst;
}

/* the seq form: every model with a backward (VLA_MODELS' rows: one without is refused by
 * vla_grad_check, and said), delta's decay form, vla1's and vla3's switches */
TEST(ddgrad_seq_every_model_against_mpfr)
{
    static gseq s;
    double worst = 0;
    int n = 0;
    for (int m = 0; m < VLA_NMODEL + 3; m++) {
        static const vla_model_kind var[] = {VLA_DELTA, VLA_VLA1, VLA_VLA3};
        const vla_model_kind mk = m < VLA_NMODEL ? (vla_model_kind)m : var[m - VLA_NMODEL];
        const int variant = m < VLA_NMODEL ? 0 : m == VLA_NMODEL ? 1 : 2;
        vla_config cfg;
        setup(&cfg, &s, mk, DM, variant, 11 + m);
        if (vla_grad_check(&cfg, NULL))
            continue;
        one(&cfg, &s, TM, variant ? "seq (variant)" : "seq", &worst);
        n++;
    }
    CHECK_MSG(n >= VLA_NMODEL, "only %d of the models and variants have a backward", n);
    CHECK_MSG(worst > 0, "dd and MPFR equal to the last bit everywhere: the comparison compares "
              "nothing");
}

/* the chunk form, chunk:4 (10 chunks) and chunk:16 (a last chunk of 8), of every model with its
 * chunk backward */
TEST(ddgrad_chunk_against_mpfr)
{
    static gseq s;
    double worst = 0;
    int n = 0;
    for (int m = 0; m < VLA_NMODEL + 1; m++) {
        const vla_model_kind mk = m < VLA_NMODEL ? (vla_model_kind)m : VLA_DELTA;
        if (!vla_model_gradchunk(mk))
            continue;
        for (int C = 4; C <= 16; C *= 4) {
            vla_config cfg;
            setup(&cfg, &s, mk, DM, m == VLA_NMODEL, 31 + m);
            cfg.form = VLA_FORM_CHUNK;
            cfg.chunk = C;
            if (vla_grad_check(&cfg, NULL))
                continue;
            one(&cfg, &s, TM, C == 4 ? "chunk:4" : "chunk:16", &worst);
            n++;
        }
    }
    CHECK_MSG(n >= 10, "only %d chunk backwards checked", n);
}

/* a double-double with one operation rounded to binary64 (every MUL's, then every DIV's low part
 * dropped) fails the check by far: its gradients are binary64-accurate at best */
TEST(ddgrad_broken_fails_the_check)
{
    static gseq s;
    vla_config cfg;
    double c[TM * DM];
    setup(&cfg, &s, VLA_GDN, DM, 0, 5);
    for (int i = 0; i < TM * DM; i++)
        c[i] = gseq_uni(-1, 1);
    for (const char *f = "md"; *f; f++) {
        char v[2] = {*f, 0};
        double w = -1;
        setenv("VLA_DD_FAULT", v, 1);
        const int r = vref_dd_grad_check(&cfg, TM, gseq_input, &s, c, &w, NULL);
        unsetenv("VLA_DD_FAULT");
        CHECK(r == 0);
        CHECK_MSG(w > VREF_DD_TRUST && w > 1e3 * bound(DM, TM), "VLA_DD_FAULT=%s: %.3g, not "
                  "caught (trusted to %.0e)", v, w, VREF_DD_TRUST);
        if (getenv("VLA_TEST_VERBOSE"))
            printf("ddgrad broken (%s): %.3g\n", *f == 'm' ? "MUL" : "DIV", w);
    }
}

/* VREF_DD refuses what MPFR's backward refuses (a form without a backward), and bad arguments */
TEST(ddgrad_refuses_as_mpfr)
{
    static gseq s;
    vla_config cfg;
    vla_backward *b = NULL;
    setup(&cfg, &s, VLA_GDN, DM, 0, 9);
    cfg.form = VLA_FORM_SCAN; /* no backward in the scan form */
    CHECK(vref_backward_new(&b, &cfg, VREF_DD, 0, TM, gseq_input, &s) ==
          vref_backward_new(&b, &cfg, VREF_EXACT, 256, TM, gseq_input, &s));
    CHECK(b == NULL);
    cfg.form = VLA_FORM_SEQ;
    CHECK(vref_backward_new(&b, &cfg, VREF_DD, 0, 0, gseq_input, &s) == VLA_EINVAL);
    CHECK(vref_backward_lo(NULL, 1) == VLA_EINVAL);
}

/* cfg's dd backward of TM steps, whole, the gradients and their low parts (vref_backward_lo) into
 * buf (2 x 8 arrays of TM DM numbers), with the lanes or (scalar) without */
static int lanes_grads(const vla_config *cfg, gseq *s, const double *c, double *buf, int scalar)
{
    enum { N = 8 * TM * DM };
    if (scalar)
        setenv("VLA_DD_SCALAR", "1", 1);
    vla_backward *b = NULL;
    double *a[8];
    for (int i = 0; i < 8; i++)
        a[i] = buf + (size_t)i * TM * DM;
    const int lr = vla_grad_has(cfg, VLA_GRAD_LR);
    vla_grads g = {.dq = a[0], .dk = a[1], .dv = a[2], .dbeta = a[3], .dg = a[4],
                   .da = lr ? a[5] : NULL, .db = lr ? a[6] : NULL,
                   .du = vla_grad_has(cfg, VLA_GRAD_U) ? a[7] : NULL};
    memset(buf, 0, 2 * N * sizeof *buf);
    int r = vref_backward_new(&b, cfg, VREF_DD, 0, TM, gseq_input, s);
    unsetenv("VLA_DD_SCALAR");
    if (!r && !(r = vref_backward_lo(b, N)))
        r = vla_backward_whole(b, c, &g);
    vla_backward_free(b);
    return r;
}

/* every model's seq backward (delta's decay form, vla1's and vla3's switches too) and every
 * chunk backward at chunk:16, at d = 8 (the rows in one group of lanes) and d = 5 (a group with
 * three lanes idle): the lanes' gradients and low parts equal the scalar text's bit for bit */
TEST(ddgrad_lanes_bits_equal_scalar)
{
    if (vref_dd_group.width(NULL) < 2) {
        vla_test_skip("this processor has no AVX-512 (F, VL, DQ): the dd backward is scalar");
        return;
    }
    static gseq s;
    static double x[2 * 8 * TM * DM], y[2 * 8 * TM * DM];
    double c[TM * DM];
    int cases = 0;
    for (int m = 0; m < 2 * (VLA_NMODEL + 3); m++)
        for (int d = 5; d <= DM; d += DM - 5) {
            static const vla_model_kind var[] = {VLA_DELTA, VLA_VLA1, VLA_VLA3};
            const int mi = m % (VLA_NMODEL + 3), chunk = m >= VLA_NMODEL + 3;
            const vla_model_kind mk = mi < VLA_NMODEL ? (vla_model_kind)mi : var[mi - VLA_NMODEL];
            const int variant = mi < VLA_NMODEL ? 0 : mi == VLA_NMODEL ? 1 : 2;
            vla_config cfg;
            setup(&cfg, &s, mk, d, variant, 51 + m);
            if (chunk && !vla_model_gradchunk(mk))
                continue;
            if (chunk) {
                cfg.form = VLA_FORM_CHUNK;
                cfg.chunk = 16;
            }
            if (vla_grad_check(&cfg, NULL))
                continue;
            for (int i = 0; i < TM * cfg.dv; i++)
                c[i] = gseq_uni(-1, 1);
            const int ra = lanes_grads(&cfg, &s, c, x, 0), rb = lanes_grads(&cfg, &s, c, y, 1);
            CHECK_MSG(!ra && !rb, "%s: %s, %s", vla_model_name(mk), vla_strerror(ra),
                      vla_strerror(rb));
            CHECK_MSG(!memcmp(x, y, sizeof x), "%s %s%s d = %d: the lanes' gradients differ from "
                      "the scalar text's", vla_model_name(mk), chunk ? "chunk:16" : "seq",
                      variant ? " (variant)" : "", d);
            cases++;
        }
    if (getenv("VLA_TEST_VERBOSE"))
        printf("ddgrad lanes: %d backwards the same\n", cases);
    CHECK_MSG(cases >= 2 * VLA_NMODEL + 10, "only %d backwards compared", cases);
}
