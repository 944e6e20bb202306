import type { TransactionSQL } from 'bun'
import { runAsync, type Writes } from '../steps.ts'
import type { PgChanges } from './changes.ts'
import { isUniqueViolation } from './client.ts'

/**
 * Writes on PostgreSQL: a policy's steps run in one transaction
 * (PgChanges.write: the deadline, a retry after a deadlock), each query
 * awaited, over `sql(tx)`, a feature's statements on that transaction.
 */
export function postgresWrites<S>(changes: PgChanges, sql: (tx: TransactionSQL) => S): Writes<S> {
  return {
    transaction: (steps) => changes.write((tx, changed) => runAsync(steps(sql(tx), changed))),
    run: runAsync,
    isUniqueViolation: (e) => isUniqueViolation(e),
  }
}
