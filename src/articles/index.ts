import type { Caches } from '../cache/caches.ts'
import { perBackend, type Store } from '../db/store.ts'
import type { ProfileReads } from '../profiles/reads.ts'
import { postgresListStore } from './list-postgres.ts'
import { sqliteListStore } from './list-sqlite.ts'
import { postgresArticleReads, postgresArticleSql } from './postgres.ts'
import { articleReads } from './reads.ts'
import { articleRoutes } from './routes.ts'
import { SlowLane } from './slow-lane.ts'
import { sqliteArticleReads, sqliteArticleSql } from './sqlite.ts'
import { articleWrites } from './writes.ts'

/**
 * Articles on the store's backend: their SQL reads, their list pages, and
 * their writes (the policies of writes.ts). On a SQLite file, pages that may
 * read many rows go to a worker thread of their own (the slow lane), closed
 * with the store.
 */
export function articlesOn(store: Store) {
  return perBackend(store.connection, {
    sqlite: (c) => {
      // an in-memory database has no file a second connection could open
      const slowLane = c.path === ':memory:' ? undefined : new SlowLane(c.path)
      if (slowLane) store.own(slowLane)
      return {
        sql: sqliteArticleReads(c.db),
        lists: sqliteListStore(c.db, slowLane),
        writes: articleWrites(c.writes(sqliteArticleSql(c.db))),
      }
    },
    postgres: (c) => ({
      sql: postgresArticleReads(c.sql),
      lists: postgresListStore(c.sql),
      writes: articleWrites(c.writes(postgresArticleSql)),
    }),
  })
}

/** Articles, their lists, the feed and favorites; `reads` is also what the comments find an article by. */
export function articlesFeature({ store, caches, profiles }: { store: Store; caches: Caches; profiles: ProfileReads }) {
  const { sql, lists, writes } = articlesOn(store)
  const reads = articleReads(sql, lists, caches, profiles)
  return { routes: articleRoutes({ writes, reads }), reads, writes }
}
