/* test_trace.c: the outside check. lib/ replays the real per-head inputs of the original PyTorch
 * code ($VLA_SHARED/data/lmtrace-seed7) through the public API and must reproduce the trajectories
 * that code computed from them: vla3 in f64 and f32 per head, and the notebook's own float32
 * mean-over-heads curves of linear attention, gated DeltaNet and VLA. */
#include "check.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEADS 4
#define T 1000
#define D 32

/* ../shared, or $VLA_SHARED as `make test` sets it; NULL when the trace is absent */
static const char *trace_dir(void)
{
    static char dir[512];
    const char *sh = getenv("VLA_SHARED");
    snprintf(dir, sizeof dir, "%s/data/lmtrace-seed7", sh ? sh : "../shared");
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

/* one value per (head, t, column): S_fro, A_fro, o_norm */
typedef struct {
    double v[HEADS][T + 1][3];
} traj;
static const char *const colname[3] = {"S_fro", "A_fro", "o_norm"};

/* Runs MODEL in PREC on trace:DIR/SUB for every head and T steps, through the same calls a program
 * makes, and records the three norms after every step. */
static int run_trace(traj *out, vla_model_kind mk, vla_prec prec, const char *dir, const char *sub)
{
    char spec[700];
    vla_error err = {0};
    snprintf(spec, sizeof spec, "trace:%s/%s", dir, sub);
    vla_stream *s = NULL;
    int e = vla_stream_open(&s, spec, D, D, 1, &err);
    CHECK_MSG(e == 0, "open %s: %s", spec, err.msg);
    if (e)
        return e;
    CHECK_EQ_INT(vla_stream_heads(s), HEADS);
    CHECK_EQ_INT(vla_stream_length(s), T);
    vla_config cfg;
    vla_config_default(&cfg, mk, D);
    cfg.prec = prec;
    cfg.mode = VLA_STRICT;
    vla_step_buf b;
    double *S = malloc(D * D * sizeof *S), o[D];
    e = vla_step_buf_alloc(&b, D, D);
    for (int h = 0; !e && h < HEADS; h++) {
        vla_model *m = NULL;
        if ((e = vla_model_new(&m, &cfg)))
            break;
        for (long t = 1; !e && t <= T; t++) {
            if ((e = vla_stream_get(s, (uint32_t)h, t, &b)))
                break;
            vla_input in = vla_input_of(&b);
            if ((e = vla_model_step(m, &in)))
                break;
            vla_model_get(m, VLA_Q_S, S);
            out->v[h][t][0] = vla_fro(S, D * D);
            out->v[h][t][1] = NAN;
            if (vla_model_has_A(mk)) {
                vla_model_get(m, VLA_Q_A, S);
                out->v[h][t][1] = vla_fro(S, D * D);
            }
            vla_model_get(m, VLA_Q_O, o);
            out->v[h][t][2] = vla_fro(o, D);
        }
        vla_model_free(m);
    }
    CHECK_MSG(e == 0, "%s %s on %s: %s", vla_model_name(mk), vla_prec_name(prec), spec,
              vla_strerror(e));
    vla_step_buf_free(&b);
    vla_stream_close(s);
    free(S);
    return e;
}

/* Reads a whitespace-separated table with one header line into rows of up to `ncol` numbers; a
 * non-numeric first field (the notebook's model name) is kept in `tag`. An empty field (the
 * notebook's A_norm_mean for models without A) reads as NaN. Returns the row count or -1. */
typedef struct {
    char tag[16];
    double x[5];
} row_t;
static long read_table(const char *path, row_t *rows, long max, int ncol, int tagged)
{
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return -1;
    char line[512];
    long n = 0;
    int bad = !fgets(line, sizeof line, f); /* the header */
    while (!bad && n < max && fgets(line, sizeof line, f)) {
        row_t *r = &rows[n];
        char *p = line, *end;
        r->tag[0] = 0;
        if (tagged) {
            size_t l = strcspn(p, "\t ");
            if (l == 0 || l >= sizeof r->tag || !p[l]) {
                bad = 1;
                break;
            }
            memcpy(r->tag, p, l);
            r->tag[l] = 0;
            p += l + 1;
        }
        /* fields are tab-separated: split on tabs so that an empty field stays a field */
        for (int c = 0; c < ncol; c++) {
            size_t l = strcspn(p, "\t\n");
            r->x[c] = l ? strtod(p, &end) : NAN;
            if (l && end != p + l)
                bad = 1;
            p += l;
            if (*p == '\t')
                p++;
        }
        n++;
    }
    fclose(f);
    CHECK_MSG(!bad, "%s: malformed line %ld", path, n + 1);
    return bad ? -1 : n;
}

/* worst relative error of a column, with where it happened */
typedef struct {
    double err;
    int head;
    long t;
} worst_t;
static void note(worst_t *w, double got, double want, int head, long t)
{
    double r = fabs(got - want) / fabs(want);
    if (!(r <= w->err)) { /* NaN counts as worse than anything */
        w->err = isnan(r) ? INFINITY : r;
        w->head = head;
        w->t = t;
    }
}

/* Compares a run with a per-head trajectory file (head t S_fro A_fro o_norm) at every t; asserts
 * bound[c] on each column c and prints the worst relative error per column. */
static void against_traj(const traj *ours, const char *path, const double bound[3],
                         const char *what)
{
    static row_t rows[HEADS * T + 1];
    long n = read_table(path, rows, HEADS * T + 1, 5, 0);
    if (n < 0)
        return;
    CHECK_EQ_INT(n, HEADS * T);
    worst_t w[3] = {{0}};
    for (long i = 0; i < n; i++) {
        int h = (int)rows[i].x[0];
        long t = (long)rows[i].x[1];
        if (h < 0 || h >= HEADS || t < 1 || t > T) {
            CHECK_MSG(0, "%s: row %ld names head %d, t %ld", path, i + 1, h, t);
            return;
        }
        for (int c = 0; c < 3; c++)
            note(&w[c], ours->v[h][t][c], rows[i].x[2 + c], h, t);
    }
    printf("    %s, worst rel. error over 4 heads x 1000 steps:", what);
    for (int c = 0; c < 3; c++)
        printf(" %s %.2e (h%d t%ld)%s", colname[c], w[c].err, w[c].head, w[c].t, c < 2 ? "," : "\n");
    for (int c = 0; c < 3; c++)
        CHECK_MSG(w[c].err <= bound[c], "%s: %s rel. error %.3g at head %d, t %ld > bound %.3g",
                  what, colname[c], w[c].err, w[c].head, w[c].t, bound[c]);
}

static const double u32 = 0x1p-24, u16 = 0x1p-11;

/* vla3 in f64 against the original's float64 run. Our f64 rounding alone would be ~t d u64 =
 * 4e-12; what separates us is the README's 5e-9 effect: the original normalized u in float32
 * and did not renormalize the float64 cast (|1 - ||u||| up to 1.4e-7 in u.npy), while
 * docs/math.md's vla3
 * (and lib/) computes unit(u) in f64. An f64 recurrence that skips that renormalization matches
 * the file to 1.1e-15, so nothing else differs. Bound: the README's "about 1e-8". */
TEST(trace_vla3_f64_reproduces_original)
{
    const char *dir = trace_dir();
    if (!dir) {
        vla_test_skip("no lmtrace-seed7 trace (set VLA_SHARED)");
        return;
    }
    static traj ours;
    char path[700];
    if (run_trace(&ours, VLA_VLA3, VLA_F64, dir, "vla3"))
        return;
    snprintf(path, sizeof path, "%s/vla_traj_f64.tsv", dir);
    const double bound[3] = {1e-8, 1e-8, 1e-8};
    against_traj(&ours, path, bound, "vla3 f64 vs vla_traj_f64");
}

/* vla3 in f32 against PyTorch's float32 run: the same recurrence with other reduction orders
 * (BLAS blocking), so the two differ by rounding alone. One length-d reduction errs by at most
 * gamma_d ~ d u32 = 1.9e-6 (Higham), by ~sqrt(d) u32 = 3.4e-7 for random rounding errors, which
 * is the size we measure (S 1.3e-7, A 8.9e-8, o 5.4e-7) and that does not compound with t: the
 * worst S error over t in 101..1000 is no larger than over 1..100. o = S phi(q) / (n . phi(q)) is
 * two reductions, so the bound is 2 d u32 = 3.8e-6 on every column. */
TEST(trace_vla3_f32_matches_pytorch_f32)
{
    const char *dir = trace_dir();
    if (!dir) {
        vla_test_skip("no lmtrace-seed7 trace (set VLA_SHARED)");
        return;
    }
    static traj ours;
    char path[700];
    if (run_trace(&ours, VLA_VLA3, VLA_F32, dir, "vla3"))
        return;
    snprintf(path, sizeof path, "%s/vla_traj_f32.tsv", dir);
    const double b = 2 * D * u32, bound[3] = {b, b, b};
    against_traj(&ours, path, bound, "vla3 f32 vs vla_traj_f32");
}

/* PyTorch CPU's half: float16 storage, float32 sums, which is docs/math.md's f16-f32 policy up to
 * where each value is rounded to 16 bits (the README calls it informative, not an exact target).
 * The bound is the f32 one scaled to binary16, 2 d u16 = 3.1e-2; we measure 3e-3. */
TEST(trace_vla3_f16f32_near_pytorch_half)
{
    const char *dir = trace_dir();
    if (!dir) {
        vla_test_skip("no lmtrace-seed7 trace (set VLA_SHARED)");
        return;
    }
    static traj ours;
    char path[700];
    if (run_trace(&ours, VLA_VLA3, VLA_F16_F32, dir, "vla3"))
        return;
    snprintf(path, sizeof path, "%s/vla_traj_f16.tsv", dir);
    const double b = 2 * D * u16, bound[3] = {b, b, b};
    against_traj(&ours, path, bound, "vla3 f16-f32 vs vla_traj_f16");
}

/* The notebook's curves (model t S_norm_mean A_norm_mean, float32) are the mean over the 4 heads of
 * ||S_t||_F and ||A_t||_F (not the rms over heads, which is off by 5.6e-3 for linear, nor the norm
 * of all heads together), from docs/math.md's la (S = sum v phi(k)^T, no decay), delta in its gated
 * form with beta = 1 (S = diag(g) S + (v - S_{t-1} k') k'^T: the error from the ungated state; an
 * error from the gated state is off by 36%, beta = 0.5 by 51%) and vla3. These curves hold no
 * read-out, so whether the notebook's la normalizes o is not visible here. We run in f32, as the
 * notebook did; each entry of la's S is a sum of t terms, whose rounding grows like sqrt(t) u32 <=
 * 1.9e-6 at t = 1000, within the 2 d u32 = 3.8e-6 of the f32 test above (measured: 1.8e-7 at
 * worst). */
TEST(trace_notebook_curves_la_delta_vla3)
{
    const char *dir = trace_dir();
    if (!dir) {
        vla_test_skip("no lmtrace-seed7 trace (set VLA_SHARED)");
        return;
    }
    static row_t rows[3 * T + 8];
    char path[700];
    snprintf(path, sizeof path, "%s/exp2_notebook_traj.tsv", dir);
    long n = read_table(path, rows, 3 * T + 8, 3, 1);
    if (n < 0)
        return;
    CHECK_EQ_INT(n, 3 * T);
    static const struct {
        const char *nb, *sub;
        vla_model_kind mk;
    } models[] = {{"linear", "la", VLA_LA}, {"deltanet", "delta", VLA_DELTA}, {"vla", "vla3", VLA_VLA3}};
    const double bound = 2 * D * u32;
    double final_s[3] = {0};
    for (int mi = 0; mi < 3; mi++) {
        static traj ours;
        if (run_trace(&ours, models[mi].mk, VLA_F32, dir, models[mi].sub))
            return;
        worst_t w[2] = {{0}};
        long seen = 0;
        for (long i = 0; i < n; i++) {
            if (strcmp(rows[i].tag, models[mi].nb))
                continue;
            long t = (long)rows[i].x[0];
            if (t < 1 || t > T) {
                CHECK_MSG(0, "%s: %s row names t %ld", path, models[mi].nb, t);
                return;
            }
            seen++;
            double ms = 0, ma = 0;
            for (int h = 0; h < HEADS; h++) {
                ms += ours.v[h][t][0] / HEADS;
                ma += ours.v[h][t][1] / HEADS;
            }
            note(&w[0], ms, rows[i].x[1], -1, t);
            if (vla_model_has_A(models[mi].mk))
                note(&w[1], ma, rows[i].x[2], -1, t);
            else
                CHECK_MSG(isnan(rows[i].x[2]), "%s: %s has an A_norm at t %ld", path,
                          models[mi].nb, t);
            if (t == T)
                final_s[mi] = ms;
        }
        CHECK_EQ_INT(seen, T);
        printf("    %s f32 vs notebook '%s', worst rel. error of the head means: S_norm %.2e (t%ld)",
               vla_model_name(models[mi].mk), models[mi].nb, w[0].err, w[0].t);
        if (vla_model_has_A(models[mi].mk))
            printf(", A_norm %.2e (t%ld)", w[1].err, w[1].t);
        printf("\n");
        CHECK_MSG(w[0].err <= bound, "%s vs notebook %s: S_norm rel. error %.3g at t %ld > %.3g",
                  vla_model_name(models[mi].mk), models[mi].nb, w[0].err, w[0].t, bound);
        CHECK_MSG(w[1].err <= bound, "%s vs notebook %s: A_norm rel. error %.3g at t %ld > %.3g",
                  vla_model_name(models[mi].mk), models[mi].nb, w[1].err, w[1].t, bound);
    }
    /* the claims of docs/math.md section 10 (claim 3) on this trace (seed 7; the notebook's
     * seed-42 run printed 1633.9 and 14.52) */
    printf("    claim 3 at T = 1000 on the real trace: la %.1f, delta %.3f, vla3 %.2f (la/vla3 %.1fx)\n",
           final_s[0], final_s[1], final_s[2], final_s[0] / final_s[2]);
}
