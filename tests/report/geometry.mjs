// The report's layout, checked by geometry in headless Chromium (not by eye): for each report and
// language given, at a desktop and a narrow width —
//   * the page never scrolls sideways; every card stays inside the page;
//   * in the curve, no two text labels overlap and every label and marker (★ ⚑ ▲, points) lies inside
//     the SVG; every point is the element a click at its centre reaches (hollow ones too);
//   * the chips do not overlap one another;
//   * the record table fits its box at the desktop width; narrower, it fits or its box scrolls sideways
//     (overflow-x auto) and stays inside the card; no cell's content spills out of its cell.
//   node tests/report/geometry.mjs <report.html>...     (playwright-core from tests/browser/node_modules)
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(join(here, '../browser/package.json'))
const { chromium } = require('playwright-core')
const files = process.argv.slice(2)
if (!files.length) { console.error('usage: node tests/report/geometry.mjs <report.html>...'); process.exit(2) }
const timer = setTimeout(() => { console.error('geometry: timed out'); process.exit(2) }, 180_000)

// Runs in the page: a list of problems (strings), empty when the layout holds.
function measure (desktop) {
  const problems = []
  const r = (e) => e.getBoundingClientRect()
  const name = (e) => `${e.tagName.toLowerCase()}${e.dataset.kopt ? `[${e.dataset.kopt}]` : ''}${e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : ''} "${(e.textContent || '').trim().slice(0, 24)}"`
  const inside = (a, b, tol = 1) => a.left >= b.left - tol && a.right <= b.right + tol && a.top >= b.top - tol && a.bottom <= b.bottom + tol
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top))
  const doc = document.scrollingElement
  if (doc.scrollWidth > window.innerWidth + 1) {
    const wide = [...document.body.querySelectorAll('*')].filter(e => r(e).right > window.innerWidth + 1 && !e.closest('.tablewrap'))
    problems.push(`the page scrolls sideways: ${doc.scrollWidth} > ${window.innerWidth} (${wide.slice(0, 3).map(name).join(', ')})`)
  }
  const page = { left: 0, right: window.innerWidth, top: -1e9, bottom: 1e9 }
  for (const card of document.querySelectorAll('section.card, .card')) if (!inside(r(card), page)) problems.push(`${name(card)} leaves the page`)
  const svg = document.querySelector('svg.curve')
  if (svg) {
    const box = r(svg)
    const texts = [...svg.querySelectorAll('text')].filter(t => (t.textContent || '').trim() && r(t).width > 0)
    for (const t of texts) if (!inside(r(t), box)) problems.push(`label ${name(t)} outside the chart (${JSON.stringify(r(t))})`)
    for (let i = 0; i < texts.length; ++i) {
      for (let j = i + 1; j < texts.length; ++j) {
        const a = r(texts[i]), b = r(texts[j])
        if (overlap(a, b) > 2) problems.push(`labels overlap: ${name(texts[i])} and ${name(texts[j])}`)
      }
    }
    const points = [...svg.querySelectorAll('[data-kopt=point]')]
    for (const p of points) {
      const b = r(p)
      if (!inside(b, box)) { problems.push(`point ${name(p)} outside the chart`); continue }
      const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2)
      if (!hit || (hit !== p && !p.contains(hit) && !hit.contains(p))) problems.push(`point ${p.getAttribute('data-i') ?? name(p)} is not what a click at its centre reaches (${hit ? name(hit) : 'nothing'})`)
    }
  }
  const chips = [...document.querySelectorAll('.chip, [data-kopt^=chip]')].filter(c => r(c).width > 0)
  for (let i = 0; i < chips.length; ++i) {
    for (let j = i + 1; j < chips.length; ++j) {
      if (chips[i].contains(chips[j]) || chips[j].contains(chips[i])) continue
      if (overlap(r(chips[i]), r(chips[j])) > 2) problems.push(`chips overlap: ${name(chips[i])} and ${name(chips[j])}`)
    }
  }
  const wrap = document.querySelector('.tablewrap')
  const table = wrap && wrap.querySelector('table')
  if (table) {
    const card = wrap.closest('section') ?? document.body
    if (!inside(r(wrap), r(card))) problems.push('the table box leaves its card')
    // At a desktop width the table fits; narrower, it may scroll inside its own box.
    if (desktop && table.scrollWidth > wrap.clientWidth + 1) problems.push(`the table (${table.scrollWidth} px) is wider than its box (${wrap.clientWidth} px) at a desktop width`)
    if (table.scrollWidth > wrap.clientWidth + 1 && !/auto|scroll/.test(getComputedStyle(wrap).overflowX)) problems.push(`the table (${table.scrollWidth} px) is wider than its box (${wrap.clientWidth} px), which does not scroll`)
    for (const td of table.querySelectorAll('td, th')) {
      if (td.scrollWidth > td.clientWidth + 1) problems.push(`cell content spills: ${name(td)} (${td.scrollWidth} > ${td.clientWidth})`)
    }
  }
  return { problems, points: svg ? svg.querySelectorAll('[data-kopt=point]').length : 0, tableWidth: table ? table.scrollWidth : 0, boxWidth: wrap ? wrap.clientWidth : 0 }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', timeout: 30_000,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
})
let failed = 0
try {
  for (const file of files) {
    for (const width of [1280, 760]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } })
      const page = await context.newPage()
      await page.goto(`file://${resolve(file)}`)
      const m = await page.evaluate(measure, width >= 1280)
      const where = `${file} @${width}px`
      if (m.problems.length) {
        failed += 1
        console.error(`geometry: FAIL ${where}:\n  ${m.problems.slice(0, 20).join('\n  ')}${m.problems.length > 20 ? `\n  … ${m.problems.length - 20} more` : ''}`)
      } else {
        console.log(`geometry: ok ${where}: ${m.points} points, table ${m.tableWidth} px in a ${m.boxWidth} px box`)
      }
      await context.close()
    }
  }
} finally {
  clearTimeout(timer)
  await browser.close().catch(() => {})
}
process.exit(failed ? 1 : 0)
