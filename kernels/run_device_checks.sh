#!/usr/bin/env bash
# kernels/run_device_checks.sh: the GPU checks in one prepared run, for a session that
# has the device machine (H200): build with CUDA=1, run the CUDA tests (strict kernels against the
# CPU, bit for bit) and the GPU benchmark, and write everything to $OUT. From the repository root:
#     bash kernels/run_device_checks.sh          (device tool: run, timeout_s 600)
# With VLA_PREBUILT=1 the binaries come built and carried (kernels/device-bundle.sh; the device
# image lacks GSL, MPFR and LAPACKE): kernels/README.md, "Running on a GPU".
# On the H200 machine, prebuilt: 93 s in all (tests 9 s, engine and judge
# 4 s, racecheck 6 s, the GPU and CPU benchmarks 72 s). Every phase has its own time limit, so the total stays
# under 9.5 minutes and a slow phase cannot eat the others' results.
set -u
OUT=${OUT:-/tmp/vla-device-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
cd "$(dirname "$0")/.."
t0=$(date +%s)
phase() { echo; echo "=== $1 ($(($(date +%s) - t0)) s)"; }

phase "machine"
{
    nvidia-smi 2>&1
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv 2>&1
    command -v nvcc && nvcc --version
    ls /usr/local/cuda/bin/nvcc 2>&1
    gcc --version | head -1
    nproc
    grep -m1 'model name' /proc/cpuinfo
    free -g
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)

# The full build needs MPFR and LAPACKE for the references; the device image may lack them, so
# the fallback builds only what the CUDA checks need: the Makefile's lib/, kernels/ (the kernel
# once per policy, in parallel) and vla-bench, which need neither, then the test runner with
# tests/test_cuda.c alone. -Werror is dropped: a different compiler there must not turn a new
# warning into no results.
phase "build"
RUN=build/tests/run
BENCH=bin/vla-bench
# VLA_PREBUILT=1: the binaries came built (make CUDA=1 on the session's machine, carried with the
# shared libraries the device image lacks on LD_LIBRARY_PATH): nothing to build here
if [ "${VLA_PREBUILT:-0}" = 1 ]; then
    ldd "$RUN" "$BENCH" bin/vla-check | grep 'not found'
    echo "prebuilt: $RUN $BENCH"
else
MK=(make -j"$(nproc)" CUDA=1 NVCC="$NVCC" WARN="-Wall -Wextra -Wno-unused-parameter")
if ! timeout 240 "${MK[@]}" build/tests/run bin/vla-bench >"$OUT/build.txt" 2>&1; then
    tail -20 "$OUT/build.txt"
    echo "full build failed (above); building the CUDA checks alone"
    B=/tmp/vla-dev-build
    mkdir -p "$B"
    CUDA_HOME=$(dirname "$(dirname "$NVCC")")
    if ! { timeout 200 "${MK[@]}" bin/vla-bench build/tests/main.o build/tests/test_cuda.o &&
        gcc -fopenmp -o "$B/run" build/tests/main.o build/tests/test_cuda.o build/libvlacuda.a \
            build/libvlastab.a -L"$CUDA_HOME/lib64" -lcudart_static -ldl -lrt -lpthread -lstdc++ \
            -lgsl -lgslcblas -lm; } >>"$OUT/build.txt" 2>&1; then
        tail -30 "$OUT/build.txt"
        echo "fallback build failed"
        exit 1
    fi
    RUN=$B/run
fi
fi
"$BENCH" --help >/dev/null && echo "built: $RUN $BENCH"

# the CUDA tests: the GPU grid (every model, tracking, precision; d = 4, 32, 33, 64; 3 runs x 300
# steps in launches of 100), the emulation, the refusals
phase "tests"
VLA_TEST_VERBOSE=1 timeout 180 "$RUN" cuda >"$OUT/tests.txt" 2>&1
echo "tests exit $?" >>"$OUT/tests.txt"
cat "$OUT/tests.txt"

# the engine's GPU backend beside the others (every model, way, form the GPU runs; the stop flag,
# the errors) and the judge of --outputs with vlastab's own CUDA kernels as the user's kernel
# (python3 with numpy writes the kernel's .npy; bin/vla-check judges them)
phase "engine and judge"
for f in engine_ judge_outputs; do
    VLA_TEST_VERBOSE=1 timeout 100 "$RUN" $f >>"$OUT/tests_engine.txt" 2>&1
    echo "$f tests exit $?" >>"$OUT/tests_engine.txt"
done
grep -E "cuda|GPU|passed|FAIL|skip" "$OUT/tests_engine.txt" | tail -40

# one small launch per policy under compute-sanitizer's racecheck: a missing barrier in the block
# decomposition shows here even when the bits happen to agree
phase "racecheck"
if command -v compute-sanitizer >/dev/null; then
    timeout 90 compute-sanitizer --tool racecheck --racecheck-report hazard \
        "$BENCH" --gpu-only --no-peak --models vla3,delta --precs f32,f16,f64 --d 33 \
        --lat-steps 4 --max-runs 2 >"$OUT/racecheck.txt" 2>&1
    echo "racecheck exit $?" >>"$OUT/racecheck.txt"
    tail -15 "$OUT/racecheck.txt"
else
    echo "no compute-sanitizer" | tee "$OUT/racecheck.txt"
fi

# the benchmark: GPU grid (latency of one run; aggregate over every resident block x 2), then
# a short CPU line for the host's cores
phase "bench"
timeout 170 "$BENCH" --gpu-only >"$OUT/bench_gpu.txt" 2>&1
echo "bench exit $?" >>"$OUT/bench_gpu.txt"
cat "$OUT/bench_gpu.txt"
timeout 40 "$BENCH" --cpu-only --quick --models vla3 --precs f32 --d 32,128 >"$OUT/bench_cpu.txt" 2>&1
cat "$OUT/bench_cpu.txt"

# the calls' cost (kernels/karith.h: the kernels call recur.h's functions above its primitives):
# the same rows from the kernels inlined all through (make KERN_INLINE=1), where the bundle has
# them as bin/vla-bench-inline, one after the other twice
phase "calls against inlined"
if [ -x bin/vla-bench-inline ]; then
    CMP=(--gpu-only --no-peak --models vla3,gdn,delta,rwkv7 --precs f32,bf16 --d 32,128)
    for i in 1 2; do
        for b in "$BENCH" bin/vla-bench-inline; do
            echo "## $b (round $i)"
            timeout 60 "$b" "${CMP[@]}" 2>&1
        done
    done >"$OUT/bench_inline.txt"
    cat "$OUT/bench_inline.txt"
else
    echo "no bin/vla-bench-inline (kernels/README.md, Running on a GPU)" | tee "$OUT/bench_inline.txt"
fi
phase "done"
