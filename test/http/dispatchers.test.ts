import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type App, createApp } from '../../src/app.ts'
import { signToken } from '../../src/auth/jwt.ts'
import { mulberry32 } from '../../src/random.ts'
import { send, testConfig } from '../support/app.ts'
import { checkAnswer } from '../support/contract.ts'
import { binaryDatabase, onPostgres, testDatabase } from '../support/backend.ts'
import { FIXTURE_TAGS, urlVariants } from '../support/url-variants.ts'
import { api, declarations, type Server, startServer, tempDir, useBinary } from '../e2e/support.ts'

/**
 * One declaration per route, two dispatchers: a plain GET may be answered
 * before the framework (from caches, or by the route's read) or by the
 * framework's route. Both must answer every URL alike, in status, body and
 * headers, whichever answered first and whatever the other kept in the
 * response cache meanwhile: anonymous readers, a signed-in reader with no
 * flags to show (whose answer is kept as the anonymous one), and one with
 * flags. Each viewer's first request with a token goes through the
 * framework (a token is verified once before the fast path trusts it), so
 * each URL is asked first with a token never used before.
 */

const SECRET = 'a-test-secret-of-at-least-32-characters!!'
const cheap = { passwordHash: { memoryCost: 256, timeCost: 1 } }

interface Answer {
  status: number
  body: string
  headers: [string, string][]
}
/**
 * A token an answer carries, as its claims without its own id (`jti`, random
 * in every token issued) and with its lifetime instead of its times: two
 * paths asked in turn may issue it in different seconds.
 */
const withoutTokenId = (body: string) =>
  body.replace(/"token":"([^".]+)\.([^".]+)\.[^"]+"/g, (_m, _h, payload: string) => {
    const { jti: _id, iat, exp, ...claims } = JSON.parse(Buffer.from(payload, 'base64url').toString())
    return `"token":${JSON.stringify(`claims ${JSON.stringify({ ...claims, lifetime: exp - iat })}`)}`
  })
const answerOf = async (res: Response): Promise<Answer> => ({
  status: res.status,
  body: withoutTokenId(await res.text()),
  headers: [...res.headers].filter(([k]) => k !== 'date').sort(([a], [b]) => a.localeCompare(b)),
})

/**
 * A request's headers: the token, if any, and a fixed X-Request-Id, which
 * both paths echo (a new id per answer would differ in every comparison).
 */
const asked = (token?: string) => ({
  headers: { 'x-request-id': 'dispatch-comparison', ...(token ? { authorization: `Token ${token}` } : {}) },
})

/** Writes the fixture through `call`; returns the article's slug, the users' ids. */
async function fixture(call: (method: string, path: string, body?: unknown, token?: string) => Promise<{ status: number; body: any }>) {
  const users: Record<string, { token: string; id: number }> = {}
  for (const name of ['ann', 'bob', 'cat', 'dan']) {
    const r = await call('POST', '/api/users', { user: { username: name, email: `${name}@example.com`, password: 'password123' } })
    expect(r.status).toBe(201)
    const claims = JSON.parse(Buffer.from(r.body.user.token.split('.')[1], 'base64url').toString())
    users[name] = { token: r.body.user.token, id: claims.sub }
  }
  const slugs: string[] = []
  for (const [i, tag] of FIXTURE_TAGS.entries()) {
    const author = i % 3 === 0 ? 'dan' : 'ann'
    const r = await call(
      'POST',
      '/api/articles',
      { article: { title: `Post ${i}`, description: 'd', body: 'b', tagList: [tag] } },
      users[author]!.token,
    )
    expect(r.status).toBe(201)
    slugs.push(r.body.article.slug)
  }
  // cat follows ann and favorites two articles; dan favorites one; ann comments
  expect((await call('POST', '/api/profiles/ann/follow', undefined, users.cat!.token)).status).toBe(200)
  for (const s of [slugs[1]!, slugs[3]!])
    expect((await call('POST', `/api/articles/${s}/favorite`, undefined, users.cat!.token)).status).toBe(200)
  expect((await call('POST', `/api/articles/${slugs[2]}/favorite`, undefined, users.dan!.token)).status).toBe(200)
  expect((await call('POST', `/api/articles/${slugs[1]}/comments`, { comment: { body: 'hi' } }, users.ann!.token)).status).toBe(201)
  return { slug: slugs[1]!, users }
}

/** A token for `user` that no app has seen yet (each has its own expiry). */
let fresh = 0
const newToken = (id: number) => {
  const iat = Math.floor(Date.now() / 1000)
  return signToken(SECRET, { sub: id, ver: 0, iat, exp: iat + 3600 + ++fresh })
}

describe('both dispatchers answer every URL alike', () => {
  test('in one process: fast path on (two apps) against off, three viewers, first requests through either path', async () => {
    const db = await testDatabase()
    const config = testConfig({ jwtSecret: SECRET, ...cheap })
    const reference = await createApp({ store: db.store, config: { ...config, fastPath: false } })
    const fastA = await createApp({ store: db.store, config })
    const fastB = await createApp({ store: db.store, config })
    const call = async (method: string, path: string, body?: unknown, token?: string) => send(reference, method, path, { body, token })
    const { slug, users } = await fixture(call)
    const ask = async (app: App, url: string, token?: string) =>
      answerOf(await app.handle(new Request(`http://localhost${url}`, asked(token))))

    const random = mulberry32(7)
    const mismatches: string[] = []
    let compared = 0
    const urls = urlVariants(slug, 'ann', 'cat')
    for (const url of urls) {
      // each URL: a first request with a token never seen, then the same again (trusted, fast), per viewer, in a shuffled order
      const viewers: [string, () => string | undefined][] = [
        ['anonymous', () => undefined],
        ['bob', () => newToken(users.bob!.id)],
        ['cat', () => newToken(users.cat!.id)],
      ]
      viewers.sort(() => random() - 0.5)
      for (const [who, token] of viewers) {
        const t = token()
        const expected = await ask(reference, url, t)
        // the answer agrees with its route's declaration (status, schema); the others must equal it
        checkAnswer(reference.declared, 'GET', new URL(url, 'http://localhost').href, expected.status, expected.body)
        for (const [name, app] of [
          ['fast A', fastA],
          ['fast B', fastB],
        ] as const) {
          for (const round of ['first', 'again']) {
            const got = await ask(app, url, t)
            compared++
            if (JSON.stringify(got) !== JSON.stringify(expected)) {
              mismatches.push(
                `${who} ${round} on ${name}: ${url}\n  expected ${JSON.stringify(expected)}\n  got      ${JSON.stringify(got)}`,
              )
            }
          }
        }
      }
    }
    expect(urls.length).toBeGreaterThan(200)
    expect(compared).toBe(urls.length * 3 * 4)
    expect(mismatches.slice(0, 5)).toEqual([])
  }, 120_000)

  test('the comma, bracket and repeated-value reproductions of the issue: literal values, ORed, the same on both paths', async () => {
    const db = await testDatabase()
    const config = testConfig({ jwtSecret: SECRET, ...cheap })
    const routes = await createApp({ store: db.store, config: { ...config, fastPath: false } })
    const fast = await createApp({ store: db.store, config })
    const { users } = await fixture((method, path, body, token) => send(routes, method, path, { body, token }))
    const tagsOf = async (app: App, url: string, token?: string) => {
      const r = await send(app, 'GET', url, { token })
      expect(r.status).toBe(200)
      return r.body.articles.map((a: { tagList: string[] }) => a.tagList[0]).sort()
    }
    for (const app of [routes, fast]) {
      expect(await tagsOf(app, '/api/articles?tag=x,y&tag=a')).toEqual(['a', 'x,y'])
      expect(await tagsOf(app, '/api/articles?tag=x,y&tag=a&z=1')).toEqual(['a', 'x,y'])
      expect(await tagsOf(app, '/api/articles?tag=a&tag=x,y', newToken(users.bob!.id))).toEqual(['a', 'x,y'])
      expect(await tagsOf(app, '/api/articles?tag=[a,b]')).toEqual(['[a,b]'])
      expect(await tagsOf(app, '/api/articles?tag=a+b')).toEqual(['a b'])
      expect(await tagsOf(app, '/api/articles?tag=a%2Bb')).toEqual(['a+b'])
      expect(await tagsOf(app, '/api/articles?author=ann,dan&author=cat')).toEqual([])
      expect((await send(app, 'GET', '/api/articles?author=ann&author=dan')).body.articlesCount).toBe(FIXTURE_TAGS.length)
      // ten values are fine, eleven are too many, counted as given (a comma never splits)
      const values = (n: number) => Array.from({ length: n }, (_, i) => `tag=${i},${i}`).join('&')
      expect((await send(app, 'GET', `/api/articles?${values(10)}`)).status).toBe(200)
      expect((await send(app, 'GET', `/api/articles?${values(11)}`)).body).toEqual({
        errors: { tag: ['has too many values (maximum is 10)'] },
      })
      expect((await send(app, 'GET', '/api/articles?limit=2&limit=3')).body).toEqual({ errors: { limit: ['must be given only once'] } })
    }
  })
})

/** Two instances of the binary on one database, one answering before the framework and one not. */
describe(`two instances on one ${onPostgres ? 'PostgreSQL' : 'SQLite'} database, fast path on and off`, () => {
  const binary = useBinary()
  let on: Server
  let off: Server
  beforeAll(async () => {
    const db = await binaryDatabase()
    const file = join(tempDir(), 'shared.db')
    const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', JWT_SECRET: SECRET, ...(onPostgres ? db.env : { DATABASE_PATH: file }) }
    on = await startServer(binary(), { env })
    off = await startServer(binary(), { env: { ...env, FAST_PATH: 'false' } })
  }, 60_000)
  afterAll(async () => {
    await on?.stop()
    await off?.stop()
  })

  /** the fixture, written once through the instance without the fast path */
  let made: Promise<Awaited<ReturnType<typeof fixture>>> | undefined
  const written = () =>
    (made ??= fixture(async (method, path, body, token) => {
      const r = await api(off.url, method, path, { body, token })
      return { status: r.status, body: r.body }
    }))

  test('every URL variant answers the same from both, for three viewers, first requests and again', async () => {
    const { slug, users } = await written()
    const ask = async (base: string, url: string, token?: string) => answerOf(await fetch(`${base}${url}`, asked(token)))
    const mismatches: string[] = []
    const urls = urlVariants(slug, 'ann', 'cat')
    for (const url of urls) {
      for (const [who, id] of [
        ['anonymous', 0],
        ['bob', users.bob!.id],
        ['cat', users.cat!.id],
      ] as const) {
        const t = id ? newToken(id) : undefined
        // the instance with the fast path first on odd URLs, second on even ones
        const first = urls.indexOf(url) % 2 ? on : off
        const second = first === on ? off : on
        const a = await ask(first.url, url, t)
        checkAnswer(await declarations(), 'GET', new URL(url, first.url).href, a.status, a.body)
        const b = await ask(second.url, url, t)
        const again = await ask(on.url, url, t)
        for (const [what, got] of [
          ['other instance', b],
          ['again', again],
        ] as const) {
          if (JSON.stringify(got) !== JSON.stringify(a))
            mismatches.push(`${who} ${what}: ${url}\n  ${JSON.stringify(a)}\n  ${JSON.stringify(got)}`)
        }
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([])
  }, 120_000)

  test('dot segments sent raw (as curl --path-as-is does; fetch would resolve them first) answer the same from both', async () => {
    const { slug, users } = await written()
    const paths = [
      `/api/articles/./${slug}`,
      `/api/articles/x/../${slug}`,
      `/api/articles/%2e/${slug}`,
      `/api/articles/%2E%2E/articles/${slug}`,
      `/api/./articles/${slug}/comments`,
      '/api/./tags',
      '/api/articles/../tags',
      '/api/../api/tags',
      '/./api/articles?limit=2',
      '/api/articles/./?limit=2',
      '/api/articles/feed/.',
      '/api/profiles/./ann',
      '/api/profiles/ann/..',
    ]
    const mismatches: string[] = []
    const statuses = new Set<number>()
    for (const path of paths) {
      for (const token of [undefined, newToken(users.cat!.id)]) {
        const a = await rawGet(off.port, path, token)
        const b = await rawGet(on.port, path, token)
        const again = await rawGet(on.port, path, token)
        statuses.add(a.status)
        for (const got of [b, again])
          if (JSON.stringify(got) !== JSON.stringify(a)) mismatches.push(`${path}\n  ${JSON.stringify(a)}\n  ${JSON.stringify(got)}`)
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([])
    // the paths were really sent as written: not every one of them is a plain 200
    expect(statuses.size).toBeGreaterThan(1)
  }, 60_000)
})

/** A GET whose request line carries `path` exactly as given (no URL resolution), over a connection of its own. */
async function rawGet(port: number, path: string, token?: string): Promise<Answer> {
  const chunks: Buffer[] = []
  const { promise, resolve, reject } = Promise.withResolvers<void>()
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data: (_s, data) => void chunks.push(Buffer.from(data)),
      close: () => resolve(),
      error: (_s, e) => reject(e),
    },
  })
  const lines = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close', 'X-Request-Id: dispatch-comparison']
  if (token) lines.push(`Authorization: Token ${token}`)
  socket.write(`${lines.join('\r\n')}\r\n\r\n`)
  await promise
  const raw = Buffer.concat(chunks).toString('latin1')
  const end = raw.indexOf('\r\n\r\n')
  const [statusLine = '', ...headerLines] = raw.slice(0, end).split('\r\n')
  const headers = headerLines
    .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string])
    .filter(([k]) => k !== 'date')
    .sort(([a], [b]) => a.localeCompare(b))
  let body = raw.slice(end + 4)
  if (headers.some(([k, v]) => k === 'transfer-encoding' && v === 'chunked')) {
    let out = ''
    for (let at = 0; ; ) {
      const eol = body.indexOf('\r\n', at)
      const size = Number.parseInt(body.slice(at, eol), 16)
      if (!size) break
      out += body.slice(eol + 2, eol + 2 + size)
      at = eol + 2 + size + 2
    }
    body = out
  }
  return { status: Number(statusLine.split(' ')[1]), body: Buffer.from(body, 'latin1').toString('utf8'), headers }
}
