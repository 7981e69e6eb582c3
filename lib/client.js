// dsh-kernel-opt — the browser half (hand-written CJS, one file for the host's module loader).
// Built from lib/client/*.js by `node scripts/build-client.mjs` (one part per thing drawn); edit
// the parts, not lib/client.js.
//
// Registers with DSH web's module loader and, through the shell's services, adds:
//   · the 评测 / Evaluations session tab (slot `conversation.view`): run controls, summary chips,
//     the curve, the current approach, the environment, supervision records and the record table;
//   · a 「⟳ 启动循环」 launcher in the composer's tool row (slot `conversation.input.left`);
//   · a status strip above the composer while the loop runs (slot `conversation.input.dock`).
// React and the ui-slots module come from the host's module table (nothing else is required).
// The curve's geometry comes from the core (`series.chart`, src/core/panel/chart.cpp); this file draws.
// Data: pushed over a WebSocket (/plugins/kernel-opt/push, one per session, lib/push.mjs); when the
// socket is refused or drops, GET /plugins/kernel-opt/series?sessionId=&since=<revision> polled every
// 1.5 s with If-None-Match until it is back. Either way each answer (docs/protocol.md) is what changed
// since the revision the tab holds, or the full body.
window.__ModuleLoader__.load({
  id: 'dsh-kernel-opt',
  factory: (require) => {
    'use strict'
    const module = { exports: {} }
    const React = require('react')
    // Taken so the bundle shares the shell's copy; only its presence matters here.
    let uiSlots = null
    try { uiSlots = require('@deepseek-ai/dsh-client-ui-slots') } catch { uiSlots = null }
    void uiSlots

    const h = React.createElement
    const { useState, useEffect, useLayoutEffect, useMemo, useRef, useCallback, useSyncExternalStore, memo, Fragment } = React

    // The plugin id, written in by the build from lib/anchors.json (its one home, through lib/config.mjs): the
    // locale namespace, the preset id and the route base all derive from it.
    const PLUGIN_ID = 'kernel-opt'
    const NS = PLUGIN_ID
    const PRESET_ID = PLUGIN_ID
    const BASE = `/plugins/${PLUGIN_ID}`
    const POLL_MS = 1500
    // Push first (lib/push.mjs); ?kopt-push=0 in the page URL forces the poll (tests, diagnosis).
    const PUSH = typeof location === 'undefined' || !/[?&]kopt-push=0\b/.test(location.search)
    const RETRY_MIN_MS = 1000
    const RETRY_MAX_MS = 30000
    const DETECT_MS = 3000

    // ───────────────────────────── strings ─────────────────────────────
    // The words the tab shares with the HTML report are the core's table (kopt/labels.hpp, Word::page),
    // written in here by scripts/build-client.mjs; the tab's own words follow.
    const PAGE_WORDS = {"zh":{"legend.ok":"通过","legend.failed":"失败","legend.unmeasured":"未测得","legend.best":"最佳","legend.profiled":"做过性能剖析","legend.final":"最终提交","axis.best":"最佳","phase.over-budget":"超预算","phase.wrap-up":"收尾","chip.opt.tip":"循环预算内的优化评测（不含收尾与复测）","chip.over.tip":"超出预算后仍进行的评测","chip.wrap.tip":"收尾阶段的验证评测与插件复测，不计入预算","chip.remeasured":"已复测","chip.notRemeasured":"未复测","chip.gap":"自报 {self}，复测相差 {pct}","chip.gap.plugin":"实测 {self}，复测相差 {pct}","chip.final.re":"插件按记录的命令重新运行测得","chip.final.self":"最终数字来自 Agent 自己的测量，未经插件复测","curve.title":"优化曲线","curve.axisSpeedup":"纵轴：相对参考实现的加速比，越高越快","curve.axisLatency":"纵轴：延迟（越高越快）；本次 run 没有报告加速比","curve.log":"对数刻度","table.n":"#","table.verdict":"结论","table.latency":"延迟","table.speedup":"加速比","table.review":"该轮监督","table.changes":"改动","approach.inForce":"当时方案","ch.write":"写入","ch.edit":"编辑","detail.blocking":"阻断项","detail.advisory":"提示项","detail.notMeasured":"未测得","env.title":"评测环境","env.location":"位置","env.device":"设备","env.constraint":"约束","env.versions":"版本","env.probe":"来源命令","env.notes":"备注","plan.hypothesis":"假设","plan.next":"下一步","rev.round":"第 {n} 轮","rev.wrapup":"收尾复审","rev.audit":"终审","rev.challenge":"早停质询","rev.failed":"监督失败","rev.ok":"✓ 无异议","note.echoed":"有 {n} 行评测结果只是被 echo 打印出来的，不算测量。","note.uncollected":"⚠ 有 {n} 个评测结果来自不收录的通道，未计入记录。"},"en":{"legend.ok":"passed","legend.failed":"failed","legend.unmeasured":"not measured","legend.best":"best","legend.profiled":"profiled","legend.final":"finalized","axis.best":"best","phase.over-budget":"over budget","phase.wrap-up":"wrap-up","chip.opt.tip":"Optimization evaluations within the loop budget (wrap-up and replays excluded)","chip.over.tip":"Evaluations run after the budget was used up","chip.wrap.tip":"Validation and replays in the wrap-up phase; not counted against the budget","chip.remeasured":"re-measured","chip.notRemeasured":"not re-measured","chip.gap":"self-reported {self}, re-measured {pct} off","chip.gap.plugin":"measured {self}, re-measured {pct} off","chip.final.re":"Re-measured by the plugin, re-running the recorded command","chip.final.self":"The final number is the agent's own measurement; the plugin did not re-run it","curve.title":"Optimization curve","curve.axisSpeedup":"Y axis: speedup over the reference — higher is faster","curve.axisLatency":"Y axis: latency (higher is faster); this run reports no speedup","curve.log":"log scale","table.n":"#","table.verdict":"Verdict","table.latency":"Latency","table.speedup":"Speedup","table.review":"Supervision","table.changes":"Changes","approach.inForce":"Approach in force","ch.write":"write","ch.edit":"edit","detail.blocking":"Blocking","detail.advisory":"Advisory","detail.notMeasured":"Not measured","env.title":"Evaluation environment","env.location":"Location","env.device":"Device","env.constraint":"Constraint","env.versions":"Versions","env.probe":"Probe","env.notes":"Notes","plan.hypothesis":"Hypothesis","plan.next":"Next","rev.round":"Round {n}","rev.wrapup":"Wrap-up review","rev.audit":"Final review","rev.challenge":"Early-stop challenge","rev.failed":"Review failed","rev.ok":"✓ no objection","note.echoed":"{n} evaluation line(s) were only echoed, not measured.","note.uncollected":"⚠ {n} evaluation result(s) came through a channel that is not collected; they are not in the record."}}
    const zh = {
      ...PAGE_WORDS.zh,
      'tab.label': '评测',
      'title': '评测',
      'focus.enter': '专注模式',
      'focus.exit': '退出专注 （Esc）',
      'export': '导出',
      'export.csv': '记录 CSV',
      'export.json': '记录 JSON',
      'export.md': 'Markdown 表格（可贴进 PR）',
      'export.svg': '曲线 SVG',
      'loop.row': '循环',
      'loop.budget': '优化评测上限',
      'loop.lang': '本次输出语言',
      'lang.follow': '跟随界面',
      'lang.zh': '中文',
      'lang.en': 'English',
      'loop.start': '⟳ 启动循环',
      'loop.stop': '■ 停止循环',
      'loop.idle': '未运行',
      'loop.unavailable': '循环不可用（宿主缺少所需服务）',
      'loop.running': '运行中 · 第 {round} 轮 · 已用 {done}/{budget} 次评测',
      'loop.stopped': '已停止：{reason}',
      'reason.finalized': 'Agent 已提交最终结果',
      'reason.converged': '监督确认没有进一步优化空间',
      'reason.budget': '评测次数用完，已请求收尾',
      'reason.no-progress': '连续几轮没有新评测，已请求收尾',
      'reason.at-limit': '最好的内核已接近机器上限，已请求收尾',
      'reason.stopped': '手动停止',
      'sup.row': '监督',
      'sup.on': '开',
      'sup.off': '关',
      'sup.model': '监督模型',
      'sup.modelDefault': '按配置',
      'sup.effort': '推理强度',
      'sup.effortDefault': '默认',
      'sup.locked': '循环运行中，监督设置已锁定；先停止循环再修改。',
      'sup.none': '没有可用的监督模型：在列表中选一个，或在插件配置里设置 supervisor。',
      'sup.current': '当前：{route}',
      'chip.opt': '优化评测 {n}',
      'chip.over': '超预算 {n}',
      'chip.wrap': '收尾验证 {n}',
      'chip.wrap.one': '收尾验证 {n}',
      'chip.best': '最佳 {value}',
      'chip.final': '最终 {value}',
      'pop.gap': '复测 {re}，与自报相差 {pct}',
      'pop.gap.plugin': '复测 {re}，与插件评测器的实测相差 {pct}',
      'chip.pending': '评测中…',
      'empty.title': '还没有评测',
      'empty.body': 'Agent 每完成一次评测，这里就多一个点；曲线、方案与监督记录会随会话实时更新。',
      'curve.note': '加速比按汇总的参考耗时 {ref} 换算（各次评测隐含参考耗时的中位数），因此严格随延迟单调；每次评测自报的倍数见弹窗与记录表。',
      'curve.drift': '⚠ 参考耗时不一致：{count} 次评测隐含的参考耗时在 {min} – {max} 之间（相差 {pct}%）。逐次自报的加速比彼此不可直接比较。',
      'curve.hint': '悬停或点击查看某次评测；聚焦曲线后可用 ← → 选择，Enter 固定，Esc 关闭。',
      'trust.command': '来源命令',
      'pop.sources': '测量的字节（SHA-256）',
      'pop.ci': '置信区间',
      'pop.samples': '{n} 次计时',
      'pop.sources.reference': '参考',
      'pop.sources.inputs': '输入规格',
      'eval.queued': '评测排队中（前面还有 {n} 个）',
      'eval.running': '插件评测中 · {stage} · {s} s',
      'eval.stage.start': '启动',
      'eval.stage.build': '编译',
      'eval.stage.judge': '评测',
      'eval.tip': '插件自己的评测器在运行（kernel_evaluate）；停止对话会立即取消它。',
      'pop.metrics': '指标',
      'pop.slurm': 'Slurm 作业 {job} · 节点 {node}',
      'pop.changes': '本次改动',
      'pop.noChanges': '没有记录到结构化改动',
      'pop.close': '关闭',
      'pop.error': '错误',
      'pop.phase.optimization': '优化',
      'plan.title': '当前方案',
      'plan.none': 'Agent 还没有汇报方案。',
      'plan.stuck': '卡住了',
      'plan.count': '第 {n} 次汇报',
      'env.none': 'Agent 还没有汇报评测在哪里运行。',
      'rev.title': '监督记录',
      'rev.none': '还没有监督记录。',
      'rev.waiting': '监督已开启，将在下一个检查点复审。',
      'recent.title': '最近的评测',
      'recent.all': '查看完整记录（{n}）',
      'recent.hide': '收起完整记录',
      'table.channel': '来源',
      'table.approach': '方案',
      'launch.button': '⟳ 启动循环',
      'launch.title': '启动优化循环',
      'launch.body': '启动后 Agent 立即开始；每段工作结束而任务未完成时，循环会自动让它继续，直到达到评测上限或 Agent 提交最终结果。',
      'launch.start': '启动',
      'launch.cancel': '取消',
      'strip.running': '⟳ 循环第 {round} 轮',
      'strip.budget': '{done}/{budget} 次评测',
      'strip.stop': '停止',
      'err.request': '请求失败：{msg}',
      'state.loading': '正在读取…',
    }
    const en = {
      ...PAGE_WORDS.en,
      'tab.label': 'Evaluations',
      'title': 'Evaluations',
      'focus.enter': 'Focus mode',
      'focus.exit': 'Leave focus mode (Esc)',
      'export': 'Export',
      'export.csv': 'Run as CSV',
      'export.json': 'Run as JSON',
      'export.md': 'Markdown table (for a PR)',
      'export.svg': 'Curve as SVG',
      'loop.row': 'Loop',
      'loop.budget': 'Optimization evaluations',
      'loop.lang': 'Output language',
      'lang.follow': 'Follow the interface',
      'lang.zh': '中文',
      'lang.en': 'English',
      'loop.start': '⟳ Start loop',
      'loop.stop': '■ Stop loop',
      'loop.idle': 'Not running',
      'loop.unavailable': 'Loop unavailable (the host lacks a service it needs)',
      'loop.running': 'Running · round {round} · {done}/{budget} evaluations used',
      'loop.stopped': 'Stopped: {reason}',
      'reason.finalized': 'the agent submitted its final result',
      'reason.converged': 'the supervisor saw no further headroom',
      'reason.budget': 'evaluation budget used up, wrap-up requested',
      'reason.no-progress': 'no new evaluations for several rounds, wrap-up requested',
      'reason.at-limit': 'the best kernel is within the configured fraction of the machine\'s limit, wrap-up requested',
      'reason.stopped': 'stopped by hand',
      'sup.row': 'Supervision',
      'sup.on': 'On',
      'sup.off': 'Off',
      'sup.model': 'Supervisor model',
      'sup.modelDefault': 'As configured',
      'sup.effort': 'Reasoning effort',
      'sup.effortDefault': 'Default',
      'sup.locked': 'Locked while the loop runs; stop the loop to change supervision.',
      'sup.none': 'No supervisor model: pick one from the list, or set supervisor in the plugin config.',
      'sup.current': 'Now: {route}',
      'chip.opt': '{n} optimization evals',
      'chip.over': '{n} over budget',
      'chip.wrap': '{n} wrap-up validations',
      'chip.wrap.one': '{n} wrap-up validation',
      'chip.best': 'best {value}',
      'chip.final': 'final {value}',
      'pop.gap': 're-measured {re}, {pct} off the self-reported figure',
      'pop.gap.plugin': 're-measured {re}, {pct} off the plugin-measured figure',
      'chip.pending': 'evaluating…',
      'empty.title': 'No evaluations yet',
      'empty.body': 'Each evaluation the agent completes adds a point here; the curve, the approach and supervision notes update live.',
      'curve.note': 'Speedups use the pooled reference latency {ref} (median of what each evaluation implies), so the curve is strictly monotone in latency; each evaluation\'s own reported multiple is in the popover and the table.',
      'curve.drift': '⚠ The denominator moved: {count} evaluations imply reference latencies from {min} to {max} ({pct}% apart). Per-row reported speedups are not comparable with each other.',
      'curve.hint': 'Hover or click an evaluation; with the curve focused, ← → select, Enter pins, Esc closes.',
      'trust.command': 'Command',
      'pop.sources': 'Bytes measured (SHA-256)',
      'pop.ci': 'interval',
      'pop.samples': '{n} timed trials',
      'pop.sources.reference': 'reference',
      'pop.sources.inputs': 'input spec',
      'eval.queued': 'evaluation queued ({n} ahead)',
      'eval.running': "plugin's evaluator running · {stage} · {s} s",
      'eval.stage.start': 'starting',
      'eval.stage.build': 'building',
      'eval.stage.judge': 'judging',
      'eval.tip': "The plugin's own evaluator is running (kernel_evaluate); stopping the conversation cancels it at once.",
      'pop.metrics': 'Metrics',
      'pop.slurm': 'Slurm job {job} · node {node}',
      'pop.changes': 'Changes',
      'pop.noChanges': 'No structured changes recorded',
      'pop.close': 'Close',
      'pop.error': 'Error',
      'pop.phase.optimization': 'optimization',
      'plan.title': 'Current approach',
      'plan.none': 'The agent has not reported an approach yet.',
      'plan.stuck': 'stuck',
      'plan.count': 'report #{n}',
      'env.none': 'The agent has not said where evaluations run.',
      'rev.title': 'Supervision',
      'rev.none': 'No supervision records yet.',
      'rev.waiting': 'Supervision is on; it reviews at the next checkpoint.',
      'recent.title': 'Latest evaluations',
      'recent.all': 'View the full record ({n})',
      'recent.hide': 'Hide the full record',
      'table.channel': 'Source',
      'table.approach': 'Approach',
      'launch.button': '⟳ Start loop',
      'launch.title': 'Start the optimization loop',
      'launch.body': 'The agent starts at once; whenever a stretch of work ends unfinished, the loop has it continue, until the evaluation limit or a final result.',
      'launch.start': 'Start',
      'launch.cancel': 'Cancel',
      'strip.running': '⟳ Loop round {round}',
      'strip.budget': '{done}/{budget} evaluations',
      'strip.stop': 'Stop',
      'err.request': 'Request failed: {msg}',
      'state.loading': 'loading…',
    }

    // Services captured in apply(); components read them through this object.
    const env = { locale: null, sessions: null, t: null }
    const fill = (s, vars) => (vars ? String(s).replace(/\{(\w+)\}/g, (m, k) => (vars[k] !== undefined ? String(vars[k]) : m)) : String(s))
    function activeLang() {
      try {
        const a = env.locale?.getSnapshot?.()?.active
        if (typeof a === 'string') return a.toLowerCase().startsWith('zh') ? 'zh' : 'en'
      } catch { /* fall through */ }
      const d = (typeof document !== 'undefined' && document.documentElement.lang) || (typeof navigator !== 'undefined' && navigator.language) || 'en'
      return String(d).toLowerCase().startsWith('zh') ? 'zh' : 'en'
    }
    // Props `t` when the slot hands one; else the bound namespace; else our own dictionaries.
    function makeT(propsT) {
      return (key, vars) => {
        let s
        try { s = propsT ? propsT(key, vars) : env.t ? env.t(key, vars) : undefined } catch { s = undefined }
        if (typeof s !== 'string' || s === key || s === `${NS}.${key}`) s = (activeLang() === 'zh' ? zh : en)[key] ?? key
        return fill(s, vars)
      }
    }

    // ───────────────────────────── data ─────────────────────────────
    // An answer of /series (docs/protocol.md) applied to the series the tab holds: the series it
    // describes, or null when it does not follow on from the held one (then the tab asks afresh).
    // The server decides what changed; this only copies it in. A body without `kind` is a full body
    // (a server without deltas).
    const GROWING = ['plans', 'envs', 'profileSeqs', 'uncollectedSeqs', 'echoedSeqs', 'rounds']
    function applyAnswer(series, ans) {
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
    function storeFor(sessionId) {
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
    function useSeries(sessionId) {
      const st = storeFor(sessionId)
      const snap = useSyncExternalStore(st.subscribe, st.get, st.get)
      return [snap, st]
    }

    // The run's exports, made by the core from the session's whole series as `kopt report` writes them
    // (GET /plugins/kernel-opt/{csv,json,markdown}; the markdown table in the tab's language).
    async function fetchExport(sessionId, kind, lang) {
      const res = await fetch(`${BASE}/${kind}?sessionId=${encodeURIComponent(sessionId)}${lang ? `&lang=${lang}` : ''}`, { cache: 'no-store' })
      if (!res.ok) throw new Error(`${kind}: HTTP ${res.status}`)
      return res.text()
    }

    async function control(sessionId, action, extra) {
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
    function useModels(enabled) {
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
    function useEfforts(provider, model) {
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

    // ───────────────────────────── helpers ─────────────────────────────
    const fmtGap = v => `${v > 0 ? '+' : ''}${v}%`
    const seqNum = s => (typeof s === 'number' ? s : Number(s))
    // Verdict and trust are decided in C++ (include/kopt/verdict.hpp) and sent per row; the tab only reads them.
    const verdictOf = it => it.verdict || 'unknown'
    // Their words and the verdict's tone are the core's too: one table (kopt/labels.hpp) sent once per chart as
    // `words`, the one the report (kopt report) reads.
    const wordOf = (chart, key, lang) => chart?.words?.[lang]?.[key] ?? chart?.words?.en?.[key] ?? key
    const toneOf = (chart, v) => chart?.words?.tone?.[v] ?? 'dim'
    const trustOf = it => it.trust || 'tool'
    // The core's comparison words (chart.versusWords, spec S) for a point's label `o` ({v, pct, pm}) under
    // `kind` (best | ref | gap), in the interface's language; '' where the chart has none.
    function versusText(chart, kind, o, lang) {
      const w = o && chart?.versusWords?.[lang]?.[`${kind}.${o.v}`]
      if (typeof w !== 'string') return ''
      return w.replace('{pct}', Number(o.pct ?? 0).toFixed(1)).replace('{pm}', Number(o.pm ?? 0).toFixed(1))
    }
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
    // A menu that closes on a press outside `ref` while it is open.
    function useDismiss(ref, open, close) {
      useEffect(() => {
        if (!open) return undefined
        const onDown = (e) => { if (ref.current && !ref.current.contains(e.target)) close() }
        document.addEventListener('mousedown', onDown)
        return () => document.removeEventListener('mousedown', onDown)
      }, [open])
    }
    // ───────────────────────────── styles ─────────────────────────────
    // The pending pulse runs three times, not forever: an endless animation kept Chromium drawing
    // frames, ≈ 0.1 s of CPU per second for every open tab while a run waited (docs/performance.md, T4).
    const CSS = `
.kopt{--k-text:var(--dsw-alias-label-primary,#1f2329);--k-dim:var(--dsw-alias-label-secondary,#4e5969);--k-faint:var(--dsw-alias-label-tertiary,#7b8391);
--k-border:var(--dsw-alias-border-l1,rgba(120,128,140,.22));--k-card:var(--dsw-alias-bg-layer-1,rgba(127,127,127,.045));--k-bg:var(--dsw-alias-bg-base,#fff);
--k-accent:var(--dsw-alias-brand-primary,#4d6bfe);--k-ok:var(--dsw-alias-state-success-primary,#1f8f5f);--k-bad:var(--dsw-alias-state-error-primary,#d64545);--k-warn:var(--dsw-alias-state-warn-primary,#c27c0e);--k-final:#8a5cf6;
color:var(--k-text);font:14px/1.55 system-ui,-apple-system,"Segoe UI","PingFang SC","Noto Sans CJK SC","Microsoft YaHei",sans-serif;}
.kopt *{box-sizing:border-box}
.kopt-panel{height:100%;overflow:auto;}
.kopt-inner{max-width:1080px;margin:0 auto;padding:16px 22px 40px;display:flex;flex-direction:column;gap:14px}
.kopt-focus{position:fixed;inset:0;z-index:2147483000;background:var(--k-bg);}
.kopt-focus .kopt-inner{max-width:none;padding:18px 28px 40px}
.kopt-head{display:flex;align-items:center;gap:10px}
.kopt-title{font-size:17px;font-weight:600;letter-spacing:.2px}
.kopt-sub{color:var(--k-faint);font-size:13px}
.kopt-grow{flex:1}
.kopt-btn{font:inherit;font-size:13px;line-height:20px;padding:4px 11px;border-radius:8px;border:1px solid var(--k-border);background:transparent;color:var(--k-dim);cursor:pointer;white-space:nowrap}
.kopt-btn:hover:not(:disabled){border-color:var(--k-accent);color:var(--k-accent)}
.kopt-btn:disabled{opacity:.5;cursor:not-allowed}
.kopt-btn:focus-visible,.kopt-chart:focus-visible,.kopt-link:focus-visible{outline:2px solid var(--k-accent);outline-offset:2px}
.kopt-primary{background:var(--k-accent);border-color:var(--k-accent);color:#fff}
.kopt-primary:hover:not(:disabled){color:#fff;filter:brightness(1.07)}
.kopt-danger{color:var(--k-bad);border-color:rgba(214,69,69,.45)}
.kopt-danger:hover:not(:disabled){color:var(--k-bad);border-color:var(--k-bad)}
.kopt-card{border:1px solid var(--k-border);border-radius:12px;background:var(--k-card);padding:12px 16px}
.kopt-card h3{margin:0 0 8px;font-size:14px;font-weight:600;display:flex;align-items:center;gap:8px}
.kopt-controls{display:flex;flex-direction:column;gap:8px}
.kopt-row{display:flex;flex-wrap:wrap;align-items:center;gap:8px 12px}
.kopt-rowlabel{font-weight:600;font-size:13px;min-width:64px;color:var(--k-dim)}
.kopt-field{display:inline-flex;align-items:center;gap:6px;font-size:13px;color:var(--k-dim)}
.kopt-input,.kopt-select{font:inherit;font-size:13px;padding:3px 8px;border-radius:7px;border:1px solid var(--k-border);background:var(--k-bg);color:var(--k-text);max-width:260px}
.kopt-input{width:76px}
.kopt-status{font-size:13px;color:var(--k-dim)}
.kopt-status.on{color:var(--k-accent);font-weight:500}
.kopt-note{font-size:12.5px;color:var(--k-faint)}
.kopt-seg{display:inline-flex;border:1px solid var(--k-border);border-radius:8px;overflow:hidden}
.kopt-seg button{font:inherit;font-size:13px;padding:3px 12px;border:0;background:transparent;color:var(--k-dim);cursor:pointer}
.kopt-seg button.sel{background:var(--k-accent);color:#fff}
.kopt-seg button:disabled{cursor:not-allowed;opacity:.6}
.kopt-chips{display:flex;flex-wrap:wrap;gap:8px}
.kopt-chip{display:inline-flex;align-items:center;gap:6px;padding:2px 11px;border-radius:999px;border:1px solid var(--k-border);font-size:13px;line-height:22px;color:var(--k-dim);white-space:nowrap;font-variant-numeric:tabular-nums}
.kopt-chip.ok{color:var(--k-ok);border-color:rgba(31,143,95,.45);font-weight:500}
.kopt-chip.warn{color:var(--k-warn);border-color:rgba(194,124,14,.45)}
.kopt-chip.final{color:var(--k-final);border-color:rgba(138,92,246,.45)}
.kopt-tag{display:inline-block;font-size:11.5px;line-height:17px;padding:0 7px;border-radius:5px;border:1px solid var(--k-border);color:var(--k-faint);white-space:nowrap}
.kopt-tag.ok{color:var(--k-ok);border-color:rgba(31,143,95,.4)}
.kopt-tag.bad{color:var(--k-bad);border-color:rgba(214,69,69,.4)}
.kopt-tag.warn{color:var(--k-warn);border-color:rgba(194,124,14,.4)}
.kopt-tag.accent{color:var(--k-accent);border-color:rgba(77,107,254,.4)}
.kopt-tag.stuck{color:#fff;background:var(--k-bad);border-color:var(--k-bad);font-weight:600}
.kopt-chartwrap{position:relative}
.kopt-chart{display:block;width:100%;height:auto;border-radius:8px;cursor:crosshair;outline:none;color:var(--k-text)}
.kopt-legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--k-faint);margin-top:4px}
.kopt-legend i{font-style:normal;margin-right:4px}
.kopt-warnbox{font-size:12.5px;color:var(--k-warn);background:rgba(194,124,14,.07);border:1px solid rgba(194,124,14,.3);border-radius:8px;padding:6px 10px;margin-top:8px}
.kopt-pop{position:absolute;z-index:5;box-sizing:border-box;width:340px;max-width:calc(100% - 8px);max-height:380px;overflow:auto;background:var(--k-bg);border:1px solid var(--k-border);border-radius:10px;box-shadow:0 8px 28px rgba(0,0,0,.16);padding:10px 12px;font-size:13px}
.kopt-pop h4{margin:0;font-size:14px;display:flex;align-items:center;gap:8px}
.kopt-pop .kopt-x{margin-left:auto;border:0;background:transparent;cursor:pointer;color:var(--k-faint);font-size:15px}
.kopt-sec{margin-top:8px}
.kopt-sec > b{display:block;font-size:12px;color:var(--k-dim);margin-bottom:2px}
.kopt-pre{margin:2px 0 0;padding:6px 8px;font:12px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono CJK SC",monospace;white-space:pre-wrap;word-break:break-word;background:rgba(127,127,127,.08);border-radius:6px;max-height:200px;overflow:auto}
.kopt-pre.old{border-left:3px solid rgba(214,69,69,.6)}
.kopt-pre.new{border-left:3px solid rgba(31,143,95,.6)}
.kopt-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:14px}
.kopt-kv{display:grid;grid-template-columns:auto 1fr;gap:3px 12px;font-size:13px}
.kopt-kv dt{color:var(--k-faint)}
.kopt-kv dd{margin:0;word-break:break-word}
.kopt-approach{font-size:15px;font-weight:500;margin:4px 0}
.kopt-stuck{border-color:rgba(214,69,69,.55);background:rgba(214,69,69,.05)}
.kopt-revs{display:flex;flex-direction:column;gap:8px;max-height:260px;overflow:auto}
.kopt-rev{font-size:13px;display:flex;gap:10px}
.kopt-rev > span:first-child{flex:none;min-width:70px;color:var(--k-faint)}
.kopt-table{width:100%;border-collapse:collapse;font-size:13px}
.kopt-table th{text-align:left;font-weight:500;color:var(--k-faint);font-size:12px;padding:4px 8px;border-bottom:1px solid var(--k-border);position:sticky;top:0;background:var(--k-bg);white-space:nowrap}
.kopt-table td{padding:5px 8px;border-bottom:1px solid var(--k-border);vertical-align:top;font-variant-numeric:tabular-nums}
.kopt-table tr.sel td{background:rgba(77,107,254,.08)}
.kopt-table tr.clickable{cursor:pointer}
.kopt-table tr.clickable:hover td{background:rgba(127,127,127,.06)}
.kopt-tablewrap{max-height:560px;overflow:auto;margin-top:8px;border:1px solid var(--k-border);border-radius:8px}
.kopt-cmd{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--k-dim);word-break:break-all}
.kopt-link{border:0;background:transparent;color:var(--k-accent);cursor:pointer;font:inherit;font-size:13px;padding:2px 0}
.kopt-empty{padding:26px 6px;text-align:center;color:var(--k-dim)}
.kopt-empty b{display:block;font-size:16px;color:var(--k-text);margin-bottom:6px}
.kopt-menu{position:absolute;right:0;top:calc(100% + 4px);z-index:6;background:var(--k-bg);border:1px solid var(--k-border);border-radius:8px;box-shadow:0 6px 20px rgba(0,0,0,.12);padding:4px;display:flex;flex-direction:column;min-width:150px}
.kopt-menu button{font:inherit;font-size:13px;text-align:left;border:0;background:transparent;padding:6px 10px;border-radius:6px;cursor:pointer;color:var(--k-text)}
.kopt-menu button:hover{background:rgba(127,127,127,.1)}
.kopt-launch{display:inline-flex;align-items:center}
.kopt-launch .kopt-btn{border-radius:999px;padding:2px 10px;font-size:12.5px}
.kopt-card-float{position:fixed;z-index:2147483001;width:380px;max-width:calc(100vw - 16px);overflow:auto;background:var(--k-bg);border:1px solid var(--k-border);border-radius:12px;box-shadow:0 12px 36px rgba(0,0,0,.2);padding:14px 16px;display:flex;flex-direction:column;gap:10px}
.kopt-card-float h3{margin:0;font-size:15px}
.kopt-strip{display:flex;align-items:center;gap:12px;padding:6px 12px;margin:0 0 6px;border:1px solid rgba(77,107,254,.35);background:rgba(77,107,254,.06);border-radius:10px;font-size:13px}
.kopt-bar{flex:1;min-width:80px;max-width:260px;height:6px;border-radius:3px;background:rgba(127,127,127,.18);overflow:hidden}
.kopt-bar > div{height:100%;background:var(--k-accent);border-radius:3px;transition:width .4s}
.kopt-bar.over > div{background:var(--k-warn)}
.kopt-err{color:var(--k-bad);font-size:12.5px}
.kopt-okbox{font-size:12.5px;color:var(--k-ok);background:rgba(31,143,95,.06);border:1px solid rgba(31,143,95,.3);border-radius:8px;padding:6px 10px;margin-bottom:8px}
.kopt-card .kopt-warnbox[data-kopt=axis-rule]{margin:0 0 8px}
.kopt-sw{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:6px;vertical-align:0}
.kopt-on{border-color:var(--k-accent);color:var(--k-accent)}
.kopt-picker{min-width:300px;max-width:min(460px,calc(100vw - 24px));max-height:min(420px,70vh);overflow:auto}
.kopt-pick{display:flex;align-items:center;gap:8px;padding:5px 10px;border-radius:6px;font-size:13px;cursor:pointer}
.kopt-pick:hover{background:rgba(127,127,127,.1)}
.kopt-pick-title{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.kopt-cmp-pop{width:auto;min-width:220px;max-width:420px;transform:translateY(-50%);pointer-events:none}
.kopt-cmp-pop > div{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.kopt-row-err{max-width:340px;white-space:pre-wrap;word-break:break-word;margin-top:3px}
@keyframes kopt-pulse{0%,100%{opacity:1}50%{opacity:.25}}
.kopt-pulse{animation:kopt-pulse 1.2s ease-in-out 3}
@media (prefers-reduced-motion: reduce){.kopt-pulse{animation:none}}
`
    function installCss() {
      if (typeof document === 'undefined' || document.getElementById('kopt-style')) return () => {}
      const el = document.createElement('style')
      el.id = 'kopt-style'
      el.textContent = CSS
      document.head.appendChild(el)
      return () => el.remove()
    }

    // ───────────────────────────── the curve ─────────────────────────────
    const COLORS = { line: '#4d6bfe', ok: '#4d6bfe', bad: '#d64545', grid: 'rgba(120,128,140,.22)', best: '#1f8f5f', final: '#8a5cf6', prof: '#c27c0e', faint: '#7b8391', limit: '#b8860b' }

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
    const FLAT = { fill: 'none', strokeLinecap: 'round', vectorEffect: 'non-scaling-stroke' }
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
    function useViewScale(ref, width) {
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

    function Chart({ chart, selected, onSelect, pinned, t, svgRef }) {
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
    function slurmWhere(it, t) {
      const s = it.slurm
      if (!s || typeof s !== 'object') return ''
      return [t('pop.slurm', { job: s.jobId ?? '?', node: s.node ?? '?' }), s.partition, s.gpu].filter(Boolean).join(' · ')
    }

    const intoPopover = (ev) => !!(ev.relatedTarget && ev.relatedTarget.closest && ev.relatedTarget.closest('[data-kopt=popover]'))
    const intoChart = (ev) => !!(ev.relatedTarget && ev.relatedTarget.closest && ev.relatedTarget.closest('[data-kopt=chart]'))
    function Popover({ series, index, chart, t, onClose, onLeave, pinned, wrapWidth }) {
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

    // ───────────────────────────── controls ─────────────────────────────
    function reasonText(t, r) { return ['finalized', 'converged', 'budget', 'at-limit', 'no-progress', 'stopped'].includes(r) ? t(`reason.${r}`) : String(r) }
    function loopStatus(t, loop) {
      if (!loop) return ''
      if (loop.armed) return t('loop.running', { round: loop.round, done: loop.evalsDone, budget: loop.budget })
      if (loop.stopReason) return t('loop.stopped', { reason: reasonText(t, loop.stopReason) })
      if (loop.available === false) return t('loop.unavailable')
      return t('loop.idle')
    }

    // The options shared by the panel's controls and the launcher card.
    function useLoopOptions(loop) {
      const [budget, setBudget] = useState(() => String(loop?.defaultBudget ?? loop?.budget ?? 20))
      const [lang, setLang] = useState('follow')
      const touched = useRef(false)
      useEffect(() => { if (!touched.current && loop && !loop.armed && (loop.defaultBudget || loop.budget)) setBudget(String(loop.budget || loop.defaultBudget)) }, [loop?.defaultBudget, loop?.budget, loop?.armed])
      // While a loop runs the field shows the budget it was armed with (/kloop 8, the launcher, the tab).
      const shown = loop?.armed && loop.budget > 0 ? String(loop.budget) : budget
      return { budget: shown, setBudget: (v) => { touched.current = true; setBudget(v) }, lang, setLang }
    }
    async function startLoop(sessionId, opts) {
      const b = Number(opts.budget)
      const extra = {}
      if (Number.isInteger(b) && b >= 1 && b <= 9999) extra.budget = b
      extra.outputLanguage = opts.lang === 'follow' ? activeLang() : opts.lang
      return control(sessionId, 'loop-arm', extra)
    }

    function LoopFields({ opts, t, disabled }) {
      return h(Fragment, null,
        h('label', { className: 'kopt-field' }, t('loop.budget'),
          h('input', { className: 'kopt-input', type: 'number', min: 1, max: 9999, value: opts.budget, disabled, 'data-kopt': 'budget', onChange: e => opts.setBudget(e.target.value) })),
        h('label', { className: 'kopt-field' }, t('loop.lang'),
          h('select', { className: 'kopt-select', value: opts.lang, disabled, 'data-kopt': 'lang', onChange: e => opts.setLang(e.target.value) },
            h('option', { value: 'follow' }, t('lang.follow')), h('option', { value: 'zh' }, t('lang.zh')), h('option', { value: 'en' }, t('lang.en')))))
    }

    function SupervisionFields({ sessionId, sup, locked, t, onChanged, setErr }) {
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

    function RunControls({ sessionId, series, t, refresh }) {
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

    // ───────────────────────────── cards ─────────────────────────────
    function PlanCard({ plans, t }) {
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
    function EnvCard({ envs, t }) {
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
    function ReviewCard({ rounds, reviews, sup, t }) {
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

    function RecordCard({ series, t, selected, onPick }) {
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
    const comparePicks = new Map()
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
    function useCompare(sessionId, ids) {
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

    function ComparePicker({ sessionId, picked, onChange, t, max }) {
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

    function CompareCard({ sessionId, picked, onClose, t, cmpState }) {
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
    function EvalTab(props) {
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

    // ───────────────────────────── composer ─────────────────────────────
    function presetOf(sessionId) {
      try { return env.sessions?.list?.getSnapshot?.()?.byId?.[sessionId]?.agentPreset } catch { return undefined }
    }
    function hasSignal(series) {
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

    function Launcher(props) {
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

    function StatusStrip(props) {
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
