/* judge.c: vla-check --outputs DIR2, a kernel's own read-outs (o.npy, its final state S.npy) and
 * gradients (dq.npy ...) judged per head against the exact reference of the same inputs, beside what
 * vlastab's emulation of the kernel's policy attains; the verdict table, PREFIX.json and PREFIX.md
 * (judge.h; docs/trace.md, "Your own kernel, judged"). */
#include "judge.h"
#include "ckpt.h"
#include "file.h"
#include "refrun.h"
#include "report.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- --outputs DIR2: your kernel's own read-outs against the exact reference (docs/trace.md,
 * "Your own kernel, judged"). The kernel's error is measured per head beside what the
 * policy attains (vlastab's own emulation in seq and in the kernel's form, its read-outs taken
 * through the same output format) and what the inputs' rounding alone costs; a head is ok when
 * its windowed error is within --slack times the largest of the three. ---- */

/* whether a budget checks anything: a relative error of 1 is that of a read-out of 0, so a
 * budget of 1 or more (or NaN: no error attainable) passes an output that computes nothing, and a
 * row judged against it fails as not judged */
static int checks(double budget) { return budget < 1; }

int judge_within(double err, double budget) { return err <= budget && checks(budget); }

/* x is worse than cur: larger, or NaN (a NaN stays the worst) */
static int worse(double x, double cur) { return !isnan(cur) && !(x <= cur); }

/* sqrt(a / b), the ratio of two norms from their squares: 0 when a is 0, Inf when only b is */
static double nratio(double a, double b) { return a == 0 ? 0 : sqrt(a) / sqrt(b); }

/* the spacing of format f's numbers at x: 2^(E - p + 1), E = x's exponent, at least emin */
static double ulp_in(vla_fmt f, double x)
{
    int e, emin = ilogb(vla_fmt_min_normal(f));
    frexp(x, &e); /* |x| = m 2^e, m in [1/2, 1): E = e - 1 */
    if (x == 0 || !isfinite(x) || e - 1 < emin)
        e = emin + 1;
    return ldexp(1, e - vla_fmt_precision(f));
}

/* one head's errors against the reference */
typedef struct {
    double rel_rms, max_abs, mrw, max_rel_pt, ulps;
    /* the least-squares ratio of the numbers to the reference's, sum x y / sum y y, and the
     * relative error left once they are divided by it: a constant ratio names a scale or a
     * normalization */
    double scale, rel_after_scale;
    long t_mrw, t_nonfinite; /* 1-based steps; 0: none */
} meas_t;

/* ... measured a step at a time (meas_elems, meas_push), in memory of the window, not of T: the running sums
 * and the last w steps' squared norms. The squares are summed plainly, as fro2 (lib/measure.c)
 * does in its safe range; a head whose read-outs or errors reach 2^500 (their squares summed over
 * T dv terms would overflow) or stay below 2^-500 is measured again with its numbers scaled by a
 * power of 2 sc, exactly, so that its ratios are those of its numbers, not Inf / Inf: meas_end
 * says which sc the head's largest finite number asks for, known only at its end. */
typedef struct {
    meas_t m;
    double sc, top, se, sr, sxy, sxx;
    double *e2, *r2; /* steps s - w + 1 .. s, step s at s % w */
    long s, w;       /* the steps measured; the window's length */
} meas_run;

static int meas_begin(meas_run *r, long T, long W, double sc)
{
    *r = (meas_run){.sc = sc, .w = W < T ? W : T}; /* one window of T tokens when T < W */
    r->m.mrw = -1;
    r->e2 = malloc(2 * (size_t)r->w * sizeof *r->e2);
    r->r2 = r->e2 + r->w;
    return r->e2 ? VLA_OK : VLA_ENOMEM;
}

/* step s's read-out x against the reference y (dv numbers), in ulps of format fo: the measures
 * of its numbers, which no order of the steps changes (maxima, worse's NaN kept whatever comes
 * after it; the first non-finite step, the least), and its squared norms, *a (the error's) and
 * *b (the reference's), for meas_push */
static void meas_elems(meas_run *r, long s, const double *x, const double *y, int dv, vla_fmt fo,
                       double *a, double *b)
{
    meas_t *m = &r->m;
    double sa = 0, sb = 0;
    for (int j = 0; j < dv; j++) {
        double diff = fabs(x[j] - y[j]), ds = diff * r->sc, ys = y[j] * r->sc, xs = x[j] * r->sc;
        r->sxy += xs * ys;
        r->sxx += xs * xs;
        if (isfinite(diff) && diff > r->top)
            r->top = diff;
        if (isfinite(y[j]) && fabs(y[j]) > r->top)
            r->top = fabs(y[j]);
        if (!isfinite(x[j]) && (!m->t_nonfinite || s + 1 < m->t_nonfinite))
            m->t_nonfinite = s + 1;
        sa += ds * ds;
        sb += ys * ys;
        if (worse(diff, m->max_abs))
            m->max_abs = diff;
        if (worse(diff / ulp_in(fo, y[j]), m->ulps))
            m->ulps = diff / ulp_in(fo, y[j]);
    }
    *a = sa, *b = sb;
}

/* the next step's squared norms (meas_elems'), in step order: the sums and the windows */
static void meas_push(meas_run *r, double a, double b)
{
    meas_t *m = &r->m;
    const long s = r->s++, w = r->w;
    r->e2[s % w] = a;
    r->r2[s % w] = b;
    r->se += a;
    r->sr += b;
    if (worse(nratio(a, b), m->max_rel_pt))
        m->max_rel_pt = nratio(a, b);
    if (s < w - 1)
        return;
    /* the window of w tokens ending here: the error's norm over the window's read-outs' norm, so
     * that a read-out near 0 weighs as little as it is; at the worst one, its token with the
     * largest error */
    double ea = 0, eb = 0;
    for (long t = s - w + 1; t <= s; t++)
        ea += r->e2[t % w], eb += r->r2[t % w];
    if (!worse(nratio(ea, eb), m->mrw))
        return;
    m->mrw = nratio(ea, eb);
    double big = -1;
    for (long t = s - w + 1; t <= s; t++)
        if (worse(r->e2[t % w], big))
            big = r->e2[t % w], m->t_mrw = t + 1;
}

/* the head measured: its rel_rms; the scale its numbers ask for, which must be the one it was
 * measured with (else measure it again with that one) */
static double meas_end(meas_run *r)
{
    r->m.rel_rms = nratio(r->se, r->sr);
    r->m.scale = r->sr > 0 ? r->sxy / r->sr : NAN;
    const double left = r->sxx - r->sxy * r->m.scale; /* sum (x - a y)^2, a the scale */
    r->m.rel_after_scale = r->sr > 0 ? sqrt(left > 0 ? left : 0) / sqrt(r->sr) : NAN;
    free(r->e2);
    r->e2 = r->r2 = NULL;
    const double top = r->top;
    return top > 0x1p500 || (top > 0 && top < 0x1p-500) ? ldexp(1, -ilogb(top)) : 1;
}

/* one packed sequence of one head (the trace's cu_seqlens.npy): the kernel's squared error and
 * the reference's squared norm summed over its read-outs (meas_elems' numbers, scaled as the
 * head's), its largest per-token relative error and that token (1-based), its first token's */
typedef struct {
    double se, sr, top, first;
    long t_top;
} seqm_t;

/* the packed sequence (0 .. nseq - 1) of 0-based step s */
static long seq_of(const vla_cli *c, long s)
{
    long lo = 0, hi = c->nseq - 1;
    while (lo < hi) {
        const long mid = (lo + hi + 1) / 2;
        if (c->cu[mid] <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* step s's squared error a and squared reference norm b (meas_elems') into its sequence's */
static void seq_push(seqm_t *q, const vla_cli *c, long s, double a, double b)
{
    seqm_t *x = q + seq_of(c, s);
    const double rel = nratio(a, b);
    x->se += a, x->sr += b;
    if (s == c->cu[x - q])
        x->first = rel;
    if (worse(rel, x->top) || !x->t_top)
        x->top = rel, x->t_top = s + 1;
}

/* ---- the judge's runs: the reference (exact, or lib's binary64, on the inputs as given), the
 * same on the inputs rounded to the policy's io format, the policy's emulation in seq and in the
 * kernel's form, advanced together on the trace's inputs read once, a window of WIN steps at a
 * time, and each head's read-outs measured against the reference's as they come (the kernel's
 * read from o.npy by the window): the memory is the states' and the windows', not T's. A pass
 * runs a block of heads (a head's numbers are the same in any block); the dd references are
 * checked on head 0, in the first block, and the later blocks run as that check decided ---- */
/* (the runs R_REF .. R_FORM: judge.h) */
/* the measures of a head against the reference: the kernel's, then runs R_RND .. R_FORM's */
#define M_KERNEL R_REF
/* an exact reference's double-double: checked at this pass (its note to come), checked at an
 * earlier one (the same bits again), or not run (MPFR: its check failed, or dd refused it) */
enum { DD_CHECK, DD_DONE, DD_NO };

typedef struct {
    const vla_cli *c;
    vla_engine_spec sp[NR];
    int alias[NR];  /* the run whose read-outs stand for r's (R_RND: R_REF at f64; R_FORM: R_SEQ) */
    int dd[NR];     /* DD_* */
    const vla_config *cfg; /* the kernel's configuration (R_FORM's) */
    const vla_npy *ko; /* the kernel's o.npy, opened */
    vla_progress *prog; /* head-steps: the read-outs' passes, then the gradients' */
    long *done;
    long T, W;
    vla_fmt io, ofmt, fo;
    double *sc;     /* H x NR: each measure's scale (meas_end) */
    meas_t *m;      /* H x NR: the measures */
    double *S[NR];  /* each run's final states (H x dv x d) */
    seqm_t *sq;     /* H x nseq, a trace's packed sequences (c->cu): each one's measures */
} jpass_t;

/* the steps done .. upto - 1 of heads h0 .. h0 + H - 1 measured, every run's against the
 * reference's: the kernel's read-outs from kbuf (its window), the runs' from their taps */
static void window_measure(jpass_t *J, int h0, int H, const taps_t *tp, meas_run *mr,
                           const double *kbuf, double *row, const double *nan, long done, long upto)
{
    const vla_cli *c = J->c;
    const int dv = J->cfg->dv;
    for (int h = 0; h < H; h++)
        for (long s = done; s < upto; s++) {
            const size_t slot = (size_t)h * RING + (size_t)(s % RING);
            const double *ref = tp[R_REF].seen[slot] ? tp[R_REF].o + slot * dv : nan;
            for (int k = 0; k < NR; k++) {
                const taps_t *x = &tp[J->alias[k]];
                const double *o = k == M_KERNEL ? kbuf + ((size_t)h * RING + (s - done)) * dv
                                  : x->seen[slot] ? x->o + slot * dv
                                                  : NULL;
                for (int j = 0; j < dv; j++) /* NaN where none came; the emulations' read-outs
                                              * rounded as the kernel's are */
                    row[j] = !o ? NAN
                             : k == R_SEQ || k == R_FORM
                                 ? vla_round_fmt(J->ofmt, vla_round_fmt(J->io, o[j]))
                                 : o[j];
                double a, b;
                meas_elems(&mr[h * NR + k], s, row, ref, dv, J->fo, &a, &b);
                meas_push(&mr[h * NR + k], a, b);
                if (k == M_KERNEL && J->sq)
                    seq_push(J->sq + (size_t)(h0 + h) * c->nseq, c, s, a, b);
            }
        }
}

/* One pass over the trace of heads h0 .. h0 + H - 1: 0, REDO_MPFR (a dd reference failed its
 * check: pass again, that reference in MPFR), or 1 with the reason in why and the run that failed
 * in *failed (-1: o.npy). *rescale: a measure's numbers asked for another scale than J->sc's (now
 * in J->sc): pass again */
static int judge_pass(jpass_t *J, int h0, int H, int *failed, int *rescale, vla_error *why)
{
    const vla_cli *c = J->c;
    const vla_config *cfg = J->cfg;
    const int d = cfg->d, dv = cfg->dv;
    const long T = J->T, C = cfg->form == VLA_FORM_CHUNK ? cfg->chunk : 1;
    vla_engine *e[NR] = {NULL};
    vref_ddcheck *chk[NR] = {NULL};
    taps_t tp[NR] = {{0}};
    vla_inputs in;
    double *kbuf = malloc((size_t)H * RING * dv * sizeof *kbuf);
    double *row = malloc(2 * (size_t)dv * sizeof *row), *nan = row + dv;
    meas_run *mr = calloc((size_t)H * NR, sizeof *mr);
    int st = 0;
    *failed = R_REF, *rescale = 0;
    vla_fail(why, VLA_ENOMEM, "out of memory");
    if (row)
        for (int j = 0; j < dv; j++)
            nan[j] = NAN; /* a read-out where none came */
    vla_error ve;
    if (J->sq)
        memset(J->sq + (size_t)h0 * c->nseq, 0, (size_t)H * c->nseq * sizeof *J->sq);
    if (!kbuf || !row || !mr ||
        vla_inputs_open_part(&in, c->stream, c->seed, d, dv, h0, H, WIN, T, vla_model_reads(cfg),
                             &ve)) {
        if (kbuf && row && mr)
            *why = ve;
        return free(kbuf), free(row), free(mr), 1;
    }
    for (int r = 0; r < NR && !st; r++) {
        if (J->alias[r] != r)
            continue;
        vla_engine_spec sp = J->sp[r];
        sp.stream = NULL; /* the window's inputs, read once for every run */
        sp.in = in.in;
        sp.S0 = in.S0; /* the trace's initial states of these heads, or NULL */
        sp.cu = in.cu; /* its packed sequences (nseq 0: one) */
        sp.nseq = in.nseq;
        sp.is_read = in.is_read;
        sp.T = in.T;
        sp.cycle = 1;
        sp.runs = H;
        tp[r] = (taps_t){malloc((size_t)H * RING * dv * sizeof(double)), malloc((size_t)H * RING),
                         dv, (int)C, NULL, NULL};
        sp.taps = VLA_TAP_O;
        sp.on_step = taps_on_step;
        sp.ctx = &tp[r];
        *failed = r;
        const int use_dd = J->dd[r] != DD_NO;
        if (!tp[r].o || !tp[r].seen)
            st = 1;
        else if (!(st = ref_new(&e[r], &chk[r], sp, use_dd, &refck, why)) && use_dd &&
                 !chk[r])
            J->dd[r] = DD_NO; /* dd refused it (ref_new counted it once), or no exact reference */
        if (chk[r] && J->dd[r] == DD_DONE)
            vref_ddcheck_free(chk[r]), chk[r] = NULL; /* checked at an earlier pass */
    }
    double *const sc = J->sc + (size_t)h0 * NR;
    meas_t *const m = J->m + (size_t)h0 * NR;
    for (int i = 0; !st && i < H * NR; i++)
        st = meas_begin(&mr[i], T, J->W, sc[i]) ? (*failed = R_REF, 1) : 0;
    long done = 0;
    for (long t = 0, to; !st && t < T; t = to) {
        to = t + WIN < T ? t + WIN : T;
        if (vla_inputs_fill(&in, t, to, &ve)) {
            *why = ve;
            st = 1, *failed = R_REF;
            break;
        }
        int redo = 0, rc[NR] = {0};
        for (int r = 0; r < NR && !st; r++) {
            if (!e[r])
                continue;
            *failed = r;
            if ((st = vla_engine_advance(e[r], to) != 0) ||
                (to == T && (st = vla_engine_finish(e[r]) != 0))) /* a chunk's last T mod C */
                *why = *vla_engine_error(e[r]);
        }
        /* the dd references' checks against MPFR (the most of head 0's block), side by side */
        const int nth = vla_cli_threads() < NR ? vla_cli_threads() : NR;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth)
        for (int r = 0; r < NR; r++)
            if (!st && chk[r])
                rc[r] = vref_ddcheck_at(chk[r], e[r], to);
        for (int r = 0; r < NR && !st; r++) {
            if (!chk[r])
                continue;
            *failed = r;
            if (rc[r])
                st = 1, vla_fail(why, rc[r], "the reference's check: %s", vla_strerror(rc[r]));
            else if (chk[r] && to >= (T < VREF_DD_CHECK_STEPS ? T : VREF_DD_CHECK_STEPS)) {
                /* its check is over: noted once (refck_describe) */
                redo |= refck_note(chk[r], &refck) == REDO_MPFR;
                J->dd[r] = vref_ddcheck_ok(chk[r]) ? DD_DONE : DD_NO;
                vref_ddcheck_free(chk[r]), chk[r] = NULL;
            }
        }
        if (st || redo) {
            st = st ? st : REDO_MPFR;
            break;
        }
        /* the steps every run has read out (a chunk's come at its end) */
        const long upto = to == T ? T : to / C * C;
        for (int h = 0; h < H && !st; h++)
            if (upto > done &&
                vla_npy_read_steps(J->ko, h0 + h, done, upto - done, kbuf + (size_t)h * RING * dv,
                                   &ve))
                st = 1, *failed = -1, *why = ve;
        if (!st)
            window_measure(J, h0, H, tp, mr, kbuf, row, nan, done, upto);
        for (int r = 0; r < NR && !st; r++)
            for (int h = 0; h < H && tp[r].seen; h++)
                for (long s = done; s < upto; s++)
                    tp[r].seen[(size_t)h * RING + (size_t)(s % RING)] = 0;
        vla_progress_update(J->prog, *J->done += (upto - done) * H);
        done = upto;
    }
    for (int r = 0; r < NR && !st; r++)
        for (int h = 0; h < H; h++)
            vla_engine_get(e[J->alias[r]], h, VLA_Q_S, J->S[r] + (size_t)(h0 + h) * dv * d);
    for (int i = 0; i < H * NR; i++) {
        const double need = meas_end(&mr[i]);
        if (!st) {
            *rescale |= need != sc[i];
            sc[i] = need, m[i] = mr[i].m;
        }
    }
    for (int r = 0; r < NR; r++) {
        vref_ddcheck_free(chk[r]);
        vla_engine_free(e[r]);
        free(tp[r].o), free(tp[r].seen);
    }
    vla_inputs_free(&in);
    free(kbuf), free(row), free(mr);
    return st;
}

/* one head's row: the kernel's errors, the attainable ones and the budget */
typedef struct {
    meas_t k;
    double bits, att_seq, att_form, inp, budget;
    int ok;
} head_t;

/* --slack's default for a policy of io format io: 2 where it is a 16-bit format, whose rounding
 * of the read-outs is most of any correct kernel's error (fla-style chunked gdn, kda and mamba2 in
 * bfloat16, chunks 16 to 128: within 1.01 of the attainable error), 4 in binary32 and binary64,
 * where correct kernels' orders of accumulation differ by more beside their rounding (0.86 to
 * 1.56 times the attainable error on the same kernels in float32: bench/mutants/README.md) */
double judge_slack(vla_fmt io) { return vla_fmt_precision(io) <= 11 ? 2 : 4; }

/* whether DIR2 has a file at path: anything there, a link to nothing too (then read, and refused
 * as unreadable), never passed over as if it were not there */
static int present(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* the files of DIR2 that the judge reads */
static const char *const dir2_names[] = {"dtype.txt", "o.npy", "S.npy", "dq.npy", "dk.npy",
                                         "dv.npy", "dbeta.npy", "dg.npy", "da.npy", "db.npy",
                                         "du.npy", "do.npy"};

/* the outputs' folder's file NAME: its path */
static void out_path(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
}

/* DIR2/NAME.npy as a kernel's array of the shape (n0, n1, n2): read (lazy: opened, to be read by
 * vla_npy_read_steps), or a usage error; *fmt
 * the format it was saved in (bfloat16 for uint16 with DIR2/dtype.txt saying bfloat16; the
 * others as their dtype says: a bfloat16 o beside a float32 state, as fla returns them) */
static void read_outputs(const vla_cli_spec *spec, const char *dir, const char *name,
                         const char *axes, long n0, long n1, long n2, int bf16, int lazy,
                         vla_npy *a, vla_fmt *fmt)
{
    char path[4200];
    vla_error err;
    out_path(path, sizeof path, dir, name);
    if ((lazy ? vla_npy_open_bf16 : vla_npy_read_bf16)(path, a, &err))
        vla_cli_die(spec, "--outputs: %s", vla_error_msg(&err));
    if (!strcmp(a->dtype, "u2") && !bf16)
        vla_cli_die(spec, "--outputs: %s holds uint16 ('<u2'): bfloat16 bit patterns are read "
                          "only when %s/dtype.txt says bfloat16 (numpy has no bfloat16)", path,
                    dir);
    /* one number per step (dbeta, a scalar dg): (n0, n1) or (n0, n1, 1), as beta.npy */
    int flat = n2 == 1 && a->ndim == 2 && a->shape[0] == n0 && a->shape[1] == n1;
    if (!flat &&
        (a->ndim != 3 || a->shape[0] != n0 || a->shape[1] != n1 || a->shape[2] != n2)) {
        char got[200] = "(";
        for (int i = 0; i < a->ndim; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%ld", i ? ", " : "",
                     a->shape[i]);
        vla_cli_die(spec, "--outputs: %s: shape %s), expected %s = (%ld, %ld, %ld) as the "
                          "trace's (--runs and --steps: the heads and steps judged)",
                    path, got, axes, n0, n1, n2);
    }
    *fmt = !strcmp(a->dtype, "u2") ? VLA_FMT_BF16
           : a->dtype[1] == '2'        ? VLA_FMT_F16
           : a->dtype[1] == '4'        ? VLA_FMT_F32
                                       : VLA_FMT_F64;
}

const char *judge_dtype_name(vla_fmt f)
{
    return f == VLA_FMT_BF16 ? "bfloat16" : f == VLA_FMT_F16 ? "float16" : f == VLA_FMT_F32
                                                                            ? "float32" : "float64";
}

/* o rounded as the kernel's read-outs are: into the policy's io format, then the file's */
static void round_out(double *o, size_t n, vla_fmt io, vla_fmt file)
{
    for (size_t i = 0; i < n; i++)
        o[i] = vla_round_fmt(file, vla_round_fmt(io, o[i]));
}


/* ---- the gradients: DIR2's dq.npy ... from your kernel's backward. The loss is
 * L = sum_t do_t . o_t with do_t from DIR2/do.npy (the upstream gradient as a kernel's backward
 * receives it); each gradient is judged per head as the read-outs are, against the exact backward
 * (MPFR, lib/recur_grad.h) on the inputs as given, beside vlastab's own seq backward in the policy
 * (the attainable error) and the exact backward on the inputs and do rounded to the policy's io
 * format (the input budget). The backward exists in the seq form only: a chunked kernel's
 * gradients are held to the seq backward's error. ---- */
#define NGRAD 8
static const char *const gname[NGRAD] = {"dq", "dk", "dv", "dbeta", "dg", "da", "db", "du"};

/* gradient i's numbers per step in cfg's model; 0 (and *why) when the model has no such input */
/* the width of gradient file i (gname) for cfg's model into *w; VLA_ENOTSUP when the model has
 * no such gradient, with the rest of a sentence that starts with the model's name */
static int grad_of(vla_model_kind m, vla_grad_kind k)
{
    vla_config c;
    vla_config_default(&c, m, 16);
    return vla_grad_has(&c, k);
}
static int has_dbeta(vla_model_kind m) { return grad_of(m, VLA_GRAD_BETA); }
static int has_dg(vla_model_kind m) { return grad_of(m, VLA_GRAD_G); }
static int has_dab(vla_model_kind m) { return grad_of(m, VLA_GRAD_LR); }
static int has_du(vla_model_kind m) { return grad_of(m, VLA_GRAD_U); }

static int grad_width(const vla_config *cfg, int i, long *w, vla_error *err)
{
    static const char *const what[] = {[3] = "beta (dbeta", [4] = "log-decay (dg",
                                       [5] = "low-rank pair a, b (da, db", [7] = "input u (du"};
    static int (*const has[])(vla_model_kind) = {[3] = has_dbeta, [4] = has_dg, [5] = has_dab,
                                                 [7] = has_du};
    const vla_grad_kind kind[] = {0, 0, 0, VLA_GRAD_BETA, VLA_GRAD_G, VLA_GRAD_LR, VLA_GRAD_LR,
                                  VLA_GRAD_U};
    if (kind[i] && !vla_grad_has(cfg, kind[i])) {
        const int j = i == 6 ? 5 : i;
        char list[256]; /* the models whose default configuration has it, from the model table */
        vla_models_where(list, sizeof list, has[j], NULL);
        return vla_fail(err, VLA_ENOTSUP, "has no %s: %s)", what[j], list);
    }
    *w = i == 2 ? cfg->dv : i == 3 ? 1 : i == 4 && vla_model_gate(cfg->model) != 2 ? 1 : cfg->d;
    return VLA_OK;
}

/* one head's gradients, one block: vla_grads' arrays of n steps (da, db always: NULL-free for
 * rwkv7) */
typedef struct {
    vla_grads g;
    double *mem;
} gset_t;

static int gset_new(gset_t *b, const vla_config *cfg, long n)
{
    const long d = cfg->d, dv = cfg->dv;
    memset(b, 0, sizeof *b);
    if (!(b->mem = malloc((size_t)n * (6 * d + dv + 1 + d) * sizeof(double))))
        return VLA_ENOMEM;
    double *p = b->mem;
    b->g.dq = p, p += n * d;
    b->g.dk = p, p += n * d;
    b->g.dv = p, p += n * dv;
    b->g.dbeta = p, p += n;
    b->g.dg = p, p += n * d;
    if (vla_grad_has(cfg, VLA_GRAD_LR))
        b->g.da = p, b->g.db = p + n * d;
    p += 2 * n * d;
    if (vla_grad_has(cfg, VLA_GRAD_U))
        b->g.du = p;
    return VLA_OK;
}

static double *gset_get(const gset_t *b, int i)
{
    double *const a[NGRAD] = {b->g.dq, b->g.dk, b->g.dv, b->g.dbeta, b->g.dg, b->g.da, b->g.db,
                              b->g.du};
    return a[i];
}

/* one head's inputs for its backwards, a block of steps at a time (cli.h's vla_cli_window),
 * rounded to f (VLA_FMT_F64: as given) */
typedef struct {
    vla_cli_window *w;
    int d, dv;
    vla_fmt f;
    double *buf; /* 8 x max(d, dv) */
} gin_t;

static const double *gin_round(const double *src, int n, vla_fmt f, double *dst)
{
    if (!src)
        return NULL;
    for (int i = 0; i < n; i++)
        dst[i] = vla_round_fmt(f, src[i]);
    return dst;
}

static int gin(void *ctx, long t, vla_input *in)
{
    const gin_t *g = ctx;
    int e = vla_cli_window_input(g->w, t, in);
    if (e || g->f == VLA_FMT_F64)
        return e;
    const int m = g->d > g->dv ? g->d : g->dv;
    double *b = g->buf;
    in->q = gin_round(in->q, g->d, g->f, b);
    in->k = gin_round(in->k, g->d, g->f, b + m);
    in->v = gin_round(in->v, g->dv, g->f, b + 2 * m);
    in->u = gin_round(in->u, g->d, g->f, b + 3 * m);
    in->g = gin_round(in->g, g->dv, g->f, b + 4 * m);
    in->lg = gin_round(in->lg, g->d, g->f, b + 5 * m);
    in->a = gin_round(in->a, g->d, g->f, b + 6 * m);
    in->b = gin_round(in->b, g->d, g->f, b + 7 * m);
    in->beta = vla_round_fmt(g->f, in->beta);
    in->decay = vla_round_fmt(g->f, in->decay);
    in->lgs = vla_round_fmt(g->f, in->lgs);
    return VLA_OK;
}

/* the kernel's gradients and what they are judged against */
typedef struct {
    int n, which[NGRAD]; /* the gradients given, indices into gname */
    long w[NGRAD];
    vla_npy file[NGRAD], dout; /* opened (shape and size checked), read a block at a time */
    vla_fmt fmt[NGRAD], fo[NGRAD], dofmt;
    /* per head x given gradient: the kernel's errors, the attainable and the budget */
    struct grow {
        meas_t k;
        double bits, att_seq, att_form, inp, budget; /* att_form: NaN, no form backward */
        int ok;
        int gref;   /* the exact backward it was judged against: GREF_* */
        double ddw; /* dd's check: the largest relative difference from MPFR's (gref DD, FELL) */
    } *row;
    int nbad;
} grads_t;

/* the exact backward the gradients are judged against: MPFR at --ref-bits (or lib's binary64,
 * --ref f64), double-double checked against MPFR at 256 bits, or MPFR after dd's check failed or
 * dd refused to run */
enum { GREF_MPFR, GREF_DD, GREF_FELL, GREF_REFUSED };

/* DIR2's gradient files and do.npy, opened and checked against cfg, do's values read head by head
 * (usage errors: exit 2, before any work): how many gradients, 0 when there is none, -1 out of
 * memory or a read error (said) */
static int grads_read(const vla_cli_spec *spec, const vla_config *cfg, const char *dir, long H,
                      long T, int bf16, grads_t *G)
{
    char path[4200], fname[16], axes[32];
    memset(G, 0, sizeof *G);
    for (int i = 0; i < NGRAD; i++) {
        snprintf(fname, sizeof fname, "%s.npy", gname[i]);
        out_path(path, sizeof path, dir, fname);
        if (!present(path))
            continue;
        vla_error why;
        long w = 0;
        if (grad_width(cfg, i, &w, &why))
            vla_cli_die(spec, "--outputs: %s: %s %s", path, vla_model_name(cfg->model),
                        vla_error_msg(&why));
        vla_config s = *cfg;
        s.form = VLA_FORM_SEQ, s.chunk = 0;
        if (vla_grad_check(&s, &why))
            vla_cli_die(spec, "--outputs: %s: %s in %s has no backward to judge it against: %s",
                        path, vla_model_name(cfg->model), vla_prec_name(cfg->prec),
                        vla_error_msg(&why));
        /* dq, dk: of phi(q), phi(k) where the model takes them (its column phi) */
        const unsigned phi = vla_model_phi(cfg->model);
        if (cfg->features == VLA_FEAT_OWN &&
            ((i == 0 && (phi & VLA_PHI_Q)) || (i == 1 && (phi & VLA_PHI_K))))
            vla_cli_die(spec, "--outputs: %s: %s's backward gives the gradient with respect to "
                              "phi(%c) = elu(%c) + 1, not %c (features=own; docs/math.md section "
                              "11): judge it with --set features=id, or leave %s out",
                        path, vla_model_name(cfg->model), "qk"[i], "qk"[i], "qk"[i], fname);
        const int j = G->n++;
        G->which[j] = i, G->w[j] = w;
        snprintf(axes, sizeof axes, "(heads, T, %s)", w == 1 ? "1" : i == 2 ? "dv" : "d");
        read_outputs(spec, dir, fname, axes, H, T, w, bf16, 1, &G->file[j], &G->fmt[j]);
    }
    out_path(path, sizeof path, dir, "do.npy");
    int have_do = present(path);
    if (G->n && !have_do)
        vla_cli_die(spec, "--outputs: %s/%s.npy needs %s, the upstream gradient do_t of the loss "
                          "L = sum_t do_t . o_t that the gradients are of", dir,
                    gname[G->which[0]], path);
    if (!G->n && have_do)
        vla_cli_die(spec, "--outputs: %s is there but no gradient to judge with it (dq.npy, dk.npy, "
                          "dv.npy, dbeta.npy, dg.npy, da.npy, db.npy, du.npy)", path);
    if (!G->n)
        return 0;
    read_outputs(spec, dir, "do.npy", "(heads, T, dv)", H, T, cfg->dv, bf16, 1, &G->dout,
                 &G->dofmt);
    double *c = malloc((size_t)WIN * cfg->dv * sizeof *c); /* WIN steps at a time */
    vla_error err;
    if (!c) {
        fprintf(stderr, "vla-check: --outputs: %s: out of memory for %d steps\n", path, WIN);
        return -1;
    }
    for (long h = 0; h < H; h++)
        for (long t = 0; t < T; t += WIN) {
            const long n = (t + WIN < T ? WIN : T - t) * cfg->dv;
            if (vla_npy_read_steps(&G->dout, h, t, n / cfg->dv, c, &err)) {
                fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
                free(c);
                return -1;
            }
            for (long i = 0; i < n; i++)
                if (!isfinite(c[i]))
                    vla_cli_die(spec, "--outputs: %s: %s at [%ld, %ld, %ld] (do is the loss's "
                                      "input: every value finite)", path,
                                isnan(c[i]) ? "NaN" : "Inf", h, t + i / cfg->dv, i % cfg->dv);
        }
    free(c);
    const vla_fmt io = vla_prec_io(cfg->prec);
    for (int j = 0; j < G->n; j++)
        G->fo[j] = vla_fmt_precision(io) < vla_fmt_precision(G->fmt[j]) ? io : G->fmt[j];
    return G->n;
}

/* The gradients judged: per head, the exact backward on the inputs as given (--ref exact; lib's
 * binary64 backward with --ref f64), the same on the inputs and do rounded to the policy's io
 * format, and lib's seq backward in the policy; 0, 2 (a backward that refused the inputs: delta's
 * row gates), 3 (interrupted), else 1. One head at a time, and of it a block of K = ceil(sqrt(T))
 * steps at a time: the three backwards (vla_backward) advance together from the last block to the
 * first, and the block's inputs, do and the kernel's gradients are read for it alone, so that
 * the memory is the backwards' checkpoints and a block's arrays, not T's. Each gradient has three
 * measures against the reference's (the kernel's, the seq backward's, the rounded inputs'); their
 * numbers' measures (meas_elems) are taken as the blocks come, but the sums and windows add the
 * steps' squared norms in step order, as the read-outs' measures do: those are kept, 2 doubles a
 * step, and pushed from step 1 when the head is done. */
enum { G_REF, G_RND, G_SEQ, G_FORM, NG };  /* the backwards */
enum { GM_K, GM_SEQ, GM_RND, GM_FORM, NGM }; /* a gradient's measures against the reference's */

typedef struct {
    const vla_cli *c;
    vla_config ref, pol;
    long T, W, K;
    vla_fmt io;
    gset_t gs[NG];
    double *ch, *cr, *kg, *buf; /* a block's do, do rounded, a kernel's gradient; gin's (NG) */
    meas_run *m;                /* G->n x NGM */
    double *ab;                 /* G->n x NGM x T x 2: each step's squared norms (meas_elems) */
    vla_progress *prog;
    long *done;
    /* the kernel's form's backward in the policy (form chunk:C with a chunk backward): its blocks
     * of KF steps are not the seq backwards' K, so its gradients wait in a ring of R = 2 KF
     * steps, gradient j's at fring + R woff[j], step t at row t mod R, until the reference's
     * block of the same steps comes; flo: the first step it has computed */
    vla_config form;
    int has_form;
    long KF, R, flo, woff[NGRAD];
    double *fring, *fc; /* the ring; a form's block's do */
    vla_cli_window win[NG]; /* each backward's window of the head's inputs */
    gin_t gi[NG];           /* ... read through gin */
    int gref;   /* the exact backward of the heads judged now: GREF_*; -1 until dd's check */
    double ddw; /* ... dd's check's largest relative difference */
} gjudge_t;

/* whether measure k is taken: the rounded inputs' only when rounding changes them, the form's
 * where the kernel's form has a backward of its own */
static int gm_taken(const gjudge_t *J, int k)
{
    return (k % NGM != GM_RND || J->io != VLA_FMT_F64) && (k % NGM != GM_FORM || J->has_form);
}

/* the form's backward's blocks, down to step t0 (the reference's next block's first), into the
 * ring: 0, else a backward's code (*st set where it was a read of do.npy, said) */
static int grads_form_to(gjudge_t *J, grads_t *G, vla_backward *b, long h, long t0, int *st)
{
    const vla_fmt io = J->io;
    vla_error err;
    while (J->flo > t0) {
        long f0, nf = vla_backward_span(b, &f0);
        if (nf <= 0)
            return VLA_ERANGE;
        if (vla_npy_read_steps(&G->dout, h, f0, nf, J->fc, &err)) {
            fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
            *st = 1;
            return 0;
        }
        int r = vla_backward_next(b, J->fc, &J->gs[G_FORM].g);
        if (r)
            return r;
        for (int j = 0; j < G->n; j++) {
            const long w = G->w[j];
            double *src = gset_get(&J->gs[G_FORM], G->which[j]);
            round_out(src, (size_t)(nf * w), io, G->fmt[j]);
            for (long t = f0; t < f0 + nf; t++)
                memcpy(J->fring + J->R * J->woff[j] + (t % J->R) * w, src + (t - f0) * w,
                       (size_t)w * sizeof *src);
        }
        J->flo = f0;
    }
    return 0;
}

/* backward k's window of head h's inputs, blocks of K steps (of T): 0, else its error (in
 * J->gi[k].w->err) */
static int grads_window(gjudge_t *J, int k, long h, long K, long T)
{
    const vla_cli *c = J->c;
    vla_cli_window *w = &J->win[k];
    vla_inputs_free(&w->x);
    *w = (vla_cli_window){.T = T};
    J->gi[k] = (gin_t){w, J->pol.d, J->pol.dv, k == G_RND ? J->io : VLA_FMT_F64,
                       J->buf + (size_t)k * 8 * (J->pol.d > J->pol.dv ? J->pol.d : J->pol.dv)};
    return vla_inputs_open_part(&w->x, c->stream, c->seed, J->pol.d, J->pol.dv, (int)h, 1, K, T,
                                vla_model_reads(&J->pol), &w->err);
}

/* the first window's error, NULL where none */
static const vla_error *grads_win_err(const gjudge_t *J)
{
    for (int k = 0; k < NG; k++)
        if (J->win[k].err.code)
            return &J->win[k].err;
    return NULL;
}

/* backward k of the head whose windows are open: the exact one (dd or MPFR, J->gref; lib's
 * binary64 with --ref f64) on the inputs as given (G_REF) or rounded (G_RND), the policy's in seq
 * (G_SEQ) and in the kernel's form (G_FORM); a vla_err */
static int grads_backward_new(gjudge_t *J, int k, vla_backward **b)
{
    const vla_cli *c = J->c;
    const long T = J->T;
    if (k == G_SEQ || k == G_FORM)
        return vla_backward_new(b, k == G_SEQ ? &J->pol : &J->form, T, gin, &J->gi[k]);
    if (c->ref != REF_EXACT)
        return vla_backward_new(b, &J->ref, T, gin, &J->gi[k]);
    return vref_backward_new_stop(b, &J->ref, J->gref == GREF_DD ? VREF_DD : VREF_EXACT,
                                  c->ref_bits, T, gin, &J->gi[k], &vla_cli_stop);
}

/* one pass over head h: its backwards a block at a time, each gradient's measures begun with the
 * scales sc (G->n x NGM) and their steps' numbers measured; 0, else grads_judge's status (said) */
static int grads_pass(gjudge_t *J, grads_t *G, long h, const double *sc)
{
    const vla_cli *c = J->c;
    const vla_config *cfg = &J->pol;
    const int dv = cfg->dv, nm = G->n * NGM;
    const long T = J->T;
    const vla_fmt io = J->io;
    vla_error err;
    vla_backward *b[NG] = {NULL};
    int st = 0, r = 0, rk[NG] = {0}, sk[NG] = {0};
    const int use[NG] = {1, io != VLA_FMT_F64, 1, J->has_form};
    for (int k = 0; k < nm && !st; k++)
        if (gm_taken(J, k) && meas_begin(&J->m[k], T, J->W, sc[k])) {
            fprintf(stderr, "vla-check: out of memory for the gradients' windows\n");
            st = 1;
        }
    for (int k = 0; k < NG && !st; k++)
        if (use[k] && grads_window(J, k, h, k == G_FORM ? J->KF : J->K, T)) {
            fprintf(stderr, "vla-check: --stream %s: %s\n", c->stream,
                    vla_error_msg(&J->win[k].err));
            st = 2;
        }
    /* the backwards made and advanced side by side, one a thread (each with its own window) */
#pragma omp parallel for schedule(dynamic, 1) num_threads(vla_cli_threads())
    for (int k = 0; k < NG; k++)
        if (use[k] && !st)
            rk[k] = grads_backward_new(J, k, &b[k]);
    for (int k = 0; k < NG && !r; k++)
        r = rk[k];
    J->flo = T;
    long t0, n;
    while (!st && !r && (n = vla_backward_span(b[G_REF], &t0)) > 0) {
        if (vla_npy_read_steps(&G->dout, h, t0, n, J->ch, &err)) {
            fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
            st = 1;
            break;
        }
        for (long i = 0; i < n * dv; i++)
            J->cr[i] = vla_round_fmt(io, J->ch[i]);
        vla_progress_update(J->prog, *J->done += n);
#pragma omp parallel for schedule(dynamic, 1) num_threads(vla_cli_threads())
        for (int k = 0; k < NG; k++)
            if (use[k])
                rk[k] = k == G_FORM ? grads_form_to(J, G, b[k], h, t0, &sk[k])
                                    : vla_backward_next(b[k], k == G_RND ? J->cr : J->ch,
                                                        &J->gs[k].g);
        for (int k = 0; k < NG && !r; k++)
            r = rk[k], st = st ? st : sk[k];
        for (int j = 0; j < G->n && !r && !st; j++) {
            const int i = G->which[j], w = (int)G->w[j];
            const double *ref_g = gset_get(&J->gs[G_REF], i), *rn = gset_get(&J->gs[G_RND], i);
            double *seq = gset_get(&J->gs[G_SEQ], i);
            round_out(seq, (size_t)(n * w), io, G->fmt[j]);
            if (vla_npy_read_steps(&G->file[j], h, t0, n, J->kg, &err)) {
                fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
                st = 1;
                break;
            }
            for (long t = t0; t < t0 + n; t++) {
                const size_t o = (size_t)(t - t0) * w;
                const double *x[NGM] = {J->kg + o, seq + o, rn + o,
                                        J->fring + J->R * J->woff[j] + (t % J->R) * w};
                for (int k = 0; k < NGM; k++)
                    if (gm_taken(J, j * NGM + k)) {
                        double *ab = J->ab + (((size_t)j * NGM + k) * T + t) * 2;
                        meas_elems(&J->m[j * NGM + k], t, x[k], ref_g + o, w, G->fo[j], ab, ab + 1);
                    }
            }
        }
    }
    for (int k = 0; k < NG; k++)
        vla_backward_free(b[k]);
    if (r && !st) {
        st = r == VLA_EINTR ? 3 : r == VLA_ENOTSUP ? 2 : 1;
        if (r == VLA_EINTR)
            ; /* (a stop: the caller says what was saved) */
        else if (grads_win_err(J)) { /* a block of the inputs that could not be read */
            fprintf(stderr, "vla-check: --stream %s: %s\n", c->stream,
                    vla_error_msg(grads_win_err(J)));
            st = 2;
        } else
            fprintf(stderr, "vla-check: the backward of head %ld (%s %s): %s\n", h,
                    vla_model_name(cfg->model), vla_prec_name(cfg->prec),
                    r == VLA_ENOTSUP ? "the trace has delta's row gates g (g.npy), which the "
                                       "backward does not take" : vla_strerror(r));
    }
    return st;
}

/* Which exact backward judges the heads (*gref): where MPFR at 256 bits is asked for, the
 * double-double backward once it has been checked against MPFR's on head 0's first
 * VREF_DD_GRAD_STEPS steps (inputs as given, do's first steps: the loss of those steps alone), at
 * double-double resolution (vref_dd_grad_check), within VREF_DD_TRUST (*ddw: the largest relative
 * difference); else MPFR (said in the header). cfg: the policy's; head 0's window its own, so
 * that the check runs beside the read-outs' judge (judge_outputs). 0, 3 (interrupted) or 1
 * (said). */
static int grads_ddcheck(const vla_cli *c, const vla_config *cfg, long T, grads_t *G, int *gref,
                         double *ddw)
{
    const long N = T < VREF_DD_GRAD_STEPS ? T : VREF_DD_GRAD_STEPS;
    const int m = cfg->d > cfg->dv ? cfg->d : cfg->dv;
    vla_config ref = *cfg;
    ref.form = VLA_FORM_SEQ, ref.chunk = 0, ref.prec = VLA_F64;
    vla_error err;
    *gref = GREF_MPFR, *ddw = NAN;
    if (c->ref != REF_EXACT || c->ref_bits != VREF_DEFAULT_BITS)
        return 0;
    double *dout = malloc((size_t)N * cfg->dv * sizeof *dout), *buf = malloc(8 * (size_t)m *
                                                                               sizeof *buf);
    vla_cli_window w = {.T = N};
    gin_t gi = {&w, cfg->d, cfg->dv, VLA_FMT_F64, buf};
    int st = 0;
    if (!dout || !buf)
        fprintf(stderr, "vla-check: out of memory for the gradients' check\n"), st = 1;
    else if (vla_npy_read_steps(&G->dout, 0, 0, N, dout, &err))
        fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err)), st = 1;
    else if (vla_inputs_open_part(&w.x, c->stream, c->seed, cfg->d, cfg->dv, 0, 1, N, N,
                                  vla_model_reads(&ref), &w.err))
        fprintf(stderr, "vla-check: --stream %s: %s\n", c->stream, vla_error_msg(&w.err)), st = 2;
    else {
        const int r = vref_dd_grad_check(&ref, N, gin, &gi, dout, ddw, &vla_cli_stop);
        if (r == VLA_EINTR)
            st = 3;
        else
            *gref = r ? GREF_REFUSED : *ddw <= VREF_DD_TRUST ? GREF_DD : GREF_FELL;
    }
    vla_inputs_free(&w.x);
    free(dout), free(buf);
    return st;
}

/* whether a head's gradients are still to be judged (not in the checkpoint's units H + h) */
static int grads_pending(const grads_t *G, const vla_units *u, long H)
{
    for (long h = 0; h < H; h++) {
        size_t len;
        const void *rec = vla_units_get(u, (int)(H + h), &len);
        if (!rec || len != G->n * sizeof *G->row)
            return 1;
    }
    return 0;
}

/* the exact backward of the gradients in words (the header's, the reports'), from the rows */
static void grads_ref_describe(const grads_t *G, const vla_cli *c, long H, long T, char *buf,
                               size_t len)
{
    long n[4] = {0};
    double w = 0, fell = 0;
    for (long i = 0; i < H * G->n; i += G->n) {
        const struct grow *y = &G->row[i];
        n[y->gref]++;
        if (y->gref == GREF_DD && !(y->ddw <= w))
            w = y->ddw;
        if (y->gref == GREF_FELL && !(y->ddw <= fell))
            fell = y->ddw;
    }
    const long N = T < VREF_DD_GRAD_STEPS ? T : VREF_DD_GRAD_STEPS;
    if (n[GREF_DD])
        snprintf(buf, len, "the exact seq backward in double-double (106 bits), checked against "
                           "MPFR's at 256 bits on head 0's first %ld steps: largest relative "
                           "difference %.2g, trusted to %.0e%s", N, w, VREF_DD_TRUST,
                 n[GREF_DD] < H ? "; some heads in MPFR" : "");
    else if (n[GREF_FELL] && isnan(fell)) /* (printf would write nan) */
        snprintf(buf, len, "the exact seq backward in MPFR at 256 bits: the double-double one and "
                           "MPFR's were not both finite on head 0's first %ld steps, so it was not "
                           "used", N);
    else if (n[GREF_FELL])
        snprintf(buf, len, "the exact seq backward in MPFR at 256 bits: the double-double one "
                           "differed from it by %.2g (more than %.0e) on head 0's first %ld "
                           "steps, so it was not used", fell, VREF_DD_TRUST, N);
    else if (n[GREF_REFUSED])
        snprintf(buf, len, "the exact seq backward in MPFR at 256 bits (double-double could not "
                           "run it)");
    else if (c->ref == REF_EXACT)
        snprintf(buf, len, "the exact seq backward (MPFR at %ld bits)", c->ref_bits);
    else
        snprintf(buf, len, "the seq backward in binary64 (lib, --ref f64)");
}

/* the gradients of H heads judged, rows into G->row: 0, else a status (said); gref < 0: the
 * exact backward not chosen yet (grads_ddcheck before the first head that runs), else it and ddw
 * as grads_ddcheck gave them */
static int grads_judge(const vla_cli *c, const vla_config *cfg, long H, long T, long W,
                       double slack, grads_t *G, vla_units *u, vla_progress *prog, long *done,
                       int gref, double ddw)
{
    const int d = cfg->d, dv = cfg->dv, m = d > dv ? d : dv, nm = G->n * NGM;
    gjudge_t J = {.c = c, .pol = *cfg, .T = T, .W = W, .K = vla_backward_block_len(T),
                  .prog = prog, .done = done,
                  .io = vla_prec_io(cfg->prec), .gref = gref, .ddw = ddw};
    J.pol.form = VLA_FORM_SEQ, J.pol.chunk = 0;
    J.ref = J.pol, J.ref.prec = VLA_F64;
    /* the kernel's form's own backward, where it has one (vla_grad_check); its blocks */
    J.form = *cfg;
    J.has_form = cfg->form == VLA_FORM_CHUNK && cfg->chunk > 1 && !vla_grad_check(&J.form, NULL);
    J.KF = J.has_form ? cfg->chunk * vla_backward_block_len((T + cfg->chunk - 1) / cfg->chunk) : 1;
    J.R = 2 * J.KF;
    long wsum = 0;
    for (int j = 0; j < G->n; j++)
        J.woff[j] = wsum, wsum += G->w[j];
    long wmax = 1; /* the widest gradient given: the kernel's, a block at a time */
    for (int j = 0; j < G->n; j++)
        wmax = G->w[j] > wmax ? G->w[j] : wmax;
    double sc[NGRAD * NGM];
    J.buf = malloc(NG * 8 * (size_t)m * sizeof *J.buf);
    J.ch = malloc((size_t)J.K * dv * sizeof *J.ch);
    J.cr = malloc((size_t)J.K * dv * sizeof *J.cr);
    J.kg = malloc((size_t)J.K * wmax * sizeof *J.kg);
    J.m = calloc((size_t)nm, sizeof *J.m);
    J.ab = malloc((size_t)nm * T * 2 * sizeof *J.ab);
    J.fring = malloc((size_t)J.R * wsum * sizeof *J.fring);
    J.fc = malloc((size_t)J.KF * dv * sizeof *J.fc);
    int st = !J.buf || !J.ch || !J.cr || !J.kg || !J.m || !J.ab || !J.fring || !J.fc ||
             !(G->row = calloc((size_t)H * G->n, sizeof *G->row));
    for (int r = 0; r < NG; r++)
        st |= gset_new(&J.gs[r], cfg, r == G_FORM ? J.KF : J.K) != 0;
    if (st)
        fprintf(stderr, "vla-check: out of memory for the gradients of %ld steps\n", T);
    for (long h = 0; h < H && !st; h++) {
        size_t len;
        const void *rec = vla_units_get(u, (int)(H + h), &len);
        if (rec && len == G->n * sizeof *G->row) { /* judged before */
            memcpy(&G->row[h * G->n], rec, len);
            for (int j = 0; j < G->n; j++)
                G->nbad += !G->row[h * G->n + j].ok;
            continue;
        }
        if (J.gref < 0 && (st = grads_ddcheck(c, cfg, T, G, &J.gref, &J.ddw))) /* (first head) */
            break;
        for (int k = 0; k < nm; k++)
            sc[k] = 1;
        /* a second pass when a measure's numbers ask for a scale (meas_end): its top does not
         * depend on the scale, so the second pass's is the first's */
        for (int again = 1; again && !st;) {
            if ((st = grads_pass(&J, G, h, sc)))
                break;
            again = 0;
            for (int k = 0; k < nm; k++) {
                if (!gm_taken(&J, k))
                    continue;
                const double *ab = J.ab + (size_t)k * T * 2;
                for (long t = 0; t < T; t++)
                    meas_push(&J.m[k], ab[2 * t], ab[2 * t + 1]);
                const double need = meas_end(&J.m[k]);
                again |= need != sc[k];
                sc[k] = need;
            }
        }
        for (int j = 0; j < G->n && !st; j++) {
            struct grow *y = &G->row[h * G->n + j];
            y->k = J.m[j * NGM + GM_K].m;
            y->att_seq = J.m[j * NGM + GM_SEQ].m.mrw;
            y->att_form = J.has_form ? J.m[j * NGM + GM_FORM].m.mrw : NAN;
            y->inp = J.io != VLA_FMT_F64 ? J.m[j * NGM + GM_RND].m.mrw : 0;
            double top = worse(y->inp, y->att_seq) ? y->inp : y->att_seq;
            if (J.has_form && worse(y->att_form, top))
                top = y->att_form;
            y->budget = slack * top;
            const double u = vla_fmt_unit_roundoff(G->fo[j]);
            y->bits = y->k.rel_rms > u ? log2(y->k.rel_rms / u) : y->k.rel_rms >= 0 ? 0 : NAN;
            y->ok = !y->k.t_nonfinite && y->k.mrw <= y->budget && checks(y->budget);
            y->gref = J.gref, y->ddw = J.ddw;
            G->nbad += !y->ok;
        }
        if (!st && vla_units_save(u, (int)(H + h), &G->row[h * G->n], G->n * sizeof *G->row)) {
            fprintf(stderr, "vla-check: out of memory\n");
            st = 1;
        }
    }
    for (int k = 0; J.m && k < nm; k++)
        free(J.m[k].e2); /* a pass given up before meas_end */
    for (int r = 0; r < NG; r++)
        free(J.gs[r].mem);
    free(J.buf), free(J.ch), free(J.cr), free(J.kg), free(J.m), free(J.ab), free(J.fring),
        free(J.fc);
    for (int k = 0; k < NG; k++)
        vla_inputs_free(&J.win[k].x);
    return st;
}

static void grads_free(grads_t *G)
{
    for (int j = 0; j < G->n; j++)
        vla_npy_free(&G->file[j]);
    if (G->n)
        vla_npy_free(&G->dout);
    free(G->row);
}

/* ---- the judge's checkpoint (vla_units, drive.c): unit h < H is head h's read-outs measured,
 * its record the references' counts and passes (refck and J->dd, which head 0's block decides
 * for every block), its NR measures and its final state's error and verdict; unit H + h is its
 * gradients' rows (grads_judge). The key holds each file of DIR2 by its contents. ---- */
#define HEAD_REC (sizeof(refck_t) + NR * sizeof(long) + NR * sizeof(meas_t) + 2 * sizeof(double))

static int head_save(vla_units *u, int h, const jpass_t *J, const double *srel)
{
    const long nq = J->sq ? J->c->nseq : 0;
    char *rec = malloc(HEAD_REC + nq * sizeof *J->sq), *p = rec;
    if (!rec)
        return VLA_ENOMEM;
    long dd[NR];
    const double none[2] = {0, 0};
    for (int r = 0; r < NR; r++)
        dd[r] = J->dd[r];
    memcpy(p, &refck, sizeof refck), p += sizeof refck;
    memcpy(p, dd, sizeof dd), p += sizeof dd;
    memcpy(p, J->m + (size_t)h * NR, NR * sizeof *J->m), p += NR * sizeof *J->m;
    memcpy(p, srel ? srel + 2 * h : none, sizeof none), p += sizeof none;
    if (nq)
        memcpy(p, J->sq + (size_t)h * nq, nq * sizeof *J->sq);
    const int r = vla_units_save(u, h, rec, HEAD_REC + nq * sizeof *J->sq);
    free(rec);
    return r;
}

/* head h from the checkpoint, where it was measured before: 1, its measures and state's error in
 * J and srel, the references' counts and passes as they were; else 0 (it runs) */
static int head_load(const vla_units *u, int h, jpass_t *J, double *srel)
{
    size_t len;
    const char *p = vla_units_get(u, h, &len);
    long dd[NR];
    const long nq = J->sq ? J->c->nseq : 0;
    if (!p || len != HEAD_REC + nq * sizeof *J->sq)
        return 0;
    memcpy(dd, p + sizeof refck, sizeof dd);
    for (int r = 0; r < NR; r++)
        if (dd[r] < DD_CHECK || dd[r] > DD_NO)
            return 0;
    memcpy(&refck, p, sizeof refck), p += sizeof refck + sizeof dd;
    for (int r = 0; r < NR; r++)
        J->dd[r] = (int)dd[r];
    memcpy(J->m + (size_t)h * NR, p, NR * sizeof *J->m), p += NR * sizeof *J->m;
    if (srel)
        memcpy(srel + 2 * h, p, 2 * sizeof *srel);
    if (nq)
        memcpy(J->sq + (size_t)h * nq, p + 2 * sizeof *srel, nq * sizeof *J->sq);
    return 1;
}

/* 1 (said) when the table (--out) or a report file would replace a file of DIR2: the same path,
 * or the same file under another name; the trace's files are vla_cli_is_input's */
static int outputs_overwritten(const vla_cli_spec *spec, const vla_cli *c, const judge_opts *o)
{
    char path[4200], mine[4200];
    struct stat sa, sb;
    for (int w = 0; w < 3; w++) {
        if (w == 0 && !strcmp(c->out, "-"))
            continue;
        if (w > 0 && !strcmp(o->report, "none"))
            break;
        if (w == 0)
            snprintf(mine, sizeof mine, "%s", c->out);
        else
            snprintf(mine, sizeof mine, "%s%s", o->report, w == 1 ? ".json" : ".md");
        int have = stat(mine, &sa) == 0;
        for (size_t i = 0; i < sizeof dir2_names / sizeof *dir2_names; i++) {
            out_path(path, sizeof path, o->outputs, dir2_names[i]);
            if (!strcmp(path, mine) ||
                (have && stat(path, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)) {
                fprintf(stderr, "%s: %s %s is your kernel's %s (--outputs); the judge never "
                                "replaces what it judges\n", spec->prog,
                        w == 0 ? "--out" : "--report:", mine, path);
                return 1;
            }
        }
    }
    return 0;
}

/* the judge's lines of the key: the settings (as the table's), and with a checkpoint, each file
 * of DIR2 that it reads by its bytes' FNV-1a (outputs written again are another judge's) */
static char *judge_key(const vla_cli *c, const char *dir)
{
    const char *const *names = dir2_names;
    const char *sets[VLA_CLI_MAXSETS + 64];
    const int nsets = cli_settings(c, sets, VLA_CLI_MAXSETS + 64);
    char *text = NULL, path[4200], buf[1 << 16];
    size_t len = 0, k;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fprintf(stderr, "vla-check: out of memory\n");
        return NULL;
    }
    fprintf(f, "--set=");
    for (int i = 0; i < nsets; i++)
        fprintf(f, "%s%s", i ? " " : "", sets[i]);
    fprintf(f, "\n");
    for (size_t i = 0; strcmp(c->out, "-") && i < sizeof dir2_names / sizeof *dir2_names; i++) {
        out_path(path, sizeof path, dir, names[i]);
        FILE *in = NULL;
        const char *kind = "";
        if (!present(path))
            continue;
        if (vla_file_read_open(path, LONG_MAX, &in, &kind)) {
            fprintf(stderr, "vla-check: --outputs: %s: %s\n", path,
                    *kind ? kind : strerror(errno));
            fclose(f), free(text);
            return NULL;
        }
        uint64_t h = VLA_FNV_INIT;
        long long n = 0;
        while ((k = fread(buf, 1, sizeof buf, in)) > 0)
            h = vla_fnv1a(h, buf, k), n += (long long)k;
        if (ferror(in)) {
            fprintf(stderr, "vla-check: --outputs: %s: %s\n", path, strerror(errno));
            fclose(in), fclose(f), free(text);
            return NULL;
        }
        fclose(in);
        fprintf(f, "--outputs %s=%016llx (%lld bytes)\n", names[i], (unsigned long long)h, n);
    }
    if (fclose(f)) {
        fprintf(stderr, "vla-check: out of memory\n");
        free(text);
        return NULL;
    }
    return text;
}

/* what judge_outputs's steps share: the command, the kernel's files, the runs, the verdicts */
typedef struct {
    vla_cli *c;
    const vla_cli_spec *spec;
    const judge_opts *o;
    int prec_given, H, d, dv;
    long T, W;
    int bf16, have_S; /* dtype.txt says bfloat16; DIR2 has S.npy */
    vla_npy ko, ks;   /* o.npy and S.npy, opened */
    vla_fmt ofmt, sfmt, io, fo; /* o.npy's format, S.npy's, the policy's io, the read-outs' */
    vla_config cfg;   /* the kernel's configuration */
    char form[32];
    double u, slack;
    grads_t G;
    jpass_t J;
    double *srel; /* per head: the final state's error and verdict */
    int *had;     /* per head: read back from the checkpoint */
    head_t *hd;
    vla_units *units;
    vla_progress prog; /* (total 0: silent until started) */
    long pdone;
    int nbad, sbad, beyond; /* heads beyond, final states beyond, either or a gradient */
    int worst, first_nf; /* the head that loses the most bits beside seq, the first not finite */
    double more;         /* ... the bits it loses */
    char sum[3000];         /* the summary line */
    const char *sets[VLA_CLI_MAXSETS + 64];
    int nsets;
    char reftxt[600], setall[4000];
} judgement_t;

int judge_read_dtype(const vla_cli_spec *spec, const char *opt, const char *dir, const char *what)
{
    char path[4200];
    out_path(path, sizeof path, dir, "dtype.txt");
    FILE *tf = NULL;
    const char *kind = "";
    int e = present(path) ? vla_file_read_open(path, 64, &tf, &kind) : VLA_OK;
    if (e) /* a FIFO there would block the reader: refused, as anything but a small file */
        vla_cli_die(spec, "%s: %s: %s", opt, path, e == VLA_EINVAL ? kind : e == VLA_ERANGE ?
                    "more than 64 bytes (it holds one word, bfloat16)" : strerror(errno));
    if (!tf)
        return 0;
    char tag[64] = "";
    size_t n = fread(tag, 1, sizeof tag - 1, tf);
    fclose(tf);
    while (n && isspace((unsigned char)tag[n - 1]))
        n--;
    tag[n] = 0;
    if (strcmp(tag, "bfloat16"))
        vla_cli_die(spec, "%s: %s says '%.40s': the one tag it takes is bfloat16 (for %s saved "
                          "as uint16 bit patterns)", opt, path, tag, what);
    return 1;
}

/* o.npy and S.npy opened, and the kernel's configuration: its policy (--precision's, else the one
 * o's format names), the read-outs' format, the slack; a configuration that cannot be judged is
 * a usage error */
static void judge_config(judgement_t *X)
{
    const vla_cli *c = X->c;
    const vla_cli_spec *spec = X->spec;
    const char *dir = X->o->outputs;
    char path[4200];
    read_outputs(spec, dir, "o.npy", "(heads, T, dv)", X->H, X->T, X->dv, X->bf16, 1, &X->ko,
                 &X->ofmt);
    out_path(path, sizeof path, dir, "S.npy");
    X->have_S = present(path);
    if (X->have_S)
        read_outputs(spec, dir, "S.npy", "(heads, dv, d)", X->H, X->dv, X->d, X->bf16, 0, &X->ks,
                     &X->sfmt);
    vla_config *cfg = &X->cfg;
    const vla_fmt ofmt = X->ofmt;
    vla_cli_config_for(c, c->cfg.model, cfg);
    if (!X->prec_given)
        cfg->prec = ofmt == VLA_FMT_BF16 ? VLA_BF16_KERN : ofmt == VLA_FMT_F16 ? VLA_F16_KERN
                    : ofmt == VLA_FMT_F32 ? VLA_F32 : VLA_F64;
    X->io = vla_prec_io(cfg->prec);
    /* the read-outs' format: the coarser of the policy's io format and the file's */
    X->fo = vla_fmt_precision(X->io) < vla_fmt_precision(ofmt) ? X->io : ofmt;
    X->u = vla_fmt_unit_roundoff(X->fo);
    X->slack = X->o->slack ? X->o->slack : judge_slack(X->io);
    vla_form_name(cfg, X->form, sizeof X->form);
    vla_error ve;
    const long C = cfg->form == VLA_FORM_CHUNK ? cfg->chunk : 1;
    if (vla_track_check(cfg, &ve) || vla_form_check(cfg, &ve) ||
        vla_cli_gates_check(c, cfg, &ve) || vla_cli_form_input_check(c, cfg, &ve))
        vla_cli_die(spec, "--outputs: %s %s %s: %s", vla_model_name(cfg->model),
                    vla_prec_name(cfg->prec), X->form, vla_error_msg(&ve));
    if (C > 1 && strcmp(c->backend, "cpu"))
        vla_cli_die(spec, "--outputs with --form %s: --backend cpu (the one whose chunk form "
                          "gives every token's read-out to compare), not %s", X->form, c->backend);
}

/* the gradients' files read, the outputs and the report checked not to overwrite what is
 * judged, the runs' arrays made, and the checkpoint opened (a head's read-outs measured, then its
 * gradients, are its units), the heads it holds read back: 0, or judge_outputs' status */
static int judge_open(judgement_t *X)
{
    const vla_cli *c = X->c;
    const judge_opts *o = X->o;
    const int H = X->H;
    /* vlastab's backward starts from S_0 = 0: on a trace with an initial state no gradient is
     * judged (against a backward from another state), and dS0 never */
    char path[4200];
    out_path(path, sizeof path, o->outputs, "dS0.npy");
    if (present(path))
        vla_cli_die(X->spec, "--outputs: %s: the initial state's cotangent is not judged: "
                    "vlastab's backward starts from S_0 = 0 and gives no dS0 (leave it out)", path);
    for (size_t i = 3; (c->optional & (VLA_IN_S0 | VLA_IN_CU)) &&
                       i < sizeof dir2_names / sizeof *dir2_names;
         i++) { /* dq.npy ... do.npy */
        out_path(path, sizeof path, o->outputs, dir2_names[i]);
        if (present(path) && (c->optional & VLA_IN_S0))
            vla_cli_die(X->spec, "--outputs: %s: the trace starts from S0.npy, and vlastab's "
                        "backward starts from S_0 = 0: no gradient is judged on a trace with an "
                        "initial state (leave them and do.npy out; o.npy and S.npy are judged "
                        "from S_0)", path);
        if (present(path))
            vla_cli_die(X->spec, "--outputs: %s: the trace packs sequences (cu_seqlens.npy), "
                        "and vlastab's backward runs one sequence: no gradient is judged on a "
                        "packed trace (leave them and do.npy out; o.npy and S.npy are judged)",
                        path);
    }
    if (grads_read(X->spec, &X->cfg, o->outputs, H, X->T, X->bf16, &X->G) < 0)
        return 1;
    if (outputs_overwritten(X->spec, c, o))
        return 2;
    if (strcmp(o->report, "none") && report_paths_ok(o->report, c, 1))
        return 2;
    char unread[600];
    if (vla_cli_unread(c, &X->cfg, unread, sizeof unread))
        fprintf(stderr, "vla-check: warning: %s\n", unread);
    jpass_t *J = &X->J;
    const size_t ns = (size_t)H * X->dv * X->d;
    *J = (jpass_t){.c = c, .cfg = &X->cfg, .ko = &X->ko, .T = X->T, .W = X->W, .io = X->io,
                   .ofmt = X->ofmt, .fo = X->fo, .prog = &X->prog, .done = &X->pdone};
    int ok = (J->sc = malloc((size_t)H * NR * sizeof *J->sc)) &&
             (J->m = calloc((size_t)H * NR, sizeof *J->m)) &&
             (!c->nseq || (J->sq = calloc((size_t)H * c->nseq, sizeof *J->sq))) &&
             (!X->have_S || (X->srel = calloc((size_t)H * 2, sizeof *X->srel)));
    for (int r = 0; r < NR; r++)
        ok = ok && (J->S[r] = malloc(ns * sizeof(double)));
    if (!ok) {
        fprintf(stderr, "vla-check: out of memory for %d runs of %d heads\n", NR, H);
        return 1;
    }
    const grads_t *G = &X->G;
    char *extra = judge_key(c, o->outputs);
    const size_t hrec = HEAD_REC + (J->sq ? c->nseq * sizeof *J->sq : 0), /* (head_save's) */
        urec = G->n * sizeof *G->row > hrec ? G->n * sizeof *G->row : hrec;
    int st = extra ? vla_units_open(&X->units, c, X->spec, G->n ? "measure" : "head", extra,
                                    G->n ? 2 * H : H, urec) : 1;
    free(extra);
    if (st) {
        X->units = NULL; /* (vla_units_open made none) */
        return st;
    }
    if (!(X->had = calloc((size_t)H, sizeof *X->had))) {
        fprintf(stderr, "vla-check: out of memory\n");
        return 1;
    }
    for (int h = 0; h < H; h++)
        X->had[h] = head_load(X->units, h, J, X->srel);
    for (int i = 0; i < H * NR; i++)
        J->sc[i] = 1;
    return 0;
}

/* the runs' engine specs: the reference on the inputs as given and on the inputs rounded to io,
 * the policy's emulation in seq and in the kernel's form; a run that would repeat another stands
 * for it (alias) */
void judge_run_specs(const vla_cli *c, const vla_config *cfg, vla_engine_spec sp[NR],
                     int alias[NR])
{
    vla_cli rc = *c;
    vla_engine_spec tmp;
    vla_config g = *cfg;
    g.prec = VLA_F64;
    g.form = VLA_FORM_SEQ, g.chunk = 0;
    vla_cli_engine_spec(&rc, &g, &tmp);
    vla_cli_ref_spec(&rc, &tmp, &sp[R_REF]); /* binary64 policy: no input rounded */
    g.prec = cfg->prec;
    vla_cli_engine_spec(&rc, &g, &tmp);
    vla_cli_ref_spec(&rc, &tmp, &sp[R_RND]); /* rounds the inputs to io (vlaref.h, cli.h) */
    vla_cli_engine_spec(&rc, &g, &sp[R_SEQ]);
    vla_cli_engine_spec(&rc, cfg, &sp[R_FORM]);
    for (int r = 0; r < NR; r++)
        alias[r] = r == R_RND && vla_prec_io(cfg->prec) == VLA_FMT_F64 ? R_REF
                   : r == R_FORM && cfg->form == VLA_FORM_SEQ           ? R_SEQ
                                                                         : r;
}

static void judge_specs(judgement_t *X) { judge_run_specs(X->c, &X->cfg, X->J.sp, X->J.alias); }

/* head h's final state against the reference's, into srel[2 h] (the error) and srel[2 h + 1]
 * (ok) */
static void state_verdict(judgement_t *X, int h)
{
    const jpass_t *J = &X->J;
    const int d = X->d, dv = X->dv;
    const size_t at = (size_t)h * dv * d;
    const double e = vla_rel_fro(X->ks.data + at, J->S[R_REF] + at, (long)dv * d);
    const double *runs[NR - R_RND];
    for (int r = R_RND; r < NR; r++)
        runs[r - R_RND] = J->S[r] + at;
    const double b = judge_state_budget(J->S[R_REF] + at, runs, NR - R_RND, (long)dv * d, d,
                                        X->cfg.prec, X->slack);
    X->srel[2 * h] = e;
    X->srel[2 * h + 1] = judge_within(e, b); /* (NaN: beyond) */
}

double judge_state_budget(const double *ref, const double *const runs[], int nruns, long n,
                          int d, vla_prec prec, double slack)
{
    double top = 0;
    for (int r = 0; r < nruns; r++) {
        const double a = runs[r] ? vla_rel_fro(runs[r], ref, n) : 0;
        if (worse(a, top))
            top = a;
    }
    /* at least sqrt(d) roundings of the policy's arithmetic: a strongly decayed state is a sum of
     * a few terms, which vlastab's runs may round less than once, where a correct kernel's order
     * of operations rounds a few times more */
    const double floor_u = sqrt((double)d) * vla_fmt_unit_roundoff(vla_prec_compute(prec));
    if (worse(floor_u, top))
        top = floor_u;
    return top * slack;
}

/* the runs (judge_pass), each head measured as they go: the heads not read back, a block of as
 * many as threads at a time (their order: head 0's block, which checks the dd references, first),
 * each saved in the checkpoint: 0, or judge_outputs' status */
static int judge_runs(judgement_t *X)
{
    static const char *const rname[NR] = {"the reference", "the reference on rounded inputs",
                                           "the seq emulation", "the form's emulation"};
    const int H = X->H;
    int failed, rescale, st;
    vla_error err;
    vla_progress_start(&X->prog, (long)H * X->T * (X->G.n ? 2 : 1), "head-steps");
    for (int h0 = 0, nb; h0 < H; h0 += nb) {
        for (nb = 0; h0 + nb < H && !X->had[h0 + nb] && nb < vla_cli_threads(); nb++)
            ;
        if (!nb) {
            nb = 1;
            continue;
        }
        const long pdone0 = X->pdone; /* a pass run again counts its head-steps once */
        do { /* again: a dd reference in MPFR after its check failed, or a head's numbers scaled */
            X->pdone = pdone0;
            st = judge_pass(&X->J, h0, nb, &failed, &rescale, &err);
        } while (st == REDO_MPFR || (!st && rescale));
        if (st && vla_cli_stop)
            return 3;
        if (st) {
            if (failed < 0)
                fprintf(stderr, "vla-check: --outputs: %s\n", vla_error_msg(&err));
            else
                fprintf(stderr, "vla-check: %s (%s %s) did not run: %s\n", rname[failed],
                        vla_model_name(X->cfg.model), vla_prec_name(X->J.sp[failed].cfg.prec),
                        vla_error_msg(&err));
            return 1;
        }
        for (int h = h0; h < h0 + nb; h++) {
            if (X->srel)
                state_verdict(X, h);
            if (head_save(X->units, h, &X->J, X->srel)) {
                fprintf(stderr, "vla-check: out of memory\n");
                return 1;
            }
        }
    }
    return 0;
}

/* a verdict's budget: slack x the largest of the attainable errors and the input budget */
static double budget_of(double att_seq, double att_form, double inp, double slack)
{
    double top = att_seq;
    if (worse(att_form, top))
        top = att_form;
    if (worse(inp, top))
        top = inp;
    return top * slack;
}

/* per head: its row (hd) and its verdict, the first head not finite and the one that loses the
 * most bits beside the seq emulation; the final states' verdicts. 0, or 1 out of memory */
static int judge_heads(judgement_t *X)
{
    const int H = X->H;
    if (!(X->hd = calloc((size_t)H, sizeof *X->hd))) {
        fprintf(stderr, "vla-check: out of memory\n");
        return 1;
    }
    X->worst = 0, X->first_nf = -1;
    X->more = -INFINITY;
    for (int h = 0; h < H; h++) {
        const meas_t *m = X->J.m + (size_t)h * NR;
        head_t *x = &X->hd[h];
        x->k = m[M_KERNEL];
        x->att_seq = m[R_SEQ].mrw;
        x->att_form = m[R_FORM].mrw;
        x->inp = m[R_RND].mrw;
        x->budget = budget_of(x->att_seq, x->att_form, x->inp, X->slack);
        x->bits = x->k.rel_rms > X->u ? log2(x->k.rel_rms / X->u) : x->k.rel_rms >= 0 ? 0 : NAN;
        x->ok = !x->k.t_nonfinite && x->k.mrw <= x->budget && checks(x->budget);
        X->nbad += !x->ok;
        if (x->k.t_nonfinite && X->first_nf < 0)
            X->first_nf = h;
        double b = x->k.mrw == 0 ? 0 : log2(x->k.mrw / x->att_seq);
        if (worse(b, X->more))
            X->more = b, X->worst = h;
    }
    for (int h = 0; X->srel && h < H; h++)
        X->sbad += X->srel[2 * h + 1] == 0;
    return 0;
}

/* On a packed trace, head h beyond its budget: the first of its sequences whose read-outs are,
 * over the sequence, beyond it (the norm-wise error of meas_push's windows, over the sequence's
 * tokens), with its worst token, and whether that is its first (where a state left by the
 * sequence before, or an initial state not read, shows first): written into buf, "" where the
 * trace has no sequences or none is beyond on its own */
static void seq_clause(const judgement_t *X, int h, char *buf, size_t len)
{
    const vla_cli *c = X->c;
    const seqm_t *q = X->J.sq ? X->J.sq + (size_t)h * c->nseq : NULL;
    const double budget = X->hd[h].budget;
    buf[0] = 0;
    for (long i = 0; q && i < c->nseq; i++) {
        const seqm_t *x = &q[i];
        const double rel = nratio(x->se, x->sr);
        if (!worse(rel, budget))
            continue;
        const long a = c->cu[i] + 1, b = c->cu[i + 1], k = x->t_top - c->cu[i];
        const int s0 = (c->optional & VLA_IN_S0) != 0, at_first = worse(x->first, budget);
        char why[200] = "";
        if (at_first && i > 0)
            snprintf(why, sizeof why, ": the state of sequence %ld leaked into it%s?", i - 1,
                     s0 ? ", or its S0.npy row not read" : "");
        else if (at_first && s0)
            snprintf(why, sizeof why, ": its S0.npy %s not read?", c->nseq > 1 ? "row" : "state");
        snprintf(buf, len, " (first in packed sequence %ld of %ld, t = %ld..%ld: %.3g over the "
                 "sequence; its first token's error %.3g%s, its worst %.3g at t = %ld, its "
                 "token %ld%s)", i, c->nseq, a, b, rel, x->first,
                 at_first ? ", beyond the budget already" : ", within the budget", x->top,
                 x->t_top, k, why);
        return;
    }
}

/* the summary line: the verdict, the heads beyond and why, the final states, the gradients */
static void judge_summary(judgement_t *X)
{
    char *sum = X->sum;
    const size_t cap = sizeof X->sum;
    const int H = X->H;
    const head_t *hd = X->hd;
    const grads_t *G = &X->G;
    const char *prec = vla_prec_name(X->cfg.prec);
    int n = snprintf(sum, cap, "%s: %d of %d heads beyond the budget",
                     X->beyond ? "beyond" : "ok", X->nbad, H);
    if (X->first_nf >= 0)
        n += snprintf(sum + n, cap - n, "; your kernel's read-out is not finite from t = "
                      "%ld in head %d", hd[X->first_nf].k.t_nonfinite, X->first_nf);
    else if (isfinite(X->more) && X->more >= 0.05)
        n += snprintf(sum + n, cap - n, "; your kernel loses %.1f bits more than a "
                      "sequential %s recurrence with the same inputs (head %d)", X->more, prec,
                      X->worst);
    else if (isfinite(X->more))
        n += snprintf(sum + n, cap - n, "; your kernel loses no more than a sequential "
                      "%s recurrence with the same inputs (%.1f bits at most, head %d)", prec,
                      X->more, X->worst);
    for (int h = 0; h < H && n < (int)cap; h++)
        if (!hd[h].ok && !hd[h].k.t_nonfinite && isnan(hd[h].budget))
            n += snprintf(sum + n, cap - n, "; head %d: %.3g at t = %ld, and no budget: "
                          "vlastab's own %s run of these inputs (%s) is not finite, so no error "
                          "is attainable", h, hd[h].k.mrw, hd[h].k.t_mrw, prec,
                          isnan(hd[h].att_seq) ? "seq" : isnan(hd[h].att_form) ? X->form
                                                                                : "rounded inputs");
        else if (!hd[h].ok && !hd[h].k.t_nonfinite && !checks(hd[h].budget))
            n += snprintf(sum + n, cap - n, "; head %d: not judged: its budget %.3g is 1 or "
                          "more, so read-outs of 0 would pass (vlastab's own %s run of these "
                          "inputs loses them: their format flushes or overflows them)", h,
                          hd[h].budget, prec);
        else if (!hd[h].ok && !hd[h].k.t_nonfinite) {
            char seq[400];
            seq_clause(X, h, seq, sizeof seq);
            n += snprintf(sum + n, cap - n, "; head %d: %.3g at t = %ld past its budget %.3g%s",
                          h, hd[h].k.mrw, hd[h].k.t_mrw, hd[h].budget, seq);
        }
    if (X->sbad && n < (int)cap)
        n += snprintf(sum + n, cap - n, "; the final state beyond its budget in %d heads",
                      X->sbad);
    if (G->n && n < (int)cap)
        n += snprintf(sum + n, cap - n, "; gradients: %d of %d beyond", G->nbad, (int)H * G->n);
    for (int i = 0; i < (int)H * G->n && n < (int)cap; i++) {
        const struct grow *y = &G->row[i];
        const char *gn = gname[G->which[i % G->n]];
        if (y->k.t_nonfinite)
            n += snprintf(sum + n, cap - n, "; %s of head %d not finite from t = %ld", gn, i / G->n,
                          y->k.t_nonfinite);
        else if (!y->ok && isnan(y->budget))
            n += snprintf(sum + n, cap - n, "; %s of head %d: %.3g at t = %ld, and no "
                          "budget: vlastab's own backward of these inputs is not finite, so no "
                          "error is attainable", gn, i / G->n, y->k.mrw, y->k.t_mrw);
        else if (!y->ok && !checks(y->budget))
            n += snprintf(sum + n, cap - n, "; %s of head %d: not judged: its budget %.3g "
                          "is 1 or more, so gradients of 0 would pass (vlastab's own backward of "
                          "these inputs and do loses them)", gn, i / G->n, y->budget);
        else if (!y->ok)
            n += snprintf(sum + n, cap - n, "; %s of head %d: %.3g at t = %ld past its "
                          "budget %.3g", gn, i / G->n, y->k.mrw, y->k.t_mrw, y->budget);
    }
}

/* the per-head table (--out), its header saying what was judged against what: 0, or 1 when it
 * could not be written */
static int judge_table(judgement_t *X)
{
    const vla_cli *c = X->c;
    const grads_t *G = &X->G;
    X->nsets = cli_settings(c, X->sets, VLA_CLI_MAXSETS + 64);
    if (c->ref == REF_EXACT) /* MPFR, or double-double checked against it (ref_new) */
        refck_describe(c->ref_bits, X->T, "reference", X->reftxt, sizeof X->reftxt);
    else
        snprintf(X->reftxt, sizeof X->reftxt, "f64 (lib in binary64)");
    for (int i = 0, m = 0; i < X->nsets && m < (int)sizeof X->setall; i++)
        m += snprintf(X->setall + m, sizeof X->setall - m, "%s%s", i ? " " : "", X->sets[i]);
    vla_dat *out = vla_cli_out(c, X->spec);
    vla_dat_meta(out, "model", "%s%s", vla_model_name(X->cfg.model), vla_cli_model_src(c, NULL, 1));
    vla_dat_meta(out, "stream", "%s", c->stream);
    char files[600];
    vla_cli_stream_files(c, files, sizeof files);
    vla_dat_meta(out, "files", "%s", files);
    vla_dat_meta(out, "outputs", "%s (o.npy %s%s; read-outs compared in %s, u = %g)",
                 X->o->outputs, judge_dtype_name(X->ofmt), X->have_S ? ", S.npy" : "",
                 vla_fmt_name(X->fo), X->u);
    vla_dat_meta(out, "policy", "%s%s, form %s", vla_prec_name(X->cfg.prec),
                 X->prec_given ? "" : " (from o.npy's dtype)", X->form);
    vla_dat_meta(out, "settings", "%s", X->nsets ? X->setall : "none");
    vla_dat_meta(out, "reference", "%s on the inputs as given", X->reftxt);
    vla_dat_meta(out, "window", "%ld", X->W);
    vla_dat_meta(out, "slack", "%g (a head is ok when max_rel_window <= slack x max(attainable_seq, "
                              "attainable_form, input_budget))", X->slack);
    if (G->n) {
        char gl[200] = "";
        for (int j = 0, m = 0; j < G->n; j++)
            m += snprintf(gl + m, sizeof gl - m, "%s%s.npy %s", j ? ", " : "", gname[G->which[j]],
                          judge_dtype_name(G->fmt[j]));
        char gr[400];
        grads_ref_describe(G, c, X->H, X->T, gr, sizeof gr);
        vla_dat_meta(out, "gradients", "%s of L = sum_t do_t . o_t (do.npy %s), against %s: rows "
                     "in the report's JSON and Markdown", gl, judge_dtype_name(G->dofmt), gr);
    }
    vla_dat_meta(out, "summary", "%s", X->sum);
    vla_dat_columns(out, "head rel_rms max_abs max_rel_window t_max_rel_window max_rel_pointwise "
                         "ulps_max bits_lost attainable_seq attainable_form input_budget budget "
                         "first_t_nonfinite verdict");
    for (int h = 0; h < X->H; h++) {
        const head_t *x = &X->hd[h];
        double v[14] = {h, x->k.rel_rms, x->k.max_abs, x->k.mrw, (double)x->k.t_mrw,
                        x->k.max_rel_pt, x->k.ulps, x->bits, x->att_seq, x->att_form, x->inp,
                        x->budget, (double)x->k.t_nonfinite, 0};
        const char *nm[14] = {NULL};
        nm[12] = x->k.t_nonfinite ? NULL : "never";
        nm[13] = x->ok ? "ok" : "beyond";
        vla_dat_row_named(out, v, nm, 14);
    }
    return vla_cli_close(out, c, X->spec, 0) ? 1 : 0;
}

/* a row's measures in JSON, after its opening keys: the errors, the attainable ones, the budget
 * and the verdict */
static void json_measures(FILE *f, const meas_t *k, double bits, double att_seq, double att_form,
                          double inp, double budget, int ok)
{
    const double v[] = {k->rel_rms, k->max_abs, k->mrw, k->max_rel_pt, k->ulps, bits, att_seq,
                        att_form, inp, budget, k->scale, k->rel_after_scale};
    static const char *const key[] = {"rel_rms", "max_abs", "max_rel_window",
                                      "max_rel_pointwise", "ulps_max", "bits_lost",
                                      "attainable_seq", "attainable_form", "input_budget",
                                      "budget", "scale", "rel_after_scale"};
    if (k->t_nonfinite)
        fprintf(f, "%ld", k->t_nonfinite);
    else
        fputs("null", f);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        fprintf(f, ", \"%s\": ", key[i]);
        json_num(f, v[i]);
    }
    fprintf(f, ", \"verdict\": \"%s\"}", ok ? "ok" : "beyond");
}

/* PREFIX.json (keys fixed: tools/python's vlastab.judge reads them): 0, or 1 when it could not
 * be written */
static int judge_json(const judgement_t *X, const char *path)
{
    const vla_cli *c = X->c;
    const grads_t *G = &X->G;
    const int H = X->H;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return report_write(path, NULL, 0);
    fprintf(f, "{\"verdict\": \"%s\", \"model\": ", X->beyond ? "beyond" : "ok");
    json_str(f, vla_model_name(X->cfg.model));
    fprintf(f, ", \"precision\": \"%s\", \"form\": \"%s\", \"ref\": \"%s\", \"reference\": ",
            vla_prec_name(X->cfg.prec), X->form, c->ref == REF_EXACT ? "exact" : "f64");
    json_str(f, X->reftxt);
    fprintf(f, ", \"window\": %ld, \"slack\": ", X->W);
    json_num(f, X->slack);
    fprintf(f, ",\n \"settings\": {");
    for (int i = 0; i < X->nsets; i++) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(X->sets[i], "="), X->sets[i]);
        fprintf(f, "%s", i ? ", " : "");
        json_str(f, key);
        fprintf(f, ": ");
        json_str(f, strchr(X->sets[i], '=') + 1);
    }
    fprintf(f, "},\n \"heads\": [");
    for (int h = 0; h < H; h++) {
        const head_t *x = &X->hd[h];
        fprintf(f, "%s\n  {\"head\": %d, \"t_max_rel_window\": %ld, \"first_t_nonfinite\": ",
                h ? "," : "", h, x->k.t_mrw);
        json_measures(f, &x->k, x->bits, x->att_seq, x->att_form, x->inp, x->budget, x->ok);
    }
    fprintf(f, "],\n \"state\": ");
    if (!X->srel)
        fputs("null", f);
    for (int h = 0; X->srel && h < H; h++) {
        fprintf(f, "%s{\"head\": %d, \"rel_fro\": ", h ? ", " : "[", h);
        json_num(f, X->srel[2 * h]);
        fprintf(f, ", \"verdict\": \"%s\"}%s", X->srel[2 * h + 1] ? "ok" : "beyond",
                h == H - 1 ? "]" : "");
    }
    if (G->n) {
        char gr[400];
        grads_ref_describe(G, X->c, H, X->T, gr, sizeof gr);
        fprintf(f, ",\n \"grads_reference\": ");
        json_str(f, gr);
    }
    fprintf(f, ",\n \"grads\": %s", G->n ? "[" : "null");
    for (int i = 0; i < (int)H * G->n; i++) {
        const struct grow *y = &G->row[i];
        fprintf(f, "%s\n  {\"grad\": \"%s\", \"head\": %d, \"dtype\": \"%s\", "
                   "\"t_max_rel_window\": %ld, \"first_t_nonfinite\": ", i ? "," : "",
                gname[G->which[i % G->n]], i / G->n, judge_dtype_name(G->fmt[i % G->n]),
                y->k.t_mrw);
        json_measures(f, &y->k, y->bits, y->att_seq, y->att_form, y->inp, y->budget, y->ok);
    }
    fprintf(f, "%s,\n \"summary\": ", G->n ? "]" : "");
    json_str(f, X->sum);
    fprintf(f, "}\n");
    if (fclose(f))
        free(text), text = NULL;
    return report_write(path, text, len);
}

/* a row's measures in Markdown, after its opening cells */
static void md_measures(FILE *f, const meas_t *k, double bits, double att_seq, double att_form,
                        double inp, double budget, int ok)
{
    fprintf(f, " %.3g | %.3g | %.3g | %ld | %.3g | %.3g | %.2f | %.3g | %.3g | %.3g | %.3g |",
            k->rel_rms, k->max_abs, k->mrw, k->t_mrw, k->max_rel_pt, k->ulps, bits, att_seq,
            att_form, inp, budget);
    md_t(f, k->t_nonfinite);
    fprintf(f, " %s |", ok ? "ok" : "**beyond**");
}

/* the Markdown report's opening: what was judged against what, and what the columns are */
static void md_intro(FILE *f, const judgement_t *X)
{
    const vla_cli *c = X->c;
    const char *prec = vla_prec_name(X->cfg.prec);
    fprintf(f, "# vla-check: your kernel's read-outs, judged\n\n**%s**: ",
            X->beyond ? "beyond" : "ok");
    md_text(f, X->sum + strcspn(X->sum, ":") + 2); /* (the summary opens with the verdict) */
    fprintf(f, ".\n\nThe read-outs in ");
    md_text(f, X->o->outputs);
    fprintf(f, " (o.npy, %s%s) of %d heads x %ld steps (d = %d, dv = %d) on the inputs of ",
            judge_dtype_name(X->ofmt), X->have_S ? "; S.npy, the final state" : "", X->H, X->T,
            X->d, X->dv);
    md_text(f, c->stream);
    fprintf(f, ", against the reference, %s, on the same inputs as given. Model %s", X->reftxt,
            vla_model_name(X->cfg.model));
    md_text(f, vla_cli_model_src(c, NULL, 1));
    fprintf(f, "; settings: ");
    md_text(f, X->nsets ? X->setall : "none");
    fprintf(f, "; the kernel's policy %s%s, form %s.\n\n", prec,
            X->prec_given ? " (--precision)" : " (from o.npy's dtype)", X->form);
    fprintf(f, "- rel_rms: ||o - o_ref||_F / ||o_ref||_F over every step (fla's metric); "
               "max_abs: the largest pointwise error; max_rel_pointwise: the largest "
               "||o_t - o_ref,t|| / ||o_ref,t|| (a column only: it is large where o_ref,t is "
               "near 0); ulps_max: the largest pointwise error in ulps of the reference value "
               "in %s (the coarser of the policy's io format and o.npy's); bits_lost: "
               "log2(rel_rms / u), u = %g, clipped at 0.\n", vla_fmt_name(X->fo), X->u);
    fprintf(f, "- max_rel_window (the verdict's error): for each window of %ld tokens, "
               "||o - o_ref|| over the window / ||o_ref|| over the window, the largest over "
               "the windows, at t: that window's token of the largest error (t counts from 1).\n",
            X->W);
    fprintf(f, "- attainable_seq, attainable_form: max_rel_window of vlastab's emulation of "
               "%s, token by token and in form %s, its read-outs rounded as the kernel's (to "
               "%s, then o.npy's format); input_budget: that of the reference on the inputs "
               "rounded to %s (the policy's io format) against the reference on the inputs "
               "as given.\n", prec, X->form, vla_fmt_name(X->io), vla_fmt_name(X->io));
    fprintf(f, "- verdict: ok when max_rel_window <= budget = %g (--slack) x max(attainable_seq, "
               "attainable_form, input_budget) and every read-out is finite; else beyond.\n\n",
            X->slack);
}

/* the Markdown report's tables of the final state and of the gradients, where there are */
static void md_state_grads(FILE *f, const judgement_t *X)
{
    const grads_t *G = &X->G;
    const int H = X->H;
    if (X->srel) {
        fprintf(f, "\nThe final state S.npy: ||S - S_ref||_F / ||S_ref||_F per head, ok within "
                   "%g x the largest of the emulations' and the rounded inputs'.\n\n| head | "
                   "rel_fro | verdict |\n|---|---|---|\n", X->slack);
        for (int h = 0; h < H; h++)
            fprintf(f, "| %d | %.3g | %s |\n", h, X->srel[2 * h],
                    X->srel[2 * h + 1] ? "ok" : "**beyond**");
    }
    if (!G->n)
        return;
    char gr[400];
    grads_ref_describe(G, X->c, H, X->T, gr, sizeof gr);
    fprintf(f, "\nThe gradients of L = sum_t do_t . o_t (do_t from do.npy, %s) per head, "
               "against %s, on the inputs as given, the same columns "
               "as the read-outs' (t counts forward from 1); attainable_seq and "
               "attainable_form are vlastab's backward in %s token by token and in form %s "
               "(%s); input_budget rounds the inputs and do to %s; budget = %g x "
               "max(attainable_seq, attainable_form, input_budget).\n\n"
               "| grad | head | rel_rms | max_abs | max_rel_window | t | max_rel_pointwise "
               "| ulps_max | bits_lost | attainable_seq | attainable_form | input_budget | "
               "budget | non-finite from | verdict |\n|", judge_dtype_name(G->dofmt), gr,
            vla_prec_name(X->cfg.prec), X->form,
            X->cfg.form == VLA_FORM_SEQ ? "the same backward"
            : isnan(G->row[0].att_form) ? "no backward of its own: '-', the gradients held to "
                                          "the seq backward's error"
                                        : "its own chunk backward",
            vla_fmt_name(X->io), X->slack);
    for (int k = 0; k < 15; k++)
        fprintf(f, "---|");
    for (int i = 0; i < (int)H * G->n; i++) {
        const struct grow *y = &G->row[i];
        fprintf(f, "\n| %s | %d |", gname[G->which[i % G->n]], i / G->n);
        md_measures(f, &y->k, y->bits, y->att_seq, y->att_form, y->inp, y->budget, y->ok);
    }
    fprintf(f, "\n");
}

/* PREFIX.md: 0, or 1 when it could not be written */
static int judge_md(const judgement_t *X, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return report_write(path, NULL, 0);
    md_intro(f, X);
    fprintf(f, "| head | rel_rms | max_abs | max_rel_window | t | max_rel_pointwise | ulps_max | "
               "bits_lost | attainable_seq | attainable_form | input_budget | budget | "
               "non-finite from | verdict |\n|");
    for (int k = 0; k < 14; k++)
        fprintf(f, "---|");
    for (int h = 0; h < X->H; h++) {
        const head_t *x = &X->hd[h];
        fprintf(f, "\n| %d |", h);
        md_measures(f, &x->k, x->bits, x->att_seq, x->att_form, x->inp, x->budget, x->ok);
    }
    fprintf(f, "\n");
    md_state_grads(f, X);
    fprintf(f, "\nThe command:\n\n");
    md_command(f, X->o->ncmd, X->o->cmd);
    if (fclose(f))
        free(text), text = NULL;
    return report_write(path, text, len);
}

/* the judge's holdings freed; the status, the checkpoint's end said where it holds one */
static int judge_close(judgement_t *X, int st)
{
    vla_progress_end(&X->prog);
    if (X->units) /* (says where a stop's measures are saved) */
        st = vla_units_end(X->units, st);
    for (int r = 0; r < NR; r++)
        free(X->J.S[r]);
    free(X->J.sc), free(X->J.m), free(X->J.sq), free(X->had), free(X->hd), free(X->srel);
    vla_npy_free(&X->ko);
    vla_npy_free(&X->ks);
    grads_free(&X->G);
    return st;
}

int judge_outputs(vla_cli *c, const vla_cli_spec *spec, const judge_opts *o, int prec_given)
{
    if (c->ref == REF_NONE)
        vla_cli_die(spec, "--outputs: the kernel is judged against a reference: --ref exact (the "
                          "default) or f64, not none");
    if (!c->model_txt && !c->model_opt)
        vla_cli_die(spec, "--outputs judges one model: %s; give --model M",
                    strncmp(c->stream, "trace:", 6) ? "the stream names none"
                                                    : "the trace has no model.txt naming it");
    /* what the judge holds, freed by judge_close: on every exit, the stops and refusals too */
    judgement_t X = {.c = c, .spec = spec, .o = o, .prec_given = prec_given, .H = c->runs,
                     .d = c->cfg.d, .dv = c->cfg.dv, .T = c->whole_steps, .W = o->window};
    /* (T: a chunk form's last chunk may be partial) */
    X.bf16 = judge_read_dtype(spec, "--outputs", o->outputs, "o.npy and S.npy");
    judge_config(&X);
    int st = judge_open(&X);
    if (st)
        return judge_close(&X, st);
    judge_specs(&X);
    /* the gradients' check of dd against MPFR (serial, a few seconds) on a second thread while
     * the read-outs are judged, whose own threads mostly wait on their reference's check */
    int gref = -1, gst = 0;
    double ddw = NAN;
    const int pre = X.G.n && vla_cli_threads() > 1 && grads_pending(&X.G, X.units, X.H);
#ifdef _OPENMP
    const int levels = omp_get_max_active_levels();
    if (pre) /* (judge_pass's threads in the first section) */
        omp_set_max_active_levels(levels + 1);
#endif
#pragma omp parallel sections num_threads(2) if (pre)
    {
#pragma omp section
        {
            if (!(st = judge_runs(&X)))
                st = judge_heads(&X);
        }
#pragma omp section
        {
            if (pre)
                gst = grads_ddcheck(c, &X.cfg, X.T, &X.G, &gref, &ddw);
        }
    }
#ifdef _OPENMP
    omp_set_max_active_levels(levels);
#endif
    if (st || (st = gst))
        return judge_close(&X, st);
    if (X.G.n && (st = grads_judge(c, &X.cfg, X.H, X.T, X.W, X.slack, &X.G, X.units, &X.prog,
                                   &X.pdone, gref, ddw)))
        return judge_close(&X, st);
    vla_units_end(X.units, 0); /* (the checkpoint goes when vla-check exits 0, or 1 once its
                                * outputs are written: ckpt_verdict_written) */
    X.units = NULL;
    X.beyond = X.nbad || X.sbad || X.G.nbad;
    judge_summary(&X);
    if (judge_table(&X))
        return judge_close(&X, 1);
    if (strcmp(o->report, "none")) {
        char path[4200];
        snprintf(path, sizeof path, "%s.json", o->report);
        if (judge_json(&X, path))
            return judge_close(&X, 1);
        snprintf(path, sizeof path, "%s.md", o->report);
        if (judge_md(&X, path))
            return judge_close(&X, 1);
    }
    fprintf(stderr, "vla-check: %s%s%s%s\n", X.sum, strcmp(o->report, "none") ? "; report: " : "",
            strcmp(o->report, "none") ? o->report : "", strcmp(o->report, "none") ? ".md, .json" : "");
    ckpt_verdict_written();
    return judge_close(&X, X.beyond);
}
