// Small HTTP helpers for the plugin routes (lib/routes/): the Host/Origin fence, the guard every route
// runs in, JSON replies, the sessionId parameter, a session's view answered when it is not there, bounded bodies.

const LOOPBACK_V4 = /^127(?:\.\d{1,3}){3}$/

/** Loopback host names as a browser or curl would send them. */
export function isLoopbackHostname(hostname) {
  const h = hostname.toLowerCase()
  return h === 'localhost' || h.endsWith('.localhost') || LOOPBACK_V4.test(h) || h === '[::1]'
}

function parseAuthority(authority) {
  try {
    const url = new URL(`http://${authority}`)
    if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined
    return url
  } catch {
    return undefined
  }
}

function matchesTrusted(hostUrl, trusted) {
  return trusted.some((entry) => {
    const e = parseAuthority(entry)
    if (e === undefined) return false
    const hasPort = /:\d+$/.test(entry) && !entry.endsWith(']')
    return hasPort ? e.host === hostUrl.host : e.hostname === hostUrl.hostname
  })
}

/**
 * The browser-trust fence for plugin routes (the host applies its own only to /api): Host must be
 * loopback or a trusted authority; a cross-site fetch is refused; an Origin, when sent, must be
 * this same authority.
 */
export function checkTrust(req, trustedHosts = []) {
  const headers = req.headers ?? {}
  const host = headers.host
  if (typeof host !== 'string' || host === '') return false
  const hostUrl = parseAuthority(host)
  if (hostUrl === undefined) return false
  if (!isLoopbackHostname(hostUrl.hostname) && !matchesTrusted(hostUrl, trustedHosts)) return false
  if (headers['sec-fetch-site'] === 'cross-site') return false
  const origin = headers.origin
  if (origin === undefined) return true
  if (typeof origin !== 'string') return false
  try {
    return new URL(origin).host === hostUrl.host
  } catch {
    return false
  }
}

/**
 * A route's handler as it is registered: the trust fence (403), the native core's absence (503, where
 * `unavailable()` gives the reason; models need no core), and a thrown error (500, or the socket cut
 * when the answer has begun).
 */
export function guarded(handler, { trustedHosts, unavailable = () => undefined }) {
  return async (req, res) => {
    try {
      if (!checkTrust(req, trustedHosts())) {
        jsonResponse(res, 403, { error: 'forbidden: untrusted Host or Origin' })
        return
      }
      const reason = unavailable()
      if (reason !== undefined) {
        jsonResponse(res, 503, { error: reason })
        return
      }
      await handler(req, res)
    } catch (error) {
      if (!res.headersSent) jsonResponse(res, 500, { error: error instanceof Error ? error.message : String(error) })
      else res.destroy()
    }
  }
}

export function jsonResponse(res, status, payload) {
  jsonText(res, status, JSON.stringify(payload))
}

/** An answer that is JSON text already (the core's, written as it is). */
export function jsonText(res, status, text, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers })
  res.end(text)
}

/** The request's URL (a relative one, as the host's server hands it over). */
export function requestUrl(req) {
  return new URL(req.url ?? '/', 'http://kernel-opt.invalid')
}

/** The `sessionId` query parameter, or undefined after answering 400. */
export function sessionParam(req, res) {
  const id = requestUrl(req).searchParams.get('sessionId')
  if (id === null || id === '') {
    jsonResponse(res, 400, { error: 'sessionId query parameter required' })
    return undefined
  }
  if (!validSessionId(id)) {
    jsonResponse(res, 400, { error: 'invalid sessionId' })
    return undefined
  }
  return id
}

/**
 * The session's view (the store's getView answer), or undefined after answering 404 (unknown), 202
 * {loading: true} with Retry-After (a past session whose log is still being read: the tab shows
 * "loading" and asks again, docs/protocol.md) or 422 (a log that exists but cannot be read, with the
 * host's reason).
 */
export function viewOrAnswer(res, id, view) {
  if (view === undefined) {
    jsonResponse(res, 404, { error: 'unknown session' })
    return undefined
  }
  if (view.loading === true) {
    jsonText(res, 202, JSON.stringify({ loading: true, sessionId: id }), { 'retry-after': '1' })
    return undefined
  }
  if (view.error !== undefined) {
    jsonResponse(res, 422, { error: `session log unreadable: ${view.error}` })
    return undefined
  }
  return view
}

/** The view of the session `sessionId` names (store.getView), or undefined after answering 400, 404, 202 or 422. */
export async function requestedView(req, res, store, { wait }) {
  const id = sessionParam(req, res)
  return id === undefined ? undefined : viewOrAnswer(res, id, await store.getView(id, { wait }))
}

/** Session ids as the host writes them; anything else is refused before it reaches a lookup. */
export function validSessionId(id) {
  return typeof id === 'string' && id.length <= 200 && /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(id)
}

/** How deeply `text` nests arrays and objects (brackets inside strings do not count). */
export function jsonNesting(text) {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return deepest
}

/**
 * A JSON record of at most maxBytes and maxDepth levels of nesting, else null (never throws, never
 * waits past the body). The depth bound keeps a hostile body from reaching code that recurses.
 */
export function readJsonBody(req, maxBytes = 16_384, maxDepth = 32) {
  return new Promise((resolve) => {
    const chunks = []
    let size = 0
    let done = false
    const finish = (v) => {
      if (!done) {
        done = true
        resolve(v)
      }
    }
    const timer = setTimeout(() => {
      finish(null)
      req.destroy?.()
    }, 10_000)
    req.on('data', (chunk) => {
      if (done) return
      size += chunk.length
      if (size > maxBytes) {
        clearTimeout(timer)
        finish(null)
        req.resume?.()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      clearTimeout(timer)
      try {
        const text = Buffer.concat(chunks).toString('utf8')
        if (jsonNesting(text) > maxDepth) return finish(null)
        const v = JSON.parse(text)
        finish(typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null)
      } catch {
        finish(null)
      }
    })
    req.on('error', () => {
      clearTimeout(timer)
      finish(null)
    })
  })
}
