/* proc.c: the tests' process and file helpers (proc.h). */
#define _GNU_SOURCE
#include "proc.h"
#include "check.h"
#include "vlastab.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *make_tmpdir(char *buf, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, len, "%s/vla-hardening-XXXXXX", base ? base : "/tmp");
    return mkdtemp(buf);
}

void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[1024];
        struct stat st;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

const char *program(const char *name)
{
    static char path[4][512];
    static int slot;
    char *p = path[slot++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", vla_test_bin_dir(), name);
    if (access(p, X_OK) != 0)
        return NULL;
    /* the children run in temporary directories: the path must not depend on the cwd */
    char *abs = realpath(p, NULL);
    if (abs) {
        snprintf(p, sizeof path[0], "%s", abs);
        free(abs);
    }
    return p;
}

void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, n, f) == n;
    ok = f && fclose(f) == 0 && ok;
    CHECK_MSG(ok, "cannot write %s", path);
}

/* a .npy of n integers of dtype descr ('<i8', '<i4', ...), as numpy writes one: 0, or 1 */
FILE *npy_open(const char *path, const char *dict)
{
    char hdr[512];
    int len = snprintf(hdr, sizeof hdr - 64, "%s", dict);
    while ((10 + len + 1) % 64)
        hdr[len++] = ' ';
    hdr[len++] = '\n';
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                   (unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
    FILE *f = fopen(path, "wb");
    if (f && (fwrite(pre, 1, 10, f) != 10 || fwrite(hdr, 1, (size_t)len, f) != (size_t)len)) {
        fclose(f);
        f = NULL;
    }
    return f;
}

int write_gdn_trace(const char *dir, int heads, long T, int d, int dv, uint64_t seed,
                    vla_fmt round)
{
    const char *names[] = {"q", "k", "v", "beta", "logdecay"};
    const int width[] = {d, d, dv, 1, 1};
    double *x = malloc(sizeof(double) * heads * T * (d > dv ? d : dv));
    int e = !x;
    for (int f = 0; !e && f < 5; f++) {
        const long n = (long)heads * T * width[f];
        for (long i = 0; i < n; i++) {
            const double g = vla_gauss(seed, (vla_var)f, 0, (uint64_t)i, 0);
            x[i] = vla_round_fmt(round, f < 3 ? g : f == 3 ? 1 / (1 + exp(-g)) : -0.05 * fabs(g));
        }
        char path[200];
        const long shape[3] = {heads, T, width[f]};
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[f]);
        e = vla_npy_write(path, x, f < 3 ? 3 : 2, shape);
    }
    free(x);
    char path[200];
    snprintf(path, sizeof path, "%s/model.txt", dir);
    FILE *f = fopen(path, "w");
    e |= !f || fputs("model gdn\n", f) < 0;
    if (f)
        e |= fclose(f) != 0;
    return e;
}

int judge_folder(char *dir, char *tr, char *out, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/vla-check", vla_test_bin_dir());
    if (access(p, X_OK)) {
        vla_test_skip("bin/vla-check not built (run make first)");
        return 1;
    }
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "cannot make a folder under /tmp");
        return 1;
    }
    sprintf(tr, "%s/tr", dir);
    sprintf(out, "%s/%s", dir, name);
    mkdir(tr, 0700);
    mkdir(out, 0700);
    return 0;
}

int write_npy_ints(const char *path, const char *descr, const long *v, int n)
{
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }",
             descr, n);
    FILE *f = npy_open(path, dict);
    if (!f)
        return 1;
    const int size = descr[2] - '0';
    int e = 0;
    for (int i = 0; !e && i < n; i++)
        for (int b = 0; !e && b < size; b++) /* little-endian, two's complement */
            e = fputc((int)(((uint64_t)v[i] >> (8 * b)) & 0xff), f) == EOF;
    return (fclose(f) != 0) | e;
}

char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

int spawn(child *ch, const char *cwd, char *const argv[], char *const env[])
{
    static int serial;
    ch->rss[0] = 0;
    const char *base = getenv("TMPDIR");
    snprintf(ch->err, sizeof ch->err, "%s/vla-hardening-err.%ld.%d", base ? base : "/tmp",
             (long)getpid(), serial++);
    fflush(NULL);
    ch->pid = fork();
    if (ch->pid < 0)
        return -1;
    if (ch->pid == 0) {
        int null = open("/dev/null", O_WRONLY), e = open(ch->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (null < 0 || e < 0 || dup2(null, 1) < 0 || dup2(e, 2) < 0 || (cwd && chdir(cwd)))
            _exit(126);
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    return 0;
}

int spawn_measured(child *ch, char *const argv[])
{
    char *av[64] = {"/proc/self/exe", "--measure-rss", NULL};
    int n = 2;
    for (int i = 0; argv[i] && n < 62; i++)
        av[++n] = argv[i];
    av[n + 1] = NULL;
    static int serial;
    char rss[620];
    const char *base = getenv("TMPDIR");
    snprintf(rss, sizeof rss, "%s/vla-rss.%ld.%d", base ? base : "/tmp", (long)getpid(), serial++);
    av[2] = rss;
    int r = spawn(ch, NULL, av, NULL);
    snprintf(ch->rss, sizeof ch->rss, "%s", rss);
    return r;
}

int measure_rss_main(char **argv)
{
    pid_t pid = fork();
    if (pid < 0)
        return 126;
    if (pid == 0) {
        execv(argv[3], argv + 3);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        return 126;
    FILE *f = fopen(argv[2], "w");
    if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f))
        return 126;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int finish(child *ch, double timeout)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int st;
        struct rusage ru;
        pid_t r = wait4(ch->pid, &st, WNOHANG, &ru);
        if (r == ch->pid) {
            ch->maxrss_kb = ru.ru_maxrss;
            if (ch->rss[0]) { /* spawn_measured: the program's own peak, from the runner's copy */
                FILE *f = fopen(ch->rss, "r");
                if (!f || fscanf(f, "%ld", &ch->maxrss_kb) != 1)
                    ch->maxrss_kb = -1;
                if (f)
                    fclose(f);
                unlink(ch->rss);
            }
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (r < 0)
            return -2;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec + 1e-9 * (t.tv_nsec - t0.tv_nsec) > timeout) {
            kill(ch->pid, SIGKILL);
            waitpid(ch->pid, &st, 0);
            return -1;
        }
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
}

int run(const char *cwd, char *const argv[], char *const env[], char *msg, size_t len,
               double timeout)
{
    child ch;
    if (spawn(&ch, cwd, argv, env))
        return -2;
    int st = finish(&ch, timeout);
    char *text = read_all(ch.err, NULL);
    snprintf(msg, len, "%s", text ? text : "");
    free(text);
    unlink(ch.err);
    return st;
}

int run_tty(const char *cwd, char *const argv[], char *const env[], char *msg, size_t len,
            double timeout)
{
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, NULL))
        return -3;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(master);
        close(slave);
        return -2;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        close(master);
        if (null < 0 || dup2(null, 1) < 0 || dup2(slave, 2) < 0 || (cwd && chdir(cwd)))
            _exit(126);
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(slave);
    /* read until the child has closed the terminal (EIO on Linux), or the time is up */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n = 0;
    for (;;) {
        struct pollfd pf = {master, POLLIN, 0};
        if (seconds_since(&t0) > timeout) {
            kill(pid, SIGKILL);
            break;
        }
        if (poll(&pf, 1, 100) <= 0)
            continue;
        char buf[4096];
        ssize_t r = read(master, buf, sizeof buf);
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r && n + 1 < len; i++)
            msg[n++] = buf[i];
    }
    if (len)
        msg[n < len ? n : len - 1] = 0;
    close(master);
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -2;
    if (seconds_since(&t0) > timeout)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec - t0->tv_sec + 1e-9 * (t.tv_nsec - t0->tv_nsec);
}

int wait_catching(pid_t pid, int sig, double timeout)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        FILE *f = fopen(path, "r");
        unsigned long long mask = 0;
        int zombie = 0;
        while (f && fgets(line, sizeof line, f)) {
            zombie |= !strncmp(line, "State:", 6) && strchr(line, 'Z');
            if (!strncmp(line, "SigCgt:", 7))
                mask = strtoull(line + 7, NULL, 16);
        }
        if (f)
            fclose(f);
        if (!f || zombie)
            return 0;
        if (mask >> (sig - 1) & 1)
            return 1;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    } while (seconds_since(&t0) < timeout);
    return 0;
}

char *table_body(const char *path)
{
    char *text = read_all(path, NULL);
    if (!text)
        return NULL;
    char *out = malloc(strlen(text) + 1), *o = out;
    for (char *line = text; out && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (strncmp(line, "# command:", 10) && strncmp(line, "# date:", 7)) {
            memcpy(o, line, n);
            o += n;
        }
        line += n;
    }
    if (out)
        *o = 0;
    free(text);
    return out;
}

int begin(char *dir, size_t len, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        const char *name = va_arg(ap, const char *), **path = va_arg(ap, const char **);
        if (!(*path = program(name))) {
            static char why[200];
            snprintf(why, sizeof why, "bin/%s not built", name);
            vla_test_skip(why);
            ok = 0;
        }
    }
    va_end(ap);
    if (ok && !make_tmpdir(dir, len)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        ok = 0;
    }
    return ok;
}
