import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { createApp } from '../src/app.ts'
import { signToken } from '../src/auth/jwt.ts'
import { defaults } from '../src/config.ts'
import { changeTracker, VersionedCache } from '../src/db/changes.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrate } from '../src/db/migrate.ts'
import { ResponseCache } from '../src/http/responses.ts'
import { conduitApp, favorite, registerUsers } from './support/conduit.ts'
import { createArticle } from './support/fixtures.ts'

/**
 * Answers are cached per viewer and URL, and verified tokens are remembered
 * (src/http/responses.ts, src/auth/plugin.ts). These tests pin what the
 * caches must never do: serve a revoked or expired token, or one viewer's
 * answer to another.
 */
describe('cached answers', () => {
  test('a password change revokes the old token even for a URL it was answered at before', async () => {
    const app = conduitApp()
    const [jake] = await registerUsers(app, 1)
    await createArticle(app, jake!.token)
    for (let i = 0; i < 2; i++) expect((await app.request('GET', '/api/articles', { token: jake!.token })).status).toBe(200)
    const changed = await app.request('PUT', '/api/user', { token: jake!.token, body: { user: { password: 'a new password' } } })
    expect(changed.status).toBe(200)
    const old = await app.request('GET', '/api/articles', { token: jake!.token })
    expect(old.status).toBe(401)
    expect(old.body).toEqual({ errors: { token: ['is invalid'] } })
    expect((await app.request('GET', '/api/articles', { token: changed.body.user.token })).status).toBe(200)
  })

  test('a token that expires is refused after it expires, though it was verified and cached before', async () => {
    const app = conduitApp()
    const [jake] = await registerUsers(app, 1)
    const secret = (app.db.query("SELECT value FROM settings WHERE key = 'jwt_secret'").get() as { value: string }).value
    const id = (app.db.query('SELECT id FROM users WHERE username = ?').get(jake!.username) as { id: number }).id
    const now = Math.floor(Date.now() / 1000)
    const shortLived = signToken(secret, { sub: id, ver: 0, iat: now, exp: now + 1 })
    for (let i = 0; i < 2; i++) expect((await app.request('GET', '/api/articles', { token: shortLived })).status).toBe(200)
    await Bun.sleep(2100 - (Date.now() % 1000))
    const late = await app.request('GET', '/api/articles', { token: shortLived })
    expect(late.status).toBe(401)
  })

  test('each viewer gets their own flags at the same URL, anonymous callers none', async () => {
    const app = conduitApp()
    const [author, fan, other] = await registerUsers(app, 3)
    const article = await createArticle(app, author!.token)
    await favorite(app, fan!.token, article.slug)
    const flag = async (token?: string) => {
      const res = await app.request('GET', '/api/articles', token ? { token } : {})
      return res.body.articles[0].favorited
    }
    for (let i = 0; i < 2; i++) {
      expect(await flag(fan!.token)).toBe(true)
      expect(await flag(other!.token)).toBe(false)
      expect(await flag()).toBe(false)
    }
  })

  test('a write by another connection to the same file is seen at once', async () => {
    const dir = `/tmp/conduit-cache-${process.pid}-${Date.now()}`
    await Bun.$`mkdir -p ${dir}`
    try {
      const path = `${dir}/c.db`
      const db = openDatabase(path)
      migrate(db)
      // the support module builds in-memory apps; this one needs a file a second connection can open
      const app = createApp({ db, config: { ...defaults, passwordHash: { memoryCost: 256, timeCost: 1 } } })
      const get = async () => (await (await app.handle(new Request('http://localhost/api/tags'))).json()) as { tags: string[] }
      expect(await get()).toEqual({ tags: [] })
      expect(await get()).toEqual({ tags: [] }) // now cached
      // another process (here: another connection) adds a tagged article
      const other = new Database(path, { strict: true })
      other.run("INSERT INTO users (username, email, password_hash, created_at) VALUES ('x', 'x@x.io', 'h', 0)")
      other.run("INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES ('s', 't', 'd', 'b', 1, 1, 1)")
      other.run("INSERT INTO tags (name) VALUES ('fresh')")
      other.run('INSERT INTO article_tags (tag_id, article_id) VALUES (1, 1)')
      other.close()
      expect(await get()).toEqual({ tags: ['fresh'] })
      db.close()
    } finally {
      await Bun.$`rm -rf ${dir}`
    }
  })
})

describe('VersionedCache', () => {
  const tracker = () => {
    const db = openDatabase(':memory:')
    return changeTracker(db)
  }

  test('forgets everything when content changes', () => {
    const changes = tracker()
    const cache = new VersionedCache<string, string>(changes)
    expect(cache.get('a', () => 'one')).toBe('one')
    expect(cache.get('a', () => 'two')).toBe('one')
    changes.changed()
    expect(cache.peek('a')).toBeUndefined()
    expect(cache.get('a', () => 'two')).toBe('two')
  })

  test('keeps within its size budget, dropping the oldest first', () => {
    const cache = new VersionedCache<string, string>(tracker(), 100, 10)
    cache.get('a', () => 'xxxx')
    cache.get('b', () => 'yyyy')
    cache.get('c', () => 'zzzz') // 12 characters would be over budget: 'a' goes
    expect(cache.peek('a')).toBeUndefined()
    expect(cache.peek('b')).toBe('yyyy')
    expect(cache.peek('c')).toBe('zzzz')
    expect(cache.get('huge', () => 'h'.repeat(11))).toBe('h'.repeat(11)) // larger than the budget: not kept
    expect(cache.peek('huge')).toBeUndefined()
    expect(cache.peek('c')).toBe('zzzz')
  })

  test('keeps within its entry budget', () => {
    const cache = new VersionedCache<number, number>(tracker(), 2)
    for (const k of [1, 2, 3]) cache.get(k, () => k * 10)
    expect([cache.peek(1), cache.peek(2), cache.peek(3)]).toEqual([undefined, 20, 30])
  })
})

describe('ResponseCache', () => {
  test('keeps answers only for URLs whose parameters the route knows', () => {
    const cache = new ResponseCache(changeTracker(openDatabase(':memory:')))
    let builds = 0
    const build = () => `{"n":${++builds}}`
    const known = new Set(['limit'])
    const body = (url: string) => new TextDecoder().decode(Buffer.from(cache.body(null, url, known, build)))
    expect(body('http://l/api/articles?limit=5')).toBe('{"n":1}')
    expect(body('http://l/api/articles?limit=5')).toBe('{"n":1}') // kept
    expect(body('http://l/api/articles?limit=5&junk=1')).toBe('{"n":2}')
    expect(body('http://l/api/articles?limit=5&junk=1')).toBe('{"n":3}') // never kept
    expect(cache.peek(0, 'http://l/api/articles?limit=5&junk=1')).toBeUndefined()
    expect(body('http://l/api/articles')).toBe('{"n":4}')
    expect(body('http://l/api/articles')).toBe('{"n":4}')
  })
})
