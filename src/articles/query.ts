import { usernameKey } from '../names.ts'
import type { ListFilters, Page } from './list-store.ts'

/** What the list and feed queries mean, once validated (their schemas: schemas.ts; how a query is read: src/http/query.ts). */
const MAX_LIMIT = 100
/** Values one filter may take at once: each is an index walk, and a page merges them. */
export const MAX_FILTER_VALUES = 10

/** The filters, usernames normalised; several values of one filter are ANY, a repeat adding nothing. */
export function filtersOf(q: { tag?: string[]; author?: string[]; favorited?: string[] }): ListFilters {
  // a value with U+0000 names nothing that can be stored: it matches nothing, as '' does
  const named = (v: string) => (v.includes('\u0000') ? '' : v)
  // `?author=jake&author=JAKE` is one author: the stores count what they are given
  const distinct = (values: string[] | undefined, key: (v: string) => string) =>
    values === undefined ? [] : values.length === 1 ? [key(values[0]!)] : [...new Set(values.map(key))]
  return {
    tag: distinct(q.tag, named),
    author: distinct(q.author, (v) => usernameKey(named(v))),
    favorited: distinct(q.favorited, (v) => usernameKey(named(v))),
  }
}

/** limit (clamped to 100) and offset, already validated as whole numbers. */
export const page = (q: { limit?: number; offset?: number }): Page => ({
  limit: Math.min(q.limit ?? 20, MAX_LIMIT),
  // past the end is an empty page, however far
  offset: Math.min(q.offset ?? 0, Number.MAX_SAFE_INTEGER),
})
