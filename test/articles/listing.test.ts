import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../support/app.ts'
import { conduitApp, favorite, follow, ISO_MS, listArticles, registerUsers, slugsOf } from '../support/conduit.ts'
import { createArticle, expectTokenRefused, registerUser } from '../support/fixtures.ts'

/** Creates `n` articles one after another; returns their slugs oldest first. */
async function createArticles(app: TestApp, token: string, n: number, tagList?: string[]): Promise<string[]> {
  const slugs: string[] = []
  for (let i = 0; i < n; i++) slugs.push((await createArticle(app, token, tagList ? { tagList } : {})).slug)
  return slugs
}
const newestFirst = (slugs: string[]) => [...slugs].reverse()

describe('GET /api/articles', () => {
  test('lists 20 articles by default, newest first, without bodies', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const slugs = await createArticles(app, jake.token, 25)
    const res = await listArticles(app)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.body.articlesCount).toBe(25)
    expect(slugsOf(res)).toEqual(newestFirst(slugs).slice(0, 20))
    for (const a of res.body.articles) {
      expect(Object.keys(a).sort()).toEqual(
        ['author', 'createdAt', 'description', 'favorited', 'favoritesCount', 'slug', 'tagList', 'title', 'updatedAt'].sort(),
      )
    }
    const times = res.body.articles.map((a: { createdAt: string }) => Date.parse(a.createdAt))
    expect(times).toEqual([...times].sort((x: number, y: number) => y - x))
  })

  test('lists each item with the same fields as the article itself, minus the body', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { body: _, ...item } = await createArticle(app, jake.token, { title: 'Shape', tagList: ['b', 'a'] })
    const res = await listArticles(app)
    expect(res.body).toEqual({ articles: [item], articlesCount: 1 })
    expect(item.createdAt).toMatch(ISO_MS)
  })

  test('answers an empty database with an empty list', async () => {
    const app = await conduitApp()
    const res = await listArticles(app)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ articles: [], articlesCount: 0 })
  })

  test('clamps a limit above 100 to 100', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const slugs = await createArticles(app, jake.token, 103)
    for (const limit of ['101', '1000', '99999999999999999999']) {
      const res = await listArticles(app, [['limit', limit]])
      expect(res.status).toBe(200)
      expect(res.body.articlesCount).toBe(103)
      expect(slugsOf(res)).toEqual(newestFirst(slugs).slice(0, 100))
    }
    expect(slugsOf(await listArticles(app, [['limit', 100]]))).toHaveLength(100)
  })

  test('pages with limit and offset without gaps or overlaps', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const slugs = await createArticles(app, jake.token, 7)
    const pages = []
    for (const offset of [0, 3, 6]) {
      const res = await listArticles(app, [
        ['limit', 3],
        ['offset', offset],
      ])
      expect(res.status).toBe(200)
      expect(res.body.articlesCount).toBe(7)
      pages.push(slugsOf(res))
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1])
    expect(pages.flat()).toEqual(newestFirst(slugs))
  })

  test('answers an offset past the end with an empty page and the true count', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticles(app, jake.token, 3)
    for (const offset of ['3', '50', '99999999999999999999', '9'.repeat(31), '9'.repeat(400)]) {
      const res = await listArticles(app, [['offset', offset]])
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ articles: [], articlesCount: 3 })
    }
  })

  test.each([
    ['limit', '-1'],
    ['limit', '0'],
    ['limit', '1.5'],
    ['limit', 'abc'],
    ['limit', ''],
    ['limit', '1e2'],
    ['limit', '0x10'],
    ['limit', ' 5'],
    ['offset', '-1'],
    ['offset', '2.5'],
    ['offset', 'ten'],
    ['offset', ''],
    ['offset', '-0.5'],
  ])('answers 422 for %s=%p', async (key, value) => {
    const app = await conduitApp()
    const res = await listArticles(app, [[key, value]])
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { [key]: [expect.any(String)] } })
  })

  test('reports a bad limit and a bad offset at once', async () => {
    const app = await conduitApp()
    const res = await listArticles(app, [
      ['limit', '-5'],
      ['offset', 'x'],
    ])
    expect(res.status).toBe(422)
    expect(Object.keys(res.body.errors).sort()).toEqual(['limit', 'offset'])
  })

  test('orders articles created in the same millisecond by id, newest first', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        app.request('POST', '/api/articles', {
          token: jake.token,
          body: { article: { title: `Burst ${i}`, description: 'd', body: 'b' } },
        }),
      ),
    )
    const byId = (await app.db.all<{ slug: string }>('SELECT slug FROM articles ORDER BY id DESC')).map((r) => r.slug)
    expect(created.map((r) => r.status)).toEqual([201, 201, 201, 201, 201])
    expect(slugsOf(await listArticles(app))).toEqual(byId)
  })

  describe('filters', () => {
    test('filters by one tag and counts every match', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const dragons = await createArticles(app, jake.token, 5, ['dragons'])
      await createArticles(app, jake.token, 2, ['training'])
      const res = await listArticles(app, [
        ['tag', 'dragons'],
        ['limit', 2],
      ])
      expect(res.status).toBe(200)
      expect(res.body.articlesCount).toBe(5)
      expect(slugsOf(res)).toEqual(newestFirst(dragons).slice(0, 2))
    })

    test('matches any of several tags and lists an article carrying both once', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const a = await createArticle(app, jake.token, { tagList: ['a'] })
      const both = await createArticle(app, jake.token, { tagList: ['a', 'b'] })
      const b = await createArticle(app, jake.token, { tagList: ['b'] })
      await createArticle(app, jake.token, { tagList: ['c'] })
      const res = await listArticles(app, [
        ['tag', 'a'],
        ['tag', 'b'],
      ])
      expect(res.status).toBe(200)
      expect(slugsOf(res)).toEqual([b.slug, both.slug, a.slug])
      expect(res.body.articlesCount).toBe(3)
      const paged = await listArticles(app, [
        ['tag', 'a'],
        ['tag', 'b'],
        ['limit', 1],
        ['offset', 1],
      ])
      expect(paged.body).toMatchObject({ articlesCount: 3, articles: [{ slug: both.slug }] })
    })

    test('filters by author, any of several', async () => {
      const app = await conduitApp()
      const [jake, jane, john] = await registerUsers(app, 3)
      const byJake = await createArticles(app, jake!.token, 2)
      const byJane = await createArticles(app, jane!.token, 2)
      await createArticles(app, john!.token, 2)

      const one = await listArticles(app, [['author', jake!.username]])
      expect(slugsOf(one)).toEqual(newestFirst(byJake))
      expect(one.body.articlesCount).toBe(2)
      expect(one.body.articles.every((a: { author: { username: string } }) => a.author.username === jake!.username)).toBe(true)

      const two = await listArticles(app, [
        ['author', jake!.username],
        ['author', jane!.username],
      ])
      expect(slugsOf(two)).toEqual(newestFirst([...byJake, ...byJane]))
      expect(two.body.articlesCount).toBe(4)
    })

    test('filters by the users who favorited, any of several, listing a shared favorite once', async () => {
      const app = await conduitApp()
      const [author, fan1, fan2] = await registerUsers(app, 3)
      const [s1, s2, s3, s4] = await createArticles(app, author!.token, 4)
      await favorite(app, fan1!.token, s1!)
      await favorite(app, fan1!.token, s2!)
      await favorite(app, fan2!.token, s2!)
      await favorite(app, fan2!.token, s3!)

      const one = await listArticles(app, [['favorited', fan1!.username]])
      expect(slugsOf(one)).toEqual([s2!, s1!])
      expect(one.body.articlesCount).toBe(2)

      const both = await listArticles(app, [
        ['favorited', fan1!.username],
        ['favorited', fan2!.username],
      ])
      expect(slugsOf(both)).toEqual([s3!, s2!, s1!])
      expect(both.body.articlesCount).toBe(3)
      expect(slugsOf(both)).not.toContain(s4!)
    })

    test('combines different parameters with AND', async () => {
      const app = await conduitApp()
      const [jake, jane, fan] = await registerUsers(app, 3)
      const jakeDragons = await createArticle(app, jake!.token, { tagList: ['dragons'] })
      const jakeOther = await createArticle(app, jake!.token, { tagList: ['other'] })
      const janeDragons = await createArticle(app, jane!.token, { tagList: ['dragons'] })
      await favorite(app, fan!.token, jakeDragons.slug)
      await favorite(app, fan!.token, jakeOther.slug)

      const tagAndAuthor = await listArticles(app, [
        ['tag', 'dragons'],
        ['author', jake!.username],
      ])
      expect(tagAndAuthor.body).toMatchObject({ articlesCount: 1, articles: [{ slug: jakeDragons.slug }] })

      const tagAndFavorited = await listArticles(app, [
        ['tag', 'dragons'],
        ['favorited', fan!.username],
      ])
      expect(tagAndFavorited.body).toMatchObject({ articlesCount: 1, articles: [{ slug: jakeDragons.slug }] })

      const anyTagAndAuthor = await listArticles(app, [
        ['tag', 'dragons'],
        ['tag', 'other'],
        ['author', jake!.username],
      ])
      expect(slugsOf(anyTagAndAuthor)).toEqual([jakeOther.slug, jakeDragons.slug])
      expect(anyTagAndAuthor.body.articlesCount).toBe(2)

      const allThree = await listArticles(app, [
        ['tag', 'dragons'],
        ['author', jake!.username],
        ['author', jane!.username],
        ['favorited', fan!.username],
      ])
      expect(allThree.body).toMatchObject({ articlesCount: 1, articles: [{ slug: jakeDragons.slug }] })

      const tagOnly = await listArticles(app, [['tag', 'dragons']])
      expect(slugsOf(tagOnly)).toEqual([janeDragons.slug, jakeDragons.slug])

      const nothing = await listArticles(app, [
        ['author', jane!.username],
        ['favorited', fan!.username],
      ])
      expect(nothing.body).toEqual({ articles: [], articlesCount: 0 })
    })

    test.each([
      ['tag', ['nope']],
      ['author', ['nobody']],
      ['favorited', ['nobody']],
      ['tag', ['nope', 'neither']],
      ['author', ['nobody', 'noone']],
      ['favorited', ['nobody', 'noone']],
    ])('answers %s=%p that matches nothing with an empty list', async (key, values) => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      await createArticle(app, jake.token, { tagList: ['real'] })
      const res = await listArticles(
        app,
        values.map((v) => [key, v] as [string, string]),
      )
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ articles: [], articlesCount: 0 })
    })

    test('ignores unknown names among known ones', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const { slug } = await createArticle(app, jake.token, { tagList: ['real'] })
      const byTag = await listArticles(app, [
        ['tag', 'nope'],
        ['tag', 'real'],
      ])
      expect(byTag.body).toMatchObject({ articlesCount: 1, articles: [{ slug }] })
      const byAuthor = await listArticles(app, [
        ['author', 'nobody'],
        ['author', jake.username],
      ])
      expect(byAuthor.body).toMatchObject({ articlesCount: 1, articles: [{ slug }] })
    })

    test('matches tags exactly', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      await createArticle(app, jake.token, { tagList: ['Dragons'] })
      const res = await listArticles(app, [['tag', 'dragons']])
      expect(res.body).toEqual({ articles: [], articlesCount: 0 })
      expect((await listArticles(app, [['tag', 'Dragons']])).body.articlesCount).toBe(1)
    })

    test('counts all matches of several values, not the page', async () => {
      const app = await conduitApp()
      const [jake, jane] = await registerUsers(app, 2)
      await createArticles(app, jake!.token, 4)
      await createArticles(app, jane!.token, 3)
      const res = await listArticles(app, [
        ['author', jake!.username],
        ['author', jane!.username],
        ['limit', 2],
        ['offset', 1],
      ])
      expect(slugsOf(res)).toHaveLength(2)
      expect(res.body.articlesCount).toBe(7)
    })

    test('counts a value given twice, or spelled twice, once; and caches no other count', async () => {
      const app = await conduitApp()
      const [jake, jane] = await registerUsers(app, 2)
      await createArticles(app, jake!.token, 3, ['t'])
      await favorite(app, jane!.token, (await createArticle(app, jake!.token)).slug)
      const name = jake!.username
      for (const [key, values, count] of [
        ['author', [name, name.toUpperCase(), name], 4],
        ['tag', ['t', 't'], 3],
        ['favorited', [jane!.username, jane!.username], 1],
      ] as [string, string[], number][]) {
        const repeated = await listArticles(app, [...values.map((v) => [key, v] as [string, string]), ['limit', 2]])
        expect([key, repeated.body.articlesCount]).toEqual([key, count])
        const once = await listArticles(app, [
          [key, values[0]!],
          ['limit', 2],
        ])
        expect([key, once.body.articlesCount]).toEqual([key, count])
      }
    })

    test('stops counting an author’s article once it is deleted', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const [first, second] = await createArticles(app, jake.token, 2, ['t'])
      expect((await app.request('DELETE', `/api/articles/${first}`, { token: jake.token })).status).toBe(204)
      for (const params of [[], [['author', jake.username]], [['tag', 't']]] as [string, string][][]) {
        const res = await listArticles(app, params)
        expect(res.body).toMatchObject({ articlesCount: 1, articles: [{ slug: second }] })
      }
    })
  })

  test('shows favorited and author.following from the caller’s view', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const liked = await createArticle(app, jake!.token)
    const other = await createArticle(app, jake!.token)
    await follow(app, jane!.token, jake!.username)
    await favorite(app, jane!.token, liked.slug)

    const asJane = await listArticles(app, [], { token: jane!.token })
    expect(asJane.body.articles).toMatchObject([
      { slug: other.slug, favorited: false, favoritesCount: 0, author: { following: true } },
      { slug: liked.slug, favorited: true, favoritesCount: 1, author: { following: true } },
    ])

    for (const token of [undefined, jake!.token]) {
      const res = await listArticles(app, [], token ? { token } : {})
      expect(res.body.articles).toMatchObject([
        { slug: other.slug, favorited: false, author: { following: false } },
        { slug: liked.slug, favorited: false, favoritesCount: 1, author: { following: false } },
      ])
    }
  })

  test('reflects every kind of write in the next read of the same list', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const views = [{}, { token: jane!.token }]
    const read = () => Promise.all(views.map((v) => listArticles(app, [['tag', 't']], v)))
    const { slug } = await createArticle(app, jake!.token, { title: 'One', tagList: ['t'] })
    for (const res of await read()) expect(res.body).toMatchObject({ articlesCount: 1, articles: [{ title: 'One', favoritesCount: 0 }] })

    await createArticle(app, jake!.token, { title: 'Two', tagList: ['t'] })
    for (const res of await read()) expect(slugsOf(res)).toHaveLength(2)

    await favorite(app, jane!.token, slug)
    for (const res of await read()) expect(res.body.articles[1]).toMatchObject({ slug, favoritesCount: 1 })

    expect(
      (await app.request('PUT', `/api/articles/${slug}`, { token: jake!.token, body: { article: { description: 'Changed' } } })).status,
    ).toBe(200)
    for (const res of await read()) expect(res.body.articles[1]).toMatchObject({ slug, description: 'Changed' })

    const bio = await app.request('PUT', '/api/user', { token: jake!.token, body: { user: { bio: 'Writer' } } })
    expect(bio.status).toBe(200)
    for (const res of await read()) expect(res.body.articles[0].author.bio).toBe('Writer')

    expect((await app.request('DELETE', `/api/articles/${slug}`, { token: jake!.token })).status).toBe(204)
    for (const res of await read()) expect(res.body).toMatchObject({ articlesCount: 1, articles: [{ title: 'Two' }] })
  })

  test('reads an invalid token as no token, and says so', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    await app.request('POST', `/api/articles/${slug}/favorite`, { token: jake.token })
    await expectTokenRefused(app, `Token ${jake.token}x`, ['/api/articles', `/api/articles?favorited=${jake.username}`])
  })
})

describe('GET /api/articles/feed', () => {
  test('lists only articles by followed authors, newest first, with their count', async () => {
    const app = await conduitApp()
    const [reader, jake, jane, stranger] = await registerUsers(app, 4)
    const mixed: string[] = []
    for (let i = 0; i < 3; i++) {
      mixed.push((await createArticle(app, jake!.token)).slug)
      mixed.push((await createArticle(app, jane!.token)).slug)
      await createArticle(app, stranger!.token)
    }
    await createArticle(app, reader!.token)
    await follow(app, reader!.token, jake!.username)
    await follow(app, reader!.token, jane!.username)

    const res = await listArticles(app, [], { token: reader!.token, feed: true })
    expect(res.status).toBe(200)
    expect(res.body.articlesCount).toBe(6)
    expect(slugsOf(res)).toEqual(newestFirst(mixed))
    for (const a of res.body.articles) {
      expect(a.body).toBeUndefined()
      expect(a.author.following).toBe(true)
      expect(a.favorited).toBe(false)
    }
  })

  test('pages the feed with limit and offset and counts every followed article', async () => {
    const app = await conduitApp()
    const [reader, jake] = await registerUsers(app, 2)
    const slugs = await createArticles(app, jake!.token, 5)
    await follow(app, reader!.token, jake!.username)
    const feed = (limit: number, offset: number) =>
      listArticles(
        app,
        [
          ['limit', limit],
          ['offset', offset],
        ],
        { token: reader!.token, feed: true },
      )

    const first = await feed(2, 0)
    const second = await feed(2, 2)
    const third = await feed(2, 4)
    expect([first, second, third].map((r) => r.body.articlesCount)).toEqual([5, 5, 5])
    expect([...slugsOf(first), ...slugsOf(second), ...slugsOf(third)]).toEqual(newestFirst(slugs))
    expect((await feed(2, 5)).body).toEqual({ articles: [], articlesCount: 5 })
  })

  test('lists 20 by default and clamps the limit to 100', async () => {
    const app = await conduitApp()
    const [reader, jake] = await registerUsers(app, 2)
    const slugs = await createArticles(app, jake!.token, 101)
    await follow(app, reader!.token, jake!.username)
    const byDefault = await listArticles(app, [], { token: reader!.token, feed: true })
    expect(slugsOf(byDefault)).toEqual(newestFirst(slugs).slice(0, 20))
    expect(byDefault.body.articlesCount).toBe(101)
    const clamped = await listArticles(app, [['limit', 500]], { token: reader!.token, feed: true })
    expect(slugsOf(clamped)).toEqual(newestFirst(slugs).slice(0, 100))
    expect(clamped.body.articlesCount).toBe(101)
  })

  test('is empty for a user who follows nobody', async () => {
    const app = await conduitApp()
    const [reader, jake] = await registerUsers(app, 2)
    await createArticle(app, jake!.token)
    await createArticle(app, reader!.token)
    const res = await listArticles(app, [], { token: reader!.token, feed: true })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ articles: [], articlesCount: 0 })
  })

  test('drops an author after unfollowing', async () => {
    const app = await conduitApp()
    const [reader, jake] = await registerUsers(app, 2)
    await createArticle(app, jake!.token)
    await follow(app, reader!.token, jake!.username)
    expect((await listArticles(app, [], { token: reader!.token, feed: true })).body.articlesCount).toBe(1)
    const unfollow = await app.request('DELETE', `/api/profiles/${jake!.username}/follow`, { token: reader!.token })
    expect(unfollow.status).toBe(200)
    expect((await listArticles(app, [], { token: reader!.token, feed: true })).body).toEqual({ articles: [], articlesCount: 0 })
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const res = await listArticles(app, [], { feed: true })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
  })

  test.each([
    ['limit', '0'],
    ['limit', '-3'],
    ['offset', '1.5'],
    ['offset', 'abc'],
  ])('answers 422 for %s=%p', async (key, value) => {
    const app = await conduitApp()
    const reader = await registerUser(app)
    const res = await listArticles(app, [[key, value]], { token: reader.token, feed: true })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { [key]: [expect.any(String)] } })
  })
})
