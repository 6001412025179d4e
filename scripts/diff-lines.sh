#!/bin/sh
# Lines a reviewer reads per rewrite: for each given .cu file that
# `copper optimize` rewrites, the changed (+/-) lines of the diff as copper
# gives it now (edits) and as a whole-kernel reprint would give it (the
# rewritten file through `copper fmt --whole`; in a file with several
# functions that also reprints the ones not rewritten). Prints one row per
# file, then the sums and maxima.
# Usage: scripts/diff-lines.sh [COPPER] FILE.cu...
set -eu
copper=target/release/copper
case "${1:-}" in *.cu) ;; *) copper=$1; shift ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
changed() { grep -c '^[-+][^-+]' || true; }
printf '%-45s %8s %8s\n' file before after
for f in "$@"; do
    d="$tmp/$(basename "$(dirname "$f")")"
    mkdir -p "$d"
    cp "$f" "$d/"
    t="${f%.cu}.toml"
    [ -f "$t" ] && cp "$t" "$d/"
    k="$d/$(basename "$f")"
    (cd "$d" && "$OLDPWD/$copper" optimize --quiet --write "$(basename "$f")" >/dev/null 2>&1) || true
    cmp -s "$f" "$k" && continue
    after=$(diff -u "$f" "$k" | changed)
    before=$("$copper" fmt --whole "$k" 2>/dev/null | diff -u "$f" - | changed)
    printf '%-45s %8s %8s\n' "$f" "$before" "$after"
done | tee "$tmp/rows"
awk '{ b += $2; a += $3; if ($2 > mb) mb = $2; if ($3 > ma) ma = $3; n++ }
     END { printf "%d rewrites: sum %d -> %d, max %d -> %d\n", n, b, a, mb, ma }' "$tmp/rows"
