/* arith_dw_native.h: the arithmetic macros of recur.h for the comp way of tracking A, natively:
 * every number is a double word {h, l} of the working format and every operation one of
 * dw_body.h's algorithms (dw_pair.h's vocabulary). Included by dw_inst.h per instantiation; the includer defines POL (a
 * policy of one format, by its suffix in vlalists.h) and RO(x) (rounding of a base operation's
 * result to the working format); the base type, fma, sqrt, the formats and the suffix
 * (<POL>c) follow. */
#include "fmt.h"
#include "model_impl.h"
#include "tables.h"

#define SFX VLA_JOIN(POL, c)
#define FN(name) VLA_CAT(name, SFX)
#define VLA_FN static
#define BASE VLA_NUM_OF(POL)
#define FMT_C VLA_FMTC_OF(POL)
#define FMT_S VLA_FMTS_OF(POL)
#define CXP void *cx_
#define CX cx_
#define DW FN(dwnum)
#define B_SETD(r, c) ((r) = (BASE)vla_round_fmt(FMT_C, (c)))
#include "dw_pair.h"
#define LOAD_IN(r, x) ((r).h = (BASE)vla_round_fmt(FMT_S, (x)), (r).l = 0)
#define LOAD_PHI(r, x)                                                                             \
    ((r).h = (BASE)vla_round_fmt(FMT_S, vla_phi_d(vla_round_fmt(FMT_S, (x)))), (r).l = 0)
#define LOAD_LOG(r, x)                                                                             \
    ((r).h = (BASE)vla_round_fmt(FMT_S, log(vla_round_fmt(FMT_S, (x)))), (r).l = 0)
#define EXP(r, a) SETD(r, exp(TOD(a))) /* binary64 exp of the pair, as a constant is set */
#define EXP2(r, a) SETD(r, exp2(TOD(a)))
#define COSSIN(c, s, a) (SETD(c, cos(TOD(a))), SETD(s, sin(TOD(a))))
#define TINY vla_fmt_min_normal(FMT_C)
#define TOD(a) ((double)(a).h + (double)(a).l)
