/* file.h: the rules for the files a program is named, written once for lib/dat.c's tables and
 * for vla-sweep and vla-regress (which link nothing of lib but this header). A file written whole
 * goes to a temporary beside it and is renamed into place, which replaces whatever is at its name:
 * only a regular file, a symbolic link, or nothing yet may be replaced. A symbolic link there is
 * replaced by the new regular file, the link itself: its target is never opened, written or
 * renamed over (a link planted at OUT.ckpt must not let a run rewrite the file it names). A file
 * read whole must be a regular file of a bounded size: a FIFO would block the reader, /dev/zero
 * would never end. A temporary is created anew (never through a link planted at its name), and
 * one that a killed run left is removed. */
#ifndef VLA_FILE_H
#define VLA_FILE_H
#include "vlastab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file size limit (ulimit -f) kills a process that writes past it with SIGXFSZ, without a word
 * and leaving its temporary; ignored, the write fails with EFBIG instead, which the program says
 * as it says a full disk. Every program that writes files calls this first. The setting is
 * inherited by what it runs (vla-sweep's cases, gnuplot), as it should be. */
static inline void vla_file_limits(void) { signal(SIGXFSZ, SIG_IGN); }

static inline const char *vla_file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISLNK(m)  ? "a symbolic link"
                         : "not a regular file";
}

/* VLA_OK when a rename onto p replaces nothing, a regular file or a symbolic link (lstat: the
 * link itself, never what it names); else VLA_EINVAL, *kind and errno (EISDIR, or ENOTSUP) */
static inline int vla_file_replaceable(const char *p, const char **kind)
{
    struct stat st;
    if (lstat(p, &st) != 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
        return VLA_OK; /* nothing there, or the rename itself will say why not */
    *kind = vla_file_kind(st.st_mode);
    errno = S_ISDIR(st.st_mode) ? EISDIR : ENOTSUP;
    return VLA_EINVAL;
}

/* Where the rename that writes PATH lands: *target (to free) is PATH itself, whatever is there
 * (a symbolic link at PATH is replaced, its target left as it is). VLA_EINVAL with *kind when
 * PATH is something a rename must not replace (a directory, a FIFO, a device). */
static inline int vla_file_target(const char *path, char **target, const char **kind)
{
    if (!(*target = strdup(path)))
        return VLA_ENOMEM;
    int e = vla_file_replaceable(*target, kind);
    if (e) {
        free(*target);
        *target = NULL;
    }
    return e;
}

/* rename(tmp, target), unless target has become something other than a regular file or a link
 * since vla_file_target said where it is (VLA_EINVAL, *kind); VLA_EIO and errno when the rename
 * fails. rename(2) replaces a link at target, never follows it. */
static inline int vla_file_replace(const char *tmp, const char *target, const char **kind)
{
    int e = vla_file_replaceable(target, kind);
    if (e)
        return e;
    return rename(tmp, target) == 0 ? VLA_OK : VLA_EIO;
}

/* A new file at path, open to write and read back, for the temporary that vla_file_replace renames
 * into place: what is at that name is removed first (a stale temporary of the same name; a
 * symlink is removed, not followed), then the file is created exclusively. NULL with errno. */
static inline FILE *vla_file_create(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT && errno != EISDIR)
        return NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w+");
    if (fd >= 0 && !f) {
        int errnum = errno;
        close(fd);
        unlink(path);
        errno = errnum;
    }
    return f;
}

/* The temporary beside target that a file written whole goes to first: TARGET.tmp.PID (malloc'd) */
static inline char *vla_file_tmp_name(const char *target)
{
    size_t n = strlen(target) + 32;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%s.tmp.%ld", target, (long)getpid());
    return tmp;
}

/* path written whole with the len bytes of data: a temporary beside it, synced and renamed into
 * place, so that a full disk or a kill leaves the old file or nothing, never half of the new one;
 * a FIFO, a device or a directory at path is refused (VLA_EINVAL, *kind), never opened. VLA_OK;
 * else VLA_EIO or VLA_ENOMEM with errno (the temporary removed). */
static inline int vla_file_write_whole(const char *path, const void *data, size_t len,
                                       const char **kind)
{
    char *target, *tmp;
    int e = vla_file_target(path, &target, kind);
    if (e)
        return e == VLA_ENOMEM ? e : VLA_EINVAL;
    if (!(tmp = vla_file_tmp_name(target))) {
        free(target);
        return VLA_ENOMEM;
    }
    FILE *f = vla_file_create(tmp);
    int ok = f && fwrite(data, 1, len, f) == len && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int errnum = errno;
    if (f && fclose(f) != 0 && ok)
        ok = 0, errnum = errno;
    e = !ok ? VLA_EIO : vla_file_replace(tmp, target, kind);
    if (ok && e)
        errnum = errno;
    if (e)
        unlink(tmp);
    free(tmp);
    free(target);
    errno = errnum;
    return e;
}

/* Removes TARGET.tmp.PID files whose process is gone: the temporaries of TARGET that a run killed
 * between writing and renaming (kill -9) left behind. A live process's is its own business. */
static inline void vla_file_remove_stale(const char *target)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dlen = slash ? (size_t)(slash - target) + 1 : 0, blen = strlen(base);
    char *dir = malloc(dlen + 2), *path = malloc(dlen + blen + 64);
    DIR *d = NULL;
    if (dir && path) {
        memcpy(dir, target, dlen);
        strcpy(dir + dlen, dlen ? "" : ".");
        d = opendir(dir);
    }
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *n = e->d_name, *p = n + blen + 5;
        if (strncmp(n, base, blen) || strncmp(n + blen, ".tmp.", 5) || !*p ||
            strspn(p, "0123456789") != strlen(p) || strlen(p) > 9)
            continue;
        long pid = strtol(p, NULL, 10);
        if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            snprintf(path, dlen + blen + 64, "%.*s%s", (int)dlen, target, n);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    free(dir);
    free(path);
}

/* PATH opened for reading when it is a regular file of at most max bytes. VLA_EINVAL with *kind
 * when it is not a regular file (a FIFO is refused, not waited on), VLA_ERANGE when it is larger,
 * VLA_EIO with errno. The reader still stops at max: the file may grow. */
static inline int vla_file_read_open(const char *path, long max, FILE **f, const char **kind)
{
    *f = NULL;
    struct stat st;
    if (stat(path, &st) != 0) /* a device is not even opened: opening some has effects */
        return VLA_EIO;
    /* O_NONBLOCK: a FIFO put there since the stat is not waited on either */
    int fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -2;
    if (fd == -1 || (fd >= 0 && fstat(fd, &st) != 0)) {
        int errnum = errno;
        if (fd >= 0)
            close(fd);
        errno = errnum;
        return VLA_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        *kind = vla_file_kind(st.st_mode);
        errno = S_ISDIR(st.st_mode) ? EISDIR : ENOTSUP;
        return VLA_EINVAL;
    }
    if (st.st_size > max) {
        close(fd);
        errno = EFBIG;
        return VLA_ERANGE;
    }
    if (!(*f = fdopen(fd, "r"))) {
        close(fd);
        return VLA_ENOMEM;
    }
    return VLA_OK;
}
#endif
