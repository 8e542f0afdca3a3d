/* fuzz_stream.c: libFuzzer target for the stream spec parser (vla_stream_open). Input: d, dv, a
 * seed byte, then the spec string. An accepted spec must reopen from its canonical form to the same
 * canonical form, and its first steps must be computable for a few heads. */
#include "vlastab.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    /* d and dv mostly in range, sometimes just outside it */
    int d = data[0] % 260, dv = data[1] % 260;
    uint64_t seed = data[2];
    char *spec = malloc(size - 2);
    if (!spec)
        return 0;
    memcpy(spec, data + 3, size - 3);
    spec[size - 3] = 0;

    vla_stream *s;
    vla_error err = {0};
    int rc = vla_stream_open(&s, spec, d, dv, seed, &err);
    if (rc) {
        if (rc > 0 || rc < VLA_EFORMAT || s || !err.msg[0] || strchr(err.msg, '\n'))
            abort();
        free(spec);
        return 0;
    }
    if (vla_stream_kind_of(s) != VLA_STREAM_TRACE) {
        char *canon = strdup(vla_stream_spec(s));
        vla_stream *s2;
        if (!canon || vla_stream_open(&s2, canon, d, dv, seed, &err) ||
            strcmp(vla_stream_spec(s2), canon))
            abort();
        vla_stream_close(s2);
        free(canon);
    }
    vla_step_buf b;
    if (vla_step_buf_alloc(&b, d, dv))
        abort();
    long len = vla_stream_length(s), heads = vla_stream_heads(s);
    long steps = len < 0 || len > 20 ? 20 : len;
    static const uint32_t hs[] = {0, 16, 0xffffffffu}; /* 16: the same cache slot as 0 */
    for (int i = 0; i < 3; i++) {
        if (heads >= 0 && hs[i] >= (uint64_t)heads)
            continue;
        for (long t = 1; t <= steps; t++)
            if (vla_stream_get(s, hs[i], t, &b))
                abort();
        /* steps past the end are a range error, not a read past the buffers */
        if (len >= 0 && vla_stream_get(s, hs[i], len + 1, &b) != VLA_ERANGE)
            abort();
    }
    if (vla_stream_get(s, 0, 0, &b) != VLA_ERANGE)
        abort();
    vla_step_buf_free(&b);
    vla_stream_close(s);
    free(spec);
    return 0;
}
