// dsh-kernel-opt — the profile half (mounted by cordis.patch.yml in every session of the profile).
//
// What it does, and nothing more:
//   * keeps one kopt.Session per watched session (lib/store.mjs: the whole session in C++ — its
//     projection, the /series body per revision, its loop), fed incrementally from `session/event`;
//   * serves /plugins/kernel-opt/{series,control,models,csv,compare} and pushes each new revision to the tabs
//     subscribed on /plugins/kernel-opt/push (WebSocket, lib/push.mjs); sessions that are not live are projected
//     from the host's session persistence, so a past session renders as it did live;
//   * syncs the bundled preset into the user preset root (C++: kopt.syncPreset);
//   * publishes the `kernelOpt` service the agent-plane rows (lib/agent.mjs, lib/self-compact.mjs)
//     read: the resolved config, the addon, projectors, the loop service.
// Every decision about a run is made in C++ (kopt.node); this file moves data.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  COMPARE_PATH, CONTROL_PATH, CSV_PATH, DEFAULT_PRESET_ID, MODELS_PATH, PLUGIN_ID, PUSH_PATH, SERIES_PATH, loopJson, resolveConfig,
} from './config.mjs'
import { Service } from './host.mjs'
import { loadKopt } from './native/load.mjs'
import { checkTrust, jsonResponse, readJsonBody, validSessionId } from './http.mjs'
import { createPushHub } from './push.mjs'
import { runsOf, writeRuns } from './paced.mjs'
import { registerLoop } from './loop.mjs'
import { createStore } from './store.mjs'
import { createCompareRoute } from './compare.mjs'
import { createEvaluator } from './evaluate.mjs'

export const name = PLUGIN_ID
export const inject = ['sessions', 'agents']

const here = dirname(fileURLToPath(import.meta.url))
export const bundledPresetDir = join(here, '../preset', DEFAULT_PRESET_ID)

/** The service the agent-plane rows inject (cordis service name `kernelOpt`). */
export class KernelOptService extends Service {
  constructor(ctx, deps) {
    super(ctx, 'kernelOpt')
    this.config = deps.config
    this.kopt = deps.kopt
    this.kopterror = deps.kopterror
    this.getProjector = deps.getProjector
    this.getView = deps.getView
    this.loop = deps.loop
    this.evaluator = deps.evaluator
    this.presetId = deps.config.preset.id
  }
}

export function apply(ctx, rawConfig) {
  let kopt
  let kopterror
  try {
    kopt = loadKopt().mod
  } catch (error) {
    kopterror = error instanceof Error ? error.message : String(error)
    console.error(`[kernel-opt] ${kopterror}`)
  }
  // The loop settings are validated against the core's own defaults and bounds (kopt.loopRules).
  const { config, errors } = resolveConfig(rawConfig, kopt?.loopRules ?? null)
  for (const line of errors) console.warn(`[kernel-opt] ${line}`)

  let persistence
  ctx.inject(['sessionPersistence'], (sctx) => {
    persistence = sctx.sessionPersistence
    sctx.effect(() => () => { persistence = undefined }, 'kernel-opt: persistence')
  })
  let llm
  ctx.inject(['llm'], (lctx) => {
    llm = lctx.llm
    lctx.effect(() => () => { llm = undefined }, 'kernel-opt: llm')
  })
  // The host's own trusted authorities (LAN literals, --trusted-host), where this host version
  // publishes them; ours from config come on top.
  const hostTrusted = { webRuntime: [], webStartup: [] }
  for (const svc of ['webRuntime', 'webStartup']) {
    ctx.inject([svc], (tctx) => {
      const list = tctx[svc]?.trustedHosts
      hostTrusted[svc] = Array.isArray(list) ? list.filter(x => typeof x === 'string') : []
      tctx.effect(() => () => { hostTrusted[svc] = [] }, `kernel-opt: ${svc} trust`)
    })
  }
  const trustedHosts = () => [...config.trustedHosts, ...hostTrusted.webRuntime, ...hostTrusted.webStartup]

  // The loop (lib/loop.mjs) is each Session's; it can run only when the host composed agents and
  // this plugin's loop service registered.
  let loop
  let evaluator // kernel_evaluate's (below); the store asks it for a session's place in its queue
  const store = kopt === undefined ? undefined : createStore(kopt, config, {
    sessions: () => ctx.sessions,
    persistence: () => persistence,
    caughtUp: (id) => hub?.changed(id),
    loopJson: () => loopJson(config, loop !== undefined && loop.available === true),
    evaluation: (id) => evaluator?.stateFor(id),
  })
  const getProjector = (id) => store?.getLive(id)?.projector
  const getView = async (id) => {
    const view = await store?.getView(id)
    return view?.session === undefined ? undefined : { projector: view.session.projector, live: view.live, updatedAt: view.session.updatedAt }
  }

  // The loop's host half (/kloop, /supervise, lib/loop.mjs): a LoopService {available, act(), command(), dispose()}.
  if (kopt !== undefined) {
    try {
      loop = registerLoop(ctx, { store, kopt, config }) ?? undefined
    } catch (error) {
      console.warn(`[kernel-opt] registerLoop failed; the loop stays unavailable: ${error?.stack ?? error}`)
    }
    if (loop && typeof loop.dispose === 'function') ctx.effect(() => () => loop.dispose(), 'kernel-opt: loop')
  }

  // kernel_evaluate's evaluator (lib/evaluate.mjs): the warm judge, the queue across sessions, the store.
  // A change in a session's place in the queue is told to its Session objects (their control
  // carries it as `evaluation`) and pushed to its tabs.
  evaluator = kopt === undefined ? undefined : createEvaluator({
    kopt,
    config,
    onChange: (ids) => {
      for (const id of ids) {
        store?.evaluationChanged(id)
        hub?.changed(id)
      }
    },
  })
  if (evaluator !== undefined) ctx.effect(() => () => { evaluator.dispose() }, 'kernel-opt: evaluator')

  new KernelOptService(ctx, { config, kopt, kopterror, getProjector, getView, loop, evaluator })

  // Live push (lib/push.mjs): every tab of a session gets each new revision's answer, framed once.
  let hub
  if (store !== undefined) {
    hub = createPushHub({
      fence: (req) => checkTrust(req, trustedHosts()),
      validId: validSessionId,
      open: async (id) => {
        const view = await store.getView(id)
        if (view === undefined) return { status: 404, error: 'unknown session' }
        if (view.error !== undefined) return { status: 422, error: `session log unreadable: ${view.error}` }
        return { st: view.session }
      },
      // The live Session once its projection is whole; the one the room opened with until then.
      current: (id, session) => store.whole(id) ?? session,
      revise: (id, session) => session.revise(),
      payload: (id, session, since) => pushPayload(session, since),
    }, {
      highWater: config.push.bufferKiB * 1024, maxQueueBytes: config.push.queueKiB * 1024, stalledMs: config.push.stalledSec * 1000,
    })
    ctx.effect(() => () => hub.dispose(), 'kernel-opt: push hub')
  }

  if (store !== undefined) {
    ctx.on('session/event', (session, event) => {
      try {
        store.onEvent(session, event, config.preset.id)
      } catch (error) {
        console.warn(`[kernel-opt] projection feed failed for ${session?.id}: ${error?.message ?? error}`)
      }
      if (typeof session?.id === 'string') hub.changed(session.id)
    })
    ctx.on('agent/disposed', (payload) => {
      const id = payload?.agent?.id
      if (typeof id === 'string') store.forget(id)
    })
  }

  // ── preset sync (spec R) ──
  ctx.inject(['agentPresets'], (pctx) => {
    if (!config.preset.install) return
    if (kopt === undefined) return
    try {
      const roots = pctx.agentPresets?.roots
      const list = Array.isArray(roots) ? roots : typeof roots === 'function' ? roots.call(pctx.agentPresets) : []
      const userRoot = Array.isArray(list) ? list.find(r => r && r.trust === 'user' && typeof r.path === 'string') : undefined
      if (userRoot === undefined) {
        console.warn('[kernel-opt] preset sync skipped: no user preset root / 没有用户预设目录')
        return
      }
      const target = join(userRoot.path, config.preset.id) // the addon expands a leading ~
      const report = kopt.syncPreset(bundledPresetDir, target)
      for (const line of report.log) console.warn(`[kernel-opt] ${line}`)
      if (config.preset.id !== DEFAULT_PRESET_ID) {
        console.warn(`[kernel-opt] preset installed as "${config.preset.id}"`)
      }
    } catch (error) {
      console.warn(`[kernel-opt] preset sync failed (the plugin works without it): ${error?.message ?? error}`)
    }
  })

  // ── routes ──
  // The control object (P-4) as the session makes it (its loop, and its place in the evaluation queue).
  const controlOf = (session) => ({ control: JSON.parse(session.control) })

  const route = (path, handler, label) => {
    ctx.inject(['webServer'], (wctx) => {
      wctx.effect(() => wctx.webServer.register({
        kind: 'exact',
        path,
        handler: async (req, res) => {
          try {
            if (!checkTrust(req, trustedHosts())) {
              jsonResponse(res, 403, { error: 'forbidden: untrusted Host or Origin' })
              return
            }
            if (store === undefined && path !== MODELS_PATH) {
              jsonResponse(res, 503, { error: kopterror ?? 'native core unavailable' })
              return
            }
            await handler(req, res)
          } catch (error) {
            if (!res.headersSent) jsonResponse(res, 500, { error: error instanceof Error ? error.message : String(error) })
            else res.destroy()
          }
        },
      }), label)
    })
  }

  const sessionParam = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://kernel-opt.invalid')
    const id = url.searchParams.get('sessionId')
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

  // The session's view, or undefined after answering 404 (unknown) or 422 (a log that exists but
  // cannot be read, with the host's reason).
  // wait = false (/series): a past session whose log is still being read answers 202 {loading: true}
  // at once, with Retry-After; the tab shows "loading" and asks again (docs/protocol.md).
  // /control waits for the log instead.
  const viewOrAnswer = async (res, id, wait = false) => {
    const view = await store.getView(id, { wait })
    if (view === undefined) {
      jsonResponse(res, 404, { error: 'unknown session' })
      return undefined
    }
    if (view.loading === true) {
      res.writeHead(202, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'retry-after': '1' })
      res.end(JSON.stringify({ loading: true, sessionId: id }))
      return undefined
    }
    if (view.error !== undefined) {
      jsonResponse(res, 422, { error: `session log unreadable: ${view.error}` })
      return undefined
    }
    return view
  }

  // The session object brings its revision up to date (projection, updatedAt, and the control its
  // own loop makes) and, only for a 200, hands out the answer of that revision as bytes assembled
  // once: revise(), then parts(); nothing else of the session crosses.
  route(SERIES_PATH, async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const id = sessionParam(req, res)
    if (id === undefined) return
    const view = await viewOrAnswer(res, id)
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
    const since = new URL(req.url ?? '/', 'http://kernel-opt.invalid').searchParams.get('since')
    const parts = session.parts(since === null ? null : /^\d{1,16}$/.test(since) ? Number(since) : -1)
    const length = parts.reduce((n, b) => n + b.length, 0)
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(length), ...headers })
    if (req.method === 'HEAD') { res.end(); return }
    // A full body at 1M events is 33 MB in ~130 pieces: written 1 MB per event-loop turn
    // (lib/paced.mjs), not in one system call that holds the host's thread.
    writeRuns(res, runsOf(parts), undefined, { end: true })
  }, 'kernel-opt: series route')

  // The run as CSV for the tab's export: the core's (the offline report's columns), not the tab's own.
  route(CSV_PATH, async (req, res) => {
    if (req.method !== 'GET') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const id = sessionParam(req, res)
    if (id === undefined) return
    const view = await viewOrAnswer(res, id, true)
    if (view === undefined) return
    const body = Buffer.from(view.session.csv(), 'utf8')
    res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(body.length) })
    res.end(body)
  }, 'kernel-opt: csv route')

  route(CONTROL_PATH, async (req, res) => {
    if (req.method === 'GET') {
      const id = sessionParam(req, res)
      if (id === undefined) return
      const view = await viewOrAnswer(res, id, true)
      if (view === undefined) return
      jsonResponse(res, 200, controlOf(view.session))
      return
    }
    if (req.method !== 'POST') {
      jsonResponse(res, 405, { error: 'GET or POST only' })
      return
    }
    const body = await readJsonBody(req, 16_384)
    if (body === null) {
      jsonResponse(res, 400, { error: 'JSON body required' })
      return
    }
    const id = body.sessionId
    if (typeof id !== 'string' || id === '') {
      jsonResponse(res, 400, { error: 'sessionId required' })
      return
    }
    if (!validSessionId(id)) {
      jsonResponse(res, 400, { error: 'invalid sessionId' })
      return
    }
    const view = await viewOrAnswer(res, id, true)
    if (view === undefined) return
    // The action is checked and applied in C++ (loop_control.cpp apply_control): one place, one limit.
    if (loop === undefined || typeof loop.act !== 'function') {
      if (body.action === 'loop-stop') {
        jsonResponse(res, 200, controlOf(view.session)) // nothing armed: not an error (M-9)
        return
      }
      jsonResponse(res, 503, { error: 'loop machinery unavailable / 循环功能不可用' })
      return
    }
    const result = await loop.act(id, view.session, body)
    hub?.changed(id) // the control object is part of the revision
    jsonResponse(res, result.status, result.body ?? controlOf(view.session))
  }, 'kernel-opt: control route')

  // The sessions compared side by side (lib/compare.mjs): each as /series reads it, never waited for.
  route(COMPARE_PATH, createCompareRoute({ kopt, getView: (id, o) => store.getView(id, o), held: (id) => store.held(id) }), 'kernel-opt: compare route')

  // The push socket itself is an upgrade; a plain GET says so and shows the hub's counters.
  if (hub !== undefined) {
    ctx.inject(['webServer'], (wctx) => {
      wctx.effect(() => wctx.webServer.registerUpgrade({ path: PUSH_PATH, handler: (req, socket, head) => hub.upgrade(req, socket, head) }), 'kernel-opt: push upgrade')
    })
  }
  route(PUSH_PATH, async (req, res) => {
    res.writeHead(426, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', upgrade: 'websocket' })
    res.end(JSON.stringify({ error: 'websocket upgrade required', push: hub?.snapshot() }))
  }, 'kernel-opt: push route')

  route(MODELS_PATH, async (req, res) => {
    if (req.method !== 'GET') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const url = new URL(req.url ?? '/', 'http://kernel-opt.invalid')
    const provider = url.searchParams.get('provider')
    const model = url.searchParams.get('model')
    if ((provider === null) !== (model === null) || provider === '' || model === '') {
      jsonResponse(res, 400, { error: 'provider and model go together' })
      return
    }
    if (provider !== null) {
      if (provider.length > 200 || model.length > 200) {
        jsonResponse(res, 400, { error: 'provider or model too long' })
        return
      }
      let info
      try {
        info = await llm?.resolveModelInfo(provider, model)
      } catch {
        info = undefined
      }
      if (!info) {
        jsonResponse(res, 404, { error: 'unknown model' })
        return
      }
      jsonResponse(res, 200, modelInfoWire(info, provider, model))
      return
    }
    const providers = []
    try {
      const list = (llm?.listProviders?.() ?? []).slice(0, 20)
      for (const p of list) {
        let models = []
        try {
          models = ((await llm.listModels(p.id)) ?? []).slice(0, 50).map(m => ({ id: String(m.id), name: String(m.name ?? m.id) }))
        } catch {
          models = []
        }
        providers.push({ id: String(p.id), name: String(p.name ?? p.id), models })
      }
    } catch {
      // discovery failure -> the empty list
    }
    jsonResponse(res, 200, { providers })
  }, 'kernel-opt: models route')
}

/**
 * What a tab at revision `since` needs, as one JSON text in Buffers to write in order: the
 * session's delta when the core keeps that revision, else the whole body marked
 * {"kind":"full","revision":R,"body":…} (the body's bytes shared with the session, not copied).
 */
export function pushPayload(session, since) {
  return session.parts(since ?? -1)
}

function modelInfoWire(info, provider, model) {
  const out = { provider: String(info.provider ?? provider), id: String(info.id ?? model), name: String(info.name ?? info.id ?? model) }
  const r = info.reasoning
  if (r && Array.isArray(r.efforts)) {
    out.reasoning = {
      efforts: r.efforts.map(e => ({ id: String(e.id), name: String(e.name ?? e.id), ...(typeof e.description === 'string' ? { description: e.description } : {}) })),
      ...(r.defaultEffort !== undefined ? { defaultEffort: String(r.defaultEffort) } : {}),
    }
  }
  return out
}

export { PLUGIN_ID }
