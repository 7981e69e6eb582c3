// kernel_evaluate end to end (DV-13): a real `dsh web` with this plugin, a scripted model on 127.0.0.1 and
// the real kopt-bench (build-evaluator/), on the demo's CPU relu op. Checks:
//   A  a kernel_evaluate call becomes a point measured by the plugin's evaluator (trust "plugin", sources
//      with the SHA-256 of each file); a shell line printing the same payload, computed at run time, stays
//      self-reported; the judge was forked from the warm image; the service never sees the host's key;
//   B+C two sessions evaluating at once: one queues (control.evaluation), both finish as plugin points;
//   D  the user's stop during an evaluation: the tool result says cancelled and no process of it survives;
//   F  kernel_finalize re-measures the stored bytes after the file and a header it includes from a sibling
//      folder were edited, and says which changed (issue 51: sources.read, every file the build read);
//   P  a KernelBench problem (model.py) and a ModelNew solution (solution/kernel.py), no input spec: a
//      point measured by the plugin's evaluator, bound to both files, its runner forked with Python warm;
//   I  the idle warm judge ends by itself (evaluate.idleSec);
//   W  without its warm image (killed) the judge starts as its own process and isolation.start says why;
//   H  the host's exit (SIGKILL) ends the warm judge: no process survives.
// Run by tests/e2e/run.sh. env: KOPT_HOST_DIR (required), KOPT_BENCH_DIR (default build-evaluator),
// KOPT_BENCH_CACHE (default <bench dir>/test-cache: a warm precompiled header), KOPT_E2E_KEEP=1.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, appendFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import { ROOT, hostEnv, http, pinnedHost, rpc, run, scriptedRun, sessionLogText, startScriptedModel, startWeb, waitFor, webProfile } from './harness.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { dsh: DSH } = pinnedHost()
const BENCH_DIR = resolve(ROOT, process.env.KOPT_BENCH_DIR || 'build-evaluator')
const BENCH = join(BENCH_DIR, 'kopt-bench')
if (!existsSync(BENCH)) throw new Error(`${BENCH} is missing: build it (bash evaluator/tests/run-cpu.sh)`)
const CACHE = process.env.KOPT_BENCH_CACHE || join(BENCH_DIR, 'test-cache')

const { work, procs, log, check, main, checks } = scriptedRun('evaluate-e2e', { watchdogSec: 540 })
const home = join(work, 'home')
const ws = join(work, 'ws')
cpSync(join(ROOT, 'demo/workspace'), ws, { recursive: true })
// The kernel includes a header from a sibling folder (issue 51): its build reads it, so the point is bound to it.
const TILE = '#pragma once\nconstexpr float kReluFloor = 0.0f;\n'
mkdirSync(join(ws, 'common'), { recursive: true })
writeFileSync(join(ws, 'common/tile.h'), TILE)
writeFileSync(join(ws, 'solution/kernel.cpp'), `#include "../common/tile.h"\n${readFileSync(join(ws, 'solution/kernel.cpp'), 'utf8')}`)

// ── processes, from /proc ──
function procInfo(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { pid, state: rest[0], ppid: Number(rest[1]), comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) }
  } catch { return undefined }
}
const allProcs = () => readdirSync('/proc').filter(p => /^\d+$/.test(p)).map(Number).map(procInfo).filter(p => p && p.state !== 'Z')
const alive = (pid) => { const p = procInfo(pid); return p !== undefined && p.state !== 'Z' }
/** Our evaluator service: kopt-bench --serve <host pid>, from this checkout's build. */
const services = () => allProcs().filter(p => p.argv[0] === BENCH && p.argv[1] === '--serve')
function descendants(root) {
  const ps = allProcs()
  const out = []
  const walk = (pid) => { for (const p of ps) if (p.ppid === pid) { out.push(p); walk(p.pid) } }
  walk(root)
  return out
}

// ── the scripted model: one scenario per session, picked by a tag in the user's message ──
const evaluateCall = (solution, extra = {}) => ({ name: 'kernel_evaluate', arguments: {
  solution: [solution], reference: 'ref.pt', inputs: 'inputs.json',
  options: { warmup: 2, min_trials: 5, max_trials: 10, max_time: 3 }, ...extra } })
// A payload computed at run time (nothing in the command spells it out), carrying the plugin's mark.
const forged = 'python3 -c \'import json; print("KERNEL_EVAL="+json.dumps(dict(artifact="solution/ker"+"nel.cpp", latency_ms=3/2, correct=1>0, measured_by="kernel"+"-opt")))\''
const done = { text: '完成。' }
const script = {
  steps: [done],
  scenarios: [
    { match: '[A]', steps: [{ tool_calls: [evaluateCall('solution/kernel.cpp')] }, { tool_calls: [{ name: 'bash', arguments: { command: forged, description: 'forge' } }] }, done] },
    { match: '[B]', steps: [{ tool_calls: [evaluateCall('solution/slow.cpp')] }, done] },
    { match: '[C]', steps: [{ tool_calls: [evaluateCall('solution/kernel.cpp')] }, done] },
    { match: '[D]', steps: [{ tool_calls: [evaluateCall('solution/hang.cpp')] }, done] },
    { match: '[F]', steps: [{ tool_calls: [{ name: 'kernel_finalize', arguments: { artifact_path: 'solution/kernel.cpp' } }] }, done] },
    { match: '[H]', steps: [{ tool_calls: [evaluateCall('solution/kernel.cpp')] }, done] },
    { match: '[P]', steps: [{ tool_calls: [{ name: 'kernel_evaluate', arguments: { solution: ['solution/kernel.py'], reference: 'model.py',
      options: { warmup: 2, min_trials: 5, max_trials: 10, max_time: 3 } } }] }, done] },
    { match: '[W]', steps: [{ tool_calls: [evaluateCall('solution/kernel.cpp')] }, done] },
  ],
}
writeFileSync(join(work, 'script.json'), JSON.stringify(script))
// Candidates: the demo's kernel, one that takes ~0.15 s a call (so a second evaluation queues behind it),
// and one that never returns (so the stop lands during the judge's work).
const kernel = readFileSync(join(ws, 'solution/kernel.cpp'), 'utf8')
const sleeping = (ms) => kernel.replace('static at::Tensor forward(const at::Tensor& x) {',
  `#include <chrono>\n#include <thread>\nstatic at::Tensor forward(const at::Tensor& x) {\n  std::this_thread::sleep_for(std::chrono::milliseconds(${ms}));`)
writeFileSync(join(ws, 'solution/slow.cpp'), sleeping(150))
writeFileSync(join(ws, 'solution/hang.cpp'), sleeping(600_000))

const events = async (sid) => (await sessionLogText(home, sid)).split('\n').filter(Boolean).map(l => JSON.parse(l)).filter(e => e.type)
const turnEnds = (evs) => evs.filter(e => e.type === 'turn/end').map(e => e.data?.reason?.kind)
function resultOf(evs, name) {
  const call = evs.find(e => e.type === 'tool/call' && e.data?.name === name)
  const res = call && evs.find(e => e.type === 'tool/result' && e.data?.message?.source?.callId === call.data.callId)
  return res ? JSON.stringify(res.data.message) : undefined
}

await main(async () => {
  const fake = await startScriptedModel(procs, work, join(here, 'fake-llm.mjs'), ['--script', join(work, 'script.json'), '--log', join(work, 'fake-requests.jsonl')])
  const env = hostEnv(home, { llmPort: fake.port, key: 'e2e-secret-key', KOPT_BENCH_CACHE: CACHE })
  await webProfile(DSH, env, { rows: ['- id: kernel-opt', '  config:', '    evaluate:', `      koptBench: ${BENCH}`, '      idleSec: 8'] })
  const web = await startWeb(procs, DSH, env, 'dsh.log', { log })
  const { port } = web

  const session = async (tag) => (await rpc(port, 'session.create', { cwd: ws, agentPreset: 'kernel-opt' })).sessionId
  const prompt = (sid, text) => rpc(port, 'session.prompt', { sessionId: sid, mode: 'queue', content: [{ type: 'text', text }] })
  const series = async (sid) => (await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`)).json()
  const settled = (sid, n, what) => waitFor(what, async () => turnEnds(await events(sid)).length >= n, 240_000, 500)

  // ── A ──
  const a = await session()
  await prompt(a, '[A] 评测 solution/kernel.cpp')
  await settled(a, 1, 'session A\'s turn')
  const sa = await series(a)
  writeFileSync(join(work, 'series-a.json'), JSON.stringify(sa, null, 1))
  const [pa, fa] = sa.iterations
  check('A: the kernel_evaluate call is a point measured by the plugin\'s evaluator, bound to its bytes', () => {
    assert.equal(sa.iterations.length, 2)
    assert.equal(pa.tool, 'kernel_evaluate')
    assert.equal(pa.trust, 'plugin')
    assert.equal(pa.correct, true, JSON.stringify(pa))
    assert.ok(pa.latencyMs > 0)
    assert.equal(pa.artifactPath, 'solution/kernel.cpp')
  })
  const shaOf = async (f) => (await run('sha256sum', [join(ws, f)])).stdout.split(' ')[0]
  const [kSha, rSha, iSha] = await Promise.all(['solution/kernel.cpp', 'ref.pt', 'inputs.json'].map(shaOf))
  check('A: sources carry the SHA-256 of the solution, the reference and the input spec', () => {
    const { read, ...named } = pa.sources
    assert.deepEqual(named, { solution: [{ path: 'solution/kernel.cpp', sha256: kSha }], reference: { path: 'ref.pt', sha256: rSha }, inputs: { path: 'inputs.json', sha256: iSha } })
    // ... and every file the build read rides with the point (issue 51), the sibling folder's header included
    assert.ok(Array.isArray(read) && read.some(f => f.path === 'solution/kernel.cpp' && f.sha256 === kSha), JSON.stringify(read))
    assert.ok(read.some(f => f.path === 'common/tile.h'), JSON.stringify(read))
  })
  check('A: the shell line with the same payload, computed at run time, stays self-reported (no sources)', () => {
    assert.equal(fa.tool, 'bash')
    assert.equal(fa.trust, 'self-reported')
    assert.equal(fa.latencyMs, 1.5)
    assert.equal(fa.sources, undefined)
  })
  const evA = await events(a)
  const resultA = resultOf(evA, 'kernel_evaluate')
  const tSha = await shaOf('common/tile.h')
  check('A: the tool result binds every file the build read (sources.read): the solution and the header in the sibling folder', () => {
    const read = /\\"read\\":\[(.*?)\]/.exec(resultA ?? '')?.[1] ?? ''
    assert.ok(read.includes('common/tile.h') && read.includes(tSha), read || resultA)
    assert.ok(read.includes('solution/kernel.cpp') && read.includes(kSha), read)
    assert.ok(!(resultA ?? '').includes('KOPT_FILES_READ='), 'the list is bound, not repeated in the report')
  })
  check('A: the judge was forked from the plugin\'s warm judge image (native_metrics.isolation.start)', () => {
    assert.match(resultA, /judge: forked from the plugin's warm judge image/)
  })
  const [svc] = services()
  check('A: the warm judge outlives the evaluation (one service, its image) and never sees the host\'s key', () => {
    assert.ok(svc, 'kopt-bench --serve is running')
    const kids = descendants(svc.pid)
    assert.deepEqual(kids.map(k => k.argv.slice(0, 2).join(' ')), [`${join(BENCH_DIR, 'kopt-bench-worker')} --image`])
    const environ = readFileSync(`/proc/${svc.pid}/environ`, 'utf8')
    assert.ok(!environ.includes('e2e-secret-key'), 'the API key reached kopt-bench')
    assert.ok(environ.includes(`KOPT_BENCH_CACHE=${CACHE}`))
  })
  const hostPid = svc.ppid

  // ── P: a KernelBench-format Python solution against the problem itself ──
  const pSession = await session()
  await prompt(pSession, '[P] 评测 solution/kernel.py')
  await settled(pSession, 1, 'session P\'s turn')
  const sp = await series(pSession)
  const [pp] = sp.iterations
  const resultP = resultOf(await events(pSession), 'kernel_evaluate')
  const [pySha, modelSha] = await Promise.all(['solution/kernel.py', 'model.py'].map(shaOf))
  check('P: a ModelNew solution against a KernelBench problem (no input spec) is a correct point measured by the plugin', () => {
    assert.equal(sp.iterations.length, 1)
    assert.equal(pp.tool, 'kernel_evaluate')
    assert.equal(pp.trust, 'plugin')
    assert.equal(pp.correct, true, JSON.stringify(pp))
    assert.ok(pp.latencyMs > 0)
    assert.equal(pp.artifactPath, 'solution/kernel.py')
    assert.deepEqual(pp.sources?.solution, [{ path: 'solution/kernel.py', sha256: pySha }])
    assert.deepEqual(pp.sources?.read, [{ path: 'solution/kernel.py', sha256: pySha }])
    assert.deepEqual(pp.sources?.reference, { path: 'model.py', sha256: modelSha })
    assert.equal(pp.sources?.inputs, undefined)
  })
  check('P: its runner came from the warm image with Python started there (loading the candidate well under a cold import)', () => {
    assert.match(resultP, /judge: forked from the plugin's warm judge image/)
    const loading = Number(/\\"loading the candidate\\":([0-9.]+)/.exec(resultP ?? '')?.[1])
    assert.ok(loading >= 0 && loading < 700, `loading the candidate took ${loading} ms: ${resultP?.slice(0, 400)}`)
  })

  // ── B + C: two sessions at once ──
  const b = await session()
  const c = await session()
  await prompt(b, '[B] 评测 solution/slow.cpp')
  await waitFor('B running', async () => (await series(b)).control?.evaluation?.state === 'running', 120_000, 100)
  await prompt(c, '[C] 评测 solution/kernel.cpp')
  const seenC = await waitFor('C queued behind B', async () => {
    const e = (await series(c)).control?.evaluation
    return e?.state === 'queued' ? e : undefined
  }, 60_000, 100)
  check('B+C: the second evaluation queues behind the first (control.evaluation)', () => {
    assert.equal(seenC.position, 1)
    assert.ok(seenC.since > 0)
  })
  await settled(b, 1, 'session B\'s turn')
  await settled(c, 1, 'session C\'s turn')
  const [sb, sc] = [await series(b), await series(c)]
  check('B+C: both finish as points measured by the plugin\'s evaluator; the queue is empty', () => {
    assert.equal(sb.iterations[0].trust, 'plugin')
    assert.equal(sb.iterations[0].correct, true, JSON.stringify(sb.iterations[0]))
    assert.equal(sc.iterations[0].trust, 'plugin')
    assert.equal(sc.iterations[0].correct, true, JSON.stringify(sc.iterations[0]))
    assert.equal(sb.control.evaluation, undefined)
    assert.equal(sc.control.evaluation, undefined)
  })

  // ── D: the user's stop during an evaluation ──
  const d = await session()
  await prompt(d, '[D] 评测 solution/hang.cpp')
  await waitFor('D judging', async () => (await series(d)).control?.evaluation?.stage === 'judge', 120_000, 100)
  const service = services()[0]
  // The judge, its zygote and the candidate's runner (in its sandbox) are up once the runner is.
  const during = await waitFor('the candidate\'s runner', () => {
    const ds = descendants(service.pid)
    return ds.some(p => p.comm === 'kopt-runner') ? ds : undefined
  }, 60_000, 200)
  const evaluationPids = during.filter(p => !(p.argv[1] === '--image' && p.ppid === service.pid)).map(p => p.pid)
  const tStop = Date.now()
  await rpc(port, 'session.cancel', { sessionId: d })
  await waitFor('the aborted turn', async () => turnEnds(await events(d)).includes('aborted'), 30_000, 200)
  await waitFor('every process of the evaluation to end', () => evaluationPids.every(pid => !alive(pid)), 15_000, 100)
  const stopMs = Date.now() - tStop
  const resultD = resultOf(await events(d), 'kernel_evaluate')
  writeFileSync(join(work, 'result-d.json'), String(resultD))
  check(`D: the stop cancels at once (${stopMs} ms) and no process of the evaluation survives (${evaluationPids.length} ended)`, () => {
    assert.ok(evaluationPids.length >= 3, JSON.stringify(during.map(p => p.comm)))
    assert.ok(stopMs < 15_000)
    assert.deepEqual(descendants(service.pid).filter(p => !(p.argv[1] === '--image')).map(p => p.comm), [])
  })
  // The host replaces whatever a tool returns after a stop by its own canonical result (dsh-tools: "Error: tool
  // call aborted"); the plugin's body has ended by then (it returned its cancelled result) and the row says why.
  const rowD = (await series(d)).iterations[0]
  check('D: the tool result says the evaluation was aborted, and the row carries it', () => {
    assert.match(resultD ?? '', /tool call aborted/)
    assert.match(rowD.error ?? '', /aborted/)
    assert.equal(rowD.pending, undefined)
  })

  // ── F: finalize re-measures the stored bytes after the file was edited ──
  appendFileSync(join(ws, 'solution/kernel.cpp'), '\n// edited after the evaluation\n')
  // A build that read the header as it is now could not compile: the replay reads the measured bytes.
  writeFileSync(join(ws, 'common/tile.h'), '#error edited after the evaluation\n')
  await prompt(a, '[F] 收尾')
  await settled(a, 2, 'session A\'s finalize')
  const sf = await series(a)
  const finalize = resultOf(await events(a), 'kernel_finalize')
  writeFileSync(join(work, 'result-f.json'), String(finalize))
  const replay = sf.iterations.find(p => p.channel === 'replay')
  check('F: kernel_finalize re-measures the measured bytes and says the file on disk changed', () => {
    assert.match(finalize, /\[replay\] kernel_evaluate solution\/kernel\.cpp@/)
    assert.match(finalize, /solution\/kernel\.cpp: [^\n]*changed since it was measured/)
    assert.match(finalize, /common\/tile\.h: [^\n]*changed since it was measured/)
    assert.ok(replay, 'a replay point')
    assert.equal(replay.correct, true, JSON.stringify(replay))
    assert.ok(replay.latencyMs > 0)
    assert.equal(replay.trust, 'replay')
    assert.equal(sf.iterations[0].finalized, true)
  })
  writeFileSync(join(ws, 'common/tile.h'), TILE)

  // ── I: the idle warm judge ends by itself ──
  const idleSvc = services()[0]
  assert.ok(idleSvc, 'the service ran the finalize')
  const image = descendants(idleSvc.pid).find(p => p.argv[1] === '--image')
  await waitFor('the idle service to end', () => !alive(idleSvc.pid) && (!image || !alive(image.pid)), 40_000, 250)
  check('I: after evaluate.idleSec without an evaluation the warm judge and its image are gone (reaped)', () => {
    assert.equal(services().length, 0)
  })

  // ── W: without its warm image the judge starts as before, and says so ──
  await prompt(a, '[H] 再评测一次')
  await settled(a, 3, 'session A\'s third turn')
  const hSvc = services()[0]
  assert.ok(hSvc, 'the service is warm again')
  const img = descendants(hSvc.pid).find(p => p.argv[1] === '--image')
  assert.ok(img, 'its image')
  process.kill(img.pid, 'SIGKILL')
  await prompt(a, '[W] 镜像不在时再评测')
  await settled(a, 4, 'session A\'s fourth turn')
  const evW = (await events(a)).filter(e => e.type === 'tool/result')
  const lastResult = JSON.stringify(evW[evW.length - 1].data.message)
  const sw = await series(a)
  check('W: with the image gone the judge starts as its own process, still measured by the plugin, and isolation.start says why', () => {
    assert.match(lastResult, /judge: started as its own process \(the warm image is unavailable: /)
    assert.equal(sw.iterations[sw.iterations.length - 1].trust, 'plugin')
    assert.equal(sw.iterations[sw.iterations.length - 1].correct, true)
  })

  // ── H: the host's exit ends the warm judge ──
  const hKids = descendants(hSvc.pid)
  process.kill(hostPid, 'SIGKILL')
  await waitFor('the warm judge to end with the host', () => !alive(hSvc.pid) && hKids.every(k => !alive(k.pid)), 15_000, 100)
  check('H: the host\'s SIGKILL ends the service and its image (parent-death signal): nothing survives', () => {
    assert.equal(services().length, 0)
  })
  void web

  log(`all ${checks()} checks passed`)
})
