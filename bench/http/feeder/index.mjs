// Benchmark-only DSH plugin (bench/http/run.mjs adds it to a scratch profile, never to a user's):
//   POST /plugins/kopt-bench-feeder/append {sessionId, events: [{type, data}]} appends the events to
//        the live session through the host's own Session.append, so every plugin sees them as
//        `session/event`s exactly as it would during a run; answers {appended, failed, length}.
//   GET  /plugins/kopt-bench-feeder/ping answers "ok": the trivial request whose latency shows how
//        long the host's event loop is blocked.
//   PUT  /plugins/kopt-bench-feeder/page[?name=N] stores an HTML page (≤ 1 MB, at most 4 names) that
//        GET …/page?name=N then serves: a page with the host's own loopback origin and address
//        (bench/push/run.mjs puts the tab's shell stand-in and its floor page there; a page Playwright
//        fulfils itself may not open sockets to loopback).
export const name = 'kopt-bench-feeder'
export const inject = ['sessions']

export function apply(ctx) {
  ctx.inject(['webServer'], (w) => {
    w.effect(() => w.webServer.register({
      kind: 'exact',
      path: '/plugins/kopt-bench-feeder/ping',
      handler: (req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok') },
    }), 'bench feeder: ping')
    const pages = new Map() // name -> html
    w.effect(() => w.webServer.register({
      kind: 'exact',
      path: '/plugins/kopt-bench-feeder/page',
      handler: (req, res) => {
        const name = new URL(req.url, 'http://x').searchParams.get('name') ?? ''
        if (req.method !== 'PUT') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
          res.end(pages.get(name) ?? '')
          return
        }
        if (!pages.has(name) && pages.size >= 4) { res.writeHead(507); res.end(); return }
        const chunks = []
        let size = 0
        req.on('data', c => { size += c.length; if (size <= 1 << 20) chunks.push(c) })
        req.on('end', () => {
          if (size > 1 << 20) { res.writeHead(413); res.end(); return }
          pages.set(name, Buffer.concat(chunks).toString('utf8'))
          res.writeHead(204)
          res.end()
        })
      },
    }), 'bench feeder: page')
    w.effect(() => w.webServer.register({
      kind: 'exact',
      path: '/plugins/kopt-bench-feeder/append',
      handler: (req, res) => {
        const chunks = []
        req.on('data', c => chunks.push(c))
        req.on('end', () => {
          let appended = 0
          let failed = 0
          let firstError
          const failures = {}
          let session
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
            session = ctx.sessions.get(body.sessionId)
            if (session === undefined) throw new Error('no such live session')
            for (const e of body.events) {
              try {
                // Surface-eligible events (user/message, tool/result …) need the marker the host writes.
                try {
                  session.append(e.type, e.data)
                } catch (error) {
                  if (!/surfaceOp/.test(error.message)) throw error
                  session.append(e.type, e.data, { surfaceOp: 'append' })
                }
                appended++
              } catch (error) {
                failed++
                failures[e.type] = (failures[e.type] ?? 0) + 1
                firstError ??= `${e.type}: ${error.message}`
              }
            }
          } catch (error) {
            res.writeHead(400, { 'content-type': 'application/json' })
            res.end(JSON.stringify({ error: error.message }))
            return
          }
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ appended, failed, failures, firstError, length: session.seq }))  // .events would copy the log
        })
      },
    }), 'bench feeder: append')
  })
}
