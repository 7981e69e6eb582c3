// The loop's N-API surface (the session object's loop and the free helpers): JSON in and out,
// coded errors, the helpers lib/loop.mjs relies on.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { kopt } from '../addon/addon.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')

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

// The loop lives in the session object: the controller reads the session's own projection.
const facts = [true, false] // agentIdle, humanQueued
const evaluation = (seq, command, latency) => [
  { type: 'tool/call', seq, time: 1000 + seq, data: { callId: `c${seq}`, name: 'bash', arguments: JSON.stringify({ command }) } },
  { type: 'tool/result', seq: seq + 1, time: 1001 + seq, data: { message: { source: { kind: 'tool', callId: `c${seq}` }, content: [{ type: 'text', text: `KERNEL_EVAL={"artifact":"k.cu","correct":true,"latency_ms":${latency}}` }] } } },
]

test('a session loop round trip: arm, settle, control, stop', () => {
  const s = new kopt.Session('r', '{}', JSON.stringify({ settings: { defaultBudget: 5, evalsPerTurn: 2 } }))
  assert.equal(s.armed, false)
  let reply = s.applyControl(JSON.stringify({ action: 'loop-arm' }), 'en')
  assert.deepEqual(reply.actions, [])
  assert.equal(reply.armed, true)
  assert.equal(s.armed, true)
  const acts = s.settled(...facts)
  assert.equal(acts.length, 1)
  assert.equal(acts[0].type, 'send')
  assert.equal(acts[0].kind, 'continuation')
  assert.match(acts[0].text, /^\[kernel-loop round 1\] 0\/5 evaluations used/)
  assert.deepEqual(s.settled(false, false), [])
  s.feed(JSON.stringify([...evaluation(0, './bench a', 3), ...evaluation(2, './bench b', 2)]))
  const ctl = JSON.parse(s.control)
  assert.equal(ctl.loop.evalsDone, 2, 'counted from the session\'s own projection')
  assert.equal(ctl.loop.round, 1)
  reply = s.applyControl(JSON.stringify({ action: 'loop-stop' }), 'en')
  assert.deepEqual(reply.actions[0], { type: 'abort' })
  assert.deepEqual(reply.actions[1], { type: 'disarmed', reason: 'stopped' })
  reply = s.applyControl(JSON.stringify({ action: 'nope' }), 'en')
  assert.equal(reply.status, 400)
  const cmd = s.command('kloop', 'status', 'en')
  assert.equal(cmd.ok, true)
  assert.match(cmd.text, /last stop: stopped/)
  assert.deepEqual(s.turnEnded('completed'), [])
  assert.deepEqual(s.hostCancelled('user'), [])
})

test('a supervised checkpoint asks for a review, then the answer is turned into a message', () => {
  const s = new kopt.Session('v', '{}', JSON.stringify({ route: { provider: 'p', model: 'm' } }))
  assert.equal(s.command('supervise', 'on', 'en').ok, true)
  s.command('kloop', '4', 'zh')
  s.feed(JSON.stringify(evaluation(5, './bench', 2)))
  const [ask] = s.settled(...facts)
  assert.equal(ask.type, 'review')
  assert.equal(ask.kind, 'progress')
  assert.equal(ask.provider, 'p')
  assert.match(ask.system, /Chinese/)
  assert.match(ask.prompt, /\.\/bench/)
  const [send] = s.supervisorAnswered(ask.token, JSON.stringify({ text: '先跑一次 profiler。', finish: 'stop' }), ...facts)
  assert.equal(send.kind, 'continuation')
  assert.match(send.text, /Supervisor review \(advisory, from the second model\):\n先跑一次 profiler。/)
  assert.equal(JSON.parse(s.control).supervisor.lastAdvice, '先跑一次 profiler。')
})

test('bad input raises coded errors, never a silent default', () => {
  const s = new kopt.Session('b')
  assert.throws(() => s.settled('yes', false), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => s.supervisorAnswered('x', '{}', true, false), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => s.supervisorAnswered(1, '{not json', true, false), (e) => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => s.command('other', '', 'en'), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => s.command('kloop', undefined, 'en'), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => s.turnEnded(), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => s.applyControl('{}'), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.adviceFromReply(3), (e) => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.chooseEffort(1, '[]', null), (e) => e.code === 'KOPT_BAD_ARGUMENT')
})
