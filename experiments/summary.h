/* summary.h: the one summary line every program that writes a table from runs ends with, in the
 * table's header ("# summary: ...") and, when it found something, on stderr ("PROG: summary:
 * ..."): what went non-finite or overflowed, a read-out exactly 0, the first step at which a
 * measured error passed 1. libc only: vla-sweep, vla-regress and vla-bench link it without cli.c. */
#ifndef VLA_SUMMARY_H
#define VLA_SUMMARY_H

typedef struct {
    char text[2048];
    int len;
    int loud; /* something to say on stderr (what a warning has said already is not) */
} vla_summary;

/* appends a clause ("; " between clauses); loud: say the summary on stderr */
void vla_summary_add(vla_summary *s, int loud, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* one block of a table: n rows of ncol numbers, the first column the step (or the table's key:
 * vla-recall's n), and its name in the summary ("head 1", "f16 chunk:64") */
typedef struct {
    const double *v;
    long n;
    int ncol;
    const char *name;
} vla_summary_block;

/* whether a column is a measured error, relative to the size of what it measures (1: as large as
 * the thing itself): *relerr, a_drift, x_err, read_err */
int vla_summary_is_error(const char *column);
enum { VLA_SUM_PAST1 = 1, VLA_SUM_NONFINITE = 2 };
/* For each measured error of columns, with VLA_SUM_PAST1 the first row (the least key over the
 * blocks, the first block on a tie) at which it reached 1, "NAME reached 1 (BLOCK, KEY = K)", and
 * with VLA_SUM_NONFINITE (for programs without a check of the state of their own) the first at
 * which it is Inf or NaN, "NAME is not finite (BLOCK, KEY = K)"; both loud. A column nan in every
 * row of a block is not measured there (A's error of a model without A). Returns the number of
 * clauses added. */
int vla_summary_errors(vla_summary *s, const char *columns, const vla_summary_block *b, int nb,
                       int what);
/* "PROG: summary: TEXT" on stderr when the summary is loud */
void vla_summary_say(const vla_summary *s, const char *prog);
#endif
