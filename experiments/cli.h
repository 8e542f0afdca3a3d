/* cli.h: what every experiment program shares. cli.c: the common options (model, tracking,
 * precision, stream, sizes, seed, output, checkpoints, backend, --set), --help and --man (through
 * doc.c), provenance, and the engines a run needs; drive.c: the driver, which advances
 * a program's runs and their references on an engine (lib's vla_engine: the one place runs
 * advance) from checkpoint to checkpoint, with checkpoint files, resumption, signals and progress. */
#ifndef VLA_CLI_H
#define VLA_CLI_H
#include "vlastab.h"

typedef enum { REF_NONE, REF_EXACT, REF_F64 } vla_ref_kind;
#define VLA_CLI_MAXSETS 64 /* settings in a trace's model.txt */

typedef struct {
    vla_config cfg;
    const char *stream;   /* --stream, default "gauss" */
    long steps;           /* --steps (a chunk form's: rounded down to a multiple of C) */
    long whole_steps;     /* ... before that rounding: vla-check --outputs judges every step */
    int runs;             /* --runs: independent heads */
    uint64_t seed;        /* --seed */
    const char *out;      /* --out, default "-" */
    int per_decade;       /* --checkpoints */
    const char *backend;  /* --backend cpu|lanes|cuda|emu */
    vla_ref_kind ref;     /* --ref exact|f64|none */
    long ref_bits;        /* --ref-bits */
    int resume;           /* --resume */
    const char *models;   /* --models a,b,c where a program takes several (else NULL) */
    unsigned optional;    /* a trace's optional files (VLA_IN_*: vla_stream_optional) */
    long nseq, *cu;       /* a trace's packed sequences (cu_seqlens.npy; nseq 0: one) */
    /* A trace's model.txt (docs/trace.md): its path ("DIR/model.txt"; NULL: the stream has none),
     * the model it names, and its settings "NAME=VALUE", applied before the command line's --set
     * (vla_cli_config_for too). The model is the file's unless --model is given (model_opt). */
    const char *model_txt;
    vla_model_kind txt_model;
    int nsets, model_opt;
    int many_models; /* the spec's: the program may run several models (--models) */
    const char *sets[VLA_CLI_MAXSETS];
    int argc;
    char **argv;
} vla_cli;

#include "doc.h"
#include "summary.h"
/* A program's own option: --NAME ARG (arg NULL: a flag). */
typedef vla_doc_item vla_cli_opt;

typedef struct {
    const char *prog;        /* vla-drift */
    const char *summary;     /* one paragraph: what the program measures */
    const char *columns;     /* the output columns, one line each "name  meaning" */
    const char *example;     /* command lines, one a line (two or three) */
    const char *phrase;      /* the man page's NAME phrase */
    long default_steps;
    const char *default_stream;
    vla_model_kind default_model;
    vla_ref_kind default_ref;
    int many_models;         /* runs several models: no warning of a file one of them skips */
    const vla_cli_opt *opts; /* the program's own options, NULL-terminated */
    /* called for each of the program's own options; nonzero = bad value (message printed) */
    int (*on_opt)(void *ctx, const char *name, const char *val);
    void *ctx;
    const vla_doc_item *exit; /* the program's exit statuses, NULL-terminated (NULL: cli.c's) */
    int packed; /* restarts its runs at a trace's packed sequences (cu_seqlens.npy): vla-check;
                   the others refuse such a trace (exit 2) */
} vla_cli_spec;

/* Parses argv; prints --help or --version and exits 0, or a one-line error and exits 2. A
 * configuration the backend or the reference cannot run is a usage error too. */
void vla_cli_parse(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv);
/* a usage error after parsing: "PROG: MESSAGE (try --help)" and exit 2 */
void vla_cli_die(const vla_cli_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* the models that track A, from the model table: "rls, vla1 or vla3" */
const char *vla_cli_models_with_A(void);
/* a run that failed (out of memory, an input that cannot be read, a reference that failed):
 * "PROG: MESSAGE" and exit 1 */
void vla_cli_fail(const vla_cli_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* the common provenance lines of section 9 into an open table */
void vla_cli_provenance(vla_dat *f, const vla_cli *c);
/* "q.npy k.npy v.npy beta.npy; u = k (no u.npy), ...": a trace's files and the fallbacks of the
 * absent ones, for the header and reports ("a synthetic stream" for the others) */
void vla_cli_stream_files(const vla_cli *c, char *buf, size_t len);
/* The trace's files that configuration g does not read, in words ("decay.npy is not read by delta
 * with delta_form=gated (only by ...)", "; " between files) into buf: their number (0: it reads
 * every file the trace has). A program says them on stderr and in its header's "# unread:" line. */
int vla_cli_unread(const vla_cli *c, const vla_config *g, char *buf, size_t len);
/* Whether the stream's inputs fit cfg's form: 0, or VLA_ENOTSUP with the reason in err
 * (vla_form_input_check: delta's row gates in a chunk or a scan, on the first step; a decay of 0 in
 * a chunk, on every step of every run of a stream that carries decays, and the reason then names
 * the head and the step) */
int vla_cli_form_input_check(const vla_cli *c, const vla_config *cfg, vla_error *err);
/* Whether the trace's gates fit cfg's model: 0, or VLA_EINVAL with the reason in err (a log-decay
 * per key channel for a model that takes one per token) */
int vla_cli_gates_check(const vla_cli *c, const vla_config *cfg, vla_error *err);
/* Every --set of the command line read by at least one of the n configurations the program runs
 * (vla_setting_read); else a usage error (exit 2) naming the setting and what reads it. The
 * parser calls it with the one configuration of a program without --models, --forms or --tracks;
 * a program with them, with its list. */
void vla_cli_sets_read(const vla_cli *c, const vla_cli_spec *spec, const vla_config *cfgs, int n);
/* Where c's model came from, in words: " (from DIR/model.txt)", " (the program's default)",
 * " (--model; DIR/model.txt names gdn)", and "" for --model alone; with header, " (--model)" for
 * it, and the model.txt's settings named. how: another source of the models ("--models all") in
 * place of --model, or NULL. */
const char *vla_cli_model_src(const vla_cli *c, const char *how, int header);
/* the configuration of model mk as the command line makes it: the model's defaults at c's d,
 * then c's dv, precision, mode and way, then the trace's model.txt's settings and every --set in
 * order */
void vla_cli_config_for(const vla_cli *c, vla_model_kind mk, vla_config *cfg);
/* The program's table (--out), opened; on failure "PROG: cannot write OUT: why" and exit 1.
 * SIGINT and SIGTERM set vla_cli_stop from the end of vla_cli_parse on (vla_cli_signals): a
 * program polls the flag (its engines stop on it) and exits 3. A table still open when the
 * program exits (a usage error found after it was opened: vla_cli_die) is discarded. */
vla_dat *vla_cli_out(const vla_cli *c, const vla_cli_spec *spec);
/* Whether path names one of the trace's files (the same file, through links and other names):
 * then 1, and which it is in which. An output never replaces an input. */
int vla_cli_is_input(const vla_cli *c, const char *path, char *which, size_t len);
/* Closes it: status, or 1 after "PROG: writing OUT failed: why" when status was 0 and the table
 * could not be written whole (a table closed before its columns line is discarded, unsaid, and
 * so is every table when status is not 0). */
int vla_cli_close(vla_dat *out, const vla_cli *c, const vla_cli_spec *spec, int status);
/* the number of threads runs are spread over (OpenMP, else 1) */
int vla_cli_threads(void);
/* the reference's kind as the header states it */
const char *vla_ref_name(const vla_cli *c);

/* the options every program on this parser takes, NULL-terminated */
const vla_cli_opt *vla_cli_common(void);

/* ---- engines ---- */

/* The engine spec of c's runs in configuration cfg (which may differ from c->cfg: programs that
 * run several models), on c's backend and stream, with c's stop flag (drive.c's signals). */
void vla_cli_engine_spec(const vla_cli *c, const vla_config *cfg, vla_engine_spec *sp);
/* The spec of the reference of runs of sp as c asks for it (0; 1 when c has no reference): f64 is
 * lib in binary64 on the inputs rounded to the run's io format, on the run's backend where it
 * runs there, else on the cpu; exact is MPFR at c->ref_bits; either in the seq form. */
int vla_cli_ref_spec(const vla_cli *c, const vla_engine_spec *sp, vla_engine_spec *ref);

/* ---- the driver: runs in parallel, rows in memory, checkpoints, one table at the end ---- */

/* one run as a program's measures see it at a checkpoint: its engine and its reference's */
typedef struct {
    vla_engine *m, *ref; /* ref NULL without a reference */
    int run;             /* the run's index in both engines (its head: the stream's head run) */
    long t;              /* the step */
} vla_run;

typedef struct {
    double *v;
    long n, cap; /* rows */
    int ncol;
} vla_rows;
int vla_rows_add(vla_rows *r, const double *row);

typedef struct {
    const char *columns;  /* "t s_fro ..." */
    size_t acc_size;      /* a run's accumulator: plain data (no pointers), saved in checkpoints */
    unsigned taps;        /* what on_step needs besides the inputs (VLA_TAP_*) */
    /* before step 1 (not on resume) */
    int (*init)(vla_run *r, void *acc, void *ctx);
    /* after every step of every run (may be NULL); runs may be visited from several threads */
    int (*on_step)(const vla_step_view *v, void *acc, void *ctx);
    /* at each checkpoint step (log-spaced, --checkpoints per decade, and the last): add one row,
     * its first column the step */
    int (*on_checkpoint)(vla_run *r, void *acc, vla_rows *rows, void *ctx);
    /* whether an accumulator read back from a checkpoint at step t, beside the rows written until
     * then, can be this program's: 0, or VLA_EFORMAT for a damaged one (required when acc_size) */
    int (*check)(const void *acc, const vla_rows *rows, long t, void *ctx);
    void *ctx;
} vla_driver;

/* Runs c->runs heads over c->steps steps (runs spread over threads; the output is the same bits
 * whatever the thread count and the backend), then writes one block per run into out. With
 * c->resume, each run continues from its checkpoint in OUT.ckpt (one file); checkpoints are written
 * every VLA_CHECKPOINT_SECONDS (60) and when SIGINT or SIGTERM arrives (then the program exits 3,
 * saying how to resume), beside OUT when it is a regular file (or none yet). A checkpoint carries
 * a checksum and the run's key (every option that decides its numbers, constants exactly, a
 * trace by its contents) and the build; a damaged one is said and its run starts over; one of
 * another run or build is refused (2), naming what differs, and kept. Returns 0, 2, 3, or 1
 * after the failing run's reason. */
int vla_drive(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, vla_dat *out);

/* Checkpoints of a program's units of work, for the programs that do not run on vla_drive
 * (vla-forms, vla-heatmap, vla-recall, vla-scaling, vla-grad, vla-check): a unit is the smallest
 * piece whose result is cheap to keep (a row, a head, a snapshot, a timing, a group of rows), its
 * result opaque bytes.
 * The file, its key, checksums, atomic save, --out rules and the rule that it goes when the
 * program exits 0 are vla_drive's (OUT.ckpt, one record per unit). vla_units_open reads it with
 * c->resume (a checkpoint of another command is refused, naming the option that differs: the
 * key is vla_drive's, with --runs, extra's "NAME=VALUE" lines and every one of the program's own
 * options); a finished unit goes to vla_units_save, and is written every VLA_CHECKPOINT_SECONDS
 * (60) and at a stop, so that a resume skips the units finished before the stop and the one in
 * progress starts over. noun names a unit in the messages ("row"). open returns 0, or the exit
 * status after its message (1, 2, 3). */
typedef struct vla_units vla_units;
int vla_units_open(vla_units **u, const vla_cli *c, const vla_cli_spec *spec, const char *noun,
                   const char *extra, int n, size_t max);
/* unit i's bytes when it was finished before (read from the checkpoint, or saved), else NULL */
const void *vla_units_get(const vla_units *u, int i, size_t *len);
/* unit i finished, its result rec (len bytes, at most open's max); VLA_OK or VLA_ENOMEM */
int vla_units_save(vla_units *u, int i, const void *rec, size_t len);
/* the same, kept for the next write but not writing (a unit that is only whole with the one
 * saved after it: vla-forms' sweep) */
int vla_units_keep(vla_units *u, int i, const void *rec, size_t len);
/* whether the checkpoint is due to be written: VLA_CHECKPOINT_SECONDS passed since the last write
 * (vla_units_save writes it now), or a stop came (vla_units_end writes it); never without a file.
 * A program whose unit is costly to make (a copy of every engine's state) makes it only then. */
int vla_units_due(const vla_units *u);
/* unit i not finished after all (a program whose units go on from one another starts over) */
void vla_units_drop(vla_units *u, int i);
/* The end, with the program's exit status: 3 (a stop) writes the checkpoint and says what was
 * saved and how to resume; 0 has the checkpoint removed when the program exits 0. Frees u;
 * returns status. */
int vla_units_end(vla_units *u, int status);
void vla_units_free(vla_units *u);

/* Whether run's state (S, A where the model has one, the last read-out) holds only finite
 * numbers; buf holds d * max(d, dv) doubles. The driver checks it at every checkpoint step. */
int vla_cli_run_finite(vla_engine *e, int run, double *buf);
/* The one warning of numbers that turned non-finite, on stderr, and the same words in the table's
 * header (out: an open table before its columns line, or NULL): "PROG: warning: WHAT is not
 * finite (Inf or NaN) in NBAD of NRUNS runs, first in head HEAD at step STEP (WHERE); ROWS", what
 * ("the state of the model") and where ("checked at the table's steps") saying what was checked,
 * rows what the table shows. */
void vla_cli_nonfinite(vla_dat *out, const char *prog, const char *what, long nbad, long nruns,
                       int head, long step, const char *where, const char *rows);
/* Whether run's read-out is exactly 0 while its reference's is not (0 without a reference): a
 * denominator that overflowed to Inf gives o = S x / Inf = 0 with every stored number finite.
 * buf: dv doubles. */
int vla_cli_zero_readout(vla_engine *m, vla_engine *ref, int run, double *buf);
/* The read-outs of e's runs whose denominator overflowed (vla_counts.den_inf: o = S x / Inf = 0),
 * added to a summary as a loud clause naming what (a block's name, or "" for the program's runs),
 * how many read-outs in how many runs, and the first (head, step); 1 when there were any */
int vla_cli_den_summary(vla_summary *s, vla_engine *e, const char *what);
/* The entries of e's runs clamped at the state cache's largest (vla_counts.cache_sat: e4m3,
 * e5m2, int8, int16 saturate silently, as a kernel's satfinite cast does), added to a summary as
 * a loud clause naming what, how many entries in how many runs, and the head with the most; 1
 * when there were any */
int vla_cli_cache_summary(vla_summary *s, vla_engine *e, const char *what);
/* The summary of a driven program's runs, in the table's header ("# summary:") and, when a
 * read-out was exactly 0 or a measured error (a column *relerr or a_drift) reached 1, on stderr:
 * non-finite runs, read-outs exactly 0 (zero_den[h]: because the denominator overflowed, counted
 * by the model with its first step, zero_n[h] times; else found against the reference at a
 * checkpoint), the state cache's clamped entries (m's counts; m may be NULL), and the first step
 * at which each error reached 1, each with its head and step. */
void vla_cli_summary(const char *prog, const vla_cli *c, const char *columns, const vla_rows *rows,
                     const long *inf_at, const long *zero_at, const char *zero_den,
                     const long *zero_n, vla_engine *m, vla_dat *out);
/* A program's summary (summary.h), said on stderr when loud and written into the table's header
 * (out: an open table before its columns line, or NULL) as "# summary: ..." */
void vla_cli_summary_end(const vla_summary *s, const char *prog, vla_dat *out);
/* The solves of e's runs (the ways that keep M; else 0): a summary for the table's header in head,
 * and in warn the first failure (code VLA_ERANGE, the step and the value), code 0 when none failed
 * (drive.c) */
int vla_cli_solver_report(vla_engine *e, char *head, size_t hlen, vla_error *warn);
/* the signal flag the engines stop on (set by SIGINT and SIGTERM once vla_cli_signals ran;
 * signals.c) */
extern volatile sig_atomic_t vla_cli_stop;
void vla_cli_signals(void);

/* One head's inputs for a backward (vla_backward_new, vla_grad), a window of steps at a time:
 * x opened by vla_inputs_open_part for that head alone, a window of the backward's block length
 * K (x.T), T the steps of the run; vla_cli_window_input (a vla_grad_input, ctx a vla_cli_window)
 * fills the window with the block of K steps that holds the step asked for, so that a backward's
 * forward and each of its blocks read every step once and the memory is a block's, not T's
 * (vla-check's judge, vla-grad). VLA_EINTR once vla_cli_stop is set; a fill's error, said in
 * err. */
typedef struct {
    vla_inputs x;
    long t0, n, T; /* the window holds steps t0 .. t0 + n - 1 of T */
    vla_error err; /* why a fill failed */
} vla_cli_window;
int vla_cli_window_input(void *ctx, long t, vla_input *in);

/* Progress on stderr, "done/total UNIT, rate UNIT/s, ETA s": on a terminal at most once a second,
 * on a line that vla_progress_end clears; elsewhere (a CI log, a file, a pipe) as lines of their
 * own, "PROG: progress: ...", every VLA_PROGRESS_SECONDS seconds (default 30; 0: at every update;
 * off: none), so that a long run in a log says it is alive. A program whose loop runs on several
 * threads calls update inside a critical section. */
typedef struct {
    double t0, last, every; /* every: seconds between lines off a terminal (< 0: none) */
    long total;
    int tty;
    const char *unit; /* what is counted: "steps", "head-steps", "points" */
} vla_progress;
void vla_progress_start(vla_progress *p, long total, const char *unit);
void vla_progress_update(vla_progress *p, long done);
void vla_progress_end(vla_progress *p);
double vla_cli_now(void);
#endif
