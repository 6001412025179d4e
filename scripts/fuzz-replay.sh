#!/usr/bin/env bash
# Replays inputs saved by the fuzz harness (search/examples/fuzz.rs).
#
#   scripts/fuzz-replay.sh [-t SECONDS] [-b COPPER] DIR...
#
# Each saved case is X.cu + X.toml + X.txt, where the first line of X.txt
# is the command (`copper CMD k.cu`). Each case is copied to a scratch
# directory as k.cu / k.toml and its command run with a timeout; one line
# per case gives the wall time, the CPU time (user + system, all threads;
# what a loaded machine does not inflate), the exit code (124 = timed
# out) and the case name. Needs /usr/bin/time.
set -u
limit=30
bin="$(cd "$(dirname "$0")/.." && pwd)/target/release/copper"
while getopts "t:b:" opt; do
  case $opt in
    t) limit=$OPTARG ;;
    b) bin=$OPTARG ;;
    *) echo "usage: $0 [-t SECONDS] [-b COPPER] DIR..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-t SECONDS] [-b COPPER] DIR..." >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for dir in "$@"; do
  for txt in "$dir"/*.txt; do
    [ -e "$txt" ] || continue
    stem=${txt%.txt}
    line=$(head -n 1 "$txt")
    # `copper ARGS... k.cu` -> ARGS...
    args=${line#copper }
    args=${args% k.cu}
    rm -f "$scratch"/k.cu "$scratch"/k.toml
    cp "$stem.cu" "$scratch/k.cu" 2>/dev/null || continue
    [ -e "$stem.toml" ] && cp "$stem.toml" "$scratch/k.toml"
    # shellcheck disable=SC2086
    (cd "$scratch" && /usr/bin/time -o "$scratch/time" -f '%e %U %S' \
      timeout "$limit" "$bin" $args k.cu >/dev/null 2>&1)
    rc=$?
    read -r wall user sys < <(tail -n 1 "$scratch/time")
    printf '%7.2fs wall %7.2fs cpu  rc=%-3s %s\n' "$wall" "$(echo "$user + $sys" | bc)" "$rc" "$(basename "$stem")"
  done
done
