#!/usr/bin/env node
// What one revision costs the addon, in-process (issue 19): a session fed N generated events, then
// M revisions of one evaluation each (a call and its result): feed, revise, and the delta from the
// revision before — the work the route and the push do once per revision, shared by every reader.
// With --before PATH (another kopt.node) both are measured in the same run, alternating, each in a
// process of its own, and a ratio line is printed. One JSON line per measurement.
//
//   node bench/revision/run.mjs [--events 1000000] [--revisions 60] [--rounds 2] [--before PATH] [--addon PATH]
// (--addon: the one measured as "after"; this checkout's prebuilt lib/native/linux-x64/kopt.node by default)
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { arg, generatedLog } from '../generated-log.mjs'
import path from 'node:path'
import { moreEvents } from '../../tests/browser/lib/demo-run.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const events = Number(arg('events', 1000000))
const revisions = Number(arg('revisions', 60))

if (arg('child')) {
  // One measurement: the addon at --child, the log at --log.
  const kopt = createRequire(import.meta.url)(arg('child'))
  const all = JSON.parse(readFileSync(arg('log'), 'utf8'))
  const s = new kopt.Session('bench', JSON.stringify({}))
  for (let i = 0; i < all.length; i += 5000) s.feed(JSON.stringify(all.slice(i, i + 5000)))
  const control = () => JSON.stringify({ loop: { armed: false, budget: 0, round: 0, evalsDone: s.completedEvals, evalsOverBudget: 0, available: true, defaultBudget: 20 } })
  // An addon whose session makes its own control (KoptError came with it) takes no control text.
  const reviseNow = kopt.KoptError ? () => s.revise() : () => s.revise(control())
  let rev = reviseNow()
  const points = JSON.parse(Buffer.concat(s.parts(null)).toString('utf8')).iterations.length
  const more = moreEvents(revisions, { seq0: 10_000_000 })
  const feed = [], revise = [], delta = []
  for (let k = 0; k < revisions; k++) {
    const t0 = performance.now()
    s.feed(JSON.stringify(more[2 * k]))
    s.feed(JSON.stringify(more[2 * k + 1]))
    const t1 = performance.now()
    const now = reviseNow()
    const t2 = performance.now()
    const parts = s.parts(rev)
    const t3 = performance.now()
    if (parts.length !== 1) throw new Error(`revision ${now}: a full answer, not a delta`)
    rev = now
    feed.push(t1 - t0), revise.push(t2 - t1), delta.push(t3 - t2)
  }
  const q = (v, f) => { const a = [...v].sort((x, y) => x - y); return +a[Math.floor(f * (a.length - 1))].toFixed(3) }
  console.log(JSON.stringify({ what: 'revision', addon: arg('name'), events: all.length, points, revisions,
    feedP50Ms: q(feed, 0.5), reviseP50Ms: q(revise, 0.5), deltaP50Ms: q(delta, 0.5), deltaP90Ms: q(delta, 0.9) }))
  process.exit(0)
}

const log = generatedLog(events, 'revision')
const addons = [['after', path.resolve(arg('addon', path.join(root, 'lib/native/linux-x64/kopt.node')))]]
if (arg('before')) addons.unshift(['before', path.resolve(arg('before'))])
const results = {}
for (let round = 0; round < Number(arg('rounds', 2)); round++) {
  for (const [name, file] of addons) {
    const line = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', file, '--name', name, '--log', log, '--revisions', String(revisions)], { maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim()
    console.log(line)
    const r = JSON.parse(line)
    results[name] = Math.min(results[name] ?? Infinity, r.deltaP50Ms)
  }
}
if (results.before) console.log(JSON.stringify({ what: 'revision', ratio: 'before/after', events, bestDeltaP50: +(results.before / results.after).toFixed(2) }))
