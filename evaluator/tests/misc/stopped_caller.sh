#!/usr/bin/env bash
# Nothing kopt-bench starts outlives it. A candidate that hangs (cheats/reach/hang.cpp) keeps the judge,
# its zygote and the sandboxed runner busy; then the caller stops kopt-bench:
#   SIGTERM (a caller's timeout): kopt-bench still prints its result line and exits, and nothing remains;
#   SIGKILL: kopt-bench cannot answer, and nothing remains either (each child dies with its parent).
#   bash stopped_caller.sh KOPT_BENCH CACHE_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
B=$1 CACHE=$2
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
descendants() {  # every process below $1, by walking /proc
  local all=() p
  for p in $(pgrep -P "$1"); do all+=("$p") ; all+=($(descendants "$p")); done
  echo "${all[@]}"
}
started() {  # a process's start time (field 22 of /proc/PID/stat, after the parenthesised name)
  sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'
}
start() {
  setsid "$B" --ref "$here/fixtures/relu.pt" --inputs "$here/fixtures/relu.json" --solution "$here/cheats/reach/hang.cpp" \
    --cache-dir "$CACHE" --baseline "$d/baseline-$1.json" --timeout 300 --no-timing >"$d/out-$1" 2>&1 &
  pid=$!
  # Until the runner is up: the judge, its zygote, the sandbox's holder and the runner (5 or more
  # processes below kopt-bench), for at most 60 s.
  for _ in $(seq 1 600); do
    [ "$(descendants "$pid" | wc -w)" -ge 5 ] && break
    sleep 0.1
  done
  sleep 1
}
for sig in TERM KILL; do
  start "$sig"
  kids=$(descendants "$pid")
  [ -n "$kids" ] || fail "SIG$sig: kopt-bench started no judge"
  declare -A born=()
  for k in $kids; do born[$k]=$(started "$k"); done
  kill -"$sig" "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "SIG$sig: kopt-bench did not end"
  # A killed process takes a moment to end (a PID namespace's first process waits for the rest of
  # its namespace; a loaded machine is slow at it): poll for up to 20 s. A process counts only while it
  # is the same one (same start time), so a PID the kernel hands out again is not blamed on us.
  left=""
  for _ in $(seq 1 200); do
    left=""
    for k in $kids; do
      st=$(started "$k")
      [ -n "$st" ] && [ "$st" = "${born[$k]}" ] || continue
      state=$(awk '{print $3}' "/proc/$k/stat" 2>/dev/null)
      [ "$state" = Z ] || left+=" $k[$state]($(tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null | cut -c1-60))"
    done
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || fail "SIG$sig: processes outlived kopt-bench by 20 s:$left"
  if [ "$sig" = TERM ]; then
    grep -q '^KERNEL_EVAL=' "$d/out-$sig" || fail "SIGTERM: no result line: $(tail -c 400 "$d/out-$sig")"
  fi
  echo "SIG$sig: kopt-bench ended, nothing it started remains ($(wc -w <<<"$kids") processes were running)"
done
echo "stopped caller checks passed"
