import { describe, expect, test } from 'bun:test'
import { NotEmptyError, seedDatabase } from '../../src/cli/seed-data.ts'
import { storageViolations } from '../reliability/invariants.ts'
import { onPostgres, type TestDatabase, testDatabase } from '../support/backend.ts'

const TABLES = ['users', 'follows', 'articles', 'tags', 'article_tags', 'favorites', 'comments', 'counters']

async function seeded(seed: number) {
  const db = await testDatabase()
  const counts = await seedDatabase(db.store.bulk, {
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

const contents = async (db: TestDatabase) => {
  const out: string[] = []
  for (const t of TABLES) out.push(JSON.stringify(await db.all(`SELECT * FROM ${t} ORDER BY 1, 2`)))
  return out
}

describe('conduit seed', () => {
  test('gives the same data for the same seed, and other data for another seed', async () => {
    const a = await seeded(7)
    const b = await seeded(7)
    const c = await seeded(8)
    expect(await contents(a.db)).toEqual(await contents(b.db))
    expect(await contents(a.db)).not.toEqual(await contents(c.db))
    expect(a.counts).toMatchObject({ users: 50, articles: 400 })
  })

  test('leaves every trigger-kept counter equal to the rows, ids in creation order, and the triggers in place', async () => {
    const { db } = await seeded(3)
    expect(await storageViolations(db)).toEqual([])
    expect(await db.count('SELECT count(*) FROM articles a JOIN articles b ON b.id > a.id AND b.created_at < a.created_at')).toBe(0)
    // every trigger a fresh database has (counters, changes by hand), enabled
    const triggers = onPostgres
      ? "SELECT c.relname || '.' || t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND t.tgenabled = 'O' AND c.relnamespace = current_schema()::regnamespace ORDER BY 1"
      : "SELECT tbl_name || '.' || name AS name FROM sqlite_schema WHERE type = 'trigger' ORDER BY 1"
    const fresh = await (await testDatabase()).all(triggers)
    expect(fresh.length).toBe(onPostgres ? 11 : 30)
    expect(await db.all(triggers)).toEqual(fresh)
    // a write through the API after seeding keeps counting
    const before = await db.count("SELECT value FROM counters WHERE name = 'articles'")
    await db.run(
      "INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES ('after', 't', 'd', 'b', 1, 1, 1)",
    )
    expect(await db.count("SELECT value FROM counters WHERE name = 'articles'")).toBe(before + 1)
  })

  test('hands out new ids after the seeded ones', async () => {
    const { db } = await seeded(2)
    const max = await db.count('SELECT max(id) FROM comments')
    await db.run("INSERT INTO comments (article_id, author_id, body, created_at, updated_at) VALUES (1, 1, 'new', 1, 1)")
    expect(await db.count("SELECT id FROM comments WHERE body = 'new'")).toBe(max + 1)
  })

  test('refuses a database that already has users', async () => {
    const { db } = await seeded(1)
    const again = seedDatabase(db.store.bulk, {
      users: 1,
      articles: 1,
      tags: 1,
      follows: 0,
      favoritesPerArticle: 0,
      commentsPerArticle: 0,
      seed: 1,
      passwordHash: 'x',
    })
    expect(again).rejects.toBeInstanceOf(NotEmptyError)
  })
})
