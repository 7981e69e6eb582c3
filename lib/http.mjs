// Small HTTP helpers for the plugin routes: the Host/Origin fence, JSON replies, bounded bodies.

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

export function jsonResponse(res, status, payload) {
  const body = JSON.stringify(payload)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
  res.end(body)
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
