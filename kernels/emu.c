/* emu.c: the CUDA kernel's blocks run on host threads: the same kpolicy.h text (emu_block.c), each
 * block's threads as real threads meeting at real barriers, the arena as one shared buffer. It
 * checks the block decomposition (which loops split, where the barriers are, the padded layout)
 * on a machine without a GPU; the arithmetic is the host's, which lib/ already shares. Blocks run
 * one after another, so one launch at a time (a mutex serializes launches). */
#include "kdev.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the kernel of each policy (emu_block.c, compiled once per row) */
typedef void (*emu_block_fn)(const kparams *p, int run, void *arena, int tid, int nt);
static const emu_block_fn emu_blocks[VLA_NPREC] = {
#define VLA_X_(ID, name, sfx, ...) vla_emu_block_##sfx,
    VLA_PRECS(VLA_X_)
#undef VLA_X_
};

typedef struct {
    int threads;
} emu_ctx;

static pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;

static int emu_probe(vla_error *why)
{
    (void)why;
    return 1;
}

static int emu_open(void **ctx, int threads, vla_error *err)
{
    emu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return vla_fail(err, VLA_ENOMEM, "out of host memory");
    c->threads = threads > 0 ? threads : 3;
    *ctx = c;
    return VLA_OK;
}

static void emu_close(void *ctx) { free(ctx); }

static int emu_alloc(void *ctx, void **p, size_t bytes, const char *what, vla_error *err)
{
    (void)ctx;
    *p = calloc(1, bytes ? bytes : 1);
    if (!*p)
        return vla_fail(err, VLA_ENOMEM, "out of host memory for %s (%.1f MB)", what, bytes / 1e6);
    return VLA_OK;
}

static void emu_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int emu_copy(void *ctx, void *dst, const void *src, size_t bytes, vla_error *err)
{
    (void)ctx;
    (void)err;
    memcpy(dst, src, bytes);
    return VLA_OK;
}

static int emu_plan(void *ctx, kparams *p, vla_error *err)
{
    (void)err;
    p->threads = ((emu_ctx *)ctx)->threads;
    return VLA_OK;
}

typedef struct {
    const kparams *p;
    void *arena;
    int tid, nt;
} emu_arg;

static void *emu_thread(void *arg)
{
    emu_arg *a = arg;
    vla_emu_sync_thread(a->tid);
    for (int run = 0; run < a->p->runs; run++)
        emu_blocks[a->p->cfg.prec](a->p, run, a->arena, a->tid, a->nt);
    return NULL;
}

static int emu_launch(void *ctx, const kparams *p, vla_error *err)
{
    int nt = ((emu_ctx *)ctx)->threads, r = VLA_OK;
    size_t es = vla_prec_num_size(p->cfg.prec);
    void *arena = malloc((size_t)p->arena_len * es);
    pthread_t *th = calloc(nt, sizeof *th);
    emu_arg *args = calloc(nt, sizeof *args);
    if (!arena || !th || !args) {
        r = vla_fail(err, VLA_ENOMEM, "out of host memory");
        goto out;
    }
    /* NaN everywhere, so that reading what nothing wrote shows up as a difference */
    memset(arena, 0xff, (size_t)p->arena_len * es);
    pthread_mutex_lock(&emu_lock);
    vla_emu_sync_begin(nt);
    int started = 0;
    for (int i = 0; i < nt; i++) {
        args[i] = (emu_arg){p, arena, i, nt};
        if (pthread_create(&th[i], NULL, emu_thread, &args[i]))
            break;
        started++;
    }
    if (started < nt) { /* the others wait at a barrier that will never fill: give up loudly */
        fprintf(stderr, "emu: pthread_create failed with %d of %d threads started\n", started, nt);
        abort();
    }
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_unlock(&emu_lock);
out:
    free(arena);
    free(th);
    free(args);
    return r;
}

static int emu_resident(void *ctx, const kparams *p)
{
    (void)ctx;
    (void)p;
    return 1;
}

static void emu_describe(void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "emulated: %d host threads per block", ((emu_ctx *)ctx)->threads);
}

static int emu_fma_peak(void *ctx, double *flops, vla_error *err)
{
    (void)ctx;
    (void)flops;
    return vla_fail(err, VLA_ENOTSUP, "the emulation has no peak of its own");
}

static const kdev_ops emu_ops = {"emulated", emu_probe,  emu_open,   emu_close,
                                 emu_alloc,  emu_release, emu_copy,  emu_copy,
                                 emu_plan,   emu_launch, emu_resident, emu_describe,
                                 emu_fma_peak, 0};

const kdev_ops *vla_kdev_emu(void) { return &emu_ops; }
