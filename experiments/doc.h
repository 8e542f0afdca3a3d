/* doc.h: a program's documentation, written once and rendered two ways: --help (plain text) and
 * --man (a roff man page, which man/mkman.sh installs). Every program of the tree renders through
 * here (the experiment programs through cli.c, vla-regress, vla-sweep, vla-bench), so the two
 * renderings of a program cannot drift apart, and every page has the same sections. Needs libc
 * only: vla-sweep links it without the library. */
#ifndef VLA_DOC_H
#define VLA_DOC_H

/* a term and what it means: an option (name without its dashes, arg NULL for a flag), a column,
 * an exit status, an environment variable, a file */
typedef struct {
    const char *name, *arg, *help;
} vla_doc_item;

/* a section of the page beyond the options: a paragraph, then a list of items or lines, then a
 * closing paragraph. lines: "  term  meaning" lines, deeper-indented continuations and unindented
 * notes (rendered as tagged paragraphs), or, with pre, a block kept as typed */
typedef struct {
    const char *title; /* "COLUMNS", "SWEEP FILE"; NULL ends the list */
    const char *text;
    const vla_doc_item *items;
    const char *lines;
    int pre;
    const char *text_end;
} vla_doc_section;

typedef struct {
    const char *prog;     /* "vla-drift" */
    const char *phrase;   /* the NAME line's phrase ("VLA_MAN_NAME" in the environment wins) */
    const char *synopsis; /* after the program's name: "[OPTION]... FILE" */
    const char *summary;
    const char *version;  /* "0.1.0" */
    /* the options: up to three NULL-terminated lists, in order (the program's own, then the
     * common ones); --NAME ARG */
    const vla_doc_item *opts[3];
    const char *after_opts; /* a line after the options in --help (the defaults) */
    vla_doc_section sections[4];
    const vla_doc_item *exit, *env, *files; /* NULL-terminated */
    const char *files_end;
    const char *examples; /* command lines, one a line */
    const char *see_also; /* "vlastab(7)" by default */
} vla_doc;

/* print --help / --man on standard output and exit 0 */
void vla_doc_help(const vla_doc *d) __attribute__((noreturn));
void vla_doc_man(const vla_doc *d) __attribute__((noreturn));
/* the --help text's "--NAME ARG" column width */
#define VLA_DOC_WIDTH 24
#endif
