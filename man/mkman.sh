#!/bin/sh
# mkman.sh PROGRAM SOURCE VERSION: a program's man page on standard output. The page is the
# program's own --man (its --help text as roff, both rendered by experiments/doc.c), so the two
# cannot disagree. VLA_MAN_NAME hands it the NAME phrase the source opens with ("/* vla-x: phrase
# (...", the DESIGN's convention); a source that opens otherwise leaves the program's own.
set -eu
prog=$1
src=$2
version=$3
name=${prog##*/}
phrase=$(sed -n "1s|^/\\* *$name: *\\([^(:,;.?!]*[^(:,;.?! ]\\).*|\\1|p" "$src" 2>/dev/null || true)

# a command substitution keeps a page that fails half-way from reaching the caller
if page=$(VLA_MAN_NAME=$phrase "$prog" --man 2>/dev/null) && [ -n "$page" ]; then
    printf '%s\n' "$page"
    exit 0
fi
echo "mkman.sh: $name --man failed: every program renders its page through experiments/doc.c" >&2
exit 1
