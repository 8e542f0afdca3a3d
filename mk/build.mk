# mk/build.mk: the libraries (libvlastab, libvlaref), the programs of experiments/ and the test
# binary.

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -c $< -o $@

# fast mode: the same model template, compiled with fma contraction allowed
$(BUILD)/lib/model_fast.o: lib/model_fast.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(FASTFLAGS) -c $< -o $@

# the binding's _abi.py and the compiler's check of it (the offset, size and type of every field,
# the value of every constant), both read from the public header: a reading the compiler does not
# share stops the build at abi.o
$(ABI_C) $(ABI_PY) &: tools/python/mkabi.py lib/vlastab.h lib/vlalists.h
	$(PYTHON) tools/python/mkabi.py --cc '$(CC)' lib/vlastab.h $(ABI_PY) $(ABI_C)
$(ABI_C:.c=.o): $(ABI_C)
	$(CC) $(ALLCFLAGS) -c $< -o $@

$(BUILD)/libvlastab.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libvlaref.a: $(REF_OBJ)
	rm -f $@ && ar rcs $@ $^

# the programs' objects are kept: deleted as intermediates, they would be rebuilt, the programs
# relinked and every table of make figures made again at the next make
.SECONDARY: $(PROG_SRC:%.c=$(BUILD)/%.o)
$(BIN)/%: $(BUILD)/experiments/%.o $(CLI_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p $(@D)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $< $(CLI_OBJ) $(filter $(CHECK_OBJ),$^) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
$(BIN)/vla-check: $(CHECK_OBJ)

$(BUILD)/experiments/%.o: experiments/%.c
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(OPENMP) -c $< -o $@

# the tests link the regression suite's library (tests/test_regress.c runs a slice of it)
$(BUILD)/tests/run: $(TEST_OBJ) $(BUILD)/experiments/summary.o $(BUILD)/tools/regress/regress.o $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(TEST_OBJ) $(BUILD)/experiments/summary.o $(BUILD)/tools/regress/regress.o $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
