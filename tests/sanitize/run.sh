#!/usr/bin/env bash
# The gtest and node suites again, built with AddressSanitizer + UndefinedBehaviorSanitizer in a
# separate build folder. Any sanitizer report fails the run.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$KOPT_ROOT"
B=build-asan
cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKOPT_SANITIZE=address,undefined >/dev/null
cmake --build $B -j"$(nproc)"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
no_skips ctest --test-dir $B --output-on-failure -j"$(nproc)" -E 'Soak'
# Node is not instrumented: preload the runtimes; its own allocations at exit are not ours to judge.
asan=$(g++ -print-file-name=libasan.so)
ubsan=$(g++ -print-file-name=libubsan.so)
# The test files by name: Node 22 reads a bare directory argument as a module, not a folder of tests.
node_tests=(tests/addon/*.test.mjs)
[ -d tests/lib ] && node_tests+=(tests/lib/*.test.mjs)
# unpreload.mjs: the commands the tests run (replays under a data limit) do not inherit the runtimes.
no_skips env ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 LD_PRELOAD="$asan $ubsan" KOPT_ADDON="$KOPT_ROOT/$B/kopt.node" KOPT_TEST_ADDON="$KOPT_ROOT/$B/kopt-test.node" \
  NODE_OPTIONS="--import=$KOPT_ROOT/tests/sanitize/unpreload.mjs" node --test "${node_tests[@]}"
