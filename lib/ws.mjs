// The server side of RFC 6455 (WebSocket), as much as the push route needs: the opening handshake,
// unmasked server frames, and a reader for the masked client frames (control frames, a small text
// message). Our own code rather than a dependency: the plugin ships no runtime npm packages, the
// route only sends, and the push hub needs the frames as shared Buffers to send one serialization
// to every tab.
import { createHash } from 'node:crypto'
import { TURN_BYTES, runsOf } from './paced.mjs'

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11' // RFC 6455 §1.3

export const OP = { CONT: 0x0, TEXT: 0x1, BINARY: 0x2, CLOSE: 0x8, PING: 0x9, PONG: 0xa }

/** Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (RFC 6455 §4.2.2). */
export function acceptKey(key) {
  return createHash('sha1').update(key + GUID).digest('base64')
}

const tokens = (v) => (typeof v === 'string' ? v.toLowerCase().split(',').map(s => s.trim()) : [])

/**
 * Checks an upgrade request (RFC 6455 §4.2.1). Returns {ok: true, accept} or {ok: false, status,
 * error} (the HTTP answer to give before closing the socket).
 */
export function checkHandshake(req) {
  const h = req.headers ?? {}
  if (req.method !== 'GET') return { ok: false, status: 405, error: 'GET only' }
  if (!tokens(h.upgrade).includes('websocket') || !tokens(h.connection).includes('upgrade')) {
    return { ok: false, status: 426, error: 'websocket upgrade required' }
  }
  if (h['sec-websocket-version'] !== '13') return { ok: false, status: 426, error: 'Sec-WebSocket-Version 13 required' }
  const key = h['sec-websocket-key']
  if (typeof key !== 'string' || !/^[A-Za-z0-9+/]{22}==$/.test(key.trim())) {
    return { ok: false, status: 400, error: 'bad Sec-WebSocket-Key' }
  }
  return { ok: true, accept: acceptKey(key.trim()) }
}

const REASONS = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 422: 'Unprocessable Entity', 426: 'Upgrade Required', 503: 'Service Unavailable' }

/** A plain HTTP refusal on an upgrade socket (no upgrade happened), then the socket ends. */
export function refuse(socket, status, error) {
  const body = JSON.stringify({ error })
  const lines = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`, 'Connection: close', 'Content-Type: application/json; charset=utf-8',
    'Cache-Control: no-store', `Content-Length: ${Buffer.byteLength(body)}`,
    ...(status === 426 ? ['Upgrade: websocket', 'Sec-WebSocket-Version: 13'] : []),
  ]
  try {
    socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`)
  } catch {
    socket.destroy()
  }
}

/** The 101 answer that completes the handshake. */
export function acceptResponse(accept) {
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`
}

/** The header of one unmasked server frame whose payload is n bytes (FIN set unless `more`). */
function frameHeader(opcode, n, more = false) {
  const out = Buffer.allocUnsafe(n < 126 ? 2 : n < 65536 ? 4 : 10)
  out[0] = (more ? 0 : 0x80) | opcode
  if (n < 126) out[1] = n
  else if (n < 65536) { out[1] = 126; out.writeUInt16BE(n, 2) }
  else { out[1] = 127; out.writeBigUInt64BE(BigInt(n), 2) }
  return out
}

/** One unmasked server frame (FIN set) around payload, as one Buffer. */
export function frame(opcode, payload = Buffer.alloc(0)) {
  const data = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload
  return Buffer.concat([frameHeader(opcode, data.length), data])
}

/**
 * One message around a payload given as Buffers in order, as runs to write one per event-loop turn
 * (lib/paced.mjs): {runs, length}. A payload up to `max` bytes is one frame, one run; a longer one
 * (a full answer at 1M events: 33 MB) is fragmented (RFC 6455 §5.4), one fragment per run, so a
 * ping or pong may go between runs. The parts are not copied (the body stays shared with the
 * session; copying it twice held the host's event loop 0.17–0.25 s at 1M events), and the
 * message is built once and written to many sockets.
 */
export function frameParts(opcode, parts, max = TURN_BYTES) {
  const payload = runsOf(parts, max)
  let length = 0
  const runs = payload.map((run, i) => {
    let n = 0
    for (const c of run) n += c.length
    const head = frameHeader(i === 0 ? opcode : OP.CONT, n, i < payload.length - 1)
    length += head.length + n
    return [head, ...run]
  })
  return { runs, length }
}

/** A close frame with a status code and a short reason (≤ 123 bytes, RFC 6455 §5.5). */
export function closeFrame(code, reason = '') {
  let r = Buffer.from(reason, 'utf8')
  if (r.length > 123) r = r.subarray(0, 123)
  const p = Buffer.allocUnsafe(2 + r.length)
  p.writeUInt16BE(code, 0)
  r.copy(p, 2)
  return frame(OP.CLOSE, p)
}

/**
 * Reads client frames from socket chunks. push(chunk) returns the complete messages it finished:
 * {opcode, data} with control frames (close, ping, pong) and whole data messages (fragments joined).
 * A protocol violation throws {wsClose: code} (1002 protocol error, 1009 too big); the caller closes.
 */
export class FrameReader {
  constructor(maxMessage = 64 * 1024) {
    this.maxMessage = maxMessage
    this.buf = Buffer.alloc(0)
    this.fragments = null // {opcode, parts, size} while a fragmented message is open
  }

  push(chunk) {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
    const out = []
    for (;;) {
      const f = this.next()
      if (f === undefined) break
      const m = this.assemble(f)
      if (m !== undefined) out.push(m)
    }
    return out
  }

  next() {
    const b = this.buf
    if (b.length < 2) return undefined
    const fin = (b[0] & 0x80) !== 0
    if ((b[0] & 0x70) !== 0) throw violation(1002, 'reserved bits set')
    const opcode = b[0] & 0x0f
    const masked = (b[1] & 0x80) !== 0
    if (!masked) throw violation(1002, 'client frames must be masked')
    let len = b[1] & 0x7f
    let at = 2
    if (len === 126) {
      if (b.length < 4) return undefined
      len = b.readUInt16BE(2)
      at = 4
    } else if (len === 127) {
      if (b.length < 10) return undefined
      const big = b.readBigUInt64BE(2)
      if (big > BigInt(this.maxMessage)) throw violation(1009, 'message too big')
      len = Number(big)
      at = 10
    }
    const control = opcode >= 0x8
    if (control && (len > 125 || !fin)) throw violation(1002, 'bad control frame')
    if (![0x0, 0x1, 0x2, 0x8, 0x9, 0xa].includes(opcode)) throw violation(1002, 'unknown opcode')
    if (len > this.maxMessage) throw violation(1009, 'message too big')
    if (b.length < at + 4 + len) return undefined
    const mask = b.subarray(at, at + 4)
    const data = Buffer.allocUnsafe(len)
    for (let i = 0; i < len; i++) data[i] = b[at + 4 + i] ^ mask[i & 3]
    this.buf = b.subarray(at + 4 + len)
    return { fin, opcode, data }
  }

  assemble(f) {
    if (f.opcode >= 0x8) return { opcode: f.opcode, data: f.data }
    if (f.opcode === OP.CONT) {
      if (this.fragments === null) throw violation(1002, 'continuation without a message')
    } else {
      if (this.fragments !== null) throw violation(1002, 'new message inside a fragmented one')
      this.fragments = { opcode: f.opcode, parts: [], size: 0 }
    }
    const m = this.fragments
    m.parts.push(f.data)
    m.size += f.data.length
    if (m.size > this.maxMessage) throw violation(1009, 'message too big')
    if (!f.fin) return undefined
    this.fragments = null
    return { opcode: m.opcode, data: m.parts.length === 1 ? m.parts[0] : Buffer.concat(m.parts) }
  }
}

function violation(code, message) {
  const e = new Error(message)
  e.wsClose = code
  return e
}
