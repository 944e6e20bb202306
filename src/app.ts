import type { Server } from 'bun'
import { randomBytes } from 'node:crypto'
import { Elysia, ValidationError } from 'elysia'
import { articleReads } from './articles/reads.ts'
import { articleRoutes } from './articles/routes.ts'
import { passwordHasher } from './auth/password.ts'
import { tokens as createTokens } from './auth/plugin.ts'
import { loginThrottle, registrationThrottle } from './auth/throttle.ts'
import { CACHE_BUDGET_MB, createCaches } from './cache/caches.ts'
import { commentReads } from './comments/reads.ts'
import { commentRoutes } from './comments/routes.ts'
import type { Config } from './config.ts'
import type { Store } from './db/store.ts'
import { DatabaseUnavailable } from './db/types.ts'
import { errorResponse, HttpError, JSON_CONTENT_TYPE, UNAVAILABLE } from './errors.ts'
import { cors } from './http/cors.ts'
import { parseJsonBody, tooLarge } from './http/body.ts'
import { docs } from './http/docs.ts'
import { fastGet } from './http/fast.ts'
import { ResponseCache } from './http/responses.ts'
import { securityHeaders } from './http/headers.ts'
import { validationErrors } from './http/validation.ts'
import { type Logger, silentLogger } from './log.ts'
import { profileReads } from './profiles/reads.ts'
import { profileRoutes } from './profiles/routes.ts'
import { tagRoutes, tagsJson } from './tags/routes.ts'
import { userRoutes } from './users/routes.ts'

export interface AppOptions {
  store: Store
  config: Config
  logger?: Logger
}

/**
 * Builds the whole service on a migrated store. No listening, no timers, no
 * global state: every test builds its own app on its own database.
 */
export async function createApp({ store, config, logger = silentLogger }: AppOptions) {
  const caches = createCaches(store.changes.versions, config.cacheMb / CACHE_BUDGET_MB)
  const responses = new ResponseCache(caches)
  const secret = config.jwtSecret ?? (await store.secret(randomBytes(48).toString('base64url')))
  const tokens = createTokens(secret, config.tokenTtlSeconds, store.users, caches)
  const passwords = passwordHasher(config.passwordHash)
  const corsPolicy = cors(config.corsOrigins)
  // the peer address of each request, noted where the server hands it over (see respond)
  const peers = new WeakMap<Request, string>()
  const clientAddress = (request: Request) => peerAddress(request, peers.get(request), config.trustProxy)
  let draining = false
  const profiles = profileReads(store, caches)
  const articles = articleReads(store, caches, profiles)
  const comments = commentReads(store, caches, articles, profiles)
  const reads = { articles, comments, profiles, tags: tagsJson(store.tags, caches.versions) }

  const api = new Elysia({ prefix: '/api' })
    .use(
      userRoutes({
        users: store.users,
        tokens,
        passwords,
        loginGuard: loginThrottle(config.loginThrottle, store.throttle),
        registrationGuard: registrationThrottle(config.registrationThrottle, store.throttle),
        clientAddress,
      }),
    )
    .use(profileRoutes({ profiles: store.profiles, reads: profiles, tokens, responses }))
    .use(articleRoutes({ articles: store.articles, reads: articles, tokens, responses }))
    .use(commentRoutes({ comments: store.comments, reads: comments, tokens, responses }))
    .use(tagRoutes({ build: reads.tags, responses }))

  /** Every error, ours or the framework's, in the contract's envelope. */
  const toErrorResponse = ({
    code,
    error,
    set,
    request,
  }: {
    code: unknown
    error: unknown
    set: { headers: unknown }
    request: Request
  }) => {
    const extra = set.headers as Record<string, string>
    // errors thrown while parsing (413) arrive wrapped in Elysia's ParseError
    const cause = code === 'PARSE' ? (error as { cause?: unknown }).cause : undefined
    const http = error instanceof HttpError ? error : cause instanceof HttpError ? cause : undefined
    if (http) return errorResponse(http.status, http.errors, { ...extra, ...http.headers })
    if (error instanceof ValidationError) {
      // a path segment that does not decode (`%zz`) names nothing that exists
      if (error.type === 'params') return errorResponse(404, { [paramResource(error.all)]: ['not found'] }, extra)
      return errorResponse(422, validationErrors(error.all, error.type === 'body'), extra)
    }
    if (code === 'NOT_FOUND') return errorResponse(404, { route: ['not found'] }, extra)
    if (code === 'PARSE') return errorResponse(400, { body: ['is not valid JSON'] }, extra)
    if (error instanceof DatabaseUnavailable) {
      logger.warn('database unavailable', { method: request.method, path: pathOf(request.url) })
      return errorResponse(503, UNAVAILABLE.errors, { ...extra, ...UNAVAILABLE.headers })
    }
    logger.error('unhandled error', { method: request.method, path: pathOf(request.url) }, error)
    return errorResponse(500, { server: ['internal error'] }, extra)
  }

  // The headers of a cached API answer: the same every time, but for an allow-listed origin.
  const jsonHeaders = { ...securityHeaders('/api'), 'content-type': JSON_CONTENT_TYPE }
  const anyOrigin = Object.freeze({ ...jsonHeaders, ...corsPolicy.headers(new Request('http://localhost/')) })
  const cachedHeaders = (request: Request) => (config.corsOrigins === '*' ? anyOrigin : { ...jsonHeaders, ...corsPolicy.headers(request) })
  // the same as a Headers object, which a Response copies in half the time it takes to convert a plain one
  const anyOriginHeaders = new Headers(anyOrigin)

  const access = accessLog(logger)
  // the framework's own handler, once it is built (below)
  let viaElysia: (request: Request) => Promise<Response>
  /**
   * A plain GET answered before Elysia sees it: the body kept for the URL
   * (see ResponseCache), one composed from cached parts, or one read as the
   * route would (src/http/fast.ts). A token counts only if it was fully
   * verified before and its user has not changed since. Anything else goes
   * through the routes, and so does a read that fails: they answer it (404,
   * or the error's envelope), but for the database being down, answered here
   * (the routes would wait for it a second time).
   */
  const cachedAnswer = (request: Request): Response | Promise<Response> | undefined => {
    if (request.method !== 'GET') return undefined
    const t0 = performance.now()
    const viewer = tokens.verified(request.headers.get('authorization') ?? undefined)
    if (viewer === undefined) return undefined
    const url = request.url
    const hit = responses.peek(viewer, url)
    if (hit !== undefined) return ok(request, hit, t0)
    const start = url.indexOf('/', url.indexOf('//') + 2)
    const q = url.indexOf('?', start)
    const at = caches.versions.clock
    const built = fastGet(reads, q < 0 ? url.slice(start) : url.slice(start, q), q < 0 ? '' : url.slice(q + 1), viewer)
    if (built === undefined) return undefined
    if (!(built instanceof Promise)) return ok(request, responses.keep(viewer, url, built, at), t0)
    return built.then(
      (b) => ok(request, responses.keep(viewer, url, b, at), t0),
      (e) => (e instanceof DatabaseUnavailable ? unavailable(request, e) : viaElysia(request)),
    )
  }
  const ok = (request: Request, body: Uint8Array | string, t0: number) => {
    const headers = config.corsOrigins === '*' ? anyOriginHeaders : cachedHeaders(request)
    return access.early(request, new Response(body, { headers }), t0)
  }
  const unavailable = (request: Request, e: unknown): Response => {
    if (!(e instanceof DatabaseUnavailable)) throw e
    logger.warn('database unavailable', { method: request.method, path: pathOf(request.url) })
    const headers = { ...securityHeaders(pathOf(request.url)), ...cachedHeaders(request), ...UNAVAILABLE.headers }
    return access.early(request, errorResponse(503, UNAVAILABLE.errors, headers), undefined)
  }

  const app = new Elysia()
    .use(access.plugin)
    .onRequest(({ request, set }) => {
      Object.assign(set.headers, securityHeaders(pathOf(request.url)), corsPolicy.headers(request))
      if (request.method === 'OPTIONS') {
        return access.early(request, corsPolicy.preflight(request, set.headers as Record<string, string>), undefined)
      }
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > config.bodyLimitBytes) throw tooLarge(config.bodyLimitBytes)
    })
    .onParse(async ({ request }) => parseJsonBody(request, config.bodyLimitBytes))
    .onError({ as: 'global' }, (ctx) => {
      const response = toErrorResponse(ctx)
      ctx.set.status = response.status // what the access log reports
      return response
    })
    .mapResponse(({ responseValue, set }) => {
      // Responses, and the fixed pages plugins register (handed over as functions), pass as they are
      if (responseValue instanceof Response || typeof responseValue === 'function') return
      const headers = set.headers as Record<string, string>
      if (set.status === 204) return new Response(null, { status: 204, headers })
      headers['content-type'] = JSON_CONTENT_TYPE
      return new Response(JSON.stringify(responseValue), { status: set.status as number, headers })
    })
    .get('/health', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/ready',
      async ({ set }) => {
        if (draining) {
          set.status = 503
          return { status: 'shutting down' }
        }
        if (await store.ping()) return { status: 'ready' }
        set.status = 503
        return { status: 'database unavailable' }
      },
      { detail: { hide: true } },
    )
    .use(docs())
    .use(api)

  viaElysia = app.handle
  const answer = (request: Request): Response | Promise<Response> => cachedAnswer(request) ?? viaElysia(request)
  /**
   * The entry point: first what other processes and instances changed
   * (see ChangeFeed.sync), then cached answers, everything else through Elysia.
   * `server` hands over the peer address (login throttling).
   */
  const respond = (request: Request, server?: Server<unknown> | null): Response | Promise<Response> => {
    const canonical = canonicalRequest(request)
    // the peer address matters to the throttles of login and registration, both POSTs
    if (request.method === 'POST') {
      const peer = server?.requestIP(request)?.address
      if (peer) peers.set(canonical, peer)
    }
    // liveness, readiness and the docs answer without the database's word on what changed
    if (!isApi(canonical.url)) return answer(canonical)
    let synced: void | Promise<void>
    try {
      synced = store.changes.sync()
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
  app.handle = async (request: Request) => respond(request)
  return Object.assign(app, {
    respond,
    caches,
    /** From now on /ready answers 503: load balancers stop sending new requests before the server stops. */
    drain() {
      draining = true
    },
  })
}

/**
 * The router finds the path after the 11th character of the URL (past
 * `http://` and a 4-character host); a shorter Host header (`Host: a`)
 * would make it route one path while the log and the security headers see
 * another, and a request without any Host header (HTTP/1.0, as some health
 * checkers send) has a bare path for a URL. Such a request is answered for
 * the path it names, under a canonical host.
 */
function canonicalRequest(request: Request): Request {
  const url = request.url
  const scheme = url.indexOf('://')
  const start = scheme < 0 ? 0 : url.indexOf('/', scheme + 3)
  if (start >= 11) return request
  return new Request(`http://localhost${start < 0 ? '/' : url.slice(start)}`, request)
}

const PARAM_RESOURCES: Record<string, string> = { slug: 'article', username: 'profile', id: 'comment' }
function paramResource(errors: { path: string }[]): string {
  const param = errors[0]?.path.split('/').filter(Boolean)[0] ?? ''
  return PARAM_RESOURCES[param] ?? 'route'
}

/** Whether the request is for the API (under /api). */
function isApi(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return url.startsWith('/api', start) && (url.length === start + 4 || '/?'.includes(url[start + 4]!))
}

/** The path of a request URL, without parsing the whole URL. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

/**
 * One line per request: method, path (never the query, a token or a body),
 * status and duration. Only installed when the level lets it print. Answers
 * given before Elysia (cache hits) or in onRequest (preflights) skip Elysia's
 * afterResponse hooks, so they are logged through `early`.
 */
function accessLog(logger: Logger) {
  const enabled = logger.enabled('info')
  const started = new WeakMap<Request, number>()
  const line = (request: Request, status: unknown, t0 = started.get(request)) => {
    logger.info('request', {
      method: request.method,
      path: pathOf(request.url),
      status: typeof status === 'number' ? status : Number(status) || undefined,
      ms: t0 === undefined ? undefined : Math.round((performance.now() - t0) * 100) / 100,
    })
  }
  const plugin = enabled
    ? new Elysia()
        .onRequest(({ request }) => void started.set(request, performance.now()))
        .onAfterResponse({ as: 'global' }, ({ request, set }) => line(request, set.status))
    : new Elysia()
  return {
    plugin,
    early(request: Request, response: Response, t0: number | undefined): Response {
      if (enabled) line(request, response.status, t0)
      return response
    },
  }
}

/**
 * The client address. Behind a trusted proxy (TRUST_PROXY) it is the last
 * X-Forwarded-For entry — the one that proxy appended; earlier entries are
 * whatever the client claimed.
 */
function peerAddress(request: Request, socket: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim()
    if (forwarded) return forwarded
  }
  return socket ?? 'unknown'
}

export type App = Awaited<ReturnType<typeof createApp>>
