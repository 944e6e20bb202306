import type { Built } from '../cache/cache.ts'
import type { Caches } from '../cache/caches.ts'

export const NO_PARAMS: ReadonlySet<string> = new Set()

/**
 * Finished bodies of successful GETs (article lists, articles, comments,
 * profiles, tags), kept UTF-8 encoded and ready to send: per path with query
 * for anonymous readers, who share them, and per viewer and path with query
 * for signed-in ones (their flags differ), in a smaller slab of its own so
 * many viewers cannot push out what every anonymous reader shares. Each
 * remembers what it was built from, the viewer's relations included, and is
 * dropped exactly when one of those parts changes (see src/cache/versions.ts).
 */
export class ResponseCache {
  constructor(private readonly caches: Caches) {}

  /**
   * The body for `viewer` (null: anonymous) at `url`, built on a miss. Only
   * URLs whose query names nothing but `params` are kept: parameters the API
   * ignores would otherwise let anyone fill the cache with copies.
   */
  async body(
    viewer: { id: number } | null,
    url: string,
    params: ReadonlySet<string>,
    build: (viewer: number) => Promise<Built<string>>,
  ): Promise<Uint8Array | string> {
    const id = viewer?.id ?? 0
    const hit = this.peek(id, url)
    if (hit) return hit
    const at = this.caches.versions.clock
    const built = await build(id)
    if (onlyParams(url, params)) this.slab(id).set(cacheKey(id, url), built.value, built.deps, at)
    return built.value
  }

  /** The body `viewer` (0: anonymous) gets at `url`, if cached and still valid. */
  peek(viewer: number, url: string): Uint8Array | undefined {
    return this.slab(viewer).get(cacheKey(viewer, url))
  }

  /** Keeps a body composed just now for `viewer` (all its parts valid at this moment). */
  keep(viewer: number, url: string, built: Built<string>): string {
    this.slab(viewer).set(cacheKey(viewer, url), built.value, built.deps, this.caches.versions.clock)
    return built.value
  }

  private slab(viewer: number) {
    return viewer === 0 ? this.caches.responses : this.caches.viewerResponses
  }
}

/** Keyed by viewer and path with query: the Host header names no different content. */
function cacheKey(viewer: number, url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const path = start < 0 ? '/' : url.slice(start)
  return viewer === 0 ? path : `${viewer} ${path}`
}

function onlyParams(url: string, params: ReadonlySet<string>): boolean {
  const q = url.indexOf('?')
  if (q < 0) return true
  for (const key of new URLSearchParams(url.slice(q + 1)).keys()) if (!params.has(key)) return false
  return true
}
