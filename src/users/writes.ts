import { userChanged } from '../cache/keys.ts'
import { wait, type Writes } from '../db/steps.ts'
import type { Awaitable } from '../db/types.ts'
import { explainTaken } from './taken.ts'
import type { UserWriteSql, UserWrites } from './store.ts'

/** The writes of accounts on either backend: every decision here, the SQL in `writes`' primitives. */
export function userWrites(writes: Writes<UserWriteSql>): UserWrites {
  /**
   * A write that a unique constraint may refuse. Then (its transaction rolled
   * back) the 422 names every taken field, not only the one the database
   * tripped on.
   */
  const unique = <T>(write: () => Awaitable<T>, id: number, email?: string, key?: string): Awaitable<T> =>
    writes.run(
      (function* () {
        try {
          return yield* wait(write())
        } catch (e) {
          if (!writes.isUniqueViolation(e)) throw e
          throw explainTaken(yield* wait(writes.transaction((sql) => wait(sql.taken(id, email ?? null, key ?? null)))))
        }
      })(),
    )

  return {
    create: (u) => unique(() => writes.transaction((sql) => wait(sql.insert(u, Date.now()))), 0, u.email, u.usernameKey),
    update: (id, c) =>
      unique(
        () =>
          writes.transaction(function* (sql, changed) {
            const before = yield* wait(sql.nameKey(id))
            if (before === null) return null
            const user = yield* wait(sql.update(id, c))
            // a new name changes the lists filtered by the old and the new one
            const renamed = c.usernameKey !== undefined && c.usernameKey !== before
            changed(userChanged(id, renamed ? { from: before, to: c.usernameKey! } : undefined))
            return user
          }),
        id,
        c.email,
        c.usernameKey,
      ),
  }
}
