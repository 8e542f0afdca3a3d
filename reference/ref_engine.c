/* ref_engine.c: the MPFR models as engine backends (vlastab.h, "engines"): "exact" (every
 * operation at spec.ref_bits, 256 by default) and "emulate" (each policy's formats bit for bit),
 * one vla_model per run on the CPU's threads, like lib's cpu backend. */
#include "vlaref.h"
#include "engine_impl.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* a step at many bits can take minutes: it is given up when spec.stop is set (vlastab.h) */
static int make_exact(vla_model **out, const vla_config *cfg, const vla_engine_spec *spec)
{
    int r = vref_model_new(out, cfg, VREF_EXACT, spec->ref_bits ? spec->ref_bits : VREF_DEFAULT_BITS);
    if (!r)
        vref_model_stop_on(*out, spec->stop);
    return r;
}

static int make_emulate(vla_model **out, const vla_config *cfg, const vla_engine_spec *spec)
{
    (void)spec;
    return vref_model_new(out, cfg, VREF_EMULATE, 0);
}

/* An MPFR number of p bits: its struct (32 bytes) and limbs in memory, at most 1 + 8 bytes of
 * precision, 1 + 8 of exponent and ceil(p / 8) of significand exported (mpfr_fpif_export); a
 * pair of them for comp (double-word) */
static long mpfr_bytes(long bits, const vla_engine_spec *spec)
{
    return (48 + (bits + 7) / 8) * (spec->cfg.track == VLA_TRACK_COMP ? 2 : 1);
}

static long exact_bytes(const vla_engine_spec *spec)
{
    return mpfr_bytes(spec->ref_bits ? spec->ref_bits : VREF_DEFAULT_BITS, spec);
}

static long emulate_bytes(const vla_engine_spec *spec) { return mpfr_bytes(64, spec); }

const vla_backend *vref_backend_exact(void)
{
    static const vla_backend b = {.name = "exact", .ops = &vla_engine_models_ops,
                                  .make_model = make_exact, .number_bytes = exact_bytes};
    return &b;
}

const vla_backend *vref_backend_emulate(void)
{
    static const vla_backend b = {.name = "emulate", .ops = &vla_engine_models_ops,
                                  .make_model = make_emulate, .number_bytes = emulate_bytes};
    return &b;
}

/* ---- "dd": the exact reference in double-double (ref_model_dd.c), and its check ---- */

static int make_dd(vla_model **out, const vla_config *cfg, const vla_engine_spec *spec)
{
    (void)spec;
    return vref_dd_model_new(out, cfg);
}

static long dd_bytes(const vla_engine_spec *spec)
{
    (void)spec;
    return 2 * sizeof(double);
}

const vla_backend *vref_backend_dd(void)
{
    static const vla_backend b = {.name = "dd", .ops = &vla_engine_models_ops,
                                  .make_model = make_dd, .number_bytes = dd_bytes,
                                  .group = &vref_dd_group};
    return &b;
}

struct vref_ddcheck {
    vla_engine *mp; /* MPFR's exact reference (256 bits) on the dd engine's run 0 alone */
    long steps;     /* ... up to this step */
    long ring;      /* prepared inputs in a ring of this many steps (cycle), else 0 */
    double worst;
    long compared, last; /* checkpoints compared, the last one's t */
};

int vref_ddcheck_new(vref_ddcheck **out, const vla_engine_spec *dd, long steps, vla_error *err)
{
    vref_ddcheck *c = calloc(1, sizeof *c);
    if (!c)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    vla_engine_spec one = *dd;
    one.backend = vref_backend_exact();
    one.ref_bits = VREF_DEFAULT_BITS;
    one.runs = 1;
    one.threads = 1;
    one.on_step = NULL;
    one.ctx = NULL;
    one.taps = 0;
    if (one.stream && one.stream_steps > steps) /* of a trace, no more than the check reads */
        one.stream_steps = steps;
    int r = vla_engine_new(&c->mp, &one, err);
    if (r) {
        free(c);
        return r;
    }
    c->steps = steps;
    c->ring = !one.stream && one.cycle ? one.T : 0;
    *out = c;
    return 0;
}

/* MPFR's engine to t (at most the checked steps). Its inputs are the dd engine's: where they are
 * a ring refilled as the engines advance, a step more than a ring behind has been overwritten, and
 * reading it would compare two references of different inputs: refused (VLA_ERANGE). */
int vref_ddcheck_follow(vref_ddcheck *c, long t)
{
    if (t > c->steps)
        t = c->steps;
    const long at = vla_engine_t(c->mp, 0);
    if (t <= at)
        return 0;
    if (c->ring && t - at > c->ring)
        return VLA_ERANGE;
    return vla_engine_advance(c->mp, t);
}

/* max_i |(x_i + xl_i) - (y_i + yl_i)| / max_i |y_i| of quantity q (n numbers) of two models;
 * NaN where either cannot give it (a model that is no dd or exact one fails the check) */
static double dd_diff(vla_model *a, vla_model *b, vla_quantity q, size_t n, double *buf)
{
    double *x = buf, *xl = x + n, *y = xl + n, *yl = y + n, num = 0, den = 0;
    if (vla_model_get(a, q, x) || vref_model_get_lo(a, q, xl) || vla_model_get(b, q, y) ||
        vref_model_get_lo(b, q, yl))
        return NAN;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((x[i] - y[i]) + (xl[i] - yl[i]));
        num = e > num || isnan(e) ? e : num;
        den = fabs(y[i]) > den ? fabs(y[i]) : den;
    }
    return den > 0 ? num / den : num;
}

/* the larger of two differences, NaN the largest (an overflow in one reference that the other
 * does not have must fail the check: fmax would drop it) */
static double worse(double e, double f) { return isnan(e) ? e : isnan(f) || f > e ? f : e; }

int vref_ddcheck_at(vref_ddcheck *c, vla_engine *dd, long t)
{
    if (t > c->steps || t < 1 || vla_engine_t(dd, 0) != t)
        return 0;
    int r = vref_ddcheck_follow(c, t);
    if (r)
        return r;
    vla_model *a = vla_engine_run_model(dd, 0), *b = vla_engine_run_model(c->mp, 0);
    const vla_config *cfg = vla_engine_config(dd);
    const size_t d = cfg->d, dv = cfg->dv, n = d * (d > dv ? d : dv);
    double *buf = malloc(4 * n * sizeof *buf);
    if (!a || !b || !buf)
        return free(buf), VLA_ENOMEM;
    double e = worse(dd_diff(a, b, VLA_Q_S, dv * d, buf), dd_diff(a, b, VLA_Q_O, dv, buf));
    if (cfg->normalize)
        e = worse(e, dd_diff(a, b, VLA_Q_N, d, buf));
    if (vla_model_has_A(cfg->model) && vla_track_holds(cfg->track) == VLA_HOLDS_A)
        e = worse(e, dd_diff(a, b, VLA_Q_A, d * d, buf));
    free(buf);
    c->worst = worse(c->worst, e);
    c->compared++;
    c->last = t;
    return 0;
}

double vref_ddcheck_worst(const vref_ddcheck *c) { return c->worst; }
long vref_ddcheck_compared(const vref_ddcheck *c) { return c->compared; }

int vref_ddcheck_ok(const vref_ddcheck *c) { return c->compared > 0 && c->worst <= VREF_DD_TRUST; }

int vref_ddcheck_save(vref_ddcheck *c, FILE *f)
{
    const long n[2] = {c->compared, c->last};
    if (fwrite(&c->worst, sizeof c->worst, 1, f) != 1 || fwrite(n, sizeof n, 1, f) != 1)
        return VLA_EIO;
    return vla_engine_save(c->mp, 0, f);
}

int vref_ddcheck_load(vref_ddcheck *c, FILE *f, long t)
{
    const long at = t < c->steps ? t : c->steps;
    double worst;
    long n[2];
    if (fread(&worst, sizeof worst, 1, f) != 1 || fread(n, sizeof n, 1, f) != 1 || n[0] < 0 ||
        n[0] > at || n[1] < 0 || n[1] > at || (n[0] > 0) != (n[1] > 0) ||
        !(isnan(worst) || worst >= 0) || vla_engine_load(c->mp, 0, f) ||
        vla_engine_t(c->mp, 0) != at)
        return VLA_EFORMAT;
    c->worst = worst;
    c->compared = n[0];
    c->last = n[1];
    return VLA_OK;
}

long vref_ddcheck_save_max(const vref_ddcheck *c)
{
    return (long)(sizeof c->worst + 2 * sizeof(long)) + vla_engine_save_max(c->mp);
}

void vref_ddcheck_describe(const vref_ddcheck *c, char *buf, size_t len)
{
    if (!c->compared)
        snprintf(buf, len, "the double-double reference could not be checked (no checkpoint at or "
                           "before t = %ld): MPFR at %d bits", c->steps, VREF_DEFAULT_BITS);
    else if (vref_ddcheck_ok(c))
        snprintf(buf, len, "double-double (106 bits, every operation and input transform), checked "
                           "against MPFR at %d bits on run 0 at its %ld checkpoints to t = %ld: "
                           "largest relative difference %.2g (trusted to %.0e)",
                 VREF_DEFAULT_BITS, c->compared, c->last, c->worst, VREF_DD_TRUST);
    else if (isnan(c->worst)) /* (printf would write nan or -nan) */
        snprintf(buf, len, "MPFR at %d bits: the double-double reference and MPFR's were not both "
                           "finite (an Inf or a NaN in one of them) on run 0 by t = %ld, so it was "
                           "not used", VREF_DEFAULT_BITS, c->last);
    else
        snprintf(buf, len, "MPFR at %d bits: the double-double reference differed from it by %.2g "
                           "(more than %.0e) on run 0 by t = %ld, so it was not used",
                 VREF_DEFAULT_BITS, c->worst, VREF_DD_TRUST, c->last);
}

void vref_ddcheck_free(vref_ddcheck *c)
{
    if (!c)
        return;
    vla_engine_free(c->mp);
    free(c);
}
