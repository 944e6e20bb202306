import type { Versions } from './versions.ts'

interface Slot {
  key: string
  offset: number
  length: number
  deps: readonly number[]
  builtAt: number
}

const encoder = new TextEncoder()

/**
 * Encoded bodies kept in ONE preallocated buffer used as a ring: a body is
 * written (UTF-8) at the head, and the oldest bodies make room. Thousands of
 * separately allocated 10 KB buffers, each among the short-lived garbage of
 * the requests around it, keep several times their size in memory the
 * allocator cannot give back (measured: 17 MB of bodies held 120 MB); one
 * slab weighs exactly its size. Values are valid while their dependencies
 * are unchanged (see versions.ts).
 *
 * The live slots, in write order, are those from the head to the end of the
 * buffer (the previous lap) followed by those from its start to the head (this
 * lap), so the ones a new write overlaps are always the oldest.
 */
export class SlabCache {
  private readonly slab: Uint8Array
  private readonly slots = new Map<string, Slot>()
  /** every slot written, oldest first (dropped ones are skipped when met) */
  private ring: Slot[] = []
  private first = 0
  private head = 0

  constructor(
    private readonly versions: Versions,
    bytes: number,
    private readonly maxEntries: number,
  ) {
    this.slab = new Uint8Array(bytes)
  }

  get size(): number {
    return this.slots.size
  }

  /** The bytes it may hold (the slab's). */
  get budget(): number {
    return this.slab.byteLength
  }

  /** The slab's bytes plus the keys and dependency lists of its entries. */
  get weight(): number {
    let n = this.slab.byteLength
    for (const [k, s] of this.slots) n += k.length * 2 + s.deps.length * 16 + 64
    return n
  }

  /** A copy of the body (the slab's bytes are written over later), if present and still valid. */
  get(key: string): Uint8Array | undefined {
    const s = this.slots.get(key)
    if (s === undefined) return undefined
    if (!this.versions.valid(s.builtAt, s.deps)) {
      this.slots.delete(key)
      return undefined
    }
    return this.slab.slice(s.offset, s.offset + s.length)
  }

  /** Keeps `value` (built from a read that started at `builtAt`), unless already invalid or too large. */
  set(key: string, value: string, deps: readonly number[], builtAt: number): void {
    if (!this.versions.valid(builtAt, deps)) return
    const length = Buffer.byteLength(value)
    if (length > this.slab.byteLength / 4) return
    this.slots.delete(key)
    if (this.head + length > this.slab.byteLength) {
      // the rest of the buffer holds the oldest slots: they go, and this lap starts over
      this.evict(this.head, this.slab.byteLength)
      this.head = 0
    }
    this.evict(this.head, this.head + length)
    while (this.slots.size >= this.maxEntries && this.first < this.ring.length) this.drop(this.ring[this.first++]!)
    encoder.encodeInto(value, this.slab.subarray(this.head, this.head + length))
    const slot: Slot = { key, offset: this.head, length, deps, builtAt }
    this.slots.set(key, slot)
    this.ring.push(slot)
    this.head += length
    if (this.first > 4096) {
      this.ring = this.ring.slice(this.first)
      this.first = 0
    }
  }

  clear(): void {
    this.slots.clear()
    this.ring = []
    this.first = 0
    this.head = 0
  }

  /** Drops the oldest slots while they overlap [from, to). */
  private evict(from: number, to: number): void {
    while (this.first < this.ring.length) {
      const s = this.ring[this.first]!
      if (this.slots.get(s.key) === s && s.offset + s.length > from && s.offset < to) this.slots.delete(s.key)
      else if (this.slots.get(s.key) === s) return
      this.first++
    }
  }

  private drop(s: Slot): void {
    if (this.slots.get(s.key) === s) this.slots.delete(s.key)
  }
}
