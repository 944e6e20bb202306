import { flat } from '../cache/cache.ts'
import type { Pieces } from '../cache/pieces.ts'
import { authorEnd } from '../profiles/present.ts'
import { profileHead } from '../profiles/present.ts'
import type { ArticleRow, WrittenArticle } from './store.ts'

/**
 * Articles as the contract's JSON, built from parts that are the same for
 * every viewer and cached apart: the article's own text (`head`), its count,
 * and its author (see src/profiles/present.ts). A viewer's two flags are
 * spliced in per request:
 *
 *   head + favorited + ',"favoritesCount":' + count + ',"author":' + author + following + '}}'
 */
export interface ArticleParts {
  id: number
  authorId: number
  /** `{"slug":…,"favorited":` */
  head: string
  count: number
}

/** Tags sort by code point (as SQLite and PostgreSQL's "C" collation compare UTF-8), not by UTF-16 unit. */
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
/** A time as the contract's JSON writes it: an ISO 8601 string, quoted. */
export const iso = (ms: number): string => s(new Date(ms).toISOString())

/** The viewer-independent parts of an article (with `body` when the row has it). */
export function articleParts(r: ArticleRow): ArticleParts {
  const body = r.body === undefined ? '' : `"body":${s(r.body)},`
  return {
    id: r.id,
    authorId: r.author_id,
    // in one piece: it is cached (see flat)
    head: flat(
      `{"slug":${s(r.slug)},"title":${s(r.title)},"description":${s(r.description)},${body}` +
        `"tagList":${s([...r.tags].sort(byCodePoint))},"createdAt":${iso(r.created_at)},"updatedAt":${iso(r.updated_at)},"favorited":`,
    ),
    count: r.favorites_count,
  }
}

const FAVORITED = 'true,"favoritesCount":'
const NOT_FAVORITED = 'false,"favoritesCount":'
const AUTHOR = ',"author":'

/** Appends the finished article JSON for a viewer to `out`; `author` is the author's profile up to its `following` value. */
export function articlePieces(out: Pieces, p: ArticleParts, author: string, favorited: boolean, following: boolean): void {
  out.push(p.head, favorited ? FAVORITED : NOT_FAVORITED, p.count, AUTHOR, author, authorEnd(following))
}

/** The same as one string. */
export function articleJson(p: ArticleParts, author: string, favorited: boolean, following: boolean): string {
  const out: Pieces = []
  articlePieces(out, p, author, favorited, following)
  return out.join('')
}

/** A write's answer: the article as its writer sees it (never cached: it was read in the write). */
export function writtenJson(w: WrittenArticle): string {
  return `{"article":${articleJson(articleParts(w.row), profileHead(w.row), w.favorited, w.following)}}`
}
