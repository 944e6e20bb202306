import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../support/app.ts'
import { addComment, conduitApp, favorite, listArticles, registerUsers, slugsOf } from '../support/conduit.ts'
import { createArticle, registerUser } from '../support/fixtures.ts'

const favoritePath = (slug: string) => `/api/articles/${slug}/favorite`
const get = async (app: TestApp, slug: string, token?: string) =>
  (await app.request('GET', `/api/articles/${slug}`, token ? { token } : {})).body.article

describe('POST /api/articles/:slug/favorite', () => {
  test('favorites an article and answers with the whole article', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const created = await createArticle(app, jake!.token)
    const res = await app.request('POST', favoritePath(created.slug), { token: jane!.token })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.body).toEqual({ article: { ...created, favorited: true, favoritesCount: 1 } })
    expect(await get(app, created.slug, jane!.token)).toMatchObject({ favorited: true, favoritesCount: 1 })
  })

  test('is idempotent: favoriting twice counts once', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    for (let i = 0; i < 2; i++) {
      const res = await app.request('POST', favoritePath(slug), { token: jane!.token })
      expect(res.status).toBe(200)
      expect(res.body.article).toMatchObject({ favorited: true, favoritesCount: 1 })
    }
    const favorited = await listArticles(app, [['favorited', jane!.username]])
    expect(favorited.body.articlesCount).toBe(1)
    expect(slugsOf(favorited)).toEqual([slug])
  })

  test('counts the favorites of several users, each seeing their own favorited', async () => {
    const app = await conduitApp()
    const [jake, jane, john] = await registerUsers(app, 3)
    const { slug } = await createArticle(app, jake!.token)
    await favorite(app, jane!.token, slug)
    await favorite(app, john!.token, slug)
    await favorite(app, jake!.token, slug)
    expect(await get(app, slug)).toMatchObject({ favorited: false, favoritesCount: 3 })
    expect(await get(app, slug, jane!.token)).toMatchObject({ favorited: true, favoritesCount: 3 })
  })

  test('leaves favoritesCount at exactly 20 when 20 users favorite at once', async () => {
    const app = await conduitApp()
    const [author, ...fans] = await registerUsers(app, 21)
    const { slug } = await createArticle(app, author!.token)
    const responses = await Promise.all(fans.map((fan) => app.request('POST', favoritePath(slug), { token: fan.token })))
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(responses.every((r) => r.body.article.favorited === true)).toBe(true)
    expect(await get(app, slug)).toMatchObject({ favoritesCount: 20 })
    const rows = { n: await app.db.count('SELECT count(*) FROM favorites') }
    expect(rows).toEqual({ n: 20 })

    const again = await Promise.all(fans.map((fan) => app.request('POST', favoritePath(slug), { token: fan.token })))
    expect(again.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(await get(app, slug)).toMatchObject({ favoritesCount: 20 })

    const undo = await Promise.all(fans.map((fan) => app.request('DELETE', favoritePath(slug), { token: fan.token })))
    expect(undo.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(await get(app, slug)).toMatchObject({ favoritesCount: 0 })
  })

  test('answers 404 for an unknown article', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await app.request('POST', favoritePath('no-such-article'), { token: jake.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })

  test('answers 401 without a token and counts nothing', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('POST', favoritePath(slug))
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect(await get(app, slug)).toMatchObject({ favoritesCount: 0 })
  })
})

describe('DELETE /api/articles/:slug/favorite', () => {
  test('unfavorites an article and answers with the whole article', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const created = await createArticle(app, jake!.token)
    await favorite(app, jane!.token, created.slug)
    const res = await app.request('DELETE', favoritePath(created.slug), { token: jane!.token })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ article: { ...created, favorited: false, favoritesCount: 0 } })
    expect((await listArticles(app, [['favorited', jane!.username]])).body).toEqual({ articles: [], articlesCount: 0 })
  })

  test('is idempotent, also for an article never favorited', async () => {
    const app = await conduitApp()
    const [jake, jane, john] = await registerUsers(app, 3)
    const { slug } = await createArticle(app, jake!.token)
    await favorite(app, john!.token, slug)
    await favorite(app, jane!.token, slug)
    for (let i = 0; i < 2; i++) {
      const res = await app.request('DELETE', favoritePath(slug), { token: jane!.token })
      expect(res.status).toBe(200)
      expect(res.body.article).toMatchObject({ favorited: false, favoritesCount: 1 })
    }
    const never = await app.request('DELETE', favoritePath(slug), { token: jake!.token })
    expect(never.status).toBe(200)
    expect(never.body.article).toMatchObject({ favorited: false, favoritesCount: 1 })
    expect(await get(app, slug, john!.token)).toMatchObject({ favorited: true, favoritesCount: 1 })
  })

  test('answers 404 for an unknown article', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await app.request('DELETE', favoritePath('no-such-article'), { token: jake.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    await favorite(app, jane!.token, slug)
    const res = await app.request('DELETE', favoritePath(slug))
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect(await get(app, slug)).toMatchObject({ favoritesCount: 1 })
  })
})

describe('an empty JSON body on routes that take none', () => {
  // the Postman collection sends `Content-Type: application/json` with an empty body
  const empty = { body: '', headers: { 'content-type': 'application/json' } }

  test('works on favorite and unfavorite', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    const on = await app.request('POST', favoritePath(slug), { ...empty, token: jane!.token })
    expect(on.status).toBe(200)
    expect(on.body.article).toMatchObject({ slug, favorited: true, favoritesCount: 1 })
    const off = await app.request('DELETE', favoritePath(slug), { ...empty, token: jane!.token })
    expect(off.status).toBe(200)
    expect(off.body.article).toMatchObject({ slug, favorited: false, favoritesCount: 0 })
  })

  test('works on deleting a comment', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const { id } = await addComment(app, jake.token, slug)
    const res = await app.request('DELETE', `/api/articles/${slug}/comments/${id}`, { ...empty, token: jake.token })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect((await app.request('GET', `/api/articles/${slug}/comments`)).body).toEqual({ comments: [] })
  })

  test('works on deleting an article', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('DELETE', `/api/articles/${slug}`, { ...empty, token: jake.token })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(404)
  })
})

describe('a viewer with more favorites than are loaded at once (5,000)', () => {
  test('still sees favorited exactly, on list pages and single articles (each page asks which of its articles)', async () => {
    const app = await conduitApp()
    const [author, fan] = await registerUsers(app, 2)
    // 5,001 favorites of the fan, on articles written straight into the database (before the app
    // has loaded the fan's flags); then two articles through the API, one of them favorited
    const authorId = (await app.db.all<{ id: number }>('SELECT id FROM users WHERE username = ?', author!.username))[0]!.id
    const series =
      app.db.backend === 'postgres'
        ? 'SELECT g AS n FROM generate_series(1, 5001) g'
        : 'WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 5001) SELECT n FROM s'
    await app.db.run(
      `INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
       SELECT 'filler-' || n, 'Filler ' || n, 'd', 'b', ?, n, n FROM (${series}) f`,
      authorId,
    )
    const fanId = (await app.db.all<{ id: number }>('SELECT id FROM users WHERE username = ?', fan!.username))[0]!.id
    await app.db.run(`INSERT INTO favorites (user_id, article_id) SELECT ?, id FROM articles WHERE slug LIKE 'filler-%'`, fanId)
    const liked = await createArticle(app, author!.token, { title: 'Liked among thousands' })
    const unliked = await createArticle(app, author!.token, { title: 'Not liked' })
    await favorite(app, fan!.token, liked.slug)
    expect(await app.db.count('SELECT count(*) FROM favorites WHERE user_id = ?', fanId)).toBe(5002)

    const page = await app.request('GET', `/api/articles?author=${author!.username}&limit=3`, { token: fan!.token })
    expect(page.status).toBe(200)
    const flags = Object.fromEntries(page.body.articles.map((a: { slug: string; favorited: boolean }) => [a.slug, a.favorited]))
    // newest first: the two written through the API, then the newest filler (favorited too)
    expect(flags).toEqual({ [liked.slug]: true, [unliked.slug]: false, 'filler-5001': true })
    expect((await app.request('GET', `/api/articles/${unliked.slug}`, { token: fan!.token })).body.article.favorited).toBe(false)
    expect((await app.request('GET', `/api/articles/${liked.slug}`, { token: fan!.token })).body.article.favorited).toBe(true)
    // 5,001 rows written first: more than bun test's 5 s on a slow day with both backends' passes at once
  }, 30_000)
})
