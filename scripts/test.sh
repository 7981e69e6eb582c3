#!/usr/bin/env bash
# The whole test suite: sets up what is missing, builds, then runs every suite that exists.
#   bash scripts/test.sh                 everything
#   KOPT_TEST_ONLY="core addon" bash scripts/test.sh   a subset (names below)
# Ends with one line "suites: N passed, N failed, N skipped"; exits non-zero when any suite failed.
# A suite that exits 77 could not run on this machine (it printed SKIPPED and why): counted as skipped.
# With CI=true (as CI sets it) nothing may skip: a suite that cannot run fails (scripts/lib.sh cannot_run),
# a test runner that skipped a test fails (no_skips), and an exit 77 counts as a failure here.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"

only=" ${KOPT_TEST_ONLY:-} "
want() { [ "$only" = "  " ] || [[ "$only" == *" $1 "* ]]; }

passed=0; failed=0; skipped=0; failed_names=(); skipped_names=()
run_suite() {
  local name=$1; shift
  want "$name" || return 0
  log "suite $name: $*"
  local t0=$SECONDS
  "$@"; local rc=$?
  if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); log "suite $name passed ($((SECONDS - t0)) s)"
  elif [ "$rc" -eq 77 ] && ! in_ci; then skipped=$((skipped + 1)); skipped_names+=("$name"); log "suite $name SKIPPED ($((SECONDS - t0)) s)"
  else failed=$((failed + 1)); failed_names+=("$name"); log "suite $name FAILED ($((SECONDS - t0)) s)"; fi
}

bash scripts/setup-deps.sh || { echo "suites: 0 passed, 1 failed, 0 skipped"; exit 1; }
# -Werror for our own targets: a new warning fails CI (CMakeLists.txt kopt_warnings)
bash scripts/build.sh -DKOPT_WERROR=ON || { echo "suites: 0 passed, 1 failed, 0 skipped"; exit 1; }

run_suite core no_skips ctest --test-dir build --output-on-failure -j"$(nproc)"
# The test files by name: Node 22 reads a bare directory argument as a module, not a folder of tests.
node_tests=(tests/addon/*.test.mjs)
[ -d tests/lib ] && node_tests+=(tests/lib/*.test.mjs)
run_suite addon no_skips node --test --test-reporter=spec "${node_tests[@]}"
[ -x scripts/check-prebuilt.sh ] && run_suite prebuilt bash scripts/check-prebuilt.sh
[ -f tests/sanitize/run.sh ] && run_suite sanitize bash tests/sanitize/run.sh
[ -f tests/fuzz/run-smoke.sh ] && run_suite fuzz bash tests/fuzz/run-smoke.sh
[ -f evaluator/tests/run-cpu.sh ] && run_suite evaluator bash evaluator/tests/run-cpu.sh
[ -f tests/e2e/run.sh ] && run_suite e2e bash tests/e2e/run.sh
[ -f tests/browser/run.sh ] && run_suite browser bash tests/browser/run.sh
[ -f tests/cluster/run.sh ] && run_suite cluster bash tests/cluster/run.sh
[ -f tests/report/run.sh ] && run_suite report bash tests/report/run.sh
[ -f tests/readme/run.sh ] && run_suite readme bash tests/readme/run.sh
[ -f tests/readme/docs.sh ] && run_suite docs bash tests/readme/docs.sh

[ ${#failed_names[@]} -gt 0 ] && log "failed suites: ${failed_names[*]}"
[ ${#skipped_names[@]} -gt 0 ] && log "skipped suites: ${skipped_names[*]}"
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
