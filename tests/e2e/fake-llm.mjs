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
import { createServer } from 'node:http'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'

const argv = process.argv.slice(2)
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback
}
// The script: an array of steps, or {steps, scenarios: [{match, steps}]} where a scenario applies when
// a user message contains `match` (the latest such message decides).
const script = JSON.parse(readFileSync(arg('script'), 'utf8'))
const defaultSteps = Array.isArray(script) ? script : script.steps
const scenarios = Array.isArray(script) ? [] : (script.scenarios ?? [])
const judge = Array.isArray(script) ? null : (script.judge ?? null)
let judgeCalls = 0
const logPath = arg('log')
const readyPath = arg('ready')
let served = 0

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

function frames(reply, model) {
  const id = `chatcmpl-fake-${++served}`
  const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model }
  const out = []
  const chunk = (delta, finish = null) => out.push({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
  chunk({ role: 'assistant' })
  if (reply.text) chunk({ content: reply.text })
  const calls = reply.tool_calls ?? []
  calls.forEach((call, index) => {
    const args = JSON.stringify(call.arguments ?? {})
    const callId = `call_fake_${served}_${index}`
    // arguments in two fragments, as real providers stream them
    const cut = Math.floor(args.length / 2)
    chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: args.slice(0, cut) } }] })
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(cut) } }] })
  })
  chunk({}, calls.length > 0 ? 'tool_calls' : 'stop')
  out.push({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } })
  return out
}

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', c => chunks.push(c))
  req.on('end', () => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && /\/models$/.test(path)) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'deepseek-v4-flash', object: 'model' }] }))
      return
    }
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(path)) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end('{"error":{"message":"not found"}}')
      return
    }
    let body
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end('{"error":{"message":"bad json"}}')
      return
    }
    const reply = chooseReply(body, req.headers)
    if (logPath) {
      appendFileSync(logPath, JSON.stringify({
        at: Date.now(), step: reply.step ?? null, scenario: reply.scenario ?? null, compact: req.headers['x-deepseek-harness-compact'] === '1',
        tools: (body.tools ?? []).map(t => t?.function?.name), lastRoles: (body.messages ?? []).slice(-4).map(m => m.role),
      }) + '\n')
    }
    const list = frames(reply, body.model ?? 'fake')
    if (body.stream === false) {
      const calls = (reply.tool_calls ?? []).map((c, i) => ({ id: `call_fake_${served}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }))
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: reply.text ?? null, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } }))
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    for (const f of list) res.write(`data: ${JSON.stringify(f)}\n\n`)
    res.end('data: [DONE]\n\n')
  })
})
server.listen(Number(arg('port', '0')), '127.0.0.1', () => {
  const { port } = server.address()
  if (readyPath) writeFileSync(readyPath, JSON.stringify({ port }))
  console.log(`fake-llm listening on 127.0.0.1:${port}`)
})
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)))
