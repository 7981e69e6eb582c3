// dsh-kernel-opt — the profile half (mounted by cordis.patch.yml in every session of the profile).
//
// What it does, and nothing more:
//   * keeps one kopt.Session (its Projector, updatedAt, the /series body per revision) per watched
//     session, fed incrementally from `session/event` (a session's first query, or its first event
//     when it runs in our mode, catches up from `session.events`; later events are fed one by one);
//   * serves /plugins/kernel-opt/{series,control,models,compare} and pushes each new revision to the tabs
//     subscribed on /plugins/kernel-opt/push (WebSocket, lib/push.mjs); sessions that are not live are projected
//     from the host's session persistence, so a past session renders as it did live;
//   * syncs the bundled preset into the user preset root (C++: kopt.syncPreset);
//   * publishes the `kernelOpt` service the agent-plane rows (lib/agent.mjs, lib/self-compact.mjs)
//     read: the resolved config, the addon, projectors, the loop service.
// Every decision about a run is made in C++ (kopt.node); this file moves data.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stat } from 'node:fs/promises'
import {
  COMPARE_PATH, CONTROL_PATH, DEFAULT_PRESET_ID, MODELS_PATH, PLUGIN_ID, PUSH_PATH, SERIES_PATH, resolveConfig, routingJson,
} from './config.mjs'
import { Service } from './host.mjs'
import { loadKopt } from './native/load.mjs'
import { checkTrust, jsonResponse, readJsonBody, validSessionId } from './http.mjs'
import { createPushHub } from './push.mjs'
import { runsOf, writeRuns } from './paced.mjs'
import { registerLoop } from './loop.mjs'
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

// Catch-up feeds the addon slices of the log, never the whole log as one JSON tree.
const FEED_SLICE = 2048
// A live session first met with a longer backlog than this (a past session resumed, a plugin loaded
// late) is caught up one slice per event-loop turn, not in one go on the host's thread (a 1M-event
// log costs seconds to feed). Meanwhile /series answers as for a past session being read.
const PACED_BACKLOG = 4 * FEED_SLICE
// Past sessions kept projected: at most this many, and at most this many bytes held in C++ in all
// (session.memoryBytes; a 50k-point session holds ~100–200 MB), least recently asked for first out.
// The session asked for last is kept whatever its size.
const PAST_CACHE_MAX = 16
const PAST_CACHE_BYTES = 512 * 1024 * 1024
// A past session's log is re-read when it changed (another DSH process may have continued it): its
// size and mtime are looked at no more often than this; the previous projection answers while the
// new one is read. A log the host cannot name a file for is re-read after PAST_TTL_MS instead.
const IDENTITY_CHECK_MS = 2_000
const PAST_TTL_MS = 300_000
// How long /series waits for a past session's log before answering 202 {loading}.
const QUICK_ANSWER_MS = 50

/** A log file's identity: it changed when its size or mtime did. */
async function identityOf(file) {
  const st = await stat(file)
  return `${st.size}:${st.mtimeMs}`
}

/**
 * Creates the session-projection store (host-independent, unit-tested in tests/lib).
 * @param kopt the addon; @param config the resolved config; @param hooks {sessions, persistence(),
 * caughtUp?(id): a paced catch-up ended}.
 */
export function createStore(kopt, config, hooks) {
  const routing = routingJson(config)
  const live = new Map() // sessionId -> {s, next, unreadable}
  const past = new Map() // sessionId -> {promise, at, …} (order: least recently asked for first)
  const pastBytesMax = hooks.pastCacheBytes ?? PAST_CACHE_BYTES

  // Drops the least recently asked-for past sessions while there are too many or they hold too
  // many bytes; the dropped Session objects are released when nothing else holds them.
  const trimPast = () => {
    let bytes = 0
    for (const e of past.values()) bytes += e.bytes ?? 0
    for (const [id, e] of past) {
      if (past.size <= 1 || (past.size <= PAST_CACHE_MAX && bytes <= pastBytesMax)) break
      past.delete(id)
      bytes -= e.bytes ?? 0
    }
  }

  // s: the kopt.Session (projector, updatedAt, the /series body per revision); next: events fed;
  // unreadable: events the addon could not read (nested too deep), skipped and counted.
  const newState = (id) => ({ id, s: new kopt.Session(id, routing), next: 0, unreadable: 0 })
  // Too deep for the addon's bounded parser (KOPT_BAD_EVENTS) or for JSON.stringify itself (RangeError).
  const unreadable = (error) => error?.code === 'KOPT_BAD_EVENTS' || error instanceof RangeError
  const feed = (st, events) => {
    for (let i = 0; i < events.length; i += FEED_SLICE) {
      const slice = events.slice(i, i + FEED_SLICE)
      try {
        st.s.feed(JSON.stringify(slice))
      } catch (error) {
        if (!unreadable(error)) throw error
        // One unreadable event must not cost the others: feed the slice one event at a time.
        for (const e of slice) {
          try {
            st.s.feed(JSON.stringify(e) ?? 'null')
          } catch (inner) {
            if (!unreadable(inner)) throw inner
            st.unreadable += 1
          }
        }
      }
    }
  }
  // A paced catch-up: the log as it was when it began, fed a slice per turn; events appended
  // meanwhile are caught up when it ends. finishPaced feeds what is left at once.
  const startPaced = (st, session, events) => {
    const job = { events, timer: undefined }
    job.done = new Promise((resolve) => { job.resolve = resolve })
    const step = () => {
      job.timer = undefined
      if (st.job !== job) return
      try {
        const end = Math.min(events.length, st.next + FEED_SLICE)
        feed(st, events.slice(st.next, end))
        st.next = end
        if (st.next < events.length) {
          job.timer = setImmediate(step)
          return
        }
        st.job = undefined
        catchUp(st, session)
      } catch (error) {
        st.job = undefined // the next request catches up from st.next at once
        console.warn(`[kernel-opt] catch-up of ${st.id} failed: ${error?.message ?? error}`)
      }
      job.resolve()
      hooks.caughtUp?.(st.id)
    }
    st.job = job
    job.timer = setImmediate(step)
  }
  const stopPaced = (st) => {
    if (st?.job === undefined) return undefined
    const job = st.job
    if (job.timer !== undefined) clearImmediate(job.timer)
    st.job = undefined
    job.resolve()
    return job
  }
  const finishPaced = (st) => {
    const job = stopPaced(st)
    if (job !== undefined && job.events.length > st.next) {
      feed(st, job.events.slice(st.next))
      st.next = job.events.length
    }
  }
  // paced: a long backlog may be caught up over several turns (st.job meanwhile); otherwise the
  // projection is whole when this returns.
  const catchUp = (st, session, paced = false) => {
    if (st.job !== undefined) {
      if (paced) return
      finishPaced(st)
    }
    // session.seq is the log's length; session.events copies and freezes the whole log whenever
    // it grew, so it is read only when there is something to catch up.
    if (typeof session.seq === 'number' && session.seq <= st.next) return
    const events = session.events
    if (Array.isArray(events) && events.length > st.next) {
      if (paced && events.length - st.next > PACED_BACKLOG) {
        startPaced(st, session, events)
        return
      }
      feed(st, events.slice(st.next))
      st.next = events.length
    }
  }
  // Where the host keeps a past session's log, when its persistence can say (the JSONL backend's
  // findLog): the addon then reads and projects the file on a worker thread (kopt.loadSession),
  // never the whole log as events on this thread. null: the host has no log of that id.
  const logFile = async (persistence, sessionId) => {
    if (typeof persistence.findLog !== 'function' || typeof kopt.loadSession !== 'function') return undefined
    const file = await persistence.findLog(sessionId)
    if (typeof file !== 'string' || file === '') return null
    return { file, identity: await identityOf(file) }
  }
  const liveSession = (id) => {
    try {
      return hooks.sessions()?.get(id)
    } catch {
      return undefined
    }
  }

  /**
   * The live projector of a session, caught up; undefined when the session is not live. paced: a
   * long backlog may be left catching up (st.job set), for a caller that can answer "loading".
   */
  const getProjector = (sessionId, { paced = false } = {}) => {
    const session = liveSession(sessionId)
    if (session === undefined) {
      forget(sessionId)
      return undefined
    }
    let st = live.get(sessionId)
    if (st === undefined) {
      st = newState(sessionId)
      live.set(sessionId, st)
    }
    catchUp(st, session, paced)
    return st
  }

  /** A live session's event (the `session/event` listener). */
  const onEvent = (session, event, watchPreset) => {
    const id = session?.id
    if (typeof id !== 'string') return
    let st = live.get(id)
    if (st === undefined) {
      if (session.header?.agentPreset !== watchPreset) return
      st = newState(id)
      live.set(id, st)
      catchUp(st, session, true)
      return
    }
    if (st.job !== undefined) return // the paced catch-up takes this event when it ends
    const seq = event?.seq
    if (seq === st.next) {
      feed(st, [event])
      st.next += 1
    } else if (typeof seq === 'number' && seq > st.next) {
      catchUp(st, session)
    }
  }

  const forget = (sessionId) => {
    stopPaced(live.get(sessionId))
    live.delete(sessionId)
  }

  /**
   * Live first, then persistence. Resolves {st, live}, {error} (the log exists but cannot be read:
   * its reason), or undefined (unknown session).
   */
  const getView = async (sessionId, { wait = true } = {}) => {
    // A live session still catching up is waited for (not finished on this thread) or, without
    // waiting, answered by its past projection when at hand, else as loading.
    let st = getProjector(sessionId, { paced: true })
    while (wait && st?.job !== undefined) {
      await st.job.done
      st = getProjector(sessionId, { paced: true })
    }
    if (st !== undefined && st.job === undefined) return { st, live: true }
    if (st !== undefined) {
      // Still catching up: the past projection of the same log answers meanwhile when it is at hand.
      const entry = past.get(sessionId)
      const pst = entry?.settled ? await entry.promise : undefined
      return pst?.s !== undefined ? { st: pst, live: false } : { loading: true }
    }
    const persistence = hooks.persistence()
    if (persistence === undefined || typeof persistence.inspect !== 'function') return undefined
    const now = Date.now()
    let entry = past.get(sessionId)
    let stale
    if (entry !== undefined && entry.settled && entry.file !== undefined) {
      if (now - entry.checkedAt > IDENTITY_CHECK_MS) {
        entry.checkedAt = now
        const identity = await identityOf(entry.file).catch(() => undefined)
        if (identity !== entry.identity) {
          stale = entry
          entry = undefined
        }
      }
    } else if (entry !== undefined && now - entry.at > PAST_TTL_MS) {
      if (entry.settled) stale = entry
      entry = undefined
    }
    if (entry === undefined) {
      const promise = (async () => {
        let where
        try {
          where = await logFile(persistence, sessionId)
        } catch (error) {
          return { error: error instanceof Error ? error.message : String(error) }
        }
        if (where === null) return undefined
        if (where !== undefined) {
          try {
            const s = await kopt.loadSession(sessionId, where.file, routing)
            return { s, next: 0, unreadable: s.skippedLines, file: where.file, identity: where.identity }
          } catch (error) {
            return { error: error instanceof Error ? error.message : String(error) }
          }
        }
        let inspection
        try {
          inspection = await persistence.inspect(sessionId)
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error)
          // The host says "session "<id>" not found" for a log it does not have.
          if (/\bnot found\b/.test(message)) return undefined
          return { error: message }
        }
        if (!inspection || !Array.isArray(inspection.events)) return undefined
        const pst = newState(sessionId)
        feed(pst, inspection.events)
        pst.next = inspection.events.length
        return pst
      })()
      entry = { promise, at: now, checkedAt: now, settled: false, stale }
      const settled = entry
      const settle = (pst) => {
        settled.settled = true
        settled.value = pst
        settled.stale = undefined
        if (pst?.file !== undefined) Object.assign(settled, { file: pst.file, identity: pst.identity })
        if (pst?.s !== undefined) {
          settled.bytes = pst.s.memoryBytes
          settled.measuredAt = Date.now()
          if (past.get(sessionId) === settled) trimPast()
        }
      }
      promise.then(settle, () => settle(undefined))
    }
    // Asked for now: the most recently used.
    past.delete(sessionId)
    past.set(sessionId, entry)
    // Its size grows when its body is first assembled: measured again now and then (O(points)).
    if (entry.settled && entry.bytes !== undefined && now - (entry.measuredAt ?? 0) > IDENTITY_CHECK_MS) {
      entry.measuredAt = now
      entry.bytes = (await entry.promise).s.memoryBytes
    }
    trimPast()
    // wait: false asks for an answer now: {loading: true} while the log is still being read.
    if (!wait && !entry.settled) {
      // An unknown id or a small log settles at once: answer it directly rather than 202 then 404.
      await Promise.race([entry.promise, new Promise((resolve) => setTimeout(resolve, QUICK_ANSWER_MS))])
    }
    if (!wait && !entry.settled) {
      // Re-reading an expired entry: the previous projection answers until the new one is ready.
      const prev = entry.stale === undefined ? undefined : await entry.stale.promise
      if (prev !== undefined && prev.error === undefined) return { st: prev, live: false }
      return { loading: true }
    }
    const pst = await entry.promise
    if (pst === undefined || pst.error !== undefined) {
      if (past.get(sessionId) === entry) past.delete(sessionId) // asked again, read again
      return pst
    }
    return { st: pst, live: false }
  }

  /**
   * The view a session has now, without waiting for anything (no catch-up, no look at its log
   * file): the live projection when it is whole, else the past one already read; undefined otherwise.
   */
  const peek = (sessionId) => {
    const l = live.get(sessionId)
    if (l !== undefined && l.job === undefined) return { st: l, live: true }
    const v = past.get(sessionId)?.value
    return v?.s !== undefined ? { st: v, live: false } : undefined
  }

  return { getProjector, getView, peek, onEvent, forget, live, past }
}

/** The control object when no loop service owns the session (spec P-4 zeros). */
export function defaultControl(config, derived, loopAvailable = false) {
  const evalsDone = typeof derived?.completedEvals === 'number' ? derived.completedEvals : 0
  const sup = config.supervisor
  const route = sup === undefined ? undefined : {
    provider: sup.provider, model: sup.model, ...(sup.reasoningEffort !== undefined ? { reasoningEffort: sup.reasoningEffort } : {}),
  }
  return {
    loop: {
      armed: false, budget: 0, round: 0, evalsDone, evalsOverBudget: 0,
      available: loopAvailable, defaultBudget: config.loop.defaultBudget,
    },
    supervisor: {
      enabled: false,
      configured: route !== undefined,
      ...(route !== undefined ? { configRoute: route, effective: { ...route, source: 'config' } } : {}),
    },
  }
}

export function apply(ctx, rawConfig) {
  const { config, errors } = resolveConfig(rawConfig)
  for (const line of errors) console.warn(`[kernel-opt] ${line}`)

  let kopt
  let kopterror
  try {
    kopt = loadKopt().mod
  } catch (error) {
    kopterror = error instanceof Error ? error.message : String(error)
    console.error(`[kernel-opt] ${kopterror}`)
  }

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

  const store = kopt === undefined ? undefined : createStore(kopt, config, {
    sessions: () => ctx.sessions,
    persistence: () => persistence,
    caughtUp: (id) => hub?.changed(id),
  })
  const getProjector = (id) => store?.getProjector(id)?.s.projector
  const getView = async (id) => {
    const view = await store?.getView(id)
    return view?.st === undefined ? undefined : { projector: view.st.s.projector, live: view.live, updatedAt: view.st.s.updatedAt }
  }

  // The loop (/kloop, /supervise, lib/loop.mjs): a LoopService {available, control(), act(), dispose()}.
  let loop
  if (kopt !== undefined) {
    try {
      loop = registerLoop(ctx, { getProjector, getView, kopt, config }) ?? undefined
    } catch (error) {
      console.warn(`[kernel-opt] registerLoop failed; the loop stays unavailable: ${error?.stack ?? error}`)
    }
    if (loop && typeof loop.dispose === 'function') ctx.effect(() => () => loop.dispose(), 'kernel-opt: loop')
  }

  // kernel_evaluate's evaluator (lib/evaluate.mjs): the warm judge, the queue across sessions, the store.
  // A change in a session's place in the queue is pushed to its tabs (control.evaluation).
  const evaluator = kopt === undefined ? undefined : createEvaluator({
    kopt, config, onChange: (ids) => { for (const id of ids) hub?.changed(id) },
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
        return { st: view.st }
      },
      // The live projection once it is whole; the one the room opened with until then.
      current: (id, st) => {
        const l = store.live.get(id)
        return l !== undefined && l.job === undefined ? l : st
      },
      revise: (id, st) => st.s.revise(JSON.stringify(controlFor(id, st))),
      payload: (id, st, since) => pushPayload(st.s, since),
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
  const controlFor = (sessionId, st) => {
    // What the control object reads of the projection (M-5), kept per revision by the session.
    const derived = st ? { completedEvals: st.s.completedEvals } : undefined
    let control
    try {
      control = loop?.control?.(sessionId, derived)
    } catch (error) {
      console.warn(`[kernel-opt] loop.control failed: ${error?.message ?? error}`)
    }
    control = control ?? defaultControl(config, derived, loop?.available === true)
    // A kernel_evaluate of this session queued or running (lib/evaluate.mjs): what the tab shows.
    const evaluation = evaluator?.stateFor(sessionId)
    return evaluation === undefined ? control : { ...control, evaluation }
  }

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

  // One request, one crossing: the session object compares the revision (projection, updatedAt,
  // control) and, only for a 200, hands out the body of that revision as bytes assembled once.
  route(SERIES_PATH, async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const id = sessionParam(req, res)
    if (id === undefined) return
    const view = await viewOrAnswer(res, id)
    if (view === undefined) return
    const session = view.st.s
    const revision = session.revise(JSON.stringify(controlFor(id, view.st)))
    const etag = session.etag
    // x-kernel-opt-source says where the events came from: the live session or the host's persistence.
    const headers = {
      etag, 'cache-control': 'no-cache', 'x-kernel-opt-source': view.live ? 'live' : 'persisted',
      // A past session: read by the addon from the log file off this thread, or through the host's inspect.
      ...(view.live ? {} : { 'x-kernel-opt-reader': view.st.file !== undefined ? 'file' : 'host' }),
      'x-kopt-revision': String(revision),
      ...(view.st.unreadable > 0 ? { 'x-kernel-opt-unreadable-events': String(view.st.unreadable) } : {}),
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

  route(CONTROL_PATH, async (req, res) => {
    if (req.method === 'GET') {
      const id = sessionParam(req, res)
      if (id === undefined) return
      const view = await viewOrAnswer(res, id, true)
      if (view === undefined) return
      jsonResponse(res, 200, { control: controlFor(id, view.st) })
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
        jsonResponse(res, 200, { control: controlFor(id, view.st) }) // nothing armed: not an error (M-9)
        return
      }
      jsonResponse(res, 503, { error: 'loop machinery unavailable / 循环功能不可用' })
      return
    }
    const result = await loop.act(id, body)
    hub?.changed(id) // the control object is part of the revision
    if (result && typeof result.status === 'number') {
      jsonResponse(res, result.status, result.body ?? { control: controlFor(id, view.st) })
      return
    }
    jsonResponse(res, 200, { control: controlFor(id, view.st) })
  }, 'kernel-opt: control route')

  // The sessions compared side by side (lib/compare.mjs): each as /series reads it, never waited for.
  route(COMPARE_PATH, createCompareRoute({ kopt, getView: (id, o) => store.getView(id, o), peek: (id) => store.peek(id) }), 'kernel-opt: compare route')

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
