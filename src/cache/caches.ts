import type { Versions } from '../keys/versions.ts'
import { DepCache } from './cache.ts'
import { SlabCache } from './slab.ts'

const MB = 1024 * 1024

/** A viewer's flags: whom they follow and what they favorited (null: ask per page). */
export interface ViewerFlags {
  followees: ReadonlySet<number>
  favorites: ReadonlySet<number> | null
}

/** What the budgets below add up to, in MiB: CACHE_MB scales them all (see config.ts). */
export const CACHE_BUDGET_MB = 90

/**
 * The memory of one app's caches, in one table: entries and MiB (keys
 * included) per cache. The finished bodies get the largest share, as a hit
 * there costs nearly nothing and a miss a composition (docs/PERFORMANCE.md,
 * "Where the cache budget goes"); each feature makes its caches of parts by
 * name (`part`), with what it keeps in them.
 */
export const BUDGETS = {
  /** finished bodies of successful anonymous GETs, per URL, in one slab (and 4 MiB for keys and dependency lists) */
  responses: { entries: 16_000, mb: 24, indexMb: 4 },
  /** finished bodies of successful signed-in GETs, per viewer and URL, in a slab of their own */
  viewerResponses: { entries: 4_000, mb: 6, indexMb: 2 },
  /** a signed-in viewer's follows and favorites */
  viewers: { entries: 5_000, mb: 3 },
  /** articles: a page's ids and count, per filter and page (viewer-independent) */
  pages: { entries: 20_000, mb: 5 },
  /** articles: list items without body, per article */
  items: { entries: 40_000, mb: 14 },
  /** articles: whole articles (with body), per article */
  articles: { entries: 8_000, mb: 10 },
  /** articles: slug -> article id and author */
  slugs: { entries: 40_000, mb: 4 },
  /** profiles: an author's profile up to `following`, per user */
  authors: { entries: 20_000, mb: 3 },
  /** profiles: users by normalised name */
  profiles: { entries: 20_000, mb: 3 },
  /** comments: an article's comments, oldest first */
  comments: { entries: 10_000, mb: 3 },
  /** web: article bodies as HTML, per article, with the text they were rendered from */
  bodies: { entries: 2_000, mb: 3 },
  /** users: verified tokens (only ever fully verified ones) */
  tokens: { entries: 20_000, mb: 6 },
} as const

/** The caches a feature makes with `part`. */
export type PartName = Exclude<keyof typeof BUDGETS, 'responses' | 'viewerResponses' | 'viewers'>

/**
 * Every cache of one app, bounded by entries and bytes (BUDGETS, scaled).
 * All of them are exact: each value records what it was built from (see
 * src/keys/versions.ts). The finished bodies and the viewers' flags are made
 * here (the request entry uses them); each feature makes its own caches of
 * parts by name. `all` lists every cache made, for /metrics.
 */
export function createCaches(versions: Versions, scale = 1) {
  const made: [string, DepCache<never, never> | SlabCache][] = []
  const cache = <K extends string | number, V>(name: keyof typeof BUDGETS, weigh?: (v: V) => number): DepCache<K, V> => {
    const b = BUDGETS[name]
    const c = new DepCache<K, V>(versions, Math.max(16, Math.round(b.entries * scale)), Math.max(64 * 1024, b.mb * MB * scale), weigh)
    made.push([name, c as unknown as DepCache<never, never>])
    return c
  }
  const slab = (name: 'responses' | 'viewerResponses') => {
    const b = BUDGETS[name]
    const s = new SlabCache(
      versions,
      Math.round(b.mb * MB * scale),
      Math.max(16, Math.round(b.entries * scale)),
      Math.max(64 * 1024, b.indexMb * MB * scale),
    )
    made.push([name, s])
    return s
  }
  return {
    versions,
    responses: slab('responses'),
    viewerResponses: slab('viewerResponses'),
    viewers: cache<number, ViewerFlags>('viewers', (f) => 64 + (f.followees.size + (f.favorites?.size ?? 0)) * 16),
    /** A feature's cache of parts, within its budget; `weigh` estimates a value's bytes (keys are counted apart). */
    part: <K extends string | number, V>(name: PartName, weigh?: (v: V) => number) => cache<K, V>(name, weigh),
    /** Every cache made so far, by name. */
    all: (): readonly (readonly [string, DepCache<never, never> | SlabCache])[] => made,
    /** The cache of parts a feature made under `name` (what the tests look into). */
    named<K extends string | number = string | number, V = unknown>(name: PartName): DepCache<K, V> {
      const found = made.find(([n]) => n === name)?.[1]
      if (!(found instanceof DepCache)) throw new Error(`no cache named ${name} was made`)
      return found as unknown as DepCache<K, V>
    },
  }
}
export type Caches = ReturnType<typeof createCaches>
