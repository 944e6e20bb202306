import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { createLogger } from '../../src/log.ts'
import { testConfig } from '../support/app.ts'
import { testDatabase } from '../support/backend.ts'

async function appWithLog(level: 'info' | 'warn') {
  const { store } = await testDatabase()
  const lines: Record<string, unknown>[] = []
  const logger = createLogger('json', level, (l) => lines.push(JSON.parse(l)))
  const app = await createApp({ store, config: testConfig(), logger })
  const send = (method: string, path: string) => app.handle(new Request(`http://localhost${path}`, { method }))
  return { lines, send }
}

describe('the access log', () => {
  test('logs every request once, also answers served from the cache and preflights', async () => {
    const { lines, send } = await appWithLog('info')
    expect((await send('GET', '/api/tags')).status).toBe(200)
    expect((await send('GET', '/api/tags')).status).toBe(200) // from the cache
    expect((await send('OPTIONS', '/api/articles')).status).toBe(204)
    expect((await send('GET', '/api/nowhere?token=secret')).status).toBe(404)
    await Bun.sleep(20) // Elysia runs afterResponse hooks after the response is handed over
    const requests = lines.filter((l) => l.msg === 'request')
    const seen = requests.map((l) => [l.method, l.path, l.status])
    expect(seen.sort()).toEqual([
      ['GET', '/api/nowhere', 404],
      ['GET', '/api/tags', 200],
      ['GET', '/api/tags', 200],
      ['OPTIONS', '/api/articles', 204],
    ])
    for (const l of requests) expect(typeof l.ms).toBe('number')
    expect(JSON.stringify(lines)).not.toContain('secret')
  })

  test('writes no request lines above the info level', async () => {
    const { lines, send } = await appWithLog('warn')
    await send('GET', '/api/tags')
    await send('GET', '/api/tags')
    await Bun.sleep(20)
    expect(lines).toEqual([])
  })
})

describe('a proxy TRUST_PROXY does not name', () => {
  test('is said once, at the first sign-up or sign-in that came through one; with TRUST_PROXY, never', async () => {
    for (const trustProxy of [false, true]) {
      const { store } = await testDatabase()
      const lines: Record<string, unknown>[] = []
      const logger = createLogger('json', 'warn', (l) => lines.push(JSON.parse(l)))
      const app = await createApp({ store, config: testConfig({ trustProxy }), logger })
      for (const [i, forwarded] of [undefined, '203.0.113.1', '203.0.113.2'].entries()) {
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (forwarded) headers['x-forwarded-for'] = forwarded
        const user = { username: `proxied${i}`, email: `proxied${i}@example.com`, password: 'password1234' }
        const res = await app.handle(new Request('http://localhost/api/users', { method: 'POST', headers, body: JSON.stringify({ user }) }))
        expect(res.status).toBe(201)
      }
      const said = lines.filter((l) => String(l.msg).includes('TRUST_PROXY is off'))
      expect({ trustProxy, said: said.length }).toEqual({ trustProxy, said: trustProxy ? 0 : 1 })
    }
  })
})

describe('the text format', () => {
  test('an error and its stack stay on the one line of their event', () => {
    const lines: string[] = []
    const logger = createLogger('text', 'info', (l) => lines.push(l))
    logger.error('unhandled error', { method: 'GET', path: '/api/tags' }, new Error('boom'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).not.toContain('\n')
    expect(lines[0]).toMatch(/ ERROR unhandled error method=GET path=\/api\/tags error="Error: boom\\n {4}at /)
  })
})
