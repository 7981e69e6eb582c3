#!/usr/bin/env node
// What one evaluation costs (issue 38), on the demo's op (relu over 64x256 floats, CPU): the same cached
// evaluation through the kernel_evaluate tool's handler (lib/evaluate.mjs with the real addon: argument
// check, hashing and keeping the bytes, the queue, kopt-bench --serve whose judge is forked from the warm
// image) and through the shell (`bash -c "kopt-bench …"`, a process from nothing, as the agent's shell
// runs it), alternating in one run; then edit → result for a one-line change (each edit a new line, so
// each evaluation compiles once), alternating too. Wall time of each, from the call to the result.
// Then the same op as a KernelBench-format Python solution (solution/kernel.py against model.py, no
// input spec), cached, through the tool, alternating with the C++ one (target: within 1.5x of it).
//
//   node bench/evaluate/run.mjs [--runs 7] [--edits 3] [--bench build-evaluator/kopt-bench] [--cache DIR]
// (--cache: kopt-bench's compile cache; default $KOPT_BENCH_CACHE, else <bench dir>/test-cache, whose
// precompiled header is warm once the evaluator's tests have run.) The last line reads
// `cached evaluation: tool X s, shell Y s` (medians); the line before it,
// `cached python evaluation: tool X s, c++ tool Y s, ratio R` (medians).
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { arg } from '../generated-log.mjs'
import { resolveConfig } from '../../lib/config.mjs'
import { createEvaluator } from '../../lib/evaluate.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const runs = Number(arg('runs', 7))
const edits = Number(arg('edits', 3))
const bench = path.resolve(arg('bench', path.join(root, 'build-evaluator/kopt-bench')))
if (!existsSync(bench)) throw new Error(`${bench} is missing: cmake -S evaluator -B build-evaluator && cmake --build build-evaluator -j2`)
const cache = arg('cache', process.env.KOPT_BENCH_CACHE || path.join(path.dirname(bench), 'test-cache'))
process.env.KOPT_BENCH_CACHE = cache

const built = path.join(root, 'build/kopt.node')
if (!process.env.KOPT_ADDON && existsSync(built)) process.env.KOPT_ADDON = built
const { loadKopt } = await import('../../lib/native/load.mjs')
const { mod: kopt } = loadKopt()

const work = mkdtempSync(path.join(tmpdir(), 'kopt-bench-evaluate-'))
const ws = path.join(work, 'ws')
cpSync(path.join(root, 'demo/workspace'), ws, { recursive: true })
const FILE = path.join(ws, 'solution/kernel.cpp')
const original = readFileSync(FILE, 'utf8')
const { config } = resolveConfig({ evaluate: { koptBench: bench, storeDir: path.join(work, 'home'), idleSec: 600 } })
const evaluator = createEvaluator({ kopt, config })
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

const args = { solution: ['solution/kernel.cpp'], reference: 'ref.pt', inputs: 'inputs.json' }
const shellCommand = `${bench} --ref ref.pt --inputs inputs.json --solution solution/kernel.cpp`

const pyArgs = { solution: ['solution/kernel.py'], reference: 'model.py' }

async function viaTool(a = args) {
  const t0 = performance.now()
  const r = JSON.parse(await evaluator.evaluate('bench', ws, a))
  const s = (performance.now() - t0) / 1000
  if (r.correct !== true) throw new Error(`the tool's evaluation failed: ${r.error}`)
  return { s, start: r.native_metrics?.isolation?.start ?? '', stages: r.native_metrics?.stage_ms }
}
function viaShell() {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', shellCommand], { cwd: ws, env: process.env, maxBuffer: 8 << 20 }, (error, stdout) => {
      const s = (performance.now() - t0) / 1000
      if (error || !/"correct": ?true/.test(stdout)) reject(new Error(`the shell's evaluation failed: ${error?.message ?? stdout.slice(-300)}`))
      else resolve({ s })
    })
  })
}
const median = (xs) => { const a = [...xs].sort((x, y) => x - y); const n = a.length; return n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2 }
const p90 = (xs) => { const a = [...xs].sort((x, y) => x - y); return a[Math.min(a.length - 1, Math.ceil(0.9 * a.length) - 1)] }
const f = (s) => s.toFixed(3)
const line = (o) => console.log(JSON.stringify(o))

// First evaluations: the compile (if the cache lacks it) and the baseline, then the service's start.
const first = await viaTool()
line({ what: 'first evaluation through the tool (starts kopt-bench --serve and its warm image)', s: Number(f(first.s)) })
await viaShell()

const tool = [], shell = []
let lastTool
for (let i = 0; i < runs; i++) {
  lastTool = await viaTool()
  tool.push(lastTool.s)
  shell.push((await viaShell()).s)
  line({ what: 'cached', i, tool: Number(f(tool[i])), shell: Number(f(shell[i])) })
}
if (!/judge: forked from the plugin's warm judge image/.test(lastTool.start)) throw new Error(`the tool's judge was not warm: ${lastTool.start}`)
line({ what: 'stage_ms of the last cached evaluation through the tool', stages: lastTool.stages })

// Edit → result: a one-line change (a new line each time: a new build), written, then evaluated.
const editTool = [], editShell = []
let n = 0
const edit = () => writeFileSync(FILE, original.replace('at::Tensor y = at::empty_like(x);', `at::Tensor y = at::empty_like(x);  // edit ${process.pid}-${++n}`))
for (let i = 0; i < edits; i++) {
  let t0 = performance.now()
  edit()
  await viaTool()
  editTool.push((performance.now() - t0) / 1000)
  t0 = performance.now()
  edit()
  await viaShell()
  editShell.push((performance.now() - t0) / 1000)
  line({ what: 'edit -> result', i, tool: Number(f(editTool[i])), shell: Number(f(editShell[i])) })
}
writeFileSync(FILE, original)

// The Python form, cached (its first evaluation exports model.py and runs the build stage).
await viaTool(pyArgs)
const pyTool = [], cppTool = []
let lastPy
for (let i = 0; i < runs; i++) {
  lastPy = await viaTool(pyArgs)
  pyTool.push(lastPy.s)
  cppTool.push((await viaTool()).s)
  line({ what: 'cached python', i, python: Number(f(pyTool[i])), cpp: Number(f(cppTool[i])) })
}
line({ what: 'stage_ms of the last cached python evaluation through the tool', stages: lastPy.stages })
await evaluator.dispose()

console.log(`cached evaluation, ${runs} each, alternating: tool median ${f(median(tool))} s, p90 ${f(p90(tool))} s; shell median ${f(median(shell))} s, p90 ${f(p90(shell))} s`)
if (edits > 0) console.log(`edit -> result, ${edits} each, alternating: tool median ${f(median(editTool))} s, p90 ${f(p90(editTool))} s; shell median ${f(median(editShell))} s, p90 ${f(p90(editShell))} s`)
console.log(`cached python evaluation: tool ${f(median(pyTool))} s, c++ tool ${f(median(cppTool))} s, ratio ${(median(pyTool) / median(cppTool)).toFixed(2)}`)
console.log(`cached evaluation: tool ${f(median(tool))} s, shell ${f(median(shell))} s`)
