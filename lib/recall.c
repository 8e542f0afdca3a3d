/* recall.c: memory-level associative recall (docs/math.md section 7.6): the runs of an engine
 * write the n pairs of mqar:N,G, then G distractors, then read every key back; a read is correct
 * when its nearest stored value by cosine is the right one. bin/vla-recall and the tests score
 * with this. */
#include "vlastab.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    long n;
    int dv;
    double *val, *vn; /* per run: the values as the writes saw them (n x dv) and their norms */
    vla_recall *res;
    int first; /* the batch's first run among all */
} rctx;

static double rdot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* every step of a run, in order: a write stores its pair's value, a read is scored */
static int rec_step(void *ctx, const vla_step_view *v)
{
    const rctx *x = ctx;
    const int dv = x->dv;
    const long n = x->n, p = v->in->pair;
    double *val = x->val + (size_t)v->run * n * dv, *vn = x->vn + (size_t)v->run * n;
    if (!v->in->is_read) {
        if (p >= 0) { /* the target: the value in binary64, before any rounding to the format */
            memcpy(val + p * dv, v->in->v, sizeof(double) * dv);
            vn[p] = sqrt(rdot(v->in->v, v->in->v, dv));
        }
        return VLA_OK;
    }
    if (p < 0 || p >= n)
        return VLA_EINVAL; /* a read that names no pair: the stream broke its contract */
    /* nearest stored value by cosine; a zero or non-finite read-out is never correct */
    const double *o = v->o, *want = val + p * dv;
    double on = sqrt(rdot(o, o, dv)), best = -INFINITY;
    long arg = -1;
    for (long j = 0; on > 0 && isfinite(on) && j < n; j++) {
        double c = rdot(o, val + j * dv, dv) / (on * vn[j]);
        if (c > best) {
            best = c;
            arg = j;
        }
    }
    double dd = 0;
    for (int i = 0; i < dv; i++)
        dd += (o[i] - want[i]) * (o[i] - want[i]);
    vla_recall *r = &x->res[x->first + v->run];
    for (int i = 0; !r->nonfinite && i < dv; i++)
        if (!isfinite(o[i])) /* the table's numbers carry it: a caller must be able to say so */
            r->nonfinite = v->t;
    r->reads++;
    r->correct += arg == p;
    r->err_sum += sqrt(dd) / vn[p];
    r->cos_sum += on > 0 ? rdot(o, want, dv) / (on * vn[p]) : 0;
    return VLA_OK;
}

int vla_recall_run(const vla_engine_spec *base, long n, long G, vla_recall *res, vla_error *err)
{
    char spec[64];
    snprintf(spec, sizeof spec, "mqar:%ld,%ld", n, G);
    const int dv = base->cfg.dv, runs = base->runs;
    memset(res, 0, sizeof *res * runs);
    /* runs in batches whose stored values take at most about 256 MB */
    long per = (long)(256e6 / ((double)n * (dv + 1) * sizeof(double)));
    int batch = per < 1 ? 1 : per > runs ? runs : (int)per;
    int e = 0;
    for (int first = 0; !e && first < runs; first += batch) {
        int nb = runs - first < batch ? runs - first : batch;
        rctx x = {n, dv, malloc(sizeof(double) * (size_t)nb * n * dv),
                  malloc(sizeof(double) * (size_t)nb * n), res, first};
        vla_engine_spec sp = *base;
        sp.stream = spec;
        sp.in = NULL;
        sp.runs = nb;
        sp.first_head = base->first_head + first;
        sp.taps = VLA_TAP_O;
        sp.on_step = rec_step;
        sp.ctx = &x;
        vla_engine *m = NULL;
        if (!x.val || !x.vn)
            e = vla_fail(err, VLA_ENOMEM, "out of memory");
        else if (!(e = vla_engine_new(&m, &sp, err)) && (e = vla_engine_advance(m, 2 * n + G)))
            vla_fail(err, e, "%s: %s", spec, vla_error_msg(vla_engine_error(m)));
        for (int h = 0; !e && h < nb; h++) {
            vla_counts cn;
            if (vla_engine_counts(m, h, &cn) == 0)
                res[first + h].den_inf = cn.den_inf;
        }
        vla_engine_free(m);
        free(x.val);
        free(x.vn);
    }
    return e;
}
