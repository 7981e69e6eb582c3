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
