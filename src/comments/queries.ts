import type { Database } from 'bun:sqlite'
import type { ChangeTracker } from '../db/changes.ts'
import { isoTime, profileJson } from './json.ts'
import { forbidden, notFound } from '../errors.ts'

const COMMENT_JSON = `json_object('id', c.id, 'createdAt', ${isoTime('c.created_at')}, 'updatedAt', ${isoTime(
  'c.updated_at',
)}, 'body', c.body, 'author', ${profileJson('u')})`

export function commentQueries(db: Database, changes: ChangeTracker) {
  const articleId = db.query<{ id: number; author_id: number }, [string]>('SELECT id, author_id FROM articles WHERE slug = ?')
  const insert = db.query<{ id: number }, { article: number; author: number; body: string; now: number }>(
    `INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
     VALUES (:article, :author, :body, :now, :now) RETURNING id`,
  )
  const one = db.query<{ json: string }, { id: number; viewer: number }>(
    `SELECT ${COMMENT_JSON} AS json FROM comments c JOIN users u ON u.id = c.author_id WHERE c.id = :id`,
  )
  const all = db.query<{ json: string }, { article: number; viewer: number }>(
    `SELECT coalesce(json_group_array(json(j) ORDER BY created_at, id), '[]') AS json FROM (
       SELECT c.id, c.created_at, ${COMMENT_JSON} AS j
       FROM comments c JOIN users u ON u.id = c.author_id WHERE c.article_id = :article)`,
  )
  const owner = db.query<{ author_id: number }, { id: number; article: number }>(
    'SELECT author_id FROM comments WHERE id = :id AND article_id = :article',
  )
  const remove = db.query<unknown, [number]>('DELETE FROM comments WHERE id = ?')

  const article = (slug: string) => {
    const a = articleId.get(slug)
    if (!a) throw notFound('article')
    return a
  }

  const destroy = db.transaction((viewer: number, slug: string, id: number) => {
    const a = article(slug)
    // an id of another article's comment is as unknown here as a missing one
    const c = Number.isSafeInteger(id) ? owner.get({ id, article: a.id }) : null
    if (!c) throw notFound('comment')
    if (c.author_id !== viewer && a.author_id !== viewer) throw forbidden('comment')
    remove.run(id)
  })

  return {
    /** Adds a comment; returns it as JSON. */
    add(viewer: number, slug: string, body: string): string {
      const { id } = insert.get({ article: article(slug).id, author: viewer, body, now: Date.now() })!
      changes.changed()
      return one.get({ id, viewer })!.json
    },
    /** All comments of an article as a JSON array, oldest first. */
    list: (slug: string, viewer: number): string => all.get({ article: article(slug).id, viewer })!.json,
    /** The comment's author or the article's author may delete it. */
    delete(viewer: number, slug: string, id: number): void {
      destroy.immediate(viewer, slug, id)
      changes.changed()
    },
  }
}
export type CommentQueries = ReturnType<typeof commentQueries>
