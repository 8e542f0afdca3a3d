/* emu_block.c: one policy's kernel (kpolicy.h, POL given by the build: -DPOL=f16f32) as the
 * blocks that emu.c runs on host threads; compiled once per row of VLA_PRECS, as kern.cu is for
 * the GPU. A block's thread index and count are this file's thread-local variables. */
#include "kdev.h"

static _Thread_local int k_tid, k_nt;
#define KSYNC() vla_emu_sync()
#define KTID k_tid
#define KNT k_nt
#include "kpolicy.h"
