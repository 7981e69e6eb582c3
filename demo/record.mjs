// Re-records the demo session (demo/kernel-opt-demo/): a real `dsh web` with this plugin, a scripted
// model on 127.0.0.1 (tests/e2e/fake-llm.mjs) whose bash calls really run kopt-bench on a small CPU
// kernel (relu over 64x256 floats): three honest candidates that get faster, one that fails to
// compile, then kernel_finalize (the plugin re-measures the best one).
// Run by demo/record.sh, which provides: KOPT_HOST_DIR, KOPT_BENCH_DIR (folder of kopt-bench), Node 22.
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { detachedProcesses, freePort, waitFor, http, rpc } from '../tests/e2e/harness.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const ROOT = join(here, '..')
const HOST_DIR = process.env.KOPT_HOST_DIR
const BENCH_DIR = process.env.KOPT_BENCH_DIR
if (!HOST_DIR || !BENCH_DIR) throw new Error('KOPT_HOST_DIR and KOPT_BENCH_DIR are required (run demo/record.sh)')
const DSH = join(HOST_DIR, 'bin/dsh')
const OUT = join(here, 'kernel-opt-demo')
const run = promisify(execFile)
const t0 = Date.now()
const log = (msg) => console.log(`[record +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`)
const sleep = (ms) => new Promise(r => setTimeout(r, ms))

const work = mkdtempSync(join(tmpdir(), 'kopt-demo-'))
const home = join(work, 'home')
const ws = join(work, 'workspace')
cpSync(join(here, 'workspace'), ws, { recursive: true })
const procs = detachedProcesses(work)
const { startDetached } = procs
let failed = true
const watchdog = setTimeout(() => { console.error('[record] watchdog: 1200 s elapsed'); cleanup(); process.exit(2) }, 1_200_000)
function cleanup() {
  procs.killAll()
  if (!failed && process.env.KOPT_DEMO_KEEP !== '1') rmSync(work, { recursive: true, force: true })
  else console.log(`[record] scratch kept in ${work}`)
}
process.on('exit', cleanup)
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { cleanup(); process.exit(130) })

function sessionFile(sid) {
  const base = join(home, 'sessions')
  if (!existsSync(base)) return undefined
  for (const d of readdirSync(base)) {
    const p = join(base, d, sid, 'session.jsonl.zstd')
    if (existsSync(p)) return p
  }
  return undefined
}
const decoded = async (sid) => {
  const p = sessionFile(sid)
  return p ? (await run('zstd', ['-qdc', p], { maxBuffer: 64 << 20, timeout: 20_000 })).stdout : ''
}

// ── the scripted model: every bash call writes a candidate and runs kopt-bench on it ──
const bench = 'kopt-bench --ref ref.pt --inputs inputs.json --solution solution/kernel.cpp --max-trials 40 --max-time 10'
const candidate = (file) => `cat > solution/kernel.cpp <<'EOF'\n${readFileSync(join(here, 'candidates', file), 'utf8')}EOF\n${bench}`
const steps = [
  { text: '先汇报方案：从逐行调用 ATen 的基线开始，改成单遍循环，再试向量化。', tool_calls: [{ name: 'kernel_plan', arguments: { phase: 'explore', approach: 'relu 64x256 fp32 on CPU: per-row ATen → one raw loop → vectorized clamp', hypothesis: 'dispatcher round trips dominate at this size', next: 'measure the per-row baseline with kopt-bench' } }] },
  { tool_calls: [{ name: 'kernel_env', arguments: { location: '本机 (demo)', device: 'CPU', constraint: 'demo recording: kopt-bench CPU build, --max-trials 40', versions: { libtorch: 'CPU', compiler: 'g++' }, probe: 'kopt-bench --help | head -n 1' } }] },
  { tool_calls: [{ name: 'bash', arguments: { command: candidate('1-per-row.cpp'), description: 'v1: per-row ATen relu (baseline)' } }] },
  { tool_calls: [{ name: 'bash', arguments: { command: candidate('2-loop.cpp'), description: 'v2: one raw loop' } }] },
  { tool_calls: [{ name: 'bash', arguments: { command: candidate('3-broken.cpp'), description: 'v3: branchless max (typo)' } }] },
  { tool_calls: [{ name: 'bash', arguments: { command: candidate('4-clamp.cpp'), description: 'v4: vectorized clamp_min' } }] },
  { tool_calls: [{ name: 'kernel_finalize', arguments: { artifact_path: 'solution/kernel.cpp', note: 'v4 (vectorized clamp_min) is the fastest correct candidate' } }] },
  { text: '收尾：v4（整张量 clamp_min）最快且正确；v3 编译失败已放弃；定稿复测由插件完成。' },
]
writeFileSync(join(work, 'script.json'), JSON.stringify(steps, null, 1))

try {
  const ready = join(work, 'fake-ready.json')
  startDetached(process.execPath, [join(ROOT, 'tests/e2e/fake-llm.mjs'), '--script', join(work, 'script.json'), '--ready', ready], {}, 'fake-llm.log')
  const llmPort = await waitFor('the fake model', () => existsSync(ready) && JSON.parse(readFileSync(ready, 'utf8')).port, 15_000)
  log(`fake model on 127.0.0.1:${llmPort}`)
  const env = {
    DSH_HOME: home, DEEPSEEK_BASE_URL: `http://127.0.0.1:${llmPort}/v1`, DEEPSEEK_API_KEY: 'demo-key',
    DSH_PERMISSION_MODE: 'danger-full-access', DSH_TELEMETRY_DISABLED: '1', NO_COLOR: '1',
    PATH: `${BENCH_DIR}:${process.env.PATH}`,
  }
  // The committed prebuilt (lib/native) when there is one, else this checkout's build (scripts/build.sh).
  if (!process.env.KOPT_ADDON && existsSync(join(ROOT, 'build/kopt.node'))) env.KOPT_ADDON = join(ROOT, 'build/kopt.node')
  const dsh = (args, timeout) => run(DSH, args, { env: { ...process.env, ...env }, timeout, maxBuffer: 32 << 20 })
  await dsh(['--profile', 'web', '--dump-config'], 120_000)
  writeFileSync(join(home, 'profiles/web/cordis.patch.yml'), '- id: hmr\n  disabled: false\n  config:\n    root: []\n')
  await dsh(['plugin', '--profile', 'web', 'add', `file:${ROOT}`], 300_000)
  const port = await freePort()
  startDetached(DSH, ['web', '--no-open', '--port', String(port)], env, 'dsh.log')
  await waitFor(`dsh web on :${port}`, async () => (await http(port, '/')).status === 200, 120_000)
  log(`dsh web on 127.0.0.1:${port}`)
  const { sessionId: sid } = await rpc(port, 'session.create', { cwd: ws, agentPreset: 'kernel-opt' })
  await rpc(port, 'session.prompt', { sessionId: sid, mode: 'queue', content: [{ type: 'text', text: '请用 kopt-bench 优化 solution/kernel.cpp（参考实现 ref.pt 是 torch.relu，输入规格 inputs.json）。' }] })
  log(`session ${sid}: prompt sent; kopt-bench compiles and times each candidate`)
  await waitFor('the turn to end', async () => /"type":"turn\/end"/.test(await decoded(sid)), 900_000, 2000)
  // The recording ran with danger-full-access (no approval prompts for the scripted bash calls); hand
  // the session back in the default preset, so continuing the demo with a real key asks as usual.
  const perm = await http(port, '/api/commands/execute', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId: crypto.randomUUID(), method: 'commands/execute', payload: { args: { agentId: sid, line: '/permission workspace-write', images: [] } } }),
  })
  log(`/permission workspace-write: ${perm.text.slice(0, 200)}`)
  await waitFor('the preset switch in the log', async () => /"type":"permission\/preset","seq":\d+,"time":\d+,"data":\{"preset":"workspace-write"/.test(await decoded(sid)), 30_000, 500)
  await sleep(1500)
  const series = (await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`)).json()
  const pts = series.iterations ?? []
  log(`points: ${pts.map(p => `${p.channel}:${p.correct === false ? 'fail' : p.latencyMs}`).join(' ')}`)
  if (pts.length < 5 || !pts.some(p => p.correct === false) || !pts.some(p => p.channel === 'replay')) throw new Error('the run did not produce the expected points')
  mkdirSync(OUT, { recursive: true })
  cpSync(sessionFile(sid), join(OUT, 'session.jsonl.zstd'))
  writeFileSync(join(OUT, 'meta.json'), JSON.stringify({
    sessionId: sid, agentPreset: 'kernel-opt', recordedAt: new Date().toISOString(), recordedCwd: ws,
    workspace: 'demo/workspace', points: pts.length, note: 'recorded by demo/record.sh; scripts/run.sh seeds it into .dsh-home/',
  }, null, 1) + '\n')
  log(`wrote ${OUT}/session.jsonl.zstd (${pts.length} points)`)
  failed = false
} catch (error) {
  console.error(`[record] ${error?.stack ?? error}`)
  for (const f of readdirSync(work).filter(n => n.endsWith('.log'))) {
    console.error(`--- ${f}\n${readFileSync(join(work, f), 'utf8').split('\n').slice(-40).join('\n')}`)
  }
  process.exitCode = 1
} finally {
  clearTimeout(watchdog)
  cleanup()
}
