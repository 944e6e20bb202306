import type { Database } from 'bun:sqlite'

/** Characters of a string, bytes of a byte array; other values are counted as entries only. */
const sizeOf = (v: unknown) => (typeof v === 'string' ? v.length : v instanceof Uint8Array ? v.byteLength : 0)

/** Something whose value moves whenever what a cache holds may be stale. */
export interface Versioned {
  version(): number
}

/**
 * Tells caches when stored data may have changed, exactly:
 * - this process's writes call `changed()` (every write function does), and
 *   `changed('users')` when a user row changed;
 * - commits by any OTHER connection to the same file (a second process, the
 *   CLI) move SQLite's `PRAGMA data_version`, which is checked on every read
 *   of a version and counts as a change of everything.
 * A cache entry filled at version v is valid while the version is still v.
 */
export function changeTracker(db: Database) {
  const dataVersion = db.prepare<{ data_version: number }, []>('PRAGMA data_version')
  let all = 0
  let users = 0
  let foreign = -1
  const sync = () => {
    const v = dataVersion.get()!.data_version
    if (v !== foreign) {
      if (foreign !== -1) {
        all++
        users++
      }
      foreign = v
    }
  }
  return {
    changed(scope?: 'users') {
      all++
      if (scope === 'users') users++
    },
    /** Moves on every change. */
    version(): number {
      sync()
      return all
    },
    /** Moves only when users may have changed (what token checks depend on). */
    users: {
      version(): number {
        sync()
        return users
      },
    } satisfies Versioned,
  }
}
export type ChangeTracker = ReturnType<typeof changeTracker>

/**
 * A bounded map of computed values (finished response bodies, article
 * fragments, verified tokens), valid for one content version. Bounded by
 * entries and, for strings and byte arrays, by their total size; oldest entries go
 * first when it is full.
 */
export class VersionedCache<K = string, V = string> {
  private entries = new Map<K, V>()
  private at = -1
  private size = 0
  constructor(
    private readonly changes: Versioned,
    private readonly maxEntries = 2000,
    private readonly maxSize = Number.POSITIVE_INFINITY,
  ) {}

  /** Drops everything if the content changed since the last call. */
  private fresh() {
    const v = this.changes.version()
    if (v !== this.at) {
      this.entries.clear()
      this.size = 0
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
    const size = sizeOf(value)
    if (size > this.maxSize) return
    while (this.entries.size >= this.maxEntries || this.size + size > this.maxSize) {
      const [oldKey, old] = this.entries.entries().next().value!
      this.entries.delete(oldKey)
      this.size -= sizeOf(old)
    }
    this.entries.set(key, value)
    this.size += size
  }
}
