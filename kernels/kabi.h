/* kabi.h: what the host side of the CUDA backend (host.c) and a device that runs the kernel
 * (CUDA, vlacuda.cu, or its emulation on host threads, emu.c) agree on: the launch parameters,
 * the layouts of the state, the prepared inputs and the on-chip arena. Plain data only, so that
 * it crosses the host/device boundary by value. */
#ifndef VLA_KABI_H
#define VLA_KABI_H
#ifdef __cplusplus
extern "C" {
#endif
#include "tables.h"
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
 * A run's state, row-major, plain (no padding): the SAVED arrays of lib/tables.h's list in its
 * order (S, A, n, o, kp, al: the quantities vla_model_get returns), kstate_len numbers.
 * A prepared input record (one step of one run): its INPUT arrays in order (q, k, u, pk = phi(k),
 * pq = phi(q), v, g, beta and decay), krec_len numbers: what lib's load() puts into the state,
 * in the same bits. */
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
    vla_dims dm;    /* the sizes of the state's arrays (tables.h): d, dv and the form's */
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
     * (runs x steps x d), and the count of A's entries a write changed, then of its diagonal's
     * (runs x steps x 2; prev_a: runs x d x d numbers of scratch that holds A before the step) */
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

/* the arrays of the arena in the order of tables.h's list, with their lengths */
#define VLA_X_(name, len) KA_##name,
enum { VLA_STATE_ARRAYS(VLA_X_) KA_N_ARRAYS };
#undef VLA_X_
static inline KHD long karray_len(int a, vla_dims dm)
{
    VLA_DIMS_LOCALS(dm);
    switch (a) {
#define VLA_X_(name, len)                                                                          \
    case KA_##name:                                                                                \
        return (long)(len);
        VLA_STATE_ARRAYS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
/* offset of array a in the arena; a = KA_N_ARRAYS gives the arena's length. Each array starts
 * on an even number, which keeps doubles 16-byte aligned for nothing worse than a word. */
static inline KHD long karena_off(int a, vla_dims dm, int shift)
{
    long off = 0;
    for (int i = 0; i < a; i++) {
        long n = kswz_len(karray_len(i, dm), shift);
        off += n + (n & 1);
    }
    return off;
}

/* recur.h's state s (an ST, zeroed here: the includer has memset) bound to a launch's arena of
 * NUMs (kdriver.h, lanes/klanes.h): the config and dimensions of kparams p, and each array at
 * its place in the arena (karena_off, with the arena's row padding shift) */
#define KBIND_ONE_(name, len) kb_s->name = kb_ar + karena_off(KA_##name, kb_p->dm, kb_sh);
#define KBIND_STATE(s, p, arena, shift)                                                            \
    do {                                                                                           \
        ST *kb_s = (s);                                                                            \
        const kparams *kb_p = (p);                                                                 \
        NUM *kb_ar = (arena);                                                                      \
        const int kb_sh = (shift);                                                                 \
        memset(kb_s, 0, sizeof *kb_s);                                                             \
        kb_s->cfg = kb_p->cfg;                                                                     \
        kb_s->d = kb_p->dm.d;                                                                      \
        kb_s->dv = kb_p->dm.dv;                                                                    \
        kb_s->ng = kb_p->dm.ng;                                                                    \
        kb_s->nr = kb_p->dm.nr;                                                                    \
        VLA_STATE_ARRAYS(KBIND_ONE_)                                                               \
    } while (0)

/* the numbers of a run's state (the SAVED arrays), and where array a starts among them */
static inline KHD int kstate_len(vla_dims dm)
{
    VLA_DIMS_LOCALS(dm);
    return 0 VLA_STATE_SAVED(VLA_LEN_);
}
static inline KHD long kstate_off(int a, vla_dims dm)
{
    VLA_DIMS_LOCALS(dm);
    long off = 0;
#define VLA_X_(name, len)                                                                          \
    if (a == KA_##name)                                                                            \
        return off;                                                                                \
    off += (len);
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    return -1;
}
/* the numbers of an input record (the INPUT arrays), and the longest of them */
static inline KHD int krec_len(vla_dims dm)
{
    VLA_DIMS_LOCALS(dm);
    return (int)VLA_INPUT_LEN;
}
static inline KHD int krec_widest(int d, int dv)
{
    const int ng = d, nr = d; /* (the widest any model's arrays per key channel can be) */
    int m = 0;
#define VLA_X_(name, len) m = VLA_MAX(m, (int)(len));
    VLA_STATE_INPUT(VLA_X_)
#undef VLA_X_
    return m;
}
#endif
