import type { Config } from '../config.ts'

const ALLOW_METHODS = 'GET, POST, PUT, DELETE, OPTIONS'
const ALLOW_HEADERS = 'Authorization, Content-Type, X-Requested-With, Accept, Origin'

/**
 * CORS per the contract: any origin by default, or an allow-list. The headers
 * go on every response (errors included); a preflight is answered at once.
 */
export function cors(origins: Config['corsOrigins']) {
  const allowOrigin = (origin: string | null): string | undefined => {
    if (origins === '*') return '*'
    return origin && origins.includes(origin) ? origin : undefined
  }
  const allowList = origins !== '*'
  const anyOrigin = Object.freeze({ 'access-control-allow-origin': '*' })
  return {
    /** Shared objects: copy, never mutate. */
    headers(request: Request): Readonly<Record<string, string>> {
      if (!allowList) return anyOrigin
      const origin = allowOrigin(request.headers.get('origin'))
      if (!origin) return {}
      const h: Record<string, string> = { 'access-control-allow-origin': origin }
      if (allowList) h.vary = 'Origin'
      return h
    },
    preflight(request: Request, extra: Record<string, string> = {}): Response {
      return new Response(null, {
        status: 204,
        headers: {
          ...extra,
          ...this.headers(request),
          'access-control-allow-methods': ALLOW_METHODS,
          'access-control-allow-headers': ALLOW_HEADERS,
          'access-control-max-age': '86400',
        },
      })
    },
  }
}
