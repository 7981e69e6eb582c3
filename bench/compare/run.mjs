#!/usr/bin/env node
// What opening a comparison of five past sessions costs, through the plugin's own session store
// (lib/index.mjs createStore) and compare route (lib/compare.mjs) served on 127.0.0.1, with logs
// of N generated events each (tests/fixtures/vectors/gen-large.mjs) that the host's persistence
// names by file (findLog), so each is read and projected off the thread by kopt.loadSession:
//   one       opening one past session (the reference): getView until it is read, then its body
//   compare   the tab's session already held, four others past: GET /compare polled every 50 ms,
//             the time to the first answer with a curve and to the answer with all five
//   cold      the same with none held (the first curve is then the first log read)
// For each: the longest gap between ticks of a 5 ms timer (the wait a host request would see) and
// the main thread's time per compare answer. Each mode runs in a process of its own; one JSON line each.
//
//   node bench/compare/run.mjs [--events 100000] [--sessions 5] [--addon PATH]
import { execFileSync } from 'node:child_process'
import { copyFileSync } from 'node:fs'
import { createServer } from 'node:http'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { arg, generatedLog, startTicker } from '../generated-log.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const events = Number(arg('events', 100000))
const sessions = Number(arg('sessions', 5))
const addon = path.resolve(arg('addon', path.join(root, 'lib/native/linux-x64/kopt.node')))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

if (arg('child')) {
  const { createStore } = await import('../../lib/index.mjs')
  const { resolveConfig } = await import('../../lib/config.mjs')
  const { createCompareRoute } = await import('../../lib/compare.mjs')
  const kopt = createRequire(import.meta.url)(addon)
  const { config } = resolveConfig({})
  const files = arg('logs').split(',')
  const ids = files.map((_, i) => `past-${i}`)
  const persistence = { findLog: async (id) => files[ids.indexOf(id)] ?? '', inspect: async () => { throw new Error('not found') } }
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence })
  const route = createCompareRoute({ kopt, getView: store.getView })
  let answerMs = 0
  let answers = 0
  const server = createServer(async (req, res) => {
    const t = performance.now()
    await route(req, res)
    answerMs = Math.max(answerMs, performance.now() - t)
    answers += 1
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${server.address().port}/compare?sessionId=${ids[0]}&with=${ids.slice(1).join(',')}`
  const ticker = startTicker(5)
  const mode = arg('child')
  if (mode === 'compare') {
    // The tab shows session 0: it is held before the comparison opens.
    while ((await store.getView(ids[0], { wait: false }))?.st === undefined) await sleep(20)
  }
  await sleep(100)
  const t0 = performance.now()
  ticker.reset()
  const out = { what: 'compare', mode, events, sessions: ids.length }
  if (mode === 'one') {
    let view
    while ((view = await store.getView(ids[0], { wait: false }))?.st === undefined) await sleep(50)
    out.readMs = Math.round(performance.now() - t0)
    const t1 = performance.now()
    view.st.s.revise('{}')
    out.bodyBytes = view.st.s.parts().reduce((n, b) => n + b.length, 0)
    out.bodyMs = +(performance.now() - t1).toFixed(1)
    out.points = view.st.s.completedEvals
  } else {
    for (;;) {
      const res = await fetch(url)
      const body = await res.json()
      const drawn = body.chart.series.length
      const at = performance.now() - t0
      if (drawn >= 1 && out.firstCurveMs === undefined) out.firstCurveMs = Math.round(at)
      if (drawn === ids.length) {
        out.allMs = Math.round(at)
        out.points = body.chart.series.reduce((n, s) => n + s.points.length, 0)
        out.answerBytes = Number(res.headers.get('content-length'))
        break
      }
      if (at > 60_000) throw new Error('not all sessions read in 60 s')
      await sleep(50)
    }
    // A poll once everything is held: the main thread's cost of one compare answer.
    answerMs = 0
    await (await fetch(url)).arrayBuffer()
    out.answerMs = +answerMs.toFixed(1)
    out.answers = answers
  }
  await sleep(20) // the tick after a block
  ticker.stop()
  out.worstWaitMs = +ticker.worst().toFixed(1)
  server.close()
  console.log(JSON.stringify(out))
  process.exit(0)
}

// One generated log, copied so that each session is a file of its own (read on its own worker).
const log = generatedLog(events, 'compare')
const logs = Array.from({ length: sessions }, (_, i) => {
  const p = path.join(path.dirname(log), `past-${i}.json`)
  copyFileSync(log, p)
  return p
})
for (const mode of ['one', 'compare', 'cold']) {
  const line = execFileSync(process.execPath, ['--max-old-space-size=12000', fileURLToPath(import.meta.url), '--child', mode, '--logs', logs.join(','), '--addon', addon],
    { maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim()
  console.log(line)
}
