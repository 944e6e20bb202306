import type { SQL } from 'bun'
import type { Store } from '../store.ts'
import { type Awaitable, DatabaseUnavailable } from '../types.ts'
import { postgresBulk } from '../bulk.ts'
import { PgChanges } from './changes.ts'
import { type ClientOptions, connect, isUnavailable, read } from './client.ts'
import type { OpeningStep } from '../opening.ts'
import { migrate, schemaVersion } from './migrate.ts'
import { postgresWrites } from './writes.ts'

export interface PostgresOptions extends ClientOptions {
  /** where the data lives, safe to log (the URL without its password) */
  location: string
  /** only this process uses the database: skip the per-request change-log read (see PgChanges) */
  singleInstance?: boolean
}

export interface PostgresStore extends Store {
  readonly sql: SQL
}

/** The store on PostgreSQL (see connect for TLS and the pool). */
export function postgresStore(sql: SQL, o: PostgresOptions): PostgresStore {
  const changes = new PgChanges(sql, o.singleInstance ?? false)
  const tasks: (() => Awaitable<void>)[] = []
  const owned: { close(): void }[] = []
  return {
    backend: 'postgres',
    location: o.location,
    sql,
    connection: { backend: 'postgres', sql, writes: (statements) => postgresWrites(changes, statements) },
    changes,
    bulk: postgresBulk(sql, changes),
    secret: (generated) =>
      read(async () => {
        // ON CONFLICT DO NOTHING: instances starting at once agree on the first secret written
        await sql`INSERT INTO settings (key, value) VALUES ('jwt_secret', ${generated}) ON CONFLICT (key) DO NOTHING`
        const [row] = await sql`SELECT value FROM settings WHERE key = 'jwt_secret'`
        return row.value as string
      }),
    schemaVersion: () => read(() => schemaVersion(sql)),
    async ping() {
      try {
        await read(() => sql`SELECT 1`)
        return true
      } catch {
        return false
      }
    },
    async maintain() {
      await changes.purge(Date.now())
      for (const task of tasks) await task()
      // last: a role that may not vacuum the log still purges it and the rest
      await changes.tidy()
    },
    addMaintenance: (task) => void tasks.push(task),
    own: (resource) => void owned.push(resource),
    startCheckpoints: () => undefined,
    async close() {
      for (const r of owned) r.close()
      await sql.close({ timeout: 2 })
    },
  }
}

/** Connects, migrates (under an advisory lock) and returns the store. Unreachable: one clear error. */
export async function openPostgres(
  url: string,
  o: PostgresOptions,
  step?: OpeningStep,
): Promise<{ store: PostgresStore; applied: number[] }> {
  const sql = connect(url, o)
  try {
    const applied = await migrate(sql, undefined, step)
    return { store: postgresStore(sql, o), applied }
  } catch (e) {
    await sql.close({ timeout: 1 }).catch(() => {})
    if (isUnavailable(e)) throw new DatabaseUnavailable(e)
    throw e
  }
}
