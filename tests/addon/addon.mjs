// Loads the addon under test, its test build (the product's exports and the tests' oracles:
// seriesJson, derivedJson, chartJson, body, delta, reviseWith …): $KOPT_TEST_ADDON, else
// build/kopt-test.node. The product build (kopt.node) is what lib/native/load.mjs loads.
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
export const root = path.resolve(here, '../..')
const require = createRequire(import.meta.url)
export const addonPath = process.env.KOPT_TEST_ADDON || path.join(root, 'build/kopt-test.node')
export const kopt = require(addonPath)
export const vectorsDir = path.join(root, 'tests/fixtures/vectors')

// The vectors' comparison rule (INDEX.md): key sets equal, numbers within 1e-12 relative.
export function firstDifference (want, got, at = '$') {
  if (typeof want === 'number' && typeof got === 'number') {
    return want === got || Math.abs(want - got) <= 1e-12 * Math.max(Math.abs(want), Math.abs(got)) ? null : `${at}: want ${want} got ${got}`
  }
  if (want === null || got === null || typeof want !== 'object' || typeof got !== 'object') {
    return Object.is(want, got) ? null : `${at}: want ${JSON.stringify(want)} got ${JSON.stringify(got)}`
  }
  if (Array.isArray(want) !== Array.isArray(got)) return `${at}: array vs object`
  if (Array.isArray(want)) {
    if (want.length !== got.length) return `${at}: length ${want.length} vs ${got.length}`
    for (let i = 0; i < want.length; i++) { const d = firstDifference(want[i], got[i], `${at}[${i}]`); if (d) return d }
    return null
  }
  const wk = Object.keys(want).sort(); const gk = Object.keys(got).sort()
  if (wk.join('\u0000') !== gk.join('\u0000')) return `${at}: keys ${wk} vs ${gk}`
  for (const k of wk) { const d = firstDifference(want[k], got[k], `${at}.${k}`); if (d) return d }
  return null
}
