// GET /compare (lib/routes/compare.mjs) over the plugin's own session store (lib/store.mjs createStore):
// a live session and past sessions read from their log files off the thread (kopt.loadSession),
// loading answered with Retry-After and then the curve, an unreadable or unknown session kept as a
// row with its reason, the bounds refused with a message, an unchanged comparison answered 304.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { kopt } from '../addon/addon.mjs'
import { createStore } from '../../lib/store.mjs'
import { resolveConfig } from '../../lib/config.mjs'
import { compareIds, compareRoute } from '../../lib/routes/compare.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const { config } = resolveConfig({})
const vectors = path.join(root, 'tests/fixtures/vectors')
const events = JSON.parse(fs.readFileSync(path.join(vectors, 'z03-large-60-evals.events.json'), 'utf8')).map((e, i) => ({ ...e, seq: i, time: 1000 + i }))

// A response stand-in: status, headers and the bytes written.
function response () {
  const chunks = []
  let resolve
  const done = new Promise((r) => { resolve = r })
  return {
    done,
    headersSent: false,
    writeHead (status, headers) { this.status = status; this.headers = headers; this.headersSent = true },
    write (c) { chunks.push(Buffer.from(c)); return true },
    end (c) { if (c) chunks.push(Buffer.from(c)); this.body = Buffer.concat(chunks).toString('utf8'); resolve() },
    cork () {}, uncork () {}, once () {}, on () {}, off () {}, removeListener () {},
  }
}
async function ask (route, query, headers = {}) {
  const res = response()
  await route({ method: 'GET', url: `/plugins/kernel-opt/compare?${query}`, headers }, res)
  await res.done
  return { status: res.status, headers: res.headers, json: res.body ? JSON.parse(res.body) : undefined }
}

test('compareIds: sessionId first, then each of `with` once', () => {
  const url = new URL('http://x/?sessionId=a&with=b,c&with=a,d&with=')
  assert.deepEqual(compareIds(url), ['a', 'b', 'c', 'd'])
})

test('live and past sessions compared: loading first, then every curve; unknown and unreadable keep their rows; 304 when unchanged', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopt-compare-'))
  try {
    const files = {
      p1: path.join(vectors, 'z01-large-shell-job-mix.events.json'),
      p2: path.join(vectors, 'z02-large-tool-channel.events.json'),
      bad: path.join(dir, 'missing.jsonl'),
    }
    const persistence = {
      findLog: async (id) => files[id] ?? '',
      inspect: async (id) => { throw new Error(`session "${id}" not found`) },
    }
    const live = { id: 'live', header: { agentPreset: 'kernel-opt' }, events: events.slice(0, 200) }
    live.seq = live.events.length
    const store = createStore(kopt, config, { sessions: () => new Map([['live', live]]), persistence: () => persistence })
    const route = compareRoute({ kopt, getView: store.getView })

    let r = await ask(route, 'sessionId=live&with=p1,p2,nobody,bad')
    assert.equal(r.status, 200)
    assert.equal(r.json.kind, 'kopt-compare')
    assert.equal(r.json.sessions.length, 5)
    const first = r.json
    // Until they are read, the past sessions answer as loading (Retry-After), or already read.
    for (let i = 0; i < 100 && r.json.sessions.some(s => s.loading); i++) {
      assert.equal(r.headers['retry-after'], '1')
      await new Promise((resolve) => setTimeout(resolve, 30))
      r = await ask(route, 'sessionId=live&with=p1,p2,nobody,bad')
    }
    assert.ok(first.chart.series.length >= 1, 'the live session is drawn at once')
    const s = r.json.sessions
    assert.equal(s[3].error, 'unknown session / 没有这个会话')
    assert.match(s[4].error, /missing\.jsonl|cannot|No such/i)
    assert.equal(r.json.chart.series.length, 3)
    assert.equal(r.headers['x-kernel-opt-loading'], undefined)
    // Each session's row comes from its projection, e.g. the live one's evaluations.
    assert.equal(s[0].evaluations, JSON.parse(store.peek('live').body()).iterations.length)
    // Nothing changed: the same ETag, 304.
    const again = await ask(route, 'sessionId=live&with=p1,p2,nobody,bad', { 'if-none-match': r.headers.etag })
    assert.equal(again.status, 304)
    // The live session moves on: a new answer with its new point.
    live.events = events.slice(0, 400)
    live.seq = live.events.length
    const moved = await ask(route, 'sessionId=live&with=p1,p2,nobody,bad', { 'if-none-match': r.headers.etag })
    assert.equal(moved.status, 200)
    assert.notEqual(moved.headers.etag, r.headers.etag)
    assert.ok(moved.json.sessions[0].evaluations > s[0].evaluations)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('bounds: one session, too many, a bad id', async () => {
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => undefined })
  const route = compareRoute({ kopt, getView: store.getView })
  let r = await ask(route, 'sessionId=a')
  assert.equal(r.status, 400)
  assert.match(r.json.error, /at least 2 sessions/)
  assert.equal(r.json.min, kopt.compareMin)
  r = await ask(route, `sessionId=a&with=${Array.from({ length: kopt.compareMax }, (_, i) => `s${i}`).join(',')}`)
  assert.equal(r.status, 400)
  assert.match(r.json.error, new RegExp(`at most ${kopt.compareMax}`))
  r = await ask(route, 'sessionId=a&with=b%20c')
  assert.equal(r.status, 400)
  r = await ask(route, 'with=b')
  assert.equal(r.status, 400)
  // The core refuses the same bounds.
  assert.throws(() => kopt.compare([{ id: 'a', error: 'x' }]), (e) => e instanceof kopt.KoptError && e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.compare('a,b'), (e) => e instanceof kopt.KoptError && e.code === 'KOPT_BAD_ARGUMENT' && /must be an array/.test(e.message))
})
