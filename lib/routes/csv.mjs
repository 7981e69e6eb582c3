// GET /plugins/kernel-opt/csv?sessionId=… — the run as CSV for the tab's export: the core's (the
// offline report's columns), not the tab's own. The text is the core's, written as it is.
import { jsonResponse, requestedView } from '../http.mjs'

/** deps.store: lib/store.mjs (a past session's log is waited for). */
export function csvRoute({ store }) {
  return async (req, res) => {
    if (req.method !== 'GET') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const view = await requestedView(req, res, store, { wait: true })
    if (view === undefined) return
    const body = Buffer.from(view.session.csv(), 'utf8')
    res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(body.length) })
    res.end(body)
  }
}
