/* karith.h: the arithmetic macros of lib/recur.h for the kernel (the vocabulary is documented in
 * lib/arith_native.h), included by kdriver.h at the start of each policy's instantiation and
 * undefined by lib/recur_end.h at its end. The includer (kpolicy.h) sets POL, RO, RS, RI and
 * the operations KADD ... KSQRT; the container, the formats and the suffix follow from POL's row. */
#ifdef __CUDACC__
/* The primitives (recur.h's VLA_PRIM: the loops that do a step's work) are inlined where they are
 * called; every function above them is a call. Everything inlined makes one function of 69,000
 * lines of PTX per policy, on which ptxas spends 63 s (of nvcc's 80) and cicc 11; called, ptxas
 * takes 15 s and cicc 3.5 (kern.cu, f32, AMD EPYC). A call costs the kernel a few instructions
 * per model function and step, where a step is microseconds of dependent arithmetic and barriers
 * (bench/README.md, "GPU: NVIDIA H200"); the arithmetic is the same instructions (strict: --fmad=false,
 * __fadd_rn and friends, which no optimizer fuses), so the bits are too. */
#ifdef VLA_KERN_INLINE /* make KERN_INLINE=1: all inlined, to time the calls on a GPU */
#define VLA_FN static __device__
#else
#define VLA_FN static __device__ __noinline__
#endif
#define VLA_PRIM static __device__
#else
#define VLA_FN static
#endif
#define VLA_RECUR_DEVICE
#define SFX POL
#define NUM VLA_NUM_OF(POL)
#define FMT_C VLA_FMTC_OF(POL)
#define FMT_S VLA_FMTS_OF(POL)
/* the context of every recur.h function is the arena's padding shift (kabi.h) */
#define CXP int cx_
#define CX cx_
#define E(a, i) (a)[(i) + ((i) >> cx_)]
#define VLA_ROWP(M, off) ((M) + (off) + ((off) >> cx_))
/* A barrier before (the threads may still read what the loop overwrites) and after (they read
 * what it wrote); the outer for runs once and exists to place the second barrier. */
#define VLA_PFOR(i, lo, hi)                                                                        \
    for (int i##_pf = (KSYNC(), 1); i##_pf; i##_pf = (KSYNC(), 0))                                 \
        for (int i = (lo) + KTID; i < (hi); i += KNT)
#define NREF NUM *
#define R(p) (*(p))
#define P(x) (&(x))
#define SCALAR(x) NUM x
#define FRAME_BEGIN
#define FRAME_END
#define ADD(r, a, b) ((r) = RO(KADD((a), (b))))
#define SUB(r, a, b) ((r) = RO(KSUB((a), (b))))
#define MUL(r, a, b) ((r) = RO(KMUL((a), (b))))
#define DIV(r, a, b) ((r) = RO(KDIV((a), (b))))
#define SQRT(r, a) ((r) = RO(KSQRT(a)))
/* EXP: on the host (emu.c) lib's convention, the C library's binary64 exp rounded once to the
 * compute format; a GPU's exp is not the C library's, so host.c refuses what would call it there
 * (delta's decay in the chunk form) and this line only keeps the text compiling */
#ifdef __CUDACC__
#define EXP(r, a) ((r) = RO((NUM)exp((double)(a))))
#define EXP2(r, a) ((r) = RO((NUM)exp2((double)(a))))
#define KCOS_(x) RO((NUM)cos(x))
#define KSIN_(x) RO((NUM)sin(x))
#else
#define EXP(r, a) ((r) = (NUM)vla_round_fmt(FMT_C, exp((double)(a))))
#define EXP2(r, a) ((r) = (NUM)vla_round_fmt(FMT_C, exp2((double)(a))))
#define KCOS_(x) ((NUM)vla_round_fmt(FMT_C, cos(x)))
#define KSIN_(x) ((NUM)vla_round_fmt(FMT_C, sin(x)))
#endif
/* COSSIN likewise (mamba3's angles: host.c refuses mamba3 on a GPU) */
#define COSSIN(c, s, a)                                                                            \
    do {                                                                                           \
        const double x_ = (double)(a);                                                             \
        (c) = KCOS_(x_);                                                                           \
        (s) = KSIN_(x_);                                                                           \
    } while (0)
#define FLOOR(r, a) ((r) = (NUM)floor((double)(a)))
#define COPY(r, a) ((r) = (a))
#define SETI(r, i) ((r) = (NUM)(i)) /* small integers: exact in every format */
#define STORE(r) ((r) = RS(r))
#ifdef RI
#define STORE_I(r) ((r) = RI(r))
#endif
#define ROUND_FMT(r, f) ((r) = krnd((f), (r))) /* (the 16-bit state, decays, beta, staged S_0) */
#define ISFIN(a) isfinite(a)
#define LESS(a, b) ((a) < (b))
#define ABSLESS(a, b) (fabs((double)(a)) < (double)(b))
#define CMPD(a, c) (((double)(a) > (c)) - ((double)(a) < (c)))
#define TINY vla_fmt_tiny(FMT_C)
#define TOD(a) ((double)(a))
#define ARITH_ENTER
#define ARITH_LEAVE
