#!/usr/bin/env node
// A stand-in for `kopt-bench --serve` in the plugin's tests (tests/lib/evaluate.test.mjs): it speaks the
// service's protocol (a {ready} line, then one {id, code, output} line per {id, cwd, argv} request) and
// prints what the real one prints about the files its build read — a KOPT_FILES_READ= line and
// native_metrics.files_read — as the real compiler's dependency files would list them: the solution
// files and every `#include "…"` they reach (relative to the including file, or absolute), the
// workspace being the folder it runs in. A file outside it is refused, as kopt-bench refuses it.
// It also prints `FAKE_READ: <path relative to the workspace> <sha256>` per file, so a test can see
// which bytes a run read. A file `fake-mode` in the folder it runs in changes what it reports:
// `no-list` (no KOPT_FILES_READ line), `bad-digest`, `extra` (one more file than was read), `many`
// (more files than the plugin binds), `change` (common/tile.h is edited once it was read).
import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { createInterface } from 'node:readline'

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex')

function evaluate(cwd, argv) {
  const arg = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined }
  const workspace = realpathSync(cwd)
  const mode = existsSync(join(cwd, 'fake-mode')) ? readFileSync(join(cwd, 'fake-mode'), 'utf8').trim() : ''
  const artifact = arg('--artifact') ?? ''
  const seen = new Map()
  const refused = []
  const visit = (path) => {
    const real = realpathSync(path)
    if (seen.has(real)) return
    const rel = relative(workspace, real)
    if (rel.startsWith('..') || isAbsolute(rel)) { refused.push(real); return }
    const text = readFileSync(real)
    seen.set(real, sha(text))
    for (const m of text.toString('utf8').matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) visit(isAbsolute(m[1]) ? m[1] : resolve(dirname(real), m[1]))
  }
  for (const s of (arg('--solution') ?? '').split(',').filter(Boolean)) visit(s)
  const ref = arg('--ref') ?? ''
  if (/\.(cpp|cu)$/.test(ref)) visit(ref)
  const lines = ['COMPILED: ' + (refused.length ? 'False' : 'True')]
  if (refused.length) {
    const error = `compile error: refused: the build read ${refused[0]}, outside the workspace ${workspace}`
    lines.push(`ERROR: ${error}`, `KERNEL_EVAL=${JSON.stringify({ artifact, compiled: false, correct: false, error, native_metrics: { backend: 'cpu' } })}`)
    return { code: 1, output: lines.join('\n') + '\n' }
  }
  let files = [...seen].map(([path, sha256]) => ({ path, sha256 })).sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  for (const f of files) lines.push(`FAKE_READ: ${relative(workspace, f.path)} ${f.sha256}`)
  if (mode === 'change') appendFileSync(join(workspace, 'common', 'tile.h'), '// edited while it was evaluated\n')
  if (mode === 'extra') files = [...files, { path: join(workspace, 'extra.h'), sha256: sha('extra') }]
  if (mode === 'many') files = Array.from({ length: 10001 }, (_, i) => ({ path: join(workspace, `h${String(i).padStart(5, '0')}.h`), sha256: sha(String(i)) }))
  const digest = sha(files.map(f => `${f.sha256}  ${f.path}\n`).join(''))
  if (mode !== 'no-list') lines.push(`KOPT_FILES_READ=${JSON.stringify({ files, workspace })}`)
  const payload = { artifact, compiled: true, correct: true, latency_ms: 1.25, native_metrics: { speedup: 2, files_read: { count: files.length, sha256: mode === 'bad-digest' ? sha('x') : digest, workspace } } }
  lines.push(`KERNEL_EVAL=${JSON.stringify(payload)}`)
  return { code: 0, output: lines.join('\n') + '\n' }
}

if (process.argv[2] !== '--serve') {
  process.stderr.write('fake kopt-bench: only --serve\n')
  process.exit(2)
}
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
createInterface({ input: process.stdin }).on('line', (line) => {
  let req
  try { req = JSON.parse(line) } catch { return }
  let r
  try { r = evaluate(req.cwd, req.argv) } catch (e) { r = { code: 2, output: `fake kopt-bench: ${e.message}\n` } }
  process.stdout.write(`${JSON.stringify({ id: req.id, ...r })}\n`)
})
