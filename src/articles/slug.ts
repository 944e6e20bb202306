/**
 * Slugs per the contract: lower-cased, NFKD with the accents of Latin, Greek and Cyrillic letters
 * and the invisible letters and marks (Hangul fillers) dropped, every run of characters other
 * than letters, their marks and digits (any script) turned into one `-`, trimmed of `-`,
 * recomposed (NFC), at most 100 characters; "article" when
 * nothing is left. Other scripts keep their marks (Devanagari's vowel signs, Japanese voicing
 * marks: dropping them changes the word) and recomposition gives Hangul its syllables back, so a
 * slug typed in its usual composed form is found.
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
    .replace(/([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu, '$1')
    // letters and marks with no look of their own (Hangul fillers): a slug must read as it is
    .replace(/[\p{Default_Ignorable_Code_Point}&&[\p{L}\p{M}]]+/gv, '')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    // a mark with no letter before it is left over, not part of a word
    .replace(/(^|-)\p{M}+/gu, '$1')
    .replace(/^-+|-+$/g, '')
    .normalize('NFC')
  // cut by code points, never inside a surrogate pair, then drop a dangling "-"
  const cut = Array.from(words).slice(0, SLUG_MAX).join('').replace(/-+$/, '')
  return cut || 'article'
}

/**
 * The suffix number to start a base's counter at: the smallest N >= `from` (2) whose
 * `base-N` is not in `taken` (the contract's "next free"). Used once per
 * base, the first time it is taken twice; the counter goes on from there.
 */
export function firstFreeSuffix(base: string, taken: Iterable<string>, from = 2): number {
  const used = new Set<number>()
  const prefix = `${base}-`
  for (const slug of taken) {
    if (!slug.startsWith(prefix)) continue
    const rest = slug.slice(prefix.length)
    if (/^[1-9]\d{0,14}$/.test(rest)) used.add(Number(rest))
  }
  let n = from
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
