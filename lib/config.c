/* config.c: model and tracking names, the SPEC section 2 defaults of every constant, NAME=VALUE
 * settings from the command line, and the error strings. */
#include "tables.h"
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

static const struct {
    const char *name;
    int has_A, normalize;
} model_rows[VLA_NMODEL] = {
#define VLA_X_(ID, tok, has_A, normalize) {#tok, has_A, normalize},
    VLA_MODELS(VLA_X_)
#undef VLA_X_
};
#define VLA_X_(ID, name, ...) name,
static const char *const track_names[VLA_NTRACK] = {VLA_TRACKS(VLA_X_)};
#undef VLA_X_
#define VLA_X_(ID, name, update, apply, holds) VLA_HOLDS_##holds,
static const vla_holds track_holds[VLA_NTRACK] = {VLA_TRACKS(VLA_X_)};
#undef VLA_X_

const char *vla_model_name(vla_model_kind m)
{
    return (unsigned)m < VLA_NMODEL ? model_rows[m].name : "?";
}
const char *vla_track_name(vla_track t) { return (unsigned)t < VLA_NTRACK ? track_names[t] : "?"; }
int vla_model_has_A(vla_model_kind m) { return (unsigned)m < VLA_NMODEL && model_rows[m].has_A; }
vla_holds vla_track_holds(vla_track t)
{
    return (unsigned)t < VLA_NTRACK ? track_holds[t] : VLA_HOLDS_A;
}

/* ", a, b, c" + 2: each list's names as one string literal, made by the compiler */
#define VLA_X_(ID, tok, ...) ", " #tok
static const char fmt_list[] = VLA_FORMATS(VLA_X_);
static const char model_list[] = VLA_MODELS(VLA_X_);
#undef VLA_X_
#define VLA_X_(ID, name, ...) ", " name
static const char prec_list[] = VLA_PRECS(VLA_X_);
static const char track_list[] = VLA_TRACKS(VLA_X_);
#undef VLA_X_
/* the policies of one kind (mixed or not), for the messages of the ways that need one */
#define VLA_X_(ID, name, sfx, S, C, mixed) VLA_IF(mixed, ", " name)
static const char mixed_list[] = "" VLA_PRECS(VLA_X_);
#undef VLA_X_
#define VLA_X_(ID, name, sfx, S, C, mixed) VLA_IFNOT(mixed, ", " name)
static const char uniform_list[] = "" VLA_PRECS(VLA_X_);
#undef VLA_X_

const char *vla_names(vla_list which)
{
    switch (which) {
    case VLA_LIST_FMT: return fmt_list + 2;
    case VLA_LIST_PREC: return prec_list + 2;
    case VLA_LIST_MODEL: return model_list + 2;
    case VLA_LIST_TRACK: return track_list + 2;
    default: return "?";
    }
}

int vla_model_parse(const char *name, vla_model_kind *out)
{
    for (int i = 0; i < VLA_NMODEL; i++)
        if (name && !strcmp(name, model_rows[i].name)) {
            *out = (vla_model_kind)i;
            return VLA_OK;
        }
    return VLA_EINVAL;
}
int vla_track_parse(const char *name, vla_track *out)
{
    for (int i = 0; i < VLA_NTRACK; i++)
        if (name && !strcmp(name, track_names[i])) {
            *out = (vla_track)i;
            return VLA_OK;
        }
    return VLA_EINVAL;
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
    c->gamma = 1.0;
    c->solve_k = 8;
    c->solve_tol = 0.0;
    c->normalize = (unsigned)model < VLA_NMODEL && model_rows[model].normalize;
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

int vla_track_set(vla_config *c, const char *spec)
{
    char name[32];
    const char *colon = spec ? strchr(spec, ':') : NULL;
    size_t n = !spec ? sizeof name : colon ? (size_t)(colon - spec) : strlen(spec);
    vla_track t;
    if (n >= sizeof name)
        return VLA_EINVAL;
    memcpy(name, spec, n);
    name[n] = 0;
    if (vla_track_parse(name, &t))
        return VLA_EINVAL;
    int k = c->solve_k;
    double tol = 0, x;
    if (colon) { /* cg:K, cg:TOL, cheb:K */
        if ((t != VLA_TRACK_CG && t != VLA_TRACK_CHEB) || parse_double(colon + 1, &x))
            return VLA_EINVAL;
        if (x >= 1 && x == floor(x) && x <= VLA_SOLVE_KMAX)
            k = (int)x;
        else if (t == VLA_TRACK_CG && x > 0 && x < 1)
            tol = x;
        else
            return VLA_ERANGE;
    }
    c->track = t;
    c->solve_k = k;
    c->solve_tol = tol;
    return VLA_OK;
}

void vla_track_spec(const vla_config *c, char *buf, size_t len)
{
    const char *name = vla_track_name(c->track);
    if (c->track == VLA_TRACK_CG && c->solve_tol > 0)
        snprintf(buf, len, "%s:%g", name, c->solve_tol);
    else if (c->track == VLA_TRACK_CG || c->track == VLA_TRACK_CHEB)
        snprintf(buf, len, "%s:%d", name, c->solve_k);
    else
        snprintf(buf, len, "%s", name);
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
        {"gamma", offsetof(vla_config, gamma)},
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
        !(c->gamma > 0 && c->gamma <= 1) || c->solve_k < 1 || c->solve_k > VLA_SOLVE_KMAX ||
        !(c->solve_tol >= 0 && c->solve_tol < 1) ||
        !isfinite(c->lambda0 + c->eps_g + c->stab_eps + c->per_eps + c->eps_o + c->clip +
                  c->clamp + c->clamp_eps + c->renorm))
        return VLA_ERANGE;
    return VLA_OK;
}

/* the messages of the ways that need a kind of policy name them from the list, written once
 * when the library is loaded (before any thread can ask) */
static char need_uniform[160], need_mixed[160];
__attribute__((constructor)) static void track_messages(void)
{
    snprintf(need_uniform, sizeof need_uniform,
             "comp is double-word arithmetic of one format: use %s", uniform_list + 2);
    snprintf(need_mixed, sizeof need_mixed,
             "sr rounds stored 16-bit results of binary32 arithmetic: use %s", mixed_list + 2);
}

int vla_track_check(const vla_config *c, const char **why)
{
    const char *w = NULL;
    const int keeps_M = vla_track_holds(c->track) == VLA_HOLDS_M;
    if ((unsigned)c->track >= VLA_NTRACK)
        w = "no such way of tracking A";
    else if (keeps_M && !vla_model_has_A(c->model))
        w = "solve, cg and cheb solve M y = x with M = A^-1: use a model with A (rls, vla1, vla3)";
    else if (c->gamma != 1 && !vla_model_has_A(c->model))
        w = "gamma forgets in M = A^-1: use a model with A (rls, vla1, vla3)";
    else if (keeps_M && c->nudge)
        w = "solve, cg and cheb keep M = A^-1 and a nudge of A is no low-rank change of M: "
            "set nudge=off";
    else if (keeps_M && c->model == VLA_VLA1 && c->clamp_on)
        w = "solve, cg and cheb cannot apply vla1's clamp (A += eps I): set clamp_on=off";
    else if (c->track == VLA_TRACK_CHOL && vla_model_has_A(c->model) && c->nudge)
        w = "chol keeps the factor of M = A^-1 and a nudge of A is no low-rank change of M: "
            "set nudge=off";
    else if (c->track == VLA_TRACK_CHOL && c->model == VLA_VLA1 && c->clamp_on)
        w = "chol cannot apply vla1's clamp (A += eps I): set clamp_on=off";
    else if (c->track == VLA_TRACK_COMP && vla_prec_mixed(c->prec))
        w = need_uniform;
    else if (c->track == VLA_TRACK_SR && !vla_prec_mixed(c->prec))
        w = need_mixed;
    if (why)
        *why = w;
    return w ? VLA_ENOTSUP : VLA_OK;
}

void vla_config_describe(const vla_config *c, char *buf, size_t len)
{
    char track[48];
    vla_track_spec(c, track, sizeof track);
    int n = snprintf(buf, len,
                     "model=%s track=%s prec=%s mode=%s d=%d dv=%d features=%s lambda0=%g eps_g=%g "
                     "stab_eps=%g per_eps=%g period=%d eps_o=%g clip=%g clamp=%g clamp_eps=%g "
                     "renorm=%g beta=%g delta_form=%s nudge=%s guard=%s clamp_on=%s normalize=%s "
                     "sr_seed=%llu",
                     vla_model_name(c->model), track, vla_prec_name(c->prec),
                     c->mode == VLA_STRICT ? "strict" : "fast", c->d, c->dv,
                     c->features == VLA_FEAT_ID ? "id" : "own", c->lambda0, c->eps_g, c->stab_eps,
                     c->per_eps, c->period, c->eps_o, c->clip, c->clamp, c->clamp_eps, c->renorm,
                     c->beta, c->delta_form == VLA_DELTA_GATED ? "gated" : "decay",
                     c->nudge ? "on" : "off", c->guard ? "on" : "off", c->clamp_on ? "on" : "off",
                     c->normalize ? "on" : "off", (unsigned long long)c->sr_seed);
    if (c->gamma != 1 && n >= 0 && (size_t)n < len) /* only then: older tables keep their bytes */
        snprintf(buf + n, len - n, " gamma=%g", c->gamma);
}
