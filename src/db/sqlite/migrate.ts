import type { Database } from 'bun:sqlite'
import m001 from '../migrations/sqlite/001_init.sql' with { type: 'text' }
import m002 from '../migrations/sqlite/002_lasting_ids.sql' with { type: 'text' }
import m003 from '../migrations/sqlite/003_reserved_slugs.sql' with { type: 'text' }
import m004 from '../migrations/sqlite/004_locked_accounts.sql' with { type: 'text' }
import m005 from '../migrations/sqlite/005_changes_by_hand.sql' with { type: 'text' }
import m006 from '../migrations/sqlite/006_kept_token.sql' with { type: 'text' }
import m007 from '../migrations/sqlite/007_lasting_article_ids.sql' with { type: 'text' }
import { usernameKey } from '../../names.ts'
import { MigrationError, othersTables } from '../migration-error.ts'
import { MIGRATING, type OpeningStep } from '../opening.ts'

/**
 * A numbered migration: SQL run in one transaction with the version bump, and
 * optionally a step in code (what SQL cannot compute, such as Unicode
 * normalisation). `foreignKeysOff` rebuilds tables others reference: SQLite's
 * documented procedure turns foreign keys off around the transaction and
 * checks them before it commits.
 */
interface Migration {
  sql: string
  after?: (db: Database) => void
  foreignKeysOff?: boolean
  /** the tables whose foreign keys a foreignKeysOff migration may break (all when absent): the check reads them whole */
  checked?: readonly string[]
}

/**
 * Numbered migrations, embedded in the binary. The schema version is SQLite's
 * `PRAGMA user_version`. Each migration runs in its own transaction together
 * with the version bump, so a crash leaves the database at a whole version.
 * Never edit a migration that has landed: add the next number. The PostgreSQL
 * migrations carry the same numbers and meaning (src/db/migrations/postgres).
 */
export const migrations: readonly Migration[] = [
  { sql: m001 },
  { sql: m002, after: fillUsernameKeys, foreignKeysOff: true },
  { sql: m003 },
  { sql: m004 },
  { sql: m005 },
  { sql: m006 },
  // rows copied with their ids: what references an article still finds it, so only its own keys are checked
  { sql: m007, after: keepStatistics('articles'), foreignKeysOff: true, checked: ['articles'] },
]

export function schemaVersion(db: Database): number {
  return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
}

/**
 * Applies every pending migration (up to `target`: tests of a migration);
 * returns the versions applied. `opening` hears that migrating begins (it blocks
 * the process until done: a rebuilt table takes seconds per million rows).
 */
export function migrate(db: Database, target = migrations.length, opening?: OpeningStep): number[] {
  const applied: number[] = []
  const contents = contentsOf(db)
  refuseUnknown(contents)
  if (contents.version < target) opening?.(MIGRATING, { from: contents.version, to: target })
  // IMMEDIATE takes the write lock first, so two processes starting at once
  // cannot both apply the same migration.
  const step = db.transaction((version: number, m: Migration) => {
    if (schemaVersion(db) >= version) return false
    // (again under the write lock: another program may have written the file since)
    if (version === 1) refuseUnknown(contentsOf(db))
    db.run(m.sql)
    m.after?.(db)
    if (m.foreignKeysOff) {
      const broken = (m.checked ?? ['']).flatMap((t) => db.query(t ? `PRAGMA foreign_key_check(${t})` : 'PRAGMA foreign_key_check').all())
      if (broken.length) throw new MigrationError(`migration ${version} would break ${broken.length} foreign keys`)
    }
    db.run(`PRAGMA user_version = ${version}`)
    return true
  })
  migrations.slice(0, target).forEach((m, i) => {
    if (m.foreignKeysOff) db.run('PRAGMA foreign_keys = OFF')
    try {
      if (step.immediate(i + 1, m)) applied.push(i + 1)
    } finally {
      if (m.foreignKeysOff) db.run('PRAGMA foreign_keys = ON')
    }
  })
  return applied
}

/** What tells whose a SQLite file is: its schema version and its tables (SQLite's own left out). */
export interface Contents {
  version: number
  tables: string[]
}

/** The tables migration 1 made that every later version keeps: a file holds them all if it is Conduit's. */
const CONDUIT_TABLES = ['settings', 'users', 'follows', 'articles', 'tags', 'article_tags', 'favorites', 'comments', 'counters']

/** What the file `db` is open on holds; only reads (a read-only connection will do). */
export function contentsOf(db: Database): Contents {
  const tables = db
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .all() as { name: string }[]
  return { version: schemaVersion(db), tables: tables.map((t) => t.name) }
}

/**
 * Whether the file is Conduit's at some version: a schema version (every
 * version of Conduit's schema has its number) and Conduit's tables. A new,
 * empty file is no one's yet: Conduit may make it its own.
 */
function isConduits(c: Contents): boolean {
  return c.version > 0 && CONDUIT_TABLES.every((t) => c.tables.includes(t))
}

/**
 * Refuses another program's database: tables that are not Conduit's, or a
 * schema version Conduit never wrote. Left as it is: not given Conduit's
 * tables too, not reported as a newer Conduit's.
 */
export function refuseOthers(c: Contents, option = '--db or DATABASE_PATH'): void {
  if (isConduits(c) || (c.version === 0 && c.tables.length === 0)) return
  const way = `not Conduit's; choose a new file or one of Conduit's with ${option}`
  if (c.tables.length === 0) throw new MigrationError(`holds no tables but a schema version (${c.version}), ${way}`)
  throw othersTables(c.tables, way)
}

/** Refuses what this binary may not migrate or use: another program's database, or Conduit's at a newer version. */
export function refuseUnknown(c: Contents, option?: string): void {
  refuseOthers(c, option)
  if (c.version > migrations.length) {
    throw new MigrationError(
      `database schema version ${c.version} is newer than this binary knows (${migrations.length}); use a newer conduit`,
    )
  }
}

/**
 * 002: usernames become unique on their normalised form (NFKC, ASCII case
 * folded), computed here. Two existing accounts whose names collide under the
 * new rule both keep working: the later one's key gets its id appended
 * (`#id`, a character no username may contain), so neither can be
 * impersonated by the other and no new account can take either name.
 */
function fillUsernameKeys(db: Database): void {
  const users = db.query<{ id: number; username: string }, []>('SELECT id, username FROM users ORDER BY id').all()
  const set = db.query<unknown, [string, number]>('UPDATE users SET username_key = ? WHERE id = ?')
  const seen = new Set<string>()
  for (const u of users) {
    let key = usernameKey(u.username)
    if (seen.has(key)) key = `${key}#${u.id}`
    seen.add(key)
    set.run(key, u.id)
  }
}

/**
 * A table rebuilt loses its planner statistics (sqlite_stat1): where the
 * database had them (ANALYZE, or PRAGMA optimize at a shutdown), they are made
 * again for it, or its queries would be planned blind until the next
 * shutdown (2 % more CPU per request under the benchmark's mix).
 */
function keepStatistics(table: string): (db: Database) => void {
  return (db) => {
    if (db.query("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").get()) db.run(`ANALYZE ${table}`)
  }
}
