/* ref_engine.c: the MPFR models as engine backends (vlastab.h, "engines"): "exact" (every
 * operation at spec.ref_bits, 256 by default) and "emulate" (each policy's formats bit for bit),
 * one vla_model per run on the CPU's threads, like lib's cpu backend. */
#include "vlaref.h"
#include "engine_impl.h"

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

const vla_backend *vref_backend_exact(void)
{
    static const vla_backend b = {"exact", &vla_engine_models_ops, make_exact, 0};
    return &b;
}

const vla_backend *vref_backend_emulate(void)
{
    static const vla_backend b = {"emulate", &vla_engine_models_ops, make_emulate, 0};
    return &b;
}
