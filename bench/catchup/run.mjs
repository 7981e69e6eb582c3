#!/usr/bin/env node
// What catching up a live session first met with a long log costs the host's thread (a past session
// resumed, the plugin loaded late): the plugin's session store (lib/store.mjs createStore, the code
// the route runs) with a stand-in host session holding N generated events, caught up
//   at once  getProjector (a caller that needs the whole projection now): one block of the thread
//   paced    the first live event (onEvent), one slice per event-loop turn until caughtUp
// For each, the total time and the longest gap between ticks of a 5 ms timer meanwhile (the wait a
// host request would see). Each mode runs in a process of its own. One JSON line per mode.
//
//   node bench/catchup/run.mjs [--events 1000000] [--addon PATH]
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { arg, generatedLog, startTicker } from '../generated-log.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const events = Number(arg('events', 1000000))
const addon = path.resolve(arg('addon', path.join(root, 'lib/native/linux-x64/kopt.node')))

if (arg('child')) {
  const { createStore } = await import('../../lib/store.mjs')
  const { resolveConfig } = await import('../../lib/config.mjs')
  const kopt = createRequire(import.meta.url)(addon)
  const { config } = resolveConfig({})
  const all = JSON.parse(readFileSync(arg('log'), 'utf8')).map((e, i) => ({ ...e, seq: i }))
  const session = { id: 'bench', header: { agentPreset: config.preset.id }, events: all, seq: all.length }
  let caught
  const done = new Promise((resolve) => { caught = resolve })
  const store = createStore(kopt, config, { sessions: () => new Map([['bench', session]]), persistence: () => undefined, caughtUp: () => caught() })
  // The longest wait a timer (a host request) saw, counted from when the catch-up began.
  const ticker = startTicker(5)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const mode = arg('child')
  const t0 = performance.now()
  ticker.reset()
  if (mode === 'paced') {
    store.onEvent(session, all.at(-1), config.preset.id)
    await done
  } else {
    store.getLive('bench')
  }
  const total = performance.now() - t0
  await new Promise((resolve) => setTimeout(resolve, 20)) // the tick after a block
  ticker.stop()
  const s = store.peek('bench')
  if (s.fed !== all.length || store.catchingUp('bench')) throw new Error(`not caught up: ${s.fed} of ${all.length}`)
  console.log(JSON.stringify({ what: 'catchup', mode, events: all.length, points: s.completedEvals, totalMs: Math.round(total), worstWaitMs: +ticker.worst().toFixed(1) }))
  process.exit(0)
}

const log = generatedLog(events, 'catchup')
for (const mode of ['at-once', 'paced']) {
  const line = execFileSync(process.execPath, ['--max-old-space-size=12000', fileURLToPath(import.meta.url), '--child', mode, '--log', log, '--addon', addon],
    { maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim()
  console.log(line)
}
