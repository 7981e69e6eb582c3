// A minimal WebSocket client on a raw TCP socket for the push tests (tests/lib/push.test.mjs,
// tests/e2e/push-e2e.mjs): it sends exactly the upgrade headers a test names (a hostile Host or
// Origin included), masks its frames as RFC 6455 requires of clients, can stop reading (pause the
// socket) to play a tab that never reads, and keeps every text message it got, parsed.
import { connect } from 'node:net'
import { randomBytes } from 'node:crypto'

const OP = { CONT: 0x0, TEXT: 0x1, CLOSE: 0x8, PING: 0x9, PONG: 0xa }

export function maskedFrame(opcode, payload = Buffer.alloc(0)) {
  const mask = randomBytes(4)
  const n = payload.length
  const head = Buffer.from(n < 126 ? [0x80 | opcode, 0x80 | n] : [0x80 | opcode, 0x80 | 126, n >> 8, n & 255])
  const body = Buffer.from(payload.map((b, i) => b ^ mask[i & 3]))
  return Buffer.concat([head, mask, body])
}
export function rawClient(port, query, headers = {}, path = '/push') {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1')
    const c = { socket: s, status: null, messages: [], fragments: 0, pings: 0, pongs: 0, closed: false, closeCode: null }
    let buf = Buffer.alloc(0)
    let fragments = []
    const onData = (chunk) => {
      buf = Buffer.concat([buf, chunk])
      if (c.status === null) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buf.subarray(0, end).toString()
        c.status = Number(head.split(' ')[1])
        c.head = head
        buf = buf.subarray(end + 4)
        resolve(c)
        if (c.status !== 101) { c.body = buf.toString(); return }
      }
      if (c.status !== 101) return
      for (;;) {
        if (buf.length < 2) return
        let len = buf[1] & 0x7f
        let at = 2
        if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); at = 4 } else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); at = 10 }
        if (buf.length < at + len) return
        const op = buf[0] & 0x0f
        const fin = (buf[0] & 0x80) !== 0
        const data = buf.subarray(at, at + len)
        buf = buf.subarray(at + len)
        // A long message comes in fragments (a text frame without FIN, then continuations).
        if (op === OP.TEXT || op === OP.CONT) {
          fragments.push(data)
          c.fragments++
          if (fin) { c.messages.push(JSON.parse(Buffer.concat(fragments).toString())); fragments = [] }
        }
        else if (op === OP.PING) { c.pings++; s.write(maskedFrame(OP.PONG, data)) } else if (op === OP.PONG) { c.pongs++; c.pongAfterFragments ??= c.fragments } else if (op === OP.CLOSE) c.closeCode = data.length >= 2 ? data.readUInt16BE(0) : 1005
      }
    }
    s.on('data', onData)
    s.on('close', () => { c.closed = true })
    s.on('error', reject)
    s.write([`GET ${path}?${query} HTTP/1.1`, ...(headers.Host ? [] : [`Host: 127.0.0.1:${port}`]), 'Upgrade: websocket', 'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n'))
  })
}

