/* report.h: the text of vla-check's reports (its rows' and its judge's): Markdown that shows a
 * name as it is and nothing more, JSON, the command as typed, the report's files checked before any
 * work and written whole (report.c). */
#ifndef VLA_REPORT_H
#define VLA_REPORT_H
#include "cli.h"
#include <stdio.h>

void md_t(FILE *f, long t);
const char *md_base(const char *path);
void md_text(FILE *f, const char *s);
void md_link(FILE *f, const char *s);
void md_command(FILE *f, int argc, char **argv);
int report_paths_ok(const char *prefix, const vla_cli *c, int judged);
int report_write(const char *path, char *text, size_t len);
void json_num(FILE *f, double x);
void json_str(FILE *f, const char *s);
int cli_settings(const vla_cli *c, const char **set, int max);
#endif
