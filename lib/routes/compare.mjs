// GET /plugins/kernel-opt/compare?sessionId=A&with=B,C — the sessions compared side by side
// (the tab's 对比 / Compare). Every session is read as /series reads it (live, or a past session's
// log projected off this thread by kopt.loadSession); the answer is made by the core from the
// projections already held (kopt.compare: each session's row is kept per projection, nothing is
// projected again here). A session still being read answers as loading (Retry-After: 1, the tab
// asks again); one that cannot be read keeps its row with the reason. The bounds (at least
// kopt.compareMin sessions, at most kopt.compareMax) and the comparability rule are the core's.
import { createHash } from 'node:crypto'
import { jsonResponse, requestUrl, validSessionId } from '../http.mjs'
import { runsOf, writeRuns } from '../paced.mjs'

// Answers kept by what they were made from (each session object and the key of its row), so a poll
// that finds nothing changed costs no core call and answers 304 to the ETag it holds.
const KEPT_ANSWERS = 4
// How long the route waits for a session's view. Reading a log runs on the libuv pool, and so does
// the store's look at a log file's size (fs.stat): while four logs are read, that look can wait
// seconds behind them. Past this, the session answers with the projection the store holds for it
// now (held), or the one in its last answer, or as loading, and the tab asks again.
const VIEW_WAIT_MS = 80

/** The ids a request names: sessionId first, then each of `with` (comma-separated or repeated), once each. */
export function compareIds(url) {
  const ids = []
  const first = url.searchParams.get('sessionId')
  if (first !== null && first !== '') ids.push(first)
  for (const w of url.searchParams.getAll('with')) {
    for (const id of w.split(',')) if (id !== '' && !ids.includes(id)) ids.push(id)
  }
  return ids
}

/**
 * The route's handler. getView(id, {wait:false}) is the store's (lib/store.mjs): {session, live},
 * {loading: true}, {error}, or undefined for an unknown session; held(id) (optional) the view it
 * holds now without waiting (store.held), or undefined.
 */
export function compareRoute({ kopt, getView, held = () => undefined }) {
  const kept = new Map() // key -> {body, etag}, least recently used first
  const seen = new Map() // id -> WeakRef of the session object in its last answer (not kept alive here)
  const objects = new WeakMap() // session object -> serial (a past session read again is a new object)
  let serial = 0
  const objectId = (s) => {
    let n = objects.get(s)
    if (n === undefined) objects.set(s, (n = ++serial))
    return n
  }
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const url = requestUrl(req)
    if (!url.searchParams.get('sessionId')) {
      jsonResponse(res, 400, { error: 'sessionId query parameter required' })
      return
    }
    const ids = compareIds(url)
    const bad = ids.find((id) => !validSessionId(id))
    if (bad !== undefined) {
      jsonResponse(res, 400, { error: 'invalid sessionId' })
      return
    }
    const min = kopt.compareMin
    const max = kopt.compareMax
    if (ids.length < min || ids.length > max) {
      jsonResponse(res, 400, {
        error: ids.length < min
          ? `对比至少需要 ${min} 个会话：请再选一个会话 / a comparison needs at least ${min} sessions: pick another session to compare with`
          : `一次最多对比 ${max} 个会话 / at most ${max} sessions can be compared at once`,
        min, max,
      })
      return
    }
    const late = Symbol('late')
    const views = await Promise.all(ids.map(async (id) => {
      let timer
      const view = await Promise.race([
        getView(id, { wait: false }).catch((error) => ({ error: error?.message ?? String(error) })),
        new Promise((resolve) => { timer = setTimeout(resolve, VIEW_WAIT_MS, late) }),
      ])
      clearTimeout(timer)
      if (view !== late) return view
      const now = held(id)
      if (now !== undefined) return now
      const last = seen.get(id)?.deref()
      return last === undefined ? { loading: true } : { session: last }
    }))
    let loading = 0
    const entries = views.map((view, i) => {
      const id = ids[i]
      if (view === undefined) return { id, error: 'unknown session / 没有这个会话' }
      if (view.loading === true) {
        loading += 1
        return { id, loading: true }
      }
      // The core takes a reason, never an empty one: a failure without a message says 'unreadable'.
      if (view.error !== undefined) return { id, error: String(view.error).slice(0, 500) || 'unreadable' }
      seen.delete(id)
      seen.set(id, new WeakRef(view.session))
      while (seen.size > 4 * max) seen.delete(seen.keys().next().value)
      return view.session
    })
    const key = entries.map((e) => (e instanceof kopt.Session ? `${objectId(e)}:${e.summaryKey}` : `${e.id}:${e.loading ? 'L' : `E${e.error}`}`)).join('\n')
    let answer = kept.get(key)
    if (answer === undefined) {
      const body = kopt.compare(entries)
      answer = { body, etag: `"c${createHash('sha1').update(key).digest('base64url').slice(0, 20)}"` }
      kept.set(key, answer)
      while (kept.size > KEPT_ANSWERS) kept.delete(kept.keys().next().value)
    } else {
      kept.delete(key)
      kept.set(key, answer)
    }
    const headers = {
      etag: answer.etag,
      'cache-control': 'no-cache',
      ...(loading > 0 ? { 'retry-after': '1', 'x-kernel-opt-loading': String(loading) } : {}),
    }
    const inm = req.headers['if-none-match']
    if (typeof inm === 'string' && inm.split(',').map((x) => x.trim()).includes(answer.etag)) {
      res.writeHead(304, headers)
      res.end()
      return
    }
    const body = answer.body
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), ...headers })
    if (req.method === 'HEAD') {
      res.end()
      return
    }
    writeRuns(res, runsOf([body]), undefined, { end: true })
  }
}
