/* kdev.h: the few operations host.c needs from a device that runs the kernel: a GPU through the
 * CUDA runtime (vlacuda.cu; nocuda.c when the build has no CUDA), or the emulation of the
 * kernel's blocks on host threads (emu.c); and the per-policy kernels those devices run. Each returns 0 or a vla_err code and, on failure,
 * writes the code and a one-line reason to err (vla_fail; err may be NULL). */
#ifndef VLA_KDEV_H
#define VLA_KDEV_H
#include "kabi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name; /* "cuda", "emulated" */
    /* usable devices (> 0), or 0 with the reason (code VLA_ENOTSUP) */
    int (*probe)(vla_error *why);
    /* ordinal: the GPU to use; emulation: host threads per block (0: default) */
    int (*open)(void **ctx, int ordinal, vla_error *err);
    void (*close)(void *ctx);
    int (*alloc)(void *ctx, void **p, size_t bytes, const char *what, vla_error *err);
    void (*release)(void *ctx, void *p);
    int (*put)(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err);
    int (*get)(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err);
    /* sets p->threads; fails when the arena does not fit a block's on-chip memory */
    int (*plan)(void *ctx, kparams *p, vla_error *err);
    /* runs p->runs blocks of p->steps steps and waits for them */
    int (*launch)(void *ctx, const kparams *p, vla_error *err);
    /* blocks of this shape resident at once on the whole device (0 if unknown) */
    int (*resident)(void *ctx, const kparams *p);
    void (*describe)(void *ctx, char *buf, size_t len);
    /* measured peak rate of binary32 fma, in flop/s (2 per fma), over the whole device */
    int (*fma_peak)(void *ctx, double *flops, vla_error *err);
    /* 1: the device's memory is the host's (the lanes): host.c stages the inputs in place and
     * reads the taps where the kernel wrote them, without put and get */
    int host_memory;
} kdev_ops;

/* The kernel of each policy, compiled once per row of VLA_PRECS (kpolicy.h, kdriver.h): for the
 * GPU (kern.cu: the __global__ function, for vlacuda.cu's launches), and for the emulation
 * (emu_block.c: run run's block as host thread tid of nt; its barrier is emu_sync.c's). */
#define VLA_X_(ID, name, sfx, ...)                                                                 \
    const void *vla_kern_##sfx(void);                                                              \
    void vla_emu_block_##sfx(const kparams *p, int run, void *arena, int tid, int nt);
VLA_PRECS(VLA_X_)
#undef VLA_X_
/* emu_sync.c: the emulated block's barrier; a launch of nt threads begins; this thread is tid */
void vla_emu_sync(void);
void vla_emu_sync_begin(int nt);
void vla_emu_sync_thread(int tid);

const kdev_ops *vla_kdev_cuda(void); /* vlacuda.cu, or the stub of nocuda.c */
const kdev_ops *vla_kdev_emu(void);  /* emu.c */
const kdev_ops *vla_kdev_lanes(void); /* lanes/lanes.c: the CPU's vector lanes */
/* how the CUDA part was built: "nvcc 13.0: sm_90 + compute_80 PTX, strict" or the stub's line */
const char *vla_kdev_cuda_build(void);

#ifdef __cplusplus
}
#endif
#endif
