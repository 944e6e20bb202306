import type { Awaitable } from '../db/types.ts'

/** A user as others see them. */
export interface AuthorRow {
  id: number
  username: string
  bio: string | null
  image: string | null
}

/** What a signed-in viewer's flags come from. */
export interface Relations {
  followees: number[]
  /** the articles the viewer favorited; null when there are more than the store loads at once */
  favorites: number[] | null
}

/** Favorites loaded into a viewer's relations at most; beyond, each page asks the database. */
export const MAX_LOADED_FAVORITES = 5000

export interface ProfileStore {
  /** By normalised username (see src/users/username.ts). */
  byName(usernameKey: string): Awaitable<AuthorRow | null>
  authors(ids: readonly number[]): Awaitable<AuthorRow[]>
  /** Idempotent either way; records the follower's relations as changed. */
  setFollowing(follower: number, followee: number, on: boolean): Awaitable<void>
  relations(viewer: number): Awaitable<Relations>
  /** Which of `ids` the viewer favorited (for viewers with very many favorites). */
  favoritedAmong(viewer: number, ids: readonly number[]): Awaitable<number[]>
}
