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
