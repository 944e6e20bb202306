import type { Caches } from '../cache/caches.ts'
import { perBackend, type Store } from '../db/store.ts'
import { postgresTags } from './postgres.ts'
import { tagRoutes, tagsJson } from './routes.ts'
import { sqliteTags } from './sqlite.ts'

/** The tags in use (GET /api/tags); `mostUsed(n)`, the first n of them, kept apart. */
export function tagsFeature({ store, caches }: { store: Store; caches: Caches }) {
  const sql = perBackend(store.connection, { sqlite: (c) => sqliteTags(c.db), postgres: (c) => postgresTags(c.sql) })
  const popular = tagsJson(sql, caches.versions)
  return { routes: tagRoutes(popular), reads: { popular, mostUsed: (n: number) => tagsJson(sql, caches.versions, n) } }
}
