import type { Built } from '../cache/cache.ts'
import type { Caches } from '../cache/caches.ts'

export const NO_PARAMS: ReadonlySet<string> = new Set()

/**
 * Finished bodies of successful anonymous GETs (article lists, articles,
 * comments, profiles, tags), per path with query, kept UTF-8 encoded and
 * ready to send: anonymous readers share them. A signed-in viewer's answer is
 * composed from the cached parts each time (their flags differ; keeping a
 * copy per viewer and URL would fill memory for little). Each remembers what
 * it was built from and is dropped exactly when one of those parts changes
 * (see src/cache/versions.ts).
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
    if (viewer) return (await build(viewer.id)).value
    const key = cacheKey(url)
    const hit = this.caches.responses.get(key)
    if (hit) return hit
    const at = this.caches.versions.clock
    const built = await build(0)
    if (onlyParams(url, params)) this.caches.responses.set(key, built.value, built.deps, at)
    return built.value
  }

  /** The anonymous body at `url`, if cached and still valid. */
  peek(url: string): Uint8Array | undefined {
    return this.caches.responses.get(cacheKey(url))
  }

  /** Keeps an anonymous body composed just now (all its parts valid at this moment). */
  keep(url: string, built: Built<string>): string {
    this.caches.responses.set(cacheKey(url), built.value, built.deps, this.caches.versions.clock)
    return built.value
  }
}

/** Keyed by path with query: the Host header names no different content. */
function cacheKey(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return start < 0 ? '/' : url.slice(start)
}

function onlyParams(url: string, params: ReadonlySet<string>): boolean {
  const q = url.indexOf('?')
  if (q < 0) return true
  for (const key of new URLSearchParams(url.slice(q + 1)).keys()) if (!params.has(key)) return false
  return true
}
