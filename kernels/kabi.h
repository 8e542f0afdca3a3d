/* kabi.h: what the host side of the CUDA backend (host.c) and a device that runs the kernel
 * (CUDA, vlacuda.cu, or its emulation on host threads, emu.c) agree on: the launch parameters,
 * the layouts of the state, the prepared inputs and the on-chip arena. Plain data only, so that
 * it crosses the host/device boundary by value. */
#ifndef VLA_KABI_H
#define VLA_KABI_H
#ifdef __cplusplus
extern "C" {
#endif
#include "vlastab.h"
#ifdef __cplusplus
}
#endif
#include <stddef.h>

#ifdef __CUDACC__
#define KHD __host__ __device__
#else
#define KHD
#endif

/* Numbers travel in the policy's container (double for f64, float otherwise: 16-bit values are
 * exact in binary32), with the very bits the CPU model holds.
 *
 * A run's state, row-major, plain (no padding): S (dv x d), A (d x d), n (d), o (dv), kp (d),
 * al (d): the quantities vla_model_get returns.
 * A prepared input record (one step of one run): q, k, u, pk = phi(k), pq = phi(q) (d each),
 * v, g (dv each), beta, decay: what lib's load() puts into the state, in the same bits. */
/* per-step flags: the input carried a gate; a read, no write; nothing at all (a run that is
 * already where the launch takes the others: runs at different steps advance together) */
enum { KF_GATE = 1, KF_READ = 2, KF_SKIP = 4 };

typedef struct {
    long t;
    vla_counts cnt;
} kcounts;

typedef struct {
    vla_config cfg; /* checked; track sm or sm-sym */
    int d, dv, runs;
    int shift;      /* the arena's row padding (kswz) */
    int rec_len;    /* numbers per input record */
    int state_len;  /* numbers per run's state */
    long steps;     /* steps in this launch */
    int arena_len;  /* numbers in one block's arena */
    int threads;    /* threads per block */
    int shared_in;  /* 1: every run reads the same records (inputs is steps x rec_len) */
    /* device addresses */
    void *state;          /* runs x state_len */
    const void *consts;   /* C_NCONST numbers of recur.h, the same for every run */
    const void *inputs;   /* runs x steps x rec_len, run-major */
    const unsigned char *flags; /* runs x steps */
    kcounts *counts;      /* runs */
    /* the taps (NULL: not recorded), after every step: o (runs x steps x dv), kp and al
     * (runs x steps x d), and the count of A's entries a write changed (runs x steps; prev_a:
     * runs x d x d numbers of scratch that holds A before the step) */
    void *out_o, *out_kp, *out_al;
    long *out_moved;
    void *prev_a;
} kparams;

/* The arena (shared memory) holds every array of recur.h's state with index k stored at
 * k + (k >> shift): with shift = ctz(d) that pads each row of length d by d >> ctz(d) (odd)
 * words, so the threads of a warp, one row each, read d + odd apart: no shared-memory bank
 * conflict. An odd d needs none (shift 31: no padding). Row starts i*d stay multiples of
 * 2^shift, which is what makes &row[j] = row + kswz(j) hold (recur.h's VLA_ROWP). */
static inline KHD int kshift(int d)
{
    int s = 0;
    if (d & 1)
        return 31;
    while (!((d >> s) & 1))
        s++;
    return s;
}
static inline KHD long kswz_len(long n, int shift)
{
    return n ? (n - 1) + ((n - 1) >> shift) + 1 : 0;
}

/* the arrays of the arena in order, with their lengths */
enum { KA_S, KA_A, KA_N, KA_Q, KA_K, KA_V, KA_U, KA_G, KA_PK, KA_PQ, KA_KP, KA_AL, KA_Z, KA_E,
       KA_O, KA_W, KA_E2, KA_C, KA_BD, KA_N_ARRAYS };
static inline KHD long karray_len(int a, int d, int dv)
{
    int m = d > dv ? d : dv;
    switch (a) {
    case KA_S: return (long)dv * d;
    case KA_A: return (long)d * d;
    case KA_V: case KA_G: case KA_E: case KA_O: return dv;
    case KA_W: return m;
    case KA_C: return 11; /* C_NCONST: checked against recur.h where both are visible */
    case KA_BD: return 2;
    default: return d;
    }
}
/* offset of array a in the arena; a = KA_N_ARRAYS gives the arena's length. Each array starts
 * on an even number, which keeps doubles 16-byte aligned for nothing worse than a word. */
static inline KHD long karena_off(int a, int d, int dv, int shift)
{
    long off = 0;
    for (int i = 0; i < a; i++) {
        long n = kswz_len(karray_len(i, d, dv), shift);
        off += n + (n & 1);
    }
    return off;
}

/* points the arrays of recur.h's state s at the arena's arrays a[KA_...] (kdriver.h, klanes.h) */
#define KBIND_STATE(s, a)                                                                          \
    ((s)->S = (a)[KA_S], (s)->A = (a)[KA_A], (s)->n = (a)[KA_N], (s)->q = (a)[KA_Q],               \
     (s)->k = (a)[KA_K], (s)->v = (a)[KA_V], (s)->u = (a)[KA_U], (s)->g = (a)[KA_G],               \
     (s)->pk = (a)[KA_PK], (s)->pq = (a)[KA_PQ], (s)->kp = (a)[KA_KP], (s)->al = (a)[KA_AL],       \
     (s)->z = (a)[KA_Z], (s)->e = (a)[KA_E], (s)->o = (a)[KA_O], (s)->w = (a)[KA_W],               \
     (s)->e2 = (a)[KA_E2], (s)->c = (a)[KA_C], (s)->beta_decay = (a)[KA_BD])

static inline KHD int krec_len(int d, int dv) { return 5 * d + 2 * dv + 2; }
static inline KHD int kstate_len(int d, int dv) { return dv * d + d * d + 3 * d + dv; }
#endif
