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
}

/** The operator: no user, no id. */
export const ADMIN: unique symbol = Symbol('admin')

export type Actor = Viewer | typeof ADMIN

/** Whether the actor is the operator or the user with one of these ids. */
export const isAdminOr = (actor: Actor, ...ids: number[]): boolean => actor === ADMIN || ids.includes(actor.id)
