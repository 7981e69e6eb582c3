#!/usr/bin/env node
// End-to-end benchmark of the /series route in a real `dsh web` (the pinned host), on generated
// session logs, for this checkout ("after") and optionally another checkout of the plugin
// ("before", e.g. a worktree of main) in the same run, on the same logs:
//
//   KOPT_HOST_DIR=… node bench/http/run.mjs [--sizes 100000,1000000] [--before <plugin checkout>]
//                                           [--seed <the seed plugin's checkout>] [--host-only]
//                                           [--reps 30] [--changed 15] [--pollers 5] [--gc]
//
// Per plugin: a scratch DSH_HOME, the plugin and bench/http/feeder (a benchmark-only plugin that
// appends events through the host's Session.append and answers a trivial ping) added to the web
// profile, one `dsh web` on 127.0.0.1. Per size N: a live session in the kernel-opt mode gets the
// first N events of tests/fixtures/vectors/gen-large.mjs, then
// and, once the host has settled (as for the past session below),
//   cold      the first GET /series (catch-up + projection + body)
// Every poll is made like the tab makes it: If-None-Match of the last ETag and, once the plugin has
// named a revision (X-Kopt-Revision), since=<that revision> (docs/protocol.md); a plugin without
// deltas (the seed, main before them) ignores since= and answers the full body.
//   304       a poll with nothing changed, --reps times (p50, p90); a 200 with the whole body from a
//             plugin without ETags (the seed)
//   changed   append 100 more events, then a poll, --changed times (p50, p90, bytes of the answer)
//   stall     while --pollers clients poll like the tab (every 1.5 s… here back to back)
//             and events are appended, a GET /ping every 20 ms (from a process of its own):
//             its worst and p99 latency
//   rss       the host's RSS after all that (the session held)
//   held      the host's memory after two full garbage collections in its Node process
//             (bench/http/heap-probe.cjs, preloaded into every `dsh web`, runs them on SIGUSR2):
//             held_mb is the Node process's RSS less the V8 heap's free space (heapTotal - heapUsed:
//             pages V8 keeps committed after its peak, which differ from host to host by hundreds
//             of MB and are no one's data), with its parts (rss, heap used/total, external)
// With --host-only, first a `dsh web` with only the feeder (no kernel-opt plugin) gets the same
// events in a session of the default preset: its RSS is the host's own share, which no plugin can
// take below (printed as plugin "host-only"), and each plugin gets a line with plugin_over_host_rss_mb,
// the plain measure: its Node process's RSS after the two full collections less the host-only's after
// its own, and beside it plugin_over_host_mb: its held_mb less the host-only's (which reads lower: V8's
// free pages are left out on both sides, and the host alone's are the more). Both are the plugin's share
// of the process, its sessions of every size so far included; its session has up to (changed + 20) × 100
// more events.
// Then `dsh web` is restarted on the same DSH_HOME, left to settle (settle_ms until a 3 s window
// without a ping over 50 ms; settle_worst_ms, its own start-up's worst), and each session, now past
// (read from the host's persistence), is opened like the tab opens it (asking again through 202
// every 100 ms):
//   past      first answer (ms, status), full body (ms), and a GET /ping every 20 ms meanwhile: its worst
// With --gc, every `dsh web` preloads bench/http/gc-watch.cjs and each plugin's line "gc" gives its
// host's garbage-collection pauses over the whole run (live and past phases): how many lasted 50 ms
// or more, and the longest full (mark-compact) and young-generation (scavenge) pause. The host's
// own pauses bound from below what any plugin's stall figure can be.
// Prints one JSON line per (plugin, size) and, with --before, the ratios before/after.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FEEDER, ROOT, detachedProcesses, feederAppend, hostEnv, pinnedHost, rpc, run, sleep, startWeb, webProfile } from '../../tests/e2e/harness.mjs'
import { arg } from '../generated-log.mjs'
import { startPinger } from '../pinger.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { dsh: DSH } = pinnedHost('the pinned host, scripts/setup-host.sh')

const sizes = arg('sizes', '100000').split(',').map(Number)
const before = arg('before', undefined)
const seed = arg('seed', undefined)
const REPS = Number(arg('reps', 30))
const CHANGED = Number(arg('changed', 15))
const POLLERS = Number(arg('pollers', 5))
const HOST_ONLY = process.argv.includes('--host-only')
const GC = process.argv.includes('--gc')
const BATCH = 5000

const work = mkdtempSync(join(tmpdir(), 'kopt-bench-http-'))
const procs = detachedProcesses(work)
process.on('exit', () => { procs.killAll(); if (!process.env.KOPT_BENCH_KEEP) rmSync(work, { recursive: true, force: true }) })
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130))
const log = (m) => console.error(`[bench] ${m}`)

const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null }
const r2 = (v) => (v === null ? null : Math.round(v * 100) / 100)

// The generated log: events without seq/time (the host assigns them), N + room for the appends.
async function generated(n) {
  const file = join(work, `gen-${n}.json`)
  await run('bash', ['-c', 'exec "$0" "$1" "$2" > "$3"', process.execPath, join(ROOT, 'tests/fixtures/vectors/gen-large.mjs'), String(n), file])
  const events = JSON.parse(readFileSync(file, 'utf8')).map(e => ({ type: e.type, data: e.data }))
  rmSync(file)
  return events
}

async function timedGet(port, path, headers = {}) {
  const t = process.hrtime.bigint()
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(600_000) })
  const body = Buffer.from(await res.arrayBuffer())
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, status: res.status, etag: res.headers.get('etag'), revision: res.headers.get('x-kopt-revision'), bytes: body.length, body }
}

// A poller's state, as the tab keeps it: the last ETag and revision.
function tabPoller(port, path) {
  const st = { etag: null, revision: null }
  st.poll = async () => {
    const since = st.revision !== null ? `&since=${st.revision}` : ''
    const r = await timedGet(port, path + since, st.etag ? { 'if-none-match': st.etag } : {})
    if (r.status === 200) {
      st.etag = r.etag
      st.revision = r.revision
      // The answer's kind is its first key (docs/protocol.md); a plain body has none.
      const head = r.body.subarray(0, 16).toString('latin1')
      r.kind = head.startsWith('{"kind":"delta"') ? 'delta' : head.startsWith('{"kind":"full"') ? 'full' : 'body'
    }
    return r
  }
  return st
}

const gcLog = (label) => join(work, `gc-${label}.log`)
// The host's GC pauses (--gc): count >= 50 ms, longest mark-compact, longest scavenge.
function gcSummary(label) {
  if (!GC) return undefined
  let lines = []
  try { lines = readFileSync(gcLog(label), 'utf8').split('\n').filter(Boolean) } catch { lines = [] }
  const out = { pauses_over_50ms: 0, max_mark_compact_ms: 0, max_scavenge_ms: 0, logged: lines.length }
  for (const l of lines) {
    const [, kind, ms] = l.split(' ')
    const d = Number(ms)
    if (d >= 50) out.pauses_over_50ms++
    if (kind === 'mark-compact') out.max_mark_compact_ms = Math.max(out.max_mark_compact_ms, d)
    if (kind === 'scavenge') out.max_scavenge_ms = Math.max(out.max_scavenge_ms, d)
  }
  return out
}

async function startHost(label, pluginDir, env) {
  const home = join(work, `home-${label}`)
  const ws = join(work, `ws-${label}`)
  mkdirSync(ws, { recursive: true })
  const preload = [join(here, 'heap-probe.cjs'), ...(GC ? [join(here, 'gc-watch.cjs')] : [])]
  const probeEnv = { NODE_OPTIONS: preload.map(p => `--require ${p}`).join(' '), KOPT_HEAP_FILE: join(work, `heap-${label}.json`), ...(GC ? { KOPT_GC_LOG: gcLog(label) } : {}) }
  const baseEnv = hostEnv(home, { key: 'bench', ...probeEnv, ...env })
  await webProfile(DSH, baseEnv, { plugins: pluginDir === null ? [FEEDER] : [pluginDir, FEEDER] })
  const web = await startWeb(procs, DSH, baseEnv, `dsh-${label}.log`, { plugin: pluginDir !== null, feeder: true })
  return { web, port: web.port, ws, label, baseEnv, addon: env.KOPT_ADDON || 'prebuilt' }
}

async function restartHost(host) {
  await procs.stop(host.web)
  const web = await startWeb(procs, DSH, host.baseEnv, `dsh-${host.label}-2.log`, { feeder: true })
  return { ...host, web, port: web.port }
}

// A restarted host keeps its event loop busy for a while (its own start-up work, nothing asked of
// the plugin): ping every 20 ms until a 3 s window has no ping over 50 ms (60 s at most), so that
// the past-session figures below are the opening's, not the start-up's. Returns the worst ping.
async function settle(port) {
  const t0 = Date.now()
  let worst = 0
  let windowStart = Date.now()
  while (Date.now() - t0 < 60_000) {
    const t = process.hrtime.bigint()
    await fetch(`http://127.0.0.1:${port}/plugins/kopt-bench-feeder/ping`).then(r => r.text()).catch(() => {})
    const ms = Number(process.hrtime.bigint() - t) / 1e6
    worst = Math.max(worst, ms)
    if (ms > 50) windowStart = Date.now()
    if (Date.now() - windowStart >= 3000) break
    await sleep(20)
  }
  return { settle_ms: Date.now() - t0, settle_worst_ms: r2(worst) }
}

// A past session opened for the first time: first answer, full body, the host's stall meanwhile.
async function measurePast(host, n, sid) {
  const { port } = host
  const path = `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`
  const settled = await settle(port)
  const pinger = startPinger(port)
  await sleep(200)
  const t0 = process.hrtime.bigint()
  const first = await timedGet(port, path)
  let r = first
  let asks = 1
  while (r.status === 202) {
    await sleep(100)
    r = await timedGet(port, path)
    asks++
  }
  const fullMs = Number(process.hrtime.bigint() - t0) / 1e6
  await sleep(200)
  const pings = (await pinger.stop()).map(([ms]) => ms)
  const out = {
    plugin: host.label, past_events: n, first_ms: r2(first.ms), first_status: first.status, full_ms: r2(fullMs), full_status: r.status,
    full_bytes: r.bytes, asks, stall_max_ms: pings.length ? r2(Math.max(...pings)) : null, pings: pings.length, ...settled,
  }
  console.log(JSON.stringify(out))
  return out
}

async function append(port, sessionId, events) {
  const r = await feederAppend(port, sessionId, events, BATCH)
  append.failed = (append.failed ?? 0) + r.failed
  append.firstError ??= r.firstError
}

async function rssKb(pid) {
  // dsh web runs under a launcher: sum the process group (the Node server is the largest part).
  try {
    const { stdout } = await run('ps', ['-o', 'rss=', '-g', String(pid)])
    return stdout.trim().split(/\s+/).map(Number).reduce((a, b) => a + b, 0)
  } catch { return null }
}

// The host's memory after two full collections in its Node process (heap-probe.cjs), in MB:
// {held_mb, rss, heap_used, heap_total, external}; null when the probe did not answer in 30 s.
async function held(host) {
  const file = host.baseEnv.KOPT_HEAP_FILE
  const asked = Date.now()
  process.kill(host.web.child.pid, 'SIGUSR2')
  for (let waited = 0; waited < 30_000; waited += 100) {
    await sleep(100)
    let line
    try { line = JSON.parse(readFileSync(file, 'utf8')) } catch { continue }
    if (line.at >= asked) {
      const mb = (b) => Math.round(b / 1048576)
      return { held_mb: mb(line.rss - (line.heapTotal - line.heapUsed)), rss: mb(line.rss), heap_used: mb(line.heapUsed), heap_total: mb(line.heapTotal), external: mb(line.external) }
    }
  }
  return null
}

async function measure(host, n, events) {
  const { port, ws } = host
  const created = await rpc(port, 'session.create', { cwd: ws, agentPreset: 'kernel-opt' })
  const sid = created.sessionId
  const path = `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`
  const extra = (CHANGED + 20) * 100
  append.failed = 0
  append.firstError = undefined
  await append(port, sid, events.slice(0, n))
  let rest = events.slice(n, n + extra)
  // The host's own work after the appends (its persistence writing them, its collections) is left to
  // end first, as before the past session's opening: otherwise one of its pauses lands on one of the
  // polls below, and which one is chance (seen: the first 304 at 110–220 ms, either plugin).
  await settle(port)
  const tab = tabPoller(port, path)
  const cold = await tab.poll()
  await tab.poll()
  const n304 = []
  for (let i = 0; i < REPS; i++) {
    const r = await tab.poll()
    // The seed sends no ETag: its unchanged poll is a 200 with the whole body, measured as such.
    if (r.status !== 304 && !(r.status === 200 && !r.etag)) throw new Error(`expected 304, got ${r.status}: ${r.body.subarray(0, 300).toString()}`)
    n304.push(r.ms)
  }
  const changed = []
  const kinds = {}
  let bytes = 0
  for (let i = 0; i < CHANGED; i++) {
    await append(port, sid, rest.slice(0, 100))
    rest = rest.slice(100)
    const r = await tab.poll()
    if (r.status !== 200) throw new Error(`expected 200 after 100 new events, got ${r.status}`)
    changed.push(r.ms)
    bytes = r.bytes
    kinds[r.kind] = (kinds[r.kind] ?? 0) + 1
  }
  const etag = tab.etag
  const revision = tab.revision
  log(`${host.label} ${n}: cold ${r2(cold.ms)} ms, 304 p50 ${r2(pct(n304, 0.5))} ms, changed p50 ${r2(pct(changed, 0.5))} ms, ${bytes} bytes`)
  // Stall: pollers poll back to back (each with its own ETag), 100 events are appended every 500 ms,
  // and a ping every 20 ms measures how long the event loop keeps a trivial request waiting.
  // A request that fails (the host reset the connection, a timeout) is counted, not fatal.
  const pings = []
  const errors = { ping: 0, poll: 0, append: 0 }
  let firstError
  const failed = (what, error) => { errors[what]++; firstError ??= `${what}: ${error?.cause?.code ?? error?.message ?? error}` }
  let stop = false
  const pinger = startPinger(port)
  const pollers = Array.from({ length: POLLERS }, async () => {
    const p = tabPoller(port, path)
    p.etag = etag
    p.revision = revision
    while (!stop) {
      try {
        await p.poll()
      } catch (error) { failed('poll', error) }
      await sleep(50)
    }
  })
  const appender = (async () => {
    while (!stop && rest.length >= 100) {
      try {
        await append(port, sid, rest.slice(0, 100))
      } catch (error) { failed('append', error) }
      rest = rest.slice(100)
      await sleep(500)
    }
  })()
  await sleep(8000)
  stop = true
  await Promise.all([appender, ...pollers])
  for (const [ms, ok] of await pinger.stop()) {
    pings.push(ms)
    if (!ok) failed('ping', 'a ping failed')
  }
  const out = {
    plugin: host.label, addon: host.addon, events: n, cold_ms: r2(cold.ms), bytes, p50_304_ms: r2(pct(n304, 0.5)), p90_304_ms: r2(pct(n304, 0.9)),
    ...(process.argv.includes('--samples') ? { samples_304_ms: n304.map(r2) } : {}),
    p50_changed_ms: r2(pct(changed, 0.5)), p90_changed_ms: r2(pct(changed, 0.9)), changed_answers: kinds,
    stall_max_ms: pings.length ? r2(Math.max(...pings)) : null, stall_p99_ms: r2(pct(pings, 0.99)), pings: pings.length,
    ...(errors.ping + errors.poll + errors.append > 0 ? { stall_phase_errors: errors, stall_first_error: firstError } : {}),
    sid, rss_mb: Math.round(((await rssKb(host.web.child.pid)) ?? 0) / 1024), held: await held(host),
    append_failed: append.failed, ...(append.firstError ? { append_first_error: append.firstError } : {}),
  }
  console.log(JSON.stringify(out))
  return out
}

// The host alone holding the same events: its memory once its own work after the appends (its
// persistence writing them) has ended, as a plugin's is measured after its polls.
async function measureHostOnly(host, n, events) {
  const created = await rpc(host.port, 'session.create', { cwd: host.ws })
  append.failed = 0
  await append(host.port, created.sessionId, events.slice(0, n))
  await settle(host.port)
  const out = { plugin: host.label, events: n, rss_mb: Math.round(((await rssKb(host.web.child.pid)) ?? 0) / 1024), held: await held(host), append_failed: append.failed }
  console.log(JSON.stringify(out))
  return out
}

// This checkout loads what the plugin itself loads: its committed prebuilt (scripts/check-prebuilt.sh
// ties it to the sources), unless KOPT_ADDON names another build. Never build/kopt.node by default:
// a stale dev build would be measured under this checkout's name.
const variants = [{ label: 'after', dir: ROOT, env: { KOPT_ADDON: process.env.KOPT_ADDON ?? '' } }]
// The other checkouts load their own committed prebuilt, never a KOPT_ADDON set for this one.
if (before) variants.unshift({ label: 'before', dir: resolve(before), env: { KOPT_ADDON: '' } })
if (seed) variants.unshift({ label: 'seed', dir: resolve(seed), env: { KOPT_ADDON: '' } })
const maxN = Math.max(...sizes)
log(`generating ${maxN + (CHANGED + 20) * 100} events`)
const all = await generated(maxN + (CHANGED + 20) * 100)
const results = {}
if (HOST_ONLY) {
  log('host-only: starting dsh web with the feeder alone')
  const host = await startHost('host-only', null, {})
  for (const n of sizes) results[`host-only/${n}`] = await measureHostOnly(host, n, all)
  await procs.stop(host.web)
  if (GC) console.log(JSON.stringify({ plugin: 'host-only', gc: gcSummary('host-only') }))
}
for (const v of variants) {
  log(`${v.label}: starting dsh web with ${v.dir}`)
  const host = await startHost(v.label, v.dir, v.env)
  for (const n of sizes) {
    log(`${v.label}: ${n} events`)
    results[`${v.label}/${n}`] = await measure(host, n, all)
    const alone = results[`host-only/${n}`]
    if (alone !== undefined) {
      const mine = results[`${v.label}/${n}`]
      const both = mine.held !== null && alone.held !== null
      const over = both ? mine.held.held_mb - alone.held.held_mb : null
      // The plain measure beside it: the Node process's RSS after the two full collections, with the
      // plugin, less the host alone's after its collections (V8's free pages counted on both sides).
      const overRss = both ? mine.held.rss - alone.held.rss : null
      console.log(JSON.stringify({
        plugin: v.label, events: n, plugin_over_host_rss_mb: overRss, plugin_over_host_mb: over, rss_after_gc_mb: mine.held?.rss ?? null,
        host_only_rss_after_gc_mb: alone.held?.rss ?? null, held_mb: mine.held?.held_mb ?? null, host_only_held_mb: alone.held?.held_mb ?? null,
      }))
    }
  }
  const past = await restartHost(host)
  for (const n of sizes) {
    log(`${v.label}: past session of ${n} events`)
    results[`${v.label}/past/${n}`] = await measurePast(past, n, results[`${v.label}/${n}`].sid)
  }
  await procs.stop(past.web)
  if (GC) console.log(JSON.stringify({ plugin: v.label, gc: gcSummary(v.label) }))
}
for (const base of [seed && 'seed', before && 'before'].filter(Boolean)) {
  for (const n of sizes) {
    const b = results[`${base}/${n}`]
    const a = results[`after/${n}`]
    const ratio = k => (a[k] > 0 ? r2(b[k] / a[k]) : null)
    console.log(JSON.stringify({
      ratio: `${base}/after`, events: n, cold: ratio('cold_ms'), p50_304: ratio('p50_304_ms'), p50_changed: ratio('p50_changed_ms'),
      stall_max: ratio('stall_max_ms'), rss: ratio('rss_mb'), bytes: ratio('bytes'),
    }))
    const bp = results[`${base}/past/${n}`]
    const ap = results[`after/past/${n}`]
    const pr = k => (ap[k] > 0 ? r2(bp[k] / ap[k]) : null)
    console.log(JSON.stringify({ ratio: `${base}/after`, past_events: n, first: pr('first_ms'), full: pr('full_ms'), stall_max: pr('stall_max_ms') }))
  }
}
process.exit(0)
