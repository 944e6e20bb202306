import type { Database } from 'bun:sqlite'
import { keys } from '../cache/keys.ts'
import type { SqliteChanges } from '../db/sqlite/changes.ts'
import { forbidden, notFound } from '../errors.ts'
import type { CommentRow, CommentStore } from './store.ts'

const COLUMNS = 'c.id, c.created_at, c.updated_at, c.body, c.author_id, u.username, u.bio, u.image'

/** An article's comments with their authors, oldest first. */
export const SQLITE_COMMENTS = `SELECT ${COLUMNS} FROM comments c JOIN users u ON u.id = c.author_id WHERE c.article_id = ? ORDER BY c.created_at, c.id`

export function sqliteComments(db: Database, changes: SqliteChanges): CommentStore {
  const article = db.query<{ id: number; author_id: number }, [string]>('SELECT id, author_id FROM articles WHERE slug = ?')
  const insert = db.query<{ id: number }, { article: number; author: number; body: string; now: number }>(
    `INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
     VALUES (:article, :author, :body, :now, :now) RETURNING id`,
  )
  const one = db.query<CommentRow, [number]>(`SELECT ${COLUMNS} FROM comments c JOIN users u ON u.id = c.author_id WHERE c.id = ?`)
  const all = db.query<CommentRow, [number]>(SQLITE_COMMENTS)
  const owner = db.query<{ author_id: number }, [number, number]>('SELECT author_id FROM comments WHERE id = ? AND article_id = ?')
  const remove = db.query<unknown, [number]>('DELETE FROM comments WHERE id = ?')

  const find = (slug: string) => {
    const a = article.get(slug)
    if (!a) throw notFound('article')
    return a
  }
  return {
    list: (articleId) => all.all(articleId),
    add: (viewer, slug, body) =>
      changes.write((changed) => {
        const a = find(slug)
        const { id } = insert.get({ article: a.id, author: viewer, body, now: Date.now() })!
        changed([keys.comments(a.id)])
        return one.get(id)!
      }),
    delete: (viewer, slug, id) =>
      changes.write((changed) => {
        const a = find(slug)
        // an id of another article's comment is as unknown here as a missing one
        const c = Number.isSafeInteger(id) ? owner.get(id, a.id) : null
        if (!c) throw notFound('comment')
        if (c.author_id !== viewer && a.author_id !== viewer) throw forbidden('comment')
        remove.run(id)
        changed([keys.comments(a.id)])
      }),
  }
}
