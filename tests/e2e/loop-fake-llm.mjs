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
import { createServer } from 'node:http'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'

const argv = process.argv.slice(2)
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback
}
const judge = arg('judge', 'judge')
const judgeReplies = JSON.parse(readFileSync(arg('judge-script'), 'utf8'))
const logPath = arg('log')
let judgeCalls = 0
let served = 0

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

function frames(reply, model) {
  const id = `chatcmpl-loop-${++served}`
  const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model }
  const out = []
  const chunk = (delta, finish = null) => out.push({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
  chunk({ role: 'assistant' })
  if (reply.text) chunk({ content: reply.text })
  const calls = reply.tool_calls ?? []
  calls.forEach((call, index) => {
    chunk({ tool_calls: [{ index, id: `call_loop_${served}_${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] })
  })
  chunk({}, calls.length > 0 ? 'tool_calls' : 'stop')
  out.push({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } })
  return out
}

const server = createServer((req, res) => {
  const parts = []
  req.on('data', c => parts.push(c))
  req.on('end', async () => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(path)) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end('{"error":{"message":"not found"}}')
      return
    }
    let body
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'))
    } catch {
      res.writeHead(400)
      res.end()
      return
    }
    let reply
    let who
    if (body.model === judge) {
      who = 'judge'
      reply = { ...judgeReplies[Math.min(judgeCalls, judgeReplies.length - 1)], call: judgeCalls++ }
    } else if (body.model === `${judge}-slow`) {
      who = 'judge-slow'
      reply = { text: 'Keep going; try a wider tile.', delayMs: 3000 }
    } else if (req.headers['x-deepseek-harness-compact'] === '1') {
      who = 'compact'
      reply = { text: '## Summary\nThe kernel was benchmarked several times.' }
    } else if (!Array.isArray(body.tools) || body.tools.length === 0) {
      who = 'title'
      reply = { text: 'Kernel loop run' }
    } else {
      who = 'agent'
      reply = agentReply(body)
    }
    if (logPath) {
      appendFileSync(logPath, JSON.stringify({
        at: Date.now(), who, model: body.model, step: reply.step ?? null, call: reply.call ?? null,
        reasoning: body.reasoning_effort ?? body.thinking ?? null,
        system: who === 'judge' ? textOf((body.messages ?? []).find(m => m.role === 'system')).slice(0, 4000) : undefined,
        prompt: who === 'judge' ? textOf((body.messages ?? []).filter(m => m.role === 'user').at(-1)).slice(0, 20000) : undefined,
      }) + '\n')
    }
    if (reply.delayMs) {
      // A slow reviewer: hold the answer back (the plugin's timeout should give up first).
      const closed = new Promise(resolve => req.socket.once('close', resolve))
      await Promise.race([new Promise(resolve => setTimeout(resolve, reply.delayMs)), closed])
      if (req.socket.destroyed) return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    for (const f of frames(reply, body.model ?? 'fake')) res.write(`data: ${JSON.stringify(f)}\n\n`)
    res.end('data: [DONE]\n\n')
  })
})
server.listen(Number(arg('port', '0')), '127.0.0.1', () => {
  const ready = arg('ready')
  if (ready) writeFileSync(ready, JSON.stringify({ port: server.address().port }))
})
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0))
