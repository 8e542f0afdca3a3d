/* sweep.h: what the parts of vla-sweep share. The parser (parse.c) reads a sweep file into a
 * sweep_t and expands it into cases; the runner (run.c) spawns a case, waits for it and keeps the
 * manifest; the schedulers hand the cases out: local.c (N workers), mpi.c (under mpirun, the one
 * file mpicc builds) and slurm.c (a job-array script); vla-sweep.c holds the help and main,
 * util.c the exits and memory that all of them call. */
#ifndef VLA_SWEEP_H
#define VLA_SWEEP_H
#define _GNU_SOURCE
#include "vlastab.h"
#include "doc.h"
#include "file.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#define PROG "vla-sweep"
#define MSGLEN 400
#define SLURM_MAX_TASKS 1000 /* Slurm's default MaxArraySize is 1001 */
#define SWEEP_MAX_BYTES (1L << 20) /* a sweep file is a page of directives, not a stream */
#define MANIFEST_MAX_BYTES (256L << 20) /* a row of a few hundred bytes a case */

/* ---- the sweep file ---- */

typedef struct {
    char *opt; /* "--model" */
    int n;
    char **val, **label;
    int line;
} axis_t;

typedef struct {
    char *prog;    /* as written */
    char *path;    /* what is executed */
    char *display; /* argv[0] of the cases: how the tables' command lines will read */
    char **fixed;
    int nfixed;
    axis_t *axes;
    int naxes;
    char *tpl; /* the name template */
    int tpl_line; /* ... its line (0: the default) */
    int resume;
    int alone; /* its cases run with no other case beside them (timings) */
    int line;
} section_t;

typedef struct {
    const char *file;
    char *name; /* NAME of NAME.sweep: the manifest and the Slurm files carry it */
    char *out;
    char **slurm;
    int nslurm;
    int chunk;
    section_t *sec;
    int nsec;
} sweep_t;

enum { C_TODO, C_COMPLETE, C_OK, C_FAILED, C_PENDING };

typedef struct {
    char *name;
    int sec;
    char **argv; /* NULL-terminated, --out OUT/NAME.dat last */
    int argc;
    char *out, *log;
    char *command; /* argv quoted for a shell */
    int state;
    double secs; /* NAN: not known */
    char msg[MSGLEN];
    char said[MSGLEN]; /* the summary its program said on stderr (summary.h): what it found */
} case_t;

/* the runner's account of a sweep: its cases, how many are done, the manifest */
typedef struct {
    const sweep_t *sw;
    case_t *cs;
    int n, ntodo, ndone, quiet;
    char *manifest;
    double last_write;
} report_t;

/* the signal that stops the sweep (SIGINT, SIGTERM), 0 while none came (run.c) */
extern volatile sig_atomic_t stop_sig;
/* set by the exits on an error (util.c) */
extern volatile int abandoned;

/* util.c: the exits and memory */
void usage_exit(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
int out_status(int status); /* status, or 1 (said) when standard output failed */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);
char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double now(void);

/* parse.c: the sweep file and its cases */
void perr(const sweep_t *sw, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
void resolve(section_t *s, const char *self, const sweep_t *sw, int must);
int has_control(const char *s);
char *sbatch_word(const char *w, int pct);
void parse_sweep(sweep_t *sw, const char *file);
void quote_into(char **buf, size_t *n, size_t *cap, const char *a, int exact);
char *quote_argv(char **argv);
int exists(const char *p);
case_t *expand(const sweep_t *sw, const char *out, int *ncases);

/* run.c: the output tree, the manifest, running one case, reporting, signals */
int mkdirs(const char *path); /* mkdir -p of path's folders, and of path itself if dir */
char *lock_tree(const char *tree);
char *replaceable(const char *path);
void carry_all(const sweep_t *sw, const char *out, const char *manifest, case_t *cs, int n);
char **worker_env(const char *gpu, int threads);
void free_env(char **env);
int gpu_ids(char ***ids);
int ncores(void);
pid_t spawn(const sweep_t *sw, case_t *c, char **env);
void finish(case_t *c, int status, double secs);
void save(report_t *r, int force);
void report(report_t *r, case_t *c);
int summary(report_t *r);
void block_signals(sigset_t *set);
void wait_signal(const sigset_t *set, double timeout);

/* the schedulers: local.c, mpi.c, slurm.c */
void run_local(const sweep_t *sw, report_t *r, const int *todo, int ntodo, int jobs);
/* whether this build has MPI (mpi.c built by mpicc); the run under mpirun (it ends the process) */
extern const int sweep_has_mpi;
void sweep_mpi(const sweep_t *sw, report_t *r, const int *todo, int ntodo, int nalone,
               const char *tree, int *argc, char ***argv) __attribute__((noreturn));
int write_slurm(const sweep_t *sw, const case_t *cs, int n, const char *out, int chunk,
                const char *script);

#endif
