/* ckpt.c: the checkpoint file, OUT.ckpt, whatever its records hold (vla_drive's runs, vla_units'
 * units, drive.c): its key, reading it back and writing it atomically.
 * OUT.ckpt holds every run's checkpoint (one file a run cost 100,001 files and 78 s to answer a
 * SIGTERM with 100,000 runs; one file is one create, one sync and one rename):
 *   the header: the magic; the run's key (its length, then text: "name=value" lines, the build,
 *     every option that decides the runs' numbers and rows, constants exactly, a trace by its
 *     contents); the number of records; FNV-1a of the header's bytes before it;
 *   a record per run (vla_drive's) or unit (vla_units'), in order: its length (0: none), then
 *     its bytes (a run's: the next checkpoint's index, the engines' states, the accumulator, the
 *     rows); then FNV-1a of the length and the record.
 * Read back, every size is checked against what this command's runs can hold before the bytes it
 * covers are read (hashing a checkpoint of absurd size whole answers SIGINT after 52 s),
 * a checksum before what it covers is parsed, then every field. A damaged record restarts its run
 * only (and the runs after it when its length is what was damaged: their place is lost). */
#include "ckpt.h"
#include "file.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char ckpt_magic[8] = {'v', 'l', 'a', 'c', 'k', 'p', 't', '4'};
#define CKPT_KEY_MAX 65536
#define CKPT_RUNS_MAX 100000 /* --runs' limit */

static char *ckpt_path(const char *out)
{
    size_t n = strlen(out) + 8;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s.ckpt", out);
    return p;
}

/* The checkpoint goes only when the program exits 0, that is after the table was closed (written,
 * synced and renamed): a table that fails to be written (a full disk) leaves it for --resume. A
 * verdict's program (vla-check) also exits 1 for a check that failed once its outputs are all
 * written (ckpt_verdict_written): that run is finished too, and its checkpoint goes as well. */
static const char *ckpt_owner; /* OUT, an argv string: still there at exit */
static int ckpt_written;       /* every output written: exit 1 is a verdict */
static void ckpt_remove_on_success(int status, void *arg)
{
    (void)arg;
    const int done = status == 0 || (status == 1 && ckpt_written);
    char *path = done ? ckpt_path(ckpt_owner) : NULL, *target;
    const char *kind;
    if (path && vla_file_target(path, &target, &kind) == 0) {
        vla_file_remove_stale(target); /* OUT.ckpt.tmp.PID: left by a kill while written */
        unlink(path);
        free(target);
    }
    free(path);
}

/* The key: what a checkpoint must match to be resumed, everything that decides a run's numbers
 * and rows (a --resume with another seed, stream or horizon would otherwise splice two runs into
 * one table), and the build (a table names the commit that made it: another build's state must
 * not end in it). Not --runs or --backend for vla_drive: runs are independent, and every backend
 * gives the same bits. more: the caller's lines after the columns'. NULL, said, with the exit
 * status in *status: 1 out of memory, 2 when the stream cannot be read again (a trace changed
 * since it was parsed: its reason, as the parser says it). */
char *ckpt_key(const vla_cli *c, const vla_cli_spec *spec, const char *columns, const char *more,
               int *status)
{
    char cfg[1024], stream[600] = "";
    vla_config_describe(&c->cfg, cfg, sizeof cfg);
    for (char *p = cfg; *p; p++) /* one constant a line, like the rest */
        if (*p == ' ')
            *p = '\n';
    vla_stream *st;
    vla_error ve;
    if (vla_stream_open_part(&st, c->stream, c->cfg.d, c->cfg.dv, c->seed, 0, -1, c->steps, &ve)) {
        fprintf(stderr, "%s: --stream: %s\n", spec->prog, vla_error_msg(&ve));
        *status = 2;
        return NULL;
    }
    vla_stream_identity(st, stream, sizeof stream);
    vla_stream_close(st);
    size_t n = strlen(cfg) + strlen(stream) + strlen(columns) + strlen(more) +
               strlen(vla_build_git()) + 512;
    char *key = malloc(n);
    if (key)
        snprintf(key, n,
                 "build=vlastab %s (git %s)\nprogram=%s\ncolumns=%s\n%s%s\n"
                 "stream=%s\nseed=%llu\nsteps=%ld\ncheckpoints=%d\nref=%s\nref-bits=%ld\n",
                 VLA_VERSION, vla_build_git(), spec->prog, columns, more, cfg, stream,
                 (unsigned long long)c->seed, c->steps, c->per_decade,
                 c->ref == REF_EXACT ? "exact" : c->ref == REF_F64 ? "f64" : "none",
                 c->ref == REF_EXACT ? c->ref_bits : 0);
    else
        fprintf(stderr, "%s: out of memory\n", spec->prog), *status = 1;
    return key;
}

/* the option that sets a key's line, for the message of a mismatch; the value a line that
 * vla_config_describe writes only when it is not the default has when it is absent */
static const char *ckpt_option(const char *name, size_t len, const char **dflt, char *buf,
                               size_t blen)
{
    static const char *const opts[][3] = {
        {"model", "--model"}, {"track", "--track"}, {"prec", "--precision"}, {"mode", "--mode"},
        {"d", "--d"}, {"dv", "--dv"}, {"form", "--form", "seq"},
        {"stream", "--stream (a trace is known by its contents)"}, {"seed", "--seed"},
        {"steps", "--steps"}, {"checkpoints", "--checkpoints"}, {"ref", "--ref"},
        {"ref-bits", "--ref-bits"}, {"gamma", "--set gamma", "1"},
        {"keynorm", "--set keynorm", "on"}, {"program", "the program"},
        {"build", "the build"}, {"columns", "the table's columns"},
        {"accumulator", "the program's accumulator"}, {"runs", "--runs"},
        {"backend", "--backend"}};
    *dflt = NULL;
    if (len > 2 && !strncmp(name, "--", 2)) { /* a program's own option (vla_units_open's key) */
        snprintf(buf, blen, "%.*s", (int)len, name);
        return buf;
    }
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strlen(opts[i][0]) == len && !strncmp(name, opts[i][0], len)) {
            *dflt = opts[i][2];
            return opts[i][1];
        }
    snprintf(buf, blen, "--set %.*s", (int)len, name);
    return buf;
}

/* the value of NAME in a key (its line "NAME=VALUE"), NULL when it has no such line */
static const char *key_value(const char *key, const char *name, size_t nlen, size_t *vlen)
{
    for (const char *l = key; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        if (!strncmp(l, name, nlen) && l[nlen] == '=') {
            *vlen = strcspn(l + nlen + 1, "\n");
            return l + nlen + 1;
        }
    return NULL;
}

/* whether a line NAME differs between two keys */
static int key_differs(const char *got, const char *want, const char *name)
{
    size_t gl = 0, wl = 0, nl = strlen(name);
    const char *gv = key_value(got, name, nl, &gl), *wv = key_value(want, name, nl, &wl);
    return !gv || !wv || gl != wl || memcmp(gv, wv, gl);
}

/* Why a checkpoint's key `got` is not this command's `want`, in words: the build, the program or
 * the model when it differs (which explains the rest: the model's defaults follow it), else every
 * line that differs, of either key, with the option that sets it ("it was written with
 * form=chunk:256, this command has form=seq (--form)"): CK_OTHER_RUN, with that in err */
static int ckpt_mismatch(const char *got, const char *want, vla_error *err)
{
    static const char *const first[] = {"build", "program", "model"};
    for (int i = 0; i < 3; i++) {
        size_t gl = 6, wl = 6, nl = strlen(first[i]);
        const char *gv = key_value(got, first[i], nl, &gl), *wv = key_value(want, first[i], nl, &wl);
        if (gv && wv && gl == wl && !memcmp(gv, wv, gl))
            continue;
        if (i == 2)
            return ck_fail(err, CK_OTHER_RUN, "it was written with model=%.*s, this command has "
                           "model=%.*s (--model)", (int)gl, gv ? gv : "(none)", (int)wl,
                           wv ? wv : "(none)");
        return ck_fail(err, CK_OTHER_RUN, "it was written by %.*s, this is %.*s%s", (int)gl,
                       gv ? gv : "(none)", (int)wl, wv ? wv : "(none)",
                       i ? "" : ": a checkpoint resumes only in the build that wrote it (the "
                                "table names the commit that made it)");
    }
    /* a trace's digest is of the steps read: another horizon changes it too, which --steps says */
    const int steps_only = key_differs(got, want, "steps");
    char *was = NULL, *has = NULL, *opts = NULL; /* the lines that differ, each side's, whole */
    size_t wasn, hasn, optsn;
    FILE *fw = open_memstream(&was, &wasn), *fh = open_memstream(&has, &hasn),
         *fo = open_memstream(&opts, &optsn);
    int nd = 0;
    for (int side = 0; fw && fh && fo && side < 2; side++) /* want's lines, then only got's */
        for (const char *l = side ? got : want; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
            size_t nl = strcspn(l, "=\n"), gl = 0, wl = 0;
            const char *gv = key_value(got, l, nl, &gl), *wv = key_value(want, l, nl, &wl), *dflt;
            if ((side && wv) || (steps_only && !strncmp(l, "stream=trace:", 13)))
                continue;
            char buf[80];
            const char *opt = ckpt_option(l, nl, &dflt, buf, sizeof buf);
            if (!gv && dflt)
                gv = dflt, gl = strlen(dflt);
            if (!wv && dflt)
                wv = dflt, wl = strlen(dflt);
            if (gv && wv && gl == wl && !memcmp(gv, wv, gl))
                continue;
            const char *sep = nd++ ? " and " : "";
            fprintf(fw, "%s%.*s=%.*s", sep, (int)nl, l, (int)(gv ? gl : 6), gv ? gv : "(none)");
            fprintf(fh, "%s%.*s=%.*s", sep, (int)nl, l, (int)(wv ? wl : 6), wv ? wv : "(none)");
            fprintf(fo, "%s%s", nd > 1 ? ", " : "", opt);
        }
    const int ok = fw && fh && fo; /* (out of memory: the sentence without the lines) */
    if (fw)
        fclose(fw);
    if (fh)
        fclose(fh);
    if (fo)
        fclose(fo);
    int res = ok && nd && was && has && opts
                  ? ck_fail(err, CK_OTHER_RUN, "it was written with %s, this command has %s (%s)",
                            was, has, opts)
                  : ck_fail(err, CK_OTHER_RUN, "its key differs from this command's");
    free(was);
    free(has);
    free(opts);
    return res;
}

/* FNV-1a of f's next n bytes, continuing from *h */
static int ckpt_digest(FILE *f, long n, uint64_t *h)
{
    unsigned char buf[1 << 16];
    while (n > 0) {
        size_t want = n < (long)sizeof buf ? (size_t)n : sizeof buf;
        if (fread(buf, 1, want, f) != want)
            return VLA_EIO;
        *h = vla_fnv1a(*h, buf, want);
        n -= (long)want;
    }
    return VLA_OK;
}

/* The header of a checkpoint file, read and checked: CK_OK with the key's text checked against
 * this command's and *nrec, or CK_DAMAGED / CK_OTHER_RUN with the reason in err */
static int ckpt_header(const ckpt_file *k, FILE *f, long size, long *nrec, long *end,
                       vla_error *err)
{
    char magic[8], *key = NULL;
    uint32_t klen = 0, nr = 0;
    uint64_t sum = 0, want = VLA_FNV_INIT;
    int res;
    if (size < 8 + 4 + 4 + 8 || fread(magic, 8, 1, f) != 1) {
        res = ck_fail(err, CK_DAMAGED, "it is shorter than a checkpoint");
        goto done;
    }
    if (memcmp(magic, ckpt_magic, 7)) {
        res = ck_fail(err, CK_DAMAGED, "it is not a checkpoint (no magic)");
        goto done;
    }
    if (magic[7] != ckpt_magic[7]) {
        res = ck_fail(err, CK_OTHER_RUN, "it is a checkpoint of another version of vlastab "
                      "(format %c, here %c)", magic[7], ckpt_magic[7]);
        goto done;
    }
    if (fread(&klen, 4, 1, f) != 1 || klen > CKPT_KEY_MAX || 8 + 4 + (long)klen + 4 + 8 > size ||
        !(key = malloc(klen + 1)) || fread(key, 1, klen, f) != klen || fread(&nr, 4, 1, f) != 1) {
        res = ck_fail(err, CK_DAMAGED, "its header is not a checkpoint's");
        goto done;
    }
    key[klen] = 0;
    want = vla_fnv1a(vla_fnv1a(vla_fnv1a(vla_fnv1a(want, magic, 8), &klen, 4), key, klen), &nr, 4);
    if (fread(&sum, 8, 1, f) != 1 || sum != want) {
        res = ck_fail(err, CK_DAMAGED, "its header's checksum does not match its contents");
        goto done;
    }
    /* whole as written: from here on a failed test is a writer's bug or a forged file */
    *end = 8 + 4 + (long)klen + 4 + 8;
    if (nr > CKPT_RUNS_MAX)
        res = ck_fail(err, CK_DAMAGED, "it claims %u runs, more than a command has (%d)", nr,
                      CKPT_RUNS_MAX);
    else if (size > *end + (long)nr * (16 + k->rec_max))
        res = ck_fail(err, CK_DAMAGED, "it is larger (%ld bytes) than %u checkpoints of this "
                      "command's runs can be (%ld bytes)", size, nr,
                      *end + (long)nr * (16 + k->rec_max));
    else if (strcmp(key, k->key))
        res = ckpt_mismatch(key, k->key, err);
    else
        *nrec = nr, res = CK_OK;
done:
    free(key);
    return res;
}

/* Record h at f's position: its length and checksum checked, then k->parse. CK_OK, CK_MISSING
 * (length 0) or CK_DAMAGED with err; *next: where the next record starts, -1 when it cannot be
 * known */
static int ckpt_load_record(const ckpt_file *k, FILE *f, int h, long size, long *next,
                            vla_error *err)
{
    uint64_t rlen = 0, sum = 0, want = VLA_FNV_INIT;
    long at = ftell(f);
    *next = -1;
    if (fread(&rlen, 8, 1, f) != 1)
        return ck_fail(err, CK_DAMAGED, "the file ends inside it");
    if (rlen == 0) {
        *next = at + 8;
        return CK_MISSING;
    }
    if (rlen < (uint64_t)k->rec_min || rlen > (uint64_t)k->rec_max)
        return ck_fail(err, CK_DAMAGED, "its length (%llu bytes) is not that of a record of this "
                       "command's checkpoint (%ld to %ld bytes)", (unsigned long long)rlen,
                       k->rec_min, k->rec_max);
    if (at + 8 + (long)rlen + 8 > size)
        return ck_fail(err, CK_DAMAGED, "the file ends inside it");
    *next = at + 8 + (long)rlen + 8;
    want = vla_fnv1a(want, &rlen, 8);
    if (ckpt_digest(f, (long)rlen, &want) || fread(&sum, 8, 1, f) != 1 || sum != want ||
        fseek(f, at + 8, SEEK_SET))
        return ck_fail(err, CK_DAMAGED, "its checksum does not match its contents");
    /* whole as written: from here on a failed test is a writer's bug or a forged record */
    int r = k->parse(k->ctx, f, h, (long)rlen, err);
    if (r != CK_OK)
        return r;
    if (ftell(f) != at + 8 + (long)rlen || fseek(f, *next, SEEK_SET))
        return ck_fail(err, CK_DAMAGED, "it holds more than a checkpoint");
    return CK_OK;
}

/* OUT.ckpt into the engines, the accumulators and the rows: got[h] says what became of run h
 * (CK_OK, CK_MISSING, CK_DAMAGED, the first damaged one's reason in first_bad), and the return
 * what became of the file: CK_OK (read: see got), CK_MISSING (none), CK_DAMAGED (its header: every
 * run starts over), CK_OTHER_RUN (refused: kept), CK_UNREADABLE, with the reason in err, or
 * CK_STOPPED (a signal: the runs not read yet would be saved from step 0 over their checkpoints,
 * so nothing is) */
int ckpt_load(const ckpt_file *k, int *got, vla_error *first_bad, vla_error *err)
{
    const int nr = k->n;
    char *path = ckpt_path(k->out);
    const char *kind = "";
    FILE *f = NULL;
    int r = !path ? VLA_ENOMEM : vla_file_read_open(path, LONG_MAX, &f, &kind);
    free(path);
    if (r) {
        const int errnum = errno;
        vla_fail(err, r, "%s", r == VLA_EINVAL ? kind : strerror(errnum));
        return r == VLA_EIO && errnum == ENOENT ? CK_MISSING : CK_UNREADABLE;
    }
    struct stat st;
    long size = fstat(fileno(f), &st) == 0 ? (long)st.st_size : -1, nrec = 0, at = 0;
    int res = ckpt_header(k, f, size, &nrec, &at, err), nbad = 0;
    vla_error later; /* the reasons of the damaged runs after the first, not said */
    for (int h = 0; h < nr && res == CK_OK; h++) {
        vla_error *w = nbad ? &later : first_bad;
        if (vla_cli_stop) { /* 100,000 records take seconds */
            res = CK_STOPPED;
            break;
        }
        if (h >= nrec || at < 0) {
            got[h] = h >= nrec ? CK_MISSING
                               : ck_fail(w, CK_DAMAGED, "a checkpoint before it is damaged where "
                                         "its length is: its place is lost");
        } else {
            long next;
            fseek(f, at, SEEK_SET);
            got[h] = ckpt_load_record(k, f, h, size, &next, w);
            at = next;
        }
        nbad += got[h] == CK_DAMAGED;
    }
    /* the runs of a resume with fewer --runs are not read; after the last record, nothing */
    if (res == CK_OK && nr >= nrec && at >= 0 && at != size)
        res = ck_fail(err, CK_DAMAGED, "it holds more than its %ld checkpoints", nrec);
    fclose(f);
    return res;
}

/* The previous OUT.ckpt, read record by record as a save goes, for the runs whose state a stop
 * within a step lost: they keep their record */
typedef struct {
    FILE *f;
    long at, size, nrec;
    int next, ok;
} ckpt_prev;

/* the record of run h in the previous file (*buf, *n; *n 0 when there is none usable) */
static void ckpt_prev_record(const ckpt_file *k, ckpt_prev *p, const char *target, int h,
                             char **buf, size_t *n)
{
    *buf = NULL;
    *n = 0;
    if (!p->f && p->ok >= 0) {
        const char *kind;
        struct stat st;
        p->ok = vla_file_read_open(target, LONG_MAX, &p->f, &kind) == 0 &&
                        fstat(fileno(p->f), &st) == 0 &&
                        ckpt_header(k, p->f, p->size = st.st_size, &p->nrec, &p->at, NULL) ==
                            CK_OK
                    ? 1
                    : -1;
    }
    uint64_t rlen = 0, sum;
    while (p->ok > 0 && p->next <= h && p->next < p->nrec) {
        if (fseek(p->f, p->at, SEEK_SET) || fread(&rlen, 8, 1, p->f) != 1 ||
            rlen > (uint64_t)k->rec_max || p->at + (rlen ? 16 : 8) + (long)rlen > p->size) {
            p->ok = -1;
            break;
        }
        if (p->next++ < h) {
            p->at += (rlen ? 16 : 8) + (long)rlen;
            continue;
        }
        uint64_t want = vla_fnv1a(VLA_FNV_INIT, &rlen, 8);
        *buf = rlen ? malloc(rlen) : NULL;
        if (*buf && fread(*buf, 1, rlen, p->f) == rlen && fread(&sum, 8, 1, p->f) == 1 &&
            sum == vla_fnv1a(want, *buf, rlen))
            *n = rlen;
        p->at += (rlen ? 16 : 8) + (long)rlen;
    }
}

/* VLA_STOP_AFTER_CHECKPOINTS=N: the N-th checkpoint file written stops the program as SIGINT
 * would, at that exact point whatever the machine's speed (tests stop there); 0 or unset: never */
static double ckpt_stop_after;

/* Every run's checkpoint into a temporary file beside OUT.ckpt, synced and renamed, so that a
 * kill at any moment leaves the previous checkpoint intact. A run whose state a stop within a step
 * lost (the exact reference) keeps its previous record, if any (*kept counts them, *first_kept
 * the first). 0, or a failure with its reason in err. */
int ckpt_save(const ckpt_file *k, int *kept, int *first_kept, vla_error *err)
{
    char *path = ckpt_path(k->out), *target = NULL, *tmp = NULL;
    const char *kind = NULL;
    FILE *f = NULL;
    ckpt_prev prev = {NULL, 0, 0, 0, 0, 0};
    int r = !path ? VLA_ENOMEM : vla_file_target(path, &target, &kind);
    if (!r) {
        size_t n = strlen(target) + 32;
        if ((tmp = malloc(n))) /* its own name: two programs writing one OUT never share it */
            snprintf(tmp, n, "%s.tmp.%ld", target, (long)getpid());
        r = !tmp ? VLA_ENOMEM : (f = vla_file_create(tmp)) ? VLA_OK : VLA_EIO;
    }
    if (!r) {
        const uint32_t klen = (uint32_t)strlen(k->key), nr = (uint32_t)k->n;
        uint64_t sum = vla_fnv1a(VLA_FNV_INIT, ckpt_magic, 8);
        sum = vla_fnv1a(vla_fnv1a(vla_fnv1a(sum, &klen, 4), k->key, klen), &nr, 4);
        int ok = fwrite(ckpt_magic, 8, 1, f) == 1 && fwrite(&klen, 4, 1, f) == 1 &&
                 fwrite(k->key, 1, klen, f) == klen && fwrite(&nr, 4, 1, f) == 1 &&
                 fwrite(&sum, 8, 1, f) == 1;
        for (int h = 0; ok && !r && h < (int)nr; h++) {
            char *rec = NULL;
            size_t n = 0;
            r = k->record(k->ctx, h, &rec, &n);
            if (r == VLA_EINTR) { /* its state was given up within a step: the last stays */
                *first_kept = (*kept)++ ? *first_kept : h;
                ckpt_prev_record(k, &prev, target, h, &rec, &n);
                r = VLA_OK;
            }
            uint64_t rlen = n, rsum = vla_fnv1a(vla_fnv1a(VLA_FNV_INIT, &rlen, 8), rec, n);
            ok = !r && fwrite(&rlen, 8, 1, f) == 1 &&
                 (!n || (fwrite(rec, 1, n, f) == n && fwrite(&rsum, 8, 1, f) == 1));
            free(rec);
        }
        int errnum = errno;
        ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
        errnum = ok ? errnum : errno;
        ok = fclose(f) == 0 && ok;
        if (!r && !ok)
            r = VLA_EIO, errno = errnum;
        if (!r)
            r = vla_file_replace(tmp, target, &kind);
        static long written;
        if (!r && ++written == (long)ckpt_stop_after && !vla_cli_stop)
            vla_cli_stop = SIGINT;
        if (r) {
            errnum = errno;
            unlink(tmp);
            errno = errnum;
        }
    }
    if (prev.f)
        fclose(prev.f);
    if (r)
        vla_fail(err, r, "%s", kind ? kind : r == VLA_ENOMEM ? "out of memory" : strerror(errno));
    free(path);
    free(target);
    free(tmp);
    return r;
}

/* the seconds between checkpoints: VLA_CHECKPOINT_SECONDS (tests make them frequent), else 60;
 * a value that is not a number of seconds, or a VLA_STOP_AFTER_CHECKPOINTS that is not a count,
 * is a usage error (said; nonzero) */
int ckpt_every(const char *prog, double *every)
{
    const char *ev = getenv("VLA_CHECKPOINT_SECONDS"), *es = getenv("VLA_STOP_AFTER_CHECKPOINTS");
    *every = 60;
    if (ev && (vla_parse_real(ev, every, NULL) || !(*every >= 0 && *every <= 1e9))) {
        fprintf(stderr, "%s: VLA_CHECKPOINT_SECONDS='%s' is not a number of seconds\n", prog, ev);
        return 2;
    }
    ckpt_stop_after = 0;
    if (es && (vla_parse_real(es, &ckpt_stop_after, NULL) || !(ckpt_stop_after >= 0 &&
               ckpt_stop_after <= 1e9 && ckpt_stop_after == (long)ckpt_stop_after))) {
        fprintf(stderr, "%s: VLA_STOP_AFTER_CHECKPOINTS='%s' is not a count\n", prog, es);
        return 2;
    }
    return 0;
}

/* checkpoints beside a regular file (or one still to come), not beside /dev/null or a pipe */
int ckpt_beside(const char *out)
{
    struct stat st;
    return strcmp(out, "-") && (stat(out, &st) != 0 || S_ISREG(st.st_mode));
}

/* what ckpt_load's answer `file` ends, said: the exit status (0: nothing, go on) */
int ckpt_refused(const char *prog, const char *out, int file, const vla_error *err)
{
    const char *why = vla_error_msg(err);
    if (file == CK_OTHER_RUN)
        fprintf(stderr, "%s: --resume: %s.ckpt: %s; refusing to continue another run (the "
                        "checkpoint is kept; without --resume the run starts over and "
                        "replaces it)\n", prog, out, why);
    else if (file == CK_UNREADABLE)
        fprintf(stderr, "%s: cannot read %s.ckpt: %s\n", prog, out, why);
    else if (file == CK_STOPPED)
        fprintf(stderr, "%s: interrupted (signal %d) while reading %s.ckpt, which is kept as it "
                        "was. Resume with the same command and --resume.\n", prog,
                (int)vla_cli_stop, out);
    return file == CK_OTHER_RUN ? 2 : file == CK_UNREADABLE ? 1 : file == CK_STOPPED ? 3 : 0;
}

/* the checkpoint goes when the program exits 0, or a verdict exits 1 (ckpt_remove_on_success) */
void ckpt_remove_at_exit(const char *out)
{
    if (!ckpt_owner) {
        ckpt_owner = out;
        on_exit(ckpt_remove_on_success, NULL);
    }
}

void ckpt_verdict_written(void)
{
    ckpt_written = 1;
}
