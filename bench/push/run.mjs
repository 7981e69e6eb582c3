#!/usr/bin/env node
// Live push benchmark (issue 18): from appending an event to the session log to the point being
// drawn in the tab, in a real `dsh web` (the pinned host) with headless Chromium.
//
//   . $KOPT_HOST_DIR/env.sh
//   KOPT_HOST_DIR=… node bench/push/run.mjs [--sizes 10000,1000000] [--tabs 1,20] [--samples 30]
//                                          [--poll-samples 12] [--no-poll] [--metrics] [--floor]
//
// One scratch DSH_HOME with this plugin and bench/http/feeder (appends events through the host's
// own Session.append, so the plugin sees real `session/event`s). Per size N: a live kernel-opt
// session gets the first N events of tests/fixtures/vectors/gen-large.mjs; then per tab count T,
// T Chromium pages run the real tab code (lib/client.js) inside the shell stand-in of the browser
// tests (tests/browser/lib/shell.html), served by the host itself (the feeder's /page; Playwright
// answers only the shell's static files: React, lib/client.js), so the origin, the socket and the
// fence are the real ones. A sample: append one evaluation (2 events), note the time, and wait
// until every page's curve shows the new point (a MutationObserver on [data-kopt=points] data-n
// stamps the time the DOM got it). Meanwhile a GET /plugins/kopt-bench-feeder/ping every 20 ms, from
// a process of its own (bench/pinger.mjs), measures how long the host keeps a trivial request
// waiting. The reference in the same run: the same pages with the push switched off (?kopt-push=0:
// the tab's poll, every 1.5 s).
// Then, per size, a tab opening on a session that has just moved on (three times): how long until
// it has drawn the points, and the trivial GET meanwhile (the host hands it the whole body).
// At the end of each size with the largest T: one more client that subscribes and never reads
// while samples go on; the host's RSS and the push hub's held bytes (largest seen) are printed.
// host_publish_*: the host's own part (first event of a revision -> its frame handed to the
// sockets, lib/push.mjs), so the rest of a sample is transport + the browser.
// --floor adds, per tab count, the same samples with pages that only subscribe to the same socket,
// parse each message and set data-n (no React, no drawing): the floor this machine puts under any tab
// (host publish, transport, one JSON.parse per page), measured in the same run.
// --metrics adds what the tabs cost the machine: chromium_cpu_ms_per_sample_per_tab (user + system
// CPU of every Chromium process over the samples, per sample and tab; it includes the idle cost
// between samples), chromium_idle_cpu_ms_per_s_per_tab (the same with nothing arriving), and the
// renderer main thread's own accounts (page_*_ms, Performance.getMetrics; wall time of its tasks,
// so they stretch when the machine is busy).
// One JSON line per measurement on stdout.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { FEEDER, ROOT, detachedProcesses, feederAppend, hostEnv, http, pinnedHost, rpc, run, sleep, startWeb, waitFor, webProfile } from '../../tests/e2e/harness.mjs'
import { arg } from '../generated-log.mjs'
import { rawClient } from '../../tests/e2e/ws-client.mjs'
import { moreEvents } from '../../tests/browser/lib/demo-run.mjs'
import { startPinger } from '../pinger.mjs'
import { chromiumCpu } from '../chromium-cpu.mjs'

const { dsh: DSH } = pinnedHost('the pinned host, scripts/setup-host.sh')
const requireBrowser = createRequire(join(ROOT, 'tests/browser/package.json'))
const { chromium } = requireBrowser('playwright-core')

const SIZES = arg('sizes', '10000').split(',').map(Number)
const TABS = arg('tabs', '1,20').split(',').map(Number)
const SAMPLES = Number(arg('samples', 30))
const POLL_SAMPLES = Number(arg('poll-samples', 12))
const WITH_POLL = !process.argv.includes('--no-poll')
// --metrics: what the tabs cost the machine per sample (the CPU of the benchmark's Chromium) and
// each page's main-thread accounts (Performance.getMetrics), so a slow sample can be told apart as
// the tabs' own work or the machine's queue.
const METRICS = process.argv.includes('--metrics')
const FLOOR = process.argv.includes('--floor')
// The floor page: the push socket of lib/client/data.js, and nothing drawn but the count of points.
const FLOOR_PAGE = `<!doctype html><meta charset="utf-8"><title>floor</title><svg><g data-kopt="points" data-n="0"></g></svg>
<script>
const sid = new URLSearchParams(location.search).get('session')
const g = document.querySelector('[data-kopt=points]')
const ws = new WebSocket('ws://' + location.host + '/plugins/kernel-opt/push?sessionId=' + encodeURIComponent(sid))
ws.onmessage = (e) => {
  const m = JSON.parse(e.data)
  const n = m.kind === 'full' ? m.body.iterations.length : m.kind === 'delta' && m.iterations ? m.iterations.from + m.iterations.items.length : null
  if (n !== null) g.setAttribute('data-n', String(n))
}
</script>`
const BATCH = 5000

const work = mkdtempSync(join(tmpdir(), 'kopt-bench-push-'))
const procs = detachedProcesses(work)
let browser
process.on('exit', () => { procs.killAll(); rmSync(work, { recursive: true, force: true }) })
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130))
const log = (m) => console.error(`[bench-push] ${m}`)
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null }
const r1 = (v) => (v === null ? null : Math.round(v * 10) / 10)

// ── host ──
const home = join(work, 'home')
const ws = join(work, 'ws')
mkdirSync(ws, { recursive: true })
const env = hostEnv(home, { key: 'bench', KOPT_ADDON: process.env.KOPT_ADDON ?? join(ROOT, 'build/kopt.node') })
await webProfile(DSH, env, { plugins: [ROOT, FEEDER] })
const web = await startWeb(procs, DSH, env, 'dsh-web.log', { feeder: true, log })
const { port } = web

async function append(sid, events) {
  const r = await feederAppend(port, sid, events, BATCH)
  if (r.failed > 0) throw new Error(`append: ${r.failed} refused: ${r.firstError}`)
}
async function rssMb() {
  try {
    const { stdout } = await run('ps', ['-o', 'rss=', '-g', String(web.child.pid)])
    return Math.round(stdout.trim().split(/\s+/).map(Number).reduce((a, b) => a + b, 0) / 1024)
  } catch { return null }
}
const hub = async () => (await http(port, '/plugins/kernel-opt/push')).json().push

// ── pages: the shell stand-in at the host's origin ──
const shell = readFileSync(join(ROOT, 'tests/browser/lib/shell.html'), 'utf8')
const files = {
  '/react.js': join(ROOT, 'tests/browser/node_modules/react/umd/react.production.min.js'),
  '/react-dom.js': join(ROOT, 'tests/browser/node_modules/react-dom/umd/react-dom.production.min.js'),
  '/client.js': join(ROOT, 'lib/client.js'),
}
for (const f of Object.values(files)) if (!existsSync(f)) throw new Error(`missing ${f} (bash tests/browser/run.sh installs tests/browser/node_modules)`)
// The shell document itself comes from the host (its loopback address lets it open the socket).
if ((await http(port, '/plugins/kopt-bench-feeder/page', { method: 'PUT', body: shell })).status !== 204) throw new Error('feeder: page not stored')
if (FLOOR && (await http(port, '/plugins/kopt-bench-feeder/page?name=floor', { method: 'PUT', body: FLOOR_PAGE })).status !== 204) throw new Error('feeder: floor page not stored')
browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'],
})
async function openPages(sid, n, push, floor = false) {
  const pages = []
  for (let i = 0; i < n; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.route(/\/(react\.js|react-dom\.js|client\.js|mock\/sessions)(\?.*)?$/, (route) => {
      const p = new URL(route.request().url()).pathname
      if (p === '/mock/sessions') return route.fulfill({ contentType: 'application/json', body: JSON.stringify({ [sid]: { agentPreset: 'kernel-opt' } }) })
      return route.fulfill({ contentType: 'text/javascript', body: readFileSync(files[p]) })
    })
    const page = await context.newPage()
    page.setDefaultTimeout(process.env.KOPT_BENCH_DEBUG ? 15_000 : 120_000) // debugging: fail fast
    if (process.env.KOPT_BENCH_DEBUG) {
      page.on('console', m => log(`page ${i}: ${m.text()}`))
      page.on('websocket', w => { log(`page ${i}: ws ${w.url()}`); w.on('close', () => log(`page ${i}: ws closed`)); w.on('socketerror', e => log(`page ${i}: ws error ${e}`)) })
    }
    await page.goto(`http://127.0.0.1:${port}/plugins/kopt-bench-feeder/page?${floor ? 'name=floor&' : ''}session=${encodeURIComponent(sid)}&lang=en&tab=kernel-opt${push ? '' : '&kopt-push=0'}`)
    if (floor) {
      // The floor page draws nothing: it is ready once the first message has set the count.
      await page.waitForFunction(() => Number(document.querySelector('[data-kopt=points]').getAttribute('data-n')) > 0)
    } else {
      await page.getByRole('tab', { name: 'Evaluations' }).click()
      await page.locator('[data-kopt=points]').waitFor()
    }
    await page.evaluate(() => {
      window.__drawn = []
      window.__waiters = new Set()
      new MutationObserver(() => {
        const cur = document.querySelector('[data-kopt=points]')
        window.__drawn.push({ n: Number(cur?.getAttribute('data-n')), t: Date.now() })
        for (const w of window.__waiters) w()
      }).observe(document.body, { attributes: true, subtree: true, childList: true, attributeFilter: ['data-n'] })
    })
    let cdp = null
    if (METRICS) {
      cdp = await context.newCDPSession(page)
      await cdp.send('Performance.enable')
    }
    pages.push({ context, page, cdp })
  }
  return pages
}
async function pageCpu(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics')
  return Object.fromEntries(metrics.map(m => [m.name, m.value]))
}
const drawnCount = (page) => page.evaluate(() => Number(document.querySelector('[data-kopt=points]')?.getAttribute('data-n')))

// One sample: append one evaluation, the time until every page drew it.
let tagN = 0
async function sample(sid, pages) {
  const before = await Promise.all(pages.map(p => drawnCount(p.page)))
  const want = before[0] + 1
  const t0 = Date.now()
  await append(sid, moreEvents(1, { tag: `b${++tagN}` }).map(e => ({ type: e.type, data: e.data })))
  // Each page answers once, when its observer has seen the point (no polling from here: with 20
  // pages a poll every 10 ms each would be the bench's own load on the machine).
  const times = await Promise.all(pages.map(async ({ page }) => (await page.evaluate((w) => new Promise((resolve, reject) => {
    const check = () => {
      const d = window.__drawn.find(x => x.n >= w)
      if (!d) return
      window.__waiters.delete(check)
      clearTimeout(timer)
      resolve(d.t)
    }
    const timer = setTimeout(() => { window.__waiters.delete(check); reject(new Error(`point ${w} not drawn in 60 s`)) }, 60_000)
    window.__waiters.add(check)
    check()
  }), want)) - t0))
  return Math.max(...times) // the slowest tab
}

async function measure(sid, n, tabs, push, samples, stalled, floor = false) {
  const pages = await openPages(sid, tabs, push, floor)
  // With --metrics, long enough for the previous measurement's closed pages to leave Chromium's CPU.
  await sleep(METRICS ? 3000 : 500)
  const pinger = startPinger(port) // its own process: the stalled client's 33 MB body is read here
  let slow
  if (stalled) {
    slow = await rawClient(port, `sessionId=${encodeURIComponent(sid)}`, {}, '/plugins/kernel-opt/push')
    await waitFor('the stalled client subscribed', () => slow.messages.length >= 1, 60_000, 20)
    slow.socket.pause()
  }
  let idle = null
  if (METRICS) { // the pages' cost with nothing arriving, per second
    const a = await Promise.all(pages.map(p => pageCpu(p.cdp)))
    const ca = chromiumCpu()
    await sleep(2000)
    const b = await Promise.all(pages.map(p => pageCpu(p.cdp)))
    idle = {
      page_idle_task_ms_per_s: r1(b.reduce((s, c, i) => s + c.TaskDuration - a[i].TaskDuration, 0) / pages.length / 2 * 1000),
      chromium_idle_cpu_ms_per_s_per_tab: r1((chromiumCpu() - ca) / pages.length / 2 * 1000),
    }
  }
  const cpu0 = METRICS ? await Promise.all(pages.map(p => pageCpu(p.cdp))) : null
  const chrome0 = METRICS ? chromiumCpu() : 0
  const lat = []
  let heldMax = 0
  let rssMax = 0
  const dropped0 = stalled ? (await hub()).dropped : 0
  for (let i = 0; i < samples; i++) {
    lat.push(await sample(sid, pages))
    if (stalled) {
      const h = await hub()
      heldMax = Math.max(heldMax, h.queuedBytes + h.socketBytes)
      rssMax = Math.max(rssMax, (await rssMb()) ?? 0)
    }
    await sleep(100 + Math.floor(Math.random() * 200))
  }
  const pings = (await pinger.stop()).map(([ms]) => ms)
  const cpu1 = METRICS ? await Promise.all(pages.map(p => pageCpu(p.cdp))) : null
  const chrome1 = METRICS ? chromiumCpu() : 0
  const out = {
    what: 'append -> point drawn', events: n, tabs, transport: floor ? 'push, floor page (no drawing)' : push ? 'push' : 'poll (reference)', samples,
    p50_ms: r1(pct(lat, 0.5)), p95_ms: r1(pct(lat, 0.95)), max_ms: r1(Math.max(...lat)),
    host_get_max_ms: r1(Math.max(...pings)), host_get_p99_ms: r1(pct(pings, 0.99)), pings: pings.length,
  }
  if (METRICS) {
    // Per page per sample, averaged over pages (ms of the renderer's main thread).
    const per = (k) => r1(cpu1.reduce((a, c, i) => a + c[k] - cpu0[i][k], 0) / pages.length / samples * 1000)
    Object.assign(out, { chromium_cpu_ms_per_sample_per_tab: r1((chrome1 - chrome0) / samples / pages.length * 1000), ...idle, page_task_ms: per('TaskDuration'), page_script_ms: per('ScriptDuration'), page_layout_ms: per('LayoutDuration'), page_style_ms: per('RecalcStyleDuration') })
  }
  const pub = (await hub()).publishMs
  if (push && pub) Object.assign(out, { host_publish_p50_ms: pub.p50, host_publish_p95_ms: pub.p95, host_publish_max_ms: pub.max })
  if (stalled) {
    const h = await hub()
    Object.assign(out, {
      stalled_client: true, rss_max_mb: rssMax, hub_held_max_mb: r1(heldMax / 1e6), hub_overflows: h.overflows, hub_catch_ups: h.catchUps,
      stalled_dropped: h.dropped - dropped0, hub_clients_after: h.clients,
    })
    slow.socket.destroy()
  } else {
    out.rss_mb = await rssMb()
  }
  console.log(JSON.stringify(out))
  for (const p of pages) await p.context.close()
  return out
}

// A tab opening (or reconnecting) on a session that has just moved on: its first message is the
// full answer at a revision no other tab has asked for yet, so no framed answer is cached. Each
// of `times` opens follows one appended evaluation; the trivial GET runs throughout.
async function opening(sid, n, times) {
  const pinger = startPinger(port)
  const open = []
  for (let i = 0; i < times; i++) {
    await append(sid, moreEvents(1, { tag: `o${++tagN}` }).map(e => ({ type: e.type, data: e.data })))
    await sleep(500)
    const t0 = Date.now()
    const [p] = await openPages(sid, 1, true)
    open.push(Date.now() - t0)
    await p.context.close()
    await sleep(300)
  }
  const pings = (await pinger.stop()).map(([ms]) => ms)
  const out = { what: 'a tab opens', events: n, opens: times, open_ms_max: Math.max(...open), host_get_max_ms: r1(Math.max(...pings)), host_get_p99_ms: r1(pct(pings, 0.99)), pings: pings.length }
  console.log(JSON.stringify(out))
  return out
}

log(`generating ${Math.max(...SIZES)} events`)
const file = join(work, 'gen.json')
await run('bash', ['-c', 'exec "$0" "$1" "$2" > "$3"', process.execPath, join(ROOT, 'tests/fixtures/vectors/gen-large.mjs'), String(Math.max(...SIZES)), file], { maxBuffer: 1 << 20 })
const all = JSON.parse(readFileSync(file, 'utf8')).map(e => ({ type: e.type, data: e.data }))
rmSync(file)
for (const n of SIZES) {
  const { sessionId: sid } = await rpc(port, 'session.create', { cwd: ws, agentPreset: 'kernel-opt' })
  log(`${n} events: appending`)
  await append(sid, all.slice(0, n))
  const body = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`)
  log(`${n} events: ${body.json().iterations.length} points, body ${(body.text.length / 1e6).toFixed(2)} MB, host RSS ${await rssMb()} MB`)
  const maxTabs = Math.max(...TABS)
  for (const tabs of TABS) {
    log(`${n} events, ${tabs} tab(s), push`)
    await measure(sid, n, tabs, true, SAMPLES, false)
    if (FLOOR) {
      log(`${n} events, ${tabs} tab(s), push, floor page`)
      await measure(sid, n, tabs, true, SAMPLES, false, true)
    }
    if (WITH_POLL) {
      log(`${n} events, ${tabs} tab(s), poll (reference)`)
      await measure(sid, n, tabs, false, POLL_SAMPLES, false)
    }
  }
  log(`${n} events, a tab opens (3 times)`)
  await opening(sid, n, 3)
  log(`${n} events, ${maxTabs} tabs + one client that never reads`)
  await measure(sid, n, maxTabs, true, Math.max(10, SAMPLES >> 1), true)
}
await browser.close()
process.exit(0)
