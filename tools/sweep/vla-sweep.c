/* vla-sweep: parameter sweeps of the experiment programs (a sweep file, sweeps/NAME.sweep, names
 * the grid) run on this machine with N workers, under mpirun with rank 0 handing the cases out, or
 * as a Slurm job array: one table per case under one output tree, and a manifest. Its own program:
 * it never parses the experiments' options, only appends --out to each command (help_format). */
#define _GNU_SOURCE
#include "vlastab.h"
#include "doc.h"
#include "file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef VLA_SWEEP_MPI
#include <mpi.h>
#endif

#define PROG "vla-sweep"
#define MSGLEN 400
#define SLURM_MAX_TASKS 1000 /* Slurm's default MaxArraySize is 1001 */
#define SWEEP_MAX_BYTES (1L << 20) /* a sweep file is a page of directives, not a stream */
#define MANIFEST_MAX_BYTES (256L << 20) /* a row of a few hundred bytes a case */

extern char **environ;

/* ---- the help text, also the man page: one source, so that the two agree word for word ---- */

static const char help_summary[] =
    "Runs a parameter sweep: the sweep FILE names a program, fixed options and axes to cross;\n"
    "each point of the grid is a case with a stable name and its own table NAME.dat under one\n"
    "output tree, beside a manifest. A case whose table exists is complete (the programs write\n"
    "their tables atomically) and is skipped, so running a sweep again resumes it. A failing\n"
    "case is reported with its command and the last line of its error, and the others go on.\n"
    "Three ways to run the same cases, with the same results bit for bit: locally with N\n"
    "workers (the default), under mpirun (--mpi: rank 0 hands the cases out one at a time, each\n"
    "rank runs them, one GPU per rank where there are GPUs), or as a Slurm job array (--slurm\n"
    "writes a script to submit unchanged).";

static const vla_doc_item opts[] = {
    {"jobs", "N", "parallel workers (-j N for short; default: the number of cores)"},
    {"out", "DIR", "the output tree (default: the file's out line, else data/NAME)"},
    {"dry-run", NULL, "list the cases and their commands (run or complete); run nothing"},
    {"mpi", NULL, "under mpirun -np N: rank 0 hands the cases out, every rank runs them"},
    {"slurm", NULL, "write a Slurm job-array script (OUT/NAME.sbatch) and run nothing"},
    {"chunk", "K", "cases per Slurm array task (default: the file's chunk line, else 1)"},
    {"script", "FILE", "where --slurm writes the script (- for stdout; replaces only a regular file)"},
    {"quiet", NULL, "say nothing of the cases that succeed"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
    {NULL, NULL, NULL},
};

static const char help_format[] =
    "Sweep file: one directive a line; # starts a comment; words are separated by blanks, and\n"
    "'...' or \"...\" quote a word with blanks in it.\n"
    "  out DIR            the output tree (relative to the directory vla-sweep runs in)\n"
    "  slurm WORDS        a line #SBATCH WORDS in the Slurm script (repeatable)\n"
    "  chunk K            cases per Slurm array task\n"
    "  program NAME       starts a section: the program, found beside vla-sweep, else on PATH\n"
    "                     (a NAME with a / is a path)\n"
    "  fixed WORDS        options given to every case of the section (repeatable)\n"
    "  axis --OPT V1 V2   an axis: each case takes --OPT with one of the values; the axes of a\n"
    "                     section are crossed, the first one outermost. V@LABEL names a value\n"
    "                     in case names (default: the value, with characters other than\n"
    "                     letters, digits and . _ + - turned into _)\n"
    "  name TEMPLATE      the case name: {OPT} is the label of axis --OPT, {N} that of the\n"
    "                     N-th axis, / makes a subfolder (default: PROGRAM-{1}-{2}..., without\n"
    "                     the vla- of the program's name)\n"
    "  resume             the program takes --resume: a case with a checkpoint (NAME.dat.ckpt)\n"
    "                     continues from it\n"
    "  alone              each case runs with no other case beside it, after the others, with\n"
    "                     every core (a program that measures time; under Slurm each is an\n"
    "                     array task of its own: add slurm --exclusive)\n"
    "A case runs PROGRAM FIXED... --OPT1 V1 --OPT2 V2 ... --out OUT/NAME.dat, in the directory\n"
    "vla-sweep runs in, without a shell; its standard output and error go to OUT/NAME.log (kept\n"
    "when it failed or said something); what a case that ran found (its program's summary on\n"
    "stderr: a non-finite state, a read-out exactly 0, an error past 1) is said in its line and\n"
    "again at the end (found: CASE: ...). Each worker's cases see CUDA_VISIBLE_DEVICES set to one\n"
    "GPU (worker or node-local rank modulo the GPUs: those CUDA_VISIBLE_DEVICES lists, else\n"
    "/dev/nvidiaN, or VLA_SWEEP_GPUS=N) and, unless it is set, OMP_NUM_THREADS = cores/workers.";

static const char help_columns[] =
    "The manifest (OUT/NAME.manifest.tsv for NAME.sweep, rewritten atomically as cases end) has\n"
    "tab-separated columns:";
static const vla_doc_item help_cols[] = {
    {"case", NULL, "the case name (its table is OUT/case.dat)"},
    {"command", NULL, "the command, as a POSIX shell reads it back"},
    {"status", NULL, "ok (its table exists), failed or pending (not run: interrupted)"},
    {"seconds", NULL, "wall time of the run that wrote the table (- when not known)"},
    {"message", NULL, "for a failure: exit N or signal N, and the last line of its error output"},
    {NULL, NULL, NULL},
};

static const vla_doc_item help_exit[] = {
    {"0", NULL, "every case is complete (--dry-run, --slurm: the listing or the script was "
                "written)"},
    {"1", NULL, "a case failed (the manifest and the case's log say why); the others went on"},
    {"2", NULL, "a usage error, a bad sweep file (the message names the line), or another "
                "vla-sweep running on the output tree"},
    {"3", NULL, "interrupted by SIGINT or SIGTERM: the running cases were stopped (each writes "
                "its checkpoints), the manifest says pending; running the sweep again resumes"},
    {NULL, NULL, NULL},
};

static const vla_doc_item help_env[] = {
    {"OMP_NUM_THREADS", NULL, "given to each case; unset, vla-sweep sets it to cores / workers"},
    {"CUDA_VISIBLE_DEVICES", NULL, "the GPUs the workers share out, one each"},
    {"VLA_SWEEP_GPUS", NULL, "N: the number of GPUs when neither CUDA_VISIBLE_DEVICES nor "
                             "/dev/nvidiaN says"},
    {"PATH", NULL, "where a program is found when it is not beside vla-sweep"},
    {NULL, NULL, NULL},
};

static const vla_doc_item help_files[] = {
    {"FILE", NULL, "the sweep file, read (a regular file of at most 1 MiB)"},
    {"OUT/CASE.dat", NULL, "each case's table, written by its program"},
    {"OUT/CASE.log", NULL, "each case's standard output and error, kept when it failed or said "
                           "something"},
    {"OUT/NAME.manifest.tsv", NULL, "the manifest"},
    {"OUT/vla-sweep.lock", NULL, "locked (flock) while a sweep and its cases run on OUT, with "
                                 "the sweep's pid: a second sweep on the tree is refused"},
    {"OUT/NAME.sbatch", NULL, "--slurm: the job-array script (--script FILE: elsewhere); only a "
                              "regular file is replaced"},
    {NULL, NULL, NULL},
};

static const char help_example[] =
    "bin/vla-sweep -j 8 sweeps/paper.sweep\n"
    "mpirun -np 16 bin/vla-sweep --mpi sweeps/paper.sweep\n"
    "bin/vla-sweep --slurm sweeps/paper.sweep && sbatch data/paper.sbatch";

static void doc(int man)
{
    const vla_doc d = {
        .prog = PROG,
        .phrase = "parameter sweeps of the experiment programs",
        .synopsis = "[OPTION]... FILE",
        .summary = help_summary,
        .version = VLA_VERSION,
        .opts = {opts, NULL, NULL},
        .sections = {{"Sweep file", NULL, NULL, help_format, 1, NULL},
                     {"Columns", help_columns, help_cols, NULL, 0, NULL},
                     {NULL, NULL, NULL, NULL, 0, NULL}},
        .exit = help_exit,
        .env = help_env,
        .files = help_files,
        .examples = help_example,
    };
    if (man)
        vla_doc_man(&d);
    vla_doc_help(&d);
}

/* Set by the exits on an error (usage_exit, die, perr): the work is abandoned mid-way and its
 * memory left to the system, so LeakSanitizer (make test-san) checks only the runs that end by
 * returning from main (the hook is LeakSanitizer's own: sanitizer/lsan_interface.h) */
static volatile int abandoned;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return abandoned;
}

static void usage_exit(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_exit(const char *fmt, ...)
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

static void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int status, const char *fmt, ...)
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

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die(1, "out of memory");
    return p;
}
static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die(1, "out of memory");
    return p;
}
static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die(1, "out of memory");
    return p;
}
static char *xstrdup(const char *s) { return strcpy(xmalloc(strlen(s) + 1), s); }
static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        die(1, "out of memory");
    va_end(ap);
    return s;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- the sweep file ---- */

typedef struct {
    char *opt; /* "--model" */
    int n;
    char **val, **label;
    int line;
} axis_t;

typedef struct {
    char *prog;    /* as written */
    char *path;    /* what is executed */
    char *display; /* argv[0] of the cases: how the tables' command lines will read */
    char **fixed;
    int nfixed;
    axis_t *axes;
    int naxes;
    char *tpl; /* the name template */
    int tpl_line; /* ... its line (0: the default) */
    int resume;
    int alone; /* its cases run with no other case beside them (timings) */
    int line;
} section_t;

typedef struct {
    const char *file;
    char *name; /* NAME of NAME.sweep: the manifest and the Slurm files carry it */
    char *out;
    char **slurm;
    int nslurm;
    int chunk;
    section_t *sec;
    int nsec;
} sweep_t;

enum { C_TODO, C_COMPLETE, C_OK, C_FAILED, C_PENDING };

typedef struct {
    char *name;
    int sec;
    char **argv; /* NULL-terminated, --out OUT/NAME.dat last */
    int argc;
    char *out, *log;
    char *command; /* argv quoted for a shell */
    int state;
    double secs; /* NAN: not known */
    char msg[MSGLEN];
    char said[MSGLEN]; /* the summary its program said on stderr (summary.h): what it found */
} case_t;

static void perr(const sweep_t *sw, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));
static void perr(const sweep_t *sw, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": %s:%d: ", sw->file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abandoned = 1;
    exit(2);
}

/* Splits a line into words: blanks separate, quotes group, # at the start of a word ends the line
 * (so that a value like --set x=a#b stays whole). Returns the count; -1 on an open quote. */
static int split(char *s, char ***words)
{
    int n = 0, cap = 8;
    char **w = xmalloc(cap * sizeof *w);
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (!*s || *s == '#')
            break;
        char *dst = s, *start = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') {
            if (*s == '\'' || *s == '"') {
                char q = *s++;
                while (*s && *s != q)
                    *dst++ = *s++;
                if (!*s) {
                    for (int i = 0; i < n; i++)
                        free(w[i]);
                    free(w);
                    return -1;
                }
                s++;
            } else {
                *dst++ = *s++;
            }
        }
        int more = *s != 0;
        if (more)
            s++;
        *dst = 0;
        if (n + 1 >= cap)
            w = xrealloc(w, (cap *= 2) * sizeof *w);
        w[n++] = xstrdup(start);
        if (!more)
            break;
    }
    w[n] = NULL;
    *words = w;
    return n;
}

static int label_char(int c) { return isalnum(c) || c == '.' || c == '_' || c == '+' || c == '-'; }

static char *default_label(const char *v)
{
    char *l = xstrdup(v);
    for (char *p = l; *p; p++)
        if (!label_char((unsigned char)*p))
            *p = '_';
    return l;
}

static const char *short_prog(const char *p)
{
    const char *b = strrchr(p, '/');
    b = b ? b + 1 : p;
    return strncmp(b, "vla-", 4) || !b[4] ? b : b + 4;
}

/* Renders the template for one point of the grid (idx: the value of each axis); NULL and a
 * reason in why when it does not make a name that stays inside the tree. */
static char *render(const section_t *s, const char *tpl, const int *idx, char *why, size_t wl)
{
    size_t cap = 64, n = 0;
    char *out = xmalloc(cap);
    for (const char *p = tpl; *p;) {
        const char *piece;
        size_t len;
        if (*p == '{') {
            const char *e = strchr(p, '}');
            if (!e) {
                snprintf(why, wl, "'{' without '}' in the name template");
                goto bad;
            }
            char key[64];
            if ((size_t)(e - p - 1) >= sizeof key || e == p + 1) {
                snprintf(why, wl, "bad placeholder in the name template");
                goto bad;
            }
            memcpy(key, p + 1, e - p - 1);
            key[e - p - 1] = 0;
            int a = -1;
            char *end;
            long k = strtol(key, &end, 10);
            if (!*end) {
                if (k < 1 || k > s->naxes) {
                    snprintf(why, wl, "{%s}: the section has %d ax%s", key, s->naxes,
                             s->naxes == 1 ? "is" : "es");
                    goto bad;
                }
                a = (int)k - 1;
            } else {
                for (int i = 0; i < s->naxes; i++)
                    if (!strcmp(s->axes[i].opt + 2, key)) {
                        if (a >= 0) {
                            snprintf(why, wl, "{%s}: two axes are --%s; name them {%d} and {%d}",
                                     key, key, a + 1, i + 1);
                            goto bad;
                        }
                        a = i;
                    }
                if (a < 0) {
                    snprintf(why, wl, "{%s}: no axis --%s in this section", key, key);
                    goto bad;
                }
            }
            piece = s->axes[a].label[idx[a]];
            len = strlen(piece);
            p = e + 1;
        } else {
            if (!label_char((unsigned char)*p) && *p != '/') {
                snprintf(why, wl, "'%c' in the name template (letters, digits, . _ + - / and "
                                  "{AXIS})", *p);
                goto bad;
            }
            piece = p++;
            len = 1;
        }
        while (n + len + 1 > cap)
            out = xrealloc(out, cap *= 2);
        memcpy(out + n, piece, len);
        n += len;
    }
    out[n] = 0;
    /* each part of the path must be a plain name: no "", ".", ".." (nor a leading /) */
    for (const char *c = out;;) {
        size_t l = strcspn(c, "/");
        if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.')) {
            snprintf(why, wl, "the case name '%s' has an empty, . or .. part", out);
            goto bad;
        }
        if (!c[l])
            break;
        c += l + 1;
    }
    return out;
bad:
    free(out);
    return NULL;
}

static int is_exec(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* A bare name is looked for beside vla-sweep first (bin/ of the tree it was built in), then on
 * PATH: a sweep then runs the programs of its own build, whatever PATH holds. A program that is
 * missing is an error, but for --dry-run, which only says what would run. */
static void resolve(section_t *s, const char *self, const sweep_t *sw, int must)
{
    if (strchr(s->prog, '/')) {
        s->path = s->display = s->prog;
    } else {
        const char *slash = strrchr(self, '/');
        if (slash) {
            char *p = xprintf("%.*s/%s", (int)(slash - self), self, s->prog);
            if (is_exec(p)) {
                s->path = s->display = p;
                return;
            }
            free(p);
        }
        const char *path = getenv("PATH");
        for (const char *d = path ? path : ""; d && *d;) {
            size_t l = strcspn(d, ":");
            char *p = xprintf("%.*s/%s", (int)(l ? l : 1), l ? d : ".", s->prog);
            if (is_exec(p)) {
                s->path = p;
                s->display = s->prog;
                return;
            }
            free(p);
            d = d[l] ? d + l + 1 : NULL;
        }
    }
    if (!must && !is_exec(s->path ? s->path : "")) {
        const char *slash = strrchr(self, '/');
        s->path = s->display = strchr(s->prog, '/') || !slash
                                   ? s->prog
                                   : xprintf("%.*s/%s", (int)(slash - self), self, s->prog);
        fprintf(stderr, PROG ": %s:%d: program %s is not built (yet)\n", sw->file, s->line,
                s->display);
        return;
    }
    if (!is_exec(s->path ? s->path : ""))
        perr(sw, s->line, "program %s: %s", s->prog,
             strchr(s->prog, '/') ? "not an executable file"
                                  : "not found beside vla-sweep nor on PATH (run make?)");
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* A word of an #SBATCH line as sbatch reads it back: bare when harmless, else in double quotes
 * with \" and \\ (sbatch's own quoting, in which # does not start a comment; no line break can
 * be quoted). pct: an --output pattern, where a % is %%. */
static char *sbatch_word(const char *w, int pct)
{
    char *b = xmalloc(2 * strlen(w) + 3), *d = b;
    int bare = *w != 0;
    for (const char *p = w; *p && bare; p++)
        bare = isalnum((unsigned char)*p) || strchr("@%+=:,./-_", *p);
    if (!bare)
        *d++ = '"';
    for (const char *p = w; *p; p++) {
        if (*p == '"' || *p == '\\')
            *d++ = '\\';
        else if (pct && *p == '%')
            *d++ = '%';
        *d++ = *p;
    }
    if (!bare)
        *d++ = '"';
    *d = 0;
    return b;
}

static void parse_sweep(sweep_t *sw, const char *file)
{
    memset(sw, 0, sizeof *sw);
    sw->file = file;
    const char *b = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    size_t l = strlen(b);
    if (l > 6 && !strcmp(b + l - 6, ".sweep"))
        l -= 6;
    sw->name = xprintf("%.*s", (int)l, b);
    FILE *f;
    const char *kind;
    int e = vla_file_read_open(file, SWEEP_MAX_BYTES, &f, &kind);
    if (e == VLA_EINVAL)
        die(2, "%s: %s, not a regular file", file, kind);
    if (e == VLA_ERANGE)
        die(2, "%s: larger than %ld bytes, the limit of a sweep file", file, SWEEP_MAX_BYTES);
    if (e)
        die(2, "%s: %s", file, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int ln = 0;
    section_t *s = NULL;
    while (getline(&line, &cap, f) >= 0) {
        ln++;
        if (ftell(f) > SWEEP_MAX_BYTES) /* it grew since it was opened */
            die(2, "%s: larger than %ld bytes, the limit of a sweep file", file, SWEEP_MAX_BYTES);
        char **w;
        int n = split(line, &w);
        if (n < 0)
            perr(sw, ln, "a quote is not closed");
        if (n == 0) {
            free(w);
            continue;
        }
        const char *d = w[0];
        if (!strcmp(d, "program")) {
            if (n != 2)
                perr(sw, ln, "program takes one name");
            sw->sec = xrealloc(sw->sec, (sw->nsec + 1) * sizeof *sw->sec);
            s = &sw->sec[sw->nsec++];
            memset(s, 0, sizeof *s);
            s->prog = w[1];
            s->line = ln;
        } else if (!strcmp(d, "out")) {
            if (n != 2 || !*w[1])
                perr(sw, ln, "out takes one folder");
            if (sw->out)
                perr(sw, ln, "a second out line (a sweep has one output tree)");
            sw->out = w[1];
        } else if (!strcmp(d, "slurm")) {
            if (n < 2)
                perr(sw, ln, "slurm takes the words of an #SBATCH line");
            char *l = xstrdup("");
            for (int i = 1; i < n; i++) {
                if (has_control(w[i]))
                    perr(sw, ln, "a control character in a slurm word, which an #SBATCH line "
                                 "cannot carry");
                char *q = sbatch_word(w[i], 0), *m = xprintf("%s%s%s", l, *l ? " " : "", q);
                free(q);
                free(l);
                l = m;
            }
            if (strstr(l, "--array") || strstr(l, "--output") || strstr(l, "--chdir"))
                perr(sw, ln, "--array, --output and --chdir are vla-sweep's to set");
            sw->slurm = xrealloc(sw->slurm, (sw->nslurm + 1) * sizeof *sw->slurm);
            sw->slurm[sw->nslurm++] = l;
        } else if (!strcmp(d, "chunk")) {
            char *end;
            long k = n == 2 ? strtol(w[1], &end, 10) : 0;
            if (n != 2 || *end || k < 1 || k > 1000000)
                perr(sw, ln, "chunk takes a number of cases, 1..1000000");
            sw->chunk = (int)k;
        } else if (!s) {
            perr(sw, ln, "'%s' before the first program line", d);
        } else if (!strcmp(d, "fixed")) {
            for (int i = 1; i < n; i++) {
                if (!strcmp(w[i], "--out") || !strncmp(w[i], "--out=", 6))
                    perr(sw, ln, "--out is vla-sweep's to give (OUT/NAME.dat)");
                s->fixed = xrealloc(s->fixed, (s->nfixed + 1) * sizeof *s->fixed);
                s->fixed[s->nfixed++] = w[i];
            }
        } else if (!strcmp(d, "axis")) {
            if (n < 3 || strncmp(w[1], "--", 2) || !w[1][2])
                perr(sw, ln, "axis takes an option (--OPT) and its values");
            if (!strcmp(w[1], "--out"))
                perr(sw, ln, "--out is vla-sweep's to give (OUT/NAME.dat)");
            s->axes = xrealloc(s->axes, (s->naxes + 1) * sizeof *s->axes);
            axis_t *a = &s->axes[s->naxes++];
            a->opt = w[1];
            a->n = n - 2;
            a->line = ln;
            a->val = xmalloc(a->n * sizeof *a->val);
            a->label = xmalloc(a->n * sizeof *a->label);
            for (int i = 0; i < a->n; i++) {
                char *v = w[i + 2], *at = strrchr(v, '@');
                if (at) {
                    *at = 0;
                    a->label[i] = xstrdup(at + 1);
                    for (const char *p = at + 1; *p; p++)
                        if (!label_char((unsigned char)*p))
                            perr(sw, ln, "label '%s': letters, digits and . _ + - only", at + 1);
                    if (!at[1])
                        perr(sw, ln, "an empty label after '@' in '%s@'", v);
                } else {
                    a->label[i] = default_label(v);
                }
                a->val[i] = v;
            }
        } else if (!strcmp(d, "name")) {
            if (n != 2)
                perr(sw, ln, "name takes one template");
            s->tpl = w[1];
            s->tpl_line = ln;
        } else if (!strcmp(d, "resume")) {
            if (n != 1)
                perr(sw, ln, "resume takes nothing");
            s->resume = 1;
        } else if (!strcmp(d, "alone")) {
            if (n != 1)
                perr(sw, ln, "alone takes nothing");
            s->alone = 1;
        } else {
            perr(sw, ln, "unknown directive '%s' (out, slurm, chunk, program, fixed, axis, name, "
                         "resume, alone)", d);
        }
        /* the words a directive keeps live as long as the sweep; the others go now */
        int keeps = !strcmp(d, "program") || !strcmp(d, "out") || !strcmp(d, "fixed") ||
                    !strcmp(d, "axis") || !strcmp(d, "name");
        for (int i = 0; i < (keeps ? 1 : n); i++)
            free(w[i]);
        free(w);
    }
    free(line);
    if (ferror(f))
        die(2, "%s: %s", file, strerror(errno));
    fclose(f);
    if (!sw->nsec)
        die(2, "%s: no program line: nothing to sweep", file);
}

/* One argument as a POSIX shell reads it back (as the tables' # command: lines write it). A
 * control character is shown as '?' (a manifest row or a comment stays one line), but for the
 * words the batch script runs (exact), which single quotes keep as they are. */
static void quote_into(char **buf, size_t *n, size_t *cap, const char *a, int exact)
{
    int bare = *a != 0;
    for (const char *p = a; *p && bare; p++)
        bare = isalnum((unsigned char)*p) || strchr("@%+=:,./-_", *p);
    size_t need = 4 * strlen(a) + 4;
    while (*n + need + 1 > *cap)
        *buf = xrealloc(*buf, *cap *= 2);
    char *d = *buf + *n;
    if (bare) {
        d = stpcpy(d, a);
    } else {
        *d++ = '\'';
        for (const char *p = a; *p; p++)
            if (*p == '\'')
                d = stpcpy(d, "'\\''");
            else
                *d++ = !exact && ((unsigned char)*p < 0x20 || *p == 0x7f) ? '?' : *p;
        *d++ = '\'';
    }
    *d = 0;
    *n = d - *buf;
}

static char *quote_argv(char **argv)
{
    size_t cap = 256, n = 0;
    char *b = xmalloc(cap);
    b[0] = 0;
    for (int i = 0; argv[i]; i++) {
        if (i) {
            if (n + 2 > cap)
                b = xrealloc(b, cap *= 2);
            b[n++] = ' ';
            b[n] = 0;
        }
        quote_into(&b, &n, &cap, argv[i], 0);
    }
    return b;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static case_t *expand(const sweep_t *sw, const char *out, int *ncases)
{
    int n = 0, cap = 16;
    case_t *cs = xmalloc(cap * sizeof *cs);
    for (int si = 0; si < sw->nsec; si++) {
        const section_t *s = &sw->sec[si];
        char *tpl = s->tpl;
        if (!tpl) {
            tpl = xstrdup(short_prog(s->prog));
            for (int a = 0; a < s->naxes; a++) {
                char *t = xprintf("%s-{%d}", tpl, a + 1);
                free(tpl);
                tpl = t;
            }
        }
        /* an error names the line it comes from: the template's, else the axis whose values
         * share a label, else the section's */
        for (int a = 0; !s->tpl && a < s->naxes; a++)
            for (int i = 0; i < s->axes[a].n; i++)
                for (int j = 0; j < i; j++)
                    if (!strcmp(s->axes[a].label[i], s->axes[a].label[j]))
                        perr(sw, s->axes[a].line, "%s's values '%s' and '%s' have one label, '%s', "
                             "which would name two cases alike: label them (V@LABEL) or give a "
                             "name template", s->axes[a].opt, s->axes[a].val[j],
                             s->axes[a].val[i], s->axes[a].label[i]);
        const int line = s->tpl ? s->tpl_line : s->line;
        int *idx = xcalloc(s->naxes + 1, sizeof *idx);
        for (;;) {
            char why[256];
            char *name = render(s, tpl, idx, why, sizeof why);
            if (!name)
                perr(sw, line, "%s", why);
            for (int j = 0; j < n; j++)
                if (!strcmp(cs[j].name, name))
                    perr(sw, line, "two cases are named '%s' (the other: %s): give a name "
                                   "template that tells them apart", name, cs[j].command);
            if (n == cap)
                cs = xrealloc(cs, (cap *= 2) * sizeof *cs);
            case_t *c = &cs[n++];
            memset(c, 0, sizeof *c);
            c->name = name;
            c->sec = si;
            c->out = xprintf("%s/%s.dat", out, name);
            c->log = xprintf("%s/%s.log", out, name);
            c->argv = xmalloc((s->nfixed + 2 * s->naxes + 5) * sizeof *c->argv);
            c->argv[c->argc++] = s->display;
            for (int i = 0; i < s->nfixed; i++)
                c->argv[c->argc++] = s->fixed[i];
            for (int a = 0; a < s->naxes; a++) {
                c->argv[c->argc++] = s->axes[a].opt;
                c->argv[c->argc++] = s->axes[a].val[idx[a]];
            }
            c->argv[c->argc++] = "--out";
            c->argv[c->argc++] = c->out;
            c->argv[c->argc] = NULL;
            c->command = quote_argv(c->argv);
            c->secs = NAN;
            /* the next point: the last axis moves fastest */
            int a = s->naxes - 1;
            while (a >= 0 && ++idx[a] == s->axes[a].n)
                idx[a--] = 0;
            if (a < 0)
                break;
        }
        free(idx);
        if (tpl != s->tpl)
            free(tpl);
    }
    *ncases = n;
    return cs;
}

static int mkdirs(const char *path) /* mkdir -p of path's folders, and of path itself if dir */
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    free(p);
    return 0;
}

/* One sweep at a time on a tree: two would each run every case, one writing over the other's
 * checkpoints. An flock on OUT/vla-sweep.lock, which holds the sweep's pid; the cases inherit it
 * (no close-on-exec), so that the cases of a sweep killed outright, which get SIGTERM and write
 * their checkpoints, hold the tree until they are gone. NULL, or why not (to free). */
static char *lock_tree(const char *tree)
{
    char *path = xprintf("%s/vla-sweep.lock", tree), *why = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
    if (fd < 0) {
        why = xprintf("cannot lock %s: %s: %s", tree, path, strerror(errno));
    } else if (flock(fd, LOCK_EX | LOCK_NB)) {
        char buf[32] = "";
        ssize_t k = errno == EWOULDBLOCK ? pread(fd, buf, sizeof buf - 1, 0) : -1;
        long pid = k > 0 ? strtol(buf, NULL, 10) : 0;
        if (k < 0 && errno != EWOULDBLOCK)
            why = xprintf("cannot lock %s: %s: %s", tree, path, strerror(errno));
        else if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            why = xprintf("another vla-sweep is running on %s (pid %ld, which has exited: the "
                          "cases it started are still writing their checkpoints); try again "
                          "when they are done", tree, pid);
        else
            why = xprintf("another vla-sweep is running on %s (pid %ld); two would run every "
                          "case twice", tree, pid);
        close(fd);
    } else {
        char buf[32];
        int k = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)k, 0) != k)
            why = xprintf("cannot write %s: %s", path, strerror(errno));
        /* the descriptor stays open, and the tree locked, until the sweep and its cases end */
    }
    free(path);
    return why;
}

/* ---- the manifest ---- */

static const char *state_name(int st)
{
    return st == C_OK || st == C_COMPLETE ? "ok" : st == C_FAILED ? "failed" : "pending";
}

static void sanitize(char *m)
{
    for (; *m; m++)
        if ((unsigned char)*m < 0x20 || *m == 0x7f)
            *m = ' ';
}

/* Written to a temporary file, synced and renamed: a kill at any moment leaves the previous
 * manifest whole. -1 with *kind when the path is not a regular file (it is left as it is), else
 * with errno. */
static int write_manifest(const char *path, const sweep_t *sw, const case_t *cs, int n,
                          const char **kind)
{
    char *target, *tmp;
    *kind = NULL;
    if (vla_file_target(path, &target, kind))
        return -1;
    tmp = xprintf("%s.tmp.%ld", target, (long)getpid());
    vla_file_remove_stale(target);
    FILE *f = vla_file_create(tmp);
    if (!f) {
        free(target);
        free(tmp);
        return -1;
    }
    int counts[5] = {0};
    for (int i = 0; i < n; i++)
        counts[cs[i].state]++;
    fprintf(f, "# vla-sweep manifest of %s: %d cases, %d ok, %d failed, %d pending\n", sw->file, n,
            counts[C_OK] + counts[C_COMPLETE], counts[C_FAILED], counts[C_PENDING] + counts[C_TODO]);
    fprintf(f, "# case\tcommand\tstatus\tseconds\tmessage\n");
    for (int i = 0; i < n; i++) {
        const case_t *c = &cs[i];
        char secs[32] = "-";
        if (!isnan(c->secs) && (c->state == C_OK || c->state == C_COMPLETE || c->state == C_FAILED))
            snprintf(secs, sizeof secs, "%.3f", c->secs);
        fprintf(f, "%s\t%s\t%s\t%s\t%s\n", c->name, c->command, state_name(c->state), secs, c->msg);
    }
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || vla_file_replace(tmp, target, kind)) {
        int errnum = errno;
        unlink(tmp);
        free(target);
        free(tmp);
        errno = errnum;
        return -1;
    }
    free(target);
    free(tmp);
    return 0;
}

/* What vla-sweep writes whole and renames into place (the manifest, the Slurm script) must be a
 * regular file or new: anything else is refused before the sweep starts, and left as it is.
 * Returns where the rename lands (PATH, or the file its symlink names). */
static char *replaceable(const char *path)
{
    char *target;
    const char *kind;
    int e = vla_file_target(path, &target, &kind);
    if (e == VLA_EINVAL)
        die(2, "%s: %s, not a regular file: left as it is", path, kind);
    if (e)
        die(1, "out of memory");
    return target;
}

/* The seconds of cases completed before (by an earlier run, or by Slurm array tasks, which leave
 * their part in OUT/slurm/NAME.manifest-TASK.tsv) carry over into the new manifest. */
static void carry_seconds(const char *path, case_t *cs, int n)
{
    FILE *f;
    const char *kind;
    if (vla_file_read_open(path, MANIFEST_MAX_BYTES, &f, &kind)) /* a FIFO there would block */
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) >= 0 && ftell(f) <= MANIFEST_MAX_BYTES) {
        if (line[0] == '#')
            continue;
        char *fld[5] = {0};
        char *p = line;
        for (int k = 0; k < 5 && p; k++) {
            fld[k] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        if (!fld[3] || strcmp(fld[2], "ok"))
            continue;
        char *end;
        double s = strtod(fld[3], &end);
        if (end == fld[3] || !isfinite(s))
            continue;
        for (int i = 0; i < n; i++)
            if (cs[i].state == C_COMPLETE && !strcmp(cs[i].name, fld[0]))
                cs[i].secs = s;
    }
    free(line);
    fclose(f);
}

static void carry_all(const sweep_t *sw, const char *out, const char *manifest, case_t *cs, int n)
{
    char *dir = xprintf("%s/slurm", out), *prefix = xprintf("%s.manifest-", sw->name);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (!strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".tsv") &&
                !strstr(e->d_name, ".tmp")) {
                char *p = xprintf("%s/%s", dir, e->d_name);
                carry_seconds(p, cs, n);
                free(p);
            }
        closedir(d);
    }
    free(dir);
    free(prefix);
    carry_seconds(manifest, cs, n); /* the sweep's own record wins */
}

/* ---- running one case ---- */

static volatile sig_atomic_t stop_sig;

/* The environment of a worker's cases: its GPU and its share of the cores. Built before fork,
 * since the child of a process with threads (MPI's) may only call async-signal-safe functions. */
static char **worker_env(const char *gpu, int threads)
{
    int n = 0;
    while (environ[n])
        n++;
    char **env = xmalloc((n + 3) * sizeof *env);
    int k = 0, have_omp = getenv("OMP_NUM_THREADS") != NULL;
    for (int i = 0; i < n; i++)
        if (!(gpu && !strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21)))
            env[k++] = environ[i];
    if (gpu)
        env[k++] = xprintf("CUDA_VISIBLE_DEVICES=%s", gpu);
    if (!have_omp)
        env[k++] = xprintf("OMP_NUM_THREADS=%d", threads);
    env[k] = NULL;
    return env;
}

static void free_env(char **env)
{
    for (char **e = env; *e; e++) {
        int inherited = 0;
        for (char **o = environ; *o && !inherited; o++)
            inherited = *o == *e;
        if (!inherited)
            free(*e);
    }
    free(env);
}

/* The GPUs the workers share: a worker takes gpu[slot % n]. Found once (and kept: the sweep
 * needs them to its end). */
static int gpu_find(char ***ids);
static int gpu_ids(char ***ids)
{
    static char **cache;
    static int n = -1;
    if (n < 0)
        n = gpu_find(&cache);
    *ids = cache;
    return n;
}

static int gpu_find(char ***ids)
{
    *ids = NULL;
    const char *e = getenv("VLA_SWEEP_GPUS");
    int n = 0;
    if (e) {
        char *end;
        long k = strtol(e, &end, 10);
        if (*end || end == e || k < 0 || k > 4096)
            die(2, "VLA_SWEEP_GPUS='%s' is not a number of GPUs", e);
        n = (int)k;
        *ids = xmalloc((n + 1) * sizeof **ids);
        for (int i = 0; i < n; i++)
            (*ids)[i] = xprintf("%d", i);
        return n;
    }
    e = getenv("CUDA_VISIBLE_DEVICES");
    if (e) { /* already narrowed (by Slurm, by the site): share those, by their names */
        if (!*e || *e == '-')
            return 0;
        char *s = xstrdup(e), *tok, *save;
        for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            *ids = xrealloc(*ids, (n + 1) * sizeof **ids);
            (*ids)[n++] = xstrdup(tok);
        }
        free(s);
        return n;
    }
    DIR *d = opendir("/dev");
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "nvidia", 6) && de->d_name[6] &&
            strspn(de->d_name + 6, "0123456789") == strlen(de->d_name + 6))
            n++;
    closedir(d);
    *ids = xmalloc((n + 1) * sizeof **ids);
    for (int i = 0; i < n; i++)
        (*ids)[i] = xprintf("%d", i);
    return n;
}

static int ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* fork + exec, no shell: stdout and stderr into the case's log, stdin from /dev/null. */
static pid_t spawn(const sweep_t *sw, case_t *c, char **env)
{
    const section_t *s = &sw->sec[c->sec];
    char **argv = c->argv;
    char *ckpt = xprintf("%s.ckpt", c->out);
    int resumed = s->resume && exists(ckpt);
    free(ckpt);
    if (resumed) { /* argv has room for one more */
        argv[c->argc] = "--resume";
        argv[c->argc + 1] = NULL;
    }
    if (mkdirs(c->log)) {
        snprintf(c->msg, sizeof c->msg, "cannot make the folder of %s: %s", c->log, strerror(errno));
        return -1;
    }
    sigset_t all;
    sigemptyset(&all);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &all, NULL);
        /* a sweep killed outright (SIGKILL) must not leave its cases running on: they get
         * SIGTERM, which the driver's programs answer with a checkpoint */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(126);
        int in = open("/dev/null", O_RDONLY);
        int fd = open(c->log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (in < 0 || fd < 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execve(sw->sec[c->sec].path, argv, env);
        /* strerror is not safe here (MPI's threads): the number, which finish() puts in words */
        char msg[64] = PROG ": cannot run the program: errno ";
        size_t l = strlen(msg);
        for (int e = errno, div = 1000; div; div /= 10)
            if (e >= div || div == 1)
                msg[l++] = (char)('0' + e / div % 10);
        msg[l++] = '\n';
        if (write(2, msg, l) < 0)
            _exit(127);
        _exit(127);
    }
    argv[c->argc] = NULL;
    if (pid < 0)
        snprintf(c->msg, sizeof c->msg, "fork: %s", strerror(errno));
    else if (resumed)
        snprintf(c->msg, sizeof c->msg, "resumed from its checkpoints");
    return pid;
}

/* the last non-empty line of a log, for the report */
static void last_line(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    char tail[2048];
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof tail - 1 ? size - (off_t)sizeof tail + 1 : 0;
    ssize_t r = pread(fd, tail, sizeof tail - 1, from);
    close(fd);
    if (r <= 0)
        return;
    tail[r] = 0;
    /* progress lines end in \r; the last thing written after one is what counts */
    for (char *p = tail; *p; p++)
        if (*p == '\r')
            *p = '\n';
    char *end = tail + r;
    while (end > tail && (end[-1] == '\n' || end[-1] == ' '))
        *--end = 0;
    char *start = strrchr(tail, '\n');
    start = start ? start + 1 : tail;
    size_t l = strlen(start) < len ? strlen(start) : len - 1; /* a long line is cut, not an error */
    memcpy(buf, start, l);
    buf[l] = 0;
    sanitize(buf);
}

/* The summary a program said in its log ("PROG: summary: TEXT", summary.h: something found, a
 * non-finite state, a read-out exactly 0, an error past 1), "" when none: a case that ran ok
 * must not bury it in a log nobody reads. */
static void said_summary(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, ": summary: ");
        if (p && !strchr(p, '\r'))
            snprintf(buf, len, "%.*s", (int)strcspn(p + 11, "\n"), p + 11);
    }
    if (f)
        fclose(f);
    sanitize(buf);
}

/* The outcome of a finished case from its wait status. */
static void finish(case_t *c, int status, double secs)
{
    char line[MSGLEN - 64];
    int resumed = c->msg[0] != 0;
    c->secs = secs;
    if (stop_sig && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        c->state = C_PENDING; /* the program saw our SIGTERM and saved its checkpoints */
        snprintf(c->msg, sizeof c->msg, "interrupted");
        return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && exists(c->out)) {
        c->state = C_OK;
        struct stat st;
        if (stat(c->log, &st) == 0 && st.st_size == 0)
            unlink(c->log);
        else
            said_summary(c->log, c->said, sizeof c->said);
        if (!resumed)
            c->msg[0] = 0;
        return;
    }
    last_line(c->log, line, sizeof line);
    c->state = stop_sig ? C_PENDING : C_FAILED;
    const char *en = strstr(line, "cannot run the program: errno ");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && en)
        snprintf(line, sizeof line, PROG ": cannot run %s: %s", c->argv[0], strerror(atoi(en + 30)));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        snprintf(c->msg, sizeof c->msg, "exit 0 but no table %s", c->out);
    else if (WIFEXITED(status))
        snprintf(c->msg, sizeof c->msg, "exit %d: %s", WEXITSTATUS(status),
                 line[0] ? line : "(no error output)");
    else
        snprintf(c->msg, sizeof c->msg, "signal %d (%s): %s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), line[0] ? line : "(no error output)");
    sanitize(c->msg);
}

/* ---- reporting ---- */

typedef struct {
    const sweep_t *sw;
    case_t *cs;
    int n, ntodo, ndone, quiet;
    char *manifest;
    double last_write;
} report_t;

static void save(report_t *r, int force)
{
    /* rewriting the whole manifest at every case would be quadratic in a big sweep */
    if (!force && now() - r->last_write < 1.0)
        return;
    const char *kind;
    if (write_manifest(r->manifest, r->sw, r->cs, r->n, &kind))
        fprintf(stderr, PROG ": cannot write %s: %s%s\n", r->manifest,
                kind ? kind : strerror(errno), kind ? ", not a regular file (left as it is)" : "");
    r->last_write = now();
}

static void report(report_t *r, case_t *c)
{
    r->ndone++;
    if (c->state == C_OK && !r->quiet)
        fprintf(stderr, PROG ": [%d/%d] ok %s (%.2f s)%s%s%s\n", r->ndone, r->ntodo, c->name,
                c->secs, c->msg[0] ? ", resumed" : "", c->said[0] ? "; its summary: " : "",
                c->said);
    else if (c->state == C_FAILED)
        fprintf(stderr, PROG ": [%d/%d] FAILED %s: %s\n" PROG ":     command: %s\n" PROG
                        ":     log: %s\n", r->ndone, r->ntodo, c->name, c->msg, c->command, c->log);
    save(r, 0);
}

static int summary(report_t *r)
{
    int ok = 0, skipped = 0, failed = 0, pending = 0;
    for (int i = 0; i < r->n; i++) {
        int st = r->cs[i].state;
        ok += st == C_OK;
        skipped += st == C_COMPLETE;
        failed += st == C_FAILED;
        pending += st == C_PENDING || st == C_TODO;
    }
    save(r, 1);
    fprintf(stderr, PROG ": %d cases: %d ran ok, %d complete before (skipped), %d failed, %d not "
                    "run; manifest %s\n", r->n, ok, skipped, failed, pending, r->manifest);
    /* a long sweep scrolls its failures away: say them again at the end */
    int shown = 0;
    for (int i = 0; i < r->n && shown < 20; i++)
        if (r->cs[i].state == C_FAILED) {
            fprintf(stderr, PROG ": failed: %s: %s\n" PROG ":     command: %s\n", r->cs[i].name,
                    r->cs[i].msg, r->cs[i].command);
            shown++;
        }
    if (failed > shown)
        fprintf(stderr, PROG ": ... and %d more failures (see the manifest)\n", failed - shown);
    /* ... and what the cases that ran found (their tables' '# summary:' lines say it too) */
    int found = 0;
    for (int i = 0; i < r->n; i++) {
        case_t *c = &r->cs[i];
        if (c->state == C_COMPLETE && !c->said[0]) /* made before (a Slurm task): its log */
            said_summary(c->log, c->said, sizeof c->said);
    }
    for (int i = 0; i < r->n; i++)
        if ((r->cs[i].state == C_OK || r->cs[i].state == C_COMPLETE) && r->cs[i].said[0] &&
            found++ < 20)
            fprintf(stderr, PROG ": found: %s: %s\n", r->cs[i].name, r->cs[i].said);
    if (found > 20)
        fprintf(stderr, PROG ": ... and %d more cases that found something (their logs)\n",
                found - 20);
    return pending ? 3 : failed ? 1 : 0;
}

static void on_signal(int sig) { stop_sig = sig; }
static void on_child(int sig) { (void)sig; }

/* SIGINT, SIGTERM and SIGCHLD are blocked and waited for: a signal between a check and a wait
 * stays pending instead of being lost. */
static void block_signals(sigset_t *set)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGCHLD);
    sigprocmask(SIG_BLOCK, set, NULL);
}

/* waits up to timeout seconds (< 0: for ever) for a child to end or a stop signal */
static void wait_signal(const sigset_t *set, double timeout)
{
    siginfo_t si;
    int s;
    if (timeout < 0) {
        s = sigwaitinfo(set, &si);
    } else {
        struct timespec ts = {(time_t)timeout, (long)((timeout - (time_t)timeout) * 1e9)};
        s = sigtimedwait(set, &si, &ts);
    }
    if (s == SIGINT || s == SIGTERM)
        stop_sig = s;
}

/* ---- local: N workers ---- */

static void run_local(const sweep_t *sw, report_t *r, const int *todo, int ntodo, int jobs)
{
    char **gpus;
    int ngpu = gpu_ids(&gpus);
    int threads = ncores() / jobs > 1 ? ncores() / jobs : 1;
    pid_t *pid = xcalloc(jobs, sizeof *pid);
    int *which = xcalloc(jobs, sizeof *which);
    double *t0 = xcalloc(jobs, sizeof *t0);
    char ***env = xcalloc(jobs, sizeof *env);
    for (int w = 0; w < jobs; w++)
        env[w] = worker_env(ngpu ? gpus[w % ngpu] : NULL, threads);
    sigset_t set;
    block_signals(&set);
    int next = 0, running = 0, forwarded = 0;
    for (;;) {
        for (int w = 0; w < jobs && !stop_sig && next < ntodo; w++)
            if (!pid[w]) {
                case_t *c = &r->cs[todo[next++]];
                t0[w] = now();
                pid[w] = spawn(sw, c, env[w]);
                if (pid[w] < 0) {
                    pid[w] = 0;
                    c->state = C_FAILED;
                    report(r, c);
                    continue;
                }
                which[w] = (int)(c - r->cs);
                running++;
            }
        if (!running)
            break;
        if (stop_sig && !forwarded) {
            for (int w = 0; w < jobs; w++)
                if (pid[w])
                    kill(pid[w], SIGTERM);
            forwarded = 1;
        }
        int status;
        pid_t p;
        while ((p = waitpid(-1, &status, WNOHANG)) > 0)
            for (int w = 0; w < jobs; w++)
                if (pid[w] == p) {
                    pid[w] = 0;
                    running--;
                    case_t *c = &r->cs[which[w]];
                    finish(c, status, now() - t0[w]);
                    report(r, c);
                }
        if (running)
            wait_signal(&set, 0.5);
    }
    for (int w = 0; w < jobs; w++)
        free_env(env[w]);
    free(env);
    free(pid);
    free(which);
    free(t0);
}

/* ---- MPI: rank 0 hands out one case at a time; every rank, 0 too, runs them ---- */

#ifdef VLA_SWEEP_MPI
enum { TAG_WORK = 1, TAG_DONE = 2 };
typedef struct {
    int idx; /* -1: ready for a first case */
    int state;
    double secs;
    char msg[MSGLEN];
    char said[MSGLEN]; /* the case's summary (what it found), read on the rank that ran it */
} result_t;

/* runs a case to its end, passing a stop signal on to it */
static void run_one(const sweep_t *sw, case_t *c, char **env, const sigset_t *set)
{
    double t0 = now();
    pid_t pid = spawn(sw, c, env);
    if (pid < 0) {
        c->state = C_FAILED;
        return;
    }
    int status, forwarded = 0;
    for (;;) {
        pid_t p = waitpid(pid, &status, WNOHANG);
        if (p == pid)
            break;
        if (stop_sig && !forwarded) {
            kill(pid, SIGTERM);
            forwarded = 1;
        }
        wait_signal(set, 0.5);
    }
    finish(c, status, now() - t0);
}

static int run_mpi(const sweep_t *sw, report_t *r, const int *todo, int ntodo, const int *alone,
                   int nalone, sigset_t *set)
{
    int rank, size, lrank, lsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the GPU goes by the rank within the node: on a cluster, rank 17 of 8-GPU nodes is GPU 1 */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    MPI_Comm_free(&node);
    char **gpus;
    int ngpu = gpu_ids(&gpus);
    int threads = ncores() / lsize > 1 ? ncores() / lsize : 1;
    char **env = worker_env(ngpu ? gpus[lrank % ngpu] : NULL, threads);
    if (rank == 0 && !r->quiet)
        fprintf(stderr, PROG ": %d ranks, %d case%s to run%s\n", size, ntodo + nalone,
                ntodo + nalone == 1 ? "" : "s", ngpu ? ", one GPU per rank" : "");

    if (rank != 0) {
        result_t res = {.idx = -1};
        for (;;) {
            MPI_Send(&res, sizeof res, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
            int idx;
            MPI_Recv(&idx, 1, MPI_INT, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (idx < 0)
                break;
            case_t *c = &r->cs[idx];
            if (stop_sig) {
                c->state = C_PENDING;
                snprintf(c->msg, sizeof c->msg, "interrupted");
                c->secs = NAN;
            } else {
                run_one(sw, c, env, set);
            }
            res.idx = idx;
            res.state = c->state;
            res.secs = c->secs;
            memcpy(res.msg, c->msg, sizeof res.msg);
            memcpy(res.said, c->said, sizeof res.said);
        }
        free_env(env);
        return 0;
    }

    int next = 0, active = size - 1;
    pid_t own = 0;
    int own_idx = -1, forwarded = 0;
    double own_t0 = 0;
    while (active > 0 || own || (!stop_sig && next < ntodo)) {
        int busy = 0, flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_DONE, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            result_t res;
            MPI_Recv(&res, sizeof res, MPI_BYTE, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (res.idx >= 0) {
                case_t *c = &r->cs[res.idx];
                c->state = res.state;
                c->secs = res.secs;
                memcpy(c->msg, res.msg, sizeof c->msg);
                c->msg[sizeof c->msg - 1] = 0;
                memcpy(c->said, res.said, sizeof c->said);
                c->said[sizeof c->said - 1] = 0;
                if (c->state == C_PENDING) /* a rank was interrupted: the job is going down */
                    stop_sig = stop_sig ? stop_sig : SIGTERM;
                report(r, c);
            }
            int idx = !stop_sig && next < ntodo ? todo[next++] : -1;
            MPI_Send(&idx, 1, MPI_INT, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
            active -= idx < 0;
            busy = 1;
        }
        if (own) {
            int status;
            if (stop_sig && !forwarded) {
                kill(own, SIGTERM);
                forwarded = 1;
            }
            if (waitpid(own, &status, WNOHANG) == own) {
                finish(&r->cs[own_idx], status, now() - own_t0);
                report(r, &r->cs[own_idx]);
                own = 0;
                busy = 1;
            }
        }
        if (!own && !stop_sig && next < ntodo) {
            own_idx = todo[next++];
            own_t0 = now();
            own = spawn(sw, &r->cs[own_idx], env);
            if (own < 0) {
                own = 0;
                r->cs[own_idx].state = C_FAILED;
                report(r, &r->cs[own_idx]);
            }
            busy = 1;
        }
        /* the poll's pause: short, since a rank waiting for work is a rank idle */
        wait_signal(set, busy ? 0 : 0.002);
    }
    /* every other rank has stopped: the cases that must run alone, with the node's cores */
    char **env1 = worker_env(ngpu ? gpus[0] : NULL, ncores());
    for (int i = 0; i < nalone && !stop_sig; i++) {
        run_one(sw, &r->cs[alone[i]], env1, set);
        report(r, &r->cs[alone[i]]);
    }
    free_env(env);
    free_env(env1);
    return summary(r);
}
#endif

/* ---- Slurm: a job-array script ---- */

static void sh_quote(FILE *f, const char *a, int exact)
{
    char *b = xmalloc(4 * strlen(a) + 8);
    size_t n = 0, cap = 4 * strlen(a) + 8;
    b[0] = 0;
    quote_into(&b, &n, &cap, a, exact);
    fputs(b, f);
    free(b);
}

/* a value shown in a comment or a message: quoted, on one line */
static char *shown(const char *s) { return quote_argv((char *[]){(char *)s, NULL}); }

/* The script quotes every value it runs for bash (exactly: single quotes keep any byte), its
 * comments show them on one line ('?' for a control character), and its #SBATCH lines quote
 * them for sbatch, which reads those lines itself. */
static int write_slurm(const sweep_t *sw, const case_t *cs, int n, const char *out, int chunk,
                       const char *script)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        die(1, "getcwd: %s", strerror(errno));
    if (chunk <= 0)
        chunk = sw->chunk > 0 ? sw->chunk : 1;
    /* the cases in task order: the others in chunks, then those that run alone, one a task */
    int *order = xmalloc(n * sizeof *order), nalone = 0, k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (sw->sec[cs[i].sec].alone == pass) {
                order[k++] = i;
                nalone += pass;
            }
    int nrest = n - nalone;
    if (nalone >= SLURM_MAX_TASKS)
        die(2, "--slurm: %d cases run alone, one array task each: more than %d tasks", nalone,
            SLURM_MAX_TASKS - 1);
    if ((nrest + chunk - 1) / chunk + nalone > SLURM_MAX_TASKS)
        chunk = (nrest + SLURM_MAX_TASKS - nalone - 1) / (SLURM_MAX_TASKS - nalone);
    int nchunks = (nrest + chunk - 1) / chunk, ntasks = nchunks + nalone;
    /* no quoting carries a line break through an #SBATCH line, and Slurm's --output patterns
     * drop a backslash (the tree and the name make the log's path) */
    const struct {
        const char *what, *s;
        int output;
    } sb[] = {{"the working directory", cwd, 0}, {"the output tree", out, 1},
              {"the sweep's name", sw->name, 1}};
    for (size_t i = 0; i < sizeof sb / sizeof sb[0]; i++)
        if (has_control(sb[i].s) || (sb[i].output && strchr(sb[i].s, '\\')))
            die(2, "--slurm: %s %s has a %s, which an #SBATCH line cannot carry", sb[i].what,
                shown(sb[i].s), has_control(sb[i].s) ? "line break or control character" : "backslash");
    int to_stdout = !strcmp(script, "-");
    char *target = to_stdout ? NULL : replaceable(script);
    char *logdir = xprintf("%s/slurm/", out);
    if (mkdirs(logdir))
        die(1, "cannot make %s: %s", logdir, strerror(errno));
    free(logdir);
    char *tmp = to_stdout ? NULL : xprintf("%s.tmp.%ld", target, (long)getpid());
    if (!to_stdout)
        vla_file_remove_stale(target);
    FILE *f = to_stdout ? stdout : vla_file_create(tmp);
    if (!f)
        die(1, "cannot write %s: %s", tmp, strerror(errno));
    char *part = xprintf("%s/slurm/%s.manifest-", out, sw->name),
         *manifest = xprintf("%s/%s.manifest.tsv", out, sw->name),
         *parts = xprintf("%sTASK.tsv", part), *q[5] = {shown(sw->file), shown(script), shown(parts),
                                                        shown(manifest), NULL};
    fprintf(f, "#!/bin/bash\n"
               "# Written by vla-sweep %s --slurm from %s: %d case%s, %d per array task.\n"
               "# Submit it unchanged: sbatch %s\n"
               "# Each array task runs its cases one after another and skips those whose table\n"
               "# exists, so submitting again resumes the sweep. A task leaves its part of the\n"
               "# manifest in %s; once the array is done,\n"
               "# bin/vla-sweep %s writes %s (and reruns what failed).\n",
            VLA_VERSION, q[0], n, n == 1 ? "" : "s", chunk, to_stdout ? "SCRIPT" : q[1], q[2], q[0],
            q[3]);
    char *name = xprintf("vla-sweep-%s", sw->name), *log = xprintf("%s/slurm/%s-", out, sw->name);
    char *sbw[3] = {sbatch_word(name, 0), sbatch_word(cwd, 0), sbatch_word(log, 1)};
    fprintf(f, "#SBATCH --job-name=%s\n", sbw[0]);
    fprintf(f, "#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n", ntasks - 1);
    fprintf(f, "#SBATCH --chdir=%s\n", sbw[1]);
    fprintf(f, "#SBATCH --output=%s%%A_%%a.log\n", sbw[2]);
    for (int i = 0; i < sw->nslurm; i++)
        fprintf(f, "#SBATCH %s\n", sw->slurm[i]);
    fprintf(f, "set -u\ncd ");
    sh_quote(f, cwd, 1);
    fprintf(f, " || exit 1\n"
               "task=${SLURM_ARRAY_TASK_ID:?run this script with sbatch (or set SLURM_ARRAY_TASK_ID)}\n"
               "[ -z \"${SLURM_CPUS_PER_TASK:-}\" ] || export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\n"
               "part=");
    sh_quote(f, part, 1);
    fprintf(f, "$task.tsv\n"
               ": >\"$part.tmp.$$\" || exit 1\n"
               "failed=0\n"
               "# case NAME 'COMMAND' RESUME ARGV...: the table is the last word of ARGV (--out\n"
               "# OUT/NAME.dat); RESUME 1: the program takes --resume, given when there are checkpoints\n"
               "case_() {\n"
               "    name=$1 cmd=$2 resume=$3\n"
               "    shift 3\n"
               "    out=${!#} log=${out%%.dat}.log\n"
               "    if [ -e \"$out\" ]; then\n"
               "        printf '%%s\\t%%s\\tok\\t-\\t\\n' \"$name\" \"$cmd\" >>\"$part.tmp.$$\"\n"
               "        return\n"
               "    fi\n"
               "    mkdir -p \"$(dirname \"$out\")\"\n"
               "    [ \"$resume\" = 0 ] || [ ! -e \"$out.ckpt\" ] || set -- \"$@\" --resume\n"
               "    t0=$(date +%%s.%%N)\n"
               "    \"$@\" </dev/null >\"$log\" 2>&1\n"
               "    rc=$?\n"
               "    secs=$(awk -v a=\"$t0\" -v b=\"$(date +%%s.%%N)\" 'BEGIN { printf \"%%.3f\", b - a }')\n"
               "    if [ $rc = 0 ] && [ -e \"$out\" ]; then\n"
               "        [ -s \"$log\" ] || rm -f \"$log\"\n"
               "        printf '%%s\\t%%s\\tok\\t%%s\\t\\n' \"$name\" \"$cmd\" \"$secs\" >>\"$part.tmp.$$\"\n"
               "    else\n"
               "        msg=\"exit $rc: $(tr '\\r\\t' '\\n ' <\"$log\" | awk 'NF { l = $0 } END { print l }')\"\n"
               "        failed=$((failed + 1))\n"
               "        echo \"vla-sweep: FAILED $name: $msg\" >&2\n"
               "        echo \"vla-sweep:     command: $cmd\" >&2\n"
               "        printf '%%s\\t%%s\\tfailed\\t%%s\\t%%s\\n' \"$name\" \"$cmd\" \"$secs\" \"$msg\" >>\"$part.tmp.$$\"\n"
               "    fi\n"
               "}\n"
               "case $task in\n");
    for (int t = 0; t < ntasks; t++) {
        fprintf(f, "%d)\n", t);
        int from = t < nchunks ? t * chunk : nrest + t - nchunks;
        int to = t < nchunks ? (from + chunk < nrest ? from + chunk : nrest) : from + 1;
        for (int j = from; j < to; j++) {
            const case_t *c = &cs[order[j]];
            fprintf(f, "    case_ ");
            sh_quote(f, c->name, 1);
            fputc(' ', f);
            sh_quote(f, c->command, 1);
            fprintf(f, " %d", sw->sec[c->sec].resume);
            /* the program by the path vla-sweep found: a compute node's PATH may differ */
            for (int k = 0; k < c->argc; k++) {
                fputc(' ', f);
                sh_quote(f, k == 0 ? sw->sec[c->sec].path : c->argv[k], 1);
            }
            fputc('\n', f);
        }
        fprintf(f, "    ;;\n");
    }
    fprintf(f, "*)\n    echo \"vla-sweep: no array task $task (0-%d)\" >&2\n    exit 2\n    ;;\n"
               "esac\n"
               "mv -f \"$part.tmp.$$\" \"$part\"\n"
               "[ $failed = 0 ]\n", ntasks - 1);
    free(order);
    free(part);
    free(manifest);
    free(parts);
    free(name);
    free(log);
    for (int i = 0; i < 3; i++)
        free(sbw[i]);
    if (to_stdout) {
        for (int i = 0; q[i]; i++)
            free(q[i]);
        return fflush(stdout) ? 1 : 0;
    }
    const char *kind;
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    int e = ok && chmod(tmp, 0755) == 0 ? vla_file_replace(tmp, target, &kind) : VLA_EIO;
    if (e) {
        int errnum = errno;
        unlink(tmp);
        if (e == VLA_EINVAL) /* it became a special file since the check */
            die(2, "%s: %s, not a regular file: left as it is", script, kind);
        die(1, "cannot write %s: %s", script, strerror(errnum));
    }
    fprintf(stderr, PROG ": %d cases in %d array task%s: submit with\n", n, ntasks,
            ntasks == 1 ? "" : "s");
    printf("sbatch %s\n", q[1]);
    for (int i = 0; q[i]; i++)
        free(q[i]);
    free(target);
    free(tmp);
    return 0;
}

/* ---- main ---- */

static void free_cases(case_t *cs, int n)
{
    for (int i = 0; i < n; i++) {
        free(cs[i].name);
        free(cs[i].argv); /* its words belong to the sweep, but for out */
        free(cs[i].out);
        free(cs[i].log);
        free(cs[i].command);
    }
    free(cs);
}

static void free_sweep(sweep_t *sw)
{
    for (int i = 0; i < sw->nsec; i++) {
        section_t *s = &sw->sec[i];
        if (s->path != s->prog) /* display is one of the two */
            free(s->path);
        free(s->prog);
        for (int k = 0; k < s->nfixed; k++)
            free(s->fixed[k]);
        free(s->fixed);
        for (int a = 0; a < s->naxes; a++) {
            for (int k = 0; k < s->axes[a].n; k++) {
                free(s->axes[a].val[k]);
                free(s->axes[a].label[k]);
            }
            free(s->axes[a].val);
            free(s->axes[a].label);
            free(s->axes[a].opt);
        }
        free(s->axes);
        free(s->tpl);
    }
    free(sw->sec);
    for (int i = 0; i < sw->nslurm; i++)
        free(sw->slurm[i]);
    free(sw->slurm);
    free(sw->out);
    free(sw->name);
}

int main(int argc, char **argv)
{
    const char *file = NULL, *out = NULL, *script = NULL;
    int jobs = 0, dry = 0, mpi = 0, slurm = 0, chunk = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if ((!strcmp(a, "--out") || !strcmp(a, "--script")) && has && !argv[i + 1][0])
            usage_exit("%s: an empty value", a); /* not the default, nor files in / */
        if (!strcmp(a, "--help"))
            doc(0);
        else if (!strcmp(a, "--man"))
            doc(1);
        else if (!strcmp(a, "--version")) {
            printf(PROG " (vlastab) %s\n", VLA_VERSION);
            return 0;
        } else if ((!strcmp(a, "--jobs") || !strcmp(a, "-j") || !strcmp(a, "--chunk")) && has) {
            char *end;
            long k = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || k < 1 || k > 100000)
                usage_exit("%s: '%s' is not a number in 1..100000", a, argv[i]);
            if (!strcmp(a, "--chunk"))
                chunk = (int)k;
            else
                jobs = (int)k;
        } else if (!strcmp(a, "--out") && has)
            out = argv[++i];
        else if (!strcmp(a, "--script") && has)
            script = argv[++i];
        else if (!strcmp(a, "--dry-run"))
            dry = 1;
        else if (!strcmp(a, "--mpi"))
            mpi = 1;
        else if (!strcmp(a, "--slurm"))
            slurm = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--jobs") || !strcmp(a, "-j") || !strcmp(a, "--chunk") ||
                 !strcmp(a, "--out") || !strcmp(a, "--script"))
            usage_exit("%s needs a value", a);
        else if (a[0] == '-' && a[1])
            usage_exit("unknown option '%s'", a);
        else if (file)
            usage_exit("one sweep file, not '%s' and '%s'", file, a);
        else
            file = a;
    }
    if (!file)
        usage_exit("no sweep file");
    if (dry + mpi + slurm > 1)
        usage_exit("--dry-run, --mpi and --slurm: one of them");
    if (jobs && (mpi || slurm))
        usage_exit("--jobs is for a local run (under MPI a rank runs one case at a time)");
    if ((chunk || script) && !slurm)
        usage_exit("--chunk and --script go with --slurm");
#ifndef VLA_SWEEP_MPI
    if (mpi)
        die(2, "--mpi: this build has no MPI (mpicc was not found when it was built: make deps, "
               "then make)");
#endif

    sweep_t sw;
    parse_sweep(&sw, file);
    char *tree;
    if (out)
        tree = xstrdup(out);
    else if (sw.out)
        tree = xstrdup(sw.out);
    else
        tree = xprintf("data/%s", sw.name);
    while (strlen(tree) > 1 && tree[strlen(tree) - 1] == '/')
        tree[strlen(tree) - 1] = 0;
    for (int i = 0; i < sw.nsec; i++)
        resolve(&sw.sec[i], argv[0], &sw, !dry);
    int n;
    case_t *cs = expand(&sw, tree, &n);

    if (slurm) {
        char *def = xprintf("%s/%s.sbatch", tree, sw.name);
        int status = write_slurm(&sw, cs, n, tree, chunk, script ? script : def);
        free(def);
        free_cases(cs, n);
        free_sweep(&sw);
        free(tree);
        return status;
    }

    sigset_t set;
#ifdef VLA_SWEEP_MPI
    int rank = 0;
    if (mpi) {
        block_signals(&set); /* before MPI's threads start, so that they inherit the mask */
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
#endif
    int *todo = xmalloc(n * sizeof *todo), ntodo = 0, nalone = 0;
    for (int i = 0; i < n; i++)
        cs[i].state = exists(cs[i].out) ? C_COMPLETE : C_TODO;
    for (int pass = 0; pass < 2; pass++) /* the cases that run alone last */
        for (int i = 0; i < n; i++)
            if (cs[i].state == C_TODO && sw.sec[cs[i].sec].alone == pass) {
                todo[ntodo++] = i;
                nalone += pass;
            }
    if (dry) {
        printf("# %d cases of %s into %s/: %d to run, %d complete\n", n, file, tree, ntodo, n - ntodo);
        for (int i = 0; i < n; i++)
            printf("%s\t%s\t%s\n", cs[i].name, cs[i].state == C_COMPLETE ? "complete" : "run",
                   cs[i].command);
        free(todo);
        free_cases(cs, n);
        free_sweep(&sw);
        free(tree);
        return 0;
    }
    report_t r = {.sw = &sw, .cs = cs, .n = n, .ntodo = ntodo, .quiet = quiet,
                  .manifest = xprintf("%s/%s.manifest.tsv", tree, sw.name)};
#ifdef VLA_SWEEP_MPI
    if (mpi) {
        int status;
        int locked = 1;
        if (rank == 0) {
            if (mkdirs(r.manifest))
                die(1, "cannot make %s: %s", tree, strerror(errno));
            free(replaceable(r.manifest));
            char *why = lock_tree(tree);
            if (why) {
                fprintf(stderr, PROG ": %s\n", why);
                free(why);
                locked = 0;
            } else {
                carry_all(&sw, tree, r.manifest, cs, n);
                save(&r, 1);
            }
        }
        /* the workers wait for the tree before they write into it, and go when it is another's */
        MPI_Bcast(&locked, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!locked) {
            MPI_Finalize();
            fflush(NULL);
            _exit(2);
        }
        status = run_mpi(&sw, &r, todo, ntodo - nalone, todo + ntodo - nalone, nalone, &set);
        MPI_Finalize();
        /* Open MPI leaves allocations behind in components it has unloaded, which no leak
         * suppression can name: _exit skips the leak checker of a -fsanitize=address build (the
         * same code, run locally, is checked) */
        fflush(NULL);
        _exit(status);
    }
#endif
    if (mkdirs(r.manifest))
        die(1, "cannot make %s: %s", tree, strerror(errno));
    free(replaceable(r.manifest));
    char *why = lock_tree(tree);
    if (why)
        die(2, "%s", why);
    carry_all(&sw, tree, r.manifest, cs, n);
    save(&r, 1);
    run_local(&sw, &r, todo, ntodo - nalone, jobs ? jobs : ncores());
    if (!stop_sig)
        run_local(&sw, &r, todo + ntodo - nalone, nalone, 1);
    (void)set;
    int status = summary(&r);
    free(r.manifest);
    free(todo);
    free_cases(cs, n);
    free_sweep(&sw);
    free(tree);
    return status;
}
