import type { SQL } from 'bun'
import { read } from '../db/postgres/client.ts'
import type { ListFilters, ListStore, Page, PageIds } from './list-store.ts'

/**
 * Each page is ONE statement: the count (a counter the triggers keep, for a
 * single filter) and the page's ids (an index walked backwards, newest
 * first, stopping after the page: id order is creation order, see
 * 001_init.sql) come back together in one row, even past the end.
 */
export const PG_SINGLE = {
  none: `SELECT (SELECT value FROM counters WHERE name = 'articles') AS total,
      ARRAY(SELECT id FROM articles ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2) AS ids`,
  tag: `SELECT coalesce((SELECT articles_count FROM tags WHERE name = $3), 0) AS total,
      ARRAY(SELECT article_id FROM article_tags WHERE tag_id = (SELECT id FROM tags WHERE name = $3)
            ORDER BY article_id DESC LIMIT $1 OFFSET $2) AS ids`,
  author: `SELECT coalesce((SELECT articles_count FROM users WHERE username_key = $3), 0) AS total,
      ARRAY(SELECT id FROM articles WHERE author_id = (SELECT id FROM users WHERE username_key = $3)
            ORDER BY id DESC LIMIT $1 OFFSET $2) AS ids`,
  favorited: `SELECT coalesce((SELECT favorites_count FROM users WHERE username_key = $3), 0) AS total,
      ARRAY(SELECT article_id FROM favorites WHERE user_id = (SELECT id FROM users WHERE username_key = $3)
            ORDER BY article_id DESC LIMIT $1 OFFSET $2) AS ids`,
} as const

/** Several values (ANY) and several filters (AND): each present filter is one semi-join; `count(*)` over the matches. */
const PG_CLAUSES: Record<keyof ListFilters, (param: string) => string> = {
  tag: (p) => `a.id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = ANY (${p}::text[]))`,
  author: (p) => `a.author_id IN (SELECT id FROM users WHERE username_key = ANY (${p}::text[]))`,
  favorited: (p) => `a.id IN (SELECT f.article_id FROM favorites f JOIN users u ON u.id = f.user_id WHERE u.username_key = ANY (${p}::text[]))`,
}
/** $1 limit, $2 offset, then one array parameter per present filter, in `present` order. */
export function pgGeneric(present: (keyof ListFilters)[]): string {
  const where = present.map((k, i) => PG_CLAUSES[k](`$${i + 3}`)).join(' AND ')
  return `SELECT (SELECT count(*)::int FROM articles a WHERE ${where}) AS total,
      ARRAY(SELECT a.id FROM articles a WHERE ${where} ORDER BY a.id DESC LIMIT $1 OFFSET $2) AS ids`
}

/** The feed's numbers, to choose its plan (see the SQLite lists). */
export const PG_FEED_STATS = `SELECT
    (SELECT coalesce(sum(u.articles_count), 0)::int FROM follows f JOIN users u ON u.id = f.followee_id WHERE f.follower_id = $1) AS followed,
    (SELECT count(*)::int FROM follows WHERE follower_id = $1) AS authors,
    (SELECT value FROM counters WHERE name = 'articles') AS everything`
/** sort: all the followed authors' articles, newest first */
export const PG_FEED_SORT = `SELECT ARRAY(SELECT id FROM articles WHERE author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1)
    ORDER BY id DESC LIMIT $2 OFFSET $3) AS ids`
/** walk: every article newest first, keeping the followed authors' */
export const PG_FEED_WALK = `SELECT ARRAY(SELECT a.id FROM articles a
    WHERE EXISTS (SELECT 1 FROM follows WHERE follower_id = $1 AND followee_id = a.author_id)
    ORDER BY a.created_at DESC, a.id DESC LIMIT $2 OFFSET $3) AS ids`
/** merge: each followed author's newest (offset + limit), merged */
export const PG_FEED_MERGE = `SELECT ARRAY(SELECT x.id FROM follows f
    CROSS JOIN LATERAL (SELECT id FROM articles WHERE author_id = f.followee_id ORDER BY id DESC LIMIT $2 + $3) x
    WHERE f.follower_id = $1 ORDER BY x.id DESC LIMIT $2 OFFSET $3) AS ids`
const MERGE_OVERHEAD_ROWS = 10

const ids = (v: unknown): number[] => Array.from(v as ArrayLike<number>)

export function postgresLists(sql: SQL): ListStore {
  const run = (text: string, params: unknown[]) =>
    read(async () => {
      const [row] = await sql.unsafe(text, params as never[])
      return { ids: ids(row.ids), total: Number(row.total) } satisfies PageIds
    })
  return {
    page(filters: ListFilters, p: Page) {
      const present = (Object.keys(PG_CLAUSES) as (keyof ListFilters)[]).filter((k) => filters[k].length > 0)
      if (present.length === 0) return run(PG_SINGLE.none, [p.limit, p.offset])
      if (present.length === 1 && filters[present[0]!].length === 1) {
        const key = present[0]!
        return run(PG_SINGLE[key], [p.limit, p.offset, filters[key][0]])
      }
      return run(pgGeneric(present), [p.limit, p.offset, ...present.map((k) => filters[k])])
    },
    feed: (viewer: number, p: Page) =>
      read(async () => {
        const [s] = await sql.unsafe(PG_FEED_STATS, [viewer])
        const followed = Number(s.followed)
        if (followed === 0 || p.offset >= followed) return { ids: [], total: followed }
        const n = p.offset + p.limit
        const sortCost = followed
        const walkCost = (n * Number(s.everything)) / followed
        const mergeCost = Number(s.authors) * (n + MERGE_OVERHEAD_ROWS)
        const plan =
          mergeCost < sortCost && mergeCost < walkCost ? PG_FEED_MERGE : walkCost < sortCost ? PG_FEED_WALK : PG_FEED_SORT
        const [row] = await sql.unsafe(plan, [viewer, p.limit, p.offset])
        return { ids: ids(row.ids), total: followed }
      }),
  }
}
