/* nocuda.c: the CUDA device of a build without CUDA (CUDA=0, or no nvcc): every operation says
 * so, and the tests that need a GPU skip with that reason. */
#include "kdev.h"
#include <stdio.h>

static const char why_none[] = "no CUDA backend in this build (built with CUDA=0, or nvcc was not "
                               "found: see the Makefile)";

static int none_probe(vla_error *why)
{
    vla_fail(why, VLA_ENOTSUP, "%s", why_none);
    return 0;
}
static int none_open(void **ctx, int ordinal, vla_error *err)
{
    (void)ordinal;
    *ctx = NULL;
    return none_probe(err), VLA_ENOTSUP;
}
static void none_close(void *ctx) { (void)ctx; }
static int none_alloc(void *ctx, void **p, size_t bytes, const char *what, vla_error *err)
{
    (void)ctx, (void)p, (void)bytes, (void)what;
    return none_probe(err), VLA_ENOTSUP;
}
static void none_release(void *ctx, void *p) { (void)ctx, (void)p; }
static int none_copy(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err)
{
    (void)ctx, (void)dst, (void)src, (void)bytes;
    return none_probe(err), VLA_ENOTSUP;
}
static int none_plan(void *ctx, kparams *p, vla_error *err)
{
    (void)ctx, (void)p;
    return none_probe(err), VLA_ENOTSUP;
}
static int none_launch(void *ctx, const kparams *p, vla_error *err)
{
    (void)ctx, (void)p;
    return none_probe(err), VLA_ENOTSUP;
}
static int none_resident(void *ctx, const kparams *p) { return (void)ctx, (void)p, 0; }
static void none_describe(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "none");
}
static int none_peak(void *ctx, double *flops, vla_error *err)
{
    (void)ctx, (void)flops;
    return none_probe(err), VLA_ENOTSUP;
}

static const kdev_ops none_ops = {"cuda",      none_probe,  none_open,     none_close,
                                  none_alloc,  none_release, none_copy,    none_copy,
                                  none_plan,   none_launch, none_resident, none_describe,
                                  none_peak,   0};

const kdev_ops *vla_kdev_cuda(void) { return &none_ops; }
const char *vla_kdev_cuda_build(void) { return why_none; }
