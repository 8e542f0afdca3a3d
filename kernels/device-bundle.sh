#!/bin/sh
# kernels/device-bundle.sh: what a session carries to the device machine when its image lacks the
# Debian libraries (GSL, MPFR, LAPACKE) that the full build links: the CUDA=1 test runner and the
# programs of BINS, stripped and packed with xz -9, whose window spans two binaries (the eight
# kernels' code, 25 MB, is in each: four binaries of 32 MB pack into 9 MB), and the shared
# libraries they need beyond the C and C++ runtimes. From the root of a tree built with
# `make CUDA=1` at the commit to check, into DEST (default .dev, which .git/info/exclude names):
#     sh kernels/device-bundle.sh [DEST]
# then, on the device (carry DEST; kernels/README.md, "Running on a GPU"):
#     tar xJf .dev/bins.tar.xz -C .dev && mkdir -p build/tests bin && mv .dev/run build/tests/ &&
#     mv .dev/vla-* bin/ && LD_LIBRARY_PATH=$PWD/.dev/lib VLA_PREBUILT=1
#     VLA_PYTHON=$(command -v python3) bash kernels/run_device_checks.sh
# libgomp goes to DEST/lib2, for a device that has none (a second libgomp on LD_LIBRARY_PATH would
# shadow the one Python's packages expect).
set -eu
DEST=${1:-.dev}
BINS=${BINS:-vla-bench vla-check vla-statenorm vla-forms}
FILES="build/tests/run $(for b in $BINS; do printf 'bin/%s ' "$b"; done)"
# bin/vla-bench-inline, where it was built (kernels/README.md): the kernels inlined all through
[ -x bin/vla-bench-inline ] && FILES="$FILES bin/vla-bench-inline"
for f in $FILES; do
    [ -x "$f" ] || { echo "device-bundle.sh: $f: not built (make CUDA=1 first)" >&2; exit 2; }
done
nm build/tests/run | grep -q __cudaRegisterFatBinary ||
    { echo "device-bundle.sh: build/tests/run has no CUDA kernels (make CUDA=1)" >&2; exit 2; }
rm -rf "$DEST" && mkdir -p "$DEST/lib" "$DEST/lib2" "$DEST/strip"
for f in $FILES; do strip -o "$DEST/strip/${f##*/}" "$f"; done
(cd "$DEST/strip" && XZ_OPT=-9 tar cJf ../bins.tar.xz *)
rm -rf "$DEST/strip"
ldd build/tests/run bin/vla-check | awk '$3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
        case $name in
        libc.so* | libm.so* | libstdc++* | libgcc_s* | ld-linux*) ;;
        libgomp*) cp -L "$path" "$DEST/lib2/" ;;
        *) cp -L "$path" "$DEST/lib/" ;;
        esac
    done
du -sh "$DEST"
