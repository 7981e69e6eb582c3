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
    export const module = { exports: {} }
    const React = require('react')
    // Taken so the bundle shares the shell's copy; only its presence matters here.
    let uiSlots = null
    try { uiSlots = require('@deepseek-ai/dsh-client-ui-slots') } catch { uiSlots = null }
    void uiSlots

    export const h = React.createElement
    export const { useState, useEffect, useLayoutEffect, useMemo, useRef, useCallback, useSyncExternalStore, memo, Fragment } = React

    // The plugin id, written in by the build from lib/anchors.json (its one home, through lib/config.mjs): the
    // locale namespace, the preset id and the route base all derive from it.
    export const PLUGIN_ID = __PLUGIN_ID__
    export const NS = PLUGIN_ID
    export const PRESET_ID = PLUGIN_ID
    export const BASE = `/plugins/${PLUGIN_ID}`
    export const POLL_MS = 1500
    // Push first (lib/push.mjs); ?kopt-push=0 in the page URL forces the poll (tests, diagnosis).
    export const PUSH = typeof location === 'undefined' || !/[?&]kopt-push=0\b/.test(location.search)
    export const RETRY_MIN_MS = 1000
    export const RETRY_MAX_MS = 30000
    export const DETECT_MS = 3000

