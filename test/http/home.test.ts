import { describe, expect, test } from 'bun:test'
import { version } from '../../package.json'
import { createApp } from '../../src/app.ts'
import { createLogger } from '../../src/log.ts'
import { testApp, testConfig } from '../support/app.ts'
import { testDatabase } from '../support/backend.ts'

/**
 * `/` and `/api` say what the server is, to a person (a small HTML page) or
 * a program (JSON), instead of the API's 404. `/` is a page first; `/api`,
 * the API's root, is JSON first; the Accept header picks the other. With
 * the web app on (the default), `/` is its home page for a browser
 * (test/web/), and still this JSON for a program that asks for it.
 */

/** An API-only deployment: the web app off. */
const API_ONLY = { webApp: false }

const HTML = 'text/html; charset=utf-8'
const JSON_TYPE = 'application/json; charset=utf-8'
const ABOUT = { name: 'conduit', version, realworld: '2.0.0', api: '/api', docs: '/swagger', openapi: '/swagger/json', health: '/health' }
/** What Firefox and Chromium send for a page. */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
/** The API's Content-Security-Policy: nothing may load, no script runs. */
const CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

describe('the root pages', () => {
  test.each([
    ['/', undefined, HTML],
    ['/', '*/*', HTML],
    ['/', BROWSER, HTML],
    ['/', 'application/json', JSON_TYPE],
    ['/', 'application/json, text/html;q=0.9', JSON_TYPE],
    ['/', 'text/*, application/json;q=0.5', HTML],
    ['/api', undefined, JSON_TYPE],
    ['/api', '*/*', JSON_TYPE],
    ['/api', BROWSER, HTML],
    ['/api', 'text/html', HTML],
    ['/api', 'text/html;q=0.5, application/json', JSON_TYPE],
    ['/api/', undefined, JSON_TYPE],
    ['/api/', BROWSER, HTML],
    ['/api?from=a-link', undefined, JSON_TYPE],
  ])('GET %s with Accept %p answers 200 %s', async (path, accept, type) => {
    const app = await testApp(API_ONLY)
    const res = await app.request('GET', path, { headers: accept === undefined ? {} : { accept } })
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 200, type })
    expect(res.headers.get('vary')).toBe('Accept')
    if (type === JSON_TYPE) expect(res.body).toEqual(ABOUT)
    else expect(res.text).toStartWith('<!doctype html>')
  })

  test('the page names the API, its documentation, the OpenAPI document, /health, the version and how to point a frontend at the API', async () => {
    const app = await testApp(API_ONLY)
    const res = await app.request('GET', '/', { headers: { host: 'conduit.example:8080' } })
    for (const path of ['/api', '/swagger', '/swagger/json', '/health'])
      expect(res.text).toContain(`<a href="${path}"><code>${path}</code></a>`)
    expect(res.text).toContain(`Conduit ${version}, serving the RealWorld Conduit API 2.0.0`)
    expect(res.text).toContain("set the frontend's API URL to <code>http://conduit.example:8080/api</code>")
  })

  test('the page at /api says where the site is, or that it is off', async () => {
    const on = await testApp()
    const withSite = await on.request('GET', '/api', { headers: { accept: BROWSER } })
    expect(withSite.text).toContain('Its site is at <a href="/"><code>/</code></a>.')
    const off = await testApp(API_ONLY)
    for (const path of ['/', '/api']) {
      const res = await off.request('GET', path, { headers: { accept: BROWSER } })
      expect({ path, off: res.text.includes('Its site is off (<code>WEB_APP=false</code>).') }).toEqual({ path, off: true })
      expect(res.text).not.toContain('Its site is at')
    }
  })

  test('is self-contained and passes the API’s security headers: no script, no style, nothing loaded from anywhere', async () => {
    const app = await testApp(API_ONLY)
    const res = await app.request('GET', '/')
    expect(res.headers.get('content-security-policy')).toBe(CSP)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    for (const banned of ['<script', '<style', 'style=', ' src=', '<link', '<img', '<iframe', '<form', 'url(', 'javascript:']) {
      expect({ banned, found: res.text.toLowerCase().includes(banned) }).toEqual({ banned, found: false })
    }
  })

  test('escapes what it shows from the request: a Host header with markup is text', async () => {
    const app = await testApp(API_ONLY)
    const res = await app.request('GET', '/', { headers: { host: `x"><script>alert(1)</script>'` } })
    expect(res.status).toBe(200)
    expect(res.text).not.toContain('<script>')
    expect(res.text).toContain('http://x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;/api')
  })

  test.each(['/', '/api', '/api/'])('HEAD %s answers 200 with the headers of a GET and no body', async (path) => {
    const app = await testApp(API_ONLY)
    const res = await app.request('HEAD', path)
    expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: '' })
    expect(res.headers.get('content-type')).toBe(path === '/' ? HTML : JSON_TYPE)
  })

  test('with a CORS allow-list, Vary names Origin and Accept', async () => {
    const app = await testApp({ ...API_ONLY, corsOrigins: ['https://frontend.example'] })
    for (const path of ['/', '/api']) {
      const res = await app.request('GET', path, { headers: { origin: 'https://frontend.example' } })
      expect({ path, vary: res.headers.get('vary') }).toEqual({ path, vary: 'Origin, Accept' })
    }
  })

  test('what is not the root stays the API’s 404: a longer name, a path under it, another method', async () => {
    const app = await testApp(API_ONLY)
    for (const [method, path] of [
      ['GET', '/apis'],
      ['GET', '/api/nothing'],
      ['POST', '/'],
      ['POST', '/api'],
    ] as const) {
      const res = await app.request(method, path)
      expect({ method, path, status: res.status, body: res.body }).toEqual({
        method,
        path,
        status: 404,
        body: { errors: { route: ['not found'] } },
      })
    }
  })

  test("the version is package.json's, in the pages and in the OpenAPI document", async () => {
    const app = await testApp(API_ONLY)
    const spec = await app.request('GET', '/swagger/json')
    expect(spec.body.info.version).toBe(version)
    expect((await app.request('GET', '/api')).body.version).toBe(version)
  })

  test('metrics count them under their own route labels, and the access log names their paths', async () => {
    const { store } = await testDatabase()
    const lines: Record<string, unknown>[] = []
    const logger = createLogger('json', 'info', (l) => lines.push(JSON.parse(l)))
    const app = await createApp({ store, config: testConfig({ metricsToken: 'scrape-token' }), logger })
    const send = (method: string, path: string, headers: Record<string, string> = {}) =>
      app.handle(new Request(`http://localhost${path}`, { method, headers }))
    for (const [method, path] of [
      ['GET', '/'],
      ['HEAD', '/'],
      ['GET', '/api'],
      ['GET', '/api/'],
      ['GET', '/api?x=1'],
    ]) {
      expect((await send(method!, path!)).status).toBe(200)
    }
    const scrape = await (await send('GET', '/metrics', { authorization: 'Bearer scrape-token' })).text()
    const counted = scrape.split('\n').filter((l) => l.startsWith('conduit_http_requests_total') && !l.includes('/metrics'))
    expect(counted.sort()).toEqual([
      'conduit_http_requests_total{method="GET",route="/",status="200"} 1',
      'conduit_http_requests_total{method="GET",route="/api",status="200"} 3',
      'conduit_http_requests_total{method="HEAD",route="/",status="200"} 1',
    ])
    await Bun.sleep(20) // (Elysia's afterResponse hooks run after the answer is handed over)
    const logged = lines.filter((l) => l.msg === 'request' && l.path !== '/metrics').map((l) => `${l.method} ${l.path} ${l.status}`)
    expect(logged).toEqual(['GET / 200', 'HEAD / 200', 'GET /api 200', 'GET /api/ 200', 'GET /api 200'])
  })
})
