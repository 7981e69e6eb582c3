// The loop's N-API surface: JSON in and out, coded errors, the helpers lib/loop.mjs relies on.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')
const kopt = createRequire(import.meta.url)(process.env.KOPT_ADDON || path.join(root, 'build/kopt.node'))
const emptySeries = JSON.stringify({ iterations: [], plans: [], envs: [], profileSeqs: [], uncollectedSeqs: [], echoedSeqs: [], rounds: [], bestIndex: null })

test('adviceFromReply through the binding matches the unit vectors (N-1)', () => {
  const unit = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures/vectors/unit.expected.json'), 'utf8'))
  for (const c of unit.adviceFromReply) {
    assert.deepEqual(JSON.parse(kopt.adviceFromReply(c.reply)), { advice: c.advice, note: c.note }, c.reply.slice(0, 40))
  }
})

test('chooseEffort sends only declared efforts', () => {
  assert.equal(kopt.chooseEffort('low', '["off","low"]', 'low'), 'low')
  assert.equal(kopt.chooseEffort('max', '["off","low"]', 'low'), 'low')
  assert.equal(kopt.chooseEffort(null, '[]', null), null)
  assert.equal(kopt.chooseEffort('off', '["low"]', 'low'), null)
})

test('language helpers', () => {
  assert.equal(kopt.guessLanguage('请优化这个内核'), 'zh')
  assert.equal(kopt.guessLanguage('optimize this kernel'), 'en')
  assert.equal(kopt.languageOfMessage('x\n\nRun language: zh — …'), 'zh')
  assert.equal(kopt.languageOfMessage('nothing'), null)
})

test('a controller round trip: arm, settle, control, stop', () => {
  const c = new kopt.LoopController(JSON.stringify({ defaultBudget: 5, evalsPerTurn: 2 }))
  assert.equal(c.armed, false)
  assert.equal(c.language, null)
  assert.deepEqual(JSON.parse(c.arm(null, 'en')), [])
  assert.equal(c.armed, true)
  const acts = JSON.parse(c.settled(emptySeries, JSON.stringify({ agentIdle: true, humanQueued: false, hasUserTask: true })))
  assert.equal(acts.length, 1)
  assert.equal(acts[0].type, 'send')
  assert.equal(acts[0].kind, 'continuation')
  assert.match(acts[0].text, /^\[kernel-loop round 1\] 0\/5 evaluations used/)
  assert.deepEqual(JSON.parse(c.settled(emptySeries, JSON.stringify({ agentIdle: false }))), [])
  const ctl = JSON.parse(c.control(3))
  assert.equal(ctl.loop.evalsDone, 3)
  assert.equal(ctl.loop.round, 1)
  assert.equal(JSON.parse(c.control(null)).loop.evalsDone, 0)
  const stop = JSON.parse(c.stop())
  assert.deepEqual(stop[0], { type: 'abort' })
  assert.deepEqual(stop[1], { type: 'disarmed', reason: 'stopped' })
  const reply = JSON.parse(c.applyControl(JSON.stringify({ action: 'nope' }), null, 'en'))
  assert.equal(reply.status, 400)
  const cmd = JSON.parse(c.command('kloop', 'status', null, 'en'))
  assert.equal(cmd.ok, true)
  assert.match(cmd.text, /last stop: stopped/)
})

test('a supervised checkpoint asks for a review, then the answer is turned into a message', () => {
  const c = new kopt.LoopController('{}')
  c.setConfigRoute(JSON.stringify({ provider: 'p', model: 'm' }))
  assert.equal(c.setSupervise(true), null)
  c.arm(4, 'zh')
  const series = JSON.stringify({ iterations: [{ seq: 5, tool: 'bash', channel: 'shell', correct: true, latencyMs: 2, command: './bench' }], plans: [], envs: [], profileSeqs: [], uncollectedSeqs: [], echoedSeqs: [], rounds: [], bestIndex: 0 })
  const [ask] = JSON.parse(c.settled(series, '{}'))
  assert.equal(ask.type, 'review')
  assert.equal(ask.kind, 'progress')
  assert.equal(ask.provider, 'p')
  assert.match(ask.system, /Chinese/)
  assert.match(ask.prompt, /\.\/bench/)
  assert.equal(c.reviewPending, true)
  const [send] = JSON.parse(c.supervisorAnswered(ask.token, JSON.stringify({ text: '先跑一次 profiler。', finish: 'stop' }), series, '{}'))
  assert.equal(send.kind, 'continuation')
  assert.match(send.text, /Supervisor review \(advisory, from the second model\):\n先跑一次 profiler。/)
  assert.equal(JSON.parse(c.control(1)).supervisor.lastAdvice, '先跑一次 profiler。')
})

test('bad input raises coded errors', () => {
  const c = new kopt.LoopController('{}')
  assert.throws(() => c.settled('{not json', '{}'), (e) => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => c.settled('[1]', '{}'), (e) => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => c.supervisorAnswered('x', '{}', null, '{}'), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => c.command('other', '', null, 'en'), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.adviceFromReply(3), (e) => e.code === 'KOPT_BAD_ARGUMENT')
})
