// Preloaded with `node --import` by the dsh launcher that scripts/setup-host.sh writes.
//
// Why: the published host boot (dsh-app-boot 0.1.0-rc.6 / rc.8) asks the HMR service to watch the
// profile's cordis.patch.yml through `registerConfig`, a method that no published
// @deepseek-ai/cordis-plugin-hmr release has. Without it `dsh web` stops during boot. We give the
// class an inert `registerConfig`: boot completes, and edits to cordis.patch.yml simply need a
// restart of dsh instead of reloading live.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

const base = process.env.DSH_INSTALL_ROOT || process.cwd()
let entry
try {
  entry = createRequire(`${base}/package.json`).resolve('@deepseek-ai/cordis-plugin-hmr')
} catch {
  entry = undefined // not a host install: nothing to patch
}
if (entry) {
  const { default: Hmr } = await import(pathToFileURL(entry).href)
  const proto = Hmr && Hmr.prototype
  if (proto && typeof proto.registerConfig !== 'function') {
    Object.defineProperty(proto, 'registerConfig', {
      configurable: true,
      writable: true,
      value: async function registerConfig() {
        return async () => {}
      },
    })
  }
}
