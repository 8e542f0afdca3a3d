/* test_grad.c: the backward pass (lib/recur_grad.h, docs/math.md section 11). The exact gradients
 * (MPFR, 256 bits) against central finite differences of the exact forward, an independent check
 * of the derivation; and every policy's gradients against its MPFR emulation, bit for bit (the
 * same text in both, as tests/test_conform.c checks the forward). tests/test_grad.py checks them
 * against torch.autograd of the published equations. */
#include "check.h"
#include "gseq.h"
#include "vlaref.h"
#include "vlastab.h"
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TMAX GSEQ_T
#define DMAX GSEQ_D


/* the configuration of a model for these tests: features id (so that dq, dk are the gradients of
 * the raw inputs a finite difference moves), la's and vla3's positive q and k (n . q above its
 * floor). variant 1: delta_form=decay; 2: vla1's clip, clamp and nudge, vla3's nudge, made to
 * fire within T = 16 steps (clip 0.5, clamp 1.5, period 3) */
static void setup(vla_config *cfg, gseq *s, vla_model_kind mk, int d, int T, int decay_form,
                  uint64_t seed)
{
    gseq_setup(cfg, s, mk, d, T, decay_form, seed, mk == VLA_LA || mk == VLA_VLA3 ? 0.1 : -1);
    cfg->features = VLA_FEAT_ID;
}

/* the gradients' arrays of one run */
typedef struct {
    double dq[TMAX * DMAX], dk[TMAX * DMAX], dv[TMAX * DMAX], dbeta[TMAX], dg[TMAX * DMAX],
        da[TMAX * DMAX], db[TMAX * DMAX], du[TMAX * DMAX];
    unsigned char z[TMAX * DMAX * DMAX];
} grads;
static vla_grads grads_of(grads *g, int lr)
{
    vla_grads o = {g->dq, g->dk, g->dv, g->dbeta, g->dg, lr ? g->da : NULL, lr ? g->db : NULL,
                   g->z, g->du};
    return o;
}

/* L = sum_t c_t . o_t of the exact forward (MPFR at 256 bits), o_t rounded to binary64 and summed
 * in binary64; *mag = sum |c_t,i o_t,i| (the rounding's scale) */
static double loss_exact(const vla_config *cfg, gseq *s, const double *c, double *mag)
{
    vla_model *m;
    vla_input in;
    double o[DMAX], L = 0, M = 0;
    CHECK(vref_model_new(&m, cfg, VREF_EXACT, 256) == 0);
    for (int t = 0; t < s->T; t++) {
        gseq_input(s, t, &in);
        CHECK(vla_model_step(m, &in) == 0);
        CHECK(vla_model_get(m, VLA_Q_O, o) == 0);
        for (int i = 0; i < s->d; i++) {
            L += c[t * s->d + i] * o[i];
            M += fabs(c[t * s->d + i] * o[i]);
        }
    }
    vla_model_free(m);
    if (mag)
        *mag = M;
    return L;
}

/* the central difference of L in the entry *x with step h */
static double fd(const vla_config *cfg, gseq *s, const double *c, double *x, double h, double *mag,
                 int mult)
{
    double x0 = *x, lp, lm;
    *x = mult ? x0 * exp(h) : x0 + h; /* mult: the difference in log x (delta's decay a) */
    lp = loss_exact(cfg, s, c, mag);
    *x = mult ? x0 * exp(-h) : x0 - h;
    lm = loss_exact(cfg, s, c, NULL);
    *x = x0;
    return (lp - lm) / (2 * h);
}

/* One entry's check: |g - FD(h)| within twice the difference's error bound, which is its
 * truncation, h^2 f'''/6, estimated from FD(2h) - FD(h) = (4 - 1) h^2 f'''/6 (so |FD(2h) -
 * FD(h)| / 3), plus its rounding: L's binary64 rounding of T dv read-outs and their sum,
 * (T dv + 1) u64 sum|c o| at each of the two points, over 2h. j < 0: x is a decay a > 0 and g
 * the gradient in log a (x moved by the factor e^(+-h); its rounding in binary64, u64 / h
 * relative, is far below the bound). Returns |g - FD| / bound. */
static double fd_entry(const vla_config *cfg, gseq *s, const double *c, double *x, double g,
                       const char *what, int t, int j)
{
    const double h = 1e-4;
    double mag, f1 = fd(cfg, s, c, x, h, &mag, j < 0), f2 = fd(cfg, s, c, x, 2 * h, NULL, j < 0);
    double bound = fabs(f2 - f1) / 3 + (s->T * s->d + 1) * DBL_EPSILON / 2 * mag / h;
    CHECK_MSG(fabs(g - f1) <= 2 * bound, "%s: d%s[%d][%d] = %.17g, the finite difference %.17g "
              "(|diff| %.3g > 2 x bound %.3g)", vla_model_name(cfg->model), what, t, j, g, f1,
              fabs(g - f1), bound);
    return fabs(g - f1) / bound;
}

/* every model of VLA_MODELS but those vla_grad_check refuses (none now; a model added without
 * its backward in lib/recur_grad.h, whose switch names the models, would get dk = dv = 0 and no
 * refusal: la0 of docs/adding.md's walkthrough did), then the variants: delta's decay form, vla1's and vla3's switches fired */
static const struct {
    vla_model_kind mk;
    int decay;
} fd_variants[] = {{VLA_DELTA, 1}, {VLA_VLA1, 2}, {VLA_VLA3, 2}};
enum { N_FD = VLA_NMODEL + (int)(sizeof fd_variants / sizeof fd_variants[0]) };
static vla_model_kind fd_model(int i, int *decay)
{
    *decay = i < VLA_NMODEL ? 0 : fd_variants[i - VLA_NMODEL].decay;
    return i < VLA_NMODEL ? (vla_model_kind)i : fd_variants[i - VLA_NMODEL].mk;
}

TEST(grad_exact_matches_finite_differences)
{
    const int d = 4, T = 16;
    static gseq s;
    static grads g;
    double c[TMAX * DMAX];
    for (int mi = 0; mi < N_FD; mi++) {
        vla_config cfg;
        int decay;
        const vla_model_kind mk = fd_model(mi, &decay);
        setup(&cfg, &s, mk, d, T, decay, 7 + mi);
        if (vla_grad_check(&cfg, NULL)) /* a model without its backward */
            continue;
        for (int i = 0; i < T * d; i++)
            c[i] = gseq_uni(-1, 1);
        int lr = s.has_lr;
        vla_grads o = grads_of(&g, lr);
        CHECK(vref_grad(&cfg, VREF_EXACT, 256, T, gseq_input, &s, c, &o) == 0);
        double worst = 0, gmax = 0;
        /* every entry at four steps: the first (the longest backward), two inside, the last */
        static const int ts[] = {0, 5, 11, 15};
        for (int ti = 0; ti < 4; ti++) {
            int t = ts[ti];
            for (int j = 0; j < d; j++) {
                worst = fmax(worst, fd_entry(&cfg, &s, c, &s.q[t][j], g.dq[t * d + j], "q", t, j));
                worst = fmax(worst, fd_entry(&cfg, &s, c, &s.k[t][j], g.dk[t * d + j], "k", t, j));
                worst = fmax(worst, fd_entry(&cfg, &s, c, &s.v[t][j], g.dv[t * d + j], "v", t, j));
                gmax = fmax(gmax, fmax(fabs(g.dq[t * d + j]), fabs(g.dk[t * d + j])));
                if (vla_grad_has(&cfg, VLA_GRAD_U))
                    worst = fmax(worst, fd_entry(&cfg, &s, c, &s.u[t][j], g.du[t * d + j], "u",
                                                 t, j));
                if (s.has_lg)
                    worst = fmax(worst, fd_entry(&cfg, &s, c, &s.lg[t][j], g.dg[t * d + j], "g",
                                                 t, j));
                if (lr) {
                    worst = fmax(worst, fd_entry(&cfg, &s, c, &s.a[t][j], g.da[t * d + j], "a",
                                                 t, j));
                    worst = fmax(worst, fd_entry(&cfg, &s, c, &s.b[t][j], g.db[t * d + j], "b",
                                                 t, j));
                }
            }
            if (s.has_beta)
                worst = fmax(worst, fd_entry(&cfg, &s, c, &s.beta[t], g.dbeta[t], "beta", t, 0));
            if (s.has_lgs)
                worst = fmax(worst, fd_entry(&cfg, &s, c, &s.lgs[t], g.dg[t], "g", t, 0));
            if (s.has_decay) /* dg is d/d log a: the difference moves a by the factor e^(+-h) */
                worst = fmax(worst, fd_entry(&cfg, &s, c, &s.decay[t], g.dg[t], "g (log a)", t,
                                             -1));
        }
        /* the check has teeth: a gradient is some 1e-1 to 1e0 here, a slip in the derivation
         * moves it by as much, and the bound is below 1e-6 of it */
        CHECK_MSG(gmax > 1e-2, "%s: the gradients are too small to test (%.3g)",
                  vla_model_name(cfg.model), gmax);
        if (getenv("VLA_TEST_VERBOSE"))
            printf("grad fd %s%s: worst |g - FD| / bound %.3g\n", vla_model_name(cfg.model),
                   decay ? (decay == 1 ? " (decay)" : " (variant 2)") : "", worst);
        if (decay == 2) { /* the variant's switches fired */
            vla_model *m;
            vla_input in;
            CHECK(vref_model_new(&m, &cfg, VREF_EXACT, 256) == 0);
            for (int t = 0; t < T; t++) {
                gseq_input(&s, t, &in);
                CHECK(vla_model_step(m, &in) == 0);
            }
            const vla_counts *n = vla_model_counts(m);
            CHECK_MSG(n->nudge > 0 && (cfg.model != VLA_VLA1 || (n->clip > 0 && n->clamp > 0)),
                      "%s variant 2: nudge %ld, clip %ld, clamp %ld", vla_model_name(cfg.model),
                      n->nudge, n->clip, n->clamp);
            vla_model_free(m);
        }
    }
}

TEST(grad_conform_every_policy_bit_for_bit)
{
    const int d = 8, T = 40; /* two segments of ceil(sqrt(40)) = 7 steps and a partial one */
    static gseq s;
    static grads a, b;
    double c[TMAX * DMAX];
    for (int mi = 0; mi < N_FD; mi++)
        for (int p = 0; p < VLA_NPREC; p++) {
            vla_config cfg;
            int decay;
            const vla_model_kind mk = fd_model(mi, &decay);
            setup(&cfg, &s, mk, d, T, decay, 100 + mi);
            if (vla_grad_check(&cfg, NULL))
                continue;
            cfg.prec = (vla_prec)p;
            for (int i = 0; i < T * d; i++)
                c[i] = gseq_uni(-1, 1);
            vla_grads ga = grads_of(&a, s.has_lr), gb = grads_of(&b, s.has_lr);
            memset(&a, 0x5a, sizeof a);
            memset(&b, 0xa5, sizeof b);
            CHECK(vla_grad(&cfg, T, gseq_input, &s, c, &ga) == 0);
            CHECK(vref_grad(&cfg, VREF_EMULATE, 0, T, gseq_input, &s, c, &gb) == 0);
            const char *names[] = {"dq", "dk", "dv", "dbeta", "dg", "da", "db", "du"};
            const double *xs[] = {a.dq, a.dk, a.dv, a.dbeta, a.dg, a.da, a.db, a.du};
            const double *ys[] = {b.dq, b.dk, b.dv, b.dbeta, b.dg, b.da, b.db, b.du};
            const long ns[] = {T * d, T * d, T * d, T, T * (s.has_lg ? d : 1),
                               s.has_lr ? T * d : 0, s.has_lr ? T * d : 0, T * d};
            for (int q = 0; q < 8; q++) {
                long i = vla_test_diff_at(xs[q], ys[q], ns[q]);
                CHECK_MSG(i < 0, "%s %s: %s[%ld] lib %a, MPFR emulation %a",
                          vla_model_name(cfg.model), vla_prec_name(cfg.prec), names[q], i,
                          i < 0 ? 0 : xs[q][i], i < 0 ? 0 : ys[q][i]);
            }
            CHECK(!memcmp(a.z, b.z, (size_t)T * d * d));
        }
}

TEST(grad_refuses_what_it_has_not)
{
    vla_config cfg;
    vla_error why = {0};
    static gseq s;
    static grads g;
    double c[TMAX * DMAX] = {0};
    vla_grads o = grads_of(&g, 0);
    vla_config_default(&cfg, VLA_VLA3, 4);
    CHECK(vla_grad_check(&cfg, &why) == VLA_OK);
    CHECK(vla_track_set(&cfg, "joseph") == 0);
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "--track sm"));
    setup(&cfg, &s, VLA_GDN, 4, 8, 0, 1);
    CHECK(vla_grad(&cfg, 8, gseq_input, &s, c, &o) == 0);
    CHECK(vla_form_parse(&cfg, "scan") == 0);
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "scan form"));
    CHECK(vla_grad(&cfg, 8, gseq_input, &s, c, &o) == VLA_ENOTSUP);
    setup(&cfg, &s, VLA_GDN, 4, 8, 0, 1);
    CHECK(vla_grad(&cfg, 0, gseq_input, &s, c, &o) == VLA_EINVAL);
    CHECK(vla_grad(&cfg, 8, gseq_input, &s, NULL, &o) == VLA_EINVAL);
    setup(&cfg, &s, VLA_LA, 4, 8, 0, 1);
    CHECK(vla_grad_check(&cfg, &why) == VLA_OK);
    CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "for la, ") &&
          strstr(why.msg, ": --form seq"));
    CHECK(vla_grad(&cfg, 8, gseq_input, &s, c, &o) == VLA_ENOTSUP);
}

/* The backward a block at a time (vla_backward_new, vref_backward_new: vla-check's judge of a
 * kernel's gradients): T = 40 in blocks of ceil(sqrt(40)) = 7 steps from the last, [35, 40),
 * [28, 35) ... [0, 7), each block's gradients vla_grad's (vref_grad's, exact) rows bit for bit;
 * then no block (VLA_ERANGE). The chunk form's blocks: test_gradchunk.c. */
TEST(grad_backward_blocks_are_vla_grads)
{
    const int d = 8, T = 40;
    static gseq s;
    static grads w, b;
    double c[TMAX * DMAX];
    const struct {
        vla_model_kind mk;
        int decay;
    } ms[] = {{VLA_GDN, 0}, {VLA_RWKV7, 0}, {VLA_VLA3, 2}, {VLA_DELTA, 1}};
    CHECK(vla_backward_block_len(T) == 7 && vla_backward_block_len(49) == 7 &&
          vla_backward_block_len(1) == 1);
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (int exact = 0; exact < 2; exact++) {
            vla_config cfg;
            setup(&cfg, &s, ms[mi].mk, d, T, ms[mi].decay, 300 + mi);
            cfg.prec = exact ? VLA_F64 : VLA_BF16;
            for (int i = 0; i < T * d; i++)
                c[i] = gseq_uni(-1, 1);
            vla_grads gw = grads_of(&w, s.has_lr), gb = grads_of(&b, s.has_lr);
            gb.dS_zero = NULL;
            memset(&w, 0x5a, sizeof w);
            CHECK(exact ? vref_grad(&cfg, VREF_EXACT, 256, T, gseq_input, &s, c, &gw) == 0
                        : vla_grad(&cfg, T, gseq_input, &s, c, &gw) == 0);
            vla_backward *bw = NULL;
            CHECK(exact ? vref_backward_new(&bw, &cfg, VREF_EXACT, 256, T, gseq_input, &s) == 0
                        : vla_backward_new(&bw, &cfg, T, gseq_input, &s) == 0);
            if (!bw)
                continue;
            long t0, n, end = T, bad = 0;
            const int ng = s.has_lg ? d : 1;
            while ((n = vla_backward_span(bw, &t0)) > 0) {
                CHECK_MSG(t0 + n == end && n == (end == T ? T - 35 : 7),
                          "%s: block [%ld, %ld) after [%ld, ...)", vla_model_name(cfg.model), t0,
                          t0 + n, end);
                memset(&b, 0xa5, sizeof b);
                CHECK(vla_backward_next(bw, c + t0 * d, &gb) == 0);
                const double *xs[] = {w.dq, w.dk, w.dv, w.dbeta, w.dg, w.da, w.db, w.du};
                const double *ys[] = {b.dq, b.dk, b.dv, b.dbeta, b.dg, b.da, b.db, b.du};
                const long wd[] = {d, d, d, 1, ng, s.has_lr ? d : 0, s.has_lr ? d : 0,
                                   ms[mi].mk == VLA_VLA3 ? d : 0};
                for (int q = 0; q < 8; q++)
                    bad += vla_test_diff_at(xs[q] + t0 * wd[q], ys[q], n * wd[q]) >= 0;
                end = t0;
            }
            CHECK_MSG(end == 0 && !bad, "%s %s: the blocks end at %ld; %ld arrays differ from "
                                        "the whole backward's", vla_model_name(cfg.model),
                      exact ? "exact" : "bf16", end, bad);
            CHECK(vla_backward_next(bw, c, &gb) == VLA_ERANGE);
            vla_backward_free(bw);
        }
    vla_backward_free(NULL);
}
