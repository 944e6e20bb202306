import { binaryDatabase, type QueryDb } from '../support/backend.ts'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { api, type Server, startServer, useBinary } from '../e2e/support.ts'
import { testApp } from '../support/app.ts'
import { mulberry32 } from '../../src/random.ts'
import { dbStats } from '../../src/db/stats.ts'
import { skipIf, why } from '../support/skip.ts'
import { storageViolations } from './invariants.ts'

/**
 * Conflicting requests sent at once, through the app in process (testApp)
 * and against the compiled binary over 127.0.0.1 (where requests really
 * interleave at every await: password hashing, body reading, the socket).
 * After each scenario the contract's invariants are checked through the API
 * and on the stored rows (counters against rows, no orphans).
 */

interface Res {
  status: number
  body: any
  text: string
}
interface Client {
  request(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<Res>
  db: QueryDb
}
interface User {
  username: string
  email: string
  token: string
}

let counter = 0
const unique = (prefix: string) => `${prefix}${++counter}${Math.random().toString(36).slice(2, 7)}`
const times = <T>(n: number, make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)))
const statuses = (all: Res[]) => all.map((r) => r.status).sort()
const enc = encodeURIComponent

async function register(c: Client): Promise<User> {
  const username = unique('cc')
  const user = { username, email: `${username}@example.com`, password: 'password123' }
  const res = await c.request('POST', '/api/users', { body: { user } })
  expect(res.status).toBe(201)
  return { username, email: user.email, token: res.body.user.token }
}
const registerMany = (c: Client, n: number) => times(n, () => register(c))

async function createArticle(c: Client, token: string, article: Record<string, unknown> = {}) {
  const res = await c.request('POST', '/api/articles', {
    token,
    body: { article: { title: unique('Concurrent '), description: 'd', body: 'b', ...article } },
  })
  expect(res.status).toBe(201)
  return res.body.article as { slug: string; title: string; tagList: string[] }
}

const count = (c: Client, sql: string, ...params: (string | number)[]) => c.db.count(sql, ...params)

/** The contract's invariants, through the API and on the rows. */
async function expectConsistent(c: Client) {
  expect(await storageViolations(c.db)).toEqual([])
  const list = await c.request('GET', '/api/articles?limit=1')
  expect(list.status).toBe(200)
  expect(list.body.articlesCount).toBe(await count(c, 'SELECT count(*) AS n FROM articles'))
  const tags = await c.request('GET', '/api/tags')
  expect(tags.status).toBe(200)
  const expected = (
    await c.db.all<{ name: string }>(
      'SELECT t.name FROM tags t JOIN article_tags x ON x.tag_id = t.id GROUP BY t.id, t.name ORDER BY count(*) DESC, t.name',
    )
  ).map((r) => r.name)
  // the API orders ties in code-point order: SQLite's BINARY collation and the "C" one of the tag column
  expect(tags.body.tags).toEqual(expected)
}

async function getArticle(c: Client, slug: string, token?: string) {
  return c.request('GET', `/api/articles/${enc(slug)}`, token ? { token } : {})
}

// ------------------------------------------------------------------ scenarios

const scenarios: [string, (c: Client) => Promise<void>][] = [
  [
    'the same favorite by the same user 20x at once: all 200, counted once; then 20 unfavorites: 0',
    async (c) => {
      const [author, fan] = await registerMany(c, 2)
      const { slug } = await createArticle(c, author!.token)
      const favs = await times(20, () => c.request('POST', `/api/articles/${enc(slug)}/favorite`, { token: fan!.token }))
      expect(statuses(favs)).toEqual(Array(20).fill(200))
      for (const r of favs) expect(r.body.article).toMatchObject({ favorited: true, favoritesCount: 1 })
      expect((await getArticle(c, slug)).body.article.favoritesCount).toBe(1)
      expect(await count(c, 'SELECT favorites_count AS n FROM users WHERE username = ?', fan!.username)).toBe(1)
      await expectConsistent(c)

      const unfavs = await times(20, () => c.request('DELETE', `/api/articles/${enc(slug)}/favorite`, { token: fan!.token }))
      expect(statuses(unfavs)).toEqual(Array(20).fill(200))
      for (const r of unfavs) expect(r.body.article).toMatchObject({ favorited: false, favoritesCount: 0 })
      expect((await getArticle(c, slug)).body.article.favoritesCount).toBe(0)
      await expectConsistent(c)
    },
  ],
  [
    'favorite and unfavorite of one pair interleaved 20x: every answer 200 and the end state agrees with the count',
    async (c) => {
      const [author, fan] = await registerMany(c, 2)
      const { slug } = await createArticle(c, author!.token)
      const all = await times(20, (i) => c.request(i % 2 ? 'DELETE' : 'POST', `/api/articles/${enc(slug)}/favorite`, { token: fan!.token }))
      expect(statuses(all)).toEqual(Array(20).fill(200))
      for (const r of all) expect(r.body.article.favoritesCount).toBe(r.body.article.favorited ? 1 : 0)
      const seen = (await getArticle(c, slug, fan!.token)).body.article
      expect(seen.favoritesCount).toBe(seen.favorited ? 1 : 0)
      await expectConsistent(c)
    },
  ],
  [
    'the same follow 20x at once: all 200 following, one row; then 20 unfollows: none',
    async (c) => {
      const [fan, star] = await registerMany(c, 2)
      const follows = await times(20, () => c.request('POST', `/api/profiles/${enc(star!.username)}/follow`, { token: fan!.token }))
      expect(statuses(follows)).toEqual(Array(20).fill(200))
      for (const r of follows) expect(r.body.profile).toMatchObject({ username: star!.username, following: true })
      const rows = () =>
        c.db.count(
          'SELECT count(*) AS n FROM follows f JOIN users a ON a.id = f.follower_id JOIN users b ON b.id = f.followee_id WHERE a.username = ? AND b.username = ?',
          fan!.username,
          star!.username,
        )
      expect(await rows()).toBe(1)
      const unfollows = await times(20, () => c.request('DELETE', `/api/profiles/${enc(star!.username)}/follow`, { token: fan!.token }))
      expect(statuses(unfollows)).toEqual(Array(20).fill(200))
      for (const r of unfollows) expect(r.body.profile.following).toBe(false)
      expect(await rows()).toBe(0)
      expect((await c.request('GET', `/api/profiles/${enc(star!.username)}`, { token: fan!.token })).body.profile.following).toBe(false)
      await expectConsistent(c)
    },
  ],
  [
    'the same title 10x at once (two authors): ten 201s with ten distinct slugs base, base-2 .. base-10',
    async (c) => {
      const authors = await registerMany(c, 2)
      const title = unique('Same Title ')
      const base = title.toLowerCase().replace(/[^a-z0-9]+/g, '-')
      const all = await times(10, (i) =>
        c.request('POST', '/api/articles', {
          token: authors[i % 2]!.token,
          body: { article: { title, description: 'd', body: `body ${i}`, tagList: ['same-title', `n${i}`] } },
        }),
      )
      expect(statuses(all)).toEqual(Array(10).fill(201))
      const slugs = all.map((r) => r.body.article.slug as string)
      expect([...slugs].sort()).toEqual([base, ...Array.from({ length: 9 }, (_, i) => `${base}-${i + 2}`)].sort())
      // each slug names the article its response described
      for (const r of all) {
        const got = await getArticle(c, r.body.article.slug)
        expect(got.status).toBe(200)
        expect(got.body.article.body).toBe(r.body.article.body)
      }
      expect((await c.request('GET', '/api/articles?tag=same-title&limit=1')).body.articlesCount).toBeGreaterThanOrEqual(10)
      await expectConsistent(c)
    },
  ],
  [
    'the same email registered 10x at once: exactly one 201, nine 409 "email has already been taken"',
    async (c) => {
      const name = unique('dup')
      const all = await times(10, (i) =>
        c.request('POST', '/api/users', {
          body: {
            user: { username: `${name}_${i}`, email: i % 2 ? `${name}@EXAMPLE.com` : `${name}@example.com`, password: 'password123' },
          },
        }),
      )
      expect(statuses(all)).toEqual([201, ...Array(9).fill(409)])
      for (const r of all.filter((x) => x.status === 409)) expect(r.body).toEqual({ errors: { email: ['has already been taken'] } })
      expect(await count(c, 'SELECT count(*) AS n FROM users WHERE email = ?', `${name}@example.com`)).toBe(1)
      // the one account that exists is the one the 201 described, and its token works
      const winner = all.find((r) => r.status === 201)!.body.user
      const me = await c.request('GET', '/api/user', { token: winner.token })
      expect(me.body.user).toMatchObject({ username: winner.username, email: `${name}@example.com` })
      await expectConsistent(c)
    },
  ],
  [
    'the same username registered 10x at once (in different ASCII case): exactly one 201, nine 409 "username has already been taken"',
    async (c) => {
      const name = unique('dupname')
      const all = await times(10, (i) =>
        c.request('POST', '/api/users', {
          body: { user: { username: i % 2 ? name.toUpperCase() : name, email: `${name}.${i}@example.com`, password: 'password123' } },
        }),
      )
      expect(statuses(all)).toEqual([201, ...Array(9).fill(409)])
      for (const r of all.filter((x) => x.status === 409)) expect(r.body).toEqual({ errors: { username: ['has already been taken'] } })
      expect(await count(c, 'SELECT count(*) AS n FROM users WHERE username_key = ?', name.toLowerCase())).toBe(1)
    },
  ],
  [
    'the same email and username registered 10x at once: one 201, nine 409 naming both',
    async (c) => {
      const name = unique('twin')
      const user = { username: name, email: `${name}@example.com`, password: 'password123' }
      const all = await times(10, () => c.request('POST', '/api/users', { body: { user } }))
      expect(statuses(all)).toEqual([201, ...Array(9).fill(409)])
      for (const r of all.filter((x) => x.status === 409)) {
        expect(r.body).toEqual({ errors: { email: ['has already been taken'], username: ['has already been taken'] } })
      }
    },
  ],
  [
    'update (new title) and delete of one article at once, 10 articles: never a 500, and each ends either deleted or updated',
    async (c) => {
      const author = await register(c)
      const [fan] = await registerMany(c, 1)
      for (let i = 0; i < 10; i++) {
        const a = await createArticle(c, author.token, { tagList: [`ud${i}`, 'update-delete'] })
        await c.request('POST', `/api/articles/${enc(a.slug)}/favorite`, { token: fan!.token })
        await c.request('POST', `/api/articles/${enc(a.slug)}/comments`, { token: fan!.token, body: { comment: { body: 'first' } } })
        const newTitle = `${a.title} renamed`
        const put = () =>
          c.request('PUT', `/api/articles/${enc(a.slug)}`, {
            token: author.token,
            body: { article: { title: newTitle, tagList: ['renamed'] } },
          })
        const del = () => c.request('DELETE', `/api/articles/${enc(a.slug)}`, { token: author.token })
        // alternate which one is sent first
        const [u, d]: [Res, Res] = i % 2 ? await Promise.all([put(), del()]) : await Promise.all([del(), put()]).then(([x, y]) => [y, x])
        expect([200, 404]).toContain(u.status)
        expect([204, 404]).toContain(d.status)
        const old = await getArticle(c, a.slug)
        expect(old.status).toBe(404)
        if (d.status === 204) {
          // deleted first (the update then found nothing), or updated in place and deleted by the old slug: impossible with a new slug
          expect(u.status).toBe(404)
          expect(old.body).toEqual({ errors: { article: ['not found'] } })
        } else {
          // the update took the article to a new slug before the delete looked for the old one
          expect(u.status).toBe(200)
          const moved = await getArticle(c, u.body.article.slug)
          expect(moved.status).toBe(200)
          expect(moved.body.article).toMatchObject({ title: newTitle, tagList: ['renamed'], favoritesCount: 1 })
          expect((await c.request('GET', `/api/articles/${enc(u.body.article.slug)}/comments`)).body.comments).toHaveLength(1)
        }
      }
      await expectConsistent(c)
    },
  ],
  [
    'updates (same title) and deletes of one article at once: never a 500, the article ends deleted with nothing left behind',
    async (c) => {
      const author = await register(c)
      const fan = await register(c)
      const a = await createArticle(c, author.token, { tagList: [unique('gone'), 'shared-tag'] })
      await c.request('POST', `/api/articles/${enc(a.slug)}/favorite`, { token: fan.token })
      await c.request('POST', `/api/articles/${enc(a.slug)}/comments`, { token: fan.token, body: { comment: { body: 'hello' } } })
      const all = await times(12, (i) =>
        i % 3 === 0
          ? c.request('DELETE', `/api/articles/${enc(a.slug)}`, { token: author.token })
          : c.request('PUT', `/api/articles/${enc(a.slug)}`, {
              token: author.token,
              body: { article: { body: `body ${i}`, tagList: [`t${i}`] } },
            }),
      )
      const deletes = all.filter((_, i) => i % 3 === 0)
      const updates = all.filter((_, i) => i % 3 !== 0)
      expect(deletes.filter((r) => r.status === 204)).toHaveLength(1)
      for (const r of deletes) expect([204, 404]).toContain(r.status)
      for (const r of updates) expect([200, 404]).toContain(r.status)
      expect((await getArticle(c, a.slug)).status).toBe(404)
      expect(await count(c, 'SELECT count(*) AS n FROM articles WHERE slug = ?', a.slug)).toBe(0)
      expect(await count(c, 'SELECT favorites_count AS n FROM users WHERE username = ?', fan.username)).toBe(0)
      expect(await count(c, 'SELECT articles_count AS n FROM users WHERE username = ?', author.username)).toBe(0)
      await expectConsistent(c)
    },
  ],
  [
    'deleting a comment while its article is deleted: no 500, no orphan rows',
    async (c) => {
      const author = await register(c)
      const commenter = await register(c)
      for (let i = 0; i < 6; i++) {
        const a = await createArticle(c, author.token, { tagList: ['comment-race'] })
        const ids: number[] = []
        for (let k = 0; k < 3; k++) {
          const res = await c.request('POST', `/api/articles/${enc(a.slug)}/comments`, {
            token: commenter.token,
            body: { comment: { body: `c${k}` } },
          })
          expect(res.status).toBe(201)
          ids.push(res.body.comment.id)
        }
        await c.request('POST', `/api/articles/${enc(a.slug)}/favorite`, { token: commenter.token })
        const requests = [
          c.request('DELETE', `/api/articles/${enc(a.slug)}/comments/${ids[0]}`, { token: commenter.token }),
          // the article's author may delete any comment on it
          c.request('DELETE', `/api/articles/${enc(a.slug)}/comments/${ids[1]}`, { token: author.token }),
          c.request('POST', `/api/articles/${enc(a.slug)}/comments`, { token: commenter.token, body: { comment: { body: 'late' } } }),
        ]
        requests.splice(i % 4, 0, c.request('DELETE', `/api/articles/${enc(a.slug)}`, { token: author.token }))
        const all = await Promise.all(requests)
        const articleDelete = all[i % 4]!
        const others = all.filter((_, k) => k !== i % 4)
        expect(articleDelete.status).toBe(204)
        expect([204, 404]).toContain(others[0]!.status)
        expect([204, 404]).toContain(others[1]!.status)
        expect([201, 404]).toContain(others[2]!.status)
        for (const r of others.filter((x) => x.status === 404)) expect(r.body).toEqual({ errors: { article: ['not found'] } })
        expect((await c.request('GET', `/api/articles/${enc(a.slug)}/comments`)).status).toBe(404)
        for (const id of ids) expect(await count(c, 'SELECT count(*) AS n FROM comments WHERE id = ?', id)).toBe(0)
      }
      expect(await count(c, 'SELECT favorites_count AS n FROM users WHERE username = ?', commenter.username)).toBe(0)
      await expectConsistent(c)
    },
  ],
  [
    '20 users favoriting one article at once: favoritesCount 20; 20 unfavoriting at once: 0',
    async (c) => {
      const author = await register(c)
      const fans = await registerMany(c, 20)
      const { slug } = await createArticle(c, author.token, { tagList: ['popular'] })
      const favs = await Promise.all(fans.map((f) => c.request('POST', `/api/articles/${enc(slug)}/favorite`, { token: f.token })))
      expect(statuses(favs)).toEqual(Array(20).fill(200))
      for (const r of favs) expect(r.body.article.favorited).toBe(true)
      // each answer counts at least its own favorite, and the counts seen are all different (each write moved it by one)
      expect(new Set(favs.map((r) => r.body.article.favoritesCount)).size).toBe(20)
      expect((await getArticle(c, slug)).body.article.favoritesCount).toBe(20)
      for (const f of fans.slice(0, 3)) {
        const list = await c.request('GET', `/api/articles?favorited=${enc(f.username)}`)
        expect(list.body.articles.map((a: { slug: string }) => a.slug)).toEqual([slug])
      }
      // as many values as one filter may take (10)
      const byAll = await c.request(
        'GET',
        `/api/articles?${fans
          .slice(0, 10)
          .map((f) => `favorited=${enc(f.username)}`)
          .join('&')}`,
      )
      expect(byAll.body.articlesCount).toBe(1)
      await expectConsistent(c)

      const unfavs = await Promise.all(fans.map((f) => c.request('DELETE', `/api/articles/${enc(slug)}/favorite`, { token: f.token })))
      expect(statuses(unfavs)).toEqual(Array(20).fill(200))
      expect((await getArticle(c, slug)).body.article.favoritesCount).toBe(0)
      await expectConsistent(c)
    },
  ],
  [
    'a burst of 60 mixed writes on a few articles: no 5xx, counters agree with rows',
    async (c) => {
      const users = await registerMany(c, 6)
      const articles = await Promise.all(users.slice(0, 3).map((u, i) => createArticle(c, u.token, { tagList: ['burst', `b${i}`] })))
      const all = await times(60, (i) => {
        const u = users[i % users.length]!
        const a = articles[i % articles.length]!
        switch (i % 6) {
          case 0:
            return c.request('POST', `/api/articles/${enc(a.slug)}/favorite`, { token: u.token })
          case 1:
            return c.request('DELETE', `/api/articles/${enc(a.slug)}/favorite`, { token: u.token })
          case 2:
            return c.request('POST', `/api/articles/${enc(a.slug)}/comments`, { token: u.token, body: { comment: { body: `burst ${i}` } } })
          case 3:
            return c.request('POST', `/api/profiles/${enc(users[(i + 1) % users.length]!.username)}/follow`, { token: u.token })
          case 4:
            return c.request('PUT', '/api/user', { token: u.token, body: { user: { bio: `bio ${i}` } } })
          default:
            return c.request('POST', '/api/articles', {
              token: u.token,
              body: { article: { title: 'Burst', description: 'd', body: 'b', tagList: ['burst'] } },
            })
        }
      })
      for (const r of all) expect(r.status).toBeLessThan(300)
      // then each article is deleted while another favorite of it arrives
      const deletes = await Promise.all(
        articles.map((a, i) =>
          Promise.all([
            c.request('DELETE', `/api/articles/${enc(a.slug)}`, { token: users[i]!.token }),
            c.request('POST', `/api/articles/${enc(a.slug)}/favorite`, { token: users[5]!.token }),
          ]),
        ),
      )
      for (const [d, f] of deletes) {
        expect(d.status).toBe(204)
        expect([200, 404]).toContain(f.status)
      }
      await expectConsistent(c)
    },
  ],
  [
    '8 writers creating, retagging and deleting articles on 12 shared tags: no 5xx, each article keeps its last tags, counts agree with links',
    overlappingTagWriters,
  ],
]

/**
 * Writers creating, retagging and deleting their own articles, all drawing
 * their tags from 12 shared ones (whose ids run opposite to their names, as
 * after years of use). On PostgreSQL every write of a tag link moves that
 * tag's counter under a row lock: writers that took those locks in different
 * orders deadlocked, were retried, and some still answered 500 or 503.
 */
async function overlappingTagWriters(c: Client): Promise<void> {
  const writers = await registerMany(c, 8)
  const prefix = unique('ov')
  const TAGS = Array.from({ length: 12 }, (_, i) => `${prefix}-${String.fromCharCode(97 + i)}`)
  // the tags come into being in reverse name order: their ids run opposite to their names
  const seeds: string[] = []
  for (const tag of [...TAGS].reverse()) seeds.push((await createArticle(c, writers[0]!.token, { tagList: [tag] })).slug)
  const failures: string[] = []
  /** each live article's tags as its writer last set them, with the writer's token */
  const expected = new Map<string, { tags: string[]; token: string }>()
  const check = (what: string, res: Res, ok: number) => {
    if (res.status !== ok) failures.push(`${what}: ${res.status} ${res.text.slice(0, 160)}`)
    return res.status === ok
  }
  await Promise.all(
    writers.map(async (w, k) => {
      const random = mulberry32(k + 1)
      const pick = () => TAGS.filter(() => random() < 0.5)
      const mine: string[] = []
      for (let i = 0; i < 20; i++) {
        const roll = random()
        if (!mine.length || roll < 0.4) {
          const tagList = pick()
          const res = await c.request('POST', '/api/articles', {
            token: w.token,
            body: { article: { title: `${prefix} ${k} ${i}`, description: 'd', body: 'b', tagList } },
          })
          if (check('create', res, 201)) {
            mine.push(res.body.article.slug)
            expected.set(res.body.article.slug, { tags: tagList, token: w.token })
          }
        } else if (roll < 0.8) {
          const slug = mine[Math.floor(random() * mine.length)]!
          const tagList = pick()
          const res = await c.request('PUT', `/api/articles/${enc(slug)}`, { token: w.token, body: { article: { tagList } } })
          if (check('retag', res, 200)) expected.set(slug, { tags: tagList, token: w.token })
        } else {
          const slug = mine.splice(Math.floor(random() * mine.length), 1)[0]!
          if (check('delete', await c.request('DELETE', `/api/articles/${enc(slug)}`, { token: w.token }), 204)) expected.delete(slug)
        }
      }
    }),
  )
  expect(failures).toEqual([])
  for (const [slug, { tags }] of expected) expect((await getArticle(c, slug)).body.article.tagList).toEqual([...tags].sort())
  await expectConsistent(c)

  // then every one of them is deleted at once: a tag no article carries any more leaves the list
  const deletes = await Promise.all([...expected].map(([slug, { token }]) => c.request('DELETE', `/api/articles/${enc(slug)}`, { token })))
  expect(statuses(deletes)).toEqual(Array(deletes.length).fill(204))
  for (const slug of seeds) expect((await c.request('DELETE', `/api/articles/${enc(slug)}`, { token: writers[0]!.token })).status).toBe(204)
  const left = (await c.request('GET', '/api/tags')).body.tags as string[]
  expect(left.filter((t) => t.startsWith(`${prefix}-`))).toEqual([])
  await expectConsistent(c)
}

// ------------------------------------------------------------------ the two ways in

describe('in process (testApp)', () => {
  for (const [name, run] of scenarios) {
    test(name, async () => {
      const app = await testApp({ passwordHash: { memoryCost: 256, timeCost: 1 } })
      await run({ request: (method, path, options = {}) => app.request(method, path, options), db: app.db })
    }, 30_000)
  }
})

describe('against the compiled binary over 127.0.0.1', () => {
  const binary = useBinary()
  let server: Server | undefined
  let db: QueryDb | undefined
  beforeAll(async () => {
    const database = await binaryDatabase()
    server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...database.env } })
    db = database.queries(server.dir)
  }, 30_000)
  afterAll(async () => {
    await db?.close()
    await server?.stop()
  })

  for (const [name, run] of scenarios) {
    test(name, async () => {
      if (!server || !db) throw new Error('the binary did not start (see beforeAll)')
      const base = server.url
      await run({ request: (method, path, options = {}) => api(base, method, path, options), db })
      expect(server.proc.exitCode).toBeNull()
    }, 30_000)
  }
})

skipIf(why.postgresOnly).describe('a conflict the retries do not get past (PostgreSQL)', () => {
  // a trigger that fails every try of one creation as the server fails a transaction it rolls back
  for (const [state, name] of [
    ['40P01', 'deadlock_detected'],
    ['40001', 'serialization_failure'],
  ] as const) {
    test(`${state} (${name}) at every try: three tries, then 503 with Retry-After, nothing stored; then served again`, async () => {
      const app = await testApp()
      await app.db.run('CREATE SEQUENCE tries')
      await app.db.run(`CREATE FUNCTION conflicted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.title = 'Conflicted' THEN
            PERFORM nextval('tries');
            RAISE EXCEPTION 'made to fail' USING ERRCODE = '${name}';
          END IF;
          RETURN NEW;
        END $$`)
      await app.db.run('CREATE TRIGGER conflicted BEFORE INSERT ON articles FOR EACH ROW EXECUTE FUNCTION conflicted()')
      const token = (await register({ request: app.request, db: app.db })).token
      const conflicts = dbStats.conflicts
      const res = await app.request('POST', '/api/articles', {
        token,
        body: { article: { title: 'Conflicted', description: 'd', body: 'b', tagList: ['conflicted'] } },
      })
      expect({ status: res.status, body: res.body, retryAfter: res.headers.get('retry-after') }).toEqual({
        status: 503,
        body: { errors: { database: ['is unavailable; try again shortly'] } },
        retryAfter: '2',
      })
      expect(await app.db.count('SELECT last_value FROM tries')).toBe(3)
      expect(dbStats.conflicts - conflicts).toBe(1)
      expect(await app.db.count('SELECT count(*) FROM articles')).toBe(0)
      expect((await app.request('GET', '/api/tags')).body.tags).toEqual([])
      const fine = await app.request('POST', '/api/articles', {
        token,
        body: { article: { title: 'Fine', description: 'd', body: 'b', tagList: ['conflicted'] } },
      })
      expect(fine.status).toBe(201)
      expect((await app.request('GET', '/api/tags')).body.tags).toEqual(['conflicted'])
    })
  }
})
