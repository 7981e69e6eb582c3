// 对比 / Compare in the 评测 tab, headless Chromium against the shell stand-in and the plugin's own
// compare route (lib/routes/compare.mjs) over sessions projected by the real core: picking sessions, the
// overlay (every point reachable by a click and named by its session, colours told apart, tick labels
// clear of each other, zh and en), the comparability rule on the axis with its reason, an unreadable
// session's row, a live session updating while compared; and the laptop sizes (1100×720, 1440×900):
// the tab opens at its top, a scrolled position comes back, the chart's text keeps its pixel size.
//   node --test tests/browser/compare.test.mjs     (KOPT_TEST_ADDON, CHROMIUM, KOPT_ARTIFACTS optional)
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { CHROMIUM_ARGS } from './lib/chromium.mjs'
import { demoEvents, moreEvents } from './lib/demo-run.mjs'
import { startMockHost } from './lib/mock-host.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const { kopt } = await import('../addon/addon.mjs') // the test build: the mock host reads body() and delta()
const artifacts = process.env.KOPT_ARTIFACTS || path.join(here, 'artifacts')
mkdirSync(artifacts, { recursive: true })

const WS = '/work/softmax'
let host, browser
before(async () => {
  const day = 86_400_000
  host = await startMockHost({
    kopt,
    sessions: {
      // A and B: the same reference (2.5 ms) → one speedup axis.
      runA: { events: demoEvents({ n: 14, seed: 3, title: 'Softmax A', model: 'deepseek-official/deepseek-v4-flash' }), title: 'Softmax A', cwd: WS, updatedAt: 1_764_000_000_000 },
      runB: { events: demoEvents({ n: 10, seed: 5, base: 2.0, title: 'Softmax B', model: 'deepseek-official/deepseek-v4-pro' }), title: 'Softmax B', cwd: WS, updatedAt: 1_764_000_000_000 + day },
      // C: another reference (3.4 ms, 36 % slower) → latency.
      runC: { events: demoEvents({ n: 8, seed: 9, ref: 3.4, base: 3.1, title: 'Softmax C (other GPU)' }), title: 'Softmax C (other GPU)', cwd: '/work/other', updatedAt: 1_764_000_000_000 + 2 * day },
      // D: no speedup reported at all → latency.
      runD: { events: demoEvents({ n: 6, seed: 4, speedups: false, title: 'Softmax D' }), title: 'Softmax D', cwd: WS, updatedAt: 1_764_000_000_000 - day },
      gone: { events: [], title: 'A broken log', cwd: WS, unreadable: 'line 3: not valid JSON (the log is damaged)' },
    },
  })
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS, timeout: 30_000 })
})
after(async () => { await browser?.close(); await host?.close() })

async function open (session, lang, viewport = { width: 1100, height: 720 }, extra = '') {
  const page = await browser.newPage({ viewport })
  page.setDefaultTimeout(10_000)
  const errors = []
  page.on('pageerror', e => errors.push(e.message))
  await page.goto(`${host.url}/?session=${session}&lang=${lang}&tab=kernel-opt${extra}`)
  await page.waitForSelector('[data-kopt=chart]')
  return { page, errors }
}
async function pick (page, ids) {
  await page.locator('[data-kopt=compare]').click()
  for (const id of ids) await page.locator(`[data-kopt=compare-option][data-id="${id}"] input`).check()
  await page.mouse.click(5, 5) // closes the picker
  await page.waitForSelector('[data-kopt=compare-chart]')
}
const answerOf = (page, ids) => page.evaluate(async (q) => (await fetch(`/plugins/kernel-opt/compare?sessionId=${q[0]}&with=${q.slice(1).join(',')}`)).json(), ids)

// The compare card whole (a tall window), with the popover of `point` ([index, x, y]) when given.
async function shoot (page, name, point) {
  await page.setViewportSize({ width: 1280, height: 1500 })
  const card = page.locator('[data-kopt=compare-card]')
  await card.scrollIntoViewIfNeeded()
  if (point) {
    const chart = page.locator('[data-kopt=compare-chart]')
    const box = await chart.boundingBox()
    const c = await chart.evaluate(el => ({ w: el.viewBox.baseVal.width, h: el.viewBox.baseVal.height }))
    await page.mouse.click(box.x + (point[1] / c.w) * box.width, box.y + (point[2] / c.h) * box.height)
  }
  await page.waitForTimeout(150)
  await card.screenshot({ path: path.join(artifacts, name) })
}

// sRGB hex → CIE Lab (D65), for ΔE between the sessions' colours.
function lab (hex) {
  const c = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16) / 255).map(v => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
  const [x, y, z] = [
    (0.4124 * c[0] + 0.3576 * c[1] + 0.1805 * c[2]) / 0.95047, 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2], (0.0193 * c[0] + 0.1192 * c[1] + 0.9505 * c[2]) / 1.08883,
  ].map(v => (v > 0.008856 ? Math.cbrt(v) : 7.787 * v + 16 / 116))
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)]
}
const deltaE = (a, b) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]))

function overlaps (boxes) {
  const out = []
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j]
      if (a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5) out.push([a.text, b.text])
    }
  }
  return out
}

describe('对比 / Compare (shell stand-in)', { timeout: 180_000 }, () => {
  test('same reference: one speedup axis; every point reachable by a click and named by its session; colours told apart; labels clear (zh, en)', async () => {
    for (const lang of ['zh', 'en']) {
      const { page, errors } = await open('runA', lang)
      // The picker lists the same workspace first.
      await page.locator('[data-kopt=compare]').click()
      const order = await page.locator('[data-kopt=compare-option]').evaluateAll(els => els.map(e => e.dataset.id))
      assert.deepEqual(order.slice(0, 3), ['runB', 'runD', 'gone'], `same workspace first, most recent first: ${order}`)
      await page.mouse.click(5, 5)
      await pick(page, ['runB'])
      const chart = page.locator('[data-kopt=compare-chart]')
      assert.equal(await chart.getAttribute('data-axis'), 'speedup')
      assert.equal(await page.locator('[data-kopt=axis-rule]').getAttribute('data-axis'), 'speedup')
      const cmp = await answerOf(page, ['runA', 'runB'])
      assert.equal(cmp.axis, 'speedup')
      assert.equal(cmp.scale, 'linear')
      assert.equal(await page.locator('[data-kopt=compare-series]').count(), 2)
      // Legend: title, model for each; table: a row each.
      const legend = await page.locator('[data-kopt=compare-legend]').innerText()
      assert.match(legend, /A · Softmax A · deepseek-official\/deepseek-v4-flash/)
      assert.match(legend, /B · Softmax B · deepseek-official\/deepseek-v4-pro/)
      assert.equal(await page.locator('[data-kopt=compare-row]').count(), 2)
      assert.match(await page.locator('[data-kopt=compare-table]').innerText(), lang === 'zh' ? /已复测/ : /re-measured/)
      // Colours: distinct and far apart (CIE76 ΔE > 25).
      const colours = await page.locator('[data-kopt=compare-series]').evaluateAll(els => els.map(e => e.dataset.color))
      assert.ok(deltaE(colours[0], colours[1]) > 25, `ΔE ${deltaE(colours[0], colours[1])}`)
      // Every point: a click on it names its session and its evaluation.
      await chart.scrollIntoViewIfNeeded()
      const box = await chart.boundingBox()
      const f = cmp.chart.frame
      for (const s of cmp.chart.series) {
        for (const [index, latency] of s.points) {
          const x = f.x0 + f.dx * index, y = f.y0 + f.dy * (s.reference / latency) // a linear speedup axis here
          await page.mouse.click(box.x + (x / cmp.chart.width) * box.width, box.y + (y / cmp.chart.height) * box.height)
          const hits = await page.locator('[data-kopt=compare-hit]').evaluateAll(els => els.map(e => `${e.dataset.session}:${e.dataset.index}`))
          assert.ok(hits.includes(`${s.session}:${index}`), `point ${s.session}:${index} → ${hits}`)
        }
      }
      const pop = await page.locator('[data-kopt=compare-popover]').innerText()
      assert.match(pop, /Softmax [AB] · #\d+ · [\d.]+(ms|µs) · ×/)
      // Tick labels never overlap; the text keeps ~11.5 px.
      const ticks = await page.locator('[data-kopt=compare-chart] [data-kopt=tick]').evaluateAll(els => els.map(e => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height, text: e.textContent } }))
      assert.ok(ticks.length > 4)
      assert.deepEqual(overlaps(ticks), [])
      for (const t of ticks) assert.ok(t.height > 10 && t.height < 20, `tick ${t.text} ${t.height}px`)
      const [pi, pl] = cmp.chart.series[1].points.at(-3)
      await shoot(page, `compare-${lang}.png`, [pi, cmp.chart.frame.x0 + cmp.chart.frame.dx * pi, cmp.chart.frame.y0 + cmp.chart.frame.dy * (cmp.chart.series[1].reference / pl)])
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('different references or no speedup: the latency axis, and the reason is shown', async () => {
    for (const [lang, other, code, text] of [
      ['en', 'runC', 'references-differ', /the references of A · Softmax A and B · Softmax C \(other GPU\) differ by 36%/],
      ['zh', 'runD', 'no-reference', /B · Softmax D 没有报告加速比/],
    ]) {
      const { page, errors } = await open('runA', lang)
      await pick(page, [other])
      assert.equal(await page.locator('[data-kopt=compare-chart]').getAttribute('data-axis'), 'latency')
      const rule = page.locator('[data-kopt=axis-rule]')
      assert.equal(await rule.getAttribute('data-axis'), 'latency')
      assert.equal(await page.locator('[data-kopt=reason]').getAttribute('data-code'), code)
      assert.match(await rule.innerText(), text)
      const ticks = await page.locator('[data-kopt=compare-chart] [data-kopt=tick]').evaluateAll(els => els.map(e => e.textContent))
      assert.ok(ticks.filter(t => /ms|µs/.test(t)).length >= 2, `latency ticks: ${ticks}`)
      assert.ok(!ticks.some(t => t.startsWith('×')), 'no ratio on a latency axis')
      if (lang === 'en') await shoot(page, 'compare-latency-en.png')
      assert.deepEqual(errors, [])
      await page.close()
    }
  })

  test('a session that cannot be read keeps its row with the reason; one still being read shows loading, then its curve', async () => {
    host.state.get('runB').compareLoading = 2
    const { page, errors } = await open('runA', 'en')
    await pick(page, ['gone', 'runB'])
    await page.locator('[data-kopt=row-error]').waitFor()
    assert.match(await page.locator('[data-kopt=row-error]').innerText(), /unreadable: line 3: not valid JSON/)
    await page.waitForFunction(() => document.querySelectorAll('[data-kopt=compare-series]').length === 2, null, { timeout: 8000 })
    assert.equal(host.state.get('runB').compareLoading, 0, 'asked again while loading')
    assert.equal(await page.locator('[data-kopt=compare-row]').count(), 3)
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a live session compared updates its curve as evaluations arrive', async () => {
    const { page, errors } = await open('runB', 'en')
    await pick(page, ['runA'])
    const series = page.locator('[data-kopt=compare-series][data-session="1"]')
    const n0 = Number(await series.getAttribute('data-n'))
    host.append('runA', moreEvents(3, { tag: 'live', latency: 1.2 }))
    await page.waitForFunction((n) => Number(document.querySelector('[data-kopt=compare-series][data-session="1"]')?.dataset.n) === n + 3, n0, { timeout: 8000 })
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('a comparison of one session, or of too many, is refused with a clear message', async () => {
    const { page } = await open('runA', 'en')
    const one = await page.evaluate(async () => { const r = await fetch('/plugins/kernel-opt/compare?sessionId=runA'); return { status: r.status, body: await r.json() } })
    assert.equal(one.status, 400)
    assert.match(one.body.error, /at least 2 sessions/)
    assert.match(one.body.error, /至少需要 2 个会话/)
    const ids = Array.from({ length: kopt.compareMax }, (_, i) => `s${i}`).join(',')
    const many = await page.evaluate(async (w) => { const r = await fetch(`/plugins/kernel-opt/compare?sessionId=runA&with=${w}`); return { status: r.status, body: await r.json() } }, ids)
    assert.equal(many.status, 400)
    assert.match(many.body.error, new RegExp(`at most ${kopt.compareMax} sessions`))
    await page.close()
  })
})

describe('laptop sizes', { timeout: 120_000 }, () => {
  test('the tab opens at its top, keeps a position the user scrolled to, and draws the chart text at one pixel size (1100×720, 1440×900; zh, en)', async () => {
    const sizes = {}
    for (const viewport of [{ width: 1100, height: 720 }, { width: 1440, height: 900 }]) {
      for (const lang of ['zh', 'en']) {
        // With the host's session list beside it, as a person sees it.
        const { page, errors } = await open('runA', lang, viewport, '&sidebar=1')
        const panel = page.locator('[data-kopt=panel]')
        assert.equal(await panel.evaluate(el => el.scrollTop), 0, 'opened at the top')
        const head = await page.locator('.kopt-head').boundingBox()
        const pbox = await panel.boundingBox()
        assert.ok(head.y >= pbox.y - 1 && head.y < pbox.y + 40, 'the head is at the top of the panel')
        // The chart's axis labels and marks: the same height in pixels at every width.
        const h = await page.locator('[data-kopt=axes] text').evaluateAll(els => els.map(e => e.getBoundingClientRect().height))
        assert.ok(h.length > 3)
        sizes[`${viewport.width}-${lang}`] = Math.max(...h)
        for (const v of h) assert.ok(v > 11 && v < 19, `axis label ${v}px at ${viewport.width}`)
        // Scrolled, away and back: the position comes back.
        await panel.evaluate(el => { el.scrollTop = 240 })
        await page.waitForTimeout(50)
        const kept = await panel.evaluate(el => el.scrollTop)
        assert.ok(kept > 0)
        await page.getByRole('tab', { name: lang === 'zh' ? '对话' : 'Chat' }).click()
        await page.getByRole('tab', { name: lang === 'zh' ? '评测' : 'Evaluations' }).click()
        await page.waitForSelector('[data-kopt=chart]')
        assert.equal(await page.locator('[data-kopt=panel]').evaluate(el => el.scrollTop), kept, 'the scrolled position came back')
        if (lang === 'zh') await page.screenshot({ path: path.join(artifacts, `laptop-${viewport.width}x${viewport.height}-zh.png`) })
        assert.deepEqual(errors, [])
        await page.close()
      }
    }
    for (const lang of ['zh', 'en']) assert.ok(Math.abs(sizes[`1100-${lang}`] - sizes[`1440-${lang}`]) < 1, `text height ${JSON.stringify(sizes)}`)
  })

  test('in a host whose view area scrolls and holds the chat at its bottom, the tab still opens at its top; a scrolled position comes back', async () => {
    for (const lang of ['zh', 'en']) {
      const page = await browser.newPage({ viewport: { width: 1100, height: 720 } })
      const errors = []
      page.on('pageerror', e => errors.push(e.message))
      await page.goto(`${host.url}/?session=runA&lang=${lang}&tab=chat&scroller=1&sidebar=1`)
      const view = page.locator('.view.scroller')
      await view.evaluate(el => { el.scrollTop = el.scrollHeight })
      assert.ok(await view.evaluate(el => el.scrollTop) > 1000, 'the chat at its bottom')
      // The series is in the shared store already (the launcher reads it), as in the host.
      await page.waitForTimeout(400)
      await page.getByRole('tab', { name: lang === 'zh' ? '评测' : 'Evaluations' }).click()
      await page.waitForSelector('[data-kopt=chart]')
      const head = await page.locator('.kopt-head').boundingBox()
      const vbox = await view.boundingBox()
      assert.ok(head.y >= vbox.y - 1 && head.y < vbox.y + 40, `the head at the top of the view (${head.y} vs ${vbox.y})`)
      await view.evaluate(el => { el.scrollTop = 300 })
      await page.waitForTimeout(50)
      await page.getByRole('tab', { name: lang === 'zh' ? '对话' : 'Chat' }).click()
      await page.getByRole('tab', { name: lang === 'zh' ? '评测' : 'Evaluations' }).click()
      await page.waitForSelector('[data-kopt=chart]')
      assert.equal(await view.evaluate(el => el.scrollTop), 300, 'the scrolled position came back')
      assert.deepEqual(errors, [])
      await page.close()
    }
  })
})
