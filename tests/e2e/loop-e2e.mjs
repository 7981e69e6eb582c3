// The loop end to end: a real `dsh web` (the pinned host of scripts/setup-host.sh) with this plugin,
// a scripted agent model and a second scripted model as the supervisor (loop-fake-llm.mjs).
//   A  /supervise on, /kloop 4: the supervisor answers OK, then advice, then blank, then too slowly;
//      the loop continues three times, wraps up on the budget and stops; the advice is in the next
//      continuation and in the projected rounds.
//   D  re-arming A with /kloop 2 (fewer than it already ran) wraps up at once and leaves the phases of
//      the rounds already run as they were; after a restart the past session draws the same phases.
//   B  /kloop 5 while a loop turn runs `sleep 120`: /kloop stop aborts that turn at once, no wrap-up.
//   C  the same, stopped with the host's own stop (`session.cancel`, the composer's stop button): the
//      loop is disarmed, and a human message afterwards gets no continuation.
// Run by tests/e2e/run.sh (host installed, Node 22 on PATH). env: KOPT_HOST_DIR (required),
// KOPT_ADDON (optional), KOPT_E2E_KEEP=1 keeps the scratch folder, KOPT_LOOP_E2E_ONLY=C (letters)
// runs only those parts (D needs A).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import { hostEnv, http, pinnedHost, rpc, scriptedRun, sessionLogText, startScriptedModel, startWeb, waitFor, webProfile } from './harness.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { dsh: DSH } = pinnedHost()
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))
const only = process.env.KOPT_LOOP_E2E_ONLY
const want = (part) => !only || only.includes(part) || (part === 'A' && only.includes('D'))

const { work, procs, log, check, main, checks } = scriptedRun('loop-e2e', { watchdogSec: 480 })
const requestsLog = join(work, 'requests.jsonl')
const home = join(work, 'home')

async function command(port, sid, line) {
  const value = await rpc(port, 'commands/execute', { args: { agentId: sid, line, images: [] } })
  return value?.result ?? value
}
const events = async (sid) => (await sessionLogText(home, sid)).split('\n').filter(Boolean).map(l => JSON.parse(l)).filter(e => typeof e.seq === 'number')
const loopMessages = (evs) => evs.filter(e => e.type === 'user/message' && e.data?.source?.kind === 'plugin' && e.data?.source?.plugin === 'kernel-opt')
  .map(e => e.data.content.map(b => b.text ?? '').join('\n'))
const judgeCalls = (who) => (existsSync(requestsLog) ? readFileSync(requestsLog, 'utf8').trim().split('\n').filter(Boolean).map(l => JSON.parse(l)).filter(r => r.who === who).length : 0)
const turnEnds = (evs) => evs.filter(e => e.type === 'turn/end').map(e => e.data?.reason?.kind)

function workspace(name) {
  const ws = join(work, name)
  mkdirSync(ws, { recursive: true })
  writeFileSync(join(ws, 'k.cu'), '// scripted kernel for the loop e2e\n__global__ void k() {}\n')
  // Each run is a little faster, so no two payloads are identical (the projection merges those).
  writeFileSync(join(ws, 'bench.sh'), [
    '#!/usr/bin/env bash',
    'n=$(cat .runs 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > .runs',
    'lat=$(awk -v n="$n" \'BEGIN { printf "%.2f", 3.0 - 0.25 * n }\')',
    'printf \'KERNEL_EVAL={"artifact":"k.cu","compiled":true,"correct":true,"latency_ms":%s}\\n\' "$lat"',
    '',
  ].join('\n'))
  chmodSync(join(ws, 'bench.sh'), 0o755)
  return ws
}

await main(async () => {
  const judgeScript = join(work, 'judge.json')
  writeFileSync(judgeScript, JSON.stringify([
    { text: 'OK: baseline measured honestly' },
    { text: 'Profile once before more variants.' },
    { text: '   ' },
    { text: 'far too late', delayMs: 30_000 },
  ]))
  const fake = await startScriptedModel(procs, work, join(here, 'loop-fake-llm.mjs'), ['--judge-script', judgeScript, '--log', requestsLog])
  log(`fake models on 127.0.0.1:${fake.port}`)

  const env = hostEnv(home, { llmPort: fake.port, key: 'e2e-key', KOPT_LOOP_SETTLE_MS: '300', KOPT_SUPERVISOR_TIMEOUT_MS: '4000' })
  await webProfile(DSH, env, { rows: ['- id: kernel-opt', '  config:', '    supervisor:', '      provider: deepseek-official', '      model: judge'] })
  let web = await startWeb(procs, DSH, env, 'dsh-1.log', { log })
  let port = web.port
  const control = async (sid) => (await http(port, `/plugins/kernel-opt/control?sessionId=${encodeURIComponent(sid)}`)).json().control
  const series = async (sid) => (await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`)).json()

  let a
  if (want('A')) {
    // ── A: a supervised /kloop 4 runs to its wrap-up ──
    a = (await rpc(port, 'session.create', { cwd: workspace('ws-a'), agentPreset: 'kernel-opt' })).sessionId
    await rpc(port, 'session.prompt', { sessionId: a, mode: 'queue', content: [{ type: 'text', text: 'Optimize k.cu; bench.sh measures it.' }] })
    await waitFor('the first turn', async () => turnEnds(await events(a)).length >= 1, 120_000, 500)
    const sup = await command(port, a, '/supervise on')
    check('/supervise on succeeds with the configured route', () => assert.equal(sup.kind, 'success', JSON.stringify(sup)))
    const armed = await command(port, a, '/kloop 4')
    check('/kloop 4 arms', () => {
      assert.equal(armed.kind, 'success', JSON.stringify(armed))
      assert.match(armed.text, /budget 4/)
    })
    await waitFor('the loop to stop', async () => {
      const c = await control(a)
      return c.loop.armed === false && c.loop.stopReason !== undefined
    }, 180_000, 1000)
    // The wrap-up turn itself, then a quiet period: nothing more may be sent.
    await waitFor('the wrap-up turn to end', async () => {
      const evs = await events(a)
      const lastWrap = evs.findLast(e => e.type === 'user/message' && JSON.stringify(e.data).includes('[kernel-loop wrap-up]'))
      return lastWrap && evs.some(e => e.type === 'turn/end' && e.seq > lastWrap.seq)
    }, 60_000, 500)
    await sleep(2000)
    const evA = await events(a)
    writeFileSync(join(work, 'session-a.json'), JSON.stringify(evA))
    const msgs = loopMessages(evA)
    const cA = await control(a)
    const sA = await series(a)
    const judged = readFileSync(requestsLog, 'utf8').trim().split('\n').map(l => JSON.parse(l)).filter(r => r.who === 'judge')
    check('three continuations, then one wrap-up on the budget', () => {
      assert.equal(msgs.length, 4, msgs.join('\n-----\n'))
      assert.match(msgs[0], /^\[kernel-loop round 1\] 1\/4 evaluations used/)
      assert.match(msgs[1], /^\[kernel-loop round 2\] 2\/4 evaluations used/)
      assert.match(msgs[2], /^\[kernel-loop round 3\] 3\/4 evaluations used/)
      assert.match(msgs[3], /^\[kernel-loop wrap-up\] 4\/4 evaluations used; stopping \(budget\)/)
    })
    check('the supervisor was asked at every checkpoint with our rubric and a digest', () => {
      assert.ok(judged.length >= 4, String(judged.length)) // a host may retry a blank answer itself
      assert.ok(judged.every(r => r.model === 'judge'))
      assert.match(judged[0].system ?? '', /Correctness first/)
      assert.match(judged[1].prompt ?? '', /bash bench\.sh --variant/)
    })
    check('OK → one approval line; advice → the next continuation; blank and too slow → "review failed", no advice', () => {
      assert.match(msgs[0], /\nSupervisor review: OK\. baseline measured honestly\n/)
      assert.match(msgs[1], /Supervisor review \(advisory, from the second model\):\nProfile once before more variants\./)
      assert.match(msgs[2], /\nSupervisor review: failed\. .*\(empty\)/)
      assert.match(msgs[3], /\nSupervisor review: failed\. .*\(timeout\)/)
      for (const m of msgs.slice(2)) assert.ok(!m.includes('Supervisor review: OK.') && !m.includes('advisory, from the second model') && !m.includes('far too late'))
    })
    check('the projected rounds read the reviews back', () => {
      assert.equal(sA.rounds.length, 4)
      assert.equal(sA.rounds[0].review, 'ok')
      assert.equal(sA.rounds[0].reviewNote, 'baseline measured honestly')
      assert.equal(sA.rounds[1].review, 'Profile once before more variants.')
      assert.equal(sA.rounds[2].review, undefined)
      assert.equal(sA.rounds[2].reviewFailed, true)
      assert.equal(sA.rounds[3].wrapUp, true)
      assert.equal(sA.rounds[3].reviewFailed, true)
      // The record's supervision column: each row shows the review of its own round (the core's
      // rowRounds), so rows after the failed reviews never show round 2's advice.
      const shown = sA.chart.rowRounds.map(r => (r === null ? null : sA.rounds[r]))
      assert.ok(shown.some(r => r?.reviewFailed), JSON.stringify(sA.chart.rowRounds))
      for (const [i, r] of shown.entries()) if (r && r.seq > sA.rounds[1].seq) assert.notEqual(r.review, 'Profile once before more variants.', `row ${i}`)
      assert.deepEqual(sA.rounds.slice(0, 3).map(r => r.round), [1, 2, 3])
    })
    check('control: disarmed on the budget, 4 evaluations, the wrap-up run counted apart', () => {
      assert.equal(cA.loop.armed, false)
      assert.equal(cA.loop.stopReason, 'budget')
      assert.equal(cA.loop.budget, 4)
      assert.equal(cA.loop.evalsDone, 4)
      assert.equal(cA.loop.evalsOverBudget, 0)
      assert.equal(cA.supervisor.enabled, true)
      assert.equal(cA.supervisor.lastAdvice, 'Profile once before more variants.')
      assert.ok(sA.iterations.length >= 5, 'the wrap-up turn measured too')
    })
  }

  if (want('B')) {
    // ── B: /kloop stop aborts a running loop turn ──
    const b = (await rpc(port, 'session.create', { cwd: workspace('ws-b'), agentPreset: 'kernel-opt' })).sessionId
    await rpc(port, 'session.prompt', { sessionId: b, mode: 'queue', content: [{ type: 'text', text: 'SLOW-TASK: optimize k.cu; bench.sh measures it.' }] })
    await waitFor('the first turn of B', async () => turnEnds(await events(b)).length >= 1, 120_000, 500)
    await command(port, b, '/supervise off')
    const armedB = await command(port, b, '/kloop 5')
    check('/kloop 5 arms B', () => assert.equal(armedB.kind, 'success', JSON.stringify(armedB)))
    await waitFor('the loop turn to be running its sleep', async () => {
      const evs = await events(b)
      return loopMessages(evs).length === 1 && evs.some(e => e.type === 'tool/call' && String(e.data?.arguments).includes('sleep 120'))
    }, 60_000, 500)
    const tStop = Date.now()
    const stopped = await command(port, b, '/kloop stop')
    check('/kloop stop succeeds', () => assert.equal(stopped.kind, 'success', JSON.stringify(stopped)))
    await waitFor('the aborted turn end', async () => turnEnds(await events(b)).includes('aborted'), 20_000, 300)
    const abortMs = Date.now() - tStop
    await sleep(2000)
    const evB = await events(b)
    const cB = await control(b)
    // abortMs includes the 300 ms polling of the log; the 15 s bound tells an abort from the `sleep 120` running on.
    check(`the running turn is aborted at once (${abortMs} ms), no wrap-up, nothing more sent`, () => {
      assert.ok(abortMs < 15_000)
      assert.equal(loopMessages(evB).length, 1)
      assert.ok(!loopMessages(evB).some(t => t.includes('[kernel-loop wrap-up]')))
      assert.equal(cB.loop.armed, false)
      assert.equal(cB.loop.stopReason, 'stopped')
    })
  }

  let liveA
  if (want('D')) {
    // ── D: re-arming with a smaller budget leaves the rounds already run as they were ──
    const before = await series(a)
    const rearmed = await command(port, a, '/kloop 2')
    check('/kloop 2 re-arms A', () => assert.equal(rearmed.kind, 'success', JSON.stringify(rearmed)))
    await waitFor('the re-armed loop to wrap up', async () => loopMessages(await events(a)).length === 5, 60_000, 500)
    await waitFor('the second wrap-up turn to end', async () => {
      const evs = await events(a)
      const lastWrap = evs.findLast(e => e.type === 'user/message' && JSON.stringify(e.data).includes('[kernel-loop wrap-up]'))
      return lastWrap && evs.some(e => e.type === 'turn/end' && e.seq > lastWrap.seq)
    }, 60_000, 500)
    await sleep(1500)
    liveA = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(a)}`)
    const after = liveA.json()
    check('re-armed: wraps up at once on the new budget (4/2)', () => {
      assert.equal(after.rounds.at(-1).wrapUp, true)
      assert.equal(after.rounds.at(-1).budget, 2)
      assert.equal(after.control.loop.budget, 2)
    })
    check(`the phases of the rounds already run are unchanged (${before.chart.phases.join(',')})`, () => {
      assert.deepEqual(after.chart.phases.slice(0, before.chart.phases.length), before.chart.phases)
      assert.equal(after.chart.counts.overBudget, 0)
      assert.ok(after.chart.phases.length > before.chart.phases.length, 'the new wrap-up turn measured')
    })
  }

  if (want('C')) {
    // ── C: the host's own stop (session.cancel, the composer's stop button) ends the loop ──
    const c = (await rpc(port, 'session.create', { cwd: workspace('ws-c'), agentPreset: 'kernel-opt' })).sessionId
    await rpc(port, 'session.prompt', { sessionId: c, mode: 'queue', content: [{ type: 'text', text: 'SLOW-TASK: optimize k.cu; bench.sh measures it.' }] })
    await waitFor('the first turn of C', async () => turnEnds(await events(c)).length >= 1, 120_000, 500)
    await command(port, c, '/supervise off')
    const armedC = await command(port, c, '/kloop 5')
    check('/kloop 5 arms C', () => assert.equal(armedC.kind, 'success', JSON.stringify(armedC)))
    await waitFor('the loop turn of C to be running its sleep', async () => {
      const evs = await events(c)
      return loopMessages(evs).length === 1 && evs.some(e => e.type === 'tool/call' && String(e.data?.arguments).includes('sleep 120'))
    }, 60_000, 500)
    await rpc(port, 'session.cancel', { sessionId: c })
    await waitFor('the cancelled turn end', async () => turnEnds(await events(c)).includes('aborted'), 20_000, 300)
    await sleep(1000)
    const cC = await control(c)
    check('session.cancel disarms the loop (stopped)', () => {
      assert.equal(cC.loop.armed, false, JSON.stringify(cC.loop))
      assert.equal(cC.loop.stopReason, 'stopped')
    })
    // The human's next message runs its turn; the loop must not speak after it.
    const endsBefore = turnEnds(await events(c)).length
    await rpc(port, 'session.prompt', { sessionId: c, mode: 'queue', content: [{ type: 'text', text: 'Measure it once more, then stop.' }] })
    await waitFor('the human turn after the cancel', async () => turnEnds(await events(c)).length > endsBefore, 60_000, 300)
    await sleep(2500)
    const evC = await events(c)
    check('no continuation after the next human message', () => {
      assert.equal(loopMessages(evC).length, 1, loopMessages(evC).join('\n-----\n'))
      assert.equal(turnEnds(evC).at(-1), 'completed')
    })
    // Stopped while no turn runs (a supervisor review in flight): the host logs no turn end for it.
    await command(port, c, '/supervise use deepseek-official/judge-slow')
    assert.equal((await command(port, c, '/supervise on')).kind, 'success')
    const judgedBefore = judgeCalls('judge-slow')
    assert.equal((await command(port, c, '/kloop 5')).kind, 'success')
    await waitFor('the slow review to be in flight', () => judgeCalls('judge-slow') > judgedBefore, 30_000, 100)
    await rpc(port, 'session.cancel', { sessionId: c })
    await sleep(300)
    const cC2 = await control(c)
    await sleep(4500) // the review answers after 3 s; nothing may follow it
    const evC2 = await events(c)
    check('session.cancel during a review (agent idle) disarms; the late answer sends nothing', () => {
      assert.equal(cC2.loop.armed, false, JSON.stringify(cC2.loop))
      assert.equal(cC2.loop.stopReason, 'stopped')
      assert.equal(loopMessages(evC2).length, loopMessages(evC).length, loopMessages(evC2).join('\n-----\n'))
    })
  }

  if (want('D')) {
    // ── D, after a restart: the past session draws what was seen live ──
    await procs.stop(web)
    web = await startWeb(procs, DSH, env, 'dsh-2.log', { log })
    port = web.port
    let past = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(a)}`)
    // 202 {loading} until the log has been read, then the body.
    for (let i = 0; past.status === 202 && i < 600; i++) {
      await new Promise(resolve => setTimeout(resolve, 100))
      past = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(a)}`)
    }
    check('after a restart the past session has the same points and phases as live', () => {
      assert.equal(past.status, 200)
      assert.equal(past.headers.get('x-kernel-opt-source'), 'persisted')
      const p = past.json()
      const l = liveA.json()
      assert.deepEqual(p.iterations, l.iterations)
      assert.deepEqual(p.rounds, l.rounds)
      assert.deepEqual(p.chart.phases, l.chart.phases)
      assert.deepEqual(p.chart.counts, l.chart.counts)
    })
  }
  log(`${checks()} checks passed`)
})
