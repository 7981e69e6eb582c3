#!/usr/bin/env bash
# Whole-process wall time of (a) a cached evaluation and (b) an edit -> result cycle (one changed
# line, so one candidate build), for kopt-bench and for the older Python approach
# (old_python_eval.py: cpp_extension.load + a Python timing loop) where it can run (needs
# python3-torch and ninja). Prints a side-by-side table. Usage:
#   bash evaluator/bench/bench_cycle.sh [REPS=3]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-3}
BUILD=${KOPT_EVAL_BUILD_DIR:-$ROOT/build-evaluator}
B="$BUILD/kopt-bench"
FIX="$ROOT/evaluator/tests/fixtures"
CAND="$ROOT/evaluator/tests/honest/linear_relu_aten.cpp"
WORK=$(mktemp -d /tmp/kopt-bench-cycle.XXXXXX)
[ -x "$B" ] || { echo "build kopt-bench first: cmake -S evaluator -B build-evaluator && cmake --build build-evaluator -j2"; exit 1; }

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
edit_copy() { local f="$WORK/cand_$1.cpp"; cp "$CAND" "$f"; echo "// edit $1 $(now)" >> "$f"; echo "$f"; }

kb() { "$B" --ref "$FIX/linear_relu.pt" --inputs "$FIX/linear_relu.json" --solution "$1" \
        --cache-dir "$WORK/cache" --baseline "$WORK/baseline.json" >/dev/null 2>&1; }

# warm: the precompiled header and the frozen baseline exist in a user's steady state
kb "$CAND"
declare -a kc ke pc pe
for i in $(seq 1 "$REPS"); do
  t=$(now); kb "$CAND"; kc+=("$(echo "$(now) - $t" | bc)")
  f=$(edit_copy "k$i"); t=$(now); kb "$f"; ke+=("$(echo "$(now) - $t" | bc)")
done

py_ok=0
if /usr/bin/python3 -c 'import torch' 2>/dev/null && command -v ninja >/dev/null; then
  py_ok=1
  pyrun() { /usr/bin/python3 "$ROOT/evaluator/bench/old_python_eval.py" "$FIX/linear_relu.py" "$1" "$2" >/dev/null 2>&1; }
  pyrun "$CAND" "$WORK/py-cached"
  for i in $(seq 1 "$REPS"); do
    t=$(now); pyrun "$CAND" "$WORK/py-cached"; pc+=("$(echo "$(now) - $t" | bc)")
    f=$(edit_copy "p$i"); t=$(now); pyrun "$f" "$WORK/py-$i"; pe+=("$(echo "$(now) - $t" | bc)")
  done
fi

m() { printf '%s\n' "$@" | median; }
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); median of $REPS runs, whole-process wall seconds"
printf '%-34s %14s %14s\n' "" "kopt-bench" "old Python"
if [ $py_ok = 1 ]; then
  printf '%-34s %14.2f %14.2f\n' "cached evaluation" "$(m "${kc[@]}")" "$(m "${pc[@]}")"
  printf '%-34s %14.2f %14.2f\n' "edit -> result (one rebuild)" "$(m "${ke[@]}")" "$(m "${pe[@]}")"
else
  printf '%-34s %14.2f %14s\n' "cached evaluation" "$(m "${kc[@]}")" "n/a"
  printf '%-34s %14.2f %14s\n' "edit -> result (one rebuild)" "$(m "${ke[@]}")" "n/a"
  echo "(old Python approach not run: needs /usr/bin/python3 with torch and ninja)"
fi
echo "note: kopt-bench also checks 10 trials, a sentinel and the dispatcher, and times until the median's CI is tight;"
echo "      the old loop checks 5 trials and times a fixed 100 calls on one input set."
rm -rf "$WORK"
