import { BASE, POLL_MS, PUSH, RETRY_MAX_MS, RETRY_MIN_MS, useEffect, useState, useSyncExternalStore } from './head.js'
    // ───────────────────────────── data ─────────────────────────────
    // An answer of /series (docs/protocol.md) applied to the series the tab holds: the series it
    // describes, or null when it does not follow on from the held one (then the tab asks afresh).
    // The server decides what changed; this only copies it in. A body without `kind` is a full body
    // (a server without deltas).
    const GROWING = ['plans', 'envs', 'profileSeqs', 'uncollectedSeqs', 'echoedSeqs', 'rounds']
    export function applyAnswer(series, ans) {
      if (!ans || typeof ans !== 'object') return null
      if (ans.kind === undefined) return Array.isArray(ans.iterations) ? ans : null
      if (ans.kind === 'full') return ans.body && Array.isArray(ans.body.iterations) ? ans.body : null
      if (ans.kind !== 'delta' || !series || !ans.iterations) return null
      const d = ans.iterations
      const from = series.iterations.length
      if (d.from !== from) return null
      // One copy at most (at 50k points every array copied is a large allocation): the held arrays are
      // never written, so that an answer from any held state applies to it.
      const iterations = d.items.length || d.changed.length ? series.iterations.concat(d.items) : series.iterations
      for (const [i, row] of d.changed) {
        if (!(i >= 0 && i < from)) return null
        iterations[i] = row
      }
      const next = { ...series, iterations, sessionId: ans.sessionId, updatedAt: ans.updatedAt, bestIndex: ans.bestIndex }
      // The latest finalize call (spec H-8) comes whole with every answer; absent while the log has none.
      if (ans.finalize !== undefined) next.finalize = ans.finalize
      else delete next.finalize
      for (const key of GROWING) {
        const l = ans[key]
        if (!l) continue
        const cur = series[key] ?? []
        if (l.from !== cur.length) return null
        next[key] = cur.concat(l.items)
      }
      if (ans.control === null || ans.control === undefined) delete next.control
      else next.control = ans.control
      if (ans.chart && ans.chart.append !== undefined) {
        next.chart = appendChart(series.chart, ans.chart)
        if (!next.chart) return null
      } else if (ans.chart !== undefined) next.chart = ans.chart
      return next
    }
    // `chart.append` = k: the held chart's first k points, phases and row rounds, then the answer's;
    // `chart.appendProfiled` = j: the same for the profile marks (markers.profiled) from mark j;
    // everything else as the answer says. It has no `line`: the tab draws the line from the points.
    const PER_POINT = ['points', 'phases', 'rowRounds']
    function appendChart(held, c) {
      const k = c.append
      if (!held || !Number.isInteger(k) || k < 0) return null
      const next = { ...c }
      delete next.append
      delete next.appendProfiled
      for (const key of PER_POINT) {
        const cur = held[key] ?? []
        if (cur.length < k) return null
        const add = c[key] ?? []
        next[key] = k === cur.length ? (add.length ? cur.concat(add) : cur) : cur.slice(0, k).concat(add)
      }
      const j = c.appendProfiled
      if (j !== undefined) { // a server before appendProfiled sends every mark
        const cur = held.markers?.profiled ?? []
        if (!Number.isInteger(j) || j < 0 || cur.length < j) return null
        next.markers = { ...c.markers, profiled: cur.slice(0, j).concat(c.markers?.profiled ?? []) }
      }
      return next
    }

    // One store per session, shared by the tab, the launcher and the strip: one push socket (or,
    // when it is refused or drops, one poll with one ETag) per session.
    // Push: ws(s)://<host>/plugins/kernel-opt/push?sessionId=…&since=<revision we hold>; each message
    // is the answer for our revision (lib/push.mjs): {"kind":"full","revision","body"} or a delta.
    // A socket that closes falls back to the poll at once and is retried with a growing delay.
    const stores = new Map()
    export function storeFor(sessionId) {
      let s = stores.get(sessionId)
      if (s) return s
      const listeners = new Set()
      let timer = null
      let inflight = false
      let sock = null
      let retry = null
      let retryMs = RETRY_MIN_MS
      const pollOn = () => {
        if (timer || listeners.size === 0) return
        st.poll()
        timer = setInterval(() => { if (typeof document === 'undefined' || !document.hidden) st.poll() }, POLL_MS)
      }
      const pollOff = () => { if (timer) { clearInterval(timer); timer = null } }
      const st = {
        sessionId,
        snap: { series: null, status: 'loading', error: null, version: 0 },
        etag: null,
        revision: null, // the revision of snap.series (from a push message or X-Kopt-Revision)
        transport: 'none', // 'push' while the socket is open, else 'poll'
        gen: 0, // push messages applied
        lastUpdateStart: 0,
        subscribe(fn) {
          listeners.add(fn)
          if (listeners.size === 1) st.connect()
          return () => {
            listeners.delete(fn)
            if (listeners.size === 0) st.stop()
          }
        },
        get: () => st.snap,
        set(patch) { st.snap = { ...st.snap, ...patch, version: st.snap.version + 1 }; for (const l of [...listeners]) l() },
        connect() {
          if (sock || listeners.size === 0) return
          if (typeof WebSocket === 'undefined' || typeof location === 'undefined' || !PUSH) { st.transport = 'poll'; pollOn(); return }
          const q = `sessionId=${encodeURIComponent(sessionId)}${st.revision !== null ? `&since=${st.revision}` : ''}`
          let ws
          try {
            ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${BASE}/push?${q}`)
          } catch {
            st.transport = 'poll'; pollOn(); st.retryLater(); return
          }
          sock = ws
          ws.onopen = () => { if (sock !== ws) return; st.transport = 'push'; retryMs = RETRY_MIN_MS; pollOff() }
          ws.onmessage = (e) => { if (sock === ws) st.receive(e.data) }
          ws.onclose = () => {
            if (sock !== ws) return
            sock = null
            st.transport = 'poll'
            pollOn() // refused or dropped: poll meanwhile
            st.retryLater()
          }
        },
        retryLater() {
          if (retry || listeners.size === 0) return
          retry = setTimeout(() => { retry = null; st.connect() }, retryMs)
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
        },
        stop() {
          pollOff()
          if (retry) { clearTimeout(retry); retry = null }
          const ws = sock
          sock = null
          if (ws) { try { ws.close(1000) } catch { /* already closing */ } }
          st.transport = 'none'
        },
        receive(text) {
          const t0 = performance.now()
          let msg
          try { msg = JSON.parse(text) } catch { msg = null }
          if (!msg || typeof msg.revision !== 'number') return
          const series = msg.kind === 'delta' && msg.since !== st.revision ? null : applyAnswer(st.snap.series, msg)
          if (!series) {
            // A message we cannot apply: resubscribe from scratch rather than show a wrong state.
            st.revision = null
            if (sock) { const ws = sock; sock = null; try { ws.close(1000) } catch { /* closing */ } st.connect() }
            return
          }
          st.lastParseMs = performance.now() - t0
          st.revision = msg.revision
          st.gen++
          st.etag = null // a later poll (if the socket drops) asks since this revision
          st.lastUpdateStart = t0
          st.set({ series, status: 'ok', error: null })
        },
        async poll() {
          if (inflight) return
          inflight = true
          let again = false
          const ctl = typeof AbortController !== 'undefined' ? new AbortController() : null
          const to = setTimeout(() => ctl?.abort(), 10000)
          try {
            const headers = { accept: 'application/json' }
            if (st.etag) headers['if-none-match'] = st.etag
            const gen = st.gen // a push message applied while this request was out makes its answer stale
            const held = st.snap.series && st.revision !== null ? st.snap.series : null
            const since = held ? `&since=${encodeURIComponent(st.revision)}` : ''
            const res = await fetch(`${BASE}/series?sessionId=${encodeURIComponent(sessionId)}${since}`, { headers, signal: ctl?.signal, cache: 'no-store' })
            if (res.status === 304) return
            if (res.status === 202) {
              // A past session whose log the server is still reading: show "loading" and ask again.
              const wait = Math.min(10, Math.max(0.2, Number(res.headers.get('retry-after')) || 1))
              if (st.snap.status !== 'ok') st.set({ status: 'loading', error: null })
              setTimeout(() => { st.poll() }, wait * 1000)
              return
            }
            if (!res.ok) { st.set({ status: res.status === 404 ? 'unknown' : 'error', error: `HTTP ${res.status}` }); return }
            const text = await res.text()
            const t0 = performance.now()
            if (st.gen !== gen) return
            const ans = JSON.parse(text)
            const series = applyAnswer(held, ans)
            st.lastParseMs = performance.now() - t0
            if (!series) {
              // Not a body, or a delta that does not follow on from what the tab holds: ask afresh.
              st.etag = null
              st.revision = null
              if (held) again = true
              else st.set({ status: 'error', error: 'bad body' })
              return
            }
            st.etag = res.headers.get('etag')
            const rev = res.headers.get('x-kopt-revision')
            st.revision = rev !== null && /^\d{1,16}$/.test(rev) ? Number(rev) : null
            st.lastUpdateStart = t0
            st.set({ series, status: 'ok', error: null })
          } catch (err) {
            if (st.snap.status !== 'ok') st.set({ status: 'error', error: String(err?.message ?? err) })
          } finally {
            clearTimeout(to)
            inflight = false
          }
          if (again) return st.poll()
        },
        refresh() { st.etag = null; return st.poll() },
      }
      stores.set(sessionId, st)
      return st
    }
    export function useSeries(sessionId) {
      const st = storeFor(sessionId)
      const snap = useSyncExternalStore(st.subscribe, st.get, st.get)
      return [snap, st]
    }

    // The run's exports, made by the core from the session's whole series as `kopt report` writes them
    // (GET /plugins/kernel-opt/{csv,json,markdown}; the markdown table in the tab's language).
    export async function fetchExport(sessionId, kind, lang) {
      const res = await fetch(`${BASE}/${kind}?sessionId=${encodeURIComponent(sessionId)}${lang ? `&lang=${lang}` : ''}`, { cache: 'no-store' })
      if (!res.ok) throw new Error(`${kind}: HTTP ${res.status}`)
      return res.text()
    }

    export async function control(sessionId, action, extra) {
      const res = await fetch(`${BASE}/control`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId, action, ...(extra || {}) }),
      })
      let body = null
      try { body = await res.json() } catch { body = null }
      if (!res.ok) throw new Error(body?.error || `HTTP ${res.status}`)
      return body
    }

    let modelsCache = null
    export function useModels(enabled) {
      const [models, setModels] = useState(modelsCache)
      useEffect(() => {
        if (!enabled || modelsCache) return undefined
        let alive = true
        fetch(`${BASE}/models`, { headers: { accept: 'application/json' } })
          .then(r => (r.ok ? r.json() : null))
          .then((m) => { if (m && Array.isArray(m.providers)) { modelsCache = m; if (alive) setModels(m) } })
          .catch(() => {})
        return () => { alive = false }
      }, [enabled])
      return models
    }
    const effortCache = new Map()
    export function useEfforts(provider, model) {
      const key = provider && model ? `${provider}\u0000${model}` : ''
      const [info, setInfo] = useState(() => effortCache.get(key) ?? null)
      useEffect(() => {
        if (!key) { setInfo(null); return undefined }
        if (effortCache.has(key)) { setInfo(effortCache.get(key)); return undefined }
        let alive = true
        fetch(`${BASE}/models?provider=${encodeURIComponent(provider)}&model=${encodeURIComponent(model)}`)
          .then(r => (r.ok ? r.json() : null))
          .then((m) => { const v = m?.reasoning ?? { efforts: [] }; effortCache.set(key, v); if (alive) setInfo(v) })
          .catch(() => {})
        return () => { alive = false }
      }, [key])
      return info
    }

