import { Database } from 'bun:sqlite'
import { createApp } from '../../src/app.ts'
import { type Config, defaults } from '../../src/config.ts'
import { migrate } from '../../src/db/migrate.ts'
import { openDatabase } from '../../src/db/database.ts'

export interface TestApp {
  db: Database
  config: Config
  /** Sends a request through the real app. `body` objects are sent as JSON. */
  request(method: string, path: string, options?: { body?: unknown; token?: string; headers?: Record<string, string> }): Promise<TestResponse>
}
export interface TestResponse {
  status: number
  headers: Headers
  text: string
  /** parsed JSON body, or undefined when the body is empty or not JSON */
  body: any
}

/** A fresh app on a fresh in-memory bun:sqlite database, migrated like production. */
export function testApp(overrides: Partial<Config> = {}): TestApp {
  const db = openDatabase(':memory:')
  migrate(db)
  const config: Config = { ...defaults, ...overrides }
  const app = createApp({ db, config })
  return {
    db,
    config,
    async request(method, path, { body, token, headers = {} } = {}) {
      const h: Record<string, string> = { ...headers }
      if (token) h.authorization = `Token ${token}`
      let payload: string | undefined
      if (body !== undefined) {
        payload = typeof body === 'string' ? body : JSON.stringify(body)
        h['content-type'] ??= 'application/json'
      }
      const res = await app.handle(new Request(`http://localhost${path}`, { method, headers: h, body: payload }))
      const text = await res.text()
      let parsed: unknown
      try {
        parsed = text ? JSON.parse(text) : undefined
      } catch {
        parsed = undefined
      }
      return { status: res.status, headers: res.headers, text, body: parsed }
    },
  }
}
