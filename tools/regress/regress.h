/* regress.h: the suite of vla-regress (regress.c): its fixed sizes, the cases and their results,
 * a run of a selection, the baseline file and the verdicts of a run against it. Used by
 * vla-regress.c (main) and tests/test_regress.c. */
#ifndef VLA_REGRESS_H
#define VLA_REGRESS_H
#include "vlastab.h"
#include "summary.h"
#include "vlacuda.h"
#include <stdint.h>
#include <stdio.h>

/* ---- the suite: fixed, so that its numbers mean the same from one commit to the next ---- */

/* d = 16 and 300 steps keep the 256-bit reference cheap (the whole suite in under a minute of
 * CPU time) while leaving each case a few hundred roundings to accumulate; the trace has the
 * real model's head size and its four heads. Four heads per case, and the mean over the last
 * decade's checkpoints, make a case's number a property of its arithmetic rather than of one
 * run's particular rounding errors (see RG_MARGIN). */
#define RG_D 16
#define RG_D_TRACE 32
#define RG_T 300
#define RG_HEADS 4
#define RG_PER_DECADE 10
#define RG_REF_BITS 256
#define RG_MAX_CK 64
/* An error below u / 2^10 is reported as 2^-10 u: such a case lost nothing worth a number, and
 * log2(0) is no number. */
#define RG_FLOOR (-10.0)
/* Strict mode is deterministic: the same code gives the same bits, so the run-to-run spread is
 * zero and any margin would do for a rerun. The margin is there for changes that move the
 * rounding errors without making them worse: a reduction summed in another order, a libm whose
 * exp or log differs in the last bit (and so the inputs). Summing every dot product from its
 * last term (tests/regress/plants/3.sed) moved the 408 cases by -0.28..+0.27 bit (mean |change| 0.02); with
 * one head and the worst checkpoint instead of the mean, by up to 1.5 bits, which is why the
 * number is a mean. Half a bit is above that spread and below what the faults cost that this
 * check exists for (binary16 accumulation in f16-f32: up to +1.8 bits). */
#define RG_MARGIN 0.5

/* the backends a case can run on, VLA_BACKEND_<ID> (kernels/vlacuda.h: VLA_BACKENDS, what each
 * runs: vla_backend_supports): cuda, the GPU; emu, the same kernel text on host threads (slow; it
 * checks the block decomposition, never chosen by default); lanes, the recurrences on the CPU's
 * vector lanes, the heads of a case side by side */

typedef struct {
    int backend, stream;
    vla_config cfg;
    char name[96]; /* model/track/precision/stream: the same on every backend */
    int group;     /* its reference */
} rg_case;

/* one case's measured numbers */
typedef struct {
    double bits[3]; /* A, S, o; NAN: the model has no A; INFINITY: non-finite */
    uint64_t fp;    /* the bits of every checkpointed state and the event counts */
    int ran;
    char err[200];
} rg_result;

typedef struct {
    vla_config form;        /* its form and chunk: the form the suite runs in (seq by default) */
    unsigned backends;      /* bits of the backends to run; 0: every available one */
    const char *only;       /* comma-separated fnmatch patterns on the case name; NULL: all */
    const char *trace;      /* the trace folder; NULL: find it */
    const char *baseline;   /* the baseline file */
    double margin;
    int update, bits, list, changed_only;
} rg_opts;

typedef struct {
    vla_config form; /* the form the suite ran in */
    int n;
    rg_case *cases;
    rg_result *res;
    char notes[4][300]; /* what was skipped, and why */
    int nnotes;
    char trace_dir[4096];
    double seconds;
} rg_run;

typedef struct {
    char name[96];
    double bits[3];
    uint64_t fp;
    int used;
} rg_row;

typedef struct {
    int n;
    rg_row *rows;
    char suite[300];
} rg_baseline;

#define RG_BASELINE_MAX (1L << 20) /* 40 times the suite's rows */

enum { V_SAME, V_CHANGED, V_BETTER, V_NEW, V_WORSE, V_NONFINITE, V_ERROR, V_NV };
extern const char *const rg_vname[V_NV];

/* ---- the calls (regress.c) ---- */

void rg_config(vla_config *cfg, vla_model_kind m, vla_track tr, vla_prec p, int d,
               const vla_config *form);
void rg_case_name(char *buf, size_t len, const vla_config *cfg, int stream);
int rg_suite(rg_case **out, unsigned backends, const vla_config *form);
int rg_find_trace(char *buf, size_t len);
void rg_run_free(rg_run *r);
int rg_execute(const rg_opts *o, rg_run *run);
void rg_suite_line(char *buf, size_t len);
int rg_baseline_read(rg_baseline *b, const char *path, vla_error *err);
int rg_baseline_write(const char *path, const rg_run *run, rg_baseline *old);
int rg_verdict(const rg_result *r, const rg_row *b, double margin, double *worst);
int rg_is_failure(int v, int bits);
void rg_summary(vla_summary *s, const rg_opts *o, const rg_run *run, rg_baseline *base);
int rg_report(FILE *out, const rg_opts *o, const rg_run *run, rg_baseline *base);
rg_row *rg_baseline_find(rg_baseline *b, const char *name);

#endif
