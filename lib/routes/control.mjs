// GET /plugins/kernel-opt/control?sessionId=… — the control object (P-4) as the session makes it
// (its loop, and its place in the evaluation queue): {"control": …}.
// POST {sessionId, action, …} — a control action, checked and applied in C++ (loop_control.cpp
// apply_control: one place, one limit) by the session's loop; lib/loop.mjs carries out its actions.
// Both answers are the core's JSON text, written as it is.
import { jsonResponse, jsonText, readJsonBody, requestedView, validSessionId, viewOrAnswer } from '../http.mjs'

/** The GET answer: the session's control text inside {"control": …}, never parsed here. */
export const controlAnswer = (session) => `{"control":${session.control}}`

/**
 * deps: store (lib/store.mjs), loop (lib/loop.mjs's LoopService, or undefined when the loop cannot
 * run), changed(id) (the push hub: the control object is part of the revision).
 */
export function controlRoute({ store, loop, changed }) {
  return async (req, res) => {
    if (req.method === 'GET') {
      const v = await requestedView(req, res, store, { wait: true })
      if (v !== undefined) jsonText(res, 200, controlAnswer(v.session))
      return
    }
    if (req.method !== 'POST') {
      jsonResponse(res, 405, { error: 'GET or POST only' })
      return
    }
    const body = await readJsonBody(req, 16_384)
    if (body === null) {
      jsonResponse(res, 400, { error: 'JSON body required' })
      return
    }
    const id = body.sessionId
    if (typeof id !== 'string' || id === '') {
      jsonResponse(res, 400, { error: 'sessionId required' })
      return
    }
    if (!validSessionId(id)) {
      jsonResponse(res, 400, { error: 'invalid sessionId' })
      return
    }
    const v = viewOrAnswer(res, id, await store.getView(id, { wait: true }))
    if (v === undefined) return
    if (loop === undefined || typeof loop.act !== 'function') {
      if (body.action === 'loop-stop') {
        jsonText(res, 200, controlAnswer(v.session)) // nothing armed: not an error (M-9)
        return
      }
      jsonResponse(res, 503, { error: 'loop machinery unavailable / 循环功能不可用' })
      return
    }
    const result = await loop.act(id, v.session, body)
    changed(id)
    jsonText(res, result.status, result.body)
  }
}
