// Seeds the recorded demo session (demo/kernel-opt-demo/) into a DSH home, so `dsh web` lists it,
// and beside it the second recorded session (demo/kernel-opt-demo-b/, when present) to compare it with:
//   node demo/seed.mjs <DSH_HOME>        prints the demo session's id
// The session's working folder becomes this checkout's demo/workspace/ (the header's `cwd` is
// rewritten and the log is filed under that project's folder, as dsh-session-persistence-jsonl
// names it). The zstd framing is kept: frame 1 = the header line only (the host checks that),
// the other frames are copied byte for byte, and one frame is appended (the title, below). Idempotent: an existing copy (which you may have
// continued in the UI) is kept; KOPT_DEMO_RESEED=1 replaces it.
// Each copy is told apart in the sidebar (README "两条命令" / "The two commands", step 3):
//  - its title: meta.json's `title`, appended to the copy as one more frame holding the event the
//    host's own rename writes (`session/title`, source user), and written beside it into the host's
//    projection cache (storages/session_projcache.json, the pinned host's layout), because the sidebar
//    shows a session it has never opened under its folder's name unless that cache holds its title;
//  - its place: the header's `createdAt` becomes the time of seeding, the demo 1 s after its
//    comparison partner, so the demo is listed above it (the host lists newest first) whatever the
//    recordings' own dates.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { zstdCompressSync, zstdDecompressSync, constants } from 'node:zlib'

const here = dirname(fileURLToPath(import.meta.url))
const home = process.argv[2]
if (!home) { console.error('usage: node demo/seed.mjs <DSH_HOME>'); process.exit(2) }
const cwd = join(here, 'workspace')

// Length of the zstd frame at the start of buf (RFC 8878 §3.1.1).
function frameLength(buf) {
  const magic = buf.readUInt32LE(0)
  if ((magic & 0xfffffff0) === 0x184d2a50) return 8 + buf.readUInt32LE(4) // skippable frame
  if (magic !== 0xfd2fb528) throw new Error('not a zstd frame')
  const fhd = buf[4]
  const single = (fhd >> 5) & 1, checksum = (fhd >> 2) & 1
  let pos = 5 + (single ? 0 : 1) + [0, 1, 2, 4][fhd & 3] + [single ? 1 : 0, 2, 4, 8][fhd >> 6]
  for (;;) {
    const h = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
    const type = (h >> 1) & 3, size = h >>> 3
    pos += 3 + (type === 1 ? 1 : size)
    if (h & 1) break
  }
  return pos + (checksum ? 4 : 0)
}

// The host's project folder name for a cwd (projectKey in dsh-session-persistence-jsonl).
function projectKey(p) {
  let readable = '', run = false
  for (const ch of p) {
    if (ch === '/' || ch === '\\' || ch === ':') { if (!run) readable += '-'; run = true }
    else if (ch !== '~' && /^[A-Za-z0-9._-]$/.test(ch)) { readable += ch; run = false }
    else { for (const unit of Array.from(ch, c => c.charCodeAt(0))) readable += '~' + unit.toString(16).toUpperCase().padStart(4, '0'); run = false }
  }
  return `--${(readable.replace(/^-+/, '') || 'root').slice(0, 251)}--`
}

// The recorded demo sessions, in the order the sidebar lists them: the demo first.
const DEMOS = ['kernel-opt-demo', 'kernel-opt-demo-b']

// Files one recorded session under the demo's workspace, created at `createdAt` and titled as its
// meta.json says; returns what the projection cache needs, or { id, kept } for a copy that was kept.
function seed (name, createdAt) {
  const src = join(here, name)
  const meta = JSON.parse(readFileSync(join(src, 'meta.json'), 'utf8'))
  if (typeof meta.title !== 'string' || !meta.title.trim()) throw new Error(`${name}/meta.json: no title`)
  const dir = join(home, 'sessions', projectKey(cwd), meta.sessionId)
  const file = join(dir, 'session.jsonl.zstd')
  if (existsSync(file) && process.env.KOPT_DEMO_RESEED !== '1') return { id: meta.sessionId, kept: true }
  const log = readFileSync(join(src, 'session.jsonl.zstd'))
  const n = frameLength(log)
  const header = JSON.parse(zstdDecompressSync(log.subarray(0, n)).toString('utf8'))
  if (header.type !== 'session' || header.id !== meta.sessionId) throw new Error(`${name} log: unexpected header`)
  header.cwd = cwd
  header.createdAt = createdAt
  // The last event's seq: the log is one frame per flush, and zstdDecompressSync reads one frame.
  let last = ''
  for (let at = n; at < log.length;) {
    const len = frameLength(log.subarray(at))
    const text = zstdDecompressSync(log.subarray(at, at + len)).toString('utf8').trim()
    if (text) last = text.slice(text.lastIndexOf('\n') + 1)
    at += len
  }
  const seq = JSON.parse(last).seq + 1
  const title = { type: 'session/title', seq, time: createdAt, data: { title: meta.title, messageSeqs: [], source: { kind: 'user' } } }
  const frame = text => zstdCompressSync(Buffer.from(text), { params: { [constants.ZSTD_c_checksumFlag]: 1 } })
  const out = Buffer.concat([frame(JSON.stringify(header) + '\n'), log.subarray(n), frame(JSON.stringify(title) + '\n')])
  mkdirSync(dir, { recursive: true })
  writeFileSync(file + '.tmp', out)
  renameSync(file + '.tmp', file)
  return { id: meta.sessionId, identity: { createdAt, cwd }, rows: { title: { ver: 1, seq, val: meta.title } } }
}

// The host's projection cache (dsh-session-projection-cache: domain session_projcache, version 3, on
// the json storage backend of the pinned host): a record per seeded copy holding its title row, so the
// sidebar lists it under its title before it is first opened. Left alone when the file is another
// host's (another version): the titles then show once each session has been opened.
function cacheTitles (records) {
  if (!records.length) return
  const path = join(home, 'storages', 'session_projcache.json')
  let doc = { unit: { name: 'session_projcache', version: 3 }, global: null, tables: { sessions: {} } }
  if (existsSync(path)) {
    const old = JSON.parse(readFileSync(path, 'utf8'))
    if (old?.unit?.name !== 'session_projcache' || old.unit.version !== 3) {
      console.error(`[seed] ${path}: unit ${JSON.stringify(old?.unit)} is not the one this seed writes; the demo titles show once opened`)
      return
    }
    doc = old
    doc.tables ??= {}
    doc.tables.sessions ??= {}
  }
  for (const r of records) doc.tables.sessions[r.id] = { identity: r.identity, rows: r.rows }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  writeFileSync(path + '.tmp', JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 })
  chmodSync(path + '.tmp', 0o600)
  renameSync(path + '.tmp', path)
}

const now = Date.now()
const seeded = DEMOS.filter(name => existsSync(join(here, name, 'meta.json')))
  .map((name, i) => seed(name, now - 1000 * i))
cacheTitles(seeded.filter(s => !s.kept))
console.log(seeded[0].id)
