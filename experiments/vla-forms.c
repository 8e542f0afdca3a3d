/* vla-forms: the chunk and scan forms against the recurrence they compute (docs/forms.md).
 * --what sweep: the error of S, A and o against the exact sequential reference for a list of
 * forms and precisions on the same inputs, every run against one 256-bit reference per input
 * format; --what ut: how the chunked delta rule's UT transform grows with the chunk size. */
#include "cli.h"
#include "vlaref.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define LMAX 16

typedef struct {
    const char *what;
    vla_config forms[LMAX];
    int nf;
    vla_prec precs[LMAX];
    int np;
    long Cs[LMAX];
    int nC;
    long samples, seeds;
    long prefix; /* causal, decode: P */
    double pad;  /* decode: the log-decay of the prefill's pad tokens */
    int padded;  /* ... given */
    long rejected, stale; /* decode: the handed state's rejected drafts, its missing tokens */
    long ranks[LMAX]; /* cp: the rank counts R */
    int nR;
    int sums[LMAX]; /* cp: the summaries' constructions (CP_TWO, CP_DIRECT) */
    int ns;
} forms_opts;

enum { CP_TWO, CP_DIRECT }; /* cp: A = (A + B) - B from two runs, or A from I with v = 0 */

/* A comma-separated list of at most LMAX items, each parsed by one(o, item, k, err): 0, or what is
 * wrong with the item in err; 1 after the message naming the item and what is wrong */
static int each_item(const char *opt, const char *val, int *n,
                     int (*one)(void *, const char *, int, vla_error *), void *o)
{
    char buf[512];
    if (strlen(val) >= sizeof buf)
        return fprintf(stderr, "vla-forms: --%s: list too long (try --help)\n", opt), 1;
    strcpy(buf, val);
    *n = 0;
    for (char *t = buf, *next; t; t = next) {
        if ((next = strchr(t, ',')))
            *next++ = 0;
        if (*n == LMAX)
            return fprintf(stderr, "vla-forms: --%s: more than %d items (try --help)\n", opt,
                           LMAX), 1;
        vla_error why;
        if (*t ? one(o, t, *n, &why)
               : vla_fail(&why, VLA_EINVAL, "is empty: a list like the help's has no empty item"))
            return fprintf(stderr, "vla-forms: --%s: '%s' %s (try --help)\n", opt, t,
                           vla_error_msg(&why)), 1;
        (*n)++;
    }
    return 0;
}

static int one_form(void *o, const char *t, int k, vla_error *err)
{
    int e = vla_form_parse(&((forms_opts *)o)->forms[k], t);
    return !e ? 0
           : vla_fail(err, e, "%s", e == VLA_ERANGE ? "is not chunk:C with C a power of two in 1..256"
                                                    : "is not a form (seq, chunk:C or scan)");
}
static int one_prec(void *o, const char *t, int k, vla_error *err)
{
    int e = vla_prec_parse(t, &((forms_opts *)o)->precs[k]);
    return e ? vla_fail(err, e, "is not a precision (%s)", vla_names(VLA_LIST_PREC)) : 0;
}
static int one_C(void *o, const char *t, int k, vla_error *err)
{
    char *end;
    errno = 0;
    long C = strtol(t, &end, 10);
    ((forms_opts *)o)->Cs[k] = C;
    return end == t || *end || errno || C < 2 || C > VLA_CHUNK_MAX
               ? vla_fail(err, VLA_EINVAL, "is not a chunk size, an integer in 2..256")
               : 0;
}

static int one_R(void *o, const char *t, int k, vla_error *err)
{
    char *end;
    errno = 0;
    long R = strtol(t, &end, 10);
    ((forms_opts *)o)->ranks[k] = R;
    return end == t || *end || errno || R < 1 || R > 4096
               ? vla_fail(err, VLA_EINVAL, "is not a rank count, an integer in 1..4096")
               : 0;
}
static int one_sum(void *o, const char *t, int k, vla_error *err)
{
    int *w = ((forms_opts *)o)->sums;
    w[k] = !strcmp(t, "two") ? CP_TWO : !strcmp(t, "direct") ? CP_DIRECT : -1;
    return w[k] < 0 ? vla_fail(err, VLA_EINVAL, "is not a summary's construction (two or direct)")
           : (k && w[k] == w[0]) || k > 1 ? vla_fail(err, VLA_EINVAL, "is named twice")
                                          : 0;
}

static int on_opt(void *ctx, const char *name, const char *val)
{
    forms_opts *o = ctx;
    if (!strcmp(name, "what")) {
        o->what = val;
        if (strcmp(val, "sweep") && strcmp(val, "ut") && strcmp(val, "causal") &&
            strcmp(val, "decode") && strcmp(val, "cp"))
            return fprintf(stderr, "vla-forms: --what: '%s' is not sweep, ut, causal, decode or "
                           "cp (try --help)\n", val), 1;
        return 0;
    }
    if (!strcmp(name, "pad")) {
        char *end;
        o->pad = strtod(val, &end);
        o->padded = 1;
        if (end == val || *end || !(o->pad <= 0) || !isfinite(o->pad))
            return fprintf(stderr, "vla-forms: --pad: '%s' is not a log-decay, a number <= 0 (try "
                           "--help)\n", val), 1;
        return 0;
    }
    if (!strcmp(name, "forms"))
        return each_item(name, val, &o->nf, one_form, o);
    if (!strcmp(name, "precisions"))
        return each_item(name, val, &o->np, one_prec, o);
    if (!strcmp(name, "Cs"))
        return each_item(name, val, &o->nC, one_C, o);
    if (!strcmp(name, "ranks"))
        return each_item(name, val, &o->nR, one_R, o);
    if (!strcmp(name, "summary"))
        return each_item(name, val, &o->ns, one_sum, o);
    char *end;
    errno = 0;
    long n = strtol(val, &end, 10), max = !strcmp(name, "seeds") ? 1000 : 100000;
    if (end == val || *end || errno || n < 1 || n > max)
        return fprintf(stderr, "vla-forms: --%s: '%s' is not an integer in 1..%ld (try --help)\n",
                       name, val, max), 1;
    *(!strcmp(name, "seeds")      ? &o->seeds
      : !strcmp(name, "prefix")   ? &o->prefix
      : !strcmp(name, "rejected") ? &o->rejected
      : !strcmp(name, "stale")    ? &o->stale
                                  : &o->samples) = n;
    return 0;
}

/* block i's configuration: precision i / nf, form i % nf of the lists (decode, causal and cp
 * order their blocks so) */
static vla_config block_config(const vla_cli *c, const forms_opts *o, int i)
{
    vla_config k = c->cfg;
    k.prec = o->precs[i / o->nf];
    k.form = o->forms[i % o->nf].form;
    k.chunk = o->forms[i % o->nf].chunk;
    return k;
}

/* the engine spec of configuration k over x's prepared inputs, steps 1..T from x's S0, and its
 * reference's (--ref exact or f64; --what WHAT measures against it) */
static void inputs_specs(const vla_cli *c, const vla_cli_spec *spec, const vla_config *k,
                         const vla_inputs *x, long T, const char *what, vla_engine_spec *sp,
                         vla_engine_spec *rs)
{
    vla_cli_engine_spec(c, k, sp);
    sp->stream = NULL;
    sp->in = x->in;
    sp->is_read = x->is_read;
    sp->T = T;
    sp->S0 = x->S0;
    if (vla_cli_ref_spec(c, sp, rs))
        vla_cli_die(spec, "--what %s measures against a reference: --ref exact or f64", what);
}

/* ---- sweep ---- */

#define WIN 256 /* steps per advance: the inputs of a window are drawn once for every engine */

/* the policy of one format whose inputs are rounded as p's are, the row of VLA_PRECS with
 * storage, compute and io p's io format: the exact reference of p; a format without such a row
 * is an error, never another format's reference */
static vla_prec uniform_of(const vla_cli_spec *spec, vla_prec p)
{
    const vla_fmt f = vla_prec_io(p);
#define VLA_X_(ID, name, sfx, S, C, IO, ...)                                                       \
    if (VLA_FMT_##S == f && VLA_FMT_##C == f && VLA_FMT_##IO == f)                                 \
        return VLA_##ID;
    VLA_PRECS(VLA_X_)
#undef VLA_X_
    vla_cli_die(spec, "%s: no precision computes in its io format, %s, alone (a row of "
                      "VLA_PRECS with storage, compute and io %s), which its exact reference "
                      "needs", vla_prec_name(p), vla_fmt_name(f), vla_fmt_name(f));
}

static double relerr(const double *x, const double *ref, long n)
{
    double e = vla_rel_fro(x, ref, n);
    return e <= 1e300 ? e : INFINITY; /* NaN and Inf alike: the run turned non-finite */
}

/* One pass of the sweep: its checkpoints, where every form has a state, and the engines of every
 * form and precision with their exact references (one per input format: in double-double with
 * its MPFR check, or in MPFR) on one ring of inputs */
typedef struct {
    int use_dd;
    char redo[400]; /* MPFR after the dd reference's check failed: the check's words, else "" */
    long T, Cmax, nck, cks[512];
    int ne; /* engines: precisions x forms */
    vla_config *cfg;
    vla_engine **m, *ref[VLA_NFMT];
    vref_ddcheck *chk[VLA_NFMT];
    vla_inputs in;
    double *err; /* [ne][nck][3]: the mean error of S, A and o over the heads at each checkpoint */
} sweep_pass;

static void sweep_close(sweep_pass *sw)
{
    for (int i = 0; sw->m && i < sw->ne; i++)
        vla_engine_free(sw->m[i]);
    for (int i = 0; i < VLA_NFMT; i++) {
        vla_engine_free(sw->ref[i]);
        vref_ddcheck_free(sw->chk[i]);
        sw->ref[i] = NULL;
        sw->chk[i] = NULL;
    }
    vla_inputs_free(&sw->in);
    free(sw->cfg);
    free(sw->m);
    free(sw->err);
    sw->cfg = NULL;
    sw->m = NULL;
    sw->err = NULL;
}

/* The checkpoints and the engines of a pass (use_dd: the dd reference), from step 0 */
static void sweep_open(vla_cli *c, const vla_cli_spec *spec, const forms_opts *o, sweep_pass *sw,
                       int use_dd)
{
    const int d = c->cfg.d, dv = c->cfg.dv, nr = c->runs, np = o->np, nf = o->nf;
    sw->use_dd = use_dd;
    sw->ne = np * nf;
    sw->Cmax = 1;
    for (int f = 0; f < nf; f++)
        sw->Cmax = o->forms[f].chunk > sw->Cmax ? o->forms[f].chunk : sw->Cmax;
    sw->T = c->steps / sw->Cmax * sw->Cmax;
    if (sw->T < 1)
        vla_cli_die(spec, "--steps %ld: less than the largest chunk, %ld", c->steps, sw->Cmax);
    vla_config big = c->cfg; /* the checkpoints where every form has a state */
    big.form = VLA_FORM_CHUNK;
    big.chunk = (int)sw->Cmax;
    sw->nck = vla_checkpoints_form(&big, sw->cks, vla_checkpoints(sw->T, c->per_decade, sw->cks, 512));
    sw->cfg = calloc((size_t)sw->ne, sizeof *sw->cfg);
    sw->m = calloc((size_t)sw->ne, sizeof *sw->m);
    sw->err = calloc((size_t)sw->ne * sw->nck * 3 + 1, sizeof *sw->err);
    if (!sw->cfg || !sw->m || !sw->err)
        vla_cli_fail(spec, "out of memory");
    vla_error e_msg;
    char form[32];
    /* the inputs, drawn (or read) once for every engine, a window of WIN steps at a time, which
     * the engines take as prepared inputs in a ring */
    vla_error ve;
    if (vla_inputs_open(&sw->in, c->stream, c->seed, d, dv, nr, WIN, sw->T,
                        vla_model_reads(&c->cfg), &ve))
        vla_cli_die(spec, "--stream: %s", vla_error_msg(&ve));
    for (int p = 0; p < np; p++)
        for (int f = 0; f < nf; f++) {
            vla_config *k = &sw->cfg[p * nf + f];
            vla_error why;
            *k = c->cfg;
            k->prec = o->precs[p];
            k->form = o->forms[f].form;
            k->chunk = o->forms[f].chunk;
            vla_form_name(k, form, sizeof form);
            if (vla_track_check(k, &why) || vla_form_check(k, &why))
                vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k->prec),
                            vla_error_msg(&why));
            vla_engine_spec sp;
            vla_cli_engine_spec(c, k, &sp);
            sp.stream = NULL;
            sp.in = sw->in.in;
            sp.S0 = sw->in.S0; /* the trace's initial states, or NULL */
            sp.is_read = sw->in.is_read;
            sp.T = sw->in.T; /* WIN, or a shorter stream's length */
            sp.cycle = 1; /* step t from slot (t - 1) % T of the window */
            sp.threads = 1; /* the engines run in parallel, each on one thread (the same bits) */
            if (vla_engine_new(&sw->m[p * nf + f], &sp, &e_msg))
                vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k->prec),
                            vla_error_msg(&e_msg));
            vla_fmt io = vla_prec_io(k->prec);
            if (!sw->ref[io]) {
                sp.cfg.prec = uniform_of(spec, k->prec);
                sp.cfg.track = VLA_TRACK_SM;
                sp.cfg.form = VLA_FORM_SEQ;
                sp.cfg.chunk = 0;
                sp.backend = use_dd ? vref_backend_dd() : vref_backend_exact();
                sp.ref_bits = c->ref_bits;
                if (vla_engine_new(&sw->ref[io], &sp, &e_msg) ||
                    (use_dd && vref_ddcheck_new(&sw->chk[io], &sp, VREF_DD_CHECK_STEPS, &e_msg)))
                    vla_cli_fail(spec, "the exact reference: %s", vla_error_msg(&e_msg));
            }
        }
}

/* A checkpoint k of the sweep as a unit of OUT.ckpt: k, the pass (use_dd, and redo's words),
 * whether the state follows, the errors of every engine at k; with state, every engine's runs'
 * states at cks[k], the references' and their checks'. The last checkpoint finished carries the
 * state, to go on from; those before it only their errors. */
static int unit_of(const sweep_pass *sw, long k, int state, char **buf, size_t *n)
{
    const long head[4] = {k, sw->use_dd, state, (long)strlen(sw->redo)};
    FILE *f = open_memstream(buf, n);
    if (!f)
        return VLA_ENOMEM;
    int ok = fwrite(head, sizeof head, 1, f) == 1 &&
             fwrite(sw->redo, 1, (size_t)head[3], f) == (size_t)head[3];
    for (int i = 0; ok && i < sw->ne; i++)
        ok = fwrite(sw->err + ((size_t)i * sw->nck + k) * 3, sizeof *sw->err, 3, f) == 3;
    for (int i = 0; ok && state && i < sw->ne + VLA_NFMT; i++) {
        vla_engine *e = i < sw->ne ? sw->m[i] : sw->ref[i - sw->ne];
        for (int h = 0; ok && e && h < vla_engine_runs(e); h++)
            ok = vla_engine_save(e, h, f) == 0;
        if (ok && i >= sw->ne && sw->chk[i - sw->ne])
            ok = vref_ddcheck_save(sw->chk[i - sw->ne], f) == 0;
    }
    ok = fclose(f) == 0 && ok;
    if (!ok)
        free(*buf);
    return ok ? VLA_OK : VLA_ENOMEM;
}

/* checkpoint k as a unit: with the state, saved (written when due); without, kept for the write
 * that the one with the state makes */
static void unit_save(const vla_cli_spec *spec, const sweep_pass *sw, vla_units *u, long k,
                      int state)
{
    char *rec;
    size_t n;
    if (unit_of(sw, k, state, &rec, &n))
        vla_cli_fail(spec, "out of memory");
    int r = state ? vla_units_save(u, (int)k, rec, n) : vla_units_keep(u, (int)k, rec, n);
    free(rec);
    if (r)
        vla_cli_fail(spec, "out of memory");
}

/* the most bytes a unit takes, in this pass or in MPFR after it (a reference's runs and its
 * check at most runs + 1 of the larger of the two numbers) */
static size_t unit_max(const sweep_pass *sw)
{
    size_t n = 4 * sizeof(long) + sizeof sw->redo + (size_t)sw->ne * 3 * sizeof(double);
    for (int i = 0; i < sw->ne; i++)
        n += (size_t)vla_engine_runs(sw->m[i]) * (size_t)vla_engine_save_max(sw->m[i]);
    for (int i = 0; i < VLA_NFMT; i++)
        if (sw->ref[i]) {
            long one = vla_engine_save_max(sw->ref[i]);
            if (sw->chk[i] && vref_ddcheck_save_max(sw->chk[i]) > one)
                one = vref_ddcheck_save_max(sw->chk[i]);
            n += (size_t)(vla_engine_runs(sw->ref[i]) + 1) * (size_t)one;
        }
    return n;
}

/* Unit k read back into sw (its errors; the last one's state into the engines, at cks[k]: one
 * before it may hold its own too, written before it was saved again without); VLA_EFORMAT when
 * it is not checkpoint k of this pass */
static int unit_read(sweep_pass *sw, const void *rec, size_t n, long k, int last)
{
    long head[4];
    FILE *f = fmemopen((void *)rec, n, "r");
    if (!f)
        return VLA_ENOMEM;
    char redo[sizeof sw->redo];
    int ok = fread(head, sizeof head, 1, f) == 1 && head[0] == k && head[1] == sw->use_dd &&
             (head[2] == 1 || (head[2] == 0 && !last)) && head[3] == (long)strlen(sw->redo) &&
             fread(redo, 1, (size_t)head[3], f) == (size_t)head[3] &&
             !memcmp(redo, sw->redo, (size_t)head[3]);
    for (int i = 0; ok && i < sw->ne; i++)
        ok = fread(sw->err + ((size_t)i * sw->nck + k) * 3, sizeof *sw->err, 3, f) == 3;
    for (int i = 0; ok && last && i < sw->ne + VLA_NFMT; i++) {
        vla_engine *e = i < sw->ne ? sw->m[i] : sw->ref[i - sw->ne];
        for (int h = 0; ok && e && h < vla_engine_runs(e); h++)
            ok = vla_engine_load(e, h, f) == 0 && vla_engine_t(e, h) == sw->cks[k];
        if (ok && i >= sw->ne && sw->chk[i - sw->ne])
            ok = vref_ddcheck_load(sw->chk[i - sw->ne], f, sw->cks[k]) == 0;
    }
    ok = ok && (!last && head[2] ? 1 : fgetc(f) == EOF);
    fclose(f);
    return ok ? VLA_OK : VLA_EFORMAT;
}

/* The checkpoints finished before a stop into sw: their errors, and the engines at the last one's
 * step; *next: the checkpoint to go on from (0: none was kept). A pass in MPFR after the dd check
 * failed goes on as that pass. 0, or the exit status after its message. */
static int sweep_resume(vla_cli *c, const vla_cli_spec *spec, const forms_opts *o,
                        sweep_pass *sw, vla_units *u, long *next)
{
    long last = -1, head[4] = {0};
    size_t n;
    const void *rec;
    *next = 0;
    for (long k = 0; k < sw->nck; k++)
        last = vla_units_get(u, k, NULL) ? k : last;
    if (last < 0)
        return 0;
    rec = vla_units_get(u, last, &n);
    memcpy(head, rec, n >= sizeof head ? sizeof head : 0);
    if (n >= sizeof head && sw->use_dd && !head[1] && head[3] > 0 &&
        head[3] < (long)sizeof sw->redo && n >= sizeof head + (size_t)head[3]) {
        sweep_close(sw); /* the dd reference failed its check: MPFR from here */
        sweep_open(c, spec, o, sw, 0);
        memcpy(sw->redo, (const char *)rec + sizeof head, (size_t)head[3]);
        sw->redo[head[3]] = 0;
        fprintf(stderr, "vla-forms: %s; running MPFR\n", sw->redo);
    }
    /* a damaged one (said by vla_units_open) leaves no state to go on from with every one before
     * it: the last one kept holds none, or one before it is missing */
    long gap = !head[2] ? last : -1;
    for (long k = last; k >= 0; k--)
        gap = vla_units_get(u, k, NULL) ? gap : k;
    if (gap >= 0) {
        fprintf(stderr, "vla-forms: warning: %s.ckpt: checkpoint %ld %s: every checkpoint starts "
                        "over\n", c->out, gap, gap == last && !head[2] ? "holds no state (the one "
                        "after it, which did, is damaged)" : "is damaged, and the state to go on "
                        "from is a later one's");
        for (long k = 0; k <= last; k++)
            vla_units_drop(u, (int)k);
        return 0;
    }
    for (long k = 0; k <= last; k++) {
        rec = vla_units_get(u, k, &n);
        if (unit_read(sw, rec, n, k, k == last)) {
            fprintf(stderr, "vla-forms: %s.ckpt: checkpoint %ld is not one of this command's\n",
                    c->out, k);
            return 1;
        }
    }
    *next = last + 1;
    return 0;
}

/* The sweep's engines advanced from t to to, spread over the threads (each engine on one): one
 * barrier per window, not one per engine; then the first that failed, in order, said. 0, or the
 * exit status (3 a stop) */
static int sweep_window(sweep_pass *sw, long t, long to, vla_progress *prog, long *done,
                        int *radv, int *rchk)
{
    const int ne = sw->ne;
    vla_engine **m = sw->m, **ref = sw->ref;
    vref_ddcheck **chk = sw->chk;
    const int nth = vla_cli_threads();
    (void)nth;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth)
#endif
    for (int i = 0; i < VLA_NFMT + ne; i++) {
        vla_engine *e = i < VLA_NFMT ? ref[i] : m[i - VLA_NFMT];
        int r = e ? vla_engine_advance(e, to) : 0;
        if (!r && i < VLA_NFMT && chk[i]) /* the check reads the same window */
            rchk[i] = vref_ddcheck_follow(chk[i], to);
        radv[i] = r;
        if (e) {
#ifdef _OPENMP
#pragma omp critical(forms_progress)
#endif
            vla_progress_update(prog, *done += to - t);
        }
    }
    for (int i = 0; i < VLA_NFMT + ne; i++) {
        vla_engine *e = i < VLA_NFMT ? ref[i] : m[i - VLA_NFMT];
        int r = radv[i];
        if (!r && i < VLA_NFMT && chk[i] && (r = rchk[i]) && r != VLA_EINTR) {
            fprintf(stderr, "vla-forms: the reference's check: %s\n", vla_strerror(r));
            return 1;
        }
        if (r == VLA_EINTR)
            return 3;
        if (r) {
            fprintf(stderr, "vla-forms: %s\n", vla_error_msg(vla_engine_error(e)));
            return 1;
        }
    }
    return 0;
}

/* at checkpoint k, the error of each quantity of each form against its input format's reference,
 * the mean over the heads (inf: a head turned non-finite), into sw->err; x: room for two of the
 * state's arrays */
static void sweep_errors(const vla_cli *c, sweep_pass *sw, long k, double *x)
{
    const int d = c->cfg.d, dv = c->cfg.dv, A = vla_model_has_A(c->cfg.model), nr = c->runs;
    for (int i = 0; i < sw->ne; i++) {
        vla_engine *rf = sw->ref[vla_prec_io(sw->cfg[i].prec)];
        double *sum = sw->err + ((size_t)i * sw->nck + k) * 3;
        static const vla_quantity qs[3] = {VLA_Q_S, VLA_Q_A, VLA_Q_O};
        const long len[3] = {(long)dv * d, (long)d * d, dv};
        for (int q = 0; q < 3; q++)
            for (int h = 0; h < nr; h++) {
                if (q == 1 && !A) {
                    sum[q] = NAN;
                    continue;
                }
                vla_engine_get(sw->m[i], h, qs[q], x);
                vla_engine_get(rf, h, qs[q], x + len[q]);
                sum[q] += relerr(x, x + len[q], len[q]) / nr;
            }
    }
}

/* the sweep's table: its header (the exact reference, why; the forms; the summary of the errors,
 * inf where a head turned non-finite), one block per form, a row per checkpoint */
static void sweep_table(const vla_cli *c, const vla_cli_spec *spec, vla_dat *out,
                        const sweep_pass *sw, const char *why)
{
    const int ne = sw->ne;
    const long nck = sw->nck, *cks = sw->cks;
    const vla_config *cfg = sw->cfg;
    char form[32];
    vla_cli_provenance(out, c);
    vla_dat_meta(out, "exact_reference", "%s", why);
    vla_dat_meta(out, "forms", "C: 0 seq, -1 scan, else chunk:C (chunk:1 is seq by definition)");
    vla_dat_meta(out, "sweep", "steps %ld and checkpoints rounded down to multiples of %ld, where "
                               "every form has a state; the reference: the exact sequential "
                               "recurrence, one per input format; errors: the mean over the %d "
                               "heads", sw->T, sw->Cmax, c->runs);
    static const char columns[] = "t C prec s_relerr a_relerr o_relerr";
    double *rows = malloc((size_t)ne * nck * 6 * sizeof *rows);
    vla_summary_block *blk = malloc((size_t)ne * sizeof *blk);
    char (*bname)[48] = malloc((size_t)ne * sizeof *bname);
    if (!rows || !blk || !bname)
        vla_cli_fail(spec, "out of memory");
    for (int i = 0; i < ne; i++) {
        const vla_config *k = &cfg[i];
        vla_form_name(k, form, sizeof form);
        snprintf(bname[i], sizeof bname[i], "%s %s", vla_prec_name(k->prec), form);
        blk[i] = (vla_summary_block){rows + (size_t)i * nck * 6, nck, 6, bname[i]};
        for (long j = 0; j < nck; j++) {
            const double *e = sw->err + ((size_t)i * nck + j) * 3;
            double row[6] = {(double)cks[j],
                             k->form == VLA_FORM_SCAN ? -1 : k->form == VLA_FORM_SEQ ? 0 : k->chunk,
                             0, e[0], e[1], e[2]};
            memcpy(rows + ((size_t)i * nck + j) * 6, row, sizeof row);
        }
    }
    vla_summary sm = {.len = 0};
    int said = vla_summary_errors(&sm, columns, blk, ne, VLA_SUM_PAST1 | VLA_SUM_NONFINITE);
    for (int i = 0; i < ne; i++) /* a read-out 0 by an overflowed denominator */
        said |= vla_cli_den_summary(&sm, sw->m[i], bname[i]) |
                vla_cli_cache_summary(&sm, sw->m[i], bname[i]);
    if (!said)
        vla_summary_add(&sm, 0, "every form stayed finite and no error reached 1");
    vla_cli_summary_end(&sm, "vla-forms", out);
    vla_dat_columns(out, columns);
    for (int i = 0; i < ne; i++) {
        if (i)
            vla_dat_block(out);
        for (long j = 0; j < nck; j++) {
            const char *names[6] = {NULL, NULL, vla_prec_name(cfg[i].prec)};
            vla_dat_row_named(out, rows + ((size_t)i * nck + j) * 6, names, 6);
        }
    }
    free(rows);
    free(blk);
    free(bname);
}

/* The sweep's pass from checkpoint k0 (its engines there) to the end and its table, whose
 * exact_reference line says which reference it has; returns VLA_DD_REDO, having written nothing,
 * when the dd reference's check failed, with the check's words in redo (code VLA_ERANGE). */
#define VLA_DD_REDO (-100)
static int sweep_ref(vla_cli *c, const vla_cli_spec *spec, forms_opts *o, vla_dat *out,
                     sweep_pass *sw, vla_units *u, long k0, vla_error *redo)
{
    const int d = c->cfg.d, dv = c->cfg.dv;
    const int ne = sw->ne;
    const long nck = sw->nck, *cks = sw->cks;
    vla_engine **ref = sw->ref;
    vref_ddcheck **chk = sw->chk;
    double *x = malloc((size_t)(d * d + dv * d + dv) * 2 * sizeof *x);
    int *radv = calloc((size_t)(VLA_NFMT + ne), sizeof *radv), rchk[VLA_NFMT] = {0};
    if (!x || !radv)
        vla_cli_fail(spec, "out of memory");
    char why[sizeof sw->redo]; /* the table's exact_reference line */
    const size_t whylen = sizeof why;
    snprintf(why, whylen, "%s", sw->redo);
    int status = 0; /* (a stop or a failed step: to done, which frees what was made) */
    long nengines = ne, done = 0; /* progress: the engines' steps */
    for (int i = 0; i < VLA_NFMT; i++)
        nengines += ref[i] != NULL;
    vla_progress prog;
    vla_progress_start(&prog, nck ? nengines * cks[nck - 1] : 0, "engine-steps");
    const long t0 = k0 ? cks[k0 - 1] : 0;
    long kept = k0, finished = k0; /* in u: 0 .. kept - 1, the last with the state */
    vla_progress_update(&prog, done = nengines * t0);
    for (long k = k0, t = t0, to; k < nck; k++) {
        for (; t < cks[k]; t = to) { /* a window at a time */
            to = t + WIN < cks[k] ? t + WIN : cks[k];
            vla_error ve;
            if (vla_inputs_fill(&sw->in, t, to, &ve)) {
                fprintf(stderr, "vla-forms: --stream: %s\n", vla_error_msg(&ve));
                status = 1;
                goto done;
            }
            if ((status = sweep_window(sw, t, to, &prog, &done, radv, rchk)))
                goto done;
        }
        for (int i = 0; i < VLA_NFMT; i++)
            if (chk[i] && (status = vref_ddcheck_at(chk[i], ref[i], cks[k]))) {
                fprintf(stderr, "vla-forms: the reference's check: %s\n", vla_strerror(status));
                status = status == VLA_EINTR ? 3 : 1;
                goto done;
            }
        sweep_errors(c, sw, k, x);
        /* checkpoint k finished. Where the file is due to be written (vla_units_due), k is
         * saved with the state to go on from, after the ones since the last write and the one
         * that held the state before, with their errors alone; else nothing is copied (the
         * errors stay in err): a copy of every engine's state at every checkpoint doubled the
         * memory. A stop that comes during the next ones goes on from the last written. */
        if (vla_units_due(u)) {
            for (long j = kept > 0 ? kept - 1 : 0; j < k; j++)
                unit_save(spec, sw, u, j, 0);
            unit_save(spec, sw, u, k, 1);
            kept = k + 1;
        }
        finished = k + 1;
    }
    if (!*why) /* (a run again in MPFR keeps the failed check's words) */
        snprintf(why, whylen, "MPFR at %ld bits", c->ref_bits ? c->ref_bits : VREF_DEFAULT_BITS);
    for (int i = 0; i < VLA_NFMT; i++)
        if (chk[i]) {
            vref_ddcheck_describe(chk[i], why, whylen);
            if (!vref_ddcheck_ok(chk[i])) {
                vla_fail(redo, VLA_ERANGE, "%s", why);
                status = VLA_DD_REDO;
                goto done;
            }
        }
    sweep_table(c, spec, out, sw, why);
done:
    vla_progress_end(&prog);
    if (status == 3 && finished > kept)
        fprintf(stderr, "vla-forms: checkpoints %ld to %ld finished after the last one written "
                        "(the state is copied only when a write is due, every "
                        "VLA_CHECKPOINT_SECONDS): a --resume runs them again\n", kept,
                finished - 1);
    free(x);
    free(radv);
    return status;
}

/* the sweep: its exact reference in double-double where the default 256 bits are asked for, else
 * (another --ref-bits, or the dd reference's check failed) MPFR; its checkpoints units of OUT.ckpt
 * (--resume goes on from the last one finished) */
static int sweep(vla_cli *c, const vla_cli_spec *spec, forms_opts *o, vla_dat *out)
{
    vla_error why;
    const long bits = c->ref_bits ? c->ref_bits : VREF_DEFAULT_BITS;
    sweep_pass sw = {.redo = ""};
    sweep_open(c, spec, o, &sw, bits == VREF_DEFAULT_BITS);
    vla_units *u;
    long k0 = 0;
    int r = vla_units_open(&u, c, spec, "checkpoint", NULL, (int)sw.nck, unit_max(&sw));
    if (r) {
        sweep_close(&sw);
        return r;
    }
    r = sweep_resume(c, spec, o, &sw, u, &k0);
    if (!r)
        r = sweep_ref(c, spec, o, out, &sw, u, k0, &why);
    if (r == VLA_DD_REDO) {
        fprintf(stderr, "vla-forms: %s; running MPFR\n", vla_error_msg(&why));
        for (long k = 0; k < sw.nck; k++) /* (the dd pass's checkpoints) */
            vla_units_drop(u, (int)k);
        sweep_close(&sw);
        sweep_open(c, spec, o, &sw, 0);
        snprintf(sw.redo, sizeof sw.redo, "%s", vla_error_msg(&why));
        r = sweep_ref(c, spec, o, out, &sw, u, 0, &why);
    }
    int saved = 0;
    for (long k = 0; k < sw.nck; k++)
        saved |= vla_units_get(u, (int)k, NULL) != NULL;
    if (r == 3 && !saved) { /* (checkpoints may have finished, none was written) */
        fprintf(stderr, "vla-forms: interrupted (signal %d); nothing saved: no checkpoint had "
                        "been written%s.\n", (int)vla_cli_stop, sw.redo[0] ? " in the MPFR pass "
                        "(a --resume from the double-double pass's file starts it over)" : "");
        vla_units_free(u);
    } else {
        r = vla_units_end(u, r);
    }
    sweep_close(&sw);
    return r;
}

/* ---- causal ---- */

/* |a - b| in units in the last place of format f at the io-rounded reference a (its binade's
 * spacing, the subnormals' below the smallest normal); a and b already rounded to f */
static double ulps(double a, double b, vla_fmt f)
{
    if (a == b)
        return 0;
    if (!isfinite(a) || !isfinite(b))
        return INFINITY;
    const double two_u = 2 * vla_fmt_unit_roundoff(f), tiny = vla_fmt_min_normal(f);
    const double ulp = fabs(a) < tiny ? tiny * two_u : ldexp(two_u, ilogb(a));
    return fabs(a - b) / ulp;
}

/* the read-outs of the prefix's tokens, from an engine's taps: runs x P x dv */
typedef struct {
    long P;
    int dv;
    double *o;
} causal_tap;

/* after every step: its read-out, or at a chunk's end every token's, kept where t <= P */
static int causal_step(void *ctx, const vla_step_view *v)
{
    const causal_tap *x = ctx;
    const int n = v->co ? v->nco : 1;
    const double *src = v->co ? v->co : v->o;
    for (int i = 0; src && i < n; i++) { /* (src NULL inside a chunk: its read-outs come later) */
        const long t = v->t - n + 1 + i;
        if (t <= x->P)
            memcpy(x->o + ((size_t)v->run * x->P + t - 1) * x->dv, src + (size_t)i * x->dv,
                   x->dv * sizeof *x->o);
    }
    return VLA_OK;
}

/* Numerical causality (fla issue 1240): each form and precision runs the stream's first T steps
 * twice, the second time with every input of the tokens t > P (1-based: the tokens after the
 * prefix of P) replaced by the stream's draw at step t + T (the same law, other numbers); the
 * read-outs of the prefix's tokens, rounded to the io format (the kernels' output dtype), are
 * compared: a causal form moves none of them. Both runs are engines on the cpu, whose taps give
 * a chunk's every read-out at its end (vla_step_view.co); T is --steps rounded down to the
 * largest C. */
#define CAUSAL_NCOL 6
#define CAUSAL_WIN 256 /* the steps of inputs held at a time */

/* steps t0 + 1 .. t1 of the two runs' inputs into their windows: the first run's in x[0]; the
 * second's in moved, step t from x[0] up to P and from step t + T of x[1] after it */
static int causal_fill(vla_inputs x[2], vla_input *moved, int nr, long T, long P, long t0,
                       long t1, vla_error *err)
{
    const long W = x[0].T;
    int r = vla_inputs_fill(&x[0], t0, t1, err);
    if (!r && t1 > P)
        r = vla_inputs_fill(&x[1], (t0 > P ? t0 : P) + T, t1 + T, err);
    for (int h = 0; !r && h < nr; h++)
        for (long t = t0 + 1; t <= t1; t++)
            moved[h * W + (t - 1) % W] = t <= P ? x[0].in[h * W + (t - 1) % W]
                                                : x[1].in[h * W + (t + T - 1) % W];
    return r;
}

/* one row: the two runs of configuration k to T; its counts over every head's read-outs (rows
 * 3..5 of the table); 0, 1 (said) or 3 (stopped) */
static int causal_row(vla_cli *c, const vla_config *k, vla_inputs x[2], vla_input *moved,
                      causal_tap taps[2], long T, double *row)
{
    const int nr = c->runs, dv = k->dv;
    const long P = taps[0].P, W = x[0].T;
    char form[32];
    vla_form_name(k, form, sizeof form);
    vla_engine *e[2] = {NULL, NULL};
    vla_error err;
    int status = 0;
    for (int run = 0; run < 2 && !status; run++) {
        vla_engine_spec sp;
        vla_cli_engine_spec(c, k, &sp);
        sp.backend = NULL; /* the cpu: the backends of models tap a chunk's read-outs */
        sp.stream = NULL;
        sp.S0 = x[0].S0; /* the trace's initial states, or NULL */
        sp.in = run ? moved : x[0].in;
        sp.T = W;
        sp.cycle = 1; /* step t from slot (t - 1) % W of the window */
        sp.taps = VLA_TAP_O;
        sp.on_step = causal_step;
        sp.ctx = &taps[run];
        if (vla_engine_new(&e[run], &sp, &err))
            status = 1, fprintf(stderr, "vla-forms: %s in %s: %s\n", form, vla_prec_name(k->prec),
                                vla_error_msg(&err));
    }
    for (long t0 = 0; t0 < T && !status; t0 += W) {
        const long t1 = t0 + W < T ? t0 + W : T;
        if (causal_fill(x, moved, nr, T, P, t0, t1, &err))
            status = 1, fprintf(stderr, "vla-forms: --stream: %s\n", vla_error_msg(&err));
        for (int run = 0; run < 2 && !status; run++) {
            const int r = vla_engine_advance(e[run], t1);
            if (r)
                status = r == VLA_EINTR ? 3 : 1;
            if (r && r != VLA_EINTR)
                fprintf(stderr, "vla-forms: %s in %s, %s\n", form, vla_prec_name(k->prec),
                        vla_error_msg(vla_engine_error(e[run])));
        }
    }
    vla_engine_free(e[0]);
    vla_engine_free(e[1]);
    const vla_fmt io = vla_prec_io(k->prec); /* every head's read-outs */
    const double *o0 = taps[0].o, *o1 = taps[1].o;
    for (long i = 0; i < nr * P * dv && !status; i++) {
        const double a = vla_round_fmt(io, o0[i]), b = vla_round_fmt(io, o1[i]);
        const double du = ulps(a, b, io);
        row[3] += a != b && !(isnan(a) && isnan(b));
        row[4] = du > row[4] || isnan(du) ? du : row[4];
        row[5] = fmax(row[5], fabs(a - b));
    }
    return status;
}

static int causal(vla_cli *c, const vla_cli_spec *spec, forms_opts *o, vla_dat *out)
{
    const int d = c->cfg.d, dv = c->cfg.dv, nr = c->runs, np = o->np, nf = o->nf;
    long Cmax = 1;
    for (int f = 0; f < nf; f++)
        Cmax = o->forms[f].chunk > Cmax ? o->forms[f].chunk : Cmax;
    const long T = c->steps / Cmax * Cmax, P = o->prefix;
    if (c->backend && strcmp(c->backend, "cpu"))
        vla_cli_die(spec, "--what causal --backend %s: its forms run on the cpu backend, where a "
                    "chunk's every read-out reaches the program (vla_step_view.co)", c->backend);
    if (T < 1)
        vla_cli_die(spec, "--steps %ld: less than the largest chunk, %ld", c->steps, Cmax);
    if (P < 1 || P >= T)
        vla_cli_die(spec, "--prefix %ld: it must be in 1..%ld (the steps run, less one)", P, T - 1);
    /* the stream's steps 1..T and T + 1..2T, a window at a time */
    vla_inputs x[2];
    vla_error err;
    for (int i = 0; i < 2; i++)
        if (vla_inputs_open(&x[i], c->stream, c->seed, d, dv, nr, CAUSAL_WIN, 2 * T,
                            vla_model_reads(&c->cfg), &err))
            vla_cli_die(spec, "--stream %s: %s (causal reads 2 x %ld steps: the second T replace "
                        "the inputs after the prefix)", c->stream, vla_error_msg(&err), T);
    vla_input *moved = malloc((size_t)nr * x[0].T * sizeof *moved);
    double *rows = calloc((size_t)np * nf * CAUSAL_NCOL, sizeof *rows);
    causal_tap taps[2] = {{P, dv, malloc((size_t)nr * P * dv * sizeof(double))},
                          {P, dv, malloc((size_t)nr * P * dv * sizeof(double))}};
    if (!moved || !rows || !taps[0].o || !taps[1].o)
        vla_cli_fail(spec, "out of memory");
    vla_units *u; /* a row (precision, form) is a unit of the checkpoint */
    int status = vla_units_open(&u, c, spec, "row", NULL, np * nf, CAUSAL_NCOL * sizeof *rows);
    char form[32];
    for (int p = 0; p < np && !status; p++)
        for (int f = 0; f < nf && !status; f++) {
            vla_config k = block_config(c, o, p * nf + f);
            vla_error why;
            vla_form_name(&k, form, sizeof form);
            if (k.form == VLA_FORM_SCAN)
                vla_cli_die(spec, "--forms scan: causal compares seq and chunk:C forms (a scan's "
                            "read-outs are the sequential ones by construction)");
            if (vla_track_check(&k, &why) || vla_form_check(&k, &why))
                vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k.prec), vla_error_msg(&why));
            double *row = rows + ((size_t)p * nf + f) * CAUSAL_NCOL;
            const void *saved = vla_units_get(u, p * nf + f, NULL);
            if (saved) {
                memcpy(row, saved, CAUSAL_NCOL * sizeof *row);
                continue;
            }
            row[0] = k.form == VLA_FORM_SEQ ? 0 : (double)k.chunk;
            row[2] = (double)P;
            status = causal_row(c, &k, x, moved, taps, T, row);
            if (!status && vla_units_save(u, p * nf + f, row, CAUSAL_NCOL * sizeof *row))
                vla_cli_fail(spec, "out of memory");
        }
    status = u ? vla_units_end(u, status) : status;
    if (!status) {
        vla_cli_provenance(out, c);
        vla_dat_meta(out, "causal", "T = %ld steps of %d heads; the inputs of tokens %ld..%ld "
                                    "replaced by the stream's steps %ld..%ld; the read-outs of "
                                    "tokens 1..%ld compared, rounded to the io format", T, nr,
                     P + 1, T, P + 1 + T, 2 * T, P);
        vla_summary sm = {.len = 0};
        for (int i = 0; i < np * nf; i++)
            if (rows[i * CAUSAL_NCOL + 3] > 0) {
                vla_config k = block_config(c, o, i);
                vla_form_name(&k, form, sizeof form);
                vla_summary_add(&sm, 1, "%s %s is not causal: the inputs after token %ld move %.0f "
                                "read-outs before it, up to %g ulps", vla_prec_name(o->precs[i / nf]),
                                form, P, rows[i * CAUSAL_NCOL + 3], rows[i * CAUSAL_NCOL + 4]);
            }
        if (!sm.len)
            vla_summary_add(&sm, 0, "every form is causal: no read-out before token %ld moved", P + 1);
        vla_cli_summary_end(&sm, "vla-forms", out);
        vla_dat_columns(out, "C prec prefix moved max_ulps max_abs");
        for (int i = 0; i < np * nf; i++) {
            const char *names[CAUSAL_NCOL] = {NULL, vla_prec_name(o->precs[i / nf])};
            vla_dat_row_named(out, rows + (size_t)i * CAUSAL_NCOL, names, CAUSAL_NCOL);
        }
    }
    vla_inputs_free(&x[0]);
    vla_inputs_free(&x[1]);
    free(moved);
    free(rows);
    free(taps[0].o);
    free(taps[1].o);
    return status;
}

/* ---- ut ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the largest singular value of the n x n X */
static double norm2(vref_svd_ws *w, const double *X, int n, double *sv)
{
    return vref_svd_in(w, X, n, n, sv) ? NAN : sv[0];
}

/* the median of the n values of v (sorted in place) */
static double median(double *v, long n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Per chunk size C and kind of L, over --samples draws of each of --seeds seeds: the largest
 * |T_ij| and cond_2(T) = ||T|| ||I + L|| (T^-1 = I + L: no inverse needed) of T = (I + L)^-1 in
 * binary64, each seed's median over its draws (the median over the seeds and their least and
 * greatest: one seed's median can be several times off the typical one) and the maximum over all
 * draws, the fraction of all draws whose T overflows binary16 (the f16 intermediates of f16-kern)
 * and binary32, and the median over the seeds of the median largest |T_ij| that binary32
 * arithmetic computes. kinds: 0 delta's L = strictly_lower(diag(beta) K K^T) with raw N(0,1) keys
 * and beta = sigmoid(N(0,1)) (fla issue 736), 1 the same keys normalized, 2 L_ij ~ N(0,1) (fla
 * issue 537's solve_tril input). Seed i draws with --seed + i. */
#define UT_NCOL 13

/* the calling thread's number among the threads of ut's draws */
static int ut_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* one thread's scratch for ut_draw */
typedef struct {
    double *L, *T, *sv, *K, *beta;
    vref_svd_ws ws;
} ut_scratch;

/* Draw s of a seed for chunk size C and kind (the stream's numbers: head s, step t) into x: max
 * |T_ij| and cond_2(T) in binary64, max |T_ij| in binary32, whether T overflows binary16.
 * Independent of every other draw: the threads take them in any order. VLA_ENOMEM, or 0. */
static int ut_draw(ut_scratch *w, int kind, int C, int d, uint64_t seed, long s, double *x)
{
    double *L = w->L, *T = w->T, *K = w->K, *beta = w->beta;
    for (int t = 0; kind < 2 && t < C; t++) { /* (L ~ N(0,1) draws no keys) */
        vla_gauss_fill(K + (size_t)t * d, d, seed, VLA_VAR_K, (uint32_t)s, t + 1, 1);
        beta[t] = 1 / (1 + exp(-vla_gauss(seed, VLA_VAR_BETA, (uint32_t)s, t + 1, 0)));
        double n = vla_fro(K + (size_t)t * d, d);
        for (int j = 0; kind == 1 && j < d; j++)
            K[(size_t)t * d + j] /= n;
    }
    for (int r = 0; r < C; r++)
        for (int q = 0; q < C; q++) {
            double dot = 0;
            for (int j = 0; kind < 2 && q < r && j < d; j++)
                dot += K[(size_t)r * d + j] * K[(size_t)q * d + j];
            L[(size_t)r * C + q] = q >= r     ? 0
                                   : kind < 2 ? beta[r] * dot
                                              : vla_gauss(seed, VLA_VAR_AUX, (uint32_t)s, r + 1, q);
        }
    double mx = 0;
    if (vla_ut_inverse(VLA_F64, VLA_TRI_FORWARD, L, C, T))
        return VLA_ENOMEM;
    for (size_t i = 0; i < (size_t)C * C; i++)
        mx = fmax(mx, fabs(T[i]));
    x[0] = mx;
    double nt = norm2(&w->ws, T, C, w->sv);
    for (int r = 0; r < C; r++)
        L[(size_t)r * C + r] = 1; /* I + L */
    x[1] = nt * norm2(&w->ws, L, C, w->sv);
    for (int r = 0; r < C; r++)
        L[(size_t)r * C + r] = 0;
    if (vla_ut_inverse(VLA_F32, VLA_TRI_FORWARD, L, C, T))
        return VLA_ENOMEM;
    mx = 0;
    for (size_t i = 0; i < (size_t)C * C; i++)
        mx = isfinite(T[i]) ? fmax(mx, fabs(T[i])) : INFINITY;
    x[2] = mx;
    x[3] = x[0] > vla_fmt_max(VLA_FMT_F16);
    return VLA_OK;
}

static int ut(vla_cli *c, const vla_cli_spec *spec, forms_opts *o, vla_dat *out)
{
    const int d = c->cfg.d;
    const long S = o->samples, N = o->seeds;
    /* the draws of a seed spread over the threads, each with its scratch, into their slots of st */
    const int nth = vla_cli_threads() < S ? vla_cli_threads() : (int)S;
    const size_t nn = (size_t)VLA_CHUNK_MAX * VLA_CHUNK_MAX;
    ut_scratch *w = calloc((size_t)nth, sizeof *w);
    for (int i = 0; w && i < nth; i++) {
        w[i].L = malloc(nn * sizeof *w[i].L);
        w[i].T = malloc(nn * sizeof *w[i].T);
        w[i].sv = malloc(VLA_CHUNK_MAX * sizeof *w[i].sv);
        w[i].K = malloc((size_t)VLA_CHUNK_MAX * d * sizeof *w[i].K);
        w[i].beta = malloc(VLA_CHUNK_MAX * sizeof *w[i].beta);
        if (!w[i].L || !w[i].T || !w[i].sv || !w[i].K || !w[i].beta)
            vla_cli_fail(spec, "out of memory");
    }
    double *st = malloc((size_t)S * 4 * sizeof *st); /* per draw: max, cond, f32's max, f16 overflow */
    double *v = malloc((size_t)S * sizeof *v), *med = malloc((size_t)N * 3 * sizeof *med);
    if (!w || !st || !v || !med)
        vla_cli_fail(spec, "out of memory");
    vla_cli_provenance(out, c);
    static const char *const kinds[3] = {"raw", "unit", "gauss"};
    vla_dat_meta(out, "kinds", "raw: delta, raw keys N(0,1) (d = %d), beta = sigmoid(N(0,1)); unit: "
                               "the same keys normalized; gauss: L_ij ~ N(0,1) (fla issue 537)", d);
    vla_dat_meta(out, "samples", "%ld draws per chunk size, kind and seed: medians and maxima over them",
                 S);
    vla_dat_meta(out, "seeds", "%ld (--seed %llu to %llu): *_med the median over the seeds of each "
                               "seed's median, *_lo and *_hi their least and greatest; maxima and "
                               "fractions over all %ld draws",
                 N, (unsigned long long)c->seed, (unsigned long long)(c->seed + N - 1), S * N);
    /* the rows first, for the summary in the header: what overflowed, from which C */
    double *rows = malloc((size_t)3 * o->nC * UT_NCOL * sizeof *rows);
    if (!rows)
        vla_cli_fail(spec, "out of memory");
    vla_units *u; /* a row (kind, C) is a unit of the checkpoint */
    int status = vla_units_open(&u, c, spec, "row", NULL, 3 * o->nC, UT_NCOL * sizeof *rows);
    if (status)
        goto done;
    for (int kind = 0; kind < 3; kind++) {
        for (int ci = 0; ci < o->nC; ci++) {
            const int C = (int)o->Cs[ci];
            const void *saved = vla_units_get(u, kind * o->nC + ci, NULL);
            if (saved) {
                memcpy(rows + ((size_t)kind * o->nC + ci) * UT_NCOL, saved, UT_NCOL * sizeof *rows);
                continue;
            }
            double mxall = 0, cdall = 0;
            long o16 = 0, o32 = 0;
            for (long sd = 0; sd < N; sd++) {
                const uint64_t seed = c->seed + (uint64_t)sd;
                int fail = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth) reduction(| : fail)
#endif
                for (long s = 0; s < S; s++)
                    fail |= !vla_cli_stop && ut_draw(w + ut_thread(), kind, C, d, seed, s, st + s * 4);
                if (vla_cli_stop) {
                    status = vla_units_end(u, 3);
                    goto done;
                }
                if (fail)
                    vla_cli_fail(spec, "out of memory");
                for (int q = 0; q < 3; q++) { /* this seed's medians of max, cond, f32's max */
                    for (long s = 0; s < S; s++)
                        v[s] = st[s * 4 + q];
                    med[q * N + sd] = median(v, S);
                }
                for (long s = 0; s < S; s++) {
                    mxall = fmax(mxall, st[s * 4]);
                    cdall = fmax(cdall, st[s * 4 + 1]);
                    o16 += st[s * 4 + 3] > 0;
                    o32 += st[s * 4] > vla_fmt_max(VLA_FMT_F32);
                }
            }
            double row[UT_NCOL] = {C};
            row[2] = median(med, N); /* (sorted: [0] and [N - 1] are the least and greatest) */
            row[9] = med[0];
            row[10] = med[N - 1];
            row[3] = mxall;
            row[4] = median(med + N, N);
            row[11] = med[N];
            row[12] = med[2 * N - 1];
            row[5] = cdall;
            row[6] = (double)o16 / (S * N);
            row[7] = (double)o32 / (S * N);
            row[8] = median(med + 2 * N, N);
            memcpy(rows + ((size_t)kind * o->nC + ci) * UT_NCOL, row, sizeof row);
            if (vla_units_save(u, kind * o->nC + ci, row, sizeof row))
                vla_cli_fail(spec, "out of memory");
        }
    }
    vla_units_end(u, 0);
    vla_summary sm = {.len = 0};
    static const char *const fmts[2] = {"binary16", "binary32"};
    for (int f = 0; f < 2; f++)
        for (int kind = 0; kind < 3; kind++)
            for (int ci = 0; ci < o->nC; ci++) {
                const double *row = rows + ((size_t)kind * o->nC + ci) * UT_NCOL;
                if (row[6 + f] > 0) {
                    vla_summary_add(&sm, 1, "T overflows %s from C = %.0f (%s: %.3g of the draws)",
                                    fmts[f], row[0], kinds[kind], row[6 + f]);
                    break;
                }
            }
    if (!sm.len)
        vla_summary_add(&sm, 0, "T stays within binary16's range in every draw");
    vla_cli_summary_end(&sm, "vla-forms", out);
    vla_dat_columns(out, "C kind max_med max_max cond_med cond_max f16_over f32_over max_f32_med "
                         "max_med_lo max_med_hi cond_med_lo cond_med_hi");
    for (int kind = 0; kind < 3; kind++) {
        if (kind)
            vla_dat_block(out);
        for (int ci = 0; ci < o->nC; ci++) {
            const char *names[UT_NCOL] = {NULL, kinds[kind]};
            vla_dat_row_named(out, rows + ((size_t)kind * o->nC + ci) * UT_NCOL, names, UT_NCOL);
        }
    }
done:
    free(rows);
    for (int i = 0; i < nth; i++) {
        free(w[i].L);
        free(w[i].T);
        free(w[i].sv);
        free(w[i].K);
        free(w[i].beta);
        vref_svd_free(&w[i].ws);
    }
    free(w);
    free(st);
    free(v);
    free(med);
    return status;
}

/* ---- decode ---- */

/* the read-outs an engine's on_step keeps, rounded to the io format (what a kernel hands on, its
 * output dtype): tokens from + 1 .. from + len of every run, dv each */
typedef struct {
    double *o;
    long from, len;
    int dv;
    vla_fmt io;
} kept_outs;

static int keep_outs(void *ctx, const vla_step_view *v)
{
    const kept_outs *w = ctx;
    const int n = v->co ? v->nco : v->o ? 1 : 0; /* a chunk's end: its every token */
    for (int r = 0; r < n; r++) {
        const long i = v->t - n + r - w->from; /* token v->t - n + 1 + r, 0-based from from */
        const double *src = (v->co ? v->co : v->o) + (size_t)r * w->dv;
        for (int j = 0; i >= 0 && i < w->len && j < w->dv; j++)
            w->o[((size_t)v->run * w->len + i) * w->dv + j] = vla_round_fmt(w->io, src[j]);
    }
    return 0;
}

/* the largest difference between two tokens' read-outs a and b (rounded to f) in ulps of f at a's
 * largest entry: the spacing of the format where the token's read-out lives */
static double token_ulps(const double *a, const double *b, int n, vla_fmt f)
{
    double amax = 0, dmax = 0;
    for (int j = 0; j < n; j++) {
        amax = fmax(amax, fabs(a[j]));
        dmax = a[j] == b[j] ? dmax : fmax(dmax, isfinite(a[j] - b[j]) ? fabs(a[j] - b[j]) : INFINITY);
    }
    return dmax == 0 ? 0 : ulps(amax, amax + dmax, f);
}

/* prepared inputs in an array of their own: n steps of every head, the first real of them x's
 * steps from t0 + 1 on, the rest (the prefill's pads) null tokens of log-decay pad */
static vla_input *inputs_part(const vla_inputs *x, long t0, long n, long real, double pad,
                              const double *zeros, unsigned char **is_read)
{
    vla_input *in = malloc((size_t)x->heads * n * sizeof *in);
    *is_read = calloc((size_t)x->heads * n, 1);
    if (!in || !*is_read)
        return NULL;
    const vla_input null = {.q = zeros, .k = zeros, .v = zeros, .u = zeros, .beta = NAN,
                            .decay = NAN, .lgs = pad};
    for (int h = 0; h < x->heads; h++)
        for (long t = 0; t < n; t++) {
            const long s = t0 + t, at = (size_t)h * n + t;
            in[at] = t < real ? x->in[(size_t)h * x->T + s] : null;
            (*is_read)[at] = t < real && x->is_read ? x->is_read[(size_t)h * x->T + s] : 0;
        }
    return in;
}

/* One row per checkpoint: t C prec o_one o_pd s_one s_pd max_ulps max_abs */
#define DEC_NCOL 9
/* a block's numbers, a unit of the checkpoint: its nck rows, then the decode's state cache's
 * saturations (vla_counts.cache_sat, summed over the heads), which its summary says */
#define DEC_UNIT(nck) ((size_t)(nck) * DEC_NCOL + 1)

/* Prefill, then decode (docs/forms.md "Prefill, then decode"): for each form (the prefill's) and
 * precision, the stream's first P tokens run in the form, the last chunk computed as the kernels
 * mask it or, with --pad G, filled to C tokens by null tokens (q, k, v = 0) of log-decay G; the
 * state after them is handed, as vla_engine_spec's S0, to the seq form on tokens P + 1 .. T,
 * which keeps it in the state cache of --set cache (from the hand-over on); beside them, one pass
 * of the form over the T tokens, and the reference of the policy over the same. At checkpoints t
 * (multiples of the largest C, log-spaced in the decode's steps t - P): the read-out's and the
 * state's relative error of the one pass and of prefill-then-decode, the mean over the heads (the
 * read-outs rounded to the io format, the kernels' output dtype), and the largest difference
 * between the two's read-outs of a token of P + 1 .. t, in ulps of the io format at the token's
 * largest read-out, and absolute. */
static int decode_row(const vla_cli *c, const vla_cli_spec *spec, const forms_opts *o,
                      const vla_inputs *x, const vla_inputs *drafts, vla_config k,
                      const long *cks, int nck, long T, double *rows)
{
    const int d = c->cfg.d, dv = c->cfg.dv, nr = c->runs;
    const long P = o->prefix, C = k.form == VLA_FORM_CHUNK ? k.chunk : 1;
    const long R = P - o->stale + o->rejected; /* the prefill's tokens, its drafts included */
    const long Pp = o->padded ? (R + C - 1) / C * C : R, D = T - P;
    const vla_fmt io = vla_prec_io(k.prec);
    char form[32];
    vla_form_name(&k, form, sizeof form);
    vla_config dec = k; /* the decode: the seq form, with the cache */
    dec.form = VLA_FORM_SEQ;
    dec.chunk = 0;
    k.cache = VLA_CACHE_OFF; /* the prefill and the one pass: the form, without decoding's */
    k.cache_rows = 0;        /* settings (the cache, its 16-bit decays and beta) */
    k.cache_round = VLA_CROUND_RN;
    k.decay_bf16 = k.beta_bf16 = 0;
    vla_error why;
    if (vla_track_check(&k, &why) || vla_form_check(&k, &why) || vla_config_check_why(&dec, &why) ||
        vla_form_check(&dec, &why))
        vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k.prec), vla_error_msg(&why));
    double *zeros = calloc((size_t)(d > dv ? d : dv), sizeof *zeros);
    double *S = malloc((size_t)nr * dv * d * sizeof *S), *Sx = malloc((size_t)dv * d * sizeof *Sx);
    double *ox = malloc((size_t)dv * sizeof *ox);
    kept_outs one_o = {malloc((size_t)nr * D * dv * sizeof(double)), P, D, dv, io};
    kept_outs dec_o = {malloc((size_t)nr * D * dv * sizeof(double)), 0, D, dv, io};
    unsigned char *pre_read = NULL, *dec_read = NULL;
    vla_input *pre_in = inputs_part(x, 0, Pp, P - o->stale, o->pad, zeros, &pre_read);
    vla_input *dec_in = inputs_part(x, P, D, D, 0, zeros, &dec_read);
    if (!zeros || !S || !Sx || !ox || !one_o.o || !dec_o.o || !pre_in || !dec_in)
        vla_cli_fail(spec, "out of memory");
    for (int h = 0; h < nr; h++) /* the rejected drafts: the stream's steps T + 1 .., step t in */
        for (long i = 0; i < o->rejected; i++) { /* the window's slot (t - 1) % N */
            const size_t at = (size_t)h * Pp + P - o->stale + i,
                         from = (size_t)h * drafts->T + (size_t)((T + i) % drafts->T);
            pre_in[at] = drafts->in[from];
            pre_read[at] = drafts->is_read ? drafts->is_read[from] : 0;
        }
    vla_engine_spec sp, rs;
    inputs_specs(c, spec, &k, x, T, "decode", &sp, &rs);
    vla_engine *one, *pre, *dv_e = NULL, *ref;
    vla_error e_msg;
    sp.taps = VLA_TAP_O;
    sp.on_step = keep_outs;
    sp.ctx = &one_o;
    if (vla_engine_new(&one, &sp, &e_msg) || vla_engine_new(&ref, &rs, &e_msg))
        vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k.prec), vla_error_msg(&e_msg));
    sp.in = pre_in;
    sp.is_read = pre_read;
    sp.T = Pp;
    sp.on_step = NULL;
    sp.taps = 0;
    if (vla_engine_new(&pre, &sp, &e_msg))
        vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k.prec), vla_error_msg(&e_msg));
    vla_engine *bad = pre; /* the engine whose failure is said */
    int status = vla_engine_advance(pre, Pp);
    if (!status && Pp % C)
        status = vla_engine_finish(pre);
    for (int h = 0; h < nr && !status; h++)
        status = vla_engine_get(pre, h, VLA_Q_S, S + (size_t)h * dv * d);
    if (!status) {
        vla_cli_engine_spec(c, &dec, &sp);
        sp.stream = NULL;
        sp.in = dec_in;
        sp.is_read = dec_read;
        sp.T = D;
        sp.S0 = S; /* binary32 values in the kernels' policies: the cache's rounding is the first */
        sp.taps = VLA_TAP_O;
        sp.on_step = keep_outs;
        sp.ctx = &dec_o;
        if (vla_engine_new(&dv_e, &sp, &e_msg))
            vla_cli_die(spec, "the decode in %s: %s", vla_prec_name(k.prec), vla_error_msg(&e_msg));
    }
    long done = P; /* the read-outs compared so far: tokens P + 1 .. done */
    for (int j = 0; j < nck && !status; j++) {
        const long t = cks[j];
        if ((status = vla_engine_advance(bad = one, t)) ||
            (status = vla_engine_advance(bad = ref, t)) ||
            (status = vla_engine_advance(bad = dv_e, t - P)))
            break;
        double *row = rows + (size_t)j * DEC_NCOL;
        row[0] = (double)t;
        row[1] = k.form == VLA_FORM_SEQ ? 0 : (double)C;
        if (j) {
            row[7] = row[7 - DEC_NCOL];
            row[8] = row[8 - DEC_NCOL];
        }
        for (int h = 0; h < nr; h++) {
            vla_engine_get(ref, h, VLA_Q_O, ox);
            vla_engine_get(ref, h, VLA_Q_S, Sx);
            const double *o1 = one_o.o + ((size_t)h * D + t - P - 1) * dv;
            row[3] += relerr(o1, ox, dv) / nr;
            row[4] += relerr(dec_o.o + ((size_t)h * D + t - P - 1) * dv, ox, dv) / nr;
            vla_engine_get(one, h, VLA_Q_S, S);
            row[5] += relerr(S, Sx, (long)dv * d) / nr;
            vla_engine_get(dv_e, h, VLA_Q_S, S);
            row[6] += relerr(S, Sx, (long)dv * d) / nr;
            for (long i = done - P; i < t - P; i++) {
                const double *a = one_o.o + ((size_t)h * D + i) * dv,
                             *b = dec_o.o + ((size_t)h * D + i) * dv;
                const double du = token_ulps(a, b, dv, io);
                row[7] = du > row[7] || isnan(du) ? du : row[7];
                for (int j = 0; j < dv; j++)
                    row[8] = fmax(row[8], fabs(a[j] - b[j]));
            }
        }
        done = t;
    }
    vla_counts cn;
    for (int h = 0; h < nr && !status; h++)
        if (!vla_engine_counts(dv_e, h, &cn))
            rows[(size_t)nck * DEC_NCOL] += (double)cn.cache_sat;
    if (status && status != VLA_EINTR)
        fprintf(stderr, "vla-forms: %s in %s: %s\n", form, vla_prec_name(k.prec),
                vla_error_msg(vla_engine_error(bad)));
    vla_engine_free(one);
    vla_engine_free(pre);
    vla_engine_free(dv_e);
    vla_engine_free(ref);
    free(zeros);
    free(S);
    free(Sx);
    free(ox);
    free(one_o.o);
    free(dec_o.o);
    free(pre_in);
    free(pre_read);
    free(dec_in);
    free(dec_read);
    return status == VLA_EINTR ? 3 : status ? 1 : 0;
}

/* deltaproduct's tokens are householder steps each, and a run from a handed-on state (a decode
 * after its prefill, a context-parallel rank) starts at a token's first step: the n steps before
 * it must be whole tokens (docs/gated.md) */
static void whole_tokens(const vla_cli *c, const vla_cli_spec *spec, long n, const char *what)
{
    const int h = c->cfg.householder;
    if (c->cfg.model == VLA_DELTAPRODUCT && n % h)
        vla_cli_die(spec, "%s: a run handed the state after step %ld starts at a token's first "
                    "step, but deltaproduct's tokens are householder = %d steps: a multiple of %d",
                    what, n, h, h);
}

static int decode(vla_cli *c, const vla_cli_spec *spec, forms_opts *o, vla_dat *out)
{
    const int nr = c->runs, np = o->np, nf = o->nf;
    long Cmax = 1;
    for (int f = 0; f < nf; f++)
        Cmax = o->forms[f].chunk > Cmax ? o->forms[f].chunk : Cmax;
    const long T = c->steps / Cmax * Cmax, P = o->prefix;
    if (P < 1 || P >= T)
        vla_cli_die(spec, "--prefix %ld: the prefill's tokens, in 1..%ld (the steps run, rounded "
                    "down to the largest chunk, less one)", P, T - 1);
    if (o->stale >= P)
        vla_cli_die(spec, "--stale %ld: the prefill's tokens missing from the handed state, in "
                    "1..%ld (--prefix, less one)", o->stale, P - 1);
    whole_tokens(c, spec, P, "--prefix");
    long cks[512], j_cks[512];
    int nck = 0;
    const long nj = vla_checkpoints(T - P, c->per_decade, j_cks, 512);
    for (long i = 0; i < nj; i++) { /* t = P + j up to a multiple of Cmax, once each */
        const long t = (P + j_cks[i] + Cmax - 1) / Cmax * Cmax;
        if (t <= T && (!nck || t > cks[nck - 1]))
            cks[nck++] = t;
    }
    vla_inputs x;
    vla_error ve;
    if (vla_inputs_draw(&x, c->stream, c->seed, c->cfg.d, c->cfg.dv, nr, T,
                        vla_model_reads(&c->cfg), &ve))
        vla_cli_die(spec, "--stream: %s", vla_error_msg(&ve));
    if (x.T < T)
        vla_cli_die(spec, "--stream %s: %ld steps, fewer than --steps %ld", c->stream, x.T, T);
    vla_inputs drafts = {0}; /* --rejected N: the stream's steps T + 1 .. T + N, a window of N */
    if (o->rejected && (vla_inputs_open(&drafts, c->stream, c->seed, c->cfg.d, c->cfg.dv, nr,
                                        o->rejected, T + o->rejected, vla_model_reads(&c->cfg),
                                        &ve) ||
                        vla_inputs_fill(&drafts, T, T + o->rejected, &ve)))
        vla_cli_die(spec, "--rejected %ld: the drafts are the stream's steps %ld..%ld, after the "
                    "%ld steps run: --stream %s: %s", o->rejected, T + 1, T + o->rejected, T,
                    c->stream, vla_error_msg(&ve));
    const size_t unit = DEC_UNIT(nck) * sizeof(double);
    double *rows = calloc((size_t)np * nf * DEC_UNIT(nck), sizeof *rows);
    if (!rows)
        vla_cli_fail(spec, "out of memory");
    vla_units *u; /* a block (precision, form) is a unit of the checkpoint */
    int status = vla_units_open(&u, c, spec, "block", NULL, np * nf, unit);
    for (int i = 0; i < np * nf && !status; i++) {
        double *blk = rows + (size_t)i * DEC_UNIT(nck);
        const void *saved = vla_units_get(u, i, NULL);
        if (saved) {
            memcpy(blk, saved, unit);
            continue;
        }
        vla_config k = block_config(c, o, i);
        if (k.form == VLA_FORM_SCAN)
            vla_cli_die(spec, "--forms scan: decode's prefill is a seq or chunk:C form (a scan's "
                        "final state is the sequential one by construction)");
        if (!(status = decode_row(c, spec, o, &x, &drafts, k, cks, nck, T, blk)) &&
            vla_units_save(u, i, blk, unit))
            vla_cli_fail(spec, "out of memory");
    }
    status = u ? vla_units_end(u, status) : status;
    if (!status) {
        char cache[160];
        vla_config dec = c->cfg;
        dec.form = VLA_FORM_SEQ;
        snprintf(cache, sizeof cache, "%s", vla_cache_name(dec.cache));
        vla_cli_provenance(out, c);
        vla_dat_meta(out, "decode", "T = %ld steps of %d heads; the prefill: tokens 1..%ld in the "
                     "form, %s; then the seq form on tokens %ld..%ld from its state, cache %s "
                     "(cache_rows %d, %s); one pass: the form on tokens 1..%ld", T, nr, P,
                     o->padded ? "its last chunk padded to C tokens by null tokens (q, k, v = 0) "
                     "of log-decay --pad" : "its last chunk masked past the prefill", P + 1, T,
                     cache, dec.cache_rows, dec.cache_round == VLA_CROUND_EF ? "ef" :
                     dec.cache_round == VLA_CROUND_SR ? "sr" : "rn", T);
        if (o->padded)
            vla_dat_meta(out, "pad", "%.17g", o->pad);
        if (o->rejected)
            vla_dat_meta(out, "rejected", "%ld draft tokens (the stream's steps %ld..%ld) run "
                         "after the prefill's, left in the state handed to the decode", o->rejected,
                         T + 1, T + o->rejected);
        if (o->stale)
            vla_dat_meta(out, "stale", "the handed state is the prefill's after token %ld: tokens "
                         "%ld..%ld missing from it", P - o->stale, P - o->stale + 1, P);
        vla_summary sm = {.len = 0};
        for (int i = 0; i < np * nf; i++) {
            const double *last = rows + (size_t)i * DEC_UNIT(nck) + (size_t)(nck - 1) * DEC_NCOL;
            const double sat = last[DEC_NCOL]; /* the block's saturations, after its rows */
            vla_config k = block_config(c, o, i);
            char form[32];
            vla_form_name(&k, form, sizeof form);
            const int bad = !(isfinite(last[3]) && isfinite(last[4]) && isfinite(last[7]));
            vla_summary_add(&sm, bad, "%s %s: prefill then decode differs from one pass by up to "
                            "%.3g ulps of %s (%.3g), its read-out's error at t = %ld %.3g "
                            "against one pass's %.3g", vla_prec_name(o->precs[i / nf]), form,
                            last[7], vla_fmt_name(vla_prec_io(o->precs[i / nf])), last[8],
                            (long)last[0], last[4], last[3]);
            if (sat > 0)
                vla_summary_add(&sm, 1, "%s %s: the decode's state cache (%s) saturated: %.0f "
                                "entries clamped at the format's largest",
                                vla_prec_name(o->precs[i / nf]), form,
                                vla_cache_name(c->cfg.cache), sat);
        }
        vla_cli_summary_end(&sm, "vla-forms", out);
        vla_dat_columns(out, "t C prec o_one o_pd s_one s_pd max_ulps max_abs");
        for (int i = 0; i < np * nf; i++) {
            if (i)
                vla_dat_block(out);
            for (int j = 0; j < nck; j++) {
                const char *names[DEC_NCOL] = {NULL, NULL, vla_prec_name(o->precs[i / nf])};
                vla_dat_row_named(out, rows + (size_t)i * DEC_UNIT(nck) + (size_t)j * DEC_NCOL,
                                  names, DEC_NCOL);
            }
        }
    }
    vla_inputs_free(&x);
    if (o->rejected)
        vla_inputs_free(&drafts);
    free(rows);
    return status;
}

/* ---- cp ---- */

/* One row per rank count and construction: R C prec summary s_in s_fold s_end o o_last */
#define CP_NCOL 9

static const char *const cp_sum_name[2] = {"two", "direct"};

/* the table and its summary: per block, each construction's errors at the largest R against
 * R = 1 */
static void cp_table(const vla_cli *c, const forms_opts *o, vla_dat *out, const double *rows,
                     long T)
{
    const int np = o->np, nf = o->nf, ns = o->ns;
    const size_t nrow = (size_t)o->nR * ns;
    vla_cli_provenance(out, c);
    vla_dat_meta(out, "cp", "T = %ld steps of %d heads split into R segments of T / R tokens, a "
                 "rank each; a rank's summary (S_out = S_in A + B) from its form's runs: B from "
                 "S_in = 0, A from S_in = I with v = 0 (direct) or (A + B) - B (two); the "
                 "summaries folded left to right in the compute format from S_0; each rank's read-outs from "
                 "its form's run from its incoming state", T, c->runs);
    vla_summary sm = {.len = 0};
    for (int i = 0; i < np * nf; i++) {
        vla_config k = block_config(c, o, i);
        char form[32];
        vla_form_name(&k, form, sizeof form);
        for (int s = 0; s < ns; s++) {
            const double *first = rows + ((size_t)i * nrow + s) * CP_NCOL,
                         *last = rows + ((size_t)i * nrow + nrow - ns + s) * CP_NCOL;
            const int bad = !(isfinite(last[5]) && isfinite(last[7]));
            vla_summary_add(&sm, bad, "%s %s %s: R = %.0f: state %.3g, read-outs %.3g (R = %.0f: "
                            "%.3g, %.3g)", vla_prec_name(o->precs[i / nf]), form,
                            cp_sum_name[o->sums[s]], last[0], last[5], last[7], first[0],
                            first[5], first[7]);
        }
    }
    vla_cli_summary_end(&sm, "vla-forms", out);
    vla_dat_columns(out, "R C prec summary s_in s_fold s_end o o_last");
    for (int i = 0; i < np * nf; i++) {
        if (i)
            vla_dat_block(out);
        for (size_t j = 0; j < nrow; j++) {
            const double *row = rows + ((size_t)i * nrow + j) * CP_NCOL;
            const char *names[CP_NCOL] = {NULL, NULL, vla_prec_name(o->precs[i / nf]),
                                          cp_sum_name[(int)row[3]]};
            vla_dat_row_named(out, row, names, CP_NCOL);
        }
    }
}

/* out (dv x d) <- S A + B in the compute format cf, the sums over k in order from k = 0, B added
 * last, every product and sum rounded to cf (a binary64 operation on numbers of a narrower format
 * rounded once: the format's own operation), then stored in sf: the fold h <- h M + h_ext of the
 * context-parallel kernels' merge, in S's layout */
static void cp_compose(vla_fmt cf, vla_fmt sf, int dv, int d, const double *S, const double *A,
                       const double *B, double *out)
{
    for (int a = 0; a < dv; a++)
        for (int col = 0; col < d; col++) {
            double acc = vla_round_fmt(cf, S[(size_t)a * d] * A[col]);
            for (int k = 1; k < d; k++)
                acc = vla_round_fmt(cf, acc + vla_round_fmt(cf, S[(size_t)a * d + k] *
                                                                    A[(size_t)k * d + col]));
            acc = vla_round_fmt(cf, acc + B[(size_t)a * d + col]);
            out[(size_t)a * d + col] = vla_round_fmt(sf, acc);
        }
}

/* One rank's run of the form k over its segment, tokens t0 + 1 .. t0 + L of every head, from the
 * states S0 (nr of them), v replaced by 0 where zero_v; its read-outs into ko (NULL: none), its
 * final states into S. 0, or the exit status after the message. */
static int cp_rank(const vla_cli *c, const vla_config *k, const vla_inputs *x, long t0, long L,
                   const double *S0, int zero_v, kept_outs *ko, double *S, const double *zeros)
{
    const int dv = c->cfg.dv, d = c->cfg.d;
    unsigned char *rd = NULL;
    vla_input *in = inputs_part(x, t0, L, L, 0, zeros, &rd);
    if (!in || !rd)
        return fprintf(stderr, "vla-forms: out of memory\n"), 1;
    for (long i = 0; zero_v && i < (long)x->heads * L; i++)
        in[i].v = zeros;
    vla_engine_spec sp;
    vla_cli_engine_spec(c, k, &sp);
    sp.stream = NULL;
    sp.in = in;
    sp.is_read = rd;
    sp.T = L;
    sp.S0 = S0;
    sp.taps = ko ? VLA_TAP_O : 0;
    sp.on_step = ko ? keep_outs : NULL;
    sp.ctx = ko;
    vla_engine *e = NULL;
    vla_error why;
    int st = vla_engine_new(&e, &sp, &why);
    if (st)
        fprintf(stderr, "vla-forms: %s\n", vla_error_msg(&why));
    else if ((st = vla_engine_advance(e, L)) || (st = vla_engine_finish(e)))
        fprintf(stderr, "vla-forms: %s\n", vla_error_msg(vla_engine_error(e)));
    for (int h = 0; h < c->runs && !st; h++)
        st = vla_engine_get(e, h, VLA_Q_S, S + (size_t)h * dv * d);
    vla_engine_free(e);
    free(in);
    free(rd);
    return st == VLA_EINTR ? 3 : st ? 1 : 0;
}

/* the reference: its read-outs of every token (ro, nr T dv) and its states at the ranks' ends
 * (rs, nb of them at the sorted ends bt, nr dv d each) */
typedef struct {
    double *ro, *rs;
    long *bt;
    int nb;
} cp_ref;

static int cp_reference(const vla_cli *c, const vla_cli_spec *spec, const forms_opts *o,
                        const vla_inputs *x, const vla_config *k, long T, cp_ref *r)
{
    const int dv = c->cfg.dv, d = c->cfg.d, nr = c->runs;
    r->nb = 0;
    for (long t = 1; t <= T; t++) /* every rank's end, once each, in order */
        for (int i = 0; i < o->nR; i++)
            if (t % (T / o->ranks[i]) == 0) {
                r->bt[r->nb++] = t;
                break;
            }
    vla_engine_spec sp, rs;
    inputs_specs(c, spec, k, x, T, "cp", &sp, &rs);
    kept_outs ko = {r->ro, 0, T, dv, VLA_FMT_F64};
    rs.taps = VLA_TAP_O;
    rs.on_step = keep_outs;
    rs.ctx = &ko;
    vla_engine *e;
    vla_error why;
    if (vla_engine_new(&e, &rs, &why))
        vla_cli_die(spec, "the reference: %s", vla_error_msg(&why));
    int st = 0;
    for (int b = 0; b < r->nb && !st; b++) {
        if ((st = vla_engine_advance(e, r->bt[b])))
            fprintf(stderr, "vla-forms: the reference: %s\n", vla_error_msg(vla_engine_error(e)));
        for (int h = 0; h < nr && !st; h++)
            st = vla_engine_get(e, h, VLA_Q_S, r->rs + ((size_t)b * nr + h) * dv * d);
    }
    vla_engine_free(e);
    return st == VLA_EINTR ? 3 : st ? 1 : 0;
}

/* the reference's state of head h at the end of token t, one of its ranks' ends */
static const double *cp_ref_S(const cp_ref *r, int nr, long n, long t, int h)
{
    int b = 0;
    while (r->bt[b] != t)
        b++;
    return r->rs + ((size_t)b * nr + h) * n;
}

/* Rank count R, construction w: the stream's T tokens split into R segments of L = T / R, a rank
 * each. Every rank computes its affine summary (S_out = S_in A + B over its segment) with the
 * form: B from S_in = 0; A from S_in = I with v = 0 (direct) or as (A + B) - B from a run from
 * S_in = I (two, in the compute format). The summaries fold left to right, S_in of rank r + 1 =
 * S_in A + B (cp_compose), from the stream's S_0; each rank's read-outs and final state come from
 * its own run of the form from its S_in. The row: the relative errors, the mean over the heads, of
 * the incoming states (the largest over ranks 2..R, 0 at R = 1), the fold of all R summaries
 * (the state after T), the last rank's final state, every read-out (norm-wise over the T tokens)
 * and the last token's. */
static int cp_row(const vla_cli *c, const vla_config *k, const vla_inputs *x, const cp_ref *r,
                  long T, long R, int w, double *row)
{
    const int dv = c->cfg.dv, d = c->cfg.d, nr = c->runs;
    const long L = T / R, n = (long)dv * d;
    const vla_fmt cf = vla_prec_compute(k->prec), sf = vla_prec_storage(k->prec);
    double *zeros = calloc((size_t)(d > dv ? d : dv), sizeof *zeros);
    double *Sin = malloc((size_t)nr * n * sizeof *Sin), *B = malloc((size_t)nr * n * sizeof *B);
    double *A = malloc((size_t)nr * n * sizeof *A), *I = calloc((size_t)nr * n, sizeof *I);
    double *Z = calloc((size_t)nr * n, sizeof *Z), *Se = malloc((size_t)nr * n * sizeof *Se);
    kept_outs ko = {malloc((size_t)nr * L * dv * sizeof(double)), 0, L, dv, VLA_FMT_F64};
    double *on = calloc(nr, sizeof *on), *od = calloc(nr, sizeof *od);
    double *sinmax = calloc(nr, sizeof *sinmax);
    if (!zeros || !Sin || !B || !A || !I || !Z || !Se || !ko.o || !on || !od || !sinmax)
        return fprintf(stderr, "vla-forms: out of memory\n"), 1;
    for (int h = 0; h < nr; h++)
        for (int i = 0; i < d; i++)
            I[(size_t)h * n + (size_t)i * d + i] = 1;
    for (int h = 0; h < nr; h++)
        for (long i = 0; i < n; i++)
            Sin[(size_t)h * n + i] = vla_round_fmt(sf, x->S0 ? x->S0[(size_t)h * n + i] : 0);
    memset(row, 0, CP_NCOL * sizeof *row);
    row[0] = (double)R;
    row[1] = k->form == VLA_FORM_CHUNK ? k->chunk : 0;
    row[3] = w;
    int st = 0;
    for (long q = 0; q < R && !st; q++) {
        const long t0 = q * L;
        for (long i = 0; i < (long)nr * L * dv; i++)
            ko.o[i] = NAN; /* a read-out no tap handed stays NaN, never silent */
        if ((st = cp_rank(c, k, x, t0, L, Z, 0, NULL, B, zeros)) ||
            (st = cp_rank(c, k, x, t0, L, I, w == CP_DIRECT, NULL, A, zeros)) ||
            (st = cp_rank(c, k, x, t0, L, Sin, 0, &ko, Se, zeros)))
            break;
        for (int h = 0; h < nr; h++) {
            double *Ah = A + (size_t)h * n, *Bh = B + (size_t)h * n, *Sh = Sin + (size_t)h * n;
            for (long i = 0; w == CP_TWO && i < n; i++) /* A = (A + B) - B */
                Ah[i] = vla_round_fmt(cf, Ah[i] - Bh[i]);
            for (long i = 0; i < L; i++) { /* the read-outs against the reference's */
                const double *a = ko.o + ((size_t)h * L + i) * dv,
                             *b = r->ro + ((size_t)h * T + t0 + i) * dv;
                for (int j = 0; j < dv; j++) {
                    on[h] += (a[j] - b[j]) * (a[j] - b[j]);
                    od[h] += b[j] * b[j];
                }
            }
            if (q == R - 1) {
                row[6] += relerr(Se + (size_t)h * n, cp_ref_S(r, nr, n, T, h), n) / nr;
                row[8] += relerr(ko.o + ((size_t)h * L + L - 1) * dv,
                                 r->ro + ((size_t)h * T + T - 1) * dv, dv) / nr;
            }
            cp_compose(cf, sf, dv, d, Sh, Ah, Bh, Se + (size_t)h * n); /* (Se spent) */
            memcpy(Sh, Se + (size_t)h * n, (size_t)n * sizeof *Sh);
            const double e = relerr(Sh, cp_ref_S(r, nr, n, t0 + L, h), n);
            if (q < R - 1)
                sinmax[h] = e > sinmax[h] || isnan(e) ? e : sinmax[h];
            else
                row[5] += e / nr;
        }
    }
    for (int h = 0; h < nr; h++) {
        row[4] += sinmax[h] / nr;
        row[7] += (on[h] == 0 ? 0 : sqrt(on[h] / od[h])) / nr;
    }
    free(zeros);
    free(Sin);
    free(B);
    free(A);
    free(I);
    free(Z);
    free(Se);
    free(ko.o);
    free(on);
    free(od);
    free(sinmax);
    return st;
}

static long gcd(long a, long b)
{
    return b ? gcd(b, a % b) : a;
}

static int cp(vla_cli *c, const vla_cli_spec *spec, forms_opts *o, vla_dat *out)
{
    const int nr = c->runs, np = o->np, nf = o->nf, nR = o->nR, ns = o->ns;
    vla_config k0 = c->cfg;
    vla_error why;
    if (c->cfg.dv != c->cfg.d)
        vla_cli_die(spec, "--what cp: the summary A is d x d and a rank computes it as a state "
                    "from S_in = I: it needs --dv = --d (here %d and %d)", c->cfg.dv, c->cfg.d);
    if (vla_config_h0(&k0, &why))
        vla_cli_die(spec, "--what cp: %s: a rank hands on an affine summary of S alone "
                    "(S_out = S_in A + B), which a model linear in S has", vla_error_msg(&why));
    long Cmax = 1, lcm = 1;
    for (int f = 0; f < nf; f++) {
        Cmax = o->forms[f].chunk > Cmax ? o->forms[f].chunk : Cmax;
        if (o->forms[f].form == VLA_FORM_SCAN)
            vla_cli_die(spec, "--forms scan: a rank's kernel is a seq or chunk:C form");
        if (o->forms[f].chunk > 1 && c->backend && strcmp(c->backend, "cpu"))
            vla_cli_die(spec, "--what cp --backend %s: a chunk form's every read-out reaches the "
                        "program on the cpu backend alone (vla_step_view.co)", c->backend);
    }
    for (int i = 0; i < nR && lcm <= c->steps; i++)
        lcm = lcm / gcd(lcm, o->ranks[i]) * o->ranks[i];
    if (lcm > c->steps)
        vla_cli_die(spec, "--ranks: more ranks than tokens: the ranks' least common multiple "
                    "exceeds --steps %ld (each R must be at most T)", c->steps);
    const long T = c->steps / (lcm * Cmax) * (lcm * Cmax);
    if (T < 1)
        vla_cli_die(spec, "--ranks: every rank's segment must hold whole chunks: --steps %ld holds "
                    "no multiple of %ld (the ranks' least common multiple %ld times the largest "
                    "C, %ld)", c->steps, lcm * Cmax, lcm, Cmax);
    for (int i = 0; i < nR; i++)
        whole_tokens(c, spec, T / o->ranks[i], "--ranks: a rank's segment");
    vla_inputs x;
    if (vla_inputs_draw(&x, c->stream, c->seed, c->cfg.d, c->cfg.dv, nr, T,
                        vla_model_reads(&c->cfg), &why))
        vla_cli_die(spec, "--stream: %s", vla_error_msg(&why));
    if (x.T < T)
        vla_cli_die(spec, "--stream %s: %ld steps, fewer than %ld", c->stream, x.T, T);
    const size_t nrow = (size_t)nR * ns, unit = nrow * CP_NCOL * sizeof(double);
    double *rows = calloc((size_t)np * nf * nrow * CP_NCOL, sizeof *rows);
    cp_ref r = {malloc((size_t)nr * T * c->cfg.dv * sizeof(double)),
                malloc((size_t)(nR * 4096 + 1) * nr * c->cfg.dv * c->cfg.d * sizeof(double)),
                malloc((size_t)(nR * 4096 + 1) * sizeof(long)), 0};
    if (!rows || !r.ro || !r.rs || !r.bt)
        vla_cli_fail(spec, "out of memory");
    vla_units *u; /* a block (precision, form) is a unit of the checkpoint */
    int status = vla_units_open(&u, c, spec, "block", NULL, np * nf, unit);
    for (int i = 0; i < np * nf && !status; i++) {
        double *blk = rows + (size_t)i * nrow * CP_NCOL;
        const void *saved = vla_units_get(u, i, NULL);
        if (saved) {
            memcpy(blk, saved, unit);
            continue;
        }
        vla_config k = block_config(c, o, i);
        char form[32];
        vla_form_name(&k, form, sizeof form);
        if (vla_track_check(&k, &why) || vla_form_check(&k, &why))
            vla_cli_die(spec, "%s in %s: %s", form, vla_prec_name(k.prec), vla_error_msg(&why));
        status = cp_reference(c, spec, o, &x, &k, T, &r);
        for (size_t j = 0; j < nrow && !status; j++)
            status = cp_row(c, &k, &x, &r, T, o->ranks[j / ns], o->sums[j % ns],
                            blk + j * CP_NCOL);
        if (!status && vla_units_save(u, i, blk, unit))
            vla_cli_fail(spec, "out of memory");
    }
    status = u ? vla_units_end(u, status) : status;
    if (!status)
        cp_table(c, o, out, rows, T);
    vla_inputs_free(&x);
    free(rows);
    free(r.ro);
    free(r.rs);
    free(r.bt);
    return status;
}

/* the options that --what does not take, and --form (vla-forms takes --forms), refused */
static void opts_check(const vla_cli *c, const vla_cli_spec *spec, const forms_opts *o)
{
    if (c->cfg.form != VLA_FORM_SEQ)
        vla_cli_die(spec, "--form: vla-forms takes its forms from --forms");
    if (o->padded && strcmp(o->what, "decode"))
        vla_cli_die(spec, "--pad: the prefill's pad tokens, for --what decode");
    if ((o->rejected || o->stale) && strcmp(o->what, "decode"))
        vla_cli_die(spec, "--%s: the state handed to the decode, for --what decode",
                    o->rejected ? "rejected" : "stale");
    if (o->rejected && o->stale)
        vla_cli_die(spec, "--rejected and --stale: one of the two (a rollback keeps drafts it "
                    "rejected, or misses tokens it accepted)");
    if (strcmp(o->what, "cp") && (o->nR || o->ns))
        vla_cli_die(spec, "--ranks, --summary: the context-parallel form's, for --what cp");
}

/* the lists not given: cp's (chunk:64 in f32, R = 1, 2, 4, ..., 64, both summaries), else every
 * form, every precision, and C = 2, 4, ..., VLA_CHUNK_MAX */
static void opts_defaults(forms_opts *o)
{
    if (!strcmp(o->what, "cp")) {
        if (!o->nf)
            vla_form_parse(&o->forms[o->nf++], "chunk:64");
        if (!o->np)
            vla_prec_parse("f32", &o->precs[o->np++]);
        if (!o->nR)
            for (long R = 1; R <= 64; R *= 2)
                o->ranks[o->nR++] = R;
        if (!o->ns)
            o->sums[o->ns++] = CP_TWO, o->sums[o->ns++] = CP_DIRECT;
    }
    if (!o->nf) {
        static const char *const all[] = {"seq",      "chunk:1",  "chunk:2",   "chunk:4",
                                          "chunk:8",  "chunk:16", "chunk:32",  "chunk:64",
                                          "chunk:128", "chunk:256", "scan"};
        for (int i = 0; i < 11; i++)
            vla_form_parse(&o->forms[o->nf++], all[i]);
    }
    if (!o->np)
        for (int p = 0; p < VLA_NPREC && p < LMAX; p++)
            o->precs[o->np++] = (vla_prec)p;
    if (!o->nC)
        for (long C = 2; C <= VLA_CHUNK_MAX; C *= 2)
            o->Cs[o->nC++] = C;
}

/* every --set must be read by one of the forms (decode: or by its cache) */
static void sets_read(const vla_cli *c, const vla_cli_spec *spec, const forms_opts *o)
{
    vla_config k[LMAX + 1];
    int n = 0;
    for (int f = 0; f < o->nf && n < LMAX; f++) {
        k[n] = c->cfg;
        k[n].form = o->forms[f].form;
        k[n++].chunk = o->forms[f].chunk;
    }
    if (!strcmp(o->what, "decode")) /* the decode's: the cache */
        k[n++] = c->cfg;
    vla_cli_sets_read(c, spec, k, n);
}

int main(int argc, char **argv)
{
    static forms_opts opts = {.what = "sweep", .samples = 100, .seeds = 1};
    static const vla_cli_opt own[] = {
        {"what", "Q", "sweep (the default): the error of every form in --forms and precision in "
                      "--precisions against the exact reference; ut: the UT transform's growth; "
                      "causal: how far the inputs after --prefix move the read-outs before it; "
                      "decode: a prefill of --prefix tokens in each form, then the seq form from "
                      "its state, against one pass; cp: the context-parallel form, the sequence "
                      "split over R ranks that pass affine summaries"},
        {"forms", "LIST", "sweep: the forms, e.g. seq,chunk:2,chunk:64,scan (default "
                          "seq,chunk:1,chunk:2,...,chunk:256,scan); each must fit the model's "
                          "switches (a nudge period that is a multiple of every C: --set "
                          "period=256)"},
        {"precisions", "LIST", "sweep: the precisions (default all)"},
        {"Cs", "LIST", "ut: the chunk sizes, 2..256 (default 2,4,8,16,32,64,128,256)"},
        {"samples", "N", "ut: draws per chunk size and seed (default 100)"},
        {"ranks", "LIST", "cp: the rank counts R, 1..4096 (default 1,2,4,8,16,32,64); the steps "
                          "are rounded down to a multiple of their least common multiple times "
                          "the largest C"},
        {"summary", "LIST", "cp: how a rank computes its summary's A: two (A = (A + B) - B from "
                            "a second run from S_in = I), direct (a run from I with v = 0), or "
                            "both (default two,direct)"},
        {"prefix", "P", "causal: the prefix whose read-outs are compared (tokens 1..P), the "
                        "inputs after it replaced; decode: the prefill's tokens"},
        {"pad", "G", "decode: the prefill's last chunk filled to C tokens by null tokens (q, k, "
                     "v = 0) whose log-decay is G <= 0 (0: exact no-ops, as zero padding; by "
                     "default the chunk is masked past the prefill, as the kernels do)"},
        {"rejected", "N", "decode: N rejected draft tokens (the stream's steps after --steps) "
                          "run after the prefill's and left in the state handed to the decode, as "
                          "a speculative decoder's rollback that keeps them"},
        {"stale", "N", "decode: the state handed to the decode is the prefill's after its first "
                       "P - N tokens, the last N accepted tokens' updates missing from it"},
        {"seeds", "N", "ut: seeds --seed .. --seed + N - 1, each drawing --samples (default 1): "
                       "the medians are the median over the seeds of each seed's, with their range"},
        {NULL, NULL, NULL},
    };
    static const vla_cli_spec spec = {
        .prog = "vla-forms",
        .summary =
            "The chunk and scan forms (docs/forms.md) against the recurrence they compute.\n"
            "--what sweep runs every form of --forms in every precision of --precisions on the\n"
            "same inputs (the stream's heads), beside the exact sequential recurrence (one per\n"
            "input format, shared by every run that rounds its inputs so: in double-double, checked\n"
            "against MPFR on head 0's first 4096 steps and MPFR itself where that check finds more\n"
            "than 1e-24, or where --ref-bits is not 256; the header's exact_reference line says\n"
            "which, docs/math.md 6.1.1),\n"
            "and writes the relative error of S_t, A_t and o_t at log-spaced checkpoints that\n"
            "every form has (multiples of the largest C), one block per precision and form.\n"
            "--what ut draws --samples chunks of C tokens and writes the growth of the UT\n"
            "transform T = (I + L)^-1 that the chunked delta rule computes (its largest entry,\n"
            "its condition number, whether binary16 or binary32 overflow) for raw keys N(0,1) in\n"
            "--d dimensions with rates sigmoid(N(0,1)) (fla issue 736), the same keys normalized,\n"
            "and L_ij ~ N(0,1) (fla issue 537), T by lib's own forward substitution. With\n"
            "--seeds N it draws them for N seeds and gives the median over the seeds of each\n"
            "seed's median with its range: one seed's median can be several times off.\n"
            "--what causal runs each form twice, the inputs after token --prefix P replaced the\n"
            "second time, and counts the read-outs of tokens 1..P that moved, in ulps of the io\n"
            "format (0 for a causal form; fla issue 1240's future-row anchor moves them).\n"
            "--what decode runs the first --prefix P tokens in each form of --forms (a serving\n"
            "engine's prefill), hands its state to the seq form on the tokens after them (the\n"
            "decode, in the state cache of --set cache from the hand-over on), and writes the\n"
            "read-out's and state's error of that and of one pass of the form over every token,\n"
            "and the largest difference between the two's read-outs in ulps of the io format\n"
            "(transformers issue 46190's prefill + decode against one pass; --pad G its pads;\n"
            "--rejected N and --stale N a rollback's state with N rejected drafts left in, or N\n"
            "accepted tokens missing).\n"
            "--what cp splits the stream's T tokens over R ranks (--ranks) and runs the form of\n"
            "--forms on each rank's segment: its affine summary (S_out = S_in A + B; --summary)\n"
            "from S_in = 0 and S_in = I, the summaries folded left to right in the compute format,\n"
            "each rank's read-outs from its incoming state, against the reference's one pass\n"
            "(docs/forms.md, the context-parallel form; default chunk:64 in f32).\n"
            "Threads (OMP_NUM_THREADS): sweep advances its engines in parallel, each on one\n"
            "thread, a window of 256 steps at a time; ut spreads each seed's draws over them.\n"
            "The table does not depend on their number.\n"
            "--resume: ut, causal and decode skip the rows (decode: blocks) finished before the\n"
            "stop (OUT.ckpt), the one in progress starts over; sweep goes on from the last checkpoint finished (OUT.ckpt\n"
            "keeps every engine's and reference's state at it).",
        .columns = "  sweep: t C prec s_relerr a_relerr o_relerr\n"
                   "    C     0 seq, -1 scan, else the chunk size\n"
                   "    prec  the precision policy (--precisions)\n"
                   "    *_relerr  ||X - X_exact||_F / ||X_exact||_F, the mean over the heads\n"
                   "  ut: C kind max_med max_max cond_med cond_max f16_over f32_over max_f32_med\n"
                   "      max_med_lo max_med_hi cond_med_lo cond_med_hi\n"
                   "    kind  raw (raw keys), unit (normalized keys), gauss (L ~ N(0,1))\n"
                   "    max_*   median (over the seeds of each seed's median over its draws) and max\n"
                   "            over all draws of max |T_ij| (binary64)\n"
                   "    cond_*  the same of cond_2(T) = ||T|| ||I + L||\n"
                   "    f16_over, f32_over  the fraction of all draws whose T exceeds the format's "
                   "largest number\n"
                   "    max_f32_med  the median max |T_ij| computed in binary32 (inf: overflow)\n"
                   "    *_med_lo, *_med_hi  the least and greatest of the seeds' medians (--seeds)\n"
                   "  causal: C prec prefix moved max_ulps max_abs\n"
                   "    moved     read-outs (entries) of tokens 1..P that moved, over the heads\n"
                   "    max_ulps  the largest move in ulps of the io format; max_abs the same "
                   "absolute\n"
                   "  decode: t C prec o_one o_pd s_one s_pd max_ulps max_abs\n"
                   "    o_one, s_one  the read-out's and state's relative error at t of one pass of "
                   "the form, the mean over the heads\n"
                   "    o_pd, s_pd    the same of the prefill then decode\n"
                   "    max_ulps  the largest difference between the two's read-outs of a token "
                   "of P+1..t, in ulps of the io format at the token's largest read-out; max_abs "
                   "the largest absolute (every read-out rounded to the io format)\n"
                   "  cp: R C prec summary s_in s_fold s_end o o_last\n"
                   "    R        the ranks; summary two or direct (--summary)\n"
                   "    s_in     the largest relative error of a rank's incoming state (ranks "
                   "2..R; 0 at R = 1), the mean over the heads\n"
                   "    s_fold   the same of the fold of all R summaries (the state after T)\n"
                   "    s_end    the same of the last rank's final state (its own run)\n"
                   "    o        the read-outs' relative error, norm-wise over the T tokens; "
                   "o_last the last token's",
        .example = "vla-forms --what sweep --model vla3 --set period=256 --stream lmlike --d 32 "
                   "--steps 1e5 --runs 2 --forms seq,chunk:16,chunk:64,scan --precisions f32,f16-kern\n"
                   "vla-forms --what ut --d 64 --samples 200 --seeds 10 --out data/forms-ut.dat",
        .default_steps = 1000,
        .default_stream = "lmlike",
        .default_model = VLA_VLA3,
        .default_ref = REF_EXACT,
        .opts = own,
        .on_opt = on_opt,
        .ctx = &opts,
    };
    vla_cli c;
    vla_cli_parse(&c, &spec, argc, argv);
    opts_check(&c, &spec, &opts);
    opts_defaults(&opts);
    if (strcmp(opts.what, "ut")) /* ut reads no --set */
        sets_read(&c, &spec, &opts);
    vla_dat *out = vla_cli_out(&c, &spec);
    int status = !strcmp(opts.what, "ut")       ? ut(&c, &spec, &opts, out)
                 : !strcmp(opts.what, "causal") ? causal(&c, &spec, &opts, out)
                 : !strcmp(opts.what, "decode") ? decode(&c, &spec, &opts, out)
                 : !strcmp(opts.what, "cp")     ? cp(&c, &spec, &opts, out)
                                                : sweep(&c, &spec, &opts, out);
    return vla_cli_close(out, &c, &spec, status);
}
