import type { Database, Statement } from 'bun:sqlite'
import { type ChangeTracker, VersionedCache } from '../db/changes.ts'
import { type ArticleParts, type ArticleRow, articleColumns, articleJson, articleParts } from './present.ts'

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
/** How to find a page's ids and how to count all matches. */
export interface Plan {
  ids: string
  count: string
}

const PAGE = 'LIMIT :limit OFFSET :offset'

/**
 * Single-value filters: the ids come straight off a primary key or index
 * walked backwards (id order is creation order, see 001_init.sql), and the
 * count from a counter the triggers keep.
 */
export const SINGLE: Record<keyof ListFilters | 'none' | 'feed', Plan> = {
  none: {
    ids: `SELECT id FROM articles ORDER BY created_at DESC, id DESC ${PAGE}`,
    count: "SELECT value FROM counters WHERE name = 'articles'",
  },
  tag: {
    ids: `SELECT article_id AS id FROM article_tags WHERE tag_id = (SELECT id FROM tags WHERE name = :v)
          ORDER BY article_id DESC ${PAGE}`,
    count: 'SELECT coalesce((SELECT articles_count FROM tags WHERE name = :v), 0)',
  },
  author: {
    ids: `SELECT id FROM articles WHERE author_id = (SELECT id FROM users WHERE username = :v)
          ORDER BY id DESC ${PAGE}`,
    count: 'SELECT coalesce((SELECT articles_count FROM users WHERE username = :v), 0)',
  },
  favorited: {
    ids: `SELECT article_id AS id FROM favorites WHERE user_id = (SELECT id FROM users WHERE username = :v)
          ORDER BY article_id DESC ${PAGE}`,
    count: 'SELECT coalesce((SELECT favorites_count FROM users WHERE username = :v), 0)',
  },
  feed: {
    ids: `SELECT id FROM articles WHERE author_id IN (SELECT followee_id FROM follows WHERE follower_id = :viewer)
          ORDER BY id DESC ${PAGE}`,
    count: `SELECT coalesce(sum(u.articles_count), 0) FROM follows f JOIN users u ON u.id = f.followee_id
            WHERE f.follower_id = :viewer`,
  },
}

/** The feed's other way to its ids: walk every article newest first, keep the followed authors'. */
export const FEED_WALK = `SELECT a.id FROM articles a
  WHERE EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = a.author_id)
  ORDER BY a.created_at DESC, a.id DESC ${PAGE}`

/** The feed's third way: each followed author's newest, merged in code; the page's ids are then a list. */
export const FEED_NEWEST_OF_AUTHOR = 'SELECT id FROM articles WHERE author_id = :author ORDER BY id DESC LIMIT :n'
export const FEED_MERGED = `SELECT value AS id FROM json_each(:ids) ${PAGE}`
/** A statement per author costs about as much as reading this many more rows. */
const MERGE_OVERHEAD_ROWS = 10

/**
 * Several values (ANY) and several filters (AND): each present filter is one
 * IN over its link table, the values passed as one JSON array parameter. The
 * cost grows with the matching articles, not with the whole table.
 */
export const CLAUSES: Record<keyof ListFilters, string> = {
  tag: `a.id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id
                 WHERE t.name IN (SELECT value FROM json_each(:tag)))`,
  author: 'a.author_id IN (SELECT id FROM users WHERE username IN (SELECT value FROM json_each(:author)))',
  favorited: `a.id IN (SELECT f.article_id FROM favorites f JOIN users u ON u.id = f.user_id
                       WHERE u.username IN (SELECT value FROM json_each(:favorited)))`,
}
export function genericPlan(present: (keyof ListFilters)[]): Plan {
  const where = present.map((k) => CLAUSES[k]).join(' AND ')
  return {
    ids: `SELECT a.id FROM articles a WHERE ${where} ORDER BY a.id DESC ${PAGE}`,
    count: `SELECT count(*) FROM articles a WHERE ${where}`,
  }
}

/**
 * One statement per page: the page's ids, the viewer's two flags for each
 * (favorited, following; false for :viewer 0) and the count of all matches.
 * CROSS JOIN keeps the page's ids as the outer loop: otherwise the planner
 * may walk every article to avoid sorting the page's few rows.
 */
export const pageSql = (ids: string, count: string) => `SELECT p.id, a.author_id,
    EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = :viewer AND f.article_id = p.id) AS favorited,
    EXISTS (SELECT 1 FROM follows w WHERE w.follower_id = :viewer AND w.followee_id = a.author_id) AS following,
    (${count}) AS total
  FROM (${ids}) p CROSS JOIN articles a ON a.id = p.id
  ORDER BY a.created_at DESC, a.id DESC`

/** The items of a page the item cache does not hold, in one statement. */
export const ITEM_PARTS_SQL = `SELECT ${articleColumns(false)}
  FROM json_each(:ids) p JOIN articles a ON a.id = p.value JOIN users u ON u.id = a.author_id`

interface PageRow {
  id: number
  author_id: number
  favorited: number
  following: number
  total: number
}

/**
 * Article lists. A page is one statement (ids, viewer flags, count), plus one
 * for the items the cache misses: the same two whether the page has 1 item
 * or 100 (no N+1), and, with the counts coming from trigger-kept counters,
 * the same cost at 1,000 or 1,000,000 articles.
 */
export function listQueries(db: Database, changes: ChangeTracker) {
  const itemRows = db.query<ArticleRow, { ids: string }>(ITEM_PARTS_SQL)
  // List items without their viewer-dependent flags, shared by all viewers;
  // dropped whenever content changes.
  const items = new VersionedCache<number, ArticleParts>(changes, 20_000)

  // The page statements are a small fixed set (about 15 texts). bun:sqlite's
  // own cache keeps only the 20 most recent texts, so each is kept here.
  const prepared = new Map<string, Statement<any, any>>()
  const statement = <R>(sql: string): Statement<R, [Params]> => {
    let s = prepared.get(sql)
    if (!s) prepared.set(sql, (s = db.query(sql)))
    return s
  }

  const render = (rows: PageRow[]): string => {
    const page = items.getMany(
      rows.map((r) => r.id),
      (missing) => {
        const found = new Map<number, ArticleParts>()
        for (const r of itemRows.all({ ids: JSON.stringify(missing) })) found.set(r.id, articleParts(r))
        return found
      },
    )
    const out: string[] = []
    page.forEach((item, i) => {
      const r = rows[i]!
      if (item) out.push(articleJson(item, r.favorited === 1, r.following === 1))
    })
    return `[${out.join(',')}]`
  }

  const run = (plan: Plan, params: Params, p: Page, viewer: number): string => {
    const all = { ...params, viewer, limit: p.limit, offset: p.offset }
    const rows = statement<PageRow>(pageSql(plan.ids, plan.count)).all(all)
    // past the end there is no row to carry the count
    const total = rows[0]?.total ?? (statement<{ n: number }>(`SELECT (${plan.count}) AS n`).get(all)!.n)
    return `{"articles":${rows.length ? render(rows) : '[]'},"articlesCount":${total}}`
  }

  const followees = db.query<{ id: number }, { viewer: number }>('SELECT followee_id AS id FROM follows WHERE follower_id = :viewer')
  const newestOf = db.query<{ id: number }, { author: number; n: number }>(FEED_NEWEST_OF_AUTHOR)
  const count = (plan: Plan, params: Params) => statement<{ n: number }>(`SELECT (${plan.count}) AS n`).get(params)!.n

  return {
    /** GET /api/articles as a JSON string, seen by `viewer` (0 = anonymous). */
    list(filters: ListFilters, page: Page, viewer: number): string {
      const present = (Object.keys(CLAUSES) as (keyof ListFilters)[]).filter((k) => filters[k].length > 0)
      if (present.length === 0) return run(SINGLE.none, {}, page, viewer)
      if (present.length === 1) {
        const key = present[0]!
        const values = filters[key]
        if (values.length === 1) return run(SINGLE[key], { v: values[0]! }, page, viewer)
      }
      const params: Params = {}
      for (const k of present) params[k] = JSON.stringify(filters[k])
      return run(genericPlan(present), params, page, viewer)
    },

    /**
     * GET /api/articles/feed: articles by the users `viewer` follows. Three
     * ways to a page, costed in rows read before running (the numbers are
     * counters or a primary-key walk):
     * - sort: all the followed authors' articles (`followed` rows);
     * - walk: all articles newest first, keeping the followed authors', about
     *   (offset + limit) * all / followed rows;
     * - merge: the newest (offset + limit) of each followed author, merged
     *   here (one index walk per author: a little more per author).
     */
    feed(page: Page, viewer: number): string {
      const followed = count(SINGLE.feed, { viewer })
      if (followed === 0 || page.offset >= followed) return `{"articles":[],"articlesCount":${followed}}`
      const n = page.offset + page.limit
      const authors = followees.all({ viewer }).map((r) => r.id)
      const sortCost = followed
      const walkCost = (n * count(SINGLE.none, {})) / followed
      const mergeCost = authors.length * (n + MERGE_OVERHEAD_ROWS)
      if (mergeCost < sortCost && mergeCost < walkCost) {
        const newest = authors.flatMap((author) => newestOf.all({ author, n }).map((r) => r.id))
        const ids = newest.sort((x, y) => y - x).slice(page.offset, n)
        return run({ ids: FEED_MERGED, count: ':followed' }, { followed, ids: JSON.stringify(ids) }, { limit: page.limit, offset: 0 }, viewer)
      }
      const ids = walkCost < sortCost ? FEED_WALK : SINGLE.feed.ids
      return run({ ids, count: ':followed' }, { followed }, page, viewer)
    },
  }
}
export type ListQueries = ReturnType<typeof listQueries>
