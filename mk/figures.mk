# ---- the figures (`make figures`, plots/) and the paper (`make paper`, paper/). sweeps/paper.sweep
# lists every table of the figures with its command: the one list of the grid. $(SWEEP_MK) turns its
# case list (bin/vla-sweep --dry-run) into one rule per table, so that make and vla-sweep make the
# same tables with the same commands (tests/test_grid.sh checks it). A table depends on its program,
# so a changed program remakes it, except the 10^7-token tables of figures-long (40 minutes), which
# are made only when missing. Each figure depends on the tables whose case names FIG_TABLES_<figure>
# matches, and plots/<figure>.gp draws it in two sizes, a double-column (7 in) and a single-column
# (3.4 in, NAME-1col) figure, each as PDF and PNG. Figures go to $(FIGDIR) and data to $(DATA), both
# outside the tracked tree: make figures never dirties the commit that its tables and the paper
# name. `make readme-update` copies the README's figures into docs/figures/, the claims table into
# the README and the tracks, stagnation and solvers tables into docs/findings.md, from the paper's,
# for a commit. Where make figures' time goes, table by table: bench/README.md, "make figures: where
# its time goes"; figures-long's tables (the 10^7-token runs, solvers-long, cachelong, cplong) take
# about two hours more on 2 cores.
DATA      ?= data
FIGDIR    ?= figures
SHARED    ?= ../shared
SWEEP     := sweeps/paper.sweep
SWEEP_MK  := $(BUILD)/paper-sweep.mk
FIGS      := statenorm drift tracks stagnation guards jacobian recall scaling heatmap solvers \
             solvers-cost forms-chunk forms-ut forms-scan gated newmodels safegate grad half cache cp
FIGS_LONG := statenorm-long solvers-long cache-long cplong
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
FIG_TABLES_cache-long     := cachelong-%
FIG_TABLES_forms-chunk    := forms-chunk-%
FIG_TABLES_forms-ut       := forms-ut
FIG_TABLES_forms-scan     := forms-scan-%
FIG_TABLES_gated          := gated-%
FIG_TABLES_newmodels      := newmodels-%
FIG_TABLES_safegate       := safegate-%
FIG_TABLES_grad           := grad-%
FIG_TABLES_half           := half-%
FIG_TABLES_cache          := cache-% half-spark-gdn-% decode-%
FIG_TABLES_cp             := cp-%
FIG_TABLES_cplong         := cplong-%
fig_tables = $(filter $(FIG_TABLES_$(1):%=$(DATA)/%.dat),$(SWEEP_TABLES))
fig_files  = $(foreach x,png pdf,$(FIGDIR)/$(1).$(x) $(FIGDIR)/$(1)-1col.$(x))
# a table's prerequisite on its program: order-only for the long ones
table_prog = $(if $(filter $(foreach f,$(FIGS_LONG),$(FIG_TABLES_$(f))),$(1)),| )$(2)
.PHONY: figures figures-all figures-long figures-list paper deps-paper readme-update test-grid
# (not for `figures` itself: the sub-make below reads it, so that the build runs under its -j)
ifneq ($(filter figures-all figures-long figures-list paper readme-update $(DATA)/% $(FIGDIR)/% paper/%,$(MAKECMDGOALS)),)
include $(SWEEP_MK)
endif
# make figures runs its tables FIG_JOBS at a time (every processor) unless make was given -j (make
# -j1 figures: one at a time). The timings (the sweep's alone sections, SWEEP_ALONE) run one at a
# time after every other table of the figures, so that no table shares their cores, as vla-sweep
# runs them.
FIG_JOBS  ?= $(shell nproc 2>/dev/null || echo 1)
ifneq ($(filter figures-all,$(MAKECMDGOALS)),)
fig_rest  := $(filter-out $(SWEEP_ALONE),$(foreach f,$(FIGS),$(call fig_tables,$(f))))
$(foreach t,$(filter $(SWEEP_ALONE),$(foreach f,$(FIGS),$(call fig_tables,$(f)))),\
    $(eval $(t): | $(fig_rest))$(eval fig_rest := $(t)))
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

figures:
	+@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(FIG_JOBS)) figures-all
# the tables that a script makes, not a program of the sweep: claim 10e's (state-spaces/mamba issue
# 1017's setting, tools/mamba3-1017.py, 2 s), read by paper/gen-numbers.sh
SCRIPT_TABLES := $(DATA)/mamba3-1017.dat
$(DATA)/mamba3-1017.dat: tools/mamba3-1017.py tests/test_mamba3.py $(SHLIBS) $(ABI_PY)
	@mkdir -p $(@D)
	$(PYTHON) tools/mamba3-1017.py --out $@ > /dev/null

figures-all: $(foreach f,$(FIGS),$(call fig_files,$(f))) $(SCRIPT_TABLES)
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
PAPER_DATA  = $(foreach f,$(PAPER_FIGS),$(call fig_tables,$(f))) $(SCRIPT_TABLES)
PAPER_TRACE := $(SHARED)/data/lmtrace-seed7/exp2_final.json
PAPER_GEN   := $(foreach f,numbers.tex claims.tex runs.tex tracks.tex stagnation.tex solvers.tex claims.md \
               tracks.md stagnation.md solvers.md,paper/generated/$(f))
$(PAPER_GEN) &: paper/gen-numbers.sh $(PAPER_DATA) $(PAPER_TRACE)
	sh paper/gen-numbers.sh $(DATA) $(SHARED) paper/generated
# make paper without TeX stops before any table is made, saying what installs it
ifneq ($(filter paper,$(MAKECMDGOALS)),)
ifeq ($(shell command -v latexmk),)
$(error make paper needs latexmk, which is not installed: run 'make deps-paper' (as root) for Debian's TeX)
endif
endif
paper: paper/vla-stability.pdf
paper/vla-stability.pdf: paper/vla-stability.tex $(PAPER_GEN) $(PAPER_FIGS:%=$(FIGDIR)/%.pdf)
	cd paper && TEXINPUTS='$(abspath $(FIGDIR))/:' latexmk -pdf -g -interaction=nonstopmode -halt-on-error -outdir=build vla-stability.tex
	cp paper/build/vla-stability.pdf $@
	@sh paper/gen-numbers.sh --check-readme paper/generated $(README_PAGES)
deps-paper:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends latexmk \
	    texlive-latex-base texlive-latex-recommended texlive-fonts-recommended poppler-utils

# the README's snapshot: its figures as make figures (and figures-long) drew them, and the claims,
# tracks, stagnation and solvers tables as the paper has them
README_FIGS := $(FIGS) $(PAPER_LONG)
# the pages that hold the tables: the claims table the README, the others docs/findings.md
README_PAGES := README.md docs/findings.md
readme-update: $(README_FIGS:%=$(FIGDIR)/%.png) $(PAPER_GEN)
	@mkdir -p docs/figures
	cp $(README_FIGS:%=$(FIGDIR)/%.png) docs/figures/
	sh paper/gen-numbers.sh --splice-readme paper/generated $(README_PAGES)

# make and the sweep file agree: every table make figures and figures-long make is a case of the
# sweep, with the sweep's command, and every case feeds a figure
test-grid: bin/vla-sweep
	@MAKE='$(VLA_MAKE)' sh tests/test_grid.sh
