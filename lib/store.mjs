// dsh-kernel-opt — the sessions the routes serve: one kopt.Session per session, live or past.
//
// A live session's Session is fed from the host's `session/event`s (a first sight catches up from
// `session.events`; a long backlog is read from its log file on a worker thread, then the events
// past the file's end are fed, or without a file a slice per event-loop turn); a past one is read from
// the host's persistence (the log file on a worker thread, kopt.loadSession, else `inspect` fed here). The
// Session holds the whole session (projection, revisions, body, loop); this module only finds it,
// feeds it and bounds how many past ones are kept. Host-independent: tests/lib/store.test.mjs.
import { stat } from 'node:fs/promises'
import { routingJson } from './config.mjs'

// Catch-up feeds the addon slices of the log, never the whole log as one JSON tree.
const FEED_SLICE = 2048
// A live session first met with a longer backlog than this (a past session resumed, a plugin loaded
// late) is not caught up in one go on the host's thread (a 1M-event log costs seconds to feed): its
// log file is read and projected on a worker thread as a past session's is (kopt.loadSession), and
// only the events past the file's end are fed here; when the host names no file, or the file is not
// a prefix of the session's events, one slice per event-loop turn. Meanwhile /series answers as for a
// past session being read. KOPT_CATCHUP_BACKLOG sets it for tests (e2e: a short resumed log takes
// the file's path in a real host).
const PACED_BACKLOG = /^\d{1,9}$/.test(process.env.KOPT_CATCHUP_BACKLOG ?? '') ? Number(process.env.KOPT_CATCHUP_BACKLOG) : 4 * FEED_SLICE
// Past sessions kept projected: at most this many, and at most this many bytes held in C++ in all
// (session.memoryBytes; a 50k-point session holds ~100–200 MB), least recently asked for first out.
// The session asked for last is kept whatever its size.
const PAST_CACHE_MAX = 16
const PAST_CACHE_BYTES = 512 * 1024 * 1024
// A past session's log is re-read when it changed (another DSH process may have continued it): its
// size and mtime are looked at no more often than this; the previous projection answers while the
// new one is read. A log the host cannot name a file for is re-read after PAST_TTL_MS instead.
const IDENTITY_CHECK_MS = 2_000
const PAST_TTL_MS = 300_000
// How long /series waits for a past session's log before answering 202 {loading}.
const QUICK_ANSWER_MS = 50

/** A log file's identity: it changed when its size or mtime did. */
async function identityOf(file) {
  const st = await stat(file)
  return `${st.size}:${st.mtimeMs}`
}

/**
 * Feeds events (host objects, in log order) to a Session, a slice at a time. An event too deep for
 * JSON.stringify itself is skipped and counted by the Session (session.skip); one too deep for the
 * addon's bounded parser is skipped and counted by the addon (feed()).
 */
export function feedEvents(session, events) {
  for (let i = 0; i < events.length; i += FEED_SLICE) {
    const slice = events.slice(i, i + FEED_SLICE)
    let text
    try {
      text = JSON.stringify(slice)
    } catch (error) {
      if (!(error instanceof RangeError)) throw error
      for (const e of slice) {
        let one
        try {
          one = JSON.stringify([e])
        } catch (inner) {
          if (!(inner instanceof RangeError)) throw inner
          session.skip(1)
          continue
        }
        session.feed(one)
      }
      continue
    }
    session.feed(text)
  }
}

/**
 * The session store. @param kopt the addon; @param config the resolved config; @param hooks
 * {sessions(), persistence(), loopJson(): the loop's settings and route for a new Session,
 * evaluation?(id): the session's place in the host's evaluation queue (lib/evaluate.mjs), caughtUp?(id):
 * a paced catch-up ended, pastCacheBytes?}.
 * Views: {session, live: true} | {session, live: false, reader: 'file'|'host'} | {loading: true} |
 * {error} (the log exists but cannot be read) | undefined (unknown session).
 */
export function createStore(kopt, config, hooks) {
  const routing = routingJson(config)
  const live = new Map() // sessionId -> kopt.Session
  const jobs = new Map() // sessionId -> a paced catch-up in progress {events, timer, done, resolve}
  const past = new Map() // sessionId -> cache entry (order: least recently asked for first)
  const pastBytesMax = hooks.pastCacheBytes ?? PAST_CACHE_BYTES
  const loopJson = () => hooks.loopJson?.() ?? null
  // The host's evaluation queue (lib/evaluate.mjs) is not the session's state: each Session is told
  // its place in it when it is made and whenever it changes (evaluationChanged).
  const tellEvaluation = (id, s) => {
    const state = hooks.evaluation?.(id)
    s.setEvaluation(state === undefined ? null : JSON.stringify(state))
  }

  // Drops the least recently asked-for past sessions while there are too many or they hold too
  // many bytes; the dropped Session objects are released when nothing else holds them.
  const trimPast = () => {
    let bytes = 0
    for (const e of past.values()) bytes += e.bytes ?? 0
    for (const [id, e] of past) {
      if (past.size <= 1 || (past.size <= PAST_CACHE_MAX && bytes <= pastBytesMax)) break
      past.delete(id)
      bytes -= e.bytes ?? 0
    }
  }

  // A live session's Session; the loop of the same session read before it went live comes along.
  const newLive = (id) => {
    const s = new kopt.Session(id, routing, loopJson())
    const before = past.get(id)?.value?.session
    if (before !== undefined) s.adoptLoop(before)
    tellEvaluation(id, s)
    live.set(id, s)
    return s
  }

  // A catch-up from the log file: the file read and projected off this thread; the Session it makes
  // takes the loop of the one it replaces and the events past the file's end (a few batches the
  // host has not written yet), and becomes the live one. A file that cannot be read, or that holds
  // more than the session's events (not this log's prefix), gives way to a paced catch-up.
  const startFromFile = (id, s) => {
    const job = { events: undefined, timer: undefined }
    job.done = new Promise((resolve) => { job.resolve = resolve })
    jobs.set(id, job)
    const finish = (loaded) => {
      if (jobs.get(id) !== job) return // forgotten, or a caller finished the catch-up at once
      jobs.delete(id)
      const now = hostSession(id)
      if (now === undefined) {
        forget(id)
        job.resolve()
        return
      }
      let next = s
      if (loaded !== undefined && live.get(id) === s && typeof now.seq === 'number' && loaded.fed <= now.seq) {
        loaded.adoptLoop(s)
        tellEvaluation(id, loaded)
        live.set(id, loaded)
        next = loaded
        console.log(`[kernel-opt] caught ${id} up from its log file: ${loaded.fed} log positions read off this thread, ${now.seq - loaded.fed} to feed after`)
      }
      try {
        catchUp(id, next, now, true, false)
      } catch (error) {
        console.warn(`[kernel-opt] catch-up of ${id} failed: ${error?.message ?? error}`)
      }
      const after = jobs.get(id)
      if (after === undefined) {
        job.resolve()
        hooks.caughtUp?.(id)
      } else {
        after.done.then(job.resolve) // the rest is long: paced, and it says when it ends
      }
    }
    const read = async () => {
      const where = await logFile(hooks.persistence(), id)
      return where ? kopt.loadSession(id, where.file, routing, loopJson()) : undefined
    }
    read().then(finish, (error) => {
      console.warn(`[kernel-opt] reading the log of ${id} failed (${error?.message ?? error}); catching up from its events`)
      finish(undefined)
    })
  }

  // A paced catch-up: the log as it was when it began, fed a slice per turn; events appended
  // meanwhile are caught up when it ends. finishPaced feeds what is left at once.
  const startPaced = (id, s, session, events) => {
    const job = { events, timer: undefined }
    job.done = new Promise((resolve) => { job.resolve = resolve })
    const step = () => {
      job.timer = undefined
      if (jobs.get(id) !== job) return
      try {
        feedEvents(s, events.slice(s.fed, Math.min(events.length, s.fed + FEED_SLICE)))
        if (s.fed < events.length) {
          job.timer = setImmediate(step)
          return
        }
        jobs.delete(id)
        catchUp(id, s, session)
      } catch (error) {
        jobs.delete(id) // the next request catches up from s.fed at once
        console.warn(`[kernel-opt] catch-up of ${id} failed: ${error?.message ?? error}`)
      }
      job.resolve()
      hooks.caughtUp?.(id)
    }
    jobs.set(id, job)
    job.timer = setImmediate(step)
  }
  const stopPaced = (id) => {
    const job = jobs.get(id)
    if (job === undefined) return undefined
    if (job.timer !== undefined) clearImmediate(job.timer)
    jobs.delete(id)
    job.resolve()
    return job
  }
  // paced: a long backlog may be caught up off this thread or over several turns (a job meanwhile);
  // otherwise the projection is whole when this returns. fromFile: a long backlog may be read from
  // the session's log file (not again once that was tried).
  const catchUp = (id, s, session, paced = false, fromFile = true) => {
    if (jobs.has(id)) {
      if (paced) return
      const job = stopPaced(id)
      if (job.events !== undefined && job.events.length > s.fed) feedEvents(s, job.events.slice(s.fed))
    }
    // session.seq is the log's length; session.events copies and freezes the whole log whenever
    // it grew, so it is read only when there is something to catch up.
    if (typeof session.seq === 'number' && session.seq <= s.fed) return
    const events = session.events
    if (Array.isArray(events) && events.length > s.fed) {
      if (paced && events.length - s.fed > PACED_BACKLOG) {
        if (fromFile && s.fed === 0 && typeof hooks.persistence()?.findLog === 'function') startFromFile(id, s)
        else startPaced(id, s, session, events)
        return
      }
      feedEvents(s, events.slice(s.fed))
    }
  }
  // Where the host keeps a past session's log, when its persistence can say (the JSONL backend's
  // findLog): the addon then reads and projects the file on a worker thread (kopt.loadSession),
  // never the whole log as events on this thread. null: the host has no log of that id.
  const logFile = async (persistence, sessionId) => {
    if (typeof persistence.findLog !== 'function') return undefined
    const file = await persistence.findLog(sessionId)
    if (typeof file !== 'string' || file === '') return null
    return { file, identity: await identityOf(file) }
  }
  const hostSession = (id) => {
    try {
      return hooks.sessions()?.get(id)
    } catch {
      return undefined
    }
  }

  /**
   * The live Session of a session, caught up; undefined when the session is not live. paced: a
   * long backlog may be left catching up (catchingUp(id)), for a caller that can answer "loading".
   */
  const getLive = (sessionId, { paced = false } = {}) => {
    const session = hostSession(sessionId)
    if (session === undefined) {
      forget(sessionId)
      return undefined
    }
    const s = live.get(sessionId) ?? newLive(sessionId)
    catchUp(sessionId, s, session, paced)
    return s
  }
  /** The live Session as it is (no catch-up), or undefined. */
  const peek = (sessionId) => live.get(sessionId)
  const catchingUp = (sessionId) => jobs.has(sessionId)
  /** The live Session once its projection is whole (no catch-up in progress), else undefined. */
  const whole = (sessionId) => (jobs.has(sessionId) ? undefined : live.get(sessionId))
  /**
   * The view a session has now, without waiting for anything (no catch-up, no look at its log
   * file): the live Session when it is whole, else the past one already read; undefined otherwise.
   */
  const held = (sessionId) => {
    const s = whole(sessionId)
    if (s !== undefined) return { session: s, live: true }
    const v = past.get(sessionId)?.value
    return v?.session !== undefined ? { session: v.session, live: false, reader: v.reader } : undefined
  }

  /** A live session's event (the `session/event` listener). */
  const onEvent = (session, event, watchPreset) => {
    const id = session?.id
    if (typeof id !== 'string') return
    let s = live.get(id)
    if (s === undefined) {
      if (session.header?.agentPreset !== watchPreset) return
      catchUp(id, newLive(id), session, true)
      return
    }
    if (jobs.has(id)) return // the paced catch-up takes this event when it ends
    const seq = event?.seq
    if (seq === s.fed) feedEvents(s, [event])
    else if (typeof seq === 'number' && seq > s.fed) catchUp(id, s, session)
  }

  const forget = (sessionId) => {
    stopPaced(sessionId)
    live.delete(sessionId)
  }

  // A past session read: the Session, {error}, or undefined (the host has no log of that id).
  const readPast = async (persistence, sessionId) => {
    let where
    try {
      where = await logFile(persistence, sessionId)
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) }
    }
    if (where === null) return undefined
    if (where !== undefined) {
      try {
        const session = await kopt.loadSession(sessionId, where.file, routing, loopJson())
        tellEvaluation(sessionId, session)
        return { session, reader: 'file', file: where.file, identity: where.identity }
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error) }
      }
    }
    let inspection
    try {
      inspection = await persistence.inspect(sessionId)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      // The host says "session "<id>" not found" for a log it does not have.
      if (/\bnot found\b/.test(message)) return undefined
      return { error: message }
    }
    if (!inspection || !Array.isArray(inspection.events)) return undefined
    const session = new kopt.Session(sessionId, routing, loopJson())
    tellEvaluation(sessionId, session)
    feedEvents(session, inspection.events)
    return { session, reader: 'host' }
  }

  /** Live first, then persistence (see the views above). */
  const getView = async (sessionId, { wait = true } = {}) => {
    // A live session still catching up is waited for (not finished on this thread) or, without
    // waiting, answered by its past projection when at hand, else as loading.
    let s = getLive(sessionId, { paced: true })
    while (wait && jobs.has(sessionId)) {
      await jobs.get(sessionId).done
      s = getLive(sessionId, { paced: true })
    }
    if (s !== undefined && !jobs.has(sessionId)) return { session: s, live: true }
    if (s !== undefined) {
      // Still catching up: the past projection of the same log answers meanwhile when it is at hand.
      const prior = past.get(sessionId)?.value
      return prior?.session !== undefined ? { session: prior.session, live: false, reader: prior.reader } : { loading: true }
    }
    const persistence = hooks.persistence()
    if (persistence === undefined || typeof persistence.inspect !== 'function') return undefined
    const now = Date.now()
    let entry = past.get(sessionId)
    let stale
    if (entry !== undefined && entry.settled && entry.value?.file !== undefined) {
      if (now - entry.checkedAt > IDENTITY_CHECK_MS) {
        entry.checkedAt = now
        const identity = await identityOf(entry.value.file).catch(() => undefined)
        if (identity !== entry.value.identity) {
          stale = entry
          entry = undefined
        }
      }
    } else if (entry !== undefined && now - entry.at > PAST_TTL_MS) {
      if (entry.settled) stale = entry
      entry = undefined
    }
    if (entry === undefined) {
      const settled = { promise: readPast(persistence, sessionId), at: now, checkedAt: now, settled: false, stale }
      entry = settled
      const settle = (value) => {
        settled.settled = true
        settled.stale = undefined
        settled.value = value
        if (value?.session !== undefined) {
          settled.bytes = value.session.memoryBytes
          settled.measuredAt = Date.now()
          if (past.get(sessionId) === settled) trimPast()
        }
      }
      settled.promise.then(settle, () => settle(undefined))
    }
    // Asked for now: the most recently used.
    past.delete(sessionId)
    past.set(sessionId, entry)
    // Its size grows when its body is first assembled: measured again now and then (O(points)).
    if (entry.settled && entry.bytes !== undefined && now - (entry.measuredAt ?? 0) > IDENTITY_CHECK_MS) {
      entry.measuredAt = now
      entry.bytes = entry.value.session.memoryBytes
    }
    trimPast()
    // wait: false asks for an answer now: {loading: true} while the log is still being read.
    if (!wait && !entry.settled) {
      // An unknown id or a small log settles at once: answer it directly rather than 202 then 404.
      await Promise.race([entry.promise, new Promise((resolve) => setTimeout(resolve, QUICK_ANSWER_MS))])
    }
    if (!wait && !entry.settled) {
      // Re-reading an expired entry: the previous projection answers until the new one is ready.
      const prev = entry.stale === undefined ? undefined : await entry.stale.promise
      if (prev?.session !== undefined) return { session: prev.session, live: false, reader: prev.reader }
      return { loading: true }
    }
    const value = await entry.promise
    if (value === undefined || value.error !== undefined) {
      if (past.get(sessionId) === entry) past.delete(sessionId) // asked again, read again
      return value === undefined ? undefined : { error: value.error }
    }
    return { session: value.session, live: false, reader: value.reader }
  }

  /** The session's place in the host's evaluation queue changed: its Session objects are told. */
  const evaluationChanged = (sessionId) => {
    for (const s of [live.get(sessionId), past.get(sessionId)?.value?.session]) if (s !== undefined) tellEvaluation(sessionId, s)
  }

  return { getLive, peek, whole, held, catchingUp, getView, onEvent, forget, evaluationChanged, past }
}
