import { describe, expect, test } from 'bun:test'
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
