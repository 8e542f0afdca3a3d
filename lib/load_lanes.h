/* load_lanes.h: lib's input-side loops over many numbers on VW lanes at once, included by
 * load.c once per vector width (8: AVX-512, 4: AVX2) under that width's target pragma: the
 * rounding, exp and phi of load.c (its head comment gives the method and its proof), and the
 * plain binary64 loops of the streams and the input check (W k, divisions, finiteness). Each is
 * written with GCC's vector extensions only, in vectors of the width's own size (a 64-byte
 * vector compiled for AVX2 goes through the stack): a comparison gives a lane mask, all ones or
 * zero; __builtin_convertvector converts lane by lane, binary64 to binary32 rounding to nearest
 * as a cast does. Every number's operations are the scalar code's, in its order (no fma under
 * -ffp-contract=off), so every width gives the scalar bits. */
#define VN_(a, b) a##b
#define VN2_(a, b) VN_(a, b)
#define VN(name) VN2_(name, VW)

typedef double VN(vd_) __attribute__((vector_size(8 * VW)));   /* VW doubles */
typedef int64_t VN(vi_) __attribute__((vector_size(8 * VW)));  /* their bits, signed */
typedef uint64_t VN(vu_) __attribute__((vector_size(8 * VW))); /* wrapping, defined shifts */
typedef float VN(vf_) __attribute__((vector_size(4 * VW)));    /* VW floats */
typedef int32_t VN(vi32_) __attribute__((vector_size(4 * VW)));
#define VD VN(vd_)
#define VI VN(vi_)
#define VU VN(vu_)
#define VF VN(vf_)
#define VI32 VN(vi32_)

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

/* y[b] = exp(v[b]) for the nb <= 4 vectors v[0..nb), each lane's -700 <= v <= 0, as load.c says
 * (other lanes: anything; the caller does not take them), the nb Horner chains step by step side
 * by side (VLA_HORNER): one chain of 14 dependent steps leaves the units waiting on latencies. */
__attribute__((always_inline)) static inline void VN(exp)(const VD *v, VD *y, int nb)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    static const double c[] = {1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880,
                               1.0 / 40320,     1.0 / 5040,     1.0 / 720,     1.0 / 120,
                               1.0 / 24,        1.0 / 6,        0.5,           1,
                               1};
    VD t[4], r[4], p[4];
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        t[b] = v[b] * 1.44269504088896338700 + 0x1.8p52; /* n + 1.5 2^52: n in the low bits */
        VD nd = t[b] - 0x1.8p52;
        r[b] = (v[b] - nd * ln2_hi) - nd * ln2_lo;
        p[b] = (VD){} + 1.0 / 6227020800;
    }
    VLA_HORNER(p, r, c, 13, nb);
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        VU scale = ((VU)t[b] - (VU)((VD){} + 0x1.8p52) + 1023) << 52; /* 2^n (else: any bits) */
        y[b] = p[b] * (VD)scale;
    }
}

/* the first n / VW * VW numbers of vla_load_exp_lanes, vla_load_round (and _d) and
 * vla_load_phi; each returns how many it did */
static int VN(exp_lanes)(const double *v, double *y, int n)
{
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VD x = VN(load)(v + i), e;
        VN(exp)(&x, &e, 1);
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
            VN(exp)(v, y, nb);
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                ok[b] = VN(phi)(f, g, dst + i + b * VW, v[b], y[b]);
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                VN(phi_rest)(f, dst + i + b * VW, x + i + b * VW, ok[b]);
        }
    return i;
}

/* vla_matvec_cols: four vectors of rows' sums in registers, each lane's sum in the order
 * j = 0, 1, ...; returns the rows done (a multiple of VW) */
static int VN(matvec_cols)(const double *M, const double *x, int n, long m, double *y)
{
    int i = 0;
    for (; i + 4 * VW <= n; i += 4 * VW) {
        VD a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (long j = 0; j < m; j++) {
            const double *c = M + j * n + i;
            a0 += VN(load)(c) * x[j];
            a1 += VN(load)(c + VW) * x[j];
            a2 += VN(load)(c + 2 * VW) * x[j];
            a3 += VN(load)(c + 3 * VW) * x[j];
        }
        memcpy(y + i, &a0, sizeof a0);
        memcpy(y + i + VW, &a1, sizeof a1);
        memcpy(y + i + 2 * VW, &a2, sizeof a2);
        memcpy(y + i + 3 * VW, &a3, sizeof a3);
    }
    for (; i + VW <= n; i += VW) {
        VD a = {0};
        for (long j = 0; j < m; j++)
            a += VN(load)(M + j * n + i) * x[j];
        memcpy(y + i, &a, sizeof a);
    }
    return i;
}

/* vla_div_all's first n / VW * VW numbers; returns how many */
static int VN(div_all)(double *x, int n, double c)
{
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VD v = VN(load)(x + i) / c;
        memcpy(x + i, &v, sizeof v);
    }
    return i;
}

/* vla_finite_all: x * 0 is NaN exactly where x is not finite, and a sum with a NaN stays NaN */
static int VN(finite_all)(const double *x, int n)
{
    VD acc = {0};
    int i = 0;
    for (; i + VW <= n; i += VW)
        acc += VN(load)(x + i) * 0;
    double s = 0;
    for (int l = 0; l < VW; l++)
        s += acc[l];
    for (; i < n; i++)
        s += x[i] * 0;
    return s == s;
}

#undef VD
#undef VI
#undef VU
#undef VF
#undef VI32
#undef VN_
#undef VN2_
#undef VN
