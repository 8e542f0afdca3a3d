/* vlacuda.cu: the GPU device of the CUDA backend: the CUDA runtime calls that host.c drives
 * through kdev.h, every one of them checked, and the fma-peak kernel. The recurrences' kernels,
 * one per policy of lib/vlalists.h, are kern.cu's objects; this file knows them by kdev.h's
 * vla_kern_<sfx> alone, so that neither recompiles when the other changes. Built with
 * --fmad=false for sm_90 plus compute_80 PTX (see the Makefile). */
#include "kdev.h"
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

/* the kernel of policy p (kern.cu) */
static const void *kern_of(vla_prec p)
{
    switch (p) {
#define VLA_X_(ID, name, sfx, ...)                                                                 \
    case VLA_##ID:                                                                                 \
        return vla_kern_##sfx();
        VLA_PRECS(VLA_X_)
#undef VLA_X_
    default:
        return NULL; /* no policy: every vla_prec is a row */
    }
}

/* on failure: a line naming the call, CUDA's reason, and where; out of memory is VLA_ENOMEM,
 * anything else a device failure (VLA_EIO) */
#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            return vla_fail(err, e_ == cudaErrorMemoryAllocation ? VLA_ENOMEM : VLA_EIO,           \
                            "%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__);  \
        }                                                                                          \
    } while (0)

typedef struct {
    int dev;
    cudaDeviceProp prop;
} cu_ctx;

static int cu_probe(vla_error *why)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        vla_fail(why, VLA_ENOTSUP, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        cudaGetLastError(); /* clear it: later calls must not report this one */
        return 0;
    }
    if (n == 0)
        vla_fail(why, VLA_ENOTSUP, "cudaGetDeviceCount found none");
    return n;
}

static int cu_open(void **ctx, int ordinal, vla_error *err)
{
    cu_ctx *c = (cu_ctx *)calloc(1, sizeof *c);
    if (!c)
        return vla_fail(err, VLA_ENOMEM, "out of host memory");
    *ctx = c;
    c->dev = ordinal;
    CK(cudaSetDevice(ordinal));
    CK(cudaGetDeviceProperties(&c->prop, ordinal));
    if (c->prop.major < 8)
        return vla_fail(err, VLA_ENOTSUP,
                        "%s has compute capability %d.%d: these kernels are built for 9.0 with "
                        "PTX for 8.0 and newer",
                        c->prop.name, c->prop.major, c->prop.minor);
    return VLA_OK;
}

static void cu_close(void *ctx) { free(ctx); }

static int cu_alloc(void *ctx, void **p, size_t bytes, const char *what, vla_error *err)
{
    (void)ctx;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaSuccess)
        return VLA_OK;
    *p = NULL;
    size_t fr = 0, tot = 0;
    cudaGetLastError();
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) /* then the sizes print as 0 */
        cudaGetLastError();
    return vla_fail(err, e == cudaErrorMemoryAllocation ? VLA_ENOMEM : VLA_EIO,
                    "cudaMalloc of %.1f MB for %s: %s (the device has %.1f MB free of %.1f MB)",
                    bytes / 1e6, what, cudaGetErrorString(e), fr / 1e6, tot / 1e6);
}

static void cu_release(void *ctx, void *p)
{
    (void)ctx;
    if (cudaFree(p) != cudaSuccess) /* nothing left to protect; the next call must not see it */
        cudaGetLastError();
}

static int cu_put(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err)
{
    (void)ctx;
    CK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return VLA_OK;
}

static int cu_get(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err)
{
    (void)ctx;
    CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return VLA_OK;
}

static size_t smem_bytes(const kparams *p)
{
    return (size_t)p->arena_len * vla_prec_num_size(p->cfg.prec);
}

static int cu_plan(void *ctx, kparams *p, vla_error *err)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int m = p->d > p->dv ? p->d : p->dv;
    p->threads = (m + 31) / 32 * 32; /* one thread per row: a warp at d <= 32 */
    size_t need = smem_bytes(p);
    if (need > c->prop.sharedMemPerBlockOptin)
        return vla_fail(err, VLA_ERANGE,
                        "d = %d, dv = %d in %s needs %.1f KB of shared memory per block; %s allows "
                        "%.1f KB",
                        p->d, p->dv, vla_prec_name(p->cfg.prec), need / 1024.0, c->prop.name,
                        c->prop.sharedMemPerBlockOptin / 1024.0);
    CK(cudaFuncSetAttribute(kern_of(p->cfg.prec), cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)need));
    return VLA_OK;
}

static int cu_launch(void *ctx, const kparams *p, vla_error *err)
{
    (void)ctx;
    void *args[] = {(void *)p}; /* the kernel's one argument, a kparams by value */
    CK(cudaLaunchKernel(kern_of(p->cfg.prec), dim3(p->runs), dim3(p->threads), args, smem_bytes(p),
                        0));
    CK(cudaDeviceSynchronize());
    return VLA_OK;
}

static int cu_resident(void *ctx, const kparams *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern_of(p->cfg.prec), p->threads,
                                                      smem_bytes(p)) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return per_sm * c->prop.multiProcessorCount;
}

static void cu_describe(void *ctx, char *buf, size_t len)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int clock_khz = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, c->dev) != cudaSuccess) {
        cudaGetLastError();
        clock_khz = 0; /* printed as 0 MHz: unknown */
    }
    snprintf(buf, len, "%s, compute capability %d.%d, %d SMs, %.0f MHz, %.0f KB shared per block",
             c->prop.name, c->prop.major, c->prop.minor, c->prop.multiProcessorCount,
             clock_khz / 1e3, c->prop.sharedMemPerBlockOptin / 1024.0);
}

/* FMA_CHAINS independent fma chains per thread keep every FP32 pipe busy */
#define FMA_CHAINS 8
#define FMA_ITERS 4096
__global__ void fma_peak_kernel(float *sink, float a, float b)
{
    float x[FMA_CHAINS];
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++)
        x[c] = threadIdx.x * 1e-3f + c;
    for (int i = 0; i < FMA_ITERS; i++)
#pragma unroll
        for (int c = 0; c < FMA_CHAINS; c++)
            x[c] = __fmaf_rn(x[c], a, b);
    float s = 0;
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++)
        s += x[c];
    if (s == 1234.5f) /* never: keeps the chains alive */
        sink[0] = s;
}

static int cu_fma_peak(void *ctx, double *flops, vla_error *err)
{
    cu_ctx *c = (cu_ctx *)ctx;
    float *sink;
    cudaEvent_t e0, e1;
    int blocks = c->prop.multiProcessorCount * 8, threads = 256;
    CK(cudaMalloc(&sink, sizeof(float)));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    fma_peak_kernel<<<blocks, threads>>>(sink, 0.999f, 1e-3f); /* warm-up: clocks up */
    CK(cudaGetLastError());
    float best = 1e30f;
    for (int rep = 0; rep < 5; rep++) {
        float ms;
        CK(cudaEventRecord(e0));
        fma_peak_kernel<<<blocks, threads>>>(sink, 0.999f, 1e-3f);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best)
            best = ms;
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(sink));
    *flops = 2.0 * FMA_CHAINS * FMA_ITERS * (double)blocks * threads / (best * 1e-3);
    return VLA_OK;
}

static const kdev_ops cu_ops = {"cuda",      cu_probe,    cu_open,   cu_close,
                                cu_alloc,    cu_release,  cu_put,    cu_get,
                                cu_plan,     cu_launch,   cu_resident, cu_describe,
                                cu_fma_peak, 0};

extern "C" const kdev_ops *vla_kdev_cuda(void) { return &cu_ops; }

#define KSTR_(x) #x
#define KSTR(x) KSTR_(x)
extern "C" const char *vla_kdev_cuda_build(void)
{
    return "CUDA kernels built with nvcc " KSTR(__CUDACC_VER_MAJOR__) "." KSTR(
        __CUDACC_VER_MINOR__) " for sm_90 + compute_80 PTX, strict (--fmad=false, _rn "
                              "intrinsics)";
}
