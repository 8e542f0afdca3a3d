/* vla-recall: memory-level associative recall (docs/math.md section 7.6, stream mqar:N,G of
 * section 8.6, claim 4 of section 10): write n key-value pairs and G distractors, read every key
 * back, and report how often the read-out's nearest stored value is the right one, against n and
 * G. The scoring is lib's (vla_recall_run). */
#include "cli.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REC_COLUMNS "n gap acc read_err read_cos model features"
#define REC_NCOL 7
#define REC_N_MAX 100000L
#define REC_G_MAX 1000000000L
#define REC_LIST_MAX 64

typedef struct {
    const char *models, *n, *gap, *features;
} rec_opts;

static const vla_cli_spec *rec_spec;

/* a comma-separated list of integers in lo..hi (1e3 is accepted, as --steps accepts it) */
static int rec_parse_list(const char *opt, const char *s, long lo, long hi, long *out, int *count)
{
    char buf[1024];
    if (strlen(s) >= sizeof buf || !*s) {
        fprintf(stderr, "%s: --%s: '%s' is not a list of integers (try --help)\n", rec_spec->prog,
                opt, s);
        return 1;
    }
    strcpy(buf, s);
    int k = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        if ((next = strchr(tok, ',')))
            *next++ = 0;
        char *end;
        errno = 0;
        double x = strtod(tok, &end);
        if (end == tok || *end || errno || !(x >= lo && x <= hi) || x != floor(x)) {
            fprintf(stderr, "%s: --%s: '%s' is not an integer in %ld..%ld (try --help)\n",
                    rec_spec->prog, opt, tok, lo, hi);
            return 1;
        }
        if (k == REC_LIST_MAX) {
            fprintf(stderr, "%s: --%s: more than %d values (try --help)\n", rec_spec->prog, opt,
                    REC_LIST_MAX);
            return 1;
        }
        out[k++] = (long)x;
    }
    *count = k;
    return 0;
}

static int rec_on_opt(void *ctx, const char *name, const char *val)
{
    rec_opts *o = ctx;
    long tmp[REC_LIST_MAX];
    int k;
    if (!strcmp(name, "models"))
        o->models = val;
    else if (!strcmp(name, "features"))
        o->features = val;
    else if (!strcmp(name, "n")) {
        o->n = val;
        return rec_parse_list("n", val, 1, REC_N_MAX, tmp, &k);
    } else if (!strcmp(name, "gap")) {
        o->gap = val;
        return rec_parse_list("gap", val, 0, REC_G_MAX, tmp, &k);
    }
    return 0;
}


/* the command line: vla-recall's own options and its help */
static rec_opts opts = {NULL, "4,8,16,24,32,48,64", "0", NULL};
static const vla_cli_opt rec_own[] = {
    {"models", "LIST", "models to compare, comma-separated (default: every model, as --model "
                       "lists them)"},
    {"n", "LIST", "numbers of pairs written (default 4,8,16,24,32,48,64), each 1..100000"},
    {"gap", "LIST", "distractor pairs between the writes and the reads (default 0), 0..1e9"},
    {"features", "LIST", "own, id (identity in place of phi) or own,id (default; a lone "
                         "--set features=X means X)"},
    {NULL, NULL, NULL},
};
static const vla_cli_spec recall_spec = {
    .prog = "vla-recall",
    .summary =
        "Memory-level associative recall (docs/math.md section 7). Each run (head) writes n\n"
        "key-value pairs of the mqar:N,G stream (keys with N(0, 1/d) coordinates, values\n"
        "N(0, 1), u = k), then G distractor pairs, then reads every key back (a read-out with\n"
        "the query equal to the key, no write): 2n + G steps. A read is correct when its\n"
        "nearest stored value by cosine is the right one. For each model, feature map, n and\n"
        "G it reports the accuracy and the mean relative read error over --runs heads.\n"
        "Every model runs with its own feature map and with the identity (features=id): ELU+1\n"
        "of small raw keys makes all keys nearly parallel (cosine about 0.97 at d = 32), which\n"
        "no memory can undo; the identity isolates the memory. rls and vla1 apply no feature\n"
        "map, so for them the two agree. la and vla3 divide the read-out by n_t . phi(q)\n"
        "(floored), which rescales it: acc and read_cos do not see that, read_err does\n"
        "(--set normalize=off removes it). Claim 4: exact recall while n < d (n = 24,\n"
        "d = 32), DeltaNet 0.010 and la 0.074 at that load; recall held to length 512 at n = 8\n"
        "(--n 8 --gap 496). The results do not depend on the thread count. --stream, --steps,\n"
        "--ref and --checkpoints do not apply (the stream is mqar:N,G); --model M means\n"
        "--models M. Use --runs 64 or more for smooth curves. --resume: skips the rows\n"
        "(model, feature map, n, G) finished before the stop; the row in progress starts over.",
    .columns =
        "  n         pairs written\n"
        "  gap       distractor pairs between the writes and the reads\n"
        "  acc       fraction of the n * runs reads whose nearest stored value is right\n"
        "  read_err  mean over reads of ||o - v||_2 / ||v||_2 (v the value stored for the key)\n"
        "  read_cos  mean over reads of cos(o, v): 1 is a perfect read up to scale\n"
        "  model     the model (one block per model and features)\n"
        "  features  own (the model's feature map) or id (the identity)\n"
        "One block per (model, features), in the order of --models, then of --features; the\n"
        "header's '# block: I model=... features=...' lines name them. Rows: n, then gap.",
    .example = "vla-recall --models vla3,delta,la --n 8,24 --gap 0 --d 32 --runs 64\n"
               "vla-recall --runs 128 --n 8 --gap 0,16,48,112,240,496,1008\n"
               "vla-recall --models rls,vla3 --features id --precision bf16 --runs 64",
    .default_steps = 1,
    .default_stream = "mqar:8,0",
    .default_model = VLA_VLA3,
    .default_ref = REF_NONE,
    .many_models = 1,
    .opts = rec_own,
    .on_opt = rec_on_opt,
    .ctx = &opts,
};

/* what main's steps share: the command, the blocks (a model with a feature map), the rows' n and
 * gaps, the runs' results */
typedef struct {
    vla_cli c;
    long ns[REC_LIST_MAX], gs[REC_LIST_MAX];
    int nn, ng;
    vla_config cfgs[2 * REC_LIST_MAX];
    int nb;
    vla_dat *out;
    int runs;
    long njobs;      /* (block, n, gap): a row, and a unit of the checkpoint */
    vla_recall *res; /* njobs x runs */
    long nbad;       /* the runs whose read-out went non-finite */
} recall_t;

/* the options that do not apply refused; --model's and --set features='s values, before the
 * parser reads them */
static void early_args(int argc, char **argv, const char **model_opt, const char **set_features)
{
    for (int i = 1; i < argc; i++) {
        static const char *na[] = {"--stream", "--steps", "--ref", "--ref-bits", "--checkpoints"};
        for (size_t k = 0; k < sizeof na / sizeof na[0]; k++)
            if (!strcmp(argv[i], na[k]))
                vla_cli_die(&recall_spec, "%s does not apply: the stream is mqar:N,G from --n and "
                                          "--gap", na[k]);
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            *model_opt = argv[i + 1];
        if (!strcmp(argv[i], "--set") && i + 1 < argc && !strncmp(argv[i + 1], "features=", 9))
            *set_features = argv[i + 1] + 9;
    }
}

/* the blocks: every model with every feature map, each config built as the CLI built its own
 * (defaults of that model and d, then the common options, then every --set in order) */
static void make_blocks(recall_t *k, const char *models, const char *features)
{
    const vla_cli_spec *spec = &recall_spec;
    char list[1024], flist[64];
    if (strlen(models) >= sizeof list || strlen(features) >= sizeof flist)
        vla_cli_die(spec, "--models or --features: list too long");
    strcpy(list, models);
    for (char *mt = list, *mn; mt; mt = mn) {
        if ((mn = strchr(mt, ',')))
            *mn++ = 0;
        vla_model_kind mk;
        if (vla_model_parse(mt, &mk))
            vla_cli_die(spec, "--models: unknown model '%s' (%s)", mt, vla_names(VLA_LIST_MODEL));
        strcpy(flist, features);
        for (char *ft = flist, *fn; ft; ft = fn) {
            if ((fn = strchr(ft, ',')))
                *fn++ = 0;
            if (k->nb == 2 * REC_LIST_MAX)
                vla_cli_die(spec, "--models: more than %d blocks", 2 * REC_LIST_MAX);
            vla_config *cfg = &k->cfgs[k->nb++];
            vla_cli_config_for(&k->c, mk, cfg);
            if (vla_config_set(cfg, "features", ft))
                vla_cli_die(spec, "--features: '%s' is neither own nor id", ft);
            int r = vla_config_check(cfg);
            vla_model *probe = NULL;
            if (!r)
                r = vla_model_new(&probe, cfg); /* unsupported combinations fail here, not in a thread */
            vla_model_free(probe);
            if (r)
                vla_cli_die(spec, "model %s (%s, track %s): %s", mt, vla_prec_name(cfg->prec),
                            vla_track_name(cfg->track), vla_strerror(r));
            vla_error why;
            if (vla_form_check(cfg, &why) || vla_form_read_check(cfg, &why))
                vla_cli_die(spec, "--form with model %s: %s", mt, vla_error_msg(&why));
        }
    }
    vla_cli_sets_read(&k->c, spec, k->cfgs, k->nb); /* every --set read by one of the models */
}

/* one engine per (block, n, gap), its runs the heads, each job a unit of the checkpoint (read
 * back where saved): 0, or main's status after a stop or a failure */
static int run_jobs(recall_t *k)
{
    const int runs = k->runs;
    vla_units *u;
    int st = vla_units_open(&u, &k->c, &recall_spec, "row", NULL, (int)k->njobs,
                            runs * sizeof *k->res);
    if (st)
        return st;
    for (long jb = 0; jb < k->njobs; jb++) {
        int gi = (int)(jb % k->ng), ni = (int)(jb / k->ng % k->nn), bi = (int)(jb / k->ng / k->nn);
        vla_engine_spec sp;
        vla_error err = {VLA_ENOMEM, "out of memory"};
        const void *saved = vla_units_get(u, (int)jb, NULL);
        if (saved) {
            memcpy(k->res + jb * runs, saved, runs * sizeof *k->res);
            continue;
        }
        vla_cli_engine_spec(&k->c, &k->cfgs[bi], &sp);
        int e = vla_recall_run(&sp, k->ns[ni], k->gs[gi], k->res + jb * runs, &err);
        if (!e)
            e = vla_units_save(u, (int)jb, k->res + jb * runs, runs * sizeof *k->res);
        if (e) {
            if (e != VLA_EINTR)
                fprintf(stderr, "vla-recall: %s\n", vla_error_msg(&err));
            return vla_units_end(u, e == VLA_EINTR ? 3 : 1);
        }
    }
    vla_units_end(u, 0);
    return 0;
}

/* the header's lines on the stream, the runs and the blocks; a read-out that overflowed is a
 * result, but it must not pass unsaid: the first in job order (block, n, gap, head) is named */
static void table_meta(recall_t *k)
{
    const long nall = k->njobs * k->runs;
    vla_dat *out = k->out;
    vla_dat_meta(out, "stream", "mqar:N,G for N in {%s}, G in {%s}: 2N + G steps per run", opts.n,
                 opts.gap);
    vla_dat_meta(out, "runs", "%d", k->runs);
    vla_dat_meta(out, "seed", "%llu", (unsigned long long)k->c.seed);
    vla_dat_meta(out, "backend", "%s", k->c.backend);
    vla_dat_meta(out, "threads", "%d (the results do not depend on it)", vla_cli_threads());
    for (int bi = 0; bi < k->nb; bi++) {
        char desc[1024];
        vla_config_describe(&k->cfgs[bi], desc, sizeof desc);
        vla_dat_meta(out, "block", "%d model=%s features=%s", bi, vla_model_name(k->cfgs[bi].model),
                     k->cfgs[bi].features == VLA_FEAT_ID ? "id" : "own");
        vla_dat_meta(out, "config", "%s", desc);
    }
    long first = -1;
    for (long i = 0; i < nall; i++)
        if (k->res[i].nonfinite && k->nbad++ == 0)
            first = i;
    if (k->nbad) {
        long jb = first / k->runs;
        int gi = (int)(jb % k->ng), ni = (int)(jb / k->ng % k->nn), bi = (int)(jb / k->ng / k->nn);
        char where[200];
        snprintf(where, sizeof where, "block %d: model=%s features=%s, n = %ld, gap = %ld; "
                                      "checked at every read", bi, vla_model_name(k->cfgs[bi].model),
                 k->cfgs[bi].features == VLA_FEAT_ID ? "id" : "own", k->ns[ni], k->gs[gi]);
        vla_cli_nonfinite(out, recall_spec.prog, "the read-out of the model", k->nbad, nall,
                          (int)(first % k->runs), k->res[first].nonfinite, where,
                          "the rows of those runs' blocks carry inf or nan");
    }
}

/* the rows (nb x nn x ng x REC_NCOL): each (block, n, gap)'s runs summed in head order */
static void make_rows(const recall_t *k, double *rows)
{
    const int nn = k->nn, ng = k->ng;
    for (int bi = 0; bi < k->nb; bi++)
        for (int ni = 0; ni < nn; ni++)
            for (int gi = 0; gi < ng; gi++) {
                vla_recall sum = {0, 0, 0, 0, 0, 0};
                for (int h = 0; h < k->runs; h++) {
                    const vla_recall *r = &k->res[(((long)bi * nn + ni) * ng + gi) * k->runs + h];
                    sum.reads += r->reads;
                    sum.correct += r->correct;
                    sum.err_sum += r->err_sum;
                    sum.cos_sum += r->cos_sum;
                }
                double nr = (double)sum.reads;
                double row[REC_NCOL] = {(double)k->ns[ni], (double)k->gs[gi], sum.correct / nr,
                                        sum.err_sum / nr, sum.cos_sum / nr, 0, 0};
                memcpy(rows + (((size_t)bi * nn + ni) * ng + gi) * REC_NCOL, row, sizeof row);
            }
}

/* the summary in the header: the overflowed denominators, the non-finite read-outs, the rows'
 * errors (read_err past 1 is the model's recall, vla3 rescaling its read-out, not a failure: the
 * table shows it) */
static void summary(const recall_t *k, double *rows, vla_summary_block *blk, char (*bname)[48])
{
    const long nall = k->njobs * k->runs;
    vla_summary sm = {.len = 0};
    long nden = 0, dreads = 0;
    for (long i = 0; i < nall; i++)
        nden += k->res[i].den_inf > 0, dreads += k->res[i].den_inf;
    if (nden) /* a read-out 0 by an overflowed denominator: no warning has said it */
        vla_summary_add(&sm, 1, "the read-out's denominator overflowed at %ld read-outs of %ld of "
                        "%ld runs: there o = S x / Inf is exactly 0, or NaN", dreads, nden, nall);
    if (k->nbad) /* not loud: the warning above said it */
        vla_summary_add(&sm, 0, "the read-out is not finite in %ld of %ld runs", k->nbad, nall);
    else
        vla_summary_add(&sm, 0, "the read-out is finite at every read of all %ld runs", nall);
    for (int bi = 0; bi < k->nb; bi++) {
        snprintf(bname[bi], sizeof bname[bi], "block %d: %s features=%s", bi,
                 vla_model_name(k->cfgs[bi].model),
                 k->cfgs[bi].features == VLA_FEAT_ID ? "id" : "own");
        blk[bi] = (vla_summary_block){rows + (size_t)bi * k->nn * k->ng * REC_NCOL,
                                      (long)k->nn * k->ng, REC_NCOL, bname[bi]};
    }
    vla_summary_errors(&sm, REC_COLUMNS, blk, k->nb, VLA_SUM_NONFINITE);
    vla_cli_summary_end(&sm, recall_spec.prog, k->out);
}

/* the table's rows: one block per model and feature map */
static void write_rows(const recall_t *k, const double *rows)
{
    vla_dat_columns(k->out, REC_COLUMNS);
    for (int bi = 0; bi < k->nb; bi++) {
        if (bi)
            vla_dat_block(k->out);
        for (long i = 0; i < (long)k->nn * k->ng; i++) {
            const double *row = rows + ((size_t)bi * k->nn * k->ng + i) * REC_NCOL;
            const char *names[REC_NCOL] = {[5] = vla_model_name(k->cfgs[bi].model),
                                           [6] = k->cfgs[bi].features == VLA_FEAT_ID ? "id"
                                                                                      : "own"};
            vla_dat_row_named(k->out, row, names, REC_NCOL);
        }
    }
}

int main(int argc, char **argv)
{
    static recall_t k;
    const vla_cli_spec *spec = &recall_spec;
    rec_spec = spec;
    const char *model_opt = NULL, *set_features = NULL;
    early_args(argc, argv, &model_opt, &set_features);
    vla_cli *c = &k.c;
    vla_cli_parse(c, spec, argc, argv);
    if (model_opt && opts.models)
        vla_cli_die(spec, "--model and --models: give one of them");
    char every[256]; /* the default: every model of the library's list, in its order */
    for (int m = 0, n = 0; m < VLA_NMODEL; m++)
        n += snprintf(every + n, sizeof every - n, "%s%s", m ? "," : "",
                      vla_model_name((vla_model_kind)m));
    const char *models = opts.models ? opts.models : model_opt ? model_opt : every;
    if (set_features && opts.features)
        vla_cli_die(spec, "--set features=... and --features: give one of them");
    const char *features = opts.features ? opts.features : set_features ? set_features : "own,id";
    if (rec_parse_list("n", opts.n, 1, REC_N_MAX, k.ns, &k.nn) ||
        rec_parse_list("gap", opts.gap, 0, REC_G_MAX, k.gs, &k.ng))
        return 2;
    for (int i = 0; i < k.nn * k.ng; i++) /* the reads come after N + G writes */
        if (vla_form_pending(&c->cfg, k.ns[i / k.ng] + k.gs[i % k.ng]))
            vla_cli_die(spec, "--form chunk:%d: the reads of --n %ld --gap %ld follow %ld writes, "
                              "no multiple of C: a read inside a chunk has no state to read",
                        c->cfg.chunk, k.ns[i / k.ng], k.gs[i % k.ng],
                        k.ns[i / k.ng] + k.gs[i % k.ng]);
    make_blocks(&k, models, features);
    /* an unwritable output fails now, not after the work; a table closed without its columns
     * line is discarded */
    k.out = vla_cli_out(c, spec);
    k.runs = c->runs;
    k.njobs = (long)k.nb * k.nn * k.ng;
    k.res = calloc((size_t)k.njobs * k.runs, sizeof *k.res);
    if (!k.res) {
        fprintf(stderr, "vla-recall: out of memory\n");
        vla_cli_close(k.out, c, spec, 1);
        return 1;
    }
    int st = run_jobs(&k);
    if (st) {
        vla_cli_close(k.out, c, spec, st);
        free(k.res);
        return st;
    }
    table_meta(&k);
    /* the rows first, for the summary in the header */
    double *rows = calloc((size_t)k.nb * k.nn * k.ng * REC_NCOL, sizeof *rows);
    vla_summary_block *blk = calloc((size_t)k.nb, sizeof *blk);
    char (*bname)[48] = calloc((size_t)k.nb, sizeof *bname);
    const int ok = rows && blk && bname;
    if (ok) {
        make_rows(&k, rows);
        summary(&k, rows, blk, bname);
        write_rows(&k, rows);
    } else {
        fprintf(stderr, "vla-recall: out of memory\n");
        vla_cli_close(k.out, c, spec, 1);
    }
    free(rows);
    free(blk);
    free(bname);
    free(k.res);
    return ok ? vla_cli_close(k.out, c, spec, 0) : 1;
}
