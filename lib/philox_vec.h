/* philox_vec.h: Philox, the uniforms and Box-Muller on VW lanes at once, included by philox.c once
 * per vector width (8: AVX-512, 4: AVX2) under that width's target pragma. Every operation is
 * the scalar code's (philox.c), in the same order, each correctly rounded (no fma: the multiplies
 * and adds are separate instructions under -ffp-contract=off), so every lane gets the scalar
 * bits; tests/test_stream.c compares each width with the scalar code on every stream and on the
 * uniforms' edges. Written with GCC's vector extensions: a comparison gives a lane mask (all
 * ones or zero), frexp is read off the exponent field (u01 >= 2^-54 is normal), the quadrant's
 * branches become selects and the negations sign flips.
 *
 * The includer defines VW, the vector types VD (VW doubles), VU (VW uint64_t), VI (VW int64_t),
 * and SQRTV(x), TRUNCV(x) (round toward zero), MULU32(a, b) (the 64-bit products of the low
 * halves of the lanes), ILO, IHI (the shuffles that interleave two vectors' lanes). */
#define VN_(a, b) a##b
#define VN2_(a, b) VN_(a, b)
#define VN(name) VN2_(name, VW)
#define BC(c) ((VD){} + (c)) /* a constant in every lane (0 + c is c) */

static inline VD VN(sel)(VI m, VD yes, VD no) { return (VD)(((VI)yes & m) | ((VI)no & ~m)); }
static inline VD VN(flip)(VI m, VD x) { return (VD)((VI)x ^ (m & ((VI){} + INT64_MIN))); }

/* r cos(2 pi u2), r sin(2 pi u2), r = sqrt(-2 log u1) for nb <= 4 blocks of lanes: log01 and
 * sincos2pi of philox.c, the blocks' Horner chains step by step side by side (VLA_HORNER): one
 * block's chains alone leave the units waiting on latencies */
__attribute__((always_inline)) static inline void VN(bm)(const VD *u1, const VD *u2, int nb,
                                                         VD *g0, VD *g1)
{
    static const double cl[] = {1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11,
                                1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
    static const double cs_[] = {1.0 / 1307674368000, -1.0 / 6227020800, 1.0 / 39916800,
                                 -1.0 / 362880,       1.0 / 5040,        -1.0 / 120,
                                 1.0 / 6};
    static const double cc[] = {-1.0 / 20922789888000, 1.0 / 87178291200, -1.0 / 479001600,
                                1.0 / 3628800,         -1.0 / 40320,      1.0 / 720,
                                -1.0 / 24,             1.0 / 2};
    VD s[4], z[4], p[4], e[4], r[4], x[4], q[4], ps[4], pc[4];
    /* log01(u1) */
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        VU bits = (VU)u1[b];
        e[b] = (VD)((bits >> 52) | 0x4330000000000000) - (0x1p52 + 1022); /* frexp's exponent */
        VD m = (VD)((bits & 0x000fffffffffffff) | 0x3fe0000000000000);
        VI low = m < 0.70710678118654752440;
        m = VN(sel)(low, m * 2, m);
        e[b] = VN(sel)(low, e[b] - 1, e[b]);
        VD f = m - 1;
        s[b] = f / (2 + f);
        z[b] = s[b] * s[b];
        p[b] = BC(1.0 / 21);
    }
    VLA_HORNER(p, z, cl, 9, nb);
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        VD logm = 2 * s[b] + 2 * s[b] * (z[b] * p[b]);
        VD lg = e[b] * 6.93147180369123816490e-01 + (logm + e[b] * 1.90821492927058770002e-10);
        r[b] = SQRTV(-2 * lg);
        /* sincos2pi(u2) */
        VD a = 4 * u2[b], rr;
        q[b] = TRUNCV(a);
        rr = a - q[b];
        VI up = rr > 0.5;
        rr = VN(sel)(up, rr - 1, rr);
        q[b] = VN(sel)(up, q[b] + 1, q[b]);
        q[b] = VN(sel)(q[b] == 4, BC(0), q[b]); /* q & 3 */
        x[b] = rr * 1.57079632679489661923;
        z[b] = x[b] * x[b];
        ps[b] = BC(-1.0 / 355687428096000);
        pc[b] = BC(1.0 / 6402373705728000);
    }
    VLA_HORNER(ps, z, cs_, 7, nb);
    VLA_HORNER(pc, z, cc, 8, nb);
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        VD sn = x[b] - x[b] * (z[b] * ps[b]);
        VD cs = 1 - z[b] * pc[b];
        /* quadrant 0: (cs, sn), 1: (-sn, cs), 2: (-cs, -sn), 3: (sn, -cs) */
        VI odd = (q[b] == 1) | (q[b] == 3);
        VD c = VN(flip)((q[b] == 1) | (q[b] == 2), VN(sel)(odd, sn, cs));
        VD sv = VN(flip)(q[b] >= 2, VN(sel)(odd, cs, sn));
        g0[b] = r[b] * c;
        g1[b] = r[b] * sv;
    }
}

/* u01 of the words hi, lo (each < 2^32): m = hi 2^21 + (lo >> 11) < 2^53, so m 2^-53 is the exact
 * sum of hi 2^-32 and (lo >> 11) 2^-53, each converted exactly through the 2^52 exponent */
__attribute__((always_inline)) static inline VD VN(u01)(VU hi, VU lo)
{
    VD h = (VD)(hi | 0x4330000000000000) - 0x1p52;
    VD l = (VD)((lo >> 11) | 0x4330000000000000) - 0x1p52;
    VD u = h * 0x1p-32 + l * 0x1p-53;
    return VN(sel)(u == 0, BC(0x1p-54), u);
}

/* Philox4x32-10 of the counters {c0 + VW b + lane, ctr[1], ctr[2], ctr[3]} for blocks b < nb (1, 2
 * or 4: they interleave their chains of dependent products), each word in the low half of a 64-bit
 * lane: w[b][i] is word i of every lane's block, as vla_philox4x32_10 */
__attribute__((always_inline)) static inline void VN(philox)(uint32_t c0, const uint32_t ctr[4],
                                                             const uint32_t key[2], int nb,
                                                             VU w[][4])
{
    for (int b = 0; b < nb; b++) {
        w[b][0] = (VU){} + c0 + (uint64_t)(VW * b);
        for (int l = 0; l < VW; l++)
            w[b][0][l] += (uint64_t)l;
        w[b][1] = (VU){} + ctr[1], w[b][2] = (VU){} + ctr[2], w[b][3] = (VU){} + ctr[3];
    }
    uint32_t k0 = key[0], k1 = key[1];
#pragma GCC unroll 10
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
#pragma GCC unroll 4
        for (int b = 0; b < nb; b++) {
            VU *x = w[b];
            VU p0 = MULU32((VU){} + 0xD2511F53u, x[0]), p1 = MULU32((VU){} + 0xCD9E8D57u, x[2]);
            x[0] = (p1 >> 32) ^ x[1] ^ k0;
            x[1] = p1 & 0xffffffffu;
            x[2] = (p0 >> 32) ^ x[3] ^ k1;
            x[3] = p0 & 0xffffffffu;
        }
    }
}

/* vla_box_muller's first n / VW * VW pairs; returns how many it did */
static int VN(box_muller)(const double *u1, const double *u2, int n, double *g0, double *g1)
{
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VD a, b, c, d;
        memcpy(&a, u1 + i, sizeof a);
        memcpy(&b, u2 + i, sizeof b);
        VN(bm)(&a, &b, 1, &c, &d);
        memcpy(g0 + i, &c, sizeof c);
        memcpy(g1 + i, &d, sizeof d);
    }
    return i;
}

/* scale times the gaussians of the nb VW pairs from pair j on, interleaved (g0 of a pair, then
 * g1) */
__attribute__((always_inline)) static inline void VN(pairs)(int j, const uint32_t ctr[4],
                                                            const uint32_t key[2], double scale,
                                                            int nb, VD out[])
{
    VU w[4][4];
    VN(philox)((uint32_t)j, ctr, key, nb, w);
    VD u1[4], u2[4], g0[4], g1[4];
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        u1[b] = VN(u01)(w[b][0], w[b][1]);
        u2[b] = VN(u01)(w[b][2], w[b][3]);
    }
    VN(bm)(u1, u2, nb, g0, g1);
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
        g0[b] = scale * g0[b];
        g1[b] = scale * g1[b];
        out[2 * b] = __builtin_shuffle(g0[b], g1[b], ILO);
        out[2 * b + 1] = __builtin_shuffle(g0[b], g1[b], IHI);
    }
}

/* vla_gauss_fill's pairs in blocks of VW, four blocks at a time while there are four, then two,
 * then one (their chains of dependent operations overlap: one alone leaves the units waiting on
 * latencies; with Philox's rounds unrolled, 32 normals in AVX2 on an AMD EPYC Zen 3: 11.3 ->
 * 8.1 ns a normal), the last block of an odd n through a buffer; returns how many pairs it did,
 * a multiple of VW */
static int VN(gauss_fill)(double *dst, int n, const uint32_t ctr[4], const uint32_t key[2],
                          double scale)
{
    int np = (n + 1) / 2, j = 0;
#pragma GCC unroll 3
    for (int nb = 4; nb >= 1; nb /= 2) /* (unrolled: pairs sees a constant nb) */
        for (; j + nb * VW <= np; j += nb * VW) {
            VD out[8];
            VN(pairs)(j, ctr, key, scale, nb, out);
            int m = 2 * j + 2 * nb * VW <= n ? 2 * nb * VW : n - 2 * j;
            memcpy(dst + 2 * j, out, m * sizeof(double));
        }
    return j;
}

#undef VN
#undef VN2_
#undef VN_
#undef BC
