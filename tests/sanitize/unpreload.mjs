// Loaded through NODE_OPTIONS in every node process of the sanitize suite's node run. The sanitizer
// runtimes are preloaded (LD_PRELOAD) because node itself is not instrumented; a test file's process
// drops the preload from its environment once it has started, so the commands it runs (the finalize
// replay's bash, under RLIMIT_DATA) do not inherit ASan, whose shadow reservation cannot live under a
// data limit. The test runner's own process keeps it: it starts the test files. The preload is kept
// aside in KOPT_SANITIZE_PRELOAD for a test whose child loads the sanitized addon itself (a bench at
// its smallest size): ASan must come first in such a process, or it aborts on V8's mappings.
if (process.env.NODE_TEST_CONTEXT && process.env.LD_PRELOAD) {
  process.env.KOPT_SANITIZE_PRELOAD = process.env.LD_PRELOAD
  delete process.env.LD_PRELOAD
}
