import type { Database, Statement } from 'bun:sqlite'
import { type ChangeTracker, VersionedCache } from '../db/changes.ts'
import { LIST_ITEM_PARTS, type ListItem, type ListItemParts, listItem } from './json.ts'

export interface ListFilters {
  tag: string[]
  author: string[]
  favorited: string[]
}
export interface Page {
  limit: number
  offset: number
}

type Params = Record<string, string | number>

/**
 * Article lists: one statement picks the page's ids walking an index
 * backwards (id order is creation order), cached list items (or one statement
 * for the missing ones) turn them into JSON, and the count comes from
 * counters kept by triggers whenever a single filter value allows it. So a page costs the same at 1,000 or 1,000,000 articles, and the
 * same for 1 or 100 items (no N+1).
 *
 * Several values of one filter, or several filters, fall back to a generic
 * query whose cost grows with the matching articles (not the whole table).
 */
export function listQueries(db: Database, changes: ChangeTracker) {
  const parts = db.query<ListItemParts, { ids: string }>(
    `SELECT ${LIST_ITEM_PARTS} FROM json_each(:ids) p JOIN articles a ON a.id = p.value JOIN users u ON u.id = a.author_id`,
  )
  const favorited = db.query<{ id: number }, { viewer: number; ids: string }>(
    'SELECT article_id AS id FROM favorites WHERE user_id = :viewer AND article_id IN (SELECT value FROM json_each(:ids))',
  )
  const following = db.query<{ id: number }, { viewer: number; ids: string }>(
    'SELECT followee_id AS id FROM follows WHERE follower_id = :viewer AND followee_id IN (SELECT value FROM json_each(:ids))',
  )
  // List items without their viewer-dependent flags, shared by all viewers;
  // dropped whenever content changes.
  const items = new VersionedCache<number, ListItem>(changes, 20_000)

  /** The page's items as a JSON array: cached parts, plus two lookups for a signed-in viewer. */
  const render = (ids: number[], viewer: number): string => {
    const page = items.getMany(ids, (missing) => {
      const found = new Map<number, ListItem>()
      for (const p of parts.all({ ids: JSON.stringify(missing) })) found.set(p.id, listItem(p))
      return found
    })
    let favs: Set<number> | undefined
    let follows: Set<number> | undefined
    if (viewer) {
      favs = new Set(favorited.all({ viewer, ids: JSON.stringify(ids) }).map((r) => r.id))
      const authors = [...new Set(page.map((p) => p?.authorId))]
      follows = new Set(following.all({ viewer, ids: JSON.stringify(authors) }).map((r) => r.id))
    }
    const out: string[] = []
    page.forEach((p, i) => {
      if (!p) return
      out.push(`${p.head}${favs?.has(ids[i]!) ?? false}${p.mid}${follows?.has(p.authorId) ?? false}}}`)
    })
    return `[${out.join(',')}]`
  }

  type Plan = { ids: string; count: string }
  // Single-value filters: the id list comes straight off a primary key or index.
  const single: Record<keyof ListFilters | 'none' | 'feed', Plan> = {
    none: {
      ids: 'SELECT id FROM articles ORDER BY created_at DESC, id DESC LIMIT :limit OFFSET :offset',
      count: "SELECT value AS n FROM counters WHERE name = 'articles'",
    },
    tag: {
      ids: `SELECT article_id AS id FROM article_tags WHERE tag_id = (SELECT id FROM tags WHERE name = :v)
            ORDER BY article_id DESC LIMIT :limit OFFSET :offset`,
      count: 'SELECT coalesce((SELECT articles_count FROM tags WHERE name = :v), 0) AS n',
    },
    author: {
      ids: `SELECT id FROM articles WHERE author_id = (SELECT id FROM users WHERE username = :v)
            ORDER BY id DESC LIMIT :limit OFFSET :offset`,
      count: 'SELECT coalesce((SELECT articles_count FROM users WHERE username = :v), 0) AS n',
    },
    favorited: {
      ids: `SELECT article_id AS id FROM favorites WHERE user_id = (SELECT id FROM users WHERE username = :v)
            ORDER BY article_id DESC LIMIT :limit OFFSET :offset`,
      count: 'SELECT coalesce((SELECT favorites_count FROM users WHERE username = :v), 0) AS n',
    },
    feed: {
      ids: `SELECT id FROM articles WHERE author_id IN (SELECT followee_id FROM follows WHERE follower_id = :viewer)
            ORDER BY id DESC LIMIT :limit OFFSET :offset`,
      count: `SELECT coalesce(sum(u.articles_count), 0) AS n FROM follows f JOIN users u ON u.id = f.followee_id
              WHERE f.follower_id = :viewer`,
    },
  }

  // Several values (ANY) and several filters (AND): each present filter is
  // one IN over its link table, values passed as one JSON array parameter.
  const clauses: Record<keyof ListFilters, string> = {
    tag: `a.id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id
                   WHERE t.name IN (SELECT value FROM json_each(:tag)))`,
    author: 'a.author_id IN (SELECT id FROM users WHERE username IN (SELECT value FROM json_each(:author)))',
    favorited: `a.id IN (SELECT f.article_id FROM favorites f JOIN users u ON u.id = f.user_id
                         WHERE u.username IN (SELECT value FROM json_each(:favorited)))`,
  }
  const generic = (present: (keyof ListFilters)[]): Plan => {
    const where = present.map((k) => clauses[k]).join(' AND ')
    return {
      ids: `SELECT a.id FROM articles a WHERE ${where} ORDER BY a.id DESC LIMIT :limit OFFSET :offset`,
      count: `SELECT count(*) AS n FROM articles a WHERE ${where}`,
    }
  }

  // The plans are a small fixed set (24 texts). bun:sqlite's own cache keeps
  // only the 20 most recent texts, so each statement is kept here once prepared.
  const prepared = new Map<string, Statement<any, any>>()
  const statement = <R>(sql: string): Statement<R, [Params]> => {
    let s = prepared.get(sql)
    if (!s) prepared.set(sql, (s = db.query(sql)))
    return s
  }
  const count = (plan: Plan, params: Params) => statement<{ n: number }>(plan.count).get(params)!.n
  const page = (sql: string, params: Params, p: Page, viewer: number, n: number): string => {
    const ids = statement<{ id: number }>(sql).all({ ...params, limit: p.limit, offset: p.offset })
    const articles = ids.length ? render(ids.map((r) => r.id), viewer) : '[]'
    return `{"articles":${articles},"articlesCount":${n}}`
  }
  const run = (plan: Plan, params: Params, p: Page, viewer: number): string =>
    page(plan.ids, params, p, viewer, count(plan, params))

  /**
   * The feed has two ways to a page. Sorting the followed authors' articles
   * costs their number; walking all articles newest first and keeping the
   * followed ones costs about (offset + limit) * all / followed rows. Both
   * numbers come from counters, so the cheaper way is known before running.
   */
  const feedScan =
    `SELECT a.id FROM articles a
     WHERE EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = a.author_id)
     ORDER BY a.created_at DESC, a.id DESC LIMIT :limit OFFSET :offset`
  const feed = (p: Page, viewer: number): string => {
    const followed = count(single.feed, { viewer })
    if (followed === 0 || p.offset >= followed) return `{"articles":[],"articlesCount":${followed}}`
    const all = count(single.none, {})
    const scanCost = ((p.offset + p.limit) * all) / followed
    const sql = scanCost < followed ? feedScan : single.feed.ids
    return page(sql, { viewer }, p, viewer, followed)
  }

  return {
    /** GET /api/articles as a JSON string, seen by `viewer` (0 = anonymous). */
    list(filters: ListFilters, page: Page, viewer: number): string {
      const present = (Object.keys(clauses) as (keyof ListFilters)[]).filter((k) => filters[k].length > 0)
      if (present.length === 0) return run(single.none, {}, page, viewer)
      if (present.length === 1) {
        const key = present[0]!
        const values = filters[key]
        if (values.length === 1) return run(single[key], { v: values[0]! }, page, viewer)
      }
      const params: Params = {}
      for (const k of present) params[k] = JSON.stringify(filters[k])
      return run(generic(present), params, page, viewer)
    },
    /** GET /api/articles/feed: articles by the users `viewer` follows. */
    feed,
  }
}
export type ListQueries = ReturnType<typeof listQueries>
