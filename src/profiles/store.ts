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
  /** the articles the viewer favorited, at most the number asked for */
  favorites: number[]
}

/** The reads of profiles and relations: SQL per backend (see sqlite.ts, postgres.ts). */
export interface ProfileReadSql {
  /** By normalised username (see src/names.ts). */
  byName(usernameKey: string): Awaitable<AuthorRow | null>
  authors(ids: readonly number[]): Awaitable<AuthorRow[]>
  /** Whom the viewer follows, and at most `maxFavorites` of the articles they favorited. */
  relations(viewerId: number, maxFavorites: number): Awaitable<Relations>
  /** Which of `ids` the viewer favorited (for viewers with very many favorites). */
  favoritedAmong(viewerId: number, ids: readonly number[]): Awaitable<number[]>
}

/** The SQL a write of profiles runs, inside its transaction. */
export interface ProfileWriteSql {
  /** Whether a follow row was really added (on) or removed (off); null when the followee no longer exists. */
  setFollowing(follower: number, followee: number, on: boolean): Awaitable<boolean | null>
}
