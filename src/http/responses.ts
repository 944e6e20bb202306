import type { Built } from '../cache/cache.ts'
import type { Caches, ViewerFlags } from '../cache/caches.ts'
import { keys } from '../keys/keys.ts'
import { type Body, text } from '../cache/pieces.ts'
import type { SlabCache } from '../cache/slab.ts'
import type { Route } from './route.ts'
import { API_PREFIX, hasPathAt, pathAndQuery } from './url.ts'

/**
 * Finished bodies of successful GETs (article lists, articles, comments,
 * profiles, tags), kept UTF-8 encoded and ready to send: per path with query
 * for anonymous readers, who share them, and per viewer and path with query
 * for signed-in ones whose flags show, in a smaller slab of its own so many
 * viewers cannot push out what every anonymous reader shares. Each remembers
 * what it was built from, the viewer's relations included, and is dropped
 * exactly when one of those parts changes (see src/keys/versions.ts).
 *
 * A signed-in viewer sees an answer exactly as an anonymous reader does when
 * they favorited none of its articles and follow none of its users: then they
 * are served, and their answer is kept as, the anonymous body (most readers,
 * on most pages, have no flag to show). Every article and user an answer
 * shows is among its dependencies (it is built from them), so those tell
 * which flags could show; the viewer's flags are checked as they are now.
 * A read that needs a token (the feed) answers each viewer with their own
 * list: it is never shared, whatever flags show.
 */
export class ResponseCache {
  /** the metrics label of the route whose body the latest `peek` found (kept with each body: see HttpMetrics) */
  route = 0
  /** the paths of the reads that need a token, from their declarations */
  private readonly own: readonly string[]

  constructor(
    private readonly caches: Caches,
    routes: readonly Route[],
  ) {
    this.own = routes
      .filter((r) => r.method === 'GET' && r.read && r.auth === 'required')
      .map((r) => {
        // kept per path with query: a path parameter would need a pattern here
        if (r.path.includes(':')) throw new Error(`GET ${r.path}: a read that needs a token cannot have path parameters`)
        return API_PREFIX + r.path
      })
  }

  /** Whether the answer at `key` (path with query) is the viewer's own (see `own`). */
  private isOwn(key: string): boolean {
    for (const path of this.own) if (hasPathAt(key, path)) return true
    return false
  }

  /**
   * The body for `viewer` (null: anonymous) at `url`, built on a miss, and
   * kept when `keep` (a URL whose query names only parameters the route
   * declares: others would let anyone fill the cache with copies), with
   * `route`, its route's metrics label.
   */
  async body(
    viewer: { id: number } | null,
    url: string,
    keep: boolean,
    build: (viewerId: number) => Promise<Built<Body>>,
    route = 0,
  ): Promise<Uint8Array | string> {
    const id = viewer?.id ?? 0
    // keyed by path with query: the Host header names no different content
    const key = pathAndQuery(url)
    // a copy: the caller awaits, and other answers kept meanwhile may write over the slab
    const hit = this.peek(id, key)?.slice()
    if (hit) return hit
    const at = this.caches.versions.clock
    const built = await build(id)
    if (keep) this.store(id, key, built, at, route)
    return text(built.value)
  }

  /**
   * The body `viewer` (0: anonymous) gets at `key`, the URL's path with
   * query (pathAndQuery), if cached and still valid: a view of a slab, to
   * use at once (see SlabCache.get). On a hit, `route` is the route label it
   * was kept with.
   */
  peek(viewerId: number, key: string): Uint8Array | undefined {
    const { responses, viewerResponses } = this.caches
    if (viewerId === 0) return this.found(responses, responses.get(key))
    const own = viewerResponses.get(`${viewerId} ${key}`)
    if (own !== undefined || this.isOwn(key)) return this.found(viewerResponses, own)
    const flags = this.caches.viewers.get(viewerId)
    return (
      flags &&
      this.found(
        responses,
        responses.get(key, (deps) => showsNone(deps, flags)),
      )
    )
  }

  private found(slab: SlabCache, body: Uint8Array | undefined): Uint8Array | undefined {
    if (body !== undefined) this.route = slab.tag
    return body
  }

  /**
   * Keeps a body built for `viewer` from reads that started at clock `at`
   * under `key`, the URL's path with query (pathAndQuery), and returns it:
   * the bytes kept (a view of a slab, to use at once), or the text when it
   * was not kept.
   */
  keep(viewerId: number, key: string, built: Built<Body>, at: number, route: number): Uint8Array | string {
    return this.store(viewerId, key, built, at, route) ?? text(built.value)
  }

  /**
   * Keeps a body built from a read that started at `at`: as the anonymous one
   * when the viewer's flags show nowhere in it. Returns the bytes kept.
   */
  private store(viewerId: number, key: string, built: Built<Body>, at: number, route: number): Uint8Array | undefined {
    if (viewerId === 0) return this.caches.responses.set(key, built.value, built.deps, at, route)
    if (!this.isOwn(key)) {
      const flags = this.caches.viewers.get(viewerId)
      // valid with the viewer's relations: their flags now are the ones it was built with
      if (flags && this.caches.versions.valid(at, built.deps) && showsNone(built.deps, flags)) {
        const follows = keys.viewer(viewerId)
        const favorites = keys.favoritesOf(viewerId)
        return this.caches.responses.set(
          key,
          built.value,
          built.deps.filter((k) => k !== follows && k !== favorites),
          at,
          route,
        )
      }
    }
    return this.caches.viewerResponses.set(`${viewerId} ${key}`, built.value, built.deps, at, route)
  }
}

const ARTICLE = keys.article(0)
const USER = keys.user(0)
const USER_END = keys.user(2 ** 32)

/**
 * Whether a viewer with these flags sees an answer built from `deps` as an
 * anonymous reader does: no article among them favorited, no user followed.
 * A viewer whose favorites are not all known (null) is never assumed to.
 */
function showsNone(deps: readonly number[], flags: ViewerFlags): boolean {
  const favorites = flags.favorites
  if (favorites === null) return false
  for (let i = 0; i < deps.length; i++) {
    const k = deps[i]!
    if (k < ARTICLE || k >= USER_END) continue
    if (k < USER ? favorites.has(k - ARTICLE) : flags.followees.has(k - USER)) return false
  }
  return true
}
