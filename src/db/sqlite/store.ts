import type { Database } from 'bun:sqlite'
import { sqliteListStore } from '../../articles/list-sqlite.ts'
import { SlowLane } from '../../articles/slow-lane.ts'
import { sqliteArticles } from '../../articles/sqlite.ts'
import { sqliteThrottle } from '../../auth/throttle-sqlite.ts'
import { MAX_THROTTLE_ROWS } from '../../auth/throttle.ts'
import { sqliteComments } from '../../comments/sqlite.ts'
import { sqliteProfiles } from '../../profiles/sqlite.ts'
import { sqliteTags } from '../../tags/sqlite.ts'
import { sqliteUsers } from '../../users/sqlite.ts'
import type { Store } from '../store.ts'
import { sqliteBulk } from '../bulk.ts'
import { SqliteChanges } from './changes.ts'
import { schemaVersion } from './migrate.ts'
import { closeDatabase } from './open.ts'

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
    users: sqliteUsers(db, changes),
    profiles: sqliteProfiles(db, changes),
    articles: sqliteArticles(db, changes),
    lists: sqliteListStore(db, slowLane),
    comments: sqliteComments(db, changes),
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
    async close() {
      slowLane?.close()
      closeDatabase(db)
    },
  }
}
