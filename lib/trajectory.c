/* trajectory.c: one configuration over given arrays, every step's read-out and norms, the final
 * state and the counts (vlastab.h, "a trajectory"; the Python binding's run()). The steps are an
 * engine's: its loop over t, its chunk ends and its last, partial chunk, written once in
 * engine.c; this file only keeps what the engine shows after each step. */
#include "model_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    vla_engine *e;
    int d, dv, has_A;
    long T;
    vla_trajectory *out;
    double *S, *A; /* per run: dv x d and d x d, the state read after each of its steps */
} traj;

/* after every step of every run (runs on several threads: each touches its own rows) */
static int traj_step(void *ctx, const vla_step_view *v)
{
    const traj *x = ctx;
    const int d = x->d, dv = x->dv;
    const long t = v->t, at = (long)v->run * x->T + t - 1;
    double *o = x->out->o + (size_t)v->run * x->T * dv, *S = x->S + (size_t)v->run * dv * d,
           *A = x->A + (size_t)v->run * d * d;
    long *bad = &x->out->nonfinite[v->run];
    if (v->co) { /* a chunk's end: every token's read-out, a non-finite one at its own step */
        memcpy(o + (size_t)(t - v->nco) * dv, v->co, (size_t)v->nco * dv * sizeof *o);
        for (long i = t - v->nco; !*bad && i < t; i++)
            if (!vla_finite_all(o + i * dv, dv))
                *bad = i + 1;
    } else if (v->o) {
        memcpy(o + (size_t)(t - 1) * dv, v->o, dv * sizeof *o);
    }
    vla_engine_get(x->e, v->run, VLA_Q_S, S);
    x->out->s_fro[at] = vla_fro(S, (long)dv * d);
    x->out->a_fro[at] = NAN;
    if (x->has_A) {
        vla_engine_get(x->e, v->run, VLA_Q_A, A);
        x->out->a_fro[at] = vla_fro(A, (long)d * d);
    }
    if (!*bad && !((!v->o || vla_finite_all(v->o, dv)) && vla_finite_all(S, dv * d) &&
                   (!x->has_A || vla_finite_all(A, d * d))))
        *bad = t;
    return VLA_OK;
}

int vla_trajectory_run(const vla_config *cfg, int heads, long T, const vla_arrays *in,
                       vla_trajectory *out, vla_error *err)
{
    if (!cfg || !in || !out || !in->q || !in->k || !in->v || !out->o || !out->s_fro ||
        !out->a_fro || !out->S || !out->counts || !out->nonfinite || heads < 1 || T < 1)
        return vla_fail(err, VLA_EINVAL, "vla_trajectory_run: a NULL array, no heads or no steps");
    const int d = cfg->d, dv = cfg->dv;
    const size_t n = (size_t)heads * T;
    traj x = {.d = d, .dv = dv, .has_A = vla_model_has_A(cfg->model), .T = T, .out = out,
              .S = malloc((size_t)heads * dv * d * sizeof(double)),
              .A = malloc((size_t)heads * d * d * sizeof(double))};
    vla_input *steps = malloc(n * sizeof *steps);
    int r = x.S && x.A && steps ? VLA_OK
                                : vla_fail(err, VLA_ENOMEM, "out of memory for %ld steps of %d "
                                           "heads", T, heads);
    for (size_t i = 0; !r && i < n; i++) /* step i % T of head i / T, as the engine reads them */
        steps[i] = (vla_input){.q = in->q + i * d, .k = in->k + i * d, .v = in->v + i * dv,
                               .u = in->u ? in->u + i * d : NULL,
                               .g = in->g ? in->g + i * dv : NULL,
                               .beta = in->beta ? in->beta[i] : NAN,
                               .decay = in->decay ? in->decay[i] : NAN,
                               .lg = in->lg ? in->lg + i * d : NULL,
                               .a = in->a ? in->a + i * d : NULL,
                               .b = in->b ? in->b + i * d : NULL,
                               .lgs = in->lgs ? in->lgs[i] : 0};
    memset(out->nonfinite, 0, (size_t)heads * sizeof *out->nonfinite);
    /* one head on the calling thread: many small calls (a notebook's, the tests') pay no team */
    vla_engine_spec sp = {.cfg = *cfg, .runs = heads, .in = steps, .T = T, .taps = VLA_TAP_O,
                          .on_step = traj_step, .ctx = &x, .threads = heads > 1 ? 0 : 1};
    if (!r && !(r = vla_engine_new(&x.e, &sp, err)) &&
        ((r = vla_engine_advance(x.e, T)) || (r = vla_engine_finish(x.e))))
        vla_fail(err, r, "%s", vla_error_msg(vla_engine_error(x.e)));
    for (int h = 0; !r && h < heads; h++) {
        vla_engine_get(x.e, h, VLA_Q_S, out->S + (size_t)h * dv * d);
        vla_engine_counts(x.e, h, &out->counts[h]);
    }
    vla_engine_free(x.e);
    free(steps);
    free(x.S);
    free(x.A);
    return r;
}
