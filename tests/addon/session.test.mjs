// kopt.Session: the /series route's one crossing. Its body must equal, byte for byte, what the
// route assembled before (seriesJson + chartJson spliced in), and its revision must move exactly
// when the body would change.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { addonPath, kopt, root, vectorsDir } from './addon.mjs'

const cases = fs.readdirSync(vectorsDir).filter(f => f.endsWith('.events.json')).map(f => f.slice(0, -'.events.json'.length))
const read = (name, ext) => {
  const p = path.join(vectorsDir, `${name}.${ext}.json`)
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined
}
const PROJECTED = new Set(['tool/call', 'tool/result', 'user/message'])
const CHART_OPTIONS = JSON.stringify({ width: 960, height: 300 })

// The body assembled from its parts as the route did before the session object: the series text,
// then the chart computed from that text, then the control object, before the closing brace.
function referenceBody(events, id, control, config) {
  const p = new kopt.Projector(config)
  p.feed(JSON.stringify(events))
  let updatedAt = 0
  for (const e of events) if (e && typeof e.time === 'number' && e.time > updatedAt && PROJECTED.has(e.type)) updatedAt = e.time
  const body = p.seriesJson(id, updatedAt)
  const end = body.lastIndexOf('}')
  return `${body.slice(0, end)},"chart":${kopt.chartJson(body, CHART_OPTIONS)},"control":${control}}`
}

const controlWith = (budget, evalsDone) => JSON.stringify({
  loop: { armed: budget > 0, budget, round: 0, evalsDone, evalsOverBudget: 0, available: true, defaultBudget: 20 },
  supervisor: { enabled: false, configured: false },
})

test('every vector: the session body equals the former route body byte for byte, fed whole or event by event', () => {
  assert.ok(cases.length >= 70)
  for (const name of cases) {
    const events = JSON.parse(read(name, 'events'))
    const config = read(name, 'config')
    // Some times, so updatedAt is exercised (the vectors' events carry none).
    events.forEach((e, i) => { if (e && typeof e === 'object' && i % 3 !== 2) e.time = 1000 + i * 7 })
    for (const budget of [0, 3]) {
      const whole = new kopt.Session(name, config)
      whole.feed(JSON.stringify(events))
      const control = controlWith(budget, whole.completedEvals)
      whole.reviseWith(control)
      const want = referenceBody(events, name, control, config)
      assert.equal(whole.body().toString('utf8'), want, `${name} whole budget=${budget}`)
      const live = new kopt.Session(name, config)
      for (const e of events) live.feed(JSON.stringify(e))
      live.reviseWith(control)
      assert.equal(live.body().toString('utf8'), want, `${name} event by event`)
      // The parts the route writes are the same bytes, and so are the full answer's.
      assert.equal(Buffer.concat(live.parts()).toString('utf8'), want, `${name} parts`)
      assert.equal(Buffer.concat(live.parts(-1)).toString('utf8'), live.delta(-1).toString('utf8'), `${name} full parts`)
      assert.equal(Buffer.concat(live.parts(live.revision)).toString('utf8'), live.delta(live.revision).toString('utf8'), `${name} delta parts`)
      assert.equal(live.completedEvals, JSON.parse(live.projector.derivedJson()).completedEvals, name)
    }
  }
})

test('the revision moves only when the projection, updatedAt or control changes; ETag names it', () => {
  const events = JSON.parse(read('z03-large-60-evals', 'events'))
  const s = new kopt.Session('s1')
  s.feed(JSON.stringify(events.slice(0, 50)))
  const c = controlWith(0, 0)
  const r1 = s.reviseWith(c)
  const e1 = s.etag
  const b1 = s.body()
  assert.equal(s.reviseWith(c), r1, 'nothing changed')
  assert.equal(s.etag, e1)
  assert.equal(s.body(), b1, 'the same Buffer object while the revision stands')
  s.feed(JSON.stringify({ type: 'turn/end', seq: 10_000, time: 1 }))
  assert.equal(s.reviseWith(c), r1, 'an event the projection ignores changes nothing')
  s.feed(JSON.stringify(events.slice(50)))
  const r2 = s.reviseWith(c)
  assert.ok(r2 > r1)
  assert.notEqual(s.etag, e1)
  assert.notEqual(s.body().toString(), b1.toString())
  const r3 = s.reviseWith(controlWith(5, 0))
  assert.ok(r3 > r2, 'a new control object is a new revision')
  s.feed(JSON.stringify({ type: 'user/message', seq: 99_999, time: 5e12, data: { message: { source: { kind: 'user' }, content: [] } } }))
  assert.ok(s.reviseWith(controlWith(5, 0)) > r3, 'a later projected event moves updatedAt')
  assert.equal(s.updatedAt, 5e12)
  assert.equal(JSON.parse(s.body()).updatedAt, 5e12)
  assert.notEqual(new kopt.Session('s1').etag, s.etag, 'another object for the same id never shares an ETag')
  assert.equal(b1.toString('utf8').length > 0, true, 'an old Buffer stays readable after the revision moved')
})

test('the session shares its projector with the loop and the tools; bad input is a coded error', () => {
  const p = new kopt.Projector()
  const s = new kopt.Session('x', p)
  assert.equal(s.projector, p)
  s.feed(read('z03-large-60-evals', 'events'))
  assert.ok(p.version > 0)
  // An event nested too deep for the bounded parser is one unreadable log position, the rest is read.
  const deep = '['.repeat(5000) + ']'.repeat(5000)
  const fed = s.fed
  assert.deepEqual(s.feed(`[${deep},{"type":"x","seq":1}]`), { events: 1, skipped: 0, unreadable: 1 })
  assert.equal(s.fed, fed + 2)
  assert.equal(s.unreadable, 1)
  assert.throws(() => s.feed('[{"type":'), { code: 'KOPT_BAD_EVENTS' })
  assert.throws(() => s.feed('not events'), { code: 'KOPT_BAD_EVENTS' })
  s.skip(2)
  assert.equal(s.unreadable, 3)
  // Every failure is a KoptError (one class, made by the addon), with a code.
  for (const [f, code] of [
    [() => s.feed(5), 'KOPT_BAD_ARGUMENT'],
    [() => new kopt.Session(), 'KOPT_BAD_ARGUMENT'],
    [() => new kopt.Session('x', undefined, '{"route":{}}'), 'KOPT_BAD_JSON'],
    [() => new kopt.Session('x', undefined, 'nope'), 'KOPT_BAD_JSON'],
    [() => s.reviseWith(), 'KOPT_BAD_ARGUMENT'],
    [() => s.parts('7'), 'KOPT_BAD_ARGUMENT'],
    [() => s.skip(-1), 'KOPT_BAD_ARGUMENT'],
    [() => s.settled(true), 'KOPT_BAD_ARGUMENT'],
    [() => s.applyControl('{}', 'fr'), 'KOPT_BAD_ARGUMENT'],
    [() => s.command('other', '', 'en'), 'KOPT_BAD_ARGUMENT'],
    [() => s.supervisorAnswered(1, '[]', true, false), 'KOPT_BAD_JSON'],
    [() => s.adoptLoop({}), 'KOPT_BAD_ARGUMENT'],
    [() => new kopt.Projector('{'), 'KOPT_BAD_JSON'],
    [() => kopt.chooseEffort(null, '{}', null), 'KOPT_BAD_JSON'],
  ]) {
    assert.throws(f, (e) => e instanceof kopt.KoptError && e instanceof Error && e.name === 'KoptError' && e.code === code && e.message !== '', code)
  }
})

test('the session owns its loop: revise() makes the control itself; a past session hands its loop on', () => {
  const loop = JSON.stringify({ settings: { defaultBudget: 7, available: true }, route: { provider: 'p', model: 'm' } })
  const s = new kopt.Session('L', '{}', loop)
  s.feed(read('z03-large-60-evals', 'events'))
  const r1 = s.revise()
  const control = JSON.parse(s.control)
  assert.deepEqual(control.loop, { armed: false, budget: 0, round: 0, evalsDone: s.completedEvals, evalsOverBudget: 0, available: true, defaultBudget: 7 })
  assert.deepEqual(control.supervisor, { enabled: false, configured: true, configRoute: { provider: 'p', model: 'm' }, effective: { provider: 'p', model: 'm', source: 'config' } })
  assert.equal(s.revise(), r1, 'nothing changed')
  const reply = s.applyControl(JSON.stringify({ action: 'loop-arm', budget: 3, outputLanguage: 'zh' }), 'en')
  assert.equal(reply.status, 200)
  assert.equal(typeof reply.body, 'string', 'the answer for the wire is text, written as it is')
  assert.equal(JSON.parse(reply.body).control.loop.budget, 3)
  assert.equal(s.armed, true)
  const r2 = s.revise()
  assert.ok(r2 > r1, 'arming changes the control, so the revision')
  const body = JSON.parse(Buffer.concat(s.parts()).toString())
  assert.deepEqual(body.control, JSON.parse(s.control))
  assert.equal(body.control.loop.budget, 3)
  // The live object of the same session takes the loop over.
  const live = new kopt.Session('L', '{}', loop)
  live.adoptLoop(s)
  assert.equal(live.armed, true)
  assert.equal(s.armed, false)
})

test('a worker thread that loads the addon leaves the main thread\'s classes working (per-environment, no static references)', async () => {
  const { Worker } = await import('node:worker_threads')
  const code = `
    const { parentPort } = require('node:worker_threads')
    const kopt = require(${JSON.stringify(addonPath)})
    const s = new kopt.Session('w', new kopt.Projector())
    s.feed(JSON.stringify([{ type: 'tool/call', seq: 1, data: { callId: 'a', name: 'kernel_evaluate', arguments: '{}' } }]))
    s.reviseWith('{}')
    parentPort.postMessage(JSON.parse(s.body()).iterations.length)`
  const w = new Worker(code, { eval: true })
  const points = await new Promise((resolve, reject) => { w.on('message', resolve); w.on('error', reject) })
  await new Promise((resolve) => w.on('exit', resolve))
  assert.equal(points, 1)
  // After the worker's environment is gone, the main thread's constructors still stand.
  const s = new kopt.Session('m', new kopt.Projector())
  s.reviseWith('{}')
  assert.equal(JSON.parse(s.body()).sessionId, 'm')
  assert.equal((await kopt.loadSession('x', path.join(root, 'tests/fixtures/host-session-kernel-opt.jsonl'))).projector instanceof kopt.Projector, true)
})

// A full answer at a new revision hands out the same Buffers for the pieces that did not change (a
// 1M-event body is ~130 of them): no new external memory for V8 to count on every full answer.
test('full answers at later revisions share the Buffers of the unchanged pieces', () => {
  const s = new kopt.Session('long', new kopt.Projector('{}'))
  const evaluation = (i) => {
    const id = `c${i}`
    const payload = { artifact: 'k.cu', run: `r${i}`, correct: true, latency_ms: 1 + (i % 7) / 10, ref_runtime_ms: 2.5 }
    return [
      { type: 'tool/call', seq: 2 * i + 1, time: 1000 + i, data: { callId: id, name: 'bash', arguments: JSON.stringify({ command: `python bench.py --tag t${i}` }) } },
      { type: 'tool/result', seq: 2 * i + 2, time: 1000 + i, data: { callId: id, message: { content: [{ text: `KERNEL_EVAL=${JSON.stringify(payload)}` }] } } },
    ]
  }
  s.feed(JSON.stringify(Array.from({ length: 3000 }, (_, i) => evaluation(i)).flat()))
  s.reviseWith('null')
  const a = s.parts(-1)
  assert.ok(a.length > 10, `${a.length} parts`)
  s.feed(JSON.stringify(evaluation(3000)))
  s.reviseWith('null')
  const b = s.parts(-1)
  // New each revision: the open block of each list and the short parts between them (about 6 of
  // the series and 10 of the chart), however long the run; every sealed block is shared.
  const same = b.filter(x => a.includes(x))
  assert.ok(same.length >= a.length - 16, `${same.length} of ${a.length} Buffers shared`)
  const sealed = a.filter(x => x.length >= 256 * 1024)
  assert.ok(sealed.length >= 2, `${sealed.length} sealed blocks`)
  for (const x of sealed) assert.ok(b.includes(x), `a sealed block of ${x.length} bytes is handed out again`)
  assert.equal(Buffer.concat(b).toString('utf8'), s.delta(-1).toString('utf8'))
  assert.equal(JSON.parse(Buffer.concat(b).toString('utf8')).body.iterations.length, 3001)
  assert.equal(JSON.parse(Buffer.concat(a).toString('utf8')).body.iterations.length, 3000, 'the held answer keeps its bytes')
})

test('csv(): the run as the offline report writes it (kopt report --csv), for the tab\'s export', async () => {
  const { execFileSync } = await import('node:child_process')
  const fs = await import('node:fs')
  const os = await import('node:os')
  const events = read('z03-large-60-evals', 'events')
  const s = new kopt.Session('csv')
  s.feed(events)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopt-csv-'))
  try {
    fs.writeFileSync(path.join(dir, 'log.json'), events)
    execFileSync(path.join(root, 'build/kopt'), ['report', path.join(dir, 'log.json'), '--csv', path.join(dir, 'run.csv'), '-o', path.join(dir, 'run.html')])
    assert.equal(s.csv(), fs.readFileSync(path.join(dir, 'run.csv'), 'utf8'))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  assert.equal(s.csv().split('\r\n').length, 2 + JSON.parse(Buffer.concat(s.parts()).toString()).iterations.length)
})

test('json() and markdown(lang): the run as kopt report --json / --md write it, the points\' intervals included (issue 49)', async () => {
  const { execFileSync } = await import('node:child_process')
  const fs = await import('node:fs')
  const os = await import('node:os')
  const events = read('s01-compare-rule-labels', 'events')
  const s = new kopt.Session('log.json')
  s.feed(events)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopt-md-'))
  try {
    fs.writeFileSync(path.join(dir, 'log.json'), events)
    for (const lang of ['zh', 'en']) {
      execFileSync(path.join(root, 'build/kopt'), ['report', path.join(dir, 'log.json'), '--md', path.join(dir, `run-${lang}.md`), '--json', path.join(dir, 'run.json'), '--lang', lang], { stdio: 'ignore' })
      assert.equal(s.markdown(lang), fs.readFileSync(path.join(dir, `run-${lang}.md`), 'utf8'))
    }
    // The same rows as the command's (the source and generation time are each one's own).
    const cli = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'))
    const mine = JSON.parse(s.json())
    assert.deepEqual(mine.rows, cli.rows)
    assert.deepEqual(mine.series.iterations, cli.series.iterations)
    assert.deepEqual(mine.rows[0].latencyCi, [1.98, 2.02])
    assert.equal(mine.rows[4].vsBest, 'unsure')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
