import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestApp, testApp } from '../support/app.ts'
import { skipIf } from '../support/skip.ts'

const TOKEN = 'a-metrics-token-for-the-tests'
const cheap = { passwordHash: { memoryCost: 256, timeCost: 1 } }
const promtool = Bun.which('promtool')

/** A scrape with `Bearer TOKEN`, another Authorization header, or (null) none. */
const scrape = async (app: TestApp, authorization: string | null = `Bearer ${TOKEN}`) =>
  app.request('GET', '/metrics', { headers: authorization === null ? {} : { authorization } })

/** The value of one sample, 0 when absent: `labels` exactly as written, in order. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

async function withArticle(app: TestApp) {
  const user = await app.request('POST', '/api/users', {
    body: { user: { username: 'reader', email: 'reader@example.com', password: 'password123' } },
  })
  const token: string = user.body.user.token
  const article = await app.request('POST', '/api/articles', {
    token,
    body: { article: { title: 'Zebra Quokka', description: 'd', body: 'b', tagList: ['t'] } },
  })
  return { token, slug: article.body.article.slug as string }
}

describe('GET /metrics', () => {
  test('is not there (404, the envelope) while METRICS_TOKEN is unset', async () => {
    const app = await testApp()
    const res = await scrape(app)
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { route: ['not found'] } })
  })

  test('answers 401 without the token, with another scheme or a wrong one; 200 with it', async () => {
    const app = await testApp({ metricsToken: TOKEN })
    for (const [authorization, message] of [
      [null, 'is missing'],
      [`Token ${TOKEN}`, 'is invalid'],
      ['Bearer', 'is invalid'],
      [`Bearer ${TOKEN}x`, 'is invalid'],
      [`Bearer ${TOKEN.slice(0, -1)}`, 'is invalid'],
      ['Bearer wrong', 'is invalid'],
      [`Bearer ${TOKEN} junk`, 'is invalid'],
      [`Bearer  ${TOKEN}`, 'is invalid'],
    ] as const) {
      const res = await scrape(app, authorization)
      expect([authorization, res.status, res.body]).toEqual([authorization, 401, { errors: { token: [message] } }])
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
      expect(res.text).not.toContain('conduit_')
    }
    const ok = await scrape(app, `bearer ${TOKEN}`)
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(ok.text).toContain('# TYPE conduit_http_requests_total counter')
    expect(ok.text).toMatch(/^conduit_build_info\{version="\d+\.\d+\.\d+",backend="(sqlite|postgres)"\} 1$/m)
  })

  test('counts requests by route template, fast-path and framework answers alike, never by raw path', async () => {
    const app = await testApp({ ...cheap, metricsToken: TOKEN })
    const { token, slug } = await withArticle(app)
    const before = (await scrape(app)).text
    const articleGets = (t: string) => sample(t, 'conduit_http_requests_total', 'method="GET",route="/api/articles/:slug",status="200"')
    // the first GET builds the answer (the fast path's read), the next ones are cache hits; the signed-in one goes through the framework first
    for (let i = 0; i < 3; i++) expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(200)
    expect((await app.request('GET', `/api/articles/${slug}`, { token })).status).toBe(200)
    expect((await app.request('GET', '/api/articles/missing-one')).status).toBe(404)
    expect((await app.request('PUT', `/api/articles/${slug}`, { token, body: { article: { body: 'new' } } })).status).toBe(200)
    expect((await app.request('GET', '/api/no/such/route')).status).toBe(404)
    expect((await app.request('OPTIONS', `/api/articles/${slug}`)).status).toBe(204)
    expect((await app.request('GET', '/health')).status).toBe(200)
    const after = (await scrape(app)).text

    expect(articleGets(after) - articleGets(before)).toBe(4)
    const at = (labels: string) =>
      sample(after, 'conduit_http_requests_total', labels) - sample(before, 'conduit_http_requests_total', labels)
    expect(at('method="GET",route="/api/articles/:slug",status="404"')).toBe(1)
    expect(at('method="PUT",route="/api/articles/:slug",status="200"')).toBe(1)
    expect(at('method="GET",route="unmatched",status="404"')).toBe(1)
    expect(at('method="OPTIONS",route="preflight",status="204"')).toBe(1)
    expect(at('method="GET",route="/health",status="200"')).toBe(1)
    // the earlier scrape is counted once it was answered
    expect(sample(after, 'conduit_http_requests_total', 'method="GET",route="/metrics",status="200"')).toBe(1)
    const histogram = (t: string) => sample(t, 'conduit_http_request_duration_seconds_count', 'route="/api/articles/:slug"')
    expect(histogram(after) - histogram(before)).toBe(6)
    expect(sample(after, 'conduit_http_request_duration_seconds_bucket', 'route="/api/articles/:slug",le="+Inf"')).toBe(histogram(after))
    expect(after).not.toContain(slug)
    expect(after).not.toContain('missing-one')
    expect(after).not.toContain('/no/such')
  })

  test('counts cache hits and misses per cache', async () => {
    const app = await testApp({ ...cheap, metricsToken: TOKEN })
    const { slug } = await withArticle(app)
    const before = (await scrape(app)).text
    for (let i = 0; i < 5; i++) expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(200)
    const after = (await scrape(app)).text
    const hits = (t: string) => sample(t, 'conduit_cache_hits_total', 'cache="responses"')
    const misses = (t: string) => sample(t, 'conduit_cache_misses_total', 'cache="responses"')
    // the first GET misses (its answer is then kept), the four others hit
    expect(misses(after) - misses(before)).toBe(1)
    expect(hits(after) - hits(before)).toBe(4)
    expect(sample(after, 'conduit_cache_bytes', 'cache="responses"')).toBeGreaterThan(0)
    expect(sample(after, 'conduit_cache_entries', 'cache="responses"')).toBeGreaterThan(0)
    expect(sample(after, 'conduit_cache_hits_total', 'cache="slugs"')).toBeGreaterThanOrEqual(0)
    for (const family of [
      'conduit_db_operations_total',
      'conduit_db_errors_total',
      'conduit_changes_reads_total',
      'process_cpu_seconds_total',
    ])
      expect(after).toContain(`# TYPE ${family} counter`)
    for (const family of ['process_resident_memory_bytes', 'conduit_js_heap_size_bytes', 'conduit_changes_behind_seconds'])
      expect(after).toContain(`# TYPE ${family} gauge`)
  })

  test('counts login throttle refusals', async () => {
    const app = await testApp({
      ...cheap,
      metricsToken: TOKEN,
      loginThrottle: { enabled: true, perPair: 2, perAccount: 100, perAddress: 1000, windowSeconds: 60 },
    })
    const refusals = async () => sample((await scrape(app)).text, 'conduit_throttle_refusals_total', 'throttle="login"')
    expect(await refusals()).toBe(0)
    const statuses: number[] = []
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await app.request('POST', '/api/users/login', { body: { user: { email: 'x@example.com', password: 'wrong-one' } } })).status,
      )
    expect(statuses).toEqual([401, 401, 429, 429])
    expect(await refusals()).toBe(2)
  })

  test('counts registration throttle refusals', async () => {
    const app = await testApp({ ...cheap, metricsToken: TOKEN, registrationThrottle: { enabled: true, perAddress: 2, windowSeconds: 60 } })
    const refusals = async () => sample((await scrape(app)).text, 'conduit_throttle_refusals_total', 'throttle="registration"')
    expect(await refusals()).toBe(0)
    const statuses: number[] = []
    for (const name of ['ra', 'rb', 'rc', 'rd'])
      statuses.push(
        (
          await app.request('POST', '/api/users', {
            body: { user: { username: name, email: `${name}@example.com`, password: 'password123' } },
          })
        ).status,
      )
    expect(statuses).toEqual([201, 201, 429, 429])
    expect(await refusals()).toBe(2)
    expect(sample((await scrape(app)).text, 'conduit_throttle_refusals_total', 'throttle="login"')).toBe(0)
  })

  test('counts database writes and their failures', async () => {
    const app = await testApp({ ...cheap, metricsToken: TOKEN })
    const { token, slug } = await withArticle(app)
    const before = (await scrape(app)).text
    const writes = (t: string) => sample(t, 'conduit_db_operations_total', 'kind="write"')
    for (let i = 0; i < 3; i++) expect((await app.request('POST', `/api/articles/${slug}/favorite`, { token })).status).toBe(200)
    let after = (await scrape(app)).text
    // three write transactions (the second and third change nothing, but run)
    expect(writes(after) - writes(before)).toBe(3)
    // (the figures are the process's: other tests in this process may have counted before)
    const errors = (t: string) => sample(t, 'conduit_db_errors_total', 'reason="other"')
    expect(errors(after) - errors(before)).toBe(0)
    expect(sample(after, 'conduit_db_pool_max_connections')).toBe(app.store.backend === 'postgres' ? app.config.databasePoolMax : 0)
    // a fault under a write: counted as an error of kind other (answered 500)
    await app.db.run('DROP TABLE favorites')
    const failed = await app.request('DELETE', `/api/articles/${slug}/favorite`, { token, allow500: true })
    expect(failed.status).toBe(500)
    after = (await scrape(app)).text
    expect(errors(after) - errors(before)).toBe(1)
  })

  skipIf(!promtool && 'promtool missing').test('passes promtool check metrics', async () => {
    const app = await testApp({ ...cheap, metricsToken: TOKEN })
    await withArticle(app)
    await app.request('GET', '/api/articles')
    await app.request('GET', '/api/nowhere')
    const text = (await scrape(app)).text
    const dir = mkdtempSync(join(tmpdir(), 'conduit-promtool-'))
    try {
      const file = join(dir, 'metrics.txt')
      writeFileSync(file, text)
      const run = Bun.spawnSync({ cmd: [promtool!, 'check', 'metrics'], stdin: Bun.file(file), stdout: 'pipe', stderr: 'pipe' })
      expect(`${run.stdout}${run.stderr}`.trim()).toBe('')
      expect(run.exitCode).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
