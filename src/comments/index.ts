import type { ArticleReads } from '../articles/reads.ts'
import type { Caches } from '../cache/caches.ts'
import { perBackend, type Store } from '../db/store.ts'
import type { ProfileReads } from '../profiles/reads.ts'
import { postgresCommentReads, postgresCommentSql } from './postgres.ts'
import { commentReads } from './reads.ts'
import { commentRoutes } from './routes.ts'
import { sqliteCommentReads, sqliteCommentSql } from './sqlite.ts'
import { commentWrites } from './writes.ts'

/** Comments on the store's backend: their SQL read and writes (the policies of writes.ts). */
export function commentsOn(store: Store) {
  return perBackend(store.connection, {
    sqlite: (c) => ({ sql: sqliteCommentReads(c.db), writes: commentWrites(c.writes(sqliteCommentSql(c.db))) }),
    postgres: (c) => ({ sql: postgresCommentReads(c.sql), writes: commentWrites(c.writes(postgresCommentSql)) }),
  })
}

interface Deps {
  store: Store
  caches: Caches
  articles: ArticleReads
  profiles: ProfileReads
}

/** An article's comments: listed, added, deleted. */
export function commentsFeature({ store, caches, articles, profiles }: Deps) {
  const { sql, writes } = commentsOn(store)
  const reads = commentReads(sql, caches, articles, profiles)
  return { routes: commentRoutes({ writes, reads }), reads, writes }
}
