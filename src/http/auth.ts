import { Elysia } from 'elysia'
import type { Viewer } from '../auth/actor.ts'
import { HttpError, INVALID_TOKEN, unauthorized } from '../errors.ts'

/** Issuing and checking tokens (src/users/tokens.ts): what the auth plugin and the request entry need. */
export interface Tokens {
  issue(user: { id: number; token_version: number }): string
  /** `undefined` header: anonymous. A present but unusable header: 401 (an optional route then answers as to anyone: authPlugin). */
  authenticate(header: string | undefined): Promise<Viewer | null>
  /** As `authenticate`, against the database now: what it verified before is forgotten first. */
  recheck(header: string | undefined): Promise<Viewer | null>
  /**
   * Without any work: 0 for no header (or one without a token), the user id for a token verified
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
 * or `{ optionalAuth: true }` (a viewer or null: an unusable token reads as
 * none, and the answer says so in `WWW-Authenticate`).
 *
 * The token is checked in `transform`, which runs before body validation, so
 * an anonymous request gets its 401 before any 422 about its body; `resolve`
 * then hands the viewer to the handler. A route's own `transform` runs before
 * the plugin's: one that may refuse the body calls `check` first (a request is
 * checked once).
 */
export function authPlugin(t: Tokens) {
  const seen = new WeakMap<Request, Viewer | null>()
  const refused = new WeakSet<Request>()
  const check = async (request: Request, required: boolean) => {
    if (seen.has(request)) return
    let viewer: Viewer | null
    try {
      viewer = await t.authenticate(request.headers.get('authorization') ?? undefined)
    } catch (e) {
      // what anyone may read is not refused for a token that stopped working (expired, revoked):
      // most clients send the one they kept on every request (docs/DECISIONS.md)
      if (required || !(e instanceof HttpError) || e.status !== 401) throw e
      viewer = null
      refused.add(request)
    }
    if (!viewer && required) throw unauthorized('is missing')
    seen.set(request, viewer)
  }
  const plugin = new Elysia().macro({
    auth: {
      transform: ({ request }) => check(request, true),
      resolve: ({ request }) => ({ viewer: seen.get(request) as Viewer }),
    },
    optionalAuth: {
      // said here, before the parameters are validated: their 404 carries it too
      transform: async ({ request, set }) => {
        await check(request, false)
        if (refused.has(request)) (set.headers as Record<string, string>)['www-authenticate'] = INVALID_TOKEN
      },
      resolve: ({ request }) => ({ viewer: seen.get(request) ?? null }),
    },
  })
  return { plugin, check }
}
