#!/bin/sh
# test_install.sh: `make install` into a scratch DESTDIR, then use the result as a user would:
# pkg-config, the example built against the installed shared library, libvlaref, an installed
# program run outside the source tree (does its header still name the version and commit?), the
# man pages against --help, and `make uninstall` leaving nothing behind. Run by `make test`
# (make test-install alone), which passes MAKE, CC, VERSION, SOVERSION, GIT and PROGS.
# Prints only failures, then "test_install: N passed, N failed".
set -u
MAKE=${MAKE:-make}
CC=${CC:-cc}
: "${VERSION:?} ${SOVERSION:?} ${GIT:?} ${PROGS:?}"
repo=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vlastab-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# a prefix that exists nowhere: a path that resolves to it instead of the DESTDIR copy fails
prefix=/opt/vlastab-test-$$
dest=$tmp/root
root=$dest$prefix
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "test_install: FAIL $*" >&2
}
check() { # check WHAT COMMAND...: the command's status decides
    what=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then ok; else bad "$what"; sed 's/^/    /' "$tmp/out" | head -20 >&2; fi
}
finish() {
    echo "test_install: $pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}

if ! "$MAKE" install DESTDIR="$dest" PREFIX="$prefix" >"$tmp/install.log" 2>&1; then
    bad "make install DESTDIR=$dest PREFIX=$prefix"
    tail -20 "$tmp/install.log" >&2
    finish
fi
ok

# ---- make install says where each part went, and what to set: $prefix is on no default path ----
says() { grep -qF -- "$1" "$tmp/install.log" || { echo "not in make install's output: $1"; return 1; }; }
for part in "programs     $prefix/bin" "libraries    $prefix/lib" "headers      $prefix/include/vlastab" \
    "pkg-config   $prefix/lib/pkgconfig" "man pages    $prefix/share/man/man1" "$prefix/share/man/man7/vlastab.7" \
    "Python       $prefix/lib/python" "export PATH=$prefix/bin:" "export PYTHONPATH=$prefix/lib/python" \
    "export PKG_CONFIG_PATH=$prefix/lib/pkgconfig"; do
    check "make install says '$part'" says "$part"
done

# ---- the files, where a user and the loader look for them ----
for p in $PROGS; do
    check "bin/$p is installed" test -x "$root/bin/$p"
    check "share/man/man1/$p.1 is installed" test -s "$root/share/man/man1/$p.1"
done
for l in vlastab vlaref; do
    check "lib$l.a" test -s "$root/lib/lib$l.a"
    check "lib$l.so.$VERSION" test -f "$root/lib/lib$l.so.$VERSION"
    check "lib$l.so.$SOVERSION -> lib$l.so.$VERSION" \
        test "$(readlink "$root/lib/lib$l.so.$SOVERSION")" = "lib$l.so.$VERSION"
    check "lib$l.so -> lib$l.so.$SOVERSION" test "$(readlink "$root/lib/lib$l.so")" = "lib$l.so.$SOVERSION"
    check "lib$l.so's soname is lib$l.so.$SOVERSION" \
        sh -c "readelf -d '$root/lib/lib$l.so.$VERSION' | grep -q 'SONAME.*\[lib$l.so.$SOVERSION\]'"
    check "include/vlastab/$l.h" test -s "$root/include/vlastab/$l.h"
    check "lib/pkgconfig/$l.pc" test -s "$root/lib/pkgconfig/$l.pc"
done
check "libvlaref.so needs libvlastab.so.$SOVERSION and MPFR (it names its own dependencies)" \
    sh -c "readelf -d '$root/lib/libvlaref.so.$VERSION' | grep -q 'NEEDED.*libvlastab.so.$SOVERSION' &&
           readelf -d '$root/lib/libvlaref.so.$VERSION' | grep -q 'NEEDED.*libmpfr'"
check "share/man/man7/vlastab.7" test -s "$root/share/man/man7/vlastab.7"
check "share/doc/vlastab/examples/vla3_own_inputs.c" test -s "$root/share/doc/vlastab/examples/vla3_own_inputs.c"
for g in "$repo"/docs/*.md; do
    check "share/doc/vlastab/${g##*/}" cmp -s "$g" "$root/share/doc/vlastab/${g##*/}"
done
for g in "$repo"/plots/*.gp; do
    [ -e "$g" ] || continue
    check "share/vlastab/plots/${g##*/}" cmp -s "$g" "$root/share/vlastab/plots/${g##*/}"
done

# ---- the Python package, importable from the install, loading the installed library ----
py=${PYTHON:-/usr/bin/python3}
pyinit=$(cd "$root" && find lib -path '*/dist-packages/vlastab/__init__.py' | head -1)
check "lib/pythonX.Y/dist-packages/vlastab is installed" test -n "$pyinit"
[ -n "$pyinit" ] && check "the installed vlastab/_abi.py is make's, from lib/vlastab.h" \
    cmp -s tools/python/vlastab/_abi.py "$root/${pyinit%__init__.py}_abi.py"
[ -n "$pyinit" ] && check "the installed vlastab/programs.py names the programs' folder (judge() finds vla-check)" \
    sh -c "test -s '$root/${pyinit%__init__.py}programs.py' && ! grep -q @BINDIR@ '$root/${pyinit%__init__.py}programs.py'"
if [ -n "$pyinit" ] && "$py" -c 'import numpy' 2>/dev/null; then
    check "the installed binding runs vla3 in f16 on the staged library" \
        env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root/${pyinit%/vlastab/__init__.py}" \
            LD_LIBRARY_PATH="$root/lib" "$py" -c 'import numpy as np, vlastab
x = np.full((1, 5, 4), 0.25)
r = vlastab.run(x, x, x, model="vla3", precision="f16")
assert r["o"].shape == (1, 5, 4) and np.isfinite(r["o"]).all(), r'
fi

# ---- pkg-config, as a user's build sees it; the sysroot maps $prefix into the DESTDIR copy ----
if ! command -v pkg-config >/dev/null; then
    echo "test_install: SKIP pkg-config, the example and libvlaref: pkg-config not found (make deps installs it)" >&2
else
    export PKG_CONFIG_PATH="$root/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
    check "pkg-config --modversion vlastab is $VERSION" test "$(pkg-config --modversion vlastab)" = "$VERSION"
    check "pkg-config --cflags vlastab points into the install" \
        test "$(echo $(pkg-config --cflags vlastab))" = "-I$root/include/vlastab"
    check "pkg-config --static --libs vlaref names MPFR, GMP, LAPACKE and libm" \
        sh -c 'l=$(pkg-config --static --libs vlaref); for x in -lvlaref -lvlastab -lmpfr -lgmp -llapacke -lm; do
                   case " $l " in *" $x "*) ;; *) echo "missing $x in: $l"; exit 1;; esac; done'
    # without the sysroot, libdir follows --define-variable=prefix: the .pc files are relocatable
    check "vlastab.pc is relocatable (libdir, includedir under \${prefix})" \
        test "$(echo $(PKG_CONFIG_SYSROOT_DIR= pkg-config --define-variable=prefix=/x --libs-only-L vlastab))" = "-L/x/lib"

    # the example, from its installed copy, strict C11, linked to the installed shared library
    ex=$tmp/vla3_own_inputs
    if check "the example builds with \$(pkg-config --cflags --libs vlastab)" \
        sh -c "$CC -std=c11 -pedantic -Wall -Wextra -Werror -o '$ex' \
                   '$root/share/doc/vlastab/examples/vla3_own_inputs.c' \
                   \$(pkg-config --cflags --libs vlastab) -Wl,-rpath,'$root/lib'"; then
        check "the example loads the installed libvlastab.so.$SOVERSION" \
            sh -c "readelf -d '$ex' | grep -q 'NEEDED.*libvlastab.so.$SOVERSION' &&
                   ldd '$ex' | grep -q '$root/lib/libvlastab.so.$SOVERSION'"
        # the same stream through the example (shared library) and vla-statenorm (static): the
        # same bits, so the example drives the model as the programs' driver does
        (cd "$tmp" && "$ex" -p f32 -d 8 -n 300 -w inputs.txt >ex.out 2>&1)
        (cd "$tmp" && "$root/bin/vla-statenorm" --precision f32 --d 8 --steps 300 --checkpoints 1 >sn.dat 2>&1)
        mine=$(sed -n 's/.* s_fro=\([^ ]*\) .*/\1/p' "$tmp/ex.out")
        theirs=$(awk '!/^#/ && NF { v = $2 } END { print v }' "$tmp/sn.dat")
        check "example ||S||_F ($mine) = vla-statenorm's s_fro at t = 300 ($theirs)" \
            awk -v a="$mine" -v b="$theirs" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }'
        # the inputs written out and read back: the file format round-trips every bit
        (cd "$tmp" && "$ex" -p f32 -d 8 inputs.txt >ex2.out 2>&1)
        check "example: the -w inputs read back give the same ||S||_F" \
            sh -c "grep -q 'steps=300 s_fro=$mine ' '$tmp/ex2.out'"
        sed '7s/^[^ ]*/nan/' "$tmp/inputs.txt" >"$tmp/nan.txt"
        head -3 "$tmp/inputs.txt" | sed '2s/ [^ ]*$//' >"$tmp/short.txt"
        check "example: a NaN input is a one-line error naming the line, status 1" \
            sh -c "cd '$tmp'; '$ex' nan.txt 2>err; [ \$? = 1 ] && grep -q 'nan.txt:7: NaN' err"
        check "example: a short line is a one-line error naming the line, status 1" \
            sh -c "cd '$tmp'; '$ex' short.txt 2>err; [ \$? = 1 ] && grep -q 'short.txt:2: too few' err"
    fi

    # libvlaref through its package: an MPFR model driven through the vla_model interface
    cat >"$tmp/ref.c" <<'EOF'
#include <vlaref.h>
#include <stdio.h>
int main(void)
{
    vla_config cfg;
    vla_model *m;
    double q[4] = {0.1, -0.2, 0.3, 0.4}, S[16];
    vla_config_default(&cfg, VLA_VLA3, 4);
    if (vref_model_new(&m, &cfg, VREF_EXACT, 128))
        return 1;
    vla_input in = {.q = q, .k = q, .v = q, .u = q, .beta = 0, .decay = 0};
    int e = vla_model_step(m, &in) || vla_model_get(m, VLA_Q_S, S);
    printf("%.17g\n", vla_fro(S, 16));
    vla_model_free(m);
    return e || !(vla_fro(S, 16) > 0);
}
EOF
    check "a program using libvlaref builds with \$(pkg-config --cflags --libs vlaref) and runs" \
        sh -c "$CC -std=c11 -Wall -Wextra -Werror -o '$tmp/ref' '$tmp/ref.c' \
                   \$(pkg-config --cflags --libs vlaref) -Wl,-rpath,'$root/lib' && '$tmp/ref'"
    check "... and statically, with \$(pkg-config --static --libs vlaref)" \
        sh -c "$CC -std=c11 -o '$tmp/ref-static' '$tmp/ref.c' \$(pkg-config --cflags vlaref) \
                   \$(pkg-config --static --libs vlaref | sed 's/-l\\(vla[a-z]*\\)/-l:lib\\1.a/g') &&
               ! readelf -d '$tmp/ref-static' | grep -q 'NEEDED.*libvla' && '$tmp/ref-static'"
fi

# ---- an installed program, outside the tree, with nothing from the environment: the version
# and the commit come from the build, not from the directory it runs in ----
mkdir -p "$tmp/elsewhere"
(cd "$tmp/elsewhere" && env -i PATH=/usr/bin:/bin "$root/bin/vla-statenorm" --d 4 --steps 10 >run.dat 2>&1)
check "installed vla-statenorm, run outside the tree, writes '# vlastab $VERSION'" \
    grep -qx "# vlastab $VERSION" "$tmp/elsewhere/run.dat"
check "... and '# git: $GIT' (the commit it was built from)" grep -qx "# git: $GIT" "$tmp/elsewhere/run.dat"
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
    check "the commit is known in a git checkout (not 'unknown')" test "$GIT" != unknown
    check "... and names a commit of the repository" \
        git -C "$repo" rev-parse -q --verify "${GIT%-dirty}^{commit}"
fi

# ---- --version and the man pages against --help ----
# roff -> the words a reader sees: requests dropped, escapes resolved, whitespace collapsed
deroff() {
    sed -e '/^\.\\"/d' -e 's/^\.[A-Za-z][A-Za-z]* *//' -e 's/\\f[BIRP]//g' -e 's/\\&//g' \
        -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\e/\\/g' "$1" | tr -s ' \n\t' '   '
}
roff_name() { printf '%s' "$1" | sed 's/-/\\-/g'; }
# the installed page is the program's own --man but for the NAME phrase, which the Makefile sets
page_is_man() {
    sed '/^\.SH NAME/{n;d;}' "$1" >"$tmp/a"
    sed '/^\.SH NAME/{n;d;}' "$2" >"$tmp/b"
    diff "$tmp/a" "$tmp/b"
}
name_line() { # PAGE PROG: "prog \- phrase", on one line
    line=$(sed -n '/^\.SH NAME/{n;p;}' "$1")
    case $line in "$(roff_name "$2") \- "?*) ;; *) echo "NAME: $line"; return 1 ;; esac
}
help_in_page() { # HELP TEXT: every line of --help, word for word (its headings aside)
    sed -e 's/^Usage: //' -e '/^[A-Z][a-z ]*:$/d' "$1" | tr -s ' \t' '  ' |
        sed 's/^ //; s/ $//' | while IFS= read -r w; do
            [ -z "$w" ] || grep -qF -- "$w" "$2" || echo "not in the page: $w"
        done >"$tmp/missing"
    [ ! -s "$tmp/missing" ] || { cat "$tmp/missing"; return 1; }
}
same_options() { # HELP PAGE: and the page has no option that --help lacks
    grep -o '^  --[A-Za-z0-9-]*' "$1" | sed 's/^ *//' | sort >"$tmp/o1"
    grep '^\\fB\\-\\-' "$2" | sed -e 's/\\-/-/g' -e 's/^\\fB\(--[A-Za-z0-9-]*\).*/\1/' | sort >"$tmp/o2"
    diff "$tmp/o1" "$tmp/o2"
}
groff_quiet() {
    out=$(groff -man -ww -z -Tutf8 "$1" 2>&1)
    [ -z "$out" ] || { echo "$out"; return 1; }
}
index_lists() { grep -qF "\\fB$(roff_name "$2")\\fR(1)" "$1"; }

for p in $PROGS; do
    bin=$root/bin/$p
    page=$root/share/man/man1/$p.1
    check "$p --version says '$p (vlastab) $VERSION'" test "$("$bin" --version)" = "$p (vlastab) $VERSION"
    [ -s "$page" ] || continue
    "$bin" --help >"$tmp/help" 2>&1
    deroff "$page" >"$tmp/text"
    check "$p.1's NAME line is '$p \\- phrase'" name_line "$page" "$p"
    check "$p.1 says every line of '$p --help'" help_in_page "$tmp/help" "$tmp/text"
    if command -v groff >/dev/null; then
        check "$p.1: groff -man -ww has nothing to warn about" groff_quiet "$page"
    fi
    "$bin" --man >"$tmp/man" 2>&1
    check "$p.1 is what '$p --man' prints (but the NAME phrase)" page_is_man "$page" "$tmp/man"
    # every page has the same sections (experiments/doc.c renders them all); a table's columns
    # where the program writes one
    for s in NAME SYNOPSIS DESCRIPTION OPTIONS '"EXIT STATUS"' ENVIRONMENT FILES EXAMPLES '"SEE ALSO"'; do
        check "$p.1 has a $s section" grep -qx "\.SH $s" "$page"
    done
    [ "$p" = vla-bench ] || check "$p.1 has a COLUMNS section" grep -qx "\.SH COLUMNS" "$page"
    check "$p.1 has two examples or more" test "$(sed -n '/^\.SH EXAMPLES/,/^\.SH/p' "$page" | grep -c '^[a-z]')" -ge 2
    check "$p.1 and '$p --help' list the same options" same_options "$tmp/help" "$page"
    check "vlastab(7) lists $p" index_lists "$root/share/man/man7/vlastab.7" "$p"
done
if command -v groff >/dev/null; then
    check "vlastab.7: groff -man -ww has nothing to warn about" groff_quiet "$root/share/man/man7/vlastab.7"
fi
check "no @PLACEHOLDER@ left in vlastab.7 and the .pc files" \
    sh -c "! grep -n '@[A-Z_]*@' '$root/share/man/man7/vlastab.7' '$root'/lib/pkgconfig/*.pc"

# ---- uninstall leaves nothing behind ----
if "$MAKE" uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1; then
    check "make uninstall removes every file it installed" \
        sh -c "find '$dest' ! -type d | grep . && exit 1 || exit 0"
    check "... and the directories that are vlastab's own" \
        sh -c "for d in include/vlastab share/vlastab share/doc/vlastab; do [ ! -e '$root'/\$d ] || { echo \$d; exit 1; }; done"
else
    bad "make uninstall DESTDIR=$dest PREFIX=$prefix"
    tail -20 "$tmp/uninstall.log" >&2
fi
finish
