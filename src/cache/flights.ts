import type { Versions } from '../keys/versions.ts'

interface Flight<V> {
  at: number
  deps: readonly number[]
  value: Promise<V>
}

/**
 * Reads under way, per key, so that requests missing the same value at the
 * same time share one read instead of each making it (after a new article,
 * every request for the first pages or the tag list misses at once; on
 * PostgreSQL each would go to the database).
 *
 * A request joins a read under way only when none of the read's
 * dependencies was bumped since the read started: exactly when the value,
 * had it been read already and kept, would be served from the cache (see
 * versions.ts). `deps` must be all that the value will depend on, known
 * before the read. A failed read fails everyone who joined it.
 */
export class Flights<K, V> {
  private readonly under = new Map<K, Flight<V>>()

  constructor(private readonly versions: Versions) {}

  /**
   * `read()`'s result, or that of the same key's read under way while it is
   * still valid. `at`: the clock when what the value is built from started to
   * be read (by default now, before `read` starts).
   */
  share(key: K, deps: readonly number[], read: () => Promise<V>, at = this.versions.clock): Promise<V> {
    const flight = this.under.get(key)
    if (flight !== undefined && this.versions.valid(flight.at, flight.deps)) return flight.value
    const started: Flight<V> = { at, deps, value: read() }
    this.under.set(key, started)
    const done = () => {
      if (this.under.get(key) === started) this.under.delete(key)
    }
    started.value.then(done, done)
    return started.value
  }

  /** Reads under way (for tests). */
  get size(): number {
    return this.under.size
  }
}
