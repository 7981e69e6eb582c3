// Live push (lib/push.mjs) in a real `dsh web`: this plugin and bench/http/feeder (appends events
// through the host's own Session.append, so the plugin learns of them as `session/event`s) in a
// scratch profile. Tabs are Node 22's own WebSocket (undici) and raw sockets (tests/e2e/ws-client.mjs)
// where a test needs hostile headers or a tab that never reads. Checks:
//   two tabs follow a run and end on the body GET /series serves; a tab that disconnects mid-run
//   and resumes with since=<its revision> ends there too (no point lost or doubled); bad Origin,
//   bad Host and cross-site upgrades are refused; a tab that never reads keeps the host's buffers
//   bounded while the other tab stays current, then re-syncs from its revision when it reads.
// Run by tests/e2e/run.sh (Node 22 on PATH, KOPT_HOST_DIR set).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import vm from 'node:vm'
import { FEEDER, ROOT, feederAppend, hostEnv, http, pinnedHost, rpc, run, scriptedRun, sleep, startWeb, waitFor, webProfile } from './harness.mjs'
import { rawClient } from './ws-client.mjs'
import { firstDifference } from '../addon/addon.mjs' // the vectors' comparison rule (numbers within 1e-12)

const { dsh: DSH } = pinnedHost()
if (typeof WebSocket !== 'function') throw new Error('Node 22 (global WebSocket) is required: . $KOPT_HOST_DIR/env.sh')
const sockets = new Set()
const closeSockets = () => { for (const s of sockets) { try { s.close?.() } catch {} try { s.socket?.destroy() } catch {} } }
const { t0, work, procs, log, main } = scriptedRun('push-e2e', { watchdogSec: 300, beforeCleanup: closeSockets })

// ── the host ──
const home = join(work, 'home')
const ws = join(work, 'ws')
mkdirSync(ws, { recursive: true })
const env = hostEnv(home, { key: 'push-e2e' })
// Small push bounds (push.* in docs/config.md) so a tab that never reads overflows within seconds.
await webProfile(DSH, env, { rows: ['- id: kernel-opt', '  config:', '    push: { bufferKiB: 64, queueKiB: 256, stalledSec: 30 }'], plugins: [ROOT, FEEDER] })
const { port } = await startWeb(procs, DSH, env, 'dsh-web.log', { feeder: true, log })

// ── a session with a generated run ──
const N0 = 10_000
const MORE = 8_000
const file = join(work, 'gen.json')
await run('bash', ['-c', 'exec "$0" "$1" "$2" > "$3"', process.execPath, join(ROOT, 'tests/fixtures/vectors/gen-large.mjs'), String(N0 + MORE), file])
const events = JSON.parse(readFileSync(file, 'utf8')).map(e => ({ type: e.type, data: e.data }))
let next = 0
async function append(n) {
  const batch = events.slice(next, next + n)
  next += batch.length
  const r = await feederAppend(port, sid, batch)
  assert.equal(r.failed, 0, r.firstError)
}
const { sessionId: sid } = await rpc(port, 'session.create', { cwd: ws, agentPreset: 'kernel-opt' })
await append(N0)
const pushUrl = (since) => `ws://127.0.0.1:${port}/plugins/kernel-opt/push?sessionId=${encodeURIComponent(sid)}${since !== undefined ? `&since=${since}` : ''}`
async function served() {
  const r = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`)
  assert.equal(r.status, 200)
  return { revision: Number(r.headers.get('x-kopt-revision')), body: r.json() }
}
const hubStats = async () => (await http(port, '/plugins/kernel-opt/push')).json().push
log(`session ${sid}: ${N0} events, ${(await served()).body.iterations.length} points`)

// The tab's own code for applying an answer (lib/client.js applyAnswer, docs/protocol.md), loaded
// as the host's module loader runs it, with an inert React.
function loadApplyAnswer() {
  let exported
  const inert = new Proxy({}, { get: () => (x) => x })
  const window = { __ModuleLoader__: { load: ({ factory }) => { exported = factory(() => inert) } } }
  vm.runInNewContext(readFileSync(join(ROOT, 'lib/client.js'), 'utf8'), { window, console }, { filename: 'lib/client.js' })
  return exported.__test.applyAnswer
}
const applyAnswer = loadApplyAnswer()

// A tab's state from its messages: each must follow on from the state held (a delta from the held
// revision, or a full body) and move it forward.
function applyMessage(tab, m) {
  assert.ok(typeof m.revision === 'number', JSON.stringify(m).slice(0, 200))
  assert.ok(tab.revision === null || m.revision > tab.revision, `${tab.name}: revision ${m.revision} after ${tab.revision} (repeated or out of order)`)
  if (m.kind === 'delta') assert.equal(m.since, tab.revision, `${tab.name}: a delta from ${m.since} while holding ${tab.revision}`)
  const next = applyAnswer(tab.body, m)
  assert.ok(next, `${tab.name}: message ${m.kind} for ${m.revision} does not apply to the held state`)
  tab.body = next
  tab.kinds[m.kind] = (tab.kinds[m.kind] ?? 0) + 1
  const seqs = tab.body.iterations.map(p => p.seq)
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `${tab.name}: point seqs not increasing at ${i}`)
  tab.revision = m.revision
  tab.count++
}
function openTab(name, since) {
  const tab = { name, revision: since ?? null, body: null, count: 0, open: false, error: null, kinds: {}, bytes: 0 }
  const sock = new WebSocket(pushUrl(since))
  sockets.add(sock)
  tab.sock = sock
  sock.onopen = () => { tab.open = true }
  sock.onerror = (e) => { tab.error = e.message ?? 'error' }
  sock.onclose = () => { tab.open = false; sockets.delete(sock) }
  sock.onmessage = (e) => { tab.bytes += e.data.length; try { applyMessage(tab, JSON.parse(e.data)) } catch (error) { tab.error ??= error } } // the first error says why
  return tab
}
// The tab draws the curve's line from the points; a chart applied as an append has no `line`
// (docs/protocol.md), so bodies are compared without it.
const noLine = b => (b && b.chart ? { ...b, chart: { ...b.chart, line: undefined } } : b)
async function settled(tabs) {
  const want = await served()
  await waitFor(`tabs at revision ${want.revision}`, () => {
    for (const t of tabs) if (t.error) throw t.error instanceof Error ? t.error : new Error(String(t.error))
    return tabs.every(t => t.revision === want.revision)
  }, 20_000, 50)
  for (const t of tabs) assert.equal(firstDifference(noLine(want.body), noLine(t.body)), null, `${t.name}: the pushed state differs from GET /series`)
  return want
}

await main(async () => {
  // 1. Two tabs follow the run; one drops mid-run and resumes from its revision.
  const a = openTab('A')
  const b = openTab('B')
  await settled([a, b])
  log(`two tabs subscribed at revision ${a.revision}`)
  for (let i = 0; i < 4; i++) { await append(100); await sleep(30) }
  await settled([a, b])
  a.sock.close()
  await waitFor('A closed', () => !a.open, 5000, 20)
  const missedFrom = a.revision
  for (let i = 0; i < 4; i++) { await append(100); await sleep(30) }
  const mid = await settled([b])
  assert.ok(mid.revision > missedFrom, 'revisions were missed while A was away')
  const a2 = openTab('A2', missedFrom)
  a2.body = a.body // what the tab held when it dropped
  for (let i = 0; i < 2; i++) { await append(100); await sleep(30) }
  const end1 = await settled([a2, b])
  assert.ok((a2.kinds.delta ?? 0) >= 1, `the resumed tab got deltas: ${JSON.stringify(a2.kinds)}`)
  log(`reconnect: A resumed from ${missedFrom} past ${mid.revision} to ${end1.revision}; both tabs equal GET /series (${end1.body.iterations.length} points); messages A2 ${JSON.stringify(a2.kinds)}, B ${JSON.stringify(b.kinds)}`)

  // 2. Fence and handshake refusals, from the host's own upgrade dispatch.
  const q = `sessionId=${encodeURIComponent(sid)}`
  const path = '/plugins/kernel-opt/push'
  const refusals = {
    'bad Origin': await rawClient(port, q, { Origin: 'http://evil.example' }, path),
    'bad Host': await rawClient(port, q, { Host: 'evil.example' }, path),
    'cross-site': await rawClient(port, q, { 'Sec-Fetch-Site': 'cross-site' }, path),
    'unknown session': await rawClient(port, 'sessionId=session-does-not-exist', {}, path),
  }
  const codes = Object.fromEntries(Object.entries(refusals).map(([k, c]) => [k, c.status]))
  assert.deepEqual(codes, { 'bad Origin': 403, 'bad Host': 403, 'cross-site': 403, 'unknown session': 404 })
  for (const c of Object.values(refusals)) c.socket.destroy()
  const same = await rawClient(port, q, { Origin: `http://127.0.0.1:${port}` }, path)
  assert.equal(same.status, 101, 'a same-origin upgrade is accepted')
  same.socket.destroy()
  const plain = await http(port, path)
  assert.equal(plain.status, 426)
  log(`refusals: ${JSON.stringify(codes)}; same origin 101; plain GET 426`)

  // 3. A tab that never reads while the run goes on (a revision every ~30 ms).
  const slow = await rawClient(port, q, {}, path)
  sockets.add(slow)
  assert.equal(slow.status, 101)
  await waitFor('slow tab first message', () => slow.messages.length === 1, 20_000, 20)
  slow.socket.pause()
  const limits = (await hubStats()).limits
  let maxHeld = 0
  let maxFrame = 0
  // Until its queue overflowed (and a few revisions more), as long as the generated run lasts.
  let after = 0
  // Each step also brings an evaluation with eight whole-file writes attached (12,000 characters
  // each, the cap of spec K-2; random text, so that nothing on the way compresses it away), so every
  // delta carries about 100 KB, as a run with large edits does. Appended deltas alone are a few KB
  // (an axis that moves changes only the chart's frame, docs/protocol.md): the kernel's socket
  // buffers absorb them and the hub's queue never fills.
  const result = (id, text) => ({ type: 'tool/result', data: { message: { role: 'user', content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text }], isError: false }], source: { kind: 'tool', callId: id } } } })
  const bigEval = async (k) => {
    const events = []
    for (let w = 0; w < 8; w++) {
      const wid = `write_${k}_${w}`
      events.push({ type: 'tool/call', data: { callId: wid, name: 'write', arguments: JSON.stringify({ file_path: 'solution/k.cu', content: randomBytes(9000).toString('base64') }) } }, result(wid, 'wrote'))
    }
    const id = `big_${k}`
    events.push({ type: 'tool/call', data: { callId: id, name: 'kernel_evaluate', arguments: JSON.stringify({ artifact_path: 'solution/k.cu' }) } },
      result(id, JSON.stringify({ correct: true, latency_ms: 1 + (k % 7) / 10 })))
    const r = await http(port, '/plugins/kopt-bench-feeder/append', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: sid, events }),
    })
    assert.equal(r.status, 200, r.text)
  }
  for (let i = 0; i < 250 && next < events.length && after < 5; i++) {
    // up to the next tool call, so the fast evaluation does not land between a call and its result
    let upTo = Math.min(events.length, next + 30)
    while (upTo < events.length && events[upTo].type !== 'tool/call') upTo++
    await append(upTo - next)
    await bigEval(i)
    await sleep(20)
    const s = await hubStats()
    maxHeld = Math.max(maxHeld, s.queuedBytes + s.socketBytes)
    if (s.overflows > 0) after++
  }
  const end2 = await settled([a2, b])
  maxFrame = Buffer.byteLength(JSON.stringify(end2.body)) + 64
  const s2 = await hubStats()
  log(`never-reading tab: host held at most ${(maxHeld / 1e6).toFixed(2)} MB for the tabs (bound ${((limits.highWater + limits.maxQueueBytes + maxFrame) / 1e6).toFixed(2)} MB), overflows ${s2.overflows}; the reading tabs stayed current`)
  assert.ok(s2.overflows >= 1, `the slow tab overflowed its queue: ${JSON.stringify(s2)}`)
  assert.ok(maxHeld <= limits.highWater + limits.maxQueueBytes + maxFrame, `held ${maxHeld}`)
  const before = slow.messages.length
  slow.socket.resume()
  await waitFor('the slow tab re-synced', () => slow.messages.at(-1)?.revision === end2.revision, 30_000, 50)
  const st = { name: 'slow', revision: null, body: null, count: 0, kinds: {} }
  for (const m of slow.messages) applyMessage(st, m)
  assert.equal(firstDifference(noLine(end2.body), noLine(st.body)), null, 'slow tab: its state differs from GET /series')
  log(`slow tab: ${slow.messages.length - before} messages after it read again (the reading tab B got ${b.count}, ${(b.bytes / 1e6).toFixed(2)} MB in all); ends equal to GET /series`)

  // 4. Closing every tab releases the hub.
  slow.socket.destroy(); a2.sock.close(); b.sock.close()
  await waitFor('hub empty', async () => { const s = await hubStats(); return s.clients === 0 && s.sessions === 0 }, 10_000, 100)
  log('all tabs closed: no client, no session held')
  console.log(`[push-e2e] passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
})
