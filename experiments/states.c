/* states.c: vla-check trace:DIR --states DIR2, the recurrent states that a serving engine's prefix
 * cache saved (DIR2/states.npy) under the positions it claims for them (DIR2/positions.npy), each
 * measured against the trace's reference at its label and matched to the position whose state it
 * holds, the runs streamed over t (judge.h; docs/trace.md, "States saved by a cache"). */
#include "file.h"
#include "judge.h"
#include "refrun.h"
#include "report.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* one saved state's head: its distance to the reference at its label and at the nearest
 * position, each with that position's budget */
typedef struct {
    double dl, bl; /* at the label */
    double dm, bm; /* at the nearest position tm (-1: no finite distance anywhere) */
    long tm;
} strow_t;
enum { V_OK, V_MOVED, V_NONE }; /* agrees; holds another position's state; holds none */
/* an exact reference's double-double: to be checked at this pass, checked at an earlier one (the
 * same bits again), or not run (MPFR: its check failed, or dd refused it) */
enum { DD_CHECK, DD_DONE, DD_NO };
static const char *const vname[] = {"ok", "mislabelled", "unmatched"};

/* what judge_states' steps share */
typedef struct {
    vla_cli *c;
    const vla_cli_spec *spec;
    const states_opts *o;
    int prec_given, H, d, dv, N, bf16;
    long T;
    vla_npy xs, pos;  /* states.npy (N, heads, dv, d) and positions.npy (N,), read */
    vla_fmt sfmt;     /* states.npy's format */
    vla_config cfg;   /* the cache's configuration: its policy and form */
    char form[32];
    double slack;
    vla_engine_spec sp[NR];
    int alias[NR];
    double *S[NR];         /* each run's states at the step (H x dv x d: a head's its own) */
    strow_t *row;          /* N x H, state i's head h at i H + h */
    int *verdict;          /* N x H: V_* */
    int nbad;              /* the states that disagree with their labels (in a head or more) */
    vla_progress prog;
    char sum[1500], reftxt[600];
} states_t;

static const char *const dir2_files[] = {"states.npy", "positions.npy", "dtype.txt"};

static void dir2_path(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
}

/* the directory's file name read into a (ints: as integers, else as numbers, bfloat16 bit
 * patterns included) and its path into path; a file that cannot be read ends the run */
static void read_dir2(states_t *X, const char *name, vla_npy *a, int ints, char *path, size_t len)
{
    vla_error err;
    dir2_path(path, len, X->o->dir, name);
    if (ints ? vla_npy_read_int(path, a, &err) : vla_npy_read_bf16(path, a, &err))
        vla_cli_die(X->spec, "--states: %s", vla_error_msg(&err));
}

/* a's shape as numpy writes it, "(N, heads, dv, d)" or "(N,)" */
static void shape_text(char *got, size_t len, const vla_npy *a)
{
    snprintf(got, len, "(");
    for (int i = 0; i < a->ndim; i++)
        snprintf(got + strlen(got), len - strlen(got), "%s%ld", i ? ", " : "", a->shape[i]);
    snprintf(got + strlen(got), len - strlen(got), "%s)", a->ndim == 1 ? "," : "");
}

/* states.npy read and checked: (N, heads, dv, d) as S0.npy's rows, finite; its format */
static void read_states(states_t *X)
{
    const vla_cli_spec *spec = X->spec;
    char path[4200];
    read_dir2(X, "states.npy", &X->xs, 0, path, sizeof path);
    const vla_npy *a = &X->xs;
    if (!strcmp(a->dtype, "u2") && !X->bf16)
        vla_cli_die(spec, "--states: %s holds uint16 ('<u2'): bfloat16 bit patterns are read "
                          "only when %s/dtype.txt says bfloat16 (numpy has no bfloat16)", path,
                    X->o->dir);
    const long *s = a->shape;
    if (a->ndim != 4 || s[1] != X->H || s[2] != X->dv || s[3] != X->d) {
        char got[200];
        shape_text(got, sizeof got, a);
        const int transposed = a->ndim == 4 && s[1] == X->H && s[2] == X->d && s[3] == X->dv;
        vla_cli_die(spec, "--states: %s: shape %s, expected (N, heads, dv, d) = (N, %d, %d, %d): "
                          "N states, each in S0.npy's layout%s", path, got, X->H, X->dv, X->d,
                    transposed ? " (the state S as vla_model_get gives it, dv x d: fla's (K, V) "
                                 "state transposed)" : "");
    }
    if ((X->N = (int)s[0]) != s[0] || !X->N)
        vla_cli_die(spec, "--states: %s: shape (%ld, ...): %s", path, s[0],
                    s[0] ? "too many states" : "it holds no state (N = 0)");
    const long n = (long)X->dv * X->d;
    for (long i = 0; i < (long)X->N * X->H * n; i++)
        if (!isfinite(a->data[i]))
            vla_cli_die(spec, "--states: %s: %s at [%ld, %ld, %ld, %ld] (state, head, row, "
                              "column)", path, isnan(a->data[i]) ? "NaN" : "Inf",
                        i / (X->H * n), i / n % X->H, i % n / X->d, i % X->d);
    X->sfmt = !strcmp(a->dtype, "u2") ? VLA_FMT_BF16 : a->dtype[1] == '2' ? VLA_FMT_F16
              : a->dtype[1] == '4'    ? VLA_FMT_F32 : VLA_FMT_F64;
}

/* positions.npy read and checked: N integers, each a step of the runs, 0 .. T */
static void read_positions(states_t *X)
{
    const vla_cli_spec *spec = X->spec;
    char path[4200];
    read_dir2(X, "positions.npy", &X->pos, 1, path, sizeof path);
    const vla_npy *p = &X->pos;
    if (p->ndim != 1 || p->shape[0] != X->N) {
        char got[200];
        shape_text(got, sizeof got, p);
        vla_cli_die(spec, "--states: %s: shape %s, expected (N,) = (%d,): a position per "
                          "state of states.npy", path, got, X->N);
    }
    for (int i = 0; i < X->N; i++)
        if (!(p->data[i] >= 0 && p->data[i] <= X->T))
            vla_cli_die(spec, "--states: %s: %.0f at [%d] is outside 0..%ld (the state after t "
                              "tokens, t = 0 the initial state; the trace's runs take %ld "
                              "steps: --steps)", path, p->data[i], i, X->T, X->T);
}

/* the cache's configuration: its policy (--precision's, else the one states.npy's format names),
 * form and slack; a configuration that cannot be judged is a usage error */
static void states_config(states_t *X)
{
    const vla_cli *c = X->c;
    const vla_cli_spec *spec = X->spec;
    vla_config *cfg = &X->cfg;
    vla_cli_config_for(c, c->cfg.model, cfg);
    if (!X->prec_given)
        cfg->prec = X->sfmt == VLA_FMT_BF16 ? VLA_BF16_KERN : X->sfmt == VLA_FMT_F16 ? VLA_F16_KERN
                    : X->sfmt == VLA_FMT_F32 ? VLA_F32 : VLA_F64;
    X->slack = X->o->slack ? X->o->slack : judge_slack(vla_prec_io(cfg->prec));
    vla_form_name(cfg, X->form, sizeof X->form);
    vla_error ve;
    if (vla_config_h0(cfg, &ve))
        vla_cli_die(spec, "--states: %s: the states are compared as S alone: %s",
                    vla_model_name(cfg->model), vla_error_msg(&ve));
    if (vla_track_check(cfg, &ve) || vla_form_check(cfg, &ve) ||
        vla_cli_gates_check(c, cfg, &ve) || vla_cli_form_input_check(c, cfg, &ve))
        vla_cli_die(spec, "--states: %s %s %s: %s", vla_model_name(cfg->model),
                    vla_prec_name(cfg->prec), X->form, vla_error_msg(&ve));
    if (cfg->form == VLA_FORM_CHUNK && strcmp(c->backend, "cpu"))
        vla_cli_die(spec, "--states with --form %s: --backend cpu (the one that computes a last, "
                          "partial chunk, whose state is S_T), not %s", X->form, c->backend);
    if (!strcmp(c->out, "-"))
        return;
    struct stat sa, sb; /* the table never replaces what it judges */
    char path[4200];
    const int have = stat(c->out, &sa) == 0;
    for (size_t i = 0; i < sizeof dir2_files / sizeof *dir2_files; i++) {
        dir2_path(path, sizeof path, X->o->dir, dir2_files[i]);
        if (!strcmp(path, c->out) || (have && stat(path, &sb) == 0 && sa.st_dev == sb.st_dev &&
                                      sa.st_ino == sb.st_ino))
            vla_cli_die(spec, "--out %s is the cache's %s (--states); the judge never replaces "
                              "what it judges", c->out, path);
    }
}

/* head h at step t: the runs' states (the form's where it has one: at a chunk's end and at T),
 * the budget, and every saved state's distance to the reference's state, kept where t is its
 * label or the nearest position so far. 0, or 1 with the reason in why */
static int states_at(states_t *X, int h, vla_engine *const e[NR], long t, vla_error *why)
{
    const long n = (long)X->dv * X->d, C = X->cfg.form == VLA_FORM_CHUNK ? X->cfg.chunk : 1;
    const int form_there = t % C == 0 || t == X->T;
    double *S[NR];
    for (int r = 0; r < NR; r++) {
        S[r] = X->S[r] + h * n;
        const int rc = X->alias[r] != r || (r == R_FORM && !form_there) ? 0
                       : vla_engine_get(e[r], 0, VLA_Q_S, S[r]);
        if (rc)
            return vla_fail(why, rc, "head %d, step %ld: %s", h, t, vla_strerror(rc)), 1;
    }
    const double *runs[NR - R_RND];
    for (int r = R_RND; r < NR; r++)
        runs[r - R_RND] = r == R_FORM && !form_there ? NULL : S[X->alias[r]];
    const double b = judge_state_budget(S[R_REF], runs, NR - R_RND, n, X->d, X->cfg.prec,
                                        X->slack);
    for (int i = 0; i < X->N; i++) {
        const double dist = vla_rel_fro(X->xs.data + ((size_t)i * X->H + h) * n, S[R_REF], n);
        strow_t *w = &X->row[(size_t)i * X->H + h];
        if (X->pos.data[i] == t)
            w->dl = dist, w->bl = b;
        if (!isnan(dist) && (w->tm < 0 || dist < w->dm)) /* the first of equals */
            w->dm = dist, w->bm = b, w->tm = t;
    }
    return 0;
}

/* head h's engines: every run that stands for itself, one thread each (a step per advance: a
 * team of threads per step would cost more than the step), the references in double-double where
 * dd says so, checked where it says DD_CHECK; rk counts them. 0, or 1 with the reason in why */
static int states_engines(states_t *X, const vla_inputs *in, int dd[NR], vla_engine *e[NR],
                          vref_ddcheck *chk[NR], refck_t *rk, vla_error *why)
{
    for (int r = 0; r < NR; r++) {
        if (X->alias[r] != r)
            continue;
        vla_engine_spec sp = X->sp[r];
        sp.stream = NULL; /* the window's inputs, read once for every run */
        sp.in = in->in;
        sp.S0 = in->S0; /* the trace's initial state of this head, or NULL */
        sp.is_read = in->is_read;
        sp.T = in->T;
        sp.cycle = 1;
        sp.runs = 1;
        sp.threads = 1;
        const int use_dd = dd[r] != DD_NO;
        if (ref_new(&e[r], &chk[r], sp, use_dd, rk, why))
            return 1;
        if (use_dd && !chk[r])
            dd[r] = DD_NO; /* dd refused it (ref_new counted it once), or no exact reference */
        if (chk[r] && dd[r] == DD_DONE)
            vref_ddcheck_free(chk[r]), chk[r] = NULL; /* checked at an earlier pass */
    }
    return 0;
}

/* Head h over the trace, its runs a step at a time and every step measured (states_at), the
 * double-double references as dd says (head 0 checks them and writes their verdicts into dd;
 * the other heads take dd as head 0 left it): 0, REDO_MPFR (a check failed: head 0 again, that
 * reference in MPFR), or 1 with the reason in why */
static int states_head(states_t *X, int h, int dd[NR], long *done, vla_error *why)
{
    const long T = X->T;
    vla_engine *e[NR] = {NULL};
    vref_ddcheck *chk[NR] = {NULL};
    refck_t mine = {0}; /* (head 0's counts are the header's) */
    vla_inputs in;
    vla_error ve;
    for (int i = 0; i < X->N; i++)
        X->row[(size_t)i * X->H + h] = (strow_t){NAN, NAN, NAN, NAN, -1};
    if (vla_inputs_open_part(&in, X->c->stream, X->c->seed, X->d, X->dv, h, 1, WIN, T,
                             vla_model_reads(&X->cfg), &ve)) {
        *why = ve;
        return 1;
    }
    int st = states_engines(X, &in, dd, e, chk, h ? &mine : &refck, why) ||
             states_at(X, h, e, 0, why);
    for (long t = 0, to; !st && t < T; t = to) {
        to = t + WIN < T ? t + WIN : T;
        if (vla_inputs_fill(&in, t, to, &ve)) {
            *why = ve, st = 1;
            break;
        }
        for (long s = t + 1; !st && s <= to; s++) {
            for (int r = 0; r < NR && !st; r++)
                if (e[r] && ((st = vla_engine_advance(e[r], s) != 0) ||
                             (s == T && (st = vla_engine_finish(e[r]) != 0))))
                    *why = *vla_engine_error(e[r]); /* (finish: a chunk's last T mod C) */
            st = st || states_at(X, h, e, s, why);
        }
        int redo = 0, rc;
        for (int r = 0; r < NR && !st; r++) {
            if (chk[r] && (rc = vref_ddcheck_at(chk[r], e[r], to)))
                st = 1, vla_fail(why, rc, "the reference's check: %s", vla_strerror(rc));
            else if (chk[r] && to >= (T < VREF_DD_CHECK_STEPS ? T : VREF_DD_CHECK_STEPS)) {
                redo |= refck_note(chk[r], &refck) == REDO_MPFR; /* its check is over */
                dd[r] = vref_ddcheck_ok(chk[r]) ? DD_DONE : DD_NO;
                vref_ddcheck_free(chk[r]), chk[r] = NULL;
            }
        }
        st = st ? st : redo ? REDO_MPFR : 0;
#pragma omp critical(states_progress)
        vla_progress_update(&X->prog, *done += to - t);
    }
    for (int r = 0; r < NR; r++) {
        vref_ddcheck_free(chk[r]);
        vla_engine_free(e[r]);
    }
    vla_inputs_free(&in);
    return st;
}

/* every head: head 0 first, alone (it checks the double-double references, again in MPFR where
 * its check fails), then the others in parallel, each a thread's, as head 0's check decided.
 * 0, or 1 with the lowest failing head's reason in why */
static int states_runs(states_t *X, vla_error *why)
{
    int st, dd[NR];
    long done = 0;
    for (int r = 0; r < NR; r++) /* (ref_new runs dd where the exact reference is asked for) */
        dd[r] = DD_CHECK;
    while ((st = states_head(X, 0, dd, &done, why)) == REDO_MPFR)
        done = 0;
    if (st)
        return st;
    int *hst = calloc((size_t)X->H, sizeof *hst);
    vla_error *hwhy = malloc((size_t)X->H * sizeof *hwhy);
    if (!hst || !hwhy) {
        free(hst), free(hwhy);
        return vla_fail(why, VLA_ENOMEM, "out of memory"), 1;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int h = 1; h < X->H; h++) {
        int mine[NR];
        memcpy(mine, dd, sizeof mine);
        hst[h] = states_head(X, h, mine, &done, &hwhy[h]);
    }
    for (int h = 1; h < X->H && !st; h++)
        if ((st = hst[h] != 0))
            *why = hwhy[h];
    free(hst), free(hwhy);
    return st;
}

/* each saved state's verdict, head by head, and the summary line naming each state that
 * disagrees with its label, by its first such head */
static void states_verdicts(states_t *X)
{
    const int H = X->H;
    char said[1200] = "", part[400];
    size_t n = 0;
    for (int i = 0; i < X->N; i++) {
        int first = -1, nh = 0;
        for (int h = 0; h < H; h++) {
            const strow_t *w = &X->row[(size_t)i * H + h];
            int *v = &X->verdict[(size_t)i * H + h];
            *v = judge_within(w->dl, w->bl)                   ? V_OK
                 : w->tm >= 0 && judge_within(w->dm, w->bm) ? V_MOVED
                                                             : V_NONE;
            if (*v != V_OK && !nh++)
                first = h;
        }
        if (!nh)
            continue;
        X->nbad++;
        const strow_t *w = &X->row[(size_t)i * H + first];
        const long lab = (long)X->pos.data[i];
        if (X->verdict[(size_t)i * H + first] == V_MOVED)
            snprintf(part, sizeof part, "content matches t=%ld (distance %.3g)", w->tm, w->dm);
        else if (w->tm >= 0)
            snprintf(part, sizeof part, "matches no position (nearest t=%ld, distance %.3g "
                     "against budget %.3g)", w->tm, w->dm, w->bm);
        else
            snprintf(part, sizeof part, "matches no position (no finite distance at any t)");
        if (n < sizeof said)
            n += snprintf(said + n, sizeof said - n, "; state %d: label t=%ld, %s, at its label "
                          "%.3g against budget %.3g%s (head %d; %d of %d heads disagree)", i, lab,
                          part, w->dl, w->bl, w->bl < 1 ? "" : " (1 or more: it judges nothing)",
                          first, nh, H);
    }
    if (X->nbad)
        snprintf(X->sum, sizeof X->sum, "disagree: %d of %d states disagree with their "
                 "labels%s", X->nbad, X->N, said);
    else
        snprintf(X->sum, sizeof X->sum, "ok: all %d states agree with their labels, in all %d "
                 "heads", X->N, H);
}

/* the table (--out): a row per saved state and head, the header saying what was compared with
 * what: 0, or 1 when it could not be written */
static int states_table(states_t *X)
{
    const vla_cli *c = X->c;
    const char *sets[VLA_CLI_MAXSETS + 64];
    const int nsets = cli_settings(c, sets, VLA_CLI_MAXSETS + 64);
    char setall[4000] = "", files[600], labels[300] = "";
    for (int i = 0, m = 0; i < nsets && m < (int)sizeof setall; i++)
        m += snprintf(setall + m, sizeof setall - m, "%s%s", i ? " " : "", sets[i]);
    for (int i = 0, m = 0; i < X->N && i <= 16 && m < (int)sizeof labels; i++) /* the first */
        m += snprintf(labels + m, sizeof labels - m, i < 16 ? "%s%.0f" : ", ...", i ? ", " : "",
                      X->pos.data[i]);
    if (c->ref == REF_EXACT)
        refck_describe(c->ref_bits, X->T, "reference", X->reftxt, sizeof X->reftxt);
    else
        snprintf(X->reftxt, sizeof X->reftxt, "f64 (lib in binary64)");
    vla_dat *out = vla_cli_out(c, X->spec);
    vla_dat_meta(out, "model", "%s%s", vla_model_name(X->cfg.model), vla_cli_model_src(c, NULL, 1));
    vla_dat_meta(out, "stream", "%s", c->stream);
    vla_cli_stream_files(c, files, sizeof files);
    vla_dat_meta(out, "files", "%s", files);
    vla_dat_meta(out, "states", "%s (states.npy %s: %d states of %d heads, dv = %d, d = %d; "
                 "positions.npy: %s)", X->o->dir, judge_dtype_name(X->sfmt), X->N, X->H, X->dv,
                 X->d, labels);
    vla_dat_meta(out, "policy", "%s%s, form %s", vla_prec_name(X->cfg.prec),
                 X->prec_given ? "" : " (from states.npy's dtype)", X->form);
    vla_dat_meta(out, "settings", "%s", nsets ? setall : "none");
    vla_dat_meta(out, "reference", "%s on the inputs as given, at every t in 0..%ld", X->reftxt,
                 X->T);
    vla_dat_meta(out, "slack", "%g (a state agrees with its label t when ||X - S_t||_F / "
                 "||S_t||_F <= budget = slack x max(the state errors at t of the seq emulation, "
                 "the form's, the reference on rounded inputs, sqrt(d) u), as --outputs' S.npy)",
                 X->slack);
    vla_dat_meta(out, "summary", "%s", X->sum);
    vla_dat_columns(out, "state head label matched dist_label budget_label dist_matched "
                         "budget_matched verdict");
    for (long k = 0; k < (long)X->N * X->H; k++) {
        const strow_t *w = &X->row[k];
        const double v[9] = {k / X->H, k % X->H, X->pos.data[k / X->H], w->tm, w->dl, w->bl,
                             w->dm, w->bm, 0};
        const char *nm[9] = {NULL};
        nm[3] = w->tm < 0 ? "none" : NULL;
        nm[8] = vname[X->verdict[k]];
        vla_dat_row_named(out, v, nm, 9);
    }
    return vla_cli_close(out, c, X->spec, 0) ? 1 : 0;
}

static int states_close(states_t *X, int st)
{
    vla_progress_end(&X->prog);
    for (int r = 0; r < NR; r++)
        free(X->S[r]);
    free(X->row), free(X->verdict);
    vla_npy_free(&X->xs);
    vla_npy_free(&X->pos);
    return st;
}

int judge_states(vla_cli *c, const vla_cli_spec *spec, const states_opts *o, int prec_given)
{
    if (c->ref == REF_NONE)
        vla_cli_die(spec, "--states: the states are judged against a reference: --ref exact (the "
                          "default) or f64, not none");
    if (!c->model_txt && !c->model_opt)
        vla_cli_die(spec, "--states judges one model: %s; give --model M",
                    strncmp(c->stream, "trace:", 6) ? "the stream names none"
                                                    : "the trace has no model.txt naming it");
    if (c->resume)
        vla_cli_die(spec, "--states runs in one pass and keeps no checkpoint: no --resume");
    if (c->nseq)
        vla_cli_die(spec, "--states: the trace packs %ld sequences (cu_seqlens.npy): the saved "
                    "states are checked against one sequence's positions (a trace without it)",
                    c->nseq);
    states_t X = {.c = c, .spec = spec, .o = o, .prec_given = prec_given, .H = c->runs,
                  .d = c->cfg.d, .dv = c->cfg.dv, .T = c->whole_steps};
    X.bf16 = judge_read_dtype(spec, "--states", o->dir, "states.npy");
    read_states(&X);
    read_positions(&X);
    states_config(&X);
    char unread[600];
    if (vla_cli_unread(c, &X.cfg, unread, sizeof unread))
        fprintf(stderr, "vla-check: warning: %s\n", unread);
    judge_run_specs(c, &X.cfg, X.sp, X.alias);
    const size_t ns = (size_t)X.H * X.dv * X.d, nr = (size_t)X.N * X.H;
    int ok = (X.row = malloc(nr * sizeof *X.row)) && (X.verdict = malloc(nr * sizeof *X.verdict));
    for (int r = 0; r < NR; r++)
        ok = ok && (X.S[r] = malloc(ns * sizeof(double)));
    if (!ok) {
        fprintf(stderr, "vla-check: out of memory for %d runs of %d heads\n", NR, X.H);
        return states_close(&X, 1);
    }
    vla_progress_start(&X.prog, (long)X.H * X.T, "head-steps");
    vla_error why;
    const int st = states_runs(&X, &why);
    if (st && vla_cli_stop) {
        fprintf(stderr, "vla-check: interrupted (signal %d); nothing saved: --states runs in one "
                        "pass\n", (int)vla_cli_stop);
        return states_close(&X, 3);
    }
    if (st) {
        fprintf(stderr, "vla-check: --states: the runs of %s %s did not run: %s\n",
                vla_model_name(X.cfg.model), vla_prec_name(X.cfg.prec), vla_error_msg(&why));
        return states_close(&X, 1);
    }
    states_verdicts(&X);
    if (states_table(&X))
        return states_close(&X, 1);
    fprintf(stderr, "vla-check: states: %s\n", X.sum);
    return states_close(&X, X.nbad > 0);
}
