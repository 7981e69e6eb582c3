import { test } from 'node:test'
import assert from 'node:assert/strict'
import { kopt } from '../addon/addon.mjs'
import { readFileSync } from 'node:fs'
import { EVALUATE_TOOL, PLUGIN_ID, REPLAY_LINE_PREFIX, REPLAY_TOOL, resolveConfig, routingJson } from '../../lib/config.mjs'

test('defaults when nothing is configured', () => {
  const { config, errors } = resolveConfig(undefined, kopt.loopRules)
  assert.deepEqual(errors, [])
  assert.deepEqual(config.routing, {})
  assert.deepEqual(config.replay, { enabled: true, timeoutSec: 900, maxOutputKiB: 256 })
  assert.deepEqual(config.preset, { install: true, id: 'kernel-opt' })
  assert.equal(config.loop.defaultBudget, 20)
  assert.equal(config.supervisor, undefined)
  assert.equal(routingJson(config), '{}')
})

test('every key is read and validated', () => {
  const { config, errors } = resolveConfig({
    benchTools: ['my_eval', 'my_eval'], shellTools: ['bash', 'sh'], jobTools: ['job_output'],
    profileTools: ['prof'], profileCommands: ['ncu'], finalizeTools: ['fin'], changeTools: ['write'],
    replay: { enabled: false, timeoutSec: 30, maxOutputKiB: 64 },
    preset: { install: false, id: 'kopt-2' },
    loop: { defaultBudget: 5, maxNoProgressRounds: 3, evalsPerTurn: 0, challengeFinalize: false },
    supervisor: { provider: ' p ', model: 'm', reasoningEffort: 'high', temperature: 0.2, maxTokens: 4000, language: '中文', instructions: 'x' },
    trustedHosts: ['Lab.Internal:3080'],
  }, kopt.loopRules)
  assert.deepEqual(errors, [])
  assert.deepEqual(config.routing.benchTools, ['my_eval'])
  assert.deepEqual(JSON.parse(routingJson(config)).shellTools, ['bash', 'sh'])
  assert.equal(config.replay.enabled, false)
  assert.equal(config.replay.timeoutSec, 30)
  assert.deepEqual(config.preset, { install: false, id: 'kopt-2' })
  assert.equal(config.loop.defaultBudget, 5)
  assert.equal(config.supervisor.provider, 'p')
  assert.deepEqual(config.trustedHosts, ['lab.internal:3080'])
})

test('bad values are named in the error and fall back to defaults', () => {
  const { config, errors } = resolveConfig({
    benchTools: 'kernel_evaluate', shellTools: [''], replay: { timeoutSec: 0, enabled: 'yes' },
    preset: { id: '../escape' }, loop: { defaultBudget: 10000 }, supervisor: { provider: 'p' }, surprise: 1,
  }, kopt.loopRules)
  const joined = errors.join('\n')
  for (const path of ['benchTools', 'shellTools', 'replay.timeoutSec', 'replay.enabled', 'preset.id', 'loop.defaultBudget', '"surprise"']) {
    assert.ok(joined.includes(path), `${path} in:\n${joined}`)
  }
  assert.match(joined, /supervisor needs both provider and model/)
  assert.equal(config.routing.benchTools, undefined)
  assert.equal(config.replay.timeoutSec, 900)
  assert.equal(config.preset.id, 'kernel-opt')
  assert.equal(config.loop.defaultBudget, 20)
  assert.equal(config.supervisor, undefined)
})

test('a config that is not a mapping is an error, not a crash', () => {
  const { config, errors } = resolveConfig([1, 2], kopt.loopRules)
  assert.equal(errors.length, 1)
  assert.equal(config.replay.enabled, true)
})

// lib/anchors.json is the one home of the strings both halves put in the log: the JS half reads
// it, the core is built with it (tests/core/test_unit_vectors.cpp checks the core's side against
// the same vectors).
test('the log anchors shared with the core come from lib/anchors.json and match the spec', () => {
  const spec = JSON.parse(readFileSync(new URL('../fixtures/vectors/unit.expected.json', import.meta.url), 'utf8')).constants.anchors
  assert.deepEqual({ PLUGIN_ID, REPLAY_TOOL, REPLAY_LINE_PREFIX },
    { PLUGIN_ID: spec.LOOP_PLUGIN_ID, REPLAY_TOOL: spec.REPLAY_TOOL, REPLAY_LINE_PREFIX: spec.REPLAY_LINE_PREFIX })
  const file = JSON.parse(readFileSync(new URL('../../lib/anchors.json', import.meta.url), 'utf8'))
  assert.deepEqual(file, { pluginId: PLUGIN_ID, replayTool: REPLAY_TOOL, replayLinePrefix: REPLAY_LINE_PREFIX, evaluateTool: EVALUATE_TOOL })
  // Ours (DV-13): the plugin's evaluator tool is the first of the spec's default bench tools.
  assert.equal(EVALUATE_TOOL, JSON.parse(readFileSync(new URL('../fixtures/vectors/unit.expected.json', import.meta.url), 'utf8')).constants.other.DEFAULT_PROJECTION.benchTools[0])
})

test('the loop settings are validated against the core\'s own defaults and bounds (kopt.loopRules)', () => {
  const r = kopt.loopRules
  assert.deepEqual(r.defaultBudget, { default: 20, min: 1, max: 9999 })
  assert.deepEqual(r.budget, { min: 1, max: 9999 })
  const { config, errors } = resolveConfig({ loop: { evalsPerTurn: r.evalsPerTurn.max + 1, defaultBudget: r.defaultBudget.max } }, r)
  assert.equal(config.loop.evalsPerTurn, r.evalsPerTurn.default)
  assert.equal(config.loop.defaultBudget, r.defaultBudget.max)
  assert.match(errors[0], new RegExp(`loop\\.evalsPerTurn must be an integer ${r.evalsPerTurn.min}…${r.evalsPerTurn.max}`))
  // Without the core there is no loop, and nothing to validate it against.
  assert.deepEqual(resolveConfig({}, null).config.loop, {})
})
