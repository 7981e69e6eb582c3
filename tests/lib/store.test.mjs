// The session store behind the routes (lib/index.mjs createStore): catch-up and live feeding into
// one kopt.Session per session, unreadable events skipped and counted, past sessions from the
// host's persistence with a reason when their log cannot be read.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { createStore } from '../../lib/index.mjs'
import { resolveConfig } from '../../lib/config.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const kopt = createRequire(import.meta.url)(process.env.KOPT_ADDON || path.join(root, 'build/kopt.node'))
const { config } = resolveConfig({})
const events = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures/vectors/z03-large-60-evals.events.json'), 'utf8'))
  .map((e, i) => ({ ...e, seq: i, time: 1000 + i }))

function deep(n) {
  let v = 1
  for (let i = 0; i < n; i++) v = [v]
  return v
}

test('a live session: catch-up and later events give the body of the whole log; a deep event is skipped and counted', () => {
  const session = { id: 's', header: { agentPreset: 'kernel-opt' }, events: events.slice(0, 40) }
  session.events.splice(5, 0, { type: 'tool/call', seq: 5, data: { callId: 'deep', name: 'kernel_evaluate', arguments: deep(5000) } })
  session.events.forEach((e, i) => { e.seq = i })
  const store = createStore(kopt, config, { sessions: () => new Map([['s', session]]), persistence: () => undefined })
  const st = store.getProjector('s')
  assert.equal(st.unreadable, 1)
  for (const e of events.slice(40)) {
    const ev = { ...e, seq: session.events.length }
    session.events.push(ev)
    store.onEvent(session, ev, 'kernel-opt')
  }
  const whole = new kopt.Session('s')
  whole.feed(JSON.stringify(session.events.filter(e => e.data?.callId !== 'deep')))
  whole.revise('{}')
  st.s.revise('{}')
  assert.equal(st.s.body().toString(), whole.body().toString())
  assert.equal(st.s.updatedAt, session.events.at(-1).time)
})

test('past sessions: unknown → undefined, an unreadable log → its reason, a readable one → projected', async () => {
  const persistence = {
    async inspect (id) {
      if (id === 'gone') throw new Error('session "gone" not found')
      if (id === 'bad') throw new Error('session "bad" contains malformed pre-react-loop turn/end at seq 7')
      return { meta: {}, events }
    },
  }
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence })
  assert.equal(await store.getView('gone'), undefined)
  assert.deepEqual(await store.getView('bad'), { error: 'session "bad" contains malformed pre-react-loop turn/end at seq 7' })
  const view = await store.getView('old')
  assert.equal(view.live, false)
  assert.ok(view.st.s.completedEvals > 0)
})

test('a request on a caught-up live session does not read session.events (the host copies the whole log for it)', () => {
  const log = events.slice(0, 30)
  let reads = 0
  const session = { id: 'q', header: { agentPreset: 'kernel-opt' }, get seq () { return log.length }, get events () { reads++; return [...log] } }
  const store = createStore(kopt, config, { sessions: () => new Map([['q', session]]), persistence: () => undefined })
  store.getProjector('q')
  assert.equal(reads, 1)
  for (let i = 0; i < 5; i++) store.getProjector('q')
  assert.equal(reads, 1)
  log.push({ ...events[30], seq: 30 })
  store.getProjector('q')
  assert.equal(reads, 2, 'a grown log is caught up')
})

test('past sessions without waiting: loading at once, then the projection; a re-read serves the old one meanwhile', async () => {
  let release
  let reads = 0
  const persistence = {
    async inspect (id) {
      reads++
      await new Promise((resolve) => { release = resolve })
      if (id === 'bad') throw new Error('unreadable: bad zstd frame')
      return { meta: {}, events }
    },
  }
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence })
  assert.deepEqual(await store.getView('old', { wait: false }), { loading: true })
  assert.deepEqual(await store.getView('old', { wait: false }), { loading: true })
  assert.equal(reads, 1)
  release()
  await new Promise((resolve) => setImmediate(resolve))
  const view = await store.getView('old', { wait: false })
  assert.equal(view.live, false)
  assert.ok(view.st.s.completedEvals > 0)
  // Past the re-read interval the log is read again; until then the previous projection answers.
  store.past.get('old').at -= 600_000
  const again = await store.getView('old', { wait: false })
  assert.equal(reads, 2)
  assert.equal(again.st, view.st)
  assert.equal((await store.getView('old', { wait: false })).st, view.st)
  release()
  await new Promise((resolve) => setImmediate(resolve))
  const fresh = await store.getView('old', { wait: false })
  assert.notEqual(fresh.st, view.st)
  assert.equal(fresh.st.s.completedEvals, view.st.s.completedEvals)
  // An unreadable log: loading, then its reason (and it is read again when asked again).
  assert.deepEqual(await store.getView('bad', { wait: false }), { loading: true })
  release()
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(await store.getView('bad', { wait: false }), { error: 'unreadable: bad zstd frame' })
})

test('past sessions: an unknown id answers at once (no 202 first) and keeps no cache slot', async () => {
  let reads = 0
  const persistence = {
    async inspect (id) {
      reads++
      throw new Error(`session "${id}" not found`)
    },
  }
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence })
  assert.equal(await store.getView('nope', { wait: false }), undefined)
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(store.past.size, 0, 'an unknown id does not push real sessions out of the cache')
  assert.equal(await store.getView('nope', { wait: false }), undefined)
  assert.equal(reads, 2, 'asked again, read again')
})

test('past sessions from the log file: read and projected off this thread, re-read only when the file changed', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopt-store-'))
  try {
    const file = path.join(dir, 'session.jsonl')
    const header = JSON.stringify({ type: 'session', version: 0, id: 'old', cwd: dir })
    fs.writeFileSync(file, [header, ...events.slice(0, 50).map((e) => JSON.stringify(e))].join('\n') + '\n')
    const garbage = path.join(dir, 'garbage.jsonl.zstd')
    fs.writeFileSync(garbage, Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(64, 0xee)]))
    const persistence = {
      async findLog (id) {
        if (id === 'dup') throw new Error('duplicate JSONL session id "dup" appears in multiple project directories')
        return { old: file, bad: garbage }[id]
      },
      async inspect () { throw new Error('inspect must not be used when the log file is known') },
    }
    const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence })
    const reference = new kopt.Session('old')
    reference.feed(JSON.stringify(events.slice(0, 50)))
    reference.revise('{}')
    const view = await store.getView('old')
    view.st.s.revise('{}')
    assert.equal(view.st.s.body().toString(), reference.body().toString(), 'the same body as feeding the events')
    assert.equal(view.st.s.updatedAt, events[49].time)
    assert.equal(await store.getView('gone'), undefined)
    assert.deepEqual(await store.getView('dup'), { error: 'duplicate JSONL session id "dup" appears in multiple project directories' })
    assert.match((await store.getView('bad')).error, /zstd/)
    // Unchanged file: the same projection, however often it is asked.
    store.past.get('old').checkedAt -= 10_000
    assert.equal((await store.getView('old', { wait: false })).st, view.st)
    // The log grew (another process continued it): read again; the old projection answers meanwhile.
    fs.appendFileSync(file, events.slice(50).map((e) => JSON.stringify(e)).join('\n') + '\n')
    store.past.get('old').checkedAt -= 10_000
    const during = await store.getView('old', { wait: false })
    assert.ok(during.st === view.st || during.st.s.completedEvals > view.st.s.completedEvals)
    const after = await store.getView('old')
    assert.ok(after.st.s.completedEvals > view.st.s.completedEvals, 'the grown log is projected')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('past sessions are bounded by the bytes they hold: the least recently asked for goes first, the last asked for stays', async () => {
  const persistence = { async inspect () { return { meta: {}, events } } }
  // Room for about two of these sessions (as read: no body assembled yet).
  const one = new kopt.Session('x')
  one.feed(JSON.stringify(events))
  const small = new kopt.Session('y')
  small.feed(JSON.stringify(events.slice(0, 5)))
  assert.ok(one.memoryBytes > small.memoryBytes && small.memoryBytes > 0, `${one.memoryBytes} > ${small.memoryBytes}`)
  const store = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence, pastCacheBytes: Math.round(one.memoryBytes * 2.5) })
  const a = await store.getView('a')
  await store.getView('b')
  assert.deepEqual([...store.past.keys()], ['a', 'b'])
  await store.getView('a') // a is now the most recently asked for
  await store.getView('c')
  assert.deepEqual([...store.past.keys()], ['a', 'c'], 'b, least recently asked for, was dropped')
  assert.equal((await store.getView('a')).st, a.st, 'a kept its projection')
  // Its body assembled, a session holds more: measured again, it pushes the others out.
  const grown = store.past.get('c')
  const c = await grown.promise
  c.s.revise('{}')
  c.s.body()
  assert.ok(c.s.memoryBytes > grown.bytes)
  // Whatever its size, the session asked for last is kept.
  const tiny = createStore(kopt, config, { sessions: () => new Map(), persistence: () => persistence, pastCacheBytes: 1 })
  await tiny.getView('a')
  await tiny.getView('b')
  assert.deepEqual([...tiny.past.keys()], ['b'])
})

test('a live session met with a long log is caught up a slice per turn: loading meanwhile, then the same body as at once', async () => {
  // A log longer than the paced backlog: the first event seen (a past session resumed) must not
  // feed it all on this thread.
  const long = []
  while (long.length < 5 * 2048 + 7) for (const e of events) long.push({ ...e, seq: long.length, time: 1000 + long.length })
  const session = { id: 'r', header: { agentPreset: 'kernel-opt' }, events: long }
  const caught = []
  const store = createStore(kopt, config, { sessions: () => new Map([['r', session]]), persistence: () => undefined, caughtUp: (id) => caught.push(id) })
  store.onEvent(session, long.at(-1), 'kernel-opt')
  const st = store.live.get('r')
  assert.ok(st.job !== undefined, 'a paced catch-up')
  assert.ok(st.next < long.length)
  assert.deepEqual(await store.getView('r', { wait: false }), { loading: true })
  // An event that arrives meanwhile is taken when the catch-up ends.
  const more = { ...events[3], seq: long.length, time: 99999 }
  long.push(more)
  store.onEvent(session, more, 'kernel-opt')
  // /control waits for it without finishing it here.
  const view = await store.getView('r')
  assert.equal(view.live, true)
  assert.equal(st.job, undefined)
  assert.equal(st.next, long.length)
  assert.deepEqual(caught, ['r'])
  const whole = new kopt.Session('r')
  whole.feed(JSON.stringify(long))
  whole.revise('{}')
  st.s.revise('{}')
  assert.equal(st.s.body().toString(), whole.body().toString())
})

test('a caller that needs the whole projection now finishes a paced catch-up at once; a dropped session stops it', () => {
  const long = []
  while (long.length < 5 * 2048) for (const e of events) long.push({ ...e, seq: long.length, time: 1000 + long.length })
  const session = { id: 'r', header: { agentPreset: 'kernel-opt' }, events: long }
  const sessions = new Map([['r', session]])
  const store = createStore(kopt, config, { sessions: () => sessions, persistence: () => undefined })
  store.onEvent(session, long[0], 'kernel-opt')
  assert.ok(store.live.get('r').job !== undefined)
  const st = store.getProjector('r')
  assert.equal(st.job, undefined)
  assert.equal(st.next, long.length)
  // Dropped while catching up: the job stops and nothing is kept.
  const other = { id: 'q', header: { agentPreset: 'kernel-opt' }, events: long.map(e => ({ ...e })) }
  sessions.set('q', other)
  store.onEvent(other, other.events[0], 'kernel-opt')
  const q = store.live.get('q')
  assert.ok(q.job !== undefined)
  store.forget('q')
  assert.equal(q.job, undefined)
  assert.equal(store.live.has('q'), false)
})
