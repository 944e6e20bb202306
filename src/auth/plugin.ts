import { Elysia } from 'elysia'
import { type ChangeTracker, VersionedCache } from '../db/changes.ts'
import { unauthorized } from '../errors.ts'
import type { UserQueries } from '../users/queries.ts'
import { type Claims, signToken, verifyToken } from './jwt.ts'

/** Who is calling: the user a valid token names. */
export interface Viewer {
  id: number
  username: string
}

export interface Tokens {
  issue(user: { id: number; token_version: number }): string
  /** `undefined` header: anonymous. A present but unusable header: 401, also on optional routes. */
  authenticate(header: string | undefined): Viewer | null
  /**
   * Without any work: 0 for no header, the user id for a token verified
   * earlier and still valid, undefined when it would take a full check.
   */
  verified(header: string | undefined): number | undefined
}

const SCHEME = /^(?:Token|Bearer) +(\S+)\s*$/i

export function tokens(secret: string, ttlSeconds: number, users: UserQueries, changes: ChangeTracker): Tokens {
  // Verified headers, until their expiry or any change to a user (a password
  // change revokes tokens; any user update or foreign commit empties this).
  const verified = new VersionedCache<string, Viewer & { exp: number }>(changes.users, 10_000)
  const fresh = (header: string) => {
    const v = verified.peek(header)
    return v && v.exp > Date.now() / 1000 ? v : undefined
  }
  return {
    verified(header) {
      if (header === undefined) return 0
      return fresh(header)?.id
    },
    issue(user) {
      const iat = Math.floor(Date.now() / 1000)
      const claims: Claims = { sub: user.id, ver: user.token_version, iat, exp: iat + ttlSeconds }
      return signToken(secret, claims)
    },
    authenticate(header) {
      if (header === undefined) return null
      const known = fresh(header)
      if (known) return { id: known.id, username: known.username }
      const token = SCHEME.exec(header)?.[1]
      if (!token) throw unauthorized('is invalid')
      const claims = verifyToken(secret, token)
      if (!claims) throw unauthorized('is invalid')
      const user = users.byId(claims.sub)
      // a deleted user, or a token issued before the last password change
      if (!user || user.token_version !== claims.ver) throw unauthorized('is invalid')
      verified.get(header, () => ({ id: user.id, username: user.username, exp: claims.exp }))
      return { id: user.id, username: user.username }
    },
  }
}

/**
 * The auth plugin: routes opt in with `{ auth: true }` (a viewer is required)
 * or `{ optionalAuth: true }` (a viewer or null).
 *
 * The token is checked in `transform`, which runs before body validation, so
 * an anonymous request gets its 401 before any 422 about its body; `resolve`
 * then hands the viewer to the handler.
 */
export function authPlugin(t: Tokens) {
  const seen = new WeakMap<Request, Viewer | null>()
  const check = (request: Request, required: boolean) => {
    const viewer = t.authenticate(request.headers.get('authorization') ?? undefined)
    if (!viewer && required) throw unauthorized('is missing')
    seen.set(request, viewer)
  }
  return new Elysia().macro({
    auth: {
      transform: ({ request }) => check(request, true),
      resolve: ({ request }) => ({ viewer: seen.get(request) as Viewer }),
    },
    optionalAuth: {
      transform: ({ request }) => check(request, false),
      resolve: ({ request }) => ({ viewer: seen.get(request) ?? null }),
    },
  })
}
