// The environment a bench's processes get from a test that runs the bench at its smallest size.
// Under the sanitize suite a bench's processes may load the sanitized addon ($KOPT_ADDON, through
// lib/native/load.mjs): they get the sanitizer runtimes back (tests/sanitize/unpreload.mjs keeps them
// aside in KOPT_SANITIZE_PRELOAD) and are no test's processes, which would drop them again. ASan
// must come first in such a process, or it aborts on V8's mappings. Elsewhere: the test's own.
export function benchEnv () {
  if (!process.env.KOPT_SANITIZE_PRELOAD) return process.env
  const env = { ...process.env, LD_PRELOAD: process.env.KOPT_SANITIZE_PRELOAD }
  delete env.NODE_TEST_CONTEXT
  return env
}
