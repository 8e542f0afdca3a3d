#!/bin/sh
# test_grid.sh: `make figures` and sweeps/paper.sweep take their grid from one source (the Makefile
# reads the sweep's case list): make figures figures-long would run exactly the sweep's commands,
# each table feeds a figure with a plot script, each figure draws at least one table, and a case of
# a program of several models names its models. Run by
# `make test` (make test-grid alone), which passes MAKE. Its makes run outside the calling make's
# MAKEFLAGS and MAKELEVEL: a submake (make test-san, make -C) passes -w down, and its
# "make[2]: Entering directory" lines would be read as figures. Prints only failures, then
# "test_grid: N passed, N failed".
set -u
MAKE=${MAKE:-make}
unset MAKEFLAGS MAKELEVEL MFLAGS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vlastab-grid.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "test_grid: FAIL $*" >&2
}

# the sweep's commands, and those make would run, into an output tree that does not exist
data=$tmp/data
bin/vla-sweep --dry-run --out "$data" sweeps/paper.sweep > "$tmp/sweep" 2> "$tmp/err" ||
    { bad "bin/vla-sweep --dry-run sweeps/paper.sweep"; cat "$tmp/err" >&2; }
awk -F'\t' '!/^#/ && NF == 3 { print $3 }' "$tmp/sweep" | sort > "$tmp/sweep.cmd"
"$MAKE" -n -s DATA="$data" FIGDIR="$tmp/fig" figures figures-long > "$tmp/make" 2> "$tmp/err" ||
    { bad "make -n figures figures-long"; tail -5 "$tmp/err" >&2; }
grep '^bin/vla-' "$tmp/make" | grep -v -- '--dry-run' | sort > "$tmp/make.cmd"
n=$(wc -l < "$tmp/sweep.cmd")
if [ "$n" -gt 0 ] && cmp -s "$tmp/sweep.cmd" "$tmp/make.cmd"; then ok; else
    bad "make figures figures-long and sweeps/paper.sweep run different commands (< sweep, > make):"
    diff "$tmp/sweep.cmd" "$tmp/make.cmd" | head -10 | sed 's/^/    /' >&2
fi

# a case of a program that runs several models names them: the programs' default is every model of
# the library's list, which grows, and a figure's table must not grow with it
awk -F'\t' '!/^#/ && NF == 3 && $3 ~ /^bin\/vla-(recall|scaling|check) / && $3 !~ / --models? / { print $1 }' \
    "$tmp/sweep" > "$tmp/unnamed"
if [ -s "$tmp/sweep" ] && [ ! -s "$tmp/unnamed" ]; then ok; else
    bad "cases of vla-recall, vla-scaling or vla-check that rely on the default list of models (name them with --models):"
    sed 's/^/    /' "$tmp/unnamed" >&2
fi

# every table feeds a figure, every figure has a script and draws a table
"$MAKE" -s DATA="$data" FIGDIR="$tmp/fig" figures-list 2>/dev/null | grep -v '^kernels:\|^sweep:' > "$tmp/list"
awk -F'\t' '!/^#/ && NF == 3 { print $1 }' "$tmp/sweep" | while read -r c; do
    if grep -q " $data/$c.dat\( \|\$\)" "$tmp/list"; then echo ok; else echo "no figure draws the sweep's case $c"; fi
done > "$tmp/cases"
if [ -s "$tmp/cases" ] && ! grep -v '^ok$' "$tmp/cases" > "$tmp/orphans"; then ok; else
    bad "every case of sweeps/paper.sweep feeds a figure:"; sed 's/^/    /' "$tmp/orphans" >&2
fi
while IFS=: read -r fig tables; do
    [ -r "plots/$fig.gp" ] && ok || bad "figure $fig has no plots/$fig.gp"
    [ -n "$(echo $tables)" ] && ok || bad "figure $fig draws no table of the sweep"
done < "$tmp/list"
[ -s "$tmp/list" ] && ok || bad "make figures-list lists no figure"

echo "test_grid: $pass passed, $fail failed"
[ "$fail" = 0 ]
