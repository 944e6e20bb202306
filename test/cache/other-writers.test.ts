import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { keys } from '../../src/keys/keys.ts'
import { binaryDatabase, onPostgres, type QueryDb } from '../support/backend.ts'
import { api, type ApiResponse, register, run, runCli, type Server, startServer, tempDir, type User, useBinary } from '../e2e/support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * Writers other than the service's API, against running instances of the
 * compiled binary whose caches are warm: SQL typed by an operator (the real
 * `psql` and `sqlite3`) is seen within 2 s on every instance; `conduit seed`
 * and `conduit copy` are seen by the very next request.
 */
const binary = useBinary()
const BACKEND = onPostgres ? 'PostgreSQL' : 'SQLite'
/** What the issue promises for SQL typed by hand. */
const BY_HAND_MS = 2_000

/** A database for binaries: the SQLite file's path, or the PostgreSQL URL. */
async function database() {
  const db = await binaryDatabase()
  const dir = tempDir()
  const file = join(dir, 'conduit.db')
  const target = onPostgres ? db.env.DATABASE_URL! : file
  const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...(onPostgres ? db.env : { DATABASE_PATH: file }) }
  return { target, env, queries: (): QueryDb => db.queries(dir) }
}

/**
 * SQL as an operator types it: `psql` (its own application_name), or
 * `sqlite3` with foreign keys on (so deletions cascade as they do for the
 * service). Each statement is its own transaction.
 */
async function byHand(target: string, statements: string[], env: Record<string, string> = {}): Promise<void> {
  const cmd = onPostgres
    ? ['psql', target, '-X', '-q', '-v', 'ON_ERROR_STOP=1', ...statements.flatMap((s) => ['-c', s])]
    : ['sqlite3', '-bail', target, '.timeout 5000', 'PRAGMA foreign_keys = ON', ...statements]
  if (!Bun.which(cmd[0]!))
    throw new Error(`${cmd[0]} is not installed (Debian: apt-get install ${onPostgres ? 'postgresql-client' : 'sqlite3'})`)
  const r = await run(cmd, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeoutMs: 20_000 })
  if (r.code !== 0) throw new Error(`${cmd[0]} failed (${r.code}): ${r.stderr}`)
}

/**
 * The same SQL under the service's own mark (PostgreSQL: its application_name;
 * SQLite: `writer.service` raised inside the transaction), which records no
 * change: a warm cache keeps answering what it held, which shows that it was
 * the cache that answered.
 */
function asTheService(target: string, statements: string[]): Promise<void> {
  if (onPostgres) return byHand(target, [statements.join('; ')], { PGAPPNAME: 'conduit' })
  return byHand(target, [
    ['BEGIN IMMEDIATE', 'UPDATE writer SET service = service + 1', ...statements, 'UPDATE writer SET service = service - 1', 'COMMIT'].join(
      '; ',
    ),
  ])
}

/**
 * Asks `check` every 20 ms until it holds (at most 5 s); returns how long it
 * took, and the number of answers that were not yet right.
 */
async function seenAfter(check: () => Promise<boolean>): Promise<{ ms: number; stale: number }> {
  const t0 = performance.now()
  let stale = 0
  while (!(await check())) {
    stale++
    if (performance.now() - t0 > 5_000) return { ms: Number.POSITIVE_INFINITY, stale }
    await Bun.sleep(20)
  }
  return { ms: Math.round(performance.now() - t0), stale }
}

/** GET on a fresh connection (a server with workers hands each connection to either). */
async function fresh(base: string, path: string): Promise<ApiResponse> {
  const res = await fetch(`${base}${path}`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(10_000) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text }
}

async function article(base: string, user: User, title: string, tag: string): Promise<string> {
  const res = await api(base, 'POST', '/api/articles', {
    token: user.token,
    body: { article: { title, description: `about ${title}`, body: `the body of ${title}`, tagList: [tag] } },
  })
  expect(res.status).toBe(201)
  return res.body.article.slug
}

async function comment(base: string, user: User, slug: string, body: string): Promise<number> {
  const res = await api(base, 'POST', `/api/articles/${slug}/comments`, { token: user.token, body: { comment: { body } } })
  expect(res.status).toBe(201)
  return res.body.comment.id
}

describe(`SQL typed by hand into a ${BACKEND} database that two instances serve`, () => {
  test('a title updated, an article deleted and a comment deleted are seen on both instances within 2 s, caches warm', async () => {
    const { target, env } = await database()
    const servers = [await startServer(binary(), { env }), await startServer(binary(), { env })]
    try {
      const [a] = servers as [Server, Server]
      const author = await register(a.url)
      const kept = await article(a.url, author, 'Kept by hand', 'handy')
      const doomed = await article(a.url, author, 'Deleted by hand', 'handy')
      const first = await comment(a.url, author, kept, 'the first comment')
      const second = await comment(a.url, author, kept, 'the second comment')
      const paths = ['/api/articles', `/api/articles/${kept}`, `/api/articles/${doomed}`, `/api/articles/${kept}/comments`, '/api/tags']
      // warm: every answer several times on both instances
      const warm = new Map<string, string>()
      for (let i = 0; i < 3; i++) {
        for (const s of servers) {
          for (const p of paths) {
            const res = await api(s.url, 'GET', p)
            expect(res.status).toBe(200)
            warm.set(p, res.text)
          }
        }
      }
      expect(JSON.parse(warm.get('/api/articles')!).articlesCount).toBe(2)

      // a change under the service's own mark records nothing: what answers it is the cache
      await asTheService(target, [
        `UPDATE articles SET description = 'silently', body = 'silently' WHERE slug = '${kept}'`,
        `UPDATE comments SET body = 'silently' WHERE id = ${first}`,
      ])
      await Bun.sleep(1_200) // past SQLite's fallback check: the processes have looked
      for (const s of servers)
        for (const p of paths) expect({ p, text: (await api(s.url, 'GET', p)).text }).toEqual({ p, text: warm.get(p)! })

      await byHand(target, [
        `UPDATE articles SET title = 'Retitled by hand' WHERE slug = '${kept}'`,
        `DELETE FROM articles WHERE slug = '${doomed}'`,
        `DELETE FROM comments WHERE id = ${second}`,
      ])
      const seen = await Promise.all(
        servers.map((s) =>
          seenAfter(async () => {
            const one = await api(s.url, 'GET', `/api/articles/${kept}`)
            const gone = await api(s.url, 'GET', `/api/articles/${doomed}`)
            const list = await api(s.url, 'GET', '/api/articles')
            const comments = await api(s.url, 'GET', `/api/articles/${kept}/comments`)
            return (
              one.body?.article?.title === 'Retitled by hand' &&
              one.body.article.body === 'silently' &&
              gone.status === 404 &&
              list.body.articlesCount === 1 &&
              list.body.articles[0].title === 'Retitled by hand' &&
              list.body.articles[0].description === 'silently' &&
              JSON.stringify(comments.body.comments.map((c: { id: number; body: string }) => [c.id, c.body])) ===
                JSON.stringify([[first, 'silently']])
            )
          }),
        ),
      )
      for (const s of seen) expect(s.ms).toBeLessThan(BY_HAND_MS)
      // PostgreSQL: every request reads the log first, so the very next answers show it
      if (onPostgres) expect(seen.map((s) => s.stale)).toEqual([0, 0])
    } finally {
      for (const s of servers) await s.stop()
    }
  }, 60_000)

  test('a bulk UPDATE by hand is one change, not one per row; the service’s own writes record only their keys', async () => {
    const { target, env, queries } = await database()
    const server = await startServer(binary(), { env })
    const q = queries()
    try {
      const [author, reader] = [await register(server.url), await register(server.url)]
      for (let i = 0; i < 5; i++) await article(server.url, author, `Bulk ${i}`, 'bulk')
      // every kind of API write: rows with their keys in the log, never counted as made by hand
      const slug = await article(server.url, author, 'Every write', 'every')
      const id = await comment(server.url, reader, slug, 'a comment')
      const writes: [User, string, string, number, unknown?][] = [
        [reader, 'POST', `/api/articles/${slug}/favorite`, 200],
        [reader, 'DELETE', `/api/articles/${slug}/favorite`, 200],
        [reader, 'POST', `/api/profiles/${author.username}/follow`, 200],
        [reader, 'DELETE', `/api/profiles/${author.username}/follow`, 200],
        [reader, 'DELETE', `/api/articles/${slug}/comments/${id}`, 204],
        [author, 'PUT', '/api/user', 200, { user: { bio: 'a bio' } }],
        [author, 'PUT', `/api/articles/${slug}`, 200, { article: { title: 'Every write again', tagList: ['other'] } }],
        [author, 'DELETE', '/api/articles/every-write-again', 204],
      ]
      for (const [user, method, path, status, body] of writes) {
        expect({ method, path, status: (await api(server.url, method, path, { token: user.token, body })).status }).toEqual({
          method,
          path,
          status,
        })
      }
      const everything = async () =>
        onPostgres ? await q.count("SELECT count(*) FROM changes WHERE keys = '-1'") : await q.count('SELECT edits FROM writer')
      const logged = () => q.count('SELECT count(*) FROM changes')
      expect(await everything()).toBe(0)
      const before = { everything: await everything(), logged: await logged() }
      await byHand(target, ["UPDATE articles SET body = body || '!'"])
      const after = { everything: await everything(), logged: await logged() }
      // PostgreSQL: one EVERYTHING row; SQLite: no row, the count of rows changed by other writers
      expect(after).toEqual(
        onPostgres
          ? { everything: before.everything + 1, logged: before.logged + 1 }
          : { everything: before.everything + 5, logged: before.logged },
      )
      const list = await api(server.url, 'GET', '/api/articles?limit=1')
      expect(list.status).toBe(200)
    } finally {
      await q.close()
      await server.stop()
    }
  }, 60_000)
})

describe(`an earlier version's writes during a rolling upgrade (${BACKEND}, two instances)`, () => {
  test("a new slug whose change row has no mark (the article's key alone, as versions before `slugOf` wrote) is seen on both instances within 2 s, slugs and comments warm", async () => {
    const { target, env, queries } = await database()
    const servers = [await startServer(binary(), { env }), await startServer(binary(), { env })]
    const q = queries()
    try {
      const [a] = servers as [Server, Server]
      const author = await register(a.url)
      const slug = await article(a.url, author, 'Moved by an older version', 'moving')
      await comment(a.url, author, slug, 'still here')
      const paths = [`/api/articles/${slug}`, `/api/articles/${slug}/comments`]
      for (let i = 0; i < 3; i++) for (const s of servers) for (const p of paths) expect((await api(s.url, 'GET', p)).status).toBe(200)
      const id = await q.count('SELECT id FROM articles WHERE slug = ?', slug)
      // as that version's service wrote it: in one transaction, under the service's mark
      await asTheService(target, [
        `UPDATE articles SET slug = 'moved-elsewhere' WHERE id = ${id}`,
        `INSERT INTO changes (keys, at) VALUES ('${keys.article(id)}', ${Date.now()})`,
      ])
      const seen = await Promise.all(
        servers.map((s) =>
          seenAfter(async () => {
            const [old, oldComments, moved] = await Promise.all([
              api(s.url, 'GET', `/api/articles/${slug}`),
              api(s.url, 'GET', `/api/articles/${slug}/comments`),
              api(s.url, 'GET', '/api/articles/moved-elsewhere/comments'),
            ])
            return old.status === 404 && oldComments.status === 404 && moved.body?.comments?.[0]?.body === 'still here'
          }),
        ),
      )
      for (const s of seen) expect(s.ms).toBeLessThan(BY_HAND_MS)
      // PostgreSQL: every request reads the log first, so the very next answers show it
      if (onPostgres) expect(seen.map((s) => s.stale)).toEqual([0, 0])
    } finally {
      await q.close()
      for (const s of servers) await s.stop()
    }
  }, 60_000)
})

skipIf(why.postgresOnly).describe('SQL typed by hand with SINGLE_INSTANCE=true (PostgreSQL)', () => {
  test('is seen within 2 s, without a read of the log before each request', async () => {
    const { target, env } = await database()
    const server = await startServer(binary(), { env: { ...env, SINGLE_INSTANCE: 'true' } })
    try {
      const author = await register(server.url)
      const slug = await article(server.url, author, 'Single', 'single')
      let warm = ''
      for (let i = 0; i < 3; i++) warm = (await api(server.url, 'GET', `/api/articles/${slug}`)).text
      await asTheService(target, [`UPDATE articles SET body = 'silently' WHERE slug = '${slug}'`])
      await Bun.sleep(2_500) // the background reads have run
      expect((await api(server.url, 'GET', `/api/articles/${slug}`)).text).toBe(warm)

      await byHand(target, [`UPDATE articles SET title = 'Single by hand' WHERE slug = '${slug}'`])
      const seen = await seenAfter(async () => {
        const res = await api(server.url, 'GET', `/api/articles/${slug}`)
        return res.body.article.title === 'Single by hand' && res.body.article.body === 'silently'
      })
      expect(seen.ms).toBeLessThan(BY_HAND_MS)

      // conduit admin is another process too: seen within 2 s as well (docs/OPERATING.md)
      const removed = await runCli(binary(), ['admin', 'articles', 'delete', slug, '--db', target])
      expect({ code: removed.code, stderr: removed.stderr }).toEqual({ code: 0, stderr: '' })
      const gone = await seenAfter(async () => (await api(server.url, 'GET', `/api/articles/${slug}`)).status === 404)
      expect(gone.ms).toBeLessThan(BY_HAND_MS)
    } finally {
      await server.stop()
    }
  }, 60_000)
})

skipIf(why.sqliteOnly).describe('SQL typed by hand into a SQLite database that serve --workers 2 serves', () => {
  test('a title updated and an article deleted are seen by every worker within 2 s, caches warm', async () => {
    const { target, env } = await database()
    const server = await startServer(binary(), { env, args: ['serve', '--workers', '2'] })
    try {
      const author = await register(server.url)
      const kept = await article(server.url, author, 'Kept by the workers', 'workers')
      const doomed = await article(server.url, author, 'Deleted under the workers', 'workers')
      // each request on a new connection, which the kernel hands to either worker: both warm
      for (let i = 0; i < 12; i++)
        for (const p of ['/api/articles', `/api/articles/${kept}`, `/api/articles/${doomed}`])
          expect((await fresh(server.url, p)).status).toBe(200)

      await byHand(target, [
        `UPDATE articles SET title = 'Retitled under the workers' WHERE slug = '${kept}'`,
        `DELETE FROM articles WHERE slug = '${doomed}'`,
      ])
      const t0 = performance.now()
      const seen = await seenAfter(async () => {
        // a dozen fresh connections must all agree: both workers have seen it
        for (let i = 0; i < 12; i++) {
          const one = await fresh(server.url, `/api/articles/${kept}`)
          const gone = await fresh(server.url, `/api/articles/${doomed}`)
          const list = await fresh(server.url, '/api/articles')
          if (one.body.article.title !== 'Retitled under the workers' || gone.status !== 404 || list.body.articlesCount !== 1) return false
        }
        return true
      })
      expect(seen.ms).toBeLessThan(BY_HAND_MS)
      // and stays so
      expect(performance.now() - t0).toBeLessThan(5_000)
      for (let i = 0; i < 12; i++) expect((await fresh(server.url, `/api/articles/${doomed}`)).status).toBe(404)
    } finally {
      await server.stop()
    }
  }, 60_000)
})

/** The list and the tags as every server answers them, each asked several times (cached). */
async function warmEmpty(urls: string[]): Promise<void> {
  for (let i = 0; i < 3; i++) {
    for (const url of urls) {
      expect((await fresh(url, '/api/articles')).body).toEqual({ articles: [], articlesCount: 0 })
      expect((await fresh(url, '/api/tags')).body).toEqual({ tags: [] })
    }
  }
}

/** The very next answers of every server show what a bulk load brought. */
async function expectLoaded(urls: string[], articles: number): Promise<void> {
  for (const url of urls) {
    const list = await fresh(url, '/api/articles')
    expect({ url, count: list.body.articlesCount, page: list.body.articles.length }).toEqual({ url, count: articles, page: 20 })
    expect((await fresh(url, '/api/tags')).body.tags.length).toBeGreaterThan(0)
  }
}

describe(`conduit seed into an empty ${BACKEND} database that is served`, () => {
  test('two instances answer the very next request with the seeded data', async () => {
    const { target, env } = await database()
    const servers = [await startServer(binary(), { env }), await startServer(binary(), { env })]
    try {
      await warmEmpty(servers.map((s) => s.url))
      const seeded = await runCli(binary(), ['seed', '--db', target, '--users', '10', '--articles', '50'], { timeoutMs: 60_000 })
      expect({ code: seeded.code, stderr: seeded.code ? seeded.stderr : '' }).toEqual({ code: 0, stderr: '' })
      await expectLoaded(
        servers.map((s) => s.url),
        50,
      )
    } finally {
      for (const s of servers) await s.stop()
    }
  }, 90_000)

  skipIf(why.sqliteOnly).test(
    'serve --workers 2: every worker answers the very next request with the seeded data',
    async () => {
      const { target, env } = await database()
      const server = await startServer(binary(), { env, args: ['serve', '--workers', '2'] })
      try {
        // each request on a new connection, which the kernel hands to either worker: both warm, both checked
        const urls = Array.from({ length: 12 }, () => server.url)
        await warmEmpty(urls)
        const seeded = await runCli(binary(), ['seed', '--db', target, '--users', '10', '--articles', '50'], { timeoutMs: 60_000 })
        expect({ code: seeded.code, stderr: seeded.code ? seeded.stderr : '' }).toEqual({ code: 0, stderr: '' })
        await expectLoaded(urls, 50)
      } finally {
        await server.stop()
      }
    },
    90_000,
  )
})

skipIf(why.postgresOnly).describe('conduit copy into an empty PostgreSQL database that is served', () => {
  test('the instance answers the very next request with the copied data', async () => {
    const { target, env } = await database()
    const server = await startServer(binary(), { env })
    try {
      const source = join(tempDir(), 'source.db')
      const seeded = await runCli(binary(), ['seed', '--db', source, '--users', '10', '--articles', '30'], { timeoutMs: 60_000 })
      expect(seeded.code).toBe(0)
      // a source that was served has its signing secret (the target's is replaced by it)
      const db = new Database(source)
      db.run("INSERT INTO settings (key, value) VALUES ('jwt_secret', 'a secret of the source database, 32+ characters')")
      db.close()
      await warmEmpty([server.url])
      const copied = await runCli(binary(), ['copy', '--from', source, '--to', target], { timeoutMs: 60_000 })
      expect({ code: copied.code, stderr: copied.code ? copied.stderr : '' }).toEqual({ code: 0, stderr: '' })
      await expectLoaded([server.url], 30)
    } finally {
      await server.stop()
    }
  }, 90_000)
})
