import type { Versions } from '../keys/versions.ts'

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
 * A string in one piece. JavaScriptCore keeps the pieces of a rope
 * (`a${b}c`) alive even once it has resolved it, so a cached value would hold
 * many small strings for every collection to mark; joining an array makes a
 * flat copy and lets the pieces go (test/unit/flat.test.ts checks both).
 */
export function flat<T extends string>(s: T): T {
  return [s, ''].join('') as T
}

/** Characters of a string, bytes of a byte array, a fixed estimate otherwise. */
const sizeOf = (v: unknown): number => (typeof v === 'string' ? v.length * 2 : v instanceof Uint8Array ? v.byteLength : 64)

/**
 * A bounded map of built values, each valid while its dependencies are
 * unchanged. Bounded by entries and by bytes, keys and dependency lists
 * included (a long URL costs what it weighs). Eviction is oldest-first, but
 * an entry read while in the older half is moved to the young end, so what is
 * popular stays.
 *
 * The order is a queue of its own (keys with the `seq` they were queued
 * under), never the Map's: a Map keeps what was deleted from it as holes
 * until it grows again, and its iterator walks them from the start, so taking
 * the oldest entry through `entries().next()`, as each eviction would, grows
 * slower as the holes pile up. A move queues
 * the key again; a record whose entry has moved, been replaced or dropped
 * since is stale and skipped, and the queue is compacted once stale records
 * outnumber live ones.
 */
export class DepCache<K extends string | number, V> {
  private readonly entries = new Map<K, Entry<V>>()
  /** the eviction queue, oldest first from `first`: each record's key and the seq it was queued with */
  private queuedKeys: K[] = []
  private queuedSeqs: number[] = []
  private first = 0
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
      e.seq = ++this.seq
      this.enqueue(key, e.seq)
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
    while ((this.entries.size >= this.maxEntries || this.bytes + size > this.maxBytes) && this.evictOldest()) {}
    const seq = ++this.seq
    this.entries.set(key, { value: built.value, deps: built.deps, builtAt, seq, size })
    this.enqueue(key, seq)
    this.bytes += size
  }

  /** Forgets one entry (its queue slot is skipped when reached). */
  delete(key: K): void {
    const e = this.entries.get(key)
    if (e) this.remove(key, e)
  }

  clear(): void {
    this.entries.clear()
    this.queuedKeys = []
    this.queuedSeqs = []
    this.first = 0
    this.bytes = 0
  }

  private enqueue(key: K, seq: number): void {
    this.queuedKeys.push(key)
    this.queuedSeqs.push(seq)
    // records taken or stale outnumber the live ones (one per entry): keep only the live ones
    if (this.queuedKeys.length > 2 * this.entries.size + 1024) this.compact()
  }

  /** Drops the oldest entry; false when there is none. */
  private evictOldest(): boolean {
    const keys = this.queuedKeys
    while (this.first < keys.length) {
      const key = keys[this.first]!
      const seq = this.queuedSeqs[this.first++]!
      const e = this.entries.get(key)
      if (e !== undefined && e.seq === seq) {
        this.remove(key, e)
        return true
      }
    }
    return false
  }

  private compact(): void {
    const keys: K[] = []
    const seqs: number[] = []
    for (let i = this.first; i < this.queuedKeys.length; i++) {
      const key = this.queuedKeys[i]!
      const seq = this.queuedSeqs[i]!
      if (this.entries.get(key)?.seq === seq) {
        keys.push(key)
        seqs.push(seq)
      }
    }
    this.queuedKeys = keys
    this.queuedSeqs = seqs
    this.first = 0
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
