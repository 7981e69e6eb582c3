// Builds lib/client.js, the browser half the host serves as one CommonJS file, from its parts in
// lib/client/ (in the order below) and writes the plugin id in from lib/anchors.json (through lib/config.mjs).
//   node scripts/build-client.mjs           write lib/client.js
//   node scripts/build-client.mjs --check   exit 1 when lib/client.js is not what the parts build
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PLUGIN_ID } from '../lib/config.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// The module loader's wrapper opens in head.js and closes in apply.js; each part between draws one thing.
export const PARTS = ['head', 'strings', 'data', 'helpers', 'styles', 'curve', 'controls', 'cards', 'compare', 'tab', 'composer', 'apply']
const TOKEN = '__PLUGIN_ID__'

export function buildClient() {
  const text = PARTS.map((p) => readFileSync(join(root, 'lib/client', `${p}.js`), 'utf8')).join('')
  if (text.split(TOKEN).length !== 2) throw new Error(`lib/client/: expected ${TOKEN} exactly once`)
  return text.replace(TOKEN, JSON.stringify(PLUGIN_ID).replace(/"/g, "'"))
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
