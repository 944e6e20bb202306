import type { Awaitable } from '../db/types.ts'
import type { ArticleChanges, NewArticle } from './schemas.ts'

/** An article with its author, as every read of one returns it. */
export interface ArticleRow {
  id: number
  author_id: number
  slug: string
  title: string
  description: string
  /** absent in list reads */
  body?: string
  /** milliseconds since the epoch, UTC */
  created_at: number
  updated_at: number
  favorites_count: number
  /** tag names in no particular order */
  tags: string[]
  username: string
  bio: string | null
  image: string | null
}

/** A write's answer: the article as the writer sees it right after, read in the write's transaction. */
export interface WrittenArticle {
  row: ArticleRow
  favorited: boolean
  following: boolean
}

/** Who writes: the id, and the normalised username the change keys name. */
export interface Writer {
  id: number
  usernameKey: string
}

export interface ArticleStore {
  /** The id and author of the article at `slug`, or null. */
  bySlug(slug: string): Awaitable<{ id: number; author_id: number } | null>
  /** List rows (no body) of these ids, in any order; missing ids are left out. */
  items(ids: readonly number[]): Awaitable<ArticleRow[]>
  /** The whole article (with body), or null. */
  full(id: number): Awaitable<ArticleRow | null>
  /** The slug is the next free one for the title's base (see slug.ts). */
  create(author: Writer, a: NewArticle): Awaitable<WrittenArticle>
  /** Author only (403), 404 for an unknown slug. */
  update(viewer: Writer, slug: string, c: ArticleChanges): Awaitable<WrittenArticle>
  delete(viewer: Writer, slug: string): Awaitable<void>
  /** Idempotent; counters move only when a row is really added or removed. */
  setFavorite(user: Writer, slug: string, on: boolean): Awaitable<WrittenArticle>
}
