import { resolve } from 'node:path'
import { type Config, databaseName, redactUrl } from '../config.ts'
import type { Logger } from '../log.ts'
import { MIGRATING, type OpeningStep } from './opening.ts'
import { contentsOf, migrations, migrate as migrateSqlite, refuseUnknown } from './sqlite/migrate.ts'
import { openReadOnly, openWritable } from './sqlite/open.ts'
import { sqliteStore } from './sqlite/store.ts'
import type { Store } from './store.ts'

export interface Opened {
  store: Store
  /** migration versions applied while opening */
  applied: number[]
}

/** After this long still opening, `openStore` says so (then every WAITING_AGAIN_MS): a wait is not a hang. */
export const WAITING_NOTE_MS = 2_000
const WAITING_AGAIN_MS = 30_000

/**
 * Opens (and migrates) the database the configuration names: PostgreSQL for a
 * postgres:// URL, else the SQLite file. With a logger, an open that takes
 * longer than WAITING_NOTE_MS is logged while it waits, saying what it waits
 * for: a database that does not answer yet, another session holding the
 * migration lock (which one; on PostgreSQL that wait has no limit), or the
 * migrating itself.
 */
export async function openStore(config: Config, logger?: Logger): Promise<Opened> {
  if (!logger) return open(config)
  const database = databaseName(config)
  const t0 = performance.now()
  // what the open is doing now, as the PostgreSQL migration reports it (SQLite opens without yielding)
  let doing = 'waiting for it to answer'
  let fields: Record<string, string | number> = {}
  let note: Timer | undefined
  const waiting = (ms: number) => {
    note = setTimeout(() => {
      logger.info(`still opening the database: ${doing}`, { database, seconds: Math.round((performance.now() - t0) / 1000), ...fields })
      waiting(WAITING_AGAIN_MS)
    }, ms)
  }
  waiting(WAITING_NOTE_MS)
  try {
    return await open(config, (d, f = {}) => {
      doing = d
      fields = f
      // said when it begins: on SQLite nothing else can be said until it ends
      if (d === MIGRATING) logger.info('migrating the database', { database, ...f })
    })
  } finally {
    clearTimeout(note)
  }
}

async function open(config: Config, step?: OpeningStep): Promise<Opened> {
  if (config.databaseUrl) {
    const { openPostgres } = await import('./postgres/store.ts')
    return openPostgres(
      config.databaseUrl,
      {
        poolMax: config.databasePoolMax,
        prepare: config.databasePrepare,
        timeoutMs: config.databaseTimeoutMs,
        location: redactUrl(config.databaseUrl),
        singleInstance: config.singleInstance,
      },
      step,
    )
  }
  const db = openWritable(config.databasePath)
  try {
    const applied = migrateSqlite(db, undefined, step)
    // the log names the file as the error messages do: absolute, whatever the working directory
    return { store: sqliteStore(db, databaseName(config)), applied }
  } catch (e) {
    db.close()
    throw e
  }
}

/**
 * The store on a SQLite file for a command that only reads it (admin's list
 * and show), opened read-only (sqlite/open.ts, openReadOnly): a file this
 * process may only read will do, and nothing in it changes. Undefined for a
 * new file or one of an older schema version: it must be migrated first, as
 * openStore does.
 */
export function openStoreToRead(path: string): Store | undefined {
  const db = openReadOnly(path)
  try {
    const contents = contentsOf(db)
    refuseUnknown(contents)
    if (contents.version < migrations.length) {
      db.close()
      return undefined
    }
    // closed as it was opened: the flush on closing (closeDatabase) writes
    return { ...sqliteStore(db, resolve(path)), close: async () => db.close() }
  } catch (e) {
    db.close()
    throw e
  }
}
