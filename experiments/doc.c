/* doc.c: --help and --man of every program, from one vla_doc (doc.h). --help is plain text laid
 * out for a terminal; --man is the same words as roff (man/mkman.sh writes the installed pages,
 * and tests/test_install.sh checks that the two agree). */
#include "doc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s, up to end (NULL: its NUL), on standard output as roff text: a '.' opening a line made text,
 * backslashes, dashes and quotes escaped so that options copy as typed; oneline: newlines
 * become spaces (a tag, a title) */
static void roff(const char *s, const char *end, int oneline)
{
    for (int bol = 1; *s && s != end; s++) {
        if (bol && *s == '.') /* a request at the start of a line: make it text */
            fputs("\\&", stdout);
        bol = *s == '\n';
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-') /* a plain '-' may print as a hyphen: options must copy as typed */
            fputs("\\-", stdout);
        else if (*s == '\'')
            fputs("\\(aq", stdout);
        else
            putchar(oneline && *s == '\n' ? ' ' : *s);
    }
}

static void print_lines(const char *s, const char *indent)
{
    for (const char *l = s, *nl; *l; l = *nl ? nl + 1 : nl) {
        nl = l + strcspn(l, "\n");
        printf("%s%.*s\n", indent, (int)(nl - l), l);
    }
}

/* ---- --help ---- */

static void help_items(const vla_doc_item *it, const char *dashes, int width)
{
    for (; it && it->name; it++) {
        char left[128];
        snprintf(left, sizeof left, "%s%s%s%s", dashes, it->name, it->arg ? " " : "",
                 it->arg ? it->arg : "");
        printf("  %-*s %s\n", width, left, it->help);
    }
}

/* the width of a list's terms, so that its meanings line up */
static int width_of(const vla_doc_item *it, int min)
{
    int w = min;
    for (; it && it->name; it++) {
        int n = (int)strlen(it->name) + (it->arg ? 1 + (int)strlen(it->arg) : 0);
        w = n > w && n <= 36 ? n : w;
    }
    return w;
}

static void help_section(const char *title, const char *text, const vla_doc_item *items,
                         const char *lines, const char *text_end)
{
    printf("\n%s:\n", title);
    if (text)
        printf("%s\n", text);
    help_items(items, "", width_of(items, 2));
    if (lines)
        printf("%s\n", lines);
    if (text_end)
        printf("%s\n", text_end);
}

void vla_doc_help(const vla_doc *d)
{
    printf("Usage: %s %s\n\n%s\n\nOptions:\n", d->prog, d->synopsis, d->summary);
    for (int k = 0; k < 3; k++)
        help_items(d->opts[k], "--", VLA_DOC_WIDTH);
    if (d->after_opts)
        printf("\n%s\n", d->after_opts);
    for (const vla_doc_section *s = d->sections; s->title; s++)
        help_section(s->title, s->text, s->items, s->lines, s->text_end);
    if (d->exit)
        help_section("Exit status", NULL, d->exit, NULL, NULL);
    if (d->env)
        help_section("Environment", NULL, d->env, NULL, NULL);
    if (d->files)
        help_section("Files", NULL, d->files, NULL, d->files_end);
    printf("\nExamples:\n");
    print_lines(d->examples, "  ");
    exit(0);
}

/* ---- --man ---- */

static void man_items(const vla_doc_item *it, const char *dashes)
{
    for (; it && it->name; it++) {
        printf(".TP\n\\fB");
        roff(dashes, NULL, 1);
        roff(it->name, NULL, 1);
        if (it->arg) {
            printf("\\fR \\fI");
            roff(it->arg, NULL, 1);
        }
        printf("\\fR\n");
        roff(it->help, NULL, 0);
        printf("\n");
    }
}

/* "  term  meaning" lines as tagged paragraphs, deeper-indented lines as their continuation, and
 * unindented lines as a closing paragraph */
static void man_lines(const char *lines)
{
    int note = 0;
    for (const char *l = lines, *nl; *l; l = *nl ? nl + 1 : nl) {
        nl = l + strcspn(l, "\n");
        if (l[0] == ' ' && l[1] == ' ' && l[2] && !strchr(" \n", l[2])) {
            const char *gap = strstr(l + 2, "  ");
            if (!gap || gap > nl)
                gap = nl;
            printf(".TP\n\\fB");
            roff(l + 2, gap, 1);
            printf("\\fR\n");
            l = gap + strspn(gap, " ");
            note = 0;
        } else if (l[0] == ' ') {
            l += strspn(l, " ");
        } else if (l != nl && !note) {
            printf(".PP\n");
            note = 1;
        }
        if (l < nl) {
            roff(l, nl, 1);
            printf("\n");
        }
    }
}

static void man_section(const char *title, const char *text, const vla_doc_item *items,
                        const char *lines, int pre, const char *text_end)
{
    printf(".SH ");
    int quote = strchr(title, ' ') != NULL;
    printf(quote ? "\"" : "");
    for (const char *c = title; *c; c++)
        putchar(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    printf(quote ? "\"\n" : "\n");
    if (text) {
        roff(text, NULL, 0);
        printf("\n");
    }
    man_items(items, "");
    if (lines && pre) {
        printf(".PP\n.nf\n");
        roff(lines, NULL, 0);
        printf("\n.fi\n");
    } else if (lines) {
        man_lines(lines);
    }
    if (text_end) {
        printf(".PP\n");
        roff(text_end, NULL, 0);
        printf("\n");
    }
}

void vla_doc_man(const vla_doc *d)
{
    /* NAME wants a phrase: man/mkman.sh passes the one the source opens with */
    const char *s = getenv("VLA_MAN_NAME");
    if (!s || !*s)
        s = d->phrase;
    char up[64];
    size_t i;
    for (i = 0; d->prog[i] && i + 1 < sizeof up; i++)
        up[i] = d->prog[i] >= 'a' && d->prog[i] <= 'z' ? d->prog[i] - 'a' + 'A' : d->prog[i];
    up[i] = 0;
    printf(".\\\" generated by %s --man from its --help text: edit the program, not this page\n.TH ",
           d->prog);
    roff(up, NULL, 1);
    printf(" 1 \"\" \"vlastab %s\" \"vlastab manual\"\n.nh\n.ad l\n.SH NAME\n", d->version);
    roff(d->prog, NULL, 1);
    printf(" \\- ");
    roff(s, NULL, 1);
    printf("\n.SH SYNOPSIS\n\\fB");
    roff(d->prog, NULL, 1);
    printf("\\fR ");
    /* the synopsis' words: OPTION and FILE in italics, brackets and dots as they are */
    for (const char *c = d->synopsis; *c;) {
        size_t n = strspn(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
        if (n) {
            printf("\\fI%.*s\\fR", (int)n, c);
            c += n;
        } else {
            roff((char[]){*c, 0}, NULL, 1);
            c++;
        }
    }
    printf("\n.SH DESCRIPTION\n");
    roff(d->summary, NULL, 0);
    printf("\n.SH OPTIONS\n");
    for (int k = 0; k < 3; k++)
        man_items(d->opts[k], "--");
    if (d->after_opts) {
        printf(".PP\n");
        roff(d->after_opts, NULL, 0);
        printf("\n");
    }
    for (const vla_doc_section *sec = d->sections; sec->title; sec++)
        man_section(sec->title, sec->text, sec->items, sec->lines, sec->pre, sec->text_end);
    if (d->exit)
        man_section("Exit status", NULL, d->exit, NULL, 0, NULL);
    if (d->env)
        man_section("Environment", NULL, d->env, NULL, 0, NULL);
    if (d->files)
        man_section("Files", NULL, d->files, NULL, 0, d->files_end);
    printf(".SH EXAMPLES\n.RS 4\n.nf\n");
    roff(d->examples, NULL, 0);
    printf("\n.fi\n.RE\n.SH \"SEE ALSO\"\n");
    const char *see = d->see_also ? d->see_also : "vlastab(7)";
    for (const char *c = see, *e; *c; c = *e ? e + 2 : e) { /* "a(1), b(7)": names in bold */
        e = c + strcspn(c, ",");
        const char *par = memchr(c, '(', (size_t)(e - c));
        printf("%s\\fB", c == see ? "" : ",\n");
        roff(c, par ? par : e, 1);
        printf("\\fR");
        if (par)
            roff(par, e, 1);
    }
    printf("\n");
    exit(0);
}
