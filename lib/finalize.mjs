// kernel_finalize's re-measurement (spec H-5, H-7), separated from the tool so it can be tested
// without a host. The core picks the point (H-3: projector.replayPoint, kopt/finalize.hpp) and
// keeps its FULL recorded command; this file re-runs it with the C++ runner and writes the tool
// result the projection reads back.
import { REPLAY_LINE_PREFIX } from './config.mjs'

/** One line, no control characters: user-supplied text never opens a line of its own. */
export function oneLine(text, max = 500) {
  const s = String(text ?? '').replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim()
  return s.length > max ? `${s.slice(0, max)}…` : s
}

const T = {
  ack: (a, note) => `已记录收尾 / Finalize recorded: ${a}${note ? ` — ${note}` : ''}`,
  disabled: '复测已在配置中关闭（replay.enabled: false），最终数字未经复测 / Replay is disabled by config: the final number is not re-measured.',
  none: '该产物没有可复测的有效测量（自报的或插件评测器实测的）/ No self-reported or plugin-measured measurement of this artifact to re-measure.',
  noCmd: '找不到该测量的完整命令，最终数字未经复测 / The full recorded command is unavailable: the final number is not re-measured.',
  noCwd: '会话工作目录未知，最终数字未经复测 / The session working directory is unknown: the final number is not re-measured.',
  noCore: '原生核心不可用，最终数字未经复测 / The native core is unavailable: the final number is not re-measured.',
  slurm: (path) => `[replay via Slurm: ${path}] 复测与原测量走同一 Slurm 路径重新提交 / re-submitted through the same Slurm path as the measurement`,
  sameBytes: '插件评测器用当时测量的字节再评测 / the plugin\'s evaluator, on the bytes it measured',
  failed: (why) => `复测失败（${why}），最终数字未经复测 / Replay failed (${why}): the final number is not re-measured.`,
}

/**
 * A point the plugin's evaluator measured (DV-13): the same bytes evaluated again (lib/evaluate.mjs); the
 * kopt-bench output follows a `[replay] ` line naming what ran, so the projection reads it as the replay.
 */
async function remeasurePlugin(point, deps) {
  const names = (point.sources?.solution ?? []).map(s => `${s.path}@${s.sha256.slice(0, 12)}`).join(',')
  if (deps.remeasure === undefined) return [T.noCore]
  let r
  try {
    r = await deps.remeasure(point)
  } catch (error) {
    r = { error: error?.message ?? String(error) }
  }
  if (r.error !== undefined) return [`[replay not re-measured] kernel_evaluate ${names}`, T.failed(oneLine(r.error, 300))]
  return [
    `${REPLAY_LINE_PREFIX}kernel_evaluate ${names} (${T.sameBytes})`,
    ...r.notes.map(n => `[replay note] ${oneLine(n, 400)}`),
    '--- replay output ---', deps.kopt.neutralizeReplayOutput(r.output).replace(/\n$/, ''),
    `[replay exit ${r.code ?? 'none'}]`,
  ]
}

/**
 * Runs the finalize. deps: {kopt, projector, cwd, replay: {enabled, timeoutSec, maxOutputKiB}, signal}.
 * Never throws: every failure is a line of the result.
 */
export async function finalizeWithReplay(args, deps) {
  const artifact = oneLine(args?.artifact_path ?? args?.artifact ?? '', 1000)
  const lines = [T.ack(artifact, args?.note !== undefined ? oneLine(args.note, 300) : '')]
  if (!deps.replay.enabled) return [...lines, T.disabled].join('\n')
  if (!deps.kopt || !deps.projector) return [...lines, T.noCore].join('\n')
  const point = deps.projector.replayPoint(artifact)
  if (point === undefined) return [...lines, T.none].join('\n')
  if (point.plugin) return [...lines, ...(await remeasurePlugin(point, deps))].join('\n')
  const command = point.command
  if (command === '') return [...lines, T.noCmd].join('\n')
  if (typeof deps.cwd !== 'string' || deps.cwd === '') return [...lines, T.noCwd].join('\n')

  const headCap = 16 * 1024
  const tailCap = Math.max(4096, deps.replay.maxOutputKiB * 1024 - headCap)
  let result
  try {
    const pending = deps.kopt.runReplay({ command, cwd: deps.cwd, timeoutSec: deps.replay.timeoutSec, headCap, tailCap })
    const onAbort = () => pending.cancel?.()
    deps.signal?.addEventListener?.('abort', onAbort, { once: true })
    try {
      result = await pending
    } finally {
      deps.signal?.removeEventListener?.('abort', onAbort)
    }
  } catch (error) {
    return [...lines, T.failed(oneLine(error?.message ?? error, 200))].join('\n')
  }
  const flat = oneLine(command, 1_000_000)
  if (result.failure !== undefined) {
    // No `[replay] ` anchor: nothing in a failed run may become the final measurement (H-5).
    lines.push(`[replay not re-measured] ${flat}`, T.failed(oneLine(result.failure, 200)))
  } else {
    lines.push(`${REPLAY_LINE_PREFIX}${flat}`)
  }
  // The core names the Slurm path the recorded command went through (it re-submits through the same one).
  if (typeof result.slurmPath === 'string' && result.slurmPath !== '') lines.push(T.slurm(result.slurmPath))
  // Output lines that would read as our own anchor are renamed, by the core's own line rule (H-5).
  lines.push('--- replay output ---', deps.kopt.neutralizeReplayOutput(result.output).replace(/\n$/, ''))
  lines.push(`[replay exit ${result.exitCode ?? (result.signal ? `signal ${result.signal}` : 'none')}; ${Math.round(result.wallMs)} ms${result.truncated ? `; output trimmed from ${result.outputBytes} bytes` : ''}]`)
  return lines.join('\n')
}
