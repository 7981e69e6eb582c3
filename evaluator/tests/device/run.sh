#!/usr/bin/env bash
# kopt-bench device check: one prepared run for a machine with an NVIDIA GPU, nvcc and a pip torch
# (whose CUDA LibTorch we build against). Budget: <= 8 minutes on 16 cores.
#   OUT=/some/dir bash evaluator/tests/device/run.sh            # the full GPU check
#   bash evaluator/tests/device/run.sh --dry-run                 # no GPU needed: script lint + compile-only
#                                                                # check of the CUDA sources, then says plainly
#                                                                # that no GPU check ran
# Writes $OUT/device-check.log, $OUT/summary.json and $OUT/summary.md (OUT defaults to ./device-out).
# Prints one "CHECK name: PASS|FAIL detail" line per check; exits 1 if any check failed, 2 when there
# is no CUDA device (nothing was checked), 0 only when every check passed.
# Env: NVCC (default: on PATH, else /usr/local/cuda/bin/nvcc), CUDA_ARCH (default: native), PY
#      (python with torch, default python3), KOPT_NLOHMANN_INCLUDE (dir with nlohmann/json.hpp when
#      the Debian package is absent), BUILD (default: build-evaluator-gpu).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE="$ROOT/evaluator/tests/device"
FIX="$ROOT/evaluator/tests/fixtures"
TESTS="$ROOT/evaluator/tests"
PY=${PY:-python3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
BUILD=${BUILD:-$ROOT/build-evaluator-gpu}
OUT=${OUT:-$ROOT/device-out}
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
mkdir -p "$OUT"
exec > >(tee "$OUT/device-check.log") 2>&1
WORK=$(mktemp -d /tmp/kopt-device.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CACHE="$WORK/cache"
T_START=$(date +%s)
pass=0; fail=0
: > "$WORK/checks.tsv"; : > "$WORK/figures.tsv"
check() { # name, status (0 = ok), detail
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "CHECK $1: PASS $3"; r=PASS
  else fail=$((fail + 1)); echo "CHECK $1: FAIL $3"; r=FAIL; fi
  printf '%s\t%s\t%s\n' "$1" "$r" "$3" >> "$WORK/checks.tsv"
}
figure() { printf '%s\t%s\n' "$1" "$2" >> "$WORK/figures.tsv"; echo "FIGURE $1 = $2"; }
ok() { [ "$1" = 1 ] && echo 0 || echo 1; }          # python "1"/"0" -> check status
now() { date +%s.%N; }
since() { "$PY" -c "import sys;print('%.2f' % ($(now) - $1))"; }
summary() { # writes summary.json / summary.md from the two tables, prints the verdict
  "$PY" - "$WORK/checks.tsv" "$WORK/figures.tsv" "$OUT" "$1" <<'PYEOF'
import json, sys
checks = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
figs = [l.rstrip('\n').split('\t') for l in open(sys.argv[2]) if l.strip()]
out, status = sys.argv[3], sys.argv[4]
doc = {"status": status, "checks": [{"name": c[0], "result": c[1], "detail": c[2]} for c in checks],
       "figures": {f[0]: f[1] for f in figs}}
json.dump(doc, open(out + "/summary.json", "w"), indent=1)
with open(out + "/summary.md", "w") as f:
    f.write("# kopt-bench device check: %s\n\n| check | result | detail |\n|---|---|---|\n" % status)
    for c in checks: f.write("| %s | %s | %s |\n" % (c[0], c[1], c[2].replace('|', '/')))
    f.write("\n| figure | value |\n|---|---|\n")
    for k, v in figs: f.write("| %s | %s |\n" % (k, v.replace('|', '/')))
PYEOF
  echo "summary: $pass passed, $fail failed ($1); $OUT/summary.md"
}

# ---------- compile-only check of the CUDA sources (no GPU, no CUDA LibTorch needed) ----------
compile_check() {
  local cuda_inc torch_inc stub="$WORK/stub"
  cuda_inc=$(dirname "$(dirname "$NVCC")")/include
  [ -f "$cuda_inc/cuda_runtime.h" ] || { check cuda_compile_only 1 "(no cuda_runtime.h under $cuda_inc)"; return; }
  torch_inc=$("$PY" -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/include")' 2>/dev/null || echo /usr/include)
  # A CPU LibTorch (Debian) ships c10/cuda headers but not the generated macros header.
  mkdir -p "$stub/c10/cuda/impl"
  [ -f "$torch_inc/c10/cuda/impl/cuda_cmake_macros.h" ] || echo '#pragma once' > "$stub/c10/cuda/impl/cuda_cmake_macros.h"
  local f rc=0 flags=(-std=c++17 -Wall -Wextra -Werror -fsyntax-only -DKOPT_WITH_CUDA=1 -DKOPT_HAVE_CUPTI_H=1
    -isystem "$stub" -isystem "$torch_inc/torch/csrc/api/include" -isystem "$cuda_inc" -I"$ROOT/evaluator/src"
    -I"$ROOT/evaluator/include" -I"$ROOT/include")
  # /usr/include is already a system dir; naming it again breaks libstdc++'s #include_next.
  [ "$torch_inc" = /usr/include ] || flags+=(-isystem "$torch_inc")
  for f in evaluator/src/timer_cuda.cpp evaluator/src/guards.cpp evaluator/src/inputs.cpp evaluator/src/worker.cpp \
           evaluator/tests/device/cuda_timer_test.cpp; do
    if ! g++ "${flags[@]}" "$ROOT/$f" > "$WORK/cc.log" 2>&1; then rc=1; echo "compile failed: $f"; head -30 "$WORK/cc.log"; fi
  done
  check cuda_compile_only $rc "(g++ -fsyntax-only -Werror against $cuda_inc and $torch_inc)"
  # The torch-free .cu candidate through nvcc (no GPU needed to compile).
  if [ -x "$NVCC" ]; then
    "$NVCC" -std=c++17 -O2 -arch="sm_${CUDA_ARCH:-90}" -Xcompiler -fPIC -c "$HERE/candidates/plain_cu/relu.cu" \
      -o "$WORK/relu.o" > "$WORK/nvcc.log" 2>&1
    rc=$?; [ $rc -eq 0 ] || head -20 "$WORK/nvcc.log"
    check nvcc_plain_cu $rc "($("$NVCC" --version | tail -1))"
  fi
}

echo "== machine"
have_gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi
if [ $DRY -eq 1 ]; then
  echo "dry run: lint + compile-only; no GPU check runs in this mode"
  bash -n "$0"; check script_syntax $? "(bash -n)"
  if command -v shellcheck >/dev/null; then shellcheck -S warning "$0"; check shellcheck $? ""; fi
  compile_check
  echo "GPU checks NOT run (dry run$([ $have_gpu -eq 0 ] && echo '; no CUDA device on this machine'))"
  summary "dry run: no GPU check ran"
  [ "$fail" -eq 0 ]; exit
fi
if [ $have_gpu -eq 0 ]; then
  echo "NO CUDA DEVICE: nvidia-smi finds no GPU; the device check cannot run here (try --dry-run)"
  summary "no CUDA device: nothing checked"
  exit 2
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
figure gpu "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
TP=$("$PY" -c 'import torch;print(torch.utils.cmake_prefix_path)') || { echo "no torch in $PY"; exit 1; }
figure torch "$("$PY" -c 'import torch;print(torch.__version__, "cuda", torch.version.cuda)')"
figure nvcc "$("$NVCC" --version | tail -1)"
CUPTI_DIRS=$(ls -d "$(dirname "$(dirname "$NVCC")")"/extras/CUPTI/lib64 /usr/local/cuda/extras/CUPTI/lib64 \
  "$("$PY" -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)"/nvidia/cuda_cupti/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="${CUPTI_DIRS}${LD_LIBRARY_PATH:-}"

echo "== build (CUDA LibTorch from pip torch; only the targets the check needs)"
t0=$(now)
EXTRA=()
[ -n "${KOPT_NLOHMANN_INCLUDE:-}" ] && EXTRA+=(-DKOPT_NLOHMANN_INCLUDE="$KOPT_NLOHMANN_INCLUDE")
if command -v ccache >/dev/null; then EXTRA+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache); fi
cmake -S "$ROOT/evaluator" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKOPT_BENCH_TESTS=OFF -DKOPT_BENCH_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$TP" -DCMAKE_CUDA_COMPILER="$NVCC" -DCUDAToolkit_ROOT="$(dirname "$(dirname "$NVCC")")" \
  -DKOPT_BENCH_CUDA_ARCHS="${CUDA_ARCH:-native}" "${EXTRA[@]}" > "$WORK/configure.log" 2>&1
rc=$?; [ $rc -eq 0 ] || tail -30 "$WORK/configure.log"
brc=1
if [ $rc -eq 0 ]; then
  cmake --build "$BUILD" -j"$(nproc)" --target kopt-bench kopt-bench-worker kopt_bench_cuda_test > "$WORK/build.log" 2>&1; brc=$?
  [ $brc -eq 0 ] || tail -40 "$WORK/build.log"
fi
check build $((rc + brc)) "($(since "$t0") s)"
figure build_s "$(since "$t0")"
B="$BUILD/kopt-bench"
if [ ! -x "$B" ]; then summary "build failed"; exit 1; fi
"$B" --version

echo "== CUDA unit checks"
timeout 120 "$BUILD/kopt_bench_cuda_test"; check cuda_unit $? "(kopt_bench_cuda_test: checked calls, RAII, device-wide timing, persisting-L2, snapshot)"

field() { # KERNEL_EVAL json on stdin, python expression over `d`; prints ERR when absent
  "$PY" -c "import json,sys
ls=[l for l in sys.stdin.read().splitlines() if l.startswith('KERNEL_EVAL=')]
if not ls: print('ERR'); sys.exit()
d=json.loads(ls[-1][len('KERNEL_EVAL='):]); print($1)"
}
bench() { # ref, inputs, solution, extra args...
  local ref=$1 inp=$2 sol=$3; shift 3
  timeout 180 "$B" --ref "$FIX/$ref" --inputs "$inp" --solution "$sol" --cache-dir "$CACHE" "$@"
}
C="$HERE/candidates"

echo "== honest GPU candidates (must be correct, no reward hack)"
honest() { # name, ref, inputs, solution
  local t out code
  t=$(now); out=$(bench "$2" "$3" "$4" --device cuda --baseline "$WORK/b-$1.json"); code=$?
  echo "$out" | grep -E '^(COMPILED|CORRECT|TIMER|RUNTIME|KERNEL_TIME|REWARD_HACK|ERROR|ADVISORY)'
  figure "first_eval_s_$1" "$(since "$t")"
  check "honest_$1" "$([ $code -eq 0 ] && echo 0 || echo 1)" "(exit $code; $(echo "$out" | field "d.get('latency_ms')") ms)"
}
honest relu_kernel relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu"
honest plain_cu relu.pt "$HERE/relu_big.json" "$C/plain_cu/op.cpp,$C/plain_cu/relu.cu"
honest cublas matmul_k.pt "$FIX/matmul_k.json" "$C/matmul_cublas.cpp"
t=$(now); bench relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu" --device cuda --baseline "$WORK/b-relu_kernel.json" > "$WORK/cached.out"
figure cached_whole_eval_s "$(since "$t")"
check cached_eval $? "(cached whole evaluation $(since "$t") s)"
HONEST_MS=$(field "d.get('latency_ms')" < "$WORK/cached.out")

echo "== GPU-only cheats"
flagged() { # name, expect-substring, solution, extra env
  local out code
  out=$(env ${4:+"$4"} "$B" --ref "$FIX/relu.pt" --inputs "$HERE/relu_big.json" --solution "$3" --cache-dir "$CACHE" \
        --device cuda --baseline "$WORK/b-$1.json"); code=$?
  echo "$out" | grep -E '^(CORRECT|TIMER|REWARD_HACK|ERROR|ADVISORY)'
  local f; f=$(echo "$out" | field "int(d['correct'] is False and ('$2' == '' or any('$2' in h for h in d.get('reward_hacks', []))))")
  check "cheat_$1" "$([ "$f" = 1 ] && [ $code -ne 0 ] && echo 0 || echo 1)" "(exit $code; expects CORRECT False${2:+ and a reward hack naming \"$2\"})"
}
flagged l2_persist "L2 persistence" "$C/l2_persist.cu"
flagged l2_persist_no_cupti "L2 persistence" "$C/l2_persist.cu" KOPT_BENCH_NO_CUPTI=1
flagged host_cache "" "$C/host_cache.cu" KOPT_BENCH_NO_CUPTI=1
# Side stream: not a verdict, a time. Its work must be inside the timed region with and without CUPTI.
for mode in cupti no_cupti; do
  envv=""; [ $mode = no_cupti ] && envv=KOPT_BENCH_NO_CUPTI=1
  out=$(env ${envv:+"$envv"} "$B" --ref "$FIX/relu.pt" --inputs "$HERE/relu_big.json" --solution "$C/side_stream.cu" \
        --cache-dir "$CACHE" --device cuda --baseline "$WORK/b-side-$mode.json"); code=$?
  echo "$out" | grep -E '^(CORRECT|TIMER|RUNTIME|KERNEL_TIME|REWARD_HACK|ADVISORY)'
  sms=$(echo "$out" | field "d.get('latency_ms')")
  figure "side_stream_ms_$mode" "$sms (honest same-size kernel $HONEST_MS)"
  check "side_stream_counted_$mode" "$(ok "$("$PY" -c "print(int(float('$sms') >= 0.8 * float('$HONEST_MS')))" 2>/dev/null || echo 0)")" \
    "(side stream $sms ms vs honest $HONEST_MS ms; must be >= 0.8x)"
done

echo "== CPU reward-hack suite through the CUDA build (--device cpu)"
cpu_cheat() { # cheat, ref, inputs
  local out code f
  out=$(bench "$2" "$FIX/$3" "$TESTS/cheats/$1.cpp" --device cpu --baseline "$WORK/b-cpu-$1.json" --max-time 5); code=$?
  f=$(echo "$out" | field "int(d['correct'] is False)")
  check "cpu_cheat_$1" "$([ "$f" = 1 ] && [ $code -ne 0 ] && echo 0 || echo 1)" "(exit $code)"
}
for c in pointer_replay fingerprint_replay batch_skip input_mutation constant_output aten_hijack lazy_hijack state_change; do
  cpu_cheat $c linear_relu.pt linear_relu.json
done
for c in alias_output view_output stale_buffer uninit_output deferred_thread; do cpu_cheat $c relu.pt relu.json; done
cpu_cheat tiny_zeros tiny_scale.pt tiny_scale.json

echo "== CUPTI kernel-only time vs CUDA-event time (same kernel)"
cu=$(bench relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu" --device cuda --baseline "$WORK/b-cupti.json")
ev=$(KOPT_BENCH_NO_CUPTI=1 bench relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu" --device cuda --baseline "$WORK/b-event.json")
timer=$(echo "$cu" | field "d['native_metrics'].get('timer')")
kern=$(echo "$cu" | field "d['native_metrics'].get('kernel_ms', -1)")
launches=$(echo "$cu" | field "d['native_metrics'].get('launches', -1)")
evt=$(echo "$ev" | field "d.get('latency_ms', -1)")
figure cupti_kernel_ms "$kern (launches/call $launches)"
figure event_latency_ms "$evt"
check cupti_used "$([ "$timer" = cupti ] && echo 0 || echo 1)" "(timer=$timer; $(echo "$cu" | grep '^TIMER' | head -1))"
check cupti_vs_events "$(ok "$("$PY" -c "k,e=float('$kern'),float('$evt');print(int(k>0 and e>0 and 0.5<k/e<=1.05))" 2>/dev/null || echo 0)")" \
  "(kernel-only $kern ms / event $evt ms; expect a bit below 1)"

echo "== timing stability: a >= 50 us kernel, <= 50 trials, 10 separate evaluations (throttle watch on)"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown \
  --format=csv,noheader -lms 250 > "$WORK/clocks.csv" 2>/dev/null &
smi=$!
: > "$WORK/stab.txt"
for i in $(seq 1 10); do
  o=$(bench relu.pt "$HERE/relu_stab.json" "$C/relu_kernel.cu" --device cuda --max-trials 50 --baseline "$WORK/b-stab.json")
  v=$(echo "$o" | field "'%s %s' % (d.get('latency_ms'), d['native_metrics'].get('trials'))")
  echo "run $i: latency_ms trials = $v"; echo "$v" >> "$WORK/stab.txt"
done
kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
stab=$("$PY" - "$WORK/stab.txt" <<'PYEOF'
import sys, statistics as s
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
lat = [float(r[0]) for r in rows if r[0] not in ('None', 'ERR')]
tr = [int(r[1]) for r in rows if len(r) > 1 and r[1] not in ('None', 'ERR')]
if len(lat) < 2 or not tr: print('nan nan 0 0'); sys.exit()
print('%.5f %.3f %d %d' % (s.median(lat), 100 * s.pstdev(lat) / s.mean(lat), max(tr), len(lat)))
PYEOF
)
read -r med cv maxtr nruns <<< "$stab"
figure stability "median ${med} ms, CV of the median ${cv} % over ${nruns} runs, max trials ${maxtr}"
check stability_kernel_ge_50us "$(ok "$("$PY" -c "print(int(float('$med') >= 0.05))" 2>/dev/null || echo 0)")" "(median $med ms)"
check stability_trials_le_50 "$(ok "$("$PY" -c "print(int(0 < $maxtr <= 50))" 2>/dev/null || echo 0)")" "(max trials $maxtr)"
check stability_cv_le_1pct "$(ok "$("$PY" -c "print(int(float('$cv') <= 1.0 and $nruns == 10))" 2>/dev/null || echo 0)")" "(CV $cv %, goal <= 1 %)"
thr=$(awk -F', ' '{for (i = 6; i <= 9; i++) if ($i ~ /^Active/) n++} END {print n + 0}' "$WORK/clocks.csv")
clk=$(awk -F', ' '{gsub(/ MHz/, "", $2); gsub(/ MHz/, "", $3); if (min == "" || $2 < min) min = $2; max = $3} END {print min "/" max " MHz (min SM clock seen / max)"}' "$WORK/clocks.csv")
cp "$WORK/clocks.csv" "$OUT/clocks.csv"
figure sm_clocks "$clk; samples $(wc -l < "$WORK/clocks.csv")"
check no_throttle "$([ "$thr" -eq 0 ] && [ -s "$WORK/clocks.csv" ] && echo 0 || echo 1)" \
  "($thr samples with a thermal/power/hw slowdown reason active; see clocks.csv)"

figure total_s "$(( $(date +%s) - T_START ))"
summary "$([ $fail -eq 0 ] && echo 'all passed' || echo "$fail FAILED")"
[ "$fail" -eq 0 ]
