// lib/loop.mjs against a scripted stand-in host (agents, sessions, llm, commands), the real store
// (lib/store.mjs) and the real addon: the loop of each kopt.Session decides, its actions are
// carried out, and the projection reads the messages back.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { kopt } from '../addon/addon.mjs'
import { registerLoop, registerLoopCommands, configLanguage, humanQueued } from '../../lib/loop.mjs'
import { createStore } from '../../lib/store.mjs'
import { loopJson, resolveConfig } from '../../lib/config.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')

const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))
async function until(cond, what, ms = 3000) {
  const t0 = Date.now()
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

/** A host with one session whose agent runs `evalsPerTurn` evaluations per turn. */
function fakeHost({ evalsPerTurn = 1, hang = false, llm } = {}) {
  const listeners = []
  const disposedListeners = []
  const events = []
  const session = { id: 'session-1', header: { cwd: '/tmp', agentPreset: 'kernel-opt' }, get events() { return events.slice() } }
  let latency = 10
  let call = 0
  const sent = []
  const cancels = []
  const emit = (type, data) => {
    const e = { type, seq: events.length, time: Date.now(), data }
    events.push(e)
    for (const fn of listeners) fn(session, e)
  }
  const agent = {
    id: session.id,
    status: 'idle',
    inbox: { nextTurn: [], nextStep: [] },
    followup(message) {
      sent.push(message.content[0].text)
      emit('user/message', message)
      agent.status = 'running'
      setTimeout(() => runTurn(), 1)
    },
    cancel(cause, opts) {
      cancels.push({ cause, opts })
      if (agent.status !== 'running') return
      agent.status = 'idle'
      emit('turn/end', { turn: 1, reason: { kind: 'aborted', reason: cause } })
    },
  }
  const runTurn = () => {
    if (agent.status !== 'running') return
    if (hang) return // stays running until cancelled
    for (let i = 0; i < evalsPerTurn; i++) {
      const callId = `call_${++call}`
      latency -= 0.5
      emit('tool/call', { callId, name: 'bash', arguments: JSON.stringify({ command: `./bench k.cu --v ${call}` }) })
      emit('tool/result', {
        message: {
          source: { kind: 'tool', callId },
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: `KERNEL_EVAL={"artifact":"k.cu","latency_ms":${latency},"correct":true}` }] }],
        },
      })
    }
    agent.status = 'idle'
    emit('turn/end', { turn: 1, reason: { kind: 'completed' } })
  }
  const commands = new Map()
  const ctx = {
    on(name, fn) {
      if (name === 'session/event') listeners.push(fn)
      if (name === 'agent/disposed') disposedListeners.push(fn)
    },
    agents: { get: (id) => (id === session.id ? agent : undefined) },
    sessions: { get: (id) => (id === session.id ? session : undefined) },
    inject(_names, fn) { fn(ctx) },
    commands: { register(def) { commands.set(def.name, def); return () => commands.delete(def.name) } },
    llm,
  }
  // The whole log read afresh by the test build's oracle (the series as /series shows it).
  const getProjector = () => {
    const p = new kopt.Projector('{}')
    p.feed(JSON.stringify(events))
    return p
  }
  const human = (text) => emit('user/message', { role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } })
  const runCommand = (name, rawInput) => commands.get(name).handler({ agent, rawInput })
  const series = () => JSON.parse(getProjector(session.id).seriesJson(session.id, 0))
  const dispose = () => { for (const fn of disposedListeners) fn({ agent }) }
  return { ctx, agent, session, sent, cancels, getProjector, human, runCommand, series, emit, commands, dispose }
}

const baseConfig = (extra = {}) => ({
  loop: { defaultBudget: 20, maxNoProgressRounds: 2, evalsPerTurn: 3, challengeFinalize: true },
  ...extra,
})

// The loop service over the real store, wired as lib/index.mjs wires them (the loop's listener
// first, then the store's; both drop a disposed agent's session).
function wire(h, config, opts = {}) {
  const resolved = resolveConfig(config, kopt.loopRules).config
  const store = createStore(kopt, resolved, { sessions: () => h.ctx.sessions, persistence: () => undefined, loopJson: () => loopJson(resolved, true) })
  const svc = registerLoop(h.ctx, { store, kopt, config: resolved, settleMs: opts.settleMs ?? 5, supervisorTimeoutMs: opts.timeoutMs ?? 1000, llm: opts.llm })
  h.ctx.on('session/event', (session, event) => store.onEvent(session, event, 'kernel-opt'))
  h.ctx.on('agent/disposed', (payload) => store.forget(payload.agent.id))
  registerLoopCommands(h.ctx, { loop: svc })
  const control = () => JSON.parse(store.getLive(h.session.id).control)
  const act = (body) => svc.act(h.session.id, store.getLive(h.session.id), body)
  return { svc, store, control, act }
}

function setup(opts = {}, config = baseConfig()) {
  const h = fakeHost(opts)
  return { h, ...wire(h, config, opts) }
}

/** A scripted supervisor: each call takes the next reply ({text, finish, delayMs}). */
function fakeLlm(replies, efforts = ['off', 'low', 'high']) {
  const calls = []
  return {
    calls,
    async resolveModelInfo(provider, model) {
      return { provider, id: model, name: model, reasoning: { efforts: efforts.map(id => ({ id, name: id })), defaultEffort: 'high' } }
    },
    stream(opts) {
      calls.push(opts)
      const r = replies[Math.min(calls.length - 1, replies.length - 1)]
      return (async function * () {
        if (r.delayMs) await new Promise((resolve, reject) => {
          const t = setTimeout(resolve, r.delayMs)
          opts.signal?.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')) })
        })
        if (r.text) yield { type: 'text-delta', index: 0, text: r.text }
        yield { type: 'finish', reason: { kind: r.finish ?? 'stop' } }
      })()
    },
  }
}

test('/kloop 3 runs to a wrap-up and stops', async () => {
  const { h, svc, control, act, store } = setup()
  h.human('Optimize k.cu')
  const r = h.runCommand('kloop', '3')
  assert.equal(r.kind, 'success')
  await until(() => h.sent.some(t => t.startsWith('[kernel-loop wrap-up]')), 'the wrap-up')
  await sleep(50)
  const ctl = control()
  assert.equal(ctl.loop.armed, false)
  assert.equal(ctl.loop.stopReason, 'budget')
  assert.equal(ctl.loop.outputLanguage, 'en')
  // Rounds 1..3 then the wrap-up, and nothing after it.
  assert.match(h.sent[0], /^\[kernel-loop round 1\] 0\/3 evaluations used/)
  assert.match(h.sent[1], /^\[kernel-loop round 2\] 1\/3 evaluations used/)
  assert.match(h.sent.at(-1), /^\[kernel-loop wrap-up\] 3\/3 evaluations used; stopping \(budget\)/)
  assert.equal(h.sent.filter(t => t.startsWith('[kernel-loop wrap-up]')).length, 1)
  const s = h.series()
  assert.equal(s.rounds.length, h.sent.length)
  assert.equal(s.rounds.at(-1).wrapUp, true)
  // The pace never asked for more than the budget had left.
  for (const t of h.sent) {
    const m = /at most (\d+) more evaluations/.exec(t)
    const c = /(\d+)\/(\d+) evaluations used/.exec(t)
    if (m) assert.ok(Number(m[1]) <= Number(c[2]) - Number(c[1]), t)
  }
})

test('/kloop stop mid-turn aborts the running turn and sends nothing more', async () => {
  const { h, svc, control, act, store } = setup({ hang: true })
  h.human('Optimize k.cu')
  h.runCommand('kloop', '5')
  await until(() => h.sent.length === 1 && h.agent.status === 'running', 'the first continuation')
  const r = h.runCommand('kloop', 'stop')
  assert.equal(r.kind, 'success')
  assert.equal(h.cancels.length, 1)
  assert.deepEqual(h.cancels[0], { cause: { kind: 'user' }, opts: { keepInbox: true } })
  assert.equal(h.agent.status, 'idle')
  await sleep(50)
  assert.equal(h.sent.length, 1)
  assert.equal(control().loop.stopReason, 'stopped')
  assert.match(h.runCommand('kloop', 'status').text, /not armed \(last stop: stopped\)/)
})

test('an aborted turn disarms the loop', async () => {
  const { h, svc, control, act, store } = setup({ hang: true })
  h.human('Optimize k.cu')
  h.runCommand('kloop', '')
  await until(() => h.sent.length === 1, 'the first continuation')
  h.agent.cancel({ kind: 'user' }, { keepInbox: true }) // the host's own stop button
  await sleep(50)
  assert.equal(control().loop.armed, false)
  assert.equal(control().loop.stopReason, 'stopped')
  assert.equal(h.sent.length, 1)
})

test('the host\'s stop while no turn runs (a review in flight) disarms; the late answer sends nothing', async () => {
  const llm = fakeLlm([{ text: 'Keep going.', delayMs: 150 }])
  const { h, svc, control, act, store } = setup({ llm, timeoutMs: 2000 }, baseConfig({ supervisor: { provider: 'fake', model: 'judge' } }))
  h.human('Optimize k.cu')
  h.runCommand('supervise', 'on')
  h.runCommand('kloop', '5')
  await until(() => llm.calls.length === 1, 'the review in flight')
  assert.equal(h.agent.status, 'idle')
  const sent = h.sent.length
  h.agent.cancel({ kind: 'user' }, { keepInbox: true }) // session.cancel: the composer's stop button
  assert.equal(control().loop.armed, false)
  assert.equal(control().loop.stopReason, 'stopped')
  await sleep(300)
  assert.equal(h.sent.length, sent, h.sent.join('\n---\n'))
  // The next human turn gets no continuation either.
  h.human('one more try')
  h.emit('turn/end', { turn: 2, reason: { kind: 'completed' } })
  await sleep(50)
  assert.equal(h.sent.length, sent)
})

test('the host\'s stop in the settle window disarms before the checkpoint', async () => {
  const h = fakeHost()
  const { svc, control } = wire(h, baseConfig(), { settleMs: 80 })
  const original = h.agent.cancel
  h.human('Optimize k.cu')
  h.runCommand('kloop', '4')
  await until(() => h.sent.length === 1, 'the first continuation')
  await until(() => h.agent.status === 'idle', 'the loop turn to end') // now settling
  h.agent.cancel({ kind: 'user' }, { keepInbox: true })
  await sleep(200)
  assert.equal(h.sent.length, 1, h.sent.join('\n---\n'))
  assert.equal(control().loop.stopReason, 'stopped')
  svc.dispose()
  assert.equal(h.agent.cancel, original, 'dispose gives the agent its own cancel back')
})

test('supervisor advice rides the next continuation and is read back into the rounds', async () => {
  const llm = fakeLlm([{ text: 'OK: baseline measured' }, { text: 'Profile once before more variants.' }, { text: 'OK: fine' }])
  const config = baseConfig({ supervisor: { provider: 'fake', model: 'judge', reasoningEffort: 'low' } })
  const { h, svc, control, act, store } = setup({ llm }, config)
  h.human('Optimize k.cu')
  assert.equal(h.runCommand('supervise', 'on').kind, 'success')
  h.runCommand('kloop', '3')
  await until(() => h.sent.some(t => t.startsWith('[kernel-loop wrap-up]')), 'the wrap-up')
  const withAdvice = h.sent.find(t => t.includes('Profile once before more variants.'))
  assert.ok(withAdvice, h.sent.join('\n---\n'))
  assert.match(withAdvice, /Supervisor review \(advisory, from the second model\):\nProfile once before more variants\./)
  const rounds = h.series().rounds
  assert.ok(rounds.some(r => r.review === 'Profile once before more variants.'))
  assert.ok(rounds.some(r => r.review === 'ok' && r.reviewNote === 'baseline measured') || rounds.some(r => r.review === 'ok'))
  assert.equal(control().supervisor.lastAdvice, 'Profile once before more variants.')
  // The messages carrying a review name the model that gave it (source.supervisor, not in the text);
  // the first continuation, reviewed by nobody, does not.
  const loopMessages = h.session.events.filter(e => e.type === 'user/message' && e.data.source?.kind === 'plugin')
  const reviewed = loopMessages.filter(e => /Supervisor review/.test(e.data.content[0].text))
  assert.ok(reviewed.length >= 2)
  for (const e of reviewed) assert.deepEqual(e.data.source.supervisor, { provider: 'fake', model: 'judge' })
  assert.equal(loopMessages[0].data.source.supervisor, undefined)
  assert.ok(loopMessages.every(e => !e.data.content[0].text.includes('judge')), 'the agent is not told')
  assert.equal(llm.calls[0].reasoningEffort, 'low')
  assert.equal(llm.calls[0].provider, 'fake')
  assert.ok(llm.calls[0].system.includes('Correctness first'))
})

// A failed review: no advice, never an approval, but one line saying it failed (and why).
const noReview = (t) => !t.includes('Supervisor review: OK.') && !t.includes('advisory, from the second model')

test('a slow supervisor times out: the loop goes on without a review', async () => {
  const llm = fakeLlm([{ text: 'too late', delayMs: 2000 }])
  const { h } = setup({ llm, timeoutMs: 40 }, baseConfig({ supervisor: { provider: 'fake', model: 'judge' } }))
  h.human('Optimize k.cu')
  h.runCommand('supervise', 'on')
  h.runCommand('kloop', '2')
  await until(() => h.sent.length >= 2, 'two messages')
  assert.ok(h.sent.every(noReview), h.sent.join('\n---\n'))
  assert.match(h.sent[1], /\nSupervisor review: failed\. .*\(timeout\)/)
  assert.ok(h.sent.every(t => !t.includes('too late')))
  h.runCommand('kloop', 'stop')
})

test('an empty answer after max-tokens is retried once with reasoning off, then skipped', async () => {
  const llm = fakeLlm([{ text: '', finish: 'max-tokens' }, { text: '', finish: 'max-tokens' }])
  const { h } = setup({ llm }, baseConfig({ supervisor: { provider: 'fake', model: 'judge', reasoningEffort: 'high' } }))
  h.human('Optimize k.cu')
  h.runCommand('supervise', 'on')
  h.runCommand('kloop', '5')
  await until(() => h.sent.length >= 2, 'two continuations')
  assert.equal(llm.calls[0].reasoningEffort, 'high')
  assert.equal(llm.calls[1].reasoningEffort, 'off')
  assert.ok(h.sent.every(noReview))
  assert.match(h.sent[1], /\nSupervisor review: failed\. .*\(empty\)/)
  h.runCommand('kloop', 'stop')
})

test('an empty supervisor answer is no advice and never an approval: the record says the review failed', async () => {
  const llm = fakeLlm([{ text: '   ' }])
  const { h } = setup({ llm }, baseConfig({ supervisor: { provider: 'fake', model: 'judge' } }))
  h.human('Optimize k.cu')
  h.runCommand('supervise', 'on')
  h.runCommand('kloop', '2')
  await until(() => h.sent.some(t => t.startsWith('[kernel-loop wrap-up]')), 'the wrap-up')
  assert.ok(h.sent.every(noReview))
  const rounds = h.series().rounds
  assert.ok(rounds.every(r => r.review === undefined))
  assert.ok(rounds.some(r => r.reviewFailed === true), JSON.stringify(rounds))
})

test('the panel arms in Chinese through /control and stops through it', async () => {
  const { h, svc, control, act, store } = setup({ hang: true })
  h.human('Optimize k.cu')
  let r = await act({ sessionId: 'session-1', action: 'loop-arm', budget: 4, outputLanguage: 'zh' })
  assert.equal(r.status, 200)
  assert.equal(JSON.parse(r.body).control.loop.outputLanguage, 'zh')
  await until(() => h.sent.length === 1, 'the continuation')
  assert.match(h.sent[0], /^\[kernel-loop round 1\] 0\/4 evaluations used/)
  assert.match(h.sent[0], /节奏/)
  assert.equal(kopt.languageOfMessage(h.sent[0]), 'zh')
  r = await act({ sessionId: 'session-1', action: 'supervise-on' })
  assert.equal(r.status, 409) // locked while the loop runs (and no route)
  r = await act({ sessionId: 'session-1', action: 'loop-stop' })
  assert.equal(r.status, 200)
  assert.equal(JSON.parse(r.body).control.loop.stopReason, 'stopped')
  assert.equal(h.cancels.length, 1)
})

test('/kloop follows the human\'s language unless supervisor.language says otherwise', async () => {
  let { h } = setup({ hang: true })
  h.human('优化 k.cu 里的内核')
  h.runCommand('kloop', '3')
  await until(() => h.sent.length === 1, 'the continuation')
  assert.equal(kopt.languageOfMessage(h.sent[0]), 'zh')
  h.runCommand('kloop', 'stop')
  ;({ h } = setup({ hang: true }, baseConfig({ supervisor: { provider: 'p', model: 'm', language: 'English' } })))
  h.human('优化 k.cu 里的内核')
  h.runCommand('kloop', '3')
  await until(() => h.sent.length === 1, 'the continuation')
  assert.equal(kopt.languageOfMessage(h.sent[0]), 'en')
  h.runCommand('kloop', 'stop')
})

test('no continuation while a human message waits', async () => {
  const { h } = setup()
  h.human('Optimize k.cu')
  h.agent.inbox.nextTurn.push({ id: 'm1', message: { source: { kind: 'user' } } })
  h.runCommand('kloop', '3')
  await sleep(60)
  assert.equal(h.sent.length, 0)
  h.agent.inbox.nextTurn.length = 0
  h.emit('turn/end', { turn: 2, reason: { kind: 'completed' } })
  await until(() => h.sent.length >= 1, 'the continuation once the human turn is done')
  h.runCommand('kloop', 'stop')
})

test('helpers: config language and queued human messages', () => {
  assert.equal(configLanguage('中文'), 'zh')
  assert.equal(configLanguage('zh-CN'), 'zh')
  assert.equal(configLanguage('English'), 'en')
  assert.equal(configLanguage('fr'), undefined)
  assert.equal(configLanguage(undefined), undefined)
  assert.equal(humanQueued(kopt, undefined), false)
  assert.equal(humanQueued(kopt, { inbox: { nextTurn: [{ source: { kind: 'plugin' } }] } }), false)
  assert.equal(humanQueued(kopt, { inbox: { nextStep: [{ message: { source: { kind: 'user' } } }] } }), true)
  // who sent it is the core's one reading (message_from): the loop's own message is not the person's
  assert.equal(kopt.messageSender(JSON.stringify({ message: { source: { kind: 'user' } } })), 'user')
  assert.equal(kopt.messageSender(JSON.stringify({ source: { kind: 'plugin', plugin: 'kernel-opt' } })), 'loop')
  assert.equal(kopt.messageSender(JSON.stringify({ content: [] })), 'none')
})

test('/supervise commands and errors', () => {
  const { h, svc, control, act, store } = setup()
  assert.equal(h.runCommand('supervise', 'on').kind, 'error')
  assert.equal(h.runCommand('supervise', 'use fake/judge low').kind, 'success')
  assert.equal(h.runCommand('supervise', 'on').kind, 'success')
  const c = control()
  assert.deepEqual(c.supervisor.effective, { provider: 'fake', model: 'judge', reasoningEffort: 'low', source: 'session' })
  assert.equal(h.runCommand('supervise', 'use nothing').kind, 'error')
  assert.equal(h.runCommand('kloop', 'abc').kind, 'error')
  assert.ok(h.commands.has('kloop') && h.commands.has('supervise'))
})

test('a disposed agent takes its loop with it: no entry, no timer, no more continuations', async () => {
  const { h, svc, control, act, store } = setup()
  h.human('Optimize k.cu')
  const r = await act({ sessionId: 'session-1', action: 'loop-arm', budget: 50 })
  assert.equal(r.status, 200)
  await until(() => h.sent.length >= 1, 'the first continuation')
  assert.ok(svc.drives('session-1'))
  h.dispose()
  assert.equal(svc.drives('session-1'), false)
  assert.equal(store.peek('session-1'), undefined, 'the session, its loop included, is dropped')
  const sent = h.sent.length
  // The agent's turn in flight still ends; nothing is scheduled from it.
  await new Promise((resolve) => setTimeout(resolve, 60))
  h.emit('turn/end', { turn: 9, reason: { kind: 'completed' } })
  await new Promise((resolve) => setTimeout(resolve, 60))
  assert.equal(h.sent.length, sent)
})
