import { PRESET_ID, h, useEffect, useLayoutEffect, useMemo, useRef, useState } from './head.js'
import { env, makeT } from './strings.js'
import { control, useSeries } from './data.js'
import { LoopFields, SupervisionFields, startLoop, useLoopOptions } from './controls.js'
    // ───────────────────────────── composer ─────────────────────────────
    export function presetOf(sessionId) {
      try { return env.sessions?.list?.getSnapshot?.()?.byId?.[sessionId]?.agentPreset } catch { return undefined }
    }
    export function hasSignal(series) {
      return !!series && (series.iterations.length > 0 || (series.plans ?? []).length > 0 || !!series.control?.loop?.armed)
    }

    function LauncherCard({ sessionId, series, t, anchor, onClose, refresh }) {
      const loop = series?.control?.loop
      const opts = useLoopOptions(loop)
      const [err, setErr] = useState(null)
      const [busy, setBusy] = useState(false)
      const ref = useRef(null)
      const [pos, setPos] = useState(null)
      // Kept inside the viewport: above the button when there is room, else below; scrolls inside.
      useLayoutEffect(() => {
        const place = () => {
          const r = anchor.current?.getBoundingClientRect()
          if (!r) return
          const vw = window.innerWidth, vh = window.innerHeight
          const w = Math.min(380, vw - 16)
          const left = Math.max(8, Math.min(r.left, vw - w - 8))
          const above = r.top - 8, below = vh - r.bottom - 8
          if (above >= below) setPos({ left, bottom: vh - r.top + 6, maxHeight: Math.max(120, above - 8) })
          else setPos({ left, top: r.bottom + 6, maxHeight: Math.max(120, below - 8) })
        }
        place()
        window.addEventListener('resize', place)
        return () => window.removeEventListener('resize', place)
      }, [anchor])
      useEffect(() => {
        const onKey = (e) => { if (e.key === 'Escape') onClose() }
        const onDown = (e) => { if (ref.current && !ref.current.contains(e.target) && !anchor.current?.contains(e.target)) onClose() }
        window.addEventListener('keydown', onKey)
        document.addEventListener('mousedown', onDown)
        return () => { window.removeEventListener('keydown', onKey); document.removeEventListener('mousedown', onDown) }
      }, [onClose, anchor])
      const start = async () => {
        setBusy(true); setErr(null)
        try { await startLoop(sessionId, opts); refresh(); onClose() } catch (e) { setErr(t('err.request', { msg: e.message })); setBusy(false) }
      }
      return h('div', { ref, className: 'kopt kopt-card-float', style: pos ? { ...pos } : { visibility: 'hidden' }, role: 'dialog', 'aria-label': t('launch.title'), 'data-kopt': 'launcher-card' },
        h('h3', null, t('launch.title')),
        h('div', { className: 'kopt-note' }, t('launch.body')),
        h('div', { className: 'kopt-row' }, h(LoopFields, { opts, t, disabled: busy })),
        h('div', { className: 'kopt-row' }, h('span', { className: 'kopt-rowlabel' }, t('sup.row')),
          h(SupervisionFields, { sessionId, sup: series?.control?.supervisor, locked: !!loop?.armed, t, onChanged: refresh, setErr })),
        err ? h('div', { className: 'kopt-err' }, err) : null,
        h('div', { className: 'kopt-row', style: { justifyContent: 'flex-end' } },
          h('button', { className: 'kopt-btn', onClick: onClose }, t('launch.cancel')),
          h('button', { className: 'kopt-btn kopt-primary', onClick: start, disabled: busy || loop?.available === false, 'data-kopt': 'launcher-start' }, t('launch.start'))))
    }

    export function Launcher(props) {
      const sessionId = props.sessionId
      const t = useMemo(() => makeT(props.t), [props.t])
      const relevantByPreset = presetOf(sessionId) === PRESET_ID
      const [snap, store] = useSeries(sessionId)
      const series = snap.series
      const [open, setOpen] = useState(false)
      const anchor = useRef(null)
      if (!sessionId || !series || series.control?.loop?.armed) return null
      if (!relevantByPreset && !hasSignal(series)) return null
      return h('span', { className: 'kopt kopt-launch', 'data-kopt': 'launcher' },
        h('button', { ref: anchor, className: 'kopt-btn', onClick: () => setOpen(!open), 'aria-expanded': open, 'data-kopt': 'launcher-button' }, t('launch.button')),
        open ? h(LauncherCard, { sessionId, series, t, anchor, onClose: () => setOpen(false), refresh: () => store.refresh() }) : null)
    }

    export function StatusStrip(props) {
      const sessionId = props.sessionId
      const t = useMemo(() => makeT(props.t), [props.t])
      const [snap, store] = useSeries(sessionId)
      const loop = snap.series?.control?.loop
      const [busy, setBusy] = useState(false)
      if (!sessionId || !loop?.armed) return null
      const pct = loop.budget > 0 ? Math.min(100, (loop.evalsDone / loop.budget) * 100) : 0
      const stop = async () => { setBusy(true); try { await control(sessionId, 'loop-stop') } catch { /* the poll shows the truth */ } setBusy(false); store.refresh() }
      return h('div', { className: 'kopt kopt-strip', role: 'status', 'data-kopt': 'strip' },
        h('b', { style: { color: 'var(--k-accent)', fontWeight: 600 } }, t('strip.running', { round: loop.round })),
        h('div', { className: `kopt-bar${loop.evalsDone > loop.budget ? ' over' : ''}`, role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': loop.budget, 'aria-valuenow': loop.evalsDone }, h('div', { style: { width: `${pct}%` } })),
        h('span', { style: { fontVariantNumeric: 'tabular-nums', color: 'var(--k-dim)' } }, t('strip.budget', { done: loop.evalsDone, budget: loop.budget })),
        h('span', { className: 'kopt-grow' }),
        h('button', { className: 'kopt-btn kopt-danger', disabled: busy, onClick: stop, 'data-kopt': 'strip-stop' }, '■ ', t('strip.stop')))
    }

