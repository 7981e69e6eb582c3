// Screenshot of the demo session's 评测 tab (docs/img/demo-tab.png) from a running `bash scripts/run.sh`.
//   node demo/screenshot.mjs <port> <out.png>      (Node 22; playwright-core from tests/browser/node_modules)
// Headless Debian chromium (playwright gives it a fresh temporary profile), loopback only, every wait bounded. Prints the session's URL.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(join(here, '../tests/browser/package.json'))
const { chromium } = require('playwright-core')
const [port, out] = process.argv.slice(2)
const meta = JSON.parse(readFileSync(join(here, 'kernel-opt-demo/meta.json'), 'utf8'))
const timer = setTimeout(() => { console.error('[screenshot] timed out'); process.exit(2) }, 120_000)
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', timeout: 30_000,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
})
try {
  const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1440, height: 900 } })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(`http://127.0.0.1:${port}/`)
  await page.getByRole('button', { name: /^(Continue|继续|我知道了|知道了|OK)$/ }).first().click({ timeout: 6000 }).catch(() => {})
  // Without an API key the shell asks for one first: "稍后配置" (later) closes that dialog.
  await page.getByRole('button', { name: /^(稍后配置|Later|Configure later|Skip)$/ }).first().click({ timeout: 6000 }).catch(() => {})
  // The sidebar lists the session under its workspace's name (demo/workspace): the folder, then the session.
  await page.getByText(/^workspace$/).nth(1).click()
  await page.getByRole('tab', { name: '评测' }).or(page.getByText('评测', { exact: true })).first().click()
  await page.locator('[data-kopt=chart]').waitFor()
  const n = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
  await page.waitForTimeout(500)
  await page.screenshot({ path: out })
  console.log(`[screenshot] ${meta.sessionId}: ${n} points; url ${page.url()}; wrote ${out}`)
} finally {
  clearTimeout(timer)
  await browser.close().catch(() => {})
}
