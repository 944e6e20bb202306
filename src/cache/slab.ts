import { entryOverhead } from './cache.ts'
import { type Body, byteLength, maxBytes, type Pieces, text } from './pieces.ts'
import type { Versions } from '../keys/versions.ts'

interface Slot {
  key: string
  offset: number
  length: number
  deps: readonly number[]
  /** the clock when its build started, or when it was last found valid (Versions.revalidate) */
  builtAt: number
  /** what it weighs besides its body: key (UTF-16), dependency list, the slot itself */
  weight: number
  /** what the caller kept with it (the response cache: the route's metrics label) */
  tag: number
}

/** Node's Buffer method that writes a string's UTF-8 at an offset (what Buffer#write calls), in Bun as well: no view to allocate per write. */
interface Utf8Writer extends Buffer {
  utf8Write(value: string, offset: number, length?: number): number
}

/**
 * Encoded bodies kept in ONE preallocated buffer used as a ring: a body is
 * written (UTF-8) at the head, and the oldest bodies make room. Thousands of
 * separately allocated 10 KB buffers, each among the short-lived garbage of
 * the requests around it, keep several times their size in memory the
 * allocator cannot give back; one slab weighs exactly its size. Values are valid while their dependencies
 * are unchanged (see versions.ts).
 *
 * The live slots, in write order, are those from the head to the end of the
 * buffer (the previous lap) followed by those from its start to the head (this
 * lap), so the ones a new write overlaps are always the oldest.
 *
 * Besides the slab, keys and dependency lists are bounded in bytes
 * (`indexBytes`), counted like DepCache's: a 16 KB URL costs 32 KB. They are
 * counted for every slot the ring still holds, live or not (a slot replaced
 * or found invalid keeps its key until the ring passes it), and the oldest
 * slots go until both the slab and that bound fit.
 */
export class SlabCache {
  private readonly slab: Utf8Writer
  private readonly slots = new Map<string, Slot>()
  /** every slot written, oldest first (dropped ones are skipped when met) */
  private ring: (Slot | undefined)[] = []
  private first = 0
  private head = 0
  /** the weight of the slots from `first` on */
  private held = 0
  /** lookups that found a valid, accepted body, and those that did not (metrics) */
  hits = 0
  misses = 0
  /** the tag kept with the body the latest hit returned */
  tag = 0

  constructor(
    private readonly versions: Versions,
    bytes: number,
    private readonly maxEntries: number,
    private readonly indexBytes: number,
  ) {
    this.slab = Buffer.alloc(bytes) as Utf8Writer
  }

  get size(): number {
    return this.slots.size
  }

  /** The bytes it may hold: the slab's, and as many for keys and dependency lists. */
  get budget(): number {
    return this.slab.byteLength + this.indexBytes
  }

  /** The slab's bytes plus the keys and dependency lists of the slots it holds. */
  get weight(): number {
    return this.slab.byteLength + this.held
  }

  /**
   * The body, if present and still valid, and if `accept` (given) accepts
   * what it was built from: a VIEW of the slab, whose bytes the next `set`
   * may write over. Use it at once: a Response copies the bytes it is given
   * when it is constructed (test/cache/cache.test.ts checks), so a view costs no
   * allocation where a copy would allocate a buffer per answer for the
   * collector to find.
   */
  get(key: string, accept?: (deps: readonly number[]) => boolean): Uint8Array | undefined {
    const s = this.slots.get(key)
    if (s === undefined) {
      this.misses++
      return undefined
    }
    if (!this.versions.revalidate(s)) {
      this.slots.delete(key)
      this.misses++
      return undefined
    }
    if (accept !== undefined && !accept(s.deps)) {
      this.misses++
      return undefined
    }
    this.hits++
    this.tag = s.tag
    return this.slab.subarray(s.offset, s.offset + s.length)
  }

  /**
   * Keeps `value` (built from a read that started at `builtAt`), unless
   * already invalid or too large (body or key), and returns the bytes kept:
   * a view of the slab, to use at once (see get). Pieces are written straight
   * in; when their largest possible size would not fit, they are joined and
   * kept as one string. A body not kept leaves what the key held as it was.
   * `tag`: a number kept with it, which `tag` holds after a hit.
   */
  set(key: string, value: Body, deps: readonly number[], builtAt: number, tag = 0): Uint8Array | undefined {
    if (!this.versions.valid(builtAt, deps)) return undefined
    const weight = entryOverhead(key, deps)
    const limit = this.slab.byteLength / 4
    if (weight > this.indexBytes / 4) return undefined
    // the room the body needs: exact for a string, at most for pieces
    let room = typeof value === 'string' ? Buffer.byteLength(value) : maxBytes(value)
    if (room > limit && typeof value !== 'string') {
      value = text(value)
      room = Buffer.byteLength(value)
    }
    // an empty body is not kept: an empty slot at the very end of the buffer would be out of every eviction's reach
    if (room > limit || room === 0) return undefined
    // near the end of the buffer, the exact size: a bound up to 3x too large would start the next lap early
    if (this.head + room > this.slab.byteLength && typeof value !== 'string') room = byteLength(value)
    this.slots.delete(key)
    if (this.head + room > this.slab.byteLength) {
      // the rest of the buffer holds the oldest slots: they go, and this lap starts over
      this.evict(this.head, this.slab.byteLength)
      this.head = 0
    }
    const offset = this.head
    const length = typeof value === 'string' ? this.slab.utf8Write(value, offset, room) : this.write(value, offset)
    // the bytes just written belonged to the oldest slots (nothing read them meanwhile): they go
    this.evict(offset, offset + length)
    while ((this.slots.size >= this.maxEntries || this.held + weight > this.indexBytes) && this.first < this.ring.length) {
      this.drop(this.pass())
    }
    const slot: Slot = { key, offset, length, deps, builtAt, weight, tag }
    this.slots.set(key, slot)
    this.ring.push(slot)
    this.held += weight
    this.head += length
    if (this.first > 4096) {
      this.ring = this.ring.slice(this.first)
      this.first = 0
    }
    return this.slab.subarray(offset, offset + length)
  }

  /** Writes the pieces at `at` (room for maxBytes(pieces) is there); returns the bytes written. */
  private write(pieces: Pieces, at: number): number {
    const slab = this.slab
    const start = at
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i]!
      if (typeof p === 'string') {
        at += slab.utf8Write(p, at)
      } else if (Number.isSafeInteger(p) && p >= 0) {
        // the digits, written in place: a count turned into a string would be one more allocation
        let end = at + 1
        for (let x = p; x >= 10; x = Math.floor(x / 10)) end++
        for (let j = end - 1, x = p; j >= at; j--, x = Math.floor(x / 10)) slab[j] = 48 + (x % 10)
        at = end
      } else {
        at += slab.utf8Write(String(p), at)
      }
    }
    return at - start
  }

  clear(): void {
    this.slots.clear()
    this.ring = []
    this.first = 0
    this.head = 0
    this.held = 0
  }

  /** Drops the oldest slots while they overlap [from, to). */
  private evict(from: number, to: number): void {
    while (this.first < this.ring.length) {
      const s = this.ring[this.first]!
      if (this.slots.get(s.key) === s && s.offset + s.length > from && s.offset < to) this.slots.delete(s.key)
      else if (this.slots.get(s.key) === s) return
      this.pass()
    }
  }

  /** The oldest slot, which the ring lets go of (its key with it). */
  private pass(): Slot {
    const s = this.ring[this.first]!
    this.ring[this.first++] = undefined
    this.held -= s.weight
    return s
  }

  private drop(s: Slot): void {
    if (this.slots.get(s.key) === s) this.slots.delete(s.key)
  }
}
