import { type Actor, holds, isAdminOr, tokenChecked, type Viewer } from '../auth/actor.ts'
import { userChanged } from '../keys/keys.ts'
import { EVERYTHING } from '../keys/versions.ts'
import { type Changed, type Steps, wait, type Writes } from '../db/steps.ts'
import type { Awaitable } from '../db/types.ts'
import { forbidden, notFound, unauthorized } from '../errors.ts'
import { explainTaken } from './taken.ts'
import type { AccountChanged, DeletedAccount, NewUser, UserChanges, UserRow, UserWriteSql } from './store.ts'
import { usernameKey } from '../names.ts'

/** Only the operator changes another account's password, locks it or deletes it (users change their own through `update`). */
const mayAdminister = (actor: Actor): boolean => isAdminOr(actor)

/** An account that wrote articles or comments, which a deletion without its content refuses to take. */
export class AccountHasContent extends Error {
  constructor(
    readonly username: string,
    readonly articles: number,
    readonly comments: number,
  ) {
    super(`${username} wrote ${articles} articles and ${comments} comments`)
  }
}

/** The operator's target, found by username as profiles are (ignoring ASCII case and Unicode spelling). */
function* administered(sql: UserWriteSql, actor: Actor, username: string): Steps<{ id: number; username: string; locked: boolean }> {
  if (!mayAdminister(actor)) throw forbidden('user')
  const account = yield* wait(sql.account(usernameKey(username)))
  if (!account) throw notFound('user')
  return account
}

function* update(sql: UserWriteSql, changed: Changed, id: number, c: UserChanges, by: Viewer | undefined): Steps<UserRow | null> {
  const before = yield* wait(sql.before(id))
  if (before === null) return null
  // the token checked here, on the row this change locks, not by the transaction (see Writes.transaction):
  // there a weaker lock taken first would have to be raised, and two such raises deadlock
  const viewer = tokenChecked(by)
  if (viewer && !holds(before, viewer.tokenVersion, viewer.tokenId)) throw unauthorized('is invalid')
  const user = yield* wait(sql.update(id, c))
  // a new name changes the lists filtered by the old and the new one
  const renamed = c.usernameKey !== undefined && c.usernameKey !== before.username_key
  changed(userChanged(id, renamed ? { from: before.username_key, to: c.usernameKey! } : undefined))
  return user
}

function* setPassword(sql: UserWriteSql, changed: Changed, actor: Actor, username: string, passwordHash: string): Steps<AccountChanged> {
  const a = yield* administered(sql, actor, username)
  // a new hash moves token_version: tokens issued before stop verifying
  yield* wait(sql.update(a.id, { passwordHash }))
  changed(userChanged(a.id))
  return { id: a.id, username: a.username, changed: true }
}

function* setLocked(sql: UserWriteSql, changed: Changed, actor: Actor, username: string, locked: boolean): Steps<AccountChanged> {
  const a = yield* administered(sql, actor, username)
  if (a.locked === locked) return { id: a.id, username: a.username, changed: false }
  yield* wait(sql.setLockedAt(a.id, locked ? Date.now() : null))
  // Locking revokes the tokens, so the one check every token goes through
  // (its version) refuses them; unlocking does not bring them back.
  if (locked) yield* wait(sql.revokeTokens(a.id))
  // the user's key drops the tokens verified earlier, on every instance
  changed(userChanged(a.id))
  return { id: a.id, username: a.username, changed: true }
}

/**
 * Rows an account's deletion takes per transaction before the account itself. On PostgreSQL the
 * counter triggers update one row (the article count, a common tag, the account) once per row
 * deleted, and N updates of a row in one transaction cost N^2: 50,000 articles took 600 s, every
 * creation waiting on the count meanwhile.
 */
export const DELETE_BATCH = 500

/** What the account holds, checked before anything is deleted: a refusal changes nothing. */
function* contents(sql: UserWriteSql, actor: Actor, username: string, withContent: boolean): Steps<DeletedAccount> {
  const a = yield* administered(sql, actor, username)
  const n = yield* wait(sql.counts(a.id))
  if (!withContent && (n.articles > 0 || n.comments > 0)) throw new AccountHasContent(a.username, n.articles, n.comments)
  const { articles, comments, favorites, followers, following } = n
  return { id: a.id, username: a.username, articles, comments, favorites, follows: followers + following }
}

/** Up to DELETE_BATCH of its articles (with their content) and of its favorites; how many of each. */
function* removeSome(sql: UserWriteSql, changed: Changed, actor: Actor, username: string, withContent: boolean) {
  const a = yield* administered(sql, actor, username)
  const r = yield* wait(sql.removeSome(a.id, withContent, DELETE_BATCH))
  if (r.articles > 0 || r.favorites > 0) changed([EVERYTHING])
  return r
}

function* remove(sql: UserWriteSql, changed: Changed, actor: Actor, username: string, withContent: boolean): Steps<void> {
  // checked again: content written since the first check is refused as it would have been then
  const { id } = yield* contents(sql, actor, username, withContent)
  yield* wait(sql.remove(id))
  // Such a deletion touches any list, article (favorite counts), comment
  // list, profile and viewer: rare enough to drop every cache rather than
  // name each key.
  changed([EVERYTHING])
}

/**
 * What the account holds, checked (a refusal changes nothing); then the account is locked and its
 * tokens refused, in the same transaction: nothing it could write while the steps run (a comment)
 * makes the last step refuse what the first allowed, after favorites were already deleted.
 */
function* lockForRemoval(sql: UserWriteSql, changed: Changed, actor: Actor, username: string, withContent: boolean): Steps<DeletedAccount> {
  const held = yield* contents(sql, actor, username, withContent)
  // as `admin users lock` does (an account locked already has no token left to refuse)
  yield* setLocked(sql, changed, actor, username, true)
  return held
}

/** The account and, in steps of DELETE_BATCH, its articles and favorites first; what it held. */
function* removeAccount(writes: Writes<UserWriteSql>, actor: Actor, username: string, withContent: boolean): Steps<DeletedAccount> {
  const held = yield* wait(writes.transaction((sql, changed) => lockForRemoval(sql, changed, actor, username, withContent)))
  for (;;) {
    const r = yield* wait(writes.transaction((sql, changed) => removeSome(sql, changed, actor, username, withContent)))
    if (r.articles < DELETE_BATCH && r.favorites < DELETE_BATCH) break
  }
  yield* wait(writes.transaction((sql, changed) => remove(sql, changed, actor, username, withContent)))
  return held
}

/**
 * A write that a unique constraint may refuse. Then (its transaction rolled
 * back) the 409 names every taken field, not only the one the database
 * tripped on.
 */
function* unique<T>(writes: Writes<UserWriteSql>, write: () => Awaitable<T>, id: number, email?: string, key?: string): Steps<T> {
  try {
    return yield* wait(write())
  } catch (e) {
    if (!writes.isUniqueViolation(e)) throw e
    throw explainTaken(yield* wait(writes.transaction((sql) => wait(sql.taken(id, email ?? null, key ?? null)))))
  }
}

/**
 * The writes of accounts on either backend: every decision above, the SQL in
 * `writes`' primitives. `create` and `update` answer 409 naming every taken
 * field (the database's unique constraints decide, never a check before the
 * write); `update` records the keys it changed (see src/keys/keys.ts) and
 * answers null for an unknown id.
 */
export function userWrites(writes: Writes<UserWriteSql>) {
  return {
    create: (u: NewUser) =>
      writes.run(unique(writes, () => writes.transaction((sql) => wait(sql.insert(u, Date.now()))), 0, u.email, u.usernameKey)),
    /** `by`: the viewer whose token sent the change, checked on the row the change locks (401 if it ended since). */
    update: (id: number, c: UserChanges, by?: Viewer) =>
      writes.run(unique(writes, () => writes.transaction((sql, changed) => update(sql, changed, id, c, by)), id, c.email, c.usernameKey)),
    /** The operator's (403 for anyone else; 404 for an unknown username): every token issued before is refused. */
    setPassword: (actor: Actor, username: string, hash: string) =>
      writes.transaction((sql, changed) => setPassword(sql, changed, actor, username, hash)),
    /** The operator's: locking refuses the account's logins and every token issued before; unlocking lets it log in again. */
    setLocked: (actor: Actor, username: string, locked: boolean) =>
      writes.transaction((sql, changed) => setLocked(sql, changed, actor, username, locked)),
    /**
     * The operator's: the account with its articles (their comments and favorites
     * too), comments, favorites and follows. Refused (AccountHasContent) when it
     * wrote articles or comments, unless `withContent`.
     */
    delete: (actor: Actor, username: string, withContent: boolean) => writes.run(removeAccount(writes, actor, username, withContent)),
  }
}
export type UserWrites = ReturnType<typeof userWrites>
