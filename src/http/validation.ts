import { FormatRegistry, type TSchema } from '@sinclair/typebox'
import { t } from 'elysia'
import { type ValueError, ValueErrorType as E } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { type ErrorMap, unprocessable } from '../errors.ts'

/**
 * Turns TypeBox validation errors into the contract's 422 envelope: one entry
 * per failing field, messages that read as a sentence after the key
 * ("email can't be blank"). Framework messages (which quote the schema and
 * echo the value, password included) never reach a client.
 */

/**
 * Lengths in the contract are in characters (code points), not the UTF-16
 * units TypeBox's maxLength counts (an emoji is one character), and some
 * checks need Unicode regexes (TypeBox patterns have no `u` flag). So such
 * strings are a named format that checks both; the limits are kept for the
 * message.
 */
const charLimits = new Map<string, { min: number; max: number; notBlank: boolean; problem?: (v: string) => string | undefined }>()
export function codePoints(v: string, stopAfter = Infinity): number {
  let n = 0
  for (const _ of v) if (++n > stopAfter) break
  return n
}

/**
 * Text that shows nothing: spaces, and the characters that have no look of their own (zero-width
 * spaces and joiners, Hangul fillers, which count as letters) or look like a space (U+2800).
 */
export const isBlank = (v: string) => {
  // most text starts with a visible ASCII character: no pattern to run
  const first = v.charCodeAt(0)
  return !(first > 32 && first < 127) && /^[\s\p{Default_Ignorable_Code_Point}\u2800]*$/u.test(v)
}

/**
 * A string of `min`..`max` characters, optionally also `valid`, documented
 * under `format`. `notBlank`: stored exactly as sent (Markdown bodies, where
 * leading and trailing spaces matter), but blank (isBlank) is refused.
 */
export function text(
  format: string,
  min: number,
  max: number,
  options: {
    valid?: (v: string) => boolean
    /** like `valid`, naming what is wrong (the message after the field's name) */
    problem?: (v: string) => string | undefined
    description?: string
    notBlank?: boolean
    /** U+0000 is refused everywhere it would be stored (PostgreSQL text cannot hold it); passwords, only hashed, keep it */
    allowNul?: boolean
  } = {},
) {
  if (!charLimits.has(format)) {
    const notBlank = options.notBlank ?? false
    const nul = options.allowNul ? undefined : (v: string) => (v.includes('\u0000') ? 'must not contain the NUL character' : undefined)
    const problem = nul && options.problem ? (v: string) => nul(v) ?? options.problem!(v) : (nul ?? options.problem)
    charLimits.set(format, { min, max, notBlank, problem })
    FormatRegistry.Set(format, (v) => {
      const n = codePoints(v, max)
      return n >= min && n <= max && !(notBlank && isBlank(v)) && (options.valid?.(v) ?? true) && problem?.(v) === undefined
    })
  }
  const description = options.description ?? `${min}-${max.toLocaleString('en')} characters`
  return t.String({ format, minLength: min, description })
}

export const isHttpUrl = (v: string) => {
  if (!/^https?:\/\/\S+$/i.test(v)) return false
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol)
  } catch {
    return false
  }
}

export function fieldMessage(e: Pick<ValueError, 'type' | 'schema' | 'value'>): string {
  const s = e.schema as Record<string, unknown>
  if (e.value === undefined) return "can't be blank"
  switch (e.type) {
    case E.String:
      return 'must be a string'
    case E.StringMinLength:
      return s.minLength === 1 || e.value === '' ? "can't be blank" : `is too short (minimum is ${s.minLength} characters)`
    case E.StringMaxLength:
      return `is too long (maximum is ${s.maxLength} characters)`
    case E.StringFormat: {
      const limits = charLimits.get(s.format as string)
      if (limits && typeof e.value === 'string') {
        const n = codePoints(e.value, limits.max)
        // an empty value is blank whatever the minimum (RealWorld 2.0: an empty password "can't be blank")
        if (n === 0 || (limits.notBlank && isBlank(e.value))) return "can't be blank"
        if (n < limits.min) return `is too short (minimum is ${limits.min} characters)`
        if (n > limits.max) return `is too long (maximum is ${limits.max} characters)`
        const problem = limits.problem?.(e.value)
        if (problem) return problem
      }
      return 'is invalid'
    }
    case E.StringPattern:
      return 'is invalid'
    case E.Object:
      return 'must be an object'
    case E.Array:
      return 'must be an array'
    case E.ArrayMaxItems:
      // `itemsName`: what the schema calls its items in messages (a query parameter's values)
      return `has too many ${s.itemsName ?? 'items'} (maximum is ${s.maxItems})`
    case E.Integer:
    case E.Number:
    case E.IntegerMinimum:
    case E.NumberMinimum:
      return s.minimum === undefined ? 'must be an integer' : `must be an integer of at least ${s.minimum}`
    case E.IntegerMaximum:
    case E.NumberMaximum:
      return `must be less than or equal to ${s.maximum}`
    case E.Boolean:
      return 'must be true or false'
    case E.Union:
      return unionMessage(s.anyOf as TSchema[], e.value)
    default:
      return 'is invalid'
  }
}

/** Unions are "a string or null" bodies and "an integer" query values: name the specific problem. */
function unionMessage(variants: TSchema[], value: unknown): string {
  const types = variants.map((v) => v.type as string)
  if (types.includes('integer')) return 'must be an integer'
  if (types.includes('array') && types.includes('string')) return 'must be a string or a list of strings'
  const stringVariant = variants.find((v) => v.type === 'string')
  if (stringVariant && typeof value === 'string') {
    const first = Value.Errors(stringVariant, value).First()
    if (first) return fieldMessage(first)
  }
  return types.includes('null') ? 'must be a string or null' : 'is invalid'
}

/**
 * Runs in `transform`, before validation: Elysia reshapes a wrapper of the
 * wrong type into an empty object when every field in it is optional (PUT
 * routes), which would hide the error. Names the wrapper instead.
 */
export function requireObjectWrapper(body: unknown, key: string): void {
  if (body === null || typeof body !== 'object' || !(key in body)) return
  const v = (body as Record<string, unknown>)[key]
  if (v === null || v === undefined) throw unprocessable({ [key]: ["can't be blank"] })
  if (typeof v !== 'object' || Array.isArray(v)) throw unprocessable({ [key]: ['must be an object'] })
}

/**
 * The key an error is reported under. Bodies are wrapped (`{"user": {...}}`):
 * report the field inside the wrapper, or the wrapper itself when it is the
 * problem; list items are reported under their list (`tagList`).
 */
export function fieldKey(path: string, wrapped: boolean): string {
  const segments = path.split('/').filter(Boolean)
  if (segments.length === 0) return 'body'
  return (wrapped ? (segments[1] ?? segments[0]) : segments[0]) as string
}

export function validationErrors(errors: Iterable<ValueError>, wrapped: boolean): ErrorMap {
  const out: ErrorMap = {}
  const all = [...errors]
  // When the wrapper itself is missing or wrong, the fields inside it are noise.
  const brokenWrappers = new Set(all.filter((e) => wrapped && e.path.split('/').filter(Boolean).length === 1).map((e) => e.path))
  for (const e of all) {
    // unknown extra fields are ignored, not errors
    if (e.type === E.ObjectAdditionalProperties) continue
    if ([...brokenWrappers].some((w) => e.path.startsWith(`${w}/`))) continue
    const key = fieldKey(e.path, wrapped)
    const message = fieldMessage(e)
    const list = (out[key] ??= [])
    // "can't be blank" says it all: drop "is invalid" and friends beside it
    if (message === "can't be blank") list.splice(0, list.length, message)
    else if (!list.includes(message) && !list.includes("can't be blank")) list.push(message)
  }
  return out
}
