import { resolve } from 'node:path'
import { type Config, redactUrl } from '../config.ts'
import { migrate as migrateSqlite } from './sqlite/migrate.ts'
import { openDatabase } from './sqlite/open.ts'
import { sqliteStore } from './sqlite/store.ts'
import type { Store } from './store.ts'

export interface Opened {
  store: Store
  /** migration versions applied while opening */
  applied: number[]
}

/** Opens (and migrates) the database the configuration names: PostgreSQL for a postgres:// URL, else the SQLite file. */
export async function openStore(config: Config): Promise<Opened> {
  if (config.databaseUrl) {
    const { openPostgres } = await import('./postgres/store.ts')
    return openPostgres(config.databaseUrl, {
      poolMax: config.databasePoolMax,
      prepare: config.databasePrepare,
      timeoutMs: config.databaseTimeoutMs,
      location: redactUrl(config.databaseUrl),
      singleInstance: config.singleInstance,
    })
  }
  const db = openDatabase(config.databasePath)
  try {
    const applied = migrateSqlite(db)
    // the log names the file as the error messages do: absolute, whatever the working directory
    const location = config.databasePath === ':memory:' ? ':memory:' : resolve(config.databasePath)
    return { store: sqliteStore(db, location), applied }
  } catch (e) {
    db.close()
    throw e
  }
}
