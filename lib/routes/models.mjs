// GET /plugins/kernel-opt/models — the providers and models the host's llm service knows, for the
// supervisor picker; ?provider=…&model=… — one model's info (its reasoning efforts). Needs no
// native core. A discovery failure is the empty list.
import { jsonResponse, requestUrl } from '../http.mjs'

/** deps.llm(): the host's llm service now (it comes and goes), or undefined. */
export function modelsRoute({ llm }) {
  return async (req, res) => {
    if (req.method !== 'GET') {
      jsonResponse(res, 405, { error: 'GET only' })
      return
    }
    const url = requestUrl(req)
    const provider = url.searchParams.get('provider')
    const model = url.searchParams.get('model')
    if ((provider === null) !== (model === null) || provider === '' || model === '') {
      jsonResponse(res, 400, { error: 'provider and model go together' })
      return
    }
    if (provider !== null) {
      if (provider.length > 200 || model.length > 200) {
        jsonResponse(res, 400, { error: 'provider or model too long' })
        return
      }
      let info
      try {
        info = await llm()?.resolveModelInfo(provider, model)
      } catch {
        info = undefined
      }
      if (!info) {
        jsonResponse(res, 404, { error: 'unknown model' })
        return
      }
      jsonResponse(res, 200, modelInfoWire(info, provider, model))
      return
    }
    const providers = []
    try {
      const service = llm()
      const list = (service?.listProviders?.() ?? []).slice(0, 20)
      for (const p of list) {
        let models = []
        try {
          models = ((await service.listModels(p.id)) ?? []).slice(0, 50).map(m => ({ id: String(m.id), name: String(m.name ?? m.id) }))
        } catch {
          models = []
        }
        providers.push({ id: String(p.id), name: String(p.name ?? p.id), models })
      }
    } catch {
      // discovery failure -> the empty list
    }
    jsonResponse(res, 200, { providers })
  }
}

function modelInfoWire(info, provider, model) {
  const out = { provider: String(info.provider ?? provider), id: String(info.id ?? model), name: String(info.name ?? info.id ?? model) }
  const r = info.reasoning
  if (r && Array.isArray(r.efforts)) {
    out.reasoning = {
      efforts: r.efforts.map(e => ({ id: String(e.id), name: String(e.name ?? e.id), ...(typeof e.description === 'string' ? { description: e.description } : {}) })),
      ...(r.defaultEffort !== undefined ? { defaultEffort: String(r.defaultEffort) } : {}),
    }
  }
  return out
}
