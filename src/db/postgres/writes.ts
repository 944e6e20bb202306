import type { TransactionSQL } from 'bun'
import { holds, tokenChecked } from '../../auth/actor.ts'
import { unauthorized } from '../../errors.ts'
import { runAsync, type Writes } from '../steps.ts'
import type { PgChanges } from './changes.ts'
import { isUniqueViolation } from './client.ts'

/**
 * Writes on PostgreSQL: a policy's steps run in one transaction
 * (PgChanges.write: the deadline, a retry after a deadlock), each query
 * awaited, over `sql(tx)`, a feature's statements on that transaction.
 *
 * A write by a user first reads that user's token state FOR KEY SHARE (sent
 * with the steps' first statement, no round trip of its own): a lock, a
 * password change or a deletion (FOR UPDATE) waits for the write to commit,
 * and one committed before it is seen (401, the write rolled back).
 *
 * It takes the account's turn first, shared: an advisory lock keyed by the
 * schema and the user's id, which the operator's commands take exclusive
 * (src/users/postgres.ts). The lock manager queues a shared request behind a
 * waiting exclusive one; row locks do not (KEY SHARE joins the holders at
 * once), so an account with two writes always in flight kept `admin users
 * lock` waiting for as long as its writes went on.
 */
export function postgresWrites<S>(changes: PgChanges, sql: (tx: TransactionSQL) => S): Writes<S> {
  return {
    transaction: (steps, by) => {
      const viewer = tokenChecked(by)
      if (viewer === undefined) return changes.write((tx, changed) => runAsync(steps(sql(tx), changed)))
      return changes.write(async (tx, changed) => {
        const state = tx`SELECT token_version, kept_token
          FROM pg_advisory_xact_lock_shared((hashtext(current_schema())::bigint << 32) | ${viewer.id}), users
          WHERE id = ${viewer.id} FOR KEY SHARE OF users`.execute()
        // awaited below; its failure may arrive a read before the steps' own
        state.catch(() => {})
        const out = await runAsync(steps(sql(tx), changed)).catch(async (e: unknown) => {
          // the check failed first (a lock or statement timeout): its error, thrown here, is the cause (the
          // steps' only says the transaction was aborted); else a token that no longer holds is the answer
          // a moment later would give, whatever the steps met
          const [user] = await state
          if (!holds(user, viewer.tokenVersion, viewer.tokenId)) throw unauthorized('is invalid')
          throw e
        })
        if (!holds((await state)[0], viewer.tokenVersion, viewer.tokenId)) throw unauthorized('is invalid')
        return out
      })
    },
    run: runAsync,
    isUniqueViolation: (e) => isUniqueViolation(e),
  }
}
