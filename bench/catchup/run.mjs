#!/usr/bin/env node
// What catching up a live session first met with a long log costs the host's thread (a past session
// resumed, the plugin loaded late): the plugin's session store (lib/store.mjs createStore, the code
// the route runs) with a stand-in host session holding N generated events, caught up
//   at once  getLive (a caller that needs the whole projection now): one block of the thread
//   paced    the first live event (onEvent) with no log file at hand: one slice per event-loop turn
//   file     the first live event with the host's log file at hand (findLog, as the JSONL
//            persistence offers): read and projected on a worker thread, then the events past the
//            file's end (here the last 300, which the host had not written yet) fed on the thread
// and, as the reference the file mode is held to (issue 42: the whole body in at most a past
// session's time),
//   past     the same file opened as a past session (kopt.loadSession, as GET /series does)
// For each, the time until caught up (totalMs), until the whole body is in hand (bodyMs: then the
// first revise() and parts() the route makes), and the longest gap between ticks of a 5 ms timer
// meanwhile (worstWaitMs: the wait a host request would see). Each mode runs in a process of its own.
// One JSON line per mode.
//
//   node bench/catchup/run.mjs [--events 1000000] [--addon PATH]
import { execFileSync } from 'node:child_process'
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { arg, generatedLog, startTicker } from '../generated-log.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const events = Number(arg('events', 1000000))
const addon = path.resolve(arg('addon', path.join(root, 'lib/native/linux-x64/kopt.node')))

if (arg('child')) {
  // The store's own lines (a catch-up from the file names itself) go to stderr: stdout is the figures.
  console.log = (...a) => console.error(...a)
  const { createStore } = await import('../../lib/store.mjs')
  const { resolveConfig, routingJson } = await import('../../lib/config.mjs')
  const kopt = createRequire(import.meta.url)(addon)
  const { config } = resolveConfig({})
  const all = JSON.parse(readFileSync(arg('log'), 'utf8')).map((e, i) => ({ ...e, seq: i }))
  const session = { id: 'bench', header: { agentPreset: config.preset.id }, events: all, seq: all.length }
  let caught
  const done = new Promise((resolve) => { caught = resolve })
  const mode = arg('child')
  const persistence = mode === 'file' ? { findLog: async () => arg('jsonl'), inspect: async () => { throw new Error('not used') } } : undefined
  const store = createStore(kopt, config, { sessions: () => new Map([['bench', session]]), persistence: () => persistence, caughtUp: () => caught() })
  // The longest wait a timer (a host request) saw, counted from when the catch-up began.
  const ticker = startTicker(5)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const t0 = performance.now()
  ticker.reset()
  let s
  if (mode === 'past') {
    s = await kopt.loadSession('bench', arg('jsonl'), routingJson(config), null)
  } else {
    if (mode === 'at-once') store.getLive('bench')
    else {
      store.onEvent(session, all.at(-1), config.preset.id)
      await done
    }
    s = store.peek('bench')
    if (s.fed !== all.length || store.catchingUp('bench')) throw new Error(`not caught up: ${s.fed} of ${all.length}`)
  }
  const total = performance.now() - t0
  s.revise()
  const bytes = s.parts(null).reduce((n, b) => n + b.length, 0)
  const body = performance.now() - t0
  await new Promise((resolve) => setTimeout(resolve, 20)) // the tick after a block
  ticker.stop()
  process.stdout.write(JSON.stringify({ what: 'catchup', mode, events: all.length, points: s.completedEvals, totalMs: Math.round(total), bodyMs: Math.round(body), bodyBytes: bytes, worstWaitMs: +ticker.worst().toFixed(1) }) + '\n')
  process.exit(0)
}

const log = generatedLog(events, 'catchup')
// The host's own form of the same log (a header row, then one event per line with its seq), short of
// the last LAG events, which a live session holds before the host has written them.
const LAG = Math.min(300, Math.floor(events / 10))
const jsonl = path.join(path.dirname(log), 'session.jsonl')
{
  const list = JSON.parse(readFileSync(log, 'utf8'))
  const fd = openSync(jsonl, 'w')
  writeSync(fd, JSON.stringify({ type: 'session', version: 0, id: 'bench' }) + '\n')
  for (let i = 0; i < list.length - LAG; i += 10000) {
    writeSync(fd, list.slice(i, Math.min(i + 10000, list.length - LAG)).map((e, j) => JSON.stringify({ ...e, seq: i + j })).join('\n') + '\n')
  }
  closeSync(fd)
}
for (const mode of ['at-once', 'paced', 'file', 'past']) {
  const line = execFileSync(process.execPath, ['--max-old-space-size=12000', fileURLToPath(import.meta.url), '--child', mode, '--log', log, '--jsonl', jsonl, '--addon', addon],
    { maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim()
  console.log(line)
}
