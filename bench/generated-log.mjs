// What the benchmarks share: their --name value options (every bench/*/run.mjs), a generated session log
// (tests/fixtures/vectors/gen-large.mjs, N events as a JSON array) in a temporary folder removed
// when the process exits, and the longest wait a timer on the thread saw (a host request's wait).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The value after --name on the command line, else dflt. */
export function arg (name, dflt) {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : dflt
}

/** A file holding `events` generated events; `tag` names its folder. */
export function generatedLog (events, tag) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `kopt-${tag}-`))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const log = path.join(dir, 'events.json')
  execFileSync('sh', ['-c', `"${process.execPath}" "${root}/tests/fixtures/vectors/gen-large.mjs" ${Number(events)} > "${log}"`])
  return log
}

/**
 * A timer ticking every `ms` on this thread: worst() is the longest gap between ticks since the last
 * reset() (a block of the thread shows as a long gap); stop() ends it.
 */
export function startTicker (ms = 5) {
  let last = performance.now()
  let worst = 0
  const timer = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last)
    last = now
  }, ms)
  return {
    reset () { last = performance.now(); worst = 0 },
    worst: () => worst,
    stop: () => clearInterval(timer),
  }
}
