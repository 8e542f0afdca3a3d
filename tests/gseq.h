/* gseq.h: the backward tests' inputs (test_grad.c, test_gradchunk.c, test_ddgrad.c): up to GSEQ_T
 * steps of every input a model may read, held in arrays so that a finite difference can move one
 * entry, the callback that hands step t out (a vla_grad_input), and the tests' own draws
 * (xorshift64*, seeded by gseq_seed) */
#ifndef VLA_TESTS_GSEQ_H
#define VLA_TESTS_GSEQ_H
#include "vlastab.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

#define GSEQ_T 64
#define GSEQ_D 8

typedef struct {
    int T, d;
    double q[GSEQ_T][GSEQ_D], k[GSEQ_T][GSEQ_D], v[GSEQ_T][GSEQ_D], u[GSEQ_T][GSEQ_D],
        lg[GSEQ_T][GSEQ_D], a[GSEQ_T][GSEQ_D], b[GSEQ_T][GSEQ_D];
    double beta[GSEQ_T], lgs[GSEQ_T], decay[GSEQ_T];
    /* the inputs handed out; the others NULL (u, lg, a and b), NAN (beta, decay) or 0 (lgs) */
    int has_u, has_beta, has_lgs, has_lg, has_lr, has_decay;
} gseq;

static inline int gseq_input(void *ctx, long t, vla_input *in)
{
    gseq *s = ctx;
    memset(in, 0, sizeof *in);
    in->q = s->q[t];
    in->k = s->k[t];
    in->v = s->v[t];
    in->u = s->has_u ? s->u[t] : NULL;
    in->beta = s->has_beta ? s->beta[t] : NAN;
    in->decay = s->has_decay ? s->decay[t] : NAN;
    in->lgs = s->has_lgs ? s->lgs[t] : 0;
    in->lg = s->has_lg ? s->lg[t] : NULL;
    in->a = s->has_lr ? s->a[t] : NULL;
    in->b = s->has_lr ? s->b[t] : NULL;
    return VLA_OK;
}

static uint64_t gseq_rs;
static inline void gseq_seed(uint64_t seed) { gseq_rs = seed * 0x9E3779B97F4A7C15ULL + 1; }
static inline double gseq_uni(double lo, double hi)
{
    gseq_rs ^= gseq_rs >> 12;
    gseq_rs ^= gseq_rs << 25;
    gseq_rs ^= gseq_rs >> 27;
    return lo + (hi - lo) * (double)((gseq_rs * 0x2545F4914F6CDD1DULL) >> 11) * 0x1p-53;
}
/* cfg: mk's default at d, variant 1 delta_form=decay, 2 vla1's clip, clamp and nudge, vla3's
 * nudge, made to fire within 16 steps (clip 0.5, clamp 1.5, period 3); s: T steps of d drawn from
 * seed (q and k in [lo, 1]), handing out the inputs cfg reads */
static inline void gseq_setup(vla_config *cfg, gseq *s, vla_model_kind mk, int d, int T,
                              int variant, uint64_t seed, double lo)
{
    vla_config_default(cfg, mk, d);
    if (variant == 1)
        cfg->delta_form = VLA_DELTA_DECAY;
    if (variant == 2) {
        cfg->clip = 0.5;
        cfg->clamp = 1.5;
        cfg->period = 3;
    }
    memset(s, 0, sizeof *s);
    s->T = T;
    s->d = d;
    s->has_u = 1;
    gseq_seed(seed);
    for (int t = 0; t < T; t++) {
        for (int j = 0; j < d; j++) {
            s->q[t][j] = gseq_uni(lo, 1);
            s->k[t][j] = gseq_uni(lo, 1);
            s->v[t][j] = gseq_uni(-1, 1);
            s->u[t][j] = gseq_uni(-1, 1);
            s->lg[t][j] = -gseq_uni(0.01, 0.5);
            s->a[t][j] = gseq_uni(-0.3, 0.3);
            s->b[t][j] = gseq_uni(-0.3, 0.3);
        }
        s->beta[t] = gseq_uni(0.2, 0.9);
        s->lgs[t] = -gseq_uni(0.01, 0.5);
        s->decay[t] = gseq_uni(0.5, 1);
    }
    s->has_beta = vla_grad_has(cfg, VLA_GRAD_BETA);
    s->has_lgs = vla_model_gate(mk) == 1;
    s->has_lg = vla_model_gate(mk) == 2;
    s->has_lr = vla_grad_has(cfg, VLA_GRAD_LR);
    s->has_decay = variant == 1;
}
#endif
