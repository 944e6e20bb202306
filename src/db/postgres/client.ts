import { SQL } from 'bun'
import { DatabaseUnavailable } from '../store.ts'

export interface ClientOptions {
  /** connections in the pool */
  poolMax: number
  /** a schema to work in instead of public (tests: one per app) */
  schema?: string
  /** false behind PgBouncer in transaction mode: no named prepared statements */
  prepare?: boolean
}

/**
 * Bun's own PostgreSQL client (no dependency). TLS follows the URL's
 * `sslmode` (disable, prefer, require, verify-ca, verify-full). A connection
 * that cannot be made within 5 s fails the query; idle connections are closed
 * after 30 s.
 */
export function connect(url: string, o: ClientOptions): SQL {
  return new SQL({
    url,
    max: o.poolMax,
    idleTimeout: 30,
    connectionTimeout: 5,
    prepare: o.prepare ?? true,
    ...(o.schema ? { connection: { search_path: o.schema } } : {}),
  } as ConstructorParameters<typeof SQL>[0])
}

/** SQLSTATEs that mean "the server cannot serve now": connection failures, shutdown, start-up, too many clients. */
const UNAVAILABLE_STATES = /^(08...|57P0[1-3]|53300|53400)$/

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

/** A PostgreSQL unique violation (SQLSTATE 23505), optionally of one constraint. */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const err = e as { errno?: unknown; constraint?: unknown } | null
  return err?.errno === '23505' && (constraint === undefined || err.constraint === constraint)
}

/**
 * Runs a read; a connection the server closed fails the next query once, so
 * a read (idempotent) is tried a second time. Still failing: 503.
 */
export async function read<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (e) {
    if (!isUnavailable(e)) throw e
    try {
      return await fn()
    } catch (again) {
      throw isUnavailable(again) ? new DatabaseUnavailable(again) : again
    }
  }
}

/** Runs a write once (it may have committed before the connection broke: never retried); unreachable: 503. */
export async function write<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (e) {
    throw isUnavailable(e) ? new DatabaseUnavailable(e) : e
  }
}

/** Milliseconds stored as bigint arrive as strings. */
export const ms = (v: unknown): number => (typeof v === 'number' ? v : Number(v))

/** PostgreSQL text cannot hold U+0000: a name containing it names nothing stored. */
export const nameless = (s: string): boolean => s.includes('\u0000')
