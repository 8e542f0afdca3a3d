/* main.c: runs the tests that the test files registered and prints "N passed, N failed[, N skipped]".
 * With an argument, only the tests whose name contains it; --quick leaves out the slow ones
 * (TEST_SLOW: `make check`). Exit status 1 when any failed. */
#include "check.h"
#include "proc.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_TESTS 1024
static struct {
    const char *name, *file;
    vla_test_fn fn;
    int slow;
} tests[MAX_TESTS];
static int ntests;
static long checks, fails;
static const char *skipped;
static const char *current;

void vla_test_register(const char *name, vla_test_fn fn, const char *file, int slow)
{
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[ntests].name = name;
    tests[ntests].file = file;
    tests[ntests].fn = fn;
    tests[ntests].slow = slow;
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

const char *vla_test_bin_dir(void)
{
    const char *d = getenv("VLA_BIN_DIR");
    return d && *d ? d : "bin";
}

int vla_test_vsh(char **out, const char *fmt, va_list ap)
{
    char raw[4096], cmd[8192], *w = cmd;
    vsnprintf(raw, sizeof raw, fmt, ap);
    for (const char *r = raw; *r && w < cmd + sizeof cmd - 700;) /* bin/vla-x: this build's */
        if (!strncmp(r, "bin/vla-", 8) && (r == raw || strchr(" '\"=", r[-1]))) {
            w += sprintf(w, "%s/vla-", vla_test_bin_dir());
            r += 8;
        } else {
            *w++ = *r++;
        }
    *w = 0;
    fflush(NULL);
    if (!out) {
        int st = system(cmd);
        return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    FILE *p = popen(cmd, "r");
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    for (size_t k; p && buf && (k = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b)
                break;
            buf = b;
        }
    }
    if (buf)
        buf[n] = 0;
    *out = buf;
    int st = p ? pclose(p) : -1;
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int vla_test_sh(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vla_test_vsh(out, fmt, ap);
    va_end(ap);
    return r;
}

static int cmp(const void *a, const void *b)
{
    const char *fa = ((const typeof(tests[0]) *)a)->file, *fb = ((const typeof(tests[0]) *)b)->file;
    int c = strcmp(fa, fb);
    return c ? c : strcmp(((const typeof(tests[0]) *)a)->name, ((const typeof(tests[0]) *)b)->name);
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, nskipped = 0, nslow = 0, quick = 0;
    int verbose = getenv("VLA_TEST_VERBOSE") != NULL;
    const char *only = NULL;
    if (argc >= 4 && !strcmp(argv[1], "--measure-rss")) /* proc.h's spawn_measured */
        return measure_rss_main(argv);
    /* the programs' progress lines off a terminal (every 30 s) would land in the stderr that tests
     * read, depending on the machine's speed: off, but where a test asks for them */
    setenv("VLA_PROGRESS_SECONDS", "off", 0);
    for (int a = 1; a < argc; a++)
        if (!strcmp(argv[a], "--quick"))
            quick = 1;
        else
            only = argv[a];
    qsort(tests, ntests, sizeof tests[0], cmp);
    for (int i = 0; i < ntests; i++) {
        if (only && !strstr(tests[i].name, only))
            continue;
        if (quick && tests[i].slow) {
            nslow++;
            continue;
        }
        current = tests[i].name;
        checks = fails = 0;
        skipped = NULL;
        struct timespec w0, w1;
        clock_gettime(CLOCK_MONOTONIC, &w0);
        clock_t c0 = clock();
        tests[i].fn();
        double sec = (double)(clock() - c0) / CLOCKS_PER_SEC;
        clock_gettime(CLOCK_MONOTONIC, &w1);
        double wall = (w1.tv_sec - w0.tv_sec) + 1e-9 * (w1.tv_nsec - w0.tv_nsec);
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
                printf("ok   %s (%ld checks, %.2f s CPU, %.2f s wall)\n", tests[i].name, checks,
                       sec, wall);
        }
        fflush(stdout);
    }
    char slow[64] = "";
    if (nslow)
        snprintf(slow, sizeof slow, " (quick: %d slow tests not run)", nslow);
    if (nskipped)
        printf("%d passed, %d failed, %d skipped%s\n", passed, failed, nskipped, slow);
    else
        printf("%d passed, %d failed%s\n", passed, failed, slow);
    return failed ? 1 : 0;
}
