// lib/paced.mjs: runs of at most TURN_BYTES, written one per event-loop turn.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { setImmediate as turn } from 'node:timers/promises'
import { runsOf, writeRuns } from '../../lib/paced.mjs'

test('runsOf cuts Buffers into runs of at most max bytes, as views', () => {
  const a = Buffer.from('abcdefghij'), b = Buffer.from('klm')
  const runs = runsOf([a, b], 4)
  assert.deepEqual(runs.map(r => Buffer.concat(r).toString()), ['abcd', 'efgh', 'ijkl', 'm'])
  assert.equal(runs[1][0].buffer, a.buffer)
  assert.deepEqual(runsOf([], 4), [[]])
  assert.deepEqual(runsOf([a], 10).map(r => r.length), [1])
})

function sink(highWaterMark = 1 << 30) {
  const got = []
  // Each writev is done at once, so every run is its own writev call.
  const w = new Writable({ highWaterMark, writev(chunks, cb) { got.push(Buffer.concat(chunks.map(c => c.chunk)).toString()); cb() } })
  return { w, got }
}

test('one run per turn, each in one writev, then end; done once, later', async () => {
  const { w, got } = sink()
  const calls = []
  const h = writeRuns(w, runsOf([Buffer.from('abcdefgh')], 3), (error, later) => calls.push([error, later]), { end: true })
  assert.deepEqual(got, ['abc'], 'only the first run in the first turn')
  assert.equal(h.left(), 5)
  await new Promise(r => w.on('finish', r))
  assert.deepEqual(got, ['abc', 'def', 'gh'])
  assert.deepEqual(calls, [[null, true]])
  // A single run: written at once, done before writeRuns returns.
  const one = sink()
  const seen = []
  assert.equal(writeRuns(one.w, [[Buffer.from('x')]], (e, later) => seen.push(later)).finished, true)
  assert.deepEqual(seen, [false])
})

test('a full stream is waited for (drain), abort and close stop the runs', async () => {
  // A stream that takes 2 bytes and finishes a write only when the test says so.
  const got = []
  let release = null
  const slow = new Writable({ highWaterMark: 2, writev(chunks, cb) { got.push(Buffer.concat(chunks.map(c => c.chunk)).toString()); release = cb } })
  writeRuns(slow, runsOf([Buffer.from('abcdef')], 2))
  await turn(); await turn()
  assert.deepEqual(got, ['ab'], 'no second run before drain')
  release()
  await turn(); await turn()
  assert.deepEqual(got, ['ab', 'cd'])

  const a = sink()
  const seen = []
  const h = writeRuns(a.w, runsOf([Buffer.from('abcdef')], 2), (e) => seen.push(e?.message))
  h.abort()
  await turn(); await turn()
  assert.deepEqual(a.got, ['ab'])
  assert.deepEqual(seen, ['aborted'])

  const c = sink()
  const closed = []
  writeRuns(c.w, runsOf([Buffer.from('abcdef')], 2), (e) => closed.push(e?.message))
  c.w.destroy()
  await turn(); await turn()
  assert.deepEqual(closed, ['the stream closed'])
})
