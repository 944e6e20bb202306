import type { Actor } from '../auth/actor.ts'
import type { Awaitable } from './types.ts'

/**
 * A write's steps, written once for both backends as a generator: every
 * database operation is `yield* wait(op)`, and a runner decides how to wait.
 * SQLite answers synchronously, and must: `db.transaction(fn)` needs a
 * synchronous fn, and an `await` inside an open SQLite transaction would let
 * other requests' code run on the same connection in the middle of it. So
 * the same steps run synchronously there (runSync) and with an await per
 * operation on PostgreSQL (runAsync).
 *
 * A policy's steps are a generator function declared once (at module level),
 * called per write with what the write needs: `(sql, changed) => create(sql,
 * changed, author, a)`. A `function*` expression evaluated per write is a new
 * function each time, whose generator objects take shapes of their own, and
 * the optimizing JIT then throws the steps' compiled code away and compiles it
 * again, write after write. scripts/layers.ts checks that every function* is
 * declared at module level.
 */
export type Steps<T> = Generator<unknown, T, unknown>

/** One operation of a write: its value, once the runner has it. */
export function* wait<T>(v: Awaitable<T>): Steps<T> {
  return (yield v) as T
}

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function'

/**
 * Runs steps whose operations all answer synchronously (SQLite). A promise
 * among them is a bug, never awaited: it is thrown into the steps as an error,
 * so it unwinds them (and rolls their transaction back) like a failed query.
 */
export function runSync<T>(steps: Steps<T>): T {
  let next = steps.next()
  while (!next.done) {
    const v = next.value
    if (isThenable(v)) {
      // nobody will wait for it; its failure must not surface as an unhandled rejection
      Promise.resolve(v).catch(() => {})
      next = steps.throw(new TypeError('runSync: a step returned a promise; SQLite steps must answer synchronously'))
    } else next = steps.next(v)
  }
  return next.value
}

/** Runs steps whose operations may answer later (PostgreSQL): each is awaited; a rejection is thrown into the steps where they wait. */
export async function runAsync<T>(steps: Steps<T>): Promise<T> {
  let next = steps.next()
  while (!next.done) {
    let v: unknown
    try {
      v = await next.value
    } catch (e) {
      next = steps.throw(e)
      continue
    }
    next = steps.next(v)
  }
  return next.value
}

/** Records the dependency keys a write changed (see src/keys/keys.ts); they reach the change log in its transaction. */
export type Changed = (keys: readonly number[]) => void

/**
 * What a feature's write policy runs on: a backend's transactions over `S`,
 * the feature's SQL primitives (see each feature's store.ts). Policies decide
 * (who may, slugs, change keys); `S` only runs SQL.
 */
export interface Writes<S> {
  /**
   * Runs the steps as one transaction (a new generator per attempt: PostgreSQL retries deadlocks); the keys passed to `changed` are recorded with it.
   * `by`: the user whose token allowed the write. The transaction checks that token still holds (a lock, a password
   * change or a deletion committed since the request's check refuses it: 401, nothing written), and on PostgreSQL
   * keeps the user's row from changing until it commits, so `admin users lock` returns after such writes, not before.
   * (A change of the user's own row checks it in its own steps instead, on the row it locks: src/users/writes.ts.)
   */
  transaction<T>(steps: (sql: S, changed: Changed) => Steps<T>, by?: Actor): Awaitable<T>
  /** Runs steps around transactions (e.g. a retry after a constraint error), with the backend's runner. */
  run<T>(steps: Steps<T>): Awaitable<T>
  /** Whether an error is the database refusing a duplicate (a unique constraint). */
  isUniqueViolation(e: unknown): boolean
}
