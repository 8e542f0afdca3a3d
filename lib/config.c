/* config.c: model and tracking names, the SPEC section 2 defaults of every constant, NAME=VALUE
 * settings from the command line, and the error strings. */
#include "vlastab.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *vla_strerror(int err)
{
    switch (err) {
    case VLA_OK: return "success";
    case VLA_EINVAL: return "invalid argument";
    case VLA_ERANGE: return "value out of range";
    case VLA_ENONFINITE: return "NaN or Inf in an input";
    case VLA_ENOTSUP: return "not supported for this combination";
    case VLA_ENOMEM: return "out of memory";
    case VLA_EIO: return "input/output error";
    case VLA_EFORMAT: return "malformed file";
    default: return "unknown error";
    }
}

static const char *const model_names[VLA_NMODEL] = {"la", "delta", "rls", "vla1", "vla3"};
static const char *const track_names[VLA_NTRACK] = {"sm", "sm-sym", "joseph", "chol", "comp", "sr"};

const char *vla_model_name(vla_model_kind m) { return (unsigned)m < VLA_NMODEL ? model_names[m] : "?"; }
const char *vla_track_name(vla_track t) { return (unsigned)t < VLA_NTRACK ? track_names[t] : "?"; }
int vla_model_has_A(vla_model_kind m) { return m == VLA_RLS || m == VLA_VLA1 || m == VLA_VLA3; }

static int parse_name(const char *name, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (name && !strcmp(name, names[i])) {
            *out = i;
            return VLA_OK;
        }
    return VLA_EINVAL;
}
int vla_model_parse(const char *name, vla_model_kind *out)
{
    int i, r = parse_name(name, model_names, VLA_NMODEL, &i);
    if (!r)
        *out = (vla_model_kind)i;
    return r;
}
int vla_track_parse(const char *name, vla_track *out)
{
    int i, r = parse_name(name, track_names, VLA_NTRACK, &i);
    if (!r)
        *out = (vla_track)i;
    return r;
}

void vla_config_default(vla_config *c, vla_model_kind model, int d)
{
    memset(c, 0, sizeof *c);
    c->model = model;
    c->track = VLA_TRACK_SM;
    c->prec = VLA_F64;
    c->mode = VLA_STRICT;
    c->d = c->dv = d;
    c->features = VLA_FEAT_OWN;
    c->lambda0 = 1.0;
    c->eps_g = 1e-6;
    c->stab_eps = 1e-4;
    c->per_eps = 1e-5;
    c->period = 50;
    c->eps_o = 1e-6;
    c->clip = 10.0;
    c->clamp = 1000.0;
    c->clamp_eps = 1e-5;
    c->renorm = 0.0;
    c->beta = 1.0;
    c->delta_form = VLA_DELTA_GATED;
    c->sr_seed = 1;
    c->normalize = (model == VLA_LA || model == VLA_VLA3);
    switch (model) {
    case VLA_VLA1: /* the v1 layer: guarded Sherman-Morrison, nudge every 50, norm clamp */
        c->nudge = c->guard = c->clamp_on = 1;
        break;
    case VLA_VLA3: /* the canonical v3 recurrence of the benchmark notebook */
        c->lambda0 = 0.1;
        c->per_eps = 1e-3;
        c->period = 20;
        c->nudge = c->guard = 1;
        break;
    default: /* la, delta, rls: exact recurrences, no safety devices */
        break;
    }
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(x))
        return VLA_EINVAL;
    *out = x;
    return VLA_OK;
}

static int parse_switch(const char *s, int *out)
{
    if (!strcmp(s, "on") || !strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "true"))
        *out = 1;
    else if (!strcmp(s, "off") || !strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "false"))
        *out = 0;
    else
        return VLA_EINVAL;
    return VLA_OK;
}

int vla_config_set(vla_config *c, const char *name, const char *value)
{
    static const struct {
        const char *name;
        size_t off;
    } reals[] = {
        {"lambda0", offsetof(vla_config, lambda0)},   {"eps_g", offsetof(vla_config, eps_g)},
        {"stab_eps", offsetof(vla_config, stab_eps)}, {"per_eps", offsetof(vla_config, per_eps)},
        {"eps_o", offsetof(vla_config, eps_o)},       {"clip", offsetof(vla_config, clip)},
        {"clamp", offsetof(vla_config, clamp)},       {"clamp_eps", offsetof(vla_config, clamp_eps)},
        {"renorm", offsetof(vla_config, renorm)},     {"beta", offsetof(vla_config, beta)},
    }, switches[] = {
        {"nudge", offsetof(vla_config, nudge)},       {"guard", offsetof(vla_config, guard)},
        {"clamp_on", offsetof(vla_config, clamp_on)}, {"normalize", offsetof(vla_config, normalize)},
    };
    if (!name || !value)
        return VLA_EINVAL;
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!strcmp(name, reals[i].name))
            return parse_double(value, (double *)((char *)c + reals[i].off));
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
        if (!strcmp(name, switches[i].name))
            return parse_switch(value, (int *)((char *)c + switches[i].off));
    if (!strcmp(name, "period")) {
        double p;
        if (parse_double(value, &p) || p != floor(p) || p < 1 || p > 1e9)
            return VLA_EINVAL;
        c->period = (int)p;
        return VLA_OK;
    }
    if (!strcmp(name, "sr_seed")) {
        double p;
        if (parse_double(value, &p) || p != floor(p) || p < 0 || p > 0x1p53)
            return VLA_EINVAL;
        c->sr_seed = (uint64_t)p;
        return VLA_OK;
    }
    if (!strcmp(name, "features")) {
        if (!strcmp(value, "id"))
            c->features = VLA_FEAT_ID;
        else if (!strcmp(value, "own") || !strcmp(value, "phi"))
            c->features = VLA_FEAT_OWN;
        else
            return VLA_EINVAL;
        return VLA_OK;
    }
    if (!strcmp(name, "delta_form")) {
        if (!strcmp(value, "gated"))
            c->delta_form = VLA_DELTA_GATED;
        else if (!strcmp(value, "decay"))
            c->delta_form = VLA_DELTA_DECAY;
        else
            return VLA_EINVAL;
        return VLA_OK;
    }
    return VLA_EINVAL;
}

int vla_config_check(const vla_config *c)
{
    if ((unsigned)c->model >= VLA_NMODEL || (unsigned)c->track >= VLA_NTRACK ||
        (unsigned)c->prec >= VLA_NPREC || (c->mode != VLA_STRICT && c->mode != VLA_FAST))
        return VLA_EINVAL;
    if (c->d < VLA_D_MIN || c->d > VLA_D_MAX || c->dv < VLA_D_MIN || c->dv > VLA_D_MAX)
        return VLA_ERANGE;
    if (!(c->lambda0 > 0) || !(c->eps_g >= 0) || !(c->stab_eps > 0) || !(c->per_eps >= 0) ||
        c->period < 1 || !(c->eps_o > 0) || !(c->clip > 0) || !(c->clamp > 0) ||
        !(c->clamp_eps >= 0) || !(c->renorm >= 0) || !(c->beta > 0 && c->beta < 2) ||
        !isfinite(c->lambda0 + c->eps_g + c->stab_eps + c->per_eps + c->eps_o + c->clip +
                  c->clamp + c->clamp_eps + c->renorm))
        return VLA_ERANGE;
    return VLA_OK;
}

int vla_track_check(const vla_config *c, const char **why)
{
    const char *w = NULL;
    switch (c->track) {
    case VLA_TRACK_SM:
    case VLA_TRACK_SMSYM:
    case VLA_TRACK_JOSEPH:
        break;
    case VLA_TRACK_CHOL:
        if (vla_model_has_A(c->model) && c->nudge)
            w = "chol keeps the factor of M = A^-1 and a nudge of A is no low-rank change of M: "
                "set nudge=off";
        else if (c->model == VLA_VLA1 && c->clamp_on)
            w = "chol cannot apply vla1's clamp (A += eps I): set clamp_on=off";
        break;
    case VLA_TRACK_COMP:
        if (c->prec == VLA_F16_F32 || c->prec == VLA_BF16_F32)
            w = "comp is double-word arithmetic of one format: use f64, f32, f16 or bf16";
        break;
    case VLA_TRACK_SR:
        if (c->prec != VLA_F16_F32 && c->prec != VLA_BF16_F32)
            w = "sr rounds stored 16-bit results of binary32 arithmetic: use f16-f32 or bf16-f32";
        break;
    default:
        w = "this way of tracking A is not implemented yet";
        break;
    }
    if (why)
        *why = w;
    return w ? VLA_ENOTSUP : VLA_OK;
}

void vla_config_describe(const vla_config *c, char *buf, size_t len)
{
    snprintf(buf, len,
             "model=%s track=%s prec=%s mode=%s d=%d dv=%d features=%s lambda0=%g eps_g=%g "
             "stab_eps=%g per_eps=%g period=%d eps_o=%g clip=%g clamp=%g clamp_eps=%g renorm=%g "
             "beta=%g delta_form=%s nudge=%s guard=%s clamp_on=%s normalize=%s sr_seed=%llu",
             vla_model_name(c->model), vla_track_name(c->track), vla_prec_name(c->prec),
             c->mode == VLA_STRICT ? "strict" : "fast", c->d, c->dv,
             c->features == VLA_FEAT_ID ? "id" : "own", c->lambda0, c->eps_g, c->stab_eps,
             c->per_eps, c->period, c->eps_o, c->clip, c->clamp, c->clamp_eps, c->renorm, c->beta,
             c->delta_form == VLA_DELTA_GATED ? "gated" : "decay", c->nudge ? "on" : "off",
             c->guard ? "on" : "off", c->clamp_on ? "on" : "off", c->normalize ? "on" : "off",
             (unsigned long long)c->sr_seed);
}
