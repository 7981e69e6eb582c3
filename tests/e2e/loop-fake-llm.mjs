#!/usr/bin/env node
// Two scripted models behind one OpenAI-compatible server on 127.0.0.1, for the loop e2e:
//   * the agent (any model but the judge): each turn runs the benchmark once, then reports;
//     when the conversation carries the marker SLOW-TASK, a loop turn instead runs `sleep 120`
//     (so a test can stop the loop mid-turn);
//   * the supervisor (model id given by --judge, default "judge"): its replies are taken in order
//     from --judge-script ([{text, delayMs?}]; the last one repeats); the model "<judge>-slow" always
//     answers advice after 3 s (a review the test can stop the loop during);
// Session-title and compaction calls get fixed texts. Every request is logged to --log.
//   node loop-fake-llm.mjs --judge-script replies.json --ready ready.json [--log req.jsonl] [--judge judge]
import { readFileSync } from 'node:fs'
import { option as arg, serveModel } from './model-server.mjs'

const judge = arg('judge', 'judge')
const judgeReplies = JSON.parse(readFileSync(arg('judge-script'), 'utf8'))
let judgeCalls = 0

const textOf = (m) => (typeof m?.content === 'string'
  ? m.content
  : Array.isArray(m?.content) ? m.content.map(p => (typeof p?.text === 'string' ? p.text : '')).join('\n') : '')

function agentReply(body) {
  const messages = Array.isArray(body.messages) ? body.messages : []
  let lastUser = -1
  messages.forEach((m, i) => { if (m?.role === 'user') lastUser = i })
  const step = messages.slice(lastUser + 1).filter(m => m?.role === 'assistant').length
  const slow = messages.some(m => m?.role === 'user' && textOf(m).includes('SLOW-TASK'))
  const loopTurn = lastUser >= 0 && textOf(messages[lastUser]).includes('[kernel-loop round ')
  if (step === 0) {
    // A different argument on every call: the host nudges a model that repeats a call verbatim.
    const n = messages.filter(m => m?.role === 'assistant').length
    const command = slow && loopTurn ? 'sleep 120' : `bash bench.sh --variant ${n}`
    return { step, tool_calls: [{ name: 'bash', arguments: { command, description: 'evaluate the kernel' } }] }
  }
  return { step, text: 'Measured this variant; next I will try a wider tile.' }
}

// Which of the scripted models a request is for, and its reply.
function answer(body, req) {
  if (body.model === judge) return { who: 'judge', ...judgeReplies[Math.min(judgeCalls, judgeReplies.length - 1)], call: judgeCalls++ }
  // A slow reviewer: the plugin's timeout should give up first.
  if (body.model === `${judge}-slow`) return { who: 'judge-slow', text: 'Keep going; try a wider tile.', delayMs: 3000 }
  if (req.headers['x-deepseek-harness-compact'] === '1') return { who: 'compact', text: '## Summary\nThe kernel was benchmarked several times.' }
  if (!Array.isArray(body.tools) || body.tools.length === 0) return { who: 'title', text: 'Kernel loop run' }
  return { who: 'agent', ...agentReply(body) }
}

serveModel({
  reply: answer,
  logLine: (body, { who, step, call }) => ({
    who, model: body.model, step: step ?? null, call: call ?? null,
    reasoning: body.reasoning_effort ?? body.thinking ?? null,
    system: who === 'judge' ? textOf((body.messages ?? []).find(m => m.role === 'system')).slice(0, 4000) : undefined,
    prompt: who === 'judge' ? textOf((body.messages ?? []).filter(m => m.role === 'user').at(-1)).slice(0, 20000) : undefined,
  }),
})
