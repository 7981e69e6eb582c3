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
      solution: { type: 'array', items: { type: 'string' }, required: true, description: '候选：KernelBench 格式的 Python 解（.py，class ModelNew，torch 算子 / load_inline / Triton，放在第一个，其后是它读取的文件），或 C++/CUDA 源文件（.cpp/.cu，一个或多个）/ the candidate: a KernelBench-format Python solution (.py with class ModelNew: torch ops, load_inline, Triton; first, then the files it reads), or C++/CUDA sources (.cpp/.cu), one or more' },
      reference: { type: 'string', required: true, description: '冻结的参考：KernelBench 问题文件（.py，class Model + get_inputs + get_init_inputs）、ref.pt 或同 ABI 的 .cpp/.cu / the frozen reference: a KernelBench problem (.py with class Model, get_inputs, get_init_inputs), ref.pt, or a .cpp/.cu of the same ABI' },
      inputs: { type: 'string', description: '输入规格 JSON（参考是 .py 问题文件时可省略：由 get_inputs() 推出；给出时以它为准）/ the input spec (JSON); optional when the reference is a KernelBench problem .py (derived from get_inputs(); a given spec wins)' },
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
