import type { Awaitable } from '../db/types.ts'

/** Filters of GET /api/articles: several values of one are ANY, different ones AND. */
export interface ListFilters {
  tag: string[]
  /** normalised usernames (see src/names.ts) */
  author: string[]
  favorited: string[]
}
export interface Page {
  limit: number
  offset: number
}
/** A page of article ids, newest first, and the number of ALL matching articles. */
export interface PageIds {
  ids: number[]
  total: number
}

export interface ListStore {
  page(filters: ListFilters, page: Page): Awaitable<PageIds>
  /** Articles by the users `viewer` follows. */
  feed(viewerId: number, page: Page): Awaitable<PageIds>
}
