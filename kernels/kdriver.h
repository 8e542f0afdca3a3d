/* kdriver.h: one policy's kernel: recur.h's recurrences plus the loop over t that a block runs
 * for one run, the state held in the block's arena (shared memory) from the first step of a
 * launch to the last. Included by kpolicy.h once per policy, with NUM, RO, RS, KTINY and SFX
 * set. Every thread of the block executes all of it: the loops split by VLA_PFOR, the rest
 * redundantly on identical data (which is why the per-thread state struct holds identical
 * counters in every thread, and thread 0 writes them back). */
#include "recur.h"

#ifndef VLA_KDRIVER_ONCE
#define VLA_KDRIVER_ONCE
typedef char kabi_const_count_check[(int)C_NCONST == 11 ? 1 : -1]; /* karray_len(KA_C) */
#endif

/* Runs p->steps steps of run `run`; arena: p->arena_len numbers of on-chip memory. */
VLA_FN void FN(kblock)(const kparams *p, int run, NUM *arena)
{
    const int cx_ = p->shift, d = p->d, dv = p->dv;
    const int m = d > dv ? (d > 2 ? d : 2) : (dv > 2 ? dv : 2);
    NUM *const a_[KA_N_ARRAYS] = {
        arena + karena_off(KA_S, d, dv, cx_),  arena + karena_off(KA_A, d, dv, cx_),
        arena + karena_off(KA_N, d, dv, cx_),  arena + karena_off(KA_Q, d, dv, cx_),
        arena + karena_off(KA_K, d, dv, cx_),  arena + karena_off(KA_V, d, dv, cx_),
        arena + karena_off(KA_U, d, dv, cx_),  arena + karena_off(KA_G, d, dv, cx_),
        arena + karena_off(KA_PK, d, dv, cx_), arena + karena_off(KA_PQ, d, dv, cx_),
        arena + karena_off(KA_KP, d, dv, cx_), arena + karena_off(KA_AL, d, dv, cx_),
        arena + karena_off(KA_Z, d, dv, cx_),  arena + karena_off(KA_E, d, dv, cx_),
        arena + karena_off(KA_O, d, dv, cx_),  arena + karena_off(KA_W, d, dv, cx_),
        arena + karena_off(KA_E2, d, dv, cx_), arena + karena_off(KA_C, d, dv, cx_),
        arena + karena_off(KA_BD, d, dv, cx_)};
    ST st;
    ST *s = &st;
    memset(s, 0, sizeof st);
    s->cfg = p->cfg;
    s->d = d;
    s->dv = dv;
    KBIND_STATE(s, a_);
    s->t = p->counts[run].t;
    s->cnt = p->counts[run].cnt;

    /* state in: S, A, n, o, kp, al (kabi.h), and the constants */
    const NUM *gs = (const NUM *)p->state + (size_t)run * p->state_len;
    const NUM *gc = (const NUM *)p->consts;
    VLA_PFOR(i, 0, d * (d > dv ? d : dv)) {
        if (i < dv * d)
            E(s->S, i) = gs[i];
        if (i < d * d)
            E(s->A, i) = gs[(size_t)dv * d + i];
    }
    gs += (size_t)dv * d + (size_t)d * d;
    VLA_PFOR(i, 0, m > C_NCONST ? m : C_NCONST) {
        if (i < d) {
            E(s->n, i) = gs[i];
            E(s->kp, i) = gs[d + dv + i];
            E(s->al, i) = gs[2 * d + dv + i];
        }
        if (i < dv)
            E(s->o, i) = gs[d + i];
        if (i < C_NCONST)
            E(s->c, i) = gc[i];
    }

    for (long t = 0; t < p->steps; t++) {
        size_t ri = (size_t)run * p->steps + t, ii = p->shared_in ? (size_t)t : ri;
        const NUM *rec = (const NUM *)p->inputs + ii * p->rec_len;
        int f = p->flags[ii];
        if (f & KF_SKIP) /* (the same for every thread of the block) */
            continue;
        VLA_PFOR(i, 0, m) {
            if (i < d) {
                E(s->q, i) = rec[i];
                E(s->k, i) = rec[d + i];
                E(s->u, i) = rec[2 * d + i];
                E(s->pk, i) = rec[3 * d + i];
                E(s->pq, i) = rec[4 * d + i];
            }
            if (i < dv) {
                E(s->v, i) = rec[5 * d + i];
                E(s->g, i) = rec[5 * d + dv + i];
            }
            if (i < 2)
                E(s->beta_decay, i) = rec[5 * d + 2 * dv + i];
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
                long n = 0;
                for (int i = 0; prev && !(f & KF_READ) && i < d * d; i++) {
                    NUM a = E(s->A, i); /* bytes, as memcmp (which device code lacks) would */
                    const unsigned char *x = (const unsigned char *)&a,
                                        *y = (const unsigned char *)&prev[i];
                    int ne = 0;
                    for (unsigned k = 0; k < sizeof a; k++)
                        ne |= x[k] != y[k];
                    n += ne;
                }
                p->out_moved[ri] = n;
            }
            KSYNC();
        }
    }

    NUM *ws = (NUM *)p->state + (size_t)run * p->state_len;
    VLA_PFOR(i, 0, d * (d > dv ? d : dv)) {
        if (i < dv * d)
            ws[i] = E(s->S, i);
        if (i < d * d)
            ws[(size_t)dv * d + i] = E(s->A, i);
    }
    ws += (size_t)dv * d + (size_t)d * d;
    VLA_PFOR(i, 0, m) {
        if (i < d) {
            ws[i] = E(s->n, i);
            ws[d + dv + i] = E(s->kp, i);
            ws[2 * d + dv + i] = E(s->al, i);
        }
        if (i < dv)
            ws[d + i] = E(s->o, i);
    }
    if (KTID == 0) {
        p->counts[run].t = s->t;
        p->counts[run].cnt = s->cnt;
    }
}

#ifdef __CUDACC__
/* one block per run; the arena is the block's dynamic shared memory */
__global__ void __launch_bounds__(256) FN(kern)(const kparams p)
{
    extern __shared__ double k_smem[];
    FN(kblock)(&p, (int)blockIdx.x, (NUM *)k_smem);
}
#else
static void FN(emu_block)(const kparams *p, int run, void *arena)
{
    FN(kblock)(p, run, (NUM *)arena);
}
#endif

#undef NUM
#undef RO
#undef RS
#undef KTINY
#undef SFX
