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

/** The next free slug: `base` itself, else the smallest free of `base-2`, `base-3`, ... */
export function nextFreeSlug(base: string, taken: Iterable<string>): string {
  const used = new Set<number>()
  const prefix = `${base}-`
  for (const slug of taken) {
    if (slug === base) used.add(1)
    else if (slug.startsWith(prefix)) {
      const rest = slug.slice(prefix.length)
      if (/^[1-9]\d*$/.test(rest)) used.add(Number(rest))
    }
  }
  if (!used.has(1)) return base
  let n = 2
  while (used.has(n)) n++
  return `${prefix}${n}`
}

