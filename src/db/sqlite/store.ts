import type { Database } from 'bun:sqlite'
import { sqliteListStore } from '../../articles/list-sqlite.ts'
import { SlowLane } from '../../articles/slow-lane.ts'
import { sqliteArticleReads, sqliteArticleSql } from '../../articles/sqlite.ts'
import { articleWrites } from '../../articles/writes.ts'
import { sqliteThrottle } from '../../users/throttle-sqlite.ts'
import { MAX_THROTTLE_ROWS } from '../../users/throttle.ts'
import { sqliteCommentReads, sqliteCommentSql } from '../../comments/sqlite.ts'
import { commentWrites } from '../../comments/writes.ts'
import { sqliteProfileReads, sqliteProfileSql } from '../../profiles/sqlite.ts'
import { profileWrites } from '../../profiles/writes.ts'
import { sqliteTags } from '../../tags/sqlite.ts'
import { sqliteUserReads, sqliteUserSql } from '../../users/sqlite.ts'
import { userWrites } from '../../users/writes.ts'
import type { Store } from '../store.ts'
import { sqliteBulk } from '../bulk.ts'
import { SqliteChanges } from './changes.ts'
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer } from './checkpointer.ts'
import { schemaVersion } from './migrate.ts'
import { closeDatabase } from './open.ts'
import { sqliteWrites } from './writes.ts'

export interface SqliteStore extends Store {
  readonly db: Database
}

/** The whole store on a migrated SQLite database (see open.ts and migrate.ts). */
export function sqliteStore(db: Database, location: string): SqliteStore {
  const changes = new SqliteChanges(db, location)
  // an in-memory database has no file a second connection could open
  const slowLane = location === ':memory:' ? undefined : new SlowLane(location)
  const throttle = sqliteThrottle(db)
  const ping = db.query('SELECT 1')
  // INSERT OR IGNORE: two processes starting at once agree on the first secret written
  const keepSecret = db.query<unknown, [string]>("INSERT OR IGNORE INTO settings (key, value) VALUES ('jwt_secret', ?)")
  const secret = db.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'jwt_secret'")
  return {
    backend: 'sqlite',
    location,
    db,
    // reads are the backend's SQL; writes are the features' policies over the backend's statements
    users: { ...sqliteUserReads(db), ...userWrites(sqliteWrites(changes, sqliteUserSql(db))) },
    profiles: { ...sqliteProfileReads(db), ...profileWrites(sqliteWrites(changes, sqliteProfileSql(db))) },
    articles: { ...sqliteArticleReads(db), ...articleWrites(sqliteWrites(changes, sqliteArticleSql(db))) },
    lists: sqliteListStore(db, slowLane),
    comments: { ...sqliteCommentReads(db), ...commentWrites(sqliteWrites(changes, sqliteCommentSql(db))) },
    tags: sqliteTags(db),
    throttle,
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
        return true
      } catch {
        return false
      }
    },
    async maintain() {
      const now = Date.now()
      changes.purge(now)
      throttle.purge(now, MAX_THROTTLE_ROWS)
    },
    startUpkeep(logger) {
      db.run(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`)
      // started once serving: its thread and connection are not needed for the first answers
      return location === ':memory:' ? undefined : startCheckpointer(location, logger, { delayMs: 100 })
    },
    async close() {
      slowLane?.close()
      closeDatabase(db)
    },
  }
}
