import type { TObject, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { ErrorMap } from '../errors.ts'
import { validationErrors } from './validation.ts'

/**
 * A route's query string, read one way whichever dispatcher answers
 * (docs/API.md, "Query strings"):
 * - pairs are split on `&` (empty pairs skipped), a pair's name and value on
 *   its first `=`; a name without `=` has the empty value;
 * - `+` is a space, then %-escapes are decoded; text that does not decode
 *   (`%zz`) is kept as written;
 * - values are literal: commas and brackets are part of a value;
 * - a parameter the schema declares as a list takes every occurrence (the
 *   feature decides what several values mean); any other parameter may be
 *   given once;
 * - a parameter declared as an integer is plain decimal digits (at most 30;
 *   no sign, point or exponent): anything else fails its check;
 * - names are case-sensitive, and names the route does not declare are
 *   ignored. Such an answer is not kept in the response cache, so that
 *   made-up parameters cannot fill it with copies (`known` says so).
 * The values are then checked against the same schema, compiled once.
 */
export type QueryResult<Q> = { ok: true; value: Q; known: boolean } | { ok: false; errors: ErrorMap }

export type QueryReader<Q = Record<string, unknown>> = (search: string) => QueryResult<Q>

const decode = (s: string): string => {
  const spaced = s.includes('+') ? s.replaceAll('+', ' ') : s
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

const isList = (s: TSchema): boolean => s.type === 'array'
const isInteger = (s: TSchema): boolean => s.type === 'integer'
const DIGITS = /^\d+$/
/** A whole number however long: past what a double holds (~309 digits) it is the largest one (limit and offset clamp). */
const whole = (v: string) => Math.min(Number(v), Number.MAX_VALUE)

/** The reader of the query `schema` declares; without a schema every parameter is unknown. */
export function queryReader<Q = Record<string, unknown>>(schema: TObject | undefined): QueryReader<Q> {
  if (!schema) return (search) => ({ ok: true, value: {} as Q, known: search.length === 0 || onlyEmptyPairs(search) })
  const lists = new Set(Object.entries(schema.properties).flatMap(([k, s]) => (isList(s) ? [k] : [])))
  const integers = new Set(Object.entries(schema.properties).flatMap(([k, s]) => (isInteger(s) ? [k] : [])))
  const declared = new Set(Object.keys(schema.properties))
  const check = TypeCompiler.Compile(schema)
  return (search) => {
    const value: Record<string, string | number | string[]> = {}
    let known = true
    let repeated: string[] | undefined
    if (search.length) {
      for (const pair of search.split('&')) {
        if (!pair.length) continue
        const eq = pair.indexOf('=')
        const name = decode(eq < 0 ? pair : pair.slice(0, eq))
        if (!declared.has(name)) {
          known = false
          continue
        }
        const v = eq < 0 ? '' : decode(pair.slice(eq + 1))
        if (lists.has(name)) ((value[name] as string[] | undefined) ?? (value[name] = [] as string[])).push(v)
        else if (name in value) (repeated ??= []).push(name)
        else value[name] = integers.has(name) && DIGITS.test(v) ? whole(v) : v
      }
    }
    if (repeated === undefined && check.Check(value)) return { ok: true, value: value as Q, known }
    const errors = validationErrors(check.Errors(value), false)
    for (const name of repeated ?? []) errors[name] = ['must be given only once']
    return { ok: false, errors }
  }
}

const onlyEmptyPairs = (search: string) => search.split('&').every((p) => p.length === 0)
