/* vlastab.h: the public face of libvlastab, the numerical-stability harness for Variational
 * Linear Attention. Everything a program needs to run a model in a precision on a stream and
 * measure it. The math is docs/math.md (installed in share/doc/vlastab); the section numbers
 * below refer to it. */
#ifndef VLASTAB_H
#define VLASTAB_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include "vlalists.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VLA_VERSION "0.1.0"

/* ---- errors: functions that can fail return 0 or one of these (negative) ---- */
enum vla_err {
    VLA_OK = 0,
    VLA_EINVAL = -1,     /* bad argument: unknown name, malformed value */
    VLA_ERANGE = -2,     /* a size or constant out of its allowed range */
    VLA_ENONFINITE = -3, /* NaN or Inf in an input */
    VLA_ENOTSUP = -4,    /* a valid combination that is not implemented (or not defined) */
    VLA_ENOMEM = -5,
    VLA_EIO = -6,        /* a file could not be read or written */
    VLA_EFORMAT = -7,    /* a file is malformed or truncated */
};
const char *vla_strerror(int err);
/* The one error channel: a failing function returns its code and, given a vla_error (NULL: the
 * code alone), writes the code and the reason of the place that knows. The reason is what the
 * caller prints after its own context ("'abc' is not a number", "q.npy: truncated data: ...");
 * 1024 bytes hold a path and its reason (a longer one is cut, NUL-terminated). */
typedef struct vla_error {
    int code;
    char msg[1024];
} vla_error;
/* e (may be NULL) <- code and the reason (printf format; NULL: none, vla_error_msg then says
 * vla_strerror(code)); returns code, so that `return vla_fail(err, VLA_EINVAL, "...", ...);` is
 * the one way to fail with a reason. The arguments may include e->msg itself (to prefix it). A
 * newline in the reason becomes a space: a reason is one line. */
int vla_fail(vla_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* the reason: e->msg, or vla_strerror(e->code) when no reason was written */
const char *vla_error_msg(const vla_error *e);

/* ---- formats and precision policies (section 5), from vlalists.h ---- */
#define VLA_X_(ID, ...) VLA_FMT_##ID,
typedef enum { VLA_FORMATS(VLA_X_) VLA_NFMT } vla_fmt;
#undef VLA_X_
/* vla_num_<ID>: the C type that holds a number of format ID, exactly */
#define VLA_X_(ID, tok, p, emin, emax, T) typedef T vla_num_##ID;
VLA_FORMATS(VLA_X_)
#undef VLA_X_
#define VLA_X_(ID, ...) VLA_##ID,
typedef enum { VLA_PRECS(VLA_X_) VLA_NPREC } vla_prec;
#undef VLA_X_

typedef enum { VLA_STRICT, VLA_FAST } vla_mode;

const char *vla_prec_name(vla_prec p);
int vla_prec_parse(const char *name, vla_prec *out);
vla_fmt vla_prec_storage(vla_prec p);
vla_fmt vla_prec_compute(vla_prec p);
/* the format of the inputs and of the chunk forms' intermediates: storage's, but in the kernels'
 * policies (f16-kern, bf16-kern: 16-bit inputs and intermediates, binary32 state and arithmetic) */
vla_fmt vla_prec_io(vla_prec p);
const char *vla_fmt_name(vla_fmt f);
double vla_fmt_unit_roundoff(vla_fmt f); /* u = 2^-p: 2^-53, 2^-24, 2^-11, 2^-8 */
double vla_fmt_min_normal(vla_fmt f);   /* 2^emin */
double vla_fmt_max(vla_fmt f);          /* the largest finite number, (2 - 2^(1-p)) 2^emax */
int vla_fmt_precision(vla_fmt f);       /* p */
int vla_prec_mixed(vla_prec p);         /* 1: storage narrower than compute (f16-f32, bf16-f32) */

/* Round to nearest even into a format; NaN stays NaN, overflow goes to +-Inf, subnormals kept.
 * The float versions return a float holding exactly the rounded value. */
float vla_round_f16(float x);
float vla_round_bf16(float x);
uint16_t vla_f16_bits(float x);      /* rounds, then the binary16 bit pattern */
float vla_f16_value(uint16_t bits);  /* exact */
uint16_t vla_bf16_bits(float x);
float vla_bf16_value(uint16_t bits);
double vla_round_fmt(vla_fmt f, double x); /* one correctly rounded conversion from binary64 */

/* ---- models (section 2) and ways of tracking A (section 4), from vlalists.h ---- */
#define VLA_X_(ID, ...) VLA_##ID,
typedef enum { VLA_MODELS(VLA_X_) VLA_NMODEL } vla_model_kind;
#undef VLA_X_
#define VLA_X_(ID, ...) VLA_TRACK_##ID,
typedef enum { VLA_TRACKS(VLA_X_) VLA_NTRACK } vla_track;
#undef VLA_X_
#define VLA_X_(ID, ...) VLA_FORM_##ID,
typedef enum { VLA_FORMS(VLA_X_) VLA_NFORM } vla_form;
#undef VLA_X_
#define VLA_CHUNK_MAX 256
#define VLA_HOUSEHOLDER_MAX 64 /* deltaproduct's n_h */
typedef enum { VLA_FEAT_OWN, VLA_FEAT_ID } vla_features;
typedef enum { VLA_DELTA_GATED, VLA_DELTA_DECAY } vla_delta_form;
/* the kernels' 16-bit choices: the chunk's triangular inverse (tri=forward|neumann|blocked), and a
 * 16-bit format where one is rounded to (none: VLA_HALF_OFF; stage's io: VLA_HALF_IO) */
typedef enum { VLA_TRI_BLOCKED, VLA_TRI_FORWARD, VLA_TRI_NEUMANN } vla_tri;
typedef enum { VLA_HALF_OFF, VLA_HALF_F16, VLA_HALF_BF16, VLA_HALF_IO } vla_half;
#define VLA_TRI_BLOCK 16 /* tri=blocked: the diagonal blocks' size (fla's 16 x 16) */
/* decoding's state cache (cache=, docs/forms.md "The state cache"): the format S is kept in between
 * two steps, its first three VLA_HALF_'s (round to nearest, no scale: every backend), and its
 * rounding (cache_round=) */
typedef enum { VLA_CACHE_OFF, VLA_CACHE_F16, VLA_CACHE_BF16, VLA_CACHE_E4M3, VLA_CACHE_E5M2,
               VLA_CACHE_INT8, VLA_CACHE_INT16 } vla_cache;
typedef enum { VLA_CROUND_RN, VLA_CROUND_SR, VLA_CROUND_EF } vla_cround;
const char *vla_cache_name(vla_cache f); /* "off", "f16", ... "int16" ("?" if none) */
/* A value of the state into the cache and back, as a kernel stores and reloads it: y (binary32: the
 * state's value, plus the carried residual under ef) over the group's scale (binary32; 1 without
 * one), rounded into the cache's format (the integers clamped to +-127, +-32767, fp8 saturating at
 * its largest finite value), times the scale (binary32). word: sr's random word for this entry
 * (rounds the magnitude up when floor(frac 2^32) + word >= 2^32, frac the fraction of the grid's
 * spacing below it). Returns the decoded value (binary32). */
float vla_cache_value(vla_cache f, vla_cround r, float y, float scale, uint32_t word);
/* the same, and *saturated (may be NULL) 1 where x was clamped at the format's largest (e4m3, e5m2,
 * int8, int16) at a cost beyond the rounding's: to nearest, x rounded past the largest (an x
 * between the largest and the threshold above it rounds to the largest as any x rounds); sr, x
 * past the largest's next number (sr's round up of an x within a spacing of the largest, clamped
 * back, is off by less than a spacing); else 0 */
float vla_cache_value_sat(vla_cache f, vla_cround r, float y, float scale, uint32_t word,
                          int *saturated);
/* the scale of a group whose largest magnitude is amax: amax over the format's largest (127, 32767,
 * 448, 57344, 65504, bfloat16's), in binary32; 0 where amax is 0 */
float vla_cache_scale(vla_cache f, double amax);
/* the random word of entry i of S at step t under seed (Philox, a stream of its own) */
uint32_t vla_cache_word(uint64_t seed, long t, long i);

const char *vla_model_name(vla_model_kind m);
int vla_model_parse(const char *name, vla_model_kind *out);
const char *vla_track_name(vla_track t);
int vla_track_parse(const char *name, vla_track *out);
int vla_model_has_A(vla_model_kind m); /* rls, vla1, vla3 */
/* the log-decays model m takes (VLA_MODELS' gate): 0 none, 1 a scalar per token, 2 per key channel */
int vla_model_gate(vla_model_kind m);
/* the inputs the feature map phi takes when features=own (VLA_MODELS' phi): dq and dk are the
 * gradients with respect to phi(q), phi(k) where a bit is set, q and k as given elsewhere */
enum { VLA_PHI_Q = 1, VLA_PHI_K = 2 };
unsigned vla_model_phi(vla_model_kind m);
/* u' in words ("unit(u) / sqrt(d)"; "" for a model without A) */
const char *vla_model_uprime(vla_model_kind m);
/* the model's own safety devices (VLA_MODELS' devices): its error clipped by its norm (clip: then
 * S is no affine recurrence, and there is no scan form), clamp_on's clamp of ||S|| and ||A|| after
 * every step, a guard that floors the denominator at stab_eps (the others' guard skips the update) */
enum { VLA_DEV_CLIP = 1, VLA_DEV_CLAMP = 2, VLA_DEV_FLOOR = 4 };
unsigned vla_model_devices(vla_model_kind m);
/* 1 where the chunk form has its backward (VLA_MODELS' gradchunk, lib/recur_gradchunk.h) */
int vla_model_gradchunk(vla_model_kind m);
/* the names of the models m where has(m), in the table's order, into buf: "rls, vla1, vla3", or
 * with last " or " "rls, vla1 or vla3" (NULL: commas only); for messages that a new model keeps
 * true */
void vla_models_where(char *buf, size_t len, int (*has)(vla_model_kind), const char *last);

/* What the state's d x d array holds under a way of tracking (the holds column of VLA_TRACKS):
 * A, chol's Cholesky factor L of M = A^-1, or M itself (solve, cg, cheb: the upper triangle). */
typedef enum { VLA_HOLDS_A, VLA_HOLDS_L, VLA_HOLDS_M } vla_holds;
vla_holds vla_track_holds(vla_track t);
/* The iterations of cg and cheb per solve: 1..VLA_SOLVE_KMAX. */
#define VLA_SOLVE_KMAX 1000

/* The names of one list, comma-separated in its order ("la, delta, rls, vla1, vla3"), for help
 * texts and messages. */
typedef enum { VLA_LIST_FMT, VLA_LIST_PREC, VLA_LIST_MODEL, VLA_LIST_TRACK, VLA_LIST_FORM } vla_list;
const char *vla_names(vla_list which);

#define VLA_D_MIN 1
#define VLA_D_MAX 256

/* Every constant of section 2, with a switch for the nudge, the guard and the clamp.
 * vla_config_default fills in the defaults (docs/math.md section 2) for a model. */
typedef struct {
    vla_model_kind model;
    vla_track track;
    vla_prec prec;
    vla_mode mode;
    int d, dv;
    vla_features features; /* own feature map, or the identity in place of phi */
    double lambda0;        /* A_0 = I / lambda0 */
    double eps_g;          /* guard: vla1/rls skip-and-fallback threshold on |delta| */
    double stab_eps;       /* vla3: delta floor, and the read-out denominator floor */
    double per_eps;        /* periodic nudge A += per_eps I */
    int period;            /* ... every `period` steps */
    double eps_o;          /* la read-out denominator floor */
    double clip;           /* vla1: ||e|| <= clip */
    double clamp;          /* vla1: if ||S||_F or ||A||_F > clamp, A += clamp_eps I */
    double clamp_eps;
    double renorm;         /* S /= ||S||_F when ||S||_F > renorm; 0 = off */
    double beta;           /* delta: default beta_t when the input carries none */
    vla_delta_form delta_form;
    int nudge, guard, clamp_on, normalize; /* switches; normalize: la/vla3 read-out ratio */
    uint64_t sr_seed;      /* sr: the seed of the stochastic rounding's random words */
    int keynorm;           /* delta: unit keys k' (on, the default); off: the raw k, as the
                              chunked kernels take keys when the caller does not normalize them */
    vla_form form;         /* seq (the default), chunk or scan (docs/forms.md) */
    int chunk;             /* chunk: C, a power of two in 1..VLA_CHUNK_MAX; 0 in the other forms */
    double gamma;          /* forgetting factor of M in (0, 1]: M_t = gamma M_{t-1} + u u^T
                              (+ (1 - gamma) lambda0 I for the ways that keep M); 1 = none */
    int solve_k;           /* cg, cheb: iterations per solve (cg:TOL: at most 2d) */
    double solve_tol;      /* cg:TOL: stop when ||r|| <= TOL ||b||; 0 = run solve_k iterations */
    /* the gated family (docs/gated.md) */
    double scale;          /* the read-out's scale, o = scale S q (fla's default d^-1/2) */
    int qknorm;            /* gdn, kda: q and k L2-normalized in the model (fla's
                              use_qk_l2norm_in_kernel), x / sqrt(x . x + l2_eps) */
    double l2_eps;         /* ... its epsilon (fla: 1e-6) */
    /* the exponent range of the chunk forms (docs/forms.md, "The exponent range of the chunk
     * forms"); the defaults (0): a running sum in the compute format, base e, every difference
     * direct, no clamp and no bound */
    int cumsum_tree;  /* the chunk-local cumulative log-gates: 0 a running sum, 1 a Hillis-Steele
                         scan (the order of a parallel scan such as Triton's tl.cumsum) */
    int cumsum_io;    /* ... each partial sum rounded to the io format (0: the compute format) */
    int gate_clamp;   /* exp(min(gamma_i - gamma_j, 0)): mamba PR 713's clamp of a difference */
    int anchor;       /* VLA_ANCHOR_*: where a chunk's decays between two tokens are anchored */
    int anchor_block; /* the blocks that carry one anchor each (fla's sub-chunk BC); 0: C */
    int base2;        /* 1: exp2 of gamma * RCP_LN2 (fla's chunk kernels); 0: exp of gamma */
    double gate_lb;   /* the log-gate's lower bound, < 0, applied by gate_map; 0: none */
    int gate_map;     /* VLA_GATE_*: how gate_lb is applied to each input log-gate g */
    /* the triangular inverse and 16-bit state (docs/forms.md, the kernels' 16-bit choices) */
    vla_tri tri;           /* chunk: (I + L)^-1 by forward substitution, Neumann doubling or 16 x 16
                              diagonal blocks merged (fla's solve_tril, the default) */
    vla_half stage;        /* chunk: the format S_0 is staged in as the products' operand (io,
                              the default: fla's h.to(k.dtype); or f16, bf16) */
    vla_cache cache;       /* seq: the format S is kept in between steps (off) */
    int cache_rows;        /* ... the rows of S that share one scale (0: no scale) */
    vla_cround cache_round; /* ... its rounding: to nearest, stochastic, or with error feedback */
    int decay_bf16;        /* seq: the decays exp(g) rounded to bfloat16 before use (off) */
    int beta_bf16;         /* seq: beta rounded to bfloat16 before use (off) */
    int h0;                /* 1: the run starts from a given S_0 (vla_model_start), which the scan
                              form folds into its first step's element; set by vla_model_start */
    int householder;       /* deltaproduct: n_h, the stream's steps per token (docs/gated.md),
                              1..VLA_HOUSEHOLDER_MAX (2) */
    int rank;              /* mamba3: R, the MIMO rank: the stream's q, k, v and the read-out o
                              hold R ranks' vectors side by side, d/R and dv/R each; R divides d
                              and dv (1: SISO) */
} vla_config;
/* anchors: direct, every exponent a difference gamma_i - gamma_j <= 0; first, last, mid, start:
 * the decay between tokens i and j (same block) as exp(gamma_i - gamma_n) exp(gamma_n - gamma_j),
 * n the block's first, last (a future row) or middle (b0 + B/2: fla's safe_gate) token, or the
 * sum before the block (FlashKDA's exp(-gamma)), each factor rounded to io; a pair in an earlier
 * block by n = the first token of i's block (start: the sum before it) */
enum { VLA_ANCHOR_DIRECT, VLA_ANCHOR_FIRST, VLA_ANCHOR_LAST, VLA_ANCHOR_MID, VLA_ANCHOR_START };
/* gate maps: clamp g <- max(g, lb); sigmoid g <- lb sigmoid(g) (kda's lower_bound gate: the
 * input is the raw logit); pin g <- lb (every gate at the bound) */
enum { VLA_GATE_CLAMP, VLA_GATE_SIGMOID, VLA_GATE_PIN };
/* The trace's optional files (VLA_IN_* bits, vla_stream_optional) that c's model reads */
unsigned vla_model_reads(const vla_config *c);
/* c's model makes k' and alpha unit vectors (VLA_MODELS' unit column): 1 always, 2 where the
 * step's beta is 1, 0 never */
int vla_model_unit(const vla_config *c);

void vla_config_default(vla_config *cfg, vla_model_kind model, int d);
/* sizeof (vla_config) and sizeof (vla_counts) as this library was built: a binding that declares
 * the structures itself checks its copy against them before it uses one */
size_t vla_config_size(void);
size_t vla_counts_size(void);
/* The digest of the layout of the structures the Python binding passes (vla_config, vla_input,
 * vla_error, vla_counts, vla_grads: each field's offset, size and type) and of this header's
 * constants, as tools/python/mkabi.py read them from this header into the binding's _abi.py and
 * the compiler checked them (build/gen/abi.c); the binding refuses a library whose digest is not
 * its _abi.py's */
const char *vla_abi_digest(void);
/* A way of tracking as the programs spell it, NAME or NAME:PARAM: cg:K (K iterations), cg:TOL
 * (until ||r|| <= TOL ||b||, TOL in (0, 1), at most 2d iterations), cheb:K; the other ways take
 * no parameter. Sets cfg's track, solve_k and solve_tol. VLA_EINVAL for an unknown way or a
 * malformed parameter, VLA_ERANGE for K or TOL out of range. */
int vla_track_set(vla_config *cfg, const char *spec);
/* cfg's way as vla_track_set reads it ("sm", "cg:8", "cg:1e-06") */
void vla_track_spec(const vla_config *cfg, char *buf, size_t len);

/* NAME=VALUE of a model constant or switch (lambda0, eps_g, stab_eps, per_eps, period, eps_o, clip,
 * clamp, clamp_eps, renorm, beta, gamma, sr_seed, delta_form=gated|decay, nudge, guard, clamp_on,
 * normalize, features; the kernels' choices tri=forward|neumann|blocked, stage=io|f16|bf16|off,
 * decay_bf16, beta_bf16; decoding's state cache cache=off|f16|bf16|e4m3|e5m2|int8|int16,
 * cache_rows=R, cache_round=rn|sr|ef):
 * the switches take on/off/1/0. */
int vla_config_set(vla_config *cfg, const char *name, const char *value); /* VLA_EINVAL if not */
/* the same, but VLA_EINVAL for an unknown NAME and VLA_ERANGE for a bad VALUE, with err's reason
 * (err may be NULL) the rest of a sentence that starts with the name or the value ("underflows
 * binary64 to 0") */
int vla_config_set_why(vla_config *cfg, const char *name, const char *value, vla_error *err);
int vla_config_check(const vla_config *cfg);
/* the same, with the reason in err ("lambda0 = 0: it must be finite and > 0") */
int vla_config_check_why(const vla_config *cfg, vla_error *err);
/* A real number of text s: finite, a subnormal included; VLA_EINVAL with err's reason (err may be
 * NULL) the rest of a sentence that starts with s ("is not a number", "underflows binary64 to
 * 0"). */
int vla_parse_real(const char *s, double *x, vla_error *err);
/* x as the shortest "%.Pg", P from min_digits up to 17, that reads back as x: text that round-trips
 * (min_digits 6 gives what %g gives whenever %g is exact) */
void vla_num_text(char *buf, size_t len, double x, int min_digits);
/* Whether cfg's way of tracking A is defined for its model, switches and precision (chol and the
 * ways that keep M: no nudge and no clamp, which change A and not M; solve, cg, cheb and a
 * forgetting factor: a model with A; sr: a 16-bit storage policy with binary32 arithmetic; a model
 * without A takes sm, comp and sr, the ways that change more than A).
 * VLA_ENOTSUP with a one-line reason in err (may be NULL). */
int vla_track_check(const vla_config *cfg, vla_error *err);
/* The form of s ("seq", "chunk:C", "scan") into cfg; VLA_EINVAL for another word, VLA_ERANGE for
 * a C that is no power of two in 1..VLA_CHUNK_MAX. vla_form_name writes cfg's form that way. */
int vla_form_parse(vla_config *cfg, const char *s);
void vla_form_name(const vla_config *cfg, char *buf, size_t len);
/* The writes a chunk form holds buffered, not yet computed, after `writes` writes: writes mod C
 * (0 at a chunk's end, the only place where its state exists; always 0 in the other forms and
 * in chunk:1, the sequential recurrence). */
long vla_form_pending(const vla_config *cfg, long writes);
/* Whether cfg's form has a state that a read (a query without a write) takes at a chunk's end:
 * VLA_ENOTSUP with the reason in err (may be NULL) for loglinear's chunk form, whose state there
 * keeps the chunk's write as one level, not its tokens' levels. */
int vla_form_read_check(const vla_config *cfg, vla_error *err);
/* Whether cfg's model, switches and way of tracking A have cfg's form (docs/forms.md: a chunk
 * of C > 1 tokens takes no per-step device that falls inside it, and computes A by the sm
 * update blockwise; the scan needs an S that is affine given the step's vectors).
 * VLA_ENOTSUP with a one-line reason in err (may be NULL). */
int vla_form_check(const vla_config *cfg, vla_error *err);
/* Whether cfg reads the setting NAME (a --set name): the chunk form's settings (tri, stage, the
 * decays' cumsum, cumsum_fmt, base, anchor, anchor_block, gate_clamp) in a chunk of C > 1 of the
 * models whose chunk has them, the gated family's (scale, qknorm, l2_eps, gate_map), A's lambda0, vla1's clip and clamp, sr's seed, delta's delta_form and keynorm (the
 * columns of VLA_MODELS that are expressions in them). VLA_ENOTSUP with a one-line reason naming
 * what reads it where cfg does not (a setting that would change nothing); VLA_OK for a name no
 * rule covers (every configuration reads it, or another check refuses it). */
int vla_setting_read(const vla_config *cfg, const char *name, vla_error *err);
/* one line "model=vla3 track=sm prec=f32 mode=strict d=32 dv=32 lambda0=..." for provenance, its
 * numbers exact (vla_num_text; keynorm and the form follow only when they are not the defaults,
 * so that the seq form's lines, and its checkpoints, are what they were) */
void vla_config_describe(const vla_config *cfg, char *buf, size_t len);

/* One step's raw inputs in binary64, before any rounding or feature map. q, k, v (dv), u; g (dv row
 * gates) may be NULL for no gate. beta and decay: delta's rate and scalar decay (NaN: the default). */
typedef struct {
    const double *q, *k, *v, *u, *g;
    double beta, decay;
    /* the gated family: lgs, the scalar log-decay log a_t <= 0 (gdn, mamba2; 0: a_t = 1); lg,
     * one per key channel (kda, gla, rwkv7's w; NULL: lgs in every channel); rwkv7's a and b (d
     * each; NULL: 0) */
    const double *lg, *a, *b;
    double lgs;
} vla_input;
/* Whether the inputs of one step fit cfg's form: 0, or VLA_ENOTSUP with the reason in err: delta's
 * row gate g (delta_form=gated) in a chunk or a scan, whose per-row transitions these forms do not
 * take; a decay (delta_form=decay) of 0 in the inputs' format in a chunk, whose log-decay would be
 * -Inf. vla_model_step then answers VLA_ENOTSUP. */
int vla_form_input_check(const vla_config *cfg, const vla_input *in, vla_error *err);

/* Event counters of one run. */
typedef struct {
    long guard;     /* vla3: delta floored at stab_eps; vla1/rls: update skipped, A += eps_g I */
    long clamp;     /* vla1: the norm clamp fired */
    long clip;      /* vla1: the error was clipped */
    long nudge;     /* periodic nudges applied */
    long zero_norm; /* unit() met a norm below the smallest normal: vector left as it is */
    long renorm;    /* S renormalized */
    long steps, reads;
    /* the ways that keep M (solve, cg, cheb; docs/math.md 4.7-4.9) */
    long solves;       /* systems M y = x solved (vla1: two a step, the write's and the read's) */
    long solve_iters;  /* cg, cheb: iterations, over all solves */
    long solve_fail;   /* solves that failed: a pivot <= 0 (solve), p.Mp <= 0 (cg), or a final
                          residual above ||x|| or not finite (cg, cheb) */
    long solve_fail_t; /* the step of the first failure (0: none); VLA_Q_SOLVER has its value */
    /* read-outs whose normalizing denominator n . x was not finite: it overflowed, and o = S x /
     * Inf is exactly 0 while every stored number may be finite (or NaN from Inf / Inf) */
    long den_inf;
    long den_inf_t; /* the step of the first (0: none) */
    /* decoding's state cache (cache=e4m3, e5m2, int8, int16): entries whose rounding into the
     * format went past its largest and were clamped to it (vla_cache_value_sat), over all stores
     * of S into the cache (the start's included). f16 and bf16 overflow to Inf instead: a state
     * that is not finite, said as such */
    long cache_sat;
} vla_counts;

typedef enum {
    VLA_Q_S,      /* dv x d, row-major */
    VLA_Q_A,      /* d x d (chol, solve, cg, cheb: M^-1 formed by d solves with a Cholesky
                     factor of M, in the working arithmetic) */
    VLA_Q_N,      /* d: the normalizer sum of phi(k) (la, vla3) */
    VLA_Q_O,      /* dv: last read-out */
    VLA_Q_KP,     /* d: last write direction k' (unit for delta/vla3; raw k for rls/vla1) */
    VLA_Q_ALPHA,  /* d: last alpha (vla3: unit; rls: gain; vla1: A k; delta: k'; la: phi(k)) */
    VLA_Q_L,      /* d x d: chol's Cholesky factor of M (lower triangle); other ways: VLA_EINVAL */
    VLA_Q_M,      /* d x d: M, for the ways that keep it (solve, cg, cheb); others: VLA_EINVAL */
    VLA_Q_SOLVER, /* 3 numbers (solve, cg, cheb; others: VLA_EINVAL): the last solve's health
                     (cg, cheb: ||r|| / ||x|| as the iteration computed it; solve: the smallest
                     pivot, or the first not positive), 1 once a solve failed (else 0), the first
                     failure's value (the pivot, p.Mp, or the relative residual) */
    VLA_Q_CO,     /* C x dv, the chunk form at a chunk's end (else VLA_EINVAL): the read-outs of
                     its C tokens, row r token t - C + 1 + r (o is the last row) */
} vla_quantity;

typedef struct vla_model vla_model;

/* A model of cfg, from S_0 = 0, n_0 = 0, A_0 = I / lambda0, at step t = 0. */
int vla_model_new(vla_model **out, const vla_config *cfg);
/* A model at t = 0 starts from S_0 = S0 instead (dv x d, S's layout, binary64), each number rounded
 * to the policy's storage format (the state's: binary32 in the kernels' policies). Only a model
 * whose state is S alone takes one (vla_config_h0): VLA_ENOTSUP otherwise; VLA_ENONFINITE for a
 * NaN or Inf in S0, VLA_EINVAL after a step. */
int vla_model_start(vla_model *m, const double *S0);
/* 0 when a run of c can start from a given S_0 (la with normalize=off, delta, gdn, kda, gla,
 * mamba2, rwkv7, deltaproduct: their state is S alone); else VLA_ENOTSUP with the reason in why
 * (may be NULL): rls, vla1 and vla3 keep A (vla3 and la a normalizer n too), loglinear its
 * levels, mamba3 the last token's rotated key and value and the angles beside S, which an S_0
 * alone does not give */
int vla_config_h0(const vla_config *c, vla_error *why);
/* 0 when a run of c can restart its state at the starts of packed sequences (a trace's
 * cu_seqlens.npy: nseq sequences, sequence i the steps cu[i] + 1 .. cu[i + 1]): a model that
 * takes an S_0 (vla_config_h0), in the seq form, or in a chunk form whose every sequence start
 * cu[i] is a multiple of C (chunks then lie within sequences, as fla's varlen kernels cut them);
 * else VLA_ENOTSUP with the reason in why (may be NULL). nseq <= 1: 0. */
int vla_seqs_check(const vla_config *c, const long *cu, long nseq, vla_error *why);
void vla_model_free(vla_model *m);
/* One step t -> t+1: write, then the read-out o_t with q_t. VLA_ENONFINITE when an input holds NaN
 * or Inf, VLA_ERANGE for a decay outside [0, 1] (the state is left unchanged). */
int vla_model_step(vla_model *m, const vla_input *in);
/* A read: the read-out with query q against the current state, no write. VLA_ENOTSUP inside a
 * chunk of the chunk form, which has no state there (docs/forms.md). */
int vla_model_read(vla_model *m, const double *q);
/* The stream has ended. In a chunk form whose T is no multiple of C, the last chunk's c = T mod C
 * tokens are computed now, as a chunk of c (the kernels mask the rows past T: docs/forms.md);
 * then o, VLA_Q_CO (c x dv) and the state are those of token T, a read is allowed, and a step or
 * vla_model_save is VLA_EINVAL (nothing follows the end). Elsewhere it changes nothing. */
int vla_model_finish(vla_model *m);
/* Copy a quantity out as binary64 (exact: every format converts exactly). */
int vla_model_get(const vla_model *m, vla_quantity q, double *dst);
/* The state, bit for bit, to a binary stream and back (checkpoints): load requires a model made
 * with the same configuration (VLA_EFORMAT otherwise). */
int vla_model_save(const vla_model *m, FILE *f);
int vla_model_load(vla_model *m, FILE *f);
/* u' of one step's raw inputs k and u (u NULL: k, as the step takes it): the vector whose outer
 * product the step adds to M = A^-1 (rls: k; vla1: u / sqrt(d); vla3: unit(u) / sqrt(d)),
 * computed by the recurrence's own code in binary64 on the inputs rounded to cfg's storage
 * format (what a reference Gram of M accumulates). up: d entries. VLA_EINVAL for a model
 * without A. */
int vla_uprime(const vla_config *cfg, const double *k, const double *u, double *up);
/* The chunk forms' UT transform T = (I + strictly_lower(L))^-1 of an n x n L (row-major; the
 * diagonal and above unread), n <= VLA_CHUNK_MAX, by recur.h's own code in policy p and way tri
 * (forward substitution, Neumann doubling, 16 x 16 blocks merged: the chunk's --set tri=): L's
 * entries rounded to p's io format, T computed in its compute format and rounded to its io
 * format, as a chunk computes it (docs/forms.md). T: n x n, unit lower triangular. */
int vla_ut_inverse(vla_prec p, vla_tri tri, const double *L, int n, double *T);
/* ---- the backward pass (docs/math.md section 11; lib/recur_grad.h) ----
 * The gradients of L = sum_t c_t . o_t (o_t the read-out after step t, c_t given) with respect to
 * every step's inputs, by the reverse-mode recurrence of the seq form: the state's cotangent dS
 * carried from the last step to the first, the forward states recomputed from checkpoints every
 * ceil(sqrt(T)) steps. Arrays row-major, step t = 0 .. T-1 first. dq and dk are with respect to
 * the query and key the recurrence takes: phi(q), phi(k) when features=own (delta's write takes
 * the raw k), before the gated family's L2 normalization. */
typedef struct {
    double *dq, *dk; /* T x d */
    double *dv;      /* T x dv */
    double *dbeta;   /* T (delta, gdn, kda; 0 for the others), or NULL */
    double *dg;      /* T x ng, or NULL: the log-decays' gradients, ng = d for a decay per key
                        channel (kda, gla, rwkv7), else 1 (gdn, mamba2: g; delta_form=decay:
                        log a; 0 for the models without a decay) */
    double *da, *db; /* T x d, or NULL: rwkv7's low-rank pair */
    unsigned char *dS_zero; /* T x dv x d, or NULL: 1 where the cotangent of S_{t-1} that step t
                               hands back is exactly 0 (an underflow when the exact one is not) */
    double *du;      /* T x d, or NULL: the penalty's vector u (vla1, vla3; 0 for the others:
                        rls's u' is k, in dk) */
} vla_grads;
/* step t's inputs (t = 0 .. T-1) into *in, kept valid until the next call; a vla_err */
typedef int (*vla_grad_input)(void *ctx, long t, vla_input *in);
/* Whether cfg has a backward (VLA_ENOTSUP with a one-line reason in err, which may be NULL) */
int vla_grad_check(const vla_config *cfg, vla_error *err);
typedef enum { VLA_GRAD_BETA = 1, VLA_GRAD_G = 2, VLA_GRAD_LR = 4, VLA_GRAD_U = 8 } vla_grad_kind;
/* whether cfg's model has the gradient (VLA_GRAD_*): a beta, a log-decay, rwkv7's a and b, u */
int vla_grad_has(const vla_config *cfg, vla_grad_kind which);
/* The gradients of T steps in cfg's precision policy, strict arithmetic (whatever cfg's mode):
 * dS stored in the storage format, c_t rounded as an input, the gradients computed in the
 * compute format and rounded to the io format. VLA_EINVAL (NULL arrays, T < 1), vla_grad_check's
 * VLA_ENOTSUP (or an input with delta's row gates g), the input callback's or a step's error,
 * VLA_ENOMEM. */
int vla_grad(const vla_config *cfg, long T, vla_grad_input in, void *ctx, const double *c,
             const vla_grads *out);
/* The same backward a block of steps at a time, from the last block to the first, for a caller
 * that keeps a block's gradients, not T's (vla-check's judge of a kernel's): vla_backward_new
 * runs the forward (in(t) for t = 0 .. T-1, a checkpoint every K = ceil(sqrt(T)) steps; a chunk
 * form chunk:C, every K = C ceil(sqrt(ceil(T / C))) steps, whole chunks); vla_backward_span says
 * which steps the next block is, [*t0, *t0 + n) with n its return (at most K; 0 once the first
 * block is done), and vla_backward_next computes it: c holds their c_t (n x dv, step *t0 first),
 * out's arrays n rows, step *t0 first. Each block re-reads its steps' inputs (in(t), t0 <= t <
 * t0 + n). The gradients are vla_grad's, bit for bit (vla_grad is these blocks). vla_grad's
 * errors; after an error of vla_backward_next (or VLA_ERANGE: no block left) the backward is
 * over. vla_backward_free(NULL) does nothing. */
typedef struct vla_backward vla_backward;
int vla_backward_new(vla_backward **out, const vla_config *cfg, long T, vla_grad_input in,
                     void *ctx);
long vla_backward_span(const vla_backward *b, long *t0);
/* K, the steps of a block of the seq form's backward of T steps (the last block: T - (ceil(T /
 * K) - 1) K), so that its checkpoints and a block's states are 2 sqrt(T) states; chunk:C's
 * block is C vla_backward_block_len(ceil(T / C)) steps */
long vla_backward_block_len(long T);
int vla_backward_next(vla_backward *b, const double *c, const vla_grads *out);
void vla_backward_free(vla_backward *b);
const vla_config *vla_model_config(const vla_model *m);
const vla_counts *vla_model_counts(const vla_model *m);
long vla_model_t(const vla_model *m);

/* ---- primitives (section 3), one per policy. Arrays row-major; A is d x d, S is dv x d.
 * Values live in the policy's container (double for f64, float for the others) and are exactly
 * representable in the storage format; every operation rounds as the policy says. ---- */
#define VLA_DECLARE_PRIMS(sfx, T)                                                                  \
    int vla_score_##sfx(T *s, const T *k, const T *q, int d);                                      \
    int vla_sm_update_##sfx(T *A, const T *u, int d, T eps_g, long *fallbacks);                   \
    int vla_sm_sym_update_##sfx(T *A, const T *u, int d, T eps_g, long *fallbacks);               \
    int vla_woodbury_##sfx(T *A, const T *U, int r, int d, T eps_g, long *fallbacks);             \
    void vla_alpha_##sfx(T *alpha, const T *A, const T *s, int d);                                 \
    void vla_modulate_##sfx(T *S, const T *v, const T *alpha, int dv, int d);                      \
    int vla_renorm_##sfx(T *S, int dv, int d, T threshold);                                        \
    void vla_nudge_##sfx(T *A, int d, T eps);
#define VLA_X_(ID, name, sfx, S, C, ...) VLA_DECLARE_PRIMS(sfx, vla_num_##C)
VLA_PRECS(VLA_X_)
#undef VLA_X_
#undef VLA_DECLARE_PRIMS

/* ---- counter-based random numbers and input streams (section 8) ---- */
void vla_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

typedef enum {
    VLA_VAR_Q, VLA_VAR_K, VLA_VAR_V, VLA_VAR_U, VLA_VAR_G, VLA_VAR_BETA, VLA_VAR_AUX,
    VLA_VAR_LOGDECAY, VLA_VAR_RA, VLA_VAR_RB /* the gated family's gates and rwkv7's a, b */
} vla_var;
/* A standard normal at (seed, var, head, t, lane): a pure function of those numbers. */
double vla_gauss(uint64_t seed, vla_var var, uint32_t head, uint64_t t, uint32_t lane);
/* A uniform in (0, 1) at the same coordinates (53 random bits). */
double vla_uniform(uint64_t seed, vla_var var, uint32_t head, uint64_t t, uint32_t lane);
/* dst[i] = scale * vla_gauss(seed, var, head, t, i) for lanes 0..n-1, bit for bit, at a fraction
 * of the cost (both normals of each Box-Muller pair are used, and vla_simd_width pairs drawn at
 * once). */
void vla_gauss_fill(double *dst, int n, uint64_t seed, vla_var var, uint32_t head, uint64_t t,
                    double scale);
/* The streams' Box-Muller: g0[i] = r cos(2 pi u2[i]), g1[i] = r sin(2 pi u2[i]),
 * r = sqrt(-2 log u1[i]), for 0 < u1, u2 < 1, from +, -, *, / and sqrt only (lib/philox.c), so
 * that it has the same bits everywhere, several at a time or one. */
void vla_box_muller(const double *u1, const double *u2, int n, double *g0, double *g1);
/* The lanes of lib's binary64 loops over many numbers: the pairs vla_gauss_fill and
 * vla_box_muller compute at once, the streams' W k and divisions, the inputs' finiteness check:
 * 8 (AVX-512), 4 (AVX2) or 1, the widest the processor has unless VLA_SIMD says avx2 or off when
 * first asked; want > 0 chooses (capped at what the processor has), want <= 0 asks. The bits are
 * the same at every width. */
int vla_simd_width(int want);

typedef enum {
    VLA_STREAM_GAUSS, VLA_STREAM_LMLIKE, VLA_STREAM_SUBSPACE, VLA_STREAM_REPEAT, VLA_STREAM_MQAR,
    VLA_STREAM_TRACE
} vla_stream_kind;

typedef struct vla_stream vla_stream;
/* spec: gauss[:SIGMA[,sigmoid][,logits]] (sigmoid: a rate beta_t = sigmoid(N(0, 1)) per step, as
 * fla issue 736 draws them; logits: the gated family's log-gates drawn as N(0, 1) logits of either
 * sign, the input of gate_map=sigmoid, which makes them lb sigmoid(x) as kda's lower_bound gate
 * does), lmlike[:S], subspace:R,NOISE, repeat:M, mqar:N,G, trace:DIR. */
int vla_stream_open(vla_stream **out, const char *spec, int d, int dv, uint64_t seed,
                    vla_error *err);
/* The same, reading of a trace only heads h0 .. h0 + nh - 1 and steps 1 .. steps (nh or steps
 * < 0: to the end; 0: none, the files' shapes alone): a run of 10 steps of a long trace reads
 * 10 steps. The files' shapes are checked whole, the values of the part read; a head or step
 * outside it is VLA_ERANGE for vla_stream_get, and vla_stream_identity is the part's. */
int vla_stream_open_part(vla_stream **out, const char *spec, int d, int dv, uint64_t seed,
                         long h0, long nh, long steps, vla_error *err);
void vla_stream_close(vla_stream *s);
vla_stream_kind vla_stream_kind_of(const vla_stream *s);
/* Steps the stream defines (trace: T of the files; mqar: n + G + n; others: -1, unbounded). */
long vla_stream_length(const vla_stream *s);
long vla_stream_heads(const vla_stream *s); /* trace: heads in the files; others: unbounded (-1) */
/* The optional files a trace supplied (0 for every other stream). A trace is a folder of .npy
 * files of a model's raw projections (before any feature map), shape (heads, T, dim), float16,
 * float32 or float64, little-endian, C order (docs/trace.md):
 *   q.npy, k.npy (dim d), v.npy (dv): needed; every model reads them
 *   u.npy (d): vla1 and vla3's penalty vector; absent: u = k
 *   g.npy (dv): delta's row gates in [0, 1] (delta_form=gated); absent: g = 1
 *   beta.npy (heads, T): delta's rate, >= 0; absent: the constant beta (--set beta=B)
 *   decay.npy (heads, T): delta's decay a_t in [0, 1] (delta_form=decay); absent: a_t = 1
 *   logdecay.npy (heads, T) or (heads, T, d): the gated family's log-decays log a_t <= 0 as the
 *       kernels take them, a scalar per token (gdn, mamba2) or per key channel (kda, gla, rwkv7's
 *       w; a scalar file serves them all channels alike); absent: 0 (a_t = 1)
 *   a.npy, b.npy (heads, T, d): rwkv7's low-rank vectors, S_t = S_{t-1} (Diag(w) + a b^T) + v k^T
 *   S0.npy (heads, dv, d): each head's initial state S_0, S's layout (vla_stream_S0; the models
 *       that vla_config_h0 admits); absent: S_0 = 0. With cu_seqlens.npy it may be (N, heads, dv,
 *       d), row i sequence i's (vla_stream_S0_of)
 *   cu_seqlens.npy (N + 1,) integers 0 = c_0 < c_1 < ... < c_N = T: the T steps are N sequences
 *       packed (fla's varlen call), the state restarting at each (vla_stream_seqs)
 * A synthetic stream draws the gated family's log-decays and rwkv7's a, b only for a model that
 * reads them (vla_stream_want): log a = -exp(-3 + 1.5 z), z standard normal (most decays near
 * 0.95, a heavy tail toward 0), or z itself with gauss's logits; a = -kappa, b = kappa * iclr with kappa a unit vector and iclr =
 * sigmoid(z) per channel (RWKV-7's in-context learning rate). */
enum {
    VLA_IN_U = 1, VLA_IN_G = 2, VLA_IN_BETA = 4, VLA_IN_DECAY = 8,
    VLA_IN_LOGDECAY = 16,   /* a scalar log-decay per token (logdecay.npy (heads, T)) */
    VLA_IN_LOGDECAY_D = 32, /* ... per key channel (logdecay.npy (heads, T, d)) */
    VLA_IN_A = 64, VLA_IN_B = 128,
    VLA_IN_S0 = 256, /* S0.npy (heads, dv, d): each head's initial state S_0, S's layout */
    VLA_IN_CU = 512  /* cu_seqlens.npy (N + 1,): N sequences packed */
};
unsigned vla_stream_optional(const vla_stream *s);
/* head's initial state from the trace's S0.npy (dv x d, binary64, as the file holds it) into dst:
 * 1; 0 when the stream has none (S_0 = 0); VLA_ERANGE for a head outside the part read */
int vla_stream_S0(const vla_stream *s, long head, double *dst);
/* ... sequence seq's (0 .. N - 1 of cu_seqlens.npy) initial state: S0.npy's row seq, or its only
 * one for seq 0; 1, 0 or VLA_ERANGE as vla_stream_S0 */
int vla_stream_S0_of(const vla_stream *s, long seq, long head, double *dst);
/* A trace's packed sequences: N (the sequences of cu_seqlens.npy) with *cu its N + 1 entries
 * (owned by s), or 0 with *cu NULL when it has none (one sequence) */
long vla_stream_seqs(const vla_stream *s, const long **cu);
/* The inputs a synthetic stream draws besides q, k, v, u (VLA_IN_LOGDECAY, _D, VLA_IN_A, _B: the
 * reads of the model it feeds); a trace gives what its files hold. */
void vla_stream_want(vla_stream *s, unsigned bits);
/* 1 when s draws its log-gates as logits (gauss:..,logits): a positive one is a growth unless the
 * model maps it (gate_map=sigmoid with gate_lb < 0; the programs refuse the stream otherwise) */
int vla_stream_logits(const vla_stream *s);
/* Inputs of step t (1-based) of head h. q, k, u have d entries, v and g dv. *is_read is 1 on the
 * steps that are reads only (mqar queries). has_g says whether g was filled. */
typedef struct {
    double *q, *k, *v, *u, *g;
    double beta, decay;
    int has_g, is_read;
    long pair; /* mqar: the pair (0..n-1) the step writes or reads, -1 on a distractor; else -1 */
    /* the gated family: lgs, a scalar log-decay (0: none), or lg, d per key channel; rwkv7's a,
     * b (d each); has_gates: which of them were filled (VLA_IN_LOGDECAY, _D, VLA_IN_A, _B) */
    double *lg, *a, *b;
    double lgs;
    unsigned has_gates;
} vla_step_buf;
int vla_step_buf_alloc(vla_step_buf *b, int d, int dv);
void vla_step_buf_free(vla_step_buf *b);
int vla_stream_get(vla_stream *s, uint32_t head, long t, vla_step_buf *b);
/* A step's inputs as a model takes them: b's arrays, its gates and rwkv7's a, b where it has them */
vla_input vla_input_of(const vla_step_buf *b);
/* mqar: the index (0..n-1) of the pair step t writes or reads, -1 on a distractor. */
long vla_stream_pair(const vla_stream *s, long t);
const char *vla_stream_spec(const vla_stream *s);
/* What the stream's inputs are, as text for a checkpoint's key: a generated stream's canonical
 * spec; for a trace "trace:" and a digest of its arrays' shapes and values (of the part read,
 * wherever it lies) */
void vla_stream_identity(const vla_stream *s, char *buf, size_t len);
/* FNV-1a (64 bits) of n bytes, continuing from h (VLA_FNV_INIT to start) */
#define VLA_FNV_INIT 0xcbf29ce484222325ull
uint64_t vla_fnv1a(uint64_t h, const void *p, size_t n);
/* A stream's first T steps of heads 0..heads-1 drawn once, as vla_engine_spec's prepared inputs
 * (in, is_read, T): benchmarks and suites replay them to many configurations. T is cut to a finite
 * stream's length; a trace with fewer heads is VLA_ERANGE. A one-line reason in err. */
typedef struct {
    int d, dv, heads;
    int h0; /* the first head (vla_inputs_draw_part; else 0): in[] holds h0 .. h0 + heads - 1 */
    long T;
    vla_input *in;          /* [(head - h0) * T + (t - 1) % T] */
    unsigned char *is_read; /* likewise */
    double *store;          /* their numbers */
    double *S0;             /* the trace's S0.npy of these heads ((head - h0) dv d), NULL: none;
                               with nseq sequences, sequence i's at (((head - h0) nseq + i) dv d) */
    long nseq;              /* the trace's packed sequences (cu_seqlens.npy; 0: one) */
    long *cu;               /* ... their nseq + 1 starts and end (vla_engine_spec's cu) */
    vla_stream *s;          /* a window's stream (vla_inputs_open), NULL once drawn whole */
    vla_step_buf b;
} vla_inputs;
/* want: the gates a synthetic stream draws too (vla_stream_want; 0: none) */
int vla_inputs_draw(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int heads,
                    long T, unsigned want, vla_error *err);
/* The same for heads h0 .. h0 + heads - 1 alone (of a trace only that part is read: memory of the
 * heads drawn, not of the trace's; vla-check's judge of a kernel's gradients, head by head) */
int vla_inputs_draw_part(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int h0,
                         int heads, long T, unsigned want, vla_error *err);
/* The same as a window of T steps, refilled as engines advance: vla_inputs_fill puts steps t0 + 1
 * .. t1 (at most T of them) of every head in their slots (t - 1) % T, and engines given in,
 * is_read, T and cycle = 1 read step t there during an advance to t1, so that the engines of
 * many configurations read a trace, or draw a stream, once (vla-check's groups). steps: the
 * steps that will be asked for (of a trace no more is read). */
int vla_inputs_open(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int heads,
                    long T, long steps, unsigned want, vla_error *err);
/* ... of heads h0 .. h0 + heads - 1 alone (vla-check's judge, a block of heads at a time) */
int vla_inputs_open_part(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int h0,
                         int heads, long T, long steps, unsigned want, vla_error *err);
int vla_inputs_fill(vla_inputs *x, long t0, long t1, vla_error *err);
void vla_inputs_free(vla_inputs *x);

/* ---- engines: the one place where runs advance (docs/engine.md) ----
 * An engine is a batch of runs of one configuration on one input source, advanced together step
 * by step on a backend: "cpu" (lib: vla_model per run, runs spread over threads), "exact" (the
 * same over MPFR, from libvlaref: vref_backend_exact), "lanes", "cuda", "emu" (the kernels, from
 * kernels/vlacuda.h: the CPU's vector lanes, the GPU, and the GPU's kernels on host threads).
 * Every backend gives the same quantities through the same calls, and a strict run gives the
 * same bits on each (the kernels' tests prove it); save and load share one format, so a run
 * saved on one backend continues on another. */
typedef struct vla_backend vla_backend;
typedef struct vla_engine vla_engine;

/* the CPU backend: each run a vla_model (every policy, way of tracking and mode) */
const vla_backend *vla_backend_cpu(void);
const char *vla_backend_name(const vla_backend *b);
/* 1 when backend b runs cfg at all, whatever this machine has (the kernels: the ways of tracking
 * they are built for, strict mode, a state that fits a block's shared memory, ...); else 0 with
 * the code and the reason in why (may be NULL). vla_engine_new refuses what it does not support. */
int vla_backend_supports(const vla_backend *b, const vla_config *cfg, vla_error *why);
/* 1 when b can run here (the GPU: a device found; the lanes: a vector unit); else 0 with the
 * code and the reason in why (may be NULL) */
int vla_backend_available(const vla_backend *b, vla_error *why);

/* What an engine records after every step, for vla_engine_spec.on_step (VLA_TAP_*). */
enum { VLA_TAP_O = 1, VLA_TAP_KP = 2, VLA_TAP_ALPHA = 4, VLA_TAP_MOVED = 8 };

/* One step of one run, as on_step sees it. */
typedef struct {
    int run;                 /* 0 .. runs - 1 (the stream's head first_head + run) */
    long t;                  /* the step just taken, 1-based */
    const vla_step_buf *in;  /* its inputs as drawn, before any rounding (is_read: a read) */
    const double *o;         /* VLA_TAP_O: the read-out after the step (dv); NULL after a write
                                inside a chunk of the chunk form (docs/forms.md: its read-outs
                                are computed at its end) */
    const double *co;        /* VLA_TAP_O, the chunk form at a chunk's end: the read-outs of
                                every token of the chunk (nco x dv, row r token t - nco + 1 + r;
                                the cpu and exact backends; NULL on the others and elsewhere) */
    int nco;                 /* its tokens: C, or T mod C for the last, partial chunk of
                                vla_engine_finish */
    const double *kp, *alpha; /* VLA_TAP_KP, VLA_TAP_ALPHA: the write's k' and alpha (d) */
    long a_moved;            /* VLA_TAP_MOVED: entries of A this step changed (-1: chol, solve,
                                cg and cheb keep no A, a model without A, or the chunk form,
                                which forms A at chunk ends only; 0 on a read) */
    long a_moved_diag;       /* ... of them on A's diagonal (-1 and 0 alike) */
} vla_step_view;

typedef struct {
    const vla_backend *backend; /* NULL: vla_backend_cpu() */
    vla_config cfg;
    int runs;
    /* the inputs: a stream (spec for vla_stream_open, its seed, run r reading head first_head + r)
     * ... */
    const char *stream;
    uint64_t seed;
    int first_head;
    long stream_steps; /* the steps the runs will take: of a trace no more is read (0: all) */
    /* ... or prepared inputs (stream NULL): in[r * T + t - 1] for run r at step t (shared: in[t - 1]
     * for every run), is_read (may be NULL) likewise; steps beyond T wrap around when cycle is set,
     * else are an error. The engine keeps the pointers: the arrays must outlive it. */
    const vla_input *in;
    const unsigned char *is_read;
    long T;
    int shared, cycle;
    /* inputs rounded once to this format before the model takes them (the binary64 reference of
     * a run in a narrower policy takes that run's rounded inputs); VLA_FMT_F64: as drawn */
    vla_fmt round_inputs;
    /* run r's initial state S_0 (dv x d at S0 + r dv d, S's layout; rounded like the inputs, then
     * by vla_model_start); NULL: a trace stream's S0.npy where it has one, else S_0 = 0. A
     * configuration that takes none (vla_config_h0) is refused by vla_engine_new. */
    const double *S0;
    /* S_0 rounded once to this format before vla_model_start rounds it to the run's own storage
     * format: the binary64 reference of a run in a narrower policy takes that policy's S_0 (its
     * storage format, binary32 in the kernels' policies); VLA_FMT_F64 (0): as given */
    vla_fmt round_S0;
    /* packed sequences (a trace's cu_seqlens.npy): nseq sequences, sequence i the steps cu[i] + 1
     * .. cu[i + 1]; each run restarts its state at each sequence's first step, from S0's row of
     * that sequence (run r, sequence i at S0 + (r nseq + i) dv d) or from 0 (vla_seqs_check says
     * which configurations can; the cpu, exact and dd backends do it, the others refuse). nseq 0
     * (cu NULL): one sequence, or a trace stream's cu_seqlens.npy when S0 is NULL too */
    const long *cu;
    long nseq;
    long ref_bits;     /* the exact backend's precision in bits (0: 256) */
    int threads;       /* threads the runs are spread over (0: OpenMP's default) */
    int device;        /* the GPU (cuda) */
    unsigned taps;     /* VLA_TAP_*: what on_step sees besides the inputs */
    /* after every step of every run, in step order within a run (runs may be visited from several
     * threads at once; keep per-run state per run); nonzero stops the advance with that code */
    int (*on_step)(void *ctx, const vla_step_view *v);
    void *ctx;
    /* when not NULL and set (by a signal handler, say), an advance stops at the next step
     * boundary it can (within a second), each run where it is, and returns VLA_EINTR. The exact
     * backend, whose step can take longer (d = 256 at 65536 bits: about 100 s), gives the step up
     * instead: that run's state is lost, and vla_engine_get and vla_engine_save answer VLA_EINTR
     * for it until a vla_engine_load (a checkpoint written before) */
    volatile sig_atomic_t *stop;
} vla_engine_spec;

#define VLA_EINTR (-8) /* vla_engine_advance: stopped by spec.stop */

/* An engine at t = 0 (every run from S_0 = 0, or the spec's S0, and A_0 = I / lambda0). On failure *out is NULL and err
 * (may be NULL) holds the code and the reason ("--backend cuda: no CUDA device (...); --backend
 * emu runs ..."). */
int vla_engine_new(vla_engine **out, const vla_engine_spec *spec, vla_error *err);
void vla_engine_free(vla_engine *e);
/* Every run to step t (from where each is; a run already at or beyond t stays). VLA_EINTR when
 * spec.stop was set (vla_engine_t says where each run stopped); another error fails the engine,
 * with the run, the step and the reason in vla_engine_error. */
int vla_engine_advance(vla_engine *e, long t);
long vla_engine_t(const vla_engine *e, int run);
/* The inputs end where the runs are: a chunk form computes each run's last, partial chunk (T mod
 * C tokens: vla_model_finish), its read-outs handed to on_step (vla_step_view.nco of them); after
 * it no run advances. The cpu and exact backends; on the others VLA_ENOTSUP where a chunk is
 * pending, with the reason in vla_engine_error. Nothing happens where no chunk is pending. */
int vla_engine_finish(vla_engine *e);
int vla_engine_runs(const vla_engine *e);
const vla_config *vla_engine_config(const vla_engine *e);
const vla_engine_spec *vla_engine_spec_of(const vla_engine *e);
/* a quantity of run r, as vla_model_get gives it (inside a chunk of the chunk form, the state at
 * the chunk's start, and o, k', alpha of the last chunk's last token: docs/forms.md) */
int vla_engine_get(vla_engine *e, int run, vla_quantity q, double *dst);
int vla_engine_counts(vla_engine *e, int run, vla_counts *out);
/* run r's state (t, counters and every state array, bit for bit) in vla_model_save's format:
 * what vla_model_load reads, whatever the backend; load requires the same configuration */
int vla_engine_save(vla_engine *e, int run, FILE *f);
int vla_engine_load(vla_engine *e, int run, FILE *f);
/* The most bytes vla_engine_save writes for one run of e: what a reader of saved states checks
 * a length against before it reads one */
long vla_engine_save_max(const vla_engine *e);
/* a failed engine's failure: its code and reason, as the run or the backend that met it wrote them
 * (code 0: none; e NULL: VLA_EINVAL, "no engine"). Read it with vla_error_msg. */
const vla_error *vla_engine_error(const vla_engine *e);
/* the machine it runs on, in words ("cpu, 2 threads", "NVIDIA H200, ...") */
void vla_engine_describe(vla_engine *e, char *buf, size_t len);

/* ---- a trajectory: one configuration over given arrays (the Python binding's run()) ---- */
/* heads x T steps of inputs in binary64, row-major, head first: q, k, u (NULL: k), lg, a, b
 * heads x T x d; v, g heads x T x dv; beta, decay, lgs heads x T. NULL for g, lg, a, b: none;
 * for beta, decay, lgs: vla_input's defaults (NaN, NaN, 0). */
typedef struct {
    const double *q, *k, *v, *u, *g, *beta, *decay, *lgs, *lg, *a, *b;
} vla_arrays;
/* what vla_trajectory_run writes, head first */
typedef struct {
    double *o;          /* heads x T x dv: every step's read-out (a chunk's, all of them at its end) */
    double *s_fro;      /* heads x T: ||S_t||_F after step t (inside a chunk of the chunk form,
                           the chunk's start: docs/forms.md) */
    double *a_fro;      /* heads x T: ||A_t||_F likewise; NaN for a model without A */
    double *S;          /* heads x dv x d: the state after the last step */
    vla_counts *counts; /* heads */
    long *nonfinite;    /* heads: the first step (1..T) at which S, A or o held Inf or NaN; 0: none */
} vla_trajectory;
/* cfg over T steps of every head of in: an engine of `heads` runs on the cpu backend, its prepared
 * inputs taken as given, advanced to T and finished (a chunk form's last, partial chunk), so that
 * the steps, the chunk ends and the last chunk are the engine's. 0, or a vla_err with the reason
 * in err (may be NULL): "head H, step T: reason" for a step refused. */
int vla_trajectory_run(const vla_config *cfg, int heads, long T, const vla_arrays *in,
                       vla_trajectory *out, vla_error *err);
/* An engine of one run of cfg on the cpu fed blocks of given arrays, its state kept between
 * them: for a caller that steps several configurations in lockstep on inputs it makes a block at
 * a time and reads the state between blocks (the binding's Model). Each block's steps are the
 * engine's (vla_engine_advance); a chunk form of C > 1, whose state exists at chunk ends only,
 * is refused (VLA_ENOTSUP: vla_trajectory_run runs it). */
typedef struct vla_blocks vla_blocks;
int vla_blocks_new(vla_blocks **out, const vla_config *cfg, long block, vla_error *err);
/* the next n steps (n <= block) from in, laid out as one head of n steps; each step's read-out
 * into o (n x dv) where o is not NULL. 0, or the engine's failure with its reason in err (may be
 * NULL): "head 0, step T: reason"; the engine then takes no further step. */
int vla_blocks_advance(vla_blocks *b, long n, const vla_arrays *in, double *o, vla_error *err);
/* a quantity of the run now, as vla_model_get gives it */
int vla_blocks_get(vla_blocks *b, vla_quantity q, double *dst);
void vla_blocks_free(vla_blocks *b);

/* ---- recall (docs/math.md section 7.6) ---- */
/* one run's reads, summed in read order */
typedef struct {
    long reads, correct;
    double err_sum; /* sum of ||o - v|| / ||v|| */
    double cos_sum; /* sum of cos(o, v) */
    long nonfinite; /* the first step whose read-out held Inf or NaN (0: none) */
    long den_inf;   /* read-outs whose denominator overflowed (vla_counts.den_inf: o = 0) */
} vla_recall;
/* The runs of base (its backend, configuration, runs, seed and first_head; its inputs are
 * replaced) write the pairs of mqar:n,G and read every key back; res[run] scores the reads (a read
 * is correct when its read-out's nearest stored value by cosine, the value as the write drew it
 * in binary64, is the right one). The code and the reason in err (may be NULL) on failure. */
int vla_recall_run(const vla_engine_spec *base, long n, long G, vla_recall *res, vla_error *err);

/* ---- .npy arrays (numpy's format, C order, float16/32/64) ---- */
typedef struct {
    int ndim;
    long shape[8];
    double *data; /* converted to binary64 */
    char dtype[4]; /* the file's type without its byte order: "f2", "f4", "f8" ("u2": bfloat16;
                    * "i8", "u1", ...: vla_npy_read_int's integers) */
    /* opened by vla_npy_open_part (data NULL): where the part lies in the file */
    char *path;
    long off, fileT, h0; /* the data's offset, the file's T, the part's first head */
    size_t inner;        /* the numbers per step */
    int itemsize;
} vla_npy;
/* Reads a whole file. On failure returns an error with err's reason (err may be NULL):
 * "PATH: what is wrong", one line. */
int vla_npy_read(const char *path, vla_npy *out, vla_error *err);
/* The same, but '<u2' is taken as bfloat16 bit patterns (numpy has no bfloat16: a kernel's bf16
 * outputs saved as x.view(torch.uint16)); a caller that has said so (vla-check --outputs reads a
 * tag file beside it) */
int vla_npy_read_bf16(const char *path, vla_npy *out, vla_error *err);
/* Reads part of a file of two or more axes (heads, T, ...): heads h0 .. h0 + nh - 1 and their
 * first `steps` steps, each head's part read where it lies (nh or steps < 0: to the axis' end;
 * 0: nothing, the header alone). out->shape is the part's; full (8 longs, may be NULL) gets the
 * file's. The file's size is checked against its whole shape. An array of fewer axes is read
 * whole. */
int vla_npy_read_part(const char *path, vla_npy *out, long h0, long nh, long steps, long *full,
                      vla_error *err);
/* The same part opened, not read: out->data NULL, out->shape the part's; its numbers are read
 * later, a block of steps at a time, by vla_npy_read_steps (the file opened for each block: no
 * descriptor is held), so that a long trace costs no memory of its length. */
int vla_npy_open_part(const char *path, vla_npy *out, long h0, long nh, long steps, long *full,
                      vla_error *err);
/* steps t .. t + n - 1 (from 0) of the part's head h (from 0) into dst, n x a->inner numbers */
int vla_npy_read_steps(const vla_npy *a, long h, long t, long n, double *dst, vla_error *err);
/* A whole file opened as vla_npy_open_part opens a part, '<u2' taken as bfloat16 bit patterns as
 * vla_npy_read_bf16 takes them: vla-check --outputs reads a kernel's read-outs a window at a
 * time */
int vla_npy_open_bf16(const char *path, vla_npy *out, vla_error *err);
/* A whole file of integers (int8 to int64, uint8 to uint64; any other dtype refused), each as
 * binary64, exact below 2^53: vla-check --states reads positions.npy */
int vla_npy_read_int(const char *path, vla_npy *out, vla_error *err);
int vla_npy_write(const char *path, const double *data, int ndim, const long *shape);
void vla_npy_free(vla_npy *a);

/* ---- measures (section 7) that need no reference ---- */
double vla_fro(const double *x, long n);
double vla_fro_diff(const double *x, const double *y, long n);
/* ||x - y||_F / ||y||_F, the relative error of x against the reference y: 0 when they are equal
 * (both 0 too), Inf for a difference from a zero reference, NaN when x holds a NaN */
double vla_rel_fro(const double *x, const double *y, long n);
double vla_sym_defect(const double *A, int d); /* ||A - A^T||_F / ||A||_F */
/* ||I - k a^T||_2 for unit k, a with c = a.k: sqrt((3 - 2c + sqrt(5 - 4c)) / 2). */
double vla_jac_norm_unit(double c);
/* ||I - a b^T||_2 for any a, b (the 2 x 2 reduction of section 7). */
double vla_jac_norm(const double *a, const double *b, int d);
/* Finite-time largest Lyapunov exponent of the products J_t ... J_1 with J = I - k a^T acting on
 * S from the right (S J): renormalized power iteration on one row vector. */
typedef struct {
    int d;
    double *x;
    double log_sum;
    long t;
} vla_lyap;
int vla_lyap_init(vla_lyap *l, int d, uint64_t seed);
void vla_lyap_step(vla_lyap *l, const double *kp, const double *alpha); /* x <- x (I - kp alpha^T) */
double vla_lyap_exponent(const vla_lyap *l); /* (1/t) log ||x_t|| / ||x_0|| */
void vla_lyap_free(vla_lyap *l);
/* log-spaced checkpoints: about per_decade per decade in 1..T, always including T; returns the count,
 * writes at most max of them ascending. */
long vla_checkpoints(long T, int per_decade, long *out, long max);
/* the n ascending checkpoints cks where cfg's form has a state: in the chunk form rounded down
 * to multiples of C, those that fall below C and the repeats dropped; returns their count */
long vla_checkpoints_form(const vla_config *cfg, long *cks, long n);
/* The least-squares line of log y against log x over the points where both logs exist (at most
 * 1024), by GSL's gsl_fit_linear: its slope and the slope's standard error (NaN from two points,
 * which the line fits exactly). VLA_ERANGE (slope NaN) with fewer than two points or a constant
 * x. vla_loglog_slope: the slope alone. */
int vla_loglog_fit(const double *x, const double *y, long n, double *slope, double *se);
double vla_loglog_slope(const double *x, const double *y, long n);
/* the median of x[0..n-1], which it sorts in place (GSL); NaN for n < 1 */
double vla_median(double *x, long n);

/* ---- results (section 9) ---- */
/* the commit this library was built from (git describe), as a table's "# git:" line says it */
const char *vla_build_git(void);
typedef struct vla_dat vla_dat;
/* Opens FILE ("-" for stdout) and writes the provenance header: program, version, argv, then the
 * caller's "key: value" lines, then "# columns: ...". */
int vla_dat_open(vla_dat **out, const char *path, int argc, char **argv);
int vla_dat_meta(vla_dat *f, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vla_dat_columns(vla_dat *f, const char *names); /* space-separated */
int vla_dat_row(vla_dat *f, const double *vals, int n);
/* the same row with names in some cells: cell i is names[i] where names and names[i] are not NULL
 * (one word, not a number: "vla3", "f16-f32"), else vals[i]. Tables write names, not enum codes. */
int vla_dat_row_named(vla_dat *f, const double *vals, const char *const *names, int n);
int vla_dat_block(vla_dat *f); /* two blank lines */
int vla_dat_close(vla_dat *f);  /* flushes; VLA_EIO if anything failed to write */
/* closes f and removes what it wrote (its temporary: the table is not written); a stream (standard
 * output, a pipe) is only closed */
void vla_dat_discard(vla_dat *f);

#ifdef __cplusplus
}
#endif
#endif
