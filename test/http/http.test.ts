import { describe, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../support/app.ts'
import { registerUser } from '../support/fixtures.ts'
import { SESSION_COOKIE } from '../../src/web/session.ts'

const JSON_TYPE = 'application/json; charset=utf-8'
const ORIGIN = 'https://frontend.example'

const headerList = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase())

/** Sends a raw request straight to a fresh app on the same database (streamed bodies, no Content-Length). */
async function rawRequest(app: TestApp, init: RequestInit & { path: string }) {
  const res = await app.app.handle(new Request(`http://localhost${init.path}`, init))
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined }
}

const streamOf = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode(text)
      // several chunks, like a chunked upload
      for (let i = 0; i < bytes.length; i += 1000) controller.enqueue(bytes.slice(i, i + 1000))
      controller.close()
    },
  })

describe('unknown routes', () => {
  test.each([
    ['GET', '/api/nope'],
    // (`/api` itself is a page about the API: test/http/home.test.ts)
    ['GET', '/api/users/nope/deeper'],
    ['POST', '/api/user'],
    ['PATCH', '/api/user'],
  ])('%s %s answers 404 in the error envelope', async (method, path) => {
    const app = await testApp()
    const res = await app.request(method, path)
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.body).toEqual({ errors: { route: ['not found'] } })
  })

  test.each(['/nope', '/apis'])(
    'GET %s outside the API: the web app\'s page "Not found" (404), or with WEB_APP=false the envelope',
    async (path) => {
      const page = await (await testApp()).request('GET', path)
      expect(page.status).toBe(404)
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(page.text).toContain('<h1>Not found</h1>')
      const api = await (await testApp({ webApp: false })).request('GET', path)
      expect(api.status).toBe(404)
      expect(api.headers.get('content-type')).toBe(JSON_TYPE)
      expect(api.body).toEqual({ errors: { route: ['not found'] } })
    },
  )
})

describe('repeated slashes in the path', () => {
  test('are one, as behind nginx: a client whose API URL ends in / reaches every route; the query is left as sent', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const made = await app.request('POST', '/api//articles', {
      token: user.token,
      body: { article: { title: 'slashes', description: 'd', body: 'b', tagList: ['a//b'] } },
    })
    expect(made.status).toBe(201)
    for (const path of ['/api//tags', '//api/tags', '/api///tags//']) {
      const res = await app.request('GET', path)
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 200, body: { tags: ['a//b'] } })
    }
    expect((await app.request('GET', '/api//articles//slashes', { token: user.token })).body.article.slug).toBe('slashes')
    expect((await app.request('GET', '/api//articles?tag=a//b')).body.articlesCount).toBe(1)
    expect((await app.request('GET', '/api/articles?tag=a/b')).body.articlesCount).toBe(0)
  })
})

describe('CORS', () => {
  test.each([
    '/api/users',
    '/api/users/login',
    '/api/user',
    '/api/profiles/jake/follow',
    '/api/articles/some-slug/comments/1',
    '/api/no/such/route',
  ])('answers an OPTIONS preflight on %s with 204 and the CORS headers', async (path) => {
    const app = await testApp()
    const res = await app.request('OPTIONS', path, {
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization, content-type, x-requested-with',
      },
    })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const methods = headerList(res.headers.get('access-control-allow-methods'))
    for (const m of ['get', 'post', 'put', 'delete']) expect(methods).toContain(m)
    const headers = headerList(res.headers.get('access-control-allow-headers'))
    for (const h of ['authorization', 'content-type', 'x-requested-with', 'x-request-id']) expect(headers).toContain(h)
  })

  test("allows the headers a client's libraries add (traceparent, Cache-Control); a malformed list gets the fixed one", async () => {
    const app = await testApp()
    const preflight = (asked: string) =>
      app.request('OPTIONS', '/api/articles', {
        headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': asked },
      })
    const allowed = headerList(
      (await preflight('authorization,traceparent,sentry-trace,cache-control')).headers.get('access-control-allow-headers'),
    )
    for (const h of ['authorization', 'traceparent', 'sentry-trace', 'cache-control', 'x-request-id']) expect(allowed).toContain(h)
    const fixed = headerList((await preflight('traceparent, not a: name')).headers.get('access-control-allow-headers'))
    expect(fixed).not.toContain('traceparent')
    expect(fixed).toContain('authorization')
  })

  test('answers a preflight without touching the route: no 401 on an authenticated route', async () => {
    const app = await testApp()
    const res = await app.request('OPTIONS', '/api/user', { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
    expect(res.status).toBe(204)
  })

  test('puts Access-Control-Allow-Origin on a successful response', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('GET', '/api/user', { token: user.token, headers: { origin: ORIGIN } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    // browser code may read the id of the request (a cached answer's headers are checked alike in test/http/dispatchers.test.ts)
    expect(res.headers.get('access-control-expose-headers')).toBe('X-Request-Id, Retry-After, WWW-Authenticate')
  })

  test('puts Access-Control-Allow-Origin on a 201', async () => {
    const app = await testApp()
    const res = await app.request('POST', '/api/users', {
      headers: { origin: ORIGIN },
      body: { user: { username: 'corsy', email: 'corsy@example.com', password: 'password123' } },
    })
    expect(res.status).toBe(201)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  })

  test.each([
    ['a 400', (app: TestApp) => app.request('POST', '/api/users', { body: '{', headers: { origin: ORIGIN } }), 400],
    ['a 401', (app: TestApp) => app.request('GET', '/api/user', { headers: { origin: ORIGIN } }), 401],
    ['a 404', (app: TestApp) => app.request('GET', '/api/profiles/nobody', { headers: { origin: ORIGIN } }), 404],
    ['a 404 route', (app: TestApp) => app.request('GET', '/api/nope', { headers: { origin: ORIGIN } }), 404],
    ['a 422', (app: TestApp) => app.request('POST', '/api/users', { body: { user: {} }, headers: { origin: ORIGIN } }), 422],
  ])('puts Access-Control-Allow-Origin on %s', async (_what, send, status) => {
    const app = await testApp()
    const res = await send(app)
    expect(res.status).toBe(status)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('puts Access-Control-Allow-Origin on a 413', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    const res = await app.request('POST', '/api/users', {
      body: JSON.stringify({ user: {}, pad: 'x'.repeat(4096) }),
      headers: { origin: ORIGIN, 'content-length': String(4096 + 30) },
    })
    expect(res.status).toBe(413)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('with an origin allow-list, echoes an allowed origin and omits the header for others', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const allowed = await app.request('OPTIONS', '/api/user', { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    const get = await app.request('GET', '/api/profiles/nobody', { headers: { origin: ORIGIN } })
    expect(get.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(get.headers.get('access-control-expose-headers')).toBe('X-Request-Id, Retry-After, WWW-Authenticate')
    const other = await app.request('GET', '/api/profiles/nobody', { headers: { origin: 'https://evil.example' } })
    expect(other.status).toBe(404)
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    // a listed origin may send credentials (clients built withCredentials); no other origin, and never with `*`
    expect([allowed, get, other].map((r) => r.headers.get('access-control-allow-credentials'))).toEqual(['true', 'true', null])
    const any = await (await testApp()).request('GET', '/api/articles', { headers: { origin: ORIGIN } })
    expect(any.headers.get('access-control-allow-credentials')).toBeNull()
  })

  test('the API reads no cookie: a request with a session cookie and no Authorization is anyone', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const user = await registerUser(app)
    // the site's own session cookie, as it is named over HTTP and over TLS, and names other servers use
    for (const cookie of [SESSION_COOKIE, `__Host-${SESSION_COOKIE}`, 'token', 'jwt'].map((name) => `${name}=${user.token}`)) {
      const res = await app.request('GET', '/api/user', { headers: { origin: ORIGIN, cookie } })
      expect({ cookie, status: res.status }).toEqual({ cookie, status: 401 })
    }
  })

  // the answer depends on the Origin: a shared cache must key it by the Origin (or its absence)
  const OTHER = 'https://elsewhere.example'
  const asSent = (origin: string | undefined): Record<string, string> => (origin ? { origin } : {})

  test('with an origin allow-list, every answer varies on Origin: allowed, other or none, fast path (cached) or not', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const user = await registerUser(app)
    for (const [what, method, path, status, token] of [
      ['the article list (answered before the framework, then from its cache)', 'GET', '/api/articles', 200],
      ['the same list, cached by now', 'GET', '/api/articles', 200],
      ['a signed-in read', 'GET', '/api/user', 200, user.token],
      ['a 404', 'GET', '/api/profiles/nobody', 404],
      ['a 401', 'GET', '/api/user', 401],
      ['a 422', 'POST', '/api/users', 422],
      ['a preflight', 'OPTIONS', '/api/user', 204],
    ] as const) {
      for (const origin of [ORIGIN, OTHER, undefined]) {
        const res = await app.request(method, path, {
          token,
          headers: { ...asSent(origin), ...(method === 'OPTIONS' ? { 'access-control-request-method': 'GET' } : {}) },
          ...(method === 'POST' ? { body: { user: {} } } : {}),
        })
        expect({
          what,
          origin,
          status: res.status,
          vary: res.headers.get('vary'),
          allow: res.headers.get('access-control-allow-origin'),
        }).toEqual({
          what,
          origin,
          status,
          // a preflight's allowed headers echo the ones asked for
          vary: method === 'OPTIONS' ? 'Origin, Access-Control-Request-Headers' : 'Origin',
          allow: origin === ORIGIN ? ORIGIN : null,
        })
      }
    }
  })

  test('with any origin (*), no answer varies on Origin (a preflight on the headers asked for)', async () => {
    const app = await testApp()
    for (const origin of [ORIGIN, undefined]) {
      for (const [method, path] of [
        ['GET', '/api/articles'],
        ['GET', '/api/articles'],
        ['GET', '/api/profiles/nobody'],
        ['OPTIONS', '/api/user'],
      ] as const) {
        const res = await app.request(method, path, { headers: asSent(origin) })
        expect({ method, path, origin, vary: res.headers.get('vary'), allow: res.headers.get('access-control-allow-origin') }).toEqual({
          method,
          path,
          origin,
          vary: method === 'OPTIONS' ? 'Access-Control-Request-Headers' : null,
          allow: '*',
        })
      }
    }
  })
})

describe('Content-Type of responses', () => {
  test('is application/json; charset=utf-8 on 200 and 201', async () => {
    const app = await testApp()
    const created = await app.request('POST', '/api/users', {
      body: { user: { username: 'typed', email: 'typed@example.com', password: 'password123' } },
    })
    expect(created.status).toBe(201)
    expect(created.headers.get('content-type')).toBe(JSON_TYPE)
    const me = await app.request('GET', '/api/user', { token: created.body.user.token })
    expect(me.status).toBe(200)
    expect(me.headers.get('content-type')).toBe(JSON_TYPE)
    const profile = await app.request('GET', '/api/profiles/typed')
    expect(profile.status).toBe(200)
    expect(profile.headers.get('content-type')).toBe(JSON_TYPE)
  })

  test.each([
    ['400', (app: TestApp) => app.request('POST', '/api/users/login', { body: 'nope' }), 400],
    ['401', (app: TestApp) => app.request('PUT', '/api/user', { body: { user: {} } }), 401],
    [
      '401 on login',
      (app: TestApp) => app.request('POST', '/api/users/login', { body: { user: { email: 'a@b.co', password: 'password123' } } }),
      401,
    ],
    ['404', (app: TestApp) => app.request('DELETE', '/api/nothing'), 404],
    ['422', (app: TestApp) => app.request('POST', '/api/users/login', { body: { user: {} } }), 422],
  ])('is application/json; charset=utf-8 on a %s', async (_what, send, status) => {
    const app = await testApp()
    const res = await send(app)
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
  })

  test('accepts a JSON request whatever its Content-Type says', async () => {
    const app = await testApp()
    const res = await app.request('POST', '/api/users', {
      body: { user: { username: 'formy', email: 'formy@example.com', password: 'password123' } },
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.status).toBe(201)
    expect(res.body.user.username).toBe('formy')
  })
})

describe('compressed request bodies', () => {
  const user = (name: string) => ({ user: { username: name, email: `${name}@example.com`, password: 'password123' } })

  test.each([
    ['gzip', (b: string) => Bun.gzipSync(b)],
    // declared but not applied: the header alone decides, the body is not guessed at
    ['br', (b: string) => b],
    ['identity, gzip', (b: string) => Bun.gzipSync(b)],
  ])('a body sent with Content-Encoding: %s answers 415 and registers nobody', async (coding, encode) => {
    const app = await testApp()
    const res = await rawRequest(app, {
      path: '/api/users',
      method: 'POST',
      body: encode(JSON.stringify(user('squeezed'))),
      headers: { 'content-type': 'application/json', 'content-encoding': coding },
    })
    expect(res.status).toBe(415)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.headers.get('accept-encoding')).toBe('identity')
    expect(res.body).toEqual({ errors: { body: [`is encoded (${coding.replace('identity, ', '')}); send it unencoded`] } })
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(0)
  })

  test('Content-Encoding: identity is no coding: the body is read', async () => {
    const app = await testApp()
    const res = await rawRequest(app, {
      path: '/api/users',
      method: 'POST',
      body: JSON.stringify(user('plain')),
      headers: { 'content-type': 'application/json', 'content-encoding': 'Identity' },
    })
    expect(res.status).toBe(201)
    expect(res.body.user.username).toBe('plain')
  })
})

describe('JSON bodies', () => {
  // a field's value with an own `toString: {}` made the framework's error formatting throw (500); an escape must not
  // get one past the check
  test.each([
    ['as is', '"toString"'],
    ['escaped', '"to\\u0053tring"'],
    ['escaped, another', '"\\u0063onstructor"'],
  ])('a key that shadows an Object method, %s, is dropped like any unknown field', async (_how, key) => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('POST', '/api/articles', {
      token: user.token,
      body: `{"article":{"title":{${key}:{}},"description":"d","body":"b",${key}:{}}}`,
    })
    expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { errors: { title: ['must be a string'] } } })
  })

  test('an escaped lone surrogate is stored as U+FFFD, in a value at any depth', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('POST', '/api/articles', {
      token: user.token,
      body: '{"__proto__":"\\ud800","article":{"title":"t\\ud800","description":"d","body":"b","tagList":["x\\udfff"],"__proto__":{"x":"\\ud800"}}}',
    })
    expect(res.status).toBe(201)
    expect(res.body.article).toMatchObject({ title: 't\uFFFD', tagList: ['x\uFFFD'] })
  })
})

describe('request body limit', () => {
  const user = (name: string) => ({ username: name, email: `${name}@example.com`, password: 'password123' })

  test('answers 413 in the envelope when Content-Length exceeds the limit, and registers nobody', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    const body = JSON.stringify({ user: user('toolarge'), pad: 'x'.repeat(3000) })
    const res = await app.request('POST', '/api/users', { body, headers: { 'content-length': String(body.length) } })
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.body).toEqual({ errors: { body: [expect.stringContaining('too large')] } })
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(0)
  })

  test('answers 413 for a body over the limit sent without Content-Length (streamed)', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    const body = JSON.stringify({ user: user('streamed'), pad: 'x'.repeat(3000) })
    const res = await rawRequest(app, {
      path: '/api/users',
      method: 'POST',
      body: streamOf(body),
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(413)
    expect(res.body).toEqual({ errors: { body: [expect.stringContaining('too large')] } })
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(0)
  })

  test('answers 413 for a body over the limit sent by the test client (no explicit Content-Length)', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    const res = await app.request('POST', '/api/users', { body: { user: user('implicit'), pad: 'x'.repeat(3000) } })
    expect(res.status).toBe(413)
    expect(res.body).toEqual({ errors: { body: [expect.stringContaining('too large')] } })
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(0)
  })

  test('counts the limit in bytes, not characters', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    // 1,100 characters, 2,200 bytes in UTF-8
    const body = JSON.stringify({ user: user('bytes'), pad: 'é'.repeat(1100) })
    expect(body.length).toBeLessThan(2048)
    const bytes = new TextEncoder().encode(body).length
    expect(bytes).toBeGreaterThan(2048)
    const res = await app.request('POST', '/api/users', { body, headers: { 'content-length': String(bytes) } })
    expect(res.status).toBe(413)
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(0)
  })

  test('accepts a body just under the limit', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    const base = JSON.stringify({ user: user('fits'), pad: '' })
    const body = JSON.stringify({ user: user('fits'), pad: 'x'.repeat(2048 - base.length) })
    expect(body.length).toBe(2048)
    const res = await app.request('POST', '/api/users', { body, headers: { 'content-length': String(body.length) } })
    expect(res.status).toBe(201)
  })

  test('an oversized update answers 413 and changes nothing', async () => {
    const app = await testApp({ bodyLimitBytes: 2048 })
    const jake = await registerUser(app)
    const body = JSON.stringify({ user: { bio: 'b'.repeat(3000) } })
    const res = await app.request('PUT', '/api/user', { token: jake.token, body, headers: { 'content-length': String(body.length) } })
    expect(res.status).toBe(413)
    expect(res.body).toEqual({ errors: { body: [expect.stringContaining('too large')] } })
    const me = await app.request('GET', '/api/user', { token: jake.token })
    expect(me.body.user.bio).toBeNull()
  })

  test('defaults to 1 MiB: a body just under it is read, one over it is a 413', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const under = JSON.stringify({ user: { bio: 'fits' }, pad: 'x'.repeat(1024 * 1024 - 100) })
    const ok = await app.request('PUT', '/api/user', {
      token: jake.token,
      body: under,
      headers: { 'content-length': String(under.length) },
    })
    expect(ok.status).toBe(200)
    expect(ok.body.user.bio).toBe('fits')
    const over = JSON.stringify({ user: { bio: 'too big' }, pad: 'x'.repeat(1024 * 1024) })
    const big = await app.request('PUT', '/api/user', { token: jake.token, body: over, headers: { 'content-length': String(over.length) } })
    expect(big.status).toBe(413)
    expect(big.body).toEqual({ errors: { body: [expect.stringContaining('too large')] } })
    const me = await app.request('GET', '/api/user', { token: jake.token })
    expect(me.body.user.bio).toBe('fits')
  })
})

describe('422 bodies', () => {
  // words from Elysia's and TypeBox's own error bodies, which quote the schema and the value
  const FRAMEWORK = /Expected|schema|summary|"type"|"value"|"property"|"found"|"on"\s*:|errors"\s*:\s*\[/

  test.each([
    ['POST', '/api/users', { user: { username: 1, email: [], password: {} } }],
    ['POST', '/api/users', { user: { username: '', email: 'x', password: 'y' } }],
    ['POST', '/api/users', { nothing: true }],
    ['POST', '/api/users', [1, 2]],
    ['POST', '/api/users/login', { user: { email: 5 } }],
    ['POST', '/api/users/login', JSON.stringify('just a string')],
    ['PUT', '/api/user', { user: { bio: 5, image: 'ftp://x', email: 'x' } }],
    ['POST', '/api/articles', { article: { title: 5, tagList: 'x' } }],
    ['POST', '/api/articles', { nope: 1 }],
    ['GET', '/api/articles?limit=abc&offset=-1', undefined],
  ])('%s %s with an invalid body answers our own 422, no framework text', async (method, path, body) => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await app.request(method, path, { token: jake.token, body })
    expect(res.status).toBe(422)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.text).not.toMatch(FRAMEWORK)
    expect(Object.keys(res.body)).toEqual(['errors'])
    const entries = Object.entries(res.body.errors as Record<string, unknown>)
    expect(entries.length).toBeGreaterThan(0)
    for (const [key, messages] of entries) {
      expect(key.length).toBeGreaterThan(0)
      expect(Array.isArray(messages)).toBe(true)
      for (const m of messages as unknown[]) expect(typeof m).toBe('string')
    }
  })
})

describe('unexpected server errors', () => {
  test('answer 500 in the envelope without SQL or a stack trace', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    await app.db.run('DROP TABLE follows')
    const res = await app.request('GET', `/api/profiles/${jake.username}`, {
      token: jake.token,
      headers: { origin: ORIGIN },
      allow500: true,
    })
    expect(res.status).toBe(500)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.body).toEqual({ errors: { server: ['internal error'] } })
    expect(res.text).not.toMatch(/follows|SQL|sqlite|at \/|\.ts:/i)
  })
})
