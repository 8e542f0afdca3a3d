/* stream.c: the input streams of docs/math.md section 8. Every synthetic input is a pure function
 * of (seed, var, head, t, lane) through vla_gauss, so a step can be regenerated alone and a CUDA
 * kernel can produce the same bits; a trace replays .npy files, of which open reads the part the
 * caller will use (vla_stream_open_part: some heads, the first steps) and checks the whole shape.
 *
 * Where each number comes from (G(var, t, lane) = vla_gauss(seed, var, head, t, lane)):
 *   gauss:SIGMA       q, k, v, u = SIGMA * G(Q|K|V|U, t, i)
 *   lmlike:S          q, k, v = S * G(Q|K|V, t, i);  u = unit(W k),
 *                     W[i][j] = G(AUX, 0, i d + j) / sqrt(d)
 *   subspace:R,NOISE  B = Gram-Schmidt (twice) of the columns of X[i][j] = G(AUX, 0, j d + i),
 *                     d x R;  c_j = G(K, t, j) / sqrt(R),  xi_i = (NOISE / sqrt(d)) G(U, t, i);
 *                     k = u = B c + xi;  q, v = G(Q|V, t, i)
 *   repeat:M          k = u = G(K, (t-1) mod M + 1, i) (for t <= M the keys of gauss); q, v at t
 *   mqar:N,G          writes (t <= N + G): k = u = q = G(K, t, i) / sqrt(d), v = G(V, t, i);
 *                     reads (t > N + G) of pair p = t - N - G - 1: k = u = q = the key of step
 *                     p + 1 and v = its value (the target, not to be written).
 * Sums run left to right in binary64. A stream caches the fixed per-head matrices (W, B), so one
 * stream must not be shared between threads. */
#include "model_impl.h"
#include "vlastab.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NCACHE 16 /* heads whose fixed matrix is kept; slot = head mod NCACHE */

struct vla_stream {
    vla_stream_kind kind;
    int d, dv;
    uint64_t seed;
    char *spec; /* canonical: every parameter written out */
    double scale, noise;
    long r, m, n, g;
    int sigmoid; /* gauss: beta_t = sigmoid(N(0, 1)) per step */
    int logits;  /* gauss: the log-gates drawn as N(0, 1) logits, for gate_map=sigmoid */
    struct {
        long head; /* -1: empty */
        double *mat;
    } cache[NCACHE];
    double *tmp; /* subspace: c (R), then B c (d) */
    long heads, T;      /* trace: its files' */
    long h0, nh, wT;    /* ... the part read: heads h0 .. h0 + nh - 1, steps 1 .. wT */
    vla_npy q, k, v, u, gate, beta, decay; /* trace; u, gate, beta, decay may hold no data */
    vla_npy logdecay, ra, rb;              /* ... and the gated family's */
    double *S0; /* S0.npy of the part's heads, (nS0, nh, dv, d) */
    int has_S0; /* ... the trace has one (its numbers read where the part has heads) */
    long nS0;   /* ... its rows: 1, or one per packed sequence */
    long nseq, *cu; /* cu_seqlens.npy: nseq packed sequences, their nseq + 1 bounds (0: none) */
    /* A trace is read a block of steps at a time (memory bounded by the block, not by T): each
     * file's last block, [NARR] in open_trace's order; ident its hash, taken while open checked */
    struct {
        double *buf;
        long h, t0, n; /* head h (of the part, from 0), steps t0 .. t0 + n - 1 (from 0) */
    } blk[10];
    uint64_t ident;
    unsigned want;                         /* what a synthetic stream draws (vla_stream_want) */
};

static int parse_int(const char *s, long *x)
{
    char *end;
    const char *digits = *s == '-' ? s + 1 : s;
    if (*digits < '0' || *digits > '9')
        return 0;
    errno = 0;
    *x = strtol(s, &end, 10);
    return *end == 0 && errno == 0;
}

static void unit(double *x, int d)
{
    double s = 0;
    for (int i = 0; i < d; i++)
        s += x[i] * x[i];
    double nrm = sqrt(s);
    if (nrm < DBL_MIN) /* a zero-norm event: left as it is, as docs/math.md section 1 says */
        return;
    vla_div_all(x, d, nrm);
}

/* the largest scale of a drawn stream: its normals stay below 9 in magnitude (Box-Muller of
 * 53-bit uniforms) and lmlike sums d <= 256 of them, far from binary64's 1.8e308 */
#define VLA_STREAM_SCALE_MAX 1e300

/* ---- the trace: six .npy files checked against each other at open ---- */

static void shape_str(char *buf, size_t len, const vla_npy *a)
{
    int n = snprintf(buf, len, "(");
    for (int i = 0; i < a->ndim && n < (int)len; i++)
        n += snprintf(buf + n, len - n, i ? ", %ld" : "%ld", a->shape[i]);
    if (n < (int)len)
        snprintf(buf + n, len - n, a->ndim == 1 ? ",)" : ")");
}

/* the steps of a block read at once: 64 KiB of binary64 numbers */
static long block_steps(const vla_npy *a)
{
    long B = 8192 / (long)(a->inner ? a->inner : 1);
    return B > 0 ? B : 1;
}

static int bad_value(const char *path, double x, long h, long t, long i, double lo, double hi,
                     vla_error *err);

/* Loads DIR/NAME; an optional file that does not exist leaves a->data NULL. dim: the last size
 * required (0 for a scalar per step, beta or decay, which may be (heads, T) or (heads, T, 1); -d
 * for the log-decays, a scalar per step or d per step: (heads, T) or (heads, T, d)); heads, T: 0
 * when this file defines them. */
static int load(vla_stream *s, const char *dir, const char *name, int required, vla_npy *a,
                int dim, vla_error *err)
{
    size_t plen = strlen(dir) + strlen(name) + 2;
    char *path = malloc(plen);
    if (!path)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    snprintf(path, plen, "%s/%s", dir, name);
    struct stat st;
    int rc = 0;
    if (!required && stat(path, &st) != 0 && errno == ENOENT)
        goto done;
    long full[8];
    rc = vla_npy_open_part(path, a, s->h0, s->nh, s->wT, full, err);
    if (rc)
        goto done;
    char sh[200];
    const long part[2] = {a->shape[0], a->shape[1]};
    memcpy(a->shape, full, sizeof full); /* the file's shape, for its checks and messages */
    shape_str(sh, sizeof sh, a);
    int ok3 = a->ndim == 3, is_beta = dim <= 0;
    if (!(ok3 || (is_beta && a->ndim == 2))) {
        if (dim < 0)
            rc = vla_fail(err, VLA_EFORMAT,
                      "%s: shape %s, expected (heads, T) or (heads, T, %d)", path, sh, -dim);
        else if (is_beta)
            rc = vla_fail(err, VLA_EFORMAT,
                      "%s: shape %s, expected (heads, T) or (heads, T, 1)", path, sh);
        else
            rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected (heads, T, %d)", path, sh,
                      dim);
        goto done;
    }
    if (!s->heads) {
        s->heads = a->shape[0];
        s->T = a->shape[1];
        if (s->heads < 1 || s->T < 1 || s->heads > UINT32_MAX) {
            rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s has no steps or heads", path, sh);
            goto done;
        }
    }
    if (a->shape[0] != s->heads) {
        rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected %ld heads (as q.npy)", path, sh,
                  s->heads);
    } else if (a->shape[1] != s->T) {
        rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected %ld steps (as q.npy)", path, sh,
                  s->T);
    } else if (ok3 && !is_beta && (a->shape[2] < VLA_D_MIN || a->shape[2] > VLA_D_MAX)) {
        /* (said as such, not as "expected dim 32": the size the programs chose without it) */
        rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s: its last size, %s = %ld, is outside "
                  "%d..%d", path, sh, !strcmp(name, "v.npy") || !strcmp(name, "g.npy") ? "dv" : "d",
                  a->shape[2], VLA_D_MIN, VLA_D_MAX);
    } else if (ok3 && dim < 0 && a->shape[2] != -dim) {
        rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected (heads, T, d = %d): a log-decay "
                  "per key channel", path, sh, -dim);
    } else if (ok3 && dim >= 0 && a->shape[2] != (is_beta ? 1 : dim)) {
        rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected dim %d", path, sh,
                  is_beta ? 1 : dim);
    } else if (s->h0 >= s->heads && s->nh) {
        rc = vla_fail(err, VLA_ERANGE, "%s: shape %s has no head %ld", path, sh, s->h0);
    }
    if (rc)
        goto done;
    a->shape[0] = part[0]; /* from here on the part's */
    a->shape[1] = part[1];
    /* A gate outside [0, 1] or a negative beta_t makes the delta rule expand instead of contract
     * (docs/math.md section 1: g in (0,1), beta in (0,2)), so a run drifts into Inf with nothing
     * said. The ends are allowed: a saturated sigmoid rounds to them. */
    double lo = -INFINITY, hi = INFINITY;
    if (!strcmp(name, "beta.npy"))
        lo = 0;
    else if (!strcmp(name, "g.npy") || !strcmp(name, "decay.npy"))
        lo = 0, hi = 1;
    else if (!strcmp(name, "logdecay.npy")) /* log a <= 0: a decay, not a growth */
        hi = 0;
    /* the identity's hash of the part (as of the numbers read whole, in order) and the numbers'
     * check, read by blocks */
    int nd = a->ndim;
    s->ident = vla_fnv1a(s->ident, &nd, sizeof nd);
    for (int j = 0; j < nd; j++)
        s->ident = vla_fnv1a(s->ident, &a->shape[j], sizeof a->shape[j]);
    const long inner = (long)a->inner, B = block_steps(a);
    double *x = malloc((size_t)B * inner * sizeof *x);
    if (!x) {
        rc = vla_fail(err, VLA_ENOMEM, "out of memory");
        goto done;
    }
    for (long h = 0; !rc && h < a->shape[0]; h++)
        for (long t0 = 0; !rc && t0 < a->shape[1]; t0 += B) {
            long m = a->shape[1] - t0 < B ? a->shape[1] - t0 : B;
            if ((rc = vla_npy_read_steps(a, h, t0, m, x, err)))
                break;
            s->ident = vla_fnv1a(s->ident, x, (size_t)m * inner * sizeof *x);
            for (long i = 0; i < m * inner; i++)
                if (!(isfinite(x[i]) && x[i] >= lo && x[i] <= hi)) {
                    rc = bad_value(path, x[i], s->h0 + h, t0 + i / inner, ok3 ? i % inner : -1,
                                   lo, hi, err);
                    break;
                }
        }
    free(x);
done:
    if (rc)
        vla_npy_free(a);
    else if (!a->path) /* absent: hashed as ndim 0 */
        s->ident = vla_fnv1a(s->ident, &(int){0}, sizeof(int));
    free(path);
    return rc;
}

/* a step's number x of head h at step t (from 0; channel i, or -1 for a scalar per step) is not a
 * number or outside [lo, hi] */
static int bad_value(const char *path, double x, long h, long t, long i, double lo, double hi,
                     vla_error *err)
{
    char at[80];
    if (i >= 0)
        snprintf(at, sizeof at, "[%ld, %ld, %ld]", h, t, i);
    else
        snprintf(at, sizeof at, "[%ld, %ld]", h, t);
    if (!isfinite(x))
        return vla_fail(err, VLA_ENONFINITE, "%s: %s at %s", path, isnan(x) ? "NaN" : "Inf",
                    at);
    return vla_fail(err, VLA_ERANGE, "%s: %.17g at %s is outside [%g, %g]", path, x, at, lo,
                hi);
}

/* the numbers of step t (from 0) of the part's head h of file i (open_trace's order, a its
 * vla_npy), from its block of steps, read when the step is outside it; NULL when the read fails */
static const double *step_of(vla_stream *s, int i, const vla_npy *a, long h, long t)
{
    __typeof__(s->blk[0]) *b = &s->blk[i];
    if (!b->buf || b->h != h || t < b->t0 || t >= b->t0 + b->n) {
        long B = block_steps(a);
        if (!b->buf && !(b->buf = malloc((size_t)B * a->inner * sizeof *b->buf)))
            return NULL;
        b->h = h;
        b->t0 = t / B * B;
        b->n = a->shape[1] - b->t0 < B ? a->shape[1] - b->t0 : B;
        if (vla_npy_read_steps(a, h, b->t0, b->n, b->buf, NULL)) {
            b->n = 0;
            return NULL;
        }
    }
    return b->buf + (size_t)(t - b->t0) * a->inner;
}

/* cu_seqlens.npy, optional: N sequences packed in the T steps, fla's cu_seqlens: integers 0 =
 * c_0 < c_1 < ... < c_N = T, read whole and checked (hashed into the identity when present) */
static int load_cu(vla_stream *s, const char *dir, vla_error *err)
{
    size_t plen = strlen(dir) + 16;
    char *path = malloc(plen), sh[200];
    if (!path)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    snprintf(path, plen, "%s/cu_seqlens.npy", dir);
    struct stat st;
    vla_npy a = {0};
    int rc = 0;
    if ((stat(path, &st) != 0 && errno == ENOENT) || (rc = vla_npy_read_int(path, &a, err)))
        goto done;
    shape_str(sh, sizeof sh, &a);
    const long n = a.ndim == 1 ? a.shape[0] : 0;
    if (n < 2) {
        rc = vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected (N + 1,) with N >= 1: 0, then each "
                      "packed sequence's end (fla's cu_seqlens)", path, sh);
        goto done;
    }
    if (a.data[0] != 0)
        rc = vla_fail(err, VLA_EFORMAT, "%s: entry 0 is %.17g: the entries must start at 0 and "
                      "increase strictly (each sequence at least one token)", path, a.data[0]);
    for (long i = 1; i < n && !rc; i++)
        if (!(a.data[i] > a.data[i - 1]))
            rc = vla_fail(err, VLA_EFORMAT, "%s: entry %ld is %.17g, not above the one before, "
                          "%.17g: the entries must start at 0 and increase strictly (each "
                          "sequence at least one token)", path, i, a.data[i], a.data[i - 1]);
    if (!rc && a.data[n - 1] != (double)s->T)
        rc = vla_fail(err, VLA_EFORMAT, "%s: its last entry is %.17g, expected T = %ld (q.npy's "
                      "steps): the sequences must cover the trace", path, a.data[n - 1], s->T);
    if (!rc && !(s->cu = malloc(n * sizeof *s->cu)))
        rc = vla_fail(err, VLA_ENOMEM, "out of memory");
    for (long i = 0; !rc && i < n; i++)
        s->cu[i] = (long)a.data[i];
    if (!rc) {
        s->nseq = n - 1;
        s->ident = vla_fnv1a(s->ident, "cu", 2);
        s->ident = vla_fnv1a(s->ident, s->cu, n * sizeof *s->cu);
    }
done:
    vla_npy_free(&a);
    free(path);
    return rc;
}

/* S0.npy's shape against the trace's: (heads, dv, d), or (N, heads, dv, d) for N packed
 * sequences; 0, or the reason */
static int S0_shape(const vla_stream *s, const char *path, const vla_npy *f, vla_error *err)
{
    char sh[200];
    shape_str(sh, sizeof sh, f);
    const int four = f->ndim == 4, k = four; /* the heads' axis */
    if ((f->ndim != 3 && !four) || f->shape[k + 1] != s->dv || f->shape[k + 2] != s->d)
        return vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected (heads, dv, d) = (%ld, %d, %d)%s%s",
                        path, sh, s->heads, s->dv, s->d, s->nseq ? " or (N, heads, dv, d)" : "",
                        (f->ndim == 3 || four) && f->shape[k + 1] == s->d &&
                                f->shape[k + 2] == s->dv && s->d != s->dv
                            ? ": the state S as vla_model_get gives it, dv x d (fla's "
                              "initial_state (heads, d, dv) transposed)" : "");
    if (f->shape[k] != s->heads)
        return vla_fail(err, VLA_EFORMAT, "%s: shape %s, expected %ld heads (as q.npy)", path, sh,
                        s->heads);
    if (four && !s->nseq)
        return vla_fail(err, VLA_EFORMAT, "%s: shape %s, a state per packed sequence, and the "
                        "trace has no cu_seqlens.npy to say where they start", path, sh);
    if (four && f->shape[0] != s->nseq)
        return vla_fail(err, VLA_EFORMAT, "%s: shape %s, %ld initial states for the %ld packed "
                        "sequences of cu_seqlens.npy", path, sh, f->shape[0], s->nseq);
    if (!four && s->nseq > 1)
        return vla_fail(err, VLA_EFORMAT, "%s: shape %s, one initial state for the %ld packed "
                        "sequences of cu_seqlens.npy: give (N, heads, dv, d) = (%ld, %ld, %d, %d), "
                        "row i sequence i's (fla's initial_state of a varlen call)", path, sh,
                        s->nseq, s->nseq, s->heads, s->dv, s->d);
    return VLA_OK;
}

/* S0.npy, optional: each head's initial state, (heads, dv, d) as the state S is laid out, or
 * (N, heads, dv, d), a row per packed sequence; the part's heads read whole and checked finite
 * (hashed into the identity only when present, so that a trace without one keeps its identity) */
static int load_S0(vla_stream *s, const char *dir, vla_error *err)
{
    size_t plen = strlen(dir) + 8;
    char *path = malloc(plen);
    if (!path)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    snprintf(path, plen, "%s/S0.npy", dir);
    struct stat st;
    vla_npy a = {0};
    long full[8];
    int rc = 0;
    if (stat(path, &st) != 0 && errno == ENOENT)
        goto done;
    if ((rc = vla_npy_read_part(path, &a, 0, 0, -1, full, err))) /* the header */
        goto done;
    vla_npy f = a;
    memcpy(f.shape, full, sizeof full);
    if ((rc = S0_shape(s, path, &f, err)))
        goto done;
    const long rows = f.ndim == 4 ? f.shape[0] : 1;
    vla_npy_free(&a);
    if ((rc = rows > 1 ? vla_npy_read(path, &a, err)
                       : vla_npy_read_part(path, &a, s->h0, s->nh, -1, full, err)))
        goto done;
    const size_t n = (size_t)s->dv * s->d, nh = rows > 1 ? (size_t)s->q.shape[0] : (size_t)a.shape[0];
    double *x = rows > 1 ? malloc(rows * nh * n * sizeof *x + 1) : a.data;
    if (!x) {
        rc = vla_fail(err, VLA_ENOMEM, "out of memory");
        goto done;
    }
    for (long i = 0; rows > 1 && i < rows; i++) /* each row's part: heads h0 .. h0 + nh - 1 */
        memcpy(x + i * nh * n, a.data + ((size_t)i * s->heads + s->h0) * n, nh * n * sizeof *x);
    for (size_t i = 0; i < rows * nh * n && !rc; i++)
        if (!isfinite(x[i]))
            rc = rows > 1 ? vla_fail(err, VLA_ENONFINITE, "%s: %s at [%ld, %ld, %ld, %ld]", path,
                                     isnan(x[i]) ? "NaN" : "Inf", (long)(i / n / nh),
                                     s->h0 + (long)(i / n % nh), (long)(i % n / s->d),
                                     (long)(i % s->d))
                          : vla_fail(err, VLA_ENONFINITE, "%s: %s at [%ld, %ld, %ld]", path,
                                     isnan(x[i]) ? "NaN" : "Inf", s->h0 + (long)(i / n),
                                     (long)(i % n / s->d), (long)(i % s->d));
    if (rc) {
        if (x != a.data)
            free(x);
        goto done;
    }
    s->ident = vla_fnv1a(s->ident, "S0", 2);
    s->ident = vla_fnv1a(s->ident, x, rows * nh * n * sizeof *x);
    if (x == a.data)
        a.data = NULL;
    s->S0 = x;
    s->nS0 = rows;
    s->has_S0 = 1;
done:
    vla_npy_free(&a);
    free(path);
    return rc;
}

int vla_stream_S0_of(const vla_stream *s, long seq, long head, double *dst)
{
    if (!s->has_S0)
        return 0;
    if (!s->S0 || head < s->h0 || head >= s->h0 + s->nh || seq < 0 ||
        seq >= (s->nseq ? s->nseq : 1))
        return VLA_ERANGE;
    const size_t n = (size_t)s->dv * s->d;
    memcpy(dst, s->S0 + ((size_t)(seq < s->nS0 ? seq : 0) * s->nh + (head - s->h0)) * n,
           n * sizeof *dst);
    return 1;
}

int vla_stream_S0(const vla_stream *s, long head, double *dst)
{
    return vla_stream_S0_of(s, 0, head, dst);
}

long vla_stream_seqs(const vla_stream *s, const long **cu)
{
    *cu = s->nseq ? s->cu : NULL;
    return s->nseq;
}

static int open_trace(vla_stream *s, const char *dir, vla_error *err)
{
    s->ident = VLA_FNV_INIT;
    int rc = load(s, dir, "q.npy", 1, &s->q, s->d, err);
    if (!rc)
        rc = load(s, dir, "k.npy", 1, &s->k, s->d, err);
    if (!rc)
        rc = load(s, dir, "v.npy", 1, &s->v, s->dv, err);
    if (!rc)
        rc = load(s, dir, "u.npy", 0, &s->u, s->d, err);
    if (!rc)
        rc = load(s, dir, "g.npy", 0, &s->gate, s->dv, err);
    if (!rc)
        rc = load(s, dir, "beta.npy", 0, &s->beta, 0, err);
    if (!rc)
        rc = load(s, dir, "decay.npy", 0, &s->decay, 0, err);
    if (!rc)
        rc = load(s, dir, "logdecay.npy", 0, &s->logdecay, -s->d, err);
    if (!rc)
        rc = load(s, dir, "a.npy", 0, &s->ra, s->d, err);
    if (!rc)
        rc = load(s, dir, "b.npy", 0, &s->rb, s->d, err);
    if (!rc)
        rc = load_cu(s, dir, err);
    if (!rc)
        rc = load_S0(s, dir, err);
    return rc;
}

/* ---- opening: parse the spec, check every parameter, write the canonical spec ---- */

int vla_stream_open(vla_stream **out, const char *spec, int d, int dv, uint64_t seed,
                    vla_error *err)
{
    return vla_stream_open_part(out, spec, d, dv, seed, 0, -1, -1, err);
}

int vla_stream_open_part(vla_stream **out, const char *spec, int d, int dv, uint64_t seed,
                         long h0, long nh, long steps, vla_error *err)
{
    if (!out)
        return vla_fail(err, VLA_EINVAL, "no place for the stream");
    *out = NULL;
    if (!spec)
        return vla_fail(err, VLA_EINVAL, "no stream spec");
    if (d < VLA_D_MIN || d > VLA_D_MAX || dv < VLA_D_MIN || dv > VLA_D_MAX)
        return vla_fail(err, VLA_ERANGE, "stream '%s': d = %d, dv = %d: each must be in %d..%d",
                    spec, d, dv, VLA_D_MIN, VLA_D_MAX);

    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *args = colon ? colon + 1 : NULL;
    static const char *names[] = {"gauss", "lmlike", "subspace", "repeat", "mqar", "trace"};
    static const int nmin[] = {0, 0, 2, 1, 2, 1}, nmax[] = {3, 1, 2, 1, 2, 1};
    static const char *usage[] = {"gauss[:SIGMA[,sigmoid][,logits]]", "lmlike[:S]", "subspace:R,NOISE",
                                  "repeat:M", "mqar:N,G", "trace:DIR"};
    int kind = -1;
    for (int i = 0; i < 6; i++)
        if (strlen(names[i]) == nlen && !strncmp(spec, names[i], nlen))
            kind = i;
    if (kind < 0)
        return vla_fail(err, VLA_EINVAL,
                    "unknown stream '%.*s' (gauss, lmlike, subspace, repeat, mqar, trace)",
                    (int)nlen, spec);

    /* split the parameters at commas; a trace's DIR is taken whole, commas and all */
    char buf[256];
    char *tok[4];
    int ntok = 0;
    if (args && kind == VLA_STREAM_TRACE) {
        ntok = *args ? 1 : 0;
    } else if (args) {
        if (strlen(args) >= sizeof buf)
            return vla_fail(err, VLA_EINVAL, "stream '%s': parameters too long", spec);
        strcpy(buf, args);
        for (char *p = buf; p; ntok++) {
            if (ntok == 4) /* more than any stream takes */
                break;
            tok[ntok] = p;
            if ((p = strchr(p, ',')))
                *p++ = 0;
        }
    }
    if (ntok < nmin[kind] || ntok > nmax[kind] || (args && ntok == 0))
        return vla_fail(err, VLA_EINVAL, "stream '%s': expected %s", spec, usage[kind]);

    vla_stream *s = calloc(1, sizeof *s);
    if (!s)
        return vla_fail(err, VLA_ENOMEM, "out of memory");
    s->kind = (vla_stream_kind)kind;
    s->d = d;
    s->dv = dv;
    s->seed = seed;
    s->h0 = h0 > 0 ? h0 : 0;
    s->nh = nh;
    s->wT = steps;
    for (int i = 0; i < NCACHE; i++)
        s->cache[i].head = -1;

    int rc = 0;
    char canon[96];
    char a[32];
    vla_error why;
    switch (s->kind) {
    case VLA_STREAM_GAUSS:
    case VLA_STREAM_LMLIKE:
        s->scale = s->kind == VLA_STREAM_GAUSS ? 1.0 : 0.23;
        if (ntok && vla_parse_real(tok[0], &s->scale, &why))
            rc = vla_fail(err, VLA_EINVAL, "stream '%s': '%s' %s", spec, tok[0], why.msg);
        else if (!(s->scale > 0 && s->scale <= VLA_STREAM_SCALE_MAX))
            rc = vla_fail(err, VLA_ERANGE, "stream '%s': the scale must be in (0, 1e300] "
                      "(a larger one overflows binary64 in the drawn inputs)", spec);
        for (int i = 1; i < ntok && !rc; i++) { /* each flag once, in either order */
            int *flag = !strcmp(tok[i], "sigmoid") ? &s->sigmoid
                        : !strcmp(tok[i], "logits") ? &s->logits : NULL;
            if (!flag || *flag)
                rc = vla_fail(err, VLA_EINVAL, "stream '%s': '%s' is not sigmoid or logits (each "
                              "once)", spec, tok[i]);
            else
                *flag = 1;
        }
        vla_num_text(a, sizeof a, s->scale, 1); /* a spec that round-trips */
        snprintf(canon, sizeof canon, "%s:%s%s%s", names[kind], a, s->sigmoid ? ",sigmoid" : "",
                 s->logits ? ",logits" : "");
        break;
    case VLA_STREAM_SUBSPACE:
        if (!parse_int(tok[0], &s->r) || vla_parse_real(tok[1], &s->noise, NULL))
            rc = vla_fail(err, VLA_EINVAL, "stream '%s': expected subspace:R,NOISE with an "
                      "integer R and a finite number NOISE", spec);
        else if (s->r < 1 || s->r > d)
            rc = vla_fail(err, VLA_ERANGE, "stream '%s': R = %ld must be in 1..d = %d", spec,
                      s->r, d);
        else if (!(s->noise >= 0 && s->noise <= VLA_STREAM_SCALE_MAX))
            rc = vla_fail(err, VLA_ERANGE, "stream '%s': NOISE must be in [0, 1e300]", spec);
        else if (!(s->tmp = malloc((s->r + d) * sizeof(double))))
            rc = vla_fail(err, VLA_ENOMEM, "out of memory");
        vla_num_text(a, sizeof a, s->noise, 1);
        snprintf(canon, sizeof canon, "subspace:%ld,%s", s->r, a);
        break;
    case VLA_STREAM_REPEAT:
        if (!parse_int(tok[0], &s->m))
            rc = vla_fail(err, VLA_EINVAL, "stream '%s': M must be an integer", spec);
        else if (s->m < 1)
            rc = vla_fail(err, VLA_ERANGE, "stream '%s': M must be >= 1", spec);
        snprintf(canon, sizeof canon, "repeat:%ld", s->m);
        break;
    case VLA_STREAM_MQAR:
        if (!parse_int(tok[0], &s->n) || !parse_int(tok[1], &s->g))
            rc = vla_fail(err, VLA_EINVAL, "stream '%s': N and G must be integers", spec);
        else if (s->n < 1 || s->g < 0 || s->n > LONG_MAX / 4 || s->g > LONG_MAX / 4)
            rc = vla_fail(err, VLA_ERANGE, "stream '%s': N must be >= 1, G >= 0 (and not huge)",
                      spec);
        snprintf(canon, sizeof canon, "mqar:%ld,%ld", s->n, s->g);
        break;
    case VLA_STREAM_TRACE:
        rc = open_trace(s, args, err);
        if (!rc) { /* the part read */
            s->nh = s->q.shape[0];
            s->wT = s->q.shape[1];
        }
        canon[0] = 0;
        break;
    }
    if (!rc) {
        s->spec = s->kind == VLA_STREAM_TRACE ? strdup(spec) : strdup(canon);
        if (!s->spec)
            rc = vla_fail(err, VLA_ENOMEM, "out of memory");
    }
    if (rc) {
        vla_stream_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void vla_stream_close(vla_stream *s)
{
    if (!s)
        return;
    for (int i = 0; i < NCACHE; i++)
        free(s->cache[i].mat);
    free(s->tmp);
    free(s->spec);
    vla_npy_free(&s->q);
    vla_npy_free(&s->k);
    vla_npy_free(&s->v);
    vla_npy_free(&s->u);
    vla_npy_free(&s->gate);
    vla_npy_free(&s->beta);
    vla_npy_free(&s->decay);
    vla_npy_free(&s->logdecay);
    vla_npy_free(&s->ra);
    vla_npy_free(&s->rb);
    free(s->S0);
    free(s->cu);
    for (int i = 0; i < 10; i++)
        free(s->blk[i].buf);
    free(s);
}

uint64_t vla_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

void vla_stream_identity(const vla_stream *s, char *buf, size_t len)
{
    if (s->kind != VLA_STREAM_TRACE) {
        snprintf(buf, len, "%s", s->spec);
        return;
    }
    /* (of the part read, what the runs take: each file's ndim, shape and numbers in binary64, an
     * absent file's ndim 0; taken by open, which read them) */
    snprintf(buf, len, "trace:%016llx", (unsigned long long)s->ident);
}

vla_stream_kind vla_stream_kind_of(const vla_stream *s) { return s->kind; }
const char *vla_stream_spec(const vla_stream *s) { return s->spec; }

long vla_stream_length(const vla_stream *s)
{
    if (s->kind == VLA_STREAM_TRACE)
        return s->T;
    if (s->kind == VLA_STREAM_MQAR)
        return 2 * s->n + s->g;
    return -1;
}

unsigned vla_stream_optional(const vla_stream *s)
{
    if (!s || s->kind != VLA_STREAM_TRACE)
        return 0;
    return (s->u.path ? VLA_IN_U : 0) | (s->gate.path ? VLA_IN_G : 0) |
           (s->beta.path ? VLA_IN_BETA : 0) | (s->decay.path ? VLA_IN_DECAY : 0) |
           (!s->logdecay.path ? 0 : s->logdecay.ndim == 3 ? VLA_IN_LOGDECAY_D : VLA_IN_LOGDECAY) |
           (s->ra.path ? VLA_IN_A : 0) | (s->rb.path ? VLA_IN_B : 0) | (s->has_S0 ? VLA_IN_S0 : 0) |
           (s->nseq ? VLA_IN_CU : 0);
}

int vla_stream_logits(const vla_stream *s)
{
    return s && s->logits;
}

void vla_stream_want(vla_stream *s, unsigned bits)
{
    if (s)
        s->want = bits;
}

long vla_stream_heads(const vla_stream *s) { return s->kind == VLA_STREAM_TRACE ? s->heads : -1; }

long vla_stream_pair(const vla_stream *s, long t)
{
    if (s->kind != VLA_STREAM_MQAR || t < 1 || t > 2 * s->n + s->g)
        return -1;
    if (t <= s->n)
        return t - 1;
    if (t <= s->n + s->g)
        return -1;
    return t - s->n - s->g - 1;
}

int vla_step_buf_alloc(vla_step_buf *b, int d, int dv)
{
    if (!b)
        return VLA_EINVAL;
    memset(b, 0, sizeof *b);
    if (d < VLA_D_MIN || d > VLA_D_MAX || dv < VLA_D_MIN || dv > VLA_D_MAX)
        return VLA_ERANGE;
    b->q = malloc(d * sizeof(double));
    b->k = malloc(d * sizeof(double));
    b->u = malloc(d * sizeof(double));
    b->v = malloc(dv * sizeof(double));
    b->g = malloc(dv * sizeof(double));
    b->lg = malloc(d * sizeof(double));
    b->a = malloc(d * sizeof(double));
    b->b = malloc(d * sizeof(double));
    b->beta = b->decay = NAN;
    if (!b->q || !b->k || !b->u || !b->v || !b->g || !b->lg || !b->a || !b->b) {
        vla_step_buf_free(b);
        return VLA_ENOMEM;
    }
    return 0;
}

void vla_step_buf_free(vla_step_buf *b)
{
    if (!b)
        return;
    free(b->q);
    free(b->k);
    free(b->u);
    free(b->v);
    free(b->g);
    free(b->lg);
    free(b->a);
    free(b->b);
    memset(b, 0, sizeof *b);
}

/* The fixed matrix of a head, kept by columns (column j at j d), so that a product with it runs
 * across the rows in vector lanes (vla_matvec_cols): lmlike's W (d x d, drawn row by row: lane
 * i d + j is W_ij), subspace's B (d x R, orthonormal columns). */
static const double *head_matrix(vla_stream *s, uint32_t head)
{
    int d = s->d;
    long r = s->r;
    int slot = head % NCACHE;
    if (s->cache[slot].head == (long)head)
        return s->cache[slot].mat;
    long cols = s->kind == VLA_STREAM_LMLIKE ? d : r;
    if (!s->cache[slot].mat && !(s->cache[slot].mat = malloc(d * cols * sizeof(double))))
        return NULL;
    double *M = s->cache[slot].mat;
    s->cache[slot].head = head;
    if (s->kind == VLA_STREAM_LMLIKE) {
        vla_gauss_fill(M, d * d, s->seed, VLA_VAR_AUX, head, 0, 1 / sqrt(d));
        for (int i = 0; i < d; i++) /* to columns */
            for (int j = i + 1; j < d; j++) {
                double x = M[i * d + j];
                M[i * d + j] = M[j * d + i];
                M[j * d + i] = x;
            }
        return M;
    }
    /* X drawn column by column (lane j d + i), then modified Gram-Schmidt run twice, which
     * leaves the columns orthonormal to working precision */
    double *col = malloc(d * sizeof(double));
    if (!col) {
        s->cache[slot].head = -1;
        return NULL;
    }
    for (long j = 0; j < r; j++) {
        for (int i = 0; i < d; i++)
            col[i] = vla_gauss(s->seed, VLA_VAR_AUX, head, 0, (uint32_t)(j * d + i));
        for (int pass = 0; pass < 2; pass++) {
            for (long l = 0; l < j; l++) {
                double dot = 0;
                for (int i = 0; i < d; i++)
                    dot += M[l * d + i] * col[i];
                for (int i = 0; i < d; i++)
                    col[i] -= dot * M[l * d + i];
            }
        }
        unit(col, d); /* a dependent column has probability zero */
        memcpy(M + j * d, col, d * sizeof(double));
    }
    free(col);
    return M;
}

/* A synthetic stream's gates, for a model that reads them (s->want): log a = -exp(-3 + 1.5 z),
 * most decays near exp(-exp(-3)) = 0.95 with a heavy tail toward 0 (z > 2.3, 1 in 100: a < 0.2),
 * a scalar per token (lane VLA_D_MAX, apart from every channel's) or one per key channel (lanes 0
 * .. d - 1); rwkv7's a = -kappa, b = kappa * iclr, kappa a unit vector, iclr = sigmoid(z) per
 * channel (RWKV-7's in-context learning rate) */
static void draw_gates(vla_stream *s, uint32_t head, uint64_t t, vla_step_buf *b)
{
    const int d = s->d;
    if (s->want & VLA_IN_LOGDECAY_D) {
        vla_gauss_fill(b->lg, d, s->seed, VLA_VAR_LOGDECAY, head, t, s->logits ? 1 : 1.5);
        for (int i = 0; i < d && !s->logits; i++)
            b->lg[i] = -exp(-3 + b->lg[i]);
        b->has_gates |= VLA_IN_LOGDECAY_D;
    }
    if (s->want & VLA_IN_LOGDECAY) {
        double z = vla_gauss(s->seed, VLA_VAR_LOGDECAY, head, t, VLA_D_MAX);
        b->lgs = s->logits ? z : -exp(-3 + 1.5 * z);
        b->has_gates |= VLA_IN_LOGDECAY;
    }
    if (s->want & (VLA_IN_A | VLA_IN_B)) {
        vla_gauss_fill(b->a, d, s->seed, VLA_VAR_RA, head, t, 1);
        unit(b->a, d);
        vla_gauss_fill(b->b, d, s->seed, VLA_VAR_RB, head, t, 1);
        for (int i = 0; i < d; i++) {
            b->b[i] = b->a[i] / (1 + exp(-b->b[i]));
            b->a[i] = -b->a[i];
        }
        b->has_gates |= VLA_IN_A | VLA_IN_B;
    }
}

int vla_stream_get(vla_stream *s, uint32_t head, long t, vla_step_buf *b)
{
    if (!s || !b)
        return VLA_EINVAL;
    long len = vla_stream_length(s);
    if (t < 1 || (len >= 0 && t > len) ||
        (s->kind == VLA_STREAM_TRACE && (head < s->h0 || head >= s->h0 + s->nh || t > s->wT)))
        return VLA_ERANGE; /* (a trace: outside the part read) */
    int d = s->d, dv = s->dv;
    uint64_t seed = s->seed, tt = (uint64_t)t;
    b->beta = b->decay = NAN;
    b->has_g = b->is_read = 0;
    b->pair = vla_stream_pair(s, t);
    b->lgs = 0;
    b->has_gates = 0;

    switch (s->kind) {
    case VLA_STREAM_GAUSS:
        vla_gauss_fill(b->q, d, seed, VLA_VAR_Q, head, tt, s->scale);
        vla_gauss_fill(b->k, d, seed, VLA_VAR_K, head, tt, s->scale);
        vla_gauss_fill(b->v, dv, seed, VLA_VAR_V, head, tt, s->scale);
        vla_gauss_fill(b->u, d, seed, VLA_VAR_U, head, tt, s->scale);
        if (s->sigmoid) /* fla issue 736's rates */
            b->beta = 1 / (1 + exp(-vla_gauss(seed, VLA_VAR_BETA, head, tt, 0)));
        break;
    case VLA_STREAM_LMLIKE: {
        const double *W = head_matrix(s, head);
        if (!W)
            return VLA_ENOMEM;
        vla_gauss_fill(b->q, d, seed, VLA_VAR_Q, head, tt, s->scale);
        vla_gauss_fill(b->k, d, seed, VLA_VAR_K, head, tt, s->scale);
        vla_gauss_fill(b->v, dv, seed, VLA_VAR_V, head, tt, s->scale);
        vla_matvec_cols(W, b->k, d, d, b->u);
        unit(b->u, d);
        break;
    }
    case VLA_STREAM_SUBSPACE: {
        const double *B = head_matrix(s, head);
        if (!B)
            return VLA_ENOMEM;
        long r = s->r;
        vla_gauss_fill(s->tmp, (int)r, seed, VLA_VAR_K, head, tt, 1 / sqrt((double)r));
        vla_gauss_fill(b->u, d, seed, VLA_VAR_U, head, tt, s->noise / sqrt(d));
        double *Bz = s->tmp + r; /* B z, then + the noise */
        vla_matvec_cols(B, s->tmp, d, r, Bz);
        for (int i = 0; i < d; i++)
            b->u[i] = Bz[i] + b->u[i];
        memcpy(b->k, b->u, d * sizeof(double));
        vla_gauss_fill(b->q, d, seed, VLA_VAR_Q, head, tt, 1);
        vla_gauss_fill(b->v, dv, seed, VLA_VAR_V, head, tt, 1);
        break;
    }
    case VLA_STREAM_REPEAT:
        vla_gauss_fill(b->k, d, seed, VLA_VAR_K, head, (uint64_t)((t - 1) % s->m) + 1, 1);
        memcpy(b->u, b->k, d * sizeof(double));
        vla_gauss_fill(b->q, d, seed, VLA_VAR_Q, head, tt, 1);
        vla_gauss_fill(b->v, dv, seed, VLA_VAR_V, head, tt, 1);
        break;
    case VLA_STREAM_MQAR: {
        uint64_t w = tt;
        if (t > s->n + s->g) {
            b->is_read = 1;
            w = (uint64_t)(t - s->n - s->g);
        }
        vla_gauss_fill(b->k, d, seed, VLA_VAR_K, head, w, 1 / sqrt(d));
        vla_gauss_fill(b->v, dv, seed, VLA_VAR_V, head, w, 1);
        memcpy(b->u, b->k, d * sizeof(double));
        memcpy(b->q, b->k, d * sizeof(double));
        break;
    }
    case VLA_STREAM_TRACE: {
        /* each file's numbers of the step, from its block (open_trace's order) */
        const long h = (long)head - s->h0, r = t - 1;
        const vla_npy *a[10] = {&s->q, &s->k, &s->v, &s->u, &s->gate, &s->beta, &s->decay,
                                &s->logdecay, &s->ra, &s->rb};
        const double *x[10] = {NULL};
        for (int i = 0; i < 10; i++)
            if (a[i]->path && !(x[i] = step_of(s, i, a[i], h, r)))
                return VLA_EIO; /* (the file changed or went away since open checked it) */
        memcpy(b->q, x[0], d * sizeof(double));
        memcpy(b->k, x[1], d * sizeof(double));
        memcpy(b->v, x[2], dv * sizeof(double));
        memcpy(b->u, x[3] ? x[3] : x[1], d * sizeof(double));
        if (x[4]) {
            memcpy(b->g, x[4], dv * sizeof(double));
            b->has_g = 1;
        }
        if (x[5])
            b->beta = x[5][0];
        if (x[6])
            b->decay = x[6][0];
        if (x[7] && s->logdecay.ndim == 3) {
            memcpy(b->lg, x[7], d * sizeof(double));
            b->has_gates |= VLA_IN_LOGDECAY_D;
        } else if (x[7]) {
            b->lgs = x[7][0];
            b->has_gates |= VLA_IN_LOGDECAY;
        }
        if (x[8]) {
            memcpy(b->a, x[8], d * sizeof(double));
            b->has_gates |= VLA_IN_A;
        }
        if (x[9]) {
            memcpy(b->b, x[9], d * sizeof(double));
            b->has_gates |= VLA_IN_B;
        }
        break;
    }
    }
    if (s->kind != VLA_STREAM_TRACE)
        draw_gates(s, head, tt, b);
    return 0;
}

vla_input vla_input_of(const vla_step_buf *b)
{
    return (vla_input){.q = b->q, .k = b->k, .v = b->v, .u = b->u, .g = b->has_g ? b->g : NULL,
                       .beta = b->beta, .decay = b->decay,
                       .lg = b->has_gates & VLA_IN_LOGDECAY_D ? b->lg : NULL,
                       .a = b->has_gates & VLA_IN_A ? b->a : NULL,
                       .b = b->has_gates & VLA_IN_B ? b->b : NULL, .lgs = b->lgs};
}

/* ---- prepared inputs: a stream's steps drawn once, for engines to replay ---- */

void vla_inputs_free(vla_inputs *x)
{
    vla_stream_close(x->s);
    vla_step_buf_free(&x->b);
    free(x->in);
    free(x->is_read);
    free(x->store);
    free(x->S0);
    free(x->cu);
    memset(x, 0, sizeof *x);
}

/* vla_inputs_open of heads h0 .. h0 + heads - 1 */
static int inputs_open(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int h0,
                       int heads, long T, long steps, unsigned want, vla_error *err)
{
    memset(x, 0, sizeof *x);
    int e = vla_stream_open_part(&x->s, spec, d, dv, seed, h0, heads, steps, err);
    if (e)
        return e;
    vla_stream_want(x->s, want);
    long len = vla_stream_length(x->s), nh = vla_stream_heads(x->s);
    if (nh > 0 && nh < (long)h0 + heads) {
        vla_inputs_free(x);
        return vla_fail(err, VLA_ERANGE, "stream %.150s: %ld heads, %d wanted", spec, nh,
                        h0 + heads);
    }
    if (len > 0 && T > len) /* a finite stream bounds the steps */
        T = len;
    /* q k u, v g, and the gated family's lg a b */
    const size_t per = 6 * (size_t)d + 2 * (size_t)dv, n = (size_t)heads * T;
    x->d = d;
    x->dv = dv;
    x->heads = heads;
    x->h0 = h0;
    x->T = T;
    x->in = calloc(n, sizeof *x->in);
    x->is_read = calloc(n, 1);
    x->store = malloc(n * per * sizeof(double));
    const size_t ns = (size_t)dv * d;
    const long *cu;
    const long nseq = vla_stream_seqs(x->s, &cu), rows = nseq > 1 ? nseq : 1;
    if (nseq && (x->cu = malloc((nseq + 1) * sizeof *x->cu)))
        memcpy(x->cu, cu, (nseq + 1) * sizeof *x->cu), x->nseq = nseq;
    if ((vla_stream_optional(x->s) & VLA_IN_S0) &&
        (x->S0 = malloc(rows * heads * ns * sizeof *x->S0)))
        for (long i = 0; i < rows * heads; i++) /* head i / rows, sequence i % rows */
            vla_stream_S0_of(x->s, i % rows, h0 + i / rows, x->S0 + i * ns);
    if (!x->in || !x->is_read || !x->store || vla_step_buf_alloc(&x->b, d, dv) ||
        ((vla_stream_optional(x->s) & VLA_IN_S0) && !x->S0) || (nseq && !x->cu)) {
        vla_inputs_free(x);
        return vla_fail(err, VLA_ENOMEM, "out of memory for %ld steps of %d heads of inputs", T,
                        heads);
    }
    return VLA_OK;
}

int vla_inputs_open(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int heads,
                    long T, long steps, unsigned want, vla_error *err)
{
    return inputs_open(x, spec, seed, d, dv, 0, heads, T, steps, want, err);
}

int vla_inputs_open_part(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int h0,
                         int heads, long T, long steps, unsigned want, vla_error *err)
{
    return inputs_open(x, spec, seed, d, dv, h0, heads, T, steps, want, err);
}

int vla_inputs_fill(vla_inputs *x, long t0, long t1, vla_error *err)
{
    const int d = x->d, dv = x->dv;
    const size_t per = 6 * (size_t)d + 2 * (size_t)dv;
    vla_step_buf *b = &x->b;
    if (t1 - t0 > x->T)
        return vla_fail(err, VLA_ERANGE, "steps %ld .. %ld: more than the %ld a window holds",
                        t0 + 1, t1, x->T);
    for (int h = 0; h < x->heads; h++)
        for (long t = t0 + 1; t <= t1; t++) {
            size_t i = (size_t)h * x->T + (size_t)((t - 1) % x->T);
            double *p = x->store + i * per;
            int e = vla_stream_get(x->s, (uint32_t)(x->h0 + h), t, b);
            if (e)
                return vla_fail(err, e, "stream %.200s, head %d, step %ld: %s",
                                vla_stream_spec(x->s), x->h0 + h, t, vla_strerror(e));
            memcpy(p, b->q, d * sizeof(double));
            memcpy(p + d, b->k, d * sizeof(double));
            memcpy(p + 2 * d, b->u, d * sizeof(double));
            memcpy(p + 3 * d, b->v, dv * sizeof(double));
            memcpy(p + 3 * d + dv, b->g, dv * sizeof(double));
            double *lg = p + 3 * d + 2 * dv, *ra = lg + d, *rb = ra + d;
            memcpy(lg, b->lg, d * sizeof(double));
            memcpy(ra, b->a, d * sizeof(double));
            memcpy(rb, b->b, d * sizeof(double));
            x->in[i] = (vla_input){p, p + d, p + 3 * d, p + 2 * d, b->has_g ? p + 3 * d + dv : NULL,
                                   b->beta, b->decay, b->has_gates & VLA_IN_LOGDECAY_D ? lg : NULL,
                                   b->has_gates & VLA_IN_A ? ra : NULL,
                                   b->has_gates & VLA_IN_B ? rb : NULL, b->lgs};
            x->is_read[i] = (unsigned char)b->is_read;
        }
    return VLA_OK;
}

int vla_inputs_draw(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int heads,
                    long T, unsigned want, vla_error *err)
{
    return vla_inputs_draw_part(x, spec, seed, d, dv, 0, heads, T, want, err);
}

int vla_inputs_draw_part(vla_inputs *x, const char *spec, uint64_t seed, int d, int dv, int h0,
                         int heads, long T, unsigned want, vla_error *err)
{
    int e = inputs_open(x, spec, seed, d, dv, h0, heads, T, T, want, err);
    if (!e && (e = vla_inputs_fill(x, 0, x->T, err)))
        vla_inputs_free(x);
    if (!e) { /* every step is here: the stream is done */
        vla_stream_close(x->s);
        x->s = NULL;
    }
    return e;
}
