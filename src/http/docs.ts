import { SwaggerUIRender } from '@elysiajs/openapi/swagger'
import { Elysia } from 'elysia'
// Embedded in the compiled binary: the UI renders with no network at all.
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import { version } from '../../package.json'
import { JSON_CONTENT_TYPE, notFound } from '../errors.ts'
import { openapiDocument, REALWORLD_VERSION } from './openapi.ts'
import type { Route } from './route.ts'

export const DOCS_PAGE = '/swagger'
export const DOCS_SPEC = '/swagger/json'
const ASSETS = '/swagger/assets'
export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8'
/** Every path template the docs answer (metrics count them as one route, `docs`). */
export const DOCS_TEMPLATES = [DOCS_SPEC, DOCS_PAGE, `${ASSETS}/:file`] as const

const assets: Record<string, { path: string; type: string; gzipped?: Promise<Uint8Array> }> = {
  'swagger-ui-bundle.js': { path: bundlePath, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: cssPath, type: 'text/css; charset=utf-8' },
}

/** Whether the client takes gzip (`Accept-Encoding: gzip`, not refused with `;q=0`). */
function acceptsGzip(request: Request): boolean {
  const header = request.headers.get('accept-encoding')
  if (!header) return false
  return header.split(',').some((part) => {
    const [name, ...params] = part.split(';').map((x) => x.trim().toLowerCase())
    return (name === 'gzip' || name === '*') && !params.some((p) => /^q=0(\.0*)?$/.test(p))
  })
}

const info = {
  title: 'Conduit API',
  version,
  // (no quotes or angle brackets: the Swagger page puts this text in an HTML attribute unescaped)
  description:
    `The RealWorld Conduit backend, to the RealWorld API ${REALWORLD_VERSION} contract. ` +
    'Authenticate with the Authorization header: the word Token, a space, then the JWT ' +
    '(Bearer works too). Register or log in, copy the token from the response, and paste it into **Authorize**. ' +
    'Every error has the same envelope: an object errors mapping a key to a list of messages.',
}

/**
 * The Swagger UI page, rendered once. The plugin's own page points at the spec
 * with a RELATIVE url (`swagger/json`), which from `/swagger/` resolves to
 * `/swagger/swagger/json`, and declares `charset=utf8`; this one uses the
 * absolute `/swagger/json` (like the asset URLs) and is served, at `/swagger`
 * and `/swagger/` alike, as `text/html; charset=utf-8`.
 */
const page = SwaggerUIRender(info, {
  url: DOCS_SPEC,
  dom_id: '#swagger-ui',
  cdn: `${ASSETS}/swagger-ui-bundle.js`,
  theme: `${ASSETS}/swagger-ui.css`,
  autoDarkMode: false,
})

/** The page's one inline script (the bootstrap), as the CSP allows it: by its hash, so no other inline script runs. */
export const DOCS_SCRIPT_HASH = `'sha256-${new Bun.CryptoHasher('sha256').update(/<script>([\s\S]*?)<\/script>/.exec(page)![1]!).digest('base64')}'`

/**
 * Swagger UI at /swagger and the OpenAPI 3.1 document at /swagger/json, the
 * latter generated once from the route declarations (openapi.ts). Every
 * response here declares charset=utf-8, like the API's JSON.
 */
export function docs(routes: readonly Route[]) {
  let document: string | undefined
  const json = () => (document ??= JSON.stringify(openapiDocument(routes, info)))
  return (
    new Elysia()
      .get(DOCS_SPEC, () => new Response(json(), { headers: { 'content-type': JSON_CONTENT_TYPE } }))
      // (Elysia matches `/swagger/` to this route too)
      .get(DOCS_PAGE, () => new Response(page, { headers: { 'content-type': HTML_CONTENT_TYPE } }))
      .get(`${ASSETS}/:file`, async ({ params, request }) => {
        // own names only: `constructor` or `__proto__` is no asset
        const asset = Object.hasOwn(assets, params.file) ? assets[params.file] : undefined
        if (!asset) throw notFound('asset')
        const headers = { 'content-type': asset.type, 'cache-control': 'public, max-age=86400', vary: 'Accept-Encoding' }
        if (!acceptsGzip(request)) return new Response(Bun.file(asset.path), { headers })
        // the bundle is 1.4 MB, a quarter of that gzipped: made once, on the first request that takes it
        asset.gzipped ??= Bun.file(asset.path)
          .bytes()
          .then((b) => Bun.gzipSync(b))
        return new Response(await asset.gzipped, { headers: { ...headers, 'content-encoding': 'gzip' } })
      })
  )
}
