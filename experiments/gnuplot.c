/* gnuplot.c: quoting for gnuplot and running it without a shell (gnuplot.h). */
#include "gnuplot.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* a single-quoted string (a quote doubled), but for its leading quotes: gnuplot 5.4 reads three
 * quotes as an empty string and a stray quote, so each leading quote is "'" concatenated before it.
 * prefix: text the string starts with after those quotes ("./" before a pipe's name). */
static void quoted(FILE *f, const char *prefix, const char *s)
{
    for (; *s == '\''; s++)
        fputs("\"'\".", f);
    fprintf(f, "'%s", prefix);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(control((unsigned char)*s) ? '?' : *s, f);
    }
    fputc('\'', f);
}

void vla_gp_str(FILE *f, const char *s) { quoted(f, "", s); }

/* A name gnuplot reads as something else than a file: '<cmd' and '|cmd' (a shell command's
 * output or input), '$name' (a datablock of the script), '-' (the script's own inline data), '+'
 * and '++' (its pseudo-files), '' (the previous file). "./" before it names the file. */
void vla_gp_path(FILE *f, const char *path)
{
    int special = strchr("<|$", path[0]) || !strcmp(path, "-") || !strcmp(path, "+") ||
                  !strcmp(path, "++");
    quoted(f, special ? "./" : "", path);
}

int vla_gp_path_bad(const char *path, vla_error *why)
{
    for (const char *s = path; *s; s++)
        if (control((unsigned char)*s))
            return vla_fail(why, VLA_EINVAL, "it holds a control character (0x%02x at byte %d), "
                            "which no gnuplot string can name", (unsigned char)*s, (int)(s - path));
    return 0;
}

int vla_gp_png_whole(const char *path, vla_error *why)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    unsigned char head[8], tail[12];
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int errnum = errno;
        if (fd >= 0)
            close(fd);
        return vla_fail(why, VLA_EIO, "%s", strerror(errnum));
    }
    int whole = S_ISREG(st.st_mode) && st.st_size >= 20 && pread(fd, head, 8, 0) == 8 &&
                pread(fd, tail, 12, st.st_size - 12) == 12 && !memcmp(head, sig, 8) &&
                !memcmp(tail, iend, 12);
    int synced = whole && fsync(fd) == 0, errnum = errno;
    close(fd);
    if (!whole)
        return vla_fail(why, VLA_EIO, "the PNG gnuplot drew is cut short (%lld bytes, no end "
                        "chunk): the file system is full, or past its limit?",
                        (long long)st.st_size);
    if (!synced)
        return vla_fail(why, VLA_EIO, "%s", strerror(errnum));
    return 0;
}

int vla_gnuplot(const char *script, size_t len, int quiet)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[0], 0);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (quiet)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"gnuplot", NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[0]);
    if (e) {
        close(fd[1]);
        errno = e;
        return -1;
    }
    /* a gnuplot that stops reading (it failed early) must not end this program by SIGPIPE */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd[1], script + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fd[1]);
    sigaction(SIGPIPE, &old, NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(st)) {
        errno = EINTR;
        return -1;
    }
    return WEXITSTATUS(st);
}
