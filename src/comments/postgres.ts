import type { SQL, TransactionSQL } from 'bun'
import { keys } from '../cache/keys.ts'
import type { PgChanges } from '../db/postgres/changes.ts'
import { ms, nameless, read } from '../db/postgres/client.ts'
import { forbidden, notFound } from '../errors.ts'
import type { CommentRow, CommentStore } from './store.ts'

type Raw = Omit<CommentRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string }
const row = (r: Raw): CommentRow => ({ ...r, created_at: ms(r.created_at), updated_at: ms(r.updated_at) })

/** An article's comments with their authors, oldest first ($1 the article id). */
export const PG_COMMENTS = `SELECT c.id, c.created_at, c.updated_at, c.body, c.author_id, u.username, u.bio, u.image
  FROM comments c JOIN users u ON u.id = c.author_id WHERE c.article_id = $1 ORDER BY c.created_at, c.id`

export function postgresComments(sql: SQL, changes: PgChanges): CommentStore {
  /** FOR KEY SHARE: the article stays until this transaction ends (the comment refers to it). */
  const find = async (tx: TransactionSQL, slug: string) => {
    if (nameless(slug)) throw notFound('article')
    const [a] = await tx`SELECT id, author_id FROM articles WHERE slug = ${slug} FOR KEY SHARE`
    if (!a) throw notFound('article')
    return a as { id: number; author_id: number }
  }
  return {
    list: (articleId) =>
      read(async () => {
        return [...(await sql.unsafe(PG_COMMENTS, [articleId]))].map(row)
      }),
    add: (viewer, slug, body) =>
      changes.write(async (tx, changed) => {
        const a = await find(tx, slug)
        const now = Date.now()
        const [c] = await tx`WITH c AS (
            INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
            VALUES (${a.id}, ${viewer}, ${body}, ${now}, ${now}) RETURNING id, created_at, updated_at, body, author_id)
          SELECT c.*, u.username, u.bio, u.image FROM c JOIN users u ON u.id = c.author_id`
        changed([keys.comments(a.id)])
        return row(c)
      }),
    delete: (viewer, slug, id) =>
      changes.write(async (tx, changed) => {
        const a = await find(tx, slug)
        // an id of another article's comment is as unknown here as a missing one
        const [c] =
          Number.isSafeInteger(id) && id <= 2 ** 31 - 1
            ? await tx`SELECT author_id FROM comments WHERE id = ${id} AND article_id = ${a.id} FOR UPDATE`
            : []
        if (!c) throw notFound('comment')
        if (c.author_id !== viewer && a.author_id !== viewer) throw forbidden('comment')
        await tx`DELETE FROM comments WHERE id = ${id}`
        changed([keys.comments(a.id)])
      }),
  }
}
