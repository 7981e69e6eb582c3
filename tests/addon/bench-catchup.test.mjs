// bench/catchup/run.mjs at its smallest size: it runs and prints its figures (the real sizes run apart).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchEnv } from './bench-env.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

test('bench/catchup prints one figure line per mode, the live ones caught up to the whole log alike', () => {
  // More events than the paced backlog (4 × 2048), so the paced and file modes really take their path.
  const out = execFileSync(process.execPath, [path.join(root, 'bench/catchup/run.mjs'), '--events', '12000'], { encoding: 'utf8', env: benchEnv() })
  const lines = out.trim().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(lines.map(l => l.mode), ['at-once', 'paced', 'file', 'past'])
  for (const l of lines) {
    assert.equal(l.what, 'catchup')
    assert.equal(l.events, 12000)
    assert.ok(l.points > 100, `${l.points} points`)
    for (const k of ['totalMs', 'bodyMs', 'worstWaitMs']) assert.ok(Number.isFinite(l[k]) && l[k] >= 0, `${k} ${l[k]}`)
  }
  // The live modes end with the same projection, so the same body; the past one reads a file short
  // of the events the host had not written yet.
  for (const l of lines.slice(1, 3)) {
    assert.equal(l.points, lines[0].points)
    assert.equal(l.bodyBytes, lines[0].bodyBytes)
  }
  assert.ok(lines[3].points <= lines[0].points)
})
