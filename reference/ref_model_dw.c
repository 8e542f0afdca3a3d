/* ref_model_dw.c: the MPFR emulation of the comp way of tracking A: lib/dw_body.h's double-word
 * algorithms over MPFR operations correctly rounded into the working format (its precision,
 * exponent range and subnormals), and lib/recur.h over those: the same text as lib/model_comp.c,
 * so the two agree bit for bit. */
#include "arith_mpfr.h"
#include "vlaref.h"

#include "recur_end.h" /* the MPFR vocabulary is not this file's: the double-word one follows */
#include "tables.h"

typedef struct {
    __mpfr_struct h, l;
} vdw;

#define VDW_POOL 48
typedef struct {
    vref_ctx base; /* the base format, its pool of base temporaries, the input rounding */
    vdw pairs[VDW_POOL];
    int ptop;
} vdw_ctx;

static inline vdw *vdw_scalar(vdw_ctx *cx)
{
    if (cx->ptop == VDW_POOL)
        abort();
    return &cx->pairs[cx->ptop++];
}

static vdw *vdw_alloc(vdw_ctx *cx, size_t n)
{
    vdw *p = malloc(n * sizeof *p);
    if (p)
        for (size_t i = 0; i < n; i++) {
            mpfr_init2(&p[i].h, cx->base.prec_c);
            mpfr_init2(&p[i].l, cx->base.prec_c);
            mpfr_set_zero(&p[i].h, 1);
            mpfr_set_zero(&p[i].l, 1);
        }
    return p;
}

static void vdw_free(vdw *p, size_t n)
{
    if (!p)
        return;
    for (size_t i = 0; i < n; i++) {
        mpfr_clear(&p[i].h);
        mpfr_clear(&p[i].l);
    }
    free(p);
}

static int vdw_save(FILE *f, const vdw *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mpfr_fpif_export(f, (mpfr_ptr)&p[i].h) || mpfr_fpif_export(f, (mpfr_ptr)&p[i].l))
            return 1;
    return 0;
}

static int vdw_load(FILE *f, vdw *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mpfr_fpif_import(&p[i].h, f) || mpfr_fpif_import(&p[i].l, f))
            return 1;
    return 0;
}

#define SFX mpfrdw
#define VLA_FN static
#define FN(name) VLA_CAT(name, SFX)

#define CXP vdw_ctx *cx_
#define CX cx_
#define FRAME_BEGIN int frame_ = cx_->base.top, pframe_ = cx_->ptop
#define FRAME_END (cx_->base.top = frame_, cx_->ptop = pframe_)
/* the base operations of dw_body.h */
#define DW vdw
#define DWP vdw *
#define DWCP const vdw *
#define BH(p) (&(p)->h)
#define BL(p) (&(p)->l)
#define BSCALAR(x) mpfr_ptr x = vref_scalar(&cx_->base)
#define BSRC mpfr_srcptr
#define B_ADD(r, a, b) vref_fin(&cx_->base, (r), mpfr_add((r), (a), (b), MPFR_RNDN))
#define B_SUB(r, a, b) vref_fin(&cx_->base, (r), mpfr_sub((r), (a), (b), MPFR_RNDN))
#define B_MUL(r, a, b) vref_fin(&cx_->base, (r), mpfr_mul((r), (a), (b), MPFR_RNDN))
#define B_DIV(r, a, b) vref_fin(&cx_->base, (r), mpfr_div((r), (a), (b), MPFR_RNDN))
#define B_SQRT(r, a) vref_fin(&cx_->base, (r), mpfr_sqrt((r), (a), MPFR_RNDN))
#define B_FMA(r, a, b, c) vref_fin(&cx_->base, (r), mpfr_fma((r), (a), (b), (c), MPFR_RNDN))
#define B_FLOOR(r, a) (mpfr_floor((r), (a)), vref_fin(&cx_->base, (r), 0))
#define B_NEG(r, a) mpfr_neg((r), (a), MPFR_RNDN)
#define B_COPY(r, a) mpfr_set((r), (a), MPFR_RNDN)
#define B_ZERO(r) mpfr_set_zero((r), 1)
#define B_ISZERO(a) mpfr_zero_p(a)
#define B_ISFIN(a) mpfr_number_p(a)
#define B_LESS(a, b) mpfr_less_p((a), (b))
#define B_EQ(a, b) mpfr_equal_p((a), (b))
#define B_SGN(a) mpfr_sgn(a)
#define B_CMPD(a, c) mpfr_cmp_d((a), (c))
#define B_SETD(r, c) vref_fin(&cx_->base, (r), mpfr_set_d((r), (c), MPFR_RNDN))
#define B_TOD(a) mpfr_get_d((a), MPFR_RNDN)
/* recur.h's vocabulary over pairs */
#define NUM vdw
#define NREF vdw *
#define E(a, i) (&(a)[i])
#define R(p) (p)
#define P(x) (x)
#define SCALAR(x) vdw *x = vdw_scalar(cx_)
#define ADD(r, a, b) FN(dw_add)(CX, (r), (a), (b))
#define SUB(r, a, b) FN(dw_sub)(CX, (r), (a), (b))
#define MUL(r, a, b) FN(dw_mul)(CX, (r), (a), (b))
#define DIV(r, a, b) FN(dw_div)(CX, (r), (a), (b))
#define SQRT(r, a) FN(dw_sqrt)(CX, (r), (a))
#define FLOOR(r, a) FN(dw_floor)(CX, (r), (a))
#define COPY(r, a) (mpfr_set(&(r)->h, &(a)->h, MPFR_RNDN), mpfr_set(&(r)->l, &(a)->l, MPFR_RNDN))
#define SETD(r, c) FN(dw_setd)(CX, (r), (c))
#define SETI(r, i) FN(dw_setd)(CX, (r), (double)(i))
#define STORE(r) ((void)0)
#define LOAD_IN(r, x) (vref_load(&cx_->base, &(r)->h, (x)), mpfr_set_zero(&(r)->l, 1))
#define LOAD_PHI(r, x) (vref_load_phi(&cx_->base, &(r)->h, (x)), mpfr_set_zero(&(r)->l, 1))
#define LOAD_LOG(r, x) (vref_load_log(&cx_->base, &(r)->h, (x)), mpfr_set_zero(&(r)->l, 1))
#define EXP(r, a) SETD(r, exp(TOD(a))) /* as lib/arith_dw_native.h */
#define EXP2(r, a) SETD(r, exp2(TOD(a)))
#define COSSIN(c, s, a) (SETD(c, cos(TOD(a))), SETD(s, sin(TOD(a))))
#define ISFIN(a) (mpfr_number_p(&(a)->h) && mpfr_number_p(&(a)->l))
#define LESS(a, b) FN(dw_less)((a), (b))
#define ABSLESS(a, b) FN(dw_absless)(CX, (a), (b))
#define CMPD(a, c) FN(dw_cmpd)((a), (c))
#define TINY (cx_->base.tiny)
#define TOD(a) (mpfr_get_d(&(a)->h, MPFR_RNDN) + mpfr_get_d(&(a)->l, MPFR_RNDN))
#define NUM_ALLOC(n) vdw_alloc(cx_, (n))
#define NUM_FREE(p, n) vdw_free((p), (n))
#define SAVE_ARRAY(f, p, n) vdw_save((f), (p), (n))
#define LOAD_ARRAY(f, p, n) vdw_load((f), (p), (n))
#define ARITH_ENTER (vref_enter(&cx_->base), cx_->ptop = 0)
#define ARITH_LEAVE vref_leave(&cx_->base)

#include "dw_body.h"
#include "recur.h"

typedef struct {
    vdw_ctx cx;
    ST *st;
} vdw_model;

static void dw_ctx_clear(vdw_ctx *cx)
{
    for (int i = 0; i < VDW_POOL; i++) {
        mpfr_clear(&cx->pairs[i].h);
        mpfr_clear(&cx->pairs[i].l);
    }
    vref_ctx_clear(&cx->base);
}

static int op_step(void *self, const vla_input *in)
{
    vdw_model *m = self;
    return FN(vstate_step)(&m->cx, m->st, in);
}
static int op_read(void *self, const double *q)
{
    vdw_model *m = self;
    return FN(vstate_read)(&m->cx, m->st, q);
}
static int op_get(const void *self, vla_quantity q, double *dst)
{
    vdw_model *m = (vdw_model *)self;
    return FN(vstate_get)(&m->cx, m->st, q, dst);
}
static void op_destroy(void *self)
{
    vdw_model *m = self;
    FN(vstate_free)(&m->cx, m->st);
    dw_ctx_clear(&m->cx);
    free(m);
}
static int op_save(const void *self, FILE *f)
{
    const vdw_model *m = self;
    return FN(vstate_save)(m->st, f);
}
static int op_load(void *self, FILE *f)
{
    vdw_model *m = self;
    return FN(vstate_load)(m->st, f);
}
static int op_finish(void *self)
{
    vdw_model *m = self;
    return FN(vstate_finish)(&m->cx, m->st);
}
static int op_start(void *self, const double *S0)
{
    vdw_model *m = self;
    FN(vstate_start)(&m->cx, m->st, S0);
    return VLA_OK;
}
static const vla_model_ops dw_ops = {op_step, op_read,   op_get,   op_destroy,
                                     op_save, op_load, vref_rest, op_finish, op_start};

int vref_dw_model_new(vla_model **out, const vla_config *cfg)
{
    vdw_model *m = calloc(1, sizeof *m);
    if (!m)
        return VLA_ENOMEM;
    vref_ctx_init(&m->cx.base, cfg, VREF_EMULATE, 0);
    for (int i = 0; i < VDW_POOL; i++) {
        mpfr_init2(&m->cx.pairs[i].h, m->cx.base.prec_c);
        mpfr_init2(&m->cx.pairs[i].l, m->cx.base.prec_c);
    }
    int r = FN(vstate_new)(&m->cx, cfg, &m->st);
    if (r) {
        dw_ctx_clear(&m->cx);
        free(m);
        return r;
    }
    return vla_model_wrap(out, cfg, &dw_ops, m, &m->st->cnt);
}
#include "recur_end.h"
#undef DW
#undef DWP
#undef DWCP
