// kernel_evaluate (DV-13, docs/eval-contract.md): the plugin runs its own judge, so the most trusted number
// of a run never passes through the agent's hands. This file moves bytes only; the core decides which
// arguments are acceptable and what the result says (kopt/evaluate.hpp), and what a point is worth
// (the projection: trust "plugin").
//   · EvaluatorService — kopt-bench --serve, started on the first evaluation and ended after an idle
//     period; it dies with the host (parent-death signal) and is always reaped. Its judges are forked from
//     a warm image (evaluator/src/judge_image.hpp).
//   · EvaluationQueue — one evaluation at a time on this machine, across sessions; the tab reads each
//     session's place in it (control.evaluation).
//   · SourceStore — the bytes each evaluation measured, content-addressed and bounded, in the plugin's
//     own folder: kernel_finalize re-measures exactly those. What a build read is what kopt-bench's
//     compilers listed (filesReadOf: its KOPT_FILES_READ= line), not a guess by folder.
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { constants as fsc, createReadStream } from 'node:fs'
import { access, copyFile, mkdir, readdir, readFile, realpath, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { basename, delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path'
import { createInterface } from 'node:readline'

/** The plugin's own folder: evaluate.storeDir, else <DSH_HOME or ~/.dsh>/kernel-opt. */
export function pluginHome(config) {
  if (config.evaluate?.storeDir) return config.evaluate.storeDir
  return join(process.env.DSH_HOME || join(homedir(), '.dsh'), 'kernel-opt')
}

const BUILD_HINT = '在插件的源码目录里运行 `bash scripts/install-plugin.sh`（它会提议构建 kopt-bench），或 '
  + '`cmake -S evaluator -B build-evaluator && cmake --build build-evaluator -j2` 后在插件配置里设 evaluate.koptBench / '
  + 'build it: run `bash scripts/install-plugin.sh` in the plugin\'s checkout (it offers to build kopt-bench), or '
  + '`cmake -S evaluator -B build-evaluator && cmake --build build-evaluator -j2` and set evaluate.koptBench in the plugin\'s config'

/**
 * Where kopt-bench is: evaluate.koptBench, else <plugin home>/bin/kopt-bench (scripts/install-plugin.sh
 * links it there), else kopt-bench on the host's PATH. {path} or {error} (saying how to build it).
 */
export async function findKoptBench(config) {
  const tried = []
  const candidates = []
  if (config.evaluate?.koptBench) candidates.push(config.evaluate.koptBench)
  candidates.push(join(pluginHome(config), 'bin', 'kopt-bench'))
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.push(join(dir, 'kopt-bench'))
  for (const p of candidates) {
    try {
      await access(p, fsc.X_OK)
      return { path: p }
    } catch { tried.push(p) }
  }
  return { error: `kopt-bench 未安装 / kopt-bench is not installed (looked for ${tried.slice(0, 3).join(', ')}${tried.length > 3 ? ', and on PATH' : ''}): ${BUILD_HINT}` }
}

// The environment kopt-bench gets: what a build, the sandbox and CUDA need; never the host's keys.
const ENV_NAMES = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'TZ', 'TMPDIR', 'LD_LIBRARY_PATH', 'XDG_CACHE_HOME',
  'OMP_NUM_THREADS', 'MKL_NUM_THREADS'])
const ENV_PREFIXES = ['LC_', 'CUDA_', 'NVIDIA_', 'KOPT_BENCH_', 'SLURM_']
export function evaluatorEnv(env = process.env) {
  const out = {}
  for (const [k, v] of Object.entries(env)) {
    if (typeof v === 'string' && (ENV_NAMES.has(k) || ENV_PREFIXES.some(p => k.startsWith(p)))) out[k] = v
  }
  return out
}

/** SHA-256 of a file's bytes, read in chunks (the host's thread is never held for a whole file). */
export function sha256File(path) {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256')
    const s = createReadStream(path)
    s.on('data', (c) => h.update(c))
    s.on('error', reject)
    s.on('end', () => resolve(h.digest('hex')))
  })
}

/**
 * The most files one evaluation's builds may have read for its point to be bound to them: past it the
 * evaluation is refused (a point bound to part of what it measured would say less than it seems to).
 */
export const MAX_READ_FILES = 10000

/**
 * The files kopt-bench's builds read (docs/evaluator.md, "bytes binding"): its last KERNEL_EVAL payload
 * carries native_metrics.files_read {workspace, count, sha256}, and the KOPT_FILES_READ= line before it
 * the list [{path, sha256}] that digest covers (SHA-256 over "<sha256>  <path>\n" per file, as sha256sum
 * prints them). → {payload, files?, workspace?} (no files: nothing was built, e.g. a compile error) or
 * {error}. `output` is kopt-bench's own stdout: the candidate's output never reaches it.
 */
export function filesReadOf(output) {
  const lines = String(output ?? '').split('\n')
  let at = -1
  let payload
  for (let i = lines.length - 1; i >= 0 && at < 0; i--) {
    const t = lines[i].trimStart()
    if (!t.startsWith('KERNEL_EVAL=')) continue
    at = i
    try { payload = JSON.parse(t.slice('KERNEL_EVAL='.length)) } catch { payload = undefined }
  }
  if (payload === null || typeof payload !== 'object') return { payload: undefined }
  const meta = payload.native_metrics?.files_read
  if (meta === undefined) {
    if (payload.compiled === true) return { payload, error: 'kopt-bench did not report the files its build read (native_metrics.files_read): this plugin binds a point to every one of them, so it needs a kopt-bench that reports them — rebuild it (scripts/install-plugin.sh)' }
    return { payload }
  }
  let listed
  for (let i = at - 1; i >= 0 && listed === undefined; i--) {
    const t = lines[i].trimStart()
    if (!t.startsWith('KOPT_FILES_READ=')) continue
    try { listed = JSON.parse(t.slice('KOPT_FILES_READ='.length)) } catch { listed = null }
  }
  const files = listed?.files
  const bad = (why) => ({ payload, error: `the list of files the build read is unusable (${why}): the point cannot be bound to what it measured` })
  if (!Array.isArray(files)) return bad('no KOPT_FILES_READ line before the result')
  if (!files.every(f => typeof f?.path === 'string' && isAbsolute(f.path) && /^[0-9a-f]{64}$/.test(f?.sha256 ?? ''))) return bad('a malformed entry')
  const digest = createHash('sha256').update(files.map(f => `${f.sha256}  ${f.path}\n`).join('')).digest('hex')
  if (files.length !== meta.count || digest !== meta.sha256) return bad('it does not match native_metrics.files_read')
  return { payload, files, workspace: typeof meta.workspace === 'string' ? meta.workspace : undefined }
}

/** kopt-bench's output without its KOPT_FILES_READ= line: bound as sources.read, not repeated in the report. */
export function withoutFilesRead(output) {
  return String(output ?? '').split('\n').filter(l => !l.trimStart().startsWith('KOPT_FILES_READ=')).join('\n')
}

/** `path` relative to `root` when it lies inside it, else undefined (both real, absolute paths). */
function inside(root, path) {
  const rel = relative(root, path)
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel) ? rel : undefined
}

/**
 * The plugin's store of measured bytes: sources/<sha256> (content-addressed; least recently used dropped
 * beyond maxBytes) and evals/<evaluation id>.json (what an evaluation read; at most maxEvals kept).
 */
export class SourceStore {
  constructor(dir, { maxBytes = 512 << 20, maxFileBytes = 64 << 20, maxEvals = 2000 } = {}) {
    this.dir = dir
    this.maxBytes = maxBytes
    this.maxFileBytes = maxFileBytes
    this.maxEvals = maxEvals
  }

  /** Keeps a copy of `path` under its hash (when not too large); returns whether the store holds it. */
  async keep(path, sha256) {
    const dest = join(this.dir, 'sources', sha256)
    try {
      const now = new Date()
      await utimes(dest, now, now) // used again: last to go
      return true
    } catch {}
    const st = await stat(path)
    if (st.size > this.maxFileBytes) return false
    await mkdir(join(this.dir, 'sources'), { recursive: true })
    const tmp = `${dest}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    await copyFile(path, tmp)
    // Kept only when the copy is the measured bytes (the file may have changed since it was hashed).
    if (await sha256File(tmp) !== sha256) {
      await rm(tmp, { force: true })
      return false
    }
    await rename(tmp, dest)
    await this.trim()
    return true
  }

  async trim() {
    const dir = join(this.dir, 'sources')
    let names
    try { names = await readdir(dir) } catch { return }
    const files = []
    let total = 0
    for (const n of names) {
      try {
        const st = await stat(join(dir, n))
        files.push({ n, size: st.size, t: st.mtimeMs })
        total += st.size
      } catch {}
    }
    files.sort((a, b) => a.t - b.t)
    for (const f of files) {
      if (total <= this.maxBytes) break
      await rm(join(dir, f.n), { force: true })
      total -= f.size
    }
  }

  /** The stored bytes of a hash, or undefined when they are gone or no longer match it. */
  async read(sha256) {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined
    try {
      const bytes = await readFile(join(this.dir, 'sources', sha256))
      return createHash('sha256').update(bytes).digest('hex') === sha256 ? bytes : undefined
    } catch { return undefined }
  }

  async saveEval(id, manifest) {
    const dir = join(this.dir, 'evals')
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, `${id}.json`), JSON.stringify(manifest))
    const names = (await readdir(dir)).filter(n => n.endsWith('.json'))
    if (names.length > this.maxEvals) {
      const dated = []
      for (const n of names) {
        try { dated.push({ n, t: (await stat(join(dir, n))).mtimeMs }) } catch {}
      }
      dated.sort((a, b) => a.t - b.t)
      for (const d of dated.slice(0, dated.length - this.maxEvals)) await rm(join(dir, d.n), { force: true })
    }
  }

  async loadEval(id) {
    if (typeof id !== 'string' || !/^ke-[0-9a-f]{12,32}$/.test(id)) return undefined
    try { return JSON.parse(await readFile(join(this.dir, 'evals', `${id}.json`), 'utf8')) } catch { return undefined }
  }
}

/**
 * kopt-bench --serve, owned by the plugin: started on demand, ended after idleMs without an evaluation,
 * with the host (its parent-death signal), and always reaped (Node waits on its child).
 */
export class EvaluatorService {
  constructor({ exe, idleMs, log = () => {} }) {
    this.exe = exe
    this.idleMs = idleMs
    this.log = log
    this.proc = undefined
    this.pending = new Map()
    this.nextId = 1
    this.idleTimer = undefined
    this.ready = undefined
  }

  get pid() { return this.proc?.pid }

  start() {
    if (this.proc !== undefined) return this.ready
    const proc = spawn(this.exe, ['--serve', String(process.pid)], { stdio: ['pipe', 'pipe', 'pipe'], env: evaluatorEnv() })
    this.proc = proc
    let stderr = ''
    proc.stderr.on('data', (c) => { stderr = (stderr + c.toString('utf8')).slice(-4000) })
    this.ready = new Promise((resolve) => {
      const lines = createInterface({ input: proc.stdout })
      lines.on('line', (line) => {
        let msg
        try { msg = JSON.parse(line) } catch { return }
        if (msg.ready) { resolve(msg); return }
        const p = this.pending.get(msg.id)
        if (p === undefined) return
        if (typeof msg.stage === 'string') p.onStage?.(msg.stage)
        else if ('code' in msg) {
          this.pending.delete(msg.id)
          p.resolve({ code: msg.code, output: typeof msg.output === 'string' ? msg.output : '', cancelled: msg.cancelled === true })
        }
      })
      proc.on('error', (error) => { resolve({ ready: false, why: error.message }) })
      proc.on('exit', () => resolve({ ready: false, why: 'it ended before it was ready' }))
    })
    proc.stdin.on('error', () => {})
    proc.on('exit', (code, signal) => {
      if (this.proc === proc) this.proc = undefined
      clearTimeout(this.idleTimer)
      const why = `kopt-bench --serve ended (${signal ? `signal ${signal}` : `exit ${code}`})${stderr ? `: ${stderr.trim().split('\n').slice(-2).join(' ')}` : ''}`
      for (const p of this.pending.values()) p.resolve({ failure: why })
      this.pending.clear()
    })
    return this.ready
  }

  /** One evaluation: {cwd, argv, onStage, signal} → {code, output, cancelled} or {failure}. */
  async run({ cwd, argv, onStage, signal }) {
    clearTimeout(this.idleTimer)
    const ready = await this.start()
    const proc = this.proc
    if (proc === undefined || ready?.ready !== true) {
      proc?.kill('SIGKILL')
      return { failure: `kopt-bench --serve could not start${ready?.why ? `: ${ready.why}` : ''}` }
    }
    const id = this.nextId++
    const done = new Promise((resolve) => this.pending.set(id, { resolve, onStage }))
    const onAbort = () => this.cancel(id)
    signal?.addEventListener?.('abort', onAbort, { once: true })
    if (signal?.aborted) onAbort()
    proc.stdin.write(`${JSON.stringify({ id, cwd, argv })}\n`)
    try {
      const r = await done
      // A stop that came before the service could answer for itself is a cancel all the same.
      return signal?.aborted ? { ...r, cancelled: true, failure: undefined } : r
    } finally {
      signal?.removeEventListener?.('abort', onAbort)
      this.armIdle()
    }
  }

  /** Cancels evaluation `id`: SIGTERM kills every process of it; a service that does not answer is killed. */
  cancel(id) {
    const proc = this.proc
    if (proc === undefined || !this.pending.has(id)) return
    proc.kill('SIGTERM')
    const hard = setTimeout(() => { if (this.pending.has(id)) proc.kill('SIGKILL') }, 10_000)
    hard.unref?.()
  }

  armIdle() {
    clearTimeout(this.idleTimer)
    if (this.pending.size > 0 || this.proc === undefined) return
    this.idleTimer = setTimeout(() => this.stop(), this.idleMs)
    this.idleTimer.unref?.()
  }

  /** Ends the service (end of its input; killed when it lingers). Resolves once it has exited. */
  stop() {
    clearTimeout(this.idleTimer)
    const proc = this.proc
    if (proc === undefined) return Promise.resolve()
    return new Promise((resolve) => {
      proc.once('exit', () => resolve())
      proc.stdin.end()
      const hard = setTimeout(() => proc.kill('SIGKILL'), 5000)
      hard.unref?.()
      proc.once('exit', () => clearTimeout(hard))
    })
  }
}

/**
 * One evaluation at a time on this machine, across sessions. run(sessionId, fn, signal) waits its turn;
 * stateFor(sessionId) is what the tab shows: {state: queued|running, stage?, since, position?}.
 */
export class EvaluationQueue {
  constructor(onChange = () => {}) {
    this.jobs = []
    this.onChange = onChange
  }

  run(sessionId, fn, signal) {
    return new Promise((resolve, reject) => {
      const job = { sessionId, state: 'queued', since: Date.now(), stage: undefined, fn, resolve, reject, signal }
      const onAbort = () => {
        if (job.state !== 'queued') return
        this.jobs = this.jobs.filter(j => j !== job)
        this.changed()
        resolve({ cancelled: true, queued: true })
      }
      job.onAbort = onAbort
      signal?.addEventListener?.('abort', onAbort, { once: true })
      this.jobs.push(job)
      this.changed()
      if (signal?.aborted) onAbort()
      else this.next()
    })
  }

  next() {
    const job = this.jobs[0]
    if (job === undefined || job.state !== 'queued') return
    job.state = 'running'
    job.since = Date.now()
    job.signal?.removeEventListener?.('abort', job.onAbort)
    this.changed()
    const stage = (s) => { job.stage = s; this.changed() }
    Promise.resolve().then(() => job.fn(stage)).then(job.resolve, job.reject).finally(() => {
      this.jobs = this.jobs.filter(j => j !== job)
      this.changed()
      this.next()
    })
  }

  stateFor(sessionId) {
    const i = this.jobs.findIndex(j => j.sessionId === sessionId)
    if (i < 0) return undefined
    const j = this.jobs[i]
    return { state: j.state, since: j.since, ...(j.stage ? { stage: j.stage } : {}), ...(j.state === 'queued' ? { position: i } : {}) }
  }

  sessions() { return [...new Set(this.jobs.map(j => j.sessionId))] }

  changed() {
    try { this.onChange() } catch {}
  }
}

/**
 * The evaluator of the profile half: {evaluate(sessionId, cwd, args, signal) → tool result text,
 * stateFor(sessionId), remeasure(…), dispose()}. deps: {kopt, config, onChange(sessionIds)}.
 */
export function createEvaluator({ kopt, config, onChange = () => {} }) {
  const home = pluginHome(config)
  const store = new SourceStore(join(home, 'store'), { maxBytes: config.evaluate.storeMiB * (1 << 20) })
  let touched = new Set()
  const queue = new EvaluationQueue(() => {
    const now = new Set(queue.sessions())
    const all = new Set([...touched, ...now])
    touched = now
    onChange([...all])
  })
  let service
  let serviceExe

  const result = (fields) => kopt.evaluateResult(JSON.stringify(fields))

  async function hashFiles(files) {
    const out = []
    for (const f of files) out.push({ ...f, sha256: await sha256File(f.real) })
    return out
  }

  function sourcesOf(hashed) {
    const pick = (f) => ({ path: f.given, sha256: f.sha256 })
    const inputs = hashed.find(f => f.role === 'inputs')  // none: a KernelBench problem .py declares its inputs
    return {
      solution: hashed.filter(f => f.role === 'solution').map(pick),
      reference: pick(hashed.find(f => f.role === 'reference')),
      ...(inputs !== undefined ? { inputs: pick(inputs) } : {}),
    }
  }

  /**
   * Every file kopt-bench's builds read (filesReadOf), each inside the workspace `root` (the session's
   * working directory: kopt-bench runs there and refuses a build that read a file outside it), checked
   * against its bytes now and kept in the store. → {read: [{path (relative to root), real, sha256, kept}]}
   * or {failure}; read is [] when nothing was built.
   */
  async function bindFilesRead(output, root) {
    const got = filesReadOf(output)
    if (got.error !== undefined) return { failure: got.error }
    if (got.files === undefined) return { read: [] }
    if (got.files.length > MAX_READ_FILES)
      return { failure: `the build read ${got.files.length} files, more than the ${MAX_READ_FILES} a point is bound to: refused (nothing is bound in part); keep what the kernel includes smaller` }
    const read = []
    const changed = []
    for (const f of got.files) {
      const rel = inside(root, f.path)
      if (rel === undefined) return { failure: `the build read ${f.path}, outside the session's working directory ${root}: it cannot be bound to the point` }
      const now = await sha256File(f.path).catch(() => undefined)
      if (now !== f.sha256) { changed.push(rel); continue }
      read.push({ path: rel, real: f.path, sha256: f.sha256, kept: await store.keep(f.path, f.sha256).catch(() => false) })
    }
    if (changed.length) return { failure: `the file(s) ${changed.join(', ')} changed while they were being evaluated: the figures do not count` }
    return { read }
  }

  async function runKoptBench(sessionId, { exe, cwd, argv, slurm }, signal) {
    if (slurm) return runSlurm(exe, cwd, argv, signal)
    if (service === undefined || serviceExe !== exe) {
      await service?.stop()
      service = new EvaluatorService({ exe, idleMs: config.evaluate.idleSec * 1000 })
      serviceExe = exe
    }
    return queue.run(sessionId, (stage) => service.run({ cwd, argv, signal, onStage: stage }), signal)
  }

  // Slurm: kopt-bench --slurm as its own process (it submits and streams back); a stop cancels the job
  // array (SIGTERM: kopt-bench scancels it), and it gets SIGTERM too when the host dies (setpriv).
  function runSlurm(exe, cwd, argv, signal) {
    return new Promise((resolve) => {
      const args = ['--pdeathsig', 'TERM', '--', exe, ...argv]
      const child = spawn('setpriv', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: evaluatorEnv() })
      let output = ''
      child.stdout.on('data', (c) => { output = (output + c.toString('utf8')).slice(-256 * 1024) })
      child.stderr.on('data', () => {})
      let cancelled = false
      const onAbort = () => { cancelled = true; child.kill('SIGTERM') }
      signal?.addEventListener?.('abort', onAbort, { once: true })
      child.on('error', (e) => resolve({ failure: `kopt-bench --slurm could not start: ${e.message}` }))
      child.on('exit', (code) => {
        signal?.removeEventListener?.('abort', onAbort)
        resolve({ code, output, cancelled })
      })
    })
  }

  async function evaluate(sessionId, cwd, args, signal) {
    const given = args?.solution
    const artifact = typeof args?.artifact_path === 'string' ? args.artifact_path
      : typeof given === 'string' ? given : Array.isArray(given) && typeof given[0] === 'string' ? given[0] : ''
    if (typeof cwd !== 'string' || cwd === '') return result({ artifact, failure: 'bad input: the session\'s working directory is unknown (nothing was run)' })
    const check = kopt.checkEvaluateArgs(JSON.stringify(args ?? {}), cwd)
    if (!check.ok) return result({ artifact, failure: `bad input: ${check.error} (nothing was run)` })
    const found = await findKoptBench(config)
    if (found.error) return result({ artifact: check.artifact, failure: `${found.error} (nothing was run)` })

    const hashed = await hashFiles(check.files)
    // The workspace: the session's working directory, where kopt-bench runs (its builds may read no file
    // outside it).
    const root = await realpath(cwd).catch(() => cwd)
    const evaluationId = `ke-${randomBytes(8).toString('hex')}`
    const sources = sourcesOf(hashed)
    // The measured bytes, kept before the run: what a finalize re-measures.
    const kept = []
    for (const f of hashed) kept.push(await store.keep(f.real, f.sha256).catch(() => false))
    const record = {
      cwd, workspace: root, argv: check.argv, artifact: check.artifact, slurm: check.slurm, createdAt: Date.now(),
      files: hashed.map((f, i) => ({ role: f.role, given: f.given, real: f.real, sha256: f.sha256, kept: kept[i] })),
    }
    await store.saveEval(evaluationId, record).catch(() => {})

    const run = await runKoptBench(sessionId, { exe: found.path, cwd, argv: check.argv, slurm: check.slurm }, signal)
    let failure = run.failure
    if (failure === undefined && !run.cancelled) {
      // The bytes must be the ones measured: a file that changed while kopt-bench read it voids the result.
      const after = await hashFiles(check.files).catch(() => [])
      const changed = hashed.filter((f, i) => after[i]?.sha256 !== f.sha256).map(f => f.given)
      if (changed.length) failure = `the file(s) ${changed.join(', ')} changed while they were being evaluated: the figures do not count`
    }
    if (failure === undefined && !run.cancelled) {
      // Every file the builds read, bound to the point (sources.read) and kept for a finalize.
      const bound = await bindFilesRead(run.output, root)
      if (bound.failure !== undefined) failure = bound.failure
      else {
        record.read = bound.read
        sources.read = bound.read.map(f => ({ path: f.path, sha256: f.sha256 }))
        await store.saveEval(evaluationId, record).catch(() => {})
      }
    }
    return result({
      artifact: check.artifact, output: withoutFilesRead(run.output ?? ''), code: run.code ?? null, sources, evaluationId,
      ...(run.cancelled ? { cancelled: true } : {}), ...(failure !== undefined ? { failure } : {}),
    })
  }

  /**
   * kernel_finalize of a plugin-measured point: the bytes it measured (its sources in the log, checked
   * against the store), run again through the same evaluator. → {output, lines: [...]} or {error}.
   */
  async function remeasure(sessionId, cwd, pick, signal) {
    const manifest = await store.loadEval(pick.evaluationId)
    if (manifest === undefined) return { error: 'the stored sources of this evaluation are gone (the plugin\'s store keeps the most recent ones)' }
    const logged = pick.sources
    const files = manifest.files
    // The log is the authority: the store must hold exactly the bytes the point names.
    const want = [...(logged?.solution ?? []).map(s => ({ role: 'solution', ...s })), { role: 'reference', ...(logged?.reference ?? {}) },
      ...(logged?.inputs !== undefined || files.some(f => f.role === 'inputs') ? [{ role: 'inputs', ...(logged?.inputs ?? {}) }] : [])]
    if (want.length !== files.length || want.some((w, i) => w.sha256 !== files[i].sha256 || w.path !== files[i].given))
      return { error: 'the stored record does not match the point in the session log' }
    // Every file the builds read (sources.read), recorded with the evaluation.
    const read = manifest.read
    if (!Array.isArray(read))
      return { error: 'this evaluation was recorded by an earlier version of the plugin, which did not record every file its build read: evaluate it again to re-measure it' }
    if (Array.isArray(logged?.read) && (logged.read.length !== read.length || logged.read.some((r, i) => r.path !== read[i].path || r.sha256 !== read[i].sha256)))
      return { error: 'the stored record does not match the point in the session log' }
    const root = manifest.workspace ?? manifest.cwd ?? cwd
    const found = await findKoptBench(config)
    if (found.error) return { error: found.error }
    const notes = []
    const dir = join(store.dir, 'replay', `${pick.evaluationId}-${randomBytes(4).toString('hex')}`)
    const argv = [...manifest.argv]
    // The measured bytes of a file: the store's copy, else the file itself while it still has them.
    const measured = async (sha256, real) => {
      const kept = await store.read(sha256)
      if (kept !== undefined) return kept
      try {
        const bytes = await readFile(real)
        return createHash('sha256').update(bytes).digest('hex') === sha256 ? bytes : undefined
      } catch { return undefined }
    }
    const realOf = (r) => r.real ?? join(root, r.path)
    const isRead = (f) => read.some(r => realOf(r) === f.real)
    try {
      // What changed on disk since the evaluation: each said, by the name the point gives it.
      const changed = new Set()
      const note = (name, now) => notes.push(`${name}: ${now === undefined ? '文件已不在 / the file is gone' : '磁盘上的文件在评测后改过 / the file on disk changed since it was measured'}; 复测用当时测量的字节 / re-measured from the bytes that were measured`)
      for (const f of files) {
        const now = await sha256File(f.real).catch(() => undefined)
        if (now !== f.sha256) { changed.add(f.real); note(f.given, now) }
      }
      for (const r of read) {
        if (files.some(f => f.real === realOf(r))) continue
        const now = await sha256File(realOf(r)).catch(() => undefined)
        if (now !== r.sha256) { changed.add(realOf(r)); note(r.path, now) }
      }
      let runCwd = manifest.cwd ?? cwd
      let mirror
      if (read.some(r => changed.has(realOf(r))) || files.some(f => f.role === 'solution' && changed.has(f.real))) {
        // Every file the builds read, as measured, laid out as it was in the workspace (a header in a
        // sibling folder or a subfolder is found where the sources include it), and run there: nothing
        // else is in that folder for a build to read.
        mirror = join(dir, 'workspace')
        const put = async (rel, sha256, real, name) => {
          if (isAbsolute(rel) || rel.split(sep).includes('..')) return `${name}: not a path inside the workspace`
          const bytes = await measured(sha256, real)
          if (bytes === undefined) return `the measured bytes of ${name} are no longer in the store`
          await mkdir(dirname(join(mirror, rel)), { recursive: true })
          await writeFile(join(mirror, rel), bytes)
        }
        for (const r of read) {
          const why = await put(r.path, r.sha256, realOf(r), r.path)
          if (why !== undefined) return { error: why }
        }
        for (const f of files) {
          if (f.role !== 'solution' && !isRead(f)) continue  // a TorchScript reference, the input spec: below
          const rel = inside(root, f.real)
          if (rel === undefined) return { error: `${f.given} is outside the evaluation's workspace ${root}` }
          if (!isRead(f)) {
            const why = await put(rel, f.sha256, f.real, f.given)
            if (why !== undefined) return { error: why }
          }
          replaceArg(argv, f, join(mirror, rel))
        }
        // The frozen baseline stays the session's (kopt-bench's default is in the folder it runs in).
        if (!argv.includes('--baseline')) argv.push('--baseline', join(manifest.cwd ?? cwd, '.bench-baseline.json'))
        runCwd = mirror
      }
      // A reference or input spec that changed and is not laid out above: its measured bytes, beside.
      for (const f of files) {
        if (!changed.has(f.real) || (mirror !== undefined && (f.role === 'solution' || isRead(f)))) continue
        const bytes = await store.read(f.sha256)
        if (bytes === undefined) return { error: `${f.given} changed on disk and its measured bytes are no longer in the store` }
        const sub = join(dir, f.role)
        await mkdir(sub, { recursive: true })
        const dest = join(sub, basename(f.real))
        await writeFile(dest, bytes)
        replaceArg(argv, f, dest)
      }
      const run = await runKoptBench(sessionId, { exe: found.path, cwd: runCwd, argv, slurm: manifest.slurm === true }, signal)
      if (run.cancelled) return { error: 'cancelled by the user' }
      if (run.failure !== undefined) return { error: run.failure }
      // The re-measurement counts only when its builds read exactly the measured bytes (a build that
      // found another file — an absolute #include, a new file where __has_include looks — did not).
      const got = filesReadOf(run.output)
      if (got.error !== undefined) return { error: got.error }
      if (got.files !== undefined) {
        const base = mirror ?? root
        const now = new Map(got.files.map(f => [inside(base, f.path) ?? f.path, f.sha256]))
        const was = new Map(read.map(r => [r.path, r.sha256]))
        const diff = []
        for (const [p, h] of was) if (now.get(p) !== h) diff.push(now.has(p) ? `${p}: other bytes` : `${p}: not read`)
        for (const p of now.keys()) if (!was.has(p)) diff.push(`${p}: read, but not by the measured build`)
        if (diff.length)
          return { error: `the re-measurement's build did not read the measured bytes (${diff.slice(0, 8).join('; ')}${diff.length > 8 ? `; and ${diff.length - 8} more` : ''}): it does not re-measure this point` }
      }
      return { output: withoutFilesRead(run.output), code: run.code, notes }
    } finally {
      await rm(dir, { recursive: true, force: true }).catch(() => {})
    }
  }

  // In kopt-bench's arguments, the file's real path (alone, or inside --solution's comma list) → dest.
  function replaceArg(argv, f, dest) {
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === f.real) argv[i] = dest
      else if (i > 0 && argv[i - 1] === '--solution') argv[i] = argv[i].split(',').map(p => p === f.real ? dest : p).join(',')
    }
  }

  return {
    evaluate,
    remeasure,
    stateFor: (sessionId) => queue.stateFor(sessionId),
    servicePid: () => service?.pid,
    dispose: () => service?.stop(),
  }
}
