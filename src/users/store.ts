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

/**
 * Accounts. `create` and `update` answer 422 naming every taken field (the
 * database's unique constraints decide, never a check before the write);
 * `update` records the keys it changed (see src/cache/keys.ts).
 */
export interface UserStore {
  create(u: NewUser): Awaitable<UserRow>
  byId(id: number): Awaitable<UserRow | null>
  credentialsByEmail(email: string): Awaitable<Credentials | null>
  update(id: number, c: UserChanges): Awaitable<UserRow | null>
}
