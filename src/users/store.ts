import type { Awaitable } from '../db/types.ts'

export interface UserRow {
  id: number
  username: string
  email: string
  bio: string | null
  image: string | null
  token_version: number
}
export interface Credentials extends UserRow {
  password_hash: string
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
  bio?: string | null
  image?: string | null
}

/** The reads of accounts: SQL per backend (see sqlite.ts, postgres.ts). */
export interface UserReadSql {
  byId(id: number): Awaitable<UserRow | null>
  credentialsByEmail(email: string): Awaitable<Credentials | null>
}

/**
 * The writes of accounts, decided once in writes.ts. `create` and `update`
 * answer 422 naming every taken field (the database's unique constraints
 * decide, never a check before the write); `update` records the keys it
 * changed (see src/cache/keys.ts) and answers null for an unknown id.
 */
export interface UserWrites {
  create(u: NewUser): Awaitable<UserRow>
  update(id: number, c: UserChanges): Awaitable<UserRow | null>
}

export interface UserStore extends UserReadSql, UserWrites {}

/** The SQL a write of accounts runs, inside its transaction. */
export interface UserWriteSql {
  insert(u: NewUser, now: number): Awaitable<UserRow>
  /** The user's normalised name, or null; locked until the transaction ends (no other change in between). */
  nameKey(id: number): Awaitable<string | null>
  /** Fields left undefined keep their value; a password hash bumps token_version (older tokens stop verifying). */
  update(id: number, c: UserChanges): Awaitable<UserRow | null>
  /** Whether another user than `id` has this email, or this normalised name. */
  taken(id: number, email: string | null, key: string | null): Awaitable<{ email_taken: unknown; username_taken: unknown }>
}
