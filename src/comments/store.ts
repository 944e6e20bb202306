import type { Awaitable } from '../db/types.ts'

export interface CommentRow {
  id: number
  created_at: number
  updated_at: number
  body: string
  author_id: number
  username: string
  bio: string | null
  image: string | null
}

/** The read of comments: SQL per backend (see sqlite.ts, postgres.ts). */
export interface CommentReadSql {
  /** An article's comments, oldest first (ties by id). */
  list(articleId: number): Awaitable<CommentRow[]>
}

/** The SQL a write of comments runs, inside its transaction (writes.ts decides). */
export interface CommentWriteSql {
  /** The article at `slug`, or null; it cannot be deleted before the transaction ends. */
  article(slug: string): Awaitable<{ id: number; author_id: number } | null>
  insert(article: number, author: number, body: string, now: number): Awaitable<CommentRow>
  /** The author of comment `id` if it belongs to `article`, or null; locked against a concurrent delete. */
  find(id: number, article: number): Awaitable<{ author_id: number } | null>
  /** Comment `id` with its article, or null; locked against a concurrent delete, its article against deletion. */
  withArticle(id: number): Awaitable<{ author_id: number; article: { id: number; author_id: number; slug: string } } | null>
  remove(id: number): Awaitable<void>
}
