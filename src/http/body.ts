import { HttpError } from '../errors.ts'

/** Deeper JSON than any Conduit body needs (they are 3 levels deep). */
export const MAX_JSON_DEPTH = 32

/** Refuses what is not UTF-8 (a TypeError) instead of replacing it; a byte order mark is dropped. */
const UTF8 = new TextDecoder('utf-8', { fatal: true })

export const tooLarge = (limit: number) => new HttpError(413, { body: [`is too large (maximum is ${limit} bytes)`] })

/**
 * A body sent compressed (`Content-Encoding: gzip`) is refused, not read as
 * if it were plain: RFC 9110 15.5.16's 415, naming the one coding accepted.
 */
function refuseContentCoding(request: Request): void {
  const declared = request.headers.get('content-encoding')
  if (declared === null) return
  const codings = declared
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity')
  if (codings.length === 0) return
  throw new HttpError(415, { body: [`is encoded (${codings.join(', ')}); send it unencoded`] }, { 'accept-encoding': 'identity' })
}

/**
 * Every body is read as JSON, whatever its Content-Type (curl -d sends a form
 * type). An empty body is `null`: bodiless routes accept it, the others
 * answer 422 for the missing wrapper.
 * - A body without Content-Length is read as a stream and dropped as soon as
 *   it passes the limit (never buffered whole).
 * - Nesting is capped before parsing: the framework's validation errors walk
 *   a value recursively, and a deep one would exhaust the stack.
 * - Bytes that are not UTF-8 make it invalid JSON (RFC 8259 8.1), never
 *   replaced in silence; escaped lone surrogates ("\ud800") become U+FFFD, so
 *   every stored string is valid UTF-8 and reads back as it was stored.
 * - Keys that shadow Object methods are dropped (see SHADOWING_KEYS).
 * - A body declaring a content coding is refused (415), never parsed as is.
 */
export async function parseJsonBody(request: Request, limit: number): Promise<unknown> {
  if (request.body && request.headers.get('content-length') !== '0') refuseContentCoding(request)
  let text: string
  try {
    text = UTF8.decode(await readBody(request, limit))
  } catch (e) {
    if (e instanceof TypeError) throw new HttpError(400, { body: ['is not valid JSON'] })
    throw e
  }
  if (text.trim() === '') return null
  if (!withinDepth(text, MAX_JSON_DEPTH)) {
    throw new HttpError(400, { body: [`is nested too deeply (maximum depth is ${MAX_JSON_DEPTH})`] })
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new HttpError(400, { body: ['is not valid JSON'] })
  }
  // (a reviver costs a call per value: 1 MiB of nested empty arrays took 3 s, the event loop held)
  return mayNeedCleaning(text) ? cleaned(value) : value
}

/**
 * Conduit bodies have no field named like these Object methods; an own
 * property `toString: {}` makes the framework's error formatting throw
 * ("cannot convert object to primitive value"), so such keys are dropped
 * like any other unknown field.
 */
const SHADOWING_KEYS = new Set(['toString', 'valueOf', 'toJSON', 'toLocaleString', 'constructor'])
const SHADOWING_NAME = /toString|valueOf|toJSON|toLocaleString|constructor/

/** Whether a parsed body may hold a shadowing key or a lone surrogate: only through an escape (`\u`) or one of the names as is. */
const mayNeedCleaning = (text: string): boolean => text.includes('\\u') || SHADOWING_NAME.test(text)

/** The value with shadowing keys dropped and lone surrogates made U+FFFD, in place (its depth is bounded). */
function cleaned(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed()
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = cleaned(value[i])
    return value
  }
  const o = value as Record<string, unknown>
  for (const key of Object.keys(o)) {
    if (SHADOWING_KEYS.has(key)) delete o[key]
    else {
      const v = o[key]
      const c = cleaned(v)
      if (c !== v) o[key] = c
    }
  }
  return o
}

/** The body's bytes, refused with a 413 as soon as they pass `limit`. */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  // With a Content-Length (already checked against the limit before routing)
  // exactly that many bytes belong to this request: read them in one go.
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) <= limit) {
    return new Uint8Array(await request.arrayBuffer())
  }
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/** Whether brackets nest at most `max` deep (outside strings). Invalid JSON is left to JSON.parse. */
function withinDepth(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return false
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return true
}
