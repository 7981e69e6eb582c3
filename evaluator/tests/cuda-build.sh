#!/usr/bin/env bash
# kopt-bench's CUDA half, compiled and linked against the CUDA toolkit on a machine without a GPU, and
# its no-device path run: the GPU timer (CUDA events, CUPTI by dlopen), the CUDA owners and the
# checked-call macro, the CUDA branches of the judge and of the runner (its timing branch), a .cu
# candidate built by kopt-bench's own nvcc step for sm_90; what only a LibTorch with CUDA compiles is
# syntax-checked against this LibTorch's c10/cuda headers. Running with CUDA tensors is left to
# tests/device/run.sh on a GPU.
#   bash evaluator/tests/cuda-build.sh [BUILD_DIR]
# BUILD_DIR: a kopt-bench build configured with -DKOPT_BENCH_CUDA=TOOLKIT (evaluator/tests/run-cpu.sh
# configures build-evaluator so when the toolkit is there, and ctest runs this script on it as the test
# cuda_build). Without it, this script configures and builds build-evaluator-cuda itself (minutes).
# Does this machine have to have the toolkit? KOPT_CUDA_TOOLKIT=required|optional; the default is
# required under CI=true and optional elsewhere: the project's machines (the 'cpp' kind: developers'
# and CI's alike) carry the CUDA 13.0 toolkit at /usr/local/cuda, so a CI machine without it is a
# broken one. A CI moved to a kind without the toolkit sets KOPT_CUDA_TOOLKIT=optional in .ci/run.
# Exit: 0 every check passed; 1 one failed; 77 no toolkit and none required (nothing built).
# Last line: "cuda build: N checks passed, M failed".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/cuda-env.sh"
. "$HERE/checks.sh"
t_start=$SECONDS
finish() {
  echo "cuda build: $KOPT_PASS checks passed, $KOPT_FAIL failed ($((SECONDS - t_start)) s)"
  [ "$KOPT_FAIL" -eq 0 ] && exit 0 || exit 1
}
required=${KOPT_CUDA_TOOLKIT:-}
[ -n "$required" ] || { [ "${CI:-}" = true ] && required=required || required=optional; }

# ---- the toolkit ----
if ! NVCC=$(kopt_find_nvcc); then
  if [ "$required" = required ]; then
    check toolkit 1 "(no nvcc: not on PATH, not in /usr/local/cuda*/bin; this machine should have the CUDA toolkit: KOPT_CUDA_TOOLKIT=required${CI:+, CI=$CI})"
    finish
  fi
  echo "SKIPPED: no CUDA toolkit (nvcc) on this machine and none required (KOPT_CUDA_TOOLKIT=$required): nothing built"
  echo "cuda build: 0 checks passed, 0 failed"
  exit 77
fi
CUDA_ROOT=$(kopt_cuda_root "$NVCC")
CUDA_VER=$(kopt_nvcc_version "$NVCC")
missing=""
for f in include/cuda_runtime.h lib64/libcudart.so; do [ -e "$CUDA_ROOT/$f" ] || missing+=" $f"; done
CUPTI_H=$(ls "$CUDA_ROOT"/include/cupti.h "$CUDA_ROOT"/extras/CUPTI/include/cupti.h 2>/dev/null | head -1)
[ -n "$CUPTI_H" ] || missing+=" cupti.h"
CUPTI_LIB=$(ls "$CUDA_ROOT"/lib64/libcupti.so "$CUDA_ROOT"/extras/CUPTI/lib64/libcupti.so 2>/dev/null | head -1)
[ -n "$CUPTI_LIB" ] || missing+=" libcupti.so"
check toolkit "$([ -n "$CUDA_VER" ] && [ -z "$missing" ] && echo 0 || echo 1)" \
  "(nvcc $NVCC, CUDA ${CUDA_VER:-?}, root $CUDA_ROOT${missing:+; missing:$missing})"
[ -z "$missing" ] || finish

# ---- the build ----
if [ $# -ge 1 ]; then
  BUILD=$(cd "$1" && pwd)
else
  BUILD=$ROOT/build-evaluator-cuda
  t0=$SECONDS
  cmake -S "$ROOT/evaluator" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKOPT_BENCH_TESTS=OFF -DKOPT_BENCH_CUDA=TOOLKIT \
    -DCUDAToolkit_ROOT="$CUDA_ROOT" -DKOPT_BENCH_CUDA_ARCHS=90 > "$BUILD.configure.log" 2>&1 &&
    cmake --build "$BUILD" -j"${KOPT_EVAL_JOBS:-2}" --target kopt-bench kopt-bench-worker kopt-bench-runner \
      kopt_bench_cuda_nodevice > "$BUILD.build.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || tail -30 "$BUILD.configure.log" "$BUILD.build.log"
  check build $rc "(KOPT_BENCH_CUDA=TOOLKIT in $BUILD, $((SECONDS - t0)) s)"
  [ $rc -eq 0 ] || finish
fi
mode=$(sed -n 's/^KOPT_BENCH_CUDA:STRING=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
cfg="$BUILD/gen/kopt_bench_config.hpp"
cfg_nvcc=$(sed -n 's/^#define KOPT_CFG_NVCC "\(.*\)"$/\1/p' "$cfg" 2>/dev/null)
cfg_nvcc_flags=$(sed -n 's/^#define KOPT_CFG_NVCC_FLAGS "\(.*\)"$/\1/p' "$cfg" 2>/dev/null)
check cuda_build_configured "$([ "$mode" = TOOLKIT ] && [ -x "$cfg_nvcc" ] && echo 0 || echo 1)" \
  "(KOPT_BENCH_CUDA=${mode:-unset} in $BUILD; candidates' nvcc ${cfg_nvcc:-none}: $cfg_nvcc_flags)"
[ "$mode" = TOOLKIT ] || { echo "not a KOPT_BENCH_CUDA=TOOLKIT build: configure $BUILD with -DKOPT_BENCH_CUDA=TOOLKIT"; finish; }

kopt_check_abi_flags "$BUILD"
kopt_check_cuda_linked "$BUILD" "${CUDA_VER%%.*}"
# What only a LibTorch with CUDA compiles: torch's current stream and the GPU unit checks (the small
# ones; tests/device/run.sh --dry-run adds guards.cpp, 1-2 minutes of CPU on its own).
kopt_check_torch_cuda_syntax "$BUILD" "$CUDA_ROOT" src/cuda_stream.cpp tests/device/cuda_timer_test.cpp

# ---- the no-device path ----
# Every CUDA call ends in a clear error: the torch-free unit (checked calls, owners, the GPU timer, CUPTI found).
unit_out=$(LD_LIBRARY_PATH="$(dirname "$CUPTI_LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" KOPT_EXPECT_CUPTI=1 KOPT_PTXAS="$CUDA_ROOT/bin/ptxas" \
           timeout 60 "$BUILD/kopt_bench_cuda_nodevice" 2>&1)
rc=$?
echo "$unit_out" | grep '^UNIT' | sed 's/^/  /'
units=$(echo "$unit_out" | grep -c ': PASS') ; ufail=$(echo "$unit_out" | grep -c ': FAIL')
check nodevice_units "$([ $rc -eq 0 ] && [ "$ufail" -eq 0 ] && [ "$units" -ge 10 ] && echo 0 || echo 1)" \
  "(kopt_bench_cuda_nodevice: exit $rc, $units unit checks passed, $ufail failed$([ $rc -eq 124 ] && echo '; HUNG: killed after 60 s'))"

CACHE=${KOPT_CUDA_BUILD_CACHE:-$BUILD/test-cache}
FIX="$ROOT/evaluator/tests/fixtures"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kopt-cuda-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
bench() { timeout 300 "$BUILD/kopt-bench" --ref "$FIX/relu.pt" --inputs "$FIX/relu.json" --cache-dir "$CACHE" "$@" 2>&1; }

# The judge asked for a GPU that is not there: a clear error and one result line, never a crash or a hang.
out=$(bench --solution "$ROOT/evaluator/tests/honest/relu_loop.cpp" --device cuda --baseline "$WORK/b-cuda.json"); rc=$?
lines=$(echo "$out" | grep -c '^KERNEL_EVAL=')
said=$(echo "$out" | kopt_field "int(d.get('correct') is False and 'no CUDA device' in json.dumps(d))")
check no_device_eval "$([ $rc -ne 0 ] && [ $rc -lt 124 ] && [ "$lines" -eq 1 ] && [ "$said" = 1 ] && echo 0 || echo 1)" \
  "(--device cuda: exit $rc, $lines KERNEL_EVAL line(s), says 'no CUDA device': $said; $(echo "$out" | grep -m1 -o 'no CUDA device[^"]*' | head -c 160))"

# --device auto picks the CPU, and a .cu candidate goes through kopt-bench's nvcc step (sm_90), is
# linked with libcudart, loaded in the confined runner and judged correct on the CPU.
out=$(bench --solution "$ROOT/evaluator/tests/device/candidates/plain_cu/op_cpu.cpp,$ROOT/evaluator/tests/device/candidates/plain_cu/relu.cu" \
      --device auto --no-timing --baseline "$WORK/b-cu.json"); rc=$?
ok=$(echo "$out" | kopt_field "int(d.get('compiled') is True and d.get('correct') is True and d['native_metrics'].get('backend') == 'cpu')")
check cu_candidate_on_cpu "$([ $rc -eq 0 ] && [ "$ok" = 1 ] && echo 0 || echo 1)" \
  "(op_cpu.cpp + relu.cu through kopt-bench's nvcc, --device auto: exit $rc; $(echo "$out" | grep -E '^(COMPILED|CORRECT|ERROR)' | tr '\n' ' ' | head -c 200))"
[ "$ok" = 1 ] || echo "$out" | tail -20

# The same kernel file with the build's own nvcc flags: ptxas reports machine code for sm_90.
read -r -a flags <<< "$cfg_nvcc_flags"
"$cfg_nvcc" "${flags[@]}" -Xptxas -v -c "$ROOT/evaluator/tests/device/candidates/plain_cu/relu.cu" -o "$WORK/relu.o" > "$WORK/ptxas.log" 2>&1
rc=$?
sm=$(grep -o "for 'sm_[0-9a-z]*'" "$WORK/ptxas.log" | sort -u | tr '\n' ' ')
check nvcc_sm90 "$([ $rc -eq 0 ] && [[ "$sm" == *"sm_90'"* ]] && echo 0 || echo 1)" "(nvcc with the build's flags: exit $rc; ptxas: ${sm:-no report})"
[ $rc -eq 0 ] || head -20 "$WORK/ptxas.log"
finish
