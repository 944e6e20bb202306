import { Elysia } from 'elysia'
import { authPlugin, type Tokens } from '../auth/plugin.ts'
import { unprocessable } from '../errors.ts'
import { rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import { errors, tokenAuth } from '../http/schemas.ts'
import { profileHead, profileJson } from './present.ts'
import type { ProfileReads } from './reads.ts'
import { ProfileResponse, UsernameParams } from './schemas.ts'
import type { ProfileStore } from './store.ts'

const tags = ['Profile']

interface Deps {
  profiles: ProfileStore
  reads: ProfileReads
  tokens: Tokens
  responses: ResponseCache
}

/** Profiles and following: GET /profiles/:username, POST and DELETE /profiles/:username/follow. */
export function profileRoutes({ profiles, reads, tokens, responses }: Deps) {
  // Both directions are idempotent: following twice or unfollowing a stranger is a 200.
  const setFollowing = async (viewer: number, username: string, follow: boolean, set: { headers: unknown }) => {
    const target = await reads.byName(username)
    if (target.id === viewer) throw unprocessable({ profile: ['cannot follow yourself'] })
    await profiles.setFollowing(viewer, target.id, follow)
    return rawJson(`{"profile":${profileJson(profileHead(target), follow)}}`, set)
  }
  const followResponse = { 200: ProfileResponse, 401: errors[401], 404: errors[404], 422: errors[422] }

  return new Elysia()
    .use(authPlugin(tokens))
    .get(
      '/profiles/:username',
      async ({ params, viewer, set, request }) =>
        rawJson(await responses.body(viewer, request.url, NO_PARAMS, (id) => reads.profile(params.username, id)), set),
      {
        optionalAuth: true,
        params: UsernameParams,
        response: { 200: ProfileResponse, 401: errors[401], 404: errors[404] },
        detail: { summary: 'Get a profile', tags, security: [{}, ...tokenAuth] },
      },
    )
    .post('/profiles/:username/follow', ({ params, viewer, set }) => setFollowing(viewer.id, params.username, true, set), {
      auth: true,
      params: UsernameParams,
      response: followResponse,
      detail: { summary: 'Follow a user', tags, security: tokenAuth },
    })
    .delete('/profiles/:username/follow', ({ params, viewer, set }) => setFollowing(viewer.id, params.username, false, set), {
      auth: true,
      params: UsernameParams,
      response: followResponse,
      detail: { summary: 'Unfollow a user', tags, security: tokenAuth },
    })
}
