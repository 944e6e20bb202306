import type { TokenState } from '../auth/actor.ts'
import type { Awaitable } from '../db/types.ts'

export interface UserRow {
  id: number
  username: string
  email: string
  bio: string | null
  image: string | null
  token_version: number
  /**
   * `<id>:<version>`: the token that changed the password last, and the token_version that change
   * made. It verifies while token_version is that one: any later bump (a change by a build that
   * does not know this column, or by hand) ends it too.
   */
  kept_token: string | null
}
export interface Credentials extends UserRow {
  password_hash: string
  /** an operator locked the account: no login */
  locked: boolean
}
export interface NewUser {
  username: string
  /** `usernameKey(username)`: what uniqueness and lookups use */
  usernameKey: string
  email: string
  passwordHash: string
}
export interface UserChanges {
  username?: string
  usernameKey?: string
  email?: string
  passwordHash?: string
  /** with a new password hash: the id of the token that sent it, which keeps working (null: every token is signed out) */
  keptToken?: string | null
  bio?: string | null
  image?: string | null
}

/** An account as the operator sees it (`conduit admin users list`): never its password hash. */
export interface Account {
  id: number
  username: string
  email: string
  bio: string | null
  image: string | null
  /** milliseconds since the epoch, UTC */
  created_at: number
  /** when an operator locked it, or null */
  locked_at: number | null
}

/** What an account wrote and its relations, as counts. */
export interface AccountCounts {
  articles: number
  /** the comments it wrote (on anyone's articles) */
  comments: number
  /** the articles it favorited */
  favorites: number
  /** who follows it */
  followers: number
  /** whom it follows */
  following: number
}

/** What `account` and `accounts` look for: the search text as usernames and emails are stored (see accounts.ts). */
export interface AccountSearch {
  /** found in the normalised username (`usernameKey`) */
  nameKey: string
  /** found in the (lower-cased) email */
  email: string
}

/** The reads of accounts: SQL per backend (see sqlite.ts, postgres.ts). */
export interface UserReadSql {
  byId(id: number): Awaitable<UserRow | null>
  credentialsByEmail(email: string): Awaitable<Credentials | null>
  /** Accounts newest first, at most `limit`; with `search`, only those whose name or email contains it. */
  accounts(search: AccountSearch | null, limit: number): Awaitable<Account[]>
  /** The account with this normalised username and its counts, or null. */
  account(usernameKey: string): Awaitable<(Account & AccountCounts) | null>
}

/** What an operator's change to an account did (`changed`: false when it was so already). */
export interface AccountChanged {
  id: number
  username: string
  changed: boolean
}

/** An account deleted with everything it had: how many of its articles, comments, favorites and follows (both ways) went with it. */
export interface DeletedAccount {
  id: number
  username: string
  articles: number
  comments: number
  favorites: number
  follows: number
}

/** The SQL a write of accounts runs, inside its transaction. */
export interface UserWriteSql {
  insert(u: NewUser, now: number): Awaitable<UserRow>
  /**
   * The user's normalised name and token state, or null; locked until the transaction ends (no
   * other change in between).
   */
  before(id: number): Awaitable<({ username_key: string } & TokenState) | null>
  /** Fields left undefined keep their value; a password hash bumps token_version (older tokens but `keptToken` stop verifying). */
  update(id: number, c: UserChanges): Awaitable<UserRow | null>
  /** Whether another user than `id` has this email, or this normalised name. */
  taken(id: number, email: string | null, key: string | null): Awaitable<{ email_taken: unknown; username_taken: unknown }>
  /** The account with this normalised username, or null; locked until the transaction ends. */
  account(usernameKey: string): Awaitable<{ id: number; username: string; locked: boolean } | null>
  /** `at`: when it is locked (milliseconds), or null to unlock. */
  setLockedAt(id: number, at: number | null): Awaitable<void>
  /** Every token issued so far stops verifying (token_version moves on, none is kept). */
  revokeTokens(id: number): Awaitable<void>
  /** What the account wrote and its relations. */
  counts(id: number): Awaitable<AccountCounts>
  /**
   * Deletes up to `limit` of the account's articles (when `articles`, with what refers to them) and
   * of its favorites: what would otherwise go in one cascade, in bounded steps (see removeAccount).
   */
  removeSome(id: number, articles: boolean, limit: number): Awaitable<{ articles: number; favorites: number }>
  /** Deletes the account; the schema's cascades take everything that refers to it, and its triggers keep every count. */
  remove(id: number): Awaitable<void>
}
