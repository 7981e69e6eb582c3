// The routes (lib/routes/, one module each) over a real store and HTTP server, guarded as lib/index.mjs
// registers them; and the control object (P-4) a session's loop makes from the plugin config
// (lib/config.mjs loopJson): without loop state, armed false and zeros, the configured route reported.
// The /control validation (Q-2) is C++'s: tests/core/test_loop.cpp.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { kopt } from '../addon/addon.mjs'
import { loopJson, resolveConfig } from '../../lib/config.mjs'
import http from 'node:http'
import fs from 'node:fs'
import { createStore } from '../../lib/store.mjs'
import { guarded } from '../../lib/http.mjs'
import { seriesRoute } from '../../lib/routes/series.mjs'
import { exportRoute } from '../../lib/routes/export.mjs'
import { controlRoute } from '../../lib/routes/control.mjs'
import { pushRoute } from '../../lib/routes/push.mjs'
import { modelsRoute } from '../../lib/routes/models.mjs'

const { config } = resolveConfig({}, kopt.loopRules)
const withSup = resolveConfig({ supervisor: { provider: 'p', model: 'm', reasoningEffort: 'high' } }, kopt.loopRules).config
const controlOf = (cfg, available) => JSON.parse(new kopt.Session('s', '{}', loopJson(cfg, available)).control)

test('control without loop state: armed false, zeros, configured route reported', () => {
  const c = controlOf(config, false)
  assert.deepEqual(c.loop, { armed: false, budget: 0, round: 0, evalsDone: 0, evalsOverBudget: 0, available: false, defaultBudget: 20 })
  assert.deepEqual(c.supervisor, { enabled: false, configured: false })
  const s = controlOf(withSup, true)
  assert.equal(s.loop.available, true)
  assert.equal(s.loop.evalsDone, 0)
  assert.deepEqual(s.supervisor.configRoute, { provider: 'p', model: 'm', reasoningEffort: 'high' })
  assert.deepEqual(s.supervisor.effective, { provider: 'p', model: 'm', reasoningEffort: 'high', source: 'config' })
  assert.equal(controlOf(resolveConfig({ loop: { defaultBudget: 33 } }, kopt.loopRules).config, true).loop.defaultBudget, 33)
})

// ── the routes (lib/routes/), each over a real store and a real HTTP server, guarded as lib/index.mjs
// registers them (lib/http.mjs guarded): what each answers, status by status ──

const events = JSON.parse(fs.readFileSync(new URL('../fixtures/vectors/z03-large-60-evals.events.json', import.meta.url), 'utf8'))
  .map((e, i) => ({ ...e, seq: i, time: 1000 + i }))
const liveStore = () => createStore(kopt, config, {
  sessions: () => new Map([['s1', { id: 's1', header: { agentPreset: 'kernel-opt' }, events }]]),
  persistence: () => undefined,
  loopJson: () => loopJson(config, false),
})

/** Serves `handler` (guarded) on 127.0.0.1 for one test; call(path, {method, headers, body}) answers {status, headers, text}. */
async function serve(t, handler, guard = {}) {
  const server = http.createServer(guarded(handler, { trustedHosts: () => [], ...guard }))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  const { port } = server.address()
  return (path, { method = 'GET', headers = {}, body } = {}) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

test('the guard: an untrusted Host is refused (403), a missing core answers 503, a thrown error 500', async (t) => {
  let call = await serve(t, async () => { throw new Error('boom') })
  assert.equal((await call('/x', { headers: { host: 'evil.example' } })).status, 403)
  const failed = await call('/x')
  assert.deepEqual([failed.status, JSON.parse(failed.text)], [500, { error: 'boom' }])
  call = await serve(t, async () => assert.fail('not reached'), { unavailable: () => 'no kopt.node' })
  const none = await call('/x')
  assert.deepEqual([none.status, JSON.parse(none.text)], [503, { error: 'no kopt.node' }])
})

test('/series: the session\'s answer, 304 for its ETag, HEAD without the body, the delta since a revision; 400/404/405', async (t) => {
  const call = await serve(t, seriesRoute({ store: liveStore() }))
  const r = await call('/series?sessionId=s1')
  assert.equal(r.status, 200)
  assert.equal(r.headers['x-kernel-opt-source'], 'live')
  assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.text))
  const body = JSON.parse(r.text)
  assert.equal(body.control.loop.armed, false)
  assert.equal((await call('/series?sessionId=s1', { headers: { 'if-none-match': r.headers.etag } })).status, 304)
  const head = await call('/series?sessionId=s1', { method: 'HEAD' })
  assert.deepEqual([head.status, head.text, head.headers['content-length']], [200, '', r.headers['content-length']])
  const delta = JSON.parse((await call(`/series?sessionId=s1&since=${r.headers['x-kopt-revision']}`)).text)
  assert.notEqual(delta.kind, 'full')
  assert.equal(JSON.parse((await call('/series?sessionId=s1&since=x')).text).kind, 'full')
  assert.equal((await call('/series')).status, 400)
  assert.equal((await call('/series?sessionId=a%20b')).status, 400)
  assert.equal((await call('/series?sessionId=nobody')).status, 404)
  assert.equal((await call('/series?sessionId=s1', { method: 'POST' })).status, 405)
})

test('/csv: the core\'s CSV of the run', async (t) => {
  const store = liveStore()
  const call = await serve(t, exportRoute({ store }, 'csv'))
  const r = await call('/csv?sessionId=s1')
  assert.equal(r.status, 200)
  assert.match(r.headers['content-type'], /^text\/csv/)
  assert.equal(r.text, store.getLive('s1').csv())
  assert.equal((await call('/csv?sessionId=s1', { method: 'HEAD' })).status, 405)
  assert.equal((await call('/csv?sessionId=nobody')).status, 404)
})

// Issue 49: the run's JSON and its markdown table, the core's (kopt report --json / --md), with the
// points' intervals and labels; the markdown in the asked language, a language it has not refused.
test('/json and /markdown: the core\'s exports of the run, intervals included', async (t) => {
  const noise = JSON.parse(fs.readFileSync(new URL('../fixtures/vectors/s01-compare-rule-labels.events.json', import.meta.url), 'utf8'))
  const store = createStore(kopt, config, {
    sessions: () => new Map([['n1', { id: 'n1', header: { agentPreset: 'kernel-opt' }, events: noise }]]),
    persistence: () => undefined,
    loopJson: () => loopJson(config, false),
  })
  const json = await serve(t, exportRoute({ store }, 'json'))
  const r = await json('/json?sessionId=n1')
  assert.equal(r.status, 200)
  assert.match(r.headers['content-type'], /^application\/json/)
  assert.equal(r.text, store.getLive('n1').json())
  const body = JSON.parse(r.text)
  assert.equal(body.kind, 'kopt-report')
  assert.deepEqual(body.rows[1].latencyCi, [1.499, 1.501])
  assert.equal(body.rows[1].samples, 25)
  assert.equal(body.rows[1].vsBest, 'faster')
  assert.equal(body.rows[1].vsReference, 'faster')
  assert.equal(body.rows[3].latencyCi, undefined)
  const md = await serve(t, exportRoute({ store }, 'markdown'))
  const en = await md('/markdown?sessionId=n1&lang=en')
  assert.equal(en.status, 200)
  assert.match(en.headers['content-type'], /^text\/markdown/)
  assert.equal(en.text, store.getLive('n1').markdown('en'))
  assert.match(en.text, /\| 2 \|  \| 1\.500ms \| ± 0\.1% \| 25 \| faster 25\.0% ± 1\.0 · #1 \|/)
  const zh = await md('/markdown?sessionId=n1')
  assert.match(zh.text, /\| 更快 25\.0% ± 1\.0 · #1 \|/, 'zh by default')
  assert.equal((await md('/markdown?sessionId=n1&lang=fr')).status, 400)
  assert.equal((await md('/markdown?sessionId=n1', { method: 'POST' })).status, 405)
  assert.equal((await json('/json?sessionId=nobody')).status, 404)
  assert.throws(() => exportRoute({ store }, 'xml'), /unknown format/)
})

test('/control: GET the control object as the session writes it; POST through the loop, its answer written as it is', async (t) => {
  const store = liveStore()
  const acted = []
  const loop = { act: async (id, session, body) => { acted.push([id, body.action]); return { status: 409, body: '{"error":"locked"}' } } }
  const call = await serve(t, controlRoute({ store, loop, changed: (id) => acted.push(['changed', id]) }))
  const got = await call('/control?sessionId=s1')
  assert.equal(got.status, 200)
  assert.equal(got.text, `{"control":${store.getLive('s1').control}}`)
  const post = (body) => call('/control', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const r = await post({ sessionId: 's1', action: 'supervise-on' })
  assert.deepEqual([r.status, r.text], [409, '{"error":"locked"}'])
  assert.deepEqual(acted, [['s1', 'supervise-on'], ['changed', 's1']])
  assert.equal((await post({ action: 'loop-arm' })).status, 400)
  assert.equal((await post({ sessionId: '../x' })).status, 400)
  assert.equal((await call('/control', { method: 'POST', body: 'not json' })).status, 400)
  assert.equal((await call('/control?sessionId=s1', { method: 'PUT' })).status, 405)
  // Without the loop machinery: a stop is no error (nothing is armed), anything else 503.
  const bare = await serve(t, controlRoute({ store, loop: undefined, changed: () => {} }))
  const stop = await bare('/control', { method: 'POST', body: JSON.stringify({ sessionId: 's1', action: 'loop-stop' }) })
  assert.deepEqual([stop.status, stop.text], [200, got.text])
  assert.equal((await bare('/control', { method: 'POST', body: JSON.stringify({ sessionId: 's1', action: 'loop-arm' }) })).status, 503)
})

test('/push without an upgrade: 426 with the hub\'s counters', async (t) => {
  const call = await serve(t, pushRoute({ hub: { snapshot: () => ({ rooms: 0 }) } }))
  const r = await call('/push')
  assert.deepEqual([r.status, r.headers.upgrade, JSON.parse(r.text)], [426, 'websocket', { error: 'websocket upgrade required', push: { rooms: 0 } }])
})

test('/models: the providers the host knows, one model\'s efforts, 404 for an unknown one, 400 for half a pair', async (t) => {
  const llm = {
    listProviders: () => [{ id: 'p', name: 'P' }, { id: 'broken' }],
    listModels: async (id) => { if (id === 'broken') throw new Error('down'); return [{ id: 'm' }] },
    resolveModelInfo: async (provider, model) => (model === 'm' ? { id: 'm', reasoning: { efforts: [{ id: 'low' }], defaultEffort: 'low' } } : undefined),
  }
  const call = await serve(t, modelsRoute({ llm: () => llm }))
  assert.deepEqual(JSON.parse((await call('/models')).text), {
    providers: [{ id: 'p', name: 'P', models: [{ id: 'm', name: 'm' }] }, { id: 'broken', name: 'broken', models: [] }],
  })
  assert.deepEqual(JSON.parse((await call('/models?provider=p&model=m')).text), {
    provider: 'p', id: 'm', name: 'm', reasoning: { efforts: [{ id: 'low', name: 'low' }], defaultEffort: 'low' },
  })
  assert.equal((await call('/models?provider=p&model=x')).status, 404)
  assert.equal((await call('/models?provider=p')).status, 400)
  assert.equal((await call('/models', { method: 'POST' })).status, 405)
  const none = await serve(t, modelsRoute({ llm: () => undefined }))
  assert.deepEqual(JSON.parse((await none('/models')).text), { providers: [] })
})
