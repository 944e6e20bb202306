import type { Database } from 'bun:sqlite'
import { type Actor, holds, type TokenState, tokenChecked } from '../../auth/actor.ts'
import { unauthorized } from '../../errors.ts'
import { SLICE, trace } from '../../trace.ts'
import { type Changed, runSync, type Writes } from '../steps.ts'
import type { SqliteChanges } from './changes.ts'
import { isUniqueViolation } from './open.ts'

/**
 * The check of a write's user's token (see Writes.transaction), in its transaction: the write
 * lock held, nothing commits between it and the write's commit.
 */
export function tokenCheck(db: Database): (by: Actor | undefined) => void {
  const state = db.query<TokenState, [number]>('SELECT token_version, kept_token FROM users WHERE id = ?')
  return (by) => {
    const viewer = tokenChecked(by)
    if (viewer === undefined) return
    if (!holds(state.get(viewer.id), viewer.tokenVersion, viewer.tokenId)) throw unauthorized('is invalid')
  }
}

/**
 * Writes on SQLite: a policy's steps run synchronously inside one IMMEDIATE
 * transaction (SqliteChanges.write), over `sql`, a feature's statements
 * prepared once.
 */
export function sqliteWrites<S>(changes: SqliteChanges, check: ReturnType<typeof tokenCheck>, sql: S): Writes<S> {
  return {
    transaction: (steps, by) => {
      const body = (changed: Changed) => {
        check(by)
        return runSync(steps(sql, changed))
      }
      if (!trace.on) return changes.write(body)
      const start = performance.now()
      try {
        return changes.write(body)
      } finally {
        trace.slice(start, SLICE.write)
      }
    },
    run: runSync,
    isUniqueViolation,
  }
}
