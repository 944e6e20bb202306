import { SQL, type TransactionSQL } from 'bun'
import { DatabaseUnavailable, OutcomeUnknown } from '../types.ts'
import { dbStats } from '../stats.ts'

export interface ClientOptions {
  /** connections in the pool */
  poolMax: number
  /** a schema to work in instead of public (tests: one per app) */
  schema?: string
  /** false behind PgBouncer in transaction mode: no named prepared statements */
  prepare?: boolean
  /**
   * A statement, or a wait for a lock, longer than this is cancelled by the
   * server (statement_timeout, lock_timeout); a query that gets no answer at
   * all (a silent network) is given up 1 s later. 0 or absent: no limit.
   */
  timeoutMs?: number
}

/**
 * The `application_name` of every connection the service (and its commands)
 * opens, whatever the URL says. The changes_by_hand migration's triggers
 * record a change for every transaction whose connection goes by another name
 * (SQL typed by hand): the service's own statements are told apart by a WHEN
 * on this setting, with no statement added to any write, and the name is one
 * of the startup parameters PgBouncer accepts and keeps per client.
 */
const SERVICE_NAME = 'conduit'

/**
 * How long read() and write() wait for an answer before they give up (503);
 * 0: no limit. One per process: the last connect() sets it (a process serves
 * one database; the commands that migrate, seed or copy set 0).
 */
let deadlineMs = 0

/** Thrown inside a transaction whose request was already answered 503: it rolls back instead of committing late. */
class Abandoned extends Error {
  constructor() {
    super('abandoned: the request was answered 503 at its deadline')
  }
}

/**
 * Bun's own PostgreSQL client (no dependency). TLS follows the URL's
 * `sslmode` (disable, prefer, require, verify-ca, verify-full). A connection
 * that cannot be made within 5 s fails the query; idle connections are closed
 * after 30 s. With `timeoutMs`, no query waits longer than that (see
 * ClientOptions): requests answer 503 instead of hanging on a stuck lock, a
 * runaway statement or a network that went silent.
 */
export function connect(url: string, o: ClientOptions): SQL {
  const timeout = o.timeoutMs ?? 0
  deadlineMs = timeout > 0 ? timeout + 1000 : 0
  const connection: Record<string, string> = { application_name: SERVICE_NAME }
  if (o.schema) connection.search_path = o.schema
  // PgBouncer (prepare: false) refuses startup parameters it does not know: there, set them on the role (README)
  // (idle in a transaction: an instance frozen or cut off mid-write, whose locks, the article lock among
  // them, would stop every instance's creations until its socket closed, hours later on a silent network)
  if (timeout > 0 && o.prepare !== false)
    connection.statement_timeout = connection.lock_timeout = connection.idle_in_transaction_session_timeout = String(timeout)
  // short statements: JIT compiling one whose estimate passes jit_above_cost (a feed of thousands of
  // authors) cost ~44 ms a run, several times the statement
  if (o.prepare !== false) connection.jit = 'off'
  return new SQL({
    url,
    max: o.poolMax,
    idleTimeout: 30,
    connectionTimeout: 5,
    prepare: o.prepare ?? true,
    connection,
  } as ConstructorParameters<typeof SQL>[0])
}

/** SQLSTATEs of a statement the server cancelled: statement_timeout (or an operator's cancel), lock_timeout. */
const CANCELLED_STATES = /^(57014|55P03)$/

/** Whether the server gave up on a statement that took too long or waited too long for a lock: 503, and not worth a retry. */
export function isTimedOut(e: unknown): boolean {
  const errno = (e as { errno?: unknown } | null)?.errno
  return typeof errno === 'string' && CANCELLED_STATES.test(errno)
}

/**
 * `fn`'s result, or DatabaseUnavailable once the deadline passes with no
 * answer. The work is not cancelled: `fn` gets `expired()`, true from that
 * moment, so a transaction still waiting (for a pooled connection, a lock, an
 * answer) can roll back instead of committing after its request was answered.
 */
function withDeadline<T>(fn: (expired: () => boolean, committing: () => void) => Promise<T>): Promise<T> {
  if (deadlineMs === 0)
    return fn(
      () => false,
      () => {},
    )
  let timer: Timer | undefined
  let over = false
  // once a COMMIT is on its way, the deadline's answer cannot say the write failed
  let sent = false
  const limit = deadlineMs
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      over = true
      dbStats.timeouts++
      const why = new Error(`no answer from PostgreSQL within ${limit} ms`)
      reject(sent ? new OutcomeUnknown(why) : new DatabaseUnavailable(why))
    }, limit)
  })
  const committing = () => {
    sent = true
  }
  return Promise.race([fn(() => over, committing), expired]).finally(() => clearTimeout(timer))
}

/**
 * SQLSTATEs that mean "the server cannot serve now": connection failures, shutdown, start-up,
 * resources short (53: a full disk, memory, too many clients), a database that refuses
 * connections, is gone or no longer lets us in, a standby where the primary was (read-only,
 * as during a failover), and a session the server ended for idling in its transaction (25P03:
 * this process paused past the timeout; rolled back).
 */
const UNAVAILABLE_STATES = /^(08...|57P0[1-3]|53...|55000|3D000|28000|28P01|25006|25P03)$/

/** Whether an error means the database could not be reached (answered 503), not that the query was wrong. */
export function isUnavailable(e: unknown): boolean {
  if (e instanceof DatabaseUnavailable) return true
  const err = e as { code?: unknown; errno?: unknown } | null
  const code = typeof err?.code === 'string' ? err.code : ''
  if (code === 'ERR_POSTGRES_SERVER_ERROR') return typeof err?.errno === 'string' && UNAVAILABLE_STATES.test(err.errno)
  return (
    code.startsWith('ERR_POSTGRES_CONNECTION') ||
    code.endsWith('_TIMEOUT') ||
    code === 'ERR_POSTGRES_TLS_NOT_AVAILABLE' ||
    /^E(CONN|HOST|NET|PIPE|TIMEDOUT|AI_)/.test(code)
  )
}

/** SQLSTATEs of a transaction the server rolled back to end a deadlock (40P01) or a serialization failure (40001). */
const CONFLICT_STATES = /^(40P01|40001)$/

/**
 * Whether the server rolled the transaction back because of other
 * transactions (a deadlock, a serialization failure): safe to run again
 * (PgChanges.write does, a few times); still failing after that, 503 like
 * the other transient states, never 500.
 */
export function isConflict(e: unknown): boolean {
  const errno = (e as { errno?: unknown } | null)?.errno
  return typeof errno === 'string' && CONFLICT_STATES.test(errno)
}

/** A PostgreSQL unique violation (SQLSTATE 23505), optionally of one constraint. */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const err = e as { errno?: unknown; constraint?: unknown } | null
  return err?.errno === '23505' && (constraint === undefined || err.constraint === constraint)
}

/** A query that met a connection the server had closed (terminated, shut down): it never ran. */
function metClosedConnection(e: unknown): boolean {
  const err = e as { code?: unknown; errno?: unknown } | null
  return err?.errno === '57P01' || err?.errno === '57P02' || err?.code === 'ERR_POSTGRES_CONNECTION_CLOSED'
}

/** Tries of a read that keeps meeting closed connections: each pooled connection fails once, then is replaced. */
const CLOSED_TRIES = 32

/**
 * Runs a read; a connection the server closed fails the next query on it
 * once, so a read (idempotent) is tried again, once the pool has had a turn
 * of the event loop to notice the other connections the server closed with
 * it, and again while it meets closed connections. Still failing, or failing
 * to connect twice: 503.
 */
export function read<T>(fn: () => Promise<T>): Promise<T> {
  dbStats.reads++
  return withDeadline(async (expired) => {
    dbStats.inFlight++
    try {
      for (let tries = 1; ; tries++) {
        try {
          return await fn()
        } catch (e) {
          if (isTimedOut(e)) throw counted(new DatabaseUnavailable(e), e)
          if (!isUnavailable(e)) throw counted(e, e)
          if (expired() || tries >= (metClosedConnection(e) ? CLOSED_TRIES : 2)) throw counted(new DatabaseUnavailable(e), e)
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
    } finally {
      dbStats.inFlight--
    }
  })
}

/** Counts an error from the database in dbStats (a unique violation is an answer, 422, not an error); returns `thrown`. */
function counted(thrown: unknown, cause: unknown): unknown {
  // (rolled back after the deadline, which counted it)
  if (cause instanceof Abandoned) return thrown
  if (isTimedOut(cause)) dbStats.timeouts++
  else if (isUnavailable(cause)) dbStats.unavailable++
  else if (isConflict(cause)) dbStats.conflicts++
  else if (!isUniqueViolation(cause)) dbStats.errors++
  return thrown
}

/**
 * Runs a write once (it may have committed before the connection broke: never
 * retried); unreachable, timed out, or rolled back by a conflict its caller
 * did not get past (see isConflict): 503. A statement the server timed out
 * rolled its transaction back. Past the deadline, `expired()` is true: a
 * transaction checks it when it gets its connection and before it commits
 * (guardedTransaction), so one answered 503 rolls back. A COMMIT already on
 * its way when the deadline passes, or the connection breaks, may land: that
 * 503 is OutcomeUnknown, which says so rather than "try again".
 */
export function write<T>(fn: (expired: () => boolean, committing: () => void) => Promise<T>): Promise<T> {
  dbStats.writes++
  return withDeadline(async (expired, committing) => {
    dbStats.inFlight++
    try {
      return await fn(expired, committing)
    } catch (e) {
      const unavailable =
        e instanceof DatabaseUnavailable ? e : isUnavailable(e) || isTimedOut(e) || isConflict(e) ? new DatabaseUnavailable(e) : e
      throw counted(unavailable, e)
    } finally {
      dbStats.inFlight--
    }
  })
}

/**
 * One transaction for write(): it checks `expired` when it gets its
 * connection and again before it commits, and rolls back if its request was
 * answered 503 meanwhile, rather than commit what the client was told failed.
 * BEGIN is not awaited on its own (as `sql.begin` does): it travels with the
 * transaction's first statement, one round trip fewer per write.
 */
export async function guardedTransaction<T>(
  sql: SQL,
  expired: () => boolean,
  fn: (tx: TransactionSQL) => Promise<T>,
  committing: () => void,
): Promise<T> {
  const conn = await sql.reserve()
  try {
    if (expired()) throw new Abandoned()
    const begun = conn`BEGIN`.execute()
    begun.catch(() => {}) // awaited below, unless `fn` failed first
    try {
      const out = await fn(conn as unknown as TransactionSQL)
      await begun
      if (expired()) throw new Abandoned()
      committing()
      try {
        await conn`COMMIT`
      } catch (e) {
        // the connection broke with the COMMIT sent: the server may have committed
        throw isUnavailable(e) ? new OutcomeUnknown(e) : e
      }
      return out
    } catch (e) {
      // after a failed COMMIT there is nothing to roll back; a broken connection cannot
      await conn`ROLLBACK`.catch(() => {})
      throw e
    }
  } finally {
    conn.release()
  }
}

/**
 * Queries already sent on one transaction's connection, in order: they travel
 * together (one round trip for all, not one each) and the server runs them
 * one after the other. Their results in order; the first failure is thrown
 * (the later ones fail because of it, aborted transaction, and are settled
 * here, never left unhandled).
 */
export async function pipelined<T extends readonly unknown[]>(...queries: { [K in keyof T]: T[K] | PromiseLike<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(queries)
  for (const s of settled) if (s.status === 'rejected') throw s.reason
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T
}

/**
 * An int4[] column as an array of numbers. Bun's client hands it over as an
 * Int32Array; `Array.from` walks that through the iterator protocol, an order
 * of magnitude slower than this loop (docs/PERFORMANCE.md).
 */
export function intArray(v: unknown): number[] {
  const from = v as ArrayLike<number>
  const n = from.length
  const out = new Array<number>(n)
  for (let i = 0; i < n; i++) out[i] = from[i]!
  return out
}

/** Milliseconds stored as bigint arrive as strings. */
export const ms = (v: unknown): number => (typeof v === 'number' ? v : Number(v))

/** PostgreSQL text cannot hold U+0000: a name containing it names nothing stored. */
export const nameless = (s: string): boolean => s.includes('\u0000')

/**
 * Why PostgreSQL refused a connection, as far as the error shows: the cases an
 * operator meets on the first start, each with a fix (cli/diagnose/postgres.ts turns it
 * into one line). Undefined for anything else.
 */
export type ConnectProblem =
  | { kind: 'no-database'; database: string }
  | { kind: 'no-role'; role: string }
  | { kind: 'no-login'; role: string }
  | { kind: 'password'; role: string }
  /** pg_hba.conf lets this role in only over TLS (hostssl), and the URL asked for none */
  | { kind: 'tls-required'; role: string }
  /** pg_hba.conf has no line for this role, database and client address at all */
  | { kind: 'no-hba-entry'; role: string; database: string; client: string }
  /** the URL asks for TLS (sslmode=require or verify-*) from a server that has none */
  | { kind: 'tls-unavailable' }
  /** sslmode=verify-ca or verify-full, and the server's certificate did not verify */
  | { kind: 'certificate'; reason: string }
  | { kind: 'refused' }
  | { kind: 'timeout' }
  | { kind: 'too-many-connections' }

/** Certificate failures of the TLS handshake (BoringSSL's and Node's names for them). */
const CERTIFICATE_CODES =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED|CERT_REJECTED|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH)$/

export function connectProblem(e: unknown): ConnectProblem | undefined {
  const err = e as { code?: unknown; errno?: unknown; message?: unknown } | null
  const code = typeof err?.code === 'string' ? err.code : ''
  const state = typeof err?.errno === 'string' ? err.errno : ''
  const message = typeof err?.message === 'string' ? err.message : ''
  // the server quotes the names it refused: role "x", database "y", host "z"
  const quoted = (what: string) => new RegExp(`${what} "([^"]*)"`).exec(message)?.[1] ?? ''
  if (state === '3D000') return { kind: 'no-database', database: quoted('database') }
  if (state === '28P01') return { kind: 'password', role: quoted('user') }
  if (state === '28000') {
    if (/^role ".*" does not exist/.test(message)) return { kind: 'no-role', role: quoted('role') }
    if (/is not permitted to log in/.test(message)) return { kind: 'no-login', role: quoted('role') }
    if (/no pg_hba\.conf entry/.test(message)) {
      // "..., no encryption": a hostssl line would have matched had the client asked for TLS
      if (/no encryption$/.test(message)) return { kind: 'tls-required', role: quoted('user') }
      return { kind: 'no-hba-entry', role: quoted('user'), database: quoted('database'), client: quoted('host') }
    }
    return undefined
  }
  if (state === '53300') return { kind: 'too-many-connections' }
  if (code === 'ERR_POSTGRES_TLS_NOT_AVAILABLE') return { kind: 'tls-unavailable' }
  if (CERTIFICATE_CODES.test(code)) return { kind: 'certificate', reason: message || code }
  if (code === 'ERR_POSTGRES_CONNECTION_REFUSED' || code === 'ECONNREFUSED') return { kind: 'refused' }
  if (code === 'ERR_POSTGRES_CONNECTION_TIMEOUT' || code === 'ETIMEDOUT') return { kind: 'timeout' }
  return undefined
}
