# vlastab: the build. `make` builds the library, the references, the programs and the
# tests; `make test` runs the tests; `make deps` installs the Debian packages (as root).
# CUDA=auto|0|1 (auto: kernels when nvcc is found). SAN=1 builds everything under
# -fsanitize=address,undefined into build-san/.
# The rules are in mk/, one file by subject, read in this order (each uses the names of those
# before it): config.mk (flags, sources), build.mk (the libraries, programs and test binary),
# fuzz.mk, kernels.mk (the CUDA backend, vla-bench), regress.mk (vla-regress and its planted
# faults), sweep.mk (vla-sweep, the Slurm test), install.mk (packaging, the install test),
# figures.mk (figures, paper, the grid test). What `make` and `make test` do is assembled here.

.DEFAULT_GOAL := all
include mk/config.mk mk/build.mk mk/fuzz.mk mk/kernels.mk mk/regress.mk mk/sweep.mk mk/install.mk \
        mk/figures.mk

.PHONY: all test test-san check conformance-long deps clean
# everything `make` builds: the libraries (static and shared), the test binary, the programs, the
# Python binding's _abi.py
all: $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(BUILD)/tests/run $(PROGS) $(BUILD)/libvlacuda.a \
     $(BIN)/vla-bench $(SHLIBS) $(ABI_PY)
	@echo "built: libvlastab, libvlaref, tests, $(words $(ALL_PROGS)) programs in $(BIN)/$(if $(OPENMP), (OpenMP),)"

# make test: the test binary, with the programs of this build (VLA_BIN_DIR: a sanitized build's are
# sanitized too), after vla-regress's planted-fault builds (regress.mk), the real Slurm
# (test-slurm, sweep.mk), the install test (test-install, install.mk: a few seconds; not under
# SAN=1, where the shared libraries need the sanitizer runtime preloaded) and the grid's agreement
# with the sweep file (test-grid, figures.mk)
test: $(BUILD)/tests/run $(ALL_PROGS) $(REGRESS_PLANTS) test-slurm $(if $(filter 1,$(SAN)),,test-install) \
      test-grid
	VLA_SHARED=$(abspath ../shared) VLA_TEST_SCALE=$(VLA_TEST_SCALE) VLA_BIN_DIR=$(BIN) VLA_PYTHON=$(PYTHON) $(BUILD)/tests/run

# the quick tier: the tests not marked TEST_SLOW (under a minute on 2 cores), for the edit-test loop
.PHONY: check
check: $(BUILD)/tests/run $(ALL_PROGS)
	VLA_SHARED=$(abspath ../shared) VLA_BIN_DIR=$(BIN) $(BUILD)/tests/run --quick

# the sanitizer pass: the library, the tests and the programs under ASan and UBSan, into
# build-san/; the horizons of the conformance tests at a quarter
test-san:
	$(MAKE) SAN=1 VLA_TEST_SCALE=0.25 test

conformance-long: $(BUILD)/tests/run
	VLA_CONFORM_LONG=100000 $(BUILD)/tests/run conform_long

deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	    build-essential libmpfr-dev libgmp-dev liblapacke-dev liblapack-dev libblas-dev \
	    libgsl-dev gnuplot-nox poppler-utils pkg-config openmpi-bin libopenmpi-dev slurm-wlm munge \
	    python3-numpy python3-torch python3-pytest python3-venv python3-pip python3-setuptools python3-wheel

clean:
	rm -rf build build-san bin $(ABI_PY)

# header and included-source dependencies written by -MMD (the GPU's objects' too, in a
# sanitized build)
-include $(sort $(shell find $(BUILD) -name '*.d' 2>/dev/null) $(wildcard $(GPU_OBJ:.o=.d)))
