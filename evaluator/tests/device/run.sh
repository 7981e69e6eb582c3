#!/usr/bin/env bash
# Device check for a machine with an NVIDIA GPU, nvcc and a pip torch (whose CUDA LibTorch we
# build against). Prepared for a task that is lent a GPU; budget ~5-8 minutes.
#   bash evaluator/tests/device/run.sh 2>&1 | tee "${OUT:-/tmp}/device-check.log"
# Env: NVCC (default: on PATH or /usr/local/cuda/bin/nvcc), CUDA_ARCH (default: native),
#      KOPT_NLOHMANN_INCLUDE (a dir with nlohmann/json.hpp when the Debian package is absent),
#      PY (python with torch, default python3).
# Prints one "CHECK name: PASS|FAIL ..." line per check and a summary; exits 1 if any failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE="$ROOT/evaluator/tests/device"
FIX="$ROOT/evaluator/tests/fixtures"
PY=${PY:-python3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
BUILD=${BUILD:-$ROOT/build-evaluator-gpu}
WORK=$(mktemp -d /tmp/kopt-device.XXXXXX)
CACHE="$WORK/cache"
pass=0; fail=0
check() { # name, status(0 ok), detail
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "CHECK $1: PASS $3"; else fail=$((fail + 1)); echo "CHECK $1: FAIL $3"; fi
}
field() { # KERNEL_EVAL json on stdin, python expression over `d`
  "$PY" -c "import json,sys
line=[l for l in sys.stdin.read().splitlines() if l.startswith('KERNEL_EVAL=')][-1]
d=json.loads(line[len('KERNEL_EVAL='):]); print($1)"
}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader || true
TP=$("$PY" -c 'import torch;print(torch.utils.cmake_prefix_path)') || { echo "no torch in $PY"; exit 1; }
TV=$("$PY" -c 'import torch;print(torch.__version__, torch.version.cuda)')
echo "torch $TV at $TP; nvcc $("$NVCC" --version | tail -1)"
CUPTI_DIRS=$(ls -d /usr/local/cuda/extras/CUPTI/lib64 "$("$PY" -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)"/nvidia/cuda_cupti/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="${CUPTI_DIRS}${LD_LIBRARY_PATH:-}"

echo "== build (CUDA LibTorch)"
t0=$(date +%s)
NL=()
[ -n "${KOPT_NLOHMANN_INCLUDE:-}" ] && NL=(-DKOPT_NLOHMANN_INCLUDE="$KOPT_NLOHMANN_INCLUDE")
cmake -S "$ROOT/evaluator" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKOPT_BENCH_TESTS=OFF -DKOPT_BENCH_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$TP" -DCMAKE_CUDA_COMPILER="$NVCC" -DCUDAToolkit_ROOT="$(dirname "$(dirname "$NVCC")")" \
  -DKOPT_BENCH_CUDA_ARCHS="${CUDA_ARCH:-native}" "${NL[@]}" > "$WORK/configure.log" 2>&1
rc=$?; [ $rc -eq 0 ] || tail -20 "$WORK/configure.log"
cmake --build "$BUILD" -j"$(nproc)" > "$WORK/build.log" 2>&1; brc=$?
[ $brc -eq 0 ] || tail -30 "$WORK/build.log"
check build $((rc + brc)) "($(( $(date +%s) - t0 )) s)"
B="$BUILD/kopt-bench"
[ -x "$B" ] || { echo "summary: $pass passed, $((fail + 1)) failed (no binary)"; exit 1; }
"$B" --version

bench() { # solution, extra args...
  local sol=$1; shift
  "$B" --ref "$FIX/relu.pt" --inputs "$HERE/relu_big.json" --solution "$HERE/candidates/$sol" \
    --cache-dir "$CACHE" --device cuda --max-trials 100 --max-time 10 "$@"
}

echo "== honest kernel (first build, then cached)"
t0=$(date +%s.%N); out=$(bench relu_kernel.cu --baseline "$WORK/b-honest.json"); code=$?
echo "$out" | grep -v '^KERNEL_EVAL'
echo "first evaluation incl. nvcc build: $(echo "$(date +%s.%N) - $t0" | bc) s"
check honest_correct $([ $code -eq 0 ] && echo 0 || echo 1) "(exit $code, $(echo "$out" | grep '^TIMER:'))"
t0=$(date +%s.%N); bench relu_kernel.cu --baseline "$WORK/b-honest.json" >/dev/null
echo "cached evaluation: $(echo "$(date +%s.%N) - $t0" | bc) s"

echo "== GPU-only cheats (each must be flagged)"
for c in side_stream l2_persist host_cache; do
  out=$(bench "$c.cu" --baseline "$WORK/b-$c.json"); code=$?
  echo "$out" | grep -E '^(CORRECT|TIMER|REWARD_HACK|ERROR|KERNEL_TIME)'
  flagged=$(echo "$out" | field "int(d['correct'] is False)")
  check "cheat_$c" $([ "$flagged" = 1 ] && [ $code -ne 0 ] && echo 0 || echo 1) "(exit $code)"
done

echo "== CUPTI kernel time vs CUDA events"
cu=$(bench relu_kernel.cu --baseline "$WORK/b-cupti.json")
ev=$(KOPT_BENCH_NO_CUPTI=1 bench relu_kernel.cu --baseline "$WORK/b-event.json")
echo "cupti run : $(echo "$cu" | grep -E '^(TIMER|RUNTIME|KERNEL_TIME)' | tr '\n' ' ')"
echo "event run : $(echo "$ev" | grep -E '^(TIMER|RUNTIME)' | tr '\n' ' ')"
timer=$(echo "$cu" | field "d['native_metrics'].get('timer')")
kern=$(echo "$cu" | field "d['native_metrics'].get('kernel_ms', -1)")
evt=$(echo "$ev" | field "d.get('latency_ms', -1)")
echo "timer=$timer kernel_ms=$kern event_latency_ms=$evt ratio=$("$PY" -c "print(round($kern/$evt,3) if $evt>0 and $kern>0 else 'n/a')")"
check cupti_used $([ "$timer" = cupti ] && echo 0 || echo 1) "(timer=$timer)"
check cupti_vs_events $("$PY" -c "print(0 if $kern>0 and $evt>0 and 0.5 < $kern/$evt <= 1.2 else 1)") "(kernel-only should be a bit below events)"

echo "== stability: one kernel, 10 separate processes"
vals=()
for i in $(seq 1 10); do
  o=$(bench relu_kernel.cu --baseline "$WORK/b-stab.json")
  v=$(echo "$o" | field "'%s %s' % (d.get('latency_ms'), d['native_metrics'].get('trials'))")
  echo "run $i: latency_ms trials = $v"; vals+=("$v")
done
printf '%s\n' "${vals[@]}" | "$PY" -c "
import sys, statistics as s
rows=[l.split() for l in sys.stdin if l.strip()]
lat=[float(r[0]) for r in rows if r[0] != 'None']; tr=[int(r[1]) for r in rows if r[1] != 'None']
cv = s.pstdev(lat)/s.mean(lat) if len(lat) > 1 else float('nan')
print('median-of-medians %.5f ms, CV of the reported median %.2f%%, trials used min/median/max %d/%d/%d' % (s.median(lat), 100*cv, min(tr), s.median(tr), max(tr)))
" | tee "$WORK/stability.txt"
cv=$(grep -o 'CV of the reported median [0-9.]*' "$WORK/stability.txt" | awk '{print $NF}')
check stability $("$PY" -c "print(0 if ${cv:-99} < 2.0 else 1)") "(CV ${cv:-?}% across processes, target < 2%)"

echo "summary: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
