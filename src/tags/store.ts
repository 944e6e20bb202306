import type { Awaitable } from '../db/types.ts'

export interface TagReadSql {
  /** Every tag at least one article carries, most used first, ties in code-point order; the first `limit` when given. */
  popular(limit?: number): Awaitable<string[]>
}
