/* summary.c: the summary line of a program's table (summary.h): clauses added by the program,
 * and the measured errors' first step past 1 found in the table's rows. */
#include "summary.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void vla_summary_add(vla_summary *s, int loud, const char *fmt, ...)
{
    int room = (int)sizeof s->text - s->len;
    if (room <= 3)
        return;
    if (s->len)
        s->len += snprintf(s->text + s->len, room, "; "), room -= 2;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->text + s->len, room, fmt, ap);
    va_end(ap);
    s->len += n < room ? n : room - 1;
    s->loud |= loud;
}

static int ends_with(const char *w, size_t len, const char *sfx)
{
    size_t n = strlen(sfx);
    return len >= n && !strncmp(w + len - n, sfx, n);
}

static int is_error(const char *w, size_t len)
{
    return ends_with(w, len, "relerr") || ends_with(w, len, "x_err") ||
           ends_with(w, len, "read_err") || (len == 7 && !strncmp(w, "a_drift", 7));
}

/* a column that is nan in every row of a block is not measured there (A's error where the model
 * has no A) */
static int measured(const vla_summary_block *b, int col)
{
    for (long i = 0; i < b->n; i++)
        if (!isnan(b->v[(size_t)i * b->ncol + col]))
            return 1;
    return 0;
}

int vla_summary_is_error(const char *column) { return is_error(column, strlen(column)); }

int vla_summary_errors(vla_summary *s, const char *columns, const vla_summary_block *b, int nb,
                       int what)
{
    const char *key = columns + strspn(columns, " ");
    int keylen = (int)strcspn(key, " "), added = 0;
    int col = 0;
    for (const char *p = columns; *p; col++) {
        p += strspn(p, " ");
        size_t len = strcspn(p, " ");
        if (!len)
            break;
        for (int w = VLA_SUM_PAST1; is_error(p, len) && w <= VLA_SUM_NONFINITE; w <<= 1) {
            if (!(what & w))
                continue;
            int first = -1;
            double at = 0;
            for (int k = 0; k < nb; k++)
                for (long i = 0; col < b[k].ncol && i < b[k].n && measured(&b[k], col); i++) {
                    const double *row = b[k].v + (size_t)i * b[k].ncol;
                    /* (an Inf error is said once: as not finite where that is asked) */
                    int hit = w == VLA_SUM_NONFINITE ? !isfinite(row[col])
                              : row[col] >= 1 && (!(what & VLA_SUM_NONFINITE) || isfinite(row[col]));
                    if (hit && (first < 0 || row[0] < at))
                        first = k, at = row[0];
                }
            if (first >= 0) {
                vla_summary_add(s, 1, "%.*s %s (%s, %.*s = %.15g)", (int)len, p,
                                w == VLA_SUM_NONFINITE ? "is not finite" : "reached 1", b[first].name, keylen, key,
                                at);
                added++;
            }
        }
        p += len;
    }
    return added;
}

void vla_summary_say(const vla_summary *s, const char *prog)
{
    if (s->loud)
        fprintf(stderr, "%s: summary: %s\n", prog, s->text);
}
