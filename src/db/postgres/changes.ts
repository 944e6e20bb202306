import type { SQL, TransactionSQL } from 'bun'
import { fromLog, logRow } from '../../keys/keys.ts'
import { EVERYTHING, Versions } from '../../keys/versions.ts'
import { CHANGE_RETENTION_MS, type ChangeFeed, type ChangeStats } from '../store.ts'
import { guardedTransaction, isConflict, read, write } from './client.ts'

/**
 * The changes committed since a snapshot ($1 its xmax, $2 its in-progress
 * xids, comma-separated), with the snapshot this read saw. `xid < xmax`
 * selects nothing more (this statement sees nothing committed at or after its
 * own snapshot's xmax), but as a range it lets the planner use changes_by_xid
 * before the table has statistics: with `xid >= $1` alone a fresh plan reads
 * the whole log. A plan kept from when the log was near empty still does,
 * until the log's statistics are taken again (see PgChanges.wrote).
 */
export const PG_CHANGES_SINCE = `SELECT s::text AS snapshot,
    (SELECT coalesce(json_agg(json_build_array(seq::text, keys)), '[]') FROM changes
      WHERE (xid >= $1::xid8 AND xid < pg_snapshot_xmax(s)) OR xid = ANY (string_to_array($2, ',')::xid8[])) AS rows
  FROM pg_current_snapshot() s`

/** The log's statistics are taken again after this many of an instance's own rows, then twice as many, up to the max (see PgChanges.wrote). */
export const ANALYZE_FIRST_ROWS = 500
const ANALYZE_MAX_ROWS = 64_000

/** SINGLE_INSTANCE: how often the log is read in the background (see PgChanges.glance). */
export const LOCAL_READ_MS = 1_000

/** A PostgreSQL snapshot as `pg_current_snapshot()` prints it: `xmin:xmax:xip,xip,…`. */
interface Snapshot {
  xmax: string
  xip: string
}
/** Whether one transaction id (decimal, no leading zeros) is below another; without BigInt, on every read of the log. */
const before = (a: string, b: string) => a.length < b.length || (a.length === b.length && a < b)
const parseSnapshot = (text: string): Snapshot => {
  const [, xmax = '0', xip = ''] = text.split(':')
  return { xmax, xip }
}

/**
 * Cache coherence on PostgreSQL, across any number of instances (see
 * src/keys/versions.ts and keys.ts).
 *
 * Every write appends the keys it changed to the `changes` table in its own
 * transaction, with that transaction's id. Before a request uses anything
 * cached, `sync()` reads the rows committed since the previous read: a row is
 * new exactly when its transaction was still running (in the previous
 * snapshot's in-progress list) or had not started (at or past its `xmax`)
 * when the previous read took its snapshot. Snapshots decide visibility, so
 * this finds every row once, whatever order transactions took their sequence
 * numbers and committed in, with no lock and no single counter row that
 * every write would queue on.
 *
 * A request waits for a read that STARTED after the request arrived, so a
 * write acknowledged by any instance before the request began is seen. Reads
 * are shared: all requests arriving while one read runs wait for the next
 * one, so there is at most about one read per round trip however busy the
 * instance is. LISTEN/NOTIFY could not give this: a notification arrives at
 * some point after the commit, possibly after the client's next request.
 *
 * Writes by anything other than the service (SQL typed by hand) are in the
 * log too: the changes_by_hand migration's triggers append an EVERYTHING row
 * for each transaction whose connection is not the service's
 * (application_name, see client.ts). Bulk loads (seed, copy) append theirs
 * through `within()`.
 *
 * After a failed read (database unreachable) or a long pause, everything
 * cached is dropped and the next read starts afresh. `local` mode (one
 * instance only, SINGLE_INSTANCE=true) skips the read before each request:
 * the API's writes are all this process's own, and the others' (SQL by hand,
 * the commands) are read at most once a second (see `glance`).
 */
export class PgChanges implements ChangeFeed {
  readonly versions = new Versions()
  readonly stats: ChangeStats = { reads: 0, rows: 0, resets: 0, upToDateAt: 0 }
  private last: Snapshot | undefined
  private lastReadAt = 0
  private running: Promise<void> | null = null
  private queued: Promise<void> | null = null
  /** this instance's own rows (already bumped), by sequence number, with when they were written */
  private readonly own = new Map<string, number>()
  private writtenSinceAnalyze = 0
  private analyzeAfter = ANALYZE_FIRST_ROWS

  constructor(
    private readonly sql: SQL,
    private readonly local = false,
  ) {}

  /**
   * Runs `fn` as one transaction; `changed(keys)` records what it changed.
   * The keys reach the log in the same transaction and this instance's
   * caches right after the commit. Never retried (see client.ts).
   */
  async write<T>(fn: (tx: TransactionSQL, changed: (keys: readonly number[]) => void) => Promise<T>): Promise<T> {
    const changed: number[] = []
    const attempt = (expired: () => boolean, committing: () => void) =>
      guardedTransaction(
        this.sql,
        expired,
        async (tx) => {
          changed.length = 0
          const logged: Promise<string>[] = []
          const result = await fn(tx, (keys) => {
            changed.push(...keys)
            // sent at once, it travels with the write's next statement: no round trip of its own
            const seq = tx`INSERT INTO changes (keys, at) VALUES (${logRow(keys)}, ${Date.now()}) RETURNING seq::text`
              .execute()
              .then((rows) => rows[0].seq as string)
            seq.catch(() => {}) // awaited below, unless `fn` failed first (its failure is the one thrown)
            logged.push(seq)
          })
          return { result, seqs: await Promise.all(logged) }
        },
        committing,
      )
    return write(async (expired, committing) => {
      // a deadlock or serialization failure rolled everything back: safe to run again (the last one is a 503, see write())
      for (let tries = 1; ; tries++) {
        try {
          const { result, seqs } = await attempt(expired, committing)
          // committed: this instance's caches learn it now, even if the request was answered 503 meanwhile
          if (seqs.length) this.committed(seqs, changed)
          return result
        } catch (e) {
          if (tries >= 3 || expired() || !isConflict(e)) throw e
        }
      }
    })
  }

  /**
   * For a writer that holds its own transaction (a bulk load): records inside
   * it that everything changed, and returns what to call once it committed.
   */
  async within(tx: TransactionSQL): Promise<() => void> {
    const [row] = await tx`INSERT INTO changes (keys, at) VALUES (${logRow([EVERYTHING])}, ${Date.now()}) RETURNING seq::text`
    return () => this.committed([row.seq], [EVERYTHING])
  }

  private committed(seqs: readonly string[], keys: readonly number[]): void {
    this.versions.bump(keys)
    // in both modes: `local` reads the log too, where these rows are already applied
    const now = Date.now()
    for (const seq of seqs) {
      this.own.set(seq, now)
      this.wrote()
    }
  }

  sync(): void | Promise<void> {
    if (this.local) return this.glance()
    if (this.running === null) return this.start()
    // the running read started before this request arrived: wait for the next one. If it fails,
    // the database is away for this request too: it answers 503 now, not after a read of its own
    this.queued ??= this.running.then(
      () => {
        this.queued = null
        return this.running ?? this.start()
      },
      (e) => {
        this.queued = null
        throw e
      },
    )
    return this.queued
  }

  /**
   * `local` mode: this process's own writes reach its caches as they commit;
   * the log is read for the others' (SQL by hand, the commands) at most
   * once per LOCAL_READ_MS, in the background while requests keep coming. A
   * request waits for a read only when the last one started 2 x LOCAL_READ_MS
   * ago or more (an idle instance): whatever committed before that is seen,
   * so anything committed is seen within 2 x LOCAL_READ_MS.
   */
  private glance(): void | Promise<void> {
    const age = Date.now() - this.lastReadAt
    if (age < LOCAL_READ_MS) return undefined
    const read = this.running ?? this.start()
    if (age < 2 * LOCAL_READ_MS) {
      read.catch(() => {}) // a failed read drops everything: the next request waits for one
      return undefined
    }
    return read
  }

  private start(): Promise<void> {
    const p = this.readLog().finally(() => {
      if (this.running === p) this.running = null
    })
    this.running = p
    return p
  }

  private async readLog(): Promise<void> {
    const now = Date.now()
    const last = this.last
    const fresh = last !== undefined && now - this.lastReadAt < CHANGE_RETENTION_MS / 2
    try {
      const [row] = await read(() =>
        fresh
          ? this.sql.unsafe(PG_CHANGES_SINCE, [last.xmax, last.xip])
          : this.sql`SELECT pg_current_snapshot()::text AS snapshot, '[]'::json AS rows`,
      )
      const seen = parseSnapshot(row.snapshot)
      // transaction ids never go back on one server: this is another one behind the same address (a
      // restored dump, a switch to a replica of another history), whose log this read cannot place
      const elsewhere = fresh && before(seen.xmax, last.xmax)
      if (!fresh || elsewhere) {
        // first read, or after a gap in which rows may have been purged unread, or another server
        if (last !== undefined || this.lastReadAt !== 0) {
          this.versions.bumpAll()
          this.stats.resets++
        }
        this.own.clear()
      } else {
        const rows = (typeof row.rows === 'string' ? JSON.parse(row.rows) : row.rows) as [string, string][]
        for (const [seq, keys] of rows) {
          if (!this.own.delete(seq)) this.versions.bump(fromLog(keys))
        }
        this.stats.rows += rows.length
        this.forgetOldOwn(now)
      }
      this.last = seen
      this.lastReadAt = now
      this.stats.reads++
      this.stats.upToDateAt = now
    } catch (e) {
      // what changed meanwhile is unknown: the next read starts afresh
      this.last = undefined
      this.lastReadAt = -1
      this.versions.bumpAll()
      this.stats.resets++
      throw e
    }
  }

  /** Own rows never read back (purged, or the log was reset) are forgotten after a while. */
  private forgetOldOwn(now: number): void {
    if (this.own.size < 1000) return
    for (const [seq, at] of this.own) if (now - at > 60_000) this.own.delete(seq)
  }

  /**
   * Takes the log's statistics again after this instance's first
   * ANALYZE_FIRST_ROWS rows since the last purge, then after twice as many,
   * and so on. The change-log read is a prepared statement: PostgreSQL plans
   * it once for good when the log is near empty (a scan of the whole table,
   * the cheapest plan then), and keeps that plan while the log grows to
   * minutes of writes until new statistics come, which autovacuum may be
   * late to take or never take (it can be off). Statistics only: failures
   * are ignored.
   */
  private wrote(): void {
    if (++this.writtenSinceAnalyze < this.analyzeAfter) return
    this.writtenSinceAnalyze = 0
    this.analyzeAfter = Math.min(this.analyzeAfter * 2, ANALYZE_MAX_ROWS)
    this.sql`ANALYZE changes`.catch(() => {})
  }

  /** Drops change-log rows every instance has had time to read. */
  async purge(now = Date.now()): Promise<void> {
    await write(() => this.sql`DELETE FROM changes WHERE at < ${now - CHANGE_RETENTION_MS}`)
  }

  /**
   * Vacuums the log and takes its statistics (after a purge): it is a queue,
   * rows in and out all the time, left neither to grow with dead rows nor to
   * plans made for another size when autovacuum is off or slow.
   */
  async tidy(): Promise<void> {
    await write(() => this.sql`VACUUM (ANALYZE) changes`)
    this.writtenSinceAnalyze = 0
    this.analyzeAfter = ANALYZE_FIRST_ROWS
  }
}
