#!/usr/bin/env node
// Tab update benchmark (issue 14): the cost of a panel update in the 评测 tab when one point (and
// when 100 points) arrive on a session with N points, in headless Chromium against the browser
// tests' shell stand-in and mock host (tests/browser/lib), for the reference client (main's
// lib/client.js, `git show main:lib/client.js`, or --ref FILE) and this checkout's lib/client.js,
// in the same run.
//
//   KOPT_TEST_ADDON=build/kopt-test.node CHROMIUM=/usr/bin/chromium node bench/tab/run.mjs \
//       [--sizes 1000,5000,20000,50000] [--updates 20] [--batches 1,100] [--ref-rev REV | --ref FILE] [--ref-addon FILE]
//
// One sample: the mock host appends the events; the page's poll fetches the delta. Timed in the
// page (performance.now()): from the moment the /series response arrives (fetch resolved) to
//   commitMs — the tab's update committed to the DOM plus a forced style+layout (read offsetHeight
//              when the tab records its update, window.__koptUpdates);
//   frameMs  — the end of the frame that shows it (a requestAnimationFrame after the commit, then a
//              task: it runs after that frame's layout and paint; includes waiting for the vsync).
// The tab polls every 1.5 s; to keep the run short the page's setInterval of 1500 ms is shortened
// to 120 ms (nothing else changes). p50/p95 over --updates samples, one JSON line per (client, N,
// batch) on stdout, with the warm-up update's figures beside them (warmUp*: the first update
// after the load; at N = 20000 or 50000 with one new point it is the one that stretches the x axis
// to the next round span, so every point moves and all of them are redrawn). Exit 0 when every configuration produced its samples; no timing is asserted.
//
// --waiting T (off by default): what T open tabs cost the machine while an evaluation is under way
// (its call logged, no result yet) and nothing else arrives: per client, T pages on the smallest
// size plus that call, left to settle for --settle seconds (default 6: the pending pulse is three
// 1.2 s cycles), then the CPU of every Chromium process over --measure seconds (default 8), per
// second and tab, with the number of animations still running in the first page.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from '../../tests/browser/node_modules/playwright-core/index.mjs'
import { bigEvents, moreEvents, pendingEvaluation } from '../../tests/browser/lib/demo-run.mjs'
import { startMockHost } from '../../tests/browser/lib/mock-host.mjs'
import { chromiumCpu } from '../chromium-cpu.mjs'
import { arg } from '../generated-log.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')
const sizes = arg('sizes', '1000,5000,20000,50000').split(',').map(Number)
const batches = arg('batches', '1,100').split(',').map(Number)
const updates = Number(arg('updates', '20'))
const waitingTabs = Number(arg('waiting', '0'))
const settleS = Number(arg('settle', '6'))
const measureS = Number(arg('measure', '8'))
// The mock host reads the session's body and deltas: the addon's test build.
const kopt = createRequire(import.meta.url)(path.resolve(process.env.KOPT_TEST_ADDON || path.join(root, 'build/kopt-test.node')))

let refPath = arg('ref', '')
let refName = refPath
if (!refPath) {
  refPath = path.join(mkdtempSync(path.join(tmpdir(), 'kopt-tabbench-')), 'client.ref.js')
  // main's client; where the clone has no branch main (a CI checkout), HEAD's, and the lines say which.
  let src = null
  for (const rev of [arg('ref-rev', 'main'), 'HEAD']) {
    try { src = execFileSync('git', ['-C', root, 'show', `${rev}:lib/client.js`], { stdio: ['ignore', 'pipe', 'ignore'] }); refName = `${rev}:lib/client.js`; break } catch { /* next */ }
  }
  if (!src) throw new Error('no reference client: pass --ref FILE')
  writeFileSync(refPath, src)
}
// The reference client runs against the addon it shipped with (the same revision's prebuilt
// lib/native/linux-x64/kopt.node, or --ref-addon FILE): a client and the core it was written for
// agree on the delta format (chart.append is newer than some clients).
let refAddon = arg('ref-addon', '')
if (!refAddon && refName.includes(':')) {
  const rev = refName.split(':')[0]
  try {
    const bin = execFileSync('git', ['-C', root, 'show', `${rev}:lib/native/linux-x64/kopt.node`], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 << 20 })
    refAddon = path.join(path.dirname(refPath), 'kopt.ref.node')
    writeFileSync(refAddon, bin)
  } catch { refAddon = '' }
}
// A product build since the boundary change (issue 42) ships no test oracles (Session body/delta),
// which the mock host reads: such a reference runs against this checkout's test build, and says so.
let refKopt = refAddon ? createRequire(import.meta.url)(path.resolve(refAddon)) : kopt
let refCore = refAddon ? ' + its prebuilt addon' : ''
if (typeof refKopt.Session?.prototype?.body !== 'function') {
  refKopt = kopt
  refCore = refAddon ? ' + this checkout\'s test build: its prebuilt ships no body/delta' : ''
}
const clients = [[`reference (${refName}${refCore})`, refPath, refKopt], ['new', path.join(root, 'lib/client.js'), kopt]]

const ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']

// Installed before the page's scripts: arrival stamps, the commit hook, the shorter poll.
const INIT = () => {
  const si = window.setInterval
  window.setInterval = (fn, ms, ...a) => si(fn, ms === 1500 ? 120 : ms, ...a)
  const f = window.fetch
  window.__bench = { arrival: 0, samples: [] }
  window.fetch = async (...a) => {
    const res = await f(...a)
    if (String(a[0]).includes('/series') && res.status === 200) window.__bench.arrival = performance.now()
    return res
  }
  const ups = []
  ups.push = function (u) {
    const t0 = window.__bench.arrival
    void document.body.offsetHeight // style + layout of the committed DOM
    const commitMs = performance.now() - t0
    const s = { commitMs, frameMs: null, points: u.points }
    window.__bench.samples.push(s)
    requestAnimationFrame(() => setTimeout(() => { s.frameMs = performance.now() - t0 }, 0))
    return Array.prototype.push.call(this, u)
  }
  window.__koptUpdates = ups
}

const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))] }
const r2 = x => Math.round(x * 100) / 100

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS, timeout: 30_000 })
let failed = 0
try {
  for (const n of sizes) {
    const base = bigEvents(n)
    for (const [who, file, addon] of clients) {
      const host = await startMockHost({ kopt: addon, sessions: { big: { events: base.slice() } }, clientPath: file })
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
      await page.addInitScript(INIT)
      const errors = []
      page.on('pageerror', e => errors.push(e.message))
      try {
        await page.goto(`${host.url}/?session=big&lang=en&tab=kernel-opt`)
        await page.waitForSelector('[data-kopt=chart]', { timeout: 120_000 })
        await page.waitForFunction(n => Number(document.querySelector('[data-kopt=points]')?.getAttribute('data-n')) >= n, n, { timeout: 120_000 })
        let seq = 900_000_000
        for (const b of batches) {
          // one warm-up update, then the samples
          const got = []
          let warm = null // the warm-up: the first update after the load (where the x axis may stretch)
          for (let k = 0; k <= updates; k++) {
            const c = await page.evaluate(() => window.__bench.samples.length)
            host.append('big', moreEvents(b, { tag: `u${b}_${k}_`, seq0: seq }))
            seq += 2 * b + 10
            await page.waitForFunction(c => window.__bench.samples.length > c && window.__bench.samples.at(-1).frameMs !== null, c, { timeout: 60_000, polling: 20 })
            const sample = await page.evaluate(() => window.__bench.samples.at(-1))
            if (k > 0) got.push(sample)
            else warm = sample
          }
          const cm = got.map(s => s.commitMs); const fm = got.map(s => s.frameMs)
          console.log(JSON.stringify({ what: 'tab panel update', client: who, points: n, arrive: b, samples: got.length,
            commitP50: r2(pct(cm, 0.5)), commitP95: r2(pct(cm, 0.95)), frameP50: r2(pct(fm, 0.5)), frameP95: r2(pct(fm, 0.95)),
            pointsAfter: got.at(-1).points, warmUpCommit: r2(warm.commitMs), warmUpFrame: r2(warm.frameMs) }))
        }
        if (errors.length) { failed++; console.log(JSON.stringify({ client: who, points: n, pageErrors: errors.slice(0, 3) })) }
      } catch (e) {
        failed++
        console.log(JSON.stringify({ client: who, points: n, error: String(e.message).split('\n')[0] }))
      } finally {
        await page.close()
        await host.close()
      }
    }
  }
  if (waitingTabs > 0) failed += await waiting(sizes[0], waitingTabs)
} finally {
  await browser.close()
}
process.exit(failed ? 1 : 0)

// The idle cost of T tabs with an evaluation under way, per client (--waiting).
async function waiting (n, tabs) {
  let bad = 0
  for (const [who, file, addon] of clients) {
    const host = await startMockHost({ kopt: addon, sessions: { w: { events: [...bigEvents(n), pendingEvaluation(800_000_000)] } }, clientPath: file })
    const pages = []
    try {
      for (let i = 0; i < tabs; i++) {
        const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
        pages.push(page)
        await page.goto(`${host.url}/?session=w&lang=en&tab=kernel-opt`)
        await page.waitForSelector('[data-kopt=points][data-pending="1"]', { timeout: 120_000 })
      }
      await new Promise(r => setTimeout(r, settleS * 1000))
      const c0 = chromiumCpu(); const t0 = performance.now()
      await new Promise(r => setTimeout(r, measureS * 1000))
      const perS = (chromiumCpu() - c0) * 1000 / ((performance.now() - t0) / 1000) / tabs
      const running = await pages[0].evaluate(() => document.getAnimations().filter(a => a.playState === 'running').length)
      console.log(JSON.stringify({ what: 'tabs idle, an evaluation under way', client: who, points: n, tabs, settleS, measureS,
        chromiumCpuMsPerSPerTab: r2(perS), runningAnimations: running }))
    } catch (e) {
      bad++
      console.log(JSON.stringify({ what: 'tabs idle, an evaluation under way', client: who, error: String(e.message).split('\n')[0] }))
    } finally {
      for (const p of pages) await p.close()
      await host.close()
    }
  }
  return bad
}
