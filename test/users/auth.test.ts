import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { createApp } from '../../src/app.ts'
import { type Claims, signToken, verifyToken } from '../../src/auth/jwt.ts'
import { type TestApp, testApp } from '../support/app.ts'
import { createArticle, expectTokenRefused, registerUser } from '../support/fixtures.ts'

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const hmac = (secret: string, input: string) => createHmac('sha256', secret).update(input).digest('base64url')

/** A JWT built by hand: any header, any payload, signed with `secret` (or with the given signature). */
function forge(header: unknown, payload: unknown, secret: string, signature?: string): string {
  const input = `${b64url(header)}.${b64url(payload)}`
  return `${input}.${signature ?? hmac(secret, input)}`
}

const secretOf = async (app: TestApp) => (await app.db.get<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'"))!.value

const decode = (token: string) => {
  const [header, payload] = token.split('.') as [string, string]
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()) as Claims,
  }
}

const now = () => Math.floor(Date.now() / 1000)
const HS256 = { alg: 'HS256', typ: 'JWT' }

const invalid = { errors: { token: ['is invalid'] } }
const missing = { errors: { token: ['is missing'] } }

describe('authentication schemes', () => {
  test('accepts "Authorization: Token <jwt>"', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('GET', '/api/user', { headers: { authorization: `Token ${user.token}` } })
    expect(res.status).toBe(200)
    expect(res.body.user.username).toBe(user.username)
  })

  test('accepts "Authorization: Bearer <jwt>"', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('GET', '/api/user', { headers: { authorization: `Bearer ${user.token}` } })
    expect(res.status).toBe(200)
    expect(res.body.user.username).toBe(user.username)
  })

  test('accepts a Bearer token on an optional-auth route and uses it', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await app.request('POST', `/api/profiles/${jane.username}/follow`, { token: jake.token })
    const res = await app.request('GET', `/api/profiles/${jane.username}`, { headers: { authorization: `Bearer ${jake.token}` } })
    expect(res.status).toBe(200)
    expect(res.body.profile.following).toBe(true)
  })

  test.each([
    ['a bare token without a scheme', (t: string) => t],
    ['an unknown scheme', (t: string) => `Basic ${t}`],
    ['two tokens', (t: string) => `Token ${t} ${t}`],
  ])('answers 401 "is invalid" for %s', async (_what, header) => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('GET', '/api/user', { headers: { authorization: header(user.token) } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })
})

describe('routes that require a token', () => {
  const required: [string, string][] = [
    ['GET', '/api/user'],
    ['PUT', '/api/user'],
    ['POST', '/api/profiles/someone/follow'],
    ['DELETE', '/api/profiles/someone/follow'],
    ['GET', '/api/articles/feed'],
    ['POST', '/api/articles'],
    ['PUT', '/api/articles/some-slug'],
    ['DELETE', '/api/articles/some-slug'],
    ['POST', '/api/articles/some-slug/favorite'],
    ['DELETE', '/api/articles/some-slug/favorite'],
    ['POST', '/api/articles/some-slug/comments'],
    ['DELETE', '/api/articles/some-slug/comments/1'],
  ]

  test.each(required)('%s %s answers 401 "is missing" without a token', async (method, path) => {
    const app = await testApp()
    const res = await app.request(method, path)
    expect(res.status).toBe(401)
    expect(res.body).toEqual(missing)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    // a 401 says which credentials it wants (RFC 9110)
    expect(res.headers.get('www-authenticate')).toBe('Token')
  })

  test('a header without a token in it (empty, or the scheme alone) is no token: "is missing", and anyone\'s answer where anyone may read', async () => {
    const app = await testApp()
    const author = await registerUser(app)
    const { slug } = await createArticle(app, author.token)
    for (const header of ['', ' ', 'Token', 'Token ', 'Bearer   ']) {
      const put = await app.request('PUT', '/api/user', { headers: { authorization: header }, body: { user: { bio: 'x' } } })
      expect({ header, status: put.status, body: put.body, www: put.headers.get('www-authenticate') }).toEqual({
        header,
        status: 401,
        body: missing,
        www: 'Token',
      })
      for (const path of ['/api/articles', `/api/articles/${slug}`, `/api/profiles/${author.username}`]) {
        const read = await app.request('GET', path, { headers: { authorization: header } })
        expect({ header, path, status: read.status, www: read.headers.get('www-authenticate') }).toEqual({
          header,
          path,
          status: 200,
          www: null,
        })
      }
    }
  })

  test.each(required)('%s %s answers 401 "is invalid" with a garbage token', async (method, path) => {
    const app = await testApp()
    const res = await app.request(method, path, { token: 'garbage' })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('checks the token before validating the body, its wrapper included', async () => {
    const app = await testApp()
    const res = await app.request('PUT', '/api/user', { body: { user: { email: 'not-an-email' } } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(missing)
    for (const [method, path, body] of [
      ['POST', '/api/articles', { article: 1 }],
      ['POST', '/api/articles', { article: null }],
      ['PUT', '/api/user', { user: 'x' }],
      ['PUT', '/api/articles/some-slug', { article: [] }],
      ['POST', '/api/articles/some-slug/comments', { comment: null }],
    ] as const) {
      for (const [token, expected] of [
        [undefined, missing],
        ['garbage', invalid],
      ] as const) {
        const r = await app.request(method, path, { body, token })
        expect({ method, path, body, token, status: r.status, answer: r.body }).toEqual({
          method,
          path,
          body,
          token,
          status: 401,
          answer: expected,
        })
      }
    }
  })
})

describe('tokens that are present but unusable', () => {
  test.each([
    ['garbage', 'garbage'],
    ['two segments', 'abc.def'],
    ['four segments', 'a.b.c.d'],
    ['empty segments', '..'],
    ['non-base64url characters', 'a*b.c$d.e!f'],
  ])('rejects a malformed token (%s) with 401 "is invalid"', async (_what, token) => {
    const app = await testApp()
    await registerUser(app)
    const res = await app.request('GET', '/api/user', { token })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token signed with another secret', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    const res = await app.request('GET', '/api/user', { token: forge(HS256, payload, 'another secret of enough length!!') })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token issued by another instance with its own secret', async () => {
    const mine = await testApp()
    const theirs = await testApp()
    await registerUser(mine)
    const stranger = await registerUser(theirs)
    // the same user id (1) exists in both databases; only the secret differs
    expect(decode(stranger.token).payload.sub).toBe(1)
    const res = await mine.request('GET', '/api/user', { token: stranger.token })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects an expired token', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    const token = forge(HS256, { ...payload, iat: now() - 3600, exp: now() - 1 }, await secretOf(app))
    const res = await app.request('GET', '/api/user', { token })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('accepts a correctly signed, unexpired token forged with the stored secret (the forge is sound)', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    const token = forge(HS256, { ...payload, exp: now() + 60 }, await secretOf(app))
    const res = await app.request('GET', '/api/user', { token })
    expect(res.status).toBe(200)
    expect(res.body.user.username).toBe(user.username)
  })

  test('rejects an "alg: none" token without a signature', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    for (const token of [
      `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`,
      `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}`,
      `${b64url({ alg: 'none' })}.${b64url(payload)}.${user.token.split('.')[2]}`,
    ]) {
      const res = await app.request('GET', '/api/user', { token })
      expect(res.status).toBe(401)
      expect(res.body).toEqual(invalid)
    }
  })

  test('rejects an "alg: none" token even when signed with the secret', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    const res = await app.request('GET', '/api/user', { token: forge({ alg: 'none', typ: 'JWT' }, payload, await secretOf(app)) })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token signed with another HMAC algorithm', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    const input = `${b64url({ alg: 'HS512', typ: 'JWT' })}.${b64url(payload)}`
    const signature = createHmac('sha512', await secretOf(app))
      .update(input)
      .digest('base64url')
    const res = await app.request('GET', '/api/user', { token: `${input}.${signature}` })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token whose payload was tampered with (another user id, same signature)', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const [header, , signature] = jake.token.split('.')
    const { payload } = decode(jake.token)
    const janeId = decode(jane.token).payload.sub
    const tampered = `${header}.${b64url({ ...payload, sub: janeId })}.${signature}`
    const res = await app.request('GET', '/api/user', { token: tampered })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token whose expiry was extended without re-signing', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const [header, , signature] = user.token.split('.')
    const { payload } = decode(user.token)
    const res = await app.request('GET', '/api/user', { token: `${header}.${b64url({ ...payload, exp: payload.exp + 1 })}.${signature}` })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token with a flipped signature byte', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const [header, payload, signature] = user.token.split('.') as [string, string, string]
    const bytes = Buffer.from(signature, 'base64url')
    bytes[0] = bytes[0]! ^ 1
    const res = await app.request('GET', '/api/user', { token: `${header}.${payload}.${bytes.toString('base64url')}` })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a correctly signed token with claims of the wrong types', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    for (const claims of [
      { ...payload, sub: String(payload.sub) },
      { ...payload, ver: null },
      { ...payload, exp: String(payload.exp) },
      { sub: payload.sub, ver: payload.ver, iat: payload.iat },
    ]) {
      const res = await app.request('GET', '/api/user', { token: forge(HS256, claims, await secretOf(app)) })
      expect(res.status).toBe(401)
      expect(res.body).toEqual(invalid)
    }
  })

  test('rejects a correctly signed token for a user that does not exist', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    const res = await app.request('GET', '/api/user', { token: forge(HS256, { ...payload, sub: 999 }, await secretOf(app)) })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects the token of a user deleted since', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    await app.db.run('DELETE FROM users WHERE username = ?', user.username)
    const res = await app.request('GET', '/api/user', { token: user.token })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })

  test('rejects a token revoked by a password change; where anyone may read, it reads as no token', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const other = await registerUser(app)
    const login = await app.request('POST', '/api/users/login', { body: { user: { email: user.email, password: user.password } } })
    const revoked = login.body.user.token as string
    // used before the change, so each route has verified (and cached) it; following makes its view differ from anyone's
    expect((await app.request('POST', `/api/profiles/${other.username}/follow`, { token: revoked })).status).toBe(200)
    expect((await app.request('GET', `/api/profiles/${other.username}`, { token: revoked })).body.profile.following).toBe(true)
    const changed = await app.request('PUT', '/api/user', { token: user.token, body: { user: { password: 'a new password' } } })
    expect(changed.status).toBe(200)
    const res = await app.request('DELETE', `/api/profiles/${other.username}/follow`, { token: revoked })
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: invalid })
    await expectTokenRefused(app, `Token ${revoked}`, [`/api/profiles/${other.username}`])
    // the token that sent the change and the one its answer carries keep working
    for (const token of [user.token, changed.body.user.token]) expect((await app.request('GET', '/api/user', { token })).status).toBe(200)
  })

  test('the token kept by a password change is kept for that change only: a later bump by other hands ends it', async () => {
    const app = await testApp()
    const [twice, bumped] = [await registerUser(app), await registerUser(app)]
    const change = (token: string, password: string) => app.request('PUT', '/api/user', { token, body: { user: { password } } })
    // one token sends two changes: kept through both
    expect((await change(twice.token, 'a new password')).status).toBe(200)
    expect((await change(twice.token, 'a newer password')).status).toBe(200)
    expect((await app.request('GET', '/api/user', { token: twice.token })).status).toBe(200)
    // the version moved on past the change, as a build that does not know the kept token (or an operator) moves it
    expect((await change(bumped.token, 'a new password')).status).toBe(200)
    await app.db.run('UPDATE users SET token_version = token_version + 1 WHERE username = ?', bumped.username)
    const res = await app.request('GET', '/api/user', { token: bumped.token })
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: invalid })
  })

  test('a token of an earlier version (no id of its own) is revoked by a password change like any other', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const secret = (await app.db.get<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'"))!.value
    const id = (await app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', user.username))!.id
    const now = Math.floor(Date.now() / 1000)
    const old = signToken(secret, { sub: id, ver: 0, iat: now, exp: now + 3600 })
    expect((await app.request('GET', '/api/user', { token: old })).status).toBe(200)
    // a change it sends itself: it has no id to keep, so it is signed out too; the answer's token works
    const changed = await app.request('PUT', '/api/user', { token: old, body: { user: { password: 'a new password' } } })
    expect(changed.status).toBe(200)
    expect((await app.request('GET', '/api/user', { token: old })).status).toBe(401)
    expect((await app.request('GET', '/api/user', { token: changed.body.user.token })).status).toBe(200)
  })
})

describe('optional-auth routes', () => {
  test('answer anonymous callers without a token', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const res = await app.request('GET', `/api/profiles/${user.username}`)
    expect(res.status).toBe(200)
    expect(res.body.profile.following).toBe(false)
  })

  test.each([
    ['garbage', async () => 'garbage'],
    ['wrongly signed', async (app: TestApp, t: string) => forge(HS256, decode(t).payload, `${await secretOf(app)}x`)],
    ['expired', async (app: TestApp, t: string) => forge(HS256, { ...decode(t).payload, exp: now() - 10 }, await secretOf(app))],
    ['alg none', async (_app: TestApp, t: string) => `${b64url({ alg: 'none' })}.${t.split('.')[1]}.`],
  ])('read a %s token as no token on GET /api/profiles/:username, and say so', async (_what, make) => {
    const app = await testApp()
    const user = await registerUser(app)
    const other = await registerUser(app)
    await app.request('POST', `/api/profiles/${other.username}/follow`, { token: user.token })
    await expectTokenRefused(app, `Token ${await make(app, user.token)}`, [`/api/profiles/${other.username}`])
  })

  test('read an unusable token as no token on every route anyone may read, its 404s included', async () => {
    const app = await testApp()
    for (const authorization of ['Token garbage', 'Token null', 'Token undefined', 'Basic dXNlcjpwYXNz']) {
      await expectTokenRefused(app, authorization, [
        '/api/articles',
        '/api/articles/some-slug',
        '/api/articles/some-slug/comments',
        '/api/profiles/nobody',
        '/api/articles/%zz',
        '/api/profiles/%zz/',
      ])
    }
    // a token that works is not said to be unusable, built or kept (the second answer comes from the cache)
    const user = await registerUser(app)
    for (const path of ['/api/articles', `/api/profiles/${user.username}`, '/api/profiles/nobody'])
      for (let i = 0; i < 2; i++) {
        const res = await app.request('GET', path, { token: user.token })
        expect({ path, i, status: res.status, header: res.headers.get('www-authenticate') }).toEqual({
          path,
          i,
          status: path.endsWith('nobody') ? 404 : 200,
          header: null,
        })
      }
  })
})

describe('issued tokens', () => {
  test('are HS256 JWTs that expire 30 days after issue by default', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const { header, payload } = decode(user.token)
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(payload.exp - payload.iat).toBe(30 * 24 * 3600)
    expect(Math.abs(payload.iat - now())).toBeLessThanOrEqual(5)
  })

  test('follow the configured lifetime', async () => {
    const app = await testApp({ tokenTtlSeconds: 120 })
    const user = await registerUser(app)
    const { payload } = decode(user.token)
    expect(payload.exp - payload.iat).toBe(120)
  })

  test('are signed with the configured secret when one is given', async () => {
    const secret = 'a-configured-secret-of-32-chars!!'
    const app = await testApp({ jwtSecret: secret })
    const user = await registerUser(app)
    const [header, payload, signature] = user.token.split('.')
    expect(signature).toBe(hmac(secret, `${header}.${payload}`))
    expect((await app.request('GET', '/api/user', { token: user.token })).status).toBe(200)
  })

  test('are signed with a secret generated once and kept in the database', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const secret = await secretOf(app)
    expect(secret.length).toBeGreaterThanOrEqual(32)
    const [header, payload, signature] = user.token.split('.')
    expect(signature).toBe(hmac(secret, `${header}.${payload}`))
  })

  test('survive a restart on the same database', async () => {
    const app = await testApp()
    const user = await registerUser(app)
    const restarted = await createApp({ store: app.store, config: app.config })
    const res = await restarted.handle(new Request('http://localhost/api/user', { headers: { authorization: `Token ${user.token}` } }))
    expect(res.status).toBe(200)
    expect(((await res.json()) as { user: { username: string } }).user.username).toBe(user.username)
  })
})

describe('signToken and verifyToken', () => {
  const secret = 'unit-test-secret-0123456789abcdef'
  const claims = (overrides: Partial<Claims> = {}): Claims => ({ sub: 7, ver: 2, iat: 1_700_000_000, exp: 1_700_003_600, ...overrides })

  test('round-trips the claims', () => {
    const c = claims()
    expect(verifyToken(secret, signToken(secret, c), c.iat + 1)).toEqual(c)
  })

  test('produces a standard HS256 JWT', () => {
    const token = signToken(secret, claims())
    const [header, payload, signature] = token.split('.') as [string, string, string]
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toEqual(claims())
    expect(signature).toBe(hmac(secret, `${header}.${payload}`))
  })

  test('accepts an HS256 token made by another encoder (different header key order)', () => {
    const c = claims()
    const token = forge({ typ: 'JWT', alg: 'HS256' }, c, secret)
    expect(verifyToken(secret, token, c.iat)).toEqual(c)
  })

  test('accepts an HS256 header without typ', () => {
    const c = claims()
    expect(verifyToken(secret, forge({ alg: 'HS256' }, c, secret), c.iat)).toEqual(c)
  })

  test('accepts a token up to its last second and rejects it from its expiry on', () => {
    const c = claims()
    const token = signToken(secret, c)
    expect(verifyToken(secret, token, c.exp - 1)).toEqual(c)
    expect(verifyToken(secret, token, c.exp - 0.001)).toEqual(c)
    expect(verifyToken(secret, token, c.exp)).toBeNull()
    expect(verifyToken(secret, token, c.exp + 1)).toBeNull()
  })

  test('checks expiry against the current time by default', () => {
    const t = now()
    expect(verifyToken(secret, signToken(secret, claims({ iat: t, exp: t + 60 })))).not.toBeNull()
    expect(verifyToken(secret, signToken(secret, claims({ iat: t - 120, exp: t - 60 })))).toBeNull()
  })

  test('rejects a token verified with another secret', () => {
    const c = claims()
    expect(verifyToken(`${secret}x`, signToken(secret, c), c.iat)).toBeNull()
  })

  test('rejects a tampered payload', () => {
    const c = claims()
    const [header, , signature] = signToken(secret, c).split('.')
    expect(verifyToken(secret, `${header}.${b64url({ ...c, sub: 8 })}.${signature}`, c.iat)).toBeNull()
  })

  test('rejects a tampered header', () => {
    const c = claims()
    const [, payload, signature] = signToken(secret, c).split('.')
    expect(verifyToken(secret, `${b64url({ alg: 'HS256', typ: 'JWT', kid: 'x' })}.${payload}.${signature}`, c.iat)).toBeNull()
  })

  test.each([
    ['alg none without signature', (c: Claims) => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(c)}.`],
    ['alg none signed with the secret', (c: Claims) => forge({ alg: 'none', typ: 'JWT' }, c, secret)],
    ['alg HS512', (c: Claims) => forge({ alg: 'HS512', typ: 'JWT' }, c, secret)],
    ['alg RS256', (c: Claims) => forge({ alg: 'RS256', typ: 'JWT' }, c, secret)],
    ['typ other than JWT', (c: Claims) => forge({ alg: 'HS256', typ: 'JWE' }, c, secret)],
    [
      'a header that is not JSON',
      (c: Claims) => `${b64url('not json')}.${b64url(c)}.${hmac(secret, `${b64url('not json')}.${b64url(c)}`)}`,
    ],
    ['a payload that is not JSON', () => forge({ alg: 'HS256', typ: 'JWT' }, 'not json', secret)],
    ['a null payload', () => forge({ alg: 'HS256', typ: 'JWT' }, null, secret)],
    ['a string sub', (c: Claims) => forge({ alg: 'HS256', typ: 'JWT' }, { ...c, sub: '7' }, secret)],
    ['a fractional sub', (c: Claims) => forge({ alg: 'HS256', typ: 'JWT' }, { ...c, sub: 7.5 }, secret)],
    ['a missing ver', (c: Claims) => forge({ alg: 'HS256', typ: 'JWT' }, { sub: c.sub, iat: c.iat, exp: c.exp }, secret)],
    ['a missing exp', (c: Claims) => forge({ alg: 'HS256', typ: 'JWT' }, { sub: c.sub, ver: c.ver, iat: c.iat }, secret)],
    ['a string exp', (c: Claims) => forge({ alg: 'HS256', typ: 'JWT' }, { ...c, exp: String(c.exp) }, secret)],
    ['a truncated signature', (c: Claims) => signToken(secret, c).slice(0, -2)],
    ['an empty string', () => ''],
    ['two segments', (c: Claims) => signToken(secret, c).split('.').slice(0, 2).join('.')],
    ['four segments', (c: Claims) => `${signToken(secret, c)}.x`],
    ['padding characters', (c: Claims) => `${signToken(secret, c)}=`],
  ])('returns null for %s', (_what, make) => {
    const c = claims()
    expect(verifyToken(secret, make(c), c.iat)).toBeNull()
  })
})
