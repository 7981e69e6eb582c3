// Plugin configuration: defaults, validation and the pieces other modules need.
// Every key is optional. A bad value never takes the host down: it is reported in the host log
// with its path and what was expected, and the default is used instead.
import { readFileSync } from 'node:fs'
import { loadKopt } from './native/load.mjs'

// The strings both halves write or read in the log (the plugin id on loop messages, the finalize
// tool's name, its replay lines) have one home, lib/anchors.json: the core is built with them
// (CMakeLists.txt, include/kopt/anchors.hpp), this module reads them, and the browser half gets the
// id written in by scripts/build-client.mjs. The preset and the routes derive from the id.
const ANCHORS = JSON.parse(readFileSync(new URL('./anchors.json', import.meta.url), 'utf8'))
export const PLUGIN_ID = ANCHORS.pluginId
export const DEFAULT_PRESET_ID = PLUGIN_ID
const ROUTE_BASE = `/plugins/${PLUGIN_ID}`
export const SERIES_PATH = `${ROUTE_BASE}/series`
export const CONTROL_PATH = `${ROUTE_BASE}/control`
export const MODELS_PATH = `${ROUTE_BASE}/models`
export const PUSH_PATH = `${ROUTE_BASE}/push` // WebSocket upgrade (lib/push.mjs); a plain GET answers 426
export const CSV_PATH = `${ROUTE_BASE}/csv` // the run as CSV, made by the core (the tab's export)
export const JSON_PATH = `${ROUTE_BASE}/json` // the run as the offline report's JSON, made by the core (the tab's export)
export const MARKDOWN_PATH = `${ROUTE_BASE}/markdown` // ?lang=zh|en: the measured points as a markdown table (the tab's export)
export const COMPARE_PATH = `${ROUTE_BASE}/compare` // GET ?sessionId=A&with=B,C: the sessions compared (lib/routes/compare.mjs)
export const REPLAY_TOOL = ANCHORS.replayTool
export const REPLAY_LINE_PREFIX = ANCHORS.replayLinePrefix
export const EVALUATE_TOOL = ANCHORS.evaluateTool

/** Routing lists (spec A-10); the projector gets exactly these keys. */
export const ROUTING_KEYS = ['benchTools', 'shellTools', 'jobTools', 'profileTools', 'profileCommands', 'finalizeTools', 'changeTools']

const DEFAULTS = {
  replay: { enabled: true, timeoutSec: 900, maxOutputKiB: 256 },
  preset: { install: true, id: DEFAULT_PRESET_ID },
  push: { bufferKiB: 1024, queueKiB: 8192, stalledSec: 30 },
  // kernel_evaluate (lib/evaluate.mjs): where kopt-bench is ('' = <plugin home>/bin, then PATH), how long
  // the warm judge outlives its last evaluation, the plugin's folder ('' = <DSH_HOME>/kernel-opt) and the
  // bound on the measured sources it keeps there.
  evaluate: { koptBench: '', idleSec: 180, storeDir: '', storeMiB: 512, timeoutSec: 900 },
}

const isRecord = (v) => typeof v === 'object' && v !== null && !Array.isArray(v)
const TOOL_NAME = /^[A-Za-z0-9_.:\-]{1,128}$/
const PRESET_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** The loop settings' defaults and bounds, as the core states them (kopt.loopRules); undefined without the core. */
export function coreLoopRules() {
  try {
    return loadKopt().mod.loopRules
  } catch {
    return undefined
  }
}

/**
 * Validates a raw config record (as the host passes it from `cordis.patch.yml`).
 * @param loopRules the loop settings' defaults and bounds (the core's kopt.loopRules, C++
 *   loop_rules_json; by default loaded here); null (no core): the loop section is left empty: there is no loop.
 * @returns {{config: object, errors: string[]}} the resolved config (defaults filled in) and one
 *   message per rejected value ("kernel-opt config: <path> …").
 */
export function resolveConfig(raw, loopRules = coreLoopRules()) {
  const errors = []
  const bad = (path, expected, value) => {
    let shown
    try { shown = JSON.stringify(value) } catch { shown = String(value) }
    if (shown !== undefined && shown.length > 80) shown = shown.slice(0, 77) + '...'
    errors.push(`kernel-opt config: ${path} must be ${expected} (got ${shown}); using the default / 使用默认值`)
  }
  const src = raw === undefined || raw === null ? {} : raw
  if (!isRecord(src)) {
    bad('(root)', 'a mapping', src)
    return { config: resolveConfig({}, loopRules).config, errors }
  }
  const known = new Set([...ROUTING_KEYS, 'replay', 'preset', 'loop', 'push', 'evaluate', 'supervisor', 'trustedHosts'])
  for (const key of Object.keys(src)) {
    if (!known.has(key)) errors.push(`kernel-opt config: unknown key "${key}" ignored / 未知配置项已忽略`)
  }

  const routing = {}
  for (const key of ROUTING_KEYS) {
    const v = src[key]
    if (v === undefined || v === null) continue
    if (!Array.isArray(v) || v.length > 256 || !v.every(x => typeof x === 'string' && TOOL_NAME.test(x))) {
      bad(key, 'a list of tool names (letters, digits, _ . : -)', v)
      continue
    }
    routing[key] = [...new Set(v)]
  }

  const section = (name, fields, defaults = DEFAULTS[name]) => {
    const out = { ...defaults }
    const v = src[name]
    if (v === undefined || v === null) return out
    if (!isRecord(v)) {
      bad(name, 'a mapping', v)
      return out
    }
    for (const key of Object.keys(v)) {
      if (!(key in fields)) {
        errors.push(`kernel-opt config: unknown key "${name}.${key}" ignored / 未知配置项已忽略`)
        continue
      }
      const [check, expected] = fields[key]
      if (v[key] === undefined || v[key] === null) continue
      if (check(v[key])) out[key] = v[key]
      else bad(`${name}.${key}`, expected, v[key])
    }
    return out
  }
  const bool = [(x) => typeof x === 'boolean', 'true or false']
  const intIn = (lo, hi) => [(x) => Number.isInteger(x) && x >= lo && x <= hi, `an integer ${lo}…${hi}`]
  const numIn = (lo, hi) => [(x) => typeof x === 'number' && Number.isFinite(x) && x >= lo && x <= hi, `a number ${lo}…${hi}`]
  const str = (max) => [(x) => typeof x === 'string' && x.trim() !== '' && x.length <= max, `a non-empty string (≤ ${max} characters)`]

  const replay = section('replay', { enabled: bool, timeoutSec: numIn(1, 86400), maxOutputKiB: intIn(4, 65536) })
  const preset = section('preset', {
    install: bool,
    id: [(x) => typeof x === 'string' && PRESET_ID.test(x) && x !== '.' && x !== '..', 'a directory name (letters, digits, . _ -)'],
  })
  // The loop's knobs, their defaults and bounds are the core's (include/kopt/loop.hpp LoopKnob).
  const knobs = ['defaultBudget', 'maxNoProgressRounds', 'evalsPerTurn', 'wrapUpAtLimitPct']
  const loop = loopRules == null
    ? section('loop', {}, {})
    : section('loop', {
      ...Object.fromEntries(knobs.map(k => [k, intIn(loopRules[k].min, loopRules[k].max)])),
      challengeFinalize: bool,
      significantProgress: bool,
    }, {
      ...Object.fromEntries(knobs.map(k => [k, loopRules[k].default])),
      challengeFinalize: loopRules.challengeFinalize.default,
      significantProgress: loopRules.significantProgress.default,
    })

  // Live push (lib/push.mjs): what one tab may hold in the host before it is re-synced or dropped.
  const push = section('push', { bufferKiB: intIn(16, 65536), queueKiB: intIn(16, 1 << 20), stalledSec: intIn(1, 3600) })
  const absPath = [(x) => typeof x === 'string' && (x === '' || (x.startsWith('/') && x.length <= 4096 && !x.includes('\0'))), 'an absolute path (or "")']
  const evaluate = section('evaluate', {
    koptBench: absPath, idleSec: intIn(1, 86400), storeDir: absPath, storeMiB: intIn(16, 1 << 20), timeoutSec: intIn(10, 86400),
  })

  let supervisor
  if (src.supervisor !== undefined && src.supervisor !== null) {
    const v = src.supervisor
    const fields = {
      provider: str(200), model: str(200), reasoningEffort: str(64), temperature: numIn(0, 2),
      maxTokens: intIn(256, 1_000_000), language: str(64), instructions: str(20_000),
    }
    if (!isRecord(v)) bad('supervisor', 'a mapping {provider, model, …}', v)
    else {
      const out = {}
      let ok = true
      for (const key of Object.keys(v)) {
        if (!(key in fields)) {
          errors.push(`kernel-opt config: unknown key "supervisor.${key}" ignored / 未知配置项已忽略`)
          continue
        }
        if (v[key] === undefined || v[key] === null) continue
        const [check, expected] = fields[key]
        if (check(v[key])) out[key] = typeof v[key] === 'string' ? v[key].trim() : v[key]
        else {
          bad(`supervisor.${key}`, expected, v[key])
          if (key === 'provider' || key === 'model') ok = false
        }
      }
      if (ok && (out.provider === undefined || out.model === undefined)) {
        errors.push('kernel-opt config: supervisor needs both provider and model; supervision stays unconfigured / supervisor 需要同时设置 provider 与 model')
        ok = false
      }
      if (ok) supervisor = out
    }
  }

  let trustedHosts = []
  if (src.trustedHosts !== undefined && src.trustedHosts !== null) {
    if (Array.isArray(src.trustedHosts) && src.trustedHosts.every(h => typeof h === 'string' && /^[A-Za-z0-9.\-:\[\]]{1,255}$/.test(h))) {
      trustedHosts = src.trustedHosts.map(h => h.toLowerCase())
    } else bad('trustedHosts', 'a list of host[:port] authorities', src.trustedHosts)
  }

  return {
    config: { routing, replay, preset, loop, push, evaluate, supervisor, trustedHosts },
    errors,
  }
}

/** The projector's config JSON (routing keys only; empty = the spec defaults). */
export function routingJson(config) {
  return JSON.stringify(config.routing ?? {})
}

/**
 * What a kopt.Session's loop is made with (its loopJson): the loop settings of the config, the
 * supervisor's extra instructions, whether the host can drive a loop at all, and the configured
 * supervisor route.
 */
export function loopJson(config, available) {
  const sup = config.supervisor
  return JSON.stringify({
    settings: { ...config.loop, ...(typeof sup?.instructions === 'string' ? { instructions: sup.instructions } : {}), available },
    ...(sup !== undefined ? { route: { provider: sup.provider, model: sup.model, ...(sup.reasoningEffort ? { reasoningEffort: sup.reasoningEffort } : {}) } } : {}),
  })
}
