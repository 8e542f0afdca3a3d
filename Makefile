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
ALLCFLAGS = -MMD -MP -std=gnu11 $(WARN) $(FPFLAGS) -fPIC -Ilib -Ireference -Iexperiments -DVLA_GIT='"$(GIT)"' $(CFLAGS)
ifeq ($(SAN),1)
ALLCFLAGS += -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
LDSAN     = -fsanitize=address,undefined,float-cast-overflow
endif
# fast mode may contract into fma: on x86-64 that needs the instruction set said (checked at run time)
FASTFLAGS := -ffp-contract=fast $(shell $(CC) -mfma -E -x c /dev/null >/dev/null 2>&1 && echo -mfma)
GIT      := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
OPENMP   := $(shell echo 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
LIBS_REF := -lmpfr -lgmp -llapacke -llapack -lblas
LIBS     := -lm

LIB_SRC  := $(wildcard lib/*.c)
REF_SRC  := $(wildcard reference/*.c)
TEST_SRC := $(wildcard tests/*.c)
CLI_SRC  := experiments/cli.c experiments/help.c experiments/drive.c
PROG_SRC := $(wildcard experiments/vla-*.c)
PROGS    := $(PROG_SRC:experiments/%.c=bin/%)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
REF_OBJ  := $(REF_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
# headers: the C objects' dependencies come from -MMD alone (a header rebuilds what includes it);
# the fuzz and nvcc builds, which write none, depend on these
HDRS     := $(wildcard lib/*.h reference/*.h tests/*.h experiments/*.h)

VLA_TEST_SCALE ?= 1
.PHONY: all test test-san conformance-long deps clean
all: $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(BUILD)/tests/run $(PROGS)
	@echo "built: libvlastab, libvlaref, tests, $(words $(PROGS)) programs in bin/$(if $(OPENMP), (OpenMP),)"

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -c $< -o $@

# fast mode: the same model template, compiled with fma contraction allowed
$(BUILD)/lib/model_fast.o: lib/model_fast.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(FASTFLAGS) -c $< -o $@

$(BUILD)/libvlastab.a: $(LIB_OBJ)
	ar rcs $@ $^
$(BUILD)/libvlaref.a: $(REF_OBJ)
	ar rcs $@ $^

bin/%: $(BUILD)/experiments/%.o $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p bin
	$(CC) $(LDSAN) $(OPENMP) -o $@ $< $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)

$(BUILD)/experiments/%.o: experiments/%.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(OPENMP) -c $< -o $@

$(BUILD)/tests/run: $(TEST_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(TEST_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)

test: $(BUILD)/tests/run
	VLA_SHARED=$(abspath ../shared) VLA_TEST_SCALE=$(VLA_TEST_SCALE) $(BUILD)/tests/run

# the sanitizer pass runs the horizons of the conformance tests at a quarter
test-san:
	$(MAKE) SAN=1 VLA_TEST_SCALE=0.25 test

conformance-long: $(BUILD)/tests/run
	VLA_CONFORM_LONG=100000 $(BUILD)/tests/run conform_long

deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	    build-essential libmpfr-dev libgmp-dev liblapacke-dev liblapack-dev libblas-dev \
	    libgsl-dev gnuplot-nox pkg-config openmpi-bin libopenmpi-dev slurm-wlm munge

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
# and the kernels' emulation on host threads, and the tests and programs link it. The kernels are
# strict (--fmad=false), sm_90 machine code plus compute_80 PTX for other GPUs (8.0 and newer).
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
              -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80 \
              -Xcompiler -fPIC -Ilib -Ikernels
KERN_OBJ   := $(BUILD)/kernels/host.o $(BUILD)/kernels/emu.o $(BUILD)/kernels/lanes.o $(BUILD)/kernels/kengine.o \
              $(if $(KERN_GPU),$(BUILD)/kernels/vlacuda.o,$(BUILD)/kernels/nocuda.o)
KERN_STAMP := $(BUILD)/kernels/config.$(if $(KERN_GPU),cuda,nocuda)
KERN_LIBS  := $(BUILD)/libvlacuda.a $(BUILD)/libvlastab.a \
              $(if $(KERN_GPU),-L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++) -lpthread
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(info kernels: $(if $(KERN_GPU),CUDA built with $(NVCC) (sm_90 + compute_80 PTX); GPU tests run where a device is,CUDA skipped ($(if $(filter 0,$(CUDA)),CUDA=0,nvcc not found)): stub + host-thread emulation only); bench: make bench)
endif
.PHONY: bench
all: $(BUILD)/libvlacuda.a bin/vla-bench
$(BUILD)/tests/run $(PROGS) bin/vla-bench: $(BUILD)/libvlacuda.a
$(BUILD)/tests/run $(PROGS): LIBS := $(KERN_LIBS) $(LIBS)
$(BUILD)/kernels/host.o $(BUILD)/kernels/lanes.o $(BUILD)/kernels/kengine.o $(BUILD)/bench/bench.o $(BUILD)/lib/engine.o: ALLCFLAGS += $(OPENMP)
$(BUILD)/tests/test_cuda.o $(BUILD)/tests/test_engine.o $(BUILD)/tests/test_hardening.o $(BUILD)/bench/bench.o: ALLCFLAGS += -Ikernels
$(BUILD)/kernels/vlacuda.o: kernels/vlacuda.cu $(wildcard lib/*.h kernels/*.h)
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c $< -o $@
$(KERN_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/kernels/config.* && touch $@
$(BUILD)/libvlacuda.a: $(KERN_OBJ) $(KERN_STAMP)
	rm -f $@ && ar rcs $@ $(KERN_OBJ)
bin/vla-bench: $(BUILD)/bench/bench.o $(BUILD)/libvlastab.a
	@mkdir -p bin
	$(CC) $(LDSAN) $(OPENMP) -o $@ $< $(KERN_LIBS) $(LIBS)
bench: bin/vla-bench
	bin/vla-bench $(BENCH_ARGS)

# header and included-source dependencies written by -MMD
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- make regress (experiments/vla-regress.c): every model, way of tracking A and precision of a
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
REGRESS_FLAGS  := $(if $(KERN_LIBS),-Ikernels -DVLA_HAVE_KERNELS)
.PHONY: regress regress-update
.SECONDARY: $(foreach n,$(PLANTS),$(BUILD)/plant/$(n)/model.o $(BUILD)/plant/$(n)/model_simd.o \
            $(BUILD)/plant/$(n)/lib/recur.h)
$(BUILD)/experiments/vla-regress.o $(BUILD)/tests/test_regress.o: ALLCFLAGS += $(REGRESS_FLAGS)
$(CLI_OBJ): ALLCFLAGS += -Ikernels $(OPENMP)
$(BUILD)/plant/%/lib/recur.h: lib/recur.h tests/regress/plants/%.sed $(HDRS) lib/model.c
	@mkdir -p $(@D)
	cp lib/*.h lib/model.c $(@D)/
	sed -f tests/regress/plants/$*.sed lib/recur.h > $@.tmp
	@if cmp -s lib/recur.h $@.tmp; then rm -f $@.tmp; \
	    echo "plant $*: tests/regress/plants/$*.sed no longer changes lib/recur.h: update it" >&2; exit 1; fi
	mv $@.tmp $@
$(BUILD)/plant/%/model.o: $(BUILD)/plant/%/lib/recur.h
	$(CC) $(ALLCFLAGS) -c $(@D)/lib/model.c -o $@
$(BUILD)/plant/%/model_simd.o: lib/model_simd.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -DVLA_NO_SIMD -c $< -o $@
$(REGRESS_PLANTS): LIBS := $(KERN_LIBS) $(LIBS)
$(BUILD)/plant/vla-regress-plant%: $(BUILD)/experiments/vla-regress.o $(BUILD)/plant/%/model.o \
        $(if $(wildcard lib/model_simd.c),$(BUILD)/plant/%/model_simd.o) $(BUILD)/libvlaref.a \
        $(BUILD)/libvlastab.a $(if $(KERN_LIBS),$(BUILD)/libvlacuda.a)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(filter %.o,$^) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
test: $(REGRESS_PLANTS)
regress: bin/vla-regress
	bin/vla-regress $(REGRESS_ARGS)
regress-update: bin/vla-regress
	@mkdir -p $(BUILD)
	@if [ -f $(REGRESS_BASE) ]; then cp $(REGRESS_BASE) $(BUILD)/regress-old.tsv; else : > $(BUILD)/regress-old.tsv; fi
	bin/vla-regress --update $(REGRESS_ARGS)
	@diff -u --label 'baseline before' --label 'baseline now' $(BUILD)/regress-old.tsv $(REGRESS_BASE) \
	    && echo "regress-update: the baseline did not change" || true

# ---- vla-sweep (experiments/vla-sweep.c, sweeps/): parameter sweeps on this machine, under MPI or
# as a Slurm job array. Its own program, linking nothing of ours, so that building it with mpicc
# cannot disturb the others. MPI=auto uses mpicc when found (for `mpirun -np N bin/vla-sweep --mpi
# FILE`), MPI=0 builds with $(CC) and --mpi then says so; the stamp rebuilds it when that changes.
MPI         ?= auto
MPICC       ?= $(shell command -v mpicc 2>/dev/null)
SWEEP_MPI   := $(if $(filter 0,$(MPI)),,$(MPICC))
SWEEP_STAMP := $(BUILD)/experiments/sweep.$(if $(SWEEP_MPI),mpi,nompi)
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(info sweep: $(if $(SWEEP_MPI),MPI built with $(SWEEP_MPI),MPI skipped ($(if $(filter 0,$(MPI)),MPI=0,mpicc not found: make deps))))
endif
$(SWEEP_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/experiments/sweep.* && touch $@
$(BUILD)/experiments/vla-sweep.o: experiments/vla-sweep.c $(SWEEP_STAMP)
	@mkdir -p $(@D)
	$(if $(SWEEP_MPI),$(SWEEP_MPI) -DVLA_SWEEP_MPI,$(CC)) $(ALLCFLAGS) -c $< -o $@
bin/vla-sweep: $(BUILD)/experiments/vla-sweep.o
	@mkdir -p bin
	$(or $(SWEEP_MPI),$(CC)) $(LDSAN) -o $@ $<

# ---- the cluster path for real: tests/test_slurm.sh starts a one-node Slurm by hand (slurm-wlm
# and munge, from make deps; no systemd) under a scratch folder, gives it the job arrays vla-sweep
# --slurm writes, and stops it. About 20 s; as root; skips, saying why, where Slurm cannot start
# (VLA_TEST_SLURM=require, which .ci/run sets, fails instead).
.PHONY: test-slurm
test-slurm: bin/vla-sweep bin/vla-statenorm
	@bash tests/test_slurm.sh
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
INSTALL    ?= install
VERSION    := $(shell sed -n 's/^.define VLA_VERSION "\(.*\)".*/\1/p' lib/vlastab.h)
# raised when the ABI breaks (a public struct changes, a signature changes): the version alone
# does not say so while it is 0.x
SOVERSION  := 0
SHLIBS     := $(BUILD)/libvlastab.so $(BUILD)/libvlaref.so
# the public headers (vlastab.h includes vlalists.h, the lists its enums are made from)
PUBLIC_H   := vlastab.h vlalists.h vlaref.h
MAN1       := $(PROGS:bin/%=$(BUILD)/man/%.1)
# a shared library names the libraries it needs, so that users link it alone: no undefined
# symbols (but the sanitizer runtime's, which the program brings)
NOUNDEF    := $(if $(filter 1,$(SAN)),,-Wl,--no-undefined)
# .pc paths under ${prefix}, so that pkg-config --define-variable=prefix=... relocates them
PC_SUBST    = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' \
                  -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' \
                  -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g'
MAN_SUBST   = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
                  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g'
INSTALLED   = $(PROGS:bin/%=$(BINDIR)/%) $(PUBLIC_H:%=$(INCLUDEDIR)/vlastab/%) \
              $(foreach l,libvlastab libvlaref,$(foreach x,a so so.$(SOVERSION) so.$(VERSION),$(LIBDIR)/$(l).$(x))) \
              $(LIBDIR)/pkgconfig/vlastab.pc $(LIBDIR)/pkgconfig/vlaref.pc \
              $(MAN1:$(BUILD)/man/%=$(MANDIR)/man1/%) $(MANDIR)/man7/vlastab.7 \
              $(patsubst plots/%,$(DATADIR)/vlastab/plots/%,$(wildcard plots/*.gp)) \
              $(DOCDIR)/examples/vla3_own_inputs.c $(DATADIR)/vlastab/installed
.PHONY: shared man install uninstall test-install FORCE
all: $(SHLIBS)
shared: $(SHLIBS)
man: $(MAN1) $(BUILD)/man/programs.roff

$(BUILD)/libvlastab.so.$(VERSION): $(LIB_OBJ)
	$(CC) $(LDSAN) $(OPENMP) -shared -Wl,-soname,libvlastab.so.$(SOVERSION) $(NOUNDEF) -o $@ $(LIB_OBJ) -lm
$(BUILD)/libvlaref.so.$(VERSION): $(REF_OBJ) $(BUILD)/libvlastab.so
	$(CC) $(LDSAN) $(OPENMP) -shared -Wl,-soname,libvlaref.so.$(SOVERSION) $(NOUNDEF) -o $@ $(REF_OBJ) \
	    -L$(BUILD) -lvlastab $(LIBS_REF) -lm
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
$(BUILD)/man/%.1: bin/% experiments/%.c man/mkman.sh
	@mkdir -p $(@D)
	sh man/mkman.sh $< experiments/$*.c $(VERSION) > $@.tmp && mv $@.tmp $@
# vlastab(7)'s list of programs: each page's NAME line
$(BUILD)/man/programs.roff: $(MAN1)
	for f in $(MAN1); do sed -n '/^\.SH NAME/{n;s/^\(.*\) \\- \(.*\)/.TP\n\\fB\1\\fR(1)\n\2/p;}' $$f; done > $@

install: $(PROGS) $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS) man
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/vlastab \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DATADIR)/vlastab/plots \
	    $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 755 $(PROGS) $(DESTDIR)$(BINDIR)
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
	printf '%s\n' $(INSTALLED) > $(DESTDIR)$(DATADIR)/vlastab/installed
	$(LDCONFIG)
# uninstall removes what this tree installs and what the install it undoes recorded, so a program
# renamed since is not left behind
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) \
	    $$(sed 's|^|$(DESTDIR)|' $(DESTDIR)$(DATADIR)/vlastab/installed 2>/dev/null)
	rmdir $(DESTDIR)$(DATADIR)/vlastab/plots $(DESTDIR)$(DATADIR)/vlastab $(DESTDIR)$(DOCDIR)/examples \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(INCLUDEDIR)/vlastab 2>/dev/null || true
	$(LDCONFIG)
# the loader finds a library in LIBDIR only through ldconfig's cache; a staged (DESTDIR) install
# leaves that to the package
LDCONFIG    = @if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# VLA_MAKE, not $(MAKE), in the recipe: make -n runs a line naming $(MAKE), and would run the test
VLA_MAKE   := $(MAKE)
test-install: $(PROGS) $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS) man
	@MAKE='$(VLA_MAKE)' CC='$(CC)' VERSION='$(VERSION)' SOVERSION='$(SOVERSION)' GIT='$(GIT)' \
	    PROGS='$(notdir $(PROGS))' sh tests/test_install.sh
# a few seconds; not under SAN=1, where the shared libraries need the sanitizer runtime preloaded
ifneq ($(SAN),1)
test: test-install
endif

# ---- the paper (paper/): `make paper` builds paper/vla-stability.pdf from the tables in data/ and
# the figures that plots/*.gp draw from them into figures/ (`make figures`); `make deps-paper`
# installs TeX from Debian (as root). paper/gen-numbers.sh turns the tables into the numbers and
# the claims table (paper/generated/*.tex), so the PDF depends on every table it reads; a figure
# older than a table it plots stops the build rather than reach the PDF.
PAPER_FIGS   := statenorm jacobian drift guards recall scaling
PAPER_MODELS := la delta rls vla1 vla3
PAPER_PRECS  := f32 f16 bf16 f16-f32 bf16-f32
PAPER_DATA_statenorm := $(foreach s,lmlike trace,$(PAPER_MODELS:%=data/statenorm-$(s)-%.dat))
PAPER_DATA_jacobian  := $(patsubst %,data/jacobian-%.dat,vla3-lmlike-f64 vla3-lmlike-f32 \
                        vla3-gauss-f64 rls-gauss-f64 vla1-lmlike-f64 vla1-gauss-f64 la-lmlike-f64)
PAPER_DATA_drift     := $(foreach p,$(PAPER_PRECS),$(foreach n,on off,data/drift-vla3-$(p)-nudge$(n).dat)) \
                        $(foreach p,f64 f32,$(foreach l,1 1e-6,data/drift-rls-$(p)-l$(l).dat))
PAPER_DATA_guards    := $(foreach k,vla1 rls,$(PAPER_PRECS:%=data/guards-$(k)-%.dat)) \
                        $(PAPER_PRECS:%=data/drift-vla3-%-nudgeoff.dat)
PAPER_DATA_recall    := data/recall-capacity.dat data/recall-retention.dat
PAPER_DATA_scaling   := data/scaling.dat
# (long-vla3-*.dat, a longer set of the vla3 drift runs, is used when present, not required)
PAPER_DATA := $(sort $(foreach f,$(PAPER_FIGS),$(PAPER_DATA_$(f))) \
              $(wildcard data/drift-*.dat data/long-*.dat))
PAPER_TRACE := ../shared/data/lmtrace-seed7/exp2_final.json
PAPER_GEN   := paper/generated/numbers.tex paper/generated/claims.tex paper/generated/runs.tex
.PHONY: paper deps-paper
paper: paper/vla-stability.pdf
$(PAPER_GEN) &: paper/gen-numbers.sh $(PAPER_DATA) $(PAPER_TRACE)
	sh paper/gen-numbers.sh data ../shared paper/generated
# the figure rules make figures/NAME.png and .pdf together: depend on the .png so that make redraws
# them when their tables change, and check the .pdf beside it
paper/vla-stability.pdf: paper/vla-stability.tex $(PAPER_GEN) $(PAPER_FIGS:%=figures/%.png)
	@stale=''; $(foreach f,$(PAPER_FIGS),for d in $(PAPER_DATA_$(f)); do \
	    [ ! $$d -nt figures/$(f).pdf ] || stale="$$stale figures/$(f).pdf (older than $$d)"; done;) \
	if [ -n "$$stale" ]; then echo "paper: stale figures:$$stale; run make figures" >&2; exit 1; fi
	cd paper && latexmk -pdf -g -interaction=nonstopmode -halt-on-error -outdir=build vla-stability.tex
	cp paper/build/vla-stability.pdf $@
deps-paper:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends latexmk \
	    texlive-latex-base texlive-latex-recommended texlive-fonts-recommended poppler-utils

# ---- the main job: `make figures` runs the default experiments into data/ and renders every
# figure into figures/ (PNG and PDF). Each table depends on its program and each figure on its
# tables and script, so a stale figure is remade; the commands are also in every table's header.
# About 10 minutes on 2 idle cores; `make figures-long` takes the state norms to 10^7 steps.
SHARED  ?= ../shared
TRACE   := $(SHARED)/data/lmtrace-seed7
PREC16  := f32 f16 bf16 f16-f32 bf16-f32
MODELS  := la delta rls vla1 vla3
FIGS    := drift guards heatmap jacobian recall statenorm scaling tracks stagnation solvers solvers-cost
TRACKS  := sm smsym joseph chol comp sr # file-name tokens: smsym is --track sm-sym
# the ways of tracking A each precision has (comp: uniform formats; sr: 16-bit storage, f32 arithmetic)
tracks_of = $(filter-out $(if $(filter f16-f32 bf16-f32,$(1)),comp,sr),$(TRACKS))
TRACK_DAT := $(foreach p,$(PREC16),$(foreach t,$(call tracks_of,$(p)),data/tracks-vla3-$(p)-$(t).dat))
DRIFT_DAT := $(foreach p,$(PREC16),data/drift-vla3-$(p)-nudgeon.dat data/drift-vla3-$(p)-nudgeoff.dat) \
             $(foreach p,f64 f32,$(foreach l,1 1e-6,data/drift-rls-$(p)-l$(l).dat))
GUARD_DAT := $(foreach p,$(PREC16),data/guards-vla1-$(p).dat data/guards-rls-$(p).dat)
JAC_RUNS  := vla3-lmlike-f64 vla3-lmlike-f32 vla3-gauss-f64 rls-gauss-f64 vla1-lmlike-f64 vla1-gauss-f64 la-lmlike-f64
JAC_DAT   := $(JAC_RUNS:%=data/jacobian-%.dat)
STATE_DAT := $(MODELS:%=data/statenorm-lmlike-%.dat) $(MODELS:%=data/statenorm-trace-%.dat)
STATE_STEPS ?= 1e6
.PHONY: figures figures-long
.SECONDARY:
figures: $(FIGS:%=figures/%.png)
	@echo "figures: $(FIGS:%=figures/%.png) (and .pdf); tables in data/"
figures-long:
	$(MAKE) STATE_STEPS=1e7 figures figures/statenorm-long.png

# vla3 to 10^7 tokens in five precisions, each beside its binary64 reference, the runs side by
# side in the CPU's vector lanes where the processor has them (the same table as --backend cpu,
# byte for byte; f16 3.8x faster end to end)
STATE_BACKEND ?= $(if $(shell grep -qwE 'avx512f|avx2' /proc/cpuinfo 2>/dev/null && echo y),lanes,cpu)
data/statenorm-long-vla3-%.dat: bin/vla-statenorm
	@mkdir -p data
	bin/vla-statenorm --model vla3 --precision $* --stream lmlike --d 32 --steps 1e7 --runs 8 --ref $(if $(filter f64,$*),none,f64) --backend $(STATE_BACKEND) --out $@
figures/statenorm-long.png: plots/statenorm-long.gp $(foreach p,f64 f32 f16-f32 f16 bf16,data/statenorm-long-vla3-$(p).dat)
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/statenorm-long'" plots/statenorm-long.gp

data/drift-vla3-%-nudgeon.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model vla3 --stream lmlike --d 32 --precision $* --set nudge=on --steps 3e5 --ref f64 --out $@
data/drift-vla3-%-nudgeoff.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model vla3 --stream lmlike --d 32 --precision $* --set nudge=off --steps 3e5 --ref f64 --out $@
# (two rules: a pattern rule with two targets would be one recipe making both)
data/drift-rls-f64-l%.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model rls --stream subspace:4,0.001 --d 32 --precision f64 --set lambda0=$* --steps 1e4 --ref exact --out $@
data/drift-rls-f32-l%.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model rls --stream subspace:4,0.001 --d 32 --precision f32 --set lambda0=$* --steps 1e4 --ref exact --out $@
data/guards-vla1-%.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model vla1 --stream gauss:10 --precision $* --steps 1e5 --ref none --out $@
data/guards-rls-%.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model rls --stream subspace:4,0.001 --set guard=on --set lambda0=1e-3 --precision $* --steps 1e5 --ref none --out $@
data/tracks-vla3-%.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model vla3 --stream lmlike --d 32 --precision $(patsubst %-$(lastword $(subst -, ,$*)),%,$*) --track $(subst smsym,sm-sym,$(lastword $(subst -, ,$*))) --set nudge=off --steps 1e5 --ref f64 --checkpoints 5 --out $@
# time per step of each (precision, way) on one core, beside its drift at t = 10^4
data/tracks-cost.dat: $(TRACK_DAT) bin/vla-scaling
	@mkdir -p data
	@{ echo "# vlastab: time per step (bin/vla-scaling --clock cpu, vla3, d = 32, T = 2000, median of 3)"; \
	   echo "# and a_drift at t = 10^4 in data/tracks-vla3-PREC-TRACK.dat"; \
	   echo "# prec: 1 f32, 2 f16, 3 bf16, 4 f16-f32, 5 bf16-f32; track: 1 sm, 2 sm-sym, 3 joseph, 4 chol, 5 comp, 6 sr"; \
	   echo "# columns: prec track ns_per_step a_drift"; } > $@.tmp
	@pi=0; for p in $(PREC16); do pi=$$((pi+1)); ti=0; for t in $(TRACKS); do ti=$$((ti+1)); \
	    f=data/tracks-vla3-$$p-$$t.dat; test -s $$f || continue; \
	    ns=$$(bin/vla-scaling --models vla3 --precision $$p --track $$(echo $$t | sed s/smsym/sm-sym/) --set nudge=off --ds 32 --Ts 2000 \
	          --repeat 3 --clock cpu --softmax-budget 0.01 | awk '!/^#/ && NF {print $$5; exit}'); \
	    dr=$$(awk '!/^#/ && NF && $$1 == 10000 {print $$2}' $$f); \
	    echo "$$pi $$ti $$ns $$dr" >> $@.tmp; done; done
	mv $@.tmp $@
# ---- keep M and solve (issue 17, docs/math.md 4.7-4.10): vla3 (nudge off) in every precision, the
# ways that track A beside solve, cg:K and cheb:K, without and with forgetting (gamma = 0.999),
# the vector the model uses (x_err) against the reference: lmlike to 10^6 steps (f64: 10^4
# against the exact MPFR reference), gauss and subspace:4,0.001 to 10^5, the real trace (T = 1000,
# exact reference); and for cost against accuracy cg and cheb at several K on lmlike to 10^5.
# Tables data/solvers_STREAM_gGAMMA_PREC_WAY.dat (WAY: cg8 is cg:8), 2 heads each, on the CPU (the
# vector lanes cost as much per head at d = 16: f16 cg:8, 10^5 steps, 3.3 s of CPU for 2 heads
# there, 7.0 s for 4 in the lanes). About 40 minutes of CPU time, 20 on 2 idle cores.
SOLV_PRECS  := f64 f32 f16 bf16 f16-f32 bf16-f32
SOLV_WAYS   := sm solve cg8 cheb8
SOLV_KWAYS  := cg1 cg2 cg4 cg16 cheb4 cheb16 cheb32
SOLV_GAMMAS := 1 0.999
solv_ways_of = $(SOLV_WAYS) $(if $(filter f16-f32 bf16-f32,$(1)),sr)
SOLV_DAT := $(foreach s,lmlike gauss subspace trace,$(foreach g,$(SOLV_GAMMAS),$(foreach p,$(SOLV_PRECS),\
              $(foreach w,$(call solv_ways_of,$(p)),data/solvers_$(s)_g$(g)_$(p)_$(w).dat))))
SOLV_KDAT := $(foreach g,$(SOLV_GAMMAS),$(foreach p,$(filter-out f64,$(SOLV_PRECS)),\
              $(foreach w,$(SOLV_KWAYS),data/solvers_lmlike_g$(g)_$(p)_$(w).dat)))
solv_spec   = $(if $(filter trace,$(1)),trace:$(TRACE)/vla3,$(if $(filter subspace,$(1)),subspace:4$(comma)0.001,$(1)))
solv_track  = $(subst cg,cg:,$(subst cheb,cheb:,$(1)))
solv_steps  = $(if $(filter f64,$(2)),1e4,$(if $(and $(filter lmlike,$(1)),$(filter $(SOLV_WAYS) sr,$(3))),1e6,1e5))
solv_ref    = $(if $(or $(filter f64,$(2)),$(filter trace,$(1))),exact,f64)
comma := ,
# the command of stream $(1), gamma $(2), precision $(3), way $(4)
solv_cmd    = bin/vla-drift --model vla3 --stream $(call solv_spec,$(1)) --d $(if $(filter trace,$(1)),32,16) \
              --precision $(3) --track $(call solv_track,$(4)) --set nudge=off --set gamma=$(2) \
              --steps $(call solv_steps,$(1),$(3),$(4)) --runs 2 --ref $(call solv_ref,$(1),$(3)) --checkpoints 5
data/solvers_%.dat: bin/vla-drift
	@mkdir -p data
	$(call solv_cmd,$(word 1,$(subst _, ,$*)),$(patsubst g%,%,$(word 2,$(subst _, ,$*))),$(word 3,$(subst _, ,$*)),$(word 4,$(subst _, ,$*))) --out $@
# time per step of each (precision, way) on one core at d = 16 and 32, beside x_err at t = 10^5
# (lmlike, the mean over the heads) for both gammas
data/solvers-cost.dat: $(filter data/solvers_lmlike_%,$(SOLV_DAT)) $(SOLV_KDAT) bin/vla-scaling
	@mkdir -p data
	@{ echo "# vlastab: time per step (bin/vla-scaling --clock cpu, vla3, nudge off, T = 2000, median of 3)"; \
	   echo "# and x_err at t = 10^5 (the mean over the heads) in data/solvers_lmlike_gGAMMA_PREC_WAY.dat"; \
	   echo "# prec: 1 f32, 2 f16, 3 bf16, 4 f16-f32, 5 bf16-f32; way: 1 sm, 2 sr, 3 solve, 4..8 cg:1,2,4,8,16, 9..12 cheb:4,8,16,32"; \
	   echo "# columns: prec way gamma ns_d16 ns_d32 x_err"; } > $@.tmp
	@pi=0; for p in f32 f16 bf16 f16-f32 bf16-f32; do pi=$$((pi+1)); wi=0; \
	  for w in sm sr solve cg1 cg2 cg4 cg8 cg16 cheb4 cheb8 cheb16 cheb32; do wi=$$((wi+1)); \
	    tr=$$(echo $$w | sed 's/^cg/cg:/; s/^cheb/cheb:/'); \
	    test -s data/solvers_lmlike_g1_$${p}_$$w.dat || continue; \
	    n16=$$(bin/vla-scaling --models vla3 --precision $$p --track $$tr --set nudge=off --ds 16 --Ts 2000 \
	          --repeat 3 --clock cpu --softmax-budget 0.01 | awk '!/^#/ && NF {print $$5; exit}'); \
	    n32=$$(bin/vla-scaling --models vla3 --precision $$p --track $$tr --set nudge=off --ds 32 --Ts 2000 \
	          --repeat 3 --clock cpu --softmax-budget 0.01 | awk '!/^#/ && NF {print $$5; exit}'); \
	    for g in $(SOLV_GAMMAS); do \
	      e=$$(awk '!/^#/ && NF && $$1 == 100000 {s += $$14; n++} END {if (n) print s / n; else print "nan"}' data/solvers_lmlike_g$${g}_$${p}_$$w.dat); \
	      echo "$$pi $$wi $$g $$n16 $$n32 $$e" >> $@.tmp; done; done; done
	mv $@.tmp $@
figures/solvers.png: plots/solvers.gp $(filter data/solvers_lmlike_%,$(SOLV_DAT))
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/solvers'" plots/solvers.gp
figures/solvers-cost.png: plots/solvers-cost.gp data/solvers-cost.dat
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/solvers-cost'" plots/solvers-cost.gp
STAG_DAT := $(foreach p,f16 bf16,$(foreach s,lmlike gauss,$(foreach d,8 16 32 64,data/stagnation-$(p)-$(s)-d$(d).dat)))
data/stagnation-%.dat: bin/vla-drift
	@mkdir -p data
	bin/vla-drift --model vla3 --precision $(word 1,$(subst -, ,$*)) --stream $(word 2,$(subst -, ,$*)) --d $(patsubst d%,%,$(word 3,$(subst -, ,$*))) --set nudge=off --steps 1e5 --ref none --checkpoints 5 --out $@
data/heatmap-vla3-f32.dat: bin/vla-heatmap
	@mkdir -p data
	bin/vla-heatmap --model vla3 --stream lmlike --d 32 --precision f32 --at 10,1000,100000 --out $@
data/jacobian-%.dat: bin/vla-jacobian
	@mkdir -p data
	bin/vla-jacobian --model $(word 1,$(subst -, ,$*)) --stream $(word 2,$(subst -, ,$*)) --precision $(word 3,$(subst -, ,$*)) --steps 100000 --out $@
data/recall-capacity.dat: bin/vla-recall
	@mkdir -p data
	bin/vla-recall --runs 256 --out $@
data/recall-retention.dat: bin/vla-recall
	@mkdir -p data
	bin/vla-recall --runs 128 --n 8 --gap 0,16,48,112,240,496,1008 --out $@
data/statenorm-lmlike-%.dat: bin/vla-statenorm
	@mkdir -p data
	bin/vla-statenorm --model $* --stream lmlike --d 32 --steps $(STATE_STEPS) --runs 4 --precision f32 --out $@
data/statenorm-trace-la.dat data/statenorm-trace-delta.dat data/statenorm-trace-vla3.dat: data/statenorm-trace-%.dat: bin/vla-statenorm
	@mkdir -p data
	bin/vla-statenorm --model $* --stream trace:$(TRACE)/$* --steps 1000 --runs 4 --precision f32 --checkpoints 20 --out $@
data/statenorm-trace-rls.dat data/statenorm-trace-vla1.dat: data/statenorm-trace-%.dat: bin/vla-statenorm
	@mkdir -p data
	bin/vla-statenorm --model $* --stream trace:$(TRACE)/vla3 --steps 1000 --runs 4 --precision f32 --checkpoints 20 --out $@
data/scaling.dat: bin/vla-scaling
	@mkdir -p data
	bin/vla-scaling --repeat 3 --clock cpu --out $@

figures/drift.png: plots/drift.gp $(DRIFT_DAT)
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/drift'" plots/drift.gp
figures/guards.png: plots/guards.gp $(GUARD_DAT) $(filter %nudgeoff.dat,$(DRIFT_DAT))
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/guards'" plots/guards.gp
figures/heatmap.png: plots/heatmap.gp data/heatmap-vla3-f32.dat
	@mkdir -p figures
	gnuplot -e "in='data/heatmap-vla3-f32.dat'; out='figures/heatmap'" plots/heatmap.gp
figures/jacobian.png: plots/jacobian.gp $(JAC_DAT)
	@mkdir -p figures
	gnuplot -e "in='$(JAC_DAT)'; out='figures/jacobian'" plots/jacobian.gp
figures/recall.png: plots/recall.gp data/recall-capacity.dat data/recall-retention.dat
	@mkdir -p figures
	gnuplot -e "in='data/recall-capacity.dat data/recall-retention.dat'; out='figures/recall'" plots/recall.gp
figures/statenorm.png: plots/statenorm.gp $(STATE_DAT)
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/statenorm'; shared='$(SHARED)'" plots/statenorm.gp
figures/tracks.png: plots/tracks.gp $(TRACK_DAT) data/tracks-cost.dat
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/tracks'" plots/tracks.gp
figures/stagnation.png: plots/stagnation.gp $(STAG_DAT)
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/stagnation'" plots/stagnation.gp
figures/scaling.png: plots/scaling.gp data/scaling.dat
	@mkdir -p figures
	gnuplot -e "dir='data'; out='figures/scaling'" plots/scaling.gp
