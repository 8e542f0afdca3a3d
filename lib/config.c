/* config.c: model and tracking names, the docs/math.md section 2 defaults of every constant,
 * NAME=VALUE settings from the command line, and the error strings. */
#include "tables.h"
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

int vla_fail(vla_error *e, int code, const char *fmt, ...)
{
    if (!e)
        return code;
    char msg[sizeof e->msg] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
    }
    for (char *c = msg; *c; c++) /* a newline in a path or a spec must not break the line */
        if (*c == '\n')
            *c = ' ';
    e->code = code;
    memcpy(e->msg, msg, sizeof msg);
    return code;
}

const char *vla_error_msg(const vla_error *e)
{
    return !e ? vla_strerror(VLA_OK) : e->msg[0] ? e->msg : vla_strerror(e->code);
}

static const struct {
    const char *name;
    int has_A, normalize, gate, feat, phi, qknorm;
    double scale;
    const char *uprime;
    int devices, gradchunk;
} model_rows[VLA_NMODEL] = {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, \
               reads, uprime, devices, gradchunk, ...)                                         \
    {#tok, has_A, normalize, gate, VLA_FEAT_##feat, phi, qknorm, scale, uprime, devices, gradchunk},
    VLA_MODELS(VLA_X_)
#undef VLA_X_
};
#define VLA_X_(ID, name, ...) name,
static const char *const track_names[VLA_NTRACK] = {VLA_TRACKS(VLA_X_)};
#undef VLA_X_
#define VLA_X_(ID, name, update, apply, holds) VLA_HOLDS_##holds,
static const vla_holds track_holds[VLA_NTRACK] = {VLA_TRACKS(VLA_X_)};
#undef VLA_X_
/* the column update: a way whose update is not sm's changes how A is tracked and nothing else
 * (comp and sr are sm's update in an arithmetic of their own, which S's steps take too) */
#define VLA_X_(ID, name, update, apply, holds) #update,
static const char *const track_update[VLA_NTRACK] = {VLA_TRACKS(VLA_X_)};
#undef VLA_X_

const char *vla_model_name(vla_model_kind m)
{
    return (unsigned)m < VLA_NMODEL ? model_rows[m].name : "?";
}
const char *vla_track_name(vla_track t) { return (unsigned)t < VLA_NTRACK ? track_names[t] : "?"; }
int vla_model_has_A(vla_model_kind m) { return (unsigned)m < VLA_NMODEL && model_rows[m].has_A; }

static char h0_models[200]; /* the models that take S_0 (track_messages) */
int vla_config_h0(const vla_config *c, vla_error *why)
{
    const char *name = vla_model_name(c->model);
    if (vla_model_has_A(c->model))
        return vla_fail(why, VLA_ENOTSUP, "%s keeps A%s beside S, which an initial state S_0 "
                        "alone does not give (%s take one, normalize=off where a model "
                        "normalizes)", name,
                        c->normalize ? " and a normalizer n" : "", h0_models);
    if (vla_levels(c))
        return vla_fail(why, VLA_ENOTSUP, "%s keeps its prefix as Fenwick levels, which an "
                        "initial state S_0 alone does not give", name);
    if (vla_dims_of(c).nt)
        return vla_fail(why, VLA_ENOTSUP, "%s carries the last token's rotated key and value (the "
                        "trapezoid's) and each key-channel pair's angle beside S, which an initial "
                        "state S_0 alone does not give", name);
    if (c->normalize)
        return vla_fail(why, VLA_ENOTSUP, "%s with normalize=on divides by a normalizer n beside "
                        "S, which an initial state S_0 alone does not give (--set normalize=off "
                        "reads S alone)", name);
    return vla_fail(why, VLA_OK, NULL);
}
int vla_seqs_check(const vla_config *c, const long *cu, long nseq, vla_error *why)
{
    int r;
    if (nseq <= 1)
        return vla_fail(why, VLA_OK, NULL);
    if ((r = vla_config_h0(c, why)))
        return vla_fail(why, r, "packed sequences (cu_seqlens.npy) restart the state at each "
                        "sequence: %s", why ? why->msg : "");
    if (c->form == VLA_FORM_SCAN)
        return vla_fail(why, VLA_ENOTSUP, "packed sequences (cu_seqlens.npy): the scan form "
                        "folds the state of every step into one prefix, with no restart (--form "
                        "seq or chunk:C)");
    for (long i = 1; c->form == VLA_FORM_CHUNK && i < nseq; i++)
        if (cu[i] % c->chunk)
            return vla_fail(why, VLA_ENOTSUP, "packed sequences (cu_seqlens.npy): sequence %ld "
                            "starts after token %ld, inside a chunk of %d: the chunk form here "
                            "restarts only at chunk ends (fla's varlen kernels cut the chunks per "
                            "sequence): --form seq, or sequences of multiples of C tokens", i,
                            cu[i], c->chunk);
    for (long i = 1; c->model == VLA_DELTAPRODUCT && i < nseq; i++)
        if (cu[i] % c->householder) /* (its steps count through a restart: docs/gated.md) */
            return vla_fail(why, VLA_ENOTSUP, "packed sequences (cu_seqlens.npy): sequence %ld "
                            "starts after step %ld, inside a token of deltaproduct's householder = "
                            "%d steps: sequences of whole tokens (multiples of %d steps)", i, cu[i],
                            c->householder, c->householder);
    return vla_fail(why, VLA_OK, NULL);
}
int vla_model_gate(vla_model_kind m) { return (unsigned)m < VLA_NMODEL ? model_rows[m].gate : 0; }
unsigned vla_model_phi(vla_model_kind m) { return (unsigned)m < VLA_NMODEL ? model_rows[m].phi : 0; }
const char *vla_model_uprime(vla_model_kind m)
{
    return (unsigned)m < VLA_NMODEL ? model_rows[m].uprime : "";
}
unsigned vla_model_devices(vla_model_kind m)
{
    return (unsigned)m < VLA_NMODEL ? (unsigned)model_rows[m].devices : 0;
}
int vla_model_gradchunk(vla_model_kind m)
{
    return (unsigned)m < VLA_NMODEL && model_rows[m].gradchunk;
}
unsigned vla_model_reads(const vla_config *c)
{
    switch (c->model) {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, \
               reads, ...)                                                                     \
    case VLA_##ID:                                                                                 \
        return (reads);
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
int vla_model_unit(const vla_config *c)
{
    switch (c->model) {
#define VLA_X_(ID, tok, has_A, normalize, affine, acc_n, decay, gate, lr, feat, phi, qknorm, scale, \
               reads, uprime, devices, gradchunk, unit)                                        \
    case VLA_##ID:                                                                                 \
        return (unit);
        VLA_MODELS(VLA_X_)
#undef VLA_X_
    default:
        return 0;
    }
}
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
#define VLA_X_(ID, tok) ", " #tok
static const char form_list[] = VLA_FORMS(VLA_X_);
#undef VLA_X_
/* the policies of one kind (mixed or not), for the messages of the ways that need one */
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern) VLA_IF(mixed, ", " name)
static const char mixed_list[] = "" VLA_PRECS(VLA_X_);
#undef VLA_X_
#define VLA_X_(ID, name, sfx, S, C, IO, mixed, kern) VLA_IFNOT(mixed, VLA_IFNOT(kern, ", " name))
static const char uniform_list[] = "" VLA_PRECS(VLA_X_);
#undef VLA_X_

const char *vla_names(vla_list which)
{
    switch (which) {
    case VLA_LIST_FMT: return fmt_list + 2;
    case VLA_LIST_PREC: return prec_list + 2;
    case VLA_LIST_MODEL: return model_list + 2;
    case VLA_LIST_TRACK: return track_list + 2;
    case VLA_LIST_FORM: return form_list + 2;
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

size_t vla_config_size(void) { return sizeof(vla_config); }
size_t vla_counts_size(void) { return sizeof(vla_counts); }

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
    c->keynorm = 1;
    c->gamma = 1.0;
    c->solve_k = 8;
    c->solve_tol = 0.0;
    c->normalize = (unsigned)model < VLA_NMODEL && model_rows[model].normalize;
    if ((unsigned)model < VLA_NMODEL) { /* the gated family's conventions are fla's */
        c->features = model_rows[model].feat;
        c->qknorm = model_rows[model].qknorm;
        c->scale = pow(d, model_rows[model].scale); /* fla's K ** -0.5 */
    }
    c->l2_eps = 1e-6;
    c->tri = VLA_TRI_BLOCKED; /* fla's solve_tril and its fused C = 64 kernels */
    c->stage = VLA_HALF_IO;   /* fla: h.to(k.dtype) */
    c->householder = 2;       /* deltaproduct's n_h (fla's num_householder; the paper's n_h = 2) */
    c->rank = 1;              /* mamba3's MIMO rank (SISO) */
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
    case VLA_MAMBA3: /* lambda absent: 1/2, the trapezoid rule */
        c->beta = 0.5;
        break;
    default: /* la, delta, rls: exact recurrences, no safety devices */
        break;
    }
}

void vla_num_text(char *buf, size_t len, double x, int min_digits)
{
    if (isnan(x)) { /* without a sign: printf may write -nan */
        snprintf(buf, len, "nan");
        return;
    }
    for (int p = min_digits < 1 ? 1 : min_digits; p <= 17; p++) {
        snprintf(buf, len, "%.*g", p, x);
        if (!isfinite(x) || strtod(buf, NULL) == x)
            return;
    }
}

int vla_parse_real(const char *s, double *out, vla_error *err)
{
    const char *w = NULL;
    char *end;
    errno = 0;
    double x = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || isspace((unsigned char)*s))
        w = "is not a number";
    else if (isnan(x) || (isinf(x) && errno != ERANGE))
        w = "is not finite";
    else if (errno == ERANGE && isinf(x))
        w = "overflows binary64";
    else if (errno == ERANGE && x == 0)
        w = "underflows binary64 to 0";
    /* a subnormal result (ERANGE, nonzero) is a number like any other */
    if (w)
        return vla_fail(err, VLA_EINVAL, "%s", w);
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
        if ((t != VLA_TRACK_CG && t != VLA_TRACK_CHEB) || vla_parse_real(colon + 1, &x, NULL))
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

/* The real constants and their ranges (docs/math.md section 2): each named once, for the setter,
 * the check and its message. lo_open: lo itself is outside; hi is always open (INFINITY: none). */
static const struct {
    const char *name;
    size_t off;
    double lo, hi;
    int lo_open;
    const char *range;
} reals[] = {
    {"lambda0", offsetof(vla_config, lambda0), 0, INFINITY, 1, "> 0"},
    {"eps_g", offsetof(vla_config, eps_g), 0, INFINITY, 0, ">= 0"},
    {"stab_eps", offsetof(vla_config, stab_eps), 0, INFINITY, 1, "> 0"},
    {"per_eps", offsetof(vla_config, per_eps), 0, INFINITY, 0, ">= 0"},
    {"eps_o", offsetof(vla_config, eps_o), 0, INFINITY, 1, "> 0"},
    {"clip", offsetof(vla_config, clip), 0, INFINITY, 1, "> 0"},
    {"clamp", offsetof(vla_config, clamp), 0, INFINITY, 1, "> 0"},
    {"clamp_eps", offsetof(vla_config, clamp_eps), 0, INFINITY, 0, ">= 0"},
    {"renorm", offsetof(vla_config, renorm), 0, INFINITY, 0, ">= 0 (0: off)"},
    {"beta", offsetof(vla_config, beta), 0, 2, 1, "in (0, 2)"},
    {"gamma", offsetof(vla_config, gamma), 0, 1 + DBL_EPSILON, 1, "in (0, 1]"}, /* hi: 1 is in */
    {"gate_lb", offsetof(vla_config, gate_lb), -INFINITY, DBL_TRUE_MIN, 0, "<= 0 (0: no bound)"},
    {"scale", offsetof(vla_config, scale), 0, INFINITY, 1, "> 0"},
    {"l2_eps", offsetof(vla_config, l2_eps), 0, INFINITY, 0, ">= 0"},
};
#define NREALS (sizeof reals / sizeof reals[0])

static const struct {
    const char *name;
    size_t off;
} switches[] = {
    {"nudge", offsetof(vla_config, nudge)},
    {"guard", offsetof(vla_config, guard)},
    {"clamp_on", offsetof(vla_config, clamp_on)},
    {"normalize", offsetof(vla_config, normalize)},
    {"keynorm", offsetof(vla_config, keynorm)},
    {"qknorm", offsetof(vla_config, qknorm)},
    {"gate_clamp", offsetof(vla_config, gate_clamp)},
    {"decay_bf16", offsetof(vla_config, decay_bf16)},
    {"beta_bf16", offsetof(vla_config, beta_bf16)},
};

/* the chunk forms' and the kernels' words (docs/forms.md): each setting's values in the order of
 * its field's codes */
static const struct {
    const char *name;
    size_t off;
    const char *values[8], *why;
} words[] = {
    {"cumsum", offsetof(vla_config, cumsum_tree), {"run", "tree"}, "is neither run nor tree"},
    {"cumsum_fmt", offsetof(vla_config, cumsum_io), {"compute", "io"},
     "is neither compute nor io"},
    {"anchor", offsetof(vla_config, anchor), {"direct", "first", "last", "mid", "start"},
     "is not an anchor (direct, first, last, mid, start)"},
    {"base", offsetof(vla_config, base2), {"e", "2"}, "is neither e nor 2"},
    {"gate_map", offsetof(vla_config, gate_map), {"clamp", "sigmoid", "pin"},
     "is not a gate map (clamp, sigmoid, pin)"},
    {"tri", offsetof(vla_config, tri), {"blocked", "forward", "neumann"},
     "is not forward, neumann or blocked"},
    {"stage", offsetof(vla_config, stage), {"off", "f16", "bf16", "io"},
     "is not io, f16, bf16 or off"},
    {"cache", offsetof(vla_config, cache), {"off", "f16", "bf16", "e4m3", "e5m2", "int8", "int16"},
     "is not a cache format (off, f16, bf16, e4m3, e5m2, int8, int16)"},
    {"cache_round", offsetof(vla_config, cache_round), {"rn", "sr", "ef"},
     "is not rn, sr or ef"},
};
#define NWORDS (sizeof words / sizeof words[0])
_Static_assert(sizeof(vla_tri) == sizeof(int) && sizeof(vla_half) == sizeof(int) &&
                   sizeof(vla_cache) == sizeof(int) && sizeof(vla_cround) == sizeof(int),
               "the words' fields are ints");

const char *vla_cache_name(vla_cache f)
{
    return (unsigned)f <= VLA_CACHE_INT16 ? words[NWORDS - 2].values[f] : "?";
}

int vla_config_set_why(vla_config *c, const char *name, const char *value, vla_error *err)
{
    if (!c || !name || !value)
        return vla_fail(err, VLA_EINVAL, NULL);
    vla_error e;
    for (size_t i = 0; i < NREALS; i++)
        if (!strcmp(name, reals[i].name))
            return vla_parse_real(value, (double *)((char *)c + reals[i].off), &e)
                       ? vla_fail(err, VLA_ERANGE, "%s", e.msg)
                       : VLA_OK;
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
        if (!strcmp(name, switches[i].name)) {
            return parse_switch(value, (int *)((char *)c + switches[i].off))
                       ? vla_fail(err, VLA_ERANGE,
                                  "is not on or off (1 or 0, yes or no, true or false)")
                       : VLA_OK;
        }
    for (size_t i = 0; i < NWORDS; i++)
        if (!strcmp(name, words[i].name)) {
            for (int k = 0; words[i].values[k]; k++)
                if (!strcmp(value, words[i].values[k])) {
                    *(int *)((char *)c + words[i].off) = k;
                    return VLA_OK;
                }
            return vla_fail(err, VLA_ERANGE, "%s", words[i].why);
        }
    double p;
    if (!strcmp(name, "anchor_block")) {
        if (vla_parse_real(value, &p, NULL) || p != floor(p) || p < 0 || p > VLA_CHUNK_MAX ||
            ((long)p & ((long)p - 1)))
            return vla_fail(err, VLA_ERANGE, "is not 0 (the chunk) or a power of two in 1..256");
        c->anchor_block = (int)p;
        return VLA_OK;
    }
    if (!strcmp(name, "period")) {
        if (vla_parse_real(value, &p, NULL) || p != floor(p) || p < 1 || p > 1e9)
            return vla_fail(err, VLA_ERANGE, "is not an integer in 1..1e9");
        c->period = (int)p;
        return VLA_OK;
    }
    if (!strcmp(name, "householder")) {
        if (vla_parse_real(value, &p, NULL) || p != floor(p) || p < 1 || p > VLA_HOUSEHOLDER_MAX)
            return vla_fail(err, VLA_ERANGE, "is not an integer in 1..%d", VLA_HOUSEHOLDER_MAX);
        c->householder = (int)p;
        return VLA_OK;
    }
    if (!strcmp(name, "rank")) {
        if (vla_parse_real(value, &p, NULL) || p != floor(p) || p < 1 || p > VLA_D_MAX)
            return vla_fail(err, VLA_ERANGE, "is not an integer in 1..%d", VLA_D_MAX);
        c->rank = (int)p;
        return VLA_OK;
    }
    if (!strcmp(name, "cache_rows")) {
        if (vla_parse_real(value, &p, NULL) || p != floor(p) || p < 0 || p > 65536)
            return vla_fail(err, VLA_ERANGE, "is not an integer in 0..65536 (0: no scale)");
        c->cache_rows = (int)p;
        return VLA_OK;
    }
    if (!strcmp(name, "sr_seed")) {
        if (vla_parse_real(value, &p, NULL) || p != floor(p) || p < 0 || p > 0x1p53)
            return vla_fail(err, VLA_ERANGE, "is not an integer in 0..2^53");
        c->sr_seed = (uint64_t)p;
        return VLA_OK;
    }
    if (!strcmp(name, "features")) {
        if (!strcmp(value, "id"))
            c->features = VLA_FEAT_ID;
        else if (!strcmp(value, "own") || !strcmp(value, "phi"))
            c->features = VLA_FEAT_OWN;
        else
            return vla_fail(err, VLA_ERANGE, "is neither own nor id");
        return VLA_OK;
    }
    if (!strcmp(name, "delta_form")) {
        if (!strcmp(value, "gated"))
            c->delta_form = VLA_DELTA_GATED;
        else if (!strcmp(value, "decay"))
            c->delta_form = VLA_DELTA_DECAY;
        else
            return vla_fail(err, VLA_ERANGE, "is neither gated nor decay");
        return VLA_OK;
    }
    return vla_fail(err, VLA_EINVAL, "is not a constant (lambda0, eps_g, stab_eps, per_eps, "
                    "period, eps_o, clip, clamp, clamp_eps, renorm, beta, gamma, gate_lb, scale, "
                    "l2_eps, sr_seed, delta_form, features, tri, stage, cache, cache_rows, "
                    "cache_round, nudge, guard, "
                    "clamp_on, normalize, keynorm, qknorm, decay_bf16, beta_bf16, gate_clamp, "
                    "cumsum, cumsum_fmt, anchor, anchor_block, base, gate_map, householder, rank)");
}

int vla_config_set(vla_config *c, const char *name, const char *value)
{
    return vla_config_set_why(c, name, value, NULL) ? VLA_EINVAL : VLA_OK;
}

/* the gated family, the models that take beta: from the model table (track_messages) */
static char gated[96], betas[96];

int vla_config_check_why(const vla_config *c, vla_error *err)
{
    if ((unsigned)c->model >= VLA_NMODEL || (unsigned)c->track >= VLA_NTRACK ||
        (unsigned)c->prec >= VLA_NPREC || (c->mode != VLA_STRICT && c->mode != VLA_FAST) ||
        (unsigned)c->form >= VLA_NFORM)
        return vla_fail(err, VLA_EINVAL, "no such model, way of tracking, precision, mode or form");
    if (c->form == VLA_FORM_CHUNK
            ? c->chunk < 1 || c->chunk > VLA_CHUNK_MAX || (c->chunk & (c->chunk - 1))
            : c->chunk != 0)
        return vla_fail(err, VLA_ERANGE,
                        "chunk = %d: C must be a power of two in 1..%d in the chunk form, "
                        "0 in the others",
                        c->chunk, VLA_CHUNK_MAX);
    if (c->d < VLA_D_MIN || c->d > VLA_D_MAX || c->dv < VLA_D_MIN || c->dv > VLA_D_MAX)
        return vla_fail(err, VLA_ERANGE, "d = %d, dv = %d: each must be in %d..%d", c->d, c->dv,
                        VLA_D_MIN, VLA_D_MAX);
    for (size_t i = 0; i < NREALS; i++) {
        double x = *(const double *)((const char *)c + reals[i].off);
        if (isfinite(x) && (reals[i].lo_open ? x > reals[i].lo : x >= reals[i].lo) &&
            x < reals[i].hi)
            continue;
        char num[32];
        vla_num_text(num, sizeof num, x, 6);
        return vla_fail(err, VLA_ERANGE, "%s = %s: it must be finite and %s", reals[i].name, num,
                        reals[i].range);
    }
    if (c->period < 1)
        return vla_fail(err, VLA_ERANGE, "period = %d: it must be >= 1", c->period);
    if (c->model == VLA_DELTAPRODUCT &&
        (c->householder < 1 || c->householder > VLA_HOUSEHOLDER_MAX))
        return vla_fail(err, VLA_ERANGE, "householder = %d: it must be in 1..%d", c->householder,
                        VLA_HOUSEHOLDER_MAX);
    if (c->model == VLA_MAMBA3 && (c->rank < 1 || c->d % c->rank || c->dv % c->rank))
        return vla_fail(err, VLA_ERANGE, "rank = %d, d = %d, dv = %d: mamba3's rank R divides d "
                        "and dv (the stream's vectors hold R ranks' side by side)", c->rank, c->d,
                        c->dv);
    if (c->model == VLA_MAMBA3 && c->rank > 1 && (c->qknorm || c->normalize))
        return vla_fail(err, VLA_ENOTSUP, "rank = %d: qknorm and normalize act on a whole "
                        "vector of d, not on each rank's d/R: set qknorm=off, normalize=off",
                        c->rank);
    if ((unsigned)c->cumsum_tree > 1 || (unsigned)c->cumsum_io > 1 || (unsigned)c->base2 > 1 ||
        (unsigned)c->anchor > VLA_ANCHOR_START || (unsigned)c->gate_map > VLA_GATE_PIN ||
        c->anchor_block < 0 || c->anchor_block > VLA_CHUNK_MAX ||
        (c->anchor_block & (c->anchor_block - 1)))
        return vla_fail(err, VLA_ERANGE,
                        "cumsum, cumsum_fmt, base, anchor, anchor_block or gate_map out of "
                        "range (docs/forms.md)");
    if (c->gate_lb == 0 && c->gate_map != VLA_GATE_CLAMP)
        return vla_fail(err, VLA_ERANGE, "gate_map = %s needs a bound: set gate_lb < 0",
                        words[4].values[c->gate_map]);
    if (c->gate_lb != 0 && !vla_model_gate(c->model))
        return vla_fail(err, VLA_ERANGE,
                        "gate_lb = %g: only the gated family (%s) has log-gates to bound",
                        c->gate_lb, gated);
    if (c->solve_k < 1 || c->solve_k > VLA_SOLVE_KMAX || !(c->solve_tol >= 0 && c->solve_tol < 1))
        return vla_fail(err, VLA_ERANGE,
                        "solve_k = %d, solve_tol = %g: K is in 1..%d, TOL in [0, 1)", c->solve_k,
                        c->solve_tol, VLA_SOLVE_KMAX);
    if ((unsigned)c->tri > VLA_TRI_NEUMANN || (unsigned)c->stage > VLA_HALF_IO ||
        (unsigned)c->cache > VLA_CACHE_INT16 || (unsigned)c->cache_round > VLA_CROUND_EF ||
        c->cache_rows < 0 || (unsigned)c->decay_bf16 > 1 || (unsigned)c->beta_bf16 > 1)
        return vla_fail(err, VLA_ERANGE,
                        "tri = %d, stage = %d, cache = %d, cache_round = %d, cache_rows = %d, "
                        "decay_bf16 = %d, beta_bf16 = %d: no such setting",
                        (int)c->tri, (int)c->stage, (int)c->cache, (int)c->cache_round,
                        c->cache_rows, c->decay_bf16, c->beta_bf16);
    if (c->cache >= VLA_CACHE_INT8 && !c->cache_rows)
        return vla_fail(err, VLA_ERANGE, "cache = %s: an integer cache needs a scale: set "
                        "cache_rows to the rows of S that share one (1: a scale per row)",
                        vla_cache_name(c->cache));
    if (!c->cache && (c->cache_rows || c->cache_round))
        return vla_fail(err, VLA_ERANGE, "cache_rows and cache_round are the state cache's: set "
                        "cache (f16, bf16, e4m3, e5m2, int8, int16)");
    if (vla_cache_scaled(c) && vla_prec_storage(c->prec) != VLA_FMT_F32)
        return vla_fail(err, VLA_ERANGE, "cache = %s with a scale, stochastic rounding or error "
                        "feedback caches a binary32 state (the update in binary32): --precision "
                        "with binary32 storage (f32, f16-kern, bf16-kern), not %s",
                        vla_cache_name(c->cache), vla_prec_name(c->prec));
    const unsigned reads = vla_model_reads(c);
    if (c->decay_bf16 && !(reads & (VLA_IN_DECAY | VLA_IN_LOGDECAY)))
        return vla_fail(err, VLA_ERANGE,
                        "decay_bf16 = on: %s takes no decay (%s, delta with delta_form=decay "
                        "do)", vla_model_name(c->model), gated);
    if (c->beta_bf16 && !(reads & VLA_IN_BETA))
        return vla_fail(err, VLA_ERANGE, "beta_bf16 = on: %s takes no beta (%s do)",
                        vla_model_name(c->model), betas);
    return VLA_OK;
}

int vla_config_check(const vla_config *c) {
    return vla_config_check_why(c, NULL);
}

void vla_models_where(char *buf, size_t len, int (*has)(vla_model_kind), const char *last)
{
    int total = 0, n = 0;
    size_t k = 0;
    for (int m = 0; m < VLA_NMODEL; m++)
        total += has((vla_model_kind)m) != 0;
    if (len)
        buf[0] = 0;
    for (int m = 0; m < VLA_NMODEL; m++)
        if (has((vla_model_kind)m) && k < len) {
            n++;
            k += (size_t)snprintf(buf + k, len - k, "%s%s",
                                  n == 1 ? "" : n == total && last ? last : ", ",
                                  vla_model_name((vla_model_kind)m));
        }
}
/* the models whose default configuration reads beta */
static int takes_beta(vla_model_kind m)
{
    vla_config c;
    vla_config_default(&c, m, 16);
    return (vla_model_reads(&c) & VLA_IN_BETA) != 0;
}
static int gradchunk_per_channel(vla_model_kind m)
{
    return vla_model_gradchunk(m) && vla_model_gate(m) == 2;
}
/* the models that take an initial state S_0 (la with normalize=off) */
static int takes_s0(vla_model_kind m)
{
    vla_config c;
    vla_config_default(&c, m, 16);
    c.normalize = 0;
    return vla_config_h0(&c, NULL) == VLA_OK;
}
/* the models with a seq backward alone */
static int no_gradchunk(vla_model_kind m) { return !vla_model_gradchunk(m); }

/* the messages of the ways that need a kind of policy name them from the list, and those that
 * list the models that have something from its column, written once when the library is loaded
 * (before any thread can ask) */
static char need_uniform[160], need_mixed[160], need_A[2][200], bwd_scan[200], bwd_chunk[400],
    bwd_channels[240];
__attribute__((constructor)) static void track_messages(void)
{
    snprintf(need_uniform, sizeof need_uniform,
             "comp is double-word arithmetic of one format: use %s", uniform_list + 2);
    snprintf(need_mixed, sizeof need_mixed,
             "sr rounds stored 16-bit results of binary32 arithmetic: use %s", mixed_list + 2);
    char withA[96], chunked[96], unchunked[96], channels[96];
    vla_models_where(withA, sizeof withA, vla_model_has_A, NULL);
    vla_models_where(h0_models, sizeof h0_models, takes_s0, " and ");
    vla_models_where(chunked, sizeof chunked, vla_model_gradchunk, " and ");
    vla_models_where(unchunked, sizeof unchunked, no_gradchunk, " and ");
    vla_models_where(channels, sizeof channels, gradchunk_per_channel, NULL);
    vla_models_where(gated, sizeof gated, vla_model_gate, NULL);
    vla_models_where(betas, sizeof betas, takes_beta, NULL);
    snprintf(need_A[0], sizeof need_A[0],
             "solve, cg and cheb solve M y = x with M = A^-1: use a model with A (%s)", withA);
    snprintf(need_A[1], sizeof need_A[1], "gamma forgets in M = A^-1: use a model with A (%s)",
             withA);
    snprintf(bwd_scan, sizeof bwd_scan,
             "the scan form has no backward: --form seq, or chunk:C for %s", chunked);
    snprintf(bwd_chunk, sizeof bwd_chunk,
             "the chunk backward (lib/recur_gradchunk.h) is written for %s (fla's "
             "chunk_gated_delta_rule_bwd, chunk_kda's, chunk_gla's, chunk_log_linear_attn's; "
             "mamba3_siso_fwd in reverse); "
             "for %s: --form seq",
             chunked, unchunked);
    snprintf(bwd_channels, sizeof bwd_channels,
             "the chunk backward of the decays per key channel (%s) takes their direct "
             "differences, not the anchored operands: anchor=direct, or --form seq",
             channels);
}

/* a refusal's reason that names c's model (fmt's one %s) in the caller's array buf */
#define MODEL_WHY(buf, fmt) (snprintf(buf, sizeof buf, fmt, vla_model_name(c->model)), buf)

int vla_track_check(const vla_config *c, vla_error *err)
{
    const char *w = NULL;
    const int keeps_M = vla_track_holds(c->track) == VLA_HOLDS_M,
              clamp = (vla_model_devices(c->model) & VLA_DEV_CLAMP) && c->clamp_on;
    char own[160];
    if ((unsigned)c->track >= VLA_NTRACK)
        w = "no such way of tracking A";
    else if (keeps_M && !vla_model_has_A(c->model))
        w = need_A[0];
    else if (!vla_model_has_A(c->model) &&
             strcmp(track_update[c->track], track_update[VLA_TRACK_SM]))
        w = (snprintf(own, sizeof own, "%s has no A, and %s changes only how A is tracked, so it "
                      "would change nothing: --track sm (comp and sr change S's arithmetic too)",
                      vla_model_name(c->model), track_names[c->track]), own);
    else if (c->gamma != 1 && !vla_model_has_A(c->model))
        w = need_A[1];
    else if (keeps_M && c->nudge)
        w = "solve, cg and cheb keep M = A^-1 and a nudge of A is no low-rank change of M: "
            "set nudge=off";
    else if (keeps_M && clamp)
        w = MODEL_WHY(own, "solve, cg and cheb cannot apply %s's clamp (A += eps I): set "
                           "clamp_on=off");
    else if (c->track == VLA_TRACK_CHOL && vla_model_has_A(c->model) && c->nudge)
        w = "chol keeps the factor of M = A^-1 and a nudge of A is no low-rank change of M: "
            "set nudge=off";
    else if (c->track == VLA_TRACK_CHOL && clamp)
        w = MODEL_WHY(own, "chol cannot apply %s's clamp (A += eps I): set clamp_on=off");
    else if (c->track == VLA_TRACK_COMP &&
             (vla_prec_mixed(c->prec) || vla_prec_io(c->prec) != vla_prec_storage(c->prec)))
        w = need_uniform;
    else if (c->track == VLA_TRACK_SR && !vla_prec_mixed(c->prec)) /* (kern rows: 32-bit state) */
        w = need_mixed;
    return w ? vla_fail(err, VLA_ENOTSUP, "%s", w) : VLA_OK;
}

/* The constants as the shortest text that reads back as the same double (what %g writes when that
 * is exact), so that a header or a checkpoint's key names the run's numbers, not 6 digits of them */
void vla_config_describe(const vla_config *c, char *buf, size_t len)
{
    char num[NREALS][32];
    for (size_t i = 0; i < NREALS; i++)
        vla_num_text(num[i], sizeof num[i], *(const double *)((const char *)c + reals[i].off), 6);
    char track[48];
    vla_track_spec(c, track, sizeof track);
    snprintf(buf, len,
             "model=%s track=%s prec=%s mode=%s d=%d dv=%d features=%s lambda0=%s eps_g=%s "
             "stab_eps=%s per_eps=%s period=%d eps_o=%s clip=%s clamp=%s clamp_eps=%s renorm=%s "
             "beta=%s delta_form=%s nudge=%s guard=%s clamp_on=%s normalize=%s sr_seed=%llu",
             vla_model_name(c->model), track, vla_prec_name(c->prec),
             c->mode == VLA_STRICT ? "strict" : "fast", c->d, c->dv,
             c->features == VLA_FEAT_ID ? "id" : "own", num[0], num[1], num[2], num[3], c->period,
             num[4], num[5], num[6], num[7], num[8], num[9],
             c->delta_form == VLA_DELTA_GATED ? "gated" : "decay", c->nudge ? "on" : "off",
             c->guard ? "on" : "off", c->clamp_on ? "on" : "off", c->normalize ? "on" : "off",
             (unsigned long long)c->sr_seed);
    size_t n = strlen(buf);
    if (c->gamma != 1 && n < len) /* only then: older tables keep their bytes */
        n += snprintf(buf + n, len - n, " gamma=%s", num[10]);
    if (!c->keynorm && n < len)
        n += snprintf(buf + n, len - n, " keynorm=off");
    if (vla_model_gate(c->model) && n < len) /* the gated family's (NREALS - 2, - 1) */
        n += snprintf(buf + n, len - n, " scale=%s qknorm=%s l2_eps=%s", num[NREALS - 2],
                      c->qknorm ? "on" : "off", num[NREALS - 1]);
    if (c->model == VLA_DELTAPRODUCT && n < len)
        n += snprintf(buf + n, len - n, " householder=%d", c->householder);
    if (c->model == VLA_MAMBA3 && c->rank != 1 && n < len)
        n += snprintf(buf + n, len - n, " rank=%d", c->rank);
    if (c->gate_lb != 0 && n < len) /* the gate bound's settings, each only when not the default */
        n += snprintf(buf + n, len - n, " gate_lb=%s gate_map=%s", num[11],
                      words[4].values[c->gate_map]);
    if (c->gate_clamp && n < len)
        n += snprintf(buf + n, len - n, " gate_clamp=on");
    for (size_t i = 0; i < 4; i++) {
        int k = *(const int *)((const char *)c + words[i].off);
        if (k && n < len)
            n += snprintf(buf + n, len - n, " %s=%s", words[i].name, words[i].values[k]);
    }
    if (c->anchor_block && n < len)
        n += snprintf(buf + n, len - n, " anchor_block=%d", c->anchor_block);
    if (c->cache && n < len)
        n += snprintf(buf + n, len - n, " cache=%s cache_rows=%d cache_round=%s",
                      vla_cache_name(c->cache), c->cache_rows,
                      words[NWORDS - 1].values[c->cache_round]);
    if (c->form != VLA_FORM_SEQ && n + 6 < len) {
        n += snprintf(buf + n, len - n, " form=");
        vla_form_name(c, buf + n, len - n);
    }
}

/* ---- forms (docs/forms.md) ---- */

#define VLA_X_(ID, tok) #tok,
static const char *const form_names[VLA_NFORM] = {VLA_FORMS(VLA_X_)};
#undef VLA_X_

int vla_form_parse(vla_config *cfg, const char *s)
{
    if (!s)
        return VLA_EINVAL;
    if (!strncmp(s, "chunk:", 6)) {
        char *end;
        errno = 0;
        long C = strtol(s + 6, &end, 10);
        if (end == s + 6 || *end || errno)
            return VLA_EINVAL;
        if (C < 1 || C > VLA_CHUNK_MAX || (C & (C - 1)))
            return VLA_ERANGE;
        cfg->form = VLA_FORM_CHUNK;
        cfg->chunk = (int)C;
        return VLA_OK;
    }
    for (int i = 0; i < VLA_NFORM; i++)
        if (i != VLA_FORM_CHUNK && !strcmp(s, form_names[i])) {
            cfg->form = (vla_form)i;
            cfg->chunk = 0;
            return VLA_OK;
        }
    return VLA_EINVAL;
}

void vla_form_name(const vla_config *cfg, char *buf, size_t len)
{
    if (cfg->form == VLA_FORM_CHUNK)
        snprintf(buf, len, "chunk:%d", cfg->chunk);
    else
        snprintf(buf, len, "%s", (unsigned)cfg->form < VLA_NFORM ? form_names[cfg->form] : "?");
}

int vla_form_check(const vla_config *c, vla_error *err)
{
    const char *w = NULL;
    const int chunk = c->form == VLA_FORM_CHUNK && c->chunk > 1, A = vla_model_has_A(c->model);
    const unsigned dev = vla_model_devices(c->model);
    char own[200];
    if (chunk && A && (c->track == VLA_TRACK_SOLVE || c->track == VLA_TRACK_CHEB))
        w = c->track == VLA_TRACK_SOLVE
                ? "solve factors each token's M_i, which no chunk kernel forms (a chunk keeps M_0 "
                  "and applies M_i as M_0 + U^T U): --track cg:K or cg:TOL (MesaNet's chunk "
                  "solver), or sm (comp, sr: A by the blocked Woodbury update)"
                : "cheb's interval takes Gershgorin's bound from the entries of each token's M_i, "
                  "which no chunk kernel forms: --track cg:K or cg:TOL (MesaNet's chunk solver), "
                  "or sm (comp, sr: A by the blocked Woodbury update)";
    else if (chunk && A && c->track != VLA_TRACK_SM && c->track != VLA_TRACK_COMP &&
             c->track != VLA_TRACK_SR && c->track != VLA_TRACK_CG)
        w = "the chunk form updates A by the sm update blockwise (the capacitance's pivots are "
            "its denominators), or keeps M and solves by cg (MesaNet's arrangement): --track sm "
            "(or comp, sr: sm in their arithmetic), or cg:K, cg:TOL";
    else if (chunk && A && c->nudge && c->period % c->chunk)
        w = "the nudge (A += per_eps I every `period` steps) falls inside a chunk: set nudge=off, "
            "or a period that is a multiple of C";
    else if (chunk && A && c->guard && !(dev & VLA_DEV_FLOOR) && c->track != VLA_TRACK_CG)
        w = "the guard's skip adds eps_g I to A inside a chunk, which no blocked update "
            "expresses: set guard=off (vla3's floor fits: it floors the capacitance's pivots)";
    else if (chunk && (dev & VLA_DEV_CLAMP) && c->clamp_on)
        w = MODEL_WHY(own, "%s's clamp reads ||S|| and ||A|| after every step, inside the chunk: "
                           "set clamp_on=off");
    else if ((chunk || c->form == VLA_FORM_SCAN) && c->renorm > 0)
        w = "renorm rescales S after every step, which neither a chunk nor a scan has: set "
            "renorm=0";
    else if ((chunk || c->form == VLA_FORM_SCAN) && c->gamma != 1)
        w = "forgetting (gamma) is not in the chunk and scan forms yet: --form seq";
    else if (c->form == VLA_FORM_SCAN && A && vla_track_holds(c->track) == VLA_HOLDS_M)
        w = "the ways that keep M (solve, cg, cheb) are not checked in the scan form yet: "
            "--form seq";
    else if (c->form == VLA_FORM_SCAN && (dev & VLA_DEV_CLIP))
        w = MODEL_WHY(own, "%s clips its error v - S k by its norm: S is no affine recurrence, so "
                           "it has no scan (--form seq or chunk:C)");
    else if (chunk && c->gate_clamp && c->anchor != VLA_ANCHOR_DIRECT)
        w = "gate_clamp clamps a direct difference gamma_i - gamma_j at 0, and an anchored factor "
            "exp(gamma_i - gamma_n) is > 1 by design: set anchor=direct or gate_clamp=off";
    else if (chunk && vla_col_lr(c->model) && c->anchor != VLA_ANCHOR_DIRECT)
        w = MODEL_WHY(own, "%s's chunk takes direct differences of the cumulative log-decays only "
                           "(fla's default DPLR path); its safe_gate path, anchored mid-chunk, is "
                           "not in vlastab: anchor=direct");
    else if (chunk && c->anchor_block > c->chunk)
        w = "anchor_block is larger than the chunk: set anchor_block to 0 (the chunk) or at most C";
    else if (c->form == VLA_FORM_SCAN && vla_levels(c))
        w = MODEL_WHY(own, "%s's Fenwick levels merge at the bits of each position, which no "
                           "scan's S -> S J + B carries: --form seq or chunk:C");
    else if (vla_levels(c) && (c->cache || c->renorm > 0))
        w = MODEL_WHY(own, "cache and renorm act on S, which %s reads through its Fenwick "
                           "levels, not S: set cache=off, renorm=0");
    else if (c->form == VLA_FORM_SCAN && c->model == VLA_MAMBA3)
        w = "mamba3's step writes two tokens, the last one's and its own (a rank-2 B_t from the "
            "carried v_{t-1}, k~_{t-1}), which the scan's S -> S J + v alpha^T does not carry: "
            "--form seq or chunk:C";
    else if (chunk && c->model == VLA_MAMBA3 && c->rank > 1)
        w = "mamba3's chunk form is SISO (rank = 1): its MIMO (rank > 1) is --form seq only";
    else if (chunk && c->model == VLA_MAMBA3 && c->normalize)
        w = "mamba3's chunk (the kernel's) has no normalizer: set normalize=off";
    else if ((chunk || c->form == VLA_FORM_SCAN) &&
             (c->cache || c->decay_bf16 || c->beta_bf16))
        w = "cache, decay_bf16 and beta_bf16 are decoding's settings (the state kept between the "
            "tokens' binary32 updates): --form seq (a chunk stages S_0 with stage=)";
    return w ? vla_fail(err, VLA_ENOTSUP, "%s", w) : VLA_OK;
}

int vla_grad_check(const vla_config *c, vla_error *err)
{
    const char *w = NULL;
    if (vla_model_has_A(c->model) && c->track != VLA_TRACK_SM)
        w = "the backward of the models with A differentiates the Sherman-Morrison update as sm "
            "computes it (docs/math.md 11.2); the other ways of tracking A (a factor of M, a solve "
            "with M, double words, stochastic rounding) have other backwards, not written: "
            "--track sm";
    else if (vla_model_has_A(c->model) && (vla_form_pending(c, 1) || c->form == VLA_FORM_SCAN))
        w = "the models with A have the seq backward only (docs/math.md 11.2): --form seq";
    else if (c->form == VLA_FORM_SCAN)
        w = bwd_scan;
    else if (vla_form_pending(c, 1) && !vla_model_gradchunk(c->model))
        w = bwd_chunk;
    else if (vla_form_pending(c, 1) && vla_model_gate(c->model) == 2 &&
             c->anchor != VLA_ANCHOR_DIRECT)
        w = bwd_channels;
    else if (vla_form_pending(c, 1) && c->normalize)
        w = "the chunk backward does not differentiate the read-out's denominator: normalize "
            "off, or --form seq";
    else if (c->model == VLA_MAMBA3 && c->rank > 1)
        w = "mamba3's backward is SISO (rank = 1): its MIMO (rank > 1) has no backward";
    else if (c->renorm > 0)
        w = "renorm's rescaling of S is not differentiated: set renorm=0";
    else if (c->gamma != 1)
        w = "forgetting (gamma) is not in the backward: set gamma=1";
    else if (c->gate_lb != 0)
        w = "the gate's lower bound (gate_lb, gate_map) is not in the backward: the gradients are "
            "those of the log-gates as given (set gate_lb=0)";
    else if (c->cache || c->decay_bf16 || c->beta_bf16)
        w = "decoding's roundings (cache, decay_bf16, beta_bf16) are not in the backward";
    return w ? vla_fail(err, VLA_ENOTSUP, "%s", w) : VLA_OK;
}

int vla_grad_has(const vla_config *c, vla_grad_kind which)
{
    /* a gradient for each input the model reads (VLA_MODELS' column reads); delta's row gates g
     * (delta_form=gated) have none */
    const unsigned r = vla_model_reads(c);
    switch (which) {
    case VLA_GRAD_BETA: return (r & VLA_IN_BETA) != 0;
    case VLA_GRAD_G: return (r & (VLA_IN_LOGDECAY | VLA_IN_DECAY)) != 0;
    case VLA_GRAD_LR: return (r & VLA_IN_A) != 0;
    case VLA_GRAD_U: return (r & VLA_IN_U) != 0;
    }
    return 0;
}

/* ---- the settings a configuration reads (a --set that changes nothing is refused,
 * not silently accepted) ---- */

static int chunk_form(const vla_config *c) { return c->form == VLA_FORM_CHUNK && c->chunk > 1; }
/* a chunk that stages its first state S_0 for its products (chunk_s0, stage=): every model's
 * chunk but the clipped one's (VLA_DEV_CLIP), whose clipped error is no WY form: it runs its
 * tokens one by one */
static int reads_stage(const vla_config *c)
{
    return chunk_form(c) && !(vla_model_devices(c->model) & VLA_DEV_CLIP);
}
/* a chunk that solves the UT transform (I + L)^-1 (tri=): a write with a rank-one or low-rank
 * term in J_t, the delta rule's (the models that read beta, but mamba3, whose beta is the
 * trapezoid's lambda), A's k' alpha^T (the models with A), rwkv7's a b^T (the column lr); la's,
 * gla's, mamba2's and mamba3's chunks (J_t = I, a Diag(a_t), a I) have no L */
static int reads_tri(const vla_config *c)
{
    const int delta = (vla_model_reads(c) & VLA_IN_BETA) && c->model != VLA_MAMBA3;
    return reads_stage(c) && (vla_model_has_A(c->model) || delta || vla_col_lr(c->model));
}
/* a chunk of cumulative log-decays (cumsum=, cumsum_fmt=, base=, anchor=, gate_clamp=): a decay
 * per token (the column decay: gdn, mamba2, delta with delta_form=decay) or per key channel (the
 * column gate: kda, gla, rwkv7) */
static int reads_decays(const vla_config *c)
{
    return chunk_form(c) && (vla_col_decay(c) || vla_col_gate(c->model) == 2);
}
static int reads_gates(const vla_config *c) { return vla_col_gate(c->model) != 0; }
static int reads_A(const vla_config *c) { return vla_model_has_A(c->model); }
static int reads_clip(const vla_config *c)
{
    return (vla_model_devices(c->model) & VLA_DEV_CLIP) != 0;
}
static int reads_clamp(const vla_config *c)
{
    return (vla_model_devices(c->model) & VLA_DEV_CLAMP) != 0;
}
static int reads_sr_seed(const vla_config *c) { return c->track == VLA_TRACK_SR; }
/* the settings that columns of VLA_MODELS are expressions in: read where the column changes */
static int reads_delta_form(const vla_config *c)
{
    vla_config o = *c;
    o.delta_form = c->delta_form == VLA_DELTA_DECAY ? VLA_DELTA_GATED : VLA_DELTA_DECAY;
    return vla_model_reads(&o) != vla_model_reads(c) || vla_col_decay(&o) != vla_col_decay(c);
}
static int reads_householder(const vla_config *c) { return c->model == VLA_DELTAPRODUCT; }
static int reads_rank(const vla_config *c) { return c->model == VLA_MAMBA3; }
static int reads_keynorm(const vla_config *c)
{
    vla_config o = *c;
    o.keynorm = !c->keynorm;
    return vla_model_unit(&o) != vla_model_unit(c);
}

/* Each rule: the settings it covers, whether a configuration reads them, and what does, in words
 * ("%s": the models that read them in the chunk form, from the columns). A setting in no rule is
 * read by every model and form (or refused elsewhere: decoding's, gamma, gate_lb). */
static const struct {
    const char *names[6];
    int (*reads)(const vla_config *c);
    int chunk; /* 1: read only in a chunk form of C > 1 */
    const char *who;
} setting_rules[] = {
    {{"tri"}, reads_tri, 1, "the chunk form (chunk:C, C > 1) of %s, whose chunk solves a UT transform"},
    {{"stage"}, reads_stage, 1, "the chunk form (chunk:C, C > 1) of %s"},
    {{"cumsum", "cumsum_fmt", "base", "anchor", "anchor_block", "gate_clamp"}, reads_decays, 1,
     "the chunk form (chunk:C, C > 1) of the models with decays, %s"},
    {{"scale", "qknorm", "l2_eps", "gate_map"}, reads_gates, 0, "the gated family, %s"},
    {{"lambda0"}, reads_A, 0, "the models with A, %s"},
    {{"clip"}, reads_clip, 0, "%s, whose error is clipped"},
    {{"clamp", "clamp_eps", "clamp_on"}, reads_clamp, 0, "%s, whose norms are clamped"},
    {{"sr_seed"}, reads_sr_seed, 0, "--track sr (stochastic rounding)"},
    {{"delta_form"}, reads_delta_form, 0, "%s"},
    {{"keynorm"}, reads_keynorm, 0, "%s"},
    {{"householder"}, reads_householder, 0, "%s, whose tokens are householder steps each"},
    {{"rank"}, reads_rank, 0, "%s, whose MIMO rank it is"},
};
#define NRULES (sizeof setting_rules / sizeof setting_rules[0])

int vla_setting_read(const vla_config *c, const char *name, vla_error *err)
{
    for (size_t r = 0; r < NRULES; r++)
        for (int i = 0; i < 6 && setting_rules[r].names[i]; i++) {
            if (strcmp(name, setting_rules[r].names[i]))
                continue;
            if (setting_rules[r].reads(c))
                return VLA_OK;
            /* the models that read it, in c's form or, for a chunk's setting, in chunk:64, with
             * either delta_form */
            char who[160] = "";
            size_t k = 0;
            int n = 0, total = 0, has[VLA_NMODEL];
            for (int m = 0; m < VLA_NMODEL; m++) {
                vla_config o = *c;
                o.model = (vla_model_kind)m;
                if (setting_rules[r].chunk) {
                    o.form = VLA_FORM_CHUNK;
                    o.chunk = 64;
                }
                has[m] = setting_rules[r].reads(&o);
                o.delta_form = o.delta_form == VLA_DELTA_DECAY ? VLA_DELTA_GATED : VLA_DELTA_DECAY;
                has[m] |= setting_rules[r].reads(&o);
                total += has[m];
            }
            for (int m = 0; m < VLA_NMODEL; m++)
                if (has[m] && k < sizeof who)
                    n++, k += (size_t)snprintf(who + k, sizeof who - k, "%s%s",
                                               n == 1 ? "" : n == total ? " and " : ", ",
                                               vla_model_name((vla_model_kind)m));
            char form[32], what[400];
            vla_form_name(c, form, sizeof form);
            snprintf(what, sizeof what, setting_rules[r].who, who);
            return vla_fail(err, VLA_ENOTSUP, "%s in --form %s with --track %s: %s is read only "
                            "by %s, so it would change nothing", vla_model_name(c->model), form,
                            vla_track_name(c->track), name, what);
        }
    return VLA_OK;
}

long vla_form_pending(const vla_config *c, long writes)
{
    return c->form == VLA_FORM_CHUNK && c->chunk > 1 ? writes % c->chunk : 0;
}

int vla_form_read_check(const vla_config *c, vla_error *err)
{
    if (vla_levels(c) && vla_form_pending(c, 1))
        return vla_fail(err, VLA_ENOTSUP, "%s's chunk form keeps, at a chunk's end, the chunk's "
                        "write as one level (fla's state), not the levels of its tokens that a "
                        "read weighs: --form seq", vla_model_name(c->model));
    return vla_fail(err, VLA_OK, NULL);
}

int vla_form_input_check(const vla_config *c, const vla_input *in, vla_error *err)
{
    const int chunk = c->form == VLA_FORM_CHUNK && c->chunk > 1;
    if (!(vla_model_reads(c) & (VLA_IN_G | VLA_IN_DECAY)) ||
        !(chunk || c->form == VLA_FORM_SCAN))
        return VLA_OK;
    if (c->delta_form == VLA_DELTA_GATED && in->g)
        return vla_fail(err, VLA_ENOTSUP, "the input's row gates g (delta_form=gated) give each "
                        "row of S a transition of its own, so a chunk would need a UT transform "
                        "per row, which no fast kernel computes (fla's gated delta rule takes a "
                        "scalar decay): --form seq, or delta_form=decay with decay.npy");
    if (chunk && c->delta_form == VLA_DELTA_DECAY && !isnan(in->decay) &&
        vla_round_fmt(vla_prec_io(c->prec), in->decay) == 0)
        return vla_fail(err, VLA_ENOTSUP, "a decay of 0 (or one that rounds to 0 in the inputs' "
                        "format) has no log: the chunk form's cumulative log-decay would be -Inf "
                        "(--form seq or scan take it)");
    return VLA_OK;
}
