import type { Server } from 'bun'
import type { Tokens } from './auth.ts'
import type { Caches } from '../cache/caches.ts'
import { text } from '../cache/pieces.ts'
import type { Config } from '../config.ts'
import type { ChangeFeed } from '../db/store.ts'
import { DatabaseUnavailable } from '../db/types.ts'
import { JSON_CONTENT_TYPE } from '../errors.ts'
import type { Logger } from '../log.ts'
import { requestKind, SENT_HEADER, SLICE, trace } from '../trace.ts'
import type { cors } from './cors.ts'
import { answerRead, type FastMatch } from './dispatch.ts'
import { lateBody } from './respond.ts'
import { errorAnswer } from './error-envelope.ts'
import { type Exits, FRAMEWORK } from './exit.ts'
import { securityHeaders } from './headers.ts'
import { REQUEST_ID, type RequestIds } from './request-id.ts'
import type { ResponseCache } from './responses.ts'
import { canonicalRequest, isApi, pathAndQuery, pathOf } from './url.ts'

interface Deps {
  config: Config
  logger: Logger
  changes: ChangeFeed
  caches: Caches
  tokens: Tokens
  responses: ResponseCache
  cors: ReturnType<typeof cors>
  /** where every answer leaves (the access log, the metrics), when either is on */
  exit: Exits | undefined
  requestIds: RequestIds
  /** the declared read a GET path names (dispatch.ts) */
  match: (path: string) => FastMatch | undefined
  /** the framework's own handler */
  framework: (request: Request) => Promise<Response>
  /** where the server's word on the peer address goes (the throttles of login and registration read it) */
  notePeer: (request: Request, address: string) => void
  /** the web app, when it is on: the paths it owns, its answers, and each one's metrics label */
  web?: WebPages
}

/** What the request entry needs of the web app (src/web/index.ts). */
export interface WebPages {
  owns(request: Request): boolean
  /** `late`: the request waited on I/O (the change log's read) before (see lateBody) */
  handle(request: Request, headers: Record<string, string>, late: boolean): Promise<Response>
  /** the page for a fault, or for the database being unavailable */
  failed(request: Request, e: unknown, headers: Record<string, string>): Response
  label(request: Request): number
}

/**
 * The request entry: first what other processes and instances changed (see
 * ChangeFeed.sync), then cached answers, everything else through the
 * framework. `server` hands over the peer address.
 */
export function requestEntry(d: Deps) {
  // The headers of a cached API answer: the same every time, but for an allow-listed origin.
  const jsonHeaders = { ...securityHeaders('/api'), 'content-type': JSON_CONTENT_TYPE }
  const anyOrigin = d.config.corsOrigins === '*'
  const cachedHeaders = (request: Request) => ({ ...jsonHeaders, ...d.cors.headers(request) })
  // for any origin, one Headers object, which a Response copies in half the time it takes to convert a plain one
  const anyOriginHeaders = new Headers(cachedHeaders(new Request('http://localhost/')))

  /**
   * A plain GET of a declared read answered before the framework: the body
   * kept for the URL (see ResponseCache), or the read's own answer (composed
   * from cached parts, or read) — what the route would answer, through the
   * same declaration and query reader. A token counts only if it was fully
   * verified before and its user has not changed since. Anything else goes
   * through the framework (a 401 or 422 to give, a token to check), and so
   * does a read that fails: the route answers it (404, or the error's
   * envelope), but for the database being down, answered here.
   */
  const cachedAnswer = (request: Request, t0: number, late: boolean): Response | Promise<Response> | undefined => {
    if (request.method !== 'GET') return undefined
    const viewer = d.tokens.verified(request.headers.get('authorization') ?? undefined)
    if (viewer === undefined) return undefined
    // the path with query, found once: what answers are kept under, and where path and query part
    const key = pathAndQuery(request.url)
    const hit = d.responses.peek(viewer, key)
    if (hit !== undefined) return ok(request, hit, d.responses.route, t0, late)
    return composed(request, key, viewer, t0, late)
  }
  /** A plain GET whose body is not kept: the declared read's own answer, composed from cached parts or read (see cachedAnswer). */
  const composed = (
    request: Request,
    key: string,
    viewerId: number,
    t0: number,
    late: boolean,
  ): Response | Promise<Response> | undefined => {
    const q = key.indexOf('?')
    const m = d.match(q < 0 ? key : key.slice(0, q))
    if (m === undefined) return undefined
    const { route, readQuery } = m.compiled
    if (route.auth === 'required' && viewerId === 0) return undefined
    // a route that looks at no token answers everyone as it answers the anonymous
    if (route.auth === 'none') viewerId = 0
    const query = readQuery(q < 0 ? '' : key.slice(q + 1))
    if (!query.ok) return undefined
    const input = { params: m.params, query: query.value }
    const at = d.caches.versions.clock
    const built = answerRead(route.read!, input, viewerId)
    const keep = query.known
    const label = m.compiled.label
    if (!(built instanceof Promise))
      return ok(request, keep ? d.responses.keep(viewerId, key, built, at, label) : text(built.value), label, t0, late)
    return built.then(
      (b) => {
        const s = trace.on ? performance.now() : 0
        const answered = ok(request, keep ? d.responses.keep(viewerId, key, b, at, label) : text(b.value), label, t0, true)
        if (s) trace.slice(s, SLICE.resumed)
        return answered
      },
      (e) => (e instanceof DatabaseUnavailable ? failed(request, e, label, t0) : framework(request, t0)),
    )
  }
  const exit = d.exit
  /** `late`: the request waited on I/O before (see lateBody) */
  const ok = (request: Request, body: Uint8Array | string, label: number, t0: number, late: boolean) => {
    const id = d.requestIds(request)
    let headers: Headers | Record<string, string>
    if (anyOrigin) {
      // A Response copies the headers it is made with: the one shared object takes each answer's
      // id just before. Never change an answer's own headers afterwards (checked: scripts/layers.ts).
      anyOriginHeaders.set(REQUEST_ID, id)
      headers = anyOriginHeaders
    } else headers = { ...cachedHeaders(request), [REQUEST_ID]: id }
    const response = new Response(late ? lateBody(body) : body, { headers })
    return exit ? exit.done(request, response, label, t0) : response
  }
  /** An answer that could not be made: 503 when the database is away, else 500, with this request's headers. */
  const failed = (request: Request, e: unknown, label: number, t0: number): Response => {
    const headers = { ...securityHeaders(pathOf(request.url)), ...cachedHeaders(request), [REQUEST_ID]: d.requestIds(request) }
    const response = errorAnswer(e, { headers, logger: d.logger, request })
    return exit ? exit.done(request, response, label, t0) : response
  }
  // the framework sets the request id itself (app.ts), and its hooks note the route (exit.ts)
  const framework = exit
    ? (request: Request, t0: number) => d.framework(request).then((response) => exit.done(request, response, FRAMEWORK, t0))
    : d.framework

  const answer = d.config.fastPath
    ? (request: Request, t0: number, late = false): Response | Promise<Response> =>
        cachedAnswer(request, t0, late) ?? framework(request, t0)
    : framework

  const web = d.web
  /** A page of the web app, once this process knows what others changed; its faults are pages too. */
  const page = async (request: Request, t0: number): Promise<Response> => {
    const label = web!.label(request)
    const headers = { [REQUEST_ID]: d.requestIds(request) }
    let response: Response
    try {
      const synced = d.changes.sync()
      if (synced) await synced
      response = await web!.handle(request, headers, synced !== undefined)
    } catch (e) {
      response = web!.failed(request, e, headers)
    }
    return exit ? exit.done(request, response, label, t0) : response
  }

  const entry = (request: Request, server?: Server<unknown> | null): Response | Promise<Response> => {
    const t0 = exit ? performance.now() : 0
    const canonical = canonicalRequest(request)
    // the peer address matters to the throttles of login and registration, both POSTs
    if (request.method === 'POST') {
      const peer = server?.requestIP(request)?.address
      if (peer) d.notePeer(canonical, peer)
    }
    if (!isApi(canonical.url)) {
      // the web app's pages use the caches as the API does: what other processes changed comes first
      if (web?.owns(canonical)) return page(canonical, t0)
      // liveness, readiness, the pages about the server (/, /api), the docs and the metrics answer without the database's word on what changed
      return answer(canonical, t0)
    }
    // a preflight needs nothing of the database: a 503 would be a CORS failure to the browser
    if (canonical.method === 'OPTIONS') return answer(canonical, t0)
    let synced: void | Promise<void>
    try {
      synced = d.changes.sync()
    } catch (e) {
      return failed(canonical, e, 0, t0)
    }
    if (synced)
      return synced.then(
        () => {
          const s = trace.on ? performance.now() : 0
          const answered = answer(canonical, t0, true)
          if (s) trace.slice(s, SLICE.resumed)
          return answered
        },
        (e) => failed(canonical, e, 0, t0),
      )
    return answer(canonical, t0)
  }
  if (!trace.on) return entry

  // TAIL_TRACE: each request's times, its work on arrival a slice of the loop (src/trace.ts)
  return (request: Request, server?: Server<unknown> | null): Response | Promise<Response> => {
    const header = request.headers.get(SENT_HEADER)
    const sent = header === null ? Number.NaN : Number(header)
    const kind = requestKind(request.method, pathOf(request.url))
    const arrived = performance.now()
    const answered = entry(request, server)
    const own = trace.slice(arrived, SLICE.arrival)
    if (!(answered instanceof Promise)) {
      trace.request(sent, arrived, performance.now(), own, kind)
      return answered
    }
    return answered.then((response) => {
      trace.request(sent, arrived, performance.now(), own, kind)
      return response
    })
  }
}
