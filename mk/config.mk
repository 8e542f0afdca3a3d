# mk/config.mk: the compilers and their flags, what this machine has (OpenMP, fma), the
# sources and the objects and programs they make. Read first: the other mk/ files use its names.

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
INC_gen         := -Ilib
INC_reference   := -Ilib -Ireference
INC_kernels     := -Ilib -Ikernels
INC_lanes       := -Ilib -Ikernels -Ilanes
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
CLI_SRC  := experiments/cli.c experiments/doc.c experiments/drive.c experiments/ckpt.c \
            experiments/summary.c experiments/gnuplot.c experiments/signals.c
PROG_SRC := $(wildcard experiments/vla-*.c)
# the tools, each in a folder of its own: the sweep runner and the regression check
TOOL_SRC := tools/sweep/vla-sweep.c tools/regress/vla-regress.c
# the programs go to bin/; a sanitized build's to build-san/bin/, which its tests run
BIN      := $(if $(filter 1,$(SAN)),$(BUILD)/bin,bin)
PROGS    := $(PROG_SRC:experiments/%.c=$(BIN)/%) $(patsubst %.c,$(BIN)/%,$(notdir $(TOOL_SRC)))
# every program a user runs, vla-bench included: installed, each with its page
ALL_PROGS := $(PROGS) $(BIN)/vla-bench
# the Python binding's structures and constants (vlastab/_abi.py), made from lib/vlastab.h by
# tools/python/mkabi.py, and the C file that checks them field by field, compiled into libvlastab
ABI_PY   := tools/python/vlastab/_abi.py
ABI_C    := $(BUILD)/gen/abi.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(ABI_C:.c=.o)
REF_OBJ  := $(REF_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
# vla-check's own files beside its main: the references it runs, its reports, the judge of a kernel
CHECK_SRC := experiments/refrun.c experiments/report.c experiments/judge.c experiments/states.c
CHECK_OBJ := $(CHECK_SRC:%.c=$(BUILD)/%.o)
# what every program's page and summary line are made with (doc.h, summary.h): libc only
DOC_OBJ  := $(BUILD)/experiments/doc.o $(BUILD)/experiments/summary.o
# headers: the C and nvcc objects' dependencies come from -MMD alone (a header rebuilds what
# includes it); the fuzz build, which writes none, depends on these
HDRS     := $(wildcard lib/*.h lib/models/*.h lib/formats/*.h reference/*.h tests/*.h experiments/*.h)

VLA_TEST_SCALE ?= 1
# the interpreter with numpy and torch (Debian's python3-numpy, python3-torch): not the first python3
# on PATH, which may be a build without them; the Python tests skip, saying why, where it lacks them
PYTHON ?= /usr/bin/python3
