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
/** schemas of this test's apps (PostgreSQL); `fresh`: made by the migrations alone, not from an older version */
const schemasInUse: { schema: string; fresh: boolean }[] = []
/**
 * Apps live for one test: their connections go after it, and on PostgreSQL
 * their schemas are emptied for the next app or dropped (test/support/preload.ts
 * calls this after every test).
 */
export async function closeTestStores(): Promise<void> {
  for (const s of open.splice(0)) await s.close().catch(() => {})
  for (const { schema, fresh } of schemasInUse.splice(0)) {
    if (fresh && (await emptied(schema).catch(() => false))) spare.push(schema)
    else await setup?.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {})
  }
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
  // named as the service's connections are, so emptying a schema for reuse is not an edit by hand (see `emptied`)
  setup = new SQL({ url: url.toString(), max: 1, connection: { application_name: 'conduit' } } as ConstructorParameters<typeof SQL>[0])
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
  spare.length = 0
  reference = undefined
}

/**
 * A PostgreSQL session of its own on a test's database and schema: what another client does
 * meanwhile (holding a row or a lock while the app waits for it).
 */
export async function sessionBeside(db: QueryDb): Promise<SQL> {
  const { schema } = (await db.get<{ schema: string }>('SELECT current_schema() AS schema'))!
  return new SQL({ url: await testDatabaseUrl(), max: 1, connection: { search_path: schema } } as ConstructorParameters<typeof SQL>[0])
}

/** How many sessions on the test's PostgreSQL database wait for a lock. */
export const lockWaiters = (db: QueryDb): Promise<number> =>
  db.count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")

/** A URL of this process's test database. */
export async function testDatabaseUrl(): Promise<string> {
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${await processDatabase()}`
  return url.toString()
}

/**
 * Schemas reused (PostgreSQL). Migrating a schema costs PostgreSQL over
 * 100 ms and dropping it 25 more, for each of the PostgreSQL pass's thousand
 * apps; emptying one with DELETE (TRUNCATE makes new files, costing as much
 * as migrating) a fraction of that. A schema is reused only when its catalog
 * is still exactly what the migrations made (a test may drop a table, add a
 * trigger, change a table's options) and it has no planner statistics (which
 * a fresh schema lacks); it is then emptied, its identities restarted, and
 * given what the migrations put in it, copied from a schema kept as
 * migrated. Anything else is dropped, as every schema used to be.
 */
const spare: string[] = []
interface Reference {
  catalog: string
  /** every table, those that reference others first */
  tables: string[]
  /** the tables the migrations put rows in */
  filled: string[]
  /** table.column of each identity */
  identities: [string, string][]
}
let reference: Promise<Reference | null> | undefined

/** The catalog of a schema as the reuse check compares it: names are the same in every schema, oids are not. */
const catalogOf = async (schema: string): Promise<string> => {
  const [row] = await setup!.unsafe(
    `SELECT md5(string_agg(x, ',' ORDER BY x)) AS catalog FROM (
       SELECT 'c ' || relname || ' ' || relkind::text || ' ' || coalesce(array_to_string(reloptions, ';'), '') AS x
         FROM pg_class WHERE relnamespace = $1::regnamespace
       UNION ALL SELECT 'a ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
              || a.attnotnull || a.atthasdef || a.attidentity::text || a.attgenerated::text
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE c.relnamespace = $1::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
       -- (the triggers of foreign keys are named by oid: by their table alone)
       UNION ALL SELECT 't ' || c.relname || '.' || CASE WHEN t.tgisinternal THEN '' ELSE t.tgname END || ' '
              || t.tgenabled::text || ' ' || t.tgtype
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = $1::regnamespace
       UNION ALL SELECT 'p ' || proname || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = $1::regnamespace
       UNION ALL SELECT 'k ' || conname || ' ' || contype::text FROM pg_constraint WHERE connamespace = $1::regnamespace
       UNION ALL SELECT 'stats ' || count(*) FROM pg_stats WHERE schemaname = $2
     ) f`,
    [schema, schema],
  )
  return row.catalog
}

/** A schema left as the migrations made it, once per process: what reused schemas are compared with and filled from. */
function referenceSchema(): Promise<Reference | null> {
  reference ??= (async () => {
    const { connect } = await import('../../src/db/postgres/client.ts')
    const { migrate: pgMigrate } = await import('../../src/db/postgres/migrate.ts')
    await setup!.unsafe('CREATE SCHEMA migrated')
    const sql = connect(await testDatabaseUrl(), { poolMax: 1, schema: 'migrated' })
    try {
      await pgMigrate(sql)
    } finally {
      await sql.close()
    }
    const names = (rows: Iterable<{ name: string }>) => [...rows].map((r) => r.name)
    let left = names(
      await setup!.unsafe("SELECT relname AS name FROM pg_class WHERE relnamespace = 'migrated'::regnamespace AND relkind = 'r'"),
    )
    const links = [
      ...(await setup!.unsafe(
        `SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent FROM pg_constraint
         WHERE connamespace = 'migrated'::regnamespace AND contype = 'f' AND conrelid <> confrelid`,
      )),
    ].map((r: { child: string; parent: string }): [string, string] => [
      r.child.replace(/^migrated\./, ''),
      r.parent.replace(/^migrated\./, ''),
    ])
    const tables: string[] = []
    while (left.length) {
      // a table no table still left references
      const next = left.filter((t) => !links.some(([child, parent]) => parent === t && left.includes(child) && child !== t))
      if (!next.length) return null
      tables.push(...next)
      left = left.filter((t) => !next.includes(t))
    }
    const filled: string[] = []
    for (const t of tables) if ((await setup!.unsafe(`SELECT 1 FROM migrated.${t} LIMIT 1`)).length) filled.push(t)
    const identities = [
      ...(await setup!.unsafe(
        `SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE c.relnamespace = 'migrated'::regnamespace AND a.attidentity <> ''`,
      )),
    ].map((r: { relname: string; attname: string }): [string, string] => [r.relname, r.attname])
    // a filled table's identity would start again at an id its copied rows hold
    if (identities.some(([t]) => filled.includes(t))) return null
    return { catalog: await catalogOf('migrated'), tables, filled, identities }
  })()
  return reference
}

/** Empties a schema an app used and fills it as migrated; false when it is not as migrated (see `spare`). */
async function emptied(schema: string): Promise<boolean> {
  const ref = await referenceSchema()
  if (!ref || (await catalogOf(schema)) !== ref.catalog) return false
  // on a connection named as the service's (see processDatabase): the log's by-hand triggers stay still
  await setup!.begin(async (tx) => {
    await tx.unsafe("SET LOCAL lock_timeout = '5s'")
    for (const t of ref.tables) await tx.unsafe(`DELETE FROM ${schema}.${t}`)
    for (const t of ref.filled) await tx.unsafe(`INSERT INTO ${schema}.${t} SELECT * FROM migrated.${t}`)
    for (const [t, c] of ref.identities) await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${schema}.${t}', '${c}'), 1, false)`)
  })
  return true
}

async function postgresDatabase(older?: OlderDatabase): Promise<TestDatabase> {
  const { openPostgres } = await import('../../src/db/postgres/store.ts')
  const url = await testDatabaseUrl()
  const reused = older ? undefined : spare.pop()
  const schema = reused ?? `app_${++schemas}`
  if (!reused) await setup!.unsafe(`CREATE SCHEMA ${schema}`)
  schemasInUse.push({ schema, fresh: !older })
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
