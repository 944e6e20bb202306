import type { ArticleStore } from '../articles/store.ts'
import type { ListStore } from '../articles/list-store.ts'
import type { ThrottleStore } from '../users/throttle.ts'
import type { Versions } from '../keys/versions.ts'
import type { BulkLoad } from './bulk.ts'
import type { CommentStore } from '../comments/store.ts'
import type { ProfileStore } from '../profiles/store.ts'
import type { TagStore } from '../tags/store.ts'
import type { UserStore } from '../users/store.ts'
import type { Logger } from '../log.ts'
import type { Awaitable, Backend } from './types.ts'

/**
 * What tells caches that stored data changed (see src/keys/versions.ts):
 * `versions` is bumped by this process's writes after they commit, and by
 * `sync()` with what other processes or instances committed. `sync()` must
 * run before a request uses anything cached; it returns a promise only when
 * it has to wait (PostgreSQL: a read of the change log shared by every
 * request waiting at that moment).
 */
export interface ChangeFeed {
  readonly versions: Versions
  sync(): void | Promise<void>
  /** what it read, for /metrics */
  readonly stats: ChangeStats
}

/** A change feed's figures: plain counters (see ChangeFeed.stats). */
export interface ChangeStats {
  /** reads of the change log that found something to read (SQLite) or ran (PostgreSQL) */
  reads: number
  /** rows read from the log */
  rows: number
  /** times everything cached was dropped (a gap, a pause, an edit by hand, a failed read) */
  resets: number
  /** when this process last knew it had read everything committed (Date.now(); 0: never) */
  upToDateAt: number
}

/**
 * Everything the routes need from storage, one interface per feature, with
 * an implementation per backend beside it in the feature's folder. Routes and
 * caches never know which backend runs.
 */
export interface Store {
  readonly backend: Backend
  /** where the data lives, safe to log (a file path, or a URL without its password) */
  readonly location: string
  readonly users: UserStore
  readonly profiles: ProfileStore
  readonly articles: ArticleStore
  readonly lists: ListStore
  readonly comments: CommentStore
  readonly tags: TagStore
  readonly throttle: ThrottleStore
  readonly changes: ChangeFeed
  /** Bulk loading into an empty database (seed, copy). */
  readonly bulk: BulkLoad
  /** The signing secret kept in the database: the stored one, or `generated` when there was none. */
  secret(generated: string): Awaitable<string>
  /** The migration version the database is at. */
  schemaVersion(): Promise<number>
  /** Whether the database answers now (readiness). */
  ping(): Promise<boolean>
  /** Housekeeping, every minute or so: expired throttle windows, old change-log rows. */
  maintain(): Promise<void>
  /**
   * Background upkeep of the database itself, run by one process per
   * database (the single process, or worker 1): SQLite's WAL checkpoints in
   * a thread of their own. Nothing on PostgreSQL, which keeps itself.
   */
  startUpkeep(logger: Logger): { stop(): Promise<void> } | undefined
  close(): Promise<void>
}
