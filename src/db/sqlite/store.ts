import type { Database } from 'bun:sqlite'
import type { Store } from '../store.ts'
import type { Awaitable } from '../types.ts'
import { sqliteBulk } from '../bulk.ts'
import { SqliteChanges } from './changes.ts'
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer } from './checkpointer.ts'
import { schemaVersion } from './migrate.ts'
import { closeDatabase } from './open.ts'
import { sqliteWrites, tokenCheck } from './writes.ts'

export interface SqliteStore extends Store {
  readonly db: Database
  readonly changes: SqliteChanges
}

/** The store on a migrated SQLite database (see open.ts and migrate.ts). */
export function sqliteStore(db: Database, location: string): SqliteStore {
  const changes = new SqliteChanges(db, location)
  const check = tokenCheck(db)
  const ping = db.query('SELECT 1')
  // INSERT OR IGNORE: two processes starting at once agree on the first secret written
  const keepSecret = db.query<unknown, [string]>("INSERT OR IGNORE INTO settings (key, value) VALUES ('jwt_secret', ?)")
  const secret = db.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'jwt_secret'")
  const tasks: (() => Awaitable<void>)[] = []
  const owned: { close(): void }[] = []
  return {
    backend: 'sqlite',
    location,
    db,
    connection: { backend: 'sqlite', db, path: location, writes: (sql) => sqliteWrites(changes, check, sql) },
    changes,
    bulk: sqliteBulk(db, changes),
    secret(generated) {
      keepSecret.run(generated)
      return secret.get()!.value
    },
    async schemaVersion() {
      return schemaVersion(db)
    },
    async ping() {
      try {
        ping.get()
        return changes.problem === undefined
      } catch {
        return false
      }
    },
    async maintain() {
      changes.purge(Date.now())
      for (const task of tasks) await task()
    },
    addMaintenance: (task) => void tasks.push(task),
    own: (resource) => void owned.push(resource),
    startCheckpoints(logger) {
      db.run(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`)
      // (a file made by root, or with its mode changed by hand): it works without, at a cost, so it is said once
      const signal = changes.signalFailure()
      if (signal) {
        const file = `${location}-changes`
        logger.warn(
          `cannot use the change signal ${file}, so every request asks SQLite what changed (slower): give the file to the service's user (chown) or remove it while no process uses the database`,
          { reason: signal.message },
        )
      }
      // started once serving: its thread and connection are not needed for the first answers
      return location === ':memory:' ? undefined : startCheckpointer(location, logger, { delayMs: 100 })
    },
    async close() {
      for (const r of owned) r.close()
      closeDatabase(db)
    },
  }
}
