import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * HS256 JSON Web Tokens, deliberately narrow: the only algorithm accepted is
 * HS256, taken from our own fixed header, so `alg: none` and key-confusion
 * tokens never reach the signature check; signatures are compared in
 * constant time. (A general JWT library accepts far more than we need.)
 */

export interface Claims {
  /** user id */
  sub: number
  /** the user's token_version when issued; a password change bumps it */
  ver: number
  /** the token's own id: the one token a password change keeps (absent in tokens of earlier versions) */
  jti?: string
  iat: number
  exp: number
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
const B64URL = /^[A-Za-z0-9_-]+$/

export function signToken(secret: string, claims: Claims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
  const input = `${HEADER}.${payload}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

/** Returns the claims of a well-formed, correctly signed, unexpired token, else null. */
export function verifyToken(secret: string, token: string, nowSeconds = Date.now() / 1000): Claims | null {
  const parts = token.split('.')
  if (parts.length !== 3) return null
  const [header, payload, signature] = parts as [string, string, string]
  if (!B64URL.test(header) || !B64URL.test(payload) || !B64URL.test(signature)) return null
  if (header !== HEADER && !isHs256Header(header)) return null

  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest()
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  // base64url decoding ignores the spare bits of the last character: only the
  // canonical spelling counts, so each token has exactly one valid form
  if (given.toString('base64url') !== signature) return null

  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (!isClaims(claims) || claims.exp <= nowSeconds) return null
  return claims
}

function isHs256Header(segment: string): boolean {
  try {
    const h = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    return h !== null && typeof h === 'object' && h.alg === 'HS256' && (h.typ === undefined || h.typ === 'JWT')
  } catch {
    return false
  }
}

function isClaims(c: unknown): c is Claims {
  if (c === null || typeof c !== 'object') return false
  const o = c as Record<string, unknown>
  return (
    Number.isSafeInteger(o.sub) &&
    Number.isSafeInteger(o.ver) &&
    typeof o.iat === 'number' &&
    typeof o.exp === 'number' &&
    (o.jti === undefined || typeof o.jti === 'string')
  )
}
