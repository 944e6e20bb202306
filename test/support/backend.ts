import { SQL } from 'bun'
import type { Database } from 'bun:sqlite'
import { migrate } from '../../src/db/sqlite/migrate.ts'
import { openDatabase } from '../../src/db/sqlite/open.ts'
import { sqliteStore } from '../../src/db/sqlite/store.ts'
import type { Store } from '../../src/db/store.ts'

/**
 * The backend under test: PostgreSQL when TEST_DATABASE_URL is set (a server
 * the tests may create databases on), else SQLite. The same test files run on
 * both (`bun run test` runs both passes).
 *
 * On PostgreSQL every test app gets a schema of its own in a database made
 * for this test process (dropped when it ends), so tests stay independent as
 * on SQLite, where every app gets a fresh in-memory database.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined
export const BACKEND: 'sqlite' | 'postgres' = TEST_DATABASE_URL ? 'postgres' : 'sqlite'
export const onPostgres = BACKEND === 'postgres'

/** Direct access to a database, for checks HTTP cannot make. Placeholders are `?` on both backends. */
export interface QueryDb {
  backend: 'sqlite' | 'postgres'
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>
  run(sql: string, ...params: unknown[]): Promise<void>
  /** The number the query's first column holds (PostgreSQL returns bigints as strings). */
  count(sql: string, ...params: unknown[]): Promise<number>
  close(): Promise<void>
}

/** A test app's database and its store. */
export interface TestDatabase extends QueryDb {
  store: Store
}

const open: Store[] = []
/** schemas of this test's apps (PostgreSQL), dropped with them */
const schemasInUse: string[] = []
/**
 * Apps live for one test: their connections, and on PostgreSQL their
 * schemas, go after it (test/support/preload.ts calls this after every test).
 */
export async function closeTestStores(): Promise<void> {
  for (const s of open.splice(0)) await s.close().catch(() => {})
  for (const schema of schemasInUse.splice(0)) await setup?.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {})
}

/**
 * A database from an older version, for tests of a migration: migrated up to
 * `version`, then `before` puts in rows that version allowed, then the rest
 * of the migrations run as at start-up.
 */
export interface OlderDatabase {
  version: number
  before(q: QueryDb): Promise<void>
}

/** A fresh, migrated database of the backend under test, with its store. */
export async function testDatabase(older?: OlderDatabase): Promise<TestDatabase> {
  return onPostgres ? postgresDatabase(older) : sqliteTestDatabase(older)
}

/** A fresh SQLite database, whatever the backend under test (tests that compare the two). */
export async function sqliteTestDatabase(older?: OlderDatabase): Promise<TestDatabase> {
  const db = openDatabase(':memory:')
  const q = sqliteQueries(db)
  if (older) {
    migrate(db, older.version)
    await older.before(q)
  }
  migrate(db)
  return { ...q, store: sqliteStore(db, ':memory:') }
}

const firstNumber = (row: Record<string, unknown> | undefined) => Number(Object.values(row ?? {})[0])

/** Queries on a SQLite database (a test app's, or the file of a binary under test). */
export function sqliteQueries(db: Database): QueryDb {
  const all = async <T>(sql: string, ...params: unknown[]) => db.query(sql).all(...(params as never[])) as T[]
  return {
    backend: 'sqlite',
    all,
    get: async (sql, ...params) => (await all(sql, ...params))[0] as never,
    run: async (sql, ...params) => void db.query(sql).run(...(params as never[])),
    count: async (sql, ...params) => firstNumber((await all<Record<string, unknown>>(sql, ...params))[0]),
    close: async () => db.close(),
  }
}

/** Queries on a PostgreSQL database (in `schema`, when given). */
export function postgresQueries(url: string, schema?: string): QueryDb {
  const direct = new SQL({
    url,
    max: 1,
    idleTimeout: 5,
    ...(schema ? { connection: { search_path: schema } } : {}),
  } as ConstructorParameters<typeof SQL>[0])
  const numbered = (sql: string) => {
    let i = 0
    return sql.replace(/\?/g, () => `$${++i}`)
  }
  const all = async <T>(sql: string, ...params: unknown[]) => [...(await direct.unsafe(numbered(sql), params as never[]))] as T[]
  return {
    backend: 'postgres',
    all,
    get: async (sql, ...params) => (await all(sql, ...params))[0] as never,
    run: async (sql, ...params) => void (await direct.unsafe(numbered(sql), params as never[])),
    count: async (sql, ...params) => firstNumber((await all<Record<string, unknown>>(sql, ...params))[0]),
    close: () => direct.close(),
  }
}

// ---------------------------------------------------------------- PostgreSQL

let admin: SQL | undefined
/** a connection to this process's test database, for creating schemas */
let setup: SQL | undefined
let database: string | undefined
let schemas = 0

/** The database of this test process, created on first use. */
async function processDatabase(): Promise<string> {
  if (database) return database
  admin = new SQL({ url: TEST_DATABASE_URL!, max: 1 })
  const name = `conduit_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await admin.unsafe(`CREATE DATABASE ${name}`)
  database = name
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${name}`
  setup = new SQL({ url: url.toString(), max: 1 })
  return name
}

/** Drops the databases this process made (test/support/preload.ts calls this at the end). */
export async function dropTestDatabases(): Promise<void> {
  await dropBinaryDatabases()
  if (!admin || !database) return
  await closeTestStores()
  await setup?.close().catch(() => {})
  await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
  await admin.close()
  admin = undefined
  database = undefined
}

/** A URL of this process's test database. */
export async function testDatabaseUrl(): Promise<string> {
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${await processDatabase()}`
  return url.toString()
}

async function postgresDatabase(older?: OlderDatabase): Promise<TestDatabase> {
  const { openPostgres } = await import('../../src/db/postgres/store.ts')
  const url = await testDatabaseUrl()
  const schema = `app_${++schemas}`
  await setup!.unsafe(`CREATE SCHEMA ${schema}`)
  schemasInUse.push(schema)
  const q = postgresQueries(url, schema)
  open.push({ close: q.close } as Store)
  if (older) {
    const { connect } = await import('../../src/db/postgres/client.ts')
    const { migrate: pgMigrate } = await import('../../src/db/postgres/migrate.ts')
    const sql = connect(url, { poolMax: 1, schema })
    try {
      await pgMigrate(sql, older.version)
    } finally {
      await sql.close()
    }
    await older.before(q)
  }
  const { store } = await openPostgres(url, { poolMax: 4, location: url, schema })
  open.push(store)
  return { ...q, store }
}

// ---------------------------------------------------------------- databases for the binary

let binaryDatabases = 0
const created: string[] = []
async function dropBinaryDatabases(): Promise<void> {
  if (!created.length || !TEST_DATABASE_URL) return
  const a = new SQL({ url: TEST_DATABASE_URL, max: 1 })
  for (const name of created.splice(0)) await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
  await a.close()
}

/**
 * A fresh database for a compiled binary under test: on PostgreSQL a new
 * database (its URL goes into the binary's environment), on SQLite the file
 * the binary creates in its directory. `queries(dir)` reads it directly.
 */
export async function binaryDatabase(): Promise<{ env: Record<string, string>; queries(dir: string): QueryDb }> {
  if (!onPostgres) {
    return {
      env: {},
      queries(dir) {
        const { Database } = require('bun:sqlite') as typeof import('bun:sqlite')
        const db = new Database(`${dir}/conduit.db`)
        db.run('PRAGMA busy_timeout = 5000')
        return sqliteQueries(db)
      },
    }
  }
  const name = `conduit_bin_${process.pid}_${++binaryDatabases}_${Math.random().toString(36).slice(2, 6)}`
  const a = new SQL({ url: TEST_DATABASE_URL!, max: 1 })
  await a.unsafe(`CREATE DATABASE ${name}`)
  await a.close()
  created.push(name)
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${name}`
  return { env: { DATABASE_URL: url.toString() }, queries: () => postgresQueries(url.toString()) }
}
