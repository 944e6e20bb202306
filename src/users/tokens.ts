import { randomBytes } from 'node:crypto'
import type { Caches } from '../cache/caches.ts'
import type { Tokens } from '../http/auth.ts'
import { keys } from '../keys/keys.ts'
import { unauthorized } from '../errors.ts'
import type { UserReadSql } from './store.ts'
import { usernameKey } from '../names.ts'
import { holds } from '../auth/actor.ts'
import { type Claims, signToken, verifyToken } from '../auth/jwt.ts'

/** A token verified once, as the cache keeps it until its expiry or a change to its user. */
interface VerifiedToken {
  id: number
  username: string
  usernameKey: string
  /** the token's id (its \`jti\`), if it has one */
  tokenId?: string
  tokenVersion: number
  /** expiry, seconds since the epoch */
  exp: number
}

const SCHEME = /^(?:Token|Bearer) +(\S+)\s*$/i
/** A header with no token in it (empty, or a scheme alone): what a signed-out client sends as `Token ${''}`; no token. */
const BLANK = /^\s*(?:(?:Token|Bearer)\s*)?$/i
/** Longer than any token this service issues (about 200 characters): refused before any work. */
const MAX_TOKEN_LENGTH = 1024

/**
 * Tokens: HS256 JWTs carrying the user id, the user's token version and an
 * id of their own (the one token a password change keeps working).
 * Verified tokens are cached by the token itself (not the header, whose
 * spacing and scheme case vary) until their expiry or a change to their user
 * (a password change revokes tokens: see src/keys/keys.ts).
 */
export function tokens(secret: string, ttlSeconds: number, users: Pick<UserReadSql, 'byId'>, caches: Caches): Tokens {
  const verifiedTokens = caches.part<string, VerifiedToken>('tokens', () => 96)
  const tokenOf = (header: string) => {
    const token = SCHEME.exec(header)?.[1]
    return token !== undefined && token.length <= MAX_TOKEN_LENGTH ? token : undefined
  }
  const fresh = (token: string) => {
    const v = verifiedTokens.get(token)
    return v && v.exp > Date.now() / 1000 ? v : undefined
  }
  const t: Tokens = {
    verified(header) {
      if (header === undefined) return 0
      const token = tokenOf(header)
      if (token === undefined) return BLANK.test(header) ? 0 : undefined
      return fresh(token)?.id
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
      if (token === undefined) {
        if (BLANK.test(header)) return null
        throw unauthorized('is invalid')
      }
      const known = fresh(token)
      if (known)
        return {
          id: known.id,
          username: known.username,
          usernameKey: known.usernameKey,
          tokenId: known.tokenId,
          tokenVersion: known.tokenVersion,
        }
      const claims = verifyToken(secret, token)
      if (!claims) throw unauthorized('is invalid')
      const at = caches.versions.clock
      const user = await users.byId(claims.sub)
      // a deleted user, or a token issued before the last password change other than the one that made it
      // (kept for the version that change made only: store.ts)
      if (!user || !holds(user, claims.ver, claims.jti)) throw unauthorized('is invalid')
      const viewer = {
        id: user.id,
        username: user.username,
        usernameKey: usernameKey(user.username),
        tokenId: claims.jti,
        tokenVersion: claims.ver,
      }
      verifiedTokens.set(token, { value: { ...viewer, exp: claims.exp }, deps: [keys.user(user.id)] }, at)
      return viewer
    },
    recheck(header) {
      const token = header === undefined ? undefined : tokenOf(header)
      if (token !== undefined) verifiedTokens.delete(token)
      return t.authenticate(header)
    },
  }
  return t
}
