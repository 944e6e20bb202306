import { describe, expect, test } from 'bun:test'
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_FILTER_VALUES } from '../../src/articles/query.ts'
import { loginThrottle, MAX_THROTTLE_ROWS } from '../../src/users/throttle.ts'
import type { Config } from '../../src/config.ts'
import { createLogger, silentLogger } from '../../src/log.ts'
import { serve } from '../../src/server.ts'
import { testApp, testConfig } from '../support/app.ts'
import { binaryDatabase } from '../support/backend.ts'
import { conduitApp, registerUsers } from '../support/conduit.ts'
import { createArticle, registerUser } from '../support/fixtures.ts'
import { throttleOn } from '../../src/users/index.ts'

/**
 * What a security review found (and must not find again), on both backends:
 * bounded throttle state, real client addresses, bounded filters, caches
 * that count their keys, one spelling per token, routing that cannot be
 * moved by the Host header, look-alike usernames, throttled registration,
 * and ids that are never reused.
 */
const cheap = { passwordHash: { memoryCost: 256, timeCost: 1 } }

describe('the login throttle', () => {
  test('refuses a login email over 254 characters with a 422, before any password or throttle work', async () => {
    const app = await testApp(cheap)
    const res = await app.request('POST', '/api/users/login', {
      body: { user: { email: `${'a'.repeat(250)}@x.io`, password: 'whatever1' } },
    })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { email: ['is too long (maximum is 254 characters)'] } })
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(0)
  })

  test('keeps fixed-size digests, never the email or the address', async () => {
    const app = await testApp(cheap)
    for (const local of ['a', 'b'.repeat(60), 'c'.repeat(200)]) {
      const res = await app.request('POST', '/api/users/login', {
        body: { user: { email: `${local}@example.com`, password: 'wrong-password' } },
      })
      expect(res.status).toBe(401)
    }
    const keys = (await app.db.all<{ key: string }>('SELECT key FROM throttle')).map((r) => r.key)
    expect(keys).toHaveLength(7) // a pair and an account window per email, one for the address
    expect(new Set(keys.map((k) => k.replace(/^[a-z]+:/, '').length))).toEqual(new Set([22]))
    expect(keys.join()).not.toContain('example.com')
  })

  test('sweeps expired windows and caps the number it keeps', async () => {
    const app = await testApp({ ...cheap, loginThrottle: { ...testConfig().loginThrottle, windowSeconds: 1 } })
    for (let i = 0; i < 10; i++) {
      await app.request('POST', '/api/users/login', { body: { user: { email: `u${i}@example.com`, password: 'wrong-password' } } })
    }
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(21)
    await throttleOn(app.store).purge(Date.now(), 5)
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(5)
    await Bun.sleep(1100)
    await app.store.maintain()
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(0)
  })

  test('a flood of made-up keys past the cap pushes out its own windows, never a lockout', async () => {
    const app = await testApp({ ...cheap, loginThrottle: { ...testConfig().loginThrottle, perPair: 3 } })
    const login = (email: string) => app.request('POST', '/api/users/login', { body: { user: { email, password: 'wrong-password' } } })
    for (let i = 0; i < 3; i++) expect((await login('victim@example.com')).status).toBe(401)
    expect((await login('victim@example.com')).status).toBe(429)
    // newer windows of one hit each, as a flood of made-up emails makes them
    for (let i = 0; i < 12; i++) await login(`flood${i}@example.com`)
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(27)
    await throttleOn(app.store).purge(Date.now(), 10)
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(10)
    // the victim's pair and account, and the flooding address's own window
    expect(await app.db.count('SELECT count(*) FROM throttle WHERE hits >= 4')).toBe(3)
    expect((await login('victim@example.com')).status).toBe(429)
  })

  test('a client stays known to an account 30 days from its latest login, and no flood of failures pushes that out', async () => {
    const app = await testApp(cheap)
    const store = throttleOn(app.store)
    const DAY = 24 * 3600 * 1000
    let t = Date.now()
    const guard = loginThrottle(
      { enabled: true, perPair: 10, perAccount: 2, perAddress: 1000, windowSeconds: 900 },
      store,
      undefined,
      () => t,
    )
    const owner = 'owner@example.com'
    await guard.attempt(owner, '203.0.113.1')
    await guard.succeeded(owner, '203.0.113.1')
    t += 29 * DAY
    await guard.attempt(owner, '203.0.113.1')
    await guard.succeeded(owner, '203.0.113.1')
    t += 2 * DAY
    // the account's budget spent from elsewhere, 31 days after the first login, 2 after the latest
    for (const from of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) await guard.attempt(owner, from).catch(() => {})
    await expect(guard.attempt('owner@example.com', '198.51.100.9')).rejects.toMatchObject({ status: 429 })
    // windows of two hits each, as two failures for each of many made-up emails make them
    for (let i = 0; i < 12; i++) for (let k = 0; k < 2; k++) await guard.attempt(`flood${i}@example.com`, '198.51.100.7')
    await store.purge(t, 5)
    expect(await guard.attempt(owner, '203.0.113.1')).toBeUndefined()
  })

  test('a window says it engaged when it refuses, once; an attempt let through (the owner’s known client) says nothing', async () => {
    const app = await testApp(cheap)
    const warnings = capturedWarnings()
    const t = Date.now()
    const guard = loginThrottle(
      { enabled: true, perPair: 10, perAccount: 2, perAddress: 1000, windowSeconds: 900 },
      throttleOn(app.store),
      warnings.logger,
      () => t,
    )
    const owner = 'owner@example.com'
    await guard.attempt(owner, '203.0.113.1')
    await guard.succeeded(owner, '203.0.113.1')
    // two failures from elsewhere: the account's window is full
    for (const from of ['198.51.100.1', '198.51.100.2']) await guard.attempt(owner, from)
    // the owner's client fills it past the limit and is let through, then takes its hit back
    await guard.attempt(owner, '203.0.113.1')
    await guard.succeeded(owner, '203.0.113.1')
    expect(warnings.lines()).toEqual([])
    await expect(guard.attempt(owner, '198.51.100.3')).rejects.toMatchObject({ status: 429 })
    await expect(guard.attempt(owner, '198.51.100.4')).rejects.toMatchObject({ status: 429 })
    expect(warnings.lines()).toEqual([expect.objectContaining({ scope: 'account', client: '198.51.100.3', limit: 2 })])
  })

  test('the periodic sweep keeps at most MAX_THROTTLE_ROWS windows', async () => {
    const app = await testApp(cheap)
    const until = Date.now() + 3_600_000
    await app.db.run(
      `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
       INSERT INTO throttle (key, hits, reset_at) SELECT 'k' || i, 1, ? + i FROM c`,
      MAX_THROTTLE_ROWS + 25,
      until,
    )
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(MAX_THROTTLE_ROWS + 25)
    await app.store.maintain()
    expect(await app.db.count('SELECT count(*) FROM throttle')).toBe(MAX_THROTTLE_ROWS)
  })
})

/** POST JSON to a running server from a chosen local (loopback) address. */
function postFrom(localAddress: string, port: number, path: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body)
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }))
      },
    )
    req.on('error', reject)
    req.end(data)
  })
}

/** A server on a fresh database, listening on every address (so requests can come from several loopback ones); `run` gets its port. */
async function onPeers(overrides: Partial<Config>, run: (port: number) => Promise<void>, logger = silentLogger): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'conduit-peer-'))
  const database = await binaryDatabase()
  const running = await serve(
    testConfig({
      ...cheap,
      ...overrides,
      port: 0,
      host: '0.0.0.0',
      databasePath: join(dir, 'c.db'),
      databaseUrl: database.env.DATABASE_URL,
    }),
    logger,
  )
  try {
    await run(Number(new URL(running.url).port))
  } finally {
    await running.shutdown('test')
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A logger keeping the warnings it is given, as JSON lines parsed. */
function capturedWarnings() {
  const lines: string[] = []
  return { logger: createLogger('json', 'warn', (line) => lines.push(line)), lines: () => lines.map((l) => JSON.parse(l)) }
}

describe('client addresses', () => {
  test('ten wrong passwords from one address lock only that address out, not the owner elsewhere', async () => {
    await onPeers({}, async (port) => {
      const owner = { username: 'owner', email: 'owner@example.com', password: 'the-right-password' }
      expect((await postFrom('127.0.0.4', port, '/api/users', { user: owner })).status).toBe(201)
      for (let i = 0; i < 10; i++) {
        const res = await postFrom('127.0.0.2', port, '/api/users/login', { user: { email: owner.email, password: `guess-${i}-wrong` } })
        expect(res.status).toBe(401)
      }
      const locked = await postFrom('127.0.0.2', port, '/api/users/login', { user: { email: owner.email, password: owner.password } })
      expect(locked.status).toBe(429)
      const elsewhere = await postFrom('127.0.0.3', port, '/api/users/login', { user: { email: owner.email, password: owner.password } })
      expect(elsewhere.status).toBe(200)
      expect(elsewhere.body.user.username).toBe('owner')
    })
  }, 20_000)

  test('failures from many addresses lock an account only to clients it has not signed in from: its owner’s still signs in', async () => {
    await onPeers({ loginThrottle: { enabled: true, perPair: 10, perAccount: 20, perAddress: 1000, windowSeconds: 900 } }, async (port) => {
      const owner = { username: 'owner', email: 'owner@example.com', password: 'the-right-password' }
      const login = (from: string, password: string) => postFrom(from, port, '/api/users/login', { user: { email: owner.email, password } })
      expect((await postFrom('127.0.0.4', port, '/api/users', { user: owner })).status).toBe(201)
      expect((await login('127.0.0.4', owner.password)).status).toBe(200)
      // 20 failures from two addresses: the account's budget spent
      for (const from of ['127.0.0.2', '127.0.0.3'])
        for (let i = 0; i < 10; i++) expect((await login(from, `guess-${i}-wrong`)).status).toBe(401)
      expect((await login('127.0.0.5', owner.password)).status).toBe(429)
      // the client the owner signed in from is not locked out, wrong or right
      expect((await login('127.0.0.4', 'one-typo-wrong')).status).toBe(401)
      const owners = await login('127.0.0.4', owner.password)
      expect({ status: owners.status, username: owners.body.user?.username }).toEqual({ status: 200, username: 'owner' })
    })
  }, 20_000)

  test('one password tried against many accounts from one address is stopped there; its own accounts and other addresses still sign in', async () => {
    const throttle = { enabled: true, perPair: 10, perAccount: 100, perAddress: 5, windowSeconds: 900 }
    const warnings = capturedWarnings()
    await onPeers(
      { loginThrottle: throttle },
      async (port) => {
        const user = (n: string) => ({ username: n, email: `${n}@example.com`, password: `${n}-right-password` })
        const login = (from: string, u: { email: string; password: string }) =>
          postFrom(from, port, '/api/users/login', { user: { email: u.email, password: u.password } })
        const mine = user('mine')
        const other = user('other')
        for (const u of [mine, other]) expect((await postFrom('127.0.0.4', port, '/api/users', { user: u })).status).toBe(201)
        // this address signed in to `mine` before: its successes spend nothing
        for (let i = 0; i < 3; i++) expect((await login('127.0.0.2', mine)).status).toBe(200)
        const sprayed = await Promise.all(
          Array.from({ length: 5 }, (_, i) => login('127.0.0.2', { ...user(`victim${i}`), password: 'Summer2026!' })),
        )
        expect(sprayed.map((r) => r.status)).toEqual([401, 401, 401, 401, 401])
        const sixth = await login('127.0.0.2', { ...user('victim5'), password: 'Summer2026!' })
        expect({ status: sixth.status, errors: sixth.body.errors }).toEqual({
          status: 429,
          errors: { login: ['too many failed attempts; try again later'] },
        })
        // refused before its password is checked: the right one is refused too
        expect((await login('127.0.0.2', other)).status).toBe(429)
        expect((await login('127.0.0.2', mine)).status).toBe(200)
        expect((await login('127.0.0.3', other)).status).toBe(200)
      },
      warnings.logger,
    )
    // one line, at the attempt that filled the window (not one per refusal); never an email
    expect(warnings.lines()).toEqual([
      expect.objectContaining({
        msg: 'login throttle engaged: further attempts are refused until the window ends',
        scope: 'client',
        client: '127.0.0.2',
        limit: 5,
        windowSeconds: 900,
      }),
    ])
    expect(warnings.lines()[0].retryAfterSeconds).toBeWithin(890, 901)
    expect(JSON.stringify(warnings.lines())).not.toContain('@')
  }, 20_000)

  test('registrations are counted per real client address: one address throttled, another still registers', async () => {
    const warnings = capturedWarnings()
    await onPeers(
      { registrationThrottle: { enabled: true, perAddress: 2, windowSeconds: 3600 } },
      async (port) => {
        const user = (n: string) => ({ user: { username: n, email: `${n}@example.com`, password: 'a-long-password' } })
        expect((await postFrom('127.0.0.2', port, '/api/users', user('first'))).status).toBe(201)
        expect((await postFrom('127.0.0.2', port, '/api/users', user('second'))).status).toBe(201)
        const third = await postFrom('127.0.0.2', port, '/api/users', user('third'))
        expect(third.status).toBe(429)
        expect(third.body.errors).toBeDefined()
        expect((await postFrom('127.0.0.2', port, '/api/users', user('fourth'))).status).toBe(429)
        expect((await postFrom('127.0.0.3', port, '/api/users', user('third'))).status).toBe(201)
      },
      warnings.logger,
    )
    expect(warnings.lines()).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/^registration throttle engaged/), client: '127.0.0.2', limit: 2 }),
    ])
  }, 20_000)
})

describe('list filters', () => {
  test(`take at most ${MAX_FILTER_VALUES} values each: more is a 422 naming the filter`, async () => {
    const app = await conduitApp()
    const values = (key: string, n: number) => Array.from({ length: n }, (_, i) => `${key}=v${i}`).join('&')
    const ok = await app.request('GET', `/api/articles?${values('tag', MAX_FILTER_VALUES)}`)
    expect(ok.status).toBe(200)
    const tooMany = await app.request(
      'GET',
      `/api/articles?${values('tag', MAX_FILTER_VALUES + 1)}&${values('author', MAX_FILTER_VALUES + 1)}`,
    )
    expect(tooMany.status).toBe(422)
    expect(tooMany.body).toEqual({
      errors: {
        tag: [`has too many values (maximum is ${MAX_FILTER_VALUES})`],
        author: [`has too many values (maximum is ${MAX_FILTER_VALUES})`],
      },
    })
  })
})

describe('caches', () => {
  test('spellings of one token share one cache entry: the cache is keyed by the token, not the header', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    for (const header of [`Token ${jake.token}`, `token ${jake.token}`, `Bearer ${jake.token}`, `TOKEN   ${jake.token}  `]) {
      const res = await app.request('GET', '/api/user', { headers: { authorization: header } })
      expect(res.status).toBe(200)
    }
    expect(app.app.caches.named('tokens').size).toBe(1)
  })

  test('long URLs count against the response cache budget with their keys', async () => {
    const app = await conduitApp()
    const cache = app.app.caches.responses
    const long = 'x'.repeat(16 * 1024)
    const path = (i: number) => `/api/articles?tag=${long}${i}`
    // 2,000 keys of 32 KB (UTF-16): 64 MiB, several times the whole cache's budget, in fewer entries than it may hold
    const n = 2_000
    for (let i = 0; i < n; i++) {
      const res = await app.request('GET', path(i))
      expect(res.status).toBe(200)
    }
    // its own accounting, keys included, stays within its budget
    expect(cache.weight).toBeLessThanOrEqual(cache.budget)
    // and, not taking that accounting's word: the keys it still holds fit in its budget
    let held = 0
    for (let i = 0; i < n; i++) if (cache.get(path(i)) !== undefined) held += path(i).length * 2
    expect(cache.get(path(n - 1))).toBeDefined() // the newest are kept
    expect(held).toBeLessThanOrEqual(cache.budget)
    // 2,000 reads: about 4 s on PostgreSQL, past bun's default 5 s when the machine is busy
  }, 30_000)
})

describe('the Host header', () => {
  test('a short Host cannot move routing: the path the log sees is the path that is served', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    for (const host of ['a', 'ab', 'abc']) {
      const res = await app.app.handle(new Request(`http://${host}/swagger/api/articles/${slug}`))
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ errors: { route: ['not found'] } })
      const article = await app.app.handle(new Request(`http://${host}/api/articles/${slug}`))
      expect(article.status).toBe(200)
      expect(article.headers.get('content-security-policy')).toStartWith("default-src 'none'")
    }
  })
})

describe('usernames', () => {
  const register = async (app: Awaited<ReturnType<typeof testApp>>, username: string) =>
    app.request('POST', '/api/users', {
      body: { user: { username, email: `${Math.random().toString(36).slice(2)}@example.com`, password: 'password123' } },
    })

  test('look-alikes of a taken name are refused: other spellings of the same NFKC form, full-width letters, ASCII case', async () => {
    const app = await testApp(cheap)
    expect((await register(app, 'alice')).status).toBe(201)
    expect((await register(app, 'café')).status).toBe(201)
    // (only ASCII letters fold case: "CAFÉ" and "café" differ in a non-ASCII letter, as the contract says)
    for (const name of ['ａｌｉｃｅ', 'ALICE', 'Alice', 'cafe\u0301', 'CAFe\u0301', 'ｃａｆé']) {
      const res = await register(app, name)
      expect({ name, status: res.status, body: res.body }).toEqual({
        name,
        status: 409,
        body: { errors: { username: ['has already been taken'] } },
      })
    }
  })

  test('invisible characters, mixed scripts and the path segments . and .. are refused', async () => {
    const app = await testApp(cheap)
    const cases: [string, string][] = [
      ['\u3164alice', 'is invalid'], // Hangul filler (a "letter" nobody sees)
      ['ali\u115Fce', 'is invalid'],
      ['.', 'is invalid'], // /profile/. is /profile/ to every browser
      ['..', 'is invalid'],
      ['．．', 'is invalid'], // full-width dots: `..` once in NFKC
      ['\u0430lice', 'mixes letters of different scripts'], // Cyrillic а
      ['pаypal', 'mixes letters of different scripts'],
      ['αlpha', 'mixes letters of different scripts'], // Greek alpha
    ]
    for (const [name, message] of cases) {
      const res = await register(app, name)
      expect({ name, status: res.status, body: res.body }).toEqual({ name, status: 422, body: { errors: { username: [message] } } })
    }
  })

  test('names of one script, or the script mixes languages use, are fine', async () => {
    const app = await testApp(cheap)
    for (const name of ['алиса', 'たなか太郎', '김민수', 'tanaka太郎', 'Ελένη', 'user_1.x-y', '...', '.x']) {
      const res = await register(app, name)
      expect({ name, status: res.status }).toEqual({ name, status: 201 })
      expect(res.body.user.username).toBe(name.normalize('NFKC'))
    }
  })

  test('a name is stored in NFKC and found by any spelling of it', async () => {
    const app = await testApp(cheap)
    const res = await register(app, 'ｊａｋｅ')
    expect(res.status).toBe(201)
    expect(res.body.user.username).toBe('jake')
    expect((await app.request('GET', '/api/profiles/JAKE')).body.profile.username).toBe('jake')
    expect((await app.request('GET', `/api/profiles/${encodeURIComponent('ｊａｋｅ')}`)).status).toBe(200)
  })
})

describe('registration', () => {
  test('is throttled per client address, while a taken email still answers the contract’s 409', async () => {
    const app = await testApp({ ...cheap, registrationThrottle: { enabled: true, perAddress: 3, windowSeconds: 60 } })
    const first = await registerUser(app)
    const taken = await app.request('POST', '/api/users', {
      body: { user: { username: 'other', email: first.email, password: 'password123' } },
    })
    expect(taken.status).toBe(409)
    expect(taken.body).toEqual({ errors: { email: ['has already been taken'] } })
    expect(
      (await app.request('POST', '/api/users', { body: { user: { username: 'third', email: 't@example.com', password: 'password123' } } }))
        .status,
    ).toBe(201)
    const refused = await app.request('POST', '/api/users', {
      body: { user: { username: 'fourth', email: 'f@example.com', password: 'password123' } },
    })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.body).toEqual({ errors: { registration: ['too many attempts from this address; try again later'] } })
    expect(await app.db.count("SELECT count(*) FROM users WHERE username = 'fourth'")).toBe(0)
  })

  test('an email change spends the registration budget: past it, a free email and a taken one get the same 429', async () => {
    const app = await testApp({ ...cheap, registrationThrottle: { enabled: true, perAddress: 5, windowSeconds: 60 } })
    // two registrations: 2 of the 5 spent
    const [taken, prober] = [await registerUser(app), await registerUser(app)]
    const put = (user: object) => app.request('PUT', '/api/user', { token: prober.token, body: { user } })
    // its own email (a client sending the whole form): no change, no budget spent
    for (let i = 0; i < 5; i++) expect((await put({ email: prober.email, bio: `same email ${i}` })).status).toBe(200)
    expect((await put({ email: `moved-${prober.email}` })).status).toBe(200)
    expect((await put({ email: taken.email, username: taken.username })).body).toEqual({
      errors: { email: ['has already been taken'], username: ['has already been taken'] },
    })
    expect((await put({ email: taken.email })).status).toBe(409)
    // the budget of 5 spent: whatever the email, the same answer, and nothing changes
    for (const email of [taken.email, `free-${prober.email}`]) {
      const refused = await put({ email })
      expect({ email, status: refused.status, body: refused.body }).toEqual({
        email,
        status: 429,
        body: { errors: { email: ['too many attempts from this address; try again later'] } },
      })
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    }
    // other changes go on
    expect((await put({ bio: 'still mine' })).body.user).toMatchObject({ email: `moved-${prober.email}`, bio: 'still mine' })
  })
})

describe('ids', () => {
  test('a deleted user’s id is never given to the next registrant, so their token never works again', async () => {
    const app = await testApp(cheap)
    await registerUsers(app, 2)
    const gone = await registerUser(app)
    const goneId = (await app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', gone.username))!.id
    await app.db.run('DELETE FROM users WHERE id = ?', goneId)
    const next = await registerUser(app)
    const nextId = (await app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', next.username))!.id
    expect(nextId).toBeGreaterThan(goneId)
    expect((await app.request('GET', '/api/user', { token: gone.token })).status).toBe(401)
  })

  test('a deleted newest comment’s id is never given to the next comment', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const add = async (body: string) =>
      (await app.request('POST', `/api/articles/${slug}/comments`, { token: jake.token, body: { comment: { body } } })).body.comment
        .id as number
    await add('first')
    const newest = await add('second')
    expect((await app.request('DELETE', `/api/articles/${slug}/comments/${newest}`, { token: jake.token })).status).toBe(204)
    const next = await add('third')
    expect(next).toBeGreaterThan(newest)
    const listed = (await app.request('GET', `/api/articles/${slug}/comments`)).body.comments.map((c: { id: number; body: string }) => [
      c.id,
      c.body,
    ])
    expect(listed).toEqual([
      [newest - 1, 'first'],
      [next, 'third'],
    ])
  })
})

describe('requests without a Host header (HTTP/1.0, as health checkers send them)', () => {
  test('are answered for the path they name', async () => {
    await onPeers({}, async (port) => {
      const raw = (request: string) =>
        new Promise<string>((resolve) => {
          let text = ''
          void Bun.connect({
            hostname: '127.0.0.1',
            port,
            socket: {
              open: (s) => void s.write(request),
              data: (_s, d) => void (text += d.toString()),
              close: () => resolve(text),
            },
          })
          setTimeout(() => resolve(text), 3000)
        })
      const ready = await raw('GET /ready HTTP/1.0\r\n\r\n')
      expect(ready.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
      expect(ready).toContain('{"status":"ready"}')
      const tags = await raw('GET /api/tags HTTP/1.0\r\n\r\n')
      expect(tags.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
      expect(tags).toContain('{"tags":[]}')
    })
  }, 20_000)
})
