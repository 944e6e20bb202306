import type { ArticleReads } from '../articles/reads.ts'
import { LIST_PARAMS, PAGE_PARAMS, plainListQuery } from '../articles/query.ts'
import type { Built } from '../cache/cache.ts'
import type { Body } from '../cache/pieces.ts'
import type { CommentReads } from '../comments/reads.ts'
import type { ProfileReads } from '../profiles/reads.ts'

interface Reads {
  articles: ArticleReads
  comments: CommentReads
  profiles: ProfileReads
  /** GET /api/tags */
  tags: () => Promise<Built<string>>
}

const ARTICLE = /^\/api\/articles\/([^/]+)$/
const COMMENTS = /^\/api\/articles\/([^/]+)\/comments$/
const PROFILE = /^\/api\/profiles\/([^/]+)$/

const segment = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/**
 * The plain GETs, answered before the framework builds a request context:
 * composed synchronously from parts the caches hold (page ids, articles,
 * authors, the viewer's flags), else read — the same reads the routes make,
 * for a request the routes would take as it is. Whatever is unusual (an
 * unknown parameter, a value to check, a token not verified before) is left
 * to the routes: `undefined`. A read that fails (an article not found, the
 * database down) is the caller's to hand to the routes, which answer it.
 *
 * `path` is the URL's path, `search` its query without `?`.
 */
export function fastGet(reads: Reads, path: string, search: string, viewer: number): Built<Body> | Promise<Built<Body>> | undefined {
  if (path === '/api/articles') {
    const q = plainListQuery(search, LIST_PARAMS)
    return q && (reads.articles.cachedList(q.filters, q.page, viewer) ?? reads.articles.list(q.filters, q.page, viewer))
  }
  if (path === '/api/articles/feed') {
    if (viewer === 0) return undefined
    const q = plainListQuery(search, PAGE_PARAMS)
    return q && (reads.articles.cachedFeed(q.page, viewer) ?? reads.articles.feed(q.page, viewer))
  }
  if (search.length) return undefined
  if (path === '/api/tags') return reads.tags()
  let m = ARTICLE.exec(path)
  if (m) {
    const slug = segment(m[1]!)
    return slug === undefined ? undefined : (reads.articles.cachedArticle(slug, viewer) ?? reads.articles.article(slug, viewer))
  }
  if ((m = COMMENTS.exec(path))) {
    const slug = segment(m[1]!)
    return slug === undefined ? undefined : (reads.comments.cachedList(slug, viewer) ?? reads.comments.list(slug, viewer))
  }
  if ((m = PROFILE.exec(path))) {
    const name = segment(m[1]!)
    return name === undefined ? undefined : (reads.profiles.cachedProfile(name, viewer) ?? reads.profiles.profile(name, viewer))
  }
  return undefined
}
