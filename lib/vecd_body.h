/* vecd_body.h: lib's plain binary64 loops over many numbers on VW lanes at once, included by
 * vecd.c once per vector width (8: AVX-512, 4: AVX2) under that width's target pragma, with VD
 * the vector of VW doubles. Each number's operations are the scalar loop's, in its order (no
 * fma under -ffp-contract=off), so every width gives the scalar bits (test vecd_widths_bits).
 * The vectors are the width's own: a 64-byte vector compiled for AVX2 goes through the stack. */
#define VN_(a, b) a##b
#define VN2_(a, b) VN_(a, b)
#define VN(name) VN2_(name, VW)

static inline VD VN(load)(const double *p) /* (any alignment) */
{
    VD v;
    memcpy(&v, p, sizeof v);
    return v;
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
    for (; i + VW <= n; i += VW) {
        acc += VN(load)(x + i) * 0;
    }
    double s = 0;
    for (int l = 0; l < VW; l++)
        s += acc[l];
    for (; i < n; i++)
        s += x[i] * 0;
    return s == s;
}

#undef VN_
#undef VN2_
#undef VN
