import { Elysia } from 'elysia'
import { authPlugin, type Tokens } from '../auth/plugin.ts'
import { notFound, unprocessable } from '../errors.ts'
import { errors, tokenAuth } from '../http/schemas.ts'
import { presentProfile, type ProfileQueries } from './queries.ts'
import { ProfileResponse, UsernameParams } from './schemas.ts'

const tags = ['Profile']

/** Profiles and following: GET /profiles/:username, POST and DELETE /profiles/:username/follow. */
export function profileRoutes({ profiles, tokens }: { profiles: ProfileQueries; tokens: Tokens }) {
  const find = (username: string, viewer: number) => {
    const p = profiles.byUsername(username, viewer)
    if (!p) throw notFound('profile')
    return p
  }
  // Both directions are idempotent: following twice or unfollowing a stranger is a 200.
  const setFollowing = (viewer: number, username: string, follow: boolean) => {
    const target = find(username, viewer)
    if (target.id === viewer) throw unprocessable({ profile: ['cannot follow yourself'] })
    if (follow) profiles.follow(viewer, target.id)
    else profiles.unfollow(viewer, target.id)
    return { profile: presentProfile({ ...target, following: follow ? 1 : 0 }) }
  }
  const followResponse = { 200: ProfileResponse, 401: errors[401], 404: errors[404], 422: errors[422] }

  return new Elysia()
    .use(authPlugin(tokens))
    .get(
      '/profiles/:username',
      ({ params, viewer }) => ({ profile: presentProfile(find(params.username, viewer?.id ?? 0)) }),
      {
        optionalAuth: true,
        params: UsernameParams,
        response: { 200: ProfileResponse, 401: errors[401], 404: errors[404] },
        detail: { summary: 'Get a profile', tags, security: [{}, ...tokenAuth] },
      },
    )
    .post('/profiles/:username/follow', ({ params, viewer }) => setFollowing(viewer.id, params.username, true), {
      auth: true,
      params: UsernameParams,
      response: followResponse,
      detail: { summary: 'Follow a user', tags, security: tokenAuth },
    })
    .delete('/profiles/:username/follow', ({ params, viewer }) => setFollowing(viewer.id, params.username, false), {
      auth: true,
      params: UsernameParams,
      response: followResponse,
      detail: { summary: 'Unfollow a user', tags, security: tokenAuth },
    })
}
