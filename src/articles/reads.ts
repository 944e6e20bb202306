import { type Built, type Parts, partOf } from '../cache/cache.ts'
import type { Caches, ViewerFlags } from '../cache/caches.ts'
import { Flights } from '../cache/flights.ts'
import { keys } from '../keys/keys.ts'
import { notFound } from '../errors.ts'
import type { ProfileReads } from '../profiles/reads.ts'
import type { ListFilters, ListStore, Page, PageIds } from './list-store.ts'
import type { Body, Pieces } from '../cache/pieces.ts'
import { type ArticleParts, articleParts, articlePieces } from './present.ts'
import type { ArticleReadSql } from './store.ts'

/**
 * A feed depends on the new articles of each followed author, up to this many authors; beyond, on
 * every new article: each key is stored with the feed and checked on every hit, and past a few
 * hundred one key dropped a little more often costs less than checking them all.
 */
const MAX_FEED_AUTHOR_KEYS = 200

/**
 * The newest-first list's first ids, read as one value (one index walk, the
 * count in the same snapshot): every plain page within it is sliced from it.
 * A new article shifts every page of that list, so each of them would be
 * read again after each one; the window is read once instead.
 */
export const NEWEST_WINDOW = 1_000
const WINDOW_KEY = 'newest'
const WINDOW: Page = { limit: NEWEST_WINDOW, offset: 0 }

const plain = (f: ListFilters) => !f.tag.length && !f.author.length && !f.favorited.length
/** Whether a page is one the window holds. */
const inWindow = (f: ListFilters, p: Page) => plain(f) && p.offset + p.limit <= NEWEST_WINDOW
const slice = (w: Built<PageIds>, p: Page): Built<PageIds> => ({
  value: { ids: w.value.ids.slice(p.offset, p.offset + p.limit), total: w.value.total },
  deps: w.deps,
})

const ARTICLES = '{"articles":['
const COUNT = '],"articlesCount":'

/** `{"article":…}` for a viewer, as pieces. */
function single(p: ArticleParts, author: string, favorited: boolean, following: boolean): Pieces {
  const out: Pieces = ['{"article":']
  articlePieces(out, p, author, favorited, following)
  out.push('}')
  return out
}

/** What a list page depends on besides its items: its filters' lists (see src/keys/keys.ts). */
function pageDeps(filters: ListFilters): number[] {
  const deps: number[] = [keys.anyList]
  if (plain(filters)) deps.push(keys.newest)
  for (const t of filters.tag) deps.push(keys.byTag(t))
  for (const a of filters.author) deps.push(keys.byAuthor(a))
  for (const f of filters.favorited) deps.push(keys.favoritedBy(f))
  return deps
}

/** A canonical key for a filter set: values are a set (ANY, without repeats: filtersOf), so their order does not matter. */
const filterKey = (f: ListFilters) => JSON.stringify([[...f.tag].sort(), [...f.author].sort(), [...f.favorited].sort()])

/**
 * Cached article reads. Lists are composed of parts cached apart and
 * invalidated apart: a page's ids (per filter and page), each article's
 * viewer-independent text, each author's profile, and the viewer's flags.
 * A write drops only the parts it changed (see src/keys/keys.ts).
 */
export function articleReads(sql: ArticleReadSql, lists: ListStore, caches: Caches, profiles: ProfileReads) {
  const clock = () => caches.versions.clock
  /** a page's ids and count, per filter and page (viewer-independent) */
  const pages = caches.part<string, PageIds>('pages', (p) => 24 + p.ids.length * 8)
  /** list items without body, per article */
  const itemParts = caches.part<number, ArticleParts>('items', (p) => p.head.length * 2 + 48)
  /** whole articles (with body), per article */
  const articles = caches.part<number, ArticleParts>('articles', (p) => p.head.length * 2 + 48)
  /** slug -> article id and author */
  const slugs = caches.part<string, { id: number; author_id: number }>('slugs', () => 48)

  /** The list parts of these articles (and their authors' heads), one read for the missing ones. */
  async function items(ids: readonly number[]): Promise<Map<number, ArticleParts>> {
    const out = new Map<number, ArticleParts>()
    const missing: number[] = []
    for (const id of ids) {
      const p = itemParts.get(id)
      if (p === undefined) missing.push(id)
      else out.set(id, p)
    }
    if (missing.length) {
      const at = clock()
      for (const r of await sql.items(missing)) {
        const parts = articleParts(r)
        itemParts.set(r.id, { value: parts, deps: [keys.article(r.id)] }, at)
        profiles.rememberAuthor({ id: r.author_id, username: r.username, bio: r.bio, image: r.image }, at)
        out.set(r.id, parts)
      }
    }
    return out
  }

  /** Page reads under way: requests missing the same page at once share one read (see flights.ts). */
  const pageReads = new Flights<string, Built<PageIds>>(caches.versions)

  /** The page at `key`, read from the clock `at` on (earlier when its deps come from an earlier read). */
  async function page(key: string, deps: number[], fetch: () => PageIds | Promise<PageIds>, at = clock()): Promise<Built<PageIds>> {
    const cached = pages.getBuilt(key)
    if (cached) return cached
    return pageReads.share(
      key,
      deps,
      async () => {
        const built = { value: await fetch(), deps }
        pages.set(key, built, at)
        return built
      },
      at,
    )
  }

  /**
   * A page as the list JSON seen by `viewer`: the one composition of a page,
   * whether its parts came from the caches alone (`complete`: a part that
   * is missing is not cached, and nothing is composed) or were read (a part
   * that is missing was deleted after the page's ids were read, and is left
   * out: the answer then depends on every list, and is not kept long).
   */
  function composePage(
    p: Built<PageIds>,
    viewerId: number,
    flags: ViewerFlags,
    favorited: ReadonlySet<number>,
    items: Parts<number, ArticleParts>,
    heads: Parts<number, string>,
    complete: boolean,
  ): Built<Body> | undefined {
    const { ids, total } = p.value
    const deps = p.deps.slice()
    if (viewerId) deps.push(keys.viewer(viewerId), keys.favoritesOf(viewerId))
    const out: Pieces = [ARTICLES]
    let shown = 0
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!
      const a = partOf(items, id)
      const author = a === undefined ? undefined : partOf(heads, a.authorId)
      if (a === undefined || author === undefined) {
        if (complete) return undefined
        continue
      }
      if (shown++) out.push(',')
      articlePieces(out, a, author, favorited.has(id), flags.followees.has(a.authorId))
      deps.push(keys.article(id), keys.user(a.authorId))
    }
    if (shown < ids.length) deps.push(keys.anyList, keys.newest)
    out.push(COUNT, total, '}')
    return { value: out, deps }
  }

  /** A page from cached parts alone, synchronously; undefined when any part is not cached. */
  function compose(p: Built<PageIds>, viewerId: number): Built<Body> | undefined {
    const flags = profiles.cachedFlags(viewerId)
    if (flags === undefined || flags.favorites === null) return undefined
    // the caches themselves: no function made per page (this runs for most list requests)
    return composePage(p, viewerId, flags, flags.favorites, itemParts, profiles.authors, true)
  }

  /** A page as the list JSON seen by `viewer` (0: anonymous), reading the parts the caches miss. */
  async function render(p: Built<PageIds>, viewerId: number): Promise<Built<Body>> {
    const composed = compose(p, viewerId)
    if (composed) return composed
    const { ids } = p.value
    const [parts, flags] = await Promise.all([items(ids), profiles.flags(viewerId)])
    const present = ids.filter((id) => parts.has(id))
    const [heads, favorited] = await Promise.all([
      profiles.authorHeads(present.map((id) => parts.get(id)!.authorId)),
      profiles.favoritedAmong(viewerId, flags, present),
    ])
    return composePage(p, viewerId, flags, favorited, parts, heads, false)!
  }

  /** The id and author of the article at `slug` (cached under its address), or 404. */
  async function bySlug(slug: string): Promise<{ id: number; author_id: number }> {
    const cached = slugs.get(slug)
    if (cached) return cached
    const at = clock()
    const a = await sql.bySlug(slug)
    if (!a) throw notFound('article')
    slugs.set(slug, { value: a, deps: [keys.slugOf(a.id)] }, at)
    return a
  }

  const listKey = (filters: ListFilters, p: Page) => `${filterKey(filters)}|${p.limit}|${p.offset}`
  const feedKey = (viewerId: number, p: Page) => `feed|${viewerId}|${p.limit}|${p.offset}`

  /** The article JSON seen by `viewer`, from its parts: the one composition of an article. */
  function composeArticle(
    id: number,
    authorId: number,
    viewerId: number,
    parts: ArticleParts,
    head: string,
    flags: ViewerFlags,
    favorited: boolean,
  ) {
    const deps = [keys.article(id), keys.user(authorId)]
    if (viewerId) deps.push(keys.viewer(viewerId), keys.favoritesOf(viewerId))
    return { value: single(parts, head, favorited, flags.followees.has(authorId)), deps }
  }

  /** The article from cached parts alone, or undefined. */
  function cachedArticle(id: number, authorId: number, viewerId: number): Built<Body> | undefined {
    const parts = articles.get(id)
    const head = profiles.authors.get(authorId)
    const flags = profiles.cachedFlags(viewerId)
    if (parts === undefined || head === undefined || flags === undefined || flags.favorites === null) return undefined
    return composeArticle(id, authorId, viewerId, parts, head, flags, flags.favorites.has(id))
  }

  return {
    bySlug,
    /** The id and author at `slug` if cached (the comments read the article's address through it). */
    cachedSlug: (slug: string) => slugs.get(slug),

    /** GET /api/articles from cached parts alone (synchronously), or undefined. */
    cachedList(filters: ListFilters, p: Page, viewerId: number): Built<Body> | undefined {
      if (inWindow(filters, p)) {
        const window = pages.getBuilt(WINDOW_KEY)
        return window && compose(slice(window, p), viewerId)
      }
      const ids = pages.getBuilt(listKey(filters, p))
      return ids && compose(ids, viewerId)
    },
    /** GET /api/articles/feed from cached parts alone, or undefined. */
    cachedFeed(p: Page, viewerId: number): Built<Body> | undefined {
      const ids = pages.getBuilt(feedKey(viewerId, p))
      return ids && compose(ids, viewerId)
    },
    /** GET /api/articles/:slug from cached parts alone, or undefined. */
    cachedArticle(slug: string, viewerId: number): Built<Body> | undefined {
      const a = slugs.get(slug)
      return a && cachedArticle(a.id, a.author_id, viewerId)
    },

    /** GET /api/articles */
    async list(filters: ListFilters, p: Page, viewerId: number): Promise<Built<Body>> {
      if (inWindow(filters, p)) {
        return render(slice(await page(WINDOW_KEY, pageDeps(filters), () => lists.page(filters, WINDOW)), p), viewerId)
      }
      return render(await page(listKey(filters, p), pageDeps(filters), () => lists.page(filters, p)), viewerId)
    },

    /** GET /api/articles/feed: its ids depend on the viewer's follows (not their favorites) and on new articles of whom they follow. */
    async feed(p: Page, viewerId: number): Promise<Built<Body>> {
      // the page's deps come from the follows read now: the page is as old as they are (a follow
      // committed meanwhile bumps the viewer's key after this clock, so the page is not kept)
      const at = clock()
      const flags = await profiles.flags(viewerId)
      const deps = [keys.anyList, keys.viewer(viewerId)]
      if (flags.followees.size <= MAX_FEED_AUTHOR_KEYS) for (const id of flags.followees) deps.push(keys.articlesBy(id))
      else deps.push(keys.newest)
      return render(await page(feedKey(viewerId, p), deps, () => lists.feed(viewerId, p), at), viewerId)
    },

    /** GET /api/articles/:slug */
    async article(slug: string, viewerId: number): Promise<Built<Body>> {
      const { id, author_id } = await bySlug(slug)
      const composed = cachedArticle(id, author_id, viewerId)
      if (composed) return composed
      let parts = articles.get(id)
      if (parts === undefined) {
        const at = clock()
        const row = await sql.full(id)
        if (!row) throw notFound('article')
        parts = articleParts(row)
        articles.set(id, { value: parts, deps: [keys.article(id)] }, at)
        profiles.rememberAuthor({ id: row.author_id, username: row.username, bio: row.bio, image: row.image }, at)
      }
      const [heads, flags] = await Promise.all([profiles.authorHeads([author_id]), profiles.flags(viewerId)])
      const favorited = await profiles.favoritedAmong(viewerId, flags, [id])
      const head = heads.get(author_id)
      if (head === undefined) throw notFound('article')
      return composeArticle(id, author_id, viewerId, parts, head, flags, favorited.has(id))
    },
  }
}
export type ArticleReads = ReturnType<typeof articleReads>
