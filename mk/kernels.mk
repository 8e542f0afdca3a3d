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
# KERN_INLINE=1: the kernels inline every recur.h function (nvcc 84 s a kernel instead of 16:
# kernels/karith.h), to time the calls' cost on a GPU against the default;
# the stamp recompiles the kernels when it changes
KERN_INLINE ?= 0
$(if $(filter-out 0 1,$(KERN_INLINE)),$(error KERN_INLINE=$(KERN_INLINE): 0 or 1))
KERN_ISTAMP := build/kernels/inline.$(KERN_INLINE)
NVFLAGS    := -O3 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false -std=c++17 \
              -gencode arch=compute_80,code=[sm_90,compute_80] \
              -Xcompiler -fPIC -Ilib -Ikernels $(if $(filter 1,$(KERN_INLINE)),-DVLA_KERN_INLINE)
KERN_POLS  := $(shell echo 'VLA_PRECS(K_)' | $(CC) -E -P -Ilib -include vlalists.h '-DK_(ID,name,sfx,...)=sfx' -x c - 2>/dev/null)
# nvcc knows no sanitizer: the GPU's objects are always the plain build's, which a sanitized build
# links as they are (one nvcc run of each, not two)
GPU_OBJ    := $(KERN_POLS:%=build/kernels/kern_%.o) build/kernels/vlacuda.o
EMU_OBJ    := $(KERN_POLS:%=$(BUILD)/kernels/emu_%.o)
KERN_OBJ   := $(BUILD)/kernels/host.o $(BUILD)/kernels/emu.o $(BUILD)/kernels/emu_sync.o \
              $(BUILD)/lanes/lanes.o $(BUILD)/kernels/kengine.o $(EMU_OBJ) \
              $(if $(KERN_GPU),$(GPU_OBJ),$(BUILD)/kernels/nocuda.o)
KERN_STAMP := $(BUILD)/kernels/config.$(if $(KERN_GPU),cuda,nocuda)
KERN_LIBS  := $(BUILD)/libvlacuda.a $(BUILD)/libvlastab.a \
              $(if $(KERN_GPU),-L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++) -lpthread
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(if $(KERN_POLS),,$(error no policies read from lib/vlalists.h's VLA_PRECS with $(CC) -E))
$(info kernels: $(if $(KERN_GPU),CUDA built with $(NVCC) (sm_90 + compute_80 PTX); GPU tests run where a device is,CUDA skipped ($(if $(filter 0,$(CUDA)),CUDA=0,nvcc not found)): stub + host-thread emulation only); bench: make bench)
endif
.PHONY: bench
# (vla-sweep links nothing of ours: it waits for none of this, so that make figures' sweep rules,
# made before its tables, do not build the kernels first, one file at a time)
KERN_USERS := $(BUILD)/tests/run $(filter-out $(BIN)/vla-sweep,$(PROGS))
$(KERN_USERS) $(BIN)/vla-bench: $(BUILD)/libvlacuda.a
$(KERN_USERS): LIBS := $(KERN_LIBS) $(LIBS)
$(BUILD)/kernels/host.o $(BUILD)/lanes/lanes.o $(BUILD)/kernels/kengine.o $(BUILD)/bench/bench.o $(BUILD)/lib/engine.o: ALLCFLAGS += $(OPENMP)
$(EMU_OBJ): $(BUILD)/kernels/emu_%.o: kernels/emu_block.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -DPOL=$* -c $< -o $@
$(KERN_ISTAMP):
	@mkdir -p $(@D) && rm -f build/kernels/inline.* && touch $@
$(filter build/kernels/kern_%,$(GPU_OBJ)): build/kernels/kern_%.o: kernels/kern.cu $(KERN_ISTAMP)
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
# the production case (bench/production.sh): BENCH_SCALE="H T d", 4 2048 64 by default (12 minutes
# on 2 cores); the production layer, "16 32768 128", takes hours there (its MPFR reference); none
# skips it
BENCH_SCALE ?= 4 2048 64
bench: $(BIN)/vla-bench $(BIN)/vla-check
	$(BIN)/vla-bench $(BENCH_ARGS)
	$(if $(filter none,$(BENCH_SCALE)),,bench/production.sh $(BENCH_SCALE))
