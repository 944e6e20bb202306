import { randomBytes } from 'node:crypto'
import { Elysia } from 'elysia'
import type { Caches } from '../cache/caches.ts'
import { keys } from '../keys/keys.ts'
import { unauthorized } from '../errors.ts'
import type { UserStore } from '../users/store.ts'
import { usernameKey } from '../names.ts'
import { type Claims, signToken, verifyToken } from './jwt.ts'

/** Who is calling: the user a valid token names. */
export interface Viewer {
  id: number
  username: string
  /** the normalised username (what list filters and change keys use) */
  usernameKey: string
  /** the id of the token that says so (absent in tokens of earlier versions): a password change keeps it working */
  tokenId?: string
}

export interface Tokens {
  issue(user: { id: number; token_version: number }): string
  /** `undefined` header: anonymous. A present but unusable header: 401, also on optional routes. */
  authenticate(header: string | undefined): Promise<Viewer | null>
  /**
   * Without any work: 0 for no header, the user id for a token verified
   * earlier and still valid, undefined when it would take a full check.
   */
  verified(header: string | undefined): number | undefined
}

const SCHEME = /^(?:Token|Bearer) +(\S+)\s*$/i
/** Longer than any token this service issues (about 200 characters): refused before any work. */
const MAX_TOKEN_LENGTH = 1024

/**
 * Tokens: HS256 JWTs carrying the user id, the user's token version and an
 * id of their own (the one token a password change keeps working).
 * Verified tokens are cached by the token itself (not the header, whose
 * spacing and scheme case vary) until their expiry or a change to their user
 * (a password change revokes tokens: see src/keys/keys.ts).
 */
export function tokens(secret: string, ttlSeconds: number, users: UserStore, caches: Caches): Tokens {
  const tokenOf = (header: string) => {
    const token = SCHEME.exec(header)?.[1]
    return token !== undefined && token.length <= MAX_TOKEN_LENGTH ? token : undefined
  }
  const fresh = (token: string) => {
    const v = caches.tokens.get(token)
    return v && v.exp > Date.now() / 1000 ? v : undefined
  }
  return {
    verified(header) {
      if (header === undefined) return 0
      const token = tokenOf(header)
      return token === undefined ? undefined : fresh(token)?.id
    },
    issue(user) {
      const iat = Math.floor(Date.now() / 1000)
      const claims: Claims = {
        sub: user.id,
        ver: user.token_version,
        iat,
        exp: iat + ttlSeconds,
        jti: randomBytes(12).toString('base64url'),
      }
      return signToken(secret, claims)
    },
    async authenticate(header) {
      if (header === undefined) return null
      const token = tokenOf(header)
      if (token === undefined) throw unauthorized('is invalid')
      const known = fresh(token)
      if (known) return { id: known.id, username: known.username, usernameKey: known.usernameKey, tokenId: known.tokenId }
      const claims = verifyToken(secret, token)
      if (!claims) throw unauthorized('is invalid')
      const at = caches.versions.clock
      const user = await users.byId(claims.sub)
      // a deleted user, or a token issued before the last password change other than the one that made it
      if (!user || (user.token_version !== claims.ver && (claims.jti === undefined || claims.jti !== user.kept_token)))
        throw unauthorized('is invalid')
      const viewer = { id: user.id, username: user.username, usernameKey: usernameKey(user.username), tokenId: claims.jti }
      caches.tokens.set(token, { value: { ...viewer, exp: claims.exp }, deps: [keys.user(user.id)] }, at)
      return viewer
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
  const check = async (request: Request, required: boolean) => {
    const viewer = await t.authenticate(request.headers.get('authorization') ?? undefined)
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
