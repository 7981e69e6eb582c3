import { Fragment, h, memo, useMemo, useState } from './head.js'
import { lastBefore, toneOf, trustOf, verdictOf, versusText, wordOf } from './helpers.js'
import { activeLang } from './strings.js'
import { COLORS, slurmWhere } from './curve.js'
    // ───────────────────────────── cards ─────────────────────────────
    export function PlanCard({ plans, t }) {
      const p = plans.length ? plans[plans.length - 1] : null
      const stuck = p && /stuck/i.test(p.phase)
      return h('div', { className: `kopt-card${stuck ? ' kopt-stuck' : ''}`, 'data-kopt': 'plan' },
        h('h3', null, t('plan.title'), p ? h('span', { className: 'kopt-note', style: { fontWeight: 400 } }, t('plan.count', { n: plans.length })) : null),
        !p ? h('div', { className: 'kopt-note' }, t('plan.none')) : h(Fragment, null,
          h('div', null, h('span', { className: `kopt-tag ${stuck ? 'stuck' : 'accent'}` }, stuck ? (p.phase.toLowerCase() === 'stuck' ? `⚠ ${t('plan.stuck')}` : `⚠ ${p.phase} · ${t('plan.stuck')}`) : p.phase)),
          h('div', { className: 'kopt-approach' }, p.approach || '—'),
          h('dl', { className: 'kopt-kv', style: { margin: 0 } },
            p.hypothesis ? h(Fragment, null, h('dt', null, t('plan.hypothesis')), h('dd', null, p.hypothesis)) : null,
            p.next ? h(Fragment, null, h('dt', null, t('plan.next')), h('dd', null, p.next)) : null)))
    }
    export function EnvCard({ envs, t }) {
      const e = envs.length ? envs[envs.length - 1] : null
      const versions = e?.versions ? Object.entries(e.versions).map(([k, v]) => `${k} ${v}`).join(' · ') : ''
      return h('div', { className: 'kopt-card', 'data-kopt': 'env' },
        h('h3', null, t('env.title')),
        !e ? h('div', { className: 'kopt-note' }, t('env.none')) : h('dl', { className: 'kopt-kv', style: { margin: 0 } },
          h('dt', null, t('env.location')), h('dd', null, e.location),
          h('dt', null, t('env.device')), h('dd', null, e.device),
          e.constraint ? h(Fragment, null, h('dt', null, t('env.constraint')), h('dd', null, e.constraint)) : null,
          versions ? h(Fragment, null, h('dt', null, t('env.versions')), h('dd', null, versions)) : null,
          e.probe ? h(Fragment, null, h('dt', null, t('env.probe')), h('dd', { className: 'kopt-cmd' }, e.probe)) : null,
          e.notes ? h(Fragment, null, h('dt', null, t('env.notes')), h('dd', null, e.notes)) : null))
    }
    // The reviews as the core lists them (chart.reviews: newest first, each with its word; the report
    // lists them by the same rule).
    export function ReviewCard({ rounds, reviews, sup, t }) {
      return h('div', { className: 'kopt-card', 'data-kopt': 'reviews' },
        h('h3', null, t('rev.title'), sup?.enabled ? h('span', { className: 'kopt-tag accent' }, t('sup.on')) : null),
        reviews.length === 0
          ? h('div', { className: 'kopt-note' }, sup?.enabled ? t('rev.waiting') : t('rev.none'))
          : h('div', { className: 'kopt-revs' }, reviews.map(({ round, key, n }) => [rounds[round], key, n]).filter(([r]) => r).map(([r, key, n]) => h('div', { key: String(r.seq), className: 'kopt-rev' },
            h('span', null, t(key, { n })),
            r.reviewFailed
              ? h('span', { style: { color: 'var(--k-bad)' } }, t('rev.failed'))
              : r.review === 'ok'
              ? h('span', { style: { color: 'var(--k-ok)' } }, t('rev.ok'), r.reviewNote ? ` — ${r.reviewNote}` : '')
              : h('span', { style: { whiteSpace: 'pre-wrap' } }, r.review)))))
    }

    // The words, the tone and the speedup's label are the core's (chart.words, chart.points[i].ownSpeedupLabel).
    const RecordRow = memo(function RecordRow({ it, index, isBest, phase, label, speedupLabel, verdictWord, tone, trustWord, vsV, vsText, plan, review, selected, onPick, t, full }) {
      return h('tr', { className: `clickable${selected ? ' sel' : ''}`, onClick: () => onPick(index), 'data-kopt': 'row' },
        h('td', null, `#${index + 1}`, isBest ? h('span', { style: { color: 'var(--k-ok)', marginLeft: 4 } }, '★') : null, it.finalized ? h('span', { style: { color: COLORS.final, marginLeft: 4 } }, '⚑') : null),
        h('td', null, h('span', { className: `kopt-tag ${tone}`, 'data-kopt': 'row-verdict' }, verdictWord), phase && phase !== 'optimization' ? h('span', { className: 'kopt-tag warn', style: { marginLeft: 4 } }, t(`phase.${phase}`)) : null,
          // A failed row says why (the compiler's or the run's error), whole on hover.
          it.error && full ? h('div', { className: 'kopt-err kopt-row-err', 'data-kopt': 'row-error', title: it.error }, it.error.length > 240 ? `${it.error.slice(0, 240)}…` : it.error) : null),
        h('td', null, label ?? '—', vsV ? h('div', { className: 'kopt-note', 'data-kopt': 'row-vs', 'data-v': vsV }, vsText) : null),
        h('td', { 'data-kopt': 'row-speedup' }, speedupLabel ?? ''),
        h('td', null, h('div', { 'data-kopt': 'row-trust' }, trustWord), it.slurm && full ? h('div', { className: 'kopt-note', 'data-kopt': 'row-slurm' }, slurmWhere(it, t)) : null, it.command && full ? h('div', { className: 'kopt-cmd' }, it.command) : null, !it.command ? h('div', { className: 'kopt-note' }, it.tool) : null),
        full ? h('td', null, plan ? h(Fragment, null, h('span', { className: `kopt-tag ${plan.phase === 'stuck' ? 'stuck' : ''}` }, plan.phase), ' ', plan.approach) : '') : null,
        full ? h('td', { 'data-kopt': 'row-review' }, !review ? '' : review.reviewFailed ? h('span', { style: { color: 'var(--k-bad)' } }, t('rev.failed')) : review.review === undefined ? '' : review.review === 'ok' ? h('span', { style: { color: 'var(--k-ok)' } }, t('rev.ok')) : h('span', { style: { whiteSpace: 'pre-wrap' } }, review.review)) : null,
        full ? h('td', null, it.changes ? it.changes.map((c, i) => h('div', { key: i, className: 'kopt-note' }, `${t(c.kind === 'write' ? 'ch.write' : 'ch.edit')} · ${c.tool}`)) : '') : null)
    })

    export function RecordCard({ series, t, selected, onPick }) {
      const [full, setFull] = useState(false)
      const its = series.iterations
      const phases = series.chart?.phases ?? []
      const plans = series.plans ?? []
      const rounds = series.rounds ?? []
      const rows = (list, isFull) => h('table', { className: 'kopt-table' },
        h('thead', null, h('tr', null,
          h('th', null, t('table.n')), h('th', null, t('table.verdict')), h('th', null, t('table.latency')), h('th', null, t('table.speedup')), h('th', null, t('table.channel')),
          isFull ? h('th', null, t('table.approach')) : null, isFull ? h('th', null, t('table.review')) : null, isFull ? h('th', null, t('table.changes')) : null)),
        h('tbody', null, list.map(i => h(RecordRow, {
          key: i, it: its[i], index: i, isBest: series.bestIndex === i, phase: phases[i], selected: selected === i, onPick, t, full: isFull,
          // The latency as the core labels it (chart.points[i].label; only measured points have one).
          label: series.chart?.points?.[i]?.label,
          speedupLabel: series.chart?.points?.[i]?.ownSpeedupLabel,
          verdictWord: wordOf(series.chart, `verdict.${verdictOf(its[i])}`, activeLang()),
          tone: toneOf(series.chart, verdictOf(its[i])),
          trustWord: wordOf(series.chart, `trust.${trustOf(its[i])}`, activeLang()),
          // Against the best before it, in the core's words (spec S); only points with an interval have it.
          // Strings, not an object: the memoised row compares its props by value.
          vsV: series.chart?.points?.[i]?.vsBest?.v,
          vsText: versusText(series.chart, 'best', series.chart?.points?.[i]?.vsBest, activeLang()) || undefined,
          plan: isFull ? lastBefore(plans, its[i].seq) : undefined,
          // The loop message in force for the row (the core's rowRounds): its own review, or that it failed.
          review: isFull ? rounds[series.chart?.rowRounds?.[i] ?? -1] : undefined,
        }))))
      const last = []
      for (let i = its.length - 1; i >= 0 && last.length < 5; i--) last.push(i)
      const all = useMemo(() => (full ? its.map((_, i) => i) : []), [full, its])
      return h('div', { className: 'kopt-card', 'data-kopt': 'records' },
        h('h3', null, t('recent.title')),
        rows(last, false),
        h('button', { className: 'kopt-link', onClick: () => setFull(!full), 'data-kopt': 'full-record', 'aria-expanded': full }, full ? t('recent.hide') : t('recent.all', { n: its.length })),
        full ? h('div', { className: 'kopt-tablewrap', 'data-kopt': 'full-table' }, rows(all, true)) : null)
    }

