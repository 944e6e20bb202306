import { randomBytes } from 'node:crypto'

export const REQUEST_ID = 'x-request-id'

/**
 * An incoming X-Request-Id is kept when it is 1-128 characters of
 * `A-Z a-z 0-9 . _ : / + = @ -`: what proxies and tracing systems send (UUIDs,
 * hex or base64 trace ids, `host/123`), and nothing that could break a log
 * line or a header (no spaces, quotes, commas or control characters).
 */
const SANE = /^[A-Za-z0-9._:/+=@-]{1,128}$/

/**
 * The id of a request: the one a proxy sent, when sane, else a new one. New
 * ids are this process's random prefix (64 bits: workers and restarts do not
 * collide) and a counter, `3f1c9a0b7e2d4c55-1a`: a counter costs a fraction
 * of a random UUID (docs/METRICS.md).
 */
export function requestIds(prefix = randomBytes(8).toString('hex')) {
  let counter = 0
  return (request: Request): string => {
    const given = request.headers.get(REQUEST_ID)
    if (given !== null && SANE.test(given)) return given
    return `${prefix}-${(++counter).toString(36)}`
  }
}
export type RequestIds = ReturnType<typeof requestIds>
