/**
 * Slugs per the contract: lower-cased, NFKD with combining marks dropped, every
 * run of characters other than letters and digits (any script) turned into
 * one `-`, trimmed of `-`, at most 100 characters; "article" when nothing is left.
 * Lower-casing happens after decomposition (compatibility forms such as ℌ
 * only become capitals then) and before the marks are dropped (İ lower-cases
 * to i plus a combining dot).
 */
export const SLUG_MAX = 100

export function slugify(title: string): string {
  const words = title
    .normalize('NFKD')
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
  // cut by code points, never inside a surrogate pair, then drop a dangling "-"
  const cut = Array.from(words).slice(0, SLUG_MAX).join('').replace(/-+$/, '')
  return cut || 'article'
}

/**
 * The suffix number to start a base's counter at: the smallest N >= 2 whose
 * `base-N` is not in `taken` (the contract's "next free"). Used once per
 * base, the first time it is taken twice; the counter goes on from there.
 */
export function firstFreeSuffix(base: string, taken: Iterable<string>): number {
  const used = new Set<number>()
  const prefix = `${base}-`
  for (const slug of taken) {
    if (!slug.startsWith(prefix)) continue
    const rest = slug.slice(prefix.length)
    if (/^[1-9]\d{0,14}$/.test(rest)) used.add(Number(rest))
  }
  let n = 2
  while (used.has(n)) n++
  return n
}

/**
 * Slugs no article may have: the static segments that sit where `:slug` sits
 * under /api/articles/. `GET /api/articles/feed` is the feed, so an article at
 * `feed` could never be read; slug allocation treats these as taken ("Feed"
 * gets `feed-2`). test/articles/slugs.test.ts checks this set against the app's routes;
 * migration 003 moved the articles that had one.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['feed'])
