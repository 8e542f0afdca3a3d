/* util.c: vla-sweep's exits and memory, which every part calls (its main, parser, runner and
 * schedulers), in a file of their own so that no part calls back into main's file. */
#include "sweep.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

/* Set by the exits on an error (usage_exit, die, perr): the work is abandoned mid-way and its
 * memory left to the system, so LeakSanitizer (make test-san) checks only the runs that end by
 * returning from main (the hook is LeakSanitizer's own: sanitizer/lsan_interface.h) */
volatile int abandoned;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return abandoned;
}

void usage_exit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try --help)\n");
    va_end(ap);
    abandoned = 1;
    exit(2);
}

void die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abandoned = 1;
    exit(status);
}

/* status, or 1 (said) when standard output was not written whole: the dry run's list, the script
 * written to standard output, the sbatch line */
int out_status(int status)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return status;
    fprintf(stderr, PROG ": cannot write standard output: %s\n", strerror(errno ? errno : EIO));
    return 1;
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die(1, "out of memory");
    return p;
}
void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die(1, "out of memory");
    return p;
}
void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die(1, "out of memory");
    return p;
}
char *xstrdup(const char *s) { return strcpy(xmalloc(strlen(s) + 1), s); }
char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        die(1, "out of memory");
    va_end(ap);
    return s;
}

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
