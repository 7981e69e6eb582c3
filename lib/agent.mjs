// dsh-kernel-opt — the mode half: the model-facing tools of 算子优化模式, mounted as a row of the
// kernel-opt preset (preset/kernel-opt/agent.cordis.yml), so only sessions in that mode see them.
// The tools' arguments are the record the projection reads; kernel_finalize also re-measures, and
// kernel_evaluate runs the plugin's own evaluator (lib/evaluate-tool.mjs).
// Config and the native core come from the `kernelOpt` service of the profile half (lib/index.mjs).
import { defineTool } from './host.mjs'
import { REPLAY_TOOL } from './config.mjs'
import { finalizeWithReplay, oneLine } from './finalize.mjs'
import { registerLoopCommands } from './loop.mjs'
import { registerEvaluateTool } from './evaluate-tool.mjs'

export const name = 'kernel-opt-tools'
export const inject = ['tools', 'agents', 'sessions', 'kernelOpt']

const text = { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] }

/** The calling session: the agent running this tool call. */
function callingSession(ctx) {
  const agent = ctx.agents?.currentInitiator?.()
  const id = agent?.id ?? agent?.session?.id
  if (typeof id !== 'string') return undefined
  return { id, session: ctx.sessions.get(id) }
}

export function apply(ctx) {
  const svc = ctx.kernelOpt
  const replay = svc.config.replay

  // /kloop and /supervise (lib/loop.mjs) in this row's context; svc.loop is the profile half's LoopService.
  {
    try {
      registerLoopCommands(ctx, svc)
    } catch (error) {
      console.warn(`[kernel-opt] registerLoopCommands failed: ${error?.message ?? error}`)
    }
  }

  ctx.effect(() => ctx.tools.register(defineTool({
    name: 'kernel_plan',
    description: '向人类的评测面板汇报你当前的优化方案。开始新方案之前调用，方案变化时再调用；每个字段一行。'
      + ' / Report your CURRENT optimization plan to the human\'s evaluation panel. Call before starting '
      + 'an approach and whenever it changes; one short line per field. phase: explore / tune / verify / '
      + 'stuck / done. approach: the technique. hypothesis: why it should be faster. next: the next action.',
    parameters: {
      phase: { type: 'string', required: true, description: '阶段 / stage: explore, tune, verify, stuck, done' },
      approach: { type: 'string', required: true, description: '当前方案（一行）/ the current technique, one line' },
      hypothesis: { type: 'string', description: '为什么会更快 / why it should be faster' },
      next: { type: 'string', description: '下一步 / the immediate next action' },
    },
    output: text,
    execute: async (args) => `已记录方案 / Plan recorded (${oneLine(args.phase, 60)}): ${oneLine(args.approach, 300)}`,
  })), 'kernel-opt: kernel_plan')

  ctx.effect(() => ctx.tools.register(defineTool({
    name: 'kernel_env',
    description: '汇报评测实际运行的环境：基准测试在哪台机器、哪块设备上执行（不一定是本机）。第一次评测之前调用，环境变化时再调用。'
      + '事实要读取，不要猜测；probe 写读取它们的命令。 / Report where your EVALUATIONS run: the machine and '
      + 'device the benchmark executes on (not necessarily this one). Call before the first evaluation and '
      + 'whenever it changes. Read the facts, never guess; name the commands you read them from in probe.',
    parameters: {
      location: { type: 'string', required: true, description: '评测在哪里执行 / where evaluations run, e.g. "本机", "远程 GPU 主机"' },
      device: { type: 'string', required: true, description: '计时所用设备 / the timed device, e.g. "NVIDIA H100 80GB ×1"' },
      constraint: { type: 'string', description: '决定设备的用户指示 / the instruction that decided the device' },
      versions: { type: 'object', additionalProperties: true, description: '关键工具链版本 / key toolchain versions, e.g. {"cuda":"12.4"}' },
      probe: { type: 'string', description: '读取这些事实的命令 / the commands the facts were read from' },
      notes: { type: 'string', description: '影响测量的情况 / anything qualifying the measurements' },
    },
    output: text,
    execute: async (args) => `已记录环境 / Environment recorded: ${oneLine(args.device, 200)} @ ${oneLine(args.location, 200)}`,
  })), 'kernel-opt: kernel_env')

  registerEvaluateTool(ctx, svc, callingSession)

  ctx.effect(() => ctx.tools.register(defineTool({
    name: REPLAY_TOOL,
    description: '按产物路径记录你的最终选择（评测器不发放 evaluation id 时使用），只在最后调用一次。若该产物的最佳测量是自报的，'
      + '插件会在会话目录里把当时记录的完整基准命令重跑一次；若它是插件评测器实测的，插件用当时测量的那些字节再评测一次。输出附在结果后，'
      + '作为复测的最终数字。 / Record your FINAL choice by artifact path (for pipelines without evaluator-issued '
      + 'ids); call once, at the end. When the artifact\'s best measurement is self-reported, the plugin re-runs its '
      + 'full recorded benchmark command once in the session directory; when the plugin\'s evaluator measured it '
      + '(kernel_evaluate), the plugin evaluates exactly the bytes it measured once more. The output is appended as '
      + 'the re-measured final number.',
    parameters: {
      artifact_path: { type: 'string', required: true, description: '最终产物路径，与 KERNEL_EVAL 行里的 artifact 一致 / the artifact path as printed in its KERNEL_EVAL line' },
      note: { type: 'string', description: '一行收尾说明 / a one-line closing note' },
    },
    output: text,
    timeoutMs: (replay.timeoutSec + 120) * 1000,
    execute: async (args, exec) => {
      const caller = callingSession(ctx)
      const projector = caller ? svc.getProjector(caller.id) : undefined
      return finalizeWithReplay(args ?? {}, {
        kopt: svc.kopt,
        projector,
        cwd: caller?.session?.header?.cwd,
        replay,
        signal: exec?.signal,
        // A plugin-measured point (DV-13) is measured again from the bytes it measured.
        remeasure: svc.evaluator ? (pick) => svc.evaluator.remeasure(caller?.id ?? '', caller?.session?.header?.cwd, pick, exec?.signal) : undefined,
      })
    },
  })), 'kernel-opt: kernel_finalize')
}
