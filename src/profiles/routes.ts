import { type Route, reply, route } from '../http/route.ts'
import { profileHead, profileJson } from './present.ts'
import type { ProfileReads } from './reads.ts'
import { ProfileResponse, UsernameParams } from './schemas.ts'
import type { ProfileWrites } from './writes.ts'

interface Deps {
  writes: ProfileWrites
  reads: ProfileReads
}

/** Profiles and following: GET /profiles/:username, POST and DELETE /profiles/:username/follow. */
export function profileRoutes({ writes, reads }: Deps): Route[] {
  const tag = 'Profile'
  // Both directions are idempotent: following twice or unfollowing a stranger is a 200.
  const following = (follow: boolean, summary: string) =>
    route({
      method: follow ? 'POST' : 'DELETE',
      path: '/profiles/:username/follow',
      operationId: follow ? 'FollowUserByUsername' : 'UnfollowUserByUsername',
      auth: 'required',
      params: UsernameParams,
      ok: { status: 200, schema: ProfileResponse },
      errors: [400, 401, 404, 413, 415, 422],
      summary,
      tag,
      handle: async ({ params, viewer }) => {
        const target = await reads.byName(params.username)
        await writes.setFollowing(viewer.id, target.id, follow, viewer)
        return reply(`{"profile":${profileJson(profileHead(target), follow)}}`)
      },
    })

  return [
    route({
      method: 'GET',
      path: '/profiles/:username',
      operationId: 'GetProfileByUsername',
      auth: 'optional',
      params: UsernameParams,
      ok: { status: 200, schema: ProfileResponse },
      errors: [404],
      summary: 'Get a profile',
      tag,
      read: {
        cached: ({ params }, viewerId) => reads.cachedProfile(params.username, viewerId),
        build: ({ params }, viewerId) => reads.profile(params.username, viewerId),
      },
    }),
    following(true, 'Follow a user'),
    following(false, 'Unfollow a user'),
  ]
}
