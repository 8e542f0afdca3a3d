/* model_impl.h: what sits behind the opaque vla_model: a table of operations, so that the native
 * instantiations (lib/model.c) and the MPFR ones (reference/) are driven through the same calls.
 * Not installed: a backend's business, not a user's. */
#ifndef VLA_MODEL_IMPL_H
#define VLA_MODEL_IMPL_H
#include "vlastab.h"

typedef struct {
    int (*step)(void *self, const vla_input *in);
    int (*read)(void *self, const double *q);
    int (*get)(const void *self, vla_quantity q, double *dst);
    void (*destroy)(void *self);
    int (*save)(const void *self, FILE *f);
    int (*load)(void *self, FILE *f);
    /* optional: the calling thread is done with the model for now, and frees what the backend
     * keeps per thread (MPFR's caches of constants and its pool of integers: see ref_model.c) */
    void (*rest)(void *self);
    /* the stream has ended (vla_model_finish) */
    int (*finish)(void *self);
    /* optional: S_0 = S0 at t = 0 (vla_model_start, checked; recur.h's vstate_start) */
    int (*start)(void *self, const double *S0);
} vla_model_ops;

struct vla_model {
    const vla_model_ops *ops;
    void *self;
    vla_config cfg;
    const vla_counts *counts; /* owned by self */
};

/* Wraps a backend's state; on failure destroys self (model_wrap.c, as vla_counts_check). */
int vla_model_wrap(vla_model **out, const vla_config *cfg, const vla_model_ops *ops, void *self,
                   const vla_counts *counts);

/* ops->rest where the backend has one */
void vla_model_rest(vla_model *m);

/* What sits behind the opaque vla_backward (vlastab.h): one instantiation's backward, the seq
 * form's (lib/recur_grad.h's grad_begin done) or the chunk form's (recur_gradchunk.h's
 * gradchunk_begin), block j computed by block (grad_block, gradchunk_block: c_t and the
 * gradients of step t at rows t - base), so that lib's policies and MPFR's are driven alike. */
typedef struct {
    int (*block)(void *self, long j, const double *c, const vla_grads *out, long base);
    void (*destroy)(void *self);
} vla_backward_ops;

struct vla_backward {
    const vla_backward_ops *ops;
    void *self;
    long T, K, j; /* the steps, a block's, the next block (-1: all done) */
    int dv;
};

/* Wraps a backend's backward of T steps in blocks of K (recur_grad.h's gckpt: the seq form's
 * ceil(sqrt(T)) steps, the chunk form's whole chunks); on failure destroys self. */
int vla_backward_wrap(vla_backward **out, const vla_backward_ops *ops, void *self, long T, long K,
                      int dv);
/* every block of b in turn into whole arrays of T steps (vla_grad, vref_grad) */
int vla_backward_whole(vla_backward *b, const double *c, const vla_grads *out);

/* The random words of stochastic rounding: a pure function of (seed, t, the count of stores
 * within step t), so a run is reproducible and the emulation can draw the same words. Step 0 is
 * the model's construction. */
typedef struct {
    uint64_t seed;
    long t;
    uint32_t ctr, buf[4];
} vla_sr_state;

static inline void vla_sr_reset(vla_sr_state *s, long t)
{
    s->t = t;
    s->ctr = 0;
}

static inline uint32_t vla_sr_next(vla_sr_state *s)
{
    if ((s->ctr & 3u) == 0) { /* one Philox call gives four words */
        const uint32_t ctr[4] = {s->ctr >> 2, (uint32_t)s->t, (uint32_t)((uint64_t)s->t >> 32),
                                 0x53520000u /* "SR": apart from the input streams */};
        const uint32_t key[2] = {(uint32_t)s->seed, (uint32_t)(s->seed >> 32) ^ 0xA5A5A5A5u};
        vla_philox4x32_10(ctr, key, s->buf);
    }
    return s->buf[s->ctr++ & 3u];
}

/* the native policies, strict (model.c) and fast (model_fast.c) */
int vla_native_create_strict(const vla_config *cfg, vla_model **out);
int vla_native_create_fast(const vla_config *cfg, vla_model **out);
int vla_native_create_comp(const vla_config *cfg, vla_model **out); /* model_comp.c */
/* strict, vectorized (model_simd.c): VLA_ENOTSUP where the processor or compiler cannot */
int vla_native_create_simd(const vla_config *cfg, vla_model **out);

/* phi(x) = elu(x) + 1 in binary64 with the C library's exp (section 5: input preparation). */
#include <math.h>
static inline double vla_phi_d(double x) { return x > 0 ? x + 1.0 : exp(x); }
/* An io format f of binary32, binary16 or bfloat16, eight or four at a time where the processor
 * has AVX-512 or AVX2 (load.c), the bits of arith_native.h's scalar code:
 * dst[i] = vla_round_in(f, x[i]), and vla_round_in(f, vla_phi_d(vla_round_in(f, x[i]))) */
void vla_load_round(vla_fmt f, float *dst, const double *x, int n);
void vla_load_round_d(vla_fmt f, double *dst, const double *x, int n); /* the same, in binary64 */
void vla_load_phi(vla_fmt f, float *dst, const double *x, int n);
/* y[i] = load.c's exp of v[i] in the lanes, for -700 <= v[i] <= 0, n a multiple of the lanes' width
 * (8 or 4; the tests measure its error); VLA_ENOTSUP where vla_load_phi does not use it */
int vla_load_exp_lanes(const double *v, double *y, int n);

/* VLA_TOGETHER(x, nb): a point that the nb (1, 2 or 4) vectors x[0..nb) reach together, which no
 * operation of the compiler's crosses: chains of dependent operations written step by step side
 * by side (a Horner polynomial for each of nb blocks of lanes) stay side by side in the
 * instructions. Without it GCC lays independent chains one after the other, the processor's queue
 * fills with one chain's waiting steps, and each step waits out the latency of the one before
 * (load.c's exp, philox.c's Box-Muller). Changes no bits: it orders, it does not compute. */
#define VLA_TOGETHER(x, nb)                                                                        \
    do {                                                                                           \
        if ((nb) == 4)                                                                             \
            __asm__ volatile("" : "+v"((x)[0]), "+v"((x)[1]), "+v"((x)[2]), "+v"((x)[3]));        \
        else if ((nb) == 2)                                                                        \
            __asm__ volatile("" : "+v"((x)[0]), "+v"((x)[1]));                                     \
    } while (0)

/* VLA_HORNER(p, x, c, nk, nb): p[b] = c[k] + x[b] p[b] for k = 0 .. nk-1, for each of the nb
 * vectors, the nb chains step by step side by side (VLA_TOGETHER) */
#define VLA_HORNER(p, x, c, nk, nb)                                                                \
    do {                                                                                           \
        _Pragma("GCC unroll 16")                                                                   \
        for (int k_ = 0; k_ < (nk); k_++) {                                                        \
            _Pragma("GCC unroll 4")                                                                \
            for (int b_ = 0; b_ < (nb); b_++)                                                      \
                (p)[b_] = (c)[k_] + (x)[b_] * (p)[b_];                                             \
            VLA_TOGETHER(p, nb);                                                                   \
        }                                                                                          \
    } while (0)

/* lib's plain binary64 loops in vector lanes (load.c), the bits of the scalar loops at every width:
 * y = M x for an n x m M kept by columns (column j at j n), each y[i] summed in the order
 * j = 0, 1, ...; x[i] /= c; whether every x[i] is finite. */
void vla_matvec_cols(const double *M, const double *x, int n, long m, double *y);
void vla_div_all(double *x, int n, double c);
int vla_finite_all(const double *x, int n);

/* The mean floating-point operations (+, -, *, /, sqrt, the read-out included) of the steps of
 * cfg on in[0..n) from the initial state, counted as recur.h performs them (flops.c); NAN if cfg
 * is invalid. */
double vla_step_flops(const vla_config *cfg, const vla_input *in, int n);

/* Whether a loaded state's step count t and counters can be those of a run of cfg: t = steps,
 * each event at most once a step (zero_norm three times, nudge once a period), reads and t far
 * from overflowing their sum. A checkpoint that fails this is damaged (VLA_EFORMAT). */
int vla_counts_check(const vla_config *cfg, long t, const vla_counts *c);

/* Rejects NaN/Inf in the inputs the model uses, before any state changes. */
int vla_input_check(const vla_config *cfg, const vla_input *in);
#endif
