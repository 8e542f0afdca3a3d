/* cli.c: the option parser shared by the experiment programs, their provenance lines, and the
 * engines a run and its reference run on. A program states its question (a vla_cli_spec and a
 * vla_driver, drive.c); --help and --man are help.c's. */
#include "cli.h"
#include "file.h"
#include "vlacuda.h"
#include "vlaref.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

__attribute__((noreturn)) static void cli_leave(const vla_cli_spec *spec, int status,
                                                 const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", spec->prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", status == 2 ? " (try --help)" : "");
    exit(status);
}

void vla_cli_die(const vla_cli_spec *spec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_leave(spec, 2, fmt, ap);
}

const char *vla_cli_models_with_A(void)
{
    static char buf[96];
    if (!buf[0])
        vla_models_where(buf, sizeof buf, vla_model_has_A, " or ");
    return buf;
}

void vla_cli_fail(const vla_cli_spec *spec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_leave(spec, 1, fmt, ap);
}

static vla_cli_opt common[] = {
    {"model", "NAME", NULL},     /* the lists' help: from the library's tables (common_opts) */
    {"track", "WAY", NULL},
    {"precision", "P", NULL},
    {"mode", "M", "strict (fixed order, no fma; the default) or fast (fma contraction allowed)"},
    {"form", "F", "seq (token by token, the default), chunk:C (C a power of two in 1..256: a chunk "
                  "of C tokens at once, in the fast kernels' arrangement (the gated family's "
                  "exponentials by default base e of a running sum: --set base=2 --set "
                  "cumsum=tree for fla's); the state exists at "
                  "multiples of C, to which the steps and checkpoints are rounded down) or scan "
                  "(the linear part of S as Blelloch's tree-ordered scan); docs/forms.md"},
    {"d", "N", "key dimension, 1..256 (default 32; with a trace, its q.npy's)"},
    {"dv", "N", "value dimension (default d; with a trace, its v.npy's)"},
    {"steps", "T", "tokens per run"},
    {"runs", "R", "independent heads, run in parallel (default 1)"},
    {"seed", "S", "seed of the input streams (default 1)"},
    {"stream", "SPEC", "gauss[:SIGMA[,sigmoid][,logits]] (sigmoid: delta's rate beta_t = "
                       "sigmoid(N(0,1)) per step; logits: the log-gates drawn as N(0,1) logits, "
                       "for --set gate_map=sigmoid), lmlike[:S], subspace:R,NOISE, repeat:M, mqar:N,G, trace:DIR"},
    {"set", "NAME=VALUE", "a model constant: lambda0, eps_g, stab_eps, per_eps, period, eps_o, clip, "
                          "clamp, clamp_eps, renorm, beta, gamma (forgetting factor of M, in (0, 1]; "
                          "1 = none), delta_form=gated|decay, features=own|id, householder=N "
                          "(deltaproduct's updates per token), rank=R (mamba3's MIMO rank, "
                          "seq form), "
                          "nudge|guard|clamp_on|normalize=on|off; the chunk forms' exponent range "
                          "(docs/forms.md): cumsum=run|tree, cumsum_fmt=compute|io, base=e|2, "
                          "gate_clamp=on|off, anchor=direct|first|last|mid|start, anchor_block=B "
                          "(0: C), gate_lb=LB (<= 0; 0: none) with gate_map=clamp|sigmoid|pin "
                          "; the kernels' 16-bit choices "
                          "(docs/forms.md): tri=blocked|forward|neumann (the chunk's (I + L)^-1; "
                          "blocked, fla's, by default), stage=io|f16|bf16|off (the chunk's S_0 as "
                          "the products' operand; io by default); decoding's (--form seq): "
                          "cache=off|f16|bf16|e4m3|e5m2|int8|int16 (the format S is kept in "
                          "between binary32 updates), cache_rows=R (rows of S per scale; 0: "
                          "none), cache_round=rn|sr|ef (to nearest, stochastic, error feedback), "
                          "decay_bf16|beta_bf16=on|off (the decays, beta rounded to bfloat16) "
                          "(repeatable)"},
    {"ref", "KIND", "reference: exact (MPFR), f64 (lib in binary64, for horizons beyond exact) or none"},
    {"ref-bits", "P", "precision of the exact reference in bits (default 256)"},
    {"backend", "B", "where the runs advance, every one with the same bits: cpu (the default: "
                     "every way of tracking and mode), lanes (the runs side by side in the CPU's "
                     "vector lanes, 16 per AVX-512 register or 8 per AVX2 one, binary64 half as "
                     "many: many times faster; strict mode, every way but comp and sr), cuda (the "
                     "GPU's kernels: strict, sm and sm-sym, d up to 128, 64 in f64), emu (the same "
                     "kernels on host threads, for a machine without a GPU; slow)"},
    {"checkpoints", "N", "checkpoints per decade of t (default 10)"},
    {"out", "FILE", "output table (default: standard output)"},
    {"resume", NULL, "continue an interrupted run from its checkpoint (FILE.ckpt, written every "
                     "VLA_CHECKPOINT_SECONDS seconds of the environment, default 60); it must be "
                     "this build's and this command's (the message names what differs)"},
    {"help", NULL, "this text"},
    {"version", NULL, "the version"},
    {NULL, NULL, NULL},
};

/* the common options, their lists of models, ways and precisions from the library's tables */
const vla_cli_opt *vla_cli_common(void)
{
    static char model[200], track[900], prec[300];
    if (!common[0].help) {
        snprintf(model, sizeof model, "the model: %s (docs/math.md section 2)",
                 vla_names(VLA_LIST_MODEL));
        snprintf(track, sizeof track, "how A is tracked: %s (docs/math.md section 4: sm the "
                 "textbook Sherman-Morrison update, sm-sym its symmetric half, chol the Cholesky "
                 "factor of M with the nudge off, comp double-word arithmetic, sr stochastic "
                 "rounding in a mixed policy); or M = A^-1 kept and M y = x solved at every step "
                 "(section 4.7; rls, vla1, vla3; nudge and clamp off): solve (Cholesky), cg:K (K "
                 "conjugate-gradient iterations, 1..%d, warm-started; cg = cg:8), cg:TOL (until "
                 "||r|| <= TOL ||x||, TOL in (0, 1), at most 2d iterations), cheb:K (Chebyshev "
                 "iteration on [lambda0, Gershgorin's bound])", vla_names(VLA_LIST_TRACK),
                 VLA_SOLVE_KMAX);
        snprintf(prec, sizeof prec, "the precision policy: %s (docs/math.md section 5; a-b: "
                 "storage in a, arithmetic in b)", vla_names(VLA_LIST_PREC));
        common[0].help = model;
        common[1].help = track;
        common[2].help = prec;
    }
    return common;
}

/* ---- --help and --man (doc.c), from the program's spec ---- */

static const vla_doc_item cli_exit[] = {
    {"0", NULL, "the table was written"},
    {"1", NULL, "a run failed (the message names the head, the step and the reason), or the table "
                "could not be written (no half-written table is left)"},
    {"2", NULL, "a usage error: an unknown option or value, a value out of range, a configuration "
                "the backend or the reference cannot run, a bad input file"},
    {"3", NULL, "interrupted by SIGINT or SIGTERM: the runs' checkpoint, or the units of work "
                "finished (rows, heads, snapshots, timings), is written beside the table (with "
                "--out FILE; a program without checkpoints says so), and the same command with "
                "--resume continues; no table or temporary is left"},
    {NULL, NULL, NULL},
};
static const vla_doc_item cli_env[] = {
    {"VLA_CHECKPOINT_SECONDS", NULL, "seconds between checkpoint writes (default 60; 0: about "
                                     "every 1024 steps, or every unit of work)"},
    {"VLA_STOP_AFTER_CHECKPOINTS", NULL, "N: stop as SIGINT would once the N-th checkpoint file is "
                                         "written (a stop at an exact point, for tests; default "
                                         "0: never)"},
    {"OMP_NUM_THREADS", NULL, "threads the runs are spread over (the results do not depend on it)"},
    {"VLA_SIMD", NULL, "avx2 or off: the vector width of the cpu backend's path for one run and "
                       "of the inputs' preparation (the streams' generator and W k, the roundings "
                       "and phi; default: the widest the processor has; the bits are the same)"},
    {"VLA_LANES", NULL, "avx2: the lanes' AVX2 path on a processor with AVX-512 (the bits are the "
                        "same)"},
    {NULL, NULL, NULL},
};
static const vla_doc_item cli_files[] = {
    {"FILE", NULL, "the table (--out): written to a temporary beside it, synced, and renamed over "
                   "FILE when complete; only a regular file is replaced"},
    {"FILE.ckpt", NULL, "the runs' checkpoint beside the table, one file for all of them (or the "
                        "units of work finished, where a program's work is rows, heads, snapshots "
                        "or timings): written every VLA_CHECKPOINT_SECONDS and on SIGINT or "
                        "SIGTERM (to FILE.ckpt.tmp.PID, synced and renamed), read by --resume, "
                        "removed once the table is written"},
    {"DIR/q.npy DIR/k.npy DIR/v.npy", NULL,
     "--stream trace:DIR, your own model's inputs: one attention layer's raw projections (the "
     "outputs of W_q, W_k, W_v, before any feature map: each model applies its own), shape (heads, "
     "T, d) for q and k, (heads, T, dv) for v; float16, float32 or float64 (save bfloat16 as "
     "float32), little-endian, C order (np.ascontiguousarray); every value finite. Every model "
     "reads them. The programs run every head and every step unless --runs and --steps say less, "
     "and take d and dv from the files"},
    {"DIR/u.npy", NULL, "(heads, T, d), optional: the penalty vector of vla1 and vla3; absent: u = k"},
    {"DIR/g.npy", NULL, "(heads, T, dv), optional: delta's row gates in [0, 1] (after the sigmoid; "
                        "delta_form=gated, the default); absent: g = 1"},
    {"DIR/beta.npy", NULL, "(heads, T), optional: delta's rate beta_t >= 0; absent: the constant "
                           "beta (--set beta=B)"},
    {"DIR/decay.npy", NULL, "(heads, T), optional: delta's decay a_t in [0, 1] (--set "
                            "delta_form=decay); absent: a_t = 1"},
    {"DIR/S0.npy", NULL, "(heads, dv, d), optional: each head's initial state S_0 in the state's "
                         "layout (fla's initial_state transposed), rounded to the policy's storage "
                         "format; the models whose state is S alone take it (not those that "
                         "keep A, Fenwick levels or a normalizer: la with normalize=on), the "
                         "others refuse it (exit 2); absent: S_0 = 0"},
    {"DIR/cu_seqlens.npy", NULL, "(N + 1,) integers, optional: 0 = c_0 < c_1 < ... < c_N = T, "
                                 "the T steps are N sequences packed (fla's cu_seqlens), each "
                                 "run's state restarting at each sequence's first step from 0 or "
                                 "its row of S0.npy, then (N, heads, dv, d); vla-check reads it, "
                                 "the other programs refuse it (exit 2)"},
    {"DIR/model.txt", NULL, "optional: the model that made the trace and its settings, lines "
                            "'model NAME' and 'set NAME=VALUE' ('#' comments; TraceRecorder.save "
                            "writes it): the programs run that model unless --model is given, "
                            "with its settings before the command line's --set"},
    {NULL, NULL, NULL},
};

static void cli_doc(const vla_cli_spec *spec, vla_doc *d, char *defaults, size_t len)
{
    snprintf(defaults, len, "Defaults here: --model %s --stream %s --steps %ld --ref %s",
             vla_model_name(spec->default_model), spec->default_stream, spec->default_steps,
             spec->default_ref == REF_EXACT ? "exact" : spec->default_ref == REF_F64 ? "f64" : "none");
    *d = (vla_doc){
        .prog = spec->prog,
        .phrase = spec->phrase ? spec->phrase : spec->prog,
        .synopsis = "[OPTION]...",
        .summary = spec->summary,
        .version = VLA_VERSION,
        .opts = {spec->opts, vla_cli_common(), NULL},
        .after_opts = defaults,
        .sections = {{"Columns",
                      "A gnuplot-ready table (docs/math.md section 9): '#' provenance lines, then "
                      "'# columns: ...', one block per run, with these columns:",
                      NULL, spec->columns, 0, NULL},
                     {NULL, NULL, NULL, NULL, 0, NULL}},
        .exit = spec->exit ? spec->exit : cli_exit,
        .env = cli_env,
        .files = cli_files,
        .files_end = "The table's header lists the files a trace supplied and the fallbacks of the "
                     "absent ones that the model reads ('# files:'); a file the model does not read is a warning on "
                     "stderr. docs/trace.md gives every rule, and a worked example.",
        .examples = spec->example,
    };
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

/* what the form asks of the horizon and the stream (docs/forms.md): a chunk form has a state at
 * multiples of C only, so the horizon is rounded down to one (and must hold a chunk), an mqar
 * stream's reads must follow a whole number of chunks. Why cfg's form does not take the inputs of
 * c's stream (NULL: it does): delta's row gates have no chunk or scan here, which step 1 of head 0
 * tells, and a chunk takes no decay of 0, which every step of every run of a stream with decays
 * is looked at for (the reason then names the head and the step) */
int vla_cli_gates_check(const vla_cli *c, const vla_config *cfg, vla_error *err)
{
    int r;
    if ((c->optional & VLA_IN_S0) && (r = vla_config_h0(cfg, err)))
        return vla_fail(err, r, "the trace's S0.npy (each head's initial state): %s", err->msg);
    if ((r = vla_seqs_check(cfg, c->cu, c->nseq, err)))
        return r;
    if ((c->optional & VLA_IN_LOGDECAY_D) && vla_model_gate(cfg->model) == 1)
        return vla_fail(err, VLA_EINVAL, "the trace's logdecay.npy holds a log-decay per key "
                        "channel (heads, T, d), and this model takes a scalar per token, (heads, T) "
                        "(gdn, mamba2); kda, gla and rwkv7 take one per channel");
    return VLA_OK;
}

int vla_cli_form_input_check(const vla_cli *c, const vla_config *cfg, vla_error *err)
{
    vla_stream *s;
    vla_step_buf b;
    int r = VLA_OK;
    const long T = c->optional & VLA_IN_DECAY ? c->steps : 1;
    if (vla_stream_open_part(&s, c->stream, cfg->d, cfg->dv, c->seed, 0, T > 1 ? c->runs : 1, T,
                             NULL))
        return VLA_OK; /* (the parser checked the stream) */
    if (vla_step_buf_alloc(&b, cfg->d, cfg->dv) == 0) {
        for (int h = 0; h < (T > 1 ? c->runs : 1) && !r; h++)
            for (long t = 1; t <= T && !r && vla_stream_get(s, (uint32_t)h, t, &b) == 0; t++) {
                vla_input in = vla_input_of(&b);
                if ((r = vla_form_input_check(cfg, &in, err)) && T > 1)
                    vla_fail(err, r, "head %d, step %ld: %s", h, t, vla_error_msg(err));
            }
        vla_step_buf_free(&b);
    }
    vla_stream_close(s);
    return r;
}

static void vla_cli_form_fits(vla_cli *c, const vla_cli_spec *spec, const char *form,
                              int per_model)
{
    const int C = c->cfg.form == VLA_FORM_CHUNK ? c->cfg.chunk : 1;
    if (C > c->steps)
        vla_cli_die(spec, "--form %s: C = %d exceeds the %ld steps", form, C, c->steps);
    c->whole_steps = c->steps;
    c->steps = c->steps / C * C;
    long n, G;
    vla_error why;
    if (!per_model && vla_cli_form_input_check(c, &c->cfg, &why))
        vla_cli_die(spec, "--form %s with --stream %s: %s", form, c->stream, vla_error_msg(&why));
    if (sscanf(c->stream, "mqar:%ld,%ld", &n, &G) == 2 && vla_form_read_check(&c->cfg, &why))
        vla_cli_die(spec, "--form %s with --stream %s: %s", form, c->stream, vla_error_msg(&why));
    if (sscanf(c->stream, "mqar:%ld,%ld", &n, &G) == 2 && (n + G) % C)
        vla_cli_die(spec, "--form %s with --stream %s: the reads follow %ld writes, no multiple of "
                          "C: a read inside a chunk has no state to read (docs/forms.md)",
                    form, c->stream, n + G);
}

static void warn_unread(const char *prog, const vla_cli *c);

/* the last dimension of DIR/NAME when it is a readable 3-dimensional .npy of a head size in
 * range, else dflt (the stream's own check then says what is wrong) */
static int trace_dim(const char *dir, const char *name, int dflt)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    vla_npy a;
    long full[8];
    if (vla_npy_read_part(path, &a, 0, 0, 0, full, NULL)) /* the header alone */
        return dflt;
    memcpy(a.shape, full, sizeof full);
    long n = a.ndim == 3 ? a.shape[2] : 0;
    vla_npy_free(&a);
    return n >= VLA_D_MIN && n <= VLA_D_MAX ? (int)n : dflt;
}

/* A trace's model.txt (docs/trace.md) into c: none is no error (the stream says what else is
 * missing); a malformed one is a usage error naming the file and the line. Its settings are
 * checked on the named model at head size d, each naming its line. */
#define MODEL_TXT_MAX 65536
static void read_model_txt(vla_cli *c, const vla_cli_spec *spec, const char *dir, int d)
{
    static char path[4200], text[MODEL_TXT_MAX + 1];
    int lines[VLA_CLI_MAXSETS], model_line = 0;
    struct stat st;
    snprintf(path, sizeof path, "%s/model.txt", dir);
    if (lstat(path, &st) != 0)
        return;
    FILE *f;
    const char *kind = "";
    int e = vla_file_read_open(path, MODEL_TXT_MAX, &f, &kind);
    if (e == VLA_EINVAL)
        vla_cli_die(spec, "--stream: %s: it is %s (a trace's model.txt is a regular file)", path,
                    kind);
    if (e == VLA_ERANGE)
        vla_cli_die(spec, "--stream: %s: over %d bytes (a model.txt is a few lines)", path,
                    MODEL_TXT_MAX);
    if (e)
        vla_cli_die(spec, "--stream: %s: cannot open: %s", path, strerror(errno));
    size_t n = fread(text, 1, MODEL_TXT_MAX, f);
    if (ferror(f))
        vla_cli_fail(spec, "--stream: %s: cannot read: %s", path, strerror(errno));
    fclose(f);
    text[n] = 0;
    char *next = text;
    for (int ln = 1; next < text + n; ln++) {
        char *l = next, *end = memchr(l, '\n', (size_t)(text + n - l));
        end = end ? end : text + n;
        next = end + 1;
        *end = 0;
        for (char *p = l; p < end; p++)
            if ((unsigned char)*p < 32 ? *p != '\t' : *p == 127)
                vla_cli_die(spec, "--stream: %s:%d: a control character (byte 0x%02x) in the line "
                            "(lines end with \\n alone)", path, ln, (unsigned char)*p);
        l += strspn(l, " \t");
        while (end > l && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = 0;
        if (!*l || *l == '#')
            continue;
        char *arg = l + strcspn(l, " \t");
        if (*arg)
            *arg++ = 0;
        arg += strspn(arg, " \t");
        if (strcmp(l, "model") && strcmp(l, "set"))
            vla_cli_die(spec, "--stream: %s:%d: '%s' begins no line of a model.txt ('model NAME', "
                        "'set NAME=VALUE', '#' comments)", path, ln, l);
        if (!*arg || arg[strcspn(arg, " \t")])
            vla_cli_die(spec, "--stream: %s:%d: '%s' takes one word, %s", path, ln, l,
                        *l == 'm' ? "the model's name" : "NAME=VALUE");
        if (*l == 'm') {
            if (model_line)
                vla_cli_die(spec, "--stream: %s:%d: a second model line (line %d names %s)", path,
                            ln, model_line, vla_model_name(c->txt_model));
            if (vla_model_parse(arg, &c->txt_model))
                vla_cli_die(spec, "--stream: %s:%d: unknown model '%s' (%s)", path, ln, arg,
                            vla_names(VLA_LIST_MODEL));
            model_line = ln;
        } else {
            if (!strchr(arg, '=') || *arg == '=')
                vla_cli_die(spec, "--stream: %s:%d: set '%s' is not NAME=VALUE", path, ln, arg);
            if (c->nsets == VLA_CLI_MAXSETS)
                vla_cli_die(spec, "--stream: %s:%d: more than %d settings", path, ln,
                            VLA_CLI_MAXSETS);
            lines[c->nsets] = ln;
            c->sets[c->nsets++] = arg;
        }
    }
    if (!model_line)
        vla_cli_die(spec, "--stream: %s: no line 'model NAME' (the model that made the trace: %s)",
                    path, vla_names(VLA_LIST_MODEL));
    vla_config probe;
    vla_config_default(&probe, c->txt_model, d);
    for (int i = 0; i < c->nsets; i++) {
        char key[64];
        const char *eq = strchr(c->sets[i], '=');
        vla_error why;
        snprintf(key, sizeof key, "%.*s", (int)(eq - c->sets[i]), c->sets[i]);
        e = vla_config_set_why(&probe, key, eq + 1, &why);
        if (e)
            vla_cli_die(spec, "--stream: %s:%d: set %s: '%s' %s", path, lines[i], c->sets[i],
                        e == VLA_EINVAL ? key : eq + 1, vla_error_msg(&why));
        if (vla_config_check_why(&probe, &why))
            vla_cli_die(spec, "--stream: %s:%d: set %s: %s", path, lines[i], c->sets[i],
                        vla_error_msg(&why));
    }
    c->model_txt = path;
}

const char *vla_cli_model_src(const vla_cli *c, const char *how, int header)
{
    static char buf[4800];
    int n;
    how = how ? how : c->model_opt ? "--model" : NULL;
    if (!header && how && !c->model_txt)
        return "";
    if (how && c->model_txt)
        n = snprintf(buf, sizeof buf, " (%s; %s names %s", how, c->model_txt,
                     vla_model_name(c->txt_model));
    else if (how)
        n = snprintf(buf, sizeof buf, " (%s", how);
    else if (c->model_txt)
        n = snprintf(buf, sizeof buf, " (from %s", c->model_txt);
    else
        n = snprintf(buf, sizeof buf, " (the program's default%s",
                     strncmp(c->stream, "trace:", 6) ? "" : ": the trace has no model.txt");
    for (int i = 0; header && i < c->nsets && n < (int)sizeof buf; i++)
        n += snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : ", whose settings come before "
                      "--set's: ", c->sets[i]);
    if (n < (int)sizeof buf)
        snprintf(buf + n, sizeof buf - n, ")");
    return buf;
}

/* what the first pass over the options finds: the model and d, which set the defaults that the
 * other options then change, and the stream */
typedef struct {
    vla_model_kind mk;
    int d, d_set;
    const char *stream;
} first_pass;

/* the first pass: --help, --man and --version answered (they exit), --model, --d and --stream
 * read */
static first_pass parse_first(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv)
{
    first_pass f = {spec->default_model, 32, 0, spec->default_stream};
    for (int i = 1; i < argc; i++) {
        vla_doc doc;
        char defaults[300];
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "--man"))
            cli_doc(spec, &doc, defaults, sizeof defaults);
        if (!strcmp(argv[i], "--help"))
            vla_doc_help(&doc);
        if (!strcmp(argv[i], "--version")) {
            printf("%s (vlastab) %s\n", spec->prog, VLA_VERSION);
            exit(0);
        }
        if (!strcmp(argv[i], "--man"))
            vla_doc_man(&doc);
        if (i + 1 < argc && !strcmp(argv[i], "--model") && vla_model_parse(argv[i + 1], &f.mk))
            vla_cli_die(spec, "--model: unknown model '%s' (%s)", argv[i + 1],
                        vla_names(VLA_LIST_MODEL));
        c->model_opt |= i + 1 < argc && !strcmp(argv[i], "--model");
        if (i + 1 < argc && !strcmp(argv[i], "--d"))
            f.d = (int)parse_long(spec, "d", argv[i + 1], VLA_D_MIN, VLA_D_MAX), f.d_set = 1;
        if (i + 1 < argc && !strcmp(argv[i], "--stream"))
            f.stream = argv[i + 1];
    }
    return f;
}

/* the environment's words, which lib reads without a way to refuse: another is no default */
static void check_env_words(const vla_cli_spec *spec)
{
    static const char *const env_words[][3] = {{"VLA_SIMD", "avx2", "off"},
                                               {"VLA_LANES", "avx2", NULL}};
    for (size_t i = 0; i < sizeof env_words / sizeof env_words[0]; i++) {
        const char *e = getenv(env_words[i][0]);
        if (e && *e && strcmp(e, env_words[i][1]) &&
            (!env_words[i][2] || strcmp(e, env_words[i][2])))
            vla_cli_die(spec, "%s='%s' is not %s%s%s (unset: the widest the processor has)",
                        env_words[i][0], e, env_words[i][1], env_words[i][2] ? " or " : "",
                        env_words[i][2] ? env_words[i][2] : "");
    }
}

/* the common options given, of those that have a default (dv, steps, runs) */
typedef struct {
    int dv, steps, runs;
} given_t;

/* --set NAME=VALUE into c's configuration, checked */
static void parse_set(vla_cli *c, const vla_cli_spec *spec, const char *v)
{
    char key[64];
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || (size_t)(eq - v) >= sizeof key)
        vla_cli_die(spec, "--set: '%s' is not NAME=VALUE", v);
    memcpy(key, v, eq - v);
    key[eq - v] = 0;
    vla_error why;
    int e = vla_config_set_why(&c->cfg, key, eq + 1, &why);
    if (e)
        vla_cli_die(spec, "--set %s: '%s' %s", v, e == VLA_EINVAL ? key : eq + 1,
                    vla_error_msg(&why));
    if (!strcmp(key, "gamma") && !(c->cfg.gamma > 0 && c->cfg.gamma <= 1))
        vla_cli_die(spec, "--set %s: gamma, the forgetting factor of M, is in (0, 1]", v);
}

/* the ways of the model's configuration: --track, --precision, --form, --mode, --set; 0, or 1
 * when name is none of them */
static int parse_config_opt(vla_cli *c, const vla_cli_spec *spec, const char *name, const char *v)
{
    if (!strcmp(name, "track")) {
        int r = vla_track_set(&c->cfg, v);
        if (r == VLA_ERANGE)
            vla_cli_die(spec, "--track %s: K is an integer in 1..%d (cg also takes a tolerance "
                        "in (0, 1))", v, VLA_SOLVE_KMAX);
        if (r)
            vla_cli_die(spec, "--track: unknown way '%s' (%s; cg:K, cg:TOL, cheb:K)", v,
                        vla_names(VLA_LIST_TRACK));
    } else if (!strcmp(name, "precision")) {
        if (vla_prec_parse(v, &c->cfg.prec))
            vla_cli_die(spec, "--precision: unknown '%s' (%s)", v, vla_names(VLA_LIST_PREC));
    } else if (!strcmp(name, "form")) {
        int e = vla_form_parse(&c->cfg, v);
        if (e == VLA_ERANGE)
            vla_cli_die(spec, "--form %s: C must be a power of two in 1..%d", v, VLA_CHUNK_MAX);
        if (e)
            vla_cli_die(spec, "--form: '%s' is not seq, chunk:C or scan", v);
    } else if (!strcmp(name, "mode")) {
        if (!strcmp(v, "strict"))
            c->cfg.mode = VLA_STRICT;
        else if (!strcmp(v, "fast"))
            c->cfg.mode = VLA_FAST;
        else
            vla_cli_die(spec, "--mode: '%s' is neither strict nor fast", v);
    } else if (!strcmp(name, "set")) {
        parse_set(c, spec, v);
    } else {
        return 1;
    }
    return 0;
}

/* one common option, name (without its --) with its value v (NULL: it takes none) */
static void parse_common(vla_cli *c, const vla_cli_spec *spec, const char *name, const char *v,
                         given_t *given)
{
    if (!strcmp(name, "model") || !strcmp(name, "d") || !parse_config_opt(c, spec, name, v))
        return; /* (--model and --d: the first pass's) */
    if (!strcmp(name, "dv")) {
        c->cfg.dv = (int)parse_long(spec, "dv", v, VLA_D_MIN, VLA_D_MAX);
        given->dv = 1;
    } else if (!strcmp(name, "steps")) {
        c->steps = parse_long(spec, "steps", v, 1, 1000000000L);
        given->steps = 1;
    } else if (!strcmp(name, "runs")) {
        c->runs = (int)parse_long(spec, "runs", v, 1, 100000);
        given->runs = 1;
    } else if (!strcmp(name, "seed")) {
        c->seed = (uint64_t)parse_long(spec, "seed", v, 0, 1L << 53);
    } else if (!strcmp(name, "stream")) {
        c->stream = v;
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
        char names[100];
        if (!vla_backend_named(v))
            vla_cli_die(spec, "--backend: '%s' is not %s", v, vla_backend_names(names, sizeof names));
        c->backend = v;
    } else if (!strcmp(name, "checkpoints")) {
        c->per_decade = (int)parse_long(spec, "checkpoints", v, 1, 1000);
    } else if (!strcmp(name, "out")) {
        if (!*v)
            vla_cli_die(spec, "--out: an empty name (a file, or - for standard output)");
        c->out = v;
    } else if (!strcmp(name, "resume")) {
        c->resume = 1;
    }
}

/* the second pass: every option, the program's own (its on_opt) and the common ones, in order */
static given_t parse_options(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv)
{
    given_t given = {0, 0, 0};
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
        for (const vla_cli_opt *o = vla_cli_common(); !known && o->name; o++)
            if (!strcmp(o->name, name)) {
                known = 1;
                takes = o->arg != NULL;
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
        } else {
            parse_common(c, spec, name, v, &given);
        }
    }
    return given;
}

/* the configuration checked: valid, and (unless a program of several models checks each model's
 * itself: the return, per_model) its gamma, way of tracking and form the model's; form: its name */
static int check_config(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv, char *form,
                        size_t len)
{
    vla_error why;
    if (vla_config_check_why(&c->cfg, &why))
        vla_cli_die(spec, "the model configuration is not valid: %s", vla_error_msg(&why));
    /* A program of several models (--models) builds and checks a configuration per model, and
     * names the one that fails; the default model's must not stand in for them (vla-scaling --models
     * la must not hear "--form chunk:256 with --model vla3") */
    int has_models = 0, models_given = 0;
    for (const vla_cli_opt *o = spec->opts; o && o->name; o++)
        has_models |= !strcmp(o->name, "models");
    for (int i = 1; i < argc; i++)
        models_given |= !strcmp(argv[i], "--models");
    const int per_model = has_models && models_given && !c->model_opt;
    if (per_model)
        ; /* (the model-dependent checks below are the program's) */
    else if (c->cfg.gamma != 1 && !vla_model_has_A(c->cfg.model))
        vla_cli_die(spec, "--set gamma=%g: %s%s has no A, so no M = A^-1 to forget in (%s)",
                    c->cfg.gamma, vla_model_name(c->cfg.model), vla_cli_model_src(c, NULL, 0),
                    vla_cli_models_with_A());
    else if (vla_track_check(&c->cfg, &why)) {
        char way[48];
        vla_track_spec(&c->cfg, way, sizeof way);
        vla_cli_die(spec, "--track %s: %s", way, vla_error_msg(&why));
    }
    vla_form_name(&c->cfg, form, len);
    if (!per_model && vla_form_check(&c->cfg, &why))
        vla_cli_die(spec, "--form %s with --model %s%s: %s", form, vla_model_name(c->cfg.model),
                    vla_cli_model_src(c, NULL, 0), vla_error_msg(&why));
    return per_model;
}

/* the stream must parse: fail now, not in a worker thread. A trace: its shapes first, then the
 * values of the heads and steps the runs take, and no others (--steps 10 reads 10 steps); a
 * trace's heads and steps are the runs' unless --runs and --steps say fewer */
static void check_stream(vla_cli *c, const vla_cli_spec *spec, const given_t *given)
{
    vla_stream *s;
    vla_error err;
    if (vla_stream_open_part(&s, c->stream, c->cfg.d, c->cfg.dv, c->seed, 0, 0, 0, &err))
        vla_cli_die(spec, "--stream: %s", vla_error_msg(&err));
    long heads = vla_stream_heads(s), len = vla_stream_length(s);
    c->optional = vla_stream_optional(s);
    const long *cu;
    if ((c->nseq = vla_stream_seqs(s, &cu)) && !spec->packed)
        vla_cli_die(spec, "--stream %s: the trace packs %ld sequences (cu_seqlens.npy), at whose "
                    "starts %s restarts no run: vla-check judges packed traces", c->stream,
                    c->nseq, spec->prog);
    if (c->nseq && !(c->cu = malloc((c->nseq + 1) * sizeof *c->cu)))
        vla_cli_die(spec, "out of memory");
    if (c->nseq)
        memcpy(c->cu, cu, (c->nseq + 1) * sizeof *c->cu);
    const int logits = vla_stream_logits(s);
    vla_stream_close(s);
    if (logits && !(c->cfg.gate_map == VLA_GATE_SIGMOID && c->cfg.gate_lb < 0))
        vla_cli_die(spec, "--stream %s draws the log-gates as logits of either sign (a positive "
                    "log-gate is a growth): set gate_map=sigmoid and gate_lb < 0, which map them "
                    "to lb sigmoid(x)", c->stream);
    if (heads > 0 && c->runs > heads)
        vla_cli_die(spec, "--runs %d: the trace has only %ld heads", c->runs, heads);
    if (heads > 0 && !given->runs) /* a trace: every head and every step unless told otherwise */
        c->runs = (int)(heads < 100000 ? heads : 100000);
    if ((len > 0 && c->steps > len) || (heads > 0 && !given->steps))
        c->steps = len; /* a finite stream bounds the horizon */
    if (heads > 0) {
        if (vla_stream_open_part(&s, c->stream, c->cfg.d, c->cfg.dv, c->seed, 0, c->runs, c->steps,
                                 &err))
            vla_cli_die(spec, "--stream: %s", vla_error_msg(&err));
        vla_stream_close(s);
    }
}

/* a configuration the backend or the reference cannot run is the user's choice, not a failure:
 * said now, before any table is opened */
static void probe_engines(const vla_cli *c, const vla_cli_spec *spec, int per_model)
{
    vla_engine_spec sp, rs;
    vla_engine *probe;
    vla_cli_engine_spec(c, &c->cfg, &sp);
    sp.runs = 1;
    if (per_model) { /* the backend and the reference, whatever the form does to each model */
        sp.cfg.form = VLA_FORM_SEQ;
        sp.cfg.chunk = 0;
    }
    vla_error ew;
    if (vla_engine_new(&probe, &sp, &ew))
        vla_cli_die(spec, "--backend %s: %s", c->backend, vla_error_msg(&ew));
    vla_engine_free(probe);
    if (vla_cli_ref_spec(c, &sp, &rs) == 0) {
        if (vla_engine_new(&probe, &rs, &ew))
            vla_cli_die(spec, "--ref %s with --track %s: %s", c->ref == REF_EXACT ? "exact" : "f64",
                        vla_track_name(c->cfg.track), vla_error_msg(&ew));
        vla_engine_free(probe);
    }
}

void vla_cli_parse(vla_cli *c, const vla_cli_spec *spec, int argc, char **argv)
{
    vla_file_limits(); /* a write past ulimit -f is an error said, not a silent death */
    memset(c, 0, sizeof *c);
    c->argc = argc;
    c->argv = argv;
    c->many_models = spec->many_models;
    first_pass f = parse_first(c, spec, argc, argv);
    int dv_trace = 0;
    check_env_words(spec);
    /* a trace's head sizes are its files': q.npy's last dimension is d, v.npy's dv */
    if (!f.d_set && !strncmp(f.stream, "trace:", 6)) {
        f.d = trace_dim(f.stream + 6, "q.npy", f.d);
        dv_trace = trace_dim(f.stream + 6, "v.npy", 0);
    }
    /* a trace's model.txt names the model unless --model does, and its settings come first */
    if (!strncmp(f.stream, "trace:", 6))
        read_model_txt(c, spec, f.stream + 6, f.d);
    if (c->model_txt && !c->model_opt)
        f.mk = c->txt_model;
    vla_config_default(&c->cfg, f.mk, f.d);
    for (int i = 0; i < c->nsets; i++) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(c->sets[i], "="), c->sets[i]);
        vla_config_set(&c->cfg, key, strchr(c->sets[i], '=') + 1); /* (checked on reading) */
    }
    c->stream = spec->default_stream;
    c->steps = spec->default_steps;
    c->runs = 1;
    c->seed = 1;
    c->out = "-";
    c->per_decade = 10;
    c->backend = "cpu";
    c->ref = spec->default_ref;
    c->ref_bits = VREF_DEFAULT_BITS;
    const given_t given = parse_options(c, spec, argc, argv);
    if (!given.dv)
        c->cfg.dv = dv_trace ? dv_trace : c->cfg.d;
    char form[32];
    const int per_model = check_config(c, spec, argc, argv, form, sizeof form);
    struct stat st;
    if (c->resume && (!strcmp(c->out, "-") || (stat(c->out, &st) == 0 && !S_ISREG(st.st_mode))))
        vla_cli_die(spec, "--resume needs --out FILE, a regular file (the checkpoints live beside "
                          "it)");
    check_stream(c, spec, &given);
    vla_cli_form_fits(c, spec, form, per_model);
    vla_error gw;
    if (!per_model && vla_cli_gates_check(c, &c->cfg, &gw))
        vla_cli_die(spec, "--model %s%s: %s", vla_model_name(c->cfg.model),
                    vla_cli_model_src(c, NULL, 0), vla_error_msg(&gw));
    /* a --set that the run does not read is refused; a program of several models,
     * forms or ways of tracking checks its list itself */
    int many = 0;
    for (const vla_cli_opt *o = spec->opts; o && o->name; o++)
        many |= !strcmp(o->name, "models") || !strcmp(o->name, "forms") ||
                !strcmp(o->name, "tracks");
    if (!many)
        vla_cli_sets_read(c, spec, &c->cfg, 1);
    if (!spec->many_models)
        warn_unread(spec->prog, c);
    probe_engines(c, spec, per_model);
    /* from here on a signal is answered as the programs document it (exit 3, nothing half
     * written): each polls vla_cli_stop, or its engines stop on it */
    vla_cli_signals();
}

/* A trace's optional files (docs/trace.md), their bits in vla_stream_optional and what stands in
 * for an absent one */
static const struct vla_trace_file {
    unsigned bit;
    const char *file, *absent;
} trace_files[] = {{VLA_IN_U, "u.npy", "u = k"},
                   {VLA_IN_G, "g.npy", "g = 1"},
                   {VLA_IN_BETA, "beta.npy", "beta = the constant beta"},
                   {VLA_IN_DECAY, "decay.npy", "decay = 1"},
                   {VLA_IN_LOGDECAY, "logdecay.npy", "log-decay = 0"},
                   {VLA_IN_LOGDECAY_D, "logdecay.npy", "log-decay = 0"},
                   {VLA_IN_A, "a.npy", "a = 0"},
                   {VLA_IN_B, "b.npy", "b = 0"},
                   {VLA_IN_S0, "S0.npy", "S_0 = 0"},
                   {VLA_IN_CU, "cu_seqlens.npy", "one sequence"}};
#define NTRACE_FILES (sizeof trace_files / sizeof trace_files[0])

/* the models that read the trace's file bit, in words ("vla1 and vla3", "delta with --set
 * delta_form=decay"): each model's reads column under each delta_form (the one setting it
 * depends on) */
static void readers(unsigned bit, char *buf, size_t len)
{
    int n = 0, k = 0;
    buf[0] = 0;
    for (int m = 0; m < VLA_NMODEL; m++) {
        vla_config g;
        vla_config_default(&g, (vla_model_kind)m, 4);
        g.delta_form = VLA_DELTA_GATED;
        const int gated = (vla_model_reads(&g) & bit) != 0;
        g.delta_form = VLA_DELTA_DECAY;
        const int decay = (vla_model_reads(&g) & bit) != 0;
        if ((gated || decay) && k < (int)len)
            k += snprintf(buf + k, len - k, "%s%s%s", n++ ? ", " : "", vla_model_name(g.model),
                          gated == decay ? "" : gated ? " (delta_form=gated)"
                                                      : " with --set delta_form=decay");
    }
    char *last = strrchr(buf, ',');
    if (last && n >= 2 && strlen(buf) + 4 < len) { /* "a and b", "a, b and c" */
        memmove(last + 4, last + 1, strlen(last + 1) + 1);
        memcpy(last, " and", 4);
    }
}

int vla_cli_unread(const vla_cli *c, const vla_config *g, char *buf, size_t len)
{
    const struct vla_trace_file *f = trace_files;
    const unsigned reads = vla_model_reads(g);
    vla_config other = *g; /* a model whose reads depend on delta_form (delta) says which */
    other.delta_form = g->delta_form == VLA_DELTA_DECAY ? VLA_DELTA_GATED : VLA_DELTA_DECAY;
    const int delta = vla_model_reads(&other) != reads;
    int n = 0, k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NTRACE_FILES; i++)
        if ((c->optional & f[i].bit) && !(reads & f[i].bit) && !(f[i].bit & (VLA_IN_S0 | VLA_IN_CU)) &&
            k < (int)len) { /* (S0.npy, cu_seqlens.npy: refused where not
                                 * taken, vla_cli_gates_check) */
            char who[200];
            readers(f[i].bit, who, sizeof who);
            n++, k += snprintf(buf + k, len - k, "%s%s is not read by --model %s%s (only by %s)",
                               n > 1 ? "; " : "", f[i].file, vla_model_name(g->model),
                               !delta ? "" : g->delta_form == VLA_DELTA_DECAY
                                                 ? " with delta_form=decay"
                                                 : " with delta_form=gated", who);
        }
    return n;
}

void vla_cli_sets_read(const vla_cli *c, const vla_cli_spec *spec, const vla_config *cfgs, int n)
{
    for (int i = 1; i + 1 < c->argc; i++) {
        if (strcmp(c->argv[i], "--set"))
            continue;
        const char *v = c->argv[++i];
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(v, "="), v);
        vla_error why;
        int read = 0;
        for (int j = 0; j < n && !read; j++)
            read = vla_setting_read(&cfgs[j], key, j ? NULL : &why) == VLA_OK;
        if (!read && n == 1)
            vla_cli_die(spec, "--set %s: %s", v, vla_error_msg(&why));
        if (!read)
            vla_cli_die(spec, "--set %s: none of the %d configurations run reads it (the first: "
                              "%s)", v, n, vla_error_msg(&why));
    }
}

/* A trace's file that the model does not read is a warning, not silence (docs/trace.md), and a
 * line of the table's header (vla_cli_provenance) */
static void warn_unread(const char *prog, const vla_cli *c)
{
    char text[600];
    if (vla_cli_unread(c, &c->cfg, text, sizeof text))
        fprintf(stderr, "%s: warning: %s\n", prog, text);
}

/* The trace's inputs that the run's models read (the model table's reads column): the one model
 * named (--model, model.txt), else, in a program that runs several, those of --models' list
 * (every model without one, or with all) */
static unsigned models_read(const vla_cli *c)
{
    if (!c->many_models || c->model_txt || c->model_opt)
        return vla_model_reads(&c->cfg);
    const char *list = NULL;
    for (int i = 1; i + 1 < c->argc; i++)
        if (!strcmp(c->argv[i], "--models"))
            list = c->argv[i + 1];
    unsigned reads = 0;
    for (int m = 0; m < VLA_NMODEL; m++) {
        const char *name = vla_model_name((vla_model_kind)m);
        const size_t n = strlen(name);
        int in = !list || !strcmp(list, "all");
        for (const char *p = list; !in && p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
            in = !strncmp(p, name, n) && (p[n] == ',' || !p[n]);
        if (in) {
            vla_config g;
            vla_cli_config_for(c, (vla_model_kind)m, &g);
            reads |= vla_model_reads(&g);
        }
    }
    return reads;
}

void vla_cli_stream_files(const vla_cli *c, char *buf, size_t len)
{
    if (strncmp(c->stream, "trace:", 6)) {
        snprintf(buf, len, "none (the synthetic stream %s)", c->stream);
        return;
    }
    /* the files present, and the fallback of each absent file that a model of the run reads */
    const unsigned reads = models_read(c), ld = VLA_IN_LOGDECAY | VLA_IN_LOGDECAY_D;
    int n = snprintf(buf, len, "q.npy k.npy v.npy");
    for (size_t i = 0; i < NTRACE_FILES && n < (int)len; i++)
        if (c->optional & trace_files[i].bit && (trace_files[i].bit != VLA_IN_LOGDECAY_D ||
                                                 !(c->optional & VLA_IN_LOGDECAY)))
            n += snprintf(buf + n, len - n, " %s", trace_files[i].file);
    for (size_t i = 0, k = 0; i < NTRACE_FILES && n < (int)len; i++) {
        const unsigned bit = trace_files[i].bit;
        if (c->optional & (bit & ld ? ld : bit) || bit == VLA_IN_LOGDECAY_D || !(reads & bit))
            continue;
        n += snprintf(buf + n, len - n, "%s%s (no %s)", k++ ? ", " : "; fallbacks: ",
                      trace_files[i].absent, trace_files[i].file);
    }
}

void vla_cli_config_for(const vla_cli *c, vla_model_kind mk, vla_config *cfg)
{
    vla_config_default(cfg, mk, c->cfg.d);
    cfg->dv = c->cfg.dv;
    cfg->prec = c->cfg.prec;
    cfg->mode = c->cfg.mode;
    cfg->track = c->cfg.track;
    cfg->form = c->cfg.form;
    cfg->chunk = c->cfg.chunk;
    for (int i = 0; i < c->nsets; i++) { /* the trace's model.txt's, checked on reading */
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(c->sets[i], "="), c->sets[i]);
        vla_config_set(cfg, key, strchr(c->sets[i], '=') + 1);
    }
    for (int i = 1; i + 1 < c->argc; i++)
        if (!strcmp(c->argv[i], "--set")) {
            char key[64];
            const char *eq = strchr(c->argv[i + 1], '='); /* the parser checked the form */
            size_t kl = (size_t)(eq - c->argv[i + 1]);
            memcpy(key, c->argv[i + 1], kl);
            key[kl] = 0;
            vla_config_set(cfg, key, eq + 1);
        }
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
    static char buf[160];
    const char *solve = c->cfg.track == VLA_TRACK_CG || c->cfg.track == VLA_TRACK_CHEB
                            ? "; track solve, the answer the iteration approximates"
                            : "";
    if (c->ref == REF_EXACT)
        snprintf(buf, sizeof buf, "exact (MPFR, %ld bits%s)", c->ref_bits, solve);
    else if (c->ref == REF_F64)
        snprintf(buf, sizeof buf, "f64 (lib in binary64, strict%s)", solve);
    else
        snprintf(buf, sizeof buf, "none");
    return buf;
}

void vla_cli_provenance(vla_dat *f, const vla_cli *c)
{
    char desc[1024];
    vla_config_describe(&c->cfg, desc, sizeof desc);
    vla_dat_meta(f, "model", "%s%s", vla_model_name(c->cfg.model),
                 vla_cli_model_src(c, NULL, 1));
    vla_dat_meta(f, "config", "%s", desc);
    vla_dat_meta(f, "stream", "%s", c->stream);
    char files[300];
    vla_cli_stream_files(c, files, sizeof files);
    vla_dat_meta(f, "files", "%s", files);
    char unread[600];
    if (vla_cli_unread(c, &c->cfg, unread, sizeof unread))
        vla_dat_meta(f, "unread", "%s", unread);
    vla_dat_meta(f, "steps", "%ld", c->steps);
    if (c->cfg.form != VLA_FORM_SEQ) {
        char form[32];
        vla_form_name(&c->cfg, form, sizeof form);
        vla_dat_meta(f, "form", "%s%s", form,
                     vla_form_pending(&c->cfg, 1) ? " (the state exists at multiples of C: the "
                                                    "steps and the checkpoints are rounded down "
                                                    "to them)"
                                                  : "");
    }
    vla_dat_meta(f, "runs", "%d", c->runs);
    vla_dat_meta(f, "seed", "%llu", (unsigned long long)c->seed);
    vla_dat_meta(f, "backend", "%s", c->backend);
    vla_dat_meta(f, "reference", "%s", vla_ref_name(c));
    vla_dat_meta(f, "threads", "%d (the results do not depend on it)", vla_cli_threads());
}

int vla_cli_is_input(const vla_cli *c, const char *path, char *which, size_t len)
{
    struct stat out, in;
    if (strncmp(c->stream, "trace:", 6) || stat(path, &out) != 0)
        return 0; /* (a file that is not there yet is no input) */
    for (size_t i = 0; i < 4 + NTRACE_FILES; i++) {
        snprintf(which, len, "%s/%s", c->stream + 6,
                 i < 4 ? (const char *[]){"q.npy", "k.npy", "v.npy", "model.txt"}[i]
                       : trace_files[i - 4].file);
        if (stat(which, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return 1;
    }
    return 0;
}

/* The table a program has open: a program that exits without closing it (a usage error found
 * after it was opened, an exit on a failure) leaves nothing behind. */
static vla_dat *open_table;
static void discard_open_table(void)
{
    vla_dat_discard(open_table);
    open_table = NULL;
}

vla_dat *vla_cli_out(const vla_cli *c, const vla_cli_spec *spec)
{
    static int registered;
    vla_cli_signals();
    char in[4200];
    if (strcmp(c->out, "-") && vla_cli_is_input(c, c->out, in, sizeof in))
        vla_cli_die(spec, "--out %s: it is the input %s; a table never replaces its inputs", c->out,
                    in);
    vla_dat *out;
    if (vla_dat_open(&out, c->out, c->argc, c->argv) == 0) {
        if (!registered++)
            atexit(discard_open_table);
        return open_table = out;
    }
    int errnum = errno;
    struct stat st;
    if (errnum == EINTR && vla_cli_stop) { /* a FIFO with no reader yet, waited on */
        fprintf(stderr, "%s: interrupted (signal %d) while opening %s; nothing written\n",
                spec->prog, (int)vla_cli_stop, c->out);
        exit(3);
    }
    if (stat(c->out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) &&
        !S_ISFIFO(st.st_mode))
        fprintf(stderr, "%s: cannot write %s: it is %s (a table goes to a regular file, a pipe or "
                        "a terminal)\n", spec->prog, c->out, vla_file_kind(st.st_mode));
    else
        fprintf(stderr, "%s: cannot write %s: %s\n", spec->prog, c->out, strerror(errnum));
    exit(1);
}

int vla_cli_close(vla_dat *out, const vla_cli *c, const vla_cli_spec *spec, int status)
{
    if (out == open_table)
        open_table = NULL;
    if (status) { /* a failed or interrupted program writes no table, whole or not */
        vla_dat_discard(out);
        return status;
    }
    int e = vla_dat_close(out);
    if (!status && e) {
        fprintf(stderr, "%s: writing %s failed: %s\n", spec->prog, c->out, strerror(errno));
        status = 1;
    }
    return status;
}

/* ---- engines ---- */

void vla_cli_engine_spec(const vla_cli *c, const vla_config *cfg, vla_engine_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->backend = vla_backend_named(c->backend);
    sp->cfg = *cfg;
    sp->runs = c->runs;
    sp->stream = c->stream;
    sp->seed = c->seed;
    sp->round_inputs = VLA_FMT_F64;
    sp->stop = &vla_cli_stop;
}

int vla_cli_ref_spec(const vla_cli *c, const vla_engine_spec *sp, vla_engine_spec *ref)
{
    if (c->ref == REF_NONE)
        return 1;
    *ref = *sp;
    ref->round_S0 = vla_prec_storage(sp->cfg.prec); /* the run's S_0, as its inputs below */
    ref->on_step = NULL;
    ref->taps = 0;
    ref->cfg.form = VLA_FORM_SEQ; /* the recurrence as defined: a form's error includes its own */
    ref->cfg.chunk = 0;
    ref->cfg.cache = VLA_CACHE_OFF; /* and decoding's roundings their own */
    ref->cfg.cache_rows = 0;
    ref->cfg.cache_round = VLA_CROUND_RN;
    ref->cfg.decay_bf16 = ref->cfg.beta_bf16 = 0;
    /* an iteration's reference is the exact answer it approximates: M y = x solved */
    if (ref->cfg.track == VLA_TRACK_CG || ref->cfg.track == VLA_TRACK_CHEB)
        ref->cfg.track = VLA_TRACK_SOLVE;
    if (c->ref == REF_EXACT) {
        ref->backend = vref_backend_exact();
        ref->ref_bits = c->ref_bits;
        return 0;
    }
    ref->cfg.prec = VLA_F64;
    ref->cfg.mode = VLA_STRICT;
    if (ref->cfg.track == VLA_TRACK_SR || ref->cfg.track == VLA_TRACK_COMP) /* no f64 twin: */
        ref->cfg.track = VLA_TRACK_SM;                                    /* the textbook update */
    /* the reference takes the same inputs as the run: rounded to its storage format */
    ref->round_inputs = vla_prec_io(sp->cfg.prec);
    vla_engine_spec one = *ref;
    vla_engine *probe;
    one.runs = 1;
    if (vla_engine_new(&probe, &one, NULL))
        ref->backend = vla_backend_cpu(); /* the run's backend cannot: binary64 on the CPU */
    else
        vla_engine_free(probe);
    return 0;
}

int vla_cli_window_input(void *ctx, long t, vla_input *in)
{
    vla_cli_window *w = ctx;
    if (vla_cli_stop)
        return VLA_EINTR;
    if (t < w->t0 || t >= w->t0 + w->n) {
        const long K = w->x.T, t0 = t / K * K, t1 = t0 + K < w->T ? t0 + K : w->T;
        int e = vla_inputs_fill(&w->x, t0, t1, &w->err);
        w->t0 = t0, w->n = e ? 0 : t1 - t0;
        if (e)
            return e;
    }
    *in = w->x.in[t % w->x.T];
    return VLA_OK;
}
