/* refrun.c: the references of vla-check's rows and of its judge (refrun.h): the taps that keep a
 * window's read-outs, and the exact references in double-double checked against MPFR. */
#include "refrun.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

int taps_on_step(void *ctx, const vla_step_view *v)
{
    taps_t *tp = ctx;
    size_t base = (size_t)v->run * RING, slot = base + (size_t)((v->t - 1) % RING);
    tp->seen[slot] = v->o != NULL; /* the chunk form computes a chunk's read-outs at its end */
    if (v->o)
        memcpy(tp->o + slot * tp->dv, v->o, tp->dv * sizeof *v->o);
    if (v->co) /* ... every token's, also those of the window before (RING keeps them) */
        for (int r = 0; r < v->nco; r++) {
            long tok = v->t - (v->nco - 1 - r);
            if (tok < 1)
                continue;
            size_t sr = base + (size_t)((tok - 1) % RING);
            tp->seen[sr] = 1;
            memcpy(tp->o + sr * tp->dv, v->co + (size_t)r * tp->dv, tp->dv * sizeof *v->co);
        }
    if (tp->moved && v->a_moved_diag >= 0 && !v->in->is_read)
        tp->moved(tp->mctx, v->run, v->a_moved_diag);
    return VLA_OK;
}

refck_t refck;

/* *worst becomes w where w is larger, or NaN (a NaN, an overflow in one, stays) */
static void refck_worst(double *worst, double w)
{
    if (!isnan(*worst) && !(w <= *worst))
        *worst = w;
}

/* a group's counts into the table's (in any order: the same sums and largest differences) */
void refck_add(refck_t *to, const refck_t *g)
{
    to->dd += g->dd;
    to->mpfr += g->mpfr;
    to->refused += g->refused;
    to->compared += g->compared;
    refck_worst(&to->worst, g->worst);
    refck_worst(&to->failed, g->failed);
}

/* what the exact references were, in words: what the groups of the table or the judge's
 * references ("group", "reference": an s where there are more than one) */
void refck_describe(long bits, long steps, const char *what, char *buf, size_t len)
{
    char fell[300] = "", bad[40];
    if (isnan(refck.failed))
        snprintf(bad, sizeof bad, "not finite in one of the two");
    else
        snprintf(bad, sizeof bad, "%.2g", refck.failed);
    if (refck.refused)
        snprintf(fell, sizeof fell, "; %ld %s%s in MPFR, which double-double could not run",
                 refck.refused, what, refck.refused == 1 ? "" : "s");
    if (!refck.dd && !refck.mpfr)
        snprintf(buf, len, "exact (MPFR, %ld bits%s)", bits, fell);
    else if (!refck.dd)
        snprintf(buf, len, "exact (MPFR, 256 bits: the double-double reference of %ld %s%s failed "
                           "its check against MPFR on head 0 (largest relative difference %s, "
                           "trusted to %.0e)%s)", refck.mpfr, what, refck.mpfr == 1 ? "" : "s", bad,
                 VREF_DD_TRUST, fell);
    else {
        char why[80] = "";
        if (refck.mpfr)
            snprintf(why, sizeof why, " (largest relative difference %s)", bad);
        snprintf(buf, len, "exact (%ld %s%s in double-double, 106 bits, checked against MPFR at "
                           "256 bits on head 0 to t = %ld at %ld checkpoints: largest relative "
                           "difference %.2g, trusted to %.0e; %ld %s%s in MPFR, whose dd reference "
                           "failed the check%s%s)", refck.dd, what, refck.dd == 1 ? "" : "s",
                 steps < VREF_DD_CHECK_STEPS ? steps : VREF_DD_CHECK_STEPS, refck.compared,
                 refck.worst, VREF_DD_TRUST, refck.mpfr, what, refck.mpfr == 1 ? "" : "s", why,
                 fell);
    }
}

/* The engine of rs (vla_cli_ref_spec's, or any other spec: made as it is): the exact reference
 * in double-double where use_dd and MPFR at the default bits are asked for, with its check in
 * *chk (else NULL); MPFR where dd cannot run it. 0, else 1 with the reason in why. */
int ref_new(vla_engine **ref, vref_ddcheck **chk, vla_engine_spec rs, int use_dd,
                   refck_t *rk, vla_error *why)
{
    *chk = NULL;
    if (use_dd && rs.backend == vref_backend_exact() && rs.ref_bits == VREF_DEFAULT_BITS) {
        rs.backend = vref_backend_dd();
        if (!vla_engine_new(ref, &rs, why)) {
            if (!vref_ddcheck_new(chk, &rs, VREF_DD_CHECK_STEPS, why))
                return 0;
            vla_engine_free(*ref);
            *ref = NULL;
            return 1;
        }
        rs.backend = vref_backend_exact();
        rk->refused++;
    }
    return vla_engine_new(ref, &rs, why) != 0;
}

/* a reference's check at its end (none: NULL), counted in *rk for refck_describe: REDO_MPFR when
 * it failed, and the reference must run again with MPFR */
int refck_note(const vref_ddcheck *chk, refck_t *rk)
{
    if (!chk)
        return 0;
    const int ok = vref_ddcheck_ok(chk);
    if (ok) {
        rk->dd++;
        rk->compared += vref_ddcheck_compared(chk);
    } else
        rk->mpfr++;
    refck_worst(ok ? &rk->worst : &rk->failed, vref_ddcheck_worst(chk));
    return ok ? 0 : REDO_MPFR;
}
