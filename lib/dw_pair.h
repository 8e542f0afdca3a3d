/* dw_pair.h: a double word as a struct {h, l} of a native floating type: dw_body.h's base
 * operations on the parts and recur.h's vocabulary over the pairs, written once for
 * lib/arith_dw_native.h (each format's comp model) and reference/ref_model_dd.c (the
 * double-double exact reference). The includer defines BASE (the parts' type), DW (the pair
 * type), RO(x) (a base operation's result rounded to the working format; the identity where the
 * parts' own operations are the working format's), B_SETD(r, c) (a binary64 constant into a
 * part), FN and CX; and, before recur.h, the loads (LOAD_IN, LOAD_PHI, LOAD_LOG), EXP, EXP2,
 * COSSIN, TINY and TOD, which differ. No storage rounding: a pair is kept whole (STORE does
 * nothing). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FRAME_BEGIN
#define FRAME_END
/* the base operations of dw_body.h */
#define DWP DW *
#define DWCP const DW *
#define BH(p) ((p)->h)
#define BL(p) ((p)->l)
#define BSCALAR(x) BASE x
#define BSRC BASE
#define B_ADD(r, a, b) ((r) = RO((a) + (b)))
#define B_SUB(r, a, b) ((r) = RO((a) - (b)))
#define B_MUL(r, a, b) ((r) = RO((a) * (b)))
#define B_DIV(r, a, b) ((r) = RO((a) / (b)))
#define B_SQRT(r, a) ((r) = RO(_Generic((BASE)0, float: sqrtf, double: sqrt)(a)))
#define B_FMA(r, a, b, c) ((r) = RO(_Generic((BASE)0, float: fmaf, double: fma)((a), (b), (c))))
#define B_FLOOR(r, a) ((r) = (BASE)floor((double)(a)))
#define B_NEG(r, a) ((r) = -(a))
#define B_COPY(r, a) ((r) = (a))
#define B_ZERO(r) ((r) = 0)
#define B_ISZERO(a) ((a) == 0)
#define B_ISFIN(a) isfinite(a)
#define B_LESS(a, b) ((a) < (b))
#define B_EQ(a, b) ((a) == (b))
#define B_SGN(a) (((a) > 0) - ((a) < 0))
#define B_CMPD(a, c) (((double)(a) > (c)) - ((double)(a) < (c)))
#define B_TOD(a) ((double)(a))

/* recur.h's vocabulary over pairs: every operation one of dw_body.h's */
#define NUM DW
#define NREF DW *
#define E(a, i) (a)[i]
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) DW x
#define ADD(r, a, b) FN(dw_add)(CX, &(r), &(a), &(b))
#define SUB(r, a, b) FN(dw_sub)(CX, &(r), &(a), &(b))
#define MUL(r, a, b) FN(dw_mul)(CX, &(r), &(a), &(b))
#define DIV(r, a, b) FN(dw_div)(CX, &(r), &(a), &(b))
#define SQRT(r, a) FN(dw_sqrt)(CX, &(r), &(a))
#define FLOOR(r, a) FN(dw_floor)(CX, &(r), &(a))
#define COPY(r, a) ((r) = (a))
#define SETD(r, c) FN(dw_setd)(CX, &(r), (c))
#define SETI(r, i) FN(dw_setd)(CX, &(r), (double)(i))
#define STORE(r) ((void)0)
#define ISFIN(a) (isfinite((a).h) && isfinite((a).l))
#define LESS(a, b) FN(dw_less)(&(a), &(b))
#define ABSLESS(a, b) FN(dw_absless)(CX, &(a), &(b))
#define CMPD(a, c) FN(dw_cmpd)(&(a), (c))
#define NUM_ALLOC(n) ((NUM *)calloc((n), sizeof(NUM)))
#define NUM_FREE(p, n) ((void)(n), free(p))
#define SAVE_ARRAY(f, p, n) (fwrite((p), sizeof(NUM), (n), (f)) != (n))
#define LOAD_ARRAY(f, p, n) (fread((p), sizeof(NUM), (n), (f)) != (n))
#define ARITH_ENTER
#define ARITH_LEAVE
