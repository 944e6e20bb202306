import type { Database } from 'bun:sqlite'

/**
 * Tells caches when stored content may have changed, exactly:
 * - this process's writes call `changed()` (every write function does);
 * - commits by any OTHER connection to the same file (a second process, the
 *   CLI) move SQLite's `PRAGMA data_version`, which `version()` checks.
 * A cache entry filled at version v is valid while `version()` is still v.
 */
export function changeTracker(db: Database) {
  const dataVersion = db.prepare<{ data_version: number }, []>('PRAGMA data_version')
  let local = 0
  let foreign = -1
  const listeners: (() => void)[] = []
  const bump = () => {
    local++
    for (const l of listeners) l()
  }
  return {
    changed: bump,
    version(): number {
      const v = dataVersion.get()!.data_version
      if (v !== foreign) {
        if (foreign !== -1) bump()
        foreign = v
      }
      return local
    },
    /** Called on every change (used to drop whole caches). */
    onChange(listener: () => void) {
      listeners.push(listener)
    },
  }
}
export type ChangeTracker = ReturnType<typeof changeTracker>

/**
 * A bounded map of computed values (finished response bodies, article
 * fragments, verified tokens), valid for one content version. Bounded by
 * entries and, for string values, by their total length; oldest entries go
 * first when it is full.
 */
export class VersionedCache<K = string, V = string> {
  private entries = new Map<K, V>()
  private at = -1
  private chars = 0
  constructor(
    private readonly changes: ChangeTracker,
    private readonly maxEntries = 2000,
    private readonly maxChars = Number.POSITIVE_INFINITY,
  ) {}

  /** Drops everything if the content changed since the last call. */
  private fresh() {
    const v = this.changes.version()
    if (v !== this.at) {
      this.entries.clear()
      this.chars = 0
      this.at = v
    }
  }

  /** The value if present and still valid, without computing it. */
  peek(key: K): V | undefined {
    this.fresh()
    return this.entries.get(key)
  }

  get(key: K, compute: () => V): V {
    this.fresh()
    let hit = this.entries.get(key)
    if (hit === undefined) {
      hit = compute()
      this.set(key, hit)
    }
    return hit
  }

  /** Looks several keys up at once; computes the missing ones in one call. */
  getMany(keys: readonly K[], computeMissing: (missing: K[]) => Map<K, V>): (V | undefined)[] {
    this.fresh()
    const out = keys.map((k) => this.entries.get(k))
    const missing = keys.filter((_, i) => out[i] === undefined)
    if (missing.length) {
      const found = computeMissing(missing)
      keys.forEach((k, i) => {
        const v = out[i] === undefined ? found.get(k) : undefined
        if (v !== undefined) {
          out[i] = v
          this.set(k, v)
        }
      })
    }
    return out
  }

  private set(key: K, value: V) {
    const size = typeof value === 'string' ? value.length : 0
    if (size > this.maxChars) return
    while (this.entries.size >= this.maxEntries || this.chars + size > this.maxChars) {
      const [oldKey, old] = this.entries.entries().next().value!
      this.entries.delete(oldKey)
      if (typeof old === 'string') this.chars -= old.length
    }
    this.entries.set(key, value)
    this.chars += size
  }
}
