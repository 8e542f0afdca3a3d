/* klanes.h: one policy's kernel for the CPU's vector lanes: recur.h's recurrences with every
 * number a vector that holds LW runs, one per lane, so that each operation of the strict
 * recurrence is one vector instruction doing that operation for LW runs at once. Every lane
 * performs exactly the scalar sequence of operations of its run, in its order (no reduction is
 * reordered: a dot product is still a chain of additions, now LW chains side by side), hence a
 * lane's bits are the CPU model's. Branches on computed values go through recur.h's LANE_IF,
 * which masks the writes of the lanes that do not take them (lanes.c). Included by lanes.c once
 * per policy through lib/policy.h (POL, RO, RS, RI), with LNUM (the vector type) and the vector
 * operations of its width set (larith.h). The state and the input records move as
 * lib/tables.h's list says. */
#define NUM LNUM
#include "larith.h"

#define VLA_MATVEC_ROWS /* recur_prim.h: eight rows' chains in flight */
#include "recur.h"

/* x[i][l] = rec[l][o + i] for i < n and every lane l: each run's record into its lane, LW numbers
 * at a time by a transpose of LW x LW in registers (a number one at a time into its lane took a
 * tenth of an experiment's time), the last n % LW one by one. The transpose is log2(LW) perfect
 * shuffles of the rows (row 2j the first halves of rows j and j + LW/2 interleaved, row 2j + 1
 * their second halves: LILO, LIHI): each rotates the bits of (row, column) left by one place, so
 * log2(LW) of them swap row and column. */
static inline void FN(ltrans)(NUM *x, const LT *const *rec, int o, int n)
{
    int i = 0;
    for (; i + LW <= n; i += LW) {
        NUM v[LW], w[LW];
#pragma GCC unroll 16
        for (int l = 0; l < LW; l++)
            memcpy(&v[l], rec[l] + o + i, sizeof v[l]);
#pragma GCC unroll 4
        for (int r = 1; r < LW; r *= 2) {
#pragma GCC unroll 8
            for (int j = 0; j < LW / 2; j++) {
                w[2 * j] = __builtin_shuffle(v[j], v[j + LW / 2], LILO);
                w[2 * j + 1] = __builtin_shuffle(v[j], v[j + LW / 2], LIHI);
            }
            memcpy(v, w, sizeof v);
        }
        memcpy(x + i, v, sizeof v);
    }
    for (; i < n; i++)
        for (int l = 0; l < LW; l++)
            x[i][l] = rec[l][o + i];
}

/* A group of nrun <= LW runs (run indices in runs[]) for p->steps steps, in the lanes; the runs
 * agree on t and on the step flags (lanes.c groups them so). Padding lanes repeat runs[0]. */
VLA_FN void FN(lblock)(const kparams *p, const int *runs, int nrun, NUM *arena, lctx *cx_)
{
    VLA_DIMS_LOCALS(p->dm);
    int lr[LW];
    for (int l = 0; l < LW; l++)
        lr[l] = runs[l < nrun ? l : 0];
    ST st;
    ST *s = &st;
    KBIND_STATE(s, p, arena, 31);
    s->t = p->counts[runs[0]].t;
    /* counts of this launch: the ones every lane shares in s->cnt, the others per lane */
    memset(cx_->cnt, 0, sizeof cx_->cnt);
    cx_->base = (long *)&s->cnt;
    const unsigned live = nrun == LW ? LALL : (1u << nrun) - 1;
    LSETM(cx_, live);

    /* state in (kabi.h's layout), and the constants */
    const int sl = p->state_len;
    for (int l = 0; l < LW; l++) {
        const LT *gs = (const LT *)p->state + (size_t)lr[l] * sl;
#define VLA_X_(name, len)                                                                          \
    for (long i = 0, o = kstate_off(KA_##name, p->dm); i < (len); i++)                             \
        E(s->name, i)[l] = gs[o + i];
        VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
    }
    for (int i = 0; i < C_NCONST; i++)
        E(s->c, i) = LSET(((const LT *)p->consts)[i]);

    /* the record's arrays, one after the other */
#define VLA_X_(name, len) s->name,
    NUM *const dst[] = {VLA_STATE_INPUT(VLA_X_)};
#undef VLA_X_
#define VLA_X_(name, len) (len),
    const int ilen[] = {VLA_STATE_INPUT(VLA_X_)};
#undef VLA_X_
    const int nin = (int)(sizeof ilen / sizeof ilen[0]), rl = p->rec_len;
    for (long t = 0; t < p->steps; t++) {
        size_t ii = p->shared_in ? (size_t)t : (size_t)runs[0] * p->steps + t;
        int f = p->flags[ii];
        if (f & KF_SKIP) /* (the group agrees on its flags) */
            continue;
        /* each number into its lane (one record for all: a broadcast) */
        if (p->shared_in) {
            const LT *rec = (const LT *)p->inputs + ii * rl;
            for (int a = 0; a < nin; rec += ilen[a], a++)
                for (int i = 0; i < ilen[a]; i++)
                    dst[a][i] = LSET(rec[i]);
        } else {
            const LT *rec[LW];
            for (int l = 0; l < LW; l++)
                rec[l] = (const LT *)p->inputs + ((size_t)lr[l] * p->steps + t) * rl;
            for (int a = 0, o = 0; a < nin; o += ilen[a], a++)
                FN(ltrans)(dst[a], rec, o, ilen[a]);
        }
        const int moved = p->out_moved && !(f & KF_READ);
        if (moved)
            memcpy(cx_->prev, s->A, (size_t)d * d * sizeof(NUM));
        if (f & KF_READ) { /* lib's vstate_read after its load */
            s->cnt.reads++;
            FN(read_loaded)(cx_, s);
        } else {
            FN(vstate_advance)(cx_, s, f & KF_GATE);
        }
        for (int l = 0; l < nrun; l++) { /* the taps, each lane to its run */
            size_t ri = (size_t)runs[l] * p->steps + t;
            if (p->out_o)
                for (int i = 0; i < dv; i++)
                    ((LT *)p->out_o)[ri * dv + i] = E(s->o, i)[l];
            if (p->out_kp)
                for (int i = 0; i < d; i++)
                    ((LT *)p->out_kp)[ri * d + i] = E(s->kp, i)[l];
            if (p->out_al)
                for (int i = 0; i < d; i++)
                    ((LT *)p->out_al)[ri * d + i] = E(s->al, i)[l];
            if (p->out_moved) { /* A's bit patterns before and after the step */
                long n = 0, nd = 0;
                const NUM *prev = cx_->prev;
                for (int i = 0; moved && i < d * d; i++)
                    if (memcmp(&E(s->A, i)[l], &prev[i][l], sizeof(LT))) {
                        n++;
                        nd += i % (d + 1) == 0;
                    }
                p->out_moved[2 * ri] = n;
                p->out_moved[2 * ri + 1] = nd;
            }
        }
        LSETM(cx_, live); /* (every LANE_IF restores it; this keeps a fault from spreading) */
    }

    /* state out, and the counts: the run's own before this launch + shared + its lane's */
    for (int l = 0; l < nrun; l++) {
        LT *ws = (LT *)p->state + (size_t)runs[l] * sl;
#define VLA_X_(name, len)                                                                          \
    for (long i = 0, o = kstate_off(KA_##name, p->dm); i < (len); i++)                             \
        ws[o + i] = E(s->name, i)[l];
        VLA_STATE_SAVED(VLA_X_)
#undef VLA_X_
        kcounts *kc = &p->counts[runs[l]];
        long *c = (long *)&kc->cnt;
        for (int j = 0; j < LCOUNTS; j++)
            c[j] += cx_->base[j] + cx_->cnt[j][l];
        kc->t = s->t;
    }
}

static void FN(lanes_block)(const kparams *p, const int *runs, int nrun, void *arena, lctx *cx)
{
    FN(lblock)(p, runs, nrun, (NUM *)arena, cx);
}

#undef LT
#undef LW
#undef LALL
#include "recur_end.h"
