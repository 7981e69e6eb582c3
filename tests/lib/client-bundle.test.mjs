import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { buildClient, PARTS } from '../../scripts/build-client.mjs'
import { PLUGIN_ID } from '../../lib/config.mjs'

const committed = readFileSync(new URL('../../lib/client.js', import.meta.url), 'utf8')

test('lib/client.js is what its parts build (run node scripts/build-client.mjs after editing lib/client/)', () => {
  assert.ok(committed === buildClient(), 'lib/client.js differs from the build of lib/client/*.js')
})

test('every part is in the build, and the plugin id comes from lib/config.mjs', () => {
  const files = readdirSync(new URL('../../lib/client/', import.meta.url)).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3))
  assert.deepEqual([...files].sort(), [...PARTS].sort())
  assert.match(committed, new RegExp(`const PLUGIN_ID = '${PLUGIN_ID}'\\n`))
  assert.equal(committed.split(`'${PLUGIN_ID}'`).length, 2, 'the plugin id is written once, in the bundle\'s head')
})

test('each part names what it takes from the parts before it: the build refuses a use without an import', () => {
  const read = (p) => readFileSync(new URL(`../../lib/client/${p}.js`, import.meta.url), 'utf8')
  const without = (part, line) => (p) => (p === part ? read(p).replace(line, '') : read(p))
  // tab.js draws the record card: without its import line the build names what is missing.
  assert.throws(() => buildClient(without('tab', /^import \{[^}]*\} from '\.\/cards\.js'\n/m)), /tab\.js uses \w+ \(from cards\.js\) without importing it/)
  // compare.js spreads curve.js's FLAT into its paths (`...FLAT`): a spread is a use too.
  assert.throws(() => buildClient((p) => (p === 'compare' ? read(p).replace(/\bFLAT, /, '') : read(p))), /compare\.js uses FLAT \(from curve\.js\) without importing it/)
  // An import of a name the part does not export, or from a part after it.
  assert.throws(() => buildClient((p) => (p === 'cards' ? `import { nothing } from './helpers.js'\n${read(p)}` : read(p))), /imports nothing from helpers\.js, which does not export it/)
  assert.throws(() => buildClient((p) => (p === 'cards' ? `import { EvalTab } from './tab.js'\n${read(p)}` : read(p))), /imports from tab\.js, which is not a part before it/)
  // The bundle is the parts' code alone: no import line and no export word reaches it.
  assert.doesNotMatch(committed, /^import \{/m)
  assert.doesNotMatch(committed, /^ *export (?:async function|function|const|let|class) /m)
})
