// dsh-kernel-opt — the loop's host half: it executes what the C++ LoopController decides.
//
//   registerLoop(ctx, {store, kopt, config})   profile plane (lib/index.mjs): watches turn ends,
//       waits for the turn to settle, tells the session's loop (the controller inside its
//       kopt.Session) the host facts, then carries out its actions (agent.followup, agent.cancel,
//       ctx.llm.stream). Returns the LoopService the /control route and the commands use.
//   registerLoopCommands(ctx, svc)                    agent plane (lib/agent.mjs): /kloop and
//       /supervise, so they exist in the mode's sessions only.
//
// No decision is made here: when to continue, what to say, whether to ask the supervisor, what a
// reply means, which effort to send — all of it is the Session's loop (C++ LoopController, which
// reads the session's own projection) and kopt.chooseEffort. What is kept here per session is only
// the host's I/O in flight: a settle timer, a supervisor call, the watch on the agent's cancel.
import { createUserMessage } from './host.mjs'
import { PLUGIN_ID } from './config.mjs'

// A turn end is not yet a settled turn: a queued human message may take the session first.
const envMs = (name, dflt) => {
  const v = Number(process.env[name])
  return Number.isFinite(v) && v >= 0 ? v : dflt
}

/** Maps the config's supervisor.language (free text) onto a run language, or undefined. */
export function configLanguage(value) {
  if (typeof value !== 'string') return undefined
  const v = value.trim().toLowerCase()
  if (/^(zh|cn|chinese|中文|简体中文|汉语)/.test(v)) return 'zh'
  if (/^(en|english|英文|英语)/.test(v)) return 'en'
  return undefined
}

/** Whether a human message waits in the agent's inbox (shape-tolerant across host versions); who sent
 * an entry is the core's one reading of `source` (kopt.messageSender). */
export function humanQueued(kopt, agent) {
  const inbox = agent?.inbox
  if (!inbox) return false
  const lists = []
  for (const key of ['nextTurn', 'nextStep', 'pending', 'items']) {
    const v = typeof inbox[key] === 'function' ? safe(() => inbox[key]()) : inbox[key]
    if (Array.isArray(v)) lists.push(v)
  }
  const snap = typeof inbox.snapshot === 'function' ? safe(() => inbox.snapshot()) : undefined
  if (snap && typeof snap === 'object') for (const v of Object.values(snap)) if (Array.isArray(v)) lists.push(v)
  return lists.some(list => list.some((entry) => sentByHuman(kopt, entry)))
}

function safe(f) {
  try {
    return f()
  } catch {
    return undefined
  }
}

/** A message's `data` (or an inbox entry) sent by the person, as the core reads it. */
function sentByHuman(kopt, data) {
  if (!data || typeof data !== 'object') return false
  return safe(() => kopt.messageSender(JSON.stringify(data))) === 'user'
}

function lastHumanText(kopt, session) {
  const events = safe(() => session?.events)
  if (!Array.isArray(events)) return ''
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    if (e?.type !== 'user/message' || !sentByHuman(kopt, e.data)) continue
    const m = e.data?.message && typeof e.data.message === 'object' ? e.data.message : e.data
    if (!Array.isArray(m?.content)) continue
    return m.content.filter(b => typeof b?.text === 'string').map(b => b.text).join('\n')
  }
  return ''
}

/**
 * The profile half. deps = {store (lib/store.mjs: getLive(id) the caught-up live Session, peek(id)
 * the live Session as it is), kopt, config}. Options for tests: deps.settleMs,
 * deps.supervisorTimeoutMs, deps.llm (else ctx.llm, taken softly).
 */
export function registerLoop(ctx, deps) {
  const { store, kopt, config } = deps
  const settleMs = deps.settleMs ?? envMs('KOPT_LOOP_SETTLE_MS', 1200)
  const reviewTimeoutMs = deps.supervisorTimeoutMs ?? envMs('KOPT_SUPERVISOR_TIMEOUT_MS', 180_000)
  const sup = config.supervisor

  let llm = deps.llm
  if (llm === undefined && typeof ctx.inject === 'function') {
    ctx.inject(['llm'], (lctx) => {
      llm = lctx.llm
      lctx.effect?.(() => () => { llm = undefined }, 'kernel-opt: loop llm')
    })
  }

  // The I/O in flight per session this service drives (the loop's state is the Session's).
  const driven = new Map() // sessionId -> {timer, review, watched, reviewer}
  const log = (id, line) => console.warn(`[kernel-opt] loop ${id}: ${line}`)
  const handlesFor = (id) => {
    let h = driven.get(id)
    if (h === undefined) {
      h = { timer: undefined, review: undefined, watched: undefined, reviewer: undefined }
      driven.set(id, h)
    }
    return h
  }

  const agentOf = (id) => safe(() => ctx.agents?.get(id))
  const hostSessionOf = (id) => safe(() => ctx.sessions?.get(id))
  // The host's two facts, as the loop reads them (the task it finds in the projection itself).
  const idle = (id) => agentOf(id)?.status === 'idle'
  const queued = (id) => humanQueued(kopt, agentOf(id))
  /** The run language: the config's supervisor.language, else the language the human writes in. */
  const runLanguage = (id) => configLanguage(sup?.language) ?? kopt.guessLanguage(lastHumanText(kopt, hostSessionOf(id)))

  // actions: the array the session's loop answers with (each an object the addon built; never text).
  const execute = (id, h, actions) => {
    for (const a of actions) {
      if (a.type === 'abort') {
        h.review?.abort(new Error('stopped'))
        const agent = agentOf(id)
        if (agent?.status === 'running') safe(() => agent.cancel({ kind: 'user' }, { keepInbox: true }))
      } else if (a.type === 'send') {
        const agent = agentOf(id)
        if (agent === undefined) {
          log(id, `no agent to receive the ${a.kind}`)
          continue
        }
        // The message that carries a review names the model that gave it (source.supervisor; not in
        // the text the agent reads): the log then says which supervisor a run had (a comparison's table).
        const reviewer = h.reviewer
        h.reviewer = undefined
        agent.followup(createUserMessage({
          content: [{ type: 'text', text: a.text }],
          source: { kind: 'plugin', plugin: PLUGIN_ID, ...(reviewer ? { supervisor: reviewer } : {}) },
        }))
      } else if (a.type === 'review') {
        void review(id, h, a)
      } else if (a.type === 'disarmed') {
        log(id, `disarmed (${a.reason})`)
      }
    }
  }

  // The host's own stop (session.cancel: the composer's stop button) is agent.cancel. A running turn
  // then ends `aborted` (onEvent below), but a cancel while the agent is idle — the settle window, a
  // supervisor review in flight — logs nothing and the host emits no event for it. So the agent of
  // each session we drive reports its cancels to the session's loop, which decides (hostCancelled).
  const watchCancels = (id, h) => {
    const agent = agentOf(id)
    if (agent === undefined || h.watched?.agent === agent || typeof agent.cancel !== 'function') return
    const original = agent.cancel
    const own = Object.prototype.hasOwnProperty.call(agent, 'cancel')
    try {
      Object.defineProperty(agent, 'cancel', {
        configurable: true,
        writable: true,
        value: function cancel(cause, options) {
          const cur = driven.get(id)
          const s = store.peek(id)
          if (cur !== undefined && s !== undefined) {
            try {
              execute(id, cur, s.hostCancelled(String(cause?.kind ?? '')))
            } catch (error) {
              log(id, `host cancel failed: ${error?.message ?? error}`)
            }
          }
          return original.call(this, cause, options)
        },
      })
      h.watched = { agent, original, own }
    } catch {
      // A sealed agent: only the aborted turn ends are seen.
    }
  }
  const unwatch = (h) => {
    const w = h.watched
    if (w === undefined) return
    h.watched = undefined
    safe(() => {
      if (w.own) w.agent.cancel = w.original
      else delete w.agent.cancel
    })
  }

  const settle = (id) => {
    const h = driven.get(id)
    if (h === undefined) return
    h.timer = undefined
    const s = store.getLive(id)
    if (s === undefined || !s.armed) return
    watchCancels(id, h)
    execute(id, h, s.settled(idle(id), queued(id)))
  }

  const scheduleSettle = (id, h) => {
    if (h.timer !== undefined) clearTimeout(h.timer)
    h.timer = setTimeout(() => {
      try {
        settle(id)
      } catch (error) {
        log(id, `settle failed: ${error?.message ?? error}`)
      }
    }, settleMs)
    h.timer.unref?.()
  }

  // One supervisor call. Failure, timeout or silence comes back as such; the loop decides.
  const review = async (id, h, a) => {
    const abort = new AbortController()
    h.review = abort
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      abort.abort(new Error('supervisor timeout'))
    }, reviewTimeoutMs)
    timer.unref?.()
    let text = ''
    let finish = 'stop'
    try {
      if (llm === undefined) throw new Error('no llm service')
      let declared = []
      let dflt = null
      try {
        const info = await llm.resolveModelInfo?.(a.provider, a.model)
        if (Array.isArray(info?.reasoning?.efforts)) declared = info.reasoning.efforts.map(x => String(x.id))
        if (info?.reasoning?.defaultEffort !== undefined) dflt = String(info.reasoning.defaultEffort)
      } catch {
        // unknown model info: no effort is sent
      }
      const effort = kopt.chooseEffort(a.reasoningEffort ?? null, JSON.stringify(declared), dflt)
      const stream = llm.stream({
        provider: a.provider,
        model: a.model,
        system: a.system,
        messages: [createUserMessage({ content: [{ type: 'text', text: a.prompt }], source: { kind: 'plugin', plugin: PLUGIN_ID } })],
        sessionId: id,
        signal: abort.signal,
        ...(effort !== null ? { reasoningEffort: effort } : {}),
        ...(typeof sup?.maxTokens === 'number' ? { maxTokens: sup.maxTokens } : {}),
        ...(typeof sup?.temperature === 'number' ? { temperature: sup.temperature } : {}),
      })
      for await (const chunk of stream) {
        if (abort.signal.aborted) break
        if (chunk?.type === 'text-delta') text += typeof chunk.text === 'string' ? chunk.text : (chunk.delta ?? '')
        else if (chunk?.type === 'finish') {
          const kind = chunk.reason?.kind ?? chunk.reason
          finish = kind === 'max-tokens' ? 'max-tokens' : kind === 'error' ? 'error' : 'stop'
        }
      }
      if (abort.signal.aborted) finish = timedOut ? 'timeout' : 'aborted'
    } catch (error) {
      finish = timedOut ? 'timeout' : abort.signal.aborted ? 'aborted' : 'error'
      if (finish === 'error') log(id, `supervisor call failed: ${error?.message ?? error}`)
    } finally {
      clearTimeout(timer)
      if (h.review === abort) h.review = undefined
    }
    if (finish === 'timeout') log(id, 'supervisor timed out; the loop goes on without a review')
    h.reviewer = finish === 'stop' && text.trim() !== '' ? { provider: String(a.provider), model: String(a.model) } : undefined
    try {
      const s = store.getLive(id)
      if (s !== undefined) execute(id, h, s.supervisorAnswered(a.token, JSON.stringify({ text, finish }), idle(id), queued(id)))
    } catch (error) {
      log(id, `supervisor answer failed: ${error?.message ?? error}`)
    }
  }

  // Turn ends drive the loop: an aborted turn disarms, any other end is checked once settled.
  const onEvent = (session, event) => {
    if (event?.type !== 'turn/end') return
    const id = session?.id
    const h = typeof id === 'string' ? driven.get(id) : undefined
    const s = h === undefined ? undefined : store.peek(id)
    if (s === undefined) return
    watchCancels(id, h)
    const reason = event.data?.reason?.kind ?? 'completed'
    execute(id, h, s.turnEnded(String(reason)))
    if (s.armed && reason !== 'aborted') scheduleSettle(id, h)
  }
  if (typeof ctx.on === 'function') ctx.on('session/event', onEvent)

  // A disposed agent's loop goes with it: its settle timer, review and cancel watch end (its
  // Session, loop included, is dropped by the store).
  const forget = (id) => {
    const h = driven.get(id)
    if (h === undefined) return
    if (h.timer !== undefined) clearTimeout(h.timer)
    h.review?.abort(new Error('disposed'))
    unwatch(h)
    driven.delete(id)
  }
  if (typeof ctx.on === 'function') {
    ctx.on('agent/disposed', (payload) => {
      const id = payload?.agent?.id
      if (typeof id === 'string') forget(id)
    })
  }

  const afterArm = (id, h) => {
    watchCancels(id, h)
    if (agentOf(id)?.status === 'idle') scheduleSettle(id, h)
  }

  const service = {
    get available() {
      return ctx.agents !== undefined
    },
    /** POST /control actions on a session's Session (live or past: the route's view). */
    async act(sessionId, session, body) {
      const h = handlesFor(sessionId)
      const r = session.applyControl(JSON.stringify(body), runLanguage(sessionId))
      execute(sessionId, h, r.actions)
      if (r.armed) afterArm(sessionId, h)
      return { status: r.status, body: r.body } // body: the answer's JSON text, for the wire as it is
    },
    /** A slash command; returns the host's command result. */
    command(sessionId, name, raw) {
      const s = store.getLive(sessionId)
      if (s === undefined) return { kind: 'error', text: 'The kernel loop is unavailable here / 循环功能不可用' }
      const h = handlesFor(sessionId)
      const r = s.command(name, raw ?? '', runLanguage(sessionId))
      execute(sessionId, h, r.actions)
      if (r.armed) afterArm(sessionId, h)
      return r.ok ? { kind: 'success', text: r.text } : { kind: 'error', text: r.text }
    },
    /** Whether this service has I/O for the session (tests and diagnostics). */
    drives: (sessionId) => driven.has(sessionId),
    dispose() {
      for (const id of [...driven.keys()]) forget(id)
    },
  }
  return service
}

/** The agent plane: /kloop and /supervise, in the kernel-opt mode only (a row of its preset). */
export function registerLoopCommands(ctx, svc) {
  const loop = () => svc?.loop
  const register = (commands, owner) => {
    const add = (def) => {
      const dispose = commands.register(def)
      if (typeof owner.effect === 'function' && typeof dispose === 'function') owner.effect(() => dispose, `kernel-opt: /${def.name}`)
    }
    const run = (name) => (inv) => {
      const service = loop()
      const id = inv?.agent?.id
      if (service === undefined || typeof id !== 'string') {
        return { kind: 'error', text: 'The kernel loop is unavailable here / 循环功能不可用' }
      }
      return service.command(id, name, inv.rawInput ?? '')
    }
    add({
      name: 'kloop',
      description: '算子优化循环 / kernel loop: /kloop [预算 budget] 启动 arm · /kloop stop 立即停止 stop now · /kloop status 状态',
      input: { hint: '[budget] | stop | status' },
      handler: run('kloop'),
    })
    add({
      name: 'supervise',
      description: '第二模型监督 / second-model supervisor: /supervise on | off | use <provider>/<model> [effort] | use default',
      input: { hint: 'on | off | use <provider>/<model> [effort] | use default' },
      handler: run('supervise'),
    })
  }
  // Taken softly: a host without the command registry loses the commands, not the mode.
  if (typeof ctx.inject === 'function') ctx.inject(['commands'], (cctx) => register(cctx.commands, cctx))
  else if (ctx.commands !== undefined) register(ctx.commands, ctx)
}
