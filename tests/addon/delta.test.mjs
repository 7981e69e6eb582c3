// /series deltas (docs/protocol.md): the tab's state after applying the session's delta answers
// (lib/client.js applyAnswer, the code the tab runs) equals the full body, event by event, over
// every conformance vector; unknown or too old revisions get the full body marked as such.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'
import { firstDifference, kopt, root, vectorsDir } from './addon.mjs'

// lib/client.js as the host's module loader runs it, with an inert React (only applyAnswer is called).
function loadClient () {
  let exported
  const inert = new Proxy({}, { get: () => (x) => x })
  const window = { __ModuleLoader__: { load: ({ factory }) => { exported = factory(() => inert) } } }
  vm.runInNewContext(fs.readFileSync(path.join(root, 'lib/client.js'), 'utf8'), { window, console }, { filename: 'lib/client.js' })
  return exported.__test
}
const { applyAnswer } = loadClient()

const cases = fs.readdirSync(vectorsDir).filter(f => f.endsWith('.events.json')).map(f => f.slice(0, -'.events.json'.length))
const read = (name, ext) => {
  const p = path.join(vectorsDir, `${name}.${ext}.json`)
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined
}
const controlWith = (budget, evalsDone) => JSON.stringify({
  loop: { armed: budget > 0, budget, round: 0, evalsDone, evalsOverBudget: 0, available: true, defaultBudget: 20 },
  supervisor: { enabled: false, configured: false },
})
const parse = buf => JSON.parse(buf.toString('utf8'))
// The tab draws the curve's line from the points; an appended chart carries none (docs/protocol.md).
const noLine = s => (s && s.chart ? { ...s, chart: { ...s.chart, line: undefined } } : s)
const same = (want, got, what) => {
  const d = firstDifference(noLine(want), noLine(got))
  assert.equal(d, null, `${what}: ${d}`)
}

test('every vector, event by event: the tab state from deltas equals the full body', () => {
  assert.ok(cases.length >= 70)
  let deltas = 0; let changedRows = 0; let charts = 0
  for (const name of cases) {
    const events = JSON.parse(read(name, 'events'))
    const config = read(name, 'config')
    events.forEach((e, i) => { if (e && typeof e === 'object' && i % 3 !== 2) e.time = 1000 + i * 7 })
    const s = new kopt.Session(name, config)
    const kept = [] // [revision, state the tab would hold]
    let held = null
    let rev = null
    for (let i = 0; i < events.length; i++) {
      s.feed(JSON.stringify(events[i]))
      // The control object changes now and then (a budget armed midway), and is absent once.
      const control = i === 1 ? '' : controlWith(i > events.length / 2 ? 3 : 0, s.completedEvals)
      const r = s.reviseWith(control)
      const full = JSON.parse(s.body().toString('utf8'))
      if (held === null) {
        const ans = parse(s.delta(0))
        assert.equal(ans.kind, 'full', `${name}: revision 0 is unknown`)
        assert.equal(ans.revision, r)
        held = applyAnswer(null, ans)
      } else {
        const ans = parse(s.delta(rev))
        assert.equal(ans.kind, 'delta', `${name} #${i}`)
        assert.equal(ans.revision, r)
        if (r === rev) assert.equal(ans.iterations.items.length + ans.iterations.changed.length, 0, 'nothing changed, nothing sent')
        deltas++
        changedRows += ans.iterations.changed.length
        if (ans.chart) charts++
        held = applyAnswer(held, ans)
        assert.ok(held, `${name} #${i}: the delta follows on`)
      }
      same(full, held, `${name} after event ${i}`)
      rev = r
      kept.push([r, held])
    }
    // A delta from any kept revision (not just the previous one) gives the same state.
    // Revisions more than the kept history (256) back get the full body.
    for (const [r, state] of kept.filter((_, k) => k % 5 === 0)) {
      const ans = parse(s.delta(r))
      assert.equal(ans.kind, s.revision - r < 256 ? 'delta' : 'full', `${name} since ${r} of ${s.revision}`)
      same(JSON.parse(s.body().toString('utf8')), applyAnswer(state, ans), `${name} since ${r}`)
    }
  }
  // The vectors exercise in-place changes and the chart, not only appends.
  console.log(`# ${cases.length} vectors: ${deltas} deltas applied, ${changedRows} rows changed in place, ${charts} with the chart`)
  assert.ok(deltas > 1000 && changedRows > 20 && charts > 100, `deltas ${deltas}, changed rows ${changedRows}, charts ${charts}`)
})

test('unknown, future, fractional or too old revisions get the full body, marked as such', () => {
  const events = JSON.parse(read('z03-large-60-evals', 'events'))
  const s = new kopt.Session('s1')
  const c = controlWith(0, 0)
  s.feed(JSON.stringify(events.slice(0, 5)))
  const first = s.reviseWith(c)
  for (const since of [0, first - 1, first + 1, first + 0.5, -3, 2 ** 60]) {
    const ans = parse(s.delta(since))
    assert.equal(ans.kind, 'full', `since ${since}`)
    assert.equal(ans.revision, first)
    assert.equal(JSON.stringify(ans.body), s.body().toString('utf8'), 'the full answer carries the body bytes')
  }
  assert.throws(() => s.delta('5'), { code: 'KOPT_BAD_ARGUMENT' })
  // Past the kept history (256 revisions) the first revision is forgotten.
  for (let i = 0; i < 300; i++) s.reviseWith(controlWith(0, i + 1))
  assert.equal(parse(s.delta(first)).kind, 'full')
  assert.equal(parse(s.delta(s.revision - 200)).kind, 'delta')
  // Two objects for the same session do not share revision numbers.
  const t = new kopt.Session('s1')
  t.feed(JSON.stringify(events.slice(0, 5)))
  assert.equal(parse(t.delta(first)).kind, 'full', "another object's revision is unknown")
})

test('a non-delta answer (a server without deltas) is a full body to the tab; a delta that does not follow on is refused', () => {
  const s = new kopt.Session('s2')
  const events = JSON.parse(read('z03-large-60-evals', 'events'))
  s.feed(JSON.stringify(events.slice(0, 40)))
  const r1 = s.reviseWith(controlWith(0, 0))
  const plain = parse(s.body())
  assert.equal(applyAnswer(null, plain), plain)
  s.feed(JSON.stringify(events.slice(40, 80)))
  s.reviseWith(controlWith(0, 0))
  const ans = parse(s.delta(r1))
  assert.ok(ans.iterations.items.length > 0)
  const shorter = { ...plain, iterations: plain.iterations.slice(1) }
  assert.equal(applyAnswer(shorter, ans), null)
  assert.equal(applyAnswer(null, ans), null)
})
