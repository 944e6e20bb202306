import type { Versions } from './versions.ts'

/** A value built from data, with what it depends on (see versions.ts). */
export interface Built<V> {
  value: V
  deps: readonly number[]
}

interface Entry<V> {
  value: V
  deps: readonly number[]
  /** the clock when its build started, or when it was last found valid (Versions.revalidate) */
  builtAt: number
  /** insertion order, for the cheap recency check below */
  seq: number
  size: number
}

/**
 * A string in one piece, holding nothing but its characters. JavaScriptCore
 * builds `a${b}c` as a rope that keeps every piece alive, and a rope it has
 * resolved (by reading a character) STILL keeps its pieces: cached article
 * heads would hold twenty strings each, most of the heap's objects, which
 * every full collection marks (docs/PERFORMANCE.md). Joining an array
 * builds a new flat string and lets the rope and its pieces go;
 * test/unit/flat.test.ts checks both.
 */
export function flat<T extends string>(s: T): T {
  return [s, ''].join('') as T
}

/** Characters of a string, bytes of a byte array, a fixed estimate otherwise. */
export const sizeOf = (v: unknown): number => (typeof v === 'string' ? v.length * 2 : v instanceof Uint8Array ? v.byteLength : 64)

/**
 * A bounded map of built values, each valid while its dependencies are
 * unchanged. Bounded by entries and by bytes, keys and dependency lists
 * included (a long URL costs what it weighs). Eviction is oldest-first, but
 * an entry read while in the older half is moved to the young end, so what is
 * popular stays.
 */
export class DepCache<K extends string | number, V> {
  private readonly entries = new Map<K, Entry<V>>()
  private bytes = 0
  private seq = 0
  /** lookups that found a valid value, and those that did not (metrics) */
  hits = 0
  misses = 0

  constructor(
    private readonly versions: Versions,
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    private readonly weigh: (v: V) => number = sizeOf,
  ) {}

  get size(): number {
    return this.entries.size
  }

  get weight(): number {
    return this.bytes
  }

  /** The bytes it may hold. */
  get budget(): number {
    return this.maxBytes
  }

  /** The value if present and still valid. */
  get(key: K): V | undefined {
    const e = this.entries.get(key)
    if (e === undefined) {
      this.misses++
      return undefined
    }
    if (!this.versions.revalidate(e)) {
      this.remove(key, e)
      this.misses++
      return undefined
    }
    this.hits++
    if (this.seq - e.seq > this.entries.size >> 1) {
      // in the older half: move to the young end
      this.entries.delete(key)
      e.seq = ++this.seq
      this.entries.set(key, e)
    }
    return e.value
  }

  /** The entry with its dependencies, if valid (for values composed of other values). */
  getBuilt(key: K): Built<V> | undefined {
    const value = this.get(key)
    return value === undefined ? undefined : { value, deps: this.entries.get(key)!.deps }
  }

  /**
   * Stores a value built from a read that started at `builtAt` (the clock
   * then). A value already invalid is not stored.
   */
  set(key: K, built: Built<V>, builtAt: number): void {
    if (!this.versions.valid(builtAt, built.deps)) return
    const size = this.weigh(built.value) + entryOverhead(key, built.deps)
    if (size > this.maxBytes) return
    const old = this.entries.get(key)
    if (old) this.remove(key, old)
    while (this.entries.size >= this.maxEntries || this.bytes + size > this.maxBytes) {
      const [oldKey, oldest] = this.entries.entries().next().value!
      this.remove(oldKey, oldest)
    }
    this.entries.set(key, { value: built.value, deps: built.deps, builtAt, seq: ++this.seq, size })
    this.bytes += size
  }

  clear(): void {
    this.entries.clear()
    this.bytes = 0
  }

  private remove(key: K, e: Entry<V>): void {
    this.entries.delete(key)
    this.bytes -= e.size
  }
}

/** What a cached entry weighs besides its value: its key (UTF-16), its dependency list and its bookkeeping. */
export const entryOverhead = (key: string | number, deps: readonly number[]): number =>
  (typeof key === 'string' ? key.length * 2 : 8) + deps.length * 16 + 64

/** Where a composition takes its parts from: a cache, or the map a read filled (the fallback). */
export type Parts<K extends string | number, V> = DepCache<K, V> | ReadonlyMap<K, V>

/**
 * A part from either kind. Two call sites, each of which only ever sees one
 * kind of object, so the JIT inlines each lookup; one `from.get(key)` over
 * both kinds is polymorphic, and the composition that calls it is compiled
 * for neither.
 */
export function partOf<K extends string | number, V>(from: Parts<K, V>, key: K): V | undefined {
  return from instanceof DepCache ? from.get(key) : from.get(key)
}
