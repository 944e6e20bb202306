import type { Viewer } from '../auth/actor.ts'
import { keys } from '../keys/keys.ts'
import { type Changed, type Steps, wait, type Writes } from '../db/steps.ts'
import { notFound, unprocessable } from '../errors.ts'
import type { ProfileWriteSql } from './store.ts'

function* setFollowing(sql: ProfileWriteSql, changed: Changed, follower: number, followee: number, on: boolean): Steps<void> {
  // both directions: following or unfollowing oneself is refused, never a silent 200
  if (follower === followee) throw unprocessable({ profile: ['cannot follow yourself'] })
  // the follower's `following` flags and feed; the followee sees nothing of it
  const set = yield* wait(sql.setFollowing(follower, followee, on))
  // deleted since the route found it: the answer of a moment later
  if (set === null) throw notFound('profile')
  if (set) changed([keys.viewer(follower)])
}

/** The write of follows on either backend: the rule and the change key decided above, the SQL in `writes`' primitive. */
export function profileWrites(writes: Writes<ProfileWriteSql>) {
  return {
    /** Idempotent either way; records the follower's relations as changed when a row really changed. `by`: see Writes.transaction. */
    setFollowing: (follower: number, followee: number, on: boolean, by?: Viewer) =>
      writes.transaction((sql, changed) => setFollowing(sql, changed, follower, followee, on), by),
  }
}
export type ProfileWrites = ReturnType<typeof profileWrites>
