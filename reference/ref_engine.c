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

/* An MPFR number of p bits: its struct (32 bytes) and limbs in memory, at most 1 + 8 bytes of
 * precision, 1 + 8 of exponent and ceil(p / 8) of significand exported (mpfr_fpif_export); a
 * pair of them for comp (double-word) */
static long mpfr_bytes(long bits, const vla_engine_spec *spec)
{
    return (48 + (bits + 7) / 8) * (spec->cfg.track == VLA_TRACK_COMP ? 2 : 1);
}

static long exact_bytes(const vla_engine_spec *spec)
{
    return mpfr_bytes(spec->ref_bits ? spec->ref_bits : VREF_DEFAULT_BITS, spec);
}

static long emulate_bytes(const vla_engine_spec *spec) { return mpfr_bytes(64, spec); }

const vla_backend *vref_backend_exact(void)
{
    static const vla_backend b = {"exact", &vla_engine_models_ops, make_exact, 0, exact_bytes};
    return &b;
}

const vla_backend *vref_backend_emulate(void)
{
    static const vla_backend b = {"emulate", &vla_engine_models_ops, make_emulate, 0,
                                  emulate_bytes};
    return &b;
}
