/* load_lanes.h: load.c's rounding, exp and phi on VW lanes at once, included by load.c once per
 * vector width (8: AVX-512, 4: AVX2) under that width's target pragma, written with GCC's vector
 * extensions only (a comparison gives a lane mask, all ones or zero; __builtin_convertvector
 * converts lane by lane, binary64 to binary32 rounding to nearest as a cast does). The includer
 * defines VW and the vector types VD (VW doubles), VI (VW int64_t), VU (VW uint64_t), VF (VW
 * floats) and VI32 (VW int32_t); load.c's head comment gives the method and its proof. */
#define VN_(a, b) a##b
#define VN2_(a, b) VN_(a, b)
#define VN(name) VN2_(name, VW)

static inline VD VN(load)(const double *p) /* (any alignment) */
{
    VD v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline VI VN(sel)(VI m, VI yes, VI no) { return (yes & m) | (no & ~m); }

/* vla_round_in(f, x) in each lane, as binary32 (exact: the grid is binary32's or coarser) */
static inline VF VN(round)(vla_fmt f, const grid *g, VD x)
{
    if (f == VLA_FMT_F32)
        return __builtin_convertvector(x, VF);
    const VI sign = (VI){} + INT64_MIN, mag = ~sign;
    VI u = (VI)x, be = (VI)((VU)u >> 52 & 0x7ff);
    VI e = VN(sel)(be == 0, (VI){} - 1022, be - 1023); /* |x| in [2^e, 2^(e+1)) */
    e = VN(sel)(e < g->emin, (VI){} + g->emin, VN(sel)(e > 512, (VI){} + 512, e)); /* Inf anyway */
    VD c = (VD)((VU)(e - (g->p - 1) + 52 + 1023) << 52), a = (VD)(u & mag);
    VD r = (a + c) - c;
    r = (VD)VN(sel)(r > g->max, (VI)((VD){} + INFINITY), (VI)r);
    return __builtin_convertvector((VD)((VI)r | (u & sign)), VF);
}

/* exp(v) for -700 <= v <= 0 as load.c says (other lanes: anything; the caller does not take
 * them) */
static inline VD VN(exp)(VD v)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    VD t = v * 1.44269504088896338700 + 0x1.8p52; /* n + 1.5 2^52: n in the low bits */
    VD nd = t - 0x1.8p52;
    VD r = (v - nd * ln2_hi) - nd * ln2_lo;
    VD p = (VD){} + 1.0 / 6227020800;
    p = 1.0 / 479001600 + r * p;
    p = 1.0 / 39916800 + r * p;
    p = 1.0 / 3628800 + r * p;
    p = 1.0 / 362880 + r * p;
    p = 1.0 / 40320 + r * p;
    p = 1.0 / 5040 + r * p;
    p = 1.0 / 720 + r * p;
    p = 1.0 / 120 + r * p;
    p = 1.0 / 24 + r * p;
    p = 1.0 / 6 + r * p;
    p = 0.5 + r * p;
    p = 1 + r * p;
    p = 1 + r * p;
    VU scale = ((VU)t - (VU)((VD){} + 0x1.8p52) + 1023) << 52; /* 2^n (elsewhere: any bits) */
    return p * (VD)scale;
}

/* the first n / VW * VW numbers of vla_load_exp_lanes, vla_load_round (and _d) and
 * vla_load_phi; each returns how many it did */
static int VN(exp_lanes)(const double *v, double *y, int n)
{
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VD e = VN(exp)(VN(load)(v + i));
        memcpy(y + i, &e, sizeof e);
    }
    return i;
}

static int VN(round_lanes)(vla_fmt f, const grid *g, float *dst, const double *x, int n)
{
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VF r = VN(round)(f, g, VN(load)(x + i));
        memcpy(dst + i, &r, sizeof r);
    }
    return i;
}

static int VN(round_lanes_d)(vla_fmt f, const grid *g, double *dst, const double *x, int n)
{
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VD r = __builtin_convertvector(VN(round)(f, g, VN(load)(x + i)), VD);
        memcpy(dst + i, &r, sizeof r);
    }
    return i;
}

/* phi of VW rounded inputs v whose exp is y into dst, each lane's result taken where ok, else
 * the scalar code's */
static inline VI32 VN(phi)(vla_fmt f, const grid *g, float *dst, VD v, VD y)
{
    VF lo = VN(round)(f, g, y * (1 - 0x1p-45)), hi = VN(round)(f, g, y * (1 + 0x1p-45));
    VF up = VN(round)(f, g, v + 1);
    VI32 pos = __builtin_convertvector(v > 0, VI32);
    VF r = (VF)(((VI32)up & pos) | ((VI32)lo & ~pos));
    memcpy(dst, &r, sizeof r);
    return pos | (__builtin_convertvector(v >= -700, VI32) & (lo == hi)); /* ok */
}

static inline void VN(phi_rest)(vla_fmt f, float *dst, const double *x, VI32 ok)
{
    for (int l = 0; l < VW; l++)
        if (!ok[l])
            phi_scalar(f, dst + l, x + l, 1);
}

/* four blocks at a time while there are four, then two, then one: their exp chains overlap */
static int VN(phi_lanes)(vla_fmt f, const grid *g, float *dst, const double *x, int n)
{
    int i = 0;
#pragma GCC unroll 3
    for (int nb = 4; nb >= 1; nb /= 2) /* (unrolled: a constant nb) */
        for (; i + nb * VW <= n; i += nb * VW) {
            VD v[4], y[4];
            VI32 ok[4];
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++) /* the rounded input, exactly */
                v[b] = __builtin_convertvector(VN(round)(f, g, VN(load)(x + i + b * VW)), VD);
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                y[b] = VN(exp)(v[b]);
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                ok[b] = VN(phi)(f, g, dst + i + b * VW, v[b], y[b]);
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                VN(phi_rest)(f, dst + i + b * VW, x + i + b * VW, ok[b]);
        }
    return i;
}

#undef VN_
#undef VN2_
#undef VN
