// The cluster end to end: a real `dsh web` with this plugin and the scripted model (tests/e2e/fake-llm.mjs)
// runs evaluations through the real one-node Slurm that tests/cluster/run.sh started (SLURM_CONF):
//   `srun -n1 python3 bench.py`, `sbatch --wait … && cat sb.log`, an echoed line behind srun, and
//   kernel_finalize of the srun point (re-submitted through srun).
// Asserts on /series: the points carry their job ids and node, the echoed line is not a point, the replay
// block names the Slurm path and its point carries a new job id. Needs Node 22 (the host's) and KOPT_HOST_DIR.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import { ROOT, hostEnv, http, pinnedHost, rpc, scriptedRun, sessionLogText, startScriptedModel, startWeb, waitFor, webProfile } from '../e2e/harness.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { dsh: DSH } = pinnedHost('tests/cluster/run.sh sets it')
if (!process.env.SLURM_CONF) throw new Error('SLURM_CONF is required (tests/cluster/run.sh starts the cluster)')
const NODE = process.env.KOPT_CLUSTER_NODE ?? 'n1'

// Under the cluster's dir when there is one (world-traversable, as a job's cwd must be).
const { work, procs, log, check, main } = scriptedRun('cluster-e2e', {
  watchdogSec: 600, under: process.env.KOPT_CLUSTER_DIR ? join(process.env.KOPT_CLUSTER_DIR, 'out') : tmpdir(),
})
const home = join(work, 'home')
const ws = join(work, 'ws')
mkdirSync(ws, { recursive: true })
const decodedLog = (sid) => sessionLogText(home, sid)

await main(async () => {
  const fake = await startScriptedModel(procs, work, join(ROOT, 'tests/e2e/fake-llm.mjs'), ['--script', join(here, 'script.json')])
  const env = hostEnv(home, { llmPort: fake.port, key: 'e2e-key' })
  await webProfile(DSH, env)
  // A benchmark that reports where it ran, from the job's environment (as docs/cluster.md tells users to).
  writeFileSync(join(ws, 'bench.py'), [
    'import json, os, sys',
    'lat = float(sys.argv[sys.argv.index("--lat") + 1])',
    'where = {"job_id": os.environ.get("SLURM_JOB_ID"), "node": os.environ.get("SLURMD_NODENAME"),',
    '         "partition": os.environ.get("SLURM_JOB_PARTITION"), "gpu": "none (cluster test)"}',
    'print("KERNEL_EVAL=" + json.dumps({"artifact": "k.py", "correct": True, "latency_ms": lat, "ref_runtime_ms": 6.0,',
    '                                   "native_metrics": {"slurm": {k: v for k, v in where.items() if v}}}))',
    '',
  ].join('\n'))
  writeFileSync(join(ws, 'k.py'), '# the kernel under test (scripted)\n')
  // kopt-bench --slurm's problem and candidates (the evaluator's own fixtures); kopt-bench on the PATH.
  const fx = join(ROOT, 'evaluator/tests')
  for (const [from, to] of [['fixtures/relu.pt', 'relu.pt'], ['fixtures/relu.json', 'relu.json'], ['honest/relu_loop.cpp', 'relu_loop.cpp'],
    ['misc/compile_error.cpp', 'compile_error.cpp'], ['honest/slow_relu.cpp', 'slow_relu.cpp']]) copyFileSync(join(fx, from), join(ws, to))
  const KB_DIR = process.env.KOPT_BENCH_DIR
  assert.ok(KB_DIR && existsSync(join(KB_DIR, 'kopt-bench')), 'KOPT_BENCH_DIR must hold a built kopt-bench (tests/cluster/run.sh sets it)')
  env.PATH = `${KB_DIR}:${process.env.PATH}`

  const web = await startWeb(procs, DSH, env, 'dsh.log', { log })
  const { port } = web
  const { sessionId: sid } = await rpc(port, 'session.create', { cwd: ws, agentPreset: 'kernel-opt' })
  await rpc(port, 'session.prompt', { sessionId: sid, mode: 'queue', content: [{ type: 'text', text: '在集群上评测 k.py' }] })
  // Three cold compiles behind kopt-bench --slurm: minutes on a loaded 2-core machine (the call's timeoutMs is 270 s).
  await waitFor('the turn to end', async () => /"type":"turn\/end"/.test(await decodedLog(sid)), 480_000, 1000)
  const logText = await decodedLog(sid)
  writeFileSync(join(work, 'session.jsonl'), logText)

  const r = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(sid)}`)
  assert.equal(r.status, 200)
  const s = r.json()
  writeFileSync(join(work, 'series.json'), r.text)
  const all = s.iterations.filter(p => p.channel === 'shell')
  const shell = all.filter(p => !p.command.startsWith('kopt-bench'))
  const arrayPts = all.filter(p => p.command.startsWith('kopt-bench --slurm'))
  const replayPts = s.iterations.filter(p => p.channel === 'replay')
  check('srun and sbatch points, in order, with their latencies', () => {
    assert.deepEqual(shell.map(p => [p.command, p.latencyMs]), [
      ['srun -n1 python3 bench.py --lat 1.5', 1.5],
      ["sbatch --wait -o sb.log --wrap 'python3 bench.py --lat 2.0' && cat sb.log", 2],
    ])
  })
  check('/series shows the job id and node of each point', () => {
    for (const p of shell) {
      assert.match(p.slurm?.jobId ?? '', /^\d+$/, JSON.stringify(p))
      assert.equal(p.slurm.node, NODE)
      assert.equal(p.slurm.partition, 'debug')
    }
    assert.notEqual(shell[0].slurm.jobId, shell[1].slurm.jobId)
  })
  check('kopt-bench --slurm: three candidates in one tool call are three points, each with its array job id and node', () => {
    assert.deepEqual(arrayPts.map(p => p.artifactPath).sort(), ['compile_error.cpp', 'relu_loop.cpp', 'slow_relu.cpp'])
    const jobs = new Set()
    for (const p of arrayPts) {
      assert.match(p.slurm?.jobId ?? '', /^\d+_[0-2]$/, JSON.stringify(p))
      assert.equal(p.slurm.node, NODE)
      jobs.add(p.slurm.jobId.split('_')[0])
    }
    assert.equal(jobs.size, 1, 'one job array')
    const failed = arrayPts.find(p => p.artifactPath === 'compile_error.cpp')
    assert.equal(failed.correct, false)
    assert.match(JSON.stringify(failed), /compile error/)
    assert.ok(arrayPts.filter(p => p.artifactPath !== 'compile_error.cpp').every(p => p.correct === true))
  })
  check('a line echoed behind srun is not a point', () => {
    assert.ok(!s.iterations.some(p => p.latencyMs === 0.1))
    assert.equal(s.echoedSeqs.length, 1)
  })
  check('kernel_finalize re-submitted the srun point through srun and says so', () => {
    assert.match(logText, /\[replay\] srun -n1 python3 bench\.py --lat 1\.5/)
    assert.match(logText, /\[replay via Slurm: srun\]/)
    assert.equal(replayPts.length, 1)
    assert.equal(replayPts[0].latencyMs, 1.5)
    assert.equal(replayPts[0].slurm?.node, NODE)
    assert.match(replayPts[0].slurm?.jobId ?? '', /^\d+$/)
    assert.ok(!shell.some(p => p.slurm.jobId === replayPts[0].slurm.jobId), 'the replay is a new job')
    assert.equal(shell[0].finalized, true)
  })
  await procs.stop(web)
  await procs.stop(fake)
  log('all passed')
})
