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
PY_SRC     := $(sort $(wildcard tools/python/vlastab/*.py) $(ABI_PY))
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

install: $(ALL_PROGS) $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS) man $(ABI_PY)
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
	@$(INSTALL_SAYS)
# uninstall removes what this tree installs and what the install it undoes recorded, so a program
# renamed since is not left behind
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) \
	    $$(sed 's|^|$(DESTDIR)|' $(DESTDIR)$(DATADIR)/vlastab/installed 2>/dev/null)
	rmdir $(DESTDIR)$(DATADIR)/vlastab/plots $(DESTDIR)$(DATADIR)/vlastab $(DESTDIR)$(DOCDIR)/examples \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(INCLUDEDIR)/vlastab $(DESTDIR)$(PYTHONDIR)/vlastab 2>/dev/null || true
	$(LDCONFIG)
# where each part went, and the variables to set where a folder is not on its default path (a
# staged install's paths are those of the installed system, DESTDIR left out)
INSTALL_SAYS = printf '%s\n' \
    "installed under $(PREFIX)$(if $(DESTDIR), (staged in DESTDIR=$(DESTDIR))):" \
    "  programs     $(BINDIR) ($(words $(ALL_PROGS)): $(notdir $(firstword $(ALL_PROGS))) ... $(notdir $(lastword $(ALL_PROGS))))" \
    "  libraries    $(LIBDIR) (libvlastab and libvlaref, .a and .so.$(VERSION))" \
    "  headers      $(INCLUDEDIR)/vlastab" \
    "  pkg-config   $(LIBDIR)/pkgconfig (vlastab.pc, vlaref.pc)" \
    "  man pages    $(MANDIR)/man1 ($(words $(MAN1)) programs), $(MANDIR)/man7/vlastab.7" \
    "  plots, docs  $(DATADIR)/vlastab/plots, $(DOCDIR)" \
    "  Python       $(PYTHONDIR)/vlastab (import vlastab, for $(PYTHON); it loads $(LIBDIR)/libvlastab.so.$(SOVERSION))"; \
    h=; case ":$$PATH:" in *":$(BINDIR):"*) ;; *) h="$$h  export PATH=$(BINDIR):\$$PATH\n";; esac; \
    $(PYTHON) -c 'import sys; sys.exit("$(PYTHONDIR)" not in sys.path)' 2>/dev/null || \
        h="$$h  export PYTHONPATH=$(PYTHONDIR)\n"; \
    case ":$$(pkg-config --variable pc_path pkg-config 2>/dev/null):" in *":$(LIBDIR)/pkgconfig:"*) ;; \
        *) h="$$h  export PKG_CONFIG_PATH=$(LIBDIR)/pkgconfig\n";; esac; \
    [ -z "$$h" ] || printf 'not on the default paths; to use them, set:\n%b' "$$h"
# the loader finds a library in LIBDIR only through ldconfig's cache; a staged (DESTDIR) install
# leaves that to the package
LDCONFIG    = @if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# `pip install .` (setup.py): the shared library and the programs it ships inside the Python
# package (and _abi.py, which setup.py's build_py copies with the package's other modules);
# pip-names names them for setup.py, one line after make's own
PIP_SHIPS  := $(BUILD)/libvlastab.so.$(VERSION) $(ALL_PROGS)
.PHONY: pip-build pip-names
pip-build: $(PIP_SHIPS) $(ABI_PY)
pip-names:
	@echo 'pip-ships: $(PIP_SHIPS)'

# VLA_MAKE, not $(MAKE), in the recipe: make -n runs a line naming $(MAKE), and would run the test
VLA_MAKE   := $(MAKE)
test-install: $(ALL_PROGS) $(BUILD)/libvlastab.a $(BUILD)/libvlaref.a $(SHLIBS) man
	@MAKE='$(VLA_MAKE)' CC='$(CC)' VERSION='$(VERSION)' SOVERSION='$(SOVERSION)' GIT='$(GIT)' PYTHON='$(PYTHON)' \
	    PROGS='$(notdir $(ALL_PROGS))' sh tests/test_install.sh
