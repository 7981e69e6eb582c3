// Live push of a session's /series revisions to its tabs over one WebSocket each (issue 18).
//
//   ws://<host>/plugins/kernel-opt/push?sessionId=<id>[&since=<revision>]
//
// A tab subscribes to one session and says which revision it already has (`since`, the resume
// handshake). It first gets what changed since then (or the whole body), then one message per new
// revision. Every message is the session's own answer for "since revision R" (lib/index.mjs builds
// it from the C++ kopt.Session); each new revision is framed once and the same Buffer is written to
// every tab of the session. What triggers a publish: the host's `session/event` (lib/index.mjs calls
// changed(id)), coalesced per session, never a poll.
//
// Memory per tab is bounded: a socket takes frames while its buffer is under `highWater`; beyond
// that up to `maxQueue` frames (references to the shared Buffers, `maxQueueBytes` at most) wait;
// past that the queue is dropped and the tab is marked behind: when its socket drains it gets one
// catch-up message from the revision it really received (so it re-syncs from its revision, never
// a lost or doubled point). A tab that stays behind for `stalledMs`, or answers no ping for
// 2 × `pingMs`, is disconnected.
import { FrameReader, OP, acceptResponse, checkHandshake, closeFrame, frame, frameParts, refuse } from './ws.mjs'
import { writeRuns } from './paced.mjs'

export const PUSH_LIMITS = Object.freeze({
  highWater: 1 << 20, // bytes in a socket's own buffer before frames wait in its queue
  maxQueue: 64, // frames waiting per tab beyond that
  maxQueueBytes: 8 << 20, // bytes those frames hold at most (shared with other tabs, counted per tab)
  stalledMs: 30_000, // behind without draining this long: disconnected
  pingMs: 20_000, // keepalive; no frame from the tab for 2 pings: disconnected
  minGapMs: 20, // one publish per session per gap at most (a burst of events is one revision)
  maxClients: 512,
  maxFrameCache: 4, // catch-up frames kept per session for the current revision
})

/**
 * @param source {fence(req) -> boolean, validId(id) -> boolean, open(id) -> Promise<{st} | {status, error}>,
 *   current(id, st) -> st (the live state when there is one, else st), revise(id, st) -> revision,
 *   payload(id, st, since) -> [Buffer] (the answer for `since`, at the revision revise() returned, in
 *   parts written in order and never copied)}
 */
export function createPushHub(source, limits = {}) {
  const L = { ...PUSH_LIMITS, ...limits }
  const rooms = new Map() // sessionId -> {id, st, peers, revision, timer, lastAt, frames}
  const stats = { opened: 0, closed: 0, refused: 0, published: 0, catchUps: 0, overflows: 0, dropped: 0 }
  let clients = 0
  let disposed = false

  const timer = setInterval(() => sweep(), Math.max(1000, Math.min(L.pingMs, L.stalledMs) / 2))
  timer.unref?.()

  // The answer for `since` at the room's current revision, framed once (frameParts) and shared
  // while it lasts.
  function framed(room, since) {
    const key = since === undefined ? 'full' : String(since)
    let f = room.frames.get(key)
    if (f === undefined) {
      f = frameParts(OP.TEXT, source.payload(room.id, room.st, since))
      if (room.frames.size >= L.maxFrameCache) room.frames.delete(room.frames.keys().next().value)
      room.frames.set(key, f)
    }
    return f
  }

  function publishNow(room) {
    if (room.timer !== null) { clearTimeout(room.timer); room.timer = null }
    room.st = source.current(room.id, room.st)
    const revision = source.revise(room.id, room.st)
    if (revision === room.revision) return
    const base = room.revision
    room.frames.clear()
    room.revision = revision
    room.lastAt = Date.now()
    const f = framed(room, base)
    stats.published++
    for (const peer of room.peers) deliver(peer, f, base, revision)
    // The host's part of the latency: first event of the revision -> frame handed to the sockets
    // (the room's last 512 publishes; the benchmark prints them beside its end-to-end figures).
    if (room.changedAt > 0) {
      if (room.publishMs.length >= 512) room.publishMs.shift()
      room.publishMs.push(performance.now() - room.changedAt)
      room.changedAt = 0
    }
  }

  function deliver(peer, f, base, revision) {
    if (peer.behind) return // it catches up from its own revision when its socket drains
    if (peer.rev !== base) { markBehind(peer); return }
    const s = peer.socket
    if (peer.queue.length === 0 && !peer.sending && s.writableLength < L.highWater) {
      write(peer, f, revision)
    } else if (peer.queue.length < L.maxQueue && peer.queuedBytes + f.length <= L.maxQueueBytes) {
      peer.queue.push({ f, revision })
      peer.queuedBytes += f.length
      peer.rev = revision
    } else {
      stats.overflows++
      markBehind(peer)
    }
  }

  function write(peer, f, revision) {
    send(peer, f)
    peer.rev = peer.sentRev = revision
  }

  // A message's runs, one writev per event-loop turn (lib/paced.mjs): a delta is one run, written
  // at once; while a long one is under way no other message goes to this socket (pings and pongs
  // may: they fall between its fragments), and when it is done the queue moves on.
  function send(peer, f) {
    let h = null
    h = writeRuns(peer.socket, f.runs, (error, later) => {
      if (!later) return // written at once: the caller goes on
      if (peer.sending === h) peer.sending = null
      if (!error) drain(peer)
    })
    peer.sending = h.finished ? null : h
  }

  function markBehind(peer) {
    peer.queue = []
    peer.queuedBytes = 0
    peer.rev = peer.sentRev
    if (!peer.behind) { peer.behind = true; peer.behindSince = Date.now() }
    setImmediate(() => drain(peer))
  }

  // The socket can take more: queued frames first, then a catch-up when the tab fell behind.
  function drain(peer) {
    const s = peer.socket
    if (s.destroyed || !peer.open) return
    while (peer.queue.length > 0 && !peer.sending && s.writableLength < L.highWater) {
      const { f, revision } = peer.queue.shift()
      peer.queuedBytes -= f.length
      send(peer, f)
      peer.sentRev = revision
    }
    if (!peer.behind || peer.sending || peer.queue.length > 0 || s.writableLength >= L.highWater) return
    const room = peer.room
    publishNow(room) // the catch-up is at the revision every other tab has
    if (peer.sentRev !== room.revision || peer.needsFirst) {
      write(peer, framed(room, peer.needsFirst ? peer.since : peer.sentRev), room.revision)
      if (!peer.needsFirst) stats.catchUps++
      peer.needsFirst = false
    }
    peer.behind = false
  }

  function sweep() {
    const now = Date.now()
    for (const room of rooms.values()) {
      for (const peer of room.peers) {
        if (peer.behind && now - peer.behindSince > L.stalledMs) { stats.dropped++; peer.socket.destroy(); continue }
        if (now - peer.lastSeen > 2 * L.pingMs) { stats.dropped++; peer.socket.destroy(); continue }
        if (now - peer.lastPing >= L.pingMs && peer.socket.writableLength < L.highWater) {
          peer.lastPing = now
          peer.socket.write(frame(OP.PING))
        }
      }
    }
  }

  function closePeer(peer, code, reason) {
    if (!peer.open) return
    peer.open = false
    // No data frame may follow a close: a long message under way stops at a fragment's end.
    peer.sending?.abort()
    try {
      peer.socket.end(closeFrame(code, reason))
    } catch {
      peer.socket.destroy()
    }
    setTimeout(() => peer.socket.destroy(), 2000).unref?.()
  }

  function onFrames(peer, chunk) {
    peer.lastSeen = Date.now()
    let msgs
    try {
      msgs = peer.reader.push(chunk)
    } catch (error) {
      closePeer(peer, error.wsClose ?? 1002, error.message)
      return
    }
    for (const m of msgs) {
      if (m.opcode === OP.PING) { if (peer.open) peer.socket.write(frame(OP.PONG, m.data)) } else if (m.opcode === OP.CLOSE) {
        const code = m.data.length >= 2 ? m.data.readUInt16BE(0) : 1000
        closePeer(peer, code === 1005 || code < 1000 || code >= 5000 ? 1000 : code, '')
      }
      // Pongs and data messages only count as signs of life: the subscription is in the URL.
    }
  }

  function remove(peer) {
    const room = peer.room
    if (!room.peers.delete(peer)) return
    clients--
    stats.closed++
    peer.queue = []
    peer.queuedBytes = 0
    peer.sending?.abort()
    if (room.peers.size === 0) {
      if (room.timer !== null) clearTimeout(room.timer)
      room.frames.clear()
      rooms.delete(room.id)
    }
  }

  /** The host's upgrade handler for the push path. */
  async function upgrade(req, socket, head) {
    const no = (status, error) => { stats.refused++; refuse(socket, status, error) }
    if (disposed) return no(503, 'shutting down')
    if (!source.fence(req)) return no(403, 'forbidden: untrusted Host or Origin')
    const hs = checkHandshake(req)
    if (!hs.ok) return no(hs.status, hs.error)
    const url = new URL(req.url ?? '/', 'http://kernel-opt.invalid')
    const id = url.searchParams.get('sessionId')
    if (id === null || !source.validId(id)) return no(400, 'sessionId required')
    const sinceText = url.searchParams.get('since')
    let since
    if (sinceText !== null && sinceText !== '') {
      since = /^\d{1,16}$/.test(sinceText) ? Number(sinceText) : NaN
      if (!Number.isSafeInteger(since)) return no(400, 'since must be a revision number')
    }
    if (clients >= L.maxClients) return no(503, 'too many push clients')
    clients++ // held while the session opens, so a flood cannot pass the cap
    let opened
    try {
      opened = await source.open(id)
    } catch (error) {
      opened = { status: 500, error: error instanceof Error ? error.message : String(error) }
    }
    if (opened?.st === undefined || socket.destroyed || disposed) {
      clients--
      if (socket.destroyed) return
      return no(disposed ? 503 : opened?.status ?? 404, opened?.error ?? 'unknown session')
    }
    socket.setNoDelay?.(true)
    socket.write(acceptResponse(hs.accept))
    let room = rooms.get(id)
    if (room === undefined) {
      room = { id, st: opened.st, peers: new Set(), revision: undefined, timer: null, lastAt: 0, changedAt: 0, publishMs: [], frames: new Map() }
      rooms.set(id, room)
    }
    const now = Date.now()
    const peer = {
      socket, room, since, rev: undefined, sentRev: undefined, queue: [], queuedBytes: 0, sending: null, behind: false, behindSince: 0,
      needsFirst: true, open: true, lastSeen: now, lastPing: now, reader: new FrameReader(4096),
    }
    room.peers.add(peer)
    stats.opened++
    socket.on('data', (chunk) => onFrames(peer, chunk))
    socket.on('drain', () => drain(peer))
    socket.on('close', () => { peer.open = false; remove(peer) })
    socket.on('error', () => socket.destroy())
    socket.on('end', () => socket.end())
    if (head?.length) onFrames(peer, head)
    // The first message: what changed since the tab's revision (or everything), sent through the
    // same path as a catch-up so it is ordered before any later revision.
    peer.behind = true
    peer.behindSince = now
    drain(peer)
  }

  /** A session got events (or its control changed): publish a new revision to its tabs soon. */
  function changed(id) {
    const room = rooms.get(id)
    if (room === undefined) return
    if (room.changedAt === 0) room.changedAt = performance.now()
    if (room.timer !== null) return
    const wait = Math.max(0, room.lastAt + L.minGapMs - Date.now())
    room.timer = setTimeout(() => {
      room.timer = null
      try {
        publishNow(room)
      } catch (error) {
        console.warn(`[kernel-opt] push publish failed for ${id}: ${error?.message ?? error}`)
      }
    }, wait)
  }

  /** Counters and the bytes held for tabs right now (tests and the benchmark read them). */
  function snapshot() {
    let queuedBytes = 0
    let socketBytes = 0
    let behind = 0
    for (const room of rooms.values()) {
      for (const peer of room.peers) {
        queuedBytes += peer.queuedBytes + (peer.sending?.left() ?? 0) // a long message's runs not yet handed over
        socketBytes += peer.socket.writableLength
        if (peer.behind) behind++
      }
    }
    const sorted = [...rooms.values()].flatMap(r => r.publishMs).sort((a, b) => a - b)
    const at = (p) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 100) / 100 : null)
    return {
      clients, sessions: rooms.size, queuedBytes, socketBytes, behind, ...stats,
      publishMs: { n: sorted.length, p50: at(0.5), p95: at(0.95), max: at(1) }, limits: L,
    }
  }

  function dispose() {
    disposed = true
    clearInterval(timer)
    for (const room of rooms.values()) {
      if (room.timer !== null) clearTimeout(room.timer)
      for (const peer of room.peers) closePeer(peer, 1001, 'plugin unloaded')
    }
  }

  return { upgrade, changed, snapshot, dispose, rooms }
}
