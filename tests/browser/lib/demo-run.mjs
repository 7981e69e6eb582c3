// A scripted kernel-optimization session as DSH session events (tool/call, tool/result,
// user/message), for the browser tests: plans, an environment report, edits, shell and tool
// evaluations (some failing), a profiler run, loop rounds with supervision, a finalize with the
// plugin's replay. Deterministic for a given (n, seed).

// ref / base: the reference latency and the first kernel's (ms); title / model: a session/title and a
// request/header event naming the run and its model (what a comparison's legend shows).
export function demoEvents ({ n = 24, seed = 7, finalize = true, rounds = true, speedups = true, ref = 2.5, base = 2.4, title, model } = {}) {
  let s = seed >>> 0
  const rnd = () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
  const ev = []
  let seq = 0
  let t = 1_764_000_000_000
  const push = (type, data) => { ev.push({ type, seq: seq++, time: (t += 1500), data }) }
  let call = 0
  const toolCall = (name, args) => { const id = `call_${++call}`; push('tool/call', { turn: 1, step: 1, callId: id, name, arguments: JSON.stringify(args) }); return id }
  const toolResult = (id, text, isError = false) => push('tool/result', {
    turn: 1, step: 1,
    message: { role: 'user', source: { kind: 'tool', callId: id }, content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text }], isError }] },
  })
  const user = (text, source = { kind: 'user' }) => push('user/message', { message: { role: 'user', content: [{ type: 'text', text }], source } })
  const loopMsg = text => user(text, { kind: 'plugin', plugin: 'kernel-opt' })

  user('Optimize the softmax kernel in k.cu; evaluate with python bench.py.')
  if (title) push('session/title', { title, messageSeqs: [0], source: { kind: 'fallback' } })
  if (model) push('request/header', { header: { config: { provider: model.split('/')[0], model: model.split('/')[1], reasoningEffort: 'high' }, system: 'You are an agent.' } })
  toolResult(toolCall('kernel_env', {
    location: 'local workstation', device: 'NVIDIA H100 80GB HBM3', constraint: 'single GPU, clocks locked',
    versions: { cuda: '12.4', torch: '2.5.1', driver: '550.54' }, probe: 'nvidia-smi --query-gpu=name,driver_version --format=csv',
  }), 'ok')
  const phases = [
    ['baseline', 'naive row-wise softmax, one thread per row', 'establish the reference and correctness', 'vectorize loads'],
    ['explore', 'warp-per-row with float4 loads and warp shuffles', 'memory bound: wider loads should halve latency', 'try shared-memory tiling'],
    ['exploit', 'online softmax (single pass) with block-per-row for long rows', 'one pass saves a full read of the input', 'tune block size'],
    ['stuck', 'block-size sweep gives no further gain', 'the kernel is now at ~85% of HBM bandwidth', 'profile and decide whether to stop'],
  ]
  let plan = 0
  let bestLat = Infinity
  let bestShellCmd = ''
  const per = Math.max(1, Math.ceil(n / phases.length))
  for (let i = 0; i < n; i++) {
    if (i % per === 0 && plan < phases.length) {
      const [phase, approach, hypothesis, next] = phases[plan++]
      toolResult(toolCall('kernel_plan', { phase, approach, hypothesis, next }), 'recorded')
    }
    if (rounds && i > 0 && i % 4 === 0) {
      const r = i / 4
      const review = r % 3 === 0
        ? 'Supervisor review (advisory, from the second model):\nThe last two evaluations changed the block size only; try a different memory layout before spending more budget.\nContinue the kernel-optimization run.'
        : `Supervisor review: OK. progress is steady (${r})`
      loopMsg(`[kernel-loop round ${r}] Continue optimizing. ${i}/${Math.max(n, 20)} evaluations used.\n${review}`)
    }
    // an edit before most evaluations
    if (i % 2 === 0) {
      toolResult(toolCall('edit', { file_path: '/work/k.cu', old_string: `constexpr int BLOCK = ${64 << (i % 3)};`, new_string: `constexpr int BLOCK = ${64 << ((i + 1) % 3)};` }), 'edited')
    }
    const improve = Math.pow(0.93, Math.min(i, 40)) * (1 + 0.08 * (rnd() - 0.5))
    const lat = Number((base * improve).toFixed(4))
    const fail = i > 2 && i % 7 === 3
    const compileFail = i > 2 && i % 11 === 5
    if (i % 5 === 4) {
      // evaluator tool channel
      const id = toolCall('kernel_evaluate', { artifact_path: '/work/k.cu' })
      const payload = compileFail
        ? { evaluation_id: `e${i}`, compiled: false, correct: false, error: 'nvcc: k.cu(41): error: identifier "smem" is undefined' }
        : { evaluation_id: `e${i}`, compiled: true, correct: !fail, latency_ms: lat, ...(speedups ? { native_metrics: { speedup: Number((ref / lat).toFixed(3)), dram_throughput_pct: Math.round(60 + 30 * rnd()) } } : {}) }
      toolResult(id, JSON.stringify(payload))
    } else {
      const cmd = `cd /work && python bench.py --kernel k.cu --iters 200 --seed ${i}`
      const id = toolCall('bash', { command: cmd, description: 'evaluate' })
      const payload = compileFail
        ? { artifact: 'k.cu', run: i, compiled: false, correct: false, error: 'compile error: k.cu(41) identifier "smem" is undefined' }
        : { artifact: 'k.cu', run: i, compiled: true, correct: !fail, latency_ms: lat, ...(speedups ? { ref_runtime_ms: ref } : {}) }
      toolResult(id, `compiling k.cu … done\nKERNEL_EVAL=${JSON.stringify(payload)}\n`)
      if (!fail && !compileFail && lat < bestLat) { bestLat = lat; bestShellCmd = cmd }
    }
    if (i === Math.floor(n * 0.6)) {
      toolResult(toolCall('bash', { command: 'ncu --set full -o prof python bench.py --kernel k.cu' }), '==PROF== report written to prof.ncu-rep')
    }
  }
  if (finalize && bestShellCmd) {
    loopMsg(`[kernel-loop wrap-up] Budget reached: ${n}/${n} evaluations used. Finalize the best version.`)
    const id = toolCall('kernel_finalize', { artifact_path: 'k.cu' })
    const replayLat = Number((bestLat * 1.006).toFixed(4))
    toolResult(id, `finalized k.cu\n[replay] ${bestShellCmd}\n---\nKERNEL_EVAL=${JSON.stringify({ artifact: 'k.cu', correct: true, latency_ms: replayLat, ...(speedups ? { ref_runtime_ms: ref } : {}) })}\nexit 0`)
  }
  return ev
}

// A fixed-size session with exactly `points` evaluations and nothing else that costs (benchmark).
export function bigEvents (points = 1000) {
  return demoEvents({ n: points, seed: 11, finalize: true, rounds: true })
}

// An evaluation under way: its kernel_evaluate call logged at `seq`, no result yet.
export function pendingEvaluation (seq) {
  return { type: 'tool/call', seq, time: 1_900_000_000_000, data: { callId: `call_waiting_${seq}`, name: 'kernel_evaluate', arguments: JSON.stringify({ artifact_path: 'k.cu' }) } }
}

// `count` further shell evaluations with fresh call ids, seqs and payloads (live-update tests).
export function moreEvents (count, { tag = 'x', seq0 = 1_000_000, latency = 0.5 } = {}) {
  const ev = []
  let seq = seq0
  for (let i = 0; i < count; i++) {
    const id = `call_${tag}_${i}`
    const cmd = `python bench.py --kernel k.cu --tag ${tag}${i}`
    ev.push({ type: 'tool/call', seq: seq++, time: 1_800_000_000_000 + seq, data: { callId: id, name: 'bash', arguments: JSON.stringify({ command: cmd }) } })
    const payload = { artifact: 'k.cu', run: `${tag}${i}`, correct: true, latency_ms: Number((latency * (1 + 0.01 * i)).toFixed(4)), ref_runtime_ms: 2.5 }
    ev.push({
      type: 'tool/result', seq: seq++, time: 1_800_000_000_000 + seq,
      data: { message: { source: { kind: 'tool', callId: id }, content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text: `KERNEL_EVAL=${JSON.stringify(payload)}` }] }] } },
    })
  }
  return ev
}
