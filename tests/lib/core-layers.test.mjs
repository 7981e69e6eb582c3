// The core's includes point one way (issue 48): every folder of src/core is a layer, every header of
// include/kopt belongs to the layer whose folder implements it (<name>.cpp), and a file may include
// headers of its own layer and the layers below it, never above. The order is docs/development.md's.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const core = path.join(root, 'src/core')
const LAYERS = ['base', 'projection', 'supervision', 'loop', 'host', 'panel', 'compare', 'report', 'session']
// Headers no .cpp of their own implements: the layer that owns them.
const OWNED = { anchors: 'projection', report: 'report' }

const rank = (layer) => LAYERS.indexOf(layer)
const includesOf = (file) => [...readFileSync(file, 'utf8').matchAll(/^#include "kopt\/([a-z_0-9]+)\.hpp"/gm)].map(m => m[1])

function headerLayers() {
  const map = new Map()
  for (const layer of readdirSync(core)) {
    for (const f of readdirSync(path.join(core, layer))) if (f.endsWith('.cpp')) map.set(f.slice(0, -4), layer)
  }
  for (const [h, layer] of Object.entries(OWNED)) map.set(h, layer)
  return map
}

test('every folder of src/core is a named layer', () => {
  for (const d of readdirSync(core)) assert.ok(LAYERS.includes(d), `src/core/${d} is not in the layer order ${LAYERS.join(' → ')}`)
})

test('every header of include/kopt belongs to a layer', () => {
  const layers = headerLayers()
  for (const f of readdirSync(path.join(root, 'include/kopt'))) {
    if (!f.endsWith('.hpp')) continue
    assert.ok(layers.has(f.slice(0, -4)), `include/kopt/${f}: no src/core/*/${f.slice(0, -4)}.cpp and no owner in OWNED`)
  }
})

test('no include in src/core or include/kopt points to a higher layer', () => {
  const layers = headerLayers()
  const upward = []
  const check = (file, own) => {
    for (const h of includesOf(file)) {
      const to = layers.get(h)
      if (to !== undefined && rank(to) > rank(own)) upward.push(`${path.relative(root, file)} (${own}) includes kopt/${h}.hpp (${to})`)
    }
  }
  for (const layer of readdirSync(core)) {
    for (const f of readdirSync(path.join(core, layer))) if (/\.(cpp|hpp)$/.test(f)) check(path.join(core, layer, f), layer)
  }
  for (const f of readdirSync(path.join(root, 'include/kopt'))) {
    const own = layers.get(f.replace(/\.hpp$/, ''))
    if (own !== undefined && existsSync(path.join(root, 'include/kopt', f))) check(path.join(root, 'include/kopt', f), own)
  }
  assert.deepEqual(upward, [], `includes pointing upward:\n  ${upward.join('\n  ')}`)
})
