import { describe, expect, test } from 'bun:test'
import { conduitApp, follow, listArticles, registerUsers, slugsOf } from '../support/conduit.ts'
import { createArticle } from '../support/fixtures.ts'

/**
 * The feed picks one of three plans from its counters (src/articles/list-sqlite.ts,
 * list-postgres.ts): sorting the followed authors' articles, walking all
 * articles newest first, or merging each followed author's newest. Small
 * pages of a large feed take the walk, a page of 100 the sort, top pages of
 * a few authors among many articles the merge; all must give the same
 * articles in the same order.
 */
describe('the feed', () => {
  test('gives the same pages whichever plan serves them', async () => {
    const app = await conduitApp()
    const [reader, a, b, c] = await registerUsers(app, 4)
    for (let i = 0; i < 8; i++) {
      for (const author of [a!, b!, c!]) await createArticle(app, author.token, { title: `${author.username} ${i}` })
    }
    await follow(app, reader!.token, a!.username)
    await follow(app, reader!.token, b!.username)

    // 16 of 24 articles followed: a page of 100 sorts, pages of 1 walk
    const whole = await listArticles(app, [['limit', 100]], { token: reader!.token, feed: true })
    expect(whole.body.articlesCount).toBe(16)
    const expected = slugsOf(whole)
    expect(expected).toHaveLength(16)
    expect(whole.body.articles.every((x: { author: { username: string } }) => [a!.username, b!.username].includes(x.author.username))).toBe(
      true,
    )

    const oneByOne: string[] = []
    for (let offset = 0; offset < 18; offset++) {
      const res = await listArticles(
        app,
        [
          ['limit', 1],
          ['offset', offset],
        ],
        { token: reader!.token, feed: true },
      )
      expect(res.body.articlesCount).toBe(16)
      oneByOne.push(...slugsOf(res))
    }
    expect(oneByOne).toEqual(expected)
  })

  test('is empty, with a zero count, for a user who follows nobody', async () => {
    const app = await conduitApp()
    const [reader, writer] = await registerUsers(app, 2)
    await createArticle(app, writer!.token)
    const res = await listArticles(app, [], { token: reader!.token, feed: true })
    expect(res.body).toEqual({ articles: [], articlesCount: 0 })
  })
})

describe('the feed merging each followed author’s newest articles', () => {
  test('gives the newest-first pages of the followed authors among many other articles', async () => {
    const app = await conduitApp()
    const [reader] = await registerUsers(app, 1)
    const db = app.db
    const user = async (name: string) =>
      (await db.get<{ id: number }>(
        "INSERT INTO users (username, username_key, email, password_hash, created_at) VALUES (?, ?, ?, 'x', 0) RETURNING id",
        name,
        name,
        `${name}@example.com`,
      ))!.id
    const [a, b, c] = [await user('merge_a'), await user('merge_b'), await user('merge_c')]
    // 200 articles by the two followed authors scattered among 4,900 by another
    const values: string[] = []
    const params: unknown[] = []
    for (let i = 0; i < 5100; i++) {
      const author = i % 51 === 0 ? a : i % 51 === 1 ? b : c
      values.push("(?, 'x', 'x', 'x', ?, ?, ?)")
      params.push(`m-${i}`, author, 1_700_000_000_000 + i, 1_700_000_000_000 + i)
      if (values.length === 500) {
        await db.run(
          `INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES ${values.join(', ')}`,
          ...params,
        )
        values.length = 0
        params.length = 0
      }
    }
    if (values.length)
      await db.run(
        `INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES ${values.join(', ')}`,
        ...params,
      )
    const readerId = (await db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', reader!.username))!.id
    await db.run('INSERT INTO follows (follower_id, followee_id) VALUES (?, ?), (?, ?)', readerId, a, readerId, b)

    const expected = (await db.all<{ slug: string }>('SELECT slug FROM articles WHERE author_id IN (?, ?) ORDER BY id DESC', a, b)).map(
      (r) => r.slug,
    )
    expect(expected).toHaveLength(200)
    const pages: string[] = []
    for (let offset = 0; offset < 200; offset += 20) {
      const res = await listArticles(
        app,
        [
          ['limit', 20],
          ['offset', offset],
        ],
        { token: reader!.token, feed: true },
      )
      expect(res.body.articlesCount).toBe(200)
      pages.push(...slugsOf(res))
    }
    expect(pages).toEqual(expected)
  })
})
