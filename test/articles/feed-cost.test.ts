import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { Database } from 'bun:sqlite'
import { FEED_CHOICES, type FeedChoice, feedChoice, MERGE_OVERHEAD_ROWS, NUMBERS } from '../../src/articles/list-cost.ts'
import { PG_FEED, pgFeedChoice, postgresListStore } from '../../src/articles/list-postgres.ts'
import { FEED_NEWEST_OF_AUTHOR, FEED_WALK, SINGLE, sqliteListStore } from '../../src/articles/list-sqlite.ts'
import type { ListStore, Page } from '../../src/articles/list-store.ts'
import { migrate } from '../../src/db/sqlite/migrate.ts'
import { openDatabase } from '../../src/db/sqlite/open.ts'
import { BACKEND, onPostgres, postgresQueries, type QueryDb, sqliteQueries, testDatabaseUrl } from '../support/backend.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * The feed's plan is chosen by one cost model (src/articles/list-cost.ts):
 * SQLite evaluates it in code, PostgreSQL runs it rendered as SQL inside the
 * feed statement. For the same counts and page both must pick the same plan.
 */
type Counts = { authors: number; followed: number; articles: number; offset: number; limit: number }
type Row = Counts & { case: string; plan: FeedChoice }
const row = (c: string, authors: number, followed: number, articles: number, offset: number, limit: number, plan: FeedChoice): Row => ({
  case: c,
  authors,
  followed,
  articles,
  offset,
  limit,
  plan,
})
// costs in rows: sort = followed; walk = (offset + limit) * articles / followed;
// merge = authors * (offset + limit + MERGE_OVERHEAD_ROWS)
/** merge's cost for 2 authors and the top page of 20: the boundaries below are set around it */
const M = 2 * (20 + MERGE_OVERHEAD_ROWS)
/** the articles at which walk costs M, with 10 * M + 1 rows followed (it need not be a whole number) */
const walkAtM = (M * (10 * M + 1)) / 20
const ROWS: Row[] = [
  row('nothing followed', 0, 0, 1000, 0, 20, 'none'),
  row('past the last followed article', 2, 40, 1000, 40, 20, 'none'),
  row('the top page of a few authors among many articles', 2, 200, 5000, 0, 20, 'merge'),
  row('a small page of a feed that is most articles', 2, 2000, 2400, 0, 20, 'walk'),
  row('many authors, most articles followed', 100, 50_000, 60_000, 0, 20, 'walk'),
  row('a big page of a small feed', 2, 16, 24, 0, 100, 'sort'),
  row('a deep page over many authors', 50, 3000, 100_000, 500, 20, 'sort'),
  // boundaries: a tie goes to the simpler plan; the walk's cost need not be a whole number
  row('merge one row cheaper than sort', 2, M + 1, 100 * M, 0, 20, 'merge'),
  row('merge as cheap as sort', 2, M, 100 * M, 0, 20, 'sort'),
  row('walk as cheap as sort', 10, 100, 500, 0, 20, 'sort'),
  row('merge as cheap as walk', 2, 10 * M, (M * M) / 2, 0, 20, 'walk'),
  row('merge a fraction cheaper than walk', 2, 10 * M + 1, Math.floor(walkAtM) + 1, 0, 20, 'merge'),
  row('walk a fraction cheaper than merge', 2, 10 * M + 1, Math.ceil(walkAtM) - 1, 0, 20, 'walk'),
]
const model = (r: Counts) => feedChoice(NUMBERS, FEED_CHOICES, r.followed, r.authors, r.articles, r)

describe('the feed’s cost model', () => {
  test('picks each plan where it reads fewest rows, a tie going to the simpler', () => {
    expect(ROWS.map((r) => ({ case: r.case, plan: model(r) }))).toEqual(ROWS.map((r) => ({ case: r.case, plan: r.plan })))
    expect(new Set<string>(ROWS.map((r) => r.plan))).toEqual(new Set(Object.keys(FEED_CHOICES)))
  })
})

/** A database of the backend under test whose counters are set to a row's counts, and a way to see which plan a feed page ran. */
interface Observed {
  q: QueryDb
  store: ListStore
  /** the plan the backend ran for the viewer's page */
  ran(viewer: number, page: Page): Promise<FeedChoice>
  close(): Promise<void>
}

/** SQLite: the statements the store runs, on a real database, say the plan. */
function sqliteObserved(): Observed {
  const db = openDatabase(':memory:')
  migrate(db)
  const ran: string[] = []
  // a plain Database whose statements note their text when they run
  const noting = new Proxy(db, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target)
      if (prop !== 'query' && prop !== 'prepare') return typeof v === 'function' ? v.bind(target) : v
      return (text: string) => {
        const stmt = v.call(target, text)
        return new Proxy(stmt, {
          get(s, p) {
            const m = Reflect.get(s, p, s)
            if (typeof m !== 'function') return m
            return (...args: unknown[]) => {
              if (['all', 'get', 'run', 'values', 'iterate'].includes(String(p))) ran.push(text)
              return m.apply(s, args)
            }
          },
        })
      }
    },
  }) as Database
  const store = sqliteListStore(noting)
  const plans: [string, FeedChoice][] = [
    [FEED_NEWEST_OF_AUTHOR, 'merge'],
    [FEED_WALK, 'walk'],
    [SINGLE.feed.ids, 'sort'],
  ]
  return {
    q: sqliteQueries(db),
    store,
    async ran(viewer, page) {
      ran.length = 0
      await store.feed(viewer, page)
      const seen = [...new Set(plans.filter(([text]) => ran.includes(text)).map(([, plan]) => plan))]
      expect(seen.length).toBeLessThanOrEqual(1)
      return seen[0] ?? 'none'
    },
    close: async () => db.close(),
  }
}

interface PgNode {
  Alias?: string
  'Actual Loops'?: number
  Plans?: PgNode[]
}
const nodes = (n: PgNode): PgNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

/** PostgreSQL: the feed statement's plan branches alias their articles by the plan's name; EXPLAIN ANALYZE shows which ran. */
async function postgresObserved(): Promise<Observed> {
  const url = await testDatabaseUrl()
  const schema = `cost_${Math.random().toString(36).slice(2, 8)}`
  const sql = new SQL({ url, max: 1, connection: { search_path: schema } } as ConstructorParameters<typeof SQL>[0])
  await sql.unsafe(`CREATE SCHEMA ${schema}`)
  const { migrate: pgMigrate } = await import('../../src/db/postgres/migrate.ts')
  await pgMigrate(sql)
  const q = postgresQueries(url, schema)
  const aliases: Record<string, FeedChoice> = { merged: 'merge', walked: 'walk', sorted: 'sort' }
  return {
    q,
    store: postgresListStore(sql),
    async ran(viewer, page) {
      const [row] = await sql.unsafe(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ${PG_FEED}`, [
        viewer,
        page.limit,
        page.offset,
      ])
      const plan = (typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'])[0].Plan as PgNode
      const seen = [
        ...new Set(
          nodes(plan)
            .filter((n) => (n['Actual Loops'] ?? 0) > 0)
            .map((n) => aliases[n.Alias?.replace(/_\d+$/, '') ?? ''])
            .filter(Boolean),
        ),
      ]
      expect(seen.length).toBeLessThanOrEqual(1)
      return seen[0] ?? 'none'
    },
    async close() {
      await q.close()
      await sql.unsafe(`DROP SCHEMA ${schema} CASCADE`)
      await sql.close()
    },
  }
}

describe(`the feed on ${BACKEND}`, () => {
  test('runs the plan the cost model picks for the counts of each case', async () => {
    const db = onPostgres ? await postgresObserved() : sqliteObserved()
    try {
      const { q } = db
      const most = Math.max(...ROWS.map((r) => r.authors))
      const values = Array.from({ length: most + 1 }, (_, i) => `('cost${i}', 'cost${i}', 'cost${i}@x.io', 'x', 0)`)
      await q.run(`INSERT INTO users (username, username_key, email, password_hash, created_at) VALUES ${values.join(', ')}`)
      const [viewer, ...authors] = (await q.all<{ id: number }>('SELECT id FROM users ORDER BY id')).map((r) => Number(r.id))
      const ran: { case: string; plan: FeedChoice; total: number }[] = []
      for (const r of ROWS) {
        // the counters the plans are costed from: the followed authors' articles (all on the first), and all articles
        await q.run('DELETE FROM follows')
        for (const author of authors.slice(0, r.authors))
          await q.run('INSERT INTO follows (follower_id, followee_id) VALUES (?, ?)', viewer, author)
        await q.run('UPDATE users SET articles_count = CASE WHEN id = ? THEN ? ELSE 0 END', authors[0], r.followed)
        await q.run("UPDATE counters SET value = ? WHERE name = 'articles'", r.articles)
        const page = { offset: r.offset, limit: r.limit }
        ran.push({ case: r.case, plan: await db.ran(viewer!, page), total: (await db.store.feed(viewer!, page)).total })
      }
      expect(ran).toEqual(ROWS.map((r) => ({ case: r.case, plan: r.plan, total: r.followed })))
    } finally {
      await db.close()
    }
  }, 30_000)
})

skipIf(why.postgresOnly).describe('the cost model rendered as SQL (PostgreSQL)', () => {
  test('picks what it picks on numbers, for every combination of the cases’ counts and their neighbours', async () => {
    const sql = new SQL({ url: await testDatabaseUrl(), max: 1 })
    try {
      // each count of the cases, and one less and one more for those the costs divide by or scale with
      const of = (k: keyof Counts, near: boolean) => [...new Set(ROWS.flatMap((r) => (near ? [r[k] - 1, r[k], r[k] + 1] : [r[k]])))]
      const grid: Counts[] = []
      for (const authors of of('authors', false))
        for (const followed of of('followed', true).filter((n) => n >= 0))
          for (const articles of of('articles', true))
            for (const offset of of('offset', false))
              for (const limit of [1, ...of('limit', false)]) grid.push({ authors, followed, articles, offset, limit })
      const column = (k: keyof Counts) => grid.map((r) => r[k])
      const choice = pgFeedChoice(
        {
          followed: 'g.followed::float8',
          authors: 'g.authors::float8',
          articles: 'g.articles::float8',
          offset: 'g.o::float8',
          limit: 'g.l::float8',
        },
        { none: "'none'", sort: "'sort'", walk: "'walk'", merge: "'merge'" },
      )
      const rows = await sql.unsafe(
        `SELECT ${choice} AS plan FROM unnest($1::int[], $2::int[], $3::bigint[], $4::bigint[], $5::int[])
           WITH ORDINALITY AS g(authors, followed, articles, o, l, i) ORDER BY g.i`,
        [column('authors'), column('followed'), column('articles'), column('offset'), column('limit')] as never[],
      )
      expect(rows.length).toBe(grid.length)
      const differ = grid.map((r, i) => ({ ...r, model: model(r), sql: rows[i].plan as FeedChoice })).filter((r) => r.model !== r.sql)
      expect(differ).toEqual([])
    } finally {
      await sql.close()
    }
  })
})
