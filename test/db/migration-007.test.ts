import { describe, expect, test } from 'bun:test'
import { testApp } from '../support/app.ts'
import { type QueryDb, testDatabase } from '../support/backend.ts'
import { createArticle, registerUser } from '../support/fixtures.ts'

/**
 * Migration 007: article ids are never reused (SQLite gave a new article the
 * id of the newest one deleted; PostgreSQL's identity never did). A database
 * at version 6 with articles, a tag, favorites and a comment: after the
 * migration every row and count is as it was, the triggers and foreign keys
 * still work, and an article created after the newest was deleted takes a
 * new id.
 */
describe('migration 007: lasting article ids', () => {
  const before = async (q: QueryDb) => {
    await q.run(
      "INSERT INTO users (username, username_key, email, password_hash, created_at) VALUES ('old', 'old', 'old@example.com', 'x', 1)",
    )
    for (const n of [1, 2, 3]) {
      await q.run(
        'INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)',
        `a-${n}`,
        `Title ${n}`,
        `About ${n}`,
        `Body ${n}`,
        n,
        n,
      )
    }
    await q.run("INSERT INTO tags (name) VALUES ('kept')")
    await q.run('INSERT INTO article_tags (tag_id, article_id) VALUES (1, 1)')
    await q.run('INSERT INTO favorites (user_id, article_id) VALUES (1, 1)')
    await q.run('INSERT INTO favorites (user_id, article_id) VALUES (1, 3)')
    await q.run("INSERT INTO comments (article_id, author_id, body, created_at, updated_at) VALUES (3, 1, 'A comment', 5, 5)")
    await q.run('DELETE FROM articles WHERE id = 2')
    // planner statistics, as a seeded database or a shutdown's PRAGMA optimize leaves them
    if (q.backend === 'sqlite') await q.run('ANALYZE')
  }
  const state = async (q: QueryDb) => ({
    // (bigint columns: PostgreSQL's client answers text; the columns version 7 had, named: a later one adds its own)
    articles: (
      await q.all<Record<string, unknown>>(
        'SELECT id, slug, title, description, body, author_id, favorites_count, created_at, updated_at FROM articles ORDER BY id',
      )
    ).map((a) => ({
      ...a,
      created_at: Number(a.created_at),
      updated_at: Number(a.updated_at),
    })),
    user: await q.get('SELECT articles_count, favorites_count FROM users WHERE id = 1'),
    counted: await q.count("SELECT value FROM counters WHERE name = 'articles'"),
    tags: await q.all('SELECT t.name, t.articles_count, a.article_id FROM tags t JOIN article_tags a ON a.tag_id = t.id'),
    favorites: await q.all('SELECT user_id, article_id FROM favorites ORDER BY article_id'),
    comments: await q.all('SELECT article_id, body FROM comments'),
  })

  test('keeps every row and count; the newest article deleted, the next one takes a new id', async () => {
    const db = await testDatabase({ version: 6, before })
    expect(await state(db)).toEqual({
      articles: [1, 3].map((n) => ({
        id: n,
        slug: `a-${n}`,
        title: `Title ${n}`,
        description: `About ${n}`,
        body: `Body ${n}`,
        author_id: 1,
        favorites_count: 1,
        created_at: n,
        updated_at: n,
      })),
      user: { articles_count: 2, favorites_count: 2 },
      counted: 2,
      tags: [{ name: 'kept', articles_count: 1, article_id: 1 }],
      favorites: [
        { user_id: 1, article_id: 1 },
        { user_id: 1, article_id: 3 },
      ],
      comments: [{ article_id: 3, body: 'A comment' }],
    })
    if (db.backend === 'sqlite') {
      // the rebuilt table's statistics are made again (without them its queries are planned blind)
      expect(await db.all("SELECT idx FROM sqlite_stat1 WHERE tbl = 'articles' ORDER BY idx")).toEqual([
        { idx: 'articles_by_author' },
        { idx: 'articles_recent' },
        { idx: 'sqlite_autoindex_articles_1' },
      ])
      // the hand-edit triggers are back: an edit by hand is counted
      const seen = await db.count('SELECT edits FROM writer')
      await db.run("UPDATE articles SET title = 'Title 1' WHERE id = 1")
      expect(await db.count('SELECT edits FROM writer')).toBe(seen + 1)
    }

    const app = await testApp({}, db)
    const jake = await registerUser(app)
    const first = await createArticle(app, jake.token, { title: 'After' })
    expect(await db.count('SELECT id FROM articles WHERE slug = ?', first.slug)).toBe(4)
    expect((await app.request('DELETE', `/api/articles/${first.slug}`, { token: jake.token })).status).toBe(204)
    const next = await createArticle(app, jake.token, { title: 'Again' })
    expect(await db.count('SELECT id FROM articles WHERE slug = ?', next.slug)).toBe(5)
    expect(await db.count("SELECT value FROM counters WHERE name = 'articles'")).toBe(3)

    // deleting cascades and counts as before; a favorite of a missing article is refused
    await db.run('DELETE FROM articles WHERE id = 3')
    expect(await db.count('SELECT count(*) FROM comments')).toBe(0)
    expect(await db.get('SELECT articles_count, favorites_count FROM users WHERE id = 1')).toEqual({
      articles_count: 1,
      favorites_count: 1,
    })
    await expect(db.run('INSERT INTO favorites (user_id, article_id) VALUES (1, 99)')).rejects.toThrow()
  })
})
