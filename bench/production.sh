#!/bin/sh
# production.sh: make bench's production case (bench/README.md, "The production case"): a
# synthetic layer of H heads x T tokens x d (default 16 x 32768 x 128) of gdn and vla3
# (bench/production-trace.py, written under DIR, not committed), and on this machine, in one run:
#   - the references' head-steps per second: exact (MPFR, and double-double) and binary64
#     (bin/vla-bench --trace),
#     against a float64 PyTorch loop of the same recurrence (bench/torch-loop.py) on the same
#     number of threads (THREADS: OMP_NUM_THREADS and torch.set_num_threads);
#   - vla-check's wall time and peak memory (/usr/bin/time): the default table of a trace
#     without model.txt (--models all, every model of the list) on the gdn trace, and each
#     trace's one model (its model.txt: every precision and the default forms).
# Usage: bench/production.sh [H T d]   (make bench BENCH_SCALE="H T d")
# Environment: DIR (default data/bench-production), THREADS (default: the processors here),
# TORCH_STEPS (the PyTorch loop's tokens, default 2048: it runs at a constant rate per token).
set -eu
H=${1:-16}
T=${2:-32768}
D=${3:-128}
DIR=${DIR:-data/bench-production}
THREADS=${THREADS:-$(nproc)}
TORCH_STEPS=${TORCH_STEPS:-2048}
PY=${VLA_PYTHON:-/usr/bin/python3}
export OMP_NUM_THREADS=$THREADS

echo "# make bench, the production case: $H heads x $T tokens x d = $D, $THREADS threads"
echo "# CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) processors; $(date -u '+%Y-%m-%d %H:%M UTC')"
$PY bench/production-trace.py "$DIR" "$H" "$T" "$D"
for m in gdn vla3; do
    bin/vla-bench --trace "$DIR/$m" --models $m --d "$D" | sed -n '/^## /,$p'
    $PY bench/torch-loop.py "$DIR/$m" "$THREADS" "$TORCH_STEPS" --check
done
echo "## vla-check: wall time and peak memory"
for run in "gdn all --models all" "gdn its-model" "vla3 its-model"; do
    set -- $run
    m=$1 what=$2
    shift 2
    /usr/bin/time -f "vla-check trace:$m $what: %e s wall, %U s user, peak %M kB" \
        bin/vla-check "trace:$DIR/$m" "$@" --report none --out "$DIR/check-$m-$what.dat" \
        2>&1 | grep '^vla-check trace:'
done
