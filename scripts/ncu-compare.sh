#!/usr/bin/env bash
# Runs a `copper bench` program under Nsight Compute and prints, for every
# kernel launch, the hardware counters copper's cost model predicts: global
# load and store sectors and shared-memory bank conflicts (loads, stores).
# The program runs with --profile: each kernel (original, then copper's
# rewrite NAME_copper) launched once per size, in the order of its lines.
# With --cu FILE.cu, copper's predictions for the parameter file's launch
# follow: `copper simulate` (measured under the cost model) and
# `copper analyze` (sound bounds per warp) for the metrics sectors and
# conflicts.
#
# Environment: NCU (default: ncu), COPPER (default: copper on PATH, else
# target/release/copper of this checkout).
set -euo pipefail

usage() {
    cat >&2 <<'USAGE'
usage: scripts/ncu-compare.sh [--cu FILE.cu [--params P.toml]] PROGRAM
  PROGRAM         a program written by `copper bench` and built with its build-*.sh
  --cu FILE.cu    also print copper's predictions for FILE.cu (copper simulate, copper analyze)
  --params P.toml the parameter file for --cu (default: FILE.toml)
USAGE
    exit 2
}

die() {
    echo "ncu-compare: $*" >&2
    exit 2
}

cu=""
params=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cu)
            [[ $# -ge 2 ]] || usage
            cu=$2
            shift 2
            ;;
        --params)
            [[ $# -ge 2 ]] || usage
            params=$2
            shift 2
            ;;
        -h | --help) usage ;;
        -*) echo "ncu-compare: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[[ $# -eq 1 ]] || usage
program=$1
[[ -f "$program" && -x "$program" ]] || die "$program is not an executable (build it with the build-*.sh that copper bench wrote)"
[[ -z "$params" || -n "$cu" ]] || die "--params needs --cu"
[[ -z "$cu" || -f "$cu" ]] || die "$cu: no such file"
[[ -z "$params" || -f "$params" ]] || die "$params: no such file"

ncu_bin=${NCU:-ncu}
command -v "$ncu_bin" >/dev/null 2>&1 || die "$ncu_bin not found (install Nsight Compute or set NCU=/path/to/ncu)"

metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum

out=$(mktemp)
trap 'rm -f "$out"' EXIT
case "$program" in
    */*) run=$program ;;
    *) run=./$program ;;
esac
if ! "$ncu_bin" --csv --page raw --print-units base --print-kernel-base function \
    --metrics "$metrics" "$run" --profile >"$out" 2>&1; then
    cat "$out" >&2
    die "ncu or the program failed (output above)"
fi

echo "== $program --profile"
grep -v '^"' "$out" | grep -v '^==' || true
echo
echo "== ncu: per launch, in launch order"
grep '^"' "$out" | awk '
    # Splits one CSV line (quoted fields, "" inside quotes) into F[1..n].
    function split_csv(line,    n, i, c, f, quoted) {
        n = 0; f = ""; quoted = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (quoted) {
                if (c == "\"") {
                    if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else quoted = 0
                } else f = f c
            } else if (c == "\"") quoted = 1
            else if (c == ",") { F[++n] = f; f = "" }
            else f = f c
        }
        F[++n] = f
        return n
    }
    function number(s) { gsub(/[, ]/, "", s); return s == "" ? "-" : s }
    BEGIN {
        want["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 1
        want["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 2
        want["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 3
        want["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] = 4
        header = 0; rows = 0
    }
    {
        n = split_csv($0)
        if (!header) {
            for (i = 1; i <= n; i++) {
                if (F[i] == "Kernel Name") kcol = i
                if (F[i] in want) col[want[F[i]]] = i
            }
            if (!kcol) { print "ncu-compare: no Kernel Name column in ncu output" > "/dev/stderr"; exit 2 }
            for (m = 1; m <= 4; m++) if (!col[m]) { print "ncu-compare: a metric is missing from ncu output" > "/dev/stderr"; exit 2 }
            header = 1
            printf "%-32s %6s %14s %14s %16s %16s\n", "kernel", "launch", "gld sectors", "gst sectors", "shared ld confl", "shared st confl"
            next
        }
        if (F[1] !~ /^[0-9]+$/) next   # the units row
        name = F[kcol]
        seen[name]++
        rows++
        printf "%-32s %6d %14s %14s %16s %16s\n", name, seen[name], number(F[col[1]]), number(F[col[2]]), number(F[col[3]]), number(F[col[4]])
    }
    END {
        if (!header) { print "ncu-compare: ncu printed no CSV (did the program launch any kernel?)" > "/dev/stderr"; exit 2 }
        if (!rows) print "(no kernel launches profiled)"
    }
'

if [[ -n "$cu" ]]; then
    if [[ -n "${COPPER:-}" ]]; then
        copper=$COPPER
    elif command -v copper >/dev/null 2>&1; then
        copper=copper
    else
        copper="$(cd "$(dirname "$0")/.." && pwd)/target/release/copper"
    fi
    [[ -x "$copper" ]] || command -v "$copper" >/dev/null 2>&1 || die "copper not found (set COPPER=/path/to/copper)"
    params_args=()
    if [[ -n "$params" ]]; then
        params_args=(--params "$params")
    fi
    echo
    echo "== copper simulate $cu (the parameter file's launch; total = the whole launch)"
    "$copper" simulate "$cu" ${params_args[@]+"${params_args[@]}"} --metric sectors --metric conflicts
    echo
    echo "== copper analyze $cu (bounds per warp)"
    "$copper" analyze "$cu" --metric sectors --metric conflicts
fi
