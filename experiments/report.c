/* report.c: the text of vla-check's reports (report.h). */
#include "report.h"
#include "file.h"
#include "gnuplot.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

void md_t(FILE *f, long t)
{
    if (t)
        fprintf(f, " %ld |", t);
    else
        fprintf(f, " - |");
}

/* the file's name in its folder: the report links its figure from beside it */
const char *md_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Text from a path or a name, as Markdown shows it and nothing more: no raw HTML, no heading, no
 * link, no table cell of its own (every character Markdown gives a meaning to is escaped with a
 * backslash; a control character, a line break among them, is shown as '?') */
void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f)
            fputc('?', f);
        else {
            if (strchr("\\`*_{}[]<>#|~&", ch))
                fputc('\\', f);
            fputc(ch, f);
        }
    }
}

/* a link's destination: a file name beside the report, percent-encoded */
void md_link(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || strchr("-._~", ch))
            fputc(ch, f);
        else
            fprintf(f, "%%%02X", ch);
    }
}

/* the command as typed, in a fenced code block: a fence longer than any run of backticks in it,
 * each argument quoted as a POSIX shell reads it back (a control character shown as '?') */
void md_command(FILE *f, int argc, char **argv)
{
    int fence = 3;
    for (int i = 0; i < argc; i++)
        for (const char *p = argv[i]; *p;) {
            int n = 0;
            while (p[n] == '`')
                n++;
            fence = n >= fence ? n + 1 : fence;
            p += n ? n : 1;
        }
    for (int k = 0; k < fence; k++)
        fputc('`', f);
    fputc('\n', f);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int bare = *a != 0;
        for (const char *p = a; *p && bare; p++)
            bare = isalnum((unsigned char)*p) || strchr("@%+=:,./-_", *p);
        fputs(i ? " " : "", f);
        if (!bare)
            fputc('\'', f);
        for (const char *p = a; *p; p++) {
            unsigned char ch = (unsigned char)*p;
            if (ch == '\'' && !bare)
                fputs("'\\''", f);
            else
                fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, f);
        }
        if (!bare)
            fputc('\'', f);
    }
    fputc('\n', f);
    for (int k = 0; k < fence; k++)
        fputc('`', f);
    fputc('\n', f);
}

/* The report's files, PREFIX.md, PREFIX-errors.dat, PREFIX.gp and PREFIX.png, are refused before
 * any work when they cannot be written as the table is (a FIFO, a device, a directory), are the
 * table or an input, or cannot be named in a gnuplot script: 0, else 2 after the message. */
int report_paths_ok(const char *prefix, const vla_cli *c, int judged)
{
    static const char *const exts[2][4] = {{".md", "-errors.dat", ".gp", ".png"},
                                           {".md", ".json"}};
    const char *const *ext = exts[judged != 0];
    char in[4200];
    vla_error why;
    if (!*prefix || prefix[strlen(prefix) - 1] == '/') {
        fprintf(stderr, "vla-check: --report '%s': a prefix of file names is needed (PREFIX.md, "
                        "...), not %s (try --help)\n", prefix, *prefix ? "a folder" : "nothing");
        return 2;
    }
    if (vla_gp_path_bad(prefix, &why)) {
        fprintf(stderr, "vla-check: --report: %s (try --help)\n", vla_error_msg(&why));
        return 2;
    }
    struct stat so, sr;
    int have_out = strcmp(c->out, "-") && stat(c->out, &so) == 0;
    for (int i = 0; i < (judged ? 2 : 4); i++) {
        char path[4200], *target;
        const char *kind;
        snprintf(path, sizeof path, "%s%s", prefix, ext[i]);
        int e = vla_file_target(path, &target, &kind);
        if (e == VLA_EINVAL) {
            fprintf(stderr, "vla-check: --report: cannot write %s: it is %s (a report goes to "
                            "regular files)\n", path, kind);
            return 2;
        }
        free(target);
        if (vla_cli_is_input(c, path, in, sizeof in)) {
            fprintf(stderr, "vla-check: --report: %s is the input %s; a report never replaces "
                            "its inputs\n", path, in);
            return 2;
        }
        if (!strcmp(path, c->out) ||
            (have_out && stat(path, &sr) == 0 && sr.st_dev == so.st_dev && sr.st_ino == so.st_ino)) {
            fprintf(stderr, "vla-check: --report: %s is the table (--out %s)\n", path, c->out);
            return 2;
        }
    }
    return 0;
}

/* one file of the report, written whole from the text of a memory stream (NULL: it could not be
 * made), which is freed: 0, else 1 after the message */
int report_write(const char *path, char *text, size_t len)
{
    const char *kind = "";
    int e = !text ? VLA_ENOMEM : vla_file_write_whole(path, text, len, &kind);
    if (e)
        fprintf(stderr, "vla-check: cannot write %s: %s\n", path,
                e == VLA_EINVAL ? kind : e == VLA_ENOMEM ? "out of memory" : strerror(errno));
    free(text);
    return e ? 1 : 0;
}

/* a number in JSON: null when it is not finite */
void json_num(FILE *f, double x)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", x);
    if (!isfinite(x))
        fputs("null", f);
    else /* a float in JSON's readers too: 4.0, not 4 */
        fprintf(f, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
}

void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* the settings NAME=VALUE in the order they apply (the trace's model.txt, then every --set), a
 * name set twice listed once, with its last value: n of them into set[] */
int cli_settings(const vla_cli *c, const char **set, int max)
{
    int n = 0;
    for (int i = 0; i < c->nsets + c->argc; i++) {
        const char *s = i < c->nsets ? c->sets[i]
                        : i - c->nsets + 1 < c->argc && !strcmp(c->argv[i - c->nsets], "--set")
                            ? c->argv[i - c->nsets + 1]
                            : NULL;
        if (!s || !strchr(s, '='))
            continue;
        size_t kl = strcspn(s, "=");
        int j = 0;
        while (j < n && !(strlen(set[j]) > kl && !strncmp(set[j], s, kl) && set[j][kl] == '='))
            j++;
        if (j < n)
            memmove(set + j, set + j + 1, (size_t)(n - j - 1) * sizeof *set), n--;
        if (n < max)
            set[n++] = s;
    }
    return n;
}
