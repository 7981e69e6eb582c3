// dsh-kernel-opt — the profile half (mounted by cordis.patch.yml in every session of the profile).
//
// What it does, and nothing more:
//   * keeps one kopt.Session per watched session (lib/store.mjs: the whole session in C++ — its
//     projection, the /series body per revision, its loop), fed incrementally from `session/event`;
//   * serves /plugins/kernel-opt/{series,control,models,csv,json,markdown,compare} (lib/routes/: one module
//     each, the three exports one) and
//     pushes each new revision to the tabs subscribed on /plugins/kernel-opt/push (WebSocket, lib/push.mjs);
//     sessions that are not live are projected from the host's session persistence, so a past session
//     renders as it did live;
//   * syncs the bundled preset into the user preset root (lib/preset.mjs; C++: kopt.syncPreset);
//   * publishes the `kernelOpt` service the agent-plane rows (lib/agent.mjs, lib/self-compact.mjs)
//     read: the resolved config, the addon, projectors, the loop service.
// Every decision about a run is made in C++ (kopt.node); this file only wires the parts together.
import {
  COMPARE_PATH, CONTROL_PATH, CSV_PATH, JSON_PATH, MARKDOWN_PATH, MODELS_PATH, PLUGIN_ID, PUSH_PATH, SERIES_PATH, loopJson, resolveConfig,
} from './config.mjs'
import { Service } from './host.mjs'
import { loadKopt } from './native/load.mjs'
import { checkTrust, guarded, validSessionId } from './http.mjs'
import { createPushHub } from './push.mjs'
import { registerLoop } from './loop.mjs'
import { createStore } from './store.mjs'
import { createEvaluator } from './evaluate.mjs'
import { bundledPresetDir, syncPreset } from './preset.mjs'
import { compareRoute } from './routes/compare.mjs'
import { controlRoute } from './routes/control.mjs'
import { exportRoute } from './routes/export.mjs'
import { modelsRoute } from './routes/models.mjs'
import { pushRoute } from './routes/push.mjs'
import { seriesRoute } from './routes/series.mjs'

export const name = PLUGIN_ID
export const inject = ['sessions', 'agents']
export { bundledPresetDir }

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

  // ── preset sync (spec R, lib/preset.mjs) ──
  ctx.inject(['agentPresets'], (pctx) => {
    if (config.preset.install && kopt !== undefined) syncPreset(kopt, config, pctx.agentPresets)
  })

  // ── routes (lib/routes/: one module per route; lib/http.mjs guards each) ──
  const route = (path, handler, label, needsCore = true) => {
    const unavailable = () => (needsCore && store === undefined ? kopterror ?? 'native core unavailable' : undefined)
    ctx.inject(['webServer'], (wctx) => {
      wctx.effect(() => wctx.webServer.register({ kind: 'exact', path, handler: guarded(handler, { trustedHosts, unavailable }) }), label)
    })
  }
  const changed = (id) => hub?.changed(id)
  route(SERIES_PATH, seriesRoute({ store }), 'kernel-opt: series route')
  route(CSV_PATH, exportRoute({ store }, 'csv'), 'kernel-opt: csv route')
  route(JSON_PATH, exportRoute({ store }, 'json'), 'kernel-opt: json route')
  route(MARKDOWN_PATH, exportRoute({ store }, 'markdown'), 'kernel-opt: markdown route')
  route(CONTROL_PATH, controlRoute({ store, loop, changed }), 'kernel-opt: control route')
  // Each session as /series reads it, never waited for.
  route(COMPARE_PATH, compareRoute({ kopt, getView: (id, o) => store.getView(id, o), held: (id) => store.held(id) }), 'kernel-opt: compare route')
  if (hub !== undefined) {
    ctx.inject(['webServer'], (wctx) => {
      wctx.effect(() => wctx.webServer.registerUpgrade({ path: PUSH_PATH, handler: (req, socket, head) => hub.upgrade(req, socket, head) }), 'kernel-opt: push upgrade')
    })
  }
  route(PUSH_PATH, pushRoute({ hub }), 'kernel-opt: push route')
  route(MODELS_PATH, modelsRoute({ llm: () => llm }), 'kernel-opt: models route', false)
}

/**
 * What a tab at revision `since` needs, as one JSON text in Buffers to write in order: the
 * session's delta when the core keeps that revision, else the whole body marked
 * {"kind":"full","revision":R,"body":…} (the body's bytes shared with the session, not copied).
 */
export function pushPayload(session, since) {
  return session.parts(since ?? -1)
}

export { PLUGIN_ID }
