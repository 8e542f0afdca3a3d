/* main.c: runs the tests that the test files registered and prints "N passed, N failed[, N skipped]".
 * With an argument, only the tests whose name contains it. Exit status 1 when any failed. */
#include "check.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TESTS 1024
static struct {
    const char *name, *file;
    vla_test_fn fn;
} tests[MAX_TESTS];
static int ntests;
static long checks, fails;
static const char *skipped;
static const char *current;

void vla_test_register(const char *name, vla_test_fn fn, const char *file)
{
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[ntests].name = name;
    tests[ntests].file = file;
    tests[ntests].fn = fn;
    ntests++;
}

void vla_check_pass(void) { checks++; }

void vla_check_fail(const char *file, int line, const char *fmt, ...)
{
    checks++;
    if (++fails > 20) /* one broken test must not bury the rest of the report */
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s (%s:%d): ", current, file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void vla_test_skip(const char *why) { skipped = why; }

static int cmp(const void *a, const void *b)
{
    const char *fa = ((const typeof(tests[0]) *)a)->file, *fb = ((const typeof(tests[0]) *)b)->file;
    int c = strcmp(fa, fb);
    return c ? c : strcmp(((const typeof(tests[0]) *)a)->name, ((const typeof(tests[0]) *)b)->name);
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, nskipped = 0;
    int verbose = getenv("VLA_TEST_VERBOSE") != NULL;
    qsort(tests, ntests, sizeof tests[0], cmp);
    for (int i = 0; i < ntests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        current = tests[i].name;
        checks = fails = 0;
        skipped = NULL;
        clock_t c0 = clock();
        tests[i].fn();
        double sec = (double)(clock() - c0) / CLOCKS_PER_SEC;
        if (skipped && !fails) {
            printf("SKIP %s: %s\n", tests[i].name, skipped);
            nskipped++;
        } else if (fails || checks == 0) {
            if (!checks)
                fprintf(stderr, "FAIL %s: made no check\n", tests[i].name);
            printf("FAIL %s (%ld of %ld checks failed)\n", tests[i].name, fails, checks);
            failed++;
        } else {
            passed++;
            if (verbose)
                printf("ok   %s (%ld checks, %.2f s)\n", tests[i].name, checks, sec);
        }
        fflush(stdout);
    }
    if (nskipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, nskipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
