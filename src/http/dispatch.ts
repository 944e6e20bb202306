import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Elysia } from 'elysia'
import { authPlugin, type Tokens } from './auth.ts'
import type { Viewer } from '../auth/actor.ts'
import type { Built } from '../cache/cache.ts'
import type { Body } from '../cache/pieces.ts'
import { isReferenceGone } from '../db/types.ts'
import { unprocessable } from '../errors.ts'
import { queryReader, type QueryReader } from './query.ts'
import { rawJson } from './respond.ts'
import type { ResponseCache } from './responses.ts'
import type { Read, Reply, Route } from './route.ts'
import { API_PREFIX, searchOf } from './url.ts'

/**
 * The two dispatchers, both derived from the route declarations (route.ts):
 * - `registerRoutes`: each feature's routes as an Elysia instance (the
 *   framework routes, parses and validates parameters and bodies, and runs
 *   the auth plugin and the app's hooks);
 * - `fastRoutes`: the declared reads (plain GETs) matched before the
 *   framework, for the request entry (entry.ts) to answer from caches.
 * The query string is read by one reader per route (query.ts) on both paths.
 */

/** A declaration with what both dispatchers derive from it once. */
export interface Compiled {
  route: Route
  /** the path the router knows: `/api/articles/:slug` */
  template: string
  readQuery: QueryReader
  /** whether decoded path parameters pass the route's params schema (as the framework validates them) */
  paramsOk: (params: Record<string, string>) => boolean
  /** its template's label in the metrics (see HttpMetrics.route) */
  label: number
}

const anyParams = () => true

/** `label`: a template's metrics label (none: 0). */
export function compile(routes: readonly Route[], label: (template: string) => number = () => 0): Compiled[] {
  return routes.map((route) => {
    const template = `${API_PREFIX}${route.path}`
    const paramsCheck = route.params && TypeCompiler.Compile(route.params)
    const paramsOk = paramsCheck ? (p: Record<string, string>) => paramsCheck.Check(p) : anyParams
    return { route, template, readQuery: queryReader(route.query), paramsOk, label: label(template) }
  })
}

/** The query of a request URL, or '' (every reader takes it without `?`). */
const searchOfRequest = (request: Request) => searchOf(request.url)

type ReadInput = Parameters<Read<unknown, unknown>['cached']>[0]

/**
 * A declared read's answer: composed from cached parts, else read (both
 * dispatchers). Through `Reflect.apply`, whose one call site the JIT sees as
 * megamorphic: a plain `read.cached(...)` let it inline every route's read
 * into the request entry and compile it all again whenever one changed. The
 * rule is checked (scripts/layers.ts; docs/PERFORMANCE.md, "Rules a change
 * must keep").
 */
export function answerRead(read: Read<unknown, unknown>, input: ReadInput, viewerId: number): Built<Body> | Promise<Built<Body>> {
  return (Reflect.apply(read.cached, read, [input, viewerId]) as Built<Body> | undefined) ?? buildRead(read, input, viewerId)
}

/** A declared read built by reading (the framework's path, and answerRead's when the caches fall short; see answerRead for why through Reflect.apply). */
const buildRead = (read: Read<unknown, unknown>, input: ReadInput, viewerId: number): Promise<Built<Body>> =>
  Reflect.apply(read.build, read, [input, viewerId])

/** A handler's reply as the response the app sends (its hooks' headers included). */
function toResponse(r: Reply, set: { headers: unknown; status?: unknown }): Response {
  if (r.body === null) {
    set.status = r.status
    return new Response(null, { status: r.status, headers: set.headers as Record<string, string> })
  }
  const body = typeof r.body === 'string' || r.body instanceof Uint8Array ? r.body : JSON.stringify(r.body)
  return rawJson(body, set, r.status)
}

interface Context {
  request: Request
  params: Record<string, string>
  body: unknown
  viewer?: Viewer | null
  set: { headers: unknown; status?: unknown }
}

/** One feature's routes as an Elysia instance. */
export function registerRoutes(routes: readonly Compiled[], deps: { tokens: Tokens; responses: ResponseCache }) {
  const auth = authPlugin(deps.tokens)
  const app = new Elysia().use(auth.plugin)
  // the declarations decide every type (route.ts): Elysia's own inference over a loop adds nothing
  const register = app.route.bind(app) as (method: string, path: string, handler: unknown, hook: unknown) => unknown
  for (const c of routes) {
    const r = c.route
    const handler = async ({ request, params, body, viewer = null, set }: Context) => {
      const q = c.readQuery(searchOfRequest(request))
      if (!q.ok) throw unprocessable(q.errors)
      const input = { params, query: q.value, body, viewer, request }
      if (r.read) {
        const read = r.read
        return rawJson(await deps.responses.body(viewer, request.url, q.known, (id) => buildRead(read, input, id), c.label), set)
      }
      if (!viewer) return toResponse(await r.handle!(input), set)
      try {
        return toResponse(await r.handle!(input), set)
      } catch (e) {
        // the writer deleted meanwhile: refused as its token would be a moment later (recheck throws that 401)
        if (isReferenceGone(e)) await deps.tokens.recheck(request.headers.get('authorization') ?? undefined)
        throw e
      }
    }
    const hook: Record<string, unknown> = {}
    if (r.auth === 'required') hook.auth = true
    if (r.auth === 'optional') hook.optionalAuth = true
    if (r.params) hook.params = r.params
    if (r.body) hook.body = r.body
    if (r.normalize) {
      const normalize = r.normalize
      // the token before the body: normalize may refuse a wrapper (422), which must not come before a 401
      const required = r.auth === 'required'
      hook.transform =
        r.auth === 'none'
          ? ({ body }: { body: unknown }) => normalize(body)
          : async ({ body, request }: { body: unknown; request: Request }) => {
              await auth.check(request, required)
              normalize(body)
            }
    }
    register(r.method, r.path, handler, hook)
  }
  return app
}

/** A declared read matched for a path, with its decoded parameters. */
export interface FastMatch {
  compiled: Compiled
  params: Record<string, string>
}

/**
 * The matcher of the declared reads (plain GETs), for the request entry: a
 * path whose parameters the route's params schema refuses is not matched
 * (the framework answers it, with its 422).
 */
export function fastRoutes(compiled: readonly Compiled[]): (path: string) => FastMatch | undefined {
  const match = routeMatcher(compiled.filter((c) => c.route.read))
  return (path) => {
    const m = match(path)
    return m?.compiled.paramsOk(m.params) ? m : undefined
  }
}

/**
 * A matcher of paths to routes (of one method), as the router matches them:
 * static segments exactly (never decoded), parameters percent-decoded (a
 * segment that does not decode is left to the router, which answers 404),
 * one trailing `/` ignored, a route with fewer parameters first
 * (`/articles/feed` before `/articles/:slug`). Anything it does not match is
 * left to the router. A path without parameters is one map lookup; the
 * others are tried in order, their static segments first, and a parameters
 * object is made only for the route that matches (this runs for every
 * request whose body is not kept).
 */
export function routeMatcher(compiled: readonly Compiled[]): (path: string) => FastMatch | undefined {
  const reads = compiled
    .map((c) => {
      const segments = c.template.split('/')
      // each segment's parameter name, or null for a static one
      const names = segments.map((s) => (s.startsWith(':') ? s.slice(1) : null))
      return { compiled: c, segments, names, static: names.every((n) => n === null) }
    })
    .sort((a, b) => params(a.segments) - params(b.segments))
  // the paths without parameters, each to its first route
  const exact = new Map<string, Compiled>()
  for (const r of reads) if (r.static && !exact.has(r.compiled.template)) exact.set(r.compiled.template, r.compiled)
  const withParams = reads.filter((r) => !r.static)
  return (path) => {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
    const found = exact.get(trimmed)
    if (found !== undefined) return { compiled: found, params: {} }
    const parts = trimmed.split('/')
    next: for (const r of withParams) {
      if (r.segments.length !== parts.length) continue
      for (let i = 0; i < parts.length; i++) if (r.names[i] === null && r.segments[i] !== parts[i]) continue next
      const out: Record<string, string> = {}
      for (let i = 0; i < parts.length; i++) {
        const name = r.names[i]
        if (name === null || name === undefined) continue
        const part = parts[i]!
        const value = part.length ? decodeSegment(part) : undefined
        if (value === undefined) continue next
        out[name] = value
      }
      return { compiled: r.compiled, params: out }
    }
    return undefined
  }
}

const params = (segments: readonly string[]) => segments.filter((s) => s.startsWith(':')).length

function decodeSegment(raw: string): string | undefined {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}
