import { useEffect } from './head.js'
    // ───────────────────────────── helpers ─────────────────────────────
    export const fmtGap = v => `${v > 0 ? '+' : ''}${v}%`
    const seqNum = s => (typeof s === 'number' ? s : Number(s))
    // Verdict and trust are decided in C++ (include/kopt/verdict.hpp) and sent per row; the tab only reads them.
    export const verdictOf = it => it.verdict || 'unknown'
    // Their words and the verdict's tone are the core's too: one table (kopt/labels.hpp) sent once per chart as
    // `words`, the one the report (kopt report) reads.
    export const wordOf = (chart, key, lang) => chart?.words?.[lang]?.[key] ?? chart?.words?.en?.[key] ?? key
    export const toneOf = (chart, v) => chart?.words?.tone?.[v] ?? 'dim'
    export const trustOf = it => it.trust || 'tool'
    // The core's comparison words (chart.versusWords, spec S) for a point's label `o` ({v, pct, pm}) under
    // `kind` (best | ref | gap), in the interface's language; '' where the chart has none.
    export function versusText(chart, kind, o, lang) {
      const w = o && chart?.versusWords?.[lang]?.[`${kind}.${o.v}`]
      if (typeof w !== 'string') return ''
      return w.replace('{pct}', Number(o.pct ?? 0).toFixed(1)).replace('{pm}', Number(o.pm ?? 0).toFixed(1))
    }
    // The last entry of `list` (ordered by seq in log order) with seq below `seq`.
    export function lastBefore(list, seq, pred) {
      const n = seqNum(seq)
      let found
      for (const x of list) { if (seqNum(x.seq) < n && (!pred || pred(x))) found = x }
      return found
    }
    export function download(name, type, text) {
      const blob = new Blob([text], { type })
      const url = URL.createObjectURL(blob)
      const a = document.createElement('a')
      a.href = url; a.download = name
      document.body.appendChild(a); a.click(); a.remove()
      setTimeout(() => URL.revokeObjectURL(url), 5000)
    }
    // A menu that closes on a press outside `ref` while it is open.
    export function useDismiss(ref, open, close) {
      useEffect(() => {
        if (!open) return undefined
        const onDown = (e) => { if (ref.current && !ref.current.contains(e.target)) close() }
        document.addEventListener('mousedown', onDown)
        return () => document.removeEventListener('mousedown', onDown)
      }, [open])
    }
