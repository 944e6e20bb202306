import type { Built } from '../cache/cache.ts'
import type { Caches, ViewerFlags } from '../cache/caches.ts'
import { keys } from '../keys/keys.ts'
import { notFound } from '../errors.ts'
import { usernameKey } from '../names.ts'
import { profileHead, profileJson } from './present.ts'
import type { AuthorRow, ProfileReadSql } from './store.ts'

const NO_FLAGS: ViewerFlags = { followees: new Set(), favorites: new Set() }
const NONE: ReadonlySet<number> = new Set()

/**
 * Favorites loaded into a viewer's flags at most (16 bytes each in the viewers' cache, so 80 kB a
 * viewer); beyond, each page asks the database which of its articles they favorited.
 */
export const MAX_LOADED_FAVORITES = 5000

/**
 * Cached reads about users as others see them, and about a viewer's own
 * relations; shared by the articles, comments and profiles routes.
 */
export function profileReads(sql: ProfileReadSql, caches: Caches) {
  const clock = () => caches.versions.clock
  /** an author's profile up to `following`, per user: composed into every answer that shows an author */
  const authors = caches.part<number, string>('authors')
  /** users by normalised name */
  const profiles = caches.part<string, AuthorRow>(
    'profiles',
    (u) => (u.username.length + (u.bio?.length ?? 0) + (u.image?.length ?? 0)) * 2 + 64,
  )

  /** Caches the profile heads of rows a read returned anyway (article and comment rows carry their author). */
  const rememberAuthor = (u: Pick<AuthorRow, 'username' | 'bio' | 'image'> & { id: number }, at: number): string => {
    const head = profileHead(u)
    authors.set(u.id, { value: head, deps: [keys.user(u.id)] }, at)
    return head
  }

  /** Profile heads of these users, from the cache or one read for the missing ones. */
  async function authorHeads(ids: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>()
    const missing: number[] = []
    for (const id of ids) {
      const head = authors.get(id)
      if (head === undefined) missing.push(id)
      else out.set(id, head)
    }
    if (missing.length) {
      const at = clock()
      for (const u of await sql.authors([...new Set(missing)])) out.set(u.id, rememberAuthor(u, at))
    }
    return out
  }

  /** The viewer's flags if cached (anonymous: none), without reading. */
  const cachedFlags = (viewerId: number): ViewerFlags | undefined => (viewerId === 0 ? NO_FLAGS : caches.viewers.get(viewerId))

  /** Whom `viewer` follows and what they favorited (0: anonymous, no flags). */
  async function flags(viewerId: number): Promise<ViewerFlags> {
    if (viewerId === 0) return NO_FLAGS
    const cached = caches.viewers.get(viewerId)
    if (cached) return cached
    const at = clock()
    const r = await sql.relations(viewerId, MAX_LOADED_FAVORITES + 1)
    // more favorites than are loaded at once: unknown here, each page asks (favoritedAmong)
    const favorites = r.favorites.length > MAX_LOADED_FAVORITES ? null : new Set(r.favorites)
    const value: ViewerFlags = { followees: new Set(r.followees), favorites }
    caches.viewers.set(viewerId, { value, deps: [keys.viewer(viewerId), keys.favoritesOf(viewerId)] }, at)
    return value
  }

  /** Which of `ids` the viewer favorited. */
  async function favoritedAmong(viewerId: number, f: ViewerFlags, ids: readonly number[]): Promise<ReadonlySet<number>> {
    if (viewerId === 0) return NONE
    if (f.favorites) return f.favorites
    return new Set(await sql.favoritedAmong(viewerId, ids))
  }

  /** A user by name (any ASCII case, any Unicode spelling of the same NFKC form), or 404. */
  async function byName(username: string): Promise<AuthorRow> {
    const key = usernameKey(username)
    const cached = profiles.get(key)
    if (cached) return cached
    const at = clock()
    const u = await sql.byName(key)
    if (!u) throw notFound('profile')
    profiles.set(key, { value: u, deps: [keys.user(u.id)] }, at)
    return u
  }

  /** A profile as seen by `viewer`: the one composition, from cached parts or read ones. */
  function composeProfile(u: AuthorRow, viewerId: number, f: ViewerFlags): Built<string> {
    const deps = viewerId ? [keys.user(u.id), keys.viewer(viewerId)] : [keys.user(u.id)]
    return { value: `{"profile":${profileJson(profileHead(u), f.followees.has(u.id))}}`, deps }
  }

  /** The profile JSON from cached parts alone, or undefined. */
  function cachedProfile(username: string, viewerId: number): Built<string> | undefined {
    const u = profiles.get(usernameKey(username))
    const f = cachedFlags(viewerId)
    return u === undefined || f === undefined ? undefined : composeProfile(u, viewerId, f)
  }

  return {
    /** the authors' profile heads, for the answers other features compose */
    authors,
    rememberAuthor,
    authorHeads,
    cachedFlags,
    cachedProfile,
    flags,
    favoritedAmong,
    byName,
    /** GET /api/profiles/:username as JSON. */
    async profile(username: string, viewerId: number): Promise<Built<string>> {
      const composed = cachedProfile(username, viewerId)
      if (composed) return composed
      const u = await byName(username)
      return composeProfile(u, viewerId, await flags(viewerId))
    },
  }
}
export type ProfileReads = ReturnType<typeof profileReads>
