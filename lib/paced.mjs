// Writing a large answer without holding the host's thread: one writev of a 33 MB body (1M events)
// into a loopback socket copied it all in one system call and held the event loop 0.1–0.2 s
// (docs/performance.md, run P12). The Buffers are cut into runs of at most TURN_BYTES, and one run
// is written per event-loop turn (after 'drain' when the stream is full). Nothing is copied: a run
// is the session's own Buffers, or views into them.

export const TURN_BYTES = 1 << 20

/** Buffers in order as runs of at most `max` bytes each (a longer Buffer is cut into views). */
export function runsOf(chunks, max = TURN_BYTES) {
  const runs = []
  let run = []
  let n = 0
  for (let c of chunks) {
    while (c.length > 0) {
      if (n === max) { runs.push(run); run = []; n = 0 }
      const take = Math.min(c.length, max - n)
      run.push(take === c.length ? c : c.subarray(0, take))
      n += take
      c = c.subarray(take)
    }
  }
  if (run.length > 0 || runs.length === 0) runs.push(run)
  return runs
}

/**
 * Writes `runs` (arrays of Buffers) to `stream` in order, one run per turn (corked: one writev
 * each), and `stream.end()` after the last when `end`. `done(error, later)` is called once: when all
 * is written (error null), or when the stream closed or `abort()` was called first; `later` says
 * whether that happened after this call returned. Returns {left(), finished, abort()}: `left()` is the
 * bytes not yet handed to the stream.
 */
export function writeRuns(stream, runs, done = () => {}, { end = false } = {}) {
  if (runs.length === 0) runs = [[]]
  let next = 0
  let sync = true
  let wait = null
  const h = {
    finished: false,
    left() {
      let n = 0
      for (let i = next; i < runs.length; i++) for (const c of runs[i]) n += c.length
      return n
    },
    abort() { finish(new Error('aborted')) },
  }
  const onClose = () => finish(new Error('the stream closed'))
  function finish(error) {
    if (h.finished) return
    h.finished = true
    if (wait) { clearImmediate(wait); wait = null }
    stream.off('drain', turn)
    stream.off('close', onClose)
    done(error, !sync)
  }
  function turn() {
    wait = null
    if (h.finished) return
    if (stream.destroyed || stream.writableEnded) return finish(new Error('the stream closed'))
    const run = runs[next++]
    const last = next === runs.length
    stream.cork()
    for (const c of run) stream.write(c)
    if (last && end) stream.end() // end() uncorks
    else stream.uncork()
    if (last) return finish(null)
    if (stream.writableNeedDrain) stream.once('drain', turn)
    else wait = setImmediate(turn)
  }
  if (runs.length > 1) stream.on('close', onClose)
  turn()
  sync = false
  return h
}
