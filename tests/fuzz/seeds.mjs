// Writes seed corpora for the fuzz targets from the project's fixtures: node seeds.mjs OUT_DIR
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const out = process.argv[2]
const vec = path.join(root, 'tests/fixtures/vectors')
const dirs = Object.fromEntries(['fuzz_contract', 'fuzz_shell', 'fuzz_log', 'fuzz_projector', 'fuzz_evaluator_spec'].map(t => {
  const d = path.join(out, t); fs.mkdirSync(d, { recursive: true }); return [t, d]
}))
let n = 0
const put = (t, data) => fs.writeFileSync(path.join(dirs[t], `seed-${n++}`), data)

const texts = (node, acc) => {
  if (Array.isArray(node)) node.forEach(x => texts(x, acc))
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) { if (k === 'text' && typeof v === 'string') acc.push(v); else texts(v, acc) }
  return acc
}
for (const f of fs.readdirSync(vec).filter(f => f.endsWith('.events.json'))) {
  const raw = fs.readFileSync(path.join(vec, f))
  const events = JSON.parse(raw)
  if (raw.length < 200000) put('fuzz_log', raw)
  put('fuzz_log', events.map(e => JSON.stringify(e)).join('\n'))
  put('fuzz_projector', Buffer.concat([Buffer.from([1]), raw]))
  for (const e of events) {
    if (e.type === 'tool/result') for (const t of texts(e.data, [])) if (t.includes('KERNEL_EVAL') || t.trim().startsWith('{')) put('fuzz_contract', t)
    if (e.type === 'tool/call' && typeof e.data?.arguments === 'string') {
      try { const a = JSON.parse(e.data.arguments); if (typeof a.command === 'string') put('fuzz_shell', a.command) } catch {}
    }
  }
}
const unit = JSON.parse(fs.readFileSync(path.join(vec, 'unit.inputs.json')))
for (const c of [...unit.commands, ...unit.profileCommands]) put('fuzz_shell', c)
for (const t of [...unit.trailerTexts, ...unit.resultTexts]) put('fuzz_contract', t)
for (const f of fs.readdirSync(path.join(root, 'tests/fixtures')).filter(f => f.endsWith('.jsonl'))) put('fuzz_log', fs.readFileSync(path.join(root, 'tests/fixtures', f)))
for (let i = 0; i < 16; i++) put('fuzz_projector', Buffer.from(Array.from({ length: 64 }, (_, k) => (k * 37 + i * 11) & 255).map((x, k) => k === 0 ? 0 : x)))
const walk = (d) => fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }).flatMap(e => e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]) : []
for (const f of [...walk(path.join(root, 'evaluator/tests')), ...walk(path.join(root, 'demo/workspace'))]) {
  if (f.endsWith('.json')) put('fuzz_evaluator_spec', fs.readFileSync(f))
}
put('fuzz_evaluator_spec', '{"inputs":[{"name":"x","shape":[4,4],"dtype":"float32","dist":{"kind":"normal"}}],"seed":1}')
console.log(`seeds: ${n}`)
