import { Fragment, h, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from './head.js'
import { activeLang, makeT } from './strings.js'
import { fetchExport, useSeries } from './data.js'
import { download, fmtGap, useDismiss, versusText } from './helpers.js'
import { COLORS, Chart, Popover, intoChart } from './curve.js'
import { RunControls, loopStatus } from './controls.js'
import { EnvCard, PlanCard, RecordCard, ReviewCard } from './cards.js'
import { CompareCard, ComparePicker, comparePicks, useCompare } from './compare.js'
    // ───────────────────────────── the tab ─────────────────────────────
    function Chips({ series, t }) {
      const c = series.chart
      const counts = c?.counts
      const its = series.iterations
      const best = series.bestIndex !== null && series.bestIndex !== undefined ? its[series.bestIndex] : null
      const bestPt = best ? c?.points?.[series.bestIndex] : null
      const pending = its.some(i => i.pending)
      const out = []
      if (counts) {
        out.push(h('span', { key: 'o', className: 'kopt-chip', title: t('chip.opt.tip'), 'data-kopt': 'chip-opt' }, t('chip.opt', { n: counts.optimization })))
        if (counts.overBudget > 0) out.push(h('span', { key: 'b', className: 'kopt-chip warn', title: t('chip.over.tip') }, t('chip.over', { n: counts.overBudget })))
        if (counts.wrapUp > 0) out.push(h('span', { key: 'w', className: 'kopt-chip', title: t('chip.wrap.tip') }, t(counts.wrapUp === 1 ? 'chip.wrap.one' : 'chip.wrap', { n: counts.wrapUp })))
      } else {
        out.push(h('span', { key: 'o', className: 'kopt-chip' }, t('chip.opt', { n: its.filter(i => !i.pending).length })))
      }
      if (best?.latencyMs !== undefined) {
        const sp = bestPt?.speedupLabel ?? bestPt?.ownSpeedupLabel ?? null
        out.push(h('span', { key: 'best', className: 'kopt-chip ok', 'data-kopt': 'chip-best' }, '★ ', t('chip.best', { value: bestPt?.label ?? '—' }), sp ? ` · ${sp}` : '',
          // Spec S-2: a ★ that is not significantly better than the best before it says so.
          bestPt?.vsBest && bestPt.vsBest.v !== 'faster' ? h('span', { 'data-kopt': 'chip-best-noise', style: { color: 'var(--k-warn)' } }, ` · ${versusText(c, 'best', bestPt.vsBest, activeLang())}`) : null))
      }
      const fin = c?.final
      if (fin) {
        out.push(h('span', { key: 'fin', className: 'kopt-chip final', title: t(fin.remeasured ? 'chip.final.re' : 'chip.final.self'), 'data-kopt': 'chip-final' },
          '⚑ ', t('chip.final', { value: fin.label }), ' · ', fin.remeasured ? t('chip.remeasured') : h('span', { style: { color: 'var(--k-warn)' } }, t('chip.notRemeasured')),
          fin.selfReported ? h('span', { 'data-kopt': 'final-gap', 'data-flag': fin.gapFlag ? '1' : '0', style: fin.gapFlag ? { color: 'var(--k-warn)' } : undefined },
            ' · ', fin.gapFlag ? '⚠ ' : '', t(its[fin.selfReported.index]?.trust === 'plugin' ? 'chip.gap.plugin' : 'chip.gap', { self: fin.selfReported.label, pct: fmtGap(fin.gapPct) })) : null))
      } else if (c?.finalClaim?.refused) {
        // The agent finalized, and the core's Final rule (spec H-8) refused it: say so and why, in the core's words.
        const claim = c.finalClaim
        out.push(h('span', { key: 'fin', className: 'kopt-chip warn', 'data-kopt': 'chip-final-refused', 'data-reason': claim.refused },
          '⚑ ', claim.refusedText?.[activeLang()] ?? claim.refused, claim.named !== undefined ? ` · #${claim.named + 1}` : ''))
      }
      const evaluation = series.control?.evaluation
      if (evaluation) out.push(h(EvaluationChip, { key: 'e', evaluation, t }))
      else if (pending) out.push(h('span', { key: 'p', className: 'kopt-chip kopt-pulse' }, t('chip.pending')))
      return h('div', { className: 'kopt-chips', 'data-kopt': 'chips' }, out)
    }

    // The plugin's own evaluation of this session (control.evaluation, lib/evaluate.mjs): queued, or
    // running with its stage and the time since it started (ticking here; the host sends changes only).
    function EvaluationChip({ evaluation, t }) {
      const [, tick] = useState(0)
      useEffect(() => {
        const timer = setInterval(() => tick(n => n + 1), 1000)
        return () => clearInterval(timer)
      }, [])
      const seconds = Math.max(0, (Date.now() - evaluation.since) / 1000)
      const text = evaluation.state === 'queued'
        ? t('eval.queued', { n: evaluation.position ?? 0 })
        : t('eval.running', { stage: t(`eval.stage.${evaluation.stage ?? 'start'}`), s: seconds.toFixed(seconds < 10 ? 1 : 0) })
      return h('span', { className: 'kopt-chip kopt-pulse', title: t('eval.tip'), 'data-kopt': 'chip-evaluation', 'data-state': evaluation.state, 'data-stage': evaluation.stage ?? '' }, text)
    }

    function CurveCard({ series, t, selected, pinned, onSelect, svgRef }) {
      const c = series.chart
      if (!c || !Array.isArray(c.points)) return null
      const drift = c.drift
      return h('div', { className: 'kopt-card', 'data-kopt': 'curve' },
        h('h3', null, t('curve.title'), h('span', { className: 'kopt-note', style: { fontWeight: 400 } }, t(c.mode === 'speedup' ? 'curve.axisSpeedup' : 'curve.axisLatency'))),
        h('div', { className: 'kopt-chartwrap' },
          h(Chart, { chart: c, selected, pinned, onSelect, t, svgRef }),
          selected !== null && selected !== undefined ? h(Popover, { series, index: selected, chart: c, t, pinned, onClose: () => onSelect(null, false), onLeave: (ev) => { if (!pinned && !intoChart(ev)) onSelect(null, false) } }) : null),
        h('div', { className: 'kopt-legend' },
          h('span', null, h('i', { style: { color: COLORS.ok } }, '●'), t('legend.ok')),
          h('span', null, h('i', { style: { color: COLORS.bad } }, '○'), t('legend.failed')),
          h('span', null, h('i', { style: { color: COLORS.faint } }, '◌'), t('legend.unmeasured')),
          h('span', null, h('i', { style: { color: COLORS.best } }, '★'), t('legend.best')),
          h('span', null, h('i', { style: { color: COLORS.prof } }, '▲'), t('legend.profiled')),
          h('span', null, h('i', { style: { color: COLORS.final } }, '⚑'), t('legend.final')),
          h('span', { className: 'kopt-grow' }),
          h('span', null, t('curve.hint'))),
        c.reference ? h('div', { className: 'kopt-note', style: { marginTop: 6 }, 'data-kopt': 'denominator' }, t('curve.note', { ref: c.reference.label })) : null,
        drift ? h('div', { className: 'kopt-warnbox', 'data-kopt': 'drift' }, t('curve.drift', { count: drift.count, min: drift.minLabel, max: drift.maxLabel, pct: Math.round((drift.ratio - 1) * 100) })) : null)
    }

    function ExportMenu({ t, svgRef, sessionId }) {
      const [open, setOpen] = useState(false)
      const ref = useRef(null)
      useDismiss(ref, open, () => setOpen(false))
      const base = `kernel-opt-${sessionId}`
      const doSvg = () => {
        const svg = svgRef.current
        if (!svg) return
        const clone = svg.cloneNode(true)
        clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg')
        clone.setAttribute('style', 'color:#1f2329;background:#fff;font-family:system-ui,sans-serif')
        const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect')
        bg.setAttribute('width', '100%'); bg.setAttribute('height', '100%'); bg.setAttribute('fill', '#fff')
        clone.insertBefore(bg, clone.firstChild)
        download(`${base}-curve.svg`, 'image/svg+xml', new XMLSerializer().serializeToString(clone).replace(/var\(--k-bg, #fff\)/g, '#fff'))
      }
      return h('div', { ref, style: { position: 'relative' } },
        h('button', { className: 'kopt-btn', onClick: () => setOpen(!open), 'aria-haspopup': 'menu', 'aria-expanded': open, 'data-kopt': 'export' }, '⤓ ', t('export')),
        open ? h('div', { className: 'kopt-menu', role: 'menu' },
          // The run as CSV, JSON and a markdown table is the core's (kopt report --csv / --json / --md,
          // src/core/report/data.cpp and markdown.cpp: the points with their intervals), from the plugin's routes.
          [['csv', 'csv', 'text/csv;charset=utf-8', 'export.csv'], ['json', 'json', 'application/json', 'export.json'], ['markdown', 'md', 'text/markdown;charset=utf-8', 'export.md']].map(([kind, ext, type, label]) =>
            h('button', { key: kind, role: 'menuitem', 'data-kopt': `export-${kind}`, onClick: () => { setOpen(false); fetchExport(sessionId, kind, kind === 'markdown' ? activeLang() : undefined).then(text => download(`${base}.${ext}`, type, text), () => {}) } }, t(label))),
          h('button', { role: 'menuitem', onClick: () => { setOpen(false); doSvg() } }, t('export.svg'))) : null)
    }

    // Where the user left each session's tab scrolled: a tab opens at its top (the curve and the
    // controls), or where the user scrolled it to before.
    const scrolledTo = new Map()
    const UPDATES_KEPT = 256
    export function EvalTab(props) {
      const sessionId = props.sessionId
      const t = useMemo(() => makeT(props.t), [props.t])
      const [snap, store] = useSeries(sessionId)
      const series = snap.series
      const [sel, setSel] = useState({ index: null, pinned: false })
      const [focus, setFocus] = useState(false)
      const svgRef = useRef(null)
      const panelRef = useRef(null)
      const [picked, setPickedState] = useState(() => comparePicks.get(sessionId) ?? [])
      const setPicked = useCallback((ids) => { comparePicks.set(sessionId, ids); setPickedState(ids) }, [sessionId])
      useEffect(() => { setPickedState(comparePicks.get(sessionId) ?? []) }, [sessionId])
      const cmpState = useCompare(sessionId, picked)
      const refresh = useCallback(() => { store.refresh() }, [store])
      // Opened at the top (the curve and the controls): the host's view may hold a scroll position of
      // its own (the chat's, at its bottom), kept by a scroller around the panel when the panel is not
      // the one that scrolls. A position the user scrolled this session's tab to comes back instead.
      useLayoutEffect(() => {
        const el = panelRef.current
        if (!el) return undefined
        const scrolls = (x) => x.scrollHeight > x.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(x).overflowY)
        let box = el
        if (!scrolls(el)) for (let p = el.parentElement; p; p = p.parentElement) if (scrolls(p)) { box = p; break }
        const kept = scrolledTo.get(sessionId)
        if (kept !== undefined) box.scrollTop = kept
        else if (box === el) el.scrollTop = 0
        else box.scrollTop = Math.max(0, box.scrollTop + el.getBoundingClientRect().top - box.getBoundingClientRect().top)
        const onScroll = () => { scrolledTo.set(sessionId, box.scrollTop) }
        box.addEventListener('scroll', onScroll, { passive: true })
        return () => box.removeEventListener('scroll', onScroll)
      }, [sessionId])
      const onSelect = useCallback((index, pin) => setSel(index === null ? { index: null, pinned: false } : { index, pinned: pin }), [])
      // Focus mode: Esc closes the popover first, then leaves focus mode.
      useEffect(() => {
        const onKey = (e) => {
          if (e.key !== 'Escape' || e.defaultPrevented) return
          if (sel.index !== null) { setSel({ index: null, pinned: false }); return }
          if (focus) setFocus(false)
        }
        window.addEventListener('keydown', onKey)
        return () => window.removeEventListener('keydown', onKey)
      }, [focus, sel.index])
      // Update timing (performance API): parse start → committed DOM.
      useLayoutEffect(() => {
        if (!store.lastUpdateStart || !series) return
        const ms = performance.now() - store.lastUpdateStart
        store.lastUpdateStart = 0
        // Both records hold at most UPDATES_KEPT updates (the array the latest ones): a tab open through a long run adds one per update.
        try {
          if (performance.getEntriesByName('kopt-update', 'measure').length >= UPDATES_KEPT) performance.clearMeasures('kopt-update')
          performance.measure('kopt-update', { start: performance.now() - ms, duration: ms, detail: { points: series.iterations.length } })
        } catch { /* older engines */ }
        const w = window
        const ups = (w.__koptUpdates = w.__koptUpdates || [])
        ups.push({ ms, parseMs: store.lastParseMs, points: series.iterations.length })
        if (ups.length > UPDATES_KEPT) ups.splice(0, ups.length - UPDATES_KEPT)
      }, [snap.version])
      // A selection past the end (a different run) is dropped.
      const selIndex = series && sel.index !== null && sel.index < series.iterations.length ? sel.index : null
      const body = !series
        ? h('div', { className: 'kopt-empty' }, snap.status === 'loading' ? h('span', { 'data-kopt': 'loading' }, t('state.loading')) : snap.error ? t('err.request', { msg: snap.error }) : '…')
        : h(Fragment, null,
          h(RunControls, { sessionId, series, t, refresh }),
          h(Chips, { series, t }),
          series.iterations.length === 0 && (series.plans ?? []).length === 0
            ? h('div', { className: 'kopt-card kopt-empty', 'data-kopt': 'empty' }, h('b', null, t('empty.title')), t('empty.body'))
            : null,
          series.iterations.length > 0 ? h(CurveCard, { series, t, selected: selIndex, pinned: sel.pinned, onSelect, svgRef }) : null,
          picked.length ? h(CompareCard, { sessionId, picked, t, cmpState, onClose: () => setPicked([]) }) : null,
          (series.uncollectedSeqs ?? []).length ? h('div', { className: 'kopt-warnbox' }, t('note.uncollected', { n: series.uncollectedSeqs.length })) : null,
          (series.echoedSeqs ?? []).length ? h('div', { className: 'kopt-note' }, t('note.echoed', { n: series.echoedSeqs.length })) : null,
          h('div', { className: 'kopt-grid' },
            h(PlanCard, { plans: series.plans ?? [], t }),
            h(EnvCard, { envs: series.envs ?? [], t }),
            h(ReviewCard, { rounds: series.rounds ?? [], reviews: series.chart?.reviews ?? [], sup: series.control?.supervisor, t })),
          series.iterations.length > 0 ? h(RecordCard, { series, t, selected: selIndex, onPick: i => onSelect(i, true) }) : null)
      return h('div', { ref: panelRef, className: `kopt kopt-panel${focus ? ' kopt-focus' : ''}`, 'data-kopt': 'panel', 'data-focus': focus ? '1' : '0' },
        h('div', { className: 'kopt-inner' },
          h('div', { className: 'kopt-head' },
            h('span', { className: 'kopt-title' }, t('title')),
            h('span', { className: 'kopt-sub' }, series ? loopStatus(t, series.control?.loop) : ''),
            h('span', { className: 'kopt-grow' }),
            h(ComparePicker, { sessionId, picked, onChange: setPicked, t, max: cmpState.data?.max }),
            series ? h(ExportMenu, { t, svgRef, sessionId }) : null,
            h('button', { className: 'kopt-btn', onClick: () => setFocus(!focus), title: focus ? t('focus.exit') : t('focus.enter'), 'aria-pressed': focus, 'data-kopt': 'focus' }, focus ? '⤡ ' : '⤢ ', focus ? t('focus.exit') : t('focus.enter'))),
          body))
    }

