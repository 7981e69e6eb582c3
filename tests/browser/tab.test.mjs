// The 评测 tab in headless Chromium against the shell stand-in (lib/shell.html) and the plugin's
// routes served by the real core (lib/mock-host.mjs): tab visibility, the curve and its markers,
// keyboard selection and the popover, live updates keeping selection and scroll, focus mode, the
// launcher and the status strip, export, zh/en screenshots, and the 1,000-point update benchmark.
//   node --test tests/browser/tab.test.mjs     (KOPT_ADDON, CHROMIUM, KOPT_ARTIFACTS optional)
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { bigEvents, demoEvents, moreEvents, pendingEvaluation } from './lib/demo-run.mjs'
import { startMockHost } from './lib/mock-host.mjs'
import { CHROMIUM_ARGS } from './lib/chromium.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')
const { kopt } = await import('../addon/addon.mjs') // the test build: the mock host reads body() and delta()
const artifacts = process.env.KOPT_ARTIFACTS || path.join(here, 'artifacts')
mkdirSync(artifacts, { recursive: true })

const vector = (name) => JSON.parse(readFileSync(path.join(root, `tests/fixtures/vectors/${name}.events.json`), 'utf8'))

// Issue 48: two shell evaluations (one reporting a speedup of 1234.5) and an evaluation under way.
const speedupId = 'call_labels_big'
const labelEvents = [
  ...moreEvents(2, { tag: 'lab', seq0: 10 }),
  { type: 'tool/call', seq: 20, time: 1_800_000_000_020, data: { callId: speedupId, name: 'bash', arguments: JSON.stringify({ command: 'python bench.py --kernel k.cu --big' }) } },
  {
    type: 'tool/result', seq: 21, time: 1_800_000_000_021,
    data: { message: { source: { kind: 'tool', callId: speedupId }, content: [{ type: 'tool-result', toolCallId: speedupId, content: [{ type: 'text', text: `KERNEL_EVAL=${JSON.stringify({ artifact: 'k.cu', correct: true, latency_ms: 0.002, speedup: 1234.5 })}` }] }] } },
  },
  pendingEvaluation(30),
]

// Issue 48: loop messages whose reviews came back (OK, advice), failed, or closed the run (a final
// review): the review card's words are the core's (chart.reviews), the report's the same.
const loopMessage = (seq, text) => ({ type: 'user/message', seq, time: 1_800_000_000_000 + seq, data: { message: { role: 'user', content: [{ type: 'text', text }], source: { kind: 'plugin', plugin: 'kernel-opt' } } } })
const reviewEvents = [
  ...moreEvents(3, { tag: 'rev', seq0: 10 }),
  loopMessage(40, '[kernel-loop round 1] Continue optimizing. 3/20 evaluations used.\nSupervisor review: OK. steady'),
  loopMessage(41, '[kernel-loop round 2] Continue optimizing. 3/20 evaluations used.\nSupervisor review: failed.'),
  loopMessage(42, '[kernel-loop round 3] Continue optimizing. 3/20 evaluations used.'),
  loopMessage(43, '[kernel-loop final review] 3/20 evaluations used.\nSupervisor review (advisory, from the second model):\nCheck the tail handling.\nAddress the findings'),
]

// `kopt report LOG --lang LANG` (build/kopt) into a fresh folder, for a test to open beside the tab.
async function withReports (prefix, fn) {
  const { execFileSync } = await import('node:child_process')
  const { mkdtempSync, rmSync } = await import('node:fs')
  const os = await import('node:os')
  const tmp = mkdtempSync(path.join(os.tmpdir(), prefix))
  const kbin = path.join(root, process.env.KOPT_BUILD_DIR || 'build', 'kopt')
  const report = (log, lang) => {
    const out = path.join(tmp, `r-${lang}.html`)
    execFileSync(kbin, ['report', log, '-o', out, '--lang', lang], { stdio: 'ignore' })
    return `file://${out}`
  }
  try { await fn({ tmp, report }) } finally { rmSync(tmp, { recursive: true, force: true }) }
}

let host, browser
before(async () => {
  host = await startMockHost({
    kopt,
    sessions: {
      demo: { events: demoEvents({ n: 24 }) },
      past: { events: demoEvents({ n: 5 }) },
      looping: { events: demoEvents({ n: 6, finalize: false }) },
      armed8: { events: demoEvents({ n: 6, finalize: false }) },
      plain: { preset: 'standard', events: [] },
      big: { events: bigEvents(1000) },
      // DV-13: the same payload measured by the plugin's evaluator, relayed by a shell line, read from a job …
      provenance: { events: JSON.parse(readFileSync(path.join(root, 'tests/fixtures/vectors/dv13-plugin-measured.events.json'), 'utf8')) },
      // Spec S: points with intervals (labels faster / same / unsure / slower); H-8: a refused finalize.
      noise: { events: vector('s01-compare-rule-labels') },
      refused: { events: vector('h04-final-refused-wrong') },
      // S-5: points that carry their fractions of the machine's limits (★ at 7.55 % of the bandwidth).
      limits: { events: vector('s09-limit-fractions-kept') },
      // An evaluation under way: its call logged, no result yet.
      waiting: { events: [...demoEvents({ n: 6, finalize: false }), pendingEvaluation(50_000)] },
      // Issue 48: a shell line relayed by the agent with a four-digit speedup, then an evaluation under way.
      labels: { events: labelEvents },
      reviewed: { events: reviewEvents },
    },
  })
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    timeout: 30_000,
  })
})
after(async () => { await browser?.close(); await host?.close() })

async function open (session, lang, { tab = 'kernel-opt', viewport = { width: 1400, height: 1000 } } = {}) {
  const page = await browser.newPage({ viewport, acceptDownloads: true })
  page.setDefaultTimeout(10_000)
  const errors = []
  page.on('pageerror', e => errors.push(e.message))
  await page.goto(`${host.url}/?session=${session}&lang=${lang}&tab=${tab}`)
  return { page, errors }
}

test('lib/client.js registers under the package name and requires only the host module table', async () => {
  const { readFileSync } = await import('node:fs')
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  const src = readFileSync(path.join(root, 'lib/client.js'), 'utf8')
  assert.match(src, new RegExp(`id: '${pkg.name}'`))
  if (pkg.exports) assert.equal(pkg.exports['./client'], './lib/client.js')
  const allowed = new Set(['react', 'react/jsx-runtime', 'react-dom', 'react-dom/client', '@deepseek-ai/cordis', '@deepseek-ai/dsh-client-ui-slots', '@deepseek-ai/dsh-client-ui-primitives'])
  const reqs = [...src.matchAll(/require\('([^']+)'\)/g)].map(m => m[1])
  assert.ok(reqs.length >= 2)
  for (const r of reqs) assert.ok(allowed.has(r), `not in the module table: ${r}`)
})

describe('评测 tab (shell stand-in)', { timeout: 120_000 }, () => {
  test('the tab is present in kernel-opt sessions, and elsewhere only once a signal appears', async () => {
    const { page, errors } = await open('demo', 'zh', { tab: 'chat' })
    await page.getByRole('tab', { name: '评测' }).waitFor()
    await page.close()

    const p2 = await open('plain', 'en', { tab: 'chat' })
    await p2.page.waitForTimeout(1200)
    assert.equal(await p2.page.getByRole('tab', { name: 'Evaluations' }).count(), 0, 'no tab without a signal')
    host.append('plain', demoEvents({ n: 2, rounds: false, finalize: false }).map(e => ({ ...e })))
    await p2.page.getByRole('tab', { name: 'Evaluations' }).waitFor({ timeout: 8000 })
    await p2.page.close()
    assert.deepEqual(errors, [])
  })

  test('a past session still being read: the tab shows 正在读取… / loading… and asks again until the body', async () => {
    for (const [lang, text] of [['zh', '正在读取…'], ['en', 'loading…']]) {
      host.state.get('past').loading = 2
      const { page, errors } = await open('past', lang)
      const loading = page.locator('[data-kopt=loading]')
      await loading.waitFor()
      assert.equal(await loading.innerText(), text)
      await page.waitForSelector('[data-kopt=chart]', { timeout: 8000 })
      assert.equal(host.state.get('past').loading, 0, 'asked again after each 202')
      assert.equal(await loading.count(), 0)
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('points and markers are drawn; keyboard selection opens the popover; Esc closes it', async () => {
    const { page, errors } = await open('demo', 'en')
    await page.waitForSelector('[data-kopt=chart]')
    const series = JSON.parse(host.state.get('demo').body)
    const n = series.iterations.length
    assert.equal(Number(await page.locator('[data-kopt=points]').getAttribute('data-n')), n)
    assert.equal(await page.locator('[data-kopt=best]').count(), 1)
    assert.ok(await page.locator('[data-kopt=finalized]').count() >= 1)
    assert.equal(await page.locator('[data-kopt=profiled]').count(), series.profileSeqs.length)
    const pointsG = page.locator('[data-kopt=points]')
    const hollowRed = Number(await pointsG.getAttribute('data-failed')) + Number(await pointsG.getAttribute('data-unmeasured-failed'))
    assert.ok(hollowRed >= 2, `failed points drawn hollow red (${hollowRed})`)
    assert.match(await page.locator('[data-kopt=chips]').innerText(), /best .*×/)
    assert.match(await page.locator('[data-kopt=chip-final]').innerText(), /re-measured/)
    await page.locator('[data-kopt=chart]').focus()
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight')
    await page.keyboard.press('Enter')
    const pop = page.locator('[data-kopt=popover]')
    await pop.waitFor()
    const text = await pop.innerText()
    assert.match(text, /#3/)
    assert.match(text, /Approach in force/)
    assert.match(text, /relayed by the agent|returned by the evaluator tool/)
    await page.keyboard.press('Escape')
    await pop.waitFor({ state: 'detached' })
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('the popover of every point stays inside the chart box, low points open upwards (zh and en)', async () => {
    for (const [lang, viewport] of [['zh', { width: 1200, height: 700 }], ['en', { width: 700, height: 560 }]]) {
      const { page, errors } = await open('demo', lang, { viewport })
      await page.waitForSelector('[data-kopt=chart]')
      const n = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
      await page.locator('[data-kopt=chart]').focus()
      let upwards = 0
      for (let i = 0; i < n; i++) {
        await page.keyboard.press('ArrowRight')
        const pop = page.locator('[data-kopt=popover]')
        await pop.waitFor()
        const g = await pop.evaluate(el => {
          const r = el.getBoundingClientRect()
          const box = el.offsetParent.getBoundingClientRect()
          return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, boxTop: box.top, boxBottom: box.bottom, boxLeft: box.left, boxRight: box.right, up: el.style.bottom !== '' }
        })
        assert.ok(g.top >= g.boxTop - 1 && g.bottom <= g.boxBottom + 1, `${lang} point ${i + 1}: popover ${g.top}–${g.bottom} outside the chart box ${g.boxTop}–${g.boxBottom}`)
        assert.ok(g.left >= g.boxLeft - 1 && g.right <= g.boxRight + 1, `${lang} point ${i + 1}: popover ${g.left}–${g.right} outside ${g.boxLeft}–${g.boxRight}`)
        if (g.up) upwards++
      }
      assert.ok(upwards >= 1, `${lang}: some low point opens upwards`)
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('hover: moving through the popover keeps it; reaching another point switches it', async () => {
    const { page, errors } = await open('demo', 'en', { viewport: { width: 1200, height: 800 } })
    await page.waitForSelector('[data-kopt=chart]')
    const series = JSON.parse(host.state.get('demo').body)
    // Screen position of point i: the core's frame (docs/protocol.md), then the SVG's own transform.
    const c = series.chart
    const at = (i) => page.evaluate(([x, y]) => {
      const svg = document.querySelector('[data-kopt=chart]')
      const p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM())
      return { x: p.x, y: p.y }
    }, [c.frame.x0 + c.frame.dx * i, c.points[i].v === undefined ? c.baselineY : c.frame.y0 + c.frame.dy * c.points[i].v])
    const a = await at(1)
    await page.mouse.move(a.x, a.y)
    const pop = page.locator('[data-kopt=popover]')
    await pop.waitFor()
    assert.match(await pop.innerText(), /^#2/)
    const box = await pop.boundingBox()
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 8 })
    await page.waitForTimeout(150)
    assert.equal(await pop.count(), 1, 'the popover stays while the pointer is on it')
    // A point the popover does not cover: the pointer comes back into the chart there and the popover switches.
    let target = -1
    for (let i = series.chart.points.length - 1; i > 2; i--) {
      const p = await at(i)
      const b = await pop.boundingBox()
      if (p.x < b.x - 4 || p.x > b.x + b.width + 4 || p.y < b.y - 4 || p.y > b.y + b.height + 4) { target = i; break }
    }
    assert.ok(target > 0, 'a point outside the popover')
    const b = await at(target)
    await page.mouse.move(b.x, b.y, { steps: 8 })
    await page.waitForFunction((want) => (document.querySelector('[data-kopt=popover]')?.innerText ?? '').startsWith(want), `#${target + 1}`, { timeout: 4000 })
    // Leaving both for the page outside closes it.
    await page.mouse.move(2, 2, { steps: 4 })
    await pop.waitFor({ state: 'detached', timeout: 4000 })
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a failed row shows its error in the popover and in the full record (zh and en)', async () => {
    for (const lang of ['zh', 'en']) {
      const { page, errors } = await open('demo', lang)
      await page.waitForSelector('[data-kopt=chart]')
      const series = JSON.parse(host.state.get('demo').body)
      const failed = series.iterations.findIndex(it => typeof it.error === 'string' && it.error.length > 0)
      assert.ok(failed >= 0, 'the demo has a failed row with an error')
      const want = series.iterations[failed].error
      await page.locator('[data-kopt=full-record]').click()
      const cell = page.locator('[data-kopt=full-table] [data-kopt=row-error]').first()
      await cell.waitFor()
      assert.equal(await cell.innerText(), want.length > 240 ? `${want.slice(0, 240)}…` : want)
      assert.equal(await cell.getAttribute('title'), want)
      await page.locator('[data-kopt=chart]').focus()
      for (let i = 0; i <= failed; i++) await page.keyboard.press('ArrowRight')
      assert.ok((await page.locator('[data-kopt=popover]').innerText()).includes(want))
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('the finalize gap: the ⚑ chip and the self-reported point\'s popover show the re-measured figure and the gap (zh and en)', async () => {
    for (const [lang, words] of [['zh', /自报 .*复测相差 \+0\.6%/], ['en', /self-reported .*re-measured \+0\.6% off/]]) {
      const { page, errors } = await open('demo', lang)
      await page.waitForSelector('[data-kopt=chart]')
      const fin = JSON.parse(host.state.get('demo').body).chart.final
      assert.equal(fin.remeasured, true)
      assert.equal(fin.gapFlag, false, 'the demo replay is 0.6 % off: shown, not flagged')
      const gap = page.locator('[data-kopt=chip-final] [data-kopt=final-gap]')
      assert.match(await gap.innerText(), words)
      assert.equal(await gap.getAttribute('data-flag'), '0')
      await page.locator('[data-kopt=chart]').focus()
      for (let i = 0; i <= fin.selfReported.index; i++) await page.keyboard.press('ArrowRight')
      assert.match(await page.locator('[data-kopt=popover] [data-kopt=pop-gap]').innerText(), /\+0\.6%/)
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('intervals: whiskers for the points that carry one, and the popover and the record say faster / same as ★ in the core\'s words (zh and en, 1100×720 and 1440×900)', async () => {
    const want = {
      zh: { faster: '比此前的最佳 ★ 快 25.0% ± 1.0', same: '与此前的最佳 ★ 相同（差异在噪声内，0.7% ± 0.1）' },
      en: { faster: 'faster than the ★ before it by 25.0% ± 1.0', same: 'same as the ★ before it within noise (0.7% ± 0.1)' },
    }
    for (const viewport of [{ width: 1100, height: 720 }, { width: 1440, height: 900 }]) {
      for (const lang of ['zh', 'en']) {
        const { page, errors } = await open('noise', lang, { viewport })
        await page.waitForSelector('[data-kopt=chart]')
        // Six of the seven points carry an interval (#4 does not); one whisker path per run of points.
        assert.equal(await page.locator('[data-kopt=whiskers]').getAttribute('data-n'), '6')
        assert.equal(await page.locator('[data-kopt=whiskers] path').count(), 1)
        await page.locator('[data-kopt=chart]').focus()
        await page.keyboard.press('ArrowRight') // #1
        await page.keyboard.press('ArrowRight') // #2: 25 % faster than #1, beyond the noise
        const pop = page.locator('[data-kopt=popover]')
        assert.equal(await pop.locator('[data-kopt=pop-vs-best]').getAttribute('data-v'), 'faster')
        assert.ok((await pop.locator('[data-kopt=pop-vs-best]').innerText()).includes(want[lang].faster), lang)
        assert.match(await pop.locator('[data-kopt=pop-ci]').innerText(), /1\.499ms – 1\.501ms/)
        // The popover stays inside the chart's box at this size.
        const box = await page.locator('[data-kopt=chart]').boundingBox(), pb = await pop.boundingBox()
        assert.ok(pb.x >= box.x - 1 && pb.x + pb.width <= box.x + box.width + 1, `${lang} ${viewport.width}: popover inside the chart horizontally`)
        await page.keyboard.press('ArrowRight') // #3: 0.7 % faster, under the minimum effect: same
        assert.ok((await pop.locator('[data-kopt=pop-vs-best]').innerText()).includes(want[lang].same), lang)
        await page.keyboard.press('Escape')
        const rows = page.locator('[data-kopt=records] [data-kopt=row-vs]')
        assert.ok((await rows.allInnerTexts()).some(x => x.includes(lang === 'zh' ? '比此前的最佳 ★ 慢' : 'slower than the ★ before it')), 'the record names the slower row')
        await page.screenshot({ path: path.join(artifacts, `noise-${lang}-${viewport.width}.png`) })
        assert.deepEqual(errors, [])
        await page.close()
      }
    }
  })

  test('distance to the limit: the popover says the fractions in the core\'s words and the curve draws ★\'s limit line (zh and en, 1100×720 and 1440×900)', async () => {
    const want = {
      zh: { bw: '占内存带宽上限的 62%', cf: '占算力峰值的 31%', line: '内存带宽 100% 75.5µs （在图的上方）' },
      en: { bw: '62% of memory bandwidth', cf: '31% of the compute peak', line: '100 % of memory bandwidth 75.5µs (above the plot)' },
    }
    for (const viewport of [{ width: 1100, height: 720 }, { width: 1440, height: 900 }]) {
      for (const lang of ['zh', 'en']) {
        const { page, errors } = await open('limits', lang, { viewport })
        await page.waitForSelector('[data-kopt=chart]')
        const label = page.locator('[data-kopt=limit-line] [data-kopt=limit-label]')
        assert.equal(await label.textContent(), want[lang].line)
        const plot = JSON.parse(host.state.get('limits').body).chart.plot
        assert.equal(await page.locator('[data-kopt=limit-line] line').getAttribute('y1'), String(plot.top))
        await page.locator('[data-kopt=chart]').focus()
        await page.keyboard.press('ArrowRight') // #1: 62 % of the bandwidth, 31 % of the compute peak
        const pop = page.locator('[data-kopt=popover]')
        assert.equal(await pop.locator('[data-kopt=pop-bandwidth]').innerText(), want[lang].bw)
        assert.equal(await pop.locator('[data-kopt=pop-compute]').innerText(), want[lang].cf)
        const box = await page.locator('[data-kopt=chart]').boundingBox(), pb = await pop.boundingBox()
        assert.ok(pb.x >= box.x - 1 && pb.x + pb.width <= box.x + box.width + 1, `${lang} ${viewport.width}: popover inside the chart horizontally`)
        await page.keyboard.press('ArrowRight') // #2 (★): the bandwidth only
        assert.match(await pop.locator('[data-kopt=pop-bandwidth]').innerText(), /7\.55%/)
        assert.equal(await pop.locator('[data-kopt=pop-compute]').count(), 0)
        await page.screenshot({ path: path.join(artifacts, `limits-${lang}-${viewport.width}.png`) })
        assert.deepEqual(errors, [])
        await page.close()
      }
    }
  })

  test('one table of words: the tab\'s record table and the report say the same speedup label, pending word and provenance word (zh and en)', async () => {
    const cells = (page, scope) => page.locator(`${scope} [data-kopt=row]`).evaluateAll(rows => rows.map(r => ({
      n: (r.querySelector('td')?.textContent ?? '').match(/#(\d+)/)?.[1],
      verdict: r.querySelector('[data-kopt=row-verdict]')?.textContent.trim(),
      speedup: r.querySelector('[data-kopt=row-speedup]')?.textContent.trim(),
      trust: r.querySelector('[data-kopt=row-trust], [data-kopt^=trust-]')?.textContent.trim(),
    })))
    await withReports('kopt-labels-', async ({ tmp, report: reportOf }) => {
      const log = path.join(tmp, 'labels.events.json')
      writeFileSync(log, JSON.stringify(labelEvents))
      for (const lang of ['zh', 'en']) {
        const { page, errors } = await open('labels', lang)
        await page.waitForSelector('[data-kopt=chart]')
        await page.locator('[data-kopt=full-record]').click()
        const tab = await cells(page, '[data-kopt=full-table]')
        // The legend's and the record table's headers: page words of the one table (kopt/labels.hpp).
        // (its first six: the markers; the entries after them are the tab's own, the interval's and the limit's)
        const tabLegend = (await page.locator('.kopt-legend > span').allInnerTexts()).slice(0, 6)
        const tabHeads = await page.locator('[data-kopt=full-table] thead th').allInnerTexts()
        await page.goto(reportOf(log, lang))
        const report = await cells(page, '')
        const reportLegend = (await page.locator('.legend > span').allInnerTexts()).slice(0, 6)
        const reportHeads = await page.locator('table.rec thead th').allInnerTexts()
        assert.equal(tabLegend.length, 6, `${lang}: six marker entries in the tab's legend`)
        assert.deepEqual(reportLegend.map(s => s.trim()).map((s, i) => s.startsWith(tabLegend[i]?.trim())), tabLegend.map(() => true),
          `${lang}: the report's legend «${reportLegend.join(' | ')}» begins with the tab's words «${tabLegend.join(' | ')}»`)
        for (const w of lang === 'zh' ? ['结论', '延迟', '加速比', '该轮监督', '改动'] : ['Verdict', 'Latency', 'Speedup', 'Supervision', 'Changes']) {
          assert.ok(tabHeads.some(h => h.trim() === w), `${lang}: the tab's header «${w}» (${tabHeads.join(' | ')})`)
          assert.ok(reportHeads.some(h => h.trim().startsWith(w)), `${lang}: the report's header «${w}» (${reportHeads.join(' | ')})`)
        }
        assert.equal(tab.length, 4, 'four rows in the tab')
        assert.equal(report.length, 4, 'four rows in the report')
        for (const [i, row] of tab.entries()) {
          const r = report.find(x => x.n === row.n)
          assert.ok(r, `${lang}: row #${row.n} in the report`)
          // The Chinese report puts the English beside the shared word; the word itself is the same.
          for (const k of ['verdict', 'trust']) assert.ok(r[k].includes(row[k]) && row[k], `${lang} #${row.n} ${k}: the report says «${r[k]}», the tab «${row[k]}» (${i})`)
          assert.equal(r.speedup.replace(/^\(.*\)$/, ''), row.speedup, `${lang} #${row.n}: the speedup's label`)
        }
        const big = tab.find(x => x.speedup === '×1230')
        assert.ok(big, `${lang}: the speedup of 1234.5 reads ×1230 in both`)
        assert.equal(big.trust, lang === 'zh' ? 'Agent 转述的测量' : 'relayed by the agent')
        assert.ok(tab.some(x => x.verdict === (lang === 'zh' ? '未完成' : 'pending')), `${lang}: the evaluation under way`)
        assert.deepEqual(errors, [])
        await page.close()
      }
    })
  })

  test('the review card: the core lists the reviews (a failed one too) and names each, and the report says the same (zh and en)', async () => {
    await withReports('kopt-reviews-', async ({ tmp, report: reportOf }) => {
      const log = path.join(tmp, 'reviews.events.json')
      writeFileSync(log, JSON.stringify(reviewEvents))
      for (const lang of ['zh', 'en']) {
        const { page, errors } = await open('reviewed', lang)
        await page.waitForSelector('[data-kopt=reviews] .kopt-rev')
        const tab = await page.locator('[data-kopt=reviews] .kopt-rev').evaluateAll(rs => rs.map(r => [...r.children].map(c => c.textContent.trim())))
        // Newest first: the final review, the failed round 2, round 1's OK; round 3 had no review.
        assert.deepEqual(tab.map(r => r[0]), lang === 'zh' ? ['终审', '第 2 轮', '第 1 轮'] : ['Final review', 'Round 2', 'Round 1'])
        assert.equal(tab[1][1], lang === 'zh' ? '监督失败' : 'Review failed')
        await page.goto(reportOf(log, lang))
        const report = await page.locator('[data-kopt=review]').evaluateAll(rs => rs.map(r => [...r.children].map(c => c.textContent.trim())))
        assert.equal(report.length, tab.length, `${lang}: the report lists the same reviews`)
        for (const [i, row] of [...report].reverse().entries()) {
          assert.ok(row[0].startsWith(tab[i][0]), `${lang}: the report's «${row[0]}» names the tab's «${tab[i][0]}»`)
          assert.ok(row[1].startsWith(tab[i][1].split(' — ')[0]), `${lang}: the report's «${row[1]}» says the tab's «${tab[i][1]}»`)
        }
        assert.deepEqual(errors, [])
        await page.close()
      }
    })
  })

  test('a refused finalize: the tab\'s ⚑ chip and the report say the same words, and neither shows the refused number (zh and en)', async () => {
    await withReports('kopt-refused-', async ({ report }) => {
      for (const lang of ['zh', 'en']) {
        const { page, errors } = await open('refused', lang)
        await page.waitForSelector('[data-kopt=chart]')
        const chip = page.locator('[data-kopt=chip-final-refused]')
        assert.equal(await chip.getAttribute('data-reason'), 'wrong')
        const tabWords = (await chip.innerText()).replace(/^⚑\s*/, '').replace(/\s*·\s*#\d+$/, '')
        assert.ok(!(await page.locator('[data-kopt=chips]').innerText()).includes('1.000ms'), 'the refused 1 ms is no headline')
        await page.goto(report(path.join(root, 'tests/fixtures/vectors/h04-final-refused-wrong.events.json'), lang))
        const reportWords = await page.locator('[data-kopt=final-refused]').first().innerText()
        assert.ok(reportWords.includes(tabWords), `${lang}: the report says «${reportWords}», the tab «${tabWords}»`)
        assert.deepEqual(errors, [])
        await page.close()
      }
    })
  })

  test('the popover names who measured: the plugin\'s evaluator (with the bytes) vs a shell line relayed by the agent (zh and en)', async () => {
    // The plugin's own evaluation of this session under way (control.evaluation): the chip with its stage.
    host.state.get('provenance').control.evaluation = { state: 'running', stage: 'judge', since: Date.now() - 3000 }
    for (const [lang, plugin, relayed, chip] of [['zh', /✓ 插件评测器实测/, /Agent 转述的测量/, /插件评测中 · 评测 · [0-9.]+ s/],
      ['en', /✓ measured by the plugin's evaluator/, /relayed by the agent/, /plugin's evaluator running · judging · [0-9.]+ s/]]) {
      const { page, errors } = await open('provenance', lang)
      await page.waitForSelector('[data-kopt=chart]')
      assert.match(await page.locator('[data-kopt=chip-evaluation]').innerText(), chip)
      const series = JSON.parse(host.state.get('provenance').body)
      const pluginAt = series.iterations.findIndex(it => it.trust === 'plugin' && it.sources)
      const shellAt = series.iterations.findIndex(it => it.trust === 'self-reported')
      assert.ok(pluginAt >= 0 && shellAt > pluginAt)
      await page.locator('[data-kopt=chart]').focus()
      for (let i = 0; i <= pluginAt; i++) await page.keyboard.press('ArrowRight')
      const trust = page.locator('[data-kopt=popover] [data-kopt=pop-trust]')
      assert.equal(await trust.getAttribute('data-trust'), 'plugin')
      assert.match(await trust.innerText(), plugin)
      assert.match(await page.locator('[data-kopt=popover] [data-kopt=pop-sources]').innerText(), /solution\/k\.cpp · aaaaaaaaaaaa…/)
      for (let i = pluginAt; i < shellAt; i++) await page.keyboard.press('ArrowRight')
      assert.equal(await trust.getAttribute('data-trust'), 'self-reported')
      assert.match(await trust.innerText(), relayed)
      assert.doesNotMatch(await trust.innerText(), /✓/)
      assert.equal(await page.locator('[data-kopt=popover] [data-kopt=pop-sources]').count(), 0)
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('live updates keep the selection and the scroll position; polling sends If-None-Match', async () => {
    const { page } = await open('demo', 'en', { viewport: { width: 1200, height: 700 } })
    await page.waitForSelector('[data-kopt=chart]')
    await page.locator('[data-kopt=chart]').focus()
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight')
    await page.locator('[data-kopt=popover]').waitFor()
    await page.locator('[data-kopt=panel]').evaluate(el => { el.scrollTop = 180 })
    const before = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
    host.append('demo', moreEvents(3, { tag: 'live', seq0: 10_000 }))
    await page.waitForFunction(b => Number(document.querySelector('[data-kopt=points]').dataset.n) > b, before, { timeout: 8000 })
    assert.match(await page.locator('[data-kopt=popover]').innerText(), /#5/)
    assert.equal(await page.locator('[data-kopt=panel]').evaluate(el => el.scrollTop), 180)
    await page.waitForTimeout(1700)
    assert.ok(host.log.some(l => l.path === 'series' && l.id === 'demo' && l.inm), 'If-None-Match sent')
    assert.ok(host.log.some(l => l.path === 'series' && l.id === 'demo' && /^\d+$/.test(l.since ?? '')), 'the tab polls with since=<revision> (docs/protocol.md)')
    await page.close()
  })

  test('a new fastest point stretches the y axis: the frame moves, the points drawn before stay as they were', async () => {
    const { page, errors } = await open('demo', 'en')
    await page.waitForSelector('[data-kopt=chart]')
    const dots = page.locator('[data-kopt=points] > g[transform]')
    const first = dots.locator('path').first()
    await first.evaluate(el => { el.__kept = true })
    const d0 = await first.getAttribute('d')
    const t0 = await dots.getAttribute('transform')
    const scale0 = JSON.parse(host.state.get('demo').body).chart.scale
    const before = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
    host.append('demo', moreEvents(1, { tag: 'fastest', seq0: 20_000, latency: 0.2 }))
    await page.waitForFunction(b => Number(document.querySelector('[data-kopt=points]').dataset.n) > b, before, { timeout: 8000 })
    const chart = JSON.parse(host.state.get('demo').body).chart
    assert.equal(chart.scale, scale0, 'the same scale (a change of scale rewrites every point)')
    assert.notEqual(await dots.getAttribute('transform'), t0, 'the y axis stretched')
    assert.equal(await first.evaluate(el => el.__kept === true), true, 'the same DOM node')
    // The demo's points fit in one run of 256: the new point is appended to the same path.
    assert.ok((await first.getAttribute('d')).startsWith(d0), 'the points before are drawn as they were')
    // The new point is the highest one, inside the plot.
    const ys = chart.points.filter(p => p.v !== undefined).map(p => chart.frame.y0 + chart.frame.dy * p.v)
    const top = ys.at(-1)
    assert.ok(ys.every(y => y >= top - 1e-9) && top >= chart.plot.top, JSON.stringify({ top, plot: chart.plot }))
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('an evaluation under way pulses a few times, then stays marked without animating (no frames while a run waits)', async () => {
    const { page, errors } = await open('waiting', 'en')
    await page.waitForSelector('[data-kopt=chart]')
    assert.equal(await page.locator('[data-kopt=points]').getAttribute('data-pending'), '1')
    const chip = page.locator('[data-kopt=chips] .kopt-pulse')
    assert.equal(await chip.innerText(), 'evaluating…')
    for (const el of [chip, page.locator('[data-kopt=points] path.kopt-pulse')]) {
      assert.deepEqual(await el.evaluate(e => [getComputedStyle(e).animationName, getComputedStyle(e).animationIterationCount]), ['kopt-pulse', '3'], 'it pulses, three times')
    }
    // An endless pulse cost each open tab ≈ 130 ms of Chromium CPU per second (docs/performance.md).
    await page.waitForFunction(() => document.getAnimations().every(a => a.playState !== 'running'), null, { timeout: 8000 })
    assert.equal(await chip.innerText(), 'evaluating…', 'still marked')
    assert.equal(await page.locator('[data-kopt=points]').getAttribute('data-pending'), '1')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('focus mode fills the window and Esc returns', async () => {
    const { page } = await open('demo', 'zh')
    await page.locator('[data-kopt=focus]').click()
    const box = await page.locator('[data-kopt=panel]').boundingBox()
    assert.equal(await page.locator('[data-kopt=panel]').getAttribute('data-focus'), '1')
    assert.ok(box.width >= 1399 && box.height >= 999, JSON.stringify(box))
    await page.screenshot({ path: path.join(artifacts, 'focus-zh.png') })
    await page.keyboard.press('Escape')
    assert.equal(await page.locator('[data-kopt=panel]').getAttribute('data-focus'), '0')
    await page.close()
  })

  test('the launcher opens a card inside the viewport and starts the loop; the strip shows and stops it', async () => {
    const { page } = await open('looping', 'zh', { tab: 'chat', viewport: { width: 1000, height: 560 } })
    await page.locator('[data-kopt=launcher-button]').click()
    const card = page.locator('[data-kopt=launcher-card]')
    await card.waitFor()
    await page.waitForTimeout(100)
    const box = await card.boundingBox()
    assert.ok(box.y >= 0 && box.y + box.height <= 560 && box.x >= 0 && box.x + box.width <= 1000, JSON.stringify(box))
    await page.screenshot({ path: path.join(artifacts, 'launcher-zh.png') })
    await card.locator('[data-kopt=budget]').fill('8')
    await card.locator('[data-kopt=launcher-start]').click()
    await card.waitFor({ state: 'detached' })
    const arm = host.log.filter(l => l.path === 'control' && l.action === 'loop-arm').at(-1)
    assert.equal(arm.budget, 8)
    assert.equal(arm.outputLanguage, 'zh')
    const strip = page.locator('[data-kopt=strip]')
    await strip.waitFor()
    assert.match(await strip.innerText(), /\/8/)
    assert.equal(await page.locator('[data-kopt=launcher-button]').count(), 0, 'no launcher while the loop runs')
    await page.screenshot({ path: path.join(artifacts, 'strip-zh.png') })
    // supervision is locked while the loop runs
    await page.getByRole('tab', { name: '评测' }).click()
    assert.equal(await page.locator('[data-kopt=sup-model]').isDisabled(), true)
    await strip.locator('[data-kopt=strip-stop]').click()
    await strip.waitFor({ state: 'detached' })
    assert.match(await page.locator('[data-kopt=loop-status]').innerText(), /手动停止/)
    await page.close()
  })

  test('a loop armed elsewhere (/kloop 8) shows its own budget in the tab, not the default', async () => {
    const r = await fetch(`${host.url}/plugins/kernel-opt/control`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: 'armed8', action: 'loop-arm', budget: 8 }),
    })
    assert.equal(r.status, 200)
    const { page } = await open('armed8', 'zh')
    await page.locator('[data-kopt=loop-status]').waitFor()
    await page.waitForFunction(() => /8/.test(document.querySelector('[data-kopt=loop-status]')?.textContent ?? ''))
    const field = page.locator('[data-kopt=panel] [data-kopt=budget]')
    assert.equal(await field.inputValue(), '8')
    assert.equal(await field.isDisabled(), true)
    await page.close()
  })

  test('export: CSV, JSON, markdown and SVG', async () => {
    const { page } = await open('demo', 'en')
    await page.waitForSelector('[data-kopt=chart]')
    for (const [label, ext] of [['Run as CSV', 'csv'], ['Run as JSON', 'json'], ['Markdown table (for a PR)', 'md'], ['Curve as SVG', 'svg']]) {
      await page.locator('[data-kopt=export]').click()
      const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: label }).click()])
      assert.ok(dl.suggestedFilename().endsWith(`.${ext}`))
      const file = path.join(artifacts, `export.${ext}`)
      await dl.saveAs(file)
      // The CSV is the core's: the offline report's columns, one line per evaluation.
      if (ext === 'csv') {
        const lines = readFileSync(file, 'utf8').trimEnd().split('\r\n')
        assert.match(lines[0], /^index,seq,tool,phase,verdict,trust,compiled,correct,latencyMs,speedup,pooledSpeedup,best,/)
        assert.ok(lines.length > 10, `${lines.length} lines`)
        assert.match(lines[0], /,latencyCiLo,latencyCiHi,referenceCiLo,referenceCiHi,samples,vsBest,vsBestOf,/)
      }
      // The JSON is the core's too (kopt report --json): its rows beside the series.
      if (ext === 'json') {
        const j = JSON.parse(readFileSync(file, 'utf8'))
        assert.equal(j.kind, 'kopt-report')
        assert.equal(j.rows.length, j.series.iterations.length)
      }
      if (ext === 'md') assert.match(readFileSync(file, 'utf8'), /^### Kernel optimization run · demo\n\n\| # \| approach \| latency \(median\) \| interval \|/)
    }
    await page.close()
  })

  test('export (issue 49): the points\' intervals and labels in the CSV and the markdown table, in the tab\'s language', async () => {
    for (const [lang, label, faster] of [['zh', 'Markdown 表格（可贴进 PR）', '更快 25.0% ± 1.0 · #1'], ['en', 'Markdown table (for a PR)', 'faster 25.0% ± 1.0 · #1']]) {
      const { page, errors } = await open('noise', lang)
      await page.waitForSelector('[data-kopt=chart]')
      await page.locator('[data-kopt=export]').click()
      const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: label }).click()])
      assert.ok(dl.suggestedFilename().endsWith('.md'))
      const md = readFileSync(await dl.path(), 'utf8')
      assert.ok(md.includes(`| 2 |  | 1.500ms | ± 0.1% | 25 | ${faster} |`), md)
      assert.equal(md, (await (await fetch(`${host.url}/plugins/kernel-opt/markdown?sessionId=noise&lang=${lang}`)).text()))
      await page.locator('[data-kopt=export]').click()
      const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('[data-kopt=export-csv]').click()])
      const [head, , second] = readFileSync(await csv.path(), 'utf8').split('\r\n').map(l => l.split(','))
      const at = (k) => second[head.indexOf(k)]
      assert.deepEqual([at('latencyCiLo'), at('latencyCiHi'), at('samples'), at('vsBest'), at('vsBestOf'), at('vsReference')], ['1.499', '1.501', '25', 'faster', '1', 'faster'])
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('screenshots in 中文 and English', async () => {
    for (const lang of ['zh', 'en']) {
      const { page, errors } = await open('demo', lang)
      await page.waitForSelector('[data-kopt=chart]')
      await page.locator('[data-kopt=chart]').focus()
      for (let i = 0; i < 23; i++) await page.keyboard.press('ArrowRight')
      await page.keyboard.press('Enter')
      await page.waitForTimeout(200)
      await page.screenshot({ path: path.join(artifacts, `tab-${lang}.png`) })
      await page.keyboard.press('Escape')
      await page.locator('[data-kopt=full-record]').click()
      await page.locator('[data-kopt=full-table]').waitFor()
      await page.locator('[data-kopt=records]').scrollIntoViewIfNeeded()
      await page.screenshot({ path: path.join(artifacts, `records-${lang}.png`) })
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('full-record headers stay on one line in a narrow tab (zh and en)', async () => {
    for (const lang of ['zh', 'en']) {
      const { page, errors } = await open('demo', lang, { viewport: { width: 480, height: 900 } })
      await page.locator('[data-kopt=full-record]').click()
      await page.locator('[data-kopt=full-table]').waitFor()
      // Every header of the full record is one line (zh headers once wrapped one character per line).
      const heads = await page.locator('[data-kopt=full-table] th').evaluateAll(ths => ths.map(th => {
        const lh = parseFloat(getComputedStyle(th).lineHeight) || parseFloat(getComputedStyle(th).fontSize) * 1.5
        const r = th.getBoundingClientRect(), cs = getComputedStyle(th)
        return { text: th.textContent, h: r.height - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) - parseFloat(cs.borderBottomWidth), lh }
      }))
      assert.ok(heads.length > 3, `${lang}: full-record headers found`)
      for (const x of heads) assert.ok(x.h < x.lh * 1.6, `${lang}: header ${x.text} is one line (${x.h.toFixed(1)} px, line ${x.lh.toFixed(1)} px)`)
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  // A smoke test: the update is measured through the performance API and recorded (bench.txt). The
  // target (<= 16 ms at 20k points, <= 50 ms at 50k) is held by bench/tab/run.mjs (docs/performance.md);
  // the 50 ms bound here only catches an update gone badly wrong on a loaded machine.
  test('smoke: update time of a 1,000-point session (performance API; the 16 ms target is bench/tab\'s)', async () => {
    const { page } = await open('big', 'en')
    await page.waitForSelector('[data-kopt=chart]', { timeout: 20_000 })
    assert.ok(Number(await page.locator('[data-kopt=points]').getAttribute('data-n')) >= 1000)
    await page.evaluate(() => { window.__koptUpdates = [] })
    for (let k = 0; k < 8; k++) {
      host.append('big', moreEvents(1, { tag: `b${k}`, seq0: 900_000 + k * 10 }))
      await page.waitForFunction(c => (window.__koptUpdates || []).length > c, k, { timeout: 8000 })
    }
    const ups = await page.evaluate(() => window.__koptUpdates.map(u => u.ms))
    console.log('parse ms', await page.evaluate(() => window.__koptUpdates.map(u => u.parseMs.toFixed(1)).join(' ')))
    const measures = await page.evaluate(() => performance.getEntriesByName('kopt-update').length)
    const sorted = [...ups].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]
    const line = `BENCH kopt-update 1000+ points: median ${median.toFixed(2)} ms, max ${sorted.at(-1).toFixed(2)} ms over ${ups.length} updates (smoke bound 50 ms; the target is bench/tab's)`
    console.log(line)
    writeFileSync(path.join(artifacts, 'bench.txt'), line + '\n')
    assert.ok(measures >= ups.length)
    assert.ok(median <= 50, line)
    await page.close()
  })

  test('the update records stay bounded through a long run', async () => {
    const { page } = await open('big', 'en')
    await page.waitForSelector('[data-kopt=chart]', { timeout: 20_000 })
    // As if the tab had been open through 300 updates already.
    await page.evaluate(() => {
      window.__koptUpdates = Array.from({ length: 300 }, () => ({ ms: 1, parseMs: 0, points: 0 }))
      for (let i = 0; i < 300; i++) performance.measure('kopt-update', { start: 0, duration: 1 })
    })
    const n = Number(await page.locator('[data-kopt=points]').getAttribute('data-n'))
    host.append('big', moreEvents(1, { tag: 'bound', seq0: 950_000 }))
    await page.waitForFunction(c => Number(document.querySelector('[data-kopt=points]').getAttribute('data-n')) > c, n, { timeout: 8000 })
    await page.waitForFunction(c => window.__koptUpdates.at(-1).points > c, n, { timeout: 8000 })
    const [kept, measures] = await page.evaluate(() => [window.__koptUpdates.length, performance.getEntriesByName('kopt-update', 'measure').length])
    assert.equal(kept, 256)
    assert.ok(measures >= 1 && measures <= 256, `${measures} kopt-update measures`)
    await page.close()
  })
})
