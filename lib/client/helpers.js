    // ───────────────────────────── helpers ─────────────────────────────
    function fmtLatency(ms) {
      if (typeof ms !== 'number' || !isFinite(ms)) return '—'
      if (ms < 1) return `${(ms * 1000).toPrecision(3)}µs`
      if (ms < 1000) return `${ms.toPrecision(4)}ms`
      return `${(ms / 1000).toPrecision(3)}s`
    }
    const fmtX = v => `×${Number(v.toPrecision(3))}`
    const fmtGap = v => `${v > 0 ? '+' : ''}${v}%`
    const seqNum = s => (typeof s === 'number' ? s : Number(s))
    // Verdict and trust are decided in C++ (include/kopt/verdict.hpp) and sent per row; the tab only reads them.
    const verdictOf = it => it.verdict || 'unknown'
    const verdictTone = v => (v === 'ok' ? 'ok' : v === 'pending' || v === 'unknown' ? 'dim' : v === 'evaluator' ? 'warn' : 'bad')
    const trustOf = it => it.trust || 'tool'
    // The last entry of `list` (ordered by seq in log order) with seq below `seq`.
    function lastBefore(list, seq, pred) {
      const n = seqNum(seq)
      let found
      for (const x of list) { if (seqNum(x.seq) < n && (!pred || pred(x))) found = x }
      return found
    }
    function download(name, type, text) {
      const blob = new Blob([text], { type })
      const url = URL.createObjectURL(blob)
      const a = document.createElement('a')
      a.href = url; a.download = name
      document.body.appendChild(a); a.click(); a.remove()
      setTimeout(() => URL.revokeObjectURL(url), 5000)
    }
    function csvCell(v) {
      if (v === undefined || v === null) return ''
      const s = typeof v === 'object' ? JSON.stringify(v) : String(v)
      return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
    }
    function runCsv(series) {
      const its = series.iterations
      const phases = series.chart?.phases ?? []
      const cols = ['index', 'seq', 'tool', 'phase', 'verdict', 'compiled', 'correct', 'latencyMs', 'speedup', 'best', 'finalized', 'channel', 'jobId', 'evaluationId', 'artifactPath', 'command', 'error', 'approach', 'metrics', 'slurm']
      const rows = [cols.join(',')]
      its.forEach((it, i) => {
        const plan = lastBefore(series.plans ?? [], it.seq)
        const rec = {
          index: i + 1, seq: it.seq, tool: it.tool, phase: phases[i], verdict: verdictOf(it), compiled: it.compiled, correct: it.correct,
          latencyMs: it.latencyMs, speedup: it.speedup, best: series.bestIndex === i ? 'true' : '', finalized: it.finalized ? 'true' : '',
          channel: it.channel ?? 'tool', jobId: it.jobId, evaluationId: it.evaluationId, artifactPath: it.artifactPath, command: it.command,
          error: it.error, approach: plan ? `[${plan.phase}] ${plan.approach}` : '', metrics: it.metrics, slurm: it.slurm,
        }
        rows.push(cols.map(c => csvCell(rec[c])).join(','))
      })
      return rows.join('\n') + '\n'
    }
    // A menu that closes on a press outside `ref` while it is open.
    function useDismiss(ref, open, close) {
      useEffect(() => {
        if (!open) return undefined
        const onDown = (e) => { if (ref.current && !ref.current.contains(e.target)) close() }
        document.addEventListener('mousedown', onDown)
        return () => document.removeEventListener('mousedown', onDown)
      }, [open])
    }
