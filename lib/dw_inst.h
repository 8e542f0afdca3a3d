/* dw_inst.h: one double-word instantiation of recur.h (model_comp.c includes it per policy of
 * one format with POL and RO set, arith_dw_native.h): the pair type, its arithmetic, the model. */
#include "arith_dw_native.h"
typedef struct {
    BASE h, l;
} FN(dwnum);
#include "dw_body.h"
#include "recur.h"

static int FN(op_step)(void *self, const vla_input *in) { return FN(vstate_step)(NULL, self, in); }
static int FN(op_read)(void *self, const double *q) { return FN(vstate_read)(NULL, self, q); }
static int FN(op_get)(const void *self, vla_quantity q, double *dst)
{
    return FN(vstate_get)(NULL, (ST *)self, q, dst);
}
static void FN(op_destroy)(void *self) { FN(vstate_free)(NULL, self); }
static int FN(op_save)(const void *self, FILE *f) { return FN(vstate_save)(self, f); }
static int FN(op_load)(void *self, FILE *f) { return FN(vstate_load)(self, f); }
static int FN(op_finish)(void *self) { return FN(vstate_finish)(NULL, self); }
static int FN(op_start)(void *self, const double *S0)
{
    FN(vstate_start)(NULL, self, S0);
    return VLA_OK;
}
static const vla_model_ops FN(ops) = {FN(op_step),    FN(op_read), FN(op_get),
                                      FN(op_destroy), FN(op_save), FN(op_load),
                                      NULL,           FN(op_finish), FN(op_start)};

static int FN(create)(const vla_config *cfg, vla_model **out)
{
    ST *s;
    int r = FN(vstate_new)(NULL, cfg, &s);
    return r ? r : vla_model_wrap(out, cfg, &FN(ops), s, &s->cnt);
}

#include "recur_end.h"
#undef BASE
#undef DW
#undef DWP
#undef DWCP
