/* check.h: the project's small test harness. TEST(name) registers a test at load time; CHECK*
 * macros count a failure and print where it happened, then the test goes on. tests/main.c runs
 * every registered test (or those whose name contains argv[1]) and closes with the line CI reads:
 * "N passed, N failed". A test passes when it made at least one check and none failed. */
#ifndef VLA_CHECK_H
#define VLA_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef void (*vla_test_fn)(void);
void vla_test_register(const char *name, vla_test_fn fn, const char *file, int slow);
void vla_check_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void vla_check_pass(void);
void vla_test_skip(const char *why); /* the test is counted as skipped, with its reason */
/* the folder of the programs under test: VLA_BIN_DIR (make test sets it to the build's: a
 * sanitized build's programs are sanitized too), else bin */
const char *vla_test_bin_dir(void);
/* Runs the shell command fmt makes, "bin/vla-NAME" in it meaning this build's program; its
 * standard output into *out (malloc'd, NUL-terminated) when out is not NULL. Returns the exit
 * status, or -1 when the command did not exit. */
#include <stdarg.h>
int vla_test_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vla_test_vsh(char **out, const char *fmt, va_list ap);
/* delta's decay a_t for delta_form=decay (the synthetic streams carry none): in (0.4, 1], spread by
 * the golden ratio, so that 16 steps take the cumulative log-decay near -6 and 32 near -12 */
static inline double vla_test_decay(long t)
{
    double f = (double)t * 0.6180339887498949;
    return 1 - 0.6 * (f - floor(f));
}

/* equal bit patterns (+0 and -0 differ), except that any two NaNs are equal: IEEE 754 leaves
 * the sign and payload of a NaN result unspecified, and C and MPFR choose differently */
static inline int vla_test_same(double a, double b)
{
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof a);
}
/* the first index where x and y are not vla_test_same, -1 when none */
static inline long vla_test_diff_at(const double *x, const double *y, long n)
{
    for (long i = 0; i < n; i++)
        if (!vla_test_same(x[i], y[i]))
            return i;
    return -1;
}
/* qsort's comparison of doubles, ascending */
static inline int vla_test_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define TEST_(name, slow)                                                                          \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void reg_##name(void)                                      \
    {                                                                                              \
        vla_test_register(#name, test_##name, __FILE__, slow);                                     \
    }                                                                                              \
    static void test_##name(void)
#define TEST(name) TEST_(name, 0)
/* a test of more than a second or two (long horizons, programs run and killed, compilers): not in
 * `make check`'s quick tier (tests/run --quick), always in `make test` */
#define TEST_SLOW(name) TEST_(name, 1)

#define CHECK(cond)                                                                                \
    ((cond) ? vla_check_pass() : vla_check_fail(__FILE__, __LINE__, "%s", #cond))
#define CHECK_MSG(cond, ...)                                                                       \
    ((cond) ? vla_check_pass() : vla_check_fail(__FILE__, __LINE__, __VA_ARGS__))
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                       \
        CHECK_MSG(a_ == b_, "%s == %s: %lld != %lld", #a, #b, a_, b_);                             \
    } while (0)
/* |a - b| <= tol, printing both values in decimal and hex */
#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                             \
        CHECK_MSG(fabs(a_ - b_) <= t_, "%s ~ %s: %.17g (%a) vs %.17g (%a), |diff| %.3g > tol %.3g", \
                  #a, #b, a_, a_, b_, b_, fabs(a_ - b_), t_);                                      \
    } while (0)
/* relative: |a - b| <= tol * |b| */
#define CHECK_REL(a, b, tol)                                                                       \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                             \
        CHECK_MSG(fabs(a_ - b_) <= t_ * fabs(b_),                                                  \
                  "%s ~ %s: %.17g vs %.17g, rel %.3g > tol %.3g", #a, #b, a_, b_,                  \
                  fabs(a_ - b_) / fabs(b_), t_);                                                   \
    } while (0)
#endif
