import type { SQL, TransactionSQL } from 'bun'
import { intArray, nameless, read } from '../db/postgres/client.ts'
import type { AuthorRow, ProfileReadSql, ProfileWriteSql } from './store.ts'

/** The reads of profiles and of a viewer's relations. */
export const PG_PROFILE_READS = {
  byName: 'SELECT id, username, bio, image FROM users WHERE username_key = $1',
  authors: 'SELECT id, username, bio, image FROM users WHERE id = ANY ($1::int[])',
  relations: `SELECT ARRAY(SELECT followee_id FROM follows WHERE follower_id = $1) AS followees,
      ARRAY(SELECT article_id FROM favorites WHERE user_id = $1 LIMIT $2) AS favorites`,
  favoritedAmong: 'SELECT article_id AS id FROM favorites WHERE user_id = $1 AND article_id = ANY ($2::int[])',
} as const

/** The reads of profiles and relations on PostgreSQL. */
export function postgresProfileReads(sql: SQL): ProfileReadSql {
  return {
    byName: (key) =>
      read(async () => {
        if (nameless(key)) return null
        const [row] = await sql.unsafe(PG_PROFILE_READS.byName, [key])
        return (row as AuthorRow | undefined) ?? null
      }),
    authors: (ids) => (ids.length ? read(async () => [...(await sql.unsafe(PG_PROFILE_READS.authors, [[...ids]]))] as AuthorRow[]) : []),
    relations: (viewerId, maxFavorites) =>
      read(async () => {
        const [row] = await sql.unsafe(PG_PROFILE_READS.relations, [viewerId, maxFavorites])
        return { followees: intArray(row.followees), favorites: intArray(row.favorites) }
      }),
    favoritedAmong: (viewerId, ids) =>
      read(async () => {
        const rows = await sql.unsafe(PG_PROFILE_READS.favoritedAmong, [viewerId, [...ids]])
        return [...rows].map((r: { id: number }) => r.id)
      }),
  }
}

/** The SQL of follows on PostgreSQL, over one transaction. */
export function postgresProfileSql(tx: TransactionSQL): ProfileWriteSql {
  return {
    async setFollowing(follower, followee, on) {
      // FOR KEY SHARE: a deletion of the followee under way is waited for, and then finds no row (null)
      const [r] = on
        ? await tx`WITH e AS (SELECT id FROM users WHERE id = ${followee} FOR KEY SHARE),
              f AS (INSERT INTO follows (follower_id, followee_id) SELECT ${follower}, id FROM e ON CONFLICT DO NOTHING RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM e) AS found, EXISTS (SELECT 1 FROM f) AS changed`
        : await tx`WITH e AS (SELECT id FROM users WHERE id = ${followee} FOR KEY SHARE),
              f AS (DELETE FROM follows WHERE follower_id = ${follower} AND followee_id = (SELECT id FROM e) RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM e) AS found, EXISTS (SELECT 1 FROM f) AS changed`
      return r.found ? r.changed : null
    },
  }
}
