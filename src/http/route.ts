import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { Viewer } from '../auth/actor.ts'
import type { Built } from '../cache/cache.ts'
import type { Body } from '../cache/pieces.ts'

/**
 * One declaration per route: method, path, who may call it, the TypeBox
 * schemas of its parameters, query, body and answers, and what it does. Both
 * dispatchers are derived from the same declarations (src/http/dispatch.ts):
 * the Elysia registration, and the answers given before the framework to
 * plain GETs. The OpenAPI document is generated from them too
 * (src/http/openapi.ts), and the test suite checks every body it receives
 * against the declared answer schema.
 */

/** `none`: no token looked at; `optional`: anonymous or a valid token; `required`: a valid token. */
export type Auth = 'none' | 'optional' | 'required'

/** What a handler answers: a JSON text (or a value to serialise), or no body (204). */
export interface Reply {
  status: number
  body: string | Uint8Array | object | null
}
export const reply = (body: string | object, status = 200): Reply => ({ status, body })
export const NO_CONTENT: Reply = { status: 204, body: null }

/** The error statuses a route may answer, each described once (src/http/openapi.ts). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 503

export interface Input<P, Q, B, V> {
  params: P
  query: Q
  body: B
  viewer: V
  request: Request
}

type Of<S> = S extends TSchema ? Static<S> : Record<string, never>
type ViewerOf<A extends Auth> = A extends 'required' ? Viewer : A extends 'optional' ? Viewer | null : null

/**
 * A GET answered from cached parts (src/*\/reads.ts): `cached` composes it
 * from what the caches hold, synchronously, or says it cannot (undefined);
 * `build` reads what is missing. Both dispatchers call these two, so a read
 * has one composition whichever path answers.
 */
export interface Read<P, Q> {
  cached(input: { params: P; query: Q }, viewerId: number): Built<Body> | undefined
  build(input: { params: P; query: Q }, viewerId: number): Promise<Built<Body>>
}

export interface RouteSpec<A extends Auth, PS extends TObject | undefined, QS extends TObject | undefined, BS extends TObject | undefined> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** under /api, with `:name` parameters: `/articles/:slug` */
  path: string
  auth: A
  params?: PS
  query?: QS
  body?: BS
  /** runs on the parsed body before validation: trimming, dropping blank tags (see the schemas) */
  normalize?: (body: unknown) => void
  /** the success status and its body schema (null: no body) */
  ok: { status: number; schema: TSchema | null; description?: string }
  errors: readonly ErrorStatus[]
  /** the OpenAPI example of an error where this route words it its own way (openapi.ts has the usual ones) */
  errorExamples?: Partial<Record<ErrorStatus, Record<string, string[]>>>
  /** the operation's name in the OpenAPI document: RealWorld's own, so clients generated from either document match */
  operationId: string
  summary: string
  description?: string
  tag: string
  /** a cacheable GET: both dispatchers answer it through `read` */
  read?: Read<NoInfer<Of<PS>>, NoInfer<Of<QS>>>
  /** anything else */
  handle?: (input: Input<NoInfer<Of<PS>>, NoInfer<Of<QS>>, NoInfer<Of<BS>>, NoInfer<ViewerOf<A>>>) => Reply | Promise<Reply>
}

/** Input as the dispatchers hand it over: validated against the route's own schemas, whatever they are. */
type Erased = Input<Record<string, string>, Record<string, unknown>, unknown, Viewer | null>

/** A declaration with its types erased, as the dispatchers hold it (route() checked the handler against its schemas). */
export type Route = Omit<RouteSpec<Auth, TObject | undefined, TObject | undefined, TObject | undefined>, 'read' | 'handle'> & {
  read?: Read<Erased['params'], Erased['query']>
  handle?: (input: Erased) => Reply | Promise<Reply>
}

/** Declares a route, its handler typed from its schemas. */
export function route<
  A extends Auth,
  PS extends TObject | undefined = undefined,
  QS extends TObject | undefined = undefined,
  BS extends TObject | undefined = undefined,
>(spec: RouteSpec<A, PS, QS, BS>): Route {
  if (!spec.read === !spec.handle) throw new Error(`${spec.method} ${spec.path}: declare exactly one of read and handle`)
  if (spec.read && spec.method !== 'GET') throw new Error(`${spec.method} ${spec.path}: only a GET is a read`)
  return spec as unknown as Route
}
