// The curve's geometry for the browser half (lib/client.js draws it; the core computes it).
//
// The /series route (lib/index.mjs) adds it to its body with one call:
//   body = withChart(addon, body)          // body: the series JSON text, control included
// which appends a `chart` key computed by kopt.node's chartJson (src/core/chart.cpp). The client
// reads `series.chart`; without it the tab still shows everything except the curve.
//
// chartRoute(addon, getSeriesBody) is the alternative: a handler for
// GET /plugins/kernel-opt/chart?sessionId=… that answers the chart object alone.

/** Width and height of the chart's viewBox (the SVG scales to the panel's width). */
export const CHART_OPTIONS = JSON.stringify({ width: 960, height: 300 })

/**
 * Returns the series body with a `chart` key appended. Never throws: on any failure the body is
 * returned unchanged (the panel then shows the data without the curve).
 * @param {{chartJson?: (series: string, options?: string) => string}} addon kopt.node
 * @param {string} body the series JSON object as text
 * @returns {string}
 */
export function withChart(addon, body) {
  try {
    if (typeof addon?.chartJson !== 'function' || typeof body !== 'string') return body
    const end = body.lastIndexOf('}')
    if (end < 0 || body.trimStart()[0] !== '{') return body
    const chart = addon.chartJson(body, CHART_OPTIONS)
    const empty = /^\{\s*$/.test(body.slice(0, end))
    return `${body.slice(0, end)}${empty ? '' : ','}"chart":${chart}${body.slice(end)}`
  } catch {
    return body
  }
}

/**
 * A route handler for GET /plugins/kernel-opt/chart?sessionId=…
 * @param {{chartJson: Function}} addon kopt.node
 * @param {(sessionId: string) => string | undefined} getSeriesBody the /series body, or undefined
 *   for an unknown session
 */
export function chartRoute(addon, getSeriesBody) {
  return (req, res) => {
    const send = (status, text) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
      res.end(text)
    }
    try {
      const url = new URL(req.url ?? '/', 'http://localhost')
      const id = url.searchParams.get('sessionId')
      if (!id) return send(400, JSON.stringify({ error: 'sessionId query parameter required' }))
      const body = getSeriesBody(id)
      if (body === undefined) return send(404, JSON.stringify({ error: 'unknown session' }))
      send(200, addon.chartJson(body, CHART_OPTIONS))
    } catch (err) {
      send(500, JSON.stringify({ error: String(err?.message ?? err) }))
    }
  }
}
