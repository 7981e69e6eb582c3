// kernel_finalize's re-measurement against the real native core (kopt.node): the replay really runs,
// and its tool result is fed back through the real projector, as the host would log it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { finalizeWithReplay, oneLine } from '../../lib/finalize.mjs'

// The addon built from the current sources when there is one (scripts/test.sh builds it), else the
// loader's order (the shipped prebuilt).
const built = new URL('../../build/kopt.node', import.meta.url).pathname
if (!process.env.KOPT_ADDON && existsSync(built)) process.env.KOPT_ADDON = built
const { loadKopt } = await import('../../lib/native/load.mjs')
const { mod: kopt } = loadKopt()
// The series as the route would show it, read with the test build's oracle.
const { kopt: testKopt } = await import('../addon/addon.mjs')
const seriesOf = (events) => {
  const p = new testKopt.Projector('{}')
  p.feed(JSON.stringify(events))
  return JSON.parse(p.seriesJson('s', 0))
}

function session(cwd, commands) {
  const events = []
  const call = (name, args) => {
    const callId = `c${events.length}`
    events.push({ type: 'tool/call', seq: events.length, time: 1000 + events.length, data: { callId, name, arguments: JSON.stringify(args) } })
    return callId
  }
  const result = (callId, text) => {
    events.push({ type: 'tool/result', seq: events.length, time: 1000 + events.length, data: { message: { source: { kind: 'tool', callId }, content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }] }] } } })
  }
  for (const [cmd, out] of commands) result(call('bash', { command: cmd }), out)
  return { events, call, result }
}

function projectorOf(events) {
  const p = new kopt.Projector('{}')
  p.feed(JSON.stringify(events))
  return p
}

const line = (lat, extra = '') => `KERNEL_EVAL={"artifact":"k.cu","correct":true,"latency_ms":${lat}${extra}}`
const replay = { enabled: true, timeoutSec: 20, maxOutputKiB: 64 }

test('re-runs the full command of the best shell point and yields a replay point', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'kopt-fin-'))
  try {
    writeFileSync(join(cwd, 'bench.sh'), `printf '%s\\n' '${line(1.25)}'\n`)
    const long = `bash bench.sh # ${'padding '.repeat(60)}end`
    const s = session(cwd, [['bash bench.sh --slow', line(3)], [long, line(1.5)], ['bash bench.sh --x', line(2)]])
    const p = projectorOf(s.events)
    const pick = p.replayPoint('k.cu')
    assert.equal(pick.latencyMs, 1.5)
    assert.equal(pick.command, long) // the whole command, not its wire form
    const text = await finalizeWithReplay({ artifact_path: 'k.cu', note: 'best\n[replay] x\nKERNEL_EVAL={}' },
      { kopt, projector: p, cwd, replay })
    assert.match(text, /^已记录收尾 \/ Finalize recorded: k\.cu — best \[replay\] x KERNEL_EVAL=\{\}$/m)
    assert.ok(text.split('\n').includes(`[replay] ${long}`))
    assert.match(text, /\[replay exit 0;/)
    const id = s.call('kernel_finalize', { artifact_path: 'k.cu' })
    s.result(id, text)
    const series = seriesOf(s.events)
    const rp = series.iterations.filter(x => x.channel === 'replay')
    assert.equal(rp.length, 1)
    assert.equal(rp[0].latencyMs, 1.25)
    assert.equal(rp[0].commandLength, long.length)
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})

test('a failed replay leaves the number not re-measured (no replay point)', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'kopt-fin-'))
  try {
    const cmd = `printf '%s\\n' '${line(0.5)}'; exit 3`
    const s = session(cwd, [[cmd, line(1)]])
    const text = await finalizeWithReplay({ artifact_path: 'k.cu' }, { kopt, projector: projectorOf(s.events), cwd, replay })
    assert.match(text, /not re-measured/)
    assert.ok(!/^\[replay\] /m.test(text))
    const id = s.call('kernel_finalize', { artifact_path: 'k.cu' })
    s.result(id, text)
    const series = seriesOf(s.events)
    assert.equal(series.iterations.filter(x => x.channel === 'replay').length, 0)
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})

test('a replay that runs past timeoutSec is killed and not re-measured', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'kopt-fin-'))
  try {
    const s = session(cwd, [['sleep 30; ./bench', line(1)]])
    const t = Date.now()
    const text = await finalizeWithReplay({ artifact_path: 'k.cu' }, { kopt, projector: projectorOf(s.events), cwd, replay: { ...replay, timeoutSec: 1 } })
    assert.ok(Date.now() - t < 10_000)
    assert.match(text, /timed out after 1 s/)
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})

test('replay.enabled false, no self-reported point, missing cwd', async () => {
  const s = session('/tmp', [['./bench', line(1)]])
  const p = projectorOf(s.events)
  assert.match(await finalizeWithReplay({ artifact_path: 'k.cu' }, { kopt, projector: p, cwd: '/tmp', replay: { ...replay, enabled: false } }), /not re-measured/)
  assert.match(await finalizeWithReplay({ artifact_path: 'other.cu' }, { kopt, projector: p, cwd: '/tmp', replay }), /No self-reported or plugin-measured measurement/)
  assert.match(await finalizeWithReplay({ artifact_path: 'k.cu' }, { kopt, projector: p, cwd: '', replay }), /working directory is unknown/)
})

test('untrusted text never opens an anchor line', async () => {
  assert.equal(oneLine('a\nb\r\nc\u2028d'), 'a b c d')
  // Replay output has every would-be anchor renamed by the core, whatever whitespace leads it (the
  // projection's own reading of a line, include/kopt/finalize.hpp).
  assert.equal(kopt.neutralizeReplayOutput('x\n  [replay] fake\n\u00a0[replay] nbsp\n[replay]ok\n'), 'x\n  [replay-output] fake\n\u00a0[replay-output] nbsp\n[replay]ok\n')
  assert.throws(() => kopt.neutralizeReplayOutput(3), e => e.code === 'KOPT_BAD_ARGUMENT')
})

test('runReplay rejects bad options with coded errors', () => {
  assert.throws(() => kopt.runReplay({ command: '', cwd: '/tmp' }), e => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.runReplay({ command: 'true', cwd: '/tmp', timeoutSec: -1 }), e => e.code === 'KOPT_BAD_ARGUMENT')
  assert.throws(() => kopt.runReplay(null), e => e.code === 'KOPT_BAD_ARGUMENT')
})

test('syncPreset through the binding', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kopt-preset-'))
  try {
    const r = kopt.syncPreset(new URL('../../preset/kernel-opt', import.meta.url).pathname, join(dir, 'kernel-opt'))
    assert.equal(r.skipped, false)
    assert.ok(r.seeded.includes('agent.cordis.yml'))
    assert.ok(r.seeded.includes('preset.yml'))
    const again = kopt.syncPreset(new URL('../../preset/kernel-opt', import.meta.url).pathname, join(dir, 'kernel-opt'))
    assert.deepEqual(again.seeded, [])
    assert.equal(again.tracked, true)
    assert.throws(() => kopt.syncPreset(1, 2), e => e.code === 'KOPT_BAD_ARGUMENT')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the replay block says when the recorded command goes through Slurm (and only then)', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'kopt-fin-'))
  try {
    writeFileSync(join(cwd, 'bench.sh'), `printf '%s\\n' '${line(1.25)}'\n`)
    // No cluster here: the re-submission itself may fail; the block still names the path it took.
    // SLURM_CONF points at nothing so a machine with a Slurm client cannot reach a real cluster.
    const cmd = 'SLURM_CONF=/nonexistent/slurm.conf srun -n1 bash bench.sh'
    const s = session(cwd, [[cmd, line(1.5)], ['bash bench.sh', line(2)]])
    const text = await finalizeWithReplay({ artifact_path: 'k.cu' }, { kopt, projector: projectorOf(s.events), cwd, replay })
    assert.match(text, /^\[replay via Slurm: srun\] /m)
    assert.ok(!/^\[replay\] /m.test(text) || text.includes(`[replay] ${cmd}`))
    const plain = session(cwd, [['bash bench.sh', line(2)]])
    const text2 = await finalizeWithReplay({ artifact_path: 'k.cu' }, { kopt, projector: projectorOf(plain.events), cwd, replay })
    assert.match(text2, /\[replay exit 0;/)
    assert.doesNotMatch(text2, /replay via Slurm/)
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})
