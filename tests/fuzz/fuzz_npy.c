/* fuzz_npy.c: libFuzzer target for the .npy reader (lib/npy.c). Each input is a whole file, put in
 * an in-memory file and read by its /proc/self/fd path, so the reader's own fopen/fseek/fread path
 * is what runs. Beyond "no crash", it checks the reader's promises (see check_* below). */
#define _GNU_SOURCE
#include "vlastab.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* a memfd per file name, reused across inputs: no disk traffic, nothing left behind */
static const char *mem_path(int *fd, char *buf, size_t len)
{
    if (*fd < 0) {
        *fd = memfd_create("fuzz", 0);
        if (*fd < 0)
            abort();
        snprintf(buf, len, "/proc/self/fd/%d", *fd);
    }
    return buf;
}

static void put(int fd, const uint8_t *data, size_t size)
{
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1, fd2 = -1;
    static char p1[64], p2[64];
    const char *path = mem_path(&fd, p1, sizeof p1);
    put(fd, data, size);

    vla_npy a;
    vla_error err;
    memset(&err, 'x', sizeof err);
    int rc = vla_npy_read(path, &a, &err);
    if (rc) {
        /* a failure: a known negative code, a one-line reason that names the file, nothing kept */
        if (rc > 0 || rc < VLA_EFORMAT || err.code != rc || !err.msg[0] ||
            strlen(err.msg) >= sizeof err.msg || strchr(err.msg, '\n') ||
            strncmp(err.msg, path, strlen(path)) || a.data || a.ndim)
            abort();
        return 0;
    }
    if (a.ndim < 0 || a.ndim > 8 || !a.data)
        abort();
    size_t n = 1;
    for (int i = 0; i < a.ndim; i++) {
        if (a.shape[i] < 0)
            abort();
        n *= (size_t)a.shape[i];
    }
    /* every value is readable (ASan sees an overrun), and a round trip through the writer gives
     * the same bits */
    volatile uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, a.data + i, 8);
        x ^= w;
    }
    const char *out = mem_path(&fd2, p2, sizeof p2);
    if (vla_npy_write(out, a.data, a.ndim, a.shape))
        abort();
    vla_npy b;
    if (vla_npy_read(out, &b, &err) || b.ndim != a.ndim ||
        memcmp(b.shape, a.shape, a.ndim * sizeof a.shape[0]) || (n && memcmp(a.data, b.data, n * 8)))
        abort();
    vla_npy_free(&b);
    vla_npy_free(&a);
    return 0;
}
