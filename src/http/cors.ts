import type { Config } from '../config.ts'

const ALLOW_METHODS = 'GET, POST, PUT, DELETE, OPTIONS'
const ALLOW_HEADERS = 'Authorization, Content-Type, X-Requested-With, Accept, Origin'

/**
 * CORS per the contract: any origin by default, or an allow-list. The headers
 * go on every response (errors included); a preflight is answered at once.
 */
export function cors(origins: Config['corsOrigins']) {
  const anyOrigin = Object.freeze({ 'access-control-allow-origin': '*' })
  return {
    /** Shared objects: copy, never mutate. */
    headers(request: Request): Readonly<Record<string, string>> {
      if (origins === '*') return anyOrigin
      const origin = request.headers.get('origin')
      if (!origin || !origins.includes(origin)) return {}
      return { 'access-control-allow-origin': origin, vary: 'Origin' }
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
