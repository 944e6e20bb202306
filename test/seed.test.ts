import { describe, expect, test } from 'bun:test'
import { openDatabase } from '../src/db/sqlite/open.ts'
import { migrate } from '../src/db/sqlite/migrate.ts'
import { seedDatabase } from '../src/db/seed.ts'

const TABLES = ['users', 'follows', 'articles', 'tags', 'article_tags', 'favorites', 'comments', 'counters']

function seeded(seed: number) {
  const db = openDatabase(':memory:')
  migrate(db)
  const counts = seedDatabase(db, {
    users: 50,
    articles: 400,
    tags: 30,
    follows: 5,
    favoritesPerArticle: 1,
    commentsPerArticle: 0.5,
    seed,
    passwordHash: 'not-a-real-hash',
  })
  return { db, counts }
}

const contents = (db: ReturnType<typeof openDatabase>) =>
  TABLES.map((t) => JSON.stringify(db.query(`SELECT * FROM ${t} ORDER BY 1, 2`).all()))

describe('conduit seed', () => {
  test('gives the same data for the same seed, and other data for another seed', () => {
    const a = seeded(7)
    const b = seeded(7)
    const c = seeded(8)
    expect(contents(a.db)).toEqual(contents(b.db))
    expect(contents(a.db)).not.toEqual(contents(c.db))
    expect(a.counts).toMatchObject({ users: 50, articles: 400 })
  })

  test('leaves every trigger-kept counter equal to the rows, and ids in creation order', () => {
    const { db } = seeded(3)
    const n = (sql: string) => (db.query(sql).get() as { n: number }).n
    expect(n("SELECT value AS n FROM counters WHERE name = 'articles'")).toBe(n('SELECT count(*) AS n FROM articles'))
    expect(n('SELECT count(*) AS n FROM users WHERE articles_count <> (SELECT count(*) FROM articles WHERE author_id = users.id)')).toBe(0)
    expect(n('SELECT count(*) AS n FROM users WHERE favorites_count <> (SELECT count(*) FROM favorites WHERE user_id = users.id)')).toBe(0)
    expect(n('SELECT count(*) AS n FROM articles WHERE favorites_count <> (SELECT count(*) FROM favorites WHERE article_id = articles.id)')).toBe(0)
    expect(n('SELECT count(*) AS n FROM tags WHERE articles_count <> (SELECT count(*) FROM article_tags WHERE tag_id = tags.id)')).toBe(0)
    expect(n('SELECT count(*) AS n FROM articles a JOIN articles b ON b.id > a.id AND b.created_at < a.created_at')).toBe(0)
    // the triggers are back after the load
    expect(n("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'trigger'")).toBe(6)
  })

  test('refuses a database that already has users', () => {
    const { db } = seeded(1)
    expect(() =>
      seedDatabase(db, { users: 1, articles: 1, tags: 1, follows: 0, favoritesPerArticle: 0, commentsPerArticle: 0, seed: 1, passwordHash: 'x' }),
    ).toThrow('empty database')
  })
})
