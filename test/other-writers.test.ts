import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { binaryDatabase, onPostgres } from './support/backend.ts'
import { type ApiResponse, runCli, startServer, tempDir, useBinary } from './e2e/support.ts'

/**
 * Writers other than the service's API, against running instances of the
 * compiled binary whose caches are warm: `conduit seed` and `conduit copy`
 * are seen by the very next request.
 */
const binary = useBinary()
const BACKEND = onPostgres ? 'PostgreSQL' : 'SQLite'

/** A database for binaries: the SQLite file's path, or the PostgreSQL URL. */
async function database() {
  const db = await binaryDatabase()
  const dir = tempDir()
  const file = join(dir, 'conduit.db')
  const target = onPostgres ? db.env.DATABASE_URL! : file
  const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...(onPostgres ? db.env : { DATABASE_PATH: file }) }
  return { target, env }
}

/** GET on a fresh connection (a server with workers hands each connection to either). */
async function fresh(base: string, path: string): Promise<ApiResponse> {
  const res = await fetch(`${base}${path}`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(10_000) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text }
}

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

  test.skipIf(onPostgres)(
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

describe.skipIf(!onPostgres)('conduit copy into an empty PostgreSQL database that is served', () => {
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
