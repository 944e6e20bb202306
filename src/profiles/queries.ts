import type { Database } from 'bun:sqlite'
import type { ChangeTracker } from '../db/changes.ts'

export interface ProfileRow {
  id: number
  username: string
  bio: string | null
  image: string | null
  following: number
}

export function profileQueries(db: Database, changes: ChangeTracker) {
  // username compares with the column's NOCASE collation: profiles resolve ignoring ASCII case
  const byUsername = db.query<ProfileRow, { username: string; viewer: number }>(
    `SELECT u.id, u.username, u.bio, u.image,
            EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = u.id) AS following
     FROM users u WHERE u.username = :username`,
  )
  const follow = db.query<unknown, { follower: number; followee: number }>(
    'INSERT OR IGNORE INTO follows (follower_id, followee_id) VALUES (:follower, :followee)',
  )
  const unfollow = db.query<unknown, { follower: number; followee: number }>(
    'DELETE FROM follows WHERE follower_id = :follower AND followee_id = :followee',
  )
  return {
    /** `viewer` 0 is anonymous (no user has id 0). */
    byUsername: (username: string, viewer: number): ProfileRow | null => byUsername.get({ username, viewer }),
    follow(follower: number, followee: number) {
      follow.run({ follower, followee })
      changes.changed()
    },
    unfollow(follower: number, followee: number) {
      unfollow.run({ follower, followee })
      changes.changed()
    },
  }
}
export type ProfileQueries = ReturnType<typeof profileQueries>

export const presentProfile = (p: Omit<ProfileRow, 'id'>) => ({
  username: p.username,
  bio: p.bio,
  image: p.image,
  following: Boolean(p.following),
})
