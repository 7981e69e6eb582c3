// Screenshots of the demo session for docs/img/ from a running `bash scripts/run.sh`, taken by
// following the README's demo steps literally (each dialog it names, then the sidebar, then the tab):
//   node demo/screenshot.mjs <port> <out-dir>      (Node 22; playwright-core from tests/browser/node_modules)
// Writes demo-tab.png (zh), demo-tab-en.png (en), demo-focus.png (zh, focus mode, the ★ point's popover
// pinned) and demo-report.png (`build/kopt report` of the same session, zh). Prints each dialog met.
// Headless Debian chromium (a fresh temporary profile per language), loopback only, every wait bounded.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(join(here, '../tests/browser/package.json'))
const { chromium } = require('playwright-core')
const [port, out] = process.argv.slice(2)
if (!port || !out) { console.error('usage: node demo/screenshot.mjs <port> <out-dir>'); process.exit(2) }
const meta = JSON.parse(readFileSync(join(here, 'kernel-opt-demo/meta.json'), 'utf8'))
const timer = setTimeout(() => { console.error('[screenshot] timed out'); process.exit(2) }, 240_000)
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', timeout: 30_000,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
})
// The README's steps, per language: the dialogs in the order the shell shows them (the button named
// in the README closes each; the beta notice only until it has been accepted once in this DSH home),
// the sidebar entry, the tab.
const steps = {
  'zh-CN': { dialogs: [['内测声明', '继续', 'once'], ['API Key', '稍后配置']], tab: '评测' },
  'en-US': { dialogs: [['Internal Testing Notice', 'Continue', 'once'], ['API key', 'Configure later']], tab: 'Evaluations' },
}

async function openDemo (locale) {
  const context = await browser.newContext({ locale, viewport: { width: 1440, height: 900 } })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(`http://127.0.0.1:${port}/`)
  await page.locator('[role=dialog],[role=alertdialog]').first().waitFor({ timeout: 15_000 })
  for (const [title, button, once] of steps[locale].dialogs) {
    const dialog = page.locator('[role=dialog],[role=alertdialog]').filter({ hasText: title })
    const shown = await dialog.waitFor({ timeout: once ? 2_000 : 15_000 }).then(() => true, () => false)
    if (!shown && once) { console.log(`[screenshot] ${locale}: no "${title}" dialog (accepted before in this DSH home)`); continue }
    if (!shown) throw new Error(`${locale}: the dialog "${title}" did not appear`)
    await dialog.getByRole('button', { name: button, exact: true }).first().click()
    await dialog.waitFor({ state: 'detached', timeout: 10_000 })
    console.log(`[screenshot] ${locale}: dialog "${title}" closed with "${button}"`)
  }
  // The sidebar: the workspace folder (demo/workspace), and in it the demo session, listed under the
  // folder's name until it has been opened once, then under its title.
  // (A DSH home whose sidebar was set up before the demo was re-seeded lists it under 未分组 / Ungrouped.)
  const entry = page.locator('[role=treeitem]').filter({ hasText: /^\s*(workspace|Kernel optimization run)\s*\d/ }).first()
  if (!(await entry.isVisible().catch(() => false))) {
    await entry.waitFor({ timeout: 5_000 }).catch(async () => {
      console.log(`[screenshot] ${locale}: the session is not in the workspace folder; opening 未分组 / Ungrouped`)
      await page.getByText(/^(未分组|Ungrouped)$/).first().click({ timeout: 5_000 })
    })
  }
  await entry.click()
  await page.getByRole('tab', { name: steps[locale].tab }).or(page.getByText(steps[locale].tab, { exact: true })).first().click()
  await page.locator('[data-kopt=chart]').waitFor()
  const n = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
  if (n !== meta.points) throw new Error(`${locale}: ${n} points drawn, the recording has ${meta.points}`)
  // The tab opens where the page was scrolled last: bring its top into view.
  await page.locator('[data-kopt=panel]').evaluate(e => { for (let p = e; p; p = p.parentElement) p.scrollTop = 0 })
  await page.waitForTimeout(500)
  return { context, page }
}

try {
  {
    const { context, page } = await openDemo('zh-CN')
    await page.screenshot({ path: join(out, 'demo-tab.png') })
    // Focus mode, with the ★ (best) point's popover pinned: the chart focused, arrows to it, Enter.
    await page.locator('[data-kopt=focus]').click()
    await page.locator('[data-kopt=chart]').focus()
    const series = await (await fetch(`http://127.0.0.1:${port}/plugins/kernel-opt/series?sessionId=${encodeURIComponent(meta.sessionId)}`)).json()
    const best = series.bestIndex
    for (let i = 0; i <= best; ++i) await page.keyboard.press('ArrowRight')
    await page.keyboard.press('Enter')
    await page.locator('[data-kopt=popover]').waitFor()
    await page.waitForTimeout(300)
    await page.screenshot({ path: join(out, 'demo-focus.png') })
    console.log(`[screenshot] zh: ${meta.points} points; url ${page.url()}`)
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
      execFileSync(join(here, '../build/kopt'), ['report', join(here, 'kernel-opt-demo/session.jsonl.zstd'), '-o', html, '--lang', 'zh'], { stdio: 'inherit', timeout: 60_000 })
      const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1280, height: 900 } })
      const page = await context.newPage()
      await page.goto(`file://${html}`)
      await page.waitForTimeout(300)
      await page.screenshot({ path: join(out, 'demo-report.png'), fullPage: true })
      await context.close()
    } finally { rmSync(dir, { recursive: true, force: true }) }
  }
  console.log(`[screenshot] wrote demo-tab.png demo-focus.png demo-tab-en.png demo-report.png in ${out}`)
} finally {
  clearTimeout(timer)
  await browser.close().catch(() => {})
}
