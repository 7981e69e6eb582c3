// GET /plugins/kernel-opt/push — the push socket itself is an upgrade (lib/push.mjs, registered as
// one by lib/index.mjs); a plain request is told so (426) and shown the hub's counters.

/** deps.hub: the push hub (lib/push.mjs), or undefined without the native core. */
export function pushRoute({ hub }) {
  return async (req, res) => {
    res.writeHead(426, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', upgrade: 'websocket' })
    res.end(JSON.stringify({ error: 'websocket upgrade required', push: hub?.snapshot() }))
  }
}
