import { Elysia } from 'elysia'
import type { Viewer } from '../auth/actor.ts'
import { unauthorized } from '../errors.ts'

/** Issuing and checking tokens (src/users/tokens.ts): what the auth plugin and the request entry need. */
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

/**
 * Requests the web app sends for a session whose cookie it then replaces with
 * the answer's token: a password change sent by one keeps no older token
 * working (src/users/routes.ts), not even the cookie's. Marked in process: no
 * header can claim it.
 */
const replacingSession = new WeakSet<Request>()
export const replacesSession = (request: Request): boolean => replacingSession.has(request)
export const markReplacingSession = (request: Request): void => void replacingSession.add(request)

/**
 * The auth plugin: routes opt in with `{ auth: true }` (a viewer is required)
 * or `{ optionalAuth: true }` (a viewer or null).
 *
 * The token is checked in `transform`, which runs before body validation, so
 * an anonymous request gets its 401 before any 422 about its body; `resolve`
 * then hands the viewer to the handler. A route's own `transform` runs before
 * the plugin's: one that may refuse the body calls `check` first (a request is
 * checked once).
 */
export function authPlugin(t: Tokens) {
  const seen = new WeakMap<Request, Viewer | null>()
  const check = async (request: Request, required: boolean) => {
    if (seen.has(request)) return
    const viewer = await t.authenticate(request.headers.get('authorization') ?? undefined)
    if (!viewer && required) throw unauthorized('is missing')
    seen.set(request, viewer)
  }
  const plugin = new Elysia().macro({
    auth: {
      transform: ({ request }) => check(request, true),
      resolve: ({ request }) => ({ viewer: seen.get(request) as Viewer }),
    },
    optionalAuth: {
      transform: ({ request }) => check(request, false),
      resolve: ({ request }) => ({ viewer: seen.get(request) ?? null }),
    },
  })
  return { plugin, check }
}
