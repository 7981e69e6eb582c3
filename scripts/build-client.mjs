// Builds lib/client.js, the browser half the host serves as one CommonJS file, from its parts in
// lib/client/ (in the order below), writes the plugin id in from lib/anchors.json (through lib/config.mjs)
// and the page words from the core's table (kopt.pageWords(): the addon must load, as lib/native/load.mjs
// finds it).
//   node scripts/build-client.mjs           write lib/client.js
//   node scripts/build-client.mjs --check   exit 1 when lib/client.js is not what the parts build
//
// Each part is a module of the bundle: it names what it takes from the parts before it
// (`import { a, b } from './part.js'`, one line each, at its top) and marks what it gives
// (`export` before a top-level declaration). The build checks both — an import names an export of
// an earlier part; a part uses no other part's export it did not import — then joins the parts in
// order without those lines and words, so the bundle is plain code in one closure.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PLUGIN_ID } from '../lib/config.mjs'
import { loadKopt } from '../lib/native/load.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// The module loader's wrapper opens in head.js and closes in apply.js; each part between draws one thing.
export const PARTS = ['head', 'strings', 'data', 'helpers', 'styles', 'curve', 'controls', 'cards', 'compare', 'tab', 'composer', 'apply']
const TOKEN = '__PLUGIN_ID__'
const WORDS = '__PAGE_WORDS__'
const IMPORT = /^import \{([^}]*)\} from '\.\/([a-z-]+)\.js'\n/
const EXPORT = /^( *)export (?=(?:async function|function|const|let|class) )/gm
const DECLARED = /^ *export (?:async function|function|const|let|class) (?:([A-Za-z_$][\w$]*)|\{([^}]*)\})/gm

/** A part's imports ({name: part}), exports and code (without the imports and the export words). */
export function readPart(name, text) {
  const imports = new Map()
  let rest = text
  for (let m = IMPORT.exec(rest); m; m = IMPORT.exec(rest)) {
    for (const n of m[1].split(',').map(s => s.trim()).filter(Boolean)) imports.set(n, m[2])
    rest = rest.slice(m[0].length)
  }
  if (/^import /m.test(rest)) throw new Error(`lib/client/${name}.js: imports go at its top, one "import { … } from './part.js'" line each`)
  const exports = []
  for (const m of rest.matchAll(DECLARED)) {
    if (m[1]) exports.push(m[1])
    else exports.push(...m[2].split(',').map(s => s.trim().split(':').pop().trim()).filter(Boolean))
  }
  return { name, imports, exports, code: rest.replace(EXPORT, '$1') }
}

// The names a part's code uses: identifiers outside comments and string literals, not after a dot
// (a spread, `...name`, is a use) and not an object literal's key.
function namesUsed(code) {
  const bare = code.replace(/\/\/[^\n]*/g, '').replace(/'(?:[^'\\\n]|\\.)*'/g, "''").replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
  const used = new Set()
  for (const m of bare.matchAll(/(^|[^.\w$]|\.\.\.)([A-Za-z_$][\w$]*)(?![\w$])(?!\s*:(?!:))/g)) used.add(m[2])
  return used
}

/** Checks the parts' imports and exports (throws with what is wrong) and joins them. */
export function joinParts(parts) {
  const owner = new Map()
  for (const p of parts) {
    for (const n of p.exports) {
      if (owner.has(n)) throw new Error(`lib/client/${p.name}.js exports ${n}, which lib/client/${owner.get(n)}.js exports too`)
      owner.set(n, p.name)
    }
  }
  const seen = new Set()
  for (const p of parts) {
    for (const [n, from] of p.imports) {
      if (!seen.has(from)) throw new Error(`lib/client/${p.name}.js imports from ${from}.js, which is not a part before it`)
      if (owner.get(n) !== from) throw new Error(`lib/client/${p.name}.js imports ${n} from ${from}.js, which does not export it`)
    }
    const own = new Set(p.exports)
    for (const n of namesUsed(p.code)) {
      if (own.has(n) || !owner.has(n) || p.imports.has(n)) continue
      throw new Error(`lib/client/${p.name}.js uses ${n} (from ${owner.get(n)}.js) without importing it`)
    }
    seen.add(p.name)
  }
  return parts.map(p => p.code).join('')
}

// The words the tab shares with the HTML report, from the core's one table (kopt/labels.hpp).
export function pageWords() {
  return loadKopt().mod.pageWords()
}

export function buildClient(read = (p) => readFileSync(join(root, 'lib/client', `${p}.js`), 'utf8'), words = pageWords()) {
  const text = joinParts(PARTS.map((p) => readPart(p, read(p))))
  if (text.split(TOKEN).length !== 2) throw new Error(`lib/client/: expected ${TOKEN} exactly once`)
  if (text.split(WORDS).length !== 2) throw new Error(`lib/client/: expected ${WORDS} exactly once`)
  return text.replace(TOKEN, JSON.stringify(PLUGIN_ID).replace(/"/g, "'")).replace(WORDS, () => words)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = join(root, 'lib/client.js')
  const built = buildClient()
  if (process.argv.includes('--check')) {
    if (readFileSync(out, 'utf8') !== built) {
      console.error('lib/client.js is not built from lib/client/: run node scripts/build-client.mjs')
      process.exit(1)
    }
  } else {
    writeFileSync(out, built)
  }
}
