/* proc.h: the tests' helpers for what runs the programs: temporary trees, whole files, a child
 * process with a timeout (a hang is a failure, not a stuck suite), and a table without the lines
 * that differ between two runs of one command. tests/proc.c; test_hardening.c and
 * test_reliability.c use them. */
#ifndef VLA_TEST_PROC_H
#define VLA_TEST_PROC_H
#include "vlastab.h"
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* $TMPDIR/vla-hardening-XXXXXX, made; NULL on failure */
char *make_tmpdir(char *buf, size_t len);
/* removes a directory and what is in it (traces live in subdirectories) */
void remove_tree(const char *dir);
int exists(const char *path);
/* the program bin/NAME (or $VLA_BIN_DIR/NAME) as an absolute path, NULL when it is not built */
const char *program(const char *name);
/* a whole file written (a failed CHECK otherwise) or read (NUL-terminated, *len its size) */
void write_bytes(const char *path, const void *data, size_t n);
char *read_all(const char *path, size_t *len);
/* a gdn trace in dir: q, k (heads x T x d) and v (dv) standard normals of seed's Philox stream,
 * beta sigmoid of one, the log-decays -0.05 |one|, each rounded to the format round (VLA_FMT_F64:
 * as drawn); model.txt "model gdn": 0, or 1 when a file could not be written */
int write_gdn_trace(const char *dir, int heads, long T, int d, int dv, uint64_t seed,
                    vla_fmt round);
/* a judge's folder from its template dir (mkdtemp) with empty subfolders tr (DIR/tr, the trace's)
 * and out (DIR/NAME): 0, else 1 after a skip (no bin/vla-check) or a failed check */
int judge_folder(char *dir, char *tr, char *out, const char *name);
/* a .npy file opened for its data after the header: dict, the header's text, padded as numpy pads
 * it (version 1.0, 64 bytes); NULL when it cannot be written */
FILE *npy_open(const char *path, const char *dict);
/* a .npy of n integers (vla-check --states' positions.npy) of numpy's dtype descr ('<i8', '<i4'):
 * 0, or 1 when it could not be written */
int write_npy_ints(const char *path, const char *descr, const long *v, int n);

typedef struct {
    pid_t pid;
    char err[600]; /* the child's stderr goes to this file */
    long maxrss_kb;  /* its peak resident memory, once finish saw it end */
    char rss[620];   /* spawn_measured: where the runner's fresh copy writes the program's peak */
} child;
/* Starts argv[0] with argv in directory cwd (NULL: here), env entries "K=V" added, stdout to
 * /dev/null and stderr to a file. */
int spawn(child *ch, const char *cwd, char *const argv[], char *const env[]);
/* As spawn (here, no env), for a child whose peak memory finish reports as its own. A process's
 * ru_maxrss counts the memory of the process it was forked from (Linux keeps the larger at exec):
 * late in the suite this runner holds tens of MB, more than the programs measured. So a fresh
 * copy of the runner (exec'd: small) forks the program, waits for it and writes its peak into
 * ch->rss for finish; signals sent to ch->pid reach that copy, not the program. */
int spawn_measured(child *ch, char *const argv[]);
/* tests/main.c's entry for that copy: argv = {runner, "--measure-rss", FILE, program, args...} */
int measure_rss_main(char **argv);
/* The child's status: its exit code, 128 + the signal that ended it, or -1 when it ran past
 * timeout seconds (then it is killed: a hang). */
int finish(child *ch, double timeout);
/* runs to the end; the child's stderr into msg (NUL-terminated), the status returned */
int run(const char *cwd, char *const argv[], char *const env[], char *msg, size_t len,
        double timeout);
/* as run, but the child's stderr is a terminal (a pseudo-terminal, what it wrote read back into
 * msg): what a program shows only on a terminal; -3 when no pseudo-terminal can be had */
int run_tty(const char *cwd, char *const argv[], char *const env[], char *msg, size_t len,
            double timeout);
double seconds_since(const struct timespec *t0);
/* Waits, up to timeout seconds, until process pid catches sig (its handler set: the SigCgt mask
 * of /proc/PID/status), so that a test's signal is answered by the program, not by the default
 * action of a process still starting; 1 when it does, 0 when it ended or the time ran out. */
int wait_catching(pid_t pid, int sig, double timeout);
/* A test's programs and scratch folder: n pairs (a program's name, where its path goes), and dir
 * made; 0 when a program is not built (the test is skipped, saying which) or no folder can be
 * made (a failed check) */
int begin(char *dir, size_t len, int n, ...);
/* a table without its "# command:" and "# date:" lines, which differ between runs of one command
 * (the command by --resume); NULL when it cannot be read */
char *table_body(const char *path);
/* the shell's limit on a child's address space, in kB: none under AddressSanitizer (make test-san),
 * whose shadow memory alone reserves terabytes of it (the child would die at its start) */
#ifdef __SANITIZE_ADDRESS__
#define VLA_ULIMIT_V(kb) ""
#else
#define VLA_ULIMIT_V(kb) "ulimit -v " #kb " && "
#endif
#endif
