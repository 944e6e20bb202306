import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { type Server, api, run, startServer, tempDir, useBinary } from './support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * The endpoint table of the API contract (docs/API.md): method, path, auth, success
 * status, and for routes that take a body its wrapper and required fields.
 */
type Auth = 'none' | 'optional' | 'required' | 'owner'
const ENDPOINTS: { method: string; path: string; auth: Auth; success: number; body?: [string, string[]]; conflict?: true }[] = [
  { method: 'POST', path: '/api/users', auth: 'none', success: 201, body: ['user', ['username', 'email', 'password']], conflict: true },
  { method: 'POST', path: '/api/users/login', auth: 'none', success: 200, body: ['user', ['email', 'password']] },
  { method: 'GET', path: '/api/user', auth: 'required', success: 200 },
  { method: 'PUT', path: '/api/user', auth: 'required', success: 200, body: ['user', []], conflict: true },
  { method: 'GET', path: '/api/profiles/:username', auth: 'optional', success: 200 },
  { method: 'POST', path: '/api/profiles/:username/follow', auth: 'required', success: 200 },
  { method: 'DELETE', path: '/api/profiles/:username/follow', auth: 'required', success: 200 },
  { method: 'GET', path: '/api/articles', auth: 'optional', success: 200 },
  { method: 'GET', path: '/api/articles/feed', auth: 'required', success: 200 },
  { method: 'POST', path: '/api/articles', auth: 'required', success: 201, body: ['article', ['title', 'description', 'body']] },
  { method: 'GET', path: '/api/articles/:slug', auth: 'optional', success: 200 },
  { method: 'PUT', path: '/api/articles/:slug', auth: 'owner', success: 200, body: ['article', []] },
  { method: 'DELETE', path: '/api/articles/:slug', auth: 'owner', success: 204 },
  { method: 'POST', path: '/api/articles/:slug/favorite', auth: 'required', success: 200 },
  { method: 'DELETE', path: '/api/articles/:slug/favorite', auth: 'required', success: 200 },
  { method: 'GET', path: '/api/articles/:slug/comments', auth: 'optional', success: 200 },
  { method: 'POST', path: '/api/articles/:slug/comments', auth: 'required', success: 201, body: ['comment', ['body']] },
  { method: 'DELETE', path: '/api/articles/:slug/comments/:id', auth: 'owner', success: 204 },
  { method: 'GET', path: '/api/tags', auth: 'none', success: 200 },
]

/** `/api/articles/:slug` and `/api/articles/{slug}` (any parameter name) both become `/api/articles/{}`. */
const normalise = (path: string) => path.replace(/:[A-Za-z_]\w*|\{[^}]*\}/g, '{}')
const opKey = (method: string, path: string) => `${method.toUpperCase()} ${normalise(path)}`
const EXPECTED = ENDPOINTS.map((e) => opKey(e.method, e.path)).sort()
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']

const binary = useBinary()
let server: Server
beforeAll(async () => {
  server = await startServer(binary())
}, 30_000)
afterAll(async () => {
  await server?.stop()
})

// the document is arbitrary JSON
type Json = any

/** Follows local `$ref`s (`#/components/...`) to the schema they name. */
function deref(doc: Json, schema: Json, depth = 0): Json {
  if (!schema || typeof schema !== 'object' || typeof schema.$ref !== 'string' || depth > 20) return schema
  const target = schema.$ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: Json, key: string) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
  return deref(doc, target, depth + 1)
}

/** The object properties of a schema, looking through allOf / anyOf / oneOf. */
function propertiesOf(doc: Json, schema: Json): Record<string, Json> {
  const s = deref(doc, schema)
  if (!s || typeof s !== 'object') return {}
  const own = s.properties ?? {}
  const combined = [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])].map((sub: Json) => propertiesOf(doc, sub))
  return Object.assign({}, ...combined, own)
}

skipIf(why.sqlitePass).describe('the OpenAPI document at /swagger/json', () => {
  let doc: Json
  const operation = (method: string, path: string) => {
    for (const [p, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
      if (normalise(p) === normalise(path) && item[method.toLowerCase()]) return item[method.toLowerCase()]
    }
    return undefined
  }

  beforeAll(async () => {
    const res = await api(server.url, 'GET', '/swagger/json')
    expect(res.status).toBe(200)
    doc = res.body
  })

  test('is OpenAPI 3.1', () => {
    expect(typeof doc.openapi).toBe('string')
    expect(doc.openapi).toMatch(/^3\.1(\.\d+)?$/)
    expect(typeof doc.info?.title).toBe('string')
  })

  test('documents exactly the 19 operations of the endpoint table', () => {
    const documented: string[] = []
    for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
      for (const method of HTTP_METHODS) if (item[method]) documented.push(opKey(method, path))
    }
    expect(EXPECTED).toHaveLength(19)
    expect(documented.sort()).toEqual(EXPECTED)
  })

  test('has a Token security scheme (Authorization header), required or optional per route', () => {
    expect(doc.components?.securitySchemes?.Token).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' })
    for (const e of ENDPOINTS) {
      const security: Json[] = operation(e.method, e.path)?.security ?? doc.security ?? []
      const usesToken = security.some((s) => s && 'Token' in s)
      const anonymousAllowed = security.length === 0 || security.some((s) => s && Object.keys(s).length === 0)
      const expected = {
        none: { usesToken: false, anonymousAllowed: true },
        optional: { usesToken: true, anonymousAllowed: true },
        required: { usesToken: true, anonymousAllowed: false },
        owner: { usesToken: true, anonymousAllowed: false },
      }[e.auth]
      expect({ op: `${e.method} ${e.path}`, usesToken, anonymousAllowed }).toEqual({ op: `${e.method} ${e.path}`, ...expected })
    }
  })

  test('describes the JSON request body of every POST / PUT route that takes one', () => {
    for (const e of ENDPOINTS.filter((x) => x.body)) {
      const [wrapper, fields] = e.body!
      const op = operation(e.method, e.path)
      const body = deref(doc, op?.requestBody)
      const schema = body?.content?.['application/json']?.schema
      expect({ op: `${e.method} ${e.path}`, hasSchema: !!schema }).toEqual({ op: `${e.method} ${e.path}`, hasSchema: true })
      const inner = propertiesOf(doc, propertiesOf(doc, schema)[wrapper])
      expect({ op: `${e.method} ${e.path}`, wrapper, fields: fields.filter((f) => !(f in inner)) }).toEqual({
        op: `${e.method} ${e.path}`,
        wrapper,
        fields: [],
      })
      expect(Object.keys(inner).length).toBeGreaterThan(0)
    }
  })

  test('documents the success status and the 4xx answers of each route', () => {
    for (const e of ENDPOINTS) {
      const op = operation(e.method, e.path)
      const responses: Record<string, Json> = op?.responses ?? {}
      const codes = Object.keys(responses)
      const clientErrors = codes.filter((c) => /^4(\d\d|XX)$/.test(c))
      const want = new Set<string>()
      if (e.auth === 'required' || e.auth === 'owner') want.add('401')
      if (e.auth === 'owner') want.add('403')
      if (e.body) want.add('422')
      if (e.path.includes(':')) want.add('404')
      if (e.conflict) want.add('409')
      const name = `${e.method} ${e.path}`
      expect({ name, success: codes.includes(String(e.success)), missing4xx: [...want].filter((c) => !codes.includes(c)) }).toEqual({
        name,
        success: true,
        missing4xx: [],
      })
      if (e.path !== '/api/tags') expect({ name, any4xx: clientErrors.length > 0 }).toEqual({ name, any4xx: true })
      for (const c of clientErrors) expect(typeof deref(doc, responses[c])?.description).toBe('string')
    }
  })
})

// ------------------------------------------------------------- Swagger UI

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
const requireChromium = process.env.REQUIRE_CHROMIUM === '1'

/** http(s) URLs that point anywhere but this machine's 127.0.0.1. */
const foreignUrls = (text: string) =>
  [...text.matchAll(/(?:https?:)?\/\/[^\s"'<>()`]+/gi)]
    .map((m) => m[0])
    .filter((u) => /^(https?:)?\/\/[a-z0-9[]/i.test(u))
    .filter((u) => !/^(https?:)?\/\/127\.0\.0\.1(:\d+)?(\/|$)/i.test(u))

/** src / href attribute values of a page. */
const references = (html: string) => [...html.matchAll(/\s(?:src|href|action)\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]!)

skipIf(why.sqlitePass).describe('Swagger UI at /swagger', () => {
  test('is an HTML page whose assets are all served by the binary itself (no CDN)', async () => {
    const page = await fetch(`${server.url}/swagger`, { signal: AbortSignal.timeout(10_000) })
    const html = await page.text()
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type') ?? '').toContain('text/html')
    expect(html).toContain('<html')
    expect(foreignUrls(html)).toEqual([])

    const assets = [...html.matchAll(/<(?:script|link)\b[^>]*\s(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!)
    expect(assets.length).toBeGreaterThanOrEqual(2)
    for (const asset of assets) {
      const url = new URL(asset, `${server.url}/swagger`)
      expect(url.origin).toBe(server.url)
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000) })
      const body = await res.arrayBuffer()
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 })
      expect(body.byteLength).toBeGreaterThan(1_000)
    }
  }, 30_000)

  test('its assets go gzipped to a client that takes gzip, the same bytes once unzipped; as they are to others', async () => {
    for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const url = `${server.url}/swagger/assets/${file}`
      const get = (encoding: string) =>
        fetch(url, { headers: { 'accept-encoding': encoding }, decompress: false, signal: AbortSignal.timeout(10_000) })
      const plain = await get('identity')
      const plainBytes = new Uint8Array(await plain.arrayBuffer())
      expect([plain.headers.get('content-encoding'), plain.headers.get('vary')]).toEqual([null, 'Accept-Encoding'])
      for (const encoding of ['gzip, deflate, br', 'br;q=1, gzip;q=0.5']) {
        const zipped = await get(encoding)
        expect({ file, encoding, got: zipped.headers.get('content-encoding') }).toEqual({ file, encoding, got: 'gzip' })
        const bytes = new Uint8Array(await zipped.arrayBuffer())
        expect(bytes.byteLength).toBeLessThan(plainBytes.byteLength / 2)
        expect(Bun.gunzipSync(bytes)).toEqual(plainBytes)
      }
      expect((await get('gzip;q=0')).headers.get('content-encoding')).toBeNull()
    }
  }, 30_000)

  test.each(['/swagger', '/swagger/'])('%s: the spec URL of the page resolves to the OpenAPI document', async (path) => {
    const page = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(10_000) })
    const html = await page.text()
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    // the options the page hands to Swagger UI: JSON in the bootstrap script
    const options = html.match(/SwaggerUIBundle\((\{[\s\S]*?\})\)/)?.[1]
    expect(options).toBeDefined()
    const specUrl: unknown = JSON.parse(options!).url
    expect(typeof specUrl).toBe('string')
    // resolved as the browser does: against the address the page was finally served from
    const spec = new URL(specUrl as string, page.url)
    expect(spec.origin).toBe(server.url)
    const res = await fetch(spec, { signal: AbortSignal.timeout(10_000) })
    expect({ spec: spec.pathname, status: res.status }).toEqual({ spec: spec.pathname, status: 200 })
    expect(((await res.json()) as { openapi?: string }).openapi).toMatch(/^3\.1/)
  })

  test('every response outside /api declares charset=utf-8', async () => {
    const paths = [
      '/swagger',
      '/swagger/',
      '/swagger/json',
      '/swagger/assets/swagger-ui-bundle.js',
      '/swagger/assets/swagger-ui.css',
      '/swagger/assets/missing.js',
      '/health',
      '/ready',
      '/no-such-page',
    ]
    for (const path of paths) {
      const res = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(10_000) })
      await res.arrayBuffer()
      const type = res.headers.get('content-type') ?? ''
      expect({ path, charset: /;\s*charset=utf-8$/i.test(type), type }).toEqual({ path, charset: true, type })
    }
  })

  // REQUIRE_CHROMIUM=1 (CI) makes a missing Chromium a failure instead
  skipIf(!hasChromium && !requireChromium && `chromium missing (${CHROMIUM})`).test(
    'renders all 19 operations in headless Chromium with no network, at /swagger and at /swagger/',
    async () => {
      if (!hasChromium) throw new Error(`REQUIRE_CHROMIUM=1 but ${CHROMIUM} does not exist`)
      for (const page of ['/swagger', '/swagger/']) await rendersEveryOperation(page)
    },
    150_000,
  )
})

/** Loads `page` in headless Chromium (only 127.0.0.1 reachable) and checks the operations it renders. */
async function rendersEveryOperation(page: string): Promise<void> {
  const profile = tempDir('conduit-e2e-chromium-')
  const result = await run(
    [
      CHROMIUM,
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      // every name resolves to nothing: only 127.0.0.1 is reachable
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      '--virtual-time-budget=10000',
      '--dump-dom',
      `${server.url}${page}`,
    ],
    { cwd: profile, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: profile }, timeoutMs: 60_000 },
  )
  const dom = result.stdout
  expect({ page, code: result.code, hasDom: dom.includes('<html') }).toEqual({ page, code: 0, hasDom: true })

  const rendered = [...dom.matchAll(/class="opblock opblock-(get|post|put|delete|patch)\b[^"]*"[\s\S]*?data-path="([^"]*)"/g)].map((m) =>
    opKey(m[1]!, m[2]!.replace(/&amp;/g, '&')),
  )
  const opblocks = dom.match(/class="opblock opblock-[a-z]+\b/g) ?? []
  expect({ page, operations: opblocks.length }).toEqual({ page, operations: 19 })
  expect(rendered.sort()).toEqual(EXPECTED)
  for (const e of ENDPOINTS) expect(dom).toContain(`<span class="opblock-summary-method">${e.method}</span>`)

  // nothing in the rendered page points off this machine (SVG namespaces are names, not requests)
  expect(references(dom).flatMap(foreignUrls)).toEqual([])
}
