// The bundled preset synced into the user preset root (spec R): the sync itself is C++
// (kopt.syncPreset); this finds the user root among the host's preset roots and logs the report.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_PRESET_ID } from './config.mjs'

export const bundledPresetDir = join(dirname(fileURLToPath(import.meta.url)), '../preset', DEFAULT_PRESET_ID)

/** agentPresets: the host's `agentPresets` service (its `roots`, a list or a function giving one). */
export function syncPreset(kopt, config, agentPresets) {
  try {
    const roots = agentPresets?.roots
    const list = Array.isArray(roots) ? roots : typeof roots === 'function' ? roots.call(agentPresets) : []
    const userRoot = Array.isArray(list) ? list.find(r => r && r.trust === 'user' && typeof r.path === 'string') : undefined
    if (userRoot === undefined) {
      console.warn('[kernel-opt] preset sync skipped: no user preset root / 没有用户预设目录')
      return
    }
    const target = join(userRoot.path, config.preset.id) // the addon expands a leading ~
    const report = kopt.syncPreset(bundledPresetDir, target)
    for (const line of report.log) console.warn(`[kernel-opt] ${line}`)
    if (config.preset.id !== DEFAULT_PRESET_ID) {
      console.warn(`[kernel-opt] preset installed as "${config.preset.id}"`)
    }
  } catch (error) {
    console.warn(`[kernel-opt] preset sync failed (the plugin works without it): ${error?.message ?? error}`)
  }
}
