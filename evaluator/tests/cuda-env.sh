# shellcheck shell=bash
# Sourced by evaluator/tests/run-cpu.sh, cuda-build.sh and device/run.sh: where the CUDA toolkit is.
# kopt_find_nvcc prints nvcc's path ($NVCC, else on PATH, else /usr/local/cuda/bin/nvcc, else the
# newest /usr/local/cuda-*/bin/nvcc) and fails when there is none; kopt_cuda_root prints the
# toolkit's folder as nvcc itself names it (its TOP; an nvcc on PATH may be a link or a wrapper
# in /usr/local/bin, whose bin/.. is not the toolkit), else the folder above the resolved file;
# kopt_nvcc_version "13.0" for "release 13.0".
kopt_find_nvcc() {
  local c
  for c in "${NVCC:-}" "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc $(ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -rV); do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}
kopt_cuda_root() {
  local top
  top=$(cd /tmp && "$1" --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
  if [ -n "$top" ] && [ -d "$top" ]; then (cd "$top" && pwd -P); return; fi
  (cd "$(dirname "$(readlink -f "$1")")/.." && pwd -P)
}
kopt_nvcc_version() { "$1" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -1; }
