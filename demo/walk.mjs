// The README's demo steps as a browser walk, shared by demo/screenshot.mjs (the pictures in docs/img)
// and the browser suite (tests/browser/demo.test.mjs, against a real `bash scripts/run.sh`). What the
// walk does and checks is read from the README of the page's language (README.md for zh-CN,
// README.en.md for en-US), "两条命令" / "The two commands", the demo's steps 1-3:
//   the dialogs it names, in order, each closed with the button it names (the one it says shows only the
//   first time may be absent); the folder in the sidebar and the two demo sessions in it, the one it
//   names first above the other; the session it says to open; the tab; the number of points it says the
//   curve has. A README that no longer matches the demo fails the walk with what differs.
// The recordings (demo/*/meta.json: title, points) must agree with the README too: readmeWalk checks it.
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(here, '..')
export const README = { 'zh-CN': 'README.md', 'en-US': 'README.en.md' }

// The recorded sessions beside this file: [{ dir, sessionId, title, points }].
export function recordings () {
  return readdirSync(here, { withFileTypes: true })
    .filter(d => d.isDirectory() && existsSync(join(here, d.name, 'meta.json')))
    .map(d => ({ dir: d.name, ...JSON.parse(readFileSync(join(here, d.name, 'meta.json'), 'utf8')) }))
}

const one = (text, re, what, file) => {
  const m = text.match(re)
  if (!m) throw new Error(`${file}: the demo steps no longer say ${what} (${re})`)
  return m[1]
}

// The demo's steps as the README of `locale` states them, checked against the recordings:
// { file, dialogs: [{ title, button, once }], folder, first, second, open, tab, points, recording }.
export function readmeWalk (locale, text) {
  const file = README[locale]
  if (!file) throw new Error(`no README for ${locale}`)
  text ??= readFileSync(join(ROOT, file), 'utf8')
  // The "run" part of the README up to the demo's description, in one line.
  const start = text.search(/^- (没有 API key 也能看演示|The demo needs no API key)/m)
  if (start < 0) throw new Error(`${file}: no demo steps`)
  const steps = text.slice(start, text.indexOf('\n- ', start + 3)).replace(/\s+/g, ' ')
  let s
  if (locale === 'zh-CN') {
    const dialogs = [...steps.matchAll(/「([^」]+)」对话框（([^）]*)）：点「([^」]+)」/g)]
      .map(([, title, when, button]) => ({ title, button, once: /第一次/.test(when) }))
    s = {
      dialogs,
      folder: one(steps, /「工作区」里的 `([^`]+)` 文件夹/, 'the folder', file),
      first: one(steps, /上面的是 `([^`]+)`/, 'the session listed first', file),
      second: one(steps, /下面的是 `([^`]+)`/, 'the session listed second', file),
      open: one(steps, /先点开上面的 `([^`]+)`/, 'which session to open', file),
      tab: one(steps, /切到顶部的「([^」]+)」页/, 'the tab', file),
      points: Number(one(steps, /曲线上共 (\d+) 个点/, 'how many points', file)),
    }
  } else {
    const dialogs = [...steps.matchAll(/「[^」]+」 \/ ([^(]+?) \(([^)]*)\): click 「[^」]+」 \/ ([^;.]+?)[;.]/g)]
      .map(([, title, when, button]) => ({ title, button, once: /only the first time/.test(when) }))
    s = {
      dialogs,
      folder: one(steps, /the `([^`]+)` folder holds/, 'the folder', file),
      first: one(steps, /`([^`]+)` on top/, 'the session listed first', file),
      second: one(steps, /below it `([^`]+)`/, 'the session listed second', file),
      open: one(steps, /Open `([^`]+)` first/, 'which session to open', file),
      tab: one(steps, /the 「[^」]+」 \(([^)]+)\) tab/, 'the tab', file),
      points: Number(one(steps, /its curve has (\d+) points/, 'how many points', file)),
    }
  }
  if (s.dialogs.length !== 2) throw new Error(`${file}: the demo steps name ${s.dialogs.length} dialogs, not the beta notice and the API-key dialog`)
  const recs = recordings()
  const recording = recs.find(r => r.title === s.open)
  if (!recording) throw new Error(`${file} says to open «${s.open}»; no recording in demo/*/meta.json has that title (${recs.map(r => `«${r.title}»`).join(', ')})`)
  if (recording.points !== s.points) throw new Error(`${file} says «${s.open}» has ${s.points} points; its recording (demo/${recording.dir}) has ${recording.points}`)
  for (const t of [s.first, s.second]) {
    if (!recs.some(r => r.title === t)) throw new Error(`${file} names «${t}» in the sidebar; no recording has that title`)
  }
  if (s.first === s.second) throw new Error(`${file}: both demo sessions named «${s.first}»`)
  return { file, ...s, recording }
}

// Follows the README's steps for `locale` in a fresh browser context on the `dsh web` at `port`, up to
// the opened tab with its chart drawn; throws when the page differs from what the README says.
// Returns { context, page, walk, drawn }.
// failShot: where to save the page when the walk fails.
export async function walkDemo (browser, port, locale, { log = console.log, viewport = { width: 1440, height: 900 }, failShot } = {}) {
  const walk = readmeWalk(locale)
  const context = await browser.newContext({ locale, viewport })
  const page = await context.newPage()
  try {
    page.setDefaultTimeout(20_000)
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.locator('[role=dialog],[role=alertdialog]').first().waitFor({ timeout: 15_000 })
    for (const { title, button, once } of walk.dialogs) {
      const dialog = page.locator('[role=dialog],[role=alertdialog]').filter({ hasText: title })
      const shown = await dialog.waitFor({ timeout: once ? 2_000 : 15_000 }).then(() => true, () => false)
      if (!shown && once) { log(`${locale}: no "${title}" dialog (accepted before in this DSH home)`); continue }
      if (!shown) throw new Error(`${locale}: the dialog "${title}" (${walk.file}) did not appear`)
      await dialog.getByRole('button', { name: button, exact: true }).first().click()
      await dialog.waitFor({ state: 'detached', timeout: 10_000 })
      log(`${locale}: dialog "${title}" closed with "${button}"`)
    }
    // The sidebar: the folder, and in it the two demo sessions under their titles, in the README's order.
    const rows = page.locator('[role=tree] [role=treeitem]')
    const folder = rows.filter({ has: page.getByText(walk.folder, { exact: true }) }).first()
    await folder.waitFor({ timeout: 15_000 }).catch(() => { throw new Error(`${locale}: no folder «${walk.folder}» in the sidebar (${walk.file})`) })
    if ((await folder.getAttribute('aria-expanded')) === 'false') await folder.click()
    const row = title => rows.filter({ has: page.getByText(title, { exact: true }) }).first()
    await row(walk.first).waitFor({ timeout: 15_000 }).catch(async () => {
      const seen = (await rows.allInnerTexts()).map(t => t.split('\n')[0])
      throw new Error(`${locale}: no session «${walk.first}» in the sidebar (${walk.file}); it lists ${JSON.stringify(seen)}`)
    })
    const texts = (await rows.allInnerTexts()).map(t => t.split('\n')[0].trim())
    const at = t => texts.indexOf(t)
    if (at(walk.second) < 0 || at(walk.first) > at(walk.second) || at(walk.first) < at(walk.folder)) {
      throw new Error(`${locale}: ${walk.file} says «${walk.first}» is listed above «${walk.second}» in «${walk.folder}»; the sidebar lists ${JSON.stringify(texts)}`)
    }
    log(`${locale}: sidebar ${JSON.stringify(texts)}`)
    await row(walk.open).click()
    await page.getByRole('tab', { name: walk.tab }).or(page.getByText(walk.tab, { exact: true })).first().click()
    await page.locator('[data-kopt=chart]').waitFor()
    if ((await row(walk.open).getAttribute('aria-selected')) !== 'true') throw new Error(`${locale}: the sidebar did not select «${walk.open}» when clicked`)
    const drawn = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
    if (drawn !== walk.points) throw new Error(`${locale}: «${walk.open}» draws ${drawn} points; ${walk.file} says ${walk.points}`)
    log(`${locale}: «${walk.open}» (${walk.recording.sessionId}): ${drawn} points, as ${walk.file} says`)
    // The tab opens where the page was scrolled last: bring its top into view.
    await page.locator('[data-kopt=panel]').evaluate(e => { for (let p = e; p; p = p.parentElement) p.scrollTop = 0 })
    await page.waitForTimeout(500)
    return { context, page, walk, drawn }
  } catch (e) {
    if (failShot) await page.screenshot({ path: failShot }).catch(() => {})
    await context.close().catch(() => {})
    throw e
  }
}
