import { type ChangeTracker, VersionedCache } from '../db/changes.ts'

/**
 * Finished bodies of successful GETs (article lists, articles, comments,
 * tags), per viewer and URL: what a viewer sees at a URL changes only when
 * stored data changes, and every change empties the cache (see changes.ts).
 * Bodies are kept UTF-8 encoded, ready to send. Bounded by entries and bytes.
 */
export class ResponseCache {
  private readonly cache: VersionedCache<string, Uint8Array>
  constructor(changes: ChangeTracker, maxEntries = 10_000, maxBytes = 16 * 1024 * 1024) {
    this.cache = new VersionedCache(changes, maxEntries, maxBytes)
  }

  /**
   * The body for `viewer` (null: anonymous) at `url`, built on a miss. Only
   * URLs whose query names nothing but `params` are kept: parameters the API
   * ignores would otherwise let anyone fill the cache with copies.
   */
  body(viewer: { id: number } | null, url: string, params: ReadonlySet<string>, build: (viewer: number) => string): Uint8Array | string {
    const id = viewer?.id ?? 0
    if (!onlyParams(url, params)) return build(id)
    return this.cache.get(`${id} ${url}`, () => encoder.encode(build(id)))
  }

  /** The cached body, if any, without building it. */
  peek(viewer: number, url: string): Uint8Array | undefined {
    return this.cache.peek(`${viewer} ${url}`)
  }
}

const encoder = new TextEncoder()

export const NO_PARAMS: ReadonlySet<string> = new Set()

function onlyParams(url: string, params: ReadonlySet<string>): boolean {
  const q = url.indexOf('?')
  if (q < 0) return true
  for (const key of new URLSearchParams(url.slice(q + 1)).keys()) if (!params.has(key)) return false
  return true
}
