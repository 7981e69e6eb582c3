#!/usr/bin/env node
// A scripted stand-in for the model: an OpenAI-compatible chat-completions server (SSE) on
// 127.0.0.1 only, for the end-to-end test. No dependencies.
//
//   node fake-llm.mjs --script steps.json --ready ready.json [--port 0] [--log requests.jsonl]
//
// It writes {"port": N} to --ready once listening. Which reply a request gets depends on the request
// alone (no server state), so side calls never consume a step:
//   header x-deepseek-harness-compact: 1   -> a fixed summary (compaction)
//   no `tools` in the body                  -> a fixed short title (session title, side calls)
//   otherwise                               -> steps[k], k = assistant messages after the last user
//                                              message (0 = first step of the turn); the last step
//                                              repeats past the end.
// A step is {"text": "..."} or {"tool_calls": [{"name": "...", "arguments": {...}}], "text"?: "..."}.
// With {judge: {model, replies: [{text}]}} in the script, requests for that model (the supervisor)
// get the replies in order, the last one repeating: the one reply that depends on server state.
import { readFileSync } from 'node:fs'
import { option as arg, serveModel } from './model-server.mjs'

// The script: an array of steps, or {steps, scenarios: [{match, steps}]} where a scenario applies when
// a user message contains `match` (the latest such message decides).
const script = JSON.parse(readFileSync(arg('script'), 'utf8'))
const defaultSteps = Array.isArray(script) ? script : script.steps
const scenarios = Array.isArray(script) ? [] : (script.scenarios ?? [])
const judge = Array.isArray(script) ? null : (script.judge ?? null)
let judgeCalls = 0

function chooseReply(body, headers) {
  if (judge && body.model === judge.model) {
    const n = judgeCalls++
    return { ...judge.replies[Math.min(n, judge.replies.length - 1)], step: n, scenario: 'judge' }
  }
  if (headers['x-deepseek-harness-compact'] === '1') return { text: '## Summary\nEarlier work: a kernel benchmark was run several times.' }
  if (!Array.isArray(body.tools) || body.tools.length === 0) return { text: 'Kernel optimization run' }
  const messages = Array.isArray(body.messages) ? body.messages : []
  let lastUser = -1
  messages.forEach((m, i) => { if (m && m.role === 'user') lastUser = i })
  const k = messages.slice(lastUser + 1).filter(m => m && m.role === 'assistant').length
  let steps = defaultSteps
  let name = 'default'
  for (const m of messages) {
    if (!m || m.role !== 'user') continue
    const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')
    for (const sc of scenarios) if (text.includes(sc.match)) { steps = sc.steps; name = sc.match }
  }
  return { ...steps[Math.min(k, steps.length - 1)], step: k, scenario: name }
}

serveModel({
  reply: (body, req) => chooseReply(body, req.headers),
  logLine: (body, reply, req) => ({
    step: reply.step ?? null, scenario: reply.scenario ?? null, compact: req.headers['x-deepseek-harness-compact'] === '1',
    tools: (body.tools ?? []).map(t => t?.function?.name), lastRoles: (body.messages ?? []).slice(-4).map(m => m.role),
  }),
})
