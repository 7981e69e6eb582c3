# shellcheck shell=bash
# Sourced by evaluator/tests/run-cpu.sh, cuda-build.sh and device/run.sh: where the CUDA toolkit is.
# kopt_find_nvcc prints nvcc's path ($NVCC, else on PATH, else /usr/local/cuda/bin/nvcc, else the
# newest /usr/local/cuda-*/bin/nvcc) and fails when there is none; kopt_cuda_root prints the
# toolkit folder above it (bin/..), kopt_nvcc_version "13.0" for "release 13.0".
kopt_find_nvcc() {
  local c
  for c in "${NVCC:-}" "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc $(ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -rV); do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}
kopt_cuda_root() { (cd "$(dirname "$1")/.." && pwd -P); }
kopt_nvcc_version() { "$1" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -1; }
