import { type App, createApp } from '../../src/app.ts'
import { type Config, defaults } from '../../src/config.ts'
import type { Store } from '../../src/db/store.ts'
import { type TestDatabase, testDatabase } from './backend.ts'
import { type ContractOptions, checkAnswer } from './contract.ts'

export interface TestApp {
  /** the backend's database, for checks a test cannot make through HTTP (`?` placeholders on both backends) */
  db: TestDatabase
  store: Store
  config: Config
  app: App
  /** Sends a request through the real app. `body` objects are sent as JSON. Every answer is checked against its route's declaration (support/contract.ts). */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>
}
export interface TestResponse {
  status: number
  headers: Headers
  text: string
  /** parsed JSON body, or undefined when the body is empty or not JSON */
  body: any
}

/** The cheapest argon2id cost: a registration takes about a millisecond, not tens. */
export const CHEAP_HASHING: Config['passwordHash'] = { memoryCost: 256, timeCost: 1 }

/**
 * Test settings on top of the defaults: registration is not throttled (a test
 * registers many users from one address) and passwords are hashed at the
 * cheapest cost, unless a test says otherwise (test/users/users.test.ts checks the
 * production cost; the end-to-end tests run the binary with its defaults).
 */
export const testConfig = (overrides: Partial<Config> = {}): Config => ({
  ...defaults,
  registrationThrottle: { ...defaults.registrationThrottle, enabled: false },
  passwordHash: CHEAP_HASHING,
  ...overrides,
})

/**
 * A fresh app on a fresh database of the backend under test (TEST_DATABASE_URL,
 * else SQLite), migrated like production; or on `database`, made for the test.
 */
export async function testApp(overrides: Partial<Config> = {}, database?: TestDatabase): Promise<TestApp> {
  const db = database ?? (await testDatabase())
  const config = testConfig(overrides)
  const app = await createApp({ store: db.store, config })
  return {
    db,
    store: db.store,
    config,
    app,
    request: (method, path, options) => send(app, method, path, options),
  }
}

export interface RequestOptions extends ContractOptions {
  body?: unknown
  token?: string
  headers?: Record<string, string>
}

/** One request through `app.handle`, as a client would send it; the answer checked against the route's declaration. */
export async function send(
  app: App,
  method: string,
  path: string,
  { body, token, headers = {}, ...contract }: RequestOptions = {},
): Promise<TestResponse> {
  const h: Record<string, string> = { ...headers }
  if (token) h.authorization = `Token ${token}`
  let payload: string | Uint8Array | undefined
  if (body !== undefined) {
    payload = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
    h['content-type'] ??= 'application/json'
  }
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers: h, body: payload }))
  const text = await res.text()
  checkAnswer(app.declared, method, `http://localhost${path}`, res.status, text, contract)
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, text, body: parsed }
}
