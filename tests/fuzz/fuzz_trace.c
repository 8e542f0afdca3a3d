/* fuzz_trace.c: libFuzzer target for trace streams (vla_stream_open "trace:DIR"): the checks of six
 * .npy files against each other. Input: d, dv, a byte saying which optional files exist, then the
 * files, each starting at its "\x93NUMPY" magic (q, k, v, then u, g, beta as the byte says). */
#define _GNU_SOURCE
#include "vlastab.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void cleanup(void)
{
    static const char *names[6] = {"q.npy", "k.npy", "v.npy", "u.npy", "g.npy", "beta.npy"};
    char path[128];
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(dir, sizeof dir, "/dev/shm/vla-fuzz-trace.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    return 0;
}

static void put(const char *name, const uint8_t *p, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!p) {
        unlink(path);
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int d = data[0] % 8 + 1, dv = data[1] % 8 + 1, opt = data[2];
    static const char *names[6] = {"q.npy", "k.npy", "v.npy", "u.npy", "g.npy", "beta.npy"};
    int present[6] = {1, 1, 1, opt & 1, (opt >> 1) & 1, (opt >> 2) & 1};
    const uint8_t *p = data + 3, *end = data + size;
    for (int i = 0; i < 6; i++) {
        if (!present[i]) {
            put(names[i], NULL, 0);
            continue;
        }
        /* this file runs to the next magic, or to the end */
        const uint8_t *next = p + 1 < end ? memmem(p + 1, end - p - 1, "\x93NUMPY", 6) : NULL;
        if (!next)
            next = end;
        put(names[i], p, next - p);
        p = next;
    }
    char spec[96];
    vla_error err = {0};
    snprintf(spec, sizeof spec, "trace:%s", dir);
    vla_stream *s;
    int rc = vla_stream_open(&s, spec, d, dv, 1, &err);
    if (rc) {
        if (rc > 0 || rc < VLA_EFORMAT || s || !err.msg[0] || strchr(err.msg, '\n'))
            abort();
        return 0;
    }
    long heads = vla_stream_heads(s), T = vla_stream_length(s);
    if (heads < 1 || T < 1)
        abort();
    vla_step_buf b;
    if (vla_step_buf_alloc(&b, d, dv))
        abort();
    /* every step of every head is finite: the open promised it */
    for (long h = 0; h < heads; h++)
        for (long t = 1; t <= T; t++) {
            if (vla_stream_get(s, (uint32_t)h, t, &b))
                abort();
            for (int i = 0; i < d; i++)
                if (!isfinite(b.q[i]) || !isfinite(b.k[i]) || !isfinite(b.u[i]))
                    abort();
            for (int i = 0; i < dv; i++)
                if (!isfinite(b.v[i]) || (b.has_g && !isfinite(b.g[i])))
                    abort();
            if (!isnan(b.beta) && !isfinite(b.beta))
                abort();
        }
    if (vla_stream_get(s, (uint32_t)heads, 1, &b) != VLA_ERANGE ||
        vla_stream_get(s, 0, T + 1, &b) != VLA_ERANGE)
        abort();
    vla_step_buf_free(&b);
    vla_stream_close(s);
    return 0;
}
