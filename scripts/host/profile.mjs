// Structural questions and edits on a DSH profile, for scripts/run.sh and scripts/install-plugin.sh.
// YAML is read with the host's own js-yaml (the folder of the host's node_modules comes first), so
// nothing here matches text: a path that happens to contain the plugin's name cannot pass for it.
//
//   node profile.mjs HOST_MODULES has-plugin < dump     exit 0 when the composed tree (the output of
//                                                       `dsh --profile P --dump-config`) holds a row
//                                                       whose `name` is this package or one of its entries
//   node profile.mjs HOST_MODULES enable-hmr PATCH      makes PATCH (a profile's cordis.patch.yml) turn
//                                                       the host's `hmr` row on with `root: []` (the
//                                                       published host cannot boot without it, docs/install.md);
//                                                       keeps the file's other entries and its leading comments
// Exit 1 with a message on stderr when the answer is no or the file cannot be read as a patch list.
import { readFileSync, writeFileSync, renameSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const [hostModules, cmd, file] = process.argv.slice(2)
const fail = (msg) => { console.error(`[kopt] ${msg}`); process.exit(1) }
if (!hostModules || !cmd) fail('usage: node profile.mjs HOST_NODE_MODULES has-plugin|enable-hmr [PATCH]')

let yaml
try {
  yaml = createRequire(path.join(path.resolve(hostModules), 'noop.js'))('js-yaml')
} catch (e) {
  fail(`js-yaml not found under ${hostModules} (the DSH host's node_modules): ${e.message}`)
}

// `!!js` expressions are allowed in patch files: kept verbatim, written back as they were.
class JsExpr { constructor(src) { this.src = src } }
const jsType = new yaml.Type('tag:yaml.org,2002:js', {
  kind: 'scalar',
  construct: (d) => new JsExpr(d),
  instanceOf: JsExpr,
  represent: (o) => o.src,
})
const schema = yaml.DEFAULT_SCHEMA.extend([jsType])

const here = path.dirname(fileURLToPath(import.meta.url))
const pkgName = JSON.parse(readFileSync(path.join(here, '../../package.json'), 'utf8')).name

if (cmd === 'has-plugin') {
  const rows = yaml.load(readFileSync(0, 'utf8'), { schema })
  if (!Array.isArray(rows)) fail('the composed profile tree is not a list of rows')
  const ours = rows.filter((r) => r && typeof r.name === 'string' && (r.name === pkgName || r.name.startsWith(pkgName + '/')))
  if (ours.length === 0) process.exit(1)
  console.log(ours.map((r) => `${r.id ?? '?'} ${r.name}`).join('\n'))
} else if (cmd === 'enable-hmr') {
  if (!file) fail('enable-hmr needs the path of cordis.patch.yml')
  let text = ''
  try { text = readFileSync(file, 'utf8') } catch (e) { if (e.code !== 'ENOENT') throw e }
  let list
  try { list = yaml.load(text, { schema }) ?? [] } catch (e) { fail(`${file} is not valid YAML: ${e.message}`) }
  if (!Array.isArray(list)) fail(`${file} must hold a YAML list of patch entries`)
  const want = { id: 'hmr', disabled: false, config: { root: [] } }
  const at = list.findIndex((e) => e && e.id === 'hmr' && !e.insert)
  const cur = at >= 0 ? list[at] : null
  if (cur && cur.disabled === false && Array.isArray(cur.config?.root) && cur.config.root.length === 0) process.exit(0)
  if (at >= 0) list[at] = want
  else list.push(want)
  const header = (text.match(/^(?:[ \t]*#[^\n]*\n)*/) || [''])[0]
  const tmp = `${file}.kopt-tmp`
  writeFileSync(tmp, header + yaml.dump(list, { schema, lineWidth: -1 }))
  renameSync(tmp, file)
  console.error(`[kopt] ${file}: hmr row on (root: [])`)
} else {
  fail(`unknown command ${cmd}`)
}
