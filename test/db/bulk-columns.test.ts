import { describe, expect, test } from 'bun:test'
import { seedDatabase } from '../../src/cli/seed-data.ts'
import { type BulkLoad, TABLE_NAMES, TABLES, type Table } from '../../src/db/bulk.ts'
import { onPostgres, testDatabase } from '../support/backend.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * `conduit copy` and `conduit seed` name every column they load (TABLES in
 * src/db/bulk.ts): a column a migration adds but TABLES lacks is silently left
 * out of a copy. So TABLES must be the migrated schema, column for column.
 */

/** Tables the bulk loader leaves out on purpose, and why. */
const NOT_LOADED: Record<string, string> = {
  changes: 'the change log: a load records one "everything changed" row of its own',
  counters: 'recomputed from the rows after a load',
  throttle: 'login and registration windows: minutes long, not data',
  writer: "SQLite's count of changes by hand",
  sqlite_sequence: "SQLite's own; a load moves it past the source's highest ids",
  conduit_schema: "PostgreSQL's schema version, set by the migrations",
}

/** Every table of the migrated schema, with its columns and, on PostgreSQL, their types. */
async function migratedSchema(): Promise<Record<string, Record<string, string>>> {
  const db = await testDatabase()
  const out: Record<string, Record<string, string>> = {}
  if (onPostgres) {
    const rows = await db.all<{ t: string; c: string; type: string }>(
      'SELECT table_name AS t, column_name AS c, udt_name AS type FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position',
    )
    for (const r of rows) (out[r.t] ??= {})[r.c] = r.type
  } else {
    const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    for (const { name } of tables) {
      // SQLite's declared types are loose (INTEGER holds both int4 and int8): names only
      for (const c of await db.all<{ name: string }>(`PRAGMA table_info(${name})`)) (out[name] ??= {})[c.name] = ''
    }
  }
  return out
}

describe('the columns conduit copy and seed load', () => {
  test('are every column of every table the migrations make, with its PostgreSQL type', async () => {
    const schema = await migratedSchema()
    const loaded = (t: Table) => Object.fromEntries(Object.entries(TABLES[t]).map(([c, type]) => [c, onPostgres ? (type as string) : '']))
    const migrated = Object.fromEntries(Object.entries(schema).filter(([t]) => !(t in NOT_LOADED)))
    expect(Object.fromEntries(TABLE_NAMES.map((t) => [t, loaded(t)]))).toEqual(migrated)
  })

  skipIf(why.sqlitePass).test('seed gives every row a value for each of its table’s columns', async () => {
    const widths: string[] = []
    const recorder: BulkLoad = {
      count: async () => 0,
      secret: async () => undefined,
      load: async (fn) =>
        fn({
          count: async () => 0,
          insert: async (table, rows) => {
            for (const r of rows) if (r.length !== Object.keys(TABLES[table]).length) widths.push(`${table}: ${r.length} values`)
          },
        }),
    }
    const options = { users: 3, articles: 3, tags: 2, follows: 1, favoritesPerArticle: 1, commentsPerArticle: 1, seed: 1 }
    await seedDatabase(recorder, { ...options, passwordHash: 'not-a-real-hash' })
    expect(widths).toEqual([])
  })
})
