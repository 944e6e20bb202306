import { Elysia } from 'elysia'
import type { Logger } from '../log.ts'
import { pathOf } from './url.ts'

/**
 * One line per request: method, path (never the query, a token or a body),
 * status and duration. Only installed when the level lets it print. Answers
 * given before Elysia (cache hits) or in onRequest (preflights) skip Elysia's
 * afterResponse hooks, so they are logged through `early`.
 */
export function accessLog(logger: Logger) {
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
export type AccessLog = ReturnType<typeof accessLog>

/**
 * The client address. Behind a trusted proxy (TRUST_PROXY) it is the last
 * X-Forwarded-For entry — the one that proxy appended; earlier entries are
 * whatever the client claimed.
 */
export function peerAddress(request: Request, socket: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim()
    if (forwarded) return forwarded
  }
  return socket ?? 'unknown'
}
