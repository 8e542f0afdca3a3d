/* roff.h: text as roff, for the man pages the programs print with --man (cli.c for the programs
 * on the shared parser; vla-regress and vla-sweep, which have parsers of their own). */
#ifndef VLA_ROFF_H
#define VLA_ROFF_H
#include <stdio.h>

/* s, up to end (NULL: its NUL), on standard output as roff text: a '.' opening a line made text,
 * backslashes, dashes and quotes escaped so that options copy as typed; oneline: newlines
 * become spaces (a tag, a title) */
static inline void vla_roff(const char *s, const char *end, int oneline)
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
#endif
