import type { ArticleParts } from '../articles/present.ts'
import type { PageIds } from '../articles/list-store.ts'
import type { AuthorRow } from '../profiles/store.ts'
import { DepCache } from './cache.ts'
import { SlabCache } from './slab.ts'
import type { Versions } from '../keys/versions.ts'

const MB = 1024 * 1024

/** A viewer's flags: whom they follow and what they favorited (null: ask per page). */
export interface ViewerFlags {
  followees: ReadonlySet<number>
  favorites: ReadonlySet<number> | null
}

/** One comment up to its author: `{"id":…,"body":…,"author":`, and whose it is. */
export interface CommentPart {
  head: string
  authorId: number
}

export interface VerifiedToken {
  id: number
  username: string
  usernameKey: string
  /** the token's id (its `jti`), if it has one */
  tokenId?: string
  /** expiry, seconds since the epoch */
  exp: number
}

/** What the budgets below add up to, in MiB: CACHE_MB scales them all (see config.ts). */
export const CACHE_BUDGET_MB = 90

/**
 * Every cache of one app, each bounded by entries and bytes (keys included).
 * The byte budgets add up to CACHE_BUDGET_MB at `scale` 1. All of them are
 * exact: each value records what it was built from (see versions.ts).
 */
export function createCaches(versions: Versions, scale = 1) {
  const cache = <K extends string | number, V>(entries: number, mb: number, weigh?: (v: V) => number) =>
    new DepCache<K, V>(versions, Math.max(16, Math.round(entries * scale)), Math.max(64 * 1024, mb * MB * scale), weigh)
  const slab = (entries: number, mb: number, indexMb: number) =>
    new SlabCache(
      versions,
      Math.round(mb * MB * scale),
      Math.max(16, Math.round(entries * scale)),
      Math.max(64 * 1024, indexMb * MB * scale),
    )
  return {
    versions,
    /**
     * finished bodies of successful anonymous GETs, per URL, in one slab (24 MiB, and 4 for keys
     * and dependency lists): the largest share, as a hit here costs nearly nothing and a miss a
     * composition (docs/PERFORMANCE.md, "Where the cache budget goes")
     */
    responses: slab(16_000, 24, 4),
    /** finished bodies of successful signed-in GETs, per viewer and URL, in a slab of their own (6 MiB, and 2) */
    viewerResponses: slab(4_000, 6, 2),
    /** a page's article ids and count, per filter and page (viewer-independent) */
    pages: cache<string, PageIds>(20_000, 5, (p) => 24 + p.ids.length * 8),
    /** list items without body, per article */
    items: cache<number, ArticleParts>(40_000, 14, (p) => p.head.length * 2 + 48),
    /** whole articles (with body), per article */
    articles: cache<number, ArticleParts>(8_000, 10, (p) => p.head.length * 2 + 48),
    /** slug -> article id and author */
    slugs: cache<string, { id: number; author_id: number }>(40_000, 4, () => 48),
    /** an author's profile up to `following`, per user */
    authors: cache<number, string>(20_000, 3),
    /** users by normalised name */
    profiles: cache<string, AuthorRow>(20_000, 3, (u) => (u.username.length + (u.bio?.length ?? 0) + (u.image?.length ?? 0)) * 2 + 64),
    /** a signed-in viewer's follows and favorites */
    viewers: cache<number, ViewerFlags>(5_000, 4, (f) => 64 + (f.followees.size + (f.favorites?.size ?? 0)) * 16),
    /** an article's comments, oldest first */
    comments: cache<number, CommentPart[]>(10_000, 5, (cs) => cs.reduce((n, c) => n + c.head.length * 2 + 32, 32)),
    /** verified tokens (only ever fully verified ones) */
    tokens: cache<string, VerifiedToken>(20_000, 6, () => 96),
  }
}
export type Caches = ReturnType<typeof createCaches>
