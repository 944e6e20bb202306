import { runSync, type Writes } from '../steps.ts'
import type { SqliteChanges } from './changes.ts'
import { isUniqueViolation } from './open.ts'

/**
 * Writes on SQLite: a policy's steps run synchronously inside one IMMEDIATE
 * transaction (SqliteChanges.write), over `sql`, a feature's statements
 * prepared once.
 */
export function sqliteWrites<S>(changes: SqliteChanges, sql: S): Writes<S> {
  return {
    transaction: (steps) => changes.write((changed) => runSync(steps(sql, changed))),
    run: runSync,
    isUniqueViolation,
  }
}
