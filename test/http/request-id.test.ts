import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { createLogger } from '../../src/log.ts'
import { testConfig } from '../support/app.ts'
import { testDatabase } from '../support/backend.ts'

const cheap = { passwordHash: { memoryCost: 256, timeCost: 1 } }

/** Every kind of answer: the fast path's (a cache miss, then a hit), the framework's, errors of each source, a preflight, the fixed pages. */
const KINDS: [string, string, string | undefined][] = [
  ['GET', '/api/tags', undefined],
  ['GET', '/api/tags', undefined],
  ['GET', '/api/articles?limit=2', undefined],
  ['GET', '/api/articles/no-such-article', undefined],
  ['GET', '/api/articles?limit=zero', undefined],
  ['GET', '/api/user', undefined],
  ['POST', '/api/users', '{not json'],
  ['POST', '/api/users', '{"user":{}}'],
  ['PUT', '/api/nowhere', undefined],
  ['OPTIONS', '/api/articles', undefined],
  ['GET', '/health', undefined],
  ['GET', '/ready', undefined],
  ['GET', '/swagger/json', undefined],
  ['GET', '/metrics', undefined],
  // a body over the limit (413), and a throttled login (401, then 429: one attempt per pair here)
  ['POST', '/api/users', JSON.stringify({ user: { bio: 'x'.repeat(2000) } })],
  ['POST', '/api/users/login', '{"user":{"email":"nobody@example.com","password":"wrong-password"}}'],
  ['POST', '/api/users/login', '{"user":{"email":"nobody@example.com","password":"wrong-password"}}'],
]

async function apps() {
  const db = await testDatabase()
  const config = testConfig({
    ...cheap,
    metricsToken: 'request-id-test-token',
    bodyLimitBytes: 1024,
    loginThrottle: { enabled: true, perPair: 1, perAccount: 100, perAddress: 1000, windowSeconds: 60 },
  })
  const lines: Record<string, unknown>[] = []
  const logger = createLogger('json', 'info', (l) => lines.push(JSON.parse(l)))
  const fast = await createApp({ store: db.store, config, logger })
  const framework = await createApp({ store: db.store, config: { ...config, fastPath: false }, logger })
  return { lines, both: [['fast path on', fast] as const, ['fast path off', framework] as const] }
}

const send = (app: { handle(r: Request): Promise<Response> }, method: string, path: string, body?: string, id?: string) =>
  app.handle(
    new Request(`http://localhost${path}`, {
      method,
      body,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(id === undefined ? {} : { 'x-request-id': id }) },
    }),
  )

describe('X-Request-Id', () => {
  test('every kind of answer, from both dispatchers, echoes a sane incoming id and logs it', async () => {
    const { lines, both } = await apps()
    const statuses = new Set<number>()
    for (const [name, app] of both) {
      for (const [i, [method, path, body]] of KINDS.entries()) {
        const id = `proxy-${name.replace(/ /g, '_')}-${i}:a/b+c=d@e.f`
        const res = await send(app, method, path, body, id)
        statuses.add(res.status)
        expect([name, method, path, res.headers.get('x-request-id')]).toEqual([name, method, path, id])
      }
    }
    // the kinds above really are different answers
    expect([...statuses].sort()).toEqual([200, 204, 400, 401, 404, 413, 422, 429])
    const logged = lines.filter((l) => l.msg === 'request').map((l) => l.request_id)
    expect(logged.length).toBe(KINDS.length * 2)
    expect(logged.every((id) => typeof id === 'string' && id.startsWith('proxy-'))).toBe(true)
  })

  test('every kind of answer gets a new, distinct id when none was sent, and the log line has it', async () => {
    const { lines, both } = await apps()
    const ids: string[] = []
    for (const [, app] of both) {
      for (const [method, path, body] of KINDS) {
        const id = (await send(app, method, path, body)).headers.get('x-request-id')
        expect(id).toMatch(/^[0-9a-f]{16}-[0-9a-z]+$/)
        ids.push(id!)
      }
    }
    expect(new Set(ids).size).toBe(ids.length)
    const logged = lines.filter((l) => l.msg === 'request').map((l) => l.request_id)
    expect(logged.sort()).toEqual([...ids].sort())
  })

  test('an incoming id that is too long, empty, or has spaces, quotes or commas is replaced', async () => {
    const { both } = await apps()
    const insane = ['x'.repeat(129), 'x'.repeat(500), '', 'two words', 'say "hi"', "it's", 'a,b', 'tab\there', 'ünïcode', '<script>']
    for (const [name, app] of both) {
      for (const [method, path, body] of [KINDS[0]!, KINDS[1]!, KINDS[3]!, KINDS[8]!, KINDS[9]!]) {
        for (const given of insane) {
          const got = (await send(app, method, path, body, given)).headers.get('x-request-id')
          expect([name, method, path, given, got === given]).toEqual([name, method, path, given, false])
          expect(got).toMatch(/^[0-9a-f]{16}-[0-9a-z]+$/)
        }
      }
      // the longest kept, and one longer
      expect((await send(app, 'GET', '/api/tags', undefined, 'y'.repeat(128))).headers.get('x-request-id')).toBe('y'.repeat(128))
    }
  })
})
