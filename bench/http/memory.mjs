#!/usr/bin/env node
// In-process companion of bench/http/run.mjs's memory lines: where a live session's native memory
// goes, without a host. N generated events (tests/fixtures/vectors/gen-large.mjs) written as the
// host's JSONL, caught up as lib/store.mjs catches a long live session up (kopt.loadSession on a
// worker thread, then the events past the file fed here), answered once (revise + parts), then
// --rounds × 100 more events fed, each followed by a delta-sized poll (revise + parts(since)).
//
//   node --expose-gc bench/http/memory.mjs [--events 1000000] [--addon build/kopt-test.node] [--rounds 35] [--feed]
//
// Prints one JSON line: the process's RSS after two full collections less the same before anything
// was loaded (rss_over_start_mb; V8's heap is near empty on both sides: the events are generated in a
// child and only the appends are read here; with --feed the log's lines are held here, and
// outside_heap_over_start_mb, the RSS less V8's heapTotal, is the figure to read), memoryBytes (the session's own count), and, when the addon is the
// test build, glibc's malloc figures (mallinfo2: in use, free inside the arenas).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { arg, generatedLog } from '../generated-log.mjs'

const require = createRequire(import.meta.url)
const N = Number(arg('events', 1000000))
const ROUNDS = Number(arg('rounds', 35))
const kopt = require(arg('addon', new URL('../../build/kopt-test.node', import.meta.url).pathname))
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')
const mb = (b) => Math.round(b / 1048576 * 10) / 10

// The log as the host writes it: one event a line, seq and time on each.
const src = generatedLog(N + ROUNDS * 100, 'memory')
// In a child, so that this process never holds the log's text: the first N events as JSONL, the rest
// (the appends) as JSONL beside it.
const jsonl = src + 'l'
execFileSync(process.execPath, ['-e', `
  const fs = require('fs'); const ev = JSON.parse(fs.readFileSync(process.argv[1], 'utf8')); const n = Number(process.argv[3])
  fs.writeFileSync(process.argv[2], ev.slice(0, n).map((e) => JSON.stringify(e)).join('\\n') + '\\n')
  fs.writeFileSync(process.argv[2] + '.rest', ev.slice(n).map((e) => JSON.stringify(e)).join('\\n'))`, src, jsonl, String(N)], { stdio: 'inherit' })
const rest = readFileSync(jsonl + '.rest', 'utf8').split('\n')

const probe = () => {
  gc(); gc()
  const m = process.memoryUsage()
  return { rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, malloc: kopt.mallocStats?.() }
}
// --feed: the events fed one at a time on this thread, as lib/store.mjs feeds a live session that
// saw them arrive (bench/http's case); else read from the file on a worker (kopt.loadSession).
const FEED = process.argv.includes('--feed')
const fedLines = FEED ? readFileSync(jsonl, 'utf8').split('\n').filter(Boolean) : null  // held to the end: same on both sides
const start = probe()
const t0 = performance.now()
let s
if (FEED) {
  s = new kopt.Session('s-mem')
  for (const line of fedLines) s.feed(line)
} else {
  s = await kopt.loadSession('s-mem', jsonl, undefined, undefined)
}
const loadMs = performance.now() - t0
s.revise()
let parts = s.parts()
let bytes = parts.reduce((a, b) => a + b.length, 0)
parts = null
const afterLoad = probe()
for (let r = 0; r < ROUNDS; r++) {
  s.feed('[' + rest.slice(r * 100, (r + 1) * 100).join(',') + ']')
  const since = s.revision
  s.revise()
  s.parts(since)
}
s.revise()
parts = s.parts()
bytes = parts.reduce((a, b) => a + b.length, 0)
parts = null
const end = probe()
const out = {
  events: N, mode: FEED ? 'feed' : 'loadSession', rounds: ROUNDS, fed: s.fed, load_ms: Math.round(loadMs), body_bytes: bytes,
  rss_over_start_mb: mb(end.rss - start.rss), rss_over_start_after_load_mb: mb(afterLoad.rss - start.rss),
  outside_heap_over_start_mb: mb(end.rss - end.heapTotal - (start.rss - start.heapTotal)),
  memory_bytes_mb: mb(s.memoryBytes), heap_used_over_start_mb: mb(end.heapUsed - start.heapUsed), external_mb: mb(end.external),
  ...(end.malloc ? { malloc_in_use_mb: mb(end.malloc.inUse - start.malloc.inUse), malloc_free_mb: mb(end.malloc.free), malloc_arena_mb: mb(end.malloc.arena), malloc_mmapped_mb: mb(end.malloc.mmapped) } : {}),
}
if (kopt.mallocTrim) { const t1 = performance.now(); kopt.mallocTrim(); out.trim_ms = Math.round((performance.now() - t1) * 100) / 100; const t = probe(); out.rss_over_start_after_trim_mb = mb(t.rss - start.rss); out.outside_heap_over_start_after_trim_mb = mb(t.rss - t.heapTotal - (start.rss - start.heapTotal)) }
console.log(JSON.stringify(out))
process.exit(0)
