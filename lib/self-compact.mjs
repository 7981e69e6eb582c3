// dsh-kernel-opt — `self_compact`, mounted INSIDE the preset's compaction group (the `compaction`
// service lives only in that isolated realm).
//
// On this host the compaction service refuses to run from inside a running tool call (it needs an
// idle agent with nothing queued). So the tool only records the request; when the session's turn
// has ended and the agent is idle, we compact, then send one follow-up so the agent continues.
import { createUserMessage, defineTool } from './host.mjs'
import { PLUGIN_ID } from './config.mjs'
import { oneLine } from './finalize.mjs'

export const name = 'kernel-opt-self-compact'
export const inject = ['tools', 'agents', 'compaction']

const SETTLE_MS = 800
const IDLE_WAIT_MS = 60_000
const COMPACT_TIMEOUT_MS = 300_000

const CONTINUE_TEXT = (reason) => '[kernel-opt] 已按你的请求压缩了较早的上下文，完整记录仍在会话日志中。请从刚才停下的地方继续。'
  + ` / The older context was compacted as you asked; the full record stays in the session log. Continue where you left off.${reason ? ` (reason: ${reason})` : ''}`

export function apply(ctx) {
  const pending = new Map() // sessionId -> reason
  const timers = new Set()
  ctx.effect(() => () => {
    for (const t of timers) clearTimeout(t)
    timers.clear()
    pending.clear()
  }, 'kernel-opt: self-compact timers')

  const runDeferred = async (sessionId) => {
    const reason = pending.get(sessionId)
    if (reason === undefined) return
    const agent = ctx.agents.get(sessionId)
    if (agent === undefined) {
      pending.delete(sessionId)
      return
    }
    if (agent.status !== 'idle') {
      // A queued human message (or a loop continuation) owns the session: wait for quiescence.
      await Promise.race([agent.whenIdle?.(), new Promise(r => setTimeout(r, IDLE_WAIT_MS))])
      if (agent.status !== 'idle') return // the next turn end retries
    }
    pending.delete(sessionId)
    let summary
    try {
      // The service requires a signal; bound the run so a stuck summary call cannot hold the session.
      const result = await ctx.compaction.compactNow(agent, AbortSignal.timeout(COMPACT_TIMEOUT_MS))
      summary = result === null ? 'nothing to compact' : `${result.shadowedSeqs?.length ?? 0} items (~${result.shadowedTokenCount ?? 0} tokens)`
      console.warn(`[kernel-opt] self_compact for ${sessionId}: ${summary}`)
    } catch (error) {
      console.warn(`[kernel-opt] self_compact for ${sessionId} failed: ${error?.message ?? error}`)
      summary = undefined
    }
    try {
      agent.followup(createUserMessage({
        content: [{ type: 'text', text: summary === undefined
          ? `[kernel-opt] 上下文压缩未能完成，请照常继续。 / Compaction could not run; continue as before. (reason: ${reason})`
          : CONTINUE_TEXT(reason) }],
        source: { kind: 'plugin', plugin: PLUGIN_ID },
      }))
    } catch (error) {
      console.warn(`[kernel-opt] self_compact follow-up failed: ${error?.message ?? error}`)
    }
  }

  ctx.on('session/event', (session, event) => {
    if (event?.type !== 'turn/end' || !pending.has(session?.id)) return
    const t = setTimeout(() => {
      timers.delete(t)
      runDeferred(session.id).catch(error => console.warn(`[kernel-opt] self_compact: ${error?.message ?? error}`))
    }, SETTLE_MS)
    timers.add(t)
  })

  ctx.effect(() => ctx.tools.register(defineTool({
    name: 'self_compact',
    description: '把本会话较早的历史压缩成摘要（在本轮结束后执行，然后你会收到继续的提示）。在切换优化方案家族、旧的调试细节不再有用时使用；'
      + '不要在评测进行中或还要逐行阅读的 profile 面前使用。完整记录仍保留在会话日志里。 / Compact this session\'s older history into a '
      + 'summary. It runs when this turn ends; you then get a message to continue. Use it when you switch approach '
      + 'families and old debugging detail stops paying rent. The full record stays in the session log.',
    parameters: {
      reason: { type: 'string', required: true, description: '为什么现在可以压缩、哪些必须保留 / why now is safe, and what must survive' },
    },
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    execute: async (args) => {
      const agent = ctx.agents.currentInitiator?.()
      const id = agent?.id
      if (typeof id !== 'string') throw new Error('self_compact 需要在智能体的回合中调用 / self_compact needs a running agent turn')
      pending.set(id, oneLine(args?.reason ?? '', 300))
      return '已安排压缩：本轮结束后执行，完成后会提示你继续。现在请简短收尾本轮。 / Compaction scheduled: it runs when this turn ends, '
        + 'then you will be prompted to continue. End this turn briefly now.'
    },
  })), 'kernel-opt: self_compact')
}
