/* dw_body.h: double-word arithmetic (the comp way of tracking A): a number is an unevaluated sum
 * hi + lo of two numbers of the working format, and every operation is built from error-free
 * transformations (TwoSum; TwoProd through fma), giving about twice the working precision.
 * Algorithms of Joldes, Muller and Popescu, "Tight and rigorous error bounds for basic building
 * blocks of double-word arithmetic" (ACM TOMS 2017): AccurateDWPlusDW (Alg. 6, relative error
 * <= 3u^2), DWTimesDW1 (Alg. 10, <= 7u^2; no fma but TwoProd's, so a 16-bit emulation stays a
 * correctly rounded operation), DWTimesFP1 (Alg. 7), DWDivDW2 (Alg. 17, <= 15u^2 + 56u^3).
 *
 * Written once over base operations; the includer defines:
 *   DW     the pair type {BASE h, l}; DWP a pointer to one, DWCP a const one; BSRC a base
 *          operand passed by value (native) or by reference (MPFR)
 *   BH(p), BL(p)    the parts of a pair p, usable as base operands and destinations
 *   BSCALAR(x)      a base temporary; B_ADD B_SUB B_MUL B_DIV (r, a, b), B_SQRT(r, a),
 *                   B_FMA(r, a, b, c) (a*b + c rounded once; used only where it is exact),
 *                   B_FLOOR(r, a) (exact; not with DW_LANES),
 *                   B_NEG(r, a), B_COPY(r, a), B_ZERO(r), B_ISZERO(a), B_ISFIN(a), B_LESS(a, b),
 *                   B_EQ(a, b),
 *                   B_SGN(a) (-1, 0, 1), B_CMPD(a, c) (sign of a - c)
 *   FN, CXP, CX, FRAME_BEGIN, FRAME_END as for recur.h */

/* s + e = a + b exactly (Knuth; no condition on the magnitudes). s must not alias a or b. */
#define DW_TWO_SUM(s, e, a, b, t1, t2)                                                             \
    do {                                                                                           \
        B_ADD(s, a, b);                                                                            \
        B_SUB(t1, s, a);                                                                           \
        B_SUB(t2, s, t1);                                                                          \
        B_SUB(t2, a, t2);                                                                          \
        B_SUB(t1, b, t1);                                                                          \
        B_ADD(e, t2, t1);                                                                          \
    } while (0)

/* s + e = a + b exactly when |a| >= |b| (Dekker). s must not alias a or b. */
#define DW_FAST_TWO_SUM(s, e, a, b, t1)                                                            \
    do {                                                                                           \
        B_ADD(s, a, b);                                                                            \
        B_SUB(t1, s, a);                                                                           \
        B_SUB(e, b, t1);                                                                           \
    } while (0)

/* p + e = a * b exactly (the fma computes the rounding error of the product exactly) */
#define DW_TWO_PROD(p, e, a, b)                                                                    \
    do {                                                                                           \
        B_MUL(p, a, b);                                                                            \
        B_NEG(e, p);                                                                               \
        B_FMA(e, a, b, e);                                                                         \
    } while (0)

/* The algorithms assume no overflow; where the high part overflows, the error-free
 * transformations compute Inf - Inf in the low part. An infinite (or NaN) high part gets a zero
 * low part, so a double word overflows to +-Inf like a number of the format. An includer whose
 * base numbers are vectors of lanes (reference/ref_model_dd.c's lanes) defines DW_LANES and, for
 * the two branches on values below, DW_FINITE itself and B_WHERE_ZERO(z, x) (z = (x_h, 0) in the
 * lanes where x_h is zero); it compares with masks of its own, so the predicates at the end are
 * left out. */
#ifndef DW_FINITE
#define DW_FINITE(z)                                                                               \
    do {                                                                                           \
        if (!B_ISFIN(BH(z)))                                                                       \
            B_ZERO(BL(z));                                                                         \
    } while (0)
#endif

/* z = (xh + xl) + (yh + yl): AccurateDWPlusDW on the four parts (dw_add and dw_sub) */
VLA_FN void FN(dw_add_parts)(CXP, DWP z, BSRC xh, BSRC xl, BSRC yh, BSRC yl)
{
    FRAME_BEGIN;
    BSCALAR(sh);
    BSCALAR(sl);
    BSCALAR(th);
    BSCALAR(tl);
    BSCALAR(t1);
    BSCALAR(t2);
    BSCALAR(vh);
    DW_TWO_SUM(sh, sl, xh, yh, t1, t2);
    DW_TWO_SUM(th, tl, xl, yl, t1, t2);
    B_ADD(sl, sl, th);
    DW_FAST_TWO_SUM(vh, th, sh, sl, t1); /* th: vl */
    B_ADD(tl, tl, th);                   /* w */
    DW_FAST_TWO_SUM(BH(z), BL(z), vh, tl, t1);
    DW_FINITE(z);
    FRAME_END;
}

/* z = x + y */
VLA_FN void FN(dw_add)(CXP, DWP z, DWCP x, DWCP y)
{
    FN(dw_add_parts)(CX, z, BH(x), BL(x), BH(y), BL(y));
}

/* z = x - y: the sum with y's parts negated (exact) */
VLA_FN void FN(dw_sub)(CXP, DWP z, DWCP x, DWCP y)
{
    FRAME_BEGIN;
    BSCALAR(nh);
    BSCALAR(nl);
    B_NEG(nh, BH(y));
    B_NEG(nl, BL(y));
    FN(dw_add_parts)(CX, z, BH(x), BL(x), nh, nl);
    FRAME_END;
}

/* z = x * y */
VLA_FN void FN(dw_mul)(CXP, DWP z, DWCP x, DWCP y)
{
    FRAME_BEGIN;
    BSCALAR(ch);
    BSCALAR(cl1);
    BSCALAR(tl);
    BSCALAR(t2);
    BSCALAR(t1);
    DW_TWO_PROD(ch, cl1, BH(x), BH(y));
    B_MUL(tl, BH(x), BL(y));
    B_MUL(t2, BL(x), BH(y));
    B_ADD(tl, tl, t2);   /* cl2 */
    B_ADD(cl1, cl1, tl); /* cl3 */
    DW_FAST_TWO_SUM(BH(z), BL(z), ch, cl1, t1);
    DW_FINITE(z);
    FRAME_END;
}

/* z = x / y */
VLA_FN void FN(dw_div)(CXP, DWP z, DWCP x, DWCP y)
{
    FRAME_BEGIN;
    BSCALAR(th);
    BSCALAR(ch);
    BSCALAR(cl1);
    BSCALAR(cl2);
    BSCALAR(rh);
    BSCALAR(rl);
    BSCALAR(t1);
    B_DIV(th, BH(x), BH(y));
    /* r = y * th as a double word (DWTimesFP1) */
    DW_TWO_PROD(ch, cl1, BH(y), th);
    B_MUL(cl2, BL(y), th);
    DW_FAST_TWO_SUM(rh, rl, ch, cl2, t1);
    B_ADD(rl, rl, cl1);
    DW_FAST_TWO_SUM(ch, cl2, rh, rl, t1); /* (rh, rl) normalized into (ch, cl2) */
    B_SUB(rh, BH(x), ch);                  /* pi_h */
    B_SUB(rl, BL(x), cl2);                 /* delta_l */
    B_ADD(rh, rh, rl);                     /* delta */
    B_DIV(rh, rh, BH(y));                  /* t_l */
    DW_FAST_TWO_SUM(BH(z), BL(z), th, rh, t1);
    DW_FINITE(z);
    FRAME_END;
}

/* z = sqrt(x): s = sqrt(x_h), one Newton correction (x - s^2) / (2 s) from the exact square */
VLA_FN void FN(dw_sqrt)(CXP, DWP z, DWCP x)
{
    FRAME_BEGIN;
    BSCALAR(s);
    BSCALAR(p);
    BSCALAR(e);
    BSCALAR(t1);
#ifndef DW_LANES
    if (B_ISZERO(BH(x))) {
        B_COPY(BH(z), BH(x));
        B_ZERO(BL(z));
        FRAME_END;
        return;
    }
#endif
    B_SQRT(s, BH(x));
    DW_TWO_PROD(p, e, s, s);
    B_SUB(p, BH(x), p);
    B_SUB(p, p, e);
    B_ADD(p, p, BL(x));
    B_ADD(e, s, s);
    B_DIV(p, p, e);
    DW_FAST_TWO_SUM(BH(z), BL(z), s, p, t1);
    DW_FINITE(z);
#ifdef DW_LANES
    B_WHERE_ZERO(z, x);
#endif
    FRAME_END;
}

#ifndef DW_LANES
/* x < y for normalized pairs (|lo| <= ulp(hi) / 2): by the high parts, then the low ones */
VLA_FN int FN(dw_less)(DWCP x, DWCP y)
{
    return B_LESS(BH(x), BH(y)) || (B_EQ(BH(x), BH(y)) && B_LESS(BL(x), BL(y)));
}

/* sign of x - c for a binary64 constant c: exact whenever c is a number of the working format
 * (then hi != c decides, else the sign of lo), which holds for every threshold recur.h uses */
VLA_FN int FN(dw_cmpd)(DWCP x, double c)
{
    int s = B_CMPD(BH(x), c);
    return s ? s : B_SGN(BL(x));
}

/* |x| < y, that is -y < x < y */
VLA_FN int FN(dw_absless)(CXP, DWCP x, DWCP y)
{
    FRAME_BEGIN;
    BSCALAR(nh);
    BSCALAR(nl);
    B_NEG(nh, BH(y));
    B_NEG(nl, BL(y));
    int r = FN(dw_less)(x, y) &&
            (B_LESS(nh, BH(x)) || (B_EQ(nh, BH(x)) && B_LESS(nl, BL(x))));
    FRAME_END;
    return r;
}

/* z = floor(x), exact: floor(hi) where hi is no integer (a normalized lo, |lo| <= ulp(hi) / 2,
 * cannot carry the sum past an integer, all of which lie a multiple of ulp(hi) away), else
 * hi + floor(lo) as a pair */
VLA_FN void FN(dw_floor)(CXP, DWP z, DWCP x)
{
    FRAME_BEGIN;
    BSCALAR(f);
    BSCALAR(g);
    BSCALAR(t1);
    B_FLOOR(f, BH(x));
    if (B_EQ(f, BH(x))) {
        B_FLOOR(g, BL(x));
        DW_FAST_TWO_SUM(BH(z), BL(z), f, g, t1);
    } else {
        B_COPY(BH(z), f);
        B_ZERO(BL(z));
    }
    FRAME_END;
}

#endif

/* z = c, a binary64 constant, to double-word accuracy: hi = c rounded, lo = the rest rounded
 * (c - hi is exact in binary64) */
VLA_FN void FN(dw_setd)(CXP, DWP z, double c)
{
    B_SETD(BH(z), c);
    B_SETD(BL(z), c - B_TOD(BH(z)));
}

/* the base vocabulary is this file's alone: it ends here */
#undef DW_TWO_SUM
#undef DW_FAST_TWO_SUM
#undef DW_TWO_PROD
#undef DW_FINITE
#undef BH
#undef BL
#undef BSCALAR
#undef BSRC
#undef B_ADD
#undef B_SUB
#undef B_MUL
#undef B_DIV
#undef B_SQRT
#undef B_FMA
#undef B_FLOOR
#undef B_NEG
#undef B_COPY
#undef B_ZERO
#undef B_ISZERO
#undef B_ISFIN
#undef B_LESS
#undef B_EQ
#undef B_SGN
#undef B_CMPD
#undef B_SETD
#undef B_TOD
