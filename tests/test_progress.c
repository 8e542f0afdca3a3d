/* test_progress.c: the progress line of the programs that run long (experiments/drive.c's
 * vla_progress): on a terminal a line "done/total UNIT, rate UNIT/s, ETA s" comes at most once a
 * second; when stderr is not a terminal (a CI log) lines of their own, "PROG: progress: ...", come
 * every VLA_PROGRESS_SECONDS (0: at every update, so that at least one comes whatever the
 * machine's speed), with no carriage return, and none with VLA_PROGRESS_SECONDS=off (the test
 * suite's own setting, tests/main.c). Each run takes a couple of seconds of CPU, more than the
 * second after which the first line is due on a terminal. */
#include "check.h"
#include "proc.h"
#include <stdlib.h>
#include <string.h>

TEST_SLOW(progress_on_a_terminal_only)
{
    const char *check, *statenorm, *forms, *heatmap;
    char dir[300];
    if (!begin(dir, sizeof dir, 4, "vla-check", &check, "vla-statenorm", &statenorm, "vla-forms",
               &forms, "vla-heatmap", &heatmap))
        return;
    char out[400];
    snprintf(out, sizeof out, "%s/t.dat", dir);
    char *cmds[4][24] = {
        {(char *)check, "lmlike", "--models", "vla3", "--precisions", "f64", "--forms", "seq",
         "--steps", "3000", "--report", "none", "--out", out, NULL},
        {(char *)statenorm, "--model", "vla3", "--precision", "f32", "--steps", "1500000", "--out",
         out, NULL},
        {(char *)forms, "--precisions", "f32", "--forms", "seq,chunk:16", "--set", "nudge=off",
         "--steps", "3072", "--out", out, NULL},
        {(char *)heatmap, "--at", "1,400000", "--out", out, NULL},
    };
    static char msg[1 << 16];
    for (int i = 0; i < 4; i++) {
        const char *name = strrchr(cmds[i][0], '/') + 1;
        int st = run_tty(NULL, cmds[i], NULL, msg, sizeof msg, 300);
        CHECK_MSG(st == 0, "%s on a terminal: exit %d: %s", name, st, msg);
        CHECK_MSG(strstr(msg, "/s, ETA ") != NULL, "%s on a terminal: no progress line: %s", name,
                  msg);
        char *off[] = {"VLA_PROGRESS_SECONDS=off", NULL}, *every[] = {"VLA_PROGRESS_SECONDS=0", NULL};
        st = run(NULL, cmds[i], off, msg, sizeof msg, 300);
        CHECK_MSG(st == 0, "%s: exit %d: %s", name, st, msg);
        CHECK_MSG(!strchr(msg, '\r') && !strstr(msg, "ETA"), "%s: progress written with "
                  "VLA_PROGRESS_SECONDS=off: %s", name, msg);
        st = run(NULL, cmds[i], every, msg, sizeof msg, 300);
        char want[80];
        snprintf(want, sizeof want, "%s: progress: ", name);
        CHECK_MSG(st == 0 && !strchr(msg, '\r') && strstr(msg, want) && strstr(msg, "/s, ETA "),
                  "%s: exit %d, no progress line in a log with VLA_PROGRESS_SECONDS=0: %s", name, st,
                  msg);
        for (const char *l = strstr(msg, want); l; l = strstr(l + 1, want)) { /* never past all */
            long done = -1, total = -1;
            sscanf(l + strlen(want), "%ld/%ld", &done, &total);
            CHECK_MSG(done >= 0 && done <= total && !strstr(l, "ETA -"), "%s: '%.80s'", name, l);
        }
    }
    remove_tree(dir);
}
