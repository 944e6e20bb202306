import { expect, test } from 'bun:test'
import { heapStats, isRope } from 'bun:jsc'
import { flat } from '../../src/cache/cache.ts'
import { articleParts } from '../../src/articles/present.ts'
import { skipIf, why } from '../support/skip.ts'

/** Live strings after a full collection. */
const liveStrings = () => {
  Bun.gc(true)
  return heapStats().objectTypeCounts.string ?? 0
}

// Built the way cached parts are: a template of many pieces (a rope).
const piece = (i: number) =>
  `{"slug":${JSON.stringify(`slug-${i}`)},"title":${JSON.stringify(`Title ${i} ü`)},"description":${JSON.stringify(`about ${i}`)},"n":${i},"favorited":`

skipIf(why.sqlitePass).describe('flat: a cached string keeps no pieces alive', () => {
  test('the result is one flat string with the same characters', () => {
    const rope = piece(7)
    expect(isRope(rope)).toBe(true)
    const f = flat(rope)
    expect(isRope(f)).toBe(false)
    expect(f).toBe(piece(7))
    // a rope already resolved (a character was read) is copied too
    const resolved = piece(8)
    resolved.charCodeAt(0)
    expect(flat(resolved)).toBe(piece(8))
  })

  test('10,000 kept strings cost about one string each, not their pieces', () => {
    const n = 10_000
    const before = liveStrings()
    const kept: string[] = []
    for (let i = 0; i < n; i++) {
      const rope = piece(i)
      // every other one already resolved, as a read of it (or the old flat) leaves it
      if (i % 2) rope.charCodeAt(0)
      kept.push(flat(rope))
    }
    const perString = (liveStrings() - before) / n
    expect(kept.length).toBe(n)
    // a rope, resolved or not, keeps its pieces: the old flat, which only resolved it, measured 4.4 each here
    expect(perString).toBeLessThan(2)
  })

  test('cached article heads are flat', () => {
    const before = liveStrings()
    const kept = Array.from({ length: 5_000 }, (_, i) =>
      articleParts({
        id: i,
        author_id: 1,
        slug: `slug-${i}`,
        title: `Title ${i}`,
        description: `About ${i}`,
        body: `Body ${i}`,
        tags: ['b', 'a'],
        created_at: i,
        updated_at: i,
        favorites_count: 0,
      } as never),
    )
    const perHead = (liveStrings() - before) / kept.length
    expect(kept[3]!.head).toContain('"slug":"slug-3"')
    expect(perHead).toBeLessThan(2)
  })
})
