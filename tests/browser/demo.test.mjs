// The README's demo, as a newcomer meets it: `bash scripts/run.sh` from this checkout (a DSH home of its
// own, KOPT_DSH_HOME, so the host's first-run dialogs show; the pinned host in KOPT_HOST_DIR), then the
// README's steps in headless Chromium, in 中文 (README.md) and English (README.en.md): demo/walk.mjs, the
// walk demo/screenshot.mjs takes docs/img's pictures with. The dialogs, the folder, the two demo sessions
// in the order and under the titles the README names, the session it says to open, the tab and the
// number of points it says the curve has are all read from the README, and checked against the
// recordings (demo/*/meta.json): a README that no longer matches the demo fails here.
//   env: KOPT_HOST_DIR (default .dsh-host), CHROMIUM, KOPT_ARTIFACTS; KOPT_ADDON is passed on to run.sh.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { freePort, http, rpc, waitFor } from '../e2e/harness.mjs'
import { CHROMIUM_ARGS } from './lib/chromium.mjs'
import { readmeWalk, recordings, walkDemo } from '../../demo/walk.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(here, '../..')
const HOST_DIR = process.env.KOPT_HOST_DIR || path.join(ROOT, '.dsh-host')
const hostReady = existsSync(path.join(HOST_DIR, 'bin/dsh'))
if (!hostReady) console.log(`# demo.test: no DSH host at ${HOST_DIR} (scripts/setup-host.sh installs it); skipped`)
const artifacts = process.env.KOPT_ARTIFACTS || path.join(here, 'artifacts')
const work = mkdtempSync(path.join(tmpdir(), 'kopt-demo-walk-'))
const home = path.join(work, 'dsh-home')
const runLog = path.join(work, 'run.log')
let run, port, browser
let failed = false
const fail = (fn) => async (...a) => { try { await fn(...a) } catch (e) { failed = true; throw e } }

// run.sh in its own process group; it stops dsh web (a group of its own, pgid in web.pgid) on SIGTERM.
function stopRun () {
  if (run && run.exitCode === null) { try { process.kill(-run.pid, 'SIGTERM') } catch {} }
}
function killAll () {
  let web = 0
  try { web = Number(readFileSync(path.join(home, 'web.pgid'), 'utf8').trim()) } catch {}
  for (const pg of [run?.pid, web].filter(Boolean)) {
    try { process.kill(-pg, 'SIGKILL') } catch {}
  }
}
process.on('exit', killAll)

describe('the README\'s demo steps against `bash scripts/run.sh`', { skip: !hostReady, timeout: 600_000 }, () => {
  before(async () => {
    mkdirSync(artifacts, { recursive: true })
    port = await freePort()
    const out = openSync(runLog, 'w')
    // Without DEEPSEEK_API_KEY, as the README's steps assume (the key dialog shows).
    const env = { ...process.env, KOPT_DSH_HOME: home, KOPT_PORT: String(port), KOPT_HOST_DIR: HOST_DIR }
    delete env.DEEPSEEK_API_KEY
    run = spawn('bash', [path.join(ROOT, 'scripts/run.sh')], { cwd: ROOT, detached: true, stdio: ['ignore', out, out], env })
    await waitFor('scripts/run.sh to say "is running"', async () => {
      if (run.exitCode !== null) throw new Error(`scripts/run.sh exited ${run.exitCode}:\n${readFileSync(runLog, 'utf8').slice(-2000)}`)
      return readFileSync(runLog, 'utf8').includes('is running:')
    }, 300_000, 500).catch(e => { failed = true; throw e })
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS, timeout: 30_000 })
  })
  after(async () => {
    await browser?.close().catch(() => {})
    stopRun()
    await waitFor('scripts/run.sh to stop', async () => run?.exitCode !== null, 15_000, 200).catch(() => {})
    killAll()
    if (failed) console.log(`# run.sh log and DSH home kept in ${work}`)
    else rmSync(work, { recursive: true, force: true })
  })

  test('both READMEs name the same two demo sessions, each a recording with its own title; the one to open is the one listed first', fail(async () => {
    const zh = readmeWalk('zh-CN'), en = readmeWalk('en-US')
    for (const k of ['folder', 'first', 'second', 'open', 'points']) assert.equal(zh[k], en[k], `README.md and README.en.md differ on ${k}`)
    assert.equal(zh.open, zh.first, 'the README says to open the session listed first')
    const recs = recordings()
    assert.equal(new Set(recs.map(r => r.title)).size, recs.length, `two recordings share a title: ${recs.map(r => r.title)}`)
    assert.deepEqual(new Set(recs.map(r => r.title)), new Set([zh.first, zh.second]), 'the README names every recording')
    assert.equal(run.exitCode, null, 'scripts/run.sh is running')
    assert.match(readFileSync(runLog, 'utf8'), new RegExp(`«${zh.first}»`), 'run.sh prints the demo\'s title')
  }))

  test('the host lists the seeded copies newest first, the README\'s demo on top, under their titles before they are opened', fail(async () => {
    const walk = readmeWalk('zh-CN')
    const list = (await rpc(port, 'session.list', {})).items
    const ids = list.map(s => s.sessionId)
    const byTitle = Object.fromEntries(recordings().map(r => [r.title, r.sessionId]))
    assert.ok(ids.indexOf(byTitle[walk.first]) >= 0 && ids.indexOf(byTitle[walk.first]) < ids.indexOf(byTitle[walk.second]), `session.list order ${ids}`)
    for (const t of [walk.first, walk.second]) assert.equal(list.find(s => s.sessionId === byTitle[t]).projections?.values?.title, t)
  }))

  for (const [locale, shot] of [['zh-CN', 'demo-walk-zh.png'], ['en-US', 'demo-walk-en.png']]) {
    test(`${locale}: ${locale === 'zh-CN' ? 'README.md' : 'README.en.md'}'s steps open the session it describes, with the points it says`, fail(async () => {
      const lines = []
      const { context, page, walk, drawn } = await walkDemo(browser, port, locale, {
        log: m => { lines.push(m); console.log(`# ${m}`) }, failShot: path.join(artifacts, `failed-${shot}`),
      })
      try {
        assert.equal(drawn, walk.points)
        // The plugin's own series for that session agrees with what the tab drew.
        const s = await waitFor('the series of the opened session', async () => {
          const r = await http(port, `/plugins/kernel-opt/series?sessionId=${encodeURIComponent(walk.recording.sessionId)}`)
          return r.status === 200 && r.json()
        }, 60_000, 200)
        assert.equal(s.iterations.length, walk.points)
        await page.screenshot({ path: path.join(artifacts, shot) })
      } finally { await context.close() }
    }))
  }
})
