import { describe, expect, test } from 'bun:test'
import { FEED_NEWEST_OF_AUTHOR } from '../src/articles/list.ts'
import { conduitApp, follow, listArticles, registerUsers, slugsOf } from './support/conduit.ts'
import { createArticle } from './support/fixtures.ts'

/**
 * The feed picks one of two plans from its counters (src/articles/list.ts):
 * sorting the followed authors' articles, or walking all articles newest
 * first. Small pages of a large feed take the walk, a page of 100 the sort;
 * both must give the same articles in the same order.
 */
describe('the feed', () => {
  test('gives the same pages whichever plan serves them', async () => {
    const app = conduitApp()
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
    expect(whole.body.articles.every((x: { author: { username: string } }) => [a!.username, b!.username].includes(x.author.username))).toBe(true)

    const oneByOne: string[] = []
    for (let offset = 0; offset < 18; offset++) {
      const res = await listArticles(app, [['limit', 1], ['offset', offset]], { token: reader!.token, feed: true })
      expect(res.body.articlesCount).toBe(16)
      oneByOne.push(...slugsOf(res))
    }
    expect(oneByOne).toEqual(expected)
  })

  test('is empty, with a zero count, for a user who follows nobody', async () => {
    const app = conduitApp()
    const [reader, writer] = await registerUsers(app, 2)
    await createArticle(app, writer!.token)
    const res = await listArticles(app, [], { token: reader!.token, feed: true })
    expect(res.body).toEqual({ articles: [], articlesCount: 0 })
  })
})

describe('the feed merging each followed author’s newest articles', () => {
  test('gives the newest-first pages of the followed authors among many other articles', async () => {
    const app = conduitApp()
    const [reader] = await registerUsers(app, 1)
    const db = app.db
    const user = db.prepare<{ id: number }, [string]>(
      "INSERT INTO users (username, email, password_hash, created_at) VALUES (?1, ?1 || '@example.com', 'x', 0) RETURNING id",
    )
    const [a, b, c] = ['merge_a', 'merge_b', 'merge_c'].map((n) => user.get(n)!.id)
    const article = db.prepare('INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES (?1, ?1, ?2, ?2, ?3, ?4, ?4)')
    db.transaction(() => {
      // 100 articles by the two followed authors scattered among 5,000 by another
      for (let i = 0; i < 5100; i++) {
        const author = i % 51 === 0 ? a : i % 51 === 1 ? b : c
        article.run(`m-${i}`, 'x', author!, 1_700_000_000_000 + i)
      }
    })()
    const readerId = (db.query('SELECT id FROM users WHERE username = ?').get(reader!.username) as { id: number }).id
    db.run('INSERT INTO follows (follower_id, followee_id) VALUES (?, ?), (?, ?)', [readerId, a!, readerId, b!])

    const expected = (db.query('SELECT slug FROM articles WHERE author_id IN (?, ?) ORDER BY id DESC').all(a!, b!) as { slug: string }[]).map(
      (r) => r.slug,
    )
    expect(expected).toHaveLength(200)
    const pages: string[] = []
    for (let offset = 0; offset < 200; offset += 20) {
      const res = await listArticles(app, [['limit', 20], ['offset', offset]], { token: reader!.token, feed: true })
      expect(res.body.articlesCount).toBe(200)
      pages.push(...slugsOf(res))
    }
    expect(pages).toEqual(expected)
    // pages up to offset 60 were merged (2 authors x (n + 10) rows beat sorting 200):
    // the app's statement last read author b's newest 80
    const lastMerge = db.query(FEED_NEWEST_OF_AUTHOR).toString()
    expect(lastMerge).toContain(`author_id = ${b}`)
    expect(lastMerge).toContain('LIMIT 80')
  })
})
