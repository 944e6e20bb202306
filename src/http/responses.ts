import { type ChangeTracker, VersionedCache } from '../db/changes.ts'

/**
 * Finished bodies of successful GETs (article lists, articles, comments,
 * tags), per viewer and URL: what a viewer sees at a URL changes only when
 * stored content changes, and every change empties the cache (see
 * changes.ts). Bounded by entries and by total size.
 */
export class ResponseCache {
  private readonly cache: VersionedCache<string, string>
  constructor(changes: ChangeTracker, maxEntries = 10_000, maxChars = 8 * 1024 * 1024) {
    this.cache = new VersionedCache(changes, maxEntries, maxChars)
  }

  /** The body for `viewer` (null: anonymous) at `url`, built on a miss. */
  body(viewer: { id: number } | null, url: string, build: (viewer: number) => string): string {
    const id = viewer?.id ?? 0
    return this.cache.get(`${id} ${url}`, () => build(id))
  }

  /** The cached body, if any, without building it. */
  peek(viewer: number, url: string): string | undefined {
    return this.cache.peek(`${viewer} ${url}`)
  }
}
