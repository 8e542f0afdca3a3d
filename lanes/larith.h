/* larith.h: the arithmetic macros of lib/recur.h (the vocabulary is documented in
 * lib/arith_native.h) for the CPU's vector lanes: every number a vector of LW runs, every write
 * through the mask of the active lanes. Included by klanes.h at the start of each policy's
 * instantiation and undefined by lib/recur_end.h at its end. The includer (klanes.h, through
 * lanes.c's lib/policy.h loop) sets NUM (the vector type), POL (the policy's row of vlalists.h),
 * RO, RS and RI, and for a group of them the
 * vector operations KBL, LCMP, LSET, LSQRT, LABS, the mask setter LSETM and LTAG (the names of
 * the group's instantiations). */
#define VLA_RECUR_DEVICE
#define VLA_FN static
#define SFX LTAG(POL)
#define FMT_C VLA_FMTC_OF(POL)
#define FMT_S VLA_FMTS_OF(POL)
/* the scalar container of a lane, the lanes per vector, the mask of them all */
#define LT __typeof__(((NUM){0})[0])
#define LW ((int)(sizeof(NUM) / sizeof(LT)))
#define LALL ((1u << LW) - 1)
#define CXP lctx *cx_
#define CX cx_
#define E(a, i) (a)[i]
#define NREF NUM *
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) NUM x = {0}
#define FRAME_BEGIN
#define FRAME_END
/* every write goes through KBL(old, new): new in the active lanes, old in the others */
#define ADD(r, a, b) ((r) = KBL((r), RO((a) + (b))))
#define SUB(r, a, b) ((r) = KBL((r), RO((a) - (b))))
#define MUL(r, a, b) ((r) = KBL((r), RO((a) * (b))))
#define DIV(r, a, b) ((r) = KBL((r), RO((a) / (b))))
#define SQRT(r, a) ((r) = KBL((r), RO(LSQRT(a))))
/* exp (exp2) lane by lane, lib's convention (binary64 exp rounded once to the compute format) */
#define LEXP_(r, a, f)                                                                             \
    ((r) = KBL((r), ({                                                                             \
         NUM x_ = (a);                                                                             \
         for (int l_ = 0; l_ < LW; l_++)                                                           \
             x_[l_] = (LT)vla_round_fmt(FMT_C, f((double)x_[l_]));                                 \
         x_;                                                                                       \
     })))
#define EXP(r, a) LEXP_(r, a, exp)
#define EXP2(r, a) LEXP_(r, a, exp2)
#define COSSIN(c, s, a)                                                                            \
    do {                                                                                           \
        const NUM a_ = (a);                                                                        \
        LEXP_(c, a_, cos);                                                                         \
        LEXP_(s, a_, sin);                                                                         \
    } while (0)
#define FLOOR(r, a) LEXP_(r, a, floor) /* exact: the rounding does nothing */
#define COPY(r, a) ((r) = KBL((r), (a)))
#define SETI(r, i) ((r) = KBL((r), LSET(i))) /* small integers: exact in every format */
#define STORE(r) ((r) = KBL((r), RS(r)))
/* the 16-bit roundings (cache=f16|bf16, decay_bf16, beta_bf16, stage) into format f, lane by lane through
 * binary64 (lib's convention) */
#define ROUND_FMT(r, f)                                                                            \
    ((r) = KBL((r), ({                                                                             \
         NUM x_ = (r);                                                                             \
         for (int l_ = 0; l_ < LW; l_++)                                                           \
             x_[l_] = (LT)vla_round_fmt((f), (double)x_[l_]);                                      \
         x_;                                                                                       \
     })))
#ifdef RI
#define STORE_I(r) ((r) = KBL((r), RI(r)))
#endif
#define ISFIN(a) LCMP(LABS(a), LSET(INFINITY), _CMP_LT_OQ)
#define LESS(a, b) LCMP((a), (b), _CMP_LT_OQ)
#define ABSLESS(a, b) LCMP(LABS(a), (b), _CMP_LT_OQ)
#define LESSD(a, c) LCMP((a), LSET(c), _CMP_LT_OQ)
#define TINY vla_fmt_tiny(FMT_C)
#define ARITH_ENTER
#define ARITH_LEAVE
#define LPRED unsigned
#define PNOT(a) (~(a))
#define POR(a, b) ((a) | (b))
#define PFALSE 0u
#define COUNT(x) lanes_count(cx_, &(x), 1)
#define COUNT_ADD(x, n) lanes_count(cx_, &(x), (n))
#define TEMP(t) ((t) = LSET(0))
#define LANE_IF(c)                                                                                 \
    {                                                                                              \
        const unsigned lsv_ = cx_->m, lc_ = (c);                                                   \
        LSETM(cx_, lsv_ & lc_);                                                                    \
        if (cx_->m)
#define LANE_ELSE                                                                                  \
    LSETM(cx_, lsv_ & ~lc_);                                                                       \
    if (cx_->m)
#define LANE_END                                                                                   \
    LSETM(cx_, lsv_);                                                                              \
    }
