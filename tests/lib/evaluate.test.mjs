// kernel_evaluate's JS side (lib/evaluate.mjs) without a host: the queue across sessions, the bounded
// store of measured bytes, the environment kopt-bench gets, and bad input that runs nothing (the checks
// themselves are the core's, tests/core/test_evaluate.cpp). The real run is tests/e2e/evaluate-e2e.mjs.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEvaluator, EvaluationQueue, evaluatorEnv, findKoptBench, SourceStore } from '../../lib/evaluate.mjs'
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
