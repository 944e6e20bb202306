import { unprocessable } from '../errors.ts'
import { usernameKey } from '../users/username.ts'
import type { ListFilters, Page } from './list-store.ts'

/** The query of GET /api/articles and /api/articles/feed, interpreted once for the route and the fast path. */
export const MAX_LIMIT = 100
/** Values one filter may take at once: each is an index walk, and a page merges them. */
export const MAX_FILTER_VALUES = 10
export const PAGE_PARAMS: ReadonlySet<string> = new Set(['limit', 'offset'])
export const LIST_PARAMS: ReadonlySet<string> = new Set(['tag', 'author', 'favorited', 'limit', 'offset'])

const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])

/** The filters, usernames normalised; 422 past MAX_FILTER_VALUES values of one filter. */
export function filtersOf(q: { tag?: string | string[]; author?: string | string[]; favorited?: string | string[] }): ListFilters {
  const f = { tag: asList(q.tag), author: asList(q.author), favorited: asList(q.favorited) }
  const tooMany = Object.entries(f).filter(([, v]) => v.length > MAX_FILTER_VALUES)
  if (tooMany.length) {
    throw unprocessable(Object.fromEntries(tooMany.map(([k]) => [k, [`has too many values (maximum is ${MAX_FILTER_VALUES})`]])))
  }
  // a value with U+0000 names nothing that can be stored: it matches nothing, as '' does
  const named = (v: string) => (v.includes('\u0000') ? '' : v)
  return {
    tag: f.tag.map(named),
    author: f.author.map((v) => usernameKey(named(v))),
    favorited: f.favorited.map((v) => usernameKey(named(v))),
  }
}

/** limit (clamped to 100) and offset, already validated as decimal integers. */
export const page = (q: { limit?: string; offset?: string }): Page => ({
  limit: Math.min(Number(q.limit ?? 20), MAX_LIMIT),
  // past the end is an empty page, however far
  offset: Math.min(Number(q.offset ?? 0), Number.MAX_SAFE_INTEGER),
})

const POSITIVE = /^\d{1,30}$/

/**
 * A list query string as the route would read it, when it is plainly valid:
 * only known parameters, each with a value, `limit`/`offset` at most once and
 * well formed, no more values than allowed, nothing the framework would
 * decode differently (`+`). Anything else: undefined (the route decides,
 * with its errors).
 */
export function plainListQuery(search: string, params: ReadonlySet<string>): { filters: ListFilters; page: Page } | undefined {
  const q: { tag?: string[]; author?: string[]; favorited?: string[]; limit?: string; offset?: string } = {}
  if (search.length > 0) {
    if (search.includes('+')) return undefined
    for (const pair of search.split('&')) {
      const eq = pair.indexOf('=')
      if (eq <= 0 || eq === pair.length - 1) return undefined
      const key = pair.slice(0, eq)
      if (!params.has(key)) return undefined
      let value: string
      try {
        value = decodeURIComponent(pair.slice(eq + 1))
      } catch {
        return undefined
      }
      if (key === 'limit' || key === 'offset') {
        if (q[key] !== undefined || !POSITIVE.test(value) || (key === 'limit' && !/[1-9]/.test(value))) return undefined
        q[key] = value
      } else {
        const list = (q[key as 'tag'] ??= [])
        list.push(value)
        if (list.length > MAX_FILTER_VALUES) return undefined
      }
    }
  }
  return { filters: filtersOf(q), page: page(q) }
}
