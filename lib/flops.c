/* flops.c: the floating-point operations of a step, counted by running recur.h's own text in a
 * counting arithmetic (binary64, each +, -, *, / and sqrt counted once as it is performed), so
 * that bench's roofline needs no second transcription of the recurrence: every model, way of
 * tracking A and branch taken is counted as it runs. */
#include "model_impl.h"
#include "tables.h"

static _Thread_local long flops_;

#define TAG(x) VLA_CAT(x, count)
#define PRIMS 0
#define POL f64
#define RO(x) (flops_++, (x))
#define RS(x) (x)
#include "native_inst.h"
#undef TAG
#undef PRIMS

double vla_step_flops(const vla_config *cfg, const vla_input *in, int n)
{
    vla_config c = *cfg;
    c.prec = VLA_F64; /* the same operations in every policy: only their rounding differs */
    vla_model *m;
    if (n < 1 || !in || vla_config_check(&c) || create_f64_count(&c, &m))
        return NAN;
    long before = flops_;
    for (int i = 0; i < n; i++)
        m->ops->step(m->self, &in[i]);
    long ops = flops_ - before;
    vla_model_free(m);
    return (double)ops / n;
}
