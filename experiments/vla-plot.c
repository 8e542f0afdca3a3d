/* vla-plot: any column of any vlastab table against its first (t), one line per run (block),
 * drawn by gnuplot, with the title, the labels and the key taken from the table itself (its
 * program, configuration, stream and columns), so that a user's own table plots as the shipped
 * ones do. */
#include "doc.h"
#include "file.h"
#include "gnuplot.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOL 64

__attribute__((noreturn)) static void die(int code, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "vla-plot: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, code == 2 ? " (try --help)\n" : "\n");
    exit(code);
}

/* the value of header line "# KEY: value" into buf (empty when absent) */
static void header_value(const char *line, const char *key, char *buf, size_t len)
{
    size_t k = strlen(key);
    if (!strncmp(line, "# ", 2) && !strncmp(line + 2, key, k) && line[2 + k] == ':') {
        snprintf(buf, len, "%s", line + 3 + k + (line[3 + k] == ' '));
        buf[strcspn(buf, "\n")] = 0;
    }
}


/* the command line's help */
static const vla_doc_item plot_opts[] = {
    {"out", "FILE", "the figure, PNG (default: TABLE with .png for its extension)"},
    {"logx", NULL, "t on a log scale (the default when the first column is t)"},
    {"linx", NULL, "t on a linear scale"},
    {"logy", NULL, "the columns on a log scale"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
    {NULL, NULL, NULL},
};
static const vla_doc_item plot_exits[] = {
    {"0", NULL, "the figure was drawn"},
    {"1", NULL, "the table could not be read, or gnuplot failed"},
    {"2", NULL, "a usage error: no table, a column the table does not have"},
    {NULL, NULL, NULL},
};
static const vla_doc_item plot_env[] = {
    {"PATH", NULL, "where gnuplot is looked for"},
    {NULL, NULL, NULL},
};
static const vla_doc_item plot_files[] = {
    {"TABLE", NULL, "a table of any vla-* program: '#' header lines, '# columns: ...', one block "
                    "per run separated by two blank lines"},
    {"FILE", NULL, "the figure (--out), PNG by gnuplot's pngcairo terminal"},
    {NULL, NULL, NULL},
};
static const vla_doc plot_doc = {
    .prog = "vla-plot",
    .phrase = "draw any column of a vlastab table against t, one line per run",
    .synopsis = "[OPTION]... TABLE COLUMN...",
    .summary = "Draws each COLUMN of TABLE against the table's first column (t), one line per\n"
               "run (head), with gnuplot. The title is the table's program, model, precision\n"
               "and stream (its header), the axes are labelled with the column names, the key\n"
               "names each run and column.",
    .version = "0.1.0",
    .opts = {plot_opts, NULL, NULL},
    .sections = {{"Columns",
                  "vla-plot writes no table; it draws the columns of one, by the names of its "
                  "'# columns:' line (each program's page lists them):",
                  NULL,
                  "  t        the first column: the x axis\n"
                  "  COLUMN   any other column, one line per run (block) of the table",
                  0, NULL},
                 {NULL, NULL, NULL, NULL, 0, NULL}},
    .exit = plot_exits,
    .env = plot_env,
    .files = plot_files,
    .examples = "vla-plot vla3-f16.dat o_relerr s_relerr --logy\n"
                "vla-plot drift.dat a_moved a_moved_diag --out moved.png",
};

/* the command line: the table, its columns to draw, the figure and the scales */
typedef struct {
    const char *table, *out, *cols[MAXCOL];
    int ncols, logx, logy; /* logx -1: the default (log when the first column is t) */
} plot_args;

static plot_args parse_args(int argc, char **argv)
{
    plot_args a = {.logx = -1};
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--help"))
            vla_doc_help(&plot_doc);
        else if (!strcmp(w, "--man"))
            vla_doc_man(&plot_doc);
        else if (!strcmp(w, "--version")) {
            printf("vla-plot (vlastab) %s\n", plot_doc.version);
            exit(0);
        } else if (!strcmp(w, "--out")) {
            if (++i == argc)
                die(2, "--out needs a value%s%s", "", "");
            a.out = argv[i];
        } else if (!strcmp(w, "--logx"))
            a.logx = 1;
        else if (!strcmp(w, "--linx"))
            a.logx = 0;
        else if (!strcmp(w, "--logy"))
            a.logy = 1;
        else if (!strncmp(w, "--", 2))
            die(2, "unknown option '%s'%s", w, "");
        else if (!a.table)
            a.table = w;
        else if (a.ncols < MAXCOL)
            a.cols[a.ncols++] = w;
        else
            die(2, "more than %s COLUMNs (from '%s')", "64", w);
    }
    if (!a.table || !a.ncols)
        die(2, "give a TABLE and at least one COLUMN%s%s", "", "");
    return a;
}

/* what the table says of itself: its header's program, config and stream, its columns line, and
 * how many blocks (runs) it has */
typedef struct {
    char *columns, program[200], config[2048], stream[1024];
    int blocks;
} table_head;

/* the table read through, line by line (lines of any length: a table of 200,000 columns has a
 * columns line of megabytes) */
static void read_table(const char *table, table_head *t)
{
    vla_error why;
    if (vla_gp_path_bad(table, &why))
        die(2, "TABLE: %s%s", vla_error_msg(&why), "");
    const char *kind = NULL;
    FILE *f;
    switch (vla_file_read_open(table, 1L << 32, &f, &kind)) {
    case VLA_OK: break;
    case VLA_EINVAL: die(1, "cannot read %s: it is %s, not a table", table, kind); break;
    case VLA_ERANGE: die(1, "cannot read %s: %s", table, "it is larger than 4 GB"); break;
    default: die(1, "cannot read %s: %s", table, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int blank = 0, data = 0;
    while (getline(&line, &cap, f) >= 0) {
        header_value(line, "program", t->program, sizeof t->program);
        header_value(line, "config", t->config, sizeof t->config);
        header_value(line, "stream", t->stream, sizeof t->stream);
        if (!strncmp(line, "# columns:", 10)) {
            free(t->columns);
            if (!(t->columns = strdup(line + 10 + (line[10] == ' '))))
                die(1, "out of memory%s%s", "", "");
            t->columns[strcspn(t->columns, "\n")] = 0;
        }
        if (line[0] == '#')
            continue;
        if (line[strspn(line, " \t\r\n")] == 0) {
            blank++;
            continue;
        }
        if (!data || blank >= 2)
            t->blocks++;
        data = 1;
        blank = 0;
    }
    free(line);
    fclose(f);
    if (!t->columns || !t->columns[strspn(t->columns, " ")])
        die(1, "%s: no '# columns:' line (not a vlastab table?)%s", table, "");
}

/* the columns' names (in names, split; name[j] the j-th), and the asked ones' numbers in idx,
 * gnuplot's 1-based: every name of the line, however many */
static void column_numbers(const table_head *t, const plot_args *a, char **names, char ***name,
                           int *idx)
{
    const char *columns = t->columns;
    *names = strdup(columns);
    *name = malloc((strlen(columns) / 2 + 1) * sizeof **name);
    int nname = 0;
    if (!*names || !*name)
        die(1, "out of memory%s%s", "", "");
    for (char *w = strtok(*names, " \t\r"); w; w = strtok(NULL, " \t\r"))
        (*name)[nname++] = w;
    for (int c = 0; c < a->ncols; c++) {
        idx[c] = 0;
        for (int j = 0; j < nname && !idx[c]; j++)
            if (!strcmp((*name)[j], a->cols[c]))
                idx[c] = j + 1;
        if (!idx[c]) {
            char list[400];
            int n = snprintf(list, sizeof list, "%s", columns);
            if (n >= (int)sizeof list) /* the first names, and how many there are */
                snprintf(list + sizeof list - 40, 40, "... (%d columns)", nname);
            die(2, "no column '%s' in the table (%s)", a->cols[c], list);
        }
    }
}

/* the gnuplot script drawing into tmp: the title (the program, the model and precision of the
 * config line, the stream), the labels, a line per column and block; the script's length in
 * *slen */
static char *plot_script(const plot_args *a, const table_head *t, const char *xname,
                         const int *idx, const char *tmp, size_t *slen)
{
    char model[64] = "", prec[64] = "", title[1400];
    const char *m = strstr(t->config, "model="), *p = strstr(t->config, "prec=");
    if (m)
        sscanf(m, "model=%63s", model);
    if (p)
        sscanf(p, "prec=%63s", prec);
    snprintf(title, sizeof title, "%s%s%s%s%s%s%s", t->program[0] ? t->program : a->table,
             model[0] ? ": " : "", model, prec[0] ? " " : "", prec, t->stream[0] ? ", " : "",
             t->stream);
    char *script = NULL;
    FILE *g = open_memstream(&script, slen);
    if (!g)
        die(1, "out of memory%s%s", "", "");
    fprintf(g, "set terminal pngcairo size 900,600 font 'DejaVu Sans,11'\nset output ");
    vla_gp_path(g, tmp);
    fprintf(g, "\nset title ");
    vla_gp_str(g, title);
    fprintf(g, " noenhanced\nset xlabel ");
    vla_gp_str(g, xname);
    fprintf(g, " noenhanced\nset key outside right noenhanced\n");
    if (a->ncols == 1) {
        fprintf(g, "set ylabel ");
        vla_gp_str(g, a->cols[0]);
        fprintf(g, " noenhanced\n");
    }
    fprintf(g, "%s%s", a->logx ? "set logscale x\n" : "", a->logy ? "set logscale y\n" : "");
    fprintf(g, "plot");
    for (int c = 0; c < a->ncols; c++)
        for (int b = 0; b < (t->blocks ? t->blocks : 1); b++) {
            char key[200];
            snprintf(key, sizeof key, "%s%shead %d", a->ncols > 1 ? a->cols[c] : "",
                     a->ncols > 1 ? ", " : "", b);
            fprintf(g, "%s ", c || b ? "," : "");
            vla_gp_path(g, a->table);
            fprintf(g, " index %d using 1:%d with lines lw 1.5 title ", b, idx[c]);
            vla_gp_str(g, key);
        }
    fprintf(g, "\n");
    if (fclose(g))
        die(1, "out of memory%s%s", "", "");
    return script;
}

/* the figure drawn into out: gnuplot draws into a temporary beside it, renamed onto it once
 * drawn, so that a failed drawing leaves the old figure or none, and a FIFO or a device at --out
 * is never opened */
static void draw(const plot_args *a, const table_head *t, const char *xname, const int *idx)
{
    const char *out = a->out, *kind = NULL;
    vla_error why;
    char *target, *tmp;
    int e = vla_file_target(out, &target, &kind);
    if (e == VLA_EINVAL)
        die(1, "cannot write %s: it is %s", out, kind);
    if (e || !(tmp = vla_file_tmp_name(target)))
        die(1, "cannot write %s: %s", out, strerror(e ? errno : ENOMEM));
    FILE *tf = vla_file_create(tmp);
    if (!tf)
        die(1, "cannot write %s: %s", out, strerror(errno));
    fclose(tf);
    size_t slen = 0;
    char *script = plot_script(a, t, xname, idx, tmp, &slen);
    int st = vla_gnuplot(script, slen, 0);
    free(script);
    /* gnuplot exits 0 with a PNG cut short when the disk fills up under it */
    if (st == 0 && vla_gp_png_whole(tmp, &why)) {
        unlink(tmp);
        die(1, "cannot write %s: %s", out, vla_error_msg(&why));
    }
    e = st == 0 ? vla_file_replace(tmp, target, &kind) : VLA_EIO;
    if (e) {
        int errnum = errno;
        unlink(tmp);
        if (st < 0)
            die(1, "cannot run gnuplot: %s%s", strerror(errnum), errnum == ENOENT ? " (make deps "
                "installs it)" : "");
        if (st > 0)
            die(1, "gnuplot failed to draw %s%s", out, " (its message above)");
        die(1, "cannot write %s: %s", out, e == VLA_EINVAL ? kind : strerror(errnum));
    }
    free(tmp);
    free(target);
}

int main(int argc, char **argv)
{
    vla_file_limits(); /* past ulimit -f, a write fails (EFBIG, said) instead of killing */
    plot_args a = parse_args(argc, argv);
    table_head t = {0};
    read_table(a.table, &t);
    char *names, **name;
    int idx[MAXCOL];
    column_numbers(&t, &a, &names, &name, idx);
    char outbuf[4200];
    if (!a.out) {
        snprintf(outbuf, sizeof outbuf, "%s", a.table);
        char *dot = strrchr(outbuf, '.'), *slash = strrchr(outbuf, '/');
        if (dot && (!slash || dot > slash))
            *dot = 0;
        strcat(outbuf, ".png");
        a.out = outbuf;
    }
    if (a.logx < 0)
        a.logx = !strcmp(name[0], "t");
    vla_error why;
    if (vla_gp_path_bad(a.out, &why))
        die(2, "--out: %s%s", vla_error_msg(&why), "");
    draw(&a, &t, name[0], idx);
    free(name);
    free(names);
    free(t.columns);
    fprintf(stderr, "vla-plot: %s\n", a.out);
    return 0;
}
