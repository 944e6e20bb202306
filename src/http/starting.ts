import type { Config } from '../config.ts'
import { HttpError, JSON_CONTENT_TYPE } from '../errors.ts'
import { cors } from './cors.ts'
import { errorAnswer } from './error-envelope.ts'
import { securityHeaders } from './headers.ts'
import { REQUEST_ID, requestIds } from './request-id.ts'
import { HEALTH_PATH, isApi, pathOf } from './url.ts'

/** The answer while the database is being opened and migrated. */
const STARTING = new HttpError(503, { server: ['starting'] }, { 'retry-after': '1' })
/**
 * /health's answer meanwhile: the process is alive, and a liveness probe must
 * not kill it in the middle of a migration or while it waits for another
 * instance's; /ready (and everything else) answers STARTING.
 */
const HEALTH_STARTING = JSON.stringify({ status: 'starting' })

/**
 * The answers while the database is being opened and migrated: /health 200
 * "starting", an API preflight its 204 (a 503 there is a CORS failure to the
 * browser, which hides the answer and its Retry-After from the client),
 * anything else 503 STARTING; each with a request id and the CORS headers
 * every answer carries (Vary: Origin with an allow-list). Also what `serve
 * --workers N`'s supervisor answers until a worker listens.
 */
export function startingAnswers(config: Config) {
  const ids = requestIds()
  const corsPolicy = cors(config.corsOrigins)
  const headers = (request: Request) => ({ ...securityHeaders('/'), ...corsPolicy.headers(request), [REQUEST_ID]: ids(request) })
  // each ends its connection: a client's next request opens one to whatever serves by then (with
  // --workers, a worker, not this supervisor's answers)
  const closing = (request: Request) => ({ ...headers(request), connection: 'close' })
  const answer = (request: Request) => {
    if (request.method === 'OPTIONS' && isApi(request.url)) return corsPolicy.preflight(request, closing(request))
    return (request.method === 'GET' || request.method === 'HEAD') && pathOf(request.url) === HEALTH_PATH
      ? new Response(HEALTH_STARTING, { headers: { 'content-type': JSON_CONTENT_TYPE, ...closing(request) } })
      : errorAnswer(STARTING, { headers: closing(request) })
  }
  return { headers, answer }
}
