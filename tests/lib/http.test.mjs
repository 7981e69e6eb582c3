import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { checkTrust, jsonNesting, readJsonBody, validSessionId } from '../../lib/http.mjs'

const req = (headers) => ({ headers })

test('loopback hosts pass the fence', () => {
  for (const host of ['127.0.0.1:3000', 'localhost:80', 'LOCALHOST', '[::1]:9', '127.1.2.3', 'app.localhost:5']) {
    assert.equal(checkTrust(req({ host })), true, host)
  }
})

test('foreign, missing or malformed Host is refused', () => {
  for (const host of [undefined, '', 'evil.example', 'evil.example:3000', '127.0.0.1.evil.example', 'user@127.0.0.1', '10.0.0.5:3000', 'a b']) {
    assert.equal(checkTrust(req({ host })), false, String(host))
  }
})

test('trusted hosts: exact authority with a port, any port without', () => {
  assert.equal(checkTrust(req({ host: 'lab.internal:3080' }), ['lab.internal:3080']), true)
  assert.equal(checkTrust(req({ host: 'lab.internal:3081' }), ['lab.internal:3080']), false)
  assert.equal(checkTrust(req({ host: 'lab.internal:9' }), ['lab.internal']), true)
  assert.equal(checkTrust(req({ host: '10.0.0.7:5' }), ['10.0.0.7']), true)
})

test('Origin must be this authority; cross-site fetches are refused', () => {
  assert.equal(checkTrust(req({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' })), true)
  assert.equal(checkTrust(req({ host: '127.0.0.1:3000', origin: 'http://evil.example' })), false)
  assert.equal(checkTrust(req({ host: '127.0.0.1:3000', origin: 'null' })), false)
  assert.equal(checkTrust(req({ host: '127.0.0.1:3000', 'sec-fetch-site': 'cross-site' })), false)
  assert.equal(checkTrust(req({ host: '127.0.0.1:3000', 'sec-fetch-site': 'same-origin' })), true)
})

test('session ids', () => {
  assert.equal(validSessionId('session-2026-abc_1.x'), true)
  for (const bad of ['', '../x', 'a/b', 'x'.repeat(201), '-lead', 'a b', 'é']) assert.equal(validSessionId(bad), false, bad)
})

test('readJsonBody: records only, bounded size', async () => {
  const server = createServer(async (rq, rs) => {
    const v = await readJsonBody(rq, 64)
    rs.end(JSON.stringify({ v }))
  })
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  const { port } = server.address()
  const post = async (body) => (await (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body })).json()).v
  try {
    assert.deepEqual(await post('{"a":1}'), { a: 1 })
    assert.equal(await post('[1]'), null)
    assert.equal(await post('nope'), null)
    assert.equal(await post(JSON.stringify({ a: 'x'.repeat(100) })), null)
  } finally {
    server.close()
  }
})

test('readJsonBody: a body nested deeper than the bound is refused before parsing', async () => {
  assert.equal(jsonNesting('{"a":[1,{"b":"[[[["}]}'), 3)
  assert.equal(jsonNesting('"\\"[["'), 0)
  const server = createServer(async (rq, rs) => {
    const v = await readJsonBody(rq, 1 << 20)
    rs.end(JSON.stringify({ ok: v !== null }))
  })
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  const { port } = server.address()
  const post = async (body) => (await (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body })).json()).ok
  try {
    assert.equal(await post(`{"sessionId":"s","x":${'['.repeat(5000)}${']'.repeat(5000)}}`), false)
    assert.equal(await post(`{"a":${'['.repeat(31)}${']'.repeat(31)}}`), true)
  } finally {
    server.close()
  }
})
