// bench/revision/run.mjs at its smallest size: it runs and prints its figures (the real sizes run apart).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchEnv } from './bench-env.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

test('bench/revision prints one figure line per addon and round, and a ratio with --before', () => {
  const addon = path.join(root, 'lib/native/linux-x64/kopt.node')
  const out = execFileSync(process.execPath, [path.join(root, 'bench/revision/run.mjs'), '--events', '2000', '--revisions', '4', '--rounds', '2', '--before', addon], { encoding: 'utf8', env: benchEnv() })
  const lines = out.trim().split('\n').map(l => JSON.parse(l))
  const figures = lines.filter(l => l.addon)
  assert.deepEqual(figures.map(l => l.addon), ['before', 'after', 'before', 'after'])
  for (const l of figures) {
    assert.equal(l.events, 2000)
    assert.ok(l.points > 50, `${l.points} points`)
    for (const k of ['feedP50Ms', 'reviseP50Ms', 'deltaP50Ms', 'deltaP90Ms']) assert.ok(Number.isFinite(l[k]) && l[k] >= 0, `${k} ${l[k]}`)
  }
  assert.equal(lines.filter(l => l.ratio === 'before/after').length, 1)
})
