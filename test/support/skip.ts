import { describe, test } from 'bun:test'
import { skipMark } from '../../scripts/skips.ts'
import { onPostgres } from './backend.ts'

/**
 * Skipping a test with its reason. A skipped test or group gets the reason
 * at the end of its name, so bun test's `(skip)` line says why, and
 * scripts/test.ts counts the skips of each pass by reason:
 *
 *   skipIf(why.postgresOnly).describe('the binary on PostgreSQL', () => { ... })
 *   skipIf(!haproxy && 'haproxy missing').test('haproxy -c ...', async () => { ... })
 *
 * Nothing here decides whether a test runs: a falsy reason runs it as
 * `describe` / `test` would.
 */
export type Reason = string | false | undefined

/** The reasons shared by several files (a file's own, like a missing tool, are written where it is checked). */
export const why = {
  /** SQLite's own behaviour (its files, WAL, the slow lane's worker, its query plans) */
  sqliteOnly: onPostgres && 'SQLite only',
  /** tests that do not depend on the backend (the command line, docs, pure functions) run once, in the SQLite pass */
  sqlitePass: onPostgres && 'backend-independent (runs in the SQLite pass)',
  postgresOnly: !onPostgres && 'PostgreSQL only',
} as const

// (what bun:test takes: a function, sync or async)
type Body = Parameters<typeof test>[1]

export function skipIf(reason: Reason) {
  const name = (n: string) => (reason ? `${n} ${skipMark(reason)}` : n)
  return {
    describe(label: string, fn: () => void): void {
      ;(reason ? describe.skip : describe)(name(label), fn)
    },
    /** describe.each: `%s`, `%i`... in the label take each row's values */
    describeEach<T extends unknown[]>(rows: readonly T[], label: string, fn: (...row: T) => void): void {
      ;(reason ? describe.skip : describe).each(rows as T[])(name(label), fn as (...args: unknown[]) => void)
    },
    test(label: string, fn: Body, timeoutMs?: number): void {
      ;(reason ? test.skip : test)(name(label), fn, timeoutMs)
    },
  }
}
