import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { kopt, vectorsDir, firstDifference, root } from './addon.mjs'

const cases = fs.readdirSync(vectorsDir).filter(f => f.endsWith('.events.json')).map(f => f.slice(0, -'.events.json'.length))
const read = (name, ext) => {
  const p = path.join(vectorsDir, `${name}.${ext}.json`)
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined
}

test('every vector projects through the binding as expected', () => {
  assert.ok(cases.length >= 70)
  for (const name of cases) {
    const p = new kopt.Projector(read(name, 'config'))
    const st = p.feed(read(name, 'events'))
    assert.equal(st.events, JSON.parse(read(name, 'events')).length, name)
    const series = JSON.parse(p.seriesJson(name, 42))
    const derived = JSON.parse(p.derivedJson(read(name, 'loop')))
    const want = JSON.parse(read(name, 'expected'))
    assert.equal(series.sessionId, name)
    assert.equal(series.updatedAt, 42)
    delete series.sessionId; delete series.updatedAt
    delete want.series.sessionId; delete want.series.updatedAt
    assert.equal(firstDifference(want, { series, derived }), null, name)
  }
})

test('feeding events one at a time (as session/event delivers them) equals feeding the log at once', () => {
  for (const name of ['z01-large-shell-job-mix', 'z03-large-60-evals', 'dv3-replay-blocks']) {
    const events = JSON.parse(read(name, 'events'))
    const whole = new kopt.Projector()
    whole.feed(JSON.stringify(events))
    const live = new kopt.Projector()
    let last = live.version
    for (const ev of events) {
      live.feed(JSON.stringify(ev))
      assert.ok(live.version >= last)
      last = live.version
    }
    assert.equal(live.seriesJson('s', 0), whole.seriesJson('s', 0), name)
  }
})

test('a malformed event is skipped and counted; the rest of the batch is projected', () => {
  const events = JSON.parse(read('b01-contract-basic', 'events'))
  const batch = [42, null, { type: 'tool/call', seq: 1, data: null }, { type: 'tool/result', seq: 2, data: 'x' }, ...events]
  const p = new kopt.Projector()
  const st = p.feed(JSON.stringify(batch))
  assert.deepEqual(st, { events: batch.length, skipped: 4, unreadable: 0 })
  assert.equal(JSON.parse(p.seriesJson('s', 0)).iterations.length, 1)
  assert.deepEqual(p.stats(), { events: batch.length, skipped: 4 })
})

test('JSONL text with broken lines is read line by line', () => {
  const events = JSON.parse(read('b01-contract-basic', 'events'))
  const text = [events.slice(0, 3).map(e => JSON.stringify(e)).join('\n'), '{not json', ...events.slice(3).map(e => JSON.stringify(e))].join('\n')
  const p = new kopt.Projector()
  const st = p.feed(text)
  assert.equal(st.skipped, 1)
  assert.equal(JSON.parse(p.seriesJson('s', 0)).iterations.length, 1)
})

test('errors carry stable codes', () => {
  assert.throws(() => new kopt.Projector('{"benchTools": 3}'), e => e.code === 'KOPT_BAD_CONFIG' && /benchTools/.test(e.message))
  // A string argument that must hold JSON and does not: KOPT_BAD_JSON, in every binding.
  assert.throws(() => new kopt.Projector('nope'), e => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => new kopt.Projector(3), e => e.code === 'KOPT_BAD_ARGUMENT')
  const p = new kopt.Projector()
  assert.throws(() => p.feed(42), e => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => p.feed('definitely not events'), e => e.code === 'KOPT_BAD_EVENTS')
  assert.throws(() => p.seriesJson(1), e => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => p.seriesJson('s', 0, '{"x":'), e => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => p.derivedJson('[]'), e => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => kopt.chartJson('[]'), e => e.code === 'KOPT_BAD_JSON')
  assert.throws(() => kopt.runReplay({ command: 'true', cwd: '/', timeoutSec: -1 }), e => e instanceof kopt.KoptError && e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.syncPreset('', '/x'), e => e instanceof kopt.KoptError && e.code === 'KOPT_BAD_ARGUMENT')
})

test('seriesBuffer holds the same UTF-8 body as seriesJson', () => {
  const p = new kopt.Projector()
  p.feed(read('l01-plans-env', 'events'))
  const buf = p.seriesBuffer('会话', 7)
  assert.ok(Buffer.isBuffer(buf))
  assert.equal(buf.toString('utf8'), p.seriesJson('会话', 7))
})

test('control is spliced into the /series body verbatim', () => {
  const p = new kopt.Projector()
  const body = JSON.parse(p.seriesJson('s', 5, JSON.stringify({ loop: { armed: false, budget: 0 } })))
  assert.deepEqual(body.control, { loop: { armed: false, budget: 0 } })
  assert.deepEqual(body.echoedSeqs, [])
  assert.equal(body.bestIndex, null)
})

test('loadSession reads JSONL logs off the loop thread; missing files reject with a code', async () => {
  const q = (await kopt.loadSession('h', path.join(root, 'tests/fixtures/host-session-kernel-opt.jsonl'))).projector
  const s = JSON.parse(q.seriesJson('h', 0))
  assert.ok(Array.isArray(s.iterations))
  assert.ok(q.stats().events > 50)
  const tmp = path.join(os.tmpdir(), `kopt-${process.pid}.json`)
  fs.writeFileSync(tmp, read('z02-large-tool-channel', 'events'))
  const z = (await kopt.loadSession('z', tmp)).projector
  const direct = new kopt.Projector(); direct.feed(read('z02-large-tool-channel', 'events'))
  assert.equal(z.seriesJson('z', 0), direct.seriesJson('z', 0))
  // Its session was assembled on the worker: the body it answers is a live session's, chart included.
  const loaded = await kopt.loadSession('z', tmp)
  const live = new kopt.Session('z')
  live.feed(read('z02-large-tool-channel', 'events'))
  for (const control of ['{"loop":1}', '{"loop":2}']) {
    loaded.reviseWith(control)
    live.reviseWith(control)
    assert.equal(loaded.body().toString(), live.body().toString())
  }
  assert.equal(loaded.updatedAt, live.updatedAt)
  assert.equal(loaded.completedEvals, live.completedEvals)
  assert.match(loaded.etag, /^"k/)
  fs.unlinkSync(tmp)
  await assert.rejects(kopt.loadSession('x', '/nonexistent/session.jsonl'), e => e.code === 'KOPT_BAD_LOG')
})

test('parseContractLines returns the parsed payloads in line order', () => {
  const out = kopt.parseContractLines('x\n  KERNEL_EVAL={"artifact":"a","correct":true} junk\nnot KERNEL_EVAL={"b":1}\nKERNEL_EVAL={"c":"}"}')
  assert.deepEqual(out, [{ artifact: 'a', correct: true }, { c: '}' }])
})
