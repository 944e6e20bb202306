/** What storage code on both backends and the features above it share: types only. */

/** A value now, or later: the SQLite side answers synchronously, the PostgreSQL side asynchronously. */
export type Awaitable<T> = T | Promise<T>

export type Backend = 'sqlite' | 'postgres'

/** The database could not be reached: answered 503, never 500. */
export class DatabaseUnavailable extends Error {
  constructor(cause?: unknown) {
    super('database unavailable', { cause })
  }

  /** What the database or the network said, for the log line: the operator's first clue (with SQLite's code, which tells a full disk from an I/O error). */
  get reason(): string | undefined {
    const c = this.cause
    if (!(c instanceof Error)) return c === undefined ? undefined : String(c)
    const code = (c as { code?: unknown }).code
    return typeof code === 'string' && code.startsWith('SQLITE_') ? `${c.message} (${code})` : c.message
  }
}

/**
 * The database stopped answering after a write's COMMIT was sent (the connection broke, the
 * deadline passed): the write may be stored or not. Still the database out of reach, but its
 * answer says so, and asks for no retry.
 */
export class OutcomeUnknown extends DatabaseUnavailable {}

/**
 * A write that referred to a row another process deleted since the request
 * found it (a foreign key broken: SQLite's code, PostgreSQL's SQLSTATE 23503).
 * Every write looks its target up inside its transaction, so what is left is
 * the row of the user writing.
 */
export function isReferenceGone(e: unknown): boolean {
  const err = e as { code?: unknown; errno?: unknown } | null
  return err?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || err?.errno === '23503'
}
