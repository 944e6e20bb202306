import { type Actor, isAdminOr, type Viewer } from '../auth/actor.ts'
import { keys } from '../keys/keys.ts'
import { type Changed, type Steps, wait, type Writes } from '../db/steps.ts'
import { forbidden, notFound } from '../errors.ts'
import type { CommentRow, CommentWriteSql } from './store.ts'

/** Comment ids are positive int4s on both backends (PostgreSQL's column): any other number names no comment. */
const isCommentId = (id: number): boolean => Number.isInteger(id) && id >= 1 && id <= 2 ** 31 - 1

/** A comment is deleted by its author, the article's author, or the operator. */
const mayDeleteComment = (actor: Actor, comment: { author_id: number }, article: { author_id: number }): boolean =>
  isAdminOr(actor, comment.author_id, article.author_id)

function* article(sql: CommentWriteSql, slug: string): Steps<{ id: number; author_id: number }> {
  const a = yield* wait(sql.article(slug))
  if (!a) throw notFound('article')
  return a
}

/** A comment as a deletion finds it: its author, and its article's id and author. */
interface Found {
  author_id: number
  article: { id: number; author_id: number }
}

/** Deletes comment `id`, found as `c` (null: unknown), if the actor may. */
function* removeFound(sql: CommentWriteSql, changed: Changed, actor: Actor, id: number, c: Found | null): Steps<void> {
  if (!c) throw notFound('comment')
  if (!mayDeleteComment(actor, c, c.article)) throw forbidden('comment')
  yield* wait(sql.remove(id))
  changed([keys.comments(c.article.id)])
}

function* add(sql: CommentWriteSql, changed: Changed, viewerId: number, slug: string, body: string): Steps<CommentRow> {
  const a = yield* article(sql, slug)
  // recorded first: on PostgreSQL the log row travels with the insert
  changed([keys.comments(a.id)])
  return yield* wait(sql.insert(a.id, viewerId, body, Date.now()))
}

function* remove(sql: CommentWriteSql, changed: Changed, actor: Actor, slug: string, id: number): Steps<void> {
  const a = yield* article(sql, slug)
  // an id of another article's comment is as unknown here as a missing one
  const c = isCommentId(id) ? yield* wait(sql.find(id, a.id)) : null
  yield* removeFound(sql, changed, actor, id, c && { ...c, article: a })
}

function* removeById(sql: CommentWriteSql, changed: Changed, actor: Actor, id: number): Steps<{ slug: string }> {
  const c = isCommentId(id) ? yield* wait(sql.withArticle(id)) : null
  yield* removeFound(sql, changed, actor, id, c)
  return { slug: c!.article.slug }
}

/** The writes of comments on either backend: every decision above, the SQL in `writes`' primitives. */
export function commentWrites(writes: Writes<CommentWriteSql>) {
  return {
    /** 404 for an unknown article; returns the new comment. `by`: the viewer whose token allowed it (see Writes.transaction). */
    add: (viewerId: number, slug: string, body: string, by?: Viewer) =>
      writes.transaction((sql, changed) => add(sql, changed, viewerId, slug, body), by),
    /**
     * 404 for an unknown article or a comment of another article; 403 unless
     * the actor is the comment's author, the article's author or ADMIN.
     */
    delete: (actor: Actor, slug: string, id: number) => writes.transaction((sql, changed) => remove(sql, changed, actor, slug, id), actor),
    /**
     * By id alone, as the operator knows it (`conduit admin comments delete`):
     * 404 for an unknown id, the same 403 rule. Answers the article's slug.
     */
    deleteById: (actor: Actor, id: number) => writes.transaction((sql, changed) => removeById(sql, changed, actor, id)),
  }
}
export type CommentWrites = ReturnType<typeof commentWrites>
