/* test_house.c: the house rules a reader relies on, over every source file outside tests/: each
 * opens with a line that says what it is (a C file: a comment "NAME: what it is"; a script: a
 * "# " comment or a docstring, after its #! line), and no C function is over 150 lines (a '{' in
 * column 0 to the next '}' in column 0, help texts included). Run from the repository root: with
 * fewer files than the tree has, it fails rather than pass on nothing. */
#include "check.h"
#include "proc.h"
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOUSE_FN_MAX 150

static const char *const c_files[] = {"lib/*.[ch]", "lib/*/*.h", "experiments/*.[ch]",
                                      "reference/*.[ch]", "kernels/*.[ch]", "kernels/*.cu",
                                      "lanes/*.[ch]", "tools/*/*.[ch]", "bench/*.c",
                                      "examples/*.c"};
static const char *const scripts[] = {
    "tools/*.py", "tools/python/*.py", "tools/python/vlastab/*.py", "bench/*.py", "bench/*.sh",
    "bench/mutants/*.py", "examples/ci/*", "plots/*.gp", "mk/*.mk", "man/*.sh", "kernels/*.sh",
    "paper/*.sh", "sweeps/*.awk"};

/* path's first line (after a #! line), into line; 0 when the file cannot be read */
static int first_line(const char *path, char *line, size_t len, char **text)
{
    *text = read_all(path, NULL);
    if (!*text)
        return 0;
    const char *p = *text;
    if (!strncmp(p, "#!", 2))
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "";
    size_t n = strcspn(p, "\n");
    snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return 1;
}

/* the C functions of text over HOUSE_FN_MAX lines, each a failed check naming it */
static void long_functions(const char *path, const char *text)
{
    long ln = 1, open = 0;
    for (const char *p = text; *p; ln++) {
        if (*p == '{')
            open = ln;
        else if (*p == '}' && open) {
            CHECK_MSG(ln - open + 1 <= HOUSE_FN_MAX, "%s:%ld: a function of %ld lines (at most %d)",
                      path, open, ln - open + 1, HOUSE_FN_MAX);
            open = 0;
        }
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
    }
}

TEST(house_every_file_says_what_it_is_no_long_function)
{
    int nc = 0, ns = 0;
    for (int k = 0; k < 2; k++) {
        const char *const *pats = k ? scripts : c_files;
        const size_t np = k ? sizeof scripts / sizeof *scripts : sizeof c_files / sizeof *c_files;
        for (size_t i = 0; i < np; i++) {
            glob_t g;
            if (glob(pats[i], 0, NULL, &g))
                continue;
            for (size_t j = 0; j < g.gl_pathc; j++) {
                const char *path = g.gl_pathv[j];
                char line[256], *text;
                if (!first_line(path, line, sizeof line, &text)) {
                    CHECK_MSG(0, "%s: cannot read it", path);
                    continue;
                }
                if (k) { /* a script: a comment or a docstring that says something */
                    ns++;
                    CHECK_MSG((!strncmp(line, "# ", 2) || !strncmp(line, "\"\"\"", 3)) &&
                                  strlen(line) > 20,
                              "%s opens with '%s', not a line that says what it is", path, line);
                } else { /* C: a comment "NAME: what" */
                    nc++;
                    const char *colon = strchr(line, ':');
                    CHECK_MSG(!strncmp(line, "/* ", 3) && colon && colon - line < 40 &&
                                  colon[1] == ' ',
                              "%s opens with '%s', not '/* NAME: what it is'", path, line);
                    long_functions(path, text);
                }
                free(text);
            }
            globfree(&g);
        }
    }
    printf("house: %d C files and %d scripts\n", nc, ns);
    /* the tree has about 140 C files and 80 scripts: fewer means another folder, not a pass */
    CHECK_MSG(nc >= 100 && ns >= 50,
              "%d C files and %d scripts found (run from the repository root)", nc, ns);
}
