import type { SQL } from 'bun'
import { postgresLists } from '../../articles/list-postgres.ts'
import { postgresArticleReads, postgresArticleSql } from '../../articles/postgres.ts'
import { articleWrites } from '../../articles/writes.ts'
import { postgresThrottle } from '../../users/throttle-postgres.ts'
import { MAX_THROTTLE_ROWS } from '../../users/throttle.ts'
import { postgresCommentReads, postgresCommentSql } from '../../comments/postgres.ts'
import { commentWrites } from '../../comments/writes.ts'
import { postgresProfileReads, postgresProfileSql } from '../../profiles/postgres.ts'
import { profileWrites } from '../../profiles/writes.ts'
import { postgresTags } from '../../tags/postgres.ts'
import { postgresUserReads, postgresUserSql } from '../../users/postgres.ts'
import { userWrites } from '../../users/writes.ts'
import type { Store } from '../store.ts'
import { DatabaseUnavailable } from '../types.ts'
import { postgresBulk } from '../bulk.ts'
import { PgChanges } from './changes.ts'
import { type ClientOptions, connect, isUnavailable, read } from './client.ts'
import { migrate, schemaVersion } from './migrate.ts'
import { postgresWrites } from './writes.ts'

export interface PostgresOptions extends ClientOptions {
  /** where the data lives, safe to log (the URL without its password) */
  location: string
  /** only this process uses the database: skip the per-request change-log read (see PgChanges) */
  singleInstance?: boolean
}

export interface PostgresStore extends Store {
  readonly sql: SQL
}

/** The whole store on PostgreSQL (see connect for TLS and the pool). */
export function postgresStore(sql: SQL, o: PostgresOptions): PostgresStore {
  const changes = new PgChanges(sql, o.singleInstance ?? false)
  const throttle = postgresThrottle(sql)
  return {
    backend: 'postgres',
    location: o.location,
    sql,
    // reads are the backend's SQL; writes are the features' policies over the backend's statements
    users: { ...postgresUserReads(sql), ...userWrites(postgresWrites(changes, postgresUserSql)) },
    profiles: { ...postgresProfileReads(sql), ...profileWrites(postgresWrites(changes, postgresProfileSql)) },
    articles: { ...postgresArticleReads(sql), ...articleWrites(postgresWrites(changes, postgresArticleSql)) },
    lists: postgresLists(sql),
    comments: { ...postgresCommentReads(sql), ...commentWrites(postgresWrites(changes, postgresCommentSql)) },
    tags: postgresTags(sql),
    throttle,
    changes,
    bulk: postgresBulk(sql, changes),
    secret: (generated) =>
      read(async () => {
        // ON CONFLICT DO NOTHING: instances starting at once agree on the first secret written
        await sql`INSERT INTO settings (key, value) VALUES ('jwt_secret', ${generated}) ON CONFLICT (key) DO NOTHING`
        const [row] = await sql`SELECT value FROM settings WHERE key = 'jwt_secret'`
        return row.value as string
      }),
    schemaVersion: () => read(() => schemaVersion(sql)),
    async ping() {
      try {
        await read(() => sql`SELECT 1`)
        return true
      } catch {
        return false
      }
    },
    async maintain() {
      const now = Date.now()
      await changes.purge(now)
      await throttle.purge(now, MAX_THROTTLE_ROWS)
      // last: a role that may not vacuum the log still purges both
      await changes.tidy()
    },
    startUpkeep: () => undefined,
    async close() {
      await sql.close({ timeout: 2 })
    },
  }
}

/** Connects, migrates (under an advisory lock) and returns the store. Unreachable: one clear error. */
export async function openPostgres(url: string, o: PostgresOptions): Promise<{ store: PostgresStore; applied: number[] }> {
  const sql = connect(url, o)
  try {
    const applied = await migrate(sql)
    return { store: postgresStore(sql, o), applied }
  } catch (e) {
    await sql.close({ timeout: 1 }).catch(() => {})
    if (isUnavailable(e)) throw new DatabaseUnavailable(e)
    throw e
  }
}
