import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import * as crypto from 'node:crypto'
import { type Claims, signToken, verifyToken } from '../../src/auth/jwt.ts'
import { api, startServer, useBinary } from '../e2e/support.ts'
import { type TestApp, testApp } from '../support/app.ts'
import { expectTokenRefused, registerUser } from '../support/fixtures.ts'

/**
 * Token attacks that test/users/auth.test.ts does not already cover: key-confusion
 * headers at the HTTP level, header spellings of `alg`, duplicate keys, extra
 * and duplicate dots around an otherwise valid token, very long tokens (in
 * process and on the real server), forged claims that are correctly signed,
 * credentials in places other than the Authorization header, and the
 * constant-time signature comparison at the unit level.
 */

const cheap = { passwordHash: { memoryCost: 256, timeCost: 1 } }
const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const hmac = (secret: string, input: string, alg = 'sha256') => crypto.createHmac(alg, secret).update(input).digest('base64url')
const secretOf = async (app: TestApp) => (await app.db.get<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'"))!.value
const payloadOf = (token: string): Claims => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
/** header and payload as given (header may be raw JSON text), signed with HMAC-SHA256 of `secret` */
const signRaw = (header: string, payload: unknown, secret: string, alg = 'sha256') => {
  const input = `${b64url(header)}.${b64url(payload)}`
  return `${input}.${hmac(secret, input, alg)}`
}
const invalid = { errors: { token: ['is invalid'] } }

async function setup() {
  const app = await testApp(cheap)
  const user = await registerUser(app)
  return { app, user, secret: await secretOf(app), claims: payloadOf(user.token) }
}

const expectRejected = (app: TestApp, authorization: string) => expectTokenRefused(app, authorization)

describe('algorithm confusion, at the HTTP level', () => {
  test.each([
    ['RS256 signed with HMAC-SHA256 of the secret (public-key confusion)', '{"alg":"RS256","typ":"JWT"}', 'sha256'],
    ['ES256 signed with HMAC-SHA256 of the secret', '{"alg":"ES256","typ":"JWT"}', 'sha256'],
    ['HS512 header over an HMAC-SHA256 signature', '{"alg":"HS512","typ":"JWT"}', 'sha256'],
    ['HS384 signed with HMAC-SHA384 of the secret', '{"alg":"HS384","typ":"JWT"}', 'sha384'],
    ['alg "hs256" (lower case)', '{"alg":"hs256","typ":"JWT"}', 'sha256'],
    ['alg "HS256 " (trailing space)', '{"alg":"HS256 ","typ":"JWT"}', 'sha256'],
    ['alg ["HS256"] (an array)', '{"alg":["HS256"],"typ":"JWT"}', 'sha256'],
    ['alg null', '{"alg":null,"typ":"JWT"}', 'sha256'],
    ['no alg at all', '{"typ":"JWT"}', 'sha256'],
    ['alg "None"', '{"alg":"None","typ":"JWT"}', 'sha256'],
    ['alg "NONE"', '{"alg":"NONE","typ":"JWT"}', 'sha256'],
    ['a duplicate alg key whose last value is none', '{"alg":"HS256","alg":"none","typ":"JWT"}', 'sha256'],
    ['a header that is a JSON array', '["HS256"]', 'sha256'],
    ['a header that is JSON null', 'null', 'sha256'],
  ])('rejects a token with %s', async (_what, header, alg) => {
    const { app, secret, claims } = await setup()
    await expectRejected(app, `Token ${signRaw(header, claims, secret, alg)}`)
  })

  test.each([
    ['"none" with an empty signature', (h: string, p: string) => `${h}.${p}.`],
    ['"none" with the signature segment left out', (h: string, p: string) => `${h}.${p}`],
    ['"none" with an empty signature and an extra dot', (h: string, p: string) => `${h}.${p}..`],
  ])('rejects alg %s, also with the Bearer scheme', async (_what, make) => {
    const { app, claims } = await setup()
    for (const header of ['{"alg":"none"}', '{"alg":"none","typ":"JWT"}', '{"alg":"none","typ":"JWT","kid":"1"}']) {
      const token = make(b64url(header), b64url(claims))
      await expectRejected(app, `Token ${token}`)
      await expectRejected(app, `Bearer ${token}`)
    }
  })
})

describe('extra and duplicate dots around an otherwise valid token', () => {
  test('the untouched token works (the variants below differ only by their dots)', async () => {
    const { app, user } = await setup()
    expect((await app.request('GET', '/api/user', { token: user.token })).status).toBe(200)
  })

  test.each([
    ['a trailing dot', (h: string, p: string, s: string) => `${h}.${p}.${s}.`],
    ['two trailing dots', (h: string, p: string, s: string) => `${h}.${p}.${s}..`],
    ['a leading dot', (h: string, p: string, s: string) => `.${h}.${p}.${s}`],
    ['a doubled first dot', (h: string, p: string, s: string) => `${h}..${p}.${s}`],
    ['a doubled second dot', (h: string, p: string, s: string) => `${h}.${p}..${s}`],
    ['the signature twice', (h: string, p: string, s: string) => `${h}.${p}.${s}.${s}`],
    ['the payload twice', (h: string, p: string, s: string) => `${h}.${p}.${p}.${s}`],
    ['a dot inside the signature', (h: string, p: string, s: string) => `${h}.${p}.${s.slice(0, 20)}.${s.slice(20)}`],
    ['header and payload swapped', (h: string, p: string, s: string) => `${p}.${h}.${s}`],
    ['base64 padding on the payload', (h: string, p: string, s: string) => `${h}.${p}==.${s}`],
    [
      'standard base64 characters in the signature',
      (h: string, p: string, s: string) => `${h}.${p}.${s.replace(/-/g, '+').replace(/_/g, '/')}${/[-_]/.test(s) ? '' : '+'}`,
    ],
    ['whitespace inside', (h: string, p: string, s: string) => `${h}. ${p}.${s}`],
  ])('rejects the token with %s', async (_what, make) => {
    const { app, user } = await setup()
    const [h, p, s] = user.token.split('.') as [string, string, string]
    await expectRejected(app, `Token ${make(h, p, s)}`)
  })
})

describe('very long tokens', () => {
  test.each([
    ['64 KB of base64url characters', () => 'a'.repeat(64 * 1024)],
    ['1 MB of base64url characters', () => 'a'.repeat(1024 * 1024)],
    ['a valid token followed by 256 KB in its signature', (t: string) => `${t}${'A'.repeat(256 * 1024)}`],
    [
      'a 512 KB payload with a valid header and signature',
      (t: string) => `${t.split('.')[0]}.${'e'.repeat(512 * 1024)}.${t.split('.')[2]}`,
    ],
    ['100,000 dots', () => '.'.repeat(100_000)],
  ])('%s: 401 "is invalid", quickly', async (_what, make) => {
    const { app, user } = await setup()
    const token = make(user.token)
    const t0 = performance.now()
    const res = await app.request('GET', '/api/user', { headers: { authorization: `Token ${token}` } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
    expect(performance.now() - t0).toBeLessThan(500)
    expect(res.text).not.toContain(token.slice(0, 64))
  })

  describe('on the real server', () => {
    const binary = useBinary()

    test('a 64 KB Authorization header is refused (401, or 431 from the HTTP layer) and the server keeps serving', async () => {
      const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error' } })
      try {
        for (const size of [8 * 1024, 64 * 1024, 256 * 1024]) {
          const res = await fetch(`${server.url}/api/user`, {
            headers: { authorization: `Token ${'a'.repeat(size)}` },
            signal: AbortSignal.timeout(5_000),
          }).catch((e: Error) => ({ status: 0, text: async () => e.message }))
          const text = await res.text()
          expect({ size, status: res.status }).toEqual({ size, status: size <= 8 * 1024 ? 401 : expect.any(Number) })
          expect([401, 431, 0]).toContain(res.status)
          if (res.status === 401) expect(JSON.parse(text)).toEqual(invalid)
        }
        const health = await api(server.url, 'GET', '/health')
        expect(health.status).toBe(200)
        const tags = await api(server.url, 'GET', '/api/tags')
        expect(tags.status).toBe(200)
        expect(server.proc.exitCode).toBeNull()
      } finally {
        await server.stop()
      }
    }, 30_000)
  })
})

describe('correctly signed tokens with forged claims', () => {
  test.each([
    ['sub 0', (c: Claims) => ({ ...c, sub: 0 })],
    ['a negative sub', (c: Claims) => ({ ...c, sub: -c.sub })],
    ['sub beyond the safe integers', (c: Claims) => ({ ...c, sub: 2 ** 53 + 2 })],
    ['sub 1e308', (c: Claims) => ({ ...c, sub: 1e308 })],
    ['sub as SQL', (c: Claims) => ({ ...c, sub: `${c.sub} OR 1=1` })],
    ['sub as an array', (c: Claims) => ({ ...c, sub: [c.sub] })],
    ['a token version from the future (ver + 1)', (c: Claims) => ({ ...c, ver: c.ver + 1 })],
    ['a negative token version', (c: Claims) => ({ ...c, ver: -1 })],
    ['exp as a numeric string far away', (c: Claims) => ({ ...c, exp: '99999999999' })],
    ['exp null', (c: Claims) => ({ ...c, exp: null })],
  ])('rejects %s', async (_what, forge) => {
    const { app, secret, claims } = await setup()
    await expectRejected(app, `Token ${signRaw('{"alg":"HS256","typ":"JWT"}', forge(claims), secret)}`)
  })

  test('a payload with a duplicate sub key is read as JSON reads it (the last value), never as both', async () => {
    const { app, user, secret } = await setup()
    const other = await registerUser(app)
    const c = payloadOf(user.token)
    const otherId = payloadOf(other.token).sub
    const input = `${b64url('{"alg":"HS256","typ":"JWT"}')}.${Buffer.from(`{"sub":${otherId},"ver":${c.ver},"iat":${c.iat},"exp":${c.exp},"sub":${c.sub}}`).toString('base64url')}`
    const res = await app.request('GET', '/api/user', { headers: { authorization: `Token ${input}.${hmac(secret, input)}` } })
    expect(res.status).toBe(200)
    expect(res.body.user.username).toBe(user.username)
  })
})

describe('credentials anywhere but the Authorization header are ignored', () => {
  test('a token in the query string, a cookie or X-Access-Token does not authenticate', async () => {
    const { app, user } = await setup()
    for (const [path, headers] of [
      [`/api/user?token=${user.token}`, {}],
      [`/api/user?authorization=Token%20${user.token}`, {}],
      ['/api/user', { cookie: `token=${user.token}; jwt=${user.token}` }],
      ['/api/user', { 'x-access-token': user.token, 'x-auth-token': user.token }],
    ] as [string, Record<string, string>][]) {
      const res = await app.request('GET', path, { headers })
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 401, body: { errors: { token: ['is missing'] } } })
    }
  })

  test('two Authorization values (joined by the HTTP layer) are refused, not resolved to either', async () => {
    const { app, user } = await setup()
    const headers = new Headers()
    headers.append('authorization', `Token ${user.token}`)
    headers.append('authorization', 'Token garbage')
    const res = await app.request('GET', '/api/user', { headers: { authorization: headers.get('authorization')! } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual(invalid)
  })
})

describe('constant-time signature comparison (unit)', () => {
  const secret = 'unit-test-secret-0123456789abcdef'
  const claims: Claims = { sub: 7, ver: 2, iat: 1_700_000_000, exp: 1_700_003_600 }
  const token = signToken(secret, claims)
  const [h, p, s] = token.split('.') as [string, string, string]
  const withSignature = (bytes: Buffer) => `${h}.${p}.${bytes.toString('base64url')}`

  let spy: ReturnType<typeof spyOn> | undefined
  afterEach(() => spy?.mockRestore())

  test('the genuine token verifies (the variants below change only the signature)', () => {
    expect(verifyToken(secret, token, claims.iat)).toEqual(claims)
  })

  test.each([0, 1, 2, 3, 4, 5, 6, 7])('rejects a signature whose LAST byte differs in bit %d', (bit) => {
    const bytes = Buffer.from(s, 'base64url')
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ (1 << bit)
    expect(verifyToken(secret, withSignature(bytes), claims.iat)).toBeNull()
  })

  test('rejects a signature whose last byte takes each of the 255 other values', () => {
    const bytes = Buffer.from(s, 'base64url')
    const last = bytes[bytes.length - 1]!
    let accepted = 0
    for (let v = 0; v < 256; v++) {
      if (v === last) continue
      bytes[bytes.length - 1] = v
      if (verifyToken(secret, withSignature(bytes), claims.iat) !== null) accepted++
    }
    expect(accepted).toBe(0)
  })

  test('compares full-length signatures with crypto.timingSafeEqual, whichever byte differs (no early exit)', () => {
    spy = spyOn(crypto, 'timingSafeEqual')
    for (const index of [0, 15, 31]) {
      const bytes = Buffer.from(s, 'base64url')
      bytes[index] = bytes[index]! ^ 0x80
      spy.mockClear()
      expect(verifyToken(secret, withSignature(bytes), claims.iat)).toBeNull()
      expect(spy).toHaveBeenCalledTimes(1)
      const [a, b] = spy.mock.calls[0] as [Uint8Array, Uint8Array]
      expect(a.length).toBe(32)
      expect(b.length).toBe(32)
    }
    // the genuine signature goes through the same comparison
    spy.mockClear()
    expect(verifyToken(secret, token, claims.iat)).toEqual(claims)
    expect(spy).toHaveBeenCalledTimes(1)
  })

  test('accepts only the canonical spelling of the signature: the spare bits of its last character must be zero', () => {
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = B64.indexOf(s.at(-1)!)
    // 32 bytes are 43 characters: the last one carries 4 bits and 2 spare ones
    const variants = [1, 2, 3].map((spare) => `${h}.${p}.${s.slice(0, -1)}${B64[last ^ spare]}`)
    for (const v of variants) {
      expect(Buffer.from(v.split('.')[2]!, 'base64url').equals(Buffer.from(s, 'base64url'))).toBe(true)
      expect(verifyToken(secret, v, claims.iat)).toBeNull()
    }
    expect(verifyToken(secret, token, claims.iat)).toEqual(claims)
  })

  test('a signature of the wrong length is rejected before any comparison of secret-dependent bytes', () => {
    spy = spyOn(crypto, 'timingSafeEqual')
    for (const bytes of [Buffer.alloc(0), Buffer.alloc(31, 1), Buffer.alloc(33, 1), Buffer.alloc(64, 1)]) {
      expect(verifyToken(secret, `${h}.${p}.${bytes.toString('base64url') || 'A'}`, claims.iat)).toBeNull()
    }
    expect(spy).not.toHaveBeenCalled()
  })
})
