/* judge.h: vla-check --outputs, a kernel's own outputs and gradients judged (judge.c), and
 * vla-check --states, the states a cache saved judged against their labels (states.c). */
#ifndef VLA_JUDGE_H
#define VLA_JUDGE_H
#include "cli.h"

/* what the judge takes of vla-check's options */
typedef struct {
    const char *outputs; /* DIR2: o.npy, and S.npy, dtype.txt, do.npy and the gradients there */
    const char *report;  /* PREFIX of PREFIX.json and PREFIX.md, or "none" */
    long window;         /* the verdict's window of tokens */
    double slack;        /* a head is ok within slack x the largest attainable error (0: the
                          * policy's default, judge_slack) */
    int ncmd;            /* the command as typed, for the report */
    char **cmd;
} judge_opts;

/* the judgement of c's trace against o->outputs: 0 ok, 1 beyond (or a failure, said), 2 usage
 * (vla_cli_die), 3 stopped by a signal (its measures saved) */
/* --slack's default for a policy whose io format is io */
double judge_slack(vla_fmt io);
int judge_outputs(vla_cli *c, const vla_cli_spec *spec, const judge_opts *o, int prec_given);

/* What vla-check --states (states.c) shares with the judge: its runs, a state's budget, the rule
 * and dtype.txt. The runs: the reference (exact, or lib's binary64, on the inputs as given), the
 * same on the inputs rounded to the policy's io format, the policy's emulation in seq and in the
 * kernel's form. */
enum { R_REF, R_RND, R_SEQ, R_FORM, NR };
/* their engine specs for configuration cfg (the kernel's policy and form), and alias[r], the run
 * whose numbers stand for r's (R_RND: R_REF where the io format is binary64; R_FORM: R_SEQ in the
 * seq form) */
void judge_run_specs(const vla_cli *c, const vla_config *cfg, vla_engine_spec sp[NR],
                     int alias[NR]);
/* a state's budget: slack x the largest of the runs' relative errors (Frobenius, n numbers)
 * against the reference's state ref (a NULL run left out) and of sqrt(d) roundings of the policy's
 * arithmetic */
double judge_state_budget(const double *ref, const double *const runs[], int nruns, long n,
                          int d, vla_prec prec, double slack);
/* the rule: an error within its budget, which must be below 1 (a relative error of 1 is that of a
 * 0: a budget of 1 or more judges nothing); NaN in either is beyond */
int judge_within(double err, double budget);
/* DIR/dtype.txt: 1 when it says bfloat16, 0 when there is none; anything else a usage error
 * naming opt (--outputs) and what the tag is for (o.npy and S.npy) */
int judge_read_dtype(const vla_cli_spec *spec, const char *opt, const char *dir, const char *what);
/* numpy's name of the format a kernel's file was saved in (bfloat16, float16, ...) */
const char *judge_dtype_name(vla_fmt f);

/* what vla-check --states takes of its options */
typedef struct {
    const char *dir; /* DIR: states.npy, positions.npy (and dtype.txt) */
    double slack;    /* 0: the policy's default, judge_slack */
} states_opts;
/* the states saved by a cache, each against the trace's reference at its label: 0 when every one
 * agrees, 1 when one does not (or a failure, said), 2 usage (vla_cli_die), 3 stopped by a signal */
int judge_states(vla_cli *c, const vla_cli_spec *spec, const states_opts *o, int prec_given);
#endif
