// The kernel_evaluate tool of 算子优化模式 (DV-13): the handler runs kopt-bench from the plugin, never
// through the agent's shell, and its verdict is the tool result. Registered by lib/agent.mjs; the work is
// in lib/evaluate.mjs and the core (kopt/evaluate.hpp).
import { defineTool } from './host.mjs'
import { EVALUATE_TOOL } from './config.mjs'

const text = { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] }

export function registerEvaluateTool(ctx, svc, callingSession) {
  ctx.effect(() => ctx.tools.register(defineTool({
    name: EVALUATE_TOOL,
    description: '用插件自带的评测器 kopt-bench 评测一个候选实现：插件亲自编译、检查正确性、计时，结果直接作为工具结果，'
      + '在评测面板上记为「插件评测器实测」（最可信）。不要再在 shell 里运行 kopt-bench：那样的数字只是你转述的。'
      + '同一台机器上一次只跑一个评测（其他会话的评测会排队）。 / Evaluate one candidate with the plugin\'s own '
      + 'evaluator, kopt-bench: the plugin compiles, checks correctness and times it itself, and its verdict is '
      + 'this tool\'s result, recorded on the panel as "measured by the plugin\'s evaluator" (the most trusted '
      + 'provenance). Do not run kopt-bench in the shell instead: such numbers are only relayed by you. One '
      + 'evaluation at a time on this machine (other sessions\' evaluations queue). All paths are relative to '
      + 'the working directory and must stay inside it.',
    parameters: {
      solution: { type: 'array', items: { type: 'string' }, required: true, description: '候选源文件（.cpp/.cu，一个或多个）/ the candidate\'s source files (.cpp/.cu), one or more' },
      reference: { type: 'string', required: true, description: '冻结的参考（ref.pt 或同 ABI 的 .cpp/.cu）/ the frozen reference (ref.pt, or a .cpp/.cu of the same ABI)' },
      inputs: { type: 'string', required: true, description: '输入规格 JSON / the input spec (JSON)' },
      artifact_path: { type: 'string', description: '结果里报告的名字（默认第一个源文件）/ the name the result reports (default: the first solution file)' },
      options: {
        type: 'object',
        additionalProperties: true,
        description: '可选的 kopt-bench 选项（改变"正确"含义的会降低可信度并在点上写明）/ optional kopt-bench options '
          + '(those that change what "correct" means lower trust and are shown on the point): precision, device, '
          + 'num_correct_trials, warmup, min_trials, max_trials, target_ci, max_time, fresh_inputs, tolerance, atol, '
          + 'rtol, baseline, refresh_baseline, timeout, seed, no_timing, namespaces',
      },
      where: { type: 'string', description: '在哪里运行：local（本机，默认）或 slurm（经 kopt-bench --slurm 提交）/ where to run: "local" (this machine, default) or "slurm" (submitted through kopt-bench --slurm)' },
      slurm_options: { type: 'string', description: 'where 为 slurm 时的 sbatch 选项 / sbatch options, with where: "slurm"' },
    },
    output: text,
    timeoutMs: (svc.config.evaluate.timeoutSec + 120) * 1000,
    execute: async (args, exec) => {
      const caller = callingSession(ctx)
      if (svc.evaluator === undefined) {
        throw new Error(`插件的原生核心不可用，无法评测 / the plugin's native core is unavailable: ${svc.kopterror ?? 'not loaded'}`)
      }
      return svc.evaluator.evaluate(caller?.id ?? '', caller?.session?.header?.cwd, args ?? {}, exec?.signal)
    },
  })), `kernel-opt: ${EVALUATE_TOOL}`)
}
