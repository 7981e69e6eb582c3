// Screenshots of the demo session for docs/img/ from a running `bash scripts/run.sh`, taken by
// following the README's demo steps literally (demo/walk.mjs: each dialog it names, then the sidebar
// with both demo sessions, the session it names, the tab, its point count; the browser suite runs the
// same walk in tests/browser/demo.test.mjs). Stops with what differs when the page and the README part:
//   node demo/screenshot.mjs <port> <out-dir>      (Node 22; playwright-core from tests/browser/node_modules)
// Writes demo-tab.png (zh), demo-tab-en.png (en), demo-focus.png (zh, focus mode, the ★ point's popover
// pinned), compare-zh.png (zh, the tab's 对比 with the second demo session, demo/kernel-opt-demo-b),
// demo-report.png (`build/kopt report` of the same session's recording, zh) and compare-report.png
// (`build/kopt report` of the two recordings, zh). Prints each
// dialog met and the sidebar's rows. KOPT_CLI: the kopt to run for the report (default build/kopt).
// Headless Debian chromium (a fresh temporary profile per language), loopback only, every wait bounded.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readmeWalk, walkDemo } from './walk.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(join(here, '../tests/browser/package.json'))
const { chromium } = require('playwright-core')
const [port, out] = process.argv.slice(2)
if (!port || !out) { console.error('usage: node demo/screenshot.mjs <port> <out-dir>'); process.exit(2) }
const timer = setTimeout(() => { console.error('[screenshot] timed out'); process.exit(2) }, 240_000)
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', timeout: 30_000,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
})
const log = msg => console.log(`[screenshot] ${msg}`)
const partner = JSON.parse(readFileSync(join(here, 'kernel-opt-demo-b/meta.json'), 'utf8'))
// The README's steps (demo/walk.mjs), per language; it stops with what differs when the page does not
// match the README.
const openDemo = locale => walkDemo(browser, port, locale, { log })

try {
  {
    const { context, page, walk } = await openDemo('zh-CN')
    await page.screenshot({ path: join(out, 'demo-tab.png') })
    // Focus mode, with the ★ (best) point's popover pinned: the chart focused, arrows to it, Enter.
    await page.locator('[data-kopt=focus]').click()
    await page.locator('[data-kopt=chart]').focus()
    const series = await (await fetch(`http://127.0.0.1:${port}/plugins/kernel-opt/series?sessionId=${encodeURIComponent(walk.recording.sessionId)}`)).json()
    const best = series.bestIndex
    for (let i = 0; i <= best; ++i) await page.keyboard.press('ArrowRight')
    await page.keyboard.press('Enter')
    await page.locator('[data-kopt=popover]').waitFor()
    await page.waitForTimeout(300)
    await page.screenshot({ path: join(out, 'demo-focus.png') })
    log(`zh: ${walk.points} points; url ${page.url()}`)
    // 对比 / Compare: the demo beside the second demo session (demo/kernel-opt-demo-b), as docs/mode.md shows it.
    await page.keyboard.press('Escape')
    await page.keyboard.press('Escape')
    await page.locator('[data-kopt=compare]').click()
    const option = page.locator(`[data-kopt=compare-option][data-id="${partner.sessionId}"]`)
    await option.waitFor({ timeout: 20_000 })
    await option.locator('input').check()
    await page.mouse.click(5, 5)
    await page.waitForFunction(() => document.querySelectorAll('[data-kopt=compare-series]').length === 2, null, { timeout: 20_000 })
    await page.locator('[data-kopt=compare-card]').scrollIntoViewIfNeeded()
    await page.waitForTimeout(300)
    await page.screenshot({ path: join(out, 'compare-zh.png') })
    await context.close()
  }
  {
    const { context, page } = await openDemo('en-US')
    await page.screenshot({ path: join(out, 'demo-tab-en.png') })
    await context.close()
  }
  {
    // The report: `build/kopt report` of the recorded log, opened from a file.
    const dir = mkdtempSync(join(tmpdir(), 'kopt-shot-'))
    try {
      const html = join(dir, 'report.html')
      execFileSync(process.env.KOPT_CLI || join(here, '../build/kopt'), ['report', join(here, readmeWalk('zh-CN').recording.dir, 'session.jsonl.zstd'), '-o', html, '--lang', 'zh'], { stdio: 'inherit', timeout: 60_000 })
      const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1280, height: 900 } })
      const page = await context.newPage()
      await page.goto(`file://${html}`)
      await page.waitForTimeout(300)
      await page.screenshot({ path: join(out, 'demo-report.png'), fullPage: true })
      // `kopt report A B`: the demo and its partner on one page (docs/report.md).
      const both = join(dir, 'compare.html')
      execFileSync(process.env.KOPT_CLI || join(here, '../build/kopt'), ['report', join(here, readmeWalk('zh-CN').recording.dir, 'session.jsonl.zstd'), join(here, 'kernel-opt-demo-b/session.jsonl.zstd'), '-o', both, '--lang', 'zh'], { stdio: 'inherit', timeout: 60_000 })
      await page.goto(`file://${both}`)
      await page.waitForTimeout(300)
      await page.screenshot({ path: join(out, 'compare-report.png'), fullPage: true })
      await context.close()
    } finally { rmSync(dir, { recursive: true, force: true }) }
  }
  console.log(`[screenshot] wrote demo-tab.png demo-focus.png compare-zh.png demo-tab-en.png demo-report.png compare-report.png in ${out}`)
} finally {
  clearTimeout(timer)
  await browser.close().catch(() => {})
}
