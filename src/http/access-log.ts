import type { Logger } from '../log.ts'
import { REQUEST_ID } from './request-id.ts'
import { pathOf } from './url.ts'

/**
 * One line per request: method, path (never the query, a token or a body),
 * status, duration and the request's id. Undefined when the level does not
 * let it print. Called for every answer where it leaves (see exit.ts).
 */
export function accessLog(logger: Logger) {
  if (!logger.enabled('info')) return undefined
  return (request: Request, response: Response, ms: number) => {
    logger.info('request', {
      method: request.method,
      path: pathOf(request.url),
      status: response.status,
      ms: Math.round(ms * 100) / 100,
      request_id: response.headers.get(REQUEST_ID) ?? undefined,
    })
  }
}

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
