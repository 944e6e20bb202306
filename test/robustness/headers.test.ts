import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import type { Config } from '../../src/config.ts'
import { api, register, type Server, startServer, useBinary } from '../e2e/support.ts'
import { type TestApp, type TestResponse, testApp } from '../support/app.ts'
import { registerUser } from '../support/fixtures.ts'

/**
 * Security headers on every response (API responses, errors, 404s, the
 * Swagger page and its assets) and the login throttle: per (account, address)
 * pair, per account across addresses, never on registration, the client
 * address behind a trusted proxy, and switched off.
 */

const cheap = { passwordHash: { memoryCost: 256, timeCost: 1 } }
const JSON_TYPE = 'application/json; charset=utf-8'
const THROTTLED = { errors: { login: ['too many failed attempts; try again later'] } }
const WRONG = { errors: { credentials: ['invalid'] } }

/** The directives of a Content-Security-Policy header: name -> sources. */
function csp(header: string | null): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/)
    if (name) out.set(name.toLowerCase(), sources)
  }
  return out
}

const STRICT_REFERRER = ['no-referrer', 'same-origin', 'strict-origin', 'strict-origin-when-cross-origin']

/** What every API response (success or error, any status) must carry. */
function apiHeaderProblems(what: string, headers: Headers): string[] {
  const out: string[] = []
  if (headers.get('x-content-type-options') !== 'nosniff')
    out.push(`${what}: X-Content-Type-Options ${headers.get('x-content-type-options')}`)
  if (!STRICT_REFERRER.includes(headers.get('referrer-policy') ?? ''))
    out.push(`${what}: Referrer-Policy ${headers.get('referrer-policy')}`)
  const policy = csp(headers.get('content-security-policy'))
  if (policy.get('default-src')?.join(' ') !== "'none'")
    out.push(`${what}: CSP default-src ${JSON.stringify(policy.get('default-src'))} (${headers.get('content-security-policy')})`)
  if (policy.get('frame-ancestors')?.join(' ') !== "'none'")
    out.push(`${what}: CSP frame-ancestors ${JSON.stringify(policy.get('frame-ancestors'))}`)
  for (const [name, sources] of policy) {
    if (name === 'default-src' || name === 'frame-ancestors' || name === 'base-uri' || name === 'form-action') continue
    if (sources.some((s) => s !== "'none'")) out.push(`${what}: CSP ${name} opens ${sources.join(' ')}`)
  }
  return out
}

// ------------------------------------------------------------------ every response carries the headers

describe('security headers on API responses', () => {
  test('on every status every route gives: 200, 201, 204, 400, 401, 403, 404, 413, 422, 429, preflight, health', async () => {
    const app = await testApp({
      ...cheap,
      bodyLimitBytes: 4096,
      loginThrottle: { enabled: true, perPair: 1, perAccount: 100, perAddress: 1000, windowSeconds: 60 },
    })
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const article = (
      await app.request('POST', '/api/articles', {
        token: jake.token,
        body: { article: { title: 'Headers', description: 'd', body: 'b', tagList: ['h'] } },
      })
    ).body.article
    const comment = (
      await app.request('POST', `/api/articles/${article.slug}/comments`, { token: jane.token, body: { comment: { body: 'c' } } })
    ).body.comment
    const seen = new Set<number>()
    const problems: string[] = []
    let tokens = 0
    const check = async (method: string, path: string, options: Parameters<TestApp['request']>[2] = {}) => {
      const res = await app.request(method, path, options)
      seen.add(res.status)
      problems.push(...apiHeaderProblems(`${method} ${path} -> ${res.status}`, res.headers))
      // an answer that carries a token is kept by no cache, the browser's or a proxy's
      if (typeof res.body?.user?.token === 'string') {
        tokens++
        if (res.headers.get('cache-control') !== 'no-store')
          problems.push(`${method} ${path} -> ${res.status}: a token with cache-control ${res.headers.get('cache-control')}`)
      }
      if (res.status >= 400) {
        if (res.headers.get('content-type') !== JSON_TYPE)
          problems.push(`${method} ${path} -> ${res.status}: content-type ${res.headers.get('content-type')}`)
      }
      return res
    }
    const auth = (token: string, body?: unknown) => ({ token, ...(body === undefined ? {} : { body }) })

    await check('POST', '/api/users', { body: { user: { username: 'hdr', email: 'hdr@example.com', password: 'password123' } } })
    await check('POST', '/api/users', { body: { user: {} } })
    await check('POST', '/api/users', { body: '{"user":' })
    await check('POST', '/api/users', { body: { user: { username: 'x'.repeat(5000) } } })
    await check('POST', '/api/users/login', { body: { user: { email: jake.email, password: jake.password } } })
    await check('POST', '/api/users/login', { body: { user: { email: jane.email, password: 'wrong password' } } })
    await check('POST', '/api/users/login', { body: { user: { email: jane.email, password: 'wrong password' } } })
    await check('GET', '/api/user', auth(jake.token))
    await check('GET', '/api/user')
    await check('GET', '/api/user', auth('garbage'))
    await check('PUT', '/api/user', auth(jake.token, { user: { bio: 'b' } }))
    await check('PUT', '/api/user', auth(jake.token, { user: { email: 'nope' } }))
    await check('GET', `/api/profiles/${jane.username}`)
    await check('GET', '/api/profiles/nobody-here')
    await check('POST', `/api/profiles/${jane.username}/follow`, auth(jake.token))
    await check('POST', `/api/profiles/${jake.username}/follow`, auth(jake.token))
    await check('DELETE', `/api/profiles/${jane.username}/follow`, auth(jake.token))
    await check('GET', '/api/articles?limit=5&tag=h')
    await check('GET', '/api/articles?limit=-1')
    await check('GET', '/api/articles/feed', auth(jake.token))
    await check('POST', '/api/articles', auth(jane.token, { article: { title: 'T2', description: 'd', body: 'b' } }))
    await check('GET', `/api/articles/${article.slug}`)
    await check('GET', '/api/articles/no-such-article')
    await check('PUT', `/api/articles/${article.slug}`, auth(jane.token, { article: { body: 'mine now' } }))
    await check('PUT', `/api/articles/${article.slug}`, auth(jake.token, { article: { body: 'new body' } }))
    await check('POST', `/api/articles/${article.slug}/favorite`, auth(jane.token))
    await check('DELETE', `/api/articles/${article.slug}/favorite`, auth(jane.token))
    await check('GET', `/api/articles/${article.slug}/comments`)
    await check('POST', `/api/articles/${article.slug}/comments`, auth(jane.token, { comment: { body: 'another' } }))
    await check('DELETE', `/api/articles/${article.slug}/comments/999999`, auth(jane.token))
    await check('DELETE', `/api/articles/${article.slug}/comments/${comment.id}`, auth(jane.token))
    await check('DELETE', `/api/articles/${article.slug}`, auth(jake.token))
    await check('GET', '/api/tags')
    await check('GET', '/api/no-such-route')
    await check('PATCH', '/api/user', auth(jake.token, { user: {} }))
    await check('OPTIONS', '/api/articles', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
    await check('GET', '/health')
    await check('GET', '/ready')

    expect(problems).toEqual([])
    // registration, login, the current user and its update
    expect(tokens).toBe(4)
    // the list above reached every status the contract names
    for (const status of [200, 201, 204, 400, 401, 403, 404, 413, 422, 429]) expect(seen).toContain(status)
  })

  test('on a 500', async () => {
    const app = await testApp(cheap)
    const jake = await registerUser(app)
    await app.db.run('DROP TABLE follows')
    const res = await app.request('GET', `/api/profiles/${jake.username}`, { token: jake.token, allow500: true })
    expect(res.status).toBe(500)
    expect(apiHeaderProblems('500', res.headers)).toEqual([])
  })

  test('a 429 carries Retry-After and the same headers as any error', async () => {
    const app = await testApp({
      ...cheap,
      loginThrottle: { enabled: true, perPair: 1, perAccount: 100, perAddress: 1000, windowSeconds: 60 },
    })
    const jake = await registerUser(app)
    await app.request('POST', '/api/users/login', {
      body: { user: { email: jake.email, password: 'wrong password' } },
      headers: { origin: 'https://app.example' },
    })
    const res = await app.request('POST', '/api/users/login', {
      body: { user: { email: jake.email, password: 'wrong password' } },
      headers: { origin: 'https://app.example' },
    })
    expect(res.status).toBe(429)
    expect(apiHeaderProblems('429', res.headers)).toEqual([])
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
  })
})

describe('the Swagger page', () => {
  async function page(app: TestApp) {
    const res = await app.request('GET', '/swagger')
    expect(res.status).toBe(200)
    return res
  }

  test('has a CSP that allows its own scripts and styles and nothing from elsewhere', async () => {
    const res = await page(await testApp())
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(STRICT_REFERRER).toContain(res.headers.get('referrer-policy') ?? '(none)')
    const policy = csp(res.headers.get('content-security-policy'))
    const sources = (name: string) => policy.get(name) ?? policy.get('default-src') ?? []
    expect(policy.get('default-src')).toBeDefined()
    for (const name of ['default-src', 'script-src', 'style-src', 'img-src', 'connect-src']) {
      // only this origin (and inline / data: images where needed): no wildcard, no scheme-wide or remote source
      for (const s of sources(name))
        expect({ name, source: s }).toEqual({
          name,
          source: expect.stringMatching(/^('self'|'none'|'unsafe-inline'|'sha(256|384|512)-[A-Za-z0-9+/=]+'|'nonce-[^']+'|data:)$/),
        })
      expect(sources(name).includes('data:') && name !== 'img-src').toBe(false)
    }
    expect(sources('script-src')).toContain("'self'")
    expect(sources('style-src')).toContain("'self'")
    expect(sources('script-src')).not.toContain("'unsafe-eval'")
    // the page shares its origin with the site's session: its one inline script is allowed by its hash alone
    expect(sources('script-src')).not.toContain("'unsafe-inline'")
    expect(policy.get('frame-ancestors')).toEqual(["'none'"])
    expect(policy.get('object-src') ?? policy.get('default-src')).not.toContain('*')
  })

  test('every script and stylesheet it loads is same-origin, served with its type and nosniff, and allowed by the CSP', async () => {
    const app = await testApp()
    const res = await page(app)
    const html = res.text
    const policy = csp(res.headers.get('content-security-policy'))
    const scriptSrc = policy.get('script-src') ?? policy.get('default-src') ?? []
    const styleSrc = policy.get('style-src') ?? policy.get('default-src') ?? []

    const external = [...html.matchAll(/<(script|link)\b[^>]*\b(src|href)="([^"]+)"/g)].map((m) => ({ tag: m[1]!, url: m[3]! }))
    expect(external.length).toBeGreaterThanOrEqual(2)
    for (const { tag, url } of external) {
      // relative to this origin: no scheme, no protocol-relative host
      expect({ url, sameOrigin: !/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(url) }).toEqual({ url, sameOrigin: true })
      const asset = await app.request('GET', new URL(url, 'http://localhost/swagger').pathname)
      expect({ url, status: asset.status }).toEqual({ url, status: 200 })
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff')
      expect(asset.headers.get('content-type')).toMatch(tag === 'script' ? /^(text|application)\/javascript/ : /^text\/css/)
    }
    // inline scripts and styles run only if the policy allows them (unsafe-inline or their hash)
    const allowsInline = (sources: string[], content: string) =>
      sources.includes("'unsafe-inline'") || sources.includes(`'sha256-${createHash('sha256').update(content).digest('base64')}'`)
    for (const m of html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)) expect(allowsInline(scriptSrc, m[1]!)).toBe(true)
    for (const m of html.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)) expect(allowsInline(styleSrc, m[1]!)).toBe(true)
    // and the document it fetches is allowed by connect-src
    expect(policy.get('connect-src') ?? policy.get('default-src')).toContain("'self'")
    expect((await app.request('GET', '/swagger/json')).status).toBe(200)
  })

  test('the OpenAPI document and the assets carry nosniff and a CSP', async () => {
    const app = await testApp()
    for (const path of ['/swagger/json', '/swagger/assets/swagger-ui-bundle.js', '/swagger/assets/swagger-ui.css']) {
      const res = await app.request('GET', path)
      expect({ path, status: res.status }).toEqual({ path, status: 200 })
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toBeTruthy()
    }
  })
})

// ------------------------------------------------------------------ login throttling

const throttle = (overrides: Partial<Config['loginThrottle']> = {}): Config['loginThrottle'] => ({
  enabled: true,
  perPair: 10,
  perAccount: 100,
  perAddress: 1000,
  windowSeconds: 900,
  ...overrides,
})

function login(app: TestApp, email: string, password: string, forwardedFor?: string): Promise<TestResponse> {
  return app.request('POST', '/api/users/login', {
    body: { user: { email, password } },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  })
}

/** `n` failed logins, one after the other; returns their statuses. */
async function fail(app: TestApp, email: string, n: number, forwardedFor?: string | ((i: number) => string)): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const res = await login(app, email, `wrong password ${i}`, typeof forwardedFor === 'function' ? forwardedFor(i) : forwardedFor)
    out.push(res.status)
  }
  return out
}
const times = (n: number, status: number) => Array(n).fill(status)

function expectThrottled(res: TestResponse, windowSeconds = 900) {
  expect(res.status).toBe(429)
  expect(res.body).toEqual(THROTTLED)
  const retryAfter = res.headers.get('retry-after')
  expect(retryAfter).toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds)
}

describe('login throttling per (account, address)', () => {
  test('10 failures are 401s; the 11th attempt, even with the right password, is a 429 with Retry-After', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle() })
    const jake = await registerUser(app)
    expect(await fail(app, jake.email, 10)).toEqual(times(10, 401))
    expectThrottled(await login(app, jake.email, 'wrong again'))
    expectThrottled(await login(app, jake.email, jake.password))
  })

  test('the same account from another address is unaffected (TRUST_PROXY, addresses from X-Forwarded-For)', async () => {
    const app = await testApp({ ...cheap, trustProxy: true, loginThrottle: throttle() })
    const jake = await registerUser(app)
    expect(await fail(app, jake.email, 10, '203.0.113.7')).toEqual(times(10, 401))
    expectThrottled(await login(app, jake.email, jake.password, '203.0.113.7'))
    expect((await login(app, jake.email, 'wrong', '198.51.100.1')).status).toBe(401)
    const owner = await login(app, jake.email, jake.password, '198.51.100.2')
    expect(owner.status).toBe(200)
    expect(owner.body.user.username).toBe(jake.username)
  })

  test('other accounts from the throttled address are unaffected', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle() })
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await fail(app, jake.email, 10)
    expectThrottled(await login(app, jake.email, jake.password))
    expect((await login(app, jane.email, 'wrong')).body).toEqual(WRONG)
    expect((await login(app, jane.email, jane.password)).status).toBe(200)
  })

  test('without TRUST_PROXY, X-Forwarded-For is ignored: a spoofed address gets no fresh budget', async () => {
    const app = await testApp({ ...cheap, trustProxy: false, loginThrottle: throttle() })
    const jake = await registerUser(app)
    expect(await fail(app, jake.email, 10, (i) => `192.0.2.${i}`)).toEqual(times(10, 401))
    expectThrottled(await login(app, jake.email, jake.password, '198.51.100.99'))
  })

  test('with TRUST_PROXY the address is the LAST X-Forwarded-For entry (the one the proxy appended)', async () => {
    const app = await testApp({ ...cheap, trustProxy: true, loginThrottle: throttle() })
    const jake = await registerUser(app)
    // the client varies what it claims; the proxy always appends the same real address
    expect(await fail(app, jake.email, 10, (i) => `10.0.0.${i}, 172.16.0.${i}, 203.0.113.50`)).toEqual(times(10, 401))
    expectThrottled(await login(app, jake.email, jake.password, '1.1.1.1, 203.0.113.50'))
    expectThrottled(await login(app, jake.email, jake.password, ' 203.0.113.50 '))
    // claiming the throttled address first does not inherit its throttle either
    expect((await login(app, jake.email, jake.password, '203.0.113.50, 203.0.113.51')).status).toBe(200)
  })

  test('email letter case and surrounding spaces do not make a new account key', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle() })
    const jake = await registerUser(app)
    const spellings = [jake.email, jake.email.toUpperCase(), ` ${jake.email} `, jake.email.replace(/^./, (c) => c.toUpperCase())]
    for (let i = 0; i < 10; i++) expect((await login(app, spellings[i % spellings.length]!, `wrong ${i}`)).status).toBe(401)
    expectThrottled(await login(app, jake.email.toUpperCase(), jake.password))
  })

  test('unknown emails are throttled exactly like existing ones (no account enumeration through 429s)', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle() })
    expect(await fail(app, 'nobody-at-all@example.com', 10)).toEqual(times(10, 401))
    expectThrottled(await login(app, 'nobody-at-all@example.com', 'whatever password'))
  })

  test('a success clears the pair: 9 failures, a success, then 10 more failures before the next 429', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle() })
    const jake = await registerUser(app)
    expect(await fail(app, jake.email, 9)).toEqual(times(9, 401))
    expect((await login(app, jake.email, jake.password)).status).toBe(200)
    expect(await fail(app, jake.email, 10)).toEqual(times(10, 401))
    expectThrottled(await login(app, jake.email, jake.password))
  })

  test('30 concurrent wrong guesses: exactly 10 reach the password check, 20 are 429', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle() })
    const jake = await registerUser(app)
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => login(app, jake.email, `guess ${i}`)))
    expect(all.filter((r) => r.status === 401)).toHaveLength(10)
    expect(all.filter((r) => r.status === 429)).toHaveLength(20)
    expectThrottled(await login(app, jake.email, jake.password))
  })

  test('the window ends: after windowSeconds the pair may try again', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle({ windowSeconds: 1 }) })
    const jake = await registerUser(app)
    await fail(app, jake.email, 10)
    expectThrottled(await login(app, jake.email, jake.password), 1)
    await Bun.sleep(1_100)
    expect((await login(app, jake.email, jake.password)).status).toBe(200)
  })

  test('registration is never throttled, from a throttled address, for the throttled email or others', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle({ perPair: 2, perAccount: 3 }) })
    await fail(app, 'newcomer@example.com', 5)
    expectThrottled(await login(app, 'newcomer@example.com', 'whatever password'))
    const statuses: number[] = []
    for (let i = 0; i < 30; i++) {
      // failing registrations (taken / invalid) and good ones alike
      const user =
        i % 3 === 0
          ? { username: `reg${i}`, email: `reg${i}@example.com`, password: 'password123' }
          : { username: '', email: 'newcomer', password: 'x' }
      statuses.push((await app.request('POST', '/api/users', { body: { user } })).status)
    }
    expect(statuses.filter((s) => s === 429)).toEqual([])
    expect(statuses.filter((s) => s === 201)).toHaveLength(10)
    const res = await app.request('POST', '/api/users', {
      body: { user: { username: 'newcomer', email: 'newcomer@example.com', password: 'password123' } },
    })
    expect(res.status).toBe(201)
  })
})

describe('login throttling per account across addresses', () => {
  test('100 failures from 100 addresses (1 each) lock the account for every address; other accounts are unaffected', async () => {
    const app = await testApp({ ...cheap, trustProxy: true, loginThrottle: throttle() })
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    expect(await fail(app, jake.email, 100, (i) => `198.51.100.${i + 1}`)).toEqual(times(100, 401))
    expectThrottled(await login(app, jake.email, jake.password, '203.0.113.200'))
    expectThrottled(await login(app, jake.email, jake.password, '198.51.100.1'))
    expect((await login(app, jane.email, jane.password, '198.51.100.1')).status).toBe(200)
    expect((await login(app, jane.email, jane.password, '203.0.113.200')).status).toBe(200)
  })

  test('the per-account limit follows the configuration (perAccount 20)', async () => {
    const app = await testApp({ ...cheap, trustProxy: true, loginThrottle: throttle({ perAccount: 20 }) })
    const jake = await registerUser(app)
    expect(await fail(app, jake.email, 20, (i) => `192.0.2.${i + 1}`)).toEqual(times(20, 401))
    expectThrottled(await login(app, jake.email, jake.password, '192.0.2.250'))
  })
})

describe('login throttling switched off', () => {
  test('loginThrottle.enabled false: 50 failures are all 401 and the right password then works', async () => {
    const app = await testApp({ ...cheap, loginThrottle: throttle({ enabled: false }) })
    const jake = await registerUser(app)
    expect(await fail(app, jake.email, 50)).toEqual(times(50, 401))
    const res = await login(app, jake.email, jake.password)
    expect(res.status).toBe(200)
    expect(res.headers.get('retry-after')).toBeNull()
  })
})

// ------------------------------------------------------------------ the compiled binary over 127.0.0.1

describe('the real server', () => {
  const binary = useBinary()
  let server: Server | undefined
  let proxied: Server | undefined
  beforeAll(async () => {
    ;[server, proxied] = await Promise.all([
      startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error' } }),
      startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', TRUST_PROXY: 'true' } }),
    ])
  }, 30_000)
  afterAll(async () => {
    await Promise.all([server?.stop(), proxied?.stop()])
  })
  const live = (s: Server | undefined) => {
    if (!s) throw new Error('the binary did not start (see beforeAll)')
    return s
  }
  const realLogin = async (base: string, email: string, password: string, forwardedFor?: string) => {
    const res = await fetch(`${base}/api/users/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      body: JSON.stringify({ user: { email, password } }),
      signal: AbortSignal.timeout(10_000),
    })
    return { status: res.status, headers: res.headers, body: await res.json().catch(() => null) }
  }

  test('API responses, errors and 404s carry the headers over HTTP too', async () => {
    const base = live(server).url
    const problems: string[] = []
    for (const [method, path, body] of [
      ['GET', '/api/tags'],
      ['GET', '/api/articles/nothing-here'],
      ['GET', '/api/user'],
      ['POST', '/api/users', { user: {} }],
      ['GET', '/health'],
    ] as [string, string, unknown?][]) {
      const res = await api(base, method, path, { body })
      problems.push(...apiHeaderProblems(`${method} ${path} -> ${res.status}`, res.headers))
    }
    expect(problems).toEqual([])
  })

  test('a body far over the limit (2 MiB) still gets the 413 envelope with the security and CORS headers', async () => {
    const base = live(server).url
    const res = await fetch(`${base}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://app.example' },
      body: JSON.stringify({ user: { username: 'big', email: 'big@example.com', password: 'x'.repeat(2 * 1024 * 1024) } }),
      signal: AbortSignal.timeout(10_000),
    })
    const text = await res.text()
    expect(res.status).toBe(413)
    expect({ contentType: res.headers.get('content-type'), text }).toEqual({
      contentType: JSON_TYPE,
      text: JSON.stringify({ errors: { body: ['is too large (maximum is 1048576 bytes)'] } }),
    })
    expect(apiHeaderProblems('413 (2 MiB)', res.headers)).toEqual([])
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect((await api(base, 'GET', '/health')).status).toBe(200)
  }, 20_000)

  test('the throttle keys on the socket address; X-Forwarded-For is ignored without TRUST_PROXY', async () => {
    const base = live(server).url
    const user = await register(base)
    for (let i = 0; i < 10; i++) expect((await realLogin(base, user.email, `wrong ${i}`, `192.0.2.${i}`)).status).toBe(401)
    const res = await realLogin(base, user.email, user.password, '198.51.100.7')
    expect(res.status).toBe(429)
    expect(res.body).toEqual(THROTTLED)
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
  }, 30_000)

  test('with TRUST_PROXY=true the throttle keys on the last X-Forwarded-For entry', async () => {
    const base = live(proxied).url
    const user = await register(base)
    for (let i = 0; i < 10; i++) expect((await realLogin(base, user.email, `wrong ${i}`, `10.9.9.${i}, 203.0.113.9`)).status).toBe(401)
    expect((await realLogin(base, user.email, user.password, '203.0.113.9')).status).toBe(429)
    expect((await realLogin(base, user.email, user.password, '203.0.113.9, 203.0.113.10')).status).toBe(200)
  }, 30_000)
})
