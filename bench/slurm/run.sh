#!/usr/bin/env bash
# The cost of kopt-bench --slurm, measured against a real one-node Slurm (tests/cluster/cluster.sh) in one run:
#   one candidate: a local kopt-bench run against the same evaluation through --slurm (submit to result);
#   N candidates:  N local runs one after another against one N-element job array.
# Every figure is the median wall time over --reps runs. The compile cache is warmed first, so the
# figures are the scheduler's and the forwarding's overhead, not compilation.
#   bash bench/slurm/run.sh [--reps R] [--candidates N] [--timing]   (defaults: 3, 8, --no-timing)
# Needs root and Slurm installed (KOPT_TEST_ONLY=cluster bash scripts/test.sh installs it) and a built
# build-evaluator/kopt-bench (KOPT_TEST_ONLY=evaluator bash scripts/test.sh builds it).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. scripts/lib.sh
. tests/cluster/cluster.sh
REPS=3 N=8 TIMING=--no-timing
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --candidates) N=$2; shift 2 ;;
    --timing) TIMING=""; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
KB=$ROOT/${KOPT_EVAL_BUILD_DIR:-build-evaluator}/kopt-bench
[ -x "$KB" ] || { echo "no $KB: build the evaluator first" >&2; exit 1; }
# Inside the cluster suite (KOPT_CLUSTER_DIR set, squeue answers) the suite's cluster is reused.
if [ -n "${KOPT_CLUSTER_DIR:-}" ] && squeue -h >/dev/null 2>&1; then
  :
else
  trap 'cluster_stop' EXIT
  cluster_start || { echo "the one-node cluster did not start" >&2; exit 1; }
fi
W=$(mktemp -d "$KOPT_CLUSTER_DIR/out/bench-XXXXXX")
E=$ROOT/evaluator/tests
cp "$E/fixtures/relu.pt" "$E/fixtures/relu.json" "$W/"
sols=()
for i in $(seq 0 $((N - 1))); do cp "$E/honest/relu_loop.cpp" "$W/cand$i.cpp"; sols+=(--solution "cand$i.cpp"); done
common=(--ref relu.pt --inputs relu.json --cache-dir "$W/cache" $TIMING)
cd "$W"
# Warm the cache for every candidate (the cache keys on the source's path too).
for i in $(seq 0 $((N - 1))); do "$KB" "${common[@]}" --solution "cand$i.cpp" > /dev/null; done

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
timed() {  # timed CMD…: prints the wall seconds; fails when the command does
  local t; t=$(now); "$@" > "$W/last.out" 2>&1 || { echo "failed: $* ($(tail -n 3 "$W/last.out"))" >&2; return 1; }
  awk "BEGIN {print $(now) - $t}"
}
local1=() slurm1=() localN=() arrayN=()
for r in $(seq "$REPS"); do
  local1+=("$(timed "$KB" "${common[@]}" --solution cand0.cpp)") || exit 1
  slurm1+=("$(timed "$KB" --slurm "-n1" "${common[@]}" --solution cand0.cpp)") || exit 1
  t=$(now)
  for i in $(seq 0 $((N - 1))); do "$KB" "${common[@]}" --solution "cand$i.cpp" > /dev/null || exit 1; done
  localN+=("$(awk "BEGIN {print $(now) - $t}")")
  arrayN+=("$(timed "$KB" --slurm "-n1" "${common[@]}" "${sols[@]}")") || exit 1
  [ "$(grep -c '^KERNEL_EVAL=' "$W/last.out")" -eq "$N" ] || { echo "the array printed $(grep -c '^KERNEL_EVAL=' "$W/last.out") lines, wanted $N" >&2; exit 1; }
done
m() { printf '%s\n' "$@" | median; }
l1=$(m "${local1[@]}") s1=$(m "${slurm1[@]}") ln=$(m "${localN[@]}") an=$(m "${arrayN[@]}")
cpus=$(nproc)
printf 'kopt-bench --slurm overhead (one-node Slurm on 127.0.0.1, %s CPUs, %s, median of %s)\n' "$cpus" "${TIMING:-timed}" "$REPS"
printf '  1 candidate:  local %.2f s   --slurm %.2f s   overhead %+.2f s\n' "$l1" "$s1" "$(awk "BEGIN {print $s1 - $l1}")"
printf '  %s candidates: %s local runs in a row %.2f s   one %s-element array %.2f s   ratio %.2f\n' "$N" "$N" "$ln" "$N" "$an" "$(awk "BEGIN {print $an / $ln}")"
echo "{\"reps\":$REPS,\"candidates\":$N,\"cpus\":$cpus,\"local1_s\":$l1,\"slurm1_s\":$s1,\"localN_s\":$ln,\"arrayN_s\":$an}"
