/* ref_ctx.c: MPFR's context of one emulated or exact run (arith_mpfr.h's vref_ctx): the
 * precisions and exponent ranges of a policy's formats, and the temporaries; apart from the
 * models that use it (ref_model.c, ref_model_dw.c), so that neither calls the other back. */
#include "arith_mpfr.h"
#include "vlaref.h"

/* MPFR's convention is x = m 2^e with m in [1/2, 1): the smallest subnormal 2^(emin - p + 1)
 * of a format is 2^-1 2^(emin - p + 2), its largest number below 2^(emax + 1) */
void vref_fmt_params(vla_fmt f, long *prec, long *emin, long *emax)
{
    static const long rows[VLA_NFMT][3] = {
#define VLA_X_(ID, tok, p, emin, emax, T) {p, (emin) - (p) + 2, (emax) + 1},
        VLA_FORMATS(VLA_X_)
#undef VLA_X_
    };
    *prec = rows[f][0];
    *emin = rows[f][1];
    *emax = rows[f][2];
}

void vref_ctx_clear(vref_ctx *cx)
{
    mpfr_clear(cx->tmp_s);
    mpfr_clear(cx->tmp_i);
    mpfr_clear(cx->tmp_h);
    for (int i = 0; i < VREF_POOL; i++)
        mpfr_clear(cx->pool[i]);
}

void vref_ctx_init(vref_ctx *cx, const vla_config *cfg, int kind, long bits)
{
    long p, lo, hi;
    vla_fmt fs = vla_prec_storage(cfg->prec), fc = vla_prec_compute(cfg->prec),
            fi = vla_prec_io(cfg->prec);
    cx->exact = kind == VREF_EXACT;
    cx->lo = 0;
    cx->lo_off = 0;
    vref_fmt_params(fs, &p, &lo, &hi);
    cx->prec_s = p;
    cx->emin_s = lo;
    cx->emax_s = hi;
    vref_fmt_params(fi, &p, &lo, &hi);
    cx->prec_i = p;
    cx->emin_i = lo;
    cx->emax_i = hi;
    cx->io_own = !cx->exact && fi != fs;
    if (cx->exact) {
        cx->prec_c = bits;
        cx->emin_c = mpfr_get_emin();
        cx->emax_c = mpfr_get_emax();
        cx->store_rounds = 0;
    } else {
        vref_fmt_params(fc, &p, &lo, &hi);
        cx->prec_c = p;
        cx->emin_c = lo;
        cx->emax_c = hi;
        cx->store_rounds = fs != fc;
    }
    cx->tiny = vla_fmt_min_normal(fc);
    cx->sr.seed = cfg->sr_seed;
    if (!cx->exact && cfg->track == VLA_TRACK_SR) { /* the bits binary32 holds below storage's */
        cx->sr_bits = vla_fmt_precision(fc) - vla_fmt_precision(fs);
        cx->sr_pmin = cx->prec_s;
        cx->sr_emin = ilogb(vla_fmt_min_normal(fs));
        cx->sr_max = vla_fmt_max(fs);
    }
    mpfr_init2(cx->tmp_s, cx->prec_s);
    mpfr_init2(cx->tmp_i, cx->prec_i);
    mpfr_init2(cx->tmp_h, 11);
    for (int i = 0; i < VREF_POOL; i++)
        mpfr_init2(cx->pool[i], cx->prec_c);
    cx->top = 0;
}
