import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { Database } from 'bun:sqlite'
import { createApp } from '../../src/app.ts'
import { type CLAUSES, FEED_NEWEST_OF_AUTHOR, FEED_WALK, genericPlan, MULTI, SINGLE } from '../../src/articles/list-sqlite.ts'
import { PG_FEED, PG_MULTI, PG_SINGLE, pgGeneric } from '../../src/articles/list-postgres.ts'
import { PG_ARTICLE_READS } from '../../src/articles/postgres.ts'
import { SQLITE_ARTICLE_READS } from '../../src/articles/sqlite.ts'
import { PG_COMMENTS } from '../../src/comments/postgres.ts'
import { SQLITE_COMMENTS } from '../../src/comments/sqlite.ts'
import { sqliteBulk } from '../../src/db/bulk.ts'
import { SqliteChanges } from '../../src/db/sqlite/changes.ts'
import { ANALYZE_FIRST_ROWS, PG_CHANGES_SINCE } from '../../src/db/postgres/changes.ts'
import { seedDatabase } from '../../src/cli/seed-data.ts'
import { migrate } from '../../src/db/sqlite/migrate.ts'
import { openDatabase } from '../../src/db/sqlite/open.ts'
import { sqliteStore } from '../../src/db/sqlite/store.ts'
import { PG_PROFILE_READS } from '../../src/profiles/postgres.ts'
import { SQLITE_PROFILE_READS } from '../../src/profiles/sqlite.ts'
import { PG_TAGS } from '../../src/tags/postgres.ts'
import { SQLITE_TAGS } from '../../src/tags/sqlite.ts'
import { send, testConfig } from '../support/app.ts'
import { onPostgres, testDatabaseUrl } from '../support/backend.ts'
import { conduitApp, registerUsers } from '../support/conduit.ts'
import { createArticle } from '../support/fixtures.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * Every hot read uses an index and stops early: EXPLAIN on a seeded database
 * of each backend, over the very statement texts the stores run (imported
 * from them). Then the cost of a page in statements: a fixed, small number
 * whatever its size (no N+1).
 */
type Filter = keyof typeof CLAUSES
const COMBINATIONS: Filter[][] = [
  ['tag'],
  ['author'],
  ['favorited'],
  ['tag', 'author'],
  ['tag', 'favorited'],
  ['tag', 'author', 'favorited'],
]

// ------------------------------------------------------------------ SQLite

/** A seeded SQLite database (3,000 articles), optionally analyzed. */
async function sqliteSeeded(analyze: boolean): Promise<Database> {
  const db = openDatabase(':memory:')
  migrate(db)
  await seedDatabase(sqliteBulk(db, new SqliteChanges(db)), {
    users: 60,
    articles: 3000,
    tags: 40,
    follows: 5,
    favoritesPerArticle: 1,
    commentsPerArticle: 0.5,
    seed: 11,
    passwordHash: 'x',
  })
  if (!analyze) db.run('DELETE FROM sqlite_stat1')
  return db
}

const sqlitePlan = (db: Database, sql: string): string[] =>
  db
    .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`)
    .all()
    .map((r) => r.detail)
/** Steps that read a whole table or index: every `SCAN` but those of json_each and constant rows. */
const fullScans = (steps: string[]) => steps.filter((s) => /^SCAN /.test(s) && !/VIRTUAL TABLE|CONSTANT ROW/.test(s))

skipIf(why.sqliteOnly).describeEach(
  [
    ['on a fresh database', false],
    ['after ANALYZE', true],
  ] as [string, boolean][],
  'SQLite query plans %s',
  (_, analyze) => {
    test('a single tag, author or favorited filter walks an index and stops after the page; counts read counters', async () => {
      const db = await sqliteSeeded(analyze)
      const expected = {
        tag: 'SEARCH article_tags USING PRIMARY KEY (tag_id=?)',
        author: 'SEARCH articles USING COVERING INDEX articles_by_author (author_id=?)',
        favorited: 'SEARCH favorites USING PRIMARY KEY (user_id=?)',
      }
      for (const key of ['tag', 'author', 'favorited'] as const) {
        const steps = sqlitePlan(db, SINGLE[key].ids)
        expect({ key, fullScans: fullScans(steps), sorts: steps.filter((s) => s.includes('TEMP B-TREE')) }).toEqual({
          key,
          fullScans: [],
          sorts: [],
        })
        expect(steps).toContain(expected[key])
      }
      for (const key of ['none', 'tag', 'author', 'favorited', 'feed'] as const) {
        expect({ key, fullScans: fullScans(sqlitePlan(db, `SELECT (${SINGLE[key].count})`)) }).toEqual({ key, fullScans: [] })
      }
    })

    test('the unfiltered page walks the articles newest first, without sorting', async () => {
      const steps = sqlitePlan(await sqliteSeeded(analyze), SINGLE.none.ids)
      expect(steps).toHaveLength(1)
      expect(steps[0]).toMatch(/^SCAN articles( USING (COVERING )?INDEX \w+)?$/)
    })

    test('several values of one filter and several filters look every value up through an index', async () => {
      const db = await sqliteSeeded(analyze)
      for (const key of ['tag', 'author', 'favorited'] as const) {
        for (const sql of [MULTI[key].ids, MULTI[key].count])
          expect({ key, fullScans: fullScans(sqlitePlan(db, sql)) }).toEqual({ key, fullScans: [] })
      }
      for (const present of COMBINATIONS) {
        const g = genericPlan(present)
        for (const sql of [g.ids, g.count])
          expect({ present, fullScans: fullScans(sqlitePlan(db, sql)) }).toEqual({ present, fullScans: [] })
      }
    })

    test('the feed finds the followed authors’ articles through indexes', async () => {
      const db = await sqliteSeeded(analyze)
      const sort = sqlitePlan(db, SINGLE.feed.ids)
      expect(fullScans(sort)).toEqual([])
      expect(sort).toContain('SEARCH follows USING PRIMARY KEY (follower_id=?)')
      expect(sqlitePlan(db, FEED_NEWEST_OF_AUTHOR).join('\n')).toMatch(/SEARCH articles USING (COVERING )?INDEX articles_by_author/)
      // the walk is the newest-first walk, each author looked up by primary key
      expect(sqlitePlan(db, FEED_WALK)).toContain('SEARCH follows USING PRIMARY KEY (follower_id=? AND followee_id=?)')
    })

    test('items, articles, comments, tags, profiles and a viewer’s relations are read by key', async () => {
      const db = await sqliteSeeded(analyze)
      const reads = { ...SQLITE_ARTICLE_READS, ...SQLITE_PROFILE_READS, comments: SQLITE_COMMENTS }
      for (const [name, sql] of Object.entries(reads)) {
        expect({ name, fullScans: fullScans(sqlitePlan(db, sql)) }).toEqual({ name, fullScans: [] })
      }
      expect(sqlitePlan(db, SQLITE_ARTICLE_READS.items)).toContain('SEARCH a USING INTEGER PRIMARY KEY (rowid=?)')
      expect(sqlitePlan(db, SQLITE_COMMENTS).join('\n')).toMatch(/SEARCH c USING INDEX comments_by_article \(article_id=\?\)/)
      expect(sqlitePlan(db, SQLITE_TAGS).join('\n')).toMatch(/SEARCH tags USING (COVERING )?INDEX tags_by_popularity/)
    })
  },
)

// ------------------------------------------------------------------ PostgreSQL

interface PgNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PgNode[]
}
const nodes = (n: PgNode): PgNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

/**
 * A seeded PostgreSQL schema (20,000 articles, `users` users), analyzed: made
 * once per size, shared by its tests. A small users table matters: there the
 * planner would rather hash all of it than look a page's authors up by key.
 */
const seededPg = new Map<number, Promise<SQL>>()
const pgSeeded = (users: number) => seededPg.get(users) ?? seededPg.set(users, makePgSeeded(users)).get(users)!
async function makePgSeeded(users: number): Promise<SQL> {
  const url = await testDatabaseUrl()
  const schema = `plans_${Math.random().toString(36).slice(2, 8)}`
  const sql = new SQL({ url, max: 1, connection: { search_path: schema } } as ConstructorParameters<typeof SQL>[0])
  await sql.unsafe(`CREATE SCHEMA ${schema}`)
  const { migrate: pgMigrate } = await import('../../src/db/postgres/migrate.ts')
  await pgMigrate(sql)
  // rows straight in, triggers (counters) set aside: plans do not depend on them
  await sql.unsafe(`
    SET session_replication_role = replica;
    INSERT INTO users (username, username_key, email, password_hash, created_at)
      SELECT 'user' || i, 'user' || i, 'user' || i || '@x.io', 'x', 0 FROM generate_series(1, ${users}) i;
    INSERT INTO tags (name) SELECT 'tag' || i FROM generate_series(1, 2000) i;
    INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
      SELECT 'a-' || i, 't', 'd', 'b', 1 + i % ${users}, i, i FROM generate_series(1, 20000) i;
    INSERT INTO article_tags (tag_id, article_id) SELECT 1 + (i * 7) % 2000, i FROM generate_series(1, 20000) i;
    INSERT INTO article_tags (tag_id, article_id) SELECT 1 + (i * 13 + 1) % 2000, i FROM generate_series(1, 20000) i ON CONFLICT DO NOTHING;
    UPDATE tags SET articles_count = (SELECT count(*) FROM article_tags x WHERE x.tag_id = tags.id);
    INSERT INTO favorites (user_id, article_id) SELECT 1 + (i * 11) % ${users}, i FROM generate_series(1, 20000) i ON CONFLICT DO NOTHING;
    INSERT INTO follows (follower_id, followee_id)
      SELECT i, 1 + (i * 17 + k * 7) % ${users} FROM generate_series(1, ${users}) i, generate_series(1, 10) k
      WHERE 1 + (i * 17 + k * 7) % ${users} <> i ON CONFLICT DO NOTHING;
    INSERT INTO comments (article_id, author_id, body, created_at, updated_at) SELECT 1 + i % 20000, 1 + i % ${users}, 'c', i, i FROM generate_series(1, 5000) i;
    SET session_replication_role = origin;
    ANALYZE users, tags, articles, article_tags, favorites, follows, comments;
    -- the change log as a fresh database has it under writes: rows, no statistics yet
    ALTER TABLE changes SET (autovacuum_enabled = false);
    INSERT INTO changes (xid, keys, at) SELECT (1000 + i)::text::xid8, '1 2', i FROM generate_series(1, 3000) i;`)
  return sql
}

/** The plan's nodes for `text` run with `params` (a generic plan: what a prepared statement may use). */
async function pgPlan(sql: SQL, text: string, params: unknown[]): Promise<PgNode[]> {
  const [row] = await sql.unsafe(`EXPLAIN (FORMAT JSON) ${text}`, params as never[])
  const plan = (typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'])[0].Plan as PgNode
  return nodes(plan)
}
const BIG = new Set(['articles', 'article_tags', 'favorites', 'users', 'comments', 'follows', 'changes'])
const seqScans = (ns: PgNode[]) =>
  ns.filter((n) => n['Node Type'] === 'Seq Scan' && BIG.has(n['Relation Name'] ?? '')).map((n) => n['Relation Name'])
const indexes = (ns: PgNode[]) => ns.map((n) => n['Index Name']).filter(Boolean)

skipIf(why.postgresOnly).describeEach(
  [[1000], [5000]] as [number][],
  'PostgreSQL query plans (EXPLAIN on a seeded, analyzed database of %i users)',
  (users) => {
    test('every list page, single or several values, filters and the feed, reads through indexes', async () => {
      const sql = await pgSeeded(users)
      const cases: [string, string, unknown[], string[]][] = [
        ['none', PG_SINGLE.none, [20, 0], ['articles_recent']],
        ['tag', PG_SINGLE.tag, [20, 0, 'tag3'], ['article_tags_pkey']],
        ['author', PG_SINGLE.author, [20, 0, 'user4'], ['articles_by_author']],
        ['favorited', PG_SINGLE.favorited, [20, 0, 'user5'], ['favorites_pkey']],
        ['tags', PG_MULTI.tag, [20, 0, ['tag1', 'tag2']], ['article_tags_pkey']],
        ['authors', PG_MULTI.author, [20, 0, ['user1', 'user2']], ['articles_by_author']],
        ['favoriteds', PG_MULTI.favorited, [20, 0, ['user1', 'user2']], ['favorites_pkey']],
        ['feed', PG_FEED, [7, 20, 0], ['follows_pkey']],
      ]
      for (const present of COMBINATIONS) {
        cases.push([present.join('+'), pgGeneric(present), [20, 0, ...present.map(() => ['tag1', 'user1'])], []])
      }
      for (const [name, text, params, expected] of cases) {
        const ns = await pgPlan(sql, text, params)
        expect({ name, seqScans: seqScans(ns) }).toEqual({ name, seqScans: [] })
        for (const index of expected) expect({ name, indexes: indexes(ns) }).toEqual({ name, indexes: expect.arrayContaining([index]) })
      }
    }, 60_000)

    test('items, articles, comments, tags, profiles and a viewer’s relations are read by key', async () => {
      const sql = await pgSeeded(users)
      const cases: [string, string, unknown[]][] = [
        // a page's worth of ids, spread over the table
        ['items', PG_ARTICLE_READS.items, [Array.from({ length: 20 }, (_, i) => 1 + i * 997)]],
        ['full', PG_ARTICLE_READS.full, [5]],
        ['bySlug', PG_ARTICLE_READS.bySlug, ['a-9']],
        ['comments', PG_COMMENTS, [8]],
        ['tags', PG_TAGS, []],
        ['byName', PG_PROFILE_READS.byName, ['user3']],
        ['authors', PG_PROFILE_READS.authors, [[1, 2]]],
        ['relations', PG_PROFILE_READS.relations, [3, 5001]],
        ['favoritedAmong', PG_PROFILE_READS.favoritedAmong, [3, [1, 2]]],
        ['change log', PG_CHANGES_SINCE, ['3990', '3985,3987']],
      ]
      // every read of the two features is a case (the SQLite test above takes them all by itself)
      const texts = new Set(cases.map(([, text]) => text))
      expect(
        Object.entries({ ...PG_ARTICLE_READS, ...PG_PROFILE_READS })
          .filter(([, text]) => !texts.has(text))
          .map(([name]) => name),
      ).toEqual([])
      for (const [name, text, params] of cases) {
        expect({ name, seqScans: seqScans(await pgPlan(sql, text, params)) }).toEqual({ name, seqScans: [] })
      }
      // (the tag list returns every tag in use: PostgreSQL reads the small tags table and sorts it, as it should)

      // the change log with its statistics taken (as the app takes them, see PgChanges.wrote): even the
      // plan a prepared statement keeps for any parameters (a generic plan) reads it by key
      await sql.unsafe('ANALYZE changes')
      await sql.unsafe(`SET plan_cache_mode = force_generic_plan`)
      await sql.unsafe(`PREPARE changes_since (text, text) AS ${PG_CHANGES_SINCE}`)
      expect({ generic: seqScans(await pgPlan(sql, `EXECUTE changes_since('3990', '3985')`, [])) }).toEqual({ generic: [] })
      await sql.unsafe('DEALLOCATE changes_since; RESET plan_cache_mode')
      await sql.close()
      seededPg.delete(users)
    }, 60_000)
  },
)

// ------------------------------------------------------------------ the cost of a page

/** Counts the statements a store runs (reads and writes alike). */
function countingSqlite(db: Database): { db: Database; count: () => number } {
  let n = 0
  // the change check (PRAGMA data_version, a read of a counter in memory) is not a statement of the page
  const wrap = (stmt: object, sql: string) =>
    new Proxy(stmt, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver)
        if (typeof v === 'function' && ['all', 'get', 'run', 'values', 'iterate'].includes(String(prop)) && !sql.startsWith('PRAGMA')) {
          return (...args: unknown[]) => {
            n++
            return v.apply(target, args)
          }
        }
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver)
      if (prop === 'query' || prop === 'prepare') return (...args: unknown[]) => wrap(v.apply(target, args), String(args[0]))
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
  return { db: proxy, count: () => n }
}

/** Counts statements, leaving out the change log's reads (with SINGLE_INSTANCE, one a second in the background). */
function countingPostgres(sql: SQL): { sql: SQL; count: () => number } {
  let n = 0
  const proxy = new Proxy(sql, {
    apply(target, self, args) {
      if (!String((args[0] as string[] | undefined)?.[0]).includes('pg_current_snapshot()')) n++
      return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args)
    },
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver)
      if (prop === 'unsafe') {
        return (...args: unknown[]) => {
          if (args[0] !== PG_CHANGES_SINCE) n++
          return v.apply(target, args)
        }
      }
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
  return { sql: proxy, count: () => n }
}

async function countingApp() {
  if (!onPostgres) {
    const db = openDatabase(':memory:')
    migrate(db)
    const counting = countingSqlite(db)
    const store = sqliteStore(counting.db, ':memory:')
    return { store, count: counting.count, close: async () => db.close() }
  }
  const { connect } = await import('../../src/db/postgres/client.ts')
  const { migrate: pgMigrate } = await import('../../src/db/postgres/migrate.ts')
  const { postgresStore } = await import('../../src/db/postgres/store.ts')
  const url = await testDatabaseUrl()
  const schema = `pages_${Math.random().toString(36).slice(2, 8)}`
  const admin = new SQL({ url, max: 1 })
  await admin.unsafe(`CREATE SCHEMA ${schema}`)
  await admin.close()
  const sql = connect(url, { poolMax: 2, schema })
  await pgMigrate(sql)
  const counting = countingPostgres(sql)
  // one instance: no change-log read before each request
  const store = postgresStore(counting.sql, { poolMax: 2, location: url, singleInstance: true })
  return { store, count: counting.count, close: () => sql.close() }
}

describe('the cost of a page in statements (no N+1)', () => {
  test('a cold page of 5 and one of 100, and the feed, take a fixed number of statements whatever their size', async () => {
    const { store, count, close } = await countingApp()
    try {
      const config = testConfig({ passwordHash: { memoryCost: 256, timeCost: 1 } })
      const setup = await createApp({ store, config })
      const reg = async (username: string) =>
        (await send(setup, 'POST', '/api/users', { body: { user: { username, email: `${username}@x.io`, password: 'password123' } } })).body
          .user.token as string
      const writers = await Promise.all(['w1', 'w2', 'w3'].map(reg))
      for (let i = 0; i < 120; i++) {
        const res = await send(setup, 'POST', '/api/articles', {
          token: writers[i % 3]!,
          body: { article: { title: `T ${i}`, description: 'd', body: 'b', tagList: ['x'] } },
        })
        expect(res.status).toBe(201)
      }
      const reader = await reg('reader')
      for (const w of ['w1', 'w2']) expect((await send(setup, 'POST', `/api/profiles/${w}/follow`, { token: reader })).status).toBe(200)
      const statements: Record<string, number> = {}
      for (const path of [
        '/api/articles?limit=5',
        '/api/articles?limit=100&offset=5',
        '/api/articles/feed?limit=5',
        '/api/articles/feed?limit=50&offset=5',
      ]) {
        // a new app: cold caches (the token costs one read of its user)
        const app = await createApp({ store, config })
        expect((await send(app, 'GET', '/api/user', { token: reader })).status).toBe(200)
        const before = count()
        const res = await send(app, 'GET', path, { token: reader })
        expect(res.status).toBe(200)
        expect(res.body.articles.length).toBeGreaterThanOrEqual(5)
        statements[path] = count() - before
        // the same page again: from the cache, no statement at all
        const again = count()
        expect((await send(app, 'GET', path, { token: reader })).body).toEqual(res.body)
        expect(count() - again).toBe(0)
      }
      // PostgreSQL: three round trips (ids with count, items with authors, the viewer's flags) whatever the page size.
      // SQLite (no round trips): count, ids, items, followees, favorites; the feed first costs its plan from
      // the counters and the followees (two more statements).
      expect(statements).toEqual({
        '/api/articles?limit=5': onPostgres ? 3 : 5,
        '/api/articles?limit=100&offset=5': onPostgres ? 3 : 5,
        '/api/articles/feed?limit=5': onPostgres ? 3 : 7,
        '/api/articles/feed?limit=50&offset=5': onPostgres ? 3 : 7,
      })
    } finally {
      await close()
    }
  }, 60_000)

  test('a slug whose counter’s numbers were taken by titles ending in them costs the same however long that run', async () => {
    const { store, count, close } = await countingApp()
    try {
      const app = await createApp({ store, config: testConfig({ passwordHash: { memoryCost: 256, timeCost: 1 } }) })
      const token = (await send(app, 'POST', '/api/users', { body: { user: { username: 'w', email: 'w@x.io', password: 'password123' } } }))
        .body.user.token as string
      const create = async (title: string) => {
        const res = await send(app, 'POST', '/api/articles', { token, body: { article: { title, description: 'd', body: 'b' } } })
        expect(res.status).toBe(201)
        return res.body.article.slug as string
      }
      const cost: Record<string, number> = {}
      for (const [base, run] of [
        ['weekly', 5],
        ['daily', 40],
      ] as const) {
        // base, base-2 (the counter then says 3), then "Base 3" ... "Base <run + 2>": the counter's numbers taken
        await create(base)
        await create(base)
        for (let i = 3; i < run + 3; i++) await create(`${base} ${i}`)
        const before = count()
        expect(await create(base)).toBe(`${base}-${run + 3}`)
        cost[base] = count() - before
      }
      // (on PostgreSQL the counting client does not see a write transaction's statements: SQLite's count holds it)
      expect(cost.daily).toBe(cost.weekly!)
    } finally {
      await close()
    }
  }, 60_000)
})

skipIf(why.postgresOnly).describe('the change log’s statistics (PostgreSQL)', () => {
  /**
   * The change-log read is a prepared statement whose plan PostgreSQL keeps;
   * made while the log was near empty, it scans the whole log, however long
   * it grows, until statistics are taken again. The app takes them itself
   * (autovacuum may be off, as on this project's machines).
   */
  test('are taken after an instance’s first writes, and the log is vacuumed at each purge', async () => {
    const app = await conduitApp()
    const stats = async () =>
      (await app.db.get<{ last_analyze: unknown; last_vacuum: unknown }>(
        "SELECT last_analyze, last_vacuum FROM pg_stat_user_tables WHERE relname = 'changes' AND schemaname = current_schema()",
      ))!
    const [reader] = await registerUsers(app, 1)
    const article = await createArticle(app, reader!.token)
    expect((await stats()).last_analyze).toBeNull()
    // each favorite or unfavorite is one row of the log
    for (let i = 0; i < ANALYZE_FIRST_ROWS; i++) {
      const res = await app.request(i % 2 ? 'DELETE' : 'POST', `/api/articles/${article.slug}/favorite`, { token: reader!.token })
      expect(res.status).toBe(200)
    }
    let analyzed: unknown = null
    for (let tries = 0; tries < 50 && analyzed === null; tries++) {
      await Bun.sleep(100)
      analyzed = (await stats()).last_analyze
    }
    expect(analyzed).not.toBeNull()
    expect((await stats()).last_vacuum).toBeNull()
    await app.store.maintain()
    expect((await stats()).last_vacuum).not.toBeNull()
  }, 60_000)
})

skipIf(why.postgresOnly).describe('the service’s PostgreSQL connections', () => {
  // a statement estimated past jit_above_cost (a feed of thousands of authors) was compiled on each
  // run, ~44 ms, several times what it takes; PgBouncer (prepare: false) gets no startup settings
  test('run without JIT compilation', async () => {
    const { connect } = await import('../../src/db/postgres/client.ts')
    const url = await testDatabaseUrl()
    const plain = new SQL({ url, max: 1 })
    const serverDefault = (await plain.unsafe('SHOW jit'))[0].jit as string
    await plain.close()
    for (const [prepare, jit] of [
      [true, 'off'],
      [false, serverDefault],
    ] as const) {
      const sql = connect(url, { poolMax: 1, prepare })
      try {
        expect({ prepare, jit: (await sql.unsafe('SHOW jit'))[0].jit }).toEqual({ prepare, jit })
      } finally {
        await sql.close()
      }
    }
  })
})
