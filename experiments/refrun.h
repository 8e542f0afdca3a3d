/* refrun.h: what vla-check's rows and its judge of a kernel's outputs (judge.c) share to run their
 * references: the taps that keep a window's read-outs, and the exact references in double-double,
 * checked against MPFR, with the counts that the table's header reports (refrun.c). */
#ifndef VLA_REFRUN_H
#define VLA_REFRUN_H
#include "cli.h"
#include "vlaref.h"

/* steps per advance: the inputs of a window are read once for a group's engines, and its
 * read-outs kept for the comparison */
#define WIN 256
/* the read-outs are kept by step modulo RING: a window plus the unfinished chunk before it, whose
 * tokens' read-outs come at the chunk's end, in the next window when another row's checkpoint
 * ends a window inside the chunk (seq's checkpoints beside chunk:64's, the default forms) */
#define RING (WIN + VLA_CHUNK_MAX)

/* the read-outs of a window, from an engine's taps (vla_engine_spec's on_step, ctx a taps_t) */
typedef struct {
    double *o;       /* runs x RING x dv, step t at (t - 1) % RING */
    unsigned char *seen; /* runs x RING: whether the step has a read-out (not inside a chunk) */
    int dv, C;       /* C: the chunk form's C (its read-outs come a chunk at a time), else 1 */
    /* the model's engine: its a_moved_diag window, each step's added by moved(mctx, run, n)
     * (NULL for the reference) */
    void (*moved)(void *mctx, int run, long n);
    void *mctx;
} taps_t;
int taps_on_step(void *ctx, const vla_step_view *v);

/* the f64 rows' exact references (and --outputs' two): in double-double (vref_backend_dd) where
 * 256 bits are asked for, each checked against MPFR on its head 0 (vref_ddcheck); a group (or a
 * reference of the judge) whose check fails runs again with MPFR, and so does one that dd cannot
 * run. The header says which and how close (refck_describe). */
typedef struct {
    long dd, mpfr;  /* groups whose reference was dd, and those that fell back to MPFR */
    long refused;   /* ... those in MPFR because dd could not run them */
    long compared;  /* the dd checks' comparisons */
    double worst;   /* ... their largest relative difference (the checks that passed) */
    double failed;  /* ... that of the checks that failed (NaN: not finite in one of the two) */
} refck_t;
/* the table's or the judge's: each group counts its own (a group's record keeps it: a resumed
 * group's references are said as when it ran), added here when it ends (refck_add) */
extern refck_t refck;
#define REDO_MPFR 2 /* the dd reference failed its check: run it again with MPFR */

void refck_add(refck_t *to, const refck_t *g);
void refck_describe(long bits, long steps, const char *what, char *buf, size_t len);
int ref_new(vla_engine **ref, vref_ddcheck **chk, vla_engine_spec rs, int use_dd, refck_t *rk,
            vla_error *why);
int refck_note(const vref_ddcheck *chk, refck_t *rk);
#endif
