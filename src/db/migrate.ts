import type { Database } from 'bun:sqlite'
import m001 from './migrations/001_init.sql' with { type: 'text' }

/**
 * Numbered migrations, embedded in the binary. The schema version is SQLite's
 * `PRAGMA user_version`. Each migration runs in its own transaction together
 * with the version bump, so a crash leaves the database at a whole version.
 * Never edit a migration that has landed: add the next number.
 */
export const migrations: readonly string[] = [m001]

export class MigrationError extends Error {}

export function schemaVersion(db: Database): number {
  return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
}

/** Applies every pending migration; returns the versions applied. */
export function migrate(db: Database): number[] {
  const applied: number[] = []
  // IMMEDIATE takes the write lock first, so two processes starting at once
  // cannot both apply the same migration.
  const step = db.transaction((version: number, sql: string) => {
    if (schemaVersion(db) >= version) return false
    db.run(sql)
    db.run(`PRAGMA user_version = ${version}`)
    return true
  })
  const current = schemaVersion(db)
  if (current > migrations.length) {
    throw new MigrationError(
      `database schema version ${current} is newer than this binary knows (${migrations.length}); use a newer conduit`,
    )
  }
  migrations.forEach((sql, i) => {
    if (step.immediate(i + 1, sql)) applied.push(i + 1)
  })
  return applied
}
