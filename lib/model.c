/* model.c: the strict native instantiations of recur.h (and so the public primitives), and the
 * vla_model front door every backend goes through: argument checks, input checks, dispatch. */
#include "engine_impl.h"
#include "model_impl.h"
#include "tables.h"
#include <stdlib.h>
#include <string.h>

#define TAG(x) x
#define PRIMS 1
#define NATIVE_CREATE vla_native_create_strict
#include "native_all.h"

int vla_model_new(vla_model **out, const vla_config *cfg)
{
    if (!out || !cfg)
        return VLA_EINVAL;
    *out = NULL;
    int r = vla_config_check(cfg);
    if (r)
        return r;
    if ((r = vla_track_check(cfg, NULL)))
        return r;
    if (cfg->track == VLA_TRACK_COMP) /* strict whatever the mode: see model_comp.c */
        return vla_native_create_comp(cfg, out);
    if (cfg->mode == VLA_FAST) {
#if defined(__x86_64__) || defined(__i386__)
        if (!__builtin_cpu_supports("fma")) /* model_fast.c is built with -mfma */
            return VLA_ENOTSUP;
#endif
        return vla_native_create_fast(cfg, out);
    }
    if ((r = vla_native_create_simd(cfg, out)) != VLA_ENOTSUP) /* the same bits, vectorized */
        return r;
    return vla_native_create_strict(cfg, out);
}

void vla_model_free(vla_model *m)
{
    if (m) {
        m->ops->destroy(m->self);
        free(m);
    }
}

int vla_input_check(const vla_config *cfg, const vla_input *in)
{
    if (!in || !in->q || !in->k || !in->v)
        return VLA_EINVAL;
    if (!vla_finite_all(in->q, cfg->d) || !vla_finite_all(in->k, cfg->d) ||
        !vla_finite_all(in->v, cfg->dv) || (in->u && !vla_finite_all(in->u, cfg->d)) ||
        (in->g && !vla_finite_all(in->g, cfg->dv)) ||
        isinf(in->beta) || isinf(in->decay))
        return VLA_ENONFINITE;
    if (in->decay < 0 || in->decay > 1) /* (NaN: the default, 1) */
        return VLA_ERANGE;
    return vla_form_input_check(cfg, in, NULL);
}

int vla_model_step(vla_model *m, const vla_input *in)
{
    if (!m)
        return VLA_EINVAL;
    int r = vla_input_check(&m->cfg, in);
    return r ? r : m->ops->step(m->self, in);
}

int vla_model_finish(vla_model *m)
{
    if (!m)
        return VLA_EINVAL;
    return m->ops->finish ? m->ops->finish(m->self) : VLA_OK;
}

int vla_model_read(vla_model *m, const double *q)
{
    if (!m || !q)
        return VLA_EINVAL;
    if (!vla_finite_all(q, m->cfg.d))
        return VLA_ENONFINITE;
    return m->ops->read(m->self, q);
}

int vla_model_start(vla_model *m, const double *S0)
{
    if (!m || !S0)
        return VLA_EINVAL;
    int r = vla_config_h0(&m->cfg, NULL);
    if (r || !m->ops->start)
        return r ? r : VLA_ENOTSUP;
    if (m->counts->steps || m->counts->reads)
        return VLA_EINVAL;
    if (!vla_finite_all(S0, m->cfg.dv * m->cfg.d))
        return VLA_ENONFINITE;
    m->cfg.h0 = 1;
    return m->ops->start(m->self, S0);
}

int vla_model_get(const vla_model *m, vla_quantity q, double *dst)
{
    if (!m || !dst)
        return VLA_EINVAL;
    if ((q == VLA_Q_A || q == VLA_Q_L) && !vla_model_has_A(m->cfg.model))
        return VLA_EINVAL;
    return m->ops->get(m->self, q, dst);
}

/* a checkpoint opens with a magic and the configuration's description, so that a state is never
 * loaded into a model of another configuration (engine_impl.h: every backend writes this) */
static const char save_magic[8] = "VLAMOD1";

int vla_model_save_header(const vla_config *cfg, FILE *f)
{
    char desc[1024];
    vla_config_describe(cfg, desc, sizeof desc);
    uint32_t len = (uint32_t)strlen(desc);
    if (fwrite(save_magic, 8, 1, f) != 1 || fwrite(&len, 4, 1, f) != 1 ||
        fwrite(desc, 1, len, f) != len)
        return VLA_EIO;
    return VLA_OK;
}

int vla_model_load_header(const vla_config *cfg, FILE *f)
{
    char desc[1024], got[1024], magic[8];
    uint32_t len;
    vla_config_describe(cfg, desc, sizeof desc);
    if (fread(magic, 8, 1, f) != 1 || memcmp(magic, save_magic, 8) || fread(&len, 4, 1, f) != 1 ||
        len >= sizeof got || fread(got, 1, len, f) != len)
        return VLA_EFORMAT;
    got[len] = 0;
    return strcmp(got, desc) ? VLA_EFORMAT : VLA_OK;
}

int vla_model_save(const vla_model *m, FILE *f)
{
    if (!m || !f)
        return VLA_EINVAL;
    int r = vla_model_save_header(&m->cfg, f);
    return r ? r : m->ops->save(m->self, f);
}

void vla_model_rest(vla_model *m)
{
    if (m && m->ops->rest)
        m->ops->rest(m->self);
}

long vla_backward_block_len(long T)
{
    long K = 1;
    while (K * K < T)
        K++;
    return K;
}

int vla_backward_wrap(vla_backward **out, const vla_backward_ops *ops, void *self, long T, long K,
                      int dv)
{
    vla_backward *b = calloc(1, sizeof *b);
    if (!b) {
        ops->destroy(self);
        return VLA_ENOMEM;
    }
    *b = (vla_backward){ops, self, T, K, 0, dv};
    b->j = (T + b->K - 1) / b->K - 1;
    *out = b;
    return VLA_OK;
}

long vla_backward_span(const vla_backward *b, long *t0)
{
    const long s = b->j * b->K;
    if (t0)
        *t0 = b->j < 0 ? 0 : s;
    return b->j < 0 ? 0 : s + b->K < b->T ? b->K : b->T - s;
}

int vla_backward_next(vla_backward *b, const double *c, const vla_grads *out)
{
    long t0;
    if (!b || !c || !out || !out->dq || !out->dk || !out->dv || (!out->da) != (!out->db))
        return VLA_EINVAL;
    if (!vla_backward_span(b, &t0))
        return VLA_ERANGE;
    int r = b->ops->block(b->self, b->j, c, out, t0);
    b->j = r ? -1 : b->j - 1; /* a failed block leaves the carried cotangent undefined */
    return r;
}

int vla_backward_whole(vla_backward *b, const double *c, const vla_grads *out)
{
    int r = VLA_OK;
    for (; b->j >= 0 && !r; b->j--)
        r = b->ops->block(b->self, b->j, c, out, 0);
    return r;
}

void vla_backward_free(vla_backward *b)
{
    if (b) {
        b->ops->destroy(b->self);
        free(b);
    }
}

int vla_model_load(vla_model *m, FILE *f)
{
    if (!m || !f)
        return VLA_EINVAL;
    int r = vla_model_load_header(&m->cfg, f);
    return r ? r : m->ops->load(m->self, f);
}

/* recur.h's uprime in the binary64 instantiation above (vstate_f64 and its functions), on a
 * state that holds just the arrays uprime reads and writes */
int vla_uprime(const vla_config *cfg, const double *k, const double *u, double *up)
{
    if (!cfg || !k || !up || vla_config_check(cfg) || !vla_model_has_A(cfg->model))
        return VLA_EINVAL;
    int d = cfg->d;
    vla_fmt fs = vla_prec_storage(cfg->prec);
    double kr[VLA_D_MAX], ur[VLA_D_MAX], w[VLA_D_MAX], c[C_NCONST];
    for (int i = 0; i < d; i++) {
        kr[i] = vla_round_fmt(fs, k[i]);
        ur[i] = vla_round_fmt(fs, u ? u[i] : k[i]);
    }
    vstate_f64 s = {.cfg = *cfg, .d = d, .dv = cfg->dv, .k = kr, .u = ur, .w = w, .c = c};
    vstate_consts_f64(NULL, cfg, c);
    memcpy(up, uprime_f64(NULL, &s), (size_t)d * sizeof *up);
    return VLA_OK;
}

const vla_config *vla_model_config(const vla_model *m) { return &m->cfg; }
const vla_counts *vla_model_counts(const vla_model *m) { return m->counts; }
long vla_model_t(const vla_model *m) { return m->counts->steps; }

int vla_ut_inverse(vla_prec p, vla_tri tri, const double *L, int n, double *T)
{
    if (!L || !T || n < 1 || n > VLA_CHUNK_MAX || (unsigned)tri > VLA_TRI_NEUMANN)
        return VLA_EINVAL;
    switch (p) {
#define VLA_X_(ID, name, sfx, ...)                                                                 \
    case VLA_##ID:                                                                                 \
        return (VLA_CAT(ut_inverse, sfx))(tri, L, n, T);
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default:
        return VLA_EINVAL;
    }
}
