/* cli.h: what every experiment program shares: the common options of the issue (model, tracking,
 * precision, stream, sizes, seed, output, checkpoints, backend, --set), --help and --version, and
 * the run: one model per head stepped over its stream beside an optional reference, with
 * checkpoint steps, progress on a terminal, and resumable state. */
#ifndef VLA_CLI_H
#define VLA_CLI_H
#include "vlastab.h"

typedef enum { REF_NONE, REF_EXACT, REF_F64 } vla_ref_kind;

typedef struct {
    vla_config cfg;
    const char *stream;   /* --stream, default "gauss" */
    long steps;           /* --steps */
    int runs;             /* --runs: independent heads */
    uint64_t seed;        /* --seed */
    const char *out;      /* --out, default "-" */
    int per_decade;       /* --checkpoints */
    const char *backend;  /* --backend cpu|cuda */
    vla_ref_kind ref;     /* --ref exact|f64|none */
    long ref_bits;        /* --ref-bits */
    int resume;           /* --resume */
    const char *models;   /* --models a,b,c where a program takes several (else NULL) */
    int argc;
    char **argv;
} vla_cli;

/* A program's own option: --NAME ARG (arg NULL: a flag). */
typedef struct {
    const char *name, *arg, *help;
} vla_cli_opt;

typedef struct {
    const char *prog;        /* vla-drift */
    const char *summary;     /* one paragraph: what the program measures */
    const char *columns;     /* the output columns, one line each "name  meaning" */
    const char *example;     /* a command line */
    long default_steps;
    const char *default_stream;
    vla_model_kind default_model;
    vla_ref_kind default_ref;
    const vla_cli_opt *opts; /* the program's own options, NULL-terminated */
    /* called for each of the program's own options; nonzero = bad value (message printed) */
    int (*on_opt)(void *ctx, const char *name, const char *val);
    void *ctx;
} vla_cli_spec;

/* Parses argv; prints --help or --version and exits 0, or a one-line error and exits 2. */
void vla_cli_parse(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv);
/* a usage error after parsing: "PROG: MESSAGE" and exit 2 */
void vla_cli_die(const vla_cli_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* the common provenance lines of section 9 into an open table */
void vla_cli_provenance(vla_dat *f, const vla_cli *c);
/* the number of threads runs are spread over (OpenMP, else 1) */
int vla_cli_threads(void);

/* ---- one run: a head of the stream, its model and optional reference ---- */
typedef struct {
    vla_model *m, *ref;
    vla_stream *s;
    vla_step_buf buf;
    vla_step_buf rbuf; /* --ref f64: the inputs rounded to the run's storage format first */
    int round_ref;     /* ... when that format is narrower than binary64 */
    int head;
    long t;
    int is_read; /* the last step was a read (mqar query) */
} vla_run;

/* Opens the stream and the models of run `head`; cfg may differ from c->cfg (programs that run
 * several models). On failure writes a one-line reason to err. */
int vla_run_open(vla_run *r, const vla_cli *c, const vla_config *cfg, int head, char *err,
                 size_t errlen);
/* Step t+1: the model (and the reference) take the stream's inputs, or read on a read step. */
int vla_run_step(vla_run *r);
void vla_run_close(vla_run *r);
/* the reference's kind as the header states it */
const char *vla_ref_name(const vla_cli *c);

/* ---- the driver: runs in parallel, rows in memory, checkpoints, one table at the end ---- */
typedef struct {
    double *v;
    long n, cap; /* rows */
    int ncol;
} vla_rows;
int vla_rows_add(vla_rows *r, const double *row);

typedef struct {
    const char *columns;  /* "t s_fro ..." */
    size_t acc_size;      /* a run's accumulator: plain data (no pointers), saved in checkpoints */
    /* before step 1 (not on resume) */
    int (*init)(vla_run *r, void *acc, void *ctx);
    /* after every step; may be NULL */
    int (*on_step)(vla_run *r, void *acc, void *ctx);
    /* at each checkpoint step (log-spaced, --checkpoints per decade, and the last): add rows */
    int (*on_checkpoint)(vla_run *r, void *acc, vla_rows *rows, void *ctx);
    void *ctx;
} vla_driver;

/* Runs c->runs heads over c->steps steps (runs spread over threads; the output is the same bits
 * whatever the thread count), then writes one block per run into out. With c->resume, each run
 * continues from its checkpoint file OUT.ckpt.HEAD; checkpoints are written every minute and
 * when SIGINT or SIGTERM arrives (then the program exits 3, saying how to resume). Returns 0 or
 * prints the failing run's reason and returns 1. */
int vla_drive(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, vla_dat *out);

/* Whether the state of m (S, A where the model has one, the last read-out) holds only finite
 * numbers; buf holds d * max(d, dv) doubles. The driver checks it at every checkpoint step. */
int vla_cli_model_finite(const vla_model *m, double *buf);
/* The one warning of a state that turned non-finite, on stderr: "PROG: warning: the state of the
 * model (in_ref: the reference) is not finite (Inf or NaN) in NBAD of NRUNS runs, first in head
 * HEAD at step STEP (checked at the table's steps); ROWS", rows saying what the table shows. */
void vla_cli_warn_nonfinite(const char *prog, int in_ref, int nbad, int nruns, int head, long step,
                            const char *rows);

/* progress on stderr when it is a terminal: at most a line a second */
typedef struct {
    double t0, last;
    long total;
} vla_progress;
void vla_progress_start(vla_progress *p, long total);
void vla_progress_update(vla_progress *p, long done);
void vla_progress_end(vla_progress *p);
#endif
