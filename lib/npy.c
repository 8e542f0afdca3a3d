/* npy.c: numpy's .npy format, so that a user can replay a real model's projections (trace
 * streams) and so that results can be handed to numpy. Reads float16/32/64 (and, where a caller
 * asks, integers), little-endian, C order, header versions 1.0-3.0, into binary64; writes binary64
 * as version 1.0. Bytes are decoded explicitly as little-endian, so the code does not depend on
 * the host's byte order. */
#include "vlastab.h"
#include "file.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* err <- "PATH: reason" */
static int fail(vla_error *err, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(vla_error *err, int code, const char *path, const char *fmt, ...)
{
    if (!err)
        return code;
    char why[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return vla_fail(err, code, "%s: %s", path, why);
}

/* ---- a parser for the one Python literal numpy writes: {'descr': S, 'fortran_order': B,
 * 'shape': (N, ...), } with any spacing, either quote, keys in any order ---- */
typedef struct {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* a quoted string without escapes (numpy's keys and dtype strings have none) */
static int read_str(cursor *c, char *buf, size_t len)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= len)
            return 0;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    buf[n] = 0;
    return 1;
}

static int read_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, w, n)) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* (a, b, c) or (a,) or (): 1 ok, 0 malformed, -1 too many dimensions, -2 a size too large */
static int read_shape(cursor *c, int *ndim, long *shape)
{
    if (!eat(c, '('))
        return 0;
    *ndim = 0;
    for (;;) {
        if (eat(c, ')'))
            return 1;
        skip_ws(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return 0;
        long v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            int digit = *c->p++ - '0';
            if (v > (LONG_MAX - digit) / 10)
                return -2;
            v = 10 * v + digit;
        }
        if (c->p < c->end && *c->p == 'L') /* Python 2 longs */
            c->p++;
        if (*ndim == 8)
            return -1;
        shape[(*ndim)++] = v;
        if (eat(c, ')'))
            return *ndim == 1 ? 0 : 1; /* "(5)" is an int, not a tuple */
        if (!eat(c, ','))
            return 0;
    }
}

static uint16_t le16(const unsigned char *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static double f16_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double x;
    if (e == 0)
        x = ldexp(m, -24); /* zero and subnormals */
    else if (e == 31)
        x = m ? NAN : INFINITY;
    else
        x = ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -x : x;
}

static double f32_to_double(const unsigned char *b)
{
    uint32_t w = le32(b);
    float f;
    memcpy(&f, &w, 4);
    return f;
}

static double f64_to_double(const unsigned char *b)
{
    uint64_t w = (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32;
    double x;
    memcpy(&x, &w, 8);
    return x;
}

static int host_little_endian(void)
{
    uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* what a reader takes: floats; floats and uint16 as bfloat16's bits; integers alone */
enum { K_FLOAT, K_BF16, K_INT };

/* Parses the header dict into itemsize, ndim and shape; on failure writes the reason and returns
 * VLA_EFORMAT. */
static int parse_header(const char *h, size_t len, const char *path, int *itemsize, vla_npy *out,
                        int accept, vla_error *err)
{
    cursor c = {h, h + len};
    char key[32], descr[64];
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!eat(&c, '{'))
        return fail(err, VLA_EFORMAT, path, "header is not a dict");
    while (!eat(&c, '}')) {
        if (!read_str(&c, key, sizeof key) || !eat(&c, ':'))
            return fail(err, VLA_EFORMAT, path, "malformed header dict");
        /* a repeated key would leave sizes of the first shape beyond the second's ndim */
        if ((!strcmp(key, "descr") && have_descr) || (!strcmp(key, "fortran_order") && have_order) ||
            (!strcmp(key, "shape") && have_shape))
            return fail(err, VLA_EFORMAT, path, "header repeats key '%s'", key);
        if (!strcmp(key, "descr")) {
            if (!read_str(&c, descr, sizeof descr))
                return fail(err, VLA_EFORMAT, path,
                            "unsupported dtype (not a simple type string)");
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (read_word(&c, "True"))
                return fail(err, VLA_EFORMAT, path,
                            "fortran_order True is not supported (C order only)");
            if (!read_word(&c, "False"))
                return fail(err, VLA_EFORMAT, path, "fortran_order is not True or False");
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            int r = read_shape(&c, &out->ndim, out->shape);
            if (r == -1)
                return fail(err, VLA_EFORMAT, path, "more than 8 dimensions");
            if (r == -2)
                return fail(err, VLA_EFORMAT, path, "a dimension is too large");
            if (r == 0)
                return fail(err, VLA_EFORMAT, path, "shape is not a tuple of sizes");
            have_shape = 1;
        } else {
            return fail(err, VLA_EFORMAT, path, "unexpected header key '%s'", key);
        }
        if (!eat(&c, ',')) {
            if (!eat(&c, '}'))
                return fail(err, VLA_EFORMAT, path, "malformed header dict");
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return fail(err, VLA_EFORMAT, path, "header lacks '%s'",
                    !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");

    char order = descr[0];
    const char *type = descr + 1;
    if (order == '>')
        return fail(err, VLA_EFORMAT, path,
                    "big-endian data ('%s') is not supported", descr);
    if (order != '<' && order != '=' && order != '|')
        return fail(err, VLA_EFORMAT, path, "unsupported dtype '%s'", descr);
    if (order != '<' && !host_little_endian()) /* native order means big-endian here */
        return fail(err, VLA_EFORMAT, path,
                    "native-order data ('%s') on a big-endian host", descr);
    if (accept == K_INT) { /* numpy's integers: i1 .. i8, u1 .. u8 */
        if ((type[0] != 'i' && type[0] != 'u') || !strchr("1248", type[1]) || !type[1] ||
            type[2] || (order == '|' && type[1] != '1'))
            return fail(err, VLA_EFORMAT, path, "unsupported dtype '%s' (integers only: int8 to "
                        "int64, uint8 to uint64)", descr);
        *itemsize = type[1] - '0';
    } else if (!strcmp(type, "f2"))
        *itemsize = 2;
    else if (!strcmp(type, "f4"))
        *itemsize = 4;
    else if (!strcmp(type, "f8"))
        *itemsize = 8;
    else if (accept == K_BF16 && !strcmp(type, "u2") && order != '|')
        *itemsize = 2;
    else
        return fail(err, VLA_EFORMAT, path, "unsupported dtype '%s' (float16, float32, "
                    "float64%s only)", descr,
                    accept == K_BF16 ? ", uint16 holding bfloat16" : "");
    memcpy(out->dtype, type, 3);
    return 0;
}

/* bfloat16's bits are binary32's upper half */
static double bf16_to_double(uint16_t h)
{
    unsigned char b[4] = {0, 0, (unsigned char)(h & 0xff), (unsigned char)(h >> 8)};
    return f32_to_double(b);
}

static int read_part(const char *path, vla_npy *out, long h0, long nh, long steps, long *full,
                     int accept, int lazy, vla_error *err);

int vla_npy_read(const char *path, vla_npy *out, vla_error *err)
{
    return read_part(path, out, 0, -1, -1, NULL, K_FLOAT, 0, err);
}

int vla_npy_read_bf16(const char *path, vla_npy *out, vla_error *err)
{
    return read_part(path, out, 0, -1, -1, NULL, K_BF16, 0, err);
}

int vla_npy_open_bf16(const char *path, vla_npy *out, vla_error *err)
{
    return read_part(path, out, 0, -1, -1, NULL, K_BF16, 1, err);
}

int vla_npy_read_int(const char *path, vla_npy *out, vla_error *err)
{
    return read_part(path, out, 0, -1, -1, NULL, K_INT, 0, err);
}

int vla_npy_read_part(const char *path, vla_npy *out, long h0, long nh, long steps, long *full,
                      vla_error *err)
{
    return read_part(path, out, h0, nh, steps, full, K_FLOAT, 0, err);
}

int vla_npy_open_part(const char *path, vla_npy *out, long h0, long nh, long steps, long *full,
                      vla_error *err)
{
    return read_part(path, out, h0, nh, steps, full, K_FLOAT, 1, err);
}

/* a little-endian integer of n bytes, signed or not, as binary64 (exact below 2^53 in
 * magnitude: a position or a count, never a number that large) */
static double int_to_double(const unsigned char *b, int n, int is_signed)
{
    uint64_t w = 0;
    for (int i = n - 1; i >= 0; i--)
        w = w << 8 | b[i];
    if (is_signed && n < 8 && (w >> (8 * n - 1)) & 1)
        w |= ~(uint64_t)0 << (8 * n); /* sign-extended */
    return is_signed ? (double)(int64_t)w : (double)w;
}

/* m items of the file at f's position, converted into x (chunk: 64 KiB of scratch); ints: the
 * dtype is an integer's (i1 .. u8) */
static int read_items(FILE *f, size_t m, int itemsize, const char *dtype, int ints,
                      unsigned char *chunk, double *x)
{
    size_t per = (1 << 16) / itemsize;
    for (size_t i = 0; i < m; i += per) {
        size_t k = m - i < per ? m - i : per;
        if (fread(chunk, itemsize, k, f) != k)
            return 1;
        for (size_t j = 0; j < k; j++) {
            const unsigned char *b = chunk + j * itemsize;
            x[i + j] = ints ? int_to_double(b, itemsize, dtype[0] == 'i')
                       : itemsize == 2 ? (dtype[0] == 'u' ? bf16_to_double(le16(b))
                                                        : f16_to_double(le16(b)))
                       : itemsize == 4 ? f32_to_double(b)
                                       : f64_to_double(b);
        }
    }
    return 0;
}

int vla_npy_read_steps(const vla_npy *a, long h, long t, long n, double *dst, vla_error *err)
{
    if (!a->path || h < 0 || h >= a->shape[0] || t < 0 || n < 0 || t + n > a->shape[1])
        return fail(err, VLA_EINVAL, a->path ? a->path : "(not open)",
                    "no steps %ld..%ld of head %ld", t, t + n - 1, h);
    FILE *f;
    const char *kind;
    if (vla_file_read_open(a->path, LONG_MAX, &f, &kind))
        return fail(err, VLA_EIO, a->path, "cannot open: %s", strerror(errno));
    unsigned char *chunk = malloc(1 << 16);
    size_t at = ((size_t)(a->h0 + h) * (size_t)a->fileT + (size_t)t) * a->inner;
    int rc = 0;
    if (!chunk)
        rc = fail(err, VLA_ENOMEM, a->path, "out of memory");
    else if (fseek(f, (long)(a->off + at * a->itemsize), SEEK_SET) != 0)
        rc = fail(err, VLA_EIO, a->path, "cannot seek: %s", strerror(errno));
    else if (read_items(f, (size_t)n * a->inner, a->itemsize, a->dtype, 0, chunk, dst))
        rc = fail(err, VLA_EFORMAT, a->path, "truncated data (changed since it was opened?)");
    fclose(f);
    free(chunk);
    return rc;
}

/* the header of the .npy file f (its magic, version, and the header's text, in *hdr, to free):
 * *hlen the text's length, *hoff where it starts. 0, or the error */
static int read_header(FILE *f, const char *path, char **hdr, size_t *hlen, size_t *hoff,
                       vla_error *err)
{
    unsigned char pre[12];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6))
        return fail(err, VLA_EFORMAT, path, "not a .npy file (bad magic)");
    int major = pre[6];
    if (major == 1) {
        if (fread(pre + 8, 1, 2, f) != 2)
            return fail(err, VLA_EFORMAT, path, "truncated header");
        *hlen = le16(pre + 8);
        *hoff = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 8, 1, 4, f) != 4)
            return fail(err, VLA_EFORMAT, path, "truncated header");
        *hlen = le32(pre + 8);
        *hoff = 12;
    } else {
        return fail(err, VLA_EFORMAT, path, "unsupported format version %d.%d", major, pre[7]);
    }
    if (*hlen > (1u << 24)) /* numpy itself refuses headers this long */
        return fail(err, VLA_EFORMAT, path, "header of %zu bytes is implausibly long", *hlen);
    if (!(*hdr = malloc(*hlen + 1)))
        return fail(err, VLA_ENOMEM, path, "out of memory");
    if (fread(*hdr, 1, *hlen, f) != *hlen)
        return fail(err, VLA_EFORMAT, path, "truncated header");
    (*hdr)[*hlen] = 0;
    return 0;
}

/* the element count of shape's ndim dimensions into *n, refusing any product that overflows what
 * can be allocated: 0, or the error */
static int count_elements(const vla_npy *a, const char *path, size_t *n, vla_error *err)
{
    *n = 1;
    for (int i = 0; i < a->ndim; i++) {
        size_t s = (size_t)a->shape[i];
        if (s && *n > (SIZE_MAX / sizeof(double)) / s)
            return fail(err, VLA_EFORMAT, path, "shape too large (its size overflows)");
        *n *= s;
    }
    if (*n > (size_t)LONG_MAX)
        return fail(err, VLA_EFORMAT, path, "shape too large (its size overflows)");
    return 0;
}

/* the data's size (need bytes from off) against the file's, before allocating, so that a tiny
 * file claiming a huge shape is a format error and not an allocation failure; f left at off.
 * 0, or the error */
static int check_size(FILE *f, const char *path, size_t off, size_t need, vla_error *err)
{
    if (fseek(f, 0, SEEK_END) != 0)
        return 0;
    long size = ftell(f);
    size_t have = size > (long)off ? (size_t)size - off : 0;
    if (size >= 0 && have < need)
        return fail(err, VLA_EFORMAT, path, "truncated data: %zu bytes expected, %zu present",
                    need, have);
    if (size >= 0 && have > need) /* np.save writes nothing after the data */
        return fail(err, VLA_EFORMAT, path,
                    "%zu bytes after the data (%zu bytes expected, %zu present): a .npy file is "
                    "its header and its data, nothing after", have - need, need, have);
    if (fseek(f, (long)off, SEEK_SET) != 0)
        return fail(err, VLA_EIO, path, "cannot seek: %s", strerror(errno));
    return 0;
}

static int read_part(const char *path, vla_npy *out, long h0, long nh, long steps, long *full,
                     int accept, int lazy, vla_error *err)
{
    if (!path || !out)
        return fail(err, VLA_EINVAL, path ? path : "(null)", "no path or no output");
    memset(out, 0, sizeof *out);
    /* a regular file only: a FIFO would block the reader, a device would never end */
    FILE *f;
    const char *kind;
    int e = vla_file_read_open(path, LONG_MAX, &f, &kind);
    if (e == VLA_EINVAL)
        return fail(err, VLA_EFORMAT, path, "%s, not a .npy file", kind);
    if (e)
        return fail(err, VLA_EIO, path, "cannot open: %s", strerror(errno));

    char *hdr = NULL;
    unsigned char *chunk = NULL;
    size_t hlen = 0, hoff = 0, n;
    int itemsize = 8;
    int rc = read_header(f, path, &hdr, &hlen, &hoff, err);
    if (rc || (rc = parse_header(hdr, hlen, path, &itemsize, out, accept, err)))
        goto done;
    if (full)
        memcpy(full, out->shape, sizeof out->shape);
    if ((rc = count_elements(out, path, &n, err)))
        goto done;
    size_t need = n * itemsize;
    if ((rc = check_size(f, path, hoff + hlen, need, err)))
        goto done;
    /* the part: rows h0 .. h0 + nh - 1 of the first axis, the first `steps` of the second, each
     * row's part contiguous in the file (C order); the whole file when there is no part */
    long H = out->ndim >= 2 ? out->shape[0] : 1, T = out->ndim >= 2 ? out->shape[1] : (long)n;
    size_t inner = out->ndim >= 2 && H && T ? n / (size_t)H / (size_t)T : 1;
    if (out->ndim < 2)
        h0 = 0, nh = 1, steps = T;
    if (nh < 0 || h0 + nh > H)
        nh = h0 < H ? H - h0 : 0;
    if (steps < 0 || steps > T)
        steps = T;
    if (out->ndim >= 2) {
        out->shape[0] = nh;
        out->shape[1] = steps;
    }
    const size_t row = (size_t)steps * inner, m_all = (size_t)nh * row;
    if (lazy) { /* read later, by vla_npy_read_steps */
        out->path = strdup(path);
        out->off = (long)(hoff + hlen);
        out->itemsize = itemsize;
        out->fileT = T;
        out->inner = inner;
        out->h0 = h0;
        if (!out->path)
            rc = fail(err, VLA_ENOMEM, path, "out of memory");
        goto done;
    }
    out->data = malloc(m_all ? m_all * sizeof(double) : 1);
    chunk = malloc(1 << 16);
    if (!out->data || !chunk) {
        rc = fail(err, VLA_ENOMEM, path, "out of memory for %zu values", m_all);
        goto done;
    }
    for (long h = 0; h < nh && row; h++) {
        size_t at = (size_t)(h0 + h) * (size_t)T * inner; /* the row's first element */
        if (fseek(f, (long)(hoff + hlen + at * itemsize), SEEK_SET) != 0) {
            rc = fail(err, VLA_EIO, path, "cannot seek: %s", strerror(errno));
            goto done;
        }
        if (read_items(f, row, itemsize, out->dtype, accept == K_INT, chunk,
                       out->data + (size_t)h * row)) {
            rc = fail(err, VLA_EFORMAT, path, "truncated data: %zu bytes expected", need);
            goto done;
        }
    }
done:
    fclose(f);
    free(hdr);
    free(chunk);
    if (rc)
        vla_npy_free(out);
    return rc;
}

int vla_npy_write(const char *path, const double *data, int ndim, const long *shape)
{
    if (!path || ndim < 0 || ndim > 8 || (ndim && !shape))
        return VLA_EINVAL;
    size_t n = 1;
    char dims[8 * 22 + 4];
    int len = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return VLA_EINVAL;
        if (shape[i] && n > (SIZE_MAX / 8) / (size_t)shape[i])
            return VLA_ERANGE;
        n *= (size_t)shape[i];
        len += snprintf(dims + len, sizeof dims - len, i ? " %ld," : "%ld,", shape[i]);
    }
    if (ndim > 1)
        len--; /* numpy writes "(5,)" but "(4, 3)" */
    dims[len] = 0;
    if (n && !data)
        return VLA_EINVAL;

    char hdr[512];
    int h = snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }",
                     dims);
    int total = (10 + h + 1 + 63) / 64 * 64; /* magic, header, newline: a multiple of 64 */
    int pad = total - 10 - h - 1;
    memset(hdr + h, ' ', pad);
    hdr[h + pad] = '\n';
    int hlen = h + pad + 1;

    /* written whole by lib/file.h's rules: a temporary beside path, synced and renamed, so a
     * symbolic link at path is replaced, never written through, and a failure leaves no half */
    char *target = NULL, *tmp = NULL;
    const char *kind;
    int e = vla_file_target(path, &target, &kind);
    if (e)
        return e == VLA_ENOMEM ? e : VLA_EIO;
    FILE *f = (tmp = vla_file_tmp_name(target)) ? vla_file_create(tmp) : NULL;
    if (!f) {
        free(target);
        free(tmp);
        return tmp ? VLA_EIO : VLA_ENOMEM;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, hlen & 255, hlen >> 8};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, hlen, f) == (size_t)hlen;
    unsigned char buf[8 * 512];
    for (size_t i = 0; ok && i < n; i += 512) {
        size_t m = n - i < 512 ? n - i : 512;
        for (size_t j = 0; j < m; j++) {
            uint64_t w;
            memcpy(&w, data + i + j, 8);
            for (int b = 0; b < 8; b++)
                buf[8 * j + b] = (unsigned char)(w >> 8 * b);
        }
        ok = fwrite(buf, 8, m, f) == m;
    }
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int errnum = errno;
    if (fclose(f) != 0 && ok)
        ok = 0, errnum = errno;
    if (ok && vla_file_replace(tmp, target, &kind) != 0)
        ok = 0, errnum = errno;
    if (!ok)
        unlink(tmp);
    free(target);
    free(tmp);
    errno = errnum;
    return ok ? 0 : VLA_EIO;
}

void vla_npy_free(vla_npy *a)
{
    if (!a)
        return;
    free(a->data);
    free(a->path);
    memset(a, 0, sizeof *a);
}
