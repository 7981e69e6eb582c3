// The control object without loop state (P-4). The /control validation (Q-2) is C++'s: tests/core/test_loop.cpp.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { defaultControl } from '../../lib/index.mjs'
import { resolveConfig } from '../../lib/config.mjs'

const { config } = resolveConfig({})
const withSup = resolveConfig({ supervisor: { provider: 'p', model: 'm', reasoningEffort: 'high' } }).config

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
