// Seeds the recorded demo session (demo/kernel-opt-demo/) into a DSH home, so `dsh web` lists it,
// and beside it the second recorded session (demo/kernel-opt-demo-b/, when present) to compare it with:
//   node demo/seed.mjs <DSH_HOME>        prints the demo session's id
// The session's working folder becomes this checkout's demo/workspace/ (the header's `cwd` is
// rewritten and the log is filed under that project's folder, as dsh-session-persistence-jsonl
// names it). The zstd framing is kept: frame 1 = the header line only (the host checks that),
// the other frames are copied byte for byte. Idempotent: an existing copy (which you may have
// continued in the UI) is kept; KOPT_DEMO_RESEED=1 replaces it.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
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

// Files one recorded session under the demo's workspace; returns its id.
function seed (name) {
  const src = join(here, name)
  const meta = JSON.parse(readFileSync(join(src, 'meta.json'), 'utf8'))
  const log = readFileSync(join(src, 'session.jsonl.zstd'))
  const n = frameLength(log)
  const headerLine = zstdDecompressSync(log.subarray(0, n)).toString('utf8')
  const header = JSON.parse(headerLine)
  if (header.type !== 'session' || header.id !== meta.sessionId) throw new Error(`${name} log: unexpected header`)
  header.cwd = cwd
  const frame1 = zstdCompressSync(Buffer.from(JSON.stringify(header) + '\n'), { params: { [constants.ZSTD_c_checksumFlag]: 1 } })
  const out = Buffer.concat([frame1, log.subarray(n)])
  const dir = join(home, 'sessions', projectKey(cwd), meta.sessionId)
  const file = join(dir, 'session.jsonl.zstd')
  if (!existsSync(file) || process.env.KOPT_DEMO_RESEED === '1') {
    mkdirSync(dir, { recursive: true })
    writeFileSync(file + '.tmp', out)
    renameSync(file + '.tmp', file)
  }
  return meta.sessionId
}

const id = seed('kernel-opt-demo')
if (existsSync(join(here, 'kernel-opt-demo-b', 'meta.json'))) seed('kernel-opt-demo-b')
console.log(id)
