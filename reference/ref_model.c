/* ref_model.c: lib/recur.h instantiated over GNU MPFR: the exact reference (P bits) and the
 * format emulation of every precision policy, as vla_models. The recurrence text is lib/'s own,
 * so the emulation performs the operations in exactly lib/'s strict order. */
#include "arith_mpfr.h"
#include "vlaref.h"

#define SFX mpfr
#include "recur.h"

typedef struct {
    vref_ctx cx;
    ST *st;
    int torn; /* a step was given up half done: the state is lost until a load */
} vref_model;

/* a step or a read (in NULL), given up with VLA_EINTR when *cx.stop is set while it runs */
static int op_advance(vref_model *m, const vla_input *in, const double *q)
{
    if (m->torn)
        return VLA_EINTR;
    jmp_buf jump;
    if (m->cx.stop) {
        m->cx.jump = &jump;
        if (setjmp(jump)) {
            m->cx.armed = 0;
            vref_leave(&m->cx); /* the exponent range the step had set */
            m->torn = 1;
            return VLA_EINTR;
        }
        m->cx.armed = 1;
    }
    int r = in ? FN(vstate_step)(&m->cx, m->st, in) : FN(vstate_read)(&m->cx, m->st, q);
    m->cx.armed = 0;
    return r;
}
static int op_step(void *self, const vla_input *in) { return op_advance(self, in, NULL); }
static int op_read(void *self, const double *q) { return op_advance(self, NULL, q); }
static int op_get(const void *self, vla_quantity q, double *dst)
{
    vref_model *m = (vref_model *)self; /* forming chol's A uses the context's scratch */
    return m->torn ? VLA_EINTR : FN(vstate_get)(&m->cx, m->st, q, dst);
}
static void op_destroy(void *self)
{
    vref_model *m = self;
    FN(vstate_free)(&m->cx, m->st);
    vref_ctx_clear(&m->cx);
    free(m);
}
static int op_save(const void *self, FILE *f)
{
    const vref_model *m = self;
    return m->torn ? VLA_EINTR : FN(vstate_save)(m->st, f);
}
static int op_load(void *self, FILE *f)
{
    vref_model *m = self;
    int r = FN(vstate_load)(m->st, f);
    m->torn = r != 0; /* a half-loaded state is no state either */
    return r;
}
static int op_finish(void *self)
{
    vref_model *m = self;
    return m->torn ? VLA_EINTR : FN(vstate_finish)(&m->cx, m->st);
}
static int op_start(void *self, const double *S0)
{
    vref_model *m = self;
    FN(vstate_start)(&m->cx, m->st, S0);
    return VLA_OK;
}
static const vla_model_ops ref_ops = {op_step, op_read,   op_get,   op_destroy,
                                     op_save, op_load, vref_rest, op_finish, op_start};

int vref_model_get_lo(const vla_model *m, vla_quantity q, double *lo)
{
    if (!m || !lo)
        return VLA_EINVAL;
    if (m->ops != &ref_ops)
        return vref_dd_get_lo(m, q, lo);
    vref_model *r = m->self;
    r->cx.lo = 1;
    int s = op_get(r, q, lo);
    r->cx.lo = 0;
    return s;
}

int vref_model_new(vla_model **out, const vla_config *cfg, vref_kind kind, long prec_bits)
{
    if (!out || !cfg || (kind != VREF_EXACT && kind != VREF_EMULATE))
        return VLA_EINVAL;
    *out = NULL;
    int r = vla_config_check(cfg);
    if (r)
        return r;
    if (kind == VREF_EXACT && (prec_bits < MPFR_PREC_MIN || prec_bits > (1L << 20)))
        return VLA_ERANGE;
    if ((r = vla_track_check(cfg, NULL)))
        return r;
    if (cfg->track == VLA_TRACK_COMP && kind == VREF_EMULATE) /* double-word arithmetic */
        return vref_dw_model_new(out, cfg);
    vref_model *m = calloc(1, sizeof *m);
    if (!m)
        return VLA_ENOMEM;
    vref_ctx_init(&m->cx, cfg, kind, prec_bits);
    r = FN(vstate_new)(&m->cx, cfg, &m->st);
    if (r) {
        vref_ctx_clear(&m->cx);
        free(m);
        return r;
    }
    return vla_model_wrap(out, cfg, &ref_ops, m, &m->st->cnt);
}

void vref_model_stop_on(vla_model *m, volatile sig_atomic_t *stop)
{
    if (m && m->ops == &ref_ops)
        ((vref_model *)m->self)->cx.stop = stop;
}

/* the backward pass (lib/recur_grad.h) in MPFR: exact at prec_bits, or a policy's emulation, a
 * block at a time behind a vla_backward (lib/model_impl.h): the seq form's or the chunk form's */
#include "recur_grad.h"
#include "recur_gradchunk.h"
typedef struct {
    vref_ctx cx;
    ST *s;
    FN(gstate) G;
    FN(gcstate) GC;
    int chunk; /* the chunk form's backward: GC; else G */
    int torn;  /* given up half done (vref_backward_new_stop): nothing more is given */
    vla_grad_input in;
    void *ctx;
} vref_bwd;

/* The forward of the backward (j < 0: T steps, the arrays made) or block j, given up with
 * VLA_EINTR when *cx.stop is set while it runs, as op_advance gives up a step. What a begin given
 * up had made is in the state, NULL beyond it, for bwd_destroy. */
static int bwd_run(vref_bwd *b, long j, long T, const double *c, const vla_grads *out, long base)
{
    if (b->torn)
        return VLA_EINTR;
    jmp_buf jump;
    const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    if (b->cx.stop) {
        b->cx.jump = &jump;
        if (setjmp(jump)) {
            b->cx.armed = 0;
            mpfr_set_emin(emin); /* the exponent range the block had set */
            mpfr_set_emax(emax);
            b->torn = 1;
            return VLA_EINTR;
        }
        b->cx.armed = 1;
    }
    int r;
    if (j < 0)
        r = b->chunk ? FN(gradchunk_begin)(&b->cx, b->s, &b->GC, T, b->in, b->ctx)
                     : FN(grad_begin)(&b->cx, b->s, &b->G, T, b->in, b->ctx);
    else
        r = b->chunk ? FN(gradchunk_block)(&b->cx, b->s, &b->GC, j, b->in, b->ctx, c, out, base)
                     : FN(grad_block)(&b->cx, b->s, &b->G, j, b->in, b->ctx, c, out, base);
    b->cx.armed = 0;
    return r;
}

static int bwd_block(void *self, long j, const double *c, const vla_grads *out, long base)
{
    return bwd_run(self, j, 0, c, out, base);
}

static void bwd_destroy(void *self)
{
    vref_bwd *b = self;
    if (b->chunk)
        FN(gradchunk_end)(&b->GC);
    else
        FN(grad_end)(&b->G);
    if (b->s)
        FN(vstate_free)(&b->cx, b->s);
    vref_ctx_clear(&b->cx);
    free(b);
}

static const vla_backward_ops bwd_ops = {bwd_block, bwd_destroy};

/* the arguments vref_grad and vref_backward_new check alike */
static int bwd_check(const vla_config *cfg, vref_kind kind, long prec_bits, long T,
                     vla_grad_input in)
{
    int r;
    if (!cfg || !in || T < 1 || (kind != VREF_EXACT && kind != VREF_EMULATE && kind != VREF_DD))
        return VLA_EINVAL;
    if ((r = vla_config_check(cfg)) || (r = vla_grad_check(cfg, NULL)))
        return r;
    if (kind == VREF_EXACT && (prec_bits < MPFR_PREC_MIN || prec_bits > (1L << 20)))
        return VLA_ERANGE;
    return VLA_OK;
}

int vref_backward_new(vla_backward **out, const vla_config *cfg, vref_kind kind, long prec_bits,
                      long T, vla_grad_input in, void *ctx)
{
    return vref_backward_new_stop(out, cfg, kind, prec_bits, T, in, ctx, NULL);
}

int vref_backward_new_stop(vla_backward **out, const vla_config *cfg, vref_kind kind,
                           long prec_bits, long T, vla_grad_input in, void *ctx,
                           volatile sig_atomic_t *stop)
{
    int r;
    if (!out)
        return VLA_EINVAL;
    *out = NULL;
    if ((r = bwd_check(cfg, kind, prec_bits, T, in)))
        return r;
    if (kind == VREF_DD)
        return vref_dd_backward_new(out, cfg, T, in, ctx, stop);
    vref_bwd *b = calloc(1, sizeof *b);
    if (!b)
        return VLA_ENOMEM;
    vref_ctx_init(&b->cx, cfg, kind, prec_bits);
    b->in = in, b->ctx = ctx;
    b->chunk = cfg->form == VLA_FORM_CHUNK && cfg->chunk > 1;
    b->cx.stop = stop;
    if ((r = FN(vstate_new)(&b->cx, cfg, &b->s)) || (r = bwd_run(b, -1, T, NULL, NULL, 0))) {
        bwd_destroy(b);
        return r;
    }
    return vla_backward_wrap(out, &bwd_ops, b, T, b->chunk ? b->GC.P.K : b->G.P.K, cfg->dv);
}

int vref_backward_lo(vla_backward *b, long off)
{
    if (!b || off < 0)
        return VLA_EINVAL;
    if (b->ops != &bwd_ops)
        return vref_dd_backward_lo(b, off);
    ((vref_bwd *)b->self)->cx.lo_off = off;
    return VLA_OK;
}

int vref_grad(const vla_config *cfg, vref_kind kind, long prec_bits, long T, vla_grad_input in,
              void *ctx, const double *c, const vla_grads *out)
{
    int r;
    if (!c || !out || !out->dq || !out->dk || !out->dv || ((!out->da) != (!out->db)))
        return VLA_EINVAL;
    vla_backward *b = NULL;
    if (!(r = vref_backward_new(&b, cfg, kind, prec_bits, T, in, ctx)))
        r = vla_backward_whole(b, c, out);
    vla_backward_free(b);
    return r;
}
#include "recur_end.h"

double vref_round_op(vla_fmt f, char op, double a, double b)
{
    long p, lo, hi;
    vref_fmt_params(f, &p, &lo, &hi);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t x, y, r;
    mpfr_inits2(64, x, y, (mpfr_ptr)0); /* binary64 operands are exact in 64 bits */
    mpfr_init2(r, p);
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_set_d(y, b, MPFR_RNDN);
    int i; /* rounded to p bits in the wide range, then into the format's range and subnormals */
    switch (op) {
    case '+': i = mpfr_add(r, x, y, MPFR_RNDN); break;
    case '-': i = mpfr_sub(r, x, y, MPFR_RNDN); break;
    case '*': i = mpfr_mul(r, x, y, MPFR_RNDN); break;
    case '/': i = mpfr_div(r, x, y, MPFR_RNDN); break;
    case 's': i = mpfr_sqrt(r, x, MPFR_RNDN); break;
    default: i = mpfr_set(r, x, MPFR_RNDN); break;
    }
    mpfr_set_emin(lo);
    mpfr_set_emax(hi);
    i = mpfr_check_range(r, i, MPFR_RNDN);
    mpfr_subnormalize(r, i, MPFR_RNDN);
    double out = mpfr_get_d(r, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clears(x, y, r, (mpfr_ptr)0);
    return out;
}
