import type { Database, Statement } from 'bun:sqlite'
import { cheapestFeedPlan, FEED_CHOICES, feedCost, feedPastEnd, NUMBERS } from './list-cost.ts'
import type { ListFilters, ListStore, Page, PageIds } from './list-store.ts'

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
    ids: `SELECT id FROM articles WHERE author_id = (SELECT id FROM users WHERE username_key = :v)
          ORDER BY id DESC ${PAGE}`,
    count: 'SELECT coalesce((SELECT articles_count FROM users WHERE username_key = :v), 0)',
  },
  favorited: {
    ids: `SELECT article_id AS id FROM favorites WHERE user_id = (SELECT id FROM users WHERE username_key = :v)
          ORDER BY article_id DESC ${PAGE}`,
    count: 'SELECT coalesce((SELECT favorites_count FROM users WHERE username_key = :v), 0)',
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

/** The feed's third way: each followed author's newest, merged in code. */
export const FEED_NEWEST_OF_AUTHOR = 'SELECT id FROM articles WHERE author_id = :author ORDER BY id DESC LIMIT :n'

/**
 * Several values of ONE filter (ANY): the link rows of every value, each
 * article once. An article has one author, so authors' counters add up;
 * tags and favorites may overlap and are counted distinct.
 */
export const MULTI: Record<keyof ListFilters, Plan> = {
  tag: {
    ids: `SELECT DISTINCT article_id AS id FROM article_tags
          WHERE tag_id IN (SELECT id FROM tags WHERE name IN (SELECT value FROM json_each(:v)))
          ORDER BY article_id DESC ${PAGE}`,
    count: `SELECT count(DISTINCT article_id) FROM article_tags
            WHERE tag_id IN (SELECT id FROM tags WHERE name IN (SELECT value FROM json_each(:v)))`,
  },
  author: {
    ids: `SELECT id FROM articles WHERE author_id IN (SELECT id FROM users WHERE username_key IN (SELECT value FROM json_each(:v)))
          ORDER BY id DESC ${PAGE}`,
    // CROSS JOIN: the values drive, each user found through the unique index; a value named
    // twice counts at its first place only (an IN over users would scan a small table)
    count: `SELECT coalesce(sum(u.articles_count), 0) FROM json_each(:v) p CROSS JOIN users u ON u.username_key = p.value
            WHERE p.key = (SELECT min(q.key) FROM json_each(:v) q WHERE q.value = p.value)`,
  },
  favorited: {
    ids: `SELECT DISTINCT article_id AS id FROM favorites
          WHERE user_id IN (SELECT id FROM users WHERE username_key IN (SELECT value FROM json_each(:v)))
          ORDER BY article_id DESC ${PAGE}`,
    count: `SELECT count(DISTINCT article_id) FROM favorites
            WHERE user_id IN (SELECT id FROM users WHERE username_key IN (SELECT value FROM json_each(:v)))`,
  },
}

/**
 * Several filters (AND): each present filter is one
 * IN over its link table, the values passed as one JSON array parameter. The
 * cost grows with the matching articles, not with the whole table.
 */
export const CLAUSES: Record<keyof ListFilters, string> = {
  tag: `a.id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id
                 WHERE t.name IN (SELECT value FROM json_each(:tag)))`,
  author: 'a.author_id IN (SELECT id FROM users WHERE username_key IN (SELECT value FROM json_each(:author)))',
  favorited: `a.id IN (SELECT f.article_id FROM favorites f JOIN users u ON u.id = f.user_id
                       WHERE u.username_key IN (SELECT value FROM json_each(:favorited)))`,
}
export function genericPlan(present: (keyof ListFilters)[]): Plan {
  const where = present.map((k) => CLAUSES[k]).join(' AND ')
  return {
    ids: `SELECT a.id FROM articles a WHERE ${where} ORDER BY a.id DESC ${PAGE}`,
    count: `SELECT count(*) FROM articles a WHERE ${where}`,
  }
}

/** Rows a page may read on the event loop; a page that may read more is read on the slow lane (list-worker.ts). */
export const INLINE_ROWS = 40_000

/** A page's plan and what reading it may cost, in rows. */
interface Planned {
  run(): PageIds
  /** rows the page may read at most (Infinity: bounded only by the data) */
  cost: number
}

/**
 * Article lists on SQLite: a page is its count (a counter for single
 * filters) and its ids (an index walked backwards), in one snapshot; past
 * the end costs nothing. `plan` says what a page may cost before reading
 * it, so the caller can keep expensive pages off the event loop.
 */
export function sqliteListPlans(db: Database) {
  // The page statements are a small fixed set (about 15 texts). bun:sqlite's
  // own cache keeps only the 20 most recent texts, so each is kept here.
  const prepared = new Map<string, Statement<unknown, [Params]>>()
  const statement = <R>(sql: string): Statement<R, [Params]> => {
    let s = prepared.get(sql)
    if (!s) prepared.set(sql, (s = db.query<unknown, [Params]>(sql)))
    return s as Statement<R, [Params]>
  }
  const count = (plan: Plan, params: Params) => statement<{ n: number }>(`SELECT (${plan.count}) AS n`).get(params)!.n
  // count and ids from one snapshot (another process may commit in between)
  const read = db.transaction((plan: Plan, params: Params, p: Page, total?: number): PageIds => {
    const n = total ?? count(plan, params)
    if (p.offset >= n) return { ids: [], total: n }
    const ids = statement<{ id: number }>(plan.ids).all({ ...params, limit: p.limit, offset: p.offset })
    return { ids: ids.map((r) => r.id), total: n }
  })

  const followees = db.query<{ id: number }, { viewer: number }>('SELECT followee_id AS id FROM follows WHERE follower_id = :viewer')
  const newestOf = db.query<{ id: number }, { author: number; n: number }>(FEED_NEWEST_OF_AUTHOR)

  const planPage = (filters: ListFilters, page: Page): Planned => {
    const present = (Object.keys(CLAUSES) as (keyof ListFilters)[]).filter((k) => filters[k].length > 0)
    const walk = page.offset + page.limit
    if (present.length === 0) return { run: () => read(SINGLE.none, {}, page), cost: walk }
    if (present.length === 1) {
      const key = present[0]!
      const values = filters[key]
      if (values.length === 1) return { run: () => read(SINGLE[key], { v: values[0]! }, page), cost: walk }
      // the count alone reads every match of every value
      return { run: () => read(MULTI[key], { v: JSON.stringify(values) }, page), cost: Number.POSITIVE_INFINITY }
    }
    // several filters: the count alone reads every match
    const params: Params = {}
    for (const k of present) params[k] = JSON.stringify(filters[k])
    return { run: () => read(genericPlan(present), params, page), cost: Number.POSITIVE_INFINITY }
  }

  /** The feed's plan, chosen by the cost model (list-cost.ts) from counters read first. */
  const planFeed = (viewerId: number, page: Page): Planned => {
    const followed = count(SINGLE.feed, { viewer: viewerId })
    // past the end the other counts are not needed
    if (feedPastEnd(NUMBERS, followed, page)) return { run: () => ({ ids: [], total: followed }), cost: 0 }
    const n = page.offset + page.limit
    const authors = followees.all({ viewer: viewerId }).map((r) => r.id)
    const articles = count(SINGLE.none, {})
    const plan = cheapestFeedPlan(NUMBERS, FEED_CHOICES, followed, authors.length, articles, page)
    const cost = feedCost(NUMBERS, plan, followed, authors.length, articles, page)
    if (plan === 'merge') {
      return {
        run: db.transaction(() => {
          const newest = authors.flatMap((author) => newestOf.all({ author, n }).map((r) => r.id))
          return { ids: newest.sort((x, y) => y - x).slice(page.offset, n), total: followed }
        }),
        cost,
      }
    }
    const statements = { ids: plan === 'walk' ? FEED_WALK : SINGLE.feed.ids, count: SINGLE.feed.count }
    return { run: () => read(statements, { viewer: viewerId }, page, followed), cost }
  }

  return { planPage, planFeed }
}

/**
 * The ListStore on SQLite: a page that may read more than INLINE_ROWS rows
 * (a deep offset, several values or filters, an expensive feed) is read by a
 * worker thread on its own connection, so no request holds the event loop
 * for long; every other page is read right here, synchronously.
 */
export function sqliteListStore(
  db: Database,
  slowLane?: { page(f: ListFilters, p: Page): Promise<PageIds>; feed(v: number, p: Page): Promise<PageIds> },
): ListStore {
  const lists = sqliteListPlans(db)
  return {
    page(filters, page) {
      const planned = lists.planPage(filters, page)
      return slowLane && planned.cost > INLINE_ROWS ? slowLane.page(filters, page) : planned.run()
    },
    feed(viewerId, page) {
      const planned = lists.planFeed(viewerId, page)
      return slowLane && planned.cost > INLINE_ROWS ? slowLane.feed(viewerId, page) : planned.run()
    },
  }
}
