#!/usr/bin/env node
// What opening a comparison of five past sessions costs, through the plugin's own session store
// (lib/store.mjs createStore) and compare route (lib/routes/compare.mjs), served on 127.0.0.1 by a process
// that plays the host; logs of N generated events each (tests/fixtures/vectors/gen-large.mjs) that
// the host's persistence names by file (findLog), so each is read and projected off the thread by
// kopt.loadSession. A poller in a process of its own (as a tab would be) asks every 50 ms:
//   one       opening one past session (the reference): GET /series (202 while it is read, then
//             the body, as the /series route answers) until the body
//   compare   the tab's session already held, four others past: GET /compare until every curve is
//             drawn; the time to the first answer with a curve and to the answer with all five
//   cold      the same with none held (the first curve is then the first log read)
//   reads     the same logs read through the store at once with no request at all (what reading
//             that many past sessions costs the thread by itself, whatever shows them)
// For each, in the host process: the longest gap between ticks of a 5 ms timer (the wait a host
// request would see), the longest time one answer took on the thread, and when (from the poller's
// first request) the first answer with a curve and the first with all of them left the server
// (servedFirstMs, servedAllMs; the poller's own times, firstCurveMs and allMs, add its fetch and parse). Each mode runs in a
// host process of its own; one JSON line each.
//
//   node bench/compare/run.mjs [--events 100000] [--sessions 5] [--addon PATH]
import { execFileSync, spawn } from 'node:child_process'
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

// The poller: asks `url` every 50 ms until `done(answer)`; prints {firstMs, allMs, polls, bytes}.
const POLLER = `
  const [url, want] = process.argv.slice(1)
  const t0 = performance.now()
  const out = { polls: 0 }
  ;(async () => {
    for (;;) {
      const res = await fetch(url)
      const text = await res.text()
      out.polls += 1
      const at = Math.round(performance.now() - t0)
      let drawn = 0
      if (res.status === 200) {
        const body = JSON.parse(text)
        drawn = body.kind === 'kopt-compare' ? body.chart.series.length : 1
        if (drawn === Number(want)) out.points = body.kind === 'kopt-compare' ? body.chart.series.reduce((n, s) => n + s.points.length, 0) : body.iterations.length
      }
      if (process.env.KOPT_BENCH_TRACE) console.error('poll', out.polls, 'at', at, 'ms: status', res.status, 'drawn', drawn)
      if (drawn >= 1 && out.firstMs === undefined) out.firstMs = at
      if (drawn === Number(want)) { out.allMs = at; out.bytes = text.length; break }
      if (at > 120000) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    process.stdout.write(JSON.stringify(out))
  })()`

if (arg('child')) {
  const { createStore } = await import('../../lib/store.mjs')
  const { resolveConfig } = await import('../../lib/config.mjs')
  const { compareRoute } = await import('../../lib/routes/compare.mjs')
  const { runsOf, writeRuns } = await import('../../lib/paced.mjs')
  const kopt = createRequire(import.meta.url)(addon)
  const { config } = resolveConfig({})
  const files = arg('logs').split(',')
  const ids = files.map((_, i) => `past-${i}`)
  const persistence = { findLog: async (id) => files[ids.indexOf(id)] ?? '', inspect: async () => { throw new Error('not found') } }
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence })
  const compare = compareRoute({ kopt, getView: store.getView, held: store.held })
  // /series as the route answers a past session: 202 while it is read, then the body's pieces.
  const series = async (req, res) => {
    const view = await store.getView(ids[0], { wait: false })
    if (view?.session === undefined) { res.writeHead(202, { 'retry-after': '1' }); res.end('{"loading":true}'); return }
    view.session.revise()
    const parts = view.session.parts()
    res.writeHead(200, { 'content-length': String(parts.reduce((n, b) => n + b.length, 0)) })
    writeRuns(res, runsOf(parts), undefined, { end: true })
  }
  let answerMaxMs = 0
  let longest = 0
  // On the server's side: when the first answer with a session's curve, and the first with all of
  // them, left (an answer draws every session the store holds when it is made).
  let t0 = 0
  const served = {}
  const server = createServer(async (req, res) => {
    const t = performance.now()
    if (t0 === 0) t0 = t // the poller's first request
    await (req.url.startsWith('/series') ? series(req, res) : compare(req, res))
    answerMaxMs = Math.max(answerMaxMs, performance.now() - t)
    const wanted = req.url.startsWith('/series') ? [ids[0]] : ids
    const held = wanted.filter((id) => store.held(id) !== undefined).length
    if (held >= 1 && served.firstMs === undefined) served.firstMs = Math.round(performance.now() - t0)
    if (held === wanted.length && served.allMs === undefined) served.allMs = Math.round(performance.now() - t0)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${server.address().port}`
  const mode = arg('child')
  if (mode === 'reads') {
    const ticker = startTicker(5)
    await sleep(100)
    ticker.reset()
    const t = performance.now()
    await Promise.all(ids.map((id) => store.getView(id)))
    const readMs = Math.round(performance.now() - t)
    await sleep(20)
    ticker.stop()
    console.log(JSON.stringify({ what: 'compare', mode, events, sessions: ids.length, readMs, worstWaitMs: +ticker.worst().toFixed(1) }))
    process.exit(0)
  }
  if (mode === 'compare') {
    // The tab shows session 0: it is held before the comparison opens.
    while ((await store.getView(ids[0], { wait: false }))?.session === undefined) await sleep(20)
  }
  const ticker = startTicker(5)
  await sleep(100)
  ticker.reset()
  answerMaxMs = 0
  const url = mode === 'one' ? `${base}/series` : `${base}/compare?sessionId=${ids[0]}&with=${ids.slice(1).join(',')}`
  const poller = spawn(process.execPath, ['-e', POLLER, url, mode === 'one' ? '1' : String(ids.length)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let text = ''
  poller.stdout.on('data', (d) => { text += d })
  await new Promise((resolve) => poller.on('exit', resolve))
  await sleep(20) // the tick after a block
  ticker.stop()
  const polled = JSON.parse(text || '{}')
  // Once everything is held, an unchanged comparison is answered from what was kept (the handler's time).
  longest = answerMaxMs
  answerMaxMs = 0
  if (mode !== 'one') await (await fetch(url)).arrayBuffer()
  const keptMs = answerMaxMs
  server.close()
  console.log(JSON.stringify({
    what: 'compare', mode, events, sessions: mode === 'one' ? 1 : ids.length, firstCurveMs: polled.firstMs, allMs: polled.allMs,
    servedFirstMs: served.firstMs, servedAllMs: served.allMs,
    points: polled.points, answerBytes: polled.bytes, polls: polled.polls, worstWaitMs: +ticker.worst().toFixed(1),
    answerMaxMs: +longest.toFixed(1), ...(mode === 'one' ? {} : { keptAnswerMs: +keptMs.toFixed(1) }),
  }))
  process.exit(0)
}

// One generated log, copied so that each session is a file of its own (read on its own worker).
const log = generatedLog(events, 'compare')
const logs = Array.from({ length: sessions }, (_, i) => {
  const p = path.join(path.dirname(log), `past-${i}.json`)
  copyFileSync(log, p)
  return p
})
for (const mode of ['one', 'compare', 'cold', 'reads']) {
  const line = execFileSync(process.execPath, ['--max-old-space-size=12000', fileURLToPath(import.meta.url), '--child', mode, '--logs', logs.join(','), '--addon', addon],
    { maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim()
  console.log(line)
}
