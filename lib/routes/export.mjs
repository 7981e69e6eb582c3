// GET /plugins/kernel-opt/{csv,json,markdown}?sessionId=…[&lang=zh|en] — the run's exports for the tab's
// export menu: the core's, as `kopt report --csv / --json / --md` write them (the offline report's
// columns and rows, the points' intervals and labels; docs/report.md), never the tab's own. The text
// is the core's, written as it is.
import { jsonResponse, requestUrl, requestedView } from '../http.mjs'

const FORMATS = {
  csv: { type: 'text/csv; charset=utf-8', make: (s) => s.csv() },
  json: { type: 'application/json; charset=utf-8', make: (s) => s.json() },
  // The markdown table's words are the core's (kopt/labels.hpp) in the tab's language.
  markdown: { type: 'text/markdown; charset=utf-8', make: (s, lang) => s.markdown(lang) },
}

/** deps.store: lib/store.mjs (a past session's log is waited for); format: csv | json | markdown. */
export function exportRoute({ store }, format) {
  const f = FORMATS[format]
  if (f === undefined) throw new Error(`exportRoute: unknown format ${format}`)
  return async (req, res) => {
    if (req.method !== 'GET') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const lang = requestUrl(req).searchParams.get('lang') ?? 'zh'
    if (lang !== 'zh' && lang !== 'en') {
      jsonResponse(res, 400, { error: 'lang must be zh or en' })
      return
    }
    const view = await requestedView(req, res, store, { wait: true })
    if (view === undefined) return
    const body = Buffer.from(f.make(view.session, lang), 'utf8')
    res.writeHead(200, { 'content-type': f.type, 'cache-control': 'no-store', 'content-length': String(body.length) })
    res.end(body)
  }
}
