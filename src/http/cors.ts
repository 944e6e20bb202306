import type { Config } from '../config.ts'

const ALLOW_METHODS = 'GET, POST, PUT, DELETE, OPTIONS'
const ALLOW_HEADERS = 'Authorization, Content-Type, X-Requested-With, Accept, Origin, X-Request-Id'
// a browser client may read the id it would quote in a bug report (see request-id.ts), how long to wait after a 429 or 503,
// and that its token no longer works where a read was answered as to anyone (auth.ts)
const EXPOSE_HEADERS = 'X-Request-Id, Retry-After, WWW-Authenticate'
// a list of header names (RFC 9110 tokens), as a browser sends it in Access-Control-Request-Headers
const HEADER_NAMES = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/

/**
 * The headers a preflight allows: those the browser asks for, when they are a list of names.
 * Tracing and HTTP-client libraries add their own (traceparent, sentry-trace, Cache-Control), and
 * a fixed list blocks the whole request; the API reads none of them, so allowing them costs nothing.
 */
function allowHeaders(request: Request): string {
  const asked = request.headers.get('access-control-request-headers')
  return asked && asked.length <= 2048 && HEADER_NAMES.test(asked) ? `${ALLOW_HEADERS}, ${asked}` : ALLOW_HEADERS
}

/**
 * CORS per the contract: any origin by default, or an allow-list. The headers
 * go on every response (errors included); a preflight is answered at once.
 *
 * With an allow-list, the answer depends on the request's Origin (echoed, or
 * no Access-Control-Allow-Origin at all), so every answer says `Vary: Origin`
 * — the refused and the origin-less ones too: a shared cache must not hand the
 * answer stored for one origin (or for none) to another. With `*` the answer
 * is the same for every origin, and there is nothing to vary on.
 *
 * A listed origin may also send credentials: clients built with `withCredentials`
 * (axios or fetch set up so) are refused by the browser without
 * `Access-Control-Allow-Credentials`, and `*` can never carry it. The API reads
 * no cookie (only `Authorization`), so what a credentialed request gets is what
 * any other gets.
 */
export function cors(origins: Config['corsOrigins']) {
  const anyOrigin = Object.freeze({ 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSE_HEADERS })
  const notAllowed = Object.freeze({ vary: 'Origin' })
  return {
    /** Shared objects: copy, never mutate. */
    headers(request: Request): Readonly<Record<string, string>> {
      if (origins === '*') return anyOrigin
      const origin = request.headers.get('origin')
      if (!origin || !origins.includes(origin)) return notAllowed
      return {
        'access-control-allow-origin': origin,
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': EXPOSE_HEADERS,
        vary: 'Origin',
      }
    },
    preflight(request: Request, extra: Record<string, string> = {}): Response {
      const headers = this.headers(request)
      return new Response(null, {
        status: 204,
        headers: {
          ...extra,
          ...headers,
          'access-control-allow-methods': ALLOW_METHODS,
          'access-control-allow-headers': allowHeaders(request),
          'access-control-max-age': '86400',
          // the allowed headers echo the ones asked for
          vary: headers.vary ? `${headers.vary}, Access-Control-Request-Headers` : 'Access-Control-Request-Headers',
        },
      })
    },
  }
}
