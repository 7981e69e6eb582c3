import { Fragment, h, useEffect, useRef, useState } from './head.js'
import { activeLang } from './strings.js'
import { control, useEfforts, useModels } from './data.js'
    // ───────────────────────────── controls ─────────────────────────────
    function reasonText(t, r) { return ['finalized', 'converged', 'budget', 'at-limit', 'no-progress', 'stopped'].includes(r) ? t(`reason.${r}`) : String(r) }
    export function loopStatus(t, loop) {
      if (!loop) return ''
      if (loop.armed) return t('loop.running', { round: loop.round, done: loop.evalsDone, budget: loop.budget })
      if (loop.stopReason) return t('loop.stopped', { reason: reasonText(t, loop.stopReason) })
      if (loop.available === false) return t('loop.unavailable')
      return t('loop.idle')
    }

    // The options shared by the panel's controls and the launcher card.
    export function useLoopOptions(loop) {
      const [budget, setBudget] = useState(() => String(loop?.defaultBudget ?? loop?.budget ?? 20))
      const [lang, setLang] = useState('follow')
      const touched = useRef(false)
      useEffect(() => { if (!touched.current && loop && !loop.armed && (loop.defaultBudget || loop.budget)) setBudget(String(loop.budget || loop.defaultBudget)) }, [loop?.defaultBudget, loop?.budget, loop?.armed])
      // While a loop runs the field shows the budget it was armed with (/kloop 8, the launcher, the tab).
      const shown = loop?.armed && loop.budget > 0 ? String(loop.budget) : budget
      return { budget: shown, setBudget: (v) => { touched.current = true; setBudget(v) }, lang, setLang }
    }
    export async function startLoop(sessionId, opts) {
      const b = Number(opts.budget)
      const extra = {}
      if (Number.isInteger(b) && b >= 1 && b <= 9999) extra.budget = b
      extra.outputLanguage = opts.lang === 'follow' ? activeLang() : opts.lang
      return control(sessionId, 'loop-arm', extra)
    }

    export function LoopFields({ opts, t, disabled }) {
      return h(Fragment, null,
        h('label', { className: 'kopt-field' }, t('loop.budget'),
          h('input', { className: 'kopt-input', type: 'number', min: 1, max: 9999, value: opts.budget, disabled, 'data-kopt': 'budget', onChange: e => opts.setBudget(e.target.value) })),
        h('label', { className: 'kopt-field' }, t('loop.lang'),
          h('select', { className: 'kopt-select', value: opts.lang, disabled, 'data-kopt': 'lang', onChange: e => opts.setLang(e.target.value) },
            h('option', { value: 'follow' }, t('lang.follow')), h('option', { value: 'zh' }, t('lang.zh')), h('option', { value: 'en' }, t('lang.en')))))
    }

    export function SupervisionFields({ sessionId, sup, locked, t, onChanged, setErr }) {
      const models = useModels(true)
      const eff = sup?.effective
      const override = eff && eff.source === 'session' ? `${eff.provider}/${eff.model}` : ''
      const sel = override ? { provider: eff.provider, model: eff.model } : null
      const efforts = useEfforts(sel?.provider ?? eff?.provider, sel?.model ?? eff?.model)
      const known = models ? models.providers.flatMap(p => (p.models ?? []).map(m => `${p.id}/${m.id}`)) : []
      const act = async (action, extra) => {
        try { setErr(null); await control(sessionId, action, extra) } catch (e) { setErr(t('err.request', { msg: e.message })) }
        onChanged()
      }
      const pick = (value) => {
        if (!value) return act('supervise-use', { provider: '', model: '' })
        const k = value.indexOf('/')
        return act('supervise-use', { provider: value.slice(0, k), model: value.slice(k + 1) })
      }
      const effortList = efforts?.efforts ?? []
      const curEffort = eff?.reasoningEffort ?? ''
      return h(Fragment, null,
        h('div', { className: 'kopt-seg', role: 'group', 'aria-label': t('sup.row'), 'data-kopt': 'sup-toggle' },
          h('button', { className: sup?.enabled ? 'sel' : '', disabled: locked, onClick: () => act('supervise-on'), 'aria-pressed': !!sup?.enabled }, t('sup.on')),
          h('button', { className: sup?.enabled ? '' : 'sel', disabled: locked, onClick: () => act('supervise-off'), 'aria-pressed': !sup?.enabled }, t('sup.off'))),
        h('label', { className: 'kopt-field' }, t('sup.model'),
          h('select', { className: 'kopt-select', value: override, disabled: locked, 'data-kopt': 'sup-model', onChange: e => pick(e.target.value) },
            h('option', { value: '', title: sup?.configRoute ? `${sup.configRoute.provider}/${sup.configRoute.model}` : undefined }, sup?.configRoute ? `${t('sup.modelDefault')} · ${sup.configRoute.model}` : t('sup.modelDefault')),
            override && !known.includes(override) ? h('option', { value: override }, override) : null,
            (models?.providers ?? []).map(p => (p.models ?? []).map(m => h('option', { key: `${p.id}/${m.id}`, value: `${p.id}/${m.id}` }, `${p.name || p.id} / ${m.name || m.id}`))))),
        effortList.length ? h('label', { className: 'kopt-field' }, t('sup.effort'),
          h('select', {
            className: 'kopt-select', value: curEffort, disabled: locked || !override, 'data-kopt': 'sup-effort',
            onChange: e => act('supervise-use', { provider: eff.provider, model: eff.model, ...(e.target.value ? { reasoningEffort: e.target.value } : {}) }),
          },
          h('option', { value: '' }, efforts?.defaultEffort ? `${t('sup.effortDefault')} (${efforts.defaultEffort})` : t('sup.effortDefault')),
          effortList.map(x => h('option', { key: x.id, value: x.id, title: x.description }, x.name || x.id)))) : null,
        locked ? h('span', { className: 'kopt-note' }, '🔒 ', t('sup.locked')) : null,
        !locked && !sup?.configured && !override ? h('span', { className: 'kopt-note' }, t('sup.none')) : null)
    }

    export function RunControls({ sessionId, series, t, refresh }) {
      const loop = series?.control?.loop
      const sup = series?.control?.supervisor
      const opts = useLoopOptions(loop)
      const [err, setErr] = useState(null)
      const [busy, setBusy] = useState(false)
      const armed = !!loop?.armed
      const onStart = async () => {
        setBusy(true); setErr(null)
        try { await startLoop(sessionId, opts) } catch (e) { setErr(t('err.request', { msg: e.message })) }
        setBusy(false); refresh()
      }
      const onStop = async () => {
        setBusy(true); setErr(null)
        try { await control(sessionId, 'loop-stop') } catch (e) { setErr(t('err.request', { msg: e.message })) }
        setBusy(false); refresh()
      }
      return h('div', { className: 'kopt-card kopt-controls', 'data-kopt': 'controls' },
        h('div', { className: 'kopt-row' },
          h('span', { className: 'kopt-rowlabel' }, t('loop.row')),
          h(LoopFields, { opts, t, disabled: armed || busy }),
          armed
            ? h('button', { className: 'kopt-btn kopt-danger', disabled: busy, onClick: onStop, 'data-kopt': 'loop-stop' }, t('loop.stop'))
            : h('button', { className: 'kopt-btn kopt-primary', disabled: busy || loop?.available === false, onClick: onStart, 'data-kopt': 'loop-start' }, t('loop.start')),
          h('span', { className: `kopt-status${armed ? ' on' : ''}`, 'data-kopt': 'loop-status' }, loopStatus(t, loop))),
        h('div', { className: 'kopt-row' },
          h('span', { className: 'kopt-rowlabel' }, t('sup.row')),
          h(SupervisionFields, { sessionId, sup, locked: armed, t, onChanged: refresh, setErr })),
        err ? h('div', { className: 'kopt-err' }, err) : null)
    }

