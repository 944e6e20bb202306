import type { Database } from 'bun:sqlite'
import { keys } from '../cache/keys.ts'
import type { SqliteChanges } from '../db/sqlite/changes.ts'
import { type AuthorRow, MAX_LOADED_FAVORITES, type ProfileStore, type Relations } from './store.ts'

export function sqliteProfiles(db: Database, changes: SqliteChanges): ProfileStore {
  const byName = db.query<AuthorRow, [string]>('SELECT id, username, bio, image FROM users WHERE username_key = ?')
  const authors = db.query<AuthorRow, [string]>(
    'SELECT id, username, bio, image FROM users WHERE id IN (SELECT value FROM json_each(?))',
  )
  const follow = db.query<unknown, [number, number]>('INSERT OR IGNORE INTO follows (follower_id, followee_id) VALUES (?, ?)')
  const unfollow = db.query<unknown, [number, number]>('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?')
  const followees = db.query<{ id: number }, [number]>('SELECT followee_id AS id FROM follows WHERE follower_id = ?')
  const favorites = db.query<{ id: number }, [number, number]>(
    'SELECT article_id AS id FROM favorites WHERE user_id = ? LIMIT ?',
  )
  const favoritedAmong = db.query<{ id: number }, [number, string]>(
    'SELECT article_id AS id FROM favorites WHERE user_id = ? AND article_id IN (SELECT value FROM json_each(?))',
  )
  return {
    byName: (key) => byName.get(key),
    authors: (ids) => (ids.length ? authors.all(JSON.stringify(ids)) : []),
    setFollowing(follower, followee, on) {
      changes.write((changed) => {
        const { changes: n } = (on ? follow : unfollow).run(follower, followee)
        if (n) changed([keys.viewer(follower)])
      })
    },
    relations(viewer): Relations {
      const fav = favorites.all(viewer, MAX_LOADED_FAVORITES + 1).map((r) => r.id)
      return {
        followees: followees.all(viewer).map((r) => r.id),
        favorites: fav.length > MAX_LOADED_FAVORITES ? null : fav,
      }
    },
    favoritedAmong: (viewer, ids) => favoritedAmong.all(viewer, JSON.stringify(ids)).map((r) => r.id),
  }
}
