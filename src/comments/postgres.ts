import type { SQL, TransactionSQL } from 'bun'
import { ms, nameless, read } from '../db/postgres/client.ts'
import type { CommentReadSql, CommentRow, CommentWriteSql } from './store.ts'

type Raw = Omit<CommentRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string }
const row = (r: Raw): CommentRow => ({ ...r, created_at: ms(r.created_at), updated_at: ms(r.updated_at) })

/** An article's comments with their authors, oldest first ($1 the article id). */
export const PG_COMMENTS = `SELECT c.id, c.created_at, c.updated_at, c.body, c.author_id, u.username, u.bio, u.image
  FROM comments c JOIN users u ON u.id = c.author_id WHERE c.article_id = $1 ORDER BY c.created_at, c.id`

/** The read of comments on PostgreSQL. */
export function postgresCommentReads(sql: SQL): CommentReadSql {
  return { list: (articleId) => read(async () => [...(await sql.unsafe(PG_COMMENTS, [articleId]))].map(row)) }
}

/** The SQL of comment writes on PostgreSQL, over one transaction. */
export function postgresCommentSql(tx: TransactionSQL): CommentWriteSql {
  return {
    async article(slug) {
      if (nameless(slug)) return null
      // FOR KEY SHARE: the article stays until this transaction ends (the comment refers to it)
      const [a] = await tx`SELECT id, author_id FROM articles WHERE slug = ${slug} FOR KEY SHARE`
      return (a as { id: number; author_id: number } | undefined) ?? null
    },
    async insert(article, author, body, now) {
      const [c] = await tx`WITH c AS (
          INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
          VALUES (${article}, ${author}, ${body}, ${now}, ${now}) RETURNING id, created_at, updated_at, body, author_id)
        SELECT c.*, u.username, u.bio, u.image FROM c JOIN users u ON u.id = c.author_id`
      return row(c)
    },
    async find(id, article) {
      const [c] = await tx`SELECT author_id FROM comments WHERE id = ${id} AND article_id = ${article} FOR UPDATE`
      return (c as { author_id: number } | undefined) ?? null
    },
    async withArticle(id) {
      // the comment FOR UPDATE (as find), its article FOR KEY SHARE (as article): both stay until this transaction ends
      const [c] = await tx`SELECT c.author_id, c.article_id, a.author_id AS article_author_id, a.slug
        FROM comments c JOIN articles a ON a.id = c.article_id WHERE c.id = ${id}
        FOR UPDATE OF c FOR KEY SHARE OF a`
      return c ? { author_id: c.author_id, article: { id: c.article_id, author_id: c.article_author_id, slug: c.slug } } : null
    },
    remove: async (id) => void (await tx`DELETE FROM comments WHERE id = ${id}`),
  }
}
