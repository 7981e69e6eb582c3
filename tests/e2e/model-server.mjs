// What the scripted models (fake-llm.mjs, loop-fake-llm.mjs) share: their --name options and one
// OpenAI-compatible chat-completions server on 127.0.0.1 (SSE, or one JSON answer for stream: false).
// The script decides only what to answer; this file does the HTTP: GET …/models, 404 for anything but
// POST …/chat/completions, 400 for a body that is not JSON, a reply held back delayMs (given up when the
// client goes away), the request log (--log, one JSON line each), and {"port": N} to --ready once listening.
import { createServer } from 'node:http'
import { appendFileSync, writeFileSync } from 'node:fs'

const argv = process.argv.slice(2)
/** The value after --name on the command line, else fallback. */
export function option (name, fallback) {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback
}

let served = 0
const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }

// A reply as stream chunks: role, text, each tool call with its arguments in two fragments (as real
// providers stream them), the finish reason, then the usage.
function frames (reply, model) {
  const base = { id: `chatcmpl-fake-${served}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model }
  const out = []
  const chunk = (delta, finish = null) => out.push({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
  chunk({ role: 'assistant' })
  if (reply.text) chunk({ content: reply.text })
  const calls = reply.tool_calls ?? []
  calls.forEach((call, index) => {
    const args = JSON.stringify(call.arguments ?? {})
    const cut = Math.floor(args.length / 2)
    chunk({ tool_calls: [{ index, id: `call_fake_${served}_${index}`, type: 'function', function: { name: call.name, arguments: args.slice(0, cut) } }] })
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(cut) } }] })
  })
  chunk({}, calls.length > 0 ? 'tool_calls' : 'stop')
  out.push({ ...base, choices: [], usage })
  return out
}

function whole (reply, model) {
  const calls = (reply.tool_calls ?? []).map((c, i) => ({ id: `call_fake_${served}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }))
  const message = { role: 'assistant', content: reply.text ?? null, ...(calls.length ? { tool_calls: calls } : {}) }
  return { id: `chatcmpl-fake-${served}`, object: 'chat.completion', model, choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage }
}

/**
 * Serves the scripted model: reply(body, req) gives {text?, tool_calls?, delayMs?}; logLine(body, reply,
 * req), when given, the object logged for the request (with --log).
 */
export function serveModel ({ reply, logLine, models = ['deepseek-v4-flash'] }) {
  const logPath = option('log')
  const server = createServer((req, res) => {
    const parts = []
    req.on('data', c => parts.push(c))
    req.on('end', async () => {
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && /\/models$/.test(path)) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: models.map(id => ({ id, object: 'model' })) }))
        return
      }
      if (req.method !== 'POST' || !/\/chat\/completions$/.test(path)) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"not found"}}')
        return
      }
      let body
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'))
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"bad json"}}')
        return
      }
      served += 1
      const r = reply(body, req)
      if (logPath && logLine) appendFileSync(logPath, JSON.stringify({ at: Date.now(), ...logLine(body, r, req) }) + '\n')
      if (r.delayMs) {
        // A slow model: hold the answer back (the caller's timeout should give up first).
        const closed = new Promise(resolve => req.socket.once('close', resolve))
        await Promise.race([new Promise(resolve => setTimeout(resolve, r.delayMs)), closed])
        if (req.socket.destroyed) return
      }
      const model = body.model ?? 'fake'
      if (body.stream === false) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(whole(r, model)))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      for (const f of frames(r, model)) res.write(`data: ${JSON.stringify(f)}\n\n`)
      res.end('data: [DONE]\n\n')
    })
  })
  server.listen(Number(option('port', '0')), '127.0.0.1', () => {
    const { port } = server.address()
    const ready = option('ready')
    if (ready) writeFileSync(ready, JSON.stringify({ port }))
    console.log(`scripted model listening on 127.0.0.1:${port}`)
  })
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0))
  return server
}
