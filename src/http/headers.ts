import { DOCS_SCRIPT_HASH } from './docs.ts'

/**
 * Security headers of the API's responses and the docs'. API responses are
 * JSON that no browser should render or frame; the Swagger page runs its own
 * inline bootstrap script (allowed by its hash alone) and inline styles, all
 * served from this origin. The site's pages have their own (src/web/index.ts).
 */
const common = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'cross-origin',
}
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
const SWAGGER_CSP =
  `default-src 'self'; script-src 'self' ${DOCS_SCRIPT_HASH}; style-src 'self' 'unsafe-inline'; ` +
  "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

const api = Object.freeze({ ...common, 'content-security-policy': API_CSP })
const swagger = Object.freeze({ ...common, 'content-security-policy': SWAGGER_CSP })
// answers that carry a token (registration, login, the current user): no cache, the browser's or a proxy's, keeps them
const withToken = Object.freeze({ ...api, 'cache-control': 'no-store' })
const TOKEN_PATHS = new Set(['/api/users', '/api/users/login', '/api/user'].flatMap((p) => [p, `${p}/`]))

/** The headers for a path (shared objects: copy, never mutate). */
export function securityHeaders(pathname: string): Readonly<Record<string, string>> {
  if (TOKEN_PATHS.has(pathname)) return withToken
  return pathname === '/swagger' || pathname.startsWith('/swagger/') ? swagger : api
}
