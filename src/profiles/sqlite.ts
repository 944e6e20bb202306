import type { Database } from 'bun:sqlite'
import type { AuthorRow, ProfileReadSql, ProfileWriteSql, Relations } from './store.ts'

/** The reads of profiles and of a viewer's relations. */
export const SQLITE_PROFILE_READS = {
  byName: 'SELECT id, username, bio, image FROM users WHERE username_key = ?',
  authors: 'SELECT u.id, u.username, u.bio, u.image FROM json_each(?) p CROSS JOIN users u ON u.id = p.value',
  followees: 'SELECT followee_id AS id FROM follows WHERE follower_id = ?',
  favorites: 'SELECT article_id AS id FROM favorites WHERE user_id = ? LIMIT ?',
  favoritedAmong: 'SELECT article_id AS id FROM favorites WHERE user_id = ? AND article_id IN (SELECT value FROM json_each(?))',
} as const

/** The reads of profiles and relations on SQLite. */
export function sqliteProfileReads(db: Database): ProfileReadSql {
  const byName = db.query<AuthorRow, [string]>(SQLITE_PROFILE_READS.byName)
  const authors = db.query<AuthorRow, [string]>(SQLITE_PROFILE_READS.authors)
  const followees = db.query<{ id: number }, [number]>(SQLITE_PROFILE_READS.followees)
  const favorites = db.query<{ id: number }, [number, number]>(SQLITE_PROFILE_READS.favorites)
  const favoritedAmong = db.query<{ id: number }, [number, string]>(SQLITE_PROFILE_READS.favoritedAmong)
  return {
    byName: (key) => byName.get(key),
    authors: (ids) => (ids.length ? authors.all(JSON.stringify(ids)) : []),
    relations: (viewerId, maxFavorites): Relations => ({
      followees: followees.all(viewerId).map((r) => r.id),
      favorites: favorites.all(viewerId, maxFavorites).map((r) => r.id),
    }),
    favoritedAmong: (viewerId, ids) => favoritedAmong.all(viewerId, JSON.stringify(ids)).map((r) => r.id),
  }
}

/** The SQL of follows on SQLite, prepared once. */
export function sqliteProfileSql(db: Database): ProfileWriteSql {
  // (a followee another process deleted since the route found it inserts nothing, where a row would break the foreign key)
  const follow = db.query<unknown, [number, number]>(
    'INSERT OR IGNORE INTO follows (follower_id, followee_id) SELECT ?, id FROM users WHERE id = ?',
  )
  const unfollow = db.query<unknown, [number, number]>('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?')
  const exists = db.query<unknown, [number]>('SELECT 1 FROM users WHERE id = ?')
  return {
    setFollowing: (follower, followee, on) =>
      (on ? follow : unfollow).run(follower, followee).changes > 0 || (exists.get(followee) === null ? null : false),
  }
}
