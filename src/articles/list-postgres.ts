import type { SQL } from 'bun'
import { intArray, read } from '../db/postgres/client.ts'
import { type FeedChoice, feedChoice, type Ops } from './list-cost.ts'
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

/**
 * Several values of ONE filter (ANY): the link rows of every value, each
 * article once; authors' counters add up (one author per article), tags and
 * favorites may overlap and are counted distinct. $3 the values.
 */
export const PG_MULTI = {
  tag: `SELECT (SELECT count(DISTINCT article_id)::int FROM article_tags WHERE tag_id IN (SELECT id FROM tags WHERE name = ANY ($3::text[]))) AS total,
      ARRAY(SELECT DISTINCT article_id FROM article_tags WHERE tag_id IN (SELECT id FROM tags WHERE name = ANY ($3::text[]))
            ORDER BY article_id DESC LIMIT $1 OFFSET $2) AS ids`,
  author: `SELECT (SELECT coalesce(sum(articles_count), 0)::int FROM users WHERE username_key = ANY ($3::text[])) AS total,
      ARRAY(SELECT id FROM articles WHERE author_id IN (SELECT id FROM users WHERE username_key = ANY ($3::text[]))
            ORDER BY id DESC LIMIT $1 OFFSET $2) AS ids`,
  favorited: `SELECT (SELECT count(DISTINCT article_id)::int FROM favorites WHERE user_id IN (SELECT id FROM users WHERE username_key = ANY ($3::text[]))) AS total,
      ARRAY(SELECT DISTINCT article_id FROM favorites WHERE user_id IN (SELECT id FROM users WHERE username_key = ANY ($3::text[]))
            ORDER BY article_id DESC LIMIT $1 OFFSET $2) AS ids`,
} as const

/** Several filters (AND): each present filter is one semi-join; `count(*)` over the matches. */
const PG_CLAUSES: Record<keyof ListFilters, (param: string) => string> = {
  tag: (p) => `a.id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = ANY (${p}::text[]))`,
  author: (p) => `a.author_id IN (SELECT id FROM users WHERE username_key = ANY (${p}::text[]))`,
  favorited: (p) =>
    `a.id IN (SELECT f.article_id FROM favorites f JOIN users u ON u.id = f.user_id WHERE u.username_key = ANY (${p}::text[]))`,
}
/** $1 limit, $2 offset, then one array parameter per present filter, in `present` order. */
export function pgGeneric(present: (keyof ListFilters)[]): string {
  const where = present.map((k, i) => PG_CLAUSES[k](`$${i + 3}`)).join(' AND ')
  return `SELECT (SELECT count(*)::int FROM articles a WHERE ${where}) AS total,
      ARRAY(SELECT a.id FROM articles a WHERE ${where} ORDER BY a.id DESC LIMIT $1 OFFSET $2) AS ids`
}

/** The cost model (list-cost.ts) as SQL: in float8, so it computes what it does on JavaScript's numbers. */
const SQL_OPS: Ops<string, string, string> = {
  num: (n) => `${n}::float8`,
  add: (a, b) => `(${a} + ${b})`,
  mul: (a, b) => `(${a} * ${b})`,
  div: (a, b) => `(${a} / ${b})`,
  lt: (a, b) => `${a} < ${b}`,
  ge: (a, b) => `${a} >= ${b}`,
  and: (a, b) => `(${a} AND ${b})`,
  when: (c, then, otherwise) => `CASE WHEN ${c} THEN ${then} ELSE ${otherwise} END`,
}

/** The model's inputs as SQL expressions, each a float8. */
export interface FeedInputsSql {
  followed: string
  authors: string
  articles: string
  offset: string
  limit: string
}
/** The choice of the cost model as one SQL expression: `plans` is what each choice gives. */
export function pgFeedChoice(inputs: FeedInputsSql, plans: Record<FeedChoice, string>): string {
  return feedChoice(SQL_OPS, plans, inputs.followed, inputs.authors, inputs.articles, inputs)
}

/**
 * The feed in ONE statement: the counts first (counters), then the plan the
 * cost model (list-cost.ts) chooses from them; only the chosen branch runs
 * (its articles are aliased by the plan's name, for EXPLAIN). MATERIALIZED: the counts are read
 * once, not once for each place the choice names them (5-6 times).
 * $1 viewer, $2 limit, $3 offset.
 */
export const PG_FEED = `WITH s AS MATERIALIZED (SELECT
    (SELECT coalesce(sum(u.articles_count), 0)::int FROM follows f
       CROSS JOIN LATERAL (SELECT articles_count FROM users WHERE id = f.followee_id OFFSET 0) u WHERE f.follower_id = $1) AS followed,
    (SELECT count(*)::int FROM follows WHERE follower_id = $1) AS authors,
    (SELECT value FROM counters WHERE name = 'articles') AS articles)
  SELECT s.followed AS total, ${pgFeedChoice(
    {
      followed: 's.followed::float8',
      authors: 's.authors::float8',
      articles: 's.articles::float8',
      offset: '$3::bigint::float8',
      limit: '$2::int::float8',
    },
    {
      none: "'{}'::int[]",
      merge: `ARRAY(SELECT x.id FROM follows f
             CROSS JOIN LATERAL (SELECT id FROM articles merged WHERE author_id = f.followee_id ORDER BY id DESC LIMIT $2::int + $3::bigint) x
             WHERE f.follower_id = $1 ORDER BY x.id DESC LIMIT $2 OFFSET $3)`,
      walk: `ARRAY(SELECT walked.id FROM articles walked
             WHERE EXISTS (SELECT 1 FROM follows WHERE follower_id = $1 AND followee_id = walked.author_id)
             ORDER BY walked.created_at DESC, walked.id DESC LIMIT $2 OFFSET $3)`,
      sort: `ARRAY(SELECT id FROM articles sorted WHERE author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1)
             ORDER BY id DESC LIMIT $2 OFFSET $3)`,
    },
  )} AS ids FROM s`

export function postgresListStore(sql: SQL): ListStore {
  const run = (text: string, params: unknown[]) =>
    read(async () => {
      const [row] = await sql.unsafe(text, params as never[])
      return { ids: intArray(row.ids), total: Number(row.total) } satisfies PageIds
    })
  return {
    page(filters: ListFilters, p: Page) {
      const present = (Object.keys(PG_CLAUSES) as (keyof ListFilters)[]).filter((k) => filters[k].length > 0)
      if (present.length === 0) return run(PG_SINGLE.none, [p.limit, p.offset])
      if (present.length === 1) {
        const key = present[0]!
        const values = filters[key]
        return values.length === 1 ? run(PG_SINGLE[key], [p.limit, p.offset, values[0]]) : run(PG_MULTI[key], [p.limit, p.offset, values])
      }
      return run(pgGeneric(present), [p.limit, p.offset, ...present.map((k) => filters[k])])
    },
    feed: (viewerId: number, p: Page) => run(PG_FEED, [viewerId, p.limit, p.offset]),
  }
}
