/* emu_sync.c: the emulation's barrier (emu.c runs a block's threads; each policy's block,
 * emu_block.c, meets the others at vla_emu_sync), in a file of its own so that the blocks, which
 * emu.c calls, call nothing of emu.c. One launch at a time (emu.c's lock). */
#include "kdev.h"
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Thread_local int k_emu_tid, k_emu_sense;
static int k_emu_nt;
static atomic_int k_emu_count, k_emu_flag;

/* A sense-reversing barrier that spins a little, then yields: more threads than cores is the
 * normal case here. Threads of a block that stop meeting at the same barriers have diverged on
 * data that should have been identical, a race in the decomposition (on a GPU: undefined
 * behaviour, often a hang); here that is reported and the program stops, rather than hanging. */
void vla_emu_sync(void)
{
    k_emu_sense = !k_emu_sense;
    if (atomic_fetch_add(&k_emu_count, 1) == k_emu_nt - 1) {
        atomic_store(&k_emu_count, 0);
        atomic_store(&k_emu_flag, k_emu_sense);
        return;
    }
    time_t t0 = 0;
    for (long spin = 0; atomic_load(&k_emu_flag) != k_emu_sense; spin++) {
        if (spin < 64)
            continue;
        sched_yield();
        if ((spin & 1023) == 0) {
            if (!t0)
                t0 = time(NULL);
            else if (time(NULL) - t0 > 20) {
                fprintf(stderr, "emu: thread %d of %d waited 20 s at a barrier the others never "
                                "reached: the block's threads diverged (a race in the kernel's "
                                "decomposition)\n",
                        k_emu_tid, k_emu_nt);
                abort();
            }
        }
    }
}

/* a launch of nt threads starts (before any of them) */
void vla_emu_sync_begin(int nt)
{
    k_emu_nt = nt;
    atomic_store(&k_emu_count, 0);
    atomic_store(&k_emu_flag, 0);
}

/* the calling thread is thread tid of the launch's block */
void vla_emu_sync_thread(int tid)
{
    k_emu_tid = tid;
    k_emu_sense = 0;
}
