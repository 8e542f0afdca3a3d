# ---- vla-sweep (tools/sweep/, sweeps/): parameter sweeps on this machine, under MPI or as a Slurm
# job array: a parser (parse.c), a runner (run.c), one file per scheduler (local.c, mpi.c, slurm.c),
# main (vla-sweep.c) and the exits and memory they all call (util.c). Its own program, linking
# nothing of ours, so that building it with mpicc cannot disturb the others. MPI=auto compiles mpi.c with mpicc when found and links with it (for
# `mpirun -np N bin/vla-sweep --mpi FILE`), MPI=0 builds all with $(CC) and --mpi then says so;
# the stamp rebuilds mpi.o when that changes.
MPI         ?= auto
MPICC       ?= $(shell command -v mpicc 2>/dev/null)
SWEEP_MPI   := $(if $(filter 0,$(MPI)),,$(MPICC))
SWEEP_STAMP := $(BUILD)/tools/sweep/sweep.$(if $(SWEEP_MPI),mpi,nompi)
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(info sweep: $(if $(SWEEP_MPI),MPI built with $(SWEEP_MPI),MPI skipped ($(if $(filter 0,$(MPI)),MPI=0,mpicc not found: make deps))))
endif
$(SWEEP_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/tools/sweep/sweep.* && touch $@
SWEEP_OBJ   := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/sweep/*.c))
$(BUILD)/tools/sweep/mpi.o: tools/sweep/mpi.c $(SWEEP_STAMP)
	@mkdir -p $(@D)
	$(if $(SWEEP_MPI),$(SWEEP_MPI) -DVLA_SWEEP_MPI,$(CC)) $(ALLCFLAGS) -c $< -o $@
$(BIN)/vla-sweep: $(SWEEP_OBJ) $(DOC_OBJ)
	@mkdir -p $(@D)
	$(or $(SWEEP_MPI),$(CC)) $(LDSAN) -o $@ $(filter %.o,$^)

# ---- the cluster path for real: tests/test_slurm.sh starts a one-node Slurm by hand (slurm-wlm
# and munge, from make deps; no systemd) under a scratch folder, gives it the job arrays vla-sweep
# --slurm writes, and stops it. About 20 s; as root; skips, saying why, where Slurm cannot start
# (VLA_TEST_SLURM=require, which .ci/run sets, fails instead).
.PHONY: test-slurm
test-slurm: $(BIN)/vla-sweep $(BIN)/vla-statenorm
	@VLA_BIN_DIR=$(BIN) bash tests/test_slurm.sh
