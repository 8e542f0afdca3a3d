# ---- make regress (tools/regress/: the suite in regress.c, main in vla-regress.c): every model,
# way of tracking A and precision of a fixed suite against the exact reference, in bits lost,
# compared with the reviewed baseline tests/regress/baseline.tsv; exit 1 when a case lost more than half a bit. `make regress-update`
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
REGRESS_OBJ    := $(BUILD)/tools/regress/vla-regress.o $(BUILD)/tools/regress/regress.o
$(BUILD)/tools/regress/regress.o: ALLCFLAGS += $(OPENMP)
$(BIN)/vla-regress: $(REGRESS_OBJ) $(DOC_OBJ) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a
	@mkdir -p $(@D)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(filter %.o,$^) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
$(CLI_OBJ): ALLCFLAGS += $(OPENMP)
$(BUILD)/plant/%/lib/recur.h: lib/recur.h tests/regress/plants/%.sed $(HDRS) lib/model.c
	@mkdir -p $(@D)/models $(@D)/formats
	cp lib/*.h lib/model.c $(@D)/ && cp lib/models/*.h $(@D)/models/ && cp lib/formats/*.h $(@D)/formats/
	@for f in lib/*.h lib/models/*.h lib/formats/*.h; do sed -f tests/regress/plants/$*.sed $$f > $(@D)/$${f#lib/} || exit 1; done
	@if diff -rq lib $(@D) | grep -q 'differ$$'; then :; else rm -f $@; \
	    echo "plant $*: tests/regress/plants/$*.sed no longer changes recur.h's text (lib/*.h, lib/models/*.h, lib/formats/*.h): update it" >&2; exit 1; fi
$(BUILD)/plant/%/model.o: $(BUILD)/plant/%/lib/recur.h
	$(CC) $(ALLCFLAGS) -c $(@D)/lib/model.c -o $@
$(BUILD)/plant/%/model_simd.o: lib/model_simd.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -DVLA_NO_SIMD -c $< -o $@
$(REGRESS_PLANTS): LIBS := $(KERN_LIBS) $(LIBS)
$(BUILD)/plant/vla-regress-plant%: $(REGRESS_OBJ) $(DOC_OBJ) $(BUILD)/plant/%/model.o \
        $(if $(wildcard lib/model_simd.c),$(BUILD)/plant/%/model_simd.o) $(BUILD)/libvlaref.a \
        $(BUILD)/libvlastab.a $(if $(KERN_LIBS),$(BUILD)/libvlacuda.a)
	$(CC) $(LDSAN) $(OPENMP) -o $@ $(filter %.o,$^) $(BUILD)/libvlaref.a $(BUILD)/libvlastab.a $(LIBS_REF) $(LIBS)
regress: $(BIN)/vla-regress
	$(BIN)/vla-regress $(REGRESS_ARGS)
regress-update: $(BIN)/vla-regress
	@mkdir -p $(BUILD)
	@if [ -f $(REGRESS_BASE) ]; then cp $(REGRESS_BASE) $(BUILD)/regress-old.tsv; else : > $(BUILD)/regress-old.tsv; fi
	$(BIN)/vla-regress --update $(REGRESS_ARGS)
	@diff -u --label 'baseline before' --label 'baseline now' $(BUILD)/regress-old.tsv $(REGRESS_BASE) \
	    && echo "regress-update: the baseline did not change" || true
