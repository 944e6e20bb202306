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

/** The headers for a path (shared objects: copy, never mutate). */
export function securityHeaders(pathname: string): Readonly<Record<string, string>> {
  return pathname === '/swagger' || pathname.startsWith('/swagger/') ? swagger : api
}
