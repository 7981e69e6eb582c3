#!/usr/bin/env bash
# The evaluator's CPU suite: installs what is missing (Debian packages), configures, builds (-j2)
# and runs ctest. Called by scripts/test.sh when present; exits non-zero on any failure.
#   KOPT_EVAL_BUILD_DIR=build-evaluator (default)   KOPT_EVAL_JOBS=2 (default)
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$KOPT_ROOT"
apt_install_lists "$KOPT_ROOT/scripts/deps/apt-evaluator.txt"
BUILD_DIR=${KOPT_EVAL_BUILD_DIR:-build-evaluator}
JOBS=${KOPT_EVAL_JOBS:-2}
. "$KOPT_ROOT/evaluator/tests/cuda-env.sh"
# Where the CUDA toolkit is (the project's machines have one, no GPU): the build includes kopt-bench's
# CUDA half against it (KOPT_BENCH_CUDA=TOOLKIT, candidates' nvcc for sm_90), so every test below runs
# the CUDA build without a device, and ctest's cuda_build (tests/cuda-build.sh) checks that half.
cuda_args=(-DKOPT_BENCH_CUDA=AUTO)
if nvcc=$(kopt_find_nvcc); then
  cuda_args=(-DKOPT_BENCH_CUDA=TOOLKIT -DCUDAToolkit_ROOT="$(kopt_cuda_root "$nvcc")" -DKOPT_BENCH_CUDA_ARCHS=90)
fi
t0=$SECONDS
cmake -S evaluator -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DKOPT_BENCH_TESTS=ON "${cuda_args[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
log "evaluator built ($((SECONDS - t0)) s)"
t1=$SECONDS
# Compiled candidates are reused across tests through the cache in $BUILD_DIR/test-cache.
# A GTEST_SKIP (no python3-torch, a kernel without Landlock ABI 4, not root) fails with CI=true (no_skips).
no_skips ctest --test-dir "$BUILD_DIR" -j"$JOBS" --output-on-failure --timeout 600
log "evaluator tests passed ($((SECONDS - t1)) s)"
