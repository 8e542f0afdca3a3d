/* test_exits.c: every program's exit statuses as its --help and docs/checking.md say them: 0 for
 * --help, 2 for a usage error (one line ending "(try --help)"), 1 for a run that failed (here: its
 * output cannot be written, to a missing folder or to a full standard output, or its input read),
 * with a line saying why. Every program of the build is in the table below: one that is not fails,
 * so a new program gets its cases. */
#include "check.h"
#include "proc.h"
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a program, the arguments of a usage error by a bad value (beside --no-such-option, an unknown
 * option), of a run of it that fails (DIR: the test's scratch folder, where "missing/" does not
 * exist), and of a run that writes to standard output, made /dev/full (NULL: the program writes
 * nothing there; vla-bench's failing run is that one) */
static const struct {
    const char *prog, *bad, *fails, *full;
} exits[] = {
    {"vla-bench", "--d 0", "--quick --cpu-only --no-ab --d 16 --models la --precs f32 >/dev/full",
     NULL},
    {"vla-check", "--stream gauss --steps x",
     "--stream gauss --model la --steps 100 --out DIR/missing/x.tsv",
     "--stream gauss --model la --steps 100"},
    {"vla-drift", "--steps x", "--steps 100 --out DIR/missing/x.tsv", "--steps 100 --d 8"},
    {"vla-forms", "--steps x", "--out DIR/missing/x.tsv", "--what ut --Cs 2 --samples 2 --d 4"},
    {"vla-grad", "--steps x", "--out DIR/missing/x.tsv", "--steps 50 --d 8"},
    {"vla-heatmap", "--steps x", "--out DIR/missing/x.tsv", "--steps 1000 --d 8"},
    {"vla-jacobian", "--steps x", "--out DIR/missing/x.tsv", "--steps 50 --d 8"},
    {"vla-plot", "DIR/t.dat", "DIR/missing/t.dat s_relerr", NULL}, /* (a figure, no stdout) */
    {"vla-recall", "--d 0", "--out DIR/missing/x.tsv", "--d 8"},
    {"vla-regress", "--margin x", "--only la/-/f32/gauss --baseline DIR/missing/b.tsv", "--list"},
    {"vla-scaling", "--steps x", "--out DIR/missing/x.tsv", "--steps 20 --d 4"},
    {"vla-statenorm", "--steps x", "--out DIR/missing/x.tsv", "--steps 50 --d 8"},
    {"vla-sweep", "--jobs x", "--out DIR/out DIR/bad.sweep", /* its case fails (f99) */
     "--dry-run --out DIR/out DIR/bad.sweep"},
};

/* s with every DIR replaced by dir, into buf */
static void with_dir(char *buf, size_t len, const char *s, const char *dir)
{
    size_t n = 0;
    for (const char *p = s; *p && n + 1 < len; p++) {
        if (!strncmp(p, "DIR", 3)) {
            n += (size_t)snprintf(buf + n, len - n, "%s", dir);
            p += 2;
        } else {
            buf[n++] = *p;
        }
        n = n < len ? n : len - 1;
    }
    buf[n] = 0;
}

TEST(exits_every_program_0_1_2)
{
    char dir[256], path[400];
    if (!make_tmpdir(dir, sizeof dir)) {
        CHECK_MSG(0, "no scratch folder");
        return;
    }
    snprintf(path, sizeof path, "%s/bad.sweep", dir);
    const char *sweep = "program vla-statenorm\nfixed --steps 200 --d 8\naxis --precision f99\n";
    write_bytes(path, sweep, strlen(sweep));
    char bin[PATH_MAX];
    if (!realpath(vla_test_bin_dir(), bin))
        snprintf(bin, sizeof bin, "%s", vla_test_bin_dir());
    DIR *d = opendir(bin);
    CHECK_MSG(d != NULL, "cannot list %s", bin);
    int seen = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, "vla-", 4))
            continue;
        size_t i = 0;
        while (i < sizeof exits / sizeof exits[0] && strcmp(exits[i].prog, e->d_name))
            i++;
        if (i == sizeof exits / sizeof exits[0]) {
            CHECK_MSG(0, "%s/%s: no case in tests/test_exits.c's table", bin, e->d_name);
            continue;
        }
        seen++;
        char *out = NULL, args[900];
        int st = vla_test_sh(&out, "'%s/%s' --help 2>&1", bin, e->d_name);
        CHECK_MSG(st == 0 && out && strstr(out, "Usage:") && strstr(out, "Exit status:") &&
                      strstr(out, "\n  1  ") && strstr(out, "\n  2  "),
                  "%s --help: exit %d, %s", e->d_name, st,
                  out && strstr(out, "Exit status:") ? "a status of 1 or 2 not said" : "no Exit status");
        free(out);
        out = NULL;
        for (int bad = 0; bad < 2; bad++) { /* an unknown option, a bad value */
            with_dir(args, sizeof args, bad ? exits[i].bad : "--no-such-option", dir);
            st = vla_test_sh(&out, "'%s/%s' %s 2>&1 >/dev/null", bin, e->d_name, args);
            CHECK_MSG(st == 2 && out && strstr(out, "(try --help)") && !strchr(out, '\n')[1],
                      "%s %s: exit %d, '%s'", e->d_name, args, st, out ? out : "");
            free(out);
            out = NULL;
        }
        for (int full = 0; full < 2; full++) {
            if (full && !exits[i].full)
                continue;
            with_dir(args, sizeof args, full ? exits[i].full : exits[i].fails, dir);
            st = vla_test_sh(&out, "cd '%s' && { PATH='%s':\"$PATH\" '%s/%s' %s%s; } 2>&1", dir,
                             bin, bin, e->d_name, args, full ? " >/dev/full" : "");
            size_t n = out ? strlen(out) : 0; /* its last line says why, not "(try --help)" */
            CHECK_MSG(st == 1 && n > 1 && !(n > 14 && !strncmp(out + n - 14, "(try --help)\n", 13)),
                      "%s %s%s: exit %d, '%s'", e->d_name, args, full ? " >/dev/full" : "", st,
                      out ? out : "");
            free(out);
            out = NULL;
        }
    }
    if (d)
        closedir(d);
    CHECK_MSG(seen == (int)(sizeof exits / sizeof exits[0]), "%d of the table's %d programs in %s",
              seen, (int)(sizeof exits / sizeof exits[0]), bin);
    remove_tree(dir);
}
