/* test_sweep.c: bin/vla-sweep from the outside, on small grids of bin/vla-statenorm: a local run
 * and one under mpirun -np 3 give the same tables and manifests; a sweep killed mid-way resumes
 * without rerunning its finished cases, to the same bits; a failing case is reported with its
 * command and its error while the others complete; the Slurm script's array range and commands,
 * and the script itself run task by task. Skips when bin/ has not been built (or, for MPI, when
 * mpirun or an MPI build is missing). */
#define _GNU_SOURCE
#include "check.h"
#include "proc.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the programs' folder: bin/, or the build's (VLA_BIN_DIR: a sanitized build's programs). The
 * commands below say bin/vla-...: sh() and bin() put the folder in its place. */
static const char *bin(const char *name)
{
    static char path[4][600];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", vla_test_bin_dir(), name);
    return p;
}

static int have_bins(void)
{
    if (access(bin("vla-sweep"), X_OK) || access(bin("vla-statenorm"), X_OK)) {
        vla_test_skip("vla-sweep or vla-statenorm not built (run make first)");
        return 0;
    }
    return 1;
}

/* a scratch folder, removed by done() */
static char *scratch(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "%s/vlasweep.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
        return NULL;
    }
    return dir;
}

static void done(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_sweep: could not remove %s\n", dir);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

/* runs a shell command line; its exit status (-1 when it did not exit) */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = vla_test_vsh(NULL, fmt, ap);
    va_end(ap);
    return st;
}

/* a table without the lines that name the run rather than its numbers: the date, the host, the
 * command (it holds the output path) and the thread count (the results do not depend on it) */
static char *numbers(const char *path)
{
    char *s = read_all(path, NULL);
    if (!s)
        return NULL;
    char *o = s;
    for (char *l = s, *nl; *l; l = nl) {
        nl = strchr(l, '\n');
        nl = nl ? nl + 1 : l + strlen(l);
        if (strncmp(l, "# date:", 7) && strncmp(l, "# host:", 7) && strncmp(l, "# command:", 10) &&
            strncmp(l, "# threads:", 10)) {
            memmove(o, l, nl - l);
            o += nl - l;
        }
    }
    *o = 0;
    return s;
}

/* a manifest with its seconds column blanked and `from` (a tree's name) replaced by `to` */
static char *manifest(const char *path, const char *from, const char *to)
{
    char *s = read_all(path, NULL);
    if (!s)
        return NULL;
    size_t cap = strlen(s) * 2 + 64, n = 0;
    char *o = malloc(cap);
    int col = 0, comment = s[0] == '#';
    for (char *p = s; *p;) {
        if (from && !strncmp(p, from, strlen(from))) {
            n += sprintf(o + n, "%s", to);
            p += strlen(from);
            continue;
        }
        if (*p == '\n') {
            col = 0;
            comment = p[1] == '#';
        } else if (*p == '\t') {
            col++;
        }
        if (col == 3 && *p != '\t' && !comment) {
            p++;
            continue;
        }
        o[n++] = *p++;
    }
    o[n] = 0;
    free(s);
    return o;
}

static int count_lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static const char *cases4[] = {"statenorm-la-f32", "statenorm-la-f16", "statenorm-vla3-f32",
                               "statenorm-vla3-f16"};

static void grid(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/grid.sweep", dir);
    put(p, "# a 2x2 grid: two models, two precisions\n"
           "program vla-statenorm\n"
           "fixed --steps 200 --stream lmlike --d 8\n"
           "axis --model la vla3\n"
           "axis --precision f32 f16   # f16: the low-precision case\n");
}

/* the tables of two trees, the same numbers; and the two manifests, the same but the timings */
static void same_trees(const char *dir, const char *a, const char *b)
{
    for (int i = 0; i < 4; i++) {
        char pa[512], pb[512];
        snprintf(pa, sizeof pa, "%s/%s/%s.dat", dir, a, cases4[i]);
        snprintf(pb, sizeof pb, "%s/%s/%s.dat", dir, b, cases4[i]);
        char *x = numbers(pa), *y = numbers(pb);
        CHECK_MSG(x && y && strstr(x, "# columns:") && !strcmp(x, y), "%s and %s differ", pa, pb);
        free(x);
        free(y);
    }
    char ma[512], mb[512];
    snprintf(ma, sizeof ma, "%s/%s/grid.manifest.tsv", dir, a);
    snprintf(mb, sizeof mb, "%s/%s/grid.manifest.tsv", dir, b);
    char from[64], to[64]; /* "/a/": a tree's name as a path part, not inside another word */
    snprintf(from, sizeof from, "/%s/", a);
    snprintf(to, sizeof to, "/%s/", b);
    char *x = manifest(ma, from, to), *y = manifest(mb, NULL, NULL);
    CHECK_MSG(x && y && !strcmp(x, y), "manifests differ:\n%s\n---\n%s", x ? x : "(none)",
              y ? y : "(none)");
    CHECK_EQ_INT(count_lines(y, "\tok\t"), 4);
    free(x);
    free(y);
}

/* A stand-in program that counts the cases running beside it (while it sleeps) and says what
 * it saw in its table: the sections marked alone must see only themselves. */
static void alone_sweep(const char *dir)
{
    char p[512], text[1024];
    snprintf(p, sizeof p, "%s/count.sh", dir);
    put(p, "#!/bin/sh\n"
           "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
           "d=${out%/*}/running\n"
           "mkdir -p \"$d\" && touch \"$d/$$\" && sleep 0.3\n"
           "n=$(ls \"$d\" | wc -l)\n"
           "sleep 0.1 && rm -f \"$d/$$\"\n"
           "echo \"n=$n omp=$OMP_NUM_THREADS\" >\"$out\"\n");
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/alone.sweep", dir);
    snprintf(text, sizeof text,
             "program %s/count.sh\naxis --i 1 2 3 4\nname par{i}\n"
             "program %s/count.sh\nalone\naxis --i 1 2\nname alone{i}\n", dir, dir);
    put(p, text);
}

/* the tables of alone_sweep's cases: the alone ones ran by themselves, with every core */
static void alone_checks(const char *tree, int parallel)
{
    int most = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < 6; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s%d.dat", tree, i < 4 ? "par" : "alone", i < 4 ? i + 1 : i - 3);
        char *e = read_all(p, NULL);
        int n = -1, omp = -1;
        CHECK_MSG(e && sscanf(e, "n=%d omp=%d", &n, &omp) == 2, "%s: %s", p, e ? e : "(none)");
        if (i < 4)
            most = n > most ? n : most;
        else
            CHECK_MSG(n == 1 && omp == cores, "%s: %d cases running, OMP_NUM_THREADS %d", p, n, omp);
        free(e);
    }
    if (parallel) /* and the others did run side by side */
        CHECK_MSG(most > 1, "%s: the cases not alone never ran side by side", tree);
}

TEST_SLOW(sweep_local)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    grid(dir);
    /* the cases, named by their axis values, listed before anything runs */
    CHECK_EQ_INT(sh("bin/vla-sweep --dry-run --out %s/t %s/grid.sweep >%s/dry", dir, dir, dir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/dry", dir);
    char *dry = read_all(p, NULL);
    for (int i = 0; dry && i < 4; i++)
        CHECK_MSG(strstr(dry, cases4[i]), "--dry-run lacks %s:\n%s", cases4[i], dry);
    char want[700];
    snprintf(want, sizeof want, "statenorm-vla3-f16\trun\t%s --steps 200 --stream lmlike --d 8 "
             "--model vla3 --precision f16 --out ", bin("vla-statenorm"));
    CHECK_MSG(dry && strstr(dry, want), "--dry-run: %s", dry ? dry : "(none)");
    free(dry);
    CHECK_EQ_INT(sh("bin/vla-sweep -j 2 --out %s/t %s/grid.sweep 2>%s/err", dir, dir, dir), 0);
    struct stat st[4];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/t/%s.dat", dir, cases4[i]);
        CHECK_MSG(stat(p, &st[i]) == 0, "no table %s", p);
    }
    snprintf(p, sizeof p, "%s/t/grid.manifest.tsv", dir);
    char *m = read_all(p, NULL);
    CHECK_MSG(m && count_lines(m, "\tok\t") == 4 && strstr(m, "# case\tcommand\tstatus\tseconds"),
              "manifest: %s", m ? m : "(none)");
    free(m);
    /* run again: everything is complete, nothing is rewritten */
    CHECK_EQ_INT(sh("bin/vla-sweep --out %s/t %s/grid.sweep 2>%s/err", dir, dir, dir), 0);
    snprintf(p, sizeof p, "%s/err", dir);
    char *err = read_all(p, NULL);
    CHECK_MSG(err && strstr(err, "0 ran ok, 4 complete before"), "second run: %s", err ? err : "");
    free(err);
    for (int i = 0; i < 4; i++) {
        struct stat s2;
        snprintf(p, sizeof p, "%s/t/%s.dat", dir, cases4[i]);
        CHECK(stat(p, &s2) == 0 && s2.st_ino == st[i].st_ino &&
              s2.st_mtim.tv_nsec == st[i].st_mtim.tv_nsec && s2.st_mtime == st[i].st_mtime);
    }
    /* sections marked alone run after the others, by themselves */
    alone_sweep(dir);
    CHECK_EQ_INT(sh("env -u OMP_NUM_THREADS bin/vla-sweep -j 4 --quiet --out %s/al %s/alone.sweep 2>/dev/null",
                    dir, dir), 0);
    snprintf(p, sizeof p, "%s/al", dir);
    alone_checks(p, 1);
    /* one worker gives the same tables as two */
    CHECK_EQ_INT(sh("bin/vla-sweep -j 1 --quiet --out %s/one %s/grid.sweep 2>/dev/null", dir, dir), 0);
    same_trees(dir, "t", "one");
    done(dir);
}

TEST_SLOW(sweep_mpi)
{
    if (!have_bins())
        return;
    if (sh("command -v mpirun >/dev/null 2>&1")) {
        vla_test_skip("mpirun not found (make deps installs openmpi-bin)");
        return;
    }
    if (sh("bin/vla-sweep --mpi /dev/null 2>&1 | grep -q 'no MPI'") == 0) {
        vla_test_skip("bin/vla-sweep was built without MPI (mpicc not found)");
        return;
    }
    char *dir = scratch();
    if (!dir)
        return;
    grid(dir);
    CHECK_EQ_INT(sh("bin/vla-sweep -j 2 --quiet --out %s/local %s/grid.sweep 2>%s/err", dir, dir,
                    dir), 0);
    /* as root Open MPI needs --allow-run-as-root; 3 ranks on fewer cores need --oversubscribe */
    const char *mpirun = "mpirun --allow-run-as-root --oversubscribe -np 3";
    int rc = sh("%s bin/vla-sweep --mpi --out %s/mpi %s/grid.sweep >%s/mpiout 2>&1", mpirun, dir,
                dir, dir);
    char p[512];
    snprintf(p, sizeof p, "%s/mpiout", dir);
    char *out = read_all(p, NULL);
    CHECK_MSG(rc == 0, "mpirun: status %d:\n%s", rc, out ? out : "");
    CHECK_MSG(out && strstr(out, "3 ranks"), "%s", out ? out : "");
    free(out);
    same_trees(dir, "local", "mpi");

    /* the GPUs: a rank's cases see CUDA_VISIBLE_DEVICES = its node-local rank modulo the GPUs
     * (here 2, said by VLA_SWEEP_GPUS), and OMP_NUM_THREADS is set */
    snprintf(p, sizeof p, "%s/env.sh", dir);
    put(p, "#!/bin/sh\n"
           "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
           "echo \"gpu=$CUDA_VISIBLE_DEVICES rank=$OMPI_COMM_WORLD_LOCAL_RANK omp=$OMP_NUM_THREADS\" "
           ">\"$out\"\n");
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/env.sweep", dir);
    char text[512];
    snprintf(text, sizeof text, "program %s/env.sh\naxis --i 1 2 3 4 5 6 7 8 9\n", dir);
    put(p, text);
    rc = sh("env -u OMP_NUM_THREADS -u CUDA_VISIBLE_DEVICES VLA_SWEEP_GPUS=2 %s bin/vla-sweep --mpi "
            "--quiet --out %s/env %s/env.sweep >/dev/null 2>&1", mpirun, dir, dir);
    CHECK_EQ_INT(rc, 0);
    int ranks_seen = 0;
    for (int i = 1; i <= 9; i++) {
        snprintf(p, sizeof p, "%s/env/env.sh-%d.dat", dir, i);
        char *e = read_all(p, NULL);
        int gpu = -1, rank = -1, omp = -1;
        CHECK_MSG(e && sscanf(e, "gpu=%d rank=%d omp=%d", &gpu, &rank, &omp) == 3, "%s: %s", p,
                  e ? e : "(none)");
        CHECK_MSG(rank >= 0 && rank < 3 && gpu == rank % 2 && omp >= 1,
                  "case %d: gpu %d, rank %d, omp %d", i, gpu, rank, omp);
        ranks_seen |= rank >= 0 && rank < 3 ? 1 << rank : 0;
        free(e);
    }
    CHECK_MSG(ranks_seen != 0, "no rank ran a case");
    alone_sweep(dir);
    CHECK_EQ_INT(sh("env -u OMP_NUM_THREADS %s bin/vla-sweep --mpi --quiet --out %s/al "
                    "%s/alone.sweep >/dev/null 2>&1", mpirun, dir, dir), 0);
    snprintf(p, sizeof p, "%s/al", dir);
    alone_checks(p, 0);
    done(dir);
}

/* A sweep killed with SIGKILL in the middle: its running case stops with it (it gets SIGTERM and
 * checkpoints), and a second run completes the rest without rewriting the finished tables; with
 * `resume`, the interrupted case continues from its checkpoint, to the bits of a fresh sweep.
 * The kill goes 0.1 s after the second table appears; a case takes 0.4 s here (100,000 steps,
 * AMD EPYC), so that even a machine several times faster has cases left to run. */
TEST_SLOW(sweep_resume)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    char p[512];
    snprintf(p, sizeof p, "%s/slow.sweep", dir);
    put(p, "program vla-statenorm\nfixed --steps 100000 --d 32\nresume\n"
           "axis --seed 1 2 3 4 5 6\nname s{seed}\n");
    pid_t pid = fork();
    if (pid == 0) {
        char out[300];
        snprintf(out, sizeof out, "%s/k", dir);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        execl(bin("vla-sweep"), bin("vla-sweep"), "-j", "1", "--out", out, p, (char *)NULL);
        _exit(127);
    }
    int have = 0;
    for (int tries = 0; tries < 2000 && have < 2; tries++) {
        usleep(10000);
        have = 0;
        for (int i = 1; i <= 6; i++) {
            char t[512];
            snprintf(t, sizeof t, "%s/k/s%d.dat", dir, i);
            have += access(t, F_OK) == 0;
        }
    }
    usleep(100000); /* into the third case, past its start */
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    CHECK_MSG(have >= 2 && have < 6, "%d tables when the sweep was killed", have);
    /* no orphan runs on: the set of tables stays what it is at the kill */
    usleep(300000);
    struct stat before[7];
    int complete = 0;
    for (int i = 1; i <= 6; i++) {
        char t[512];
        snprintf(t, sizeof t, "%s/k/s%d.dat", dir, i);
        before[i].st_ino = 0;
        if (stat(t, &before[i]) == 0)
            complete++;
    }
    usleep(1000000);
    int later = 0;
    for (int i = 1; i <= 6; i++) {
        char t[512];
        snprintf(t, sizeof t, "%s/k/s%d.dat", dir, i);
        later += access(t, F_OK) == 0;
    }
    CHECK_MSG(later == complete, "a case ran on after the sweep was killed (%d -> %d tables)",
              complete, later);
    CHECK_MSG(complete < 6, "every case had finished when the sweep was killed: nothing to resume");
    int ckpt = 0; /* the case the kill interrupted, when it got as far as a checkpoint */
    for (int i = 1; i <= 6; i++) {
        char t[512];
        snprintf(t, sizeof t, "%s/k/s%d.dat.ckpt", dir, i);
        if (access(t, F_OK) == 0)
            ckpt = i;
    }
    CHECK_EQ_INT(sh("bin/vla-sweep -j 1 --out %s/k %s 2>%s/err", dir, p, dir), 0);
    char e[512];
    snprintf(e, sizeof e, "%s/err", dir);
    char *err = read_all(e, NULL);
    char want[64];
    snprintf(want, sizeof want, "%d ran ok, %d complete before (skipped)", 6 - complete, complete);
    CHECK_MSG(err && strstr(err, want), "want '%s' in:\n%s", want, err ? err : "");
    free(err);
    for (int i = 1; i <= 6; i++) {
        char t[512];
        struct stat s2;
        snprintf(t, sizeof t, "%s/k/s%d.dat", dir, i);
        CHECK_MSG(stat(t, &s2) == 0, "no %s", t);
        if (before[i].st_ino)
            CHECK_MSG(s2.st_ino == before[i].st_ino && s2.st_mtim.tv_nsec == before[i].st_mtim.tv_nsec,
                      "s%d.dat was rewritten", i);
    }
    /* the same numbers as a sweep that was never interrupted */
    CHECK_EQ_INT(sh("bin/vla-sweep --quiet -j 2 --out %s/fresh %s 2>/dev/null", dir, p), 0);
    for (int i = 1; i <= 6; i++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/k/s%d.dat", dir, i);
        snprintf(b, sizeof b, "%s/fresh/s%d.dat", dir, i);
        char *x = numbers(a), *y = numbers(b);
        CHECK_MSG(x && y && !strcmp(x, y), "s%d: the resumed sweep's table differs", i);
        free(x);
        free(y);
    }
    snprintf(e, sizeof e, "%s/k/slow.manifest.tsv", dir);
    char *m = read_all(e, NULL);
    CHECK_MSG(m && count_lines(m, "\tok\t") == 6, "manifest after the resume:\n%s", m ? m : "");
    if (ckpt) {
        snprintf(want, sizeof want, "s%d\t%s", ckpt, bin("vla-statenorm"));
        const char *row = m ? strstr(m, want) : NULL;
        CHECK_MSG(row && strstr(row, "\tok\t") && strstr(row, "\tresumed from its checkpoints\n"),
                  "s%d had a checkpoint, its row: %s", ckpt, row ? row : "(none)");
    }
    if (getenv("VLA_TEST_VERBOSE"))
        printf("     sweep_resume: killed with %d tables, case %d checkpointed\n", complete, ckpt);
    free(m);
    done(dir);
}

TEST(sweep_failure)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    char p[512], e[512];
    snprintf(p, sizeof p, "%s/bad.sweep", dir);
    put(p, "program vla-statenorm\nfixed --steps 200 --d 8\naxis --precision f32 f99 f16@half\n"
           "name sn/{precision}\n");
    snprintf(e, sizeof e, "%s/err", dir);
    CHECK_EQ_INT(sh("bin/vla-sweep -j 2 --out %s/t %s 2>%s", dir, p, e), 1);
    char *err = read_all(e, NULL);
    char want[700];
    snprintf(want, sizeof want, "command: %s --steps 200 --d 8 --precision f99 --out",
             bin("vla-statenorm"));
    CHECK_MSG(err && strstr(err, "FAILED sn/f99: exit 2: vla-statenorm: --precision: unknown 'f99'") &&
                  strstr(err, want),
              "the failure report: %s", err ? err : "");
    CHECK_MSG(err && strstr(err, "2 ran ok, 0 complete before (skipped), 1 failed"), "%s", err);
    free(err);
    snprintf(e, sizeof e, "%s/t/sn/f32.dat", dir);
    CHECK(access(e, F_OK) == 0);
    snprintf(e, sizeof e, "%s/t/sn/half.dat", dir); /* the label names the table */
    CHECK(access(e, F_OK) == 0);
    snprintf(e, sizeof e, "%s/t/bad.manifest.tsv", dir);
    char *m = read_all(e, NULL);
    snprintf(want, sizeof want, "sn/f99\t%s --steps 200 --d 8 --precision f99 --out ",
             bin("vla-statenorm"));
    CHECK_MSG(m && strstr(m, want) &&
                  strstr(m, "\tfailed\t") && strstr(m, "\texit 2: vla-statenorm: --precision: "
                                                       "unknown 'f99'"),
              "manifest: %s", m ? m : "");
    CHECK_EQ_INT(count_lines(m, "\tok\t"), 2);
    free(m);

    /* a program that cannot be executed, and one that dies of a signal: said in words */
    char text[1024];
    snprintf(e, sizeof e, "%s/noexec", dir);
    put(e, "#!/nonexistent/sh\n");
    chmod(e, 0755);
    snprintf(e, sizeof e, "%s/segv", dir);
    put(e, "#!/bin/sh\necho about to fail >&2\nkill -SEGV $$\n");
    chmod(e, 0755);
    snprintf(text, sizeof text, "program %s/noexec\nname noexec\nprogram %s/segv\nname segv\n", dir,
             dir);
    put(p, text);
    CHECK_EQ_INT(sh("bin/vla-sweep --out %s/t3 %s 2>/dev/null", dir, p), 1);
    snprintf(e, sizeof e, "%s/t3/bad.manifest.tsv", dir);
    m = read_all(e, NULL);
    CHECK_MSG(m && strstr(m, "\tfailed\t") && strstr(m, "\texit 127: vla-sweep: cannot run ") &&
                  strstr(m, "/noexec: No such file or directory\n") &&
                  strstr(m, "\tsignal 11 (Segmentation fault): about to fail\n"),
              "manifest: %s", m ? m : "(none)");
    free(m);

    /* sweep files that are wrong: status 2 and FILE:LINE */
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"program vla-statenorm\nbogus 1\n", ":2: unknown directive 'bogus'"},
        {"fixed --steps 1\n", ":1: 'fixed' before the first program line"},
        {"program vla-statenorm\naxis --stream gauss:1 gauss_1\n",
         ":2: --stream's values 'gauss:1' and 'gauss_1' have one label"},
        {"program vla-statenorm\naxis --d 8\nname x/{model}\n", ":3: {model}: no axis --model"},
        {"program vla-statenorm\naxis --seed 1 2\nname ../{seed}\n", ":3: the case name '../1' has an empty, . or .. part"},
        {"program vla-statenorm\nfixed --out x\n", "--out is vla-sweep's to give"},
        {"program vla-nothing\n", "program vla-nothing: not found"},
        {"program vla-statenorm\naxis --d '8\n", "a quote is not closed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put(p, bad[i].text);
        snprintf(e, sizeof e, "%s/err", dir);
        CHECK_MSG(sh("bin/vla-sweep --out %s/t2 %s 2>%s", dir, p, e) == 2, "%s", bad[i].text);
        err = read_all(e, NULL);
        CHECK_MSG(err && strstr(err, bad[i].want), "want '%s', got: %s", bad[i].want, err ? err : "");
        free(err);
    }
    done(dir);
}

TEST_SLOW(sweep_slurm)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    grid(dir);
    char p[512];
    CHECK_EQ_INT(sh("bin/vla-sweep --slurm --chunk 3 --out %s/s %s/grid.sweep >%s/out 2>/dev/null",
                    dir, dir, dir), 0);
    snprintf(p, sizeof p, "%s/s/grid.sbatch", dir);
    char *s = read_all(p, NULL);
    CHECK_MSG(s && !strncmp(s, "#!/bin/bash\n", 12) && strstr(s, "\n#SBATCH --array=0-1\n"),
              "the script: %s", s ? s : "(none)");
    /* each command once, in its task's branch (cases 0-2 in task 0, case 3 in task 1) */
    const char *t1 = s ? strstr(s, "\n1)\n") : NULL;
    for (int i = 0; s && i < 4; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "'%s --steps 200 --stream lmlike --d 8 --model %s "
                                  "--precision %s --out %s/s/%s.dat'",
                 bin("vla-statenorm"), i < 2 ? "la" : "vla3", i % 2 ? "f16" : "f32", dir, cases4[i]);
        const char *at = strstr(s, cmd);
        CHECK_MSG(at && count_lines(s, cmd) == 1 && t1 && (i < 3 ? at < t1 : at > t1),
                  "case %d (%s) in the script", i, cmd);
    }
    free(s);
    /* cases that run alone get an array task each, after the others */
    alone_sweep(dir);
    CHECK_EQ_INT(sh("bin/vla-sweep --slurm --chunk 3 --out %s/sa %s/alone.sweep >/dev/null "
                    "2>/dev/null", dir, dir), 0);
    snprintf(p, sizeof p, "%s/sa/alone.sbatch", dir);
    s = read_all(p, NULL);
    const char *t2 = s ? strstr(s, "\n2)\n    case_ alone1 ") : NULL;
    CHECK_MSG(s && strstr(s, "\n#SBATCH --array=0-3\n") && strstr(s, "\n1)\n    case_ par4 ") && t2 &&
                  strstr(t2, "\n3)\n    case_ alone2 ") && !strstr(t2 + 1, "\n    case_ par"),
              "alone cases in the script: %s", s ? s : "(none)");
    free(s);
    /* the script as Slurm would run it, task by task, sbatch aside */
    for (int t = 0; t < 2; t++)
        CHECK_EQ_INT(sh("SLURM_ARRAY_TASK_ID=%d bash %s/s/grid.sbatch 2>%s/err", t, dir, dir), 0);
    CHECK_EQ_INT(sh("SLURM_ARRAY_TASK_ID=2 bash %s/s/grid.sbatch 2>/dev/null", dir), 2);
    CHECK_EQ_INT(sh("bin/vla-sweep --quiet -j 2 --out %s/local %s/grid.sweep 2>/dev/null", dir, dir), 0);
    for (int i = 0; i < 4; i++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/s/%s.dat", dir, cases4[i]);
        snprintf(b, sizeof b, "%s/local/%s.dat", dir, cases4[i]);
        char *x = numbers(a), *y = numbers(b);
        CHECK_MSG(x && y && !strcmp(x, y), "%s: the array task's table differs from the local one", a);
        free(x);
        free(y);
    }
    /* then vla-sweep collects the manifest, with the array tasks' timings */
    CHECK_EQ_INT(sh("bin/vla-sweep --out %s/s %s/grid.sweep 2>%s/err", dir, dir, dir), 0);
    snprintf(p, sizeof p, "%s/err", dir);
    char *err = read_all(p, NULL);
    CHECK_MSG(err && strstr(err, "0 ran ok, 4 complete before"), "%s", err ? err : "");
    free(err);
    snprintf(p, sizeof p, "%s/s/grid.manifest.tsv", dir);
    char *m = read_all(p, NULL);
    CHECK_MSG(m && count_lines(m, "\tok\t") == 4 && !strstr(m, "\tok\t-\t"),
              "the collected manifest: %s", m ? m : "");
    free(m);
    done(dir);
}

/* runs a shell command line in dir (so that an injected command that ran would leave its canary
 * there, not in the repository); its exit status */
static int sh_in(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh_in(const char *dir, const char *fmt, ...)
{
    char cmd[4096], repo[1024];
    if (!getcwd(repo, sizeof repo))
        return -1;
    int n = snprintf(cmd, sizeof cmd, "cd '%s' && REPO='%s' && ", dir, repo);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - n, fmt, ap);
    va_end(ap);
    return sh("%s", cmd);
}

/* Every value that reaches the Slurm script is quoted: a sweep named with $(...), backticks,
 * quotes and a %, a tree with blanks and parentheses, a value with a tab, each reaches the program
 * as it is and runs nothing else; a line break or a backslash where an #SBATCH line would carry
 * it is refused (2). A case with checkpoints resumes (--resume). The script is run task by task
 * with bash here; tests/test_slurm.sh gives the same to a real Slurm. */
TEST(sweep_slurm_quoting)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    char p[512], text[1024];
    /* a stand-in program: its table is its arguments, one a line */
    snprintf(p, sizeof p, "%s/args.sh", dir);
    put(p, "#!/bin/sh\nfor a; do [ \"$prev\" = --out ] && out=$a; prev=$a; done\n"
           "printf '%s\\n' \"$@\" >\"$out\"\n");
    chmod(p, 0755);
    const char *hostile = "x$(touch canary1)`touch canary2`'q\"%b";
    snprintf(p, sizeof p, "%s/%s.sweep", dir, hostile);
    snprintf(text, sizeof text, "program %s/args.sh\nresume\naxis --v 'a\tb' plain\nname c{1}\n", dir);
    put(p, text);
    const char *quoted = "x$(touch canary1)`touch canary2`'\\''q\"%b"; /* in '...' */
    CHECK_EQ_INT(sh_in(dir, "\"$REPO\"/bin/vla-sweep --slurm --out 'tree (1)' '%s.sweep' >out 2>err",
                       quoted), 0);
    snprintf(p, sizeof p, "%s/tree (1)/%s.sbatch", dir, hostile);
    char *s = read_all(p, NULL);
    CHECK_MSG(s && strstr(s, "\n#SBATCH --job-name=\"vla-sweep-x$(touch canary1)`touch canary2`'q\\\"%b\"\n") &&
                  strstr(s, "\n#SBATCH --output=\"tree (1)/slurm/x$(touch canary1)`touch canary2`'q\\\"%%b-\"%A_%a.log\n"),
              "the #SBATCH lines: %s", s ? s : "(none)");
    /* the comments stay comments: every line before the code starts with # */
    for (const char *l = s; l && strncmp(l, "set -u\n", 7); l = strchr(l, '\n') + 1)
        if (*l != '#') {
            CHECK_MSG(0, "a line of the script's head is not a comment: %.80s", l);
            break;
        }
    free(s);
    /* task 1 (case cplain) finds a checkpoint: it is run with --resume */
    snprintf(p, sizeof p, "%s/tree (1)/cplain.dat.ckpt", dir);
    put(p, "");
    for (int t = 0; t < 2; t++)
        CHECK_EQ_INT(sh_in(dir, "SLURM_ARRAY_TASK_ID=%d bash 'tree (1)/%s.sbatch' 2>>err", t, quoted), 0);
    snprintf(p, sizeof p, "%s/tree (1)/ca_b.dat", dir);
    char *a = read_all(p, NULL);
    CHECK_MSG(a && !strncmp(a, "--v\na\tb\n--out\n", 14), "the value with a tab arrived as: %s",
              a ? a : "(none)");
    free(a);
    snprintf(p, sizeof p, "%s/tree (1)/cplain.dat", dir);
    a = read_all(p, NULL);
    CHECK_MSG(a && strstr(a, "/cplain.dat\n--resume\n"), "the case with a checkpoint: %s", a ? a : "(none)");
    free(a);
    for (int i = 1; i <= 2; i++) {
        snprintf(p, sizeof p, "%s/canary%d", dir, i);
        CHECK_MSG(access(p, F_OK) != 0, "an injected command ran: %s exists", p);
    }
    /* refused where an #SBATCH line would carry it: a line break (the tree, the sweep's name), a
     * backslash (Slurm's --output patterns drop it); nothing is written */
    static const struct {
        const char *out, *file, *want;
    } no[] = {{"'a\ntouch canary3'", "plain.sweep", "has a line break"},
              {"'a\\b'", "plain.sweep", "has a backslash"},
              {"t", "'n\nl.sweep'", "the sweep's name 'n?l' has a line break"}};
    snprintf(p, sizeof p, "%s/plain.sweep", dir);
    snprintf(text, sizeof text, "program %s/args.sh\naxis --v 1\n", dir);
    put(p, text);
    snprintf(p, sizeof p, "%s/n\nl.sweep", dir);
    put(p, text);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        CHECK_EQ_INT(sh_in(dir, "\"$REPO\"/bin/vla-sweep --slurm --out %s %s 2>err", no[i].out, no[i].file), 2);
        snprintf(p, sizeof p, "%s/err", dir);
        char *err = read_all(p, NULL);
        CHECK_MSG(err && strstr(err, no[i].want), "want '%s': %s", no[i].want, err ? err : "");
        free(err);
    }
    snprintf(p, sizeof p, "%s/a\ntouch canary3", dir);
    CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/t", dir);
    CHECK(access(p, F_OK) != 0);
    done(dir);
}

static int is_fifo(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* What vla-sweep reads whole (the sweep file) must be a regular file of at most 1 MiB, and what
 * it renames into place (the Slurm script, the manifest) a regular file or a new path: a device, a
 * FIFO, a directory is refused (2), never waited on, never replaced. An empty --out, --script or
 * VLA_SWEEP_GPUS is a usage error, not a default. The FIFOs live in the scratch folder, so that a
 * regression replaces nothing outside it. */
TEST(sweep_special_files)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    grid(dir);
    char p[512], e[512], big[512];
    snprintf(e, sizeof e, "%s/err", dir);
    snprintf(p, sizeof p, "%s/fifo", dir);
    CHECK(mkfifo(p, 0600) == 0);
    snprintf(big, sizeof big, "%s/big.sweep", dir);
    FILE *f = fopen(big, "w");
    for (int i = 0; f && i < 40000; i++) /* 1.2 MB of comments */
        fputs("# a comment line of thirty b\n", f);
    CHECK(f && fclose(f) == 0);
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"--dry-run /dev/zero", "/dev/zero: a character device, not a regular file"},
        {"--dry-run %s/fifo", "/fifo: a FIFO, not a regular file"},
        {"--dry-run %s", ": a directory, not a regular file"},
        {"--dry-run %s/big.sweep", "larger than 1048576 bytes, the limit of a sweep file"},
        {"--slurm --script %s/fifo %s/grid.sweep", "/fifo: a FIFO, not a regular file: left as it is"},
        {"--slurm --script %s %s/grid.sweep", ": a directory, not a regular file: left as it is"},
        {"--dry-run --out '' %s/grid.sweep", "--out: an empty value"},
        {"--slurm --script '' %s/grid.sweep", "--script: an empty value"},
    };
    snprintf(p, sizeof p, "%s/nowhere", dir); /* a symlink to nothing (its target's folder is missing) */
    CHECK(symlink("missing/x", p) == 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, bad[i].args, dir, dir);
        /* timeout: a FIFO that is waited on fails the check instead of hanging the suite */
        int rc = sh("timeout 10 bin/vla-sweep %s 2>%s", args, e);
        char *err = read_all(e, NULL);
        CHECK_MSG(rc == 2 && err && strstr(err, bad[i].want), "vla-sweep %s: status %d, want '%s': %s",
                  args, rc, bad[i].want, err ? err : "");
        free(err);
    }
    snprintf(p, sizeof p, "%s/fifo", dir);
    CHECK_MSG(is_fifo(p), "the FIFO was replaced");
    struct stat st;
    /* a character device (a second /dev/null, made here), where mknod is allowed */
    snprintf(p, sizeof p, "%s/null", dir);
    if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        CHECK_EQ_INT(sh("bin/vla-sweep --slurm --script %s %s/grid.sweep 2>/dev/null", p, dir), 2);
        CHECK(lstat(p, &st) == 0 && S_ISCHR(st.st_mode));
    }
    /* a symlink at the script's name, to a regular file or to nothing: the link is replaced by
     * the script, the file it named left as it was */
    snprintf(p, sizeof p, "%s/old.sbatch", dir);
    put(p, "old\n");
    snprintf(p, sizeof p, "%s/link.sbatch", dir);
    CHECK(symlink("old.sbatch", p) == 0);
    CHECK_EQ_INT(sh("bin/vla-sweep --slurm --script %s %s/grid.sweep >/dev/null 2>&1", p, dir), 0);
    CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode));
    char *s = read_all(p, NULL);
    CHECK_MSG(s && !strncmp(s, "#!/bin/bash\n", 12), "link.sbatch: %.40s", s ? s : "(none)");
    free(s);
    snprintf(p, sizeof p, "%s/old.sbatch", dir);
    s = read_all(p, NULL);
    CHECK_MSG(s && !strcmp(s, "old\n"), "the link's target was written: %.40s", s ? s : "(none)");
    free(s);
    snprintf(p, sizeof p, "%s/nowhere", dir);
    CHECK_EQ_INT(sh("bin/vla-sweep --slurm --script %s %s/grid.sweep >/dev/null 2>&1", p, dir), 0);
    CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode));
    snprintf(p, sizeof p, "%s/missing", dir);
    CHECK_MSG(access(p, F_OK) != 0, "a folder was made for the dangling link's target");
    /* the manifest a FIFO: refused before any case runs */
    snprintf(p, sizeof p, "%s/m", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/m/grid.manifest.tsv", dir);
    CHECK(mkfifo(p, 0600) == 0);
    int rc = sh("timeout 10 bin/vla-sweep --out %s/m %s/grid.sweep 2>%s", dir, dir, e);
    char *err = read_all(e, NULL);
    CHECK_MSG(rc == 2 && err && strstr(err, "grid.manifest.tsv: a FIFO, not a regular file"),
              "a FIFO manifest: status %d: %s", rc, err ? err : "");
    free(err);
    CHECK(is_fifo(p));
    snprintf(p, sizeof p, "%s/m/statenorm-la-f32.dat", dir);
    CHECK(access(p, F_OK) != 0);
    rc = sh("VLA_SWEEP_GPUS= bin/vla-sweep --out %s/g %s/grid.sweep 2>%s", dir, dir, e);
    err = read_all(e, NULL);
    CHECK_MSG(rc == 2 && err && strstr(err, "VLA_SWEEP_GPUS='' is not a number of GPUs"),
              "VLA_SWEEP_GPUS='': status %d: %s", rc, err ? err : "");
    free(err);
    done(dir);
}

/* Two sweeps on one tree each ran every case (the same table written twice, two programs writing
 * one checkpoint): the tree is locked now. A second sweep is refused (exit 2) naming the first's
 * pid, while the first completes; once it is done the tree is free, and a sweep finds every case
 * complete. */
TEST(sweep_lock)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    char p[512], out[300], e[512], lock[400];
    snprintf(p, sizeof p, "%s/two.sweep", dir);
    put(p, "program vla-statenorm\nfixed --steps 1000000 --d 16\nresume\naxis --seed 1 2\n"
           "name s{seed}\n");
    snprintf(out, sizeof out, "%s/t", dir);
    snprintf(lock, sizeof lock, "%s/vla-sweep.lock", out);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        execl(bin("vla-sweep"), bin("vla-sweep"), "-j", "1", "--out", out, p, (char *)NULL);
        _exit(127);
    }
    char log1[400];
    snprintf(log1, sizeof log1, "%s/s1.log", out);
    for (int tries = 0; tries < 3000 && access(log1, F_OK); tries++)
        usleep(10000); /* the first case under way */
    snprintf(e, sizeof e, "%s/err", dir);
    CHECK_EQ_INT(sh("bin/vla-sweep -j 1 --out %s %s 2>%s", out, p, e), 2);
    char *err = read_all(e, NULL), want[500];
    snprintf(want, sizeof want, "another vla-sweep is running on %s (pid %ld)", out, (long)pid);
    CHECK_MSG(err && strstr(err, want), "want '%s' in: %s", want, err ? err : "");
    free(err);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the first sweep: status %d", st);
    CHECK_EQ_INT(sh("bin/vla-sweep -j 1 --out %s %s 2>%s", out, p, e), 0);
    err = read_all(e, NULL);
    CHECK_MSG(err && strstr(err, "0 ran ok, 2 complete before (skipped)"), "after: %s",
              err ? err : "");
    free(err);
    done(dir);
}

/* A sweep file's error names the line it comes from: the name template's (it cited the program
 * line), the axis whose values share a label (it cited the program line: "two cases are named"),
 * the second section's template when two sections name a case alike. */
TEST(sweep_error_lines)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"program vla-statenorm\nfixed --steps 10\naxis --d 4 8\nname s-{dd}\n",
         ":4: {dd}: no axis --dd in this section"},
        {"# a comment\nprogram vla-statenorm\n\nfixed --steps 10\naxis --stream a/b a_b\n",
         ":5: --stream's values 'a/b' and 'a_b' have one label, 'a_b'"},
        {"program vla-statenorm\naxis --d 4 8\nname s-{d}-x\nprogram vla-statenorm\naxis --d 4\n"
         "name s-{d}-x\n",
         ":6: two cases are named 's-4-x'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char p[512], e[512];
        snprintf(p, sizeof p, "%s/c%zu.sweep", dir, i);
        snprintf(e, sizeof e, "%s/err", dir);
        put(p, cases[i].text);
        CHECK_EQ_INT(sh("bin/vla-sweep --dry-run %s >/dev/null 2>%s", p, e), 2);
        char *err = read_all(e, NULL);
        CHECK_MSG(err && strstr(err, cases[i].says), "case %zu: want '%s' in: %s", i,
                  cases[i].says, err ? err : "");
        free(err);
    }
    done(dir);
}

/* A sweep file holding a NUL byte is refused (status 2, FILE:LINE), not cut at the NUL: the rest
 * of its line (here an axis: a second case) was dropped unread, and one case ran, exit 0. */
TEST(sweep_file_with_a_nul)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    char p[512], e[512];
    snprintf(p, sizeof p, "%s/nul.sweep", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    static const char text[] = "program vla-statenorm\nfixed --steps 10 --d 4\0\naxis --d 4 8\n";
    FILE *f = fopen(p, "wb");
    CHECK(f && fwrite(text, 1, sizeof text - 1, f) == sizeof text - 1 && fclose(f) == 0);
    CHECK_EQ_INT(sh("bin/vla-sweep --out %s/t %s >/dev/null 2>%s", dir, p, e), 2);
    char *err = read_all(e, NULL);
    CHECK_MSG(err && strstr(err, "nul.sweep:2: a NUL byte at byte 23 of the line"), "%s",
              err ? err : "(none)");
    free(err);
    snprintf(p, sizeof p, "%s/t", dir);
    CHECK_MSG(access(p, F_OK) != 0, "a case ran");
    done(dir);
}

/* A case's log is made anew: a symbolic link planted at its name (OUT/NAME.log) is replaced, the
 * file it names left as it was. And a case that fills the disk still says why it failed: its log
 * holds room kept before it started (here a stand-in fills a 64 kB tmpfs, then says so on
 * stderr), where the report used to say "(no error output)". The second part needs root. */
TEST(sweep_logs_links_and_full_disk)
{
    if (!have_bins())
        return;
    char *dir = scratch();
    if (!dir)
        return;
    char p[512], e[512], victim[512], text[1024];
    snprintf(p, sizeof p, "%s/fail.sh", dir);
    put(p, "#!/bin/sh\n"
           "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
           "head -c 1000000 /dev/zero >\"${out%/*}/filler\" 2>/dev/null\n"
           "echo \"stand-in: no room left for the table\" >&2\n"
           "exit 1\n");
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/f.sweep", dir);
    snprintf(text, sizeof text, "program %s/fail.sh\nname x\n", dir);
    put(p, text);
    snprintf(e, sizeof e, "%s/t", dir);
    CHECK(mkdir(e, 0755) == 0);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    put(victim, "keep me\n");
    snprintf(e, sizeof e, "%s/t/x.log", dir);
    CHECK(symlink(victim, e) == 0);
    snprintf(e, sizeof e, "%s/err", dir);
    CHECK_EQ_INT(sh("bin/vla-sweep --out %s/t %s 2>%s", dir, p, e), 1);
    char *v = read_all(victim, NULL), *err = read_all(e, NULL);
    CHECK_MSG(v && !strcmp(v, "keep me\n"), "the log was written through its link: %s", v ? v : "");
    CHECK_MSG(err && strstr(err, "FAILED x: exit 1: stand-in: no room left"), "%s", err ? err : "");
    free(v);
    free(err);
    snprintf(e, sizeof e, "%s/t/x.log", dir);
    struct stat st;
    CHECK(lstat(e, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < 100);
    /* the disk filled by the case itself */
    snprintf(e, sizeof e, "%s/full", dir);
    CHECK(mkdir(e, 0755) == 0);
    if (mount("tmpfs", e, "tmpfs", 0, "size=64k") != 0) {
        vla_test_skip("cannot mount a small tmpfs (needs root)");
        done(dir);
        return;
    }
    snprintf(e, sizeof e, "%s/err", dir);
    int rc = sh("bin/vla-sweep --out %s/full/t %s 2>%s", dir, p, e);
    err = read_all(e, NULL);
    CHECK_MSG(rc == 1 && err && strstr(err, "FAILED x: exit 1: stand-in: no room left"),
              "a full disk: status %d: %s", rc, err ? err : "");
    free(err);
    snprintf(e, sizeof e, "%s/full", dir);
    umount2(e, MNT_DETACH);
    done(dir);
}
