/* list.h: a comma-separated option value (--models la,vla3, --tracks sm,cg:8, --Cs 2,4) split into
 * its items, written once for every program's list options, which libc-only tools (vla-sweep,
 * vla-regress, vla-bench) share: an empty value, an empty item ("a,,b", a trailing comma), an item
 * too long and an item too many are each an error that says which, never a list of nothing. */
#ifndef VLA_LIST_H
#define VLA_LIST_H
#include <stdio.h>
#include <string.h>

/* Splits val into at most max items of at most len - 1 characters, items[i * len]: their count
 * (>= 1), or -1 with the reason in why ("an empty item (2nd of 'a,,b')", ...). */
static inline int vla_list_split(const char *val, char *items, int max, size_t len, char *why,
                                 size_t wl)
{
    int n = 0;
    if (!*val) {
        snprintf(why, wl, "an empty list: give at least one item");
        return -1;
    }
    for (const char *p = val;; p++) {
        size_t k = strcspn(p, ",");
        if (k == 0) {
            snprintf(why, wl, "an empty item (item %d of '%s'): items are separated by single "
                     "commas", n + 1, val);
            return -1;
        }
        if (k >= len) {
            snprintf(why, wl, "item %d of '%s' is longer than %zu characters", n + 1, val,
                     len - 1);
            return -1;
        }
        if (n == max) {
            snprintf(why, wl, "more than %d items in '%s'", max, val);
            return -1;
        }
        memcpy(items + (size_t)n * len, p, k);
        items[(size_t)n++ * len + k] = 0;
        p += k;
        if (!*p)
            return n;
    }
}
#endif
