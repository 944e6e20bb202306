import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ApiResponse, api, register, type Server, startServer, useBinary } from '../e2e/support.ts'
import { binaryDatabase, onPostgres, type QueryDb } from '../support/backend.ts'

/**
 * A write whose target another process deletes while the write waits for the database: the
 * answer is the one it would get arriving a moment later (404), never a 500, and nothing is
 * stored. The deletion is held open in a transaction of its own (an operator's `admin`, another
 * instance) while the request's lookup has already found the target, then committed.
 */

const binary = useBinary()
let server: Server
let db: { env: Record<string, string>; queries(dir: string): QueryDb }
let q: QueryDb

beforeAll(async () => {
  db = await binaryDatabase()
  server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...db.env } })
  q = db.queries(server.dir)
}, 60_000)
afterAll(async () => {
  await q?.close()
  await server?.stop()
})

/** Runs `statement` in a transaction of another connection, left open until the returned function commits it. */
async function heldOpen(statement: string, param: string): Promise<() => Promise<void>> {
  if (!onPostgres) {
    const other = new Database(`${server.dir}/conduit.db`)
    other.run('PRAGMA foreign_keys = ON')
    other.run('BEGIN IMMEDIATE')
    other.query(statement.replace('$1', '?')).run(param)
    return async () => {
      other.run('COMMIT')
      other.close()
    }
  }
  const sql = new SQL({ url: db.env.DATABASE_URL!, max: 1 })
  const conn = await sql.reserve()
  await conn`BEGIN`
  await conn.unsafe(statement, [param])
  return async () => {
    await conn`COMMIT`
    conn.release()
    await sql.close()
  }
}

/** Sends the request, lets it reach the database's lock, then commits the deletion held open. */
async function whileDeleting(statement: string, param: string, send: () => Promise<ApiResponse>) {
  const commit = await heldOpen(statement, param)
  const answer = send()
  await Bun.sleep(300)
  await commit()
  return answer
}

describe('a write whose target is deleted while it waits', () => {
  test('following a user deleted meanwhile: 404 profile not found, no follow stored', async () => {
    const alice = await register(server.url)
    const bob = await register(server.url)
    // the profile is read (and cached) before: the follow's own lookup finds it
    expect((await api(server.url, 'GET', `/api/profiles/${bob.username}`)).status).toBe(200)
    const res = await whileDeleting('DELETE FROM users WHERE username = $1', bob.username, () =>
      api(server.url, 'POST', `/api/profiles/${bob.username}/follow`, { token: alice.token }),
    )
    expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { errors: { profile: ['not found'] } } })
    expect(await q.count('SELECT count(*) FROM follows')).toBe(0)
  }, 30_000)

  test('favoriting and commenting on an article deleted meanwhile: 404 article not found, nothing stored', async () => {
    const alice = await register(server.url)
    const bob = await register(server.url)
    for (const [path, body] of [
      ['favorite', undefined],
      ['comments', { comment: { body: 'too late' } }],
    ] as const) {
      const made = await api(server.url, 'POST', '/api/articles', {
        token: bob.token,
        body: { article: { title: `Going ${path}`, description: 'd', body: 'b' } },
      })
      const slug = made.body.article.slug as string
      const res = await whileDeleting('DELETE FROM articles WHERE slug = $1', slug, () =>
        api(server.url, 'POST', `/api/articles/${slug}/${path}`, { token: alice.token, body }),
      )
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { errors: { article: ['not found'] } } })
    }
    expect(await q.count('SELECT count(*) FROM favorites')).toBe(0)
    expect(await q.count('SELECT count(*) FROM comments')).toBe(0)
  }, 30_000)
})

describe('a write whose author is deleted while it waits', () => {
  const ROWS =
    'SELECT (SELECT count(*) FROM articles) + (SELECT count(*) FROM comments) + (SELECT count(*) FROM favorites) + (SELECT count(*) FROM follows)'
  /** Each write a signed-in user makes, given an article and a user of others': method, path, body. */
  const writes: [string, (other: { slug: string; username: string }) => [string, string, unknown?]][] = [
    ['create an article', () => ['POST', '/api/articles', { article: { title: 'Orphan', description: 'd', body: 'b', tagList: ['t'] } }]],
    ['comment', (o) => ['POST', `/api/articles/${o.slug}/comments`, { comment: { body: 'orphan' } }]],
    ['favorite', (o) => ['POST', `/api/articles/${o.slug}/favorite`]],
    ['follow', (o) => ['POST', `/api/profiles/${o.username}/follow`]],
    ['update the user', () => ['PUT', '/api/user', { user: { bio: 'orphan' } }]],
  ]
  for (const [name, request] of writes) {
    test(`${name}: 401 token is invalid, nothing stored`, async () => {
      const bob = await register(server.url)
      const made = await api(server.url, 'POST', '/api/articles', {
        token: bob.token,
        body: { article: { title: `Bob on ${name}`, description: 'd', body: 'b' } },
      })
      const alice = await register(server.url)
      // alice's token is verified (and cached) before the deletion starts
      expect((await api(server.url, 'GET', '/api/user', { token: alice.token })).status).toBe(200)
      const [method, path, body] = request({ slug: made.body.article.slug, username: bob.username })
      const before = await q.count(ROWS)
      const res = await whileDeleting('DELETE FROM users WHERE username = $1', alice.username, () =>
        api(server.url, method, path, { token: alice.token, body }),
      )
      expect({ status: res.status, body: res.body, challenge: res.headers.get('www-authenticate') }).toEqual({
        status: 401,
        body: { errors: { token: ['is invalid'] } },
        challenge: 'Token error="invalid_token"',
      })
      expect(await q.count(ROWS)).toBe(before)
      expect((await api(server.url, 'GET', '/api/user', { token: alice.token })).status).toBe(401)
    }, 30_000)
  }
})
