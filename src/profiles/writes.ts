import { keys } from '../cache/keys.ts'
import { wait, type Writes } from '../db/steps.ts'
import type { ProfileWriteSql, ProfileWrites } from './store.ts'

/** The write of follows on either backend: the change key decided here, the SQL in `writes`' primitive. */
export function profileWrites(writes: Writes<ProfileWriteSql>): ProfileWrites {
  return {
    setFollowing: (follower, followee, on) =>
      writes.transaction(function* (sql, changed) {
        // the follower's `following` flags and feed; the followee sees nothing of it
        if (yield* wait(sql.setFollowing(follower, followee, on))) changed([keys.viewer(follower)])
      }),
  }
}
