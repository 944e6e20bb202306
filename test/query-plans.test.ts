import type { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { CLAUSES, FEED_WALK, genericPlan, ITEM_PARTS_SQL, type Plan, pageSql, SINGLE } from '../src/articles/list.ts'
import type { TestApp } from './support/app.ts'
import { conduitApp, listArticles, slugsOf } from './support/conduit.ts'
import { registerUser } from './support/fixtures.ts'

/**
 * The statements of src/articles/list.ts (and the tag cloud of
 * src/tags/queries.ts). bun:sqlite's `db.query` caches statements by their
 * text, so `db.query(sql)` returns the app's own statement, and its
 * `toString()` shows the values the app's last run bound. That proves these
 * are the statements the app runs, and shows how many ids one run handled.
 */
const page = (plan: Plan) => pageSql(plan.ids, plan.count)
const SQL = {
  item: { parts: ITEM_PARTS_SQL },
  none: { ...SINGLE.none, page: page(SINGLE.none) },
  tag: { ...SINGLE.tag, page: page(SINGLE.tag) },
  author: { ...SINGLE.author, page: page(SINGLE.author) },
  favorited: { ...SINGLE.favorited, page: page(SINGLE.favorited) },
  feed: { ...SINGLE.feed, page: pageSql(SINGLE.feed.ids, ':followed'), walk: pageSql(FEED_WALK, ':followed') },
  tags: `SELECT coalesce(json_group_array(name ORDER BY articles_count DESC, name), '[]') AS json
     FROM tags WHERE articles_count > 0`,
}
type Filter = keyof typeof CLAUSES
const generic = (present: Filter[]) => {
  const plan = genericPlan(present)
  return { ...plan, page: page(plan) }
}

const WRITERS = 30
const ARTICLES = 300
const TAGS = 10

/**
 * A fresh app whose database holds 300 articles by 30 writers with 10 tags,
 * 600 favorites and 5 follows per writer, plus one reader registered through
 * HTTP who follows 3 writers and favorited 4 articles.
 *
 * The rows go in with plain SQL through `db.prepare`, which (unlike
 * `db.query`) leaves bun:sqlite's statement cache alone: that cache keeps only
 * the 20 most recently used texts, and the app's own list statements must
 * stay in it so `lastRun` can read what they bound. The triggers keep the
 * counters exactly as they do for writes through the API.
 */
async function seeded(analyze: boolean) {
  const app = conduitApp()
  const db = app.db
  // the app prepared these when it was built: mark them recently used
  for (const sql of Object.values(SQL.item)) db.query(sql)

  const user = db.prepare<{ id: number }, [string]>(
    "INSERT INTO users (username, email, password_hash, created_at) VALUES (?1, ?1 || '@example.com', 'not-a-hash', 0) RETURNING id",
  )
  const article = db.prepare<{ id: number }, [string, number, number]>(
    "INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES (?1, ?1, 'd', 'b', ?2, ?3, ?3) RETURNING id",
  )
  const tag = db.prepare<{ id: number }, [string]>('INSERT INTO tags (name) VALUES (?) RETURNING id')
  const link = db.prepare('INSERT INTO article_tags (tag_id, article_id) VALUES (?, ?)')
  const fav = db.prepare('INSERT OR IGNORE INTO favorites (user_id, article_id) VALUES (?, ?)')
  const follows = db.prepare('INSERT OR IGNORE INTO follows (follower_id, followee_id) VALUES (?, ?)')

  const writers: number[] = []
  const articles: number[] = []
  db.transaction(() => {
    for (let i = 0; i < WRITERS; i++) writers.push(user.get(`writer${i}`)!.id)
    const tags = Array.from({ length: TAGS }, (_, i) => tag.get(`tag${i}`)!.id)
    const start = Date.parse('2026-01-01T00:00:00.000Z')
    for (let i = 0; i < ARTICLES; i++) {
      const id = article.get(`article-${i}`, writers[i % WRITERS]!, start + i * 1000)!.id
      articles.push(id)
      link.run(tags[i % TAGS]!, id)
      link.run(tags[(i * 3 + 1) % TAGS]!, id)
    }
    for (let i = 0; i < 600; i++) fav.run(writers[i % WRITERS]!, articles[(i * 7) % ARTICLES]!)
    for (let i = 0; i < WRITERS; i++) for (let j = 1; j <= 5; j++) follows.run(writers[i]!, writers[(i + j) % WRITERS]!)
  })()

  const reader = await registerUser(app)
  const readerId = db.query<{ id: number }, [string]>('SELECT id FROM users WHERE username = ?').get(reader.username)!.id
  for (const w of writers.slice(0, 3)) follows.run(readerId, w)
  for (const a of articles.slice(0, 4)) fav.run(readerId, a)
  if (analyze) db.run('ANALYZE')
  return { app, db, reader, readerId }
}

/** EXPLAIN QUERY PLAN, one detail line per step. */
const plan = (db: Database, sql: string): string[] =>
  db.query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => r.detail)

/** Steps that read a whole table or index: every `SCAN` but those of json_each and constant rows. */
const fullScans = (steps: string[]) => steps.filter((s) => /^SCAN /.test(s) && !/VIRTUAL TABLE|CONSTANT ROW/.test(s))
const sorts = (steps: string[]) => steps.filter((s) => s.startsWith('USE TEMP B-TREE FOR ORDER BY'))

/** The expanded SQL of the cached statement, showing the values its last run bound. */
const lastRun = (db: Database, sql: string) => db.query(sql).toString()

/** The JSON array of ids the statement's last run bound to :ids. */
function boundIds(db: Database, sql: string): number[] {
  const m = /json_each\('(\[[\d,]*\])'\)/.exec(lastRun(db, sql))
  expect(m).not.toBeNull()
  return JSON.parse(m![1]!)
}
const idsOfSlugs = (db: Database, slugs: string[]) =>
  slugs.map((slug) => db.query<{ id: number }, [string]>('SELECT id FROM articles WHERE slug = ?').get(slug)!.id)
const authorIds = (db: Database, ids: number[]) =>
  [...new Set(ids.map((id) => db.query<{ a: number }, [number]>('SELECT author_id AS a FROM articles WHERE id = ?').get(id)!.a))]
const sorted = (ids: number[]) => [...ids].sort((x, y) => x - y)

describe('the statements checked here are the ones the app runs', () => {
  test('each single-filter page binds its value to the copied statements', async () => {
    const { app, db, reader } = await seeded(false)
    const cases: [Filter, string, string][] = [
      ['tag', 'tag3', "'tag3'"],
      ['author', 'writer4', "'writer4'"],
      ['favorited', 'writer5', "'writer5'"],
    ]
    for (const [key, value, bound] of cases) {
      const res = await listArticles(app, [[key, value], ['limit', 7]])
      expect(res.status).toBe(200)
      expect(lastRun(db, SQL[key].page)).toContain(bound)
      expect(lastRun(db, SQL[key].page)).toContain('LIMIT 7 OFFSET 0')
    }
    await listArticles(app, [['limit', 9], ['offset', 2]])
    expect(lastRun(db, SQL.none.page)).toContain('LIMIT 9 OFFSET 2')
    await listArticles(app, [['limit', 11]], { token: reader.token, feed: true })
    // 30 followed of 300 articles: sorting 30 beats walking ~110
    expect(lastRun(db, SQL.feed.page)).toContain('LIMIT 11 OFFSET 0')
    await listArticles(app, [['limit', 1]], { token: reader.token, feed: true })
    // a page of 1: walking ~10 beats sorting 30
    expect(lastRun(db, SQL.feed.walk)).toContain('LIMIT 1 OFFSET 0')
  })

  test('several values bind a JSON array to the copied generic statement', async () => {
    const { app, db } = await seeded(false)
    const res = await listArticles(app, [['tag', 'tag1'], ['tag', 'tag2'], ['author', 'writer1'], ['limit', 3]])
    expect(res.status).toBe(200)
    const sql = generic(['tag', 'author'])
    expect(lastRun(db, sql.page)).toContain(`json_each('["tag1","tag2"]')`)
    expect(lastRun(db, sql.page)).toContain('LIMIT 3 OFFSET 0')
    expect(lastRun(db, sql.page)).toContain(`json_each('["writer1"]')`)
  })
})

describe.each([
  ['on a fresh database', false],
  ['after ANALYZE', true],
])('query plans %s', (_, analyze) => {
  test('a single tag, author or favorited filter walks an index and stops after the page', async () => {
    const { db } = await seeded(analyze)
    const expected = {
      tag: 'SEARCH article_tags USING PRIMARY KEY (tag_id=?)',
      author: 'SEARCH articles USING COVERING INDEX articles_by_author (author_id=?)',
      favorited: 'SEARCH favorites USING PRIMARY KEY (user_id=?)',
    }
    for (const key of ['tag', 'author', 'favorited'] as const) {
      const steps = plan(db, SQL[key].ids)
      expect({ key, fullScans: fullScans(steps), sorts: sorts(steps) }).toEqual({ key, fullScans: [], sorts: [] })
      expect(steps).toContain(expected[key])
      expect(steps.join('\n')).not.toMatch(/SCAN (articles|article_tags|favorites)\b/)
    }
  })

  test('the unfiltered page walks the articles newest first and stops after the page, without sorting', async () => {
    const { db } = await seeded(analyze)
    // one reverse walk (of the table or an index in creation order) that LIMIT ends after one page
    const steps = plan(db, SQL.none.ids)
    expect(sorts(steps)).toEqual([])
    expect(steps).toHaveLength(1)
    expect(steps[0]).toMatch(/^SCAN articles( USING (COVERING )?INDEX \w+)?$/)
  })

  test('every count reads a counter or an index, never the table', async () => {
    const { db } = await seeded(analyze)
    for (const key of ['none', 'tag', 'author', 'favorited', 'feed'] as const) {
      const steps = plan(db, SQL[key].count)
      expect({ key, fullScans: fullScans(steps) }).toEqual({ key, fullScans: [] })
      expect(steps.some((s) => s.startsWith('SEARCH '))).toBe(true)
    }
  })

  test('the feed finds the followed authors’ articles through indexes', async () => {
    const { db } = await seeded(analyze)
    const steps = plan(db, SQL.feed.ids)
    expect(fullScans(steps)).toEqual([])
    expect(steps).toContain('SEARCH follows USING PRIMARY KEY (follower_id=?)')
    expect(steps.join('\n')).toMatch(/SEARCH articles USING (COVERING )?INDEX articles_by_author \(author_id=\?\)/)
  })

  test('several values and several filters look every value up through an index', async () => {
    const { db } = await seeded(analyze)
    const combinations: Filter[][] = [['tag'], ['author'], ['favorited'], ['tag', 'author'], ['tag', 'favorited'], ['tag', 'author', 'favorited']]
    for (const present of combinations) {
      const g = generic(present)
      for (const sql of [g.ids, g.count]) {
        const steps = plan(db, sql)
        expect({ present, fullScans: fullScans(steps) }).toEqual({ present, fullScans: [] })
      }
    }
  })

  test('a page is rendered by primary-key lookups, with every detail found through an index', async () => {
    const { db } = await seeded(analyze)
    const parts = plan(db, SQL.item.parts)
    expect(fullScans(parts)).toEqual([])
    // the page's ids drive the statement: one pass over json_each, each article and author by primary key
    expect(parts).toContain('SEARCH a USING INTEGER PRIMARY KEY (rowid=?)')
    expect(parts).toContain('SEARCH u USING INTEGER PRIMARY KEY (rowid=?)')
    expect(parts.join('\n')).toMatch(/SEARCH at USING (COVERING )?INDEX article_tags_by_article \(article_id=\?\)/)

  })

  test('a page statement loops over the page ids only, finding flags and article by primary key', async () => {
    const { db } = await seeded(analyze)
    const pages = [SQL.none.page, SQL.tag.page, SQL.author.page, SQL.favorited.page, SQL.feed.page, SQL.feed.walk, generic(['tag', 'author']).page]
    for (const sql of pages) {
      const steps = plan(db, sql)
      // the ids are picked in a co-routine; the outer loop is over them, not over a table
      expect(steps[0]).toBe('CO-ROUTINE p')
      expect(steps).toContain('SCAN p')
      expect(steps.filter((s) => /^SCAN (a|articles)\b/.test(s) && !s.includes('articles_recent'))).toEqual([])
      expect(steps.join('\n')).not.toMatch(/AUTOMATIC|BLOOM FILTER ON p/)
      expect(steps).toContain('SEARCH a USING INTEGER PRIMARY KEY (rowid=?)')
      expect(steps).toContain('SEARCH f USING PRIMARY KEY (user_id=? AND article_id=?)')
      expect(steps).toContain('SEARCH w USING PRIMARY KEY (follower_id=? AND followee_id=?)')
    }
  })

  test('the tag cloud reads the popularity index, not the table', async () => {
    const { db } = await seeded(analyze)
    const steps = plan(db, SQL.tags)
    expect(fullScans(steps)).toEqual([])
    expect(steps.join('\n')).toMatch(/SEARCH tags USING (COVERING )?INDEX tags_by_popularity/)
  })
})

describe('the cost of a page', () => {
  test('a page of 5 and a page of 100 run the same statements, each once', async () => {
    const { app, db, reader, readerId } = await seeded(false)
    // signed in, so no finished body comes from the anonymous cache; the pages share no article
    for (const [limit, offset] of [
      [5, 0],
      [100, 5],
    ]) {
      const res = await listArticles(app, [['limit', limit!], ['offset', offset!]], { token: reader.token })
      expect(res.body.articlesCount).toBe(ARTICLES)
      const ids = idsOfSlugs(db, slugsOf(res))
      expect(ids).toHaveLength(limit!)
      // one run picked the whole page of ids ...
      expect(lastRun(db, SQL.none.page)).toContain(`LIMIT ${limit} OFFSET ${offset}`)
      // ... with the viewer's flags in the same statement ...
      expect(lastRun(db, SQL.none.page)).toContain(`f.user_id = ${readerId}`)
      // ... and one run built all its items: no statement per article
      expect(sorted(boundIds(db, SQL.item.parts))).toEqual(sorted(ids))
      expectFlagsOfDatabase(db, readerId, res.body.articles)
    }
  })

  test('filtered pages and the feed build their missing items in one statement too', async () => {
    const { app, db, reader, readerId } = await seeded(false)
    const requests: [string, string | number][][] = [
      [['tag', 'tag3'], ['limit', 100]],
      [['tag', 'tag1'], ['tag', 'tag2'], ['limit', 100]],
    ]
    for (const params of requests) {
      const res = await listArticles(app, params, { token: reader.token })
      expect(res.status).toBe(200)
      const ids = idsOfSlugs(db, slugsOf(res))
      expect(ids.length).toBeGreaterThan(20)
      // items already cached by the previous page are not built again
      expect(boundIds(db, SQL.item.parts).every((id) => ids.includes(id))).toBe(true)
      expectFlagsOfDatabase(db, readerId, res.body.articles)
    }
    const feed = await listArticles(app, [['limit', 100]], { token: reader.token, feed: true })
    // 3 followed writers, 10 articles each
    expect(feed.body.articlesCount).toBe(3 * (ARTICLES / WRITERS))
    const ids = idsOfSlugs(db, slugsOf(feed))
    expect(ids).toHaveLength(30)
    expect(sorted(authorIds(db, ids))).toHaveLength(3)
    expectFlagsOfDatabase(db, readerId, feed.body.articles)
  })
})

/** Each item's `favorited` and `author.following` agree with the rows, for the viewer. */
function expectFlagsOfDatabase(
  db: Database,
  viewer: number,
  articles: { slug: string; favorited: boolean; author: { username: string; following: boolean } }[],
) {
  expect(articles.length).toBeGreaterThan(0)
  for (const a of articles) {
    const row = db
      .query<{ favorited: number; following: number }, [number, string, string]>(
        `SELECT EXISTS (SELECT 1 FROM favorites f JOIN articles x ON x.id = f.article_id WHERE f.user_id = ?1 AND x.slug = ?2) AS favorited,
                EXISTS (SELECT 1 FROM follows w JOIN users u ON u.id = w.followee_id WHERE w.follower_id = ?1 AND u.username = ?3) AS following`,
      )
      .get(viewer, a.slug, a.author.username)!
    expect({ slug: a.slug, favorited: a.favorited, following: a.author.following }).toEqual({
      slug: a.slug,
      favorited: row.favorited === 1,
      following: row.following === 1,
    })
  }
}
