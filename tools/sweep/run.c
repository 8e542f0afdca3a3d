/* run.c: the runner: the output tree and its lock, the manifest, one case spawned and waited
 * for (its environment, GPU and log), the report of each case and of the sweep, the signals. */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* the room a case's log holds for its last words before the case starts (fallocate, the size
 * kept): a case that fills the disk still says why it failed, in the log the report reads */
#define LOG_RESERVE 16384

int mkdirs(const char *path) /* mkdir -p of path's folders, and of path itself if dir */
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    free(p);
    return 0;
}

/* One sweep at a time on a tree: two would each run every case, one writing over the other's
 * checkpoints. An flock on OUT/vla-sweep.lock, which holds the sweep's pid; the cases inherit it
 * (no close-on-exec), so that the cases of a sweep killed outright, which get SIGTERM and write
 * their checkpoints, hold the tree until they are gone. NULL, or why not (to free). */
char *lock_tree(const char *tree)
{
    char *path = xprintf("%s/vla-sweep.lock", tree), *why = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
    if (fd < 0) {
        why = xprintf("cannot lock %s: %s: %s", tree, path, strerror(errno));
    } else if (flock(fd, LOCK_EX | LOCK_NB)) {
        char buf[32] = "";
        ssize_t k = errno == EWOULDBLOCK ? pread(fd, buf, sizeof buf - 1, 0) : -1;
        long pid = k > 0 ? strtol(buf, NULL, 10) : 0;
        if (k < 0 && errno != EWOULDBLOCK)
            why = xprintf("cannot lock %s: %s: %s", tree, path, strerror(errno));
        else if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            why = xprintf("another vla-sweep is running on %s (pid %ld, which has exited: the "
                          "cases it started are still writing their checkpoints); try again "
                          "when they are done", tree, pid);
        else
            why = xprintf("another vla-sweep is running on %s (pid %ld); two would run every "
                          "case twice", tree, pid);
        close(fd);
    } else {
        char buf[32];
        int k = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)k, 0) != k)
            why = xprintf("cannot write %s: %s", path, strerror(errno));
        /* the descriptor stays open, and the tree locked, until the sweep and its cases end */
    }
    free(path);
    return why;
}

/* ---- the manifest ---- */

static const char *state_name(int st)
{
    return st == C_OK || st == C_COMPLETE ? "ok" : st == C_FAILED ? "failed" : "pending";
}

static void sanitize(char *m)
{
    for (; *m; m++)
        if ((unsigned char)*m < 0x20 || *m == 0x7f)
            *m = ' ';
}

/* Written to a temporary file, synced and renamed: a kill at any moment leaves the previous
 * manifest whole. -1 with *kind when the path is not a regular file (it is left as it is), else
 * with errno. */
static int write_manifest(const char *path, const sweep_t *sw, const case_t *cs, int n,
                          const char **kind)
{
    char *target, *tmp;
    *kind = NULL;
    if (vla_file_target(path, &target, kind))
        return -1;
    tmp = xprintf("%s.tmp.%ld", target, (long)getpid());
    vla_file_remove_stale(target);
    FILE *f = vla_file_create(tmp);
    if (!f) {
        free(target);
        free(tmp);
        return -1;
    }
    int counts[5] = {0};
    for (int i = 0; i < n; i++)
        counts[cs[i].state]++;
    fprintf(f, "# vla-sweep manifest of %s: %d cases, %d ok, %d failed, %d pending\n", sw->file, n,
            counts[C_OK] + counts[C_COMPLETE], counts[C_FAILED], counts[C_PENDING] + counts[C_TODO]);
    fprintf(f, "# case\tcommand\tstatus\tseconds\tmessage\n");
    for (int i = 0; i < n; i++) {
        const case_t *c = &cs[i];
        char secs[32] = "-";
        if (!isnan(c->secs) && (c->state == C_OK || c->state == C_COMPLETE || c->state == C_FAILED))
            snprintf(secs, sizeof secs, "%.3f", c->secs);
        fprintf(f, "%s\t%s\t%s\t%s\t%s\n", c->name, c->command, state_name(c->state), secs, c->msg);
    }
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || vla_file_replace(tmp, target, kind)) {
        int errnum = errno;
        unlink(tmp);
        free(target);
        free(tmp);
        errno = errnum;
        return -1;
    }
    free(target);
    free(tmp);
    return 0;
}

/* What vla-sweep writes whole and renames into place (the manifest, the Slurm script) must be a
 * regular file or new: anything else is refused before the sweep starts, and left as it is.
 * Returns where the rename lands: PATH itself (a symlink there is replaced, not followed). */
char *replaceable(const char *path)
{
    char *target;
    const char *kind;
    int e = vla_file_target(path, &target, &kind);
    if (e == VLA_EINVAL)
        die(2, "%s: %s, not a regular file: left as it is", path, kind);
    if (e)
        die(1, "out of memory");
    return target;
}

/* The seconds of cases completed before (by an earlier run, or by Slurm array tasks, which leave
 * their part in OUT/slurm/NAME.manifest-TASK.tsv) carry over into the new manifest. */
static void carry_seconds(const char *path, case_t *cs, int n)
{
    FILE *f;
    const char *kind;
    if (vla_file_read_open(path, MANIFEST_MAX_BYTES, &f, &kind)) /* a FIFO there would block */
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) >= 0 && ftell(f) <= MANIFEST_MAX_BYTES) {
        if (line[0] == '#')
            continue;
        char *fld[5] = {0};
        char *p = line;
        for (int k = 0; k < 5 && p; k++) {
            fld[k] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        if (!fld[3] || strcmp(fld[2], "ok"))
            continue;
        char *end;
        double s = strtod(fld[3], &end);
        if (end == fld[3] || !isfinite(s))
            continue;
        for (int i = 0; i < n; i++)
            if (cs[i].state == C_COMPLETE && !strcmp(cs[i].name, fld[0]))
                cs[i].secs = s;
    }
    free(line);
    fclose(f);
}

void carry_all(const sweep_t *sw, const char *out, const char *manifest, case_t *cs, int n)
{
    char *dir = xprintf("%s/slurm", out), *prefix = xprintf("%s.manifest-", sw->name);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (!strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".tsv") &&
                !strstr(e->d_name, ".tmp")) {
                char *p = xprintf("%s/%s", dir, e->d_name);
                carry_seconds(p, cs, n);
                free(p);
            }
        closedir(d);
    }
    free(dir);
    free(prefix);
    carry_seconds(manifest, cs, n); /* the sweep's own record wins */
}

/* ---- running one case ---- */

volatile sig_atomic_t stop_sig;

/* The environment of a worker's cases: its GPU and its share of the cores. Built before fork,
 * since the child of a process with threads (MPI's) may only call async-signal-safe functions. */
char **worker_env(const char *gpu, int threads)
{
    int n = 0;
    while (environ[n])
        n++;
    char **env = xmalloc((n + 3) * sizeof *env);
    int k = 0, have_omp = getenv("OMP_NUM_THREADS") != NULL;
    for (int i = 0; i < n; i++)
        if (!(gpu && !strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21)))
            env[k++] = environ[i];
    if (gpu)
        env[k++] = xprintf("CUDA_VISIBLE_DEVICES=%s", gpu);
    if (!have_omp)
        env[k++] = xprintf("OMP_NUM_THREADS=%d", threads);
    env[k] = NULL;
    return env;
}

void free_env(char **env)
{
    for (char **e = env; *e; e++) {
        int inherited = 0;
        for (char **o = environ; *o && !inherited; o++)
            inherited = *o == *e;
        if (!inherited)
            free(*e);
    }
    free(env);
}

/* The GPUs the workers share: a worker takes gpu[slot % n]. Found once (and kept: the sweep
 * needs them to its end). */
static int gpu_find(char ***ids);
int gpu_ids(char ***ids)
{
    static char **cache;
    static int n = -1;
    if (n < 0)
        n = gpu_find(&cache);
    *ids = cache;
    return n;
}

static int gpu_find(char ***ids)
{
    *ids = NULL;
    const char *e = getenv("VLA_SWEEP_GPUS");
    int n = 0;
    if (e) {
        char *end;
        long k = strtol(e, &end, 10);
        if (*end || end == e || k < 0 || k > 4096)
            die(2, "VLA_SWEEP_GPUS='%s' is not a number of GPUs", e);
        n = (int)k;
        *ids = xmalloc((n + 1) * sizeof **ids);
        for (int i = 0; i < n; i++)
            (*ids)[i] = xprintf("%d", i);
        return n;
    }
    e = getenv("CUDA_VISIBLE_DEVICES");
    if (e) { /* already narrowed (by Slurm, by the site): share those, by their names */
        if (!*e || *e == '-')
            return 0;
        char *s = xstrdup(e), *tok, *save;
        for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            *ids = xrealloc(*ids, (n + 1) * sizeof **ids);
            (*ids)[n++] = xstrdup(tok);
        }
        free(s);
        return n;
    }
    DIR *d = opendir("/dev");
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "nvidia", 6) && de->d_name[6] &&
            strspn(de->d_name + 6, "0123456789") == strlen(de->d_name + 6))
            n++;
    closedir(d);
    *ids = xmalloc((n + 1) * sizeof **ids);
    for (int i = 0; i < n; i++)
        (*ids)[i] = xprintf("%d", i);
    return n;
}

int ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* fork + exec, no shell: stdout and stderr into the case's log, stdin from /dev/null. */
pid_t spawn(const sweep_t *sw, case_t *c, char **env)
{
    const section_t *s = &sw->sec[c->sec];
    char **argv = c->argv;
    char *ckpt = xprintf("%s.ckpt", c->out);
    int resumed = s->resume && exists(ckpt);
    free(ckpt);
    if (resumed) { /* argv has room for one more */
        argv[c->argc] = "--resume";
        argv[c->argc + 1] = NULL;
    }
    if (mkdirs(c->log)) {
        snprintf(c->msg, sizeof c->msg, "cannot make the folder of %s: %s", c->log, strerror(errno));
        return -1;
    }
    sigset_t all;
    sigemptyset(&all);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &all, NULL);
        /* a sweep killed outright (SIGKILL) must not leave its cases running on: they get
         * SIGTERM, which the driver's programs answer with a checkpoint */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(126);
        int in = open("/dev/null", O_RDONLY);
        /* the log is made anew: a link planted at its name is removed, never followed */
        if (unlink(c->log) != 0 && errno != ENOENT)
            _exit(126);
        int fd = open(c->log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
        if (fd >= 0) /* where the file system cannot, the log is as it was */
            (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, LOG_RESERVE);
        if (in < 0 || fd < 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execve(sw->sec[c->sec].path, argv, env);
        /* strerror is not safe here (MPI's threads): the number, which finish() puts in words */
        char msg[64] = PROG ": cannot run the program: errno ";
        size_t l = strlen(msg);
        for (int e = errno, div = 1000; div; div /= 10)
            if (e >= div || div == 1)
                msg[l++] = (char)('0' + e / div % 10);
        msg[l++] = '\n';
        if (write(2, msg, l) < 0)
            _exit(127);
        _exit(127);
    }
    argv[c->argc] = NULL;
    if (pid < 0)
        snprintf(c->msg, sizeof c->msg, "fork: %s", strerror(errno));
    else if (resumed)
        snprintf(c->msg, sizeof c->msg, "resumed from its checkpoints");
    return pid;
}

/* the room LOG_RESERVE kept past a finished case's log given back (a truncation to its size) */
static void log_release(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, st.st_size) != 0)
        st.st_size = 0; /* then it is given back when the log is removed or rewritten */
    close(fd);
}

/* whether the file system that holds path has no room left (a log that says nothing may have
 * been unable to) */
static int log_full(const char *path)
{
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    struct statvfs v;
    int full = statvfs(slash ? (*dir ? dir : "/") : ".", &v) == 0 && v.f_bavail == 0;
    free(dir);
    return full;
}

/* a case's log opened to read, when it is still the regular file the sweep made (a FIFO or a
 * link put at its name since is not followed, nor waited on); -1 otherwise */
static int log_open(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* the last non-empty line of a log, for the report */
static void last_line(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    int fd = log_open(path);
    if (fd < 0)
        return;
    char tail[2048];
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof tail - 1 ? size - (off_t)sizeof tail + 1 : 0;
    ssize_t r = pread(fd, tail, sizeof tail - 1, from);
    close(fd);
    if (r <= 0)
        return;
    tail[r] = 0;
    /* progress lines end in \r; the last thing written after one is what counts */
    for (char *p = tail; *p; p++)
        if (*p == '\r')
            *p = '\n';
    char *end = tail + r;
    while (end > tail && (end[-1] == '\n' || end[-1] == ' '))
        *--end = 0;
    char *start = strrchr(tail, '\n');
    start = start ? start + 1 : tail;
    size_t l = strlen(start) < len ? strlen(start) : len - 1; /* a long line is cut, not an error */
    memcpy(buf, start, l);
    buf[l] = 0;
    sanitize(buf);
}

/* The summary a program said in its log ("PROG: summary: TEXT", summary.h: something found, a
 * non-finite state, a read-out exactly 0, an error past 1), "" when none: a case that ran ok
 * must not bury it in a log nobody reads. */
static void said_summary(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    int fd = log_open(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
    if (fd >= 0 && !f)
        close(fd);
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, ": summary: ");
        if (p && !strchr(p, '\r'))
            snprintf(buf, len, "%.*s", (int)strcspn(p + 11, "\n"), p + 11);
    }
    if (f)
        fclose(f);
    sanitize(buf);
}

/* The outcome of a finished case from its wait status. */
void finish(case_t *c, int status, double secs)
{
    char line[MSGLEN - 64];
    int resumed = c->msg[0] != 0;
    c->secs = secs;
    log_release(c->log);
    if (stop_sig && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        c->state = C_PENDING; /* the program saw our SIGTERM and saved its checkpoints */
        snprintf(c->msg, sizeof c->msg, "interrupted");
        return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && exists(c->out)) {
        c->state = C_OK;
        struct stat st;
        if (stat(c->log, &st) == 0 && st.st_size == 0)
            unlink(c->log);
        else
            said_summary(c->log, c->said, sizeof c->said);
        if (!resumed)
            c->msg[0] = 0;
        return;
    }
    last_line(c->log, line, sizeof line);
    c->state = stop_sig ? C_PENDING : C_FAILED;
    const char *en = strstr(line, "cannot run the program: errno ");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && en)
        snprintf(line, sizeof line, PROG ": cannot run %s: %s", c->argv[0], strerror(atoi(en + 30)));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        snprintf(c->msg, sizeof c->msg, "exit 0 but no table %s", c->out);
    else if (WIFEXITED(status))
        snprintf(c->msg, sizeof c->msg, "exit %d: %s", WEXITSTATUS(status),
                 line[0]            ? line
                 : log_full(c->log) ? "(no error output: the file system of its log is full)"
                                    : "(no error output)");
    else
        snprintf(c->msg, sizeof c->msg, "signal %d (%s): %s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), line[0] ? line : "(no error output)");
    sanitize(c->msg);
}

/* ---- reporting ---- */


void save(report_t *r, int force)
{
    /* rewriting the whole manifest at every case would be quadratic in a big sweep */
    if (!force && now() - r->last_write < 1.0)
        return;
    const char *kind;
    if (write_manifest(r->manifest, r->sw, r->cs, r->n, &kind))
        fprintf(stderr, PROG ": cannot write %s: %s%s\n", r->manifest,
                kind ? kind : strerror(errno), kind ? ", not a regular file (left as it is)" : "");
    r->last_write = now();
}

void report(report_t *r, case_t *c)
{
    r->ndone++;
    if (c->state == C_OK && !r->quiet)
        fprintf(stderr, PROG ": [%d/%d] ok %s (%.2f s)%s%s%s\n", r->ndone, r->ntodo, c->name,
                c->secs, c->msg[0] ? ", resumed" : "", c->said[0] ? "; its summary: " : "",
                c->said);
    else if (c->state == C_FAILED)
        fprintf(stderr, PROG ": [%d/%d] FAILED %s: %s\n" PROG ":     command: %s\n" PROG
                        ":     log: %s\n", r->ndone, r->ntodo, c->name, c->msg, c->command, c->log);
    save(r, 0);
}

int summary(report_t *r)
{
    int ok = 0, skipped = 0, failed = 0, pending = 0;
    for (int i = 0; i < r->n; i++) {
        int st = r->cs[i].state;
        ok += st == C_OK;
        skipped += st == C_COMPLETE;
        failed += st == C_FAILED;
        pending += st == C_PENDING || st == C_TODO;
    }
    save(r, 1);
    fprintf(stderr, PROG ": %d cases: %d ran ok, %d complete before (skipped), %d failed, %d not "
                    "run; manifest %s\n", r->n, ok, skipped, failed, pending, r->manifest);
    /* a long sweep scrolls its failures away: say them again at the end */
    int shown = 0;
    for (int i = 0; i < r->n && shown < 20; i++)
        if (r->cs[i].state == C_FAILED) {
            fprintf(stderr, PROG ": failed: %s: %s\n" PROG ":     command: %s\n", r->cs[i].name,
                    r->cs[i].msg, r->cs[i].command);
            shown++;
        }
    if (failed > shown)
        fprintf(stderr, PROG ": ... and %d more failures (see the manifest)\n", failed - shown);
    /* ... and what the cases that ran found (their tables' '# summary:' lines say it too) */
    int found = 0;
    for (int i = 0; i < r->n; i++) {
        case_t *c = &r->cs[i];
        if (c->state == C_COMPLETE && !c->said[0]) /* made before (a Slurm task): its log */
            said_summary(c->log, c->said, sizeof c->said);
    }
    for (int i = 0; i < r->n; i++)
        if ((r->cs[i].state == C_OK || r->cs[i].state == C_COMPLETE) && r->cs[i].said[0] &&
            found++ < 20)
            fprintf(stderr, PROG ": found: %s: %s\n", r->cs[i].name, r->cs[i].said);
    if (found > 20)
        fprintf(stderr, PROG ": ... and %d more cases that found something (their logs)\n",
                found - 20);
    return pending ? 3 : failed ? 1 : 0;
}

static void on_signal(int sig) { stop_sig = sig; }
static void on_child(int sig) { (void)sig; }

/* SIGINT, SIGTERM and SIGCHLD are blocked and waited for: a signal between a check and a wait
 * stays pending instead of being lost. */
void block_signals(sigset_t *set)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGCHLD);
    sigprocmask(SIG_BLOCK, set, NULL);
}

/* waits up to timeout seconds (< 0: for ever) for a child to end or a stop signal */
void wait_signal(const sigset_t *set, double timeout)
{
    siginfo_t si;
    int s;
    if (timeout < 0) {
        s = sigwaitinfo(set, &si);
    } else {
        struct timespec ts = {(time_t)timeout, (long)((timeout - (time_t)timeout) * 1e9)};
        s = sigtimedwait(set, &si, &ts);
    }
    if (s == SIGINT || s == SIGTERM)
        stop_sig = s;
}
