import type { Caches } from '../cache/caches.ts'
import { perBackend, type Store } from '../db/store.ts'
import { postgresProfileReads, postgresProfileSql } from './postgres.ts'
import { profileReads } from './reads.ts'
import { profileRoutes } from './routes.ts'
import { sqliteProfileReads, sqliteProfileSql } from './sqlite.ts'
import { profileWrites } from './writes.ts'

/** Profiles and following on the store's backend: their SQL reads and writes (the policy of writes.ts). */
export function profilesOn(store: Store) {
  return perBackend(store.connection, {
    sqlite: (c) => ({ sql: sqliteProfileReads(c.db), writes: profileWrites(c.writes(sqliteProfileSql(c.db))) }),
    postgres: (c) => ({ sql: postgresProfileReads(c.sql), writes: profileWrites(c.writes(postgresProfileSql)) }),
  })
}

/**
 * Profiles and following. Its cached reads (`reads`) are also what the
 * articles and comments compose their authors and a viewer's flags from.
 */
export function profilesFeature({ store, caches }: { store: Store; caches: Caches }) {
  const { sql, writes } = profilesOn(store)
  const reads = profileReads(sql, caches)
  return { routes: profileRoutes({ writes, reads }), reads, writes }
}
