import type { Database } from 'bun:sqlite'
import type { SQL, TransactionSQL } from 'bun'
import type { Versions } from '../keys/versions.ts'
import type { BulkLoad } from './bulk.ts'
import type { Logger } from '../log.ts'
import type { Writes } from './steps.ts'
import type { Awaitable, Backend } from './types.ts'

/** Change-log rows older than this are purged; a process that read nothing for half as long drops its caches (it may have missed rows). */
export const CHANGE_RETENTION_MS = 10 * 60_000

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
 * A migrated database, as the features see it: the connection their SQL runs
 * on (`connection`, one kind per backend: each feature picks its own SQL by
 * it), transactions that record their change keys (`connection.writes`),
 * the change log, and what concerns the database as a whole. It imports no
 * feature: each feature's folder composes its reads, writes and routes on it
 * (see docs/ARCHITECTURE.md). Only `bulk` knows their tables (src/db/bulk.ts).
 */
export interface Store {
  readonly backend: Backend
  /** where the data lives, safe to log (a file path, or a URL without its password) */
  readonly location: string
  readonly connection: Connection
  readonly changes: ChangeFeed
  /** Bulk loading into an empty database (seed, copy). */
  readonly bulk: BulkLoad
  /** The signing secret kept in the database: the stored one, or `generated` when there was none. */
  secret(generated: string): Awaitable<string>
  /** The migration version the database is at. */
  schemaVersion(): Promise<number>
  /** Whether the database answers now (readiness). */
  ping(): Promise<boolean>
  /** Housekeeping, every minute or so: old change-log rows, and what features added with `addMaintenance`. */
  maintain(): Promise<void>
  /** Adds a feature's housekeeping to `maintain` (expired throttle windows). */
  addMaintenance(task: () => Awaitable<void>): void
  /** Closes `resource` with the store, before the connection (a feature's worker thread). */
  own(resource: { close(): void }): void
  /**
   * The database's own checkpoints, run by one process per database (the
   * single process, or worker 1): SQLite's WAL checkpoints in a thread of
   * their own. Nothing on PostgreSQL, which keeps itself.
   */
  startCheckpoints(logger: Logger): { stop(): Promise<void> } | undefined
  close(): Promise<void>
}

/**
 * What a feature's SQL runs on, per backend. SQLite: one connection whose
 * statements a feature prepares once, and whose writes run synchronously in
 * one IMMEDIATE transaction. PostgreSQL: the pool, and writes whose SQL is
 * made per transaction (`tx`). `writes` wraps a feature's write SQL into
 * transactions that record the keys they changed (src/db/steps.ts).
 */
export type Connection =
  | { readonly backend: 'sqlite'; readonly db: Database; readonly path: string; writes<S>(sql: S): Writes<S> }
  | { readonly backend: 'postgres'; readonly sql: SQL; writes<S>(sql: (tx: TransactionSQL) => S): Writes<S> }

/** Picks a feature's SQL for the connection's backend: `{ sqlite: (c) => ..., postgres: (c) => ... }`. */
export function perBackend<T>(
  connection: Connection,
  make: { sqlite(c: Extract<Connection, { backend: 'sqlite' }>): T; postgres(c: Extract<Connection, { backend: 'postgres' }>): T },
): T {
  return connection.backend === 'sqlite' ? make.sqlite(connection) : make.postgres(connection)
}
