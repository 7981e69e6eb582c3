// The boundary's return rule (docs/development.md, "The boundary"; src/addon/args.hpp): what goes to
// the wire as it is crosses as Buffers or strings, and everything JS reads crosses as one JS value the
// addon built (never JSON text for JS to parse).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { kopt } from './addon.mjs'

const coded = (code) => (e) => e instanceof kopt.KoptError && e.code === code && e.message !== ''
const facts = [true, false]

test('results JS reads are objects the addon built; results for the wire are bytes or text', () => {
  const s = new kopt.Session('b1', '{}', JSON.stringify({ settings: { defaultBudget: 5 }, route: { provider: 'p', model: 'm' } }))
  const reply = s.applyControl(JSON.stringify({ action: 'loop-arm' }), 'en')
  assert.equal(reply.status, 200)
  assert.equal(reply.armed, true)
  assert.ok(Array.isArray(reply.actions))
  assert.equal(typeof reply.body, 'string', 'the /control answer goes to the wire as it is')
  assert.deepEqual(JSON.parse(reply.body), { control: JSON.parse(s.control) })
  const acts = s.settled(...facts)
  assert.ok(Array.isArray(acts) && acts.length === 1 && acts[0].type === 'send', JSON.stringify(acts))
  assert.deepEqual(s.turnEnded('completed'), [])
  const cmd = s.command('kloop', 'status', 'en')
  assert.equal(typeof cmd, 'object')
  assert.equal(cmd.ok, true)
  assert.ok(Array.isArray(cmd.actions))
  const check = kopt.checkEvaluateArgs('{}', '/tmp')
  assert.equal(check.ok, false)
  assert.equal(typeof check.error, 'string')
  assert.equal(typeof kopt.loopRules.defaultBudget.default, 'number')
  // For the wire: the answer's Buffers, the comparison's Buffer, the CSV and the control as text.
  s.revise()
  assert.ok(s.parts().every((b) => Buffer.isBuffer(b)))
  assert.ok(Buffer.isBuffer(kopt.compare([s, new kopt.Session('b2')])))
  assert.equal(typeof s.csv(), 'string')
  assert.equal(typeof s.control, 'string')
})
