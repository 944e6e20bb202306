import { Elysia } from 'elysia'
import type { Logger } from '../log.ts'
import type { HttpMetrics } from '../metrics/http.ts'
import { accessLog } from './access-log.ts'

/** The route of an answer the framework gave: the one its hooks noted (see `framework`). */
export const FRAMEWORK = -1

/**
 * Where every answer leaves the service: the request entry (entry.ts) hands
 * each one, from the fast path and from the framework alike, to `done`,
 * which writes the access-log line and counts it in the metrics. Undefined
 * when neither is on: then nothing is timed or noted.
 *
 * A fast-path answer comes with its route's label; a framework answer's
 * route is the template Elysia matched, noted by `framework`'s hook when it
 * routed the request (transform), or by the app's error handler (a 400 or
 * 413 thrown while parsing names its route too); nothing noted (no route
 * matched) counts as `unmatched`.
 */
export function exits(logger: Logger, metrics: HttpMetrics | undefined) {
  const log = accessLog(logger)
  if (log === undefined && metrics === undefined) return undefined
  const routes = new WeakMap<Request, number>()
  const note = (request: Request, template: string | undefined | null) => {
    if (metrics) routes.set(request, metrics.known(template))
  }
  return {
    /** The hooks that note the route the framework matched (nothing without metrics). */
    framework: metrics ? new Elysia().onTransform({ as: 'global' }, ({ request, route }) => note(request, route)) : new Elysia(),
    /** Notes the route of a framework answer: its template, or a label (`preflight`); the app's onError notes an error's. */
    note,
    /** Every answer, once: `route` its label, or FRAMEWORK; `t0` when the request arrived (performance.now()). */
    done(request: Request, response: Response, route: number, t0: number): Response {
      const ms = performance.now() - t0
      if (metrics) metrics.observe(route === FRAMEWORK ? (routes.get(request) ?? 0) : route, request.method, response.status, ms / 1000)
      log?.(request, response, ms)
      return response
    },
  }
}
export type Exits = NonNullable<ReturnType<typeof exits>>
