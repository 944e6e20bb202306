import { Elysia } from 'elysia'
import { version } from '../../package.json'
import { JSON_CONTENT_TYPE } from '../errors.ts'
import { DOCS_PAGE, DOCS_SPEC, HTML_CONTENT_TYPE } from './docs.ts'
import { REALWORLD_VERSION } from './openapi.ts'
import { API_PREFIX, HEALTH_PATH as HEALTH } from './url.ts'

/** What a program reads at `/` or `/api`: where the API and its description are. */
const ABOUT = JSON.stringify({
  name: 'conduit',
  version,
  realworld: REALWORLD_VERSION,
  api: API_PREFIX,
  docs: DOCS_PAGE,
  openapi: DOCS_SPEC,
  health: HEALTH,
})

/**
 * How much an Accept header wants `type` (its q, 0 to 1): the most specific
 * range that names it (`text/html`, then `text/*`, then `*\/*`), as RFC 9110
 * 12.5.1 says; no header at all accepts anything.
 */
function quality(accept: string | null, type: string): number {
  if (accept === null || accept.trim() === '') return 1
  const [major] = type.split('/')
  let best = -1
  let q = 0
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    const rank = range === type ? 3 : range === `${major}/*` ? 2 : range === '*/*' ? 1 : 0
    if (rank <= best || rank === 0) continue
    best = rank
    const given = params.find((p) => p.startsWith('q='))
    const value = given === undefined ? 1 : Number(given.slice(2))
    q = Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0
  }
  return q
}

/** Whether to answer HTML: what the client prefers, or `byDefault` when it likes HTML and JSON alike (curl's `*\/*`). */
export function wantsHtml(accept: string | null, byDefault: boolean): boolean {
  const html = quality(accept, 'text/html')
  const json = quality(accept, 'application/json')
  return html === json ? byDefault : html > json
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/**
 * The page a person meets at `/api` (and at `/` with the site off): no
 * script, no style, no resource of any kind, so the API's own
 * Content-Security-Policy (default-src 'none') fits it. The Host the browser
 * sent is shown escaped.
 */
function page(host: string, webApp: boolean): string {
  const api = escapeHtml(`http://${host}${API_PREFIX}`)
  const link = (path: string, what: string) => `<li><a href="${path}"><code>${path}</code></a>: ${what}</li>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conduit API</title>
</head>
<body>
<h1>Conduit</h1>
<p>This is Conduit ${escapeHtml(version)}, serving the RealWorld Conduit API ${REALWORLD_VERSION}. ${webApp ? 'Its site is at <a href="/"><code>/</code></a>.' : 'Its site is off (<code>WEB_APP=false</code>).'}</p>
<ul>
${link(API_PREFIX, 'the API, in JSON: users, profiles, articles, comments, tags')}
${link(DOCS_PAGE, 'its documentation (Swagger UI), where every route can be tried')}
${link(DOCS_SPEC, 'the OpenAPI document')}
${link(HEALTH, 'answers 200 while the service runs')}
</ul>
<h2>A frontend</h2>
<p>Any RealWorld frontend works with it: set the frontend's API URL to <code>${api}</code> (this server's address followed by <code>${API_PREFIX}</code>). Every origin may call the API unless <code>CORS_ORIGINS</code> says otherwise.</p>
</body>
</html>
`
}

/**
 * `/` and `/api` (and `/api/`): HTML for a browser, JSON for a program. `/`
 * is a page first, `/api` the API's root and so JSON first; each gives the
 * other when the Accept header prefers it. They answer without the database.
 */
export function home(webApp: boolean) {
  const answer = ({ request, set }: { request: Request; set: { headers: Record<string, string | number> } }, htmlByDefault: boolean) => {
    const html = wantsHtml(request.headers.get('accept'), htmlByDefault)
    // the answer depends on Accept, so a shared cache keeps one per value (beside CORS's Vary: Origin)
    set.headers.vary = set.headers.vary ? `${set.headers.vary}, Accept` : 'Accept'
    const host = request.headers.get('host') ?? new URL(request.url).host
    return new Response(html ? page(host, webApp) : ABOUT, { headers: { 'content-type': html ? HTML_CONTENT_TYPE : JSON_CONTENT_TYPE } })
  }
  return new Elysia().get('/', (c) => answer(c, true)).get(API_PREFIX, (c) => answer(c, false))
}
