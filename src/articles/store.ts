import type { Awaitable } from '../db/types.ts'

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

/** An article as a write finds it by slug (locked as the write asks, on PostgreSQL). */
export interface ArticleHead {
  id: number
  author_id: number
  slug: string
  title: string
}

/** What a creation stores. */
export interface NewArticleRow {
  slug: string
  title: string
  description: string
  body: string
  tags: readonly string[]
  author: number
  /** milliseconds */
  now: number
}

/** What an edit stores: null keeps the column (the slug is always given). */
export interface ArticleEdit {
  slug: string
  title: string | null
  description: string | null
  body: string | null
  /** milliseconds; updated_at becomes the later of this and the previous value + 1 */
  now: number
}

/** The reads of articles: SQL per backend (see sqlite.ts, postgres.ts). */
export interface ArticleReadSql {
  /** The id and author of the article at `slug`, or null. */
  bySlug(slug: string): Awaitable<{ id: number; author_id: number } | null>
  /** List rows (no body) of these ids, in any order; missing ids are left out. */
  items(ids: readonly number[]): Awaitable<ArticleRow[]>
  /** The whole article (with body), or null. */
  full(id: number): Awaitable<ArticleRow | null>
}

/** What setting a favorite did: the username key only where a row changed (only then is it used). */
export type FavoriteSet = { id: number; changed: true; userKey: string } | { id: number; changed: false }

/**
 * The SQL a write of articles runs, inside its transaction: each backend
 * implements these and decides nothing (writes.ts does).
 */
export interface ArticleWriteSql {
  /**
   * Held until commit by whatever allocates a slug (PostgreSQL's advisory lock; SQLite's write lock already is one).
   * A write that changes tags does so before it takes this lock (PostgreSQL: tag rows, then this lock, in every write).
   */
  lockSlugs(): Awaitable<void>
  /** Whether an article has this slug. */
  slugTaken(slug: string): Awaitable<boolean>
  /** The next suffix number of a base taken twice before, or null. */
  slugCounter(base: string): Awaitable<number | null>
  /** Slugs `base-…` (at least every numbered one): read the first time a base is taken twice. */
  suffixedSlugs(base: string): Awaitable<string[]>
  setSlugCounter(base: string, next: number): Awaitable<void>
  /**
   * Locks its tags (creating the missing ones), takes the slug lock
   * (lockSlugs), then adds the article under `a.slug`
   * with its tags and answers it as its author sees it (the author's name
   * read under a lock a rename waits for); null, adding nothing, when an
   * article has that slug. Its created_at is never before the newest
   * article's. PostgreSQL sends it all at once: one round trip.
   */
  add(a: NewArticleRow): Awaitable<WrittenArticle | null>
  /** The article at `slug`, or null, locked against concurrent edits and deletes until the transaction ends. */
  find(slug: string): Awaitable<ArticleHead | null>
  tagsOf(id: number): Awaitable<string[]>
  update(id: number, e: ArticleEdit): Awaitable<void>
  /** Deletes the article with its links, comments and favorites (PostgreSQL: its tags' rows locked first, in name order). */
  remove(id: number): Awaitable<void>
  /**
   * Links these tags (creating the missing ones); `replacing`: unlinks the others first. PostgreSQL: every tag
   * it links or unlinks is locked first, in name order, all in one round trip.
   */
  setTags(id: number, tags: readonly string[], replacing: boolean): Awaitable<void>
  /**
   * Adds (on) or removes (off) the user's favorite of the article at `slug`,
   * which cannot be deleted until the transaction ends: its id, and whether a
   * row was really added or removed, and then the user's username key, read
   * under a lock a rename waits for (see writes.ts); null for an unknown
   * slug. PostgreSQL: one statement.
   */
  setFavorite(user: number, slug: string, on: boolean): Awaitable<FavoriteSet | null>
  /** The article as `viewer` sees it, read inside the write's transaction. */
  written(id: number, viewerId: number): Awaitable<WrittenArticle>
}
