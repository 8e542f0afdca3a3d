/* parse.c: the sweep file, read into a sweep_t (directives, programs, fixed options, axes) and
 * expanded into its cases, each with its name, argv and shell-quoted command. */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void perr(const sweep_t *sw, int line, const char *fmt, ...)
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
void resolve(section_t *s, const char *self, const sweep_t *sw, int must)
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

int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* A word of an #SBATCH line as sbatch reads it back: bare when harmless, else in double quotes
 * with \" and \\ (sbatch's own quoting, in which # does not start a comment; no line break can
 * be quoted). pct: an --output pattern, where a % is %%. */
char *sbatch_word(const char *w, int pct)
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

void parse_sweep(sweep_t *sw, const char *file)
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
    for (ssize_t got; (got = getline(&line, &cap, f)) >= 0;) {
        ln++;
        if (ftell(f) > SWEEP_MAX_BYTES) /* it grew since it was opened */
            die(2, "%s: larger than %ld bytes, the limit of a sweep file", file, SWEEP_MAX_BYTES);
        if ((size_t)got != strlen(line)) /* the rest of the line would be dropped unread */
            perr(sw, ln, "a NUL byte at byte %zu of the line (a sweep file is text)",
                 strlen(line) + 1);
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
void quote_into(char **buf, size_t *n, size_t *cap, const char *a, int exact)
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

char *quote_argv(char **argv)
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

int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

case_t *expand(const sweep_t *sw, const char *out, int *ncases)
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
