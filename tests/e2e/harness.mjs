// What the scripts that drive a real `dsh web` on loopback share (tests/e2e, tests/browser, tests/cluster,
// demo/record.mjs, bench/http, bench/push): a free port, polling with a deadline, HTTP and the web UI's RPC
// gateway, processes in their own groups, one scripted run's scratch folder, log, checks and clean-up,
// a scratch web profile with this plugin, `dsh web` itself, the scripted model, a session's log, and
// appends through bench/http/feeder.
import { execFile, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/** This checkout. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const run = promisify(execFile)

export const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))

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

/** One request to 127.0.0.1:port, 15 s at most unless timeoutMs says; the body is read as text. */
export async function http (port, path, { method = 'GET', headers = {}, body, timeoutMs = 15_000 } = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body, signal: AbortSignal.timeout(timeoutMs) })
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

/** The pinned host of scripts/setup-host.sh named by KOPT_HOST_DIR (required): its folder and dsh launcher. */
export function pinnedHost (hint = 'run tests/e2e/run.sh') {
  const dir = process.env.KOPT_HOST_DIR
  if (!dir) throw new Error(`KOPT_HOST_DIR is required (${hint})`)
  return { dir, dsh: join(dir, 'bin/dsh') }
}

/**
 * One scripted run: a scratch folder (under `under`) with its processes, a log line stamped with the
 * time since the start, check(what, fn) that logs ok/FAIL, a watchdog, and a clean-up at exit or on
 * SIGINT/SIGTERM that kills every process it started and removes the folder, unless the run failed or
 * KOPT_E2E_KEEP=1 (then it says where the folder is). main(fn) runs the script's body: on an error it
 * prints the error and the last lines of every *.log in the folder and exits 1.
 */
export function scriptedRun (name, { watchdogSec, under = tmpdir(), keepVar = 'KOPT_E2E_KEEP', beforeCleanup } = {}) {
  const t0 = Date.now()
  const work = mkdtempSync(join(under, `kopt-${name}-`))
  const procs = detachedProcesses(work)
  const log = (msg) => console.log(`[${name} +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`)
  let failed = true
  let checks = 0
  let cleaned = false
  function cleanup () {
    if (cleaned) return
    cleaned = true
    beforeCleanup?.()
    procs.killAll()
    if (!failed && process.env[keepVar] !== '1') rmSync(work, { recursive: true, force: true })
    else console.log(`[${name}] scratch kept in ${work}`)
  }
  const watchdog = setTimeout(() => {
    console.error(`[${name}] watchdog: ${watchdogSec} s elapsed, giving up`)
    cleanup()
    process.exit(2)
  }, watchdogSec * 1000)
  process.on('exit', cleanup)
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { cleanup(); process.exit(130) })
  function check (what, fn) {
    try {
      fn()
      checks += 1
      log(`ok  ${what}`)
    } catch (error) {
      log(`FAIL ${what}`)
      throw error
    }
  }
  async function main (body) {
    try {
      await body()
      failed = false
    } catch (error) {
      console.error(`[${name}] ${error?.stack ?? error}`)
      for (const f of readdirSync(work).filter(n => n.endsWith('.log'))) {
        const text = readFileSync(join(work, f), 'utf8')
        console.error(`--- ${f} (last 40 lines)\n${text.split('\n').slice(-40).join('\n')}`)
      }
    } finally {
      clearTimeout(watchdog)
      cleanup()
    }
    // Sockets or timers a failed body left open must not keep the process alive.
    process.exit(failed ? 1 : 0)
  }
  return { t0, work, procs, log, check, main, checks: () => checks }
}

/**
 * The environment of a scratch `dsh web`: its own DSH_HOME, no telemetry, and with llmPort the scripted
 * model on 127.0.0.1 as its provider (tools allowed without asking). KOPT_ADDON passes on from ours.
 */
export function hostEnv (home, { llmPort, key = 'kopt-test', ...extra } = {}) {
  return {
    DSH_HOME: home, DEEPSEEK_API_KEY: key, DSH_TELEMETRY_DISABLED: '1', NO_COLOR: '1',
    ...(llmPort ? { DEEPSEEK_BASE_URL: `http://127.0.0.1:${llmPort}/v1`, DSH_PERMISSION_MODE: 'danger-full-access' } : {}),
    ...extra,
  }
}

/**
 * A scratch web profile: the host writes its defaults, cordis.patch.yml gets the hmr row this host needs
 * to boot (docs/install.md) and then `rows` (YAML lines, e.g. our row's config), and each plugin folder is
 * added with `dsh plugin --profile web add file:<folder>`. Returns dsh(args, timeoutMs) in that
 * environment and the outputs of the adds.
 */
export async function webProfile (dshBin, env, { rows = [], plugins = [ROOT] } = {}) {
  const dsh = (args, timeout = 300_000) => run(dshBin, args, { env: { ...process.env, ...env }, timeout, maxBuffer: 32 << 20 })
  await dsh(['--profile', 'web', '--dump-config'], 120_000)
  writeFileSync(join(env.DSH_HOME, 'profiles/web/cordis.patch.yml'), ['- id: hmr', '  disabled: false', '  config:', '    root: []', ...rows, ''].join('\n'))
  const added = []
  for (const dir of plugins) added.push(await dsh(['plugin', '--profile', 'web', 'add', `file:${dir}`]))
  return { dsh, added }
}

/** The benchmark-only plugin that appends events through the host's own Session.append. */
export const FEEDER = join(ROOT, 'bench/http/feeder')

/**
 * `dsh web` on a free loopback port in a process group of its own; resolves once the API gateway and
 * our route answer (plugin: false, the API alone) and, with feeder, the feeder's ping; says so to log.
 */
export async function startWeb (procs, dshBin, env, logFile, { plugin = true, feeder = false, timeoutMs = 180_000, log } = {}) {
  const port = await freePort()
  const web = procs.startDetached(dshBin, ['web', '--no-open', '--port', String(port)], env, logFile)
  await waitFor(`dsh web on :${port} (${logFile})`, async () =>
    (plugin ? await pluginRoutesReady(port) : await rpc(port, 'host.describe', {})) &&
    (!feeder || (await http(port, '/plugins/kopt-bench-feeder/ping')).status === 200), timeoutMs, 500)
  log?.(`dsh web (${logFile}) on 127.0.0.1:${port}`)
  return { ...web, port }
}

/** A scripted model (tests/e2e/fake-llm.mjs or loop-fake-llm.mjs with its args) on a free port: its process and port. */
export async function startScriptedModel (procs, work, script, args, node = process.execPath) {
  const ready = join(work, 'fake-ready.json')
  const proc = procs.startDetached(node, [script, ...args, '--ready', ready], {}, 'fake-llm.log')
  const port = await waitFor('the scripted model', () => existsSync(ready) && JSON.parse(readFileSync(ready, 'utf8')).port, 15_000)
  return { ...proc, port }
}

/** The file of a session's log in a DSH_HOME (zstd as the host writes it, or plain), undefined while it has none. */
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

/** The text of a session's log ('' while it has none). */
export async function sessionLogText (home, sid) {
  const p = sessionLogFile(home, sid)
  if (!p) return ''
  if (p.endsWith('.zstd')) return (await run('zstd', ['-qdc', p], { maxBuffer: 64 << 20, timeout: 20_000 })).stdout
  return readFileSync(p, 'utf8')
}

/**
 * Appends events ({type, data}) to a live session through bench/http/feeder, `batch` a request; throws
 * on an HTTP error. Resolves how many the host refused and the first refusal.
 */
export async function feederAppend (port, sessionId, events, batch = 5000) {
  let failed = 0
  let firstError
  for (let i = 0; i < events.length; i += batch) {
    const r = await http(port, '/plugins/kopt-bench-feeder/append', {
      method: 'POST', headers: { 'content-type': 'application/json' }, timeoutMs: 600_000,
      body: JSON.stringify({ sessionId, events: events.slice(i, i + batch).map(e => ({ type: e.type, data: e.data })) }),
    })
    if (r.status !== 200) throw new Error(`append: HTTP ${r.status} ${r.text.slice(0, 300)}`)
    const j = r.json()
    if (j.failed > 0) { failed += j.failed; firstError ??= `${j.firstError} ${JSON.stringify(j.failures)}` }
  }
  return { failed, firstError }
}
