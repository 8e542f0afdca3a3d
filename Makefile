# vlastab: the one build file. `make` builds the library, the references, the programs and the
# tests; `make test` runs the tests; `make deps` installs the Debian packages (as root).
# CUDA=auto|0|1 (auto: kernels when nvcc is found). SAN=1 builds everything under
# -fsanitize=address,undefined into build-san/.

CC       ?= cc
SAN      ?= 0
CUDA     ?= auto
BUILD    := $(if $(filter 1,$(SAN)),build-san,build)
# strict arithmetic: no contraction into fma, binary16 expressions rounded per operation
FPFLAGS  := -ffp-contract=off -fexcess-precision=standard
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
ALLCFLAGS = -MMD -MP -std=gnu11 $(WARN) $(FPFLAGS) -fPIC $(INC) -DVLA_GIT='"$(GIT)"' $(CFLAGS)
# include paths by folder: a room sees the headers of the rooms it builds on, and no others
INC_lib         := -Ilib
INC_reference   := -Ilib -Ireference
INC_kernels     := -Ilib -Ikernels
INC_experiments := -Ilib -Ireference -Ikernels -Iexperiments
INC_tools       := -Ilib -Ireference -Ikernels -Iexperiments
INC_bench       := -Ilib -Ireference -Ikernels -Iexperiments
INC_tests       := -Ilib -Ireference -Ikernels -Iexperiments -Itests -Itools/regress
# the folder of the object being made ($(BUILD)/lib/x.o -> lib; the planted copies are lib's)
INC = $(INC_$(word 2,$(subst /, ,$(subst $(BUILD)/plant/,$(BUILD)/lib/,$@))))
ifeq ($(SAN),1)
ALLCFLAGS += -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
LDSAN     = -fsanitize=address,undefined,float-cast-overflow
endif
# fast mode may contract into fma: on x86-64 that needs the instruction set said (checked at run time)
FASTFLAGS := -ffp-contract=fast $(shell $(CC) -mfma -E -x c /dev/null >/dev/null 2>&1 && echo -mfma)
GIT      := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
OPENMP   := $(shell echo 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
LIBS_REF := -lmpfr -lgmp -llapacke -llapack -lblas
LIBS     := -lgsl -lgslcblas -lm

LIB_SRC  := $(wildcard lib/*.c)
REF_SRC  := $(wildcard reference/*.c)
TEST_SRC := $(wildcard tests/*.c)
CLI_SRC  := experiments/cli.c experiments/doc.c experiments/drive.c experiments/summary.c \
            experiments/gnuplot.c
PROG_SRC := $(wildcard experiments/vla-*.c)
# the tools, each in a folder of its own: the sweep runner and the regression check
TOOL_SRC := tools/sweep/vla-sweep.c tools/regress/vla-regress.c
# the programs go to bin/; a sanitized build's to build-san/bin/, which its tests run
BIN      := $(if $(filter 1,$(SAN)),$(BUILD)/bin,bin)
PROGS    := $(PROG_SRC:experiments/%.c=$(BIN)/%) $(patsubst %.c,$(BIN)/%,$(notdir $(TOOL_SRC)))
# every program a user runs, vla-bench included: installed, each with its page
ALL_PROGS := $(PROGS) $(BIN)/vla-bench
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
REF_OBJ  := $(REF_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
# what every program's page and summary line are made with (doc.h, summary.h): libc only
DOC_OBJ  := $(BUILD)/experiments/doc.o $(BUILD)/experiments/summary.o
# headers: the C and nvcc objects' dependencies come from -MMD alone (a header rebuilds what
# includes it); the fuzz build, which writes none, depends on these
HDRS     := $(wildcard lib/*.h lib/models/*.h reference/*.h tests/*.h experiments/*.h)

VLA_TEST_SCALE ?= 1
# the interpreter with numpy and torch (Debian's python3-numpy, python3-torch): not the first python3
# on PATH, which may be a build without them; the Python tests skip, saying why, where it lacks them
PYTHON ?= /usr/bin/python3
.PHONY: all test test-san check conformance-long deps clean
all: $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(BUILD)/tests/run $(PROGS)
	@echo "built: libvlastab, libvlaref, tests, $(words $(ALL_PROGS)) programs in $(BIN)/$(if $(OPENMP), (OpenMP),)"

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -c $< -o $@

# fast mode: the same model template, compiled with fma contraction allowed
$(BUILD)/lib/model_fast.o: lib/model_fast.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(FASTFLAGS) -c $< -o $@

$(BUILD)/libvlastab.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libvlaref.a: $(REF_OBJ)
	rm -f $@ && ar rcs $@ $^

# the programs' objects are kept: deleted as intermediates, they would be rebuilt, the programs
# relinked and every table of make figures made again at the next make
.SECONDARY: $(PROG_SRC:%.c=$(BUILD)/%.o)
$(BIN)/%: $(BUILD)/experiments/%.o $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p $(@D)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $< $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)

$(BUILD)/experiments/%.o: experiments/%.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(OPENMP) -c $< -o $@

$(BUILD)/tests/run: $(TEST_OBJ) $(BUILD)/experiments/summary.o $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(TEST_OBJ) $(BUILD)/experiments/summary.o $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)

# the tests run the programs of this build (VLA_BIN_DIR): a sanitized build's are sanitized too
test: $(BUILD)/tests/run $(ALL_PROGS)
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
	    python3-numpy python3-torch

clean:
	rm -rf build build-san bin

# ---- fuzzing (tests/fuzz/): libFuzzer targets built with clang into build/fuzz/. `make fuzz` runs
# each for FUZZ_SECONDS on one core, from the committed seeds plus the corpus it grew before;
# findings go to build/fuzz/artifacts/. cli.c is compiled with exit renamed so that the option
# parser can be fuzzed in-process (see tests/fuzz/fuzz_cli.c).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := npy trace stream cli config
FUZZ_SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -ffp-contract=off -Ilib -Ireference -Iexperiments $(FUZZ_SANFLAGS)
FUZZ_LIBOBJ  := $(patsubst %.c,build/fuzz/%.o,$(LIB_SRC) $(REF_SRC))
FUZZ_BINS    := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
.PHONY: fuzz fuzz-build
.SECONDARY: $(FUZZ_LIBOBJ) $(FUZZ_TARGETS:%=build/fuzz/tests/fuzz/fuzz_%.o)
fuzz-build: $(FUZZ_BINS)
build/fuzz/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
build/fuzz/cli-exit.o: experiments/cli.c $(HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Dexit=vla_fuzz_exit -c $< -o $@
build/fuzz/fuzz_cli: build/fuzz/cli-exit.o
build/fuzz/fuzz_%: build/fuzz/tests/fuzz/fuzz_%.o $(FUZZ_LIBOBJ)
	$(FUZZ_CC) $(FUZZ_SANFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_REF) $(LIBS)
fuzz: $(FUZZ_BINS)
	@mkdir -p build/fuzz/artifacts
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p build/fuzz/corpus/$$t; \
	    echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	    build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -close_fd_mask=3 \
	        -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/$$t- \
	        build/fuzz/corpus/$$t tests/fuzz/seeds/$$t 2>&1 | \
	        grep -E 'Done|ERROR|SUMMARY|stat::number_of_executed_units|stat::new_units_added|artifact' \
	        || true; \
	    test -z "$$(ls build/fuzz/artifacts/$$t-* 2>/dev/null)" || { echo "fuzz_$$t: findings in build/fuzz/artifacts/"; exit 1; }; \
	done

# ---- the CUDA backend (kernels/) and the benchmark (bench/). CUDA=auto builds the kernels when
# nvcc is found (on PATH or in /usr/local/cuda/bin), CUDA=1 insists, CUDA=0 builds the stub that
# answers "no CUDA backend in this build". Either way $(BUILD)/libvlacuda.a holds the backend's API
# and the kernels' emulation on host threads, and the tests and programs link it. The kernel is
# compiled once per policy, the rows of lib/vlalists.h's VLA_PRECS (KERN_POLS, read by the
# preprocessor): kernels/kern.cu by nvcc into build/kernels/kern_<sfx>.o for the GPU, in parallel
# under make -j, and kernels/emu_block.c by $(CC) into emu_<sfx>.o for the emulation; only the ways
# of tracking A the GPU runs are compiled (VLA_CUDA_TRACKS, kernels/vlacuda.h), and host.c refuses
# the others. kernels/vlacuda.cu holds the CUDA runtime calls alone. The kernels are strict
# (--fmad=false), sm_90 machine code plus compute_80 PTX for other GPUs (8.0 and newer), both
# from one compute_80 PTX (cicc runs once: its compute_90 PTX differed in the .target line alone,
# and the sm_90 code made from either is the same bytes).
NVCC       ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
ifeq ($(CUDA),0)
KERN_GPU   :=
else ifneq ($(NVCC),)
KERN_GPU   := 1
else ifeq ($(CUDA),1)
$(error CUDA=1, but nvcc is neither on PATH nor in /usr/local/cuda/bin: set NVCC=/path/to/nvcc)
endif
CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVFLAGS    := -O3 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false -std=c++17 \
              -gencode arch=compute_80,code=[sm_90,compute_80] \
              -Xcompiler -fPIC -Ilib -Ikernels
KERN_POLS  := $(shell echo 'VLA_PRECS(K_)' | $(CC) -E -P -Ilib -include vlalists.h '-DK_(ID,name,sfx,...)=sfx' -x c - 2>/dev/null)
# nvcc knows no sanitizer: the GPU's objects are always the plain build's, which a sanitized build
# links as they are (one nvcc run of each, not two)
GPU_OBJ    := $(KERN_POLS:%=build/kernels/kern_%.o) build/kernels/vlacuda.o
EMU_OBJ    := $(KERN_POLS:%=$(BUILD)/kernels/emu_%.o)
KERN_OBJ   := $(BUILD)/kernels/host.o $(BUILD)/kernels/emu.o $(BUILD)/kernels/lanes.o $(BUILD)/kernels/kengine.o \
              $(EMU_OBJ) $(if $(KERN_GPU),$(GPU_OBJ),$(BUILD)/kernels/nocuda.o)
KERN_STAMP := $(BUILD)/kernels/config.$(if $(KERN_GPU),cuda,nocuda)
KERN_LIBS  := $(BUILD)/libvlacuda.a $(BUILD)/libvlastab.a \
              $(if $(KERN_GPU),-L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++) -lpthread
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(if $(KERN_POLS),,$(error no policies read from lib/vlalists.h's VLA_PRECS with $(CC) -E))
$(info kernels: $(if $(KERN_GPU),CUDA built with $(NVCC) (sm_90 + compute_80 PTX); GPU tests run where a device is,CUDA skipped ($(if $(filter 0,$(CUDA)),CUDA=0,nvcc not found)): stub + host-thread emulation only); bench: make bench)
endif
.PHONY: bench
all: $(BUILD)/libvlacuda.a $(BIN)/vla-bench
$(BUILD)/tests/run $(PROGS) $(BIN)/vla-bench: $(BUILD)/libvlacuda.a
$(BUILD)/tests/run $(PROGS): LIBS := $(KERN_LIBS) $(LIBS)
$(BUILD)/kernels/host.o $(BUILD)/kernels/lanes.o $(BUILD)/kernels/kengine.o $(BUILD)/bench/bench.o $(BUILD)/lib/engine.o: ALLCFLAGS += $(OPENMP)
$(EMU_OBJ): $(BUILD)/kernels/emu_%.o: kernels/emu_block.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -DPOL=$* -c $< -o $@
$(filter build/kernels/kern_%,$(GPU_OBJ)): build/kernels/kern_%.o: kernels/kern.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -MF $(@:.o=.d) -DPOL=$* -c $< -o $@
build/kernels/vlacuda.o: kernels/vlacuda.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@
$(KERN_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/kernels/config.* && touch $@
$(BUILD)/libvlacuda.a: $(KERN_OBJ) $(KERN_STAMP)
	rm -f $@ && ar rcs $@ $(KERN_OBJ)
$(BIN)/vla-bench: $(BUILD)/bench/bench.o $(DOC_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p $(@D)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $< $(DOC_OBJ) $(BUILD)/libvlaref.a $(KERN_LIBS) $(LIBS_REF) $(LIBS)
# the production case (bench/production.sh): BENCH_SCALE="H T d" (default 16 32768 128, hours on
# 2 cores; "4 2048 64" takes minutes), none to skip it
BENCH_SCALE ?= 16 32768 128
bench: $(BIN)/vla-bench $(BIN)/vla-check
	$(BIN)/vla-bench $(BENCH_ARGS)
	$(if $(filter none,$(BENCH_SCALE)),,bench/production.sh $(BENCH_SCALE))

# header and included-source dependencies written by -MMD (the GPU's objects' too, in a
# sanitized build)
-include $(sort $(shell find $(BUILD) -name '*.d' 2>/dev/null) $(wildcard $(GPU_OBJ:.o=.d)))

# ---- make regress (tools/regress/vla-regress.c): every model, way of tracking A and precision of a
# fixed suite against the exact reference, in bits lost, compared with the reviewed baseline
# tests/regress/baseline.tsv; exit 1 when a case lost more than half a bit. `make regress-update`
# rewrites the baseline and shows the diff, for the commit. REGRESS_ARGS passes options (--only
# PATTERNS, --backend cuda, --bits, --changed). For `make test` the program is also linked with a
# fault planted in a copy of lib/ in the build tree: $(BUILD)/plant/N/lib/recur.h is lib/recur.h
# edited by tests/regress/plants/N.sed (the build stops when the script no longer changes it),
# model.o is compiled from that copy, and model_simd.c's vectorized twins are switched off, since
# they would step around two of the faults; tests/test_regress.c proves that each is caught.
REGRESS_BASE   := tests/regress/baseline.tsv
PLANTS         := $(patsubst tests/regress/plants/%.sed,%,$(wildcard tests/regress/plants/*.sed))
REGRESS_PLANTS := $(foreach n,$(PLANTS),$(BUILD)/plant/vla-regress-plant$(n))
.PHONY: regress regress-update
.SECONDARY: $(foreach n,$(PLANTS),$(BUILD)/plant/$(n)/model.o $(BUILD)/plant/$(n)/model_simd.o \
            $(BUILD)/plant/$(n)/lib/recur.h)
$(BUILD)/tools/regress/vla-regress.o: ALLCFLAGS += $(OPENMP)
$(BIN)/vla-regress: $(BUILD)/tools/regress/vla-regress.o $(DOC_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p $(@D)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(filter %.o,$^) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
$(CLI_OBJ): ALLCFLAGS += $(OPENMP)
$(BUILD)/plant/%/lib/recur.h: lib/recur.h tests/regress/plants/%.sed $(HDRS) lib/model.c
	@mkdir -p $(@D)/models
	cp lib/*.h lib/model.c $(@D)/ && cp lib/models/*.h $(@D)/models/
	@for f in lib/*.h lib/models/*.h; do sed -f tests/regress/plants/$*.sed $$f > $(@D)/$${f#lib/} || exit 1; done
	@if diff -rq lib $(@D) | grep -q 'differ$$'; then :; else rm -f $@; \
	    echo "plant $*: tests/regress/plants/$*.sed no longer changes recur.h's text (lib/*.h, lib/models/*.h): update it" >&2; exit 1; fi
$(BUILD)/plant/%/model.o: $(BUILD)/plant/%/lib/recur.h
	$(CC) $(ALLCFLAGS) -c $(@D)/lib/model.c -o $@
$(BUILD)/plant/%/model_simd.o: lib/model_simd.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -DVLA_NO_SIMD -c $< -o $@
$(REGRESS_PLANTS): LIBS := $(KERN_LIBS) $(LIBS)
$(BUILD)/plant/vla-regress-plant%: $(BUILD)/tools/regress/vla-regress.o $(DOC_OBJ) $(BUILD)/plant/%/model.o \
        $(if $(wildcard lib/model_simd.c),$(BUILD)/plant/%/model_simd.o) $(BUILD)/libvlaref.a \
        $(BUILD)/libvlastab.a $(if $(KERN_LIBS),$(BUILD)/libvlacuda.a)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(filter %.o,$^) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
test: $(REGRESS_PLANTS)
regress: $(BIN)/vla-regress
	$(BIN)/vla-regress $(REGRESS_ARGS)
regress-update: $(BIN)/vla-regress
	@mkdir -p $(BUILD)
	@if [ -f $(REGRESS_BASE) ]; then cp $(REGRESS_BASE) $(BUILD)/regress-old.tsv; else : > $(BUILD)/regress-old.tsv; fi
	$(BIN)/vla-regress --update $(REGRESS_ARGS)
	@diff -u --label 'baseline before' --label 'baseline now' $(BUILD)/regress-old.tsv $(REGRESS_BASE) \
	    && echo "regress-update: the baseline did not change" || true

# ---- vla-sweep (tools/sweep/vla-sweep.c, sweeps/): parameter sweeps on this machine, under MPI or
# as a Slurm job array. Its own program, linking nothing of ours, so that building it with mpicc
# cannot disturb the others. MPI=auto uses mpicc when found (for `mpirun -np N bin/vla-sweep --mpi
# FILE`), MPI=0 builds with $(CC) and --mpi then says so; the stamp rebuilds it when that changes.
MPI         ?= auto
MPICC       ?= $(shell command -v mpicc 2>/dev/null)
SWEEP_MPI   := $(if $(filter 0,$(MPI)),,$(MPICC))
SWEEP_STAMP := $(BUILD)/tools/sweep/sweep.$(if $(SWEEP_MPI),mpi,nompi)
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(info sweep: $(if $(SWEEP_MPI),MPI built with $(SWEEP_MPI),MPI skipped ($(if $(filter 0,$(MPI)),MPI=0,mpicc not found: make deps))))
endif
$(SWEEP_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/tools/sweep/sweep.* && touch $@
$(BUILD)/tools/sweep/vla-sweep.o: tools/sweep/vla-sweep.c $(SWEEP_STAMP)
	@mkdir -p $(@D)
	$(if $(SWEEP_MPI),$(SWEEP_MPI) -DVLA_SWEEP_MPI,$(CC)) $(ALLCFLAGS) -c $< -o $@
$(BIN)/vla-sweep: $(BUILD)/tools/sweep/vla-sweep.o $(DOC_OBJ)
	@mkdir -p $(@D)
	$(or $(SWEEP_MPI),$(CC)) $(LDSAN) -o $@ $(filter %.o,$^)

# ---- the cluster path for real: tests/test_slurm.sh starts a one-node Slurm by hand (slurm-wlm
# and munge, from make deps; no systemd) under a scratch folder, gives it the job arrays vla-sweep
# --slurm writes, and stops it. About 20 s; as root; skips, saying why, where Slurm cannot start
# (VLA_TEST_SLURM=require, which .ci/run sets, fails instead).
.PHONY: test-slurm
test-slurm: $(BIN)/vla-sweep $(BIN)/vla-statenorm
	@VLA_BIN_DIR=$(BIN) bash tests/test_slurm.sh
test: test-slurm

# ---- packaging: shared libraries, man pages, make install / uninstall, and the install test.
# `make install` (PREFIX=/usr/local, DESTDIR for staging) puts the programs, libvlastab and libvlaref
# (static, and shared with a soname), their headers in include/vlastab/, pkg-config files, the man
# pages, the gnuplot scripts and the example under PREFIX. `make test` also runs
# tests/test_install.sh (make test-install alone), which installs into a scratch DESTDIR and uses
# the result as a user would. libvlaref is its own library and package (vlaref.pc): the models
# need libc and libm only, and a user of them should not have to link MPFR, GMP and LAPACK.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/vlastab
# the Python package (tools/python/vlastab: the binding, the .dat reader, the PyTorch recorder), where
# $(PYTHON) looks for packages under PREFIX (/usr/local/lib/python3.11/dist-packages on Debian)
PYTHONDIR  ?= $(PREFIX)/lib/$(shell $(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages
PY_SRC     := $(wildcard tools/python/vlastab/*.py)
INSTALL    ?= install
VERSION    := $(shell sed -n 's/^.define VLA_VERSION "\(.*\)".*/\1/p' lib/vlastab.h)
# raised when the ABI breaks (a public struct changes, a signature changes): the version alone
# does not say so while it is 0.x
SOVERSION  := 0
SHLIBS     := $(BUILD)/libvlastab.so $(BUILD)/libvlaref.so
# the public headers (vlastab.h includes vlalists.h, the lists its enums are made from)
PUBLIC_H   := vlastab.h vlalists.h vlaref.h
MAN1       := $(ALL_PROGS:$(BIN)/%=$(BUILD)/man/%.1)
# a shared library names the libraries it needs, so that users link it alone: no undefined
# symbols (but the sanitizer runtime's, which the program brings)
NOUNDEF    := $(if $(filter 1,$(SAN)),,-Wl,--no-undefined)
# .pc paths under ${prefix}, so that pkg-config --define-variable=prefix=... relocates them
PC_SUBST    = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' \
                  -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' \
                  -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g'
MAN_SUBST   = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
                  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g'
INSTALLED   = $(ALL_PROGS:$(BIN)/%=$(BINDIR)/%) $(PUBLIC_H:%=$(INCLUDEDIR)/vlastab/%) \
              $(foreach l,libvlastab libvlaref,$(foreach x,a so so.$(SOVERSION) so.$(VERSION),$(LIBDIR)/$(l).$(x))) \
              $(LIBDIR)/pkgconfig/vlastab.pc $(LIBDIR)/pkgconfig/vlaref.pc \
              $(MAN1:$(BUILD)/man/%=$(MANDIR)/man1/%) $(MANDIR)/man7/vlastab.7 \
              $(patsubst plots/%,$(DATADIR)/vlastab/plots/%,$(wildcard plots/*.gp)) \
              $(DOCDIR)/examples/vla3_own_inputs.c $(PY_SRC:tools/python/%=$(PYTHONDIR)/%) \
              $(DATADIR)/vlastab/installed $(patsubst docs/%,$(DOCDIR)/%,$(wildcard docs/*.md))
.PHONY: shared man install uninstall test-install FORCE
all: $(SHLIBS)
shared: $(SHLIBS)
man: $(MAN1) $(BUILD)/man/programs.roff

$(BUILD)/libvlastab.so.$(VERSION): $(LIB_OBJ)
	$(CC) $(LDSAN) $(OPENMP) -shared -Wl,-soname,libvlastab.so.$(SOVERSION) $(NOUNDEF) -o $@ $(LIB_OBJ) -lgsl -lgslcblas -lm
$(BUILD)/libvlaref.so.$(VERSION): $(REF_OBJ) $(BUILD)/libvlastab.so
	$(CC) $(LDSAN) $(OPENMP) -shared -Wl,-soname,libvlaref.so.$(SOVERSION) $(NOUNDEF) -o $@ $(REF_OBJ) \
	    -L$(BUILD) -lvlastab $(LIBS_REF) -lgsl -lgslcblas -lm
# the names the loader (the soname) and the linker (-lvlastab) look for
$(BUILD)/%.so: $(BUILD)/%.so.$(VERSION)
	ln -sf $(<F) $(@D)/$(*F).so.$(SOVERSION) && ln -sf $(*F).so.$(SOVERSION) $@

# dat.c compiles the commit into every result header: rebuild it when the commit (or the tree's
# dirty state) changes, or results name a commit they were not made with
$(BUILD)/git-describe: FORCE
	@mkdir -p $(@D) && [ "$$(cat $@ 2>/dev/null)" = '$(GIT)' ] || echo '$(GIT)' > $@
$(BUILD)/lib/dat.o: $(BUILD)/git-describe
FORCE:

# a page: man/mkman.sh, the program's own --man with the NAME phrase its source opens with
src_of = $(firstword $(wildcard experiments/$(1).c tools/*/$(1).c) bench/bench.c)
.SECONDEXPANSION:
$(BUILD)/man/%.1: $(BIN)/% $$(call src_of,$$*) man/mkman.sh
	@mkdir -p $(@D)
	sh man/mkman.sh $< $(call src_of,$*) $(VERSION) > $@.tmp && mv $@.tmp $@
# vlastab(7)'s list of programs: each page's NAME line
$(BUILD)/man/programs.roff: $(MAN1)
	for f in $(MAN1); do sed -n '/^\.SH NAME/{n;s/^\(.*\) \\- \(.*\)/.TP\n\\fB\1\\fR(1)\n\2/p;}' $$f; done > $@

install: $(ALL_PROGS) $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS) man
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/vlastab \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DATADIR)/vlastab/plots \
	    $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(PYTHONDIR)/vlastab
	$(INSTALL) -m 755 $(ALL_PROGS) $(DESTDIR)$(BINDIR)
	for f in $(PY_SRC); do sed -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@BINDIR@|$(BINDIR)|' $$f > $(DESTDIR)$(PYTHONDIR)/vlastab/$${f##*/} || exit 1; done
	$(INSTALL) -m 644 $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS:%=%.$(VERSION)) $(DESTDIR)$(LIBDIR)
	for l in libvlastab libvlaref; do ln -sf $$l.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(SOVERSION) && \
	    ln -sf $$l.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/$$l.so || exit 1; done
	$(INSTALL) -m 644 lib/vlastab.h lib/vlalists.h reference/vlaref.h $(DESTDIR)$(INCLUDEDIR)/vlastab
	$(PC_SUBST) vlastab.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/vlastab.pc
	$(PC_SUBST) vlaref.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/vlaref.pc
	$(INSTALL) -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	$(MAN_SUBST) -e '/@PROGRAMS@/{r $(BUILD)/man/programs.roff' -e 'd;}' man/vlastab.7.in \
	    > $(DESTDIR)$(MANDIR)/man7/vlastab.7
	$(if $(wildcard plots/*.gp),$(INSTALL) -m 644 $(wildcard plots/*.gp) $(DESTDIR)$(DATADIR)/vlastab/plots)
	$(INSTALL) -m 644 examples/vla3_own_inputs.c $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 644 $(wildcard docs/*.md) $(DESTDIR)$(DOCDIR)
	printf '%s\n' $(INSTALLED) > $(DESTDIR)$(DATADIR)/vlastab/installed
	$(LDCONFIG)
# uninstall removes what this tree installs and what the install it undoes recorded, so a program
# renamed since is not left behind
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) \
	    $$(sed 's|^|$(DESTDIR)|' $(DESTDIR)$(DATADIR)/vlastab/installed 2>/dev/null)
	rmdir $(DESTDIR)$(DATADIR)/vlastab/plots $(DESTDIR)$(DATADIR)/vlastab $(DESTDIR)$(DOCDIR)/examples \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(INCLUDEDIR)/vlastab $(DESTDIR)$(PYTHONDIR)/vlastab 2>/dev/null || true
	$(LDCONFIG)
# the loader finds a library in LIBDIR only through ldconfig's cache; a staged (DESTDIR) install
# leaves that to the package
LDCONFIG    = @if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# VLA_MAKE, not $(MAKE), in the recipe: make -n runs a line naming $(MAKE), and would run the test
VLA_MAKE   := $(MAKE)
test-install: $(ALL_PROGS) $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS) man
	@MAKE='$(VLA_MAKE)' CC='$(CC)' VERSION='$(VERSION)' SOVERSION='$(SOVERSION)' GIT='$(GIT)' PYTHON='$(PYTHON)' \
	    PROGS='$(notdir $(ALL_PROGS))' sh tests/test_install.sh
# a few seconds; not under SAN=1, where the shared libraries need the sanitizer runtime preloaded
ifneq ($(SAN),1)
test: test-install
endif

# ---- the figures (`make figures`, plots/) and the paper (`make paper`, paper/). sweeps/paper.sweep
# lists every table of the figures with its command: the one list of the grid. $(SWEEP_MK) turns its
# case list (bin/vla-sweep --dry-run) into one rule per table, so that make and vla-sweep make the
# same tables with the same commands (tests/test_grid.sh checks it). A table depends on its program,
# so a changed program remakes it, except the 10^7-token tables of figures-long (40 minutes), which
# are made only when missing. Each figure depends on the tables whose case names FIG_TABLES_<figure>
# matches, and plots/<figure>.gp draws it in two sizes, a double-column (7 in) and a single-column
# (3.4 in, NAME-1col) figure, each as PDF and PNG. Figures go to $(FIGDIR) and data to $(DATA), both
# outside the tracked tree: make figures never dirties the commit that its tables and the paper
# name. `make readme-update` copies the README's figures into docs/figures/ and its claims, tracks,
# stagnation and solvers tables from the paper's, for a commit. About 6 minutes on 2 idle cores (and the
# solvers' 112 tables about 10 minutes more, on 2 loaded cores; the forms' tables 26 minutes more,
# 18 of them forms-chunk-vla3-lmlike's 10^5 steps with the exact reference, on 2 loaded cores, and
# forms-ut's 10 seeds about 5 minutes of CPU time more than its one seed took; the gated figure's
# ||J_t|| and every model's chunk:C tables 105 s of CPU; the safe-gate map's 397 tables 54 s of user
# and 6 s of system CPU, 48 s on 2 cores with -j2, AMD EPYC);
# figures-long about an hour of CPU time more (its five runs, two at a time with -j2), and the
# solvers' 24 runs to 10^6 (solvers-long) about 18 minutes more on 2 loaded cores.
DATA      ?= data
FIGDIR    ?= figures
SHARED    ?= ../shared
SWEEP     := sweeps/paper.sweep
SWEEP_MK  := $(BUILD)/paper-sweep.mk
FIGS      := statenorm drift tracks stagnation guards jacobian recall scaling heatmap solvers \
             solvers-cost forms-chunk forms-ut forms-scan gated safegate
FIGS_LONG := statenorm-long solvers-long
FIG_TABLES_statenorm      := statenorm-lmlike-% statenorm-trace-%
FIG_TABLES_drift          := drift-%
FIG_TABLES_tracks         := tracks-%
FIG_TABLES_stagnation     := stagnation-%
FIG_TABLES_guards         := guards-% drift-vla3-%-nudgeoff
FIG_TABLES_jacobian       := jacobian-%
FIG_TABLES_recall         := recall-%
FIG_TABLES_scaling        := scaling
FIG_TABLES_heatmap        := heatmap-%
FIG_TABLES_solvers        := solvers-lmlike-% solvers-gauss-% solvers-subspace-% solvers-trace-%
FIG_TABLES_solvers-cost   := solvers-lmlike-% solvcost-%
FIG_TABLES_statenorm-long := statenorm-long-%
FIG_TABLES_solvers-long   := solvers-long-%
FIG_TABLES_forms-chunk    := forms-chunk-%
FIG_TABLES_forms-ut       := forms-ut
FIG_TABLES_forms-scan     := forms-scan-%
FIG_TABLES_gated          := gated-%
FIG_TABLES_safegate       := safegate-%
fig_tables = $(filter $(FIG_TABLES_$(1):%=$(DATA)/%.dat),$(SWEEP_TABLES))
fig_files  = $(foreach x,png pdf,$(FIGDIR)/$(1).$(x) $(FIGDIR)/$(1)-1col.$(x))
# a table's prerequisite on its program: order-only for the long ones
table_prog = $(if $(filter $(foreach f,$(FIGS_LONG),$(FIG_TABLES_$(f))),$(1)),| )$(2)
.PHONY: figures figures-long figures-list paper deps-paper readme-update test-grid
ifneq ($(filter figures figures-long figures-list paper readme-update $(DATA)/% $(FIGDIR)/% paper/%,$(MAKECMDGOALS)),)
include $(SWEEP_MK)
endif
$(SWEEP_MK): $(SWEEP) sweeps/make-rules.awk bin/vla-sweep
	@mkdir -p $(@D)
	bin/vla-sweep --dry-run --out data $(SWEEP) | awk -f sweeps/make-rules.awk > $@.tmp && mv $@.tmp $@

define fig_rule
$(call fig_files,$(1)) &: plots/$(1).gp plots/style.gp plots/tables.gp $$(call fig_tables,$(1))
	@mkdir -p $(FIGDIR)
	gnuplot -e "dir='$(DATA)'; out='$(FIGDIR)/$(1)'; shared='$(SHARED)'" plots/$(1).gp
endef
$(foreach f,$(FIGS) $(FIGS_LONG),$(eval $(call fig_rule,$(f))))

figures: $(foreach f,$(FIGS),$(call fig_files,$(f)))
	@echo "figures: $(FIGS:%=$(FIGDIR)/%) (.pdf, .png, -1col); tables in $(DATA)/"
figures-long: $(foreach f,$(FIGS_LONG),$(call fig_files,$(f)))
	@echo "figures-long: $(FIGS_LONG:%=$(FIGDIR)/%) (.pdf, .png, -1col); tables in $(DATA)/"
# each figure and the tables it draws, one line each (tests/test_grid.sh reads it)
figures-list:
	@$(foreach f,$(FIGS) $(FIGS_LONG),echo '$(f): $(call fig_tables,$(f))';)

# `make paper` builds paper/vla-stability.pdf from the tables and the figures of make figures (and
# of figures-long when its tables are there); `make deps-paper` installs TeX from Debian (as root).
# paper/gen-numbers.sh turns the tables into the numbers, the claims table (LaTeX, and Markdown for
# the README) and the tables of drift runs, of the ways of tracking A and of stagnation
# (paper/generated/). Right after make figures it runs no experiment (the programs' objects are kept,
# so nothing is relinked, and every table is newer than its program).
# (each long figure whose tables are all there)
long_ready = $(if $(call fig_tables,$(1)),$(if $(filter-out $(wildcard $(call fig_tables,$(1))),$(call fig_tables,$(1))),,$(1)))
PAPER_LONG := $(foreach f,$(FIGS_LONG),$(call long_ready,$(f)))
PAPER_FIGS := $(filter-out heatmap forms-%,$(FIGS)) $(PAPER_LONG)
PAPER_DATA  = $(foreach f,$(PAPER_FIGS),$(call fig_tables,$(f)))
PAPER_TRACE := $(SHARED)/data/lmtrace-seed7/exp2_final.json
PAPER_GEN   := $(foreach f,numbers.tex claims.tex runs.tex tracks.tex stagnation.tex solvers.tex claims.md \
               tracks.md stagnation.md solvers.md,paper/generated/$(f))
$(PAPER_GEN) &: paper/gen-numbers.sh $(PAPER_DATA) $(PAPER_TRACE)
	sh paper/gen-numbers.sh $(DATA) $(SHARED) paper/generated
paper: paper/vla-stability.pdf
paper/vla-stability.pdf: paper/vla-stability.tex $(PAPER_GEN) $(PAPER_FIGS:%=$(FIGDIR)/%.pdf)
	cd paper && TEXINPUTS='$(abspath $(FIGDIR))/:' latexmk -pdf -g -interaction=nonstopmode -halt-on-error -outdir=build vla-stability.tex
	cp paper/build/vla-stability.pdf $@
	@sh paper/gen-numbers.sh --check-readme paper/generated README.md
deps-paper:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends latexmk \
	    texlive-latex-base texlive-latex-recommended texlive-fonts-recommended poppler-utils

# the README's snapshot: its figures as make figures (and figures-long) drew them, and the claims,
# tracks, stagnation and solvers tables as the paper has them
README_FIGS := $(FIGS) $(PAPER_LONG)
readme-update: $(README_FIGS:%=$(FIGDIR)/%.png) $(PAPER_GEN)
	@mkdir -p docs/figures
	cp $(README_FIGS:%=$(FIGDIR)/%.png) docs/figures/
	sh paper/gen-numbers.sh --splice-readme paper/generated README.md

# make and the sweep file agree: every table make figures and figures-long make is a case of the
# sweep, with the sweep's command, and every case feeds a figure
test-grid: bin/vla-sweep
	@MAKE='$(VLA_MAKE)' sh tests/test_grid.sh
test: test-grid
