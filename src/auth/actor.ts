/**
 * Who calls and who writes. A request with a valid token is made by a
 * Viewer; a write is performed by an Actor, a viewer or ADMIN, the operator
 * at the command line (`conduit admin ...`), who may delete any article or
 * comment. The write policies (each feature's writes.ts) decide what each
 * may do; the routes only ever pass the viewer.
 */

/** The signed-in user a valid token names. */
export interface Viewer {
  id: number
  username: string
  /** the normalised username (what list filters and change keys use: src/names.ts) */
  usernameKey: string
  /** the id of the token that says so (absent in tokens of earlier versions): a password change keeps it working */
  tokenId?: string
  /** the user's token version the token carries: checked again where its write commits (`holds`) */
  tokenVersion?: number
}

/** The operator: no user, no id. */
export const ADMIN: unique symbol = Symbol('admin')

export type Actor = Viewer | typeof ADMIN

/** What a user's row says of its tokens: the version they must carry, and the one a password change kept (`<id>:<version>`). */
export interface TokenState {
  token_version: number
  kept_token: string | null
}

/**
 * Whether a token (its version, its id) still holds for its user: the user
 * exists, and the token carries its version or is the one the last password
 * change kept.
 */
export const holds = (user: TokenState | null | undefined, version: number, id: string | undefined): boolean =>
  !!user && (user.token_version === version || (id !== undefined && `${id}:${user.token_version}` === user.kept_token))

/** The viewer whose token a write checks again where it commits (see Writes.transaction): none for ADMIN. */
export const tokenChecked = (by: Actor | undefined): (Viewer & { tokenVersion: number }) | undefined =>
  by === undefined || by === ADMIN || by.tokenVersion === undefined ? undefined : (by as Viewer & { tokenVersion: number })

/** Whether the actor is the operator or the user with one of these ids. */
export const isAdminOr = (actor: Actor, ...ids: number[]): boolean => actor === ADMIN || ids.includes(actor.id)
