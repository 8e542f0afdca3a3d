/* lanes.c: the kernel on the CPU's vector lanes (target VLA_CUDA_LANES of vlacuda.h): 16 runs
 * (binary64: 8) advance together in the lanes of AVX-512 registers (without AVX-512, AVX2: 8
 * runs, binary64 4), each lane doing its own run's strict operations in its own order, so a lane
 * ends with the very bits the CPU model computes for that run (tests/test_cuda.c checks it bit
 * for bit, as for the GPU). This is the fast CPU
 * path for many runs: a strict dot product is a chain of dependent additions that no
 * reordering may shorten, and one run's recurrence is mostly such chains, but LW independent
 * runs fill a vector unit's lanes and its pipelines. Groups of runs are spread over threads
 * (OpenMP). Built with GCC on x86-64; elsewhere the probe says why not.
 *
 * The arithmetic macros of recur.h (lib/arith_native.h lists them) are vector operations here,
 * written through the mask of the lanes that are active: recur.h's LANE_IF narrows the mask to
 * the lanes whose condition holds, so a branch taken by some runs and not others is executed
 * with the writes of the others masked off, as a GPU does with divergent threads. */
#include "kdev.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(VLA_NO_SIMD)
#include "fmt.h"        /* each format's scalar rounding, which its lanes' may take lane by lane */
#include "model_impl.h" /* types recur.h's state holds */
#include <immintrin.h>

enum { LCOUNTS = sizeof(vla_counts) / sizeof(long) };
typedef char lanes_counts_are_longs[sizeof(vla_counts) % sizeof(long) == 0 ? 1 : -1];

/* the context of every recur.h function: the active lanes and the per-lane event counts */
typedef long long lmv __attribute__((vector_size(32)));
typedef struct {
    unsigned m;            /* lanes active now */
    lmv mv32, mv64;        /* AVX2: m as a vector mask of 32-bit and of 64-bit lanes */
    long *base;            /* the state's vla_counts, as longs: what COUNT's pointer is in */
    long cnt[LCOUNTS][16]; /* events per counter and lane, this launch */
    void *prev;            /* the moved tap: A before the step (d x d vectors), or NULL */
} lctx;

/* Vector types without __m512's may_alias, so that the compiler may keep the mask in a register
 * across the stores of the numbers. */
typedef float lv16 __attribute__((vector_size(64)));
typedef double lv8 __attribute__((vector_size(64)));
typedef float lv8f __attribute__((vector_size(32)));
typedef double lv4d __attribute__((vector_size(32)));
/* the masks of their shuffles (klanes.h's LILO, LIHI): lane indices of the same sizes */
typedef int32_t lvi16 __attribute__((vector_size(64)));
typedef int64_t lvl8 __attribute__((vector_size(64)));
typedef int32_t lvi8 __attribute__((vector_size(32)));
typedef int64_t lvl4 __attribute__((vector_size(32)));

static inline void lanes_count(lctx *c, const long *x, long n)
{
    long i = x - c->base;
    for (unsigned m = c->m; m; m &= m - 1)
        c->cnt[i][__builtin_ctz(m)] += n;
}

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
/* each format's rounding in the AVX-512 lanes, LRND_<ID>, and its container in both instruction
 * sets, LDBL_<ID> (1: binary64 vectors, 0: binary32), from its file lib/formats/<tok>.h; lib/
 * policy.h derives each policy's RO, RS and RI from them. Each group of instantiations below
 * takes the rows of VLA_PRECS whose compute format has the group's container, LNUM. */
#define VLA_FMT_PART VLA_PART_AVX512
#include "formats/each.h"
/* for tests/test_cuda.c: x rounded to binary16 (bf: bfloat16) by the AVX-512 lanes' rounding */
static void round16_512(int bf, const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        lv16 v = (lv16)_mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, (__m512)(bf ? lrnd_bf16(v) : lrnd_f16(v)));
    }
    for (; i < n; i++) { /* the tail through a padded vector */
        float buf[16] = {0};
        buf[0] = x[i];
        lv16 v = (lv16)_mm512_loadu_ps(buf);
        _mm512_storeu_ps(buf, (__m512)(bf ? lrnd_bf16(v) : lrnd_f16(v)));
        y[i] = buf[0];
    }
}
#pragma GCC pop_options

/* ---- AVX-512: every write a merge-masked (or zero-masked) operation under a k register ---- */
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#define LSETM(c, v) ((c)->m = (v))

/* binary32 containers (the 32- and 16-bit policies): 16 lanes */
#define KBL(o, n) ((lv16)_mm512_mask_mov_ps((__m512)(o), (__mmask16)cx_->m, (__m512)(n)))
#define LCMP(a, b, op) ((unsigned)_mm512_cmp_ps_mask((__m512)(a), (__m512)(b), (op)))
#define LSET(x) ((lv16)_mm512_set1_ps((float)(x)))
#define LSQRT(a) ((lv16)_mm512_sqrt_ps((__m512)(a)))
#define LABS(a) ((lv16)_mm512_abs_ps((__m512)(a)))
#define LILO ((lvi16){0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23})
#define LIHI ((lvi16){8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31})
#define LTAG(x) x
#define LNUM lv16
#define VLA_EACH "klanes.h"
#define VLA_EACH_RND LRND_
#define VLA_EACH_IF (VLA_JOIN(LDBL_, POL_C) == 0)
#include "policy.h"
#undef LNUM

/* binary64: 8 lanes */
#undef KBL
#undef LCMP
#undef LSET
#undef LSQRT
#undef LABS
#undef LILO
#undef LIHI
#define KBL(o, n) ((lv8)_mm512_mask_mov_pd((__m512d)(o), (__mmask8)cx_->m, (__m512d)(n)))
#define LCMP(a, b, op) ((unsigned)_mm512_cmp_pd_mask((__m512d)(a), (__m512d)(b), (op)))
#define LSET(x) ((lv8)_mm512_set1_pd((double)(x)))
#define LSQRT(a) ((lv8)_mm512_sqrt_pd((__m512d)(a)))
#define LABS(a) ((lv8)_mm512_abs_pd((__m512d)(a)))
#define LILO ((lvl8){0, 8, 1, 9, 2, 10, 3, 11})
#define LIHI ((lvl8){4, 12, 5, 13, 6, 14, 7, 15})
#define LNUM lv8
#define VLA_EACH "klanes.h"
#define VLA_EACH_RND LRND_
#define VLA_EACH_IF (VLA_JOIN(LDBL_, POL_C) == 1)
#include "policy.h"
#undef LNUM
#undef LTAG
#pragma GCC pop_options

/* ---- AVX2: 8 binary32 lanes (4 binary64), every write a blend under a vector mask ---- */
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#undef KBL
#undef LCMP
#undef LSET
#undef LSQRT
#undef LABS
#undef LILO
#undef LIHI
#undef LSETM
static inline void lsetm2(lctx *c, unsigned m)
{
    const __m256i b32 = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i b64 = _mm256_setr_epi64x(1, 2, 4, 8);
    c->m = m;
    c->mv32 = (lmv)_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), b32), b32);
    c->mv64 = (lmv)_mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(m), b64), b64);
}
#define LSETM(c, v) lsetm2((c), (v))
/* each format's rounding in the AVX2 lanes, LRND2_<ID>, from its file lib/formats/<tok>.h */
#define VLA_FMT_PART VLA_PART_AVX2
#include "formats/each.h"
static void round16_avx2(int bf, const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        float buf[8] = {0};
        memcpy(buf, x + i, (n - i < 8 ? n - i : 8) * sizeof *buf);
        lv8f v = (lv8f)_mm256_loadu_ps(buf);
        _mm256_storeu_ps(buf, (__m256)(bf ? lrnd2_bf16(v) : lrnd2_f16(v)));
        memcpy(y + i, buf, (n - i < 8 ? n - i : 8) * sizeof *buf);
    }
}

#define KBL(o, n) ((lv8f)_mm256_blendv_ps((__m256)(o), (__m256)(n), (__m256)cx_->mv32))
#define LCMP(a, b, op) ((unsigned)_mm256_movemask_ps(_mm256_cmp_ps((__m256)(a), (__m256)(b), (op))))
#define LSET(x) ((lv8f)_mm256_set1_ps((float)(x)))
#define LSQRT(a) ((lv8f)_mm256_sqrt_ps((__m256)(a)))
#define LABS(a) ((lv8f)_mm256_andnot_ps(_mm256_set1_ps(-0.0f), (__m256)(a)))
#define LILO ((lvi8){0, 8, 1, 9, 2, 10, 3, 11})
#define LIHI ((lvi8){4, 12, 5, 13, 6, 14, 7, 15})
#define LTAG(x) VLA_CAT(a2, x)
#define LNUM lv8f
#define VLA_EACH "klanes.h"
#define VLA_EACH_RND LRND2_
#define VLA_EACH_IF (VLA_JOIN(LDBL_, POL_C) == 0)
#include "policy.h"
#undef LNUM

#undef KBL
#undef LCMP
#undef LSET
#undef LSQRT
#undef LABS
#undef LILO
#undef LIHI
#define KBL(o, n) ((lv4d)_mm256_blendv_pd((__m256d)(o), (__m256d)(n), (__m256d)cx_->mv64))
#define LCMP(a, b, op) ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd((__m256d)(a), (__m256d)(b), (op))))
#define LSET(x) ((lv4d)_mm256_set1_pd((double)(x)))
#define LSQRT(a) ((lv4d)_mm256_sqrt_pd((__m256d)(a)))
#define LABS(a) ((lv4d)_mm256_andnot_pd(_mm256_set1_pd(-0.0), (__m256d)(a)))
#define LILO ((lvl4){0, 4, 1, 5})
#define LIHI ((lvl4){2, 6, 3, 7})
#define LNUM lv4d
#define VLA_EACH "klanes.h"
#define VLA_EACH_RND LRND2_
#define VLA_EACH_IF (VLA_JOIN(LDBL_, POL_C) == 1)
#include "policy.h"
#undef LNUM
#undef LTAG
#pragma GCC pop_options

/* the instruction set the lanes use: AVX-512 where the processor has it, else AVX2 (with F16C);
 * VLA_LANES=avx2 in the environment asks for AVX2 even on an AVX-512 processor (tests, and
 * comparisons) */
enum { ISA_NONE, ISA_AVX2, ISA_AVX512 };
static int lanes_isa(void)
{
    __builtin_cpu_init();
    int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    int has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    const char *want = getenv("VLA_LANES");
    if (want && !strcmp(want, "avx2"))
        return has2 ? ISA_AVX2 : ISA_NONE;
    return has512 ? ISA_AVX512 : has2 ? ISA_AVX2 : ISA_NONE;
}

void vla_lanes_round16(int bf, const float *x, float *y, size_t n);
void vla_lanes_round16(int bf, const float *x, float *y, size_t n)
{
    if (lanes_isa() == ISA_AVX512)
        round16_512(bf, x, y, n);
    else
        round16_avx2(bf, x, y, n);
}

/* the instantiations of each policy of the list, AVX2 and AVX-512 */
typedef void (*lblock_fn)(const kparams *p, const int *runs, int nl, void *arena, lctx *cx);
static const lblock_fn lblocks[2][VLA_NPREC] = {
#define VLA_X_(ID, name, sfx, ...) lanes_block_a2_##sfx,
    {VLA_PRECS(VLA_X_)},
#undef VLA_X_
#define VLA_X_(ID, name, sfx, ...) lanes_block_##sfx,
    {VLA_PRECS(VLA_X_)},
#undef VLA_X_
};

/* runs per register: a 64- or 32-byte register of the policy's numbers */
static int lanes_of(vla_prec p, int isa)
{
    return (int)((isa == ISA_AVX512 ? 64 : 32) / vla_prec_num_size(p));
}

int vla_cuda_lanes_width(vla_prec p)
{
    int isa = lanes_isa();
    return isa == ISA_NONE ? 0 : lanes_of(p, isa);
}

static int lanes_probe(vla_error *why)
{
    if (lanes_isa() != ISA_NONE)
        return 1;
    vla_fail(why, VLA_ENOTSUP, "this processor has neither AVX-512 (F, VL, DQ, BW) nor AVX2 with "
                               "F16C, which the lanes need");
    return 0;
}

typedef struct {
    int threads, isa;
} lanes_ctx;

static int lanes_open(void **ctx, int threads, vla_error *err)
{
    lanes_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return vla_fail(err, VLA_ENOMEM, "out of host memory");
#ifdef _OPENMP
    c->threads = threads > 0 ? threads : omp_get_max_threads();
#else
    c->threads = 1;
#endif
    c->isa = lanes_isa();
    *ctx = c;
    return VLA_OK;
}

static void lanes_close(void *ctx) { free(ctx); }

static int lanes_alloc(void *ctx, void **p, size_t bytes, const char *what, vla_error *err)
{
    (void)ctx;
    *p = calloc(1, bytes ? bytes : 1);
    if (!*p)
        return vla_fail(err, VLA_ENOMEM, "out of host memory for %s (%.1f MB)", what, bytes / 1e6);
    return VLA_OK;
}

static void lanes_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int lanes_copy(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err)
{
    (void)ctx;
    (void)err;
    memcpy(dst, src, bytes);
    return VLA_OK;
}

static int lanes_plan(void *ctx, kparams *p, vla_error *err)
{
    (void)ctx;
    (void)err;
    p->threads = 1;
    return VLA_OK;
}

/* Two runs share a group when they are at the same t and take the same kind of step (write,
 * read, gated) at every step of the launch. */
static int same_course(const kparams *p, int a, int b)
{
    return p->counts[a].t == p->counts[b].t &&
           (p->shared_in ||
            !memcmp(p->flags + (size_t)a * p->steps, p->flags + (size_t)b * p->steps, p->steps));
}

static int lanes_launch(void *ctx, const kparams *p, vla_error *err)
{
    const lanes_ctx *lc = ctx;
    const int lw = lanes_of(p->cfg.prec, lc->isa), nt = lc->threads;
    (void)nt; /* (without OpenMP: one thread) */
    int *runs = malloc(sizeof(int) * p->runs), *gstart = malloc(sizeof(int) * (p->runs + 1));
    int ng = 0, r = VLA_OK;
    if (!runs || !gstart) {
        free(runs);
        free(gstart);
        return vla_fail(err, VLA_ENOMEM, "out of host memory");
    }
    /* groups of consecutive runs on the same course, at most lw each */
    for (int i = 0; i < p->runs; i++) {
        runs[i] = i;
        if (i == 0 || i - gstart[ng - 1] == lw || !same_course(p, gstart[ng - 1], i))
            gstart[ng++] = i;
    }
    gstart[ng] = p->runs;
    size_t arena_bytes = (size_t)karena_off(KA_N_ARRAYS, p->dm, 31) * 64;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt < ng ? nt : ng) if (nt > 1 && ng > 1)
#endif
    {
        void *arena = aligned_alloc(64, (arena_bytes + 63) / 64 * 64);
        lctx *cx = aligned_alloc(64, (sizeof(lctx) + 63) / 64 * 64);
        size_t prev_bytes = p->out_moved ? (size_t)p->d * p->d * 64 : 0;
        void *prev = prev_bytes ? aligned_alloc(64, prev_bytes) : NULL;
        if (cx)
            cx->prev = prev;
        if (prev_bytes && !prev)
            arena = (free(arena), NULL); /* reported below as out of memory */
        /* every thread meets the loop (a worksharing construct), with or without its memory */
#ifdef _OPENMP
#pragma omp for schedule(dynamic)
#endif
        for (int g = 0; g < ng; g++) {
            if (!arena || !cx) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                r = VLA_ENOMEM;
                continue;
            }
            lblocks[lc->isa == ISA_AVX512][p->cfg.prec](p, runs + gstart[g],
                                                        gstart[g + 1] - gstart[g], arena, cx);
        }
        free(arena);
        free(cx);
        free(prev);
    }
    if (r)
        vla_fail(err, r, "out of host memory for the lanes' state (%.1f MB per thread)",
                 arena_bytes / 1e6);
    free(runs);
    free(gstart);
    return r;
}

static int lanes_resident(void *ctx, const kparams *p)
{
    const lanes_ctx *lc = ctx;
    return lanes_of(p->cfg.prec, lc->isa) * lc->threads;
}

static void lanes_describe(void *ctx, char *buf, size_t len)
{
    const lanes_ctx *lc = ctx;
    snprintf(buf, len, "CPU vector lanes: %s, %d runs per register (%d in binary64), %d thread%s",
             lc->isa == ISA_AVX512 ? "AVX-512" : "AVX2", lanes_of(VLA_F32, lc->isa),
             lanes_of(VLA_F64, lc->isa), lc->threads, lc->threads == 1 ? "" : "s");
}

static int lanes_fma_peak(void *ctx, double *flops, vla_error *err)
{
    (void)ctx;
    (void)flops;
    return vla_fail(err, VLA_ENOTSUP, "the lanes' peak is the CPU's: make bench measures it");
}

static const kdev_ops lanes_ops = {"lanes",        lanes_probe,    lanes_open,    lanes_close,
                                   lanes_alloc,    lanes_release,  lanes_copy,    lanes_copy,
                                   lanes_plan,     lanes_launch,   lanes_resident, lanes_describe,
                                   lanes_fma_peak, 1};
const kdev_ops *vla_kdev_lanes(void) { return &lanes_ops; }

#else /* not GCC on x86-64 */
static int lanes_probe(vla_error *why)
{
    vla_fail(why, VLA_ENOTSUP, "the lanes are built with GCC for x86-64 only");
    return 0;
}
static const kdev_ops lanes_ops = {"lanes", lanes_probe};
const kdev_ops *vla_kdev_lanes(void) { return &lanes_ops; }
void vla_lanes_round16(int bf, const float *x, float *y, size_t n);
void vla_lanes_round16(int bf, const float *x, float *y, size_t n)
{
    (void)bf, (void)x, (void)y, (void)n;
}
int vla_cuda_lanes_width(vla_prec p)
{
    (void)p;
    return 0;
}
#endif
