/* gnuplot.h: what reaches gnuplot from a name a user was handed (a trace folder, a table, a column,
 * a report prefix) goes through here: quoted as gnuplot's single-quoted strings (in which nothing
 * is substituted, neither `backquotes` nor @macros; a quote is doubled), a file name kept from
 * gnuplot's pipes ('<cmd' reads from a shell command, '|cmd' writes to one), and a line break, which
 * no gnuplot string can hold, refused. gnuplot itself runs without a shell (posix_spawnp), the script
 * on its standard input. gnuplot.c. */
#ifndef VLA_GNUPLOT_H
#define VLA_GNUPLOT_H
#include "vlastab.h"
#include <stddef.h>
#include <stdio.h>

/* s as a single-quoted gnuplot string: ' doubled, a control character (a line break) shown as '?'
 * (for titles and labels; a file name is checked with vla_gp_path_ok first) */
void vla_gp_str(FILE *f, const char *s);
/* the file name path as a single-quoted gnuplot string that names that file and nothing else:
 * "./" before a name gnuplot would read otherwise (one that starts with '<', '|' or '$', a
 * datablock's sigil; "-", "+", "++"; the empty name) */
void vla_gp_path(FILE *f, const char *path);
/* 0 when path can be a file name in a gnuplot script; else VLA_EINVAL with the reason in why (may
 * be NULL; "it holds a control character ..."): no gnuplot string holds a control character */
int vla_gp_path_bad(const char *path, vla_error *why);

/* 0 when the file gnuplot drew at path is a whole PNG (its signature, and its IEND chunk last),
 * synced to disk; else VLA_EIO with the reason in why ("it is cut short ..."). gnuplot exits 0
 * when the disk filled up under its figure: this is how a caller knows. */
int vla_gp_png_whole(const char *path, vla_error *why);

/* Runs gnuplot on the script (len bytes) without a shell: posix_spawnp("gnuplot"), the script
 * written to its standard input, its standard output discarded and, when quiet, its standard error
 * too. Returns gnuplot's exit status (0: it drew), or -1 with errno when it could not be started
 * (ENOENT: gnuplot is not installed) or was ended by a signal. */
int vla_gnuplot(const char *script, size_t len, int quiet);
#endif
