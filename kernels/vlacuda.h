/* vlacuda.h: the CUDA backend's C API. A vla_cuda is a batch of independent runs (heads) of one
 * configuration, each advanced on the GPU by one thread block that keeps A and S in shared
 * memory for the whole of a launch; the recurrences are lib/recur.h's, so a strict run gives the
 * CPU's bits. Inputs are prepared on the host with lib's own rounding and feature map (docs/math.md
 * section 5), staged in chunks, and copied. Without a GPU every call fails with a reason; the
 * same kernel text can also run emulated on host threads (VLA_CUDA_EMULATE), which is how the
 * tests check the block decomposition on machines without one. */
#ifndef VLACUDA_H
#define VLACUDA_H
#include "vlastab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPU: the CUDA kernels; EMULATE: their blocks on host threads (a check of the decomposition);
 * LANES: the same recurrences on the CPU's vector lanes, 16 runs per AVX-512 register (8 in
 * binary64), the fast CPU path for many runs (lanes/lanes.c), which also runs joseph and chol
 * and any d up to VLA_D_MAX */
typedef enum { VLA_CUDA_GPU, VLA_CUDA_EMULATE, VLA_CUDA_LANES } vla_cuda_target;

typedef struct {
    vla_cuda_target target;
    int device;      /* GPU ordinal (VLA_CUDA_GPU) */
    int emu_threads; /* host threads: per emulated block (0: 3); LANES: in all (0: OpenMP's) */
    /* run r's initial state S_0 at S0 + r dv d (dv x d, binary64: vla_model_start's, which cfg
     * must take: vla_config_h0); NULL: every run from S_0 = 0 */
    const double *S0;
} vla_cuda_opts;

/* The ways of tracking A the kernels (the GPU's and their emulation) are built for, a bit per
 * VLA_TRACK_<ID>: only these are compiled (lib/recur.h's VLA_TRACK_MASK), and vla_cuda_new
 * refuses the others (VLA_ENOTSUP, naming these). The lanes run every way but comp and sr. */
#define VLA_CUDA_TRACKS ((1u << VLA_TRACK_SM) | (1u << VLA_TRACK_SMSYM))

/* The largest d (and dv) whose A and S fit a block's shared memory: 128 in the 32-bit and
 * 16-bit policies, 64 in f64. */
int vla_cuda_max_d(vla_prec p);
/* The on-chip bytes a block of cfg needs (its state, inputs and workspace: a chunk or a scan
 * holds more, docs/forms.md); a GPU of compute capability 9.0 allows VLA_CUDA_SMEM_MAX. */
#define VLA_CUDA_SMEM_MAX (227L * 1024)
long vla_cuda_smem_bytes(const vla_config *cfg);

/* VLA_OK when target runs cfg at all, whatever this machine has (the ways of tracking the
 * kernels are built for, strict mode, d and shared memory; the GPU: no gated chunk form), else
 * the code with the reason in why; vla_cuda_new refuses the same with the same words. The
 * emulation runs what the GPU runs. */
int vla_cuda_supports(const vla_config *cfg, vla_cuda_target target, vla_error *why);
/* The number of usable GPUs; 0 with VLA_ENOTSUP and the reason in why (may be NULL: "no CUDA
 * backend in this build", "cudaGetDeviceCount: no CUDA-capable device is detected", ...). */
int vla_cuda_probe(vla_error *why);
/* VLA_CUDA_LANES: the runs per vector register in precision p on this processor (16, f64 8 with
 * AVX-512; 8 and 4 with AVX2; 0: no lanes). A multiple of it fills the lanes. */
int vla_cuda_lanes_width(vla_prec p);
/* 1 when target can run here, else 0 with the code and the reason in why (may be NULL; GPU:
 * vla_cuda_probe) */
int vla_cuda_probe_target(vla_cuda_target t, vla_error *why);
/* one line: how the CUDA part of this build was made */
const char *vla_cuda_build(void);

typedef struct vla_cuda vla_cuda;

/* runs independent runs of cfg from the initial state (t = 0). cfg must be strict, with A
 * tracked by sm or sm-sym (VLA_ENOTSUP otherwise) and d, dv <= vla_cuda_max_d (VLA_ERANGE).
 * opts may be NULL (GPU 0). On failure *out is NULL and err (may be NULL) holds the code and the
 * reason. */
int vla_cuda_new(vla_cuda **out, const vla_config *cfg, int runs, const vla_cuda_opts *opts,
                 vla_error *err);
void vla_cuda_free(vla_cuda *g);

/* What a step of a launch is, in is_read: a write (the default), a read of query in.q
 * (vla_model_read; nothing else of the input is used), or nothing (the run is already where the
 * launch takes the others: runs at different steps advance together). */
enum { VLA_CUDA_WRITE = 0, VLA_CUDA_READ = 1, VLA_CUDA_SKIP = 2 };

/* Prepares and copies the inputs of the next `steps` steps. in[r * steps + t] is run r's input at
 * its step t (raw binary64, as vla_model_step takes it); is_read (may be NULL: all writes) says
 * what each step is (VLA_CUDA_*). shared = 1: in and is_read hold `steps` entries that every run
 * consumes (benchmarks, one stream for many configurations). A NaN or Inf fails with
 * VLA_ENONFINITE before anything is staged. */
int vla_cuda_stage(vla_cuda *g, long steps, const vla_input *in, const unsigned char *is_read,
                   int shared);
/* What a launch records after every step (each NULL: not recorded), runs x steps x n, binary64:
 * the read-out (n = dv), the write's k' and alpha (n = d), and the number of A's entries whose
 * bits the step changed, then of its diagonal's (n = 2; 0 on a read) */
typedef struct {
    double *o, *kp, *alpha;
    long *moved;
} vla_cuda_taps;
/* Runs the staged steps on every run (again, if called again: a replay, for benchmarks),
 * recording taps (may be NULL). vla_cuda_launch(g, o): o alone. */
int vla_cuda_launch_taps(vla_cuda *g, const vla_cuda_taps *taps);
int vla_cuda_launch(vla_cuda *g, double *o);
/* stage + launch */
int vla_cuda_run(vla_cuda *g, long steps, const vla_input *in, const unsigned char *is_read,
                 double *o);

/* A quantity of run r, as vla_model_get gives it (copied back from the device); several threads
 * may ask at once (for different runs or the same). */
int vla_cuda_get(vla_cuda *g, int r, vla_quantity q, double *dst);
int vla_cuda_counts(vla_cuda *g, int r, vla_counts *out);
/* Run r's whole state as raw numbers of the policy's container, in vstate_save's order (S, A, n,
 * o, kp, alpha: kabi.h's layout) with its t (writes) and counters; *bytes in: the room at state,
 * out: the size (state NULL: only the size). set_state puts such a state back, bit for bit. */
int vla_cuda_state(vla_cuda *g, int r, long *t, vla_counts *cnt, void *state, size_t *bytes);
int vla_cuda_set_state(vla_cuda *g, int r, long t, const vla_counts *cnt, const void *state,
                       size_t bytes);
long vla_cuda_t(vla_cuda *g, int r);
/* The kernels as engine backends (vlastab.h, "engines"): the CPU's vector lanes, the GPU (the
 * spec's device), and the GPU's kernels emulated on host threads (slow; it runs the kernels'
 * own code where there is no GPU). Strict mode; cuda and emu track A by sm or sm-sym, the lanes
 * by every way but comp and sr. */
const vla_backend *vla_backend_lanes(void);
const vla_backend *vla_backend_cuda(void);
const vla_backend *vla_backend_emu(void);

/* The backends a program can name (--backend; vla-regress runs its suite on them in this order):
 * X(ID, backend), the enum constant VLA_BACKEND_<ID> and the function that gives it. What each
 * runs and where: vla_backend_supports and vla_backend_available (vlastab.h). */
#define VLA_BACKENDS(X)                                                                            \
    X(CPU, vla_backend_cpu)                                                                        \
    X(CUDA, vla_backend_cuda)                                                                      \
    X(EMU, vla_backend_emu)                                                                        \
    X(LANES, vla_backend_lanes)
#define VLA_BACKEND_ENUM_(ID, fn) VLA_BACKEND_##ID,
enum { VLA_BACKENDS(VLA_BACKEND_ENUM_) VLA_NBACKEND };
#undef VLA_BACKEND_ENUM_
/* backend i (VLA_BACKEND_<ID>; NULL outside 0 .. VLA_NBACKEND - 1), the one named name (NULL:
 * none), and their names as a list for a message, in buf ("cpu, cuda, emu or lanes") */
const vla_backend *vla_backend_at(int i);
const vla_backend *vla_backend_named(const char *name);
const char *vla_backend_names(char *buf, size_t len);

/* the last failure of g's calls: its code and reason, written where it was met (g NULL:
 * VLA_EINVAL, "no handle"). Read it with vla_error_msg. */
const vla_error *vla_cuda_error(const vla_cuda *g);
/* the device, in words ("NVIDIA H200, 132 SMs, ..."; emulated: "host threads, 3 per block") */
void vla_cuda_describe(vla_cuda *g, char *buf, size_t len);
/* blocks of this configuration resident at once on the device: the runs that fill it */
int vla_cuda_resident_runs(vla_cuda *g);
/* measured binary32 fma peak of the device, flop/s */
int vla_cuda_fma_peak(vla_cuda *g, double *flops);

#ifdef __cplusplus
}
#endif
#endif
