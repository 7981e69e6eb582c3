import { Fragment, h, memo, useCallback, useLayoutEffect, useRef, useState } from './head.js'
import { fmtGap, lastBefore, toneOf, trustOf, verdictOf, versusText, wordOf } from './helpers.js'
import { activeLang } from './strings.js'
    // ───────────────────────────── the curve ─────────────────────────────
    export const COLORS = { line: '#4d6bfe', ok: '#4d6bfe', bad: '#d64545', grid: 'rgba(120,128,140,.22)', best: '#1f8f5f', final: '#8a5cf6', prof: '#c27c0e', faint: '#7b8391', limit: '#b8860b' }

    // Where the core's frame puts point i (docs/protocol.md, `chart.frame`): the points carry frame
    // values, so that the axes moving changes only the frame.
    const xOf = (chart, i) => chart.frame.x0 + chart.frame.dx * i
    const yOf = (chart, p) => (p.v === undefined ? chart.baselineY : chart.frame.y0 + chart.frame.dy * p.v)

    // All points of one kind as a single path: measured ones as round dots in frame units (a zero-length
    // stroke with round caps keeps its width under the frame's stretched transform); those under the axis
    // as circles in viewBox units.
    const dotsPath = (list) => { let d = ''; for (const p of list) d += `M${p.index} ${p.v}h0`; return d }
    function circlesPath(list, r, x0, dx, y) {
      let d = ''
      for (const p of list) { const x = x0 + dx * p.index; d += `M${x - r} ${y}a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0` }
      return d
    }
    export const FLAT = { fill: 'none', strokeLinecap: 'round', vectorEffect: 'non-scaling-stroke' }
    // The points are drawn in runs of RUN, each run its own few paths. A delta keeps the held point
    // objects (applyAnswer) and the axes moving changes only the frame, so an update rebuilds the
    // last run and React skips every other one. A run's `stamp` changes when one of its point
    // objects does (Curve keeps what each run was made of).
    const RUN = 256
    function sameRun(a, b) { // props a run does not take are undefined on both sides
      return a.stamp === b.stamp && a.r === b.r && a.from === b.from && a.to === b.to && a.join === b.join && a.x0 === b.x0 && a.dx === b.dx && a.y === b.y
    }
    let runStamps = 0
    // What run [from, to) of pts is made of: its point objects, how many of each kind, its last ok point.
    function runOf(pts, from, to) {
      const counts = { ok: 0, failed: 0, bad: 0, unmeasured: 0, pending: 0 }
      let lastOk = null, withCi = 0
      for (let i = from; i < to; i++) {
        counts[drawnAs(pts[i])]++
        if (pts[i].kind === 'ok') lastOk = pts[i]
        if (pts[i].ci) withCi++
      }
      return { items: pts.slice(from, to), counts, lastOk, withCi, stamp: ++runStamps }
    }
    function sameItems(items, pts, from, to) {
      if (items.length !== to - from) return false
      for (let i = from; i < to; i++) if (items[i - from] !== pts[i]) return false
      return true
    }
    // How a point is drawn: the core's kind, and for an unmeasured one whether it is pending or failed.
    const drawnAs = (p) => (p.kind === 'ok' || p.kind === 'failed' ? p.kind : p.pending ? 'pending' : p.failed ? 'bad' : 'unmeasured')
    // Measured points, in frame units (under the frame's transform); r in screen pixels.
    const DotRun = memo(function DotRun({ pts, from, to, r }) {
      const ok = [], failed = []
      for (let i = from; i < to; i++) { const k = pts[i].kind; if (k === 'ok') ok.push(pts[i]); else if (k === 'failed') failed.push(pts[i]) }
      const sw = r < 3 ? 1.1 : 1.8
      return h('g', null,
        ok.length ? h('path', { d: dotsPath(ok), stroke: COLORS.ok, strokeWidth: 2 * r, ...FLAT }) : null,
        failed.length ? h('path', { d: dotsPath(failed), stroke: COLORS.bad, strokeWidth: 2 * r + sw, ...FLAT }) : null,
        failed.length ? h('path', { d: dotsPath(failed), stroke: 'var(--k-bg, #fff)', strokeWidth: 2 * r - sw, ...FLAT }) : null)
    }, sameRun)
    // Each point's interval (spec S) as a whisker, one path per run, in frame units (`ci` is [v at the
    // interval's low latency, v at its high one]); thin and faint, so 50k of them stay readable.
    const WhiskerRun = memo(function WhiskerRun({ pts, from, to }) {
      let d = ''
      for (let i = from; i < to; i++) { const c = pts[i].ci; if (c) d += `M${pts[i].index} ${c[0]}L${pts[i].index} ${c[1]}` }
      return d ? h('path', { d, stroke: COLORS.line, strokeWidth: 1.2, opacity: 0.45, ...FLAT, strokeLinecap: 'butt' }) : null
    }, sameRun)
    // Points without a latency, on the baseline under the axis (viewBox units).
    const BaseRun = memo(function BaseRun({ pts, from, to, r, x0, dx, y }) {
      const by = { unmeasured: [], bad: [], pending: [] }
      for (let i = from; i < to; i++) { const k = drawnAs(pts[i]); if (by[k]) by[k].push(pts[i]) }
      const { unmeasured, bad, pending } = by
      if (!unmeasured.length && !bad.length && !pending.length) return null
      return h('g', null,
        bad.length ? h('path', { d: circlesPath(bad, r, x0, dx, y), fill: 'none', stroke: COLORS.bad, strokeWidth: 1.5 }) : null,
        unmeasured.length ? h('path', { d: circlesPath(unmeasured, r, x0, dx, y), fill: 'none', stroke: COLORS.faint, strokeWidth: 1.5 }) : null,
        pending.length ? h('path', { d: circlesPath(pending, r, x0, dx, y), fill: 'none', stroke: COLORS.faint, strokeWidth: 1.5, strokeDasharray: '2 2', className: 'kopt-pulse' }) : null)
    }, sameRun)
    // The line through the points of kind "ok", in runs and frame units; each run starts at the last ok
    // point before it (`join`), so the runs meet.
    const LineRun = memo(function LineRun({ pts, from, to, join }) {
      let d = join ? `M${join.index} ${join.v}` : ''
      for (let i = from; i < to; i++) {
        const p = pts[i]
        if (p.kind !== 'ok') continue
        d += `${d ? 'L' : 'M'}${p.index} ${p.v}`
      }
      return d.includes('L') ? h('path', { d, fill: 'none', stroke: COLORS.line, strokeWidth: 1.8, strokeLinejoin: 'round', opacity: 0.9, vectorEffect: 'non-scaling-stroke' }) : null
    }, sameRun)
    // The profile marks (▲ under the axis, one per profile, thousands in a long run) move only when
    // a profile is added or the x axis changes, but every answer makes a new list (appended, or
    // whole): an equal one keeps the drawn marks instead of rebuilding them.
    const sameMarks = (a, b) => a.y === b.y && a.k === b.k && a.marks.length === b.marks.length && a.marks.every((m, i) => m.x === b.marks[i].x)
    const ProfileMarks = memo(function ProfileMarks({ marks, y, k }) {
      return h('g', { 'data-kopt': 'profiled-marks' },
        marks.map((m, i) => h('text', { key: `p${i}`, x: m.x, y: y + 4 * k, textAnchor: 'middle', fontSize: 11 * k, fill: COLORS.prof, 'data-kopt': 'profiled' }, '▲')))
    }, sameMarks)
    function Curve({ chart }) {
      const pts = chart.points, f = chart.frame
      const runs = useRef([])
      // Smaller dots when they crowd (a 1,000-point run), never below 1.6; the spacing is the axis's
      // (xStep), which stays put while points arrive, so the radius does too.
      const gap = chart.xStep > 0 ? chart.xStep : 20
      const r = Math.max(1.6, Math.min(4, gap * 0.42))
      const ru = Math.max(1.4, Math.min(3.5, gap * 0.38))
      const counts = { ok: 0, failed: 0, bad: 0, unmeasured: 0, pending: 0 }
      const lines = [], dots = [], base = [], whiskers = []
      let withCi = 0
      let lastOk = null
      for (let k = 0, from = 0; from < pts.length; k++, from += RUN) {
        const to = Math.min(pts.length, from + RUN)
        let run = runs.current[k]
        if (!run || !sameItems(run.items, pts, from, to)) run = runs.current[k] = runOf(pts, from, to)
        const stamp = run.stamp
        lines.push(h(LineRun, { key: from, pts, from, to, join: lastOk, stamp }))
        dots.push(h(DotRun, { key: from, pts, from, to, r, stamp }))
        whiskers.push(h(WhiskerRun, { key: from, pts, from, to, stamp }))
        withCi += run.withCi
        base.push(h(BaseRun, { key: from, pts, from, to, r: ru, x0: f.x0, dx: f.dx, y: chart.baselineY, stamp }))
        for (const kind in run.counts) counts[kind] += run.counts[kind]
        if (run.lastOk) lastOk = run.lastOk
      }
      runs.current.length = Math.ceil(pts.length / RUN)
      const transform = `matrix(${f.dx} 0 0 ${f.dy} ${f.x0} ${f.y0})`
      return h(Fragment, null,
        h('g', { 'data-kopt': 'whiskers', 'data-n': withCi, transform }, whiskers),
        h('g', { 'data-kopt': 'line', transform }, lines),
        h('g', {
          'data-kopt': 'points', 'data-n': pts.length, 'data-ok': counts.ok, 'data-failed': counts.failed,
          'data-unmeasured-failed': counts.bad, 'data-unmeasured': counts.unmeasured, 'data-pending': counts.pending,
        }, h('g', { transform }, dots), base))
    }
    function Dot({ x, y, kind, pending, failed }) {
      if (kind === 'ok') return h('circle', { cx: x, cy: y, r: 6.5, fill: COLORS.ok, stroke: '#fff', strokeWidth: 2 })
      if (kind === 'failed') return h('circle', { cx: x, cy: y, r: 6.5, fill: 'var(--k-bg, #fff)', stroke: COLORS.bad, strokeWidth: 2 })
      return h('circle', { cx: x, cy: y, r: 5.5, fill: 'none', stroke: failed ? COLORS.bad : COLORS.faint, strokeWidth: 2, strokeDasharray: pending ? '2 2' : undefined })
    }

    // The chart's SVG scales with its box; its text is drawn at `px × k` user units (k: viewBox units
    // per screen pixel, kept by a ResizeObserver), so it stays `px` on screen at every width.
    export function useViewScale(ref, width) {
      const [k, setK] = useState(1)
      useLayoutEffect(() => {
        const el = ref.current
        if (!el) return undefined
        const measure = () => { const w = el.getBoundingClientRect().width; if (w > 0) setK(width / w) }
        measure()
        if (typeof ResizeObserver === 'undefined') return undefined
        const ro = new ResizeObserver(measure)
        ro.observe(el)
        return () => ro.disconnect()
      }, [ref, width])
      return k
    }

    export function Chart({ chart, selected, onSelect, pinned, t, svgRef }) {
      const pts = chart.points
      const W = chart.width, H = chart.height, P = chart.plot
      const k = useViewScale(svgRef, W)
      const find = useCallback((vx) => {
        // Point i sits at x0 + dx·i: the nearest is a division away.
        if (!pts.length) return -1
        return Math.max(0, Math.min(pts.length - 1, Math.round((vx - chart.frame.x0) / chart.frame.dx)))
      }, [pts, chart.frame])
      const toView = (ev) => {
        const svg = svgRef.current
        if (!svg) return 0
        const r = svg.getBoundingClientRect()
        return ((ev.clientX - r.left) / r.width) * W
      }
      const onMove = (ev) => { if (!pinned) { const i = find(toView(ev)); if (i >= 0) onSelect(i, false) } }
      // Leaving the chart for the hover popover (it sits beside the point, often under the pointer on its way
      // to the next point) keeps it; the popover itself closes when the pointer leaves it for elsewhere.
      const onLeave = (ev) => { if (!pinned && !intoPopover(ev)) onSelect(null, false) }
      const onClick = (ev) => { const i = find(toView(ev)); if (i >= 0) onSelect(i, true) }
      const onKey = (ev) => {
        if (!pts.length) return
        if (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') {
          ev.preventDefault()
          const d = ev.key === 'ArrowRight' ? 1 : -1
          const cur = selected === null || selected === undefined ? (d > 0 ? -1 : pts.length) : selected
          onSelect(Math.max(0, Math.min(pts.length - 1, cur + d)), true)
        } else if (ev.key === 'Home' || ev.key === 'End') {
          ev.preventDefault(); onSelect(ev.key === 'Home' ? 0 : pts.length - 1, true)
        } else if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault(); onSelect(selected ?? chart.markers?.best?.index ?? pts.length - 1, true)
        } else if (ev.key === 'Escape') {
          if (selected !== null && selected !== undefined) { ev.preventDefault(); ev.stopPropagation(); onSelect(null, false) }
        }
      }
      const sp = selected !== null && selected !== undefined ? pts[selected] : null
      const best = chart.markers?.best
      const ariaLabel = `${t('curve.title')}: ${pts.length}`
      return h('svg', {
        ref: svgRef, className: 'kopt-chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': ariaLabel, tabIndex: 0,
        onMouseMove: onMove, onMouseLeave: onLeave, onClick, onKeyDown: onKey, 'data-kopt': 'chart', xmlns: 'http://www.w3.org/2000/svg',
      },
      // grid + ticks
      h('g', { fontSize: 11.5 * k, fill: COLORS.faint, 'data-kopt': 'axes' },
        chart.ticks.map((tk, i) => h(Fragment, { key: `t${i}` },
          h('line', { x1: P.left, x2: P.right, y1: tk.y, y2: tk.y, stroke: COLORS.grid, strokeDasharray: '3 5' }),
          h('text', { x: P.left - 8 * k, y: tk.y + 4 * k, textAnchor: 'end' }, tk.label))),
        h('line', { x1: P.left, x2: P.right, y1: P.bottom, y2: P.bottom, stroke: COLORS.grid }),
        chart.xTicks.map((tk, i) => h('text', { key: `x${i}`, x: tk.x, y: chart.xLabelY, textAnchor: 'middle' }, tk.label)),
        chart.scale === 'log' ? h('text', { x: P.left - 8 * k, y: P.top - 8 * k, textAnchor: 'end', fontStyle: 'italic' }, t('curve.log')) : null),
      // best line
      chart.bestLine ? h('g', null,
        h('line', { x1: P.left, x2: P.right, y1: chart.bestLine.y, y2: chart.bestLine.y, stroke: COLORS.best, strokeDasharray: '6 5', strokeWidth: 1.2, opacity: 0.75 }),
        h('text', { x: P.left + 6 * k, y: chart.bestLine.y - 6 * k, textAnchor: 'start', fontSize: 12 * k, fill: COLORS.best, 'data-kopt': 'bestline-label' }, `${t('axis.best')} ${chart.bestLine.label}`)) : null,
      // the machine's limit (S-5): where ★'s bytes would move at the probed memory bandwidth
      chart.limitLine ? h('g', { 'data-kopt': 'limit-line' },
        h('line', { x1: P.left, x2: P.right, y1: chart.limitLine.y, y2: chart.limitLine.y, stroke: COLORS.limit, strokeDasharray: '2 4', strokeWidth: 1.4, opacity: 0.85 }),
        h('text', { x: P.right - 6 * k, y: chart.limitLine.y + (chart.limitLine.above ? 14 : -6) * k, textAnchor: 'end', fontSize: 12 * k, fill: COLORS.limit, 'data-kopt': 'limit-label' },
          [wordOf(chart, 'limit.line', activeLang()), chart.limitLine.label, chart.limitLine.above ? wordOf(chart, 'limit.above', activeLang()) : '', chart.limitLine.below ? wordOf(chart, 'limit.below', activeLang()) : ''].filter(Boolean).join(' '))) : null,
      // the line through successful evaluations, and the points
      h(Curve, { chart }),
      // markers
      h(ProfileMarks, { marks: chart.markers?.profiled ?? [], y: chart.profileY, k }),
      (chart.markers?.finalized ?? []).map((m, i) => h('text', { key: `f${i}`, x: m.x + 7 * k, y: m.y - 7 * k, fontSize: 13 * k, fill: COLORS.final, 'data-kopt': 'finalized' }, '⚑')),
      best ? h('text', { x: best.x, y: best.y - 9 * k, textAnchor: 'middle', fontSize: 15 * k, fill: COLORS.best, 'data-kopt': 'best' }, '★') : null,
      // selection
      sp ? h('g', { pointerEvents: 'none' },
        h('line', { x1: xOf(chart, selected), x2: xOf(chart, selected), y1: P.top - 4, y2: chart.baselineY + 6, stroke: COLORS.line, strokeOpacity: 0.35 }),
        h(Dot, { x: xOf(chart, selected), y: yOf(chart, sp), kind: sp.kind, pending: !!sp.pending, failed: !!sp.failed })) : null)
    }

    // Where a Slurm point was measured (the core's `slurm` record, shown as it came).
    export function slurmWhere(it, t) {
      const s = it.slurm
      if (!s || typeof s !== 'object') return ''
      return [t('pop.slurm', { job: s.jobId ?? '?', node: s.node ?? '?' }), s.partition, s.gpu].filter(Boolean).join(' · ')
    }

    const intoPopover = (ev) => !!(ev.relatedTarget && ev.relatedTarget.closest && ev.relatedTarget.closest('[data-kopt=popover]'))
    export const intoChart = (ev) => !!(ev.relatedTarget && ev.relatedTarget.closest && ev.relatedTarget.closest('[data-kopt=chart]'))
    export function Popover({ series, index, chart, t, onClose, onLeave, pinned, wrapWidth }) {
      const it = series.iterations[index]
      const pt = chart.points[index]
      if (!it || !pt) return null
      const v = verdictOf(it)
      const trust = trustOf(it)
      const plan = lastBefore(series.plans ?? [], it.seq)
      const phase = chart.phases?.[index]
      const metrics = it.metrics && typeof it.metrics === 'object' ? Object.entries(it.metrics) : []
      // Place it beside the point, inside the chart box.
      const leftPct = (xOf(chart, index) / chart.width) * 100
      // Beside the point, on the side with more room; never past the box's edge in a narrow tab.
      const edge = 'max(0px, calc(100% - 344px))'
      const style = leftPct > 55 ? { right: `min(${100 - leftPct + 1.5}%, ${edge})` } : { left: `min(${leftPct + 1.5}%, ${edge})` }
      // Vertically: a point in the upper half opens downwards, a low one upwards (its bottom edge near the
      // point), and the height is capped by the room on that side, so the box never leaves the chart box
      // (and so never runs under the composer below it); the rest scrolls inside.
      const yPct = (Math.min(yOf(chart, pt), chart.plot.bottom) / chart.height) * 100
      if (yPct <= 50) {
        const top = Math.max(0, yPct - 10)
        style.top = `${top}%`
        style.maxHeight = `min(380px, calc(${100 - top}% - 4px))`
      } else {
        const bottom = Math.max(0, 100 - yPct - 10)
        style.bottom = `${bottom}%`
        style.maxHeight = `min(380px, calc(${100 - bottom}% - 4px))`
      }
      void wrapWidth
      return h('div', { className: 'kopt-pop', style, role: 'dialog', 'aria-label': `#${index + 1}`, 'data-kopt': 'popover', onMouseLeave: onLeave },
        h('h4', null,
          `#${index + 1}`,
          h('span', { className: `kopt-tag ${toneOf(chart, v)}` }, wordOf(chart, `verdict.${v}`, activeLang())),
          index === series.bestIndex ? h('span', { className: 'kopt-tag ok' }, `★ ${t('legend.best')}`) : null,
          it.finalized ? h('span', { className: 'kopt-tag', style: { color: COLORS.final } }, `⚑ ${t('legend.final')}`) : null,
          pinned ? h('button', { className: 'kopt-x', onClick: onClose, 'aria-label': t('pop.close'), title: t('pop.close') }, '✕') : null),
        h('div', { style: { marginTop: 6, fontSize: 15, fontVariantNumeric: 'tabular-nums' } },
          h('b', null, pt.label ?? '—'),
          pt.speedupLabel ? h('span', { style: { marginLeft: 8, color: 'var(--k-dim)' } }, pt.speedupLabel) : null,
          pt.ownSpeedupLabel && !pt.speedupLabel ? h('span', { style: { marginLeft: 8 } }, pt.ownSpeedupLabel) : null,
          phase ? h('span', { className: 'kopt-tag', style: { marginLeft: 8 } }, t(`phase.${phase}`)) : null),
        pt.ciLabel || pt.vsBest || pt.vsReference ? h('div', { className: 'kopt-sec', 'data-kopt': 'pop-noise' },
          pt.ciLabel ? h('div', { className: 'kopt-note', 'data-kopt': 'pop-ci' }, `${t('pop.ci')} ${pt.ciLabel}${it.samples ? ` · ${t('pop.samples', { n: it.samples })}` : ''}`) : null,
          pt.vsBest ? h('div', { 'data-kopt': 'pop-vs-best', 'data-v': pt.vsBest.v, style: pt.vsBest.v === 'faster' ? { color: 'var(--k-ok)' } : pt.vsBest.v === 'slower' ? { color: 'var(--k-bad)' } : undefined },
            versusText(chart, 'best', pt.vsBest, activeLang()), pt.vsBestOf !== undefined ? h('span', { className: 'kopt-note' }, ` (#${pt.vsBestOf + 1})`) : null) : null,
          pt.vsReference ? h('div', { 'data-kopt': 'pop-vs-ref', 'data-v': pt.vsReference.v }, versusText(chart, 'ref', pt.vsReference, activeLang())) : null) : null,
        pt.bandwidthLabel || pt.computeLabel ? h('div', { className: 'kopt-sec', 'data-kopt': 'pop-limit' },
          pt.bandwidthLabel ? h('div', { 'data-kopt': 'pop-bandwidth' }, wordOf(chart, 'limit.bandwidth', activeLang()).replace('{pct}', pt.bandwidthLabel)) : null,
          pt.computeLabel ? h('div', { 'data-kopt': 'pop-compute' }, wordOf(chart, 'limit.compute', activeLang()).replace('{pct}', pt.computeLabel)) : null) : null,
        h('div', { className: 'kopt-sec', 'data-kopt': 'pop-trust', 'data-trust': trust },
          h('b', { style: trust === 'plugin' ? { color: 'var(--k-ok)' } : undefined }, trust === 'plugin' ? '✓ ' : '', wordOf(chart, `trust.${trust}`, activeLang())),
          h('div', { className: 'kopt-note' }, `${it.tool} · seq ${it.seq}${it.jobId ? ` · job ${it.jobId}` : ''}${it.evaluationId ? ` · ${it.evaluationId}` : ''}${it.artifactPath ? ` · ${it.artifactPath}` : ''}`),
          it.slurm ? h('div', { className: 'kopt-note', 'data-kopt': 'slurm' }, slurmWhere(it, t)) : null,
          it.command ? h('div', { className: 'kopt-pre', title: t('trust.command') }, it.command) : null),
        it.sources ? h('div', { className: 'kopt-sec', 'data-kopt': 'pop-sources' }, h('b', null, t('pop.sources')),
          [...(it.sources.solution ?? []).map(s => [s.path, s.sha256]),
            ...(it.sources.reference ? [[`${t('pop.sources.reference')} ${it.sources.reference.path}`, it.sources.reference.sha256]] : []),
            ...(it.sources.inputs ? [[`${t('pop.sources.inputs')} ${it.sources.inputs.path}`, it.sources.inputs.sha256]] : [])]
            .map(([name, sha], i) => h('div', { key: i, className: 'kopt-note', title: sha }, `${name} · ${sha.slice(0, 12)}…`))) : null,
        chart.final?.selfReported?.index === index ? h('div', { className: 'kopt-sec', 'data-kopt': 'pop-gap', style: chart.final.gapFlag ? { color: 'var(--k-warn)' } : undefined },
          chart.final.gapFlag ? '⚠ ' : '', t(trust === 'plugin' ? 'pop.gap.plugin' : 'pop.gap', { re: chart.final.label, pct: fmtGap(chart.final.gapPct) }),
          chart.final.gapVerdict ? h('div', { 'data-kopt': 'pop-gap-noise' }, versusText(chart, 'gap', { v: chart.final.gapVerdict, pct: Math.abs(chart.final.gapPct), pm: chart.final.gapPmPct }, activeLang())) : null) : null,
        it.error ? h('div', { className: 'kopt-sec' }, h('b', null, t('pop.error')), h('div', { className: 'kopt-pre old' }, it.error)) : null,
        it.blocking ? h('div', { className: 'kopt-sec' }, h('b', null, t('detail.blocking')), it.blocking.map((s, i) => h('div', { key: i, className: 'kopt-err' }, `· ${s}`))) : null,
        it.advisory ? h('div', { className: 'kopt-sec' }, h('b', null, t('detail.advisory')), it.advisory.map((s, i) => h('div', { key: i, className: 'kopt-note' }, `· ${s}`))) : null,
        it.notMeasured ? h('div', { className: 'kopt-sec kopt-note' }, `${t('detail.notMeasured')}: ${it.notMeasured.join(', ')}`) : null,
        metrics.length ? h('div', { className: 'kopt-sec' }, h('b', null, t('pop.metrics')),
          h('div', { style: { display: 'flex', flexWrap: 'wrap', gap: 5 } }, metrics.map(([k, val]) => h('span', { key: k, className: 'kopt-tag' }, `${k} = ${typeof val === 'number' && !Number.isInteger(val) ? Number(val.toPrecision(4)) : val}`)))) : null,
        h('div', { className: 'kopt-sec' }, h('b', null, t('approach.inForce')),
          plan ? h('div', null, h('span', { className: `kopt-tag ${plan.phase === 'stuck' ? 'stuck' : 'accent'}` }, plan.phase), ' ', plan.approach) : h('div', { className: 'kopt-note' }, t('plan.none'))),
        h('div', { className: 'kopt-sec' }, h('b', null, t('pop.changes')),
          it.changes && it.changes.length ? it.changes.map((c, i) => h(ChangeView, { key: i, change: c, t })) : h('div', { className: 'kopt-note' }, t('pop.noChanges'))))
    }

    function ChangeView({ change, t, compact }) {
      const head = `${t(change.kind === 'write' ? 'ch.write' : 'ch.edit')} · ${change.tool}${change.replaceAll ? ' · replace_all' : ''}${change.truncated ? ' · …' : ''}`
      if (compact) return h('div', { className: 'kopt-note' }, head)
      return h('div', { style: { marginTop: 4 } },
        h('div', { className: 'kopt-note' }, head),
        change.kind === 'write'
          ? h('div', { className: 'kopt-pre' }, change.content ?? '')
          : h(Fragment, null, h('div', { className: 'kopt-pre old' }, change.oldText ?? ''), h('div', { className: 'kopt-pre new' }, change.newText ?? '')))
    }

