// The /control validation (spec Q-2) and the control object without loop state (P-4).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkControlAction, defaultControl } from '../../lib/index.mjs'
import { resolveConfig } from '../../lib/config.mjs'

const { config } = resolveConfig({})
const withSup = resolveConfig({ supervisor: { provider: 'p', model: 'm', reasoningEffort: 'high' } }).config
const loop = { available: true }

test('loop-arm: 503 without loop machinery; outputLanguage zh|en only', () => {
  assert.equal(checkControlAction({ action: 'loop-arm' }, config, undefined).status, 503)
  assert.equal(checkControlAction({ action: 'loop-arm' }, config, { available: false }).status, 503)
  assert.equal(checkControlAction({ action: 'loop-arm', outputLanguage: 'fr' }, config, loop).status, 400)
  assert.equal(checkControlAction({ action: 'loop-arm', outputLanguage: 'zh' }, config, loop).status, 200)
})

test('supervise-on without any route is a 409; supervise-use rules', () => {
  assert.equal(checkControlAction({ action: 'supervise-on' }, config, undefined).status, 409)
  assert.equal(checkControlAction({ action: 'supervise-on' }, withSup, undefined).status, 200)
  assert.equal(checkControlAction({ action: 'supervise-use', provider: ' ', model: '' }, config, loop).status, 200)
  assert.equal(checkControlAction({ action: 'supervise-use', reasoningEffort: 'high' }, config, loop).status, 400)
  assert.equal(checkControlAction({ action: 'supervise-use', provider: 'p' }, config, loop).status, 400)
  assert.equal(checkControlAction({ action: 'supervise-use', provider: 'p', model: 5 }, config, loop).status, 400)
  assert.equal(checkControlAction({ action: 'supervise-use', provider: 'p', model: 'm' }, config, loop).status, 200)
})

test('unknown actions are named', () => {
  assert.deepEqual(checkControlAction({ action: 'explode' }, config, loop), { status: 400, body: { error: 'unknown action: explode' } })
  assert.equal(checkControlAction({}, config, loop).status, 400)
  assert.equal(checkControlAction({ action: { x: 1 } }, config, loop).status, 400)
})

test('control without loop state: armed false, zeros, configured route reported', () => {
  const c = defaultControl(config, { completedEvals: 3 })
  assert.deepEqual(c.loop, { armed: false, budget: 0, round: 0, evalsDone: 3, evalsOverBudget: 0, available: false, defaultBudget: 20 })
  assert.deepEqual(c.supervisor, { enabled: false, configured: false })
  const s = defaultControl(withSup, undefined, true)
  assert.equal(s.loop.available, true)
  assert.equal(s.loop.evalsDone, 0)
  assert.deepEqual(s.supervisor.configRoute, { provider: 'p', model: 'm', reasoningEffort: 'high' })
  assert.equal(s.supervisor.effective.source, 'config')
})
