/* test_gradchunk.c: the chunk form's backward (lib/recur_gradchunk.h, docs/math.md section 11) of
 * every model whose gradchunk column is 1 (and delta with fla's scalar decay): exact (MPFR, 256
 * bits) it equals the seq backward's exact gradients, both rounded once to binary64; binary64's
 * is within a derived bound of the exact; every policy's gradients are its MPFR emulation's bit for bit; what it does not
 * differentiate is refused with the reason. tests/test_gradchunk.py checks it against
 * torch.autograd of a chunk forward written from the published equations. */
#include "check.h"
#include "gseq.h"
#include "proc.h"
#include "vlaref.h"
#include "vlastab.h"
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TM 40
#define DM 8


/* The cases: every model whose chunk form has a backward (the model table's gradchunk), in the
 * table's order, each followed by its variants: delta with fla's scalar decay (delta_form=decay),
 * gdn with the chunk forms' settings the chunk backward takes (settings()), deltaproduct with 3
 * steps a token (T and C no multiples of its tokens). A case's inputs are the ones its
 * configuration reads (vla_model_reads). */
enum { PLAIN, DECAY, CHUNKSET, HOUSEHOLDER3 };
typedef struct {
    vla_model_kind model;
    int variant;
    char name[40];
} gcase;
static const struct {
    vla_model_kind model;
    int variant;
    const char *what;
} variants[] = {{VLA_DELTA, DECAY, "decay"},
                 {VLA_GDN, CHUNKSET, "neumann, tree, start"},
                 {VLA_DELTAPRODUCT, HOUSEHOLDER3, "householder 3"}};
#define NVARIANT (sizeof variants / sizeof variants[0])
static gcase cases[VLA_NMODEL + NVARIANT];
static int ncase(void)
{
    int n = 0;
    for (int m = 0; m < VLA_NMODEL; m++) {
        if (!vla_model_gradchunk((vla_model_kind)m))
            continue;
        cases[n] = (gcase){(vla_model_kind)m, PLAIN, ""};
        snprintf(cases[n].name, sizeof cases[n].name, "%s", vla_model_name((vla_model_kind)m));
        n++;
        for (size_t v = 0; v < NVARIANT; v++)
            if (variants[v].model == (vla_model_kind)m) {
                cases[n] = (gcase){(vla_model_kind)m, variants[v].variant, ""};
                snprintf(cases[n].name, sizeof cases[n].name, "%s (%s)",
                         vla_model_name((vla_model_kind)m), variants[v].what);
                n++;
            }
    }
    return n;
}
/* the case of model mk with variant v */
static int case_of(vla_model_kind mk, int v)
{
    for (int i = 0, n = ncase(); i < n; i++)
        if (cases[i].model == mk && cases[i].variant == v)
            return i;
    vla_check_fail(__FILE__, __LINE__, "%s has no case of variant %d", vla_model_name(mk), v);
    return 0;
}

/* the inputs setup draws: q, k, v, beta, delta's decay, the log-decays (a scalar or one per key
 * channel) and u (loglinear's lambda); g left out (no gate) */
enum {
    DRAWN = VLA_IN_G | VLA_IN_BETA | VLA_IN_DECAY | VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D | VLA_IN_U
};

static void case_config(vla_config *cfg, int m, int d)
{
    vla_config_default(cfg, cases[m].model, d);
    cfg->features = VLA_FEAT_ID;
    if (cases[m].variant == DECAY)
        cfg->delta_form = VLA_DELTA_DECAY;
    if (cases[m].variant == HOUSEHOLDER3)
        cfg->householder = 3;
    cfg->normalize = 0;
}

/* every model whose chunk form has a backward reads only inputs setup draws: a new one that reads
 * others fails here, named, until they are drawn below */
TEST(gradchunk_setup_covers_every_chunk_backward)
{
    const int n = ncase();
    for (int m = 0; m < n; m++) {
        vla_config cfg;
        case_config(&cfg, m, DM);
        const unsigned r = vla_model_reads(&cfg);
        CHECK_MSG(!(r & ~(unsigned)DRAWN), "%s reads inputs (VLA_IN_* 0x%x) that "
                  "tests/test_gradchunk.c's setup does not draw", cases[m].name,
                  r & ~(unsigned)DRAWN);
    }
    CHECK_MSG(n > 0, "no model has a chunk backward");
}

static void setup(vla_config *cfg, gseq *s, int m, int d, uint64_t seed)
{
    case_config(cfg, m, d);
    const unsigned r = vla_model_reads(cfg);
    memset(s, 0, sizeof *s);
    s->has_decay = (r & VLA_IN_DECAY) != 0;
    s->has_lg = (r & VLA_IN_LOGDECAY_D) != 0;
    s->has_lgs = (r & VLA_IN_LOGDECAY) && !s->has_lg;
    s->has_beta = 1;
    gseq_seed(seed);
    for (int t = 0; t < TM; t++) {
        for (int j = 0; j < DM; j++) {
            s->q[t][j] = gseq_uni(-1, 1);
            s->k[t][j] = gseq_uni(-1, 1);
            s->v[t][j] = gseq_uni(-1, 1);
            s->lg[t][j] = -gseq_uni(0.01, 0.5);
        }
        s->beta[t] = gseq_uni(0.2, 0.9);
        s->lgs[t] = -gseq_uni(0.01, 0.5);
        s->decay[t] = gseq_uni(0.6, 1);
    }
    s->has_u = (r & VLA_IN_U) != 0; /* drawn after the others, which stay those of its seed */
    for (int t = 0; t < TM && s->has_u; t++)
        for (int j = 0; j < DM; j++)
            s->u[t][j] = gseq_uni(-1, 1);
}

/* the chunk forms' settings of the CHUNKSET variant: tri=neumann, cumsum=tree, the decays anchored
 * at the sum before each block of 4 (anchor=start), and base 2 when base2 */
static void settings(vla_config *cfg, int m, int base2)
{
    if (cases[m].variant != CHUNKSET)
        return;
    CHECK(vla_config_set(cfg, "tri", "neumann") == 0);
    CHECK(vla_config_set(cfg, "cumsum", "tree") == 0);
    CHECK(vla_config_set(cfg, "base", base2 ? "2" : "e") == 0);
    CHECK(vla_config_set(cfg, "anchor", "start") == 0);
    CHECK(vla_config_set(cfg, "anchor_block", "4") == 0);
}

typedef struct {
    double dq[TM * DM], dk[TM * DM], dv[TM * DM], dbeta[TM], dg[TM * DM], du[TM * DM];
} cgrads;
static vla_grads gof(cgrads *g)
{
    vla_grads o = {g->dq, g->dk, g->dv, g->dbeta, g->dg, NULL, NULL, NULL, g->du};
    return o;
}
/* the gradients cgrads holds, their names and their numbers a step (ng: dg's) */
#define NGRAD 6
static const char *const gnames[NGRAD] = {"dq", "dk", "dv", "dbeta", "dg", "du"};
#define GRADS(g) {(g).dq, (g).dk, (g).dv, (g).dbeta, (g).dg, (g).du}
#define GLENS(d, ng) {(d), (d), (d), 1, (ng), (d)}

/* ||x - y|| / ||y|| over n entries (0 / 0 = 0) */
static double nrel(const double *x, const double *y, long n)
{
    double a = 0, b = 0;
    for (long i = 0; i < n; i++) {
        a += (x[i] - y[i]) * (x[i] - y[i]);
        b += y[i] * y[i];
    }
    return a == 0 ? 0 : sqrt(a / b);
}

/* Exact, the chunk and seq backwards compute the same function's gradients at 256 bits, each then
 * rounded to binary64 once: entry by entry within u64 of each other's magnitude, 2 u64 |seq|
 * plus 2^-200 max |g| for entries that are 0 exactly (dg at step 0, whose decay acts on S_{-1} = 0,
 * comes out of the chunk's 256-bit sums as a cancellation near 2^-256 of its terms). binary64's chunk gradients against the exact:
 * each entry gathers the chunk's C x C and C x d products and the T / C chunks' state cotangents,
 * sums of at most d T terms of O(1) numbers (decays below 1, |beta| < 1, unit keys), so norm-wise
 * relerr <= d T u64 (test_vgrad.c's bound for the seq backward); measured at most 0.025 of it
 * (VLA_TEST_VERBOSE=1 build/tests/run gradchunk_exact). T = 38 with C = 16 leaves a last chunk of
 * 6 tokens; C = 4 gives 10 chunks, the last of 2. */
TEST(gradchunk_exact_equals_seq)
{
    const int d = DM, T = 38;
    static gseq s;
    static cgrads a, b, f;
    double c[TM * DM];
    double worst = 0;
    for (int m = 0, n = ncase(); m < n; m++)
        for (int ci = 0; ci < 2; ci++) {
            const char *form = ci ? "chunk:4" : "chunk:16";
            vla_config cs, cc;
            setup(&cs, &s, m, d, 7 + m);
            for (int i = 0; i < T * d; i++)
                c[i] = gseq_uni(-1, 1);
            cc = cs;
            CHECK(vla_form_parse(&cc, form) == 0);
            settings(&cc, m, 0);
            vla_grads ga = gof(&a), gb = gof(&b), gf = gof(&f);
            CHECK(vref_grad(&cs, VREF_EXACT, 256, T, gseq_input, &s, c, &ga) == 0);
            CHECK(vref_grad(&cc, VREF_EXACT, 256, T, gseq_input, &s, c, &gb) == 0);
            cc.prec = VLA_F64;
            CHECK(vla_grad(&cc, T, gseq_input, &s, c, &gf) == 0);
            const char *const *names = gnames;
            const double *xs[] = GRADS(a), *ys[] = GRADS(b), *fs[] = GRADS(f);
            const long wd[] = GLENS(d, s.has_lg ? d : 1);
            long ns[NGRAD];
            double cw = 0; /* the case's worst */
            for (int q = 0; q < NGRAD; q++)
                ns[q] = T * wd[q];
            for (int q = 0; q < NGRAD; q++) {
                double big = 0;
                for (long i = 0; i < ns[q]; i++)
                    big = fmax(big, fabs(xs[q][i]));
                for (long i = 0; i < ns[q]; i++)
                    if (!(fabs(xs[q][i] - ys[q][i]) <= 0x1p-52 * fabs(xs[q][i]) + 0x1p-200 * big)) {
                        CHECK_MSG(0, "%s %s %s[%ld]: exact seq %a, exact chunk %a", cases[m].name,
                                  form, names[q], i, xs[q][i], ys[q][i]);
                        break;
                    }
                double e = nrel(fs[q], xs[q], ns[q]);
                CHECK_MSG(e <= d * T * 0x1p-53, "%s %s f64 %s: relerr %g > d T u64", cases[m].name,
                          form, names[q], e);
                cw = fmax(cw, e / (d * T * 0x1p-53));
            }
            worst = fmax(worst, cw);
            if (getenv("VLA_TEST_VERBOSE"))
                printf("gradchunk: %s %s f64 against exact, relerr / (d T u64) %.3g\n",
                       cases[m].name, form, cw);
            double n = 0; /* a backward that is all zeros would pass the above */
            for (long i = 0; i < T * d; i++)
                n += fabs(b.dq[i]) + fabs(b.dk[i]) + fabs(b.dv[i]);
            CHECK_MSG(n > 1, "%s %s: the gradients are %g in all", cases[m].name, form, n);
        }
    if (getenv("VLA_TEST_VERBOSE"))
        printf("gradchunk: f64 chunk against exact, worst relerr / (d T u64) %.3g\n", worst);
}

/* base 2: the chunk takes 2^(gamma RCP_LN2) with fla's binary32 RCP_LN2, e^(gamma f), f =
 * RCP_LN2 ln 2 = 1 - 1.3e-8, another function than base e's: exact, its gradients are those of
 * base e at the log-decays g f, dg times f. The inputs g f rounded to binary64 (u64 relative)
 * move the exponents, |gamma| <= 16 x 0.5 = 8 in a chunk of 16, by 8 u64, each decay by as much
 * relative, and a gradient gathers them: norm-wise within 64 u64. Without the factor f the
 * difference is 1.3e-8, 10^6 times that. Measured 0.24 to 0.83 u64 (VLA_TEST_VERBOSE=1). */
TEST(gradchunk_exact_base2)
{
    const int d = DM, T = 38;
    static gseq s;
    static cgrads a, b;
    double c[TM * DM];
    vla_config c2, ce;
    setup(&c2, &s, case_of(VLA_GDN, PLAIN), d, 11);
    for (int i = 0; i < T * d; i++)
        c[i] = gseq_uni(-1, 1);
    CHECK(vla_form_parse(&c2, "chunk:16") == 0);
    ce = c2;
    CHECK(vla_config_set(&c2, "base", "2") == 0);
    vla_grads ga = gof(&a), gb = gof(&b);
    CHECK(vref_grad(&c2, VREF_EXACT, 256, T, gseq_input, &s, c, &ga) == 0);
    const double f = 0x1.715476p+0 * 0x1.62e42fefa39efp-1;
    for (int t = 0; t < T; t++)
        s.lgs[t] *= f;
    CHECK(vref_grad(&ce, VREF_EXACT, 256, T, gseq_input, &s, c, &gb) == 0);
    for (int t = 0; t < T; t++)
        b.dg[t] *= f;
    const char *names[] = {"dq", "dk", "dv", "dbeta", "dg"};
    const double *xs[] = {a.dq, a.dk, a.dv, a.dbeta, a.dg};
    const double *ys[] = {b.dq, b.dk, b.dv, b.dbeta, b.dg};
    const long ns[] = {T * d, T * d, T * d, T, T};
    for (int q = 0; q < 5; q++) {
        double e = nrel(xs[q], ys[q], ns[q]);
        CHECK_MSG(e <= 64 * 0x1p-53, "gdn base 2 %s: relerr %g against base e at g f > 64 u64",
                  names[q], e);
        if (getenv("VLA_TEST_VERBOSE"))
            printf("gradchunk base 2: %s relerr / u64 %.3g\n", names[q], e / 0x1p-53);
    }
}

/* every policy against its MPFR emulation, bit for bit, and gdn with the chunk forms' settings
 * (settings()): chunk:8 of T = 20 (3 chunks in blocks of 2: [16, 20), one chunk of 4, then [0,
 * 16)) and chunk:4 of T = 38 (10 chunks in blocks of 4: [32, 38), whose second chunk has 2
 * tokens, [16, 32), [0, 16)): T no multiple of C nor of the block */
TEST(gradchunk_conform_every_policy_bit_for_bit)
{
    static gseq s;
    static cgrads a, b;
    double c[TM * DM];
    for (int m = 0, n = ncase(); m < n; m++)
        for (int p = 0; p < 2 * VLA_NPREC; p++) {
            const int d = DM, T = p < VLA_NPREC ? 20 : 38;
            vla_config cfg;
            setup(&cfg, &s, m, d, 30 + m);
            CHECK(vla_form_parse(&cfg, T == 20 ? "chunk:8" : "chunk:4") == 0);
            settings(&cfg, m, 1);
            cfg.prec = (vla_prec)(p % VLA_NPREC);
            for (int i = 0; i < T * d; i++)
                c[i] = gseq_uni(-1, 1);
            vla_grads ga = gof(&a), gb = gof(&b);
            memset(&a, 0x5a, sizeof a);
            memset(&b, 0xa5, sizeof b);
            CHECK(vla_grad(&cfg, T, gseq_input, &s, c, &ga) == 0);
            CHECK(vref_grad(&cfg, VREF_EMULATE, 0, T, gseq_input, &s, c, &gb) == 0);
            const double *xs[] = GRADS(a), *ys[] = GRADS(b);
            const long wd[] = GLENS(d, s.has_lg ? d : 1);
            for (int q = 0; q < NGRAD; q++) {
                long i = vla_test_diff_at(xs[q], ys[q], T * wd[q]);
                CHECK_MSG(i < 0, "%s %s T = %d: %s[%ld] lib %a, MPFR emulation %a", cases[m].name,
                          vla_prec_name(cfg.prec), T, gnames[q], i, i < 0 ? 0 : xs[q][i],
                          i < 0 ? 0 : ys[q][i]);
            }
        }
}

/* The chunk backward a block at a time (vla_backward_new, vref_backward_new): chunk:4 of T = 38
 * is 10 chunks in blocks of ceil(sqrt(10)) = 4 chunks, [32, 38) (a chunk of 4, one of 2), [16,
 * 32), [0, 16), each block's gradients vla_grad's (vref_grad's, exact) rows bit for bit; then no
 * block (VLA_ERANGE). gdn, kda, delta with fla's decay, loglinear (its levels' cotangents
 * carried from block to block) and mamba3 (the cotangents of its carried k~, v and angles), lib in
 * bf16 and MPFR exact. */
TEST(gradchunk_backward_blocks_are_vla_grads)
{
    const int d = DM, T = 38;
    static gseq s;
    static cgrads w, b;
    double c[TM * DM];
    const int ms[] = {case_of(VLA_GDN, PLAIN), case_of(VLA_KDA, PLAIN), case_of(VLA_DELTA, DECAY),
                      case_of(VLA_LOGLINEAR, PLAIN), case_of(VLA_MAMBA3, PLAIN)};
    for (int mi = 0; mi < 5; mi++)
        for (int exact = 0; exact < 2; exact++) {
            const int m = ms[mi];
            vla_config cfg;
            setup(&cfg, &s, m, d, 60 + m);
            CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
            cfg.prec = exact ? VLA_F64 : VLA_BF16;
            for (int i = 0; i < T * d; i++)
                c[i] = gseq_uni(-1, 1);
            vla_grads gw = gof(&w), gb = gof(&b);
            memset(&w, 0x5a, sizeof w);
            CHECK(exact ? vref_grad(&cfg, VREF_EXACT, 256, T, gseq_input, &s, c, &gw) == 0
                        : vla_grad(&cfg, T, gseq_input, &s, c, &gw) == 0);
            vla_backward *bw = NULL;
            CHECK(exact ? vref_backward_new(&bw, &cfg, VREF_EXACT, 256, T, gseq_input, &s) == 0
                        : vla_backward_new(&bw, &cfg, T, gseq_input, &s) == 0);
            if (!bw)
                continue;
            long t0, n, end = T, bad = 0;
            const long ng = s.has_lg ? d : 1;
            while ((n = vla_backward_span(bw, &t0)) > 0) {
                CHECK_MSG(t0 + n == end && n == (end == T ? 6 : 16),
                          "%s: block [%ld, %ld) after [%ld, ...)", cases[m].name, t0, t0 + n, end);
                memset(&b, 0xa5, sizeof b);
                CHECK(vla_backward_next(bw, c + t0 * d, &gb) == 0);
                const double *xs[] = GRADS(w), *ys[] = GRADS(b);
                const long wd[] = GLENS(d, ng);
                for (int q = 0; q < NGRAD; q++)
                    bad += vla_test_diff_at(xs[q] + t0 * wd[q], ys[q], n * wd[q]) >= 0;
                end = t0;
            }
            CHECK_MSG(end == 0 && !bad, "%s %s: the blocks end at %ld; %ld arrays differ from "
                                        "the whole backward's", cases[m].name,
                      exact ? "exact" : "bf16", end, bad);
            CHECK(vla_backward_next(bw, c, &gb) == VLA_ERANGE);
            vla_backward_free(bw);
        }
}

#if !defined(__SANITIZE_ADDRESS__) && defined(__GLIBC__) /* (the memory test's helpers) */
/* inputs of any T, made at the step from a hash of (t, j): gdn's q, k, v of d = DM numbers in
 * (-1, 1), beta in (0.2, 0.9), log-decay in (-0.5, -0.01); no array of T steps */
static double hashed(long t, int j)
{
    uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ULL + (uint64_t)j * 0xD1B54A32D192ED03ULL + 1;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29;
    return (double)(x >> 11) * 0x1p-53;
}
static int hashed_input(void *ctx, long t, vla_input *in)
{
    static double q[DM], k[DM], v[DM];
    (void)ctx;
    memset(in, 0, sizeof *in);
    for (int j = 0; j < DM; j++) {
        q[j] = 2 * hashed(t, j) - 1;
        k[j] = 2 * hashed(t, DM + j) - 1;
        v[j] = 2 * hashed(t, 2 * DM + j) - 1;
    }
    in->q = q, in->k = k, in->v = v;
    in->beta = 0.2 + 0.7 * hashed(t, 3 * DM);
    in->decay = NAN;
    in->lgs = -0.01 - 0.49 * hashed(t, 3 * DM + 1);
    return VLA_OK;
}

/* the bytes malloc holds (glibc: the arena's chunks in use and the mmapped ones) */
static long held(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}
#endif

/* The chunk backward's memory is that of its checkpoints, not T's: gdn chunk:16
 * in f64, d = 8, the most malloc holds while vla_backward_new runs the forward and while the
 * blocks go backward (a block's rows allocated before, outside the count), at T = 1024 (64 chunks:
 * 8 blocks of 8) and T = 16384 (1024 chunks: 32 blocks of 32). The checkpoints are a state at each
 * block's first chunk and one at each chunk of a block, 2 sqrt(T / C) states; a state is what
 * vla_model_save writes for the configuration (the saved arrays, recur_grad.h's grad_snap). Bound
 * on the growth from T = 1024 to 16384: 2 (32 - 8) + 2 states and 4 kB. Kept as one block of T
 * (every chunk's first state, as the whole backward did), it grows by 960 states: it fails. */
TEST(gradchunk_backward_memory_does_not_grow_with_T)
{
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
    vla_test_skip("mallinfo2 counts glibc's malloc (not AddressSanitizer's)");
    return;
#else
    const long Ts[2] = {1024, 16384}, C = 16, Kmax = 32 * C;
    vla_config cfg;
    vla_config_default(&cfg, VLA_GDN, DM);
    cfg.features = VLA_FEAT_ID;
    cfg.normalize = 0;
    cfg.prec = VLA_F64;
    CHECK(vla_form_parse(&cfg, "chunk:16") == 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    vla_model *m = NULL;
    CHECK(f && vla_model_new(&m, &cfg) == 0 && vla_model_save(m, f) == 0);
    vla_model_free(m);
    if (f)
        fclose(f);
    free(buf);
    const long state = (long)len; /* with its header: the description, a few hundred bytes */
    double *c = calloc((size_t)Kmax * DM, sizeof *c), *g = calloc((size_t)Kmax * 5 * DM, sizeof *g);
    vla_grads o = {g, g + Kmax * DM, g + 2 * Kmax * DM, g + 3 * Kmax * DM, g + 4 * Kmax * DM,
                   NULL, NULL, NULL, NULL};
    long peak[2] = {0, 0};
    for (int i = 0; i < 2 && c && g; i++) {
        const long base = held();
        vla_backward *bw = NULL;
        CHECK(vla_backward_new(&bw, &cfg, Ts[i], hashed_input, NULL) == 0);
        peak[i] = held() - base;
        long t0, n = -1;
        while (bw && (n = vla_backward_span(bw, &t0)) > 0 && n <= Kmax) {
            for (long r = 0; r < n * DM; r++)
                c[r] = 2 * hashed(t0 * DM + r, 99) - 1;
            CHECK(vla_backward_next(bw, c, &o) == 0);
            peak[i] = peak[i] > held() - base ? peak[i] : held() - base;
        }
        CHECK_MSG(bw && n == 0, "T = %ld: a block of %ld steps (at most %ld)", Ts[i], n, Kmax);
        vla_backward_free(bw);
    }
    const long bound = (2 * (32 - 8) + 2) * state + 4096;
    CHECK_MSG(peak[1] - peak[0] < bound, "the chunk backward held %ld bytes at T = %ld, %ld at "
              "T = %ld: it grows with T (bound %ld: 50 states of %ld bytes and 4 kB)",
              peak[0], Ts[0], peak[1], Ts[1], bound, state);
    CHECK_MSG(peak[0] > 16 * state / 2, "%ld bytes held at T = %ld: not the 16 states' %ld",
              peak[0], Ts[0], 16 * state);
    if (getenv("VLA_TEST_VERBOSE"))
        printf("gradchunk memory: %ld bytes at T = %ld, %ld at T = %ld (a state %ld bytes, bound "
               "on the growth %ld)\n", peak[0], Ts[0], peak[1], Ts[1], state, bound);
    free(c);
    free(g);
#endif
}

/* The column gradchunk against the backward: for every model without A (binary64, d = 8, T = 38,
 * chunk:4, the seed's inputs with the decays the model takes), where the column is 1 vla_grad's
 * chunk gradients are its seq gradients within 2 d T u64 (each is within d T u64 of the exact:
 * gradchunk_exact_equals_seq), and where it is 0 vla_grad and vla_backward_new refuse the chunk
 * (VLA_ENOTSUP); the models with A have the seq backward only, and the column says 0. */
TEST(gradchunk_column_is_the_chunk_backward)
{
    const int d = DM, T = 38;
    static gseq s;
    static cgrads a, b;
    double c[TM * DM];
    for (int m = 0; m < VLA_NMODEL; m++) {
        const char *name = vla_model_name((vla_model_kind)m);
        const int has = vla_model_gradchunk((vla_model_kind)m);
        if (vla_model_has_A((vla_model_kind)m)) {
            CHECK_MSG(!has, "%s has A and a chunk backward", name);
            continue;
        }
        vla_config cs, cc;
        setup(&cs, &s, case_of(VLA_DELTA, PLAIN), d, 90 + m); /* (every array filled) */
        vla_config_default(&cs, (vla_model_kind)m, d);
        if (vla_grad_check(&cs, NULL)) { /* no backward at all */
            CHECK_MSG(!has, "%s has a chunk backward and no seq one", name);
            continue;
        }
        cs.features = VLA_FEAT_ID;
        cs.normalize = 0;
        cs.prec = VLA_F64;
        s.has_lgs = vla_model_gate((vla_model_kind)m) == 1;
        s.has_lg = vla_model_gate((vla_model_kind)m) == 2;
        for (int i = 0; i < T * d; i++)
            c[i] = gseq_uni(-1, 1);
        cc = cs;
        CHECK(vla_form_parse(&cc, "chunk:4") == 0);
        vla_grads ga = gof(&a), gb = gof(&b);
        CHECK_MSG(vla_grad(&cs, T, gseq_input, &s, c, &ga) == 0, "%s: the seq backward", name);
        const int r = vla_grad(&cc, T, gseq_input, &s, c, &gb);
        vla_backward *bw = NULL;
        const int rb = vla_backward_new(&bw, &cc, T, gseq_input, &s);
        vla_backward_free(bw);
        CHECK_MSG(r == (has ? 0 : VLA_ENOTSUP) && rb == r, "%s: chunk:4's backward %d, %d", name,
                  r, rb);
        if (r)
            continue;
        const double *xs[] = {a.dq, a.dk, a.dv}, *ys[] = {b.dq, b.dk, b.dv};
        for (int q = 0; q < 3; q++) {
            const double e = nrel(ys[q], xs[q], T * d);
            CHECK_MSG(e <= 2 * d * T * 0x1p-53, "%s: chunk against seq, %s relerr %g", name,
                      (const char *[]){"dq", "dk", "dv"}[q], e);
        }
    }
}

TEST(gradchunk_refuses_what_it_has_not)
{
    vla_config cfg;
    vla_error why = {0};
    static gseq s;
    static cgrads g;
    double c[TM * DM] = {0};
    vla_grads o = gof(&g);
    vla_config_default(&cfg, VLA_RWKV7, 4);
    CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "rwkv7") &&
          strstr(why.msg, ": --form seq"));
    vla_config_default(&cfg, VLA_KDA, 4);
    CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
    CHECK(vla_grad_check(&cfg, NULL) == VLA_OK);
    CHECK(vla_config_set(&cfg, "anchor", "mid") == 0);
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "anchor=direct"));
    setup(&cfg, &s, case_of(VLA_GDN, PLAIN), 4, 1);
    CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
    CHECK(vla_grad(&cfg, 8, gseq_input, &s, c, &o) == 0);
    CHECK(vla_config_set(&cfg, "gate_lb", "-5") == 0);
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "gate_lb"));
    CHECK(vla_grad(&cfg, 8, gseq_input, &s, c, &o) == VLA_ENOTSUP);
    setup(&cfg, &s, case_of(VLA_DELTA, PLAIN), 4, 1);
    CHECK(vla_form_parse(&cfg, "chunk:4") == 0);
    cfg.normalize = 1;
    CHECK(vla_grad_check(&cfg, &why) == VLA_ENOTSUP && strstr(why.msg, "denominator"));
}

/* vla-grad --form chunk:C (man vla-grad): gdn's rows in f64 within test_vgrad.c's d T u64 of the
 * exact chunk backward, a last chunk of 8 tokens (T = 40, C = 16); rwkv7's chunk refused, exit 2 */
TEST(gradchunk_vla_grad_program)
{
    char *out = NULL;
    int st = vla_test_sh(&out, "%s/vla-grad --model gdn --form chunk:16 --precisions f64 --d 8 "
                               "--steps 40 --runs 1 --seed 5 2>&1", vla_test_bin_dir());
    if (st == 127) {
        free(out);
        vla_test_skip("bin/vla-grad not built");
        return;
    }
    CHECK_MSG(st == 0 && out, "exit %d: %s", st, out ? out : "");
    int rows = 0;
    for (const char *p = out ? strstr(out, "\nf64 0 ") : NULL; p; p = strstr(p + 1, "\nf64 0 ")) {
        char g[8];
        double e;
        CHECK(sscanf(p, "\nf64 0 %7s %lf", g, &e) == 2);
        CHECK_MSG(e <= 8 * 40 * 0x1p-53, "vla-grad chunk:16 f64 %s: relerr %g > d T u64", g, e);
        rows++;
    }
    CHECK_MSG(rows == 5, "%d rows of dq dk dv dbeta dg: %s", rows, out ? out : "");
    free(out);
    out = NULL;
    st = vla_test_sh(&out, "%s/vla-grad --model rwkv7 --form chunk:16 --d 4 --steps 16 2>&1",
                     vla_test_bin_dir());
    CHECK_MSG(st == 2 && out && strstr(out, "for la, rls") && strstr(out, "rwkv7") &&
                  strstr(out, ": --form seq"),
              "exit %d: %s", st, out ? out : "");
    free(out);
}
