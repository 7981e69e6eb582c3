import { DETECT_MS, NS, PLUGIN_ID, PRESET_ID, module } from './head.js'
import { en, env, makeT, zh } from './strings.js'
import { applyAnswer, storeFor } from './data.js'
import { verdictOf } from './helpers.js'
import { installCss } from './styles.js'
import { EvalTab } from './tab.js'
import { Launcher, StatusStrip, hasSignal, presetOf } from './composer.js'
    // ───────────────────────────── apply ─────────────────────────────
    function apply(ctx) {
      env.locale = ctx.locale
      env.sessions = ctx.sessions
      try { env.t = ctx.locale.bind(NS) } catch { env.t = null }
      const effect = (fn, label) => (typeof ctx.effect === 'function' ? ctx.effect(fn, label) : fn())
      effect(() => installCss(), 'kernel-opt: styles')
      effect(() => ctx.locale.register(NS, { zh, en }), 'kernel-opt: strings')
      const label = () => makeT(null)('tab.label')
      // The tab: always in kernel-opt sessions; elsewhere once the session shows a signal.
      ctx.slots.inject('conversation.view', () => {
        let hold = null
        let disposed = false
        let unsubStore = null
        let watched = null
        const show = () => {
          if (disposed || hold) return
          hold = ctx.slots.register({ name: 'conversation.view', id: PLUGIN_ID, order: 30, label, locale: NS }, EvalTab)
        }
        const hide = () => { if (hold) { const d = hold; hold = null; d() } }
        const sync = () => {
          if (disposed) return
          let cur
          try { cur = ctx.sessions.list.getSnapshot().current } catch { cur = undefined }
          if (!cur) { hide(); return }
          if (presetOf(cur) === PRESET_ID) { show(); return }
          if (watched !== cur) {
            unsubStore?.()
            watched = cur
            const st = storeFor(cur)
            // A slow watch: the shared store polls, and the signal decides.
            unsubStore = st.subscribe(() => { if (watched === cur) { if (hasSignal(st.get().series)) show(); else if (st.get().series) hide() } })
          }
          const s = storeFor(cur).get().series
          if (hasSignal(s)) show(); else if (s) hide()
        }
        const unsubList = ctx.sessions.list.subscribe(sync)
        const timer = setInterval(sync, DETECT_MS)
        sync()
        return () => { disposed = true; clearInterval(timer); unsubList?.(); unsubStore?.(); hide() }
      })
      ctx.slots.inject('conversation.input.left', () => ctx.slots.register({ name: 'conversation.input.left', id: `${PLUGIN_ID}-launcher`, order: 40, locale: NS }, Launcher))
      ctx.slots.inject('conversation.input.dock', () => ctx.slots.register({ name: 'conversation.input.dock', id: `${PLUGIN_ID}-strip`, order: 10, locale: NS }, StatusStrip))
    }

    module.exports = { inject: ['slots', 'locale', 'sessions'], apply, __test: { verdictOf, applyAnswer, zh, en } }
    return module.exports
  },
})
