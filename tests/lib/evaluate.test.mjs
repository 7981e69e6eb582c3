// kernel_evaluate's JS side (lib/evaluate.mjs) without a host: the queue across sessions, the bounded
// store of measured bytes, the environment kopt-bench gets, and bad input that runs nothing (the checks
// themselves are the core's, tests/core/test_evaluate.cpp). The real run is tests/e2e/evaluate-e2e.mjs.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEvaluator, EvaluationQueue, evaluatorEnv, filesReadOf, findKoptBench, SourceStore, withoutFilesRead } from '../../lib/evaluate.mjs'
import { resolveConfig } from '../../lib/config.mjs'

const built = new URL('../../build/kopt.node', import.meta.url).pathname
if (!process.env.KOPT_ADDON && existsSync(built)) process.env.KOPT_ADDON = built
const { loadKopt } = await import('../../lib/native/load.mjs')
const { mod: kopt } = loadKopt()

const sleep = (ms) => new Promise(r => setTimeout(r, ms))

test('one evaluation at a time across sessions; the queue says who waits; a stop while queued runs nothing', async () => {
  const changes = []
  const q = new EvaluationQueue(() => changes.push(1))
  const order = []
  let release
  const first = q.run('s1', async (stage) => { order.push('s1'); stage('build'); await new Promise(r => { release = r }); return 'one' })
  const ac = new AbortController()
  const second = q.run('s2', async () => { order.push('s2'); return 'two' })
  const third = q.run('s3', async () => { order.push('s3'); return 'three' }, ac.signal)
  await sleep(10)
  assert.deepEqual(q.stateFor('s1'), { state: 'running', since: q.stateFor('s1').since, stage: 'build' })
  assert.equal(q.stateFor('s2').state, 'queued')
  assert.equal(q.stateFor('s2').position, 1)
  assert.equal(q.stateFor('s3').position, 2)
  ac.abort()
  assert.deepEqual(await third, { cancelled: true, queued: true })
  assert.equal(q.stateFor('s3'), undefined)
  release()
  assert.equal(await first, 'one')
  assert.equal(await second, 'two')
  assert.deepEqual(order, ['s1', 's2'])
  assert.equal(q.stateFor('s1'), undefined)
  assert.ok(changes.length >= 5)
})

test('the store keeps measured bytes by their hash, within its bound, and never serves changed bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kopt-store-'))
  try {
    const store = new SourceStore(join(dir, 'store'), { maxBytes: 2500, maxFileBytes: 2000, maxEvals: 2 })
    const files = []
    for (let i = 0; i < 4; i++) {
      const p = join(dir, `f${i}.cpp`)
      const bytes = Buffer.alloc(1000, 65 + i)
      writeFileSync(p, bytes)
      files.push({ p, sha: createHash('sha256').update(bytes).digest('hex'), bytes })
      assert.equal(await store.keep(p, files[i].sha), true)
      await sleep(15)
    }
    // 4 KB kept in a 2.5 KB store: the least recently used went first.
    const kept = readdirSync(join(dir, 'store', 'sources'))
    assert.equal(kept.length, 2)
    assert.equal(await store.read(files[0].sha), undefined)
    assert.deepEqual(await store.read(files[3].sha), files[3].bytes)
    // A file that no longer has the hash it was measured with is not kept under it.
    writeFileSync(files[1].p, 'changed')
    assert.equal(await store.keep(files[1].p, createHash('sha256').update(Buffer.alloc(1000, 66)).digest('hex')), false)
    // Too large to keep.
    const big = join(dir, 'big.pt')
    writeFileSync(big, Buffer.alloc(3000))
    assert.equal(await store.keep(big, createHash('sha256').update(Buffer.alloc(3000)).digest('hex')), false)
    for (const id of ['ke-000000000001', 'ke-000000000002', 'ke-000000000003']) {
      await store.saveEval(id, { id })
      await sleep(15)
    }
    assert.equal(await store.loadEval('ke-000000000001'), undefined)
    assert.deepEqual(await store.loadEval('ke-000000000003'), { id: 'ke-000000000003' })
    assert.equal(await store.loadEval('../../etc/passwd'), undefined)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('kopt-bench gets what a build, the sandbox and CUDA need, never the host\'s keys', () => {
  const env = evaluatorEnv({ PATH: '/bin', HOME: '/h', DEEPSEEK_API_KEY: 'k', OPENAI_API_KEY: 'k', KOPT_BENCH_CACHE: '/c', CUDA_VISIBLE_DEVICES: '1', LC_ALL: 'C', SECRET: 'x' })
  assert.deepEqual(env, { PATH: '/bin', HOME: '/h', KOPT_BENCH_CACHE: '/c', CUDA_VISIBLE_DEVICES: '1', LC_ALL: 'C' })
})

test('bad input and a missing kopt-bench: a clear error, nothing runs, the result is the plugin\'s', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kopt-eval-'))
  const savedPath = process.env.PATH
  try {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'solution'), { recursive: true })
    for (const f of ['solution/k.cpp', 'ref.pt', 'inputs.json']) writeFileSync(join(ws, f), 'x')
    writeFileSync(join(dir, 'outside.cpp'), 'x')
    const { config } = resolveConfig({ evaluate: { storeDir: join(dir, 'home'), koptBench: join(dir, 'no-such-kopt-bench') } })
    const ev = createEvaluator({ kopt, config })
    const args = { solution: ['../outside.cpp'], reference: 'ref.pt', inputs: 'inputs.json' }
    let r = JSON.parse(await ev.evaluate('s', ws, args))
    assert.equal(r.evaluator_failed, true)
    assert.equal(r.measured_by, 'kernel-opt')
    assert.match(r.error, /outside the session's working directory .*nothing was run/)
    r = JSON.parse(await ev.evaluate('s', ws, { ...args, solution: ['solution/k.cpp'], options: { cache_dir: '/tmp' } }))
    assert.match(r.error, /unknown option 'cache_dir'/)
    process.env.PATH = join(dir, 'empty-path')
    r = JSON.parse(await ev.evaluate('s', ws, { ...args, solution: ['solution/k.cpp'] }))
    assert.match(r.error, /kopt-bench is not installed.*install-plugin\.sh.*nothing was run/)
    assert.equal(existsSync(join(dir, 'home', 'store', 'evals')), false, 'nothing was recorded')
    assert.equal(ev.servicePid(), undefined, 'no process was started')
    assert.match((await findKoptBench(config)).error, /cmake -S evaluator -B build-evaluator/)
  } finally {
    process.env.PATH = savedPath
    rmSync(dir, { recursive: true, force: true })
  }
})

test('config: evaluate.* defaults, and bad values fall back with a message', () => {
  const { config } = resolveConfig({})
  assert.deepEqual(config.evaluate, { koptBench: '', idleSec: 180, storeDir: '', storeMiB: 512, timeoutSec: 900 })
  const bad = resolveConfig({ evaluate: { koptBench: 'relative/kopt-bench', idleSec: 0, other: 1 } })
  assert.equal(bad.config.evaluate.koptBench, '')
  assert.equal(bad.config.evaluate.idleSec, 180)
  assert.equal(bad.errors.length, 3)
})

// ── issue 51: the point is bound to every file its build read, wherever it lies in the workspace ──
// kopt-bench itself (its compilers' dependency files, the refusal of a file outside the workspace) is
// tested in evaluator/tests/unit/torch_test.cpp (CompileCache.*); here a stand-in prints what it prints.
const fakeBench = new URL('./fake-kopt-bench.mjs', import.meta.url).pathname
const { finalizeWithReplay } = await import('../../lib/finalize.mjs')
const sha256 = (text) => createHash('sha256').update(text).digest('hex')

function workspaceWithHeaders(dir) {
  const ws = join(dir, 'ws')
  mkdirSync(join(ws, 'solution', 'sub'), { recursive: true })
  mkdirSync(join(ws, 'common'), { recursive: true })
  writeFileSync(join(ws, 'common', 'tile.h'), '#pragma once\nconstexpr int kTile = 16;\n')
  writeFileSync(join(ws, 'solution', 'sub', 'inner.h'), '#pragma once\n#include "../../common/tile.h"\n')
  writeFileSync(join(ws, 'solution', 'unused.h'), '// beside the source, included by nothing\n')
  writeFileSync(join(ws, 'solution', 'k.cpp'), '#include <kopt/op.h>\n#include "../common/tile.h"\n#include "sub/inner.h"\n')
  writeFileSync(join(ws, 'ref.pt'), 'ref')
  writeFileSync(join(ws, 'inputs.json'), '{}')
  return ws
}

// The session log as the host writes it, and the point kernel_finalize picks from it.
function pluginPointOf(args, text) {
  const events = [
    { type: 'tool/call', seq: 0, time: 1000, data: { callId: 'c0', name: 'kernel_evaluate', arguments: JSON.stringify(args) } },
    { type: 'tool/result', seq: 1, time: 1001, data: { message: { source: { kind: 'tool', callId: 'c0' }, content: [{ type: 'tool-result', toolCallId: 'c0', content: [{ type: 'text', text }] }] } } },
  ]
  const projector = new kopt.Projector('{}')
  projector.feed(JSON.stringify(events))
  return projector
}

test('filesReadOf: the list kopt-bench printed, bound to its payload by the digest, or why it cannot be used', () => {
  const files = [{ path: '/ws/a.h', sha256: sha256('a') }, { path: '/ws/k.cpp', sha256: sha256('k') }]
  const digest = sha256(files.map(f => `${f.sha256}  ${f.path}\n`).join(''))
  const out = (meta, list = files) => [
    'COMPILED: True', ...(list ? [`KOPT_FILES_READ=${JSON.stringify({ files: list, workspace: '/ws' })}`] : []),
    `KERNEL_EVAL=${JSON.stringify({ compiled: true, correct: true, native_metrics: meta === undefined ? {} : { files_read: meta } })}`, ''].join('\n')
  assert.deepEqual(filesReadOf(out({ count: 2, sha256: digest, workspace: '/ws' })).files, files)
  assert.match(filesReadOf(out({ count: 2, sha256: sha256('x') })).error, /does not match native_metrics\.files_read/)
  assert.match(filesReadOf(out({ count: 3, sha256: digest })).error, /does not match/)
  assert.match(filesReadOf(out({ count: 2, sha256: digest }, null)).error, /no KOPT_FILES_READ line/)
  assert.match(filesReadOf(out({ count: 1, sha256: digest }, [{ path: 'rel.h', sha256: sha256('r') }])).error, /malformed/)
  // A kopt-bench that built something and says nothing of what it read cannot be bound.
  assert.match(filesReadOf(out(undefined)).error, /did not report the files its build read/)
  // Nothing built (a compile error, an input error): nothing to bind.
  const failed = filesReadOf('KERNEL_EVAL={"compiled":false,"correct":false,"error":"compile error: x"}\n')
  assert.equal(failed.error, undefined)
  assert.equal(failed.files, undefined)
  assert.equal(withoutFilesRead(out({ count: 2, sha256: digest })).includes('KOPT_FILES_READ='), false)
})

test('a header in a sibling folder and one in a subfolder are bound to the point; a finalize after the sibling header changed says so and re-measures the measured bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kopt-bind-'))
  const ev = { dispose: () => {} }
  try {
    const ws = workspaceWithHeaders(dir)
    const { config } = resolveConfig({ evaluate: { storeDir: join(dir, 'home'), koptBench: fakeBench } })
    Object.assign(ev, createEvaluator({ kopt, config }))
    const args = { solution: ['solution/k.cpp'], reference: 'ref.pt', inputs: 'inputs.json' }
    const text = await ev.evaluate('s', ws, args)
    const r = JSON.parse(text)
    assert.equal(r.correct, true, text)
    assert.equal(r.error, undefined, text)
    const tile = '#pragma once\nconstexpr int kTile = 16;\n'
    // Exactly the files the build read, by their place in the workspace: not the header beside the
    // source that nothing includes.
    assert.deepEqual(r.sources.read, [
      { path: 'common/tile.h', sha256: sha256(tile) },
      { path: 'solution/k.cpp', sha256: sha256('#include <kopt/op.h>\n#include "../common/tile.h"\n#include "sub/inner.h"\n') },
      { path: 'solution/sub/inner.h', sha256: sha256('#pragma once\n#include "../../common/tile.h"\n') },
    ])
    assert.equal(r.report.includes('KOPT_FILES_READ='), false, 'the list is bound, not repeated in the report')
    // The point the session log makes of it, and kernel_finalize's re-measurement of it.
    const projector = pluginPointOf(args, text)
    const replay = { enabled: true, timeoutSec: 20, maxOutputKiB: 64 }
    const finalize = () => finalizeWithReplay({ artifact_path: 'solution/k.cpp' }, {
      kopt, projector, cwd: ws, replay, remeasure: (pick) => ev.remeasure('s', ws, pick) })
    const same = await finalize()
    assert.match(same, /^\[replay\] kernel_evaluate solution\/k\.cpp@/m, same)
    assert.doesNotMatch(same, /\[replay note\]/)
    // The header in the sibling folder changes after the evaluation.
    writeFileSync(join(ws, 'common', 'tile.h'), '#pragma once\nconstexpr int kTile = 32;\n')
    const after = await finalize()
    assert.match(after, /^\[replay note\] common\/tile\.h: 磁盘上的文件在评测后改过 \/ the file on disk changed since it was measured; 复测用当时测量的字节 \/ re-measured from the bytes that were measured$/m, after)
    assert.equal((after.match(/\[replay note\]/g) ?? []).length, 1, after)
    // …and the re-measurement read the measured header, where the source includes it from.
    assert.match(after, new RegExp(`^FAKE_READ: common/tile\\.h ${sha256(tile)}$`, 'm'), after)
    assert.doesNotMatch(after, /not re-measured/)
    // The subfolder's header changes too: both said, both as measured.
    writeFileSync(join(ws, 'solution', 'sub', 'inner.h'), '#pragma once\n')
    const both = await finalize()
    assert.match(both, /^\[replay note\] solution\/sub\/inner\.h: .*the file on disk changed since it was measured/m, both)
    assert.match(both, /^FAKE_READ: solution\/sub\/inner\.h /m, both)
    assert.match(both, new RegExp(`^FAKE_READ: common/tile\\.h ${sha256(tile)}$`, 'm'), both)
  } finally {
    await ev.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('bytes binding refuses what it cannot bind: no list, a list that is not the payload\'s, too many files, a file changed meanwhile, a replay that read other bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kopt-bind-'))
  const ev = { dispose: () => {} }
  try {
    const ws = workspaceWithHeaders(dir)
    const { config } = resolveConfig({ evaluate: { storeDir: join(dir, 'home'), koptBench: fakeBench } })
    Object.assign(ev, createEvaluator({ kopt, config }))
    const args = { solution: ['solution/k.cpp'], reference: 'ref.pt', inputs: 'inputs.json' }
    const run = async (mode) => {
      if (mode) writeFileSync(join(ws, 'fake-mode'), mode)
      else rmSync(join(ws, 'fake-mode'), { force: true })
      return JSON.parse(await ev.evaluate('s', ws, args))
    }
    for (const [mode, why] of [['no-list', /no KOPT_FILES_READ line/], ['bad-digest', /does not match native_metrics\.files_read/],
      ['many', /the build read 10001 files, more than the 10000 a point is bound to: refused/]]) {
      const r = await run(mode)
      assert.equal(r.correct, false, mode)
      assert.match(r.error, why, mode)
      assert.equal(r.sources.read, undefined, `${mode}: nothing bound in part`)
    }
    // A header the build read changes before the plugin could keep it: the figures do not count.
    const changed = await run('change')
    assert.equal(changed.correct, false)
    assert.match(changed.error, /the file\(s\) common\/tile\.h changed while they were being evaluated/)
    assert.equal(changed.sources.read, undefined)
    // A build that read a file outside the workspace: kopt-bench refuses it, the point says why.
    writeFileSync(join(dir, 'outside.h'), '// outside\n')
    writeFileSync(join(ws, 'solution', 'k.cpp'), `#include "${join(dir, 'outside.h')}"\n`)
    const outside = await run('')
    assert.equal(outside.compiled, false)
    assert.match(outside.error, /refused: the build read .*outside\.h, outside the workspace/)
    // A replay whose build read another file than the measured one is no re-measurement of the point.
    writeFileSync(join(ws, 'solution', 'k.cpp'), '#include "../common/tile.h"\n')
    const text = await ev.evaluate('s', ws, args)
    assert.equal(JSON.parse(text).correct, true, text)
    writeFileSync(join(ws, 'fake-mode'), 'extra')
    const fin = await finalizeWithReplay({ artifact_path: 'solution/k.cpp' }, {
      kopt, projector: pluginPointOf(args, text), cwd: ws, replay: { enabled: true, timeoutSec: 20, maxOutputKiB: 64 },
      remeasure: (pick) => ev.remeasure('s', ws, pick) })
    assert.match(fin, /\[replay not re-measured\].*\n.*the re-measurement's build did not read the measured bytes \(extra\.h: read, but not by the measured build\)/, fin)
  } finally {
    await ev.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a KernelBench problem needs no input spec: its point is bound without one and re-measured from its bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kopt-bind-'))
  const ev = { dispose: () => {} }
  try {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'solution'), { recursive: true })
    writeFileSync(join(ws, 'model.py'), 'class Model: pass\n')
    writeFileSync(join(ws, 'solution', 'kernel.py'), 'class ModelNew: pass\n')
    const { config } = resolveConfig({ evaluate: { storeDir: join(dir, 'home'), koptBench: fakeBench } })
    Object.assign(ev, createEvaluator({ kopt, config }))
    const args = { solution: ['solution/kernel.py'], reference: 'model.py' }
    const text = await ev.evaluate('s', ws, args)
    const r = JSON.parse(text)
    assert.equal(r.correct, true, text)
    assert.equal(r.sources.inputs, undefined)
    assert.deepEqual(r.sources.read, [{ path: 'solution/kernel.py', sha256: sha256('class ModelNew: pass\n') }])
    writeFileSync(join(ws, 'solution', 'kernel.py'), 'class ModelNew: edited = True\n')
    const fin = await finalizeWithReplay({ artifact_path: 'solution/kernel.py' }, {
      kopt, projector: pluginPointOf(args, text), cwd: ws, replay: { enabled: true, timeoutSec: 20, maxOutputKiB: 64 },
      remeasure: (pick) => ev.remeasure('s', ws, pick) })
    assert.match(fin, /^\[replay note\] solution\/kernel\.py: .*changed since it was measured/m, fin)
    assert.match(fin, new RegExp(`^FAKE_READ: solution/kernel\\.py ${sha256('class ModelNew: pass\n')}$`, 'm'), fin)
  } finally {
    await ev.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
})
