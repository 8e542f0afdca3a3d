/* engine_impl.h: what sits behind vla_engine (vlastab.h): the operations a backend provides, and
 * the engine's services to backends (the inputs of a step, the per-step view, errors). lib/engine.c
 * holds the engine and the CPU backend; reference/ adds the exact one, kernels/ the lanes, the GPU
 * and its emulation. Not installed: a backend's business, not a user's. */
#ifndef VLA_ENGINE_IMPL_H
#define VLA_ENGINE_IMPL_H
#include "vlastab.h"

typedef struct {
    /* the backend's state for e, whose spec is checked; the code and the reason in err (may be
     * NULL) on failure */
    int (*open)(vla_engine *e, void **self, vla_error *err);
    void (*close)(void *self);
    /* every run to step t, calling vla_engine_view_emit after each step when the spec has an
     * on_step; VLA_EINTR when the spec's stop flag was seen; other errors via vla_engine_fail */
    int (*advance)(vla_engine *e, void *self, long t);
    long (*t)(void *self, int run);
    int (*get)(void *self, int run, vla_quantity q, double *dst);
    int (*counts)(void *self, int run, vla_counts *out);
    /* run's state in vla_model_save's format: its header, then vstate_save's layout (t, the
     * counters, the arrays) */
    int (*save)(void *self, int run, FILE *f);
    int (*load)(void *self, int run, FILE *f);
    void (*describe)(void *self, char *buf, size_t len);
    /* optional: vla_engine_finish (NULL: the backend computes no last, partial chunk) */
    int (*finish)(vla_engine *e, void *self);
} vla_backend_ops;

/* Optional, for a backend of one vla_model per run (vla_engine_models_ops): up to width(cfg)
 * runs' models stepped together (the double-double reference in the CPU's vector lanes). The
 * models stay the runs' state between advances. begin takes n runs' models, all at the same t and
 * none finished; step takes each run's inputs of one step (all writes, or all reads with is_read),
 * every one already checked, and leaves in each model its t, its counts and what a step's view
 * reads (o, the chunk's read-outs, k', alpha); end gives the rest of the state back to the models
 * and frees the group (NULL: nothing). A step that the group cannot take returns non-zero with
 * nothing changed, and the engine takes it run by run. */
enum { VLA_GROUP_MAX = 16 };
typedef struct vla_group_ops {
    int (*width)(const vla_config *cfg); /* 1: no group for cfg */
    int (*begin)(void **grp, vla_model *const *m, int n);
    int (*step)(void *grp, const vla_input *in, int is_read);
    void (*end)(void *grp);
} vla_group_ops;

struct vla_backend {
    const char *name;
    const vla_backend_ops *ops;
    /* backends of one vla_model per run (lib's vla_engine_models_ops): run r's model */
    int (*make_model)(vla_model **out, const vla_config *cfg, const vla_engine_spec *spec);
    int target; /* kernels: their vla_cuda_target */
    /* optional: the most bytes one number of a run's state takes, in memory and in a saved state
     * (the MPFR backends, whose numbers grow with spec->ref_bits); NULL: lib's native containers
     * (vla_engine_number_bytes) */
    long (*number_bytes)(const vla_engine_spec *spec);
    /* optional (NULL: every configuration lib runs, on every machine): what vla_backend_supports
     * and vla_backend_available answer, as a code (VLA_OK, else VLA_ENOTSUP, VLA_ERANGE, ... with
     * the reason in why, which may be NULL); open refuses the same configurations with the same
     * words */
    int (*supports)(const vla_backend *b, const vla_config *cfg, vla_error *why);
    int (*available)(const vla_backend *b, vla_error *why);
    const vla_group_ops *group; /* optional (NULL: none) */
};

/* the numbers of a run's state arrays (tables.h's VLA_STATE_ARRAYS, or only the ones it saves) */
long vla_state_numbers(const vla_config *cfg, int saved_only);
/* the bytes of one number of a run of spec: the backend's number_bytes, else the native
 * container's (twice it for comp, which keeps pairs) */
long vla_engine_number_bytes(const vla_backend *b, const vla_engine_spec *spec);

/* the engine's own part, shared by every backend */
struct vla_engine {
    vla_engine_spec spec;
    const vla_backend *b;
    void *self;
    vla_error err; /* the failure reported (code 0: none): vla_engine_error */
    int fail_run;  /* ... and its run (-1: the engine's own), the lowest run's, so that the message
                      does not depend on which thread failed first */
    double *S0;    /* run r's initial state at S0 + r dv d, rounded to spec.round_S0 (the spec's, or
                      the trace's S0.npy); NULL: S_0 = 0. A backend starts its runs from it.
                      With packed sequences, run r's sequence i at S0 + (r nseq + i) dv d */
    long *cu, nseq; /* the packed sequences (the spec's, or the trace's cu_seqlens.npy; nseq 0:
                       one), each run restarting at each (vla_engine_models_ops; others refuse) */
};

/* one vla_model per run, stepped on the CPU (make_model makes them): the cpu and exact backends */
extern const vla_backend_ops vla_engine_models_ops;

/* run's model where e's backend keeps one per run (vla_engine_models_ops), else NULL: for a
 * reference that reads more of a number than vla_engine_get gives (vref_ddcheck) */
vla_model *vla_engine_run_model(vla_engine *e, int run);

/* The inputs of run's step t into raw (as drawn) and, when the spec rounds inputs, into rnd;
 * *in then points into the one the model takes. A stream is opened for the run on first use
 * (*stream, owned by the caller's run; one per run since a stream is not thread-safe). */
int vla_engine_input(vla_engine *e, int run, long t, vla_stream **stream, vla_step_buf *raw,
                     vla_step_buf *rnd, vla_input *in);
/* Records run's failure (thread-safe; run -1: the engine's own) and returns code. A run stops at its
 * failure and the others go on; the failure reported is the lowest run's. */
int vla_engine_fail(vla_engine *e, int run, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A read at run's step t after `writes` writes: VLA_OK, or, inside a chunk of the chunk form,
 * VLA_ENOTSUP recorded with the reason */
int vla_engine_read_inside(vla_engine *e, int run, long t, long writes);
/* 1 when the spec's stop flag is set */
int vla_engine_stopped(const vla_engine *e);
/* the header of vla_model_save's format for configuration cfg (the magic and the description) */
int vla_model_save_header(const vla_config *cfg, FILE *f);
int vla_model_load_header(const vla_config *cfg, FILE *f);
#endif
