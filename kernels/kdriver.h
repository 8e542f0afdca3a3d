/* kdriver.h: one policy's kernel: recur.h's recurrences plus the loop over t that a block runs
 * for one run, the state held in the block's arena (shared memory) from the first step of a
 * launch to the last. Included by kpolicy.h, with POL, RO, RS and RI set (karith.h).
 * Every thread of the block executes all of it: the loops split by VLA_PFOR, the rest
 * redundantly on identical data (which is why the per-thread state struct holds identical
 * counters in every thread, and thread 0 writes them back). The state and the input records
 * move as lib/tables.h's list of arrays says (kabi.h). */
#include "karith.h"
#include "vlacuda.h"
/* only the ways of tracking A that the kernels run (vlacuda.h): host.c refuses the rest */
#define VLA_TRACK_MASK VLA_CUDA_TRACKS
#include "recur.h"

/* Runs p->steps steps of run `run`; arena: p->arena_len numbers of on-chip memory. */
VLA_FN void FN(kblock)(const kparams *p, int run, NUM *arena)
{
    const int cx_ = p->shift, m = krec_widest(p->d, p->dv);
    VLA_DIMS_LOCALS(p->dm);
    ST st;
    ST *s = &st;
    KBIND_STATE(s, p, arena, cx_);
    s->t = p->counts[run].t;
    s->cnt = p->counts[run].cnt;

    /* state in (kabi.h's layout), and the constants */
    const NUM *gs = (const NUM *)p->state + (size_t)run * p->state_len;
#define VLA_X_(name, len)                                                                          \
    {                                                                                              \
        const NUM *from = gs + kstate_off(KA_##name, p->dm);                                       \
        VLA_PFOR(i, 0, (len))                                                                      \
            E(s->name, i) = from[i];                                                               \
    }
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    VLA_PFOR(i, 0, C_NCONST)
        E(s->c, i) = ((const NUM *)p->consts)[i];

    for (long t = 0; t < p->steps; t++) {
        size_t ri = (size_t)run * p->steps + t, ii = p->shared_in ? (size_t)t : ri;
        const NUM *rec = (const NUM *)p->inputs + ii * p->rec_len;
        int f = p->flags[ii];
        if (f & KF_SKIP) /* (the same for every thread of the block) */
            continue;
        VLA_PFOR(i, 0, m) { /* the record's arrays, one after the other */
            long off = 0;
#define VLA_X_(name, len)                                                                          \
    if (i < (len))                                                                                 \
        E(s->name, i) = rec[off + i];                                                              \
    off += (len);
            VLA_STATE_INPUT(VLA_X_)
#undef VLA_X_
        }
        NUM *prev = p->prev_a ? (NUM *)p->prev_a + (size_t)run * d * d : NULL;
        if (prev && !(f & KF_READ))
            VLA_PFOR(i, 0, d * d)
                prev[i] = E(s->A, i);
        if (f & KF_READ) { /* lib's vstate_read after its load */
            s->cnt.reads++;
            FN(read_loaded)(cx_, s);
        } else {
            FN(vstate_advance)(cx_, s, f & KF_GATE);
        }
        if (p->out_o) {
            NUM *oo = (NUM *)p->out_o + ri * dv;
            VLA_PFOR(i, 0, dv)
                oo[i] = E(s->o, i);
        }
        if (p->out_kp || p->out_al) {
            NUM *ok = (NUM *)p->out_kp + ri * d, *oa = (NUM *)p->out_al + ri * d;
            VLA_PFOR(i, 0, d) {
                if (p->out_kp)
                    ok[i] = E(s->kp, i);
                if (p->out_al)
                    oa[i] = E(s->al, i);
            }
        }
        if (p->out_moved) { /* A's bit patterns before and after: one thread counts (a tap for
                               the drift measures, not a fast path) */
            KSYNC();
            if (KTID == 0) {
                long n = 0, nd = 0;
                for (int i = 0; prev && !(f & KF_READ) && i < d * d; i++) {
                    NUM a = E(s->A, i); /* bytes, as memcmp (which device code lacks) would */
                    const unsigned char *x = (const unsigned char *)&a,
                                        *y = (const unsigned char *)&prev[i];
                    int ne = 0;
                    for (unsigned k = 0; k < sizeof a; k++)
                        ne |= x[k] != y[k];
                    n += ne;
                    nd += ne && i % (d + 1) == 0;
                }
                p->out_moved[2 * ri] = n;
                p->out_moved[2 * ri + 1] = nd;
            }
            KSYNC();
        }
    }

    NUM *ws = (NUM *)p->state + (size_t)run * p->state_len;
#define VLA_X_(name, len)                                                                          \
    {                                                                                              \
        NUM *to = ws + kstate_off(KA_##name, p->dm);                                               \
        VLA_PFOR(i, 0, (len))                                                                      \
            to[i] = E(s->name, i);                                                                 \
    }
    VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    if (KTID == 0) {
        p->counts[run].t = s->t;
        p->counts[run].cnt = s->cnt;
    }
}

#ifdef __CUDACC__
/* one block per run; the arena is the block's dynamic shared memory */
static __global__ void __launch_bounds__(256) FN(kern)(const kparams p)
{
    extern __shared__ double k_smem[];
    FN(kblock)(&p, (int)blockIdx.x, (NUM *)k_smem);
}
extern "C" const void *VLA_CAT(vla_kern, POL)(void) { return (const void *)FN(kern); }
#else
/* emu.c's block, as host thread tid of nt (KTID and KNT: emu_block.c's thread-local variables) */
void VLA_CAT(vla_emu_block, POL)(const kparams *p, int run, void *arena, int tid, int nt)
{
    KTID = tid;
    KNT = nt;
    FN(kblock)(p, run, (NUM *)arena);
}
#endif
#include "recur_end.h"
