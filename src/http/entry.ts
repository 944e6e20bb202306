import type { Server } from 'bun'
import type { Tokens } from '../auth/plugin.ts'
import type { Caches } from '../cache/caches.ts'
import { text } from '../cache/pieces.ts'
import type { Config } from '../config.ts'
import type { ChangeFeed } from '../db/store.ts'
import { DatabaseUnavailable } from '../db/types.ts'
import { errorResponse, JSON_CONTENT_TYPE, UNAVAILABLE } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { AccessLog } from './access-log.ts'
import type { cors } from './cors.ts'
import type { FastMatch } from './dispatch.ts'
import { securityHeaders } from './headers.ts'
import type { ResponseCache } from './responses.ts'
import { canonicalRequest, isApi, pathOf, searchOf } from './url.ts'

interface Deps {
  config: Config
  logger: Logger
  changes: ChangeFeed
  caches: Caches
  tokens: Tokens
  responses: ResponseCache
  cors: ReturnType<typeof cors>
  access: AccessLog
  /** the declared read a GET path names (dispatch.ts) */
  match: (path: string) => FastMatch | undefined
  /** the framework's own handler */
  framework: (request: Request) => Promise<Response>
  /** where the server's word on the peer address goes (the throttles of login and registration read it) */
  notePeer: (request: Request, address: string) => void
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
  const cachedAnswer = (request: Request): Response | Promise<Response> | undefined => {
    if (request.method !== 'GET') return undefined
    const t0 = performance.now()
    let viewer = d.tokens.verified(request.headers.get('authorization') ?? undefined)
    if (viewer === undefined) return undefined
    const url = request.url
    const hit = d.responses.peek(viewer, url)
    if (hit !== undefined) return ok(request, hit, t0)
    const m = d.match(pathOf(url))
    if (m === undefined) return undefined
    const { route, readQuery } = m.compiled
    if (route.auth === 'required' && viewer === 0) return undefined
    // a route that looks at no token answers everyone as it answers the anonymous
    if (route.auth === 'none') viewer = 0
    const q = readQuery(searchOf(url))
    if (!q.ok) return undefined
    const input = { params: m.params, query: q.value }
    const at = d.caches.versions.clock
    const read = route.read!
    const built = read.cached(input, viewer) ?? read.build(input, viewer)
    const who = viewer
    const keep = q.known
    if (!(built instanceof Promise)) return ok(request, keep ? d.responses.keep(who, url, built, at) : text(built.value), t0)
    return built.then(
      (b) => ok(request, keep ? d.responses.keep(who, url, b, at) : text(b.value), t0),
      (e) => (e instanceof DatabaseUnavailable ? unavailable(request, e) : d.framework(request)),
    )
  }
  const ok = (request: Request, body: Uint8Array | string, t0: number) => {
    const headers = anyOrigin ? anyOriginHeaders : cachedHeaders(request)
    return d.access.early(request, new Response(body, { headers }), t0)
  }
  const unavailable = (request: Request, e: unknown): Response => {
    if (!(e instanceof DatabaseUnavailable)) throw e
    d.logger.warn('database unavailable', { method: request.method, path: pathOf(request.url) })
    const headers = { ...securityHeaders(pathOf(request.url)), ...cachedHeaders(request), ...UNAVAILABLE.headers }
    return d.access.early(request, errorResponse(503, UNAVAILABLE.errors, headers), undefined)
  }

  const answer = d.config.fastPath
    ? (request: Request): Response | Promise<Response> => cachedAnswer(request) ?? d.framework(request)
    : d.framework

  return (request: Request, server?: Server<unknown> | null): Response | Promise<Response> => {
    const canonical = canonicalRequest(request)
    // the peer address matters to the throttles of login and registration, both POSTs
    if (request.method === 'POST') {
      const peer = server?.requestIP(request)?.address
      if (peer) d.notePeer(canonical, peer)
    }
    // liveness, readiness and the docs answer without the database's word on what changed
    if (!isApi(canonical.url)) return answer(canonical)
    let synced: void | Promise<void>
    try {
      synced = d.changes.sync()
    } catch (e) {
      return unavailable(canonical, e)
    }
    if (synced)
      return synced.then(
        () => answer(canonical),
        (e) => unavailable(canonical, e),
      )
    return answer(canonical)
  }
}
