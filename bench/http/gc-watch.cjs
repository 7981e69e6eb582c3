// Preloaded into `dsh web` by bench/http/run.mjs --gc (NODE_OPTIONS=--require): appends one line
// per V8 garbage collection of 10 ms or more to $KOPT_GC_LOG: "<wall ms> <kind> <duration ms>".
// A GC pause holds the event loop like any other work; this says how long the host's own were.
'use strict'
const { PerformanceObserver } = require('node:perf_hooks')
const { appendFileSync } = require('node:fs')
const file = process.env.KOPT_GC_LOG
const KINDS = { 1: 'scavenge', 2: 'minor-mark-sweep', 4: 'mark-compact', 8: 'incremental', 16: 'weak-callbacks' }
if (file) {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.duration >= 10) appendFileSync(file, `${Date.now()} ${KINDS[e.detail?.kind] ?? e.detail?.kind} ${e.duration.toFixed(1)}\n`)
  }).observe({ entryTypes: ['gc'] })
}
