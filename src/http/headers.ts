/**
 * Security headers on every response. API responses are JSON that no browser
 * should render or frame; the Swagger page needs its own inline bootstrap
 * script and styles, all served from this origin.
 */
const common = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'cross-origin',
}
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
const SWAGGER_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

const api = Object.freeze({ ...common, 'content-security-policy': API_CSP })
const swagger = Object.freeze({ ...common, 'content-security-policy': SWAGGER_CSP })

/** The headers for a path (shared objects: copy, never mutate). */
export function securityHeaders(pathname: string): Readonly<Record<string, string>> {
  return pathname === '/swagger' || pathname.startsWith('/swagger/') ? swagger : api
}
