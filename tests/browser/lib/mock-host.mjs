// A stand-in for DSH web's shell and the plugin's routes, on 127.0.0.1, for the fast browser tests
// and the benchmark: serves a small page that plays the shell (module loader, slots, locale,
// sessions, a composer), React 18 (the host's major version), lib/client.js, and
// /plugins/kernel-opt/{series,control,models,compare,csv,json,markdown} projected by the real core (kopt.node): the same
// kopt.Session the route uses (body with the chart, ETag, revision).
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { compareRoute } from '../../../lib/routes/compare.mjs'
import { exportRoute } from '../../../lib/routes/export.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../../..')
const nm = path.join(here, '../node_modules')

export function startMockHost ({ kopt, port = 0, sessions, clientPath }) {
  const state = new Map() // id -> {preset, events, control, s (kopt.Session), fed, body, etag, revision}
  const defaultControl = () => ({
    loop: { armed: false, budget: 20, round: 0, evalsDone: 0, evalsOverBudget: 0, available: true, defaultBudget: 20 },
    supervisor: { enabled: false, configured: true, configRoute: { provider: 'deepseek-official', model: 'deepseek-v4-pro' }, effective: { provider: 'deepseek-official', model: 'deepseek-v4-pro', source: 'config' } },
  })
  const add = (id, { preset = 'kernel-opt', events = [], title, cwd, updatedAt, unreadable } = {}) => {
    state.set(id, { preset, events, title, cwd, updatedAt, unreadable, control: defaultControl(), body: null, etag: null })
  }
  for (const [id, s] of Object.entries(sessions ?? {})) add(id, s)
  const log = []

  // One session object per session, fed what was appended (as the route does), so the tab's
  // since=<revision> polls get deltas; setEvents starts a new object (its revisions are unknown).
  const project = (st, id) => {
    if (!st.s) { st.s = new kopt.Session(id); st.fed = 0 }
    const s = st.s
    if (st.fed < st.events.length) s.feed(JSON.stringify(st.events.slice(st.fed)))
    st.fed = st.events.length
    st.control.loop.evalsDone = s.completedEvals
    st.control.loop.evalsOverBudget = Math.max(0, st.control.loop.evalsDone - st.control.loop.budget)
    // This stand-in plays its own loop: the test build's reviseWith takes its control (an older
    // addon, bench/tab's reference, takes it in revise).
    st.revision = s.reviseWith ? s.reviseWith(JSON.stringify(st.control)) : s.revise(JSON.stringify(st.control))
    st.etag = s.etag
    st.body = s.body()
  }
  // The plugin's own compare route (lib/routes/compare.mjs) over these sessions, read as the store reads
  // them: compareLoading answers "loading" that many times first; unreadable keeps its reason.
  const compare = compareRoute({
    kopt,
    getView: async (id) => {
      const st = state.get(id)
      if (!st) return undefined
      if (st.compareLoading > 0) { st.compareLoading--; return { loading: true } }
      if (st.unreadable) return { error: st.unreadable }
      if (st.body === null || st.fed < st.events.length) project(st, id)
      log.push({ path: 'compare', id })
      return { session: st.s, live: true }
    },
  })
  // The plugin's own export routes (lib/routes/export.mjs: csv, json, markdown) over these sessions.
  const exportStore = {
    getView: async (id) => {
      const st = state.get(id)
      if (!st) return undefined
      if (st.body === null || st.fed < st.events.length) project(st, id)
      return { session: st.s, live: true }
    },
  }
  const exports = Object.fromEntries(['csv', 'json', 'markdown'].map(f => [`/plugins/kernel-opt/${f}`, { f, route: exportRoute({ store: exportStore }, f) }]))
  const json = (res, status, obj, headers = {}) => { res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }); res.end(JSON.stringify(obj)) }
  const readBody = req => new Promise((resolve) => { let b = ''; req.on('data', (c) => { b += c }); req.on('end', () => { try { resolve(JSON.parse(b)) } catch { resolve(null) } }) })
  const files = {
    '/react.js': path.join(nm, 'react/umd/react.production.min.js'),
    '/react-dom.js': path.join(nm, 'react-dom/umd/react-dom.production.min.js'),
    '/client.js': clientPath || path.join(root, 'lib/client.js'), // clientPath: bench/tab's reference
    '/': path.join(here, 'shell.html'),
  }
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    try {
      if (files[url.pathname]) {
        res.writeHead(200, { 'content-type': url.pathname === '/' ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8', 'cache-control': 'no-store' })
        res.end(readFileSync(files[url.pathname]))
        return
      }
      if (url.pathname === '/mock/sessions') {
        return json(res, 200, Object.fromEntries([...state].map(([id, s]) => [id, {
          agentPreset: s.preset, ...(s.title ? { title: s.title } : {}), ...(s.cwd ? { cwd: s.cwd } : {}), ...(s.updatedAt ? { updatedAt: s.updatedAt } : {}),
        }])))
      }
      if (url.pathname === '/plugins/kernel-opt/compare') return compare(req, res)
      const id = url.searchParams.get('sessionId')
      if (url.pathname === '/plugins/kernel-opt/series') {
        const st = state.get(id)
        if (!st) return json(res, 404, { error: 'unknown session' })
        // loading: answer 202 that many times first, as the route does while a past log is read.
        if (st.loading > 0) {
          st.loading--
          log.push({ path: 'series', id, status: 202 })
          return json(res, 202, { loading: true, sessionId: id }, { 'retry-after': '1', 'cache-control': 'no-store' })
        }
        if (st.body === null) project(st, id)
        const since = url.searchParams.get('since')
        log.push({ path: 'series', id, inm: req.headers['if-none-match'] ?? null, since })
        const rev = { 'x-kopt-revision': String(st.revision) }
        if (req.headers['if-none-match'] === st.etag) { res.writeHead(304, { etag: st.etag, ...rev }); res.end(); return }
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', etag: st.etag, 'cache-control': 'no-cache', ...rev })
        res.end(since === null ? st.body : st.s.delta(/^\d{1,16}$/.test(since) ? Number(since) : -1))
        return
      }
      if (exports[url.pathname]) {
        const { f, route } = exports[url.pathname]
        log.push({ path: f, id, lang: url.searchParams.get('lang') })
        return route(req, res)
      }
      if (url.pathname === '/plugins/kernel-opt/control' && req.method === 'POST') {
        const b = await readBody(req)
        const st = state.get(b?.sessionId)
        if (!st) return json(res, 404, { error: 'unknown session' })
        log.push({ path: 'control', ...b })
        const c = st.control
        if (b.action === 'loop-arm') {
          if (b.outputLanguage !== undefined && b.outputLanguage !== 'zh' && b.outputLanguage !== 'en') return json(res, 400, { error: 'outputLanguage must be zh or en' })
          Object.assign(c.loop, { armed: true, budget: b.budget ?? c.loop.defaultBudget, round: 1, outputLanguage: b.outputLanguage })
          delete c.loop.stopReason
        } else if (b.action === 'loop-stop') {
          if (c.loop.armed) Object.assign(c.loop, { armed: false, stopReason: 'stopped' })
        } else if (b.action === 'supervise-on') c.supervisor.enabled = true
        else if (b.action === 'supervise-off') c.supervisor.enabled = false
        else if (b.action === 'supervise-use') {
          if (!b.provider && !b.model) c.supervisor.effective = { ...c.supervisor.configRoute, source: 'config' }
          else c.supervisor.effective = { provider: b.provider, model: b.model, ...(b.reasoningEffort ? { reasoningEffort: b.reasoningEffort } : {}), source: 'session' }
        } else return json(res, 400, { error: `unknown action: ${b.action}` })
        st.body = null
        return json(res, 200, { control: c })
      }
      if (url.pathname === '/plugins/kernel-opt/models') {
        const provider = url.searchParams.get('provider'); const model = url.searchParams.get('model')
        if (provider && model) {
          return json(res, 200, {
            provider, id: model, name: model,
            ...(model.endsWith('pro') ? { reasoning: { efforts: [{ id: 'off', name: 'off' }, { id: 'high', name: 'high' }, { id: 'max', name: 'max' }], defaultEffort: 'high' } } : {}),
          })
        }
        return json(res, 200, { providers: [{ id: 'deepseek-official', name: 'DeepSeek', models: [{ id: 'deepseek-v4-flash', name: 'DeepSeek V4 Flash' }, { id: 'deepseek-v4-pro', name: 'DeepSeek V4 Pro' }] }] })
      }
      res.writeHead(404); res.end()
    } catch (err) {
      json(res, 500, { error: String(err?.stack ?? err) })
    }
  })
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        log,
        state,
        add,
        append (id, events) { const st = state.get(id); st.events.push(...events); st.body = null },
        setEvents (id, events) { const st = state.get(id); st.events = events; st.s = null; st.body = null },
        close: () => new Promise(r => server.close(r)),
      })
    })
  })
}
