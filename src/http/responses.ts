import type { Built } from '../cache/cache.ts'
import type { Caches } from '../cache/caches.ts'

const encoder = new TextEncoder()

export const NO_PARAMS: ReadonlySet<string> = new Set()

/**
 * Finished bodies of successful GETs (article lists, articles, comments,
 * profiles, tags), per viewer and path with query, kept UTF-8 encoded and
 * ready to send. Each remembers what it was built from and is dropped exactly
 * when one of those parts changes (see src/cache/versions.ts).
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
  ): Promise<Uint8Array> {
    const id = viewer?.id ?? 0
    const key = cacheKey(id, url)
    const hit = this.caches.responses.get(key)
    if (hit) return hit
    const at = this.caches.versions.clock
    const built = await build(id)
    const bytes = encoder.encode(built.value)
    if (onlyParams(url, params)) this.caches.responses.set(key, { value: bytes, deps: built.deps }, at)
    return bytes
  }

  /** The cached body, if any and still valid, without building it. */
  peek(viewer: number, url: string): Uint8Array | undefined {
    return this.caches.responses.get(cacheKey(viewer, url))
  }
}

/** Keyed by viewer and path with query: the Host header names no different content. */
function cacheKey(viewer: number, url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return `${viewer} ${start < 0 ? '/' : url.slice(start)}`
}

function onlyParams(url: string, params: ReadonlySet<string>): boolean {
  const q = url.indexOf('?')
  if (q < 0) return true
  for (const key of new URLSearchParams(url.slice(q + 1)).keys()) if (!params.has(key)) return false
  return true
}
