import { BASE, Fragment, POLL_MS, h, useCallback, useEffect, useRef, useState } from './head.js'
import { activeLang, en, env, zh } from './strings.js'
import { fmtGap, useDismiss } from './helpers.js'
import { COLORS, FLAT, useViewScale } from './curve.js'
    // ───────────────────────────── compare ─────────────────────────────
    // 对比 / Compare: other sessions (past or live, the same workspace first) overlaid on one chart,
    // one colour per session, and a table of their figures. Everything it draws comes from the core
    // (GET /compare, kopt.compare: the rows, the comparability rule, the geometry); this only draws.
    Object.assign(zh, {
      'cmp.button': '对比',
      'cmp.button.tip': '把其他会话的曲线叠加到这里比较',
      'cmp.pick': '选择要对比的会话',
      'cmp.pick.none': '没有其他会话',
      'cmp.same': '同一工作区',
      'cmp.title': '对比',
      'cmp.close': '关闭对比',
      'cmp.loading': '正在读取 {n} 个会话…',
      'cmp.axisSpeedup': '纵轴：相对参考的加速比（越高越快）。各会话测量所对的参考一致，加速比可以放在一根轴上。',
      'cmp.axisLatency': '纵轴：延迟（越高越快）。加速比不能放在一根轴上，按延迟比较：',
      'cmp.axisLatencyPlain': '纵轴：延迟（越高越快）。',
      'cmp.col.run': '会话', 'cmp.col.model': '模型', 'cmp.col.budget': '预算 · 已用', 'cmp.col.best': '最佳', 'cmp.col.final': '最终',
      'cmp.col.near': '达到最佳 90%', 'cmp.col.wall': '到最佳用时', 'cmp.col.ref': '参考',
      'cmp.supervisor': '监督', 'cmp.noModel': '日志里没有记录', 'cmp.unreadable': '读不出来', 'cmp.evalN': '第 {n} 次',
      'cmp.noRef': '没有加速比', 'cmp.hash': '参考文件', 'cmp.remeasured': '已复测', 'cmp.notRemeasured': '未复测',
      'cmp.gap': '自报 {self}，相差 {pct}', 'cmp.gap.plugin': '实测 {self}，相差 {pct}', 'cmp.hover': '悬停或点击一个点，看它属于哪个会话。', 'cmp.this': '本会话',
      'cmp.loadingRow': '正在读取…',
    })
    Object.assign(en, {
      'cmp.button': 'Compare',
      'cmp.button.tip': 'Overlay other sessions’ curves here to compare them',
      'cmp.pick': 'Sessions to compare',
      'cmp.pick.none': 'No other sessions',
      'cmp.same': 'same workspace',
      'cmp.title': 'Compare',
      'cmp.close': 'Close the comparison',
      'cmp.loading': 'Reading {n} session(s)…',
      'cmp.axisSpeedup': 'Y axis: speedup over the reference (higher is faster). The sessions measured against the same reference, so their speedups share one axis.',
      'cmp.axisLatency': 'Y axis: latency (higher is faster). The speedups cannot share one axis, so the sessions are compared by latency:',
      'cmp.axisLatencyPlain': 'Y axis: latency (higher is faster).',
      'cmp.col.run': 'Session', 'cmp.col.model': 'Model', 'cmp.col.budget': 'Budget · used', 'cmp.col.best': 'Best', 'cmp.col.final': 'Final',
      'cmp.col.near': 'Evaluations to 90 %', 'cmp.col.wall': 'Time to best', 'cmp.col.ref': 'Reference',
      'cmp.supervisor': 'supervisor', 'cmp.noModel': 'not in the log', 'cmp.unreadable': 'unreadable', 'cmp.evalN': '#{n}',
      'cmp.noRef': 'no speedup', 'cmp.hash': 'reference file', 'cmp.remeasured': 're-measured', 'cmp.notRemeasured': 'not re-measured',
      'cmp.gap': 'self-reported {self}, {pct} off', 'cmp.gap.plugin': 'measured {self}, {pct} off', 'cmp.hover': 'Hover or click a point to see which session it belongs to.', 'cmp.this': 'this session',
      'cmp.loadingRow': 'loading…',
    })

    // The sessions picked per session (kept while the tab comes and goes).
    export const comparePicks = new Map()
    // A run's name ("A · title") and the reasons' words come from the core (compare_json), as the
    // comparison page draws them.
    const runName = (s) => s?.name ?? '?'
    const fmtDate = (ms) => { try { return new Date(ms).toLocaleString(activeLang() === 'zh' ? 'zh-CN' : 'en', { dateStyle: 'medium', timeStyle: 'short' }) } catch { return '' } }

    // The other sessions the shell lists: the same workspace (cwd) first, then the most recent.
    function compareCandidates(current) {
      let snap
      try { snap = env.sessions?.list?.getSnapshot?.() } catch { snap = undefined }
      const byId = snap?.byId ?? {}
      const cwd = byId[current]?.cwd
      const list = Object.entries(byId).filter(([id]) => id !== current).map(([id, v]) => ({
        id, title: v?.title ?? v?.displayTitle ?? id, cwd: v?.cwd, updatedAt: typeof v?.updatedAt === 'number' ? v.updatedAt : 0,
        same: cwd !== undefined && v?.cwd === cwd,
      }))
      list.sort((a, b) => (a.same === b.same ? b.updatedAt - a.updatedAt : a.same ? -1 : 1))
      return list.slice(0, 60)
    }

    // The comparison of `ids` (this session first), polled like the series: 1.5 s, sooner while a
    // session is still being read (Retry-After), paused while the page is hidden.
    export function useCompare(sessionId, ids) {
      const [state, setState] = useState({ data: null, error: null })
      const key = ids.join(',')
      useEffect(() => {
        if (!ids.length) { setState({ data: null, error: null }); return undefined }
        let stop = false
        let timer = null
        let etag = null
        const ctl = typeof AbortController === 'undefined' ? null : new AbortController()
        const ask = async () => {
          timer = null
          if (stop) return
          let next = POLL_MS
          if (typeof document === 'undefined' || !document.hidden) {
            try {
              const res = await fetch(`${BASE}/compare?sessionId=${encodeURIComponent(sessionId)}&with=${ids.map(encodeURIComponent).join(',')}`,
                { signal: ctl?.signal, cache: 'no-store', headers: etag ? { 'if-none-match': etag } : {} })
              if (stop) return
              if (res.status !== 304) {
                const body = await res.json().catch(() => null)
                if (stop) return
                if (res.ok && body) { etag = res.headers.get('etag'); setState({ data: withPoints(body), error: null }) } else { etag = null; setState({ data: null, error: body?.error ?? `HTTP ${res.status}` }) }
              }
              if (res.headers.get('retry-after')) next = 400
            } catch (e) {
              if (stop) return
              setState(s => ({ data: s.data, error: String(e?.message ?? e) }))
            }
          }
          if (!stop) timer = setTimeout(ask, next)
        }
        ask()
        return () => { stop = true; if (timer) clearTimeout(timer); ctl?.abort() }
      }, [sessionId, key])
      return state
    }

    // The answer's points are arrays [index, latency, ok, speedup|null, label] (compact: a comparison of five long
    // runs is 25k of them), placed by the chart's frame: v = reference / latency on a speedup axis (the
    // series' reference), 1 / latency on a latency axis, log10 of that on a log axis; x = x0 + dx·index,
    // y = y0 + dy·v. The tab reads them as objects in viewBox units, and the line through the ok points.
    function withPoints(body) {
      const c = body.chart
      const f = c?.frame
      const speedup = body.axis === 'speedup', log = body.scale === 'log'
      for (const s of c?.series ?? []) {
        let line = ''
        s.points = s.points.map(([index, latency, ok, speedup_, label, speedupLabel]) => {
          const value = speedup ? s.reference / latency : 1 / latency
          const x = Math.round((f.x0 + f.dx * index) * 10) / 10, y = Math.round((f.y0 + f.dy * (log ? Math.log10(value) : value)) * 10) / 10
          if (ok) line += `${line ? 'L' : 'M'}${x} ${y}`
          return { index, x, y, kind: ok ? 'ok' : 'failed', latency, label, speedup: speedup_ ?? undefined, speedupLabel }
        })
        s.line = line
      }
      return body
    }

    export function ComparePicker({ sessionId, picked, onChange, t, max }) {
      const [open, setOpen] = useState(false)
      const ref = useRef(null)
      useDismiss(ref, open, () => setOpen(false))
      const list = open ? compareCandidates(sessionId) : []
      const full = max !== undefined && picked.length + 1 >= max
      const toggle = (id) => onChange(picked.includes(id) ? picked.filter(x => x !== id) : [...picked, id])
      return h('div', { ref, style: { position: 'relative' } },
        h('button', { className: `kopt-btn${picked.length ? ' kopt-on' : ''}`, onClick: () => setOpen(!open), title: t('cmp.button.tip'), 'aria-haspopup': 'listbox', 'aria-expanded': open, 'data-kopt': 'compare' },
          '⇄ ', t('cmp.button'), picked.length ? ` (${picked.length + 1})` : ''),
        open ? h('div', { className: 'kopt-menu kopt-picker', role: 'listbox', 'aria-multiselectable': true, 'data-kopt': 'compare-picker' },
          h('div', { className: 'kopt-note', style: { padding: '4px 10px' } }, t('cmp.pick')),
          list.length === 0 ? h('div', { className: 'kopt-note', style: { padding: '4px 10px' } }, t('cmp.pick.none')) : null,
          list.map(c => h('label', { key: c.id, className: 'kopt-pick', 'data-kopt': 'compare-option', 'data-id': c.id },
            h('input', { type: 'checkbox', checked: picked.includes(c.id), disabled: !picked.includes(c.id) && full, onChange: () => toggle(c.id) }),
            h('span', { className: 'kopt-pick-title' }, c.title),
            c.same ? h('span', { className: 'kopt-tag accent' }, t('cmp.same')) : null,
            c.updatedAt ? h('span', { className: 'kopt-note' }, fmtDate(c.updatedAt)) : null))) : null)
    }

    // The overlay: every session's points as a few paths in its colour (dots as round caps, so a
    // thousand points are not a thousand elements), the line through its ok points, ★ at its best.
    const dotsAt = (pts) => { let d = ''; for (const p of pts) d += `M${p.x} ${p.y}h0`; return d }
    function CompareChart({ cmp, t, hover, onHover }) {
      const c = cmp.chart
      const svgRef = useRef(null)
      const k = useViewScale(svgRef, c.width)
      const P = c.plot
      const sessions = cmp.sessions
      // The points under the pointer: the nearest, and every other point drawn on the same spot.
      const at = (ev) => {
        const svg = svgRef.current
        if (!svg) return null
        const r = svg.getBoundingClientRect()
        const vx = ((ev.clientX - r.left) / r.width) * c.width, vy = ((ev.clientY - r.top) / r.height) * c.height
        let best = null
        for (const s of c.series) for (const p of s.points) {
          const d = Math.hypot(p.x - vx, p.y - vy)
          if (!best || d < best.d) best = { d, p }
        }
        if (!best || best.d > 18 * k) return null
        const hits = []
        for (const s of c.series) for (const p of s.points) if (Math.hypot(p.x - best.p.x, p.y - best.p.y) <= 1.5 * k) hits.push({ session: s.session, p })
        return { x: best.p.x, y: best.p.y, hits }
      }
      const onMove = (ev) => { if (!hover?.pinned) onHover(at(ev), false) }
      const onClick = (ev) => { const a = at(ev); onHover(a, a !== null) }
      const onLeave = () => { if (!hover?.pinned) onHover(null, false) }
      const fs = 11.5 * k
      return h('div', { className: 'kopt-chartwrap' },
        h('svg', { ref: svgRef, className: 'kopt-chart', viewBox: `0 0 ${c.width} ${c.height}`, role: 'img', 'aria-label': t('cmp.title'), 'data-kopt': 'compare-chart', 'data-axis': cmp.axis, onMouseMove: onMove, onMouseLeave: onLeave, onClick, xmlns: 'http://www.w3.org/2000/svg' },
          h('g', { fontSize: fs, fill: COLORS.faint },
            c.ticks.map((tk, i) => h(Fragment, { key: `t${i}` },
              h('line', { x1: P.left, x2: P.right, y1: tk.y, y2: tk.y, stroke: COLORS.grid, strokeDasharray: '3 5' }),
              h('text', { x: P.left - 8 * k, y: tk.y + 4 * k, textAnchor: 'end', 'data-kopt': 'tick' }, tk.label))),
            h('line', { x1: P.left, x2: P.right, y1: P.bottom, y2: P.bottom, stroke: COLORS.grid }),
            c.xTicks.map((tk, i) => h('text', { key: `x${i}`, x: tk.x, y: c.xLabelY, textAnchor: 'middle', 'data-kopt': 'tick' }, tk.label)),
            cmp.scale === 'log' ? h('text', { x: P.right, y: P.top - 8 * k, textAnchor: 'end', fontStyle: 'italic', 'data-kopt': 'tick' }, t('curve.log')) : null),
          c.series.map(s => h('g', { key: s.session, 'data-kopt': 'compare-series', 'data-session': s.session, 'data-n': s.points.length, 'data-color': s.color },
            s.line ? h('path', { d: s.line, fill: 'none', stroke: s.color, strokeWidth: 1.8, strokeLinejoin: 'round', opacity: 0.85, vectorEffect: 'non-scaling-stroke' }) : null,
            h('path', { d: dotsAt(s.points.filter(p => p.kind === 'ok')), stroke: s.color, strokeWidth: 7, ...FLAT }),
            h('path', { d: dotsAt(s.points.filter(p => p.kind !== 'ok')), stroke: s.color, strokeWidth: 8, ...FLAT }),
            h('path', { d: dotsAt(s.points.filter(p => p.kind !== 'ok')), stroke: 'var(--k-bg, #fff)', strokeWidth: 4.4, ...FLAT }),
            s.best ? h('text', { x: s.best.x, y: s.best.y - 8 * k, textAnchor: 'middle', fontSize: 14 * k, fill: s.color, 'data-kopt': 'compare-best' }, '★') : null)),
          hover ? h('circle', { cx: hover.x, cy: hover.y, r: 6 * k, fill: 'none', stroke: COLORS.line, strokeWidth: 1.5, pointerEvents: 'none' }) : null),
        hover ? h('div', { className: 'kopt-pop kopt-cmp-pop', 'data-kopt': 'compare-popover', style: hover.x / c.width > 0.55 ? { right: `${100 - (hover.x / c.width) * 100 + 1.5}%`, top: `${(hover.y / c.height) * 100}%` } : { left: `${(hover.x / c.width) * 100 + 1.5}%`, top: `${(hover.y / c.height) * 100}%` } },
          hover.hits.map(({ session, p }) => h('div', { key: `${session}-${p.index}`, 'data-kopt': 'compare-hit', 'data-session': session, 'data-index': p.index },
            h('span', { className: 'kopt-sw', style: { background: sessions[session]?.color } }),
            h('b', null, runName(sessions[session])), ` · #${p.index + 1} · ${p.label}${p.speedupLabel ? ` · ${p.speedupLabel}` : ''}`))) : null)
    }

    function CompareTable({ cmp, t }) {
      const none = '—'
      const cell = (v) => h('td', null, v)
      return h('div', { className: 'kopt-tablewrap', style: { maxHeight: 'none' } },
        h('table', { className: 'kopt-table', 'data-kopt': 'compare-table' },
          h('thead', null, h('tr', null, ['run', 'model', 'budget', 'best', 'final', 'near', 'wall', 'ref'].map(c => h('th', { key: c }, t(`cmp.col.${c}`))))),
          h('tbody', null, cmp.sessions.map((s, i) => {
            const who = h('td', { style: { minWidth: 160 } }, h('span', { className: 'kopt-sw', style: { background: s.color } }), h('b', null, runName(s)),
              i === 0 ? h('span', { className: 'kopt-note' }, ` · ${t('cmp.this')}`) : null,
              s.startMs ? h('div', { className: 'kopt-note' }, fmtDate(s.startMs)) : null)
            if (s.error || s.loading) {
              return h('tr', { key: i, 'data-kopt': 'compare-row' }, who,
                h('td', { colSpan: 7, className: s.error ? 'kopt-err' : 'kopt-note', 'data-kopt': s.error ? 'row-error' : 'row-loading' }, s.error ? `${t('cmp.unreadable')}: ${s.error}` : t('cmp.loadingRow')))
            }
            const fin = s.final
            return h('tr', { key: i, 'data-kopt': 'compare-row' }, who,
              h('td', null, s.models.length ? s.models.map(m => h('div', { key: m }, m)) : h('span', { className: 'kopt-note' }, t('cmp.noModel')),
                s.supervisors.map(m => h('div', { key: `s${m}`, className: 'kopt-note' }, `${t('cmp.supervisor')}: ${m}`))),
              cell(`${s.budget ?? none} · ${s.used}`),
              cell(s.best ? h(Fragment, null, s.best.label, s.best.speedupLabel ? ` · ${s.best.speedupLabel}` : '', h('div', { className: 'kopt-note' }, t('cmp.evalN', { n: s.best.index + 1 }))) : none),
              cell(fin ? h(Fragment, null, fin.label, ' · ', fin.remeasured ? h('span', { style: { color: 'var(--k-ok)' } }, t('cmp.remeasured')) : h('span', { style: { color: 'var(--k-warn)' } }, t('cmp.notRemeasured')),
                fin.gapPct !== undefined ? h('div', { className: 'kopt-note', style: fin.gapFlag ? { color: 'var(--k-warn)' } : undefined }, fin.gapFlag ? '⚠ ' : '', t(fin.selfPlugin ? 'cmp.gap.plugin' : 'cmp.gap', { self: fin.selfLabel ?? '', pct: fmtGap(fin.gapPct) })) : null)
                : s.finalRefused ? h('span', { style: { color: 'var(--k-warn)' }, 'data-kopt': 'final-refused' }, '⚑ ', compareReasonText(s.finalRefused)) : none),
              cell(s.nearBest ? `${t('cmp.evalN', { n: s.nearBest.index + 1 })} · ${s.nearBest.label}` : none),
              cell(s.wallToBestLabel ?? none),
              cell(h(Fragment, null, s.reference ? s.reference.label : h('span', { className: 'kopt-note' }, t('cmp.noRef')),
                s.drift ? h('div', { style: { color: 'var(--k-warn)' } }, `⚠ ${s.drift.minLabel} – ${s.drift.maxLabel}`) : null,
                s.referenceHashes.map(x => h('div', { key: x, className: 'kopt-note' }, `${t('cmp.hash')} `, h('code', null, `${x.slice(0, 12)}…`))))))
          }))))
    }

    const compareReasonText = (why) => why.text?.[activeLang()] ?? why.code

    export function CompareCard({ sessionId, picked, onClose, t, cmpState }) {
      const [hover, setHover] = useState(null)
      const onHover = useCallback((a, pin) => setHover(a === null ? null : { ...a, pinned: pin }), [])
      const cmp = cmpState.data
      const loading = cmp ? cmp.sessions.filter(s => s.loading).length : 0
      return h('div', { className: 'kopt-card', 'data-kopt': 'compare-card' },
        h('h3', null, '⇄ ', t('cmp.title'), h('span', { className: 'kopt-note', style: { fontWeight: 400 } }, `${picked.length + 1}`),
          loading ? h('span', { className: 'kopt-note kopt-pulse', style: { fontWeight: 400 }, 'data-kopt': 'compare-loading' }, t('cmp.loading', { n: loading })) : null,
          h('span', { className: 'kopt-grow' }),
          h('button', { className: 'kopt-btn', onClick: onClose, 'data-kopt': 'compare-close', title: t('cmp.close') }, '×')),
        cmpState.error ? h('div', { className: 'kopt-warnbox', 'data-kopt': 'compare-error' }, cmpState.error) : null,
        cmp ? h(Fragment, null,
          cmp.axis === 'speedup'
            ? h('div', { className: 'kopt-okbox', 'data-kopt': 'axis-rule', 'data-axis': 'speedup' }, t('cmp.axisSpeedup'))
            : h('div', { className: cmp.reasons.length ? 'kopt-warnbox' : 'kopt-note', 'data-kopt': 'axis-rule', 'data-axis': 'latency' },
              t(cmp.reasons.length ? 'cmp.axisLatency' : 'cmp.axisLatencyPlain'),
              cmp.reasons.length ? h('ul', { style: { margin: '4px 0 0', paddingLeft: 18 } }, cmp.reasons.map((why, i) => h('li', { key: i, 'data-kopt': 'reason', 'data-code': why.code }, compareReasonText(why)))) : null),
          h(CompareChart, { cmp, t, hover, onHover }),
          h('div', { className: 'kopt-legend', 'data-kopt': 'compare-legend' },
            cmp.sessions.map((s, i) => h('span', { key: i, 'data-kopt': 'legend-item', 'data-session': i },
              h('span', { className: 'kopt-sw', style: { background: s.color } }), runName(s),
              s.models.length ? ` · ${s.models.join(', ')}` : '', s.startMs ? ` · ${fmtDate(s.startMs)}` : '')),
            h('span', { className: 'kopt-grow' }), h('span', null, t('cmp.hover'))),
          h(CompareTable, { cmp, t })) : null)
    }
