// GET|HEAD /plugins/kernel-opt/series?sessionId=…[&since=<revision>] — the session's answer
// (docs/protocol.md). The session object brings its revision up to date (projection, updatedAt, and
// the control its own loop makes) and, only for a 200, hands out the answer of that revision as
// bytes assembled once: revise(), then parts(); nothing else of the session crosses.
import { jsonResponse, requestUrl, requestedView } from '../http.mjs'
import { runsOf, writeRuns } from '../paced.mjs'

/** deps.store: lib/store.mjs. A past session whose log is still being read answers 202 at once. */
export function seriesRoute({ store }) {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const view = await requestedView(req, res, store, { wait: false })
    if (view === undefined) return
    const session = view.session
    const revision = session.revise()
    const etag = session.etag
    // x-kernel-opt-source says where the events came from: the live session or the host's persistence.
    const headers = {
      etag, 'cache-control': 'no-cache', 'x-kernel-opt-source': view.live ? 'live' : 'persisted',
      // A past session: read by the addon from the log file off this thread, or through the host's inspect.
      ...(view.live ? {} : { 'x-kernel-opt-reader': view.reader }),
      'x-kopt-revision': String(revision),
      ...(session.unreadable > 0 ? { 'x-kernel-opt-unreadable-events': String(session.unreadable) } : {}),
    }
    const inm = req.headers['if-none-match']
    if (typeof inm === 'string' && inm.split(',').map(s => s.trim().replace(/^W\//, '')).includes(etag)) {
      res.writeHead(304, headers)
      res.end()
      return
    }
    // since=<revision>: what changed since then, or the full body marked as such (docs/protocol.md);
    // without it, the full body as it always was (seed-compatible readers). The body's bulk is the
    // session's own bytes, written as they are.
    const since = requestUrl(req).searchParams.get('since')
    const parts = session.parts(since === null ? null : /^\d{1,16}$/.test(since) ? Number(since) : -1)
    const length = parts.reduce((n, b) => n + b.length, 0)
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(length), ...headers })
    if (req.method === 'HEAD') { res.end(); return }
    // A full body at 1M events is 33 MB in ~130 pieces: written 1 MB per event-loop turn
    // (lib/paced.mjs), not in one system call that holds the host's thread.
    writeRuns(res, runsOf(parts), undefined, { end: true })
  }
}
