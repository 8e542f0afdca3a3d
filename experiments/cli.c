/* cli.c: the option parser, the run of one head, and the driver shared by the experiment
 * programs. A program states its question (a vla_cli_spec and a vla_driver); this file owns the
 * loop over heads and steps, the threads, the checkpoints and the signals. */
#include "cli.h"
#include "roff.h"
#include "vlaref.h"
#ifdef VLA_HAVE_KERNELS
#include "vlacuda.h"
#endif
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void vla_cli_die(const vla_cli_spec *spec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", spec->prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try --help)\n");
    va_end(ap);
    exit(2);
}

static const struct {
    const char *name, *arg, *help;
} common[] = {
    {"model", "NAME", "la, delta, rls, vla1 or vla3"},
    {"track", "WAY", "how A is tracked: sm (textbook Sherman-Morrison), sm-sym (symmetric half), "
                     "joseph, chol (Cholesky factor of M; nudge off), comp (double-word arithmetic), "
                     "sr (stochastic rounding; f16-f32, bf16-f32)"},
    {"precision", "P", "f64, f32, f16, bf16, f16-f32 or bf16-f32 (16-bit storage, f32 arithmetic)"},
    {"mode", "M", "strict (fixed order, no fma; the default) or fast (fma contraction allowed)"},
    {"d", "N", "key dimension, 1..256 (default 32)"},
    {"dv", "N", "value dimension (default d)"},
    {"steps", "T", "tokens per run"},
    {"runs", "R", "independent heads, run in parallel (default 1)"},
    {"seed", "S", "seed of the input streams (default 1)"},
    {"stream", "SPEC", "gauss[:SIGMA], lmlike[:S], subspace:R,NOISE, repeat:M, mqar:N,G, trace:DIR"},
    {"set", "NAME=VALUE", "a model constant: lambda0, eps_g, stab_eps, per_eps, period, eps_o, clip, "
                          "clamp, clamp_eps, renorm, beta, delta_form=gated|decay, features=own|id, "
                          "nudge|guard|clamp_on|normalize=on|off (repeatable)"},
    {"ref", "KIND", "reference: exact (MPFR), f64 (lib in binary64, for horizons beyond exact) or none"},
    {"ref-bits", "P", "precision of the exact reference in bits (default 256)"},
    {"backend", "B", "cpu, or lanes: the runs side by side in the CPU's vector lanes (16 per "
                     "AVX-512 register, f64 8), the same bits many times faster; vla-statenorm "
                     "with --ref f64 or none and without --resume, strict mode, every way of "
                     "tracking but comp and sr (the CUDA kernels are driven by vla-regress, "
                     "vla-bench and the tests)"},
    {"checkpoints", "N", "checkpoints per decade of t (default 10)"},
    {"out", "FILE", "output table (default: standard output)"},
    {"resume", NULL, "continue an interrupted run from its checkpoint files (FILE.ckpt.HEAD, written "
                     "every VLA_CHECKPOINT_SECONDS seconds of the environment, default 60)"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
};
#define NCOMMON (sizeof common / sizeof common[0])

static void help(const vla_cli_spec *spec)
{
    printf("Usage: %s [OPTION]...\n\n%s\n\nOptions:\n", spec->prog, spec->summary);
    for (const vla_cli_opt *o = spec->opts; o && o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        printf("  %-24s %s\n", left, o->help);
    }
    for (size_t i = 0; i < NCOMMON; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", common[i].name, common[i].arg ? " " : "",
                 common[i].arg ? common[i].arg : "");
        printf("  %-24s %s\n", left, common[i].help);
    }
    printf("\nDefaults here: --model %s --stream %s --steps %ld --ref %s\n",
           vla_model_name(spec->default_model), spec->default_stream, spec->default_steps,
           spec->default_ref == REF_EXACT ? "exact" : spec->default_ref == REF_F64 ? "f64" : "none");
    printf("\nOutput: a gnuplot-ready table (SPEC section 9): '#' provenance lines, then\n"
           "'# columns: ...', one block per run. Columns:\n%s\n", spec->columns);
    printf("\nExample:\n  %s\n", spec->example);
    exit(0);
}

/* --man (not listed: a build aid, like help2man): the man page, from the same spec and in the same
 * words as help(), so that the two cannot drift apart; tests/test_install.sh checks they agree. */

static void man_opt(const char *name, const char *arg, const char *help)
{
    printf(".TP\n\\fB\\-\\-");
    vla_roff(name, NULL, 1);
    if (arg) {
        printf("\\fR \\fI");
        vla_roff(arg, NULL, 1);
    }
    printf("\\fR\n");
    vla_roff(help, NULL, 0);
    printf("\n");
}

static void man(const vla_cli_spec *spec)
{
    /* NAME wants a phrase: man/mkman.sh passes the one the source opens with; else the summary
     * up to its first colon or stop, cut to a line */
    const char *s = getenv("VLA_MAN_NAME"), *end = NULL;
    if (!s || !*s) {
        s = spec->summary;
        end = s + strcspn(s, ":.");
        if (end - s > 70)
            for (end = s + 70; end > s && *end != ' ' && *end != '\n'; end--)
                ;
    }
    char up[64];
    size_t i;
    for (i = 0; spec->prog[i] && i + 1 < sizeof up; i++)
        up[i] = spec->prog[i] >= 'a' && spec->prog[i] <= 'z' ? spec->prog[i] - 'a' + 'A' : spec->prog[i];
    up[i] = 0;
    printf(".\\\" generated by %s --man from its --help text: edit the program, not this page\n.TH ",
           spec->prog);
    vla_roff(up, NULL, 1);
    printf(" 1 \"\" \"vlastab %s\" \"vlastab manual\"\n.nh\n.ad l\n.SH NAME\n", VLA_VERSION);
    vla_roff(spec->prog, NULL, 1);
    printf(" \\- ");
    vla_roff(s, end, 1);
    printf("\n.SH SYNOPSIS\n\\fB");
    vla_roff(spec->prog, NULL, 1);
    printf("\\fR [\\fIOPTION\\fR]...\n.SH DESCRIPTION\n");
    vla_roff(spec->summary, NULL, 0);
    printf("\n.SH OPTIONS\n");
    for (const vla_cli_opt *o = spec->opts; o && o->name; o++)
        man_opt(o->name, o->arg, o->help);
    for (size_t k = 0; k < NCOMMON; k++)
        man_opt(common[k].name, common[k].arg, common[k].help);
    printf(".PP\nDefaults here: \\-\\-model %s \\-\\-stream ", vla_model_name(spec->default_model));
    vla_roff(spec->default_stream, NULL, 1);
    printf(" \\-\\-steps %ld \\-\\-ref %s\n", spec->default_steps,
           spec->default_ref == REF_EXACT ? "exact" : spec->default_ref == REF_F64 ? "f64" : "none");
    printf(".SH COLUMNS\nOutput: a gnuplot\\-ready table (SPEC section 9): \\(aq#\\(aq provenance lines, "
           "then\n\\(aq# columns: ...\\(aq, one block per run. Columns:\n");
    /* "  name  meaning" lines, deeper-indented continuations, and unindented notes */
    int note = 0;
    for (const char *l = spec->columns, *nl; *l; l = *nl ? nl + 1 : nl) {
        nl = l + strcspn(l, "\n");
        if (l[0] == ' ' && l[1] == ' ' && l[2] && !strchr(" \n", l[2])) {
            const char *gap = strstr(l + 2, "  ");
            if (!gap || gap > nl)
                gap = nl;
            printf(".TP\n\\fB");
            vla_roff(l + 2, gap, 1);
            printf("\\fR\n");
            l = gap + strspn(gap, " ");
            note = 0;
        } else if (l[0] == ' ') {
            l += strspn(l, " ");
        } else if (l != nl && !note) {
            printf(".PP\n");
            note = 1;
        }
        if (l < nl) {
            vla_roff(l, nl, 1);
            printf("\n");
        }
    }
    printf(".SH EXAMPLE\n.RS 4\n.nf\n");
    vla_roff(spec->example, NULL, 0);
    printf("\n.fi\n.RE\n.SH SEE ALSO\n\\fBvlastab\\fR(7)\n");
    exit(0);
}

static long parse_long(const vla_cli_spec *spec, const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end); /* 1e7 is a natural way to write a horizon */
    /* the range test comes before the cast: a double outside long's range (1e30, nan) cast to
     * long is undefined behaviour */
    if (end == v || *end || errno || !(x >= lo && x <= hi) || x != (double)(long)x)
        vla_cli_die(spec, "--%s: '%s' is not an integer in %ld..%ld", opt, v, lo, hi);
    return (long)x;
}

void vla_cli_parse(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->argc = argc;
    c->argv = argv;
    /* the model and d set the defaults that the other options then change */
    vla_model_kind mk = spec->default_model;
    int d = 32;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help"))
            help(spec);
        if (!strcmp(argv[i], "--version")) {
            printf("%s (vlastab) %s\n", spec->prog, VLA_VERSION);
            exit(0);
        }
        if (!strcmp(argv[i], "--man"))
            man(spec);
        if (i + 1 < argc && !strcmp(argv[i], "--model") && vla_model_parse(argv[i + 1], &mk))
            vla_cli_die(spec, "--model: unknown model '%s' (la, delta, rls, vla1, vla3)", argv[i + 1]);
        if (i + 1 < argc && !strcmp(argv[i], "--d"))
            d = (int)parse_long(spec, "d", argv[i + 1], VLA_D_MIN, VLA_D_MAX);
    }
    vla_config_default(&c->cfg, mk, d);
    c->stream = spec->default_stream;
    c->steps = spec->default_steps;
    c->runs = 1;
    c->seed = 1;
    c->out = "-";
    c->per_decade = 10;
    c->backend = "cpu";
    c->ref = spec->default_ref;
    c->ref_bits = VREF_DEFAULT_BITS;
    int dv_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2))
            vla_cli_die(spec, "unexpected argument '%s'", a);
        const char *name = a + 2;
        /* the program's own options first */
        const vla_cli_opt *own = NULL;
        for (const vla_cli_opt *o = spec->opts; o && o->name; o++)
            if (!strcmp(o->name, name))
                own = o;
        int known = own != NULL, takes = own ? own->arg != NULL : 0;
        for (size_t k = 0; !known && k < NCOMMON; k++)
            if (!strcmp(common[k].name, name)) {
                known = 1;
                takes = common[k].arg != NULL;
            }
        if (!known)
            vla_cli_die(spec, "unknown option '%s'", a);
        const char *v = NULL;
        if (takes) {
            if (i + 1 >= argc)
                vla_cli_die(spec, "%s needs a value", a);
            v = argv[++i];
        }
        if (own) {
            if (spec->on_opt(spec->ctx, name, v))
                exit(2);
        } else if (!strcmp(name, "model")) {
            /* handled above */
        } else if (!strcmp(name, "track")) {
            if (vla_track_parse(v, &c->cfg.track))
                vla_cli_die(spec, "--track: unknown way '%s' (sm, sm-sym, joseph, chol, comp, sr)", v);
        } else if (!strcmp(name, "precision")) {
            if (vla_prec_parse(v, &c->cfg.prec))
                vla_cli_die(spec, "--precision: unknown '%s' (f64, f32, f16, bf16, f16-f32, bf16-f32)", v);
        } else if (!strcmp(name, "mode")) {
            if (!strcmp(v, "strict"))
                c->cfg.mode = VLA_STRICT;
            else if (!strcmp(v, "fast"))
                c->cfg.mode = VLA_FAST;
            else
                vla_cli_die(spec, "--mode: '%s' is neither strict nor fast", v);
        } else if (!strcmp(name, "d")) {
            /* handled above */
        } else if (!strcmp(name, "dv")) {
            c->cfg.dv = (int)parse_long(spec, "dv", v, VLA_D_MIN, VLA_D_MAX);
            dv_set = 1;
        } else if (!strcmp(name, "steps")) {
            c->steps = parse_long(spec, "steps", v, 1, 1000000000L);
        } else if (!strcmp(name, "runs")) {
            c->runs = (int)parse_long(spec, "runs", v, 1, 100000);
        } else if (!strcmp(name, "seed")) {
            c->seed = (uint64_t)parse_long(spec, "seed", v, 0, 1L << 53);
        } else if (!strcmp(name, "stream")) {
            c->stream = v;
        } else if (!strcmp(name, "set")) {
            char key[64];
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || (size_t)(eq - v) >= sizeof key)
                vla_cli_die(spec, "--set: '%s' is not NAME=VALUE", v);
            memcpy(key, v, eq - v);
            key[eq - v] = 0;
            if (vla_config_set(&c->cfg, key, eq + 1))
                vla_cli_die(spec, "--set: unknown constant or bad value in '%s'", v);
        } else if (!strcmp(name, "ref")) {
            if (!strcmp(v, "exact"))
                c->ref = REF_EXACT;
            else if (!strcmp(v, "f64"))
                c->ref = REF_F64;
            else if (!strcmp(v, "none"))
                c->ref = REF_NONE;
            else
                vla_cli_die(spec, "--ref: '%s' is not exact, f64 or none", v);
        } else if (!strcmp(name, "ref-bits")) {
            c->ref_bits = parse_long(spec, "ref-bits", v, 64, 1 << 16);
        } else if (!strcmp(name, "backend")) {
            if (strcmp(v, "cpu") && strcmp(v, "cuda") && strcmp(v, "lanes"))
                vla_cli_die(spec, "--backend: '%s' is not cpu, lanes or cuda", v);
            if (!strcmp(v, "cuda"))
                vla_cli_die(spec, "--backend cuda: the experiment programs run on the CPU; the CUDA "
                                  "kernels are checked by vla-regress --backend cuda and make bench");
            c->backend = v;
        } else if (!strcmp(name, "checkpoints")) {
            c->per_decade = (int)parse_long(spec, "checkpoints", v, 1, 1000);
        } else if (!strcmp(name, "out")) {
            c->out = v;
        } else if (!strcmp(name, "resume")) {
            c->resume = 1;
        }
    }
    if (!dv_set)
        c->cfg.dv = c->cfg.d;
    int r = vla_config_check(&c->cfg);
    if (r)
        vla_cli_die(spec, "the model configuration is not valid: %s", vla_strerror(r));
    const char *why;
    if (vla_track_check(&c->cfg, &why))
        vla_cli_die(spec, "--track %s: %s", vla_track_name(c->cfg.track), why);
    if (c->resume && !strcmp(c->out, "-"))
        vla_cli_die(spec, "--resume needs --out FILE (the checkpoints live beside it)");
    if (!strcmp(c->backend, "lanes")) {
        if (c->ref == REF_EXACT)
            vla_cli_die(spec, "--backend lanes: --ref f64 or none (the exact reference steps "
                              "in MPFR, one run at a time, and would set the pace)");
        if (c->resume)
            vla_cli_die(spec, "--backend lanes writes no checkpoint files: run again without "
                              "--resume");
        if (c->cfg.mode != VLA_STRICT || c->cfg.track == VLA_TRACK_COMP ||
            c->cfg.track == VLA_TRACK_SR)
            vla_cli_die(spec, "--backend lanes: strict mode and the policies' own arithmetic "
                              "only (not --mode fast, --track comp or sr)");
#ifdef VLA_HAVE_KERNELS
        char why[300];
        if (!vla_cuda_probe_target(VLA_CUDA_LANES, why, sizeof why))
            vla_cli_die(spec, "--backend lanes: %s", why);
#else
        vla_cli_die(spec, "--backend lanes: this build has no kernels");
#endif
    }
    /* the stream must parse: fail now, not in a worker thread */
    vla_stream *s;
    char err[256];
    if (vla_stream_open(&s, c->stream, c->cfg.d, c->cfg.dv, c->seed, err, sizeof err))
        vla_cli_die(spec, "--stream: %s", err);
    long heads = vla_stream_heads(s), len = vla_stream_length(s);
    vla_stream_close(s);
    if (heads > 0 && c->runs > heads)
        vla_cli_die(spec, "--runs %d: the trace has only %ld heads", c->runs, heads);
    if (len > 0 && c->steps > len) /* a finite stream bounds the horizon */
        c->steps = len;
}

int vla_cli_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

const char *vla_ref_name(const vla_cli *c)
{
    static char buf[64];
    if (c->ref == REF_EXACT) {
        snprintf(buf, sizeof buf, "exact (MPFR, %ld bits)", c->ref_bits);
        return buf;
    }
    return c->ref == REF_F64 ? "f64 (lib in binary64, strict)" : "none";
}

void vla_cli_provenance(vla_dat *f, const vla_cli *c)
{
    char desc[1024];
    vla_config_describe(&c->cfg, desc, sizeof desc);
    vla_dat_meta(f, "config", "%s", desc);
    vla_dat_meta(f, "stream", "%s", c->stream);
    vla_dat_meta(f, "steps", "%ld", c->steps);
    vla_dat_meta(f, "runs", "%d", c->runs);
    vla_dat_meta(f, "seed", "%llu", (unsigned long long)c->seed);
    vla_dat_meta(f, "backend", "%s", c->backend);
    vla_dat_meta(f, "reference", "%s", vla_ref_name(c));
    vla_dat_meta(f, "threads", "%d (the results do not depend on it)", vla_cli_threads());
}

/* ---- one run ---- */

int vla_run_open(vla_run *r, const vla_cli *c, const vla_config *cfg, int head, char *err,
                 size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->head = head;
    int e = vla_stream_open(&r->s, c->stream, cfg->d, cfg->dv, c->seed, err, errlen);
    if (!e)
        e = vla_step_buf_alloc(&r->buf, cfg->d, cfg->dv);
    if (!e && (e = vla_model_new(&r->m, cfg)))
        snprintf(err, errlen, "model %s in %s: %s", vla_model_name(cfg->model),
                 vla_prec_name(cfg->prec), vla_strerror(e));
    if (!e && c->ref != REF_NONE) {
        vla_config rc = *cfg;
        if (c->ref == REF_F64) {
            rc.prec = VLA_F64;
            rc.mode = VLA_STRICT;
            if (rc.track == VLA_TRACK_SR || rc.track == VLA_TRACK_COMP) /* no f64 twin: the */
                rc.track = VLA_TRACK_SM;                                 /* textbook update */
            e = vla_model_new(&r->ref, &rc);
            /* the reference takes the same inputs as the run: rounded to its storage format */
            r->round_ref = vla_prec_storage(cfg->prec) != VLA_FMT_F64;
            if (!e && r->round_ref)
                e = vla_step_buf_alloc(&r->rbuf, cfg->d, cfg->dv);
        } else {
            e = vref_model_new(&r->ref, &rc, VREF_EXACT, c->ref_bits);
        }
        if (e)
            snprintf(err, errlen, "reference: %s", vla_strerror(e));
    }
    if (e)
        vla_run_close(r);
    return e;
}

/* dst = src rounded to format f, element by element */
static void round_into(double *dst, const double *src, int n, vla_fmt f)
{
    for (int i = 0; i < n; i++)
        dst[i] = vla_round_fmt(f, src[i]);
}

/* the f64 reference's inputs: the run's (configuration cfg), rounded once to the run's storage
 * format into rb (exactly what the run itself does first); phi is then taken of the rounded
 * input, as the exact reference does */
static vla_input ref_input_into(vla_step_buf *rb, const vla_config *cfg, const vla_input *in)
{
    vla_fmt f = vla_prec_storage(cfg->prec);
    int d = cfg->d, dv = cfg->dv;
    round_into(rb->q, in->q, d, f);
    round_into(rb->k, in->k, d, f);
    round_into(rb->v, in->v, dv, f);
    if (in->u)
        round_into(rb->u, in->u, d, f);
    if (in->g)
        round_into(rb->g, in->g, dv, f);
    vla_input out = {rb->q, rb->k, rb->v, in->u ? rb->u : NULL, in->g ? rb->g : NULL,
                     isnan(in->beta) ? in->beta : vla_round_fmt(f, in->beta),
                     isnan(in->decay) ? in->decay : vla_round_fmt(f, in->decay)};
    return out;
}
static vla_input ref_input(vla_run *r, const vla_input *in)
{
    return ref_input_into(&r->rbuf, vla_model_config(r->m), in);
}

int vla_run_step(vla_run *r)
{
    int e = vla_stream_get(r->s, (uint32_t)r->head, r->t + 1, &r->buf);
    if (e)
        return e;
    r->t++;
    r->is_read = r->buf.is_read;
    if (r->buf.is_read) {
        e = vla_model_read(r->m, r->buf.q);
        if (!e && r->ref) {
            vla_input in = {r->buf.q, r->buf.q, r->buf.q, NULL, NULL, NAN, NAN};
            e = vla_model_read(r->ref, r->round_ref ? ref_input(r, &in).q : r->buf.q);
        }
        return e;
    }
    vla_input in = {r->buf.q, r->buf.k, r->buf.v, r->buf.u, r->buf.has_g ? r->buf.g : NULL,
                    r->buf.beta, r->buf.decay};
    e = vla_model_step(r->m, &in);
    if (!e && r->ref) {
        vla_input rin = r->round_ref ? ref_input(r, &in) : in;
        e = vla_model_step(r->ref, &rin);
    }
    return e;
}

void vla_run_close(vla_run *r)
{
    vla_model_free(r->m);
    vla_model_free(r->ref);
    vla_stream_close(r->s);
    vla_step_buf_free(&r->buf);
    if (r->round_ref)
        vla_step_buf_free(&r->rbuf);
    memset(r, 0, sizeof *r);
}

/* ---- progress ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

void vla_progress_start(vla_progress *p, long total)
{
    p->t0 = p->last = now();
    p->total = isatty(2) ? total : 0;
}

void vla_progress_update(vla_progress *p, long done)
{
    if (!p->total)
        return;
    double t = now();
    if (t - p->last < 1)
        return;
    p->last = t;
    double rate = done / (t - p->t0);
    fprintf(stderr, "\r%ld/%ld steps, %.3g steps/s, ETA %.0f s   ", done, p->total, rate,
            rate > 0 ? (p->total - done) / rate : 0);
}

void vla_progress_end(vla_progress *p)
{
    if (p->total)
        fprintf(stderr, "\r%60s\r", "");
}

/* ---- rows, checkpoints, the driver ---- */

int vla_rows_add(vla_rows *r, const double *row)
{
    if (r->n == r->cap) {
        long cap = r->cap ? 2 * r->cap : 64;
        double *v = realloc(r->v, (size_t)cap * r->ncol * sizeof *v);
        if (!v)
            return VLA_ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    memcpy(r->v + (size_t)r->n * r->ncol, row, r->ncol * sizeof *row);
    r->n++;
    return VLA_OK;
}

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { stop_requested = sig; }

static void ckpt_path(char *buf, size_t len, const vla_cli *c, int head)
{
    snprintf(buf, len, "%s.ckpt.%d", c->out, head);
}

/* The checkpoints go only when the program exits 0, that is after the table was closed (written,
 * synced and renamed): a table that fails to be written (a full disk) leaves them for --resume. */
static struct {
    const char *out; /* an argv string: still there at exit, unlike the caller's vla_cli */
    int runs;
} ckpt_owner;
static void ckpt_remove_on_success(int status, void *arg)
{
    (void)arg;
    for (int h = 0; status == 0 && h < ckpt_owner.runs; h++) {
        char path[4096];
        snprintf(path, sizeof path, "%s.ckpt.%d", ckpt_owner.out, h);
        unlink(path);
        strcat(path, ".tmp"); /* left by a kill while it was being written */
        unlink(path);
    }
}

/* a run's checkpoint: t, the models, the accumulator, the rows so far; written to a temporary
 * file, synced and renamed, so a kill at any moment leaves the previous checkpoint intact */
/* What a checkpoint must match to be resumed: everything that decides a run's numbers and rows
 * (a --resume with another seed, stream or horizon would otherwise splice two runs into one
 * table). Not --runs: heads are independent. FNV-1a of the description. */
static uint64_t ckpt_key(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, int ncol)
{
    char desc[2048];
    int n = snprintf(desc, sizeof desc, "%s|%s|", spec->prog, drv->columns);
    vla_config_describe(&c->cfg, desc + n, sizeof desc - n);
    n = (int)strlen(desc);
    snprintf(desc + n, sizeof desc - n, "|%s|%llu|%ld|%d|%d|%ld|%zu|%d", c->stream,
             (unsigned long long)c->seed, c->steps, c->per_decade, (int)c->ref, c->ref_bits,
             drv->acc_size, ncol);
    uint64_t h = 14695981039346656037ULL;
    for (const char *p = desc; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}
static const char ckpt_magic[8] = {'v', 'l', 'a', 'c', 'k', 'p', 't', '1'};

static int ckpt_save(const vla_cli *c, const vla_run *r, const void *acc, size_t acc_size,
                     const vla_rows *rows, uint64_t key)
{
    char path[4096], tmp[4200];
    ckpt_path(path, sizeof path, c, r->head);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return VLA_EIO;
    int ok = fwrite(ckpt_magic, 8, 1, f) == 1 && fwrite(&key, sizeof key, 1, f) == 1 &&
             fwrite(&r->t, sizeof r->t, 1, f) == 1 && vla_model_save(r->m, f) == 0 &&
             (!r->ref || vla_model_save(r->ref, f) == 0) &&
             (acc_size == 0 || fwrite(acc, acc_size, 1, f) == 1) &&
             fwrite(&rows->n, sizeof rows->n, 1, f) == 1 &&
             fwrite(rows->v, sizeof(double) * rows->ncol, rows->n, f) == (size_t)rows->n;
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path)) {
        unlink(tmp);
        return VLA_EIO;
    }
    return VLA_OK;
}

static int ckpt_load(const vla_cli *c, vla_run *r, void *acc, size_t acc_size, vla_rows *rows,
                     uint64_t key)
{
    char path[4096], magic[8];
    ckpt_path(path, sizeof path, c, r->head);
    FILE *f = fopen(path, "rb");
    if (!f)
        return VLA_EIO;
    long n = 0;
    uint64_t k = 0;
    int ok = fread(magic, 8, 1, f) == 1 && !memcmp(magic, ckpt_magic, 8) &&
             fread(&k, sizeof k, 1, f) == 1 && k == key && fread(&r->t, sizeof r->t, 1, f) == 1 &&
             r->t >= 0 && r->t <= c->steps && vla_model_load(r->m, f) == 0 &&
             (!r->ref || vla_model_load(r->ref, f) == 0) &&
             (acc_size == 0 || fread(acc, acc_size, 1, f) == 1) && fread(&n, sizeof n, 1, f) == 1 &&
             n >= 0 && n < (1L << 30);
    for (long i = 0; ok && i < n; i++) {
        double row[64];
        ok = rows->ncol <= 64 && fread(row, sizeof(double), rows->ncol, f) == (size_t)rows->ncol &&
             vla_rows_add(rows, row) == 0;
    }
    fclose(f);
    return ok ? VLA_OK : VLA_EFORMAT;
}

static int count_columns(const char *s)
{
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        n++;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

int vla_cli_model_finite(const vla_model *m, double *buf)
{
    const vla_config *cfg = vla_model_config(m);
    long d = cfg->d, dv = cfg->dv;
    const struct {
        vla_quantity q;
        long n;
    } qs[] = {{VLA_Q_S, dv * d}, {VLA_Q_A, vla_model_has_A(cfg->model) ? d * d : 0}, {VLA_Q_O, dv}};
    for (int k = 0; k < 3; k++)
        if (qs[k].n && vla_model_get(m, qs[k].q, buf) == 0)
            for (long i = 0; i < qs[k].n; i++)
                if (!isfinite(buf[i]))
                    return 0;
    return 1;
}

void vla_cli_warn_nonfinite(const char *prog, int in_ref, int nbad, int nruns, int head, long step,
                            const char *rows)
{
    fprintf(stderr, "%s: warning: the state of %s is not finite (Inf or NaN) in %d of %d runs, "
                    "first in head %d at step %ld (checked at the table's steps); %s\n",
            prog, in_ref ? "the reference" : "the model", nbad, nruns, head, step, rows);
}

#ifdef VLA_HAVE_KERNELS
/* --backend lanes: every head one run of a batch on the CPU's vector lanes (kernels/lanes.c),
 * launched in chunks from one checkpoint step to the next; at a checkpoint each run's state is
 * copied into its CPU model, bit for bit, where the program's measures read it. The parser has
 * refused a reference and --resume; no checkpoint files are written (SIGINT/TERM stop the runs,
 * exit 3). A failure fails every run (they share the batch). */
static void drive_lanes(const vla_cli *c, const char *spec_prog, const vla_driver *drv,
                        const long *cks, long nck, vla_rows *rows, char (*errs)[256],
                        long *inf_at, char *inf_ref, vla_progress *prog, int *failed,
                        int *interrupted)
{
    const int nr = c->runs, d = c->cfg.d, dv = c->cfg.dv, dmax = d > dv ? d : dv;
    /* inputs of a chunk: at most about 32 MB of them */
    long chunk = (32L << 20) / ((long)nr * (3 * d + 2 * dv + 8) * (long)sizeof(double));
    chunk = chunk < 1 ? 1 : chunk > 4096 ? 4096 : chunk;
    vla_run *r = calloc(nr, sizeof *r);
    void **acc = calloc(nr, sizeof *acc);
    /* --ref f64: a second batch in binary64, on the inputs rounded to the run's storage format */
    const int ref = c->ref == REF_F64;
    vla_step_buf *b = calloc((size_t)nr * chunk, sizeof *b);
    vla_step_buf *rb = ref ? calloc((size_t)nr * chunk, sizeof *rb) : NULL;
    vla_input *in = calloc((size_t)nr * chunk, sizeof *in);
    vla_input *rin = ref ? calloc((size_t)nr * chunk, sizeof *rin) : NULL;
    unsigned char *rd = calloc((size_t)nr * chunk, 1);
    double *qbuf = malloc((size_t)d * dmax * sizeof *qbuf);
    vla_cuda *g = NULL, *gr = NULL;
    char err[400] = "out of memory";
    int e = r && acc && b && in && rd && qbuf && (!ref || (rb && rin)) ? 0 : VLA_ENOMEM;
    for (long i = 0; !e && i < (long)nr * chunk; i++)
        if (!(e = vla_step_buf_alloc(&b[i], d, dv)) && ref)
            e = vla_step_buf_alloc(&rb[i], d, dv);
    vla_cuda_opts o = {VLA_CUDA_LANES, 0, 0};
    if (!e && (e = vla_cuda_new(&g, &c->cfg, nr, &o, err, sizeof err)))
        g = NULL;
    if (!e && ref) { /* the reference's configuration, as vla_run_open makes it */
        vla_config rc = c->cfg;
        rc.prec = VLA_F64;
        if ((e = vla_cuda_new(&gr, &rc, nr, &o, err, sizeof err)))
            gr = NULL;
    }
    int lw = vla_cuda_lanes_width(c->cfg.prec);
    if (!e && lw > 0 && nr % lw)
        fprintf(stderr, "%s: note: --backend lanes computes %d runs per register; %d runs leave "
                        "%d lanes idle (--runs %d would fill them)\n",
                spec_prog, lw, nr, (nr + lw - 1) / lw * lw - nr, (nr + lw - 1) / lw * lw);
    for (int h = 0; !e && h < nr; h++) {
        rows[h].ncol = count_columns(drv->columns);
        if (!(acc[h] = calloc(1, drv->acc_size ? drv->acc_size : 1)))
            e = VLA_ENOMEM;
        else if ((e = vla_run_open(&r[h], c, &c->cfg, h, err, sizeof err)))
            ;
        else if (drv->init && (e = drv->init(&r[h], acc[h], drv->ctx)))
            snprintf(err, sizeof err, "head %d: %s", h, vla_strerror(e));
    }
    long t = 0, ci = 0, done = 0;
    while (!e && t < c->steps) {
        long next = ci < nck ? cks[ci] : c->steps, n = next - t < chunk ? next - t : chunk;
        /* the streams, head by head in parallel (generating them costs more than the lanes) */
#pragma omp parallel for schedule(dynamic, 1)
        for (int h = 0; h < nr; h++)
            for (long k = 0; k < n; k++) {
                vla_step_buf *x = &b[h * n + k];
                int eh = vla_stream_get(r[h].s, (uint32_t)h, t + k + 1, x);
                if (eh) {
#pragma omp critical(drive_lanes_err)
                    if (!e) {
                        e = eh;
                        snprintf(err, sizeof err, "head %d, step %ld: %s", h, t + k + 1,
                                 vla_strerror(eh));
                    }
                    break;
                }
                in[h * n + k] = (vla_input){x->q, x->k, x->v, x->u, x->has_g ? x->g : NULL,
                                            x->beta, x->decay};
                rd[h * n + k] = (unsigned char)x->is_read;
                if (ref) /* a read uses only q, which this rounds too */
                    rin[h * n + k] = ref_input_into(&rb[h * n + k], &c->cfg, &in[h * n + k]);
            }
        if (!e && (e = vla_cuda_run(g, n, in, rd, NULL)))
            snprintf(err, sizeof err, "steps %ld..%ld: %s", t + 1, t + n, vla_cuda_error(g));
        if (!e && ref && (e = vla_cuda_run(gr, n, rin, rd, NULL)))
            snprintf(err, sizeof err, "reference, steps %ld..%ld: %s", t + 1, t + n,
                     vla_cuda_error(gr));
        if (e)
            break;
        t += n;
        vla_progress_update(prog, done += n * nr);
        if (ci < nck && t == cks[ci]) {
            ci++;
            for (int h = 0; !e && h < nr; h++) {
                if ((e = vla_cuda_to_model(g, h, r[h].m)) ||
                    (ref && (e = vla_cuda_to_model(gr, h, r[h].ref)))) {
                    snprintf(err, sizeof err, "head %d, step %ld: %s", h, t,
                             vla_cuda_error(ref ? gr : g));
                    break;
                }
                r[h].t = t;
                r[h].is_read = b[h * n + n - 1].is_read;
                if ((e = drv->on_checkpoint(&r[h], acc[h], &rows[h], drv->ctx)))
                    snprintf(err, sizeof err, "head %d, step %ld: %s", h, t, vla_strerror(e));
                else if (!inf_at[h] && !vla_cli_model_finite(r[h].m, qbuf))
                    inf_at[h] = t;
                else if (!inf_at[h] && ref && !vla_cli_model_finite(r[h].ref, qbuf))
                    inf_at[h] = t, inf_ref[h] = 1;
            }
        }
        if (stop_requested) {
            *interrupted = nr;
            break;
        }
    }
    if (e) {
        snprintf(errs[0], sizeof errs[0], "--backend lanes: %s", err);
        *failed = nr;
    }
    for (int h = 0; h < nr && r && acc; h++) {
        vla_run_close(&r[h]);
        free(acc[h]);
    }
    for (long i = 0; b && i < (long)nr * chunk; i++) {
        vla_step_buf_free(&b[i]);
        if (rb)
            vla_step_buf_free(&rb[i]);
    }
    vla_cuda_free(g);
    vla_cuda_free(gr);
    free(rb);
    free(rin);
    free(r);
    free(acc);
    free(b);
    free(in);
    free(rd);
    free(qbuf);
}
#endif

int vla_drive(const vla_cli *c, const vla_cli_spec *spec, const vla_driver *drv, vla_dat *out)
{
    /* tests make checkpoints frequent; a value that is not a number of seconds is a usage error */
    double every = 60;
    const char *ev = getenv("VLA_CHECKPOINT_SECONDS");
    if (ev) {
        char *end;
        every = strtod(ev, &end);
        if (end == ev || *end || !(every >= 0 && every <= 1e9)) {
            fprintf(stderr, "%s: VLA_CHECKPOINT_SECONDS='%s' is not a number of seconds\n",
                    spec->prog, ev);
            return 2;
        }
    }
    int ncol = count_columns(drv->columns), nr = c->runs, failed = 0, interrupted = 0;
    long nck = vla_checkpoints(c->steps, c->per_decade, NULL, 0);
    uint64_t key = ckpt_key(c, spec, drv, ncol);
    long *cks = malloc((size_t)(nck > 0 ? nck : 1) * sizeof *cks);
    vla_rows *rows = calloc(nr, sizeof *rows);
    char (*errs)[256] = calloc(nr, sizeof *errs);
    /* the first checkpoint step at which a run's state (or its reference's) was not finite */
    long *inf_at = calloc(nr, sizeof *inf_at);
    char *inf_ref = calloc(nr, 1);
    if (!cks || !rows || !errs || !inf_at || !inf_ref) {
        fprintf(stderr, "%s: out of memory\n", spec->prog);
        return 1;
    }
    vla_checkpoints(c->steps, c->per_decade, cks, nck);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    vla_progress prog;
    vla_progress_start(&prog, c->steps * nr);
    long done = 0;
    int unsaved = 0;

    if (!strcmp(c->backend, "lanes")) {
#ifdef VLA_HAVE_KERNELS
        if (drv->on_step) {
            fprintf(stderr, "%s: --backend lanes: this program measures every step, which the "
                            "lanes do not stop for; use --backend cpu\n", spec->prog);
            return 2;
        }
        drive_lanes(c, spec->prog, drv, cks, nck, rows, errs, inf_at, inf_ref, &prog, &failed,
                    &interrupted);
#endif
    } else
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failed, interrupted, unsaved)
    for (int h = 0; h < nr; h++) {
        if (stop_requested) { /* not started: nothing to save, --resume starts it afresh */
            interrupted++;
            continue;
        }
        vla_run r = {0};
        void *acc = calloc(1, drv->acc_size ? drv->acc_size : 1);
        int dmax = c->cfg.d > c->cfg.dv ? c->cfg.d : c->cfg.dv;
        double *qbuf = malloc((size_t)c->cfg.d * dmax * sizeof *qbuf);
        rows[h].ncol = ncol;
        int e = acc ? vla_run_open(&r, c, &c->cfg, h, errs[h], sizeof errs[h]) : VLA_ENOMEM;
        if (!e) {
            if (c->resume && ckpt_load(c, &r, acc, drv->acc_size, &rows[h], key) == 0) {
                /* continue from r.t */
            } else {
                if (c->resume) { /* no usable checkpoint: start over, keep nothing partial */
                    rows[h].n = 0;
                    memset(acc, 0, drv->acc_size); /* a failed load may have filled part of it */
                    vla_run_close(&r);
                    e = vla_run_open(&r, c, &c->cfg, h, errs[h], sizeof errs[h]);
                }
                if (!e && drv->init)
                    e = drv->init(&r, acc, drv->ctx);
            }
        }
        long ci = 0;
        while (ci < nck && cks[ci] <= r.t)
            ci++;
        double last_save = now();
        while (!e && r.t < c->steps) {
            if ((e = vla_run_step(&r))) {
                snprintf(errs[h], sizeof errs[h], "head %d, step %ld: %s", h, r.t + 1,
                         vla_strerror(e));
                break;
            }
            if (drv->on_step && (e = drv->on_step(&r, acc, drv->ctx)))
                break;
            if (ci < nck && r.t == cks[ci]) {
                ci++;
                if ((e = drv->on_checkpoint(&r, acc, &rows[h], drv->ctx)))
                    break;
                /* an overflow is a result, but it must not pass unsaid (the warning below) */
                if (!inf_at[h] && qbuf && !vla_cli_model_finite(r.m, qbuf))
                    inf_at[h] = r.t;
                else if (!inf_at[h] && qbuf && r.ref && !vla_cli_model_finite(r.ref, qbuf))
                    inf_at[h] = r.t, inf_ref[h] = 1;
            }
            if ((r.t & 1023) == 0) {
#pragma omp atomic
                done += 1024;
                if (h == 0 || nr == 1)
                    vla_progress_update(&prog, done);
                int stop = stop_requested != 0;
                if (strcmp(c->out, "-") && (stop || now() - last_save >= every)) {
                    if (ckpt_save(c, &r, acc, drv->acc_size, &rows[h], key)) {
                        fprintf(stderr, "%s: cannot write checkpoint %s.ckpt.%d\n", spec->prog,
                                c->out, h);
                        unsaved += stop != 0;
                    }
                    last_save = now();
                }
                if (stop) {
                    interrupted++;
                    break;
                }
            }
        }
        if (e && !errs[h][0])
            snprintf(errs[h], sizeof errs[h], "head %d: %s", h, vla_strerror(e));
        failed += e != 0;
        vla_run_close(&r);
        free(acc);
        free(qbuf);
    }
    vla_progress_end(&prog);
    free(cks);
    int ninf = 0, first = -1;
    for (int h = 0; h < nr; h++)
        if (inf_at[h] && ninf++ == 0)
            first = h;
    if (ninf)
        vla_cli_warn_nonfinite(spec->prog, inf_ref[first], ninf, nr, first, inf_at[first],
                               "its rows carry inf or nan from there on");
    free(inf_at);
    free(inf_ref);
    int status = 0;
    if (interrupted) {
        if (!strcmp(c->backend, "lanes"))
            fprintf(stderr, "%s: interrupted (signal %d); nothing saved: --backend lanes writes no "
                            "checkpoints.\n", spec->prog, (int)stop_requested);
        else if (!strcmp(c->out, "-"))
            fprintf(stderr, "%s: interrupted (signal %d); nothing saved: checkpoints need --out "
                            "FILE.\n", spec->prog, (int)stop_requested);
        else if (unsaved)
            fprintf(stderr, "%s: interrupted (signal %d); %d checkpoint(s) could not be written "
                            "beside %s. --resume continues from the last ones written.\n",
                    spec->prog, (int)stop_requested, unsaved, c->out);
        else
            fprintf(stderr, "%s: interrupted (signal %d); checkpoints written beside %s. Resume "
                            "with the same command and --resume.\n",
                    spec->prog, (int)stop_requested, c->out);
        status = 3;
    } else if (failed) {
        for (int h = 0; h < nr; h++)
            if (errs[h][0]) {
                fprintf(stderr, "%s: %s\n", spec->prog, errs[h]);
                break;
            }
        status = 1;
    } else {
        vla_dat_columns(out, drv->columns);
        for (int h = 0; h < nr && !status; h++) {
            if (h)
                vla_dat_block(out);
            for (long i = 0; i < rows[h].n; i++)
                vla_dat_row(out, rows[h].v + (size_t)i * ncol, ncol);
        }
        if (strcmp(c->out, "-") && !ckpt_owner.out) {
            ckpt_owner.out = c->out;
            ckpt_owner.runs = nr;
            on_exit(ckpt_remove_on_success, NULL);
        }
    }
    for (int h = 0; h < nr; h++)
        free(rows[h].v);
    free(rows);
    free(errs);
    return status;
}
