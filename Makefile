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
ALLCFLAGS = -std=gnu11 $(WARN) $(FPFLAGS) -fPIC -Ilib -Ireference -Iexperiments -DVLA_GIT='"$(GIT)"' $(CFLAGS)
ifeq ($(SAN),1)
ALLCFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDSAN     = -fsanitize=address,undefined
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
CLI_SRC  := experiments/cli.c
PROG_SRC := $(wildcard experiments/vla-*.c)
PROGS    := $(PROG_SRC:experiments/%.c=bin/%)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
REF_OBJ  := $(REF_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
HDRS     := $(wildcard lib/*.h reference/*.h tests/*.h experiments/*.h)

.PHONY: all test test-san deps clean
all: $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(BUILD)/tests/run $(PROGS)
	@echo "built: libvlastab, libvlaref, tests, $(words $(PROGS)) programs in bin/$(if $(OPENMP), (OpenMP),)"

$(BUILD)/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -c $< -o $@

# fast mode: the same model template, compiled with fma contraction allowed
$(BUILD)/lib/model_fast.o: lib/model_fast.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(FASTFLAGS) -c $< -o $@

$(BUILD)/libvlastab.a: $(LIB_OBJ)
	ar rcs $@ $^
$(BUILD)/libvlaref.a: $(REF_OBJ)
	ar rcs $@ $^

bin/%: $(BUILD)/experiments/%.o $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p bin
	$(CC) $(LDSAN) $(OPENMP) -o $@ $< $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)

$(BUILD)/experiments/%.o: experiments/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(OPENMP) -c $< -o $@

$(BUILD)/tests/run: $(TEST_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(TEST_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)

test: $(BUILD)/tests/run
	VLA_SHARED=$(abspath ../shared) $(BUILD)/tests/run

test-san:
	$(MAKE) SAN=1 test

deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	    build-essential libmpfr-dev libgmp-dev liblapacke-dev liblapack-dev libblas-dev \
	    libgsl-dev gnuplot-nox

clean:
	rm -rf build build-san bin
