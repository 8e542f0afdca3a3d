/* dat.c: the .dat result tables of docs/math.md section 9: '#' provenance lines, "# columns: ..."
 * last, then rows of numbers that round-trip binary64. A file is written under PATH.tmp.PID and
 * renamed onto PATH only when closed cleanly, so a crash never leaves a complete-looking table
 * behind (and the next table written to PATH removes what a killed run left). */
#include "vlastab.h"
#include "file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef VLA_GIT
#define VLA_GIT "unknown"
#endif

struct vla_dat {
    FILE *fp;
    char *path; /* where the table goes on close; NULL when fp is written in place */
    char *tmp;  /* the file being written; NULL for stdout or in-place writing */
    int own;    /* fp is ours to close (not stdout) */
    int ncols;  /* -1 until the columns line */
    int err;    /* the first failure, reported by close */
    int errnum; /* errno at that failure: close leaves it in errno, so a program can say why */
};

const char *vla_build_git(void) { return VLA_GIT; }

static void put(vla_dat *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(vla_dat *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(f->fp, fmt, ap) < 0 && !f->err)
        f->err = VLA_EIO, f->errnum = errno;
    va_end(ap);
}

/* Header text must stay on its line: a control character would start a line that is not a
 * comment, and gnuplot would read it as data. */
static void put_text(vla_dat *f, const char *s)
{
    for (; *s; s++)
        if (fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f->fp) == EOF && !f->err)
            f->err = VLA_EIO, f->errnum = errno;
}

/* One argument as a POSIX shell reads it back: bare when harmless, else in single quotes. */
static void put_arg(vla_dat *f, const char *a)
{
    int bare = *a != 0;
    for (const char *p = a; *p && bare; p++)
        bare = isalnum((unsigned char)*p) || strchr("@%+=:,./-_", *p);
    if (bare) {
        put_text(f, a);
        return;
    }
    put(f, "'");
    for (const char *p = a; *p; p++) {
        char one[2] = {*p, 0};
        if (*p == '\'')
            put(f, "'\\''");
        else
            put_text(f, one);
    }
    put(f, "'");
}

/* the processor's model as /proc/cpuinfo names it ("model name"; unknown without one) and the
 * processors online: the machine a table's timings were taken on, which its host name does not
 * say */
static void put_processor(vla_dat *f)
{
    char line[512], model[256] = "unknown";
    FILE *c = fopen("/proc/cpuinfo", "r");
    while (c && fgets(line, sizeof line, c)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = 0;
            snprintf(model, sizeof model, "%s", colon);
            break;
        }
    }
    if (c)
        fclose(c);
    put_text(f, model);
    put(f, ", %ld processors online", sysconf(_SC_NPROCESSORS_ONLN));
}

static void put_header(vla_dat *f, int argc, char **argv)
{
    const char *prog = argc > 0 && argv && argv[0] ? argv[0] : "unknown";
    const char *slash = strrchr(prog, '/');
    if (slash && slash[1])
        prog = slash + 1;
    put(f, "# vlastab %s\n# program: ", VLA_VERSION);
    put_text(f, prog);
    put(f, "\n# command:");
    for (int i = 0; i < argc && argv && argv[i]; i++) {
        put(f, " ");
        put_arg(f, argv[i]);
    }
    char date[32] = "unknown";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "unknown");
    host[sizeof host - 1] = 0;
    put(f, "\n# date: %s\n# host: ", date);
    put_text(f, host);
    put(f, "\n# processor: ");
    put_processor(f);
    put(f, "\n# git: ");
    put_text(f, VLA_GIT);
    put(f, "\n");
}

static void dat_free(vla_dat *f)
{
    free(f->path);
    free(f->tmp);
    free(f);
}

int vla_dat_open(vla_dat **out, const char *path, int argc, char **argv)
{
    if (!out)
        return VLA_EINVAL;
    *out = NULL;
    if (!path || !*path)
        return VLA_EINVAL;
    vla_dat *f = calloc(1, sizeof *f);
    if (!f)
        return VLA_ENOMEM;
    f->ncols = -1;
    if (strcmp(path, "-") == 0) {
        f->fp = stdout;
    } else {
        /* A character device or a FIFO (/dev/null, a pipe, /dev/stdout through its link) is a
         * stream, written in place; a regular file or a symbolic link at path is replaced by the
         * rename (a link by a regular file: its target is left as it is); anything else (a
         * directory, a block device) is refused. */
        struct stat st;
        const char *kind;
        int e;
        if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
            f->fp = fopen(path, "w");
        } else if ((e = vla_file_target(path, &f->path, &kind))) {
            int errnum = errno;
            dat_free(f);
            errno = errnum;
            return e == VLA_ENOMEM ? e : VLA_EIO;
        } else {
            size_t n = strlen(f->path) + 32;
            f->tmp = malloc(n);
            if (!f->tmp) {
                dat_free(f);
                return VLA_ENOMEM;
            }
            snprintf(f->tmp, n, "%s.tmp.%ld", f->path, (long)getpid());
            vla_file_remove_stale(f->path);
            f->fp = vla_file_create(f->tmp);
        }
        if (!f->fp) {
            int errnum = errno;
            dat_free(f);
            errno = errnum; /* why fopen failed, for the caller's message */
            return VLA_EIO;
        }
        f->own = 1;
    }
    put_header(f, argc, argv);
    *out = f;
    return VLA_OK;
}

int vla_dat_meta(vla_dat *f, const char *key, const char *fmt, ...)
{
    if (!f || !key || !*key || !fmt || f->ncols >= 0 || strcmp(key, "columns") == 0)
        return VLA_EINVAL;
    for (const char *p = key; *p; p++)
        if (!isgraph((unsigned char)*p) || *p == ':')
            return VLA_EINVAL;
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *val = n < 0 ? NULL : malloc((size_t)n + 1);
    if (val)
        vsnprintf(val, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    va_end(ap);
    if (!val)
        return n < 0 ? VLA_EINVAL : VLA_ENOMEM;
    put(f, "# %s: ", key);
    put_text(f, val);
    put(f, "\n");
    free(val);
    return f->err;
}

/* The next whitespace-separated word at or after *p: its start, and *p moved past it. */
static const char *next_word(const char **p, int *len)
{
    const char *w = *p;
    while (*w && isspace((unsigned char)*w))
        w++;
    const char *e = w;
    while (*e && !isspace((unsigned char)*e))
        e++;
    *p = e;
    *len = (int)(e - w);
    return w;
}

int vla_dat_columns(vla_dat *f, const char *names)
{
    if (!f || !names || f->ncols >= 0)
        return VLA_EINVAL;
    int n = 0, len;
    for (const char *p = names; next_word(&p, &len), len > 0;)
        n++;
    if (n == 0)
        return VLA_EINVAL;
    put(f, "# columns:");
    for (const char *p = names, *w; w = next_word(&p, &len), len > 0;)
        put(f, " %.*s", len, w);
    put(f, "\n");
    f->ncols = n;
    return f->err;
}

/* A name cell is one word that cannot be read as a number, so that a reader tells the two apart
 * and gnuplot's 'using' of a number column never meets it. */
static int is_name(const char *s)
{
    char *end;
    strtod(s, &end);
    if (!*s || end != s)
        return 0;
    for (; *s; s++)
        if (isspace((unsigned char)*s) || *s == '#')
            return 0;
    return 1;
}

int vla_dat_row_named(vla_dat *f, const double *vals, const char *const *names, int n)
{
    if (!f || f->ncols < 0 || n != f->ncols || (n > 0 && !vals))
        return VLA_EINVAL;
    for (int i = 0; names && i < n; i++)
        if (names[i] && !is_name(names[i]))
            return VLA_EINVAL;
    char buf[40];
    for (int i = 0; i < n; i++) {
        if (names && names[i])
            put(f, i ? " %s" : "%s", names[i]);
        else {
            /* the shortest of %.15g, %.16g, %.17g that reads back as the same double: %.17g
             * always does, the shorter forms keep 0.1 from printing as 0.10000000000000001 */
            vla_num_text(buf, sizeof buf, vals[i], 15);
            put(f, i ? " %s" : "%s", buf);
        }
    }
    put(f, "\n");
    return f->err;
}

int vla_dat_row(vla_dat *f, const double *vals, int n) { return vla_dat_row_named(f, vals, NULL, n); }

int vla_dat_block(vla_dat *f)
{
    if (!f)
        return VLA_EINVAL;
    put(f, "\n\n");
    return f->err;
}

/* A table closed before its columns line is not a table: it is discarded like a failed one. */
int vla_dat_close(vla_dat *f)
{
    if (!f)
        return VLA_EINVAL;
    int err = f->err, errnum = f->errnum;
    if (!err && f->ncols < 0)
        err = VLA_EINVAL, errnum = EINVAL;
    if (fflush(f->fp) != 0 && !err)
        err = VLA_EIO, errnum = errno;
    if (f->tmp && !err && fsync(fileno(f->fp)) != 0)
        err = VLA_EIO, errnum = errno;
    if (f->own && fclose(f->fp) != 0 && !err)
        err = VLA_EIO, errnum = errno;
    if (f->tmp) {
        const char *kind; /* the path may have become a FIFO or a device since the open */
        if (!err && vla_file_replace(f->tmp, f->path, &kind) != 0)
            err = VLA_EIO, errnum = errno;
        if (err)
            unlink(f->tmp);
    }
    dat_free(f);
    if (err)
        errno = errnum;
    return err;
}

void vla_dat_discard(vla_dat *f)
{
    if (!f)
        return;
    if (f->own)
        fclose(f->fp);
    if (f->tmp)
        unlink(f->tmp);
    dat_free(f);
}
