/* judge.h: vla-check --outputs, a kernel's own outputs and gradients judged (judge.c). */
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
#endif
