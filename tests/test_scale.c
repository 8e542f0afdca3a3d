/* test_scale.c: what a production layer's check costs in memory. A trace is read from its .npy
 * files a block of steps at a time (lib/stream.c), and vla-check keeps per-row statistics and a
 * ring of read-outs, so the peak memory of a check does not grow with T: a 32x longer trace may
 * cost less than one head's q in binary64 more. (Read whole, the trace cost every stream, one per
 * engine and head, its head's q, k and v: 2 engines x 2 heads x 3 x 8 MB here.) */
#include "check.h"
#include "proc.h"
#include "vlastab.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define H 2
#define D 32

static int write_trace(const char *dir, long T)
{
    static const char *names[] = {"q", "k", "v"};
    double *x = malloc(sizeof(double) * H * T * D);
    int e = !x;
    for (int f = 0; !e && f < 3; f++) {
        for (long i = 0; i < H * T * D; i++)
            x[i] = 0.5 * vla_gauss(11, (vla_var)f, 0, (uint64_t)i, 0);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.npy", dir, names[f]);
        e = vla_npy_write(path, x, 3, (long[]){H, T, D});
    }
    free(x);
    return e;
}

TEST_SLOW(check_memory_does_not_grow_with_T)
{
#ifdef __SANITIZE_ADDRESS__
    /* its quarantine keeps freed blocks (256 MB by default), so the peak is the allocator's: in
     * make test-san, 607 MB at T = 1024 and 626 MB at T = 32768 */
    vla_test_skip("AddressSanitizer's quarantine holds freed blocks: the peak is not the program's");
    return;
#endif
    const char *check;
    char dir[300];
    if (!begin(dir, sizeof dir, 1, "vla-check", &check))
        return;
    const long Ts[2] = {1024, 32768};
    long rss[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        char tdir[400], stream[420], out[420];
        snprintf(tdir, sizeof tdir, "%s/T%ld", dir, Ts[i]);
        snprintf(stream, sizeof stream, "trace:%s", tdir);
        snprintf(out, sizeof out, "%s/t%ld.dat", dir, Ts[i]);
        CHECK_MSG(!mkdir(tdir, 0755) && !write_trace(tdir, Ts[i]), "cannot write %s", tdir);
        char *argv[] = {(char *)check, stream, "--models", "gdn", "--precisions", "f32",
                        "--forms", "seq", "--report", "none", "--out", out, NULL};
        child ch;
        CHECK_MSG(!spawn(&ch, NULL, argv, NULL), "cannot start %s", check);
        int st = finish(&ch, 600);
        char *msg = read_all(ch.err, NULL);
        CHECK_MSG(st == 0, "vla-check on T = %ld: exit %d: %s", Ts[i], st, msg ? msg : "");
        free(msg);
        unlink(ch.err);
        rss[i] = ch.maxrss_kb;
    }
    /* one head's q in binary64, in kB */
    const long bound = Ts[1] * D * 8 / 1024;
    CHECK_MSG(rss[1] - rss[0] < bound,
              "peak memory %ld kB at T = %ld, %ld kB at T = %ld: it grows with T (bound %ld kB)",
              rss[1], Ts[1], rss[0], Ts[0], bound);
    printf("  peak memory: %ld kB at T = %ld, %ld kB at T = %ld\n", rss[0], Ts[0], rss[1], Ts[1]);
    remove_tree(dir);
}
