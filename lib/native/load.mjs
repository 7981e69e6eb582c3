// Loads kopt.node, the C++ core. Order:
//   1. $KOPT_ADDON (an absolute path), for development;
//   2. the prebuilt for this platform, lib/native/<platform>-<arch>/kopt.node (shipped in the package);
//   3. build/kopt.node of a source checkout (the from-source fallback: scripts/build.sh).
// The first one that loads wins; when none does, the error names every path tried and why.
import { createRequire } from 'node:module'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

export const prebuiltDir = join(here, `${process.platform}-${process.arch}`)

export function candidates() {
  const list = []
  if (process.env.KOPT_ADDON) list.push(resolve(process.env.KOPT_ADDON))
  list.push(join(prebuiltDir, 'kopt.node'))
  list.push(resolve(here, '../../build/kopt.node'))
  return list
}

let cached
export function loadKopt() {
  if (cached) return cached
  const tried = []
  for (const path of candidates()) {
    if (!existsSync(path)) {
      tried.push(`${path}: not found`)
      continue
    }
    try {
      const mod = require(path)
      if (typeof mod.Projector !== 'function') throw new Error('not the kopt addon (no Projector)')
      cached = { mod, path }
      return cached
    } catch (error) {
      tried.push(`${path}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const err = new Error('kernel-opt: cannot load the native core kopt.node / 无法加载 kopt.node。Tried:\n  '
    + tried.join('\n  ') + '\nBuild it from source: bash scripts/setup-deps.sh && bash scripts/build.sh (docs/install.md).')
  err.code = 'EKOPT_ADDON'
  throw err
}
