/**
 * Who performs a write. A signed-in user is a Writer; ADMIN is the operator
 * at the command line (issue 24: `conduit admin ...`), who may delete any
 * article or comment. The write policies (each feature's writes.ts) decide
 * what each may do; the routes only ever pass the viewer.
 */

/** A signed-in user: the id, and the normalised username the change keys name. */
export interface Writer {
  id: number
  usernameKey: string
}

/** The operator: no user, no id. */
export const ADMIN: unique symbol = Symbol('admin')

export type Actor = Writer | typeof ADMIN

/** Whether the actor is the operator or the user with one of these ids. */
export const isAdminOr = (actor: Actor, ...ids: number[]): boolean => actor === ADMIN || ids.includes(actor.id)
