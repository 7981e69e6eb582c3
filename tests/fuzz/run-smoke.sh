#!/usr/bin/env bash
# Bounded fuzz smoke: builds the libFuzzer targets with clang + ASan + UBSan and runs each for
# $KOPT_FUZZ_SECONDS (default 60) from seeds made of the fixtures. Fails on any crash, leak,
# sanitizer report or timeout. Prints each target's exec count.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$KOPT_ROOT"
apt_install_lists scripts/deps/apt-fuzz.txt
SECS=${KOPT_FUZZ_SECONDS:-60}
B=build-fuzz
CC=clang CXX=clang++ cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKOPT_BUILD_FUZZERS=ON -DKOPT_BUILD_TESTS=OFF \
  -DKOPT_BUILD_ADDON=OFF -DKOPT_SANITIZE=address,undefined >/dev/null
cmake --build $B -j"$(nproc)" --target fuzz_contract fuzz_shell fuzz_log fuzz_projector fuzz_evaluator_spec
rm -rf $B/corpus && node tests/fuzz/seeds.mjs $B/corpus
status=0
for t in fuzz_contract fuzz_shell fuzz_log fuzz_projector fuzz_evaluator_spec; do
  mkdir -p $B/artifacts/$t
  log=$B/$t.log
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
     $B/$t -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
     -artifact_prefix=$B/artifacts/$t/ $B/corpus/$t >"$log" 2>&1; then
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 || true)
    echo "fuzz $t: ok, $execs execs in ${SECS}s, $cov"
  else
    echo "fuzz $t: FAILED (log: $log)"; tail -40 "$log"; status=1
  fi
done
exit $status
