#!/bin/sh
# Times the coalescing and reduction rewrites on a GPU, in one run:
# `copper bench` for the student-style kernels they fix (a row-walking
# 2-D kernel, a Gaussian elimination step, a naive transpose, two shared tree reductions and the
# interleaved one) at the GPU sizes of bench/gpu/, each program built for
# the GPU it runs on and run once. Every program compares the rewrite's
# arrays with the original's before it times them.
#
#   scripts/gpu-rewrites.sh [RESULTS [PROGRAMS]]
#
# COPPER names the copper binary (default target/release/copper); nvcc
# must be on PATH. Each kernel's output goes to RESULTS/NAME.txt (default
# gpu-rewrites), the GPU's and nvcc's versions to RESULTS/gpu.txt, the
# programs to PROGRAMS/NAME/ (default: a new temporary directory). A
# program that fails to build or run is reported and the others still
# run; the exit status is then 1.
set -u
copper="${COPPER:-target/release/copper}"
out="${1:-gpu-rewrites}"
programs="${2:-$(mktemp -d)}"
mkdir -p "$out" "$programs"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
nvcc --version >>"$out/gpu.txt" 2>&1
status=0
for k in brighten_rows gauss_step naive_transpose tree_sum reduce0; do
  {
    echo "== $k"
    "$copper" bench "testdata/$k.cu" --params "bench/gpu/$k.toml" --out "$programs/$k" &&
      sh "$programs/$k/build-$k.sh" &&
      "$programs/$k/${k}_bench"
  } >"$out/$k.txt" 2>&1 || {
    echo "$k: failed (see $out/$k.txt)"
    status=1
  }
  cat "$out/$k.txt"
done
exit "$status"
