#!/usr/bin/env bash
# Installs NVIDIA's CUDA compiler (nvcc, the CUDA runtime and headers) from
# PyPI into a Python virtual environment, no GPU needed, and prints the
# directory holding `nvcc` (put it on PATH).
#
#   export PATH="$(scripts/install-nvcc.sh):$PATH"
#
# The environment lives in $COPPER_NVCC_VENV (default:
# ${XDG_CACHE_HOME:-~/.cache}/copper/nvcc-venv) and is reused while its nvcc
# runs, so later runs cost nothing. Downloads are retried on network errors.
# Progress goes to stderr; only the directory goes to stdout.
set -euo pipefail

venv="${COPPER_NVCC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/copper/nvcc-venv}"
packages=(
  "nvidia-cuda-nvcc==13.*"
  "nvidia-cuda-runtime==13.*"
  "nvidia-cuda-crt==13.*"
  "nvidia-cuda-cccl==13.*"
)

# The directory of nvcc inside the environment, if it is there.
nvcc_dir() {
  local d
  for d in "$venv"/lib/python3*/site-packages/nvidia/cu*/bin; do
    if [ -x "$d/nvcc" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

if dir="$(nvcc_dir)" && "$dir/nvcc" --version >/dev/null 2>&1; then
  echo "$dir"
  exit 0
fi

python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "install-nvcc: $python not found (set PYTHON to a Python 3 interpreter)" >&2
  exit 1
fi

echo "install-nvcc: installing nvcc into $venv" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv" >&2
for attempt in 1 2 3; do
  if "$venv/bin/pip" install --quiet --retries 5 --timeout 60 "${packages[@]}" >&2; then
    break
  fi
  if [ "$attempt" -eq 3 ]; then
    echo "install-nvcc: pip could not install ${packages[*]}" >&2
    exit 1
  fi
  echo "install-nvcc: pip failed (attempt $attempt of 3); retrying in 15 s" >&2
  sleep 15
done

if ! dir="$(nvcc_dir)" || ! "$dir/nvcc" --version >/dev/null 2>&1; then
  echo "install-nvcc: the packages installed but nvcc does not run" >&2
  exit 1
fi
echo "$dir"
