// Helpers shared by the scripts that drive a real `dsh web` on loopback (tests/e2e, tests/browser,
// demo/record.mjs): a free port, polling with a deadline, HTTP and the web UI's RPC gateway.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

export const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))

/** A session's log file in a DSH home ($DSH_HOME/sessions/<cwd>/<id>/session.jsonl[.zstd]), or undefined. */
export function sessionLogFile (home, sid) {
  const base = join(home, 'sessions')
  if (!existsSync(base)) return undefined
  for (const d of readdirSync(base)) {
    for (const name of ['session.jsonl.zstd', 'session.jsonl']) {
      const p = join(base, d, sid, name)
      if (existsSync(p)) return p
    }
  }
  return undefined
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort () {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

/** Polls fn until it returns something truthy (errors count as "not yet"); throws after timeoutMs. */
export async function waitFor (what, fn, timeoutMs, everyMs = 300) {
  const end = Date.now() + timeoutMs
  let last
  while (Date.now() < end) {
    try {
      const v = await fn()
      if (v) return v
    } catch (error) { last = error }
    await sleep(everyMs)
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`)
}

/** One request to 127.0.0.1:port, 15 s at most; the body is read as text. */
export async function http (port, path, { method = 'GET', headers = {}, body } = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body, signal: AbortSignal.timeout(15_000) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) }
}

/** A call through the web UI's gateway (/api/<method>); throws unless the host answers ok. */
export async function rpc (port, method, payload) {
  const r = await http(port, `/api/${method}`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId: randomUUID(), method, payload }),
  })
  const reply = r.json()
  if (!reply.result?.ok) throw new Error(`${method}: ${r.text.slice(0, 500)}`)
  return reply.result.value
}

/**
 * Whether dsh web on port is ready for the plugin: GET / answers before every route is registered
 * (the host's startup fallback says 404 until the owner registers), so the API gateway and our own
 * route (400 without a session id) must both answer.
 */
export async function pluginRoutesReady (port) {
  await rpc(port, 'host.describe', {})
  return (await http(port, '/plugins/kernel-opt/series')).status === 400
}

/**
 * Programs started in their own process group with output to a log file under workDir, so a
 * whole tree (dsh web and what it spawns) can be stopped, and everything killed at exit.
 */
export function detachedProcesses (workDir) {
  const children = new Set()
  function startDetached (cmd, args, env, logFile) {
    const out = join(workDir, logFile)
    writeFileSync(out, '')
    const child = spawn('bash', ['-c', `exec "$0" "$@" >>"${out}" 2>&1`, cmd, ...args], {
      env: { ...process.env, ...env }, detached: true, stdio: 'ignore',
    })
    children.add(child)
    child.on('exit', () => children.delete(child))
    return { child, out }
  }
  async function stop (proc) {
    if (!children.has(proc.child)) return
    const exited = new Promise(resolve => proc.child.once('exit', resolve))
    try { process.kill(-proc.child.pid, 'SIGTERM') } catch {}
    await Promise.race([exited, sleep(8000)])
    try { process.kill(-proc.child.pid, 'SIGKILL') } catch {}
    children.delete(proc.child)
  }
  function killAll () {
    for (const child of children) {
      try { process.kill(-child.pid, 'SIGKILL') } catch {}
    }
    children.clear()
  }
  return { startDetached, stop, killAll }
}
