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

export interface CommentStore {
  /** An article's comments, oldest first (ties by id). */
  list(articleId: number): Awaitable<CommentRow[]>
  /** 404 for an unknown article; returns the new comment. */
  add(viewer: number, slug: string, body: string): Awaitable<CommentRow>
  /** 404 for an unknown article or a comment of another article; 403 unless the comment's or the article's author. */
  delete(viewer: number, slug: string, id: number): Awaitable<void>
}
