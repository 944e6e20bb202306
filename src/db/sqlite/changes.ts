import { SLICE, trace } from '../../trace.ts'
import type { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import { fromLog, logRow } from '../../keys/keys.ts'
import { EVERYTHING, Versions } from '../../keys/versions.ts'
import { dbStats } from '../stats.ts'
import { DatabaseUnavailable } from '../types.ts'
import { CHANGE_RETENTION_MS, type ChangeFeed, type ChangeStats } from '../store.ts'
import { isStorageFailure } from './open.ts'
import { ChangeSignal } from './signal.ts'

/** A file's device and inode, or undefined when the path names nothing. */
function identity(path: string): string | undefined {
  try {
    const st = statSync(path)
    return `${st.dev}:${st.ino}`
  } catch {
    return undefined
  }
}

/**
 * With the signal (signal.ts), SQLite is still asked at least this often: a
 * commit whose process died before it rang the signal is seen within it.
 */
export const SIGNAL_FALLBACK_MS = 1_000

/**
 * The SQLite side of cache coherence (see src/keys/versions.ts and keys.ts).
 *
 * Writes of this process: `write` runs a function in one IMMEDIATE
 * transaction (the write lock taken up front), appends the keys it changed to
 * the `changes` table in the same transaction, and bumps them here after the
 * commit. Other processes on the same file (workers, the CLI): SQLite's
 * `PRAGMA data_version` moves when another connection commits, and then
 * `sync()` reads the rows they appended since the last one applied. Rows are
 * appended under the write lock, so their sequence is the commit order and
 * has no gaps: a gap means rows were purged before this process read them,
 * and everything is dropped.
 *
 * Other writers (sqlite3 by hand, scripts): the changes_by_hand migration's
 * triggers count every row they change in `writer.edits`, and `sync()` drops
 * everything when that count moved. `write()` tells its own changes apart by raising
 * `writer.service` for the length of its transaction (see the migration), so
 * every change the service makes to what it serves goes through `write()`,
 * with no keys when it changes nothing cached (else every process drops all
 * it cached). Bulk loads (seed, copy) hold their own transaction and record
 * EVERYTHING through `within()`.
 *
 * `sync()` runs before every request that may use a cache. Asking SQLite
 * takes a read transaction on the WAL index, so a file the processes
 * share says when to (signal.ts): every write rings it after its commit and
 * before its answer, and `sync()` asks SQLite only when it moved (or once
 * SIGNAL_FALLBACK_MS passed). A write acknowledged before a request arrived
 * has rung before that request reads the signal: it is seen.
 */
export class SqliteChanges implements ChangeFeed {
  readonly versions = new Versions()
  readonly stats: ChangeStats = { reads: 0, rows: 0, resets: 0, upToDateAt: 0 }
  private readonly dataVersion
  private readonly since
  private readonly append
  private readonly edits
  private readonly serviceWrites
  private readonly serviceWrote
  /**
   * The body of every `write`, made into a transaction function once (bun:sqlite's
   * `db.transaction()` builds four wrappers each time it is called): marks the
   * transaction as the service's, runs `fn`, appends the keys it changed.
   */
  private readonly transaction
  private lastSeen = -1
  /** `writer.edits` when this process last looked */
  private editsSeen = 0
  private applied = 0
  /** sequence numbers of this process's own rows not yet passed by `applied` */
  private readonly own = new Set<number>()
  private lastSyncAt = Date.now()
  /** the signal's value when SQLite was last asked (NaN: never), and when */
  private signalSeen = Number.NaN
  private signalAt = 0

  /** the signal: null until the first request or write opens it (commands like `migrate` leave no file) */
  private signalFile: ChangeSignal | undefined | null = null

  /** the database file this process opened (device and inode), and when the path was last checked to name it */
  private readonly file: string | undefined
  private fileAt = Date.now()
  /** why this process no longer serves: the file at the path is not the one it has open */
  private lost: DatabaseUnavailable | undefined

  /** `location`: the database file, beside which the signal lives (none for ':memory:', or where it cannot be made). */
  constructor(
    private readonly db: Database,
    private readonly location = ':memory:',
  ) {
    this.dataVersion = db.prepare<{ data_version: number }, []>('PRAGMA data_version')
    this.since = db.prepare<{ seq: number; keys: string }, [number]>('SELECT seq, keys FROM changes WHERE seq > ? ORDER BY seq')
    this.append = db.prepare<{ seq: number }, [string, number]>('INSERT INTO changes (keys, at) VALUES (?, ?) RETURNING seq')
    this.edits = db.prepare<{ edits: number }, []>('SELECT edits FROM writer')
    // nested writes (savepoints) count up and down: the mark is 0 again only when the outermost ends
    this.serviceWrites = db.prepare('UPDATE writer SET service = service + 1')
    this.serviceWrote = db.prepare('UPDATE writer SET service = service - 1')
    this.transaction = db.transaction((fn: (changed: (keys: readonly number[]) => void) => unknown, changed: number[]) => {
      this.serviceWrites.run()
      const out = fn((k) => void changed.push(...k))
      const seq = changed.length ? this.append.get(logRow(changed), Date.now())!.seq : 0
      this.serviceWrote.run()
      return { out, seq }
    })
    this.file = location === ':memory:' ? undefined : identity(location)
    const newest = db.query<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM changes').get()
    this.applied = newest?.seq ?? 0
    this.lastSeen = this.dataVersion.get()!.data_version
    this.editsSeen = this.edits.get()!.edits
  }

  /**
   * Runs `fn` as one write transaction; `changed(keys)` records what it
   * changed. The keys reach the log in the same transaction and this
   * process's caches right after the commit.
   */
  write<T>(fn: (changed: (keys: readonly number[]) => void) => T): T {
    if (this.lost) throw this.lost
    const changed: number[] = []
    dbStats.writes++
    let done: { out: unknown; seq: number }
    try {
      done = this.transaction.immediate(fn, changed)
    } catch (e) {
      const code = String((e as { code?: unknown }).code ?? '')
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
        // another process held the write lock past busy_timeout (a long backup, a hand edit): rolled
        // back, and nothing is wrong with the request: 503, to be sent again shortly
        dbStats.busy++
        throw new DatabaseUnavailable(e)
      } else if (isStorageFailure(e)) {
        // a full disk or an I/O error: rolled back, and answered 503 as a database out of reach
        dbStats.unavailable++
        throw new DatabaseUnavailable(e)
      } else if (!code.startsWith('SQLITE_CONSTRAINT')) dbStats.errors++
      throw e
    }
    // committed (a rolled-back row's number is handed out again, so only now is it ours)
    if (done.seq) this.committed(done.seq, changed)
    return done.out as T
  }

  /**
   * For a writer that holds its own write transaction (a bulk load): records
   * inside it that everything changed, and returns what to call once it
   * committed (every process then sees it at its next request).
   */
  within(): () => void {
    const seq = this.append.get(logRow([EVERYTHING]), Date.now())!.seq
    return () => this.committed(seq, [EVERYTHING])
  }

  private committed(seq: number, keys: readonly number[]): void {
    this.signal?.ring()
    this.versions.bump(keys)
    this.own.add(seq)
    this.sync()
  }

  private get signal(): ChangeSignal | undefined {
    if (this.signalFile === null) return this.openSignal()
    return this.signalFile
  }

  /** why the signal could not be opened (then SQLite is asked at every request) */
  private signalProblem: Error | undefined

  private openSignal(): ChangeSignal | undefined {
    const opened = this.location === ':memory:' ? undefined : ChangeSignal.open(this.location)
    this.signalProblem = opened instanceof Error ? opened : undefined
    this.signalFile = opened instanceof Error ? undefined : opened
    return this.signalFile
  }

  /** Opens the signal now (a server, as it starts); returns why it cannot be used, if it cannot. */
  signalFailure(): Error | undefined {
    void this.signal
    return this.signalProblem
  }

  sync(): void {
    const now = Date.now()
    if (now - this.fileAt >= SIGNAL_FALLBACK_MS) this.checkFile(now)
    if (this.lost) throw this.lost
    const signal = this.signal
    if (signal !== undefined) {
      if (signal.read() === this.signalSeen && now - this.signalAt < SIGNAL_FALLBACK_MS) {
        this.stats.upToDateAt = now
        return
      }
      if (now - this.signalAt >= SIGNAL_FALLBACK_MS && !signal.current()) {
        // the file was removed or replaced: map the one the path names now (the others will)
        this.openSignal()
      }
      this.signalSeen = this.signalFile?.read() ?? Number.NaN
      this.signalAt = now
    }
    if (!trace.on) {
      this.readLog(now)
      return
    }
    const start = performance.now()
    this.readLog(now)
    trace.slice(start, SLICE.changes)
  }

  /**
   * Whether the path still names the file this process has open. Removed or replaced under it (an
   * operator restoring a backup while it runs, a worker that created a new one), this process
   * would acknowledge writes no one reads again: it answers 503 instead, until the path names its
   * file again. (A file overwritten in place keeps its inode: not seen here.)
   */
  private checkFile(now: number): void {
    this.fileAt = now
    if (this.file === undefined) return
    const here = identity(this.location)
    this.lost =
      here === this.file
        ? undefined
        : new DatabaseUnavailable(
            new Error(
              `the database file ${this.location} was ${here === undefined ? 'removed' : 'replaced'} while this process had it open: restart the service`,
            ),
          )
  }

  /** Whether this process may serve its database: undefined, or why not (see checkFile). */
  get problem(): DatabaseUnavailable | undefined {
    this.checkFile(Date.now())
    return this.lost
  }

  /** What the log says changed since the last read (sync, when the signal moved or a second passed). */
  private readLog(now: number): void {
    const v = this.dataVersion.get()!.data_version
    if (v === this.lastSeen) {
      // nobody else committed since the last read: our own rows are the newest
      for (const s of this.own) if (s > this.applied) this.applied = s
      this.own.clear()
      this.lastSyncAt = this.stats.upToDateAt = now
      return
    }
    this.lastSeen = v
    const rows = this.since.all(this.applied)
    const edits = this.edits.get()!.edits
    const byHand = edits !== this.editsSeen
    this.editsSeen = edits
    const stale = now - this.lastSyncAt > CHANGE_RETENTION_MS / 2
    if (byHand || stale || (rows.length && rows[0]!.seq !== this.applied + 1)) {
      // another writer changed rows (which ones is not recorded), or rows this process never read may have been purged
      this.versions.bumpAll()
      this.stats.resets++
    } else {
      for (const r of rows) if (!this.own.delete(r.seq)) this.versions.bump(fromLog(r.keys))
    }
    if (rows.length) this.applied = rows[rows.length - 1]!.seq
    this.own.clear()
    this.stats.reads++
    this.stats.rows += rows.length
    this.lastSyncAt = this.stats.upToDateAt = now
  }

  /** Drops change-log rows every process has had time to read. */
  purge(now = Date.now()): void {
    this.db.query('DELETE FROM changes WHERE at < ?').run(now - CHANGE_RETENTION_MS)
  }
}
