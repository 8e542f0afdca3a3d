/* test_reliability.c: failure classes beyond the hardening tests, each checked.
 * Checkpoints carry a checksum and every field is checked (a damaged one is said and its run
 * starts over, never trusted); a --resume of another run is refused and its checkpoints kept,
 * constants keyed exactly and a trace by its contents; checkpoints go only beside a regular file,
 * through the rules of lib/file.h; an exact reference at many bits answers a signal within its
 * step; a signal or a kill -9 leaves no temporary behind for long; what is read whole is a
 * regular file; messages name the cause; recall says when its read-outs overflow. The programs
 * that do not run on vla_drive resume too, from the units of work they finished. */
#define _GNU_SOURCE
#include "check.h"
#include "proc.h"
#include "vlacuda.h"
#include "vlaref.h"
#include "vlastab.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---- */

/* Runs argv (env added) until it catches sig (its handler set, unless sig is SIGKILL), the file
 * `wait_for` exists ("stderr:TEXT": until its stderr says TEXT) and `after` more seconds passed
 * (after < 0: -after times the seconds from the start until then), then sends sig; returns the
 * exit status, *latency the seconds from the signal to the exit. */
static int run_signalled(char *const argv[], char *const env[], const char *wait_for, double after,
                         int sig, double *latency, char *msg, size_t len)
{
    child ch;
    if (spawn(&ch, NULL, argv, env))
        return -2;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (sig != SIGKILL)
        wait_catching(ch.pid, sig, 120);
    const char *text = wait_for && !strncmp(wait_for, "stderr:", 7) ? wait_for + 7 : NULL;
    for (int there = !wait_for; !there && seconds_since(&t0) < 120;) {
        char *e = text ? read_all(ch.err, NULL) : NULL;
        there = text ? e && strstr(e, text) : exists(wait_for);
        free(e);
        if (!there)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    if (after < 0)
        after *= -seconds_since(&t0);
    nanosleep(&(struct timespec){(time_t)after, (long)((after - (time_t)after) * 1e9)}, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kill(ch.pid, sig);
    int st = finish(&ch, 120);
    if (latency)
        *latency = seconds_since(&t0);
    char *out = read_all(ch.err, NULL);
    snprintf(msg, len, "%s", out ? out : "");
    free(out);
    unlink(ch.err);
    return st;
}

/* argv of bin/PROG with the arguments of a NULL-terminated list, then up to four more (NULL) */
static int make_argv(char **argv, const char *p, const char *const *args, const char *a1,
                     const char *a2, const char *a3, const char *a4)
{
    int n = 0;
    argv[n++] = (char *)p;
    for (; *args; args++)
        argv[n++] = (char *)*args;
    const char *more[] = {a1, a2, a3, a4};
    for (int i = 0; i < 4 && more[i]; i++)
        argv[n++] = (char *)more[i];
    argv[n] = NULL;
    return n;
}

/* a test's table OUT (a.dat), the uninterrupted run's (ref.dat) and OUT's first checkpoint */
static void paths(const char *dir, char out[400], char ref[400], char ck[450])
{
    snprintf(out, 400, "%s/a.dat", dir);
    snprintf(ref, 400, "%s/ref.dat", dir);
    snprintf(ck, 450, "%s.ckpt", out);
}

/* Runs argv until its n-th checkpoint file is written, where it stops as SIGINT would
 * (VLA_STOP_AFTER_CHECKPOINTS: the same point however fast the machine is, every unit written);
 * the exit status, stderr in msg */
static int stop_after(char *const argv[], int n, char *msg, size_t len)
{
    char every[] = "VLA_CHECKPOINT_SECONDS=0", stop[64];
    snprintf(stop, sizeof stop, "VLA_STOP_AFTER_CHECKPOINTS=%d", n);
    char *const env[] = {every, stop, NULL};
    return run(NULL, argv, env, msg, len, 120);
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = read_all(a, &la), *y = read_all(b, &lb);
    int same = x && y && la == lb && !memcmp(x, y, la);
    free(x);
    free(y);
    return same;
}

/* the offsets of a checkpoint's fields (ckpt.c's file, a run's record as drive.c writes it): the
 * header (the magic, the key's length at 8 and its text, the number of records, the header's
 * checksum), then run 0's record at rec: its length, the next checkpoint's index (ci), the model's
 * state (its magic, description, t, counts), the accumulator, the rows; its checksum at end */
typedef struct {
    size_t rec, ci, t, counts, rows_n, acc, end;
    long nck_done;
} ckpt_layout;

/* the checksums of a checkpoint rewritten after a forged field: run 0's record (FNV-1a of its
 * length and bytes) and the header's (FNV-1a of the header before it) */
static void reseal(char *bytes, const ckpt_layout *L)
{
    uint64_t h = vla_fnv1a(VLA_FNV_INIT, bytes + L->rec, L->end - L->rec);
    memcpy(bytes + L->end, &h, 8);
    h = vla_fnv1a(VLA_FNV_INIT, bytes, L->rec - 8);
    memcpy(bytes + L->rec - 8, &h, 8);
}

/* the number of columns of a table (its "# columns:" line): a checkpoint's rows are that wide */
static int table_ncols(const char *path)
{
    char *t = read_all(path, NULL), *c = t ? strstr(t, "# columns:") : NULL;
    int n = 0;
    for (c = c ? c + 10 : NULL; c && *c && *c != '\n'; n++) {
        c += strspn(c, " ");
        c += strcspn(c, " \n");
    }
    free(t);
    return n;
}

static int layout(const char *b, size_t len, int ncol, size_t acc_size, ckpt_layout *L)
{
    uint32_t klen, dlen;
    uint64_t rlen;
    if (len < 64 || memcmp(b, "vlackpt4", 8))
        return 0;
    memcpy(&klen, b + 8, 4);
    L->rec = 8 + 4 + (size_t)klen + 4 + 8;
    if (L->rec + 8 + 32 > len)
        return 0;
    memcpy(&rlen, b + L->rec, 8);
    L->ci = L->rec + 8;
    L->end = L->ci + rlen;
    if (rlen > len || L->end + 8 > len)
        return 0;
    memcpy(&L->nck_done, b + L->ci, 8);
    size_t m = L->ci + 8; /* "VLAMOD1\0", the description's length and text */
    memcpy(&dlen, b + m + 8, 4);
    L->t = m + 12 + dlen;
    L->counts = L->t + 8;
    /* the record ends with the rows' count, the rows and the driver's 5 summary marks */
    size_t tail = (size_t)L->nck_done * ncol * 8 + 8 + acc_size + 5 * 8;
    if (L->nck_done < 0 || L->nck_done > 100000 || tail + L->counts + 64 > L->end)
        return 0;
    L->rows_n = L->end - 5 * 8 - (size_t)L->nck_done * ncol * 8 - 8;
    L->acc = L->rows_n - acc_size;
    return 1;
}

/* ---- damaged checkpoints ---- */

/* a run that checkpoints often (VLA_CHECKPOINT_SECONDS=0: every slice) and takes a while, and
 * one that runs until it is stopped */
static const char *const sn_args[] = {"--model", "vla3", "--precision", "f32", "--d", "8",
                                      "--steps", "30000", "--checkpoints", "20", "--ref", "none",
                                      NULL};
static const char *const long_args[] = {"--model", "vla3", "--precision", "f32", "--d", "8",
                                        "--steps", "1e9", "--ref", "none", NULL};

/* A checkpoint damaged anywhere (a flipped byte, a cut, a byte added) or forged with a valid
 * checksum in any field (the next checkpoint, t, the counters, the rows, the accumulator) is
 * said to be damaged and its run starts over: the table is the uninterrupted run's, and nothing
 * crashes (a forged accumulator index once made vla-statenorm write out of bounds). */
TEST(reliability_damaged_checkpoints)
{
    const char *p;
    char dir[256], ref[400], out[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, sn_args, "--out", ref, NULL, NULL);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want, "uninterrupted: status %d '%s'", st, msg);
    make_argv(argv, p, sn_args, "--out", out, NULL, NULL);
    st = stop_after(argv, 3, msg, sizeof msg);
    size_t len;
    char *orig = read_all(ck, &len);
    CHECK_MSG(st == 3 && orig, "interrupted: status %d '%s'", st, msg);
    ckpt_layout L = {0, 0, 0, 0, 0, 0, 0, -1};
    if (!want || !orig || !layout(orig, len, table_ncols(ref), 8 + 2 * 512 * 8, &L) || L.nck_done < 2) {
        CHECK_MSG(0, "no checkpoint with two rows to damage (%ld)", orig ? L.nck_done : -1);
        free(want);
        free(orig);
        remove_tree(dir);
        return;
    }
    /* the damages: a flipped byte at spread offsets, cuts, an extra byte, forged fields */
    enum { FLIP, CUT, GROW, CI, T, GUARD, STEPS, ROWS_N, ROW_T, ACC_N, ACC_S, MARK, NKIND };
    static const char *const names[] = {"flip", "cut", "grow", "index", "t", "guard", "steps",
                                        "row count", "row t", "acc n", "acc s", "mark"};
    for (int kind = 0; kind < NKIND; kind++)
        for (int rep = 0; rep < (kind == FLIP ? 6 : kind == CUT ? 3 : 1); rep++) {
            char *b = malloc(len + 1);
            memcpy(b, orig, len);
            size_t n = len;
            long v;
            double x;
            switch (kind) {
            case FLIP: b[(size_t)rep * (len - 1) / 5] ^= 0x04; break;
            case CUT: n = rep == 0 ? 7 : rep == 1 ? len / 2 : len - 1; break;
            case GROW: /* a byte more in the record, its length and checksum to match */
                memmove(b + L.end + 1, b + L.end, len - L.end);
                b[L.end] = 0;
                n++;
                v = (long)(L.end + 1 - L.ci);
                memcpy(b + L.rec, &v, 8);
                L.end++;
                reseal(b, &L);
                L.end--;
                break;
            case CI: v = 9999; memcpy(b + L.ci, &v, 8); break;
            case T: memcpy(&v, b + L.t, 8); v++; memcpy(b + L.t, &v, 8); break;
            case GUARD: v = -1; memcpy(b + L.counts, &v, 8); break;
            case STEPS: /* t and steps agree, but not with the checkpoints measured */
                memcpy(&v, b + L.t, 8);
                v += 5000;
                memcpy(b + L.t, &v, 8);
                memcpy(b + L.counts + 6 * 8, &v, 8);
                break;
            case ROWS_N: memcpy(&v, b + L.rows_n, 8); v--; memcpy(b + L.rows_n, &v, 8); break;
            case ROW_T: x = 3; memcpy(b + L.rows_n + 8, &x, 8); break;
            case ACC_N: v = 1L << 40; memcpy(b + L.acc, &v, 8); break;
            case ACC_S: b[L.acc + 8 + 512 * 8 + 3] ^= 1; break;
            case MARK: v = 1L << 40; memcpy(b + L.end - 5 * 8, &v, 8); break; /* inf_at > t */
            }
            if (kind >= CI)
                reseal(b, &L);
            write_bytes(ck, b, n);
            free(b);
            make_argv(argv, p, sn_args, "--out", out, "--resume", NULL);
            st = run(NULL, argv, NULL, msg, sizeof msg, 60);
            char *got = table_body(out);
            CHECK_MSG(st == 0 && strstr(msg, ".ckpt") && strstr(msg, "is damaged") &&
                          strstr(msg, "head 0 starts over") && got && !strcmp(got, want),
                      "%s %d: status %d, table %s, '%s'", names[kind], rep, st,
                      got && !strcmp(got, want) ? "equal" : "differs", msg);
            free(got);
        }
    /* and the checkpoint as written resumes, silently */
    write_bytes(ck, orig, len);
    make_argv(argv, p, sn_args, "--out", out, "--resume", NULL);
    st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *got = table_body(out);
    CHECK_MSG(st == 0 && !msg[0] && got && !strcmp(got, want), "intact: status %d '%s'", st, msg);
    free(got);
    free(want);
    free(orig);
    remove_tree(dir);
}

/* vla-jacobian's accumulator holds a histogram whose occupied ranges are indexes: forged, they
 * once sent a reset's memset out of bounds (exit 139). Now the accumulator is checked. */
TEST(reliability_damaged_accumulator)
{
    const char *p;
    static const char *const args[] = {"--model", "vla3", "--precision", "f32", "--d", "6",
                                       "--steps", "40000", "--checkpoints", "20", NULL};
    char dir[256], out[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-jacobian", &p))
        return;
    snprintf(out, sizeof out, "%s/j.dat", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    make_argv(argv, p, args, "--out", out, NULL, NULL);
    int st = stop_after(argv, 3, msg, sizeof msg);
    size_t len;
    char *b = read_all(ck, &len);
    ckpt_layout L = {0, 0, 0, 0, 0, 0, 0, -1};
    const size_t acc_size = sizeof(vref_jac) + sizeof(double) + sizeof(long); /* its jac_acc */
    int ok = st == 3 && b && layout(b, len, VREF_JAC_NCOL, acc_size, &L);
    CHECK_MSG(ok, "interrupted: %d '%s'", st, msg);
    for (int which = 0; ok && which < 4; which++) {
        /* lo below 0, hi past the bins; the same for the bins below 1 (llo, lhi) */
        int bad = which % 2 ? -1000000 : which ? VREF_JAC_NLBIN + 5 : VREF_JAC_NBIN + 5;
        const size_t fields[] = {offsetof(vref_jac_hist, hi), offsetof(vref_jac_hist, lo),
                                 offsetof(vref_jac_hist, lhi), offsetof(vref_jac_hist, llo)};
        size_t off = L.acc + offsetof(vref_jac, h) + fields[which];
        char *c = malloc(len);
        memcpy(c, b, len);
        memcpy(c + off, &bad, sizeof bad);
        reseal(c, &L);
        write_bytes(ck, c, len);
        free(c);
        make_argv(argv, p, args, "--out", out, "--resume", NULL);
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        CHECK_MSG(st == 0 && strstr(msg, "its accumulator is not valid"),
                  "forged %s: status %d '%s'", (const char *[]){"hi", "lo", "lhi", "llo"}[which],
                  st, msg);
    }
    free(b);
    remove_tree(dir);
}

/* vla_model_load and the kernels' load check t against the counters: a state whose t is not its
 * step count, or whose counters cannot be a run's, is VLA_EFORMAT, on every backend. An exact
 * state of another precision (its import once set the model's precision) is refused too. */
TEST(reliability_state_load_checks)
{
    vla_config cfg;
    vla_config_default(&cfg, VLA_VLA3, 4);
    double q[4] = {0.1, -0.2, 0.3, 0.4}, k[4] = {0.5, 0.1, -0.3, 0.2}, v[4] = {1, 2, 3, 4};
    vla_input in = {.q = q, .k = k, .v = v, .beta = NAN, .decay = NAN};
    const vla_backend *bs[] = {vla_backend_cpu(), vla_backend_lanes(), vla_backend_emu()};
    for (size_t bi = 0; bi < sizeof bs / sizeof bs[0]; bi++) {
        vla_engine_spec sp = {.backend = bs[bi], .cfg = cfg, .runs = 1, .in = &in, .T = 1,
                              .shared = 1, .cycle = 1, .round_inputs = VLA_FMT_F64};
        vla_engine *e;
        vla_error err;
        if (vla_engine_new(&e, &sp, &err)) {
            CHECK_MSG(bi != 0, "cpu engine: %s", err.msg);
            continue; /* a backend this machine lacks */
        }
        CHECK(vla_engine_advance(e, 45) == 0);
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        CHECK(vla_engine_save(e, 0, f) == 0);
        fclose(f);
        /* t and the counters follow the header: magic, length, description */
        uint32_t dlen;
        memcpy(&dlen, buf + 8, 4);
        size_t t_off = 12 + dlen, c_off = t_off + 8;
        for (int forge = 0; forge < 4; forge++) {
            char *c = malloc(n);
            memcpy(c, buf, n);
            long val;
            size_t at = forge == 0 ? t_off : c_off + (forge == 1 ? 0 : forge == 2 ? 3 : 7) * 8;
            memcpy(&val, c + at, 8);
            val = forge == 0 ? val + 1 : forge == 1 ? 46 : forge == 2 ? 10 : -1; /* t, guard,
                                                                                     nudge, reads */
            memcpy(c + at, &val, 8);
            f = fmemopen(c, n, "rb");
            CHECK_MSG(vla_engine_load(e, 0, f) == VLA_EFORMAT, "%s: forged field %d loaded",
                      vla_backend_name(bs[bi]), forge);
            fclose(f);
            free(c);
        }
        f = fmemopen(buf, n, "rb");
        CHECK_MSG(vla_engine_load(e, 0, f) == 0 && vla_engine_t(e, 0) == 45, "%s: intact state",
                  vla_backend_name(bs[bi]));
        fclose(f);
        free(buf);
        vla_engine_free(e);
    }
    vla_model *a, *b;
    if (vref_model_new(&a, &cfg, VREF_EXACT, 256) || vref_model_new(&b, &cfg, VREF_EXACT, 512)) {
        CHECK_MSG(0, "exact models");
        return;
    }
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK(vla_model_step(a, &in) == 0 && vla_model_save(a, f) == 0);
    fclose(f);
    f = fmemopen(buf, n, "rb");
    CHECK_MSG(vla_model_load(b, f) == VLA_EFORMAT, "a 256-bit state loaded into a 512-bit model");
    fclose(f);
    free(buf);
    vla_model_free(a);
    vla_model_free(b);
}

/* ---- a --resume of another run ---- */

/* A --resume whose options differ from the checkpoint's is refused with exit 2, naming the
 * option, and keeps the checkpoints byte for byte: a constant that differs in its 17th digit
 * (keys once held 6), a trace whose contents changed at the same path (once keyed by its path),
 * another horizon, another form (once "another program or version": a line only one key has),
 * two options at once (both named), another program, another build (a table names its commit:
 * once resumed into), a checkpoint of an older format. The same run resumes: the constant
 * written another way, the trace moved elsewhere. */
TEST(reliability_resume_other_run)
{
    const char *p, *pd;
    char dir[256], tr[400], tr2[400], out[400], ck[450], ref[400], msg[2000];
    char *argv[40], spec[450], spec2[450];
    if (!begin(dir, sizeof dir, 2, "vla-statenorm", &p, "vla-drift", &pd))
        return;
    /* a small trace: 1 head, 3000 steps, d = 4 */
    snprintf(tr, sizeof tr, "%s/trace", dir);
    snprintf(tr2, sizeof tr2, "%s/moved", dir);
    mkdir(tr, 0755);
    long shape[3] = {1, 3000, 4};
    double *x = malloc(sizeof(double) * 3000 * 4);
    uint64_t s = 12345;
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < 3000 * 4; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            x[i] = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * (f == 2 ? 2 : 0.6);
        }
        char path[500];
        snprintf(path, sizeof path, "%s/%s.npy", tr, f == 0 ? "q" : f == 1 ? "k" : "v");
        CHECK(vla_npy_write(path, x, 3, shape) == 0);
    }
    snprintf(spec, sizeof spec, "trace:%s", tr);
    snprintf(spec2, sizeof spec2, "trace:%s", tr2);
    snprintf(out, sizeof out, "%s/a.dat", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    snprintf(ref, sizeof ref, "%s/ref.dat", dir);
    const char *const base[] = {"--d", "4", "--precision", "f16", "--set", "lambda0=0.3",
                                "--checkpoints", "30", "--out", out, NULL};
    make_argv(argv, p, base, "--stream", spec, NULL, NULL);
    int st = stop_after(argv, 3, msg, sizeof msg);
    size_t len;
    char *orig = read_all(ck, &len);
    CHECK_MSG(st == 3 && orig, "interrupted: status %d '%s'", st, msg);
    if (!orig) {
        free(x);
        remove_tree(dir);
        return;
    }
    /* the trace's first value changed by one unit in the last place, at the same path */
    char qpath[500];
    snprintf(qpath, sizeof qpath, "%s/q.npy", tr);
    size_t qlen;
    char *qb = read_all(qpath, &qlen);
    static const struct {
        const char *what, *a1, *a2, *option; /* option: what the message must name */
        int trace_changed, old_format, drift, build;
        const char *a3, *a4, *also; /* a second option, and what else the message must say */
    } cases[] = {
        {"lambda0 in its 17th digit", "--set", "lambda0=0.30000000000000004", "(--set lambda0)",
         0, 0, 0, 0, NULL, NULL, "lambda0=0.3, this command has lambda0=0.30000000000000004"},
        {"the trace's contents", NULL, NULL, "(--stream", 1, 0, 0, 0, NULL, NULL, NULL},
        {"the horizon", "--steps", "2999", "(--steps)", 0, 0, 0, 0, NULL, NULL, NULL},
        {"the seed", "--seed", "7", "(--seed)", 0, 0, 0, 0, NULL, NULL, NULL},
        {"the model", "--model", "rls", "(--model)", 0, 0, 0, 0, NULL, NULL, NULL},
        {"the form", "--form", "chunk:4", "(--form)", 0, 0, 0, 0, NULL, NULL,
         "form=seq, this command has form=chunk:4"},
        {"the form and the seed", "--form", "scan", "(--form, --seed)", 0, 0, 0, 0, "--seed",
         "7", "with form=seq and seed=1, this command has form=scan and seed=7"},
        {"another program", NULL, NULL, "written by vla-statenorm, this is vla-drift", 0, 0, 1, 0,
         NULL, NULL, NULL},
        {"another build", NULL, NULL, "only in the build that wrote it", 0, 0, 0, 1, NULL, NULL,
         "(git 0000000"},
        {"an older format", NULL, NULL, "another version of vlastab", 0, 1, 0, 0, NULL, NULL,
         NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_bytes(ck, orig, len);
        if (cases[i].old_format) {
            char *b = read_all(ck, NULL);
            b[7] = '3';
            write_bytes(ck, b, len);
            free(b);
        }
        if (cases[i].build) { /* the key's build line names another commit, the header resealed */
            char *b = read_all(ck, NULL), *g = b ? memmem(b, len, "(git ", 5) : NULL;
            char *e = g ? memchr(g, ')', 60) : NULL;
            for (char *x = g ? g + 5 : NULL; x && x < e; x++) /* the same length: 0000000... */
                *x = '0';
            uint32_t klen;
            if (e) {
                memcpy(&klen, b + 8, 4);
                uint64_t h = vla_fnv1a(VLA_FNV_INIT, b, 8 + 4 + klen + 4);
                memcpy(b + 8 + 4 + klen + 4, &h, 8);
                write_bytes(ck, b, len);
            }
            free(b);
        }
        if (cases[i].trace_changed) {
            char *b = malloc(qlen);
            memcpy(b, qb, qlen);
            b[qlen - 8 * 3000 * 4] ^= 1; /* the first number's lowest bit */
            write_bytes(qpath, b, qlen);
            free(b);
        }
        char before[450];
        snprintf(before, sizeof before, "%s/before", dir);
        char *now = read_all(ck, NULL);
        write_bytes(before, now, len);
        free(now);
        make_argv(argv, cases[i].drift ? pd : p, base, "--stream", spec, "--resume", NULL);
        int n = 0;
        while (argv[n])
            n++;
        if (cases[i].a1) {
            argv[n++] = (char *)cases[i].a1;
            argv[n++] = (char *)cases[i].a2;
            argv[n] = NULL;
        }
        if (cases[i].a3) {
            argv[n++] = (char *)cases[i].a3;
            argv[n++] = (char *)cases[i].a4;
            argv[n] = NULL;
        }
        if (cases[i].drift) { /* the reference drift's default would differ first */
            argv[n++] = "--ref";
            argv[n++] = "none";
            argv[n] = NULL;
        }
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        CHECK_MSG(st == 2 && strstr(msg, cases[i].option) && strstr(msg, "refusing") &&
                      (!cases[i].also || strstr(msg, cases[i].also)) && same_file(ck, before) &&
                      !exists(out),
                  "%s: status %d, checkpoint %s, '%s'", cases[i].what, st,
                  same_file(ck, before) ? "kept" : "changed", msg);
        if (cases[i].trace_changed)
            write_bytes(qpath, qb, qlen);
    }
    /* the same run, told another way: resumes, and its table is the uninterrupted one's */
    write_bytes(ck, orig, len);
    CHECK(rename(tr, tr2) == 0);
    const char *const refargs[] = {"--d", "4", "--precision", "f16", "--set", "lambda0=0.3",
                                   "--checkpoints", "30", "--out", ref, NULL};
    make_argv(argv, p, refargs, "--stream", spec2, NULL, NULL);
    st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want, "uninterrupted: %d '%s'", st, msg);
    make_argv(argv, p, base, "--stream", spec2, "--resume", "--set");
    int n = 0;
    while (argv[n])
        n++;
    argv[n++] = "lambda0=0.29999999999999999"; /* 0.3, written another way */
    argv[n] = NULL;
    st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *got = table_body(out);
    /* the header names the trace by its path and the command: the rows must agree */
    const char *rw = want ? strstr(want, "# columns:") : NULL, *rg = got ? strstr(got, "# columns:") : NULL;
    CHECK_MSG(st == 0 && !msg[0] && rw && rg && !strcmp(rw, rg), "the same run: status %d '%s'",
              st, msg);
    free(got);
    free(want);
    free(qb);
    free(orig);
    free(x);
    remove_tree(dir);
}

/* ---- where checkpoints go ---- */

/* Checkpoints live beside a regular file only: --out /dev/null (a character device) writes none
 * into /dev, and --resume with it is a usage error. Beside a regular file, OUT.ckpt is replaced
 * by lib/file.h's rules: a symlink there is replaced by the checkpoint (its target left as it
 * is), never a directory there, and a symlink planted at its temporary's name (OUT.ckpt.tmp.PID:
 * a name of its own, which two programs writing one OUT never share) is removed, not followed
 * into the file it names. */
TEST(reliability_checkpoint_targets)
{
    const char *p;
    char dir[256], out[400], ck[450], tmp[480], victim[400], elsewhere[400], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    const int had = exists("/dev/null.ckpt");
    make_argv(argv, p, long_args, "--out", "/dev/null", NULL, NULL);
    int st = run_signalled(argv, env, NULL, 0.5, SIGINT, NULL, msg, sizeof msg);
    CHECK_MSG(st == 3 && strstr(msg, "nothing saved") && (had || !exists("/dev/null.ckpt")),
              "--out /dev/null: status %d '%s'", st, msg);
    make_argv(argv, p, long_args, "--out", "/dev/null", "--resume", NULL);
    st = run(NULL, argv, NULL, msg, sizeof msg, 30);
    CHECK_MSG(st == 2 && strstr(msg, "regular file"), "--resume --out /dev/null: %d '%s'", st, msg);

    /* a symlink at the temporary's name, to a file that must stay as it is; the checkpoint
     * itself a symlink to a file elsewhere */
    snprintf(out, sizeof out, "%s/a.dat", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
    write_bytes(victim, "keep me\n", 8);
    write_bytes(elsewhere, "old\n", 4);
    CHECK(symlink(elsewhere, ck) == 0);
    make_argv(argv, p, long_args, "--out", out, NULL, NULL);
    /* no checkpoint before the signal, by which time the link is at the temporary's name */
    char *late[] = {"VLA_CHECKPOINT_SECONDS=1000", NULL};
    child ch;
    st = -2;
    if (spawn(&ch, NULL, argv, late) == 0) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", ck, (long)ch.pid);
        CHECK(symlink(victim, tmp) == 0);
        nanosleep(&(struct timespec){0, 500000000}, NULL);
        kill(ch.pid, SIGINT);
        st = finish(&ch, 60);
        char *text = read_all(ch.err, NULL);
        snprintf(msg, sizeof msg, "%s", text ? text : "");
        free(text);
        unlink(ch.err);
    }
    struct stat sl;
    size_t el;
    char *e = read_all(ck, &el);
    CHECK_MSG(st == 3 && lstat(ck, &sl) == 0 && S_ISREG(sl.st_mode) && e && el > 100 &&
                  !memcmp(e, "vlackpt", 7),
              "checkpoint at a symlink's name: status %d '%s'", st, msg);
    free(e);
    e = read_all(elsewhere, NULL);
    CHECK_MSG(e && !strcmp(e, "old\n"), "the checkpoint was written through the link");
    free(e);
    e = read_all(victim, NULL);
    CHECK_MSG(e && !strcmp(e, "keep me\n"), "the file a planted symlink names was written");
    free(e);
    /* a directory where the checkpoint goes: said, with its kind */
    snprintf(out, sizeof out, "%s/b.dat", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    CHECK(mkdir(ck, 0755) == 0);
    make_argv(argv, p, long_args, "--out", out, NULL, NULL);
    st = run_signalled(argv, env, NULL, 0.5, SIGINT, NULL, msg, sizeof msg);
    CHECK_MSG(st == 3 && strstr(msg, "cannot write checkpoint") && strstr(msg, "a directory"),
              "a directory at OUT.ckpt: status %d '%s'", st, msg);
    remove_tree(dir);
}

/* A symbolic link at any name a program writes (its table, OUT.ckpt, the report's four files) is
 * replaced by a regular file, the link itself: the file it names keeps its bytes. Followed, `ln
 * -s VICTIM x.dat.ckpt; vla-grad ... --out x.dat` would exit 0 with VICTIM holding the checkpoint,
 * and vla-check would write its table, checkpoint and report through such links. Each name links
 * to a victim of its own (vla-check refuses a report file that is the table itself). */
TEST(reliability_links_at_outputs_replaced_not_followed)
{
    const char *pg, *pc;
    char dir[256], msg[2000], path[400], victim[400], *argv[40];
    if (!begin(dir, sizeof dir, 2, "vla-grad", &pg, "vla-check", &pc))
        return;
    static const char *const names[] = {"x.dat", "x.dat.ckpt", "r.md", "r-errors.dat", "r.gp",
                                        "r.png"};
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    for (int prog = 0; prog < 2; prog++) {
        const int n = prog ? 6 : 2;
        for (int i = 0; i < n; i++) {
            char text[32];
            snprintf(victim, sizeof victim, "%s/victim%d", dir, i);
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            snprintf(text, sizeof text, "victim %d\n", i);
            unlink(path);
            write_bytes(victim, text, strlen(text));
            CHECK(symlink(victim, path) == 0);
        }
        snprintf(path, sizeof path, "%s/x.dat", dir);
        char rep[400];
        snprintf(rep, sizeof rep, "%s/r", dir);
        static const char *const grad[] = {"--model", "gdn", "--d", "8", "--steps", "300",
                                           "--runs", "2", "--precisions", "f32", NULL};
        static const char *const check[] = {"gauss", "--models", "la", "--precisions", "f32",
                                            "--d", "4", "--steps", "200", "--runs", "1", NULL};
        make_argv(argv, prog ? pc : pg, prog ? check : grad, "--out", path,
                  prog ? "--report" : NULL, prog ? rep : NULL);
        int st = run(NULL, argv, env, msg, sizeof msg, 120);
        CHECK_MSG(st == 0, "%s: status %d '%s'", prog ? "vla-check" : "vla-grad", st, msg);
        for (int i = 0; i < n; i++) {
            char want[32];
            snprintf(victim, sizeof victim, "%s/victim%d", dir, i);
            snprintf(want, sizeof want, "victim %d\n", i);
            char *v = read_all(victim, NULL);
            CHECK_MSG(v && !strcmp(v, want), "%s: %s was written through its link (%.12s)",
                      prog ? "vla-check" : "vla-grad", names[i], v ? v : "(gone)");
            free(v);
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            struct stat sl;
            /* the checkpoint goes at exit 0; the figure is drawn where gnuplot is installed */
            int ok = i == 1 ? lstat(path, &sl) != 0
                            : i == 5 || (lstat(path, &sl) == 0 && S_ISREG(sl.st_mode));
            CHECK_MSG(ok, "%s: %s is not a regular file after exit 0",
                      prog ? "vla-check" : "vla-grad", names[i]);
        }
    }
    remove_tree(dir);
}

/* ---- signals ---- */

/* An exact reference at many bits takes seconds a step (d = 32 at 65536 bits: about 2 s here
 * under the sanitizers, 0.4 s on a fast Xeon); it used to finish the step before it looked at the
 * signal. Now the step is given up within a second, the run keeps the checkpoint written before it,
 * and a resume gives the uninterrupted run's table. The signal goes after step 1's checkpoint
 * appears, a third of step 1's time later (the start and step 1 timed in this run), when step 2,
 * as long as step 1, is under way: the moment the checkpoint appears (polled every 2 ms) was too
 * early, a stop between steps 1 in 3 tries under the sanitizers. A signal that still lands between
 * steps is tried again half a step in; a machine on which the run ends before the signal (status
 * 0) gets a larger d, whose step costs (d/32)^2 times more, rather than a failure or a pass that
 * measured nothing. */
TEST(reliability_exact_reference_stops_within_its_step)
{
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    paths(dir, out, ref, ck);
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    static const char *const ds[] = {"32", "64", "128"};
    const char *args[] = {"--model", "vla3", "--d", NULL, "--steps", "2",
                          "--ref", "exact", "--ref-bits", "65536", NULL};
    double latency = -1, at = -0.33;
    int st = -1;
    for (size_t i = 0; i < sizeof ds / sizeof *ds;) {
        args[3] = ds[i];
        unlink(out);
        unlink(ck);
        make_argv(argv, p, args, "--out", out, NULL, NULL);
        st = run_signalled(argv, env, ck, at, SIGINT, &latency, msg, sizeof msg);
        if (st == 0) /* ended before the signal: a longer step */
            i++;
        else if (st == 3 && !strstr(msg, "within a step") && at > -0.5)
            at = -0.5; /* stopped between steps: once more, later in step 2 */
        else
            break;
    }
    CHECK_MSG(st == 3 && strstr(msg, "within a step") && latency < 1.0,
              "d = %s: status %d after %.2f s: '%s'", args[3], st, latency, msg);
    make_argv(argv, p, args, "--out", out, "--resume", NULL);
    st = run(NULL, argv, NULL, msg, sizeof msg, 300);
    char *got = table_body(out);
    make_argv(argv, p, args, "--out", ref, NULL, NULL);
    int st2 = run(NULL, argv, NULL, msg, sizeof msg, 300);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && st2 == 0 && got && want && !strcmp(got, want),
              "resumed: status %d, %d; table %s", st, st2, got && want && !strcmp(got, want) ? "equal" : "differs");
    free(got);
    free(want);
    remove_tree(dir);
}

/* vla-grad's exact backward is given up at a signal, as the forward's exact reference gives up its
 * step: at 65536 bits (gdn, d = 32, 1000 steps) its arrays alone (72,000 numbers, 600 MB) took
 * seconds to make, and each block of its steps as long, and it exited 1 to 6 s after SIGTERM (the
 * rest of them); now within one MPFR operation or 256 numbers made, and the freeing. The signal
 * goes 1 s in, while the arrays are made here; the run is long enough (minutes here) that no
 * machine finishes it before. */
TEST_SLOW(reliability_grad_exact_backward_stops_at_once)
{
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-grad", &p))
        return;
    paths(dir, out, ref, ck);
    static const char *const args[] = {"--model", "gdn", "--d", "32", "--steps", "1000", "--runs",
                                       "1", "--precisions", "f32", "--ref-bits", "65536", NULL};
    make_argv(argv, p, args, "--out", out, NULL, NULL);
    double latency = -1;
    int st = run_signalled(argv, NULL, NULL, 1.0, SIGTERM, &latency, msg, sizeof msg);
    CHECK_MSG(st == 3 && strstr(msg, "interrupted (signal 15)") && latency < 1.0,
              "status %d after %.2f s: '%s'", st, latency, msg);
    remove_tree(dir);
}

/* what a stopped run left in dir but OUT.ckpt (the units it finished), into first ("":
 * nothing), and OUT.ckpt removed for the next run */
static void left_but_checkpoint(const char *dir, const char *out, char *first, size_t len)
{
    char ck[450];
    snprintf(ck, sizeof ck, "%s.ckpt", out);
    const char *base = strrchr(ck, '/') ? strrchr(ck, '/') + 1 : ck;
    first[0] = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && strcmp(e->d_name, base))
            snprintf(first, len, "%s", e->d_name);
    if (d)
        closedir(d);
    unlink(ck);
}

/* vla-recall and vla-heatmap stop on SIGINT and SIGTERM with exit 3 and leave no OUT.tmp.PID;
 * the temporary of a run killed with SIGKILL (a dead process's) is removed by the next run that
 * writes OUT, while a live process's is left alone. */
TEST(reliability_signal_temporaries)
{
    const char *pr, *ph;
    char dir[256], out[400], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 2, "vla-recall", &pr, "vla-heatmap", &ph))
        return;
    snprintf(out, sizeof out, "%s/t.dat", dir);
    static const char *const rec[] = {"--models", "vla3", "--n", "64", "--gap", "1e8", "--d", "8",
                                      NULL};
    static const char *const heat[] = {"--model", "vla3", "--d", "8", "--at", "1,1e8", NULL};
    for (int prog = 0; prog < 2; prog++)
        for (int sig = 0; sig < 2; sig++) {
            make_argv(argv, prog ? ph : pr, prog ? heat : rec, "--out", out, NULL, NULL);
            double latency;
            int st = run_signalled(argv, NULL, NULL, 0.7, sig ? SIGTERM : SIGINT, &latency, msg,
                                   sizeof msg);
            char first[300] = "";
            left_but_checkpoint(dir, out, first, sizeof first);
            CHECK_MSG(st == 3 && !first[0] && latency < 2, "%s, %s: status %d after %.2f s, '%s' "
                      "left, '%s'", prog ? "heatmap" : "recall", sig ? "SIGTERM" : "SIGINT", st,
                      latency, first, msg);
        }
    /* stale temporaries: a dead process's is removed, a live one's (ours) kept */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char stale[450], live[450];
    snprintf(stale, sizeof stale, "%s.tmp.%ld", out, (long)dead);
    snprintf(live, sizeof live, "%s.tmp.%ld", out, (long)getpid());
    write_bytes(stale, "# half a table\n", 15);
    write_bytes(live, "# another run's\n", 16);
    static const char *const quick[] = {"--models", "vla3", "--n", "4", "--d", "4", NULL};
    make_argv(argv, pr, quick, "--out", out, NULL, NULL);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 30);
    CHECK_MSG(st == 0 && !exists(stale) && exists(live), "stale temporaries: status %d, the "
              "dead one's %s, the live one's %s ('%s')", st, exists(stale) ? "left" : "removed",
              exists(live) ? "kept" : "removed", msg);
    remove_tree(dir);
}

/* ---- what is read whole ---- */

/* A trace's file that is a FIFO blocked the reader forever (and so the program, deaf to
 * SIGTERM); a directory named q.npy said "bad magic"; a character device would never end. Each is
 * refused at once, naming what it is. */
TEST(reliability_trace_special_files)
{
    const char *p;
    char dir[256], tr[400], q[450], spec[450], msg[2000];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    snprintf(tr, sizeof tr, "%s/trace", dir);
    snprintf(q, sizeof q, "%s/q.npy", tr);
    snprintf(spec, sizeof spec, "trace:%s", tr);
    static const char *const kinds[] = {"a FIFO", "a directory", "a character device"};
    for (int kind = 0; kind < 3; kind++) {
        remove_tree(tr);
        mkdir(tr, 0755);
        int made = kind == 0 ? mkfifo(q, 0644) : kind == 1 ? mkdir(q, 0755) : symlink("/dev/zero", q);
        CHECK_MSG(made == 0, "making %s: %s", kinds[kind], strerror(errno));
        char *argv[] = {(char *)p, "--d", "4", "--stream", spec, NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 10);
        CHECK_MSG(st == 2 && strstr(msg, kinds[kind]), "q.npy %s: status %d '%s'", kinds[kind],
                  st, msg);
    }
    remove_tree(dir);
}

/* ---- messages ---- */

/* Each bad input says its cause: --out naming a directory, a missing folder, a name too long
 * (all "input/output error" once); --out '' is a usage error; a subnormal scale or constant is a
 * number (once "not a number"), one that underflows to 0 says so, a scale whose inputs overflow
 * is refused (it failed at step 1, exit 1); lambda0 = 0 names lambda0;
 * vla-jacobian on finite but huge inputs warns like the other programs (it failed with "NaN or
 * Inf in an input"). */
TEST(reliability_messages)
{
    const char *p, *pj;
    char dir[256], longname[600], missing[450], msg[2000];
    if (!begin(dir, sizeof dir, 2, "vla-statenorm", &p, "vla-jacobian", &pj))
        return;
    int n = snprintf(longname, sizeof longname, "%s/", dir);
    memset(longname + n, 'x', 300);
    longname[n + 300] = 0;
    snprintf(missing, sizeof missing, "%s/missing/x.dat", dir);
    const struct {
        const char *prog, *a1, *a2, *a3, *a4;
        int status;
        const char *says;
    } cases[] = {
        {p, "--out", dir, NULL, NULL, 1, "it is a directory"},
        {p, "--out", missing, NULL, NULL, 1, "No such file or directory"},
        {p, "--out", longname, NULL, NULL, 1, "File name too long"},
        {p, "--out", "", NULL, NULL, 2, "--out: an empty name"},
        {p, "--stream", "gauss:1e-320", NULL, NULL, 0, ""},
        {p, "--stream", "gauss:1e-400", NULL, NULL, 2, "'1e-400' underflows binary64 to 0"},
        {p, "--stream", "gauss:1e308", NULL, NULL, 2, "the scale must be in (0, 1e300]"},
        {p, "--set", "lambda0=1e-320", "--stream", "gauss:1e-3", 0, "warning: the state"},
        {p, "--set", "lambda0=0", NULL, NULL, 2, "lambda0 = 0: it must be finite and > 0"},
        {p, "--set", "beta=2", NULL, NULL, 2, "beta = 2: it must be finite and in (0, 2)"},
        {p, "--set", "lambda0=1e999", NULL, NULL, 2, "'1e999' overflows binary64"},
        {pj, "--stream", "gauss:1e300", NULL, NULL, 0, "warning: the state of the model is not finite"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {(char *)cases[i].prog, "--d", "4", "--steps", "30", (char *)cases[i].a1,
                        (char *)cases[i].a2, (char *)cases[i].a3, (char *)cases[i].a4, NULL};
        int st = run(dir, argv, NULL, msg, sizeof msg, 30);
        CHECK_MSG(st == cases[i].status && (cases[i].says[0] ? strstr(msg, cases[i].says) != NULL
                                                             : !msg[0]),
                  "%s %s: status %d '%s'", cases[i].a1, cases[i].a2, st, msg);
    }
    remove_tree(dir);
}

/* vla-recall's read-outs overflow in f16 at d = 8, n = 64 (la with the identity features) and
 * with lambda0 = 1e-300 (rls: A = I / lambda0 overflows): the table held inf and nan with exit 0
 * and no word. Now it warns as the driver does and marks the header; a finite run says nothing. */
TEST(reliability_recall_nonfinite)
{
    const char *p;
    char dir[256], out[400], msg[2000];
    if (!begin(dir, sizeof dir, 1, "vla-recall", &p))
        return;
    snprintf(out, sizeof out, "%s/r.dat", dir);
    static const struct {
        const char *models, *prec, *set, *n;
        int bad;
    } cases[] = {
        {"la", "f16", "eps_o=1e-6", "64", 1},
        {"rls", "f64", "lambda0=1e-300", "8", 1},
        {"rls,vla3", "f32", "lambda0=0.5", "8", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {(char *)p, "--models", (char *)cases[i].models, "--precision",
                        (char *)cases[i].prec, "--d", "8", "--n", (char *)cases[i].n, "--set",
                        (char *)cases[i].set, "--out", out, NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        char *t = read_all(out, NULL);
        const char *mark = t ? strstr(t, "\n# nonfinite: the read-out of the model is not finite") : NULL;
        const char *cols = t ? strstr(t, "\n# columns:") : NULL;
        int nan_rows = cols && (strstr(cols, "nan") || strstr(cols, "inf"));
        if (cases[i].bad)
            CHECK_MSG(st == 0 && strstr(msg, "vla-recall: warning: the read-out of the model is "
                                             "not finite") && mark && mark < cols && nan_rows,
                      "%s %s %s: status %d, mark %s, '%s'", cases[i].models, cases[i].prec,
                      cases[i].set, st, mark ? "present" : "absent", msg);
        else
            CHECK_MSG(st == 0 && !msg[0] && t && !mark && !nan_rows, "finite %s: status %d '%s'",
                      cases[i].models, st, msg);
        free(t);
    }
    remove_tree(dir);
}

/* A header's constants and a checkpoint's key read back as the run's doubles: the description
 * writes the shortest text that round-trips (what %g writes when %g is exact). */
TEST(reliability_config_describe_round_trips)
{
    vla_config c;
    vla_config_default(&c, VLA_VLA3, 8);
    char d0[1024];
    vla_config_describe(&c, d0, sizeof d0);
    CHECK_MSG(strstr(d0, " lambda0=0.1 eps_g=1e-06 stab_eps=0.0001 per_eps=0.001 "),
              "defaults as %%g writes them: '%s'", d0);
    const char *names[] = {"lambda0", "eps_g", "stab_eps", "per_eps", "eps_o", "clip", "clamp",
                           "clamp_eps", "renorm", "beta"};
    double *vals[] = {&c.lambda0, &c.eps_g, &c.stab_eps, &c.per_eps, &c.eps_o, &c.clip, &c.clamp,
                      &c.clamp_eps, &c.renorm, &c.beta};
    for (int i = 0; i < 10; i++) {
        vla_config x = c;
        double *v = (double *)((char *)&x + ((char *)vals[i] - (char *)&c));
        *v = nextafter(i == 8 ? 1.0 : *vals[i], 0.0); /* one ulp off: 17 digits */
        char desc[1024], key[40];
        vla_config_describe(&x, desc, sizeof desc);
        snprintf(key, sizeof key, " %s=", names[i]);
        const char *at = strstr(desc, key);
        double back = at ? strtod(at + strlen(key), NULL) : NAN;
        CHECK_MSG(back == *v, "%s: %.17g written as '%.30s'", names[i], *v, at ? at + 1 : "");
        vla_config y = c;
        char val[40];
        snprintf(val, sizeof val, "%.40s", at ? at + strlen(key) : "");
        val[strcspn(val, " ")] = 0;
        CHECK(vla_config_set(&y, names[i], val) == 0 &&
              *(double *)((char *)&y + ((char *)vals[i] - (char *)&c)) == *v);
    }
    char buf[40];
    vla_num_text(buf, sizeof buf, 4.9406564584124654e-324, 6);
    CHECK_MSG(strtod(buf, NULL) == 4.9406564584124654e-324, "the smallest subnormal: '%s'", buf);
    vla_num_text(buf, sizeof buf, -NAN, 15);
    CHECK_MSG(!strcmp(buf, "nan"), "nan written '%s'", buf);
}

/* ---- checkpoints of many runs, sizes, builds; signals; messages; traces ---- */

/* the file offset of run h's record in a checkpoint (its length field), 0 when it is not there */
static size_t record_at(const char *b, size_t len, int h)
{
    uint32_t klen;
    if (len < 24)
        return 0;
    memcpy(&klen, b + 8, 4);
    size_t at = 8 + 4 + (size_t)klen + 4 + 8;
    for (int i = 0; i < h && at + 8 <= len; i++) {
        uint64_t rlen;
        memcpy(&rlen, b + at, 8);
        at += 8 + (size_t)rlen + (rlen ? 8 : 0);
    }
    return at + 8 <= len ? at : 0;
}

/* the model's t in run h's record of a checkpoint (-1 when it is not there) */
static long step_of(const char *b, size_t len, int h)
{
    size_t at = b ? record_at(b, len, h) : 0;
    uint32_t dlen;
    long t = -1;
    if (!at || at + 8 + 8 + 12 > len)
        return -1;
    memcpy(&dlen, b + at + 8 + 8 + 8, 4); /* its length, ci, then VLAMOD1's magic */
    size_t off = at + 8 + 8 + 12 + dlen;
    if (off + 8 <= len)
        memcpy(&t, b + off, 8);
    return t;
}

/* Runs argv (env added) and sends SIGINT once its checkpoint ck (written whole, then renamed)
 * holds run 0 past step `after`: a stop after an event whatever the machine's speed. The exit
 * status; -3 when the run ended before, -1 when it ran past two minutes. */
static int run_stopped_past(char *const argv[], char *const env[], const char *ck, long after,
                            char *msg, size_t len)
{
    child ch;
    if (spawn(&ch, NULL, argv, env))
        return -2;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = -1, w;
    for (long t = -1; seconds_since(&t0) < 120; nanosleep(&(struct timespec){0, 2000000}, NULL)) {
        if (waitpid(ch.pid, &w, WNOHANG) == ch.pid) {
            st = -3;
            break;
        }
        size_t n;
        char *b = read_all(ck, &n);
        t = b ? step_of(b, n, 0) : -1;
        free(b);
        if (t > after) {
            kill(ch.pid, SIGINT);
            st = finish(&ch, 120);
            break;
        }
    }
    if (st == -1) {
        kill(ch.pid, SIGKILL);
        waitpid(ch.pid, &w, 0);
    }
    char *text = read_all(ch.err, NULL);
    snprintf(msg, len, "%s", text ? text : "");
    free(text);
    unlink(ch.err);
    return st;
}

/* The reason a --resume is refused arrives whole, written once where it is found (ckpt.h's
 * ck_fail into a vla_error) and printed by the program: a line of 900 bytes in the checkpoint's key
 * that this command's key lacks is named with all of its value. The callers' buffers of before
 * cut each side of a mismatch at 599 bytes. */
TEST(reliability_other_run_reason_whole)
{
    enum { X = 900 };
    const char *p;
    char dir[256], ref[400], out[400], ck[450], msg[4000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, sn_args, "--out", out, NULL, NULL);
    int st = stop_after(argv, 3, msg, sizeof msg);
    size_t len;
    char *orig = read_all(ck, &len);
    uint32_t klen = 0;
    if (orig && len >= 12)
        memcpy(&klen, orig + 8, 4);
    const size_t head = 8 + 4 + (size_t)klen + 4; /* the header before its checksum */
    CHECK_MSG(st == 3 && orig && head + 8 <= len, "interrupted: status %d '%s'", st, msg);
    if (st == 3 && orig && head + 8 <= len) {
        /* the key with "zzz=xxx...x\n" after its last line, the header's checksum resealed */
        char line[X + 8], want[X + 100];
        snprintf(line, sizeof line, "zzz=%.*s\n", X, "");
        memset(line + 4, 'x', X);
        const size_t ll = strlen(line), n = len + ll;
        const uint32_t kl2 = klen + (uint32_t)ll;
        char *b = malloc(n);
        memcpy(b, orig, 8);
        memcpy(b + 8, &kl2, 4);
        memcpy(b + 12, orig + 12, klen);
        memcpy(b + 12 + klen, line, ll);
        memcpy(b + 12 + klen + ll, orig + 12 + klen, len - 12 - klen);
        uint64_t h = vla_fnv1a(VLA_FNV_INIT, b, head + ll);
        memcpy(b + head + ll, &h, 8);
        write_bytes(ck, b, n);
        free(b);
        make_argv(argv, p, sn_args, "--out", out, "--resume", NULL);
        st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        snprintf(want, sizeof want, "it was written with zzz=%.*s, this command has zzz=(none) "
                 "(--set zzz); refusing", X, line + 4);
        CHECK_MSG(st == 2 && strstr(msg, want), "status %d, a message of %zu bytes: '%s'", st,
                  strlen(msg), msg);
    }
    free(orig);
    remove_tree(dir);
}

/* A checkpoint's sizes are checked before the bytes they cover are read: a file grown to 20 GB
 * (sparse: no disk) was hashed whole, and the SIGINT of its --resume answered after 52 s. Grown,
 * or grown with its record's length forged to cover the growth, it is damaged at once: its run
 * starts over and the table is the uninterrupted run's. */
TEST(reliability_checkpoint_sizes)
{
    const char *p;
    char dir[256], ref[400], out[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, sn_args, "--out", ref, NULL, NULL);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    char *want = table_body(ref);
    make_argv(argv, p, sn_args, "--out", out, NULL, NULL);
    st = stop_after(argv, 3, msg, sizeof msg);
    size_t len;
    char *orig = read_all(ck, &len);
    size_t rec = orig ? record_at(orig, len, 0) : 0;
    CHECK_MSG(st == 3 && want && rec, "interrupted: status %d '%s'", st, msg);
    const off_t huge = (off_t)20 << 30;
    for (int kind = 0; rec && kind < 2; kind++) {
        char *b = malloc(len);
        memcpy(b, orig, len);
        if (kind == 1) { /* the record's length: to the end of the grown file */
            uint64_t rlen = (uint64_t)huge - rec - 16;
            memcpy(b + rec, &rlen, 8);
        }
        write_bytes(ck, b, len);
        free(b);
        CHECK(truncate(ck, huge) == 0);
        make_argv(argv, p, sn_args, "--out", out, "--resume", NULL);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        st = run(NULL, argv, NULL, msg, sizeof msg, 300);
        double secs = seconds_since(&t0);
        char *got = table_body(out);
        CHECK_MSG(st == 0 && strstr(msg, "is damaged") && strstr(msg, "larger") &&
                      strstr(msg, "head 0 starts over") && secs < 10 && got && !strcmp(got, want),
                  "grown to 20 GB%s: status %d after %.1f s, table %s, '%s'",
                  kind ? ", its record's length forged" : "", st, secs,
                  got && !strcmp(got, want) ? "equal" : "differs", msg);
        free(got);
        unlink(out);
    }
    free(orig);
    free(want);
    remove_tree(dir);
}

/* 100,000 runs wrote 100,001 checkpoint files, and a SIGTERM took 78 s: the runs' checkpoints are
 * one file now, written and synced once (20,000 runs here: about 60 s before, under 1 s now).
 * A run of several heads resumes to the uninterrupted table; a record damaged in one head restarts
 * that head alone, and says so. */
TEST(reliability_checkpoint_many_runs)
{
    const char *p;
    char dir[256], ref[400], out[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    paths(dir, out, ref, ck);
    static const char *const many[] = {"--d", "4", "--steps", "1e9", "--ref", "none", "--runs",
                                       "20000", NULL};
    make_argv(argv, p, many, "--out", out, NULL, NULL);
    /* the signal's checkpoint alone; the signal once every head has taken a step (the progress
     * line's count is the heads times the fewest steps a head has taken) */
    char *late[] = {"VLA_CHECKPOINT_SECONDS=1000", "VLA_PROGRESS_SECONDS=0", NULL};
    double latency = -1;
    int st = run_signalled(argv, late, "stderr:progress: ", 0, SIGTERM, &latency, msg, sizeof msg);
    int files = 0, others = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            files++, others += strcmp(e->d_name, "a.dat.ckpt") != 0;
    if (d)
        closedir(d);
    CHECK_MSG(st == 3 && latency < 10 && files == 1 && !others && strstr(msg, "checkpoints written"),
              "20000 runs, SIGTERM: status %d after %.1f s, %d files (%d not a.dat.ckpt), '%s'", st,
              latency, files, others, msg);
    if (getenv("VLA_TEST_VERBOSE"))
        printf("    20000 runs answered SIGTERM in %.2f s\n", latency);
    /* a signal while the checkpoint is read (20000 records) must not save the runs not read yet
     * from step 0 over theirs: the last head's t never goes back */
    size_t len;
    char *b = read_all(ck, &len);
    long t0 = step_of(b, len, 19999), t1 = -1;
    free(b);
    make_argv(argv, p, many, "--out", out, "--resume", NULL);
    st = run_signalled(argv, late, NULL, 0.5, SIGTERM, &latency, msg, sizeof msg);
    b = read_all(ck, &len);
    t1 = step_of(b, len, 19999);
    free(b);
    CHECK_MSG(st == 3 && t0 > 0 && t1 >= t0 && latency < 10,
              "20000 runs resumed, SIGTERM: status %d after %.1f s, head 19999 at t = %ld, then %ld, "
              "'%s'", st, latency, t0, t1, msg);
    unlink(ck);

    /* four heads: interrupted, resumed; head 2's record damaged, then resumed */
    make_argv(argv, p, sn_args, "--runs", "4", "--out", ref);
    st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    char *want = table_body(ref);
    make_argv(argv, p, sn_args, "--runs", "4", "--out", out);
    st = stop_after(argv, 3, msg, sizeof msg);
    char *orig = read_all(ck, &len);
    size_t r2 = orig ? record_at(orig, len, 2) : 0, r3 = orig ? record_at(orig, len, 3) : 0;
    CHECK_MSG(st == 3 && want && r2 && r3, "4 heads interrupted: status %d '%s'", st, msg);
    for (int damage = 0; r2 && r3 && damage < 2; damage++) {
        if (damage)
            orig[(r2 + r3) / 2] ^= 0x10; /* inside head 2's record */
        write_bytes(ck, orig, len);
        make_argv(argv, p, sn_args, "--runs", "4", "--out", out);
        int n = 0;
        while (argv[n])
            n++;
        argv[n++] = "--resume";
        argv[n] = NULL;
        st = run(NULL, argv, NULL, msg, sizeof msg, 120);
        char *got = table_body(out);
        CHECK_MSG(st == 0 && got && !strcmp(got, want) &&
                      (damage ? strstr(msg, "the checkpoint of head 2 is damaged") &&
                                    strstr(msg, "head 2 starts over") && !strstr(msg, "head 1")
                              : !msg[0]),
                  "4 heads resumed%s: status %d, table %s, '%s'", damage ? ", head 2 damaged" : "",
                  st, got && !strcmp(got, want) ? "equal" : "differs", msg);
        free(got);
        unlink(out);
    }
    free(orig);
    free(want);
    remove_tree(dir);
}

/* With many runs on the cpu backend the memory is estimated before any is made, as the lanes do
 * theirs: 100000 runs at d = 256 (about 210 GB) made runs one by one for 40 s before failing
 * under a 8 GB limit (without one, the OOM killer). Now exit 1 at once, with the estimate. */
TEST(reliability_cpu_memory_estimate)
{
    const char *p = program("vla-statenorm");
    if (!p) {
        vla_test_skip("bin/vla-statenorm not built");
        return;
    }
    char cmd[800], msg[2000];
    snprintf(cmd, sizeof cmd, VLA_ULIMIT_V(8000000) "exec '%s' --runs 100000 --d 256 --steps 10 "
             "--ref none --out /dev/null", p);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    double secs = seconds_since(&t0);
    CHECK_MSG(st == 1 && secs < 10 &&
                  strstr(msg, "out of memory: 100000 runs of vla3 in f64 at d = 256 take about") &&
                  strstr(msg, "MB"),
              "status %d after %.1f s: '%s'", st, secs, msg);
}

/* vla-scaling and vla-forms --what ut died of SIGTERM (no exit 3, a temporary left by the one
 * that had opened its table); vla-forms left a half-written temporary on a usage error found
 * after it opened its table. Now every one exits 3 on a signal, saying so, and leaves nothing
 * but its checkpoint (the units it finished); a usage error leaves nothing either. */
TEST(reliability_signals_and_usage_leave_nothing)
{
    const char *ps, *pf;
    char dir[256], out[400], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 2, "vla-scaling", &ps, "vla-forms", &pf))
        return;
    snprintf(out, sizeof out, "%s/t.dat", dir);
    static const char *const scal[] = {"--models", "vla3", "--ds", "32", "--Ts", "1e7", NULL};
    static const char *const ut[] = {"--what", "ut", "--d", "64", "--samples", "100000", NULL};
    static const char *const sweep[] = {"--forms", "seq,chunk:16", "--set", "period=16",
                                        "--steps", "1e9", NULL};
    const char *const *args[] = {scal, ut, sweep};
    const char *progs[] = {ps, pf, pf}, *names[] = {"vla-scaling", "vla-forms --what ut",
                                                     "vla-forms --what sweep"};
    for (int k = 0; k < 3; k++)
        for (int sig = 0; sig < 2; sig++) {
            make_argv(argv, progs[k], args[k], "--out", out, NULL, NULL);
            double latency;
            int st = run_signalled(argv, NULL, NULL, 1.0, sig ? SIGTERM : SIGINT, &latency, msg,
                                   sizeof msg);
            char first[300] = "", want[80];
            left_but_checkpoint(dir, out, first, sizeof first);
            snprintf(want, sizeof want, "interrupted (signal %d)", sig ? SIGTERM : SIGINT);
            CHECK_MSG(st == 3 && strstr(msg, want) && !first[0] && latency < 5,
                      "%s, %s: status %d after %.2f s, '%s' left, '%s'", names[k],
                      sig ? "SIGTERM" : "SIGINT", st, latency, first, msg);
        }
    /* usage errors found after the table was opened */
    static const char *const u1[] = {"--steps", "100", "--forms", "chunk:256", NULL};
    static const char *const u2[] = {"--forms", "chunk:64", "--set", "period=20", NULL};
    const char *const *us[] = {u1, u2};
    for (int k = 0; k < 2; k++) {
        make_argv(argv, pf, us[k], "--out", out, NULL, NULL);
        int st = run(NULL, argv, NULL, msg, sizeof msg, 60);
        char first[300] = "";
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));)
            if (e->d_name[0] != '.')
                snprintf(first, sizeof first, "%s", e->d_name);
        if (d)
            closedir(d);
        CHECK_MSG(st == 2 && !first[0], "vla-forms usage error %d: status %d, '%s' left, '%s'", k,
                  st, first, msg);
    }
    remove_tree(dir);
}

/* Messages that named the wrong thing: a trace of d = 257 said "expected dim 32" (the size the
 * program fell back to); --Cs 1 said "not a list of at most 16 items"; vla-scaling --models la
 * --form chunk:256 refused "with --model vla3", a model it was not asked to run. */
TEST(reliability_messages_name_the_thing)
{
    const char *p, *pf, *ps;
    char dir[256], tr[400], path[500], spec[450], msg[2000];
    if (!begin(dir, sizeof dir, 3, "vla-statenorm", &p, "vla-forms", &pf, "vla-scaling", &ps))
        return;
    snprintf(tr, sizeof tr, "%s/trace", dir);
    snprintf(spec, sizeof spec, "trace:%s", tr);
    mkdir(tr, 0755);
    static const struct {
        long dq, dv;
        const char *says;
    } traces[] = {
        {257, 4, "q.npy: shape (1, 20, 257): its last size, d = 257, is outside 1..256"},
        {0, 4, "q.npy: shape (1, 20, 0): its last size, d = 0, is outside 1..256"},
        {4, 300, "v.npy: shape (1, 20, 300): its last size, dv = 300, is outside 1..256"},
    };
    double *x = calloc(20 * 300, sizeof *x);
    for (size_t i = 0; x && i < sizeof traces / sizeof traces[0]; i++) {
        for (int f = 0; f < 3; f++) {
            long shape[3] = {1, 20, f == 2 ? traces[i].dv : traces[i].dq};
            snprintf(path, sizeof path, "%s/%s.npy", tr, f == 0 ? "q" : f == 1 ? "k" : "v");
            CHECK(vla_npy_write(path, x, 3, shape) == 0);
        }
        char *argv[] = {(char *)p, "--stream", spec, NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 30);
        CHECK_MSG(st == 2 && strstr(msg, traces[i].says) && !strstr(msg, "expected dim"),
                  "trace %ld, %ld: status %d '%s'", traces[i].dq, traces[i].dv, st, msg);
    }
    free(x);
    static const struct {
        const char *opt, *val, *says;
    } lists[] = {
        {"--Cs", "1", "--Cs: '1' is not a chunk size, an integer in 2..256"},
        {"--Cs", "2,x,4", "--Cs: 'x' is not a chunk size"},
        {"--Cs", "2,,4", "--Cs: '' is empty"},
        {"--Cs", "2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2", "--Cs: more than 16 items"},
        {"--forms", "seq,chunk:512", "--forms: 'chunk:512' is not chunk:C with C a power of two"},
        {"--forms", "seqq", "--forms: 'seqq' is not a form (seq, chunk:C or scan)"},
        {"--precisions", "f32,f8", "--precisions: 'f8' is not a precision (f64, f32"},
        {"--seeds", "0", "--seeds: '0' is not an integer in 1..1000"},
        {"--seeds", "1001", "--seeds: '1001' is not an integer in 1..1000"},
        {"--samples", "0", "--samples: '0' is not an integer in 1..100000"},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        char *argv[] = {(char *)pf, "--what", "ut", (char *)lists[i].opt, (char *)lists[i].val,
                        NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 30);
        CHECK_MSG(st == 2 && strstr(msg, lists[i].says), "%s %s: status %d '%s'", lists[i].opt,
                  lists[i].val, st, msg);
    }
    /* --models: each model's configuration, named; la takes chunk:256, vla3 (nudge) does not */
    char *a1[] = {(char *)ps, "--models", "la,vla3", "--form", "chunk:256", NULL};
    int st = run(NULL, a1, NULL, msg, sizeof msg, 30);
    CHECK_MSG(st == 2 && strstr(msg, "model vla3") && !strstr(msg, "--model vla3"),
              "--models la,vla3 --form chunk:256: status %d '%s'", st, msg);
    char *a2[] = {(char *)ps, "--models", "la", "--form", "chunk:256", "--ds", "4", "--Ts", "256",
                  "--repeat", "1", "--softmax-budget", "0.001", NULL};
    st = run(dir, a2, NULL, msg, sizeof msg, 120);
    CHECK_MSG(st == 0 && !strstr(msg, "vla3"), "--models la --form chunk:256: status %d '%s'", st,
              msg);
    remove_tree(dir);
}

/* A trace is read as far as the runs take it: --steps 10 of a trace of 2e8 steps (three sparse
 * 6.4 GB files) ran under a 4 GB limit once only the steps needed were read (the whole trace was
 * read, and failed, before); values beyond the steps or heads a run takes are not read, so a NaN
 * there is not an error, while one within is. */
TEST(reliability_trace_read_as_needed)
{
    const char *p;
    char dir[256], tr[400], path[500], spec[450], msg[2000];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    snprintf(tr, sizeof tr, "%s/trace", dir);
    snprintf(spec, sizeof spec, "trace:%s", tr);
    mkdir(tr, 0755);
    /* 2 heads x 40 steps x d = 4; NaN in head 0 at step 30 and in head 1 at step 5 */
    double x[2 * 40 * 4];
    for (int i = 0; i < 2 * 40 * 4; i++)
        x[i] = 0.01 * (i % 17) - 0.08;
    long shape[3] = {2, 40, 4};
    for (int f = 0; f < 3; f++) {
        if (f == 0) {
            x[(0 * 40 + 30) * 4 + 1] = NAN;
            x[(1 * 40 + 5) * 4 + 0] = NAN;
        }
        snprintf(path, sizeof path, "%s/%s.npy", tr, f == 0 ? "q" : f == 1 ? "k" : "v");
        CHECK(vla_npy_write(path, x, 3, shape) == 0);
        x[(0 * 40 + 30) * 4 + 1] = x[(1 * 40 + 5) * 4 + 0] = 0.5;
    }
    static const struct {
        const char *runs, *steps;
        int status;
        const char *says;
    } cases[] = {
        {"1", "20", 0, ""},
        {"1", "40", 2, "q.npy: NaN at [0, 30, 1]"},
        {"2", "20", 2, "q.npy: NaN at [1, 5, 0]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {(char *)p, "--stream", spec, "--runs", (char *)cases[i].runs, "--steps",
                        (char *)cases[i].steps, NULL};
        int st = run(NULL, argv, NULL, msg, sizeof msg, 30);
        CHECK_MSG(st == cases[i].status && (*cases[i].says ? strstr(msg, cases[i].says) != NULL
                                                           : !msg[0]),
                  "--runs %s --steps %s: status %d '%s'", cases[i].runs, cases[i].steps, st, msg);
    }
    /* 2e8 steps of zeros: the header says so, the data is a hole in each file */
    for (int f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s/%s.npy", tr, f == 0 ? "q" : f == 1 ? "k" : "v");
        char h[128];
        int n = snprintf(h + 10, sizeof h - 10, "{'descr': '<f8', 'fortran_order': False, "
                         "'shape': (1, 200000000, 4), }");
        int total = (10 + n + 1 + 63) / 64 * 64;
        memset(h + 10 + n, ' ', (size_t)(total - 10 - n - 1));
        h[total - 1] = '\n';
        memcpy(h, "\x93NUMPY\x01\x00", 8);
        h[8] = (char)((total - 10) & 255);
        h[9] = (char)((total - 10) >> 8);
        write_bytes(path, h, (size_t)total);
        CHECK(truncate(path, total + (off_t)8 * 4 * 200000000L) == 0);
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, VLA_ULIMIT_V(4000000) "exec '%s' --stream '%s' --steps 10 --ref f64",
             p, spec);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    double secs = seconds_since(&t0);
    CHECK_MSG(st == 0 && !msg[0] && secs < 10, "--steps 10 of 2e8: status %d after %.1f s, '%s'",
              st, secs, msg);
    remove_tree(dir);
}

/* A resumed run's header says what the uninterrupted run's says, whatever step the run
 * was stopped at: the step at which the read-out's denominator overflowed (vla3 in binary16 on
 * gauss:30: n . phi(q) passes 65504; the model's counters carry it), and the checkpoint at which
 * the state turned non-finite (vla3 in binary16 at d = 4 without the nudge, t = 8913 in head 0)
 * and an error reached 1 (the driver's marks and rows, in the checkpoint). */
TEST_SLOW(reliability_resume_same_summary)
{
    const char *p;
    char dir[256], ref[400], out[400], ck[450], msg[2000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-statenorm", &p))
        return;
    paths(dir, out, ref, ck);
    static const char *const zero[] = {"--model", "vla3", "--precision", "f16", "--stream",
                                       "gauss:30", "--d", "8", "--steps", "40000", "--runs", "2",
                                       "--checkpoints", "20", "--ref", "f64", NULL};
    static const char *const inf[] = {"--model", "vla3", "--precision", "f16", "--stream", "lmlike",
                                      "--d", "4", "--set", "nudge=off", "--steps", "40000",
                                      "--runs", "2", "--checkpoints", "20", "--ref", "f64", NULL};
    const char *const *cases[] = {zero, inf};
    const char *says[] = {"denominator n . phi(q) overflowed at ", "non-finite in 1 of 2 runs"};
    const long event[] = {100, 8913}; /* after the event: a stop the summary must carry over */
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0.05", NULL};
    /* the stops, as fractions of the uninterrupted run's time on this machine (fixed times fell
     * all before t = 8913 on one machine and all after the end on another); then, where none fell
     * after the event (a loaded machine's speed varies: 17 fractions once missed it), one when
     * the checkpoint shows a step past it */
    static const double frac[] = {0.05, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9};
    const int nfrac = sizeof frac / sizeof frac[0];
    for (int c = 0; c < 2; c++) {
        make_argv(argv, p, cases[c], "--out", ref, NULL, NULL);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int st = run(NULL, argv, NULL, msg, sizeof msg, 300);
        double secs = seconds_since(&t0);
        char *want = table_body(ref);
        CHECK_MSG(st == 0 && want && strstr(want, says[c]), "case %d uninterrupted: status %d, %s",
                  c, st, msg);
        int late = 0; /* stops past the event and before the end */
        for (int k = 0; want && (k < nfrac || (!late && k == nfrac)); k++) {
            make_argv(argv, p, cases[c], "--out", out, NULL, NULL);
            st = k < nfrac ? run_signalled(argv, env, ck, frac[k] * secs, SIGINT, NULL, msg,
                                           sizeof msg)
                           : run_stopped_past(argv, env, ck, event[c], msg, sizeof msg);
            size_t len;
            char *b = read_all(ck, &len);
            long t = step_of(b, len, 0);
            free(b);
            late += st == 3 && t > event[c] && t < 40000;
            make_argv(argv, p, cases[c], "--out", out, "--resume", NULL);
            int st2 = run(NULL, argv, NULL, msg, sizeof msg, 300);
            char *got = table_body(out);
            const char *a = got ? strstr(got, "# summary:") : NULL, *w = strstr(want, "# summary:");
            CHECK_MSG((st == 3 || st == 0) && st2 == 0 && got && !strcmp(got, want),
                      "case %d stopped at t = %ld (status %d), resumed (status %d): %.*s against "
                      "%.*s", c, t, st, st2, a ? (int)strcspn(a, "\n") : 0, a ? a : "",
                      (int)strcspn(w, "\n"), w);
            free(got);
            unlink(out);
            unlink(ck);
        }
        CHECK_MSG(late > 0, "case %d: no stop fell after t = %ld (the test checks nothing then)",
                  c, event[c]);
        free(want);
    }
    remove_tree(dir);
}

/* the rows of a vla-forms --what ut table (cmd's standard output), 13 numbers each (kind as its
 * block's index); returns how many, at most max */
static int ut_rows(const char *cmd, double (*row)[13], int max)
{
    char *out = NULL;
    int n = 0;
    if (vla_test_sh(&out, "%s", cmd) || !out) {
        free(out);
        return -1;
    }
    for (char *l = strtok(out, "\n"); l && n < max; l = strtok(NULL, "\n")) {
        if (l[0] == '#')
            continue;
        char kind[16];
        double *r = row[n];
        if (sscanf(l, "%lf %15s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &r[0], kind, &r[2],
                   &r[3], &r[4], &r[5], &r[6], &r[7], &r[8], &r[9], &r[10], &r[11], &r[12]) == 13) {
            r[1] = !strcmp(kind, "raw") ? 0 : !strcmp(kind, "unit") ? 1 : 2;
            n++;
        }
    }
    free(out);
    return n;
}

/* vla-forms --what ut --seeds N: its medians are the median over the seeds of each seed's median
 * and its _lo and _hi their least and greatest, its maxima and fractions those of all the draws;
 * checked against N runs of one seed each (--seed s --seeds 1, whose _lo = _hi = the median) */
TEST(forms_ut_seeds_median_and_range)
{
    char prog[600], cmd[900];
    snprintf(prog, sizeof prog, "%s/vla-forms", vla_test_bin_dir());
    if (access(prog, X_OK)) {
        vla_test_skip("bin/vla-forms not built (run make first)");
        return;
    }
    enum { N = 3, R = 6 }; /* 3 seeds; 2 chunk sizes x 3 kinds */
    double one[N][R][13], all[R][13];
    for (int s = 0; s < N; s++) {
        snprintf(cmd, sizeof cmd, "%s --what ut --d 8 --samples 9 --Cs 8,32 --seed %d --out - "
                 "2>/dev/null", prog, 5 + s);
        CHECK_MSG(ut_rows(cmd, one[s], R) == R, "%s: not %d rows", cmd, R);
        for (int r = 0; r < R; r++)
            CHECK_MSG(one[s][r][9] == one[s][r][2] && one[s][r][10] == one[s][r][2] &&
                          one[s][r][11] == one[s][r][4] && one[s][r][12] == one[s][r][4],
                      "seed %d row %d: one seed's range is not its median", 5 + s, r);
    }
    snprintf(cmd, sizeof cmd, "%s --what ut --d 8 --samples 9 --Cs 8,32 --seed 5 --seeds %d --out - "
             "2>/dev/null", prog, N);
    CHECK_MSG(ut_rows(cmd, all, R) == R, "%s: not %d rows", cmd, R);
    for (int r = 0; r < R; r++) {
        double v[4][N], mx = 0, cd = 0, o16 = 0, o32 = 0;
        for (int s = 0; s < N; s++) {
            v[0][s] = one[s][r][2];
            v[1][s] = one[s][r][4];
            v[2][s] = one[s][r][8];
            mx = fmax(mx, one[s][r][3]);
            cd = fmax(cd, one[s][r][5]);
            o16 += one[s][r][6] / N;
            o32 += one[s][r][7] / N;
        }
        for (int q = 0; q < 3; q++) /* sort the three: median v[q][1], least [0], greatest [2] */
            for (int i = 0; i < N; i++)
                for (int j = i + 1; j < N; j++)
                    if (v[q][j] < v[q][i]) {
                        double t = v[q][i];
                        v[q][i] = v[q][j];
                        v[q][j] = t;
                    }
        const double *a = all[r];
        CHECK_MSG(a[2] == v[0][1] && a[9] == v[0][0] && a[10] == v[0][2], "row %d (C %g kind %g): "
                  "max_med %g [%g, %g], the seeds' %g [%g, %g]", r, a[0], a[1], a[2], a[9], a[10],
                  v[0][1], v[0][0], v[0][2]);
        CHECK_MSG(a[4] == v[1][1] && a[11] == v[1][0] && a[12] == v[1][2], "row %d: cond_med", r);
        CHECK_MSG(a[8] == v[2][1], "row %d: max_f32_med", r);
        CHECK_MSG(a[3] == mx && a[5] == cd, "row %d: the maxima over all draws", r);
        CHECK_MSG(fabs(a[6] - o16) < 1e-12 && fabs(a[7] - o32) < 1e-12, "row %d: fractions %g %g, "
                  "the seeds' mean %g %g", r, a[6], a[7], o16, o32);
    }
}

/* vla-forms with ARGS on 1 and on 3 threads: the same table bytes (but its threads and date lines),
 * and a row that starts with ROW there */
static void forms_same_on_threads(const char *args, const char *row)
{
    char prog[600];
    snprintf(prog, sizeof prog, "%s/vla-forms", vla_test_bin_dir());
    if (access(prog, X_OK)) {
        vla_test_skip("bin/vla-forms not built (run make first)");
        return;
    }
    char *out[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        CHECK_MSG(!vla_test_sh(&out[i], "OMP_NUM_THREADS=%d %s %s --out - 2>/dev/null | grep -v "
                               "'^# \\(threads\\|date\\):'", 1 + 2 * i, prog, args) && out[i],
                  "vla-forms %s on %d threads failed", args, 1 + 2 * i);
    if (out[0] && out[1]) {
        CHECK_MSG(strstr(out[0], row) != NULL, "no row '%s' in:\n%s", row + 1, out[0]);
        CHECK_MSG(!strcmp(out[0], out[1]), "1 thread:\n%s\n3 threads:\n%s", out[0], out[1]);
    }
    free(out[0]);
    free(out[1]);
}

/* vla-forms --what ut spreads a seed's draws over the threads, each draw into its own slot */
TEST(forms_ut_threads_same_table)
{
    forms_same_on_threads("--what ut --d 8 --samples 13 --seeds 2 --Cs 4,32,64", "\n32 raw ");
}

/* vla-forms --what sweep advances its engines (each on one thread) in parallel, a window at a
 * time */
TEST(forms_sweep_threads_same_table)
{
    forms_same_on_threads("--what sweep --model vla3 --set period=256 --stream lmlike --d 8 "
                          "--steps 768 --runs 2 --forms seq,chunk:4,chunk:64 --precisions "
                          "f32,f16,bf16-f32", "\n768 64 bf16-f32 ");
}

/* ---- every program resumes (vla_units, drive.c) ---- */

/* The programs that do not run on vla_drive checkpoint their finished units (a row, a head, a
 * snapshot, a timing). Each, short, is interrupted by SIGINT once its first unit is in OUT.ckpt
 * and resumed: the table is the uninterrupted run's, byte for byte (vla-scaling's but for its
 * times: its rows' model, precision, track, d and T); a --resume with another of its options is
 * refused (2), naming the option, and the checkpoint kept; the checkpoint goes with the exit 0. */
typedef struct {
    const char *prog;
    const char *args[24];
    const char *other, *val; /* a --resume with this is another command's */
} units_case;

static const units_case units_cases[] = {
    {"vla-grad", {"--model", "gdn", "--precisions", "f32,bf16", "--d", "8", "--steps", "1000",
                  "--runs", "4", NULL}, "--window", "8"},
    {"vla-recall", {"--models", "vla3,la", "--features", "own", "--n", "4,8", "--gap", "100000",
                    "--d", "8", "--runs", "2", NULL}, "--gap", "99999"},
    {"vla-heatmap", {"--model", "vla3", "--d", "8", "--at", "10,200000,400000,600000", NULL},
     "--at", "10,200000,400000"},
    {"vla-forms", {"--what", "ut", "--Cs", "128,256", "--samples", "6", "--d", "16", NULL},
     "--samples", "61"},
    {"vla-forms", {"--what", "causal", "--model", "gdn", "--forms", "seq,chunk:16,chunk:32",
                   "--precisions", "f32", "--d", "16", "--steps", "100000", "--prefix", "100",
                   NULL}, "--prefix", "99"},
    {"vla-scaling", {"--models", "vla3", "--precisions", "f32", "--ds", "32", "--Ts", "200000",
                     "--repeat", "3", "--softmax-budget", "0.01", NULL}, "--repeat", "2"},
    /* its unit a checkpoint, the last one finished with every engine's state and the dd
     * reference's and its MPFR check's */
    {"vla-forms", {"--what", "sweep", "--model", "vla3", "--set", "period=16", "--d", "8",
                   "--steps", "4000", "--runs", "2", "--forms", "seq,chunk:16,scan",
                   "--precisions", "f32,bf16", NULL}, "--forms", "seq,chunk:16"},
    /* its unit a block (precision, form) of every R and construction */
    {"vla-forms", {"--what", "cp", "--model", "gdn", "--forms", "seq,chunk:16", "--precisions",
                   "f32", "--d", "16", "--steps", "65536", "--ranks", "1,4", "--ref", "f64", NULL},
     "--ranks", "1,2"},
};

/* a table's body (table_body); a timing table's first block (the models' rows: the softmax rows'
 * number and the crossovers follow the times), its rows cut to their first five fields */
static char *units_body(const char *path, int timing)
{
    char *b = table_body(path);
    if (!b || !timing)
        return b;
    char *o = malloc(strlen(b) + 1), *q = o;
    for (char *l = b, *e; *l; l = *e ? e + 1 : e) {
        e = l + strcspn(l, "\n");
        if (e == l && q > o)
            break;
        if (*l == '#' || e == l)
            continue;
        char *f = l;
        for (int k = 0; k < 5 && f < e; k++)
            f += strcspn(f, " \n"), f += strspn(f, " ");
        q += sprintf(q, "%.*s\n", (int)(f - l), l);
    }
    *q = 0;
    free(b);
    return o;
}

/* case i interrupted by sig once its checkpoint is there, then refused with another option, then
 * resumed to the uninterrupted table (want) */
static void units_resume(const units_case *k, const char *p, const char *dir, const char *want,
                         int sig)
{
    char out[400], ref[400], ck[450], msg[3000], *argv[40];
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL}; /* every unit written as it ends */
    const int timing = !strcmp(k->prog, "vla-scaling");
    paths(dir, out, ref, ck);
    make_argv(argv, p, k->args, "--out", out, NULL, NULL);
    /* SIGINT as the first unit's checkpoint is written; SIGKILL as soon as it is seen */
    int st = sig == SIGINT ? stop_after(argv, 1, msg, sizeof msg)
                           : run_signalled(argv, env, ck, 0, sig, NULL, msg, sizeof msg);
    CHECK_MSG(st == (sig == SIGINT ? 3 : 128 + SIGKILL) && exists(ck) &&
                  (sig != SIGINT || (strstr(msg, "finished, saved in") && strstr(msg, "--resume"))),
              "%s %s: status %d, %s, '%s'", k->prog, k->args[1], st,
              exists(ck) ? "a checkpoint" : "no checkpoint", msg);
    make_argv(argv, p, k->args, "--out", out, "--resume", k->other);
    int n = 0;
    while (argv[n])
        n++;
    argv[n++] = (char *)k->val;
    argv[n] = NULL;
    st = run(NULL, argv, NULL, msg, sizeof msg, 60);
    CHECK_MSG(st == 2 && strstr(msg, k->other) && strstr(msg, "refusing") && exists(ck),
              "%s %s, resumed with %s %s: status %d '%s'", k->prog, k->args[1], k->other, k->val,
              st, msg);
    make_argv(argv, p, k->args, "--out", out, "--resume", NULL);
    st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    char *got = units_body(out, timing);
    CHECK_MSG(st == 0 && strstr(msg, "finished before, kept") && got && want &&
                  !strcmp(got, want) && !exists(ck),
              "%s %s, resumed after signal %d: status %d, table %s, checkpoint %s, '%s'", k->prog,
              k->args[1], sig, st, got && want && !strcmp(got, want) ? "equal" : "differs",
              exists(ck) ? "left" : "removed", msg);
    free(got);
}

TEST(reliability_units_resume)
{
    for (size_t i = 0; i < sizeof units_cases / sizeof units_cases[0]; i++) {
        const units_case *k = &units_cases[i];
        const char *p;
        char dir[256], out[400], ref[400], ck[450], msg[3000], *argv[40];
        if (!begin(dir, sizeof dir, 1, k->prog, &p))
            return;
        paths(dir, out, ref, ck);
        make_argv(argv, p, k->args, "--out", ref, NULL, NULL);
        int st = run(NULL, argv, NULL, msg, sizeof msg, 120);
        char *want = units_body(ref, !strcmp(k->prog, "vla-scaling"));
        CHECK_MSG(st == 0 && want, "%s %s uninterrupted: status %d '%s'", k->prog, k->args[1], st,
                  msg);
        units_resume(k, p, dir, want, SIGINT);
        if (i == 1 || !strcmp(k->args[1], "sweep")) /* a kill -9 loses the unit in progress only */
            units_resume(k, p, dir, want, SIGKILL);
        free(want);
        remove_tree(dir);
    }
}

/* The resume takes a finished unit from the checkpoint, not computing it again: a value forged
 * in unit 0's record at byte `at` of its bytes (its checksum made to match) is in the resumed
 * table, in the row `row` says ("%g": the value) */
static void units_read_back(const units_case *k, size_t off, const char *row)
{
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[3000], *argv[40], want[100];
    if (!begin(dir, sizeof dir, 1, k->prog, &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, k->args, "--out", out, NULL, NULL);
    int st = stop_after(argv, 1, msg, sizeof msg);
    size_t len, at;
    char *b = read_all(ck, &len);
    uint64_t rlen = 0;
    if (b && (at = record_at(b, len, 0)))
        memcpy(&rlen, b + at, 8);
    CHECK_MSG(st == 3 && rlen >= off + 8, "%s %s interrupted: status %d, unit 0's record %llu "
              "bytes '%s'", k->prog, k->args[1], st, (unsigned long long)rlen, msg);
    if (rlen >= off + 8) {
        const double forged = 12345.5;
        memcpy(b + at + 8 + off, &forged, 8);
        uint64_t h = vla_fnv1a(vla_fnv1a(VLA_FNV_INIT, &rlen, 8), b + at + 8, rlen);
        memcpy(b + at + 8 + rlen, &h, 8);
        write_bytes(ck, b, len);
        make_argv(argv, p, k->args, "--out", out, "--resume", NULL);
        st = run(NULL, argv, NULL, msg, sizeof msg, 120);
        char *got = table_body(out);
        snprintf(want, sizeof want, row, forged);
        CHECK_MSG(st == 0 && got && strstr(got, want), "%s %s resumed: status %d, the forged "
                  "value %s '%s'", k->prog, k->args[1], st, got && strstr(got, "12345.5") ?
                  "there" : "not there", msg);
        free(got);
    }
    free(b);
    remove_tree(dir);
}

/* ---- vla-check resumes by groups of rows ---- */

/* vla-check's unit is a group: the rows that share a reference (a model and a way of tracking A
 * in one policy, with its forms). On a trace of 2 heads x CK_T steps at d = 8 written here, la and
 * vla3 in f64, f32 and bf16 are 6 groups, the f64 ones against the exact reference (double-double,
 * whose check the table's reference line counts). Stopped by SIGINT once a group is in the
 * checkpoint, while others run, it refuses a --resume with another --threshold, or another --set
 * of a constant no checked model's description in the key holds (the gated family's scale: the
 * settings' line of the key holds it), and resumes to the table, the Markdown report and the
 * figure's data and script of the uninterrupted run, byte for byte; the same after SIGKILL. A
 * number forged in a finished group's record (a row's s_max, its checksum resealed) is in the
 * resumed table: the group is read back, not run again. */
#define CK_T 10000
static const char *const ck_outs[] = {"a.dat", "r.md", "r-errors.dat", "r.gp"};

typedef struct {
    char trace[300], out[300], rep[300], ck[310];
    char *argv[20];
} ck_cmd;

/* the check of dir's trace, its table dir/a.dat and report dir/r, with up to three more words */
static void ck_make(ck_cmd *k, const char *p, const char *dir, const char *m1, const char *m2,
                    const char *m3)
{
    snprintf(k->trace, sizeof k->trace, "trace:%s/tr", dir);
    snprintf(k->out, sizeof k->out, "%s/a.dat", dir);
    snprintf(k->rep, sizeof k->rep, "%s/r", dir);
    snprintf(k->ck, sizeof k->ck, "%s.ckpt", k->out);
    const char *a[] = {p, k->trace, "--models", "la,vla3", "--precisions", "f64,f32,bf16", "--out",
                       k->out, "--report", k->rep, m1, m2, m3};
    int n = 0;
    for (size_t i = 0; i < sizeof a / sizeof *a && a[i]; i++)
        k->argv[n++] = (char *)a[i];
    k->argv[n] = NULL;
}

/* q, k, v: 2 heads x CK_T steps x 8, Gaussian of spread 0.5 from a fixed seed */
static int ck_trace(const char *dir)
{
    char path[400];
    snprintf(path, sizeof path, "%s/tr", dir);
    double *x = malloc(sizeof(double) * 2 * CK_T * 8);
    int e = !x || mkdir(path, 0755);
    for (int f = 0; !e && f < 3; f++) {
        for (long i = 0; i < 2 * CK_T * 8; i++)
            x[i] = 0.5 * vla_gauss(7, (vla_var)f, 0, (uint64_t)i, 0);
        snprintf(path, sizeof path, "%s/tr/%c.npy", dir, "qkv"[f]);
        const long shape[3] = {2, CK_T, 8};
        e = vla_npy_write(path, x, 3, shape);
    }
    free(x);
    return e;
}

/* whether dir's outputs outs[0 .. n - 1] are the uninterrupted run's (its copies ref-NAME) byte
 * for byte, the table (outs[0]) but for its command and date lines; else the first that differs
 * in *what */
static int outs_same(const char *dir, const char *const *outs, size_t n, const char **what)
{
    for (size_t i = 0; i < n; i++) {
        char a[400], b[400];
        snprintf(a, sizeof a, "%s/%s", dir, outs[i]);
        snprintf(b, sizeof b, "%s/ref-%s", dir, outs[i]);
        int same = 0;
        if (i == 0) {
            char *x = table_body(a), *y = table_body(b);
            same = x && y && !strcmp(x, y);
            free(x);
            free(y);
        } else {
            same = same_file(a, b);
        }
        if (!same) {
            *what = outs[i];
            return 0;
        }
    }
    *what = "";
    return 1;
}

/* stopped by sig once a group is in the checkpoint (each written as it ends), then resumed to
 * the uninterrupted run's outputs; the checkpoint as it was before the resume into *saved */
static void ck_stop_resume(const char *p, const char *dir, int sig, char **saved, size_t *len)
{
    ck_cmd k;
    char msg[3000], *env[] = {"VLA_CHECKPOINT_SECONDS=0", NULL};
    const char *what;
    ck_make(&k, p, dir, NULL, NULL, NULL);
    int st = sig == SIGINT ? stop_after(k.argv, 1, msg, sizeof msg)
                           : run_signalled(k.argv, env, k.ck, 0, sig, NULL, msg, sizeof msg);
    CHECK_MSG(st == (sig == SIGINT ? 3 : 128 + SIGKILL) && exists(k.ck) &&
                  (sig != SIGINT || (strstr(msg, " of 6 groups finished, saved in") &&
                                     !strstr(msg, "6 of 6") && strstr(msg, "--resume"))),
              "vla-check stopped by signal %d: status %d, %s, '%s'", sig, st,
              exists(k.ck) ? "a checkpoint" : "no checkpoint", msg);
    *saved = read_all(k.ck, len);
    if (sig == SIGINT) { /* another command's checkpoint: refused, naming the option, and kept */
        static const char *const other[][2] = {{"--threshold", "0.2"}, {"--set", "scale=0.5"}};
        for (int i = 0; i < 2; i++) {
            ck_make(&k, p, dir, "--resume", other[i][0], other[i][1]);
            st = run(NULL, k.argv, NULL, msg, sizeof msg, 120);
            CHECK_MSG(st == 2 && strstr(msg, other[i][0]) && strstr(msg, "refusing") &&
                          exists(k.ck),
                      "resumed with %s %s: status %d '%s'", other[i][0], other[i][1], st, msg);
        }
    }
    ck_make(&k, p, dir, "--resume", NULL, NULL);
    st = run(NULL, k.argv, NULL, msg, sizeof msg, 120);
    int same = outs_same(dir, ck_outs, sizeof ck_outs / sizeof *ck_outs, &what);
    CHECK_MSG(st == 0 && strstr(msg, "groups finished before, kept") && same && !exists(k.ck),
              "resumed after signal %d: status %d, %s%s, checkpoint %s, '%s'", sig, st,
              same ? "the same outputs" : "differs: ", what, exists(k.ck) ? "left" : "removed",
              msg);
}

TEST_SLOW(reliability_check_resume)
{
    const char *p;
    char dir[256], msg[3000], a[400], b[400];
    if (!begin(dir, sizeof dir, 1, "vla-check", &p))
        return;
    ck_cmd k;
    ck_make(&k, p, dir, NULL, NULL, NULL);
    int st = ck_trace(dir) ? -9 : run(NULL, k.argv, NULL, msg, sizeof msg, 120);
    for (size_t i = 0; i < sizeof ck_outs / sizeof *ck_outs; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, ck_outs[i]);
        snprintf(b, sizeof b, "%s/ref-%s", dir, ck_outs[i]);
        CHECK_MSG(rename(a, b) == 0, "%s: %s", a, strerror(errno));
    }
    CHECK_MSG(st == 0, "vla-check uninterrupted: status %d '%s'", st, msg);
    char *saved;
    size_t len;
    ck_stop_resume(p, dir, SIGINT, &saved, &len);
    free(saved);
    ck_stop_resume(p, dir, SIGKILL, &saved, &len);

    /* a row's s_max (the table's 14th column) forged where a finished group's record holds it */
    snprintf(b, sizeof b, "%s/ref-a.dat", dir);
    char *ref = table_body(b);
    const double forged = 12345.5;
    int found = 0;
    for (char *l = ref; l && *l && !found; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        double v = 0;
        if (*l != '#') {
            char *f = l;
            for (int i = 0; i < 13; i++)
                f += strcspn(f, " \n"), f += strspn(f, " ");
            v = strtod(f, NULL);
        }
        for (int h = 0; saved && v > 0 && h < 6 && !found; h++) {
            size_t at = record_at(saved, len, h);
            uint64_t rlen = 0;
            if (at)
                memcpy(&rlen, saved + at, 8);
            for (size_t o = at + 8; rlen && o + 8 <= at + 8 + rlen; o++)
                if (!memcmp(saved + o, &v, 8)) /* (the group's curve holds it too) */
                    memcpy(saved + o, &forged, 8), found = 1;
            if (found) {
                uint64_t hs = vla_fnv1a(vla_fnv1a(VLA_FNV_INIT, &rlen, 8), saved + at + 8, rlen);
                memcpy(saved + at + 8 + rlen, &hs, 8);
            }
        }
    }
    CHECK_MSG(found, "no row's s_max found in the checkpoint's records");
    if (found) {
        write_bytes(k.ck, saved, len);
        ck_make(&k, p, dir, "--resume", NULL, NULL);
        st = run(NULL, k.argv, NULL, msg, sizeof msg, 120);
        char *got = table_body(k.out);
        CHECK_MSG(st == 0 && got && strstr(got, " 12345.5 "), "resumed from a forged record: "
                  "status %d, the forged value %s '%s'", st,
                  got && strstr(got, "12345.5") ? "there" : "not there", msg);
        free(got);
    }
    free(ref);
    free(saved);
    remove_tree(dir);
}

/* The sweep copies its engines' state only where the file is due to be written: with
 * VLA_CHECKPOINT_SECONDS=3600, stopped by SIGINT two seconds in (checkpoints finished; 400,000
 * steps: 40,000 ran to the end in 2.4 s once the sweep's engines ran in parallel), it has
 * written nothing and says so, naming the checkpoints a resume runs again (it copied the state
 * at every checkpoint and wrote the last at the stop: its peak 84 -> 39 MB on
 * forms-chunk-vla3-lmlike at 2000 steps) */
TEST(reliability_sweep_state_when_due)
{
    static const char *const args[] = {"--what", "sweep", "--model", "vla3", "--set", "period=16",
                                       "--d", "8", "--steps", "400000", "--runs", "2", "--forms",
                                       "seq,chunk:16,scan", "--precisions", "f32,bf16", NULL};
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[3000], *argv[40];
    char *env[] = {"VLA_CHECKPOINT_SECONDS=3600", NULL};
    if (!begin(dir, sizeof dir, 1, "vla-forms", &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, args, "--out", out, NULL, NULL);
    int st = run_signalled(argv, env, NULL, 2, SIGINT, NULL, msg, sizeof msg);
    CHECK_MSG(st == 3 && !exists(ck) &&
                  strstr(msg, "nothing saved: no checkpoint had been written") &&
                  strstr(msg, "finished after the last one written"),
              "stopped before a write was due: status %d, %s, '%s'", st,
              exists(ck) ? "a checkpoint" : "no checkpoint", msg);
    remove_tree(dir);
}

/* ---- vla-check --outputs resumes by heads ---- */

/* The judge of a kernel's read-outs: 4 heads of la (d = 8, JT steps; the "kernel" is lib's own
 * binary64 run, o.npy), one thread (a head a unit). Stopped by SIGINT once a head is in the
 * checkpoint, it refuses a --resume whose o.npy was written again with one number moved (naming
 * --outputs o.npy) and keeps the checkpoint; resumed, its table, report and JSON are the
 * uninterrupted run's byte for byte; the same after SIGKILL. A head's rel_rms forged in its
 * record (the checksum resealed) is in the resumed JSON: the head was read back, not judged
 * again. */
#define JT 5000
#define JH 4
static const char *const judge_outs[] = {"a.dat", "r.md", "r.json"};

/* the judge of dir's trace and kernel, its table dir/a.dat and report dir/r, and one more word */
static void judge_argv(char **argv, char *buf, const char *p, const char *dir, const char *more)
{
    char *b = buf;
    const char *a[] = {p, b, "--model", "la", "--set", "normalize=off", "--d", "8", "--runs", "4",
                       "--outputs", b + 300, "--out", b + 600, "--report", b + 900, more};
    const int packed = strstr(dir, "packed") != NULL; /* la with its normalizer for the other */
    snprintf(b, 300, "trace:%s/tr", dir);
    snprintf(b + 300, 300, "%s/ko", dir);
    snprintf(b + 600, 300, "%s/a.dat", dir);
    snprintf(b + 900, 300, "%s/r", dir);
    int n = 0;
    for (size_t i = 0; i < sizeof a / sizeof *a && a[i]; i++)
        if (packed || (i != 4 && i != 5))
            argv[n++] = (char *)a[i];
    argv[n] = NULL;
}

/* the trace (q, k, v: JH heads x JT steps x 8, N(0, 1/4)) and the kernel's o.npy (lib's la in
 * binary64 on it); in a folder named packed, la without its normalizer on three sequences packed
 * (cu_seqlens.npy), the kernel's head 2 off by 1 at sequence 2's first token */
static const long judge_cu[] = {0, 1200, 3100, JT};
static int judge_files(const char *dir)
{
    const int packed = strstr(dir, "packed") != NULL;
    char path[400], stream[400];
    const size_t n = (size_t)JH * JT * 8;
    double *x = malloc(sizeof(double) * n);
    const long shape[3] = {JH, JT, 8};
    snprintf(path, sizeof path, "%s/tr", dir);
    int e = !x || mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/ko", dir);
    e = e || mkdir(path, 0755);
    for (int f = 0; !e && f < 3; f++) {
        for (size_t i = 0; i < n; i++)
            x[i] = 0.5 * vla_gauss(9, (vla_var)f, 0, (uint64_t)i, 0);
        snprintf(path, sizeof path, "%s/tr/%c.npy", dir, "qkv"[f]);
        e = vla_npy_write(path, x, 3, shape);
    }
    snprintf(path, sizeof path, "%s/tr/cu_seqlens.npy", dir);
    e = e || (packed && write_npy_ints(path, "<i8", judge_cu, 4));
    vla_engine_spec sp;
    vla_engine *eng = NULL;
    memset(&sp, 0, sizeof sp);
    vla_config_default(&sp.cfg, VLA_LA, 8);
    sp.cfg.dv = 8;
    sp.cfg.normalize = !packed;
    sp.runs = JH;
    snprintf(stream, sizeof stream, "trace:%s/tr", dir);
    sp.stream = stream;
    sp.round_inputs = VLA_FMT_F64;
    e = e || vla_engine_new(&eng, &sp, NULL);
    for (long t = 1; !e && t <= JT; t++) {
        e = vla_engine_advance(eng, t);
        for (int h = 0; !e && h < JH; h++)
            e = vla_engine_get(eng, h, VLA_Q_O, x + ((size_t)h * JT + (size_t)(t - 1)) * 8);
    }
    vla_engine_free(eng);
    if (packed)
        x[((size_t)2 * JT + (size_t)judge_cu[2]) * 8] += 1;
    snprintf(path, sizeof path, "%s/ko/o.npy", dir);
    e = e || vla_npy_write(path, x, 3, shape);
    free(x);
    return e;
}

TEST_SLOW(reliability_judge_resume)
{
    const char *p, *what;
    char dir[256], buf[1200], msg[3000], a[400], b[400], ck[400], *argv[20];
    char *env[] = {"VLA_CHECKPOINT_SECONDS=0", "OMP_NUM_THREADS=1", NULL};
    if (!begin(dir, sizeof dir, 1, "vla-check", &p))
        return;
    snprintf(ck, sizeof ck, "%s/a.dat.ckpt", dir);
    judge_argv(argv, buf, p, dir, NULL);
    int st = judge_files(dir) ? -9 : run(NULL, argv, NULL, msg, sizeof msg, 300);
    for (size_t i = 0; i < sizeof judge_outs / sizeof *judge_outs; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, judge_outs[i]);
        snprintf(b, sizeof b, "%s/ref-%s", dir, judge_outs[i]);
        CHECK_MSG(rename(a, b) == 0, "%s: %s", a, strerror(errno));
    }
    CHECK_MSG(st == 0 && !exists(ck), "the judge uninterrupted: status %d '%s'", st, msg);
    char *saved = NULL;
    size_t len = 0;
    for (int sig = SIGINT; sig; sig = sig == SIGINT ? SIGKILL : 0) {
        judge_argv(argv, buf, p, dir, NULL);
        /* SIGINT as the first head's checkpoint is written; SIGKILL as soon as it is seen */
        char *stop[] = {env[0], env[1], "VLA_STOP_AFTER_CHECKPOINTS=1", NULL};
        st = sig == SIGINT ? run(NULL, argv, stop, msg, sizeof msg, 300)
                           : run_signalled(argv, env, ck, 0, sig, NULL, msg, sizeof msg);
        CHECK_MSG(st == (sig == SIGINT ? 3 : 128 + SIGKILL) && exists(ck) &&
                      (sig != SIGINT || (strstr(msg, " of 4 heads finished, saved in") &&
                                         !strstr(msg, "4 of 4") && strstr(msg, "--resume"))),
                  "the judge stopped by signal %d: status %d, %s, '%s'", sig, st,
                  exists(ck) ? "a checkpoint" : "no checkpoint", msg);
        if (sig == SIGINT) { /* o.npy written again, one number moved: another judge's */
            char o[400];
            size_t olen;
            free(saved);
            saved = read_all(ck, &len);
            snprintf(o, sizeof o, "%s/ko/o.npy", dir);
            char *ob = read_all(o, &olen), *keep = ob ? malloc(olen) : NULL;
            if (keep) {
                memcpy(keep, ob, olen);
                ob[olen - 1] ^= 1;
                write_bytes(o, ob, olen);
                judge_argv(argv, buf, p, dir, "--resume");
                st = run(NULL, argv, NULL, msg, sizeof msg, 120);
                CHECK_MSG(st == 2 && strstr(msg, "--outputs o.npy") && strstr(msg, "refusing") &&
                              exists(ck),
                          "resumed with another o.npy: status %d '%s'", st, msg);
                write_bytes(o, keep, olen);
            }
            free(ob);
            free(keep);
        }
        judge_argv(argv, buf, p, dir, "--resume");
        st = run(NULL, argv, NULL, msg, sizeof msg, 300);
        int same = outs_same(dir, judge_outs, sizeof judge_outs / sizeof *judge_outs, &what);
        CHECK_MSG(st == 0 && strstr(msg, "heads finished before, kept") && same && !exists(ck),
                  "the judge resumed after signal %d: status %d, %s%s, checkpoint %s, '%s'", sig,
                  st, same ? "the same outputs" : "differs: ", what, exists(ck) ? "left" :
                  "removed", msg);
    }
    /* head 0's rel_rms, after its record's counts of the references (refck_t: 48 bytes) and
     * their passes (4 longs) */
    size_t at = saved ? record_at(saved, len, 0) : 0;
    uint64_t rlen = 0;
    if (at)
        memcpy(&rlen, saved + at, 8);
    CHECK_MSG(rlen >= 88, "head 0's record: %llu bytes", (unsigned long long)rlen);
    if (rlen >= 88) {
        const double forged = 12345.5;
        memcpy(saved + at + 8 + 80, &forged, 8);
        uint64_t h = vla_fnv1a(vla_fnv1a(VLA_FNV_INIT, &rlen, 8), saved + at + 8, rlen);
        memcpy(saved + at + 8 + rlen, &h, 8);
        write_bytes(ck, saved, len);
        judge_argv(argv, buf, p, dir, "--resume");
        st = run(NULL, argv, NULL, msg, sizeof msg, 300);
        snprintf(a, sizeof a, "%s/r.json", dir);
        char *js = read_all(a, NULL);
        CHECK_MSG(st != 2 && js && strstr(js, "\"head\": 0,") &&
                      strstr(js, "\"rel_rms\": 12345.5,"),
                  "resumed from a forged record: status %d, the forged value %s '%s'", st,
                  js && strstr(js, "12345.5") ? "there" : "not there", msg);
        free(js);
    }
    free(saved);
    remove_tree(dir);
}

/* The same judge on a packed trace (cu_seqlens.npy: sequences of 1200, 1900 and 1900 steps, la
 * without its normalizer), the kernel's head 2 wrong from sequence 2's first token: exit 1 with
 * the sequence named; stopped by SIGINT once a head is in the checkpoint and resumed, the table,
 * report and JSON are the uninterrupted run's byte for byte (the per-sequence numbers of a head
 * read back from its record) */
TEST_SLOW(reliability_judge_resume_packed)
{
    const char *p, *what;
    char dir[256], buf[1200], msg[3000], a[400], b[400], ck[400], *argv[24];
    char *stop[] = {"VLA_CHECKPOINT_SECONDS=0", "OMP_NUM_THREADS=1", "VLA_STOP_AFTER_CHECKPOINTS=1",
                    NULL};
    if (!begin(dir, sizeof dir, 1, "vla-check", &p))
        return;
    strcat(dir, "/packed");
    snprintf(ck, sizeof ck, "%s/a.dat.ckpt", dir);
    judge_argv(argv, buf, p, dir, NULL);
    int st = mkdir(dir, 0755) || judge_files(dir) ? -9 : run(NULL, argv, NULL, msg, sizeof msg, 300);
    snprintf(a, sizeof a, "%s/r.md", dir);
    char *md = read_all(a, NULL);
    CHECK_MSG(st == 1 && !exists(ck) && md && strstr(md, "packed sequence 2 of 3"),
              "the packed judge uninterrupted: status %d, the report %s '%s'", st,
              md && strstr(md, "packed sequence 2") ? "names sequence 2" : "names no sequence", msg);
    free(md);
    for (size_t i = 0; i < sizeof judge_outs / sizeof *judge_outs; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, judge_outs[i]);
        snprintf(b, sizeof b, "%s/ref-%s", dir, judge_outs[i]);
        CHECK_MSG(rename(a, b) == 0, "%s: %s", a, strerror(errno));
    }
    st = run(NULL, argv, stop, msg, sizeof msg, 300);
    CHECK_MSG(st == 3 && exists(ck), "the packed judge stopped: status %d, %s, '%s'", st,
              exists(ck) ? "a checkpoint" : "no checkpoint", msg);
    judge_argv(argv, buf, p, dir, "--resume");
    st = run(NULL, argv, NULL, msg, sizeof msg, 300);
    int same = outs_same(dir, judge_outs, sizeof judge_outs / sizeof *judge_outs, &what);
    CHECK_MSG(st == 1 && strstr(msg, "heads finished before, kept") && same && !exists(ck),
              "the packed judge resumed: status %d, %s%s, checkpoint %s, '%s'", st,
              same ? "the same outputs" : "differs: ", what, exists(ck) ? "left" : "removed", msg);
    dir[strlen(dir) - strlen("/packed")] = 0;
    remove_tree(dir);
}

/* vla-grad's first head (prec f32, head 0, dq: its relerr); the sweep's first checkpoint, after
 * its 4-number head: f32 seq's s_relerr */
TEST(reliability_units_read_back)
{
    units_read_back(&units_cases[0], 3 * 8, "f32 0 dq %g ");
    units_read_back(&units_cases[6], 4 * 8, " 0 f32 %g ");
}

/* a sweep's checkpoint whose first checkpoint is the MPFR pass's (its head's second number, use_dd, 0) */
static int mpfr_pass(const char *b, size_t len)
{
    size_t at = b ? record_at(b, len, 0) : 0;
    long use_dd = 1;
    if (at && at + 8 + 16 <= len)
        memcpy(&use_dd, b + at + 8 + 8, 8);
    return at && !use_dd;
}

/* A checkpoint file written between the two saves of a checkpoint (kill -9 there) holds the state
 * of the last one finished and that of the one before, not saved again yet: the one before's
 * record of an earlier file spliced into a later one (every record keeps its checksum) resumes to
 * the uninterrupted table (it was refused: "checkpoint 0 is not one of this command's", exit 1) */
TEST(reliability_sweep_two_states)
{
    const units_case *k = &units_cases[6];
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[3000], *argv[40];
    if (!begin(dir, sizeof dir, 1, k->prog, &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, k->args, "--out", ref, NULL, NULL);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want, "uninterrupted: status %d '%s'", st, msg);
    make_argv(argv, p, k->args, "--out", out, NULL, NULL);
    size_t len, early_len, a0, a1, e0, e1;
    int st1 = stop_after(argv, 1, msg, sizeof msg); /* the file after the first checkpoint */
    char *early = read_all(ck, &early_len);
    unlink(ck);
    st = stop_after(argv, 2, msg, sizeof msg); /* ... and after the second */
    char *b = read_all(ck, &len);
    int ok = st1 == 3 && st == 3 && b && early && (a0 = record_at(b, len, 0)) &&
             (a1 = record_at(b, len, 1)) && (e0 = record_at(early, early_len, 0)) &&
             (e1 = record_at(early, early_len, 1)) &&
             e1 - e0 > a1 - a0; /* its record 0 with the state, the later one's without */
    CHECK_MSG(ok, "interrupted: status %d and %d, %s '%s'", st1, st,
              early ? "an early file" : "no early file", msg);
    if (ok) {
        char *spliced = malloc(len + (e1 - e0));
        size_t n = 0;
        memcpy(spliced, b, a0);
        n += a0;
        memcpy(spliced + n, early + e0, e1 - e0);
        n += e1 - e0;
        memcpy(spliced + n, b + a1, len - a1);
        n += len - a1;
        write_bytes(ck, spliced, n);
        free(spliced);
        make_argv(argv, p, k->args, "--out", out, "--resume", NULL);
        st = run(NULL, argv, NULL, msg, sizeof msg, 120);
        char *got = table_body(out);
        CHECK_MSG(st == 0 && got && want && !strcmp(got, want) && strstr(msg, "finished before, kept"),
                  "resumed: status %d, table %s, '%s'", st,
                  got && want && !strcmp(got, want) ? "equal" : "differs", msg);
        free(got);
    }
    free(b);
    free(early);
    free(want);
    remove_tree(dir);
}

/* The sweep goes on from the state its last checkpoint finished carries: a damaged record, the
 * first one's or the last one's (a byte flipped: its checksum fails), leaves no state to go on
 * from with every checkpoint before it, and the sweep starts over, saying so, to the
 * uninterrupted table (it once resumed nothing and failed, exit 1) */
TEST(reliability_sweep_damaged_state)
{
    const units_case *k = &units_cases[6];
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[3000], *argv[40];
    if (!begin(dir, sizeof dir, 1, k->prog, &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, k->args, "--out", ref, NULL, NULL);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want, "uninterrupted: status %d '%s'", st, msg);
    for (int which = 0; which < 2; which++) { /* the first record, the last one kept */
        unlink(ck); /* (what a failed round left) */
        make_argv(argv, p, k->args, "--out", out, NULL, NULL);
        st = stop_after(argv, 2, msg, sizeof msg); /* two finished */
        size_t len, at = 0, rec;
        char *b = read_all(ck, &len);
        uint64_t rlen = 0;
        for (int h = 0; b && (rec = record_at(b, len, h)); h++) {
            uint64_t n;
            memcpy(&n, b + rec, 8);
            if (n && (!at || which))
                at = rec, rlen = n;
        }
        CHECK_MSG(st == 3 && rlen > 64, "interrupted: status %d, record %llu bytes '%s'", st,
                  (unsigned long long)rlen, msg);
        if (rlen > 64) {
            b[at + 8 + rlen / 2] ^= 1;
            write_bytes(ck, b, len);
            make_argv(argv, p, k->args, "--out", out, "--resume", NULL);
            st = run(NULL, argv, NULL, msg, sizeof msg, 120);
            char *got = table_body(out);
            CHECK_MSG(st == 0 && got && want && !strcmp(got, want) && strstr(msg, "damaged") &&
                          strstr(msg, "every checkpoint starts over"),
                      "%s record damaged: status %d, table %s, '%s'", which ? "last" : "first", st,
                      got && want && !strcmp(got, want) ? "equal" : "differs", msg);
            free(got);
        }
        free(b);
    }
    free(want);
    remove_tree(dir);
}

/* A sweep whose double-double reference overflows (la on gauss:1e200: its check finds NaN) runs
 * again in MPFR; stopped in that pass (its first checkpoint's record says so: not dd), the
 * resume goes on in MPFR, not from the double-double pass, to the uninterrupted table. */
TEST(reliability_sweep_resume_in_mpfr)
{
    static const char *const args[] = {"--what", "sweep", "--model", "la", "--stream",
                                       "gauss:1e200", "--d", "8", "--steps", "100000",
                                       "--forms", "seq,chunk:16", "--precisions", "f32", NULL};
    const char *p;
    char dir[256], out[400], ref[400], ck[450], msg[3000], *argv[40];
    if (!begin(dir, sizeof dir, 1, "vla-forms", &p))
        return;
    paths(dir, out, ref, ck);
    make_argv(argv, p, args, "--out", ref, NULL, NULL);
    int st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    char *want = table_body(ref);
    CHECK_MSG(st == 0 && want && strstr(msg, "running MPFR") && strstr(want, "so it was not used"),
              "uninterrupted: status %d '%s'", st, msg);
    make_argv(argv, p, args, "--out", out, NULL, NULL);
    /* the double-double pass writes its nck checkpoints, the MPFR pass's first is the next */
    int nck = 0;
    const char *of = (st = stop_after(argv, 1, msg, sizeof msg)) == 3 ? strstr(msg, "1 of ") : NULL;
    CHECK_MSG(of && sscanf(of, "1 of %d", &nck) == 1 && nck > 1, "stopped at the first: status %d "
              "'%s'", st, msg);
    unlink(ck);
    st = stop_after(argv, nck, msg, sizeof msg);
    CHECK_MSG(st == 3 && strstr(msg, "nothing saved: no checkpoint had been written in the MPFR "
                                     "pass"), "stopped between the passes: status %d '%s'", st, msg);
    unlink(ck);
    st = stop_after(argv, nck + 1, msg, sizeof msg);
    size_t len;
    char *b = read_all(ck, &len);
    CHECK_MSG(st == 3 && strstr(msg, "running MPFR") && strstr(msg, "finished, saved in") &&
              mpfr_pass(b, len), "stopped in the MPFR pass: status %d, %s '%s'", st,
              mpfr_pass(b, len) ? "its record" : "not its record", msg);
    free(b);
    make_argv(argv, p, args, "--out", out, "--resume", NULL);
    st = run(NULL, argv, NULL, msg, sizeof msg, 120);
    char *got = table_body(out);
    CHECK_MSG(st == 0 && got && want && !strcmp(got, want) && strstr(msg, "finished before, kept") &&
                  strstr(msg, "running MPFR") && !exists(ck),
              "resumed: status %d, table %s, '%s'", st,
              got && want && !strcmp(got, want) ? "equal" : "differs", msg);
    free(got);
    free(want);
    remove_tree(dir);
}
