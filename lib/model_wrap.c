/* model_wrap.c: what every instantiation of recur.h calls back, in a file of its own so that the
 * front door (model.c), which calls each arithmetic's create, is never called back by them: the
 * wrap of a backend's state into a vla_model, and the check of a loaded state's counters. */
#include "model_impl.h"
#include <stdlib.h>

int vla_model_wrap(vla_model **out, const vla_config *cfg, const vla_model_ops *ops, void *self,
                   const vla_counts *counts)
{
    vla_model *m = calloc(1, sizeof *m);
    if (!m) {
        ops->destroy(self);
        return VLA_ENOMEM;
    }
    m->ops = ops;
    m->self = self;
    m->cfg = *cfg;
    m->counts = counts;
    *out = m;
    return VLA_OK;
}

int vla_counts_check(const vla_config *cfg, long t, const vla_counts *c)
{
    const long max = 1L << 60, n = (long)cfg->dv * cfg->d > 0 ? (long)cfg->dv * cfg->d : 1;
    int ok = t >= 0 && t <= max && c->steps == t && c->reads >= 0 && c->reads <= max &&
             c->guard >= 0 && c->guard <= t && c->clamp >= 0 && c->clamp <= t && c->clip >= 0 &&
             c->clip <= t && c->renorm >= 0 && c->renorm <= t && c->zero_norm >= 0 &&
             c->zero_norm <= 3 * t && c->nudge >= 0 && c->nudge <= t / cfg->period &&
             c->den_inf >= 0 && c->den_inf <= t + c->reads && c->den_inf_t >= 0 &&
             c->den_inf_t <= t && (c->den_inf_t > 0) == (c->den_inf > 0) && c->cache_sat >= 0 &&
             c->cache_sat / n <= t; /* at most n entries a store, t + 1 stores */
    return ok ? VLA_OK : VLA_EFORMAT;
}
