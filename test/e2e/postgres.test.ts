import { expect, test } from 'bun:test'
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { chmodSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrate as migrateSqlite } from '../../src/db/sqlite/migrate.ts'
import { migrations } from '../../src/db/postgres/migrate.ts'
import { binaryDatabase, TEST_DATABASE_URL } from '../support/backend.ts'
import { tcpProxy } from '../support/tcp-proxy.ts'
import { api, freePort, installBinary, register, runCli, startServer, tempDir, useBinary } from './support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * The compiled binary on PostgreSQL (the PostgreSQL pass only): migrations
 * under concurrency, the commands, `copy` from SQLite with every answer
 * identical, and a database that goes away and comes back.
 */
const binary = useBinary()
const oneLine = (stderr: string) => stderr.trim().split('\n')

/** Holds an ACCESS EXCLUSIVE lock on articles in a transaction of its own until the returned function is called. */
async function lockArticles(sql: SQL): Promise<() => Promise<void>> {
  const conn = await sql.reserve()
  await conn`BEGIN`
  await conn`LOCK TABLE articles IN ACCESS EXCLUSIVE MODE`
  return async () => {
    await conn`ROLLBACK`
    conn.release()
  }
}

skipIf(why.postgresOnly).describe('the binary on PostgreSQL', () => {
  test('three instances starting together on an empty database all come up; the schema is applied once', async () => {
    const db = await binaryDatabase()
    const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...db.env }
    const servers = await Promise.all([0, 1, 2].map(() => startServer(binary(), { env })))
    try {
      for (const s of servers) expect((await api(s.url, 'GET', '/api/tags')).status).toBe(200)
      const q = db.queries('')
      expect(await q.count('SELECT version FROM conduit_schema')).toBe(migrations.length)
      expect(await q.count('SELECT count(*) FROM conduit_schema')).toBe(1)
      // one signing secret for all: a token from one instance works on the others
      const user = await register(servers[0]!.url)
      for (const s of servers) expect((await api(s.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
      await q.close()
    } finally {
      for (const s of servers) await s.stop()
    }
  }, 60_000)

  test('migrate applies the schema; a database migrated by a newer binary is refused in one line', async () => {
    const db = await binaryDatabase()
    const first = await runCli(binary(), ['migrate'], { env: db.env })
    expect(first.code).toBe(0)
    expect(first.stdout).toContain(`schema version ${migrations.length}`)
    const again = await runCli(binary(), ['migrate'], { env: db.env })
    expect(again.stdout).toContain(`up to date at schema version ${migrations.length}`)
    const q = db.queries('')
    await q.run('UPDATE conduit_schema SET version = 99')
    await q.close()
    const refused = await runCli(binary(), ['serve', '--port', '0'], { env: db.env })
    expect(refused.code).toBe(2)
    expect(oneLine(refused.stderr)).toHaveLength(1)
    expect(refused.stderr).toContain('newer than this binary knows')
    expect(refused.stderr).not.toContain(':postgres@') // the URL is shown without a password
  }, 30_000)

  test('a database holding another program’s tables is refused in one line and left as it was, whatever the command', async () => {
    const db = await binaryDatabase()
    const q = db.queries('')
    // one with a name of its own, one with a name Conduit uses too
    await q.run('CREATE TABLE invoices (id integer PRIMARY KEY, total integer)')
    await q.run('INSERT INTO invoices VALUES (1, 42)')
    await q.run('CREATE TABLE users (id integer PRIMARY KEY)')
    const tables = () => q.all<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
    for (const args of [['migrate'], ['serve', '--port', '0'], ['seed', '--users', '1', '--articles', '1'], ['admin', 'users', 'list']]) {
      const refused = await runCli(binary(), args, { env: db.env })
      expect({ args, code: refused.code, lines: oneLine(refused.stderr).length }).toEqual({ args, code: 2, lines: 1 })
      expect(refused.stderr).toContain("holds another program's tables (invoices, users), not Conduit's")
      expect(await tables()).toEqual([{ name: 'invoices' }, { name: 'users' }])
    }
    expect(await q.count('SELECT total FROM invoices')).toBe(42)
    await q.close()
    // an extension's own tables and views in the schema are no program's: a new database with one is taken
    const other = await binaryDatabase()
    const o = other.queries('')
    await o.run('CREATE EXTENSION pg_stat_statements')
    await o.close()
    const migrated = await runCli(binary(), ['migrate'], { env: other.env })
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' })
  }, 60_000)

  test('backup names pg_dump in one line; seed fills an empty database once', async () => {
    const db = await binaryDatabase()
    const backup = await runCli(binary(), ['backup', join(tempDir(), 'b.db')], { env: db.env })
    expect(backup.code).toBe(2)
    expect(oneLine(backup.stderr)).toHaveLength(1)
    expect(backup.stderr).toContain('pg_dump')
    const seeded = await runCli(binary(), ['seed', '--users', '20', '--articles', '300'], { env: db.env, timeoutMs: 60_000 })
    expect(seeded.code).toBe(0)
    const q = db.queries('')
    expect(await q.count('SELECT count(*) FROM articles')).toBe(300)
    await q.close()
    const twice = await runCli(binary(), ['seed', '--users', '1', '--articles', '1'], { env: db.env })
    expect(twice.code).toBe(2)
    expect(oneLine(twice.stderr)).toHaveLength(1)
    expect(twice.stderr).toContain('already has 20 users')
  }, 90_000)

  test('copy moves a seeded SQLite database: every answer identical, old tokens valid, a non-empty target refused', async () => {
    // a SQLite database with data written through the API (tokens, comments, follows) and seeded bulk
    const dir = installBinary(binary())
    const seeded = await runCli(join(dir, 'conduit'), ['seed', '--db', join(dir, 'conduit.db'), '--users', '30', '--articles', '500'], {
      cwd: dir,
      timeoutMs: 60_000,
    })
    expect(seeded.code).toBe(0)
    const before = await startServer(binary(), { dir, env: { HOST: '127.0.0.1', LOG_LEVEL: 'error' } })
    const alice = await register(before.url)
    const created = await api(before.url, 'POST', '/api/articles', {
      token: alice.token,
      body: { article: { title: 'Moved over', description: 'd', body: '  keep me  ', tagList: ['moving'] } },
    })
    expect(created.status).toBe(201)
    const slug = created.body.article.slug
    await api(before.url, 'POST', `/api/articles/${slug}/comments`, { token: alice.token, body: { comment: { body: 'first' } } })
    const second = await api(before.url, 'POST', `/api/articles/${slug}/comments`, {
      token: alice.token,
      body: { comment: { body: 'second' } },
    })
    await api(before.url, 'DELETE', `/api/articles/${slug}/comments/${second.body.comment.id}`, { token: alice.token })
    await api(before.url, 'POST', '/api/profiles/user3/follow', { token: alice.token })
    await api(before.url, 'POST', `/api/articles/${slug}/favorite`, { token: alice.token })
    const paths = [
      '/api/articles',
      '/api/articles?limit=50&offset=100',
      '/api/articles?tag=moving',
      '/api/articles?author=user3',
      '/api/articles?favorited=user2',
      `/api/articles/${slug}`,
      `/api/articles/${slug}/comments`,
      '/api/tags',
      '/api/profiles/user3',
      '/api/articles/feed',
      '/api/user',
    ]
    const answers = async (base: string) => {
      const out: Record<string, unknown> = {}
      for (const p of paths) {
        const res = await api(base, 'GET', p, { token: alice.token })
        // GET /api/user hands out a fresh token (its issue time differs): compared apart
        if (res.body?.user) res.body.user.token = typeof res.body.user.token
        out[p] = { status: res.status, body: res.body }
      }
      return out
    }
    const onSqlite = await answers(before.url)
    expect((onSqlite['/api/articles'] as { status: number }).status).toBe(200)
    // copied while the server still runs: it works, and says that later writes will be missed
    const early = await binaryDatabase()
    const whileServed = await runCli(join(dir, 'conduit'), ['copy', '--from', join(dir, 'conduit.db'), '--to', early.env.DATABASE_URL!], {
      cwd: dir,
      timeoutMs: 60_000,
    })
    expect(whileServed.code).toBe(0)
    expect(whileServed.stderr).toContain(
      `copy: warning: ${join(dir, 'conduit.db')} is open in another process (a server?), or was not closed: what it writes from now on is not copied; stop the service first, or copy a backup`,
    )
    await before.stop()

    const target = await binaryDatabase()
    // started on the target first, as a stack brought up before its data: it made a secret of its own
    const first = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...target.env } })
    await first.stop()
    const copied = await runCli(join(dir, 'conduit'), ['copy', '--from', join(dir, 'conduit.db'), '--to', target.env.DATABASE_URL!], {
      cwd: dir,
      timeoutMs: 60_000,
    })
    expect(copied.code).toBe(0)
    expect(copied.stdout).toContain("every table's count matches")
    // the one warning: an instance started before the copy holds the secret it made
    expect(copied.stderr.split('\n').filter((l) => l.includes('warning'))).toEqual([
      expect.stringContaining(
        "had a signing secret of its own, now the source's (its tokens keep working): restart any instance already serving it",
      ),
    ])
    // on a target no server had started on, nothing to say
    expect(whileServed.stderr).not.toContain('signing secret')
    // the summary writes counts as the progress lines do (1,000, not 1000)
    expect(copied.stdout).toMatch(/^\w+ +\d{1,3}(,\d{3})+ -> +\d{1,3}(,\d{3})+$/m)
    // vacuumed as well as analyzed: the visibility map set, index-only scans need not read the table
    const visible = await target
      .queries(dir)
      .get<{ pages: number; visible: number }>(
        "SELECT relpages AS pages, relallvisible AS visible FROM pg_class WHERE relname = 'articles'",
      )
    expect(visible!.visible).toBeGreaterThan(0)
    expect(visible!.visible).toBe(visible!.pages)

    const after = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...target.env } })
    try {
      // the same answers, the old token included (the signing secret moved with the data)
      expect(await answers(after.url)).toEqual(onSqlite)
      // ids go on past the source's highest ever: the deleted comment's id is not handed out again
      const third = await api(after.url, 'POST', `/api/articles/${slug}/comments`, {
        token: alice.token,
        body: { comment: { body: 'third' } },
      })
      expect(third.body.comment.id).toBeGreaterThan(second.body.comment.id)
      const bob = await register(after.url)
      expect((await api(after.url, 'GET', '/api/user', { token: bob.token })).status).toBe(200)
    } finally {
      await after.stop()
    }
    // and back: PostgreSQL into a new SQLite file, the same answers again, the old token still good
    const back = join(dir, 'back.db')
    const returned = await runCli(join(dir, 'conduit'), ['copy', '--from', target.env.DATABASE_URL!, '--to', back], {
      cwd: dir,
      timeoutMs: 60_000,
    })
    expect({ code: returned.code, stderr: returned.stderr.includes('warning') }).toEqual({ code: 0, stderr: false })
    expect(returned.stdout).toContain("every table's count matches")
    const onSqliteAgain = await startServer(binary(), { dir, env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_PATH: back } })
    try {
      const again = await answers(onSqliteAgain.url)
      // the comment written on PostgreSQL above, and bob, came along too
      const comments = again[`/api/articles/${slug}/comments`] as { body: { comments: { body: string }[] } }
      expect(comments.body.comments.map((c) => c.body)).toEqual(['first', 'third'])
      const { [`/api/articles/${slug}/comments`]: _, ...rest } = again
      const { [`/api/articles/${slug}/comments`]: __, ...was } = onSqlite
      expect(rest).toEqual(was)
      const fourth = await api(onSqliteAgain.url, 'POST', `/api/articles/${slug}/comments`, {
        token: alice.token,
        body: { comment: { body: 'fourth' } },
      })
      expect(fourth.status).toBe(201)
    } finally {
      await onSqliteAgain.stop()
    }
    // within one backend, and from a database this conduit did not make: one line, status 2
    const same = await runCli(join(dir, 'conduit'), ['copy', '--from', back, '--to', join(dir, 'other.db')], { cwd: dir })
    expect({ code: same.code, lines: oneLine(same.stderr).length }).toEqual({ code: 2, lines: 1 })
    expect(same.stderr).toContain('between SQLite and PostgreSQL')

    const refused = await runCli(join(dir, 'conduit'), ['copy', '--from', join(dir, 'conduit.db'), '--to', target.env.DATABASE_URL!], {
      cwd: dir,
    })
    expect(refused.code).toBe(2)
    expect(oneLine(refused.stderr)).toHaveLength(1)
    expect(refused.stderr).toContain('not empty')
  }, 120_000)

  test('copy from a read-only backup of an older schema version: copied, and the backup left as it was', async () => {
    const dir = tempDir()
    const file = join(dir, 'old.db')
    const old = new Database(file)
    migrateSqlite(old, 3)
    old.run("INSERT INTO users (username, username_key, email, password_hash, created_at) VALUES ('old', 'old', 'old@example.com', 'x', 0)")
    old.close()
    chmodSync(file, 0o444)
    const before = new Bun.CryptoHasher('sha256').update(readFileSync(file)).digest('hex')
    const target = await binaryDatabase()
    const copied = await runCli(binary(), ['copy', '--from', file, '--to', target.env.DATABASE_URL!], { cwd: dir, timeoutMs: 60_000 })
    expect({ code: copied.code, stdout: copied.stdout }).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("every table's count matches"),
    })
    expect(copied.stdout).toMatch(/^users +1 -> +1$/m)
    expect(new Bun.CryptoHasher('sha256').update(readFileSync(file)).digest('hex')).toBe(before)
    expect(readdirSync(dir)).toEqual(['old.db'])
    const reopened = new Database(file, { readonly: true })
    expect(reopened.query('PRAGMA user_version').get()).toEqual({ user_version: 3 })
    reopened.close()

    // stopped while it waits for a target that never answers: the temporary copy (the password hashes) goes too
    const tmp = join(dir, 'tmp')
    mkdirSync(tmp)
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const proc = Bun.spawn([binary(), 'copy', '--from', file, '--to', `postgres://postgres@127.0.0.1:${silent.port}/never`], {
        cwd: dir,
        env: { ...process.env, TMPDIR: tmp },
        stdout: 'ignore',
        stderr: 'ignore',
      })
      for (let i = 0; i < 200 && readdirSync(tmp).length === 0; i++) await Bun.sleep(25)
      expect(readdirSync(tmp)).toHaveLength(1)
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(143)
      expect(readdirSync(tmp)).toEqual([])
    } finally {
      silent.stop(true)
    }
  }, 60_000)

  test('the database going away: 503 in the envelope within seconds, /ready 503, then recovery by itself', async () => {
    const db = await binaryDatabase()
    const url = new URL(db.env.DATABASE_URL!)
    const proxy = tcpProxy(url.hostname, Number(url.port || 5432))
    url.host = `127.0.0.1:${proxy.port}`
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_URL: url.toString() } })
    try {
      const user = await register(server.url)
      expect((await api(server.url, 'GET', '/api/articles', { token: user.token })).status).toBe(200)
      expect((await api(server.url, 'GET', '/ready')).status).toBe(200)

      proxy.down()
      for (const path of ['/api/articles', '/api/tags', '/api/user']) {
        const t0 = performance.now()
        const res = await api(server.url, 'GET', path, { token: user.token, timeoutMs: 15_000 })
        expect({ path, status: res.status }).toEqual({ path, status: 503 })
        expect(res.body).toEqual({ errors: { database: ['is unavailable; try again shortly'] } })
        expect(performance.now() - t0).toBeLessThan(7_000)
      }
      const write = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 't', description: 'd', body: 'b' } },
      })
      expect(write.status).toBe(503)
      expect((await api(server.url, 'GET', '/ready')).status).toBe(503)
      // a preflight needs none: a 503 there is a CORS failure to the browser, which hides the 503's body from the client
      const preflight = await fetch(`${server.url}/api/articles`, {
        method: 'OPTIONS',
        headers: { origin: 'https://frontend.example', 'access-control-request-method': 'POST' },
      })
      expect({ status: preflight.status, allow: preflight.headers.get('access-control-allow-origin') }).toEqual({ status: 204, allow: '*' })
      // (the pages about the server need no database either)
      for (const path of ['/health', '/api'])
        expect({ path, status: (await api(server.url, 'GET', path)).status }).toEqual({ path, status: 200 })
      // the web app's home page is made of articles: a page saying so, which the browser may retry
      const page = await fetch(`${server.url}/`, { headers: { accept: 'text/html' } })
      expect(page.status).toBe(503)
      expect(page.headers.get('retry-after')).toBe('2')
      const shown = await page.text()
      expect(shown).toContain('The database is unavailable; try again shortly.')
      // in the site's layout, which needs no database: its stylesheet, and a way to try again
      expect(shown).toContain('<link rel="stylesheet" href="/assets/')
      expect(shown).toContain('<a href="/">Try again</a>, or go <a href="/">to the home page</a>.')

      proxy.up()
      let status = 0
      const until = Date.now() + 15_000
      while (Date.now() < until && status !== 200) {
        status = (await api(server.url, 'GET', '/api/articles', { token: user.token })).status
        if (status !== 200) await Bun.sleep(200)
      }
      expect(status).toBe(200)
      expect((await api(server.url, 'GET', '/ready')).status).toBe(200)
      const created = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 'after', description: 'd', body: 'b' } },
      })
      expect(created.status).toBe(201)
      expect(server.proc.exitCode).toBeNull()
    } finally {
      await server.stop()
      proxy.close()
    }
  }, 90_000)
  test('a write whose COMMIT reached the server but whose answer never came back: 503 saying it may be stored, no Retry-After', async () => {
    const db = await binaryDatabase()
    const url = new URL(db.env.DATABASE_URL!)
    const proxy = tcpProxy(url.hostname, Number(url.port || 5432))
    url.host = `127.0.0.1:${proxy.port}`
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: url.toString() } })
    const sql = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      proxy.cutAtCommit()
      const res = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 'Maybe stored', description: 'd', body: 'b' } },
      })
      expect({ status: res.status, body: res.body, retry: res.headers.get('retry-after') }).toEqual({
        status: 503,
        body: { errors: { database: ['did not confirm this write, which may have been stored; read before sending it again'] } },
        retry: null,
      })
      // and it was stored: what the answer warned of
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM articles WHERE title = 'Maybe stored'`
      expect(n).toBe(1)
      expect(server.stdout()).toContain('write not confirmed')
      // the next write goes through
      const next = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 'Surely stored', description: 'd', body: 'b' } },
      })
      expect(next.status).toBe(201)
    } finally {
      await sql.close()
      await server.stop()
      proxy.close()
    }
  }, 60_000)

  test('a database that refuses connections (maintenance): 503 with CORS and Retry-After, the reason logged, then served again', async () => {
    const db = await binaryDatabase()
    const name = new URL(db.env.DATABASE_URL!).pathname.slice(1)
    const origin = 'http://client.test'
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', CORS_ORIGINS: origin, ...db.env },
    })
    const sql = new SQL({ url: TEST_DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      await sql.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`
      for (const path of ['/api/tags', '/api/articles', '/api/user']) {
        const res = await fetch(`${server.url}${path}`, { headers: { origin, authorization: `Token ${user.token}` } })
        expect({ path, status: res.status, body: await res.json() }).toEqual({
          path,
          status: 503,
          body: { errors: { database: ['is unavailable; try again shortly'] } },
        })
        expect([res.headers.get('access-control-allow-origin'), res.headers.get('retry-after')]).toEqual([origin, '2'])
      }
      expect((await fetch(`${server.url}/`, { headers: { accept: 'text/html' } })).status).toBe(503)
      expect(server.stderr() + server.stdout()).toContain('is not currently accepting connections')
      expect(server.stderr() + server.stdout()).not.toContain('unhandled error')

      await sql.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
      let status = 0
      const until = Date.now() + 15_000
      while (Date.now() < until && status !== 200) {
        status = (await api(server.url, 'GET', '/api/tags')).status
        if (status !== 200) await Bun.sleep(200)
      }
      expect(status).toBe(200)
    } finally {
      await sql.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
      await sql.close()
      await server.stop()
    }
  }, 60_000)

  test('while the database is not yet open, every answer but /health and a preflight is 503 "starting" with its request id and the CORS headers (Vary: Origin with an allow-list); /health is 200 "starting"; the wait is logged', async () => {
    const db = await binaryDatabase()
    const url = new URL(db.env.DATABASE_URL!)
    const proxy = tcpProxy(url.hostname, Number(url.port || 5432))
    url.host = `127.0.0.1:${proxy.port}`
    const port = freePort()
    const ORIGIN = 'https://frontend.example'
    // the database answers nothing: the process binds its port and waits for it
    proxy.stall()
    const starting = startServer(binary(), {
      port,
      env: { HOST: '127.0.0.1', DATABASE_URL: url.toString(), CORS_ORIGINS: ORIGIN },
    })
    try {
      const seen: unknown[] = []
      for (const [path, origin] of [
        ['/api/articles', ORIGIN],
        ['/api/articles', 'https://elsewhere.example'],
        ['/ready', undefined],
        ['/health', ORIGIN],
      ] as const) {
        let res: Response | undefined
        const until = Date.now() + 10_000
        while (res === undefined && Date.now() < until) {
          res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: origin ? { origin } : {} }).catch(() => undefined)
          if (res === undefined) await Bun.sleep(50)
        }
        seen.push({
          path,
          origin,
          status: res?.status,
          body: await res?.json(),
          vary: res?.headers.get('vary'),
          allow: res?.headers.get('access-control-allow-origin'),
          retry: res?.headers.get('retry-after'),
          id: /^[0-9a-f]{16}-[0-9a-z]+$/.test(res?.headers.get('x-request-id') ?? ''),
        })
      }
      // a preflight is answered: a 503 there is a CORS failure to the browser, which hides the 503 and its Retry-After
      const preflight = await fetch(`http://127.0.0.1:${port}/api/articles`, {
        method: 'OPTIONS',
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      })
      expect({
        status: preflight.status,
        allow: preflight.headers.get('access-control-allow-origin'),
        methods: preflight.headers.get('access-control-allow-methods'),
      }).toEqual({ status: 204, allow: ORIGIN, methods: 'GET, POST, PUT, DELETE, OPTIONS' })
      const early = { status: 503, body: { errors: { server: ['starting'] } }, vary: 'Origin', retry: '1', id: true }
      expect(seen).toEqual([
        { ...early, path: '/api/articles', origin: ORIGIN, allow: ORIGIN },
        { ...early, path: '/api/articles', origin: 'https://elsewhere.example', allow: null },
        { ...early, path: '/ready', origin: undefined, allow: null },
        // alive: a liveness probe must not kill a process that waits for its database (or another instance's migration)
        { ...early, path: '/health', origin: ORIGIN, allow: ORIGIN, status: 200, body: { status: 'starting' }, retry: null },
      ])
      // long enough a wait to be told
      await Bun.sleep(2_500)
      proxy.up()
      const server = await starting
      expect((await api(server.url, 'GET', '/api/articles')).status).toBe(200)
      expect(server.stdout()).toMatch(/INFO still opening the database: waiting for it to answer database=\S+ seconds=2\n/)
      expect(server.stdout().indexOf('still opening the database')).toBeLessThan(server.stdout().indexOf('INFO listening'))
      await server.stop()
    } finally {
      proxy.up()
      await starting.then((s) => s.stop()).catch(() => {})
      proxy.close()
    }
  }, 60_000)

  test.each([
    ['one process', []],
    ['serve --workers 2', ['serve', '--workers', '2']],
  ])(
    '%s that finds another instance migrating waits for its lock: /health 200 "starting", /ready 503, the wait logged',
    async (_what, args) => {
      const db = await binaryDatabase()
      const sql = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
      const holder = await sql.reserve()
      // the lock another instance's migration holds (src/db/postgres/migrate.ts: MIGRATION_LOCK, per schema)
      const LOCK = `${0x636f6e64}, hashtext(current_schema())`
      await holder.unsafe(`SET application_name = 'conduit migrate'`)
      await holder.unsafe(`SELECT pg_advisory_lock(${LOCK})`)
      const [{ pid }] = await holder.unsafe('SELECT pg_backend_pid() AS pid')
      const port = freePort()
      const starting = startServer(binary(), { port, env: { HOST: '127.0.0.1', ...db.env }, args })
      try {
        const get = async (path: string) => {
          const until = Date.now() + 10_000
          for (;;) {
            const res = await fetch(`http://127.0.0.1:${port}${path}`).catch(() => undefined)
            if (res) return { status: res.status, body: await res.json() }
            if (Date.now() > until) throw new Error(`no answer from ${path}`)
            await Bun.sleep(50)
          }
        }
        expect(await get('/health')).toEqual({ status: 200, body: { status: 'starting' } })
        expect(await get('/ready')).toEqual({ status: 503, body: { errors: { server: ['starting'] } } })
        // each ends its connection: a poller's next request reaches whatever serves by then
        expect((await fetch(`http://127.0.0.1:${port}/health`)).headers.get('connection')).toBe('close')
        // Docker's HEALTHCHECK: alive, and says it is starting
        const check = await runCli(binary(), ['healthcheck', '--port', String(port), '--host', '127.0.0.1'])
        expect(check).toMatchObject({ code: 0, stdout: `starting http://127.0.0.1:${port}/health\n`, stderr: '' })
        await Bun.sleep(2_500)
        expect(await get('/health')).toEqual({ status: 200, body: { status: 'starting' } })
        await holder.unsafe(`SELECT pg_advisory_unlock(${LOCK})`)
        const server = await starting
        const log = server.stdout()
        // which session holds the lock, so an operator can find it
        expect(log).toMatch(
          new RegExp(
            `INFO still opening the database: waiting for another session to finish migrating it database=\\S+ seconds=2 holder_pid=${pid} holder_application="conduit migrate" holder_client=127\\.0\\.0\\.1 holder_since=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\n`,
          ),
        )
        expect(log.indexOf('still opening the database')).toBeLessThan(log.indexOf('INFO migrating the database'))
        expect(log).toMatch(/INFO migrating the database database=\S+ from=0 to=\d+\n[^\n]+INFO database migrated /)
        expect((await api(server.url, 'GET', '/ready')).status).toBe(200)
        await server.stop()
      } finally {
        await holder.unsafe(`SELECT pg_advisory_unlock_all()`).catch(() => {})
        holder.release()
        await sql.close()
        await starting.then((s) => s.stop()).catch(() => {})
      }
    },
    60_000,
  )

  const UNAVAILABLE = { errors: { database: ['is unavailable; try again shortly'] } }
  const article = (title: string) => ({ article: { title, description: 'd', body: 'b' } })

  test('a network gone silent: 503 within DATABASE_TIMEOUT_SECONDS + 1 s (no hang), /ready 503, nothing written, then recovery', async () => {
    const db = await binaryDatabase()
    const url = new URL(db.env.DATABASE_URL!)
    const proxy = tcpProxy(url.hostname, Number(url.port || 5432))
    url.host = `127.0.0.1:${proxy.port}`
    const server = await startServer(binary(), {
      env: {
        HOST: '127.0.0.1',
        LOG_LEVEL: 'error',
        DATABASE_URL: url.toString(),
        DATABASE_TIMEOUT_SECONDS: '1',
        METRICS_TOKEN: 'm'.repeat(32),
      },
    })
    const metrics = () => fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${'m'.repeat(32)}` } }).then((r) => r.text())
    try {
      const user = await register(server.url)
      expect((await api(server.url, 'GET', '/api/articles', { token: user.token })).status).toBe(200)

      proxy.stall()
      // a URL never asked before (no cached answer), a signed-in read, a write and readiness
      for (const [method, path, body] of [
        ['GET', '/api/articles?limit=7', undefined],
        ['GET', '/api/user', undefined],
        ['POST', '/api/articles', article('written while silent')],
      ] as const) {
        const t0 = performance.now()
        const res = await api(server.url, method, path, { token: user.token, body, timeoutMs: 15_000 })
        const ms = performance.now() - t0
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 503, body: UNAVAILABLE })
        // the 1 s deadline plus 1 s of grace, and some room for a busy machine
        expect(ms).toBeLessThan(3_500)
      }
      expect((await api(server.url, 'GET', '/ready', { timeoutMs: 15_000 })).status).toBe(503)
      expect((await api(server.url, 'GET', '/health')).status).toBe(200)

      // requests arriving while one change-log read hangs wait for it, and fail with it: one more
      // timeout in all, not one each after the other (which made a request wait twice the deadline)
      const timeouts = async () => Number(/^conduit_db_errors_total\{reason="timeout"\} (\d+)$/m.exec(await metrics())?.[1] ?? 0)
      const before = await timeouts()
      const first = api(server.url, 'GET', '/api/articles?limit=8', { token: user.token, timeoutMs: 15_000 })
      await Bun.sleep(300)
      const later = await Promise.all(
        [9, 10, 11].map((n) => api(server.url, 'GET', `/api/articles?limit=${n}`, { token: user.token, timeoutMs: 15_000 })),
      )
      expect([(await first).status, ...later.map((r) => r.status)]).toEqual([503, 503, 503, 503])
      expect((await timeouts()) - before).toBe(1)

      proxy.up()
      let status = 0
      const until = Date.now() + 20_000
      while (Date.now() < until && status !== 200) {
        status = (await api(server.url, 'GET', '/api/articles?limit=7', { token: user.token, timeoutMs: 15_000 })).status
        if (status !== 200) await Bun.sleep(200)
      }
      expect(status).toBe(200)
      const q = db.queries('')
      expect(await q.count("SELECT count(*) FROM articles WHERE title = 'written while silent'")).toBe(0)
      await q.close()
      expect((await api(server.url, 'POST', '/api/articles', { token: user.token, body: article('after the silence') })).status).toBe(201)
      expect(server.proc.exitCode).toBeNull()
    } finally {
      await server.stop()
      proxy.close()
    }
  }, 90_000)

  test('a lock held too long: 503 after DATABASE_TIMEOUT_SECONDS, the write changes nothing, then served again', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_TIMEOUT_SECONDS: '1', ...db.env } })
    const locker = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      const created = await api(server.url, 'POST', '/api/articles', { token: user.token, body: article('locked out') })
      expect(created.status).toBe(201)
      const slug = created.body.article.slug as string

      const unlock = await lockArticles(locker)
      try {
        for (const [method, path, body] of [
          ['GET', '/api/articles?limit=3', undefined],
          ['PUT', `/api/articles/${slug}`, { article: { body: 'changed while locked' } }],
        ] as const) {
          const t0 = performance.now()
          const res = await api(server.url, method, path, { token: user.token, body, timeoutMs: 15_000 })
          expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 503, body: UNAVAILABLE })
          expect(performance.now() - t0).toBeLessThan(3_500)
        }
      } finally {
        await unlock()
      }
      const after = await api(server.url, 'GET', `/api/articles/${slug}`, { token: user.token })
      expect(after.status).toBe(200)
      expect(after.body.article.body).toBe('b')
      expect((await api(server.url, 'GET', '/api/articles?limit=3')).status).toBe(200)
      const edited = await api(server.url, 'PUT', `/api/articles/${slug}`, { token: user.token, body: { article: { body: 'changed' } } })
      expect(edited.status).toBe(200)
      expect(edited.body.article.body).toBe('changed')
    } finally {
      await locker.close()
      await server.stop()
    }
  }, 60_000)

  test('an instance frozen in the middle of a creation holds its locks no longer than DATABASE_TIMEOUT_SECONDS; the others create again', async () => {
    const db = await binaryDatabase()
    const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_TIMEOUT_SECONDS: '1', ...db.env }
    const [frozen, other] = [await startServer(binary(), { env }), await startServer(binary(), { env })]
    const holder = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(other.url)
      expect(
        (
          await api(other.url, 'POST', '/api/articles', {
            token: user.token,
            body: { article: { ...article('first').article, tagList: ['held'] } },
          })
        ).status,
      ).toBe(201)
      let stuck: Promise<{ status: number }> | undefined
      await holder.begin(async (tx) => {
        // a creation tagged `held` waits for the tag's row; the rest of its transaction is queued behind it
        await tx`SELECT 1 FROM tags WHERE name = 'held' FOR UPDATE`
        stuck = api(frozen.url, 'POST', '/api/articles', {
          token: user.token,
          body: { article: { ...article('frozen').article, tagList: ['held'] } },
          timeoutMs: 30_000,
        })
        const waiting = () =>
          tx`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
        for (let i = 0; i < 100 && (await waiting())[0].n < 1; i++) await Bun.sleep(25)
        expect((await waiting())[0].n).toBe(1)
        // frozen (a pause, a partition) with its transaction open: released, it takes the tag's row and goes idle
        frozen.proc.kill('SIGSTOP')
      })
      const t0 = performance.now()
      let created = 0
      while (created !== 201 && performance.now() - t0 < 10_000)
        created = (
          await api(other.url, 'POST', '/api/articles', {
            token: user.token,
            body: { article: { ...article('meanwhile').article, tagList: ['held'] } },
            timeoutMs: 15_000,
          })
        ).status
      expect(created).toBe(201)
      // the idle transaction ended by the server, at DATABASE_TIMEOUT_SECONDS, not by the socket hours later
      expect(performance.now() - t0).toBeLessThan(6_000)
      frozen.proc.kill('SIGCONT')
      // woken, its write finds its transaction ended: 503, rolled back
      expect((await stuck)!.status).toBe(503)
      const titles = await holder`SELECT title FROM articles ORDER BY id`
      expect(titles.map((r: { title: string }) => r.title)).toEqual(['first', 'meanwhile'])
    } finally {
      frozen.proc.kill('SIGCONT')
      await holder.close()
      await frozen.stop()
      await other.stop()
    }
  }, 60_000)

  test('a user’s row held too long: their write answers 503 (the lock timeout, not 500), nothing written, the instance serves on', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_TIMEOUT_SECONDS: '1', ...db.env } })
    const locker = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      // as a change of the account (a rename, an operator's lock) under way elsewhere holds it
      await locker.begin(async (tx) => {
        await tx`SELECT 1 FROM users WHERE username = ${user.username} FOR UPDATE`
        for (const body of [article('while held'), article('again')]) {
          const res = await api(server.url, 'POST', '/api/articles', { token: user.token, body, timeoutMs: 15_000 })
          expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: UNAVAILABLE })
        }
      })
      expect((await api(server.url, 'GET', '/health')).status).toBe(200)
      expect((await api(server.url, 'GET', '/api/articles')).body.articlesCount).toBe(0)
      expect((await api(server.url, 'POST', '/api/articles', { token: user.token, body: article('after') })).status).toBe(201)
    } finally {
      await locker.close()
      await server.stop()
    }
  }, 60_000)

  test('a write answered 503 while it waited for a pooled connection is never committed later', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), {
      // SINGLE_INSTANCE: no change-log read before each request, so the write itself is what waits
      env: {
        HOST: '127.0.0.1',
        LOG_LEVEL: 'error',
        DATABASE_TIMEOUT_SECONDS: '1',
        DATABASE_POOL_MAX: '1',
        SINGLE_INSTANCE: 'true',
        ...db.env,
      },
    })
    const locker = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      // the token verified once (cached), and a list cached that the write would change
      expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
      expect((await api(server.url, 'GET', '/api/articles?limit=50')).body.articlesCount).toBe(0)
      const unlock = await lockArticles(locker)
      // reads that wait on the lock hold the one pooled connection in turn, a second each
      const reads = Array.from({ length: 5 }, (_, i) =>
        api(server.url, 'GET', `/api/articles?limit=${i + 2}`, { token: user.token, timeoutMs: 20_000 }),
      )
      await Bun.sleep(100)
      const t0 = performance.now()
      const write = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: article('queued behind the lock'),
        timeoutMs: 20_000,
      })
      expect({ status: write.status, body: write.body }).toEqual({ status: 503, body: UNAVAILABLE })
      expect(performance.now() - t0).toBeLessThan(3_500)
      // the lock goes while the write is still queued: it gets its connection after its answer
      await unlock()
      for (const r of await Promise.all(reads)) expect([200, 503]).toContain(r.status)
      await Bun.sleep(1_500)
      const q = db.queries('')
      const stored = await q.count("SELECT count(*) FROM articles WHERE title = 'queued behind the lock'")
      await q.close()
      // not committed; had it been, the cached list would have to show it (one instance: no change-log read)
      expect({ stored, listed: (await api(server.url, 'GET', '/api/articles?limit=50')).body.articlesCount }).toEqual({
        stored: 0,
        listed: 0,
      })
      expect((await api(server.url, 'POST', '/api/articles', { token: user.token, body: article('after the queue') })).status).toBe(201)
    } finally {
      await locker.close()
      await server.stop()
    }
  }, 60_000)

  test("the server ends the instance's connections (pg_terminate_backend): reads retried, no 500, every request served again at once", async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...db.env } })
    const admin = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      // every pooled connection in use once
      await Promise.all(Array.from({ length: 12 }, (_, i) => api(server.url, 'GET', `/api/articles?offset=${i}`, { token: user.token })))
      const [{ n }] = await admin`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`
      expect(n).toBeGreaterThan(0)
      const statuses: number[] = []
      for (let i = 0; i < 12; i++)
        statuses.push((await api(server.url, 'GET', `/api/articles?limit=${i + 1}`, { token: user.token })).status)
      // a read that meets a closed connection is tried again on a new one
      expect(statuses).toEqual(statuses.map(() => 200))
      expect((await api(server.url, 'GET', '/ready')).status).toBe(200)
      const created = await api(server.url, 'POST', '/api/articles', { token: user.token, body: article('after the terminate') })
      expect([201, 503]).toContain(created.status)
      if (created.status === 503) {
        expect((await api(server.url, 'POST', '/api/articles', { token: user.token, body: article('after the terminate') })).status).toBe(
          201,
        )
      }
      expect(server.proc.exitCode).toBeNull()
    } finally {
      await admin.close()
      await server.stop()
    }
  }, 60_000)

  test('DATABASE_POOL_MAX bounds the connections; DATABASE_PREPARED_STATEMENTS=false (PgBouncer transaction mode) serves everything', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_POOL_MAX: '3', DATABASE_PREPARED_STATEMENTS: 'false', ...db.env },
    })
    const admin = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
    try {
      const user = await register(server.url)
      const created = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 'Pooled', description: 'd', body: 'b', tagList: ['pool'] } },
      })
      expect(created.status).toBe(201)
      const slug = created.body.article.slug as string
      let peak = 0
      const watching = (async () => {
        for (let i = 0; i < 40; i++) {
          const [{ n }] =
            await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
          peak = Math.max(peak, n)
          await Bun.sleep(5)
        }
      })()
      // 60 requests at once, each a URL never asked before (built from the database)
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          i % 3 === 0
            ? api(server.url, 'POST', `/api/articles/${slug}/comments`, { token: user.token, body: { comment: { body: `c${i}` } } })
            : api(server.url, 'GET', `/api/articles?tag=pool&limit=${i + 1}`, { token: user.token }),
        ),
      )
      await watching
      expect(answers.map((a, i) => (i % 3 === 0 ? a.status === 201 || a.status === 200 : a.status === 200))).toEqual(
        answers.map(() => true),
      )
      expect(answers.filter((a, i) => i % 3 !== 0 && a.body.articlesCount !== 1)).toEqual([])
      expect(peak).toBeGreaterThan(0)
      expect(peak).toBeLessThanOrEqual(3)
      expect((await api(server.url, 'GET', `/api/articles/${slug}/comments`)).body.comments).toHaveLength(20)
      expect(
        (await api(server.url, 'PUT', `/api/articles/${slug}`, { token: user.token, body: { article: { body: 'edited' } } })).body.article
          .body,
      ).toBe('edited')
    } finally {
      await admin.close()
      await server.stop()
    }
  }, 60_000)
})
