// The push route's parts without a host: RFC 6455 framing (lib/ws.mjs) against the RFC's own
// examples, and the hub (lib/push.mjs) over real loopback TCP with a session stand-in whose answers
// name the revision they start from, so every tab's stream can be checked for gaps and repeats.
// (The real host, Node 22's WebSocket and Chromium: tests/e2e/push-e2e.mjs, tests/browser.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { FrameReader, OP, acceptKey, checkHandshake, frame, frameParts } from '../../lib/ws.mjs'
import { createPushHub } from '../../lib/push.mjs'
import { rawClient as client, maskedFrame } from '../e2e/ws-client.mjs'

const sleep = (ms) => new Promise(r => setTimeout(r, ms))

test('RFC 6455 examples: accept key, unmasked server frames, masked client frames', () => {
  assert.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=') // §1.3
  assert.deepEqual([...frame(OP.TEXT, 'Hello')], [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]) // §5.7
  assert.deepEqual([...frame(OP.BINARY, Buffer.alloc(256)).subarray(0, 4)], [0x82, 0x7e, 0x01, 0x00])
  assert.deepEqual([...frame(OP.BINARY, Buffer.alloc(65536)).subarray(0, 10)], [0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0])
  // A frame around parts: the same bytes, the parts themselves (not copies) after the header.
  for (const n of [5, 300, 70000]) {
    const body = Buffer.alloc(n, 0x61)
    const parts = [body.subarray(0, 1), body.subarray(1, n - 1), body.subarray(n - 1)]
    const { runs, length } = frameParts(OP.TEXT, parts)
    assert.equal(runs.length, 1)
    assert.deepEqual(Buffer.concat(runs[0]), frame(OP.TEXT, body))
    assert.equal(length, frame(OP.TEXT, body).length)
    assert.equal(runs[0][2], parts[1])
  }
  // Longer than one run: fragments (§5.4), text then continuations, FIN on the last only; the
  // payloads join to the body and are views of the parts, not copies.
  const body = Buffer.from('0123456789'.repeat(25))
  const { runs, length } = frameParts(OP.TEXT, [body.subarray(0, 120), body.subarray(120)], 100)
  assert.deepEqual(runs.map(r => r[0][0]), [0x01, 0x00, 0x80])
  assert.deepEqual(Buffer.concat(runs.map(r => Buffer.concat(r.slice(1)))), body)
  assert.equal(length, runs.reduce((n, r) => n + Buffer.concat(r).length, 0))
  assert.equal(runs[1][1].buffer, body.buffer)
  const r = new FrameReader()
  const hello = Buffer.from([0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]) // §5.7 masked "Hello"
  // Byte by byte: a frame split anywhere is still read once.
  const got = []
  for (const b of hello) got.push(...r.push(Buffer.from([b])))
  assert.equal(got.length, 1)
  assert.equal(got[0].data.toString(), 'Hello')
  // Fragmented "Hel" + "lo" with a ping in between (§5.7), masked with a zero key.
  const frag = Buffer.from([0x01, 0x83, 0, 0, 0, 0, 0x48, 0x65, 0x6c, 0x89, 0x80, 0, 0, 0, 0, 0x80, 0x82, 0, 0, 0, 0, 0x6c, 0x6f])
  const msgs = new FrameReader().push(frag)
  assert.deepEqual(msgs.map(m => [m.opcode, m.data.toString()]), [[OP.PING, ''], [OP.TEXT, 'Hello']])
  assert.throws(() => new FrameReader().push(Buffer.from([0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f])), e => e.wsClose === 1002) // unmasked
  assert.throws(() => new FrameReader(100).push(Buffer.from([0x82, 0xfe, 0x01, 0x00])), e => e.wsClose === 1009) // too big
  assert.throws(() => new FrameReader().push(Buffer.from([0x09, 0x80, 0, 0, 0, 0])), e => e.wsClose === 1002) // fragmented ping
  assert.throws(() => new FrameReader().push(Buffer.from([0xc1, 0x80, 0, 0, 0, 0])), e => e.wsClose === 1002) // RSV1
  const base = { method: 'GET', headers: { upgrade: 'websocket', connection: 'keep-alive, Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } }
  assert.equal(checkHandshake(base).accept, 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=')
  assert.equal(checkHandshake({ ...base, headers: { ...base.headers, 'sec-websocket-version': '8' } }).status, 426)
  assert.equal(checkHandshake({ ...base, headers: { ...base.headers, 'sec-websocket-key': 'short' } }).status, 400)
})

// A session stand-in: revision advances with bump(); each answer says which revision it starts from.
function fakeSessions(padBytes = 0) {
  const sessions = new Map()
  const calls = []
  const pad = 'x'.repeat(padBytes)
  return {
    sessions,
    calls,
    source: {
      fence: (req) => /^127\.0\.0\.1:\d+$/.test(req.headers.host) && (req.headers.origin === undefined || req.headers.origin === `http://${req.headers.host}`),
      validId: (id) => /^[a-z0-9-]+$/.test(id),
      open: async (id) => (sessions.has(id) ? { st: sessions.get(id) } : { status: 404, error: 'unknown session' }),
      current: (id, st) => st,
      revise: (id, st) => st.revision,
      payload: (id, st, since) => {
        calls.push([id, since, st.revision])
        // In three parts, as the core gives a full answer (prefix, shared body, tail).
        const text = Buffer.from(JSON.stringify({ kind: 'full', revision: st.revision, since: since ?? null, pad }))
        const a = Math.floor(text.length / 3), b = Math.floor((2 * text.length) / 3)
        return [text.subarray(0, a), text.subarray(a, b), text.subarray(b)]
      },
    },
  }
}

async function withHub(fake, limits, fn) {
  const hub = createPushHub(fake.source, limits)
  const server = createServer((req, res) => { res.writeHead(426); res.end() })
  server.on('upgrade', (req, socket, head) => { hub.upgrade(req, socket, head) })
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  const port = server.address().port
  try {
    await fn(hub, port)
  } finally {
    hub.dispose()
    server.closeAllConnections?.()
    await new Promise(r => server.close(r))
  }
}
const waitUntil = async (what, pred, ms = 5000) => {
  const end = Date.now() + ms
  while (!pred()) { if (Date.now() > end) throw new Error(`timed out: ${what}`); await sleep(5) }
}
// Each message starts where the one before ended: nothing lost, nothing twice.
function assertChain(messages, firstSince) {
  let have = firstSince
  for (const m of messages) {
    assert.equal(m.since, have, `message for revision ${m.revision} starts at ${m.since}, the tab had ${have}`)
    have = m.revision
  }
}

test('subscribe, resume from a revision, two tabs share one serialization per revision, close releases everything', async () => {
  const fake = fakeSessions()
  fake.sessions.set('s1', { revision: 5 })
  await withHub(fake, { minGapMs: 0 }, async (hub, port) => {
    const a = await client(port, 'sessionId=s1')
    const b = await client(port, 'sessionId=s1&since=3')
    assert.equal(a.status, 101)
    assert.equal(b.status, 101)
    await waitUntil('first messages', () => a.messages.length === 1 && b.messages.length === 1)
    assert.deepEqual([a.messages[0].since, a.messages[0].revision], [null, 5])
    assert.deepEqual([b.messages[0].since, b.messages[0].revision], [3, 5])
    fake.calls.length = 0
    for (let r = 6; r <= 25; r++) {
      fake.sessions.get('s1').revision = r
      hub.changed('s1')
      await sleep(2)
    }
    await waitUntil('revision 25 at both', () => a.messages.at(-1).revision === 25 && b.messages.at(-1).revision === 25)
    assertChain(a.messages, null)
    assertChain(b.messages, 3)
    // One serialization per published revision, whatever the number of tabs.
    assert.equal(fake.calls.length, a.messages.length - 1, JSON.stringify(fake.calls))
    // A reconnect after missed revisions resumes exactly where the tab stopped.
    a.socket.destroy()
    fake.sessions.get('s1').revision = 30
    hub.changed('s1')
    await waitUntil('b at 30', () => b.messages.at(-1).revision === 30)
    const a2 = await client(port, 'sessionId=s1&since=25')
    await waitUntil('a2 first', () => a2.messages.length === 1)
    assert.deepEqual([a2.messages[0].since, a2.messages[0].revision], [25, 30])
    assert.equal(hub.snapshot().clients, 2)
    // Ping from the tab: answered; close from the tab: echoed, then the socket ends and is forgotten.
    a2.socket.write(maskedFrame(OP.CLOSE, Buffer.from([0x03, 0xe8])))
    await waitUntil('a2 closed', () => a2.closed)
    assert.equal(a2.closeCode, 1000)
    b.socket.destroy()
    await waitUntil('hub empty', () => hub.snapshot().clients === 0 && hub.rooms.size === 0)
  })
})

// A full answer longer than a run goes out as fragments, one run per turn: a revision published
// meanwhile follows it whole and in order, and the tab's ping is answered between fragments (the tab
// stops reading, so the socket fills and the hub waits for it to drain in the middle of the message).
test('a long message in fragments: a later revision waits for it, a ping is answered meanwhile', async () => {
  const fake = fakeSessions(16 << 20)
  fake.sessions.set('s1', { revision: 1 })
  await withHub(fake, { minGapMs: 0 }, async (hub, port) => {
    const a = await client(port, 'sessionId=s1')
    a.socket.pause()
    await sleep(100)
    a.socket.write(maskedFrame(OP.PING, Buffer.from('hi')))
    fake.sessions.get('s1').revision = 2
    hub.changed('s1')
    await sleep(100)
    a.socket.resume()
    await waitUntil('revision 2', () => a.messages.at(-1)?.revision === 2, 20000)
    assertChain(a.messages, null)
    assert.equal(a.messages.length, 2)
    assert.ok(a.fragments >= 2 * 16, `${a.fragments} fragments for 2 messages of 16 MB`)
    assert.equal(a.pongs, 1)
    assert.ok(a.pongAfterFragments < 16, `the pong came after ${a.pongAfterFragments} fragments: behind the first message`)
    a.socket.destroy()
    await waitUntil('hub empty', () => hub.snapshot().clients === 0)
  })
})

test('fence and handshake refusals answer plain HTTP and open nothing', async () => {
  const fake = fakeSessions()
  fake.sessions.set('s1', { revision: 1 })
  await withHub(fake, {}, async (hub, port) => {
    assert.equal((await client(port, 'sessionId=s1', { Origin: 'http://evil.example' })).status, 403)
    assert.equal((await client(port, 'sessionId=nope')).status, 404)
    assert.equal((await client(port, 'sessionId=s1&since=-4')).status, 400)
    assert.equal((await client(port, 'sessionId=BAD%20ID')).status, 400)
    const s = hub.snapshot()
    assert.equal(s.clients, 0)
    assert.equal(s.refused, 4)
  })
})

test('a tab that never reads: memory stays bounded, it re-syncs from its revision when it reads again, a stalled one is dropped', async () => {
  const fake = fakeSessions(200_000) // ~200 kB per message
  fake.sessions.set('s1', { revision: 1 })
  const limits = { minGapMs: 0, highWater: 256 * 1024, maxQueue: 4, maxQueueBytes: 1 << 20, stalledMs: 4000 }
  await withHub(fake, limits, async (hub, port) => {
    const slow = await client(port, 'sessionId=s1')
    const fast = await client(port, 'sessionId=s1')
    await waitUntil('first', () => slow.messages.length === 1 && fast.messages.length === 1)
    slow.socket.pause() // stops reading: the kernel buffers fill, then the host's
    let maxHeld = 0
    for (let r = 2; r <= 120; r++) {
      fake.sessions.get('s1').revision = r
      hub.changed('s1')
      await sleep(3)
      const s = hub.snapshot()
      maxHeld = Math.max(maxHeld, s.queuedBytes + s.socketBytes)
    }
    await waitUntil('fast at 120', () => fast.messages.at(-1)?.revision === 120)
    const s = hub.snapshot()
    assert.ok(s.overflows >= 1, JSON.stringify(s))
    // Bounded: one socket's high-water mark + one frame, plus the queue's cap, per slow tab.
    assert.ok(maxHeld <= limits.highWater + 210_000 + limits.maxQueueBytes, `held ${maxHeld}`)
    assertChain(fast.messages, null)
    slow.socket.resume()
    await waitUntil('slow caught up', () => slow.messages.at(-1)?.revision === 120)
    assertChain(slow.messages, null)
    assert.ok(slow.messages.length < fast.messages.length, 'the slow tab skipped revisions by re-syncing')
    assert.ok(hub.snapshot().catchUps >= 1)
    // Stalled for good: dropped after stalledMs, its buffers released.
    slow.socket.pause()
    const before = hub.snapshot().dropped
    for (let r = 121; r <= 200; r++) {
      fake.sessions.get('s1').revision = r
      hub.changed('s1')
      await sleep(3)
    }
    await waitUntil('stalled tab dropped', () => hub.snapshot().dropped > before && hub.snapshot().clients === 1, 15000)
    slow.socket.destroy()
    fast.socket.destroy()
    await waitUntil('hub empty', () => hub.snapshot().clients === 0)
  })
})
