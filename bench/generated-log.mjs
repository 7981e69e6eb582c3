// What the benchmarks share: their --name value options (every bench/*/run.mjs), and a generated session log
// (tests/fixtures/vectors/gen-large.mjs, N events as a JSON array) in a temporary folder removed
// when the process exits.
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
