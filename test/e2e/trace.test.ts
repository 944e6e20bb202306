import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REQUEST_KINDS, SENT_HEADER, SLICE } from '../../src/trace.ts'
import { binaryDatabase, onPostgres } from '../support/backend.ts'
import { api, register, startServer, tempDir, useBinary } from './support.ts'

/**
 * TAIL_TRACE (src/trace.ts), as bench/tail.ts uses it: the binary keeps each
 * request's times and the event loop's slices, and writes them when it stops.
 */

const binary = useBinary()

/** The trace file: its requests (sent, arrived, done, own, kind) and slices (start, end, kind). */
function readTrace(file: string) {
  const f = new Float64Array(readFileSync(file).buffer.slice(0))
  const [slices, requests, origin] = [f[0]!, f[1]!, f[2]!]
  const at = 3 + slices * 3
  return {
    origin,
    slices: Array.from({ length: slices }, (_, i) => ({ start: f[3 + i * 3]!, end: f[4 + i * 3]!, kind: f[5 + i * 3]! })),
    requests: Array.from({ length: requests }, (_, i) => {
      const r = f.subarray(at + i * 5, at + i * 5 + 5)
      return { sent: r[0]!, arrived: r[1]!, done: r[2]!, own: r[3]!, kind: REQUEST_KINDS[r[4]!] }
    }),
  }
}

describe(`TAIL_TRACE on ${onPostgres ? 'PostgreSQL' : 'SQLite'}`, () => {
  test('the binary writes each request’s times and the loop’s slices when it stops', async () => {
    const db = await binaryDatabase()
    const dir = tempDir()
    const file = join(dir, 'conduit.trace')
    const env = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...(onPostgres ? db.env : { DATABASE_PATH: join(dir, 'trace.db') }) }
    const server = await startServer(binary(), { env: { ...env, TAIL_TRACE: file } })
    const user = await register(server.url)
    const created = await api(server.url, 'POST', '/api/articles', {
      token: user.token,
      body: { article: { title: 'Traced', description: 'd', body: 'b' } },
    })
    expect(created.status).toBe(201)
    const slug = (created.body as { article: { slug: string } }).article.slug
    const token = user.token
    expect((await api(server.url, 'POST', `/api/articles/${slug}/favorite`, { token })).status).toBe(200)
    expect((await api(server.url, 'DELETE', `/api/articles/${slug}/favorite`, { token })).status).toBe(200)
    const comment = { comment: { body: 'c' } }
    expect((await api(server.url, 'POST', `/api/articles/${slug}/comments?x=1`, { token, body: comment })).status).toBe(201)
    const stamps: number[] = []
    for (let i = 0; i < 5; i++) {
      const sent = Math.round((performance.timeOrigin + performance.now()) * 1000)
      stamps.push(sent)
      const res = await fetch(`${server.url}/api/articles?limit=${i + 1}`, { headers: { [SENT_HEADER]: String(sent) } })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    }
    expect(existsSync(file)).toBe(false)
    expect((await server.stop()).code).toBe(0)

    const trace = readTrace(file)
    const stamped = trace.requests.filter((r) => Number.isFinite(r.sent))
    // sent is in the server's own time (ms since its start): the stamps, converted
    expect(stamped.map((r) => Math.round((r.sent + trace.origin) * 1000))).toEqual(stamps)
    for (const r of stamped) {
      // this test's clock and the server's agree within a few ms; each answer comes after its request reached the server
      expect(r.arrived - r.sent).toBeGreaterThan(-5)
      expect(r.arrived - r.sent).toBeLessThan(1_000)
      expect(r.done).toBeGreaterThanOrEqual(r.arrived)
      expect(r.own).toBeGreaterThan(0)
      expect(r.kind).toBe('read')
    }
    // every request is there (the start-up's /health polls and the registration too), each write by its kind
    expect(trace.requests.length).toBeGreaterThanOrEqual(10)
    expect(trace.requests.filter((r) => r.kind !== 'read').map((r) => r.kind)).toEqual([
      'other write',
      'new article',
      'favorite',
      'unfavorite',
      'comment',
    ])
    const kinds = new Set(trace.slices.map((s) => s.kind))
    expect(kinds.has(SLICE.arrival)).toBe(true)
    if (!onPostgres) expect(kinds.has(SLICE.write)).toBe(true)
    else expect(kinds.has(SLICE.resumed)).toBe(true)
    for (const s of trace.slices) expect(s.end).toBeGreaterThanOrEqual(s.start)
  }, 60_000)
})
