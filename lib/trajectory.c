/* trajectory.c: one configuration over given arrays, every step's read-out and norms, the final
 * state and the counts (vlastab.h, "a trajectory"; the Python binding's run()). The steps are an
 * engine's: its loop over t, its chunk ends and its last, partial chunk, written once in
 * engine.c; this file only keeps what the engine shows after each step. And an engine of one
 * run fed blocks of given arrays, its state kept between them (vla_blocks; the binding's Model). */
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

/* row i of in's arrays (head i / T, step i % T) as a step's inputs */
static vla_input row_input(const vla_arrays *in, size_t i, int d, int dv)
{
    return (vla_input){.q = in->q + i * d, .k = in->k + i * d, .v = in->v + i * dv,
                       .u = in->u ? in->u + i * d : NULL, .g = in->g ? in->g + i * dv : NULL,
                       .beta = in->beta ? in->beta[i] : NAN,
                       .decay = in->decay ? in->decay[i] : NAN,
                       .lg = in->lg ? in->lg + i * d : NULL, .a = in->a ? in->a + i * d : NULL,
                       .b = in->b ? in->b + i * d : NULL, .lgs = in->lgs ? in->lgs[i] : 0};
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
        steps[i] = row_input(in, i, d, dv);
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

/* ---- an engine fed blocks of given arrays ---- */

struct vla_blocks {
    vla_engine *e;
    vla_input *win; /* the engine's prepared inputs: a window of `block` steps, step t at (t - 1) %
                       block, refilled before each block */
    long block, t;  /* t: the steps taken */
    int d, dv;
    double *o; /* the block's read-outs (the caller's array; NULL: none wanted) */
};

static int blocks_step(void *ctx, const vla_step_view *v)
{
    const vla_blocks *b = ctx;
    if (b->o && v->o)
        memcpy(b->o + (size_t)(v->t - b->t - 1) * b->dv, v->o, b->dv * sizeof *b->o);
    return VLA_OK;
}

int vla_blocks_new(vla_blocks **out, const vla_config *cfg, long block, vla_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !cfg || block < 1)
        return vla_fail(err, VLA_EINVAL, "vla_blocks_new: a NULL argument, or a block of no steps");
    if (vla_form_pending(cfg, 1))
        return vla_fail(err, VLA_ENOTSUP, "vla_blocks_new: a chunk's state and read-outs exist at "
                        "its end only (docs/forms.md): the seq or scan form, or "
                        "vla_trajectory_run");
    vla_blocks *b = calloc(1, sizeof *b);
    if (!b || !(b->win = calloc((size_t)block, sizeof *b->win))) {
        free(b);
        return vla_fail(err, VLA_ENOMEM, "out of memory for a block of %ld steps", block);
    }
    *b = (vla_blocks){.win = b->win, .block = block, .d = cfg->d, .dv = cfg->dv};
    vla_engine_spec sp = {.cfg = *cfg, .runs = 1, .in = b->win, .T = block, .cycle = 1,
                          .taps = VLA_TAP_O, .on_step = blocks_step, .ctx = b, .threads = 1};
    const int r = vla_engine_new(&b->e, &sp, err);
    if (r)
        vla_blocks_free(b);
    else
        *out = b;
    return r;
}

int vla_blocks_advance(vla_blocks *b, long n, const vla_arrays *in, double *o, vla_error *err)
{
    if (!b || !in || !in->q || !in->k || !in->v || n < 0 || n > b->block)
        return vla_fail(err, VLA_EINVAL, "vla_blocks_advance: a NULL argument, or n outside 0..%ld",
                        b ? b->block : 0);
    for (long i = 0; i < n; i++)
        b->win[(b->t + i) % b->block] = row_input(in, (size_t)i, b->d, b->dv);
    b->o = o;
    const int r = vla_engine_advance(b->e, b->t + n);
    b->o = NULL;
    if (r)
        return vla_fail(err, r, "%s", vla_error_msg(vla_engine_error(b->e)));
    b->t += n;
    return VLA_OK;
}

int vla_blocks_get(vla_blocks *b, vla_quantity q, double *dst)
{
    return b ? vla_engine_get(b->e, 0, q, dst) : VLA_EINVAL;
}

void vla_blocks_free(vla_blocks *b)
{
    if (!b)
        return;
    vla_engine_free(b->e);
    free(b->win);
    free(b);
}
