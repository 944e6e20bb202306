import { createHash, randomBytes } from 'node:crypto'
import { Elysia } from 'elysia'
import { articlesFeature } from './articles/index.ts'
import { CACHE_BUDGET_MB, createCaches } from './cache/caches.ts'
import { commentsFeature } from './comments/index.ts'
import type { Config } from './config.ts'
import type { Store } from './db/store.ts'
import { JSON_CONTENT_TYPE } from './errors.ts'
import { peerAddress } from './http/access-log.ts'
import { parseJsonBody, tooLarge } from './http/body.ts'
import { cors } from './http/cors.ts'
import { compile, fastRoutes, registerRoutes } from './http/dispatch.ts'
import { DOCS_PAGE, DOCS_TEMPLATES, docs } from './http/docs.ts'
import { requestEntry } from './http/entry.ts'
import { errorEnvelope } from './http/error-envelope.ts'
import { exits } from './http/exit.ts'
import { home, wantsHtml } from './http/home.ts'
import { securityHeaders } from './http/headers.ts'
import { REQUEST_ID, requestIds } from './http/request-id.ts'
import { ResponseCache } from './http/responses.ts'
import { API_PREFIX, HEALTH_PATH, METRICS_PATH, pathOf, READY_PATH } from './http/url.ts'
import { type Logger, silentLogger } from './log.ts'
import { metricsEndpoint } from './metrics/endpoint.ts'
import { ROUTE } from './metrics/http.ts'
import { ServiceMetrics } from './metrics/service.ts'
import { profilesFeature } from './profiles/index.ts'
import { tagsFeature } from './tags/index.ts'
import { usersFeature } from './users/index.ts'
import { apiClient } from './web/api.ts'
import { webFeature } from './web/index.ts'

/** The paths the framework answers whether or not the web app is on: the API, its docs, the probes and the metrics. */
const OUTSIDE_WEB = new RegExp(
  `^(${[API_PREFIX, DOCS_PAGE].map((p) => `${p}(/|$)`).join('|')}|${[HEALTH_PATH, READY_PATH, METRICS_PATH].map((p) => `${p}$`).join('|')})`,
)

export interface AppOptions {
  store: Store
  config: Config
  logger?: Logger
}

/**
 * Builds the whole service on a migrated store: the caches, the features'
 * reads and route declarations, and the two dispatchers derived from those
 * declarations (src/http/dispatch.ts). No listening, no timers, and no
 * global state but three a process shares by nature: the database counters
 * of /metrics (db/stats.ts), PostgreSQL's request deadline
 * (db/postgres/client.ts) and the web app's session-replacing requests
 * (http/auth.ts). Every test builds its own app on its own database.
 */
export async function createApp({ store, config, logger = silentLogger }: AppOptions) {
  const caches = createCaches(store.changes.versions, config.cacheMb / CACHE_BUDGET_MB)
  const secret = config.jwtSecret ?? (await store.secret(randomBytes(48).toString('base64url')))
  const corsPolicy = cors(config.corsOrigins)
  // the peer address of each request, noted where the server hands it over (see requestEntry)
  const peers = new WeakMap<Request, string>()
  let proxySeen = false
  const clientAddress = (request: Request) => {
    // behind a proxy without TRUST_PROXY, every client is the proxy to the throttles: said once
    if (!config.trustProxy && !proxySeen && request.headers.has('x-forwarded-for')) {
      proxySeen = true
      logger.warn(
        'a request came through a proxy (X-Forwarded-For) but TRUST_PROXY is off: the throttles of sign-up and sign-in count every client behind it as one',
        {
          address: peers.get(request) ?? 'unknown',
        },
      )
    }
    return peerAddress(request, peers.get(request), config.trustProxy)
  }

  // every feature composes itself on the store; what one needs of another is passed here
  const users = usersFeature({ store, caches, config, secret, clientAddress, logger })
  const profiles = profilesFeature({ store, caches })
  const articles = articlesFeature({ store, caches, profiles: profiles.reads })
  const comments = commentsFeature({ store, caches, articles: articles.reads, profiles: profiles.reads })
  const tags = tagsFeature({ store, caches })
  const features = { users, profiles, articles, comments, tags }

  const tokens = users.tokens
  const metrics = config.metricsToken
    ? new ServiceMetrics({
        backend: store.backend,
        poolMax: config.databasePoolMax,
        caches,
        changes: store.changes.stats,
        throttles: users.throttles,
      })
    : undefined
  const ids = requestIds()

  /** Every route of the API, per feature: the one declaration each dispatcher is derived from. */
  const routes = Object.values(features).flatMap((f) => f.routes)
  const responses = new ResponseCache(caches, routes)
  const api = new Elysia({ prefix: API_PREFIX })
  // each feature's routes as one Elysia instance under /api
  const compiled = Object.values(features).flatMap(({ routes: group }) => {
    const c = compile(group, metrics && ((template) => metrics.http.route(template)))
    api.use(registerRoutes(c, { tokens, responses }))
    return c
  })

  const exit = exits(logger, metrics?.http)
  for (const docsPath of DOCS_TEMPLATES) metrics?.http.alias(docsPath, ROUTE.docs)
  const toErrorResponse = errorEnvelope(logger)
  let draining = false
  const app = new Elysia()
    .use(exit?.framework ?? new Elysia())
    .onRequest(({ request, set }) => {
      const headers = Object.assign(set.headers, securityHeaders(pathOf(request.url)), corsPolicy.headers(request))
      headers[REQUEST_ID] = ids(request)
      if (request.method === 'OPTIONS') {
        exit?.note(request, ROUTE.preflight)
        return corsPolicy.preflight(request, headers as Record<string, string>)
      }
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > config.bodyLimitBytes) throw tooLarge(config.bodyLimitBytes)
    })
    .onParse(async ({ request }) => parseJsonBody(request, config.bodyLimitBytes))
    .onError({ as: 'global' }, (ctx) => {
      exit?.note(ctx.request, (ctx as { route?: string }).route)
      return toErrorResponse(ctx)
    })
    .mapResponse(({ responseValue, set }) => {
      // Responses, and the fixed pages plugins register (handed over as functions), pass as they are
      if (responseValue instanceof Response || typeof responseValue === 'function') return
      const headers = set.headers as Record<string, string>
      if (set.status === 204) return new Response(null, { status: 204, headers })
      headers['content-type'] = JSON_CONTENT_TYPE
      return new Response(JSON.stringify(responseValue), { status: set.status as number, headers })
    })
    .get(HEALTH_PATH, () => ({ status: 'ok' }))
    .get(READY_PATH, async ({ set }) => {
      if (draining) {
        set.status = 503
        return { status: 'shutting down' }
      }
      if (await store.ping()) return { status: 'ready' }
      set.status = 503
      return { status: 'database unavailable' }
    })
    .use(home(config.webApp))
    .use(docs(routes))
    .use(metrics ? metricsEndpoint(config.metricsToken!, metrics) : new Elysia())
    .use(api)

  const web = config.webApp
    ? webFeature({
        config,
        logger,
        caches,
        tokens,
        articles: articles.reads,
        comments: comments.reads,
        profiles: profiles.reads,
        tags: tags.reads.mostUsed,
        own: (resource) => store.own(resource),
        api: apiClient(
          (request, server) => respond(request, server),
          (request) => peers.get(request),
        ),
      })
    : undefined
  const webPages = web && {
    // everything outside the API, the docs and the probes, but `/` for a program that asks for JSON (home.ts answers it)
    owns: (request: Request) => {
      const path = pathOf(request.url)
      if (OUTSIDE_WEB.test(path)) return false
      return path !== '/' || wantsHtml(request.headers.get('accept'), true)
    },
    handle: web.handle,
    failed: web.failed,
    label: (request: Request) => (metrics ? metrics.http.known(web.template(request.method, pathOf(request.url))) : 0),
  }
  for (const template of web?.templates ?? []) metrics?.http.route(template)

  const respond = requestEntry({
    config,
    logger,
    changes: store.changes,
    caches,
    tokens,
    responses,
    cors: corsPolicy,
    exit,
    requestIds: ids,
    match: fastRoutes(compiled),
    framework: app.handle,
    notePeer: (request, address) => void peers.set(request, address),
    web: webPages,
  })
  app.handle = async (request: Request) => respond(request)
  return Object.assign(app, {
    respond,
    caches,
    /** the metrics, when METRICS_TOKEN is set (server.ts starts the lag probe and links a worker to its siblings) */
    metrics,
    /**
     * Where the token secret comes from, and the first 8 hex digits of its SHA-256, for the
     * start-up line: instances that must accept each other's tokens show the same.
     */
    tokenSecret: `${config.jwtSecret ? 'JWT_SECRET' : 'database'}:${createHash('sha256').update(secret).digest('hex').slice(0, 8)}`,
    /** every declared route: the one declaration both dispatchers and the OpenAPI document come from */
    declared: routes,
    /** each feature's reads and writes (tests, and what composes on the app) */
    features,
    /** From now on /ready answers 503: load balancers stop sending new requests before the server stops. */
    drain() {
      draining = true
    },
  })
}

export type App = Awaited<ReturnType<typeof createApp>>
