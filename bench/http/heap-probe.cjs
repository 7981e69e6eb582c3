// Preloaded into every `dsh web` of bench/http/run.mjs (NODE_OPTIONS=--require): on SIGUSR2 the
// process runs two full garbage collections and then writes its memory figures as one JSON line to
// $KOPT_HEAP_FILE ({at, rss, heapTotal, heapUsed, external, arrayBuffers} in bytes), so that what
// a plugin holds is not hidden or inflated by when either host's heap was last collected.
'use strict'
const file = process.env.KOPT_HEAP_FILE
if (file) {
  const { writeFileSync } = require('node:fs')
  require('node:v8').setFlagsFromString('--expose-gc')
  const gc = require('node:vm').runInNewContext('gc')
  process.on('SIGUSR2', () => {
    gc()
    gc()
    const m = process.memoryUsage()
    writeFileSync(file, JSON.stringify({ at: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }) + '\n')
  })
}
