// bench/compare/run.mjs at its smallest size: it runs and prints its figures (the real sizes run apart).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchEnv } from './bench-env.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

test('bench/compare prints one figure line per mode, every session drawn', () => {
  const out = execFileSync(process.execPath, [path.join(root, 'bench/compare/run.mjs'), '--events', '3000', '--sessions', '3',
    ...(process.env.KOPT_ADDON ? ['--addon', process.env.KOPT_ADDON] : [])],
    { encoding: 'utf8', env: benchEnv() })
  const lines = out.trim().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(lines.map(l => l.mode), ['one', 'compare', 'cold', 'reads'])
  for (const l of lines) {
    assert.equal(l.what, 'compare')
    assert.ok(Number.isFinite(l.worstWaitMs) && l.worstWaitMs >= 0)
  }
  assert.ok(lines[0].points > 50, `${lines[0].points} points`)
  assert.ok(Number.isFinite(lines[3].readMs))
  for (const l of lines.slice(0, 3)) {
    for (const k of ['firstCurveMs', 'allMs', 'answerMaxMs']) assert.ok(Number.isFinite(l[k]) && l[k] >= 0, `${l.mode} ${k} ${l[k]}`)
    assert.ok(l.firstCurveMs <= l.allMs)
  }
  for (const l of lines.slice(1, 3)) {
    assert.equal(l.sessions, 3)
    assert.ok(Number.isFinite(l.keptAnswerMs))
    assert.ok(l.points >= 3 * 50, `${l.points} points drawn`)
  }
})
