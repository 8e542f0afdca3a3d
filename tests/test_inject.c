/* test_inject.c: nothing from a name a user was handed is ever executed, and no writer of a report
 * or a figure replaces what it must not. Names of trace folders, report prefixes, tables, columns
 * and figures that would run a command if they reached a shell or gnuplot unquoted (a quote that
 * closes the string and calls system(), a '<' or '|' that gnuplot opens as a pipe, a line break
 * that starts a new gnuplot line, backquotes, $(...)) are fed to vla-check and vla-plot; each
 * command would create a file X<n> in the scratch folder, and none may exist afterwards, while the
 * report and the figure are still drawn. Markdown gets no raw HTML or heading from a path. */
#include "check.h"
#include "proc.h"
#include "vlastab.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* a trace of 2 heads x 30 steps, d = 8, in folder dir/name (made) */
static int trace_in(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (mkdir(path, 0755) != 0)
        return errno != EEXIST;
    double x[2 * 30 * 8];
    long shape[3] = {2, 30, 8};
    const char *f[] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2 * 30 * 8; j++)
            x[j] = 0.5 * vla_gauss(3, (vla_var)i, 0, (uint64_t)j, 0);
        snprintf(path, sizeof path, "%s/%s/%s.npy", dir, name, f[i]);
        if (vla_npy_write(path, x, 3, shape))
            return 1;
    }
    return 0;
}

/* the names of dir's files X0 .. X9 that exist: a command ran */
static int ran_any(const char *dir, char *which, size_t len)
{
    for (int i = 0; i < 10; i++) {
        snprintf(which, len, "%s/X%d", dir, i);
        if (exists(which))
            return 1;
    }
    return 0;
}

/* whether Markdown text (up to its fenced code block, the command, where nothing is markup) has a
 * '<' that is not escaped: raw HTML */
static int raw_html(const char *md)
{
    const char *end = strstr(md, "\n```");
    for (const char *p = md; *p && (!end || p < end); p++)
        if (*p == '<' && (p == md || p[-1] != '\\'))
            return 1;
    return 0;
}

static int is_png(const char *path)
{
    size_t n = 0;
    char *b = read_all(path, &n);
    int ok = b && n > 8 && !memcmp(b + 1, "PNG", 3);
    free(b);
    return ok;
}

TEST_SLOW(inject_check_report_and_trace_names)
{
    char dir[256], msg[4000], x[300];
    const char *check;
    if (!begin(dir, sizeof dir, 1, "vla-check", &check))
        return;
    /* the names each run a command where quoted wrongly: gnuplot's system() and its pipes, the
     * shell's quote, $(), backquotes */
    static const char *const traces[] = {"t';system('touch X1');print '", "t`touch X2`",
                                         "<img src=x onerror=alert(1)>", "# t $(touch X3)"};
    /* "$r": gnuplot reads a name that starts with '$' as a datablock of the script */
    static const char *const reports[] = {"r1'; touch X4; echo '", "|touch X5", "'r';system('touch X6')",
                                          "<touch X7", "`touch X8`$(touch X9)", "$r"};
    for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
        const char *tr = traces[i % (sizeof traces / sizeof traces[0])], *rep = reports[i];
        CHECK_MSG(trace_in(dir, tr) == 0, "cannot write the trace '%s'", tr);
        char stream[600];
        snprintf(stream, sizeof stream, "trace:%s", tr);
        char *argv[] = {(char *)check, stream, "--models", "la", "--precisions", "f32", "--forms",
                        "seq", "--d", "8", "--report", (char *)rep, "--out", "t.dat", NULL};
        int st = run(dir, argv, NULL, msg, sizeof msg, 120);
        CHECK_MSG(st == 0, "vla-check %s --report %s: exit %d: %s", stream, rep, st, msg);
        CHECK_MSG(!ran_any(dir, x, sizeof x), "vla-check %s --report %s ran a command: %s exists",
                  stream, rep, x);
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.png", dir, rep);
        CHECK_MSG(is_png(path), "no figure %s (gnuplot did not draw it)", path);
        snprintf(path, sizeof path, "%s/%s.md", dir, rep);
        char *md = read_all(path, NULL);
        /* the path is text: no tag, no heading of its own, no line of its own */
        CHECK_MSG(md && !raw_html(md) && !strstr(md, "\n# t") && strstr(md, "# vla-check: "),
                  "the report %s carries the path as Markdown: %s", path, md ? md : "(none)");
        free(md);
    }
    /* a report prefix that no gnuplot string or file name can hold: a usage error */
    char *bad[][2] = {{"--report", "r\nx"}, {"--report", ""}, {"--report", "sub/"},
                      {"--report", "r\r"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {(char *)check, "trace:t`touch X2`", "--models", "la", "--precisions", "f32",
                        "--forms", "seq", "--d", "8", bad[i][0], bad[i][1], "--out", "t.dat", NULL};
        int st = run(dir, argv, NULL, msg, sizeof msg, 60);
        CHECK_MSG(st == 2 && strstr(msg, "--report"), "--report '%s': exit %d: %s", bad[i][1], st,
                  msg);
    }
    /* an output never replaces an input: the table, or a report file linked to one */
    char q[1200], link[1200];
    snprintf(q, sizeof q, "%s/t`touch X2`/q.npy", dir);
    snprintf(link, sizeof link, "%s/lnk.md", dir);
    CHECK(symlink(q, link) == 0);
    size_t before = 0, after = 0;
    free(read_all(q, &before));
    char *a1[] = {(char *)check, "trace:t`touch X2`", "--models", "la", "--precisions", "f32",
                  "--forms", "seq", "--d", "8", "--report", "lnk", "--out", "t.dat", NULL};
    int st = run(dir, a1, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 2 && strstr(msg, "is the input"), "a report linked to q.npy: exit %d: %s", st,
              msg);
    char *a2[] = {(char *)check, "trace:t`touch X2`", "--models", "la", "--precisions", "f32",
                  "--forms", "seq", "--d", "8", "--report", "none", "--out", q, NULL};
    st = run(dir, a2, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 2 && strstr(msg, "is the input"), "--out q.npy: exit %d: %s", st, msg);
    free(read_all(q, &after));
    CHECK_MSG(before > 0 && after == before, "q.npy changed: %zu -> %zu bytes", before, after);
    /* a FIFO where the figure goes: refused before any work, never waited on */
    char fifo[1200];
    snprintf(fifo, sizeof fifo, "%s/ff.png", dir);
    CHECK(mkfifo(fifo, 0644) == 0);
    char *a3[] = {(char *)check, "trace:t`touch X2`", "--models", "la", "--precisions", "f32",
                  "--forms", "seq", "--d", "8", "--report", "ff", "--out", "t.dat", NULL};
    st = run(dir, a3, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 2 && strstr(msg, "a FIFO"), "a FIFO for the figure: exit %d: %s", st, msg);
    CHECK_MSG(!ran_any(dir, x, sizeof x), "a command ran: %s exists", x);
    remove_tree(dir);
}

TEST_SLOW(inject_plot_names)
{
    char dir[256], msg[4000], x[300];
    const char *plot, *sn;
    if (!begin(dir, sizeof dir, 2, "vla-plot", &plot, "vla-statenorm", &sn))
        return;
    char *a0[] = {(char *)sn, "--stream", "lmlike", "--d", "8", "--steps", "100", "--runs", "2",
                  "--out", "sn.dat", NULL};
    CHECK_EQ_INT(run(dir, a0, NULL, msg, sizeof msg, 60), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/sn.dat", dir);
    size_t n = 0;
    char *t = read_all(path, &n);
    CHECK(t != NULL);
    /* a table whose columns would call system() in a label, under a name gnuplot would open as a
     * pipe */
    static const char *const cols[] = {"';system('touch${IFS}X1');#", "`touch${IFS}X2`",
                                       "'';system('touch${IFS}X3')", "plain"};
    char *c = t ? strstr(t, "# columns: t ") : NULL;
    for (size_t i = 0; c && i < sizeof cols / sizeof cols[0]; i++) {
        /* '$t.dat': gnuplot reads a name that starts with '$' as a datablock of the script */
        static const char *const names[] = {"<touch X4.dat", "|touch X5.dat", "'a'.dat",
                                            "$t.dat"};
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        CHECK(f && fprintf(f, "%.*s# columns: t %s %s", (int)(c - t), t, cols[i],
                           c + strlen("# columns: t ")) > 0);
        if (f)
            fclose(f);
        char *argv[] = {(char *)plot, (char *)names[i], (char *)cols[i], NULL};
        int st = run(dir, argv, NULL, msg, sizeof msg, 60);
        CHECK_MSG(st == 0, "vla-plot '%s' '%s': exit %d: %s", names[i], cols[i], st, msg);
        CHECK_MSG(!ran_any(dir, x, sizeof x), "vla-plot '%s' '%s' ran a command: %s exists",
                  names[i], cols[i], x);
        char png[600];
        snprintf(png, sizeof png, "%s/%.*s.png", dir, (int)strlen(names[i]) - 4, names[i]);
        CHECK_MSG(is_png(png), "no figure %s", png);
    }
    free(t);
    /* a line break in the figure's name or the table's: refused, nothing written */
    char *a1[] = {(char *)plot, "sn.dat", "s_fro", "--out", "a\n!touch X6", NULL};
    int st = run(dir, a1, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 2 && strstr(msg, "--out"), "--out with a line break: exit %d: %s", st, msg);
    snprintf(path, sizeof path, "%s/b\n!touch X7", dir);
    if (symlink("sn.dat", path) == 0) {
        char *a2[] = {(char *)plot, "b\n!touch X7", "s_fro", "--out", "b.png", NULL};
        st = run(dir, a2, NULL, msg, sizeof msg, 60);
        CHECK_MSG(st == 2, "a table named with a line break: exit %d: %s", st, msg);
    }
    /* a FIFO or a device as the table, a FIFO as the figure: refused, never waited on */
    snprintf(path, sizeof path, "%s/f.dat", dir);
    CHECK(mkfifo(path, 0644) == 0);
    const char *tables[] = {"f.dat", "/dev/zero"};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {(char *)plot, (char *)tables[i], "s_fro", "--out", "g.png", NULL};
        st = run(dir, argv, NULL, msg, sizeof msg, 20);
        CHECK_MSG(st == 1 && strstr(msg, "not a table"), "vla-plot %s: exit %d: %s", tables[i], st,
                  msg);
    }
    char *a3[] = {(char *)plot, "sn.dat", "s_fro", "--out", "f.dat", NULL};
    st = run(dir, a3, NULL, msg, sizeof msg, 20);
    CHECK_MSG(st == 1 && strstr(msg, "a FIFO"), "--out a FIFO: exit %d: %s", st, msg);
    CHECK_MSG(!ran_any(dir, x, sizeof x), "a command ran: %s exists", x);
    remove_tree(dir);
}
