// The session store behind the routes (lib/store.mjs createStore): catch-up and live feeding into
// one kopt.Session per session, unreadable events skipped and counted, past sessions from the
// host's persistence with a reason when their log cannot be read.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { kopt } from '../addon/addon.mjs'
import { createStore } from '../../lib/store.mjs'
import { loopJson, resolveConfig } from '../../lib/config.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const { config } = resolveConfig({}, kopt.loopRules)
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
  const st = store.getLive('s')
  assert.equal(st.unreadable, 1)
  assert.equal(st.fed, session.events.length)
  for (const e of events.slice(40)) {
    const ev = { ...e, seq: session.events.length }
    session.events.push(ev)
    store.onEvent(session, ev, 'kernel-opt')
  }
  const whole = new kopt.Session('s')
  whole.feed(JSON.stringify(session.events.filter(e => e.data?.callId !== 'deep')))
  whole.reviseWith('{}')
  st.reviseWith('{}')
  assert.equal(st.body().toString(), whole.body().toString())
  assert.equal(st.updatedAt, session.events.at(-1).time)
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
  assert.equal(view.reader, 'host')
  // What the compare route reads without waiting: the past Session already read, nothing for the others.
  assert.deepEqual(store.held('old'), { session: view.session, live: false, reader: 'host' })
  assert.equal(store.held('gone'), undefined)
  assert.equal(store.held('never-asked'), undefined)
  assert.ok(view.session.completedEvals > 0)
})

test('a request on a caught-up live session does not read session.events (the host copies the whole log for it)', () => {
  const log = events.slice(0, 30)
  let reads = 0
  const session = { id: 'q', header: { agentPreset: 'kernel-opt' }, get seq () { return log.length }, get events () { reads++; return [...log] } }
  const store = createStore(kopt, config, { sessions: () => new Map([['q', session]]), persistence: () => undefined })
  store.getLive('q')
  assert.equal(reads, 1)
  for (let i = 0; i < 5; i++) store.getLive('q')
  assert.equal(reads, 1)
  log.push({ ...events[30], seq: 30 })
  store.getLive('q')
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
  assert.ok(view.session.completedEvals > 0)
  // Past the re-read interval the log is read again; until then the previous projection answers.
  store.past.get('old').at -= 600_000
  const again = await store.getView('old', { wait: false })
  assert.equal(reads, 2)
  assert.equal(again.session, view.session)
  assert.equal((await store.getView('old', { wait: false })).session, view.session)
  release()
  await new Promise((resolve) => setImmediate(resolve))
  const fresh = await store.getView('old', { wait: false })
  assert.notEqual(fresh.session, view.session)
  assert.equal(fresh.session.completedEvals, view.session.completedEvals)
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
    reference.reviseWith('{}')
    const view = await store.getView('old')
    view.session.reviseWith('{}')
    assert.equal(view.session.body().toString(), reference.body().toString(), 'the same body as feeding the events')
    assert.equal(view.session.updatedAt, events[49].time)
    assert.equal(await store.getView('gone'), undefined)
    assert.deepEqual(await store.getView('dup'), { error: 'duplicate JSONL session id "dup" appears in multiple project directories' })
    assert.match((await store.getView('bad')).error, /zstd/)
    // Unchanged file: the same projection, however often it is asked.
    store.past.get('old').checkedAt -= 10_000
    assert.equal((await store.getView('old', { wait: false })).session, view.session)
    // The log grew (another process continued it): read again; the old projection answers meanwhile.
    fs.appendFileSync(file, events.slice(50).map((e) => JSON.stringify(e)).join('\n') + '\n')
    store.past.get('old').checkedAt -= 10_000
    const during = await store.getView('old', { wait: false })
    assert.ok(during.session === view.session || during.session.completedEvals > view.session.completedEvals)
    const after = await store.getView('old')
    assert.ok(after.session.completedEvals > view.session.completedEvals, 'the grown log is projected')
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
  assert.equal((await store.getView('a')).session, a.session, 'a kept its projection')
  // Its body assembled, a session holds more: measured again, it pushes the others out.
  const grown = store.past.get('c')
  const c = (await grown.promise).session
  c.reviseWith('{}')
  c.body()
  assert.ok(c.memoryBytes > grown.bytes)
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
  const st = store.peek('r')
  assert.ok(store.catchingUp('r'), 'a paced catch-up')
  assert.ok(st.fed < long.length)
  assert.deepEqual(await store.getView('r', { wait: false }), { loading: true })
  assert.equal(store.held('r'), undefined, 'a live session still catching up is not held whole')
  // An event that arrives meanwhile is taken when the catch-up ends.
  const more = { ...events[3], seq: long.length, time: 99999 }
  long.push(more)
  store.onEvent(session, more, 'kernel-opt')
  // /control waits for it without finishing it here.
  const view = await store.getView('r')
  assert.equal(view.live, true)
  assert.equal(view.session, st)
  assert.deepEqual(store.held('r'), { session: st, live: true })
  assert.equal(store.catchingUp('r'), false)
  assert.equal(st.fed, long.length)
  assert.deepEqual(caught, ['r'])
  const whole = new kopt.Session('r')
  whole.feed(JSON.stringify(long))
  whole.reviseWith('{}')
  st.reviseWith('{}')
  assert.equal(st.body().toString(), whole.body().toString())
})

test('a caller that needs the whole projection now finishes a paced catch-up at once; a dropped session stops it', () => {
  const long = []
  while (long.length < 5 * 2048) for (const e of events) long.push({ ...e, seq: long.length, time: 1000 + long.length })
  const session = { id: 'r', header: { agentPreset: 'kernel-opt' }, events: long }
  const sessions = new Map([['r', session]])
  const store = createStore(kopt, config, { sessions: () => sessions, persistence: () => undefined })
  store.onEvent(session, long[0], 'kernel-opt')
  assert.ok(store.catchingUp('r'))
  const st = store.getLive('r')
  assert.equal(store.catchingUp('r'), false)
  assert.equal(st.fed, long.length)
  // Dropped while catching up: the job stops and nothing is kept.
  const other = { id: 'q', header: { agentPreset: 'kernel-opt' }, events: long.map(e => ({ ...e })) }
  sessions.set('q', other)
  store.onEvent(other, other.events[0], 'kernel-opt')
  assert.ok(store.catchingUp('q'))
  store.forget('q')
  assert.equal(store.catchingUp('q'), false)
  assert.equal(store.peek('q'), undefined)
})

test('a past session armed from the panel hands its loop to the live session when it resumes', async () => {
  const persistence = { async inspect () { return { meta: {}, events: events.slice(0, 10) } } }
  const sessions = new Map()
  const store = createStore(kopt, config, { sessions: () => sessions, persistence: () => persistence, loopJson: () => loopJson(config, true) })
  const view = await store.getView('p')
  assert.equal(view.live, false)
  const reply = view.session.applyControl(JSON.stringify({ action: 'loop-arm', budget: 3 }), 'en')
  assert.equal(reply.status, 200)
  sessions.set('p', { id: 'p', header: { agentPreset: 'kernel-opt' }, events: events.slice(0, 12) })
  const live = store.getLive('p')
  assert.equal(live.armed, true)
  assert.equal(JSON.parse(live.control).loop.budget, 3)
  assert.equal(JSON.parse(live.control).loop.defaultBudget, config.loop.defaultBudget)
})

// The host's JSONL log of `list` (a header row, then one event per line, a packed chunk row among
// them as the host writes them), written to a scratch file.
function logFileOf (list, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopt-store-'))
  const file = path.join(dir, name)
  const rows = [JSON.stringify({ type: 'session', version: 0, id: 'f', agentPreset: 'kernel-opt' })]
  list.forEach((e, i) => {
    rows.push(JSON.stringify(e))
    if (i === 3) rows.push(JSON.stringify({ type: 'text-chunks', seq0: 100000000, dt: [1, 2, 3] }))
  })
  fs.writeFileSync(file, rows.join('\n') + '\n')
  return { file, done: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

function longLog (n) {
  const long = []
  while (long.length < n) for (const e of events) long.push({ ...e, seq: long.length, time: 1000 + long.length })
  return long.slice(0, n)
}

test('a live session met with a long log is read from its log file off the thread; the events past the file are fed after', async () => {
  const long = longLog(5 * 2048 + 11)
  // The file lags the session by a few batches (the host writes every 200 ms).
  const { file, done } = logFileOf(long.slice(0, long.length - 300), 'session.jsonl')
  try {
    const session = { id: 'f', header: { agentPreset: 'kernel-opt' }, events: long, seq: long.length }
    const caught = []
    const asked = []
    const persistence = { async findLog (id) { asked.push(id); return file }, async inspect () { throw new Error('not used') } }
    const store = createStore(kopt, config, { sessions: () => new Map([['f', session]]), persistence: () => persistence, caughtUp: (id) => caught.push(id), loopJson: () => loopJson(config, true) })
    store.onEvent(session, long.at(-1), 'kernel-opt')
    const first = store.peek('f')
    assert.ok(store.catchingUp('f'))
    assert.equal(first.fed, 0, 'nothing fed on this thread before the file is read')
    // The panel armed the loop meanwhile: the Session made from the file takes that loop.
    assert.equal(first.applyControl(JSON.stringify({ action: 'loop-arm', budget: 4 }), 'en').status, 200)
    const more = { ...events[5], seq: long.length, time: 99999 }
    long.push(more)
    session.seq = long.length
    store.onEvent(session, more, 'kernel-opt')
    const view = await store.getView('f')
    assert.deepEqual(asked, ['f'])
    assert.equal(view.live, true)
    assert.notEqual(view.session, first, 'the Session read from the file is the live one')
    assert.equal(store.peek('f'), view.session)
    assert.equal(view.session.fed, long.length)
    assert.equal(view.session.armed, true)
    assert.equal(JSON.parse(view.session.control).loop.budget, 4)
    assert.deepEqual(caught, ['f'])
    const whole = new kopt.Session('f')
    whole.feed(JSON.stringify(long))
    whole.reviseWith('{}')
    view.session.reviseWith('{}')
    assert.equal(view.session.body().toString(), whole.body().toString())
    assert.equal(view.session.updatedAt, whole.updatedAt)
  } finally {
    done()
  }
})

test('a log file that is not the session\'s prefix, or cannot be read, gives way to the paced catch-up', async () => {
  const long = longLog(5 * 2048 + 3)
  // Holds events past the session's end: not this session's log as it is now.
  const ahead = logFileOf(longLog(long.length + 50), 'ahead.jsonl')
  try {
    for (const find of [async () => ahead.file, async () => '/nonexistent/kopt/session.jsonl', async () => { throw new Error('persistence down') }]) {
      const session = { id: 'g', header: { agentPreset: 'kernel-opt' }, events: long, seq: long.length }
      const persistence = { findLog: find, async inspect () { throw new Error('not used') } }
      const warn = console.warn
      console.warn = () => {}
      let view
      try {
        const store = createStore(kopt, config, { sessions: () => new Map([['g', session]]), persistence: () => persistence })
        store.onEvent(session, long.at(-1), 'kernel-opt')
        view = await store.getView('g')
      } finally {
        console.warn = warn
      }
      assert.equal(view.live, true)
      assert.equal(view.session.fed, long.length)
      const whole = new kopt.Session('g')
      whole.feed(JSON.stringify(long))
      whole.reviseWith('{}')
      view.session.reviseWith('{}')
      assert.equal(view.session.body().toString(), whole.body().toString())
    }
  } finally {
    ahead.done()
  }
})
