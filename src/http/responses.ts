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

  /** The body for `viewer` (null: anonymous) at `url`, built on a miss. */
  body(viewer: { id: number } | null, url: string, build: (viewer: number) => string): Uint8Array {
    const id = viewer?.id ?? 0
    return this.cache.get(`${id} ${url}`, () => encoder.encode(build(id)))
  }

  /** The cached body, if any, without building it. */
  peek(viewer: number, url: string): Uint8Array | undefined {
    return this.cache.peek(`${viewer} ${url}`)
  }
}

const encoder = new TextEncoder()
