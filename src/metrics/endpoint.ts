import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { HttpError } from '../errors.ts'
import { METRICS_PATH } from '../http/url.ts'
import { CONTENT_TYPE } from './exposition.ts'
import type { ServiceMetrics } from './service.ts'

const sha256 = (s: string) => createHash('sha256').update(s).digest()
const refuse = (message: 'is missing' | 'is invalid') => new HttpError(401, { token: [message] }, { 'www-authenticate': 'Bearer' })

/**
 * GET /metrics, for Prometheus, with `Authorization: Bearer <METRICS_TOKEN>`.
 * The token is compared as SHA-256 digests in constant time: equal lengths
 * whatever was sent, and no early exit that would tell how much of it matched.
 * Outside /api: a scrape never waits for the change log.
 */
export function metricsEndpoint(token: string, metrics: ServiceMetrics) {
  const expected = sha256(token)
  return new Elysia().get(METRICS_PATH, async ({ request }) => {
    const header = request.headers.get('authorization')
    if (!header) throw refuse('is missing')
    // exactly `Bearer <token>`: one space, and nothing after the token
    const space = header.indexOf(' ')
    const scheme = space < 0 ? header : header.slice(0, space)
    const given = space < 0 ? '' : header.slice(space + 1)
    if (scheme.toLowerCase() !== 'bearer' || !timingSafeEqual(sha256(given), expected)) throw refuse('is invalid')
    return new Response(await metrics.scrape(), { headers: { 'content-type': CONTENT_TYPE } })
  })
}
