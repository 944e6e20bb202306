/**
 * What cached values depend on, and when they stop being valid.
 *
 * Every cached value records the dependency keys it was built from (see
 * keys.ts: an article, a user, a list, a viewer's relations...) and the clock
 * at the moment its build STARTED (moved forward each time a read finds it
 * still valid: see `revalidate`). A write, once committed, bumps the keys it
 * changed: each bumped key remembers the clock of its last bump. A value is
 * valid while none of its keys was bumped after its build started.
 *
 * Taking the clock at the start (not the end) of a build makes a build that
 * overlaps a write invalid at once, whatever order its reads and the write's
 * commit took: an async build can never store what a concurrent write just
 * changed. Invalidation is O(keys of the write); a check is O(keys of the value).
 *
 * The map of bumped keys is bounded: when it grows past `maxKeys`, the oldest
 * half is forgotten and every value built before the newest forgotten bump
 * counts as invalid (the `floor`), which is conservative and exact.
 *
 * Most checks find none of a value's keys bumped since it was built. A small
 * table answers that without the map: each key falls in a slot, and a slot
 * holds the clock of the last bump of any key in it, so a key whose slot is
 * not newer than the value was not bumped after it; only a newer slot (that
 * key, or another sharing its slot) is looked up in the map.
 */
/** Invalidates everything (the change log's word for a bulk change). */
export const EVERYTHING = -1

export class Versions {
  /** Moves on every bump; a value built at clock c saw every bump up to c. */
  clock = 0
  private floor = 0
  private readonly bumped = new Map<number, number>()
  /** per slot, the clock of the last bump of a key in it (see above) */
  private readonly recent: Float64Array
  private readonly shift: number

  /** `slotBits`: the table has 2^slotBits slots (1-31; 2^15: 256 KiB). */
  constructor(
    private readonly maxKeys = 50_000,
    slotBits = 15,
  ) {
    this.recent = new Float64Array(2 ** slotBits)
    this.shift = 32 - slotBits
  }

  /** A key's slot: its two 32-bit halves mixed, the top `slotBits` bits of the product. */
  private slot(k: number): number {
    return Math.imul((k | 0) ^ Math.imul((k / 4294967296) | 0, 0x85ebca6b), 0x9e3779b1) >>> this.shift
  }

  /** Marks `keys` as changed now. EVERYTHING invalidates everything. */
  bump(keys: Iterable<number>): void {
    const at = ++this.clock
    for (const k of keys) {
      if (k === EVERYTHING) this.floor = at
      else {
        this.bumped.set(k, at)
        this.recent[this.slot(k)] = at
      }
    }
    if (this.bumped.size > this.maxKeys) this.forgetOldest()
  }

  /** Invalidates every value built so far. */
  bumpAll(): void {
    this.floor = ++this.clock
    this.bumped.clear()
  }

  /** Whether a value built from `deps`, started at `builtAt`, is still valid. */
  valid(builtAt: number, deps: readonly number[]): boolean {
    if (builtAt >= this.clock) return true // nothing was bumped since the build started
    if (builtAt < this.floor) return false
    const recent = this.recent
    for (let i = 0; i < deps.length; i++) {
      const k = deps[i]!
      if (recent[this.slot(k)]! <= builtAt) continue
      const at = this.bumped.get(k)
      if (at !== undefined && at > builtAt) return false
    }
    return true
  }

  /**
   * Whether a kept value is still valid, as `valid`; one found valid is moved
   * to the clock (`builtAt` = now): none of its keys was bumped up to now, so
   * it is exactly as valid as a value built now, and the next checks return
   * at once until the next bump (a popular value is read many times between
   * two writes; its dependency list is walked once).
   */
  revalidate(v: { builtAt: number; readonly deps: readonly number[] }): boolean {
    if (v.builtAt >= this.clock) return true
    if (!this.valid(v.builtAt, v.deps)) return false
    v.builtAt = this.clock
    return true
  }

  private forgetOldest(): void {
    const byAge = [...this.bumped].sort((a, b) => a[1] - b[1])
    const cut = byAge.length >> 1
    this.floor = Math.max(this.floor, byAge[cut - 1]![1])
    for (let i = 0; i < cut; i++) this.bumped.delete(byAge[i]![0])
  }
}
