import { ValidationError } from 'elysia'
import { isStorageFailure } from '../db/sqlite/open.ts'
import { DatabaseUnavailable, OutcomeUnknown } from '../db/types.ts'
import { type ErrorMap, HttpError, JSON_CONTENT_TYPE } from '../errors.ts'
import type { Logger } from '../log.ts'
import { pathOf } from './url.ts'
import { validationErrors } from './validation.ts'

const PARAM_RESOURCES: Record<string, string> = { slug: 'article', username: 'profile', id: 'comment' }
function paramResource(errors: { path: string }[]): string {
  const param = errors[0]?.path.split('/').filter(Boolean)[0] ?? ''
  return PARAM_RESOURCES[param] ?? 'route'
}

/** Seconds a client is asked to wait before it tries again while the database cannot be reached, by the API and the site alike. */
export const UNAVAILABLE_RETRY_AFTER = '2'
/** The answer while the database cannot be reached: the client may retry shortly. */
const UNAVAILABLE = new HttpError(503, { database: ['is unavailable; try again shortly'] }, { 'retry-after': UNAVAILABLE_RETRY_AFTER })
/** A write the database stopped answering after its COMMIT was sent: sending it again could store it twice. */
const UNCONFIRMED = new HttpError(503, {
  database: ['did not confirm this write, which may have been stored; read before sending it again'],
})
const INTERNAL = new HttpError(500, { server: ['internal error'] })

/** What an error answers, ours or the framework's (`code`: Elysia's name for it). */
function asHttpError(error: unknown, code: unknown): HttpError {
  if (error instanceof HttpError) return error
  // errors thrown while parsing (413) arrive wrapped in Elysia's ParseError
  const cause = code === 'PARSE' ? (error as { cause?: unknown }).cause : undefined
  if (cause instanceof HttpError) return cause
  if (error instanceof ValidationError) {
    // a path segment that does not decode (`%zz`) names nothing that exists
    if (error.type === 'params') return new HttpError(404, { [paramResource(error.all)]: ['not found'] })
    return new HttpError(422, validationErrors(error.all, error.type === 'body'))
  }
  if (code === 'NOT_FOUND') return new HttpError(404, { route: ['not found'] })
  if (code === 'PARSE') return new HttpError(400, { body: ['is not valid JSON'] })
  if (error instanceof OutcomeUnknown) return UNCONFIRMED
  if (unavailable(error)) return UNAVAILABLE
  return INTERNAL
}

/**
 * The database out of reach, as an error that says why: DatabaseUnavailable
 * itself, or a SQLite statement that met a full disk or an I/O error outside
 * the write path that converts them (a throttle's count, a read).
 */
export function unavailable(error: unknown): DatabaseUnavailable | undefined {
  if (error instanceof DatabaseUnavailable) return error
  return isStorageFailure(error) ? new DatabaseUnavailable(error) : undefined
}

/**
 * The one place an error becomes an answer, whichever part of the service met
 * it (the routes, the request entry, the server before the app exists): the
 * contract's envelope, `{"errors": {"<key>": ["<message>"]}}`, with its
 * status and headers. A 500 is logged with its cause and says nothing more;
 * the database being down is a 503 with Retry-After, logged as a warning.
 */
export function errorAnswer(
  error: unknown,
  o: { headers?: Record<string, string>; logger?: Logger; request?: Request; code?: unknown } = {},
): Response {
  const http = asHttpError(error, o.code)
  const where = o.request ? { method: o.request.method, path: pathOf(o.request.url) } : {}
  if (http === UNAVAILABLE && o.logger) logUnavailable(o.logger, { ...where, reason: unavailable(error)?.reason })
  else if (http === UNCONFIRMED) o.logger?.warn('write not confirmed', { ...where, reason: (error as OutcomeUnknown).reason })
  else if (http === INTERNAL) o.logger?.error('unhandled error', where, error)
  return envelope(http.status, http.errors, { ...o.headers, ...http.headers })
}

/** When each (method, path, reason) last had its line, and how many answers since had none; per logger. */
const outages = new WeakMap<Logger, Map<string, { at: number; more: number }>>()
/** Kept apart at most: past that many, the record starts again (paths are the clients' to choose). */
const OUTAGE_KEYS = 1_000

/**
 * The line of a 503 while the database is out of reach. Every request then gets one, and a line
 * each flooded the log (23,000 in 10 s from two instances under load): a line per method, path
 * and reason at most once a second, the next saying how many answers it stands for (`more`).
 */
export function logUnavailable(logger: Logger, fields: { method?: string; path?: string; reason?: string }): void {
  let seen = outages.get(logger)
  if (!seen) outages.set(logger, (seen = new Map()))
  const key = `${fields.method} ${fields.path} ${fields.reason}`
  const now = Date.now()
  const last = seen.get(key)
  if (last && now - last.at < 1_000) {
    last.more++
    return
  }
  if (seen.size >= OUTAGE_KEYS) seen.clear()
  logger.warn('database unavailable', last?.more ? { ...fields, more: last.more } : fields)
  seen.set(key, { at: now, more: 0 })
}

const envelope = (status: number, errors: ErrorMap, headers: Record<string, string>) =>
  new Response(JSON.stringify({ errors }), { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers } })

/** The framework's error hook: every error of a route, as errorAnswer answers it. */
export function errorEnvelope(logger: Logger) {
  return ({ code, error, set, request }: { code: unknown; error: unknown; set: { headers: unknown }; request: Request }): Response =>
    errorAnswer(error, { headers: set.headers as Record<string, string>, logger, request, code })
}
