#!/usr/bin/env bash
# Cost of the judge's isolation: whole-process wall time of a cached evaluation (frozen baseline,
# cached .so) with this kopt-bench and, when given, an older build measured in the same run; plus
# the pieces the three-process model adds (a bubblewrap start, a LibTorch process start).
# Usage: bash evaluator/bench/bench_isolation.sh [REPS=5] [OLD_BUILD_DIR]
#   OLD_BUILD_DIR: a build-evaluator of the version before (e.g. a `git worktree` of main).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-5}
OLD=${2:-}
BUILD=${KOPT_EVAL_BUILD_DIR:-$ROOT/build-evaluator}
FIX="$ROOT/evaluator/tests/fixtures"
CAND="$ROOT/evaluator/tests/honest/linear_relu_aten.cpp"
WORK=$(mktemp -d /tmp/kopt-bench-iso.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
[ -x "$BUILD/kopt-bench" ] || { echo "build kopt-bench first (cmake --build build-evaluator)"; exit 1; }

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# one cached evaluation: args after the binary
run() { local b=$1; shift; "$b" --ref "$FIX/linear_relu.pt" --inputs "$FIX/linear_relu.json" --solution "$CAND" "$@" >/dev/null 2>&1; }
timeit() { local t; t=$(now); "$@"; echo "$(now) - $t" | bc; }
series() { local out=(); for _ in $(seq 1 "$REPS"); do out+=("$(timeit "$@")"); done; printf '%s\n' "${out[@]}" | median; }

declare -A res
for v in new old; do
  b="$BUILD/kopt-bench"; [ $v = old ] && b="$OLD/kopt-bench"
  [ -x "$b" ] || continue
  a=(--cache-dir "$WORK/cache-$v" --baseline "$WORK/b-$v.json")
  run "$b" "${a[@]}"  # warm: compile, freeze the baseline
  res[$v,full]=$(series run "$b" "${a[@]}")
  res[$v,check]=$(series run "$b" "${a[@]}" --no-timing)
done
bw=$(series bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp /bin/true)
quiet_runner() { "$BUILD/kopt-bench-runner" 2>/dev/null; }
tr=$(series quiet_runner)  # exits at once: the cost of starting a LibTorch process

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); median of $REPS runs, wall seconds"
printf '%-44s %10s %10s\n' "" "this" "before"
for k in full check; do
  label="cached evaluation (defaults)"; [ $k = check ] && label="cached evaluation, --no-timing"
  if [ -n "${res[old,$k]:-}" ]; then
    printf '%-44s %10.3f %10.3f\n' "$label" "${res[new,$k]}" "${res[old,$k]}"
  else
    printf '%-44s %10.3f %10s\n' "$label" "${res[new,$k]}" "n/a"
  fi
done
printf '%-44s %10.3f\n' "bubblewrap sandbox start (/bin/true)" "$bw"
printf '%-44s %10.3f\n' "a LibTorch process start (kopt-bench-runner)" "$tr"
[ -n "$OLD" ] || echo "(no older build given: pass OLD_BUILD_DIR to measure the version before in the same run)"
