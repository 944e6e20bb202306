import { SLICE, trace } from '../../trace.ts'
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
    transaction: (steps) => {
      if (!trace.on) return changes.write((changed) => runSync(steps(sql, changed)))
      const start = performance.now()
      try {
        return changes.write((changed) => runSync(steps(sql, changed)))
      } finally {
        trace.slice(start, SLICE.write)
      }
    },
    run: runSync,
    isUniqueViolation,
  }
}
