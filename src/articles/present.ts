/**
 * One function turns article rows into the contract's JSON. The parts that
 * are the same for every viewer (`head`, `mid`) are built once and cached;
 * a viewer's two flags are spliced in per request:
 *
 *   head + favorited + mid + following + "}}"
 */

/** The columns every article read selects (`a` the article, `u` its author). */
export const articleColumns = (withBody: boolean) => `a.id, a.author_id, a.slug, a.title, a.description,${
  withBody ? ' a.body,' : ''
} a.created_at, a.updated_at, a.favorites_count, u.username, u.bio, u.image,
  (SELECT group_concat(t.name, char(31)) FROM article_tags at JOIN tags t ON t.id = at.tag_id
   WHERE at.article_id = a.id) AS tags`

export interface ArticleRow {
  id: number
  author_id: number
  slug: string
  title: string
  description: string
  body?: string
  created_at: number
  updated_at: number
  favorites_count: number
  username: string
  bio: string | null
  image: string | null
  /** tag names joined by U+001F, in no particular order; null for none */
  tags: string | null
}

export interface ArticleParts {
  authorId: number
  head: string
  mid: string
}

/** Tags sort by code point (as SQLite compares UTF-8), not by UTF-16 unit. */
export function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x - y
    if (x > 0xffff) i++
  }
  return a.length - b.length
}

const s = JSON.stringify
const iso = (ms: number) => s(new Date(ms).toISOString())

/** The viewer-independent parts of an article (with `body` when the row has it). */
export function articleParts(r: ArticleRow): ArticleParts {
  const tags = r.tags === null ? [] : r.tags.split('\u001f').sort(byCodePoint)
  const body = r.body === undefined ? '' : `"body":${s(r.body)},`
  return {
    authorId: r.author_id,
    head:
      `{"slug":${s(r.slug)},"title":${s(r.title)},"description":${s(r.description)},${body}` +
      `"tagList":${s(tags)},"createdAt":${iso(r.created_at)},"updatedAt":${iso(r.updated_at)},"favorited":`,
    mid: `,"favoritesCount":${r.favorites_count},"author":{"username":${s(r.username)},"bio":${s(r.bio)},"image":${s(
      r.image,
    )},"following":`,
  }
}

/** The finished article JSON for a viewer. */
export const articleJson = (p: ArticleParts, favorited: boolean, following: boolean) =>
  `${p.head}${favorited}${p.mid}${following}}}`
