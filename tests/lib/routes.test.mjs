// The control object (P-4) a session's loop makes from the plugin config (lib/config.mjs loopJson):
// without loop state, armed false and zeros, the configured route reported. The /control validation
// (Q-2) is C++'s: tests/core/test_loop.cpp.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { kopt } from '../addon/addon.mjs'
import { loopJson, resolveConfig } from '../../lib/config.mjs'

const { config } = resolveConfig({}, kopt.loopRules)
const withSup = resolveConfig({ supervisor: { provider: 'p', model: 'm', reasoningEffort: 'high' } }, kopt.loopRules).config
const controlOf = (cfg, available) => JSON.parse(new kopt.Session('s', '{}', loopJson(cfg, available)).control)

test('control without loop state: armed false, zeros, configured route reported', () => {
  const c = controlOf(config, false)
  assert.deepEqual(c.loop, { armed: false, budget: 0, round: 0, evalsDone: 0, evalsOverBudget: 0, available: false, defaultBudget: 20 })
  assert.deepEqual(c.supervisor, { enabled: false, configured: false })
  const s = controlOf(withSup, true)
  assert.equal(s.loop.available, true)
  assert.equal(s.loop.evalsDone, 0)
  assert.deepEqual(s.supervisor.configRoute, { provider: 'p', model: 'm', reasoningEffort: 'high' })
  assert.deepEqual(s.supervisor.effective, { provider: 'p', model: 'm', reasoningEffort: 'high', source: 'config' })
  assert.equal(controlOf(resolveConfig({ loop: { defaultBudget: 33 } }, kopt.loopRules).config, true).loop.defaultBudget, 33)
})
