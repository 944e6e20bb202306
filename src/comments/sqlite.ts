import type { Database } from 'bun:sqlite'
import type { CommentReadSql, CommentRow, CommentWriteSql } from './store.ts'

const COLUMNS = 'c.id, c.created_at, c.updated_at, c.body, c.author_id, u.username, u.bio, u.image'

/** An article's comments with their authors, oldest first. */
export const SQLITE_COMMENTS = `SELECT ${COLUMNS} FROM comments c JOIN users u ON u.id = c.author_id WHERE c.article_id = ? ORDER BY c.created_at, c.id`

/** The read of comments on SQLite. */
export function sqliteCommentReads(db: Database): CommentReadSql {
  const all = db.query<CommentRow, [number]>(SQLITE_COMMENTS)
  return { list: (articleId) => all.all(articleId) }
}

/** The SQL of comment writes on SQLite, prepared once (the transaction holds the write lock: no row locks). */
export function sqliteCommentSql(db: Database): CommentWriteSql {
  const article = db.query<{ id: number; author_id: number }, [string]>('SELECT id, author_id FROM articles WHERE slug = ?')
  const insert = db.query<{ id: number }, { article: number; author: number; body: string; now: number }>(
    `INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
     VALUES (:article, :author, :body, :now, :now) RETURNING id`,
  )
  const one = db.query<CommentRow, [number]>(`SELECT ${COLUMNS} FROM comments c JOIN users u ON u.id = c.author_id WHERE c.id = ?`)
  const owner = db.query<{ author_id: number }, [number, number]>('SELECT author_id FROM comments WHERE id = ? AND article_id = ?')
  const withArticle = db.query<{ author_id: number; article_id: number; article_author_id: number; slug: string }, [number]>(
    `SELECT c.author_id, c.article_id, a.author_id AS article_author_id, a.slug
     FROM comments c JOIN articles a ON a.id = c.article_id WHERE c.id = ?`,
  )
  const remove = db.query<unknown, [number]>('DELETE FROM comments WHERE id = ?')
  return {
    article: (slug) => article.get(slug),
    insert: (article, author, body, now) => one.get(insert.get({ article, author, body, now })!.id)!,
    find: (id, article) => owner.get(id, article),
    withArticle(id) {
      const c = withArticle.get(id)
      return c && { author_id: c.author_id, article: { id: c.article_id, author_id: c.article_author_id, slug: c.slug } }
    },
    remove: (id) => void remove.run(id),
  }
}
