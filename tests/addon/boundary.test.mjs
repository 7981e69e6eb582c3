// The boundary's two rules (docs/development.md, "The boundary"; src/addon/args.hpp):
//   results — what goes to the wire as it is crosses as Buffers or strings, and everything JS reads
//     crosses as one JS value the addon built (never JSON text for JS to parse);
//   arguments — a wrong argument is a KoptError with a code, never a silent default, a dropped
//     element or a rounded number.
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
  assert.equal(typeof s.json(), 'string')
  assert.equal(typeof s.markdown('en'), 'string')
  assert.equal(typeof s.control, 'string')
  // The markdown's language is zh or en, never a default.
  for (const bad of [undefined, 'fr', 1]) assert.throws(() => s.markdown(bad), { code: 'KOPT_BAD_ARGUMENT' })
})

test('compare(entries): an entry is a Session, {id, error} or {id, loading: true}; nothing else is read as one', () => {
  const others = Array.from({ length: kopt.compareMin - 1 }, (_, i) => ({ id: `e${i}`, error: 'gone' }))
  const ok = kopt.compare([{ id: 'a', loading: true }, ...others])
  assert.equal(JSON.parse(ok.toString()).sessions[0].loading, true)
  for (const entry of [
    { id: 'a', loading: 'yes' }, // was read as true
    { id: 'a', loading: 1 },
    { id: 'a', loading: false }, // was given the reason "unreadable"
    { id: 'a' },
    { id: 'a', error: 5 }, // was dropped, then "unreadable"
    { id: 'a', error: '' },
    { id: 'a', loading: true, error: 'x' },
    { id: 7, error: 'x' },
  ]) {
    assert.throws(() => kopt.compare([entry, ...others]), coded('KOPT_BAD_ARGUMENT'), JSON.stringify(entry))
  }
})

test('supervisorAnswered: the token is a whole number, the answer has its text and a known finish', () => {
  const s = new kopt.Session('b3')
  for (const token of [1.5, -1, NaN, Infinity, 2 ** 54]) {
    assert.throws(() => s.supervisorAnswered(token, '{"text":"","finish":"stop"}', ...facts), coded('KOPT_BAD_ARGUMENT'), String(token))
  }
  for (const answer of [{ finish: 'stop' }, { text: 5, finish: 'stop' }, { text: 'ok' }, { text: 'ok', finish: 'later' }, { text: 'ok', finish: 1 }]) {
    assert.throws(() => s.supervisorAnswered(1, JSON.stringify(answer), ...facts), coded('KOPT_BAD_JSON'), JSON.stringify(answer))
  }
  assert.deepEqual(s.supervisorAnswered(1, '{"text":"ok","finish":"timeout"}', ...facts), [], 'an unknown token: no action')
  for (const n of [1.5, -1]) assert.throws(() => s.skip(n), coded('KOPT_BAD_ARGUMENT'))
})

test('chooseEffort: the declared efforts are strings, none dropped', () => {
  assert.equal(kopt.chooseEffort('low', '["off","low"]', null), 'low')
  for (const declared of ['["low", 3]', '["low", null]', '[["low"]]']) {
    assert.throws(() => kopt.chooseEffort('low', declared, null), coded('KOPT_BAD_JSON'), declared)
  }
})

test('runReplay: the output caps are whole byte counts, not truncated', () => {
  for (const caps of [{ headCap: 1.5 }, { tailCap: 4096.5 }, { headCap: '16' }, { tailCap: 0 }]) {
    assert.throws(() => kopt.runReplay({ command: 'true', cwd: '/tmp', ...caps }), coded('KOPT_BAD_ARGUMENT'), JSON.stringify(caps))
  }
})
